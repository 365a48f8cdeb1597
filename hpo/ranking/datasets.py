"""A bounded cache of constructed LightGBM Datasets, reused across trials and budgets.

Binning the training rows (LightGBM ``Dataset.construct``) plus computing labels and
sub-queries cost about as much as boosting a smallest-budget trial on ``small`` data (see
bench/README.md, "Where a trial's time goes"), yet they depend only on the rows and on a few
hyperparameters (:meth:`hpo.ranking.ranker.LambdaRanker.dataset_key`). The cache lives on the
object that trains (the objective), one per worker process: it is never pickled, so a Dask
worker starts with an empty cache and fills it with its own Datasets.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

__all__ = ["DatasetCache", "rows_digest"]


def rows_digest(rows: np.ndarray) -> str:
    """A short digest of a row selection (the ``configs`` fidelity samples new rows per budget)."""
    return hashlib.sha1(np.ascontiguousarray(rows, dtype=np.int64).tobytes()).hexdigest()[:16]


class DatasetCache:
    """Least-recently-used store of at most ``max_entries`` built values (Datasets, arrays).

    Keys must identify everything a value depends on. Entries also hold the objects they were
    built from (``keep``), so an ``id()`` used in a key cannot be recycled while the entry lives.

    Parameters
    ----------
    max_entries
        Values kept; the least recently used is dropped beyond it, bounding memory. The
        default holds, per family, the binned Datasets of every ``max_bin`` x
        ``relative_features`` choice of the packaged space (2 x 3), their 2 raw row arrays
        and the 2 valid views: with 24 entries a random-search campaign on both families
        stops rebuilding after its first trials (at 6 it thrashed: 10 of 62 fits reused).
        Raw rows are shared by the Datasets built on them; on ``small`` data the entries of
        both families hold about 200 MB.
    """

    def __init__(self, max_entries: int = 24) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, found {max_entries}")
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, tuple[Any, Any]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, build: Callable[[], Any], keep: Any = None) -> tuple[Any, bool]:
        """The value of ``key``, built by ``build()`` on a miss; and whether it was reused."""
        if key in self._entries:
            self._entries.move_to_end(key)
            self.hits += 1
            return self._entries[key][0], True
        value = build()
        self.misses += 1
        self._entries[key] = (value, keep)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
        return value, False

    def clear(self) -> None:
        """Drop every entry."""
        self._entries.clear()

    def __getstate__(self) -> dict[str, Any]:
        # Datasets wrap C handles and can be large: a pickled copy (to a Dask worker) starts empty
        return {"max_entries": self.max_entries}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["max_entries"])  # type: ignore[misc]
