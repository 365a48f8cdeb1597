"""The learned cost prior: its basis, per-graph standardization, the ridge and its JSON form."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import kendalltau

from hpo.errors import ConfigError
from hpo.ranking.prior import LearnedPrior, fit_prior, prior_basis, standardize_within


def test_basis_skips_relative_columns_and_adds_linear_twins_of_logs() -> None:
    names = ["log_bytes", "n_copies", "log_bytes_dmed", "n_copies_prank", "est_log_total_bytes"]
    positions, linear = prior_basis(names)
    assert positions == (0, 0, 1, 4, 4)
    assert linear == (False, True, False, False, True)


def test_standardize_within_each_graph() -> None:
    x = np.array([[1.0, 5.0], [3.0, 5.0], [10.0, 7.0], [30.0, 7.0], [50.0, 7.0]])
    z = standardize_within(x, np.array([0, 2, 5]))
    np.testing.assert_allclose(z[:2, 0], [-1.0, 1.0])
    np.testing.assert_allclose(z[2:, 0].mean(), 0.0, atol=1e-12)
    np.testing.assert_allclose(z[2:, 0].std(), 1.0)
    np.testing.assert_array_equal(z[:, 1], 0.0)  # does not vary inside a graph: no signal


def _graphs(rng: np.random.Generator, weights: np.ndarray, n_graphs: int = 12):
    """Graphs whose runtime is a linear sum of byte totals (logged in the columns)."""
    sizes = rng.integers(20, 60, n_graphs)
    bounds = np.r_[0, np.cumsum(sizes)]
    scale = np.repeat(10 ** rng.uniform(3, 8, n_graphs), sizes)  # every graph its own scale
    bytes_ = rng.uniform(1.0, 2.0, (bounds[-1], len(weights))) * scale[:, None]
    runtime = 5 * scale + bytes_ @ weights
    X = np.column_stack([np.log1p(bytes_), rng.normal(size=bounds[-1])]).astype(np.float32)
    names = [f"log_b{i}" for i in range(len(weights))] + ["noise"]
    return X, runtime, bounds, names


def test_fit_learns_the_weights_of_a_law_it_was_not_told() -> None:
    rng = np.random.default_rng(0)
    weights = np.array([3.0, 0.2, 1.0])
    X, runtime, bounds, names = _graphs(rng, weights)
    prior = fit_prior(X, runtime, bounds, names)
    assert prior is not None
    Xt, rt, bt, _ = _graphs(np.random.default_rng(1), weights)  # unseen graphs
    estimate = prior.estimate(Xt, bt, prior.positions_in(names, "test"))
    taus = [
        kendalltau(estimate[a:b], rt[a:b]).statistic for a, b in zip(bt[:-1], bt[1:], strict=True)
    ]
    assert np.mean(taus) > 0.85
    # the same data under another law gets other weights: nothing is read off a constant
    X2, runtime2, _, _ = _graphs(np.random.default_rng(0), np.array([0.2, 3.0, 1.0]))
    other = fit_prior(X2, runtime2, bounds, names)
    assert other is not None
    assert not np.allclose(other.coef, prior.coef)


def test_nothing_to_learn_gives_no_prior() -> None:
    X = np.ones((6, 2), dtype=np.float32)
    assert fit_prior(X, np.full(6, 3.0), np.array([0, 3, 6]), ["log_a", "b"]) is None
    assert fit_prior(X[:0], np.zeros(0), np.array([0]), ["log_a", "b"]) is None


def test_prior_json_round_trip_and_one_line_errors() -> None:
    prior = LearnedPrior(("log_a", "b"), (True, False), np.array([0.5, -1.25]))
    back = LearnedPrior.from_dict(prior.to_dict(), "m.json")
    assert back.names == prior.names
    assert back.linear == prior.linear
    np.testing.assert_array_equal(back.coef, prior.coef)
    with pytest.raises(ConfigError, match=r"^m.json: malformed prior \(2 names, 2 flags, 1"):
        LearnedPrior.from_dict({**prior.to_dict(), "coef": [1.0]}, "m.json")
    with pytest.raises(ConfigError, match=r"^m.json: malformed prior"):
        LearnedPrior.from_dict([1, 2], "m.json")
    with pytest.raises(ConfigError, match="the prior reads column 'b' the model lacks"):
        prior.positions_in(["log_a"], "m.json")
