"""bench/bench_feature_group.py: one group on and off over a law's unseen graphs."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_modules import load_bench


def test_a_prior_only_group_keeps_the_trees_and_changes_the_prior(tmp_path: Path) -> None:
    """The kernel columns only the prior reads: on and off share the trees (one training),
    and the priors differ on a law whose graphs have convolution kernels."""
    bench = load_bench("bench_feature_group")
    out = bench.judge("4", tmp_path, "kernel_padding", rounds=5, seed=0, scale="tiny")
    shares = out["shares"]
    states = ("", ", default x3", ", trees", ", prior")
    assert set(shares) == {f"{s}{x}" for s in ("on", "off") for x in states}
    assert shares["on, trees"] == shares["off, trees"]
    assert shares["on, prior"] != shares["off, prior"]
    for values in shares.values():
        assert set(values) == set(bench.LAYOUT)
        assert all(-1.5 < v < 1.5 for v in values.values())


def test_the_summary_measures_losses_against_the_settings_before(
    capsys: pytest.CaptureFixture,
) -> None:
    bench = load_bench("bench_prior_columns")
    layout = bench.LAYOUT

    def law(off: float, on: float) -> dict:
        return {"shares": {"off": dict.fromkeys(layout, off), "on": dict.fromkeys(layout, on)}}

    bench.summarize({"a": law(0.9, 0.8), "b": law(0.5, 0.7)}, before=("off", "off"))
    lines = capsys.readouterr().out.splitlines()
    loss = next(line for line in lines if line.startswith("on largest loss"))
    assert loss.split()[-1] == "0.1000"  # law a: 0.9 before, 0.8 after
    median = next(line for line in lines if line.startswith("on median"))
    assert median.split()[-1] == "0.7500"
