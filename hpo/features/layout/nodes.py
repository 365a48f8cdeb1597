"""Generic node quantities under a layout, added up per op class: the ``nd_`` columns.

The other layout columns are shaped after what one model of a TPU prices. These are not: for
every configurable node they take what a layout changes for any hardware model, and sum it
over the nodes of an op class, so the trees can weigh them in whatever form the runtimes
follow, and the learned prior can find a weight for each byte total
(:func:`hpo.ranking.prior.fit.prior_basis`; the counts it leaves out):

- the padded bytes of the node's output under its output layout, of its first operand under
  its input layout and of its second under its kernel layout (tiles of 128 lanes by 8 rows,
  and by the rows of the element type: 8 for 4-byte, 16 for 2-byte, 32 for 1-byte types);
- where a layout leaves the compiler's default (anywhere, or in the two most minor
  positions), weighted by the tensor's bytes;
- whether what a node reads agrees with what its producers write (a configurable producer's
  chosen output layout, another's default), and whether what it writes agrees with what each
  consumer wants (a configurable consumer's input or kernel layout, another's default), in
  any position or in the minor two, weighted by the tensor's bytes;
- the bytes of the graph region that takes the node's layout along: the non-configurable
  nodes of the same shape connected to its output (or to its first operand), padded under
  the node's output (or input) layout;
- how much of the output is not a multiple of a tile in its minor two dims.

Each is summed over all configurable nodes and over each op class (convolution or dot,
reshape or transpose, the others): ``nd_<quantity>_<class>``, bytes as ``log1p`` of the sum.
A free dim of a partial layout (``-1`` next to fixed ones) never counts as a change or a
mismatch (:mod:`hpo.features.layout.partial`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from hpo.data.load import LayoutGraph
from hpo.data.opcodes import CONVOLUTION, DOT, RESHAPE, TRANSPOSE
from hpo.features.layout.partial import MINOR_BITS, Layouts, disagree, mask_bits, pack, read_block
from hpo.features.layout.second_order import element_bytes

__all__ = [
    "NODE_GROUPS",
    "NodeStatic",
    "dim_sizes",
    "node_chunk",
    "node_names",
    "node_quantities",
    "node_static",
]

#: The op classes summed over, by suffix.
_CLASSES = ("all", "cd", "rt", "ot")
#: Per-node quantities: (name, is a byte total).
_QUANTITIES: tuple[tuple[str, bool], ...] = (
    ("out_padded_bytes", True),
    ("out_padded_bytes_by_type", True),
    ("in_padded_bytes", True),
    ("kernel_padded_bytes", True),
    ("out_changed_bytes", True),
    ("out_minor_changed_bytes", True),
    ("n_out_changed", False),
    ("in_mismatch_bytes", True),
    ("in_minor_mismatch_bytes", True),
    ("kernel_mismatch_bytes", True),
    ("out_consumer_mismatch_bytes", True),
    ("n_consumer_mismatch", False),
    ("n_consumer_minor_mismatch", False),
    ("region_out_padded_bytes", True),
    ("region_in_padded_bytes", True),
    ("out_lanes_unaligned_bytes", True),
    ("out_rows_unaligned_bytes", True),
)
#: Cells ``(configs x nodes)`` of one pass: a chunk of a graph with many configurable nodes
#: is cut into passes of at most this many, so the memory of a pass stays bounded.
_PASS_CELLS = 1 << 19


def node_names() -> list[str]:
    """Column names of :func:`node_chunk`, in order."""
    return [f"nd_{q}_{c}" for q, _ in _QUANTITIES for c in _CLASSES]


#: Every ``nd_`` column is in the ``node_aggregates`` feature group.
NODE_GROUPS: dict[str, str] = dict.fromkeys(node_names(), "node_aggregates")


@dataclass(frozen=True)
class NodeStatic:
    """What the ``nd_`` columns need of a graph beside its configs (``nc`` configurable
    nodes; ``E`` edges from a configurable node to a consumer)."""

    classes: np.ndarray  # (4, nc) bool: all, conv/dot, reshape/transpose, other
    out: _Tensor  # each configurable node's output
    op0: _Tensor  # its first operand (zero bytes where none)
    op1: _Tensor  # its second operand
    op0_cfg: np.ndarray  # (nc,) configurable index of the first operand, or -1
    op1_cfg: np.ndarray  # (nc,) configurable index of the second operand, or -1
    edge_from: np.ndarray  # (E,) configurable index of the producer
    edge_to_cfg: np.ndarray  # (E,) configurable index of the consumer, or -1
    edge_slot: np.ndarray  # (E,) which operand of the consumer (0, 1, 2+)
    edge_default: np.ndarray  # (E, 6) int8 the consumer's default layout (non-configurable)
    edge_usable: np.ndarray  # (E,) False: a non-configurable consumer of another rank
    region_out: np.ndarray  # (nc,) bytes of the same-shape region at the output
    region_in: np.ndarray  # (nc,) bytes of the same-shape region at the first operand
    consumers: csr_matrix  # (E, nc) sums edges per producer


@dataclass(frozen=True)
class _Tensor:
    dims: np.ndarray  # (nc, 6) float, 0 past the rank
    rank: np.ndarray  # (nc,)
    default: np.ndarray  # (nc, 6) int8, -1 past the rank
    nbytes: np.ndarray  # (nc,) bytes (0 where there is no tensor)
    rows: np.ndarray  # (nc,) rows of a tile of its element type (8, 16 or 32)


def _defaults(node_feat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dims, rank and default layout (``node_feat[134:140]`` if a permutation, else XLA's
    major-to-minor default) of every node."""
    dims = np.maximum(node_feat[:, 21:27].astype(np.float64), 0.0)
    rank = np.count_nonzero(dims > 0, axis=1)
    mask = np.arange(6)[None, :] < rank[:, None]
    cand = node_feat[:, 134:140].astype(np.int64)
    xla = np.where(mask, rank[:, None] - 1 - np.arange(6)[None, :], -1)
    is_perm = (np.sort(np.where(mask, cand, 99), axis=1) == np.where(mask, np.arange(6), 99)).all(1)
    return dims, rank, np.where(is_perm[:, None] & mask, cand, xla).astype(np.int8)


def _tensor(nodes: np.ndarray, dims: np.ndarray, rank: np.ndarray, default: np.ndarray,
            nbytes: np.ndarray, elem: np.ndarray) -> _Tensor:  # fmt: skip
    """The tensors written by ``nodes`` (-1: none, which has no bytes)."""
    safe = np.maximum(nodes, 0)
    there = nodes >= 0
    return _Tensor(
        dims=np.where(there[:, None], dims[safe], 0.0),
        rank=np.where(there, rank[safe], 0),
        default=np.where(there[:, None], default[safe], -1).astype(np.int8),
        nbytes=np.where(there, nbytes[safe], 0.0),
        rows=np.clip(32 / np.maximum(elem[safe], 1), 8, 32),
    )


def _operands(edge_index: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Consumer-sorted edges with each edge's operand slot, and every node's first two
    operands (-1 where none)."""
    order = np.argsort(edge_index[:, 0], kind="stable")
    users, producers = edge_index[order, 0], edge_index[order, 1]
    first = np.r_[True, users[1:] != users[:-1]] if len(users) else np.zeros(0, dtype=bool)
    start = np.flatnonzero(first)
    slot = np.arange(len(users)) - start[np.cumsum(first) - 1] if len(users) else users
    op = np.full((2, n), -1, dtype=np.int64)
    for s in (0, 1):
        op[s, users[slot == s]] = producers[slot == s]
    return np.stack([users, producers, slot], axis=1), op[0], op[1]


def _regions(graph: LayoutGraph, dims: np.ndarray, rank: np.ndarray, cfg: np.ndarray) -> np.ndarray:
    """Component label of every node in the graph of the edges between non-configurable
    tensors of one shape (a configurable node, or a scalar, is a component of its own)."""
    e = graph.edge_index
    n = graph.n_nodes
    keep = (cfg[e[:, 0]] < 0) & (cfg[e[:, 1]] < 0) & (rank[e[:, 0]] > 0)
    keep &= (dims[e[:, 0]] == dims[e[:, 1]]).all(axis=1)
    a, b = e[keep, 0], e[keep, 1]
    adjacency = csr_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    _, labels = connected_components(adjacency, directed=False)
    return labels


def node_static(graph: LayoutGraph) -> NodeStatic:
    """The config-independent parts of the ``nd_`` columns of one graph."""
    nf = graph.node_feat
    n = graph.n_nodes
    ids = graph.node_config_ids
    nc = len(ids)
    dims, rank, default = _defaults(nf)
    elem = element_bytes(nf)
    volume = np.where(np.arange(6)[None, :] < rank[:, None], dims, 1.0).prod(axis=1)
    nbytes = volume * elem
    cfg = np.full(n, -1, dtype=np.int64)
    cfg[ids] = np.arange(nc)
    edges, op0, op1 = _operands(graph.edge_index, n)
    ops = graph.node_opcode[ids]
    cd = (ops == CONVOLUTION) | (ops == DOT)
    rt = (ops == RESHAPE) | (ops == TRANSPOSE)
    # consumers of configurable nodes: what each wants of the producer's output
    of_cfg = cfg[edges[:, 1]] >= 0
    users, producers, slot = edges[of_cfg, 0], edges[of_cfg, 1], edges[of_cfg, 2]
    to_cfg = cfg[users]
    usable = (to_cfg >= 0) | (rank[users] == rank[producers])
    edge_from = cfg[producers]
    consumers = csr_matrix(
        (np.ones(len(edge_from)), (np.arange(len(edge_from)), edge_from)),
        shape=(len(edge_from), nc),
    )
    # the same-shape regions at each configurable node's output and first operand
    labels = _regions(graph, dims, rank, cfg)
    comp_bytes = np.bincount(labels, weights=np.where(cfg < 0, nbytes, 0.0))
    region_out = np.zeros(nc)
    same = of_cfg & (cfg[edges[:, 0]] < 0)
    same &= (dims[edges[:, 0]] == dims[edges[:, 1]]).all(axis=1)
    # each component counted once per producer
    pairs = np.unique(np.stack([cfg[edges[same, 1]], labels[edges[same, 0]]], axis=1), axis=0)
    if len(pairs):
        np.add.at(region_out, pairs[:, 0], comp_bytes[pairs[:, 1]])
    has0 = (op0[ids] >= 0) & (cfg[np.maximum(op0[ids], 0)] < 0)
    region_in = np.where(has0, comp_bytes[labels[np.maximum(op0[ids], 0)]], 0.0)
    tensor = {"dims": dims, "rank": rank, "default": default, "nbytes": nbytes, "elem": elem}
    return NodeStatic(
        classes=np.stack([np.ones(nc, dtype=bool), cd, rt, ~(cd | rt)]),
        out=_tensor(ids, **tensor),
        op0=_tensor(op0[ids], **tensor),
        op1=_tensor(op1[ids], **tensor),
        op0_cfg=np.where(op0[ids] >= 0, cfg[np.maximum(op0[ids], 0)], -1),
        op1_cfg=np.where(op1[ids] >= 0, cfg[np.maximum(op1[ids], 0)], -1),
        edge_from=edge_from,
        edge_to_cfg=to_cfg,
        edge_slot=slot,
        edge_default=default[users],
        edge_usable=usable,
        region_out=region_out,
        region_in=region_in,
        consumers=consumers,
    )


def dim_sizes(dims: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``dims[j, idx[k, j]]``; 1 where the index is free or past the rank (the size of the dim
    a layout puts at a position, e.g. :attr:`Layouts.minor`'s)."""
    safe = np.clip(idx, 0, 5).astype(np.int64)
    vals = np.take_along_axis(
        np.broadcast_to(dims, (idx.shape[0], *dims.shape)), safe[..., None], -1
    )
    return np.where((idx >= 0) & (vals[..., 0] > 0), vals[..., 0], 1.0)


def _padded(t: _Tensor, lay: Layouts) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bytes padded to 128 x 8 and to 128 x (rows of the type) tiles, and the lane and row
    ratios, of tensors ``t`` under layouts ``lay``."""
    d0 = dim_sizes(t.dims, lay.minor[..., 0])
    d1 = np.where(t.rank[None] >= 2, dim_sizes(t.dims, lay.minor[..., 1]), 1.0)
    lanes = np.ceil(d0 / 128) * 128 / d0
    rows8 = np.ceil(d1 / 8) * 8 / d1
    rows_t = np.ceil(d1 / t.rows[None]) * t.rows[None] / d1
    return t.nbytes * lanes * rows8, t.nbytes * lanes * rows_t, lanes, rows8


def _produced(
    st_default: np.ndarray, producer_cfg: np.ndarray, out: Layouts
) -> tuple[np.ndarray, np.ndarray]:
    """Packed layouts the producers write: a configurable one's chosen output layout, another's
    default (``(k, nc)`` code and care)."""
    code, care = pack(st_default)
    k = out.code.shape[0]
    code, care = (
        np.broadcast_to(code, (k, len(code))).copy(),
        np.broadcast_to(care, (k, len(care))).copy(),
    )
    conf = producer_cfg >= 0
    code[:, conf] = out.code[:, producer_cfg[conf]]
    care[:, conf] = out.care[:, producer_cfg[conf]]
    return code, care


def node_quantities(raw: np.ndarray, st: NodeStatic) -> np.ndarray:
    """Per-node quantities ``(k, nc, Q)`` of configs ``raw`` (int8 ``(k, nc, 18)``), before
    they are summed per op class: what a model of one node's cost reads (``bench/
    bench_node_sum.py``). Bytes are on a linear scale; the columns are in
    :func:`node_names`' order of quantities."""
    out = read_block(raw[..., 0:6], st.out.default, st.out.rank)
    inp = read_block(raw[..., 6:12], st.op0.default, st.op0.rank)
    ker = read_block(raw[..., 12:18], st.op1.default, st.op1.rank)
    out_pb, out_pbt, lanes, rows8 = _padded(st.out, out)
    in_pb, _, in_lanes, in_rows = _padded(st.op0, inp)
    ker_pb = _padded(st.op1, ker)[0]
    out_bits = mask_bits(np.arange(6)[None, :] < st.out.rank[:, None])[None]
    dft = pack(st.out.default)
    changed = disagree((out.code, out.care), dft, out_bits)
    minor_changed = disagree((out.code, out.care), dft, out_bits & MINOR_BITS)
    in_bits = mask_bits(np.arange(6)[None, :] < st.op0.rank[:, None])[None]
    made0 = _produced(st.op0.default, st.op0_cfg, out)
    in_mis = disagree((inp.code, inp.care), made0, in_bits) & (st.op0.nbytes > 0)[None]
    in_minor = disagree((inp.code, inp.care), made0, in_bits & MINOR_BITS) & (st.op0.nbytes > 0)
    ker_bits = mask_bits(np.arange(6)[None, :] < st.op1.rank[:, None])[None]
    made1 = _produced(st.op1.default, st.op1_cfg, out)
    ker_mis = disagree((ker.code, ker.care), made1, ker_bits) & (st.op1.nbytes > 0)[None]
    cons_any, cons_minor = _consumer_mismatch(out, inp, ker, st)
    fields = (
        out_pb,
        out_pbt,
        in_pb,
        ker_pb,
        changed * st.out.nbytes,
        minor_changed * st.out.nbytes,
        changed.astype(np.float64),
        in_mis * st.op0.nbytes,
        in_minor * st.op0.nbytes,
        ker_mis * st.op1.nbytes,
        (cons_any > 0) * st.out.nbytes,
        cons_any,
        cons_minor,
        st.region_out * lanes * rows8,
        st.region_in * in_lanes * in_rows,
        (lanes > 1.0) * st.out.nbytes,
        (rows8 > 1.0) * st.out.nbytes,
    )
    return np.stack(np.broadcast_arrays(*fields), axis=-1)


def _consumer_mismatch(
    out: Layouts, inp: Layouts, ker: Layouts, st: NodeStatic
) -> tuple[np.ndarray, np.ndarray]:
    """Per node, how many consumers want its output in another layout (anywhere, and in the
    two most minor positions)."""
    k, nc = out.code.shape
    n_edges = len(st.edge_from)
    if n_edges == 0:
        return np.zeros((k, nc)), np.zeros((k, nc))
    code, care = pack(st.edge_default)
    code = np.broadcast_to(code, (k, n_edges)).copy()
    care = np.broadcast_to(care, (k, n_edges)).copy()
    to = st.edge_to_cfg
    for wanted, chosen in (
        (st.edge_slot == 0, inp),
        (st.edge_slot == 1, ker),
        (st.edge_slot > 1, out),
    ):
        sel = (to >= 0) & wanted
        code[:, sel] = chosen.code[:, to[sel]]
        care[:, sel] = chosen.care[:, to[sel]]
    mine = (out.code[:, st.edge_from], out.care[:, st.edge_from])
    bits = mask_bits(np.arange(6)[None, :] < st.out.rank[st.edge_from][:, None])[None]
    usable = st.edge_usable[None]
    any_mis = (disagree(mine, (code, care), bits) & usable).astype(np.float64)
    minor_mis = (disagree(mine, (code, care), bits & MINOR_BITS) & usable).astype(np.float64)
    per = st.consumers
    return np.asarray(any_mis @ per), np.asarray(minor_mis @ per)


def node_chunk(raw: np.ndarray, st: NodeStatic) -> np.ndarray:
    """The ``nd_`` columns ``(k, len(node_names()))`` of one int8 chunk ``(k, nc, 18)``."""
    k, nc = raw.shape[:2]
    step = max(1, _PASS_CELLS // max(nc, 1))
    out = np.empty((k, len(_QUANTITIES) * len(_CLASSES)))
    is_bytes = np.array([b for _, b in _QUANTITIES])
    classes = st.classes.astype(np.float64)  # (4, nc)
    for a in range(0, k, step):
        per_node = node_quantities(raw[a : a + step], st)  # (k', nc, Q)
        sums = np.einsum("knq,cn->kqc", per_node, classes)  # (k', Q, 4)
        sums[:, is_bytes] = np.log1p(sums[:, is_bytes])
        out[a : a + step] = sums.reshape(len(sums), -1)
    return out
