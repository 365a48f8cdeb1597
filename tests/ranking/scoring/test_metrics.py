from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from scipy import stats

from hpo.ranking.scoring.metrics import (
    collection_metric,
    kendall_tau,
    overall_score,
    score_collection,
    tile_score,
    topk_error,
)


@pytest.mark.parametrize("seed", range(5))
def test_kendall_tau_is_scipys_tau_b_without_ties_in_the_prediction(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pred = rng.permutation(200).astype(float)
    runtime = rng.integers(0, 15, size=200).astype(float)  # ties in the runtimes stay tau-b's
    assert kendall_tau(pred, runtime) == pytest.approx(stats.kendalltau(pred, runtime).statistic)


@pytest.mark.parametrize("seed", range(3))
def test_kendall_tau_of_tied_predictions_is_the_mean_over_every_order_of_the_ties(
    seed: int,
) -> None:
    """A submission writes an order: each tie becomes some order of its configs. The metric is
    scipy's tau-b of that order, averaged over every such order (here all 3! * 2! of them)."""
    rng = np.random.default_rng(seed)
    pred = np.array([0.0, 2.0, 0.0, 1.0, 0.0, 2.0, 3.0])
    runtime = rng.integers(0, 5, size=7).astype(float)  # ties in the runtimes too
    groups = [np.flatnonzero(pred == v) for v in np.unique(pred)]
    taus = []
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        place = np.empty(7)
        place[np.concatenate(orders)] = np.arange(7)
        taus.append(stats.kendalltau(place, runtime).statistic)
    assert len(taus) == 12
    assert kendall_tau(pred, runtime) == pytest.approx(np.mean(taus), abs=1e-12)
    # below the tau-b of the scores, which leaves the tied pairs out
    assert abs(kendall_tau(pred, runtime)) < abs(stats.kendalltau(pred, runtime).statistic)


def test_kendall_tau_direction() -> None:
    runtime = np.array([3.0, 1.0, 2.0])
    assert kendall_tau(runtime, runtime) == pytest.approx(1.0)
    assert kendall_tau(-runtime, runtime) == pytest.approx(-1.0)


def test_kendall_tau_undefined_is_zero() -> None:
    assert kendall_tau(np.ones(5), np.arange(5.0)) == 0.0
    assert kendall_tau(np.array([1.0]), np.array([2.0])) == 0.0


def test_kendall_tau_length_mismatch() -> None:
    with pytest.raises(ValueError, match="differ in length: 3 vs 2"):
        kendall_tau(np.ones(3), np.ones(2))


def test_tile_score_definition() -> None:
    runtime = np.array([5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 8.0])
    perfect = runtime.copy()
    assert tile_score(perfect, runtime) == pytest.approx(1.0)
    # predicted best five exclude the true best (index 1): best of them is 2.0
    pred = np.array([0, 99, 1, 2, 3, 4, 5], dtype=float)
    assert tile_score(pred, runtime, k=5) == pytest.approx(2 - 2.0 / 1.0)
    assert topk_error(pred, runtime, 5) == pytest.approx(1.0)
    assert topk_error(pred, runtime, 1) == pytest.approx(4.0)


def test_tile_score_fewer_configs_than_k() -> None:
    assert tile_score(np.array([1.0, 0.0]), np.array([2.0, 3.0])) == pytest.approx(1.0)


@pytest.mark.parametrize("seed", range(3))
def test_tile_score_against_sort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    pred, runtime = rng.random(300), rng.random(300) + 0.1
    top = np.argsort(pred, kind="stable")[:5]
    assert tile_score(pred, runtime) == pytest.approx(2 - runtime[top].min() / runtime.min())


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("k", [1, 2, 5])
def test_ties_at_the_kth_place_count_as_the_mean_over_every_order_of_the_ties(
    seed: int, k: int
) -> None:
    """A score used to break ties by index, so reversing a file's configs changed it (probe2
    #74): it is the mean over every order of the tied configs, whatever the file's order."""
    rng = np.random.default_rng(seed)
    pred = np.array([0.0, 1.0, 1.0, 1.0, 2.0, 1.0, 3.0, 1.0])
    runtime = rng.permutation(8).astype(float) + 1.0
    groups = [np.flatnonzero(pred == v) for v in np.unique(pred)]
    scores = []
    for orders in itertools.product(*(itertools.permutations(g) for g in groups)):
        top = np.concatenate(orders)[:k]
        scores.append(2 - runtime[top].min() / runtime.min())
    assert tile_score(pred, runtime, k=k) == pytest.approx(np.mean(scores), abs=1e-12)
    assert topk_error(pred, runtime, k) == pytest.approx(1 - np.mean(scores), abs=1e-12)
    back = tile_score(pred[::-1], runtime[::-1], k=k)
    assert back == pytest.approx(tile_score(pred, runtime, k=k), abs=1e-12)


def test_every_config_tied_scores_the_mean_least_of_a_random_k() -> None:
    runtime = np.array([1.0, 2.0, 3.0, 4.0])
    # a random 2 of 4: the least is 1 with chance 3/6, 2 with 2/6, 3 with 1/6
    expected = 2 - (3 * 1.0 + 2 * 2.0 + 1 * 3.0) / 6
    assert tile_score(np.zeros(4), runtime, k=2) == pytest.approx(expected)
    assert tile_score(np.zeros(4), runtime, k=4) == pytest.approx(1.0)


def test_topk_error_invalid_k() -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        topk_error(np.ones(3), np.ones(3), 0)


def test_collection_aggregation() -> None:
    runtime = [np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])]
    preds = [np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0])]
    assert score_collection("layout:xla:random", preds, runtime) == pytest.approx(0.0)
    assert collection_metric("tile:xla", preds[0], runtime[0]) == pytest.approx(1.0)
    assert overall_score({"a": 0.5, "b": 1.0}) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="no graphs to score in tile:xla"):
        score_collection("tile:xla", [], [])


def test_large_graph_is_fast() -> None:
    rng = np.random.default_rng(0)
    pred, runtime = rng.random(100_000), rng.random(100_000)
    t0 = time.perf_counter()
    kendall_tau(pred, runtime)
    tile_score(pred, runtime)
    # generous bound: an O(c^2) implementation takes minutes here
    assert time.perf_counter() - t0 < 5.0


def test_a_graph_without_a_ranking_is_left_out_of_the_collection_mean() -> None:
    """One valid graph of equal runtimes once counted tau 0 in its collection's mean (it took
    layout:xla:random from 0.9873 to 0.4954); a graph of one config alike. Graphs that rank
    keep the competition's tau, and a constant prediction on them still scores 0."""
    rng = np.random.default_rng(0)
    runtime = rng.random(30) + 1.0
    good = -runtime  # wrong way round: tau -1
    flat, single = np.full(30, 7.0), np.array([5.0])
    preds = [good, rng.random(30), rng.random(1)]
    runtimes = [runtime, flat, single]
    assert score_collection("layout:xla:random", preds, runtimes) == pytest.approx(-1.0)
    assert score_collection("tile:xla", preds, runtimes) == tile_score(good, runtime)
    assert score_collection("layout:xla:random", [np.ones(30)], [runtime]) == 0.0
    with pytest.raises(ValueError, match=r"no graphs to score in tile:xla \(none of its 2 carries"):
        score_collection("tile:xla", preds[1:], runtimes[1:])
