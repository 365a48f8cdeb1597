from __future__ import annotations

import subprocess
import sys

import pytest

import hpo


@pytest.mark.parametrize("name", sorted(set(hpo.__all__) - {"__version__"}))
def test_public_names_resolve(name: str) -> None:
    assert getattr(hpo, name) is not None


def test_unknown_name() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = hpo.nope  # type: ignore[attr-defined]


def test_import_is_light() -> None:
    heavy = "('smac', 'lightgbm', 'dask', 'matplotlib')"
    code = f"import sys, hpo; print(any(m in sys.modules for m in {heavy}))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
