"""Deterministic ``.npz`` writing for the generator: same arrays, same bytes.

A dataset generated twice with one seed must be byte-identical (tests compare digests), and
``node_config_feat`` of a real-size layout file is several GB, so it is streamed in blocks.
"""

from __future__ import annotations

import contextlib
import os
import zipfile
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

import numpy as np

from hpo.errors import naming

__all__ = ["NpzWriter"]


class NpzWriter:
    """Write an uncompressed ``.npz`` whose bytes depend only on the arrays and their order.

    Members get a fixed timestamp (1980-01-01) and are written in call order; one member can
    be streamed block by block (:meth:`add_rows`) so memory does not grow with its size. The
    file appears under its name only once complete.
    """

    def __init__(self, path: Path) -> None:
        self._path = Path(path)
        # written under a temporary name and renamed when whole: a full disk or a kill never
        # leaves a truncated file under the final name
        self._tmp = self._path.with_name(f".{self._path.name}.tmp")
        with self._naming():
            self._zf = zipfile.ZipFile(
                self._tmp, "w", compression=zipfile.ZIP_STORED, allowZip64=True
            )

    def _naming(self) -> contextlib.AbstractContextManager[None]:
        """A full or read-only disk, named by the file's final name (``--out``'s)."""
        return naming(self._path, option="--out")

    def __enter__(self) -> NpzWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if exc_type is not None:
                with contextlib.suppress(OSError):  # the error inside is the one to tell
                    self._zf.close()
                return
            with self._naming():
                self._zf.close()
                os.replace(self._tmp, self._path)
        finally:
            with contextlib.suppress(OSError):
                self._tmp.unlink(missing_ok=True)

    def _member(self, key: str) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        return info

    def add(self, key: str, array: np.ndarray) -> None:
        """Write one whole array as member ``key``."""
        with self._naming(), self._zf.open(self._member(key), "w", force_zip64=True) as fh:
            np.lib.format.write_array(fh, np.ascontiguousarray(array), allow_pickle=False)

    def add_rows(
        self, key: str, shape: tuple[int, ...], dtype: np.dtype, blocks: Iterable[np.ndarray]
    ) -> None:
        """Write member ``key`` of ``shape`` from consecutive blocks of rows.

        Raises
        ------
        ValueError
            If a block has the wrong dtype or row shape, or the rows do not add up to
            ``shape[0]``.
        """
        header = {
            "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
            "fortran_order": False,
            "shape": tuple(int(s) for s in shape),
        }
        rows = 0
        with self._naming(), self._zf.open(self._member(key), "w", force_zip64=True) as fh:
            np.lib.format.write_array_header_1_0(fh, header)
            for block in blocks:
                if block.dtype != dtype or block.shape[1:] != tuple(shape[1:]):
                    raise ValueError(
                        f"{key}: block {block.dtype}{block.shape} does not match "
                        f"{np.dtype(dtype)}{shape}"
                    )
                fh.write(np.ascontiguousarray(block).data.cast("B"))
                rows += block.shape[0]
        if rows != shape[0]:
            raise ValueError(f"{key}: wrote {rows} rows, header says {shape[0]}")
