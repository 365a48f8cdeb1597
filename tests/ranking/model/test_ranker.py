from __future__ import annotations

import time

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from hpo.errors import ConfigError, TrialCut
from hpo.ranking.model.ranker import (
    LambdaRanker,
    relevance_labels,
    split_large_groups,
    sub_group_sizes,
)
from hpo.ranking.scoring.metrics import kendall_tau


def _ranking(n_groups: int = 4, size: int = 300, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_groups * size, 5))
    target = (
        X[:, 0] * 2
        + X[:, 1]
        + 0.1 * rng.normal(size=len(X))
        + np.repeat(rng.normal(size=n_groups) * 50, size)
    )
    return X, target, np.repeat(np.arange(n_groups), size)


def test_relevance_labels_fastest_highest() -> None:
    target = np.array([3.0, 1.0, 2.0, 10.0, 30.0, 20.0])
    group = np.array([0, 0, 0, 1, 1, 1])
    labels = relevance_labels(target, group, 3)
    np.testing.assert_array_equal(labels, [0, 2, 1, 2, 0, 1])


def test_relevance_labels_ties_share_label() -> None:
    labels = relevance_labels(np.array([1.0, 1.0, 2.0, 3.0]), np.zeros(4, dtype=int), 4)
    assert labels[0] == labels[1] == 3


def test_relevance_label_levels_checked() -> None:
    with pytest.raises(ConfigError, match="label levels must be in 2..31"):
        relevance_labels(np.ones(3), np.zeros(3, dtype=int), 40)


@pytest.mark.parametrize("max_size", [1, 3, 10, 1000])
def test_split_large_groups(max_size: int) -> None:
    group = np.repeat(np.arange(3), [5, 25, 3])
    order, sizes = split_large_groups(group, max_size, np.random.default_rng(0))
    assert sorted(order) == list(range(len(group)))
    assert sizes.sum() == len(group)
    assert sizes.max() <= max_size
    # sub-groups never mix graphs
    bounds = np.r_[0, np.cumsum(sizes)]
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        assert len(set(group[order[a:b]])) == 1


def test_fit_predict_ranks_within_groups() -> None:
    X, target, group = _ranking()
    ranker = LambdaRanker({"learning_rate": 0.1}, num_boost_round=30, max_group_size=100)
    assert ranker.fit(X, target, group) is ranker
    pred = ranker.predict(X[:300])
    assert kendall_tau(pred, target[:300]) > 0.7


def test_a_deadline_that_passed_stops_boosting_and_one_to_come_does_not() -> None:
    """A campaign's walltime bounds a trial's boosting: past the deadline, no booster."""
    X, target, group = _ranking()
    ranker = LambdaRanker({"learning_rate": 0.1}, num_boost_round=30, max_group_size=100)
    data = ranker.build_dataset(X, target, group)
    with pytest.raises(TrialCut, match=r"round 1 of 30: the campaign's walltime"):
        ranker.fit_dataset(data, deadline=time.time() - 1)
    ranker.fit_dataset(data, deadline=time.time() + 3600)
    assert ranker.booster_.current_iteration() == 30


def test_the_listwise_objective_ranks_too_and_grows_other_trees() -> None:
    X, target, group = _ranking()
    fits = {
        objective: LambdaRanker(
            {"learning_rate": 0.1}, num_boost_round=30, max_group_size=100, objective=objective
        ).fit(X, target, group)
        for objective in ("lambdarank", "rank_xendcg")
    }
    xendcg = fits["rank_xendcg"]
    assert xendcg.booster_.params["objective"] == "rank_xendcg"
    assert kendall_tau(xendcg.predict(X[:300]), target[:300]) > 0.7
    assert xendcg.booster_.model_to_string() != fits["lambdarank"].booster_.model_to_string()


def test_an_unknown_objective_is_refused_naming_it() -> None:
    X, target, group = _ranking(n_groups=1, size=10)
    with pytest.raises(ConfigError, match="ranking objective 'regression': expected one of"):
        LambdaRanker(num_boost_round=1, objective="regression").fit(X, target, group)


def test_group_larger_than_lightgbm_limit() -> None:
    X, target, group = _ranking(n_groups=1, size=12_000)
    ranker = LambdaRanker(num_boost_round=3, max_group_size=4096).fit(X, target, group)
    assert ranker.predict(X).shape == (12_000,)


def test_deterministic_with_seed() -> None:
    X, target, group = _ranking()
    params = {"bagging_fraction": 0.7, "bagging_freq": 1, "feature_fraction": 0.8}
    a = LambdaRanker(params, num_boost_round=10, seed=3).fit(X, target, group).predict(X)
    b = LambdaRanker(params, num_boost_round=10, seed=3).fit(X, target, group).predict(X)
    np.testing.assert_array_equal(a, b)


def test_non_contiguous_groups_refused() -> None:
    X, target, _ = _ranking(n_groups=1, size=4)
    with pytest.raises(ConfigError, match="must be contiguous"):
        LambdaRanker(num_boost_round=1).fit(X, target, np.array([0, 1, 0, 1]))


def test_predict_before_fit() -> None:
    with pytest.raises(NotFittedError, match="call fit"):
        LambdaRanker().predict(np.ones((2, 2)))


def test_clone_keeps_parameters_not_fit() -> None:
    X, target, qid = _ranking(n_groups=2, size=50)
    ranker = LambdaRanker({"num_leaves": 7}, num_boost_round=3, label_levels=5, seed=2)
    ranker.fit(X, target, qid=qid)
    copy = clone(ranker)
    assert copy.get_params() == ranker.get_params()
    assert not hasattr(copy, "booster_")
    assert copy.set_params(seed=9) is copy
    assert copy.seed == 9


def test_reused_dataset_gives_identical_fits() -> None:
    """One binned Dataset serves other label_levels / max_group_size / booster params."""
    X, target, qid = _ranking()
    params = {"bagging_fraction": 0.7, "bagging_freq": 1, "min_data_in_leaf": 50}
    data = LambdaRanker(params).build_dataset(X, target, qid)
    configs = [
        {"label_levels": 8, "max_group_size": 100},
        {"label_levels": 16, "max_group_size": 1000},
    ]
    for kwargs in configs + configs[:1]:
        other = {**params, "min_data_in_leaf": 5} if kwargs["label_levels"] == 16 else params
        fresh = LambdaRanker(other, num_boost_round=5, **kwargs).fit(X, target, qid)
        reused = LambdaRanker(other, num_boost_round=5, **kwargs).fit_dataset(data)
        np.testing.assert_array_equal(fresh.predict(X), reused.predict(X))


def test_sub_group_sizes_balanced() -> None:
    sizes = sub_group_sizes(np.array([5, 25, 3, 0]), 10)
    np.testing.assert_array_equal(sizes, [5, 9, 8, 8, 3])


def test_max_group_size_checked() -> None:
    X, target, group = _ranking(n_groups=1, size=10)
    with pytest.raises(ConfigError, match="max_group_size must be in"):
        LambdaRanker(max_group_size=20_000).fit(X, target, group)
