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

SMAC's own incumbent is chosen the same way (``incumbent_selection="highest_budget"``, see
:mod:`hpo.campaign.facades`), so when SMAC (or ``result.json``) names a configuration, that
configuration's trial at ``B`` is taken: the two agree except on ties, and naming the same
trial as SMAC keeps ``result.json`` and SMAC's own output consistent. A named configuration
that was not validated at ``B`` is ignored (it would break the rule).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar

import numpy as np

__all__ = ["ScoredTrial", "choose_incumbent", "config_key"]


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
    """What the rule reads of a trial (:class:`hpo.runs.history.Trial` has it)."""

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


def _best(trials: list[T]) -> T:
    return max(trials, key=lambda t: (t.score, -t.trial))


def choose_incumbent(
    trials: Iterable[T],
    named_config: Mapping[str, Any] | None = None,
    *,
    named_trial: int | None = None,
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
    """
    ok = [t for t in trials if t.ok]
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
