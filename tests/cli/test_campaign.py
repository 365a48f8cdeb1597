"""Tests of ``hpo run`` (hpo/cli/campaign.py) through ``hpo.cli.main``.

The objective builder is replaced by a toy objective, except in the one slow end-to-end test
on a tiny generated dataset with the real LightGBM objective.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from graphs import write_toy_root
from toy_objectives import ToyObjective, always_crash

import hpo.campaign.objective
from hpo.cli import main
from hpo.cli.campaign import default_run_name, parse_duration
from hpo.runs.record.folder import read_trials


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    return write_toy_root(tmp_path / "data")


@pytest.fixture
def toy_builder(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Make ``build_objective`` return a toy objective; the list records the configs given."""
    seen: list[Any] = []

    def build(cfg: Any, progress: Any = None, **_: Any) -> tuple[Any, None]:
        seen.append(cfg)
        return ToyObjective(), None

    monkeypatch.setattr(hpo.campaign.objective, "build_objective", build)
    return seen


def _argv(data_root: Path, runs: Path, *extra: str) -> list[str]:
    return [
        "run", "--data", str(data_root), "--runs-dir", str(runs), "--collection", "tile",
        "--space", "lambdarank_small", "--min-budget", "1", "--max-budget", "27", "--quiet",
        *extra,
    ]  # fmt: skip


def test_run_then_refuse_then_resume(
    data_root: Path, tmp_path: Path, toy_builder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    # --n-init 5: a larger initial design than SMAC's spares most acquisition searches
    argv = _argv(data_root, runs, "--name", "demo", "--trials", "6", "--seed", "4", "--n-init", "5")
    assert main([*argv, "--random-prob", "0.3", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "incumbent: " in out
    assert f"run folder: {runs.absolute() / 'demo'}" in out
    assert len(read_trials(runs / "demo" / "trials.jsonl")) == 6
    cfg = toy_builder[0]
    assert (cfg.collections, cfg.trials, cfg.seed, cfg.optimizer) == (
        ("tile:xla",),
        6,
        4,
        "model-hb",
    )
    assert (cfg.n_init, cfg.random_prob, cfg.threads) == (5, 0.3, 1)

    assert main(_argv(data_root, runs, "--name", "demo", "--trials", "6")) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "hpo: error: run 'demo' already exists" in err

    resume = ["run", "--runs-dir", str(runs), "--resume", "demo", "--quiet"]
    assert main(resume) == 0
    assert "campaign 'demo' has already finished" in capsys.readouterr().out
    assert main([*resume, "--seed", "5"]) == 2
    err = capsys.readouterr().err
    assert "takes every setting from the run folder (but --trials and --walltime" in err
    assert err.strip().endswith("drop --seed")
    assert main([*resume, "--trials", "12"]) == 0  # extends the finished campaign
    assert "campaign 'demo' extended: trials 6 -> 12" in capsys.readouterr().out
    assert 6 < len(read_trials(runs / "demo" / "trials.jsonl")) <= 12
    assert main([*resume, "--trials", "7"]) == 2
    assert "--trials 7: campaign 'demo' already has trials 12" in capsys.readouterr().err

    argv = _argv(data_root, runs, "--name", "demo", "--trials", "4", "--n-init", "3")
    assert main([*argv, "--overwrite"]) == 0
    assert len(read_trials(runs / "demo" / "trials.jsonl")) == 4
    moved = data_root.parent / "moved"
    data_root.rename(moved)  # a moved data root: --data says where, its files are the run's
    assert main([*resume, "--data", str(moved)]) == 0
    assert f"data root moved: {data_root.absolute()} -> {moved}" in capsys.readouterr().out


def test_warm_start_reaches_the_campaign(
    data_root: Path, tmp_path: Path, toy_builder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    assert main(_argv(data_root, runs, "--name", "old", "--trials", "8")) == 0
    argv = _argv(data_root, runs, "--name", "new", "--trials", "8", "--optimizer", "bo")
    capsys.readouterr()
    assert main([*argv, "--warm-start", "old", str(runs / "old")]) == 0
    record = json.loads((runs / "new" / "campaign.json").read_text())["warm_start"]
    # the toy objective's best is the default: the label says so wherever it is shown
    assert record["baseline_is_default"] is True
    origin = "warm start: best of old = the default configuration"
    assert f"baseline ({origin}, budget" in capsys.readouterr().out
    assert main(["runs", "show", "new", "--runs-dir", str(runs)]) == 0
    shown = " ".join(capsys.readouterr().out.split())  # the table's title wraps
    assert f"Baseline: {origin} (trial 1" in shown
    assert main(["runs", "show", "new", "--runs-dir", str(runs), "--json"]) == 0
    baseline = json.loads(capsys.readouterr().out)["baseline"]
    assert (baseline["origin"], baseline["baseline_run"], baseline["is_default"]) == (
        origin,
        "old",
        True,
    )
    assert [s["run"] for s in record["sources"]] == ["old", "old"]
    # the source's best is the baseline, the others (and the default, unless it is the
    # baseline) run after it
    assert record["sources"][0]["configs"] > 1
    assert record["configs"]
    assert record["baseline"] not in record["configs"]
    assert record["baseline"] is not None
    assert record["baseline_run"] == "old"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run"], "hpo: error: --data ROOT is required (unless --resume NAME)"),
        (["run", "--resume", "demo", "--eta", "5"], "drop --eta"),
        (["run", "--resume", "nope"], "hpo: error: no run 'nope' in"),
        (["run", "--data", "DATA", "--collection", "tiles"], "unknown collection 'tiles'"),
        (["run", "--data", "DATA", "--space", "nope"], "unknown search space 'nope'"),
        (["run", "--data", "DATA", "--eta", "1"], "'eta': expected an integer >= 2"),
        (["run", "--data", "DATA", "--name", "a/b"], "'name': expected 1-100 letters"),
        (["run", "--data", "DATA", "--cv", "1"], "campaign setting 'cv': expected 0 (score"),
        (["run", "--data", "DATA", "--cv", "-1"], "campaign setting 'cv': expected 0 (score"),
        (["run", "--data", "DATA", "--finish", "-1"], "'finish': expected an integer >= 0"),
        (["run", "--data", "MISSING"], "missing: no train data for any of tile:xla, layout"),
        (["run", "--data", "DATA", "--collection", "all,layout:xla:default"], "no layout:xla:de"),
        (["run", "--data", "DATA", "--warm-start", "nope"], "hpo: error: no run 'nope' in"),
        (["run", "--resume", "a", "--warm-start", "b"], "--warm-start seeds a new campaign"),
        (["run", "--data", "DATA", "--worker-processes"], "2 or more 'workers' (found 1)"),
    ],
)
def test_errors_are_one_line(
    argv: list[str],
    message: str,
    data_root: Path,
    tmp_path: Path,
    toy_builder: list[Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [a.replace("MISSING", str(tmp_path / "missing")) for a in argv]
    argv = [a.replace("DATA", str(data_root)) for a in argv]
    assert main([*argv, "--runs-dir", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1


def test_all_runs_the_collections_the_root_holds(
    data_root: Path, tmp_path: Path, toy_builder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    # the root holds tile:xla only, as the real fixtures hold two of the five collections
    runs = tmp_path / "runs"
    argv = [a if a != "tile" else "all" for a in _argv(data_root, runs, "--trials", "2")]
    assert main([*argv, "--optimizer", "random", "--name", "a"]) == 0
    assert toy_builder[0].collections == ("tile:xla",)
    note = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert note[0] == (
        f"note: {data_root} has no train data for layout:xla:default, layout:xla:random, "
        "layout:nlp:default, layout:nlp:random; running tile:xla"
    )
    # and the summary's: which limit ended the campaign (then, maybe, why nothing was gained)
    assert note[1].startswith("note: ended by --trials 2 ("), note
    assert json.loads((runs / "a" / "campaign.json").read_text())["config"]["collections"] == [
        "tile:xla"
    ]


def test_all_trials_crashing_exits_1(
    data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        hpo.campaign.objective, "build_objective", lambda cfg, progress: (always_crash, None)
    )
    assert main(_argv(data_root, tmp_path / "runs", "--trials", "3", "--name", "bad")) == 1


def test_the_walltime_cuts_a_trial_that_would_run_without_end(
    data_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--max-budget 1000000 with --walltime 2: the first trial is cut at the walltime and
    its grace (no grace here), recorded as crashed with the reason, and the campaign ends,
    its summary saying that the walltime, not a bug, left it without a finished trial."""
    monkeypatch.setattr(hpo.campaign.objective, "DEADLINE_GRACE", 0.0)
    argv = _argv(data_root, tmp_path / "runs", "--trials", "3", "--name", "cut")
    argv[argv.index("--max-budget") + 1] = "1000000"
    started = time.monotonic()
    assert main([*argv, "--walltime", "2"]) == 1  # no trial finished: no incumbent
    assert time.monotonic() - started < 120
    records = [json.loads(line) for line in (tmp_path / "runs/cut/trials.jsonl").open()]
    assert records
    assert all(r["status"] == "CRASHED" for r in records)
    assert "the campaign's walltime (and its grace) ran out" in records[0]["error"]
    out = capsys.readouterr().out.splitlines()
    notes = [ln for ln in out if ln.startswith("note: every trial was cut by the walltime")]
    assert len(notes) == 1
    assert "stopped at boosting round" in notes[0]


def test_default_name_comes_from_the_time(
    data_root: Path, tmp_path: Path, toy_builder: list[Any]
) -> None:
    runs = tmp_path / "runs"
    assert main(_argv(data_root, runs, "--trials", "2", "--optimizer", "random")) == 0
    assert toy_builder[0].name.endswith("-random")
    assert [p.name for p in runs.iterdir()] == [toy_builder[0].name]


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("3600", 3600.0), ("90s", 90.0), ("45m", 2700.0), ("2h", 7200.0), ("1h30m", 5400.0),
     ("1d", 86400.0), ("0.5h", 1800.0)],
)  # fmt: skip
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "10x", "0", "h"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=r"invalid duration"):
        parse_duration(text)


def test_bad_walltime_is_an_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match=r"2"):
        main(["run", "--data", "x", "--walltime", "soon"])
    assert "invalid duration 'soon'" in capsys.readouterr().err


def test_a_walltime_starting_with_a_dash_is_read_as_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """probe2 #23: argparse said "expected one argument" of ``--walltime -5m``."""
    with pytest.raises(SystemExit, match=r"2"):
        main(["run", "--data", "x", "--walltime", "-5m"])
    assert "invalid duration '-5m'" in capsys.readouterr().err


def test_default_run_name() -> None:
    assert default_run_name("bo").endswith("-bo")


@pytest.mark.slow
def test_end_to_end_with_the_real_objective(
    tiny_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    argv = [
        "run", "--data", str(tiny_root), "--runs-dir", str(runs), "--name", "e2e",
        "--space", "lambdarank_small", "--trials", "5", "--min-budget", "5",
        "--max-budget", "45", "--cache-dir", str(tmp_path / "cache"), "--quiet",
    ]  # fmt: skip
    assert main(argv) == 0
    records = read_trials(runs / "e2e" / "trials.jsonl")
    assert len(records) == 5
    assert all(r["status"] == "SUCCESS" for r in records)
    result = json.loads((runs / "e2e" / "result.json").read_text())
    assert set(result["metrics"]) == {
        "tile:xla", "layout:xla:default", "layout:xla:random", "layout:nlp:default",
        "layout:nlp:random",
    }  # fmt: skip


def test_cv_flag_reaches_the_campaign_and_its_subsets(
    data_root: Path, tmp_path: Path, toy_builder: list[Any]
) -> None:
    runs = tmp_path / "runs"
    argv = _argv(data_root, runs, "--name", "cv", "--trials", "4", "--cv", "2")
    assert main([*argv, "--optimizer", "random", "--per", "collection"]) == 0
    assert [cfg.cv for cfg in toy_builder] == [2]
    records = read_trials(runs / "cv" / "tile-xla" / "trials.jsonl")
    assert {r["instance"] for r in records} == {"fold0", "fold1"}


def test_finish_flag_reaches_the_campaign(
    data_root: Path, tmp_path: Path, toy_builder: list[Any]
) -> None:
    runs = tmp_path / "runs"
    assert main(_argv(data_root, runs, "--name", "f", "--trials", "4", "--finish", "0")) == 0
    assert [cfg.finish for cfg in toy_builder] == [0]
    assert json.loads((runs / "f" / "campaign.json").read_text())["config"]["finish"] == 0


def test_resume_follows_the_folder_given(
    data_root: Path, tmp_path: Path, toy_builder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """A copied or renamed run folder resumes in place, never in the folder it came from."""
    import shutil

    runs = tmp_path / "runs"
    assert main(_argv(data_root, runs, "--name", "a", "--trials", "3", "--n-init", "3")) == 0
    shutil.copytree(runs / "a", runs / "b")
    (runs / "a").rename(runs / "c")
    capsys.readouterr()
    for name in ("b", "c"):
        assert main(["run", "--runs-dir", str(runs), "--resume", name, "--quiet"]) == 0
        assert f"campaign '{name}' has already finished" in capsys.readouterr().out
    assert sorted(p.name for p in runs.iterdir()) == ["b", "c"]  # no 'a' made again


def test_a_run_refused_before_its_first_trial_leaves_no_folder(
    data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toy_builder: list[Any]
) -> None:
    from hpo.errors import DataFormatError

    def refuse(cfg: Any, progress: Any = None) -> Any:
        raise DataFormatError(f"{data_root}/g.npz: key 'node_feat': bad")

    monkeypatch.setattr(hpo.campaign.objective, "build_objective", refuse)
    runs = tmp_path / "runs"
    assert main(_argv(data_root, runs, "--name", "v", "--trials", "3")) == 2
    assert not (runs / "v").exists()
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        hpo.campaign.objective, "build_objective", lambda c, p=None: (ToyObjective(), None)
    )
    assert main(_argv(data_root, runs, "--name", "v", "--trials", "3", "--n-init", "3")) == 0


def _with_bad_layout(tiny_root: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the tiny dataset whose first layout:xla:default train file holds a 9."""
    import shutil

    import numpy as np

    root = tmp_path / "bad_root"
    shutil.copytree(tiny_root, root)
    path = sorted((root / "npz/layout/xla/default/train").glob("*.npz"))[0]
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["node_config_feat"] = arrays["node_config_feat"].copy()
    arrays["node_config_feat"][1, 0, 0] = 9
    np.savez(path, **arrays)
    return root, path


@pytest.mark.parametrize("per", ["none", "collection"])
def test_bad_data_is_refused_by_run_as_by_data_check(
    tiny_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], per: str
) -> None:
    """The validator data check uses stops ``hpo run`` with the same line, before any trial,
    and leaves no run folder (the same --name works once the data is fixed)."""
    root, path = _with_bad_layout(tiny_root, tmp_path)
    assert main(["data", "check", str(root)]) == 1
    found = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("hpo: bad file: ")]
    assert found == [
        f"hpo: bad file: {path}: key 'node_config_feat': expected dimension indices in -1..5, "
        "found 9 in config 1"
    ]
    runs = tmp_path / "runs"
    argv = ["run", "--data", str(root), "--runs-dir", str(runs), "--name", "r", "--per", per]
    collections = "tile,layout:xla:default" if per == "none" else "layout:xla:default"
    argv += ["--collection", collections, "--cache-dir", str(tmp_path / "c")]
    assert main([*argv, "--trials", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == "hpo: error: " + found[0].removeprefix("hpo: bad file: ") + "\n"
    assert not runs.exists() or not any(runs.iterdir())


def test_a_space_setting_rounds_is_refused_by_run(
    data_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpo.ranking.spaces import load_space, space_to_dict

    data = space_to_dict(load_space("lambdarank_small"))
    hp = next(h for h in data["hyperparameters"] if h["name"] == "num_leaves")
    hp["name"] = "num_iterations"
    space = tmp_path / "space.json"
    space.write_text(json.dumps(data))
    runs = tmp_path / "runs"
    argv = ["run", "--data", str(data_root), "--runs-dir", str(runs), "--space", str(space)]
    assert main([*argv, "--collection", "tile", "--name", "s", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"hpo: error: {space}: hyperparameter 'num_iterations' is set by hpo")
    assert err.count("\n") == 1
    assert not runs.exists()


@pytest.mark.slow
def test_two_workers_load_the_datasets_binned_ahead(
    tiny_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With several workers the Datasets are binned once, before the workers start: the
    workers' trials write no Dataset of their own."""
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    argv = [
        "run", "--data", str(tiny_root), "--runs-dir", str(runs), "--name", "w2",
        "--space", "lambdarank", "--trials", "6", "--min-budget", "2", "--max-budget", "8",
        "--cache-dir", str(cache), "--workers", "2", "--finish", "0",
    ]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "binned Datasets: 6 built, 0 found" in out  # 2 families x 3 max_bin choices
    records = read_trials(runs / "w2" / "trials.jsonl")
    assert len(records) == 6
    assert all(r["status"] == "SUCCESS" for r in records)
    assert len({r["worker"] for r in records}) == 2
    assert len(list((cache / "datasets").glob("*.bin"))) == 6  # none built by a worker


# --- run --overwrite deletes only a run folder hpo wrote ----------------------------------------


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_overwrite_refuses_the_data_root(
    data_root: Path, tmp_path: Path, toy_builder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _files(data_root)
    argv = _argv(data_root, data_root.parent, "--name", data_root.name, "--overwrite")
    assert main(argv) == 2
    assert "is the data root" in capsys.readouterr().err
    assert _files(data_root) == before


def test_overwrite_refuses_a_folder_holding_the_data_root(
    data_root: Path, tmp_path: Path, toy_builder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _files(tmp_path)
    argv = _argv(data_root, tmp_path.parent, "--name", tmp_path.name, "--overwrite")
    assert main(argv) == 2
    assert "holds the data root" in capsys.readouterr().err
    assert _files(tmp_path) == before


def test_overwrite_refuses_the_working_directory(
    data_root: Path,
    tmp_path: Path,
    toy_builder: list[Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = tmp_path / "runs"
    cache = str(tmp_path / "cache")
    argv = _argv(data_root, runs, "--name", "here", "--trials", "2", "--cache-dir", cache)
    assert main(argv) == 0  # a real run, so only the working-directory rule can refuse
    (runs / "here" / "notes.txt").write_text("mine")
    monkeypatch.chdir(runs / "here")
    assert main([*argv, "--overwrite"]) == 2
    assert "is the working directory" in capsys.readouterr().err
    assert (runs / "here" / "notes.txt").read_text() == "mine"


def test_overwrite_refuses_a_folder_that_is_not_a_run(
    data_root: Path, tmp_path: Path, toy_builder: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    stuff = tmp_path / "runs" / "stuff"
    stuff.mkdir(parents=True)
    (stuff / "keep.txt").write_text("mine")
    assert main(_argv(data_root, tmp_path / "runs", "--name", "stuff", "--overwrite")) == 2
    assert "is not a run folder hpo wrote" in capsys.readouterr().err
    assert (stuff / "keep.txt").read_text() == "mine"


@pytest.mark.parametrize("target_is_run", [True, False])
def test_overwrite_never_follows_a_symlink(
    data_root: Path,
    tmp_path: Path,
    toy_builder: list[Any],
    capsys: pytest.CaptureFixture[str],
    target_is_run: bool,
) -> None:
    runs = tmp_path / "runs"
    if target_is_run:
        assert main(_argv(data_root, runs, "--name", "real", "--trials", "2")) == 0
        target = runs / "real"
    else:
        target = tmp_path / "plain"
        target.mkdir()
        (target / "keep.txt").write_text("mine")
    before = _files(target)
    runs.mkdir(exist_ok=True)
    (runs / "link").symlink_to(target, target_is_directory=True)
    assert main(_argv(data_root, runs, "--name", "link", "--overwrite")) == 2
    assert "is a symlink" in capsys.readouterr().err
    assert _files(target) == before


# --- stated bounds ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--seed", "4294967296"), r"'seed': expected an integer in \[0, 4294967295\]"),
        (("--max-budget", "1e12"), r"'max_budget': expected a budget of at most 1,000,000"),
        (("--workers", "300"), r"--workers 300: at most \d+ on this machine"),
        # probe 33: LightGBM's OpenMP segfaulted and left the run's lock
        (("--threads", "100000"), r"--threads 100000: expected 1 to \d+, the cores of this"),
        (("--threads", "0"), r"'threads': expected an integer >= 1"),
        (
            ("--threads", "1025", "--dask-scheduler", "tcp://127.0.0.1:9"),
            r"--threads 1025: at most 1024 per trial on a Dask scheduler's workers",
        ),
    ],
)
def test_settings_beyond_their_bounds_are_refused_before_any_folder(
    data_root: Path,
    tmp_path: Path,
    toy_builder: list[Any],
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
    message: str,
) -> None:
    """--seed 2^32 crashed and left a run folder; --workers 300 hung before any trial."""
    runs = tmp_path / "runs"
    assert main([*_argv(data_root, runs, "--name", "x"), *extra]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err)
    assert err.count("\n") == 1
    assert not (runs / "x").exists()


def test_a_resume_may_change_the_threads(
    data_root: Path,
    tmp_path: Path,
    toy_builder: list[Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Probe 33: ``--resume thr --threads 2`` was refused ("drop --threads"), so a run
    started with more threads than a machine has could not be resumed there. Threads change
    no result (LightGBM runs deterministic=True: test_threads_change_no_score), so a resume
    takes them for its session; campaign.json keeps the saved value."""
    runs = tmp_path / "runs"
    argv = _argv(data_root, runs, "--name", "thr", "--trials", "4", "--n-init", "3")
    assert main([*argv, "--threads", "1"]) == 0
    resume = ["run", "--runs-dir", str(runs), "--resume", "thr", "--quiet", "--threads", "2"]
    assert main([*resume, "--trials", "8"]) == 0
    out = capsys.readouterr().out
    assert "threads 2 for this session (saved: 1); results do not change" in out
    assert toy_builder[-1].threads == 2
    saved = json.loads((runs / "thr" / "campaign.json").read_text())
    assert (saved["config"]["threads"], saved["config"]["trials"]) == (1, 8)
    assert main([*resume[:-1], "100000"]) == 2
    assert "--threads 100000: expected 1 to" in capsys.readouterr().err


# --- stdout that goes away ----------------------------------------------------------------


def _child(*argv: str, script: str | None = None, **kw: Any) -> subprocess.Popen[str]:
    """``hpo`` with a toy objective in a child process (``script``: through bash instead)."""
    tests = Path(__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": f"{tests}{os.pathsep}{tests.parent}"}
    cmd = ["bash", "-c", script] if script else [sys.executable, str(tests / "cli_child.py")]
    return subprocess.Popen([*cmd, *argv], env=env, text=True, **kw)


def test_a_reader_that_leaves_does_not_stop_the_campaign(data_root: Path, tmp_path: Path) -> None:
    """``hpo run ... | head -3`` once ended the campaign after its first trial: rc 1."""
    runs = tmp_path / "runs"
    argv = _argv(data_root, runs, "--name", "piped", "--trials", "8", "--optimizer", "random")
    proc = _child(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    for _ in range(3):
        proc.stdout.readline()
    proc.stdout.close()  # what head does after three lines
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert err == ""
    assert len(read_trials(runs / "piped" / "trials.jsonl")) == 8


def test_a_full_disk_under_the_campaigns_log_is_a_note(data_root: Path, tmp_path: Path) -> None:
    """A campaign's stdout is its log: on a full disk the campaign goes on (its result is the
    run folder) and says once, at the end, that the log there is incomplete."""
    runs = tmp_path / "runs"
    argv = _argv(data_root, runs, "--name", "full", "--trials", "4", "--optimizer", "random")
    with open("/dev/full", "w") as full:
        proc = _child(*argv, stdout=full, stderr=subprocess.PIPE)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert err == (
        "hpo: note: stdout (/dev/full): No space left on device; the output is incomplete: "
        "free space there or send it elsewhere (the run folder holds every trial)\n"
    )
    assert len(read_trials(runs / "full" / "trials.jsonl")) == 4


@pytest.mark.parametrize("command", ["run", "data check"])
def test_a_closed_stdout_stops_no_command(data_root: Path, tmp_path: Path, command: str) -> None:
    """``hpo ... >&-``: Python starts with no sys.stdout at all (data check once crashed). A
    campaign's stdout is its log and it goes on; data check's report is its result, lost: one
    line and exit 2, as on a full disk (probe2 #55)."""
    runs = tmp_path / "runs"
    argv = _argv(data_root, runs, "--name", "closed", "--trials", "4", "--optimizer", "random")
    if command == "data check":
        argv = ["data", "check", str(data_root)]
    child = Path(__file__).parents[1] / "cli_child.py"
    script = f"exec 1>&-; exec {shlex.join([sys.executable, str(child), *argv])}"
    proc = _child(stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, script=script)
    _, err = proc.communicate(timeout=120)
    if command == "data check":
        assert proc.returncode == 2, err
        assert err.endswith("\nhpo: error: stdout is closed: the output was not written\n")
        return
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    if command == "run":
        assert len(read_trials(runs / "closed" / "trials.jsonl")) == 4


def test_ctrl_c_on_a_local_cluster_is_one_line(data_root: Path, tmp_path: Path) -> None:
    """Ctrl-C once printed a Dask warning for each task cancelled (7,929 lines at 300
    workers); the finished trials stay."""
    runs = tmp_path / "runs"
    argv = _argv(data_root, runs, "--name", "c", "--trials", "3000", "--optimizer", "random")
    proc = _child(*argv, "--workers", "2", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    trials = runs / "c" / "trials.jsonl"
    deadline = time.monotonic() + 60
    while len(read_trials(trials)) < 4 and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    # together, so that a failure shows what the process said (once exit code 2 under load)
    assert (proc.returncode, err.splitlines()) == (130, ["hpo: interrupted"])
    assert len(read_trials(trials)) >= 4
