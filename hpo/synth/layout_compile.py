"""How "the compiler" of the generator completes partial layouts before the law prices them.

Upstream's real files often fix only the two most-minor dims of a tensor and leave the rest to
XLA (-1); the generator writes such configs too (``hpo.synth.layout.PARTIAL_SHARE``). A
hidden law needs a full layout, so the free dims are filled here with the dims the fixed ones
leave, in the order of the default layout: a rule that depends only on what the file holds,
so :func:`hpo.synth.layout.noiseless_layout_cost` prices a file's configs exactly as the
writer did.
"""

from __future__ import annotations

import numpy as np

__all__ = ["compile_layouts"]


def _complete_block(block: np.ndarray, default: np.ndarray) -> np.ndarray:
    """Fill the free dims of partial layouts ``(k, nc, 6)`` in the order of ``default (nc, 6)``.

    A partial layout is a set block (some dim >= 0) with a -1 inside the rank; its fixed dims
    keep their positions and the free positions take the dims not fixed, in default order.
    """
    inside = default >= 0
    free = (block < 0) & inside[None] & (block >= 0).any(axis=-1, keepdims=True)
    cells = free.any(axis=-1)
    if not cells.any():
        return block
    sub, sub_free = block[cells], free[cells]
    dft = np.broadcast_to(default[None], block.shape)[cells]
    fixed = (dft[:, :, None] == np.where(sub >= 0, sub, -2)[:, None, :]).any(axis=-1)
    left = (dft >= 0) & ~fixed
    order = np.argsort(~left, axis=1, kind="stable")
    rest = np.where(np.take_along_axis(left, order, 1), np.take_along_axis(dft, order, 1), -1)
    # the i-th free position takes the i-th dim left
    slot = np.cumsum(sub_free, axis=1) - 1
    fill = np.take_along_axis(rest, np.clip(slot, 0, rest.shape[1] - 1), axis=1)
    out = block.copy()
    out[cells] = np.where(sub_free, fill, sub)
    return out


def compile_layouts(
    feat: np.ndarray, out_default: np.ndarray, in_default: np.ndarray, kernel_default: np.ndarray
) -> np.ndarray:
    """``node_config_feat`` rows with partial layouts completed as "the compiler" does here.

    The free dims of each block take the dims its fixed ones leave, in the order of the
    block's default layout ``(nc, 6)``, -1 past the rank (the node's for outputs, the
    operand's for inputs and kernels). Rows without partial layouts come back unchanged, as
    int64.
    """
    blocks = feat.astype(np.int64)
    for lo, default in ((0, out_default), (6, in_default), (12, kernel_default)):
        blocks[..., lo : lo + 6] = _complete_block(blocks[..., lo : lo + 6], default)
    return blocks
