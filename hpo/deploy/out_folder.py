"""Where ``hpo export`` may write a model folder, and how the new folder replaces an old one.

An export is built in a temporary folder beside ``--out`` and swapped in only when complete.
Replacing must never delete what hpo did not write: ``--out`` may not be the working
directory (or a folder holding it), and a folder already there must be empty or an earlier
export, holding nothing but its ``model.json`` and the boosters that file names. The
default ``--out`` (``models/<run name>``) replaces only an export of the same run
(:func:`check_default_out`): runs of one name share it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hpo.deploy.model import MODEL_FILE
from hpo.deploy.model_files import is_member_name
from hpo.errors import STORAGE_ERRNOS, StorageError, UsageError
from hpo.ownership import (
    TEMP_SUFFIX,
    check_replaceable,
    refuse_protected,
    sweep_stale_temps,
    temp_prefix,
)

__all__ = [
    "check_default_out",
    "check_out_dir",
    "folder_beside",
    "install_model_folder",
    "writing_out",
]

#: The ``--out`` folders (absolute) the threads of this process hold (:func:`writing_out`).
_HELD: set[tuple[Path, int]] = set()
_HELD_LOCK = threading.Lock()


def _named_files(meta_file: Path) -> set[str] | None:
    """The files an earlier export wrote: ``model.json`` and the boosters it names.

    ``None`` when ``model.json`` is unreadable: then nothing in the folder is known to be
    hpo's own.
    """
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(meta, dict):
        return None
    entries: list[Any] = [meta.get("families")]
    subsets = meta.get("subsets")
    if isinstance(subsets, dict):
        entries += [s.get("families") for s in subsets.values() if isinstance(s, dict)]
    members = meta.get("members")  # an ensemble (format 3): each member names its boosters
    if isinstance(members, list):
        entries += [m.get("families") for m in members if isinstance(m, dict)]
    names = {MODEL_FILE}
    for families in entries:
        if isinstance(families, dict):
            names.update(
                str(e["file"]) for e in families.values() if isinstance(e, dict) and "file" in e
            )
    return {n for n in names if is_member_name(n)}  # never a path outside the folder


def _foreign_files(out_dir: Path) -> list[str]:
    """Relative paths under ``out_dir`` that no earlier export wrote (sorted)."""
    owned = _named_files(out_dir / MODEL_FILE) or set()
    owned_dirs = {str(Path(n).parent) for n in owned} - {"."}
    found: list[str] = []
    for path in sorted(out_dir.rglob("*")):
        rel = path.relative_to(out_dir).as_posix()
        if path.is_symlink() or not (
            (rel in owned and path.is_file()) or (rel in owned_dirs and path.is_dir())
        ):
            found.append(rel)
    return found


def check_out_dir(out_dir: Path) -> None:
    """Refuse an ``--out`` that cannot be replaced without deleting what hpo did not write.

    The working directory (or a folder holding it) cannot be swapped for a new folder; a
    folder holding anything but an earlier export's ``model.json`` and the boosters it
    names would lose those files.
    """
    refuse_protected(out_dir, "--out")  # even an empty one: it is swapped for a new folder
    check_replaceable(
        out_dir,
        "--out",
        kind="model folder",
        owned=lambda p: p.is_dir() and (p / MODEL_FILE).is_file(),
    )
    if not out_dir.exists() or not any(out_dir.iterdir()):
        return
    foreign = _foreign_files(out_dir)
    if foreign:
        raise UsageError(
            f"{out_dir}: holds files that no export wrote ({', '.join(foreign[:3])}"
            f"{', ...' if len(foreign) > 3 else ''}); move them or choose another --out"
        )


def _exported_run(model_file: Path) -> Path | None:
    """The run folder an earlier export's ``model.json`` records (``run.path``), if any."""
    try:
        meta = json.loads(model_file.read_text(encoding="utf-8"))
        path = meta["run"]["path"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
        return None
    return Path(path) if isinstance(path, str) else None


def check_default_out(out_dir: Path, run_path: Path) -> None:
    """Refuse the default ``--out`` (``models/<run name>``) when it holds the export of
    another run: two runs of one name (per-subset runs' subsets, runs of other ``--runs-dir``)
    share that folder, and one export silently replaced the other's. A folder that holds this
    run's own export is replaced; an explicit ``--out`` is the consent to replace another's.
    """
    if not (out_dir / MODEL_FILE).is_file():
        return  # nothing there, or no export: check_out_dir decides
    recorded = _exported_run(out_dir / MODEL_FILE)
    if recorded is not None and recorded.resolve() == Path(run_path).resolve():
        return
    whose = "another run" if recorded is None else f"run {recorded}"
    raise UsageError(
        f"{out_dir}: holds the export of {whose}; give --out {out_dir} to replace it, or "
        "another --out"
    )


def _beside_error(out_dir: Path, exc: OSError) -> UsageError:
    return UsageError(
        f"--out {out_dir}: cannot write beside it ({exc.strerror}); choose another --out"
    )


def _lock_beside(out_dir: Path) -> int:
    """Open and lock ``.<name>.lock`` beside ``out_dir`` (its folder made if missing); its
    descriptor.

    A lock file is removed by its holder when done, so one opened just before that is of a
    name no longer there: locked, it is dropped and the name opened again.
    """
    path = out_dir.parent / f".{out_dir.name}.lock"
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
                    raise UsageError(
                        f"--out {out_dir}: another export is writing it now; wait for it to "
                        "end, or choose another --out"
                    ) from exc
                raise
            try:
                if os.fstat(fd).st_ino == os.stat(path).st_ino:
                    return fd
            except FileNotFoundError:
                pass
            os.close(fd)
    except OSError as exc:
        raise _beside_error(out_dir, exc) from exc


@contextlib.contextmanager
def writing_out(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir`` for one export of this process, from its checks until it is read back.

    Two exports to one ``--out`` at once replaced each other's folder while the other still
    read it (a booster's SHA-256 then differed from its ``model.json``); the second is now
    refused in one line while the first holds the lock (``flock`` of ``.<name>.lock`` beside
    it, removed at the end; a killed holder's lock is released by the kernel). Re-entrant in
    one thread: ``hpo export`` holds it around :func:`~hpo.deploy.export.export_model`,
    which holds it too.

    Raises
    ------
    UsageError
        If another export holds it, or nothing can be written beside it.
    """
    key = (Path(out_dir).absolute(), threading.get_ident())
    parent = key[0].parent
    made = [p for p in (parent, *parent.parents) if not p.exists()]  # removed if left empty
    with _HELD_LOCK:
        if key in _HELD:
            held = True
        else:
            held = False
            fd = _lock_beside(Path(out_dir))
            _HELD.add(key)
    if held:
        yield
        return
    try:
        yield
    finally:
        with _HELD_LOCK:
            _HELD.discard(key)
            with contextlib.suppress(OSError):
                os.unlink(Path(out_dir).parent / f".{Path(out_dir).name}.lock")
            os.close(fd)
            for folder in made:  # an export refused (or failed) leaves no empty models/
                with contextlib.suppress(OSError):
                    folder.rmdir()


@contextlib.contextmanager
def folder_beside(out_dir: Path) -> Iterator[Path]:
    """A new temporary folder beside ``out_dir`` to build an export in, removed if the body
    fails; :func:`install_model_folder` swaps it in when whole.

    The folder is named by :func:`hpo.ownership.temp_prefix`, and those a killed export left
    beside ``out_dir`` are removed first. A disk that refuses a write into it (full,
    read-only) is a :class:`~hpo.errors.StorageError` naming the file under ``out_dir``, the
    place the user chose, not the temporary folder, which is gone by then.

    Raises
    ------
    UsageError
        If nothing can be written beside ``out_dir``.
    """
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        sweep_stale_temps(out_dir.parent)
        made = tempfile.mkdtemp(prefix=temp_prefix(out_dir), suffix=TEMP_SUFFIX, dir=out_dir.parent)
        tmp = Path(made)
    except OSError as exc:
        raise _beside_error(out_dir, exc) from exc
    try:
        tmp.chmod(0o755)  # mkdtemp's 0700 would make the model folder private
        yield tmp
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        inside = exc.filename is not None and Path(exc.filename).is_relative_to(tmp)
        if exc.errno in STORAGE_ERRNOS and inside:
            where = out_dir / Path(exc.filename).relative_to(tmp)
            raise StorageError.of(exc, where, option="--out") from exc
        raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def install_model_folder(tmp: Path, out_dir: Path) -> None:
    """Swap the finished folder ``tmp`` in as ``out_dir``, replacing an earlier export.

    The earlier folder is renamed aside first, so a failure leaves one complete folder at
    ``out_dir``; only the files its ``model.json`` names are then deleted.
    """
    try:
        check_out_dir(out_dir)
    except UsageError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if not out_dir.exists():
        os.replace(tmp, out_dir)
        return
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    os.replace(out_dir, old)
    try:
        os.replace(tmp, out_dir)
    except OSError:
        os.replace(old, out_dir)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _remove_export(old)


def _remove_export(folder: Path) -> None:
    """Delete an earlier export's own files and folders; anything else stays (and is named)."""
    for name in sorted(_named_files(folder / MODEL_FILE) or {MODEL_FILE}, reverse=True):
        (folder / name).unlink(missing_ok=True)
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        with contextlib.suppress(OSError):
            sub.rmdir()
    try:
        folder.rmdir()
    except OSError as exc:
        raise UsageError(
            f"{folder}: the replaced model folder kept files no export wrote; check them"
        ) from exc
