"""The learned cost prior: per-config quantities weighted by a ridge fitted on the train split.

Why (issue 19): the hand-written estimate ``est_log_total_bytes`` has weights someone chose
after reading the generator's law. On real TPU runtimes it ranked a U-Net worse than the plain
padded volume (Kendall tau 0.19 against 0.39, one of its terms with the wrong sign), and on
generated data of a law it was not written for, blending it cost up to a third of the noise
ceiling. A prior that enters the ranking must get its weights from the data it is given.

The basis is the per-config columns the booster reads, without their relative versions
(``_dmed``/``_prank``, which standardization makes redundant), plus every log-of-bytes column
(``log_*``, ``so_log_*``, ``est_log_*``) back on a linear scale (``expm1``). A runtime adds
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

from hpo.data.load import is_layout
from hpo.errors import ConfigError
from hpo.features.relative import RELATIVE_SUFFIXES
from hpo.features.store import read_rows
from hpo.features.table import FeatureTable
from hpo.ranking.blend import is_default_collection
from hpo.ranking.chunks import graph_bounds, row_spans
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

#: Ridge penalty per row (the normal equations are divided by the rows' count); small, it only
#: keeps collinear columns (a log and its linear twin) from blowing up.
RIDGE = 1e-2
_LOG_PREFIXES = ("log_", "so_log_", "est_log_")
_EXP_CAP = 60.0  # expm1 argument cap: log-bytes columns are < 40, so this only guards inf
#: float64 arrays of a design's size that :func:`standardize_within` holds at once (the
#: design, its centred copy, the squares, the result): what a chunk of rows budgets for.
_DESIGN_COPIES = 4


def has_own_prior(collection: str) -> bool:
    """Whether ``collection`` gets prior weights of its own: the random layout collections."""
    return is_layout(collection) and not is_default_collection(collection)


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


def design_row_bytes(width: int) -> int:
    """Bytes a row of a ``width``-column design costs while it is standardized: what a chunk
    of rows (:func:`hpo.ranking.chunks.graph_chunks`) budgets for the prior besides the rows."""
    return 8 * _DESIGN_COPIES * int(width)


def _design(X: np.ndarray, positions: Sequence[int], linear: Sequence[bool]) -> np.ndarray:
    cols = np.asarray(X[:, list(positions)], dtype=np.float64)  # the basis only, not all of X
    lin = np.asarray(linear, dtype=bool)
    if lin.any():
        cols[:, lin] = np.expm1(np.minimum(cols[:, lin], _EXP_CAP))
    return cols


@dataclass(frozen=True, eq=False)
class LearnedPrior:
    """A fitted prior: basis column names (among the booster's), linear flags and weights."""

    names: tuple[str, ...]
    linear: tuple[bool, ...]
    coef: np.ndarray
    ridge: float = RIDGE
    #: ``{collection: its own prior}`` (:func:`has_own_prior`), on the same basis; other
    #: collections use these weights. Empty for priors made before it.
    own: Mapping[str, LearnedPrior] = field(default_factory=dict)

    def for_collection(self, collection: str) -> LearnedPrior:
        """The prior that scores ``collection``'s graphs: its own, or these pooled weights."""
        return self.own.get(collection, self)

    def estimate(self, X: np.ndarray, bounds: np.ndarray, positions: Sequence[int]) -> np.ndarray:
        """The prior of rows ``X`` (graphs cut by ``bounds``), higher = predicted slower.

        ``positions`` are the columns of ``X`` holding :attr:`names`, in order. The float64
        design is made in bounded pieces (:func:`hpo.ranking.chunks.row_spans`): a test graph
        of 100,000 configs took about 1 GB of design copies at once.
        """
        bounds = np.asarray(bounds, dtype=np.int64)
        spans = row_spans(bounds, design_row_bytes(len(self.names)))
        out = np.zeros(X.shape[0])

        def design(a: int, b: int) -> np.ndarray:
            return _design(X[a:b], positions, self.linear)

        for a, b, z in standardized_spans(bounds, spans, len(self.names), design):
            # column by column, not ``z @ coef``: a matrix product's rounding depends on where
            # a row sits in the array, so one graph scored alone (prediction) and among
            # others (validation) would differ in the last bit and break ties between
            # duplicate configs differently; elementwise sums give every row the same bits
            for j, c in enumerate(self.coef):
                out[a:b] += c * z[:, j]
        return out

    def positions_in(self, column_names: Sequence[str], where: str) -> list[int]:
        """Positions of :attr:`names` among ``column_names``.

        Raises
        ------
        ConfigError
            If a basis column is not among them (naming ``where``).
        """
        index = {n: i for i, n in enumerate(column_names)}
        missing = [n for n in self.names if n not in index]
        if missing:
            raise ConfigError(f"{where}: the prior reads column '{missing[0]}' the model lacks")
        return [index[n] for n in self.names]

    def to_dict(self) -> dict[str, Any]:
        """JSON data (``model.json``'s family entry, the booster store's sidecar)."""
        return {
            "names": list(self.names),
            "linear": list(self.linear),
            "coef": [float(c) for c in self.coef],
            "ridge": self.ridge,
            **({"collections": {c: p.to_dict() for c, p in self.own.items()}} if self.own else {}),
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> LearnedPrior:
        """Read :meth:`to_dict`'s output; one-line :class:`ConfigError` naming ``where``."""
        try:
            if not isinstance(data, Mapping):
                raise TypeError("expected a JSON object")
            names = tuple(str(n) for n in data["names"])
            linear = tuple(bool(v) for v in data["linear"])
            coef = np.asarray(data["coef"], dtype=np.float64)
            ridge = float(data.get("ridge", RIDGE))
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: malformed prior ({exc})") from exc
        if not (len(names) == len(linear) == coef.size) or coef.ndim != 1:
            raise ConfigError(
                f"{where}: malformed prior ({len(names)} names, {len(linear)} flags, "
                f"{coef.size} weights)"
            )
        if not np.all(np.isfinite(coef)):
            raise ConfigError(f"{where}: malformed prior (non-finite weight)")
        own_data = data.get("collections", {})
        if not isinstance(own_data, Mapping):
            raise ConfigError(f"{where}: malformed prior ('collections': expected a JSON object)")
        own = {}
        for collection, entry in own_data.items():
            at = f"{where}: collection '{collection}'"
            nested = isinstance(entry, Mapping) and "collections" in entry
            if nested or not has_own_prior(str(collection)):
                raise ConfigError(f"{at}: malformed prior (no own weights there, or nested)")
            prior = cls.from_dict(entry, at)
            if (prior.names, prior.linear) != (names, linear):  # one basis: shared positions
                raise ConfigError(f"{at}: malformed prior (another basis than the family's)")
            own[str(collection)] = prior
        return cls(names, linear, coef, ridge, own)


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
        self.add_standardized(standardize_within(_design(X, positions, linear), bounds), y)


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
        runtimes) is scored with the pooled weights.
        """
        at: dict[int, list[int]] = {}
        for i, c in enumerate(self.columns):
            at.setdefault(c, []).append(i)
        want = [i for c in np.asarray(live, dtype=np.int64).tolist() for i in at.get(c, [])]
        pooled = self._solve(self.sums, want, ridge)
        if pooled is None:
            return None
        own = {c: self._solve(sums, want, ridge) for c, sums in self.own.items()}
        mine = {c: p for c, p in own.items() if p is not None}
        return LearnedPrior(pooled.names, pooled.linear, pooled.coef, ridge, mine)

    def _solve(self, sums: _NormalEquations, want: list[int], ridge: float) -> LearnedPrior | None:
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
    return np.column_stack([_log_runtime(table.target[rows]), _design(X, positions, linear)])


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
