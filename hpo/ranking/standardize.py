"""Standardizing columns within each graph: in memory, or over chunks of rows of any size.

The learned prior (:mod:`hpo.ranking.prior.fit`) orders the configs *inside* a graph, as the
ranking is scored, so its columns and its target are each taken minus the graph's mean, over
the graph's std. :func:`standardize_within` does it for rows of whole graphs in memory;
:class:`GraphMoments` gathers the same moments over chunks of rows that may cut a graph, so
a campaign's memory does not grow with its largest graph.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["GraphMoments", "graph_ids", "standardize_within", "standardized_spans"]


@dataclass
class GraphMoments:
    """Per-graph count, mean and sum of squared deviations of columns, over chunks of rows.

    Why: :func:`standardize_within` needs a whole graph at once, and one graph of the real
    dataset holds up to about 100,000 configs: with every config kept (``--train-configs 0``)
    the float64 design of the largest graph alone took 750 MB in each worker. Chunks merged
    with Chan et al.'s pairwise update need one bounded chunk whatever a graph's size; a graph
    inside one chunk gets the same bits as when all its rows are added at once
    (:func:`standardize_within`).
    """

    count: np.ndarray
    mean: np.ndarray
    m2: np.ndarray

    @classmethod
    def empty(cls, n_graphs: int, width: int) -> GraphMoments:
        shape = (n_graphs, width)
        return cls(np.zeros(n_graphs, dtype=np.int64), np.zeros(shape), np.zeros(shape))

    def add(self, values: np.ndarray, graph: np.ndarray) -> None:
        """Add rows ``values`` of graphs ``graph`` (ids in ``0..n_graphs``, runs contiguous)."""
        if values.shape[0] == 0:
            return
        starts = np.flatnonzero(np.r_[True, graph[1:] != graph[:-1]])
        sizes = np.diff(np.r_[starts, len(graph)])
        g = graph[starts]
        mean_b = np.add.reduceat(values, starts, axis=0) / sizes[:, None]
        centred = values - np.repeat(mean_b, sizes, axis=0)
        m2_b = np.add.reduceat(centred**2, starts, axis=0)
        n_a = self.count[g][:, None].astype(np.float64)
        first = n_a[:, 0] == 0  # a graph's first piece: taken as is (the in-memory bits)
        n = n_a + sizes[:, None]
        delta = mean_b - self.mean[g]
        self.mean[g] = np.where(first[:, None], mean_b, self.mean[g] + delta * sizes[:, None] / n)
        self.m2[g] = np.where(
            first[:, None], m2_b, self.m2[g] + m2_b + delta**2 * n_a * sizes[:, None] / n
        )
        self.count[g] += sizes

    def spread(self) -> tuple[np.ndarray, np.ndarray]:
        """Per graph and column: the std, and whether the column varies beyond the rounding
        its mean leaves (a column that does not is taken as constant: 0 once centred)."""
        std = np.sqrt(self.m2 / np.maximum(self.count, 1)[:, None])
        return std, std > 1e-9 * np.maximum(np.abs(self.mean) + 1e-300, 1.0)

    def standardize(self, values: np.ndarray, graph: np.ndarray) -> np.ndarray:
        """Rows ``values`` of graphs ``graph`` standardized as :func:`standardize_within` does
        with the graphs' moments."""
        std, varies = self.spread()
        centred = values - self.mean[graph]
        return np.where(varies[graph], centred / np.where(varies, std, 1.0)[graph], 0.0)


def standardize_within(values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Each column minus its graph's mean, over its graph's std (0 where it does not vary).

    ``values`` is ``(n, p)`` with the rows of graph g at ``bounds[g]:bounds[g + 1]``; float64.
    One :class:`GraphMoments` pass over all rows: the rule lives in one place.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.shape[0] == 0:
        return x.copy()
    moments = GraphMoments.empty(len(bounds) - 1, x.shape[1])
    graph = graph_ids(bounds)
    moments.add(x, graph)
    return moments.standardize(x, graph)


def graph_ids(bounds: np.ndarray) -> np.ndarray:
    """The graph of each row, for graphs cut by ``bounds`` (``bounds[g]:bounds[g + 1]``)."""
    b = np.asarray(bounds, dtype=np.int64)
    return np.repeat(np.arange(len(b) - 1), b[1:] - b[:-1])


def standardized_spans(
    bounds: np.ndarray,
    spans: Sequence[tuple[int, int]],
    width: int,
    values: Callable[[int, int], np.ndarray],
) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(a, b, z)`` per span: rows ``values(a, b)`` standardized within their graphs.

    Two passes over ``spans`` (row ranges covering the graphs ``bounds``, which may cut a
    graph): the first gathers each graph's moments, the second standardizes. ``values`` is
    called twice per span, so only one span's rows are held at a time.
    """
    graph = graph_ids(bounds)
    moments = GraphMoments.empty(len(bounds) - 1, width)
    for a, b in spans:
        moments.add(values(a, b), graph[a:b])
    for a, b in spans:
        yield a, b, moments.standardize(values(a, b), graph[a:b])
