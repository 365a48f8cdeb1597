"""Fixtures shared by the campaign tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphs import write_toy_root


@pytest.fixture
def data_root(tmp_path: Path) -> Path:
    """A dataset root with one tiny tile:xla file per split (toy objectives do not read it)."""
    root = tmp_path / "data"
    return write_toy_root(root)


@pytest.fixture
def two_collection_root(tmp_path: Path) -> Path:
    """A dataset root with a tiny file per split of tile:xla and layout:xla:default."""
    root = tmp_path / "data"
    return write_toy_root(root, ("tile/xla", "layout/xla/default"))


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """The runs folder of a test's campaigns (not made: a campaign makes it)."""
    return tmp_path / "runs"
