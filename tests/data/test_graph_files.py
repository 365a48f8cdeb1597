"""What a graph file must be before it is read (hpo.data.graph_files), as every reader sees it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from graphs import write_tile

from hpo.data.graph_files import graph_file_problem
from hpo.data.load import list_graphs, load_graph
from hpo.errors import DataFormatError


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"\0" * 10_000, r"not a zip file: it starts with zero bytes, as a file cut short can"),
        (b"", r"the file is empty"),
        (b"hello, not an archive", r"not a zip file"),
    ],
)
def test_a_file_that_is_no_archive_is_called_so(tmp_path: Path, content: bytes, why: str) -> None:
    """A zero-filled file was once reported as "pickled (object) data" (numpy's guess for
    anything that is neither a zip nor an .npy file), with a hint to unpickle it."""
    path = tmp_path / "g.npz"
    path.write_bytes(content)
    with pytest.raises(DataFormatError, match=rf"g\.npz: not a readable \.npz archive \({why}\)$"):
        load_graph(path, "tile:xla")


def test_a_lone_npy_array_is_still_named(tmp_path: Path) -> None:
    path = tmp_path / "g.npz"
    with open(path, "wb") as fh:
        np.save(fh, np.zeros(3))
    with pytest.raises(DataFormatError, match="expected an .npz archive, found a single .npy"):
        load_graph(path, "tile:xla")


def test_a_good_file_has_no_problem(tmp_path: Path) -> None:
    path = write_tile(tmp_path / "g.npz")
    assert graph_file_problem(path) is None
    assert load_graph(path, "tile:xla").n_configs > 0


def test_a_name_that_is_not_utf8_is_refused_before_any_file_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "npz" / "tile" / "xla" / "train"
    write_tile(folder / "a.npz")
    bad = Path(os.fsdecode(bytes(folder) + b"/b\xff.npz"))
    write_tile(bad)
    line = f"{folder}/b\\xff.npz: the file name is not UTF-8 (graph ids are written as text); "
    assert graph_file_problem(bad) == line + "rename it"
    with pytest.raises(DataFormatError, match=r"b\\xff\.npz: the file name is not UTF-8"):
        list_graphs(tmp_path, "tile:xla", "train")
