"""Scoring a ranker on the valid rows of a table, in graph-aligned chunks.

Why: the valid rows' feature columns of a real-size family are gigabytes, and a
campaign keeps what it gathers for scoring across trials. So a :class:`ValidRows` keeps only
which rows are scored, their runtimes and graph bounds (a few bytes a row), and
:func:`blended_predict` reads the features in chunks of whole graphs of at most about
:data:`hpo.features.table.store.CHUNK_BYTES` (:func:`hpo.ranking.chunks.graph_chunks`) with
:func:`hpo.features.table.store.read_rows`, from a table in memory or memory-mapped alike. A chunk
never cuts a graph, because the blend standardizes within one; LightGBM scores each row on
its own, and the blend and the prior sum element-wise within a graph (see
:meth:`hpo.ranking.prior.fit.LearnedPrior.estimate`), so the scores are bit for bit those of one
pass over every row, whatever the chunk size.

:func:`hpo.ranking.training.train_family` (every trial, export) and :func:`score_table`
(benchmarks) score through here; :mod:`hpo.ranking.training` re-exports the public names.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from hpo.data.load import is_layout
from hpo.errors import ConfigError
from hpo.features.table.feature_table import FeatureTable
from hpo.features.table.store import read_rows
from hpo.ranking.chunks import graph_bounds, graph_chunks
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.model.ranker import LambdaRanker
from hpo.ranking.prior.blend import blend_scores, estimate_position
from hpo.ranking.prior.learned import LearnedPrior, design_row_bytes
from hpo.ranking.scoring.metrics import TILE_TOP_K, kendall_tau, tile_score

__all__ = [
    "PRIOR_DOUBT_SHARE",
    "PRIOR_MARGIN",
    "GraphScore",
    "ValidRows",
    "blended_predict",
    "collection_means",
    "graph_metrics",
    "prior_earns",
    "prior_share",
    "score_table",
    "score_valid",
    "select_rows",
    "valid_rows",
    "valid_view_of",
]

#: A blend weight: one for every graph, or ``{collection: weight}``.
Weight = float | Mapping[str, float]


def select_rows(table: FeatureTable, collections: Sequence[str]) -> np.ndarray:
    """Row indices of the graphs of ``collections`` that have labels."""
    keep = np.array([g.collection in collections and g.labeled for g in table.graphs], dtype=bool)
    return np.flatnonzero(keep[table.group]) if keep.size else np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class GraphScore:
    """Metric of one scored graph; ``ranked`` is False for a graph whose scored runtimes do
    not order its configs (:func:`hpo.data.runtimes.carries_ranking`), left out of the
    collection means."""

    collection: str
    stem: str
    metric: float
    n_configs: int
    ranked: bool = True


@dataclass(frozen=True, eq=False)
class ValidRows:
    """The rows of a table that are scored: row indices, runtimes and graph bounds, no features.

    Attributes
    ----------
    rows
        Table rows, each graph's contiguous (graph i is ``rows[bounds[i]:bounds[i + 1]]``).
    runtime
        Their runtimes (float64).
    bounds
        Offsets into ``rows`` of the scored graphs.
    graphs
        The table's graph index of each scored graph.
    """

    rows: np.ndarray
    runtime: np.ndarray
    bounds: np.ndarray
    graphs: tuple[int, ...]


def valid_rows(
    table: FeatureTable, collections: Sequence[str], graphs: np.ndarray | None = None
) -> ValidRows:
    """The labeled rows of ``collections`` in ``table`` to score; ``graphs``: a boolean mask
    over ``table.graphs`` keeping only those (a cross-validation fold)."""
    rows = select_rows(table, collections)
    if graphs is not None:
        rows = rows[np.asarray(graphs, dtype=bool)[table.group[rows]]]
    groups = table.group[rows]
    bounds = graph_bounds(groups)
    return ValidRows(
        rows=rows,
        runtime=table.target[rows].astype(np.float64),
        bounds=bounds,
        graphs=tuple(int(groups[a]) for a in bounds[:-1]),
    )


def graph_metrics(table: FeatureTable, view: ValidRows, pred: np.ndarray) -> list[GraphScore]:
    """Per-graph metric: Kendall's tau (layout) or the top-5 tile score, the latter vectorised.

    The tile score takes the 5 best-predicted configs of each graph; a graph with configs
    tied across the 5th place is scored by :func:`hpo.ranking.scoring.metrics.tile_score`
    (the expectation over the order of the tied configs), the others all at once.
    """
    bounds, runtime = view.bounds, view.runtime
    n_graphs = len(view.graphs)
    if n_graphs == 0:
        return []
    refs = [table.graphs[g] for g in view.graphs]
    sizes = np.diff(bounds)
    gid = np.repeat(np.arange(n_graphs), sizes)
    order = np.lexsort((pred, gid))  # lexsort is stable: ties keep row order
    top = order[np.arange(len(order)) - bounds[gid[order]] < TILE_TOP_K]
    best = np.full(n_graphs, np.inf)
    np.minimum.at(best, gid[top], runtime[top])
    low = np.minimum.reduceat(runtime, bounds[:-1])
    tile = 2.0 - best / low
    longer = np.flatnonzero(sizes > TILE_TOP_K)
    kth, after = order[bounds[longer] + TILE_TOP_K - 1], order[bounds[longer] + TILE_TOP_K]
    for i in longer[pred[kth] == pred[after]]:  # configs tied across the 5th place
        a, b = bounds[i], bounds[i + 1]
        tile[i] = tile_score(pred[a:b], runtime[a:b], k=TILE_TOP_K)
    ranked = (sizes >= 2) & (np.maximum.reduceat(runtime, bounds[:-1]) > low)  # carries_ranking
    return [
        GraphScore(
            ref.collection,
            ref.stem,
            kendall_tau(pred[a:b], runtime[a:b]) if is_layout(ref.collection) else float(tile[i]),
            int(b - a),
            bool(ranked[i]),
        )
        for i, (ref, a, b) in enumerate(zip(refs, bounds[:-1], bounds[1:], strict=True))
    ]


def _graph_weights(table: FeatureTable, view: ValidRows, weight: Weight) -> np.ndarray:
    """The blend weight of each scored graph: ``weight``, or its collection's in a mapping."""
    if not isinstance(weight, Mapping):
        return np.full(len(view.graphs), float(weight))
    missing = {table.graphs[g].collection for g in view.graphs} - set(weight)
    if missing:
        raise ConfigError(f"blend weights: none for {', '.join(sorted(missing))}")
    return np.array([float(weight[table.graphs[g].collection]) for g in view.graphs])


def _blend_columns(
    table: FeatureTable, columns: np.ndarray, weight: bool, prior: LearnedPrior | None
) -> np.ndarray | None:
    """Table columns the blend reads besides the booster (``None``: scores are the ranker's).

    The learned ``prior``'s basis columns, found by name among the table's (they need not be
    among the booster's ``columns``); without it, the estimate column if the booster reads it
    (models made before the learned prior).
    """
    if not weight:
        return None
    if prior is not None:
        return np.asarray(prior.positions_in(table.feature_names, "blend"), dtype=np.int64)
    pos = estimate_position([table.feature_names[j] for j in columns])
    return None if pos is None else columns[[pos]]


def blended_predict(
    ranker: LambdaRanker,
    table: FeatureTable,
    view: ValidRows,
    columns: np.ndarray,
    weight: Weight,
    prior: LearnedPrior | None = None,
    raw: np.ndarray | None = None,
    known: np.ndarray | None = None,
) -> np.ndarray:
    """The ranker's scores of a view's rows, blended per graph with the cost prior.

    The booster reads ``columns`` (table column indices). The blend
    (:mod:`hpo.ranking.prior.blend`) applies where ``weight`` (one for every graph, or
    ``{collection: weight}``) is > 0: with the learned ``prior``
    (:mod:`hpo.ranking.prior.fit`; its columns are found by name in ``table``) when given,
    otherwise with the estimate column if it is among ``columns`` (models made before the
    learned prior); with neither the scores are the ranker's own. Rows are read and scored in
    chunks of whole graphs (see the module's docstring); the result does not depend on the
    chunk size. ``raw``, when given (one float per row of the view), receives the ranker's
    own scores, before the blend; ``known``, when given, are those scores from an earlier
    call: the booster is not run again, and only the blend's columns of the graphs with a
    weight above 0 are read.
    """
    columns = np.asarray(columns, dtype=np.int64)
    weights = _graph_weights(table, view, weight)
    extra = _blend_columns(table, columns, bool(np.any(weights > 0)), prior)
    if known is not None and extra is None:
        return np.array(known, dtype=np.float64)
    read, at = columns, []
    if known is not None and extra is not None:  # the booster's columns are not needed
        read, at = extra, list(range(extra.size))
    elif extra is not None:  # the blend's columns the booster does not read come after its own
        read = np.r_[columns, np.setdiff1d(extra, columns)]
        where = {c: i for i, c in enumerate(read.tolist())}
        at = [where[c] for c in extra.tolist()]
    width = columns.size
    collections = [table.graphs[g].collection for g in view.graphs]
    out = np.empty(view.rows.size, dtype=np.float64)
    design = design_row_bytes(len(at)) if prior is not None else 0
    cuts = graph_chunks(view.bounds, 4 * read.size + design)  # float32 rows, the prior's design
    for g0, g1 in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        a, b = int(view.bounds[g0]), int(view.bounds[g1])
        if known is not None and not np.any(weights[g0:g1] > 0):
            out[a:b] = known[a:b]  # nothing to blend: no row to read
            continue
        X = read_rows(table.X, view.rows[a:b], read)
        if known is not None:
            pred = known[a:b]
        else:
            pred = ranker.predict(X if read.size == width else X[:, :width])
        if raw is not None:
            raw[a:b] = pred
        if extra is None:
            out[a:b] = pred
            continue
        local = view.bounds[g0 : g1 + 1] - a
        if prior is None:
            estimate = X[:, at[0]]
        else:
            estimate = _prior_estimate(prior, X, local, at, collections[g0:g1])
        out[a:b] = blend_scores(pred, estimate, local, weights[g0:g1])
    return out


def _prior_estimate(
    prior: LearnedPrior, X: np.ndarray, bounds: np.ndarray, at: list[int], collections: list[str]
) -> np.ndarray:
    """The prior of rows ``X`` (graphs cut by ``bounds``), each graph by its collection's
    weights (:meth:`LearnedPrior.for_collection`), in runs of graphs of one collection; the
    estimate of a graph does not depend on its neighbours, so the bits are those of one graph
    scored alone."""
    if not prior.own:
        return prior.estimate(X, bounds, at)
    out = np.empty(X.shape[0])
    starts = [0] + [i for i in range(1, len(collections)) if collections[i] != collections[i - 1]]
    for s0, s1 in zip(starts, [*starts[1:], len(collections)], strict=True):
        a, b = int(bounds[s0]), int(bounds[s1])
        own = prior.for_collection(collections[s0])
        out[a:b] = own.estimate(X[a:b], bounds[s0 : s1 + 1] - a, at)
    return out


def score_table(
    ranker: LambdaRanker,
    table: FeatureTable,
    columns: np.ndarray,
    collections: Sequence[str],
    *,
    weight: Weight = 0.0,
    prior: LearnedPrior | None = None,
) -> list[GraphScore]:
    """Predict every labeled graph of ``collections`` in ``table`` and score each graph.

    ``columns`` are what the booster reads, ``weight`` is the blend weight (one, or
    ``{collection: weight}``: :func:`hpo.ranking.prior.blend.collection_weights`) and ``prior`` the
    family's learned prior (:func:`blended_predict`).
    """
    view = valid_rows(table, collections)
    if not view.graphs:
        return []
    return graph_metrics(table, view, blended_predict(ranker, table, view, columns, weight, prior))


def collection_means(scores: Sequence[GraphScore], collections: Sequence[str]) -> dict[str, float]:
    """Mean metric per collection over its graphs that carry a ranking (only collections that
    have such graphs)."""
    out: dict[str, float] = {}
    for c in collections:
        vals = [s.metric for s in scores if s.collection == c and s.ranked]
        if vals:
            out[c] = float(np.mean(vals))
    return out


def valid_view_of(valid: FeatureTable, collections: Sequence[str], opt: FitOptions) -> ValidRows:
    """The valid rows scored (of ``opt.score_graphs`` only, when set), from ``opt.cache``
    when it has them: every trial of a campaign scores the same rows, whatever its columns."""

    def view() -> ValidRows:
        return valid_rows(valid, collections, opt.score_graphs)

    if opt.cache is None:
        return view()
    mask = opt.score_graphs
    scored = None if mask is None else np.asarray(mask, dtype=bool).tobytes()
    vkey = ("valid", id(valid), tuple(collections), scored)  # rows only: any columns
    return opt.cache.get(vkey, view, keep=valid)[0]


#: How many standard errors of its mean gain on the scored graphs the prior must win by to keep
#: a collection (:func:`prior_earns`), and lose by to be switched off (:func:`prior_share`).
PRIOR_MARGIN = 0.5
#: The share of its blend weight the prior keeps on a collection where its gain is within
#: :data:`PRIOR_MARGIN` standard errors of 0, either way (:func:`prior_share`).
PRIOR_DOUBT_SHARE = 0.03


def prior_earns(
    blended: Sequence[GraphScore],
    alone: Sequence[GraphScore],
    collection: str,
    margin: float = PRIOR_MARGIN,
) -> bool:
    """Whether the blend keeps ``collection`` whole: its mean gain over the trees alone, per
    scored graph that carries a ranking, is at least ``margin`` standard errors of that mean
    (one graph: at least 0; no such graph: kept, there is no mean either way).

    Why a margin: a layout collection of the real data has 7 to 20 valid graphs, and the
    prior's gain on so few is often the noise of one or two of them. On the blind laws a prior
    kept on a mean gain alone lost up to about 0.05 of the noise ceiling on unseen graphs, kept
    on half a standard error up to about 0.03; a whole one kept it off more of the generator's
    laws where it helps (docs/benchmarks.md, "Blind laws"; ``bench/bench_prior_margin.py``).
    """
    return prior_share(blended, alone, collection, margin, doubt=0.0) == 1.0


def prior_share(
    blended: Sequence[GraphScore],
    alone: Sequence[GraphScore],
    collection: str,
    margin: float = PRIOR_MARGIN,
    doubt: float = PRIOR_DOUBT_SHARE,
) -> float:
    """The share of its blend weight the prior keeps on ``collection``: 1 where its mean gain
    over the trees alone, per scored graph that carries a ranking, is at least ``margin``
    standard errors of that mean (:func:`prior_earns`), 0 where it is below ``-margin`` of
    them, ``doubt`` in between (the scored graphs cannot tell the two apart). One such graph:
    1 at a gain of at least 0, else 0; none: 1.

    Why a share, not on or off: where the gain is within the noise of the valid graphs, a
    prior at a small share of its weight mostly breaks the trees' near-ties. On blind_01-10
    (docs/benchmarks.md, "Blind laws") it scored above the prior at its whole weight on unseen
    graphs in all 6 such collections and above the trees alone in 5; switched off there, the
    default lost up to 0.028 of the noise ceiling to the better of prior on and off.
    """
    gain = np.array(
        [b.metric - a.metric for b, a in zip(blended, alone, strict=True)
         if b.collection == collection and b.ranked]
    )  # fmt: skip
    if gain.size < 2:
        return 1.0 if gain.size == 0 or gain[0] >= 0 else 0.0
    edge = margin * gain.std(ddof=1) / np.sqrt(gain.size)
    mean = gain.mean()
    return 1.0 if mean >= edge else doubt if mean >= -edge else 0.0


def score_valid(
    ranker: LambdaRanker,
    valid: FeatureTable,
    view: ValidRows,
    columns: np.ndarray,
    weights: Mapping[str, float],
    prior: LearnedPrior | None,
    live_names: Sequence[str],
    *,
    select: bool = False,
) -> tuple[tuple[GraphScore, ...], dict[str, float], dict[str, float], LearnedPrior | None]:
    """Score a fitted ranker on ``view``: every graph's metric, the mean per collection, the
    seconds of ``predict`` and ``score``, and the prior as the models of this score carry it.

    One function for a trained booster (:func:`train_family`) and a saved one
    (:func:`hpo.ranking.rescore.rescore_family`), so a booster scored again gives its trial's
    score. ``weights`` are the blend's per collection (the collections scored); the prior's
    shares of them apply (:meth:`LearnedPrior.blend_weights`: its ``off`` are not blended, its
    ``doubt`` at a share). Without a ``prior`` the blend reads the estimate column, and it is
    off when the configuration switched that column off (not among ``live_names``).
    ``select`` (:func:`hpo.ranking.prior.blend.blend_selects`): each blended collection is
    blended at the share of its weight :func:`prior_share` gives it (0: ranked by the trees
    alone), and the returned prior records those shares.
    """
    if prior is None and estimate_position(live_names) is None:
        weights = dict.fromkeys(weights, 0.0)  # the estimate column is switched off
    if prior is not None:
        weights = prior.blend_weights(weights)
    t0 = time.perf_counter()
    collections = list(weights)
    raw = np.empty(view.rows.size) if select and prior is not None else None
    pred = (
        blended_predict(ranker, valid, view, columns, weights, prior, raw)
        if view.graphs
        else np.zeros(0)
    )
    t1 = time.perf_counter()
    scores = graph_metrics(valid, view, pred)
    metrics = collection_means(scores, collections)
    if prior is not None and raw is not None and view.graphs:
        alone = graph_metrics(valid, view, raw)
        # a collection the prior already holds a share of (off or doubted) stays as it is
        undecided = [c for c, w in weights.items() if w > 0 and prior.weight_share(c) == 1]
        shares = {c: prior_share(scores, alone, c) for c in undecided}
        worse = {c for c, share in shares.items() if share == 0}
        doubt = {c: share for c, share in shares.items() if 0 < share < 1}
        if worse or doubt:
            prior = replace(prior, off=prior.off | worse, doubt={**prior.doubt, **doubt})
            picked = {c: alone for c in worse}
            if doubt:  # the same trees' scores, blended at the doubt's share of the weight
                partial = {c: w * doubt.get(c, 0.0) for c, w in weights.items()}
                known = blended_predict(ranker, valid, view, columns, partial, prior, known=raw)
                picked.update(dict.fromkeys(doubt, graph_metrics(valid, view, known)))
            scores = [picked[s.collection][i] if s.collection in picked else s
                      for i, s in enumerate(scores)]  # fmt: skip
            metrics = collection_means(scores, collections)
    seconds = {"predict": t1 - t0, "score": time.perf_counter() - t1}
    return tuple(scores), metrics, seconds, prior
