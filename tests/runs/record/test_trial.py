"""Reading trials.jsonl records (hpo.runs.record.trial)."""

from __future__ import annotations

from hpo.runs.record.trial import trials_of, warm_baseline


def test_trials_of_keeps_log_order_and_numbers_records_without_a_trial() -> None:
    records = [
        {"trial": 7, "status": "SUCCESS", "score": 0.5, "config": {"a": 1}},
        {"status": "CRASHED", "config": {"a": 2}},
        {"status": "SUCCESS", "cost": 0.25, "baseline": True, "finish": True},
    ]
    trials = trials_of(records)
    assert [t.trial for t in trials] == [7, 2, 3]
    assert [t.ok for t in trials] == [True, False, True]
    assert trials[2].score == 0.75  # a success without a score: 1 - cost
    assert (trials[2].baseline, trials[2].finish) == (True, True)
    assert trials_of([]) == []


def test_warm_baseline_names_the_source_and_whether_it_is_the_default() -> None:
    assert warm_baseline({}) is None  # not warm-started
    assert warm_baseline({"warm_start": {"configs": [{"a": 1}]}}) is None  # default baseline
    assert warm_baseline({"warm_start": {"baseline": [1]}}) is None  # not a configuration
    record = {"baseline": {"a": 1}, "baseline_run": "e0", "baseline_is_default": False}
    assert warm_baseline({"warm_start": record}) == ("e0", False)
    flagged = {**record, "baseline_is_default": True}
    assert warm_baseline({"warm_start": flagged}) == ("e0", True)
    unnamed = {"baseline": {"a": 1}, "baseline_is_default": False}
    assert warm_baseline({"warm_start": unnamed}) == ("an earlier run", False)
