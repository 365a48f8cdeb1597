"""The run folder's files: the lock (atomic between racing processes, freed by the kernel when
its holder dies), and its JSON files and trial log on a disk that fills."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from disks import FULL, disk_error, leftovers

import hpo.runs.record.lock
from hpo.errors import ConfigError, StorageError, UsageError
from hpo.runs.record.folder import (
    CAMPAIGN_FILE,
    LOCK_FILE,
    TRIALS_FILE,
    RunLock,
    TrialLog,
    lock_is_held,
    read_lock,
    read_trials,
    run_state,
    this_host,
    write_json_atomic,
)
from hpo.runs.record.trial import Trial

HOLDER = """
import sys, time
from hpo.runs.record.lock import RunLock
RunLock(sys.argv[1]).acquire()
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the lock of ``tmp_path / "run"``."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / CAMPAIGN_FILE).write_text("{}")
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(run_dir)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "held\n"
    yield proc
    proc.kill()
    proc.wait()


def test_lock_notes_its_holder_and_release_removes_it(tmp_path: Path) -> None:
    lock = RunLock(tmp_path / "run")
    with lock:
        assert lock.held
        note = read_lock(tmp_path / "run")
        assert note is not None
        assert note["pid"] == os.getpid()
        assert abs(note["started"] - time.time()) < 60
        with pytest.raises(UsageError, match=r"already held by this object"):
            lock.acquire()
    assert not lock.held
    assert not (tmp_path / "run" / LOCK_FILE).exists()
    assert not lock_is_held(tmp_path / "run")


def test_a_second_process_sees_the_holder(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    run_dir = tmp_path / "run"
    assert lock_is_held(run_dir)  # the probe path: another process holds it
    assert run_state(run_dir) == "running"
    start = time.monotonic()
    with pytest.raises(
        UsageError, match=rf"^run 'run' is in use by pid {holder.pid} on .* \(since "
    ):
        RunLock(run_dir, patience=0.2).acquire()
    assert time.monotonic() - start >= 0.2  # it waited out its patience first
    assert read_lock(run_dir)["pid"] == holder.pid  # type: ignore[index]  # not overwritten


def test_a_killed_holders_lock_is_taken_over(tmp_path: Path, holder: subprocess.Popen[str]) -> None:
    run_dir = tmp_path / "run"
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert (run_dir / LOCK_FILE).exists()  # kill -9 leaves the file behind...
    assert not lock_is_held(run_dir)  # ...but the kernel dropped the lock
    assert run_state(run_dir) == "interrupted"
    with RunLock(run_dir, patience=0.0):
        assert read_lock(run_dir)["pid"] == os.getpid()  # type: ignore[index]


def test_a_brief_probe_does_not_refuse_a_taker(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    fd = os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH)  # what lock_is_held holds for microseconds
    try:
        with pytest.raises(UsageError, match=r"^run 'run' is in use by another process"):
            RunLock(run_dir, patience=0.0).acquire()
        threading.Timer(0.1, fcntl.flock, (fd, fcntl.LOCK_UN)).start()
        with RunLock(run_dir, patience=5.0):
            assert read_lock(run_dir)["pid"] == os.getpid()  # type: ignore[index]
    finally:
        os.close(fd)


def test_a_taker_that_opened_a_released_file_retries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder unlinks and closes between a taker's open and its flock: the taker must not
    believe it holds the unlinked file while a third process locks the new one."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    real_flock = fcntl.flock
    calls = []

    def release_in_between(fd: int, op: int) -> None:
        if not calls:  # the holder's release, after this taker opened the file
            os.unlink(run_dir / LOCK_FILE)
        calls.append(op)
        real_flock(fd, op)

    monkeypatch.setattr(hpo.runs.record.lock.fcntl, "flock", release_in_between)
    lock = RunLock(run_dir, patience=0.0)
    lock.acquire()
    assert len(calls) == 2  # the first flock succeeded on the unlinked file, then a retry
    assert lock._fd is not None
    assert os.path.samestat(os.fstat(lock._fd), os.stat(run_dir / LOCK_FILE))
    lock.release()


def _contend(run_dir: Path, rounds: int, index: int, barrier: object, results: object) -> None:
    """One racing process: each round, take the lock at the same instant as the others."""
    assert isinstance(barrier, multiprocessing.synchronize.Barrier)
    for round_ in range(rounds):
        if index == 0 and round_ % 2 == 0:  # even rounds start from a stale lock.json
            note = {"pid": 999_999_999, "host": this_host(), "started": 0.0}  # a dead pid
            (run_dir / LOCK_FILE).write_text(json.dumps(note))
        barrier.wait(30)
        lock = RunLock(run_dir, patience=0.0)
        try:
            lock.acquire()
        except UsageError:
            pass
        results.put((round_, lock.held))  # type: ignore[attr-defined]
        barrier.wait(30)  # everyone has tried while the winner still holds it
        lock.release()
        barrier.wait(30)


def test_racing_takers_exactly_one_wins_each_round(tmp_path: Path) -> None:
    """The old unlink-then-O_EXCL lock let 2 to 4 of these racers win 88 of 200 rounds."""
    racers, rounds = 4, 40
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(racers)
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_contend, args=(tmp_path, rounds, i, barrier, results))
        for i in range(racers)
    ]
    for proc in procs:
        proc.start()
    outcomes: dict[int, list[bool]] = {r: [] for r in range(rounds)}
    try:
        for _ in range(racers * rounds):
            round_, won = results.get(timeout=60)
            outcomes[round_].append(won)
    except queue.Empty:
        pytest.fail(f"racers stalled; outcomes so far: {outcomes}")
    finally:
        for proc in procs:
            proc.join(30)
    assert [proc.exitcode for proc in procs] == [0] * racers
    winners = {r: sum(won) for r, won in outcomes.items()}
    assert winners == dict.fromkeys(range(rounds), 1)


def _full(*args: object) -> None:
    raise disk_error(FULL)


def test_a_full_disk_leaves_a_json_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``campaign.json`` on a full disk once ended in a traceback and left its
    ``.campaign.json.tmp`` behind."""
    path = tmp_path / CAMPAIGN_FILE
    write_json_atomic(path, {"a": 1})
    monkeypatch.setattr(os, "fsync", _full)  # the bytes went out; the disk could not keep them
    with pytest.raises(StorageError, match=rf"^{path}: No space left on device; free space there"):
        write_json_atomic(path, {"a": 2})
    assert json.loads(path.read_text()) == {"a": 1}
    assert leftovers(tmp_path) == []


def test_a_full_disk_leaves_no_half_trial_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A half-written line followed by the next append would make the log unreadable."""
    path = tmp_path / TRIALS_FILE
    log = TrialLog(path)
    assert log.append(Trial(0, {"x": 1}, 1.0, "SUCCESS", seed=0))
    before = path.read_bytes()
    monkeypatch.setattr(os, "fsync", _full)
    with pytest.raises(StorageError, match=rf"^{path}: No space left on device"):
        log.append(Trial(0, {"x": 2}, 1.0, "SUCCESS", seed=0))
    assert path.read_bytes() == before
    assert len(log) == 1
    monkeypatch.undo()
    assert log.append(Trial(0, {"x": 2}, 1.0, "SUCCESS", seed=0))
    assert [r["trial"] for r in read_trials(path)] == [1, 2]


def test_a_full_disk_takes_no_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock once stayed held, and an empty ``lock.json`` stayed, when its note could not
    be written."""
    run_dir = tmp_path / "run"
    monkeypatch.setattr(os, "pwrite", _full)
    with pytest.raises(StorageError, match=rf"^{run_dir / LOCK_FILE}: No space left on device"):
        RunLock(run_dir).acquire()
    assert not (run_dir / LOCK_FILE).exists()
    monkeypatch.undo()
    with RunLock(run_dir):
        assert lock_is_held(run_dir)


@pytest.mark.parametrize("line", ["{}", '{"status": "SUCCESS"}', '{"hello": 1}'])
def test_a_record_without_the_keys_of_a_trial_is_refused(tmp_path: Path, line: str) -> None:
    """``echo '{}' >> trials.jsonl`` once read as a failed trial of status UNKNOWN (probe2 #47):
    a JSON object without a trial's keys is garbage like a line that is not JSON."""
    path = tmp_path / TRIALS_FILE
    TrialLog(path).append(Trial(0, {"x": 1}, 1.0, "SUCCESS", seed=0))
    with path.open("a") as fh:
        fh.write(line + "\n")
    with pytest.raises(ConfigError, match=rf"^{path}: line 2: not a trial record: lacks 'c"):
        read_trials(path)
    with pytest.raises(ConfigError, match=rf"^{path}: line 2: not a trial record"):
        TrialLog(path)


@pytest.mark.parametrize(
    ("forged", "problem"),
    [
        ({"cost": -5.0, "score": 6.0}, "score 6 is impossible"),
        ({"cost": -0.5, "score": None}, "cost -0.5 is impossible"),
        ({"metrics": {"tile:xla": 1.5}}, "metric 'tile:xla' 1.5 is impossible"),
    ],
)
def test_a_score_no_metric_can_reach_is_refused(
    tmp_path: Path, forged: dict[str, object], problem: str
) -> None:
    """A trial edited to score 6.0 once became a warm start's best (probe2 #50): every metric
    is at most 1, so a record above it is refused, naming the file and the line."""
    path = tmp_path / TRIALS_FILE
    log = TrialLog(path)
    log.append(Trial(0, {"x": 1}, 1.0, "SUCCESS", score=0.5, cost=0.5, seed=0))
    log.append(Trial(0, {"x": 2}, 1.0, "SUCCESS", score=1.0, cost=0.0, seed=0))
    record = {**read_trials(path)[0], **forged}
    with path.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
    with pytest.raises(ConfigError, match=rf"^{path}: line 3: {problem}"):
        read_trials(path)
