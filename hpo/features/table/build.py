"""``build_tables``: the feature tables of a dataset's splits, on disk or in memory.

The rows come file by file from :func:`hpo.features.table.feature_table.extract_rows` (the per-file
cache). With a ``cache_dir`` the tables themselves are cached too, as files under
``cache_dir/tables/`` (:mod:`hpo.features.table.on_disk`): a table is named by the hash of its
files' cache entries, its version columns and its feature names, written once while its
files' rows stream in, and returned as read-only ``numpy.memmap``\\ s. Why: at the
real dataset's size a family's table is gigabytes; gathering it in memory and concatenating
held it twice, every Dask worker held a copy, and every campaign re-read every file's cache
entry to gather it again. Disk use: the tables add about the size of the per-file cache.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from hpo.data.load import is_layout, list_graphs
from hpo.errors import DataFormatError
from hpo.features.sampling import SampleCaps
from hpo.features.spec import FeatureSpec
from hpo.features.table.feature_table import (
    FeatureTable,
    GraphRef,
    cache_entry,
    cache_folder,
    family_of,
    feature_names,
    rows_of_entry,
    version_columns,
)
from hpo.features.table.on_disk import ARRAY_DTYPES, TableWriter, open_table_files, table_key
from hpo.features.table.rows import GraphRows
from hpo.ownership import sweep_stale_temps

_T = TypeVar("_T")

__all__ = ["TABLES_DIR", "ExtractOptions", "build_tables"]

#: Folder of the tables inside ``cache_dir`` (beside the per-collection entries of files).
TABLES_DIR = "tables"


@dataclass(frozen=True, kw_only=True)
class ExtractOptions:
    """How :func:`build_tables` extracts, which does not change the rows it returns.

    Attributes
    ----------
    cache_dir
        Where extraction results and the tables are cached (``None``: no cache, tables in
        memory).
    n_jobs
        Files extracted in parallel (joblib processes).
    on_file
        Called with ``(path, cache_hit)`` as each file finishes.
    """

    cache_dir: Path | None = None
    n_jobs: int = 1
    on_file: Callable[[str, bool], None] | None = None


class _RowsInMemory:
    """The rows of one table gathered in memory (no ``cache_dir``): what :class:`TableWriter`
    writes to disk, concatenated at the end instead."""

    def __init__(self) -> None:
        self.graphs: list[dict[str, Any]] = []
        self.parts: dict[str, list[np.ndarray]] = {name: [] for name in ARRAY_DTYPES}

    def add(self, graph: dict[str, Any], X: np.ndarray, **per_row: np.ndarray) -> None:
        self.graphs.append(graph)
        self.parts["X"].append(X)
        self.parts["group"].append(np.full(X.shape[0], len(self.graphs) - 1, dtype=np.int64))
        for name, values in per_row.items():
            self.parts[name].append(values)

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: np.concatenate(parts) for name, parts in self.parts.items()}


def _table_of(
    family: str,
    split: str,
    arrays: dict[str, np.ndarray],
    graphs: list[dict[str, Any]],
    spec: FeatureSpec,
) -> FeatureTable:
    refs = tuple(GraphRef(g["collection"], g["stem"], g["n_configs"], g["labeled"]) for g in graphs)
    return FeatureTable(
        family=family,
        split=split,
        graphs=refs,
        feature_names=tuple(feature_names(family, spec)),
        **arrays,
    )


def _table_prefix(
    cache_dir: Path, family: str, split: str, cache_files: list[Path], spec: FeatureSpec
) -> Path:
    """Where a table on disk lives: named by the hash of what makes its rows."""
    keep = version_columns(family, spec)
    key = table_key(
        {
            "files": [str(f.relative_to(cache_dir)) for f in cache_files],
            "columns": None if keep is None else keep.tolist(),
            "names": feature_names(family, spec),
        }
    )
    return cache_dir / TABLES_DIR / f"{family}-{split}-{key}"


#: Seconds between an extraction worker's looks at its parent.
ORPHAN_CHECK_SECONDS = 1.0
_WATCH = "hpo-exit-when-orphaned"


def _exit_when_orphaned(parent: int) -> None:
    while True:
        time.sleep(ORPHAN_CHECK_SECONDS)
        if os.getppid() != parent:  # reparented: the process that started it is gone
            os._exit(1)


def in_worker(parent: int, function: Callable[..., _T], *args: Any) -> _T:
    """Call ``function(*args)`` for process ``parent``, ending with it when this is a worker.

    A worker process whose parent was killed (``kill -9`` of a campaign mid-extraction) went
    on extracting, then idled, for minutes. The first call in a worker process starts a daemon
    thread that ends the process once ``parent`` is gone; run in ``parent`` itself (one job,
    no worker) it starts nothing.
    """
    if os.getpid() != parent and not any(t.name == _WATCH for t in threading.enumerate()):
        watch = threading.Thread(target=_exit_when_orphaned, args=(parent,), name=_WATCH)
        watch.daemon = True
        watch.start()
    return function(*args)


def build_tables(
    root: Path,
    collections: Sequence[str],
    splits: Sequence[str],
    spec: FeatureSpec,
    *,
    merge_duplicates_in: Sequence[str] = ("train",),
    caps: SampleCaps | None = None,
    extract: ExtractOptions | None = None,
) -> dict[tuple[str, str], FeatureTable]:
    """Build the feature tables of ``collections`` x ``splits``.

    With a ``cache_dir``, each table is a set of files under ``cache_dir/tables/`` keyed by
    what makes its rows (:mod:`hpo.features.table.on_disk`), and its arrays are read-only
    ``numpy.memmap``\\ s: a second build with the same key reuses the files without reading a
    per-file cache entry, and a table's rows are written as each file's rows arrive, so this
    function holds the rows of the files in flight (one; with ``n_jobs`` processes, the at
    most ``2 * n_jobs`` that joblib dispatches ahead) plus the small per-row arrays, never
    the table. Without one, the tables are built in memory.

    Parameters
    ----------
    root
        Dataset root.
    collections, splits
        What to build.
    spec
        Feature settings.
    merge_duplicates_in
        Splits whose identical configs are merged into one row with their mean target
        (training); other splits keep every config (prediction and scoring).
    caps
        Configs kept per train graph and per valid layout graph (``None``: every config).
        Only kept configs are featurized and held in memory.
    extract
        Cache, processes and progress of the extraction (default: no cache, one process).

    Returns
    -------
    dict
        ``{(family, split): FeatureTable}`` for every family present in ``collections``.
    """
    from joblib import Parallel, delayed

    me = os.getpid()
    jobs: list[tuple[str, str, Path]] = [
        (collection, split, path)
        for split in splits
        for collection in collections
        for path in list_graphs(root, collection, split)
    ]
    caps = caps if caps is not None else SampleCaps.unlimited()
    how = extract if extract is not None else ExtractOptions()
    rules = {(c, s): caps.rule(s, is_layout(c), s in merge_duplicates_in) for c, s, _ in jobs}
    extracting = spec.extracting()
    entries: list[Path | None] = [None] * len(jobs)
    _sweep_cache(how.cache_dir, collections)
    if how.cache_dir is not None:  # the per-file keys name the tables: hashed in parallel
        entries = list(
            Parallel(n_jobs=how.n_jobs)(
                delayed(in_worker)(me, cache_entry, how.cache_dir, p, c, extracting, rules[(c, s)])
                for c, s, p in jobs
            )
        )
    members: dict[tuple[str, str], list[int]] = {}
    for i, (collection, split, _) in enumerate(jobs):
        members.setdefault((family_of(collection), split), []).append(i)
    tables: dict[tuple[str, str], FeatureTable] = {}
    sinks: dict[tuple[str, str], TableWriter | _RowsInMemory] = {}
    for (family, split), idx in members.items():
        reused = _reuse_or_plan(family, split, [entries[i] for i in idx], spec, how.cache_dir)
        if isinstance(reused, FeatureTable):
            tables[(family, split)] = reused
            for i in idx:
                if how.on_file is not None:
                    how.on_file(str(jobs[i][2]), True)
        else:
            sinks[(family, split)] = reused
    todo = sorted(i for key in sinks for i in members[key])
    results = None
    try:
        results = Parallel(n_jobs=how.n_jobs, return_as="generator")(
            delayed(in_worker)(
                me,
                rows_of_entry,
                jobs[i][2],
                jobs[i][0],
                extracting,
                rules[jobs[i][:2]],
                entries[i],
            )
            for i in todo
        )
        for i, (rows, hit) in zip(todo, results, strict=True):
            collection, split, path = jobs[i]
            if how.on_file is not None:
                how.on_file(str(path), hit)
            _add_rows(sinks[(family_of(collection), split)], collection, path, rows, spec)
        for (family, split), sink in sinks.items():
            tables[(family, split)] = _finish(
                family, split, sink, len(members[(family, split)]), spec
            )
    except BaseException:
        if results is not None:  # stop the workers now; the error is the one line to show
            with warnings.catch_warnings():
                # joblib counts the tasks it drops, in a warning on stderr
                warnings.filterwarnings("ignore", ".*adjusting the input task iterator")
                results.close()
        for sink in sinks.values():
            if isinstance(sink, TableWriter):
                sink.abort()  # drops the temporary file, if any is left
        _sweep_cache(how.cache_dir, collections)  # what the cancelled workers were writing
        raise
    return {key: tables[key] for key in members}


def _sweep_cache(cache_dir: Path | None, collections: Sequence[str]) -> None:
    """Remove the temporary files that dead processes left in the cache folders of
    ``collections`` and of the tables (a killed campaign, a cancelled extraction worker)."""
    if cache_dir is None:
        return
    for collection in collections:
        sweep_stale_temps(cache_folder(cache_dir, collection))
    sweep_stale_temps(cache_dir / TABLES_DIR)


def _reuse_or_plan(
    family: str,
    split: str,
    entries: list[Path | None],
    spec: FeatureSpec,
    cache_dir: Path | None,
) -> FeatureTable | TableWriter | _RowsInMemory:
    """The table on disk if its files check, else where its rows go: a writer, or memory."""
    if cache_dir is None:
        return _RowsInMemory()
    prefix = _table_prefix(cache_dir, family, split, [e for e in entries if e is not None], spec)
    width = len(feature_names(family, spec))
    opened = open_table_files(prefix, width, len(entries))
    if opened is None:
        return TableWriter(prefix, width)
    return _table_of(family, split, *opened, spec)


def _add_rows(
    sink: TableWriter | _RowsInMemory,
    collection: str,
    path: Path,
    rows: GraphRows,
    spec: FeatureSpec,
) -> None:
    """One file's rows into its table, in the columns of ``spec``'s version."""
    keep = version_columns(family_of(collection), spec)
    sink.add(
        {
            "collection": collection,
            "stem": path.stem,
            "n_configs": rows.n_configs,
            "labeled": rows.labeled,
        },
        rows.X if keep is None else rows.X[:, keep],
        target=rows.target,
        config_index=rows.config_index,
        dup_count=rows.dup_count,
    )


def _finish(
    family: str, split: str, sink: TableWriter | _RowsInMemory, n_graphs: int, spec: FeatureSpec
) -> FeatureTable:
    """The table whose rows are all in ``sink``: concatenated, or written and mapped."""
    if isinstance(sink, _RowsInMemory):
        return _table_of(family, split, sink.arrays(), sink.graphs, spec)
    sink.finish()
    opened = open_table_files(sink.prefix, sink.width, n_graphs)
    if opened is None:
        raise DataFormatError(
            f"{sink.prefix}.X.npy: the table's files do not check right after writing "
            "(disk full, or changed by another process)"
        )
    return _table_of(family, split, *opened, spec)
