"""Tile features: one row per (graph, tile configuration)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from hpo.data.load import TileGraph
from hpo.data.opcodes import CONTRACTING, PARAMETER
from hpo.features.graph import graph_descriptor, graph_descriptor_names
from hpo.features.hashing import hash_rows
from hpo.features.relative import relative_features, relative_names
from hpo.features.spec import SUPERSEDED_IN_VERSION, FeatureSpec

__all__ = ["K_READING", "TILE_GROUPS", "extract_tile_features", "tile_feature_names"]

_CONFIG_NAMES = (
    [f"kernel_bound_{i}" for i in range(6)]
    + ["kernel_bound_sum", "kernel_bound_prod"]
    + [f"output_bound_{i}" for i in range(6)]
    + ["output_bound_sum", "output_bound_prod"]
    + [f"input_bound_{i}" for i in range(6)]
    + ["input_bound_sum", "input_bound_prod"]
)
_DERIVED_GROUPS: dict[str, str] = {
    "log_out_tile_volume": "tile_shape",
    "log_out_tile_hw_volume": "tile_shape",
    "log_kernel_tile_volume": "tile_shape",
    "log_n_out_tiles": "tile_shape",
    "log_n_kernel_tiles": "tile_shape",
    "out_padding_waste": "tile_padding",
    "kernel_padding_waste": "tile_padding",
    "hw_tile_waste": "tile_padding",
    "log_padded_work": "tile_padding",
    "log_out_tile_minor": "tile_shape",
    "log_out_tile_second_minor": "tile_shape",
    "out_tile_fraction": "tile_shape",
    "min_out_tile_ratio": "tile_shape",
    "max_out_tile_ratio": "tile_shape",
    "log_k_tile": "tile_shape",
    "log_k_steps": "tile_shape",
    "k_padding_waste": "tile_padding",
    "log_kernel_steps": "tile_shape",
    "log_vmem_bytes": "tile_vmem",
    "vmem_over_16mib": "tile_vmem",
    "log_est_compute": "tile_shape",
    # feature version 5: padding and working set with the bounds' last dim most minor (the
    # other reading of a tile's dims), and working sets that hold a tile of each kernel input
    # under either reading (see _footprint)
    "tp_hw_tile_waste_last": "tile_padding",
    "tp_log_padded_work_last": "tile_padding",
    "tp_log_vmem_bytes_last": "tile_vmem",
    "tp_vmem_over_16mib_last": "tile_vmem",
    "tp_log_vmem_inputs_bytes": "tile_vmem",
    "tp_vmem_inputs_over_16mib": "tile_vmem",
}
K_READING = SUPERSEDED_IN_VERSION[8]  # the columns that read a contracting (K) dim
_KC_SOURCE = [list(_DERIVED_GROUPS).index(n) for n in K_READING]
_DERIVED_GROUPS.update({f"kc_{n}": _DERIVED_GROUPS[n] for n in K_READING})
_DERIVED_NAMES = list(_DERIVED_GROUPS)
_STATIC_NAMES = [*(f"root_dim_{i}" for i in range(6)), "log_root_volume"]
#: The feature group of every tile column but the relative and graph-descriptor ones.
TILE_GROUPS: dict[str, str] = {
    **dict.fromkeys(_CONFIG_NAMES, "tile_bounds"),
    **_DERIVED_GROUPS,
    **dict.fromkeys(_STATIC_NAMES, "graph_static"),
}
_VMEM_BYTES = 16 * 2**20


def tile_feature_names(spec: FeatureSpec) -> list[str]:
    """Column names of :func:`extract_tile_features` under ``spec``."""
    per_config = list(_CONFIG_NAMES) + _DERIVED_NAMES
    names = per_config + _STATIC_NAMES
    if spec.relative:
        names += relative_names(per_config, ranks=False)
    if spec.graph_descriptor:
        names += graph_descriptor_names()
    return names


@dataclass(frozen=True)
class _Kernel:
    """What the tiles are measured against: the root's output shape, layout and contraction."""

    shape: np.ndarray  # (r,) output dims
    minor: int  # index of the most-minor output dim
    second: int  # index of the second-minor output dim, -1 for rank 1
    k_dim: float  # size of the contracted dim (largest dim of the root's first operand)
    elem_bytes: float
    n_inputs: float = 1.0  # the kernel's inputs (parameter nodes), at least 1
    contracts: bool = True  # it holds an op that contracts a dim (convolution, dot, reduce)

    def last_minor(self) -> _Kernel:
        """The kernel with the bounds' last dim most minor and the one before second minor.

        The format does not say whether tile bounds follow the root's layout or their own
        order; under the default layout the two readings are the same kernel.
        """
        r = len(self.shape)
        return dataclasses.replace(self, minor=r - 1, second=r - 2 if r > 1 else -1)


def _kernel(graph: TileGraph) -> _Kernel:
    nf = graph.node_feat
    roots = np.flatnonzero(nf[:, 0] > 0.5)
    root = int(roots[-1]) if roots.size else graph.n_nodes - 1
    dims = nf[root, 21:27].astype(np.float64)
    r = int(np.count_nonzero(dims > 0))
    layout = nf[root, 134 : 134 + r].astype(np.int64)
    if r == 0 or sorted(layout.tolist()) != list(range(r)):
        layout = np.arange(r)[::-1]  # XLA default: the last dim is the most minor
    users = graph.edge_index[:, 0] == root
    operand = int(graph.edge_index[users, 1][0]) if users.any() else -1
    k_dim = float(nf[operand, 21:27].max()) if operand >= 0 else 0.0
    elem_bytes = 2.0 if nf[root, 15] > 0 else (1.0 if nf[root, 3] > 0 else 4.0)
    return _Kernel(
        shape=dims[: max(r, 1)] if r else np.ones(1),
        minor=int(layout[0]) if r else 0,
        second=int(layout[1]) if r > 1 else -1,
        k_dim=k_dim,
        elem_bytes=elem_bytes,
        n_inputs=max(float(np.count_nonzero(graph.node_opcode == PARAMETER)), 1.0),
        contracts=bool(np.isin(graph.node_opcode, CONTRACTING).any()),
    )


def _tiles(bounds: np.ndarray, shape: np.ndarray) -> np.ndarray:
    """Tile sizes per output dim, a missing (0) bound meaning the whole dim."""
    t = bounds[:, : len(shape)]
    return np.where(t > 0, np.minimum(t, shape[None, :]), shape[None, :])


def _hw_volume(t: np.ndarray, kernel: _Kernel) -> np.ndarray:
    hw = t.copy()
    hw[:, kernel.minor] = np.ceil(hw[:, kernel.minor] / 128) * 128
    if kernel.second >= 0:
        hw[:, kernel.second] = np.ceil(hw[:, kernel.second] / 8) * 8
    return hw.prod(axis=1)


def _footprint(
    out_t: np.ndarray, k_tile: np.ndarray | None, kernel: _Kernel
) -> tuple[np.ndarray, np.ndarray]:
    """Hardware-padded output tile volume and the volume of one input tile.

    An input tile is a K strip of the two minor dims when the kernel contracts (``k_tile``
    given), else an output-sized tile. The double-buffered working set is
    ``2 x bytes x (output + inputs x strip)``: every operand of a fused kernel streams its own
    tile through on-chip memory, so a kernel with many inputs overflows it at smaller tiles
    than one with a single input.
    """
    hw = _hw_volume(out_t, kernel)
    if k_tile is None:
        return hw, hw
    second = out_t[:, kernel.second] if kernel.second >= 0 else np.ones(len(out_t))
    return hw, k_tile * (out_t[:, kernel.minor] + second)


def _derived(cfg: np.ndarray, kernel: _Kernel, contracting: bool) -> np.ndarray:
    """The derived per-config columns of :data:`_DERIVED_GROUPS` before the ``kc_`` copies.

    ``contracting`` False reads no K dim in the kernel whatever its operand. Why both: an
    elementwise fusion has no contracted dim, yet reading one (the largest dim of the root's
    first operand) prices a K strip into its working set that it never streams, so its whole-dim
    tiles read as overflowing on-chip memory (docs/benchmarks.md#tile-objective-and-features).
    Which kernels contract is a fact of their ops, not a constant fitted to a law; the
    generator's tile law reads it by the same rule, so its gain on generated data is an upper
    bound for real kernels.
    """
    shape = kernel.shape
    volume = float(shape.prod())
    out_t, ker_t = _tiles(cfg[:, 8:14], shape), _tiles(cfg[:, 0:6], shape)
    n_out = np.ceil(shape / out_t).prod(axis=1)
    n_ker = np.ceil(shape / ker_t).prod(axis=1)
    waste_out = (np.ceil(shape / out_t) * out_t).prod(axis=1) / volume
    waste_ker = (np.ceil(shape / ker_t) * ker_t).prod(axis=1) / volume
    ratio = out_t / shape[None, :]
    second = out_t[:, kernel.second] if kernel.second >= 0 else np.ones(len(cfg))
    r = len(shape)
    contracts = contracting and kernel.k_dim > 0 and r < 6
    if contracts:
        k_tile = np.where(cfg[:, r] > 0, np.minimum(cfg[:, r], kernel.k_dim), kernel.k_dim)
        k_steps = np.ceil(kernel.k_dim / k_tile)
        k_waste = k_steps * k_tile / kernel.k_dim
    else:
        k_tile, k_steps, k_waste = np.ones(len(cfg)), np.ones(len(cfg)), np.ones(len(cfg))
    strips = k_tile if contracts else None
    hw, strip = _footprint(out_t, strips, kernel)
    # the format does not say whether a tile's bounds follow the node's layout (hw) or their
    # own order, last dim most minor (hw_last): the trees learn which reading holds
    hw_last, strip_last = _footprint(out_t, strips, kernel.last_minor())
    double = 2.0 * kernel.elem_bytes  # double-buffered bytes per element
    vmem = double * (hw + strip)  # one input tile (feature versions 1-4)
    vmem_in = double * (hw + kernel.n_inputs * strip)
    vmem_last = double * (hw_last + kernel.n_inputs * strip_last)
    compute = n_out * hw * k_steps * k_tile * waste_ker
    return np.column_stack(
        [
            np.log1p(out_t.prod(axis=1)),
            np.log1p(hw),
            np.log1p(ker_t.prod(axis=1)),
            np.log1p(n_out),
            np.log1p(n_ker),
            waste_out,
            waste_ker,
            hw / out_t.prod(axis=1),
            np.log1p(n_out * hw),
            np.log1p(out_t[:, kernel.minor]),
            np.log1p(second),
            out_t.prod(axis=1) / volume,
            ratio.min(axis=1),
            ratio.max(axis=1),
            np.log1p(k_tile),
            np.log1p(k_steps),
            k_waste,
            np.log1p(n_ker * k_steps),
            np.log1p(vmem),
            np.maximum(vmem / _VMEM_BYTES - 1.0, 0.0),
            np.log1p(compute),
            hw_last / out_t.prod(axis=1),
            np.log1p(n_out * hw_last),
            np.log1p(vmem_last),
            np.maximum(vmem_last / _VMEM_BYTES - 1.0, 0.0),
            np.log1p(vmem_in),
            np.maximum(vmem_in / _VMEM_BYTES - 1.0, 0.0),
        ]
    )


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
    kernel = _kernel(graph)
    shape = kernel.shape
    volume = float(shape.prod())
    derived = _derived(cfg, kernel, contracting=True)  # the K reading of versions 1-7
    read = derived if kernel.contracts else _derived(cfg, kernel, contracting=False)
    per_config = np.concatenate([cfg, derived, read[:, _KC_SOURCE]], axis=1)
    c = per_config.shape[0]
    dims6 = np.zeros(6)
    dims6[: len(shape)] = shape
    root = np.concatenate([dims6, [np.log1p(volume)]])
    parts = [
        per_config.astype(np.float32),
        np.broadcast_to(root, (c, root.size)).astype(np.float32),
    ]
    if spec.relative:
        parts.append(relative_features(per_config, ranks=False))
    if spec.graph_descriptor:
        desc = graph_descriptor(graph.node_opcode, graph.edge_index, graph.node_feat, collection)
        parts.append(np.broadcast_to(desc, (c, desc.size)))
    features = np.ascontiguousarray(np.concatenate(parts, axis=1), dtype=np.float32)
    return features, hash_rows(graph.config_feat)
