"""The pure parts of bench/bench_per_subset.py: gap rows and the summary table."""

from __future__ import annotations

import argparse

import pytest
from bench_modules import load_bench


def test_gap_is_selection_minus_unseen_with_an_overall_row() -> None:
    bench = load_bench("bench_per_subset")
    rows = bench.gap_rows("family", 0, {"tile:xla": 0.9, "layout:xla:default": 0.5},
                          {"tile:xla": 0.7, "layout:xla:default": 0.6})  # fmt: skip
    by = {r["collection"]: r for r in rows}
    assert by["tile:xla"]["gap"] == pytest.approx(0.2)
    assert by["layout:xla:default"]["gap"] == pytest.approx(-0.1)
    assert by["overall"]["selection"] == pytest.approx(0.7)
    assert by["overall"]["unseen"] == pytest.approx(0.65)
    # a collection without a selection score has no gap and no overall row
    partial = bench.gap_rows(
        "none", 0, {"tile:xla": 0.9}, {"tile:xla": 0.7, "layout:xla:default": 0.6}
    )
    assert [r["collection"] for r in partial] == ["tile:xla", "layout:xla:default"]
    assert partial[1]["gap"] is None


def test_summary_averages_over_seeds_in_mode_order() -> None:
    bench = load_bench("bench_per_subset")
    rows = [
        *bench.gap_rows("collection", 0, {"tile:xla": 1.0}, {"tile:xla": 0.5}),
        *bench.gap_rows("collection", 1, {"tile:xla": 0.8}, {"tile:xla": 0.7}),
        *bench.gap_rows("none", 0, {"tile:xla": 0.6}, {"tile:xla": 0.6}),
    ]
    lines = bench.summary_table(rows).splitlines()
    assert lines[2] == "| none | overall | 0.6000 | 0.6000 | 0.0000 | 1 |"
    assert "| collection | tile:xla | 0.9000 | 0.6000 | 0.3000 | 2 |" in lines


def test_modes_combine_a_per_mode_with_folds() -> None:
    bench = load_bench("bench_per_subset")
    assert bench.parse_mode("collection+cv5") == ("collection", 5)
    assert bench.parse_mode("none") == ("none", 0)
    assert bench.parse_modes("none, none+cv3,family") == ["none", "none+cv3", "family"]
    with pytest.raises(argparse.ArgumentTypeError, match="optionally with \\+cvK"):
        bench.parse_mode("collection+5")
    rows = [
        *bench.gap_rows("none+cv3", 0, {"tile:xla": 0.5}, {"tile:xla": 0.5}),
        *bench.gap_rows("none", 0, {"tile:xla": 0.6}, {"tile:xla": 0.6}),
    ]
    modes = [line.split(" | ")[0] for line in bench.summary_table(rows).splitlines()[2:]]
    assert modes == ["| none"] * 2 + ["| none+cv3"] * 2


def test_unseen_means_pool_every_graph_of_a_collection() -> None:
    bench = load_bench("bench_per_subset")
    graphs = [
        {"collection": "tile:xla", "metric": 0.5},
        {"collection": "layout:xla:random", "metric": 0.2},
        {"collection": "layout:xla:random", "metric": 0.4},
        {"collection": "layout:xla:random", "metric": 0.9},
    ]
    means = bench.unseen_means(graphs)
    assert means == {"tile:xla": pytest.approx(0.5), "layout:xla:random": pytest.approx(0.5)}
