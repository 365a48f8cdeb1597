"""Tile features under the two readings of a tile's dims, and the working set with inputs.

The format does not say whether a tile's bounds follow the root's layout or their own order
(last dim most minor); the ``tp_*_last`` columns give the second reading, and every ``tp_``
working set counts a tile of each kernel input. The ``kc_`` columns count a contracting dim
only in kernels that hold a convolution, dot or reduce.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from graphs import write_tile

from hpo.data.load import TileGraph, load_tile_graph
from hpo.data.opcodes import CONTRACTING, DOT, PARAMETER
from hpo.features import FeatureSpec
from hpo.features.tile import K_READING, extract_tile_features, tile_feature_names

SPEC = FeatureSpec(relative=False, graph_descriptor=False)


def _columns(graph: TileGraph) -> dict[str, np.ndarray]:
    X, _ = extract_tile_features(graph, "tile:xla", SPEC)
    return {n: X[:, i].astype(np.float64) for i, n in enumerate(tile_feature_names(SPEC))}


def _root(graph: TileGraph) -> int:
    return int(np.flatnonzero(graph.node_feat[:, 0] > 0.5)[-1])


def _with_root(graph: TileGraph, dims: list[int], minor_to_major: list[int]) -> TileGraph:
    """The graph with its root's output shape and layout replaced; no parameter node."""
    nf = graph.node_feat.copy()
    root = _root(graph)
    nf[root, 21:27] = 0
    nf[root, 21 : 21 + len(dims)] = dims
    nf[root, 134:140] = 0
    nf[root, 134 : 134 + len(dims)] = minor_to_major
    opcode = np.where(graph.node_opcode == PARAMETER, 1, graph.node_opcode).astype(np.uint8)
    return dataclasses.replace(graph, node_feat=nf, node_opcode=opcode)


def _graph(
    tmp_path: Path,
    minor_to_major: list[int],
    dims: tuple[int, int] = (64, 96),
    tiles: tuple[int, ...] = (1, 2, 8, 16, 32, 64),
) -> TileGraph:
    g = load_tile_graph(write_tile(tmp_path / "t.npz", c=40))
    g = _with_root(g, list(dims), minor_to_major)
    cfg = g.config_feat.copy()
    cfg[:, 8:14] = 0
    rng = np.random.default_rng(1)
    cfg[:, 8:10] = rng.choice(tiles, size=(len(cfg), 2))
    return dataclasses.replace(g, config_feat=cfg)


def _inputs(graph: TileGraph, n: int) -> TileGraph:
    opcode = graph.node_opcode.copy()
    opcode[:n] = PARAMETER
    return dataclasses.replace(graph, node_opcode=opcode)


def test_default_layout_gives_both_readings_the_same_values(tmp_path: Path) -> None:
    cols = _columns(_graph(tmp_path, [1, 0]))  # dim 1 most minor: the XLA default
    np.testing.assert_allclose(cols["tp_hw_tile_waste_last"], cols["hw_tile_waste"])
    np.testing.assert_allclose(cols["tp_log_padded_work_last"], cols["log_padded_work"])
    # one input (no parameter node counts as one): the working set is the old column's
    np.testing.assert_allclose(cols["tp_log_vmem_inputs_bytes"], cols["log_vmem_bytes"])
    np.testing.assert_allclose(cols["tp_log_vmem_bytes_last"], cols["log_vmem_bytes"])


def test_a_transposed_layout_pads_other_dims_under_the_last_dim_reading(tmp_path: Path) -> None:
    g = _graph(tmp_path, [0, 1])  # dim 0 most minor
    cols = _columns(g)
    t = g.config_feat[:, 8:10].astype(np.float64)
    by_layout = np.ceil(t[:, 0] / 128) * 128 * np.ceil(t[:, 1] / 8) * 8
    by_order = np.ceil(t[:, 0] / 8) * 8 * np.ceil(t[:, 1] / 128) * 128
    np.testing.assert_allclose(cols["hw_tile_waste"], by_layout / t.prod(axis=1), rtol=1e-6)
    np.testing.assert_allclose(cols["tp_hw_tile_waste_last"], by_order / t.prod(axis=1), rtol=1e-6)
    assert not np.allclose(cols["tp_hw_tile_waste_last"], cols["hw_tile_waste"])
    n_out = np.expm1(cols["log_n_out_tiles"])
    work = np.expm1(cols["tp_log_padded_work_last"])
    np.testing.assert_allclose(work, n_out * by_order, rtol=1e-5)
    # with three inputs: a 2-D transpose swaps which dim is padded, not the K strip (both
    # minor dims), so the two working sets differ by the output tile's padding alone
    three = _columns(_inputs(g, 3))
    gap = np.expm1(three["tp_log_vmem_bytes_last"]) - np.expm1(three["tp_log_vmem_inputs_bytes"])
    np.testing.assert_allclose(gap, 2 * _elem_bytes(g) * (by_order - by_layout), rtol=1e-3, atol=64)


def test_each_kernel_input_adds_a_tile_to_the_working_set(tmp_path: Path) -> None:
    g = _graph(tmp_path, [1, 0])
    before = _columns(g)
    after = _columns(_inputs(g, 3))
    np.testing.assert_allclose(after["log_vmem_bytes"], before["log_vmem_bytes"])
    # 2 * bytes * (output tile + n input tiles): two more inputs add twice an input's share
    one = np.expm1(before["log_vmem_bytes"])
    output_share = 2 * _elem_bytes(g) * np.expm1(before["log_out_tile_hw_volume"])
    three = one + 2 * (one - output_share)
    np.testing.assert_allclose(np.expm1(after["tp_log_vmem_inputs_bytes"]), three, rtol=1e-3)
    assert np.all(after["tp_log_vmem_inputs_bytes"] > before["tp_log_vmem_inputs_bytes"])


def test_working_sets_past_16_mib_are_measured_by_how_far(tmp_path: Path) -> None:
    g = _inputs(_graph(tmp_path, [0, 1], dims=(8192, 8192), tiles=(128, 1024, 4096, 8192)), 6)
    cols = _columns(g)
    for size, over in (
        ("tp_log_vmem_bytes_last", "tp_vmem_over_16mib_last"),
        ("tp_log_vmem_inputs_bytes", "tp_vmem_inputs_over_16mib"),
    ):
        expect = np.maximum(np.expm1(cols[size]) / 2**24 - 1, 0)
        np.testing.assert_allclose(cols[over], expect, rtol=1e-3, atol=1e-6)
        assert (cols[over] > 0).any()
        assert (cols[over] == 0).any()


def _with_ops(graph: TileGraph, contracting: bool) -> TileGraph:
    """The graph with its contracting ops made adds, or one node (not the root) made a dot."""
    opcode = np.where(np.isin(graph.node_opcode, CONTRACTING), 2, graph.node_opcode)
    if contracting:
        opcode[0 if _root(graph) != 0 else 1] = DOT
    return dataclasses.replace(graph, node_opcode=opcode.astype(np.uint8))


def test_an_elementwise_kernel_reads_no_k_dim(tmp_path: Path) -> None:
    g = _inputs(_graph(tmp_path, [1, 0]), 3)
    elementwise = _columns(_with_ops(g, contracting=False))
    for name in ("kc_log_k_tile", "kc_log_k_steps"):
        np.testing.assert_allclose(elementwise[name], np.log(2.0), rtol=1e-6)  # log1p(1)
    np.testing.assert_allclose(elementwise["kc_k_padding_waste"], 1.0)
    # a working set of the output tile and an output-sized tile of each input
    n_inputs = np.count_nonzero(g.node_opcode == PARAMETER)
    hw = np.expm1(elementwise["log_out_tile_hw_volume"])
    expect = 2 * _elem_bytes(g) * hw * (1 + n_inputs)
    got = np.expm1(elementwise["kc_tp_log_vmem_inputs_bytes"])
    np.testing.assert_allclose(got, expect, rtol=1e-3)
    # the compute is the padded work (no K steps); the older columns still read a K dim
    work = np.expm1(elementwise["log_padded_work"]) * elementwise["kernel_padding_waste"]
    np.testing.assert_allclose(np.expm1(elementwise["kc_log_est_compute"]), work, rtol=1e-3)
    assert np.expm1(elementwise["log_k_tile"]).min() > 1
    older = np.expm1(elementwise["tp_log_vmem_inputs_bytes"])
    assert not np.allclose(older, got)  # they priced a K strip in place of the inputs' tiles


def test_a_kernel_with_a_dot_reads_its_k_dim_as_before(tmp_path: Path) -> None:
    g = _inputs(_graph(tmp_path, [0, 1]), 3)
    cols = _columns(_with_ops(g, contracting=True))
    assert np.expm1(cols["log_k_tile"]).max() > 1  # the root's operand gives a K dim here
    # the copies are the originals only if the dot is seen: this checks the op's detection
    for name in K_READING:
        np.testing.assert_array_equal(cols[f"kc_{name}"], cols[name], err_msg=name)


def _elem_bytes(graph: TileGraph) -> float:
    nf = graph.node_feat[_root(graph)]
    return 2.0 if nf[15] > 0 else (1.0 if nf[3] > 0 else 4.0)


#: Sum, sum of a fixed projection and sum of log1p(|x|) of the version-4 tile columns
#: (no relative, no descriptor) of ``write_tile(n=12, c=30, seed=s)``, recorded with the
#: extractor of feature version 4 (commit e26307d), before the ``tp_`` columns were added.
RECORDED_V4 = {
    0: (3603737.974967627, -2603325.176592005, 2599.221867880451),
    1: (18628093.810714263, -13592832.96551386, 2522.2639671799543),
    2: (2663046.651240629, -1911251.7583266278, 2446.767479558762),
}


def _check_recorded(
    tmp_path: Path, keep: list[int], recorded: dict[int, tuple[float, float, float]]
) -> None:
    """Columns ``keep`` of ``write_tile(n=12, c=30, seed=s)`` against their recorded sum, sum
    of a fixed projection and sum of log1p(|x|), per seed s."""
    for seed, sums in recorded.items():
        g = load_tile_graph(write_tile(tmp_path / f"t{seed}.npz", n=12, c=30, seed=seed))
        X = extract_tile_features(g, "tile:xla", SPEC)[0][:, keep].astype(np.float64)
        w = np.random.default_rng(0).standard_normal(X.shape[1])
        got = (X.sum(), (X @ w).sum(), np.log1p(np.abs(X)).sum())
        np.testing.assert_allclose(got, sums, rtol=1e-6)


def test_version_4_columns_keep_the_values_version_4_extracted(tmp_path: Path) -> None:
    names = tile_feature_names(SPEC)
    keep = [i for i, n in enumerate(names) if not n.startswith(("tp_", "kc_"))]
    _check_recorded(tmp_path, keep, RECORDED_V4)


#: The same three sums of the four ``tp_`` working-set columns that version 8 superseded,
#: recorded with the extractor of commit d0b58e6 (feature version 7): older models read them.
RECORDED_V7_TP = {
    0: (780.2645683288574, 298.90096979173927, 158.15406622372188),
    1: (711.7082939147949, 272.63867653964417, 152.96355334219237),
    2: (762.7618236541748, 292.1960807455986, 156.7410525118447),
}


def test_the_superseded_tp_columns_keep_the_values_version_7_extracted(tmp_path: Path) -> None:
    names = tile_feature_names(SPEC)
    tp = [n for n in K_READING if n.startswith("tp_")]
    assert len(tp) == 4
    keep = [names.index(n) for n in tp]
    _check_recorded(tmp_path, keep, RECORDED_V7_TP)
