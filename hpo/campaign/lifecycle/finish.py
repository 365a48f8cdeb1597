"""A campaign that ends well: its most promising unfinished configurations, finished.

Successive halving promotes on a schedule, so when the walltime (or trial limit) runs out
the best configuration is often mid-bracket, never seen at the largest budget, where the
incumbent rule (:mod:`hpo.runs.incumbent`) compares and ``hpo export`` takes its model. So
a multi-fidelity campaign keeps back a *reserve* (:func:`reserve_seconds`,
:attr:`hpo.campaign.limits.Limits.reserved_trials`):

- with a walltime, the estimated time to take the ``finish`` (K) configurations it would
  finish now to the largest budget, over the workers (before there are any, K baseline
  durations: the baseline at the largest budget is every campaign's first trial), with
  :data:`FINISH_MARGIN`, at most :data:`FINISH_SHARE` of the walltime;
- with a trial limit, its last K trials (at most that share), if there is anything to
  finish by then.

SMAC's loop stops when it reaches the reserve (:class:`ReserveStop`); then
:func:`finish_campaign` runs the K most promising configurations that did not reach the
largest budget (:func:`~hpo.campaign.lifecycle.candidates.finish_candidates`) there, through the
campaign's own runner (Dask workers included) and objective (with the ``rounds`` fidelity a
trial continues the booster of its highest budget). Each is told to SMAC, whose state is
saved after every trial, and logged in ``trials.jsonl`` with ``"finish": true``. A campaign
interrupted in its finishing phase resumes there: SMAC's loop is not started again, logged
finishing trials SMAC had not saved are told to it, and only the configurations still
unfinished run. An extended campaign (:mod:`hpo.campaign.lifecycle.extend`) searches and finishes
again; the trials it finished before do not count against its new reserve.

With cross-validation (budgets count folds) and with the single-fidelity optimizers (``bo``,
``random``: every trial runs at the largest budget) there is nothing to finish: no reserve,
no finishing phase (:attr:`hpo.campaign.limits.Limits.finish` is 0), said once in the progress
log.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ConfigSpace import Configuration
from smac.callback import Callback
from smac.main.smbo import SMBO
from smac.runhistory import StatusType, TrialInfo

from hpo.campaign.lifecycle.candidates import Candidate, finish_candidates
from hpo.campaign.limits import FINISH_SHARE, Limits
from hpo.campaign.smac.adapter import (
    runner_worker_slots,
    scatter_to_workers,
    set_smbo_finished,
    smbo_configspace,
    smbo_finished,
    smbo_runner,
    tell_finished_trials,
)
from hpo.campaign.smac.state import optimize_resumably
from hpo.runs.incumbent import config_key
from hpo.runs.record.folder import TrialLog
from hpo.runs.record.trial import Trial, baseline_record

if TYPE_CHECKING:
    from smac.facade.abstract_facade import AbstractFacade

    from hpo.campaign.config import CampaignConfig
    from hpo.campaign.progress import CampaignProgress
    from hpo.campaign.smac.runners import TrialRecorder

__all__ = [
    "FINISH_MARGIN",
    "FINISH_SHARE",
    "Candidate",
    "ReserveStop",
    "finish_campaign",
    "finish_candidates",
    "optimize_and_finish",
    "reserve_seconds",
]

#: Headroom on the estimated seconds: a loaded machine makes any one trial slower.
FINISH_MARGIN = 1.25


def reserve_seconds(limits: Limits, trials: list[Trial], slots: int) -> float:
    """Seconds kept back from the walltime for finishing (0 without a walltime).

    ``trials`` are the campaign's trials (``trials.jsonl``), ``slots`` the trials that run
    at once (the workers). The estimated seconds of the configurations that would be
    finished now (:meth:`Candidate.seconds`) spread over the slots (at least the longest),
    or before there are any, ``ceil(K / slots)`` baseline durations (the baseline trains
    the largest budget from scratch, so its duration bounds a finishing trial's when the
    candidates are no costlier than the baseline); times :data:`FINISH_MARGIN`, at most
    :data:`FINISH_SHARE` of the walltime (the share itself until the baseline is known, or
    when the baseline reused a warm start's booster and trained nothing).
    """
    k, budget = limits.finish, limits.budget
    if not k or limits.walltime_cap is None:
        return 0.0
    assert budget is not None
    cap = limits.walltime_cap
    chosen = finish_candidates(trials, budget, k)
    if chosen:
        costs = [c.seconds(budget) for c in chosen]
        return min(cap, max(sum(costs) / max(1, slots), max(costs)) * FINISH_MARGIN)
    base = baseline_record(trials)
    if base is None or base.status != "SUCCESS" or base.duration is None:
        return cap
    if base.reused:  # scored, not trained: its time says nothing of a finishing trial's
        return cap  # (hpo.campaign.seeding.warm_reuse)
    return min(cap, math.ceil(k / max(1, slots)) * base.duration * FINISH_MARGIN)


def _slots(smbo: SMBO) -> int:
    return runner_worker_slots(smbo_runner(smbo))


class ReserveStop(Callback):
    """Stop SMAC's loop when it reaches the reserve (see the module's docstring).

    ``limits`` are this stretch's, ``log`` is the campaign's trial log (the baseline sizes the
    reserve); ``say`` prints a line (the reserve, once the baseline has sized it).
    """

    def __init__(self, limits: Limits, log: TrialLog, say: Callable[[str], None]) -> None:
        super().__init__()
        self.limits = limits
        self.log = log
        self.say = say
        self._sized = False
        self._said_stop = False

    def reached(self, smbo: SMBO) -> bool:
        """Whether SMAC's loop must stop now to leave the reserve."""
        limits = self.limits
        if not limits.finish:
            return False
        assert limits.budget is not None
        kept = limits.reserved_trials
        if kept and smbo.runhistory.submitted >= limits.trials - kept:
            # the last trials are kept only for configurations there are to finish, as many
            # as there are: the loop runs the others (the campaign ends at its limit)
            n = len(finish_candidates(self.log.trials, limits.budget, kept))
            if n and smbo.runhistory.submitted >= limits.trials - n:
                return True
        if limits.walltime is None:
            return False
        reserve = reserve_seconds(limits, self.log.trials, _slots(smbo))
        if not self._sized and baseline_record(self.log.trials) is not None:
            self._sized = True
            self.say(
                f"finishing: the last {reserve:.0f} s of the walltime (for now) are kept to take "
                f"{limits.finish} configuration(s) to budget {limits.budget:g}"
            )
        if smbo.used_walltime < limits.walltime - reserve:
            return False
        if not self._said_stop:
            self._said_stop = True
            self.say(f"finishing: SMAC's loop stops, {reserve:.0f} s kept to finish")
        return True

    def on_tell_end(self, smbo: SMBO, info: TrialInfo, value: Any) -> bool | None:  # noqa: D102
        return False if self.reached(smbo) else None


def _configuration(smbo: SMBO, trial: Trial) -> Configuration:
    """The runhistory's own Configuration of ``trial`` (so SMAC files it under its id)."""
    known = None if trial.config_id is None else smbo.runhistory.ids_config.get(trial.config_id)
    if known is not None and config_key(known) == config_key(trial.config):
        return known
    return Configuration(smbo_configspace(smbo), values=trial.config)


def _restore_logged(smbo: SMBO, trials: list[Trial], budget: float) -> None:
    """Tell SMAC the finishing trials ``trials.jsonl`` holds and its runhistory lacks
    (logged just before a kill, before SMAC saved)."""
    rh = smbo.runhistory
    for t in trials:
        if not t.finish or t.cost is None or t.status not in StatusType.__members__:
            continue
        config = _configuration(smbo, t)
        cid = rh.config_ids.get(config)
        if cid is not None and any(k.config_id == cid and k.budget == budget for k in rh):
            continue
        rh.add(
            config=config,
            cost=t.cost,
            time=t.duration or 0.0,
            status=StatusType[t.status],
            seed=t.seed,
            budget=budget,
            starttime=t.start or 0.0,
            endtime=t.end or 0.0,
        )
        smbo.intensifier.update_incumbents(config)


def finish_campaign(
    facade: AbstractFacade,
    limits: Limits,
    recorder: TrialRecorder,
    progress: CampaignProgress,
    scatter: dict[str, Any] | None,
) -> int:
    """The finishing phase, once SMAC's loop has stopped; returns the trials it ran.

    ``limits`` are this stretch's (an extended campaign finishes again: its trials before
    ``limits.since`` do not count); ``scatter`` is the objective's data for Dask workers
    (``None`` in-process). Marks SMAC's state finished at the end, so ``--resume`` of the
    campaign knows it is over.
    """
    k, budget, smbo = limits.finish, limits.budget, facade.optimizer
    if not k:
        return 0
    assert budget is not None
    trials = recorder.log.trials
    _restore_logged(smbo, trials, budget)
    mine = trials[limits.since :]
    want = k - len({config_key(t.config) for t in mine if t.finish})
    want = min(want, limits.trials - smbo.runhistory.submitted)
    todo = finish_candidates(trials, budget, want)
    ran = 0
    if todo:
        progress.log(
            f"finishing: taking {len(todo)} configuration(s) to budget {budget:g}: "
            + "; ".join(c.describe() for c in todo)
        )
        # a trial SMAC's loop had running when it reached the reserve may have used some
        # of it: the finishing phase still gets its reserve (the walltime is then exceeded
        # by that trial, as SMAC's own last trial exceeds it)
        reserve = reserve_seconds(limits, recorder.log.trials, _slots(smbo))
        wall = limits.walltime
        deadline = None if wall is None else max(wall, smbo.used_walltime + reserve)
        ran = _run_at_largest_budget(smbo, budget, recorder, todo, scatter, progress, deadline)
    elif want > 0:
        progress.log("finishing: no scored configuration short of the largest budget")
    set_smbo_finished(smbo, True)  # the campaign is over: a --resume returns its result
    smbo.save()
    return ran


def _run_at_largest_budget(
    smbo: SMBO,
    budget: float,
    recorder: TrialRecorder,
    todo: list[Candidate],
    scatter: dict[str, Any] | None,
    progress: CampaignProgress,
    deadline: float | None,
) -> int:
    """Run ``todo`` at the largest budget, each that its estimate lets end by ``deadline``
    (seconds of SMAC's walltime; ``None``: no limit)."""
    runner = smbo_runner(smbo)
    assert runner is not None
    extra = scatter_to_workers(runner, scatter or {})
    recorder.finishing = True
    ran = 0
    try:
        for candidate in todo:
            t = candidate.trial
            need = candidate.seconds(budget)
            if deadline is not None and need > deadline - smbo.used_walltime:
                left = max(0.0, deadline - smbo.used_walltime)
                progress.log(
                    f"finishing: trial {t.trial}'s configuration needs ~{need:.0f} s, "
                    f"{left:.0f} s left"
                )
                continue
            info = TrialInfo(_configuration(smbo, t), seed=t.seed, budget=budget)
            smbo.runhistory.add_running_trial(info)
            runner.submit_trial(info, **extra)
            ran += 1
            tell_finished_trials(smbo)  # told to SMAC (state saved) and logged as each ends
        while runner.is_running():
            runner.wait()
            tell_finished_trials(smbo)
    finally:
        recorder.finishing = False
    return ran


def optimize_and_finish(
    facade: AbstractFacade,
    cfg: CampaignConfig,
    stop: ReserveStop,
    recorder: TrialRecorder,
    progress: CampaignProgress,
    scatter: dict[str, Any] | None,
    smac_dir: Path,
) -> Any:
    """Run SMAC's loop up to the reserve, then the finishing phase; SMAC's incumbent(s).

    SMAC's loop is :func:`hpo.campaign.smac.state.optimize_resumably` (``smac_dir`` its
    folder). A campaign resumed in its finishing phase does not start it again (it would
    run one more trial before the reserve stops it). The limits are ``stop``'s.
    """

    def optimize() -> Any:
        return optimize_resumably(facade, scatter, smac_dir, cfg.name)

    smbo, k = facade.optimizer, stop.limits.finish
    if cfg.finish and not k:
        why = "budgets count folds" if cfg.cv else "every trial runs at the largest budget"
        progress.log(f"finishing: nothing to finish with {cfg.optimizer} ({why})")
    if smbo_finished(smbo):
        return optimize()  # SMAC returns its incumbent at once
    if not k:
        out = optimize()
        if smbo_finished(smbo):  # SMAC sets it after its last save: a resume must see it
            smbo.save()
        return out
    if not stop.reached(smbo):
        optimize()
        # SMAC marks its loop finished when a trial running at the reserve used up the
        # walltime; the campaign is over only after its finishing phase (a kill during it
        # must resume it)
        set_smbo_finished(smbo, False)
    finish_campaign(facade, stop.limits, recorder, progress, scatter)
    return facade.intensifier.get_incumbents()
