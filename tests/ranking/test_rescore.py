from __future__ import annotations

import json
from pathlib import Path

import lightgbm as lgb
import pytest

from hpo.data.load import COLLECTIONS
from hpo.errors import ConfigError
from hpo.ranking.model.datasets import DatasetCache
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import BLEND_KEY, WEIGHT_KEY
from hpo.ranking.rescore import rescore_family
from hpo.ranking.training import train_family

HP = {"learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 5, "label_levels": 8}
LAYOUT = [c for c in COLLECTIONS if c != "tile:xla"]


def _saved(fit, folder: Path) -> tuple[lgb.Booster, dict | None]:
    """The booster and prior as the booster store writes and reads them (text, JSON)."""
    path = folder / "b.txt"
    fit.ranker.booster_.save_model(str(path))
    prior = None if fit.prior is None else json.loads(json.dumps(fit.prior.to_dict()))
    return lgb.Booster(model_file=str(path)), prior


@pytest.mark.parametrize(
    "hp",
    [HP, {**HP, WEIGHT_KEY: 5.0}, {**HP, WEIGHT_KEY: 5.0, BLEND_KEY: False}],
    ids=["plain", "blended", "blend-off"],
)
def test_a_saved_layout_booster_scores_as_its_trial(tiny_tables, tmp_path: Path, hp) -> None:
    train, valid = tiny_tables[("layout", "train")], tiny_tables[("layout", "valid")]
    fit = train_family(train, valid, LAYOUT, hp, rounds=6, seed=3)
    booster, prior = _saved(fit, tmp_path)
    again = rescore_family(train, valid, LAYOUT, hp, booster, prior)
    assert again.metrics == fit.metrics
    assert [s.metric for s in again.scores] == [s.metric for s in fit.scores]
    assert again.rows == 0
    assert again.seconds["boost"] == 0.0
    assert (again.prior is None) == (fit.prior is None)


def test_a_saved_tile_booster_scores_as_its_trial(tiny_tables, tmp_path: Path) -> None:
    train, valid = tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")]
    fit = train_family(train, valid, ["tile:xla"], HP, rounds=4, seed=1)
    booster, prior = _saved(fit, tmp_path)
    cached = FitOptions(cache=DatasetCache(), n_threads=2)
    for _ in range(2):  # the valid view built, then taken from the cache
        again = rescore_family(train, valid, ["tile:xla"], HP, booster, prior, options=cached)
        assert again.metrics == fit.metrics


def test_another_prior_scores_otherwise(tiny_tables, tmp_path: Path) -> None:
    """The prior is read, not refitted: the score depends on the one given."""
    train, valid = tiny_tables[("layout", "train")], tiny_tables[("layout", "valid")]
    hp = {**HP, WEIGHT_KEY: 50.0}
    fit = train_family(train, valid, LAYOUT, hp, rounds=6, seed=3)
    booster, prior = _saved(fit, tmp_path)
    assert prior is not None
    flipped = {**prior, "coef": [-c for c in prior["coef"]], "collections": {}}
    other = rescore_family(train, valid, LAYOUT, hp, booster, flipped)
    assert other.metrics != fit.metrics


def test_a_booster_of_another_table_is_refused(tiny_tables, tmp_path: Path) -> None:
    train, valid = tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")]
    fit = train_family(train, valid, ["tile:xla"], HP, rounds=2, seed=0)
    booster, _ = _saved(fit, tmp_path)
    layout = tiny_tables[("layout", "train")], tiny_tables[("layout", "valid")]
    with pytest.raises(ConfigError, match="reads .* columns"):
        rescore_family(*layout, LAYOUT, HP, booster, None)
    with pytest.raises(ConfigError, match="malformed prior"):
        rescore_family(train, valid, ["tile:xla"], HP, booster, {"names": 3})
