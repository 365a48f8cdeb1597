"""Hyperparameter importance from a run's history.

A random forest (scikit-learn ``RandomForestRegressor``) is fitted on the successful trials:
inputs are the configuration encoded by ConfigSpace's ``Configuration.get_array()`` (numeric
hyperparameters scaled to [0, 1] on their own, possibly log, scale; categorical ones as the
index of their choice; inactive ones as -1) plus the trial's log budget as one more column;
the output is the validation score. Without a search space in ``campaign.json``, numbers are
used as they are and other values as category codes.

Two measures are offered:

- ``marginal`` (default, fANOVA-style): for each input, the variance over its observed values
  of the forest's marginal prediction (all other inputs kept as observed, averaged), as a
  fraction of the variance of the forest's predictions;
- ``permutation``: the drop of the forest's R^2 when the column is shuffled
  (``sklearn.inspection.permutation_importance``).

Both are computed on the trials themselves (there are too few to hold some out), so they
describe the landscape the optimizer saw, not a guarantee. Below ``min_trials`` successful
trials nothing is fitted and the result says "too few trials".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hpo.errors import UsageError
from hpo.runs.views.history import RunHistory, Trial

__all__ = [
    "BUDGET_FEATURE",
    "MIN_TRIALS",
    "Importance",
    "encode_trials",
    "hyperparameter_importance",
]

#: Fewest successful trials for which importance is computed.
MIN_TRIALS = 8
#: Name of the budget column in the result.
BUDGET_FEATURE = "budget"
_METHODS = ("marginal", "permutation")
_GRID = 16


@dataclass(frozen=True)
class Importance:
    """Ranked importance of each hyperparameter (and of the budget).

    Attributes
    ----------
    values
        ``{name: importance}`` sorted by decreasing importance; empty when not computed.
    method
        ``marginal`` or ``permutation``.
    n_trials
        Successful trials used.
    message
        Why nothing was computed (``too few trials ...``), else ``None``.
    """

    values: dict[str, float] = field(default_factory=dict)
    method: str = "marginal"
    n_trials: int = 0
    message: str | None = None

    @property
    def ok(self) -> bool:
        """Whether importances were computed."""
        return self.message is None


def _space_of(run: RunHistory) -> Any:
    if run.space is None:
        return None
    from hpo.ranking.spaces import space_from_dict

    return space_from_dict(run.space, source=f"{run.path}/campaign.json")


def _encode_with_space(space: Any, trials: Sequence[Trial]) -> tuple[np.ndarray, list[str]] | None:
    from ConfigSpace import Configuration

    names = list(space.keys())
    rows = []
    for t in trials:
        try:
            values = {k: v for k, v in t.config.items() if k in names}
            rows.append(Configuration(space, values=values).get_array())
        except (ValueError, KeyError, TypeError):
            return None  # a config outside the space: fall back to the plain encoding
    arr = np.asarray(rows, dtype=np.float64)
    return np.where(np.isfinite(arr), arr, -1.0), names


def _encode_plain(trials: Sequence[Trial]) -> tuple[np.ndarray, list[str]]:
    names = sorted({k for t in trials for k in t.config})
    cols = []
    for name in names:
        raw = [t.config.get(name) for t in trials]
        numeric = all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in raw if v is not None
        )
        if numeric:
            cols.append([float(v) if v is not None else -1.0 for v in raw])
        else:
            codes = {v: i for i, v in enumerate(sorted({repr(v) for v in raw}))}
            cols.append([float(codes[repr(v)]) for v in raw])
    return np.asarray(cols, dtype=np.float64).T.reshape(len(trials), len(names)), names


def encode_trials(run: RunHistory, trials: Sequence[Trial]) -> tuple[np.ndarray, list[str]]:
    """Encode trials as a float matrix (configuration columns, then the log budget).

    Returns
    -------
    tuple
        ``X`` of shape ``(len(trials), n_hyperparameters + 1)`` and the column names.
    """
    space = _space_of(run)
    encoded = _encode_with_space(space, trials) if space is not None else None
    X, names = encoded if encoded is not None else _encode_plain(trials)
    budget = np.array([math.log(t.budget) if t.budget and t.budget > 0 else 0.0 for t in trials])
    return np.column_stack([X, budget]), [*names, BUDGET_FEATURE]


def _marginal(forest: Any, X: np.ndarray) -> np.ndarray:
    """Variance of each column's marginal prediction over its observed values, normalised."""
    total = float(np.var(forest.predict(X)))
    out = np.zeros(X.shape[1])
    if total <= 0.0:
        return out
    n = X.shape[0]
    for j in range(X.shape[1]):
        grid = np.unique(X[:, j])
        if grid.size > _GRID:
            grid = np.unique(np.quantile(X[:, j], np.linspace(0.0, 1.0, _GRID)))
        if grid.size < 2:
            continue
        stacked = np.repeat(X[None, :, :], grid.size, axis=0)
        stacked[:, :, j] = grid[:, None]
        marginal = forest.predict(stacked.reshape(-1, X.shape[1])).reshape(grid.size, n).mean(1)
        out[j] = float(np.var(marginal)) / total
    return out


def hyperparameter_importance(
    run: RunHistory,
    *,
    method: str = "marginal",
    min_trials: int = MIN_TRIALS,
    seed: int = 0,
    n_estimators: int = 100,
) -> Importance:
    """Rank the hyperparameters of a run (and its budget) by how much they moved the score.

    Parameters
    ----------
    run
        A loaded run.
    method
        ``marginal`` (fANOVA-style marginal variance) or ``permutation``.
    min_trials
        Fewest successful trials needed; below it the result carries a "too few trials"
        message and no values.
    seed
        Seed of the forest and of the permutations.
    n_estimators
        Trees in the forest.

    Returns
    -------
    Importance
        Importances as fractions summing to 1 (or all 0 when the score never varied).

    Raises
    ------
    UsageError
        If ``method`` is unknown.
    """
    if method not in _METHODS:
        raise UsageError(f"unknown importance method '{method}' (expected one of {_METHODS})")
    trials = run.successful
    n = len(trials)
    distinct = {repr(sorted(t.config.items())) + repr(t.budget) for t in trials}
    if n < min_trials or len(distinct) < 2:
        return Importance(
            method=method,
            n_trials=n,
            message=f"too few trials for importance ({n} successful, need {min_trials})",
        )
    from sklearn.ensemble import RandomForestRegressor

    X, names = encode_trials(run, trials)
    y = np.array([t.score for t in trials], dtype=np.float64)
    forest = RandomForestRegressor(
        n_estimators=n_estimators, min_samples_leaf=1, max_features=1.0, random_state=seed
    ).fit(X, y)
    if method == "permutation":
        from sklearn.inspection import permutation_importance

        raw = permutation_importance(forest, X, y, n_repeats=10, random_state=seed)
        values = np.clip(np.asarray(raw.importances_mean, dtype=np.float64), 0.0, None)
    else:
        values = _marginal(forest, X)
    total = float(values.sum())
    if total > 0:
        values = values / total
    ranked = sorted(zip(names, values.tolist(), strict=True), key=lambda kv: -kv[1])
    return Importance(values=dict(ranked), method=method, n_trials=n)
