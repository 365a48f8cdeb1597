"""Per-graph relative versions of per-config features.

A tree ensemble splits each feature on thresholds shared by all graphs, while the ranking
that is scored lives inside one graph. Differences between the configs of one graph are
often tiny next to differences between graphs, so each per-config feature is also given
minus the graph's median and as a percentile rank inside the graph.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["relative_features", "relative_names"]


def relative_names(names: list[str], ranks: bool = True) -> list[str]:
    """Column names produced by :func:`relative_features` for per-config columns ``names``."""
    return [f"{n}_dmed" for n in names] + ([f"{n}_prank" for n in names] if ranks else [])


def relative_features(values: np.ndarray, ranks: bool = True) -> np.ndarray:
    """Return ``[values - median, percentile rank]`` computed over the configs of one graph.

    Parameters
    ----------
    values
        Per-config features of one graph, shape (c, p).
    ranks
        Also return the percentile ranks (measured: they help layout collections and hurt
        the tile score badly, whose best configs sit at the extremes; see bench/README.md).

    Returns
    -------
    numpy.ndarray
        float32 array of shape (c, 2 p), or (c, p) without ranks. Percentile ranks lie in
        [0, 1] (ties share the average rank); a single-config graph gets 0.5.
    """
    v = np.asarray(values, dtype=np.float64)
    c = v.shape[0]
    dmed = v - np.median(v, axis=0, keepdims=True)
    if not ranks:
        return dmed.astype(np.float32)
    if c > 1:
        prank = (rankdata(v, axis=0, method="average") - 1.0) / (c - 1)
    else:
        prank = np.full_like(v, 0.5)
    return np.concatenate([dmed, prank], axis=1).astype(np.float32)
