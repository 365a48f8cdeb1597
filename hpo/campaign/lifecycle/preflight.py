"""What every run does before its first trial, with or without subsets.

A run (one campaign, or one campaign per subset) starts in one of three ways, held in
:class:`Start`: new, resumed, or started again over an old folder. The checks that keep a
user's results safe are the same for both kinds of run, so they live here once:

- :meth:`Start.check`: the folder's state agrees with how the run starts (nothing resumed
  that is not there; nothing overwritten by accident);
- :func:`campaign_record`: the ``campaign.json`` of a new run, built (space loaded, data
  hashed) *before* any folder is made, so bad settings or data leave nothing behind;
- :func:`check_saved`: a resumed run has the settings and data it started with, but for
  its limits, which a resume may raise (an extension);
- :func:`locked_run`: the lock, the overwrite, the record, and the rule that a new run
  refused before its first trial leaves no "interrupted" folder behind.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from hpo.campaign.config import CampaignConfig, SavedCampaign, read_campaign
from hpo.campaign.lifecycle.extend import LIMITS, record_extension
from hpo.campaign.limits import Limits
from hpo.data.overlap import find_shared_graphs
from hpo.data.runtimes import unranked_line
from hpo.errors import ConfigError, HpoError, TrialCut, UsageError, naming
from hpo.ownership import check_replaceable, refuse_protected
from hpo.ranking.model.fit_options import check_threads
from hpo.ranking.scoring.metrics import LAYOUT_METRIC
from hpo.ranking.spaces import space_from_dict, space_to_dict
from hpo.runs.record.campaign_file import (
    CAMPAIGN_FORMAT,
    CampaignRecord,
    WarmStartRecord,
    is_run_folder,
    update_campaign_file,
    write_campaign_file,
)
from hpo.runs.record.folder import (
    CAMPAIGN_FILE,
    SMAC_DIR,
    RunLock,
    changed_data_files,
    clear_run_dir,
    data_files,
    discard_new_run,
    fingerprint_of,
    kept_data_files,
    package_versions,
    run_state,
    sweep_run_folder,
    write_data_files,
)
from hpo.runs.record.trial import Trial

__all__ = [
    "MAX_SCHEDULER_THREADS",
    "SESSION_SETTINGS",
    "Runtime",
    "Start",
    "campaign_record",
    "check_saved",
    "cut_notes",
    "locked_run",
    "overlap_notes",
    "unranked_notes",
]

#: LightGBM threads per trial on a Dask scheduler's workers (other machines: their cores are
#: not known here); without a scheduler, at most this machine's cores.
MAX_SCHEDULER_THREADS = 1024
#: The settings a resume may change for its session alone, since results do not depend on
#: them: LightGBM runs ``deterministic=True``, so its threads give the same trees (the saved
#: value stays in ``campaign.json``).
SESSION_SETTINGS = ("threads",)


@dataclass(frozen=True)
class Start:
    """How a run starts.

    Attributes
    ----------
    resume
        Continue the run of the same name; its settings and data must be equal, but for
        limits raised to extend it (:mod:`hpo.campaign.lifecycle.extend`).
    overwrite
        Delete an existing run of the same name first (never one a live process holds).
    warm_start
        Folders of earlier runs whose best configurations a new run tries first.
    """

    resume: bool = False
    overwrite: bool = False
    warm_start: tuple[Path, ...] = ()

    def check(self, cfg: CampaignConfig) -> None:
        """Refuse a start the run folder does not allow.

        Raises
        ------
        UsageError
            If ``resume`` and ``overwrite`` are combined, there is
            nothing to resume, a new run would land on an existing one, or ``overwrite``
            would delete what is not a run folder (:mod:`hpo.ownership`).
        """
        if self.resume and self.overwrite:
            raise UsageError("--resume and --overwrite exclude each other")
        cores = os.cpu_count() or 1
        if cfg.dask_scheduler is None and cfg.workers > cores:
            raise UsageError(
                f"--workers {cfg.workers}: at most {cores} on this machine (its cores: each "
                "trial boosts on a core of its own); for more, run the trials on a Dask "
                "cluster (--dask-scheduler)"
            )
        if cfg.threads is not None:
            if cfg.dask_scheduler is None:
                check_threads(cfg.threads)
            elif cfg.threads > MAX_SCHEDULER_THREADS:  # another machine's cores
                raise UsageError(
                    f"--threads {cfg.threads}: at most {MAX_SCHEDULER_THREADS} per trial on a "
                    "Dask scheduler's workers"
                )
        run_dir = cfg.run_dir
        if self.overwrite:
            if run_dir.exists() and not run_dir.is_symlink():  # a failed start removes it all
                protected = {"the data root": cfg.data_root, "the cache": cfg.cache_dir}
                refuse_protected(run_dir, "--overwrite", protected)
            check_replaceable(run_dir, "--overwrite", kind="run folder", owned=is_run_folder)
        if self.resume and not (run_dir / CAMPAIGN_FILE).exists():
            raise UsageError(f"no campaign '{cfg.name}' to resume in {cfg.runs_dir}")
        if not self.resume and not self.overwrite and run_dir.exists() and any(run_dir.iterdir()):
            raise UsageError(
                f"run '{cfg.name}' already exists in {cfg.runs_dir} ({run_state(run_dir)}); use "
                f"--resume {cfg.name} to continue it or --overwrite to start it again"
            )


@dataclass(frozen=True, eq=False)
class Runtime:
    """What serves every campaign of a run, whatever its kind.

    Attributes
    ----------
    objective
        SMAC target ``objective(config, seed=, budget=, **scattered) -> (cost, info)``;
        ``None`` builds it with ``hpo.campaign.objective.build_objective``.
    data_to_scatter
        Keyword arguments of the objective sent once to each Dask worker (or passed directly
        when running in-process). Ignored when ``objective`` is ``None``.
    quiet
        Plain log lines instead of the live view.
    console
        Where to print; a new ``rich.console.Console`` by default.
    """

    objective: Callable[..., Any] | None = None
    data_to_scatter: dict[str, Any] | None = None
    quiet: bool = False
    console: Console | None = None


def campaign_record(
    cfg: CampaignConfig,
    space: Any,
    *,
    warm_start: WarmStartRecord | None = None,
    local_design: tuple[dict[str, Any], ...] | None = None,
    subsets: dict[str, tuple[str, ...]] | None = None,
) -> CampaignRecord:
    """The ``campaign.json`` of a new run: its settings, space, data fingerprint and package
    versions, plus what its kind adds (the warm start and local design, the subsets).

    Hashing the data here, before the run folder exists, is what refuses a missing
    collection without leaving a folder behind. So is the check for valid and test graphs
    that are also in train (:mod:`hpo.data.overlap`), refused unless ``allow_overlap``.
    """
    shared = find_shared_graphs(cfg.data_root, cfg.collections, cache_dir=cfg.cache_dir)
    if shared and not cfg.allow_overlap:
        raise UsageError(
            f"{cfg.data_root}: {len(shared)} valid/test graph(s) are also in train, so valid "
            f"scores would measure fit ({shared[0].line()}{', ...' if len(shared) > 1 else ''}; "
            "hpo data check lists them); give --allow-overlap to run anyway"
        )
    return CampaignRecord(
        format=CAMPAIGN_FORMAT,
        settings=cfg.to_dict(),
        space=space_to_dict(space),
        data_fingerprint=fingerprint_of(data_files(cfg.data_root, cfg.collections)),
        shared_graphs=tuple(s.line() for s in shared),
        versions=package_versions(),
        layout_metric=LAYOUT_METRIC,
        created=time.time(),
        warm_start=warm_start,
        local_design=local_design,
        subsets=subsets,
        source=str(cfg.run_dir / CAMPAIGN_FILE),
    )


def unranked_notes(trials: Sequence[Trial]) -> list[str]:
    """What the summary says of the valid graphs that carry no ranking, which every trial
    leaves out of its means (the ``unranked`` of a trial's info; the last that has one)."""
    for trial in reversed(trials):
        names = trial.info.get("unranked")
        if names:
            return [unranked_line(names)]
    return []


def cut_notes(trials: Sequence[Trial]) -> list[str]:
    """What the summary says when every trial failed because the walltime cut it
    (:class:`hpo.errors.TrialCut`): such a trial reads as a crash, and on data of real size a
    short campaign may not finish even its first trial, so the note names how far the longest
    got, from which the user can size ``--walltime`` or ``--max-budget``. Nothing when a trial
    succeeded or one failed for another reason (its error is what to read first)."""
    failed = [t for t in trials if not t.ok]
    prefix = f"{TrialCut.__module__}.{TrialCut.__name__}: "
    if any(t.ok for t in trials) or not failed:
        return []
    if not all(t.error_line.startswith(prefix) for t in failed):
        return []
    longest = max(failed, key=lambda t: t.duration or 0.0)
    took = f" after {longest.duration:.0f} s" if longest.duration is not None else ""
    where = longest.error_line.removeprefix(prefix).split(": ", 1)[0]  # "stopped at round ..."
    return [
        f"every trial was cut by the walltime before it finished ({len(failed)}; trial "
        f"{longest.trial}, the longest, {where}{took}): give a longer --walltime or a lower "
        "--max-budget"
    ]


def overlap_notes(record: CampaignRecord) -> list[str]:
    """What the summary says of a run whose valid or test graphs are also in train."""
    shared = record.shared_graphs or ()
    if not shared:
        return []
    return [
        f"{len(shared)} valid/test graph(s) are also in train (--allow-overlap): the valid "
        "scores measure fit, not how the model ranks graphs it has not seen"
    ]


def check_saved(cfg: CampaignConfig, log: Callable[[str], None]) -> SavedCampaign:
    """The saved ``campaign.json`` of a run to resume, checked against ``cfg``, the data and
    SMAC's saved run, and written (extended, or its moved data root recorded) only once
    every check has passed.

    The folder's place (``runs_dir``, ``name``) may differ: a moved, copied or renamed run
    folder is the same run. So may the data root, when its files are the ones the run started
    with (same paths under it, sizes and times: a moved root). Package versions that changed
    are only logged: they rarely change results, and refusing would strand the finished
    trials. So is a run scored by an older layout metric
    (:data:`hpo.ranking.scoring.metrics.LAYOUT_METRIC`): its scores differ only where a
    model tied configs.

    Raises
    ------
    ConfigError
        If a setting or the data of the run's collections changed since it started (the
        changed file named, when the run kept the list of its files), or the settings
        disagree with SMAC's saved run (an edited ``campaign.json``); either would mix
        results of two different campaigns. The limits
        (:data:`~hpo.campaign.lifecycle.extend.LIMITS`) may be raised: that extends the
        campaign and writes it down (:func:`~hpo.campaign.lifecycle.extend.record_extension`,
        which raises UsageError if a limit is lowered or leaves no room).
    UsageError
        If the data root is gone (how to go on is said).
    """
    saved = read_campaign(cfg.run_dir)
    place = {"runs_dir", "name", "data_root"}
    old, new = saved.config.to_dict(), cfg.to_dict()
    keys = [k for k in new if new[k] != old.get(k) and k not in place]
    others = [k for k in keys if k not in LIMITS and k not in SESSION_SETTINGS]
    if others:
        raise ConfigError(
            f"{cfg.run_dir / CAMPAIGN_FILE}: cannot resume with different settings: "
            + ", ".join(f"{k} (saved {old.get(k)!r}, now {new[k]!r})" for k in others)
        )
    _check_data(cfg, saved)
    _check_smac(cfg, saved)
    now = package_versions()
    for pkg, version in (saved.record.versions or {}).items():
        if now.get(pkg) != version:
            log(f"warning: {pkg} {now.get(pkg)} differs from {version} at the start")
    before = saved.record.recorded_layout_metric
    if before != LAYOUT_METRIC:
        log(
            f"warning: this run's trials so far scored layout graphs by {before}; "
            f"trials from now on by {LAYOUT_METRIC} "
            "(where a model ties configs, a little lower: the earlier trials may be favoured "
            "as the incumbent)"
        )
    for key in (k for k in keys if k in SESSION_SETTINGS):
        log(f"{key} {new[key]} for this session (saved: {old.get(key)}); results do not change")
    if any(k in LIMITS for k in keys):  # every check passed: the extension is written
        kept = {k: getattr(saved.config, k) for k in SESSION_SETTINGS}  # the record keeps them
        return record_extension(dataclasses.replace(cfg, **kept), saved, log)  # (and a new root)
    if Path(cfg.data_root) != Path(saved.config.data_root):
        root = str(cfg.data_root)
        record = update_campaign_file(
            cfg.run_dir,
            lambda r: dataclasses.replace(r, settings={**r.settings, "data_root": root}),
        )
        log(f"data root moved: {saved.config.data_root} -> {root} (the same files)")
        return SavedCampaign(record, dataclasses.replace(saved.config, data_root=cfg.data_root))
    return saved


def _check_data(cfg: CampaignConfig, saved: SavedCampaign) -> None:
    """Refuse a resume whose data is not the data the run started with, naming what changed:
    the root (gone), the ``collections`` setting (an edited ``campaign.json``), or the data
    files (each named, when the run kept their list: :func:`~hpo.runs.record.folder.
    write_data_files`)."""
    root = Path(cfg.data_root)
    if not root.is_dir():
        raise UsageError(
            f"{root}: the data root of campaign '{cfg.name}' is gone; if it moved, resume with "
            "--data NEW_ROOT (its files must be the ones the run started with)"
        )
    files = data_files(root, cfg.collections)
    if fingerprint_of(files) == saved.record.data_fingerprint:
        return
    kept = kept_data_files(cfg.run_dir)
    if kept is None:  # a run made before it kept its files: which changed is not known
        raise ConfigError(
            f"{root}: the data of {', '.join(cfg.collections)} changed since campaign "
            f"'{cfg.name}' started; resuming would mix results (start a new campaign)"
        )
    started = {":".join(rel.split("/")[1:-2]) for rel in kept}  # npz/<collection>/<split>/f
    if started != set(cfg.collections):
        raise ConfigError(
            f"{cfg.run_dir / CAMPAIGN_FILE}: cannot resume with different settings: "
            f"collections (the run started with {', '.join(sorted(started))}, campaign.json "
            f"now says {', '.join(cfg.collections)}: it was edited; set it back)"
        )
    changed = changed_data_files(kept, files)
    more = f"; and {len(changed) - 3} more" if len(changed) > 3 else ""
    what = "; ".join(changed[:3]) + more if changed else "the files were reordered"
    raise ConfigError(
        f"{root}: {what}: the data changed since campaign "
        f"'{cfg.name}' started; resuming would mix results (start a new campaign)"
    )


def _check_smac(cfg: CampaignConfig, saved: SavedCampaign) -> None:
    """Refuse settings SMAC's saved run disagrees with (an edited ``campaign.json``): its
    seed, and its scenario as the campaign started (budgets, limits, crash cost)."""
    from hpo.campaign.smac.facades import make_scenario  # SMAC: a resume only
    from hpo.campaign.smac.state import check_smac_resumable, saved_smac_seeds

    seeds = saved_smac_seeds(cfg.run_dir)
    if not seeds:
        return  # SMAC saved nothing yet (or a per-subset run's parent: its subsets did)
    if cfg.seed not in seeds:
        raise ConfigError(
            f"{cfg.run_dir / CAMPAIGN_FILE}: cannot resume with seed {cfg.seed}: SMAC's saved "
            f"run is for seed {seeds[0]} ({cfg.run_dir / SMAC_DIR / str(seeds[0])}); "
            "campaign.json was edited: set it back"
        )
    space = space_from_dict(saved.record.space, saved.record.source)
    limits = Limits.of(saved.config, saved.record)
    check_smac_resumable(make_scenario(saved.config, space, cfg.run_dir, limits), meta=False)


@contextlib.contextmanager
def locked_run(
    cfg: CampaignConfig,
    start: Start,
    record: CampaignRecord | None,
    has_trials: Callable[[], bool],
) -> Iterator[None]:
    """Hold the run folder's lock; clear it (``overwrite``) and write ``record`` in it.

    A new run refused before its first trial (bad data, say; ``has_trials`` is false) is
    removed again, so the same name works once the cause is fixed; a resumed run, or one
    with trials, keeps its folder whatever happens.
    """
    run_dir = cfg.run_dir
    created, locked = not run_dir.exists(), False
    lock = RunLock(run_dir)
    try:
        with _resumed_in_place(run_dir) if start.resume else contextlib.nullcontext():
            lock.acquire()
        try:
            locked = True  # from here on, what is in the folder is this run's
            sweep_run_folder(run_dir)  # what a killed campaign was writing
            if start.overwrite:
                clear_run_dir(run_dir)
            if record is not None:
                write_campaign_file(run_dir, record)
                write_data_files(run_dir, data_files(cfg.data_root, cfg.collections))
            yield
        finally:
            lock.release()
    except (HpoError, OSError):  # OSError: a full or read-only disk, named by the CLI
        if locked and not start.resume and not has_trials():
            with contextlib.suppress(OSError):  # a read-only disk keeps what it has
                discard_new_run(run_dir, remove_folder=created or start.overwrite)
        raise


@contextlib.contextmanager
def _resumed_in_place(run_dir: Path) -> Iterator[None]:
    """A resumed campaign writes in its own folder: one the disk refuses is copied elsewhere."""
    with naming(
        run_dir,
        action="a campaign writes in its run folder: copy it to a writable folder and resume "
        "it there (--runs-dir)",
    ):
        yield
