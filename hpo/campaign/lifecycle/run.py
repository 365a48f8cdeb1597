"""One SMAC campaign over LightGBM lambdarank hyperparameters.

:class:`CampaignConfig` holds every setting of a campaign; :func:`run_single_campaign` runs it
in the run folder ``<runs_dir>/<name>/`` (see :mod:`hpo.runs.record.folder`), with SMAC assembled by
:mod:`hpo.campaign.smac.facades` and the live view of :mod:`hpo.campaign.progress`. The target
function is injectable: by default it is built by ``hpo.campaign.objective.build_objective``.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ConfigSpace import Configuration
from rich.console import Console

from hpo.campaign.config import CampaignConfig, SavedCampaign, read_campaign
from hpo.campaign.lifecycle.preflight import (
    Runtime,
    Start,
    campaign_record,
    check_saved,
    cut_notes,
    locked_run,
    overlap_notes,
    unranked_notes,
)
from hpo.campaign.limits import Limits
from hpo.campaign.progress import (
    BaselineSummary,
    CampaignProgress,
    gain_notes,
    print_summary,
    smac_logs_to,
)
from hpo.campaign.result import CampaignResult
from hpo.campaign.seeding.local_design import local_design_record, saved_local_design
from hpo.campaign.seeding.warm_reuse import reuse_entries, reuse_record, settle_reuse
from hpo.campaign.seeding.warm_start import WarmStart, warm_configs, warm_start_record
from hpo.errors import UsageError
from hpo.features.table.feature_table import by_family
from hpo.ranking.spaces import load_space, space_from_dict
from hpo.runs.incumbent import choose_incumbent, combine_folds, config_key
from hpo.runs.record.boosters import BOOSTERS_DIR, BoosterStore, booster_key, budget_size
from hpo.runs.record.campaign_file import (
    CampaignRecord,
    Resume,
    SmacSetup,
    update_campaign_file,
)
from hpo.runs.record.folder import (
    CAMPAIGN_FILE,
    RESULT_FILE,
    TRIALS_FILE,
    TrialLog,
    read_json,
    read_trial_log,
    read_trials,
    write_json_atomic,
)
from hpo.runs.record.trial import Trial, baseline_record, baseline_records
from hpo.synth.law_family import LAW_FILE

if TYPE_CHECKING:
    from dask.distributed import Client

__all__ = ["run_single_campaign"]

#: Configurations whose boosters a finished campaign keeps (the incumbent first), for
#: ``hpo export --ensemble`` (up to 5 members copied as scored).
KEPT_CONFIGS = 5
#: Seconds to wait for a Dask scheduler to answer, and for it to have a worker.
DASK_CONNECT_TIMEOUT = 30.0
DASK_WORKER_TIMEOUT = 60.0


@contextlib.contextmanager
def _dask_client(cfg: CampaignConfig, progress: CampaignProgress) -> Iterator[Client | None]:
    """A Dask client for ``--workers N`` (local cluster) or ``--dask-scheduler``, else None."""
    if not cfg.distributed:
        yield None
        return
    from dask.distributed import Client, LocalCluster

    with contextlib.ExitStack() as stack:
        logger = logging.getLogger("distributed")
        stack.callback(logger.setLevel, logger.level)
        if cfg.dask_scheduler is not None:
            try:
                client = Client(cfg.dask_scheduler, timeout=DASK_CONNECT_TIMEOUT)
            except (OSError, TimeoutError) as exc:
                raise UsageError(
                    f"cannot connect to Dask scheduler {cfg.dask_scheduler}: {exc}"
                ) from None
            stack.callback(client.close)
            try:
                client.wait_for_workers(1, timeout=DASK_WORKER_TIMEOUT)
            except TimeoutError:
                waited = f"waited {DASK_WORKER_TIMEOUT:g} s"
                raise UsageError(
                    f"Dask scheduler {cfg.dask_scheduler} has no workers ({waited})"
                ) from None
            n = sum(client.nthreads().values())
            progress.log(f"using Dask scheduler {cfg.dask_scheduler} ({n} worker threads)")
        else:
            # threads share the process's binned Datasets and tables (a second worker adds its
            # training buffers, not a copy of the data); a threads' cluster has no memory
            # limit, since each worker would measure the whole process against its share
            kind = "processes" if cfg.worker_processes else "threads"
            cluster = LocalCluster(
                n_workers=cfg.workers,
                threads_per_worker=1,
                processes=cfg.worker_processes,
                dashboard_address=":0",  # no fixed port: two campaigns at once never clash
                **({} if cfg.worker_processes else {"memory_limit": 0}),
            )
            stack.callback(cluster.close)
            client = Client(cluster)
            stack.callback(client.close)
            progress.log(f"started a local Dask cluster with {cfg.workers} workers ({kind})")
        # the stack runs these last in, first out: Dask's loggers are quiet (but for errors)
        # while the client and cluster close, so a Ctrl-C is one line, not a warning for each
        # task cancelled, and as they were once closed
        stack.callback(logger.setLevel, logging.ERROR)
        yield client


def _saved_result(cfg: CampaignConfig, smac_dir: Path) -> CampaignResult | None:
    """The result of a campaign SMAC marked finished, ``None`` if there is more to run."""
    result_file, state_file = cfg.run_dir / RESULT_FILE, smac_dir / "optimization.json"
    if not (result_file.exists() and state_file.exists() and read_json(state_file).get("finished")):
        return None
    data = read_json(result_file)
    names = {f.name for f in dataclasses.fields(CampaignResult)} - {"run_dir"}
    return CampaignResult(run_dir=cfg.run_dir, **{k: data.get(k) for k in names})


def _result(cfg: CampaignConfig, best: Trial | None, trials: list[Trial]) -> CampaignResult:
    """The campaign's outcome, ``best`` being its incumbent trial."""
    return CampaignResult(
        run_dir=cfg.run_dir,
        incumbent=None if best is None else best.config,
        trial=None if best is None else best.trial,
        cost=None if best is None else best.cost,
        score=None if best is None else best.score,
        metrics={} if best is None else dict(best.metrics),
        budget=None if best is None else best.budget,
        n_trials=len(trials),
        n_crashed=sum(1 for t in trials if t.status != "SUCCESS"),
        finished=time.time(),
        folds=best.folds if best is not None and cfg.cv else None,
    )


def _keep_incumbent_boosters(cfg: CampaignConfig, best: Trial | None, trials: list[Trial]) -> int:
    """Prune the finished campaign's booster store to the boosters of its best configurations.

    Nothing is continued any more (an extended campaign trains the configurations it promotes
    afresh); export needs the incumbent's boosters (one per family, at its budget) and
    ``hpo export --ensemble`` those of the next best distinct configurations at that budget:
    :data:`KEPT_CONFIGS` in all. Returns how many files were deleted.
    """
    keep: list[tuple[str, int]] = []
    if best is not None and best.budget is not None and not cfg.cv:  # cv keeps no boosters
        families = list(by_family(cfg.collections))
        at_top = [t for t in trials if t.ok and t.budget == best.budget and t.score is not None]
        ranked = [best, *sorted(at_top, key=lambda t: (-(t.score or 0.0), t.trial))]
        chosen: dict[str, Trial] = {}
        for t in ranked:  # distinct configurations, best first
            chosen.setdefault(config_key(t.config), t)
        for t in list(chosen.values())[:KEPT_CONFIGS]:
            seed = cfg.seed if t.seed is None else t.seed
            keep += [(booster_key(t.config, seed, f), budget_size(best.budget)) for f in families]
    return BoosterStore(cfg.run_dir / BOOSTERS_DIR).keep_only(keep)


def run_single_campaign(
    cfg: CampaignConfig,
    start: Start,
    runtime: Runtime | None = None,
) -> CampaignResult:
    """Run (or resume) one SMAC campaign in ``cfg.run_dir`` and return its incumbent.

    ``start`` says how it starts and ``runtime`` what serves it
    (:mod:`hpo.campaign.lifecycle.preflight`); the errors are those of
    :func:`hpo.campaign.lifecycle.launch.run_campaign`.
    """
    rt = runtime if runtime is not None else Runtime()
    start.check(cfg)
    record = None  # built before any folder is made: checks the space and the data
    if not start.resume:
        space = load_space(cfg.space)
        sources = start.warm_start
        warm = warm_configs(sources, space, cfg.runs_dir) if sources else None
        best = None if warm is None else warm.baseline
        first = None if best is None else Configuration(space, values=best)
        baseline = WarmStart(baseline=first).first_trial(space)
        local = local_design_record(baseline, cfg.local_initial, cfg.collections, cfg.seed)
        record = campaign_record(cfg, space, warm_start=warm, local_design=local)
        if warm is not None:  # the source's best booster is the baseline where the problem matches
            trial = warm.baseline_trial
            source = Path(trial.path) if trial is not None and trial.path else None
            reuse = reuse_record(warm, SavedCampaign(record, cfg), source)
            record = dataclasses.replace(record, warm_start=dataclasses.replace(warm, reuse=reuse))
    console = rt.console if rt.console is not None else Console()
    quiet = rt.quiet
    limits = Limits.of(cfg)
    progress = CampaignProgress(
        trials=limits.trials, walltime=limits.walltime, quiet=quiet, console=console, cv=cfg.cv
    )
    has_trials = functools.partial(_has_trials, cfg.run_dir)
    with locked_run(cfg, start, record, has_trials), smac_logs_to(progress), progress:
        result = _run_locked(cfg, progress, rt.objective, rt.data_to_scatter, resume=start.resume)
    base = _baseline_summary(cfg)
    trials = read_trial_log(cfg.run_dir / TRIALS_FILE)
    notes = [
        *_limit_reached(cfg),
        *overlap_notes(read_campaign(cfg.run_dir).record),
        *unranked_notes(trials),
        *cut_notes(trials),
        *gain_notes(result, base, generated=(Path(cfg.data_root) / LAW_FILE).is_file()),
    ]
    print_summary(console, result, quiet=quiet, baseline=base, cv=cfg.cv, notes=notes)
    return result


def _limit_reached(cfg: CampaignConfig) -> list[str]:
    """Which limit ended the campaign, in one line: ``--trials`` (before ``--walltime``, when
    there is one) or ``--walltime`` (before ``--trials``); none when SMAC ended before both."""
    from hpo.campaign.smac.state import smac_output_dir, smac_usage

    used = smac_usage(smac_output_dir(cfg.run_dir, cfg.seed))
    if used is None:
        return []
    seconds, submitted = used
    if submitted >= cfg.trials:
        wall = "" if cfg.walltime is None else f", before --walltime {cfg.walltime:g} s"
        return [f"ended by --trials {cfg.trials}{wall} ({seconds:.0f} s used)"]
    if cfg.walltime is not None:
        return [
            f"ended by --walltime {cfg.walltime:g} s ({seconds:.0f} s used), before --trials "
            f"{cfg.trials} ({submitted} run)"
        ]
    return []


def _has_trials(run_dir: Path) -> bool:
    return bool(read_trials(run_dir / TRIALS_FILE))


def _baseline_summary(cfg: CampaignConfig) -> BaselineSummary | None:
    """The baseline as the summary shows it: its trial, or with folds its mean over them."""
    trials = read_trial_log(cfg.run_dir / TRIALS_FILE)
    origin = read_campaign(cfg.run_dir).record.baseline_origin
    both = combine_folds(baseline_records(trials), cfg.cv) if cfg.cv else []
    if not both:  # no folds, or one failed or is missing: the (first fold's) trial as it is
        base = baseline_record(trials)
        return None if base is None else BaselineSummary(base, origin)
    return BaselineSummary(both[0], origin, folds=f"mean over {cfg.cv} folds")


def _record_smac(run_dir: Path, smac: dict[str, Any]) -> None:
    """Add what searched (SMAC's classes and settings) to ``campaign.json``."""
    setup = SmacSetup(smac)  # unchanged on resume: not written
    update_campaign_file(run_dir, lambda record: dataclasses.replace(record, smac=setup))


def _record_resume(run_dir: Path, records: int) -> None:
    """Add this resume to ``campaign.json``'s ``resumes``: when, and how many trials were
    logged by then. :meth:`hpo.runs.views.history.RunHistory.elapsed` leaves the idle time before
    each resume out of the run's curves, as SMAC leaves it out of its walltime."""
    entry = Resume(at=time.time(), records=records)
    update_campaign_file(run_dir, lambda record: record.with_resume(entry))


#: Training rows of a family from which a one-worker campaign bins its Datasets ahead, in a
#: separate process: below it LightGBM's bin sample (all rows up to 200,000) is small.
BIN_AHEAD_ROWS = 100_000


def _bin_ahead(
    cfg: CampaignConfig,
    space: Any,
    objective: Any,
    data_to_scatter: dict[str, Any] | None,
    trials: list[Trial],
    log: Callable[[str], None],
    also: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Build the campaign's binary Datasets before its workers start (:mod:`~hpo.campaign.
    prebuild`): with several workers, or one worker on tables of :data:`BIN_AHEAD_ROWS` rows
    or more. Only for hpo's own objective, the ``rounds`` fidelity (``configs`` draws new rows
    per trial) and no folds, with a cache (the files live in it)."""
    from hpo.campaign.lifecycle.prebuild import (
        PrebuildPlan,
        dataset_variants,
        prebuild_datasets,
        trial_seed,
    )
    from hpo.campaign.objective import RankerObjective, default_threads
    from hpo.features.table.store import mapped_file

    if not isinstance(objective, RankerObjective):
        return
    s = objective.settings
    if s.fidelity != "rounds" or s.folds:
        return
    tables = (
        objective.tables if objective.tables is not None else (data_to_scatter or {}).get("tables")
    )
    if s.dataset_dir is None or tables is None:
        return
    train = [t for (_, split), t in tables.items() if split == "train"]
    if not train or any(mapped_file(t.X) is None for t in train):
        return  # in-memory tables: nothing names their Datasets outside this process
    if not cfg.distributed and max(len(t.target) for t in train) < BIN_AHEAD_ROWS:
        return
    plan = PrebuildPlan(
        tables=tables,
        collections=tuple(s.collections),
        variants=tuple(dataset_variants(space, also)),
        seed=trial_seed(cfg.seed, trials),
        dataset_dir=s.dataset_dir,
        n_threads=cfg.threads or default_threads(1),  # it runs alone: every core
    )
    prebuild_datasets(plan, log)


@dataclasses.dataclass(frozen=True)
class _Stretch:
    """What this stretch of the campaign (a start, a resume or an extension) starts from."""

    saved: CampaignRecord  # campaign.json as read (the warm start's reuse settled)
    space: Any  # the run's saved search space
    log: TrialLog  # trials.jsonl


@dataclasses.dataclass(frozen=True)
class _Seeds:
    """Where the campaign's first trials come from, and the objective that scores them."""

    objective: Any
    warm: WarmStart
    baseline: Configuration
    reuse: tuple[tuple[str, str, int, str], ...]


def _run_locked(
    cfg: CampaignConfig,
    progress: CampaignProgress,
    objective: Callable[..., Any] | None,
    data_to_scatter: dict[str, Any] | None,
    *,
    resume: bool,
) -> CampaignResult:
    """The campaign itself, once the run folder is locked and campaign.json written.

    Its phases, in order: a resume's repair (or the result of a finished run), the stretch
    this run starts from, the objective, the seeding, the Datasets binned ahead, SMAC's loop
    and the finishing phase, and the incumbent with the result.
    """
    from hpo.campaign.smac.state import smac_output_dir

    smac_dir = smac_output_dir(cfg.run_dir, cfg.seed)
    saved = (check_saved(cfg, progress.log) if resume else read_campaign(cfg.run_dir)).record
    if resume:
        finished = _repair_resume(cfg, smac_dir, progress)
        if finished is not None:
            return finished
    stretch = _open_stretch(cfg, saved, progress, resume=resume)
    if objective is None:
        from hpo.campaign.objective import build_objective

        objective, data_to_scatter = build_objective(cfg, progress)
    seeds = _seed(cfg, stretch, objective, progress)
    ahead = [] if seeds.reuse else [seeds.baseline]  # a reused baseline is scored, not trained
    _bin_ahead(
        cfg,
        stretch.space,
        seeds.objective,
        data_to_scatter,
        stretch.log.trials,
        progress.log,
        ahead,
    )
    incumbent = _optimize(cfg, stretch, seeds, data_to_scatter, progress, smac_dir, resume=resume)
    return _conclude(cfg, stretch.log, incumbent)


def _repair_resume(
    cfg: CampaignConfig, smac_dir: Path, progress: CampaignProgress
) -> CampaignResult | None:
    """A resume's first phase: the result of a run SMAC marked finished, or ``None`` once SMAC's
    saved state is repaired (the trials running at the interruption run again)."""
    from hpo.campaign.smac.state import repair_smac_state

    finished = _saved_result(cfg, smac_dir)
    if finished is not None:
        progress.log(
            f"campaign '{cfg.name}' has already finished (a resume with a higher "
            "--walltime or --trials extends it)"
        )
        return finished
    dropped = repair_smac_state(smac_dir)
    if dropped:
        progress.log(f"{dropped} trial(s) running at the interruption will run again")
    return None


def _open_stretch(
    cfg: CampaignConfig, saved: CampaignRecord, progress: CampaignProgress, *, resume: bool
) -> _Stretch:
    """The saved space and trial log, a resume recorded, the warm start's reuse settled, and
    the trials logged so far shown."""
    run_dir = cfg.run_dir
    space = space_from_dict(saved.space, str(run_dir / CAMPAIGN_FILE))
    log = TrialLog(run_dir / TRIALS_FILE)
    if resume:
        _record_resume(run_dir, len(log))
    saved = settle_reuse(saved, run_dir, resume=resume, trials=log.trials)  # before the slow
    progress.add_previous(log.trials)
    progress.log(
        f"campaign '{cfg.name}': {cfg.optimizer}, {cfg.trials} trials, run folder {run_dir}"
    )
    if cfg.n_local and not cfg.local_initial:
        progress.log(f"--n-local {cfg.n_local} is not used: {cfg.optimizer} draws at random")
    return _Stretch(saved=saved, space=space, log=log)


def _seed(
    cfg: CampaignConfig, stretch: _Stretch, objective: Any, progress: CampaignProgress
) -> _Seeds:
    """The baseline, SMAC's first trial (see facades): the space's default configuration, or a
    warm start's best (its booster scored again where the problem matches), then the local
    design around it."""
    saved, space = stretch.saved, stretch.space
    warm = warm_start_record(saved, space, progress.log)
    reuse = reuse_entries(saved, cfg.run_dir)
    objective = _with_reuse(objective, reuse)
    baseline = warm.first_trial(space)
    local = saved_local_design(saved, space, baseline, cfg.local_initial, cfg.collections, cfg.seed)
    warm = dataclasses.replace(warm, local=tuple(local))
    return _Seeds(objective=objective, warm=warm, baseline=baseline, reuse=reuse)


def _optimize(
    cfg: CampaignConfig,
    stretch: _Stretch,
    seeds: _Seeds,
    data_to_scatter: dict[str, Any] | None,
    progress: CampaignProgress,
    smac_dir: Path,
    *,
    resume: bool,
) -> Any:
    """SMAC's loop up to the finishing reserve, then the finishing phase; SMAC's incumbent(s)."""
    from hpo.campaign.lifecycle.finish import ReserveStop, optimize_and_finish
    from hpo.campaign.smac.adapter import limit_loop
    from hpo.campaign.smac.facades import describe_facade, make_facade, make_scenario
    from hpo.campaign.smac.runners import CampaignTarget, TrialRecorder

    run_dir, saved, log = cfg.run_dir, stretch.saved, stretch.log
    assert cfg.max_budget is not None
    with _dask_client(cfg, progress) as client:
        target = CampaignTarget(
            seeds.objective,
            default_budget=cfg.max_budget,
            local_data=None if client is not None else data_to_scatter,
        )
        recorder = TrialRecorder(log, progress, cfg.max_budget, baseline=dict(seeds.baseline))
        limits = Limits.of(cfg, saved)  # SMAC's scenario records how it started
        stop = ReserveStop(limits, log, progress.log)  # SMAC's loop leaves time to finish
        facade = make_facade(
            cfg,
            make_scenario(cfg, stretch.space, run_dir, limits),
            target,
            callbacks=[recorder, stop],
            resume=resume,
            baseline_records=baseline_records(log.trials),
            dask_client=client,
            warm=seeds.warm,
        )
        limit_loop(facade, limits.trials, limits.walltime)  # its loop stops at hpo's limits
        _record_smac(run_dir, describe_facade(facade))
        scatter = data_to_scatter if client is not None and data_to_scatter else None
        return optimize_and_finish(facade, cfg, stop, recorder, progress, scatter, smac_dir)


def _conclude(cfg: CampaignConfig, log: TrialLog, incumbent: Any) -> CampaignResult:
    """The incumbent by hpo's one rule, the result written, and the booster store pruned.

    SMAC's choice (None when no configuration reached the largest budget, as in a short
    campaign) settles ties (:mod:`hpo.runs.incumbent`)."""
    trials = log.trials
    named = (incumbent[0] if incumbent else None) if isinstance(incumbent, list) else incumbent
    best = choose_incumbent(trials, None if named is None else dict(named), folds=cfg.cv)
    result = _result(cfg, best, trials)
    write_json_atomic(cfg.run_dir / RESULT_FILE, result.to_dict())
    _keep_incumbent_boosters(cfg, best, trials)
    return result


def _with_reuse(objective: Any, reuse: tuple[tuple[str, str, int, str], ...]) -> Any:
    """A copy of a :class:`~hpo.campaign.objective.RankerObjective` that scores a warm start's
    boosters again (:mod:`hpo.campaign.seeding.warm_reuse`), sharing its tables and Dataset
    cache."""
    from hpo.campaign.objective import RankerObjective

    if not reuse or not isinstance(objective, RankerObjective):
        return objective
    out = copy.copy(objective)
    out.settings = dataclasses.replace(objective.settings, reuse=reuse)
    return out
