"""The baseline's neighbours: one hyperparameter changed each, none inert for the campaign,
the same for a seed, and first in the initial design SMAC runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ConfigSpace import Configuration
from ConfigSpace.util import get_one_exchange_neighbourhood
from toy_objectives import InterruptAfter, ToyObjective, toy_config
from toy_objectives import run_toy_with_output as _run

from hpo.campaign.seeding import local_design
from hpo.campaign.seeding.local_design import (
    LOCAL_DESIGN_KEY,
    local_configs,
    local_design_record,
    saved_local_design,
    trained_view,
)
from hpo.data.load import COLLECTIONS
from hpo.errors import ConfigError
from hpo.ranking.hyperparameters import TILE_KEYS
from hpo.ranking.spaces import load_space
from hpo.runs.record.campaign_file import CampaignRecord
from hpo.runs.record.folder import read_json, read_trials

LAYOUT = tuple(c for c in COLLECTIONS if c.startswith("layout:"))


def _changed(config: Configuration, base: Configuration) -> set[str]:
    a, b = dict(config), dict(base)
    return {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)}


def _plain(config: Any) -> dict[str, Any]:
    return {k: (v.item() if hasattr(v, "item") else v) for k, v in dict(config).items()}


def _default(space: str = "lambdarank") -> Configuration:
    return load_space(space).get_default_configuration()


def test_each_neighbour_moves_one_hyperparameter_and_they_differ() -> None:
    base = _default()
    local = local_configs(base, 6, COLLECTIONS, seed=0)
    assert len(local) == len(set(local)) == 6
    for config in local:
        moved = _changed(config, base)
        # a conditional child (bagging_fraction under bagging_freq) comes and goes with its parent
        parents = base.config_space.parents_of
        roots = {m for m in moved if not {p.name for p in parents[m]} & moved}
        assert len(roots) == 1, moved
    assert local_configs(base, 6, COLLECTIONS, seed=0) == local  # a resume gets the same
    assert local_configs(base, 6, COLLECTIONS, seed=1) != local


@pytest.mark.parametrize(
    ("collections", "inert"),
    [
        (LAYOUT, set(TILE_KEYS)),
        # tile is never blended, and its default objective (rank_xendcg) has no truncation
        (
            ("tile:xla",),
            {
                "estimate_weight_default_collections",
                "estimate_weight",
                "estimate_blend",
                "label_levels",
                "lambdarank_truncation_level",
                "extra_trees",
            },
        ),
        (("layout:xla:random",), {*TILE_KEYS, "estimate_weight_default_collections"}),
    ],
)
def test_no_neighbour_only_moves_what_the_collections_do_not_train_with(
    collections: tuple[str, ...], inert: set[str]
) -> None:
    base = _default()
    # every neighbour the space has: one per hyperparameter (and per other categorical choice)
    local = local_configs(base, 100, collections, seed=0)
    assert local
    for config in local:
        moved = _changed(config, base)
        assert not moved <= inert, moved
        assert any(
            trained_view(dict(config), c) != trained_view(dict(base), c) for c in collections
        )
    # the inert moves exist in the space, so the filter is what kept them out
    everything = local_configs(base, 100, COLLECTIONS, seed=0)
    assert any(_changed(c, base) <= inert for c in everything)


def test_trained_view_compares_numpy_scalars_with_plain_numbers() -> None:
    drawn = get_one_exchange_neighbourhood(_default(), seed=0, num_neighbors=1)
    near = [c for _, c in zip(range(3), drawn, strict=False)]  # ConfigSpace's numpy values
    for config in near:
        plain = _plain(config)
        assert any(type(v) is not type(plain[k]) for k, v in dict(config).items())
        for c in COLLECTIONS:
            assert trained_view(plain, c) == trained_view(dict(config), c)


def test_neighbours_hold_plain_values_a_flipped_boolean_too() -> None:
    """ConfigSpace gives a flipped boolean as numpy's bool, and SMAC's saved meta (which
    lists the initial design's extra configurations) could not write it: a campaign whose
    neighbours flipped ``estimate_blend`` or ``relative_features`` crashed as it started."""
    base = _default()
    every = local_configs(base, 100, COLLECTIONS, seed=0)
    flipped = [c for c in every if not c["estimate_blend"] or not c["relative_features"]]
    assert flipped
    for config in every:
        assert all(type(v) in (bool, int, float, str) for v in dict(config).values())
        json.dumps(dict(config))


def test_none_asked_none_given() -> None:
    assert local_configs(_default(), 0, COLLECTIONS, seed=0) == []


def test_the_neighbours_run_first_after_the_baseline(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=7, optimizer="model-hb", n_init=4, n_local=3)
    _run(cfg, ToyObjective())
    records = read_trials(cfg.run_dir / "trials.jsonl")
    space = load_space(cfg.space)
    base = space.get_default_configuration()
    expected = [_plain(c) for c in local_configs(base, 3, cfg.collections, cfg.seed)]
    assert records[0]["baseline"] is True
    assert [r["config"] for r in records[1:4]] == expected
    # the fourth initial configuration is a random draw, not a neighbour
    assert len(_changed(Configuration(space, values=records[4]["config"]), base)) > 2


def test_n_local_is_at_most_n_init(data_root: Path, runs: Path) -> None:
    cfg = toy_config(runs, data_root, trials=7, optimizer="model-hb", n_init=2, n_local=5)
    assert cfg.local_initial == 2
    _run(cfg, ToyObjective())
    records = read_trials(cfg.run_dir / "trials.jsonl")
    base = load_space(cfg.space).get_default_configuration()
    expected = [_plain(c) for c in local_configs(base, 2, cfg.collections, cfg.seed)]
    assert [r["config"] for r in records[1:3]] == expected
    design = read_json(cfg.run_dir / "campaign.json")["smac"]["initial_design"]
    assert design["n_configs"] == 0
    assert design["additional_configs"] == expected  # two neighbours, not five


def test_the_design_is_saved_and_a_resume_reads_it(
    data_root: Path, runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resume runs the neighbours ``campaign.json`` saved, even where computing them again
    gives others (an upgraded ConfigSpace draws its own): SMAC saved its initial design and
    refuses to resume with another one."""
    cfg = toy_config(runs, data_root, trials=8, optimizer="model-hb", n_init=4, n_local=3)
    with pytest.raises(KeyboardInterrupt, match="injected interrupt"):
        _run(cfg, InterruptAfter(1))  # the baseline only
    base = load_space(cfg.space).get_default_configuration()
    saved = read_json(cfg.run_dir / "campaign.json")[LOCAL_DESIGN_KEY]
    assert saved == [_plain(c) for c in local_configs(base, 3, cfg.collections, cfg.seed)]
    drawn_again = local_design.local_configs

    def other_draws(b: Configuration, n: int, c: Any, seed: int) -> list[Configuration]:
        return drawn_again(b, n, c, seed + 1)

    monkeypatch.setattr(local_design, "local_configs", other_draws)
    assert [_plain(c) for c in other_draws(base, 3, cfg.collections, cfg.seed)] != saved
    path = cfg.run_dir / "campaign.json"
    raw = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in raw.items() if k != LOCAL_DESIGN_KEY}))
    with pytest.raises(ConfigError, match="SMAC's saved run differs"):  # as before the record
        _run(cfg, InterruptAfter(10**6), resume=True)
    path.write_text(json.dumps(raw))
    _run(cfg, InterruptAfter(10**6), resume=True)
    records = read_trials(cfg.run_dir / "trials.jsonl")
    assert len(records) == 8
    assert records[0]["baseline"] is True
    assert [r["config"] for r in records[1:4]] == saved


def _record(**keys: Any) -> CampaignRecord:
    """A run's record holding ``keys`` (the settings are not read here)."""
    return CampaignRecord.from_json({"format": 2, "config": {}, **keys})


def test_a_record_without_the_design_computes_it_and_a_bad_one_is_refused() -> None:
    space = load_space("lambdarank_small")
    base = space.get_default_configuration()
    args = (space, base, 3, COLLECTIONS, 0)
    assert saved_local_design(_record(), *args) == local_configs(base, 3, COLLECTIONS, 0)
    assert saved_local_design(_record(local_design=[]), *args) == []
    with pytest.raises(ConfigError, match="key 'local_design': expected a list"):
        _record(local_design={"a": 1})
    with pytest.raises(ConfigError, match="key 'local_design': "):
        saved_local_design(_record(local_design=[{"num_leaves": "many"}]), *args)
    assert local_design_record(base, 0, COLLECTIONS, 0) is None


def test_the_random_optimizers_take_no_neighbours_and_say_so(data_root: Path, runs: Path) -> None:
    """random and random-hb draw every configuration: ``--n-local`` was silently ignored
    there, while campaign.json recorded a design that never ran."""
    cfg = toy_config(runs, data_root, trials=4, optimizer="random-hb", n_local=3)
    assert cfg.local_initial == 0
    _, printed = _run(cfg, ToyObjective())
    assert "--n-local 3 is not used: random-hb draws at random" in printed
    assert LOCAL_DESIGN_KEY not in read_json(cfg.run_dir / "campaign.json")
