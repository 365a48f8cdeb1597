from __future__ import annotations

import numpy as np

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
    assert np.corrcoef(a, b)[0, 1] > 0.99
    for collection, score in free.metrics.items():
        assert abs(pooled.metrics[collection] - score) < 0.02


def _trees(fit) -> str:
    """The model's trees, without its parameters (which name the pool)."""
    return fit.ranker.booster_.model_to_string().split("parameters:")[0]
