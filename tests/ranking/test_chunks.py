"""Graph-aligned chunks: whole graphs per chunk, a budget in bytes, an oversized graph alone."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.features.table import store
from hpo.ranking.chunks import graph_bounds, graph_chunks


def test_graph_bounds_are_the_runs_of_equal_groups() -> None:
    np.testing.assert_array_equal(graph_bounds(np.array([4, 4, 1, 1, 1, 7])), [0, 2, 5, 6])
    np.testing.assert_array_equal(graph_bounds(np.zeros(0, dtype=np.int64)), [0])


@pytest.mark.parametrize("chunk_rows", [1, 3, 10, 25, 1000])
def test_chunks_hold_whole_graphs_within_the_budget(chunk_rows: int) -> None:
    sizes = np.array([3, 12, 1, 1, 0, 4, 30, 2, 2, 2])
    bounds = np.r_[0, np.cumsum(sizes)]
    cuts = graph_chunks(bounds, row_bytes=8, chunk_bytes=8 * chunk_rows)
    assert cuts[0] == 0
    assert cuts[-1] == len(sizes)
    assert np.all(np.diff(cuts) >= 1)
    rows = bounds[cuts[1:]] - bounds[cuts[:-1]]
    graphs = np.diff(cuts)
    # over the budget only when the chunk is one graph (bigger than a chunk on its own)
    assert np.all((rows <= chunk_rows) | (graphs == 1))
    # greedy: the next graph would not have fitted in the chunk
    nxt = np.r_[sizes, 0][cuts[1:-1]]
    assert np.all(rows[:-1] + nxt > chunk_rows)


def test_default_budget_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    bounds = np.arange(0, 101, 10)
    assert len(graph_chunks(bounds, row_bytes=4)) == 2  # 100 rows of 4 bytes: one chunk
    monkeypatch.setattr(store, "CHUNK_BYTES", 4 * 20)
    np.testing.assert_array_equal(graph_chunks(bounds, row_bytes=4), [0, 2, 4, 6, 8, 10])
    assert list(graph_chunks(np.array([0]), row_bytes=4)) == [0]  # no graph, no chunk


def test_row_spans_keep_graphs_whole_and_cut_a_large_one_from_its_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from hpo.ranking import chunks

    monkeypatch.setattr(chunks, "MIN_PIECE_ROWS", 4)
    bounds = np.array([0, 3, 5, 15, 16])  # graphs of 3, 2, 10 and 1 rows
    # a budget of 5 rows: the first two graphs together, the third in pieces of 5, the last
    assert chunks.row_spans(bounds, 1, 5) == [(0, 5), (5, 10), (10, 15), (15, 16)]
    # pieces never below MIN_PIECE_ROWS: a budget of 1 row cuts the 10-row graph in 4s
    assert chunks.row_spans(bounds, 1, 1) == [(0, 3), (3, 5), (5, 9), (9, 13), (13, 15), (15, 16)]
    # the cuts inside a graph do not depend on what comes before it
    alone = chunks.row_spans(np.array([0, 10]), 1, 1)
    assert alone == [(0, 4), (4, 8), (8, 10)]
    assert chunks.row_spans(np.array([0]), 1, 5) == []
