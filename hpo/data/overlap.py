"""Graphs shared between splits, found by content: a valid or test graph that is also in train.

A graph copied from train into valid is scored on rows the model was trained on, so its valid
score measures fit, not generalisation; nothing in the file names says so (../shared/realdata's
train files are copies of its valid ones). A graph is identified by its nodes, opcodes and
edges (:func:`graph_digest`), not by its name or its configurations: a graph measured again
with other configurations is still the same graph.

Reading the three keys of every file costs a pass over the data at real size, so
:func:`find_shared_graphs` keeps each file's digest in a small cache keyed by the file's
path, size and modification time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpo.data.load import (
    COLLECTIONS,
    SPLITS,
    collection_dir,
    list_graphs,
    load_graph_structure,
)

__all__ = ["DIGEST_CACHE", "SharedGraph", "find_shared_graphs", "graph_digest", "shared_graphs"]

#: The digest cache's file name under a cache folder.
DIGEST_CACHE = "graph_digests.json"


@dataclass(frozen=True)
class SharedGraph:
    """A graph of ``split`` (valid or test) whose content is also the train graph ``train``."""

    collection: str
    split: str
    path: Path
    train: Path

    def line(self) -> str:
        """One line naming both files."""
        return f"{self.collection} {self.split} {self.path.name} is train's {self.train.name}"


def graph_digest(node_feat: np.ndarray, node_opcode: np.ndarray, edge_index: np.ndarray) -> str:
    """A digest of the graph itself: the three arrays in the dtypes the loader returns."""
    h = hashlib.blake2b(digest_size=16)
    for array, dtype in ((node_feat, np.float32), (node_opcode, np.int64), (edge_index, np.int64)):
        a = np.ascontiguousarray(array, dtype=dtype)
        h.update(repr(a.shape).encode())
        h.update(a.data)
    return h.hexdigest()


def shared_graphs(digests: Mapping[tuple[str, str], Mapping[Path, str]]) -> list[SharedGraph]:
    """The graphs of each collection's valid and test splits whose digest a train graph has.

    Parameters
    ----------
    digests
        ``{(collection, split): {path: digest}}``.
    """
    out: list[SharedGraph] = []
    for collection in (c for c in COLLECTIONS if any(c == k for k, _ in digests)):
        train = {d: p for p, d in sorted(digests.get((collection, "train"), {}).items())}
        for split in SPLITS[1:]:
            for path, digest in sorted(digests.get((collection, split), {}).items()):
                if digest in train:
                    out.append(SharedGraph(collection, split, path, train[digest]))
    return out


def _read_cache(cache_file: Path | None) -> dict[str, str]:
    if cache_file is None:
        return {}
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}  # a damaged cache is simply recomputed
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _write_cache(cache_file: Path, entries: dict[str, str]) -> None:
    cache_file.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache_file.parent, prefix=f".{cache_file.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(entries, fh)
        os.replace(tmp, cache_file)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _file_key(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}"


def find_shared_graphs(
    root: Path,
    collections: Iterable[str],
    *,
    cache_dir: Path | None = None,
    on_file: Callable[[Path], None] | None = None,
) -> list[SharedGraph]:
    """Find the valid and test graphs of ``collections`` under ``root`` that are in train.

    Splits without a folder are skipped. Each file's digest is cached under ``cache_dir``
    (when given) and computed again only when the file changes.

    Raises
    ------
    DataFormatError
        If a file's node_feat, node_opcode or edge_index is missing or malformed.
    """
    cache_file = Path(cache_dir) / DIGEST_CACHE if cache_dir is not None else None
    known = _read_cache(cache_file)
    fresh: dict[str, str] = {}
    digests: dict[tuple[str, str], dict[Path, str]] = {}
    for collection in collections:
        for split in SPLITS:
            if not collection_dir(root, collection, split).is_dir():
                continue
            found = digests.setdefault((collection, split), {})
            for path in list_graphs(root, collection, split):
                key = _file_key(path)
                if key not in known:
                    if on_file is not None:
                        on_file(path)
                    fresh[key] = graph_digest(*load_graph_structure(path))
                found[path] = known.get(key) or fresh[key]
    if cache_file is not None and fresh:
        with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
            _write_cache(cache_file, {**known, **fresh})
    return shared_graphs(digests)
