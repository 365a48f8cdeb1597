"""Stage 6, the command line: a thin layer over the library.

``hpo.cli:main`` is the console script; each command group lives in its own module.

Ctrl-C in the start-up: one line and exit code 130, whatever is being imported.

Most of ``hpo``'s start-up is imports (the stages, for the parser: about 2 s). Nothing is
written yet, so there is nothing to clean up; and a KeyboardInterrupt raised inside an import
is not reliably one: landing in one of importlib's module-lock callbacks it is printed as
"Exception ignored" and the command goes on, elsewhere it was a 25-line traceback. So while
the command line is imported (:mod:`hpo.cli`) and its parser built (:func:`hpo.cli.main.main`),
SIGINT ends the process at once. The handler below imports nothing heavy: it is the first of the
command line to load.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator

#: The line of an interrupted command, and its exit code.
INTERRUPTED = ("hpo: interrupted", 130)


def _stop(signum: int, frame: object) -> None:
    os.write(2, f"{INTERRUPTED[0]}\n".encode())
    os._exit(INTERRUPTED[1])


@contextlib.contextmanager
def start_up_interrupts() -> Iterator[None]:
    """Inside, SIGINT ends the process with the line of :data:`INTERRUPTED` and its code.

    Only in place of Python's own handler: an ignored SIGINT (``hpo ... &`` in a script), a
    caller's handler, or a thread other than the main one leave signals as they are.
    """
    try:
        ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        if ours:
            signal.signal(signal.SIGINT, _stop)
    except ValueError:  # not the main thread
        ours = False
    try:
        yield
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)


with start_up_interrupts():  # Ctrl-C while the console script imports the command line
    from hpo.cli.main import (
        build_parser,
        main,
    )

__all__ = [
    "INTERRUPTED",
    "build_parser",
    "main",
    "start_up_interrupts",
]
