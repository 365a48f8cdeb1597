"""The ``hpo`` command line: a thin layer over the library.

Each command group lives in its own module (``data``, ``campaign``, ``runs``, ``models``) that
adds its sub-parsers and handlers. :func:`main` turns every :class:`hpo.errors.HpoError` into
one line on stderr and exit code 2, and Ctrl-C into exit code 130.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hpo import __version__
from hpo.errors import HpoError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every sub-command."""
    from hpo.cli import campaign as cli_campaign
    from hpo.cli import data as cli_data
    from hpo.cli import models as cli_models
    from hpo.cli import runs as cli_runs

    parser = argparse.ArgumentParser(
        prog="hpo",
        description="Tune LightGBM lambdarank runtime models for TpuGraphs with SMAC3.",
    )
    parser.add_argument("--version", action="version", version=f"hpo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    cli_data.add_parsers(sub)
    cli_campaign.add_parsers(sub)
    cli_runs.add_parsers(sub)
    cli_models.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code.

    Parameters
    ----------
    argv
        Arguments without the program name; ``None`` reads ``sys.argv``.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except HpoError as exc:
        print(f"hpo: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hpo: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
