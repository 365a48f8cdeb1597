"""LightGBM lambdarank ranker following the scikit-learn estimator contract.

Runtimes become integer relevance labels per group (graph): the fastest configs of a graph
get the highest label. LightGBM refuses lambdarank queries of more than 10,000 rows, and
lambdarank's cost grows with the square of the query size, so a graph with more than
``max_group_size`` rows is split at random into balanced sub-queries of at most that size
*after* its labels are computed over the whole graph: every pair inside a sub-query is still
a correctly ordered pair of the graph.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hpo.errors import ConfigError

__all__ = ["LIGHTGBM_QUERY_LIMIT", "LambdaRanker", "relevance_labels", "split_large_groups"]

LIGHTGBM_QUERY_LIMIT = 10_000


def _check_groups(group: np.ndarray, n: int) -> np.ndarray:
    g = np.asarray(group)
    if g.shape != (n,):
        raise ConfigError(f"group ids: expected shape ({n},), found {g.shape}")
    if g.dtype.kind not in "iu":
        raise ConfigError(f"group ids: expected integers, found {g.dtype}")
    if n and len(np.unique(g)) != np.count_nonzero(np.diff(g)) + 1:
        raise ConfigError("group ids: rows of one group must be contiguous")
    return g.astype(np.int64, copy=False)


def relevance_labels(target: np.ndarray, group: np.ndarray, levels: int) -> np.ndarray:
    """Integer relevance per row: ``levels - 1`` for the fastest configs of a group, 0 slowest.

    Labels are quantiles of the rank of ``target`` inside each group (ties share the lower
    rank), so every group uses the full label range whatever its runtime scale.
    """
    if not 2 <= levels <= 31:
        raise ConfigError(f"label levels must be in 2..31, found {levels}")
    n = len(target)
    order = np.lexsort((target, group))
    g_sorted = group[order]
    starts = np.r_[True, g_sorted[1:] != g_sorted[:-1]] if n else np.zeros(0, dtype=bool)
    start_idx = np.flatnonzero(starts)
    first = start_idx[np.cumsum(starts) - 1]
    sizes = np.diff(np.r_[start_idx, n])
    size_per = sizes[np.cumsum(starts) - 1]
    t_sorted = target[order]
    # ties share the rank of their first occurrence
    new_value = np.r_[True, (t_sorted[1:] != t_sorted[:-1]) | (g_sorted[1:] != g_sorted[:-1])]
    tie_first = np.flatnonzero(new_value)[np.cumsum(new_value) - 1]
    rank = (tie_first - first).astype(np.float64)
    pct = rank / np.maximum(size_per, 1)
    label_sorted = (levels - 1) - np.floor(pct * levels).astype(np.int64)
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.clip(label_sorted, 0, levels - 1)
    return labels


def split_large_groups(
    group: np.ndarray, max_group_size: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Split groups larger than ``max_group_size`` into balanced random sub-groups.

    Returns
    -------
    tuple of numpy.ndarray
        ``order``: a row permutation making every sub-group contiguous, and ``sizes``: the
        sub-group sizes in that order (what LightGBM's ``group=`` expects).
    """
    n = len(group)
    sizes_g = np.bincount(group)
    n_sub = np.maximum(1, -(-sizes_g // max_group_size))
    within = np.lexsort((rng.random(n), group))  # by group, random order inside a group
    g_sorted = group[within]
    starts = np.concatenate([[0], np.cumsum(sizes_g)[:-1]])
    sub = (np.arange(n) - starts[g_sorted]) % n_sub[g_sorted]
    by_sub = np.lexsort((sub, g_sorted))
    order = within[by_sub]
    keys = g_sorted[by_sub] * (int(n_sub.max()) + 1) + sub[by_sub]
    _, sizes = np.unique(keys, return_counts=True)
    return order, sizes.astype(np.int64)


class LambdaRanker:
    """LightGBM lambdarank with per-group relevance labels and large-group splitting.

    Parameters
    ----------
    params
        LightGBM parameters (``learning_rate``, ``num_leaves`` ...); objective and metric are
        set by the ranker.
    num_boost_round
        Boosting rounds.
    label_levels
        Number of relevance levels (2..31).
    max_group_size
        Largest query passed to LightGBM (at most 10,000).
    seed
        Seeds LightGBM and the group splitting; with the same data and seed, fits are identical.
    n_threads
        LightGBM threads.
    """

    def __init__(
        self,
        params: dict[str, Any] | None = None,
        *,
        num_boost_round: int = 200,
        label_levels: int = 16,
        max_group_size: int = 1024,
        seed: int = 0,
        n_threads: int = 1,
    ) -> None:
        self.params = params
        self.num_boost_round = num_boost_round
        self.label_levels = label_levels
        self.max_group_size = max_group_size
        self.seed = seed
        self.n_threads = n_threads

    def lightgbm_params(self) -> dict[str, Any]:
        """The full LightGBM parameter dict used for training."""
        p: dict[str, Any] = dict(self.params or {})
        p.update(
            objective="lambdarank",
            metric="none",
            label_gain=list(range(self.label_levels)),
            seed=self.seed,
            deterministic=True,
            force_row_wise=True,
            num_threads=self.n_threads,
            verbose=-1,
        )
        return p

    def fit(
        self,
        X: np.ndarray,
        target: np.ndarray,
        group: np.ndarray,
        *,
        init_model: Any | None = None,
    ) -> LambdaRanker:
        """Train on rows ``X`` with runtimes ``target`` (lower is faster) grouped by ``group``.

        ``init_model`` (a fitted LambdaRanker's booster) continues training from it instead
        of starting from scratch; ``num_boost_round`` more rounds are added.
        """
        import lightgbm as lgb

        if not 1 <= self.max_group_size <= LIGHTGBM_QUERY_LIMIT:
            raise ConfigError(
                f"max_group_size must be in 1..{LIGHTGBM_QUERY_LIMIT}, found {self.max_group_size}"
            )
        X = np.asarray(X, dtype=np.float32)
        if X.ndim != 2 or len(X) == 0:
            raise ConfigError(f"X: expected a non-empty 2-D array, found shape {X.shape}")
        target = np.asarray(target, dtype=np.float64)
        if target.shape != (len(X),):
            raise ConfigError(f"target: expected shape ({len(X)},), found {target.shape}")
        g = _check_groups(group, len(X))
        _, g = np.unique(g, return_inverse=True)
        labels = relevance_labels(target, g, self.label_levels)
        order, sizes = split_large_groups(g, self.max_group_size, np.random.default_rng(self.seed))
        data = lgb.Dataset(X[order], labels[order], group=sizes, free_raw_data=True)
        self.booster_ = lgb.train(
            self.lightgbm_params(),
            data,
            num_boost_round=self.num_boost_round,
            init_model=init_model,
            keep_training_booster=True,
        )
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted scores, lower = predicted faster (the negated LightGBM relevance)."""
        if not hasattr(self, "booster_"):
            raise ConfigError("LambdaRanker: call fit() before predict()")
        X = np.asarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ConfigError(
                f"X: expected {self.n_features_in_} feature columns, found shape {X.shape}"
            )
        return -np.asarray(self.booster_.predict(X, num_threads=self.n_threads), dtype=np.float64)
