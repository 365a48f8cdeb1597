"""The configurations a campaign finishes: the most promising short of the largest budget.

Scores at different budgets are not comparable (more rounds score higher), so a candidate is
placed by whom it beats where both were scored (:func:`finish_candidates`), and its cost is
estimated from its own trial (:meth:`Candidate.seconds`). :mod:`hpo.campaign.lifecycle.finish` sizes
its reserve with them and runs them at the largest budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hpo.runs.incumbent import config_key
from hpo.runs.record.trial import Trial

__all__ = ["PAIRWISE", "Candidate", "finish_candidates"]

#: Candidates, best placed within their budget first, compared pairwise.
PAIRWISE = 64


@dataclass(frozen=True)
class Candidate:
    """A configuration to finish: its ``trial`` at the highest budget it reached, ranked
    ``rank`` (1 = best) of the ``of`` configurations scored at that budget, and how many
    other candidates it beat (``wins``)."""

    trial: Trial
    rank: int
    of: int
    wins: int

    def seconds(self, max_budget: float) -> float:
        """Estimated seconds to take it to ``max_budget``, from its own trial.

        With the ``rounds`` fidelity the trial continues its booster: its seconds per new
        round times the rounds still missing (``info`` holds the rounds trained and reused,
        over the families); otherwise a new training, in proportion to the budget.
        """
        t = self.trial
        budget, duration = float(t.budget or 1.0), float(t.duration or 0.0)
        rounds = t.rounds
        if rounds is not None and rounds[0] > 0:
            trained, reused = rounds
            return duration / trained * (trained + reused) * (max_budget - budget) / budget
        return duration * max_budget / budget

    def describe(self) -> str:
        """``trial 7's configuration (0.9051 at 168, #1 of 6 there)``, for the progress log.

        It is named by its trial at the highest budget it reached, the number the progress
        view shows for trials (SMAC's own configuration ids are never shown).
        """
        t = self.trial
        where = f"({t.score:.4f} at {t.budget:g}, #{self.rank} of {self.of})"
        return f"trial {t.trial}'s configuration {where}"


def finish_candidates(trials: list[Trial], max_budget: float, k: int) -> list[Candidate]:
    """The ``k`` most promising configurations that did not reach ``max_budget``.

    Scores at different budgets are not comparable (more rounds score higher), so two
    configurations are compared at the highest budget both were scored at, as successive
    halving compares a group; two without a budget in common (brackets that start at
    different budgets) by their rank among every configuration scored at their own highest
    budget, over the number of those. A candidate's promise is how many of the others it
    beats; ties go to the higher budget, then the higher score. Configurations with a trial
    at ``max_budget`` (finished or crashed) or any crashed trial, and cross-validation folds,
    are left out.
    """
    if k <= 0:
        return []
    plain = [t for t in trials if t.instance is None and t.budget is not None]
    skip = {config_key(t.config) for t in plain if not t.ok or (t.budget or 0.0) >= max_budget}
    scores: dict[str, dict[float, float]] = {}  # config -> budget -> its best score there
    at: dict[str, Trial] = {}  # config -> its best trial at its highest budget
    for t in (t for t in plain if t.ok):
        key, budget, score = config_key(t.config), float(t.budget or 0.0), float(t.score or 0.0)
        mine = scores.setdefault(key, {})
        mine[budget] = max(score, mine.get(budget, -math.inf))
        seen = at.get(key)
        if seen is None or (budget, score) > (float(seen.budget or 0.0), seen.score or 0.0):
            at[key] = t
    keys = [key for key in at if key not in skip]

    def place(key: str) -> tuple[int, int]:  # rank at its highest budget, of how many
        top = max(scores[key])
        there = [s[top] for s in scores.values() if top in s]
        return 1 + sum(s > scores[key][top] for s in there), len(there)

    places = {key: place(key) for key in keys}
    # the pairwise comparison is quadratic: only the best-placed go on to it
    keys = sorted(keys, key=lambda key: places[key][0] / places[key][1])[:PAIRWISE]

    def beats(a: str, b: str) -> bool:
        common = set(scores[a]) & set(scores[b])
        if common:
            return scores[a][max(common)] > scores[b][max(common)]
        return places[a][0] / places[a][1] < places[b][0] / places[b][1]

    ranked = [
        Candidate(at[a], *places[a], wins=sum(beats(a, b) for b in keys if b != a)) for a in keys
    ]
    ranked.sort(key=lambda c: (-c.wins, -(c.trial.budget or 0.0), -(c.trial.score or 0.0)))
    return ranked[:k]
