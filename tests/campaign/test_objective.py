from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import hpo.campaign.objective as objective_module
from hpo.campaign.objective import ObjectiveSettings, RankerObjective, default_threads
from hpo.data.load import COLLECTIONS
from hpo.errors import ConfigError, UsageError
from hpo.ranking.model.datasets import DatasetCache
from hpo.runs.record.trial import Trial

HP = {"learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 5, "label_levels": 8}


def test_cost_and_info_on_tiny(tiny_tables) -> None:
    obj = RankerObjective(ObjectiveSettings(collections=COLLECTIONS, max_budget=20), tiny_tables)
    cost, info = obj(HP, seed=0, budget=20)
    assert np.isfinite(cost)
    assert set(info["metrics"]) == set(COLLECTIONS)
    assert cost == pytest.approx(1 - np.mean(list(info["metrics"].values())))
    assert info["rows"] > 0
    assert info["model_bytes"] > 0
    assert info["train_seconds"] > 0
    for c in COLLECTIONS[1:]:
        assert -1.0 <= info["metrics"][c] <= 1.0


def test_same_seed_same_cost(tiny_tables) -> None:
    obj = RankerObjective(ObjectiveSettings(collections=COLLECTIONS[1:3]), tiny_tables)
    assert obj(HP, seed=1, budget=15)[0] == obj(HP, seed=1, budget=15)[0]


def test_continued_training_reuses_lower_budget(tiny_tables, tmp_path: Path) -> None:
    settings = ObjectiveSettings(collections=("layout:xla:random",), model_dir=str(tmp_path))
    obj = RankerObjective(settings, tiny_tables)
    _, low = obj(HP, seed=0, budget=10)
    _, high = obj(HP, seed=0, budget=30)
    assert (low["rounds_trained"], low["rounds_reused"]) == (10, 0)
    assert (high["rounds_trained"], high["rounds_reused"]) == (20, 10)
    # the continued booster supersedes the one it continued from
    assert sorted(p.name.rsplit("-", 1)[1] for p in tmp_path.iterdir()) == ["30.txt"]
    fresh = RankerObjective(ObjectiveSettings(collections=("layout:xla:random",)), tiny_tables)
    _, scratch = fresh(HP, seed=0, budget=30)
    assert scratch["rounds_reused"] == 0


def test_booster_of_selected_columns_from_an_older_run_is_not_continued(
    tiny_tables, tmp_path: Path
) -> None:
    import lightgbm as lgb

    from hpo.runs.record.boosters import BoosterStore, booster_key

    collection = "layout:xla:random"
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    older = lgb.train({"objective": "regression", "verbose": -1}, lgb.Dataset(X, X[:, 0]), 2)
    BoosterStore(str(tmp_path)).save(booster_key(HP, 0, "layout"), 10, older, None)
    settings = ObjectiveSettings(collections=(collection,), model_dir=str(tmp_path))
    _, info = RankerObjective(settings, tiny_tables)(HP, seed=0, budget=30)
    assert (info["rounds_trained"], info["rounds_reused"]) == (30, 0)


def test_configs_fidelity_limits_rows(tiny_tables) -> None:
    settings = ObjectiveSettings(collections=("tile:xla",), fidelity="configs", fixed_rounds=10)
    obj = RankerObjective(settings, tiny_tables)
    _, small = obj(HP, seed=0, budget=5)
    _, large = obj(HP, seed=0, budget=1000)
    n_graphs = sum(g.labeled for g in tiny_tables[("tile", "train")].graphs)
    assert small["rows"] == 5 * n_graphs
    assert large["rows"] > small["rows"]


def test_tables_can_arrive_as_scattered_keyword(tiny_tables) -> None:
    obj = RankerObjective(ObjectiveSettings(collections=("tile:xla",)))
    cost, _ = obj(HP, seed=0, budget=5, tables=tiny_tables)
    assert np.isfinite(cost)


def test_settings_validated() -> None:
    with pytest.raises(ConfigError, match="fidelity must be one of"):
        ObjectiveSettings(collections=("tile:xla",), fidelity="epochs")


def test_configs_fidelity_keeps_the_scored_boosters(tiny_tables, tmp_path: Path) -> None:
    from hpo.runs.record.boosters import BoosterStore, booster_key

    settings = ObjectiveSettings(
        collections=("tile:xla", "layout:xla:random"),
        fidelity="configs",
        fixed_rounds=5,
        model_dir=str(tmp_path),
    )
    obj = RankerObjective(settings, tiny_tables)
    _, info = obj(HP, seed=2, budget=4)
    store = BoosterStore(tmp_path)
    for family in ("tile", "layout"):
        assert store.sizes(booster_key(HP, 2, family)) == [4]
    assert info["rounds_reused"] == 0
    obj(HP, seed=2, budget=12)  # no continuation with configs; 4 is superseded all the same
    assert store.sizes(booster_key(HP, 2, "tile")) == [12]


def test_threads_fill_the_cores_and_are_recorded(tiny_tables, monkeypatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 8)
    assert (default_threads(1), default_threads(2), default_threads(16)) == (8, 4, 1)
    obj = RankerObjective(ObjectiveSettings(collections=("tile:xla",), n_threads=3), tiny_tables)
    _, info = obj(HP, seed=0, budget=5)
    assert info["n_threads"] == 3
    assert set(info["seconds"]) == {"dataset", "boost", "predict", "score"}


def test_datasets_reused_across_trials_and_not_pickled(tiny_tables) -> None:
    obj = RankerObjective(ObjectiveSettings(collections=("tile:xla",)), tiny_tables)
    _, first = obj(HP, seed=0, budget=5)
    _, second = obj({**HP, "num_leaves": 7}, seed=0, budget=9)
    assert (first["datasets_reused"], second["datasets_reused"]) == (0, 1)
    assert len(pickle.loads(pickle.dumps(obj)).datasets) == 0
    assert len(obj.datasets) > 0


def test_scattered_dataset_cache_outlives_the_objective(tiny_tables) -> None:
    """Dask deserialises the objective per task; the scattered cache stays on the worker."""
    cache = DatasetCache()
    obj = RankerObjective(ObjectiveSettings(collections=("tile:xla",)))
    obj(HP, seed=0, budget=5, tables=tiny_tables, datasets=cache)
    assert len(cache) > 0
    assert len(obj.datasets) == 0
    per_task = pickle.loads(pickle.dumps(obj))
    _, info = per_task(HP, seed=0, budget=5, tables=tiny_tables, datasets=cache)
    assert info["datasets_reused"] == 1


@pytest.mark.parametrize(
    ("threads", "workers", "expected"), [(None, 1, 8), (None, 2, 4), (3, 2, 3)]
)
def test_build_objective_threads(
    tiny_root: Path, tmp_path: Path, monkeypatch, threads, workers, expected
) -> None:
    from hpo.campaign import CampaignConfig, build_objective

    monkeypatch.setattr("os.cpu_count", lambda: 8)
    cfg = CampaignConfig(
        data_root=tiny_root,
        name="t",
        collections=("tile:xla",),
        runs_dir=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        workers=workers,
        threads=threads,
    )
    objective, _ = build_objective(cfg, n_jobs=1)
    assert objective.settings.n_threads == expected
    assert objective.settings.dataset_dir == str(tmp_path / "cache" / "datasets")
    assert objective.settings.histogram_pool_mb == 0


def test_the_campaigns_histogram_pool_reaches_every_booster(tiny_tables, tmp_path: Path) -> None:
    settings = ObjectiveSettings(
        collections=("tile:xla", "layout:xla:random"), model_dir=str(tmp_path), histogram_pool_mb=3
    )
    RankerObjective(settings, tiny_tables)(HP, seed=0, budget=4)
    saved = sorted(tmp_path.iterdir())
    assert len(saved) == 2  # one booster per family
    for path in saved:
        assert "[histogram_pool_size: 3]" in path.read_text()


def test_a_fold_trains_outside_it_and_scores_inside_it(tiny_tables) -> None:
    from hpo.campaign.lifecycle.run import CampaignConfig
    from hpo.campaign.objective import cv_tables

    cfg = CampaignConfig(data_root=Path("."), name="cv", cv=2)
    tables = cv_tables(tiny_tables, cfg)
    assert set(tables) == {("tile", "labeled"), ("layout", "labeled")}
    settings = ObjectiveSettings(collections=COLLECTIONS, max_budget=10, folds=2, fold_seed=0)
    obj = RankerObjective(settings, tables)
    labeled = sum(t.n_rows for t in tables.values())
    rows = []
    for fold in ("fold0", "fold1"):
        cost, info = obj(HP, seed=0, budget=10, instance=fold)
        assert info["fold"] == int(fold[-1])
        assert set(info["metrics"]) == set(COLLECTIONS)
        assert cost == pytest.approx(1 - info["score"])
        rows.append(info["rows"])
    assert sum(rows) == labeled  # each labeled row is trained on in exactly one of 2 folds
    with pytest.raises(ValueError, match="not a fold of 2"):
        obj(HP, seed=0, budget=10, instance="fold2")


@pytest.mark.timeout(120)
def test_extraction_workers_do_not_outlive_a_killed_campaign(
    tiny_root: Path, tmp_path: Path
) -> None:
    """Extraction's worker processes leave a few seconds after it (loky's default: 5 idle
    minutes), so a campaign killed with SIGKILL during its trials leaves no process behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    psutil = pytest.importorskip("psutil")
    from hpo.campaign.objective import EXTRACT_WORKER_IDLE

    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from hpo.campaign import CampaignConfig\n"
        "from hpo.campaign.objective import build_objective\n"
        f"cfg = CampaignConfig(data_root=Path({str(tiny_root)!r}), name='k', "
        f"runs_dir=Path({str(tmp_path / 'runs')!r}), cache_dir=Path({str(tmp_path / 'c')!r}), "
        "collections=('tile:xla', 'layout:xla:default'))\n"
        "build_objective(cfg, n_jobs=2)\n"
        "print('built', flush=True)\n"
        "time.sleep(300)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "built"
        time.sleep(EXTRACT_WORKER_IDLE + 3)  # trials would be running by now
        children = psutil.Process(proc.pid).children(recursive=True)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
        if not alive:
            break
        time.sleep(0.5)
    assert not alive, [c.cmdline()[:3] for c in alive]


def test_trials_share_binned_datasets_of_memmapped_tables(tiny_tables, tmp_path: Path) -> None:
    import dataclasses

    tables = {}
    for (family, split), table in tiny_tables.items():
        np.save(tmp_path / f"{family}-{split}.npy", table.X)
        X = np.load(tmp_path / f"{family}-{split}.npy", mmap_mode="r")
        tables[(family, split)] = dataclasses.replace(table, X=X)
    where = tmp_path / "datasets"
    settings = ObjectiveSettings(collections=("tile:xla",), max_budget=5, dataset_dir=str(where))
    cost, _ = RankerObjective(settings, tables)({"learning_rate": 0.1}, seed=0)
    assert len(list(where.glob("*.bin"))) == 1
    again, info = RankerObjective(settings, tables)({"learning_rate": 0.1}, seed=0)
    assert again == cost
    assert info["datasets_reused"] == 0  # a new process: loaded from disk, not from memory
    assert len(list(where.glob("*.bin"))) == 1


def test_a_family_trains_after_the_previous_familys_booster_is_freed(
    tiny_tables, monkeypatch
) -> None:
    """A trial's families train one after the other; a LightGBM Booster keeps its tree
    learner's buffers while it lives, so the first family's must be gone before the next
    trains (a trial's peak is then one family's, not the sum:
    docs/benchmarks.md#speed-and-memory)."""
    import weakref

    import hpo.campaign.objective as objective_module

    real = objective_module.train_family
    boosters: list[weakref.ref] = []
    alive_at_start: list[int] = []

    def watched(*args, **kwargs):  # no gc.collect(): a campaign frees by reference counts
        alive_at_start.append(sum(ref() is not None for ref in boosters))
        fit = real(*args, **kwargs)
        boosters.append(weakref.ref(fit.ranker.booster_))
        return fit

    monkeypatch.setattr(objective_module, "train_family", watched)
    obj = RankerObjective(ObjectiveSettings(collections=COLLECTIONS, max_budget=20), tiny_tables)
    obj(HP, seed=0, budget=20)
    assert alive_at_start == [0, 0]  # at the start of each family (tile and layout)


def test_a_trial_gives_back_its_memory_even_when_it_fails(tiny_tables, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(objective_module, "release_freed_memory", lambda: calls.append(1))
    obj = RankerObjective(ObjectiveSettings(collections=("tile:xla",)), tiny_tables)
    obj({"learning_rate": 0.1}, seed=0, budget=4)
    assert calls == [1]
    with pytest.raises(UsageError, match="without feature tables"):
        RankerObjective(ObjectiveSettings(collections=("tile:xla",)))({}, seed=0)
    assert calls == [1, 1]


@pytest.mark.parametrize("split", ["train", "valid"])
def test_a_collection_without_labeled_graphs_is_refused_before_any_trial(
    tmp_path: Path, split: str
) -> None:
    """Every trial once crashed with ``ConfigError: y: ...`` on such a root."""
    from graphs import write_tile

    from hpo.campaign.config import CampaignConfig
    from hpo.campaign.objective import build_objective

    root = tmp_path / "data"
    for seed, each in enumerate(("train", "valid")):
        zero = {"config_runtime": np.zeros(30, np.int64)} if each == split else {}
        ones = {"config_runtime_normalizers": np.ones(30, np.int64)} if each == split else {}
        write_tile(root / "npz/tile/xla" / each / "g.npz", seed=seed, **zero, **ones)
    cfg = CampaignConfig(
        data_root=root, name="x", runs_dir=tmp_path / "runs", collections=("tile:xla",),
        cache_dir=tmp_path / "cache",
    )  # fmt: skip
    with pytest.raises(ConfigError, match=rf"no labeled tile:xla graph in {split} \(every file"):
        build_objective(cfg, n_jobs=1)


def test_a_valid_graph_without_a_ranking_is_left_out_and_recorded(tiny_tables) -> None:
    """Its tau 0 once went into the trial's score; the trial's info names it, and the
    campaign's summary says so (``unranked_notes``)."""
    import dataclasses

    from hpo.campaign.lifecycle.preflight import unranked_notes

    c = "layout:xla:random"
    valid = tiny_tables[("layout", "valid")]
    graphs = [i for i, ref in enumerate(valid.graphs) if ref.collection == c and ref.labeled]
    assert len(graphs) == 2

    def trial(flat: int | None) -> dict:
        tables = dict(tiny_tables)
        if flat is not None:
            target = np.array(valid.target, dtype=np.float64)
            target[np.asarray(valid.group) == flat] = 1000.0
            tables[("layout", "valid")] = dataclasses.replace(valid, target=target)
        objective = RankerObjective(ObjectiveSettings(collections=(c,), max_budget=20), tables)
        return objective(HP, seed=0, budget=20)[1]

    both, first_flat, second_flat = trial(None), trial(graphs[0]), trial(graphs[1])
    assert "unranked" not in both
    assert first_flat["unranked"] == [f"{c}/{valid.graphs[graphs[0]].stem}"]
    # each mean is the other graph's tau alone: together, twice the mean of both
    alone = first_flat["metrics"][c] + second_flat["metrics"][c]
    assert alone == pytest.approx(2 * both["metrics"][c])

    def logged(info: dict) -> Trial:
        return Trial(trial=0, config={}, budget=20.0, status="SUCCESS", info=info)

    notes = unranked_notes([logged({}), logged(first_flat), logged({})])
    assert notes == [
        "1 labeled graph(s) carry no ranking (one config, or every runtime equal: no "
        f"prediction can order them) and are left out of the means: {first_flat['unranked'][0]}"
    ]


def test_a_trial_records_the_blend_shares_its_prior_chose(
    tiny_tables, monkeypatch, tmp_path
) -> None:
    """What an export on train+valid (or of a cv run) blends at: the shares of the prior the
    trial scored with, the same as the prior saved beside its booster."""
    import dataclasses
    import json

    from hpo.ranking.prior.learned import LearnedPrior

    real = objective_module.train_family
    x = "layout:xla:random"

    def chose_a_half(*args, **kwargs):  # a share no fit on these rows would choose
        fit = real(*args, **kwargs)
        if fit.prior is None:
            return fit
        return dataclasses.replace(fit, prior=fit.prior.with_shares({x: 0.5}))

    monkeypatch.setattr(objective_module, "train_family", chose_a_half)
    settings = ObjectiveSettings(collections=COLLECTIONS, max_budget=20, model_dir=str(tmp_path))
    _, info = RankerObjective(settings, tiny_tables)(
        {**HP, "estimate_blend": True, "estimate_weight": 0.5}, seed=0
    )
    assert info["blend_shares"] == {"layout": {x: 0.5}}
    (side,) = tmp_path.glob("*.prior.json")  # tile blends no prior
    saved = LearnedPrior.from_dict(json.loads(side.read_text()), str(side))
    assert saved.chosen_shares() == info["blend_shares"]["layout"]
    _, off = RankerObjective(settings, tiny_tables)(
        {**HP, "estimate_blend": False, "estimate_weight": 0.5}, seed=0
    )
    assert "blend_shares" not in off
