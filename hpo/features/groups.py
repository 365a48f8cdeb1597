"""Named feature groups, so a search can switch whole groups of columns on or off.

Every column an extractor writes belongs to one group (docs/FEATURES.md has the table); a
relative column (``<base>_dmed``, ``<base>_prank``) belongs to its base column's group and is
also switched by the ``relative`` switch, as the ``relative_features`` hyperparameter does.
A hyperparameter ``use_group_<name>`` (see :data:`GROUP_PREFIX`) switches group ``<name>``;
the importance view of a run then says which groups earned their place.

Columns of no known group (hand-made tables in tests, a future extractor) are always kept:
switching can only remove what it knows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hpo.errors import ConfigError
from hpo.features.layout.extract import LAYOUT_GROUPS
from hpo.features.layout.nodes import NODE_GROUPS
from hpo.features.layout.second_order import SECOND_ORDER_GROUPS
from hpo.features.relative import relative_base
from hpo.features.tile import TILE_GROUPS

__all__ = [
    "GROUPS",
    "GROUP_PREFIX",
    "as_bool",
    "columns_for",
    "group_of",
    "live_columns",
    "switches_from_hyperparameters",
]

#: Hyperparameter prefix: ``use_group_padding = False`` drops the ``padding`` group.
GROUP_PREFIX = "use_group_"

#: The groups of the first-order columns, in order; which columns each holds is declared with
#: the columns (``LAYOUT_GROUPS``, ``TILE_GROUPS``), the second-order ones likewise.
_FIRST_ORDER = (
    "padding",
    "minor_dims",
    "defaults",
    "copies",
    "pattern",
    "graph_static",
    "tile_bounds",
    "tile_padding",
    "tile_vmem",
    "tile_shape",
)
_GROUP_OF: dict[str, str] = {**LAYOUT_GROUPS, **TILE_GROUPS}

#: Every group name, first-order groups first, then the second-order ones, then the graph
#: descriptor (columns ``g_*``).
GROUPS: tuple[str, ...] = (
    *_FIRST_ORDER,
    *dict.fromkeys(SECOND_ORDER_GROUPS.values()),
    *dict.fromkeys(NODE_GROUPS.values()),
    "graph_descriptor",
)


def group_of(name: str) -> str | None:
    """The group of column ``name`` (relative columns: their base's), None if ungrouped."""
    base, _ = relative_base(name)
    if base.startswith("g_"):
        return "graph_descriptor"
    return _GROUP_OF.get(base)


def as_bool(value: Any) -> bool:
    """A switch hyperparameter's value as a bool (a categorical may arrive as ``"True"``)."""
    if isinstance(value, str):
        return value.lower() in ("true", "1", "yes")
    return bool(value)


def switches_from_hyperparameters(hyperparameters: Mapping[str, Any]) -> dict[str, bool]:
    """The ``{group: on}`` switches named by ``use_group_<name>`` hyperparameters.

    Raises
    ------
    ConfigError
        If a ``use_group_`` hyperparameter names no known group.
    """
    switches: dict[str, bool] = {}
    for key, value in hyperparameters.items():
        if key.startswith(GROUP_PREFIX):
            switches[key[len(GROUP_PREFIX) :]] = as_bool(value)
    return switches


def columns_for(
    feature_names: Sequence[str], switches: Mapping[str, bool], *, relative: bool = True
) -> np.ndarray:
    """Indices of the columns kept under ``switches`` (missing groups stay on).

    Parameters
    ----------
    feature_names
        The table's column names.
    switches
        ``{group: on}``; a group absent from it is on.
    relative
        False drops every relative column (``*_dmed``, ``*_prank``).

    Raises
    ------
    ConfigError
        If a switch names no group of :data:`GROUPS`.
    """
    unknown = sorted(set(switches) - set(GROUPS))
    if unknown:
        raise ConfigError(
            f"feature groups: unknown group '{unknown[0]}' (expected one of {', '.join(GROUPS)})"
        )
    keep = []
    for i, name in enumerate(feature_names):
        _, is_relative = relative_base(name)
        group = group_of(name)
        if (relative or not is_relative) and (group is None or switches.get(group, True)):
            keep.append(i)
    return np.asarray(keep, dtype=np.int64)


def live_columns(feature_names: Sequence[str], hyperparameters: Mapping[str, Any]) -> np.ndarray:
    """Indices of the columns a configuration switches on (the only ones its trees split on).

    ``relative_features`` switches the relative columns and every ``use_group_<name>`` the
    group ``<name>``; absent switches are on. Training (:mod:`hpo.ranking.training`) and the
    model loader (:mod:`hpo.deploy.model`) both read it, so a model blends the columns its
    trial blended even though today's boosters read every column (but the prior's own).
    """
    return columns_for(
        feature_names,
        switches_from_hyperparameters(hyperparameters),
        relative=as_bool(hyperparameters.get("relative_features", True)),
    )
