"""One validator: ``hpo data check`` and every command that reads data refuse the same files."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from graphs import layout_arrays, write_layout, write_root, write_tile

from hpo.cli import main
from hpo.data.check import check_dataset
from hpo.data.load import iter_config_chunks, load_layout_graph
from hpo.data.values import MAX_FEATURE, check_config_block
from hpo.errors import DataFormatError
from hpo.features import FeatureSpec, extract_file

LAYOUT = "npz/layout/xla/default/train/g0.npz"
TILE = "npz/tile/xla/train/g0.npz"


def _layout_feat(value: float, where: tuple[int, ...] = (3, 1, 2)) -> np.ndarray:
    feat = layout_arrays(c=25, seed=2)["node_config_feat"].copy()
    feat[where] = value
    return feat


def _tile_cfg(value: float) -> np.ndarray:
    rng = np.random.default_rng(0)
    cfg = rng.integers(1, 8, size=(20, 24)).astype(np.float32)
    cfg[5, 3] = value
    return cfg


def _node_feat(n: int, value: float, dtype: type | str = np.float32) -> np.ndarray:
    feat = np.zeros((n, 140), dtype=dtype)
    feat[:, 21] = 4
    feat[2, 7] = value
    return feat


def _gap_layout() -> np.ndarray:
    feat = layout_arrays(c=25, seed=2)["node_config_feat"].copy()
    feat[4, 0, 0:6] = [-1, 0, -1, -1, -1, -1]
    return feat


# name: (file under the root, writer, message)
CASES: dict[str, tuple[str, Callable[[Path], Path], str]] = {
    "node_config_feat NaN": (
        LAYOUT,
        lambda p: write_layout(p, c=25, seed=2, node_config_feat=_layout_feat(np.nan)),
        r"'node_config_feat': expected dimension indices in -1\.\.5, found nan in config 3",
    ),
    "node_config_feat 9": (
        LAYOUT,
        lambda p: write_layout(p, c=25, seed=2, node_config_feat=_layout_feat(9)),
        r"'node_config_feat': expected dimension indices in -1\.\.5, found 9 in config 3",
    ),
    "node_config_feat 0.5": (
        LAYOUT,
        lambda p: write_layout(p, c=25, seed=2, node_config_feat=_layout_feat(0.5)),
        r"found 0\.5 in config 3",
    ),
    "-1 before a fixed dimension": (
        LAYOUT,
        lambda p: write_layout(p, c=25, seed=2, node_config_feat=_gap_layout()),
        r"-1 entries of each 6-dimension layout at its end, found \[-1, 0, -1, -1, -1, -1\] "
        r"in config 4",
    ),
    "tile config_feat NaN": (
        TILE,
        lambda p: write_tile(p, c=20, config_feat=_tile_cfg(np.nan)),
        r"'config_feat': expected finite values of magnitude <= 2\^53, found nan in row 5",
    ),
    "node_feat 3e38": (
        TILE,
        lambda p: write_tile(p, node_feat=_node_feat(12, 3e38)),
        r"'node_feat': expected finite values .* found 3e\+38 in row 2, column 7",
    ),
    # every dtype is checked by one rule: float16's bound was once inf, so inf passed
    "node_feat float16 inf": (
        TILE,
        lambda p: write_tile(p, node_feat=_node_feat(12, np.inf, np.float16)),
        r"'node_feat': expected finite values .* found inf in row 2, column 7",
    ),
    "node_feat big-endian NaN": (
        LAYOUT,
        lambda p: write_layout(p, c=25, seed=2, node_feat=_node_feat(40, np.nan, ">f8")),
        r"'node_feat': expected finite values .* found nan in row 2, column 7",
    ),
    "tile config_feat float16 -inf": (
        TILE,
        lambda p: write_tile(p, c=20, config_feat=_tile_cfg(-np.inf).astype(np.float16)),
        r"'config_feat': expected finite values .* found -inf in row 5",
    ),
    "node_opcode 10^6": (
        TILE,
        lambda p: write_tile(p, node_opcode=np.full(12, 10**6, dtype=np.int64)),
        r"'node_opcode': expected HLO opcode ids in \[0, 121\), found \[1000000, 1000000\]",
    ),
    "node_opcode -3": (
        LAYOUT,
        lambda p: write_layout(p, c=25, seed=2, node_opcode=np.full(40, -3, dtype=np.int64)),
        r"'node_opcode': expected HLO opcode ids in \[0, 121\), found \[-3, -3\]",
    ),
    "duplicate node_config_ids": (
        LAYOUT,
        lambda p: write_layout(
            p, c=25, seed=2, node_config_ids=np.array([1, 2, 3, 3, 5, 6, 7, 8], dtype=np.int64)
        ),
        r"'node_config_ids': expected distinct node ids, found 3 2 times",
    ),
    "node_splits beyond n": (
        LAYOUT,
        lambda p: write_layout(p, c=25, seed=2, node_splits=np.array([[0, 41]])),
        r"'node_splits': expected boundaries in \[0, 40\], found \[0, 41\]",
    ),
    "node_splits decreasing": (
        LAYOUT,
        lambda p: write_layout(p, c=25, seed=2, node_splits=np.array([[0, 30, 20, 40]])),
        r"'node_splits': expected non-decreasing boundaries",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_and_loading_agree(tmp_path: Path, case: str) -> None:
    rel, write, message = CASES[case]
    root = write_root(tmp_path / "root", per_split=1)
    path = write(root / rel)
    report = check_dataset(root)
    assert len(report.problems) == 1
    assert report.problems[0].startswith(f"{path}: ")
    assert re.search(message, report.problems[0])
    collection = "tile:xla" if "tile" in rel else "layout:xla:default"
    with pytest.raises(DataFormatError, match=message):
        extract_file(path, collection, FeatureSpec())  # what run, evaluate and predict call
    streamed = "node_config_feat" in case or "-1" in case  # what --quick skips
    assert main(["data", "check", str(root), "--quick"]) == (0 if streamed else 1)


def test_quick_check_skips_only_the_layout_stream(tmp_path: Path) -> None:
    root = write_root(tmp_path / "root", per_split=1)
    write_layout(root / LAYOUT, c=25, seed=2, node_config_feat=_layout_feat(9))
    assert check_dataset(root, deep=False).problems == []
    assert len(check_dataset(root).problems) == 1


def test_what_real_files_hold_passes(tmp_path: Path) -> None:
    """node_splits ending with n, layouts fixing only minor dimensions, opcode 120, and the
    largest feature magnitude allowed."""
    feat = layout_arrays(c=25, seed=2)["node_config_feat"].copy()
    feat[0, 0, 0:6] = [4, 0, -1, -1, -1, -1]
    path = write_layout(
        tmp_path / "g.npz",
        c=25,
        seed=2,
        node_splits=np.array([[0, 10, 10, 40]]),
        node_config_feat=feat,
        node_opcode=np.full(40, 120, dtype=np.uint8),
        node_feat=_node_feat(40, MAX_FEATURE, np.float64),
    )
    graph = load_layout_graph(path)
    assert graph.node_splits.tolist() == [[0, 10, 10, 40]]
    assert sum(b.shape[0] for _, b in iter_config_chunks(path, 7)) == 25
    X = extract_file(path, "layout:xla:default", FeatureSpec())[0]
    assert np.isfinite(X).all()


def test_config_block_is_returned_as_int8() -> None:
    block = np.array([[[0, 1, -1, -1, -1, -1] * 3]], dtype=np.float32)
    raw = check_config_block(Path("x.npz"), 0, block)
    assert raw.dtype == np.int8
    assert raw.tolist() == block.astype(np.int8).tolist()


def test_check_names_absent_collections_and_splits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    write_tile(root / "npz/tile/xla/train/g0.npz")
    write_tile(root / "npz/tile/xla/valid/g0.npz", seed=1)
    report = check_dataset(root)
    assert ("tile:xla", "test") in report.absent
    assert main(["data", "check", str(root)]) == 0
    err = capsys.readouterr().err
    assert "hpo: note: absent: tile:xla test, layout:xla:default (every split)," in err
    assert err.count("\n") == 1
