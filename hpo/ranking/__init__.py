"""Stage 3, ranking: the LightGBM lambdarank estimator, the one training path of a family, and
the competition's metrics.

The objective, export and the benchmarks all train and score through
:func:`hpo.ranking.training.train_family`, so a trial and an exported model cannot drift apart.
"""

from __future__ import annotations

from hpo.ranking.folds import (
    FOLD_PREFIX,
    assign_folds,
    fold_index,
    fold_names,
    fold_rows,
    labeled_table,
)
from hpo.ranking.hyperparameters import (
    RoutedHyperparameters,
    route_hyperparameters,
)
from hpo.ranking.model.datasets import DatasetCache
from hpo.ranking.model.fit_options import FitOptions, check_threads
from hpo.ranking.model.ranker import (
    LIGHTGBM_QUERY_LIMIT,
    LambdaRanker,
    relevance_labels,
    split_large_groups,
    sub_group_sizes,
)
from hpo.ranking.scoring.metrics import (
    collection_metric,
    kendall_tau,
    overall_score,
    score_collection,
    tile_score,
    topk_error,
)
from hpo.ranking.spaces import (
    DEFAULT_SPACE,
    list_spaces,
    load_space,
    space_from_dict,
    space_to_dict,
)
from hpo.ranking.training import (
    DEFAULT_FIXED_ROUNDS,
    RANKER_KEYS,
    FamilyFit,
    GraphScore,
    collection_means,
    feature_columns,
    make_ranker,
    sample_configs,
    score_table,
    select_rows,
    train_family,
)

__all__ = [
    "DEFAULT_FIXED_ROUNDS",
    "DEFAULT_SPACE",
    "DatasetCache",
    "FOLD_PREFIX",
    "FamilyFit",
    "FitOptions",
    "GraphScore",
    "LIGHTGBM_QUERY_LIMIT",
    "LambdaRanker",
    "RANKER_KEYS",
    "RoutedHyperparameters",
    "assign_folds",
    "check_threads",
    "collection_means",
    "collection_metric",
    "feature_columns",
    "fold_index",
    "fold_names",
    "fold_rows",
    "kendall_tau",
    "labeled_table",
    "list_spaces",
    "load_space",
    "make_ranker",
    "overall_score",
    "relevance_labels",
    "route_hyperparameters",
    "sample_configs",
    "score_collection",
    "score_table",
    "select_rows",
    "space_from_dict",
    "space_to_dict",
    "split_large_groups",
    "sub_group_sizes",
    "tile_score",
    "topk_error",
    "train_family",
]
