"""Partial layouts: a -1 in a block that also holds dims is a dimension left to the compiler.

Upstream's real files often fix only the two most-minor dims of a tensor (``[4, 0, -1, -1,
-1, -1]`` on a 5-D one) and leave the rest to XLA; an all -1 block leaves the whole layout to
it (the node's default). The features need two views of such a layout:

- for comparisons (copies, sibling disagreement, "off the default"), -1 is a wildcard: an
  unconstrained dim agrees with anything, because the compiler is free to pick the layout
  that needs no copy. :func:`disagree` never counts it.
- for sizes (the most-minor and second-minor dim, hence padding to the hardware tile), a free
  position needs a dim: :attr:`Layouts.minor` fills the free positions with the dims the fixed
  ones leave, in the order of the default layout (the layout XLA would keep for them).

For speed a layout is packed into two int64 per (config, node): ``code`` holds each position's
dim in one byte, ``care`` has 0xFF in the positions that are constrained. Two layouts then
disagree where ``(code_a ^ code_b) & care_a & care_b`` is not 0 (restricted to the positions
wanted by a bit mask), one ``(k, nc)`` operation instead of six over ``(k, nc, 6)``; only
the cells of a chunk that are partial are completed position by position.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "MAJOR_BITS",
    "MINOR_BITS",
    "Layouts",
    "complete",
    "disagree",
    "mask_bits",
    "pack",
    "read_block",
]

#: Bit masks of the two most-minor positions and of the four major ones (one byte each).
MINOR_BITS = 0xFFFF
MAJOR_BITS = 0xFFFF_FFFF_0000
_PACKED = np.dtype("<i8")  # little-endian: position p is byte p on any machine


def pack(layout: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(code, care)`` int64 of layouts ``(..., 6)`` with entries -1..5 (see module doc).

    Each position is one byte of the int64 (the layout's own int8), so packing is one copy
    into an 8-byte row and a view, not an arithmetic pass per position.
    """
    lay = np.asarray(layout)
    buf = np.full((*lay.shape[:-1], 8), -1, dtype=np.int8)
    buf[..., : lay.shape[-1]] = lay
    care = -(buf >= 0).view(np.int8)  # 0xFF where a dim is given
    return buf.view(_PACKED)[..., 0], care.view(_PACKED)[..., 0]


def mask_bits(mask: np.ndarray) -> np.ndarray:
    """The bit mask of the positions where ``mask (..., 6)`` is True (e.g. inside the rank)."""
    return pack(np.where(mask, 0, -1))[1]


@dataclass(frozen=True, eq=False)
class Layouts:
    """One layout block of a chunk, all -1 blocks resolved to the default.

    ``code``/``care`` ``(k, nc)``: packed for comparisons (free dims not cared about);
    ``minor`` ``(k, nc, 2)``: the two most-minor dims of the completed layout;
    ``is_set`` ``(k, nc)``: the block holds at least one dim (not left wholly to the compiler).
    """

    code: np.ndarray
    care: np.ndarray
    minor: np.ndarray
    is_set: np.ndarray


def read_block(block: np.ndarray, default: np.ndarray, rank: np.ndarray | None = None) -> Layouts:
    """Resolve and pack one block ``(k, nc, 6)`` of a chunk against ``default`` ``(nc, 6)``.

    ``default`` is -1 past its rank. ``rank`` ``(nc,)`` is the rank of the tensor the block
    describes (default: the default's): a -1 inside it is a free dim, a wildcard; past it a -1
    is padding and compares as a value, so a block of another rank than the layout it is
    compared with still differs there, as before partial layouts were read.
    """
    code, care = pack(block)
    dcode, dcare = pack(default)
    if rank is None:
        rank = (np.asarray(default) >= 0).sum(axis=-1)
    in_rank = mask_bits(np.arange(6)[None, :] < np.asarray(rank)[:, None])[None]
    is_set = care != 0
    minor = np.empty((*is_set.shape, 2), dtype=np.int8)
    for p in range(2):  # per position: a 3-D where over a strided slice is several times slower
        minor[..., p] = np.where(is_set, block[..., p], default[:, p])
    # only a free position among the two most minor needs completing (the usual partial
    # layout fixes both, so costs nothing here)
    want = in_rank & MINOR_BITS
    partial = is_set & ((care & want) != want)
    if partial.any():
        rows, cols = np.nonzero(partial)
        minor[rows, cols] = complete(block[rows, cols], default[cols])[:, :2]
    return Layouts(
        code=np.where(is_set, code, dcode[None]),
        # padding past the rank is compared as it is
        care=np.where(is_set, care, dcare[None]) | ~in_rank,
        minor=minor,
        is_set=is_set,
    )


def complete(layout: np.ndarray, default: np.ndarray) -> np.ndarray:
    """Fill the free positions of layouts ``(m, 6)`` with the remaining dims in default order.

    ``default`` ``(m, 6)`` is -1 past the rank. Returns int8 ``(m, 6)``; a position stays -1
    only when the fixed dims leave no dim for it (a malformed layout).
    """
    lay = np.asarray(layout, dtype=np.int8)
    dft = np.asarray(default, dtype=np.int8)
    free = (lay < 0) & (dft >= 0)
    used = ((lay[:, :, None] == dft[:, None, :]) & (lay >= 0)[:, :, None]).any(axis=1)
    left = (dft >= 0) & ~used  # default positions whose dim is still to place
    slot = np.cumsum(free, axis=1) - 1
    rank = np.cumsum(left, axis=1) - 1
    match = free[:, :, None] & left[:, None, :] & (slot[:, :, None] == rank[:, None, :])
    fill = (match * dft[:, None, :].astype(np.int16)).sum(axis=2)
    return np.where(free & match.any(axis=2), fill, lay).astype(np.int8)


def disagree(
    a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray], bits: np.ndarray | int
) -> np.ndarray:
    """Whether packed layouts ``a`` and ``b`` differ in a position both constrain, among the
    positions of ``bits`` (:data:`MINOR_BITS`, :data:`MAJOR_BITS`, :func:`mask_bits`)."""
    return ((a[0] ^ b[0]) & a[1] & b[1] & bits) != 0
