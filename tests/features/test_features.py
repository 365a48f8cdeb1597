from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graphs import layout_arrays, write_layout, write_tile

from hpo.data.load import load_layout_graph, load_tile_graph
from hpo.errors import ConfigError
from hpo.features import (
    ExtractOptions,
    FeatureSpec,
    build_tables,
    extract_file,
    extract_layout_features,
    extract_tile_features,
    layout_feature_names,
    relative_features,
    tile_feature_names,
)

SPEC = FeatureSpec(chunk_size=7)


@pytest.mark.parametrize("n", [1, 5, 50])
def test_tile_width_fixed_and_finite(tmp_path: Path, n: int) -> None:
    g = load_tile_graph(write_tile(tmp_path / "t.npz", n=n, c=9))
    X, hashes = extract_tile_features(g, "tile:xla", SPEC)
    assert X.shape == (9, len(tile_feature_names(SPEC)))
    assert X.dtype == np.float32
    assert np.isfinite(X).all()
    assert hashes.shape == (9,)


@pytest.mark.parametrize(("n", "nc"), [(5, 1), (10, 5), (50, 20)])
def test_layout_width_fixed_and_finite(tmp_path: Path, n: int, nc: int) -> None:
    g = load_layout_graph(write_layout(tmp_path / "l.npz", n=n, nc=nc, c=23))
    X, hashes = extract_layout_features(g, "layout:xla:random", SPEC)
    assert X.shape == (23, len(layout_feature_names(SPEC)))
    assert X.dtype == np.float32
    assert np.isfinite(X).all()
    assert hashes.dtype == np.uint64


def test_layout_chunk_size_does_not_change_rows(tmp_path: Path) -> None:
    g = load_layout_graph(write_layout(tmp_path / "l.npz", c=40))
    a, ha = extract_layout_features(g, "layout:xla:random", FeatureSpec(chunk_size=3))
    b, hb = extract_layout_features(g, "layout:xla:random", FeatureSpec(chunk_size=1000))
    np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_array_equal(ha, hb)


def test_permuting_configs_permutes_layout_rows(tmp_path: Path) -> None:
    arrays = layout_arrays(c=30)
    perm = np.random.default_rng(1).permutation(30)
    a = write_layout(tmp_path / "a.npz", c=30)
    b = write_layout(
        tmp_path / "b.npz",
        c=30,
        node_config_feat=arrays["node_config_feat"][perm],
        config_runtime=arrays["config_runtime"][perm],
    )
    xa, _ = extract_layout_features(load_layout_graph(a), "layout:nlp:random", SPEC)
    xb, _ = extract_layout_features(load_layout_graph(b), "layout:nlp:random", SPEC)
    np.testing.assert_allclose(xa[perm], xb, rtol=1e-6)


def test_permuting_configs_permutes_tile_rows(tmp_path: Path) -> None:
    g = load_tile_graph(write_tile(tmp_path / "a.npz", c=20))
    perm = np.random.default_rng(2).permutation(20)
    h = load_tile_graph(
        write_tile(
            tmp_path / "b.npz",
            c=20,
            config_feat=g.config_feat[perm],
            config_runtime=g.config_runtime[perm],
        )
    )
    xa, _ = extract_tile_features(g, "tile:xla", SPEC)
    xb, _ = extract_tile_features(h, "tile:xla", SPEC)
    np.testing.assert_allclose(xa[perm], xb, rtol=1e-6)


def _chain_graph(tmp_path: Path, consumer_input: list[int]) -> np.ndarray:
    """param -> conv (configurable 0) -> add -> dot (configurable 1, consumes via add)."""
    n = 4
    node_feat = np.zeros((n, 140), dtype=np.float32)
    node_feat[:, 21:24] = [64, 128, 256]
    node_feat[:, 28] = 64 * 128 * 256
    node_feat[:, 134:137] = [2, 1, 0]
    node_feat[-1, 0] = 1
    feat = np.full((2, 2, 18), -1, dtype=np.float32)
    feat[:, 0, 0:3] = [2, 1, 0]  # producer output layout, both configs
    feat[0, 1, 6:9] = [2, 1, 0]  # config 0: consumer reads the same layout
    feat[1, 1, 6:9] = consumer_input  # config 1: possibly another one
    path = write_layout(
        tmp_path / "chain.npz",
        node_feat=node_feat,
        node_opcode=np.array([59, 26, 1, 34], dtype=np.uint8),
        edge_index=np.array([[1, 0], [2, 1], [3, 2]], dtype=np.int64),
        node_config_ids=np.array([1, 3], dtype=np.int64),
        node_config_feat=feat,
        node_splits=np.array([[0]], dtype=np.int64),
        config_runtime=np.array([100, 200], dtype=np.int64),
    )
    X, _ = extract_layout_features(load_layout_graph(path), "layout:xla:random", SPEC)
    return X[:, layout_feature_names(SPEC).index("n_copies")]


def test_producer_consumer_mismatch_counts_a_copy(tmp_path: Path) -> None:
    copies = _chain_graph(tmp_path, consumer_input=[0, 1, 2])
    assert copies[0] == 0
    assert copies[1] == 1


def test_matching_layouts_count_no_copy(tmp_path: Path) -> None:
    copies = _chain_graph(tmp_path, consumer_input=[2, 1, 0])
    np.testing.assert_array_equal(copies, [0, 0])


def test_identical_configs_hash_equal(tmp_path: Path) -> None:
    arrays = layout_arrays(c=10)
    feat = arrays["node_config_feat"]
    feat[5] = feat[2]
    path = write_layout(tmp_path / "d.npz", c=10, node_config_feat=feat)
    X, hashes = extract_layout_features(load_layout_graph(path), "layout:xla:default", SPEC)
    assert hashes[5] == hashes[2]
    assert len(np.unique(hashes)) == 9
    np.testing.assert_array_equal(X[5], X[2])


def test_relative_features_shape_and_range() -> None:
    v = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])
    r = relative_features(v)
    np.testing.assert_allclose(r[:, 0], [-1, 0, 1])
    np.testing.assert_allclose(r[:, 2], [0, 0.5, 1])
    np.testing.assert_allclose(r[:, 3], [0.5, 0.5, 0.5])


def test_spec_validation() -> None:
    with pytest.raises(ConfigError, match="chunk_size must be >= 1"):
        FeatureSpec(chunk_size=0)
    with pytest.raises(ConfigError, match="feature spec version 0 is not supported"):
        FeatureSpec.from_dict({"version": 0})


def test_cache_hit_skips_extraction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_layout(tmp_path / "data" / "g.npz")
    first = extract_file(path, "layout:xla:random", SPEC, tmp_path / "cache")
    assert first[-1] is False

    def boom(*_a, **_k):
        raise AssertionError("extraction ran on a cache hit")

    monkeypatch.setattr("hpo.features.table.feature_table.extract_layout_features", boom)
    second = extract_file(path, "layout:xla:random", SPEC, tmp_path / "cache")
    assert second[-1] is True
    np.testing.assert_array_equal(first[0], second[0])


def test_cache_key_follows_content(tmp_path: Path) -> None:
    path = write_layout(tmp_path / "g.npz", seed=1)
    extract_file(path, "layout:xla:random", SPEC, tmp_path / "cache")
    write_layout(path, seed=2)  # same name, new content
    assert extract_file(path, "layout:xla:random", SPEC, tmp_path / "cache")[-1] is False


def test_build_tables_on_tiny(tiny_root: Path, tmp_path: Path) -> None:
    tables = build_tables(
        tiny_root,
        ("tile:xla", "layout:xla:default"),
        ("train", "valid"),
        SPEC,
        extract=ExtractOptions(cache_dir=tmp_path / "cache", n_jobs=2),
    )
    assert set(tables) == {
        ("tile", "train"),
        ("tile", "valid"),
        ("layout", "train"),
        ("layout", "valid"),
    }
    for table in tables.values():
        sizes = np.diff(table.group_bounds())
        assert sizes.sum() == table.n_rows
        assert np.isfinite(table.X).all()
        assert (np.diff(table.group) >= 0).all()
    valid = tables[("layout", "valid")]
    assert valid.n_rows == sum(g.n_configs for g in valid.graphs)
    train = tables[("layout", "train")]
    assert train.dup_count.sum() == sum(g.n_configs for g in train.graphs)


def test_relative_features_without_ranks() -> None:
    v = np.array([[1.0, 5.0], [2.0, 5.0], [4.0, 5.0]])
    r = relative_features(v, ranks=False)
    assert r.shape == (3, 2)
    np.testing.assert_allclose(r[:, 0], [-1, 0, 2])


def test_tile_relative_columns_are_median_only() -> None:
    names = tile_feature_names(FeatureSpec())
    assert any(n.endswith("_dmed") for n in names)
    assert not any(n.endswith("_prank") for n in names)
    assert any(n.endswith("_prank") for n in layout_feature_names(FeatureSpec()))
