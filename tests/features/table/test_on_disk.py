"""Tables on disk: written once, checked before they are mapped (hpo.features.table.on_disk)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hpo.errors import UsageError
from hpo.features.table.on_disk import (
    TableWriter,
    mapped_ref,
    open_table_files,
    reopen,
    table_key,
)

WIDTH = 6


def _graph_rows(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    return {
        "X": rng.normal(size=(n, WIDTH)).astype(np.float32),
        "target": rng.uniform(size=n),
        "config_index": rng.permutation(n).astype(np.int64),
        "dup_count": np.ones(n, dtype=np.int64),
    }


def _write(prefix: Path, sizes: tuple[int, ...] = (5, 0, 9)) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    writer = TableWriter(prefix, WIDTH)
    parts = [_graph_rows(rng, n) for n in sizes]
    for i, part in enumerate(parts):
        X = part["X"]
        per_row = {k: v for k, v in part.items() if k != "X"}
        writer.add({"collection": "tile:xla", "stem": f"g{i}"}, X, **per_row)
    writer.finish()
    return parts


def test_written_table_maps_back_read_only(tmp_path: Path) -> None:
    prefix = tmp_path / "tables" / "tile-train-k"
    parts = _write(prefix)
    opened = open_table_files(prefix, WIDTH, n_graphs=3)
    assert opened is not None
    arrays, graphs = opened
    for name in ("X", "target", "config_index", "dup_count"):
        np.testing.assert_array_equal(arrays[name], np.concatenate([p[name] for p in parts]))
        assert isinstance(arrays[name], np.memmap)
    np.testing.assert_array_equal(arrays["group"], np.repeat([0, 1, 2], [5, 0, 9]))
    assert [g["rows"] for g in graphs] == [5, 0, 9]
    assert graphs[1]["stem"] == "g1"
    with pytest.raises(ValueError, match="read-only"):
        arrays["X"][0, 0] = 1.0
    assert not list(prefix.parent.glob("*.tmp"))  # temporaries renamed into place


def test_a_table_of_no_rows_maps(tmp_path: Path) -> None:
    _write(tmp_path / "t", sizes=(0,))
    opened = open_table_files(tmp_path / "t", WIDTH, n_graphs=1)
    assert opened is not None
    assert opened[0]["X"].shape == (0, WIDTH)


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-4])


def _grow(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\0" * 24)


def _drop_a_graph(path: Path) -> None:
    path.write_text(json.dumps(json.loads(path.read_text())[:-1]))


def _overwrite_in_place(path: Path) -> None:
    """Same size, same header, other contents: the last value's bytes turned over."""
    data = bytearray(path.read_bytes())
    data[-4:] = bytes(255 - b for b in data[-4:])
    with open(path, "r+b") as fh:  # in place, as the probe's overwrite did
        fh.write(data)


def _rename_a_graph(path: Path) -> None:
    path.write_text(path.read_text().replace('"g0"', '"h0"'))


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("X.npy", _truncate),
        ("X.npy", _grow),
        ("target.npy", _truncate),
        ("group.npy", lambda p: p.unlink()),
        ("graphs.json", _drop_a_graph),
        ("graphs.json", lambda p: p.write_text("{not json")),
        ("X.npy", lambda p: p.write_bytes(b"")),
        # the same size: once mapped and used (a score of 0.2473 instead of 0.7706)
        ("X.npy", _overwrite_in_place),
        ("target.npy", _overwrite_in_place),
        ("dup_count.npy", _overwrite_in_place),
        ("graphs.json", _rename_a_graph),
        ("crc32.json", lambda p: p.unlink()),  # a table from before the record: rebuilt
        ("crc32.json", lambda p: p.write_text("{}")),
    ],
)
def test_a_damaged_table_is_not_trusted(tmp_path: Path, name: str, damage) -> None:
    prefix = tmp_path / "t"
    _write(prefix)
    assert open_table_files(prefix, WIDTH, n_graphs=3) is not None
    damage(tmp_path / f"t.{name}")
    assert open_table_files(prefix, WIDTH, n_graphs=3) is None


def test_shapes_must_match_what_the_build_expects(tmp_path: Path) -> None:
    _write(tmp_path / "t")
    assert open_table_files(tmp_path / "t", WIDTH + 1, n_graphs=3) is None
    assert open_table_files(tmp_path / "t", WIDTH, n_graphs=2) is None


def test_rows_of_the_wrong_width_are_refused(tmp_path: Path) -> None:
    writer = TableWriter(tmp_path / "t", WIDTH)
    with pytest.raises(ValueError, match=r"rows of width 6, got \(2, 5\)"):
        writer.add({}, np.zeros((2, 5), dtype=np.float32))
    writer.abort()
    assert not list(tmp_path.iterdir())


def test_the_key_follows_every_part() -> None:
    base = {"files": ["a/x.npz", "a/y.npz"], "columns": None, "names": ["f0", "f1"]}
    assert table_key(base) == table_key(dict(base))
    for changed in (
        {**base, "files": ["a/y.npz", "a/x.npz"]},  # order of the files is the order of rows
        {**base, "columns": [0]},
        {**base, "names": ["f0", "f2"]},
    ):
        assert table_key(changed) != table_key(base)


def test_only_a_whole_file_mapping_pickles_as_a_reference(tmp_path: Path) -> None:
    X = np.arange(60, dtype=np.float32).reshape(10, 6)
    np.save(tmp_path / "x.npy", X)
    mapped = np.load(tmp_path / "x.npy", mmap_mode="r")
    ref = mapped_ref(mapped)
    assert ref is not None
    assert (ref.offset, ref.shape, ref.dtype) == (128, (10, 6), "<f4")
    np.testing.assert_array_equal(reopen(ref), X)
    assert mapped_ref(mapped[3:]) is None  # a view keeps its parent's offset: not a reference
    assert mapped_ref(mapped[:, :2]) is None
    assert mapped_ref(X) is None
    assert mapped_ref(np.load(tmp_path / "x.npy", mmap_mode="r+")) is None  # writable


@pytest.mark.parametrize("damage", ["missing", "truncated"])
def test_a_reference_to_a_file_not_there_is_refused(tmp_path: Path, damage: str) -> None:
    np.save(tmp_path / "x.npy", np.zeros((10, 6), dtype=np.float32))
    ref = mapped_ref(np.load(tmp_path / "x.npy", mmap_mode="r"))
    assert ref is not None
    if damage == "missing":
        (tmp_path / "x.npy").unlink()
    else:
        _truncate(tmp_path / "x.npy")
    with pytest.raises(UsageError, match=r"x\.npy: cannot map this feature table on .*same path"):
        reopen(ref)
