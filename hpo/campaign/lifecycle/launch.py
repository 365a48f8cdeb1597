"""``hpo run``: one entry for every campaign, with or without subsets.

:func:`run_campaign` reads the run's kind from its settings and hands it to the module that
runs it: :func:`hpo.campaign.lifecycle.run.run_single_campaign` for one campaign, or
:func:`hpo.campaign.lifecycle.subsets.run_subsets`, a plan of such campaigns. Dispatching here,
above both, lets the per-subset plan call single campaigns directly, with no call back up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from hpo.campaign.config import CampaignConfig
from hpo.campaign.lifecycle.preflight import Runtime, Start
from hpo.campaign.lifecycle.run import run_single_campaign
from hpo.campaign.lifecycle.subsets import SubsetsResult, run_subsets
from hpo.campaign.result import CampaignResult
from hpo.campaign.seeding.warm_start import resolve_sources
from hpo.errors import UsageError
from hpo.runs.views.nested import RunKind, run_kind

__all__ = ["run_campaign"]

#: Who runs each kind of run (:func:`hpo.runs.views.nested.run_kind` of the setting ``per``).
Runner = Callable[[CampaignConfig, Start, Runtime], CampaignResult | SubsetsResult]
RUNNERS: Mapping[RunKind, Runner] = {"single": run_single_campaign, "subsets": run_subsets}


def run_campaign(
    cfg: CampaignConfig,
    *,
    objective: Callable[..., Any] | None = None,
    data_to_scatter: dict[str, Any] | None = None,
    quiet: bool = False,
    resume: bool = False,
    overwrite: bool = False,
    console: Console | None = None,
    warm_start: Sequence[str | Path] = (),
) -> CampaignResult | SubsetsResult:
    """Run (or resume) the campaign of ``cfg`` in ``cfg.run_dir`` and return its outcome.

    With ``cfg.per`` other than ``none`` the run is one campaign per subset, run one after
    the other (:func:`~hpo.campaign.lifecycle.subsets.run_subsets`, a
    :class:`~hpo.campaign.lifecycle.subsets.SubsetsResult`); otherwise one campaign (a
    :class:`~hpo.campaign.result.CampaignResult`).

    Parameters
    ----------
    cfg
        The campaign settings.
    objective, data_to_scatter, quiet, console
        What serves every campaign of the run (:class:`~hpo.campaign.lifecycle.preflight.Runtime`).
    resume
        Continue the run of the same name; its settings and data must be equal, but for
        its limits (``trials``, ``walltime``), which may be raised to extend it, finished or
        not (:mod:`hpo.campaign.lifecycle.extend`).
    overwrite
        Delete an existing run of the same name first (never one a live process holds).
    console
        Where to print; a new ``rich.console.Console`` by default.
    warm_start
        Earlier runs (names under ``cfg.runs_dir`` or folders) whose best configurations a
        new campaign runs first (:mod:`hpo.campaign.seeding.warm_start`; a resume never re-seeds).

    Raises
    ------
    UsageError
        If the run exists (and neither ``resume`` nor ``overwrite``), is held by a live
        process, or there is nothing to resume; or if a resume lowers a limit, or raises
        one without leaving room for a trial.
    ConfigError
        If a resumed run's settings, data or SMAC state differ from the saved ones.
    """
    if warm_start and resume:  # before the sources are looked for
        raise UsageError("--warm-start seeds a new campaign; a resumed one keeps its seeds")
    start = Start(
        resume=resume,
        overwrite=overwrite,
        warm_start=tuple(resolve_sources(warm_start, cfg.runs_dir)),
    )
    runner = RUNNERS[run_kind(cfg.per)]
    runtime = Runtime(
        objective=objective, data_to_scatter=data_to_scatter, quiet=quiet, console=console
    )
    return runner(cfg, start, runtime)
