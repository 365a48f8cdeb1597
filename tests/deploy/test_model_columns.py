"""A model folder that reads an older column list (before the second-order features, or before
the cost estimates) still loads and predicts: a model is bound to its column names, not to the
table's width."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest

from hpo.data.load import list_graphs, load_layout_graph
from hpo.deploy.model import load_model
from hpo.features import FEATURE_VERSION, FeatureSpec, extract_layout_features
from hpo.features.layout import layout_feature_names

COLLECTION = "layout:xla:random"


#: Base-name prefixes each old version lacks, and its layout width.
_LACKS = {1: (("so_", "est_"), 220), 2: (("est_",), 286)}


def _old_columns(spec: FeatureSpec, lacks: tuple[str, ...]) -> list[str]:
    """The layout columns of an older feature version: today's without those it lacks."""
    return [n for n in layout_feature_names(spec) if not n.startswith(lacks)]


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
    rows, groups, target = [], [], []
    for path in list_graphs(tiny_root, COLLECTION, "train"):
        graph = load_layout_graph(path)
        X, _ = extract_layout_features(graph, COLLECTION, spec)
        rows.append(X[:, idx])
        groups.append(len(X))
        runtime = np.asarray(graph.config_runtime, dtype=np.float64)
        target.append(np.argsort(np.argsort(-runtime)) * 4 // max(len(runtime), 1))
    booster = lgb.train(
        {"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 2, "seed": 0},
        lgb.Dataset(np.concatenate(rows), np.concatenate(target), group=groups),
        num_boost_round=5,
    )
    folder = tmp_path / "old"
    folder.mkdir()
    text = booster.model_to_string()
    (folder / "layout.txt").write_text(text)
    meta = {
        "feature_version": version,
        "feature_spec": {**spec.to_dict(), "version": version},
        "collections": [COLLECTION],
        "hyperparameters": {"relative_features": True},
        "families": {
            "layout": {
                "file": "layout.txt",
                "sha256": hashlib.sha256(text.encode()).hexdigest(),
                "columns": old,
            }
        },
    }
    (folder / "model.json").write_text(json.dumps(meta))

    model = load_model(folder)
    assert model.families["layout"].booster.num_feature() == len(old)
    path = list_graphs(tiny_root, COLLECTION, "test")[0]
    scores = model.predict_graph(path, COLLECTION)
    X, _ = extract_layout_features(load_layout_graph(path), COLLECTION, spec)
    np.testing.assert_allclose(scores, -booster.predict(X[:, idx]))
    assert sorted(model.rank_graph(path, COLLECTION).tolist()) == list(range(len(scores)))
