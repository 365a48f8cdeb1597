"""Campaigns end to end with toy objectives: hpo.campaign.lifecycle.run, config, facades, runners,
state.

The toy objectives (tests/toy_objectives.py) are cheap functions of the hyperparameters, so a
campaign of a dozen trials takes well under a second; the data root only has to exist for
the fingerprint. Subprocess, kill -9 and Dask tests are marked ``slow``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from toy_objectives import (
    InterruptAfter,
    ToyObjective,
    always_crash,
    nan_cost,
    run_toy_with_output,
    toy_config,
    toy_cost,
)
from toy_objectives import run_toy as _run

import hpo.campaign.lifecycle.finish
import hpo.campaign.lifecycle.run
from hpo.campaign import CampaignConfig, read_campaign
from hpo.campaign.smac.state import repair_smac_state, smac_output_dir, smac_usage
from hpo.errors import ConfigError, UsageError
from hpo.features import FeatureSpec
from hpo.runs.record.campaign_file import CAMPAIGN_FORMAT
from hpo.runs.record.folder import (
    LOCK_FILE,
    RunLock,
    TrialLog,
    read_trials,
    run_state,
    this_host,
    trial_key,
)
from hpo.runs.record.trial import Trial

TESTS = Path(__file__).resolve().parents[2]
RECORD_KEYS = {
    "trial", "config_id", "config", "budget", "instance", "baseline", "finish", "seed", "status",
    "cost", "score", "metrics", "start", "end", "duration", "worker", "error", "info",
}  # fmt: skip


def _records(cfg: CampaignConfig) -> list[dict[str, Any]]:
    return read_trials(cfg.run_dir / "trials.jsonl")


def _sequence(cfg: CampaignConfig) -> list[tuple[str, float]]:
    return [(json.dumps(r["config"], sort_keys=True), r["budget"]) for r in _records(cfg)]


# --- CampaignConfig -----------------------------------------------------------------------


def test_config_defaults_and_json_round_trip(data_root: Path, runs: Path) -> None:
    cfg = CampaignConfig(data_root=data_root, name="a", runs_dir=runs, collections=("tile:xla",))
    assert (cfg.min_budget, cfg.max_budget) == (42.0, 672.0)
    assert cfg.cache_dir.is_absolute()
    assert cfg.run_dir == runs.absolute() / "a"
    assert CampaignConfig.from_json(cfg.to_json()) == cfg
    configs = CampaignConfig(data_root=data_root, name="a", fidelity="configs")
    assert (configs.min_budget, configs.max_budget) == (27.0, 432.0)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"trials": 0}, r"'trials': expected an integer >= 1, found 0"),
        ({"trials": True}, r"'trials': expected an integer >= 1, found True"),
        ({"optimizer": "tpe"}, r"'optimizer': expected one of model-hb, model-sh, random-hb, bo"),
        ({"n_init": 0}, r"'n_init': expected an integer >= 1, found 0"),
        ({"n_local": -1}, r"'n_local': expected an integer >= 0, found -1"),
        ({"histogram_pool_mb": -1}, r"'histogram_pool_mb': expected an integer >= 0"),
        ({"histogram_pool_mb": 1.5}, r"'histogram_pool_mb': expected an integer >= 0"),
        ({"random_prob": 1.5}, r"'random_prob': expected a probability in \[0, 1\], found 1.5"),
        ({"random_prob": True}, r"'random_prob': expected a probability in \[0, 1\], found True"),
        ({"fidelity": "epochs"}, r"'fidelity': expected one of rounds, configs"),
        ({"walltime": -5}, r"'walltime': expected a finite number > 0, found -5"),
        ({"crash_cost": float("inf")}, r"'crash_cost': expected a finite number > 0"),
        ({"eta": 1}, r"'eta': expected an integer >= 2, found 1"),
        ({"name": "../x"}, r"'name': expected 1-100 letters"),
        ({"collections": ("tile:xla", "nope")}, r"'collections': expected a non-empty selection"),
        ({"collections": ()}, r"'collections': expected a non-empty selection"),
        ({"min_budget": 10.0, "max_budget": 15.0}, r"max_budget \(15\) must be at least eta"),
        ({"workers": 2, "dask_scheduler": "tcp://x:1"}, r"'workers' and 'dask_scheduler' exclude"),
        ({"workers": 2, "worker_processes": 1}, r"'worker_processes': expected true or false"),
        (
            {"worker_processes": True},
            r"'worker_processes' needs .* 2 or more 'workers' \(found 1\)",
        ),
        (
            {"worker_processes": True, "dask_scheduler": "tcp://x:1"},
            r"'worker_processes' needs a local cluster .* and a dask_scheduler",
        ),
        ({"seed": -1}, r"'seed': expected an integer >= 0, found -1"),
        ({"fixed_rounds": 0}, r"'fixed_rounds': expected an integer >= 1, found 0"),
        ({"fast_bias": -1.0}, r"'fast_bias': expected a finite number >= 0, found -1\.0"),
        ({"features": {"relative": True, "colour": 1}}, r"'features': expected a feature spec"),
        ({"features": "relative"}, r"'features': expected a feature spec, found 'relative'"),
    ],
)
def test_config_rejects_bad_settings(
    data_root: Path, override: dict[str, Any], message: str
) -> None:
    settings: dict[str, Any] = {"data_root": data_root, "name": "a", **override}
    with pytest.raises(ConfigError, match=message):
        CampaignConfig(**settings)


def test_single_fidelity_ignores_the_budget_ratio(data_root: Path) -> None:
    cfg = CampaignConfig(data_root=data_root, name="a", optimizer="bo", max_budget=30.0)
    assert cfg.max_budget == 30.0


def test_from_dict_names_unknown_and_missing_keys(data_root: Path) -> None:
    good = CampaignConfig(data_root=data_root, name="a").to_dict()
    with pytest.raises(ConfigError, match=r"x\.json: campaign setting 'trials': expected an int"):
        CampaignConfig.from_dict({**good, "trials": "10"}, "x.json")
    with pytest.raises(ConfigError, match=r"x\.json: unknown campaign setting 'colour'"):
        CampaignConfig.from_dict({**good, "colour": "red"}, "x.json")
    del good["name"]
    with pytest.raises(ConfigError, match=r"x\.json: missing campaign setting 'name'"):
        CampaignConfig.from_dict(good, "x.json")


# --- a campaign and its run folder ---------------------------------------------------------


def test_campaign_writes_the_run_folder(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=12)
    root_handlers = list(logging.getLogger().handlers)
    root_level = logging.getLogger().level
    result = _run(cfg)
    assert logging.getLogger().handlers == root_handlers
    assert logging.getLogger().level == root_level
    records = _records(cfg)
    assert len(records) == 12
    assert all(set(r) == RECORD_KEYS for r in records)
    assert [r["trial"] for r in records] == list(range(1, 13))
    assert {r["budget"] for r in records} <= {1.0, 3.0, 9.0, 27.0}
    assert all(r["status"] == "SUCCESS" for r in records)
    assert all(r["end"] >= r["start"] for r in records)
    campaign = json.loads((cfg.run_dir / "campaign.json").read_text())
    assert campaign["format"] == CAMPAIGN_FORMAT
    assert CampaignConfig.from_dict(campaign["config"]) == cfg
    assert campaign["config"]["features"] == FeatureSpec().to_dict()
    assert (campaign["config"]["fixed_rounds"], campaign["config"]["fast_bias"]) == (200, 2.0)
    assert set(campaign["versions"]) == {"hpo", "smac", "ConfigSpace", "lightgbm", "numpy", "dask"}
    assert len(campaign["data_fingerprint"]) == 32
    assert campaign["space"]["name"] == "lambdarank_small"
    saved = json.loads((cfg.run_dir / "result.json").read_text())
    assert saved["incumbent"] == result.incumbent
    assert saved["n_trials"] == 12
    assert result.metrics == records[result.trial - 1]["metrics"]
    assert (smac_output_dir(cfg.run_dir, cfg.seed) / "runhistory.json").exists()
    assert not (cfg.run_dir / LOCK_FILE).exists()
    assert run_state(cfg.run_dir) == "finished"


def test_bad_space_or_data_leaves_no_run_folder(data_root: Path, runs: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown search space 'nope'"):
        _run(toy_config(runs, data_root, space="nope"))
    with pytest.raises(UsageError, match=r"no layout:xla:default train data"):
        _run(toy_config(runs, data_root, collections=("layout:xla:default",)))
    assert not runs.exists()


def test_crashed_trials_are_recorded_and_the_campaign_goes_on(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=15)
    result = _run(cfg, ToyObjective(crash_above_leaves=40))
    records = _records(cfg)
    crashed = [r for r in records if r["status"] == "CRASHED"]
    assert len(records) == 15
    assert crashed
    assert all("ValueError: toy crash" in r["error"] for r in crashed)
    assert all(r["cost"] == cfg.crash_cost for r in crashed)
    assert result.n_crashed == len(crashed)
    assert result.incumbent is not None


def test_walltime_stops_the_campaign(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=100, walltime=1.0)
    result = _run(cfg, ToyObjective(sleep=0.2))
    assert 2 <= result.n_trials < 100
    assert run_state(cfg.run_dir) == "finished"


def test_every_trial_crashing_gives_no_incumbent(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=5)
    result = _run(cfg, always_crash)
    assert result.incumbent is None
    assert result.n_crashed == 5
    assert "always crashes" in _records(cfg)[0]["error"]


def test_non_finite_cost_is_a_crash_with_a_reason(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=3)
    _run(cfg, nan_cost)
    assert all("non-finite cost nan" in r["error"] for r in _records(cfg))


@pytest.mark.parametrize("optimizer", ["bo", "random"])
def test_single_fidelity_trials_get_the_max_budget(
    data_root: Path, runs: Path, optimizer: str
) -> None:
    cfg = toy_config(runs, data_root, trials=6, optimizer=optimizer)
    _run(cfg)
    records = _records(cfg)
    assert len(records) == 6
    assert {r["budget"] for r in records} == {27.0}
    assert {r["info"]["budget"] for r in records} == {27.0}  # what the objective received


@pytest.mark.parametrize("optimizer", ["model-sh", "random-sh"])
def test_successive_halving_uses_its_budgets(data_root: Path, runs: Path, optimizer: str) -> None:
    cfg = toy_config(runs, data_root, trials=14, optimizer=optimizer, n_init=10)
    _run(cfg)
    budgets = [r["budget"] for r in _records(cfg)]
    # the baseline at the largest budget, then the first stage: eta**3 / (3 + 1) rounded up
    # = 9 configs at the smallest (the default among them, raced like any config)
    assert budgets[:10] == [27.0] + [1.0] * 9
    assert set(budgets) <= {1.0, 3.0, 9.0, 27.0}


def test_same_seed_gives_the_same_trials(data_root: Path, runs: Path) -> None:
    first, second, other = (
        toy_config(runs, data_root, name=n, trials=12, seed=s)
        for n, s in (("a", 5), ("b", 5), ("c", 6))
    )
    for cfg in (first, second, other):
        _run(cfg)
    assert _sequence(first) == _sequence(second)
    assert _sequence(first) != _sequence(other)


# --- existing names, locks, overwrite --------------------------------------------------------


def test_existing_run_is_refused_without_resume_or_overwrite(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=3)
    _run(cfg)
    with pytest.raises(UsageError, match=r"run 'toy' already exists .*\(finished\); use --resume"):
        _run(cfg)
    with pytest.raises(UsageError, match=r"--resume and --overwrite exclude each other"):
        _run(cfg, resume=True, overwrite=True)


def test_overwrite_starts_again(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=3)
    _run(cfg)
    (cfg.run_dir / "boosters").mkdir()
    _run(dataclasses.replace(cfg, trials=4), overwrite=True)
    assert len(_records(cfg)) == 4
    assert not (cfg.run_dir / "boosters").exists()


def test_a_live_lock_refuses_even_overwrite(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=3)
    with RunLock(cfg.run_dir):  # a second open file of the same process conflicts too
        assert run_state(cfg.run_dir) == "running"
        with pytest.raises(UsageError, match=rf"run 'toy' is in use by pid {os.getpid()} on "):
            _run(cfg, overwrite=True)
        assert (cfg.run_dir / LOCK_FILE).exists()
    assert not (cfg.run_dir / LOCK_FILE).exists()


def test_a_stale_lock_is_replaced(data_root: Path, runs: Path) -> None:
    """A lock.json naming a dead pid and flock-ed by nobody (what ``kill -9`` leaves)."""
    cfg = toy_config(runs, data_root, trials=3)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    cfg.run_dir.mkdir(parents=True)
    lock = {"pid": dead.pid, "host": this_host(), "started": time.time()}
    (cfg.run_dir / LOCK_FILE).write_text(json.dumps(lock))
    _run(cfg, overwrite=True)
    assert len(_records(cfg)) == 3


# --- resume -----------------------------------------------------------------------------------


def _interrupted(cfg: CampaignConfig, calls: int) -> None:
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(calls))
    assert run_state(cfg.run_dir) == "interrupted"


def test_resume_after_interrupt_keeps_trials_and_reaches_the_limit(
    data_root: Path, runs: Path
) -> None:
    cfg = toy_config(runs, data_root, trials=14)
    _interrupted(cfg, calls=6)
    before = _records(cfg)
    assert len(before) == 6
    result = _run(cfg, InterruptAfter(10**6), resume=True)
    after = _records(cfg)
    assert after[:6] == before
    assert len(after) == 14
    # the resume is recorded, so the run's curves leave out the time before it
    (entry,) = json.loads((cfg.run_dir / "campaign.json").read_text())["resumes"]
    assert entry["records"] == 6
    assert entry["at"] >= max(r["end"] for r in before)
    assert len({trial_key(r) for r in after}) == 14
    assert result.n_trials == 14


def test_resume_follows_a_moved_runs_folder(data_root: Path, runs: Path, tmp_path: Path) -> None:
    cfg = toy_config(runs, data_root, trials=10)
    _interrupted(cfg, calls=4)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.move(str(cfg.run_dir), str(moved / cfg.name))
    resumed = dataclasses.replace(read_campaign(moved / cfg.name).config, runs_dir=moved)
    _run(resumed, InterruptAfter(10**6), resume=True)
    assert len(_records(resumed)) == 10


@pytest.mark.parametrize("optimizer", ["random-hb", "random"])  # with and without finishing
def test_resume_of_a_finished_campaign_runs_nothing(
    data_root: Path, runs: Path, optimizer: str
) -> None:
    cfg = toy_config(runs, data_root, trials=4, optimizer=optimizer)
    first = _run(cfg)
    state = json.loads((smac_output_dir(cfg.run_dir, cfg.seed) / "optimization.json").read_text())
    assert state["finished"] is True  # SMAC's flag is saved, so a resume knows
    again = _run(cfg, always_crash, resume=True)
    assert again.incumbent == first.incumbent
    assert len(_records(cfg)) == 4


def test_a_format_1_run_resumes_with_the_settings_of_its_time(data_root: Path, runs: Path) -> None:
    from hpo.features import FeatureSpec
    from hpo.runs.record.campaign_file import FORMAT_1_SETTINGS

    # what format-1 runs were made with: feature version 1, no per-graph caps
    then = {k: v for k, v in FORMAT_1_SETTINGS.items() if k != "features"}
    features = FeatureSpec.from_dict(FORMAT_1_SETTINGS["features"])
    cfg = toy_config(runs, data_root, trials=4, features=features, **then)
    first = _run(cfg)
    path = cfg.run_dir / "campaign.json"
    data = json.loads(path.read_text())
    for key in FORMAT_1_SETTINGS:
        del data["config"][key]
    path.write_text(json.dumps({**data, "format": 1}))
    assert read_campaign(cfg.run_dir).config == cfg
    again = _run(cfg, always_crash, resume=True)
    assert again.incumbent == first.incumbent


def test_resume_with_another_feature_spec_is_refused(data_root: Path, runs: Path) -> None:
    _run(toy_config(runs, data_root, trials=4))
    other = toy_config(runs, data_root, trials=4, features=FeatureSpec(relative=False))
    with pytest.raises(ConfigError, match=r"cannot resume with different settings: features"):
        _run(other, resume=True)


def test_resume_without_a_campaign(data_root: Path, runs: Path) -> None:
    with pytest.raises(UsageError, match=r"no campaign 'toy' to resume"):
        _run(toy_config(runs, data_root), resume=True)


def test_resume_with_other_settings_is_refused(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=8)
    _interrupted(cfg, calls=3)
    with pytest.raises(ConfigError, match=r"cannot resume with different settings: eta"):
        _run(dataclasses.replace(cfg, eta=2, trials=9), resume=True)
    with pytest.raises(UsageError, match=r"--trials 6: campaign 'toy' already has trials 8"):
        _run(dataclasses.replace(cfg, trials=6), resume=True)  # limits are only raised


def test_a_finished_campaign_extended_goes_on_from_its_state(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=12, finish=2)
    _run(cfg)
    before = _records(cfg)
    assert len(before) == 12
    longer = dataclasses.replace(cfg, trials=24)
    result = _run(longer, resume=True)
    after = _records(cfg)
    assert after[:12] == before  # nothing redone, nothing lost
    assert len(after) == 24
    assert result.n_trials == 24
    assert len({trial_key(r) for r in after}) == 24
    assert read_campaign(cfg.run_dir).config.trials == 24
    (entry,) = json.loads((cfg.run_dir / "campaign.json").read_text())["extensions"]
    assert (entry["trials"], entry["walltime"], entry["records"]) == ([12, 24], [None, None], 12)
    # SMAC went on from its saved state: its runhistory holds both stretches
    smac_dir = smac_output_dir(cfg.run_dir, cfg.seed)
    assert json.loads((smac_dir / "runhistory.json").read_text())["stats"]["submitted"] == 24
    # and the extension finished again (its earlier finishing trials do not count)
    assert [r for r in before if r.get("finish")]
    assert [r for r in after[12:] if r.get("finish")]
    again = _run(longer, always_crash, resume=True)  # the extended campaign is finished
    assert len(_records(cfg)) == 24
    assert again.trial == result.trial


def test_an_interrupted_extension_is_an_interrupted_run(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=6)
    _run(cfg, InterruptAfter(10**6))  # the same objective throughout (SMAC compares it)
    longer = dataclasses.replace(cfg, trials=14)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(longer, InterruptAfter(2), resume=True)
    assert run_state(cfg.run_dir) == "interrupted"  # its old result.json is gone
    result = _run(longer, InterruptAfter(10**6), resume=True)  # a plain resume goes on
    assert run_state(cfg.run_dir) == "finished"
    assert 8 < len(_records(cfg)) <= 14
    assert result.n_trials == len(_records(cfg))
    record = json.loads((cfg.run_dir / "campaign.json").read_text())
    assert len(record["extensions"]) == 1
    assert len(record["resumes"]) == 2


def test_an_extension_must_leave_room_for_a_trial(
    data_root: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = toy_config(runs, data_root, trials=4, walltime=3600.0)
    _run(cfg)
    # the trial limit ended it; only --walltime was raised, so --trials is named as what to add
    # every number is one the user set: the reserve is named by --finish, which makes it
    ended = r"^campaign 'toy' has run 4 trials of --trials 4; the last 1 of --trials are kept to "
    ended += (
        r"finish \(--finish 3, at most a third of --trials\); give --trials above 5 to extend it$"
    )
    with pytest.raises(UsageError, match=ended):
        _run(dataclasses.replace(cfg, walltime=7200.0), resume=True)
    with pytest.raises(
        UsageError, match=r"^--trials 5: campaign 'toy' has run 4 trials of --trials 5"
    ):
        _run(dataclasses.replace(cfg, trials=5, walltime=7200.0), resume=True)  # 1 to finish
    state = smac_output_dir(cfg.run_dir, cfg.seed) / "optimization.json"
    state.write_text(json.dumps({**json.loads(state.read_text()), "used_walltime": 5000.0}))
    with pytest.raises(UsageError, match=r"--walltime 4000: campaign 'toy' has used 5000 s"):
        _run(dataclasses.replace(cfg, trials=8, walltime=4000.0), resume=True)
    # SMAC's loop would stop at once to keep its reserve: the extension would only finish
    monkeypatch.setattr(hpo.campaign.lifecycle.finish, "reserve_seconds", lambda *_: 700.0)
    room = r"used 5000 s of its walltime 5600 and keeps 700 s to finish; give --walltime above 5700"
    with pytest.raises(UsageError, match=room):
        _run(dataclasses.replace(cfg, trials=8, walltime=5600.0), resume=True)
    other = toy_config(runs, data_root, trials=4, name="other")
    _run(other)
    with pytest.raises(UsageError, match=r"--walltime: campaign 'other' runs without a walltime"):
        _run(dataclasses.replace(other, walltime=9.0), resume=True)
    assert len(_records(cfg)) == 4
    assert "extensions" not in json.loads((cfg.run_dir / "campaign.json").read_text())


def test_resume_after_the_data_changed_is_refused(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=8)
    _interrupted(cfg, calls=3)
    extra = data_root / "npz" / "tile" / "xla" / "valid" / "new_graph.npz"
    extra.write_bytes(b"new")
    with pytest.raises(ConfigError, match=r"valid/new_graph\.npz is new: the data changed since"):
        _run(cfg, InterruptAfter(10**6), resume=True)


def _edit_setting(cfg: CampaignConfig, key: str, value: Any) -> bytes:
    """Edit ``campaign.json``'s setting ``key`` by hand; return the file as edited."""
    path = cfg.run_dir / "campaign.json"
    edited = json.loads(path.read_text())
    edited["config"][key] = value
    path.write_text(json.dumps(edited))
    return path.read_bytes()


def test_an_edited_seed_is_refused_as_smacs_saved_run_disagrees(
    data_root: Path, runs: Path
) -> None:
    cfg = toy_config(runs, data_root, trials=6)
    _run(cfg)
    _edit_setting(cfg, "seed", 7)
    with pytest.raises(ConfigError, match=r"cannot resume with seed 7: SMAC's saved run is for"):
        _run(dataclasses.replace(cfg, seed=7, trials=8), resume=True)
    assert len(_records(cfg)) == 6


def test_a_resume_refused_by_any_check_writes_nothing(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=6)
    _run(cfg)
    edited = _edit_setting(cfg, "max_budget", 9.0)
    with pytest.raises(ConfigError, match=r"SMAC's saved run differs .*max_budget \(saved 27"):
        _run(dataclasses.replace(cfg, max_budget=9.0, trials=12), resume=True)
    assert (cfg.run_dir / "campaign.json").read_bytes() == edited  # no extension, no resume
    assert (cfg.run_dir / "result.json").is_file()  # still finished


def test_resume_never_prompts_when_smac_state_differs(data_root: Path, runs: Path) -> None:
    """SMAC would ask on stdin; pytest's captured stdin would make that an OSError."""
    cfg = toy_config(runs, data_root, trials=8)
    _interrupted(cfg, calls=3)
    with pytest.raises(ConfigError, match=r"SMAC's saved run differs .*runner\.target"):
        _run(cfg, ToyObjective(), resume=True)  # not the objective the run started with


def test_repair_drops_running_trials(tmp_path: Path) -> None:
    history = {
        "stats": {"submitted": 3, "finished": 1, "running": 2},
        "data": [
            {"config_id": 1, "status": 1, "budget": 1.0},
            {"config_id": 2, "status": 0, "budget": 1.0},
            {"config_id": 3, "status": 0, "budget": 1.0},
        ],
        "configs": {"1": {}, "2": {}, "3": {}},
    }
    (tmp_path / "runhistory.json").write_text(json.dumps(history))
    assert smac_usage(tmp_path) is None  # no optimization.json: never saved
    (tmp_path / "optimization.json").write_text(json.dumps({"used_walltime": 12.5}))
    # the two trials running at the kill run again on resume: not counted as run
    assert smac_usage(tmp_path) == (12.5, 1)
    assert repair_smac_state(tmp_path) == 2
    repaired = json.loads((tmp_path / "runhistory.json").read_text())
    assert repaired["stats"] == {"submitted": 1, "finished": 1, "running": 0}
    assert [e["config_id"] for e in repaired["data"]] == [1]
    assert set(repaired["configs"]) == {"1", "2", "3"}


def test_repair_reports_a_corrupt_state_file(tmp_path: Path) -> None:
    (tmp_path / "intensifier.json").write_text('{"state": ')
    with pytest.raises(ConfigError, match=r"intensifier\.json: not valid JSON"):
        repair_smac_state(tmp_path)


# --- trials.jsonl -------------------------------------------------------------------------------


def test_trial_log_dedupes_and_numbers(tmp_path: Path) -> None:
    log = TrialLog(tmp_path / "trials.jsonl")
    trial = Trial(0, {"a": 1}, 1.0, "SUCCESS", seed=0)
    assert log.append(trial)
    assert not log.append(dataclasses.replace(trial, trial=5))
    assert log.append(dataclasses.replace(trial, budget=3.0))
    assert [r["trial"] for r in read_trials(tmp_path / "trials.jsonl")] == [1, 2]
    assert len(TrialLog(tmp_path / "trials.jsonl")) == 2


def test_trial_log_cuts_a_truncated_last_line(tmp_path: Path) -> None:
    path = tmp_path / "trials.jsonl"
    good = json.dumps(
        {"trial": 1, "config": {"a": 1}, "budget": 1.0, "seed": 0, "status": "SUCCESS"}
    )
    path.write_text(good + "\n" + '{"trial": 2, "config": {"a"')
    assert len(read_trials(path)) == 1
    log = TrialLog(path)
    assert path.read_text() == good + "\n"
    assert log.append(Trial(0, {"a": 2}, 1.0, "SUCCESS", seed=0))
    assert [r["trial"] for r in read_trials(path)] == [1, 2]


def test_trial_log_refuses_a_corrupt_middle_line(tmp_path: Path) -> None:
    path = tmp_path / "trials.jsonl"
    record = '{"trial": 1, "config": {}, "status": "SUCCESS"}'
    path.write_text(f"{record}\nnot json\n{record}\n")
    with pytest.raises(ConfigError, match=r"trials\.jsonl: line 2 is not valid JSON"):
        TrialLog(path)


# --- subprocess kill -9, Dask ------------------------------------------------------------------


@pytest.mark.slow
def test_kill_9_then_resume(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, name="killed", trials=16, optimizer="model-hb")
    child = subprocess.Popen(
        [sys.executable, str(TESTS / "campaign_child.py"), str(runs), str(data_root),
         "killed", "16", "model-hb"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    log = cfg.run_dir / "trials.jsonl"
    deadline = time.time() + 60
    while (not log.exists() or len(read_trials(log)) < 4) and time.time() < deadline:
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        time.sleep(0.05)
    time.sleep(0.15)  # in the middle of the next 0.3 s trial
    child.kill()
    child.wait()
    before = read_trials(log)
    assert 4 <= len(before) < 16
    assert run_state(cfg.run_dir) == "interrupted"  # the lock's pid is dead
    _run(cfg, ToyObjective(sleep=0.3), resume=True)
    after = _records(cfg)
    assert after[: len(before)] == before
    assert len(after) == 16
    assert len({trial_key(r) for r in after}) == 16


@pytest.mark.slow
def test_local_dask_workers_with_scattered_data(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=10, workers=2)
    result = _run(cfg, ToyObjective(expect_tables=True), data_to_scatter={"tables": {"rows": 7}})
    records = _records(cfg)
    assert len(records) == 10
    assert all(r["info"]["tables_rows"] == 7 for r in records)
    # every trial ran in a Dask worker, none here (on a loaded machine one worker may get
    # them all, so the number of distinct workers is not asserted)
    here = f"{socket.gethostname()}:{os.getpid()}"
    assert all(r["worker"] and r["worker"] != here for r in records)
    assert result.incumbent is not None


@pytest.mark.slow
@pytest.mark.parametrize("processes", [False, True])
def test_local_workers_share_the_scattered_data_unless_processes(
    data_root: Path, runs: Path, processes: bool
) -> None:
    """Thread workers (the default) see the very tables object the campaign scattered, so a
    second worker holds no copy of the data; process workers each unpickle their own."""
    cfg = toy_config(runs, data_root, trials=8, workers=2, worker_processes=processes)
    tables = {"rows": 7}
    _run(cfg, ToyObjective(expect_tables=True), data_to_scatter={"tables": tables})
    records = _records(cfg)
    assert len(records) == 8
    shared = {r["info"]["tables_id"] == id(tables) for r in records}
    pids = {r["worker"].split("/")[0].rsplit(":", 1)[1] for r in records}
    if processes:
        assert shared == {False}
        assert str(os.getpid()) not in pids
    else:
        assert shared == {True}
        assert pids == {str(os.getpid())}
        assert {r["worker"].split("/")[1] for r in records} <= {"0", "1"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_dask_scheduler(
    data_root: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hpo.campaign.lifecycle.run, "DASK_CONNECT_TIMEOUT", 1.0)
    cfg = toy_config(runs, data_root, dask_scheduler=f"tcp://127.0.0.1:{_free_port()}")
    with pytest.raises(UsageError, match=r"cannot connect to Dask scheduler tcp://127\.0\.0\.1"):
        _run(cfg)


@pytest.mark.parametrize("optimizer", ["model-hb", "model-sh", "random-hb"])
def test_incumbent_is_validated_at_the_largest_budget(
    runs: Path, data_root: Path, optimizer: str
) -> None:
    # budgets 1, 3, 9, 27; low budgets look *better* here, yet the incumbent must be a
    # config validated at 27, the budget the exported model is trained at
    def low_budget_flatters(config: Any, seed: int = 0, budget: float | None = None):
        cost = toy_cost(config, None) + float(budget or 0.0) / 10.0
        return cost, {"metrics": {"tile:xla": 1.0 - cost}, "score": 1.0 - cost}

    fast = {"n_init": 30} if optimizer.startswith("model") else {}  # fewer acquisition searches
    cfg = toy_config(runs, data_root, trials=40, optimizer=optimizer, **fast)
    result = _run(cfg, objective=low_budget_flatters)
    assert result.budget == pytest.approx(27.0)
    at_top = [r for r in _records(toy_config(runs, data_root)) if r["budget"] == 27.0]
    assert result.cost == min(r["cost"] for r in at_top)


def test_short_campaign_falls_back_to_best_trial_at_highest_budget_reached(
    runs: Path, data_root: Path
) -> None:
    # the baseline at 27 is told to SMAC but is no config the intensifier raced: drop it from
    # trials.jsonl's view by making it crash, so the rest (all at budget 1) decide
    def baseline_crashes(config: Any, seed: int = 0, budget: float | None = None):
        if budget == 27.0:
            raise RuntimeError("baseline crash")
        return ToyObjective()(config, seed=seed, budget=budget)

    result = _run(toy_config(runs, data_root, trials=5), baseline_crashes)
    records = [r for r in _records(toy_config(runs, data_root)) if r["status"] == "SUCCESS"]
    assert {r["budget"] for r in records} == {1.0}
    assert result.incumbent is not None
    assert result.budget == pytest.approx(1.0)
    assert result.cost == min(r["cost"] for r in records)


def test_the_summary_says_which_limit_ended_the_campaign(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=4, walltime=3600.0)
    _, out = run_toy_with_output(cfg)
    assert re.search(r"note: ended by --trials 4, before --walltime 3600 s \(\d+ s used\)", out)
    cfg = toy_config(runs, data_root, name="short", trials=500, walltime=2.0)
    _, out = run_toy_with_output(cfg, ToyObjective(sleep=0.2))
    ended = r"note: ended by --walltime 2 s \(\d+ s used\), before --trials 500 \(\d+ run\)"
    assert re.search(ended, out)
