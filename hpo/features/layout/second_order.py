"""Second-order layout features: the TPU costs beyond 8 x 128 padding and copies.

Each group below is a cost a real XLA/TPU compilation has that the first-order features
(:mod:`hpo.features.layout.extract`) cannot see; docs/FEATURES.md gives the table of groups and the
``node_feat`` / ``node_config_feat`` columns each reads. Every sum is weighted by the tensor's
bytes (volume, ``node_feat`` 28 re-derived from 21-26, times element size) so a tree can learn
how much each effect costs, and split per opcode group (conv/dot, reshape/transpose, other)
where the cost differs by group:

- ``etype_padding``: volume padded to the element type's tile (32-bit 8 rows, 16-bit 16,
  8-bit 32; ``node_feat`` 2-20);
- ``mxu``: conv/dot outputs (and conv kernels) whose feature dimension is most minor
  (``node_feat`` 106 and 100; for dot the last dimension);
- ``bitcast``: reshapes/transposes that keep the most-minor dimension in place (free) or move
  the whole tensor (transpose permutation ``node_feat`` 31-36);
- ``mismatch_class``: producer/consumer and sibling disagreements split into the two
  most-minor positions (a real relayout) and major positions only (a cheap copy);
- ``reader_copy``: configurable nodes off their default layout read by a non-configurable
  node, which forces a copy;
- ``kernel_padding`` (version 7, read by the learned prior only): conv kernels padded to
  their tile under their own layout, in total and where the feature dim is not most minor.

Everything is computed per chunk of configs on ``(k, nc)`` arrays, like the first-order
features: no Python loop over configs or nodes. Partial layouts (-1 next to fixed dims) are
read as :mod:`hpo.features.layout.partial` says: a free dim is never a mismatch, and sizes
and "most minor" read the completed layout.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpo.data.load import LayoutGraph
from hpo.data.opcodes import CONVOLUTION, DOT, TRANSPOSE
from hpo.features.layout.cost_estimate import (
    CHEAP_COPY_WEIGHT,
    CONVDOT_WEIGHT,
    ESTIMATE_GROUPS,
    EstimateInputs,
    cost_estimate_columns,
)
from hpo.features.layout.op_class import OP_CLASS_GROUPS, op_class_columns, op_class_of
from hpo.features.layout.partial import (
    MAJOR_BITS,
    MINOR_BITS,
    Layouts,
    disagree,
    pack,
)
from hpo.features.layout.shapes import NodeShapes

__all__ = [
    "SECOND_ORDER_GROUPS",
    "SecondOrderStatic",
    "second_order_chunk",
    "second_order_names",
    "second_order_static",
]

#: Feature group of each second-order per-config column, in column order.
SECOND_ORDER_GROUPS: dict[str, str] = {
    "so_log_bytes_padded_convdot": "etype_padding",
    "so_log_bytes_padded_reshape": "etype_padding",
    "so_log_bytes_padded_other": "etype_padding",
    "so_log_bytes_pad_waste": "etype_padding",
    "so_log_input_bytes_padded": "etype_padding",
    "so_frac_feature_minor": "mxu",
    "so_vw_feature_minor": "mxu",
    "so_log_feature_not_minor_bytes": "mxu",
    "so_frac_kernel_feature_minor": "mxu",
    "so_log_kernel_not_minor_bytes": "mxu",
    "so_n_reshape_move": "bitcast",
    "so_log_reshape_move_bytes": "bitcast",
    "so_log_reshape_bitcast_bytes": "bitcast",
    "so_n_mismatch_minor": "mismatch_class",
    "so_log_mismatch_minor_bytes": "mismatch_class",
    "so_n_mismatch_major": "mismatch_class",
    "so_log_mismatch_major_bytes": "mismatch_class",
    "so_log_sibling_minor_bytes": "mismatch_class",
    "so_log_sibling_major_bytes": "mismatch_class",
    "so_n_reader_copy_minor": "reader_copy",
    "so_log_reader_copy_minor_bytes": "reader_copy",
    "so_log_reader_copy_major_bytes": "reader_copy",
    # feature version 3: the same effects priced in bytes and added up (layout_cost_estimate)
    **ESTIMATE_GROUPS,
    # feature version 6: unweighted byte totals per op class, for the learned prior only
    **OP_CLASS_GROUPS,
    # feature version 7: conv kernels padded to the tile under their own layout
    "kp_log_kernel_bytes_padded": "kernel_padding",
    "kp_log_kernel_not_minor_bytes_padded": "kernel_padding",
}

# Bytes per element of the one-hot element type columns 2-20 (TpuGraphs featurizer order:
# 3 pred, 4 s8, 5 s16, 6 s32, 7 s64, 8 u8, 9 u16, 10 u32, 11 u64, 12 f16, 13 f32, 14 f64,
# 15 bf16, 16 c64, 17 c128, 18 tuple, 19/20 8-bit floats); unknown or no type: 4.
_ETYPE_BYTES = np.array(
    [4, 4, 4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8, 16, 4, 1, 1], dtype=np.float64
)


def second_order_names() -> list[str]:
    """Per-config column names of :func:`second_order_chunk`, in order (so, est, oc, kp)."""
    return list(SECOND_ORDER_GROUPS)


def element_bytes(node_feat: np.ndarray) -> np.ndarray:
    """Bytes per element of every node, from the one-hot element type (``node_feat`` 2-20)."""
    onehot = node_feat[:, 2:21]
    return np.where(onehot.any(axis=1), _ETYPE_BYTES[onehot.argmax(axis=1) + 2], 4.0)


@dataclass(frozen=True)
class SecondOrderStatic:
    """Config-independent facts per configurable node (``nc`` rows)."""

    out_bytes: np.ndarray  # (nc,) bytes per element of the output
    sublanes: np.ndarray  # (nc,) rows of the output's hardware tile
    feature_dim: np.ndarray  # (nc,) conv/dot feature dim, -1 otherwise
    kernel_feature: np.ndarray  # (nc,) conv kernel output-feature dim, -1 otherwise
    kernel_default: np.ndarray  # (nc, 6) kernel operand's default layout, -1 padded
    kernel_bytes: np.ndarray  # (nc,) kernel operand bytes x volume
    kernel_dims: np.ndarray  # (nc, 6) kernel operand dims (0 without a kernel)
    kernel_sublanes: np.ndarray  # (nc,) rows of the kernel's hardware tile
    in_dims: np.ndarray  # (nc, 6) first operand dims
    in_rank: np.ndarray  # (nc,)
    in_default: np.ndarray  # (nc, 6) first operand's stored layout, -1 padded
    in_work: np.ndarray  # (nc,) first operand bytes x volume (0 without one)
    in_sublanes: np.ndarray  # (nc,) rows of the first operand's hardware tile
    is_transpose: np.ndarray  # (nc,) bool
    perm: np.ndarray  # (nc, 6) transpose permutation (node_feat 31-36)
    comparable: np.ndarray  # (nc,) producer exists and has the first operand's shape
    reader: np.ndarray  # (nc,) read by a non-configurable node
    op_class: np.ndarray  # (nc,) index into layout_op_class.OP_CLASSES


def _operands(edge_index: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """First and second operand of every node (edge order), -1 when absent."""
    first = np.full(n, -1, dtype=np.int64)
    second = np.full(n, -1, dtype=np.int64)
    if len(edge_index):
        order = np.argsort(edge_index[:, 0], kind="stable")
        u, v = edge_index[order, 0], edge_index[order, 1]
        starts = np.flatnonzero(np.r_[True, u[1:] != u[:-1]])
        first[u[starts]] = v[starts]
        nxt = starts + 1
        ok = nxt < np.r_[starts[1:], len(u)]
        second[u[starts[ok]]] = v[nxt[ok]]
    return first, second


def _stored_layouts(node_feat: np.ndarray, rows: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Stored minor_to_major of ``rows`` (-1 past the rank); canonical if not a permutation."""
    mask = np.arange(6)[None, :] < rank[:, None]
    cand = node_feat[rows, 134:140].astype(np.int64)
    canonical = np.where(mask, rank[:, None] - 1 - np.arange(6)[None, :], -1)
    ok = (np.sort(np.where(mask, cand, 99), axis=1) == np.where(mask, np.arange(6), 99)).all(1)
    return np.where(ok[:, None] & mask, cand, canonical)


def second_order_static(
    graph: LayoutGraph, dims: np.ndarray, rank: np.ndarray, producer: np.ndarray
) -> SecondOrderStatic:
    """Pre-compute the second-order facts of one graph (``dims``/``rank``/``producer`` per
    configurable node, from :class:`hpo.features.layout.shapes.NodeShapes`)."""
    ids = graph.node_config_ids
    nf = graph.node_feat
    ops = graph.node_opcode[ids]
    nbytes = element_bytes(nf)
    tile_rows = 32.0 / np.clip(nbytes, 1.0, 4.0)  # of each node's hardware tile: 8, 16 or 32
    first, second = _operands(graph.edge_index, graph.n_nodes)
    f0, s0 = np.maximum(first[ids], 0), np.maximum(second[ids], 0)
    all_dims = np.maximum(nf[:, 21:27].astype(np.float64), 0.0)
    all_rank = np.count_nonzero(all_dims > 0, axis=1)
    all_volume = np.where(all_dims > 0, all_dims, 1.0).prod(axis=1)
    has_in = first[ids] >= 0
    in_dims = np.where(has_in[:, None], all_dims[f0], 0.0)
    in_rank = np.where(has_in, all_rank[f0], 0)
    is_conv = ops == CONVOLUTION
    has_k = is_conv & (second[ids] >= 0)
    feature_dim = np.where(
        is_conv, nf[ids, 106].astype(np.int64), np.where(ops == DOT, rank - 1, -1)
    )
    is_cfg = np.zeros(graph.n_nodes, dtype=bool)
    is_cfg[ids] = True
    reader = np.zeros(graph.n_nodes, dtype=bool)
    if len(graph.edge_index):
        u, v = graph.edge_index[:, 0], graph.edge_index[:, 1]
        reader[v[~is_cfg[u]]] = True
    prod = np.maximum(producer, 0)
    comparable = (producer >= 0) & has_in & (dims[prod] == in_dims).all(axis=1)
    return SecondOrderStatic(
        out_bytes=nbytes[ids],
        sublanes=tile_rows[ids],
        feature_dim=feature_dim,
        kernel_feature=np.where(has_k, nf[ids, 100].astype(np.int64), -1),
        kernel_default=np.where(has_k[:, None], _stored_layouts(nf, s0, all_rank[s0]), -1).astype(
            np.int8
        ),
        kernel_bytes=np.where(has_k, nbytes[s0] * all_volume[s0], 0.0),
        kernel_dims=np.where(has_k[:, None], all_dims[s0], 0.0),
        kernel_sublanes=tile_rows[s0],
        in_dims=in_dims,
        in_rank=in_rank,
        in_default=np.where(has_in[:, None], _stored_layouts(nf, f0, all_rank[f0]), -1).astype(
            np.int8
        ),
        in_work=np.where(has_in, all_volume[f0], 0.0) * nbytes[f0],
        in_sublanes=tile_rows[f0],
        is_transpose=ops == TRANSPOSE,
        perm=nf[ids, 31:37].astype(np.int8),
        comparable=comparable,
        reader=reader[ids],
        op_class=op_class_of(ops),
    )


def _classes(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Whether packed layouts ``a`` and ``b`` disagree in the two most-minor positions, and
    (if not) in the major ones only; a position either leaves free (-1) never counts."""
    minor = disagree(a, b, MINOR_BITS)
    return minor, ~minor & disagree(a, b, MAJOR_BITS)


def _gather(table: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``table[j, idx[k, j]]`` for a ``(nc, 7)`` table whose column 6 answers ``idx = -1``."""
    nc = table.shape[0]
    return table.ravel()[np.arange(nc) * 7 + np.where(idx < 0, 6, idx)]


def _with_fill(values: np.ndarray, fill: float) -> np.ndarray:
    """``values (nc, 6)`` with 0 (unused dims) replaced by ``fill`` and a 7th fill column."""
    return np.c_[np.where(values > 0, values, fill), np.full(len(values), fill)]


def _pad_ratio(d0: np.ndarray, d1: np.ndarray, sublanes: np.ndarray) -> np.ndarray:
    return np.ceil(d0 / 128) * 128 * np.ceil(d1 / sublanes) * sublanes / (d0 * d1)


def _log_sum(mask: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``log(1 + sum of weight over the nodes where mask``); ``(k,)``."""
    return np.log1p(np.where(mask, weight[None], 0.0).sum(axis=1))


def second_order_chunk(
    out: Layouts,
    operand: Layouts,
    kernel: Layouts,
    d0: np.ndarray,
    d1: np.ndarray,
    st: NodeShapes,
    so: SecondOrderStatic,
) -> np.ndarray:
    """Second-order per-config features of one chunk; ``(k, len(second_order_names()))``.

    ``out``, ``operand`` and ``kernel`` are a chunk's output, first-operand and kernel
    layouts with the compiler default resolved (:func:`hpo.features.layout.partial.read_block`
    over config dims 0-5 with the node's default, 6-11 with ``so.in_default`` and ``so.in_rank``,
    12-17 with ``so.kernel_default``; the roles read the same), ``d0``/``d1`` the sizes
    of the most-minor and second-minor output dims (1 past the rank), as the first-order
    features compute them. The ``est_*`` columns
    (:mod:`hpo.features.layout.cost_estimate`) are priced from the masks computed here, so the
    operands are gathered once.
    """
    convdot, reshape = st.convdot, st.reshape
    work = st.volume * so.out_bytes  # bytes of each output
    padded = work[None] * _pad_ratio(d0, d1, so.sublanes[None])
    other = ~(convdot | reshape)
    inp0, inp1 = operand.minor[..., 0], operand.minor[..., 1]
    in_dims = _with_fill(so.in_dims, 1.0)
    in_d0, in_d1 = _gather(in_dims, inp0), _gather(in_dims, inp1)
    in_work = so.in_work
    in_padded = in_work[None] * _pad_ratio(in_d0, in_d1, so.in_sublanes[None])

    feat_minor = convdot[None] & (out.minor[..., 0] == so.feature_dim[None])
    not_minor = convdot[None] & ~feat_minor
    has_k = so.kernel_feature >= 0
    ker = kernel.minor
    ker0 = ker[..., 0]
    ker_minor = has_k[None] & (ker0 == so.kernel_feature[None])
    # the kernel is a tensor in memory like the output: its layout pads it to the tile too
    ker_dims = _with_fill(so.kernel_dims, 1.0)
    ker_ratio = _pad_ratio(_gather(ker_dims, ker0), _gather(ker_dims, ker[..., 1]),
                           so.kernel_sublanes[None])  # fmt: skip
    ker_padded = np.where(has_k[None], so.kernel_bytes[None] * ker_ratio, 0.0)

    # Transpose: output dim out[0] reads input dim perm[out[0]]; a bitcast when that is the
    # input's most-minor dim. Reshape: when the most-minor runs have the same size.
    src = _gather(np.c_[so.perm, np.full(len(so.perm), -1)], out.minor[..., 0])
    bitcast = np.where(so.is_transpose[None], src == inp0, in_d0 == d0) & reshape[None]
    move = reshape[None] & ~bitcast

    prod = np.maximum(st.producer, 0)
    in_packed, out_packed = (operand.code, operand.care), (out.code, out.care)
    p_minor, p_major = _classes(in_packed, (out.code[:, prod], out.care[:, prod]))
    p_minor &= so.comparable[None]
    p_major &= so.comparable[None]
    has_sib = (st.sibling_first >= 0) & so.comparable
    sib = np.maximum(st.sibling_first, 0)
    s_minor, s_major = _classes(in_packed, (operand.code[:, sib], operand.care[:, sib]))
    s_minor &= has_sib[None]
    s_major &= has_sib[None]
    own = pack(st.default)
    r_minor, r_major = _classes(out_packed, (own[0][None], own[1][None]))
    r_minor &= so.reader[None]
    r_major &= so.reader[None]
    reader_work = work * np.where(convdot, CONVDOT_WEIGHT, 1.0)

    p_minor_bytes = np.where(p_minor, in_work[None], 0.0).sum(1)
    p_major_bytes = np.where(p_major, in_work[None], 0.0).sum(1)
    s_minor_bytes = np.where(s_minor, in_work[None], 0.0).sum(1)
    s_major_bytes = np.where(s_major, in_work[None], 0.0).sum(1)
    r_minor_bytes = np.where(r_minor, reader_work[None], 0.0).sum(1)
    r_major_bytes = np.where(r_major, reader_work[None], 0.0).sum(1)
    estimates = cost_estimate_columns(
        EstimateInputs(
            padded=padded,
            convdot=convdot,
            reshape=reshape,
            feat_minor=feat_minor,
            bitcast=bitcast,
            in_padded=in_padded,
            kernel_bytes=so.kernel_bytes,
            ker_minor=ker_minor,
            minor_mismatch_bytes=p_minor_bytes + s_minor_bytes,
            major_mismatch_bytes=p_major_bytes + s_major_bytes,
            reader_copy_bytes=r_minor_bytes + CHEAP_COPY_WEIGHT * r_major_bytes,
        )
    )

    n_convdot = max(int(convdot.sum()), 1)
    convdot_work = max(float((work * convdot).sum()), 1.0)
    cols = [
        np.log1p(np.where(convdot, padded, 0.0).sum(1)),
        np.log1p(np.where(reshape, padded, 0.0).sum(1)),
        np.log1p(np.where(other, padded, 0.0).sum(1)),
        np.log1p((padded - work[None]).sum(1)),
        np.log1p(in_padded.sum(1)),
        feat_minor.sum(1) / n_convdot,
        np.where(feat_minor, work[None], 0.0).sum(1) / convdot_work,
        np.log1p(np.where(not_minor, padded, 0.0).sum(1)),
        ker_minor.sum(1) / max(int(has_k.sum()), 1),
        _log_sum(has_k[None] & ~ker_minor, so.kernel_bytes),
        move.sum(1).astype(np.float64),
        _log_sum(move, work),
        _log_sum(bitcast, work),
        p_minor.sum(1).astype(np.float64),
        np.log1p(p_minor_bytes),
        p_major.sum(1).astype(np.float64),
        np.log1p(p_major_bytes),
        np.log1p(s_minor_bytes),
        np.log1p(s_major_bytes),
        r_minor.sum(1).astype(np.float64),
        np.log1p(r_minor_bytes),
        np.log1p(r_major_bytes),
    ]
    classes = op_class_columns(
        padded=padded,
        op_class=so.op_class,
        feat_minor=feat_minor,
        bitcast=bitcast,
        reader_minor=r_minor,
        reader_major=r_major,
        work=work,
    )
    ker_cols = [np.log1p(ker_padded.sum(1)), np.log1p(np.where(ker_minor, 0.0, ker_padded).sum(1))]
    return np.column_stack([*cols, estimates, classes, *ker_cols])
