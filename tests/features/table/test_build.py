"""build_tables with a cache: tables on disk, reused, rebuilt when damaged
(hpo.features.table.build)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from disks import FULL, FullFile, as_left_by, dead_pid, disk_error, leftovers, under
from graphs import write_tile

from hpo.data.load import collection_dir
from hpo.errors import StorageError
from hpo.features import ExtractOptions, FeatureSpec, SampleCaps, build_tables
from hpo.ownership import TEMP_SUFFIX, temp_prefix

COLLECTIONS = ("tile:xla", "layout:xla:default", "layout:nlp:random")
SPLITS = ("train", "valid")
SPEC = FeatureSpec()
FIELDS = ("X", "target", "group", "config_index", "dup_count")


def _build(root: Path, cache: Path | None, **kwargs) -> dict:
    return build_tables(
        root, COLLECTIONS, SPLITS, SPEC, extract=ExtractOptions(cache_dir=cache), **kwargs
    )


def _files(cache: Path) -> dict[str, tuple[int, int]]:
    """Inode and modification time of every table file."""
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (cache / "tables").iterdir()}


def test_disk_tables_equal_memory_tables_bit_for_bit(tiny_root: Path, tmp_path: Path) -> None:
    memory = _build(tiny_root, None)
    disk = _build(tiny_root, tmp_path / "cache")
    assert list(disk) == list(memory)
    for key, table in disk.items():
        for name in FIELDS:
            ours, theirs = getattr(table, name), getattr(memory[key], name)
            assert isinstance(ours, np.memmap)
            assert not ours.flags.writeable
            assert ours.dtype == theirs.dtype
            assert ours.shape == theirs.shape
            assert ours.tobytes() == theirs.tobytes()
        assert not isinstance(memory[key].X, np.memmap)
        assert table.graphs == memory[key].graphs
        assert table.feature_names == memory[key].feature_names


def test_a_second_build_reuses_the_files(
    tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    first = _build(tiny_root, cache)
    before = _files(cache)
    assert len(before) == 4 * 7  # four tables: five arrays, a graph list, their CRC-32s

    def no_entry_read(*args, **kwargs):
        raise AssertionError("a reused table must not read a file's cache entry")

    monkeypatch.setattr("hpo.features.table.build.rows_of_entry", no_entry_read)
    seen: list[tuple[str, bool]] = []
    again = build_tables(
        tiny_root,
        COLLECTIONS,
        SPLITS,
        SPEC,
        extract=ExtractOptions(cache_dir=cache, on_file=lambda p, hit: seen.append((p, hit))),
    )
    assert _files(cache) == before  # same inodes, not rewritten
    assert len(seen) == sum(len(t.graphs) for t in first.values())
    assert all(hit for _, hit in seen)
    for key, table in again.items():
        np.testing.assert_array_equal(table.X, first[key].X)


def test_other_caps_make_another_table(tiny_root: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _build(tiny_root, cache)
    before = _files(cache)
    capped = _build(tiny_root, cache, caps=SampleCaps(train_configs=5, valid_configs=7))
    after = _files(cache)
    assert set(before) < set(after)  # the first tables are left alone
    assert all(after[name] == before[name] for name in before)
    assert max(np.bincount(capped[("tile", "train")].group)) <= 5


@pytest.mark.parametrize("damage", ["truncate", "empty", "same size"])
def test_a_damaged_table_file_is_rebuilt(tiny_root: Path, tmp_path: Path, damage: str) -> None:
    """A table overwritten in place at the same size was once mapped and used as it was: the
    probe's campaign scored 0.2473 instead of 0.7706."""
    cache = tmp_path / "cache"
    first = {k: np.array(t.X) for k, t in _build(tiny_root, cache).items()}
    (x_file,) = (cache / "tables").glob("layout-train-*.X.npy")
    size = x_file.stat().st_size
    if damage == "same size":
        with open(x_file, "r+b") as fh:  # the rows' bytes, header kept
            fh.seek(size // 2)
            fh.write(np.random.default_rng(0).bytes(size - size // 2))
    else:
        x_file.write_bytes(x_file.read_bytes()[: size - 100] if damage == "truncate" else b"")
    rebuilt = _build(tiny_root, cache)
    assert x_file.stat().st_size == size
    for key, X in first.items():
        assert np.asarray(rebuilt[key].X).tobytes() == X.tobytes()


def test_a_failed_build_leaves_no_partial_files(
    tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hpo.features.table import build

    calls = [0]
    real = build.rows_of_entry

    def fail_on_third(*args, **kwargs):
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("extraction failed")
        return real(*args, **kwargs)

    monkeypatch.setattr(build, "rows_of_entry", fail_on_third)
    with pytest.raises(RuntimeError, match="extraction failed"):
        _build(tiny_root, tmp_path / "cache")
    tables = tmp_path / "cache" / "tables"
    assert not tables.exists() or not list(tables.iterdir())


def test_a_full_cache_is_one_error_naming_the_entry_and_leaves_no_temporary_file(
    tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full cache once raised an OSError naming no file, and left ``tmp*.tmp.npz``."""
    cache = tmp_path / "cache"

    def full(file: Any, *args: Any, **kwargs: Any) -> None:
        file.write(b"PK\x03\x04 the start of an archive")
        raise disk_error(FULL)

    monkeypatch.setattr(np, "savez", full)
    folder = re.escape(str(cache / "tile_xla"))
    with pytest.raises(
        StorageError,
        match=rf"^{folder}/[^/]+\.npz: No space left on device; free space there or choose "
        r"another --cache-dir$",
    ):
        build_tables(
            tiny_root,
            ("tile:xla",),
            SPLITS,
            SPEC,
            extract=ExtractOptions(cache_dir=cache, n_jobs=1),
        )
    assert leftovers(cache) == []


def test_a_table_on_a_full_disk_is_named_and_leaves_no_temporary_file(
    tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table's ``X`` once stayed as a temporary file: dropping it flushed the write that
    had failed, which failed again."""
    cache = tmp_path / "cache"
    _build(tiny_root, cache)  # every file's entry is cached: only the tables are written
    shutil.rmtree(cache / "tables")
    real = os.fdopen

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        fh = real(fd, *args, **kwargs)
        return FullFile(fh) if under(fd, cache / "tables") else fh

    monkeypatch.setattr(os, "fdopen", fdopen)
    with pytest.raises(
        StorageError, match=r"/tables/tile-train-[0-9a-f]+\.X\.npy: No space left on device"
    ):
        _build(tiny_root, cache)
    assert leftovers(cache) == []


def test_build_memory_is_bounded_by_a_file_not_the_table(tmp_path: Path) -> None:
    """Peak traced memory of a build from the per-file cache entries: a few files' rows, where
    gathering and concatenating the table held it twice (41 files' rows here, measured).

    Built once first so the entries exist: what is measured is build_tables' own memory,
    not the featurizing of a file (its temporaries are extraction's, about ten times a tile
    file's rows).
    """
    root, cache, n_files = tmp_path / "root", tmp_path / "cache", 20
    for i in range(n_files):
        write_tile(collection_dir(root, "tile:xla", "train") / f"g{i:02d}.npz", c=500, seed=i)

    def build() -> tuple[np.ndarray, int]:
        tracemalloc.start()
        try:
            tables = build_tables(
                root, ("tile:xla",), ("train",), SPEC, extract=ExtractOptions(cache_dir=cache)
            )
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        return tables[("tile", "train")].X, peak

    X, _ = build()
    shutil.rmtree(cache / "tables", ignore_errors=True)  # entries stay, the table is rebuilt
    X, peak = build()
    one_file = X.nbytes / n_files
    small_arrays = 2 * 32 * X.shape[0]  # target, group, config index, duplicates; concatenated
    # measured: 3.9 files' rows with the small arrays; 41 when the table was concatenated
    assert peak < 4 * one_file + small_arrays


def _children(pid: int) -> set[int]:
    """Live processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_extraction_workers_end_with_their_parent() -> None:
    """kill -9 of a campaign mid-extraction once left its workers running for 29 minutes."""
    script = (
        "import os, time; from joblib import Parallel, delayed; "
        "from hpo.features.table.build import in_worker; me = os.getpid(); "
        "Parallel(n_jobs=2)(delayed(in_worker)(me, time.sleep, 120) for _ in range(2))"
    )
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.5)
            workers = {p for p in _children(parent.pid) if "loky" in _cmdline(p)}
        assert workers, "no loky worker started"
        time.sleep(1.0)  # the tasks are running
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.5)
        assert not any(_alive(w) for w in workers)
    finally:
        if parent.poll() is None:
            parent.kill()


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_a_build_removes_what_a_killed_build_left(tiny_root: Path, tmp_path: Path) -> None:
    """A killed campaign (or an extraction worker cancelled with it) left its temporary cache
    files for good; they name their process, and the next build removes a dead one's."""
    cache = tmp_path / "cache"
    left = []
    for folder in (cache / "tile_xla", cache / "tables"):
        folder.mkdir(parents=True)
        left.append(
            as_left_by(folder / f"{temp_prefix(folder / 'x.npz')}ab{TEMP_SUFFIX}", dead_pid())
        )
        left[-1].write_bytes(b"PK half an entry")
    build_tables(
        tiny_root, ("tile:xla",), SPLITS, SPEC, extract=ExtractOptions(cache_dir=cache, n_jobs=1)
    )
    assert [p for p in left if p.exists()] == []
    assert leftovers(cache) == []
