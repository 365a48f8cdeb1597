"""SMAC assembly of a campaign: the scenario, one facade per optimizer, and the baseline trial.

Kept apart from :mod:`hpo.campaign.run` so that the orchestration (run folder, lock, Dask,
progress) reads without SMAC's details. Every facade here uses
:func:`hpo.campaign.smac_state.campaign_optimizer`, so resume, atomic state files and the
no-prompt guarantee hold for each optimizer alike.

The baseline (the space's default configuration at the largest budget) is the first trial
of every optimizer: the intensifiers below yield it before their own first trial. It goes
through SMAC's runner like any trial (Dask, crash cost, walltime, trials.jsonl), SMAC's
runhistory holds it (so the incumbent is compared with it and a resume skips it), and a
multi-fidelity intensifier, which would start the default at the smallest budget, cannot
demote it. Successive halving races new configurations from its first bracket on, never the
baseline again (see :class:`hpo.campaign.intensifiers.FullBrackets`).

Cross-validation (``cv`` = K): the folds are SMAC's *instances* (``fold0`` ...), with a
one-hot instance feature each so the random forest can tell a hard fold from a bad
configuration (SMAC's encoder warns that without features it cannot). SMAC averages a
configuration's cost over the instances it ran on, and:

- ``bo`` and ``random`` (SMAC's ``Intensifier``, ``max_config_calls`` = K) race: a challenger
  runs on one fold, then two, four ..., and is dropped as soon as its mean over the folds it
  shares with the incumbent is worse; only a configuration run on all K can become the
  incumbent. A bad configuration costs a fold or two instead of K.
- successive halving and Hyperband with instances count *folds* as the budget (SMAC 2.4 uses
  the number of instances when the scenario has instances, and then requires integer
  budgets): ``min_budget`` 1, ``max_budget`` K, so a bracket evaluates many configurations on
  one fold and promotes the best ``1/eta`` to more folds. Each trial trains the campaign's
  ``max_budget`` (boosting rounds, or configs per graph at ``fixed_rounds``): budgets in
  rounds and in folds cannot both be SMAC's budget. With K < eta a bracket has one stage:
  every configuration gets all K folds (no racing), so pick K >= eta for the racing.

The baseline is evaluated on all K folds before anything else, so the first incumbent has
every fold and challengers are compared with the default on the folds they share.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from ConfigSpace import Configuration, ConfigurationSpace
from smac import (
    HyperbandFacade,
    HyperparameterOptimizationFacade,
    MultiFidelityFacade,
    RandomFacade,
    Scenario,
)
from smac.callback import Callback
from smac.facade.abstract_facade import AbstractFacade
from smac.initial_design import AbstractInitialDesign
from smac.main.config_selector import ConfigSelector
from smac.main.smbo import SMBO
from smac.runner.dask_runner import DaskParallelRunner
from smac.runner.target_function_runner import TargetFunctionRunner

from hpo.campaign.config import MULTI_FIDELITY
from hpo.campaign.intensifiers import (
    BaselineFirst,
    CampaignHyperband,
    CampaignIntensifier,
    CampaignSuccessiveHalving,
    smac_class,
)
from hpo.campaign.runners import CampaignDaskRunner, CampaignRunner, CampaignTarget
from hpo.campaign.smac_state import campaign_optimizer
from hpo.errors import ConfigError
from hpo.ranking.folds import fold_names
from hpo.runs.folder import SMAC_DIR, jsonable

if TYPE_CHECKING:
    from dask.distributed import Client

    from hpo.campaign.config import CampaignConfig

__all__ = ["MULTI_FIDELITY", "describe_facade", "make_facade", "make_scenario"]


# The facade classes' names are part of SMAC's saved meta: keep them, or older runs of the
# same optimizer can no longer resume.
class _MultiFidelityFacade(MultiFidelityFacade):
    def _get_optimizer(self) -> SMBO:
        return campaign_optimizer(self)


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
    budgets: dict[str, Any] = {
        "min_budget": cfg.min_budget if multi else None,
        "max_budget": cfg.max_budget if multi else None,
    }
    if cfg.cv:  # the folds are instances; successive halving's budget counts them (integers)
        folds = fold_names(cfg.cv)
        budgets = {
            "instances": folds,
            "instance_features": {f: np.eye(cfg.cv)[i].tolist() for i, f in enumerate(folds)},
            "min_budget": 1 if multi else None,
            "max_budget": cfg.cv if multi else None,
        }
    return Scenario(
        configspace=space,
        name=SMAC_DIR,
        output_directory=Path(run_dir),
        deterministic=True,
        crash_cost=float(cfg.crash_cost),
        walltime_limit=np.inf if cfg.walltime is None else float(cfg.walltime),
        n_trials=cfg.trials,
        seed=cfg.seed,
        n_workers=1,
        **budgets,
    )


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
    cfg: CampaignConfig,
    scenario: Scenario,
    facade: type[HyperparameterOptimizationFacade],
    warm: list[Configuration],
) -> dict[str, Any]:
    """Initial design and random interleaving of the model-based facades, from ``cfg``.

    ``n_init`` None keeps SMAC's default design (so runs made before the setting resume);
    a given ``n_init`` is used as is (at most the trial limit), not cut to SMAC's quarter of
    the trials. ``warm`` are the warm-start configurations (:mod:`hpo.campaign.warm_start`);
    where ``n_init`` and they exceed the trial limit, the random part gives way.
    """
    design: dict[str, Any] = (
        {} if cfg.n_init is None else {"n_configs": min(cfg.n_init, cfg.trials), "max_ratio": 1}
    )
    if warm and cfg.n_init is not None:  # the seeds come first within the trial limit
        design["n_configs"] = max(0, min(cfg.n_init, cfg.trials - len(warm)))
    return {
        "initial_design": _initial_design(scenario, facade, warm, **design),
        "random_design": facade.get_random_design(scenario, probability=cfg.random_prob),
    }


def _warm_first(facade: AbstractFacade, warm: list[Configuration]) -> None:
    """Put the warm-start configurations first in the initial design SMAC runs.

    SMAC appends additional configurations after its random or Sobol ones; ``bo`` would then
    spend ``n_init`` full-budget trials before the first known-good one. The config selector
    holds the design as a list it walks in order, skipping what the runhistory already has,
    so reordering it is the same on a resume.
    """
    selector = facade._config_selector
    known = set(warm)
    design = list(selector._initial_design_configs)
    selector._initial_design_configs = [c for c in design if c in known] + [
        c for c in design if c not in known
    ]


def make_facade(
    cfg: CampaignConfig,
    scenario: Scenario,
    target: CampaignTarget,
    *,
    callbacks: list[Callback],
    resume: bool,
    baseline_records: list[dict[str, Any]] | None = None,
    dask_client: Client | None = None,
    warm: list[Configuration] | None = None,
) -> AbstractFacade:
    """Assemble the facade of ``cfg.optimizer``, its first trial the baseline.

    SMAC's logging setup is left alone (``logging_level=False``); a new run overwrites SMAC's
    folder, a resumed one continues from it after :func:`_check_resumable`.
    ``baseline_records`` are the baseline's trials.jsonl records logged already (one per
    fold with cross-validation). ``warm`` are warm-start configurations
    (:mod:`hpo.campaign.warm_start`): extra initial-design configurations, run first.
    """
    seeds = list(warm or [])
    # the target's own arguments, every one: SMAC warns about each it does not pass (it passes
    # ``instance=None`` without folds), and the runner's meta does not list them
    arguments = ["seed", "budget", "data_to_scatter", "instance"]
    runner: TargetFunctionRunner | DaskParallelRunner = CampaignRunner(
        scenario, target, required_arguments=arguments
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
    multi: dict[str, Any] = {"eta": cfg.eta, "incumbent_selection": "highest_budget"}
    intensifier: BaselineFirst
    facade: AbstractFacade
    # without folds SMAC has one instance-seed key and the 3 is inert; with K folds a
    # configuration has K calls, raced by the intensifier
    calls = cfg.cv or 3
    if cfg.optimizer in ("model-hb", "model-sh"):
        kind = CampaignHyperband if cfg.optimizer == "model-hb" else CampaignSuccessiveHalving
        intensifier = kind(scenario, **multi)
        model = _model_settings(cfg, scenario, MultiFidelityFacade, seeds)
        # the forest is fitted on the highest budget with min_trials results (None: BOHB's d + 1)
        d = len(list(scenario.configspace.values()))
        model["config_selector"] = ConfigSelector(
            scenario, min_trials=cfg.min_trials or d + 1, retrain_after=8, max_new_config_tries=16
        )
        facade = _MultiFidelityFacade(scenario, runner, intensifier=intensifier, **model, **common)
    elif cfg.optimizer == "random-hb":
        intensifier = CampaignHyperband(scenario, **multi)
        facade = _HyperbandFacade(
            scenario, runner, intensifier=intensifier, **_free_design(scenario, seeds), **common
        )
    elif cfg.optimizer == "random-sh":
        intensifier = CampaignSuccessiveHalving(scenario, **multi)
        facade = _SuccessiveHalvingFacade(
            scenario, runner, intensifier=intensifier, **_free_design(scenario, seeds), **common
        )
    elif cfg.optimizer == "bo":
        intensifier = CampaignIntensifier(scenario, max_config_calls=calls, max_incumbents=10)
        model = _model_settings(cfg, scenario, HyperparameterOptimizationFacade, seeds)
        facade = _BayesianFacade(scenario, runner, intensifier=intensifier, **model, **common)
    elif cfg.optimizer == "random":
        intensifier = CampaignIntensifier(scenario, max_config_calls=calls, max_incumbents=10)
        facade = _RandomFacade(
            scenario, runner, intensifier=intensifier, **_free_design(scenario, seeds), **common
        )
    else:
        raise ConfigError(f"unknown optimizer '{cfg.optimizer}'")
    # SMAC's budget of the baseline: the largest rounds budget, or none where SMAC has none
    # (single-fidelity, and with folds, where the budget counts instances)
    budget = cfg.max_budget if cfg.optimizer in MULTI_FIDELITY and not cfg.cv else None
    intensifier.set_baseline(
        scenario.configspace.get_default_configuration(), budget, baseline_records or []
    )
    if seeds:
        _warm_first(facade, seeds)
    return facade


def _free_design(scenario: Scenario, warm: list[Configuration]) -> dict[str, Any]:
    """The model-free facades' initial design: SMAC's own (the default configuration),
    plus the warm-start configurations when there are any (none: SMAC's facade builds it,
    as in runs made before warm starts)."""
    if not warm:
        return {}
    return {"initial_design": _initial_design(scenario, RandomFacade, warm)}


def _component(obj: Any) -> dict[str, Any]:
    meta = dict(getattr(obj, "meta", None) or {})
    meta.pop("name", None)
    cls = smac_class(obj)
    return {"class": f"{cls.__module__}.{cls.__qualname__}", **jsonable(meta)}


def describe_facade(facade: AbstractFacade) -> dict[str, Any]:
    """What searched a campaign: SMAC's facade and components with their settings.

    Written to ``campaign.json`` (key ``smac``) once the facade is assembled, so a run says
    exactly which SMAC classes ran; the classes named are SMAC's own (hpo's subclasses only
    add resume safety and the baseline trial).
    """
    cls = smac_class(facade)
    return {
        "facade": f"{cls.__module__}.{cls.__qualname__}",
        "version": facade.meta.get("version"),
        "intensifier": _component(facade._intensifier),
        "initial_design": _component(facade._initial_design),
        "random_design": _component(facade._random_design),
        "model": _component(facade._model),
        "acquisition_function": _component(facade._acquisition_function),
        "config_selector": _component(facade._config_selector),
    }
