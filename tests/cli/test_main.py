"""The command line's own handling: folder options that name a file, and a closed pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hpo.cli.main import main


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--data", "{root}", "--trials", "1", "--runs-dir", "{file}"],
        ["run", "--data", "{root}", "--trials", "1", "--cache-dir", "{file}"],
        ["runs", "list", "--runs-dir", "{file}"],
        ["run", "--data", "{root}", "--trials", "1", "--runs-dir", "{file}/runs"],
        ["evaluate", "--model", "{root}", "--data", "{root}", "--cache-dir", "{file}"],
    ],
)
def test_a_folder_option_naming_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """Each once ended in a NotADirectoryError traceback deep inside (``run`` after making
    its run folder), or said there were no runs."""
    afile = tmp_path / "afile"
    afile.write_text("x")
    filled = [a.format(root=tmp_path / "data", file=afile) for a in argv]
    assert main(filled) == 2
    err = capsys.readouterr().err
    assert f"{afile}" in err
    assert "exists and is not a folder" in err
    assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # nothing made


CHILD = """
import argparse, importlib, sys
cli = importlib.import_module("hpo.cli.main")  # the package's `main` is the function

def handler(args):
    for _ in range(100_000):
        print("x" * 100)
    return 0

def build():
    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=handler)
    return parser

cli.build_parser = build
sys.exit(cli.main([]))
"""


def test_a_reader_that_closes_the_pipe_ends_it_quietly() -> None:
    """``hpo evaluate --json | head`` once ended in a BrokenPipeError traceback; the command
    now goes on to its end, its output dropped."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdout is not None
    assert child.stderr is not None
    child.stdout.read(10)
    child.stdout.close()
    err = child.stderr.read().decode()
    assert child.wait(timeout=60) == 0
    assert "Traceback" not in err, err


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["run", "--bogus"],
            "hpo run: error: unrecognized arguments: --bogus (see hpo run --help)",
        ),
        (
            ["predict", "--data", "d"],
            "hpo predict: error: the following arguments are required: --model, --out (see hpo "
            "predict --help)",
        ),
        ([], "hpo: error: the following arguments are required: COMMAND (see hpo --help)"),
        (
            ["run", "--walltime", "soon"],
            "hpo run: error: argument --walltime: invalid duration 'soon' (expected seconds or "
            "e.g. 90s, 30m, 2h, 1h30m) (see hpo run --help)",
        ),
    ],
)
def test_argument_errors_are_one_line(
    argv: list[str], line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse printed its usage first (13 lines for ``hpo run``), burying the error."""
    with pytest.raises(SystemExit, match="^2$"):
        main(argv)
    captured = capsys.readouterr()
    assert captured.err == line + "\n"
    assert captured.out == ""
