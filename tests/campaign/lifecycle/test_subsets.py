"""Per-subset runs (hpo.campaign.lifecycle.subsets) with toy objectives: layout, walltime split,
resume.

The toy objective returns metrics for tile:xla and layout:xla:default whatever it is asked,
so a subset's incumbent metric is read only for the subset's own collections; the data root
only has to exist for the fingerprint.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from toy_objectives import InterruptAfter, ToyObjective, toy_config
from toy_objectives import run_toy as _run

from hpo.campaign import CampaignConfig, read_campaign
from hpo.campaign.lifecycle.subsets import SubsetsResult, plan_subsets, subset_config
from hpo.errors import ConfigError, UsageError
from hpo.runs.record.folder import read_json, read_trials, run_state
from hpo.runs.views.nested import load_any

TWO = ("tile:xla", "layout:xla:default")
TESTS = Path(__file__).resolve().parents[2]


@pytest.fixture
def data_root(two_collection_root: Path) -> Path:
    return two_collection_root


def _cfg(tmp_path: Path, data_root: Path, **overrides: Any) -> CampaignConfig:
    settings = {"collections": TWO, "per": "collection", "trials": 5, **overrides}
    return toy_config(tmp_path / "runs", data_root, **settings)


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_plan_per_collection_and_per_family() -> None:
    every = ("tile:xla", "layout:xla:default", "layout:nlp:random")
    assert plan_subsets(every, "collection") == {
        "tile-xla": ("tile:xla",),
        "layout-xla-default": ("layout:xla:default",),
        "layout-nlp-random": ("layout:nlp:random",),
    }
    assert plan_subsets(every, "family") == {
        "tile": ("tile:xla",),
        "layout": ("layout:xla:default", "layout:nlp:random"),
    }
    with pytest.raises(ConfigError, match="expected family or collection, found 'none'"):
        plan_subsets(every, "none")


def test_config_validates_and_saves_per(tmp_path: Path, data_root: Path) -> None:
    cfg = _cfg(tmp_path, data_root, per="family")
    assert CampaignConfig.from_json(cfg.to_json()).per == "family"
    with pytest.raises(ConfigError, match="setting 'per': expected one of none, family"):
        _cfg(tmp_path, data_root, per="graph")


def test_subsets_share_the_walltime_equally(tmp_path: Path, data_root: Path) -> None:
    cfg = _cfg(tmp_path, data_root, walltime=100.0, per="family")
    sub = subset_config(cfg, "layout", ("layout:xla:default",))
    assert (sub.walltime, sub.per, sub.trials) == (50.0, "none", cfg.trials)
    assert sub.run_dir == cfg.run_dir / "layout"


def test_a_run_per_collection_writes_one_complete_run_folder_per_subset(
    tmp_path: Path, data_root: Path
) -> None:
    cfg = _cfg(tmp_path, data_root)
    result = _run(cfg, InterruptAfter(10**6))
    assert isinstance(result, SubsetsResult)
    parent = read_campaign(cfg.run_dir)
    assert parent.config.per == "collection"
    assert parent.record.subsets == {"tile-xla": ("tile:xla",), "layout-xla-default": (TWO[1],)}
    for name, collections in parent.record.subsets.items():
        sub = read_campaign(cfg.run_dir / name).config
        assert (sub.collections, sub.per) == (tuple(collections), "none")
        assert len(read_trials(cfg.run_dir / name / "trials.jsonl")) == 5
        assert (cfg.run_dir / name / "result.json").is_file()
    # the combined score: each collection's metric from its own subset's incumbent
    expected = {
        c: result.subsets[n].metrics[c] for n, c in zip(parent.record.subsets, TWO, strict=False)
    }
    assert result.metrics == expected
    assert result.score == pytest.approx(sum(expected.values()) / 2)
    saved = read_json(cfg.run_dir / "result.json")
    assert saved["score"] == pytest.approx(result.score)
    assert run_state(cfg.run_dir) == "finished"


def test_resume_continues_the_interrupted_subset_and_leaves_the_finished_one(
    tmp_path: Path, data_root: Path
) -> None:
    cfg = _cfg(tmp_path, data_root)
    # 5 trials of tile-xla, then 2 of layout-xla-default
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(7))
    first, second = cfg.run_dir / "tile-xla", cfg.run_dir / "layout-xla-default"
    assert run_state(cfg.run_dir) == "interrupted"
    assert run_state(first) == "finished"
    assert run_state(second) == "interrupted"
    before_first = _files(first)
    before_second = read_trials(second / "trials.jsonl")
    assert len(before_second) == 2
    run = load_any(cfg.name, cfg.runs_dir)
    assert (run.state, list(run.subsets)) == ("interrupted", ["tile-xla", "layout-xla-default"])
    result = _run(cfg, InterruptAfter(10**6), resume=True)
    assert _files(first) == before_first  # not one byte of the finished subset changed
    after_second = read_trials(second / "trials.jsonl")
    assert after_second[:2] == before_second
    assert len(after_second) == 5
    assert result.score is not None
    assert run_state(cfg.run_dir) == "finished"


def test_a_finished_run_extended_extends_every_subset(tmp_path: Path, data_root: Path) -> None:
    cfg = _cfg(tmp_path, data_root, trials=6)
    _run(cfg)
    subsets = [cfg.run_dir / "tile-xla", cfg.run_dir / "layout-xla-default"]
    before = [read_trials(d / "trials.jsonl") for d in subsets]
    assert [len(b) for b in before] == [6, 6]
    result = _run(dataclasses.replace(cfg, trials=10), resume=True)
    after = [read_trials(d / "trials.jsonl") for d in subsets]
    assert [a[:6] for a in after] == before
    # the last trials of the limit are kept for finishing, and run only for candidates
    assert all(6 < len(a) <= 10 for a in after)
    assert [r.n_trials for r in result.subsets.values()] == [len(a) for a in after]
    for folder in (cfg.run_dir, *subsets):  # the run and each subset record the extension
        (entry,) = read_json(folder / "campaign.json")["extensions"]
        assert entry["trials"] == [6, 10]
    assert run_state(cfg.run_dir) == "finished"


def test_an_extension_a_subset_has_no_room_for_changes_nothing(
    tmp_path: Path, data_root: Path
) -> None:
    cfg = _cfg(tmp_path, data_root, trials=6, walltime=7200.0)  # both subsets end on trials
    _run(cfg)
    before = {p: p.read_bytes() for p in sorted(cfg.run_dir.rglob("*.json*"))}
    longer = dataclasses.replace(cfg, walltime=14400.0)
    share = r"subset 'tile-xla' \(its 1/2 share of --walltime 14400\): campaign 'tile-xla' has run"
    with pytest.raises(UsageError, match=share):
        _run(longer, resume=True)
    assert {p: p.read_bytes() for p in sorted(cfg.run_dir.rglob("*.json*"))} == before


def test_resume_with_other_settings_is_refused(tmp_path: Path, data_root: Path) -> None:
    cfg = _cfg(tmp_path, data_root)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(2))
    other = dataclasses.replace(cfg, per="family")
    with pytest.raises(ConfigError, match=r"different settings: per \(saved 'collection'"):
        _run(other, InterruptAfter(10**6), resume=True)


def test_resume_after_the_data_changed_is_refused(tmp_path: Path, data_root: Path) -> None:
    cfg = _cfg(tmp_path, data_root)
    # inside the first subset: the second never began
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(2))
    (data_root / "npz" / "layout" / "xla" / "default" / "valid" / "g.npz").write_bytes(b"new")
    changed = r"layout/xla/default/valid/g\.npz changed size \(\d+ -> 3 bytes\): the data changed"
    with pytest.raises(ConfigError, match=changed):  # the file named, not every collection
        _run(cfg, InterruptAfter(10**6), resume=True)


def test_an_existing_run_is_refused_and_overwrite_starts_again(
    tmp_path: Path, data_root: Path
) -> None:
    cfg = _cfg(tmp_path, data_root, trials=3)
    _run(cfg, InterruptAfter(10**6))
    with pytest.raises(UsageError, match="already exists .* use --resume toy"):
        _run(cfg, InterruptAfter(10**6))
    result = _run(cfg, InterruptAfter(10**6), overwrite=True)
    assert all(r.n_trials == 3 for r in result.subsets.values())


@pytest.mark.slow
def test_kill_9_in_the_second_subset_then_resume(tmp_path: Path, data_root: Path) -> None:
    cfg = _cfg(tmp_path, data_root, name="killed", trials=8, optimizer="random-hb")
    child = subprocess.Popen(
        [sys.executable, str(TESTS / "campaign_child.py"), str(cfg.runs_dir), str(data_root),
         "killed", "8", "random-hb", "collection"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    log = cfg.run_dir / "layout-xla-default" / "trials.jsonl"
    deadline = time.time() + 60
    while (not log.exists() or len(read_trials(log)) < 2) and time.time() < deadline:
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        time.sleep(0.05)
    time.sleep(0.15)  # in the middle of the next 0.3 s trial
    child.kill()
    child.wait()
    first = _files(cfg.run_dir / "tile-xla")
    before = read_trials(log)
    assert run_state(cfg.run_dir) == "interrupted"  # the lock's pid is dead
    result = _run(cfg, ToyObjective(sleep=0.3), resume=True)
    assert _files(cfg.run_dir / "tile-xla") == first
    after = read_trials(log)
    assert after[: len(before)] == before
    assert len(after) == 8
    assert result.score is not None
