"""Reading run folders: settings, trials, state, incumbent, trajectory, listing."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_runs import FAKE_COLLECTIONS, build_fake_run

from hpo.errors import ConfigError, UsageError
from hpo.runs.record.folder import RunLock
from hpo.runs.views.history import load_run
from hpo.runs.views.nested import list_runs


@pytest.fixture
def runs_dir(tmp_path: Path, tiny_root: Path) -> Path:
    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root, name="fake")
    return runs


def test_load_run_settings_and_trials(runs_dir: Path) -> None:
    run = load_run("fake", runs_dir)
    assert run.name == "fake"
    assert run.state == "finished"
    assert run.optimizer == "random-hb"  # the fake run's campaign.json has the legacy name
    assert run.collections == FAKE_COLLECTIONS
    assert run.settings.max_budget == 45.0
    assert run.space is not None
    # 15 trials: the duplicate line is dropped, the truncated last line is ignored
    assert [t.trial for t in run.trials] == list(range(1, 16))
    assert run.trials_per_budget() == {
        5.0: {"total": 10, "success": 9, "failed": 1},
        15.0: {"total": 3, "success": 3, "failed": 0},
        45.0: {"total": 2, "success": 2, "failed": 0},
    }


def test_crashed_trials_keep_their_error(runs_dir: Path) -> None:
    run = load_run("fake", runs_dir)
    assert [t.trial for t in run.crashed] == [6]
    assert run.crashed[0].status == "CRASHED"
    assert run.crashed[0].error_line == "lightgbm.basic.LightGBMError: Check failed: num_leaves > 1"


def test_incumbent_is_best_at_highest_budget(runs_dir: Path, tmp_path: Path) -> None:
    run = load_run("fake", runs_dir)
    inc = run.incumbent
    assert inc is not None
    assert inc.budget == 45.0
    at_top = [t for t in run.successful if t.budget == 45.0]
    assert inc.score == max(t.score or 0.0 for t in at_top)
    # the same trial is found by the rule alone (result.json removed)
    (runs_dir / "fake" / "result.json").unlink()
    again = load_run("fake", runs_dir)
    assert again.state == "interrupted"
    assert again.incumbent is not None
    assert again.incumbent.trial == inc.trial


def test_incumbent_prefers_result_json_at_the_highest_budget(runs_dir: Path) -> None:
    run = load_run("fake", runs_dir)
    inc = run.incumbent
    assert inc is not None
    runner_up = next(t for t in run.successful if t.budget == 45.0 and t.trial != inc.trial)
    result_file = runs_dir / "fake" / "result.json"
    result = json.loads(result_file.read_text())
    result.update(incumbent=runner_up.config, trial=runner_up.trial, budget=45.0)
    result_file.write_text(json.dumps(result))
    named = load_run("fake", runs_dir).incumbent
    assert named is not None
    assert named.trial == runner_up.trial  # SMAC's choice settles it at the top budget


def test_result_json_below_the_highest_budget_is_ignored(runs_dir: Path) -> None:
    # a stale result.json (a campaign resumed after it, then interrupted) must not name a
    # trial of a lower budget than the log reached: the rule holds
    run = load_run("fake", runs_dir)
    inc = run.incumbent
    assert inc is not None
    other = next(t for t in run.successful if t.budget == 15.0)
    result_file = runs_dir / "fake" / "result.json"
    result = json.loads(result_file.read_text())
    result.update(incumbent=other.config, trial=other.trial, budget=15.0, score=other.score)
    result_file.write_text(json.dumps(result))
    again = load_run("fake", runs_dir).incumbent
    assert again is not None
    assert again.trial == inc.trial


def test_incumbent_ignores_better_low_budget_scores(tmp_path: Path, tiny_root: Path) -> None:
    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root, finished=False)
    path = runs / "fake" / "trials.jsonl"
    lines = path.read_text().splitlines()[:-1]
    hot = json.loads(lines[0]) | {"trial": 99, "score": 0.99, "budget": 5.0, "seed": 7}
    path.write_text("\n".join([*lines, json.dumps(hot)]) + "\n")
    run = load_run("fake", runs)
    inc = run.incumbent
    assert inc is not None
    assert inc.budget == 45.0
    assert run.trajectory()[-1].score == 0.99  # the any-budget curve does see it
    # ... the incumbent's curve (runs plot, runs compare) does not: it ends where list/show do
    curve = run.incumbent_trajectory()
    assert (curve[-1].trial, curve[-1].score) == (inc.trial, inc.score)
    budgets = [p.budget or 0.0 for p in curve]
    assert budgets == sorted(budgets)


def test_trajectory_is_increasing_and_timed(runs_dir: Path) -> None:
    run = load_run("fake", runs_dir)
    traj = run.trajectory()
    assert traj
    scores = [p.score for p in traj]
    assert scores == sorted(scores)
    assert len(set(scores)) == len(scores)
    times = [p.elapsed for p in traj]
    assert times == sorted(times)
    assert times[0] >= 20.0
    assert traj[-1].score == max(t.score for t in run.successful if t.score is not None)


def test_top_configs_are_distinct_and_led_by_incumbent(runs_dir: Path) -> None:
    run = load_run("fake", runs_dir)
    top = run.top(4)
    assert len(top) == 4
    assert len({json.dumps(t.config, sort_keys=True) for t in top}) == 4
    assert run.incumbent is not None
    assert top[0].trial == run.incumbent.trial
    budgets = [t.budget or 0.0 for t in top]
    assert budgets == sorted(budgets, reverse=True)


def test_state_running_from_live_lock(runs_dir: Path) -> None:
    with RunLock(runs_dir / "fake"):
        assert load_run("fake", runs_dir).state == "running"
    assert load_run("fake", runs_dir).state == "finished"


def test_state_interrupted_from_stale_lock(tmp_path: Path, tiny_root: Path) -> None:
    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root, finished=False)
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = {"pid": int(proc.stdout), "host": socket.gethostname(), "started": time.time()}
    (runs / "fake" / "lock.json").write_text(json.dumps(dead))
    assert load_run("fake", runs).state == "interrupted"


def test_list_runs(tmp_path: Path, tiny_root: Path) -> None:
    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root, name="a")
    build_fake_run(runs, tiny_root, name="b", finished=False, optimizer="bo")
    (runs / "broken").mkdir()
    (runs / "broken" / "campaign.json").write_text("{not json")
    (runs / "not-a-run").mkdir()
    rows = {r.name: r for r in list_runs(runs)}
    assert set(rows) == {"a", "b", "broken"}
    assert rows["a"].state == "finished"
    assert rows["a"].n_trials == 15
    assert rows["a"].n_failed == 1
    assert rows["b"].optimizer == "bo"
    assert rows["b"].state == "interrupted"
    assert rows["broken"].problem is not None
    assert "not valid JSON" in rows["broken"].problem
    assert list_runs(tmp_path / "nowhere") == []


def test_missing_run_is_one_clear_line(runs_dir: Path) -> None:
    with pytest.raises(UsageError, match=r"^no run 'nope' in .*runs \(runs there: fake\)$"):
        load_run("nope", runs_dir)


def test_corrupt_middle_line_is_an_error(runs_dir: Path) -> None:
    path = runs_dir / "fake" / "trials.jsonl"
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:10]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError, match=r"trials\.jsonl: line 2 is not valid JSON"):
        load_run("fake", runs_dir)


def _edit_campaign(folder: Path, **settings: object) -> Path:
    path = folder / "campaign.json"
    campaign = json.loads(path.read_text())
    campaign["config"].update(settings)
    path.write_text(json.dumps(campaign))
    return path


def test_budgets_edited_in_campaign_json_are_refused(runs_dir: Path) -> None:
    """``max_budget`` edited from 45 to 672 once showed as the run's fidelity range, no trial
    above 45 (probe2 #51): SMAC's saved scenario gives it away."""
    folder = runs_dir / "fake"
    scenario = folder / "smac" / "0" / "scenario.json"
    scenario.parent.mkdir(parents=True)
    scenario.write_text(json.dumps({"min_budget": 5.0, "max_budget": 45.0, "n_trials": 15}))
    assert load_run("fake", runs_dir).settings.max_budget == 45.0
    path = _edit_campaign(folder, max_budget=672)
    with pytest.raises(
        ConfigError,
        match=rf"^{path}: max_budget 672 differs from SMAC's saved scenario \({scenario}: 45\); "
        "the file was edited: restore it$",
    ):
        load_run("fake", runs_dir)
    _edit_campaign(folder, max_budget=45.0, min_budget=4)
    with pytest.raises(ConfigError, match=rf"^{path}: min_budget 4 differs from SMAC's saved"):
        load_run("fake", runs_dir)


def test_load_run_by_path(runs_dir: Path) -> None:
    assert load_run(runs_dir / "fake").name == "fake"


def test_a_resumed_run_is_timed_without_its_idle_time(tmp_path: Path, tiny_root: Path) -> None:
    runs = tmp_path / "runs"
    folder = build_fake_run(runs, tiny_root, name="ext", duplicate_and_truncate=False)
    before = load_run("ext", runs)
    times = [before.elapsed(t.end) for t in before.trials]
    trajectory = before.incumbent_trajectory()
    # the same trials, run as 5 then resumed 1,000 s after the fifth ended
    lines = (folder / "trials.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    end5 = records[4]["end"]
    for r in records[5:]:
        r["start"] += 1000.0
        r["end"] += 1000.0
    (folder / "trials.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    campaign = json.loads((folder / "campaign.json").read_text())
    campaign["resumes"] = [{"at": end5 + 1000.0, "records": 5}]
    (folder / "campaign.json").write_text(json.dumps(campaign))
    after = load_run("ext", runs)
    assert [after.elapsed(t.end) for t in after.trials] == pytest.approx(times)
    got = after.incumbent_trajectory()
    assert [p.elapsed for p in got] == pytest.approx([p.elapsed for p in trajectory])
    assert [p.trial for p in got] == [p.trial for p in trajectory]
    assert after.elapsed(end5 + 500.0) == pytest.approx(after.elapsed(end5))  # idle: no time
    # a second resume with no trial between (a start-up that failed): the span counts once
    campaign["resumes"] = [{"at": end5 + 400.0, "records": 5}, *campaign["resumes"]]
    (folder / "campaign.json").write_text(json.dumps(campaign))
    twice = load_run("ext", runs)
    assert [twice.elapsed(t.end) for t in twice.trials] == pytest.approx(times)
    del campaign["resumes"]  # the same folder read as one campaign: the gap counts
    (folder / "campaign.json").write_text(json.dumps(campaign))
    plain = load_run("ext", runs)
    assert plain.elapsed(records[-1]["end"]) == pytest.approx(times[-1] + 1000.0)
