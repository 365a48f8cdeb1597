"""Per-graph standardization in memory and over chunks of rows."""

from __future__ import annotations

import numpy as np

from hpo.ranking.standardize import GraphMoments, standardize_within


def test_standardize_within_each_graph() -> None:
    x = np.array([[1.0, 5.0], [3.0, 5.0], [10.0, 7.0], [30.0, 7.0], [50.0, 7.0]])
    z = standardize_within(x, np.array([0, 2, 5]))
    np.testing.assert_allclose(z[:2, 0], [-1.0, 1.0])
    np.testing.assert_allclose(z[2:, 0].mean(), 0.0, atol=1e-12)
    np.testing.assert_allclose(z[2:, 0].std(), 1.0)
    np.testing.assert_array_equal(z[:, 1], 0.0)  # does not vary inside a graph: no signal


def test_moments_over_pieces_standardize_as_the_whole_graph_does() -> None:
    rng = np.random.default_rng(5)
    sizes = np.array([7, 1, 30, 12])
    x = rng.normal(size=(sizes.sum(), 3)) * [1.0, 1e6, 0.0] + [0.0, 3e6, 4.0]
    bounds = np.r_[0, np.cumsum(sizes)]
    graph = np.repeat(np.arange(len(sizes)), sizes)
    whole = standardize_within(x, bounds)
    one = GraphMoments.empty(len(sizes), 3)
    one.add(x, graph)  # every graph inside one chunk: the very same bits
    np.testing.assert_array_equal(one.standardize(x, graph), whole)
    pieces = GraphMoments.empty(len(sizes), 3)
    for a, b in [(0, 3), (3, 20), (20, 21), (21, len(x))]:  # graphs cut across chunks
        pieces.add(x[a:b], graph[a:b])
    np.testing.assert_allclose(pieces.standardize(x, graph), whole, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(pieces.standardize(x, graph)[:, 2], 0.0)  # constant column
