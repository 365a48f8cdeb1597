"""Shared fixtures: tiny generated datasets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny synthetic dataset (all collections and splits), generated once per session."""
    from hpo.synth.dataset import generate_dataset

    root = tmp_path_factory.mktemp("tiny")
    generate_dataset(root, scale="tiny", seed=0)
    return root
