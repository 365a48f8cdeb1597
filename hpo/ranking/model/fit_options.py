"""The options of :func:`hpo.ranking.training.train_family` besides rounds and seed.

The objective and export each change a few of them (the objective its row sample, the
booster it continues, its Dataset cache and the graphs of a fold; export the extra tables of
train+valid); one object carries them, so the training path keeps a short signature.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpo.errors import UsageError
from hpo.features.table.feature_table import FeatureTable
from hpo.ranking.model.datasets import DatasetCache

__all__ = ["FitOptions", "check_threads"]


def check_threads(n: int, flag: str = "--threads") -> int:
    """``n`` LightGBM threads if this machine has that many cores (from 1 to
    ``os.cpu_count()``); threads beyond the cores only wait for one, and ``--threads 100000``
    crashed LightGBM's OpenMP (a segmentation fault that left the run's lock behind).

    Raises
    ------
    UsageError
        In one line naming ``flag``, the value and the limit.
    """
    cores = os.cpu_count() or 1
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= cores:
        raise UsageError(
            f"{flag} {n}: expected 1 to {cores}, the cores of this machine (LightGBM's "
            "threads beyond them only wait for one)"
        )
    return n


@dataclass(frozen=True, kw_only=True, eq=False)
class FitOptions:
    """What a caller of :func:`train_family` may change besides rounds and seed.

    Attributes
    ----------
    n_threads
        LightGBM threads for binning, boosting and predicting.
    rows
        Training rows of ``train`` (default: every labeled row of the collections); the
        ``configs`` fidelity passes a sample.
    init_model
        A booster to continue (the objective's lower-budget booster).
    extra
        More tables to train on, all their labeled rows of the collections (export's
        train+valid).
    columns
        The live feature columns, the only ones the trees may split on (default: those the
        hyperparameters select, :func:`hpo.ranking.training.feature_columns`). The Dataset
        and the model hold every column of the table but those only the learned prior reads
        (:func:`hpo.ranking.training.booster_columns`); the others get a zero
        ``feature_contri``.
    cache
        Reuse the binned Dataset and the gathered valid rows across calls (the objective's).
        Results are identical with or without it.
    score_graphs
        Boolean mask over ``valid.graphs``: score only these graphs (a cross-validation fold,
        :mod:`hpo.ranking.folds`); default every labeled graph of the collections.
    rows_return
        Whether later fits use the same rows (the ``rounds`` fidelity; not the ``configs``
        fidelity, which samples rows per trial). With a cache, the learned prior's equations
        of every column are then summed once and each fit solves its live columns; otherwise
        each fit sums those of its live columns only, about half as many.
    dataset_dir
        Where constructed Datasets are saved as LightGBM binary files and loaded by every
        worker of the machine (:func:`hpo.ranking.model.datasets.binary_dataset`); ``None``: not
        saved. Only Datasets of memory-mapped tables are saved.
    histogram_pool_mb
        LightGBM's ``histogram_pool_size`` in MiB; 0: unbounded (LightGBM's default). A
        booster keeps one gradient histogram per leaf, every bin of every column (0.47 MiB
        a leaf for a real-size layout Dataset at ``max_bin`` 255,
        docs/benchmarks.md#speed-and-memory); a pool recomputes what it evicts instead, for time.
    deadline
        Wall-clock time (``time.time()``) after which boosting stops with
        :class:`hpo.errors.TrialCut` (a campaign's walltime and its grace); ``None``: none.
    blend_shares
        ``{collection: share of its blend weight}`` a scored trial chose for the learned
        prior (0: off; a collection absent: its whole weight), kept by this fit instead of
        chosen on its valid graphs (``estimate_blend_select``). A retrained export passes its
        incumbent's: on ``train+valid`` the valid graphs are among the training rows, where
        the trees beat any blend, so choosing there switched the prior off where the trial,
        scored on graphs it had not seen, kept it. ``None``: chosen on valid as the
        hyperparameters say.
    """

    n_threads: int = 1
    rows: np.ndarray | None = None
    init_model: Any | None = None
    extra: Sequence[FeatureTable] = ()
    columns: np.ndarray | None = None
    cache: DatasetCache | None = None
    score_graphs: np.ndarray | None = None
    rows_return: bool = True
    dataset_dir: Path | None = None
    histogram_pool_mb: int = 0
    deadline: float | None = None
    blend_shares: Mapping[str, float] | None = None
