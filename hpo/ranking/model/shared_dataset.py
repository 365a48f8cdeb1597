"""One binned training Dataset for the trials of a process, copied only while they overlap.

LightGBM's ranking objectives keep pointers to a Dataset's labels and query sizes for as long
as they boost, and a continued booster's initial scores are a field of the Dataset too. So a
Dataset cannot be boosted on by two trials at once, since either may set those fields. The
thread workers of a local cluster share one Dataset cache (:mod:`hpo.ranking.model.datasets`). With
one lock around each Dataset, two trials that wanted the same family at the same ``max_bin``
took turns: with ``--workers 2`` trials ran 0.7x as fast as on two processes
(docs/benchmarks.md#speed-and-memory). Instead, a trial checks out a copy for its
boosting, and a trial that finds every copy busy makes one more (it loads the binary Dataset
file, or bins the rows again) rather than wait. A process thus holds as many copies as it had
trials boosting on that Dataset at once: at most its workers, and one copy when trials never
overlap, as with one worker.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["RankingData"]

#: Fields that no copy has: set them before boosting.
_UNSET = (0, 0)


class _Copy:
    """One constructed Dataset and the (label levels, largest sub-query) its fields hold."""

    def __init__(self, dataset: Any, fields: tuple[int, int]) -> None:
        self.dataset = dataset
        self.fields = fields


class RankingData:
    """A constructed LightGBM Dataset, copies of it while trials overlap, and what re-labels them.

    Labels depend on ``label_levels`` and the sub-queries on ``max_group_size``. Both are
    LightGBM fields that can be set on a constructed Dataset, so one binned Dataset serves
    every value of them (:meth:`checkout` sets them).

    Parameters
    ----------
    make
        Constructs a Dataset of the rows, with the fields it was made with
        (``(label_levels, max_group_size)``, or ``(0, 0)`` when they are unknown, as for a
        loaded file). It is called once here, and again for each copy.
    labels
        The relevance labels of ``label_levels`` levels, in Dataset row order.
    groups
        The sub-query sizes for a ``max_group_size``.
    rows
        The runtime and the graph id of every row, in Dataset order: what an objective hpo
        computes itself reads (:mod:`hpo.ranking.model.pairs`).
    """

    def __init__(
        self,
        make: Callable[[], tuple[Any, tuple[int, int]]],
        labels: Callable[[int], np.ndarray],
        groups: Callable[[int], np.ndarray],
        rows: tuple[np.ndarray, np.ndarray],
    ) -> None:
        self._make, self._labels, self._groups = make, labels, groups
        self.rows = rows
        first = _Copy(*make())
        #: the Dataset first made (built or loaded); trials boost on checked-out copies
        self.dataset = first.dataset
        self._free = [first]
        self._lock = threading.Lock()
        #: copies made in all, the first included
        self.copies = 1
        #: copies dropped because a trial failed while holding them
        self.dropped = 0

    @contextlib.contextmanager
    def checkout(self, label_levels: int, max_group_size: int) -> Iterator[Any]:
        """A copy of the Dataset to boost on, labelled for these values, for this trial alone.

        A free copy whose fields already hold them is preferred (setting labels and
        sub-queries costs a pass over the rows); with no copy free, another is made.
        """
        wanted = (int(label_levels), int(max_group_size))
        with self._lock:
            copy = next((c for c in self._free if c.fields == wanted), None)
            if copy is None and self._free:
                copy = self._free[-1]
            if copy is not None:
                self._free.remove(copy)
        if copy is None:
            copy = _Copy(*self._make())
            with self._lock:
                self.copies += 1
        try:
            if copy.fields != wanted:
                done, copy.fields = copy.fields, _UNSET  # a failure half-way leaves them unset
                if done[0] != wanted[0]:
                    copy.dataset.set_label(self._labels(wanted[0]))
                if done[1] != wanted[1]:
                    copy.dataset.set_group(self._groups(wanted[1]))
                copy.fields = wanted
            yield copy.dataset
        except BaseException:
            # a trial that failed inside LightGBM may leave the Dataset's C++ fields half
            # updated (the next set_label on it once segfaulted): the copy is dropped, and
            # the next trial that needs one makes a fresh one
            with self._lock:
                self.dropped += 1
            raise
        else:
            with self._lock:
                self._free.append(copy)
