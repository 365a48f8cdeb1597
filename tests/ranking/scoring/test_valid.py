"""Valid scoring in graph-aligned chunks: the scores of one pass over every row, bit for bit."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from hpo.errors import ConfigError
from hpo.features.table import store
from hpo.features.table.feature_table import FeatureTable, GraphRef
from hpo.ranking.model.ranker import LambdaRanker
from hpo.ranking.prior.blend import ESTIMATE_COLUMN, WEIGHT_KEY, blend_scores, estimate_position
from hpo.ranking.prior.fit import LearnedPrior, design_row_bytes, fit_family_prior
from hpo.ranking.scoring import valid as scoring
from hpo.ranking.scoring.valid import (
    PRIOR_DOUBT_SHARE,
    GraphScore,
    ValidRows,
    blended_predict,
    collection_means,
    graph_metrics,
    prior_earns,
    prior_share,
    score_table,
    select_rows,
    valid_rows,
)
from hpo.ranking.training import make_ranker, train_family

NAMES = ("log_a", "b", ESTIMATE_COLUMN, "log_a_dmed", "b_prank", "c")
LAYOUT = ("layout:xla:random", "layout:nlp:default")
HP = {"learning_rate": 0.2, "num_leaves": 7, "min_data_in_leaf": 3, "label_levels": 4}
#: graph sizes: small ones packed together, a 90-row graph larger than the small chunks
SIZES = [5, 12, 3, 90, 1, 8, 20, 7, 2, 33]


def _table(split: str, seed: int) -> FeatureTable:
    """Layout rows whose runtime follows ``log_a`` and ``c``, with duplicate configs (ties)."""
    rng = np.random.default_rng(seed)
    n = sum(SIZES)
    X = rng.normal(size=(n, len(NAMES)))
    X[:, 0] += 12.0
    X[:, 2] += 20.0
    X[1::7] = X[0::7][: len(X[1::7])]  # repeated configs: ties the blend must break alike
    target = np.exp(X[:, 0] - 12.0) + 0.5 * X[:, 5] ** 2 + rng.random(n)
    labeled = [i != 4 for i in range(len(SIZES))]  # one unlabeled graph is never scored
    return FeatureTable(
        family="layout",
        split=split,
        X=X.astype(np.float32),
        target=target,
        group=np.repeat(np.arange(len(SIZES)), SIZES),
        config_index=np.concatenate([np.arange(s) for s in SIZES]),
        dup_count=np.ones(n, dtype=np.int64),
        graphs=tuple(
            GraphRef(LAYOUT[i % 2], f"g{i}", s, lab)
            for i, (s, lab) in enumerate(zip(SIZES, labeled, strict=True))
        ),
        feature_names=NAMES,
    )


@pytest.fixture(scope="module")
def fitted() -> tuple[FeatureTable, FeatureTable, LambdaRanker, LearnedPrior]:
    train, valid = _table("train", 0), _table("valid", 1)
    fit = train_family(train, valid, LAYOUT, {**HP, WEIGHT_KEY: 2.0}, rounds=6, seed=0)
    assert fit.prior is not None
    return train, valid, fit.ranker, fit.prior


def _one_pass(
    ranker: LambdaRanker,
    table: FeatureTable,
    view: ValidRows,
    columns: np.ndarray,
    weight: float,
    prior: LearnedPrior | None,
) -> np.ndarray:
    """What scoring did before chunks: every valid row's columns gathered at once."""
    X = np.ascontiguousarray(table.X[np.ix_(view.rows, columns)], dtype=np.float32)
    names = [table.feature_names[j] for j in columns]
    pred = ranker.predict(X)
    if weight == 0:
        return pred
    if prior is not None:
        estimate = _by_graph(prior, table, view, X, prior.positions_in(names, "test"))
        return blend_scores(pred, estimate, view.bounds, weight)
    pos = estimate_position(names)
    return pred if pos is None else blend_scores(pred, X[:, pos], view.bounds, weight)


def _by_graph(
    prior: LearnedPrior, table: FeatureTable, view: ValidRows, X: np.ndarray, at: list[int]
) -> np.ndarray:
    """The prior of a view's rows ``X`` graph by graph, each with its collection's weights."""
    parts = [
        prior.for_collection(table.graphs[g].collection).estimate(X[a:b], np.array([0, b - a]), at)
        for g, a, b in zip(view.graphs, view.bounds[:-1], view.bounds[1:], strict=True)
    ]
    return np.concatenate(parts)


def _spy_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Row counts of every chunk :func:`blended_predict` reads."""
    reads: list[int] = []

    def spy(X: np.ndarray, rows: np.ndarray, columns: np.ndarray | None = None) -> np.ndarray:
        reads.append(len(rows))
        return store.read_rows(X, rows, columns)

    monkeypatch.setattr(scoring, "read_rows", spy)
    return reads


@pytest.mark.parametrize("chunk_rows", [1, 10, 40, 10**6])
@pytest.mark.parametrize("blend", ["none", "prior", "column"])
def test_chunked_scores_equal_one_pass_bit_for_bit(
    fitted, monkeypatch: pytest.MonkeyPatch, chunk_rows: int, blend: str
) -> None:
    _, valid, ranker, prior = fitted
    columns = np.arange(len(NAMES))
    weight = 0.0 if blend == "none" else 2.0
    used = prior if blend == "prior" else None
    view = valid_rows(valid, LAYOUT)
    # a chunk's budget counts the float32 rows read and the prior's float64 design
    row_bytes = 4 * len(NAMES) + (design_row_bytes(len(prior.names)) if blend == "prior" else 0)
    monkeypatch.setattr(store, "CHUNK_BYTES", row_bytes * chunk_rows)
    reads = _spy_reads(monkeypatch)
    got = blended_predict(ranker, valid, view, columns, weight, used)
    want = _one_pass(ranker, valid, view, columns, weight, used)
    np.testing.assert_array_equal(got, want)  # bit for bit, not approximately
    assert sum(reads) == view.rows.size
    if chunk_rows == 40:  # many chunks, and the 90-row graph is a chunk of its own
        assert len(reads) > 3
        assert 90 in reads
        assert max(r for r in reads if r != 90) <= 40
    if blend != "none":
        assert not np.array_equal(got, ranker.predict(valid.X[view.rows]))  # the blend acted


def test_a_memory_mapped_table_scores_as_the_one_in_memory(
    fitted, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _, valid, ranker, prior = fitted
    np.save(tmp_path / "X.npy", valid.X)
    mapped = dataclasses.replace(valid, X=np.load(tmp_path / "X.npy", mmap_mode="r"))
    assert isinstance(mapped.X, np.memmap)
    columns = np.arange(len(NAMES))
    monkeypatch.setattr(store, "CHUNK_BYTES", 200 * 4)
    for weight, used in [(0.0, None), (2.0, prior), (2.0, None)]:
        in_memory = score_table(ranker, valid, columns, LAYOUT, weight=weight, prior=used)
        on_disk = score_table(ranker, mapped, columns, LAYOUT, weight=weight, prior=used)
        assert on_disk == in_memory
        view = valid_rows(valid, LAYOUT)
        np.testing.assert_array_equal(
            blended_predict(ranker, mapped, view, columns, weight, used),
            _one_pass(ranker, valid, view, columns, weight, used),
        )


def test_the_prior_may_read_columns_the_booster_does_not(monkeypatch: pytest.MonkeyPatch) -> None:
    train, valid = _table("train", 0), _table("valid", 1)
    booster = np.array([1, 3, 5])  # the prior's log_a and the estimate are not among them
    # a booster of selected columns: what models made before one Dataset of all columns hold
    rows = select_rows(train, LAYOUT)
    ranker = make_ranker(HP, LAYOUT, num_boost_round=4, seed=0)
    ranker.fit(train.X[np.ix_(rows, booster)], train.target[rows], train.group[rows])
    prior = fit_family_prior([(train, select_rows(train, LAYOUT))], np.array([0, 1, 2]))
    assert prior is not None
    assert set(prior.names) - {NAMES[j] for j in booster}
    view = valid_rows(valid, LAYOUT)
    monkeypatch.setattr(store, "CHUNK_BYTES", 30 * 4)
    got = blended_predict(ranker, valid, view, booster, 3.0, prior)
    X = valid.X[view.rows]
    pred = ranker.predict(X[:, booster])
    at = prior.positions_in(NAMES, "test")
    want = blend_scores(pred, _by_graph(prior, valid, view, X, at), view.bounds, 3.0)
    np.testing.assert_array_equal(got, want)


def test_valid_rows_keep_rows_not_features(fitted) -> None:
    _, valid, _, _ = fitted
    view = valid_rows(valid, LAYOUT)
    assert {f.name for f in dataclasses.fields(view)} == {"rows", "runtime", "bounds", "graphs"}
    assert view.graphs == tuple(g for g, ref in enumerate(valid.graphs) if ref.labeled)
    np.testing.assert_array_equal(np.diff(view.bounds), [SIZES[g] for g in view.graphs])
    np.testing.assert_array_equal(view.runtime, valid.target[view.rows])
    fold = np.zeros(len(SIZES), dtype=bool)
    fold[[3, 4, 7]] = True  # graph 4 is unlabeled: still not scored
    assert valid_rows(valid, LAYOUT, fold).graphs == (3, 7)
    empty = valid_rows(valid, ("tile:xla",))
    assert empty.graphs == ()
    assert graph_metrics(valid, empty, np.zeros(0)) == []


def test_a_mapping_of_weights_scores_each_collection_at_its_own(fitted) -> None:
    _, valid, ranker, prior = fitted
    columns = np.arange(len(NAMES))
    present = sorted({g.collection for g in valid.graphs if g.labeled})
    weights = {c: (4.0 if i % 2 else 0.5) for i, c in enumerate(present)}
    mixed = score_table(ranker, valid, columns, LAYOUT, weight=weights, prior=prior)
    for c, w in weights.items():  # each collection as if the whole table had its weight
        alone = score_table(ranker, valid, columns, LAYOUT, weight=w, prior=prior)
        assert [s for s in mixed if s.collection == c] == [s for s in alone if s.collection == c]
    with pytest.raises(ConfigError, match=rf"^blend weights: none for {present[0]}"):
        score_table(ranker, valid, columns, LAYOUT, weight={present[-1]: 1.0}, prior=prior)


def test_graphs_without_a_ranking_are_scored_but_left_out_of_the_means(fitted) -> None:
    """A valid graph of equal runtimes, or of one config, scores tau 0 whatever the model:
    counted, it pulled its collection's mean toward 0."""
    train, valid, ranker, prior = fitted
    target = np.array(valid.target, dtype=np.float64)
    bounds = np.r_[0, np.cumsum(SIZES)]
    target[bounds[1] : bounds[2]] = 3.0  # g1 (layout:nlp:default): one runtime for all
    flat = dataclasses.replace(valid, target=target)
    columns = np.arange(len(NAMES))
    scores = score_table(ranker, flat, columns, LAYOUT)
    ranked = {s.stem: s.ranked for s in scores}
    assert ranked == {f"g{i}": i != 1 for i in range(len(SIZES)) if i != 4}
    means = collection_means(scores, LAYOUT)
    nlp = [s.metric for s in scores if s.collection == LAYOUT[1] and s.stem != "g1"]
    assert means[LAYOUT[1]] == pytest.approx(np.mean(nlp))
    assert (
        collection_means(scores, LAYOUT)[LAYOUT[0]]
        == collection_means(score_table(ranker, valid, columns, LAYOUT), LAYOUT)[LAYOUT[0]]
    )


def test_tile_scores_of_tied_predictions_do_not_depend_on_the_row_order() -> None:
    """Ties across the 5th place were broken by row order (probe2 #74): each graph scores as
    :func:`tile_score`, the mean over every order of its tied configs, rows reversed or not."""
    from hpo.ranking.scoring.metrics import tile_score

    sizes = [3, 5, 6, 9, 12]
    rng = np.random.default_rng(0)
    n = sum(sizes)
    target = rng.permutation(n) + 1.0
    pred = np.floor(rng.random(n) * 3)  # few distinct scores: ties at every place
    table = FeatureTable(
        family="tile",
        split="valid",
        X=np.zeros((n, 1), dtype=np.float32),
        target=target,
        group=np.repeat(np.arange(len(sizes)), sizes),
        config_index=np.concatenate([np.arange(s) for s in sizes]),
        dup_count=np.ones(n, dtype=np.int64),
        graphs=tuple(GraphRef("tile:xla", f"g{i}", s, True) for i, s in enumerate(sizes)),
        feature_names=("f",),
    )
    view = valid_rows(table, ("tile:xla",))
    spans = list(zip(view.bounds[:-1], view.bounds[1:], strict=True))
    scores = [s.metric for s in graph_metrics(table, view, pred)]
    expected = [tile_score(pred[a:b], target[a:b]) for a, b in spans]
    assert scores == pytest.approx(expected, abs=1e-12)
    flip = np.concatenate([np.arange(a, b)[::-1] for a, b in spans])
    back = dataclasses.replace(table, target=target[flip])
    flipped = [s.metric for s in graph_metrics(back, valid_rows(back, ("tile:xla",)), pred[flip])]
    assert flipped == pytest.approx(scores, abs=1e-12)


def _scores(collection: str, metrics: list[float], ranked: bool = True) -> list[GraphScore]:
    return [GraphScore(collection, f"g{i}", m, 10, ranked) for i, m in enumerate(metrics)]


def test_a_gain_within_the_margin_either_way_keeps_a_share_of_the_weight() -> None:
    c = "layout:xla:random"
    alone = _scores(c, [0.5, 0.5, 0.5, 0.5])
    # mean 0.01, half a standard error 0.0106: neither kept nor dropped
    noisy = [0.57, 0.48, 0.48, 0.51]
    assert prior_share(_scores(c, noisy), alone, c) == PRIOR_DOUBT_SHARE
    assert prior_share(_scores(c, noisy), alone, c, doubt=0.1) == 0.1
    # the same graphs a loss: mean -0.01, within the margin below 0 too
    assert prior_share(_scores(c, [0.43, 0.52, 0.52, 0.49]), alone, c) == PRIOR_DOUBT_SHARE
    # steady gains and losses are decided
    assert prior_share(_scores(c, [0.51, 0.51, 0.51, 0.51]), alone, c) == 1.0
    assert prior_share(_scores(c, [0.49, 0.49, 0.49, 0.49]), alone, c) == 0.0
    assert prior_share(_scores(c, [0.44, 0.49, 0.49, 0.46]), alone, c) == 0.0
    # one graph: its sign; none: whole
    assert prior_share(_scores(c, [0.4]), alone[:1], c) == 0.0
    assert prior_share(_scores(c, [0.6]), alone[:1], c) == 1.0
    assert prior_share(alone, alone, "layout:nlp:random") == 1.0
    # a margin of 0 leaves no band
    assert prior_share(_scores(c, noisy), alone, c, margin=0) == 1.0


def test_the_prior_earns_a_collection_by_a_margin_of_its_standard_error() -> None:
    c = "layout:xla:random"
    alone = _scores(c, [0.5, 0.5, 0.5, 0.5])
    # a steady gain of 0.01 on every graph: kept
    assert prior_earns(_scores(c, [0.51, 0.51, 0.51, 0.51]), alone, c)
    # the same mean gain from one graph's noise (mean 0.01, half a standard error 0.0106): not
    # kept, though a mean alone would have kept it
    assert not prior_earns(_scores(c, [0.57, 0.48, 0.48, 0.51]), alone, c)
    # a blend that changes nothing is kept, as before (it costs nothing)
    assert prior_earns(alone, alone, c)
    # one graph: its sign; none that carries a ranking, or another collection's: kept
    assert prior_earns(_scores(c, [0.6]), alone[:1], c)
    assert not prior_earns(_scores(c, [0.4]), alone[:1], c)
    unranked = _scores(c, [0.1, 0.1], ranked=False)
    assert prior_earns(unranked, _scores(c, [0.5, 0.5], ranked=False), c)
    assert prior_earns(_scores(c, [0.1, 0.1]), _scores(c, [0.5, 0.5]), "layout:nlp:random")
