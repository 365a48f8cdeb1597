"""The command line's commands, walked from its parser: what the docs and option tests check."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from hpo.cli import build_parser


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))
            return
    yield path, parser


#: ``{command words: its parser}``, e.g. ``("runs", "show")``.
COMMANDS = dict(_commands(build_parser()))
