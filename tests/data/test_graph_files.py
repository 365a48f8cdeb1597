"""What a graph file must be before it is read (hpo.data.graph_files), as every reader sees it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from graphs import write_tile

from hpo.data.graph_files import graph_file_problem
from hpo.data.load import list_graphs, load_graph
from hpo.errors import DataFormatError


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
