"""A cross-validated campaign on tiny real data, end to end: folds, ``runs show``, export, evaluate.

Export of a cv run retrains on every labeled graph: the model's training rows are the rows of
the train and valid tables together, not those of any fold.
"""

from __future__ import annotations

import io
import json
import shutil
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
from hpo.runs.incumbent import config_key
from hpo.runs.record.folder import read_trials
from hpo.runs.views.history import load_run


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


def test_export_of_a_cv_run_blends_the_prior_as_its_folds_chose(
    cv_run: CampaignConfig, tmp_path: Path
) -> None:
    """Every labeled graph is a training row of the export, where the trees beat any blend:
    the prior's shares come from the folds, each chosen on graphs its fold held out (the lower
    median per collection), not chosen again on valid."""
    records = read_trials(cv_run.run_dir / "trials.jsonl")
    blending = [r for r in records if r["config"]["estimate_blend"]]
    assert blending  # the default configuration blends, and the baseline is the default
    assert all("layout" in r["info"]["blend_shares"] for r in blending)
    assert not any("blend_shares" in r["info"] for r in records if r not in blending)
    chosen = config_key(blending[0]["config"])
    run_dir = Path(shutil.copytree(cv_run.run_dir, tmp_path / "run"))
    (run_dir / "result.json").unlink()  # the rule alone picks the incumbent
    doctored = {"fold0": 0.25, "fold1": 0.5}  # choices no fit on these rows would make
    lines = []
    for r in records:
        if config_key(r["config"]) == chosen:  # the best, and blended as no fit would
            r["score"], r["cost"] = 0.999, 0.001
            r["info"]["blend_shares"]["layout"] = {"layout:xla:random": doctored[r["instance"]]}
        lines.append(json.dumps(r))
    (run_dir / "trials.jsonl").write_text("\n".join(lines) + "\n")
    inc = load_run(run_dir).incumbent
    assert inc is not None
    assert config_key(inc.config) == chosen
    assert inc.blend_shares == {"layout": {"layout:xla:random": 0.25}}
    out = export_model(run_dir, tmp_path / "model")
    family = json.loads((out / "model.json").read_text())["families"]["layout"]
    assert family["prior_shares"] == "folds"
    assert family["prior"]["doubt"] == {"layout:xla:random": 0.25}
    assert "off" not in family["prior"]
