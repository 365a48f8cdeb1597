"""Train a ranker on feature tables and score it: shared by the objective, export and evaluate.

Hyperparameters arrive as one flat mapping (a SMAC configuration): ``label_levels``,
``max_group_size``, ``relative_features`` and ``num_boost_round`` steer the ranker and the
feature selection; every other key is passed to LightGBM.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpo.features.groups import GROUP_PREFIX, columns_for, switches_from_hyperparameters
from hpo.features.table import FeatureTable
from hpo.ranking.metrics import collection_metric
from hpo.ranking.ranker import LambdaRanker

__all__ = [
    "DEFAULT_FIXED_ROUNDS",
    "GraphScore",
    "RANKER_KEYS",
    "feature_columns",
    "make_ranker",
    "sample_configs",
    "score_table",
    "select_rows",
]

#: Boosting rounds of every trial when the fidelity is ``configs`` (configs per graph).
DEFAULT_FIXED_ROUNDS = 200
#: Hyperparameters consumed by the ranker/feature selection rather than passed to LightGBM.
RANKER_KEYS = ("label_levels", "max_group_size", "relative_features", "num_boost_round")


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() in ("true", "1", "yes")
    return bool(value)


def feature_columns(table: FeatureTable, hyperparameters: Mapping[str, Any]) -> np.ndarray:
    """Indices of the feature columns to use.

    ``relative_features`` switches the relative columns and every ``use_group_<name>`` the
    feature group ``<name>`` (:mod:`hpo.features.groups`); absent switches are on.
    """
    return columns_for(
        table.feature_names,
        switches_from_hyperparameters(hyperparameters),
        relative=_as_bool(hyperparameters.get("relative_features", True)),
    )


def make_ranker(
    hyperparameters: Mapping[str, Any], *, num_boost_round: int, seed: int, n_threads: int = 1
) -> LambdaRanker:
    """Build an unfitted :class:`LambdaRanker` from a flat hyperparameter mapping."""
    params = {
        k: v
        for k, v in hyperparameters.items()
        if k not in RANKER_KEYS and not k.startswith(GROUP_PREFIX)
    }
    for key, value in list(params.items()):
        if isinstance(value, np.generic):
            params[key] = value.item()
    return LambdaRanker(
        params,
        num_boost_round=num_boost_round,
        label_levels=int(hyperparameters.get("label_levels", 16)),
        max_group_size=int(hyperparameters.get("max_group_size", 1024)),
        seed=seed,
        n_threads=n_threads,
    )


def select_rows(table: FeatureTable, collections: Sequence[str]) -> np.ndarray:
    """Row indices of the graphs of ``collections`` that have labels."""
    keep = np.array([g.collection in collections and g.labeled for g in table.graphs], dtype=bool)
    return np.flatnonzero(keep[table.group]) if keep.size else np.zeros(0, dtype=np.int64)


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


@dataclass(frozen=True)
class GraphScore:
    """Metric of one scored graph."""

    collection: str
    stem: str
    metric: float
    n_configs: int


def score_table(
    ranker: LambdaRanker,
    table: FeatureTable,
    columns: np.ndarray,
    collections: Sequence[str],
) -> list[GraphScore]:
    """Predict every labeled graph of ``collections`` in ``table`` and score each graph."""
    rows = select_rows(table, collections)
    if rows.size == 0:
        return []
    pred = ranker.predict(table.X[rows][:, columns])
    groups = table.group[rows]
    bounds = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1], True])
    scores: list[GraphScore] = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        ref = table.graphs[groups[a]]
        metric = collection_metric(ref.collection, pred[a:b], table.target[rows[a:b]])
        scores.append(GraphScore(ref.collection, ref.stem, metric, int(b - a)))
    return scores


def collection_means(scores: Sequence[GraphScore], collections: Sequence[str]) -> dict[str, float]:
    """Mean metric per collection (only collections that have scored graphs)."""
    out: dict[str, float] = {}
    for c in collections:
        vals = [s.metric for s in scores if s.collection == c]
        if vals:
            out[c] = float(np.mean(vals))
    return out
