"""The run lock: one campaign per run folder, taken atomically, freed by the kernel on death.

``lock.json`` in the run folder is both the lock (an exclusive ``flock`` held by the campaign
for its whole life) and a note of who holds it (``{pid, host, started}``, for ``hpo runs
list`` and for the message a second campaign gets). See :class:`RunLock` for why ``flock``,
and what holds on NFS.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from hpo.errors import UsageError, naming

__all__ = ["LOCK_FILE", "RunLock", "lock_is_held", "read_lock", "this_host", "this_worker"]

LOCK_FILE = "lock.json"


def this_host() -> str:
    """Return the host name used in locks and worker ids."""
    return socket.gethostname()


def this_worker() -> str:
    """The id a trial's record names its worker by: ``host:pid``, and ``/name`` in a Dask worker.

    Local workers are threads of the campaign's process by default (they share its binned
    Datasets), so the process id alone no longer tells them apart, nor from the campaign.
    Dask is only asked where it is already imported: a campaign without workers never loads it.
    """
    where = f"{this_host()}:{os.getpid()}"
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return where
    try:
        return f"{where}/{distributed.get_worker().name}"
    except ValueError:  # not in a Dask worker's task
        return where


def read_lock(run_dir: Path) -> dict[str, Any] | None:
    """Return the content of ``lock.json``, ``None`` if absent; unreadable gives ``{}``.

    The content only describes the holder for messages; whether the lock is held is
    :func:`lock_is_held`.
    """
    path = Path(run_dir) / LOCK_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def lock_is_held(run_dir: Path) -> bool:
    """Whether a live process holds the run lock of ``run_dir`` (see :class:`RunLock`).

    Asks the kernel: a shared ``flock`` on ``lock.json`` fails while a campaign holds its
    exclusive one. A ``lock.json`` left by a killed process is not held. The probe holds its
    shared lock for microseconds; :meth:`RunLock.acquire` waits out that window.

    Inside the holding process the probe is skipped (the file names this pid on this host):
    on NFS ``flock`` is emulated with POSIX locks, which belong to the process, so a probe
    from the holder would not conflict, and closing its descriptor would drop the real lock.
    """
    path = Path(run_dir) / LOCK_FILE
    lock = read_lock(run_dir)
    if lock is None:
        return False
    if lock.get("pid") == os.getpid() and lock.get("host") == this_host():
        return True
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing also drops the probe's shared lock
    return False


def _describe_lock(run_dir: Path, lock: dict[str, Any] | None) -> str:
    lock = lock or {}
    if not isinstance(lock.get("pid"), int):  # caught between the holder's lock and its write
        return f"run '{run_dir.name}' is in use by another process (lock {run_dir / LOCK_FILE})"
    started = lock.get("started")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)) if started else "?"
    return (
        f"run '{run_dir.name}' is in use by pid {lock.get('pid')} on {lock.get('host')} "
        f"(since {when})"
    )


class RunLock:
    """The run folder's lock: an exclusive ``flock`` on ``lock.json``, held for the campaign.

    Why ``flock``: taking it is one atomic system call, so of two processes that start at
    once exactly one wins; and the kernel releases it when its holder dies, however it
    dies (``kill -9``, OOM), so a stale ``lock.json`` needs no pid guessing: it is simply
    not locked, and the next campaign takes it over. The file's content ``{pid, host,
    started}`` only describes the holder for ``hpo runs list`` and for error messages.

    What a second process sees: :meth:`acquire` raises :class:`UsageError` naming the
    holder's pid, host and start time, and :func:`run_state` reports ``running``.

    The file is opened, locked, and then checked to still be the file at ``lock.json``: a
    holder that releases unlinks the file while it holds it, so a taker that opened the old
    file just before must not think it holds the lock; it retries on the new file.

    The lock belongs to the open file description: a child made with ``fork`` (without
    ``exec``) shares it and keeps it held while it lives; children started with ``spawn``
    (Dask's local workers) do not. On NFS, Linux emulates ``flock`` with POSIX byte-range
    locks, which work across client machines when the server supports locking (NFSv4, or
    NFSv3 with lockd; not with the ``nolock`` mount option, where locks are only local to
    each client); a lock held by a client that crashed is freed only when the server's lease
    expires (about 90 s for NFSv4). The holder must not open and close ``lock.json`` elsewhere
    (POSIX locks drop on any close by the process): :func:`lock_is_held` avoids that.

    Parameters
    ----------
    run_dir
        The run folder (created if missing).
    patience
        Seconds to keep trying while the lock is busy before giving up. A probe by
        :func:`lock_is_held` (``hpo runs list``) holds a shared lock for microseconds;
        without patience it could make a campaign refuse to start.

    Raises
    ------
    UsageError
        On entry, if a live process holds the lock.
    """

    def __init__(self, run_dir: Path, patience: float = 0.5) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_FILE
        self.patience = patience
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def _try_take(self) -> bool | None:
        """One attempt: True if taken, False if held by another, None if the file changed."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            same = False
        if not same:  # released and unlinked by its holder after we opened it
            os.close(fd)
            return None
        self._fd = fd
        return True

    def acquire(self) -> None:
        """Take the lock (a ``lock.json`` whose process died is taken over)."""
        if self._fd is not None:
            raise UsageError(f"{self.path}: this lock is already held by this object")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.patience
        while True:
            taken = self._try_take()
            if taken:
                break
            if taken is False and time.monotonic() >= deadline:
                raise UsageError(_describe_lock(self.run_dir, read_lock(self.run_dir)))
            if taken is False:
                time.sleep(0.01)
        assert self._fd is not None
        content = json.dumps({"pid": os.getpid(), "host": this_host(), "started": time.time()})
        try:
            with naming(self.path):
                os.ftruncate(self._fd, 0)
                os.pwrite(self._fd, (content + "\n").encode(), 0)
        except OSError:  # a full disk: the lock is not taken, and no empty lock.json is left
            self.release()
            raise

    def release(self) -> None:
        """Remove ``lock.json`` and drop the lock, if this object holds it."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            if os.path.samestat(os.fstat(fd), os.stat(self.path)):
                os.unlink(self.path)  # still locked: no taker can have opened it as ours
        except FileNotFoundError:
            pass
        finally:
            os.close(fd)

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
