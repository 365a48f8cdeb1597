"""Hostile booster texts: each is refused with one line before LightGBM parses it.

Every case once crashed (segmentation fault) or hung LightGBM, or would read outside its
arrays; the timeout makes a hang fail the test instead of the suite.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from hpo.errors import ConfigError
from hpo.runs.record.booster_text import check_booster_text

N_COLUMNS = 4


@pytest.fixture(scope="module")
def good_text() -> str:
    """A real LightGBM lambdarank model: 3 trees of 4 leaves over 4 columns."""
    import lightgbm as lgb

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, N_COLUMNS))
    y = rng.integers(0, 4, 200)
    params = {"objective": "lambdarank", "num_leaves": 4, "verbose": -1, "min_data_in_leaf": 5}
    booster = lgb.train(params, lgb.Dataset(X, y, group=[20] * 10), num_boost_round=3)
    return str(booster.model_to_string())


def _resize(text: str) -> str:
    """Recompute ``tree_sizes`` so that only the intended fault remains."""
    data = text.encode()
    end = data.index(b"\nend of trees") + 1
    starts = [m.start() for m in re.finditer(rb"^Tree=\d+\n", data, re.MULTILINE)] + [end]
    sizes = " ".join(str(b - a) for a, b in zip(starts, starts[1:], strict=False))
    return re.sub(r"^tree_sizes=.*$", f"tree_sizes={sizes}", text, count=1, flags=re.MULTILINE)


def _set(text: str, tree: int, key: str, value: str) -> str:
    """Replace ``key=...`` inside tree ``tree``."""
    head, sep, rest = text.partition(f"Tree={tree}\n")
    rest = re.sub(rf"^{key}=.*$", f"{key}={value}", rest, count=1, flags=re.MULTILINE)
    return _resize(head + sep + rest)


def _drop_tree_lines(text: str) -> str:
    """Cut tree 1 in the middle (a truncated file that still ends properly)."""
    head, sep, rest = text.partition("Tree=1\n")
    lines = rest.split("\n")
    return _resize(head + sep + "\n".join(lines[:3] + lines[lines.index("Tree=2") - 1 :]))


HOSTILE = {
    "huge split_feature": (
        lambda t: _set(t, 0, "split_feature", "99999999 1 2"),
        r"'split_feature' 99999999 is not a column \(0\.\.3\)",
    ),
    "negative split_feature": (  # once named the largest index, 2, not the bad one
        lambda t: _set(t, 0, "split_feature", "1 -7 2"),
        r"'split_feature' -7 is not a column \(0\.\.3\)",
    ),
    "left_child far out": (lambda t: _set(t, 0, "left_child", "7777 -1 -3"), "child index 7777"),
    "leaf index out": (lambda t: _set(t, 0, "right_child", "-99 2 -4"), "child index -99"),
    "child back to root": (lambda t: _set(t, 1, "left_child", "-1 0 -2"), "root node 0"),
    "two-node cycle": (lambda t: _set(t, 0, "left_child", "1 2 1"), r"two nodes|reaches"),
    "shared leaf": (lambda t: _set(t, 0, "left_child", "1 -1 -1"), "leaf is the child"),
    "huge num_leaves": (lambda t: _set(t, 0, "num_leaves", "1000000000"), "num_leaves"),
    "num_leaves larger than arrays": (lambda t: _set(t, 2, "num_leaves", "9"), "has 4 values"),
    "truncated tree": (_drop_tree_lines, r"tree 1: (no|'num_leaves')"),
    "wrong tree_sizes": (
        lambda t: re.sub(r"tree_sizes=(\d+)", r"tree_sizes=\g<1>0", t, count=1),
        "tree_sizes",
    ),
    "huge max_feature_idx": (
        lambda t: t.replace(f"max_feature_idx={N_COLUMNS - 1}", "max_feature_idx=99999999"),
        "max_feature_idx",
    ),
    "trees misnumbered": (lambda t: _resize(t.replace("Tree=2\n", "Tree=7\n")), "numbered"),
    "no end of trees": (lambda t: t.replace("end of trees", "end"), "truncated"),
    "non-numeric threshold": (lambda t: _set(t, 0, "threshold", "a b c"), "threshold"),
    "linear leaves": (lambda t: _set(t, 0, "is_linear", "1"), "linear"),
}


def test_a_real_model_passes_and_loads(good_text: str) -> None:
    import lightgbm as lgb

    text = check_booster_text(good_text.encode(), Path("m.txt"), N_COLUMNS)
    assert text == good_text
    assert lgb.Booster(model_str=text).num_trees() == 3


def test_the_column_count_must_match(good_text: str) -> None:
    with pytest.raises(ConfigError, match=r"m\.txt: .*reads 4 features, model.json lists 5"):
        check_booster_text(good_text.encode(), Path("m.txt"), N_COLUMNS + 1)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_texts_are_refused(good_text: str, case: str) -> None:
    mutate, fault = HOSTILE[case]
    bad = mutate(good_text)
    assert bad != good_text
    with pytest.raises(ConfigError, match=rf"^m\.txt: not a well-formed LightGBM model .*{fault}"):
        check_booster_text(bad.encode(), Path("m.txt"), N_COLUMNS)
    with pytest.raises(ConfigError, match=r"refusing to load$") as exc:
        check_booster_text(bad.encode(), Path("m.txt"), N_COLUMNS)
    assert "\n" not in str(exc.value)


def test_a_one_leaf_tree_passes(good_text: str) -> None:
    head, sep, rest = good_text.partition("Tree=2\n")
    tail = rest[rest.index("\n\n\n") :]
    one = _resize(head + sep + "num_leaves=1\nnum_cat=0\nleaf_value=0.5\nshrinkage=1" + tail)
    check_booster_text(one.encode(), Path("m.txt"), N_COLUMNS)


def test_lightgbms_own_one_leaf_tree_passes(good_text: str) -> None:
    """A tree that never split, as LightGBM writes it: ``leaf_weight=`` empty (once refused,
    which kept ``export`` from copying a run's boosters). Only a one-leaf tree may."""
    import lightgbm as lgb

    rng = np.random.default_rng(0)
    params = {"objective": "regression", "min_data_in_leaf": 100, "verbose": -1}
    booster = lgb.train(params, lgb.Dataset(rng.random((50, 3)), rng.random(50)), 2)
    text = str(booster.model_to_string())
    assert re.search(r"^leaf_weight=$", text, re.MULTILINE)  # what this test is about
    check_booster_text(text.encode(), Path("m.txt"), 3)
    emptied = _set(good_text, 0, "leaf_weight", "")
    with pytest.raises(ConfigError, match="'leaf_weight' has 0 values, expected 4"):
        check_booster_text(emptied.encode(), Path("m.txt"), N_COLUMNS)
