"""Reading rows of a feature table in bounded chunks, whether it is in memory or on disk.

Why: at the real dataset's size a family's float32 table is gigabytes. A campaign
must not hold a second full copy of it (the column-selected, Dataset-ordered rows) while
LightGBM bins it, nor keep every page of a memory-mapped table resident: the pages of a
``numpy.memmap`` that were read stay in the process's resident set as long as the mapping
lives. :func:`read_rows` therefore reads a memory-mapped table with plain file reads
(``numpy.fromfile`` at an offset) of the spans its rows fall in, never touching the mapping,
so what a caller holds is the rows it asked for plus one window of at most
:data:`WINDOW_BYTES`; an in-memory table is indexed directly.
:func:`chunk_bounds` cuts a row list into pieces of a bounded byte size for such reads.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CHUNK_BYTES", "WINDOW_BYTES", "chunk_bounds", "mapped_file", "read_rows"]

#: Bytes of float32 rows a chunked pass holds at once (LightGBM's Sequence batches, valid
#: predictions, the prior's accumulation): small next to a table, large enough that the
#: per-call overheads of LightGBM and numpy vanish.
CHUNK_BYTES = 64 << 20
#: Largest contiguous span read from disk in one call by :func:`read_rows`.
WINDOW_BYTES = 8 << 20
#: Rows between two wanted rows below which :func:`read_rows` reads through the gap rather
#: than starting a new read (a read of a few pages costs less than a system call per row).
_GAP_ROWS = 64


def chunk_bounds(n_rows: int, row_bytes: int, chunk_bytes: int = CHUNK_BYTES) -> np.ndarray:
    """Offsets cutting ``n_rows`` rows of ``row_bytes`` each into chunks of <= ``chunk_bytes``.

    Returns ``[0, ..., n_rows]``; chunk i is ``bounds[i]:bounds[i + 1]`` (at least one row).
    """
    per = max(1, int(chunk_bytes) // max(1, int(row_bytes)))
    return np.unique(np.r_[np.arange(0, n_rows, per), n_rows]).astype(np.int64)


def mapped_file(X: np.ndarray) -> tuple[str, int] | None:
    """``(file, byte offset)`` of a memory-mapped table, ``None`` for an in-memory one."""
    name = getattr(X, "filename", None) if isinstance(X, np.memmap) else None
    return None if name is None else (str(name), int(getattr(X, "offset", 0)))


def read_rows(X: np.ndarray, rows: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray:
    """``X[rows][:, columns]`` as a new C-contiguous float32 array, in ``rows``' order.

    ``X`` is a 2-D table in memory or a C-ordered ``numpy.memmap`` of a file; the latter is
    read with file reads of at most :data:`WINDOW_BYTES` (rows closer than a few pages are
    read through), so the mapping's pages never join the resident set.

    Parameters
    ----------
    X
        The table (rows, F).
    rows
        Row indices, any order, repeats allowed.
    columns
        Column indices to keep (default all).
    """
    rows = np.asarray(rows, dtype=np.int64)
    where = mapped_file(X)
    if where is None or not X.flags.c_contiguous:
        out = X[rows] if columns is None else X[np.ix_(rows, np.asarray(columns))]
        return np.ascontiguousarray(out, dtype=np.float32)
    n, width = X.shape
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise IndexError(f"row index out of range for a table of {n} rows")
    cols = None if columns is None else np.asarray(columns, dtype=np.int64)
    out = np.empty((rows.size, width if cols is None else cols.size), dtype=np.float32)
    if rows.size == 0:
        return out
    order = np.argsort(rows, kind="stable")
    wanted = rows[order]
    row_bytes = width * X.dtype.itemsize
    window = max(1, WINDOW_BYTES // row_bytes)
    # runs of wanted rows whose gaps are small, each read in windows of at most `window` rows
    cuts = np.flatnonzero(np.diff(wanted) > _GAP_ROWS) + 1
    starts = np.r_[0, cuts]
    ends = np.r_[cuts, wanted.size]
    with open(where[0], "rb") as fh:
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
            i = a
            while i < b:
                lo = int(wanted[i])
                j = int(np.searchsorted(wanted, lo + window, side="left", sorter=None))
                j = min(max(j, i + 1), b)
                hi = int(wanted[j - 1]) + 1
                fh.seek(where[1] + lo * row_bytes)
                span = np.fromfile(fh, dtype=X.dtype, count=(hi - lo) * width)
                span = span.reshape(hi - lo, width)
                picked = span[wanted[i:j] - lo]
                out[order[i:j]] = picked if cols is None else picked[:, cols]
                i = j
    return out
