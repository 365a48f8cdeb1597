"""Who owns each hyperparameter of a configuration: one declaration, one routing function.

A configuration (a point of a search space) is one flat mapping. Each key has one owner:

- ``hpo`` (:data:`RANKER_SETTINGS`): the ranker's labels and sub-queries, the relative
  feature columns (:mod:`hpo.ranking.training`) and the tile family's own objective, levels,
  truncation and extra trees (:data:`TILE_KEYS`, :func:`family_hyperparameters`);
- ``blend`` (:data:`BLEND_SETTINGS`): the blend of scores with the cost prior
  (:mod:`hpo.ranking.prior.blend`);
- ``groups``: ``use_group_<name>`` switches a feature group (:mod:`hpo.features.groups`);
- ``lightgbm``: every other key, if LightGBM knows it (a parameter or one of its aliases) and
  it is not one hpo sets itself (:data:`HPO_SET_PARAMS`: rounds come from the budget, threads
  and seeds from the campaign).

:func:`route_hyperparameters` sorts a configuration by owner and refuses any other key with a
one-line error naming it and where it came from; training (:func:`hpo.ranking.training.
make_ranker`) and space loading (:func:`hpo.ranking.spaces.check_space_keys`) both use it, so
a key a space may hold is exactly a key training accepts. LightGBM would ignore an unknown
key with only a warning, and a trial would tune nothing.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hpo.data.load import is_layout
from hpo.errors import ConfigError
from hpo.features.groups import GROUP_PREFIX, GROUPS
from hpo.ranking.prior.blend import BLEND_KEY, DEFAULT_WEIGHT_KEY, SELECT_KEY, WEIGHT_KEY

__all__ = [
    "BLEND_SETTINGS",
    "HPO_SET_PARAMS",
    "OWNERS",
    "RANKER_SETTINGS",
    "TILE_KEYS",
    "TILE_LABEL_LEVELS_KEY",
    "TILE_OBJECTIVE_KEY",
    "LAYOUT_OBJECTIVE_KEY",
    "TILE_EXTRA_TREES_KEY",
    "TILE_TRUNCATION_KEY",
    "TRAINED_WITHOUT",
    "TRUNCATION_KEY",
    "RoutedHyperparameters",
    "family_hyperparameters",
    "lightgbm_aliases",
    "lightgbm_refusal",
    "route_hyperparameters",
]

#: LightGBM's lambdarank truncation: how deep into a query's predicted order pairs count.
TRUNCATION_KEY = "lambdarank_truncation_level"
#: The tile family's truncation (``TRUNCATION_KEY`` then serves the layout family). Why: tile
#: is scored on its top 5 only, and a round's time follows the pairs the truncation visits
#: (docs/benchmarks.md#speed-and-memory: 2.6x from 30 to 256 on tile),
#: while the layout collections, scored on the whole order, need a deep one. The packaged
#: spaces search it from the layout default (256), only while tile trains with lambdarank.
TILE_TRUNCATION_KEY = "tile_truncation_level"
#: The tile family's ranking objective (:data:`hpo.ranking.model.ranker.OBJECTIVES`); the layout
#: family has its own (:data:`LAYOUT_OBJECTIVE_KEY`). Why its own: at 31 label levels (its own too,
#: :data:`TILE_LABEL_LEVELS_KEY`) ``rank_xendcg`` fits tile about 3x faster than lambdarank on
#: small generated roots and 9x at real size, and ranks its top 5 as well (docs/benchmarks.md
#: #tile-objective-and-features). A configuration without it trains tile with lambdarank, as runs
#: made before it did.
TILE_OBJECTIVE_KEY = "tile_objective"
#: The layout family's ranking objective: ``sampled_pairs`` (:mod:`hpo.ranking.model.pairs`, a
#: uniform pair loss, which weighs pairs as Kendall's tau does; the packaged spaces' default) or
#: ``lambdarank`` (also what a configuration without the key trains: runs made before it).
LAYOUT_OBJECTIVE_KEY = "layout_objective"
#: The tile family's relevance levels (``label_levels`` then serves the layout family). At 16
#: levels the top level of a real-size tile graph holds its fastest ~100 configs; tile's
#: default, ``rank_xendcg`` at 31 levels, was judged at that size (docs/benchmarks.md).
TILE_LABEL_LEVELS_KEY = "tile_label_levels"
#: The tile family's extremely randomized trees (LightGBM's ``extra_trees``, which then serves
#: the layout family). Why its own: on the blind laws (docs/benchmarks.md, "Blind laws") random
#: split thresholds lifted the layout default collections on unseen graphs and cost tile up to
#: 0.09 of its top-5 score, so the packaged spaces default them on for layout, off for tile.
TILE_EXTRA_TREES_KEY = "tile_extra_trees"
#: The tile family's own keys, and the key each takes the place of when tile trains (the
#: objective is its own: :func:`hpo.ranking.training.make_ranker` reads it).
TILE_KEYS = {
    TILE_TRUNCATION_KEY: TRUNCATION_KEY,
    TILE_LABEL_LEVELS_KEY: "label_levels",
    TILE_OBJECTIVE_KEY: TILE_OBJECTIVE_KEY,
    TILE_EXTRA_TREES_KEY: "extra_trees",
}
#: What a configuration without these keys trains with (:func:`hpo.ranking.training.
#: make_ranker` for the levels and objectives, LightGBM's own default for ``extra_trees``): a
#: warm start maps a run made before them by it (:mod:`hpo.campaign.seeding.warm_start`), so
#: the two cannot disagree.
TRAINED_WITHOUT: dict[str, Any] = {
    "label_levels": 16,
    TILE_OBJECTIVE_KEY: "lambdarank",
    LAYOUT_OBJECTIVE_KEY: "lambdarank",
    "extra_trees": False,
}
#: hpo's own settings of the ranker and of the feature selection.
RANKER_SETTINGS = (
    "label_levels",
    "max_group_size",
    "relative_features",
    LAYOUT_OBJECTIVE_KEY,
    *TILE_KEYS,
)
#: The settings of the blend with the cost prior (:mod:`hpo.ranking.prior.blend`).
BLEND_SETTINGS = (WEIGHT_KEY, DEFAULT_WEIGHT_KEY, BLEND_KEY, SELECT_KEY)
#: The owners a key can have, in the order :func:`route_hyperparameters` asks them.
OWNERS = ("hpo", "blend", "groups", "lightgbm")
#: LightGBM parameters hpo sets itself on every booster (``LambdaRanker.lightgbm_params``):
#: the rounds are the budget (a space's ``num_iterations`` = 300 at budget 8 exported a
#: model.json saying 8 rounds over a 300-tree booster), the objective, metric and labels
#: are what hpo ranks with, threads, seeds and the histogram pool (memory) belong to the
#: campaign. A configuration may not name them or any of their aliases.
HPO_SET_PARAMS = (
    "num_iterations",
    "objective",
    "metric",
    "label_gain",
    "num_threads",
    "seed",
    "data_random_seed",
    "bagging_seed",
    "feature_fraction_seed",
    "extra_seed",
    "drop_seed",
    "objective_seed",
    "deterministic",
    "force_row_wise",
    "histogram_pool_size",
    "feature_pre_filter",
    "verbosity",
)


@dataclass(frozen=True)
class RoutedHyperparameters:
    """A configuration's keys sorted by owner (see :data:`OWNERS`)."""

    hpo: dict[str, Any] = field(default_factory=dict)
    blend: dict[str, Any] = field(default_factory=dict)
    groups: dict[str, Any] = field(default_factory=dict)
    lightgbm: dict[str, Any] = field(default_factory=dict)


@functools.cache
def lightgbm_aliases() -> dict[str, str]:
    """``{name or alias: parameter}`` of every parameter the installed LightGBM knows.

    The one use of LightGBM's private ``_ConfigAliases`` (LightGBM has no public list);
    ``tests/ranking/test_hyperparameters.py`` checks it on the installed version.
    """
    from lightgbm.basic import _ConfigAliases

    table = _ConfigAliases._get_all_param_aliases()
    return {alias: param for param, names in table.items() for alias in names}


def _owner(key: str) -> str | None:
    if key in RANKER_SETTINGS:
        return "hpo"
    if key in BLEND_SETTINGS:
        return "blend"
    if key.startswith(GROUP_PREFIX):
        return "groups"
    if key in lightgbm_aliases():
        return "lightgbm"
    return None


def family_hyperparameters(
    hyperparameters: Mapping[str, Any], collections: Sequence[str]
) -> dict[str, Any]:
    """The configuration the family of ``collections`` trains with: the tile family's own keys
    (:data:`TILE_KEYS`) resolved, and the layout family's objective kept for it alone.

    For the tile family (no layout collection) each own key's value takes the place of the key
    it stands for there, and of any LightGBM alias of it (``extra_tree`` for ``extra_trees``);
    the objective stays, for :func:`hpo.ranking.training.make_ranker`. The layout family drops
    them. A configuration without them (runs and spaces made before them) trains both families
    at one truncation, one number of levels and one ``extra_trees``, with lambdarank.
    """
    out = dict(hyperparameters)
    own = {key: out.pop(key) for key in TILE_KEYS if key in out}
    if not any(is_layout(c) for c in collections):
        aliases = lightgbm_aliases()
        for key, value in own.items():
            target = TILE_KEYS[key]
            for alias in [k for k in out if k != target and aliases.get(k) == target]:
                del out[alias]
            out[target] = value
        out.pop(LAYOUT_OBJECTIVE_KEY, None)  # the layout family's own
    return out


def route_hyperparameters(
    hyperparameters: Mapping[str, Any], source: str = "hyperparameters"
) -> RoutedHyperparameters:
    """Sort ``hyperparameters`` by owner; refuse a key nobody owns or hpo sets itself.

    Parameters
    ----------
    hyperparameters
        One configuration (or, to check a space, its names mapped to anything).
    source
        Named in the error: the space's file, or what the configuration came from.

    Raises
    ------
    ConfigError
        Naming ``source`` and the first offending key.
    """
    routed = RoutedHyperparameters()
    named: dict[str, str] = {}  # LightGBM parameter -> the key that set it
    for key, value in hyperparameters.items():
        param = lightgbm_aliases().get(key, key)
        if param in HPO_SET_PARAMS:
            raise ConfigError(
                f"{source}: hyperparameter '{key}' is set by hpo itself (LightGBM's "
                f"'{param}': rounds come from the budget, threads and seeds from the "
                "campaign); remove it from the space"
            )
        owner = _owner(key)
        if owner is None:
            raise ConfigError(
                f"{source}: hyperparameter '{key}' is neither an hpo setting "
                f"({', '.join((*RANKER_SETTINGS, *BLEND_SETTINGS))}, {GROUP_PREFIX}<group>) "
                "nor a LightGBM parameter"
            )
        if owner == "groups" and key[len(GROUP_PREFIX) :] not in GROUPS:
            raise ConfigError(
                f"{source}: hyperparameter '{key}' switches no feature group (groups: "
                f"{', '.join(GROUPS)})"
            )
        if owner == "lightgbm":
            if param in named:
                raise ConfigError(
                    f"{source}: hyperparameters '{named[param]}' and '{key}' are both LightGBM's "
                    f"'{param}' (LightGBM would use one, the search would tune both); keep one"
                )
            named[param] = key
        getattr(routed, owner)[key] = value
    return routed


@contextlib.contextmanager
def _stderr_to_devnull() -> Iterator[None]:
    """LightGBM's C++ writes its ``[Fatal]`` line straight to file descriptor 2."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def lightgbm_refusal(key: str, value: Any) -> str | None:
    """Why LightGBM refuses ``value`` for parameter ``key`` (its own message), or ``None``.

    LightGBM checks every parameter's range when it parses its parameters (a Dataset of two
    rows is enough), so a space is checked against the installed LightGBM's own ranges, not
    a copy of them: a ``feature_fraction`` of 1.5 once crashed one trial and left the shared
    Dataset half-updated, so the next one segfaulted.
    """
    import lightgbm as lgb
    import numpy as np

    params = {key: value, "verbose": -1}
    try:
        with _stderr_to_devnull():
            lgb.Dataset(np.zeros((2, 1)), label=[0.0, 0.0], params=params).construct()
    except lgb.basic.LightGBMError as exc:
        lines = str(exc).strip().splitlines()
        return re.sub(r" at \S+, line \d+ \.?$", "", lines[0]) if lines else "refused"
    return None
