"""Streaming access to the ``.npy`` members of an ``.npz`` archive.

``np.load`` on an ``.npz`` reads a member whole. The ``node_config_feat`` member of a real
layout file can be several GB, so this module reads the ``.npy`` header of a member and then
its rows sequentially through :class:`zipfile.ZipFile`, which decompresses deflated members
on the fly and reads stored members directly. Peak memory is one chunk, whatever the
number of rows. Object arrays are refused: nothing here ever unpickles.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from hpo.errors import DataFormatError

__all__ = [
    "ARCHIVE_ERRORS",
    "NpyHeader",
    "check_member_size",
    "iter_member_rows",
    "read_member_header",
]

#: Deflate's largest expansion, output bytes per input byte (zlib's technical details: a
#: compressed stream expands at most 1032 times).
MAX_DEFLATE_RATIO = 1032

#: What reading a damaged or hostile ``.npz`` raises: besides the obvious ones, zipfile's
#: RuntimeError for an encrypted member and NotImplementedError for a compression method it
#: lacks (a flag or a field of the archive's headers is enough).
ARCHIVE_ERRORS: tuple[type[Exception], ...] = (
    ValueError,
    OSError,
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
    RuntimeError,
    NotImplementedError,
)


@dataclass(frozen=True)
class NpyHeader:
    """Shape and dtype of one ``.npy`` member of an ``.npz`` file."""

    shape: tuple[int, ...]
    dtype: np.dtype
    fortran_order: bool


def _read_header(stream: IO[bytes], path: Path, key: str) -> NpyHeader:
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(stream)
    except ARCHIVE_ERRORS as exc:
        raise DataFormatError(f"{path}: key '{key}': unreadable .npy header ({exc})") from exc
    if dtype.hasobject:
        raise DataFormatError(f"{path}: key '{key}': object arrays are not allowed (found {dtype})")
    return NpyHeader(shape=tuple(int(s) for s in shape), dtype=dtype, fortran_order=fortran)


def read_member_header(path: Path, key: str) -> NpyHeader:
    """Read the shape and dtype of member ``key`` without reading its data.

    Raises
    ------
    DataFormatError
        If the archive or the member is missing or unreadable.
    """
    try:
        with zipfile.ZipFile(path) as zf:
            return _member_header(zf, path, key)[1]
    except ARCHIVE_ERRORS as exc:
        raise DataFormatError(f"{path}: not a readable .npz archive ({exc})") from exc


def _member_header(
    zf: zipfile.ZipFile, path: Path, key: str
) -> tuple[zipfile.ZipInfo, NpyHeader, int]:
    """Member ``key``'s zip entry, ``.npy`` header and where its data starts."""
    try:
        info = zf.getinfo(f"{key}.npy")
        with zf.open(info) as stream:
            return info, _read_header(stream, path, key), stream.tell()
    except KeyError as exc:
        raise DataFormatError(f"{path}: missing key '{key}'") from exc
    except ARCHIVE_ERRORS as exc:
        raise DataFormatError(f"{path}: not a readable .npz archive ({exc})") from exc


def check_member_size(zf: zipfile.ZipFile, path: Path, key: str) -> None:
    """Refuse member ``key`` when its ``.npy`` header declares more data than it holds.

    ``np.load`` allocates the array its header declares before reading a byte of it, so a
    header of a few bytes claiming terabytes would end in a MemoryError, and one claiming
    gigabytes would take them first.

    Raises
    ------
    DataFormatError
        If the member is unreadable or declares more bytes than it holds.
    """
    info, header, offset = _member_header(zf, path, key)
    need = math.prod(header.shape) * header.dtype.itemsize  # exact: a shape may be huge
    # the sizes in the zip's directory are claims too: bound them by the bytes the archive
    # holds, times deflate's largest expansion for a deflated member
    held = min(info.compress_size, path.stat().st_size)
    if info.compress_type == zipfile.ZIP_STORED:
        held = min(held, info.file_size)
    elif info.compress_type == zipfile.ZIP_DEFLATED:
        held = min(held * MAX_DEFLATE_RATIO, info.file_size)
    else:
        held = info.file_size
    if need > held - offset:
        shown = f"{float(need):.3g}" if need < 10**300 else "over 1e300"
        raise DataFormatError(
            f"{path}: key '{key}': its header declares shape {header.shape[:4]} of "
            f"{header.dtype} ({shown} bytes), the member holds at most {held - offset:,}"
        )


def iter_member_rows(path: Path, key: str, rows_per_chunk: int) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(start_row, block)`` for consecutive blocks of rows of member ``key``.

    Each block holds at most ``rows_per_chunk`` rows along the first axis, in C order and
    with the stored dtype. Memory held at once is one block plus the zip buffer.

    Raises
    ------
    DataFormatError
        If the member is missing, Fortran-ordered, or shorter than its header says.
    """
    if rows_per_chunk < 1:
        raise ValueError(f"rows_per_chunk must be >= 1, got {rows_per_chunk}")
    try:
        with zipfile.ZipFile(path) as zf, zf.open(f"{key}.npy") as stream:
            header = _read_header(stream, path, key)
            if header.fortran_order and len(header.shape) > 1:
                raise DataFormatError(
                    f"{path}: key '{key}': Fortran-ordered arrays cannot be streamed"
                )
            if not header.shape:
                raise DataFormatError(f"{path}: key '{key}': expected an array, found a scalar")
            n_rows = header.shape[0]
            row_shape = header.shape[1:]
            row_bytes = int(np.prod(row_shape, dtype=np.int64)) * header.dtype.itemsize
            start = 0
            while start < n_rows:
                k = min(rows_per_chunk, n_rows - start)
                want = k * row_bytes
                buf = stream.read(want)
                if len(buf) != want:
                    raise DataFormatError(
                        f"{path}: key '{key}': truncated data (expected {n_rows} rows, "
                        f"file ends after {start + len(buf) // max(row_bytes, 1)})"
                    )
                block = np.frombuffer(buf, dtype=header.dtype).reshape((k, *row_shape))
                yield start, block
                start += k
    except KeyError as exc:
        raise DataFormatError(f"{path}: missing key '{key}'") from exc
    except ARCHIVE_ERRORS as exc:
        raise DataFormatError(
            f"{path}: corrupt .npz archive while reading '{key}' ({exc})"
        ) from exc
