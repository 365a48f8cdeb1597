"""Cross-validation campaigns (``cv`` = K): folds as SMAC instances, racing, baseline, resume.

The SMAC mechanics run with the toy objective (fold ``I`` costs ``0.05 * I`` more, so a
configuration's mean over folds differs from any single fold); one campaign on tiny real data
checks the objective's folds end to end, and its export.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console
from toy_objectives import InterruptAfter, toy_config
from toy_objectives import run_toy as _run

from hpo.campaign import CampaignConfig, run_campaign
from hpo.errors import ConfigError
from hpo.runs.record.folder import read_trials, run_state, trial_key
from hpo.runs.views.history import load_run


def _records(cfg: CampaignConfig) -> list[dict[str, Any]]:
    return read_trials(cfg.run_dir / "trials.jsonl")


@pytest.mark.parametrize("value", [1, -1, "3", 2.0, True])
def test_cv_setting_is_checked(data_root: Path, tmp_path: Path, value: Any) -> None:
    with pytest.raises(ConfigError, match=r"campaign setting 'cv': expected 0 .* or a number"):
        toy_config(tmp_path / "runs", data_root, cv=value)


def test_cv_round_trips_and_old_files_load_as_zero(data_root: Path, tmp_path: Path) -> None:
    cfg = toy_config(tmp_path / "runs", data_root, cv=3)
    assert CampaignConfig.from_json(cfg.to_json()).cv == 3
    old = {k: v for k, v in cfg.to_dict().items() if k != "cv"}
    assert CampaignConfig.from_dict(old).cv == 0


@pytest.mark.parametrize("optimizer", ["bo", "random", "model-hb", "random-hb", "model-sh"])
def test_every_optimizer_records_folds_and_picks_an_all_fold_incumbent(
    data_root: Path, tmp_path: Path, optimizer: str
) -> None:
    cfg = toy_config(tmp_path / "runs", data_root, cv=3, optimizer=optimizer, trials=15)
    result = _run(cfg)
    records = _records(cfg)
    assert {r["instance"] for r in records} == {"fold0", "fold1", "fold2"}
    assert all(r["info"]["fold"] == r["instance"] for r in records)
    # every trial trains the largest budget: SMAC's budget counts folds
    assert {r["budget"] for r in records} == {cfg.max_budget}
    # the baseline comes first, on every fold
    base = [r for r in records if r["baseline"]]
    assert sorted(r["instance"] for r in base) == ["fold0", "fold1", "fold2"]
    assert [r["trial"] for r in base] == [1, 2, 3]
    # the incumbent was run on all folds; its score is the mean over them
    assert result.incumbent is not None
    assert result.folds is not None
    mine = [r for r in records if r["config"] == result.incumbent]
    assert sorted(r["instance"] for r in mine) == ["fold0", "fold1", "fold2"]
    assert result.score == pytest.approx(np.mean([r["score"] for r in mine]))
    run = load_run(cfg.run_dir)
    assert run.incumbent is not None
    assert run.incumbent.score == pytest.approx(result.score)
    assert run.baseline is not None
    assert run.baseline.score == pytest.approx(np.mean([r["score"] for r in base]))


def test_racing_drops_configurations_after_a_fold_or_two(data_root: Path, tmp_path: Path) -> None:
    cfg = toy_config(tmp_path / "runs", data_root, cv=4, optimizer="random", trials=24)
    _run(cfg)
    per_config = Counter(json.dumps(r["config"], sort_keys=True) for r in _records(cfg))
    assert max(per_config.values()) == 4  # the baseline (and any incumbent) on every fold
    assert min(per_config.values()) < 4  # challengers raced out before all folds


def test_resume_of_an_interrupted_cv_campaign_loses_no_trial(
    data_root: Path, tmp_path: Path
) -> None:
    cfg = toy_config(tmp_path / "runs", data_root, cv=3, optimizer="bo", trials=12)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(5))  # the baseline's three folds and two more
    assert run_state(cfg.run_dir) == "interrupted"
    before = _records(cfg)
    assert len(before) == 5
    result = _run(cfg, InterruptAfter(10**6), resume=True)
    after = _records(cfg)
    assert after[:5] == before
    assert len(after) == 12 == len({trial_key(r) for r in after})
    assert sum(r["baseline"] for r in after) == 3  # not evaluated again
    assert result.n_trials == 12


def test_resume_after_part_of_the_baseline_was_logged(data_root: Path, tmp_path: Path) -> None:
    cfg = toy_config(tmp_path / "runs", data_root, cv=3, optimizer="random-hb", trials=9)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(2))
    _run(cfg, InterruptAfter(10**6), resume=True)
    base = [r for r in _records(cfg) if r["baseline"]]
    assert sorted(r["instance"] for r in base) == ["fold0", "fold1", "fold2"]


def test_a_collection_with_too_few_graphs_is_refused(tiny_root: Path, tmp_path: Path) -> None:
    cfg = CampaignConfig(
        data_root=tiny_root,
        runs_dir=tmp_path / "runs",
        name="few",
        collections=("tile:xla",),
        cv=50,
        optimizer="random",
        trials=2,
        cache_dir=tmp_path / "cache",
    )
    with pytest.raises(ConfigError, match=r"collection tile:xla has \d+ labeled graphs .* 50"):
        run_campaign(cfg, quiet=True, console=Console(file=io.StringIO()))


def test_too_few_trials_for_every_fold_say_so(data_root: Path, tmp_path: Path) -> None:
    """Two trials of a 3-fold campaign score the baseline on 2 folds: no incumbent. The
    summary and export once blamed errors in trials.jsonl, where there were none."""
    from toy_objectives import run_toy_with_output

    from hpo.deploy.export import export_model
    from hpo.errors import UsageError

    cfg = toy_config(tmp_path / "runs", data_root, cv=3, trials=2)
    result, printed = run_toy_with_output(cfg)
    assert result.incumbent is None
    assert "no incumbent yet: 2 trial(s) succeeded, but no configuration was scored on all 3" in (
        " ".join(printed.split())
    )
    assert "see the errors" not in printed
    with pytest.raises(UsageError, match="no configuration was scored on every fold yet"):
        export_model(cfg.run_dir, tmp_path / "model")
