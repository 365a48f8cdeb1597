"""Load a script of ``bench/`` as a module, for the tests of the benchmarks."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(name: str) -> ModuleType:
    """A fresh module of ``bench/<name>.py``.

    ``bench/`` goes on ``sys.path`` first, because some scripts import their siblings
    (``bench_laws_campaign`` imports ``bench_laws`` and ``bench_ablation``).
    """
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass of the script looks its module up by name
    spec.loader.exec_module(module)
    return module
