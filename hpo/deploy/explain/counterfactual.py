"""Per-node counterfactuals of a layout configuration: config A with one node's layout taken
from config B, scored by a model's trees.

A layout row aggregates every configurable node (:mod:`hpo.features.layout.extract`), so a
feature's contribution cannot name a node; the counterfactual can: it moves exactly one
node's layout and asks how far the prediction moves. The rows are the file's own rows
(:func:`hpo.features.extract_layout_blocks`: relative columns against the file's configs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpo.data.load import LayoutGraph, iter_config_chunks, load_layout_graph
from hpo.data.opcodes import CONVOLUTION, DOT, FUSION, PARAMETER, REDUCE, RESHAPE, TRANSPOSE
from hpo.deploy.model import FamilyModel
from hpo.features import FeatureSpec, extract_layout_blocks

__all__ = ["NodeEffect", "config_blocks", "node_effects", "opcode_name", "switched_together"]

_NAMES = {
    CONVOLUTION: "convolution",
    DOT: "dot",
    FUSION: "fusion",
    PARAMETER: "parameter",
    REDUCE: "reduce",
    RESHAPE: "reshape",
    TRANSPOSE: "transpose",
}


def opcode_name(opcode: int) -> str:
    """The HLO name of the opcodes the features single out, else ``opcode <id>``."""
    return _NAMES.get(int(opcode), f"opcode {int(opcode)}")


@dataclass(frozen=True)
class NodeEffect:
    """How far the trees' score of config A moves when node ``node`` alone takes B's layout.

    Attributes
    ----------
    position
        The node's index among the configurable nodes (``node_config_ids``).
    node
        Its node id in the graph.
    opcode
        Its HLO opcode name.
    shape
        Its output shape (``node_feat`` 21-26, unused dims left out).
    layout_a, layout_b
        ``{part: layout}`` in A and in B of each part of its layout that differs (``output``,
        ``input``, ``kernel``; a layout minor to major, ``-1`` left to the compiler).
    effect
        Score of A with this node from B minus A's score (positive: predicted slower).
    """

    position: int
    node: int
    opcode: str
    shape: tuple[int, ...]
    layout_a: dict[str, list[int]]
    layout_b: dict[str, list[int]]
    effect: float


def config_blocks(path: Path, indices: tuple[int, ...]) -> np.ndarray:
    """The layout blocks (len(indices), nc, 18) of configs ``indices`` of a layout file,
    read chunk by chunk (a file of 100,000 configs is never loaded whole)."""
    want = {i: k for k, i in enumerate(indices)}
    out: np.ndarray | None = None
    for start, block in iter_config_chunks(path):
        if out is None:
            out = np.zeros((len(indices), *block.shape[1:]), dtype=np.float32)
        for i, k in want.items():
            if start <= i < start + block.shape[0]:
                out[k] = block[i - start]
    assert out is not None  # a layout file holds at least one config (load_layout_graph)
    return out


def _trees(model: FamilyModel, X: np.ndarray) -> np.ndarray:
    """The trees' score of rows (lower = predicted faster), without the prior's blend."""
    return -np.asarray(model.booster.predict(X[:, model.columns]), dtype=np.float64)


#: The parts of a node's 18 layout values, in order.
PARTS = ("output", "input", "kernel")


def _parts(a: np.ndarray, b: np.ndarray) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """The parts of two layout blocks of one node that differ, each trimmed of its
    trailing padding."""
    out_a: dict[str, list[int]] = {}
    out_b: dict[str, list[int]] = {}
    for k, part in enumerate(PARTS):
        pa, pb = a[6 * k : 6 * k + 6], b[6 * k : 6 * k + 6]
        if (pa != pb).any():
            out_a[part], out_b[part] = _trim(pa), _trim(pb)
    return out_a, out_b


def _trim(part: np.ndarray) -> list[int]:
    values = [int(v) for v in part]
    while len(values) > 1 and values[-1] == -1:
        values.pop()
    return values


def _node(
    graph: LayoutGraph, position: int, a: np.ndarray, b: np.ndarray, effect: float
) -> NodeEffect:
    node = int(graph.node_config_ids[position])
    dims = graph.node_feat[node, 21:27]
    layout_a, layout_b = _parts(a[position], b[position])
    return NodeEffect(
        position=position,
        node=node,
        opcode=opcode_name(graph.node_opcode[node]),
        shape=tuple(int(d) for d in dims if d > 0),
        layout_a=layout_a,
        layout_b=layout_b,
        effect=effect,
    )


def node_effects(
    model: FamilyModel, path: Path, collection: str, spec: FeatureSpec, a: int, b: int
) -> tuple[float, float, list[NodeEffect]]:
    """The trees' scores of configs ``a`` and ``b`` and the effect of every node whose layout
    differs between them, those that move A towards B's score most first."""
    graph = load_layout_graph(path)
    blocks = config_blocks(path, (a, b))
    differ = np.flatnonzero((blocks[0] != blocks[1]).any(axis=1))
    singles = np.repeat(blocks[:1], len(differ), axis=0)
    singles[np.arange(len(differ)), differ] = blocks[1, differ]
    rows = extract_layout_blocks(path, collection, spec, np.concatenate([blocks, singles]))
    scores = _trees(model, rows)
    toward = 1.0 if scores[1] >= scores[0] else -1.0
    effects = [
        _node(graph, int(p), blocks[0], blocks[1], float(s - scores[0]))
        for p, s in zip(differ, scores[2:], strict=True)
    ]
    effects.sort(key=lambda e: -toward * e.effect)
    return float(scores[0]), float(scores[1]), effects


def switched_together(
    model: FamilyModel,
    path: Path,
    collection: str,
    spec: FeatureSpec,
    a: int,
    b: int,
    positions: list[int],
) -> float:
    """The trees' score of config ``a`` with every node of ``positions`` taking ``b``'s layout,
    minus A's score."""
    blocks = config_blocks(path, (a, b))
    both = blocks[:1].copy()
    both[0, positions] = blocks[1, positions]
    rows = extract_layout_blocks(path, collection, spec, np.concatenate([blocks[:1], both]))
    scores = _trees(model, rows)
    return float(scores[1] - scores[0])
