"""A fitted learned prior: the weights a model carries, and the estimate it scores with.

Why a module of its own: a model folder, the blend and prediction need only the fitted
weights and how to apply them (:class:`LearnedPrior`); how they are fitted from a campaign's
training rows, in bounded chunks, is :mod:`hpo.ranking.prior.fit`'s business.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from hpo.data.load import LAYOUT_COLLECTIONS, is_layout
from hpo.errors import ConfigError
from hpo.ranking.chunks import row_spans
from hpo.ranking.prior.blend import is_default_collection
from hpo.ranking.standardize import standardized_spans

__all__ = ["RIDGE", "LearnedPrior", "basis_design", "design_row_bytes", "has_own_prior"]

#: Ridge penalty per row (the normal equations are divided by the rows' count); small, it only
#: keeps nearly collinear byte totals (padded and unpadded bytes of one op class) from blowing
#: up.
RIDGE = 1e-2
_EXP_CAP = 60.0  # expm1 argument cap: log-bytes columns are < 40, so this only guards inf
#: float64 arrays of a design's size held at once while a chunk of rows is fitted or scored:
#: standardizing (a standardized prior) holds the design, its centred copy, the squares and
#: the result; the additive fit the design, the same with the runtime, its centred copy and a
#: contiguous copy of that. What a chunk of rows budgets for.
_DESIGN_COPIES = 4


def has_own_prior(collection: str) -> bool:
    """Whether ``collection`` gets prior weights of its own: the random layout collections."""
    return is_layout(collection) and not is_default_collection(collection)


def design_row_bytes(width: int) -> int:
    """Bytes a row of a ``width``-column design costs while the prior fits or scores it: what
    a chunk of rows (:func:`hpo.ranking.chunks.graph_chunks`) budgets for besides the rows."""
    return 8 * _DESIGN_COPIES * int(width)


def basis_design(X: np.ndarray, positions: Sequence[int], linear: Sequence[bool]) -> np.ndarray:
    """The float64 design of rows ``X``: its columns at ``positions``, each flagged one in
    ``linear`` back on a linear scale (``expm1``: runtimes add up over kernels in bytes)."""
    cols = np.asarray(X[:, list(positions)], dtype=np.float64)  # the basis only, not all of X
    lin = np.asarray(linear, dtype=bool)
    if lin.any():
        cols[:, lin] = np.expm1(np.minimum(cols[:, lin], _EXP_CAP))
    return cols


@dataclass(frozen=True, eq=False)
class LearnedPrior:
    """A fitted prior: basis column names (among the family's), linear flags and weights."""

    names: tuple[str, ...]
    linear: tuple[bool, ...]
    coef: np.ndarray
    ridge: float = RIDGE
    #: ``{collection: its own prior}`` (:func:`has_own_prior`), on the same basis; other
    #: collections use these weights. Empty for priors made before it.
    own: Mapping[str, LearnedPrior] = field(default_factory=dict)
    #: True: the estimate is the design times the weights, columns as they are (the additive
    #: fit of :mod:`hpo.ranking.prior.additive`); False: each column standardized within its graph
    #: first (priors made before it, which :meth:`from_dict` reads without the key).
    additive: bool = False
    #: Collections whose trial scored the blend below the trees alone on its scored graphs, by
    #: more than their noise (``estimate_blend_select``, :func:`hpo.ranking.scoring.valid.
    #: prior_share`): they are ranked by the trees alone, in validation and in every model of
    #: the trial. Empty for priors made before it.
    off: frozenset[str] = frozenset()
    #: ``{collection: share}``: collections whose trial could not tell the blend from the trees
    #: alone on its scored graphs (:func:`hpo.ranking.scoring.valid.prior_share`); they blend
    #: with that share of their weight, in validation and in every model of the trial. Empty
    #: for priors made before it.
    doubt: Mapping[str, float] = field(default_factory=dict)

    def weight_share(self, collection: str) -> float:
        """The share of its blend weight ``collection`` keeps: 0 off, a doubt's share, else 1."""
        if collection in self.off:
            return 0.0
        return float(self.doubt.get(collection, 1.0))

    def chosen_shares(self) -> dict[str, float]:
        """``{collection: share}`` its trial chose: 0 for :attr:`off`, :attr:`doubt`'s shares;
        a collection absent keeps its whole weight."""
        return {**dict.fromkeys(sorted(self.off), 0.0), **self.doubt}

    @staticmethod
    def combined_shares(chosen: Sequence[Mapping[str, float]]) -> dict[str, float]:
        """``{collection: share}`` for one model from several fits' :meth:`chosen_shares` (a
        cross-validated configuration's folds), to blend at with :meth:`with_shares`.

        A retrain on every labeled graph has no held-out graphs to choose on (the trees beat
        any blend on rows they trained on), and each fold chose on graphs it did not train on.
        Per collection the lower median of the fits' shares is kept (a collection a fit left
        out counts as its whole weight, 1): always a share some fit chose, and of two halves
        that disagree the smaller share.
        """
        out: dict[str, float] = {}
        for c in sorted({c for shares in chosen for c in shares}):
            values = sorted(float(shares.get(c, 1.0)) for shares in chosen)
            out[c] = values[(len(values) - 1) // 2]
        return out

    def with_shares(self, shares: Mapping[str, float]) -> LearnedPrior:
        """These weights blended at ``shares`` (:meth:`chosen_shares` of another fit of the
        same configuration) instead of the shares chosen for them.

        Raises
        ------
        ConfigError
            If a share is not a number in [0, 1], or names no layout collection.
        """
        bad = [c for c, v in shares.items() if not (_is_number(v) and 0 <= float(v) <= 1)]
        if bad:
            raise ConfigError(f"blend shares: {bad[0]}: expected a number in [0, 1]")
        other = sorted(c for c in shares if c not in LAYOUT_COLLECTIONS)
        if other:
            raise ConfigError(f"blend shares: {other[0]}: expected a layout collection")
        off = frozenset(c for c, v in shares.items() if v == 0)
        doubt = {c: float(v) for c, v in shares.items() if 0 < v < 1}
        return replace(self, off=off, doubt=doubt)

    def blend_weights(self, weights: Mapping[str, float]) -> dict[str, float]:
        """``{collection: weight}`` as this prior's trial blended them (:meth:`weight_share`)."""
        return {c: float(w) * self.weight_share(c) for c, w in weights.items()}

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
        used = np.flatnonzero(self.coef != 0)
        if used.size == 0:
            return np.zeros(X.shape[0])  # orders nothing (a blend of it is the ranker's own)
        if used.size < self.coef.size:  # weights of 0 (models whose pooled weights left the
            # per-op-class totals to the collections' own): adding 0 changes no sum, so
            # leaving them out gives the same bits for less work
            part = LearnedPrior(
                tuple(self.names[j] for j in used),
                tuple(self.linear[j] for j in used),
                self.coef[used],
                self.ridge,
                additive=self.additive,
            )
            return part.estimate(X, bounds, [positions[j] for j in used.tolist()])
        spans = row_spans(bounds, design_row_bytes(len(self.names)))
        out = np.zeros(X.shape[0])

        def design(a: int, b: int) -> np.ndarray:
            return basis_design(X[a:b], positions, self.linear)

        # additive: the columns as they are, span by span (a graph's pieces need nothing of
        # each other); otherwise each column standardized within its graph
        pieces: Iterable[tuple[int, int, np.ndarray]] = (
            ((a, b, design(a, b)) for a, b in spans)
            if self.additive
            else standardized_spans(bounds, spans, len(self.names), design)
        )
        for a, b, z in pieces:
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
            **({"additive": True} if self.additive else {}),
            **({"collections": {c: p.to_dict() for c, p in self.own.items()}} if self.own else {}),
            **({"off": sorted(self.off)} if self.off else {}),
            **({"doubt": {c: self.doubt[c] for c in sorted(self.doubt)}} if self.doubt else {}),
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
            additive = data.get("additive", False)
            if not isinstance(additive, bool):
                raise TypeError("'additive': expected true or false")
            off = data.get("off", [])
            if not isinstance(off, list) or any(c not in LAYOUT_COLLECTIONS for c in off):
                raise TypeError("'off': expected a list of layout collections")
            doubt = data.get("doubt", {})
            if not isinstance(doubt, Mapping) or any(
                c not in LAYOUT_COLLECTIONS or not _is_share(v) for c, v in doubt.items()
            ):
                raise TypeError("'doubt': expected {layout collection: share in (0, 1]}")
            if set(doubt) & set(off):
                raise TypeError("'doubt': a collection also in 'off'")
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: malformed prior ({exc})") from exc
        if not (len(names) == len(linear) == coef.size) or coef.ndim != 1:
            raise ConfigError(
                f"{where}: malformed prior ({len(names)} names, {len(linear)} flags, "
                f"{coef.size} weights)"
            )
        if not np.all(np.isfinite(coef)):
            raise ConfigError(f"{where}: malformed prior (non-finite weight)")
        if additive and not all(linear):  # adding logs up would order nothing sensibly
            raise ConfigError(f"{where}: malformed prior (an additive prior reads bytes only)")
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
            if (prior.names, prior.linear, prior.additive) != (names, linear, additive):
                raise ConfigError(f"{at}: malformed prior (another basis than the family's)")
            own[str(collection)] = prior
        shares = {str(c): float(v) for c, v in doubt.items()}
        return cls(names, linear, coef, ridge, own, additive, frozenset(off), shares)


def _is_number(value: Any) -> bool:
    """Whether ``value`` is an int or float and not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_share(value: Any) -> bool:
    """Whether a saved doubt share is a number in (0, 1] (a bool is not one)."""
    return _is_number(value) and 0 < float(value) <= 1
