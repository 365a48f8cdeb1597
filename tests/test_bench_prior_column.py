"""bench/bench_prior_column.py: the cross-fitted prior column never reads its own graph."""

from __future__ import annotations

import dataclasses

import numpy as np
from bench_modules import load_bench

from hpo.features.table.feature_table import FeatureTable, GraphRef


def _table(seed: int, collections: tuple[str, ...]) -> FeatureTable:
    """Graphs whose runtime is a sum of two byte totals (logged in the columns)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(20, 40, len(collections))
    bounds = np.r_[0, np.cumsum(sizes)]
    bytes_ = rng.uniform(1e6, 2e6, (bounds[-1], 2))
    runtime = bytes_ @ np.array([3.0, 0.5]) + rng.normal(0, 1e4, bounds[-1])
    return FeatureTable(
        family="layout",
        split="train",
        X=np.log1p(bytes_).astype(np.float32),
        target=runtime,
        group=np.repeat(np.arange(sizes.size), sizes),
        config_index=np.concatenate([np.arange(s) for s in sizes]),
        dup_count=np.ones(bounds[-1], dtype=np.int64),
        graphs=tuple(GraphRef(c, f"g{i}", int(s), True) for i, (c, s) in enumerate(
            zip(collections, sizes, strict=True))),
        feature_names=("log_a", "log_b"),
    )  # fmt: skip


COLLECTIONS = ("layout:xla:random",) * 8 + ("layout:xla:default",) * 4


def test_a_train_graphs_column_does_not_move_with_its_own_runtimes() -> None:
    bench = load_bench("bench_prior_column")
    table = _table(0, COLLECTIONS)
    rows, live = np.arange(table.n_rows), np.arange(2)
    before = bench.cross_fitted(table, rows, live, folds=4)
    own = table.group == 0
    flipped = table.target.copy()
    flipped[own] = flipped[own].max() + flipped[own].min() - flipped[own]  # its order reversed
    after = bench.cross_fitted(dataclasses.replace(table, target=flipped), rows, live, folds=4)
    np.testing.assert_array_equal(before[own], after[own])
    assert not np.allclose(before[~own], after[~own])  # the graph did fit the others' priors
    # and the prior fitted elsewhere still orders the graph by its law
    assert np.corrcoef(before[own], table.target[own])[0, 1] > 0.9


def test_the_column_is_the_estimate_standardized_within_each_graph() -> None:
    bench = load_bench("bench_prior_column")
    table = _table(1, COLLECTIONS)
    values = np.arange(table.n_rows, dtype=np.float64) ** 1.5
    out = bench.with_column(table, values, only_random=False)
    assert out.feature_names[-1] == bench.COLUMN
    np.testing.assert_array_equal(out.X[:, :2], table.X)
    z = out.X[:, -1].astype(np.float64)
    for g in range(len(table.graphs)):
        part = z[table.group == g]
        assert abs(part.mean()) < 1e-5
        assert abs(part.std() - 1) < 1e-5
    random_only = bench.with_column(table, values, only_random=True).X[:, -1]
    default = np.array(["default" in c for c in COLLECTIONS])[table.group]
    assert np.isnan(random_only[default]).all()
    np.testing.assert_array_equal(random_only[~default], out.X[~default, -1])
