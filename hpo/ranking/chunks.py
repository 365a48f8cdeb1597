"""Graph-aligned chunks of rows: how valid scoring and the prior's fit walk a table in pieces.

Why: at the real dataset's size the valid rows' selected columns, or the float64
design of every training row, are gigabytes; scoring and fitting must hold one bounded chunk
(:data:`hpo.features.table.store.CHUNK_BYTES`) at a time, read with
:func:`hpo.features.table.store.read_rows`. Both standardize within a graph (the blend,
:mod:`hpo.ranking.prior.blend`; the prior, :mod:`hpo.ranking.prior.fit`), so a chunk holds whole
graphs: the cuts are taken among the graph bounds, and a graph larger than a chunk is a chunk of its
own.
"""

from __future__ import annotations

import numpy as np

from hpo.features.table import store

__all__ = ["MIN_PIECE_ROWS", "graph_bounds", "graph_chunks", "row_spans"]


def graph_bounds(group: np.ndarray) -> np.ndarray:
    """Row offsets of the runs of equal ``group`` values (the rows of one graph are contiguous).

    ``[0]`` for no rows; otherwise run g is rows ``bounds[g]:bounds[g + 1]``.
    """
    group = np.asarray(group)
    if group.size == 0:
        return np.zeros(1, dtype=np.int64)
    return np.flatnonzero(np.r_[True, group[1:] != group[:-1], True]).astype(np.int64)


def graph_chunks(bounds: np.ndarray, row_bytes: int, chunk_bytes: int | None = None) -> np.ndarray:
    """Graph indices cutting graphs ``bounds`` into chunks of at most ``chunk_bytes`` of rows.

    Parameters
    ----------
    bounds
        Row offsets of the graphs (graph g is rows ``bounds[g]:bounds[g + 1]``).
    row_bytes
        Bytes a row costs the caller while its chunk is held.
    chunk_bytes
        Budget of a chunk; default :data:`hpo.features.table.store.CHUNK_BYTES`, read at call time.

    Returns
    -------
    numpy.ndarray
        ``cuts`` from 0 to the number of graphs: chunk k is graphs ``cuts[k]:cuts[k + 1]``,
        rows ``bounds[cuts[k]]:bounds[cuts[k + 1]]``. Graphs are packed greedily in order; a
        graph larger than the budget is alone in its chunk. One step per chunk, not per graph.
    """
    bounds = np.asarray(bounds, dtype=np.int64)
    budget = store.CHUNK_BYTES if chunk_bytes is None else int(chunk_bytes)
    per = max(1, budget // max(1, int(row_bytes)))
    n_graphs = len(bounds) - 1
    cuts = [0]
    while cuts[-1] < n_graphs:
        g = cuts[-1]
        # the last graph end within `per` rows of this chunk's start, at least one graph on
        nxt = int(np.searchsorted(bounds, bounds[g] + per, side="right")) - 1
        cuts.append(min(max(nxt, g + 1), n_graphs))
    return np.asarray(cuts, dtype=np.int64)


#: Rows below which a graph is never cut into pieces (:func:`row_spans`): its rows then get
#: the same bits in every context (validation, prediction), whatever the chunk budget.
MIN_PIECE_ROWS = 4096


def row_spans(
    bounds: np.ndarray, row_bytes: int, chunk_bytes: int | None = None
) -> list[tuple[int, int]]:
    """Row ranges ``(a, b)`` covering graphs ``bounds`` in order, each of about ``chunk_bytes``.

    Graphs are packed whole (:func:`graph_chunks`); a graph larger than the budget is cut into
    pieces of ``max(budget rows, MIN_PIECE_ROWS)`` rows counted from its first row, so the
    cuts inside a graph do not depend on the graphs around it. Callers that standardize within
    a graph merge its pieces' moments (:class:`hpo.ranking.standardize.GraphMoments`).
    """
    bounds = np.asarray(bounds, dtype=np.int64)
    budget = store.CHUNK_BYTES if chunk_bytes is None else int(chunk_bytes)
    per = max(MIN_PIECE_ROWS, budget // max(1, int(row_bytes)))
    cuts = graph_chunks(bounds, row_bytes, budget).tolist()
    spans: list[tuple[int, int]] = []
    for g0, g1 in zip(cuts[:-1], cuts[1:], strict=True):
        a, b = int(bounds[g0]), int(bounds[g1])
        if g1 - g0 == 1 and b - a > per:  # one graph over budget: its pieces
            spans += [(s, min(s + per, b)) for s in range(a, b, per)]
        elif b > a:
            spans.append((a, b))
    return spans
