"""Chunked row reads of in-memory and memory-mapped tables (hpo.features.table.store)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hpo.features.table import store
from hpo.features.table.store import chunk_bounds, read_rows


@pytest.fixture
def table(tmp_path: Path) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 7)).astype(np.float32)
    np.save(tmp_path / "t.npy", X)
    return X, np.load(tmp_path / "t.npy", mmap_mode="r")


def test_chunk_bounds_cover_every_row_once() -> None:
    b = chunk_bounds(1001, row_bytes=40, chunk_bytes=400)
    assert b[0] == 0
    assert b[-1] == 1001
    assert np.all(np.diff(b) <= 10)
    assert np.all(np.diff(b) >= 1)
    assert chunk_bounds(0, 40).tolist() == [0]
    assert chunk_bounds(5, 40, chunk_bytes=1).tolist() == [0, 1, 2, 3, 4, 5]


@pytest.mark.parametrize("window", [28, 280, 1 << 20])
def test_disk_reads_equal_indexing(
    table: tuple[np.ndarray, np.ndarray], window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    X, disk = table
    monkeypatch.setattr(store, "WINDOW_BYTES", window)  # 1 row, 10 rows, everything
    rng = np.random.default_rng(1)
    rows = np.r_[rng.permutation(5000)[:700], [3, 3, 4999, 0], np.arange(100, 300)]
    cols = np.array([6, 0, 2])
    assert np.array_equal(read_rows(disk, rows), X[rows])
    got = read_rows(disk, rows, cols)
    assert got.flags.c_contiguous
    assert got.dtype == np.float32
    assert np.array_equal(got, X[np.ix_(rows, cols)])
    assert np.array_equal(read_rows(X, rows, cols), got)


def test_disk_reads_do_not_map_pages(table: tuple[np.ndarray, np.ndarray]) -> None:
    _, disk = table

    class Boom(np.memmap):
        def __getitem__(self, key: object) -> np.ndarray:
            raise AssertionError("the mapping was indexed")

    boom = disk.view(Boom)
    boom.filename, boom.offset = disk.filename, disk.offset  # type: ignore[attr-defined]
    assert read_rows(boom, np.arange(10)).shape == (10, 7)


def test_out_of_range_and_empty(table: tuple[np.ndarray, np.ndarray]) -> None:
    _, disk = table
    with pytest.raises(IndexError, match="5000 rows"):
        read_rows(disk, np.array([5000]))
    assert read_rows(disk, np.zeros(0, dtype=np.int64), np.array([1])).shape == (0, 1)
