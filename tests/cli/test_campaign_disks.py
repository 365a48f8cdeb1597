"""``hpo run`` (hpo/cli/campaign.py) on a disk that fills or refuses writes: one line naming
the path and what to do, no temporary file left, and a new run refused before its first
trial leaves no folder, as a run refused for bad data does."""

from __future__ import annotations

import json
import os
import pathlib
import tempfile
from pathlib import Path
from typing import Any

import pytest
from disks import FULL, READ_ONLY, disk_error, leftovers, one_line, under
from graphs import write_toy_root
from toy_objectives import ToyObjective

import hpo.campaign.objective
from hpo.cli import main
from hpo.runs.record.folder import read_trials


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    return write_toy_root(tmp_path / "data")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        hpo.campaign.objective, "build_objective", lambda cfg, progress=None: (ToyObjective(), None)
    )


def _argv(data_root: Path, runs: Path, *extra: str) -> list[str]:
    return [
        "run", "--data", str(data_root), "--runs-dir", str(runs), "--collection", "tile",
        "--space", "lambdarank_small", "--min-budget", "1", "--max-budget", "27", "--quiet",
        "--name", "r", *extra,
    ]  # fmt: skip


@pytest.mark.usefixtures("toy")
def test_a_full_runs_dir_before_the_first_trial_leaves_no_run(
    data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Once a traceback, with the run folder and its ``.campaign.json.tmp`` left behind."""
    runs = tmp_path / "runs"
    real = json.dump

    def dump(data: Any, fh: Any, **kwargs: Any) -> None:
        if under(fh.name, runs):
            raise disk_error(FULL)
        real(data, fh, **kwargs)

    monkeypatch.setattr(json, "dump", dump)
    assert main(_argv(data_root, runs, "--trials", "3")) == 2
    assert one_line(capsys.readouterr().err) == (
        f"hpo: error: {runs / 'r' / 'campaign.json'}: No space left on device; free space "
        "there or choose another --runs-dir\n"
    )
    assert not (runs / "r").exists()


@pytest.mark.usefixtures("toy")
@pytest.mark.parametrize("fills", ["trials.jsonl", "SMAC's state"])
def test_a_disk_that_fills_mid_campaign_keeps_the_trials(
    data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], fills: str,
) -> None:  # fmt: skip
    """The finished trials stay, no temporary file is left, and the run resumes once there is
    room. SMAC's own state files once stayed as ``.optimization.tmp.json`` and the like."""
    runs = tmp_path / "runs"
    run_dir = runs / "r"
    writes = [0]
    if fills == "trials.jsonl":
        real_fsync = os.fsync

        def fsync(fd: int) -> None:
            if under(fd, run_dir / "trials.jsonl"):
                writes[0] += 1
                if writes[0] > 3:
                    raise disk_error(FULL)
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", fsync)
        named = run_dir / "trials.jsonl"
    else:
        real_write = pathlib.Path.write_text

        def write_text(self: Path, data: str, *args: Any, **kwargs: Any) -> int:
            if self.name.startswith(".optimization") and self.name.endswith(".tmp.json"):
                writes[0] += 1
                if writes[0] > 3:
                    self.touch()  # SMAC made it, then the disk filled
                    raise disk_error(FULL)
            return real_write(self, data, *args, **kwargs)

        monkeypatch.setattr(pathlib.Path, "write_text", write_text)
        named = run_dir / "smac" / "0"
    assert main(_argv(data_root, runs, "--trials", "8", "--optimizer", "random")) == 2
    assert one_line(capsys.readouterr().err) == (
        f"hpo: error: {named}: No space left on device; free space there or choose another "
        "--runs-dir\n"
    )
    kept = read_trials(run_dir / "trials.jsonl")
    assert len(kept) == 3
    assert (run_dir / "trials.jsonl").read_bytes().endswith(b"\n")
    assert leftovers(runs) == []
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        hpo.campaign.objective, "build_objective", lambda cfg, progress=None: (ToyObjective(), None)
    )
    assert main(["run", "--runs-dir", str(runs), "--resume", "r", "--quiet"]) == 0
    assert len(read_trials(run_dir / "trials.jsonl")) == 8


@pytest.mark.usefixtures("toy")
def test_a_read_only_runs_dir_is_one_line(
    data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    runs = tmp_path / "runs"
    real = pathlib.Path.mkdir

    def mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        if under(self, runs):
            raise disk_error(READ_ONLY, self)
        real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "mkdir", mkdir)
    assert main(_argv(data_root, runs, "--trials", "3")) == 2
    assert one_line(capsys.readouterr().err) == (
        f"hpo: error: {runs / 'r'}: Read-only file system; choose a --runs-dir on a writable "
        "file system\n"
    )


@pytest.mark.usefixtures("toy")
def test_resuming_a_read_only_run_says_to_copy_it(
    data_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """``--resume`` of a run on a read-only disk once ended in a traceback at its lock."""
    runs = tmp_path / "runs"
    assert main(_argv(data_root, runs, "--trials", "2", "--n-init", "2")) == 0
    capsys.readouterr()
    real = os.open

    def open_(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and under(path, runs):
            raise disk_error(READ_ONLY, path)
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)
    assert main(["run", "--runs-dir", str(runs), "--resume", "r", "--trials", "4"]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"hpo: error: {runs / 'r'}: Read-only file system; a campaign writes in its run "
        "folder: copy it to a writable folder and resume it there (--runs-dir)\n"
    )


@pytest.mark.parametrize("code", [FULL, READ_ONLY])
def test_a_cache_that_refuses_writes_is_one_line_and_leaves_no_run(
    tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], code: int,
) -> None:  # fmt: skip
    """The run folder was once left behind (an "interrupted" run that never ran a trial),
    after a traceback."""
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    real = tempfile.mkstemp

    def mkstemp(*args: Any, dir: Any = None, **kwargs: Any) -> tuple[int, str]:  # noqa: A002
        if dir is not None and under(dir, cache):
            raise disk_error(code, dir)
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    argv = _argv(tiny_root, runs, "--trials", "2", "--cache-dir", str(cache))
    assert main(argv) == 2
    err = one_line(capsys.readouterr().err)
    assert err.startswith(f"hpo: error: {cache}{os.sep}")
    assert err.endswith(f": {os.strerror(code)}; " + (
        "free space there or choose another --cache-dir\n" if code == FULL
        else "choose a --cache-dir on a writable file system\n"
    ))  # fmt: skip
    assert not (runs / "r").exists()
    assert leftovers(cache) == []
