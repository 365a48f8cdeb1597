from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from hpo.ranking.model.datasets import DatasetCache, binary_path
from hpo.ranking.model.ranker import LambdaRanker


def _table(tmp_path: Path, name: str = "X.npy", seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    np.save(tmp_path / name, rng.normal(size=(400, 4)).astype(np.float32))
    return np.load(tmp_path / name, mmap_mode="r")


def _rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    target = np.asarray(X[:, 0]) * 2 + np.asarray(X[:, 1])
    return target.astype(np.float64), np.repeat(np.arange(4), 100)


def _trees(booster) -> str:
    text = booster.model_to_string()
    return text[text.index("Tree=0") : text.index("end of trees")]


def _bin(ranker: LambdaRanker, X: np.ndarray, path: Path | None):
    y, qid = _rows(X)
    return ranker.bin_rows([(X, np.arange(len(X)))], ranker.row_order(y, qid), path)


def test_binary_path_names_memmapped_rows_seed_and_params(tmp_path: Path) -> None:
    X = _table(tmp_path)
    rows = np.arange(10)
    key = LambdaRanker().dataset_key()
    path = binary_path(tmp_path / "d", [(X, rows)], 0, key)
    assert path is not None
    assert path.parent == tmp_path / "d"
    assert path.suffix == ".bin"
    assert binary_path(tmp_path / "d", [(X, rows)], 0, key) == path
    assert binary_path(tmp_path / "d", [(X, rows[:5])], 0, key) != path
    assert binary_path(tmp_path / "d", [(X, rows)], 1, key) != path
    assert (
        binary_path(tmp_path / "d", [(X, rows)], 0, LambdaRanker({"max_bin": 7}).dataset_key())
        != path
    )
    assert binary_path(None, [(X, rows)], 0, key) is None
    # an in-memory table has no name outside this process: never saved
    assert binary_path(tmp_path / "d", [(X, rows), (np.asarray(X), rows)], 0, key) is None


def test_binary_cached_dataset_trains_the_same_booster(tmp_path: Path) -> None:
    X = _table(tmp_path)
    ranker = LambdaRanker({"num_leaves": 7, "max_bin": 31}, num_boost_round=5, seed=4)
    path = tmp_path / "datasets" / "one.bin"
    fresh = _bin(ranker, X, None)
    saved = _bin(ranker, X, path)
    assert path.is_file()
    assert not list(path.parent.glob("*.tmp"))
    loaded = _bin(ranker, X, path)
    assert isinstance(loaded.dataset.data, str)  # loaded, not binned again
    boosters = [
        LambdaRanker(**ranker.get_params()).fit_dataset(d).booster_ for d in (fresh, saved, loaded)
    ]
    assert _trees(boosters[0]) == _trees(boosters[1]) == _trees(boosters[2])
    # a booster continued on the loaded Dataset predicts its initial scores from the rows
    more = LambdaRanker(**{**ranker.get_params(), "label_levels": 4})
    a = more.fit_dataset(fresh, init_model=boosters[0]).booster_
    b = LambdaRanker(**more.get_params()).fit_dataset(loaded, init_model=boosters[0]).booster_
    np.testing.assert_allclose(
        a.predict(np.asarray(X)), b.predict(np.asarray(X)), atol=1e-9, rtol=0
    )


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_corrupt_binary_file_is_rebuilt_with_one_warning(tmp_path: Path, damage: str) -> None:
    X = _table(tmp_path)
    ranker = LambdaRanker({"num_leaves": 7}, num_boost_round=3, seed=1)
    path = tmp_path / "one.bin"
    expected = _trees(
        LambdaRanker(**ranker.get_params()).fit_dataset(_bin(ranker, X, path)).booster_
    )
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncated" else b"not a dataset" * 50)
    with pytest.warns(
        RuntimeWarning, match=r"one\.bin: unreadable binary Dataset .*rebuilding it"
    ) as record:
        rebuilt = _bin(ranker, X, path)
    assert len([w for w in record if issubclass(w.category, RuntimeWarning)]) == 1
    assert _trees(LambdaRanker(**ranker.get_params()).fit_dataset(rebuilt).booster_) == expected
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _bin(ranker, X, path)  # the rewritten file loads without a word


def test_binary_file_of_other_rows_is_rebuilt(tmp_path: Path) -> None:
    X = _table(tmp_path)
    ranker = LambdaRanker(num_boost_round=1)
    path = tmp_path / "one.bin"
    y, qid = _rows(X)
    ranker.bin_rows([(X, np.arange(200))], ranker.row_order(y[:200], qid[:200]), path)
    with pytest.warns(
        RuntimeWarning, match=r"holds \(200, 4\) rows x columns, expected \(400, 4\)"
    ):
        data = _bin(ranker, X, path)
    assert data.dataset.num_data() == 400


def test_unwritable_dataset_dir_only_warns(tmp_path: Path) -> None:
    X = _table(tmp_path)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.warns(RuntimeWarning, match="binary Dataset not saved"):
        data = _bin(LambdaRanker(num_boost_round=1), X, blocker / "sub" / "one.bin")
    assert data.dataset.num_data() == 400


def test_cache_reuses_and_bounds_entries() -> None:
    cache = DatasetCache(max_entries=2)
    built: list[int] = []
    for key in (1, 2, 1, 3, 2):
        cache.get(key, lambda k=key: built.append(k) or k)
    assert built == [1, 2, 3, 2]
    assert (cache.hits, cache.misses, len(cache)) == (1, 4, 2)


def test_threads_sharing_a_cache_build_each_key_once() -> None:
    """The thread workers of a local cluster share one cache: a key two of them want at once
    is built by one while the other waits and reuses it; other keys build side by side."""
    import threading

    cache = DatasetCache()
    built: list[str] = []
    started = threading.Barrier(4)
    building = {k: threading.Event() for k in "ab"}
    side_by_side: list[bool] = []

    def build(key: str) -> str:
        built.append(key)
        building[key].set()
        # each build waits for the other key's to start: one lock for all keys would hold
        # "b" until "a" timed out; the second caller of a key arrives meanwhile and waits
        side_by_side.append(building["b" if key == "a" else "a"].wait(timeout=10))
        return key.upper()

    got: list[tuple[str, bool]] = []

    def worker(key: str) -> None:
        started.wait()
        got.append(cache.get(key, lambda: build(key)))

    threads = [threading.Thread(target=worker, args=(k,)) for k in ("a", "a", "b", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(built) == ["a", "b"]
    assert side_by_side == [True, True]
    assert sorted(got) == [("A", False), ("A", True), ("B", False), ("B", True)]
    assert (cache.hits, cache.misses) == (2, 2)


def test_a_failed_build_lets_the_next_caller_build() -> None:
    cache = DatasetCache()

    def fail() -> str:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        cache.get("k", fail)
    assert cache.get("k", lambda: "built") == ("built", False)
    assert cache._building == {}  # no lock left behind for a key that failed


def test_workers_asking_at_once_build_the_dataset_once(tmp_path: Path) -> None:
    """The workers of a campaign start together: one builds, the others wait and load."""
    import threading
    import time

    from hpo.ranking.model.datasets import binary_dataset

    path = tmp_path / "datasets" / "one.bin"
    built: list[int] = []
    started = threading.Barrier(3)

    class Saved:
        def save_binary(self, where: Path) -> None:
            Path(where).write_text("binned")

    def build() -> Saved:
        built.append(threading.get_ident())
        time.sleep(0.3)  # long enough that the other callers are already waiting
        return Saved()

    got: list[object] = []

    def worker() -> None:
        started.wait()
        got.append(binary_dataset(path, build, lambda p: ("loaded", p.read_text())))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1
    assert sorted(map(str, got)).count("('loaded', 'binned')") == 2


def test_builds_of_different_datasets_take_turns(tmp_path: Path) -> None:
    """A build holds LightGBM's bin sample: two at once on one machine would hold two."""
    import threading
    import time

    from hpo.ranking.model.datasets import binary_dataset

    spans: list[tuple[float, float]] = []
    started = threading.Barrier(3)

    class Saved:
        def save_binary(self, where: Path) -> None:
            Path(where).write_text("binned")

    def build() -> Saved:
        t0 = time.perf_counter()
        time.sleep(0.2)
        spans.append((t0, time.perf_counter()))
        return Saved()

    def worker(i: int) -> None:
        started.wait()
        binary_dataset(tmp_path / "datasets" / f"{i}.bin", build, lambda p: p.read_text())

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    spans.sort()
    assert len(spans) == 3
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False))
