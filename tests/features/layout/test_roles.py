"""Tests of the roles of the minor dims (hpo/features/layout/roles.py), the ``rl_`` columns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from graphs import extract_columns, set_node

from hpo.data.opcodes import CONVOLUTION, DOT, PARAMETER, RESHAPE
from hpo.features import FeatureSpec
from hpo.features.layout.extract import LAYOUT_GROUPS, layout_feature_names
from hpo.features.layout.roles import ROLE_GROUPS, role_names

OUT, IN, KER = 8 * 16 * 16 * 256 * 4, 8 * 16 * 16 * 128 * 4, 3 * 3 * 128 * 256 * 4


def _conv_graph() -> np.ndarray:
    """param input (NHWC 8x16x16x128), param kernel (HWIO 3x3x128x256) -> conv (8x16x16x256)
    -> reshape; the conv and the reshape are configurable."""
    feat = np.zeros((4, 140), dtype=np.float32)
    set_node(feat, 0, [8, 16, 16, 128])
    set_node(feat, 1, [3, 3, 128, 256])
    set_node(feat, 2, [8, 16, 16, 256])
    set_node(feat, 3, [8, 16, 16, 256])
    # dimension numbers: input batch 0, feature 3, spatial 1 2; kernel in 2, out 3, spatial
    # 0 1; output batch 0, feature 3
    feat[2, 93:107] = [0, 3, 1, 2, 0, 0, 2, 3, 0, 1, 0, 0, 0, 3]
    return feat


def _columns(tmp_path: Path, configs: np.ndarray) -> dict[str, np.ndarray]:
    return extract_columns(
        tmp_path,
        _conv_graph(),
        [PARAMETER, PARAMETER, CONVOLUTION, RESHAPE],
        [[2, 0], [2, 1], [3, 2]],
        [2, 3],
        configs,
    )


def test_every_column_is_named_grouped_and_of_version_10() -> None:
    names = role_names()
    assert len(names) == len(set(names)) == len(ROLE_GROUPS) == 18
    assert set(names) <= set(layout_feature_names(FeatureSpec()))
    assert all(LAYOUT_GROUPS[n] == "node_aggregates" for n in names)
    assert all(FeatureSpec(version=9).drops(n) and not FeatureSpec().drops(n) for n in names)


def test_each_tensor_adds_its_bytes_to_the_role_in_each_minor_position(tmp_path: Path) -> None:
    configs = np.full((3, 2, 18), -1)
    # config 0: every tensor in its stored layout (feature minor; kernel output feature minor)
    for block in (0, 6, 12):
        configs[0, 0, block : block + 4] = [3, 2, 1, 0]
    # config 1: output batch minor then feature; input feature then batch; kernel input
    # feature then output feature
    configs[1, 0, 0:4] = [0, 3, 2, 1]
    configs[1, 0, 6:10] = [3, 0, 2, 1]
    configs[1, 0, 12:16] = [2, 3, 1, 0]
    configs[:, 1, 0:4] = [1, 0, 3, 2]  # the reshape adds nothing whatever its layout
    # config 2: every block left to the compiler, which keeps the stored layouts (config 0)
    configs[2, 0] = -1
    cols = _columns(tmp_path, configs)
    out, inp, ker = np.log1p(OUT), np.log1p(IN), np.log1p(KER)
    want = {
        "rl_log_out_p0_a_bytes": [0, out, 0],
        "rl_log_out_p0_b_bytes": [out, 0, out],
        "rl_log_out_p1_b_bytes": [0, out, 0],
        "rl_log_out_p1_s_bytes": [out, 0, out],
        "rl_log_in_p0_b_bytes": [inp, inp, inp],
        "rl_log_in_p1_a_bytes": [0, inp, 0],
        "rl_log_in_p1_s_bytes": [inp, 0, inp],
        "rl_log_ker_p0_a_bytes": [0, ker, 0],
        "rl_log_ker_p0_b_bytes": [ker, 0, ker],
        "rl_log_ker_p1_a_bytes": [ker, 0, ker],
        "rl_log_ker_p1_b_bytes": [0, ker, 0],
    }
    for name in role_names():
        np.testing.assert_allclose(cols[name], want.get(name, [0, 0, 0]), err_msg=name)


def test_a_dot_has_its_last_dim_as_the_feature_and_no_kernel(tmp_path: Path) -> None:
    feat = np.zeros((3, 140), dtype=np.float32)
    set_node(feat, 0, [64, 512])
    set_node(feat, 1, [512, 256])
    set_node(feat, 2, [64, 256])
    configs = np.full((2, 1, 18), -1)
    configs[0, 0, 0:2] = [1, 0]  # the feature (last) dim most minor
    configs[1, 0, 0:2] = [0, 1]
    cols = extract_columns(
        tmp_path, feat, [PARAMETER, PARAMETER, DOT], [[2, 0], [2, 1]], [2], configs
    )
    out = np.log1p(64 * 256 * 4)
    np.testing.assert_allclose(cols["rl_log_out_p0_b_bytes"], [out, 0])
    np.testing.assert_allclose(cols["rl_log_out_p0_s_bytes"], [0, out])
    np.testing.assert_allclose(cols["rl_log_out_p1_b_bytes"], [0, out])
    assert all((cols[f"rl_log_ker_p{p}_{r}_bytes"] == 0).all() for p in (0, 1) for r in "abs")


def test_a_conv_without_dimension_numbers_has_every_dim_in_the_other_role(tmp_path: Path) -> None:
    """All of node_feat 93-106 at 0 (a file that does not record them): no dim is named batch
    or feature, so a tensor's bytes count once, as ``s``, never as both ``a`` and ``b``."""
    feat = _conv_graph()
    feat[2, 93:107] = 0
    configs = np.full((1, 2, 18), -1)
    configs[0, 0, 0:4] = [0, 3, 2, 1]  # dim 0, which both roles would name, most minor
    cols = extract_columns(
        tmp_path, feat, [PARAMETER, PARAMETER, CONVOLUTION, RESHAPE],
        [[2, 0], [2, 1], [3, 2]], [2, 3], configs,
    )  # fmt: skip
    for tensor, nbytes in (("out", OUT), ("in", IN), ("ker", KER)):
        for p in (0, 1):
            np.testing.assert_allclose(cols[f"rl_log_{tensor}_p{p}_s_bytes"], [np.log1p(nbytes)])
            assert cols[f"rl_log_{tensor}_p{p}_a_bytes"][0] == 0
            assert cols[f"rl_log_{tensor}_p{p}_b_bytes"][0] == 0
