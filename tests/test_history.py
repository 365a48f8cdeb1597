"""Reading run folders; also home of :func:`build_fake_run`, used by the other run tests."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hpo.campaign import CampaignConfig, CampaignResult
from hpo.errors import ConfigError, UsageError
from hpo.history import list_runs, load_run
from hpo.runfolder import (
    data_fingerprint,
    package_versions,
    write_json_atomic,
)
from hpo.spaces import load_space, space_to_dict

FAKE_COLLECTIONS = (
    "tile:xla",
    "layout:xla:default",
    "layout:xla:random",
    "layout:nlp:default",
    "layout:nlp:random",
)
# (budget, status) per trial, in log order: hyperband-like with eta 3 and budgets 5/15/45.
FAKE_PLAN = (
    [(5.0, "SUCCESS")] * 5
    + [(5.0, "CRASHED")]
    + [(5.0, "SUCCESS")] * 4
    + [(15.0, "SUCCESS")] * 3
    + [(45.0, "SUCCESS")] * 2
)


def _score(config: dict[str, Any], budget: float) -> float:
    """A made-up validation score: best near learning_rate 0.1, better at higher budget."""
    import math

    lr = float(config["learning_rate"])
    return (
        0.6
        - 0.2 * math.log(lr / 0.1) ** 2
        + 0.05 * math.log(budget / 5.0)
        + (0.02 if config["relative_features"] else 0.0)
    )


def build_fake_run(
    runs_dir: Path,
    data_root: Path,
    *,
    name: str = "fake",
    collections: tuple[str, ...] = FAKE_COLLECTIONS,
    finished: bool = True,
    optimizer: str = "hyperband",
    seed: int = 0,
    duplicate_and_truncate: bool = True,
) -> Path:
    """Write a realistic run folder as ``hpo run`` would, without running SMAC.

    Configs come from the ``lambdarank_small`` space; budgets are boosting rounds 5/15/45;
    trial 6 crashed with a traceback; the last two trials re-evaluate the configs of the best
    budget-15 trials at budget 45. With ``duplicate_and_truncate``, ``trials.jsonl`` also
    holds a repeated record and a truncated last line (as after ``kill -9``).
    """
    cfg = CampaignConfig(
        data_root=data_root,
        name=name,
        collections=collections,
        space="lambdarank_small",
        runs_dir=runs_dir,
        trials=len(FAKE_PLAN),
        optimizer=optimizer,
        min_budget=5.0,
        max_budget=45.0,
        seed=seed,
        cache_dir=runs_dir / ".cache",
    )
    run_dir = runs_dir / name
    run_dir.mkdir(parents=True)
    space = load_space("lambdarank_small", seed=seed)
    created = time.time() - 3600.0
    write_json_atomic(
        run_dir / "campaign.json",
        {
            "format": 1,
            "config": cfg.to_dict(),
            "space": space_to_dict(space),
            "data_fingerprint": data_fingerprint(data_root, collections),
            "versions": package_versions(),
            "created": created,
        },
    )
    configs = [dict(c) for c in space.sample_configuration(10)]
    configs = [{k: (v.item() if hasattr(v, "item") else v) for k, v in c.items()} for c in configs]
    low = sorted(range(10), key=lambda i: -_score(configs[i], 5.0))
    plan_configs = list(range(10)) + low[:3] + low[:2]
    records: list[dict[str, Any]] = []
    clock = created + 20.0
    for i, ((budget, status), ci) in enumerate(zip(FAKE_PLAN, plan_configs, strict=True)):
        config = configs[ci]
        duration = 2.0 * budget / 5.0
        ok = status == "SUCCESS"
        value = _score(config, budget)
        score = value if ok else None
        metrics = {c: value - 0.01 * j for j, c in enumerate(collections)} if ok else {}
        records.append(
            {
                "trial": i + 1,
                "config_id": ci + 1,
                "config": config,
                "budget": budget,
                "seed": seed,
                "status": status,
                "cost": 1.0 - value if ok else 10.0,
                "score": score,
                "metrics": metrics,
                "start": clock,
                "end": clock + duration,
                "duration": duration,
                "worker": f"{socket.gethostname()}:1234",
                "error": None
                if ok
                else 'Traceback (most recent call last):\n  File "x.py"\n'
                "lightgbm.basic.LightGBMError: Check failed: num_leaves > 1",
                "info": {"train_seconds": duration} if ok else {},
            }
        )
        clock += duration + 1.0
    lines = [json.dumps(r) for r in records]
    if duplicate_and_truncate:
        lines.insert(3, lines[2])  # a trial logged twice
    text = "\n".join(lines) + "\n"
    if duplicate_and_truncate:
        text += lines[-1][: len(lines[-1]) // 2]  # cut by kill -9 while appending
    (run_dir / "trials.jsonl").write_text(text)
    if finished:
        best = max((r for r in records if r["budget"] == 45.0), key=lambda r: r["score"])
        result = CampaignResult(
            run_dir=run_dir,
            incumbent=best["config"],
            trial=best["trial"],
            cost=best["cost"],
            score=best["score"],
            metrics=best["metrics"],
            budget=best["budget"],
            n_trials=len(records),
            n_crashed=1,
            finished=clock,
        )
        write_json_atomic(run_dir / "result.json", result.to_dict())
    return run_dir


@pytest.fixture
def runs_dir(tmp_path: Path, tiny_root: Path) -> Path:
    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root, name="fake")
    return runs


def test_load_run_settings_and_trials(runs_dir: Path) -> None:
    run = load_run("fake", runs_dir)
    assert run.name == "fake"
    assert run.state == "finished"
    assert run.optimizer == "hyperband"
    assert run.collections == FAKE_COLLECTIONS
    assert run.settings["max_budget"] == 45.0
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


def test_incumbent_prefers_result_json(runs_dir: Path) -> None:
    run = load_run("fake", runs_dir)
    other = next(t for t in run.successful if t.budget == 15.0)
    result_file = runs_dir / "fake" / "result.json"
    result = json.loads(result_file.read_text())
    result.update(incumbent=other.config, trial=other.trial, budget=15.0, score=other.score)
    result_file.write_text(json.dumps(result))
    inc = load_run("fake", runs_dir).incumbent
    assert inc is not None
    assert inc.trial == other.trial


def test_incumbent_ignores_better_low_budget_scores(tmp_path: Path, tiny_root: Path) -> None:
    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root, finished=False)
    path = runs / "fake" / "trials.jsonl"
    lines = path.read_text().splitlines()[:-1]
    hot = json.loads(lines[0]) | {"trial": 99, "score": 5.0, "budget": 5.0, "seed": 7}
    path.write_text("\n".join([*lines, json.dumps(hot)]) + "\n")
    run = load_run("fake", runs)
    inc = run.incumbent
    assert inc is not None
    assert inc.budget == 45.0
    assert run.trajectory()[-1].score == 5.0  # the any-time curve does see it


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
    lock = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
    (runs_dir / "fake" / "lock.json").write_text(json.dumps(lock))
    assert load_run("fake", runs_dir).state == "running"


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


def test_load_run_by_path(runs_dir: Path) -> None:
    assert load_run(runs_dir / "fake").name == "fake"
