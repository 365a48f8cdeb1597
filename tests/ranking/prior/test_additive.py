"""The additive fit: shared weights of byte totals, one scale per graph, from per-graph sums."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import kendalltau

from hpo.ranking.prior.additive import GraphGrams, solve_additive
from hpo.ranking.standardize import standardize_within


def _law(rng: np.random.Generator, n_graphs: int, weights: np.ndarray):
    """Graphs whose runtime is ``base + kappa * bytes @ weights``: each graph has its own base,
    its own ``kappa`` (runtime per byte) and its own spread of each total, so a column that
    varies little in one graph varies a lot in another."""
    sizes = rng.integers(30, 80, n_graphs)
    bounds = np.r_[0, np.cumsum(sizes)]
    parts, runtimes = [], []
    for n in sizes.tolist():
        size = 10 ** rng.uniform(4, 8, len(weights))  # per total: its size in this graph
        spread = rng.uniform(0.01, 1.0, len(weights))  # and how much configs move it
        b = size * (1 + spread * rng.random((n, len(weights))))
        kappa = 10 ** rng.uniform(-3, 1)
        parts.append(b)
        runtimes.append(1e9 + kappa * b @ weights)
    return np.concatenate(parts), np.concatenate(runtimes), bounds


def _grams(B: np.ndarray, runtime: np.ndarray, bounds: np.ndarray) -> GraphGrams:
    grams = GraphGrams.empty(len(bounds) - 1, B.shape[1])
    graph = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    for g in range(len(bounds) - 1):
        a, b = bounds[g], bounds[g + 1]
        r = runtime[a:b] - runtime[a:b].mean()
        grams.target_std[g] = r.std()
    centred = B - np.repeat(np.add.reduceat(B, bounds[:-1]) / np.diff(bounds)[:, None],
                            np.diff(bounds), axis=0)  # fmt: skip
    sizes = np.sqrt(np.add.reduceat(centred**2, bounds[:-1]) / np.diff(bounds)[:, None])
    varies = np.repeat(sizes > 1e-9 * np.abs(B[bounds[:-1]]), np.diff(bounds), axis=0)
    target = standardize_within(runtime[:, None], bounds)[:, 0]
    grams.add(np.where(varies, centred, 0.0), target, graph)  # constant: 0, as the product
    return grams


def test_shared_weights_are_found_whatever_each_graphs_scale() -> None:
    """The ratios of the law's weights come back, and the estimate orders unseen graphs as
    the law does; each column standardized in its graph (the fit before) cannot add them."""
    weights = np.array([3.0, 0.5, 1.0])
    B, runtime, bounds = _law(np.random.default_rng(0), 40, weights)
    coef = solve_additive(_grams(B, runtime, bounds), [0, 1, 2], ridge=1e-6)
    assert coef is not None
    np.testing.assert_allclose(coef / coef[2], weights / weights[2], rtol=1e-3)
    Bt, rt, bt = _law(np.random.default_rng(1), 20, weights)
    estimate = Bt @ coef
    z = standardize_within(Bt, bt)
    standardized = z @ np.linalg.lstsq(standardize_within(B, bounds), runtime, rcond=None)[0]
    pairs = list(zip(bt[:-1], bt[1:], strict=True))
    tau = np.mean([kendalltau(estimate[a:b], rt[a:b]).statistic for a, b in pairs])
    before = np.mean([kendalltau(standardized[a:b], rt[a:b]).statistic for a, b in pairs])
    assert tau > 0.999  # noiseless: the law's own order
    assert before < 0.95


def test_sums_of_pieces_are_the_sums_of_the_whole() -> None:
    B, runtime, bounds = _law(np.random.default_rng(2), 5, np.array([1.0, 2.0]))
    whole = _grams(B, runtime, bounds)
    graph = np.repeat(np.arange(5), np.diff(bounds))
    pieces = GraphGrams.empty(5, 2)
    pieces.target_std[:] = whole.target_std
    centred = B - np.repeat(np.add.reduceat(B, bounds[:-1]) / np.diff(bounds)[:, None],
                            np.diff(bounds), axis=0)  # fmt: skip
    target = standardize_within(runtime[:, None], bounds)[:, 0]
    for a in range(0, len(graph), 7):  # pieces that cut graphs
        pieces.add(centred[a : a + 7], target[a : a + 7], graph[a : a + 7])
    np.testing.assert_allclose(pieces.gram, whole.gram, rtol=1e-12)
    np.testing.assert_allclose(pieces.cross, whole.cross, rtol=1e-9, atol=1e-6)
    np.testing.assert_array_equal(pieces.count, whole.count)
    both = whole.merged(pieces)
    assert both.gram.shape == (10, 2, 2)
    np.testing.assert_array_equal(both.count, np.r_[whole.count, whole.count])


def test_graphs_whose_runtimes_do_not_vary_teach_nothing() -> None:
    B, runtime, bounds = _law(np.random.default_rng(3), 6, np.array([1.0, 2.0]))
    grams = _grams(B, runtime, bounds)
    coef = solve_additive(grams, [0, 1], ridge=1e-3)
    flat = _grams(B, np.repeat(runtime[bounds[:-1]], np.diff(bounds)), bounds)
    assert not flat.signal
    assert solve_additive(flat, [0, 1], ridge=1e-3) is None
    assert solve_additive(grams, [], ridge=1e-3) is None
    # a flat graph among others changes nothing: it is left out, not fitted as zeros
    mixed = grams.merged(flat)
    np.testing.assert_array_equal(solve_additive(mixed, [0, 1], ridge=1e-3), coef)
    # a sub-block of the sums is the fit of those columns alone
    alone = _grams(B[:, [1]], runtime, bounds)
    np.testing.assert_allclose(
        solve_additive(grams, [1], ridge=1e-3), solve_additive(alone, [0], ridge=1e-3), rtol=1e-9
    )


def test_totals_that_vary_in_no_graph_teach_nothing() -> None:
    """Runtimes vary but every total is constant inside its graph: no weights, not zeros (a
    random collection then falls back to the pooled weights)."""
    B, runtime, bounds = _law(np.random.default_rng(4), 5, np.array([1.0, 2.0]))
    flat = np.repeat(B[bounds[:-1]], np.diff(bounds), axis=0)  # each graph's first row
    assert _grams(flat, runtime, bounds).signal
    assert solve_additive(_grams(flat, runtime, bounds), [0, 1], ridge=1e-3) is None


def test_sums_past_float64s_range_give_no_nan_weights() -> None:
    """A graph whose byte totals squared, over its runtime's tiny spread, leave float64's range:
    the fit gives up or keeps the last finite direction, without NaN weights and without
    numpy's overflow warnings in the campaign's output (a blind law's train split printed
    them)."""
    B, runtime, bounds = _law(np.random.default_rng(5), 4, np.array([1.0, 2.0]))
    grams = _grams(B, runtime, bounds)
    huge = GraphGrams(
        grams.gram * 1e290, grams.cross * 1e150, grams.count, grams.target_std * 1e-10
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        coef = solve_additive(huge, [0, 1], ridge=1e-3)
    assert coef is None or np.isfinite(coef).all()
