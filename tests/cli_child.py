"""Run ``hpo`` in a child process with a toy objective, for tests of what the process's own
stdout and signals do: ``python tests/cli_child.py run --data ROOT ...`` (every argument goes to
:func:`hpo.cli.main`). Each trial sleeps 0.1 s.
"""

from __future__ import annotations

import sys
from typing import Any

from toy_objectives import ToyObjective

import hpo.campaign.objective
from hpo.cli import main


def _build(cfg: Any, progress: Any = None, **_: Any) -> tuple[Any, None]:
    return ToyObjective(sleep=0.1), None


if __name__ == "__main__":
    hpo.campaign.objective.build_objective = _build  # type: ignore[assignment]
    sys.exit(main(sys.argv[1:]))
