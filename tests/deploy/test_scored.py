from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import lightgbm as lgb
import numpy as np
import pytest

from hpo.deploy.scored import booster_columns, scored_blend_shares, used_columns
from hpo.features import FeatureSpec, is_prior_only
from hpo.features.groups import GROUP_PREFIX
from hpo.features.table.feature_table import feature_names
from hpo.runs.views.history import Trial

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


def test_blend_shares_come_from_the_trial_record_without_a_saved_prior(tmp_path: Path) -> None:
    """A trial whose store holds no prior (a cross-validated run's, combined over its folds)
    blends as its record says; a record naming a collection the run's family does not hold
    (a hand edit) is as none, so the export chooses on valid instead of failing."""
    x, n = "layout:xla:random", "layout:nlp:default"
    history = cast(Any, SimpleNamespace(path=tmp_path, collections=(x, "tile:xla")))

    def shares(recorded: dict[str, Any]) -> dict[str, dict[str, float]]:
        inc = Trial(trial=1, config={"a": 1}, budget=8.0, status="SUCCESS", score=0.5,
                    info={"blend_shares": recorded})  # fmt: skip
        return scored_blend_shares(history, inc, seed=0)

    assert shares({"layout": {x: 0.03}}) == {"layout": {x: 0.03}}
    assert shares({"layout": {x: 0.03, n: 0.0}}) == {}  # nlp:default is not in the run
    assert shares({"tile": {x: 0.0}}) == {}
