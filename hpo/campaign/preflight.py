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
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from hpo.campaign.config import CampaignConfig, read_campaign
from hpo.errors import ConfigError, HpoError, UsageError
from hpo.ranking.spaces import space_to_dict
from hpo.runs.campaign_file import CAMPAIGN_FORMAT
from hpo.runs.folder import (
    CAMPAIGN_FILE,
    TRIALS_FILE,
    RunLock,
    clear_run_dir,
    data_fingerprint,
    discard_new_run,
    package_versions,
    read_trials,
    run_state,
    write_json_atomic,
)

__all__ = ["LIMITS", "Runtime", "Start", "campaign_record", "check_saved", "locked_run"]


@dataclass(frozen=True)
class Start:
    """How a run starts.

    Attributes
    ----------
    resume
        Continue the interrupted run of the same name; its settings and data must be equal.
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
            nothing to resume, or a new run would land on an existing one.
        """
        if self.resume and self.overwrite:
            raise UsageError("--resume and --overwrite exclude each other")
        run_dir = cfg.run_dir
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
    cfg: CampaignConfig, space: Any, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The ``campaign.json`` of a new run: its settings, space, data fingerprint and package
    versions, plus what its kind adds (``extra``: the warm start, the subsets).

    Hashing the data here, before the run folder exists, is what refuses a missing
    collection without leaving a folder behind.
    """
    return {
        **(extra or {}),
        "format": CAMPAIGN_FORMAT,
        "config": cfg.to_dict(),
        "space": space_to_dict(space),
        "data_fingerprint": data_fingerprint(cfg.data_root, cfg.collections),
        "versions": package_versions(),
        "created": time.time(),
    }


def check_saved(cfg: CampaignConfig, log: Callable[[str], None]) -> dict[str, Any]:
    """The saved ``campaign.json`` of a run to resume, checked against ``cfg`` and the data.

    The folder's place (``runs_dir``, ``name``) may differ: a moved, copied or renamed run
    folder is the same run. Package versions that changed are only logged: they rarely
    change results, and refusing would strand the finished trials.

    Raises
    ------
    ConfigError
        If a setting or the data of the run's collections changed since it started; either
        would mix results of two different campaigns. The limits (:data:`LIMITS`) may be
        raised: that extends the campaign (:func:`_extended`, which may raise UsageError).
    """
    saved = read_campaign(cfg.run_dir)
    place = {"runs_dir": cfg.runs_dir, "name": cfg.name}
    old, new = saved["config"].to_dict(), cfg.to_dict()
    keys = [k for k in new if new[k] != old.get(k) and k not in place]
    others = [k for k in keys if k not in LIMITS]  # raised limits extend the campaign
    if others:
        raise ConfigError(
            f"{cfg.run_dir / CAMPAIGN_FILE}: cannot resume with different settings: "
            + ", ".join(f"{k} (saved {old.get(k)!r}, now {new[k]!r})" for k in others)
        )
    if data_fingerprint(cfg.data_root, cfg.collections) != saved.get("data_fingerprint"):
        raise ConfigError(
            f"{cfg.data_root}: the data of {', '.join(cfg.collections)} changed since campaign "
            f"'{cfg.name}' started; resuming would mix results (start a new campaign)"
        )
    now = package_versions()
    for pkg, version in (saved.get("versions") or {}).items():
        if now.get(pkg) != version:
            log(f"warning: {pkg} {now.get(pkg)} differs from {version} at the start")
    return _extended(cfg, saved, log) if keys else saved


#: The settings a resume may raise (:func:`check_saved`): the campaign's limits.
LIMITS = ("trials", "walltime")


def _extended(cfg: CampaignConfig, saved: dict[str, Any], log: Callable[[str], None]) -> dict:
    """``saved`` with the limits of ``cfg``, written to ``campaign.json``.

    Raising a limit on resume extends the campaign (a finished one too, which then goes on
    from its SMAC state: :func:`hpo.campaign.smac_state.reopen_smac_state`). Each extension
    is kept in ``campaign.json`` under ``extensions``: when, the limits before and after, and
    how many ``trials.jsonl`` records were there (the finishing phase counts its own trials
    from that record on).

    Raises
    ------
    UsageError
        If a limit is lowered, or a walltime is given to a campaign that had none: a
        campaign's limits only grow, so what it ran stays within them.
    """
    before = saved["config"]
    for key in LIMITS:
        was, now = getattr(before, key), getattr(cfg, key)
        if was is None and now is not None:
            raise UsageError(f"--{key}: campaign '{cfg.name}' runs without a {key} limit")
        if was is not None and (now is None or now < was):
            raise UsageError(
                f"--{key} {'none' if now is None else format(now, 'g')}: campaign "
                f"'{cfg.name}' already has {key} {was:g}; a resumed campaign's limits can only "
                "be raised"
            )
    from hpo.campaign.smac_state import reopen_smac_state  # SMAC only where a run resumes

    smac_dir = _check_room(cfg)
    change = {key: [getattr(before, key), getattr(cfg, key)] for key in LIMITS}
    records = len(read_trials(cfg.run_dir / TRIALS_FILE))
    entry = {"at": time.time(), **change, "records": records}
    # the settings complete (an older format's too), under the name the run started with
    as_saved = dataclasses.replace(cfg, runs_dir=before.runs_dir, name=before.name)
    record = {**saved, "format": CAMPAIGN_FORMAT, "config": as_saved.to_dict()}
    record["extensions"] = [*saved.get("extensions", []), entry]
    reopen_smac_state(smac_dir)  # first: a kill between the two leaves a plain resume
    write_json_atomic(cfg.run_dir / CAMPAIGN_FILE, record)
    log(
        f"campaign '{cfg.name}' extended: "
        + ", ".join(f"{k} {a} -> {b}" for k, (a, b) in change.items() if a != b)
    )
    return {**record, "config": cfg}


@contextlib.contextmanager
def locked_run(
    cfg: CampaignConfig,
    start: Start,
    record: dict[str, Any] | None,
    has_trials: Callable[[], bool],
) -> Iterator[None]:
    """Hold the run folder's lock; clear it (``overwrite``) and write ``record`` in it.

    A new run refused before its first trial (bad data, say; ``has_trials`` is false) is
    removed again, so the same name works once the cause is fixed; a resumed run, or one
    with trials, keeps its folder whatever happens.
    """
    run_dir = cfg.run_dir
    created, locked = not run_dir.exists(), False
    try:
        with RunLock(run_dir):
            locked = True  # from here on, what is in the folder is this run's
            if start.overwrite:
                clear_run_dir(run_dir)
            if record is not None:
                write_json_atomic(run_dir / CAMPAIGN_FILE, record)
            yield
    except HpoError:
        if locked and not start.resume and not has_trials():
            discard_new_run(run_dir, remove_folder=created or start.overwrite)
        raise


def _check_room(cfg: CampaignConfig) -> Path:
    """Refuse raised limits that leave SMAC no trial to run (a finished campaign's other
    limit was the one it reached); return SMAC's folder of the run."""
    from hpo.campaign.smac_state import smac_output_dir, smac_usage

    smac_dir = smac_output_dir(cfg.run_dir, cfg.seed)
    used = smac_usage(smac_dir)
    if used is None:
        return smac_dir
    seconds, submitted = used
    if cfg.walltime is not None and seconds >= cfg.walltime:
        raise UsageError(
            f"--walltime {cfg.walltime:g}: campaign '{cfg.name}' has used {seconds:.0f} s of "
            "walltime; give more to extend it"
        )
    if submitted >= cfg.trials:
        raise UsageError(
            f"--trials {cfg.trials}: campaign '{cfg.name}' has run {submitted} trials; give "
            "more to extend it"
        )
    return smac_dir
