"""Whether a run's small budgets predict its large ones: the rank correlation of the scores of
the configurations evaluated at two budgets (``hpo runs show``).

Successive halving and Hyperband promote what scores best at a small budget; that only finds
the best configuration at the largest budget when the two orders agree. DeepCAVE's budget
correlation view answers the same question with the same statistic (Spearman's rho over the
configurations evaluated at both budgets). With cross-validation a configuration's score at a
budget is its mean over the folds (:attr:`~hpo.runs.views.history.RunHistory.scored`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from hpo.runs.incumbent import config_key
from hpo.runs.views.history import RunHistory

__all__ = ["PREDICTS", "BudgetCorrelation", "budget_correlations", "budget_note"]

#: Spearman's rho from which the smallest budget is said to predict the largest.
PREDICTS = 0.5


@dataclass(frozen=True)
class BudgetCorrelation:
    """The rank correlation of the scores at ``low`` and ``high`` over ``n`` configurations
    evaluated at both (``spearman``/``kendall`` ``None`` below 3 configurations or when the
    scores at one budget are all equal)."""

    low: float
    high: float
    n: int
    spearman: float | None
    kendall: float | None


def _scores_by_budget(run: RunHistory) -> dict[float, dict[str, float]]:
    """``{budget: {config key: score}}`` of the scored trials (the last at a budget wins)."""
    out: dict[float, dict[str, float]] = {}
    for t in run.scored:
        if t.budget is not None and t.score is not None:
            out.setdefault(t.budget, {})[config_key(t.config)] = t.score
    return out


def _pair(low: float, high: float, by: dict[float, dict[str, float]]) -> BudgetCorrelation:
    both = sorted(set(by[low]) & set(by[high]))
    a = np.array([by[low][k] for k in both])
    b = np.array([by[high][k] for k in both])
    if len(both) < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return BudgetCorrelation(low, high, len(both), None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rho = float(stats.spearmanr(a, b).statistic)
        tau = float(stats.kendalltau(a, b).statistic)
    return BudgetCorrelation(
        low,
        high,
        len(both),
        rho if math.isfinite(rho) else None,
        tau if math.isfinite(tau) else None,
    )


def budget_correlations(run: RunHistory) -> list[BudgetCorrelation]:
    """The correlation of each budget with the next, then of the smallest with the largest
    (when more than two budgets were scored); ``[]`` for a run of one budget."""
    by = _scores_by_budget(run)
    budgets = sorted(by)
    pairs = list(zip(budgets, budgets[1:], strict=False))
    if len(budgets) > 2:
        pairs.append((budgets[0], budgets[-1]))
    return [_pair(lo, hi, by) for lo, hi in pairs]


def budget_note(correlations: list[BudgetCorrelation]) -> str | None:
    """One line when the smallest budget does not predict the largest (Spearman below
    :data:`PREDICTS`), else ``None`` (also when too few configurations reached both)."""
    if not correlations:
        return None
    last = correlations[-1]  # the smallest with the largest
    if last.spearman is None or last.spearman >= PREDICTS:
        return None
    return (
        f"the smallest budget ({last.low:g}) does not predict the largest ({last.high:g}): "
        f"Spearman {last.spearman:.2f} over {last.n} configurations; successive halving "
        "discards on a noisy signal, so raise --min-budget"
    )
