from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ConfigSpace import Categorical, ConfigurationSpace, Float, Integer

from hpo.campaign.lifecycle.prebuild import (
    MAX_VARIANTS,
    PrebuildPlan,
    dataset_variants,
    prebuild_datasets,
    trial_seed,
)
from hpo.campaign.objective import ObjectiveSettings, RankerObjective
from hpo.campaign.smac.adapter import first_trial_seed
from hpo.ranking.spaces import load_space
from hpo.runs.record.trial import trials_of

COLLECTIONS = ("tile:xla", "layout:xla:default")


def test_variants_are_the_default_with_every_dataset_choice() -> None:
    space = ConfigurationSpace(seed=0)
    space.add(Float("learning_rate", (0.01, 0.3), default=0.05))
    space.add(Categorical("max_bin", [63, 127, 255], default=255))
    space.add(Categorical("min_data_in_bin", [3, 10], default=3))
    variants = dataset_variants(space)
    assert len(variants) == 6
    assert {(v["max_bin"], v["min_data_in_bin"]) for v in variants} == {
        (b, m) for b in (63, 127, 255) for m in (3, 10)
    }
    assert all(v["learning_rate"] == 0.05 for v in variants)  # not a Dataset parameter


def test_a_numeric_or_too_large_dataset_choice_gets_the_default_only() -> None:
    ranged = ConfigurationSpace(seed=0)
    ranged.add(Integer("max_bin", (15, 255), default=255))
    assert dataset_variants(ranged) == [{"max_bin": 255}]
    many = ConfigurationSpace(seed=0)
    many.add(Categorical("max_bin", list(range(16, 16 + MAX_VARIANTS + 1)), default=16))
    assert dataset_variants(many) == [{"max_bin": 16}]
    none = ConfigurationSpace(seed=0)
    none.add(Float("learning_rate", (0.01, 0.3), default=0.05))
    assert dataset_variants(none) == [{"learning_rate": 0.05}]
    # a warm start's baseline runs first: its Dataset is built ahead too, once
    warm = {"max_bin": 63, "learning_rate": 0.2}
    assert dataset_variants(ranged, [warm, warm]) == [{"max_bin": 255}, {"max_bin": 63}]
    assert dataset_variants(ranged, [{"max_bin": 255}]) == [{"max_bin": 255}]


def test_trial_seed_of_a_resumed_campaign_is_its_trials_seed() -> None:
    assert trial_seed(3, trials_of([{"seed": None}, {"seed": 41}])) == 41
    assert trial_seed(3, []) == first_trial_seed(3)


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("*.bin")}


def test_prebuilt_files_are_those_the_trials_load(tiny_tables: Any, tmp_path: Path) -> None:
    space = load_space("lambdarank")
    variants = dataset_variants(space)
    assert sorted(v["max_bin"] for v in variants) == [63, 127, 255]
    where = tmp_path / "datasets"
    seed = first_trial_seed(0)
    plan = PrebuildPlan(tiny_tables, COLLECTIONS, tuple(variants), seed, str(where), 1)
    lines: list[str] = []
    assert prebuild_datasets(plan, lines.append) == (6, 0)  # 2 families x 3 max_bin
    assert "6 built, 0 found" in lines[-1]
    before = _snapshot(where)
    assert len(before) == 6
    objective = RankerObjective(
        ObjectiveSettings(collections=COLLECTIONS, max_budget=4, dataset_dir=str(where)),
        tiny_tables,
    )
    for max_bin in (63, 255):
        config = {**dict(space.get_default_configuration()), "max_bin": max_bin}
        _, info = objective(config, seed=seed, budget=4)
        assert info["metrics"]
    assert _snapshot(where) == before  # every trial loaded a prebuilt file, none was written
    # a second prebuild finds them all
    assert prebuild_datasets(plan, lines.append) == (0, 6)


def test_a_failing_prebuild_is_logged_and_the_campaign_goes_on(tmp_path: Path) -> None:
    variants = ({"max_bin": 63},)
    plan = PrebuildPlan({}, COLLECTIONS, variants, 0, str(tmp_path / "d"), 1)  # no tables
    lines: list[str] = []
    assert prebuild_datasets(plan, lines.append) == (0, 0)
    assert "binning ahead failed (KeyError" in lines[-1]


def test_an_interrupted_prebuild_leaves_no_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import multiprocessing
    import multiprocessing.connection

    def interrupted(self: Any) -> Any:
        raise KeyboardInterrupt  # Ctrl-C (or SIGTERM, which the CLI turns into it) while waiting

    monkeypatch.setattr(multiprocessing.connection.Connection, "recv", interrupted)
    plan = PrebuildPlan({}, COLLECTIONS, ({"max_bin": 63},), 0, str(tmp_path / "d"), 1)
    with pytest.raises(KeyboardInterrupt):
        prebuild_datasets(plan, lambda line: None)
    assert multiprocessing.active_children() == []  # terminated, not waited for
