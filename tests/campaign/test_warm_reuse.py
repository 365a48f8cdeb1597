"""A warm start from a run of the same problem scores the source's best booster again."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hpo.campaign.warm_reuse import (
    SAME_PROBLEM,
    adopt_sources,
    rescored,
    reuse_entries,
    reuse_record,
)
from hpo.errors import ConfigError
from hpo.ranking.fit_options import FitOptions
from hpo.runs.boosters import BoosterStore
from hpo.runs.folder import read_trials
from hpo.runs.history import load_run

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

    import hpo.campaign.run as run_module
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
    assert "boosters" in _campaign(cfg.run_dir)["warm_start"]["reuse"]
    first = read_trials(cfg.run_dir / "trials.jsonl")[0]
    assert first["status"] == "SUCCESS"
    assert "reused" not in first["info"]
    assert first["info"]["rounds_trained"] > 0
    assert not list((cfg.run_dir / "boosters").glob(".*"))  # no stray copy


def test_reuse_record_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hpo.campaign.warm_reuse as module

    class Saved(dict):  # a campaign.json's config as read_campaign gives it
        def to_dict(self) -> dict[str, Any]:
            return dict(self)

    def read(folder: Path) -> dict[str, Any]:
        data = json.loads((folder / "campaign.json").read_text())
        return {**data, "config": Saved(data["config"])}

    monkeypatch.setattr(module, "read_campaign", read)
    warm = {"baseline": {"a": 1}, "baseline_trial": {"config": {"a": 1}, "budget": 12.0}}
    record = {
        "data_fingerprint": "f",
        "config": {k: 1 for k in SAME_PROBLEM} | {"cv": 0, "max_budget": 12.0},
        "versions": {"lightgbm": "4"},
    }
    src = tmp_path / "src"
    src.mkdir()

    def refused(theirs: dict[str, Any], mine: dict[str, Any] = record, w: Any = warm) -> str:
        (src / "campaign.json").write_text(json.dumps(theirs))
        return reuse_record(w, mine, src)["refused"]

    assert refused({**record, "data_fingerprint": "g"}) == "its data differ"
    assert refused({**record, "versions": {"lightgbm": "3"}}) == "another LightGBM trained it"
    assert refused({**record, "versions": ["x"]}) == "its package versions are unreadable"
    assert refused(record, w={**warm, "baseline": {"a": 2}}).startswith("its best changed")
    late = {**warm, "baseline_trial": {"config": {"a": 1}, "budget": 4.0}}
    assert refused(record, w=late) == "its best did not reach the largest budget"
    cv = {**record, "config": {**record["config"], "cv": 3}}
    assert refused(cv, mine=cv) == "cross-validation keeps no boosters"
    assert reuse_record(warm, record, None) == {"refused": "no source gave the baseline"}
    monkeypatch.undo()
    (src / "campaign.json").write_text("{")
    assert "campaign.json" in reuse_record(warm, record, src)["refused"]


def test_the_run_holds_its_sources_boosters_from_the_start(tmp_path: Path) -> None:
    """Copied as the run starts: a resume scores that copy, whatever became of the source
    (another problem's run may have replaced it)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "a-12.txt").write_text("tile booster")
    (src / "a-12.prior.json").write_text("{}")
    (src / "b-12.txt").write_text("layout booster")
    reuse = {
        "size": 12,
        "boosters": {"tile": str(src / "a-12.txt"), "layout": str(src / "b-12.txt")},
    }
    saved = {"warm_start": {"baseline": {"a": 1}, "reuse": reuse}}
    run = tmp_path / "run"
    assert adopt_sources(saved, run) == 2
    for path in src.iterdir():
        path.write_text("another problem's")
    entries = reuse_entries(saved, run)
    assert [e[1:3] for e in entries] == [("layout", 12), ("tile", 12)]
    assert [Path(e[3]).read_text() for e in entries] == ["layout booster", "tile booster"]
    assert all(Path(e[3]).parent == run / "boosters" for e in entries)
    assert (run / "boosters" / "warm-tile-12.prior.json").read_text() == "{}"
    # a record naming other families, or a path the run cannot read, copies nothing
    odd = {"size": 12, "boosters": {"../x": str(src / "a-12.txt"), "tile": str(tmp_path / "no")}}
    assert adopt_sources({"warm_start": {"reuse": odd}}, tmp_path / "other") == 0


def test_reuse_entries_read_the_record(tmp_path: Path) -> None:
    base = {"a": 1}
    saved = {"warm_start": {"baseline": base, "reuse": {"size": 12, "boosters": {"tile": "/t"}}}}
    (entry,) = reuse_entries(saved, tmp_path)
    assert entry[1:] == ("tile", 12, str(tmp_path / "boosters" / "warm-tile-12.txt"))
    assert reuse_entries({"warm_start": {"reuse": {"refused": "x"}}}, tmp_path) == ()
    assert reuse_entries({}, tmp_path) == ()
    bad = {"warm_start": {"baseline": base, "reuse": {"size": "12", "boosters": {}}}}
    with pytest.raises(ConfigError, match=f"{tmp_path / 'campaign.json'}: .*malformed 'reuse'"):
        reuse_entries(bad, tmp_path)


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
    from hpo.campaign.warm_start import warm_start_record
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
    warm_start_record({"warm_start": warm}, space, lines.append)
    assert len(lines) == 1
    assert said in lines[0]
