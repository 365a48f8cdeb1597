"""What a graph file must be before its arrays are read: an entry of a split folder that is a
readable file with a UTF-8 name, and a zip archive (:func:`open_archive`) whose members are
read whole only when their size is what their header says (:func:`read_key`).

Every command lists graphs through :func:`hpo.data.load.list_graphs` and ``data check`` walks
the same folders: both ask :func:`graph_file_problem`, so they accept and refuse the same
entries with the same line (they once disagreed on a folder named ``x.npz``: "file not
found" against "a folder?").
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np

from hpo.data.npyzip import ARCHIVE_ERRORS, check_member_size
from hpo.errors import DataFormatError

__all__ = ["graph_file_problem", "open_archive", "read_key"]

#: Bytes read from a file's start to tell what it is, when it is no zip archive.
_HEAD_BYTES = 4096


def graph_file_problem(path: Path) -> str | None:
    """Why an ``*.npz`` entry of a split folder cannot be a graph file (one line naming it),
    ``None`` if it can; every command that lists graphs, ``data check`` too, says the same.

    A name that is not UTF-8 is refused: a graph's id is its file name, written as text
    (run records, ``predict``'s CSV); ``predict`` once ranked every graph before failing
    on it.
    """
    try:
        path.name.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        return f"{shown}: the file name is not UTF-8 (graph ids are written as text); rename it"
    if path.is_dir():
        return f"{path}: a folder, not a graph file; move it out of {path.parent}"
    if path.is_file():
        return None
    if not path.exists():  # follows a link
        if path.is_symlink():
            return f"{path}: a broken link (its target is missing, or it loops); remove or fix it"
        if not os.path.lexists(path):
            return f"{path}: file not found"
    kind = _kind(path)
    if path.is_symlink():  # to a device, say: not broken, and no graph file either
        kind = f"a link to {os.path.realpath(path)}, {kind}"
    return f"{path}: not a regular file ({kind}); move it out of {path.parent}"


def _kind(path: Path) -> str:
    """What the entry ``path`` (followed if a link) is, when it is no file and no folder."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return "unreadable"
    for test, kind in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return kind
    return "not a file"


def _check_zip_signature(path: Path) -> None:
    """Refuse a file that is no zip archive before numpy does: numpy takes anything without
    a zip or ``.npy`` signature for a pickle, and says so (of a file of zero bytes, too)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError as exc:
        raise DataFormatError(f"{path}: not readable ({exc.strerror})") from exc
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"\x93NUMPY")):
        return  # a zip archive (np.load checks it), or a lone .npy array (refused next)
    if not head:
        why = "the file is empty"
    elif not any(head):
        why = "not a zip file: it starts with zero bytes, as a file cut short can"
    else:
        why = "not a zip file"
    raise DataFormatError(f"{path}: not a readable .npz archive ({why})")


def open_archive(path: Path) -> np.lib.npyio.NpzFile:
    """Open the graph file ``path`` as an ``.npz`` archive (nothing unpickled).

    Raises
    ------
    DataFormatError
        If it is not a file (:func:`graph_file_problem`), no zip archive, or a lone array.
    """
    if not path.is_file():
        raise DataFormatError(graph_file_problem(path) or f"{path}: not a file")
    _check_zip_signature(path)
    try:
        npz = np.load(path, allow_pickle=False)
    except ARCHIVE_ERRORS as exc:
        raise DataFormatError(f"{path}: not a readable .npz archive ({exc})") from exc
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise DataFormatError(f"{path}: expected an .npz archive, found a single .npy array")
    return npz


def read_key(npz: np.lib.npyio.NpzFile, path: Path, key: str) -> np.ndarray:
    """Member ``key`` of the graph file ``path`` opened as ``npz``, read whole.

    Raises
    ------
    DataFormatError
        If the key is missing, or its member's size or data is not what its header says.
    """
    if key not in npz.files:
        raise DataFormatError(f"{path}: missing key '{key}' (found {', '.join(sorted(npz.files))})")
    if npz.zip is not None:  # an archive np.load opened from a file always has one
        check_member_size(npz.zip, path, key)
    try:
        return np.asarray(npz[key])
    except ARCHIVE_ERRORS as exc:
        raise DataFormatError(f"{path}: key '{key}': unreadable ({exc})") from exc
