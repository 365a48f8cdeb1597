"""Disks that refuse writes, for tests of what hpo says then and what it leaves behind.

The tests run as root, where ``chmod`` stops no write, and mounting a small or read-only file
system needs privileges CI lacks; so a full or read-only disk is a function that raises what
the kernel raises: a write to an open file fails naming no file, an open, a ``mkdir`` or a
rename names its path.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FULL = errno.ENOSPC
READ_ONLY = errno.EROFS


def disk_error(code: int, path: Path | str | None = None) -> OSError:
    """The OSError of ``code``, naming ``path`` if given."""
    if path is None:
        return OSError(code, os.strerror(code))
    return OSError(code, os.strerror(code), str(path))


def under(path: Path | str | int, folder: Path) -> bool:
    """Whether ``path`` (a file descriptor: the file it is open on) lies in ``folder``."""
    if isinstance(path, int):
        try:
            path = os.readlink(f"/proc/self/fd/{path}")
        except OSError:
            return False
    return Path(os.path.abspath(path)).is_relative_to(Path(os.path.abspath(folder)))


def leftovers(folder: Path) -> list[str]:
    """Temporary files and folders under ``folder`` (relative paths, sorted)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if ".tmp" in p.name)


def dead_pid() -> int:
    """The pid of a process that has ended: whose temporary files are for the sweep."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def as_left_by(path: Path, pid: int) -> Path:
    """``path``, a temporary name of this process (``hpo.ownership.temp_prefix``), as process
    ``pid`` of this host would have named it."""
    return path.with_name(path.name.replace(f"-{os.getpid()}-", f"-{pid}-"))


def one_line(err: str) -> str:
    """``err`` if it is exactly one line; fails the test otherwise."""
    assert err.count("\n") == 1, err
    assert err.endswith("\n"), err
    return err


class FullFile:
    """An open file on a full disk: every write fails, naming no file, as the kernel's does."""

    def __init__(self, fh: Any) -> None:
        self._fh = fh

    def write(self, data: Any) -> int:
        raise disk_error(FULL)

    def seek(self, *args: Any) -> int:
        return int(self._fh.seek(*args))

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> FullFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
