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
from hpo.features.layout_second_order import SECOND_ORDER_GROUPS
from hpo.features.relative import relative_base

__all__ = [
    "GROUPS",
    "GROUP_PREFIX",
    "as_bool",
    "columns_for",
    "group_of",
    "switches_from_hyperparameters",
]

#: Hyperparameter prefix: ``use_group_padding = False`` drops the ``padding`` group.
GROUP_PREFIX = "use_group_"

_FIRST_ORDER: dict[str, tuple[str, ...]] = {
    "padding": (
        "log_padded_volume",
        "log_padded_volume_convdot",
        "log_padded_volume_reshape",
        "log_padded_volume_other",
        "log_padding_waste",
        "mean_pad_ratio",
        "max_log_pad_ratio",
        "vw_pad_ratio",
        "vw_minor_mult128",
        "vw_second_minor_mult8",
        "log_input_padded_volume",
    ),
    "minor_dims": (
        "vw_largest_dim_minor",
        "mean_log_minor",
        "mean_log_second_minor",
        "mean_minor_index",
    ),
    "defaults": (
        "frac_default_out",
        "n_nondefault_out",
        "vw_nondefault_out",
        "frac_default_kernel",
    ),
    "copies": (
        "n_copies",
        "log_copy_volume",
        "n_explicit_copies",
        "n_sibling_disagree",
        "log_sibling_volume",
        "n_in_out_differ",
        "log_in_out_volume",
    ),
    "pattern": ("log_pattern_count",),
    "graph_static": (
        "log_n_config_nodes",
        "log_config_volume",
        "frac_cfg_convdot",
        "frac_cfg_reshape",
        "frac_cfg_with_producer",
        "log_n_configs",
        *(f"root_dim_{i}" for i in range(6)),
        "log_root_volume",
    ),
    "tile_bounds": tuple(
        f"{kind}_bound_{i}"
        for kind in ("kernel", "output", "input")
        for i in (*range(6), "sum", "prod")
    ),
    "tile_padding": (
        "out_padding_waste",
        "kernel_padding_waste",
        "hw_tile_waste",
        "log_padded_work",
        "k_padding_waste",
    ),
    "tile_vmem": ("log_vmem_bytes", "vmem_over_16mib"),
    "tile_shape": (
        "log_out_tile_volume",
        "log_out_tile_hw_volume",
        "log_kernel_tile_volume",
        "log_n_out_tiles",
        "log_n_kernel_tiles",
        "log_out_tile_minor",
        "log_out_tile_second_minor",
        "out_tile_fraction",
        "min_out_tile_ratio",
        "max_out_tile_ratio",
        "log_k_tile",
        "log_k_steps",
        "log_kernel_steps",
        "log_est_compute",
    ),
}
_GROUP_OF: dict[str, str] = {n: g for g, names in _FIRST_ORDER.items() for n in names}
_GROUP_OF.update(SECOND_ORDER_GROUPS)

#: Every group name, first-order groups first, then the second-order ones, then the graph
#: descriptor (columns ``g_*``).
GROUPS: tuple[str, ...] = (
    *_FIRST_ORDER,
    *dict.fromkeys(SECOND_ORDER_GROUPS.values()),
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
