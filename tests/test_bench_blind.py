"""bench/bench_blind.py's default mode on a tiny blind root: unseen shares, and with
``--train-graphs-too`` the shares of the graphs the model was trained on."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from bench_modules import load_bench


def _shares(
    bench: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *flags: str,
    out: str = "out",
) -> dict[str, dict[str, float]]:
    """The shares ``bench_blind.py --mode default`` records for blind_01 at the tiny scale
    and 20 rounds, with ``flags`` (its JSON record in ``tmp_path/<out>.json``)."""
    record = tmp_path / f"{out}.json"
    argv = ["bench_blind.py", "--work", str(tmp_path), "--laws", "blind_01", "--scale", "tiny",
            "--rounds", "20", "--threads", "1", "--json", str(record), *flags]  # fmt: skip
    monkeypatch.setattr(sys, "argv", argv)
    bench.main()
    return json.loads(record.read_text())["results"]["blind_01"]["shares"]


def test_default_mode_scores_unseen_and_trained_graphs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_bench("bench_blind")
    shares = _shares(bench, tmp_path, monkeypatch, "--family", "layout", "--train-graphs-too")
    assert set(shares) == {"as set", "as set, train graphs"}
    for label in shares:
        assert shares[label]
        assert set(shares[label]) <= set(bench.LAYOUT)
        # a share of the ceiling is a tau over a tau: finite, and far from these bounds on
        # any root a law writes
        assert all(-1.5 < v < 3.0 for v in shares[label].values())
    # the trained graphs are fitted at least as well as unseen ones on some collection
    fitted, unseen = shares["as set, train graphs"], shares["as set"]
    assert any(fitted[c] > unseen[c] for c in fitted if c in unseen)
    assert "train graphs" in capsys.readouterr().out


def test_per_collection_trains_a_model_per_layout_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each collection's shares come from its own model, so they differ from the joint one's
    (the joint model is trained on every collection's rows at once)."""
    bench = load_bench("bench_blind")
    shares = {}
    for flag in ([], ["--per-collection"]):
        run = _shares(
            bench, tmp_path, monkeypatch, "--family", "layout", *flag, out=f"o{len(flag)}"
        )
        shares[len(flag)] = run["as set"]
    assert set(shares[0]) == set(shares[1]) == set(bench.LAYOUT)
    assert shares[0] != shares[1]


def test_bag_scores_each_seed_and_their_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--bag 2``: the default at the next seed alone, and the two averaged; the average's
    scores are the mean of its members' (so its share is not one member's by construction)."""
    bench = load_bench("bench_blind")
    shares = _shares(bench, tmp_path, monkeypatch, "--family", "tile", "--bag", "2")
    assert set(shares) == {"as set", "seed 1", "bag of 2"}
    assert all(set(s) == {"tile:xla"} for s in shares.values())

    class Fixed:
        def __init__(self, value: float) -> None:
            self.value = value

        def predict(self, X: object) -> list[float]:
            return [self.value, 2 * self.value]

    mean = bench.MeanRanker([Fixed(1.0), Fixed(3.0)]).predict(None)
    assert list(mean) == [2.0, 4.0]


def test_campaign_runs_are_named_after_their_tuning_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A finished run of the same name is reused, so the roots ``law_root`` makes for other
    graphs factors, scales or data seeds, and other seeds or walltimes, must not share one."""
    bench = load_bench("bench_blind")

    def generate(cmd: list[str], **_: object) -> None:  # the law's script, without its work
        Path(cmd[cmd.index("--out") + 1]).mkdir(parents=True)

    monkeypatch.setattr(bench.subprocess, "run", generate)
    roots = [
        bench.law_root(tmp_path, "blind_01", seed, scale, factor)
        for seed, scale, factor in (
            (1, "small", 1.0),
            (1, "small", 3.0),
            (1, "tiny", 1.0),
            (2, "small", 1.0),
        )
    ]
    names = {bench.run_name(root, 0, "4m") for root in roots}
    assert len(names) == 4
    assert bench.run_name(roots[0], 0, "4m") != bench.run_name(roots[0], 1, "4m")
    assert bench.run_name(roots[0], 0, "4m") != bench.run_name(roots[0], 0, "30m")


def test_summary_lists_laws_without_a_model_apart_from_the_medians() -> None:
    """A campaign that ended with no incumbent has no shares: it is named under the tables,
    and the medians are those of the laws that have a model."""
    bench = load_bench("bench_blind")
    c = bench.COLLECTIONS[1]
    results = {
        "blind_01": {"shares": {"export": {c: 0.8}}},
        "blind_02": {"shares": {"export": {c: 0.6}}},
        "blind_03": {"shares": {}, "no_model": "TrialCut: stopped at boosting round 5 of 9"},
    }
    lines = bench.summary(results)
    assert lines[-1] == "no model: blind_03 (TrialCut: stopped at boosting round 5 of 9)"
    median = next(line for line in lines if line.startswith("| **median**"))
    assert "0.700" in median
    assert not any(line.startswith("| blind_03") for line in lines)


def test_valid_too_trains_on_the_valid_graphs_as_well(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--valid-too``: a second model trained on train and valid, blended as the train-only
    trial chose and as chosen again on the graphs it trained on; more graphs make another
    model."""
    bench = load_bench("bench_blind")
    shares = _shares(bench, tmp_path, monkeypatch, "--family", "layout", "--valid-too")
    assert set(shares) == {"as set", "train+valid", "train+valid, chosen again"}
    assert all(set(s) == set(bench.LAYOUT) for s in shares.values())
    assert shares["train+valid"] != shares["as set"]


def test_cells_moved_counts_beyond_a_thousandth_either_way() -> None:
    bench = load_bench("bench_blind")
    line = bench.cells_moved([0.0005, 0.002, -0.003, -0.001, 0.024])
    assert line == "better on 2, worse on 1 of 5 cells (-0.003 to +0.024)"
