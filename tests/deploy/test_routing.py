"""Model folders of both formats (hpo.deploy.model): per-subset routing, and old folders.

The model folders here are written by hand with small LightGBM boosters whose rankings are
opposite (one ranks by a feature column, the other by its negation), so a graph routed to the
wrong subset's booster gets the reversed order and the test sees it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hpo.data.load import COLLECTIONS, list_graphs
from hpo.deploy.model import load_model
from hpo.deploy.predict import write_submission
from hpo.errors import ConfigError
from hpo.features import FEATURE_VERSION, FeatureSpec, extract_file, family_of, feature_names
from hpo.ranking.prior.blend import DEFAULT_WEIGHT_KEY, ESTIMATE_COLUMN, WEIGHT_KEY, blend_scores

SPEC = FeatureSpec()
_X: dict[tuple[Path, str], np.ndarray] = {}


def _features(path: Path, collection: str) -> np.ndarray:
    """Feature rows of one graph file, extracted once per test session."""
    if (path, collection) not in _X:
        _X[(path, collection)] = extract_file(path, collection, SPEC)[0]
    return _X[(path, collection)]


def _values(root: Path, family: str, column: int) -> np.ndarray:
    """The column's values over the valid graphs of ``family`` (the range boosters must cover)."""
    return np.concatenate(
        [
            _features(p, c)[:, column]
            for c in COLLECTIONS
            if family_of(c) == family
            for p in list_graphs(root, c, "valid")
        ]
    )


def _booster(values: np.ndarray, sign: float, seed: int) -> Any:
    """A booster over one feature column: predicts ``sign * x`` (ranks by it)."""
    import lightgbm as lgb

    x = values.astype(np.float64).reshape(-1, 1)
    params = {"objective": "regression", "verbose": -1, "min_data_in_leaf": 2, "seed": seed}
    return lgb.train(params, lgb.Dataset(x, sign * x[:, 0]), num_boost_round=20)


def _column(root: Path, family: str) -> int:
    """A feature column that varies within a graph of each collection of ``family``."""
    names = feature_names(family, SPEC)
    spread = np.zeros(len(names))
    for c in (c for c in COLLECTIONS if family_of(c) == family):
        X = _features(list_graphs(root, c, "valid")[0], c)
        spread += np.argsort(np.argsort(X.std(axis=0)))
    return int(np.argmax(spread))


def _entry(
    folder: Path, root: Path, file: str, family: str, column: int, sign: float
) -> dict[str, Any]:
    path = folder / file
    path.parent.mkdir(parents=True, exist_ok=True)
    _booster(_values(root, family, column), sign, seed=len(file)).save_model(str(path))
    return {
        "file": file,
        "columns": [feature_names(family, SPEC)[column]],
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }


def _per_subset_folder(folder: Path, root: Path) -> tuple[Path, dict[str, float]]:
    """A format-2 folder, one subset per collection; returns it and each collection's sign."""
    signs = {c: (1.0 if i % 2 else -1.0) for i, c in enumerate(COLLECTIONS)}
    columns = {f: _column(root, f) for f in ("tile", "layout")}
    subsets = {}
    for c in COLLECTIONS:
        name, family = c.replace(":", "-"), family_of(c)
        entry = _entry(folder, root, f"{name}/{family}.txt", family, columns[family], signs[c])
        subsets[name] = {"collections": [c], "hyperparameters": {}, "families": {family: entry}}
    meta = {
        "format": 2,
        "feature_version": FEATURE_VERSION,
        "feature_spec": SPEC.to_dict(),
        "collections": list(COLLECTIONS),
        "per": "collection",
        "subsets": subsets,
    }
    (folder / "model.json").write_text(json.dumps(meta))
    return folder, signs


@pytest.fixture(scope="module")
def per_subset(
    tmp_path_factory: pytest.TempPathFactory, tiny_root: Path
) -> tuple[Path, dict[str, float]]:
    """The format-2 folder of :func:`_per_subset_folder`, written once (tests copy to edit)."""
    return _per_subset_folder(tmp_path_factory.mktemp("routing") / "model", tiny_root)


def test_each_graph_gets_the_booster_of_its_subset(
    per_subset: tuple[Path, dict[str, float]], tiny_root: Path
) -> None:
    import lightgbm as lgb

    folder, signs = per_subset
    model = load_model(folder)
    assert model.format == 2
    assert len(model.families) == 5
    files = {c: folder / c.replace(":", "-") / f"{family_of(c)}.txt" for c in COLLECTIONS}
    boosters = {c: lgb.Booster(model_file=str(f)) for c, f in files.items()}
    for c in COLLECTIONS:
        family = family_of(c)
        column = _column(tiny_root, family)
        # boosters of the same family from subsets of the opposite sign: wrong routes
        others = [o for o in COLLECTIONS if family_of(o) == family and signs[o] != signs[c]]
        for path in list_graphs(tiny_root, c, "valid"):
            X = _features(path, c)[:, [column]]
            got = model.predict_graph(path, c)  # lower = faster: minus the booster's output
            assert np.allclose(got, -boosters[c].predict(X)), f"{c} {path.name}"
            for o in others:
                assert not np.allclose(got, -boosters[o].predict(X)), f"{c} {path.name} {o}"


def test_one_submission_covers_every_test_graph(
    per_subset: tuple[Path, dict[str, float]], tmp_path: Path, tiny_root: Path
) -> None:
    folder, _ = per_subset
    out = tmp_path / "submission.csv"
    counts = write_submission(load_model(folder), tiny_root, out)
    ids = [line.split(",")[0] for line in out.read_text().splitlines()[1:]]
    expected = [f"{c}:{p.stem}" for c in COLLECTIONS for p in list_graphs(tiny_root, c, "test")]
    assert ids == expected
    assert sum(counts.values()) == len(expected)


def _old_folder(folder: Path, root: Path, *, with_format: bool) -> Path:
    """A one-configuration folder as ``hpo export`` wrote it before formats 2 existed."""
    families = {
        f: _entry(folder, root, f"{f}.txt", f, _column(root, f), 1.0) for f in ("tile", "layout")
    }
    meta: dict[str, Any] = {
        "feature_version": FEATURE_VERSION,
        "feature_spec": SPEC.to_dict(),
        "hyperparameters": {"learning_rate": 0.1},
        "collections": list(COLLECTIONS),
        "families": families,
        "rounds": 20,
    }
    if with_format:
        meta["format"] = 1
    (folder / "model.json").write_text(json.dumps(meta))
    return folder


@pytest.mark.parametrize("with_format", [True, False])
def test_an_old_model_folder_still_loads(
    tmp_path: Path, tiny_root: Path, with_format: bool
) -> None:
    model = load_model(_old_folder(tmp_path / "old", tiny_root, with_format=with_format))
    assert model.format == 1
    assert set(model.families) == {"tile", "layout"}
    assert model.hyperparameters == {"learning_rate": 0.1}
    # every layout collection is served by the one layout booster
    assert {id(model.family_model(c)) for c in COLLECTIONS[1:]} == {id(model.families["layout"])}
    path = list_graphs(tiny_root, "layout:nlp:random", "valid")[0]
    assert model.predict_graph(path, "layout:nlp:random").shape == (
        _features(path, "layout:nlp:random").shape[0],
    )


def test_an_unknown_format_or_a_collection_in_two_subsets_is_refused(
    per_subset: tuple[Path, dict[str, float]], tmp_path: Path
) -> None:
    folder = Path(shutil.copytree(per_subset[0], tmp_path / "model"))
    meta = json.loads((folder / "model.json").read_text())
    (folder / "model.json").write_text(json.dumps({**meta, "format": 4}))
    with pytest.raises(ConfigError, match="model format 4 is not read by this hpo"):
        load_model(folder)
    meta["subsets"]["tile-xla"]["collections"].append("layout:xla:default")
    meta["subsets"]["tile-xla"]["families"]["layout"] = meta["subsets"]["layout-xla-default"][
        "families"
    ]["layout"]
    (folder / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="collection layout:xla:default is in two subsets"):
        load_model(folder)


def test_each_subset_blends_with_its_own_estimate_weight(tmp_path: Path, tiny_root: Path) -> None:
    """Format 2: the weight comes from each subset's hyperparameters (absent: no blend)."""
    column = feature_names("layout", SPEC).index(ESTIMATE_COLUMN)
    weights: dict[str, float | None] = {
        "layout:xla:random": 4.0,
        "layout:nlp:random": 0.5,
        "layout:xla:default": None,
    }
    folder = tmp_path / "model"
    subsets = {}
    for c, w in weights.items():
        name = c.replace(":", "-")
        entry = _entry(folder, tiny_root, f"{name}/layout.txt", "layout", column, -1.0)
        hp = {} if w is None else {WEIGHT_KEY: w}
        subsets[name] = {"collections": [c], "hyperparameters": hp, "families": {"layout": entry}}
    meta = {
        "format": 2,
        "feature_version": FEATURE_VERSION,
        "feature_spec": SPEC.to_dict(),
        "collections": list(weights),
        "per": "collection",
        "subsets": subsets,
    }
    (folder / "model.json").write_text(json.dumps(meta))
    model = load_model(folder)
    for c, w in weights.items():
        fam = model.family_model(c)
        assert fam.estimate_weight == (w or 0.0)
        assert fam.estimate_column == column
        path = list_graphs(tiny_root, c, "valid")[0]
        X = _features(path, c)
        plain = -fam.booster.predict(X[:, [column]])
        expected = plain if w is None else blend_scores(plain, X[:, column], None, w)
        np.testing.assert_allclose(model.predict_graph(path, c), expected)


def test_a_joint_layout_model_blends_default_collections_with_their_own_weight(
    tmp_path: Path, tiny_root: Path
) -> None:
    """Format 1: one layout booster, ``estimate_weight`` for the random collections and
    ``estimate_weight_default_collections`` for the default ones, as the trial scored them."""
    column = feature_names("layout", SPEC).index(ESTIMATE_COLUMN)
    folder = tmp_path / "model"
    layout = [c for c in COLLECTIONS if family_of(c) == "layout"]
    meta = {
        "format": 1,
        "feature_version": FEATURE_VERSION,
        "feature_spec": SPEC.to_dict(),
        "collections": layout,
        "hyperparameters": {WEIGHT_KEY: 0.5, DEFAULT_WEIGHT_KEY: 4.0},
        "families": {"layout": _entry(folder, tiny_root, "layout.txt", "layout", column, -1.0)},
    }
    (folder / "model.json").write_text(json.dumps(meta))
    model = load_model(folder)
    for c in layout:
        weight = 4.0 if c.endswith(":default") else 0.5
        fam = model.family_model(c)
        assert fam.estimate_weight == weight
        assert fam.booster is model.families["layout"].booster  # one booster, not a copy
        path = list_graphs(tiny_root, c, "valid")[0]
        X = _features(path, c)
        expected = blend_scores(-fam.booster.predict(X[:, [column]]), X[:, column], None, weight)
        np.testing.assert_allclose(model.predict_graph(path, c), expected)


def test_ensemble_members_blend_a_default_collection_each_at_its_own_weight(
    tmp_path: Path, tiny_root: Path
) -> None:
    """Format 3: every member routes the default collection at its own
    ``estimate_weight_default_collections``; the ensemble averages those blended scores."""
    from hpo.ranking.prior.blend import standardized

    column = feature_names("layout", SPEC).index(ESTIMATE_COLUMN)
    folder = tmp_path / "model"
    collections = ["layout:xla:default", "layout:xla:random"]
    weights = [(0.5, 4.0), (2.0, 0.25)]  # (estimate_weight, the default collections')
    members = []
    for i, (w, d) in enumerate(weights):
        entry = _entry(folder, tiny_root, f"m{i}/layout.txt", "layout", column, -1.0 + 2 * i)
        hp = {WEIGHT_KEY: w, DEFAULT_WEIGHT_KEY: d}
        members.append({"hyperparameters": hp, "families": {"layout": entry}})
    meta = {
        "format": 3,
        "feature_version": FEATURE_VERSION,
        "feature_spec": SPEC.to_dict(),
        "collections": collections,
        "members": members,
    }
    (folder / "model.json").write_text(json.dumps(meta))
    model = load_model(folder)
    for c in collections:
        parts = model.family_model(c).members  # type: ignore[attr-defined]
        own = [d if c.endswith(":default") else w for w, d in weights]
        assert [m.estimate_weight for m in parts] == own
        path = list_graphs(tiny_root, c, "valid")[0]
        X = _features(path, c)
        each = [
            standardized(blend_scores(-m.booster.predict(X[:, [column]]), X[:, column], None, w))
            for m, w in zip(parts, own, strict=True)
        ]
        np.testing.assert_allclose(model.predict_graph(path, c), np.mean(each, axis=0))


def test_a_random_collection_is_scored_with_its_own_prior_weights(
    tmp_path: Path, tiny_root: Path
) -> None:
    """Format 1 with a learned prior whose ``collections`` hold xla:random's own weights
    (of the opposite sign): that collection blends with them, every other with the pooled."""
    from hpo.ranking.prior.fit import LearnedPrior

    column = _column(tiny_root, "layout")
    name = feature_names("layout", SPEC)[column]
    pooled = LearnedPrior((name,), (False,), np.array([1.0]))
    own = LearnedPrior((name,), (False,), np.array([-1.0]))
    prior = LearnedPrior(pooled.names, pooled.linear, pooled.coef, own={"layout:xla:random": own})
    folder = tmp_path / "model"
    layout = [c for c in COLLECTIONS if family_of(c) == "layout"]
    entry = _entry(folder, tiny_root, "layout.txt", "layout", column, -1.0)
    meta = {
        "format": 1,
        "feature_version": FEATURE_VERSION,
        "feature_spec": SPEC.to_dict(),
        "collections": layout,
        "hyperparameters": {WEIGHT_KEY: 3.0},
        "families": {"layout": {**entry, "prior": prior.to_dict()}},
    }
    (folder / "model.json").write_text(json.dumps(meta))
    model = load_model(folder)
    for c in layout:
        fam = model.family_model(c)
        sign = -1.0 if c == "layout:xla:random" else 1.0
        assert fam.prior is not None
        assert fam.prior.coef.tolist() == [sign]
        path = list_graphs(tiny_root, c, "valid")[0]
        X = _features(path, c)
        x = X[:, column].astype(np.float64)
        z = (x - x.mean()) / x.std()  # the prior of one standardized column
        expected = blend_scores(-fam.booster.predict(X[:, [column]]), sign * z, None, 3.0)
        np.testing.assert_allclose(model.predict_graph(path, c), expected)


def test_a_collection_its_trial_ranked_by_the_trees_alone_is_not_blended() -> None:
    """``estimate_blend_select``: the prior's ``off`` collections get weight 0, its ``doubt``
    ones their share of it, the others their configuration's weight, so the model ranks each
    collection as its trial scored it."""
    from hpo.deploy.model import FamilyModel, route_collections
    from hpo.ranking.prior.learned import LearnedPrior

    prior = LearnedPrior(
        ("a",),
        (True,),
        np.ones(1),
        off=frozenset({"layout:nlp:default"}),
        doubt={"layout:xla:default": 0.25},
        additive=True,
    )
    family = FamilyModel("layout", None, np.arange(1), 1, estimate_weight=5.0, prior=prior)
    layout = [c for c in COLLECTIONS if c != "tile:xla"]
    hp = {WEIGHT_KEY: 5.0, DEFAULT_WEIGHT_KEY: 7.0}
    routes = route_collections({"layout": family}, hp, layout)
    assert {c: r.estimate_weight for c, r in routes.items()} == {
        "layout:xla:default": 7.0 * 0.25,
        "layout:xla:random": 5.0,
        "layout:nlp:default": 0.0,
        "layout:nlp:random": 5.0,
    }
