"""A model folder that reads an older column list (before the second-order features, before
the cost estimates, or a tile model from before the kc_ columns superseded 11 others) still
loads and predicts: a model is bound to its column names, not to the table's width."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pytest

from hpo.data.load import list_graphs, load_layout_graph, load_tile_graph
from hpo.deploy.model import load_model
from hpo.errors import ConfigError
from hpo.features import (
    FEATURE_VERSION,
    FeatureSpec,
    extract_layout_features,
    extract_tile_features,
    feature_names,
    is_prior_only,
)
from hpo.features.layout.extract import layout_feature_names
from hpo.features.tile import tile_feature_names
from hpo.ranking.prior.blend import BLEND_KEY, ESTIMATE_COLUMN, WEIGHT_KEY, blend_scores
from hpo.ranking.prior.fit import LearnedPrior

COLLECTION = "layout:xla:random"


#: Base-name prefixes each old version lacks, and its layout width.
_LACKS = {
    1: (("so_", "est_", "oc_", "kp_", "nd_", "rl_"), 220),
    2: (("est_", "oc_", "kp_", "nd_", "rl_"), 286),
}


def _old_columns(spec: FeatureSpec, lacks: tuple[str, ...]) -> list[str]:
    """The layout columns of an older feature version: today's without those it lacks."""
    return [n for n in layout_feature_names(spec) if not n.startswith(lacks)]


def _booster(
    root: Path, spec: FeatureSpec, idx: list[int], collection: str = COLLECTION
) -> lgb.Booster:
    """A small lambdarank booster on the columns ``idx`` of ``collection``'s train graphs."""
    rows, groups, target = [], [], []
    for path in list_graphs(root, collection, "train"):
        graph: Any = load_layout_graph(path) if collection != "tile:xla" else load_tile_graph(path)
        extract = extract_layout_features if collection != "tile:xla" else extract_tile_features
        X, _ = extract(graph, collection, spec)
        rows.append(X[:, idx])
        groups.append(len(X))
        runtime = np.asarray(graph.config_runtime, dtype=np.float64)
        target.append(np.argsort(np.argsort(-runtime)) * 4 // max(len(runtime), 1))
    return lgb.train(
        {"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 2, "seed": 0},
        lgb.Dataset(np.concatenate(rows), np.concatenate(target), group=groups),
        num_boost_round=5,
    )


def _write_model(
    folder: Path,
    booster: lgb.Booster,
    columns: list[str],
    version: int,
    hp: dict[str, Any],
    collection: str = COLLECTION,
    spec_version: bool = True,
) -> Path:
    """A format-1 model folder of one booster of ``collection``'s family, as an export of that
    version wrote it (``spec_version`` False: its spec dict without a version, as very old
    exports wrote it)."""
    family = "tile" if collection == "tile:xla" else "layout"
    spec_dict = {**FeatureSpec().to_dict(), "version": version}
    if not spec_version:
        del spec_dict["version"]
    folder.mkdir()
    text = booster.model_to_string()
    (folder / f"{family}.txt").write_text(text)
    meta = {
        "feature_version": version,
        "feature_spec": spec_dict,
        "collections": [collection],
        "hyperparameters": hp,
        "families": {
            family: {
                "file": f"{family}.txt",
                "sha256": hashlib.sha256(text.encode()).hexdigest(),
                "columns": columns,
            }
        },
    }
    (folder / "model.json").write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize(
    ("version", "columns_of"), [(1, 1), (2, 2), (FEATURE_VERSION, 1), (FEATURE_VERSION, 2)]
)
def test_model_with_the_old_column_list_loads_and_predicts(
    tiny_root: Path, tmp_path: Path, version: int, columns_of: int
) -> None:
    """Exported as feature version 1 or 2 (a model of before), or as today's version by name."""
    spec = FeatureSpec()
    names = layout_feature_names(spec)
    lacks, width = _LACKS[columns_of]
    old = _old_columns(spec, lacks)
    assert len(old) == width  # the layout width of that feature version
    idx = [names.index(n) for n in old]
    booster = _booster(tiny_root, spec, idx)
    # a weight without the estimate column among the booster's: nothing to blend
    hp = {"relative_features": True, WEIGHT_KEY: 2.5}
    folder = _write_model(tmp_path / "old", booster, old, version, hp)

    model = load_model(folder)
    assert model.families["layout"].booster.num_feature() == len(old)
    path = list_graphs(tiny_root, COLLECTION, "test")[0]
    scores = model.predict_graph(path, COLLECTION)
    X, _ = extract_layout_features(load_layout_graph(path), COLLECTION, spec)
    np.testing.assert_allclose(scores, -booster.predict(X[:, idx]))
    assert sorted(model.rank_graph(path, COLLECTION).tolist()) == list(range(len(scores)))


def _all_columns_model(
    root: Path, folder: Path, hp: dict[str, Any]
) -> tuple[Path, lgb.Booster, list[str]]:
    """A model folder of a booster that reads every layout column, with hyperparameters
    ``hp``; the booster and the column names."""
    spec = FeatureSpec()
    names = layout_feature_names(spec)
    booster = _booster(root, spec, list(range(len(names))))
    return _write_model(folder, booster, names, FEATURE_VERSION, hp), booster, names


def test_model_predicts_with_its_estimate_blend(tiny_root: Path, tmp_path: Path) -> None:
    """A model exported before the learned prior blends the estimate column, as it did."""
    spec = FeatureSpec()
    hp = {"relative_features": True, WEIGHT_KEY: 2.5}
    folder, booster, names = _all_columns_model(tiny_root, tmp_path / "m", hp)
    model = load_model(folder)
    assert model.families["layout"].estimate_weight == 2.5
    path = list_graphs(tiny_root, COLLECTION, "test")[0]
    X, _ = extract_layout_features(load_layout_graph(path), COLLECTION, spec)
    est = X[:, names.index(ESTIMATE_COLUMN)]
    plain = -booster.predict(X)
    scores = model.predict_graph(path, COLLECTION)
    np.testing.assert_allclose(scores, blend_scores(plain, est, None, 2.5))
    assert not np.allclose(np.argsort(scores), np.argsort(plain))  # the blend took effect


def test_a_switched_off_estimate_column_is_not_blended(tiny_root: Path, tmp_path: Path) -> None:
    """Today's boosters read every column; a trial whose estimate group was off, and which
    had no learned prior, blended nothing (hpo.ranking.training), so its model must not."""
    spec = FeatureSpec()
    hp = {"relative_features": True, WEIGHT_KEY: 2.5, "use_group_cost_estimate": False}
    folder, booster, _ = _all_columns_model(tiny_root, tmp_path / "m", hp)
    model = load_model(folder)
    assert model.families["layout"].estimate_column is None
    path = list_graphs(tiny_root, COLLECTION, "test")[0]
    X, _ = extract_layout_features(load_layout_graph(path), COLLECTION, spec)
    np.testing.assert_allclose(model.predict_graph(path, COLLECTION), -booster.predict(X))


def test_a_model_with_an_unknown_group_switch_is_refused_in_one_line(
    tiny_root: Path, tmp_path: Path
) -> None:
    hp = {WEIGHT_KEY: 1.0, "use_group_nonsense": False}
    folder = _all_columns_model(tiny_root, tmp_path / "m", hp)[0]
    with pytest.raises(ConfigError, match=r"model\.json: .*unknown group 'nonsense'"):
        load_model(folder)


def test_model_with_a_bad_estimate_weight_is_refused_in_one_line(
    tiny_root: Path, tmp_path: Path
) -> None:
    folder = _all_columns_model(tiny_root, tmp_path / "m", {WEIGHT_KEY: "x"})[0]
    with pytest.raises(ConfigError, match=r"model\.json: estimate_weight: expected a number"):
        load_model(folder)


def _with_prior(folder: Path, prior: LearnedPrior | dict) -> Path:
    meta = json.loads((folder / "model.json").read_text())
    data = prior.to_dict() if isinstance(prior, LearnedPrior) else prior
    meta["families"]["layout"]["prior"] = data
    (folder / "model.json").write_text(json.dumps(meta))
    return folder


def test_model_predicts_with_its_learned_prior(tiny_root: Path, tmp_path: Path) -> None:
    """A family entry with a prior blends the prior's estimate, not the estimate column; the
    prior may read a column the booster does not (the per-op-class totals)."""
    spec = FeatureSpec()
    names = layout_feature_names(spec)
    # the prior needs no estimate column, and no booster reads the prior's own columns
    used = [n for n in names if not n.startswith("est_") and not is_prior_only(n)]
    idx = [names.index(n) for n in used]
    booster = _booster(tiny_root, spec, idx)
    basis = ("log_padded_volume", "n_copies", "oc_log_padded_bytes_other")
    prior = LearnedPrior(basis, (True, False, True), np.array([0.7, -0.2, 0.4]))
    hp = {"relative_features": True, WEIGHT_KEY: 2.5}
    folder = _with_prior(_write_model(tmp_path / "m", booster, used, FEATURE_VERSION, hp), prior)
    model = load_model(folder)
    path = list_graphs(tiny_root, COLLECTION, "test")[0]
    X, _ = extract_layout_features(load_layout_graph(path), COLLECTION, spec)
    at = [names.index(n) for n in prior.names]
    estimate = prior.estimate(X, np.array([0, len(X)]), at)
    plain = -booster.predict(X[:, idx])
    np.testing.assert_allclose(
        model.predict_graph(path, COLLECTION), blend_scores(plain, estimate, None, 2.5)
    )
    # the switch off: the booster's own scores, whatever the weight
    off = _write_model(tmp_path / "off", booster, used, FEATURE_VERSION, {**hp, BLEND_KEY: False})
    model = load_model(_with_prior(off, prior))
    np.testing.assert_allclose(model.predict_graph(path, COLLECTION), plain)


def test_model_with_a_bad_prior_is_refused_in_one_line(tiny_root: Path, tmp_path: Path) -> None:
    folder = _all_columns_model(tiny_root, tmp_path / "m", {WEIGHT_KEY: 1.0})[0]
    _with_prior(folder, {"names": ["log_padded_volume"], "linear": [True], "coef": []})
    with pytest.raises(ConfigError, match=r"model\.json: layout: malformed prior \(1 names"):
        load_model(folder)
    _with_prior(folder, {"names": ["no_such_column"], "linear": [False], "coef": [1.0]})
    with pytest.raises(ConfigError, match="the prior reads column 'no_such_column'"):
        load_model(folder)


def _tile_model(
    root: Path, folder: Path, version: int, spec_version: bool = True
) -> tuple[Path, lgb.Booster, list[int]]:
    """A model folder of one tile booster on every column of feature ``version``
    (:func:`_write_model`); the booster and the extractor's column indices."""
    spec = FeatureSpec()
    everything = tile_feature_names(spec)
    columns = feature_names("tile", FeatureSpec(version=version))
    idx = [everything.index(n) for n in columns]
    booster = _booster(root, spec, idx, "tile:xla")
    hp = {"relative_features": True}
    _write_model(folder, booster, columns, version, hp, "tile:xla", spec_version)
    return folder, booster, idx


@pytest.mark.parametrize(
    ("version", "spec_version"), [(7, True), (7, False), (FEATURE_VERSION, True)]
)
def test_a_tile_model_reads_the_columns_of_its_own_version(
    tiny_root: Path, tmp_path: Path, version: int, spec_version: bool
) -> None:
    """Version 8 superseded 11 tile columns by kc_ copies: a version-7 model still reads the
    originals (also when its spec dict names no version), today's reads the copies, each
    from a cold and a warm feature cache."""
    folder, booster, idx = _tile_model(tiny_root, tmp_path / "m", version, spec_version)
    model = load_model(folder)
    names = tile_feature_names(FeatureSpec())
    read = {names[i] for i in idx}
    assert ("log_vmem_bytes" in read) == (version < 8)
    assert ("kc_log_vmem_bytes" in read) == (version >= 8)
    path = list_graphs(tiny_root, "tile:xla", "test")[0]
    X, _ = extract_tile_features(load_tile_graph(path), "tile:xla", FeatureSpec())
    expected = -booster.predict(X[:, idx])
    for _ in ("cold", "warm"):
        scores = model.predict_graph(path, "tile:xla", cache_dir=tmp_path / "cache")
        np.testing.assert_allclose(scores, expected)
