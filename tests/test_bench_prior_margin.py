"""bench/bench_prior_margin.py's report: each margin's choice of prior on or off per collection."""

from __future__ import annotations

from bench_modules import load_bench


def _law(valid_gain: list[float], unseen_on: float, unseen_off: float) -> dict:
    collections = load_bench("bench_blind").LAYOUT
    off = [[c, f"g{i}", 0.5, 10, True] for c in collections for i in range(len(valid_gain))]
    on = [[c, f"g{i}", 0.5 + g, 10, True] for c in collections for i, g in enumerate(valid_gain)]
    return {
        "valid": {"on": on, "off": off},
        "unseen": {
            "on": dict.fromkeys(collections, unseen_on),
            "off": dict.fromkeys(collections, unseen_off),
        },
    }


def test_a_noisy_gain_on_valid_keeps_the_prior_only_at_margin_zero() -> None:
    bench = load_bench("bench_prior_margin")
    # mean gain 0.01 from one graph (half a standard error 0.0106), and unseen graphs want off
    results = {"noisy": _law([0.07, -0.02, -0.02, 0.01], unseen_on=0.6, unseen_off=0.7)}
    lines = bench.report(results, [0.0, 0.5])
    assert lines[2].startswith("| 0 | 0.600 / 0.600 / 0.600 / 0.600 |")
    assert lines[2].endswith("| 0.100 | 4, 0 of 4 |")
    assert lines[3].startswith("| 0.5 | 0.700 / 0.700 / 0.700 / 0.700 |")
    assert lines[3].endswith("| 0.000 | 0, 0 of 4 |")


def test_a_weight_scale_is_judged_on_its_own_scores() -> None:
    bench = load_bench("bench_prior_margin")
    law = _law([0.07, -0.02, -0.02, 0.01], unseen_on=0.6, unseen_off=0.7)
    # at half the weights the prior gains on every valid graph and on unseen graphs
    scaled = _law([0.02, 0.03, 0.02, 0.03], unseen_on=0.8, unseen_off=0.7)
    law["valid"]["on@0.5"] = scaled["valid"]["on"]
    law["unseen"]["on@0.5"] = scaled["unseen"]["on"]
    lines = bench.report({"law": law}, [0.5], scale=0.5)
    shares = " / ".join(["0.800"] * 4)
    assert lines[2] == f"| 0.5 | {shares} | {shares} | 0.000 | 4, 0 of 4 |"
    assert bench.report({"law": law}, [0.5])[2].endswith("| 0.000 | 0, 0 of 4 |")


def test_a_doubt_blends_where_the_gain_is_within_the_margin_either_way() -> None:
    """With a doubt share, the collections whose valid gain is within the margin of 0 are
    scored by the prior at that share of the weights; decided ones stay on or off."""
    bench = load_bench("bench_prior_margin")
    law = _law([0.07, -0.02, -0.02, 0.01], unseen_on=0.6, unseen_off=0.7)  # t = 0.47
    law["unseen"]["on@0.03"] = dict.fromkeys(law["unseen"]["on"], 0.75)
    lines = bench.report({"law": law}, [0.5, 0.0], doubt=0.03)
    shares = " / ".join(["0.750"] * 4)
    # above both on and off: no loss; 4 collections at a share
    assert lines[2] == f"| 0.5, doubt 0.03 | {shares} | {shares} | 0.000 | 0, 4 of 4 |"
    assert lines[3].endswith("| 0.100 | 4, 0 of 4 |")  # margin 0: no band, kept whole


def test_per_law_gives_each_law_its_rule_s_scores_and_marks_the_prior() -> None:
    bench = load_bench("bench_prior_margin")
    doubted = _law([0.07, -0.02, -0.02, 0.01], unseen_on=0.6, unseen_off=0.7)  # t = 0.47
    doubted["unseen"]["on@0.03"] = dict.fromkeys(doubted["unseen"]["on"], 0.75)
    kept = _law([0.02, 0.03, 0.02, 0.03], unseen_on=0.8, unseen_off=0.7)
    lines = bench.per_law({"a": doubted, "b": kept}, 0.5, 0.03)
    assert lines[2] == "| a | " + " | ".join(["0.750~"] * 4) + " |"
    assert lines[3] == "| b | " + " | ".join(["0.800*"] * 4) + " |"
    # without a doubt share the band is off
    assert bench.per_law({"a": doubted}, 0.5, 0)[2] == "| a | " + " | ".join(["0.700"] * 4) + " |"
    # a share whose scores were not judged is a dash, not a KeyError (the defaults: 0.5, 0.03)
    del doubted["unseen"]["on@0.03"]
    assert bench.per_law({"a": doubted})[2] == "| a | " + " | ".join(["-"] * 4) + " |"
