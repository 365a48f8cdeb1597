"""A bounded cache of constructed LightGBM Datasets, reused across trials and budgets.

Binning the training rows (LightGBM ``Dataset.construct``) plus computing labels and
sub-queries cost about as much as boosting a smallest-budget trial on ``small`` data (see
docs/benchmarks.md#speed-and-memory), yet they depend only on the rows and on a few
hyperparameters (:meth:`hpo.ranking.model.ranker.LambdaRanker.dataset_key`). The cache lives on the
object that trains (the objective), one per process: a pickled cache arrives empty, so a Dask
worker process fills its own. The thread workers of a local cluster (the default) share the
campaign's one cache, so :meth:`DatasetCache.get` is safe from several threads.

Workers on one machine also share Datasets on disk: :func:`binary_dataset` saves a constructed
Dataset as a LightGBM binary file named by :func:`binary_path` (the memory-mapped tables' files,
the rows, the seed and the Dataset params), and a worker that finds the file loads it instead
of binning the rows again. In-memory tables have no name that outlives the process, so their
Datasets are not written.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpo.features.table.store import mapped_file
from hpo.ownership import TEMP_SUFFIX, sweep_stale_temps, temp_prefix

__all__ = ["DatasetCache", "binary_dataset", "binary_path", "rows_digest"]

#: Suffix of a binary Dataset file (LightGBM's own ``save_binary`` format).
BINARY_SUFFIX = ".bin"


def rows_digest(rows: np.ndarray) -> str:
    """A short digest of a row selection (the ``configs`` fidelity samples new rows per budget)."""
    return hashlib.sha1(np.ascontiguousarray(rows, dtype=np.int64).tobytes()).hexdigest()[:16]


def _table_file(X: np.ndarray) -> str | None:
    """``name:size:mtime`` of a memory-mapped table's file; ``None`` for an in-memory table."""
    where = mapped_file(X)
    if where is None:
        return None
    name, offset = where
    stat = os.stat(name)
    return f"{os.path.abspath(name)}:{stat.st_size}:{stat.st_mtime_ns}:{offset}"


def binary_path(
    folder: Path | None,
    parts: Sequence[tuple[np.ndarray, np.ndarray]],
    seed: int,
    dataset_key: Hashable,
) -> Path | None:
    """The file in ``folder`` of the binary Dataset of rows ``parts`` (``(X, rows)``), or ``None``.

    The name digests each table's file (path, size and modification time: a rewritten
    feature cache file makes a new name), each row selection, the seed (the row order) and
    :meth:`hpo.ranking.model.ranker.LambdaRanker.dataset_key` (the bins). ``None`` when ``folder``
    is ``None`` or a table is in memory (nothing names it outside this process).
    """
    files = [_table_file(X) for X, _ in parts]
    if folder is None or any(f is None for f in files):
        return None
    text = repr((files, [rows_digest(r) for _, r in parts], int(seed), dataset_key))
    return Path(folder) / (hashlib.sha1(text.encode()).hexdigest()[:24] + BINARY_SUFFIX)


def _load_saved(path: Path, load: Callable[[Path], Any]) -> Any | None:
    """``load(path)`` if the file is there and readable; ``None`` (with one warning for an
    unreadable file) otherwise."""
    from lightgbm.basic import LightGBMError

    if not path.is_file():
        return None
    try:
        return load(path)
    except (LightGBMError, ValueError, OSError) as exc:
        warnings.warn(
            f"{path}: unreadable binary Dataset ({str(exc).strip() or type(exc).__name__}); "
            "rebuilding it",
            RuntimeWarning,
            stacklevel=3,
        )
        return None


def _identity(path: Path) -> tuple[int, int] | None:
    """(inode, mtime) of a file, ``None`` if absent: tells a file another worker wrote."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


#: The lock file of a Dataset folder (:func:`_build_lock`).
BUILD_LOCK = ".build.lock"


@contextlib.contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the folder's ``.build.lock`` while ``path`` is built.

    Why: building a Dataset holds LightGBM's bin sample (up to ``bin_construct_sample_cnt``
    rows of float64 values: about 0.7 GB at 200,000 rows of 301 columns), far more than the
    binned Dataset it makes. The workers of a campaign start together and each needs a
    Dataset per family and ``max_bin``: without a lock every worker held a sample at once
    (the lock took 175 MiB off a 2-worker campaign's peak, docs/benchmarks.md). One lock per folder,
    not per file, keeps one build at a time on a machine: a worker that wanted the same
    Dataset then loads the file; one that wanted another waits a build's time. Where the lock
    cannot be taken (a read-only or lock-less filesystem), workers build without it.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(path.parent / BUILD_LOCK, "a")  # noqa: SIM115 (held below)
    except OSError:
        yield
        return
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX)
        except OSError:
            pass
        yield  # closing the file releases the lock


def binary_dataset(path: Path, build: Callable[[], Any], load: Callable[[Path], Any]) -> Any:
    """The Dataset saved at ``path`` (``load(path)``), or ``build()`` saved there.

    One worker builds while the others wait for its file (:func:`_build_lock`). The file is
    written to a temporary name and renamed, so a worker never loads another's half-written
    file. A file that cannot be loaded (truncated, from another LightGBM) is rebuilt with one
    warning; a directory that cannot be written leaves the Dataset unsaved, with one warning.
    """
    from lightgbm.basic import LightGBMError

    from hpo.ranking.model.lightgbm_adapter import save_binary_quietly

    before = _identity(path)
    saved = _load_saved(path, load)
    if saved is not None:
        return saved
    with _build_lock(path):
        if _identity(path) not in (None, before):  # another worker built it meanwhile
            saved = _load_saved(path, load)
            if saved is not None:
                return saved
        dataset = build()
        sweep_stale_temps(path.parent)  # what a killed campaign was writing
        tmp = path.with_name(f"{temp_prefix(path)}{threading.get_ident()}{TEMP_SUFFIX}")
        try:
            save_binary_quietly(dataset, str(tmp))
            os.replace(tmp, path)
        except (LightGBMError, OSError) as exc:
            warnings.warn(f"{path}: binary Dataset not saved ({exc})", RuntimeWarning, stacklevel=2)
        finally:
            with contextlib.suppress(OSError):  # renamed, or never written
                tmp.unlink()
    return dataset


class DatasetCache:
    """Least-recently-used store of at most ``max_entries`` built values (Datasets, arrays).

    Keys must identify everything a value depends on. Entries also hold the objects they were
    built from (``keep``), so an ``id()`` used in a key cannot be recycled while the entry lives.

    Parameters
    ----------
    max_entries
        Values kept; the least recently used is dropped beyond it, bounding memory. One
        binned Dataset of all columns serves every feature switch, so per family a campaign
        of the packaged space needs one Dataset per ``max_bin`` choice, the valid view and
        the learned priors of its row sets: 24 entries leave room for the ``configs``
        fidelity's row samples (at 6 a random search on both families thrashed when each
        ``relative_features`` choice had its own Dataset: 10 of 62 fits reused). No entry
        holds raw training rows (:mod:`hpo.ranking.model.lightgbm_adapter`).
    """

    def __init__(self, max_entries: int = 24) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, found {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, tuple[Any, Any]] = OrderedDict()
        self.hits = 0
        self.misses = 0
        # the workers of a local cluster are threads that share one cache: entries change
        # under _lock, and a key being built has a lock of its own, so a second thread that
        # wants it waits for that build instead of binning the same rows again beside it
        self._lock = threading.Lock()
        self._building: dict[Hashable, threading.Lock] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def _hit(self, key: Hashable) -> tuple[Any, bool] | None:
        with self._lock:
            if key not in self._entries:
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return self._entries[key][0], True

    def get(self, key: Hashable, build: Callable[[], Any], keep: Any = None) -> tuple[Any, bool]:
        """The value of ``key``, built by ``build()`` on a miss; and whether it was reused.

        Safe from several threads: one of them builds a missing key while the others that
        want it wait and reuse it (a build that raises lets the next waiter try).
        """
        found = self._hit(key)
        if found is not None:
            return found
        with self._lock:
            building = self._building.setdefault(key, threading.Lock())
        with building:
            found = self._hit(key)
            if found is not None:
                return found
            try:
                value = build()
            except BaseException:
                with self._lock:
                    self._forget_build(key, building)
                raise
            with self._lock:  # stored and unregistered at once: no thread builds it again
                self.misses += 1
                self._entries[key] = (value, keep)
                while len(self._entries) > self.max_entries:
                    self._entries.popitem(last=False)
                self._forget_build(key, building)
        return value, False

    def _forget_build(self, key: Hashable, building: threading.Lock) -> None:
        """Unregister ``building`` as the lock of ``key`` (not a newer one that replaced it);
        the caller holds ``_lock``."""
        if self._building.get(key) is building:
            del self._building[key]

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()

    def __getstate__(self) -> dict[str, Any]:
        # Datasets wrap C handles and can be large: a pickled copy (to a Dask worker) starts empty
        return {"max_entries": self.max_entries}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["max_entries"])  # type: ignore[misc]
