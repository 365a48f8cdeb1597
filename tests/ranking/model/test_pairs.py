"""Tests of the sampled-pair objective (hpo/ranking/model/pairs.py)."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.ranking import kendall_tau
from hpo.ranking.hyperparameters import LAYOUT_OBJECTIVE_KEY
from hpo.ranking.model.pairs import SampledPairs
from hpo.ranking.training import make_ranker

LAYOUT = ["layout:xla:random"]


def test_gradients_push_each_pair_toward_its_order() -> None:
    """Two configs of one graph, the first faster: equal scores pull the first up."""
    fobj = SampledPairs(np.array([1.0, 2.0]), np.array([0, 0]), seed=0, samples=8)
    grad, hess = fobj(np.zeros(2), None)
    assert grad[0] < 0 < grad[1]  # LightGBM steps against the gradient: the first rises
    assert grad[0] == pytest.approx(-grad[1])
    assert (hess > 0).all()
    # a pair already ordered by a wide margin gives almost nothing
    grad, _ = fobj(np.array([20.0, -20.0]), None)
    assert np.abs(grad).max() < 1e-6


def test_pairs_stay_inside_a_graph_and_ties_give_nothing() -> None:
    runtime = np.array([1.0, 1.0, 5.0, 7.0])
    graph = np.array([0, 0, 1, 1])  # graph 0's two configs tie
    grad, _ = SampledPairs(runtime, graph, seed=3, samples=16)(np.zeros(4), None)
    assert grad[0] == grad[1] == 0
    assert grad[2] < 0 < grad[3]


def test_the_draw_depends_on_the_seed_and_the_round_only() -> None:
    rng = np.random.default_rng(0)
    runtime, graph = rng.random(50), np.repeat(np.arange(5), 10)
    preds = rng.normal(size=50)
    first = SampledPairs(runtime, graph, seed=1)
    first(preds, None)  # round 0
    continued = SampledPairs(runtime, graph, seed=1, start_round=1)
    np.testing.assert_array_equal(first(preds, None)[0], continued(preds, None)[0])


def test_a_ranker_trained_on_sampled_pairs_orders_its_graphs() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4)).astype(np.float32)
    qid = np.repeat(np.arange(6), 100)
    y = np.exp(X[:, 0] - 0.5 * X[:, 1])
    hp = {"learning_rate": 0.1, "num_leaves": 7, LAYOUT_OBJECTIVE_KEY: "sampled_pairs"}
    ranker = make_ranker(hp, LAYOUT, num_boost_round=40, seed=0).fit(X, y, qid)
    assert ranker.objective == "sampled_pairs"
    taus = [kendall_tau(ranker.predict(X[qid == g]), y[qid == g]) for g in range(6)]
    assert min(taus) > 0.8
    # the tile family has its own objective: the layout one never reaches it
    assert make_ranker(hp, ["tile:xla"], num_boost_round=1, seed=0).objective == "lambdarank"
