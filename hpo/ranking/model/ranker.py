"""LightGBM lambdarank ranker following the scikit-learn estimator contract.

Runtimes become integer relevance labels per group (graph): the fastest configs of a graph
get the highest label. LightGBM refuses lambdarank queries of more than 10,000 rows, and
lambdarank's cost grows with the square of the query size, so a graph with more than
``max_group_size`` rows is split at random into balanced sub-queries of at most that size
*after* its labels are computed over the whole graph: every pair inside a sub-query is still
a correctly ordered pair of the graph.

The objective is lambdarank unless the ranker is given LightGBM's listwise ``rank_xendcg``
(:data:`OBJECTIVES`; the tile family's ``tile_objective``): the same labels and sub-queries,
a gradient linear in a query's rows instead of one per pair.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# LightGBM's OpenMP threads spin while they wait. On a machine whose cores are shared (other
# workers, other jobs), 2 spinning threads made a 16-round trial 10-50x slower than 1 thread
# (docs/benchmarks.md#speed-and-memory); passive waiting removes that. It must be set
# before the OpenMP runtime loads (the first LightGBM import); a value set by the user wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
from sklearn.base import BaseEstimator  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402

from hpo.errors import ConfigError, TrialCut  # noqa: E402
from hpo.ranking.model.pairs import SampledPairs  # noqa: E402
from hpo.ranking.model.shared_dataset import RankingData  # noqa: E402

__all__ = [
    "DATASET_PARAMS",
    "LIGHTGBM_QUERY_LIMIT",
    "OBJECTIVES",
    "LambdaRanker",
    "RowOrder",
    "relevance_labels",
    "split_large_groups",
]

LIGHTGBM_QUERY_LIMIT = 10_000
#: LightGBM's ranking objectives a ranker may train with. ``lambdarank`` (pairwise, its cost
#: set by the truncation level) is the default; ``rank_xendcg`` (a listwise cross-entropy,
#: linear in a query's rows) fits tile 3x (small roots) to 9x (real size) faster at the same
#: trees' settings, and ranks tile's top 5 as well (docs/benchmarks.md#tile-objective-and-features).
OBJECTIVES = ("lambdarank", "rank_xendcg", "sampled_pairs")
#: The objective hpo computes itself (:mod:`hpo.ranking.model.pairs`), not one of LightGBM's.
SAMPLED_PAIRS = "sampled_pairs"
#: LightGBM parameters fixed when a Dataset is constructed (binning, bundling, sampling), with
#: their aliases: LightGBM refuses to train a constructed Dataset with other values of them
#: (``Booster::CheckDatasetResetConfig``; ``lightgbm.Dataset.get_params`` lists the same set).
#: A reused Dataset must be keyed by them.
DATASET_PARAMS = frozenset(
    """
    bin_construct_sample_cnt subsample_for_bin data_random_seed data_seed enable_bundle
    is_enable_bundle bundle feature_pre_filter forcedbins_filename is_enable_sparse is_sparse
    enable_sparse sparse linear_tree linear_trees max_bin max_bins max_bin_by_feature
    min_data_in_bin pre_partition is_pre_partition use_missing zero_as_missing two_round
    two_round_loading use_two_round_loading categorical_feature cat_feature categorical_column
    cat_column categorical_features seed random_seed random_state
    """.split()
)


def _check_qid(qid: np.ndarray, n: int) -> np.ndarray:
    g = np.asarray(qid)
    if g.shape != (n,):
        raise ConfigError(f"qid: expected shape ({n},), found {g.shape}")
    if g.dtype.kind not in "iu":
        raise ConfigError(f"qid: expected integers, found {g.dtype}")
    if n and len(np.unique(g)) != np.count_nonzero(np.diff(g)) + 1:
        raise ConfigError("qid: rows of one query (graph) must be contiguous")
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

    Rows are shuffled inside each group (by ``rng``) and each group is cut into
    ``ceil(size / max_group_size)`` contiguous chunks whose sizes differ by at most one. The
    row order depends only on ``group`` and ``rng``, not on ``max_group_size``: a binned
    Dataset in that order serves every ``max_group_size`` by changing only its group sizes.

    Returns
    -------
    tuple of numpy.ndarray
        ``order``: a row permutation making every sub-group contiguous, and ``sizes``: the
        sub-group sizes in that order (what LightGBM's ``group=`` expects).
    """
    order = np.lexsort((rng.random(len(group)), group))  # by group, random order inside
    return order, sub_group_sizes(np.bincount(group), max_group_size)


def sub_group_sizes(sizes: np.ndarray, max_group_size: int) -> np.ndarray:
    """Balanced chunk sizes of at most ``max_group_size`` cutting each group of ``sizes``."""
    sizes = np.asarray(sizes, dtype=np.int64)
    sizes = sizes[sizes > 0]
    n_sub = -(-sizes // max_group_size)
    base, extra = np.repeat(sizes // n_sub, n_sub), np.repeat(sizes % n_sub, n_sub)
    index = np.arange(int(n_sub.sum())) - np.repeat(np.cumsum(n_sub) - n_sub, n_sub)
    return base + (index < extra)


@dataclass(frozen=True, eq=False)
class RowOrder:
    """The Dataset order of training rows: the permutation, runtimes and dense graph ids in it.

    ``order`` permutes the concatenated training rows (graphs in order, shuffled inside by the
    seed, :func:`split_large_groups`); ``y`` and ``qid`` are already in that order.
    """

    order: np.ndarray
    y: np.ndarray
    qid: np.ndarray


class LambdaRanker(BaseEstimator):
    """LightGBM lambdarank with per-group relevance labels and large-group splitting.

    A scikit-learn estimator: ``__init__`` only stores parameters (so ``get_params``,
    ``set_params`` and ``sklearn.base.clone`` work), ``fit`` returns ``self``, learned state
    ends in ``_`` and ``predict`` before ``fit`` raises ``NotFittedError``. Queries are given
    as per-row query ids ``qid`` (as XGBoost names them; LightGBM's ``group`` means sizes).

    Training is split in two steps so a caller can reuse the binned data:
    :meth:`build_dataset` (labels, sub-queries, LightGBM binning; depends only on
    :meth:`dataset_key`) and :meth:`fit_dataset` (boosting). ``fit`` does both.

    Parameters
    ----------
    params
        LightGBM parameters (``learning_rate``, ``num_leaves`` ...); objective and metric are
        set by the ranker.
    objective
        One of :data:`OBJECTIVES`.
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
        objective: str = "lambdarank",
    ) -> None:
        self.params = params
        self.num_boost_round = num_boost_round
        self.label_levels = label_levels
        self.max_group_size = max_group_size
        self.seed = seed
        self.n_threads = n_threads
        self.objective = objective

    def lightgbm_params(self) -> dict[str, Any]:
        """The full LightGBM parameter dict used for training."""
        if self.objective not in OBJECTIVES:
            raise ConfigError(
                f"ranking objective '{self.objective}': expected one of {', '.join(OBJECTIVES)}"
            )
        p: dict[str, Any] = dict(self.params or {})
        p.update(
            # hpo's own objective is a callable given at fit time; "none" until then
            objective="none" if self.objective == SAMPLED_PAIRS else self.objective,
            metric="none",
            label_gain=list(range(self.label_levels)),
            seed=self.seed,
            deterministic=True,
            force_row_wise=True,
            # no pre-filtering of features by min_data_in_leaf: a binned Dataset is reused by
            # trials whose min_data_in_leaf differs (LightGBM refuses a smaller one otherwise)
            feature_pre_filter=False,
            num_threads=self.n_threads,
            verbose=-1,
        )
        if not {"data_random_seed", "data_seed"} & p.keys():
            # the value LightGBM derives from seed, explicit: a chunked Dataset samples its
            # bins from the Dataset params alone (hpo.ranking.model.lightgbm_adapter)
            from hpo.ranking.model.lightgbm_adapter import derived_data_seed

            p["data_random_seed"] = derived_data_seed(self.seed)
        return p

    def dataset_params(self) -> dict[str, Any]:
        """The LightGBM parameters that shape a constructed Dataset (see DATASET_PARAMS)."""
        p = {k: v for k, v in self.lightgbm_params().items() if k in DATASET_PARAMS}
        p.update(num_threads=self.n_threads, verbose=-1)
        return p

    def dataset_key(self) -> tuple[Any, ...]:
        """Everything besides the rows that determines :meth:`build_dataset`'s result.

        Two rankers with equal keys (and the same rows) can share one built Dataset: the row
        order depends on ``seed``, the bins on the Dataset params (``max_bin`` ...). Labels
        (``label_levels``) and sub-queries (``max_group_size``) are set per fit.
        """
        params = self.dataset_params()
        return tuple(sorted((k, repr(v)) for k, v in params.items() if k != "num_threads"))

    def row_order(self, y: np.ndarray, qid: np.ndarray) -> RowOrder:
        """Check runtimes ``y`` in queries ``qid`` and find their Dataset order.

        The order (graphs, shuffled inside by ``seed``) does not depend on the binning, so one
        :class:`RowOrder` serves the Datasets of every ``max_bin``.
        """
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1 or len(y) == 0:
            raise ConfigError(f"y: expected a non-empty 1-D array, found shape {y.shape}")
        g = _check_qid(qid, len(y))
        _, g = np.unique(g, return_inverse=True)
        order, _ = split_large_groups(g, LIGHTGBM_QUERY_LIMIT, np.random.default_rng(self.seed))
        return RowOrder(order, y[order], g[order])

    def bin_rows(
        self,
        parts: Sequence[tuple[np.ndarray, np.ndarray]],
        order: RowOrder,
        binary: Path | None = None,
        columns: np.ndarray | None = None,
        names: Sequence[str] | None = None,
    ) -> RankingData:
        """Construct the binned LightGBM Dataset of training rows, for :meth:`fit_dataset`.

        ``parts`` are ``(X, rows)`` pairs (a table, in memory or memory-mapped, and row
        indices into it) whose concatenated rows ``order`` puts in Dataset order. LightGBM
        reads them in chunks (:class:`hpo.ranking.model.lightgbm_adapter.TableRows`), and the
        Dataset keeps only row indices, from which a continued booster's initial scores are
        predicted chunk by chunk. ``binary``: a binary Dataset file of the same rows and
        :meth:`dataset_key`, loaded when it exists and written otherwise
        (:func:`hpo.ranking.model.datasets.binary_dataset`). ``columns``: the table columns the
        Dataset holds (default all). ``names``: their feature names, which the booster then
        carries, so a model's column list can be checked against it (default LightGBM's
        ``Column_<i>``).
        """
        from hpo.ranking.model.datasets import binary_dataset
        from hpo.ranking.model.lightgbm_adapter import ChunkedDataset, TableRows

        rows = TableRows(parts, order.order, columns=columns)
        graph_sizes = np.bincount(order.qid)
        # the closures below make the copies of the cached Dataset, so they hold these values,
        # not this ranker (whose booster would then live as long as the cache entry)
        params, levels, group_size = (
            self.dataset_params(),
            self.label_levels,
            self._checked_group_size(),
        )
        feature_name = "auto" if names is None else list(names)

        def build() -> Any:
            return ChunkedDataset(
                rows,
                rows=rows,
                label=relevance_labels(order.y, order.qid, levels),
                group=sub_group_sizes(graph_sizes, group_size),
                params=params,
                free_raw_data=False,
                feature_name=feature_name,
            ).construct()

        def load(path: Path) -> Any:
            dataset = ChunkedDataset(
                str(path), rows=rows, params=params, free_raw_data=False, feature_name=feature_name
            ).construct()
            found = (dataset.num_data(), dataset.num_feature())
            if found != (len(rows), rows.n_columns):
                expected = (len(rows), rows.n_columns)
                raise ValueError(f"holds {found} rows x columns, expected {expected}")
            return dataset

        def make() -> tuple[Any, tuple[int, int]]:
            if binary is None:
                return build(), (levels, group_size)
            built: list[bool] = []

            def build_here() -> Any:
                built.append(True)
                return build()

            # built here: it holds this ranker's fields; loaded (or built by another ranker,
            # maybe with other ones): they are set at its first checkout
            dataset = binary_dataset(binary, build_here, load)
            return dataset, ((levels, group_size) if built else (0, 0))

        return RankingData(
            make,
            labels=lambda n: relevance_labels(order.y, order.qid, n),
            groups=lambda size: sub_group_sizes(graph_sizes, size),
            rows=(order.y, order.qid),
        )

    def build_dataset(self, X: np.ndarray, y: np.ndarray, qid: np.ndarray) -> RankingData:
        """:meth:`row_order` then :meth:`bin_rows` of in-memory rows ``X``."""
        X = X if isinstance(X, np.ndarray) else np.asarray(X)  # a memmap stays one
        if X.ndim != 2 or len(X) == 0:
            raise ConfigError(f"X: expected a non-empty 2-D array, found shape {X.shape}")
        if np.shape(y) != (len(X),):
            raise ConfigError(f"y: expected shape ({len(X)},), found {np.shape(y)}")
        return self.bin_rows([(X, np.arange(len(X)))], self.row_order(y, qid))

    def _checked_group_size(self) -> int:
        if not 1 <= self.max_group_size <= LIGHTGBM_QUERY_LIMIT:
            raise ConfigError(
                f"max_group_size must be in 1..{LIGHTGBM_QUERY_LIMIT}, found {self.max_group_size}"
            )
        return int(self.max_group_size)

    def fit_dataset(
        self,
        data: RankingData,
        *,
        init_model: Any | None = None,
        deadline: float | None = None,
    ) -> LambdaRanker:
        """Boost ``num_boost_round`` rounds on a Dataset from :meth:`build_dataset`.

        ``init_model`` (a fitted LambdaRanker's booster) continues training from it instead
        of starting from scratch; ``num_boost_round`` more rounds are added.

        Raises
        ------
        TrialCut
            If the wall clock passes ``deadline`` (``time.time()``) before the last round:
            no booster of fewer rounds than asked is returned.
        """
        import lightgbm as lgb

        from hpo.ranking.model.lightgbm_adapter import continued_seeds

        params = self.lightgbm_params()
        done = 0 if init_model is None else init_model.current_iteration()
        if init_model is not None:  # fresh samples for the new rounds, not those of round 1 on
            params.update(continued_seeds(self.seed, done))
        if self.objective == SAMPLED_PAIRS:
            runtime, graph = data.rows
            params["objective"] = SampledPairs(runtime, graph, seed=self.seed, start_round=done)
        with data.checkout(self.label_levels, self._checked_group_size()) as dataset:
            self.booster_ = lgb.train(
                params,
                dataset,
                num_boost_round=self.num_boost_round,
                init_model=init_model,
                keep_training_booster=True,
                callbacks=None if deadline is None else [_stop_at(deadline)],
            )
            self.n_features_in_ = int(dataset.num_feature())
        return self

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        qid: np.ndarray,
        *,
        init_model: Any | None = None,
    ) -> LambdaRanker:
        """Train on rows ``X`` with runtimes ``y`` (lower is faster) in queries ``qid``.

        ``qid`` holds one query (graph) id per row; rows of a query are contiguous.
        ``init_model`` continues a booster (see :meth:`fit_dataset`).
        """
        return self.fit_dataset(self.build_dataset(X, y, qid), init_model=init_model)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Predicted scores, lower = predicted faster (the negated LightGBM relevance)."""
        if not hasattr(self, "booster_"):
            raise NotFittedError("LambdaRanker: call fit() before predict()")
        X = np.asarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ConfigError(
                f"X: expected {self.n_features_in_} feature columns, found shape {X.shape}"
            )
        return -np.asarray(self.booster_.predict(X, num_threads=self.n_threads), dtype=np.float64)


def _stop_at(deadline: float) -> Callable[[Any], None]:
    """A LightGBM callback that raises :class:`TrialCut` once ``time.time()`` passes
    ``deadline``: a campaign's walltime bounds its trials too, not only when SMAC starts one."""

    def check(env: Any) -> None:
        if time.time() > deadline:
            raise TrialCut(
                f"stopped at boosting round {env.iteration + 1} of {env.end_iteration}: the "
                "campaign's walltime (and its grace) ran out during this trial"
            )

    return check
