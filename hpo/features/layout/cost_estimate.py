"""Per-config estimates of the second-order TPU costs in one unit (bytes moved), added up.

Why (feature version 3): the version-2 ``so_*`` columns give each effect on its own axis and
log scale: padded conv/dot bytes, the share of conv/dot with the feature dim minor, the
bytes of reshapes that move, mismatch classes... The runtime of a config is the *sum* of these
costs, but a tree ensemble cannot add ``log(a)`` and ``log(b)`` whose graph-specific
magnitudes decide which one dominates, and the relative columns (minus the graph median,
percentile rank) of a log do not add up either. Measured on ``hpo data synth --law
second-order`` data (docs/benchmarks.md): a column holding the generator's own
noiseless cost lifted the unseen-graph share of the noise ceiling on the random collections
from 0.80/0.74 to 0.88/0.86, while its terms as separate log columns gave only 0.82/0.76. So
what the features missed was less a missing effect than the combination: this module prices
every effect per node in bytes, with weights set by the hardware reason, and gives the trees
the per-effect sums and their total.

Weights (round numbers from the effect, not fitted to any data; but written after reading the
generator's law, which tells the same story, so they sit near its constants and their gain on
generated data is an upper bound for real runtimes, see docs/FEATURES.md):

- conv/dot outputs weigh :data:`CONVDOT_WEIGHT` (contraction-heavy ops dominate elementwise
  ones, as the reader copies of :mod:`hpo.features.layout.second_order` weigh them), and half
  when the feature dim is most minor (a full 128-wide MXU pass instead of partial passes);
  conv kernels the same at half the output's weight;
- a reshape/transpose that is a bitcast moves nothing (weight 0), one that is not moves its
  padded output;
- the first operand is read once under the input layout (:data:`INPUT_WEIGHT`);
- a mismatch in the two most-minor positions is a relayout: read and write the tensor
  (:data:`RELAYOUT_WEIGHT`); one in major positions only is a cheap copy
  (:data:`CHEAP_COPY_WEIGHT`); a node off its default read by a non-configurable node forces a
  copy of its output.

Every input is a ``(k, nc)`` array of one chunk of configs or a ``(nc,)`` per-node constant, so
the cost is a few multiply-adds per cell on arrays the second-order pass already holds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "CHEAP_COPY_WEIGHT",
    "CONVDOT_WEIGHT",
    "ESTIMATE_GROUPS",
    "EstimateInputs",
    "INPUT_WEIGHT",
    "MXU_MINOR_WEIGHT",
    "RELAYOUT_WEIGHT",
    "cost_estimate_columns",
    "cost_estimate_names",
]

CONVDOT_WEIGHT = 3.0  # conv/dot output bytes against an elementwise op's
MXU_MINOR_WEIGHT = 0.5  # conv/dot (kernel) with the feature dim most minor: one full MXU pass
KERNEL_WEIGHT = 0.5  # a conv kernel against the conv's output
INPUT_WEIGHT = 0.25  # reading the first operand under the input layout
RELAYOUT_WEIGHT = 2.0  # mismatch in the two minor positions: read + write the tensor
CHEAP_COPY_WEIGHT = 0.1  # mismatch in major positions only

#: Feature group of each estimate column, in column order (prefix ``est_``, feature version 3).
ESTIMATE_GROUPS: dict[str, str] = {
    "est_log_convdot_mxu_bytes": "effect_bytes",
    "est_log_kernel_mxu_bytes": "effect_bytes",
    "est_log_reshape_padded_move_bytes": "effect_bytes",
    "est_log_copy_bytes": "effect_bytes",
    "est_log_total_bytes": "cost_estimate",
}


def cost_estimate_names() -> list[str]:
    """Column names of :func:`cost_estimate_columns`, in order."""
    return list(ESTIMATE_GROUPS)


@dataclass(frozen=True, eq=False)
class EstimateInputs:
    """What :func:`cost_estimate_columns` weighs, per config of a chunk (``k`` configs) and
    per configurable node (``nc``), as :mod:`hpo.features.layout.second_order` derives it.

    Attributes
    ----------
    padded
        ``(k, nc)`` output bytes padded to the element type's tile under the chosen layout.
    convdot, reshape
        ``(nc,)`` bool: convolution/dot nodes, reshape/transpose nodes.
    feat_minor
        ``(k, nc)`` conv/dot whose feature dim is most minor.
    bitcast
        ``(k, nc)`` reshape/transpose that is a bitcast under the chosen layouts.
    in_padded
        ``(k, nc)`` first-operand bytes padded under the input layout.
    kernel_bytes
        ``(nc,)`` conv kernel bytes (0 for other nodes); ``ker_minor`` ``(k, nc)`` its
        output-feature dim most minor.
    minor_mismatch_bytes, major_mismatch_bytes
        ``(k,)`` bytes of producer/sibling pairs that disagree in the two minor positions,
        and in major positions only.
    reader_copy_bytes
        ``(k,)`` (weighted) bytes copied for non-configurable readers.
    """

    padded: np.ndarray
    convdot: np.ndarray
    reshape: np.ndarray
    feat_minor: np.ndarray
    bitcast: np.ndarray
    in_padded: np.ndarray
    kernel_bytes: np.ndarray
    ker_minor: np.ndarray
    minor_mismatch_bytes: np.ndarray
    major_mismatch_bytes: np.ndarray
    reader_copy_bytes: np.ndarray


def cost_estimate_columns(e: EstimateInputs) -> np.ndarray:
    """Estimated bytes of each effect and their weighted total, per config; ``(k, 5)``.

    Returns
    -------
    numpy.ndarray
        ``log1p`` of the conv/dot MXU-weighted output bytes, the kernel's, the padded bytes of
        reshapes/transposes that move, the weighted copy bytes and the weighted total. Each
        row depends on its config only (not on the chunk), so sampled rows equal full ones.
    """
    mxu = np.where(e.feat_minor, MXU_MINOR_WEIGHT, 1.0)
    convdot_bytes = np.where(e.convdot[None], e.padded * mxu, 0.0).sum(axis=1)
    kernel = e.kernel_bytes[None] * np.where(e.ker_minor, MXU_MINOR_WEIGHT, 1.0)
    kernel_sum = kernel.sum(axis=1)
    move = np.where(e.reshape[None] & ~e.bitcast, e.padded, 0.0).sum(axis=1)
    other = np.where(~(e.convdot | e.reshape)[None], e.padded, 0.0).sum(axis=1)
    copies = (
        RELAYOUT_WEIGHT * e.minor_mismatch_bytes
        + CHEAP_COPY_WEIGHT * e.major_mismatch_bytes
        + e.reader_copy_bytes
    )
    total = (
        CONVDOT_WEIGHT * (convdot_bytes + KERNEL_WEIGHT * kernel_sum)
        + move
        + other
        + INPUT_WEIGHT * e.in_padded.sum(axis=1)
        + copies
    )
    return np.column_stack(
        [
            np.log1p(convdot_bytes),
            np.log1p(kernel_sum),
            np.log1p(move),
            np.log1p(copies),
            np.log1p(total),
        ]
    )
