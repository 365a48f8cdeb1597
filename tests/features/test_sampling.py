"""Per-graph config caps: reproducible draws, kept fastest configs, unsampled tile valid."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from hpo.campaign import CampaignConfig
from hpo.cli import main
from hpo.data.load import COLLECTIONS, collection_dir, list_graphs, load_graph, load_layout_graph
from hpo.errors import ConfigError
from hpo.features import FeatureSpec, SampleCaps, build_tables, extract_rows
from hpo.features.layout.extract import layout_config_features
from hpo.features.relative import relative_features
from hpo.features.sampling import SampleRule, choose_groups, priority_order
from hpo.features.spec import row_source_files

SPEC = FeatureSpec()
#: Below the config counts of the tiny files (layout 30-200, tile 8-60 configs).
CAPS = SampleCaps(train_configs=12, valid_configs=10, keep_fastest=4, seed=5)
SPLITS = ("train", "valid")
#: Columns that do not depend on which configs of the graph were featurized (per-config and
#: static); the relative columns after them are taken over a sample's reference.
PLAIN = 33


@pytest.fixture(scope="module")
def capped(tiny_root: Path) -> dict:
    return build_tables(tiny_root, COLLECTIONS, SPLITS, SPEC, caps=CAPS)


@pytest.fixture(scope="module")
def uncapped(tiny_root: Path) -> dict:
    return build_tables(tiny_root, COLLECTIONS, SPLITS, SPEC)


def _graph_rows(table, g: int) -> slice:
    bounds = table.group_bounds()
    return slice(int(bounds[g]), int(bounds[g + 1]))


def test_draw_is_reproducible_for_a_seed(tiny_root: Path, capped: dict) -> None:
    again = build_tables(tiny_root, COLLECTIONS, SPLITS, SPEC, caps=CAPS)
    other = build_tables(
        tiny_root, COLLECTIONS, SPLITS, SPEC, caps=SampleCaps(**{**CAPS.to_dict(), "seed": 6})
    )
    for key, table in capped.items():
        assert np.array_equal(table.X, again[key].X)
        assert np.array_equal(table.config_index, again[key].config_index)
    picked = capped[("layout", "valid")].config_index
    assert not np.array_equal(picked, other[("layout", "valid")].config_index)


def test_draw_does_not_depend_on_the_file_order() -> None:
    target = np.random.default_rng(0).random(500)
    rule = SampleRule(merge=True, cap=50, biased=True, keep_fastest=5, seed=1)
    assert np.array_equal(priority_order(target, rule, "a"), priority_order(target, rule, "a"))
    assert not np.array_equal(priority_order(target, rule, "a"), priority_order(target, rule, "b"))


def test_caps_bound_the_rows(capped: dict, uncapped: dict) -> None:
    for (family, split), table in capped.items():
        counts = np.bincount(table.group, minlength=len(table.graphs))
        cap = CAPS.train_configs if split == "train" else CAPS.valid_configs
        if split == "valid" and family == "tile":
            continue
        assert counts.max() <= cap
        assert table.n_rows < uncapped[(family, split)].n_rows


def test_fastest_configs_of_a_train_graph_are_always_kept(tiny_root: Path, capped: dict) -> None:
    table = capped[("layout", "train")]
    checked = 0
    for g, ref in enumerate(table.graphs):
        graph = load_layout_graph(
            collection_dir(tiny_root, ref.collection, "train") / f"{ref.stem}.npz"
        )
        _, hashes = layout_config_features(graph, SPEC, np.zeros(0, dtype=np.int64))
        _, first, inverse = np.unique(hashes, return_index=True, return_inverse=True)
        fastest = np.argsort(graph.target, kind="stable")[: CAPS.keep_fastest]
        kept = set(table.config_index[_graph_rows(table, g)].tolist())
        assert {int(first[inverse[i]]) for i in fastest} <= kept
        checked += ref.n_configs > CAPS.train_configs
    assert checked >= 4  # the draw really left configs out


def test_choose_groups_keeps_the_fastest_when_duplicates_abound() -> None:
    rng = np.random.default_rng(3)
    hashes = rng.integers(0, 40, size=1000).astype(np.uint64)  # heavy duplication
    target = rng.random(1000)
    rule = SampleRule(merge=True, cap=10, biased=True, keep_fastest=3, seed=0)
    order = priority_order(target, rule, "g")
    rep, index, mean_target, dups = choose_groups(order, hashes, target, rule)
    assert len(rep) == 10
    assert len(set(hashes[rep].tolist())) == 10
    for i in np.argsort(target)[:3]:
        assert hashes[i] in set(hashes[rep].tolist())
    for r, idx, m, d in zip(rep, index, mean_target, dups, strict=True):
        members = np.flatnonzero(hashes == hashes[r])
        assert idx == members[0]
        assert d == members.size
        assert m == pytest.approx(target[members].mean())


def test_valid_tile_graphs_are_never_sampled(capped: dict) -> None:
    table = capped[("tile", "valid")]
    for g, ref in enumerate(table.graphs):
        rows = _graph_rows(table, g)
        assert np.array_equal(table.config_index[rows], np.arange(ref.n_configs))
    assert max(ref.n_configs for ref in table.graphs) > CAPS.valid_configs


def test_valid_layout_sample_is_uniform_and_unmerged(capped: dict, uncapped: dict) -> None:
    table, full = capped[("layout", "valid")], uncapped[("layout", "valid")]
    assert (table.dup_count == 1).all()
    for g, _ in enumerate(table.graphs):
        rows, full_rows = _graph_rows(table, g), _graph_rows(full, g)
        picked = table.config_index[rows]
        # a uniform sample of rows of the full table: same targets, same raw features
        assert np.array_equal(table.target[rows], full.target[full_rows][picked])
        assert np.array_equal(table.X[rows][:, :PLAIN], full.X[full_rows][picked][:, :PLAIN])


def test_sampled_rows_equal_full_rows_apart_from_relative_columns(
    capped: dict, uncapped: dict
) -> None:
    table, full = capped[("layout", "train")], uncapped[("layout", "train")]
    for g, _ in enumerate(table.graphs):
        rows, full_rows = _graph_rows(table, g), _graph_rows(full, g)
        at = np.searchsorted(full.config_index[full_rows], table.config_index[rows])
        assert np.array_equal(full.config_index[full_rows][at], table.config_index[rows])
        assert np.array_equal(table.X[rows][:, :PLAIN], full.X[full_rows][at][:, :PLAIN])
        assert np.allclose(table.target[rows], full.target[full_rows][at])
        assert np.array_equal(table.dup_count[rows], full.dup_count[full_rows][at])


def test_reference_ranks_equal_ranks_over_the_values_themselves() -> None:
    values = np.random.default_rng(2).integers(0, 5, size=(40, 3)).astype(float)
    assert np.allclose(
        relative_features(values), relative_features(values, reference=values), atol=1e-6
    )


def test_changing_a_cap_invalidates_the_cache(tiny_root: Path, tmp_path: Path) -> None:
    path = list_graphs(tiny_root, "layout:nlp:random", "train")[0]
    cache = tmp_path / "cache"
    rule = CAPS.rule("train", layout=True, merge=True)
    first, hit = extract_rows(path, "layout:nlp:random", SPEC, rule, cache)
    assert not hit
    again, hit = extract_rows(path, "layout:nlp:random", SPEC, rule, cache)
    assert hit
    assert np.array_equal(first.X, again.X)
    for change in ({"train_configs": 13}, {"keep_fastest": 2}, {"seed": 9}):
        other = SampleCaps(**{**CAPS.to_dict(), **change}).rule("train", layout=True, merge=True)
        rows, hit = extract_rows(path, "layout:nlp:random", SPEC, other, cache)
        assert not hit, change
    assert len(list(cache.rglob("*.npz"))) == 4


def test_cache_key_covers_every_module_that_shapes_a_row() -> None:
    names = {p.relative_to(row_source_files()[0].parents[1]).as_posix() for p in row_source_files()}
    assert {
        "data/load.py",
        "data/npyzip.py",
        "data/opcodes.py",
        "features/layout/extract.py",
    } <= names
    assert {
        "features/sampling.py",
        "features/table/rows.py",
        "features/table/feature_table.py",
    } <= names


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"train_configs": -1}, r"'train_configs' expected an integer >= 0, found -1"),
        ({"seed": 1.5}, r"'seed' expected an integer >= 0, found 1.5"),
    ],
)
def test_bad_caps(change: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        SampleCaps(**{**CAPS.to_dict(), **change})


def test_caps_of_a_campaign_are_its_settings() -> None:
    cfg = CampaignConfig(
        data_root=Path("d"), name="n", train_configs=7, valid_configs=5, keep_fastest=2, seed=3
    )
    assert SampleCaps.from_settings(cfg) == SampleCaps(
        train_configs=7, valid_configs=5, keep_fastest=2, seed=3
    )


@pytest.mark.slow
def test_capped_campaign_runs_exports_and_predicts_every_test_config(
    tiny_root: Path, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    caps = ["--train-configs", "12", "--valid-configs", "10", "--keep-fastest", "4"]
    argv = [
        "run", "--data", str(tiny_root), "--runs-dir", str(runs), "--name", "capped",
        "--space", "lambdarank_small", "--trials", "3", "--optimizer", "random",
        "--max-budget", "20", "--cache-dir", str(tmp_path / "cache"), "--quiet", *caps,
    ]  # fmt: skip
    assert main(argv) == 0
    saved = json.loads((runs / "capped" / "campaign.json").read_text())["config"]
    assert (saved["train_configs"], saved["valid_configs"], saved["keep_fastest"]) == (12, 10, 4)
    # the export rebuilds the very rows the run was tuned on: all from the cache
    cached = set((tmp_path / "cache").rglob("*.npz"))
    model = tmp_path / "model"
    assert (
        main(["export", "capped", "--runs-dir", str(runs), "--out", str(model), "--jobs", "1"]) == 0
    )
    assert set((tmp_path / "cache").rglob("*.npz")) == cached
    out = tmp_path / "submission.csv"
    assert (
        main(["predict", "--model", str(model), "--data", str(tiny_root), "--out", str(out)]) == 0
    )
    with open(out, newline="") as fh:
        rows = {r["ID"]: r["TopConfigs"] for r in csv.DictReader(fh)}
    layout_checked = 0
    for collection in COLLECTIONS:
        for path in list_graphs(tiny_root, collection, "test"):
            ranked = [int(x) for x in rows[f"{collection}:{path.stem}"].split(";")]
            n = load_graph(path, collection).n_configs
            if collection.startswith("layout"):
                assert sorted(ranked) == list(range(n))  # every config, never sampled
                layout_checked += n > 10
            else:
                assert len(ranked) == min(5, n)
    assert layout_checked > 0
