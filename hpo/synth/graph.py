"""Synthetic HLO graphs for the generator: opcodes, shapes, edges, ``node_feat``; npz writing.

Shared by :mod:`hpo.synth.tile` and :mod:`hpo.synth.layout`. Opcode ids are the TpuGraphs
ids (``hlo_opcode.h`` of the dataset's tools), element-type columns follow its featurizer
(column 13 f32, 15 bf16). Everything is vectorised over nodes; a graph is fully determined
by the ``numpy.random.Generator`` passed in.

:class:`NodeTable` re-derives shapes, layouts and first operands from the three stored arrays
only, so the hidden cost laws are functions of what a file holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpo.data.opcodes import CONVOLUTION, DOT, PARAMETER, TRANSPOSE
from hpo.synth.hlo_tables import (
    _ARITY_HI,
    _ARITY_LO,
    _BATCH_SIZES,
    _DERIVED,
    _DIM_POOL,
    _INHERIT,
    _MAX_VOLUME,
    _NONE,
    _OPCODE_MIX,
    _RANK_P,
    _SHAPE_CLASS,
    _SMALL_DIMS,
    COMPARE,
    CONSTANT,
    IOTA,
    REDUCE_WINDOW,
    TUPLE,
)

# node_feat columns.
COL_IS_ROOT = 0
COL_ETYPE_PRED, COL_ETYPE_S32, COL_ETYPE_F32, COL_ETYPE_BF16, COL_ETYPE_TUPLE = 3, 6, 13, 15, 18
COL_ETYPE_S8, COL_ETYPE_F16 = 4, 12
COL_ETYPES = 2  # 2-20 one-hot element type
COL_SHAPE = 21  # 21-26 dims, 27 sum, 28 product
COL_TUPLE_SIZE, COL_PARAM_NUMBER, COL_DIMENSIONS = 29, 30, 31
COL_WINDOW_SIZE, COL_WINDOW_STRIDE = 37, 45  # 6 dims + sum + product each
COL_CONV_DIMS = 93  # 93 in-batch, 94 in-feature, 95-98 in-spatial, 99/100 kernel in/out feature,
COL_CONV_OUT_FEATURE = 106  # 101-104 kernel spatial, 105 out-batch, 106 out-feature
COL_FEATURE_GROUPS, COL_BATCH_GROUPS = 107, 108
COL_LAYOUT = 134  # 134-139 minor_to_major, zero padded
NODE_FEAT_DIM = 140
MAX_RANK = 6

# Appended types (s8, f16) come last so the first-order law's argmax over one-hots is unchanged.
_ETYPE_COLS = np.array(
    [COL_ETYPE_PRED, COL_ETYPE_S32, COL_ETYPE_F32, COL_ETYPE_BF16, COL_ETYPE_S8, COL_ETYPE_F16]
)
_ETYPE_BYTES = np.array([1.0, 4.0, 4.0, 2.0, 1.0, 2.0])
_PRED, _S32, _F32, _BF16, _S8 = 0, 1, 2, 3, 4
#: The hidden layout laws ``hpo data synth --law`` can draw.
LAWS: tuple[str, ...] = ("second-order", "first-order")


@dataclass(frozen=True, eq=False)
class HloGraph:
    """The stored arrays of one synthetic graph (``node_splits`` as a flat vector).

    ``node_splits`` has upstream's encoder form: 0, the first node of every further
    computation, and finally ``n`` (every real file ends with n).
    """

    node_feat: np.ndarray
    node_opcode: np.ndarray
    edge_index: np.ndarray
    node_splits: np.ndarray


@dataclass(frozen=True, eq=False)
class NodeTable:
    """Per-node facts re-derived from ``node_feat``, ``node_opcode`` and ``edge_index``.

    ``layouts`` holds each node's stored minor_to_major with -1 past its rank;
    ``first_operand`` is -1 for nodes without operands; ``shape_preserving`` marks opcodes
    whose output has the shape of the first operand.
    """

    shapes: np.ndarray
    ranks: np.ndarray
    volumes: np.ndarray
    layouts: np.ndarray
    elem_bytes: np.ndarray
    first_operand: np.ndarray
    second_operand: np.ndarray
    shape_preserving: np.ndarray

    @classmethod
    def from_arrays(
        cls, node_feat: np.ndarray, node_opcode: np.ndarray, edge_index: np.ndarray
    ) -> NodeTable:
        """Build the table from the arrays of a graph file."""
        n = node_feat.shape[0]
        shapes = node_feat[:, COL_SHAPE : COL_SHAPE + MAX_RANK].astype(np.int64)
        ranks = (shapes > 0).sum(axis=1)
        pos = np.arange(MAX_RANK)
        layouts = np.where(
            pos < ranks[:, None], node_feat[:, COL_LAYOUT : COL_LAYOUT + MAX_RANK], -1
        ).astype(np.int64)
        onehot = node_feat[:, _ETYPE_COLS]
        elem_bytes = np.where(onehot.any(axis=1), _ETYPE_BYTES[onehot.argmax(axis=1)], 4.0)
        operands = []
        for slot in (0, 1):  # first and second operand: the k-th edge of each consumer
            out = np.full(n, -1, dtype=np.int64)
            if edge_index.size:
                u, v = edge_index[:, 0], edge_index[:, 1]
                starts = np.flatnonzero(np.r_[True, u[1:] != u[:-1]])
                take = starts + slot
                ok = take < np.r_[starts[1:], len(u)]
                out[u[take[ok]]] = v[take[ok]]
            operands.append(out)
        return cls(
            shapes=shapes,
            ranks=ranks,
            volumes=np.where(shapes > 0, shapes, 1).prod(axis=1).astype(np.float64),
            layouts=layouts,
            elem_bytes=elem_bytes,
            first_operand=operands[0],
            second_operand=operands[1],
            shape_preserving=_SHAPE_CLASS[node_opcode.astype(np.int64)] == _INHERIT,
        )


def canonical_layouts(ranks: np.ndarray) -> np.ndarray:
    """XLA's default minor_to_major ``[r-1, ..., 0]`` per rank, -1 padded to 6 columns."""
    pos = np.arange(MAX_RANK)
    return np.where(pos < ranks[..., None], ranks[..., None] - 1 - pos, -1)


def _computation_starts(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    slots = max(n // 8, 1)
    k = int(min(k, slots))
    cuts = np.sort(rng.choice(np.arange(1, slots), size=k - 1, replace=False))
    return np.r_[0, cuts * 8].astype(np.int64)


def _draw_opcodes(
    rng: np.random.Generator, n: int, source: str, pos: np.ndarray, n_params: np.ndarray
) -> np.ndarray:
    mix = _OPCODE_MIX[source]
    ops = np.fromiter(mix.keys(), dtype=np.int64)
    weights = np.fromiter(mix.values(), dtype=np.float64)
    opcode = rng.choice(ops, size=n, p=weights / weights.sum())
    opcode[pos < n_params] = PARAMETER
    return opcode


def _draw_edges(
    rng: np.random.Generator, opcode: np.ndarray, pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    n = len(opcode)
    arity = np.minimum(rng.integers(_ARITY_LO[opcode], _ARITY_HI[opcode] + 1), pos)
    u = np.repeat(np.arange(n), arity)
    slot = np.arange(len(u)) - np.repeat(np.cumsum(arity) - arity, arity)
    near = rng.geometric(0.55, size=len(u))
    far = rng.integers(1, np.maximum(pos[u], 1) + 1)
    offset = np.where(slot == 0, near, np.where(rng.random(len(u)) < 0.5, near + 1, far))
    v = u - np.minimum(offset, pos[u])
    _, first = np.unique(u * n + v, return_index=True)
    keep = np.sort(first)
    edges = np.stack([u[keep], v[keep]], axis=1).astype(np.int64)
    first_operand = np.full(n, -1, dtype=np.int64)
    first_operand[u[slot == 0]] = v[slot == 0]
    return edges, first_operand


def _draw_shapes(rng: np.random.Generator, opcode: np.ndarray, source: str) -> np.ndarray:
    n = len(opcode)
    ranks = rng.choice(MAX_RANK, size=n, p=_RANK_P[source])
    ranks[opcode == CONVOLUTION] = np.where(rng.random(n) < 0.9, 4, 5)[opcode == CONVOLUTION]
    ranks[opcode == DOT] = rng.integers(2, 4, size=n)[opcode == DOT]
    ranks[opcode == CONSTANT] = np.where(rng.random(n) < 0.6, 0, ranks)[opcode == CONSTANT]
    sizes, weights = (np.asarray(x, dtype=np.float64) for x in _DIM_POOL[source])
    dims = sizes[rng.choice(len(sizes), size=(n, MAX_RANK), p=weights / weights.sum())]
    dims = dims.astype(np.int64)
    batch = rng.choice(_BATCH_SIZES)
    dims[:, 0] = np.where(rng.random(n) < 0.5, batch, dims[:, 0])
    dims[np.arange(MAX_RANK) >= ranks[:, None]] = 0
    for _ in range(12):  # shrink the largest dim of over-sized tensors
        over = np.flatnonzero(np.where(dims > 0, dims, 1).prod(axis=1) > _MAX_VOLUME)
        if not over.size:
            break
        dims[over, dims[over].argmax(axis=1)] = rng.choice(_SMALL_DIMS, size=len(over))
    return dims


def _resolve_shapes(
    rng: np.random.Generator, opcode: np.ndarray, first_operand: np.ndarray, fresh: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Give shape-preserving nodes their source's shape; transpose/reduce their operand's."""
    n = len(opcode)
    idx = np.arange(n)
    klass = _SHAPE_CLASS[opcode]
    fresh = np.where((klass == _NONE)[:, None], 0, fresh)
    src_ok = (first_operand >= 0) & (klass[np.maximum(first_operand, 0)] != _NONE)
    root = np.where((klass == _INHERIT) & src_ok, first_operand, idx)
    for _ in range(int(np.ceil(np.log2(max(n, 2)))) + 1):
        root = root[root]
    derived = np.flatnonzero((klass == _DERIVED) & src_ok)
    is_transpose = opcode[derived] == TRANSPOSE
    keys = rng.random((len(derived), MAX_RANK))
    pick = rng.random(len(derived))
    pos = np.arange(MAX_RANK)
    dimensions = np.zeros((n, MAX_RANK), dtype=np.int64)
    shapes = fresh.copy()
    for _ in range(3):  # a few passes settle chains of transposes and reduces
        src = shapes[root][first_operand[derived]]
        rank = (src > 0).sum(axis=1)
        perm = np.argsort(np.where(pos < rank[:, None], keys, 2.0), axis=1, kind="stable")
        drop = np.minimum((pick * rank).astype(np.int64), np.maximum(rank - 1, 0))
        squeeze = np.argsort((pos == drop[:, None]) | (pos >= rank[:, None]), axis=1, kind="stable")
        kept = np.take_along_axis(src, squeeze, axis=1)
        kept[pos >= np.maximum(rank - 1, 0)[:, None]] = 0
        shapes[derived] = np.where(
            is_transpose[:, None], np.take_along_axis(src, perm, axis=1), kept
        )
        dimensions[derived] = np.where(
            is_transpose[:, None],
            np.where(pos < rank[:, None], perm, 0),
            np.where(pos == 0, drop[:, None], 0),
        )
    return shapes[root], dimensions


def build_hlo_graph(
    rng: np.random.Generator,
    n_nodes: int,
    *,
    source: str,
    n_computations: int = 1,
    law: str = "first-order",
) -> HloGraph:
    """Draw one HLO graph in topological order.

    Parameters
    ----------
    rng
        The graph's random generator.
    n_nodes
        Number of nodes (at least 8).
    source
        ``"xla"`` (convolution networks) or ``"nlp"`` (transformers): opcode and shape mix.
    n_computations
        Number of HLO computations; each starts with 1-4 parameters and ends with its root.
    law
        ``"second-order"`` re-draws element types (a bf16/f32 mix with a few 8-bit tensors)
        and writes the spatial dimension numbers of 3-D convolutions, after every draw of the
        first-order graph, so ``"first-order"`` graphs keep the first-order draws.
    """
    n = int(n_nodes)
    starts = _computation_starts(rng, n, n_computations)
    comp = np.searchsorted(starts, np.arange(n), side="right") - 1
    pos = np.arange(n) - starts[comp]
    ends = np.r_[starts[1:], n] - 1
    n_params = rng.integers(1, 5, size=len(starts))[comp]
    opcode = _draw_opcodes(rng, n, source, pos, n_params)
    edges, first_operand = _draw_edges(rng, opcode, pos)
    shapes, dimensions = _resolve_shapes(
        rng, opcode, first_operand, _draw_shapes(rng, opcode, source)
    )
    ranks = (shapes > 0).sum(axis=1)

    etype = np.where(rng.random() < (0.3 if source == "xla" else 0.6), _BF16, _F32)
    etype = np.where(rng.random(n) < 0.88, etype, rng.choice([_F32, _BF16, _S32], size=n))
    etype[opcode == COMPARE] = _PRED
    etype[opcode == IOTA] = _S32

    layouts = canonical_layouts(ranks)
    swap = (ranks >= 2) & (rng.random(n) < 0.12)
    layouts[swap, :2] = layouts[swap, 1::-1]
    nchw = source == "xla" and rng.random() < 0.35
    conv = opcode == CONVOLUTION
    feature_dim = np.where(nchw, 1, ranks - 1)
    nchw_layout = conv & nchw & (ranks == 4) & (rng.random(n) < 0.5)
    layouts[nchw_layout, :4] = (1, 3, 2, 0)

    feat = np.zeros((n, NODE_FEAT_DIM), dtype=np.float32)
    feat[ends, COL_IS_ROOT] = 1.0
    feat[np.arange(n), _ETYPE_COLS[etype]] = 1.0
    tuples = opcode == TUPLE
    feat[tuples, _ETYPE_COLS[etype[tuples]]] = 0.0
    feat[tuples, COL_ETYPE_TUPLE] = 1.0
    feat[tuples, COL_TUPLE_SIZE] = np.bincount(edges[:, 0], minlength=n)[tuples]
    _put_sequence(feat, COL_SHAPE, shapes, product_of_empty=np.where(tuples, 0.0, 1.0))
    feat[opcode == PARAMETER, COL_PARAM_NUMBER] = pos[opcode == PARAMETER]
    feat[:, COL_DIMENSIONS : COL_DIMENSIONS + MAX_RANK] = dimensions
    windowed = conv | (opcode == REDUCE_WINDOW)
    window = np.where(
        windowed[:, None] & (np.arange(MAX_RANK) < 2), rng.choice([1, 3, 3, 7], size=n)[:, None], 0
    )
    stride = np.where(window > 0, rng.choice([1, 1, 2], size=n)[:, None], 0)
    _put_sequence(feat, COL_WINDOW_SIZE, window, product_of_empty=windowed * 1.0)
    _put_sequence(feat, COL_WINDOW_STRIDE, stride, product_of_empty=windowed * 1.0)
    spatial = np.where(nchw, (2, 3), (1, 2))
    conv_dims = (0, 0, spatial[0], spatial[1], 0, 0, 2, 3, 0, 1, 0, 0, 0, 0)
    feat[conv, COL_CONV_DIMS : COL_CONV_DIMS + 14] = conv_dims
    feat[conv, COL_CONV_DIMS + 1] = feature_dim[conv]
    feat[conv, COL_CONV_OUT_FEATURE] = feature_dim[conv]
    feat[conv, COL_FEATURE_GROUPS] = 1.0
    feat[conv, COL_BATCH_GROUPS] = 1.0
    feat[:, COL_LAYOUT : COL_LAYOUT + MAX_RANK] = np.maximum(layouts, 0)
    if law == "second-order":
        _second_order_node_feat(rng, feat, opcode, ranks, source)
    return HloGraph(
        node_feat=feat,
        node_opcode=opcode.astype(np.uint8),
        edge_index=edges,
        node_splits=np.r_[starts, n].astype(np.int64),
    )


def _second_order_node_feat(
    rng: np.random.Generator, feat: np.ndarray, opcode: np.ndarray, ranks: np.ndarray, source: str
) -> None:
    """Element types and conv dimension numbers of the second-order law, in place.

    Mixed precision as on TPUs: each graph has a dominant float type (bf16 more often in nlp),
    a share of the other float type, a few int8 (quantized) and int32 tensors; compares give
    pred, iota int32. The element type decides the hardware tile (8, 16 or 32 rows), so the
    mix must vary inside a graph for that effect to be learnable.
    """
    n = len(opcode)
    dominant = _BF16 if rng.random() < (0.45 if source == "xla" else 0.7) else _F32
    other = _F32 if dominant == _BF16 else _BF16
    etype = rng.choice([dominant, other, _S8, _S32], size=n, p=[0.74, 0.18, 0.05, 0.03])
    etype[opcode == COMPARE] = _PRED
    etype[opcode == IOTA] = _S32
    tuples = opcode == TUPLE
    feat[~tuples, COL_ETYPES:21] = 0.0
    feat[np.flatnonzero(~tuples), _ETYPE_COLS[etype[~tuples]]] = 1.0
    conv3d = (opcode == CONVOLUTION) & (ranks == 5)
    nchw = feat[:, COL_CONV_DIMS + 1] == 1  # input feature dim 1: channels first
    spatial = np.where(nchw[:, None], (2, 3, 4), (1, 2, 3))
    feat[conv3d, COL_CONV_DIMS + 2 : COL_CONV_DIMS + 5] = spatial[conv3d]
    feat[conv3d, COL_CONV_DIMS + 6 : COL_CONV_DIMS + 8] = (3, 4)  # kernel DHWIO in/out feature
    feat[conv3d, COL_CONV_DIMS + 8 : COL_CONV_DIMS + 11] = (0, 1, 2)


def _put_sequence(
    feat: np.ndarray, col: int, values: np.ndarray, product_of_empty: np.ndarray
) -> None:
    """Write 6 leading values, their sum and their product (of the non-zero ones)."""
    feat[:, col : col + MAX_RANK] = values
    feat[:, col + MAX_RANK] = values.sum(axis=1)
    nonempty = (values > 0).any(axis=1)
    feat[:, col + MAX_RANK + 1] = np.where(
        nonempty, np.where(values > 0, values, 1).prod(axis=1), product_of_empty
    )
