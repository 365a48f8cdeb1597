"""bench/bench_laws_campaign.py: one law's campaign and export on tiny data, the summary."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from bench_modules import load_bench


def test_summary_against_the_default_of_bench_laws() -> None:
    bench = load_bench("bench_laws_campaign")
    layout = bench.LAYOUT

    def run(share: float, gain: float) -> dict:
        return {"unseen_share": dict.fromkeys(layout, share), "valid": {"gain": gain}}

    def default(share: float) -> dict:
        return {
            "shares": {"off": dict.fromkeys(layout, 0.0), "on w=1": dict.fromkeys(layout, share)}
        }

    results = {"a": run(0.9, 0.01), "b": run(0.7, -0.02), "c": run(0.95, 0.0)}
    base = {"a": default(0.8), "b": default(0.75), "c": default(0.9)}
    summary = bench.summarize(results, base, "on w=1")
    assert summary["default_label"] == "on w=1"
    with pytest.raises(SystemExit, match="no 'default' in the JSON"):
        bench.summarize(results, base)
    assert summary["export_median"][layout[0]] == pytest.approx(0.9)
    assert summary["export_worst"][layout[0]] == pytest.approx(0.7)
    assert summary["default_worst"][layout[0]] == pytest.approx(0.75)
    # per law export minus default: 0.1, -0.05, 0.05 -> median 0.05
    assert summary["export_minus_default_median"][layout[0]] == pytest.approx(0.05)
    assert summary["valid_gain_median"] == pytest.approx(0.0)
    assert summary["valid_gain_positive"] == 1


def _tiny_args(work: Path, extra: list[str], within: float) -> argparse.Namespace:
    """The benchmark's arguments for one tiny law, with an ensemble of 3."""
    return argparse.Namespace(
        work=work, scale="tiny", walltime="5m", seed=0, extra=extra, ensemble=3,
        ensemble_within=within,
    )  # fmt: skip


def test_one_law_campaign_export_and_unseen_shares(tmp_path: Path) -> None:
    bench = load_bench("bench_laws_campaign")
    extra = ["--trials", "2", "--min-budget", "4", "--max-budget", "8", "--train-configs", "40"]
    args = _tiny_args(tmp_path, extra, within=0.01)
    out = bench.judge_campaign("3", args)
    assert out["trials"] >= 1
    assert out["valid"]["gain"] == pytest.approx(
        out["valid"]["incumbent"] - out["valid"]["baseline"]
    )
    assert set(out["unseen_share"]) == set(bench.LAYOUT)
    assert all(-1.5 < v < 1.5 and v != 0 for v in out["unseen_share"].values())
    assert (tmp_path / "models" / "law-3-s0" / "model.json").is_file()
    # two trials: only the baseline reaches the largest budget, so the ensemble is refused and
    # the user's model is the incumbent export, counted as such
    ens = out["ensemble"]
    assert ens["refused"] is not None
    assert "only 1 configuration qualifies" in ens["refused"]
    assert ens["valid_gain"] == out["valid"]["gain"]
    assert ens["unseen_share"] == out["unseen_share"]
    again = bench.judge_campaign("3", args)  # the finished run is kept, not run again
    assert again["unseen_share"] == out["unseen_share"]


def test_one_law_ensemble_formed_and_scored(tmp_path: Path) -> None:
    bench = load_bench("bench_laws_campaign")
    # the finishing phase takes 2 more configurations to the largest budget; any score joins
    extra = ["--trials", "6", "--min-budget", "4", "--max-budget", "8", "--train-configs", "40",
             "--finish", "2"]  # fmt: skip
    args = _tiny_args(tmp_path, extra, within=float("inf"))
    out = bench.judge_campaign("3", args)
    ens = out["ensemble"]
    assert ens["refused"] is None
    assert ens["k"] == 3
    assert [m["budget"] for m in ens["members"]] == [8.0, 8.0, 8.0]
    assert ens["members"][0]["trial"] == out["incumbent"]["trial"]
    meta = json.loads((tmp_path / "models" / "law-3-s0-ens3" / "model.json").read_text())
    assert ens["valid"] == meta["validation"]["score"]
    assert ens["valid_gain"] == pytest.approx(ens["valid"] - out["valid"]["baseline"])
    assert set(ens["unseen_share"]) == set(bench.LAYOUT)
    assert ens["unseen_share"] != out["unseen_share"]  # another model was scored


def test_ensemble_summary_against_baseline_and_incumbent() -> None:
    bench = load_bench("bench_laws_campaign")
    layout = bench.LAYOUT

    def law(inc: float, ens: float, gain: float, refused: bool = False) -> dict:
        return {
            "unseen_share": dict.fromkeys(layout, inc),
            "ensemble": {
                "refused": "only 1" if refused else None,
                "valid_gain": gain,
                "unseen_share": dict.fromkeys(layout, ens),
            },
        }

    results = {
        "a": law(0.9, 0.92, 0.002),
        "b": law(0.6, 0.57, -0.001),
        "c": law(0.7, 0.7, 0.0, True),
    }
    summary = bench.summarize_ensembles(results)
    assert summary["formed"] == 2
    assert summary["valid_gain_median"] == pytest.approx(0.0)
    assert summary["valid_gain_positive"] == 1
    assert summary["unseen_minus_incumbent"] == pytest.approx([0.02, -0.03, 0.0])
    assert summary["unseen_minus_incumbent_median"] == pytest.approx(0.0)
    assert summary["ensemble_median"][layout[0]] == pytest.approx(0.7)
    assert summary["ensemble_worst"][layout[0]] == pytest.approx(0.57)
    # the ensemble's worst (0.57, law b) against the incumbent export's worst (0.6, law b)
    assert summary["worst_minus_incumbent_worst"][layout[0]] == pytest.approx(-0.03)
