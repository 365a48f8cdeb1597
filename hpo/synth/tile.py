"""Synthetic ``tile:xla`` graphs: one fused kernel per file and its tile-size configurations.

The kernel's output is the root node's shape (``node_feat`` 21-26 of the node with
``is_root = 1``). A configuration tiles it: ``output_bounds`` (``config_feat`` 8-13) is the
tile size per output dimension, ``kernel_bounds`` (0-5) the tile of the kernel's iteration
space (the output dimensions plus, for kernels with a convolution, dot or reduce, one
contracting dimension whose size is the largest dimension of the root's first operand).

Hidden cost law (:func:`_tile_runtime_ns`): padded work (output tiles rounded up to the
8 x 128 hardware tile on their two minor dimensions, kernel tiles that do not divide the
dimensions, the contracting dimension rounded up to its tile) x per-element cost, plus
per-tile and per-kernel-step overheads, plus the transfer of the first tile that no
pipelining hides, all times a large penalty when the double-buffered working set exceeds the
16 MiB on-chip memory. So neither the smallest nor the largest tiles win, and the raw size
of a tile says little without the shape it tiles. Measurement noise is ~0.3%; the
normalizer is the runtime of a fixed default tiling measured alongside each configuration,
with its own noise.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hpo.data.opcodes import CONTRACTING, CONVOLUTION, DOT, PARAMETER
from hpo.synth.graph import (
    COL_IS_ROOT,
    MAX_RANK,
    NodeTable,
    build_hlo_graph,
)
from hpo.synth.npz_writer import NpzWriter

__all__ = ["write_tile_file"]

_VMEM_BYTES = 16 * 2**20
_LANES, _SUBLANES = 128, 8
_NOISE = 0.003
_MAX_CANDIDATES = 16


def _tile_candidates(dims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tile sizes allowed per dimension: powers of two below the size, and the size itself.

    Returns a ``(len(dims), 16)`` matrix (rows padded by repeating the size) and the number of
    distinct candidates per row.
    """
    powers = 2 ** np.arange(_MAX_CANDIDATES - 1)
    cand = np.where(powers[None, :] < dims[:, None], powers[None, :], dims[:, None])
    cand = np.concatenate([cand, dims[:, None]], axis=1)
    counts = (powers[None, :] < dims[:, None]).sum(axis=1) + 1
    return cand, counts


def _sample_bounds(
    rng: np.random.Generator, dims: np.ndarray, n: int, bias_large: float
) -> np.ndarray:
    """Draw ``n`` tilings of ``dims``; ``bias_large`` > 1 favours the larger candidates."""
    cand, counts = _tile_candidates(dims)
    pick = (rng.random((n, len(dims))) ** (1.0 / bias_large) * counts).astype(np.int64)
    return cand[np.arange(len(dims)), np.minimum(pick, counts - 1)]


def _hw_padded(tiles: np.ndarray) -> np.ndarray:
    """Tile volume after padding the minor dim to 128 and the second-minor to 8."""
    hw = tiles.astype(np.float64)
    hw[:, -1] = np.ceil(hw[:, -1] / _LANES) * _LANES
    if hw.shape[1] > 1:
        hw[:, -2] = np.ceil(hw[:, -2] / _SUBLANES) * _SUBLANES
    return np.prod(hw, axis=1)


def _vmem_bytes(
    out_tiles: np.ndarray, k_tiles: np.ndarray, k_dim: int, params: dict[str, float]
) -> np.ndarray:
    """Double-buffered working set: output tile and input tiles (a K strip if reducing)."""
    out = _hw_padded(out_tiles)
    if k_dim:
        strip = k_tiles * (out_tiles[:, -1] + (out_tiles[:, -2] if out_tiles.shape[1] > 1 else 1))
        inputs = params["inputs"] * strip
    else:
        inputs = params["inputs"] * out
    return 2.0 * params["bytes"] * (out + inputs)


def _default_bounds(
    dims: np.ndarray, k_dim: int, params: dict[str, float]
) -> tuple[np.ndarray, np.ndarray]:
    """The compiler's fixed default tiling: whole dims, minor <= 512, second-minor <= 64,
    K <= 512, then the largest dim halved until the working set is under a quarter budget."""
    cand, counts = _tile_candidates(dims)
    cap = dims.copy()
    cap[-1] = min(cap[-1], 512)
    if len(dims) > 1:
        cap[-2] = min(cap[-2], 64)
    k_tile = np.array([min(k_dim, 512)]) if k_dim else np.zeros(1, dtype=np.int64)
    for _ in range(64):  # shrink step by step: a loop over at most 6 x 16 tile sizes
        ok = (cand <= cap[:, None]) & (np.arange(cand.shape[1]) < counts[:, None])
        tiles = np.where(ok, cand, 0).max(axis=1)
        if _vmem_bytes(tiles[None], k_tile, k_dim, params)[0] <= _VMEM_BYTES / 4:
            break
        big = int(np.argmax(tiles))
        cap[big] = max(tiles[big] // 2, 1)
    return tiles, k_tile


def _tile_runtime_ns(
    out_dims: np.ndarray,
    out_tiles: np.ndarray,
    kernel_tiles: np.ndarray,
    k_dim: int,
    k_tiles: np.ndarray,
    params: dict[str, float],
) -> np.ndarray:
    """The hidden tile cost law, vectorised over configurations (rows of the tile arrays)."""
    n_tiles = np.prod(np.ceil(out_dims / out_tiles), axis=1)
    k_steps = np.ceil(k_dim / k_tiles) if k_dim else np.ones(len(out_tiles))
    k_work = k_steps * k_tiles if k_dim else np.ones(len(out_tiles))
    kernel_waste = np.prod(np.ceil(out_dims / kernel_tiles) * kernel_tiles, axis=1) / np.prod(
        out_dims.astype(np.float64)
    )
    n_kernel_tiles = np.prod(np.ceil(out_dims / kernel_tiles), axis=1)
    tile_elems = _hw_padded(out_tiles)
    compute = n_tiles * tile_elems * k_work * kernel_waste * params["elem_ns"]
    overhead = n_tiles * params["tile_ns"] + n_kernel_tiles * k_steps * params["step_ns"]
    vmem = _vmem_bytes(out_tiles, k_tiles, k_dim, params)
    prologue = vmem * params["dma_ns_per_byte"]  # the first tile's transfer is not hidden
    over = np.maximum(vmem / _VMEM_BYTES - 1.0, 0.0)
    penalty = 1.0 + np.where(over > 0, 3.0 + 4.0 * over, 0.0)
    return (compute + overhead + prologue) * penalty


def write_tile_file(
    path: Path, rng: np.random.Generator, *, n_nodes: int, n_configs: int, labeled: bool
) -> int:
    """Draw one tile graph and its configurations and write them to ``path``.

    Parameters
    ----------
    path
        The ``.npz`` file to write.
    rng
        The file's random generator (the file is a function of its state).
    n_nodes, n_configs
        Graph size and the number of configurations to draw (duplicates are dropped, so
        small kernels can get fewer).
    labeled
        False for the test split: runtimes all 0 and normalizers all 1.

    Returns
    -------
    int
        The number of configurations written.
    """
    for _ in range(100):  # the kernel needs an array output; nearly always the first draw
        graph = build_hlo_graph(rng, n_nodes, source="xla")
        table = NodeTable.from_arrays(graph.node_feat, graph.node_opcode, graph.edge_index)
        root = int(np.flatnonzero(graph.node_feat[:, COL_IS_ROOT])[-1])
        if table.ranks[root] >= 1:
            break
    else:
        raise RuntimeError(f"{path}: no kernel with an array output in 100 draws")
    out_dims = table.shapes[root, : table.ranks[root]]
    reduces = np.isin(graph.node_opcode, CONTRACTING).any()
    operand = table.first_operand[root]
    k_dim = int(table.shapes[operand].max()) if reduces and operand >= 0 else 0
    if len(out_dims) >= MAX_RANK:
        k_dim = 0
    heavy = np.isin(graph.node_opcode, (CONVOLUTION, DOT)).mean()
    params = {
        "bytes": float(table.elem_bytes[root]),
        "inputs": float(max((graph.node_opcode == PARAMETER).sum(), 1)),
        "elem_ns": float(table.elem_bytes[root] * 2.5e-4 * (1 + 6 * heavy) * (1 + 0.02 * n_nodes)),
        "step_ns": float(rng.uniform(2, 20)),
        "tile_ns": float(rng.uniform(10, 80)),
        "dma_ns_per_byte": float(rng.uniform(1e-3, 3e-3)),
    }

    out_tiles = _sample_bounds(rng, out_dims, n_configs, bias_large=rng.uniform(1.0, 3.0))
    same = rng.random(n_configs) < 0.6
    kernel = np.where(
        same[:, None], out_tiles, _sample_bounds(rng, out_dims, n_configs, bias_large=1.5)
    )
    k_tiles = (
        _sample_bounds(rng, np.array([k_dim]), n_configs, 2.0)[:, 0]
        if k_dim
        else np.zeros(n_configs, dtype=np.int64)
    )
    rows = np.concatenate([kernel, k_tiles[:, None], out_tiles], axis=1)
    _, first = np.unique(rows, axis=0, return_index=True)
    keep = np.sort(first)
    out_tiles, kernel, k_tiles = out_tiles[keep], kernel[keep], k_tiles[keep]
    c = len(keep)

    config_feat = np.zeros((c, 24), dtype=np.float32)
    kernel_bounds = np.concatenate([kernel, k_tiles[:, None]], axis=1) if k_dim else kernel
    for col, bounds in ((0, kernel_bounds), (8, out_tiles)):
        config_feat[:, col : col + bounds.shape[1]] = bounds
        config_feat[:, col + 6] = bounds.sum(axis=1)
        config_feat[:, col + 7] = np.prod(bounds, axis=1)

    if labeled:
        clean = _tile_runtime_ns(out_dims, out_tiles, kernel, k_dim, k_tiles, params)
        d_out, d_k = _default_bounds(out_dims, k_dim, params)
        base = _tile_runtime_ns(out_dims, d_out[None], d_out[None], k_dim, d_k, params)[0]
        runtime = np.maximum(np.rint(clean * (1 + _NOISE * rng.standard_normal(c))), 1)
        norm = np.maximum(np.rint(base * (1 + _NOISE * rng.standard_normal(c))), 1)
    else:
        runtime, norm = np.zeros(c), np.ones(c)
    with NpzWriter(path) as npz:
        npz.add("node_feat", graph.node_feat)
        npz.add("node_opcode", graph.node_opcode)
        npz.add("edge_index", graph.edge_index)
        npz.add("config_feat", config_feat)
        npz.add("config_runtime", runtime.astype(np.int64))
        npz.add("config_runtime_normalizers", norm.astype(np.int64))
    return c
