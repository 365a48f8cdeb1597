"""Every option of every command is one entry of hpo.cli.options.OPTIONS, spelled one way."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from parsers import COMMANDS

from hpo.cli import build_parser, main
from hpo.cli.options import OPTIONS, help_context

CONTEXT = help_context()


def _declared(action: argparse.Action) -> list[str]:
    """The names of OPTIONS that ``action`` is built from (its flags and its help)."""
    flags = tuple(action.option_strings) or (action.dest,)
    found = []
    for name, option in OPTIONS.items():
        text = option.help.format(**CONTEXT) if "{" in option.help else option.help
        if action.help == argparse.SUPPRESS and set(flags) <= set(option.aliases):
            found.append(name)
        elif flags == option.flags and action.help == text:
            found.append(name)
    return found


@pytest.mark.parametrize("command", sorted(COMMANDS), ids=" ".join)
def test_every_option_is_declared_once(command: tuple[str, ...]) -> None:
    parser = COMMANDS[command]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._VersionAction):
            continue
        assert _declared(action), f"hpo {' '.join(command)}: {action.option_strings or action.dest}"


def test_every_declared_option_is_used() -> None:
    used = {
        name
        for parser in COMMANDS.values()
        for action in parser._actions
        for name in _declared(action)
    }
    assert set(OPTIONS) - used == set()


def test_one_spelling_per_flag() -> None:
    """A flag shown by one command is never another's hidden alias, and its dest is the same."""
    shown = {f for o in OPTIONS.values() for f in o.flags if f.startswith("--")}
    aliases = {a for o in OPTIONS.values() for a in o.aliases}
    assert shown & aliases == set()
    dests: dict[str, set[str]] = {}
    for o in OPTIONS.values():
        dests.setdefault(o.flags[0], set()).add(o.dest)
    assert {f: d for f, d in dests.items() if len(d) > 1} == {}


@pytest.mark.parametrize(
    "command", [("run",), ("evaluate",), ("predict",), ("export",)], ids=" ".join
)
def test_collections_and_cache_dir_agree_across_commands(command: tuple[str, ...]) -> None:
    flags = {f for a in COMMANDS[command]._actions for f in a.option_strings}
    assert "--cache-dir" in flags
    if command != ("export",):
        assert {"--collections", "--collection"} <= flags
    defaults = {a.dest: a.default for a in COMMANDS[command]._actions}
    if command in (("evaluate",), ("predict",)):
        assert defaults["cache_dir"] == Path(".hpo_cache")


def test_the_old_collection_spelling_still_parses() -> None:
    args = build_parser().parse_args(["run", "--data", "D", "--collection", "tile:xla"])
    assert args.collections == "tile:xla"
    args = build_parser().parse_args(
        ["evaluate", "--model", "m", "--data", "D", "--collection", "x"]
    )
    assert args.collections == "x"


def test_data_check_takes_the_root_either_way(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check"]) == 2
    assert "needs a dataset root" in capsys.readouterr().err
    assert main(["data", "check", "a", "--data", "b"]) == 2
    assert "one dataset root" in capsys.readouterr().err


def test_the_initial_design_help_names_the_model_based_optimizers() -> None:
    """``--n-init``'s help lists the table's model-based optimizers, a registered one too, and
    no random one."""
    from hpo.campaign.optimizers import Optimizer, register, unregister

    register(Optimizer(name="test-tpe", multi_fidelity=False, facade=print, description="x"))
    try:
        context = help_context()
    finally:
        unregister("test-tpe")
    assert context["model_based"] == "model-hb, model-sh, bo, test-tpe"
    assert "(model-hb, model-sh, bo, test-tpe;" in OPTIONS["n-init"].help.format(**context)
