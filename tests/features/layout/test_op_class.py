"""Per-op-class byte totals (``oc_*``, feature version 6) on hand-built graphs and arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from graphs import BF16, extract_columns, set_node

from hpo.data.opcodes import CONVOLUTION, DOT, FUSION, PARAMETER, RESHAPE, TRANSPOSE
from hpo.features.layout.op_class import (
    OP_CLASS_GROUPS,
    OP_CLASSES,
    op_class_columns,
    op_class_of,
)
from hpo.features.layout.second_order import second_order_names


def test_totals_are_the_second_order_columns_before_the_kernel_padding() -> None:
    names = list(OP_CLASS_GROUPS)
    assert [n for n in second_order_names() if not n.startswith("kp_")][-len(names) :] == names
    assert all(n.startswith("oc_log_") for n in names)


def test_op_classes_of_opcodes() -> None:
    ops = np.array([CONVOLUTION, DOT, RESHAPE, TRANSPOSE, FUSION, PARAMETER, 2])
    got = [OP_CLASSES[i] for i in op_class_of(ops)]
    assert got == ["conv", "dot", "reshape", "transpose", "fusion", "other", "other"]


def test_class_totals_add_up_to_the_padded_bytes() -> None:
    """Every node is in one class, so the class totals split the padded bytes exactly, and each
    masked total sums its own mask over its own classes (distinct masks: a swap shows)."""
    rng = np.random.default_rng(0)
    k, nc = 5, 9
    padded = rng.uniform(1, 1000, (k, nc))
    work = rng.uniform(1, 50, nc)
    op_class = np.array([0, 1, 2, 3, 4, 5, 0, 2, 3], dtype=np.int8)
    masks = {m: rng.random((k, nc)) < 0.5 for m in ("feat", "bitcast", "minor", "major")}
    cols = np.expm1(
        op_class_columns(
            padded=padded,
            op_class=op_class,
            feat_minor=masks["feat"],
            bitcast=masks["bitcast"],
            reader_minor=masks["minor"],
            reader_major=masks["major"],
            work=work,
        )
    )
    names = list(OP_CLASS_GROUPS)
    assert cols.shape == (k, len(names))
    totals = cols[:, : len(OP_CLASSES)]
    np.testing.assert_allclose(totals.sum(axis=1), padded.sum(axis=1), rtol=1e-9)

    def of(classes: tuple[int, ...], mask: np.ndarray, values: np.ndarray) -> np.ndarray:
        where = np.isin(op_class, classes)[None] & mask
        return np.where(where, np.broadcast_to(values, (k, nc)), 0.0).sum(axis=1)

    expected = {
        "oc_log_feature_minor_bytes_conv": of((0,), masks["feat"], padded),
        "oc_log_feature_minor_bytes_dot": of((1,), masks["feat"], padded),
        "oc_log_bitcast_bytes_reshape": of((2,), masks["bitcast"], padded),
        "oc_log_bitcast_bytes_transpose": of((3,), masks["bitcast"], padded),
        "oc_log_reader_minor_bytes_convdot": of((0, 1), masks["minor"], work[None]),
        "oc_log_reader_major_bytes_convdot": of((0, 1), masks["major"], work[None]),
    }
    for name, want in expected.items():
        np.testing.assert_allclose(cols[:, names.index(name)], want, rtol=1e-9, err_msg=name)


def test_dot_bytes_split_by_the_feature_dim(tmp_path: Path) -> None:
    """A bf16 dot of 12 x 256: its padded bytes count as dot, not conv, and as feature-minor
    only when the last dim is most minor."""
    feat = np.zeros((2, 140), dtype=np.float32)
    set_node(feat, 0, [12, 256], BF16)
    set_node(feat, 1, [12, 256], BF16)
    configs = np.full((2, 1, 18), -1)
    configs[0, 0, 0:2] = [1, 0]  # feature (last) dim most minor: 16 rows of 256 (bf16 tile)
    configs[1, 0, 0:2] = [0, 1]  # 12 lanes pad to 128, 256 rows
    cols = extract_columns(tmp_path, feat, [PARAMETER, DOT], [[1, 0]], [1], configs)
    minor, not_minor = 16 * 256 * 2, 128 * 256 * 2
    np.testing.assert_allclose(
        np.expm1(cols["oc_log_padded_bytes_dot"]), [minor, not_minor], rtol=1e-5
    )
    np.testing.assert_allclose(
        np.expm1(cols["oc_log_feature_minor_bytes_dot"]), [minor, 0], rtol=1e-5, atol=1e-3
    )
    np.testing.assert_allclose(np.expm1(cols["oc_log_padded_bytes_conv"]), [0, 0], atol=1e-3)
