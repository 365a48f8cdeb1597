"""The progress bar of the commands that read many files (``export``, ``evaluate``, ``runs``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from rich.console import Console

__all__ = ["progress_bar"]


@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Any]:
    """A rich progress bar on stderr, handed out as a ``progress(done, total, label)``; only on
    a terminal (elsewhere rich drew nothing but an empty line, ahead of an error's one line)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("[bold]{task.fields[what]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as bar:
        task = bar.add_task("", total=None, what=label)

        def update(done: int, total: int, text: str) -> None:
            bar.update(task, completed=done, total=total, description=text)

        yield update
