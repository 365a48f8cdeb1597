"""Sample the training configs of each graph, biased toward fast ones (the ``configs`` fidelity).

Apart from :mod:`hpo.ranking.training` to keep that module short; it re-exports
:func:`sample_configs`.
"""

from __future__ import annotations

import numpy as np

from hpo.features.table.feature_table import FeatureTable

__all__ = ["sample_configs"]


def sample_configs(
    table: FeatureTable,
    rows: np.ndarray,
    per_graph: int,
    rng: np.random.Generator,
    fast_bias: float = 2.0,
) -> np.ndarray:
    """Sample at most ``per_graph`` rows of each graph, biased toward fast configs.

    Weighted sampling without replacement (Efraimidis-Spirakis keys) with weight
    ``exp(-fast_bias * r)``, ``r`` the config's runtime percentile in its graph (0 fastest),
    fully vectorised.
    """
    if per_graph < 1:
        raise ValueError(f"per_graph must be >= 1, got {per_graph}")
    group = table.group[rows]
    target = table.target[rows]
    by_target = np.lexsort((target, group))
    g_sorted = group[by_target]
    starts = np.r_[True, g_sorted[1:] != g_sorted[:-1]]
    first = np.flatnonzero(starts)[np.cumsum(starts) - 1]
    sizes = np.bincount(np.cumsum(starts) - 1)
    size_per = sizes[np.cumsum(starts) - 1]
    pct = np.empty(len(rows))
    pct[by_target] = (np.arange(len(rows)) - first) / np.maximum(size_per - 1, 1)
    weight = np.exp(-fast_bias * pct)
    key = np.log(rng.random(len(rows)) + 1e-300) / weight
    by_key = np.lexsort((-key, group))
    gk = group[by_key]
    kstarts = np.r_[True, gk[1:] != gk[:-1]]
    kfirst = np.flatnonzero(kstarts)[np.cumsum(kstarts) - 1]
    chosen = by_key[(np.arange(len(rows)) - kfirst) < per_graph]
    return rows[np.sort(chosen)]
