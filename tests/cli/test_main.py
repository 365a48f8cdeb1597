"""The command line's own handling: folder options that name a file, a closed pipe, and a
disk that refuses a write."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from disks import FULL, READ_ONLY, disk_error, one_line

from hpo.cli.main import main
from hpo.errors import StorageError

cli_main = importlib.import_module("hpo.cli.main")  # the package's `main` is the function


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


def test_ctrl_c_while_the_parser_is_built_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C in the start-up (building the parser imports the stages, about 2 s) once ended
    in a 25-line KeyboardInterrupt traceback."""

    def build() -> argparse.ArgumentParser:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_main, "build_parser", build)
    assert main(["runs", "list"]) == 130
    assert capsys.readouterr().err == "hpo: interrupted\n"


STARTING = """
import importlib, sys, time
cli = importlib.import_module("hpo.cli.main")
build = cli.build_parser

def ready():
    print("ready", file=sys.stderr, flush=True)
    time.sleep(30)  # the start-up held open, so the signal lands inside it on any machine
    return build()

cli.build_parser = ready
sys.exit(cli.main(["runs", "list", "--runs-dir", sys.argv[1]]))
"""


def test_ctrl_c_in_the_start_up_imports_is_interrupted(tmp_path: Path) -> None:
    """The real start-up: SIGINT while ``hpo runs list`` imports what its parser needs."""
    import signal

    child = subprocess.Popen(
        [sys.executable, "-c", STARTING, str(tmp_path / "runs")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    assert child.stderr.readline() == "ready\n"
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert (child.returncode, out, err) == (130, "", "hpo: interrupted\n"), err


@pytest.mark.parametrize(
    "command", [["runs", "list"], ["runs", "show", "fake"], ["runs", "show", "fake", "--json"]]
)
def test_a_result_on_a_full_disk_is_one_line(
    tmp_path: Path, tiny_root: Path, command: list[str]
) -> None:
    """``hpo runs show r --json > full/x.json`` once exited 0 with the file cut short: a
    command's own result that the disk refuses ends non-zero, in one line."""
    from fake_runs import build_fake_run

    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root)
    tests = Path(__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": f"{tests}{os.pathsep}{tests.parent}"}
    main_code = "import sys; from hpo.cli import main; sys.exit(main())"
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-c", main_code, *command, "--runs-dir", str(runs)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        "hpo: error: stdout (/dev/full): No space left on device; the output is incomplete: "
        "free space there or send it elsewhere\n"
    )


@pytest.mark.parametrize(
    "command",
    [["runs", "list"], ["runs", "show", "fake"], ["runs", "trials", "fake", "--json"]],
)
def test_a_result_for_a_closed_stdout_is_one_line(
    tmp_path: Path, tiny_root: Path, command: list[str]
) -> None:
    """``hpo runs trials r --json >&-`` once exited 0 with nothing written (probe2 #55): a
    command's own result that has nowhere to go ends non-zero, in one line."""
    from fake_runs import build_fake_run

    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root)
    tests = Path(__file__).parents[1]
    env = {**os.environ, "PYTHONPATH": f"{tests}{os.pathsep}{tests.parent}"}
    main_code = "import sys; from hpo.cli import main; sys.exit(main())"
    argv = [sys.executable, "-c", main_code, *command, "--runs-dir", str(runs)]
    proc = subprocess.run(
        ["sh", "-c", 'exec 1>&-; exec "$@"', "sh", *argv],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == "hpo: error: stdout is closed: the output was not written\n"


def _parser_whose_command_raises(exc: OSError) -> Any:
    def handler(args: argparse.Namespace) -> int:
        raise exc

    def build() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="hpo")
        parser.add_argument("--runs-dir", type=Path, default=Path("runs"))
        parser.set_defaults(handler=handler)
        return parser

    return build


@pytest.mark.parametrize(
    ("code", "action"),
    [
        (FULL, "free space there or choose another --runs-dir"),
        (READ_ONLY, "choose a --runs-dir on a writable file system"),
        (errno.EACCES, "choose a --runs-dir you may write to"),
        (errno.EDQUOT, "free space there (your quota is used up) or choose another --runs-dir"),
    ],
)
def test_a_disk_that_refuses_a_write_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    code: int, action: str,
) -> None:  # fmt: skip
    """A full or read-only disk met anywhere in a command once ended in a traceback; the net
    under every command names the path, the reason and, from the option that chose the
    place, what to do."""
    path = tmp_path / "runs" / "r" / "trials.jsonl"
    monkeypatch.setattr(
        cli_main, "build_parser", _parser_whose_command_raises(disk_error(code, path))
    )
    assert main(["--runs-dir", str(tmp_path / "runs")]) == 2
    err = one_line(capsys.readouterr().err)
    assert err == f"hpo: error: {path}: {os.strerror(code)}; {action}\n"


def test_a_storage_error_keeps_its_own_words(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    exc = StorageError(FULL, os.strerror(FULL), "runs/r/run.png", option="--out")
    monkeypatch.setattr(cli_main, "build_parser", _parser_whose_command_raises(exc))
    assert main([]) == 2
    assert capsys.readouterr().err == (
        "hpo: error: runs/r/run.png: No space left on device; free space there or choose "
        "another --out\n"
    )


def test_other_os_errors_are_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a disk that refuses a write is the user's to fix; anything else is a bug to see."""
    exc = disk_error(errno.EBADF)
    monkeypatch.setattr(cli_main, "build_parser", _parser_whose_command_raises(exc))
    with pytest.raises(OSError, match="Bad file descriptor"):
        main([])


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
