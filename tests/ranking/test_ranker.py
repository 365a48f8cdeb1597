from __future__ import annotations

import numpy as np
import pytest

from hpo.errors import ConfigError
from hpo.ranking.metrics import kendall_tau
from hpo.ranking.ranker import LambdaRanker, relevance_labels, split_large_groups


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
    with pytest.raises(ConfigError, match="call fit"):
        LambdaRanker().predict(np.ones((2, 2)))


def test_max_group_size_checked() -> None:
    X, target, group = _ranking(n_groups=1, size=10)
    with pytest.raises(ConfigError, match="max_group_size must be in"):
        LambdaRanker(max_group_size=20_000).fit(X, target, group)
