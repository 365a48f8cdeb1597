"""Feature groups: every column has one, and switches select exactly the columns they name."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.errors import ConfigError
from hpo.features import FeatureSpec, layout_feature_names, tile_feature_names
from hpo.features.groups import (
    GROUP_PREFIX,
    GROUPS,
    columns_for,
    group_of,
    switches_from_hyperparameters,
)
from hpo.features.layout.second_order import SECOND_ORDER_GROUPS
from hpo.features.table.feature_table import FeatureTable, GraphRef
from hpo.ranking.spaces import load_space
from hpo.ranking.training import feature_columns, make_ranker

SPECS = [
    FeatureSpec(),
    FeatureSpec(relative=False),
    FeatureSpec(graph_descriptor=False),
]


@pytest.mark.parametrize("spec", SPECS)
def test_every_extracted_column_has_a_group(spec: FeatureSpec) -> None:
    names = layout_feature_names(spec) + tile_feature_names(spec)
    ungrouped = [n for n in names if group_of(n) not in GROUPS]
    assert ungrouped == []


def test_a_column_of_both_families_has_one_group() -> None:
    from hpo.features.layout.extract import LAYOUT_GROUPS
    from hpo.features.tile import TILE_GROUPS

    shared = set(LAYOUT_GROUPS) & set(TILE_GROUPS)
    assert {n: LAYOUT_GROUPS[n] for n in shared} == {n: TILE_GROUPS[n] for n in shared}


def test_every_group_has_columns() -> None:
    names = layout_feature_names(FeatureSpec()) + tile_feature_names(FeatureSpec())
    assert {group_of(n) for n in names} == set(GROUPS)


@pytest.mark.parametrize("group", GROUPS)
def test_switching_a_group_off_drops_exactly_its_columns(group: str) -> None:
    names = layout_feature_names(FeatureSpec()) + tile_feature_names(FeatureSpec())
    kept = [names[i] for i in columns_for(names, {group: False})]
    assert [n for n in names if group_of(n) != group] == kept
    assert len(columns_for(names, {group: True})) == len(names)


def test_relative_columns_follow_their_base_and_the_relative_switch() -> None:
    names = layout_feature_names(FeatureSpec())
    assert group_of("so_n_mismatch_minor_dmed") == "mismatch_class"
    assert group_of("log_copy_volume_prank") == "copies"
    kept = [names[i] for i in columns_for(names, {}, relative=False)]
    assert kept
    assert not any(n.endswith(("_dmed", "_prank")) for n in kept)
    off = [names[i] for i in columns_for(names, {"bitcast": False})]
    assert "so_n_reshape_move" not in off
    assert "so_n_reshape_move_dmed" not in off
    assert "so_n_reshape_move_prank" not in off


def test_second_order_groups_off_leave_the_first_order_columns() -> None:
    names = layout_feature_names(FeatureSpec())
    off = {g: False for g in {*SECOND_ORDER_GROUPS.values(), "node_aggregates"}}
    kept = [names[i] for i in columns_for(names, off)]
    assert not any(n.startswith(("so_", "est_", "nd_")) for n in kept)
    assert len(kept) == 220  # the layout width of feature version 1


@pytest.mark.parametrize(
    ("group", "width"), [("effect_bytes", 4), ("cost_estimate", 1), ("mxu", 5)]
)
def test_version_3_groups_switch_their_estimates(group: str, width: int) -> None:
    names = layout_feature_names(FeatureSpec())
    own = [n for n in names if group_of(n) == group]
    assert len(own) == 3 * width  # each per-config column with its _dmed and _prank
    kept = {names[i] for i in columns_for(names, {group: False})}
    assert kept == set(names) - set(own)
    estimates = {g for n, g in SECOND_ORDER_GROUPS.items() if n.startswith("est_")}
    assert estimates == {"effect_bytes", "cost_estimate"}


def test_unknown_group_is_an_error() -> None:
    with pytest.raises(ConfigError, match="unknown group 'nope'"):
        columns_for(["a"], {"nope": False})


def _table(names: tuple[str, ...]) -> FeatureTable:
    n = 4
    return FeatureTable(
        family="layout",
        split="train",
        X=np.zeros((n, len(names)), dtype=np.float32),
        target=np.arange(n, dtype=np.float64),
        group=np.zeros(n, dtype=np.int64),
        config_index=np.arange(n),
        dup_count=np.ones(n, dtype=np.int64),
        graphs=(GraphRef("layout:xla:random", "g", n, True),),
        feature_names=names,
    )


def test_hyperparameters_switch_groups_in_feature_columns() -> None:
    names = ("log_padded_volume", "so_n_reshape_move", "so_n_reshape_move_dmed", "custom")
    t = _table(names)
    assert list(feature_columns(t, {})) == [0, 1, 2, 3]
    assert list(feature_columns(t, {"use_group_bitcast": "False"})) == [0, 3]
    assert list(feature_columns(t, {"use_group_padding": False, "relative_features": False})) == [
        1,
        3,
    ]
    assert switches_from_hyperparameters({"use_group_mxu": "True", "num_leaves": 3}) == {
        "mxu": True
    }


def test_group_switches_are_not_passed_to_lightgbm() -> None:
    ranker = make_ranker(
        {"use_group_mxu": False, "num_leaves": 7},
        ["layout:xla:default"],
        num_boost_round=1,
        seed=0,
        n_threads=1,
    )
    assert not any(k.startswith(GROUP_PREFIX) for k in ranker.params)


def test_groups_space_switches_every_group() -> None:
    space = load_space("lambdarank_groups")
    switches = {n for n in space if n.startswith(GROUP_PREFIX)}
    assert switches == {f"{GROUP_PREFIX}{g}" for g in GROUPS}
    default = dict(space.get_default_configuration())
    assert all(default[s] is True for s in switches)
    assert {"learning_rate", "relative_features"} <= set(space)
