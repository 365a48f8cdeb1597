"""Graph descriptor features: constant over the configs of one graph."""

from __future__ import annotations

import numpy as np

from hpo.data.load import COLLECTIONS
from hpo.data.opcodes import CONVOLUTION, DOT, N_OPCODES, RESHAPE, TRANSPOSE

__all__ = ["graph_descriptor", "graph_descriptor_names"]


def graph_descriptor_names() -> list[str]:
    """Column names of :func:`graph_descriptor`."""
    names = [f"g_ophist_{i}" for i in range(N_OPCODES)]
    names += ["g_log_nodes", "g_log_edges", "g_log_volume", "g_n_conv", "g_n_dot"]
    names += ["g_n_reshape", "g_n_transpose"]
    names += [f"g_is_{c.replace(':', '_')}" for c in COLLECTIONS]
    return names


def graph_descriptor(
    node_opcode: np.ndarray, edge_index: np.ndarray, node_feat: np.ndarray, collection: str
) -> np.ndarray:
    """Describe one graph as a float32 vector.

    Normalized opcode histogram, log node/edge counts, log total tensor volume, counts of
    convolution/dot/reshape/transpose nodes, and a one-hot collection indicator so that one
    model can serve several collections.
    """
    ops = np.clip(node_opcode, 0, N_OPCODES - 1)
    hist = np.bincount(ops, minlength=N_OPCODES).astype(np.float64)
    n = max(len(node_opcode), 1)
    volume = np.maximum(node_feat[:, 28].astype(np.float64), 0.0).sum()
    counts = [np.count_nonzero(node_opcode == op) for op in (CONVOLUTION, DOT, RESHAPE, TRANSPOSE)]
    onehot = [float(collection == c) for c in COLLECTIONS]
    vec = np.concatenate(
        [
            hist / n,
            [np.log1p(n), np.log1p(len(edge_index)), np.log1p(volume)],
            np.log1p(np.asarray(counts, dtype=np.float64)),
            onehot,
        ]
    )
    return vec.astype(np.float32)
