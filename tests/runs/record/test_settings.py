"""The typed settings of a run: read once from campaign.json, one set of defaults for old files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fake_runs import as_older_metric_run, build_fake_run

from hpo.errors import ConfigError
from hpo.features import SampleCaps
from hpo.ranking.scoring.metrics import LEGACY_LAYOUT_METRIC
from hpo.runs.record.settings import RunSettings
from hpo.runs.views.history import load_run
from hpo.runs.views.nested import is_subset_run, list_runs

#: Settings format-2 files written before per-subset runs, config caps and cv lack.
RECENT_KEYS = ("per", "train_configs", "valid_configs", "keep_fastest", "cv")


def _edit_settings(run_dir: Path, drop: tuple[str, ...] = (), **changes: object) -> Path:
    path = run_dir / "campaign.json"
    data = json.loads(path.read_text())
    data["config"] = {k: v for k, v in data["config"].items() if k not in drop} | changes
    path.write_text(json.dumps(data))
    return path


def test_old_campaign_json_without_recent_keys_loads(tmp_path: Path, tiny_root: Path) -> None:
    from hpo.campaign import read_campaign

    run_dir = build_fake_run(tmp_path / "runs", tiny_root)
    _edit_settings(run_dir, drop=RECENT_KEYS)
    run = load_run(run_dir)
    assert (run.settings.per, run.settings.cv, run.folds) == ("none", 0, 0)
    # the rows of such a run were built on every config: no caps, whoever reads it
    assert run.settings.caps == SampleCaps.unlimited()
    cfg = read_campaign(run_dir).config
    assert SampleCaps.from_settings(cfg) == run.settings.caps
    assert cfg.per == run.settings.per
    assert not is_subset_run(run_dir)
    assert run.incumbent is not None


def test_a_run_scored_by_an_older_layout_metric_says_which(tmp_path: Path, tiny_root: Path) -> None:
    run_dir = build_fake_run(tmp_path / "runs", tiny_root)
    assert load_run(run_dir).older_layout_metric is None  # today's metric
    assert load_run(as_older_metric_run(run_dir)).older_layout_metric == LEGACY_LAYOUT_METRIC
    assert list_runs(tmp_path / "runs")[0].older_metric == LEGACY_LAYOUT_METRIC
    # a tile-only run scored no layout collection: nothing to compare differently
    tile = build_fake_run(tmp_path / "tile", tiny_root, collections=("tile:xla",))
    assert load_run(as_older_metric_run(tile)).older_layout_metric is None


def test_settings_are_typed(tmp_path: Path, tiny_root: Path) -> None:
    run = load_run(build_fake_run(tmp_path / "runs", tiny_root, seed=4))
    s = run.settings
    assert isinstance(s, RunSettings)
    assert (s.min_budget, s.max_budget, s.seed, s.fidelity) == (5.0, 45.0, 4, "rounds")
    assert s.data_root == tiny_root.absolute()
    assert s.caps.seed == 4
    assert run.collections == s.collections


@pytest.mark.parametrize(
    ("drop", "changes", "message"),
    [
        (("max_budget",), {}, "missing campaign setting 'max_budget'"),
        ((), {"fidelity": "hours"}, "campaign setting 'fidelity': expected one of rounds, configs"),
        ((), {"seed": -1}, "campaign setting 'seed': expected an integer >= 0, found -1"),
        ((), {"features": 3}, "campaign setting 'features': expected a feature spec, found 3"),
        ((), {"cv": 1}, "campaign setting 'cv': expected 0 or a number of folds >= 2"),
    ],
)
def test_bad_setting_is_one_line_naming_the_file(
    tmp_path: Path, tiny_root: Path, drop: tuple[str, ...], changes: dict, message: str
) -> None:
    path = _edit_settings(build_fake_run(tmp_path / "runs", tiny_root), drop, **changes)
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: {re.escape(message)}") as exc:
        load_run(path.parent)
    assert "\n" not in str(exc.value)
    (listed,) = list_runs(tmp_path / "runs")  # the list names the problem instead of failing
    assert listed.problem is not None
    assert message in listed.problem
