from __future__ import annotations

import io
import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from graphs import layout_arrays, write_layout, write_tile

from hpo.data.load import (
    COLLECTIONS,
    collection_dir,
    iter_config_chunks,
    list_graphs,
    load_graph,
    load_layout_graph,
    load_tile_graph,
    resolve_collections,
)
from hpo.errors import DataFormatError, UsageError


def test_resolve_collections_selectors() -> None:
    assert resolve_collections("all") == COLLECTIONS
    assert resolve_collections("layout") == COLLECTIONS[1:]
    assert resolve_collections("tile") == ("tile:xla",)
    assert resolve_collections("layout:nlp:random,tile:xla") == ("tile:xla", "layout:nlp:random")


def test_resolve_collections_unknown() -> None:
    with pytest.raises(UsageError, match="unknown collection 'layout:foo'"):
        resolve_collections("layout:foo")


def test_collection_dir_layout(tmp_path: Path) -> None:
    assert collection_dir(tmp_path, "tile:xla", "train") == tmp_path / "npz/tile/xla/train"
    assert (
        collection_dir(tmp_path, "layout:nlp:default", "test")
        == tmp_path / "npz/layout/nlp/default/test"
    )


def test_list_graphs_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no tile:xla valid data"):
        list_graphs(tmp_path, "tile:xla", "valid")


def test_load_valid_tile(tmp_path: Path) -> None:
    g = load_tile_graph(write_tile(tmp_path / "a.npz", n=10, c=7))
    assert (g.n_nodes, g.n_configs, g.labeled) == (10, 7, True)
    assert g.node_opcode.dtype == np.int64
    np.testing.assert_allclose(g.target, g.config_runtime / g.config_runtime_normalizers)


def test_load_valid_layout(tmp_path: Path) -> None:
    g = load_layout_graph(write_layout(tmp_path / "a.npz", n=30, nc=5, c=11))
    assert (g.n_nodes, g.n_config_nodes, g.n_configs, g.labeled) == (30, 5, 11, True)


def test_int32_variants_accepted(tmp_path: Path) -> None:
    arrays = layout_arrays(n=30, nc=5, c=11)
    path = write_layout(
        tmp_path / "a.npz",
        n=30,
        nc=5,
        c=11,
        node_opcode=arrays["node_opcode"].astype(np.int32),
        edge_index=arrays["edge_index"].astype(np.int32),
        node_config_ids=arrays["node_config_ids"].astype(np.int32),
        config_runtime=arrays["config_runtime"].astype(np.int32),
        node_splits=np.array([0, 15], dtype=np.int32),
    )
    g = load_layout_graph(path)
    assert g.node_splits.shape == (1, 2)


def test_tile_placeholder_labels_are_unlabeled(tmp_path: Path) -> None:
    path = write_tile(
        tmp_path / "t.npz",
        c=5,
        config_runtime=np.zeros(5, dtype=np.int64),
        config_runtime_normalizers=np.ones(5, dtype=np.int64),
    )
    assert load_tile_graph(path).labeled is False


def test_layout_placeholder_labels_are_unlabeled(tmp_path: Path) -> None:
    path = write_layout(tmp_path / "t.npz", c=9, config_runtime=np.zeros(9, dtype=np.int64))
    assert load_layout_graph(path).labeled is False


def test_missing_key(tmp_path: Path) -> None:
    path = write_tile(tmp_path / "bad.npz", config_feat=None)
    with pytest.raises(DataFormatError, match=r"bad\.npz: missing key 'config_feat'"):
        load_tile_graph(path)


def test_missing_node_config_feat(tmp_path: Path) -> None:
    path = write_layout(tmp_path / "bad.npz", node_config_feat=None)
    with pytest.raises(DataFormatError, match="missing key 'node_config_feat'"):
        load_layout_graph(path)


def test_wrong_dtype(tmp_path: Path) -> None:
    path = write_tile(tmp_path / "bad.npz", node_feat=np.zeros((12, 140), dtype=np.int64))
    with pytest.raises(DataFormatError, match="key 'node_feat': expected float dtype, found int64"):
        load_tile_graph(path)


def test_wrong_width(tmp_path: Path) -> None:
    path = write_tile(tmp_path / "bad.npz", node_feat=np.zeros((12, 139), dtype=np.float32))
    with pytest.raises(DataFormatError, match=r"expected shape \(\*, 140\), found \(12, 139\)"):
        load_tile_graph(path)


def test_node_count_disagrees(tmp_path: Path) -> None:
    path = write_tile(tmp_path / "bad.npz", n=12, node_opcode=np.ones(11, dtype=np.uint8))
    with pytest.raises(DataFormatError, match=r"key 'node_opcode': expected shape \(12\)"):
        load_tile_graph(path)


def test_config_count_disagrees(tmp_path: Path) -> None:
    path = write_tile(tmp_path / "bad.npz", c=30, config_runtime=np.ones(29, dtype=np.int64))
    with pytest.raises(DataFormatError, match=r"key 'config_runtime': expected shape \(30\)"):
        load_tile_graph(path)


def test_edge_out_of_range(tmp_path: Path) -> None:
    path = write_tile(tmp_path / "bad.npz", n=12, edge_index=np.array([[1, 12]], dtype=np.int64))
    with pytest.raises(DataFormatError, match=r"key 'edge_index': expected node ids in \[0, 12\)"):
        load_tile_graph(path)


def test_config_ids_out_of_range(tmp_path: Path) -> None:
    path = write_layout(
        tmp_path / "bad.npz", n=40, nc=8, node_config_ids=np.arange(33, 41, dtype=np.int64)
    )
    with pytest.raises(DataFormatError, match="key 'node_config_ids': expected node ids in"):
        load_layout_graph(path)


def test_node_config_feat_shape_disagrees(tmp_path: Path) -> None:
    path = write_layout(
        tmp_path / "bad.npz", nc=8, c=50, node_config_feat=np.zeros((50, 7, 18), dtype=np.float32)
    )
    with pytest.raises(DataFormatError, match=r"expected shape \(50, 8, 18\).*found \(50, 7, 18\)"):
        load_layout_graph(path)


# --- runtimes and normalizers: every bad value refused with where it is -------------------

NAN, INF = np.nan, np.inf


def _tile_labels(c: int, **at: float) -> tuple[np.ndarray, np.ndarray]:
    runtime = np.arange(1000, 1000 + c, dtype=np.float64)
    norm = np.full(c, 500.0)
    for name, value in at.items():
        key, index = name.rsplit("_", 1)
        (runtime if key == "rt" else norm)[int(index)] = value
    return runtime, norm


BAD_TILE = [
    pytest.param(
        {"rt_4": NAN, "rt_9": NAN, "rt_17": NAN},
        r"'config_runtime': expected whole positive nanoseconds, "
        r"found 3 NaN values at configs 4, 9, 17$",
        id="nan",
    ),
    pytest.param({"rt_2": INF}, r"'config_runtime': .*found 1 \+inf value at config 2$", id="+inf"),
    pytest.param({"rt_0": -INF}, r"'config_runtime': .*found 1 -inf value at config 0$", id="-inf"),
    pytest.param(
        {"rt_1": -5.0, "rt_3": -1.0},
        r"'config_runtime': .*found 2 negative values at configs 1, 3$",
        id="negative",
    ),
    pytest.param({"rt_6": 0.0}, r"'config_runtime': .*found 1 zero value at config 6$", id="zero"),
    pytest.param(
        {"rt_5": 1.5}, r"'config_runtime': .*found 1 fractional value at config 5$", id="fraction"
    ),
    pytest.param(
        {"nm_3": 0.0},
        r"'config_runtime_normalizers': expected whole positive nanoseconds, "
        r"found 1 zero value at config 3$",
        id="zero-normalizer",
    ),
    pytest.param(
        {"nm_1": NAN, "nm_2": -INF},
        r"'config_runtime_normalizers': .*found 1 NaN value at config 1; 1 -inf value at config 2$",
        id="normalizer-nan-inf",
    ),
    pytest.param(
        {"nm_0": -500.0}, r"'config_runtime_normalizers': .*1 negative value at config 0$", id="neg"
    ),
]


@pytest.mark.parametrize(("bad", "message"), BAD_TILE)
@pytest.mark.filterwarnings("error")  # no RuntimeWarning on the way to the error
def test_bad_tile_labels_are_refused(tmp_path: Path, bad: dict, message: str) -> None:
    runtime, norm = _tile_labels(20, **bad)
    path = write_tile(
        tmp_path / "bad.npz", c=20, config_runtime=runtime, config_runtime_normalizers=norm
    )
    with pytest.raises(DataFormatError, match=rf"^{re.escape(str(path))}: key {message}"):
        load_tile_graph(path)


def test_int_runtime_negative_and_zero_are_listed_together(tmp_path: Path) -> None:
    runtime = np.array([5, -1, 3, 0, -7], dtype=np.int64)
    path = write_tile(tmp_path / "bad.npz", c=5, config_runtime=runtime)
    with pytest.raises(
        DataFormatError,
        match=r"'config_runtime': expected whole positive nanoseconds, found 2 negative values "
        r"at configs 1, 4; 1 zero value at config 3$",
    ):
        load_tile_graph(path)


def test_many_bad_values_are_counted_and_the_first_listed(tmp_path: Path) -> None:
    runtime = np.full(50, np.nan)
    path = write_layout(tmp_path / "bad.npz", c=50, config_runtime=runtime)
    with pytest.raises(
        DataFormatError, match=r"found 50 NaN values at configs 0, 1, 2, 3, 4, \.\.\.$"
    ):
        load_layout_graph(path)


@pytest.mark.parametrize(
    ("index", "value", "what"),
    [
        (4, NAN, "1 NaN value at config 4"),
        (0, INF, r"1 \+inf value at config 0"),
        (7, -INF, "1 -inf value at config 7"),
        (2, -3.0, "1 negative value at config 2"),
        (9, 0.0, "1 zero value at config 9"),
        (1, 2.5, "1 fractional value at config 1"),
    ],
)
@pytest.mark.filterwarnings("error")
def test_bad_layout_runtimes_are_refused(
    tmp_path: Path, index: int, value: float, what: str
) -> None:
    runtime = np.linspace(1e6, 2e6, 11)
    runtime[index] = value
    path = write_layout(tmp_path / "bad.npz", c=11, config_runtime=runtime)
    with pytest.raises(
        DataFormatError,
        match=rf"bad\.npz: key 'config_runtime': expected whole positive nanoseconds, "
        rf"found {what}$",
    ):
        load_layout_graph(path)


def test_uint64_runtime_beyond_int64_is_refused(tmp_path: Path) -> None:
    runtime = np.full(9, 10**6, dtype=np.uint64)
    runtime[3] = 2**63 + 5
    path = write_layout(tmp_path / "bad.npz", c=9, config_runtime=runtime)
    with pytest.raises(DataFormatError, match=r"1 out-of-int64-range value at config 3$"):
        load_layout_graph(path)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.float64])
def test_runtimes_above_2_to_the_53_are_refused(tmp_path: Path, dtype: type) -> None:
    """Probe2 #20: runtimes 2**60 + i, all distinct, read as one value in float64 (data check
    said every config had the runtime 1.15292e+18): a runtime above 2**53 is refused."""
    runtime = (np.full(9, 2**60, dtype=np.int64) + np.arange(9)).astype(dtype)
    runtime[:4] = np.arange(1, 5) * 10**6
    path = write_layout(tmp_path / "bad.npz", c=9, config_runtime=runtime)
    with pytest.raises(
        DataFormatError, match=r"found 5 above-2\^53 values at configs 4, 5, 6, 7, 8$"
    ):
        load_layout_graph(path)
    ok = np.full(9, 2**53, dtype=dtype)
    ok[0] = 1
    load_layout_graph(write_layout(tmp_path / "ok.npz", c=9, config_runtime=ok))


@pytest.mark.filterwarnings("error")
def test_whole_float_runtimes_are_cast_exactly(tmp_path: Path) -> None:
    runtime, norm = _tile_labels(20)
    runtime[0] = 2.0**53  # up to 2**53, every whole number is exact in float64
    tile = load_tile_graph(
        write_tile(
            tmp_path / "t.npz", c=20, config_runtime=runtime, config_runtime_normalizers=norm
        )
    )
    assert tile.config_runtime.dtype == np.int64
    assert tile.config_runtime_normalizers.dtype == np.int64
    np.testing.assert_array_equal(tile.config_runtime, runtime.astype(np.int64))
    assert tile.config_runtime[0] == 2**53
    layout = load_layout_graph(
        write_layout(tmp_path / "l.npz", c=11, config_runtime=np.linspace(1e6, 2e6, 11))
    )
    assert layout.config_runtime.dtype == np.int64
    assert layout.labeled


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.float32])
def test_placeholder_test_labels_still_load(tmp_path: Path, dtype: type) -> None:
    tile = load_tile_graph(
        write_tile(
            tmp_path / "t.npz",
            c=6,
            config_runtime=np.zeros(6, dtype=dtype),
            config_runtime_normalizers=np.ones(6, dtype=dtype),
        )
    )
    layout = load_layout_graph(
        write_layout(tmp_path / "l.npz", c=7, config_runtime=np.zeros(7, dtype=dtype))
    )
    assert (tile.labeled, layout.labeled) == (False, False)
    assert tile.config_runtime.dtype == layout.config_runtime.dtype == np.int64
    np.testing.assert_array_equal(tile.config_runtime_normalizers, 1)


def test_zero_runtimes_with_real_normalizers_are_labeled_and_refused(tmp_path: Path) -> None:
    path = write_tile(tmp_path / "bad.npz", c=3, config_runtime=np.zeros(3, dtype=np.int64))
    with pytest.raises(DataFormatError, match=r"found 3 zero values at configs 0, 1, 2$"):
        load_tile_graph(path)


def test_truncated_file(tmp_path: Path) -> None:
    path = write_layout(tmp_path / "bad.npz")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataFormatError, match=r"bad\.npz: not a readable \.npz archive"):
        load_layout_graph(path)


def test_not_a_zip(tmp_path: Path) -> None:
    path = tmp_path / "bad.npz"
    path.write_text("hello")
    with pytest.raises(DataFormatError, match=r"bad\.npz: not a readable \.npz archive"):
        load_tile_graph(path)


def test_object_array_refused(tmp_path: Path) -> None:
    path = write_tile(tmp_path / "bad.npz", config_feat=np.array([{"a": 1}], dtype=object))
    with pytest.raises(DataFormatError, match="key 'config_feat'"):
        load_tile_graph(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataFormatError, match="file not found"):
        load_graph(tmp_path / "nope.npz", "tile:xla")


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("chunk", [1, 7, 50, 1000])
def test_chunks_equal_full_read(tmp_path: Path, compressed: bool, chunk: int) -> None:
    path = write_layout(tmp_path / "a.npz", c=50, compressed=compressed)
    full = np.load(path, allow_pickle=False)["node_config_feat"]
    starts, blocks = zip(*iter_config_chunks(path, chunk), strict=True)
    assert list(starts) == list(range(0, 50, chunk))
    assert all(b.shape[0] <= chunk for b in blocks)
    np.testing.assert_array_equal(np.concatenate(blocks), full)


def test_truncated_member_detected(tmp_path: Path) -> None:
    import zipfile

    arrays = layout_arrays(c=50)
    path = tmp_path / "short.npz"
    np.savez(path, **arrays)
    # rewrite node_config_feat with a header promising more rows than stored
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    raw = members["node_config_feat.npy"]
    members["node_config_feat.npy"] = raw[: len(raw) - 18 * 8 * 4 * 3]
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    with pytest.raises(DataFormatError, match="key 'node_config_feat': truncated data"):
        list(iter_config_chunks(path, 16))


@pytest.mark.parametrize("compressed", [False, True])
def test_chunked_peak_memory_is_bounded(tmp_path: Path, compressed: bool) -> None:
    c, nc = 6000, 40  # 17 MB of node_config_feat
    arrays = layout_arrays(n=60, nc=nc, c=10)
    feat = np.broadcast_to(arrays["node_config_feat"][:1], (c, nc, 18)).copy()
    path = tmp_path / "big.npz"
    arrays.update(node_config_feat=feat, config_runtime=np.full(c, 10**6, dtype=np.int64))
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    del feat, arrays
    tracemalloc.start()
    total = 0.0
    for _, block in iter_config_chunks(path, 128):
        total += float(block.sum())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    full_bytes = c * nc * 18 * 4
    assert peak < full_bytes / 10, f"peak {peak} bytes for a {full_bytes}-byte member"


@pytest.mark.parametrize(
    "splits",
    [[0, 15, 30], [0, 15], [0, 0, 30, 30], [0]],
    ids=["ends-with-n", "starting-ids", "repeated", "one-segment"],
)
def test_node_splits_upstream_forms_accepted(tmp_path: Path, splits: list[int]) -> None:
    # upstream's encoder ends node_splits with n (every real file does); its README describes
    # starting ids only; an empty computation repeats a boundary
    path = write_layout(tmp_path / "a.npz", n=30, node_splits=np.array([splits], dtype=np.int64))
    np.testing.assert_array_equal(load_layout_graph(path).node_splits[0], splits)


@pytest.mark.parametrize(
    ("splits", "message"),
    [
        ([0, 31], r"expected boundaries in \[0, 30\], found \[0, 31\]"),
        ([-1, 10], r"expected boundaries in \[0, 30\], found \[-1, 10\]"),
        ([0, 20, 10, 30], "expected non-decreasing boundaries, found 20 before 10"),
    ],
)
def test_node_splits_out_of_range_or_decreasing(
    tmp_path: Path, splits: list[int], message: str
) -> None:
    path = write_layout(tmp_path / "bad.npz", n=30, node_splits=np.array([splits], dtype=np.int64))
    with pytest.raises(DataFormatError, match=rf"bad\.npz: key 'node_splits': {message}"):
        load_layout_graph(path)


def test_decreasing_unsigned_node_splits_are_refused(tmp_path: Path) -> None:
    """Unsigned steps wrapped around instead of going negative, so the check passed them."""
    splits = np.array([[0, 20, 10, 30]], dtype=np.uint64)
    path = write_layout(tmp_path / "bad.npz", n=30, node_splits=splits)
    with pytest.raises(DataFormatError, match="non-decreasing boundaries, found 20 before 10"):
        load_layout_graph(path)


def _patch_zip_headers(path: Path, local: tuple[int, int], central: tuple[int, int]) -> None:
    """OR ``value`` into the byte at ``offset`` of every local (and central) zip header."""
    data = bytearray(path.read_bytes())
    for magic, (offset, value) in ((b"PK\x03\x04", local), (b"PK\x01\x02", central)):
        at = data.find(magic)
        while at != -1:
            data[at + offset] |= value
            at = data.find(magic, at + 4)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    ("local", "central", "why"),
    [
        ((6, 1), (8, 1), "encrypted"),  # the general-purpose flag's bit 0
        ((8, 99), (10, 99), "compression method"),  # a method zipfile does not know
    ],
)
def test_encrypted_or_unknown_compression_members_are_refused(
    tmp_path: Path, local: tuple[int, int], central: tuple[int, int], why: str
) -> None:
    """zipfile raises RuntimeError and NotImplementedError for these; each escaped as a
    traceback from every reader (and stopped `data check` at its first such file)."""
    path = write_layout(tmp_path / "odd.npz")
    _patch_zip_headers(path, local, central)
    with pytest.raises(DataFormatError, match=r"odd\.npz: .*" + why):
        load_layout_graph(path)
    with pytest.raises(DataFormatError, match=r"odd\.npz: .*" + why):
        next(iter_config_chunks(path, 10))


def test_a_header_declaring_more_than_the_member_holds_is_refused(tmp_path: Path) -> None:
    """np.load allocates what the header declares before reading: 560 TiB ended in a
    MemoryError, and a few GB would have been taken before the short read was found."""
    import zipfile

    path = write_tile(tmp_path / "huge.npz")
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    header = np.lib.format.header_data_from_array_1_0(np.zeros((1, 140), np.float32))
    header["shape"] = (2**40, 140)
    stream = io.BytesIO()
    np.lib.format.write_array_header_1_0(stream, header)
    members["node_feat.npy"] = stream.getvalue() + b"\0" * 560
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    with pytest.raises(DataFormatError, match=r"key 'node_feat': its header declares shape"):
        load_tile_graph(path)


def _with_member(path: Path, name: str, blob: bytes, method: int) -> None:
    """Rewrite the archive at ``path`` with member ``name`` replaced by ``blob``."""
    import zipfile

    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    members[name] = blob
    with zipfile.ZipFile(path, "w", compression=method) as zf:
        for member, data in members.items():
            zf.writestr(member, data)


def _npy_header(shape: tuple[int, ...], dtype: str) -> bytes:
    stream = io.BytesIO()
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, dtype))
    np.lib.format.write_array_header_1_0(stream, {**header, "shape": shape})
    return stream.getvalue()


@pytest.mark.parametrize("method", ["stored", "deflated"])
@pytest.mark.parametrize("shape", [(2**62,) * 20, (2**1100,), (3_000_000_000,)])
def test_huge_shapes_and_lying_sizes_are_refused(
    tmp_path: Path, method: str, shape: tuple[int, ...]
) -> None:
    """A shape whose size overflows a float, and a member whose directory entry claims the
    declared size: only the bytes the archive holds (times deflate's largest expansion)
    count, so np.load never allocates what a 128-byte member claims."""
    import zipfile

    kind = zipfile.ZIP_STORED if method == "stored" else zipfile.ZIP_DEFLATED
    path = write_tile(tmp_path / "liar.npz")
    _with_member(path, "node_feat.npy", _npy_header(shape, "|u1") + b"\0" * 64, kind)
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x01\x02")  # claim 3.1e9 bytes in every central-directory entry
    while at != -1:
        data[at + 24 : at + 28] = (3_100_000_000).to_bytes(4, "little")
        at = data.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(data))
    with pytest.raises(DataFormatError, match=r"key 'node_feat': its header declares shape"):
        load_tile_graph(path)
