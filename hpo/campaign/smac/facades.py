"""SMAC assembly of a campaign: the scenario, the optimizer's facade, and the baseline trial.

Kept apart from :mod:`hpo.campaign.lifecycle.run` so that the orchestration (run folder, lock, Dask,
progress) reads without SMAC's details. The optimizer's facade comes from its builder in the
table of :mod:`hpo.campaign.optimizers` (the builders: :mod:`hpo.campaign.smac.facade_builders`).

The baseline (the space's default configuration at the largest budget, or with
``--warm-start`` the first source's best: :mod:`hpo.campaign.seeding.warm_start`) is the first trial
of every optimizer: the intensifiers below yield it before their own first trial. It goes
through SMAC's runner like any trial (Dask, crash cost, walltime, trials.jsonl), SMAC's
runhistory holds it (so the incumbent is compared with it and a resume skips it), and a
multi-fidelity intensifier, which would start it at the smallest budget, cannot demote
it. Successive halving races new configurations from its first bracket on, never the
baseline again (see :class:`hpo.campaign.smac.intensifiers.FullBrackets`).

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
every fold and challengers are compared with the baseline on the folds they share.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from ConfigSpace import Configuration, ConfigurationSpace
from smac import Scenario
from smac.callback import Callback
from smac.facade.abstract_facade import AbstractFacade
from smac.runner.dask_runner import DaskParallelRunner
from smac.runner.target_function_runner import TargetFunctionRunner

from hpo.campaign.optimizers import get_optimizer
from hpo.campaign.seeding.warm_start import WarmStart
from hpo.campaign.smac.adapter import facade_parts, order_initial_design
from hpo.campaign.smac.facade_builders import FacadeRequest
from hpo.campaign.smac.intensifiers import BaselineFirst, smac_class
from hpo.campaign.smac.runners import CampaignDaskRunner, CampaignRunner, CampaignTarget
from hpo.errors import naming
from hpo.ranking.folds import fold_names
from hpo.runs.record.folder import SMAC_DIR, jsonable
from hpo.runs.record.trial import Trial

if TYPE_CHECKING:
    from dask.distributed import Client

    from hpo.campaign.config import CampaignConfig
    from hpo.campaign.limits import Limits

__all__ = ["describe_facade", "make_facade", "make_scenario"]


def make_scenario(
    cfg: CampaignConfig, space: ConfigurationSpace, run_dir: Path, limits: Limits
) -> Scenario:
    """Build the SMAC scenario of a campaign; its output goes to :func:`smac_output_dir`.

    Its trials and walltime are those the campaign started with (``limits``'
    ``started_trials``, ``started_walltime``): SMAC sizes its initial design from them and
    compares its saved scenario on a resume. Its loop stops at ``limits``' own
    (:func:`~hpo.campaign.smac.adapter.limit_loop`)."""
    multi = get_optimizer(cfg.optimizer).multi_fidelity
    walltime = limits.started_walltime
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
        walltime_limit=np.inf if walltime is None else float(walltime),
        n_trials=limits.started_trials,
        seed=cfg.seed,
        n_workers=1,
        **budgets,
    )


def _warm_first(facade: AbstractFacade, warm: list[Configuration]) -> None:
    """Put the warm-start configurations (then the baseline's neighbours) first in the
    initial design SMAC runs.

    SMAC appends additional configurations after its random or Sobol ones; ``bo`` would then
    spend ``n_init`` full-budget trials before the first known-good one. The config selector
    holds the design as a list it walks in order, skipping what the runhistory already has,
    so reordering it is the same on a resume.
    """
    known = set(warm)
    order_initial_design(facade, lambda config: config in known)


def make_facade(
    cfg: CampaignConfig,
    scenario: Scenario,
    target: CampaignTarget,
    *,
    callbacks: list[Callback],
    resume: bool,
    baseline_records: list[Trial] | None = None,
    dask_client: Client | None = None,
    warm: WarmStart | None = None,
) -> AbstractFacade:
    """Assemble the facade of ``cfg.optimizer``, its first trial the baseline.

    SMAC's logging setup is left alone (``logging_level=False``); a new run overwrites SMAC's
    folder, a resumed one continues from it after :func:`_check_resumable`.
    ``baseline_records`` are the baseline's trials logged in trials.jsonl already (one per
    fold with cross-validation). ``warm`` is the warm start
    (:mod:`hpo.campaign.seeding.warm_start`): its ``baseline`` replaces the space's default as the
    baseline trial's configuration when it is set, and its ``configs`` are extra
    initial-design configurations, run first, then its ``local``, the baseline's neighbours
    (:func:`hpo.campaign.seeding.local_design.saved_local_design`).

    Raises
    ------
    ConfigError
        If no optimizer of :mod:`hpo.campaign.optimizers` has the name ``cfg.optimizer``.
    TypeError
        If the optimizer's facade has no :class:`BaselineFirst` intensifier.
    StorageError
        If SMAC cannot write its scenario in its folder (a full or read-only disk).
    """
    optimizer = get_optimizer(cfg.optimizer)
    seeds = [] if warm is None else list(warm.configs)
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
    baseline = (warm or WarmStart()).first_trial(scenario.configspace)
    local = [] if warm is None else list(warm.local)
    request = FacadeRequest(
        cfg=cfg, scenario=scenario, runner=runner, common=common, warm=seeds, local=local
    )
    with naming(scenario.output_directory):  # SMAC writes its scenario, naming no file
        facade: AbstractFacade = optimizer.builder()(request)
    intensifier = facade_parts(facade).intensifier
    if not isinstance(intensifier, BaselineFirst):
        raise TypeError(f"optimizer '{optimizer.name}': its intensifier does not run the baseline")
    # SMAC's budget of the baseline: the largest rounds budget, or none where SMAC has none
    # (single-fidelity, and with folds, where the budget counts instances)
    budget = cfg.max_budget if optimizer.multi_fidelity and not cfg.cv else None
    intensifier.set_baseline(baseline, budget, baseline_records or [])
    if seeds or local:
        _warm_first(facade, seeds + local)
    return facade


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
    parts = facade_parts(facade)
    return {
        "facade": f"{cls.__module__}.{cls.__qualname__}",
        "version": facade.meta.get("version"),
        "intensifier": _component(parts.intensifier),
        "initial_design": _component(parts.initial_design),
        "random_design": _component(parts.random_design),
        "model": _component(parts.model),
        "acquisition_function": _component(parts.acquisition_function),
        "config_selector": _component(parts.config_selector),
    }
