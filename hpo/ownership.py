"""The one rule for what hpo may delete or replace: only what it can prove it wrote.

Every command that deletes or replaces a path the user named (``run --overwrite``,
``export --out``, ``predict --out``, ``data synth --out``) asks this module first:

- never through a symlink: the link's target may be anything;
- never a folder that is, or holds, the working directory, the data root or the cache (a
  run named like the dataset root once deleted it);
- only a folder or file that hpo's own check says it wrote (``owned``): a run folder with a
  readable ``campaign.json``, an earlier export, a submission CSV its recorded SHA-256
  proves, a generated root.

Temporary files and folders (written, then renamed into place) are named by
:func:`temp_prefix` after the host and process that write them, so one a killed process left
(``kill -9``, a cancelled extraction worker) is known to be hpo's and dead, and
:func:`sweep_stale_temps` removes it.

The rule sits below every stage so the generator (which may not import run folders) and the
deploy stage share it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import socket
from collections.abc import Callable, Mapping
from pathlib import Path

from hpo.errors import UsageError

__all__ = [
    "TEMP_SUFFIX",
    "check_replaceable",
    "refuse_protected",
    "sweep_stale_temps",
    "temp_prefix",
]

#: Suffix of every temporary file or folder named by :func:`temp_prefix`.
TEMP_SUFFIX = ".tmp"
#: ``.<final name>.<host digest>-<pid>-<random>.tmp``, as :func:`temp_prefix` and ``tempfile``
#: make them (``.tmp.json`` for SMAC's state files: SMAC insists on the suffix).
_TEMP = re.compile(r"\..+\.(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)-[A-Za-z0-9_]*\.tmp(?:\.json)?")


def _resolved(path: Path) -> Path:
    return Path(path).expanduser().resolve()


def refuse_protected(
    target: Path, flag: str, protected: Mapping[str, Path | None] | None = None
) -> None:
    """Refuse ``target`` if it is, or holds, the working directory or a ``protected`` path.

    Parameters
    ----------
    target
        The path about to be deleted or replaced.
    flag
        The option that named it, for the message (``--out``, ``--name``).
    protected
        What else must survive, by what it is (``{"the data root": root}``); ``None``
        values are skipped.

    Raises
    ------
    UsageError
        Naming the target and what it would have deleted.
    """
    found = _resolved(target)
    guarded = {**(protected or {}), "the working directory": Path.cwd()}
    for what, path in guarded.items():
        if path is None:
            continue
        kept = _resolved(path)
        if found == kept or found in kept.parents:
            relation = "is" if found == kept else "holds"
            raise UsageError(
                f"{flag} {target}: {relation} {what} ({path}); hpo deletes only what it wrote, "
                "choose another path"
            )


def check_replaceable(
    target: Path,
    flag: str,
    *,
    kind: str,
    owned: Callable[[Path], bool],
) -> None:
    """Refuse to delete or replace ``target`` unless hpo can prove it wrote it.

    A missing path, and an empty folder, may always be (re)written: nothing is lost. Anything
    else must not be a symlink and must pass ``owned``. A caller that removes or swaps the
    folder itself, not only files in it, also calls :func:`refuse_protected`.

    Parameters
    ----------
    target
        The file or folder about to be deleted or replaced.
    flag
        The option that named it, for the message.
    kind
        What hpo writes there (``"run folder"``, ``"model folder"``, ``"submission"``).
    owned
        Whether ``target`` is one hpo wrote (called only on an existing, non-link path).

    Raises
    ------
    UsageError
        Naming the target, what it is, and what to do.
    """
    target = Path(target)
    if target.is_symlink():
        raise UsageError(
            f"{flag} {target}: is a symlink; hpo never deletes or replaces through one, "
            "give the real path"
        )
    if not target.exists() or (target.is_dir() and not any(target.iterdir())):
        return
    if not owned(target):
        raise UsageError(
            f"{flag} {target}: exists and is not a {kind} hpo wrote; hpo deletes only what it "
            "wrote, move it or choose another path"
        )


def _host_digest() -> str:
    return hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]


def temp_prefix(final: Path) -> str:
    """The prefix of a temporary name beside ``final`` (for ``tempfile.mkstemp`` or
    ``mkdtemp``, with ``suffix=TEMP_SUFFIX``): hidden, and naming this host and process."""
    return f".{Path(final).name}.{_host_digest()}-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # another user's process, or no pid at all
        return pid > 0
    return True


def sweep_stale_temps(folder: Path) -> int:
    """Remove the temporary files and folders in ``folder`` that a process of this host left
    when it died (named by :func:`temp_prefix`); return how many.

    A name from another host, or from a process still alive, is left alone; so is a link.
    A folder that cannot be read or written is skipped: the sweep only tidies.
    """
    gone = 0
    me = _host_digest()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        found = _TEMP.fullmatch(entry.name)
        if found is None or found["host"] != me or _alive(int(found["pid"])):
            continue
        with contextlib.suppress(OSError):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            elif not entry.is_symlink():
                os.unlink(entry.path)
            else:
                continue
            gone += 1
    return gone
