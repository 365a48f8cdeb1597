from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from disks import FullFile, as_left_by, dead_pid
from fake_runs import FAKE_COLLECTIONS, as_older_metric_run, build_fake_run

from hpo.data.load import list_graphs
from hpo.deploy.export import export_model, export_rounds
from hpo.deploy.model import ExportedModel, load_model
from hpo.deploy.retrain import ExportOptions
from hpo.errors import ConfigError, StorageError, UsageError
from hpo.features import FEATURE_VERSION, is_prior_only
from hpo.ranking.scoring.metrics import LEGACY_LAYOUT_METRIC
from hpo.runs.views.history import load_run


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory, tiny_root: Path) -> tuple[Path, Path]:
    """(run folder, model folder) of a fake run over the tiny dataset, exported once."""
    base = tmp_path_factory.mktemp("export")
    run_dir = build_fake_run(base / "runs", tiny_root)
    seen: list[tuple[int, int, str]] = []
    out = export_model(
        run_dir,
        base / "models" / "fake",
        retrain=True,
        options=ExportOptions(n_jobs=1, progress=lambda d, t, label: seen.append((d, t, label))),
    )
    assert seen
    assert seen[-1] == (2, 2, "trained")
    return run_dir, out


def _copy(model_dir: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(model_dir, dst)
    return dst


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> None:
    assert "\n" not in str(exc.value)


def test_model_folder_contents(exported: tuple[Path, Path]) -> None:
    run_dir, out = exported
    assert sorted(p.name for p in out.iterdir()) == ["layout.txt", "model.json", "tile.txt"]
    meta = json.loads((out / "model.json").read_text())
    run = load_run(run_dir)
    inc = run.incumbent
    assert inc is not None
    assert meta["feature_version"] == FEATURE_VERSION
    assert meta["feature_spec"]["version"] == FEATURE_VERSION
    assert meta["hyperparameters"] == inc.config
    assert meta["collections"] == list(FAKE_COLLECTIONS)
    assert meta["rounds"] == 45
    assert meta["train_on"] == ["train"]
    assert set(meta["families"]) == {"tile", "layout"}
    assert meta["families"]["tile"]["file"] == "tile.txt"
    assert set(meta["validation"]["metrics"]) == set(FAKE_COLLECTIONS)
    assert meta["validation"]["in_training"] is False
    assert meta["run"]["metrics"] == inc.metrics
    assert meta["run"]["trial"] == inc.trial
    assert meta["data"]["matches_run"] is True
    assert meta["data"]["fingerprint"] == run.record.data_fingerprint
    assert meta["versions"]["lightgbm"]
    assert meta["created"] > 0
    assert not list(out.parent.glob(".*tmp*"))


def test_load_model_and_rank(exported: tuple[Path, Path], tiny_root: Path) -> None:
    model = load_model(exported[1])
    assert isinstance(model, ExportedModel)
    assert model.collections == FAKE_COLLECTIONS
    assert set(model.validation_metrics) == set(FAKE_COLLECTIONS)
    for collection in ("tile:xla", "layout:nlp:random"):
        path = list_graphs(tiny_root, collection, "test")[0]
        scores = model.predict_graph(path, collection)
        ranking = model.rank_graph(path, collection)
        assert scores.dtype == np.float64
        assert np.isfinite(scores).all()
        assert sorted(ranking.tolist()) == list(range(scores.size))
        assert (np.diff(scores[ranking]) >= 0).all()  # best (lowest score) first


def test_relative_features_switch_selects_columns(exported: tuple[Path, Path]) -> None:
    """The booster reads every column but the prior's own (one Dataset serves every switch,
    issue 20); a switched-off group is dead, not absent: the trees never split on it."""
    model = load_model(exported[1])
    meta = model.meta
    names = meta["families"]["layout"]["columns"]
    booster = model.families["layout"].booster
    assert booster.num_feature() == len(names)
    assert not any(is_prior_only(n) for n in names)
    relative = [i for i, n in enumerate(names) if n.endswith(("_dmed", "_prank"))]
    assert relative
    splits = booster.feature_importance("split")
    if not meta["hyperparameters"]["relative_features"]:
        assert splits[relative].sum() == 0
    else:
        assert splits.sum() > 0


def test_train_on_train_and_valid(exported: tuple[Path, Path], tmp_path: Path) -> None:
    run_dir, out = exported
    both = export_model(
        run_dir, tmp_path / "both", train_on="train+valid", options=ExportOptions(n_jobs=1)
    )
    meta, base = (json.loads((p / "model.json").read_text()) for p in (both, out))
    assert meta["train_on"] == ["train", "valid"]
    assert meta["validation"]["in_training"] is True
    for family in ("tile", "layout"):
        assert meta["families"][family]["training_rows"] > base["families"][family]["training_rows"]


def test_reexport_replaces_model_folder(exported: tuple[Path, Path], tmp_path: Path) -> None:
    target = _copy(exported[1], tmp_path)
    before = (target / "tile.txt").stat().st_ino
    export_model(exported[0], target, retrain=True, options=ExportOptions(n_jobs=1))
    assert sorted(p.name for p in target.iterdir()) == ["layout.txt", "model.json", "tile.txt"]
    assert (target / "tile.txt").stat().st_ino != before  # a new file, swapped in
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # no temporary left


def test_refuses_a_model_folder_holding_other_files(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    target = _copy(exported[1], tmp_path)
    (target / "notes.txt").write_text("keep me")
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    with pytest.raises(UsageError, match=r"model: holds files that no export wrote \(notes\.txt\)"):
        export_model(exported[0], target, retrain=True, options=ExportOptions(n_jobs=1))
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_refuses_the_working_directory(
    exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue's probe: ``--out .`` in a folder holding a model.json once deleted it all."""
    target = _copy(exported[1], tmp_path)
    monkeypatch.chdir(target)
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    for out in (".", "..", str(target)):
        with pytest.raises(UsageError, match=r": (is|holds) the working directory") as exc:
            export_model(exported[0], Path(out), retrain=True, options=ExportOptions(n_jobs=1))
        _one_line(exc)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_refuses_to_overwrite_other_folder(exported: tuple[Path, Path], tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.txt").write_text("keep me")
    with pytest.raises(UsageError, match=r"notes: exists and is not a model folder") as exc:
        export_model(exported[0], tmp_path / "notes", retrain=True, options=ExportOptions(n_jobs=1))
    _one_line(exc)
    assert (tmp_path / "notes" / "a.txt").read_text() == "keep me"


def test_export_rounds_per_fidelity(exported: tuple[Path, Path], tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(exported[0], run_dir)
    assert export_rounds(load_run(run_dir), 15.0) == 15  # the incumbent's own budget
    assert export_rounds(load_run(run_dir), None) == 45  # else max_budget
    campaign = json.loads((run_dir / "campaign.json").read_text())
    campaign["config"].update(fidelity="configs", min_budget=0.1, max_budget=1.0)
    (run_dir / "campaign.json").write_text(json.dumps(campaign))
    assert export_rounds(load_run(run_dir), 1.0) == 200  # ObjectiveSettings.fixed_rounds


def test_feature_version_mismatch(exported: tuple[Path, Path], tmp_path: Path) -> None:
    model_dir = _copy(exported[1], tmp_path)
    meta = json.loads((model_dir / "model.json").read_text())
    meta["feature_version"] = FEATURE_VERSION + 1
    (model_dir / "model.json").write_text(json.dumps(meta))
    msg = (
        f"{re.escape(str(model_dir))}: model was exported with feature version "
        f"{FEATURE_VERSION + 1}, this hpo extracts feature version {FEATURE_VERSION}"
    )
    with pytest.raises(ConfigError, match=msg) as exc:
        load_model(model_dir)
    _one_line(exc)


def test_missing_model_file(exported: tuple[Path, Path], tmp_path: Path) -> None:
    model_dir = _copy(exported[1], tmp_path)
    (model_dir / "tile.txt").unlink()
    with pytest.raises(ConfigError, match=r"model: missing model file tile\.txt$"):
        load_model(model_dir)


@pytest.mark.parametrize(
    ("keep_checksum", "message"),
    [
        (True, r"layout\.txt: corrupt \(its SHA-256 differs from model\.json\)"),
        (False, r"layout\.txt: not a well-formed LightGBM model \(truncated"),
    ],
)
def test_truncated_model_file(
    exported: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    keep_checksum: bool,
    message: str,
) -> None:
    # LightGBM itself aborts the process on such a file: it must never reach its parser
    model_dir = _copy(exported[1], tmp_path)
    text = (model_dir / "layout.txt").read_text()
    (model_dir / "layout.txt").write_text(text[: len(text) // 3])
    if not keep_checksum:
        meta = json.loads((model_dir / "model.json").read_text())
        del meta["families"]["layout"]["sha256"]
        (model_dir / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match=message) as exc:
        load_model(model_dir)
    _one_line(exc)
    assert "[LightGBM]" not in capsys.readouterr().out


def test_unparsable_model_file(exported: tuple[Path, Path], tmp_path: Path) -> None:
    model_dir = _copy(exported[1], tmp_path)
    (model_dir / "tile.txt").write_text("tree\nversion=v4\nend of trees\n")
    meta = json.loads((model_dir / "model.json").read_text())
    del meta["families"]["tile"]["sha256"]
    (model_dir / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match=r"tile\.txt: not a well-formed LightGBM model \(") as exc:
        load_model(model_dir)
    _one_line(exc)


def _without(key: str) -> Any:
    return lambda meta: {k: v for k, v in meta.items() if k != key}


def _spec(**changes: Any) -> Any:
    return lambda meta: {**meta, "feature_spec": {**meta["feature_spec"], **changes}}


#: model.json edits, and the line each is refused with (several once escaped as IndexError,
#: ValueError or a file name too long, or named no key)
MODEL_JSON_EDITS = {
    "no_families": (_without("families"), r"key 'families': expected a JSON object"),
    "no_spec": (_without("feature_spec"), r"key 'feature_spec': expected a JSON object"),
    "collections_empty": (
        lambda m: {**m, "collections": []},
        r"key 'collections': expected a non-empty list of tile:xla, ",
    ),
    "collections_object": (lambda m: {**m, "collections": {}}, r"key 'collections': expected"),
    "collections_unknown": (lambda m: {**m, "collections": ["x:y"]}, r"key 'collections': "),
    "hyperparameters_text": (
        lambda m: {**m, "hyperparameters": "zzz"},
        r"key 'hyperparameters': expected a JSON object",
    ),
    "relative_text": (_spec(relative="x"), r"key 'feature_spec': .*relative must be true or"),
    "descriptor_huge": (
        _spec(graph_descriptor=1e300),
        r"key .feature_spec.: .*graph_descriptor must",
    ),
    "hops_huge": (_spec(producer_hops=1e300), r"key .feature_spec.: .*producer_hops must be an"),
    "hops_text": (_spec(producer_hops="3"), r"key .feature_spec.: .*producer_hops must be an int"),
}


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("delete", r"not a model folder \(missing model\.json\)"),
        ("garbage", r"model\.json: not valid JSON"),
        *((name, r"model\.json: " + line) for name, (_, line) in MODEL_JSON_EDITS.items()),
    ],
)
def test_corrupt_model_json(
    exported: tuple[Path, Path], tmp_path: Path, damage: str, message: str
) -> None:
    model_dir = _copy(exported[1], tmp_path)
    meta_file = model_dir / "model.json"
    if damage == "delete":
        meta_file.unlink()
    elif damage == "garbage":
        meta_file.write_text('{"feature_version": ')
    else:
        edit = MODEL_JSON_EDITS[damage][0]
        meta_file.write_text(json.dumps(edit(json.loads(meta_file.read_text()))))
    with pytest.raises(ConfigError, match=message) as exc:
        load_model(model_dir)
    _one_line(exc)


def test_model_does_not_serve_collection(tmp_path: Path, tiny_root: Path) -> None:
    run_dir = build_fake_run(tmp_path / "runs", tiny_root, collections=("tile:xla",))
    model = load_model(
        export_model(run_dir, tmp_path / "tile_only", retrain=True, options=ExportOptions(n_jobs=1))
    )
    assert sorted(p.name for p in model.path.iterdir()) == ["model.json", "tile.txt"]
    path = list_graphs(tiny_root, "layout:xla:default", "valid")[0]
    with pytest.raises(UsageError, match=r"serves tile:xla, not layout:xla:default$"):
        model.predict_graph(path, "layout:xla:default")


def test_export_without_success(tmp_path: Path, tiny_root: Path) -> None:
    run_dir = build_fake_run(tmp_path / "runs", tiny_root, finished=False)
    (run_dir / "trials.jsonl").write_text("")
    with pytest.raises(UsageError, match="run 'fake' has no successful trial to export"):
        export_model(run_dir, tmp_path / "m", options=ExportOptions(n_jobs=1))


def test_export_of_missing_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The message lists the runs of the default ``runs/`` of the working directory: the test
    owns that directory, so a ``runs/demo`` left by the README's demo cannot change it."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=r"^no run '.*nope' in runs$"):
        export_model(tmp_path / "nope", tmp_path / "m")
    (tmp_path / "runs" / "demo").mkdir(parents=True)
    (tmp_path / "runs" / "demo" / "campaign.json").write_text("{}")
    with pytest.raises(UsageError, match=r"^no run '.*nope' in runs \(runs there: demo\)$"):
        export_model(tmp_path / "nope", tmp_path / "m")


def test_bad_train_on(exported: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"train_on must be .* found valid"):
        export_model(exported[0], tmp_path / "m", train_on=("valid",))


def test_notebook_api_mirrors_the_commands(exported: tuple[Path, Path], tiny_root: Path) -> None:
    from hpo import api

    run_dir, model_dir = exported
    assert api.load_run(run_dir).name == "fake"
    assert [r.name for r in api.list_runs(run_dir.parent)] == ["fake"]
    model = api.load_model(model_dir)
    path = list_graphs(tiny_root, "layout:xla:default", "test")[0]
    by_path = api.rank_graph(model_dir, path, "layout:xla:default")
    assert np.array_equal(by_path, model.rank_graph(path, "layout:xla:default"))
    assert set(api.__all__) >= {
        "load_run",
        "list_runs",
        "load_model",
        "rank_graph",
        "evaluate_model",
        "write_submission",
    }


# --- the exported model is the scored one -------------------------------------------------


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory, tiny_root: Path) -> Path:
    """A real model-free Hyperband campaign on tiny: the baseline, then a bracket at 4/12/36 rounds.

    Its feature spec is not the default one, so an export that rebuilt the spec from today's
    defaults would read other columns than the boosters were trained on.
    """
    from rich.console import Console

    from hpo.campaign import CampaignConfig, run_campaign
    from hpo.features import FeatureSpec

    base = tmp_path_factory.mktemp("real")
    # The campaign's baseline (the space's default, trained from scratch at the largest
    # budget) must not win, or the incumbent would not have continued a booster: a default
    # min_data_in_leaf far above a tiny graph's rows leaves its trees without a split.
    space = json.loads((Path(__file__).parents[2] / "spaces" / "lambdarank_small.json").read_text())
    for hp in space["hyperparameters"]:
        if hp["name"] == "min_data_in_leaf":
            hp["default_value"] = hp["upper"]
        if hp["name"] == "estimate_blend":  # every trial blends: export must ship its prior
            hp["choices"] = [True]
    space_file = base / "weak_default.json"
    space_file.write_text(json.dumps(space))
    cfg = CampaignConfig(
        data_root=tiny_root,
        name="real",
        collections=("tile:xla", "layout:xla:random", "layout:xla:default"),
        space=str(space_file),
        runs_dir=base / "runs",
        trials=16,  # the baseline, 11 trials at 4 rounds, 3 at 12, the first at 36
        optimizer="random-hb",
        min_budget=4,
        max_budget=36,
        eta=3,
        cache_dir=base / "cache",
        features=FeatureSpec(relative=False),
    )
    run_campaign(cfg, quiet=True, console=Console(file=io.StringIO()))
    return cfg.run_dir


@pytest.mark.slow
def test_export_then_evaluate_reproduces_the_scored_metrics(
    real_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from hpo.cli.main import main

    run = load_run(real_run)
    inc = run.incumbent
    assert inc is not None
    assert inc.budget == 36.0
    assert inc.info["rounds_reused"] > 0  # it continued the booster of a lower budget
    assert float(inc.config["estimate_weight"]) > 0  # its scores were blended: export must too
    out = tmp_path / "model"
    assert main(["export", str(real_run), "--out", str(out), "--jobs", "1"]) == 0
    capsys.readouterr()
    meta = json.loads((out / "model.json").read_text())
    assert meta["source"] == "copied"
    assert meta["feature_spec"]["relative"] is False
    assert meta["validation"]["max_abs_difference"] < 1e-9
    assert "run_layout_metric" not in meta["validation"]  # scored by today's metric
    assert main(["evaluate", "--model", str(out), "--data", str(run.settings.data_root),
                 "--split", "valid", "--json"]) == 0  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert set(report["collections"]) == set(inc.metrics)
    for collection, recorded in inc.metrics.items():
        assert abs(report["collections"][collection]["metric"] - recorded) < 1e-9
    # ... and the blend is part of what reproduces them: without it the layout metric moves
    from dataclasses import replace

    from hpo.deploy.evaluate import evaluate_model

    model = load_model(out)
    assert model.routes["layout:xla:random"].prior is not None  # the learned prior, copied
    # one layout booster, each kind of collection at its own weight (the metrics above match)
    weights = {
        c: model.routes[c].estimate_weight for c in ("layout:xla:random", "layout:xla:default")
    }
    assert weights == {
        "layout:xla:random": float(inc.config["estimate_weight"]),
        "layout:xla:default": float(inc.config["estimate_weight_default_collections"]),
    }
    assert weights["layout:xla:random"] != weights["layout:xla:default"]
    assert model.routes["layout:xla:default"].booster is model.routes["layout:xla:random"].booster
    plain = replace(model.routes["layout:xla:random"], estimate_weight=0.0)
    unblended = replace(model, routes={**model.routes, "layout:xla:random": plain})
    data = Path(str(run.settings.data_root))
    again = evaluate_model(unblended, data, "valid", ["layout:xla:random"])
    metric = again["collections"]["layout:xla:random"]["metric"]
    assert abs(metric - inc.metrics["layout:xla:random"]) > 1e-6


@pytest.mark.slow
def test_a_run_scored_by_the_older_layout_metric_exports_and_names_it(
    real_run: Path, tmp_path: Path
) -> None:
    run_dir = as_older_metric_run(Path(shutil.copytree(real_run, tmp_path / "old")))
    out = export_model(run_dir, tmp_path / "model", options=ExportOptions(n_jobs=1))
    validation = json.loads((out / "model.json").read_text())["validation"]
    assert validation["run_layout_metric"] == LEGACY_LAYOUT_METRIC


@pytest.mark.slow
def test_finished_campaign_keeps_only_the_top_configurations_boosters(real_run: Path) -> None:
    from hpo.runs.record.boosters import booster_key, budget_size

    run = load_run(real_run)
    inc = run.incumbent
    assert inc is not None
    assert inc.seed is not None
    assert inc.budget is not None
    kept = sorted(p.name for p in (real_run / "boosters").iterdir())
    size = budget_size(inc.budget)
    # the incumbent's, and those of the other configurations at its budget (for --ensemble;
    # here the baseline and the finished configurations), never a lower budget's; each layout
    # booster with its learned prior (every trial of this space blends)
    at_top = {(str(t.config), t.seed): t for t in run.successful if t.budget == inc.budget}
    lower = {t.budget for t in run.successful} - {inc.budget}
    assert 2 <= len(at_top) <= 5
    assert lower  # boosters of lower budgets existed and were dropped
    assert kept == sorted(
        [
            f"{booster_key(t.config, t.seed or 0, family)}-{size}.txt"
            for t in at_top.values()
            for family in ("layout", "tile")
        ]
        + [
            f"{booster_key(t.config, t.seed or 0, 'layout')}-{size}.prior.json"
            for t in at_top.values()
        ]
    )


@pytest.mark.slow
def test_retrain_on_request_says_so(real_run: Path, tmp_path: Path) -> None:
    out = export_model(real_run, tmp_path / "again", retrain=True, options=ExportOptions(n_jobs=1))
    meta = json.loads((out / "model.json").read_text())
    assert meta["source"] == "retrained"
    assert meta["rounds"] == 36
    assert meta["feature_spec"]["relative"] is False  # read from the run, not the defaults
    assert meta["families"]["tile"]["training_rows"] > 0
    assert "prior" in meta["families"]["layout"]  # fitted again on the rows trained on
    assert "prior" not in meta["families"]["tile"]


def test_export_without_saved_boosters_names_the_way_out(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    with pytest.raises(UsageError, match=r"no saved layout booster of trial \d+ .*--retrain\)$"):
        export_model(exported[0], tmp_path / "m", options=ExportOptions(n_jobs=1))
    assert not (tmp_path / "m").exists()
    assert not list(tmp_path.glob(".m.tmp*"))


@pytest.mark.slow
def test_an_interrupted_run_stays_resumable_and_exportable(tiny_root: Path, tmp_path: Path) -> None:
    from rich.console import Console

    from hpo.campaign import CampaignConfig, build_objective, run_campaign
    from hpo.runs.incumbent import config_key
    from hpo.runs.record.boosters import BoosterStore, booster_key, budget_size
    from hpo.runs.record.folder import run_state

    cfg = CampaignConfig(
        data_root=tiny_root,
        name="cut",
        collections=("layout:xla:random",),
        space="lambdarank_small",
        runs_dir=tmp_path / "runs",
        trials=20,
        min_budget=4,
        max_budget=36,
        eta=3,
        cache_dir=tmp_path / "cache",
    )
    objective, _ = build_objective(cfg, n_jobs=1)
    calls, cutting = [0], [True]  # Ctrl-C at the first promotion to the largest budget

    def cut(config: Any, seed: int = 0, budget: float | None = None, **kw: Any) -> Any:
        if cutting[0] and calls[0] > 0 and budget == 36.0:  # call 0 is the baseline
            raise KeyboardInterrupt("injected interrupt")
        calls[0] += 1
        return objective(config, seed=seed, budget=budget, **kw)

    quiet = Console(file=io.StringIO())
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        run_campaign(cfg, objective=cut, quiet=True, console=quiet)
    assert run_state(cfg.run_dir) == "interrupted"
    run = load_run(cfg.run_dir)
    store = BoosterStore(cfg.run_dir / "boosters")
    top: dict[str, float] = {}
    for t in run.successful:
        assert t.budget is not None
        top[config_key(t.config)] = max(t.budget, top.get(config_key(t.config), 0.0))
    baseline = run.baseline
    assert baseline is not None
    for t in run.successful:  # each configuration keeps its largest booster only ...
        assert t.seed is not None
        sizes = store.sizes(booster_key(t.config, t.seed, "layout"))
        if config_key(t.config) == config_key(baseline.config):
            # ... but the baseline, run first at the largest budget, may then be raced from
            # the smallest one: that booster can still be continued, so both are kept
            assert max(sizes) == 36
        else:
            assert sizes == [budget_size(top[config_key(t.config)])]
    inc = run.incumbent
    assert inc is not None
    assert inc.budget == 36.0  # the baseline: no other configuration got that far yet
    meta = json.loads(
        (
            export_model(run, tmp_path / "m", options=ExportOptions(n_jobs=1)) / "model.json"
        ).read_text()
    )
    assert meta["validation"]["max_abs_difference"] < 1e-9
    cutting[0] = False  # the same target (SMAC checks its name), no longer cut
    result = run_campaign(cfg, objective=cut, resume=True, quiet=True, console=quiet)
    assert result.budget == 36.0
    resumed = load_run(cfg.run_dir)
    final = resumed.incumbent
    assert final is not None
    # the promotion to 36 rounds continued a 12-round booster that the interruption kept
    assert any(t.budget == 36.0 and t.info["rounds_reused"] == 12 for t in resumed.successful)
    assert budget_size(36.0) in store.sizes(booster_key(final.config, final.seed or 0, "layout"))


def test_out_under_a_file_is_one_line(exported: tuple[Path, Path], tmp_path: Path) -> None:
    (tmp_path / "f").write_text("mine")
    with pytest.raises(UsageError, match=r"--out .*f/m: cannot write beside it \(") as exc:
        export_model(
            exported[0], tmp_path / "f" / "m", retrain=True, options=ExportOptions(n_jobs=1)
        )
    _one_line(exc)
    assert (tmp_path / "f").read_text() == "mine"


@pytest.mark.slow
def test_a_full_disk_names_the_model_folder_not_the_run(
    real_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy of a booster onto a full disk once named the run's booster (the source) as
    the file that failed; and the export's temporary folder was left behind."""
    import builtins

    import hpo.deploy.scored

    def open_(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        fh = builtins.open(path, mode, *args, **kwargs)
        return FullFile(fh) if "w" in mode else fh

    monkeypatch.setattr(hpo.deploy.scored, "open", open_, raising=False)
    out = tmp_path / "m"
    with pytest.raises(
        StorageError,
        match=rf"^{re.escape(str(out))}/(tile|layout)\.txt: No space left on device; free space "
        "there or choose another --out$",
    ):
        export_model(real_run, out, options=ExportOptions(n_jobs=1))
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_retrained_booster_on_a_full_disk_names_the_model_folder(
    exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LightGBM's own save printed a "[Fatal]" line and raised an error naming no errno."""
    import pathlib

    real = pathlib.Path.open

    def open_(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        fh = real(self, mode, *args, **kwargs)
        return FullFile(fh) if "w" in mode and self.name.endswith(".tmp") else fh

    monkeypatch.setattr(pathlib.Path, "open", open_)
    out = tmp_path / "m"
    with pytest.raises(
        StorageError, match=rf"^{re.escape(str(out))}/(tile|layout)\.txt: No space left on device"
    ):
        export_model(exported[0], out, retrain=True, options=ExportOptions(n_jobs=1))
    assert list(tmp_path.iterdir()) == []


def test_an_export_removes_what_a_killed_export_left_beside_its_folder(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    from hpo.ownership import TEMP_SUFFIX, temp_prefix

    out = tmp_path / "m"
    mine = tmp_path / f"{temp_prefix(out)}abc{TEMP_SUFFIX}"  # this process: alive, kept
    dead = as_left_by(mine, dead_pid())
    for folder in (mine, dead):
        folder.mkdir()
        (folder / "tile.txt").write_text("half a booster")
    export_model(exported[0], out, retrain=True, options=ExportOptions(n_jobs=1))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([mine.name, "m"])


def test_the_default_out_never_replaces_the_export_of_another_run(
    exported: tuple[Path, Path],
    tmp_path: Path,
    tiny_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Probe 69: two runs of one name (subsets of per-subset runs, runs of two --runs-dir)
    share ``models/NAME``, and the second export replaced the first's silently."""
    from hpo.cli.main import main

    run_dir, model_dir = exported
    shutil.copytree(model_dir, tmp_path / "models" / "fake")  # the working directory's models/
    other = build_fake_run(tmp_path / "other_runs", tiny_root)  # also named 'fake'
    before = (tmp_path / "models" / "fake" / "model.json").read_text()
    assert main(["export", str(other), "--retrain", "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"holds the export of run {run_dir.absolute()}; give --out models/fake to" in err
    assert (tmp_path / "models" / "fake" / "model.json").read_text() == before
    # its own run's export is replaced; so is another's, given --out
    assert main(["export", str(run_dir), "--retrain", "--jobs", "1"]) == 0
    out = ["--out", str(tmp_path / "models" / "fake")]
    assert main(["export", str(other), "--retrain", "--jobs", "1", *out]) == 0
    meta = json.loads((tmp_path / "models" / "fake" / "model.json").read_text())
    assert meta["run"]["path"] == str(other.absolute())


def test_an_export_on_other_data_says_so(
    exported: tuple[Path, Path],
    tmp_path: Path,
    tiny_root: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Probe 68: an export on another dataset printed its valid score (not the run's) with
    no note; only model.json said ``matches_run: false``."""
    import os

    from hpo.cli.main import main

    run_dir, _ = exported
    args = ["export", str(run_dir), "--retrain", "--jobs", "1", "--out", str(tmp_path / "m")]
    assert main(args) == 0
    assert "note:" not in capsys.readouterr().err  # the run's own data
    other = tmp_path / "d5"
    shutil.copytree(tiny_root, other)
    touched = list_graphs(other, FAKE_COLLECTIONS[0], "valid")[0]
    os.utime(touched, ns=(1, 1))
    assert main([*args, "--data", str(other)]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"note: exported on data other than the run tuned on ({other.absolute()}")


def test_a_second_export_to_one_out_at_once_is_refused(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe 70: two exports to one --out at once replaced each other's folder while the
    other read it back ("tile.txt: corrupt (its SHA-256 differs ...)"), or both said
    "wrote". While one holds the folder, another is refused in one line and changes nothing."""
    import subprocess
    import sys

    from hpo.cli.main import main

    out = tmp_path / "models" / "m"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from hpo.deploy.out_folder import writing_out\n"
         f"with writing_out(Path({str(out)!r})):\n print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        args = ["export", str(exported[0]), "--retrain", "--jobs", "1", "--out", str(out)]
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"--out {out}: another export is writing it now" in err
        assert not out.exists()
        with pytest.raises(UsageError, match="another export is writing it now"):
            export_model(exported[0], out, retrain=True, options=ExportOptions(n_jobs=1))
    finally:
        holder.communicate("")
    assert main(args) == 0  # the holder ended
    assert load_model(out).meta["run"]["path"] == str(exported[0].absolute())
    assert sorted(p.name for p in out.parent.iterdir()) == ["m"]  # no lock file left


def test_export_threads_beyond_the_cores_are_refused_before_writing(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe 67: ``--retrain --threads 100000`` segfaulted in LightGBM and left
    ``models/.x.*.tmp``."""
    from hpo.cli.main import main

    out = tmp_path / "models" / "x"
    for bad in ("100000", "0"):
        argv = ["export", str(exported[0]), "--retrain", "--threads", bad, "--out", str(out)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"--threads {bad}: expected 1 to " in err
    assert not out.parent.exists()  # nor an empty models/


def test_export_jobs_beyond_the_cores_are_refused_before_writing(
    exported: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe2 #69: ``--retrain --jobs 100000`` ran for minutes with leaked semaphores, and
    ``--jobs 0`` was taken silently."""
    from hpo.cli.main import main
    from hpo.features import extraction_jobs

    out = tmp_path / "models" / "x"
    for bad in ("100000", "0", "-3"):
        argv = ["export", str(exported[0]), "--retrain", "--jobs", bad, "--out", str(out)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1
        assert f"--jobs {bad}: expected 1 to " in err
    assert not out.parent.exists()  # nor an empty models/
    with pytest.raises(UsageError, match="--jobs 0: expected 1 to "):
        export_model(exported[0], out, retrain=True, options=ExportOptions(n_jobs=0))
    assert extraction_jobs(1) == 1


@pytest.mark.slow
def test_a_retrain_on_train_and_valid_blends_as_its_trial_chose(
    real_run: Path, tmp_path: Path
) -> None:
    """The valid graphs are among a train+valid model's training rows, where the trees beat
    any blend; the retrain keeps the prior's shares its trial chose on graphs it had not seen
    (read from the prior saved beside the incumbent's booster) instead of choosing again."""
    from hpo.ranking.prior.learned import LearnedPrior
    from hpo.runs.record.boosters import booster_key, budget_size

    run_dir = Path(shutil.copytree(real_run, tmp_path / "run"))
    inc = load_run(run_dir).incumbent
    assert inc is not None
    assert inc.budget is not None
    key = booster_key(inc.config, inc.seed or 0, "layout")
    side = run_dir / "boosters" / f"{key}-{budget_size(inc.budget)}.prior.json"
    saved = json.loads(side.read_text())
    # the trial's record holds the shares of the prior saved beside its booster
    assert inc.blend_shares["layout"] == LearnedPrior.from_dict(saved, str(side)).chosen_shares()
    saved.pop("off", None)
    saved["doubt"] = {"layout:xla:random": 0.25}  # a choice no fit on these rows would make
    side.write_text(json.dumps(saved))
    out = export_model(
        run_dir, tmp_path / "both", train_on="train+valid", options=ExportOptions(n_jobs=1)
    )
    prior = json.loads((out / "model.json").read_text())["families"]["layout"]["prior"]
    assert prior["doubt"] == {"layout:xla:random": 0.25}
    assert "off" not in prior
    assert prior["coef"] != saved["coef"]  # its own weights, fitted on train and valid
    assert (
        json.loads((out / "model.json").read_text())["families"]["layout"]["prior_shares"]
        == "trial"
    )
    # a prior that cannot be read (not JSON, or not a prior) is as absent: the retrain blends
    # at the shares the trial's record kept, and chooses on valid only without them
    log = run_dir / "trials.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    inc_record = next(r for r in records if r["trial"] == inc.trial)
    doctored = {"layout": {"layout:xla:random": 0.5}}  # another choice no fit would make
    inc_record["info"]["blend_shares"] = doctored
    with_record = "".join(json.dumps(r) + "\n" for r in records)
    for r in records:
        r.get("info", {}).pop("blend_shares", None)
    without_record = "".join(json.dumps(r) + "\n" for r in records)
    for i, text in enumerate(("{not json", json.dumps({"names": 3}))):
        side.write_text(text)
        log.write_text(with_record)
        again = export_model(
            run_dir, tmp_path / f"again{i}", train_on="train+valid", options=ExportOptions(n_jobs=1)
        )
        family = json.loads((again / "model.json").read_text())["families"]["layout"]
        assert family["prior_shares"] == "trial"
        assert family["prior"]["doubt"] == {"layout:xla:random": 0.5}
        log.write_text(without_record)
        chosen = export_model(
            run_dir,
            tmp_path / f"chosen{i}",
            train_on="train+valid",
            options=ExportOptions(n_jobs=1),
        )
        family = json.loads((chosen / "model.json").read_text())["families"]["layout"]
        assert family["prior_shares"] == "valid"
        assert family["prior"].get("doubt", {}).get("layout:xla:random") != 0.5
