"""Tests of hpo/campaign/progress.py: plain lines, the live view's content, the final summary."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from hpo.campaign import CampaignResult
from hpo.campaign.progress import (
    BaselineSummary,
    CampaignProgress,
    format_duration,
    gain_notes,
    print_summary,
)
from hpo.runs.record.trial import Trial


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=160, color_system=None), out


def _record(trial: int, score: float | None, status: str = "SUCCESS") -> Trial:
    return Trial(
        trial=trial,
        config={},
        budget=9.0,
        status=status,
        score=score,
        metrics={} if score is None else {"tile:xla": score + 0.1, "layout:nlp:random": score},
        duration=1.5,
        error=None if status == "SUCCESS" else "Traceback ...\nValueError: bad leaves\n",
    )


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0:00:00"), (59.6, "0:01:00"), (3725, "1:02:05"), (None, "-"), (float("inf"), "-")],
)
def test_format_duration(seconds: float | None, text: str) -> None:
    assert format_duration(seconds) == text


def test_quiet_prints_one_line_per_trial() -> None:
    console, out = _console()
    progress = CampaignProgress(trials=5, walltime=600, quiet=True, console=console)
    with progress:
        progress.trial_finished(_record(1, 0.25))
        progress.trial_finished(_record(2, None, status="CRASHED"))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert "trial 1/5  budget 9  SUCCESS  score 0.2500  best 0.2500 (trial 1, budget 9)" in lines[0]
    assert "left 0:" in lines[0]
    assert "trial 2/5  budget 9  CRASHED  ValueError: bad leaves" in lines[1]
    assert (progress.done, progress.crashed) == (2, 1)


def test_live_view_shows_counts_best_metrics_and_time() -> None:
    console, out = _console()
    progress = CampaignProgress(trials=10, walltime=3600, quiet=False, console=console)
    progress.add_previous([_record(1, 0.1), _record(2, 0.4)])
    progress.trial_finished(_record(3, 0.3))
    console.print(progress)
    text = out.getvalue()
    assert "resuming: 2 trials already finished" in text
    assert "3/10 trials" in text
    assert "#3  budget 9  SUCCESS  score 0.3000" in text
    assert "0.4000  (trial 2, budget 9)" in text
    assert "tile:xla 0.5000  layout:nlp:random 0.4000" in text
    assert "remaining" in text


def test_the_best_shown_is_the_incumbent_rules() -> None:
    """A higher score at a smaller budget is not the best: the incumbent rule takes the
    highest budget reached first (the live line once showed a score no export gives)."""
    console, out = _console()
    progress = CampaignProgress(trials=5, walltime=None, quiet=True, console=console)
    small = dataclasses.replace(_record(1, 0.9), budget=3.0)
    progress.trial_finished(small)
    assert progress.best is small
    large = _record(2, 0.4)
    progress.trial_finished(large)
    progress.trial_finished(_record(3, 0.3))
    progress.trial_finished(dataclasses.replace(_record(4, 0.95), budget=3.0))
    assert progress.best is large
    assert "best 0.4000 (trial 2, budget 9)" in out.getvalue().splitlines()[-1]
    console, out = _console()
    folds = CampaignProgress(trials=5, walltime=None, quiet=True, console=console, cv=3)
    folds.trial_finished(_record(1, 0.4))
    assert "best fold 0.4000 (trial 1, budget 9)" in out.getvalue()


def test_feature_files_are_counted() -> None:
    console, out = _console()
    progress = CampaignProgress(trials=3, walltime=None, quiet=True, console=console)
    for i in range(4):
        progress(f"file{i}.npz", i % 2 == 0)
    progress.start_clock()
    assert (progress.files, progress.files_cached) == (4, 2)
    assert "features: 4 files ready (2 from cache)" in out.getvalue()


def _result(incumbent: dict[str, Any] | None) -> CampaignResult:
    return CampaignResult(
        run_dir=Path("/runs/demo"),
        incumbent=incumbent,
        trial=7 if incumbent else None,
        cost=0.4 if incumbent else None,
        score=0.6 if incumbent else None,
        metrics={"tile:xla": 0.9, "layout:xla:random": 0.3} if incumbent else {},
        budget=27.0 if incumbent else None,
        n_trials=12,
        n_crashed=2,
        finished=0.0,
    )


def test_summary_table() -> None:
    console, out = _console()
    print_summary(console, _result({"learning_rate": 0.05, "num_leaves": 31}))
    text = out.getvalue()
    for piece in ("Incumbent configuration", "learning_rate", "0.050000", "num_leaves",
                  "Validation metrics", "layout:xla:random", "0.3000", "score", "0.6000",
                  "12 trials (2 crashed)", "run folder: /runs/demo"):  # fmt: skip
        assert piece in text


def test_summary_quiet_and_without_incumbent() -> None:
    console, out = _console()
    print_summary(console, _result({"learning_rate": 0.05}), quiet=True)
    assert "incumbent: learning_rate=0.05" in out.getvalue()
    assert "tile:xla=0.9000 layout:xla:random=0.3000" in out.getvalue()
    console, out = _console()
    print_summary(console, _result(None))
    assert "no successful trial (12 trials, 2 crashed)" in out.getvalue()
    console, out = _console()
    print_summary(console, _result(None), cv=3)  # successes, none on every fold yet
    assert "no incumbent yet: 10 trial(s) succeeded" in out.getvalue()
    assert "on all 3 folds" in " ".join(out.getvalue().split())


@pytest.mark.parametrize(
    ("base_score", "generated", "expected"),
    [
        (0.6, True, "no configuration beat the baseline (default configuration) on valid: on data"),
        (0.5995, False, "within one booster seed's spread: a longer --walltime"),
        (0.59, True, None),  # a real gain needs no explanation
        (None, True, None),  # nothing to compare with
    ],
)
def test_the_summary_says_why_tuning_gained_nothing(
    base_score: float | None, generated: bool, expected: str | None
) -> None:
    baseline = None if base_score is None else BaselineSummary(_record(0, base_score))
    notes = gain_notes(_result({"num_leaves": 31}), baseline, generated=generated)
    if expected is None:
        assert notes == []
    else:
        (note,) = notes
        assert expected in note
        assert ("noise ceiling" in note) == generated
