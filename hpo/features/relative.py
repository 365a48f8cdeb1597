"""Per-graph relative versions of per-config features.

A tree ensemble splits each feature on thresholds shared by all graphs, while the ranking
that is scored lives inside one graph. Differences between the configs of one graph are
often tiny next to differences between graphs, so each per-config feature is also given
minus the graph's median and as a percentile rank inside the graph.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["RELATIVE_SUFFIXES", "relative_base", "relative_features", "relative_names"]

#: Suffixes of a relative column's name: minus the graph's median, percentile rank in the graph.
RELATIVE_SUFFIXES = ("_dmed", "_prank")


def relative_names(names: list[str], ranks: bool = True) -> list[str]:
    """Column names produced by :func:`relative_features` for per-config columns ``names``."""
    dmed, prank = RELATIVE_SUFFIXES
    return [f"{n}{dmed}" for n in names] + ([f"{n}{prank}" for n in names] if ranks else [])


def relative_base(name: str) -> tuple[str, bool]:
    """``(base column, is relative)`` of a column name: ``("x", True)`` for ``x_prank``."""
    for suffix in RELATIVE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)], True
    return name, False


def relative_features(
    values: np.ndarray, ranks: bool = True, reference: np.ndarray | None = None
) -> np.ndarray:
    """Return ``[values - median, percentile rank]`` computed over the configs of one graph.

    Parameters
    ----------
    values
        Per-config features of one graph, shape (c, p).
    ranks
        Also return the percentile ranks (measured: they help layout collections and hurt
        the tile score badly, whose best configs sit at the extremes; see docs/benchmarks.md).
    reference
        Per-config features of the configs the median and ranks are taken over, shape
        (r, p) (``None``: ``values`` itself). A sampled graph passes a uniform sample of its
        configs, so a biased training sample gets the columns a fully featurized graph would.

    Returns
    -------
    numpy.ndarray
        float32 array of shape (c, 2 p), or (c, p) without ranks. Percentile ranks lie in
        [0, 1] (ties share the average rank); a single-config graph gets 0.5.
    """
    v = np.asarray(values, dtype=np.float64)
    ref = v if reference is None else np.asarray(reference, dtype=np.float64)
    dmed = v - np.median(ref, axis=0, keepdims=True)
    if not ranks:
        return dmed.astype(np.float32)
    if reference is None:
        c = v.shape[0]
        if c > 1:
            prank = (rankdata(v, axis=0, method="average") - 1.0) / (c - 1)
        else:
            prank = np.full_like(v, 0.5)
    else:
        prank = _reference_ranks(v, ref)
    return np.concatenate([dmed, prank], axis=1).astype(np.float32)


def _reference_ranks(v: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Average-tie percentile rank of each value among ``ref`` (equals rankdata when v is ref)."""
    r = ref.shape[0]
    if r < 2:
        return np.full_like(v, 0.5)
    prank = np.empty_like(v)
    for j in range(v.shape[1]):  # loop over the ~27 columns, vectorised over configs
        col = np.sort(ref[:, j])
        below = np.searchsorted(col, v[:, j], side="left")
        upto = np.searchsorted(col, v[:, j], side="right")
        prank[:, j] = (below + upto - 1) / 2.0 / (r - 1)
    return np.clip(prank, 0.0, 1.0)
