"""Pickling a FeatureTable: a table on disk travels as file references
(hpo.features.table.feature_table)."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from hpo.features.table.feature_table import FeatureTable, GraphRef
from hpo.features.table.on_disk import TableWriter, open_table_files

WIDTH = 40


def _disk_table(folder: Path, rows: int) -> FeatureTable:
    rng = np.random.default_rng(rows)
    writer = TableWriter(folder / "t", WIDTH)
    writer.add(
        {"collection": "tile:xla", "stem": "g", "n_configs": rows, "labeled": True},
        rng.normal(size=(rows, WIDTH)).astype(np.float32),
        target=rng.uniform(size=rows),
        config_index=np.arange(rows, dtype=np.int64),
        dup_count=np.ones(rows, dtype=np.int64),
    )
    writer.finish()
    opened = open_table_files(folder / "t", WIDTH, n_graphs=1)
    assert opened is not None
    arrays, graphs = opened
    return FeatureTable(
        family="tile",
        split="train",
        graphs=tuple(GraphRef("tile:xla", g["stem"], g["n_configs"], g["labeled"]) for g in graphs),
        feature_names=tuple(f"f{j}" for j in range(WIDTH)),
        **arrays,
    )


def _assert_same_rows(a: FeatureTable, b: FeatureTable) -> None:
    for name in ("X", "target", "group", "config_index", "dup_count"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert (a.family, a.split, a.graphs, a.feature_names) == (
        b.family,
        b.split,
        b.graphs,
        b.feature_names,
    )


@pytest.mark.parametrize("rows", [10, 20_000])
def test_a_disk_table_pickles_as_file_references(tmp_path: Path, rows: int) -> None:
    table = _disk_table(tmp_path, rows)
    data = pickle.dumps(table)
    assert len(data) < 4096  # the names of five files, whatever the rows (20k rows: 3.8 MB)
    back = pickle.loads(data)
    assert isinstance(back.X, np.memmap)
    assert Path(back.X.filename) == Path(table.X.filename)  # mapped again, not copied
    _assert_same_rows(back, table)


def test_an_in_memory_table_pickles_its_rows(tmp_path: Path) -> None:
    disk = _disk_table(tmp_path, 500)
    arrays = {n: np.array(getattr(disk, n)) for n in ("X", "target", "group")}
    table = FeatureTable(
        family=disk.family,
        split=disk.split,
        config_index=np.array(disk.config_index),
        dup_count=np.array(disk.dup_count),
        graphs=disk.graphs,
        feature_names=disk.feature_names,
        **arrays,
    )
    data = pickle.dumps(table)
    assert len(data) > table.X.nbytes
    back = pickle.loads(data)
    assert not isinstance(back.X, np.memmap)
    _assert_same_rows(back, disk)


def _cache_reader(tmp_path: Path, entry: str) -> tuple[Callable[[], tuple[np.ndarray, bool]], Path]:
    """A tile file's rows read through the per-file cache (``entry``: the rows cache or the
    file cache), and the cache folder: ``read()`` gives the rows and whether they were a hit."""
    from graphs import write_tile

    from hpo.features.spec import FeatureSpec
    from hpo.features.table.feature_table import extract_file, extract_rows

    path = write_tile(tmp_path / "g.npz")
    cache, spec = tmp_path / "cache", FeatureSpec()

    def read() -> tuple[np.ndarray, bool]:
        if entry == "rows":
            rows, hit = extract_rows(path, "tile:xla", spec, cache_dir=cache)
            return rows.X, hit
        X, _, _, _, hit = extract_file(path, "tile:xla", spec, cache_dir=cache)
        return X, hit

    return read, cache


@pytest.mark.parametrize("entry", ["rows", "file"])
def test_a_cache_entry_that_is_no_zip_is_computed_again(tmp_path: Path, entry: str) -> None:
    """A truncated entry is no zip at all: zipfile's BadZipFile once escaped as a traceback
    where a damaged entry is meant to be computed again."""
    read, cache = _cache_reader(tmp_path, entry)

    first, hit = read()
    assert not hit
    (written,) = cache.rglob("*.npz")
    written.write_bytes(written.read_bytes()[:300])
    again, hit = read()
    assert not hit
    np.testing.assert_array_equal(again, first)
    assert read()[1]  # written anew, and read from the cache next time


@pytest.mark.parametrize("entry", ["rows", "file"])
def test_a_cache_entry_edited_in_place_is_computed_again(tmp_path: Path, entry: str) -> None:
    """A valid zip whose X was rewritten (rows reversed, same shape) was read as is: an entry
    is trusted only if its arrays have the CRC-32 recorded when it was written."""
    read, cache = _cache_reader(tmp_path, entry)

    first, hit = read()
    assert not hit
    (written,) = cache.rglob("*.npz")
    with np.load(written) as z:
        arrays = dict(z)
    assert len(arrays["X"]) > 1
    assert not np.array_equal(arrays["X"], arrays["X"][::-1])
    arrays["X"] = arrays["X"][::-1].copy()
    with open(written, "wb") as fh:
        np.savez(fh, **arrays)
    again, hit = read()
    assert not hit
    np.testing.assert_array_equal(again, first)
    assert read()[1]  # written anew, and read from the cache next time
