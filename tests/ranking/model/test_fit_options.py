from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hpo.data.load import COLLECTIONS
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.training import train_family

LAYOUT = [c for c in COLLECTIONS if c != "tile:xla"]
# many leaves on few rows: LightGBM's unbounded pool would hold a histogram for each
HP = {"learning_rate": 0.1, "num_leaves": 255, "min_data_in_leaf": 2, "label_levels": 8}


def _fit(tables, **kwargs):
    train, valid = tables[("layout", "train")], tables[("layout", "valid")]
    return train_family(train, valid, LAYOUT, HP, rounds=6, seed=0, options=FitOptions(**kwargs))


def test_the_histogram_pool_reaches_lightgbm_and_keeps_what_is_learned(tiny_tables) -> None:
    free = _fit(tiny_tables)
    pooled = _fit(tiny_tables, histogram_pool_mb=1)
    assert "histogram_pool_size" not in free.ranker.lightgbm_params()
    assert pooled.ranker.lightgbm_params()["histogram_pool_size"] == 1.0
    assert "[histogram_pool_size: 1]" in pooled.ranker.booster_.model_to_string()
    # a pool that holds every leaf's histogram changes nothing
    roomy = _fit(tiny_tables, histogram_pool_mb=1024)
    assert _trees(roomy) == _trees(free)
    # a pool of 1 MiB holds a few leaves: LightGBM builds an evicted parent's children both
    # from the rows instead of subtracting one from the parent, whose float rounding differs,
    # and near-tied splits can go the other way. The trees differ (so the pool is used) and
    # rank alike
    assert _trees(pooled) != _trees(free)
    valid = tiny_tables[("layout", "valid")]
    a = free.ranker.predict(np.asarray(valid.X[:, free.columns]))
    b = pooled.ranker.predict(np.asarray(valid.X[:, pooled.columns]))
    assert np.corrcoef(a, b)[0, 1] > 0.98  # 0.988 on today's 573 columns
    for collection, score in free.metrics.items():
        assert abs(pooled.metrics[collection] - score) < 0.02


def _trees(fit) -> str:
    """The model's trees, without its parameters (which name the pool)."""
    return fit.ranker.booster_.model_to_string().split("parameters:")[0]


@pytest.mark.parametrize("family", ["tile", "layout"])
def test_threads_change_no_score(tiny_tables: Any, family: str) -> None:
    """A resume may change --threads (probe 33) because LightGBM runs deterministic=True:
    the same trees, byte for byte, and the same scores, whatever its threads."""
    collections = [c for c in COLLECTIONS if (c == "tile:xla") == (family == "tile")]
    train, valid = tiny_tables[(family, "train")], tiny_tables[(family, "valid")]
    hp = {"learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 5, "label_levels": 8}
    fits = [
        train_family(
            train, valid, collections, hp, rounds=8, seed=3, options=FitOptions(n_threads=n)
        )  # fmt: skip
        for n in (1, 2, 4)
    ]
    texts = {f.ranker.booster_.model_to_string().split("\nparameters:\n")[0] for f in fits}
    assert len(texts) == 1
    assert fits[0].metrics == fits[1].metrics == fits[2].metrics


def test_threads_are_bounded_by_the_cores() -> None:
    import os

    from hpo.errors import UsageError
    from hpo.ranking.model.fit_options import check_threads

    cores = os.cpu_count() or 1
    assert check_threads(cores) == cores
    for bad in (0, -1, cores + 1, 100000):
        with pytest.raises(UsageError, match=rf"--threads {bad}: expected 1 to {cores}, "):
            check_threads(bad)
