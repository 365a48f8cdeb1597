"""The learned cost prior: per-config quantities weighted by a ridge fitted on the train split.

Why (issue 19): the hand-written estimate ``est_log_total_bytes`` has weights someone chose
after reading the generator's law. On real TPU runtimes it ranked a U-Net worse than the plain
padded volume (Kendall tau 0.19 against 0.39, one of its terms with the wrong sign), and on
generated data of a law it was not written for, blending it cost up to a third of the noise
ceiling. A prior that enters the ranking must get its weights from the data it is given.

The basis is the live per-config columns (those a trial switches on), without their
relative versions (``_dmed``/``_prank``, which standardization makes redundant), plus every
log-of-bytes column (``log_*``, ``so_log_*``, ``est_log_*``, ``oc_log_*``: the per-op-class
totals of :mod:`hpo.features.layout_op_class`) back on a linear scale (``expm1``). A runtime adds
up over kernels, so linear totals let a linear model find the weights that logs of totals
hide. Each basis column is standardized within its graph (minus the graph's mean, over its
std; 0 where it does not vary), and the target is the log runtime standardized the same way,
so the fit orders configs *inside* a graph, as the ranking is scored, whatever each graph's
scale. The weights are a closed-form ridge (:data:`RIDGE`, relative to the rows' count) on a
few dozen columns: milliseconds to seconds, negligible next to LightGBM.

Each random layout collection gets weights of its own, fitted on its graphs' rows; the
default ones share the weights of every row. Why (issue 19): on unseen graphs of 8 laws no
one had looked at, xla:random's own weights ranked better (median +0.009 of the noise ceiling,
better on 7 of 8 laws); nlp:random's were even; the default collections' own weights were
worse (their labels are mostly noise). bench/README.md, "A prior per random collection".

Only the own weights read the per-op-class byte totals (``oc_log_*``,
:mod:`hpo.features.layout_op_class`), which no booster reads: on unseen graphs of 8 more laws
they raised nlp:random's worst share of the noise ceiling from 0.707 to 0.783 and left the
default collections as they were, where in the trees and the pooled weights they had cost
the default collections up to 0.011 (bench/README.md, "The per-op-class totals in the random
collections' prior only").

Fitted inside :func:`hpo.ranking.training.train_family` on the rows the trial trains on,
saved with the booster (booster store, ``model.json``), so the exported model is the model
that was scored. Its output replaces the estimate column in the blend
(:mod:`hpo.ranking.blend`); models made before it keep blending the column.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpo.features.layout_op_class import is_prior_only
from hpo.features.relative import RELATIVE_SUFFIXES
from hpo.features.store import read_rows
from hpo.features.table import FeatureTable
from hpo.ranking.chunks import graph_bounds, row_spans
from hpo.ranking.learned_prior import (
    RIDGE,
    LearnedPrior,
    basis_design,
    design_row_bytes,
    has_own_prior,
)
from hpo.ranking.standardize import standardize_within, standardized_spans

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

_LOG_PREFIXES = ("log_", "so_log_", "est_log_", "oc_log_")


def prior_basis(column_names: Sequence[str]) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Which of ``column_names`` the prior reads, and whether each is taken as ``expm1``.

    Returns ``(positions, linear)``: every per-config column once as is, and once more on a
    linear scale if it is a log column.
    """
    positions: list[int] = []
    linear: list[bool] = []
    for i, name in enumerate(column_names):
        if name.endswith(RELATIVE_SUFFIXES):
            continue
        positions.append(i)
        linear.append(False)
        if name.startswith(_LOG_PREFIXES):
            positions.append(i)
            linear.append(True)
    return tuple(positions), tuple(linear)


@dataclass
class _NormalEquations:
    """Running sums of the ridge's normal equations over chunks of rows.

    ``z.T @ z`` and ``z.T @ y`` add up over chunks (only the order of the floating-point sums
    differs from one product over every row).
    """

    gram: np.ndarray
    zy: np.ndarray
    rows: int = 0
    signal: bool = False  # some graph has configs of different runtimes

    def merged(self, other: _NormalEquations) -> _NormalEquations:
        """The equations of both row sets (graphs are standardized on their own, so sums add)."""
        gram, zy, rows = self.gram + other.gram, self.zy + other.zy, self.rows + other.rows
        return _NormalEquations(gram, zy, rows, self.signal or other.signal)

    def add_standardized(self, z: np.ndarray, y: np.ndarray) -> None:
        """Add standardized design rows ``z`` and their standardized targets ``y``."""
        self.gram += z.T @ z
        self.zy += z.T @ y
        self.rows += z.shape[0]
        self.signal = self.signal or bool(np.any(y))

    def add(
        self,
        X: np.ndarray,
        target: np.ndarray,
        bounds: np.ndarray,
        positions: Sequence[int],
        linear: Sequence[bool],
    ) -> None:
        """Add rows ``X`` of whole graphs (cut by ``bounds``), the basis at ``positions``."""
        if X.shape[0] == 0:
            return
        y = standardize_within(_log_runtime(target)[:, None], bounds)[:, 0]
        self.add_standardized(standardize_within(basis_design(X, positions, linear), bounds), y)


def _log_runtime(target: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(np.asarray(target, dtype=np.float64), 1e-12))


def _equations(width: int) -> _NormalEquations:
    return _NormalEquations(np.zeros((width, width)), np.zeros(width))


@dataclass(frozen=True, eq=False)
class PriorEquations:
    """The prior's normal equations over every basis column of some table columns.

    A feature switch removes columns from the basis, and the equations of fewer columns are
    a sub-block of these (each column is standardized on its own), so a campaign sums them
    once per row set and solves each trial's live columns in microseconds
    (:meth:`solve`); before, every new set of live columns read and standardized every
    training row again (about 10 s per trial at 200,000 rows).
    """

    names: tuple[str, ...]
    columns: tuple[int, ...]
    linear: tuple[bool, ...]
    sums: _NormalEquations
    #: ``{collection: the equations of its rows alone}`` for :func:`has_own_prior`'s
    #: collections; ``sums`` holds every row.
    own: Mapping[str, _NormalEquations] = field(default_factory=dict)

    def solve(self, live: np.ndarray, ridge: float = RIDGE) -> LearnedPrior | None:
        """The prior of the basis of table columns ``live`` (in ``live``'s order), ``None``
        when nothing is to learn (no basis column among them, no rows, no runtime varies).

        A collection of :attr:`own` whose rows teach nothing (one config per graph, equal
        runtimes) is scored with the pooled weights. The columns only the prior reads
        (:func:`hpo.features.is_prior_only`, the per-op-class totals) enter the collections'
        own weights alone; the pooled weights are 0 there.
        """
        at: dict[int, list[int]] = {}
        for i, c in enumerate(self.columns):
            at.setdefault(c, []).append(i)
        want = [i for c in np.asarray(live, dtype=np.int64).tolist() for i in at.get(c, [])]
        shared = [i for i in want if not is_prior_only(self.names[i])]
        pooled = self._solve(self.sums, shared, ridge)
        own = {c: self._solve(sums, want, ridge) for c, sums in self.own.items()}
        mine = {c: p for c, p in own.items() if p is not None}
        if not mine:
            return pooled
        # one basis for every collection (saved once, positions shared): the pooled weights
        # are 0 on the columns only the collections' own weights read (all 0 when only those
        # columns are live: the default collections then get no prior but the own weights do)
        coef = np.zeros(len(want))
        if pooled is not None:
            coef[[want.index(i) for i in shared]] = pooled.coef
        names = tuple(self.names[i] for i in want)
        return LearnedPrior(names, tuple(self.linear[i] for i in want), coef, ridge, mine)

    def _solve(self, sums: _NormalEquations, want: list[int], ridge: float) -> LearnedPrior | None:
        """The ridge of basis entries ``want`` (indices into :attr:`names`) on ``sums``."""
        n = sums.rows
        if not want or n == 0 or not sums.signal:
            return None
        gram = sums.gram[np.ix_(want, want)] / n + ridge * np.eye(len(want))
        coef = np.linalg.solve(gram, sums.zy[want] / n)
        names = tuple(self.names[i] for i in want)
        return LearnedPrior(names, tuple(self.linear[i] for i in want), coef, ridge)


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
    sums = _equations(len(positions))
    sums.add(X, target, bounds, positions, linear)
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
    """``[log runtime, design]`` of ``rows``: table columns ``read``, the basis at ``positions``."""
    X = read_rows(table.X, rows, read)
    return np.column_stack([_log_runtime(table.target[rows]), basis_design(X, positions, linear)])


def family_equations(
    parts: Sequence[tuple[FeatureTable, np.ndarray]], columns: np.ndarray
) -> PriorEquations | None:
    """The normal equations of training rows ``parts`` (``(table, rows)``) at ``columns``.

    The basis is chosen among the names of ``columns`` (:func:`prior_basis`). Each part is
    read twice in spans of about :data:`hpo.features.store.CHUNK_BYTES` of rows
    (:func:`hpo.ranking.chunks.row_spans`: whole graphs, a larger graph in pieces; with
    :func:`hpo.features.store.read_rows`, only the basis columns): once for each graph's
    moments, once for the standardized rows' sums. No design of a large graph is held whole.
    ``None`` when no column is a basis column.
    """
    columns = np.asarray(columns, dtype=np.int64)
    names = parts[0][0].feature_names if parts else ()
    positions, linear = prior_basis([names[j] for j in columns])
    if not positions:
        return None
    read, inverse = np.unique(np.asarray(positions), return_inverse=True)  # basis columns once
    local = inverse.tolist()
    width = len(positions) + 1  # the log runtime rides along as column 0
    row_bytes = 4 * read.size + design_row_bytes(width)
    by_key: dict[str, _NormalEquations] = {}  # "" holds the rows of no own prior
    for table, all_rows in parts:
        all_rows = np.asarray(all_rows, dtype=np.int64)
        graph_keys = [g.collection if has_own_prior(g.collection) else "" for g in table.graphs]
        keys = sorted(set(graph_keys))  # a small code per row, not a string (rows: millions)
        codes = np.array([keys.index(k) for k in graph_keys], dtype=np.int16)
        row_codes = codes[table.group[all_rows]]
        for code in np.unique(row_codes).tolist():
            rows = all_rows[row_codes == code]  # whole graphs: a graph has one collection
            bounds = graph_bounds(table.group[rows])
            sums = by_key.setdefault(keys[code], _equations(len(positions)))

            def chunk(a: int, b: int, table: FeatureTable = table, rows: np.ndarray = rows) -> Any:
                return _chunk(table, rows[a:b], columns[read], local, linear)

            for _, _, z in standardized_spans(bounds, row_spans(bounds, row_bytes), width, chunk):
                sums.add_standardized(np.ascontiguousarray(z[:, 1:]), z[:, 0])
    pooled = _equations(len(positions))
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
