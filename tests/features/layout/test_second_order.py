"""Second-order layout features on hand-built graphs where each effect is known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graphs import ADD, BF16, F32, S8, extract_columns, mismatch_chain_columns, set_node

from hpo.data.load import list_graphs, load_layout_graph
from hpo.data.opcodes import CONVOLUTION, DOT, PARAMETER, TRANSPOSE
from hpo.features import FeatureSpec, extract_layout_features, layout_feature_names
from hpo.features.layout.second_order import element_bytes, second_order_names
from hpo.synth.dataset import generate_dataset

SPEC = FeatureSpec(chunk_size=2)


@pytest.mark.parametrize(
    ("rows", "etype", "padded_rows", "nbytes"),
    [
        (12, F32, 16, 4),
        (12, BF16, 16, 2),
        (12, S8, 32, 1),
        (20, F32, 24, 4),
        (20, BF16, 32, 2),
        (40, S8, 64, 1),
    ],
)
def test_element_type_decides_the_padded_rows(
    tmp_path: Path, rows: int, etype: int, padded_rows: int, nbytes: int
) -> None:
    feat = np.zeros((2, 140), dtype=np.float32)
    set_node(feat, 0, [rows, 128], etype)
    set_node(feat, 1, [rows, 128], etype)  # an elementwise node: group "other"
    cols = extract_columns(tmp_path, feat, [PARAMETER, ADD], [[1, 0]], [1], np.full((1, 1, 18), -1))
    expected = padded_rows * 128 * nbytes
    np.testing.assert_allclose(np.expm1(cols["so_log_bytes_padded_other"]), expected, rtol=1e-5)
    np.testing.assert_allclose(
        np.expm1(cols["so_log_bytes_pad_waste"]), (padded_rows - rows) * 128 * nbytes, rtol=1e-5
    )
    # The first-order padding knows only 8-row tiles, whatever the element type.
    first_order = int(np.ceil(rows / 8) * 8) * 128
    np.testing.assert_allclose(np.expm1(cols["log_padded_volume"]), first_order, rtol=1e-5)


def test_element_bytes_of_the_one_hot_columns() -> None:
    feat = np.zeros((4, 140), dtype=np.float32)
    feat[[0, 1, 2], [F32, BF16, S8]] = 1
    np.testing.assert_array_equal(element_bytes(feat), [4, 2, 1, 4])  # no type: 4


def test_transpose_that_keeps_the_minor_dim_is_free(tmp_path: Path) -> None:
    feat = np.zeros((2, 140), dtype=np.float32)
    set_node(feat, 0, [64, 256])  # minor dim 1 (size 256)
    set_node(feat, 1, [256, 64])
    feat[1, 31:33] = [1, 0]  # output dim j reads input dim perm[j]
    configs = np.full((2, 1, 18), -1)
    configs[0, 0, 0:2] = [0, 1]  # minor output dim 0 = input dim 1: a bitcast
    configs[1, 0, 0:2] = [1, 0]  # minor output dim 1 = input dim 0: moves the tensor
    cols = extract_columns(tmp_path, feat, [PARAMETER, TRANSPOSE], [[1, 0]], [1], configs)
    np.testing.assert_array_equal(cols["so_n_reshape_move"], [0, 1])
    np.testing.assert_allclose(
        np.expm1(cols["so_log_reshape_move_bytes"]), [0, 64 * 256 * 4], rtol=1e-5
    )
    np.testing.assert_allclose(
        np.expm1(cols["so_log_reshape_bitcast_bytes"]), [64 * 256 * 4, 0], rtol=1e-5
    )


def test_mismatch_in_major_positions_only_is_cheap(tmp_path: Path) -> None:
    """param -> dot (configurable 0) -> dot (configurable 1) reading its output."""
    shape = [4, 8, 16, 128]
    cols = mismatch_chain_columns(tmp_path, shape)
    np.testing.assert_array_equal(cols["n_copies"], [0, 1, 1])  # first order: all alike
    np.testing.assert_array_equal(cols["so_n_mismatch_minor"], [0, 0, 1])
    np.testing.assert_array_equal(cols["so_n_mismatch_major"], [0, 1, 0])
    volume = np.prod(shape) * 4
    np.testing.assert_allclose(
        np.expm1(cols["so_log_mismatch_major_bytes"]), [0, volume, 0], rtol=1e-5
    )


def test_feature_dim_minor_for_dot(tmp_path: Path) -> None:
    feat = np.zeros((2, 140), dtype=np.float32)
    set_node(feat, 0, [256, 512])
    set_node(feat, 1, [256, 512])
    configs = np.full((2, 1, 18), -1)
    configs[0, 0, 0:2] = [1, 0]  # the last (rhs non-contracting) dim most minor
    configs[1, 0, 0:2] = [0, 1]
    cols = extract_columns(tmp_path, feat, [PARAMETER, DOT], [[1, 0]], [1], configs)
    np.testing.assert_array_equal(cols["so_frac_feature_minor"], [1, 0])
    not_minor = np.expm1(cols["so_log_feature_not_minor_bytes"])
    np.testing.assert_allclose(not_minor, [0, 512 * 256 * 4], rtol=1e-5)


def test_non_configurable_reader_forces_a_copy(tmp_path: Path) -> None:
    """param -> dot (configurable) -> add (not configurable) reads the dot's output."""
    feat = np.zeros((3, 140), dtype=np.float32)
    for i in range(3):
        set_node(feat, i, [64, 128])
    configs = np.full((3, 1, 18), -1)  # config 0: the default layout
    configs[1, 0, 0:2] = [1, 0]  # explicitly the default: no copy
    configs[2, 0, 0:2] = [0, 1]  # off the default: the add needs a copy
    cols = extract_columns(tmp_path, feat, [PARAMETER, DOT, ADD], [[1, 0], [2, 1]], [1], configs)
    np.testing.assert_array_equal(cols["so_n_reader_copy_minor"], [0, 0, 1])


def test_convolution_kernel_is_padded_under_its_own_layout(tmp_path: Path) -> None:
    """param, kernel param (bf16, 20 x 200) -> conv; nf 100 names the kernel's feature dim (1).

    Dim 1 most minor: 200 lanes pad to 256 and 20 bf16 rows to 32; dim 0 most minor: 20 lanes
    pad to 128 and 200 rows to 208. Only the second is "not minor" for the matrix unit.
    """
    feat = np.zeros((3, 140), dtype=np.float32)
    set_node(feat, 0, [8, 128])
    set_node(feat, 1, [20, 200], BF16)
    set_node(feat, 2, [8, 200])
    feat[2, 100] = 1
    configs = np.full((2, 1, 18), -1)
    configs[0, 0, 12:14] = [1, 0]
    configs[1, 0, 12:14] = [0, 1]
    edges = [[2, 0], [2, 1]]
    cols = extract_columns(tmp_path, feat, [PARAMETER, PARAMETER, CONVOLUTION], edges, [2], configs)
    padded = np.array([256 * 32 * 2, 128 * 208 * 2])
    np.testing.assert_allclose(np.expm1(cols["kp_log_kernel_bytes_padded"]), padded, rtol=1e-5)
    not_minor = np.expm1(cols["kp_log_kernel_not_minor_bytes_padded"])
    np.testing.assert_allclose(not_minor, [0, padded[1]], rtol=1e-5)
    # the first reading only knew the unpadded bytes, the same for both layouts
    np.testing.assert_allclose(np.expm1(cols["so_log_kernel_not_minor_bytes"]), [0, 20 * 200 * 2])


def test_only_a_conv_has_kernel_bytes(tmp_path: Path) -> None:
    """A dot's second operand and its kernel dims (12-17) set are no conv kernel; a conv
    without a second operand has none either."""
    feat = np.zeros((4, 140), dtype=np.float32)
    for i in range(4):
        set_node(feat, i, [20, 200])
    feat[[2, 3], 100] = 1
    configs = np.full((2, 2, 18), -1)
    configs[:, :, 12:14] = [[[0, 1], [0, 1]], [[1, 0], [1, 0]]]
    edges = [[2, 0], [2, 1], [3, 0]]  # dot(0, 1), conv(0): one operand
    cols = extract_columns(tmp_path, feat, [PARAMETER, PARAMETER, DOT, CONVOLUTION], edges,
                           [2, 3], configs)  # fmt: skip
    for name in ("kp_log_kernel_bytes_padded", "kp_log_kernel_not_minor_bytes_padded"):
        np.testing.assert_array_equal(cols[name], [0, 0])


@pytest.mark.parametrize(
    ("etype", "kernel", "nbytes", "expected"),
    [
        # dim 0 (3) most minor pads to 128 lanes; the free second-minor position takes dim 2
        # (20 rows, padded to 24), the next in the default order (2, 1, 0); dim 1 stays major
        (F32, [0, -1, -1], 4, 40 * 128 * 24),
        # dim 1 (40) pads to 128 lanes, dim 0 (3 rows of 8-bit) to a 32-row tile
        (S8, [1, 0, 2], 1, 20 * 128 * 32),
    ],
)
def test_partial_and_narrow_kernel_layouts_are_padded(
    tmp_path: Path, etype: int, kernel: list[int], nbytes: int, expected: int
) -> None:
    """A rank-3 kernel (3, 40, 20): a free position is completed in the default order; 8-bit
    kernels pad their second-minor dim to 32 rows."""
    feat = np.zeros((3, 140), dtype=np.float32)
    set_node(feat, 0, [8, 128])
    set_node(feat, 1, [3, 40, 20], etype)
    set_node(feat, 2, [8, 40])
    feat[2, 100] = 1
    configs = np.full((1, 1, 18), -1)
    configs[0, 0, 12:15] = kernel
    edges = [[2, 0], [2, 1]]
    cols = extract_columns(tmp_path, feat, [PARAMETER, PARAMETER, CONVOLUTION], edges, [2], configs)
    padded = np.expm1(cols["kp_log_kernel_bytes_padded"])
    np.testing.assert_allclose(padded, [expected * nbytes], rtol=1e-5)


@pytest.mark.parametrize(("n", "nc"), [(1, 1), (5, 5), (50, 20)])
def test_width_fixed_and_finite_for_any_size(tmp_path: Path, n: int, nc: int) -> None:
    feat = np.zeros((n, 140), dtype=np.float32)
    rng = np.random.default_rng(n)
    for i in range(n):
        set_node(feat, i, list(rng.choice([3, 12, 128, 200], size=rng.integers(1, 5))))
    feat[:, rng.integers(2, 21, size=n)] = 1  # odd or several element types
    edges = [[i, i - 1] for i in range(1, n)]
    ops = list(rng.choice([ADD, DOT, TRANSPOSE, 26], size=n))
    cut = rng.integers(0, 7, size=(7, nc, 3, 1))  # -1 ends each 6-dim layout, as in real files
    dims = rng.integers(0, 2, size=(7, nc, 3, 6))
    configs = np.where(np.arange(6) >= cut, -1, dims).reshape(7, nc, 18)
    cols = extract_columns(tmp_path, feat, ops, edges, list(range(n - nc, n)), configs)
    assert len(cols) == len(layout_feature_names(SPEC))
    for name in second_order_names():
        assert np.isfinite(cols[name]).all(), name


def test_generated_second_order_graphs_have_finite_features(tmp_path: Path) -> None:
    generate_dataset(tmp_path, "tiny", seed=5)
    for path in list_graphs(tmp_path, "layout:xla:random", "train")[:2]:
        X, _ = extract_layout_features(load_layout_graph(path), "layout:xla:random", SPEC)
        assert X.shape[1] == len(layout_feature_names(SPEC))
        assert np.isfinite(X).all()
