"""K-fold cross-validation over graphs: which labeled graph is scored in which fold.

On the real dataset a layout collection has 7 valid graphs: an incumbent chosen on them is
partly chosen by luck. ``hpo run --cv K`` pools each collection's *labeled* graphs of the
train and valid splits (:func:`labeled_table`) and splits them **by graph**, never by row,
into K folds (:func:`assign_folds`): a trial on fold ``i`` trains on every labeled graph not
in fold ``i`` and is scored on the graphs of fold ``i`` (:func:`fold_rows`). The split is a
seeded permutation per collection, so every fold holds graphs of every collection and the
same campaign seed gives the same folds on every worker, in every resumed process and in
every call (the assignment is recomputed, never shipped: it costs one sort per collection).

Folds are SMAC instances named ``fold0`` ... ``fold{K-1}`` (:func:`fold_names`), so SMAC
races a configuration over folds and drops a bad one after a fold or two.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from hpo.errors import ConfigError
from hpo.features.table.feature_table import FeatureTable, GraphRef
from hpo.ranking.training import select_rows

__all__ = ["FOLD_PREFIX", "assign_folds", "fold_index", "fold_names", "fold_rows", "labeled_table"]

#: SMAC instance names of the folds: ``fold0``, ``fold1`` ...
FOLD_PREFIX = "fold"


def fold_names(k: int) -> list[str]:
    """The SMAC instance names of ``k`` folds."""
    return [f"{FOLD_PREFIX}{i}" for i in range(k)]


def fold_index(instance: str | None, k: int) -> int:
    """The fold number of the SMAC instance ``instance`` (``fold2`` -> 2).

    Raises
    ------
    ValueError
        If ``instance`` is not one of :func:`fold_names` of ``k``.
    """
    names = fold_names(k)
    if instance not in names:
        raise ValueError(f"instance {instance!r} is not a fold of {k} ({', '.join(names)})")
    return names.index(instance)


def assign_folds(
    graphs: Sequence[GraphRef], k: int, seed: int, collections: Sequence[str] | None = None
) -> np.ndarray:
    """The fold of every graph: ``-1`` for an unlabeled graph or one of another collection.

    The labeled graphs of each collection, ordered by file stem (so the table's order does not
    matter), are permuted by a generator seeded from ``seed`` and the collection's name, and
    dealt round-robin into the ``k`` folds: fold sizes of a collection differ by at most one.

    Parameters
    ----------
    graphs
        The graphs of a table (``FeatureTable.graphs``).
    k
        Number of folds (>= 2).
    seed
        The campaign seed.
    collections
        Collections to split (default: every collection with a labeled graph).

    Raises
    ------
    ConfigError
        If a collection has fewer labeled graphs than folds.
    """
    if k < 2:
        raise ConfigError(f"campaign setting 'cv': expected 2 or more folds, found {k}")
    fold = np.full(len(graphs), -1, dtype=np.int64)
    names = np.array([g.collection for g in graphs], dtype=object)
    labeled = np.array([g.labeled for g in graphs], dtype=bool)
    stems = np.array([g.stem for g in graphs], dtype=object)
    present = sorted(set(names[labeled].tolist()))
    wanted = collections if collections is not None else present
    for collection in wanted:
        idx = np.flatnonzero((names == collection) & labeled)
        if len(idx) < k:
            raise ConfigError(
                f"campaign setting 'cv': collection {collection} has {len(idx)} labeled "
                f"graphs (train+valid), fewer than the {k} folds asked for"
            )
        idx = idx[np.argsort(stems[idx], kind="stable")]
        rng = np.random.default_rng([seed, zlib.crc32(collection.encode())])
        fold[idx[rng.permutation(len(idx))]] = np.arange(len(idx)) % k
    return fold


def fold_rows(
    table: FeatureTable, folds: np.ndarray, fold: int, collections: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Training rows and scored graphs of ``fold``.

    Returns
    -------
    tuple
        The row indices of every labeled graph of ``collections`` not in ``fold``, and a
        boolean mask over ``table.graphs`` of the graphs scored (those in ``fold``).
    """
    rows = select_rows(table, collections)
    rows = rows[(folds[table.group[rows]] != fold) & (folds[table.group[rows]] >= 0)]
    return rows, folds == fold


def labeled_table(train: FeatureTable, valid: FeatureTable) -> FeatureTable:
    """One table of a family's train and valid rows (train first), built once per campaign.

    Rows keep their per-graph caps (train graphs their fast-biased sample, valid graphs their
    uniform one); graph indices of the valid rows are shifted past the train graphs.

    The joined table is in memory even when ``train`` and ``valid`` are memory-mapped tables
    on disk (:func:`hpo.features.build_tables` with a cache): cross-validation holds one copy
    of a family's labeled rows, and a pickle of it (Dask's scatter) carries the rows.
    """
    if train.family != valid.family or train.feature_names != valid.feature_names:
        raise ConfigError(
            f"cannot join the {train.family} train table and the {valid.family} valid table: "
            "their families or feature columns differ"
        )
    return FeatureTable(
        family=train.family,
        split="train+valid",
        X=np.concatenate([train.X, valid.X]),
        target=np.concatenate([train.target, valid.target]),
        group=np.concatenate([train.group, valid.group + len(train.graphs)]),
        config_index=np.concatenate([train.config_index, valid.config_index]),
        dup_count=np.concatenate([train.dup_count, valid.dup_count]),
        graphs=(*train.graphs, *valid.graphs),
        feature_names=train.feature_names,
    )
