"""The finishing phase (hpo.campaign.lifecycle.finish): promising configurations taken to the
largest budget.

The toy objective's cost is a function of the configuration plus ``2 / sqrt(budget)``, so a
configuration's rank at a low budget is its rank at the largest: the configuration that
would win at the largest budget is known from every trial the campaign ran. Its optimum is
moved away from the default configuration (:data:`BEST`), so the baseline does not win.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
from toy_objectives import InterruptAfter, ToyObjective, run_toy_with_output, toy_config, toy_cost

import hpo.campaign.lifecycle.finish
from hpo.campaign import CampaignConfig, CampaignResult, read_campaign
from hpo.campaign.lifecycle.finish import FINISH_MARGIN, FINISH_SHARE, reserve_seconds
from hpo.campaign.limits import Limits
from hpo.campaign.smac.adapter import set_smbo_finished
from hpo.campaign.smac.state import smac_output_dir
from hpo.cli import main
from hpo.errors import ConfigError
from hpo.runs.incumbent import config_key
from hpo.runs.record.folder import read_json, read_trials, trial_key
from hpo.runs.record.trial import trials_of
from hpo.runs.views.history import load_run

#: The toy's (learning_rate, num_leaves) of least cost, away from the default (0.05, 31).
BEST = (0.15, 90.0)


def _run(cfg: CampaignConfig, objective: Any = None, **kwargs: Any) -> tuple[CampaignResult, str]:
    return run_toy_with_output(cfg, objective or ToyObjective(best=BEST), **kwargs)


def _records(cfg: CampaignConfig) -> list[dict[str, Any]]:
    return read_trials(cfg.run_dir / "trials.jsonl")


def _base_cost(config: dict[str, Any]) -> float:
    return toy_cost(config, None, BEST)


def test_reserve_is_sized_from_the_baseline_and_capped(data_root: Path, runs: Path) -> None:
    limits = Limits.of(toy_config(runs, data_root, walltime=100.0, finish=3))
    base = {"baseline": True, "status": "SUCCESS", "duration": 4.0}
    assert reserve_seconds(limits, trials_of([base]), 1) == pytest.approx(3 * 4.0 * FINISH_MARGIN)
    assert reserve_seconds(limits, trials_of([base]), 2) == pytest.approx(2 * 4.0 * FINISH_MARGIN)
    slow = {**base, "duration": 40.0}
    assert reserve_seconds(limits, trials_of([slow]), 1) == pytest.approx(FINISH_SHARE * 100.0)
    # before the baseline has finished, or when it crashed: the cap
    assert reserve_seconds(limits, [], 1) == pytest.approx(FINISH_SHARE * 100.0)
    crashed = trials_of([{**base, "status": "CRASHED"}])
    assert reserve_seconds(limits, crashed, 1) == pytest.approx(FINISH_SHARE * 100.0)
    # a warm start's booster scored again: it trained nothing, so its seconds size nothing
    reused = {**base, "duration": 0.5, "info": {"reused": ["layout", "tile"]}}
    assert reserve_seconds(limits, trials_of([reused]), 1) == pytest.approx(FINISH_SHARE * 100.0)
    untimed = Limits.of(toy_config(runs, data_root, finish=3))
    assert reserve_seconds(untimed, trials_of([base]), 1) == 0.0
    assert Limits.of(toy_config(runs, data_root, trials=40, finish=3)).reserved_trials == 3
    assert Limits.of(toy_config(runs, data_root, trials=8, finish=3)).reserved_trials == 2


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"optimizer": "model-hb"}, 3),
        ({"optimizer": "random-hb", "finish": 5}, 5),
        ({"optimizer": "model-hb", "finish": 0}, 0),
        ({"optimizer": "bo"}, 0),
        ({"optimizer": "random"}, 0),
        ({"optimizer": "model-hb", "cv": 3}, 0),
    ],
)
def test_only_multi_fidelity_runs_without_folds_finish(
    data_root: Path, runs: Path, settings: dict[str, Any], expected: int
) -> None:
    assert Limits.of(toy_config(runs, data_root, **settings)).finish == expected


@pytest.mark.parametrize("value", [-1, 1.5, "3", True])
def test_finish_setting_is_checked(data_root: Path, runs: Path, value: Any) -> None:
    with pytest.raises(ConfigError, match=r"campaign setting 'finish': expected an integer >= 0"):
        toy_config(runs, data_root, finish=value)


def test_a_campaign_file_without_finish_reads_as_zero(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root)
    cfg.run_dir.mkdir(parents=True)
    old = {k: v for k, v in cfg.to_dict().items() if k != "finish"}
    record = {"format": 2, "config": old, "space": {}}
    (cfg.run_dir / "campaign.json").write_text(json.dumps(record))
    assert read_campaign(cfg.run_dir).config.finish == 0
    assert CampaignConfig.from_json(cfg.to_json()).finish == cfg.finish == 3


# --- campaigns ---------------------------------------------------------------------------


def _check_finished(
    cfg: CampaignConfig, result: CampaignResult, k: int | None = None
) -> list[dict[str, Any]]:
    """The campaign's finishing trials (``k``, or 1 to ``cfg.finish`` of them); checks what
    every finished campaign must hold."""
    records = _records(cfg)
    assert len(records) == cfg.trials
    assert len({trial_key(r) for r in records}) == len(records)  # none duplicated
    done = [r for r in records if r["finish"]]
    if k is None:
        assert 1 <= len(done) <= cfg.finish
        k = len(done)
    assert len(done) == k
    assert records[-k:] == done  # the last trials
    assert {r["budget"] for r in done} == {cfg.max_budget}
    before = records[:-k]
    for r in done:  # each had run below the largest budget, never at it
        mine = [b["budget"] for b in before if b["config"] == r["config"]]
        assert mine
        assert max(mine) < cfg.max_budget
    # the incumbent is the best configuration the campaign ran, by the toy's own cost
    best = min((r["config"] for r in records if r["status"] == "SUCCESS"), key=_base_cost)
    assert result.incumbent == best
    assert result.budget == cfg.max_budget
    return done


@pytest.mark.parametrize("optimizer", ["model-hb", "random-hb"])
def test_the_last_trials_finish_the_most_promising_configurations(
    data_root: Path, runs: Path, optimizer: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = toy_config(runs, data_root, trials=20, optimizer=optimizer, finish=3)
    result, out = _run(cfg)
    done = _check_finished(cfg, result, 3)
    assert "finishing: taking 3 configuration(s) to budget 27" in out
    records = _records(cfg)
    for r in done:  # each named by a trial that ran it before, as the progress view numbers them
        before = [
            t["trial"] for t in records if t["config_id"] == r["config_id"] and not t["finish"]
        ]
        assert any(f"trial {n}'s configuration (" in out for n in before)
    assert "config " not in out.replace("configuration", "")  # SMAC's ids are never shown
    incumbent = load_run(cfg.run_dir).incumbent
    assert incumbent is not None
    assert incumbent.finish  # the best configuration was one the campaign had not finished
    assert result.trial in {r["trial"] for r in done}
    assert main(["runs", "show", cfg.name, "--runs-dir", str(cfg.runs_dir)]) == 0
    shown = " ".join(capsys.readouterr().out.split())  # the title may wrap
    assert "finished at the end of the campaign" in shown


def test_without_finishing_the_incumbent_is_the_best_finished(data_root: Path, runs: Path) -> None:
    """The case finishing is for: the same campaign, finish 0, ends with a worse incumbent."""
    cfg = toy_config(runs, data_root, trials=20, optimizer="model-hb", finish=0)
    result, out = _run(cfg)
    records = _records(cfg)
    assert not any(r["finish"] for r in records)
    assert "finishing:" not in out
    best = min((r["config"] for r in records if r["status"] == "SUCCESS"), key=_base_cost)
    assert _base_cost(result.incumbent or {}) > _base_cost(best)


def test_an_interrupted_finishing_phase_resumes_without_losing_trials(
    data_root: Path, runs: Path, tmp_path: Path
) -> None:
    cfg = toy_config(runs, data_root, trials=20, optimizer="model-hb", finish=3)
    whole = toy_config(tmp_path / "whole", data_root, trials=20, optimizer="model-hb", finish=3)
    _run(whole)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(18, best=BEST))  # 17 trials of SMAC's loop, one finishing trial
    before = _records(cfg)
    assert [r["finish"] for r in before[-2:]] == [False, True]
    result, out = _run(cfg, InterruptAfter(10**6, best=BEST), resume=True)
    after = _records(cfg)
    assert after[: len(before)] == before
    assert [r["finish"] for r in after[len(before) :]] == [True, True]  # SMAC's loop not rerun
    done = _check_finished(cfg, result, 3)
    assert "finishing: taking 2 configuration(s)" in out
    assert sorted(config_key(r["config"]) for r in done) == sorted(
        config_key(r["config"]) for r in _records(whole) if r["finish"]
    )
    # SMAC was told every finishing trial: a further resume runs nothing
    again, _ = _run(cfg, InterruptAfter(10**6, best=BEST), resume=True)
    assert len(_records(cfg)) == 20
    assert again.incumbent == result.incumbent


def test_a_loop_that_used_up_its_budget_still_resumes_its_finishing_phase(
    data_root: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SMAC marks its loop finished when a trial running at the reserve used up the walltime;
    the finishing trials then saved that flag, and a kill while finishing left a campaign
    whose resume returned at once, its finishing phase half done."""
    real = hpo.campaign.lifecycle.finish.optimize_resumably

    def budget_used_up(facade: Any, *args: Any) -> Any:
        out = real(facade, *args)
        set_smbo_finished(facade.optimizer, True)  # as SMAC does when its budget is used up
        return out

    monkeypatch.setattr(hpo.campaign.lifecycle.finish, "optimize_resumably", budget_used_up)
    cfg = toy_config(runs, data_root, trials=20, optimizer="model-hb", finish=3)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(18, best=BEST))  # 17 trials of SMAC's loop, one finishing trial
    assert [r["finish"] for r in _records(cfg)[-2:]] == [False, True]
    state = read_json(smac_output_dir(cfg.run_dir, cfg.seed) / "optimization.json")
    assert state["finished"] is False  # the finishing trial's save did not end the campaign
    monkeypatch.setattr(hpo.campaign.lifecycle.finish, "optimize_resumably", real)
    result, out = _run(cfg, InterruptAfter(10**6, best=BEST), resume=True)
    assert "finishing: taking 2 configuration(s)" in out
    _check_finished(cfg, result, 3)


def test_a_finishing_trial_logged_before_smac_saved_is_told_on_resume(
    data_root: Path, runs: Path
) -> None:
    cfg = toy_config(runs, data_root, trials=20, optimizer="model-hb", finish=3)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(19, best=BEST))
    # as if killed after trials.jsonl was written but before SMAC saved its runhistory
    smac_file = cfg.run_dir / "smac" / str(cfg.seed) / "runhistory.json"
    history = json.loads(smac_file.read_text())
    last = _records(cfg)[-1]
    assert last["finish"]
    history["data"] = [
        e
        for e in history["data"]
        if not (e["config_id"] == last["config_id"] and e["budget"] == cfg.max_budget)
    ]
    history["stats"]["submitted"] -= 1
    history["stats"]["finished"] -= 1
    smac_file.write_text(json.dumps(history))
    result, _ = _run(cfg, InterruptAfter(10**6, best=BEST), resume=True)
    _check_finished(cfg, result, 3)


def test_a_walltime_campaign_keeps_time_to_finish(data_root: Path, runs: Path) -> None:
    # random-hb: the forest of model-hb can take seconds to propose, more than a toy trial
    cfg = toy_config(runs, data_root, trials=1000, walltime=8.0, optimizer="random-hb", finish=2)
    result, out = _run(cfg, ToyObjective(sleep=0.01, sleep_per_budget=0.01, best=BEST))
    records = _records(cfg)
    done = [r for r in records if r["finish"]]
    # on a loaded machine the second may no longer fit in what is left: skipped, and said
    assert 1 <= len(done) <= 2
    assert len(done) == 2 or "finishing: config" in out
    assert records[-len(done) :] == done
    assert {r["budget"] for r in done} == {cfg.max_budget}
    assert "s of the walltime (for now) are kept to take 2 configuration(s) to budget 27" in out
    assert out.count("finishing: SMAC's loop stops") == 1  # before SMAC's own walltime
    assert result.trial in {r["trial"] for r in records}


@pytest.mark.parametrize("settings", [{"optimizer": "bo"}, {"optimizer": "model-hb", "cv": 3}])
def test_nothing_to_finish_is_said_and_changes_nothing(
    data_root: Path, runs: Path, settings: dict[str, Any]
) -> None:
    cfg = toy_config(runs, data_root, trials=8, finish=3, **settings)
    _, out = _run(cfg)
    records = _records(cfg)
    assert len(records) == 8
    assert not any(r["finish"] for r in records)
    assert f"finishing: nothing to finish with {cfg.optimizer}" in out


@pytest.mark.slow
def test_finishing_trials_run_on_the_dask_workers(data_root: Path, runs: Path) -> None:
    settings = {"min_budget": 1.0, "max_budget": 9.0, "eta": 3, "n_init": 4, "min_trials": 3}
    cfg = toy_config(
        runs, data_root, trials=26, optimizer="model-hb", workers=2, finish=3, **settings
    )
    result, out = _run(cfg, ToyObjective(sleep_per_budget=0.08, budget_power=2, best=BEST))
    # SMAC's loop may have submitted one trial past its reserve when it stopped
    done = _check_finished(cfg, result)
    assert len(done) >= 2
    here = f"{socket.gethostname()}:{os.getpid()}"
    assert here not in {r["worker"] for r in done}
    history = read_json(smac_output_dir(cfg.run_dir, cfg.seed) / "runhistory.json")
    told = {(e["config_id"], e["budget"]) for e in history["data"] if e["status"] != 0}
    assert {(r["config_id"], r["budget"]) for r in done} <= told
    assert "finishing: taking" in out


@pytest.mark.parametrize(("before", "after"), [(6, 12), (8, 12)])
def test_an_extension_with_fewer_candidates_than_its_reserve_runs_to_its_limit(
    data_root: Path, runs: Path, before: int, after: int
) -> None:
    """The trials kept to finish that no candidate needs go to SMAC's loop (it stopped one
    short of --trials when fewer configurations than reserved were left to finish)."""
    budgets = {"min_budget": 4.0, "max_budget": 16.0, "eta": 2, "finish": 3}
    cfg = toy_config(runs, data_root, trials=before, optimizer="model-hb", **budgets)
    _run(cfg, ToyObjective())
    result, _ = _run(dataclasses.replace(cfg, trials=after), ToyObjective(), resume=True)
    assert len(_records(cfg)) == after == result.n_trials
