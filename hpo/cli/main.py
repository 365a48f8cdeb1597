"""The ``hpo`` command line: a thin layer over the library.

Each command group lives in its own module (``data``, ``campaign``, ``runs``, ``models``) that
adds its sub-parsers and handlers. :func:`main` turns every :class:`hpo.errors.HpoError` into
one line on stderr and exit code 2 and Ctrl-C into exit code 130; a reader that closed the
pipe (``hpo run ... | head -3``) or a closed stdout never stops a command: its output ends,
the work goes on. An error in the arguments is one line too, the usage left to ``--help``.
A disk that refuses a write (full, read-only, forbidden) is one line as well, naming the path
and what to do, wherever in a command it happens: the places hpo writes name their own path
(:class:`hpo.errors.StorageError`), and this is the net under them.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import io
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from hpo import __version__
from hpo.cli import INTERRUPTED, start_up_interrupts
from hpo.errors import STORAGE_ERRNOS, HpoError, StorageError, UsageError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every sub-command."""
    from hpo.cli import campaign as cli_campaign
    from hpo.cli import data as cli_data
    from hpo.cli import explain as cli_explain
    from hpo.cli import models as cli_models
    from hpo.cli import runs as cli_runs

    parser = _Parser(
        prog="hpo",
        description="Tune LightGBM lambdarank runtime models for TpuGraphs with SMAC3.",
    )
    parser.add_argument("--version", action="version", version=f"hpo {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    cli_data.add_parsers(sub)
    cli_campaign.add_parsers(sub)
    cli_runs.add_parsers(sub)
    cli_models.add_parsers(sub)
    cli_explain.add_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line and return its exit code.

    Parameters
    ----------
    argv
        Arguments without the program name; ``None`` reads ``sys.argv``.
    """
    try:
        with start_up_interrupts():  # building the parser imports the stages
            parser = build_parser()
        return _run(parser, argv)
    except KeyboardInterrupt:
        print(INTERRUPTED[0], file=sys.stderr)
        return INTERRUPTED[1]


def _run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse ``argv`` and run its command under the nets of :func:`main` (but Ctrl-C)."""
    args, extras = parser.parse_known_args(argv)
    leaf = vars(args).pop(_LEAF, parser)
    if extras:  # told by the (sub-)command they were given to, as argparse would not
        leaf.error(f"unrecognized arguments: {' '.join(extras)}")
    real_stdout = sys.stdout
    sys.stdout = safe = _SafeStdout(real_stdout)
    try:
        _check_folders(args)
        code = int(args.handler(args))
        safe.flush()  # what is still buffered is the command's output too
        return _output_lost(safe, args, code)
    except OSError as exc:  # a StorageError, or an unwritable path no write site named
        if not isinstance(exc, StorageError) and exc.errno not in STORAGE_ERRNOS:
            raise
        err = exc if isinstance(exc, StorageError) else StorageError.of(exc)
        print(f"hpo: error: {err.line(_option_holding(err.filename, args))}", file=sys.stderr)
        return 2
    except HpoError as exc:
        print(f"hpo: error: {exc}", file=sys.stderr)
        return 2
    finally:
        sys.stdout = real_stdout


#: Where :class:`_Parser` notes the (sub-)command parser that parsed last, the one to name in
#: an error about arguments left over.
_LEAF = "_hpo_parser"


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose errors are one line (``hpo run: error: ... (see hpo run
    --help)``) and exit code 2: the usage argparse prints first was up to 13 lines, burying
    the error; ``--help`` is where it belongs. Sub-command parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # a value starting with '-' and a digit (--walltime -5m, --configs -1,0) is a value, for
        # its option's own check to refuse: argparse takes only plain negative numbers so, and
        # said "expected one argument" of the rest. No option of hpo is spelled -<digit>.
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def error(self, message: str) -> NoReturn:  # noqa: D102
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(  # type: ignore[override]  # noqa: D102
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if not hasattr(parsed, _LEAF):  # a sub-command's parser finished first
            setattr(parsed, _LEAF, self)
        return parsed, extras


def _output_lost(safe: _SafeStdout, args: argparse.Namespace, code: int) -> int:
    """The exit code of a command whose stdout failed on a full or failing disk, or was closed
    (``>&-``): 2, with one line, when stdout held its result (``--json``, a table, a CSV); a
    campaign's stdout is its log (``stdout_is_log``): the run folder holds the result, so one
    note (a full disk) and ``code``. A reader that left (EPIPE) took what it wanted: quiet."""
    if safe.lost is None:
        if not safe.closed_out or getattr(args, "stdout_is_log", False):
            return code
        print("hpo: error: stdout is closed: the output was not written", file=sys.stderr)
        return 2
    err = StorageError.of(
        safe.lost,
        f"stdout ({safe.target})",
        action="the output is incomplete: free space there or send it elsewhere",
    )
    if getattr(args, "stdout_is_log", False):
        print(f"hpo: note: {err} (the run folder holds every trial)", file=sys.stderr)
        return code
    print(f"hpo: error: {err}", file=sys.stderr)
    return 2


class _SafeStdout(io.TextIOBase):
    """stdout that a reader who left (``hpo run ... | head -3``), or a closed descriptor
    (``>&-``), cannot stop: the first failed write ends the output, never the command.

    A campaign goes on writing its run folder; its log lines are simply no longer shown.
    A disk that refuses the output (full, failing) ends it the same way, but is kept in
    ``lost`` (with ``target``, where stdout went): what was written is then cut short, and
    :func:`main` says so once the command is done. Output meant for a closed stdout sets
    ``closed_out``: nothing of it was written, which :func:`main` says as well.
    """

    def __init__(self, stream: Any) -> None:
        super().__init__()
        self._stream = stream
        self._gone = stream is None
        self.lost: OSError | None = None
        self.closed_out = False
        self.target = "stdout"

    def _give_up(self, exc: OSError | ValueError) -> None:
        self._gone = True
        self.closed_out = isinstance(exc, ValueError) or exc.errno == errno.EBADF
        if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:  # not EPIPE, not EBADF
            self.lost = exc
            with contextlib.suppress(OSError, ValueError):
                self.target = os.readlink(f"/proc/self/fd/{self._stream.fileno()}")
        with contextlib.suppress(OSError, ValueError):  # nothing more to flush at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), self._stream.fileno())

    def write(self, text: str) -> int:
        if self._stream is None and text:
            self.closed_out = True
        if not self._gone:
            try:
                self._stream.write(text)
            except (OSError, ValueError) as exc:  # EPIPE, EBADF; ValueError: closed file
                self._give_up(exc)
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except (OSError, ValueError) as exc:
                self._give_up(exc)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return not self._gone and bool(self._stream.isatty())

    def fileno(self) -> int:
        if self._stream is None:
            raise OSError("stdout is closed")
        return int(self._stream.fileno())

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._stream, "encoding", None) or "utf-8")


#: Options naming a place hpo writes, and their flags.
_WRITTEN = {"runs_dir": "--runs-dir", "cache_dir": "--cache-dir", "out": "--out"}


def _option_holding(path: str | None, args: argparse.Namespace) -> str | None:
    """The flag of the option whose place holds ``path`` (the nearest), for the line that says
    where else to write; ``None`` when no option chose it."""
    if path is None:
        return None
    found = Path(os.path.abspath(path))
    best: tuple[int, str] | None = None
    for attr, flag in _WRITTEN.items():
        value = getattr(args, attr, None)
        if not isinstance(value, (str, Path)):
            continue
        place = Path(os.path.abspath(value))
        if (found == place or place in found.parents) and (
            best is None or len(place.parts) > best[0]
        ):
            best = (len(place.parts), flag)
    return None if best is None else best[1]


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
