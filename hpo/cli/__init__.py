"""Stage 6, the command line: a thin layer over the library.

``hpo.cli:main`` is the console script; each command group lives in its own module.
"""

from __future__ import annotations

from hpo.cli.interrupts import start_up_interrupts

with start_up_interrupts():  # Ctrl-C while the console script imports the command line
    from hpo.cli.main import (
        build_parser,
        main,
    )

__all__ = [
    "build_parser",
    "main",
]
