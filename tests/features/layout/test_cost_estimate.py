"""Cost estimates (``est_*``, feature version 3) on hand-built graphs where each effect is known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graphs import ADD, BF16, F32, extract_columns, mismatch_chain_columns, set_node

from hpo.data.opcodes import CONVOLUTION, DOT, PARAMETER, TRANSPOSE
from hpo.features.layout.cost_estimate import (
    CHEAP_COPY_WEIGHT,
    CONVDOT_WEIGHT,
    INPUT_WEIGHT,
    MXU_MINOR_WEIGHT,
    RELAYOUT_WEIGHT,
    EstimateInputs,
    cost_estimate_columns,
    cost_estimate_names,
)
from hpo.features.layout.op_class import is_prior_only
from hpo.features.layout.second_order import second_order_names


def _bytes(cols: dict[str, np.ndarray], name: str) -> np.ndarray:
    return np.expm1(cols[name])


def test_estimates_are_the_second_order_columns_before_the_op_class_totals() -> None:
    names = [n for n in second_order_names() if not is_prior_only(n)]
    assert names[-len(cost_estimate_names()) :] == cost_estimate_names()
    assert all(n.startswith("est_") for n in cost_estimate_names())


def test_dot_with_the_feature_dim_minor_costs_half(tmp_path: Path) -> None:
    """A bf16 dot of 12 x 256: 12 rows pad to 16 (bf16 tile), a full MXU pass halves it."""
    feat = np.zeros((2, 140), dtype=np.float32)
    set_node(feat, 0, [12, 256], BF16)
    set_node(feat, 1, [12, 256], BF16)
    configs = np.full((2, 1, 18), -1)
    configs[0, 0, 0:2] = [1, 0]  # the last (rhs non-contracting) dim most minor
    configs[1, 0, 0:2] = [0, 1]  # 12 lanes of 128, 256 rows: pads the minor dim to 128
    cols = extract_columns(tmp_path, feat, [PARAMETER, DOT], [[1, 0]], [1], configs)
    minor = 16 * 256 * 2 * MXU_MINOR_WEIGHT
    not_minor = 128 * 256 * 2
    np.testing.assert_allclose(
        _bytes(cols, "est_log_convdot_mxu_bytes"), [minor, not_minor], rtol=1e-5
    )
    # The total: conv/dot weight, plus reading the parameter (default layout: 16 x 256 bf16).
    read = INPUT_WEIGHT * 16 * 256 * 2
    np.testing.assert_allclose(
        _bytes(cols, "est_log_total_bytes"),
        [CONVDOT_WEIGHT * minor + read, CONVDOT_WEIGHT * not_minor + read],
        rtol=1e-5,
    )


def test_transpose_bitcast_moves_nothing(tmp_path: Path) -> None:
    feat = np.zeros((2, 140), dtype=np.float32)
    set_node(feat, 0, [64, 256])
    set_node(feat, 1, [256, 64])
    feat[1, 31:33] = [1, 0]  # output dim j reads input dim perm[j]
    configs = np.full((2, 1, 18), -1)
    configs[0, 0, 0:2] = [0, 1]  # a bitcast: the input's minor dim stays minor
    configs[1, 0, 0:2] = [1, 0]  # moves the tensor; 64 lanes pad to 128
    cols = extract_columns(tmp_path, feat, [PARAMETER, TRANSPOSE], [[1, 0]], [1], configs)
    np.testing.assert_allclose(
        _bytes(cols, "est_log_reshape_padded_move_bytes"), [0, 128 * 256 * 4], rtol=1e-5
    )
    assert cols["est_log_total_bytes"][0] < cols["est_log_total_bytes"][1]


def test_relayout_costs_more_than_a_cheap_copy(tmp_path: Path) -> None:
    """param -> dot -> dot: the consumer's input against its producer's output."""
    shape = [4, 8, 16, 128]
    cols = mismatch_chain_columns(tmp_path, shape)
    volume = np.prod(shape) * 4
    np.testing.assert_allclose(
        _bytes(cols, "est_log_copy_bytes"),
        [0, CHEAP_COPY_WEIGHT * volume, RELAYOUT_WEIGHT * volume],
        rtol=1e-5,
    )


def test_convolution_kernel_with_the_feature_dim_minor(tmp_path: Path) -> None:
    """param, kernel param -> conv; nf 100 names the kernel's output-feature dim (1)."""
    feat = np.zeros((3, 140), dtype=np.float32)
    set_node(feat, 0, [8, 128])
    set_node(feat, 1, [128, 256])
    set_node(feat, 2, [8, 256])
    feat[2, 100] = 1
    configs = np.full((2, 1, 18), -1)
    configs[0, 0, 12:14] = [1, 0]  # kernel output-feature dim most minor
    configs[1, 0, 12:14] = [0, 1]
    edges = [[2, 0], [2, 1]]
    cols = extract_columns(tmp_path, feat, [PARAMETER, PARAMETER, CONVOLUTION], edges, [2], configs)
    kernel = 128 * 256 * 4
    np.testing.assert_allclose(
        _bytes(cols, "est_log_kernel_mxu_bytes"), [MXU_MINOR_WEIGHT * kernel, kernel], rtol=1e-5
    )


@pytest.mark.parametrize("k", [1, 3])
def test_each_row_depends_on_its_config_only(k: int) -> None:
    """Chunks of any size give the same rows: nothing is taken over the configs of a chunk."""
    rng = np.random.default_rng(k)
    nc = 4
    args = dict(
        padded=rng.random((5, nc)) * 1e4,
        convdot=np.array([True, False, False, True]),
        reshape=np.array([False, True, False, False]),
        feat_minor=rng.random((5, nc)) < 0.5,
        bitcast=rng.random((5, nc)) < 0.5,
        in_padded=rng.random((5, nc)) * 1e3,
        kernel_bytes=np.array([10.0, 0, 0, 0]),
        ker_minor=rng.random((5, nc)) < 0.5,
        minor_mismatch_bytes=rng.random(5),
        major_mismatch_bytes=rng.random(5),
        reader_copy_bytes=rng.random(5),
    )
    full = cost_estimate_columns(EstimateInputs(**args))
    parts = [
        cost_estimate_columns(
            EstimateInputs(**{n: a[s : s + k] if a.shape[0] == 5 else a for n, a in args.items()})
        )
        for s in range(0, 5, k)
    ]
    np.testing.assert_array_equal(np.concatenate(parts), full)
    assert full.shape == (5, len(cost_estimate_names()))


def test_elementwise_output_counts_at_weight_one(tmp_path: Path) -> None:
    """An f32 add of 12 x 128 pads to 16 rows; with nothing else configurable, that is all."""
    feat = np.zeros((2, 140), dtype=np.float32)
    set_node(feat, 0, [12, 128], F32)
    set_node(feat, 1, [12, 128], F32)
    cols = extract_columns(tmp_path, feat, [PARAMETER, ADD], [[1, 0]], [1], np.full((1, 1, 18), -1))
    np.testing.assert_allclose(
        _bytes(cols, "est_log_total_bytes"), 16 * 128 * 4 * (1 + INPUT_WEIGHT), rtol=1e-5
    )
