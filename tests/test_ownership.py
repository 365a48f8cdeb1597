"""Tests of the deletion rule (hpo/ownership.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpo.errors import UsageError
from hpo.ownership import check_replaceable, refuse_protected


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
