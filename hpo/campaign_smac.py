"""SMAC assembly of a campaign: scenario, one facade per optimizer, target wrapper, recorder.

Kept apart from :mod:`hpo.campaign` so that the orchestration (run folder, lock, Dask,
progress) reads without SMAC's details. What this module guarantees:

- the objective always receives a budget (``max_budget`` for the single-fidelity optimizers);
- SMAC never prompts on stdin: a resumed run is compared with SMAC's saved scenario here and
  a difference is a :class:`hpo.errors.ConfigError`; a new run overwrites;
- SMAC's state files are replaced atomically, so ``kill -9`` cannot leave them truncated;
- trials that were running when the process died are dropped from the saved runhistory on
  resume, so SMAC runs them again instead of waiting for them forever;
- with Dask, results are filed under the trial SMAC submitted, and a lost worker is a
  CRASHED trial.
"""

from __future__ import annotations

import functools
import json
import math
import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from ConfigSpace import Configuration, ConfigurationSpace
from smac import (
    HyperbandFacade,
    HyperparameterOptimizationFacade,
    RandomFacade,
    Scenario,
)
from smac.callback import Callback
from smac.facade.abstract_facade import AbstractFacade
from smac.intensifier import SuccessiveHalving
from smac.main.smbo import SMBO
from smac.runhistory import StatusType, TrialInfo, TrialValue
from smac.runner.abstract_runner import AbstractRunner
from smac.runner.dask_runner import DaskParallelRunner
from smac.runner.target_function_runner import TargetFunctionRunner

from hpo.errors import ConfigError
from hpo.runfolder import SMAC_DIR, TrialLog, jsonable, read_json, this_host, write_json_atomic

if TYPE_CHECKING:
    from dask.distributed import Client

    from hpo.campaign import CampaignConfig
    from hpo.progress import CampaignProgress

__all__ = [
    "MULTI_FIDELITY",
    "CampaignTarget",
    "TrialRecorder",
    "make_facade",
    "make_scenario",
    "repair_smac_state",
    "smac_output_dir",
]

MULTI_FIDELITY = ("hyperband", "sh")
_STATE_FILES = ("optimization.json", "runhistory.json", "intensifier.json")


def _callable_name(obj: Any) -> str:
    while isinstance(obj, functools.partial):
        obj = obj.func
    target = obj if hasattr(obj, "__qualname__") else type(obj)
    return f"{target.__module__}.{target.__qualname__}"


class CampaignTarget:
    """SMAC target function around an objective; picklable when the objective is.

    Parameters
    ----------
    objective
        ``objective(config, seed=..., budget=..., **scattered) -> (cost, info)``.
    default_budget
        The budget given when SMAC gives none (single-fidelity optimizers).
    local_data
        Keyword arguments passed to every call when no Dask scatter is used.
    """

    def __init__(
        self,
        objective: Callable[..., Any],
        *,
        default_budget: float,
        local_data: dict[str, Any] | None = None,
    ) -> None:
        self.objective = objective
        self.default_budget = float(default_budget)
        self.local_data = local_data
        self.name = _callable_name(objective)

    def __call__(
        self,
        config: Configuration,
        seed: int = 0,
        budget: float | None = None,
        data_to_scatter: dict[str, Any] | None = None,
    ) -> tuple[float, dict[str, Any]]:
        """Run the objective; raise if it returns no finite cost (SMAC records a crash)."""
        kwargs = dict(self.local_data or {})
        kwargs.update(data_to_scatter or {})
        used_budget = self.default_budget if budget is None else float(budget)
        out = self.objective(config, seed=seed, budget=used_budget, **kwargs)
        cost, info = out if isinstance(out, tuple) and len(out) == 2 else (out, {})
        if not isinstance(info, dict):
            raise TypeError(f"objective returned info of type {type(info).__name__}, expected dict")
        try:
            cost = float(cost)
        except (TypeError, ValueError):
            raise TypeError(f"objective returned cost {cost!r}, expected a number") from None
        if not math.isfinite(cost):
            raise ValueError(f"objective returned a non-finite cost {cost!r}")
        info = jsonable(info)
        info.setdefault("worker", f"{this_host()}:{os.getpid()}")
        return cost, info


class _CampaignRunner(TargetFunctionRunner):
    """TargetFunctionRunner whose meta names the objective instead of hashing bytecode."""

    @property
    def meta(self) -> dict[str, Any]:  # noqa: D102
        target = self._target_function
        name = target.name if isinstance(target, CampaignTarget) else _callable_name(target)
        return {"name": TargetFunctionRunner.__name__, "target": name}


class _CampaignDaskRunner(DaskParallelRunner):
    """DaskParallelRunner that gives SMAC back the TrialInfo it submitted, even on a lost worker.

    - A Configuration that went through pickle no longer equals the original when the space
      has log-scale integers (ConfigSpace 1.2 compares hyperparameters' internal distribution
      objects), so SMAC would file the worker's copy under a new config and leave the
      submitted trial RUNNING forever: results are re-attached to the submitted TrialInfo.
    - A task whose worker died (``KilledWorker``: out of memory, segfault) becomes a CRASHED
      trial instead of an exception that ends the campaign.
    """

    def __init__(self, single_worker: AbstractRunner, dask_client: Client) -> None:
        super().__init__(single_worker=single_worker, dask_client=dask_client)
        self._submitted: dict[int, tuple[TrialInfo, float]] = {}

    def submit_trial(self, trial_info: TrialInfo, **dask_data_to_scatter: Any) -> None:  # noqa: D102
        super().submit_trial(trial_info, **dask_data_to_scatter)
        self._submitted[id(self._pending_trials[-1])] = (trial_info, time.time())

    def _process_pending_trials(self) -> None:
        for future in [f for f in self._pending_trials if f.done()]:
            self._pending_trials.remove(future)
            info, submitted = self._submitted.pop(id(future))
            try:
                value = future.result()[1]
            except Exception as exc:  # the task never returned: its worker was lost
                value = TrialValue(
                    cost=self._crash_cost,
                    status=StatusType.CRASHED,
                    starttime=submitted,
                    endtime=time.time(),
                    additional_info={"traceback": traceback.format_exc(), "error": repr(exc)},
                )
            self._results_queue.append((info, value))


class TrialRecorder(Callback):
    """Write each finished trial to ``trials.jsonl`` and show it in the progress view."""

    def __init__(self, log: TrialLog, progress: CampaignProgress, default_budget: float) -> None:
        super().__init__()
        self.log = log
        self.progress = progress
        self.default_budget = default_budget

    def on_start(self, smbo: SMBO) -> None:  # noqa: D102
        self.progress.start_clock(smbo.used_walltime)

    def on_tell_end(self, smbo: SMBO, info: TrialInfo, value: TrialValue) -> bool | None:  # noqa: D102
        extra = dict(value.additional_info or {})
        status = StatusType(value.status).name
        error = None
        if status != "SUCCESS":
            error = extra.pop("traceback", None) or extra.pop("error", None) or status
            extra.pop("error", None)
        record = {
            "trial": None,
            "config_id": smbo.runhistory.get_config_id(info.config),
            "config": dict(info.config),
            "budget": self.default_budget if info.budget is None else float(info.budget),
            "seed": info.seed,
            "status": status,
            "cost": value.cost,
            "score": extra.pop("score", None),
            "metrics": extra.pop("metrics", {}),
            "start": value.starttime,
            "end": value.endtime,
            "duration": value.endtime - value.starttime,
            "worker": extra.pop("worker", None),
            "error": error,
            "info": extra,
        }
        if self.log.append(record):
            self.progress.trial_finished(self.log.records[-1])
        return None


class _AtomicSMBO(SMBO):
    """SMBO whose state files are written to temporary names, then renamed together."""

    def save(self) -> None:  # noqa: D102
        path = self._scenario.output_directory
        if path is None:
            return
        path.mkdir(parents=True, exist_ok=True)
        tmp = {name: path / f".{name[:-5]}.tmp.json" for name in _STATE_FILES}
        stats = {  # the keys SMBO.save writes and SMBO.load reads
            "used_walltime": self.used_walltime,
            "used_target_function_walltime": self.used_target_function_walltime,
            "used_target_function_cputime": self.used_target_function_cputime,
            "last_update": time.time(),
            "finished": self._finished,
        }
        tmp["optimization.json"].write_text(json.dumps(stats, indent=2))
        self._runhistory.save(tmp["runhistory.json"])
        self._intensifier.save(tmp["intensifier.json"])
        for name, src in tmp.items():
            os.replace(src, path / name)


def _diff(new: Any, old: Any, where: str = "") -> list[str]:
    if isinstance(new, dict) and isinstance(old, dict):
        out: list[str] = []
        for key in sorted(set(new) | set(old), key=str):
            out += _diff(new.get(key), old.get(key), f"{where}.{key}" if where else str(key))
        return out
    return [] if new == old else [f"{where} (saved {old!r}, now {new!r})"]


def _check_resumable(scenario: Scenario) -> None:
    """Compare ``scenario`` with the one SMAC saved; raise instead of letting SMAC prompt."""
    out = Path(scenario.output_directory)
    saved_file = out / "scenario.json"
    if not saved_file.exists():
        if any((out / name).exists() for name in _STATE_FILES):
            raise ConfigError(
                f"{out}: SMAC state without scenario.json; start again with --overwrite"
            )
        return
    try:
        old = Scenario.load(out)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{saved_file}: unreadable SMAC scenario ({exc})") from exc
    new_s = Scenario.make_serializable(scenario)
    old_s = Scenario.make_serializable(old)
    if new_s["output_directory"] != old_s["output_directory"]:  # the run folder was moved
        data = read_json(saved_file)
        data["output_directory"] = new_s["output_directory"]
        write_json_atomic(saved_file, data)
        old_s["output_directory"] = new_s["output_directory"]
    if new_s != old_s:
        diff = _diff(new_s, old_s)
        shown = "; ".join(diff[:3]) + (f"; and {len(diff) - 3} more" if len(diff) > 3 else "")
        raise ConfigError(
            f"{saved_file}: cannot resume, SMAC's saved run differs from this campaign: {shown} "
            "(start again with --overwrite)"
        )


def _campaign_optimizer(facade: AbstractFacade) -> SMBO:
    if not facade._overwrite:
        _check_resumable(facade._scenario)
    return _AtomicSMBO(
        scenario=facade._scenario,
        runner=facade._runner,
        runhistory=facade._runhistory,
        intensifier=facade._intensifier,
        overwrite=facade._overwrite,
    )


class _HyperbandFacade(HyperbandFacade):
    def _get_optimizer(self) -> SMBO:
        return _campaign_optimizer(self)


class _SuccessiveHalvingFacade(HyperbandFacade):
    def _get_optimizer(self) -> SMBO:
        return _campaign_optimizer(self)


class _BayesianFacade(HyperparameterOptimizationFacade):
    def _get_optimizer(self) -> SMBO:
        return _campaign_optimizer(self)


class _RandomFacade(RandomFacade):
    def _get_optimizer(self) -> SMBO:
        return _campaign_optimizer(self)


def smac_output_dir(run_dir: Path, seed: int) -> Path:
    """Where SMAC writes its files inside a run folder (``smac/<seed>``)."""
    return Path(run_dir) / SMAC_DIR / str(seed)


def make_scenario(cfg: CampaignConfig, space: ConfigurationSpace, run_dir: Path) -> Scenario:
    """Build the SMAC scenario of a campaign; its output goes to :func:`smac_output_dir`."""
    multi = cfg.optimizer in MULTI_FIDELITY
    return Scenario(
        configspace=space,
        name=SMAC_DIR,
        output_directory=Path(run_dir),
        deterministic=True,
        crash_cost=float(cfg.crash_cost),
        walltime_limit=np.inf if cfg.walltime is None else float(cfg.walltime),
        n_trials=cfg.trials,
        min_budget=cfg.min_budget if multi else None,
        max_budget=cfg.max_budget if multi else None,
        seed=cfg.seed,
        n_workers=1,
    )


def make_facade(
    cfg: CampaignConfig,
    scenario: Scenario,
    target: CampaignTarget,
    *,
    callbacks: list[Callback],
    resume: bool,
    dask_client: Client | None = None,
) -> AbstractFacade:
    """Assemble the facade of ``cfg.optimizer`` (hyperband, sh, bo or random).

    SMAC's logging setup is left alone (``logging_level=False``); a new run overwrites SMAC's
    folder, a resumed one continues from it after :func:`_check_resumable`.
    """
    runner: TargetFunctionRunner | DaskParallelRunner = _CampaignRunner(
        scenario, target, required_arguments=["seed", "budget", "data_to_scatter"]
    )
    if dask_client is not None:
        runner = _CampaignDaskRunner(runner, dask_client)
    common: dict[str, Any] = {
        "logging_level": False,
        "callbacks": callbacks,
        "overwrite": not resume,
    }
    # The incumbent must have been validated at the largest budget: SMAC's default compares
    # each config at its own highest budget, so a lucky config seen only at the smallest
    # budget could win, and the exported model (largest budget) would not be the one scored.
    if cfg.optimizer == "hyperband":
        intensifier = HyperbandFacade.get_intensifier(
            scenario, eta=cfg.eta, incumbent_selection="highest_budget"
        )
        return _HyperbandFacade(scenario, runner, intensifier=intensifier, **common)
    if cfg.optimizer == "sh":
        sh = SuccessiveHalving(scenario, eta=cfg.eta, incumbent_selection="highest_budget")
        return _SuccessiveHalvingFacade(scenario, runner, intensifier=sh, **common)
    if cfg.optimizer == "bo":
        return _BayesianFacade(scenario, runner, **common)
    if cfg.optimizer == "random":
        return _RandomFacade(scenario, runner, **common)
    raise ConfigError(f"unknown optimizer '{cfg.optimizer}'")


def repair_smac_state(output_dir: Path) -> int:
    """Prepare SMAC's saved state for a resume; return how many running trials were dropped.

    Trials saved as RUNNING belonged to the dead process: they are removed (and the submitted
    count lowered) so the intensifier yields them again. ``trials.jsonl`` de-duplication keeps
    a trial that had been logged just before the kill from being logged twice.

    Raises
    ------
    ConfigError
        If one of SMAC's state files is not valid JSON.
    """
    output_dir = Path(output_dir)
    present = [output_dir / name for name in _STATE_FILES if (output_dir / name).exists()]
    states = {p.name: read_json(p) for p in present}
    history = states.get("runhistory.json")
    if not isinstance(history, dict) or not isinstance(history.get("data"), list):
        return 0
    running = [e for e in history["data"] if e.get("status") == StatusType.RUNNING]
    if not running:
        return 0
    history["data"] = [e for e in history["data"] if e.get("status") != StatusType.RUNNING]
    stats = history.setdefault("stats", {})
    stats["submitted"] = max(0, int(stats.get("submitted", 0)) - len(running))
    stats["running"] = max(0, int(stats.get("running", 0)) - len(running))
    write_json_atomic(output_dir / "runhistory.json", history)
    return len(running)
