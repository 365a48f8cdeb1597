"""A warm start from a run of the same problem scores the source's best booster again."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hpo.campaign import CampaignConfig, SavedCampaign
from hpo.campaign.seeding.warm_reuse import (
    rescored,
    reuse_entries,
    reuse_record,
    settle_reuse,
)
from hpo.errors import ConfigError
from hpo.ranking.model.fit_options import FitOptions
from hpo.runs.record.boosters import BoosterStore
from hpo.runs.record.campaign_file import (
    CampaignRecord,
    Reuse,
    SourceTrial,
    WarmStartRecord,
    read_campaign_file,
    write_campaign_file,
)
from hpo.runs.record.folder import read_trials
from hpo.runs.record.trial import trials_of
from hpo.runs.views.history import load_run

COLLECTIONS = ("tile:xla", "layout:xla:random")


def _cfg(root: Path, base: Path, name: str, seed: int, **changes: Any) -> Any:
    from hpo.campaign import CampaignConfig

    return CampaignConfig(
        data_root=root,
        name=name,
        collections=changes.pop("collections", COLLECTIONS),
        runs_dir=base / "runs",
        trials=changes.pop("trials", 6),
        optimizer="random-hb",
        min_budget=4,
        max_budget=changes.pop("max_budget", 12),
        eta=3,
        seed=seed,
        cache_dir=base / "cache",
        **changes,
    )


def _run(cfg: Any, warm: tuple[str, ...] = ()) -> Path:
    from rich.console import Console

    from hpo.campaign import run_campaign

    run_campaign(cfg, warm_start=warm, quiet=True, console=Console(file=io.StringIO()))
    return cfg.run_dir


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, tiny_root: Path) -> tuple[Path, Path]:
    """(base folder, source run): a finished real campaign on tiny."""
    base = tmp_path_factory.mktemp("reuse")
    return base, _run(_cfg(tiny_root, base, "src", seed=0))


def _campaign(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "campaign.json").read_text())


@pytest.fixture
def fresh_source(source: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the source run under a test's own runs folder (a test may break it)."""
    _, src = source
    base = tmp_path / "b"
    (base / "runs").mkdir(parents=True)
    shutil.copytree(src, base / "runs" / "src")
    shutil.copytree(src.parent.parent / "cache", base / "cache")
    return base, base / "runs" / "src"


@pytest.mark.slow
def test_the_baseline_is_the_sources_booster_scored_again(
    fresh_source: tuple[Path, Path], tiny_root: Path, tmp_path: Path
) -> None:
    from hpo.cli.main import main

    base, src = fresh_source
    best = load_run(src).top(1)[0]
    assert best.budget == 12.0
    warm = _run(_cfg(tiny_root, base, "warm", seed=7, trials=1), warm=("src",))
    reuse = _campaign(warm)["warm_start"]["reuse"]
    assert reuse["run"] == "src"
    assert reuse["trial"] == best.trial
    assert reuse["size"] == 12
    first = read_trials(warm / "trials.jsonl")[0]
    assert first["baseline"]
    assert first["config"] == best.config
    assert first["info"]["reused"] == ["layout", "tile"]
    assert first["info"]["rounds_trained"] == 0
    assert first["info"]["rounds_reused"] == 24
    assert first["score"] == best.score  # the same booster on the same rows: the same bits
    assert first["metrics"] == best.metrics
    copies = sorted(p.read_bytes() for p in (warm / "boosters").glob("*.txt"))
    assert copies == sorted(Path(p).read_bytes() for p in reuse["boosters"].values())
    # the source may go: the run holds its copy, and export ships the booster it scored
    shutil.rmtree(src / "boosters")
    out = tmp_path / "model"
    assert main(["export", str(warm), "--out", str(out), "--jobs", "1"]) == 0
    meta = json.loads((out / "model.json").read_text())
    assert meta["source"] == "copied"
    assert meta["validation"]["max_abs_difference"] < 1e-9


@pytest.mark.slow
@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"max_budget": 36}, "its max_budget differ"),
        ({"collections": ("tile:xla",)}, "its collections differ"),
        ({"train_configs": 50}, "its train_configs differ"),
    ],
)
def test_another_problem_trains_the_baseline_again(
    fresh_source: tuple[Path, Path], tiny_root: Path, change: dict[str, Any], why: str
) -> None:
    base, _ = fresh_source
    warm = _run(_cfg(tiny_root, base, "warm", seed=7, trials=1, **change), warm=("src",))
    assert _campaign(warm)["warm_start"]["reuse"] == {"refused": why}
    first = read_trials(warm / "trials.jsonl")[0]
    assert first["baseline"]
    assert "reused" not in first["info"]
    assert first["info"]["rounds_trained"] > 0


@pytest.mark.slow
def test_a_source_without_its_boosters_trains_the_baseline_again(
    fresh_source: tuple[Path, Path], tiny_root: Path
) -> None:
    base, src = fresh_source
    shutil.rmtree(src / "boosters")
    warm = _run(_cfg(tiny_root, base, "warm", seed=7, trials=1), warm=("src",))
    refused = _campaign(warm)["warm_start"]["reuse"]["refused"]
    assert refused.startswith("its best's ")
    assert refused.endswith("booster is gone")


@pytest.mark.slow
def test_a_source_gone_after_the_start_trains_the_baseline(
    fresh_source: tuple[Path, Path], tiny_root: Path
) -> None:
    """The boosters vanish between the check and the trial: the baseline trains."""
    from rich.console import Console

    import hpo.campaign.lifecycle.run as run_module
    from hpo.campaign import run_campaign

    base, src = fresh_source
    cfg = _cfg(tiny_root, base, "warm", seed=7, trials=1)

    real = run_module.reuse_record

    def then_gone(*args: Any) -> dict[str, Any]:
        out = real(*args)
        shutil.rmtree(src / "boosters")
        return out

    run_module.reuse_record = then_gone  # type: ignore[assignment]
    try:
        run_campaign(cfg, warm_start=("src",), quiet=True, console=Console(file=io.StringIO()))
    finally:
        run_module.reuse_record = real  # type: ignore[assignment]
    refused = _campaign(cfg.run_dir)["warm_start"]["reuse"]["refused"]  # said, not claimed
    assert refused.startswith("its best's ")
    assert "booster could not be copied" in refused
    first = read_trials(cfg.run_dir / "trials.jsonl")[0]
    assert first["status"] == "SUCCESS"
    assert "reused" not in first["info"]
    assert first["info"]["rounds_trained"] > 0
    assert not list((cfg.run_dir / "boosters").glob(".*"))  # no stray copy


@pytest.mark.slow
def test_a_run_stopped_as_it_started_resumes_with_its_own_copy(
    fresh_source: tuple[Path, Path], tiny_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped while its features were built, the run already holds the source's boosters;
    the source is then replaced by another problem's files, and the resume scores the copy."""
    from rich.console import Console

    import hpo.campaign.objective as objective_module
    from hpo.campaign import run_campaign

    base, src = fresh_source
    best = load_run(src).top(1)[0]
    cfg = _cfg(tiny_root, base, "warm", seed=7, trials=1)
    real = objective_module.build_objective

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(objective_module, "build_objective", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _run(cfg, warm=("src",))
    monkeypatch.setattr(objective_module, "build_objective", real)
    assert len(list((cfg.run_dir / "boosters").glob("warm-*.txt"))) == 2
    for path in (src / "boosters").glob("*.txt"):
        path.write_text("another problem's booster")
    run_campaign(cfg, resume=True, quiet=True, console=Console(file=io.StringIO()))
    first = read_trials(cfg.run_dir / "trials.jsonl")[0]
    assert first["info"]["reused"] == ["layout", "tile"]
    assert first["score"] == best.score


def _mine(tmp_path: Path) -> tuple[SavedCampaign, WarmStartRecord]:
    """A new campaign's record, and a warm start whose baseline is the source's trial 1."""
    cfg = CampaignConfig(
        data_root=tmp_path, name="new", optimizer="random-hb", min_budget=4, max_budget=12, eta=3
    )
    record = CampaignRecord(
        settings=cfg.to_dict(), space={}, data_fingerprint="f", versions={"lightgbm": "4"}
    )
    trial = SourceTrial(trial=1, config={"a": 1}, seed=0, budget=12.0, score=0.5, path=None)
    warm = WarmStartRecord(baseline={"a": 1}, baseline_trial=trial, configs=())
    return SavedCampaign(record, cfg), warm


def test_reuse_record_refusals(tmp_path: Path) -> None:
    mine, warm = _mine(tmp_path)
    src = tmp_path / "src"
    src.mkdir()

    def refused(theirs: CampaignRecord, me: SavedCampaign = mine, w: Any = warm) -> str | None:
        write_campaign_file(src, theirs)
        return reuse_record(w, me, src).refused

    record = mine.record
    assert refused(dataclasses.replace(record, data_fingerprint="g")) == "its data differ"
    lightgbm_3 = dataclasses.replace(record, versions={"lightgbm": "3"})
    assert refused(lightgbm_3) == "another LightGBM trained it"
    unreadable = dataclasses.replace(record, other={"versions": ["x"]})
    assert refused(unreadable) == "its package versions are unreadable"
    fewer = dataclasses.replace(mine.config, fixed_rounds=100)
    other = dataclasses.replace(record, settings=fewer.to_dict())
    assert refused(other) == "its fixed_rounds differ"
    changed = dataclasses.replace(warm, baseline={"a": 2})
    assert str(refused(record, w=changed)).startswith("its best changed")
    assert warm.baseline_trial is not None
    late = dataclasses.replace(
        warm, baseline_trial=dataclasses.replace(warm.baseline_trial, budget=4.0)
    )
    assert refused(record, w=late) == "its best did not reach the largest budget"
    folds = dataclasses.replace(mine.config, cv=3)
    cv = dataclasses.replace(record, settings=folds.to_dict())
    assert refused(cv, me=SavedCampaign(cv, folds)) == "cross-validation keeps no boosters"
    assert refused(record) == "its best's layout booster is gone"  # the same problem
    assert reuse_record(warm, mine, None) == Reuse(refused="no source gave the baseline")
    (src / "campaign.json").write_text("{")
    assert "campaign.json" in str(reuse_record(warm, mine, src).refused)


def _settle_case(tmp_path: Path) -> tuple[Path, CampaignRecord, Path]:
    """(source folder, a new run's saved record naming its two boosters, the new run)."""
    src = tmp_path / "src"
    (src / "boosters").mkdir(parents=True)
    (src / "campaign.json").write_text(json.dumps({"created": 1.0, "data_fingerprint": "f"}))
    (src / "boosters" / "a-12.txt").write_text("tile booster")
    (src / "boosters" / "a-12.prior.json").write_text("{}")
    (src / "boosters" / "b-12.txt").write_text("layout booster")
    reuse = {
        "size": 12,
        "boosters": {
            "tile": str(src / "boosters" / "a-12.txt"),
            "layout": str(src / "boosters" / "b-12.txt"),
        },
        "path": str(src),
        "created": 1.0,
        "data_fingerprint": "f",
    }
    saved = {"format": 2, "config": {}, "warm_start": {"baseline": {"a": 1}, "reuse": reuse}}
    run = tmp_path / "run"
    run.mkdir()
    (run / "campaign.json").write_text(json.dumps(saved))
    return src, CampaignRecord.from_json(saved), run


def test_the_run_holds_its_sources_boosters_from_the_start(tmp_path: Path) -> None:
    """Copied as the run starts: a resume scores that copy, whatever became of the source
    (another problem's run may have replaced it)."""
    src, saved, run = _settle_case(tmp_path)
    assert settle_reuse(saved, run, resume=False, trials=[]) is saved
    for path in (src / "boosters").iterdir():
        path.write_text("another problem's")
    entries = reuse_entries(saved, run)
    assert [e[1:3] for e in entries] == [("layout", 12), ("tile", 12)]
    assert [Path(e[3]).read_text() for e in entries] == ["layout booster", "tile booster"]
    assert all(Path(e[3]).parent == run / "boosters" for e in entries)
    assert (run / "boosters" / "warm-tile-12.prior.json").read_text() == "{}"
    assert settle_reuse(saved, run, resume=True, trials=[]) is saved  # copies there


def _refused_and_recorded(saved: CampaignRecord, run: Path) -> str:
    """The refusal ``settle_reuse`` returned, checked to be what campaign.json now says, with
    no copy left behind."""
    assert saved.warm_start is not None
    assert saved.warm_start.reuse is not None
    why = saved.warm_start.reuse.refused
    assert _campaign(run)["warm_start"]["reuse"] == {"refused": why}
    assert _campaign(run)["warm_start"]["baseline"] == {"a": 1}  # the rest kept
    assert not list((run / "boosters").glob("warm-*"))
    assert reuse_entries(saved, run) == ()
    return str(why)


def test_a_copy_is_both_families_or_neither(tmp_path: Path) -> None:
    src, saved, run = _settle_case(tmp_path)
    (src / "boosters" / "b-12.txt").unlink()  # layout's is gone: tile's copy is removed too
    after = settle_reuse(saved, run, resume=False, trials=[])
    why = _refused_and_recorded(after, run)
    assert why.startswith("its best's layout booster could not be copied (")


def test_a_source_replaced_while_copied_is_refused(tmp_path: Path) -> None:
    """Another problem's run took the source's name between the check and the copy."""
    src, saved, run = _settle_case(tmp_path)
    (src / "campaign.json").write_text(json.dumps({"created": 2.0, "data_fingerprint": "f"}))
    after = settle_reuse(saved, run, resume=False, trials=[])
    assert _refused_and_recorded(after, run) == "its run folder was replaced as this run started"


def test_a_resume_without_the_copies_says_the_baseline_trains(tmp_path: Path) -> None:
    _, saved, run = _settle_case(tmp_path)  # stopped before it copied: no copies in the run
    scored = trials_of([{"baseline": True}])  # the baseline has run: the copies no longer matter
    assert settle_reuse(saved, run, resume=True, trials=scored) is saved
    after = settle_reuse(saved, run, resume=True, trials=[])
    assert _refused_and_recorded(after, run).startswith("its copies in this run are gone")


def test_an_unreadable_source_is_a_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another user's run folder: Python 3.11's is_file re-raises a permission error."""
    src = tmp_path / "src"
    src.mkdir()
    mine, warm = _mine(tmp_path)

    def denied(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(13, "Permission denied")

    import hpo.campaign.seeding.warm_reuse as module

    monkeypatch.setattr(module, "read_campaign", denied)
    assert reuse_record(warm, mine, src) == Reuse(refused=f"{src}: Permission denied")


def test_reuse_entries_read_the_record(tmp_path: Path) -> None:
    def record(warm: dict[str, Any]) -> CampaignRecord:
        path = tmp_path / "campaign.json"
        path.write_text(json.dumps({"format": 2, "config": {}, "warm_start": warm}))
        return read_campaign_file(path)

    base = {"a": 1}
    saved = record({"baseline": base, "reuse": {"size": 12, "boosters": {"tile": "/t"}}})
    (entry,) = reuse_entries(saved, tmp_path)
    assert entry[1:] == ("tile", 12, str(tmp_path / "boosters" / "warm-tile-12.txt"))
    assert reuse_entries(record({"reuse": {"refused": "x"}}), tmp_path) == ()
    assert reuse_entries(CampaignRecord(settings={}), tmp_path) == ()
    with pytest.raises(ConfigError, match=f"{tmp_path / 'campaign.json'}: .*malformed 'reuse'"):
        record({"baseline": base, "reuse": {"size": "12", "boosters": {}}})


def test_adopt_reads_only_a_regular_file_and_leaves_nothing_half_copied(tmp_path: Path) -> None:
    import os

    store = BoosterStore(tmp_path / "boosters")
    fifo = tmp_path / "fifo-12.txt"
    os.mkfifo(fifo)
    link = tmp_path / "link-12.txt"
    link.symlink_to("/dev/zero")
    big = tmp_path / "big-12.txt"
    big.write_bytes(b"x" * 100)
    dest = store.path("k" * 16, 12)
    for source, limit in ((fifo, 1 << 30), (Path("/dev/zero"), 1 << 30), (big, 99)):
        with pytest.raises(OSError, match="not a regular file of at most"):
            store.adopt(source, dest, max_bytes=limit)
    with pytest.raises(OSError, match="symbolic link"):  # the last part is never followed
        store.adopt(link, dest)
    assert not list(store.folder.iterdir())  # no temporary file, no booster
    assert store.adopt(big, store.path("k" * 16, 12), max_bytes=100).read_bytes() == b"x" * 100


def test_rescored_checks_the_copy_before_lightgbm_reads_it(tiny_tables, tmp_path: Path) -> None:
    """A source booster with a split on a column beyond the table's would make LightGBM read
    outside its arrays: it is refused, and the trial trains."""
    from hpo.ranking.training import train_family
    from hpo.runs.incumbent import config_key

    hp = {"learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5}
    train, valid = tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")]
    fit = train_family(train, valid, ["tile:xla"], hp, rounds=3, seed=0)
    good = tmp_path / "good-3.txt"
    fit.ranker.booster_.save_model(str(good))
    store = BoosterStore(tmp_path / "boosters")
    problem = (train, valid, ["tile:xla"], hp)
    reuse = ((config_key(hp), "tile", 3, str(good)),)
    again = rescored(reuse, store, ("k" * 16, 3), problem, FitOptions())
    assert again is not None
    assert again.metrics == fit.metrics
    text = good.read_text()
    evil = tmp_path / "evil-3.txt"
    first = text.index("split_feature=") + len("split_feature=")
    evil.write_text(text[:first] + "99999999 " + text[first:].split(" ", 1)[1])
    bad = ((config_key(hp), "tile", 3, str(evil)),)
    assert rescored(bad, store, ("e" * 16, 3), problem, FitOptions()) is None
    assert not store.path("e" * 16, 3).exists()


def test_rescored_trains_when_lightgbm_or_the_prior_refuse_the_copy(
    tiny_tables, tmp_path: Path
) -> None:
    """Text past ``end of trees`` passes the check but LightGBM parses it (json), and a prior
    that does not parse would score the booster without the source's prior: both train."""
    from hpo.ranking.training import train_family
    from hpo.runs.incumbent import config_key

    hp = {"learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5}
    train, valid = tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")]
    fit = train_family(train, valid, ["tile:xla"], hp, rounds=3, seed=0)
    text = fit.ranker.booster_.model_to_string()
    store = BoosterStore(tmp_path / "boosters")
    problem = (train, valid, ["tile:xla"], hp)
    tail = tmp_path / "tail-3.txt"
    tail.write_text(text.rstrip("\n") + "\npandas_categorical:{\n")
    reuse = ((config_key(hp), "tile", 3, str(tail)),)
    assert rescored(reuse, store, ("t" * 16, 3), problem, FitOptions()) is None
    good = tmp_path / "good-3.txt"
    good.write_text(text)
    good.with_suffix(".prior.json").write_text("{not json")
    reuse = ((config_key(hp), "tile", 3, str(good)),)
    assert rescored(reuse, store, ("p" * 16, 3), problem, FitOptions()) is None
    assert not list(store.folder.iterdir())


def test_rescored_leaves_no_copy_of_an_unreadable_booster(tiny_tables, tmp_path: Path) -> None:
    from hpo.runs.incumbent import config_key

    hp = {"learning_rate": 0.1}
    bad = tmp_path / "src-12.txt"
    bad.write_text("tree\nnot a model\n")
    store = BoosterStore(tmp_path / "boosters")
    problem = (tiny_tables[("tile", "train")], tiny_tables[("tile", "valid")], ["tile:xla"], hp)
    reuse = ((config_key(hp), "tile", 12, str(bad)),)
    assert rescored(reuse, store, ("k" * 16, 12), problem, FitOptions()) is None
    assert not list(store.folder.iterdir())
    bad.unlink()  # another size is not looked for: nothing to read, nothing copied
    assert rescored(reuse, store, ("k" * 16, 36), problem, FitOptions()) is None
    assert not list(store.folder.iterdir())


@pytest.mark.parametrize(
    ("reuse", "said"),
    [
        ({"size": 12, "boosters": {"tile": "/t"}}, "(its booster, scored again)"),
        ({"refused": "its data differ"}, "(trained again: its data differ)"),
        (None, "= the default configuration, then"),
    ],
)
def test_the_log_says_how_the_baseline_is_scored(reuse: Any, said: str) -> None:
    from hpo.campaign.seeding.warm_start import warm_start_record
    from hpo.ranking.spaces import load_space

    space = load_space("lambdarank_small")
    warm: dict[str, Any] = {
        "sources": [{"run": "src", "configs": 1}],
        "baseline": dict(space.get_default_configuration()),
        "baseline_run": "src",
        "baseline_is_default": True,
        "configs": [],
    }
    if reuse is not None:
        warm["reuse"] = reuse
    lines: list[str] = []
    warm_start_record(
        CampaignRecord.from_json({"format": 2, "config": {}, "warm_start": warm}),
        space,
        lines.append,
    )
    assert len(lines) == 1
    assert said in lines[0]
