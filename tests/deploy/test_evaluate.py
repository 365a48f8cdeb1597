from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from fake_runs import FAKE_COLLECTIONS, build_fake_run

from hpo.deploy.evaluate import evaluate_model, graph_metrics
from hpo.deploy.export import export_model
from hpo.deploy.model import ExportedModel, load_model
from hpo.deploy.retrain import ExportOptions
from hpo.errors import UsageError
from hpo.ranking.scoring.metrics import kendall_tau, tile_score, topk_error


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory, tiny_root: Path) -> ExportedModel:
    base = tmp_path_factory.mktemp("evaluate")
    run_dir = build_fake_run(base / "runs", tiny_root)
    return load_model(
        export_model(run_dir, base / "model", retrain=True, options=ExportOptions(n_jobs=1))
    )


def test_evaluate_agrees_with_metrics_recorded_at_export(
    model: ExportedModel, tiny_root: Path
) -> None:
    report = evaluate_model(model, tiny_root, "valid")
    recorded = model.validation_metrics
    assert set(report["collections"]) == set(FAKE_COLLECTIONS)
    for collection, value in recorded.items():
        assert report["collections"][collection]["metric"] == pytest.approx(value, abs=1e-12)
    assert report["overall"]["score"] == pytest.approx(model.meta["validation"]["score"])


def test_report_structure(model: ExportedModel, tiny_root: Path, tmp_path: Path) -> None:
    calls: list[tuple[int, int, str]] = []
    report = evaluate_model(
        model,
        tiny_root,
        collections=["tile:xla", "layout:xla:random"],
        cache_dir=tmp_path / "cache",
        progress=lambda d, t, label: calls.append((d, t, label)),
    )
    assert report["split"] == "valid"
    assert list(report["collections"]) == ["tile:xla", "layout:xla:random"]
    tile, layout = report["collections"]["tile:xla"], report["collections"]["layout:xla:random"]
    assert set(tile) == {
        "metric",
        "tile_score",
        "top1_error",
        "top5_error",
        "top10_error",
        "graphs",
    }
    assert set(layout) == {
        "metric",
        "kendall_tau",
        "top1_error",
        "top5_error",
        "top10_error",
        "graphs",
    }
    assert tile["metric"] == tile["tile_score"]
    assert -1.0 <= layout["kendall_tau"] <= 1.0
    for summary in (tile, layout):
        assert summary["top1_error"] >= summary["top5_error"] >= summary["top10_error"] >= 0
    assert len(report["graphs"]) == tile["graphs"] + layout["graphs"] == 4
    assert report["overall"]["graphs"] == 4
    assert [c[:2] for c in calls] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    # the second pass reads the feature cache and gives the same numbers
    again = evaluate_model(
        model,
        tiny_root,
        collections=["tile:xla", "layout:xla:random"],
        cache_dir=tmp_path / "cache",
    )
    assert again["collections"] == report["collections"]


def test_graph_metrics_match_metrics_module() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    scores, runtime = rng.random(50), rng.random(50) + 1.0
    layout = graph_metrics("layout:nlp:default", scores, runtime)
    assert layout["kendall_tau"] == kendall_tau(scores, runtime)
    assert layout["top5_error"] == topk_error(scores, runtime, 5)
    tile = graph_metrics("tile:xla", scores, runtime)
    assert tile["tile_score"] == tile_score(scores, runtime, 5)
    assert "kendall_tau" not in tile


def test_data_root_without_collection(
    model: ExportedModel, tiny_root: Path, tmp_path: Path
) -> None:
    partial = tmp_path / "partial"
    shutil.copytree(tiny_root / "npz" / "tile", partial / "npz" / "tile")
    # by default the collections the root holds are served and the others named
    report = evaluate_model(model, partial)
    assert list(report["collections"]) == ["tile:xla"]
    assert report["absent"] == list(model.collections[1:])
    assert report["overall"]["score"] == report["collections"]["tile:xla"]["metric"]
    # a collection asked for by name must be there
    folder = partial / "npz" / "layout" / "xla" / "default" / "valid"
    msg = (
        f"{re.escape(str(partial))}: no layout:xla:default valid data "
        f"\\(missing folder {re.escape(str(folder))}\\)"
    )
    with pytest.raises(UsageError, match=msg) as exc:
        evaluate_model(model, partial, collections=["tile:xla", "layout:xla:default"])
    assert "\n" not in str(exc.value)


def test_data_root_without_any_collection(model: ExportedModel, tmp_path: Path) -> None:
    (tmp_path / "empty" / "npz").mkdir(parents=True)
    with pytest.raises(UsageError, match=r"empty: no valid data for any collection the model"):
        evaluate_model(model, tmp_path / "empty")


def test_unlabeled_split(model: ExportedModel, tiny_root: Path) -> None:
    with pytest.raises(UsageError, match=r"no labeled tile:xla graphs in split 'test'"):
        evaluate_model(model, tiny_root, "test", collections=["tile:xla"])


def test_unknown_split(model: ExportedModel, tiny_root: Path) -> None:
    with pytest.raises(UsageError, match=r"unknown split 'dev'"):
        evaluate_model(model, tiny_root, "dev")


def test_a_graph_without_a_ranking_is_left_out_of_the_means_and_named(
    model: ExportedModel, tiny_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A valid graph whose runtimes are all equal once scored tau 0 in its collection's mean
    (layout:xla:random 0.9873 -> 0.4954 on the probe's data)."""
    import numpy as np

    from hpo.cli import main

    root = tmp_path / "flat"
    shutil.copytree(tiny_root / "npz" / "layout", root / "npz" / "layout")
    first, second = sorted((root / "npz/layout/xla/random/valid").glob("*.npz"))
    arrays = dict(np.load(first))
    arrays["config_runtime"] = np.full_like(arrays["config_runtime"], 1000)
    np.savez(first, **arrays)
    c = "layout:xla:random"
    flat = evaluate_model(model, root, collections=[c])
    whole = evaluate_model(model, tiny_root, collections=[c])
    assert flat["unranked"] == [f"{c}/{first.stem}"]
    assert flat["collections"][c]["graphs"] == flat["overall"]["graphs"] == 1
    kept = [g for g in whole["graphs"] if g["stem"] == second.stem]
    assert flat["collections"][c]["metric"] == kept[0]["metric"]
    assert [g["ranked"] for g in flat["graphs"]] == [False, True]
    argv = ["evaluate", "--model", str(model.path), "--data", str(root), "--collections", c]
    assert main(argv) == 0
    assert capsys.readouterr().err == (
        "note: 1 labeled graph(s) carry no ranking (one config, or every runtime equal: no "
        f"prediction can order them) and are left out of the means: {c}/{first.stem}\n"
    )
    arrays = dict(np.load(second))
    arrays["config_runtime"] = np.full_like(arrays["config_runtime"], 1000)
    np.savez(second, **arrays)
    with pytest.raises(UsageError, match=rf"no labeled {c} graphs in split 'valid' \(each of its"):
        evaluate_model(model, root, collections=[c])
