"""bench/bench_laws.py: roots of one law, judging the default on unseen graphs, the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_modules import load_bench

from hpo.ranking.spaces import load_space
from hpo.synth.law_family import draw_law, read_law


def test_summary_median_worst_and_loss_against_the_better_setting() -> None:
    bench = load_bench("bench_laws")
    layout = bench.LAYOUT

    def shares(off: float, on: float) -> dict:
        return {"shares": {"off": dict.fromkeys(layout, off), "on w=1": dict.fromkeys(layout, on)}}

    results = {"a": shares(0.9, 0.95), "b": shares(0.8, 0.7), "c": shares(0.99, 0.97)}
    summary = bench.summarize(results, "on w=1")
    assert summary["median"]["off"][layout[0]] == pytest.approx(0.9)
    assert summary["worst"]["on w=1"][layout[0]] == pytest.approx(0.7)
    assert summary["max_loss"]["on w=1"][layout[0]] == pytest.approx(0.1)  # law b
    assert summary["max_loss"]["off"][layout[0]] == pytest.approx(0.05)  # law a


def test_one_random_law_end_to_end_on_tiny(tmp_path: Path) -> None:
    bench = load_bench("bench_laws")
    tuning, unseen = bench.law_roots(tmp_path, "4", "tiny")
    assert read_law(tuning) == read_law(unseen) == draw_law(4)
    again = bench.law_roots(tmp_path, "4", "tiny")  # kept, not generated again
    assert again == (tuning, unseen)
    hp = dict(load_space("lambdarank_small").get_default_configuration())
    out = bench.judge_law(
        tuning, unseen, hp, [27.0, 100.0], rounds=5, threads=1, jobs=1, cache_dir=tmp_path / "cache"
    )
    assert set(out["shares"]) == {
        "off",
        "default",
        "on w=27",
        "on w=100",
        "prior only",
        "written w=3",
        "valid-chosen",
    }
    for c in bench.LAYOUT:  # the setting best on the tuning root's valid split, per collection
        assert out["valid"][out["chosen"][c]][c] == max(
            v[c] for k, v in out["valid"].items() if k != "written w=3"
        )
        assert out["chosen"][c] != "written w=3"
        assert out["shares"]["valid-chosen"][c] == out["shares"][out["chosen"][c]][c]
    for shares in out["shares"].values():
        assert set(shares) == set(bench.LAYOUT)
        assert all(-1.5 < v < 1.5 for v in shares.values())
    assert out["shares"]["off"] != out["shares"]["on w=100"]  # the prior reorders configs
    for c in bench.LAYOUT:  # the default: weight 27 on the default collections, 100 on the random
        weight = "on w=27" if c.endswith(":default") else "on w=100"
        assert out["shares"]["default"][c] == pytest.approx(out["shares"][weight][c], abs=1e-12)
    for c in bench.LAYOUT:  # an order cannot leave the pairs of equal cost out of its count
        kept = out["ceiling"][c] / out["tau_b_ceiling"][c]
        # the default collections hold many configs the law prices alike (duplicates, and
        # changes it does not price), the random ones few (duplicates on small graphs)
        assert kept < 0.97 if "default" in c else 0.99 < kept <= 1.0 + 1e-12


def test_tile_only_scores_every_laws_roots(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bench = load_bench("bench_laws")
    out = tmp_path / "tile.json"
    argv = ["bench_laws.py", "--work", str(tmp_path), "--laws", "first-order,4", "--scale",
            "tiny", "--space", "lambdarank_small", "--rounds", "5", "--tile-only",
            "--json", str(out)]  # fmt: skip
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.argv", argv)
        bench.main()
    record = json.loads(out.read_text())
    assert set(record["tile"]) == {"first-order", "4"}
    assert all(-10 < v <= 1 for v in record["tile"].values())
    assert "median" in capsys.readouterr().out
