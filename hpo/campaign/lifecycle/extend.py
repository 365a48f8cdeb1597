"""``hpo run --resume NAME --walltime X [--trials N]``: extend a campaign, finished or not.

A user who ran a campaign and wants it to run longer can continue it instead of starting a
new one warm-started from it: SMAC's runhistory, surrogate data and brackets carry over, the
run keeps one folder and one incumbent rule over all its trials, and its curve has no dip (a
warm run re-scores the source's best with a new booster seed). On score the two were level
(docs/benchmarks.md#warm-starts-and-extensions). A resume may therefore raise the
campaign's limits (:data:`LIMITS`); every other setting must be the saved one
(:func:`hpo.campaign.lifecycle.preflight.check_saved`).

- :func:`check_extension` refuses limits that shrink (what ran must stay within them) or
  leave SMAC's loop nothing to run; it writes nothing, so a per-subset run checks every
  started subset before it writes its own record.
- :func:`record_extension` then reopens SMAC's saved run, removes the old ``result.json``
  (the run is no longer finished) and records the extension in ``campaign.json`` under
  ``extensions``: when, the limits before and after, and how many ``trials.jsonl`` records
  there were (the finishing phase counts its own trials from there on).
- The campaign's :class:`hpo.campaign.limits.Limits` then hold the new limits: SMAC's
  scenario records those the campaign started with, and its loop stops at the new ones
  (:func:`hpo.campaign.smac.adapter.limit_loop`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from hpo.campaign.config import CampaignConfig, SavedCampaign
from hpo.campaign.limits import Limits
from hpo.errors import UsageError
from hpo.runs.record.campaign_file import CAMPAIGN_FORMAT, Extension, write_campaign_file
from hpo.runs.record.folder import (
    RESULT_FILE,
    TRIALS_FILE,
    read_trial_log,
    read_trials,
)

__all__ = ["LIMITS", "check_extension", "record_extension"]

#: The settings a resume may raise: the campaign's limits.
LIMITS = ("trials", "walltime")


def _shown(value: float | None) -> str:
    return "none" if value is None else format(value, "g")


def check_extension(cfg: CampaignConfig, before: CampaignConfig) -> Path:
    """Refuse the limits of ``cfg`` unless they extend the saved campaign, whose settings are
    ``before``; return its SMAC folder.

    Raises
    ------
    UsageError
        If a limit is lowered, a walltime is given to a campaign that had none, or the new
        limits leave SMAC's loop no trial, so that the extension would only finish: the
        trials run and the trials kept to finish (:attr:`hpo.campaign.limits.Limits.
        reserved_trials`) reach the trial limit, or the walltime used and the finishing
        reserve (:func:`hpo.campaign.lifecycle.finish.reserve_seconds`) reach the walltime.
    """
    from hpo.campaign.lifecycle.finish import reserve_seconds  # SMAC: a resume only
    from hpo.campaign.smac.state import smac_output_dir, smac_usage

    for key in LIMITS:
        was, now = getattr(before, key), getattr(cfg, key)
        if was is None and now is not None:
            raise UsageError(f"--{key}: campaign '{cfg.name}' runs without a {key} limit")
        if was is not None and (now is None or now < was):
            raise UsageError(
                f"--{key} {_shown(now)}: campaign '{cfg.name}' already has {key} {was:g}; a "
                "resumed campaign's limits can only be raised"
            )
    smac_dir = smac_output_dir(cfg.run_dir, cfg.seed)
    used = smac_usage(smac_dir)
    if used is None:
        return smac_dir
    seconds, submitted = used
    trials = read_trial_log(cfg.run_dir / TRIALS_FILE)
    # on a scheduler of unknown size, the smallest reserve: refuse only what surely has no room
    slots = max(1, cfg.finish) if cfg.dask_scheduler else max(1, cfg.workers)
    limits = Limits.of(cfg)  # the new limits (the reserve they keep)
    reserve = reserve_seconds(limits, trials, slots)
    # a limit the user did not raise is named as the one to add, not as given
    if cfg.walltime is not None and seconds >= cfg.walltime - reserve:
        keeps = f" and keeps {reserve:.0f} s to finish" if reserve else ""
        given = f"--walltime {cfg.walltime:g}: " if cfg.walltime != before.walltime else ""
        raise UsageError(
            f"{given}campaign '{cfg.name}' has used {seconds:.0f} s of its walltime "
            f"{cfg.walltime:g}{keeps}; give --walltime above {seconds + reserve:.0f} to extend it"
        )
    kept = limits.reserved_trials  # the last trials of the limit are kept to finish
    if submitted >= cfg.trials - kept:
        # the reserve is named by the setting that makes it, so every number is the user's
        also = (
            f"; the last {kept} of --trials are kept to finish (--finish {cfg.finish}, at most "
            "a third of --trials)"
            if kept
            else ""
        )
        given = f"--trials {cfg.trials}: " if cfg.trials != before.trials else ""
        raise UsageError(
            f"{given}campaign '{cfg.name}' has run {submitted} trials of --trials "
            f"{cfg.trials}{also}; give --trials above {submitted + kept} to extend it"
        )
    return smac_dir


def record_extension(
    cfg: CampaignConfig, saved: SavedCampaign, log: Callable[[str], None]
) -> SavedCampaign:
    """Extend the saved campaign ``saved`` to the limits of ``cfg`` (checked first by
    :func:`check_extension`); return ``saved`` as it now is, its ``config`` being ``cfg``.

    SMAC's saved run is reopened before ``campaign.json`` is written: a kill between the two
    leaves a plain resume of the old limits, which ends after at most one trial (SMAC's loop
    asks one before it checks its budget).
    """
    from hpo.campaign.smac.state import reopen_smac_state

    before = saved.config
    smac_dir = check_extension(cfg, before)
    change = {key: (getattr(before, key), getattr(cfg, key)) for key in LIMITS}
    entry = Extension(
        at=time.time(),
        trials=change["trials"],
        walltime=change["walltime"],
        records=len(read_trials(cfg.run_dir / TRIALS_FILE)),
    )
    # the settings complete (an older format's too), under the name the run started with
    as_saved = dataclasses.replace(cfg, runs_dir=before.runs_dir, name=before.name)
    record = dataclasses.replace(
        saved.record,
        format=CAMPAIGN_FORMAT,
        settings=as_saved.to_dict(),
        extensions=(*saved.record.extensions, entry),
    )
    reopen_smac_state(smac_dir)
    (cfg.run_dir / RESULT_FILE).unlink(missing_ok=True)  # no longer finished
    write_campaign_file(cfg.run_dir, record)
    log(
        f"campaign '{cfg.name}' extended: "
        + ", ".join(f"{k} {_shown(a)} -> {_shown(b)}" for k, (a, b) in change.items() if a != b)
    )
    return SavedCampaign(record, cfg)
