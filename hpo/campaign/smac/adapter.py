"""Every use of SMAC's private (underscore) names, in one place.

hpo builds on SMAC 2.4 where SMAC offers no public way in: the facade's components, the
config selector's initial design, the SMBO's state, successive halving's racing state, and
the runners' queues. Each private name is read or overridden here only, and
:data:`PRIVATE_NAMES` lists them; ``tests/campaign/smac/test_adapter.py`` checks each on the
installed SMAC (it exists, and where cheap it still means what hpo assumes), so a SMAC upgrade
that renames or changes one fails in one place instead of mid-campaign.

The other campaign modules use the accessor functions and the hook classes below, whose
public hooks (:meth:`CampaignFacadeHook.campaign_smbo`, :meth:`PromotionHook.promote`,
:meth:`PendingTrialsHook.collect_finished`) stand in for the private methods SMAC calls.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from ConfigSpace import Configuration
from smac.constants import MAXINT
from smac.facade.abstract_facade import AbstractFacade
from smac.intensifier.abstract_intensifier import AbstractIntensifier
from smac.intensifier.successive_halving import SuccessiveHalving
from smac.main.config_selector import ConfigSelector
from smac.main.smbo import SMBO
from smac.runhistory import TrialInfo, TrialValue
from smac.runhistory.dataclasses import InstanceSeedBudgetKey
from smac.runner.abstract_runner import AbstractRunner
from smac.runner.dask_runner import DaskParallelRunner
from smac.runner.target_function_runner import TargetFunctionRunner

__all__ = [
    "LimitedSMBO",
    "limit_loop",
    "PRIVATE_NAMES",
    "CampaignFacadeHook",
    "FacadeParts",
    "PendingTrialsHook",
    "PromotionHook",
    "facade_parts",
    "first_trial_seed",
    "next_order_seed",
    "order_initial_design",
    "refresh_intensifier",
    "runner_crash_cost",
    "runner_target",
    "runner_worker_slots",
    "scatter_keys",
    "scatter_to_workers",
    "scattered_names",
    "smbo_configspace",
    "set_smbo_finished",
    "smbo_finished",
    "smbo_runner",
    "smbo_scenario",
    "tell_finished_trials",
    "stage_sizes",
    "tracker",
]

#: ``(SMAC class, private name)`` of every private name this module uses. Attributes set in
#: ``__init__`` are checked on an instance, methods on the class.
PRIVATE_NAMES: tuple[tuple[type, str], ...] = (
    (AbstractFacade, "_get_optimizer"),
    (AbstractFacade, "_scenario"),
    (AbstractFacade, "_runner"),
    (AbstractFacade, "_runhistory"),
    (AbstractFacade, "_intensifier"),
    (AbstractFacade, "_overwrite"),
    (AbstractFacade, "_initial_design"),
    (AbstractFacade, "_random_design"),
    (AbstractFacade, "_model"),
    (AbstractFacade, "_acquisition_function"),
    (AbstractFacade, "_config_selector"),
    (ConfigSelector, "_initial_design_configs"),
    (SMBO, "_scenario"),
    (SMBO, "_finished"),
    (SMBO, "_runner"),
    (SMBO, "_configspace"),
    (SMBO, "_add_results"),
    (AbstractIntensifier, "__post_init__"),
    (SuccessiveHalving, "_tracker"),
    (SuccessiveHalving, "_n_configs_in_stage"),
    (SuccessiveHalving, "_get_next_order_seed"),
    (SuccessiveHalving, "_get_best_configs"),
    (TargetFunctionRunner, "_target_function"),
    (AbstractRunner, "_crash_cost"),
    (DaskParallelRunner, "_client"),
    (DaskParallelRunner, "_pending_trials"),
    (DaskParallelRunner, "_results_queue"),
    (DaskParallelRunner, "_process_pending_trials"),
)


@dataclass(frozen=True)
class FacadeParts:
    """The components a SMAC facade keeps in private attributes."""

    scenario: Any
    runner: AbstractRunner | None
    runhistory: Any
    intensifier: AbstractIntensifier
    overwrite: bool
    initial_design: Any
    random_design: Any
    model: Any
    acquisition_function: Any
    config_selector: ConfigSelector


def facade_parts(facade: AbstractFacade) -> FacadeParts:
    """The components of ``facade`` (set before SMAC calls ``_get_optimizer``)."""
    # each part is the facade's attribute of the same name with a leading underscore
    return FacadeParts(**{f.name: getattr(facade, f"_{f.name}") for f in fields(FacadeParts)})


class CampaignFacadeHook(AbstractFacade):
    """Facade mixin: SMAC's ``_get_optimizer`` builds the SMBO with :meth:`campaign_smbo`.

    Put it before the SMAC facade in the bases; the subclass's own name stays what SMAC's
    saved meta records.
    """

    def campaign_smbo(self) -> SMBO:
        """The SMBO that runs this facade's loop."""
        raise NotImplementedError

    def _get_optimizer(self) -> SMBO:
        return self.campaign_smbo()


def order_initial_design(facade: AbstractFacade, first: Callable[[Configuration], bool]) -> None:
    """Move the initial-design configurations for which ``first`` holds to the front.

    The config selector walks its design list in order, skipping what the runhistory holds.
    """
    selector = facade._config_selector
    design = list(selector._initial_design_configs)
    selector._initial_design_configs = [c for c in design if first(c)] + [
        c for c in design if not first(c)
    ]


def smbo_scenario(smbo: SMBO) -> Any:
    """The scenario of ``smbo`` (its output directory is where the state files go)."""
    return smbo._scenario


def smbo_finished(smbo: SMBO) -> bool:
    """Whether ``smbo``'s loop has finished (saved in ``optimization.json``)."""
    return bool(smbo._finished)


def set_smbo_finished(smbo: SMBO, finished: bool) -> None:
    """Mark ``smbo``'s campaign finished or not; saved with its state at the next save.

    SMAC sets the flag itself when its loop used up the budget, after its last save; the
    campaign decides when it is over (after its finishing phase), so it sets it here.
    """
    smbo._finished = finished


def smbo_runner(smbo: SMBO) -> AbstractRunner | None:
    """The runner ``smbo`` submits trials to (a Dask runner with several workers)."""
    return smbo._runner


def smbo_configspace(smbo: SMBO) -> Any:
    """The configuration space ``smbo`` searches (to rebuild a logged configuration)."""
    return smbo._configspace


def tell_finished_trials(smbo: SMBO) -> None:
    """Collect the runner's finished trials and tell them to ``smbo`` as its loop does: the
    intensifier's update, the callbacks (hpo's trial log) and SMAC's state saved."""
    smbo._add_results()


def runner_worker_slots(runner: AbstractRunner | None) -> int:
    """How many trials ``runner`` runs at once: the Dask workers' threads, else 1."""
    if isinstance(runner, DaskParallelRunner):
        return max(1, sum(runner._client.nthreads().values()))
    return 1


#: what separates a scattered value's name from the token that makes its Dask key unique
_SCATTER_TOKEN = "@"


def scatter_keys(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` under Dask keys of its own: each name followed by one random token.

    ``Client.scatter`` of a dict uses the dict's keys as the cluster's keys, verbatim. A
    campaign that scatters ``tables`` again (its finishing phase after SMAC's loop, or the
    next subset on the same client) would reuse a key whose release may still be on its way
    to the scheduler, and the new trials then fail with "lost dependencies"; two campaigns on
    one scheduler would even share a key for different tables. The objective gets the plain
    names back from :func:`scattered_names`.
    """
    token = uuid.uuid4().hex
    return {f"{name}{_SCATTER_TOKEN}{token}": value for name, value in data.items()}


def scattered_names(data: dict[str, Any]) -> dict[str, Any]:
    """The values :func:`scatter_keys` keyed, under their plain names again."""
    return {name.split(_SCATTER_TOKEN, 1)[0]: value for name, value in data.items()}


def scatter_to_workers(runner: AbstractRunner | None, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` sent once to every Dask worker of ``runner``, as SMAC's loop scatters it
    (under keys of its own, :func:`scatter_keys`); empty for a runner without workers (the
    objective then holds its data)."""
    if isinstance(runner, DaskParallelRunner) and data:
        return {"data_to_scatter": runner._client.scatter(scatter_keys(data), broadcast=True)}
    return {}


def first_trial_seed(scenario_seed: int) -> int:
    """The seed SMAC 2.4 gives the trials of a deterministic scenario seeded ``scenario_seed``.

    The intensifier draws it first from its ``RandomState(scenario seed)``
    (``get_instance_seed_keys_of_interest``); computed here so that work keyed by the trials'
    seed (:mod:`hpo.campaign.lifecycle.prebuild`) can be done before SMAC exists.
    ``tests/campaign/smac/test_adapter.py`` compares it with a facade's own seed.
    """
    return int(np.random.RandomState(scenario_seed).randint(low=0, high=MAXINT, size=1)[0])


def refresh_intensifier(intensifier: AbstractIntensifier) -> None:
    """Re-read the runhistory's seeds and instances and the incumbents, as SMAC's ``__iter__``
    does on entry (needed before yielding trials ahead of SMAC's own loop)."""
    intensifier.__post_init__()


def tracker(intensifier: SuccessiveHalving) -> Any:
    """Successive halving's racing state: ``{(bracket, stage): [(order seed, configs)]}``."""
    return intensifier._tracker


def stage_sizes(intensifier: SuccessiveHalving) -> Any:
    """``[bracket][stage]`` -> how many configurations the stage races."""
    return intensifier._n_configs_in_stage


def next_order_seed(intensifier: SuccessiveHalving) -> int | None:
    """The seed SMAC gives a new group of the tracker."""
    return intensifier._get_next_order_seed()


class PromotionHook(SuccessiveHalving):
    """Successive-halving mixin: SMAC's ``_get_best_configs`` asks :meth:`promote`."""

    #: The configurations of a finished group that go on to the next stage: the subclass's
    #: ``promote(configs, bracket, stage, from_keys)``.
    promote: Callable[
        [list[Configuration], int, int, list[InstanceSeedBudgetKey]], list[Configuration]
    ]

    def _get_best_configs(self, *args: Any) -> list[Configuration]:
        # SMAC calls it with (configs, bracket, stage, from_keys), as promote takes them
        return self.promote(*args)


def runner_target(runner: TargetFunctionRunner) -> Any:
    """The target function ``runner`` calls."""
    return runner._target_function


def runner_crash_cost(runner: AbstractRunner) -> float | list[float]:
    """The cost SMAC records for a crashed trial (the scenario's ``crash_cost``)."""
    return runner._crash_cost


class PendingTrialsHook(DaskParallelRunner):
    """Dask-runner mixin: SMAC's ``_process_pending_trials`` calls :meth:`collect_finished`,
    which reads :meth:`pending` and hands results to :meth:`put_result`."""

    def pending(self) -> list[Any]:
        """The futures of the trials submitted and not collected yet (SMAC's own list)."""
        return self._pending_trials

    def put_result(self, info: TrialInfo, value: TrialValue) -> None:
        """Queue a finished trial for SMAC's ``iter_results``."""
        self._results_queue.append((info, value))

    def collect_finished(self) -> None:
        """Move finished trials from :meth:`pending` to the results (SMAC's own rule)."""
        DaskParallelRunner._process_pending_trials(self)

    def _process_pending_trials(self) -> None:
        self.collect_finished()


class LimitedSMBO(SMBO):
    """An SMBO whose loop stops at the campaign's own limits (:class:`hpo.campaign.limits.
    Limits`, given by :func:`limit_loop`), not at its scenario's.

    The scenario records the limits the campaign started with (SMAC sizes its initial design
    from ``n_trials`` and refuses to resume a run whose saved scenario differs), so an
    extended campaign keeps the design and the SMAC folder it ran with; the loop's stopping
    rule (:attr:`SMBO.remaining_trials`, :attr:`SMBO.remaining_walltime`) reads the limits
    hpo decided. Without them, the scenario's.
    """

    #: (trials, walltime in seconds) the loop runs to; ``None``: the scenario's.
    loop_limits: tuple[int, float] | None = None

    @property
    def remaining_walltime(self) -> float:  # noqa: D102
        if self.loop_limits is None:
            return super().remaining_walltime
        assert self._start_time is not None
        return self.loop_limits[1] - (time.time() - self._start_time)

    @property
    def remaining_trials(self) -> int:  # noqa: D102
        if self.loop_limits is None:
            return super().remaining_trials
        return self.loop_limits[0] - self.runhistory.submitted


def limit_loop(facade: AbstractFacade, trials: int, walltime: float | None) -> None:
    """Make SMAC's loop stop at ``trials`` and ``walltime`` (seconds, ``None``: none): the
    campaign's :class:`~hpo.campaign.limits.Limits`, raised by an extension. The facade's
    optimizer is a :class:`LimitedSMBO`; its scenario is left as the campaign started."""
    smbo = facade.optimizer
    if not isinstance(smbo, LimitedSMBO):
        raise TypeError(f"expected a campaign's SMBO, got {type(smbo).__name__}")
    smbo.loop_limits = (int(trials), math.inf if walltime is None else float(walltime))
