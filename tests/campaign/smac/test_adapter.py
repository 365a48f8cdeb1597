"""Each SMAC private name hpo relies on (:mod:`hpo.campaign.smac.adapter`), on the installed SMAC.

A SMAC upgrade that renames or changes one fails here, one test per name, instead of in the
middle of a campaign. Where cheap, a behavioural check shows the name still means what the
adapter assumes.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from ConfigSpace import Configuration, ConfigurationSpace, Float
from smac import HyperbandFacade, HyperparameterOptimizationFacade, RandomFacade, Scenario
from smac.facade.abstract_facade import AbstractFacade
from smac.intensifier.abstract_intensifier import AbstractIntensifier
from smac.intensifier.successive_halving import SuccessiveHalving
from smac.main.config_selector import ConfigSelector
from smac.main.smbo import SMBO
from smac.runhistory import StatusType, TrialInfo, TrialValue
from smac.runner.abstract_runner import AbstractRunner
from smac.runner.dask_runner import DaskParallelRunner
from smac.runner.target_function_runner import TargetFunctionRunner

from hpo.campaign.smac import adapter


def _target(config: Configuration, seed: int = 0, budget: float | None = None) -> float:
    return float(config["x"]) ** 2


class _Client:
    """Enough of a Dask client for the runner's bookkeeping: one worker thread."""

    def nthreads(self) -> dict[str, int]:
        return {"worker": 1}


class _Done:
    """A finished Dask future."""

    def __init__(self, result: Any) -> None:
        self._result = result

    def done(self) -> bool:
        return True

    def result(self) -> Any:
        return self._result


class _Collecting(adapter.PendingTrialsHook):
    collected = 0

    def collect_finished(self) -> None:
        self.collected += 1
        super().collect_finished()


@pytest.fixture(scope="module")
def smac_objects(tmp_path_factory: pytest.TempPathFactory) -> dict[type, Any]:
    """One instance of every SMAC class whose private names the adapter uses."""
    space = ConfigurationSpace(seed=0)
    space.add(Float("x", (-1.0, 1.0), default=0.5))
    scenario = Scenario(
        space,
        output_directory=Path(tmp_path_factory.mktemp("smac")),
        n_trials=10,
        min_budget=1,
        max_budget=9,
        seed=0,
    )
    facade = HyperbandFacade(
        scenario, _target, logging_level=False, overwrite=True, intensifier=None
    )
    adapter.refresh_intensifier(facade.intensifier)  # SMAC sets the stage sizes here
    runner = TargetFunctionRunner(scenario, _target, required_arguments=["seed", "budget"])
    return {
        AbstractFacade: facade,
        ConfigSelector: adapter.facade_parts(facade).config_selector,
        SMBO: facade.optimizer,
        AbstractIntensifier: facade.intensifier,
        SuccessiveHalving: facade.intensifier,
        TargetFunctionRunner: runner,
        AbstractRunner: runner,
        DaskParallelRunner: _Collecting(runner, dask_client=_Client()),  # type: ignore[arg-type]
    }


@pytest.mark.parametrize(
    ("cls", "name"),
    adapter.PRIVATE_NAMES,
    ids=[f"{c.__name__}.{n}" for c, n in adapter.PRIVATE_NAMES],
)
def test_smac_still_has_the_private_name(
    smac_objects: dict[type, Any], cls: type, name: str
) -> None:
    if name in vars(cls) or any(name in vars(base) for base in cls.__mro__):
        assert callable(getattr(cls, name)), f"{cls.__name__}.{name} is no longer a method"
        return
    instance = smac_objects[cls]
    assert isinstance(instance, cls)
    assert hasattr(instance, name), f"SMAC's {cls.__name__} no longer sets {name}"


# the private methods hpo overrides or calls: SMAC calls them with these parameters
@pytest.mark.parametrize(
    ("method", "parameters"),
    [
        (AbstractFacade._get_optimizer, ["self"]),
        (SuccessiveHalving._get_best_configs, ["self", "configs", "bracket", "stage", "from_keys"]),
        (SuccessiveHalving._get_next_order_seed, ["self"]),
        (AbstractIntensifier.__post_init__, ["self"]),
        (DaskParallelRunner._process_pending_trials, ["self"]),
    ],
    ids=lambda v: getattr(v, "__qualname__", ""),
)
def test_smac_private_methods_keep_their_signature(method: Any, parameters: list[str]) -> None:
    assert list(inspect.signature(method).parameters) == parameters


def test_smac_still_calls_the_overridden_methods() -> None:
    """The hooks work only while SMAC's own code calls these names."""
    assert "self._get_optimizer()" in inspect.getsource(AbstractFacade.__init__)
    assert "self._get_best_configs(" in inspect.getsource(SuccessiveHalving.__iter__)
    assert "self._process_pending_trials()" in inspect.getsource(DaskParallelRunner.iter_results)


def test_facade_parts_are_the_facades_components(smac_objects: dict[type, Any]) -> None:
    facade = smac_objects[AbstractFacade]
    parts = adapter.facade_parts(facade)
    assert parts.scenario is facade.scenario
    assert parts.intensifier is facade.intensifier
    assert parts.runhistory is facade.runhistory
    assert parts.overwrite is True
    assert isinstance(parts.runner, TargetFunctionRunner)
    for component in (parts.initial_design, parts.random_design, parts.model):
        assert type(component).__module__.startswith("smac.")
    assert isinstance(parts.config_selector, ConfigSelector)


def test_order_initial_design_decides_what_smac_asks_first(tmp_path: Path) -> None:
    space = ConfigurationSpace(seed=0)
    space.add(Float("x", (-1.0, 1.0), default=0.5))
    scenario = Scenario(space, output_directory=tmp_path, n_trials=10, seed=0)
    design = HyperparameterOptimizationFacade.get_initial_design(scenario, n_configs=4)
    facade = RandomFacade(
        scenario, _target, logging_level=False, overwrite=True, initial_design=design
    )
    facade.ask()  # SMAC fills its design list on the first ask
    last = adapter.facade_parts(facade).config_selector._initial_design_configs[-1]
    adapter.order_initial_design(facade, lambda config: config == last)
    assert facade.ask().config == last


def test_smbo_state(smac_objects: dict[type, Any]) -> None:
    smbo = smac_objects[SMBO]
    facade = smac_objects[AbstractFacade]
    assert adapter.smbo_scenario(smbo) is facade.scenario
    assert adapter.smbo_finished(smbo) is False
    assert adapter.smbo_runner(smbo) is adapter.facade_parts(facade).runner
    assert adapter.smbo_configspace(smbo) is facade.scenario.configspace


def test_a_trial_told_by_hand_reaches_smacs_runhistory(tmp_path: Path) -> None:
    """The finishing phase submits a trial to the facade's runner itself and has SMAC collect
    it (``SMBO._add_results``), as SMAC's loop does after each wait."""
    space = ConfigurationSpace(seed=0)
    space.add(Float("x", (-1.0, 1.0), default=0.5))
    scenario = Scenario(space, output_directory=tmp_path, n_trials=5, seed=0)
    facade = RandomFacade(scenario, _target, logging_level=False, overwrite=True)
    smbo = facade.optimizer
    info = TrialInfo(space.get_default_configuration(), seed=0)
    smbo.runhistory.add_running_trial(info)
    runner = adapter.smbo_runner(smbo)
    assert runner is not None
    runner.submit_trial(info)
    adapter.tell_finished_trials(smbo)
    assert smbo.runhistory.get_cost(info.config) == pytest.approx(0.25)
    assert adapter.runner_worker_slots(runner) == 1
    assert adapter.scatter_to_workers(runner, {"a": 1}) == {}


def test_dask_runner_slots_are_its_workers_threads(smac_objects: dict[type, Any]) -> None:
    assert adapter.runner_worker_slots(smac_objects[DaskParallelRunner]) == 1


def test_successive_halving_racing_state(smac_objects: dict[type, Any]) -> None:
    intensifier = smac_objects[SuccessiveHalving]
    adapter.refresh_intensifier(intensifier)
    assert len(adapter.tracker(intensifier)) == 0  # nothing raced yet
    sizes = adapter.stage_sizes(intensifier)
    assert sizes[0][0] > sizes[0][-1] >= 1  # bracket 0 narrows stage by stage
    seed = adapter.next_order_seed(intensifier)
    assert seed is None or isinstance(seed, int)


def test_runner_target_and_crash_cost(smac_objects: dict[type, Any]) -> None:
    runner = smac_objects[TargetFunctionRunner]
    assert adapter.runner_target(runner) is _target
    assert (
        adapter.runner_crash_cost(runner)
        == adapter.facade_parts(smac_objects[AbstractFacade]).scenario.crash_cost
    )


def test_pending_trials_reach_smacs_results(smac_objects: dict[type, Any]) -> None:
    runner = smac_objects[DaskParallelRunner]
    info = TrialInfo(
        config=smac_objects[AbstractFacade].scenario.configspace.get_default_configuration()
    )
    value = TrialValue(cost=0.25, status=StatusType.SUCCESS)
    runner.pending().append(_Done((info, value)))
    assert list(runner.iter_results()) == [(info, value)]  # through the hook
    assert runner.collected == 1
    assert runner.pending() == []
    runner.put_result(info, value)
    assert list(runner.iter_results()) == [(info, value)]


@pytest.mark.parametrize("seed", [0, 7])
def test_first_trial_seed_is_the_seed_smac_gives_trials(tmp_path: Path, seed: int) -> None:
    space = ConfigurationSpace(seed=0)
    space.add(Float("x", (-1.0, 1.0), default=0.5))
    scenario = Scenario(
        space,
        output_directory=tmp_path,
        deterministic=True,
        n_trials=4,
        min_budget=1,
        max_budget=9,
        seed=seed,
    )
    facade = HyperbandFacade(
        scenario, _target, logging_level=False, overwrite=True, intensifier=None
    )
    first = facade.ask()
    assert first.seed == adapter.first_trial_seed(seed)
    # another scenario seed gives another trial seed: the function reads its argument
    assert adapter.first_trial_seed(seed) != adapter.first_trial_seed(seed + 1)


def test_scatter_keys_are_fresh_and_read_back_under_their_names() -> None:
    data = {"tables": 1, "datasets": 2}
    first, second = adapter.scatter_keys(data), adapter.scatter_keys(data)
    assert set(first).isdisjoint(second)  # a scatter never reuses a key
    assert adapter.scattered_names(first) == data == adapter.scattered_names(second)
    assert adapter.scattered_names(data) == data  # plain names stay as they are


def _rows(data_to_scatter: dict[str, Any]) -> int:
    return int(adapter.scattered_names(data_to_scatter)["tables"]["rows"])


class _ScattersLikeSmac:
    """Stands for a facade: its ``optimize`` scatters ``data_to_scatter`` as SMAC's loop does
    (the dict's keys are the cluster's keys), runs one task on it and drops it."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def optimize(self, data_to_scatter: dict[str, Any]) -> int:
        scattered = self.client.scatter(data_to_scatter, broadcast=True)
        return int(self.client.submit(_rows, scattered, pure=False).result())


def test_scattering_again_after_a_release_loses_nothing(tmp_path: Path) -> None:
    """SMAC's loop scatters the tables and drops them when it returns; the finishing phase
    scatters them again at once. Under one fixed key the release could reach the scheduler
    after the new scatter, and the finishing trials failed with "lost dependencies" (a CI
    run did; so did this loop, within a few rounds, before both call sites used
    :func:`~hpo.campaign.smac.adapter.scatter_keys`)."""
    from hpo.campaign.smac.state import optimize_resumably

    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        runner = DaskParallelRunner.__new__(DaskParallelRunner)
        runner._client = client
        runner._close_client_at_del = False
        loop = _ScattersLikeSmac(client)
        for i in range(40):
            data = {"tables": {"rows": i}}
            assert optimize_resumably(loop, data, tmp_path, "toy") == i  # type: ignore[arg-type]
            extra = adapter.scatter_to_workers(runner, data)
            assert client.submit(_rows, extra["data_to_scatter"], pure=False).result() == i
