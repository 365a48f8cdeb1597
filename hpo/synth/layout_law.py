"""The second-order hidden layout cost law of the generator (``hpo data synth --law``).

The first-order law (:func:`hpo.synth.layout._config_cost_terms`) only knows 8 x 128 padding
and copies between configurable nodes, the very costs the first features were designed for.
This law adds the next order of effects a real XLA/TPU compilation has, so that data can tell
a feature set that sees them from one that does not:

1. the element type decides the tile: 32-bit tensors pad their second-minor dim to 8 rows,
   16-bit ones to 16, 8-bit ones to 32 (``node_feat`` 2-20);
2. convolution and dot run on the 128 x 128 matrix unit: an output (and, for convolutions, a
   kernel) layout with the feature dimension most minor costs about half (``node_feat`` 106
   output feature dim, 100 kernel output feature dim; for dot the last, rhs non-contracting
   dim);
3. a reshape or transpose is a free bitcast when the most-minor dimension keeps its place
   (transpose: the permutation of ``node_feat`` 31-36 maps the output's minor dim onto the
   input's; reshape: the two minor dims have the same size), otherwise it moves the tensor;
4. a producer/consumer mismatch in the two most-minor positions is a real relayout, one only
   in major positions a cheap copy; a configurable node leaving its default layout while a
   non-configurable node reads it forces a copy too;
5. every term is weighted by volume x element size, and convolution/dot weigh most.

Its constants and switches are a :class:`hpo.synth.law_family.LawConstants`; ``--law random
--law-seed N`` draws a member of the family around them (:mod:`hpo.synth.law_family`,
see docs/benchmarks.md#defaults-over-a-family-of-laws).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpo.data.opcodes import CONVOLUTION, DOT, RESHAPE, TRANSPOSE
from hpo.synth.graph import COL_CONV_DIMS, COL_DIMENSIONS, MAX_RANK, NodeTable
from hpo.synth.hlo_tables import FUSION
from hpo.synth.law_family import SECOND_ORDER, LawConstants

__all__ = ["OperandFacts", "SecondOrderProblem", "second_order_cost_terms", "second_order_problem"]

_LANES = 128


@dataclass(frozen=True, eq=False)
class OperandFacts:
    """Per configurable node: the shape, rank, volume and default layout of its output, its
    input and its kernel, which both cost laws read."""

    out_shape: np.ndarray
    out_rank: np.ndarray
    out_volume: np.ndarray
    out_default: np.ndarray
    in_shape: np.ndarray
    in_rank: np.ndarray
    in_volume: np.ndarray
    in_default: np.ndarray
    in_bytes: np.ndarray
    kernel_shape: np.ndarray
    kernel_rank: np.ndarray
    kernel_volume: np.ndarray
    kernel_default: np.ndarray


@dataclass(frozen=True, eq=False)
class SecondOrderProblem(OperandFacts):
    """Per configurable node facts of the second-order law (``nc`` nodes)."""

    out_bytes: np.ndarray
    kernel_bytes: np.ndarray
    kernel_feature: np.ndarray
    factor: np.ndarray
    feature_dim: np.ndarray
    is_conv: np.ndarray
    is_transpose: np.ndarray
    is_reshape: np.ndarray
    perm: np.ndarray
    producer: np.ndarray
    leader: np.ndarray
    noncfg_reader: np.ndarray
    law: LawConstants = SECOND_ORDER


def sublane_tile(elem_bytes: np.ndarray) -> np.ndarray:
    """Rows of the hardware tile: 8 for 32-bit, 16 for 16-bit, 32 for 8-bit types."""
    return 8.0 * 4.0 / np.clip(elem_bytes, 1.0, 4.0)


def _opcode_factor(law: LawConstants) -> np.ndarray:
    factor = np.ones(256)
    if law.opcode_weights:
        values = (law.conv, law.dot, law.reshape, law.transpose, law.fusion)
        factor[[CONVOLUTION, DOT, RESHAPE, TRANSPOSE, FUSION]] = values
    return factor


def second_order_problem(
    t: NodeTable,
    node_feat: np.ndarray,
    node_opcode: np.ndarray,
    edge_index: np.ndarray,
    ids: np.ndarray,
    producer: np.ndarray,
    leader: np.ndarray,
    law: LawConstants = SECOND_ORDER,
) -> SecondOrderProblem:
    """Derive the :class:`SecondOrderProblem` from the stored arrays.

    ``producer`` and ``leader`` are the first-order law's partners (nearest configurable
    producer through shape-preserving nodes, first sibling of the same producer), shared so
    both laws compare the same pairs. ``law`` sets the constants and switches.
    """
    n = node_feat.shape[0]
    op = node_opcode.astype(np.int64)[ids]
    is_cfg = np.zeros(n, dtype=bool)
    is_cfg[ids] = True
    first = t.first_operand[ids]
    f0 = np.maximum(first, 0)
    has_in = first >= 0
    in_shape = np.where(has_in[:, None], t.shapes[f0], 0)
    is_conv = op == CONVOLUTION
    kern = np.where(is_conv, t.second_operand[ids], -1)
    k0 = np.maximum(kern, 0)
    has_k = kern >= 0
    kernel_feature = node_feat[ids, COL_CONV_DIMS + 7].astype(np.int64)
    feature_dim = np.where(
        is_conv,
        node_feat[ids, COL_CONV_DIMS + 13].astype(np.int64),
        np.where(op == DOT, t.ranks[ids] - 1, -1),
    )
    reader = np.zeros(n, dtype=bool)
    if edge_index.size:
        u, v = edge_index[:, 0], edge_index[:, 1]
        reader[v[~is_cfg[u]]] = True
    return SecondOrderProblem(
        out_shape=t.shapes[ids],
        out_rank=t.ranks[ids],
        out_volume=t.volumes[ids],
        out_default=t.layouts[ids],
        out_bytes=t.elem_bytes[ids],
        in_shape=in_shape,
        in_rank=(in_shape > 0).sum(axis=1),
        in_volume=np.where(has_in, t.volumes[f0], 1.0),
        in_default=np.where(has_in[:, None], t.layouts[f0], -1),
        in_bytes=t.elem_bytes[f0],
        kernel_shape=np.where(has_k[:, None], t.shapes[k0], 0),
        kernel_rank=np.where(has_k, t.ranks[k0], 0),
        kernel_volume=np.where(has_k, t.volumes[k0], 1.0),
        kernel_default=np.where(has_k[:, None], t.layouts[k0], -1),
        kernel_bytes=t.elem_bytes[k0],
        kernel_feature=np.where(has_k, kernel_feature, -1),
        factor=_opcode_factor(law)[op],
        feature_dim=feature_dim,
        is_conv=is_conv,
        is_transpose=op == TRANSPOSE,
        is_reshape=op == RESHAPE,
        perm=node_feat[ids, COL_DIMENSIONS : COL_DIMENSIONS + MAX_RANK].astype(np.int64),
        producer=producer,
        leader=leader,
        noncfg_reader=reader[ids],
        law=law,
    )


def _resolve(block: np.ndarray, default: np.ndarray) -> np.ndarray:
    return np.where((block < 0).all(axis=-1, keepdims=True), default[None], block)


def _minor_sizes(shape: np.ndarray, rank: np.ndarray, layout: np.ndarray) -> np.ndarray:
    """Sizes of the most-minor and second-minor dims under ``layout``; ``(k, nc, 2)``."""
    idx = np.clip(layout[..., :2], 0, MAX_RANK - 1)
    sizes = np.take_along_axis(shape[None], idx, axis=2).astype(np.float64)
    present = np.stack([rank >= 1, rank >= 2], axis=-1)[None]
    return np.where(present & (sizes > 0), sizes, 1.0)


def padded_volume(
    shape: np.ndarray,
    rank: np.ndarray,
    volume: np.ndarray,
    elem_bytes: np.ndarray,
    layout,
    element_tiles: bool = True,
) -> np.ndarray:
    """Volume padded to the element type's tile (128 lanes x 8/16/32 rows); ``(k, nc)``.

    ``element_tiles`` False: every type pads to 8 rows (a law without that effect).
    """
    m = _minor_sizes(shape, rank, layout)
    d0, d1 = m[..., 0], m[..., 1]
    sub = sublane_tile(elem_bytes) if element_tiles else 8.0
    padded = np.ceil(d0 / _LANES) * _LANES * np.ceil(d1 / sub) * sub
    return volume / (d0 * d1) * padded


def _split_mismatch(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(differs in the two minor positions, differs only in major positions)``."""
    minor = (a[..., :2] != b[..., :2]).any(axis=-1)
    major = ~minor & (a[..., 2:] != b[..., 2:]).any(axis=-1)
    return minor, major


def second_order_cost_terms(
    p: SecondOrderProblem, feat: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The config-dependent cost: ``(per-node output term, everything else)``, each ``(k,)``."""
    law = p.law
    tiles = law.element_tiles
    blocks = feat.astype(np.int64)
    out = _resolve(blocks[..., 0:6], p.out_default)
    inp = _resolve(blocks[..., 6:12], p.in_default)
    ker = _resolve(blocks[..., 12:18], p.kernel_default)
    out_pad = padded_volume(p.out_shape, p.out_rank, p.out_volume, p.out_bytes, out, tiles)
    mxu_minor = law.mxu_minor if law.mxu else 1.0
    mxu = np.where(out[..., 0] == p.feature_dim, mxu_minor, 1.0)
    node = p.factor * p.out_bytes * mxu * out_pad
    # Reshape/transpose: a bitcast when the most-minor dimension keeps its place.
    if law.bitcasts:
        in_minor = np.take_along_axis(
            p.in_shape[None], np.clip(inp[..., :1], 0, MAX_RANK - 1), axis=2
        )[..., 0]
        out_minor = np.take_along_axis(
            p.out_shape[None], np.clip(out[..., :1], 0, MAX_RANK - 1), axis=2
        )[..., 0]
        src_dim = np.take_along_axis(p.perm[None], np.clip(out[..., :1], 0, MAX_RANK - 1), axis=2)
        bitcast = np.where(
            p.is_transpose, src_dim[..., 0] == inp[..., 0], p.is_reshape & (in_minor == out_minor)
        )
        node = np.where(bitcast, law.bitcast * node, node)

    in_pad = padded_volume(p.in_shape, p.in_rank, p.in_volume, p.in_bytes, inp, tiles)
    other = (law.input_factor if law.input_term else 0.0) * p.in_bytes * in_pad
    if law.kernel_term:
        ker_pad = padded_volume(
            p.kernel_shape, p.kernel_rank, p.kernel_volume, p.kernel_bytes, ker, tiles
        )
        ker_mxu = np.where(ker[..., 0] == p.kernel_feature, mxu_minor, 1.0)
        other += np.where(p.is_conv, law.kernel_factor * p.kernel_bytes, 0.0) * ker_mxu * ker_pad
    # without mismatch classes a major-only mismatch costs what a minor one does
    cheap = law.cheap_copy if law.mismatch_classes else 1.0
    major_copy = law.cheap_copy if law.mismatch_classes else law.relayout
    copy = p.in_volume * p.in_bytes
    if law.copies:
        for partner, partner_layout in ((p.producer, out), (p.leader, inp)):
            has = partner >= 0
            minor, major = _split_mismatch(inp[:, has], partner_layout[:, partner[has]])
            other[:, has] += (law.relayout * minor + major_copy * major) * copy[has]
    if law.reader_copies:
        minor, major = _split_mismatch(out, p.out_default[None])
        reader = p.noncfg_reader * p.out_volume * p.out_bytes * p.factor
        other += law.reader_copy * (minor + cheap * major) * reader
    return node.sum(axis=1), other.sum(axis=1)
