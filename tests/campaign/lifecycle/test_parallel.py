"""Campaigns on several Dask workers (issue 24): every optimizer, through whole brackets.

The toy objective sleeps with the square of the budget, so the baseline (the default
configuration at the largest budget, every campaign's first trial) is still running on one
worker while the other finishes the first stage of the first bracket: the timing that crashed
every successive-halving optimizer in SMAC 2.4 (see
``hpo.campaign.smac.intensifiers.FullBrackets``).
"""

from __future__ import annotations

import collections
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import dask
import pytest
from toy_objectives import DieOnce, InterruptAfter, ToyObjective, toy_config
from toy_objectives import run_toy as _run

from hpo.campaign import CampaignConfig, CampaignResult
from hpo.campaign.smac.state import smac_output_dir
from hpo.runs.record.folder import read_json, read_trials, trial_key, write_json_atomic

TESTS = Path(__file__).resolve().parents[2]
#: budgets 1, 3, 9 (eta 3): Hyperband's first bracket races 9, 3, 1 configurations, its second
#: starts at budget 3; successive halving repeats the first. A first stage of 9 promotes 3, more
#: than the 2 that SMAC's short first group held: the case that crashed.
#: No finishing phase (issue 23): these tests count whole brackets, which its reserved last
#: trials would cut short (tests/campaign/lifecycle/test_finish.py runs it on two workers).
PARALLEL = {
    "min_budget": 1.0,
    "max_budget": 9.0,
    "eta": 3,
    "n_init": 4,
    "min_trials": 3,
    "finish": 0,
}


def _smac_trials(cfg: CampaignConfig) -> list[tuple[Any, ...]]:
    """(config id, budget, instance) of every finished trial in SMAC's saved runhistory."""
    history = read_json(smac_output_dir(cfg.run_dir, cfg.seed) / "runhistory.json")
    entries = [e for e in history["data"] if e["status"] != 0]  # 0: RUNNING
    # single-fidelity optimizers give SMAC no budget: the objective trains the largest
    budget = [cfg.max_budget if e["budget"] is None else e["budget"] for e in entries]
    return sorted((e["config_id"], b, e["instance"]) for e, b in zip(entries, budget, strict=True))


def _check_parallel_run(cfg: CampaignConfig, result: CampaignResult, trials: int) -> None:
    records = read_trials(cfg.run_dir / "trials.jsonl")
    assert len(records) == trials  # none lost
    assert len({trial_key(r) for r in records}) == trials  # none duplicated
    here = f"{socket.gethostname()}:{os.getpid()}"
    workers = collections.Counter(r["worker"] for r in records)
    assert here not in workers
    assert len(workers) == 2, workers  # every worker ran trials
    # SMAC's runhistory and trials.jsonl hold the same trials
    logged = sorted((r["config_id"], r["budget"], r["instance"]) for r in records)
    assert _smac_trials(cfg) == logged
    assert result.budget == cfg.max_budget  # the incumbent was picked at the largest budget
    assert sum(r["baseline"] for r in records) == 1


@pytest.mark.slow
@pytest.mark.parametrize(
    ("optimizer", "trials"),
    # successive halving seeds its first stage with a group of 9 whenever a worker is free and
    # nothing else can run, so its second bracket needs more trials than Hyperband's
    [("model-hb", 26), ("random-hb", 26), ("model-sh", 40)],
)
def test_successive_halving_on_two_workers_runs_whole_brackets(
    data_root: Path, runs: Path, optimizer: str, trials: int
) -> None:
    cfg = toy_config(runs, data_root, trials=trials, optimizer=optimizer, workers=2, **PARALLEL)
    result = _run(cfg, ToyObjective(sleep_per_budget=0.08, budget_power=2))
    _check_parallel_run(cfg, result, trials)
    records = read_trials(cfg.run_dir / "trials.jsonl")
    # two whole brackets: each promotes 3 configurations to budget 3 (or starts there)
    assert len({r["config_id"] for r in records if r["budget"] == 3.0}) >= 6
    # the baseline ran once, at the largest budget; the brackets race new configurations
    base = next(r for r in records if r["baseline"])
    assert [r["budget"] for r in records if r["config_id"] == base["config_id"]] == [9.0]


@pytest.mark.slow
def test_bayesian_optimisation_on_two_workers(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=12, optimizer="bo", workers=2, **PARALLEL)
    result = _run(cfg, ToyObjective(sleep_per_budget=0.03))
    _check_parallel_run(cfg, result, 12)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_model_hb_against_an_external_scheduler(
    data_root: Path, runs: Path, tmp_path: Path
) -> None:
    address = f"tcp://127.0.0.1:{_free_port()}"
    path = os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    dask_cli = str(Path(sys.executable).with_name("dask"))
    quiet: dict[str, Any] = {"env": env, "cwd": tmp_path, "stdout": subprocess.DEVNULL}
    quiet["stderr"] = subprocess.DEVNULL
    host, port = address.removeprefix("tcp://").split(":")
    procs = [
        subprocess.Popen(
            [dask_cli, "scheduler", "--host", host, "--port", port, "--no-dashboard"], **quiet
        ),
        subprocess.Popen(
            [dask_cli, "worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard"],
            **quiet,
        ),
    ]
    try:
        cfg = toy_config(
            runs, data_root, trials=26, optimizer="model-hb", dask_scheduler=address, **PARALLEL
        )
        # the feature tables are scattered to the workers once, as a real campaign does
        toy = ToyObjective(sleep_per_budget=0.08, budget_power=2, expect_tables=True)
        result = _run(cfg, toy, data_to_scatter={"tables": {"rows": 3}})
        _check_parallel_run(cfg, result, 26)
        records = read_trials(cfg.run_dir / "trials.jsonl")
        assert all(r["info"]["tables_rows"] == 3 for r in records)
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.mark.slow
def test_a_worker_killed_mid_campaign_costs_one_trial(
    data_root: Path, runs: Path, tmp_path: Path
) -> None:
    # a worker process that dies takes one trial with it; threads would take the campaign
    cfg = toy_config(
        runs, data_root, trials=16, optimizer="model-hb", workers=2, worker_processes=True,
        **PARALLEL,
    )  # fmt: skip
    # the killed trial is never the baseline (budget 9): the incumbent rule needs its result
    objective = DieOnce(str(tmp_path / "died"), after=6, below=9.0, sleep_per_budget=0.03)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        result = _run(cfg, objective)
    records = read_trials(cfg.run_dir / "trials.jsonl")
    assert len(records) == 16
    assert len({trial_key(r) for r in records}) == 16
    crashed = [r for r in records if r["status"] == "CRASHED"]
    assert len(crashed) == 1
    assert "KilledWorker" in crashed[0]["error"]
    assert (tmp_path / "died").exists()  # the worker did die, after 6 calls
    assert crashed[0]["budget"] < cfg.max_budget
    assert result.budget == cfg.max_budget


def test_a_state_saved_with_a_short_group_resumes(data_root: Path, runs: Path) -> None:
    """A run that SMAC 2.4's fault stopped (its tracker holds a 2-configuration first group
    whose trials finished) continues on ``--resume`` instead of crashing again."""
    cfg = toy_config(runs, data_root, trials=20, optimizer="model-hb", **PARALLEL)
    with pytest.raises(KeyboardInterrupt):
        _run(cfg, InterruptAfter(8))
    smac_dir = smac_output_dir(cfg.run_dir, cfg.seed)
    state = read_json(smac_dir / "intensifier.json")
    records = read_trials(cfg.run_dir / "trials.jsonl")
    # the group the crashed campaigns saved: two configurations, both run at the smallest
    # budget, where the next stage wants 3
    budgets = collections.defaultdict(set)
    for r in records:
        budgets[r["config_id"]].add(r["budget"])
    only_1 = [i for i, b in budgets.items() if b == {1.0}][:2]
    ran = [next(r["config"] for r in records if r["config_id"] == i) for i in only_1]
    assert len(ran) == 2
    state["state"]["tracker"] = {"0,0": [[0, ran]]}
    write_json_atomic(smac_dir / "intensifier.json", state)
    result = _run(cfg, InterruptAfter(10**6), resume=True)
    after = read_trials(cfg.run_dir / "trials.jsonl")
    assert after[: len(records)] == records
    assert len(after) == 20
    assert result.incumbent is not None
    json.dumps(result.to_dict())  # the result is complete


def test_a_failure_of_smacs_loop_is_one_line_and_resumes(
    data_root: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any exception out of SMAC's loop (not a trial's) keeps the trials and resumes."""
    from hpo.campaign.smac.intensifiers import FullBrackets
    from hpo.campaign.smac.state import LOOP_FAILURE_FILE
    from hpo.errors import HpoError

    cfg = toy_config(runs, data_root, trials=20, optimizer="model-hb", **PARALLEL)
    promote = FullBrackets.promote
    calls = {"n": 0}

    def failing(self: Any, configs: Any, bracket: int, stage: int, keys: Any) -> Any:
        selected = promote(self, configs, bracket, stage, keys)
        calls["n"] += 1
        if selected:  # the first promotion fails, as SMAC 2.4's did
            raise ValueError("need at least one array to concatenate")
        return selected

    monkeypatch.setattr(FullBrackets, "promote", failing)
    with pytest.raises(HpoError, match=r"SMAC's search loop failed \(ValueError: need at least"):
        _run(cfg, ToyObjective())
    failure = smac_output_dir(cfg.run_dir, cfg.seed) / LOOP_FAILURE_FILE
    assert "Traceback" in failure.read_text()
    records = read_trials(cfg.run_dir / "trials.jsonl")
    assert 0 < len(records) < 20
    monkeypatch.setattr(FullBrackets, "promote", promote)
    result = _run(cfg, ToyObjective(), resume=True)
    after = read_trials(cfg.run_dir / "trials.jsonl")
    assert after[: len(records)] == records
    assert len(after) == 20
    assert len({trial_key(r) for r in after}) == 20
    assert not failure.exists()
    assert result.budget == cfg.max_budget
