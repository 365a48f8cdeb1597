"""Shared fixtures: tiny generated datasets."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import pytest

# A launcher that ignores SIGINT (a script's background job) passes that on to every child, and
# the Ctrl-C tests send SIGINT to children: restore Python's own handler, which exec resets to
# the default in each child, as a terminal would have it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny synthetic dataset (all collections and splits), generated once per session."""
    from hpo.synth.dataset import generate_dataset

    root = tmp_path_factory.mktemp("tiny")
    generate_dataset(root, scale="tiny", seed=0)
    return root


@pytest.fixture(scope="session")
def tiny_tables(tiny_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Feature tables of every collection of ``tiny_root`` (train, valid), memory-mapped from
    a feature cache as a campaign's are; built once per session."""
    from hpo.data.load import COLLECTIONS
    from hpo.features import ExtractOptions, FeatureSpec, build_tables

    return build_tables(
        tiny_root,
        COLLECTIONS,
        ("train", "valid"),
        FeatureSpec(),
        extract=ExtractOptions(cache_dir=tmp_path_factory.mktemp("cache"), n_jobs=1),
    )


@pytest.fixture(autouse=True)
def _cwd_is_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs in its own empty working directory.

    Defaults such as ``runs/``, ``models/NAME`` and ``.hpo_cache/`` are relative to the working
    directory; a test must neither read what a real campaign left there (the README's demo
    leaves ``runs/demo``) nor leave files there itself.
    """
    monkeypatch.chdir(tmp_path)
