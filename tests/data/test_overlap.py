"""Tests of graphs shared between splits (hpo/data/overlap.py) and of their report."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from graphs import write_layout, write_tile

from hpo.cli import main
from hpo.data.check import check_dataset
from hpo.data.overlap import DIGEST_CACHE, find_shared_graphs, graph_digest


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    for i in range(3):
        write_tile(root / f"npz/tile/xla/train/t{i}.npz", seed=i)
        write_layout(root / f"npz/layout/xla/random/train/l{i}.npz", seed=i)
    write_tile(root / "npz/tile/xla/valid/v.npz", seed=7)
    write_layout(root / "npz/layout/xla/random/valid/v.npz", seed=7)
    return root


def test_a_clean_root_shares_nothing(tmp_path: Path) -> None:
    root = _root(tmp_path)
    assert find_shared_graphs(root, ("tile:xla", "layout:xla:random")) == []
    assert check_dataset(root).shared == []


def test_a_copied_graph_is_found_by_content_whatever_its_name_and_configs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _root(tmp_path)
    # the same graph measured with other configs, under another name, in test
    write_layout(root / "npz/layout/xla/random/test/0123abcd.npz", seed=1, c=7)
    shutil.copy(root / "npz/tile/xla/train/t2.npz", root / "npz/tile/xla/valid/renamed.npz")
    shared = find_shared_graphs(root, ("tile:xla", "layout:xla:random"))
    assert [s.line() for s in shared] == [
        "tile:xla valid renamed.npz is train's t2.npz",
        "layout:xla:random test 0123abcd.npz is train's l1.npz",
    ]
    assert [s.line() for s in check_dataset(root).shared] == [s.line() for s in shared]
    assert main(["data", "check", str(root)]) == 0
    err = capsys.readouterr().err
    assert "hpo: shared graph: tile:xla valid renamed.npz is train's t2.npz" in err
    assert "2 valid/test graph(s) are also in train" in err


def test_digests_are_cached_by_path_size_and_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache = _root(tmp_path), tmp_path / "cache"
    seen: list[Path] = []
    find_shared_graphs(root, ("tile:xla",), cache_dir=cache, on_file=seen.append)
    assert len(seen) == 4
    assert (cache / DIGEST_CACHE).is_file()
    seen.clear()
    find_shared_graphs(root, ("tile:xla",), cache_dir=cache, on_file=seen.append)
    assert seen == []
    write_tile(root / "npz/tile/xla/valid/v.npz", seed=0)  # now train's t0
    shared = find_shared_graphs(root, ("tile:xla",), cache_dir=cache, on_file=seen.append)
    assert [p.name for p in seen] == ["v.npz"]
    assert [s.train.name for s in shared] == ["t0.npz"]


def test_the_digest_sees_one_changed_value() -> None:
    feat = np.zeros((3, 140), dtype=np.float32)
    ops, edges = np.array([1, 2, 3]), np.array([[1, 0], [2, 1]])
    changed = feat.copy()
    changed[2, 5] = 1.0
    assert graph_digest(feat, ops, edges) == graph_digest(feat.astype(np.float64), ops, edges)
    assert graph_digest(feat, ops, edges) != graph_digest(changed, ops, edges)
    assert graph_digest(feat, ops, edges) != graph_digest(feat, ops, edges[::-1])
