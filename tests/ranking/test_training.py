from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import numpy as np
import pytest

from hpo.data.load import COLLECTIONS
from hpo.errors import ConfigError
from hpo.features import is_prior_only
from hpo.features.groups import GROUP_PREFIX
from hpo.features.table import store
from hpo.features.table.feature_table import FeatureTable, GraphRef
from hpo.ranking.hyperparameters import (
    TILE_LABEL_LEVELS_KEY,
    TILE_OBJECTIVE_KEY,
    TILE_TRUNCATION_KEY,
)
from hpo.ranking.model.datasets import DatasetCache
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import (
    BLEND_KEY,
    DEFAULT_WEIGHT_KEY,
    ESTIMATE_COLUMN,
    SELECT_KEY,
    WEIGHT_KEY,
    blend_scores,
    collection_weights,
    standardized,
)
from hpo.ranking.prior.learned import LearnedPrior
from hpo.ranking.scoring.metrics import kendall_tau, tile_score
from hpo.ranking.scoring.valid import collection_means, score_table, score_valid, valid_view_of
from hpo.ranking.training import (
    feature_columns,
    feature_contri,
    fit_family_prior,
    make_ranker,
    sample_configs,
    select_rows,
    train_family,
)


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
        LAYOUT,
        num_boost_round=7,
        seed=3,
    )
    assert r.params == {"learning_rate": 0.2}
    assert (r.label_levels, r.max_group_size, r.num_boost_round, r.seed) == (8, 256, 7, 3)


TINY_HP = {"learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 5, "label_levels": 8}
LAYOUT = [c for c in COLLECTIONS if c != "tile:xla"]


def _fit(tables, hp=TINY_HP, **kwargs):
    train, valid = tables[("layout", "train")], tables[("layout", "valid")]
    return train_family(train, valid, LAYOUT, hp, rounds=8, seed=0, options=FitOptions(**kwargs))


def test_train_family_on_tiny(tiny_tables) -> None:
    fit = _fit(tiny_tables)
    train, valid = tiny_tables[("layout", "train")], tiny_tables[("layout", "valid")]
    assert set(fit.metrics) == set(LAYOUT)
    assert fit.rows == select_rows(train, LAYOUT).size
    assert list(fit.column_names) == [train.feature_names[j] for j in fit.columns]
    assert fit.ranker.booster_.current_iteration() == 8
    assert sum(s.n_configs for s in fit.scores) == select_rows(valid, LAYOUT).size
    assert set(fit.seconds) == {"dataset", "boost", "predict", "score"}
    # the metrics are the means of the per-graph scores
    xla = [s.metric for s in fit.scores if s.collection == "layout:xla:random"]
    assert fit.metrics["layout:xla:random"] == pytest.approx(np.mean(xla))
    # extra tables add their rows (export's train+valid)
    both = _fit(tiny_tables, extra=[valid])
    assert both.rows == fit.rows + select_rows(valid, LAYOUT).size


def test_tile_scores_match_the_metric(tiny_tables) -> None:
    train, valid = tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")]
    fit = train_family(train, valid, ["tile:xla"], TINY_HP, rounds=3, seed=0)
    pred = fit.ranker.predict(valid.X[:, fit.columns])
    for s, g in zip(fit.scores, [g for g in valid.graphs if g.labeled], strict=True):
        rows = np.flatnonzero(valid.group == valid.graphs.index(g))
        assert s.metric == tile_score(pred[rows], valid.target[rows])


def test_dataset_cache_reused_and_keyed_by_binning(tiny_tables) -> None:
    cache = DatasetCache()
    first = _fit(tiny_tables, cache=cache)
    # booster-only parameters, labels and sub-queries do not rebuild the Dataset
    other = {**TINY_HP, "num_leaves": 7, "label_levels": 4, "max_group_size": 256}
    second = _fit(tiny_tables, hp=other, cache=cache)
    assert (first.dataset_reused, second.dataset_reused) == (False, True)
    entries = dict(cache._entries)
    rebinned = _fit(tiny_tables, hp={**TINY_HP, "max_bin": 63}, cache=cache)
    assert not rebinned.dataset_reused
    train_keys = [k for k in cache._entries if k[0] == "train"]
    assert len(train_keys) == 2
    assert all(cache._entries[k][0] is entries[k][0] for k in entries)  # same objects kept


def test_cache_gives_identical_predictions(tiny_tables) -> None:
    cache = DatasetCache()
    _fit(tiny_tables, cache=cache)  # fill the cache with another configuration's use
    hp = {**TINY_HP, "bagging_fraction": 0.7, "bagging_freq": 1, "label_levels": 12}
    cached, plain = _fit(tiny_tables, hp=hp, cache=cache), _fit(tiny_tables, hp=hp)
    assert cached.dataset_reused
    valid = tiny_tables[("layout", "valid")]
    X = valid.X[:, cached.columns]
    np.testing.assert_array_equal(cached.ranker.predict(X), plain.ranker.predict(X))
    assert cached.metrics == plain.metrics


def test_a_continued_fit_leaves_the_cached_dataset_clean(tiny_tables) -> None:
    """Continuing a booster sets the Dataset's initial scores; a later fresh fit on the same
    cached Dataset must not start from them (LightGBM must reset them)."""
    cache = DatasetCache()
    start = _fit(tiny_tables, cache=cache)
    continued = _fit(tiny_tables, cache=cache, init_model=start.ranker.booster_)
    assert continued.dataset_reused
    fresh, plain = _fit(tiny_tables, cache=cache), _fit(tiny_tables)
    assert fresh.dataset_reused
    valid = tiny_tables[("layout", "valid")]
    X = valid.X[:, fresh.columns]
    np.testing.assert_array_equal(fresh.ranker.predict(X), plain.ranker.predict(X))


def test_dataset_cache_bounded_and_not_pickled() -> None:
    cache = DatasetCache(max_entries=2)
    for i in range(3):
        cache.get(i, lambda i=i: [i])
    assert len(cache) == 2
    assert cache.get(0, lambda: "rebuilt") == ("rebuilt", False)
    assert cache.get(2, lambda: "never") == ([2], True)
    copy = pickle.loads(pickle.dumps(cache))
    assert len(copy) == 0
    assert copy.max_entries == 2


def test_estimate_weight_blends_what_is_scored(tiny_tables) -> None:
    valid = tiny_tables[("layout", "valid")]
    plain = _fit(tiny_tables)
    assert plain.prior is None  # no blend, nothing fitted
    blended = _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 50.0})
    # the same trees: the weight is not a LightGBM parameter
    assert WEIGHT_KEY not in blended.ranker.lightgbm_params()
    assert blended.ranker.booster_.model_to_string() == plain.ranker.booster_.model_to_string()
    prior = blended.prior
    assert prior is not None
    at = prior.positions_in(valid.feature_names, "test")  # columns the booster lacks too
    for s, g in zip(blended.scores, [g for g in valid.graphs if g.labeled], strict=True):
        rows = np.flatnonzero(valid.group == valid.graphs.index(g))
        X = valid.X[rows]
        own = prior.for_collection(g.collection)  # a random collection's own weights
        estimate = own.estimate(X, np.array([0, len(rows)]), at)
        pred = blend_scores(blended.ranker.predict(X[:, blended.columns]), estimate, None, 50.0)
        assert s.metric == pytest.approx(kendall_tau(pred, valid.target[rows]))
    assert blended.metrics != plain.metrics  # a weight this large reorders configs


def test_default_collections_are_scored_with_their_own_weight(tiny_tables) -> None:
    """A joint layout trial scores each collection with its weight: the default collections'
    metrics follow ``estimate_weight_default_collections``, the random ones' ``estimate_weight``."""
    split = _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 0.1, DEFAULT_WEIGHT_KEY: 50.0})
    low = _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 0.1})
    high = _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 50.0})
    assert DEFAULT_WEIGHT_KEY not in split.ranker.lightgbm_params()
    for c in LAYOUT:
        same = high if c.endswith(":default") else low
        assert split.metrics[c] == same.metrics[c]
    assert any(low.metrics[c] != high.metrics[c] for c in LAYOUT if c.endswith(":default"))


def test_the_prior_is_fitted_when_only_the_default_collections_blend(tiny_tables) -> None:
    fit = _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 0.0, DEFAULT_WEIGHT_KEY: 50.0})
    assert fit.prior is not None
    plain = _fit(tiny_tables)
    for c in LAYOUT:
        if not c.endswith(":default"):  # weight 0: the ranker's own order
            assert fit.metrics[c] == pytest.approx(plain.metrics[c], abs=1e-12)
    assert any(fit.metrics[c] != plain.metrics[c] for c in LAYOUT if c.endswith(":default"))


def test_the_prior_is_fitted_on_the_training_rows_only(tiny_tables) -> None:
    train = tiny_tables[("layout", "train")]
    blended = _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 1.0})
    assert blended.prior is not None
    again = fit_family_prior([(train, select_rows(train, LAYOUT))], blended.live)
    assert again is not None
    np.testing.assert_array_equal(again.coef, blended.prior.coef)
    assert set(again.own) == set(blended.prior.own) == {c for c in LAYOUT if "random" in c}
    for c, own in again.own.items():
        np.testing.assert_array_equal(own.coef, blended.prior.own[c].coef)
    half = select_rows(train, LAYOUT)[::2]
    other = _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 1.0}, rows=half)
    assert other.prior is not None
    assert not np.array_equal(other.prior.coef, blended.prior.coef)


def test_the_blend_switch_turns_the_prior_off(tiny_tables) -> None:
    plain = _fit(tiny_tables)
    off = _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 50.0, BLEND_KEY: False})
    assert off.prior is None
    assert off.metrics == plain.metrics
    on = _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 50.0, BLEND_KEY: True})
    assert on.metrics == _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: 50.0}).metrics


@pytest.mark.parametrize("chunk_bytes", [1, 300_000])
def test_a_trial_scores_the_same_in_small_chunks_and_from_disk(
    tiny_tables, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunk_bytes: int
) -> None:
    hp = {**TINY_HP, WEIGHT_KEY: 5.0}
    whole = _fit(tiny_tables, hp=hp)  # the default budget holds every tiny graph at once
    assert whole.prior is not None
    mapped = dict(tiny_tables)
    for key in [("layout", "train"), ("layout", "valid")]:
        np.save(tmp_path / f"{key[1]}.npy", tiny_tables[key].X)
        X = np.load(tmp_path / f"{key[1]}.npy", mmap_mode="r")
        mapped[key] = dataclasses.replace(tiny_tables[key], X=X)
    # 1 byte: every graph a chunk of its own; 300 kB: about 100 rows of ~3 kB (301 float32
    # columns, the prior's float64 design), so small graphs share a chunk, large ones do not
    monkeypatch.setattr(store, "CHUNK_BYTES", chunk_bytes)
    for tables in (tiny_tables, mapped):
        chunked = _fit(tables, hp=hp, cache=DatasetCache())
        assert chunked.scores == whole.scores  # every graph's metric, exactly
        assert chunked.prior is not None
        # 1 byte merges each graph's moments row by row: the sums' order moves the weights
        # (about 1e-2) by up to ~4e-13
        np.testing.assert_allclose(chunked.prior.coef, whole.prior.coef, rtol=1e-9, atol=1e-11)


def test_the_prior_reads_no_switched_off_group(tiny_tables) -> None:
    hp = {**TINY_HP, WEIGHT_KEY: 50.0, f"{GROUP_PREFIX}cost_estimate": False}
    off = _fit(tiny_tables, hp=hp)
    assert ESTIMATE_COLUMN in off.column_names  # the booster reads every column
    assert ESTIMATE_COLUMN not in off.live_names
    assert off.prior is not None
    assert ESTIMATE_COLUMN not in off.prior.names
    assert set(off.prior.names) <= set(off.live_names)


def test_bad_estimate_weight_fails_before_training(tiny_tables) -> None:
    with pytest.raises(ConfigError, match=r"^estimate_weight: expected a finite number >= 0"):
        _fit(tiny_tables, hp={**TINY_HP, WEIGHT_KEY: -1.0})


# --- one Dataset of every column: switches are feature_contri --------------------------------


def test_feature_contri_zeroes_dead_columns_only() -> None:
    assert feature_contri(np.arange(4), np.array([0, 2])) == [1.0, 0.0, 1.0, 0.0]
    assert feature_contri(np.arange(3), np.arange(3)) is None  # all live: left out
    # a Dataset of some table columns: the multipliers follow the Dataset's columns
    assert feature_contri(np.array([0, 2, 3]), np.array([2, 4])) == [0.0, 1.0, 0.0]


@pytest.mark.parametrize("fraction", [1.0, 0.5])
def test_switched_off_columns_are_never_split_on(tiny_tables, fraction: float) -> None:
    hp = {
        **TINY_HP,
        f"{GROUP_PREFIX}cost_estimate": False,
        "relative_features": False,
        "feature_fraction": fraction,
    }
    fit = _fit(tiny_tables, hp=hp)
    train = tiny_tables[("layout", "train")]
    assert list(fit.column_names) == [n for n in train.feature_names if not is_prior_only(n)]
    assert fit.ranker.booster_.num_feature() == fit.columns.size
    dead = ~np.isin(fit.columns, fit.live)  # booster positions of switched-off columns
    assert dead.any()
    assert set(fit.live_names) == {train.feature_names[j] for j in fit.live}
    splits = fit.ranker.booster_.feature_importance("split")
    assert splits[dead].sum() == 0
    assert splits[~dead].sum() > 0


def test_one_cached_dataset_serves_every_switch(tiny_tables) -> None:
    cache = DatasetCache()
    off = {**TINY_HP, f"{GROUP_PREFIX}cost_estimate": False}
    first = _fit(tiny_tables, hp=TINY_HP, cache=cache)
    second = _fit(tiny_tables, hp=off, cache=cache)
    assert (first.dataset_reused, second.dataset_reused) == (False, True)
    assert second.metrics == _fit(tiny_tables, hp=off).metrics


def _on_disk(table: FeatureTable, folder: Path) -> FeatureTable:
    path = folder / f"{table.family}-{table.split}.npy"
    np.save(path, table.X)
    return dataclasses.replace(table, X=np.load(path, mmap_mode="r"))


def test_memmapped_tables_share_binned_datasets_on_disk(tiny_tables, tmp_path: Path) -> None:
    tables = {k: _on_disk(t, tmp_path) for k, t in tiny_tables.items() if k[0] == "layout"}
    where = tmp_path / "datasets"
    made = _fit(tables, cache=DatasetCache(), dataset_dir=where)
    files = sorted(where.glob("*.bin"))
    assert len(files) == 1
    written = files[0].stat()
    again = _fit(tables, cache=DatasetCache(), dataset_dir=where)  # another worker: loads it
    assert sorted(where.glob("*.bin")) == files
    assert (files[0].stat().st_ino, files[0].stat().st_mtime_ns) == (
        written.st_ino,
        written.st_mtime_ns,
    )
    assert again.metrics == made.metrics == _fit(tiny_tables).metrics
    in_memory = {k: dataclasses.replace(t, X=np.array(t.X)) for k, t in tiny_tables.items()}
    _fit(in_memory, dataset_dir=where)  # in-memory tables are not saved
    assert sorted(where.glob("*.bin")) == files


def test_rows_seen_once_fit_the_prior_on_the_live_columns_only(tiny_tables) -> None:
    train = tiny_tables[("layout", "train")]
    hp = {**TINY_HP, WEIGHT_KEY: 1.0, f"{GROUP_PREFIX}cost_estimate": False}
    again, once = DatasetCache(), DatasetCache()
    shared = _fit(tiny_tables, hp=hp, cache=again)  # the rounds fidelity: rows come back
    alone = _fit(tiny_tables, hp=hp, cache=once, rows_return=False)  # a sample per trial
    assert shared.prior is not None
    assert alone.prior is not None
    assert len(again) == len(once) + 1  # only rows that come back keep their equations
    direct = fit_family_prior([(train, select_rows(train, LAYOUT))], alone.live)
    assert direct is not None
    np.testing.assert_array_equal(alone.prior.coef, direct.coef)
    assert shared.prior.names == alone.prior.names
    # the same estimate: the sums of a wider block round differently, and weights of nearly
    # collinear byte totals move with the rounding (up to 1e-3) where their sum does not
    rows = select_rows(train, LAYOUT)
    bounds = np.flatnonzero(np.r_[True, np.diff(train.group[rows]) != 0, True])
    X = np.asarray(train.X)[rows]
    for collection in LAYOUT:
        a, b = shared.prior.for_collection(collection), alone.prior.for_collection(collection)
        at = a.positions_in(train.feature_names, "test")
        np.testing.assert_allclose(
            standardized(a.estimate(X, bounds, at), bounds),
            standardized(b.estimate(X, bounds, at), bounds),
            atol=1e-6,
        )


def test_the_tile_family_trains_at_its_own_truncation(tiny_tables) -> None:
    hp = {**TINY_HP, "lambdarank_truncation_level": 200, TILE_TRUNCATION_KEY: 7}
    tile = train_family(
        tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")], ["tile:xla"], hp,
        rounds=2, seed=0,
    )  # fmt: skip
    layout = _fit(tiny_tables, hp)
    assert tile.ranker.lightgbm_params()["lambdarank_truncation_level"] == 7
    assert layout.ranker.lightgbm_params()["lambdarank_truncation_level"] == 200
    assert TILE_TRUNCATION_KEY not in tile.ranker.lightgbm_params()
    # the truncation changes the trees: the key is not ignored on the way to LightGBM
    deep = train_family(
        tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")], ["tile:xla"],
        {**hp, TILE_TRUNCATION_KEY: 200}, rounds=2, seed=0,
    )  # fmt: skip
    assert tile.ranker.booster_.model_to_string() != deep.ranker.booster_.model_to_string()


def test_the_tile_family_trains_with_its_own_objective_and_levels(tiny_tables) -> None:
    hp = {**TINY_HP, TILE_OBJECTIVE_KEY: "rank_xendcg", TILE_LABEL_LEVELS_KEY: 31}
    tile = train_family(
        tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")], ["tile:xla"], hp,
        rounds=2, seed=0,
    )  # fmt: skip
    assert tile.ranker.lightgbm_params()["objective"] == "rank_xendcg"
    assert TILE_OBJECTIVE_KEY not in tile.ranker.lightgbm_params()
    assert tile.ranker.label_levels == 31
    layout = _fit(tiny_tables, hp).ranker
    assert layout.lightgbm_params()["objective"] == "lambdarank"
    assert layout.label_levels == hp["label_levels"] != 31
    # without the key (runs made before it) tile trains with lambdarank
    before = train_family(
        tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")], ["tile:xla"], TINY_HP,
        rounds=2, seed=0,
    )  # fmt: skip
    assert before.ranker.lightgbm_params()["objective"] == "lambdarank"
    assert tile.ranker.booster_.model_to_string() != before.ranker.booster_.model_to_string()


def test_no_booster_reads_the_columns_only_the_prior_reads(tiny_tables) -> None:
    """The prior-only columns (per-op-class totals, kernels' padded bytes) change nothing but
    the prior: the trees are those of a table without them, and every prior weighs them."""
    train, valid = tiny_tables[("layout", "train")], tiny_tables[("layout", "valid")]
    keep = [j for j, n in enumerate(train.feature_names) if not is_prior_only(n)]
    assert 0 < len(keep) < len(train.feature_names)

    def without(t: FeatureTable) -> FeatureTable:
        names = tuple(t.feature_names[j] for j in keep)
        return dataclasses.replace(t, X=np.asarray(t.X)[:, keep], feature_names=names)

    hp = {**TINY_HP, WEIGHT_KEY: 5.0}
    fit = _fit(tiny_tables, hp=hp)
    bare = train_family(without(train), without(valid), LAYOUT, hp, rounds=8, seed=0)
    assert fit.ranker.booster_.model_to_string() == bare.ranker.booster_.model_to_string()
    assert fit.prior is not None
    only = [i for i, n in enumerate(fit.prior.names) if is_prior_only(n)]
    assert {fit.prior.names[i][:3] for i in only} == {"oc_", "kp_"}
    assert np.any(fit.prior.coef[only] != 0.0)  # the pooled weights read them
    for own in fit.prior.own.values():
        assert np.any(own.coef[only] != 0.0)
    assert any(fit.metrics[c] != bare.metrics[c] for c in LAYOUT)
    # the campaign's path (equations of every column summed once, a sub-block solved per
    # trial) gives the same prior, totals included
    cached = _fit(tiny_tables, hp=hp, cache=DatasetCache())
    assert cached.prior is not None
    assert cached.prior.names == fit.prior.names
    np.testing.assert_allclose(cached.prior.coef, fit.prior.coef, rtol=1e-9, atol=1e-12)
    assert cached.metrics == fit.metrics


def test_a_selecting_blend_keeps_the_better_of_blend_and_trees_per_collection(
    tiny_tables,
) -> None:
    """``estimate_blend_select``: a collection keeps the blend only where it scores above the
    trees alone; the prior carries the others, so its models rank them as they were scored."""
    train, valid = tiny_tables[("layout", "train")], tiny_tables[("layout", "valid")]

    def fit(hp):  # trees of 40 rounds against the prior alone (weight 1e6)
        return train_family(train, valid, LAYOUT, hp, rounds=40, seed=0, options=FitOptions())

    blended = fit({**TINY_HP, WEIGHT_KEY: 1e6})
    alone = fit(TINY_HP)
    chosen = fit({**TINY_HP, WEIGHT_KEY: 1e6, SELECT_KEY: True})
    assert chosen.prior is not None
    worse = {c for c in LAYOUT if alone.metrics[c] > blended.metrics[c]}
    assert worse, "the tiny data should have a collection the blend harms"
    assert chosen.prior.off == worse
    for c in LAYOUT:
        assert chosen.metrics[c] == max(alone.metrics[c], blended.metrics[c])
    assert LearnedPrior.from_dict(chosen.prior.to_dict(), "test").off == worse
    # a saved booster and its prior give the trial's scores again
    view = valid_view_of(valid, LAYOUT, FitOptions())
    weights = collection_weights({WEIGHT_KEY: 1e6}, LAYOUT)
    _, metrics, _, saved = score_valid(
        chosen.ranker, valid, view, chosen.columns, weights, chosen.prior, chosen.live_names
    )
    assert saved is not None
    assert (metrics, saved.off) == (chosen.metrics, worse)


def test_a_doubted_collection_blends_at_its_share_and_its_models_score_as_it_did(
    tiny_tables, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A collection whose valid gain cannot be told from 0 (:func:`prior_share` between 0 and
    1) is scored with the prior at that share of its weight, one whose gain is below it by the
    trees alone; the prior records both, so a saved booster scored again with the prior read
    back from its JSON gives the trial's scores to the bit."""
    import hpo.ranking.scoring.valid as valid_module

    train, valid = tiny_tables[("layout", "train")], tiny_tables[("layout", "valid")]
    doubted, dropped = "layout:xla:random", "layout:nlp:default"
    verdicts = {doubted: 0.25, dropped: 0.0}
    monkeypatch.setattr(valid_module, "prior_share", lambda blended, alone, c: verdicts.get(c, 1.0))
    hp = {**TINY_HP, WEIGHT_KEY: 30.0, SELECT_KEY: True}
    fit = train_family(train, valid, LAYOUT, hp, rounds=40, seed=0, options=FitOptions())
    assert fit.prior is not None
    assert (fit.prior.off, dict(fit.prior.doubt)) == (frozenset({dropped}), {doubted: 0.25})
    weights = collection_weights(hp, LAYOUT)
    assert fit.prior.blend_weights(weights)[doubted] == weights[doubted] * 0.25
    # a quarter of the weight scores the doubted collection, none the dropped one, the whole
    # weight the others
    shares = {doubted: 0.25, dropped: 0.0}
    by_weight = {
        key: collection_means(
            score_table(fit.ranker, valid, fit.columns, LAYOUT, weight={
                c: w * (shares.get(c, 1.0) if key == "as set" else 1.0)
                for c, w in weights.items()
            }, prior=fit.prior),
            LAYOUT,
        )
        for key in ("as set", "whole")
    }  # fmt: skip
    assert fit.metrics == by_weight["as set"]
    assert by_weight["as set"][doubted] != by_weight["whole"][doubted]
    saved = LearnedPrior.from_dict(fit.prior.to_dict(), "test")
    view = valid_view_of(valid, LAYOUT, FitOptions())
    scores, metrics, _, again = score_valid(
        fit.ranker, valid, view, fit.columns, weights, saved, fit.live_names
    )
    assert (scores, metrics) == (fit.scores, fit.metrics)
    assert again is not None
    assert again.to_dict() == fit.prior.to_dict()
    # selecting again on a prior that holds shares decides only the undecided collections: the
    # doubted one is not scaled twice
    _, metrics, _, reselected = score_valid(
        fit.ranker, valid, view, fit.columns, weights, saved, fit.live_names, select=True
    )
    assert metrics == fit.metrics
    assert reselected is not None
    assert reselected.to_dict() == fit.prior.to_dict()


def test_given_blend_shares_are_kept_not_chosen_again(tiny_tables) -> None:
    """A retrained export passes its trial's shares (``FitOptions.blend_shares``): the fit
    blends at them, scores as it blends, and does not choose on its valid graphs again, even
    where the valid gain would switch the prior off."""
    train, valid = tiny_tables[("layout", "train")], tiny_tables[("layout", "valid")]
    hp = {**TINY_HP, WEIGHT_KEY: 1e6, SELECT_KEY: True}
    chosen = train_family(train, valid, LAYOUT, hp, rounds=40, seed=0, options=FitOptions())
    assert chosen.prior is not None
    assert chosen.prior.off, "the tiny data should have a collection the blend harms"
    kept = {"layout:nlp:random": 0.25}  # another choice than the valid graphs would make
    fit = train_family(
        train, valid, LAYOUT, hp, rounds=40, seed=0, options=FitOptions(blend_shares=kept)
    )
    assert fit.prior is not None
    assert fit.prior.chosen_shares() == kept
    weights = {c: w * kept.get(c, 1.0) for c, w in collection_weights(hp, LAYOUT).items()}
    scored = score_table(fit.ranker, valid, fit.columns, LAYOUT, weight=weights, prior=fit.prior)
    assert fit.metrics == collection_means(scored, LAYOUT)
    # and without them the same fit chooses as the trial did
    again = train_family(train, valid, LAYOUT, hp, rounds=40, seed=0, options=FitOptions())
    assert again.prior is not None
    assert again.prior.chosen_shares() == chosen.prior.chosen_shares()
