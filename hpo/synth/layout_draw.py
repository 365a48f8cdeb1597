"""Counter-based draws of layout configurations: permutation tables and a 64-bit hash.

A configuration is a function of ``(file key, unique config id, node, slot)`` only, so any
chunk of configs can be drawn on its own and duplicated configs are exact copies.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np

from hpo.synth.graph import MAX_RANK

__all__ = ["FACTORIAL", "hash_uniform", "perm_table", "random_perms"]

FACTORIAL = np.array([1, 1, 2, 6, 24, 120, 720])
_M1, _M2, _M3 = (
    np.uint64(0x9E3779B97F4A7C15),
    np.uint64(0xBF58476D1CE4E5B9),
    np.uint64(0x94D049BB133111EB),
)


@cache
def perm_table() -> np.ndarray:
    """``table[r, i]``: the i-th permutation of ``range(r)``, -1 padded; shape (7, 720, 6)."""
    table = np.full((MAX_RANK + 1, 720, MAX_RANK), -1, dtype=np.int8)
    for r in range(1, MAX_RANK + 1):
        perms = np.array(list(itertools.permutations(range(r))), dtype=np.int8)
        table[r, : len(perms), :r] = perms
    return table


def _mix64(x: np.ndarray) -> np.ndarray:
    x = (x ^ (x >> np.uint64(30))) * _M2
    x = (x ^ (x >> np.uint64(27))) * _M3
    return x ^ (x >> np.uint64(31))


def hash_uniform(key: int, uids: np.ndarray, n_nodes: int, n_slots: int) -> np.ndarray:
    """Uniform [0, 1) numbers that depend only on ``(key, uid, node, slot)``; ``(k, nc, s)``."""
    h = _mix64(uids.astype(np.uint64)[:, None, None] * _M1 + np.uint64(key))
    h = _mix64(h ^ (np.arange(n_nodes, dtype=np.uint64)[None, :, None] * _M2 + _M1))
    h = _mix64(h ^ (np.arange(n_slots, dtype=np.uint64)[None, None, :] * _M3 + _M2))
    return (h >> np.uint64(11)).astype(np.float64) * 2.0**-53


def random_perms(u: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """A uniform permutation of ``range(rank)`` per node picked by ``u`` in [0, 1); -1 padded."""
    idx = np.minimum((u * FACTORIAL[rank]).astype(np.int64), FACTORIAL[rank] - 1)
    return perm_table()[rank[None, :], idx]
