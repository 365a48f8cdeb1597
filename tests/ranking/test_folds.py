"""Folds over graphs (hpo.ranking.folds): disjoint, complete, seeded, refused when too few."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hpo.data.load import COLLECTIONS
from hpo.errors import ConfigError
from hpo.features import ExtractOptions, FeatureSpec, build_tables
from hpo.features.table.feature_table import FeatureTable, GraphRef
from hpo.ranking.folds import assign_folds, fold_index, fold_names, fold_rows, labeled_table


def _graphs(counts: dict[str, int], unlabeled: int = 0) -> tuple[GraphRef, ...]:
    refs = [GraphRef(c, f"{c}-{i:03d}", 10, True) for c, n in counts.items() for i in range(n)]
    refs += [GraphRef("tile:xla", f"test-{i}", 10, False) for i in range(unlabeled)]
    return tuple(refs)


def _table(graphs: tuple[GraphRef, ...], rows_per_graph: int = 3, split: str = "train"):
    n = len(graphs) * rows_per_graph
    group = np.repeat(np.arange(len(graphs)), rows_per_graph)
    return FeatureTable(
        family="layout",
        split=split,
        X=np.arange(n * 2, dtype=np.float32).reshape(n, 2),
        target=np.arange(n, dtype=np.float64),
        group=group,
        config_index=np.tile(np.arange(rows_per_graph), len(graphs)),
        dup_count=np.ones(n, dtype=np.int64),
        graphs=graphs,
        feature_names=("a", "b"),
    )


@pytest.mark.parametrize("k", [2, 3, 5])
def test_every_labeled_graph_is_in_exactly_one_fold_of_every_collection(k: int) -> None:
    graphs = _graphs({"layout:xla:default": 7, "layout:nlp:random": 12}, unlabeled=3)
    folds = assign_folds(graphs, k, seed=0)
    labeled = np.array([g.labeled for g in graphs])
    assert (folds[~labeled] == -1).all()
    assert set(folds[labeled].tolist()) == set(range(k))
    for c in ("layout:xla:default", "layout:nlp:random"):
        mine = folds[[g.collection == c for g in graphs]]
        sizes = np.bincount(mine, minlength=k)
        assert sizes.min() >= 1
        assert sizes.max() - sizes.min() <= 1


def test_no_graph_is_trained_on_and_scored_in_one_fold() -> None:
    table = _table(_graphs({"layout:xla:default": 6, "layout:xla:random": 5}))
    folds = assign_folds(table.graphs, 3, seed=1)
    scored_anywhere = np.zeros(len(table.graphs), dtype=int)
    for fold in range(3):
        rows, scored = fold_rows(table, folds, fold, ["layout:xla:default", "layout:xla:random"])
        trained = np.unique(table.group[rows])
        assert not scored[trained].any()
        assert set(trained) | set(np.flatnonzero(scored)) == set(range(len(table.graphs)))
        # rows are whole graphs: every row of a trained graph is in
        assert len(rows) == 3 * len(trained)
        scored_anywhere += scored
    assert (scored_anywhere == 1).all()


def test_folds_are_seeded_and_independent_of_table_order() -> None:
    graphs = _graphs({"layout:nlp:default": 10})
    a = assign_folds(graphs, 3, seed=4)
    assert (a == assign_folds(graphs, 3, seed=4)).all()
    assert any((assign_folds(graphs, 3, seed=s) != a).any() for s in range(5, 10))
    reversed_graphs = graphs[::-1]
    assert (assign_folds(reversed_graphs, 3, seed=4)[::-1] == a).all()


def test_too_few_graphs_names_the_collection_and_counts() -> None:
    graphs = _graphs({"layout:xla:default": 8, "tile:xla": 2})
    with pytest.raises(ConfigError, match=r"'cv': collection tile:xla has 2 labeled .* 3 folds"):
        assign_folds(graphs, 3, seed=0)
    assert (assign_folds(graphs, 3, seed=0, collections=["layout:xla:default"]) >= -1).all()


def test_fold_names_and_index() -> None:
    assert fold_names(3) == ["fold0", "fold1", "fold2"]
    assert fold_index("fold2", 3) == 2
    with pytest.raises(ValueError, match="not a fold of 3"):
        fold_index("fold3", 3)


def test_labeled_table_joins_train_and_valid_rows(tiny_root: Path, tmp_path: Path) -> None:
    tables = build_tables(
        tiny_root,
        COLLECTIONS,
        ("train", "valid"),
        FeatureSpec(),
        extract=ExtractOptions(cache_dir=tmp_path, n_jobs=1),
    )
    train, valid = tables[("layout", "train")], tables[("layout", "valid")]
    both = labeled_table(train, valid)
    assert both.n_rows == train.n_rows + valid.n_rows
    assert both.graphs == (*train.graphs, *valid.graphs)
    bounds = both.group_bounds()
    g = len(train.graphs)  # the first valid graph keeps its rows
    assert np.array_equal(both.X[bounds[g] : bounds[g + 1]], valid.X[valid.group == 0])
