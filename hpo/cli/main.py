"""The ``hpo`` command line: a thin layer over the library.

Each command group lives in its own module (``data``, ``campaign``, ``runs``, ``models``) that
adds its sub-parsers and handlers. :func:`main` turns every :class:`hpo.errors.HpoError` into
one line on stderr and exit code 2, Ctrl-C into exit code 130, and a reader that closed the
pipe (``hpo evaluate --json | head``) into a quiet exit.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from hpo import __version__
from hpo.errors import HpoError, UsageError

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
        _check_folders(args)
        return int(args.handler(args))
    except HpoError as exc:
        print(f"hpo: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hpo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader has gone: Python would complain again while flushing stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


#: Options naming a folder hpo creates when missing, and their flags.
_FOLDERS = {"runs_dir": "--runs-dir", "cache_dir": "--cache-dir"}


def _check_folders(args: argparse.Namespace) -> None:
    """Refuse a folder option that names an existing file, before any work (each command
    once failed deep inside with a NotADirectoryError traceback, one after making a run
    folder)."""
    for attr, flag in _FOLDERS.items():
        value = getattr(args, attr, None)
        if value is None:
            continue
        for path in (Path(value), *Path(value).parents):  # the nearest that exists
            if path.exists():
                if not path.is_dir():
                    where = "" if path == Path(value) else f" ({path} is a file)"
                    raise UsageError(f"{flag} {value}: exists and is not a folder{where}")
                break


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
