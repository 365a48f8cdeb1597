"""``hpo run --per``, ``hpo runs ...`` and ``export``/``predict`` on per-subset runs, via
``hpo.cli.main``: with a toy objective (fast), and once end to end on the tiny dataset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from graphs import write_toy_root
from toy_objectives import ToyObjective

import hpo.campaign.objective
from hpo.cli import main
from hpo.data.load import COLLECTIONS, list_graphs


@pytest.fixture
def toy_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Path:
    """A finished ``--per collection`` run 'pc' over tile:xla and layout:xla:default."""
    root = tmp_path / "data"
    write_toy_root(root, ("tile/xla", "layout/xla/default"))

    def build(cfg: Any, progress: Any = None, **_: Any) -> tuple[Any, None]:
        return ToyObjective(), None

    monkeypatch.setattr(hpo.campaign.objective, "build_objective", build)
    runs = tmp_path / "runs"
    argv = [
        "run", "--data", str(root), "--runs-dir", str(runs), "--name", "pc", "--quiet",
        "--collection", "tile:xla,layout:xla:default", "--per", "collection",
        "--space", "lambdarank_small", "--min-budget", "1", "--max-budget", "9", "--trials", "4",
        "--optimizer", "random-hb",
    ]  # fmt: skip
    assert main(argv) == 0
    return runs


def test_runs_commands_show_each_subset_and_the_combined_score(
    toy_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = capsys.readouterr().out
    assert "subset 1/2 'tile-xla'" in out
    assert "combined score (mean over collections):" in out
    assert main(["runs", "show", "pc", "--runs-dir", str(toy_run), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["per"], list(shown["subsets"])) == (
        "collection",
        ["tile-xla", "layout-xla-default"],
    )
    tile = shown["subsets"]["tile-xla"]
    assert tile["incumbent"]["metrics"]["tile:xla"] == shown["metrics"]["tile:xla"]
    assert tile["trajectory"]
    assert shown["score"] == pytest.approx(sum(shown["metrics"].values()) / 2)
    assert main(["runs", "show", "pc", "--runs-dir", str(toy_run)]) == 0
    text = capsys.readouterr().out
    assert "layout-xla-default" in text
    assert f"{shown['score']:.4f}" in text
    assert main(["runs", "list", "--runs-dir", str(toy_run)]) == 0
    assert "pc/tile-xla" in capsys.readouterr().out
    png = tmp_path / "cmp.png"
    assert main(["runs", "compare", "pc", "--runs-dir", str(toy_run), "--out", str(png)]) == 0
    assert main(["runs", "plot", "pc", "--runs-dir", str(toy_run)]) == 0
    assert png.is_file()
    assert (toy_run / "pc" / "run.png").is_file()


def test_resume_of_a_finished_per_subset_run_runs_nothing(
    toy_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (toy_run / "pc" / "tile-xla" / "trials.jsonl").read_bytes()
    assert main(["run", "--resume", "pc", "--runs-dir", str(toy_run), "--quiet"]) == 0
    assert "has already finished" in capsys.readouterr().out
    assert (toy_run / "pc" / "tile-xla" / "trials.jsonl").read_bytes() == before
    # a subset alone is not extended: the run shares its limits among its subsets
    argv = ["run", "--resume", "tile-xla", "--runs-dir", str(toy_run / "pc"), "--trials", "99"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "'tile-xla' is a subset of the per-subset run 'pc'" in err
    assert f"hpo run --runs-dir {toy_run} --resume pc" in err
    assert (toy_run / "pc" / "tile-xla" / "trials.jsonl").read_bytes() == before


@pytest.mark.slow
def test_per_collection_run_export_predict_end_to_end(
    tiny_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """All five collections, one tuned ranker each, one model folder, one submission."""
    runs, model, csv = tmp_path / "runs", tmp_path / "model", tmp_path / "submission.csv"
    argv = [
        "run", "--data", str(tiny_root), "--runs-dir", str(runs), "--name", "pc", "--quiet",
        "--collection", "all", "--per", "collection", "--optimizer", "random", "--trials", "2",
        "--min-budget", "2", "--max-budget", "8", "--cache-dir", str(tmp_path / "cache"),
    ]  # fmt: skip
    assert main(argv) == 0
    shown = json.loads((runs / "pc" / "result.json").read_text())
    assert set(shown["metrics"]) == set(COLLECTIONS)
    assert main(["export", "pc", "--runs-dir", str(runs), "--out", str(model)]) == 0
    meta = json.loads((model / "model.json").read_text())
    assert (meta["format"], len(meta["subsets"])) == (2, 5)
    # the copied boosters score on valid exactly what the campaign recorded
    assert meta["validation"]["max_abs_difference"] == pytest.approx(0.0, abs=1e-9)
    assert meta["validation"]["score"] == pytest.approx(shown["score"])
    argv = ["predict", "--model", str(model), "--data", str(tiny_root), "--out", str(csv)]
    assert main(argv) == 0
    ids = [line.split(",")[0] for line in csv.read_text().splitlines()[1:]]
    expected = [f"{c}:{p.stem}" for c in COLLECTIONS for p in list_graphs(tiny_root, c, "test")]
    assert ids == expected
