"""Reading trials.jsonl records (hpo.runs.record.trial)."""

from __future__ import annotations

from hpo.runs.record.trial import trials_of


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


def test_a_trial_is_written_as_it_is_read() -> None:
    """The one writer (``to_record``) and the one reader (``from_record``) agree."""
    record = {"trial": 3, "config": {"a": 1}, "budget": 9.0, "status": "SUCCESS", "score": 0.5}
    (trial,) = trials_of([{**record, "seed": 2, "instance": "fold1", "info": {"x": 1}}])
    assert trials_of([trial.to_record()]) == [trial]
    assert trial.key == ('{"a": 1}', 9.0, 2, "fold1")
