"""Stage 6, the command line: a thin layer over the library.

``hpo.cli:main`` is the console script; each command group lives in its own module.
"""

from __future__ import annotations

from hpo.cli.main import (
    build_parser,
    main,
)

__all__ = [
    "build_parser",
    "main",
]
