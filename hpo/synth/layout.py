"""Synthetic layout graphs (``layout:{xla,nlp}:{default,random}``), written chunk by chunk.

Configurable nodes are convolution, dot, reshape, transpose and fusion nodes with outputs of
rank >= 2. A configuration gives each of them an output, input and (convolutions) kernel
layout, minor-to-major, -1 padded; an all -1 block is the compiler default, i.e. the layout
stored in ``node_feat`` 134-139 of the node (of the operand, for input and kernel blocks).
As in upstream's real files, a share of the configurations (:data:`PARTIAL_SHARE`) fixes only
the two most-minor dims of tensors of rank >= 3 and leaves the rest -1, to the compiler; the
law prices such a layout completed with the remaining dims in the default layout's order
(:func:`hpo.synth.layout_compile.compile_layouts`), which is what "the compiler" picks here.

Hidden cost law (:func:`_config_cost_terms`): per configurable node, the output volume padded
to the 8 x 128 hardware tile on its two most-minor dimensions under the chosen layout, times
an opcode factor (convolution and dot heavier, cheaper when their feature / last dimension is
most minor), plus smaller input and kernel terms; plus a copy when a node's input layout
differs from the output layout of its nearest configurable producer (walking back through at
most three shape-preserving nodes) or from the input layout of its first sibling fed by the
same producer. A base runtime from the non-configurable nodes dominates. That is the
``first-order`` law; the default ``second-order`` law (:mod:`hpo.synth.layout_law`) adds
element-type tiles, matrix-unit layouts, bitcast reshapes, mismatch classes and reader copies.

The default search changes a few nodes per configuration (sometimes to the layout with the
least padding, or to the input layout its producer already has, so a change is not always a
loss) and repeats many configurations; the random search draws a layout for almost every
node. Configurations are a function of ``(file key, unique config id, node)`` through a
counter-based hash: duplicated rows are exact, any chunk is made on its own, memory is flat.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpo.data.opcodes import CONVOLUTION, DOT, RESHAPE, TRANSPOSE
from hpo.synth.graph import (
    COL_CONV_OUT_FEATURE,
    MAX_RANK,
    NodeTable,
    build_hlo_graph,
)
from hpo.synth.hlo_tables import FUSION
from hpo.synth.law_family import LawConstants, resolve_law
from hpo.synth.layout_compile import compile_layouts
from hpo.synth.layout_draw import (
    FACTORIAL,
    choose_config_nodes,
    hash_uniform,
    perm_table,
    random_perms,
)
from hpo.synth.layout_law import (
    OperandFacts,
    SecondOrderProblem,
    second_order_cost_terms,
    second_order_problem,
)
from hpo.synth.npz_writer import NpzWriter

__all__ = ["CONFIGURABLE_OPCODES", "PARTIAL_SHARE", "noiseless_layout_cost", "write_layout_file"]

CONFIGURABLE_OPCODES: tuple[int, ...] = (CONVOLUTION, DOT, RESHAPE, TRANSPOSE, FUSION)
_OPCODE_FACTOR = np.ones(256)
_OPCODE_FACTOR[list(CONFIGURABLE_OPCODES)] = (3.0, 2.5, 0.6, 0.8, 1.0)
_MINOR_BONUS = 0.6  # conv/dot cost factor when the feature / last dim is most minor
_INPUT_FACTOR, _KERNEL_FACTOR, _COPY_FACTOR = 0.3, 0.5, 1.5
_MAX_HOPS = 3
_BYTE_NS = 1.5e-3  # base runtime per byte of a non-configurable node
_NODE_NS = 150.0  # base runtime per node
_LANES, _SUBLANES = 128, 8
_CHUNK_CELLS = 1 << 18  # configs x configurable nodes per chunk
_CALIBRATION_CONFIGS = 512  # unique configs sampled to scale the config-dependent cost
#: Share of configurations whose layouts of rank >= 3 fix only the two most-minor dims.
PARTIAL_SHARE = 0.5


@dataclass(frozen=True, eq=False)
class LayoutProblem(OperandFacts):
    """Per configurable node facts the cost law needs, derived from the stored arrays."""

    ids: np.ndarray
    elem_bytes: np.ndarray
    factor: np.ndarray
    bonus_dim: np.ndarray
    is_conv: np.ndarray
    producer: np.ndarray
    leader: np.ndarray
    best_out: np.ndarray
    aligned_in: np.ndarray
    base_ns: float
    second: SecondOrderProblem | None = None  # set: the second-order law prices configs


def _layout_problem(
    node_feat: np.ndarray,
    node_opcode: np.ndarray,
    edge_index: np.ndarray,
    node_config_ids: np.ndarray,
    law: str | LawConstants = "first-order",
) -> LayoutProblem:
    """Derive the :class:`LayoutProblem` of a layout file from its stored arrays."""
    constants = resolve_law(law)
    t = NodeTable.from_arrays(node_feat, node_opcode, edge_index)
    ids = np.asarray(node_config_ids, dtype=np.int64)
    op = node_opcode.astype(np.int64)[ids]
    is_cfg = np.zeros(node_feat.shape[0], dtype=bool)
    is_cfg[ids] = True
    first = t.first_operand[ids]
    src = first.copy()
    for _ in range(_MAX_HOPS):
        s = np.maximum(src, 0)
        step = (src >= 0) & ~is_cfg[s] & t.shape_preserving[s] & (t.first_operand[s] >= 0)
        src = np.where(step, t.first_operand[s], src)
    f0 = np.maximum(first, 0)
    in_shape = np.where((first >= 0)[:, None], t.shapes[f0], 0)
    same_in = (src >= 0) & (t.shapes[np.maximum(src, 0)] == in_shape).all(axis=1)
    producer = np.where(same_in & is_cfg[np.maximum(src, 0)], np.searchsorted(ids, src), -1)
    _, first_idx, inverse = np.unique(src, return_index=True, return_inverse=True)
    leader = first_idx[inverse.ravel()]
    leader = np.where(same_in & same_in[leader] & (leader != np.arange(len(ids))), leader, -1)

    is_conv = op == CONVOLUTION
    kern = np.where(is_conv, t.second_operand[ids], -1)
    k0 = np.maximum(kern, 0)
    has_k = (kern >= 0)[:, None]
    bonus = np.where(
        is_conv,
        node_feat[ids, COL_CONV_OUT_FEATURE].astype(np.int64),
        np.where(op == DOT, t.ranks[ids] - 1, -1),
    )
    rest = np.ones(node_feat.shape[0], dtype=bool)
    rest[ids] = False
    heavy = np.where(np.isin(node_opcode, (CONVOLUTION, DOT)), 2.5, 1.0)
    base = (t.volumes * t.elem_bytes * heavy)[rest].sum() * _BYTE_NS + _NODE_NS * len(rest)
    out_default = t.layouts[ids]
    second = None
    if constants is not None:
        second = second_order_problem(
            t, node_feat, node_opcode, edge_index, ids, producer.astype(np.int64), leader, constants
        )
    return LayoutProblem(
        ids=ids,
        out_shape=t.shapes[ids],
        out_rank=t.ranks[ids],
        out_volume=t.volumes[ids],
        out_default=out_default,
        in_shape=in_shape,
        in_rank=(in_shape > 0).sum(axis=1),
        in_volume=np.where(first >= 0, t.volumes[f0], 1.0),
        in_default=np.where((first >= 0)[:, None], t.layouts[f0], -1),
        in_bytes=t.elem_bytes[f0],
        kernel_shape=np.where(has_k, t.shapes[k0], 0),
        kernel_rank=np.where(kern >= 0, t.ranks[k0], 0),
        kernel_volume=np.where(kern >= 0, t.volumes[k0], 1.0),
        kernel_default=np.where(has_k, t.layouts[k0], -1),
        elem_bytes=t.elem_bytes[ids],
        factor=_OPCODE_FACTOR[op],
        bonus_dim=bonus,
        is_conv=is_conv,
        producer=producer.astype(np.int64),
        leader=leader.astype(np.int64),
        best_out=_best_layouts(t.shapes[ids], t.ranks[ids], t.volumes[ids], bonus),
        aligned_in=np.where((producer >= 0)[:, None], out_default[np.maximum(producer, 0)], -1),
        base_ns=float(base),
        second=second,
    )


def _best_layouts(
    shape: np.ndarray, rank: np.ndarray, volume: np.ndarray, bonus_dim: np.ndarray
) -> np.ndarray:
    """Per node, the output layout with the smallest (bonus-weighted) padded volume."""
    perms = perm_table()[rank].astype(np.int64).transpose(1, 0, 2)  # (720, nc, 6)
    cost = _padded_volume(shape, rank, volume, perms)
    cost *= np.where(perms[..., 0] == bonus_dim, _MINOR_BONUS, 1.0)
    cost[np.arange(perms.shape[0])[:, None] >= FACTORIAL[rank]] = np.inf
    return perms[cost.argmin(axis=0), np.arange(len(rank))]


def _resolve(block: np.ndarray, default: np.ndarray) -> np.ndarray:
    """Replace all -1 blocks (compiler default) by the stored default layout."""
    return np.where((block < 0).all(axis=-1, keepdims=True), default[None], block)


def _padded_volume(
    shape: np.ndarray, rank: np.ndarray, volume: np.ndarray, layout: np.ndarray
) -> np.ndarray:
    """Volume padded to 128 on the most-minor and 8 on the second-minor dim; ``(k, nc)``."""
    idx = np.clip(layout[..., :2], 0, MAX_RANK - 1)
    minor = np.take_along_axis(shape[None], idx, axis=2).astype(np.float64)
    d0 = np.where(rank >= 1, minor[..., 0], 1.0)
    d1 = np.where(rank >= 2, minor[..., 1], 1.0)
    padded_minor = np.ceil(d0 / _LANES) * _LANES * np.ceil(d1 / _SUBLANES) * _SUBLANES
    return volume / (d0 * d1) * padded_minor


def _config_cost_terms(p: LayoutProblem, feat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The config-dependent cost: ``(padded output term, everything else)``, each ``(k,)``."""
    blocks = feat.astype(np.int64)
    out = _resolve(blocks[..., 0:6], p.out_default)
    inp = _resolve(blocks[..., 6:12], p.in_default)
    ker = _resolve(blocks[..., 12:18], p.kernel_default)
    bonus = np.where(out[..., 0] == p.bonus_dim, _MINOR_BONUS, 1.0)
    node = (
        p.factor * p.elem_bytes * bonus * _padded_volume(p.out_shape, p.out_rank, p.out_volume, out)
    )
    other = _INPUT_FACTOR * p.in_bytes * _padded_volume(p.in_shape, p.in_rank, p.in_volume, inp)
    other += np.where(p.is_conv, _KERNEL_FACTOR * p.elem_bytes, 0.0) * _padded_volume(
        p.kernel_shape, p.kernel_rank, p.kernel_volume, ker
    )
    copy = _COPY_FACTOR * p.in_volume * p.in_bytes
    for partner, partner_layout in ((p.producer, out), (p.leader, inp)):
        has = partner >= 0
        differs = (inp[:, has] != partner_layout[:, partner[has]]).any(axis=-1)
        other[:, has] += differs * copy[has]
    return node.sum(axis=1), other.sum(axis=1)


def _law_cost(p: LayoutProblem, feat: np.ndarray) -> np.ndarray:
    """Config-dependent cost ``(k,)`` under the problem's law, partial layouts completed."""
    feat = compile_layouts(feat, p.out_default, p.in_default, p.kernel_default)
    if p.second is None:
        node, other = _config_cost_terms(p, feat)
    else:
        node, other = second_order_cost_terms(p.second, feat)
    return node + other


def noiseless_layout_cost(path: Path, law: str | LawConstants = "second-order") -> np.ndarray:
    """The hidden law's config-dependent cost of every config of a generated layout file.

    ``law`` is the one the file was drawn with (:func:`hpo.synth.layout_law.read_law` reads
    it from the root).

    The measured runtime is ``(base + scale * cost) * noise`` with a positive scale, so the
    project's Kendall tau (:func:`hpo.ranking.scoring.metrics.kendall_tau`: the order of this cost,
    configs of equal cost in a random order) against the stored runtimes is the best a
    ranker's order reaches in expectation: the noise ceiling the benchmarks compare against.
    """
    from hpo.data.load import iter_config_chunks, load_layout_graph

    g = load_layout_graph(path)
    p = _layout_problem(g.node_feat, g.node_opcode, g.edge_index, g.node_config_ids, law)
    parts = [_law_cost(p, block) for _, block in iter_config_chunks(path, 2048)]
    return np.concatenate(parts) if parts else np.zeros(0)


def _config_block(p: LayoutProblem, uids: np.ndarray, search: str, key: int) -> np.ndarray:
    """``node_config_feat`` rows (float32 ``(k, nc, 18)``) of the unique configs ``uids``."""
    nc = len(p.ids)
    u = hash_uniform(key, uids, nc, 9)  # slots 0-7 do not depend on the slot count
    parts = [
        random_perms(u[..., i], rank)
        for i, rank in enumerate((p.out_rank, p.in_rank, p.kernel_rank))
    ]
    if search == "default":  # uid 0 is the compiler default; others change a few nodes
        changed = (u[..., 3] < min(0.3, 1.5 / nc)) & (uids[:, None] > 0)
        use = (
            changed & (u[..., 4] < 0.7),
            changed & (u[..., 4] > 0.4),
            changed & p.is_conv & (u[..., 5] < 0.3),
        )
        parts[0] = np.where((u[..., 6] < 0.4)[..., None], p.best_out[None], parts[0])
        aligned = (u[..., 7] < 0.5) & (p.producer >= 0)
        parts[1] = np.where(aligned[..., None], p.aligned_in[None], parts[1])
    else:
        use = (u[..., 3] < 0.9, u[..., 4] < 0.8, p.is_conv & (u[..., 5] < 0.8))
    # a share of the configs fixes only the two most-minor dims of tensors of rank >= 3
    partial = (u[:, :1, 8:9] < PARTIAL_SHARE) & (np.arange(MAX_RANK) >= 2)[None, None]
    blocks = [
        np.where(mask[..., None], np.where(partial, -1, part), -1)
        for mask, part in zip(use, parts, strict=True)
    ]
    return np.concatenate(blocks, axis=-1).astype(np.float32)


def _calibrate(
    p: LayoutProblem, search: str, key: int, n_unique: int, rng: np.random.Generator
) -> float:
    """Scale of the config-dependent cost, set from a sample of the unique configs.

    The range of the configs' runtimes (default search: min-max, random search: 2-98%) is
    drawn as a fraction of the base runtime (narrow for default, wide for random); if the
    sample does not vary, the compiler default's cost is made a fraction of the base.
    The sample size is fixed, so the scale does not depend on the chunking.
    """
    spread = rng.uniform(*((0.02, 0.08) if search == "default" else (0.3, 1.5)))
    share = rng.uniform(0.05, 0.3)
    sample = np.arange(min(n_unique, _CALIBRATION_CONFIGS))
    cost = _law_cost(p, _config_block(p, sample, search, key))
    low, high = np.quantile(cost, [0.0, 1.0] if search == "default" else [0.02, 0.98])
    if high - low > 1e-6 * high:
        return float(spread * p.base_ns / (high - low))
    default_cost = _law_cost(p, np.full((1, len(p.ids), 18), -1.0, np.float32))
    return float(share * p.base_ns / max(float(default_cost[0]), 1e-9))


def write_layout_file(
    path: Path,
    rng: np.random.Generator,
    *,
    collection: str,
    n_nodes: int,
    n_config_nodes: int,
    n_configs: int,
    labeled: bool,
    law: str | LawConstants = "second-order",
) -> int:
    """Draw one layout graph with ``n_configs`` configurations and write it to ``path``.

    ``node_config_feat`` is streamed in chunks of about 2**18 (config, node) cells, and the
    runtimes of each chunk are computed from it before it is written.

    Parameters
    ----------
    path, rng
        As :func:`hpo.synth.tile.write_tile_file` takes them.
    collection
        ``layout:<source>:<search>``: source ``xla`` or ``nlp``; search ``default`` (few
        nodes changed, many duplicates, narrow runtime spread) or ``random`` (random
        layouts, wide spread).
    n_nodes, n_config_nodes, n_configs
        Graph size, configurable nodes wanted (fewer if the graph has too few candidates)
        and configurations.
    labeled
        False for the test split: all runtimes 0.
    law
        The hidden cost law: ``"second-order"`` (default), ``"first-order"`` (padding and
        copies only; its files changed once, when the generator took upstream's form) or a
        member of the family of second-order laws (:class:`hpo.synth.layout_law.LawConstants`).

    Returns
    -------
    int
        The number of configurable nodes.
    """
    _, source, search = collection.split(":")
    constants = resolve_law(law)
    graph_law = "first-order" if constants is None else "second-order"
    n_comp = max(1, n_nodes // int(rng.integers(300, 900)))
    graph = build_hlo_graph(rng, n_nodes, source=source, n_computations=n_comp, law=graph_law)
    graph, ids = choose_config_nodes(CONFIGURABLE_OPCODES, rng, graph, n_config_nodes)
    problem = _layout_problem(
        graph.node_feat, graph.node_opcode, graph.edge_index, ids, constants or "first-order"
    )
    nc, c = len(ids), int(n_configs)
    key = int(rng.integers(2**62))
    n_unique = max(
        1, round(c * rng.uniform(*((0.1, 0.5) if search == "default" else (0.85, 0.97))))
    )
    uids = rng.permutation(np.r_[np.arange(n_unique), rng.integers(0, n_unique, c - n_unique)])
    noise = 1.0 + rng.uniform(0.001, 0.004) * rng.standard_normal(c)
    kappa = _calibrate(problem, search, key, n_unique, rng)
    runtime = np.zeros(c, dtype=np.int64)
    rows = int(np.clip(_CHUNK_CELLS // nc, 16, 4096))

    def blocks() -> Iterator[np.ndarray]:
        for start in range(0, c, rows):
            stop = min(start + rows, c)
            feat = _config_block(problem, uids[start:stop], search, key)
            if labeled:
                clean = problem.base_ns + kappa * _law_cost(problem, feat)
                runtime[start:stop] = np.maximum(np.rint(clean * noise[start:stop]), 1)
            yield feat

    with NpzWriter(path) as npz:
        npz.add("node_feat", graph.node_feat)
        npz.add("node_opcode", graph.node_opcode)
        npz.add("edge_index", graph.edge_index)
        npz.add("node_config_ids", ids)
        npz.add("node_splits", graph.node_splits.reshape(1, -1))
        npz.add_rows("node_config_feat", (c, nc, 18), np.dtype(np.float32), blocks())
        npz.add("config_runtime", runtime)
    return nc
