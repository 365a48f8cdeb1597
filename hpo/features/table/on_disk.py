"""Feature tables on disk: written once per key, mapped read-only, pickled as file references.

Why: at the real dataset's size a family's float32 table is gigabytes. Held in
memory, it is copied into every Dask worker a campaign scatters it to, and building it
concatenated every file's rows (twice the table at peak). On disk, under
``cache_dir/tables/``, the table is written once while its files' rows stream in, each
process maps it read-only (workers on one machine share the page cache), and a pickle carries
the file's name, not its rows (:func:`mapped_ref`, :func:`reopen`).

Format: one ``.npy`` file per array of a table (``X`` float32 (rows, F); ``target`` float64,
``group``, ``config_index``, ``dup_count`` int64 (rows,)) and a JSON list of its graphs, named
``{family}-{split}-{key}.{array}.npy`` and ``...graphs.json``. The key (:func:`table_key`) is
a hash of what makes the rows: the per-file cache entries in order, the version columns and
the feature names; equal keys mean equal bytes. ``X`` is streamed into a temporary file
behind a placeholder ``.npy`` header, which is rewritten with the row count at the end (the
header has room for any row count: numpy pads it so the first axis can grow in place).
Every file is written to a temporary name and ``os.replace``\\ d into place, ``X`` last: two
campaigns building one key at once write the same bytes, and a file is never seen half
written. A table is trusted only if every file is present and each size agrees with its
header and the shapes agree with each other, and each file's contents have the CRC-32 that
``...crc32.json`` recorded as they were written (:func:`open_table_files`); otherwise it is
rebuilt, so a truncated file is never mapped (reading past a mapping's end kills the
process with SIGBUS), nor one changed at the same size (an ``X`` overwritten in place once
scored 0.2473 instead of 0.7706). The check reads the table once: 0.08 s for a 300 MB
table in the page cache (zlib's CRC-32, about 3.7 GB/s; 0.002 s without the check), at most
the disk's read time otherwise, for rows every trial reads again; the writer computes it as
the rows stream in.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import socket
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npy_format

from hpo.errors import UsageError, naming
from hpo.ownership import TEMP_SUFFIX, temp_prefix

__all__ = [
    "TABLE_FORMAT",
    "MappedArray",
    "TableWriter",
    "mapped_ref",
    "open_table_files",
    "reopen",
    "table_key",
]

#: Version of the on-disk layout; part of every key, so a new layout never reads an old one.
TABLE_FORMAT = 1
#: dtype of each array of a table, in the order their files are checked.
ARRAY_DTYPES: dict[str, np.dtype] = {
    "X": np.dtype("<f4"),
    "target": np.dtype("<f8"),
    "group": np.dtype("<i8"),
    "config_index": np.dtype("<i8"),
    "dup_count": np.dtype("<i8"),
}
#: Arrays of one graph's rows that a writer collects in memory (small next to ``X``).
PER_ROW = ("target", "config_index", "dup_count")


def table_key(parts: dict[str, Any]) -> str:
    """A hash of ``parts`` (JSON-serializable: cache entry names, columns, feature names)."""
    text = json.dumps({"format": TABLE_FORMAT, **parts}, sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def _file(prefix: Path, name: str) -> Path:
    return prefix.with_name(f"{prefix.name}.{name}.npy")


def _graphs_file(prefix: Path) -> Path:
    return prefix.with_name(f"{prefix.name}.graphs.json")


def _crc_file(prefix: Path) -> Path:
    return prefix.with_name(f"{prefix.name}.crc32.json")


#: Bytes :func:`_crc32` hands zlib at a time (it releases the GIL for each).
_CRC_CHUNK = 1 << 26


def _crc32(data: np.ndarray | bytes, crc: int = 0) -> int:
    """CRC-32 of an array's bytes in C order (a memory-mapped one read in chunks), or of
    ``bytes``, continuing from ``crc``."""
    flat = np.frombuffer(data, np.uint8) if isinstance(data, bytes) else data
    flat = np.ascontiguousarray(flat).reshape(-1).view(np.uint8)
    for start in range(0, flat.size, _CRC_CHUNK):
        crc = zlib.crc32(flat[start : start + _CRC_CHUNK].data, crc)
    return crc


def _header(shape: tuple[int, ...], dtype: np.dtype) -> bytes:
    out = io.BytesIO()
    npy_format.write_array_header_1_0(
        out, {"descr": npy_format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
    )
    return out.getvalue()


def _temp_beside(path: Path) -> tuple[int, Path]:
    with naming(path, option="--cache-dir"):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=temp_prefix(path), suffix=TEMP_SUFFIX)
    return fd, Path(tmp)


def _save_atomic(path: Path, array: np.ndarray) -> None:
    fd, tmp = _temp_beside(path)
    try:
        with naming(path, option="--cache-dir"):
            with os.fdopen(fd, "wb") as fh:
                np.save(fh, array, allow_pickle=False)
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):  # renamed, or never written
            tmp.unlink(missing_ok=True)


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = _temp_beside(path)
    try:
        with naming(path, option="--cache-dir"):
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):  # renamed, or never written
            tmp.unlink(missing_ok=True)


class TableWriter:
    """Streams one table's rows into its files: ``X`` to disk as each graph arrives.

    What stays in memory is the small per-row arrays (target, config index, duplicate count:
    24 bytes a row) and the graph list; ``X`` goes to a temporary file at once.

    Parameters
    ----------
    prefix
        Path of the table without suffix: ``cache_dir/tables/{family}-{split}-{key}``.
    width
        Columns of ``X``.
    """

    def __init__(self, prefix: Path, width: int) -> None:
        self.prefix = prefix
        self.width = width
        self._rows = 0
        self._crc = 0  # of X's rows, as they are written
        self._graphs: list[dict[str, Any]] = []
        self._per_row: dict[str, list[np.ndarray]] = {name: [] for name in PER_ROW}
        fd, self._tmp = _temp_beside(_file(prefix, "X"))
        self._fh = os.fdopen(fd, "wb")
        self._header_bytes = len(_header((0, width), ARRAY_DTYPES["X"]))
        try:
            with self._naming():
                self._fh.write(b"\0" * self._header_bytes)  # the header is written by finish()
        except BaseException:
            self.abort()
            raise

    def _naming(self) -> contextlib.AbstractContextManager[None]:
        """A full or read-only cache, named by the table's ``X`` file (its final name)."""
        return naming(_file(self.prefix, "X"), option="--cache-dir")

    def add(self, graph: dict[str, Any], X: np.ndarray, **per_row: np.ndarray) -> None:
        """Append one graph's rows; ``graph`` is its JSON record, ``per_row`` its small arrays."""
        if X.ndim != 2 or X.shape[1] != self.width:
            raise ValueError(f"{self.prefix.name}: rows of width {self.width}, got {X.shape}")
        rows = np.ascontiguousarray(X, dtype=ARRAY_DTYPES["X"])
        with self._naming():
            self._fh.write(rows.data)
        self._crc = _crc32(rows, self._crc)
        self._graphs.append({**graph, "rows": int(X.shape[0])})
        self._rows += int(X.shape[0])
        for name in PER_ROW:
            self._per_row[name].append(per_row[name])

    def finish(self) -> None:
        """Write the header, the small arrays and the graph list, then move ``X`` into place."""
        header = _header((self._rows, self.width), ARRAY_DTYPES["X"])
        if len(header) != self._header_bytes:  # numpy leaves room for 21 digits of rows
            raise ValueError(f"{self.prefix.name}: .npy header grew with {self._rows} rows")
        try:
            with self._naming():
                self._fh.seek(0)
                self._fh.write(header)
                self._fh.close()
            sizes = [g["rows"] for g in self._graphs]
            group = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
            _save_atomic(_file(self.prefix, "group"), group)
            crcs = {"X": self._crc, "group": _crc32(group)}
            for name in PER_ROW:
                parts = self._per_row[name]
                merged = np.concatenate(parts) if parts else np.zeros(0)
                array = merged.astype(ARRAY_DTYPES[name])
                _save_atomic(_file(self.prefix, name), array)
                crcs[name] = _crc32(array)
            graphs = json.dumps(self._graphs).encode()
            _write_atomic(_graphs_file(self.prefix), graphs)
            crcs["graphs"] = _crc32(graphs)
            _write_atomic(_crc_file(self.prefix), json.dumps(crcs, sort_keys=True).encode())
            with self._naming():
                os.replace(self._tmp, _file(self.prefix, "X"))
        finally:
            self.abort()

    def abort(self) -> None:
        """Drop the temporary file (extraction failed, or the table is in place); a full disk
        that fails the last flush does not keep it."""
        with contextlib.suppress(OSError):
            self._fh.close()
        with contextlib.suppress(OSError):
            self._tmp.unlink(missing_ok=True)


def _checked_header(path: Path, dtype: np.dtype) -> tuple[int, ...] | None:
    """Shape of a ``.npy`` file whose dtype, order and size agree with its header, else None."""
    try:
        with open(path, "rb") as fh:
            version = npy_format.read_magic(fh)
            if version != (1, 0):
                return None
            shape, fortran, found = npy_format.read_array_header_1_0(fh)
            offset = fh.tell()
        size = path.stat().st_size
    except (OSError, ValueError):
        return None
    if fortran or found != dtype:
        return None
    if size != offset + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
        return None  # truncated, or grown by something else
    return tuple(int(s) for s in shape)


def open_table_files(
    prefix: Path, width: int, n_graphs: int
) -> tuple[dict[str, np.ndarray], list[dict[str, Any]]] | None:
    """The arrays of a table on disk, mapped read-only, and its graph records; None if untrusted.

    Trusted only when every file is there, each file's size agrees with its header, ``X``
    has ``width`` columns and as many rows as the other arrays, the graph list has
    ``n_graphs`` entries whose row counts sum to the rows, and every file's contents have
    the CRC-32 recorded when it was written (a table without the record, from before it,
    is rebuilt once).
    """
    shapes = {name: _checked_header(_file(prefix, name), dt) for name, dt in ARRAY_DTYPES.items()}
    x_shape = shapes["X"]
    if x_shape is None or x_shape[1:] != (width,):
        return None
    if any(shapes[name] != x_shape[:1] for name in ARRAY_DTYPES if name != "X"):
        return None
    try:
        text = _graphs_file(prefix).read_bytes()
        graphs = json.loads(text)
        counted = sum(int(g["rows"]) for g in graphs)
        crcs = json.loads(_crc_file(prefix).read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if len(graphs) != n_graphs or counted != x_shape[0]:
        return None
    arrays = {name: np.load(_file(prefix, name), mmap_mode="r") for name in ARRAY_DTYPES}
    found = {name: _crc32(array) for name, array in arrays.items()}
    if not isinstance(crcs, dict) or crcs != {**found, "graphs": _crc32(text)}:
        return None  # changed since it was written, whatever its size
    return arrays, graphs


@dataclass(frozen=True)
class MappedArray:
    """What a pickle of a memory-mapped array carries: its file, offset, shape and dtype."""

    path: str
    offset: int
    shape: tuple[int, ...]
    dtype: str


def mapped_ref(array: np.ndarray) -> MappedArray | None:
    """The file reference of ``array`` if it maps a whole file read-only, else None.

    Only a whole-file mapping qualifies: numpy's views of a ``memmap`` keep their parent's
    ``offset``, so a slice cannot name its own bytes; it is pickled as data instead.
    """
    if not isinstance(array, np.memmap) or array.mode != "r" or not array.flags.c_contiguous:
        return None
    name = getattr(array, "filename", None)
    if name is None:
        return None
    try:
        size = os.stat(name).st_size
    except OSError:
        return None
    if size != int(array.offset) + array.nbytes:
        return None
    return MappedArray(str(name), int(array.offset), tuple(array.shape), array.dtype.str)


def reopen(ref: MappedArray) -> np.ndarray:
    """Map the file a :class:`MappedArray` names again, read-only.

    Raises
    ------
    UsageError
        If the file is not there at that size: a Dask worker on another machine needs the
        cache folder at the same path (a shared filesystem), as it needs the run folder.
    """
    dtype = np.dtype(ref.dtype)
    expected = ref.offset + int(np.prod(ref.shape, dtype=np.int64)) * dtype.itemsize
    try:
        size = os.stat(ref.path).st_size
    except OSError as exc:
        size, reason = -1, exc.strerror or type(exc).__name__
    else:
        reason = f"{size} bytes, expected {expected}"
    if size != expected:
        raise UsageError(
            f"{ref.path}: cannot map this feature table on {socket.gethostname()} ({reason}); "
            "workers on other machines need the cache folder at the same path"
        )
    return np.memmap(ref.path, dtype=dtype, mode="r", offset=ref.offset, shape=ref.shape)
