"""The exception hierarchy of ``hpo``.

Every error the tool raises on purpose derives from :class:`HpoError`; the CLI turns
each into one line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator

__all__ = [
    "STORAGE_ERRNOS",
    "ConfigError",
    "DataFormatError",
    "HpoError",
    "StorageError",
    "TrialCut",
    "UsageError",
    "naming",
]


class HpoError(Exception):
    """Base class of every error raised on purpose by ``hpo``."""


class DataFormatError(HpoError):
    """An input file is missing, unreadable, or not in the documented TpuGraphs format.

    The message names the file, the key, what was expected and what was found.
    """


class ConfigError(HpoError):
    """A setting, search space, campaign or model folder is invalid or incompatible."""


class UsageError(HpoError):
    """The tool was asked for something that cannot be done (missing run, live name, ...)."""


#: What to do when the disk refuses a write, by errno; ``{where}`` is the option that chose
#: the place (``--runs-dir``), or "folder".
_ACTIONS = {
    errno.ENOSPC: "free space there or choose another {where}",
    errno.EDQUOT: "free space there (your quota is used up) or choose another {where}",
    errno.EFBIG: "choose another {where} (this file system caps the size of a file)",
    errno.EROFS: "choose a {where} on a writable file system",
    errno.EACCES: "choose a {where} you may write to",
    errno.EPERM: "choose a {where} you may write to",
    errno.EIO: "check that disk, or choose another {where}",
}
#: The errnos of :class:`StorageError`: a full, read-only, forbidden or failing disk.
STORAGE_ERRNOS = frozenset(_ACTIONS)


class TrialCut(HpoError):
    """A trial stopped because its campaign's time ran out while it boosted: a trial is
    recorded as crashed with this reason, never as a score of fewer rounds than it asked."""


class StorageError(HpoError, OSError):
    """hpo could not write a file or folder: a full disk, a quota, a read-only file system, a
    permission, an I/O error.

    Still an :class:`OSError` (with ``errno``, ``strerror`` and ``filename``), so code that
    tolerates an unwritable path goes on tolerating it; an :class:`HpoError`, so the CLI says
    it in one line: the path, the system's reason, and what to do.

    Parameters
    ----------
    code
        The ``errno``.
    strerror
        The system's reason (``No space left on device``).
    filename
        The path that could not be written: the final name, not a temporary one (``None``:
        not known, the line then starts with the reason).
    action
        What to do; ``None``: what :data:`STORAGE_ERRNOS` suggest for ``code``
        (:meth:`line`).
    option
        The flag that chose the place (``--out``), named in the default action.
    """

    def __init__(
        self,
        code: int,
        strerror: str,
        filename: str | os.PathLike[str] | None,
        action: str | None = None,
        option: str | None = None,
    ) -> None:
        super().__init__(code, strerror, None if filename is None else os.fspath(filename))
        self.action = action
        self.option = option

    def __str__(self) -> str:
        return self.line()

    def line(self, option: str | None = None) -> str:
        """The one line: path, reason, what to do (``option``: the flag that chose the place,
        if the error does not know it, named in the default action)."""
        template = _ACTIONS.get(self.errno or 0, "choose another {where}")
        action = self.action or template.format(where=self.option or option or "folder")
        where = "" if self.filename is None else f"{self.filename}: "
        return f"{where}{self.strerror}; {action}"

    @classmethod
    def of(
        cls,
        exc: OSError,
        path: str | os.PathLike[str] | None = None,
        *,
        action: str | None = None,
        option: str | None = None,
    ) -> StorageError:
        """``exc`` as a StorageError naming ``path`` (default: the file ``exc`` names).

        A write to an open file fails naming no file (``fh.write`` on a full disk): the caller
        knows which it was, and says so here.
        """
        code = exc.errno if exc.errno is not None else errno.EIO
        where = path if path is not None else exc.filename
        return cls(code, exc.strerror or os.strerror(code), where, action, option)


@contextlib.contextmanager
def naming(
    path: str | os.PathLike[str], *, action: str | None = None, option: str | None = None
) -> Iterator[None]:
    """Turn a full, read-only or forbidden disk met inside into a :class:`StorageError`
    naming ``path`` (what is being written, under its final name), with ``action`` or the
    default one naming ``option``.

    Other OSErrors (a missing file, say) pass unchanged, as does a StorageError raised
    deeper, which already names its own path.
    """
    try:
        yield
    except StorageError:
        raise
    except OSError as exc:
        if exc.errno not in STORAGE_ERRNOS:
            raise
        raise StorageError.of(exc, path, action=action, option=option) from exc
