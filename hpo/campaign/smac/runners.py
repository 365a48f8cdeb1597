"""How SMAC calls the objective: the target wrapper, the runners, and the trial recorder.

- the objective always receives a budget (``max_budget`` for the single-fidelity optimizers,
  and for every optimizer with cross-validation, where SMAC's budget counts folds);
- with cross-validation it receives SMAC's instance, the fold (``instance="fold2"``);
- with Dask, results are filed under the trial SMAC submitted, and a lost worker is a
  CRASHED trial instead of an exception that ends the campaign;
- every finished trial is appended to ``trials.jsonl`` as it ends, so an interrupted
  campaign loses nothing that finished.
"""

from __future__ import annotations

import functools
import math
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ConfigSpace import Configuration
from smac.callback import Callback
from smac.main.smbo import SMBO
from smac.runhistory import StatusType, TrialInfo, TrialValue
from smac.runner.abstract_runner import AbstractRunner
from smac.runner.target_function_runner import TargetFunctionRunner

from hpo.campaign.smac.adapter import (
    PendingTrialsHook,
    runner_crash_cost,
    runner_target,
    scattered_names,
)
from hpo.campaign.smac.state import keep_saved_state
from hpo.runs.record.boosters import trial_budget
from hpo.runs.record.folder import TrialLog, jsonable, this_worker
from hpo.runs.record.trial import Trial, baseline_records

if TYPE_CHECKING:
    from dask.distributed import Client

    from hpo.campaign.progress import CampaignProgress

__all__ = [
    "CampaignDaskRunner",
    "CampaignRunner",
    "CampaignTarget",
    "TrialRecorder",
]


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
        instance: str | None = None,
    ) -> tuple[float, dict[str, Any]]:
        """Run the objective; raise if it returns no finite cost (SMAC records a crash)."""
        kwargs = dict(self.local_data or {})
        kwargs.update(scattered_names(data_to_scatter or {}))
        if instance is not None:  # a fold (cross-validation); objectives without folds never see it
            kwargs["instance"] = instance
        used_budget = trial_budget(budget, self.default_budget)
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
        info.setdefault("worker", this_worker())
        return cost, info


class CampaignRunner(TargetFunctionRunner):
    """TargetFunctionRunner whose meta names the objective instead of hashing bytecode."""

    @property
    def meta(self) -> dict[str, Any]:  # noqa: D102
        target = runner_target(self)
        name = target.name if isinstance(target, CampaignTarget) else _callable_name(target)
        return {"name": TargetFunctionRunner.__name__, "target": name}


class CampaignDaskRunner(PendingTrialsHook):
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
        self.submitted: dict[int, tuple[TrialInfo, float]] = {}

    def submit_trial(self, trial_info: TrialInfo, **dask_data_to_scatter: Any) -> None:  # noqa: D102
        super().submit_trial(trial_info, **dask_data_to_scatter)
        self.submitted[id(self.pending()[-1])] = (trial_info, time.time())

    def collect_finished(self) -> None:  # noqa: D102
        pending = self.pending()
        for future in [f for f in pending if f.done()]:
            pending.remove(future)
            info, submitted = self.submitted.pop(id(future))
            try:
                value = future.result()[1]
            except Exception as exc:  # the task never returned: its worker was lost
                value = TrialValue(
                    cost=runner_crash_cost(self),
                    status=StatusType.CRASHED,
                    starttime=submitted,
                    endtime=time.time(),
                    additional_info={"traceback": traceback.format_exc(), "error": repr(exc)},
                )
            self.put_result(info, value)


class TrialRecorder(Callback):
    """Write each finished trial to ``trials.jsonl`` and show it in the progress view.

    The first trial of ``baseline`` (the space's default configuration, or a warm start's
    best) at ``default_budget`` (the largest) is marked ``"baseline": true`` (with
    cross-validation, its first trial on each fold); every other record has
    ``"baseline": false``. Records carry SMAC's ``instance`` (the fold, or
    ``None``) and ``"finish"``: true for the trials of the finishing phase
    (:mod:`hpo.campaign.lifecycle.finish`, while :attr:`finishing` is set), else false.
    """

    #: whether the trials told now are the finishing phase's
    finishing: bool = False

    def __init__(
        self,
        log: TrialLog,
        progress: CampaignProgress,
        default_budget: float,
        baseline: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.log = log
        self.progress = progress
        self.default_budget = default_budget
        self.baseline = None if baseline is None else jsonable(baseline)
        #: the instances (folds; ``None`` without) on which the baseline is logged
        self.baseline_on = {t.instance for t in baseline_records(log.trials)}

    def _is_baseline(self, config: dict[str, Any], budget: float, instance: str | None) -> bool:
        return (
            instance not in self.baseline_on
            and self.baseline is not None
            and budget == self.default_budget
            and jsonable(config) == self.baseline
        )

    def on_start(self, smbo: SMBO) -> None:  # noqa: D102
        self.progress.start_clock(smbo.used_walltime)

    def on_tell_end(self, smbo: SMBO, info: TrialInfo, value: TrialValue) -> bool | None:  # noqa: D102
        extra = dict(value.additional_info or {})
        status = StatusType(value.status).name
        error = None
        if status != "SUCCESS":
            error = extra.pop("traceback", None) or extra.pop("error", None) or status
            extra.pop("error", None)
        budget = trial_budget(info.budget, self.default_budget)
        baseline = self._is_baseline(dict(info.config), budget, info.instance)
        trial = Trial(
            trial=0,  # the log numbers it
            config_id=smbo.runhistory.get_config_id(info.config),
            config=dict(info.config),
            budget=budget,
            instance=info.instance,
            baseline=baseline,
            finish=self.finishing,
            seed=info.seed,
            status=status,
            cost=None if isinstance(value.cost, list) else float(value.cost),  # one objective
            score=extra.pop("score", None),
            metrics=extra.pop("metrics", {}),
            start=value.starttime,
            end=value.endtime,
            duration=value.endtime - value.starttime,
            worker=extra.pop("worker", None),
            error=error,
            info=extra,
        )
        try:
            written = self.log.append(trial)
        except OSError:  # a full disk: SMAC must not save this trial as done without its record
            keep_saved_state(smbo)
            raise
        if written:
            if baseline:
                self.baseline_on.add(info.instance)
            self.progress.trial_finished(self.log.trials[-1])
        return None
