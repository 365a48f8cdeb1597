"""Partial layouts (-1 next to fixed dims) on hand-made 5-D graphs, as real files hold them.

A free dim is left to the compiler: never a mismatch, a copy or a change of layout; sizes read
the layout completed in default order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from graphs import ADD, extract_columns, set_node

from hpo.data.opcodes import DOT, PARAMETER
from hpo.features.layout.partial import (
    MAJOR_BITS,
    MINOR_BITS,
    complete,
    disagree,
    mask_bits,
    pack,
    read_block,
)

SHAPE = [2, 4, 8, 16, 128]  # rank 5, as the real U-Net's 3-D convolutions
FREE = [-1, -1, -1, -1]


def _lay(*dims: int) -> list[int]:
    return [*dims, *[-1] * (6 - len(dims))]


def test_read_block_resolves_packs_and_completes() -> None:
    default = np.array([_lay(4, 3, 2, 1, 0), _lay(1, 0)])
    blocks = np.array(
        [
            [_lay(), _lay()],  # compiler default
            [_lay(4, 0), _lay(0, 1)],  # partial rank 5; full rank 2
            [_lay(0), _lay(0)],  # only the most-minor dim fixed
        ]
    )
    got = read_block(blocks, default)
    np.testing.assert_array_equal(got.is_set, [[False, False], [True, True], [True, True]])
    np.testing.assert_array_equal(got.minor, [[[4, 3], [1, 0]], [[4, 0], [0, 1]], [[0, 4], [0, 1]]])
    np.testing.assert_array_equal(got.code[0], pack(default)[0])
    np.testing.assert_array_equal(got.care[0], [-1, -1])  # every position: dims and padding
    rank5 = mask_bits(np.arange(6) < 5)
    assert got.care[1, 0] & rank5 == MINOR_BITS  # free dims are not cared about
    assert got.care[2, 0] & rank5 == 0xFF


def test_complete_fills_free_positions_in_default_order() -> None:
    default = np.array([_lay(4, 3, 2, 1, 0), _lay(4, 3, 2, 1, 0), _lay(1, 0), _lay(0, 1, 2)])
    layouts = np.array([_lay(4, 0), _lay(0), _lay(1, 0), _lay(-1, 0)])
    np.testing.assert_array_equal(
        complete(layouts, default),
        [_lay(4, 0, 3, 2, 1), _lay(0, 4, 3, 2, 1), _lay(1, 0), _lay(1, 0, 2)],
    )


def test_disagree_ignores_free_and_unwanted_positions() -> None:
    a = pack(np.array([_lay(4, 0), _lay(4, 0, 3, 2, 1), _lay(3, 4), _lay()]))
    b = pack(np.array([_lay(4, 0, 1, 2, 3), _lay(4, 0, 1, 2, 3), _lay(4, 3), _lay(0, 1)]))
    np.testing.assert_array_equal(disagree(a, b, ~0), [False, True, True, False])
    np.testing.assert_array_equal(disagree(a, b, MINOR_BITS), [False, False, True, False])
    np.testing.assert_array_equal(disagree(a, b, MAJOR_BITS), [False, True, False, False])
    rank2 = mask_bits(np.arange(6) < 2)
    np.testing.assert_array_equal(disagree(a, b, rank2), [False, False, True, False])


def _chain(tmp_path: Path, pairs: list[tuple[list[int], list[int]]]) -> dict[str, np.ndarray]:
    """param -> dot (configurable 0) -> dot (configurable 1); one config per
    (producer output, consumer input) pair."""
    feat = np.zeros((3, 140), dtype=np.float32)
    for i in range(3):
        set_node(feat, i, SHAPE)
    configs = np.full((len(pairs), 2, 18), -1)
    for k, (out, inp) in enumerate(pairs):
        configs[k, 0, 0:6] = out
        configs[k, 1, 6:12] = inp
    return extract_columns(tmp_path, feat, [PARAMETER, DOT, DOT], [[1, 0], [2, 1]], [1, 2], configs)


def test_free_dims_are_no_copy(tmp_path: Path) -> None:
    cols = _chain(
        tmp_path,
        [
            (_lay(4, 3, 2, 1, 0), _lay(4, 3)),  # agrees where it is constrained
            (_lay(4, 3, 0, 1, 2), _lay(4, 3)),  # producer's major dims differ from default
            (_lay(4, 3), _lay(4, 3, 2, 1, 0)),  # the producer leaves its major dims free
            (_lay(), _lay(4, 3)),  # producer at its default [4, 3, 2, 1, 0]
            (_lay(4, 3, 2, 1, 0), _lay(3, 4)),  # the two minor positions differ: a relayout
            (_lay(4, 3, 2, 1, 0), _lay(4, 3, 2, 0, 1)),  # full layouts, major only
        ],
    )
    np.testing.assert_array_equal(cols["n_copies"], [0, 0, 0, 0, 1, 1])
    np.testing.assert_array_equal(cols["so_n_mismatch_minor"], [0, 0, 0, 0, 1, 0])
    np.testing.assert_array_equal(cols["so_n_mismatch_major"], [0, 0, 0, 0, 0, 1])
    # the consumer's own output stays at its default: no in/out difference from free dims
    np.testing.assert_array_equal(cols["n_in_out_differ"], [0, 0, 0, 0, 1, 1])


def _single(tmp_path: Path, outs: list[list[int]], reader: bool = False) -> dict[str, np.ndarray]:
    """param -> dot (configurable), optionally read by an add (not configurable)."""
    n = 3 if reader else 2
    feat = np.zeros((n, 140), dtype=np.float32)
    for i in range(n):
        set_node(feat, i, SHAPE)
    configs = np.full((len(outs), 1, 18), -1)
    configs[:, 0, 0:6] = outs
    ops = [PARAMETER, DOT, ADD][:n]
    edges = [[1, 0], [2, 1]][: n - 1]
    return extract_columns(tmp_path, feat, ops, edges, [1], configs)


def test_free_dims_are_no_layout_change(tmp_path: Path) -> None:
    outs = [_lay(), _lay(4, 3), _lay(4, 3, 2, 1, 0), _lay(4, 0), _lay(4, 3, 0, 1, 2)]
    cols = _single(tmp_path, outs, reader=True)
    np.testing.assert_array_equal(cols["n_nondefault_out"], [0, 0, 0, 1, 1])
    np.testing.assert_array_equal(cols["so_n_reader_copy_minor"], [0, 0, 0, 1, 0])
    major = np.expm1(cols["so_log_reader_copy_major_bytes"])
    np.testing.assert_array_equal(major > 0, [False, False, False, False, True])


def test_sizes_read_the_completed_layout(tmp_path: Path) -> None:
    # [4, 0, free...] pads like [4, 0, 3, 2, 1]; [0, free...] like [0, 4, 3, 2, 1] (the
    # second-minor dim is the first one the default order leaves), not like a missing dim
    outs = [_lay(4, 0), _lay(4, 0, 3, 2, 1), _lay(0), _lay(0, 4, 3, 2, 1)]
    cols = _single(tmp_path, outs)
    padded = cols["log_padded_volume"]
    assert padded[0] == padded[1]
    assert padded[2] == padded[3]
    # dim 0 (size 2) minor pads 64x on lanes, dim 4 (128) second minor needs no row padding
    np.testing.assert_allclose(np.expm1(padded[2]), np.prod(SHAPE) * 64, rtol=1e-5)
    so = cols["so_log_bytes_padded_convdot"]
    assert so[0] == so[1]
    assert so[2] == so[3]
