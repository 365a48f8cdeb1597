"""Tests of hpo/ranking/hyperparameters.py: one declaration of owners, one routing function."""

from __future__ import annotations

import inspect

import pytest

from hpo.errors import ConfigError
from hpo.features.groups import GROUP_PREFIX
from hpo.ranking.hyperparameters import (
    HPO_SET_PARAMS,
    TILE_EXTRA_TREES_KEY,
    TILE_LABEL_LEVELS_KEY,
    TILE_OBJECTIVE_KEY,
    TILE_TRUNCATION_KEY,
    family_hyperparameters,
    lightgbm_aliases,
    route_hyperparameters,
)
from hpo.ranking.prior.blend import BLEND_KEY, WEIGHT_KEY
from hpo.ranking.spaces import list_spaces, load_space
from hpo.ranking.training import make_ranker


def test_each_key_goes_to_its_owner() -> None:
    routed = route_hyperparameters(
        {
            "label_levels": 8,
            "relative_features": False,
            WEIGHT_KEY: 1.5,
            BLEND_KEY: True,
            f"{GROUP_PREFIX}cost_estimate": False,
            "num_leaves": 31,
            "min_data": 15,  # a LightGBM alias (of min_data_in_leaf)
        },
        "space.json",
    )
    assert routed.hpo == {"label_levels": 8, "relative_features": False}
    assert routed.blend == {WEIGHT_KEY: 1.5, BLEND_KEY: True}
    assert routed.groups == {f"{GROUP_PREFIX}cost_estimate": False}
    assert routed.lightgbm == {"num_leaves": 31, "min_data": 15}


def test_two_names_of_one_lightgbm_parameter_are_refused() -> None:
    """LightGBM used one of learning_rate and eta; SMAC searched both and the incumbent
    reported the ignored one."""
    with pytest.raises(ConfigError, match=r"'num_leaves' and 'num_leaf' are both LightGBM's"):
        route_hyperparameters({"num_leaves": 31, "num_leaf": 15}, "space.json")


def test_an_unknown_key_is_refused_naming_it_and_the_source() -> None:
    with pytest.raises(
        ConfigError,
        match=r"^my\.json: hyperparameter 'leaves' is neither an hpo setting "
        r"\(label_levels, max_group_size, relative_features, layout_objective, "
        r"tile_truncation_level, "
        r"tile_label_levels, tile_objective, tile_extra_trees, "
        r"estimate_weight, "
        r"estimate_weight_default_collections, estimate_blend, estimate_blend_select, "
        r"use_group_<group>\) nor a "
        r"LightGBM parameter$",
    ):
        route_hyperparameters({"num_leaves": 3, "leaves": 3}, "my.json")


@pytest.mark.parametrize("key", ["num_boost_round", "n_estimators", "nthread", "random_state"])
def test_a_key_hpo_sets_itself_is_refused(key: str) -> None:
    with pytest.raises(ConfigError, match=rf"^hyperparameters: hyperparameter '{key}' is set by"):
        route_hyperparameters({key: 1})


def test_lightgbms_private_alias_table_still_answers() -> None:
    """The one LightGBM private name hpo uses: fails here when LightGBM renames or changes it."""
    from lightgbm.basic import _ConfigAliases

    method = _ConfigAliases._get_all_param_aliases
    assert list(inspect.signature(method).parameters) == []
    aliases = lightgbm_aliases()
    assert aliases["num_leaf"] == "num_leaves"
    assert aliases["n_estimators"] == aliases["num_boost_round"] == "num_iterations"
    assert aliases["learning_rate"] == "learning_rate"
    assert set(HPO_SET_PARAMS) <= set(aliases.values())  # each is a LightGBM parameter


@pytest.mark.parametrize("space", list_spaces())
def test_every_packaged_space_routes(space: str) -> None:
    config = dict(load_space(space).get_default_configuration())
    routed = route_hyperparameters(config, space)
    assert sum(map(len, (routed.hpo, routed.blend, routed.groups, routed.lightgbm))) == len(config)


def test_training_refuses_what_a_space_would() -> None:
    with pytest.raises(ConfigError, match="hyperparameter 'leaves' is neither an hpo setting"):
        make_ranker({"leaves": 31}, ["tile:xla"], num_boost_round=3, seed=0)
    with pytest.raises(ConfigError, match="hyperparameter 'num_boost_round' is set by hpo"):
        make_ranker({"num_boost_round": 31}, ["tile:xla"], num_boost_round=3, seed=0)
    ranker = make_ranker(
        {"num_leaves": 7, f"{GROUP_PREFIX}cost_estimate": True, WEIGHT_KEY: 1.0},
        ["layout:xla:random"],
        num_boost_round=3,
        seed=0,
    )
    assert ranker.params == {"num_leaves": 7}


def test_the_tile_truncation_replaces_lightgbms_for_tile_only() -> None:
    hp = {"lambdarank_truncation_level": 256, TILE_TRUNCATION_KEY: 30, "num_leaves": 7}
    assert family_hyperparameters(hp, ["tile:xla"]) == {
        "lambdarank_truncation_level": 30,
        "num_leaves": 7,
    }
    assert family_hyperparameters(hp, ["layout:xla:random"]) == {
        "lambdarank_truncation_level": 256,
        "num_leaves": 7,
    }
    # a configuration made before the key trains both families at one truncation
    old = {"lambdarank_truncation_level": 256}
    assert family_hyperparameters(old, ["tile:xla"]) == old
    assert family_hyperparameters(old, ["layout:nlp:default"]) == old
    assert route_hyperparameters({TILE_TRUNCATION_KEY: 30}).hpo == {TILE_TRUNCATION_KEY: 30}


def test_each_family_boosts_with_its_own_extra_trees() -> None:
    hp = {"extra_trees": True, TILE_EXTRA_TREES_KEY: False, "num_leaves": 7}
    tile = make_ranker(hp, ["tile:xla"], num_boost_round=3, seed=0)
    layout = make_ranker(hp, ["layout:xla:default"], num_boost_round=3, seed=0)
    assert (tile.params["extra_trees"], layout.params["extra_trees"]) == (False, True)
    assert TILE_EXTRA_TREES_KEY not in tile.params | layout.params
    # the tile key also takes the place of LightGBM's alias, which would otherwise clash with it
    aliased = {"extra_tree": True, TILE_EXTRA_TREES_KEY: False}
    assert family_hyperparameters(aliased, ["tile:xla"]) == {"extra_trees": False}
    assert family_hyperparameters(aliased, ["layout:nlp:default"]) == {"extra_tree": True}


def test_the_tile_objective_and_levels_reach_the_tile_family_only() -> None:
    hp = {TILE_OBJECTIVE_KEY: "rank_xendcg", TILE_LABEL_LEVELS_KEY: 31, "label_levels": 16}
    assert family_hyperparameters(hp, ["tile:xla"]) == {
        TILE_OBJECTIVE_KEY: "rank_xendcg",
        "label_levels": 31,
    }
    assert family_hyperparameters(hp, ["layout:nlp:random"]) == {"label_levels": 16}
    assert route_hyperparameters(hp).hpo == hp
