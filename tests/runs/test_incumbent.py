"""The one incumbent rule and the one config identity (hpo.runs.incumbent)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from hpo.runs.incumbent import choose_incumbent, combine_folds, config_key, rule_order
from hpo.runs.record.folder import trial_key
from hpo.runs.views.history import Trial


def _trial(n: int, budget: float | None, score: float | None, lr: float = 0.1) -> Trial:
    status = "SUCCESS" if score is not None else "CRASHED"
    return Trial(trial=n, config={"learning_rate": lr, "num_leaves": 31}, budget=budget,
                 status=status, score=score)  # fmt: skip


def test_config_key_ignores_order_and_numpy_types() -> None:
    plain = {"num_leaves": 31, "learning_rate": 0.1, "relative_features": True}
    numpy = {"learning_rate": np.float64(0.1), "relative_features": True,
             "num_leaves": np.int64(31)}  # fmt: skip
    assert config_key(plain) == config_key(numpy)
    assert config_key(json.loads(json.dumps(numpy, default=int))) == config_key(plain)
    assert config_key(plain) != config_key({**plain, "num_leaves": 32})
    assert trial_key({"config": numpy, "budget": 5.0, "seed": 0})[0] == config_key(plain)


def test_best_at_the_highest_budget_wins_over_better_low_budget_scores() -> None:
    trials = [_trial(1, 5.0, 0.9), _trial(2, 45.0, 0.4), _trial(3, 45.0, 0.6, lr=0.2),
              _trial(4, 15.0, 0.8), _trial(5, 45.0, None)]  # fmt: skip
    inc = choose_incumbent(trials)
    assert inc is not None
    assert inc.trial == 3


def test_ties_go_to_the_earlier_trial() -> None:
    trials = [_trial(1, 9.0, 0.5), _trial(2, 9.0, 0.5, lr=0.3)]
    inc = choose_incumbent(trials)
    assert inc is not None
    assert inc.trial == 1


def test_rule_order_ranks_as_the_rule_does() -> None:
    trials = [_trial(1, 5.0, 0.9), _trial(2, 45.0, 0.4), _trial(3, 45.0, 0.6, lr=0.2),
              _trial(4, None, 0.99), _trial(5, 45.0, 0.6, lr=0.3)]  # fmt: skip
    ranked = sorted(trials, key=rule_order, reverse=True)
    assert [t.trial for t in ranked] == [3, 5, 2, 1, 4]
    # the one the order puts first is the incumbent; a tie is not an improvement
    assert choose_incumbent(trials) is ranked[0]
    assert not rule_order(trials[4]) > rule_order(trials[2])


def test_named_config_settles_it_only_at_the_highest_budget() -> None:
    trials = [_trial(1, 9.0, 0.7, lr=0.3), _trial(2, 27.0, 0.5), _trial(3, 27.0, 0.5, lr=0.2)]
    named = choose_incumbent(trials, {"num_leaves": 31, "learning_rate": np.float64(0.2)})
    assert named is not None
    assert named.trial == 3
    low = choose_incumbent(trials, {"learning_rate": 0.3, "num_leaves": 31})
    assert low is not None
    assert low.trial == 2  # named at 9 only: the rule decides


def test_named_trial_picks_among_seeds() -> None:
    trials = [_trial(1, 27.0, 0.5), _trial(2, 27.0, 0.6)]
    inc = choose_incumbent(trials, {"learning_rate": 0.1, "num_leaves": 31}, named_trial=1)
    assert inc is not None
    assert inc.trial == 1


@pytest.mark.parametrize("trials", [[], [_trial(1, 5.0, None)]])
def test_no_success_no_incumbent(trials: list[Trial]) -> None:
    assert choose_incumbent(trials) is None


def test_combine_folds_carries_the_folds_shares() -> None:
    def fold(n: int, instance: str, shares: dict[str, float] | None) -> Trial:
        info = {} if shares is None else {"blend_shares": {"layout": shares}}
        return Trial(trial=n, config={"a": 1}, budget=8.0, status="SUCCESS", score=0.5,
                     instance=instance, info=info)  # fmt: skip

    x = "layout:xla:random"
    both = combine_folds([fold(1, "fold0", {x: 0.0}), fold(2, "fold1", {x: 0.03})], 2)
    assert both[0].blend_shares == {"layout": {x: 0.0}}
    # a family one fold did not record is left to the export's choice on valid
    one = combine_folds([fold(1, "fold0", {x: 0.0}), fold(2, "fold1", None)], 2)
    assert one[0].blend_shares == {}
    assert "blend_shares" not in one[0].info
