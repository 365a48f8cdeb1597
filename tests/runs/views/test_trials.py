"""``hpo runs trials``: every trial of every kind of run as one row (hpo.runs.views.trials)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from toy_runs import KINDS, TWO, build_toy_runs

from hpo.cli import main
from hpo.runs.record.folder import read_trials
from hpo.runs.views.nested import load_any
from hpo.runs.views.trials import FIXED_COLUMNS, trial_table


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_toy_runs(tmp_path_factory.mktemp("trials"))


def _records(runs: Path, name: str) -> list[dict]:
    """The records of ``trials.jsonl`` of a run (a per-subset run: of each subset)."""
    folder = runs / name
    logs = (
        [folder / "trials.jsonl"]
        if (folder / "trials.jsonl").exists()
        else sorted(folder.glob("*/trials.jsonl"))
    )
    return [r for log in logs for r in read_trials(log)]


@pytest.mark.parametrize("name", list(KINDS))
def test_csv_parses_into_one_row_per_trial(
    runs: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "trials", name, "--runs-dir", str(runs), "--csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    records = _records(runs, name)
    assert len(rows) == len(records) > 0
    assert [int(r["trial"]) for r in rows] == [r["trial"] for r in records]
    assert list(rows[0])[: len(FIXED_COLUMNS)] == list(FIXED_COLUMNS)
    assert {f"metric.{c}" for c in TWO} <= set(rows[0])
    assert "config.learning_rate" in rows[0]
    ok = [r for r in rows if r["status"] == "SUCCESS"]
    assert ok
    assert all(float(r["score"]) <= 1.0 and r["start"] and r["worker"] for r in ok)


def test_rows_say_which_fold_and_which_subset(runs: Path) -> None:
    cv = trial_table(load_any("cv", runs))
    assert {r["fold"] for r in cv.rows} == {"fold0", "fold1"}
    subsets = trial_table(load_any("subsets", runs))
    assert {r["subset"] for r in subsets.rows} == {"tile-xla", "layout-xla-default"}
    assert all(set(r) == set(subsets.columns) for r in subsets.rows)


def test_json_and_table(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "trials", "single", "--runs-dir", str(runs), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(_records(runs, "single"))
    assert rows[0]["config.learning_rate"] == _records(runs, "single")[0]["config"]["learning_rate"]
    assert main(["runs", "trials", "single", "--runs-dir", str(runs)]) == 0
    assert "Trials of single" in capsys.readouterr().out


def test_csv_and_json_together_is_one_line(runs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "trials", "single", "--runs-dir", str(runs), "--csv", "--json"]) == 2
    assert "give --csv or --json, not both" in capsys.readouterr().err
