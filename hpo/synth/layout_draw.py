"""Draws of the layout generator: which nodes are configurable, and counter-based draws of
layout configurations (permutation tables and a 64-bit hash).

A configuration is a function of ``(file key, unique config id, node, slot)`` only, so any
chunk of configs can be drawn on its own and duplicated configs are exact copies.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np

from hpo.data.opcodes import CONVOLUTION, DOT
from hpo.synth.graph import MAX_RANK, HloGraph, NodeTable
from hpo.synth.hlo_tables import FUSION

__all__ = [
    "FACTORIAL",
    "choose_config_nodes",
    "hash_uniform",
    "perm_table",
    "random_perms",
]

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


def choose_config_nodes(
    configurable: tuple[int, ...],
    rng: np.random.Generator,
    graph: HloGraph,
    n_config: int,
) -> tuple[HloGraph, np.ndarray]:
    """Pick the configurable nodes (opcodes ``configurable``), turning elementwise nodes into
    fusions if too few."""
    t = NodeTable.from_arrays(graph.node_feat, graph.node_opcode, graph.edge_index)
    op = graph.node_opcode.astype(np.int64)
    eligible = (t.ranks >= 2) & (t.first_operand >= 0)
    cand = eligible & np.isin(op, configurable)
    short = n_config - int(cand.sum())
    if short > 0:
        pool = np.flatnonzero(eligible & ~cand & t.shape_preserving)
        promote = rng.choice(pool, size=min(short, len(pool)), replace=False)
        op[promote] = FUSION
        cand[promote] = True
    weight = np.where(np.isin(op, (CONVOLUTION, DOT)), 3.0, 1.0)[cand]
    ids = np.sort(
        rng.choice(
            np.flatnonzero(cand),
            size=min(n_config, int(cand.sum())),
            replace=False,
            p=weight / weight.sum(),
        )
    )
    graph = HloGraph(
        node_feat=graph.node_feat,
        node_opcode=op.astype(np.uint8),
        edge_index=graph.edge_index,
        node_splits=graph.node_splits,
    )
    return graph, ids.astype(np.int64)
