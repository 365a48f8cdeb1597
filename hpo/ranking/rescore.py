"""Score a saved booster again on a family's valid split, without training.

A warm start from a run of the same problem (:mod:`hpo.campaign.seeding.warm_reuse`) takes the
source's best booster as its first trial: trained again, it would start LightGBM's random streams
from another seed and score differently (docs/benchmarks.md#warm-starts-and-extensions: below
its source in 2 seeds of 5), while the source's booster is a model already known to score what
the source recorded. Scoring goes through :func:`hpo.ranking.scoring.valid.score_valid`, the
function that scored the trial that made the booster, so the same booster on the same rows gives the
same score.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from hpo.errors import ConfigError
from hpo.features.table.feature_table import FeatureTable
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import collection_weights
from hpo.ranking.prior.learned import LearnedPrior
from hpo.ranking.scoring.valid import score_valid, valid_view_of
from hpo.ranking.training import FamilyFit, booster_columns, feature_columns, make_ranker

__all__ = ["rescore_family"]


def rescore_family(
    train: FeatureTable,
    valid: FeatureTable,
    collections: Sequence[str],
    hyperparameters: Mapping[str, Any],
    booster: Any,
    prior: Mapping[str, Any] | None,
    *,
    options: FitOptions | None = None,
) -> FamilyFit:
    """Score ``booster`` (LightGBM's, trained with ``hyperparameters`` on this family's
    ``train`` table's columns) on ``valid``, blended with ``prior`` (the learned prior saved
    beside it, :meth:`LearnedPrior.to_dict`), as :func:`hpo.ranking.training.train_family`
    would have scored it.

    ``options`` gives the threads, the cache of valid views and the scored graphs; nothing is
    trained, so ``rows`` is 0 and ``boost`` takes no time.

    Raises
    ------
    ConfigError
        If the booster reads another number of columns than the table's booster columns, or
        the prior is malformed: the booster was not trained on this table.
    """
    t0 = time.perf_counter()
    opt = options if options is not None else FitOptions()
    cols = booster_columns(train.feature_names)
    if booster.num_feature() != cols.size:
        raise ConfigError(
            f"the saved booster reads {booster.num_feature()} columns, this table's {cols.size}"
        )
    live = feature_columns(train, hyperparameters)
    live_names = tuple(train.feature_names[j] for j in live)
    weights = collection_weights(hyperparameters, collections)
    learned = None if prior is None else LearnedPrior.from_dict(prior, "the saved prior")
    ranker = make_ranker(
        hyperparameters,
        collections,
        num_boost_round=booster.current_iteration(),
        seed=0,  # nothing is drawn: the booster is trained already
        n_threads=opt.n_threads,
    )
    ranker.booster_ = booster
    ranker.n_features_in_ = cols.size
    view = valid_view_of(valid, collections, opt)
    t1 = time.perf_counter()
    scores, metrics, seconds, _ = score_valid(
        ranker, valid, view, cols, weights, learned, live_names
    )
    return FamilyFit(
        ranker=ranker,
        columns=cols,
        column_names=tuple(train.feature_names[j] for j in cols),
        live=live,
        live_names=live_names,
        rows=0,
        metrics=metrics,
        scores=scores,
        seconds={"dataset": t1 - t0, "boost": 0.0, **seconds},
        dataset_reused=False,
        prior=learned,
    )
