"""The booster store: identity, atomic save, continuation lookup, pruning, disk size."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest

from hpo.runs.record.boosters import BoosterStore, booster_key, budget_size, folder_bytes


@pytest.fixture(scope="module")
def booster() -> lgb.Booster:
    rng = np.random.default_rng(0)
    X, y = rng.random((60, 3)), rng.random(60)
    return lgb.train({"verbose": -1, "num_leaves": 4}, lgb.Dataset(X, y), num_boost_round=3)


def test_key_is_the_one_boosters_were_saved_under_before() -> None:
    hp = {"num_leaves": np.int64(15), "learning_rate": 0.1}
    old = json.dumps({"hp": {"num_leaves": 15, "learning_rate": 0.1}, "seed": 3,
                      "family": "tile"}, sort_keys=True)  # fmt: skip
    assert booster_key(hp, 3, "tile") == hashlib.sha1(old.encode()).hexdigest()[:16]
    assert booster_key(hp, 3, "tile") != booster_key(hp, 4, "tile")
    assert booster_key(hp, 3, "tile") != booster_key(hp, 3, "layout")


@pytest.mark.parametrize(("budget", "size"), [(36.0, 36), (11.99, 12), (0.2, 1), (1.5, 2)])
def test_budget_size(budget: float, size: int) -> None:
    assert budget_size(budget) == size


def test_save_find_prune(tmp_path: Path, booster: lgb.Booster) -> None:
    store = BoosterStore(tmp_path / "boosters")
    key = booster_key({"a": 1}, 0, "tile")
    assert store.latest_below(key, 10) == (None, 0)
    for size in (4, 12):
        store.save(key, size, booster)
    assert store.sizes(key) == [4, 12]
    assert not list(store.folder.glob(".*tmp"))
    found, size = store.latest_below(key, 36)
    assert size == 12
    assert found.num_trees() == booster.num_trees()
    assert store.latest_below(key, 12)[1] == 4
    store.path(key, 12).write_text("tree\nhalf written")
    assert store.latest_below(key, 36)[1] == 4  # an unreadable one is skipped
    assert store.prune_below(key, 12) == 1
    assert store.sizes(key) == [12]


def test_a_cut_short_booster_is_skipped_quietly_and_stdout_kept(
    tmp_path: Path, booster: lgb.Booster, capsys: pytest.CaptureFixture[str]
) -> None:
    """Thread workers load boosters while the campaign's view prints: loading must neither
    print LightGBM's error line nor swap the process's sys.stdout for a while."""
    import sys

    store = BoosterStore(tmp_path / "boosters")
    key = booster_key({"a": 1}, 0, "tile")
    whole = store.save(key, 4, booster).read_text()
    cut = whole.index("Tree=1")  # in the middle of its trees, before LightGBM's closing line
    store.path(key, 8).write_text(whole[:cut])
    before = sys.stdout
    assert store.load(key, 8) is None
    assert store.latest_below(key, 36)[1] == 4
    assert sys.stdout is before
    assert capsys.readouterr().out == ""


def test_keep_only_and_disk(tmp_path: Path, booster: lgb.Booster) -> None:
    store = BoosterStore(tmp_path / "boosters")
    keys = [booster_key({"a": i}, 0, "tile") for i in range(3)]
    for k in keys:
        store.save(k, 9, booster)
    (store.folder / ".stray.tmp").write_text("x")
    one = store.path(keys[0], 9).stat().st_size
    assert store.disk_bytes() == 3 * one + 1
    assert store.keep_only([(keys[1], 9)]) == 3
    assert [p.name for p in store.folder.iterdir()] == [store.path(keys[1], 9).name]
    assert folder_bytes(tmp_path) == one
    assert folder_bytes(tmp_path / "none") == 0


def test_the_prior_lives_and_dies_with_its_booster(tmp_path: Path, booster: lgb.Booster) -> None:
    store = BoosterStore(tmp_path / "boosters")
    key = booster_key({"a": 1}, 0, "layout")
    prior = {"names": ["log_a"], "linear": [True], "coef": [0.5], "ridge": 0.01}
    for size in (4, 12):
        store.save(key, size, booster, prior)
    assert store.load_prior(key, 12) == prior
    assert store.sizes(key) == [4, 12]  # the sidecar is not a booster
    store.prune_below(key, 12)
    assert not store.prior_path(key, 4).exists()
    other = booster_key({"a": 2}, 0, "layout")
    store.save(other, 4, booster, prior)
    store.keep_only([(key, 12)])
    assert store.load_prior(key, 12) == prior
    assert store.load_prior(other, 4) is None
    store.save(key, 12, booster)  # saved again without a prior: no stale one stays
    assert store.load_prior(key, 12) is None
