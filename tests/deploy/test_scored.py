from __future__ import annotations

from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest

from hpo.deploy.scored import booster_columns, used_columns
from hpo.features import FeatureSpec, is_prior_only
from hpo.features.groups import GROUP_PREFIX
from hpo.features.table.feature_table import feature_names

HP = {f"{GROUP_PREFIX}cost_estimate": False, "relative_features": False}


def _booster_file(path: Path, width: int) -> Path:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, width))
    lgb.train(
        {"objective": "regression", "verbose": -1, "min_data_in_leaf": 2},
        lgb.Dataset(X, X[:, 0]),
        num_boost_round=2,
    ).save_model(path)
    return path


@pytest.mark.parametrize("family", ["layout", "tile"])
def test_booster_columns_today_every_column_before_the_selected(
    tmp_path: Path, family: str
) -> None:
    spec = FeatureSpec()
    # every column but those only the learned prior reads (the layout per-op-class totals)
    every = [n for n in feature_names(family, spec) if not is_prior_only(n)]
    assert (len(every) < len(feature_names(family, spec))) == (family == "layout")
    selected = used_columns(family, spec, HP)
    assert len(selected) < len(every)
    today = _booster_file(tmp_path / "today.txt", len(every))
    assert booster_columns(today, family, spec, HP) == every
    # a run made before one Dataset of all columns saved boosters of the selected columns
    older = _booster_file(tmp_path / "older.txt", len(selected))
    assert booster_columns(older, family, spec, HP) == selected
