"""``hpo export --ensemble K`` (hpo.deploy.ensemble): members, averaging, scoring, serving.

The end-to-end tests run a short real random-search campaign on the tiny dataset (every
trial at the largest budget), so there are several configurations to average.
"""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fake_runs import as_older_metric_run

from hpo.data.load import list_graphs, load_graph
from hpo.deploy.ensemble import EnsembleFamilyModel, ensemble_members, export_ensemble
from hpo.deploy.evaluate import evaluate_model
from hpo.deploy.model import FamilyModel, load_model
from hpo.deploy.predict import write_submission
from hpo.deploy.retrain import ExportOptions
from hpo.errors import UsageError
from hpo.ranking.prior.blend import standardized
from hpo.ranking.scoring.metrics import LEGACY_LAYOUT_METRIC
from hpo.runs.views.history import load_run

COLLECTIONS = ("tile:xla", "layout:xla:random")


class _Booster:
    """A stand-in booster: a fixed linear function of the rows."""

    def __init__(self, w: np.ndarray) -> None:
        self.w = w

    def predict(self, X: np.ndarray) -> np.ndarray:
        return X @ self.w


def _family(w: list[float]) -> FamilyModel:
    return FamilyModel("tile", _Booster(np.array(w)), np.arange(len(w)), len(w))


def test_members_are_averaged_on_the_per_graph_standardized_scale() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    a, b = _family([1.0, 0.0, 0.0]), _family([0.0, 1000.0, 5.0])
    both = EnsembleFamilyModel("tile", None, np.arange(3), 3, members=(a, b))
    expected = (standardized(a.predict(X)) + standardized(b.predict(X))) / 2
    np.testing.assert_allclose(both.predict(X), expected, atol=1e-12)
    # a member's score range does not weigh: scaling it changes nothing
    big = _family([1000.0, 0.0, 0.0])
    scaled = EnsembleFamilyModel("tile", None, np.arange(3), 3, members=(big, b))
    np.testing.assert_allclose(scaled.predict(X), both.predict(X), atol=1e-12)


def test_standardized_is_per_graph() -> None:
    values = np.array([1.0, 2.0, 3.0, 100.0, 300.0])
    z = standardized(values, np.array([0, 3, 5]))
    np.testing.assert_allclose(z[:3], [-1.224744871, 0.0, 1.224744871], atol=1e-8)
    np.testing.assert_allclose(z[3:], [-1.0, 1.0])


@pytest.fixture(scope="module")
def search(tmp_path_factory: pytest.TempPathFactory, tiny_root: Path) -> Path:
    """A real random search on tiny: the baseline and 5 configurations, all at 12 rounds."""
    from rich.console import Console

    from hpo.campaign import CampaignConfig, run_campaign

    base = tmp_path_factory.mktemp("ensemble")
    cfg = CampaignConfig(
        data_root=tiny_root,
        name="search",
        collections=COLLECTIONS,
        space="lambdarank_small",
        runs_dir=base / "runs",
        trials=6,
        optimizer="random",
        max_budget=12,
        cache_dir=base / "cache",
    )
    run_campaign(cfg, quiet=True, console=Console(file=io.StringIO()))
    return cfg.run_dir


@pytest.mark.slow
def test_ensemble_folder_loads_evaluates_to_its_score_and_predicts(
    search: Path, tiny_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpo.cli.main import main

    run = load_run(search)
    out = tmp_path / "ens"
    argv = ["export", str(search), "--out", str(out), "--ensemble", "3", "--jobs", "1"]
    assert main([*argv, "--ensemble-within", "inf"]) == 0  # the 3 best whatever their score
    assert "an ensemble of 3 configurations" in capsys.readouterr().out
    meta = json.loads((out / "model.json").read_text())
    assert meta["format"] == 3
    assert meta["ensemble"]["k"] == 3
    assert meta["ensemble"]["within"] is None
    assert "run_layout_metric" not in meta["validation"]  # the run was scored by today's metric
    members = ensemble_members(run, 3, math.inf)
    assert [m["trial"]["trial"] for m in meta["members"]] == [t.trial for t in members]
    assert members[0].trial == run.incumbent.trial  # type: ignore[union-attr]
    assert all(m["source"] == "copied" for m in meta["members"])  # the campaign kept them
    # evaluate scores every valid config; on tiny that is the rows the run scored
    model = load_model(out)
    report = evaluate_model(model, tiny_root, "valid", list(COLLECTIONS))
    recorded = meta["validation"]["metrics"]
    assert set(report["collections"]) == set(recorded)
    for c, value in recorded.items():
        assert abs(report["collections"][c]["metric"] - value) < 1e-9
    assert abs(np.mean(list(recorded.values())) - meta["validation"]["score"]) < 1e-12
    # it is an average: no member alone ranks like it on every graph
    path = list_graphs(tiny_root, "layout:xla:random", "valid")[0]
    scores = model.predict_graph(path, "layout:xla:random")
    X = _rows(model, path)
    for i in range(3):
        alone = model.families[f"m{i}/layout"].predict(X)
        assert not np.allclose(standardized(alone), scores)
    # predict ranks every config of every test graph
    csv_path = tmp_path / "sub.csv"
    write_submission(model, tiny_root, csv_path, collections=list(COLLECTIONS), top_k=10**6)
    with csv_path.open(newline="") as fh:
        rows = {r["ID"]: r["TopConfigs"] for r in csv.DictReader(fh)}
    for c in COLLECTIONS:
        for p in list_graphs(tiny_root, c, "test"):
            n = load_graph(p, c).n_configs
            ranked = [int(x) for x in rows[f"{c}:{p.stem}"].split(";")]
            assert sorted(ranked) == list(range(n))
    # runs show reports it beside the incumbent
    assert main(["runs", "show", str(search)]) == 0
    shown = capsys.readouterr().out
    assert f"ensemble of 3 (trials {[t.trial for t in members]})" in shown
    assert f"valid score {meta['validation']['score']:.4f}" in shown
    # a later export replaces the ensemble's folder: its members' files are an export's own
    assert main([*argv, "--ensemble-within", "inf"]) == 0
    assert main(["export", str(search), "--out", str(out), "--jobs", "1"]) == 0
    assert "members" not in json.loads((out / "model.json").read_text())
    assert not (out / "m0").exists()


def _rows(model: Any, path: Path) -> np.ndarray:
    from hpo.features import extract_file

    X, *_ = extract_file(path, "layout:xla:random", model.spec, None)
    return np.asarray(X)


@pytest.mark.slow
def test_members_without_kept_boosters_are_retrained(search: Path, tmp_path: Path) -> None:
    copy = tmp_path / "search"
    shutil.copytree(search, copy)
    run = load_run(copy)
    second = ensemble_members(run, 2, math.inf)[1]
    from hpo.runs.record.boosters import booster_key

    for family in ("tile", "layout"):
        key = booster_key(second.config, second.seed, family)
        for f in (copy / "boosters").glob(f"{key}-*"):
            f.unlink()
    out = export_ensemble(copy, tmp_path / "m", 2, within=math.inf, options=ExportOptions(n_jobs=1))
    meta = json.loads((out / "model.json").read_text())
    assert [m["source"] for m in meta["members"]] == ["copied", "retrained"]
    assert meta["source"] == "mixed"
    assert json.loads((copy / "ensemble.json").read_text())["score"] == meta["validation"]["score"]


@pytest.mark.slow
def test_an_ensemble_of_a_run_scored_by_the_older_layout_metric_names_it(
    search: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpo.cli.main import main

    copy = as_older_metric_run(Path(shutil.copytree(search, tmp_path / "old")))
    out = tmp_path / "ens"
    argv = ["export", str(copy), "--out", str(out), "--ensemble", "2", "--jobs", "1"]
    assert main([*argv, "--ensemble-within", "inf"]) == 0
    printed = capsys.readouterr().out
    assert f"older layout metric ({LEGACY_LAYOUT_METRIC})" in printed
    assert "ensemble scores below the incumbent" not in printed  # two metrics: not compared
    validation = json.loads((out / "model.json").read_text())["validation"]
    assert validation["run_layout_metric"] == LEGACY_LAYOUT_METRIC
    assert json.loads((copy / "ensemble.json").read_text())["run_layout_metric"] == (
        LEGACY_LAYOUT_METRIC
    )
    assert main(["runs", "show", str(copy)]) == 0
    assert f"older layout metric: {LEGACY_LAYOUT_METRIC}" in capsys.readouterr().out


@pytest.mark.slow
def test_ensemble_refusals(search: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="an ensemble needs at least 2 configurations"):
        export_ensemble(search, tmp_path / "m", 1, options=ExportOptions(n_jobs=1))
    assert not (tmp_path / "m").exists()
    from hpo.cli.main import main

    assert main(["export", str(search), "--ensemble", "2", "--retrain"]) == 2


def test_members_are_those_within_the_tolerance_of_the_incumbent(
    tmp_path: Path, tiny_root: Path
) -> None:
    from fake_runs import build_fake_run

    run = load_run(build_fake_run(tmp_path / "runs", tiny_root))
    inc = run.incumbent
    assert inc is not None
    top = [t for t in run.top(len(run.scored)) if t.budget == inc.budget]
    assert len(top) == 2
    gap = (top[0].score or 0.0) - (top[1].score or 0.0)
    assert gap > 0
    assert [t.trial for t in ensemble_members(run, 3, math.inf)] == [t.trial for t in top]
    assert len(ensemble_members(run, 3, gap + 1e-9)) == 2
    with pytest.raises(UsageError, match="1 more reached it, none within .*--ensemble-within"):
        ensemble_members(run, 3, gap / 2)
    with pytest.raises(UsageError, match="expected a score difference >= 0"):
        ensemble_members(run, 3, float("nan"))


def test_ensemble_within_needs_ensemble(tmp_path: Path, tiny_root: Path) -> None:
    from fake_runs import build_fake_run

    from hpo.cli.main import main

    run_dir = build_fake_run(tmp_path / "runs", tiny_root)
    assert main(["export", str(run_dir), "--ensemble-within", "0.1"]) == 2
