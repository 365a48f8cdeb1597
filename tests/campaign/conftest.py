"""Fixtures shared by the campaign tests."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    """A dataset root with one (dummy) tile:xla file per split: enough for the fingerprint."""
    root = tmp_path / "data"
    for split in ("train", "valid"):
        folder = root / "npz" / "tile" / "xla" / split
        folder.mkdir(parents=True)
        (folder / f"{split}_graph.npz").write_bytes(b"not read by toy objectives")
    return root


@pytest.fixture
def two_collection_root(tmp_path: Path) -> Path:
    """A dataset root with a dummy file per split of tile:xla and layout:xla:default."""
    root = tmp_path / "data"
    for collection in ("tile/xla", "layout/xla/default"):
        for split in ("train", "valid"):
            folder = root / "npz" / collection / split
            folder.mkdir(parents=True)
            (folder / "g.npz").write_bytes(b"not read by toy objectives")
    return root


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """The runs folder of a test's campaigns (not made: a campaign makes it)."""
    return tmp_path / "runs"
