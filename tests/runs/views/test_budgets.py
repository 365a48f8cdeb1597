"""The rank correlation between a run's budgets (hpo.runs.views.budgets) and ``runs show``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from fake_runs import build_fake_run

from hpo.cli import main
from hpo.runs.views.budgets import budget_correlations, budget_note
from hpo.runs.views.history import RunHistory, Trial, load_run


def _run(tmp_path: Path, root: Path, scores: dict[float, list[float]]) -> RunHistory:
    """A run whose configuration i scored ``scores[budget][i]`` at each budget."""
    folder = build_fake_run(tmp_path / "runs", root, name="r")
    run = load_run(folder)
    trials = [
        Trial(trial=len(scores) * i + j, config={"x": i}, budget=b, status="SUCCESS", score=s)
        for j, (b, values) in enumerate(scores.items())
        for i, s in enumerate(values)
    ]
    return dataclasses.replace(run, trials=tuple(trials), result=None)


def test_successive_budgets_then_the_smallest_with_the_largest(
    tmp_path: Path, tiny_root: Path
) -> None:
    run = _run(
        tmp_path,
        tiny_root,
        {
            5.0: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
            15.0: [0.1, 0.2, 0.3, 0.4],  # the same order, 4 of them
            45.0: [0.4, 0.3, 0.2],  # the reverse order, 3 of them
        },
    )
    pairs = budget_correlations(run)
    assert [(p.low, p.high, p.n) for p in pairs] == [(5, 15, 4), (15, 45, 3), (5, 45, 3)]
    assert pairs[0].spearman == pytest.approx(1.0)
    assert pairs[0].kendall == pytest.approx(1.0)
    assert pairs[1].spearman == pytest.approx(-1.0)
    note = budget_note(pairs)
    assert note is not None
    assert note.startswith("the smallest budget (5) does not predict the largest (45)")


def test_no_note_when_the_smallest_predicts_and_none_below_three_configs(
    tmp_path: Path, tiny_root: Path
) -> None:
    agree = _run(tmp_path / "a", tiny_root, {1.0: [0.1, 0.2, 0.3], 9.0: [0.2, 0.25, 0.5]})
    assert budget_note(budget_correlations(agree)) is None
    few = budget_correlations(_run(tmp_path / "b", tiny_root, {1.0: [0.1, 0.2], 9.0: [0.3, 0.1]}))
    assert (few[0].n, few[0].spearman, few[0].kendall) == (2, None, None)
    assert budget_note(few) is None
    assert budget_correlations(_run(tmp_path / "c", tiny_root, {9.0: [0.1, 0.2, 0.3]})) == []


def test_runs_show_prints_the_budget_correlation(
    tmp_path: Path, tiny_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_fake_run(tmp_path / "runs", tiny_root, name="hb")
    argv = ["runs", "show", "hb", "--runs-dir", str(tmp_path / "runs")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Budget correlation" in out
    assert "5 -> 15" in out
    assert main([*argv, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["budget_correlation"]
    assert [(c["low"], c["high"], c["n"]) for c in shown] == [(5, 15, 3), (15, 45, 2), (5, 45, 2)]
    assert shown[0]["spearman"] == pytest.approx(1.0)  # the fake's score rises with budget
