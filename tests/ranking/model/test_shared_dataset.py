"""Tests of hpo.ranking.model.shared_dataset: one Dataset for a process's trials, copied on
overlap."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from hpo.ranking.model.ranker import LambdaRanker, relevance_labels
from hpo.ranking.model.shared_dataset import RankingData


def _rows(n_graphs: int = 6, per: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_graphs * per, 5)).astype(np.float32)
    qid = np.repeat(np.arange(n_graphs), per)
    y = np.exp(X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=len(X)))
    return X, y, qid


class _Fake:
    """A stand-in Dataset that records the fields set on it."""

    def __init__(self) -> None:
        self.set: list[str] = []

    def set_label(self, label: np.ndarray) -> None:
        self.set.append(f"label{int(label.max()) + 1}")

    def set_group(self, group: np.ndarray) -> None:
        self.set.append(f"group{int(group.max())}")


def _fake_data() -> tuple[RankingData, list[_Fake]]:
    made: list[_Fake] = []

    def make() -> tuple[Any, tuple[int, int]]:
        made.append(_Fake())
        return made[-1], (0, 0)

    data = RankingData(
        make,
        labels=lambda n: np.array([0, n - 1]),
        groups=lambda size: np.array([size]),
        rows=(np.array([1.0, 2.0]), np.array([0, 0])),
    )
    return data, made


def test_a_copy_is_made_only_while_another_is_checked_out() -> None:
    data, made = _fake_data()
    with data.checkout(4, 16) as first:
        assert first is made[0]
        with data.checkout(8, 16) as second:
            assert second is made[1]  # the first is busy: a second copy
    assert data.copies == 2
    assert made[0].set == ["label4", "group16"]
    assert made[1].set == ["label8", "group16"]
    # one at a time: no more copies, and a free copy whose fields match is taken as it is
    with data.checkout(8, 16) as again:
        assert again is made[1]
    with data.checkout(4, 32) as other:
        assert other.set[-1] == "group32"  # only the field that differs is set
    assert data.copies == 2


def test_a_failure_while_setting_fields_leaves_them_to_set_again() -> None:
    data, made = _fake_data()
    boom = [True]

    def labels(n: int) -> np.ndarray:
        if boom[0]:
            raise MemoryError("labels")
        return np.array([0, n - 1])

    data._labels = labels
    try:
        with data.checkout(4, 16):
            raise AssertionError("not reached")
    except MemoryError:
        pass
    boom[0] = False
    with data.checkout(4, 16) as dataset:
        assert dataset.set == ["label4", "group16"]


def test_a_trial_that_fails_while_boosting_drops_its_copy() -> None:
    """A feature_fraction of 1.5 crashed one trial in LightGBM; the next trial that set labels
    on the same Dataset segfaulted. A copy a failed trial held is never handed out again."""
    data, made = _fake_data()
    try:
        with data.checkout(4, 16) as dataset:
            assert dataset is made[0]
            raise RuntimeError("LightGBM failed half-way")
    except RuntimeError:
        pass
    assert data.dropped == 1
    with data.checkout(4, 16) as dataset:
        assert dataset is made[1]
        assert dataset.set == ["label4", "group16"]
    with data.checkout(4, 16) as dataset:
        assert dataset is made[1]  # a copy that ended well is kept
    assert data.copies == 2


def test_overlapping_trials_grow_the_boosters_of_trials_one_at_a_time() -> None:
    """Two rankers of other label levels and sub-queries boosting at once on one shared
    Dataset (each on its own copy) grow the same trees as each boosting alone."""
    X, y, qid = _rows()
    settings = [
        {"label_levels": 4, "max_group_size": 20},
        {"label_levels": 16, "max_group_size": 60},
    ]

    def ranker(i: int) -> LambdaRanker:
        params = {"num_leaves": 7, "min_data_in_leaf": 5, "verbose": -1}
        return LambdaRanker(params, num_boost_round=30, seed=3, **settings[i])  # type: ignore[arg-type]

    alone = []
    for i in range(2):
        data = ranker(i).build_dataset(X, y, qid)
        alone.append(ranker(i).fit_dataset(data).booster_.model_to_string())

    shared = ranker(0).build_dataset(X, y, qid)
    started = threading.Barrier(2)
    together: dict[int, str] = {}

    def trial(i: int) -> None:
        started.wait()
        together[i] = ranker(i).fit_dataset(shared).booster_.model_to_string()

    threads = [threading.Thread(target=trial, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [together[0], together[1]] == alone
    assert shared.copies in (1, 2)  # 2 when the boostings overlapped, as they usually do
    # the labels of a copy are those of the last trial on it
    with shared.checkout(4, 20) as dataset:
        assert np.array_equal(
            dataset.get_label(), relevance_labels(y, qid, 4)[ranker(0).row_order(y, qid).order]
        )


def test_a_dataset_built_for_its_file_is_labelled_once(tmp_path: Any, monkeypatch: Any) -> None:
    """Building a binary Dataset computes its labels; its first checkout must not redo them
    (a pass over every row at real size), while a copy loaded from the file gets them set."""
    import hpo.ranking.model.ranker as ranker_module

    X, y, qid = _rows()
    calls: list[int] = []
    real = ranker_module.relevance_labels

    def counted(values: np.ndarray, groups: np.ndarray, levels: int) -> np.ndarray:
        calls.append(levels)
        return real(values, groups, levels)

    monkeypatch.setattr(ranker_module, "relevance_labels", counted)
    ranker = LambdaRanker({"verbose": -1}, num_boost_round=3, seed=0, label_levels=8)
    order = ranker.row_order(y, qid)
    data = ranker.bin_rows([(X, np.arange(len(X)))], order, tmp_path / "rows.bin")
    assert (tmp_path / "rows.bin").exists()
    assert calls == [8]  # the build
    with data.checkout(8, ranker.max_group_size):
        assert calls == [8]
        with data.checkout(8, ranker.max_group_size) as second:  # overlap: loaded from the file
            assert calls == [8, 8]
            assert second.get_label().max() == 7
