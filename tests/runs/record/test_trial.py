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


def test_blend_shares_are_read_or_left_to_the_export() -> None:
    """A trial's recorded shares of the prior's blend; anything else is none, so the export
    chooses on valid rather than blend at a hand edit's share."""
    x = "layout:xla:random"

    def shares(value: object) -> dict[str, dict[str, float]]:
        record = {"config": {}, "status": "SUCCESS", "info": {"blend_shares": value}}
        return trials_of([record])[0].blend_shares

    assert shares({"layout": {x: 0.03, "layout:nlp:default": 0}}) == {
        "layout": {x: 0.03, "layout:nlp:default": 0.0}
    }
    for bad in (None, [0.1], {"layout": 0.5}, {"layout": {x: 1.5}}, {"layout": {x: "0.1"}},
                {"layout": {x: float("nan")}}, {"layout": {x: True}}):  # fmt: skip
        assert shares(bad) == {}


def test_a_number_too_large_for_a_float_reads_as_none() -> None:
    """A hand-edited record: a JSON integer of 309 digits is no float, and no traceback."""
    huge = 10**400
    shares = {"layout": {"layout:xla:random": huge}}
    record = {"config": {}, "status": "SUCCESS", "score": huge, "info": {"blend_shares": shares}}
    (trial,) = trials_of([record])
    assert trial.score is None
    assert trial.blend_shares == {}
