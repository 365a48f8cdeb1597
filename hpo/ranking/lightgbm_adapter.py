"""The one place that leans on LightGBM's private names: a Dataset built from table chunks.

Why (issue 20): the training rows of a campaign used to be copied once more, column-selected
and in Dataset order, before LightGBM binned them, and that copy was kept for the whole
campaign because continuing a booster (``lgb.train(init_model=...)``) computes the initial
scores by predicting ``Dataset.data``. Here LightGBM reads the rows from the feature tables
through a :class:`lightgbm.Sequence` (:class:`TableRows`) in batches of about
:data:`hpo.features.store.CHUNK_BYTES`, and :class:`ChunkedDataset` predicts the initial scores
over the same Sequence chunk by chunk, so neither construction nor continuation holds the raw
rows at once.

LightGBM's public API has no hook for either, so :class:`ChunkedDataset` overrides two private
methods of ``lightgbm.Dataset`` (4.x):

- ``_set_init_score_by_predictor(predictor, data, used_indices)``: called by ``lgb.train``
  (through ``Dataset._set_predictor``) with ``data=self.data``, which LightGBM's predictor
  cannot read when it is a Sequence (or the path of a binary Dataset file);
- ``_create_sample_indices(*, total_nrow)``: the rows LightGBM reads one at a time to find the
  bin bounds; knowing them, :class:`TableRows` reads them in a few chunked passes instead of
  one file read per row.

``tests/ranking/test_lightgbm_adapter.py`` fails if either signature changes. No other module
names a private LightGBM attribute.

One more piece of LightGBM's insides lives here: :func:`derived_data_seed`. LightGBM draws the
rows it bins from with ``data_random_seed``, which its C++ config derives from ``seed``; a
Sequence's sample is drawn in Python from the Dataset params alone (``Dataset.get_params``
drops ``seed``), so without the derived value passed explicitly a Sequence would be binned
from another sample than the same rows in a numpy array (same trees only below
``bin_construct_sample_cnt`` rows).
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Sequence
from typing import Any

import lightgbm as lgb
import numpy as np

from hpo.features.store import CHUNK_BYTES, chunk_bounds, read_rows

__all__ = [
    "PRIVATE_HOOKS",
    "ChunkedDataset",
    "TableRows",
    "derived_data_seed",
    "hook_signatures",
]

#: The private ``lightgbm.Dataset`` methods :class:`ChunkedDataset` overrides, with the
#: parameter names it relies on (checked by :func:`hook_signatures` in the tests).
PRIVATE_HOOKS: dict[str, tuple[str, ...]] = {
    "_set_init_score_by_predictor": ("self", "predictor", "data", "used_indices"),
    "_create_sample_indices": ("self", "total_nrow"),
}


def hook_signatures() -> dict[str, tuple[str, ...]]:
    """Parameter names of the :data:`PRIVATE_HOOKS` in the installed LightGBM."""
    out: dict[str, tuple[str, ...]] = {}
    for name in PRIVATE_HOOKS:
        method = getattr(lgb.Dataset, name, None)
        out[name] = () if method is None else tuple(inspect.signature(method).parameters)
    return out


def derived_data_seed(seed: int) -> int:
    """The ``data_random_seed`` LightGBM's config derives from ``seed`` (``Config::Set``).

    Its first draw of ``Random(seed).NextShort(0, INT16_MAX)``: one step of the linear
    congruential generator of LightGBM's ``utils/random.h`` on a 32-bit unsigned state.
    """
    x = (214013 * (int(seed) & 0xFFFFFFFF) + 2531011) & 0xFFFFFFFF
    return ((x >> 16) & 0x7FFF) % 32767


class TableRows(lgb.Sequence):
    """Rows of ``(table, rows)`` parts, in a given order, read from the tables in chunks.

    Row ``i`` of the Sequence is row ``order[i]`` of the concatenation of the parts (part
    ``k`` contributes ``X_k[rows_k]``). It holds only the index arrays: every read goes
    through :func:`hpo.features.store.read_rows`, so a memory-mapped table is read with file
    reads and an in-memory one is indexed.

    Parameters
    ----------
    parts
        ``(X, rows)`` pairs: a 2-D float table (in memory or a ``numpy.memmap``) and row
        indices into it. Every table has the same columns.
    order
        A permutation of the concatenated rows: the Dataset's row order.
    chunk_bytes
        Bytes of float32 rows one read holds (LightGBM's ``batch_size``; default
        :data:`hpo.features.store.CHUNK_BYTES`).
    """

    def __init__(
        self,
        parts: Sequence[tuple[np.ndarray, np.ndarray]],
        order: np.ndarray,
        chunk_bytes: int | None = None,
    ) -> None:
        if not parts:
            raise ValueError("TableRows: no parts")
        widths = {int(X.shape[1]) for X, _ in parts}
        if len(widths) != 1:
            raise ValueError(f"TableRows: parts have different widths {sorted(widths)}")
        self.tables = [X for X, _ in parts]
        self.n_columns = widths.pop()
        sizes = [len(r) for _, r in parts]
        whole = np.concatenate([np.asarray(r, dtype=np.int64) for _, r in parts])
        part = np.repeat(np.arange(len(parts), dtype=np.int32), sizes)
        order = np.asarray(order, dtype=np.int64)
        if order.shape != whole.shape:
            raise ValueError(f"TableRows: order has {order.size} rows, the parts {whole.size}")
        self.row = whole[order]  # row of its table, per Dataset row
        self.part = part[order]  # which table, per Dataset row
        self.chunk_bytes = int(CHUNK_BYTES if chunk_bytes is None else chunk_bytes)
        self.batch_size = max(1, self.chunk_bytes // (4 * max(1, self.n_columns)))
        self._sampled: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return int(self.row.size)

    def read(self, positions: np.ndarray) -> np.ndarray:
        """The rows at ``positions`` (Dataset order) as one float32 array."""
        positions = np.asarray(positions, dtype=np.int64)
        out = np.empty((positions.size, self.n_columns), dtype=np.float32)
        part = self.part[positions]
        for k, X in enumerate(self.tables):
            at = np.flatnonzero(part == k)
            if at.size:
                out[at] = read_rows(X, self.row[positions[at]])
        return out

    def chunks(self) -> Any:
        """``(start, stop, rows)`` over the whole Sequence in chunks of about ``chunk_bytes``."""
        bounds = chunk_bounds(len(self), 4 * self.n_columns, self.chunk_bytes)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            yield a, b, self.read(np.arange(a, b))

    def prefetch(self, positions: np.ndarray) -> None:
        """Read the rows at sorted ``positions`` now, in chunks, for the single-row reads
        LightGBM makes while it samples bin bounds (kept until a batch read or :meth:`release`)."""
        positions = np.asarray(positions, dtype=np.int64)
        rows = np.empty((positions.size, self.n_columns), dtype=np.float32)
        bounds = chunk_bounds(positions.size, 4 * self.n_columns, self.chunk_bytes)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            rows[a:b] = self.read(positions[a:b])
        self._sampled = (positions, rows)

    def release(self) -> None:
        """Drop the rows :meth:`prefetch` read."""
        self._sampled = None

    def __getitem__(self, idx: int | slice | list[int]) -> np.ndarray:
        if isinstance(idx, numbers.Integral):  # float64: LightGBM bins samples as doubles
            i = int(idx)
            if self._sampled is not None:
                positions, rows = self._sampled
                at = int(np.searchsorted(positions, i))
                if at < positions.size and positions[at] == i:
                    return rows[at].astype(np.float64)
            return self.read(np.array([i]))[0].astype(np.float64)
        self.release()  # batch reads: LightGBM is done sampling
        if isinstance(idx, slice):
            return self.read(np.arange(len(self))[idx])
        if isinstance(idx, list):
            return self.read(np.asarray(idx, dtype=np.int64))
        raise TypeError(f"TableRows index must be an int, slice or list, found {type(idx)}")


class ChunkedDataset(lgb.Dataset):
    """A LightGBM Dataset whose raw rows are a :class:`TableRows`, never a float32 copy.

    ``data`` is either the :class:`TableRows` itself or the path of a binary Dataset file
    (``Dataset.save_binary``) made from the same rows: in both cases ``rows`` is what the
    initial scores of a continued booster are predicted on, chunk by chunk. Construct it with
    ``free_raw_data=False`` (LightGBM continues a booster only while ``data`` is set; here it
    holds row indices, not rows).
    """

    def __init__(self, data: Any, *, rows: TableRows, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.rows = rows

    def _create_sample_indices(self, *, total_nrow: int) -> np.ndarray:
        indices = super()._create_sample_indices(total_nrow=total_nrow)
        self.rows.prefetch(np.sort(indices))
        return indices

    def _set_init_score_by_predictor(
        self, predictor: Any, data: Any, used_indices: Any
    ) -> lgb.Dataset:
        if predictor is None or used_indices is not None:  # no rows read (or a subset)
            return super()._set_init_score_by_predictor(predictor, data, used_indices)
        if predictor.num_class != 1:
            raise ValueError("ChunkedDataset: only single-output boosters continue")
        score = np.empty(len(self.rows), dtype=np.float64)
        for a, b, X in self.rows.chunks():
            score[a:b] = np.asarray(predictor.predict(X, raw_score=True)).ravel()
        self.set_init_score(score)
        return self
