"""``hpo data synth`` and ``hpo data check`` on careless input: one line, nothing written."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from disks import FULL, disk_error, leftovers, one_line

from hpo.cli import main


def test_synth_onto_a_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "data.npz"
    target.write_text("mine")
    assert main(["data", "synth", "--out", str(target), "--scale", "tiny", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == f"hpo: error: --out {target}: is a file; give a folder for the dataset root\n"
    assert target.read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.npz"]


@pytest.mark.parametrize("entry", ["dangling", "loop", "folder", "device", "fifo"])
def test_a_bad_entry_under_train_is_one_line_and_the_same_line_for_check(
    tiny_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], entry: str
) -> None:
    """``data check`` once said "file not found" of a folder named ``x.npz`` (and of a broken
    link) where ``run`` said "a broken link or a folder?": one rule, one line, for both."""
    import shutil

    root = tmp_path / "root"
    shutil.copytree(tiny_root / "npz" / "tile", root / "npz" / "tile")
    bad = root / "npz" / "tile" / "xla" / "train" / "zz.npz"
    if entry == "folder":
        bad.mkdir()
        line = f"{bad}: a folder, not a graph file; move it out of {bad.parent}"
    elif entry == "device":  # once "a broken link (its target is missing, or it loops)"
        os.symlink("/dev/zero", bad)
        kind = "a link to /dev/zero, a character device"
        line = f"{bad}: not a regular file ({kind}); move it out of {bad.parent}"
    elif entry == "fifo":
        os.mkfifo(bad)
        line = f"{bad}: not a regular file (a named pipe); move it out of {bad.parent}"
    else:
        os.symlink(tmp_path / "nowhere.npz" if entry == "dangling" else bad, bad)
        line = f"{bad}: a broken link (its target is missing, or it loops); remove or fix it"
    runs = tmp_path / "runs"
    argv = ["run", "--data", str(root), "--collection", "tile", "--runs-dir", str(runs)]
    assert main([*argv, "--name", "r", "--trials", "2", "--quiet"]) == 2
    assert capsys.readouterr().err == f"hpo: error: {line}\n"
    assert not runs.exists()
    assert main(["data", "check", str(root)]) == 1
    assert f"hpo: bad file: {line}\n" in capsys.readouterr().err


def test_synth_on_a_full_disk_is_one_line_and_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A full disk once ended in a traceback (two, chained) that named no file; a second
    synth, once there is room, fills the same root."""
    import numpy as np

    root = tmp_path / "d"

    def full(*args: Any, **kwargs: Any) -> None:
        raise disk_error(FULL)  # a write to an open file names none

    monkeypatch.setattr(np.lib.format, "write_array", full)
    assert main(["data", "synth", "--out", str(root), "--scale", "tiny", "--quiet"]) == 2
    err = one_line(capsys.readouterr().err)
    first = root / "npz" / "tile" / "xla" / "train"
    assert re.fullmatch(
        rf"hpo: error: {first}/\w+_[-\w]+\.npz: No space left on device; free space there or "
        rf"choose another --out; {root} is left unfinished \(hpo data check refuses it\): run "
        r"data synth again with the same --out, --scale and --seed, or delete it\n",
        err,
    ), err
    assert leftovers(root) == []
    assert not list(root.rglob("*.npz"))
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    assert main(["data", "synth", "--out", str(root), "--scale", "tiny", "--quiet"]) == 0
    assert main(["data", "check", str(root), "--quick"]) == 0


@pytest.mark.parametrize(
    ("flags", "option", "value"),
    [
        (("--seed", "-1"), "--seed", "-1"),
        (("--seed", "4294967296"), "--seed", "4294967296"),
        (("--law", "random", "--law-seed", "-5"), "--law-seed", "-5"),
    ],
)
def test_synth_seeds_are_bounded_in_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: tuple[str, ...],
    option: str,
    value: str,
) -> None:
    """A negative seed once ended in numpy's traceback (``expected non-negative integer``),
    exit code 1; seeds are 0..2^32-1, as ``hpo run`` takes them."""
    root = tmp_path / "d"
    with pytest.raises(SystemExit) as stop:
        main(["data", "synth", "--out", str(root), "--scale", "tiny", "--quiet", *flags])
    assert stop.value.code == 2
    assert one_line(capsys.readouterr().err) == (
        f"hpo data synth: error: argument {option}: invalid seed '{value}' (expected an integer "
        "from 0 to 4294967295) (see hpo data synth --help)\n"
    )
    assert not root.exists()


@pytest.mark.parametrize("stop", ["full disk", "ctrl-c"])
def test_a_root_synth_did_not_finish_is_incomplete_for_data_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], stop: str
) -> None:
    """A full disk at the last graph left 39 of 40 graphs and law.json, Ctrl-C 108 of 194
    files, and data check exited 0 on either; synth.json, written last, marks a whole root."""
    import numpy as np

    root = tmp_path / "d"
    real = np.lib.format.write_array
    written: list[int] = []

    def fail_late(*args: Any, **kwargs: Any) -> None:
        written.append(1)
        if len(written) > 150:  # a tiny root writes about 200 arrays
            if stop == "ctrl-c":
                raise KeyboardInterrupt
            raise disk_error(FULL)
        real(*args, **kwargs)

    monkeypatch.setattr(np.lib.format, "write_array", fail_late)
    code = main(["data", "synth", "--out", str(root), "--scale", "tiny", "--quiet"])
    assert code == (130 if stop == "ctrl-c" else 2)
    monkeypatch.undo()
    capsys.readouterr()
    assert list(root.rglob("*.npz"))  # graphs written before it stopped
    assert (root / "law.json").is_file()
    assert not (root / "synth.json").exists()
    assert main(["data", "check", str(root), "--quick"]) == 1
    assert capsys.readouterr().err.endswith(
        f"hpo: incomplete: {root}: data synth did not finish this root (it holds law.json but "
        "not synth.json, written after the last graph); run data synth again with the same "
        "--out, --scale and --seed\n"
    )
    assert main(["data", "synth", "--out", str(root), "--scale", "tiny", "--quiet"]) == 0
    summary = json.loads((root / "synth.json").read_text())
    assert summary["n_files"] == len(list(root.rglob("*.npz"))) == 40
    assert main(["data", "check", str(root), "--quick"]) == 0
