"""A cross-validated campaign on tiny real data, end to end: folds, ``runs show``, export, evaluate.

Export of a cv run retrains on every labeled graph: the model's training rows are the rows of
the train and valid tables together, not those of any fold.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from hpo.campaign import CampaignConfig, run_campaign
from hpo.cli.main import main
from hpo.data.load import COLLECTIONS
from hpo.deploy.evaluate import evaluate_model
from hpo.deploy.export import export_model
from hpo.deploy.model import load_model
from hpo.features import ExtractOptions, FeatureSpec, SampleCaps, build_tables
from hpo.ranking.training import select_rows
from hpo.runs.record.folder import read_trials


@pytest.fixture(scope="module")
def cv_run(tmp_path_factory: pytest.TempPathFactory, tiny_root: Path) -> CampaignConfig:
    base = tmp_path_factory.mktemp("cv")
    cfg = CampaignConfig(
        data_root=tiny_root,
        runs_dir=base / "runs",
        cache_dir=base / "cache",
        name="cv",
        optimizer="bo",
        cv=2,
        trials=6,
        max_budget=8,
        seed=1,
        threads=1,
    )
    run_campaign(cfg, quiet=True, console=Console(file=io.StringIO()))
    return cfg


def test_cv_campaign_scores_folds_and_shows_their_mean(
    cv_run: CampaignConfig, capsys: pytest.CaptureFixture[str]
) -> None:
    records = read_trials(cv_run.run_dir / "trials.jsonl")
    assert {r["instance"] for r in records} == {"fold0", "fold1"}
    assert all(set(r["metrics"]) == set(COLLECTIONS) for r in records)
    assert not (cv_run.run_dir / "boosters").exists() or not any(
        (cv_run.run_dir / "boosters").iterdir()
    )
    assert main(["runs", "show", str(cv_run.run_dir), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    inc = shown["incumbent"]
    assert set(inc["folds"]) == {"fold0", "fold1"}
    assert inc["score"] == pytest.approx(np.mean([f["score"] for f in inc["folds"].values()]))
    assert set(shown["baseline"]["folds"]) == {"fold0", "fold1"}


def test_export_of_a_cv_run_trains_on_every_labeled_graph(
    cv_run: CampaignConfig, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = export_model(cv_run.run_dir, tmp_path / "model")  # no --retrain, no --train-on
    meta = json.loads((out / "model.json").read_text())
    assert (meta["cv"], meta["source"], meta["train_on"]) == (2, "retrained", ["train", "valid"])
    assert meta["rounds"] == 8
    tables = build_tables(
        cv_run.data_root,
        COLLECTIONS,
        ("train", "valid"),
        FeatureSpec(),
        caps=SampleCaps.from_settings(cv_run),
        extract=ExtractOptions(cache_dir=cv_run.cache_dir),
    )
    for family, entry in meta["families"].items():
        labeled = sum(
            len(select_rows(tables[(family, split)], COLLECTIONS)) for split in ("train", "valid")
        )
        assert entry["training_rows"] == labeled
    report = evaluate_model(load_model(out), cv_run.data_root, "valid")
    assert set(report["collections"]) == set(COLLECTIONS)
    assert main(["export", str(cv_run.run_dir), "--out", str(tmp_path / "m2")]) == 0
    assert "cross-validated run (2 folds): retrained on every labeled graph" in (
        capsys.readouterr().out
    )
