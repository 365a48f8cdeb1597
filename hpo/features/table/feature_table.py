"""Feature tables and the per-file extraction cache their rows come from.

Which configs of a file become rows is set by the campaign's :class:`SampleCaps` (see
:mod:`hpo.features.sampling`): a capped number per train and valid layout graph, so memory is
bounded by the caps, not by the size of the dataset. Extraction results are cached per file
under ``cache_dir``, keyed by a hash of the file's bytes, the collection, the feature spec
(with the source of every module that shapes a row) and the file's sampling rule, so a
campaign extracts each file once, not once per trial, and a second campaign with the same
caps on the same data extracts nothing. An entry is read only if its arrays still have the
CRC-32 it records (written with them): one edited in place, like a table, is computed again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from hpo.data.load import is_layout, load_layout_graph, load_tile_graph
from hpo.data.npyzip import ARCHIVE_ERRORS
from hpo.errors import DataFormatError, UsageError, naming
from hpo.features.layout.extract import (
    extract_layout_features,
    layout_block_rows,
    layout_feature_names,
)
from hpo.features.sampling import EVERY_CONFIG, SampleRule
from hpo.features.spec import FeatureSpec
from hpo.features.table.on_disk import ARRAY_DTYPES, MappedArray, mapped_ref, reopen
from hpo.features.table.rows import GraphRows, extract_graph_rows
from hpo.features.tile import extract_tile_features, tile_feature_names
from hpo.ownership import TEMP_SUFFIX, temp_prefix

__all__ = [
    "FeatureTable",
    "GraphRef",
    "by_family",
    "extract_file",
    "extract_layout_blocks",
    "extract_rows",
    "extracted_names",
    "extraction_jobs",
    "family_of",
    "feature_names",
]

#: What reading a damaged cache entry raises (it is then computed again).
_CACHE_ERRORS: tuple[type[Exception], ...] = (*ARCHIVE_ERRORS, KeyError)
#: The member of a cache entry holding the CRC-32 of its other arrays, as written.
_CRC_MEMBER = "crc32"


def family_of(collection: str) -> str:
    """``layout`` for the four layout collections, ``tile`` for tile:xla."""
    return "layout" if is_layout(collection) else "tile"


def by_family(collections: Iterable[str]) -> dict[str, list[str]]:
    """``{family: its collections, in the given order}``, families by name (layout, tile):
    one model is trained, saved and routed to per family."""
    grouped: dict[str, list[str]] = {}
    for collection in collections:
        grouped.setdefault(family_of(collection), []).append(collection)
    return dict(sorted(grouped.items()))


def feature_names(family: str, spec: FeatureSpec) -> list[str]:
    """Column names of a family's feature rows under ``spec`` (and of its feature version)."""
    return [n for n in extracted_names(family, spec) if not spec.drops(n)]


def extracted_names(family: str, spec: FeatureSpec) -> list[str]:
    """Column names of what today's extractor computes for ``spec``: the columns of every
    readable version (the rows of :func:`extract_file`; a model picks its own by name)."""
    current = spec.extracting()
    return layout_feature_names(current) if family == "layout" else tile_feature_names(current)


def version_columns(family: str, spec: FeatureSpec) -> np.ndarray | None:
    """Indices of the extractor's columns that make the rows of ``spec``'s version (None: all).

    The extractor computes every column of every readable version; a version's rows leave out
    those added since and those it superseded.
    """
    keep = [not spec.drops(n) for n in extracted_names(family, spec)]
    return None if all(keep) else np.flatnonzero(keep)


def extraction_jobs(n_jobs: int | None) -> int:
    """Files extracted in parallel: ``n_jobs``, or by default one per CPU, at most 4 (what
    ``hpo run``, ``hpo export`` and ``hpo evaluate`` use when not told).

    Raises
    ------
    UsageError
        In one line, if ``n_jobs`` is not from 1 to this machine's cores: ``--jobs 100000``
        started processes for minutes, and 0 was taken as the default.
    """
    cores = os.cpu_count() or 1
    if n_jobs is None:
        return min(4, cores)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or not 1 <= n_jobs <= cores:
        raise UsageError(
            f"--jobs {n_jobs}: expected 1 to {cores}, the cores of this machine (processes "
            "beyond them only wait for one)"
        )
    return n_jobs


@dataclass(frozen=True)
class GraphRef:
    """Which graph a block of rows came from."""

    collection: str
    stem: str
    n_configs: int
    labeled: bool


@dataclass(frozen=True, eq=False)
class FeatureTable:
    """Rows of one family and split; rows of one graph are contiguous.

    Built with a cache (:func:`hpo.features.build_tables`), the arrays are read-only
    ``numpy.memmap`` arrays of the table's files, and a pickle carries their file references
    (read rows in chunks with :func:`hpo.features.table.store.read_rows`); otherwise in memory.

    Attributes
    ----------
    X
        float32 features (rows, F).
    target
        float64 target: normalized runtime (tile) or runtime in ns (layout); lower is faster.
    group
        int64 index into ``graphs`` per row.
    config_index
        int64 index of the row's config in its file.
    dup_count
        int64 number of identical configs merged into the row (1 when not merged).
    """

    family: str
    split: str
    X: np.ndarray
    target: np.ndarray
    group: np.ndarray
    config_index: np.ndarray
    dup_count: np.ndarray
    graphs: tuple[GraphRef, ...]
    feature_names: tuple[str, ...]

    def __reduce__(self) -> tuple[Callable[..., FeatureTable], tuple[dict[str, Any]]]:
        """Pickle a memory-mapped array as its file reference, not its rows (Dask scatters
        the tables to workers): the worker maps the file again and shares the page cache."""
        state: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ARRAY_DTYPES:
            state[name] = mapped_ref(state[name]) or state[name]
        return _restore_table, (state,)

    @property
    def n_rows(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    def group_bounds(self) -> np.ndarray:
        """Row offsets: rows of graph g are ``bounds[g]:bounds[g + 1]``."""
        counts = np.bincount(self.group, minlength=len(self.graphs))
        return np.concatenate([[0], np.cumsum(counts)])

    def collections(self) -> list[str]:
        """Collections present, in table order."""
        seen: list[str] = []
        for g in self.graphs:
            if g.collection not in seen:
                seen.append(g.collection)
        return seen


def _restore_table(state: dict[str, Any]) -> FeatureTable:
    """Unpickle a :class:`FeatureTable`, mapping again the arrays pickled as file references."""
    for name, value in state.items():
        if isinstance(value, MappedArray):
            state[name] = reopen(value)
    return FeatureTable(**state)


def _file_digest(path: Path) -> str:
    """Hash of a file's bytes, read into one reused 1 MB buffer (``read(n)`` allocates n
    bytes per call however short the file, which dwarfed the rows of a small file)."""
    h = hashlib.blake2b(digest_size=16)
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    with open(path, "rb") as fh:
        while n := fh.readinto(buffer):
            h.update(view[:n])
    return h.hexdigest()


def cache_entry(
    cache_dir: Path, path: Path, collection: str, spec: FeatureSpec, rule: SampleRule | None = None
) -> Path:
    """The cache file of ``path``'s rows under ``rule`` (``None``: every config, prediction's)."""
    key = f"{_file_digest(path)}-{spec.cache_token()}"
    if rule is not None:
        key += f"-{rule.token()}"
    return cache_folder(cache_dir, collection) / f"{path.stem}-{key}.npz"


def cache_folder(cache_dir: Path, collection: str) -> Path:
    """The folder of ``collection``'s per-file entries in the feature cache."""
    return Path(cache_dir) / collection.replace(":", "_")


def _entry_crc(arrays: dict[str, np.ndarray]) -> int:
    """CRC-32 of a cache entry's arrays: each one's name, dtype, shape and bytes, by name."""
    crc = 0
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        crc = zlib.crc32(f"{name}:{a.dtype.str}:{a.shape}".encode(), crc)
        crc = zlib.crc32(a.reshape(-1).view(np.uint8).data, crc)
    return crc


def _read_entry(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays of a cache entry, or ``None`` if it is damaged, edited since it was written
    (its arrays no longer have the recorded CRC-32) or has no record (then it is recomputed)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
    except _CACHE_ERRORS:
        return None
    recorded = arrays.pop(_CRC_MEMBER, None)
    if recorded is None or recorded.shape != () or int(recorded) != _entry_crc(arrays):
        return None
    return arrays


def _read_rows_cache(path: Path) -> GraphRows | None:
    z = _read_entry(path)
    if z is None:
        return None  # a damaged cache entry is simply recomputed
    try:
        return GraphRows(
            X=z["X"],
            target=z["target"],
            config_index=z["config_index"],
            dup_count=z["dup_count"],
            labeled=bool(z["labeled"]),
            n_configs=int(z["n_configs"]),
        )
    except _CACHE_ERRORS:
        return None


def _write_npz(path: Path, **arrays: np.ndarray) -> None:
    """Write a cache entry through a temporary file and a rename; a full or read-only cache
    is a :class:`~hpo.errors.StorageError` naming the entry, and leaves no temporary file."""
    with naming(path, option="--cache-dir"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path), suffix=TEMP_SUFFIX)
        os.close(fd)
        tmp = Path(name)
        try:
            crc = np.array(_entry_crc(arrays), dtype=np.int64)
            with open(tmp, "wb") as fh:  # a file object: np.savez would add ".npz" to a name
                np.savez(fh, allow_pickle=False, **arrays, **{_CRC_MEMBER: crc})
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):  # renamed, or never written
                tmp.unlink(missing_ok=True)


def extract_rows(
    path: Path,
    collection: str,
    spec: FeatureSpec,
    rule: SampleRule = EVERY_CONFIG,
    cache_dir: Path | None = None,
) -> tuple[GraphRows, bool]:
    """The rows of one file under ``rule``, from the cache when possible.

    Returns
    -------
    tuple
        ``(rows, cache_hit)``.
    """
    cache_file = cache_entry(cache_dir, path, collection, spec, rule) if cache_dir else None
    return rows_of_entry(path, collection, spec, rule, cache_file)


def rows_of_entry(
    path: Path, collection: str, spec: FeatureSpec, rule: SampleRule, cache_file: Path | None
) -> tuple[GraphRows, bool]:
    """:func:`extract_rows` once the cache entry's name is known (``None``: no cache)."""
    if cache_file is not None and cache_file.exists():
        cached = _read_rows_cache(cache_file)
        if cached is not None:
            return cached, True
    rows = extract_graph_rows(path, collection, spec, rule)
    if cache_file is not None:
        _write_npz(
            cache_file,
            X=rows.X,
            target=rows.target,
            config_index=rows.config_index,
            dup_count=rows.dup_count,
            labeled=np.array(rows.labeled),
            n_configs=np.array(rows.n_configs),
        )
    return rows, False


def _read_cache(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool] | None:
    z = _read_entry(path)
    if z is None:
        return None  # a damaged cache entry is simply recomputed
    try:
        return z["X"], z["target"], z["hashes"], bool(z["labeled"])
    except _CACHE_ERRORS:
        return None


def _write_cache(
    path: Path, X: np.ndarray, target: np.ndarray, hashes: np.ndarray, labeled: bool
) -> None:
    _write_npz(path, X=X, target=target, hashes=hashes, labeled=np.array(labeled))


def extract_file(
    path: Path, collection: str, spec: FeatureSpec, cache_dir: Path | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool, bool]:
    """Features, target and config hashes of EVERY config of one file, from the cache.

    What prediction uses: a test graph is never sampled, every config is ranked. The columns
    are those of ``spec``'s feature version (a model of an older version gets its own).

    Returns
    -------
    tuple
        ``(X, target, hashes, labeled, cache_hit)``.
    """
    keep = version_columns(family_of(collection), spec)
    full = spec.extracting()  # every readable version's columns; the cache holds them all
    cache_file = cache_entry(cache_dir, path, collection, full) if cache_dir else None
    cached = _read_cache(cache_file) if cache_file is not None and cache_file.exists() else None
    if cached is not None:
        X, target, hashes, labeled = cached
    else:
        X, target, hashes, labeled = _extract_every_config(path, collection, full)
        if cache_file is not None:
            _write_cache(cache_file, X, target, hashes, labeled)
    return (X if keep is None else X[:, keep]), target, hashes, labeled, cached is not None


def extract_layout_blocks(
    path: Path, collection: str, spec: FeatureSpec, blocks: np.ndarray
) -> np.ndarray:
    """Rows of layout configurations given as blocks (k, nc, 18), as if each were one more
    config of the layout file ``path`` (:func:`~hpo.features.layout.extract.layout_block_rows`),
    in the columns of ``spec``'s feature version, as :func:`extract_file` gives them."""
    keep = version_columns("layout", spec)
    X = layout_block_rows(load_layout_graph(path), collection, spec.extracting(), blocks)
    return X if keep is None else X[:, keep]


def _extract_every_config(
    path: Path, collection: str, spec: FeatureSpec
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Every config's features of one file under ``spec`` (its target, hashes, label flag)."""
    if is_layout(collection):
        lgraph = load_layout_graph(path)
        X, hashes = extract_layout_features(lgraph, collection, spec)
        target, labeled = lgraph.target, lgraph.labeled
    else:
        tgraph = load_tile_graph(path)
        X, hashes = extract_tile_features(tgraph, collection, spec)
        target, labeled = tgraph.target, tgraph.labeled
    if not np.isfinite(X).all():
        raise DataFormatError(f"{path}: features contain NaN/inf (unexpected values in the file)")
    return X, target, hashes, labeled
