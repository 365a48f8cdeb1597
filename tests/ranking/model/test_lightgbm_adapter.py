from __future__ import annotations

import re
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest

import hpo.ranking.model.lightgbm_adapter as adapter
from hpo.ranking.model.lightgbm_adapter import (
    PRIVATE_HOOKS,
    ROUND_STREAMS,
    TableRows,
    continued_seeds,
    derived_data_seed,
    hook_signatures,
)
from hpo.ranking.model.ranker import DATASET_PARAMS, LambdaRanker, relevance_labels, sub_group_sizes

#: Bytes per chunk in these tests: a few rows, so every read and prediction spans chunks.
SMALL_CHUNK = 4 * 5 * 37


@pytest.fixture(autouse=True)
def _small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adapter, "CHUNK_BYTES", SMALL_CHUNK)


def _ranking(n_groups: int = 4, size: int = 150, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_groups * size, 5)).astype(np.float32)
    target = X[:, 0] * 2 + X[:, 1] + 0.3 * rng.normal(size=len(X))
    return X, target.astype(np.float64), np.repeat(np.arange(n_groups), size)


def _memmap(X: np.ndarray, path: Path) -> np.ndarray:
    np.save(path, X)
    return np.load(path, mmap_mode="r")


def _trees(booster: lgb.Booster) -> str:
    """The trees of a model string (the parameters section names the Dataset's origin)."""
    text = booster.model_to_string()
    return text[text.index("Tree=0") : text.index("end of trees")]


def _in_memory_dataset(
    ranker: LambdaRanker, X: np.ndarray, y: np.ndarray, qid: np.ndarray, without: str = ""
) -> lgb.Dataset:
    """The Dataset as it was before chunks: a Dataset-ordered float32 copy of the rows."""
    order = ranker.row_order(y, qid)
    params = {
        k: v for k, v in ranker.lightgbm_params().items() if k in DATASET_PARAMS and k != without
    }
    return lgb.Dataset(
        np.ascontiguousarray(X[order.order]),
        relevance_labels(order.y, order.qid, ranker.label_levels),
        group=sub_group_sizes(np.bincount(order.qid), ranker.max_group_size),
        params={**params, "verbose": -1},
        free_raw_data=False,
    )


def _in_memory_fit(
    ranker: LambdaRanker, X: np.ndarray, y: np.ndarray, qid: np.ndarray, init_model=None
) -> lgb.Booster:
    """Training as it was before chunks (a continued fit with its fresh random streams)."""
    done = 0 if init_model is None else init_model.current_iteration()
    return lgb.train(
        {**ranker.lightgbm_params(), **continued_seeds(ranker.seed, done)},
        _in_memory_dataset(ranker, X, y, qid),
        num_boost_round=ranker.num_boost_round,
        init_model=init_model,
        keep_training_booster=True,
    )


@pytest.mark.parametrize("name", sorted(PRIVATE_HOOKS))
def test_private_lightgbm_hook_keeps_its_signature(name: str) -> None:
    """Fails when a LightGBM upgrade renames or reshapes a private method overridden here."""
    assert hook_signatures()[name] == PRIVATE_HOOKS[name]


@pytest.mark.parametrize("on_disk", [False, True])
def test_table_rows_reads_parts_in_order(tmp_path: Path, on_disk: bool) -> None:
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(40, 5)), rng.normal(size=(30, 5))
    if on_disk:
        a, b = _memmap(a.astype(np.float32), tmp_path / "a.npy"), _memmap(b, tmp_path / "b.npy")
    ra, rb = np.array([3, 1, 39, 7]), np.array([29, 0, 5])
    order = rng.permutation(7)
    seq = TableRows([(a, ra), (b, rb)], order)
    expected = np.concatenate([np.asarray(a)[ra], np.asarray(b)[rb]])[order].astype(np.float32)
    assert len(seq) == 7
    np.testing.assert_array_equal(seq[0:7], expected)
    np.testing.assert_array_equal(seq[2:5], expected[2:5])
    np.testing.assert_array_equal(seq[[6, 0]], expected[[6, 0]])
    assert seq[4].dtype == np.float64  # LightGBM bins sampled rows as doubles
    np.testing.assert_array_equal(seq[4], expected[4])
    np.testing.assert_array_equal(np.concatenate([c for _, _, c in seq.chunks()]), expected)


@pytest.mark.parametrize("sample", [None, 50])
def test_sample_columns_equal_lightgbm_own_sample(sample: int | None) -> None:
    """The bin sample built chunk by chunk is the one LightGBM's Sequence path builds."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.3] = 0.0
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 4] = 0.0  # a column with nothing to sample
    seq = TableRows([(X, np.arange(120))], np.random.default_rng(0).permutation(120))
    params = {"verbose": -1, "data_random_seed": 3}
    if sample is not None:
        params["bin_construct_sample_cnt"] = sample
    ours = adapter.ChunkedDataset(seq, rows=seq, params=params)
    theirs = lgb.Dataset(seq, params=params)
    got = ours._Dataset__sample(seqs=[seq], total_nrow=len(seq))
    want = lgb.Dataset._Dataset__sample(theirs, seqs=[seq], total_nrow=len(seq))
    for mine, lightgbm in zip([*got[0], *got[1]], [*want[0], *want[1]], strict=True):
        assert mine.dtype == lightgbm.dtype
        np.testing.assert_array_equal(mine, lightgbm)


def test_table_rows_refuses_a_wrong_order() -> None:
    with pytest.raises(ValueError, match=r"^TableRows: order has 2 rows, the parts 3$"):
        TableRows([(np.zeros((3, 2)), np.arange(3))], np.arange(2))


@pytest.mark.parametrize("on_disk", [False, True])
def test_chunked_dataset_trains_the_trees_of_the_in_memory_rows(
    tmp_path: Path, on_disk: bool
) -> None:
    """Below ``bin_construct_sample_cnt`` every row is sampled: the bins, so the trees, agree."""
    X, y, qid = _ranking()
    table = _memmap(X, tmp_path / "X.npy") if on_disk else X
    params = {"num_leaves": 7, "min_data_in_leaf": 5, "bagging_fraction": 0.8, "bagging_freq": 1}
    ranker = LambdaRanker(params, num_boost_round=6, max_group_size=64, seed=2)
    chunked = ranker.fit(table, y, qid).booster_
    assert _trees(chunked) == _trees(_in_memory_fit(ranker, X, y, qid))


@pytest.mark.parametrize("seed", [0, 5])
def test_chunked_dataset_above_the_bin_sample_trains_the_same_trees(seed: int) -> None:
    """Above ``bin_construct_sample_cnt`` LightGBM bins a sample of the rows. A Sequence's
    sample is drawn in Python from the Dataset params, which lack ``seed``; a numpy matrix's
    in C++ from the ``data_random_seed`` derived from ``seed``. The ranker passes that
    derived value explicitly, so both draw the same sample. (Without it, on these 1,200 rows
    binned from 200, the two boosters' scores correlated at only 0.98.)"""
    X, y, qid = _ranking(n_groups=4, size=300)
    params = {"bin_construct_sample_cnt": 200, "num_leaves": 7}
    ranker = LambdaRanker(params, num_boost_round=10, seed=seed)
    assert _trees(ranker.fit(X, y, qid).booster_) == _trees(_in_memory_fit(ranker, X, y, qid))


@pytest.mark.parametrize("seed", [0, 7, 123_456])
def test_derived_data_seed_is_what_lightgbm_derives_from_seed(seed: int) -> None:
    """Fails if LightGBM changes how ``seed`` sets ``data_random_seed`` (its bin sample)."""
    X, y, qid = _ranking(n_groups=2, size=300)
    params = {"bin_construct_sample_cnt": 100, "num_leaves": 7}
    ranker = LambdaRanker(params, num_boost_round=3, seed=seed)
    implicit = LambdaRanker(
        {**params, "data_random_seed": derived_data_seed(seed)}, num_boost_round=3, seed=seed
    )
    other = LambdaRanker(
        {**params, "data_random_seed": derived_data_seed(seed) + 1}, num_boost_round=3, seed=seed
    )
    assert "data_random_seed" in ranker.lightgbm_params()
    plain = lgb.train(
        {k: v for k, v in ranker.lightgbm_params().items() if k != "data_random_seed"},
        _in_memory_dataset(ranker, X, y, qid, without="data_random_seed"),
        num_boost_round=3,
    )
    assert _trees(plain) == _trees(_in_memory_fit(implicit, X, y, qid))
    assert _trees(plain) != _trees(_in_memory_fit(other, X, y, qid))


def test_continued_booster_equals_one_continued_on_in_memory_rows(tmp_path: Path) -> None:
    """Initial scores come from a chunked predict over the Sequence, not ``Dataset.data``."""
    X, y, qid = _ranking()
    table = _memmap(X, tmp_path / "X.npy")
    first = LambdaRanker({"num_leaves": 7}, num_boost_round=4, seed=3)
    base = first.fit(table, y, qid).booster_
    more = LambdaRanker({"num_leaves": 7}, num_boost_round=5, seed=3)
    data = more.build_dataset(table, y, qid)
    fresh = LambdaRanker({"num_leaves": 7}, num_boost_round=5, seed=3).fit_dataset(data)
    continued = more.fit_dataset(data, init_model=base).booster_
    today = _in_memory_fit(more, X, y, qid, init_model=base)
    assert continued.current_iteration() == 9
    np.testing.assert_allclose(continued.predict(X), today.predict(X), rtol=0, atol=1e-9)
    # the Dataset serves a fresh fit again afterwards (initial scores reset to zero)
    again = LambdaRanker({"num_leaves": 7}, num_boost_round=5, seed=3).fit_dataset(data)
    assert _trees(again.booster_) == _trees(fresh.booster_)


def test_chunked_dataset_keeps_no_raw_rows() -> None:
    X, y, qid = _ranking()
    data = LambdaRanker(num_boost_round=1).build_dataset(X, y, qid)
    assert isinstance(data.dataset.data, TableRows)
    held = [v for v in vars(data.dataset.data).values() if isinstance(v, np.ndarray)]
    assert all(v.dtype.kind in "iu" for v in held)  # row indices only


def test_a_memmapped_table_is_read_from_its_file(tmp_path: Path) -> None:
    """``build_dataset`` keeps a memmap one (``np.asarray`` would make it a plain array whose
    pages join the resident set as LightGBM reads them)."""
    X, y, qid = _ranking(n_groups=2, size=20)
    data = LambdaRanker(num_boost_round=1).build_dataset(_memmap(X, tmp_path / "X.npy"), y, qid)
    assert isinstance(data.dataset.rows.tables[0], np.memmap)


def test_only_single_output_boosters_continue() -> None:
    X, y, qid = _ranking(n_groups=2, size=20)
    data = LambdaRanker(num_boost_round=1).build_dataset(X, y, qid)

    class _TwoClasses:
        num_class = 2

    with pytest.raises(ValueError, match=re.escape("only single-output boosters continue")):
        data.dataset._set_init_score_by_predictor(_TwoClasses(), None, None)


def test_continued_seeds_are_fresh_per_seed_and_round() -> None:
    assert continued_seeds(3, 0) == {}  # a booster trained straight keeps LightGBM's own
    first = continued_seeds(3, 42)
    assert set(first) == set(ROUND_STREAMS)
    assert all(0 <= v < 2**31 - 1 for v in first.values())
    assert continued_seeds(3, 42) == first  # a resume continues the same way
    assert continued_seeds(3, 84) != first
    assert continued_seeds(4, 42) != first
    assert len(set(first.values())) == len(first)


def test_a_continued_booster_samples_its_new_rounds_afresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """``lgb.train`` restarts the column-sampling stream: without fresh seeds the new rounds
    would draw the columns of rounds 1, 2, ... again."""
    X, y, qid = _ranking()
    params = {"num_leaves": 7, "feature_fraction": 0.5}
    base = LambdaRanker(params, num_boost_round=4, seed=3).fit(X, y, qid).booster_
    more = LambdaRanker(params, num_boost_round=5, seed=3)
    seen: list[dict] = []
    train = lgb.train
    monkeypatch.setattr(lgb, "train", lambda p, *a, **k: seen.append(p) or train(p, *a, **k))
    continued = more.fit(X, y, qid, init_model=base).booster_
    assert {k: seen[-1][k] for k in ROUND_STREAMS} == continued_seeds(3, 4)
    restarted = train(more.lightgbm_params(), _in_memory_dataset(more, X, y, qid), 5,
                      init_model=base, keep_training_booster=True)  # fmt: skip
    assert _trees(continued) != _trees(restarted)
    again = LambdaRanker(params, num_boost_round=5, seed=3).fit(X, y, qid, init_model=base)
    assert _trees(again.booster_) == _trees(continued)
    # a straight fit is LightGBM's own: no seed of a stream is set
    LambdaRanker(params, num_boost_round=5, seed=3).fit(X, y, qid)
    assert not set(ROUND_STREAMS) & set(seen[-1])


def test_saving_a_dataset_built_on_another_thread_prints_nothing(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """LightGBM's log level is per thread: a Dataset built with verbose=-1 and saved on another
    thread printed '[LightGBM] [Info] Saving data to binary file' into a campaign's output."""
    import threading

    import lightgbm as lgb

    from hpo.ranking.model.lightgbm_adapter import save_binary_quietly

    rng = np.random.default_rng(0)
    dataset = lgb.Dataset(rng.random((200, 3)), rng.random(200), params={"verbose": -1})
    dataset.construct()
    capfd.readouterr()
    saver = threading.Thread(target=save_binary_quietly, args=(dataset, str(tmp_path / "d.bin")))
    saver.start()
    saver.join()
    assert (tmp_path / "d.bin").is_file()
    out, err = capfd.readouterr()
    assert "Saving data" not in out + err
