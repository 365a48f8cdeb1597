"""Vectorised row hashing, to find identical configurations without comparing rows pairwise."""

from __future__ import annotations

import numpy as np

__all__ = ["hash_rows"]

_MIX = np.uint64(0x9E3779B97F4A7C15)


def _weights(width: int, salt: int) -> np.ndarray:
    rng = np.random.default_rng(0x5EED + salt)
    return rng.integers(1, 2**31 - 1, size=width, dtype=np.int64)


def hash_rows(rows: np.ndarray) -> np.ndarray:
    """Hash each row of an integer (or integer-valued) 2-D array to a uint64.

    Two independent integer projections (exact int64 arithmetic, wrapping) are mixed into
    one 64-bit value: equal rows always hash equal, distinct rows collide with probability
    about 2**-64. Deterministic across processes and runs.
    """
    a = np.ascontiguousarray(rows)
    if a.dtype.kind == "f":
        a = a.view(np.int32 if a.dtype.itemsize == 4 else np.int64)
    a = a.astype(np.int64, copy=False)
    width = a.shape[1]
    h1 = (a @ _weights(width, 1)).view(np.uint64)
    h2 = (a @ _weights(width, 2)).view(np.uint64)
    with np.errstate(over="ignore"):
        return (h1 * _MIX) ^ h2
