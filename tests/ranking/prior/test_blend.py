from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from hpo.errors import ConfigError
from hpo.ranking.prior.blend import (
    BLEND_KEY,
    DEFAULT_WEIGHT_KEY,
    ESTIMATE_COLUMN,
    WEIGHT_KEY,
    blend_scores,
    collection_weights,
    estimate_position,
    estimate_weight,
)


def _graphs(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two graphs of very different score and estimate scales."""
    rng = np.random.default_rng(seed)
    scores = np.r_[rng.normal(0, 1e-3, 40), rng.normal(50, 20, 60)]
    estimate = np.r_[rng.normal(10, 0.01, 40), rng.normal(20, 3, 60)]
    return scores, estimate, np.array([0, 40, 100])


def test_weight_zero_returns_the_scores() -> None:
    scores, estimate, bounds = _graphs()
    np.testing.assert_array_equal(blend_scores(scores, estimate, bounds, 0.0), scores)


def test_each_graph_is_blended_on_its_own_scale() -> None:
    scores, estimate, bounds = _graphs()
    joint = blend_scores(scores, estimate, bounds, 2.0)
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        alone = blend_scores(scores[a:b], estimate[a:b], None, 2.0)
        np.testing.assert_allclose(joint[a:b], alone)
        # standardized: rescaling one graph's scores and estimate changes nothing
        scaled = blend_scores(1e6 * scores[a:b], 1e-6 * estimate[a:b], None, 2.0)
        np.testing.assert_allclose(scaled, alone, rtol=1e-9, atol=1e-9)


def test_weight_moves_the_order_from_the_scores_to_the_estimate() -> None:
    scores, estimate, bounds = _graphs(1)
    a, b = bounds[1], bounds[2]
    small = blend_scores(scores, estimate, bounds, 1e-9)[a:b]
    large = blend_scores(scores, estimate, bounds, 1e9)[a:b]
    assert kendalltau(small, scores[a:b]).statistic == pytest.approx(1.0)
    assert kendalltau(large, estimate[a:b]).statistic == pytest.approx(1.0)
    assert kendalltau(large, scores[a:b]).statistic < 0.5  # they disagree: the test can fail


def test_a_graph_whose_estimate_does_not_vary_keeps_its_order() -> None:
    scores = np.array([3.0, 1.0, 2.0, 5.0])
    out = blend_scores(scores, np.full(4, 7.0), None, 4.0)
    assert np.all(np.isfinite(out))
    np.testing.assert_array_equal(np.argsort(out), np.argsort(scores))


def test_shapes_must_agree() -> None:
    with pytest.raises(ConfigError, match=r"^estimate: expected shape \(3,\), found \(2,\)$"):
        blend_scores(np.zeros(3), np.zeros(2), None, 1.0)


@pytest.mark.parametrize("value", [-1.0, float("nan"), "heavy", None, True, "3"])
def test_bad_weight_is_one_line(value: object) -> None:
    with pytest.raises(ConfigError, match=rf"^{WEIGHT_KEY}: expected a"):
        estimate_weight({WEIGHT_KEY: value})


def test_absent_weight_is_zero_so_old_runs_score_as_they_did() -> None:
    assert estimate_weight({"learning_rate": 0.1}) == 0.0
    assert estimate_weight({WEIGHT_KEY: 3}) == 3.0


def test_estimate_position() -> None:
    assert estimate_position(["a", ESTIMATE_COLUMN, "b"]) == 1
    assert estimate_position(["a", "b"]) is None


def test_a_one_row_graph_is_finite() -> None:
    out = blend_scores(
        np.array([2.0, 1.0, 3.0]), np.array([5.0, 1.0, 2.0]), np.array([0, 1, 3]), 2.0
    )
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("bounds", [[1, 3], [0, 2], [0, 2, 1, 3], [0]])
def test_bounds_that_do_not_cut_the_rows_are_one_line(bounds: list[int]) -> None:
    with pytest.raises(ConfigError, match=r"^bounds: "):
        blend_scores(np.zeros(3), np.arange(3.0), np.array(bounds), 1.0)


@pytest.mark.parametrize(
    ("hp", "weight"),
    [
        ({BLEND_KEY: False, WEIGHT_KEY: 3.0}, 0.0),
        ({BLEND_KEY: True, WEIGHT_KEY: 3.0}, 3.0),
        ({BLEND_KEY: "False", WEIGHT_KEY: 3.0}, 0.0),
        ({BLEND_KEY: np.bool_(True), WEIGHT_KEY: 2.0}, 2.0),
        ({WEIGHT_KEY: 3.0}, 3.0),  # runs and models made before the switch
        ({BLEND_KEY: True}, 0.0),
    ],
)
def test_the_switch_decides_before_the_weight(hp: dict, weight: float) -> None:
    assert estimate_weight(hp) == weight


def test_bad_switch_is_one_line() -> None:
    with pytest.raises(ConfigError, match=r"^estimate_blend: expected true or false, found 1"):
        estimate_weight({BLEND_KEY: 1, WEIGHT_KEY: 3.0})


def test_default_collections_have_their_own_weight_when_the_configuration_says_so() -> None:
    hp = {WEIGHT_KEY: 1.0, DEFAULT_WEIGHT_KEY: 3.0}
    layout = ["layout:xla:default", "layout:xla:random", "layout:nlp:default", "layout:nlp:random"]
    assert collection_weights(hp, layout) == {
        "layout:xla:default": 3.0,
        "layout:xla:random": 1.0,
        "layout:nlp:default": 3.0,
        "layout:nlp:random": 1.0,
    }
    assert estimate_weight(hp) == 1.0  # no collection: the family's weight
    assert estimate_weight(hp, "tile:xla") == 1.0
    # runs and models made before the key: one weight for every collection
    assert collection_weights({WEIGHT_KEY: 2.0}, layout) == dict.fromkeys(layout, 2.0)
    # the switch decides for both weights
    assert collection_weights({**hp, BLEND_KEY: False}, layout) == dict.fromkeys(layout, 0.0)


@pytest.mark.parametrize("value", [-1.0, float("nan"), "heavy", None, True])
def test_a_bad_default_collections_weight_is_one_line_whatever_the_collection(
    value: object,
) -> None:
    with pytest.raises(ConfigError, match=rf"^{DEFAULT_WEIGHT_KEY}: expected a"):
        estimate_weight({WEIGHT_KEY: 1.0, DEFAULT_WEIGHT_KEY: value}, "layout:xla:random")


def test_one_weight_per_graph_blends_each_graph_as_its_own_weight_would() -> None:
    scores, estimate, bounds = _graphs()
    both = blend_scores(scores, estimate, bounds, np.array([0.5, 4.0]))
    first = blend_scores(scores[:40], estimate[:40], None, 0.5)
    second = blend_scores(scores[40:], estimate[40:], None, 4.0)
    np.testing.assert_allclose(both, np.r_[first, second])
    np.testing.assert_array_equal(blend_scores(scores, estimate, bounds, np.zeros(2)), scores)
    # a graph at weight 0 keeps its own scores, as a model at weight 0 gives them
    np.testing.assert_array_equal(
        blend_scores(scores, estimate, bounds, np.array([0.0, 4.0]))[:40], scores[:40]
    )
    with pytest.raises(ConfigError, match=r"^weight: expected one per graph \(2\), found \(3,\)$"):
        blend_scores(scores, estimate, bounds, np.ones(3))
