"""Every optimizer runs, resumes and reports its baseline; legacy names load and resume.

Toy objectives (tests/toy_objectives.py) keep these fast; the real objective on tiny data is
covered by tests/cli/test_runs.py::test_end_to_end_real_campaign (model-hb, the default).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from toy_objectives import InterruptAfter, ToyObjective, toy_config
from toy_objectives import run_toy_with_output as _run

from hpo.campaign import CampaignConfig, read_campaign, run_campaign
from hpo.campaign.config import OPTIMIZERS
from hpo.campaign.smac.state import smac_output_dir
from hpo.cli import main
from hpo.ranking.spaces import load_space
from hpo.runs.record.folder import read_json, read_trials
from hpo.runs.views.history import load_run
from hpo.runs.views.plots import plot_compare, plot_run

MAX_BUDGET = 27.0  # toy_config's budgets: 1, 3, 9, 27
_MF = "multi_fidelity_facade.MultiFidelityFacade"
_HPO = "hyperparameter_optimization_facade.HyperparameterOptimizationFacade"
FACADES = {
    "model-hb": (_MF, "hyperband.Hyperband"),
    "model-sh": (_MF, "successive_halving.SuccessiveHalving"),
    "random-hb": ("hyperband_facade.HyperbandFacade", "hyperband.Hyperband"),
    "bo": (_HPO, "intensifier.Intensifier"),
    "random": ("random_facade.RandomFacade", "intensifier.Intensifier"),
}


def _default(space: str = "lambdarank_small") -> dict[str, Any]:
    return json.loads(json.dumps(dict(load_space(space).get_default_configuration())))


def _is_default_at_max(config: dict[str, Any], budget: float | None) -> bool:
    return json.loads(json.dumps(config)) == _default() and budget == MAX_BUDGET


@pytest.mark.parametrize("optimizer", [*OPTIMIZERS, "random-sh"])
def test_each_optimizer_runs_resumes_and_reports_its_baseline(
    data_root: Path, runs: Path, optimizer: str
) -> None:
    # a larger initial design than SMAC's default (2 of 9 trials) spares the test most of
    # the surrogate's acquisition searches (about a second each on 2 busy cores)
    fast = {"n_init": 5} if optimizer in ("model-hb", "model-sh", "bo") else {}
    cfg = toy_config(runs, data_root, trials=9, optimizer=optimizer, **fast)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(4))
    first = read_trials(cfg.run_dir / "trials.jsonl")
    assert len(first) == 4
    # the baseline is the first trial: the default configuration at the largest budget
    assert first[0]["baseline"] is True
    assert first[0]["config"] == _default()
    assert first[0]["budget"] == MAX_BUDGET
    assert [r["baseline"] for r in first[1:]] == [False] * 3

    again = InterruptAfter(10**6)  # the same objective: SMAC's saved run names it
    result, out = _run(cfg, again, resume=True)  # no prompt: stdin is pytest's, closed
    records = read_trials(cfg.run_dir / "trials.jsonl")
    assert records[:4] == first
    assert len(records) == 9 == result.n_trials
    assert again.done == 9 - 4  # one call per new record: the baseline did not run again
    assert sum(r["baseline"] for r in records) == 1
    base = records[0]
    assert f"baseline (default configuration, budget 27): score {base['score']:.4f}" in out
    gain = result.score - base["score"]
    assert f"gain over baseline: score {gain:+.4f}: tile:xla=" in out


@pytest.mark.parametrize("optimizer", list(FACADES))
def test_campaign_json_records_what_searched(data_root: Path, runs: Path, optimizer: str) -> None:
    cfg = toy_config(runs, data_root, trials=3, optimizer=optimizer, n_init=2)
    _run(cfg, ToyObjective())
    smac = json.loads((cfg.run_dir / "campaign.json").read_text())["smac"]
    facade, intensifier = FACADES[optimizer]
    assert smac["facade"] == f"smac.facade.{facade}"
    assert smac["intensifier"]["class"] == f"smac.intensifier.{intensifier}"
    if optimizer in ("model-hb", "model-sh", "random-hb"):
        assert smac["intensifier"]["eta"] == cfg.eta
        assert smac["intensifier"]["incumbent_selection"] == "highest_budget"
    assert {"initial_design", "random_design", "model", "config_selector"} <= set(smac)
    saved = load_run(cfg.run_dir).smac
    assert saved is not None
    assert saved.data == smac


def test_surrogate_settings_reach_smac(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=5, optimizer="model-hb", n_init=2, random_prob=0.5)
    _run(cfg, ToyObjective())
    smac = read_json(cfg.run_dir / "campaign.json")["smac"]
    assert smac["initial_design"]["n_configs"] == 2
    assert smac["random_design"]["probability"] == 0.5
    assert smac["config_selector"]["min_trials"] == 5  # the default, not BOHB's d + 1
    assert read_campaign(cfg.run_dir).config == cfg


def test_min_trials_none_is_bohbs_rule(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=5, optimizer="model-hb", n_init=2, min_trials=None)
    _run(cfg, ToyObjective())
    d = len(load_space("lambdarank_small"))  # the toy campaign's space
    assert (
        read_json(cfg.run_dir / "campaign.json")["smac"]["config_selector"]["min_trials"] == d + 1
    )


def test_min_trials_reaches_smac(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=5, optimizer="model-sh", n_init=2, min_trials=3)
    _run(cfg, ToyObjective())
    assert read_json(cfg.run_dir / "campaign.json")["smac"]["config_selector"]["min_trials"] == 3


def test_the_default_optimizer_is_model_based_hyperband(data_root: Path) -> None:
    cfg = CampaignConfig(data_root=data_root, name="a")
    assert cfg.optimizer == "model-hb"
    assert (cfg.n_init, cfg.random_prob, cfg.min_trials) == (8, 0.2, 5)


def test_a_baseline_interrupted_while_running_runs_on_resume(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=4, optimizer="model-hb", n_init=3)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(0))  # the very first call, the baseline, is interrupted
    assert read_trials(cfg.run_dir / "trials.jsonl") == []
    _run(cfg, InterruptAfter(10**6), resume=True)
    records = read_trials(cfg.run_dir / "trials.jsonl")
    assert [r["baseline"] for r in records] == [True, False, False, False]
    assert _is_default_at_max(records[0]["config"], records[0]["budget"])


def test_a_logged_baseline_missing_from_smac_state_is_not_run_again(
    data_root: Path, runs: Path
) -> None:
    """Killed after trials.jsonl got the baseline, before SMAC saved it: SMAC is told."""
    cfg = toy_config(runs, data_root, trials=6, optimizer="random-hb")
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(3))
    state = smac_output_dir(cfg.run_dir, cfg.seed) / "runhistory.json"
    history = json.loads(state.read_text())
    history["data"] = [e for e in history["data"] if e["budget"] != MAX_BUDGET]
    history["stats"]["submitted"] -= 1  # as SMAC saved it before it was told the baseline
    history["stats"]["finished"] -= 1
    state.write_text(json.dumps(history))
    again = InterruptAfter(10**6)
    _run(cfg, again, resume=True)
    assert again.done == 6 - 3
    assert sum(r["baseline"] for r in read_trials(cfg.run_dir / "trials.jsonl")) == 1


@pytest.mark.parametrize(("legacy", "now"), [("hyperband", "random-hb"), ("sh", "random-sh")])
def test_legacy_optimizer_names_load_and_resume(
    data_root: Path, runs: Path, legacy: str, now: str
) -> None:
    cfg = toy_config(runs, data_root, trials=8, optimizer=now)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(3))
    path = cfg.run_dir / "campaign.json"
    saved = json.loads(path.read_text())
    saved["config"]["optimizer"] = legacy  # what older versions wrote
    del saved["smac"]
    path.write_text(json.dumps(saved))
    # SMAC's saved meta (compared on resume) names the facade and intensifier as before
    meta = json.loads((smac_output_dir(cfg.run_dir, cfg.seed) / "scenario.json").read_text())
    expected = "_HyperbandFacade" if now == "random-hb" else "_SuccessiveHalvingFacade"
    assert meta["_meta"]["facade"]["name"] == expected
    assert meta["_meta"]["intensifier"]["name"] in ("Hyperband", "SuccessiveHalving")
    resumed = read_campaign(cfg.run_dir).config
    assert resumed.optimizer == now
    _run(resumed, InterruptAfter(10**6), resume=True)
    assert len(read_trials(cfg.run_dir / "trials.jsonl")) == 8
    assert load_run(cfg.run_dir).optimizer == legacy  # as saved; the campaign maps it
    assert read_json(cfg.run_dir / "campaign.json")["smac"]["intensifier"]["class"].startswith(
        "smac."
    )


def test_runs_show_and_plot_report_the_baseline(
    data_root: Path, runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = toy_config(runs, data_root, trials=6)
    result, _ = _run(cfg, ToyObjective())
    assert main(["runs", "show", "toy", "--runs-dir", str(runs), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    base = shown["baseline"]
    assert (base["trial"], base["budget"], base["status"]) == (1, MAX_BUDGET, "SUCCESS")
    assert base["config"] == _default()
    assert base["gain"]["score"] == pytest.approx(shown["incumbent"]["score"] - base["score"])
    assert set(base["gain"]["metrics"]) == {"tile:xla", "layout:xla:default"}
    assert shown["smac"]["facade"] == "smac.facade.hyperband_facade.HyperbandFacade"
    assert main(["runs", "show", "toy", "--runs-dir", str(runs)]) == 0
    text = capsys.readouterr().out
    assert "Baseline: default configuration (trial 1, budget 27, SUCCESS)" in " ".join(text.split())
    searched = "searched by: smac.facade.hyperband_facade.HyperbandFacade; intensifier Hyperband"
    assert searched in text
    run = load_run(cfg.run_dir)
    assert run.baseline is not None
    assert run.baseline.trial == 1
    assert plot_run(run, tmp_path / "run.png").stat().st_size > 0
    assert plot_compare([run], tmp_path / "cmp.png").stat().st_size > 0


def test_end_of_run_summary_table_has_the_baseline(data_root: Path, runs: Path) -> None:
    out = io.StringIO()
    cfg = toy_config(runs, data_root, trials=4)
    run_campaign(cfg, objective=ToyObjective(), quiet=False, console=Console(file=out, width=200))
    text = out.getvalue()
    assert all(word in text for word in ("incumbent", "baseline", "gain"))
    assert "baseline: default configuration, at the largest budget" in text


@pytest.mark.slow
def test_model_hb_with_dask_workers_marks_one_baseline(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=6, optimizer="model-hb", workers=2, n_init=4)
    _run(cfg, ToyObjective(sleep=0.1))
    records = read_trials(cfg.run_dir / "trials.jsonl")
    assert len(records) == 6
    baselines = [r for r in records if r["baseline"]]
    assert len(baselines) == 1
    assert baselines[0]["config"] == _default()
    assert baselines[0]["budget"] == MAX_BUDGET
