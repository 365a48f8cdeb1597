"""The one home of the incumbent rule and of a configuration's identity.

The campaign summary (``result.json``), ``hpo runs show`` / ``hpo runs list`` and
``hpo export`` all call :func:`choose_incumbent`; the trial log, the run history and the
booster store all call :func:`config_key`. A second copy of either would let the summary,
the history and the exported model disagree about which model won.

The rule
--------
Multi-fidelity optimizers (Hyperband, successive halving) evaluate most configurations at
small budgets, where scores are cheap but biased (few boosting rounds, few configs per
graph). A score at a low budget is therefore never compared with one at a higher budget, and
the exported model must be one that was *validated at the budget it ships at*. The incumbent
is *the best successful trial at the highest budget any successful trial reached*: let ``B``
be the largest budget among successful trials; among the successful trials at ``B``, the one
with the highest score wins (ties: the earlier trial).

SMAC's own incumbent is chosen the same way (``incumbent_selection="highest_budget"``, in
:mod:`hpo.campaign.smac.facade_builders`), so when SMAC (or ``result.json``) names a
configuration, that configuration's trial at ``B`` is taken: the two agree except on ties,
and naming the same trial as SMAC keeps ``result.json`` and SMAC's own output consistent. A
named configuration that was not validated at ``B`` is ignored (it would break the rule).

Cross-validation
----------------
With ``cv`` = K a trial scores one fold of the labeled graphs, and one fold is a noisy
measure (that is the reason for folds). The rule then runs on :func:`combine_folds`: only
configurations evaluated on all K folds (at ``B``) compete, by their mean score over the
folds, which is the cost SMAC compares (it averages a configuration's cost over instances).
A configuration SMAC dropped after a fold or two never becomes the incumbent.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

import numpy as np

from hpo.ranking.prior.learned import LearnedPrior

__all__ = ["ScoredTrial", "choose_incumbent", "combine_folds", "config_key", "rule_order"]


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"config value of type {type(value).__name__} is not JSON serialisable")


def config_key(config: Mapping[str, Any] | None) -> str:
    """Identity of a configuration: its hyperparameters as canonical JSON (sorted keys).

    A ConfigSpace ``Configuration``, a dict with numpy scalars and the same dict read back
    from ``trials.jsonl`` all give the same key.
    """
    if config is None:
        return "null"
    return json.dumps(dict(config), sort_keys=True, default=_plain)


class ScoredTrial(Protocol):
    """What the rule reads of a trial (:class:`hpo.runs.views.history.Trial` has it)."""

    @property
    def trial(self) -> int: ...  # noqa: D102

    @property
    def config(self) -> dict[str, Any]: ...  # noqa: D102

    @property
    def budget(self) -> float | None: ...  # noqa: D102

    @property
    def score(self) -> float | None: ...  # noqa: D102

    @property
    def ok(self) -> bool: ...  # noqa: D102


T = TypeVar("T", bound=ScoredTrial)


def _budget(t: ScoredTrial) -> float:
    return t.budget if t.budget is not None else -math.inf


def rule_order(t: ScoredTrial) -> tuple[float, float]:
    """The rule's order of successful trials: the budget (none: lowest), then the score.

    Of two trials with the same order the earlier stays best, so a caller keeping a running
    best replaces it only on a strictly higher order. The live view's best, ``runs show``'s
    top configurations and the incumbent trajectory sort by it.
    """
    return _budget(t), t.score if t.score is not None else -math.inf


def _best(trials: list[T]) -> T:
    return max(trials, key=lambda t: (t.score, -t.trial))


def combine_folds(trials: Iterable[T], folds: int) -> list[T]:
    """One trial per configuration, budget and seed that succeeded on all ``folds`` folds.

    Its ``score`` is the mean of the folds' scores (``cost`` = 1 - score), ``metrics`` the
    mean per collection, ``trial`` the number of the fold trial that completed it (so the
    list is in order of completion), ``start``/``end`` span the folds, ``duration`` sums
    them, ``baseline`` is the folds', and ``info`` holds ``folds`` (``{fold: {"trial",
    "score", "metrics"}}``), ``score_std`` (spread over folds), ``n_folds`` and, where the
    folds recorded them, ``blend_shares`` (per family, the folds' combined by
    :meth:`hpo.ranking.prior.learned.LearnedPrior.combined_shares`). A configuration still
    missing a fold, or with a failed fold, is left out: it was not validated on every graph.
    """
    groups: dict[tuple[Any, ...], dict[str, T]] = {}
    for t in trials:
        instance = getattr(t, "instance", None)
        if t.ok and instance is not None:
            key = (config_key(t.config), t.budget, getattr(t, "seed", None))
            groups.setdefault(key, {}).setdefault(instance, t)
    out: list[T] = []
    for by_fold in groups.values():
        if len(by_fold) < folds:
            continue
        parts = [by_fold[k] for k in sorted(by_fold)]
        every: list[Any] = parts  # Trial dataclasses: read and replaced beyond the protocol
        scores = np.array([p.score for p in every], dtype=float)
        collections = sorted({c for p in every for c in p.metrics})
        metrics = {
            c: float(np.mean([p.metrics[c] for p in every if c in p.metrics])) for c in collections
        }
        last = max(every, key=lambda p: p.trial)
        starts = [p.start for p in every if p.start is not None]
        ends = [p.end for p in every if p.end is not None]
        info: dict[str, Any] = {
            "folds": {
                p.instance: {"trial": p.trial, "score": p.score, "metrics": p.metrics}
                for p in every
            },
            "score_std": float(scores.std()),
            "n_folds": len(every),
        }
        shares = _fold_shares([getattr(p, "blend_shares", {}) for p in every])
        if shares:
            info["blend_shares"] = shares
        out.append(
            dataclasses.replace(
                last,
                score=float(scores.mean()),
                cost=1.0 - float(scores.mean()),
                metrics=metrics,
                start=min(starts) if starts else None,
                end=max(ends) if ends else None,
                duration=float(sum(p.duration or 0.0 for p in every)),
                baseline=any(p.baseline for p in every),
                instance=None,
                info=info,
            )
        )
    return sorted(out, key=lambda t: t.trial)


def _fold_shares(per_fold: list[Mapping[str, Mapping[str, float]]]) -> dict[str, dict[str, float]]:
    """``{family: {collection: share}}`` of the prior's blend for a configuration scored on
    folds, from each fold's record (``Trial.blend_shares``); a family missing from any fold's
    record is left out (its retrain chooses on valid)."""
    if not per_fold:
        return {}
    families = sorted(set.intersection(*(set(s) for s in per_fold)))
    return {f: LearnedPrior.combined_shares([s[f] for s in per_fold]) for f in families}


def choose_incumbent(
    trials: Iterable[T],
    named_config: Mapping[str, Any] | None = None,
    *,
    named_trial: int | None = None,
    folds: int = 0,
) -> T | None:
    """The incumbent trial (see the module docstring); ``None`` without a successful trial.

    Parameters
    ----------
    trials
        Trials of a run, in log order (failed ones are skipped).
    named_config
        The configuration SMAC (or ``result.json``) names as incumbent, if any. It is taken
        when it was validated at the highest budget; otherwise the rule decides alone.
    named_trial
        The trial number ``result.json`` names; picks among several trials of
        ``named_config`` at that budget (several seeds).
    folds
        With cross-validation, the number of folds: the rule runs on :func:`combine_folds`
        (configurations validated on every fold, by their mean score) and returns such a
        combined trial.
    """
    ok = [t for t in (combine_folds(trials, folds) if folds else trials) if t.ok]
    if not ok:
        return None
    top = max(_budget(t) for t in ok)
    at_top = [t for t in ok if _budget(t) == top]
    if named_config is not None:
        key = config_key(named_config)
        named = [t for t in at_top if config_key(t.config) == key]
        same = [t for t in named if t.trial == named_trial]
        if same:
            return same[0]
        if named:
            return _best(named)
    return _best(at_top)
