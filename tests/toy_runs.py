"""One run of each kind (single, cross-validated, per-subset), made by SMAC with the toy
objective in a few seconds: for the readers that must handle every kind of run (``runs
trials``, the DeepCAVE export)."""

from __future__ import annotations

import io
from pathlib import Path

from graphs import write_toy_root
from rich.console import Console
from toy_objectives import ToyObjective, toy_config

from hpo.campaign import run_campaign

#: The collections of the toy runs (the toy objective scores these two).
TWO = ("tile:xla", "layout:xla:default")
#: name -> settings of each kind of run.
KINDS = {"single": {}, "cv": {"cv": 2}, "subsets": {"per": "collection"}}


def build_toy_runs(base: Path, trials: int = 9) -> Path:
    """Write the three runs (named as :data:`KINDS`) under ``base/runs``; returns that folder."""
    root = base / "data"
    write_toy_root(root, ("tile/xla", "layout/xla/default"))
    console = Console(file=io.StringIO())
    for name, extra in KINDS.items():
        cfg = toy_config(base / "runs", root, name=name, collections=TWO, trials=trials, **extra)
        run_campaign(cfg, objective=ToyObjective(), quiet=True, console=console)
    return base / "runs"
