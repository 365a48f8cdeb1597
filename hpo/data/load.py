"""The TpuGraphs data layer: find collections, list graphs, load and validate one graph.

A dataset root is laid out as the real dataset::

    npz/tile/xla/{train,valid,test}/<stem>.npz
    npz/layout/{xla,nlp}/{default,random}/{train,valid,test}/<stem>.npz

Loading validates every key that is read: presence, dtype kind, shape, and agreement of the
sizes ``n`` (nodes), ``m`` (edges), ``c`` (configs) and ``nc`` (configurable nodes) across keys.
Runtimes and normalizers are checked value by value in :mod:`hpo.data.runtimes`.
``node_config_feat`` of a layout file is never read whole here: its header is validated and
its rows are streamed in chunks by :func:`iter_config_chunks`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpo.data.graph_files import graph_file_problem, open_archive, read_key
from hpo.data.npyzip import iter_member_rows, read_member_header
from hpo.data.runtimes import validate_layout_runtimes, validate_tile_runtimes
from hpo.data.segments import check_node_splits
from hpo.data.values import (
    check_config_block,
    check_config_ids,
    check_feature_values,
    check_opcodes,
)
from hpo.errors import DataFormatError, UsageError

__all__ = [
    "COLLECTIONS",
    "LAYOUT_COLLECTIONS",
    "LAW_FILE",
    "NODE_FEAT_DIM",
    "SPLITS",
    "SYNTH_FILE",
    "LayoutGraph",
    "TileGraph",
    "collection_dir",
    "is_layout",
    "iter_config_chunks",
    "list_graphs",
    "load_graph",
    "load_graph_structure",
    "load_layout_graph",
    "load_tile_graph",
    "resolve_collections",
]

COLLECTIONS: tuple[str, ...] = (
    "tile:xla",
    "layout:xla:default",
    "layout:xla:random",
    "layout:nlp:default",
    "layout:nlp:random",
)
LAYOUT_COLLECTIONS: tuple[str, ...] = COLLECTIONS[1:]
SPLITS: tuple[str, ...] = ("train", "valid", "test")
#: What ``hpo data synth`` writes in a root beside its graphs: the law, first (from then on
#: the root is one it wrote, :mod:`hpo.ownership`), and its summary, last (the root is whole).
LAW_FILE = "law.json"
SYNTH_FILE = "synth.json"
NODE_FEAT_DIM = 140
TILE_CONFIG_DIM = 24
LAYOUT_CONFIG_DIM = 18

_INT_KINDS = "iu"
_FLOAT_KINDS = "f"


def is_layout(collection: str) -> bool:
    """Return whether ``collection`` is one of the four layout collections."""
    return collection.startswith("layout:")


def resolve_collections(spec: str) -> tuple[str, ...]:
    """Turn a collection selector into collection names.

    Parameters
    ----------
    spec
        One collection name, ``layout`` (the four layout collections), ``all`` (all five), or
        a comma-separated list of those.

    Raises
    ------
    UsageError
        If a part of ``spec`` names no collection.
    """
    out: list[str] = []
    for part in (p.strip() for p in spec.split(",")):
        if part == "all":
            names: tuple[str, ...] = COLLECTIONS
        elif part == "layout":
            names = LAYOUT_COLLECTIONS
        elif part in ("tile", "tile:xla"):
            names = ("tile:xla",)
        elif part in COLLECTIONS:
            names = (part,)
        else:
            raise UsageError(
                f"unknown collection '{part}' (expected one of {', '.join(COLLECTIONS)}, "
                "'layout' or 'all')"
            )
        out.extend(n for n in names if n not in out)
    return tuple(c for c in COLLECTIONS if c in out)


def collection_dir(root: Path, collection: str, split: str) -> Path:
    """Return the folder holding the ``.npz`` files of one collection and split."""
    if collection not in COLLECTIONS:
        raise UsageError(f"unknown collection '{collection}'")
    if split not in SPLITS:
        raise UsageError(f"unknown split '{split}' (expected one of {', '.join(SPLITS)})")
    parts = collection.split(":")
    return Path(root, "npz", *parts, split)


def list_graphs(root: Path, collection: str, split: str) -> list[Path]:
    """List the graph files of one collection and split, sorted by stem.

    Raises
    ------
    UsageError
        If the collection's folder does not exist under ``root``.
    DataFormatError
        If an entry cannot be a graph file (:func:`~hpo.data.graph_files.graph_file_problem`).
    """
    folder = collection_dir(root, collection, split)
    if not folder.is_dir():
        raise UsageError(f"{root}: no {collection} {split} data (missing folder {folder})")
    paths = sorted(folder.glob("*.npz"))
    for path in paths:
        problem = graph_file_problem(path)
        if problem is not None:
            raise DataFormatError(problem)
    return paths


@dataclass(frozen=True, eq=False)
class _Graph:
    """What a graph of either family holds: its file, nodes and edges, a runtime per
    configuration, and whether it is labeled."""

    path: Path
    node_feat: np.ndarray
    node_opcode: np.ndarray
    edge_index: np.ndarray
    config_runtime: np.ndarray
    labeled: bool

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return int(self.node_feat.shape[0])

    @property
    def n_configs(self) -> int:
        """Number of configurations."""
        return int(self.config_runtime.shape[0])


@dataclass(frozen=True, eq=False)
class TileGraph(_Graph):
    """One validated tile:xla graph; each row of ``config_feat`` is one configuration."""

    config_feat: np.ndarray
    config_runtime_normalizers: np.ndarray

    @property
    def target(self) -> np.ndarray:
        """Normalized runtime ``config_runtime / config_runtime_normalizers`` (float64)."""
        return self.config_runtime / self.config_runtime_normalizers


@dataclass(frozen=True, eq=False)
class LayoutGraph(_Graph):
    """One validated layout graph; configurations are streamed with :func:`iter_config_chunks`."""

    node_config_ids: np.ndarray
    node_splits: np.ndarray

    @property
    def n_config_nodes(self) -> int:
        """Number of configurable nodes."""
        return int(self.node_config_ids.shape[0])

    @property
    def target(self) -> np.ndarray:
        """Runtime in nanoseconds (float64)."""
        return self.config_runtime.astype(np.float64)


def _check(
    path: Path, key: str, arr: np.ndarray, kinds: str, shape: tuple[int | None, ...]
) -> None:
    kind_names = {"iu": "integer", "f": "float", "u": "unsigned integer"}
    if arr.dtype.kind not in kinds:
        raise DataFormatError(
            f"{path}: key '{key}': expected {kind_names.get(kinds, kinds)} dtype, found {arr.dtype}"
        )
    if arr.ndim != len(shape) or any(
        want is not None and got != want for got, want in zip(arr.shape, shape, strict=False)
    ):
        want_s = "(" + ", ".join("*" if w is None else str(w) for w in shape) + ")"
        raise DataFormatError(f"{path}: key '{key}': expected shape {want_s}, found {arr.shape}")


def _load_graph_keys(
    npz: np.lib.npyio.NpzFile, path: Path
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    node_feat = read_key(npz, path, "node_feat")
    _check(path, "node_feat", node_feat, _FLOAT_KINDS, (None, NODE_FEAT_DIM))
    n = node_feat.shape[0]
    if n == 0:
        raise DataFormatError(f"{path}: key 'node_feat': expected at least one node, found 0")
    node_opcode = read_key(npz, path, "node_opcode")
    _check(path, "node_opcode", node_opcode, _INT_KINDS, (n,))
    edge_index = read_key(npz, path, "edge_index")
    if edge_index.size == 0 and edge_index.ndim == 1:
        edge_index = edge_index.reshape(0, 2)
    _check(path, "edge_index", edge_index, _INT_KINDS, (None, 2))
    if edge_index.size and (edge_index.min() < 0 or edge_index.max() >= n):
        raise DataFormatError(
            f"{path}: key 'edge_index': expected node ids in [0, {n}), found "
            f"[{edge_index.min()}, {edge_index.max()}]"
        )
    check_feature_values(path, "node_feat", node_feat)
    check_opcodes(path, node_opcode)
    return (
        node_feat.astype(np.float32, copy=False),
        node_opcode.astype(np.int64, copy=False),
        edge_index.astype(np.int64, copy=False),
    )


def load_graph_structure(path: Path | str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Load and validate only the graph itself: ``(node_feat, node_opcode, edge_index)`` as
    float32, int64 and int64, the keys tile and layout files share.

    What identifies a graph whatever its configurations (:mod:`hpo.data.overlap`).

    Raises
    ------
    DataFormatError
        If one of the three keys is missing or malformed.
    """
    path = Path(path)
    with open_archive(path) as npz:
        return _load_graph_keys(npz, path)


def load_tile_graph(path: Path | str) -> TileGraph:
    """Load and validate one tile:xla graph.

    Raises
    ------
    DataFormatError
        If a key is missing, has the wrong dtype kind or shape, sizes disagree across keys, or
        a runtime or normalizer is NaN, infinite, fractional, negative or wrongly zero.
    """
    path = Path(path)
    with open_archive(path) as npz:
        node_feat, node_opcode, edge_index = _load_graph_keys(npz, path)
        config_feat = read_key(npz, path, "config_feat")
        _check(path, "config_feat", config_feat, _FLOAT_KINDS, (None, TILE_CONFIG_DIM))
        c = config_feat.shape[0]
        check_feature_values(path, "config_feat", config_feat)
        runtime = read_key(npz, path, "config_runtime")
        _check(path, "config_runtime", runtime, _INT_KINDS + _FLOAT_KINDS, (c,))
        norm = read_key(npz, path, "config_runtime_normalizers")
        _check(path, "config_runtime_normalizers", norm, _INT_KINDS + _FLOAT_KINDS, (c,))
    if c == 0:
        raise DataFormatError(f"{path}: key 'config_feat': expected at least one config, found 0")
    runtime, norm, labeled = validate_tile_runtimes(path, runtime, norm)
    return TileGraph(
        path=path,
        node_feat=node_feat,
        node_opcode=node_opcode,
        edge_index=edge_index,
        config_feat=config_feat.astype(np.float32, copy=False),
        config_runtime=runtime,
        config_runtime_normalizers=norm,
        labeled=labeled,
    )


def load_layout_graph(path: Path | str) -> LayoutGraph:
    """Load and validate one layout graph (everything but the config rows themselves).

    The header of ``node_config_feat`` is checked against ``config_runtime`` and
    ``node_config_ids``; its rows are read with :func:`iter_config_chunks`.

    Raises
    ------
    DataFormatError
        If a key is missing, has the wrong dtype kind or shape, sizes disagree across keys, or
        a runtime is NaN, infinite, fractional, negative, or zero in a labeled file.
    """
    path = Path(path)
    with open_archive(path) as npz:
        node_feat, node_opcode, edge_index = _load_graph_keys(npz, path)
        n = node_feat.shape[0]
        ids = read_key(npz, path, "node_config_ids")
        _check(path, "node_config_ids", ids, _INT_KINDS, (None,))
        nc = ids.shape[0]
        if nc == 0:
            raise DataFormatError(
                f"{path}: key 'node_config_ids': expected at least one configurable node, found 0"
            )
        if ids.min() < 0 or ids.max() >= n:
            raise DataFormatError(
                f"{path}: key 'node_config_ids': expected node ids in [0, {n}), found "
                f"[{ids.min()}, {ids.max()}]"
            )
        check_config_ids(path, ids)
        splits = read_key(npz, path, "node_splits")
        if splits.ndim == 1:
            splits = splits.reshape(1, -1)
        _check(path, "node_splits", splits, _INT_KINDS, (1, None))
        check_node_splits(path, splits, n)
        runtime = read_key(npz, path, "config_runtime")
        _check(path, "config_runtime", runtime, _INT_KINDS + _FLOAT_KINDS, (None,))
        c = runtime.shape[0]
        if "node_config_feat" not in npz.files:
            raise DataFormatError(f"{path}: missing key 'node_config_feat'")
    header = read_member_header(path, "node_config_feat")
    if header.dtype.kind not in _FLOAT_KINDS + _INT_KINDS:
        raise DataFormatError(
            f"{path}: key 'node_config_feat': expected float dtype, found {header.dtype}"
        )
    if header.shape != (c, nc, LAYOUT_CONFIG_DIM):
        raise DataFormatError(
            f"{path}: key 'node_config_feat': expected shape ({c}, {nc}, {LAYOUT_CONFIG_DIM}) "
            f"from config_runtime and node_config_ids, found {header.shape}"
        )
    if c == 0:
        raise DataFormatError(
            f"{path}: key 'config_runtime': expected at least one config, found 0"
        )
    runtime, labeled = validate_layout_runtimes(path, runtime)
    return LayoutGraph(
        path=path,
        node_feat=node_feat,
        node_opcode=node_opcode,
        edge_index=edge_index,
        node_config_ids=ids.astype(np.int64, copy=False),
        node_splits=splits.astype(np.int64, copy=False),
        config_runtime=runtime,
        labeled=labeled,
    )


def load_graph(path: Path | str, collection: str) -> TileGraph | LayoutGraph:
    """Load one graph of ``collection`` (tile or layout) with full validation."""
    return load_layout_graph(path) if is_layout(collection) else load_tile_graph(path)


def iter_config_chunks(
    path: Path | str, chunk_size: int = 4096
) -> Iterator[tuple[int, np.ndarray]]:
    """Stream ``node_config_feat`` of a layout file in chunks of configurations.

    Parameters
    ----------
    path
        A layout ``.npz`` file.
    chunk_size
        Configurations per chunk; peak memory is about ``chunk_size * nc * 18 * 4`` bytes and
        does not grow with the number of configurations.

    Yields
    ------
    tuple of (int, numpy.ndarray)
        The index of the first configuration of the chunk, and a float32 array of shape
        ``(k, nc, 18)`` with ``k <= chunk_size``.

    Raises
    ------
    DataFormatError
        If the member is missing, truncated or corrupt, or a chunk holds a value that is not
        a layout (see :func:`hpo.data.values.check_config_block`): every reader of layouts
        goes through here, so none of them sees one.
    """
    path = Path(path)
    for start, block in iter_member_rows(path, "node_config_feat", chunk_size):
        check_config_block(path, start, block)
        yield start, block.astype(np.float32, copy=False)
