"""Tests of the deletion rule (hpo/ownership.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from disks import as_left_by, dead_pid

from hpo.errors import UsageError
from hpo.ownership import (
    TEMP_SUFFIX,
    check_replaceable,
    refuse_protected,
    sweep_stale_temps,
    temp_prefix,
)


def _never(_: Path) -> bool:
    raise AssertionError("owned() must not be asked")


def test_missing_and_empty_paths_are_always_replaceable(tmp_path: Path) -> None:
    check_replaceable(tmp_path / "new", "--out", kind="thing", owned=_never)
    (tmp_path / "empty").mkdir()
    check_replaceable(tmp_path / "empty", "--out", kind="thing", owned=_never)


def test_a_symlink_is_refused_before_its_target_is_asked(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "dangling")
    with pytest.raises(UsageError, match=r"--out .*link: is a symlink"):
        check_replaceable(tmp_path / "link", "--out", kind="thing", owned=_never)


def test_only_what_owned_accepts_is_replaceable(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    check_replaceable(tmp_path / "f", "--out", kind="thing", owned=lambda p: True)
    with pytest.raises(UsageError, match=r"f: exists and is not a thing hpo wrote"):
        check_replaceable(tmp_path / "f", "--out", kind="thing", owned=lambda p: False)


def test_protected_folders_and_their_parents_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "a" / "data"
    data.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a")
    with pytest.raises(UsageError, match=r"data: is the data root"):
        refuse_protected(data, "--name", {"the data root": data, "the cache": None})
    with pytest.raises(UsageError, match=r"holds the data root"):
        refuse_protected(tmp_path, "--name", {"the data root": data})
    with pytest.raises(UsageError, match=r"is the working directory"):
        refuse_protected(Path("."), "--name")
    refuse_protected(data / "runs", "--name", {"the data root": tmp_path / "other"})


def test_the_sweep_removes_only_what_a_dead_process_of_this_host_left(tmp_path: Path) -> None:
    final = tmp_path / "table.X.npy"
    mine = tmp_path / f"{temp_prefix(final)}abc{TEMP_SUFFIX}"
    dead_file = as_left_by(mine, dead_pid())
    dead_folder = as_left_by(
        tmp_path / f"{temp_prefix(tmp_path / 'm')}xyz{TEMP_SUFFIX}", dead_pid()
    )
    smac = as_left_by(
        tmp_path / f"{temp_prefix(tmp_path / 'runhistory.json')}{TEMP_SUFFIX}.json", dead_pid()
    )
    elsewhere = tmp_path / dead_file.name.replace(dead_file.name.split(".")[-2][:8], "00000000")
    for path in (mine, dead_file, smac, elsewhere, tmp_path / "table.X.npy", tmp_path / "x.tmp"):
        path.write_text("x")
    dead_folder.mkdir()
    (dead_folder / "model.json").write_text("{}")
    link = as_left_by(tmp_path / f"{temp_prefix(tmp_path / 'l')}{TEMP_SUFFIX}", dead_pid())
    link.symlink_to(tmp_path / "table.X.npy")
    assert sweep_stale_temps(tmp_path) == 3
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {mine.name, elsewhere.name, "table.X.npy", "x.tmp", link.name}


def test_the_sweep_of_a_folder_it_cannot_read_removes_nothing(tmp_path: Path) -> None:
    assert sweep_stale_temps(tmp_path / "missing") == 0
