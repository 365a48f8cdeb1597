"""Warm starts (hpo.campaign.seeding.warm_start): mapping onto a new space, seeding, per-subset,
resume.

Campaigns run the toy objectives (tests/toy_objectives.py), which read only learning_rate
and num_leaves, so a run over ``lambdarank`` can seed one over ``lambdarank_small``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from toy_objectives import InterruptAfter, ToyObjective, run_toy_with_output, toy_config
from toy_objectives import run_toy as _run

from hpo.campaign.seeding.warm_start import (
    WARM_CONFIGS,
    map_config,
    warm_configs,
    warm_start_record,
)
from hpo.errors import ConfigError, UsageError
from hpo.ranking.hyperparameters import LAYOUT_OBJECTIVE_KEY, TILE_OBJECTIVE_KEY
from hpo.ranking.spaces import load_space, space_to_dict
from hpo.runs.incumbent import config_key
from hpo.runs.record.campaign_file import CampaignRecord
from hpo.runs.record.folder import read_json, read_trials
from hpo.runs.views.history import load_run

TWO = ("tile:xla", "layout:xla:default")


@pytest.fixture
def data_root(two_collection_root: Path) -> Path:
    return two_collection_root


def _keys(configs: list[dict[str, Any]]) -> list[str]:
    return [config_key(c) for c in configs]


def _others(best: str, rest: list[str]) -> list[str]:
    """The warm configurations after the baseline ``best``: the default first, unless the
    baseline is the default."""
    default = config_key(_default())
    return rest if best == default else [default, *(k for k in rest if k != default)]


def _top(run_dir: Path, space: str = "lambdarank_small") -> list[str]:
    """The configs the source's best trials map to in ``space`` (the expected seeds)."""
    new = load_space(space)
    return [config_key(map_config(t.config, new)[0]) for t in load_run(run_dir).top(WARM_CONFIGS)]


# --- mapping ------------------------------------------------------------------------------


def test_map_keeps_shared_values_and_defaults_the_rest() -> None:
    small = load_space("lambdarank_small")
    source = dict(load_space("lambdarank").get_default_configuration())
    source.update(learning_rate=0.2, num_leaves=99, max_bin=63)  # max_bin: not in small
    mapped, counts = map_config(source, small)
    assert mapped is not None
    assert mapped["learning_rate"] == 0.2
    assert mapped["num_leaves"] == 99
    assert "max_bin" not in mapped
    # the truncations are inactive under the default objectives, in the source and the map
    inactive = {"tile_truncation_level", "lambdarank_truncation_level"}
    assert set(mapped) == set(small.keys()) - inactive
    assert counts == {"kept": len(small.keys()) - len(inactive), "clipped": 0, "dropped": 0}


def test_map_clips_numbers_drops_unknown_choices_and_reapplies_conditions() -> None:
    full = load_space("lambdarank")
    source = dict(full.get_default_configuration())
    # out of range, a choice the space lacks, and a child whose parent now says inactive
    source.update(learning_rate=0.9, num_leaves=3, bagging_freq=7, bagging_fraction=0.7)
    mapped, counts = map_config(source, full)
    assert mapped is not None
    assert mapped["learning_rate"] == 0.3
    assert mapped["num_leaves"] == 7
    assert mapped["bagging_freq"] == full["bagging_freq"].default_value == 0
    assert "bagging_fraction" not in mapped  # inactive under bagging_freq 0
    assert counts["clipped"] == 2
    assert counts["dropped"] == 1
    # a missing child of an active parent takes its default
    source.update(bagging_freq=5)
    del source["bagging_fraction"]
    mapped, _ = map_config(source, full)
    assert mapped is not None
    assert mapped["bagging_fraction"] == full["bagging_fraction"].default_value


@pytest.mark.parametrize(
    ("new_key", "old_key", "old_value", "own_value"),
    [
        ("estimate_weight_default_collections", "estimate_weight", 0.4, 6.0),
        ("tile_truncation_level", "lambdarank_truncation_level", 300, 12),
        ("tile_label_levels", "label_levels", 20, 8),
        ("tile_extra_trees", "extra_trees", True, False),
    ],
)
def test_a_source_from_before_a_split_key_keeps_the_older_keys_value_there(
    new_key: str, old_key: str, old_value: float, own_value: float
) -> None:
    """A source without ``new_key`` used ``old_key``'s value where ``new_key`` now applies
    (the default collections' blend, the tile family's truncation): mapped, it keeps doing
    so instead of taking the new space's default."""
    full = load_space("lambdarank")
    source = dict(full.get_default_configuration())
    # a source from before both keys and before layout's objective (so it trained lambdarank)
    for key in (new_key, TILE_OBJECTIVE_KEY, LAYOUT_OBJECTIVE_KEY):
        source.pop(key, None)
    source[old_key] = old_value
    mapped, _ = map_config(source, full)
    assert mapped is not None
    assert mapped[old_key] == mapped[new_key] == old_value
    assert full[new_key].default_value != old_value  # not the default by chance
    # a source that has the key keeps its own value
    source[new_key] = own_value
    mapped, _ = map_config(source, full)
    assert mapped is not None
    assert (mapped[old_key], mapped[new_key]) == (old_value, own_value)


def test_a_source_from_before_extra_trees_trained_both_families_without_them() -> None:
    """Runs made before ``extra_trees`` was in the spaces trained LightGBM's default (off):
    mapped onto a space whose default is on for layout, they keep them off in both families."""
    full = load_space("lambdarank")
    assert full["extra_trees"].default_value is True
    source = dict(full.get_default_configuration())
    del source["extra_trees"], source["tile_extra_trees"]
    mapped, _ = map_config(source, full)
    assert mapped is not None
    assert (mapped["extra_trees"], mapped["tile_extra_trees"]) == (False, False)
    # one that spelled it with LightGBM's alias trained tile with its value, not with off
    mapped, _ = map_config({**source, "extra_tree": True}, full)
    assert mapped is not None
    assert mapped["tile_extra_trees"] is True


def test_a_source_without_the_tile_objective_trained_tile_with_lambdarank() -> None:
    """Runs made before ``tile_objective`` trained tile with lambdarank at their truncation:
    mapped onto a space whose default is another objective, they keep doing so."""
    full = load_space("lambdarank")
    assert full[TILE_OBJECTIVE_KEY].default_value != "lambdarank"
    source = dict(full.get_default_configuration())
    del source[TILE_OBJECTIVE_KEY]
    source["lambdarank_truncation_level"] = 300
    mapped, _ = map_config(source, full)
    assert mapped is not None
    assert (mapped[TILE_OBJECTIVE_KEY], mapped["tile_truncation_level"]) == ("lambdarank", 300)
    # a source with the key keeps it, and the truncation it does not use stays inactive
    source[TILE_OBJECTIVE_KEY] = "rank_xendcg"
    mapped, _ = map_config(source, full)
    assert mapped is not None
    assert mapped[TILE_OBJECTIVE_KEY] == "rank_xendcg"
    assert "tile_truncation_level" not in mapped


# --- seeding ------------------------------------------------------------------------------


def test_warm_start_from_another_space_seeds_the_shared_hyperparameters(
    data_root: Path, runs: Path
) -> None:
    source = toy_config(runs, data_root, name="old", space="lambdarank", trials=20)
    _run(source)
    cfg = toy_config(runs, data_root, name="new", optimizer="bo", trials=14)
    _run(cfg, warm_start=["old"])
    record = read_json(cfg.run_dir / "campaign.json")["warm_start"]
    best, *rest = dict.fromkeys(_top(source.run_dir))
    expected = _others(best, rest)
    assert config_key(record["baseline"]) == best
    assert record["baseline_run"] == "old"
    assert record["baseline_is_default"] is False
    assert _keys(record["configs"]) == expected
    assert record["sources"] == [
        {
            "run": "old",
            "path": str(source.run_dir),
            "configs": 1 + len(rest),
            "clipped": 0,
            "dropped": 0,
        }
    ]
    # the source's best is the baseline, not the default; bo runs the others first, right
    # after it, each at the full budget
    trials = read_trials(cfg.run_dir / "trials.jsonl")
    assert trials[0]["baseline"]
    assert config_key(trials[0]["config"]) == best != config_key(_default())
    assert sum(r["baseline"] for r in trials) == 1
    assert _keys([r["config"] for r in trials[1 : 1 + len(expected)]]) == expected
    assert all(r["budget"] == cfg.max_budget for r in trials)
    run = load_run(cfg.run_dir)
    assert run.baseline is not None
    assert config_key(run.baseline.config) == best
    assert run.baseline_origin == "warm start: best of old"


def _default() -> dict[str, Any]:
    return dict(load_space("lambdarank_small").get_default_configuration())


def test_a_source_whose_best_is_the_default_says_so(data_root: Path, runs: Path) -> None:
    # the toy objective's least cost is the space's default: the source never beats it
    source = toy_config(runs, data_root, name="old", trials=8)
    _run(source)
    cfg = toy_config(runs, data_root, name="new", trials=8)
    _, out = run_toy_with_output(cfg, warm_start=["old"])
    record = read_json(cfg.run_dir / "campaign.json")["warm_start"]
    assert record["baseline"] == _default()
    assert record["baseline_is_default"] is True
    assert config_key(_default()) not in _keys(record["configs"])  # never a seed as well
    origin = "warm start: best of old = the default configuration"
    assert load_run(cfg.run_dir).baseline_origin == origin
    assert "baseline the best of old = the default configuration" in out
    assert f"baseline ({origin}, budget" in out  # the summary


def test_crashed_trials_never_seed(data_root: Path, runs: Path) -> None:
    source = toy_config(runs, data_root, name="old", trials=25)
    _run(source, ToyObjective(crash_above_leaves=40))
    crashed = {config_key(t.config) for t in load_run(source.run_dir).crashed}
    assert crashed
    cfg = toy_config(runs, data_root, name="new", trials=15)
    _run(cfg, warm_start=[str(source.run_dir)])  # a folder works as well as a name
    seeds = _keys(read_json(cfg.run_dir / "campaign.json")["warm_start"]["configs"])
    assert seeds
    assert not set(seeds) & crashed
    # model-free Hyperband races them in its brackets like its own samples
    ran = {config_key(r["config"]) for r in read_trials(cfg.run_dir / "trials.jsonl")}
    assert set(seeds) <= ran


def test_per_subset_runs_seed_each_subset_from_the_matching_one(
    data_root: Path, runs: Path
) -> None:
    settings: dict[str, Any] = {"collections": TWO, "per": "collection", "trials": 10}
    source = toy_config(runs, data_root, name="old", **settings)
    _run(source)
    cfg = toy_config(runs, data_root, name="new", **settings)
    _run(cfg, warm_start=["old"])
    parent = read_json(cfg.run_dir / "campaign.json")["warm_start"]
    assert parent == {"sources": [{"run": "old", "path": str(source.run_dir)}]}
    for subset in ("tile-xla", "layout-xla-default"):
        record = read_json(cfg.run_dir / subset / "campaign.json")["warm_start"]
        assert [s["path"] for s in record["sources"]] == [str(source.run_dir / subset)]
        best, *rest = dict.fromkeys(_top(source.run_dir / subset))
        assert config_key(record["baseline"]) == best
        assert record["baseline_run"] == f"old/{subset}"
        assert _keys(record["configs"]) == _others(best, rest)
        first = read_trials(cfg.run_dir / subset / "trials.jsonl")[0]
        assert first["baseline"]
        assert config_key(first["config"]) == best
    # a single campaign seeded by a per-subset run takes every subset's best
    single = toy_config(runs, data_root, name="single", trials=30)
    _run(single, warm_start=["old"])
    record = read_json(single.run_dir / "campaign.json")["warm_start"]
    assert record["sources"][0]["run"] == "old"
    both = set(_top(source.run_dir / "tile-xla")) | set(_top(source.run_dir / "layout-xla-default"))
    assert set(_keys(record["configs"])) == both - {config_key(_default())}
    # each subset's best was tuned for part of the data: the default stays the baseline
    assert record["baseline"] is None
    first = read_trials(single.run_dir / "trials.jsonl")[0]
    assert first["baseline"]
    assert first["config"] == _default()
    assert load_run(single.run_dir).baseline_origin == "default configuration"


def test_a_resumed_warm_started_run_keeps_its_seeds_without_the_sources(
    data_root: Path, runs: Path
) -> None:
    source = toy_config(runs, data_root, name="old", trials=20)
    _run(source)
    cfg = toy_config(runs, data_root, name="new", optimizer="bo", trials=10)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(3), warm_start=["old"])
    saved = read_json(cfg.run_dir / "campaign.json")["warm_start"]
    shutil.rmtree(source.run_dir)  # a resume never reads the sources again
    result = _run(cfg, InterruptAfter(10**6), resume=True)  # the same target class
    assert read_json(cfg.run_dir / "campaign.json")["warm_start"] == saved
    trials = read_trials(cfg.run_dir / "trials.jsonl")
    assert result.n_trials == len(trials) == 10
    seeds = _keys(saved["configs"])
    assert trials[0]["baseline"]
    assert trials[0]["config"] == saved["baseline"]
    assert _keys([r["config"] for r in trials[1 : 1 + len(seeds)]]) == seeds
    assert len({config_key(r["config"]) for r in trials}) == 10  # nothing ran twice


def _record(**keys: Any) -> CampaignRecord:
    """A run's record holding ``keys`` (the settings are not read here)."""
    return CampaignRecord.from_json({"format": 2, "config": {}, **keys})


def test_warm_start_errors(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, name="new")
    with pytest.raises(UsageError, match="no run 'nope' in"):
        _run(cfg, warm_start=["nope"])
    assert not cfg.run_dir.exists()
    (runs / "plain").mkdir(parents=True)
    with pytest.raises(UsageError, match="no run 'plain' in"):
        _run(cfg, warm_start=["plain"])
    with pytest.raises(UsageError, match="--warm-start seeds a new campaign"):
        _run(cfg, warm_start=["plain"], resume=True)


def test_seeds_are_distinct_across_sources(data_root: Path, runs: Path) -> None:
    source = toy_config(runs, data_root, name="old", trials=15)
    _run(source)
    record = warm_configs(
        [source.run_dir, source.run_dir], load_space("lambdarank_small"), runs, per_source=3
    )
    assert record.baseline is not None
    assert record.configs is not None
    given = [record.baseline, *record.configs]
    assert len(given) == len(set(_keys(given))) <= 3 + 1  # the source's 3, and the default
    assert [s.configs for s in record.sources][1] == 0


def test_a_record_from_before_warm_baselines_keeps_the_default_baseline() -> None:
    """Runs warm-started before the source's best became the baseline resume as they began."""
    space = load_space("lambdarank_small")
    seed = dict(space.sample_configuration())
    logged: list[str] = []
    old = warm_start_record(
        _record(warm_start={"sources": [], "configs": [seed]}), space, logged.append
    )
    assert old.baseline is None
    assert [dict(c) for c in old.configs] == [seed]
    assert "baseline the default configuration" in logged[0]
    assert _record(warm_start={"configs": [seed]}).baseline_origin == "default configuration"
    new = warm_start_record(
        _record(warm_start={"sources": [], "baseline": seed, "configs": []}), space, logged.append
    )
    assert new.baseline is not None
    assert dict(new.baseline) == seed
    assert _record(warm_start={"baseline": seed, "baseline_run": "e0"}).baseline_origin == (
        "warm start: best of e0"
    )
    # a record from before baseline_is_default: its baseline is compared with the default of
    # the space saved beside it
    default = dict(space.get_default_configuration())
    saved = {"space": space_to_dict(space)}
    before = {"baseline": default, "baseline_run": "e0", "configs": []}
    assert _record(**saved, warm_start=before).baseline_origin == (
        "warm start: best of e0 = the default configuration"
    )
    assert _record(**saved, warm_start={**before, "baseline": seed}).baseline_origin == (
        "warm start: best of e0"
    )
    assert _record(warm_start=before).baseline_origin == "warm start: best of e0"  # no space
    logged.clear()
    warm_start_record(_record(**saved, warm_start=before), space, logged.append)
    assert "baseline the best of e0 = the default configuration" in logged[0]
    with pytest.raises(ConfigError, match="key 'warm_start': expected baseline as an object"):
        _record(warm_start={"baseline": [1], "configs": []})
    with pytest.raises(ConfigError, match="key 'warm_start': expected configs as a list"):
        warm_start_record(_record(warm_start={"baseline": seed}), space, logged.append)


def test_subsets_without_a_matching_source_subset_keep_the_default_baseline(
    data_root: Path, runs: Path
) -> None:
    """--per family seeded by a --per collection run: no subset of the source has the name of
    a new subset, so each new subset gets every source subset's best, none as its baseline."""
    settings: dict[str, Any] = {"collections": TWO, "trials": 8}
    source = toy_config(runs, data_root, name="old", per="collection", **settings)
    _run(source)
    cfg = toy_config(runs, data_root, name="new", per="family", **settings)
    _run(cfg, warm_start=["old"])
    both = set(_top(source.run_dir / "tile-xla")) | set(_top(source.run_dir / "layout-xla-default"))
    for subset in ("tile", "layout"):
        record = read_json(cfg.run_dir / subset / "campaign.json")["warm_start"]
        assert [s["path"] for s in record["sources"]] == [str(source.run_dir)]
        assert record["baseline"] is None
        assert set(_keys(record["configs"])) == both - {config_key(_default())}
        first = read_trials(cfg.run_dir / subset / "trials.jsonl")[0]
        assert first["baseline"]
        assert first["config"] == _default()
