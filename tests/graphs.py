"""Tiny hand-made TpuGraphs files for unit tests (like LightGBM's ``make_ranking``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hpo.data.load import load_layout_graph
from hpo.data.opcodes import CONVOLUTION, DOT, PARAMETER, RESHAPE
from hpo.features import FeatureSpec, extract_layout_features, layout_feature_names

#: Opcode of an elementwise add; one-hot columns of f32, bf16 and s8 in ``node_feat``.
ADD = 2
F32, BF16, S8 = 13, 15, 4


def _nodes(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    node_feat = np.zeros((n, 140), dtype=np.float32)
    rank = rng.integers(2, 5, size=n)
    sizes = np.array([1, 3, 8, 16, 64, 100, 128, 256, 384])
    for d in range(4):
        node_feat[:, 21 + d] = np.where(d < rank, rng.choice(sizes, size=n), 0)
    node_feat[:, 27] = node_feat[:, 21:27].sum(1)
    node_feat[:, 28] = np.where(node_feat[:, 21:27] > 0, node_feat[:, 21:27], 1).prod(1)
    for i in range(n):  # XLA default layout, zero padded
        node_feat[i, 134 : 134 + rank[i]] = np.arange(rank[i])[::-1]
    node_feat[-1, 0] = 1.0
    opcode = rng.choice([CONVOLUTION, DOT, RESHAPE, 1, 2, 3], size=n).astype(np.uint8)
    src = np.arange(1, n)
    edges = np.stack([src, rng.integers(0, src)], axis=1)
    extra = np.stack([src, np.maximum(src - 1, 0)], axis=1)
    return node_feat, opcode, np.concatenate([edges, extra]).astype(np.int64)


def write_tile(path: Path, n: int = 12, c: int = 30, seed: int = 0, **override: np.ndarray) -> Path:
    """Write a valid tile file; keyword arguments replace (or with None, drop) keys."""
    rng = np.random.default_rng(seed)
    node_feat, opcode, edges = _nodes(n, rng)
    cfg = np.zeros((c, 24), dtype=np.float32)
    cfg[:, 8:12] = rng.choice([1, 2, 4, 8, 16, 32, 128], size=(c, 4))
    cfg[:, 0:4] = rng.choice([1, 2, 4, 8], size=(c, 4))
    cfg[:, 6], cfg[:, 7] = cfg[:, 0:6].sum(1), cfg[:, 0:4].prod(1)
    cfg[:, 14], cfg[:, 15] = cfg[:, 8:14].sum(1), cfg[:, 8:12].prod(1)
    runtime = rng.integers(1000, 100000, size=c).astype(np.int64)
    arrays = {
        "node_feat": node_feat,
        "node_opcode": opcode,
        "edge_index": edges,
        "config_feat": cfg,
        "config_runtime": runtime,
        "config_runtime_normalizers": np.full(c, 50000, dtype=np.int64),
    }
    return _save(path, arrays, override)


def layout_arrays(n: int = 40, nc: int = 8, c: int = 50, seed: int = 0) -> dict[str, np.ndarray]:
    """Arrays of a valid layout file."""
    rng = np.random.default_rng(seed)
    node_feat, opcode, edges = _nodes(n, rng)
    ids = np.sort(rng.choice(n, size=nc, replace=False)).astype(np.int64)
    rank = np.count_nonzero(node_feat[ids, 21:27] > 0, axis=1)
    feat = np.full((c, nc, 18), -1, dtype=np.float32)
    for j in range(nc):
        perms = np.argsort(rng.random((c, rank[j])), axis=1)
        choose = rng.random(c) < 0.7
        for block in (0, 6):
            feat[choose, j, block : block + rank[j]] = perms[choose]
    runtime = rng.integers(10**6, 2 * 10**6, size=c).astype(np.int64)
    return {
        "node_feat": node_feat,
        "node_opcode": opcode,
        "edge_index": edges,
        "node_config_ids": ids,
        "node_config_feat": feat,
        "node_splits": np.array([[0, n // 2]], dtype=np.int64),
        "config_runtime": runtime,
    }


def write_layout(
    path: Path,
    n: int = 40,
    nc: int = 8,
    c: int = 50,
    seed: int = 0,
    compressed: bool = False,
    **override: np.ndarray | None,
) -> Path:
    """Write a valid layout file; keyword arguments replace (or with None, drop) keys."""
    return _save(path, layout_arrays(n, nc, c, seed), override, compressed)


def _save(path: Path, arrays: dict, override: dict, compressed: bool = False) -> Path:
    for key, value in override.items():
        if value is None:
            arrays.pop(key, None)
        else:
            arrays[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    return path


def write_root(root: Path, per_split: int = 2, seed: int = 0) -> Path:
    """A dataset root with every collection and split, made of small hand-made graphs."""
    from hpo.data.load import COLLECTIONS, collection_dir

    k = seed
    for collection in COLLECTIONS:
        for split in ("train", "valid", "test"):
            folder = collection_dir(root, collection, split)
            for i in range(per_split):
                k += 1
                if collection == "tile:xla":
                    write_tile(folder / f"g{i}.npz", c=20, seed=k)
                else:
                    write_layout(folder / f"g{i}.npz", c=25, seed=k)
    return root


def set_node(feat: np.ndarray, i: int, shape: list[int], etype: int = F32, layout=None) -> None:
    """Write shape, volume, element type and stored layout of node ``i``."""
    r = len(shape)
    feat[i, 21 : 21 + r] = shape
    feat[i, 27] = sum(shape)
    feat[i, 28] = np.prod(shape)
    feat[i, 2:21] = 0
    feat[i, etype] = 1
    feat[i, 134 : 134 + r] = layout if layout is not None else list(range(r))[::-1]


def extract_columns(
    tmp_path: Path,
    node_feat: np.ndarray,
    opcode: list[int],
    edges: list[list[int]],
    config_ids: list[int],
    configs: np.ndarray,
) -> dict[str, np.ndarray]:
    """Write one hand-built layout file and return its feature columns by name."""
    c = configs.shape[0]
    path = write_layout(
        tmp_path / "g.npz",
        node_feat=node_feat,
        node_opcode=np.array(opcode, dtype=np.uint8),
        edge_index=np.array(edges, dtype=np.int64).reshape(-1, 2),
        node_config_ids=np.array(config_ids, dtype=np.int64),
        node_config_feat=configs.astype(np.float32),
        node_splits=np.array([[0]], dtype=np.int64),
        config_runtime=np.arange(1, c + 1, dtype=np.int64) * 100,
    )
    spec = FeatureSpec(chunk_size=2)  # several chunks: rows must not depend on the chunking
    X, _ = extract_layout_features(load_layout_graph(path), "layout:xla:random", spec)
    return {n: X[:, i].astype(np.float64) for i, n in enumerate(layout_feature_names(spec))}


def mismatch_chain_columns(tmp_path: Path, shape: list[int]) -> dict[str, np.ndarray]:
    """param -> dot -> dot, the consumer's input layout against its producer's output layout.

    Three configs: the two agree; they differ in major positions only (a cheap copy); they
    differ in the two minor positions (a relayout).
    """
    feat = np.zeros((3, 140), dtype=np.float32)
    for i in range(3):
        set_node(feat, i, shape)
    configs = np.full((3, 2, 18), -1)
    configs[:, 0, 0:4] = [3, 2, 1, 0]  # producer output
    configs[0, 1, 6:10] = [3, 2, 1, 0]  # consumer input: the same
    configs[1, 1, 6:10] = [3, 2, 0, 1]  # differs in major positions only
    configs[2, 1, 6:10] = [2, 3, 1, 0]  # differs in the two minor positions
    return extract_columns(tmp_path, feat, [PARAMETER, DOT, DOT], [[1, 0], [2, 1]], [1, 2], configs)


def write_toy_root(
    root: Path, collections: tuple[str, ...] = ("tile/xla",), name: str = "g.npz"
) -> Path:
    """One tiny graph per train and valid split of each collection folder (``tile/xla``,
    ``layout/xla/default``), all distinct: a root for campaigns of toy objectives, which read
    no rows, that still passes the checks every run makes before its first trial."""
    for k, collection in enumerate(collections):
        for seed, split in enumerate(("train", "valid")):
            path = root / "npz" / collection / split / name
            write = write_tile if collection == "tile/xla" else write_layout
            write(path, seed=10 * k + seed)
    return root
