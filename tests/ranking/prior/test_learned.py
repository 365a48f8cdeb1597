"""The fitted prior a model carries: its JSON form and the design it scores with."""

from __future__ import annotations

import numpy as np
import pytest

from hpo.errors import ConfigError
from hpo.ranking.prior.learned import LearnedPrior, basis_design, has_own_prior


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


def test_the_design_takes_log_columns_back_to_bytes_and_caps_overflow() -> None:
    X = np.array([[np.log1p(99.0), 2.0], [1e6, 3.0]], dtype=np.float32)
    design = basis_design(X, [0, 0, 1], [False, True, False])
    assert design.dtype == np.float64
    np.testing.assert_allclose(design[0], [np.log1p(99.0), 99.0, 2.0], rtol=1e-6)
    assert np.isfinite(design).all()  # a huge log is capped, not inf


def test_only_the_random_layout_collections_have_weights_of_their_own() -> None:
    owners = ["layout:xla:random", "layout:nlp:random"]
    others = ["layout:xla:default", "layout:nlp:default", "tile:xla"]
    assert [has_own_prior(c) for c in owners + others] == [True, True, False, False, False]


def test_an_additive_prior_adds_the_bytes_up_and_says_so_in_json() -> None:
    """The additive estimate is the design times the weights; a prior saved before the key
    (no ``additive``) is the standardized one, and scores as it did."""
    X = np.log1p(np.array([[100.0, 1.0], [300.0, 2.0], [200.0, 40.0]])).astype(np.float32)
    bounds = np.array([0, 3])
    additive = LearnedPrior(("log_a", "log_b"), (True, True), np.array([1.0, 2.0]), additive=True)
    design = basis_design(X, [0, 1], [True, True])
    np.testing.assert_array_equal(additive.estimate(X, bounds, [0, 1]), design @ [1.0, 2.0])
    data = additive.to_dict()
    assert data["additive"] is True
    assert LearnedPrior.from_dict(data, "m.json").additive
    old = {k: v for k, v in data.items() if k != "additive"}  # a model from before
    standardized = LearnedPrior.from_dict(old, "m.json")
    assert not standardized.additive
    assert "additive" not in standardized.to_dict()  # written back as it was
    z = (design - design.mean(0)) / design.std(0)
    np.testing.assert_allclose(standardized.estimate(X, bounds, [0, 1]), z @ [1.0, 2.0])
    # added up, config 1's 200 more bytes of a outweigh config 2's 2 x 38 more of b;
    # standardized, b's larger relative change wins: the ratios between totals are lost
    assert np.argmax(additive.estimate(X, bounds, [0, 1])) == 1
    assert np.argmax(standardized.estimate(X, bounds, [0, 1])) == 2
    with pytest.raises(ConfigError, match=r"^m.json: malformed prior \('additive'"):
        LearnedPrior.from_dict({**data, "additive": "yes"}, "m.json")
    own = {"layout:xla:random": LearnedPrior.from_dict(old, "o").to_dict()}
    with pytest.raises(ConfigError, match="another basis than the family's"):
        LearnedPrior.from_dict({**data, "collections": own}, "m.json")


def test_an_additive_prior_of_log_columns_is_refused() -> None:
    data = LearnedPrior(("log_a",), (False,), np.ones(1)).to_dict()
    with pytest.raises(ConfigError, match=r"^m.json: malformed prior \(an additive prior reads"):
        LearnedPrior.from_dict({**data, "additive": True}, "m.json")


def test_a_doubt_share_round_trips_and_a_bad_one_is_one_line() -> None:
    """``doubt`` (a trial's collections blended at a share of their weight) is written only
    when there is one, read back, and checked: a layout collection and a share in (0, 1]."""
    prior = LearnedPrior(("log_a",), (True,), np.ones(1), doubt={"layout:nlp:random": 0.03})
    data = prior.to_dict()
    assert data["doubt"] == {"layout:nlp:random": 0.03}
    back = LearnedPrior.from_dict(data, "m.json")
    assert back.doubt == {"layout:nlp:random": 0.03}
    assert back.blend_weights({"layout:nlp:random": 100.0, "layout:xla:random": 2.0}) == {
        "layout:nlp:random": 3.0,
        "layout:xla:random": 2.0,
    }
    assert "doubt" not in LearnedPrior(("log_a",), (True,), np.ones(1)).to_dict()
    for bad in ({"tile:xla": 0.5}, {"layout:nlp:random": 0}, {"layout:nlp:random": 1.5},
                {"layout:nlp:random": True}, ["layout:nlp:random"]):  # fmt: skip
        with pytest.raises(ConfigError, match=r"^m.json: malformed prior \('doubt': expected"):
            LearnedPrior.from_dict({**data, "doubt": bad}, "m.json")
    with pytest.raises(ConfigError, match=r"'doubt': a collection also in 'off'"):
        LearnedPrior.from_dict({**data, "off": ["layout:nlp:random"]}, "m.json")


def test_chosen_shares_carry_over_to_another_fit_and_bad_ones_are_refused() -> None:
    chosen = LearnedPrior(
        ("log_a",), (True,), np.array([1.0]), off=frozenset({"layout:xla:default"}),
        doubt={"layout:nlp:random": 0.03},
    )  # fmt: skip
    shares = chosen.chosen_shares()
    assert shares == {"layout:xla:default": 0.0, "layout:nlp:random": 0.03}
    other = LearnedPrior(
        ("log_a",), (True,), np.array([2.0]), off=frozenset({"layout:nlp:default"})
    )
    kept = other.with_shares(shares)
    assert (kept.off, dict(kept.doubt)) == (
        frozenset({"layout:xla:default"}),
        {"layout:nlp:random": 0.03},
    )
    np.testing.assert_array_equal(kept.coef, other.coef)  # its own weights, the trial's shares
    assert other.with_shares({}).chosen_shares() == {}  # every collection whole
    assert other.with_shares({"layout:xla:random": 1.0}).chosen_shares() == {}
    for bad in (1.5, -0.1, True, "0.5", float("nan")):
        with pytest.raises(ConfigError, match=r"^blend shares: layout:xla:random: expected"):
            other.with_shares({"layout:xla:random": bad})
    with pytest.raises(ConfigError, match=r"^blend shares: tile:xla: expected a layout collection"):
        other.with_shares({"tile:xla": 0.0})  # model.json could not be read back


def test_combined_shares_keep_the_lower_median_of_the_fits_choices() -> None:
    x, n = "layout:xla:random", "layout:nlp:default"
    folds = [{x: 0.0}, {x: 0.03, n: 0.0}, {}]
    # xla:random chose 0, 0.03 and whole (1); nlp:default off once, whole twice
    assert LearnedPrior.combined_shares(folds) == {x: 0.03, n: 1.0}
    # an even count: the lower of the two middle ones, a share some fit chose
    assert LearnedPrior.combined_shares(folds[:2]) == {x: 0.0, n: 0.0}
    assert LearnedPrior.combined_shares([{}, {}]) == {}
