"""One SMAC facade per optimizer: the builders :mod:`hpo.campaign.optimizers` names.

Each builder takes a :class:`FacadeRequest` (the campaign's settings, SMAC's scenario and
runner, the settings every facade shares, the warm-start configurations) and returns the
facade with its intensifier, one of :mod:`hpo.campaign.smac.intensifiers` (the baseline first).
Every facade here builds its SMBO with
:func:`hpo.campaign.smac.state.campaign_optimizer`, so resume, atomic state files and the
no-prompt guarantee hold for each optimizer alike. How the optimizers use budgets and
cross-validation folds: :mod:`hpo.campaign.smac.facades`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ConfigSpace import Configuration
from smac import (
    HyperbandFacade,
    HyperparameterOptimizationFacade,
    MultiFidelityFacade,
    RandomFacade,
    Scenario,
)
from smac.facade.abstract_facade import AbstractFacade
from smac.initial_design import AbstractInitialDesign
from smac.main.config_selector import ConfigSelector
from smac.main.smbo import SMBO
from smac.runner.abstract_runner import AbstractRunner

from hpo.campaign.smac.adapter import CampaignFacadeHook
from hpo.campaign.smac.intensifiers import (
    CampaignHyperband,
    CampaignIntensifier,
    CampaignSuccessiveHalving,
)
from hpo.campaign.smac.state import campaign_optimizer

if TYPE_CHECKING:
    from hpo.campaign.config import CampaignConfig

__all__ = [
    "FacadeRequest",
    "build_bo",
    "build_model_hb",
    "build_model_sh",
    "build_random",
    "build_random_hb",
    "build_random_sh",
]


# The facade classes' names are part of SMAC's saved meta: keep them, or older runs of the
# same optimizer can no longer resume.
class _CampaignFacade(CampaignFacadeHook):
    """Every campaign facade's SMBO: atomic state files, and a resume checked first."""

    def campaign_smbo(self) -> SMBO:  # noqa: D102
        return campaign_optimizer(self)


class _MultiFidelityFacade(_CampaignFacade, MultiFidelityFacade):
    pass


class _HyperbandFacade(_CampaignFacade, HyperbandFacade):
    pass


class _SuccessiveHalvingFacade(_CampaignFacade, HyperbandFacade):
    pass


class _BayesianFacade(_CampaignFacade, HyperparameterOptimizationFacade):
    pass


class _RandomFacade(_CampaignFacade, RandomFacade):
    pass


@dataclass(frozen=True)
class FacadeRequest:
    """What a facade builder needs.

    ``common`` are the facade arguments every optimizer shares (callbacks, logging,
    overwrite); ``warm`` the warm-start configurations (:mod:`hpo.campaign.seeding.warm_start`);
    ``local`` the neighbours of the baseline that take the place of ``n_local`` random
    initial configurations of the model-based optimizers (:mod:`hpo.campaign.seeding.local_design`).
    """

    cfg: CampaignConfig
    scenario: Scenario
    runner: AbstractRunner
    common: dict[str, Any]
    warm: list[Configuration]
    local: list[Configuration] = field(default_factory=list)

    @property
    def brackets(self) -> dict[str, Any]:
        """Settings of the successive-halving and Hyperband intensifiers.

        The incumbent must have been validated at the largest budget: SMAC's default
        compares each config at its own highest budget, so a lucky config seen only at the
        smallest budget could win, and the exported model (largest budget) would not be the
        one scored.
        """
        return {"eta": self.cfg.eta, "incumbent_selection": "highest_budget"}

    @property
    def config_calls(self) -> int:
        """Calls per configuration of SMAC's ``Intensifier``: without folds SMAC has one
        instance-seed key and the 3 is inert; with K folds a configuration has K calls,
        raced by the intensifier."""
        return self.cfg.cv or 3


def _initial_design(
    scenario: Scenario, facade: type[AbstractFacade], warm: list[Configuration], **design: Any
) -> AbstractInitialDesign:
    """The facade's initial design, with the warm-start configurations as additional ones.

    SMAC refuses a design larger than the trial limit, so the warm configurations are cut
    to what the limit leaves (the best of each source come first in ``warm``).
    """
    plain = facade.get_initial_design(scenario, **design)
    if not warm:
        return plain
    room = max(0, int(scenario.n_trials) - int(plain.meta["n_configs"]))
    extra = list(warm[:room])
    return facade.get_initial_design(scenario, **design, additional_configs=extra)  # type: ignore[call-arg]


def _model_settings(
    req: FacadeRequest, facade: type[HyperparameterOptimizationFacade]
) -> dict[str, Any]:
    """Initial design and random interleaving of the model-based facades, from ``req.cfg``.

    ``n_init`` None keeps SMAC's default design (so runs made before the setting resume);
    a given ``n_init`` is used as is (at most the trial limit), not cut to SMAC's quarter of
    the trials. The neighbours of the baseline (``req.local``) are part of ``n_init`` (on top
    of SMAC's design when ``n_init`` is None); the warm-start configurations come on top.
    Where they exceed the trial limit, the random part gives way.
    """
    cfg, warm, local = req.cfg, req.warm, req.local
    design: dict[str, Any] = {}
    if cfg.n_init is not None:  # the seeds come first within the trial limit
        random = min(cfg.n_init - len(local), int(req.scenario.n_trials) - len(warm) - len(local))
        design = {"n_configs": max(0, random), "max_ratio": 1}
    return {
        "initial_design": _initial_design(req.scenario, facade, warm + local, **design),
        "random_design": facade.get_random_design(req.scenario, probability=cfg.random_prob),
    }


def _free_design(req: FacadeRequest) -> dict[str, Any]:
    """The model-free facades' initial design: SMAC's own (the default configuration),
    plus the warm-start configurations when there are any (none: SMAC's facade builds it,
    as in runs made before warm starts)."""
    if not req.warm:
        return {}
    return {"initial_design": _initial_design(req.scenario, RandomFacade, req.warm)}


def _model_brackets(
    req: FacadeRequest, kind: type[CampaignHyperband | CampaignSuccessiveHalving]
) -> AbstractFacade:
    scenario = req.scenario
    model = _model_settings(req, MultiFidelityFacade)
    # the forest is fitted on the highest budget with min_trials results (None: BOHB's d + 1)
    d = len(list(scenario.configspace.values()))
    model["config_selector"] = ConfigSelector(
        scenario, min_trials=req.cfg.min_trials or d + 1, retrain_after=8, max_new_config_tries=16
    )
    intensifier = kind(scenario, **req.brackets)
    return _MultiFidelityFacade(
        scenario, req.runner, intensifier=intensifier, **model, **req.common
    )


def build_model_hb(req: FacadeRequest) -> AbstractFacade:
    """``model-hb``: SMAC's MultiFidelityFacade (random-forest surrogate) on Hyperband."""
    return _model_brackets(req, CampaignHyperband)


def build_model_sh(req: FacadeRequest) -> AbstractFacade:
    """``model-sh``: the surrogate on one successive-halving bracket."""
    return _model_brackets(req, CampaignSuccessiveHalving)


def build_random_hb(req: FacadeRequest) -> AbstractFacade:
    """``random-hb``: model-free Hyperband (SMAC's HyperbandFacade)."""
    intensifier = CampaignHyperband(req.scenario, **req.brackets)
    return _HyperbandFacade(
        req.scenario, req.runner, intensifier=intensifier, **_free_design(req), **req.common
    )


def build_random_sh(req: FacadeRequest) -> AbstractFacade:
    """``random-sh`` (old runs only): random configurations raced by successive halving."""
    intensifier = CampaignSuccessiveHalving(req.scenario, **req.brackets)
    return _SuccessiveHalvingFacade(
        req.scenario, req.runner, intensifier=intensifier, **_free_design(req), **req.common
    )


def build_bo(req: FacadeRequest) -> AbstractFacade:
    """``bo``: SMAC's HyperparameterOptimizationFacade, every trial at the largest budget."""
    intensifier = CampaignIntensifier(
        req.scenario, max_config_calls=req.config_calls, max_incumbents=10
    )
    model = _model_settings(req, HyperparameterOptimizationFacade)
    return _BayesianFacade(req.scenario, req.runner, intensifier=intensifier, **model, **req.common)


def build_random(req: FacadeRequest) -> AbstractFacade:
    """``random``: SMAC's RandomFacade, every trial at the largest budget."""
    intensifier = CampaignIntensifier(
        req.scenario, max_config_calls=req.config_calls, max_incumbents=10
    )
    return _RandomFacade(
        req.scenario, req.runner, intensifier=intensifier, **_free_design(req), **req.common
    )
