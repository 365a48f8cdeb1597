"""The one place that leans on LightGBM's private names: a Dataset built from table chunks.

Why: the training rows of a campaign used to be copied once more, column-selected
and in Dataset order, before LightGBM binned them, and that copy was kept for the whole
campaign because continuing a booster (``lgb.train(init_model=...)``) computes the initial
scores by predicting ``Dataset.data``. Here LightGBM reads the rows from the feature tables
through a :class:`lightgbm.Sequence` (:class:`TableRows`) in batches of about
:data:`hpo.features.table.store.CHUNK_BYTES`, and :class:`ChunkedDataset` predicts the initial
scores over the same Sequence chunk by chunk, so neither construction nor continuation holds the raw
rows at once.

LightGBM's public API has no hook for either, and its Sequence path samples the rows it bins
from wastefully (a list of float64 rows, then an array of them, then a filtered copy of each
column, alive at once: about 6 bytes per float32 byte of the sample, which is every row below
``bin_construct_sample_cnt``), so :class:`ChunkedDataset` overrides two private methods of
``lightgbm.Dataset`` (4.x) and calls a third:

- ``_set_init_score_by_predictor(predictor, data, used_indices)``: called by ``lgb.train``
  (through ``Dataset._set_predictor``) with ``data=self.data``, which LightGBM's predictor
  cannot read when it is a Sequence (or the path of a binary Dataset file);
- ``__sample(*, seqs, total_nrow)`` (``_Dataset__sample``): the per-column non-zero values of
  the sampled rows, built here chunk by chunk (:meth:`TableRows.sample_columns`), so only the
  result (the float64 values LightGBM's binning needs) and one chunk are held;
- ``_create_sample_indices(*, total_nrow)``: which rows LightGBM samples (called as it is).

``tests/ranking/model/test_lightgbm_adapter.py`` fails if a signature changes, and checks the
sample equals LightGBM's own. No other module names a private LightGBM attribute.

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
from lightgbm.basic import ZERO_THRESHOLD

from hpo.features.table.store import CHUNK_BYTES, chunk_bounds, read_rows

__all__ = [
    "PRIVATE_HOOKS",
    "ROUND_STREAMS",
    "ChunkedDataset",
    "TableRows",
    "continued_seeds",
    "derived_data_seed",
    "hook_signatures",
    "save_binary_quietly",
]

#: The private ``lightgbm.Dataset`` methods :class:`ChunkedDataset` overrides or calls, with
#: the parameter names it relies on (checked by :func:`hook_signatures` in the tests).
PRIVATE_HOOKS: dict[str, tuple[str, ...]] = {
    "_set_init_score_by_predictor": ("self", "predictor", "data", "used_indices"),
    "_Dataset__sample": ("self", "seqs", "total_nrow"),
    "_create_sample_indices": ("self", "total_nrow"),
}


def hook_signatures() -> dict[str, tuple[str, ...]]:
    """Parameter names of the :data:`PRIVATE_HOOKS` in the installed LightGBM."""
    out: dict[str, tuple[str, ...]] = {}
    for name in PRIVATE_HOOKS:
        method = getattr(lgb.Dataset, name, None)
        out[name] = () if method is None else tuple(inspect.signature(method).parameters)
    return out


def save_binary_quietly(dataset: lgb.Dataset, path: str) -> None:
    """Save ``dataset`` as a LightGBM binary file without LightGBM's ``[Info] Saving data to
    binary file`` line on stdout.

    LightGBM's log level is per thread, set by the last call on that thread that read
    parameters: a Dataset built with ``verbose=-1`` on one thread and saved on another (a
    worker or the prebuild's pool) would log at Info. Checking ``verbose=-1`` first sets this
    thread's level.

    Raises
    ------
    lightgbm.basic.LightGBMError
        If LightGBM cannot write the file.
    """
    from lightgbm.basic import _LIB, _c_str, _safe_call

    quiet = _c_str("verbose=-1")
    _safe_call(_LIB.LGBM_DatasetUpdateParamChecking(quiet, quiet))
    dataset.save_binary(path)


def derived_data_seed(seed: int) -> int:
    """The ``data_random_seed`` LightGBM's config derives from ``seed`` (``Config::Set``).

    Its first draw of ``Random(seed).NextShort(0, INT16_MAX)``: one step of the linear
    congruential generator of LightGBM's ``utils/random.h`` on a 32-bit unsigned state.
    """
    x = (214013 * (int(seed) & 0xFFFFFFFF) + 2531011) & 0xFFFFFFFF
    return ((x >> 16) & 0x7FFF) % 32767


#: LightGBM's random streams that draw per boosting round (columns, rows, extra-trees
#: thresholds, ``rank_xendcg``'s per-query draws); each restarts from its seed whenever
#: ``lgb.train`` is called.
ROUND_STREAMS = ("feature_fraction_seed", "bagging_seed", "extra_seed", "objective_seed")


def continued_seeds(seed: int, done: int) -> dict[str, int]:
    """Seeds of LightGBM's per-round random streams for rounds continuing ``done`` rounds.

    Why: ``lgb.train(init_model=...)`` starts these streams again from their seeds, so a
    booster continued at round ``done`` would draw the column and row samples of rounds
    ``1, 2, ...`` again, and one taken up a budget ladder (42, 84, ... 672 rounds) draws
    its first 42 samples five times. Continued boosters then scored below boosters trained
    straight with the same configuration and seed
    (docs/benchmarks.md#fidelity-and-continued-boosters). A stream seeded from ``(seed, done)``
    draws samples the booster has not used, so the same ladder gives the same result on a
    resume, and a continued booster stays deterministic. It is not the straight booster's
    stream: LightGBM cannot be fast-forwarded.
    """
    if done <= 0:
        return {}
    state = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(done)]).generate_state(
        len(ROUND_STREAMS)
    )
    return {name: int(v % 0x7FFFFFFF) for name, v in zip(ROUND_STREAMS, state, strict=True)}


class TableRows(lgb.Sequence):
    """Rows of ``(table, rows)`` parts, in a given order, read from the tables in chunks.

    Row ``i`` of the Sequence is row ``order[i]`` of the concatenation of the parts (part
    ``k`` contributes ``X_k[rows_k]``). It holds only the index arrays: every read goes
    through :func:`hpo.features.table.store.read_rows`, so a memory-mapped table is read with file
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
        :data:`hpo.features.table.store.CHUNK_BYTES`).
    columns
        The table columns the Dataset holds, in order (default all): the booster's columns,
        which leave out the columns only the learned prior reads
        (:func:`hpo.features.is_prior_only`).
    """

    def __init__(
        self,
        parts: Sequence[tuple[np.ndarray, np.ndarray]],
        order: np.ndarray,
        chunk_bytes: int | None = None,
        columns: np.ndarray | None = None,
    ) -> None:
        if not parts:
            raise ValueError("TableRows: no parts")
        widths = {int(X.shape[1]) for X, _ in parts}
        if len(widths) != 1:
            raise ValueError(f"TableRows: parts have different widths {sorted(widths)}")
        self.tables = [X for X, _ in parts]
        width = widths.pop()
        self.columns = None if columns is None else np.asarray(columns, dtype=np.int64)
        if (
            self.columns is not None
            and self.columns.size
            and (self.columns.min() < 0 or self.columns.max() >= width)
        ):
            raise ValueError(f"TableRows: a column index is outside the tables' {width} columns")
        self.n_columns = width if self.columns is None else int(self.columns.size)
        sizes = [len(r) for _, r in parts]
        whole = np.concatenate([np.asarray(r, dtype=np.int64) for _, r in parts])
        part = np.repeat(np.arange(len(parts), dtype=np.min_scalar_type(len(parts))), sizes)
        order = np.asarray(order, dtype=np.int64)
        if order.shape != whole.shape:
            raise ValueError(f"TableRows: order has {order.size} rows, the parts {whole.size}")
        self.row = whole[order]  # row of its table, per Dataset row
        self.part = part[order]  # which table, per Dataset row
        self.chunk_bytes = int(CHUNK_BYTES if chunk_bytes is None else chunk_bytes)
        self.batch_size = max(1, self.chunk_bytes // (4 * max(1, self.n_columns)))

    def __len__(self) -> int:
        return int(self.row.size)

    def read(self, positions: np.ndarray) -> np.ndarray:
        """The rows at ``positions`` (Dataset order) as one float32 array."""
        positions = np.asarray(positions, dtype=np.int64)
        if len(self.tables) == 1:
            return read_rows(self.tables[0], self.row[positions], self.columns)
        out = np.empty((positions.size, self.n_columns), dtype=np.float32)
        part = self.part[positions]
        for k, X in enumerate(self.tables):
            at = np.flatnonzero(part == k)
            if at.size:
                out[at] = read_rows(X, self.row[positions[at]], self.columns)
        return out

    def chunks(self) -> Any:
        """``(start, stop, rows)`` over the whole Sequence in chunks of about ``chunk_bytes``."""
        bounds = chunk_bounds(len(self), 4 * self.n_columns, self.chunk_bytes)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            yield a, b, self.read(np.arange(a, b))

    def sample_columns(self, positions: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """What LightGBM finds bin bounds from: per column, the values of the rows at
        ``positions`` that are not zero (NaN included) as float64, and their indices among
        ``positions`` (int32), read a chunk at a time (LightGBM's ``Dataset.__sample``)."""
        positions = np.asarray(positions, dtype=np.int64)
        values: list[list[np.ndarray]] = [[] for _ in range(self.n_columns)]
        where: list[list[np.ndarray]] = [[] for _ in range(self.n_columns)]
        bounds = chunk_bounds(positions.size, 8 * self.n_columns, self.chunk_bytes)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            columns = np.ascontiguousarray(self.read(positions[a:b]).T, dtype=np.float64)
            keep = (np.abs(columns) > ZERO_THRESHOLD) | np.isnan(columns)
            for j in range(self.n_columns):
                at = np.flatnonzero(keep[j])
                values[j].append(columns[j, at])
                where[j].append((at + a).astype(np.int32))
        out_values, out_where = [], []
        for j in range(self.n_columns):  # each column's pieces freed as it is joined
            out_values.append(np.concatenate(values[j]) if values[j] else np.zeros(0))
            out_where.append(np.concatenate(where[j]) if where[j] else np.zeros(0, dtype=np.int32))
            values[j], where[j] = [], []
        return out_values, out_where

    def __getitem__(self, idx: int | slice | list[int]) -> np.ndarray:
        if isinstance(idx, numbers.Integral):  # float64: LightGBM bins samples as doubles
            return self.read(np.array([int(idx)]))[0].astype(np.float64)
        if isinstance(idx, slice):
            span = range(len(self))[idx]
            return self.read(np.arange(span.start, span.stop, span.step))
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

    def _Dataset__sample(
        self, *, seqs: list[Any], total_nrow: int
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        if len(seqs) != 1 or seqs[0] is not self.rows:
            raise ValueError("ChunkedDataset: built from its own TableRows only")
        indices = self._create_sample_indices(total_nrow=total_nrow)
        return self.rows.sample_columns(indices)

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
