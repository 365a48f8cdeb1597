"""Tile features: one row per (graph, tile configuration)."""

from __future__ import annotations

import numpy as np

from hpo.data import TileGraph
from hpo.features.graph import graph_descriptor, graph_descriptor_names
from hpo.features.hashing import hash_rows
from hpo.features.relative import relative_features, relative_names
from hpo.features.spec import FeatureSpec

__all__ = ["extract_tile_features", "tile_feature_names"]

_CONFIG_NAMES = (
    [f"kernel_bound_{i}" for i in range(6)]
    + ["kernel_bound_sum", "kernel_bound_prod"]
    + [f"output_bound_{i}" for i in range(6)]
    + ["output_bound_sum", "output_bound_prod"]
    + [f"input_bound_{i}" for i in range(6)]
    + ["input_bound_sum", "input_bound_prod"]
)
_DERIVED_NAMES = [
    "log_out_tile_volume",
    "log_kernel_tile_volume",
    "log_n_out_tiles",
    "log_n_kernel_tiles",
    "out_padding_waste",
    "kernel_padding_waste",
    "log_out_tile_minor",
    "log_out_tile_second_minor",
    "out_tile_minor_pad128",
    "out_tile_second_minor_pad8",
    "out_tile_fraction",
    "kernel_tile_fraction",
    "min_out_tile_ratio",
    "max_out_tile_ratio",
]


def tile_feature_names(spec: FeatureSpec) -> list[str]:
    """Column names of :func:`extract_tile_features` under ``spec``."""
    per_config = list(_CONFIG_NAMES) + _DERIVED_NAMES
    names = per_config + [f"root_dim_{i}" for i in range(6)] + ["log_root_volume"]
    if spec.relative:
        names += relative_names(per_config)
    if spec.graph_descriptor:
        names += graph_descriptor_names()
    return names


def _root_shape(graph: TileGraph) -> np.ndarray:
    roots = np.flatnonzero(graph.node_feat[:, 0] > 0.5)
    row = roots[-1] if roots.size else graph.n_nodes - 1
    return graph.node_feat[row, 21:27].astype(np.float64)


def _tiling(shape: np.ndarray, tiles: np.ndarray) -> tuple[np.ndarray, ...]:
    """Tile counts and padding waste of ``tiles`` (c, 6) against ``shape`` (6,)."""
    used = (shape > 0)[None, :] & (tiles > 0)
    s = np.broadcast_to(shape, tiles.shape)
    t = np.where(used, tiles, 1.0)
    s_used = np.where(used, s, 1.0)
    n_per_dim = np.ceil(s_used / t)
    n_tiles = n_per_dim.prod(axis=1)
    padded = (n_per_dim * t).prod(axis=1)
    waste = padded / np.maximum(s_used.prod(axis=1), 1.0)
    volume = t.prod(axis=1)
    fraction = volume / np.maximum(s_used.prod(axis=1), 1.0)
    ratio = np.where(used, t / np.maximum(s_used, 1.0), np.nan)
    return n_tiles, waste, volume, fraction, ratio


def extract_tile_features(
    graph: TileGraph, collection: str, spec: FeatureSpec
) -> tuple[np.ndarray, np.ndarray]:
    """Feature rows of every configuration of one tile graph.

    Parameters
    ----------
    graph
        A loaded tile graph.
    collection
        Its collection name (for the collection indicator).
    spec
        Feature settings.

    Returns
    -------
    tuple of numpy.ndarray
        float32 features (c, len(tile_feature_names(spec))) with row i for config i, and
        uint64 config hashes (c,) (equal configs have equal hashes).
    """
    cfg = graph.config_feat.astype(np.float64)
    shape = _root_shape(graph)
    out_t, ker_t = cfg[:, 8:14], cfg[:, 0:6]
    n_out, waste_out, vol_out, frac_out, ratio_out = _tiling(shape, out_t)
    n_ker, waste_ker, vol_ker, frac_ker, _ = _tiling(shape, ker_t)
    minor = out_t[:, 0]
    second = out_t[:, 1]
    with np.errstate(invalid="ignore"):
        min_ratio = np.nan_to_num(np.nanmin(np.where(np.isnan(ratio_out), np.inf, ratio_out), 1))
        max_ratio = np.nan_to_num(np.nanmax(np.where(np.isnan(ratio_out), -np.inf, ratio_out), 1))
    min_ratio[~np.isfinite(min_ratio)] = 0.0
    max_ratio[~np.isfinite(max_ratio)] = 0.0
    derived = np.column_stack(
        [
            np.log1p(vol_out),
            np.log1p(vol_ker),
            np.log1p(n_out),
            np.log1p(n_ker),
            waste_out,
            waste_ker,
            np.log1p(minor),
            np.log1p(second),
            np.ceil(np.maximum(minor, 1) / 128) * 128 / np.maximum(minor, 1),
            np.ceil(np.maximum(second, 1) / 8) * 8 / np.maximum(second, 1),
            frac_out,
            frac_ker,
            min_ratio,
            max_ratio,
        ]
    )
    per_config = np.concatenate([cfg, derived], axis=1)
    c = per_config.shape[0]
    root = np.concatenate([shape, [np.log1p(np.prod(np.maximum(shape, 1.0)))]])
    parts = [per_config.astype(np.float32), np.broadcast_to(root, (c, root.size)).astype(np.float32)]
    if spec.relative:
        parts.append(relative_features(per_config))
    if spec.graph_descriptor:
        desc = graph_descriptor(graph.node_opcode, graph.edge_index, graph.node_feat, collection)
        parts.append(np.broadcast_to(desc, (c, desc.size)))
    features = np.ascontiguousarray(np.concatenate(parts, axis=1), dtype=np.float32)
    return features, hash_rows(graph.config_feat)
