"""Tests of the generic node quantities (hpo/features/layout/nodes.py), the ``nd_`` columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graphs import (
    F32,
    extract_columns,
    layout_arrays,
    mismatch_chain_columns,
    set_node,
    write_layout,
)

from hpo.data.load import load_layout_graph
from hpo.data.opcodes import CONVOLUTION, PARAMETER
from hpo.features import FeatureSpec, extract_layout_features
from hpo.features.layout import nodes
from hpo.features.layout.extract import layout_feature_names
from hpo.features.layout.nodes import NODE_GROUPS, node_names


def test_every_column_is_in_the_node_group() -> None:
    names = node_names()
    assert len(names) == len(set(names)) == len(NODE_GROUPS)
    assert all(n.startswith("nd_") for n in names)
    assert set(names) <= set(layout_feature_names(FeatureSpec()))


def test_a_consumer_reading_another_layout_is_a_mismatch_of_both_nodes(tmp_path: Path) -> None:
    """param -> dot -> dot: agree; differ in major positions; differ in the minor two."""
    cols = mismatch_chain_columns(tmp_path, [4, 8, 128, 256])
    tensor = np.log1p(4 * 8 * 128 * 256 * 4)  # f32 bytes of one tensor, tile-aligned
    np.testing.assert_allclose(cols["nd_in_mismatch_bytes_all"], [0, tensor, tensor])
    np.testing.assert_allclose(cols["nd_in_minor_mismatch_bytes_all"], [0, 0, tensor])
    np.testing.assert_array_equal(cols["nd_n_consumer_mismatch_all"], [0, 1, 1])
    np.testing.assert_array_equal(cols["nd_n_consumer_minor_mismatch_all"], [0, 0, 1])
    # both are dots: the conv/dot class holds it all, the others nothing
    np.testing.assert_array_equal(cols["nd_n_consumer_mismatch_cd"], [0, 1, 1])
    np.testing.assert_array_equal(cols["nd_n_consumer_mismatch_ot"], [0, 0, 0])


def test_padded_bytes_follow_the_chosen_minor_dims(tmp_path: Path) -> None:
    """A (3, 200) f32 conv output: minor 200 pads to 256 lanes and 3 to 8 rows; minor 3
    pads to 128 lanes and 200 to 200 rows."""
    feat = np.zeros((2, 140), dtype=np.float32)
    set_node(feat, 0, [3, 200])
    set_node(feat, 1, [3, 200], F32)
    configs = np.full((2, 1, 18), -1)
    configs[0, 0, 0:2] = [1, 0]  # dim 1 (200) most minor
    configs[1, 0, 0:2] = [0, 1]  # dim 0 (3) most minor
    cols = extract_columns(tmp_path, feat, [PARAMETER, CONVOLUTION], [[1, 0]], [1], configs)
    raw = 3 * 200 * 4
    want = [raw * (256 / 200) * (8 / 3), raw * (128 / 3) * (200 / 200)]
    np.testing.assert_allclose(cols["nd_out_padded_bytes_cd"], np.log1p(want))
    np.testing.assert_allclose(cols["nd_out_padded_bytes_all"], np.log1p(want))
    np.testing.assert_array_equal(cols["nd_out_padded_bytes_rt"], [0, 0])
    # the first config is the node's default (1, 0); the second changes its minor dims
    np.testing.assert_array_equal(cols["nd_n_out_changed_all"], [0, 1])
    np.testing.assert_allclose(cols["nd_out_minor_changed_bytes_all"], [0, np.log1p(raw)])


def test_rows_do_not_depend_on_the_chunking_and_are_finite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_layout(tmp_path / "g.npz", **layout_arrays(n=60, nc=12, c=40, seed=3))
    graph = load_layout_graph(path)
    names = layout_feature_names(FeatureSpec())
    nd = [i for i, n in enumerate(names) if n.startswith("nd_")]
    whole = extract_layout_features(graph, "layout:xla:random", FeatureSpec(chunk_size=64))[0]
    chunked = extract_layout_features(graph, "layout:xla:random", FeatureSpec(chunk_size=7))[0]
    np.testing.assert_array_equal(whole[:, nd], chunked[:, nd])
    monkeypatch.setattr(nodes, "_PASS_CELLS", 2 * 12)  # passes of two configs in a chunk
    passes = extract_layout_features(graph, "layout:xla:random", FeatureSpec(chunk_size=64))[0]
    np.testing.assert_array_equal(whole[:, nd], passes[:, nd])
    assert np.isfinite(whole[:, nd]).all()
    assert (whole[:, nd].std(axis=0) > 0).any()
