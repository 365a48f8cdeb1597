"""SMAC assembly of a campaign: the scenario and one facade per optimizer.

Kept apart from :mod:`hpo.campaign.run` so that the orchestration (run folder, lock, Dask,
progress) reads without SMAC's details. Every facade here uses
:func:`hpo.campaign.smac_state.campaign_optimizer`, so resume, atomic state files and the
no-prompt guarantee hold for each optimizer alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from ConfigSpace import ConfigurationSpace
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
from smac.runner.dask_runner import DaskParallelRunner
from smac.runner.target_function_runner import TargetFunctionRunner

from hpo.campaign.runners import CampaignDaskRunner, CampaignRunner, CampaignTarget
from hpo.campaign.smac_state import campaign_optimizer
from hpo.errors import ConfigError
from hpo.runs.folder import SMAC_DIR

if TYPE_CHECKING:
    from dask.distributed import Client

    from hpo.campaign.config import CampaignConfig

__all__ = ["MULTI_FIDELITY", "make_facade", "make_scenario"]

MULTI_FIDELITY = ("hyperband", "sh")


class _HyperbandFacade(HyperbandFacade):
    def _get_optimizer(self) -> SMBO:
        return campaign_optimizer(self)


class _SuccessiveHalvingFacade(HyperbandFacade):
    def _get_optimizer(self) -> SMBO:
        return campaign_optimizer(self)


class _BayesianFacade(HyperparameterOptimizationFacade):
    def _get_optimizer(self) -> SMBO:
        return campaign_optimizer(self)


class _RandomFacade(RandomFacade):
    def _get_optimizer(self) -> SMBO:
        return campaign_optimizer(self)


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
    runner: TargetFunctionRunner | DaskParallelRunner = CampaignRunner(
        scenario, target, required_arguments=["seed", "budget", "data_to_scatter"]
    )
    if dask_client is not None:
        runner = CampaignDaskRunner(runner, dask_client)
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
