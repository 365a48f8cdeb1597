"""Tests of the synthetic dataset generator (hpo/synth/ and its family modules)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import kendalltau

from hpo.data.load import (
    COLLECTIONS,
    SPLITS,
    is_layout,
    iter_config_chunks,
    list_graphs,
    load_graph,
    load_layout_graph,
)
from hpo.data.opcodes import CONVOLUTION
from hpo.errors import UsageError
from hpo.synth.dataset import SCALES, ScaleSpec, generate_dataset, scale_spec
from hpo.synth.graph import NodeTable
from hpo.synth.layout import CONFIGURABLE_OPCODES, _config_cost_terms, _layout_problem
from hpo.synth.npz_writer import NpzWriter

HEX32 = re.compile(r"[0-9a-f]{32}")
TILE_KEYS = [
    "node_feat",
    "node_opcode",
    "edge_index",
    "config_feat",
    "config_runtime",
    "config_runtime_normalizers",
]
LAYOUT_KEYS = [
    "node_feat",
    "node_opcode",
    "edge_index",
    "node_config_ids",
    "node_splits",
    "node_config_feat",
    "config_runtime",
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tiny")
    generate_dataset(root, "tiny", seed=0)
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.npz"))}


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as npz:
        return {k: npz[k] for k in npz.files}


def _graphs(root: Path, collection: str, splits: tuple[str, ...] = SPLITS) -> list[Path]:
    return [p for s in splits for p in list_graphs(root, collection, s)]


def _spread(runtime: np.ndarray) -> float:
    return float((runtime.max() - runtime.min()) / np.median(runtime))


def test_scales_and_specs() -> None:
    assert SCALES == ("tiny", "small", "full", "real")
    specs = [scale_spec(s) for s in SCALES[:3]]  # 'real' has few graphs, of real sizes
    assert all(isinstance(s, ScaleSpec) for s in specs)
    real = scale_spec("real")
    assert real.nlp_layout_configs == (60000, 100000)
    assert real.layout_graphs == (2, 1, 1)
    assert [s.graphs("tile:xla", "train") for s in specs] == sorted(
        s.graphs("tile:xla", "train") for s in specs
    )
    with pytest.raises(AttributeError, match="cannot assign"):
        specs[0].tile_graphs = (1, 1, 1)  # type: ignore[misc]


def test_unknown_scale_raises(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="unknown scale 'huge'"):
        generate_dataset(tmp_path, "huge")
    assert not any(tmp_path.iterdir())


def test_invalid_spec_raises() -> None:
    with pytest.raises(ValueError, match="layout_configs"):
        ScaleSpec(
            name="bad",
            tile_graphs=(1, 1, 1),
            tile_nodes=(10, 20),
            tile_configs=(5, 9),
            layout_graphs=(1, 1, 1),
            layout_nodes=(40, 50),
            layout_config_nodes=(2, 3),
            layout_configs=(9, 5),
            layout_test_configs=(5, 9),
        )


def test_every_file_loads_and_counts_match(tiny: Path) -> None:
    spec = scale_spec("tiny")
    for collection in COLLECTIONS:
        for split in SPLITS:
            paths = list_graphs(tiny, collection, split)
            assert len(paths) == spec.graphs(collection, split)
            for path in paths:
                graph = load_graph(path, collection)
                assert graph.labeled == (split != "test")


@pytest.mark.parametrize("collection", COLLECTIONS)
def test_stored_keys_dtypes_and_shapes(tiny: Path, collection: str) -> None:
    for path in _graphs(tiny, collection):
        with zipfile.ZipFile(path) as zf:
            names = [n.removesuffix(".npy") for n in zf.namelist()]
            assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert names == (LAYOUT_KEYS if is_layout(collection) else TILE_KEYS)
        a = _arrays(path)
        n = a["node_feat"].shape[0]
        assert a["node_feat"].dtype == np.float32
        assert a["node_feat"].shape == (n, 140)
        assert a["node_opcode"].dtype == np.uint8
        assert a["node_opcode"].shape == (n,)
        assert 1 <= a["node_opcode"].min()
        assert a["node_opcode"].max() <= 120
        edges = a["edge_index"]
        assert edges.dtype == np.int64
        assert edges.ndim == 2
        assert edges.shape[1] == 2
        assert (edges[:, 1] < edges[:, 0]).all()
        assert len(np.unique(edges, axis=0)) == len(edges)
        assert a["config_runtime"].dtype == np.int64
        if is_layout(collection):
            assert 1.0 <= len(edges) / n <= 1.9
            ids, feat = a["node_config_ids"], a["node_config_feat"]
            assert ids.dtype == np.int64
            assert (np.diff(ids) > 0).all()
            assert feat.dtype == np.float32
            assert feat.shape == (a["config_runtime"].shape[0], ids.shape[0], 18)
            splits = a["node_splits"]
            assert splits.dtype == np.int64
            assert splits.ndim == 2
            assert splits.shape[0] == 1
            assert splits[0, 0] == 0
            assert splits[0, -1] == n  # upstream's encoder form: ends with the node count
            assert (np.diff(splits[0]) > 0).all()
        else:
            c = a["config_feat"].shape[0]
            assert a["config_feat"].dtype == np.float32
            assert a["config_feat"].shape == (c, 24)
            assert a["config_runtime"].shape == (c,)
            assert a["config_runtime_normalizers"].dtype == np.int64


@pytest.mark.parametrize("collection", COLLECTIONS)
def test_node_features_are_consistent(tiny: Path, collection: str) -> None:
    for path in _graphs(tiny, collection, ("train",)):
        a = _arrays(path)
        feat, t = (
            a["node_feat"],
            NodeTable.from_arrays(a["node_feat"], a["node_opcode"], a["edge_index"]),
        )
        dims = feat[:, 21:27]
        np.testing.assert_array_equal(feat[:, 27], dims.sum(axis=1))
        assert (feat[:, 2:21].sum(axis=1) == 1).all()
        ranked = t.ranks > 0
        np.testing.assert_array_equal(feat[ranked, 28], np.where(dims > 0, dims, 1).prod(1)[ranked])
        sorted_layout = np.sort(np.where(t.layouts < 0, 99, t.layouts), axis=1)
        expected = np.where(np.arange(6) < t.ranks[:, None], np.arange(6), 99)
        np.testing.assert_array_equal(sorted_layout, expected)
        roots = np.flatnonzero(feat[:, 0])
        if is_layout(collection):
            np.testing.assert_array_equal(roots, a["node_splits"][0, 1:] - 1)
            ids = a["node_config_ids"]
            assert np.isin(a["node_opcode"][ids], CONFIGURABLE_OPCODES).all()
            assert (t.ranks[ids] >= 2).all()
        else:
            assert roots.tolist() == [len(feat) - 1]


def _check_block(block: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Every block is the default, a permutation of its rank, or a partial layout (two
    distinct most-minor dims of a tensor of rank >= 3, the rest -1); returns the partial ones."""
    default = (block == -1).all(axis=-1)
    perm = np.sort(np.where(block < 0, 99, block), axis=-1)
    expected = np.where(np.arange(6) < rank[:, None], np.arange(6), 99)
    full = (perm == expected[None]).all(axis=-1)
    minor = block[..., :2]
    partial = (
        (rank[None] >= 3)
        & (minor >= 0).all(axis=-1)
        & (minor < rank[None, :, None]).all(axis=-1)
        & (minor[..., 0] != minor[..., 1])
        & (block[..., 2:] == -1).all(axis=-1)
    )
    assert (default | full | partial).all()
    return partial


@pytest.mark.parametrize("collection", COLLECTIONS[1:])
def test_layout_blocks_are_permutations_partial_or_default(tiny: Path, collection: str) -> None:
    counts = np.zeros(2)
    for path in _graphs(tiny, collection):
        a = _arrays(path)
        p = _layout_problem(a["node_feat"], a["node_opcode"], a["edge_index"], a["node_config_ids"])
        feat = a["node_config_feat"]
        partial = np.zeros(feat.shape[0], dtype=bool)
        full3 = np.zeros(feat.shape[0], dtype=bool)  # a full layout of rank >= 3
        for block, rank in (
            (feat[..., 0:6], p.out_rank),
            (feat[..., 6:12], p.in_rank),
            (feat[..., 12:18], p.kernel_rank),
        ):
            partial |= _check_block(block, rank).any(axis=1)
            full3 |= ((block[..., 2] >= 0) & (rank[None] >= 3)).any(axis=1)
        assert (feat[..., 12:18][:, ~p.is_conv] == -1).all()
        assert not (partial & full3).any()  # a config is partial as a whole
        counts += [partial.sum(), len(partial)]
    assert 0.25 < counts[0] / counts[1] < 0.75  # PARTIAL_SHARE = 0.5 of the configs


def test_xla_layout_files_hold_partial_layouts_of_5d_convolutions(tiny: Path) -> None:
    # the real U-Net holds 53 five-dimensional convolutions, mostly fixing two minor dims
    seen = np.zeros(2)
    for collection in ("layout:xla:default", "layout:xla:random"):
        for path in _graphs(tiny, collection):
            a = _arrays(path)
            ids = a["node_config_ids"]
            rank = (a["node_feat"][ids, 21:27] > 0).sum(axis=1)
            conv5 = (a["node_opcode"][ids] == CONVOLUTION) & (rank == 5)
            out = a["node_config_feat"][:, conv5, 0:6]
            seen += [conv5.sum(), ((out[..., 0] >= 0) & (out[..., 2] == -1)).sum()]
    assert seen[0] > 0  # configurable rank-5 convolutions
    assert seen[1] > 0  # given a partial output layout


def test_tile_config_feat_is_consistent(tiny: Path) -> None:
    for path in _graphs(tiny, "tile:xla"):
        a = _arrays(path)
        cf, feat = a["config_feat"], a["node_feat"]
        root_dims = feat[feat[:, 0] == 1][-1, 21:27]
        rank = int((root_dims > 0).sum())
        for col in (0, 8):
            np.testing.assert_array_equal(cf[:, col + 6], cf[:, col : col + 6].sum(axis=1))
            np.testing.assert_array_equal(
                cf[:, col + 7],
                np.where(cf[:, col : col + 6] > 0, cf[:, col : col + 6], 1).prod(axis=1),
            )
        out = cf[:, 8:14]
        assert (out[:, :rank] >= 1).all()
        assert (out[:, :rank] <= root_dims[:rank]).all()
        assert (out[:, rank:] == 0).all()
        assert (cf[:, 16:] == 0).all()
        assert len(np.unique(cf, axis=0)) == len(cf)


def test_same_seed_is_byte_identical_other_seed_differs(tiny: Path, tmp_path: Path) -> None:
    generate_dataset(tmp_path / "again", "tiny", seed=0)
    generate_dataset(tmp_path / "other", "tiny", seed=1)
    first, again, other = _files(tiny), _files(tmp_path / "again"), _files(tmp_path / "other")
    assert first == again
    assert set(first) != set(other)
    assert not set(first.values()) & set(other.values())


def test_layout_chunking_does_not_change_bytes(
    tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("hpo.synth.layout._CHUNK_CELLS", 50)
    generate_dataset(tmp_path, "tiny", seed=0)
    assert _files(tmp_path) == _files(tiny)


def test_test_split_is_unlabeled_with_hex_stems(tiny: Path) -> None:
    for collection in COLLECTIONS:
        for split in SPLITS:
            for path in list_graphs(tiny, collection, split):
                assert bool(HEX32.fullmatch(path.stem)) == (split == "test")
                a = _arrays(path)
                if split == "test":
                    assert (a["config_runtime"] == 0).all()
                    if not is_layout(collection):
                        assert (a["config_runtime_normalizers"] == 1).all()
                else:
                    assert (a["config_runtime"] > 0).all()


def test_tile_normalizer_is_a_noisy_default_runtime(tiny: Path) -> None:
    for path in _graphs(tiny, "tile:xla", ("train", "valid")):
        norm = _arrays(path)["config_runtime_normalizers"].astype(float)
        assert 0 < norm.std() / norm.mean() < 0.02


def test_default_search_is_narrower_than_random(tiny: Path) -> None:
    spreads = {
        search: [
            _spread(load_layout_graph(p).config_runtime.astype(float))
            for src in ("xla", "nlp")
            for p in _graphs(tiny, f"layout:{src}:{search}", ("train", "valid"))
        ]
        for search in ("default", "random")
    }
    assert np.median(spreads["default"]) < 0.25
    assert np.median(spreads["default"]) < 0.5 * np.median(spreads["random"])


def test_duplicated_configs_have_jittered_runtimes(tiny: Path) -> None:
    n_dup = 0
    for path in _graphs(tiny, "layout:xla:default", ("train",)):
        a = _arrays(path)
        rows = a["node_config_feat"].reshape(len(a["config_runtime"]), -1)
        _, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
        n_dup += int((counts > 1).sum())
        runtime = a["config_runtime"].astype(float)
        for group in np.flatnonzero(counts > 1)[:5]:
            r = runtime[inverse.ravel() == group]
            assert r.max() / r.min() - 1 < 0.03
    assert n_dup > 0


def test_padded_cost_law_is_learnable_and_raw_means_are_not(tiny: Path) -> None:
    padded_tau, mean_tau = [], []
    for src in ("xla", "nlp"):
        for path in _graphs(tiny, f"layout:{src}:random", ("train", "valid")):
            graph = load_layout_graph(path)
            p = _layout_problem(
                graph.node_feat, graph.node_opcode, graph.edge_index, graph.node_config_ids
            )
            feat = np.concatenate([block for _, block in iter_config_chunks(path, 64)])
            node, _ = _config_cost_terms(p, feat)
            padded_tau.append(kendalltau(node, graph.config_runtime)[0])
            mean_tau.append(
                abs(kendalltau(feat.reshape(len(feat), -1).mean(1), graph.config_runtime)[0])
            )
    assert np.mean(padded_tau) > 0.6
    assert np.mean(mean_tau) < 0.3


def test_existing_dataset_needs_overwrite(tmp_path: Path) -> None:
    messages: list[str] = []
    summary = generate_dataset(tmp_path, "tiny", seed=0, progress=messages.append)
    assert summary["n_files"] == len(messages) == len(_files(tmp_path))
    generate_dataset(tmp_path, "tiny", seed=0)  # same files: fine
    with pytest.raises(UsageError, match="graph files this run would not write"):
        generate_dataset(tmp_path, "tiny", seed=1)
    generate_dataset(tmp_path, "tiny", seed=1, overwrite=True)
    assert len(_files(tmp_path)) == summary["n_files"]


def test_npz_writer_streams_rows_and_checks_blocks(tmp_path: Path) -> None:
    data = np.arange(5 * 3 * 2, dtype=np.float32).reshape(5, 3, 2)
    with NpzWriter(tmp_path / "a.npz") as npz:
        npz.add("x", np.arange(4))
        npz.add_rows("y", data.shape, data.dtype, iter([data[:2], data[2:]]))
    with np.load(tmp_path / "a.npz") as loaded:
        np.testing.assert_array_equal(loaded["y"], data)
        np.testing.assert_array_equal(loaded["x"], np.arange(4))
    with (
        pytest.raises(ValueError, match="wrote 2 rows, header says 5"),
        NpzWriter(tmp_path / "b.npz") as npz,
    ):
        npz.add_rows("y", data.shape, data.dtype, iter([data[:2]]))
    assert not (tmp_path / "b.npz").exists()
    with pytest.raises(ValueError, match="does not match"), NpzWriter(tmp_path / "c.npz") as npz:
        npz.add_rows("y", data.shape, data.dtype, iter([data.astype(np.float64)]))


def test_synth_refuses_a_folder_it_did_not_write(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    with pytest.raises(UsageError, match=r"exists and is not a generated dataset root"):
        generate_dataset(mine, "tiny", seed=0)
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(UsageError, match=r"is a symlink"):
        generate_dataset(link, "tiny", seed=0)


def test_npz_writer_leaves_no_file_when_the_disk_fills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk once left a truncated ``.npz`` under its final name."""
    real = np.lib.format.write_array

    def full(fh: Any, array: np.ndarray, **kw: Any) -> None:
        if array.size > 4:
            raise OSError(28, "No space left on device")
        real(fh, array, **kw)

    monkeypatch.setattr(np.lib.format, "write_array", full)

    def write() -> None:
        with NpzWriter(tmp_path / "a.npz") as npz:
            npz.add("small", np.zeros(2))
            assert not (tmp_path / "a.npz").exists()  # only the whole file takes the name
            npz.add("big", np.zeros(10))

    with pytest.raises(OSError, match="No space left"):
        write()
    assert list(tmp_path.iterdir()) == []
