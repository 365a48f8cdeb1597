"""What a graph file must be before its arrays are read: an entry of a split folder that is a
readable file with a UTF-8 name, and a zip archive.

Every command lists graphs through :func:`hpo.data.load.list_graphs` and ``data check`` walks
the same folders: both ask :func:`graph_file_problem`, so they accept and refuse the same
entries with the same line (they once disagreed on a folder named ``x.npz``: "file not
found" against "a folder?").
"""

from __future__ import annotations

import os
from pathlib import Path

from hpo.errors import DataFormatError

__all__ = ["check_zip_signature", "graph_file_problem"]

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
    if path.is_symlink():
        return f"{path}: a broken link (its target is missing, or it loops); remove or fix it"
    if not os.path.lexists(path):
        return f"{path}: file not found"
    return f"{path}: not a regular file; move it out of {path.parent}"


def check_zip_signature(path: Path) -> None:
    """Refuse a file that is no zip archive before numpy does: numpy takes anything without
    a zip or ``.npy`` signature for a pickle, and says so (of a file of zero bytes, too)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError as exc:
        raise DataFormatError(f"{path}: not readable ({exc.strerror})") from exc
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06", b"\x93NUMPY")):
        return  # a zip archive (np.load checks it), or a lone .npy array (refused after)
    if not head:
        why = "the file is empty"
    elif not any(head):
        why = "not a zip file: it starts with zero bytes, as a file cut short can"
    else:
        why = "not a zip file"
    raise DataFormatError(f"{path}: not a readable .npz archive ({why})")
