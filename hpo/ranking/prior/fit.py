"""The learned cost prior: per-config quantities weighted by a ridge fitted on the train split.

Why: the hand-written estimate ``est_log_total_bytes`` has weights someone chose
after reading the generator's law. On real TPU runtimes it ranked a U-Net worse than the plain
padded volume (Kendall tau 0.19 against 0.39, one of its terms with the wrong sign), and on
generated data of a law it was not written for, blending it cost up to a third of the noise
ceiling. A prior that enters the ranking must get its weights from the data it is given.

The basis is every live per-config log-of-bytes column (``log_*``, ``so_log_*``,
``est_log_*``, ``oc_log_*``: the per-op-class totals of :mod:`hpo.features.layout.op_class`;
``kp_log_*``: the conv kernels' padded bytes, which no booster reads; the byte totals of the
node aggregates, ``nd_*_bytes_*`` and ``rl_log_*_bytes`` of :mod:`hpo.features.layout.nodes`
and :mod:`hpo.features.layout.roles`, their counts left out;
relative ``_dmed``/``_prank`` versions left out) back on a linear scale (``expm1``), fitted
additively (:mod:`hpo.ranking.prior.additive`): a runtime adds up over kernels, so the byte totals
keep their ratios inside a graph (centred only, the whole graph scaled by one factor) and
one set of weights adds them up for every graph. The target is the runtime, centred and over
its std within its graph, so the fit orders configs *inside* a graph, as the ranking is
scored, whatever each graph's scale. Ridge penalty :data:`RIDGE` per row, on columns scaled
to a pooled unit root mean square; milliseconds to a second, negligible next to LightGBM.
Why not every column standardized within its graph (the prior before): that keeps each
column's order but loses the ratios between totals, and it read counts and shares, which do
not add up over kernels; on unseen graphs of the laws where the default ranked worst, the
additive prior alone ranked nlp:random at 0.92 of the noise ceiling against 0.75-0.86
(docs/benchmarks.md#the-learned-prior-and-its-weights).

Each random layout collection gets weights of its own, fitted on its graphs' rows; the
default ones share the weights of every row. Why: on unseen graphs of 8 laws no
one had looked at, xla:random's own weights ranked better (median +0.009 of the noise ceiling,
better on 7 of 8 laws); nlp:random's were even; the default collections' own weights were
worse (their labels are mostly noise). docs/benchmarks.md#the-learned-prior-and-its-weights.

The per-op-class byte totals (``oc_log_*``, :mod:`hpo.features.layout.op_class`) and the conv
kernels' padded bytes (``kp_log_*``) are read by the prior alone, never by a booster: in the
trees they cost the default collections up to 0.011 of the noise ceiling
(docs/benchmarks.md#the-learned-prior-and-its-weights). First only the random collections' own
weights read the totals; with the additive prior the pooled weights read them too, which raised
nlp:default's median share of the noise ceiling 0.872 -> 0.883 and its worst 0.759 -> 0.811 over
8 laws no one had looked at (docs/benchmarks.md#the-learned-prior-and-its-weights).

Fitted inside :func:`hpo.ranking.training.train_family` on the rows the trial trains on,
saved with the booster (booster store, ``model.json``), so the exported model is the model
that was scored. Its output replaces the estimate column in the blend
(:mod:`hpo.ranking.prior.blend`); models made before it keep blending the column.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpo.features.relative import RELATIVE_SUFFIXES
from hpo.features.table.feature_table import FeatureTable
from hpo.features.table.store import read_rows
from hpo.ranking.chunks import graph_bounds, row_spans
from hpo.ranking.prior.additive import GraphGrams, solve_additive
from hpo.ranking.prior.learned import (
    RIDGE,
    LearnedPrior,
    basis_design,
    design_row_bytes,
    has_own_prior,
)
from hpo.ranking.standardize import GraphMoments, graph_ids, standardize_within

__all__ = [
    "RIDGE",
    "LearnedPrior",
    "PriorEquations",
    "design_row_bytes",
    "has_own_prior",
    "family_equations",
    "fit_family_prior",
    "fit_prior",
    "prior_basis",
    "standardize_within",
]

_LOG_PREFIXES = ("log_", "so_log_", "est_log_", "oc_log_", "kp_log_")
#: The node aggregates hold byte totals (``log1p``) beside raw counts: only the byte ones add up.
_NODE_PREFIXES = ("nd_", "rl_log_")


def _in_basis(name: str) -> bool:
    if name.endswith(RELATIVE_SUFFIXES):
        return False
    return name.startswith(_LOG_PREFIXES) or (name.startswith(_NODE_PREFIXES) and "_bytes" in name)


def prior_basis(column_names: Sequence[str]) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Which of ``column_names`` the prior reads: every per-config log-of-bytes column, back on
    a linear scale (``expm1``; relative versions left out).

    Returns ``(positions, linear)`` (every flag true). Why only those: the additive fit
    (:mod:`hpo.ranking.prior.additive`) adds byte totals up as a runtime does; counts, shares and
    logs do not add up across kernels, and standardized one by one they cost the ratios the
    totals carry (docs/benchmarks.md#the-learned-prior-and-its-weights). Why the node
    aggregates' byte totals too: they are the generic per-op-class sums (padded, mismatched,
    unaligned bytes; the roles of the minor dims) from which a weight per class can be found,
    and with them the default's worst share of the noise ceiling over four family laws rose on
    every layout collection (docs/benchmarks.md#the-learned-prior-and-its-weights).
    """
    positions = [i for i, name in enumerate(column_names) if _in_basis(name)]
    return tuple(positions), (True,) * len(positions)


@dataclass(frozen=True, eq=False)
class PriorEquations:
    """The additive fit's per-graph sums over every basis column of some table columns.

    A feature switch removes columns from the basis, and the sums of fewer columns are a
    sub-block of these (each graph's columns are centred one by one), so a campaign sums them
    once per row set and solves each trial's live columns in milliseconds (:meth:`solve`);
    before, every new set of live columns read every training row again (about 10 s per
    trial at 200,000 rows).
    """

    names: tuple[str, ...]
    columns: tuple[int, ...]
    linear: tuple[bool, ...]
    sums: GraphGrams
    #: ``{collection: the sums of its graphs alone}`` for :func:`has_own_prior`'s
    #: collections; ``sums`` holds every graph.
    own: Mapping[str, GraphGrams] = field(default_factory=dict)

    def solve(self, live: np.ndarray, ridge: float = RIDGE) -> LearnedPrior | None:
        """The prior of the basis of table columns ``live`` (in ``live``'s order), ``None``
        when nothing is to learn (no basis column among them, no rows, no runtime varies).

        A collection of :attr:`own` whose rows teach nothing (one config per graph, equal
        runtimes) is scored with the pooled weights.
        """
        want = self.basis_of(live)
        pooled = self._solve(self.sums, want, ridge)
        own = {c: self._solve(sums, want, ridge) for c, sums in self.own.items()}
        mine = {c: p for c, p in own.items() if p is not None}
        if not mine:
            return pooled
        # one basis for every collection (saved once, positions shared); no pooled prior
        # (nothing varies in the pooled rows) scores the default collections at 0
        coef = np.zeros(len(want)) if pooled is None else pooled.coef
        names = tuple(self.names[i] for i in want)
        linear = tuple(self.linear[i] for i in want)
        return LearnedPrior(names, linear, coef, ridge, mine, additive=True)

    def basis_of(self, live: np.ndarray) -> list[int]:
        """Indices into :attr:`names` of the basis entries of table columns ``live``, in
        ``live``'s order (what :meth:`solve` fits)."""
        at: dict[int, list[int]] = {}
        for i, c in enumerate(self.columns):
            at.setdefault(c, []).append(i)
        return [i for c in np.asarray(live, dtype=np.int64).tolist() for i in at.get(c, [])]

    def _solve(self, sums: GraphGrams, want: list[int], ridge: float) -> LearnedPrior | None:
        """The additive fit of basis entries ``want`` (indices into :attr:`names`) on ``sums``."""
        coef = solve_additive(sums, want, ridge)
        if coef is None:
            return None
        names = tuple(self.names[i] for i in want)
        linear = tuple(self.linear[i] for i in want)
        return LearnedPrior(names, linear, coef, ridge, additive=True)


def _graph_grams(
    bounds: np.ndarray,
    spans: Sequence[tuple[int, int]],
    width: int,
    values: Callable[[int, int], np.ndarray],
) -> GraphGrams:
    """The sums of graphs ``bounds`` from ``values(a, b)``: rows ``[runtime, design]`` of
    row ranges ``spans`` (which may cut a graph). Two passes, like
    :func:`hpo.ranking.standardize.standardized_spans`: each graph's means, then its sums."""
    graph = graph_ids(bounds)
    moments = GraphMoments.empty(len(bounds) - 1, width + 1)
    for a, b in spans:
        moments.add(values(a, b), graph[a:b])
    grams = GraphGrams.empty(len(bounds) - 1, width)
    # a column constant in its graph (a static total, or a runtime that does not vary) is 0
    # there, not the rounding its mean leaves: the fit rescales every column to unit size, so
    # rounding would become a column of noise with an enormous weight
    std, varies = moments.spread()
    grams.target_std[:] = np.where(varies[:, 0], std[:, 0], 0.0)
    over = np.where(varies[:, 0], std[:, 0], 1.0)
    for a, b in spans:
        g = graph[a:b]
        centred = np.where(varies[g], values(a, b) - moments.mean[g], 0.0)
        grams.add(np.ascontiguousarray(centred[:, 1:]), centred[:, 0] / over[g], g)
    return grams


def fit_prior(
    X: np.ndarray,
    target: np.ndarray,
    bounds: np.ndarray,
    column_names: Sequence[str],
    ridge: float = RIDGE,
) -> LearnedPrior | None:
    """Fit the prior on training rows ``X`` (``column_names``) in memory and their runtimes.

    ``bounds`` cut the rows into graphs. Returns ``None`` when no graph has two configs
    with different runtimes or no column is a basis column (nothing to learn from).
    :func:`fit_family_prior` fits rows of tables in chunks instead.
    """
    positions, linear = prior_basis(column_names)
    if not positions or X.shape[0] == 0:
        return None
    runtime = np.asarray(target, dtype=np.float64)

    def rows(a: int, b: int) -> np.ndarray:
        return np.column_stack([runtime[a:b], basis_design(X[a:b], positions, linear)])

    bounds = np.asarray(bounds, dtype=np.int64)
    sums = _graph_grams(bounds, [(0, X.shape[0])], len(positions), rows)
    names = tuple(column_names[p] for p in positions)
    equations = PriorEquations(names, positions, linear, sums)
    return equations.solve(np.arange(len(column_names)), ridge)


def _chunk(
    table: FeatureTable,
    rows: np.ndarray,
    read: np.ndarray,
    positions: Sequence[int],
    linear: Sequence[bool],
) -> np.ndarray:
    """``[runtime, design]`` of ``rows``: table columns ``read``, the basis at ``positions``."""
    X = read_rows(table.X, rows, read)
    runtime = np.asarray(table.target[rows], dtype=np.float64)
    return np.column_stack([runtime, basis_design(X, positions, linear)])


def family_equations(
    parts: Sequence[tuple[FeatureTable, np.ndarray]], columns: np.ndarray
) -> PriorEquations | None:
    """The per-graph sums of training rows ``parts`` (``(table, rows)``) at ``columns``.

    The basis is chosen among the names of ``columns`` (:func:`prior_basis`). Each part is
    read twice in spans of about :data:`hpo.features.table.store.CHUNK_BYTES` of rows
    (:func:`hpo.ranking.chunks.row_spans`: whole graphs, a larger graph in pieces; with
    :func:`hpo.features.table.store.read_rows`, only the basis columns): once for each graph's
    means, once for its sums. No design of a large graph is held whole; the sums take
    ``8 * width**2`` bytes per graph (about 16 KB at 45 basis columns).
    ``None`` when no column is a basis column.
    """
    columns = np.asarray(columns, dtype=np.int64)
    names = parts[0][0].feature_names if parts else ()
    positions, linear = prior_basis([names[j] for j in columns])
    if not positions:
        return None
    read, inverse = np.unique(np.asarray(positions), return_inverse=True)  # basis columns once
    local = inverse.tolist()
    row_bytes = 4 * read.size + design_row_bytes(len(positions) + 1)
    by_key: dict[str, GraphGrams] = {}  # "" holds the graphs of no own prior
    for table, all_rows in parts:
        all_rows = np.asarray(all_rows, dtype=np.int64)
        graph_keys = [g.collection if has_own_prior(g.collection) else "" for g in table.graphs]
        keys = sorted(set(graph_keys))  # a small code per row, not a string (rows: millions)
        codes = np.array([keys.index(k) for k in graph_keys], dtype=np.int16)
        row_codes = codes[table.group[all_rows]]
        for code in np.unique(row_codes).tolist():
            rows = all_rows[row_codes == code]  # whole graphs: a graph has one collection
            bounds = graph_bounds(table.group[rows])

            def chunk(a: int, b: int, table: FeatureTable = table, rows: np.ndarray = rows) -> Any:
                return _chunk(table, rows[a:b], columns[read], local, linear)

            spans = row_spans(bounds, row_bytes)
            grams = _graph_grams(bounds, spans, len(positions), chunk)
            key = keys[code]
            by_key[key] = by_key[key].merged(grams) if key in by_key else grams
    pooled = GraphGrams.empty(0, len(positions))
    for key in sorted(by_key):
        pooled = pooled.merged(by_key[key])
    return PriorEquations(
        tuple(names[columns[p]] for p in positions),
        tuple(int(columns[p]) for p in positions),
        tuple(linear),
        pooled,
        {k: v for k, v in by_key.items() if k},
    )


def fit_family_prior(
    parts: Sequence[tuple[FeatureTable, np.ndarray]],
    columns: np.ndarray,
    ridge: float = RIDGE,
) -> LearnedPrior | None:
    """The learned prior of training rows ``parts`` (``(table, rows)``) read at ``columns``.

    ``columns`` are the table columns the prior may read (its basis is chosen among their
    names, :func:`prior_basis`), not necessarily those the booster reads. The rows are read
    in bounded chunks (:func:`family_equations`), so the pooled weights equal
    :func:`fit_prior`'s on the concatenated rows up to the order of the sums (~1e-12).
    """
    equations = family_equations(parts, columns)
    return None if equations is None else equations.solve(columns, ridge)
