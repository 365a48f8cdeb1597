"""Choosing what a campaign finishes (hpo.campaign.lifecycle.candidates)."""

from __future__ import annotations

from typing import Any

from hpo.campaign.lifecycle.candidates import Candidate, finish_candidates
from hpo.runs.record.trial import Trial


def _trial(n: int, config: str, budget: float, score: float | None, **kw: Any) -> Trial:
    status = "SUCCESS" if score is not None else "CRASHED"
    return Trial(n, {"c": config}, budget, status, score=score, config_id=n, **kw)


def test_candidates_are_compared_at_the_budget_they_share() -> None:
    trials = [
        _trial(1, "base", 9, 0.5),  # at the largest budget: nothing to finish
        *(_trial(2 + i, f"low{i}", 1, 0.1 * i) for i in range(8)),  # low7 best of 8 at 1
        _trial(10, "low6", 3, 0.65),  # low6 went on, and beats "other" at budget 3
        _trial(11, "other", 1, 0.02),
        _trial(12, "other", 3, 0.6),
        _trial(13, "crash", 1, 0.99),
        _trial(14, "crash", 3, None),  # crashed at its highest budget: skipped
        _trial(15, "fold", 1, 0.99, instance="fold0"),  # a fold: no budget to finish
        _trial(16, "late", 3, 0.7),  # a bracket that started at 3
    ]
    chosen = finish_candidates(trials, 9.0, 4)
    # low7 beats the other lows and "other" at 1, and "late" by rank (2nd of 10 against 1st
    # of 3); "late" beats low6 and "other" at 3 and low0-low5 by rank; low6 beats low0-low5
    # and "other" (at 3); low5 beats low0-low4 and "other"
    assert [c.trial.config["c"] for c in chosen] == ["low7", "late", "low6", "low5"]
    assert [c.wins for c in chosen] == [9, 8, 7, 6]
    assert [(c.rank, c.of, c.trial.budget) for c in chosen] == [
        (2, 10, 1),
        (1, 3, 3),
        (2, 3, 3),
        (4, 10, 1),
    ]
    assert "0.7000 at 1, #2 of 10" in chosen[0].describe()
    assert finish_candidates(trials, 9.0, 0) == []
    assert finish_candidates(trials, 1.0, 3) == []  # everything reached the largest budget


def test_a_candidates_seconds_count_only_the_rounds_it_still_needs() -> None:
    # a booster continued from budget 3: 6 of its 9 rounds trained in 12 s, 6 more to go
    go_on = _trial(1, "a", 3, 0.5, duration=12.0, info={"rounds_trained": 2, "rounds_reused": 1})
    assert Candidate(go_on, 1, 1, 0).seconds(9.0) == 12.0 / 2 * 3 * 2
    fresh = _trial(2, "b", 3, 0.5, duration=6.0)  # no booster to continue: in proportion
    assert Candidate(fresh, 1, 1, 0).seconds(9.0) == 18.0
