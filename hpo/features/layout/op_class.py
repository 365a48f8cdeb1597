"""Per-op-class byte totals of a config (feature version 6): what a learned prior can weigh.

Why: a program's runtime adds up over its kernels, and each kind of kernel has its
own cost per byte, which no one can write down for hardware and compilers they have not
measured. The second-order columns split the padded output bytes into three groups (conv/dot,
reshape/transpose, other) and price the matrix-unit and bitcast discounts and the reader copies
with hand-written weights (:mod:`hpo.features.layout.cost_estimate`). On laws of the family
that weigh convolution and dot, reshape and transpose, or fusions differently (``hpo data
synth --law random``), no linear combination of those columns is the cost. These columns give
the totals per op class instead, unweighted, so the learned prior
(:mod:`hpo.ranking.prior.fit`, which reads every ``*_log_*`` column back on a linear scale) can
find a weight for each class from the train split:

- padded output bytes (element type's tile) of convolutions, dots, reshapes, transposes,
  fusions and every other op;
- the same of convolutions and dots whose feature dim is most minor (the matrix-unit case),
  and of reshapes and transposes that are bitcasts under the chosen layouts;
- output bytes of conv/dot nodes off their default layout that a non-configurable node reads
  (in the two minor positions, and in major positions only): the reader copies of the other
  ops are the second-order reader columns minus these at their hand-written weight, so a
  linear model spans both without that weight.

Only the learned prior reads them (:func:`is_prior_only`): no booster's Dataset holds them
and they get no relative columns. Why: over 8 laws, with the trees splitting on them too and
every (standardized) prior weighing them, nlp:random's worst share of the noise ceiling rose
from 0.753 to 0.843, but the default collections' median and worst fell by up to 0.011
(docs/benchmarks.md#the-learned-prior-and-its-weights). The
random collections' own weights read them first; since the prior is additive the default
collections' pooled weights read them too (docs/benchmarks.md#the-learned-prior-and-its-weights).

Logs of the totals (``log1p``) like every byte column, and the prior takes them back with
``expm1``. Every input is a ``(k, nc)`` chunk array or a
``(nc,)`` per-node constant: a few masked sums per cell, no loop over configs or nodes.
"""

from __future__ import annotations

import numpy as np

from hpo.data.opcodes import CONVOLUTION, DOT, FUSION, RESHAPE, TRANSPOSE

__all__ = [
    "OP_CLASSES",
    "OP_CLASS_GROUPS",
    "PRIOR_ONLY_PREFIXES",
    "is_prior_only",
    "op_class_columns",
    "op_class_of",
]

#: Name prefixes of the columns only the learned prior reads: these totals, and the conv
#: kernels' padded bytes (``kp_``, :mod:`hpo.features.layout.second_order`, feature version 7).
PRIOR_ONLY_PREFIXES = ("oc_", "kp_")

#: The op classes the totals are split by, in column order ("other": every remaining op).
OP_CLASSES = ("conv", "dot", "reshape", "transpose", "fusion", "other")
_OPCODE = {"conv": CONVOLUTION, "dot": DOT, "reshape": RESHAPE, "transpose": TRANSPOSE,
           "fusion": FUSION}  # fmt: skip

#: Feature group of each op-class column, in column order (prefix ``oc_``, feature version 6).
OP_CLASS_GROUPS: dict[str, str] = {
    **{f"oc_log_padded_bytes_{c}": "op_class_bytes" for c in OP_CLASSES},
    "oc_log_feature_minor_bytes_conv": "op_class_bytes",
    "oc_log_feature_minor_bytes_dot": "op_class_bytes",
    "oc_log_bitcast_bytes_reshape": "op_class_bytes",
    "oc_log_bitcast_bytes_transpose": "op_class_bytes",
    "oc_log_reader_minor_bytes_convdot": "op_class_bytes",
    "oc_log_reader_major_bytes_convdot": "op_class_bytes",
}


def is_prior_only(name: str) -> bool:
    """Whether column ``name`` is read by the learned prior alone, never by a booster."""
    return name.startswith(PRIOR_ONLY_PREFIXES)


def op_class_of(opcodes: np.ndarray) -> np.ndarray:
    """Index into :data:`OP_CLASSES` of every node of ``opcodes`` (``(nc,)`` ints)."""
    ops = np.asarray(opcodes).astype(np.int64)
    out = np.full(ops.shape, OP_CLASSES.index("other"), dtype=np.int8)
    for i, name in enumerate(OP_CLASSES[:-1]):
        out[ops == _OPCODE[name]] = i
    return out


def _sum(mask: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.where(mask, values, 0.0).sum(axis=1)


def op_class_columns(
    *,
    padded: np.ndarray,
    op_class: np.ndarray,
    feat_minor: np.ndarray,
    bitcast: np.ndarray,
    reader_minor: np.ndarray,
    reader_major: np.ndarray,
    work: np.ndarray,
) -> np.ndarray:
    """``log1p`` of the per-op-class byte totals of each config; ``(k, len(OP_CLASS_GROUPS))``.

    Parameters
    ----------
    padded
        ``(k, nc)`` output bytes padded to the element type's tile under the chosen layout.
    op_class
        ``(nc,)`` index into :data:`OP_CLASSES` (:func:`op_class_of`).
    feat_minor, bitcast
        ``(k, nc)`` conv/dot with the feature dim most minor; reshape/transpose that is a
        bitcast.
    reader_minor, reader_major
        ``(k, nc)`` node off its default layout (in the two minor positions; in major ones
        only) and read by a non-configurable node.
    work
        ``(nc,)`` output bytes (unpadded).
    """
    cls = op_class[None, :]
    conv, dot = cls == OP_CLASSES.index("conv"), cls == OP_CLASSES.index("dot")
    reshape, transpose = cls == OP_CLASSES.index("reshape"), cls == OP_CLASSES.index("transpose")
    cols = [_sum(cls == i, padded) for i in range(len(OP_CLASSES))]
    cols += [_sum(conv & feat_minor, padded), _sum(dot & feat_minor, padded)]
    cols += [_sum(reshape & bitcast, padded), _sum(transpose & bitcast, padded)]
    convdot = conv | dot
    cols += [_sum(convdot & reader_minor, work[None]), _sum(convdot & reader_major, work[None])]
    return np.log1p(np.column_stack(cols))
