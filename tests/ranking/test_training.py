from __future__ import annotations

import numpy as np
import pytest

from hpo.features.table import FeatureTable, GraphRef
from hpo.ranking.training import feature_columns, make_ranker, sample_configs, select_rows


def _table(sizes: list[int], labeled: list[bool] | None = None) -> FeatureTable:
    rng = np.random.default_rng(0)
    n = sum(sizes)
    labeled = labeled or [True] * len(sizes)
    return FeatureTable(
        family="layout",
        split="train",
        X=rng.normal(size=(n, 3)).astype(np.float32),
        target=rng.random(n),
        group=np.repeat(np.arange(len(sizes)), sizes),
        config_index=np.concatenate([np.arange(s) for s in sizes]),
        dup_count=np.ones(n, dtype=np.int64),
        graphs=tuple(
            GraphRef("layout:xla:random" if i % 2 else "layout:nlp:random", f"g{i}", s, lab)
            for i, (s, lab) in enumerate(zip(sizes, labeled, strict=True))
        ),
        feature_names=("a", "a_dmed", "a_prank"),
    )


def test_feature_columns_can_drop_relative() -> None:
    t = _table([3])
    assert list(feature_columns(t, {"relative_features": True})) == [0, 1, 2]
    assert list(feature_columns(t, {"relative_features": "False"})) == [0]


def test_select_rows_by_collection_and_label() -> None:
    t = _table([2, 3, 4], labeled=[True, True, False])
    assert list(select_rows(t, ["layout:xla:random"])) == [2, 3, 4]
    assert list(select_rows(t, ["layout:nlp:random"])) == [0, 1]


@pytest.mark.parametrize("per_graph", [1, 5, 100])
def test_sample_configs_caps_each_graph(per_graph: int) -> None:
    t = _table([50, 7, 200])
    rows = sample_configs(t, np.arange(t.n_rows), per_graph, np.random.default_rng(0))
    counts = np.bincount(t.group[rows], minlength=3)
    np.testing.assert_array_equal(counts, np.minimum([50, 7, 200], per_graph))
    assert len(np.unique(rows)) == len(rows)


def test_sample_configs_biased_toward_fast() -> None:
    t = _table([2000])
    rows = sample_configs(t, np.arange(t.n_rows), 200, np.random.default_rng(1), fast_bias=3.0)
    pct = np.argsort(np.argsort(t.target)) / 1999
    assert pct[rows].mean() < 0.4  # unbiased sampling would average 0.5


def test_make_ranker_splits_hyperparameters() -> None:
    r = make_ranker(
        {
            "learning_rate": np.float64(0.2),
            "label_levels": 8,
            "max_group_size": 256,
            "relative_features": True,
        },
        num_boost_round=7,
        seed=3,
    )
    assert r.params == {"learning_rate": 0.2}
    assert (r.label_levels, r.max_group_size, r.num_boost_round, r.seed) == (8, 256, 7, 3)
