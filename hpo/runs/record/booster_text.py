"""A structural check of LightGBM's text model format, run before LightGBM parses a file.

A model folder may come from someone else, and its SHA-256 in ``model.json`` proves nothing
(whoever edits a booster edits ``model.json`` too). LightGBM trusts the indices in a text
model: a ``split_feature`` beyond the columns or a ``left_child`` beyond the nodes reads
outside its arrays (a segmentation fault), a child pointing back at an ancestor makes
prediction loop forever, and wrong ``tree_sizes`` send its parallel parser outside the text.
:func:`check_booster_text` refuses all of these with one line naming the file, so
LightGBM only ever sees a well-formed forest:

- header: ``num_class=1``, ``num_tree_per_iteration=1``, ``max_feature_idx`` + 1 feature
  names and infos, equal to the columns ``model.json`` lists;
- trees numbered 0, 1, ... with ``tree_sizes`` (when given) matching their byte lengths;
- per tree: ``num_leaves`` in 1..131072 (LightGBM's own limit), every per-node array of
  ``num_leaves - 1`` numbers and every per-leaf array of ``num_leaves``, feature indices
  below the column count, categorical splits inside ``cat_boundaries``, no linear leaves,
  and the children forming one binary tree: every node and leaf reached exactly once from
  node 0 (so no cycle and no unreachable part).

The node check is vectorised per tree level; a file's cost is linear in its size.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from hpo.errors import ConfigError

__all__ = ["MAX_LEAVES", "check_booster_text"]

#: LightGBM refuses ``num_leaves`` above this when training.
MAX_LEAVES = 131072
_TREE = re.compile(rb"^Tree=(\d+)\n", re.MULTILINE)
_END = b"end of trees"
_NODE_KEYS = ("split_feature", "split_gain", "threshold", "decision_type")
_OPTIONAL_NODE_KEYS = ("internal_value", "internal_weight", "internal_count")
_OPTIONAL_LEAF_KEYS = ("leaf_weight", "leaf_count")


class _Bad(Exception):
    """One structural fault (the message says what); turned into a ConfigError by the caller."""


def _fields(block: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in block.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _int(fields: dict[str, str], key: str, lo: int, hi: int) -> int:
    text = fields.get(key)
    if text is None:
        raise _Bad(f"no '{key}'")
    try:
        value = int(text)
    except ValueError:
        raise _Bad(f"'{key}' is not an integer ({text[:40]!r})") from None
    if not lo <= value <= hi:
        raise _Bad(f"'{key}' is {value}, expected {lo}..{hi}")
    return value


def _array(fields: dict[str, str], key: str, size: int, kind: type) -> np.ndarray:
    """``fields[key]`` as a numpy array of exactly ``size`` numbers."""
    text = fields.get(key)
    if text is None:
        raise _Bad(f"no '{key}'")
    parts = text.split()
    if len(parts) != size:
        raise _Bad(f"'{key}' has {len(parts)} values, expected {size}")
    try:
        return np.array(parts, dtype=np.float64 if kind is float else np.int64)
    except (ValueError, OverflowError):
        raise _Bad(f"'{key}' holds a value that is not a {kind.__name__}") from None


def _check_children(left: np.ndarray, right: np.ndarray, n_leaves: int) -> None:
    """Every internal node and every leaf reached exactly once from node 0.

    A child ``c >= 0`` is internal node ``c``; ``c < 0`` is leaf ``~c``. Each node other
    than the root has exactly one parent and the walk from the root covers all: a binary
    tree, so prediction ends after at most ``n_leaves - 1`` steps.
    """
    n_nodes = n_leaves - 1
    children = np.concatenate([left, right])
    if children.size and (children.max() >= n_nodes or children.min() < -n_leaves):
        bad = children[(children >= n_nodes) | (children < -n_leaves)][0]
        raise _Bad(f"child index {bad} out of range for {n_leaves} leaves")
    internal = children[children >= 0]
    leaves = ~children[children < 0]
    if (internal == 0).any():
        raise _Bad("a child points back to the root node 0 (a cycle)")
    if np.bincount(internal, minlength=n_nodes).max(initial=0) > 1:
        raise _Bad("a node is the child of two nodes (a cycle or a shared subtree)")
    if np.bincount(leaves, minlength=n_leaves).max(initial=0) > 1:
        raise _Bad("a leaf is the child of two nodes")
    seen_nodes, seen_leaves = 0, 0
    frontier = np.zeros(1, dtype=np.int64)
    for _ in range(n_nodes):  # one pass per level; a tree is at most n_nodes deep
        if frontier.size == 0:
            break
        seen_nodes += frontier.size
        kids = np.concatenate([left[frontier], right[frontier]])
        seen_leaves += int((kids < 0).sum())
        frontier = kids[kids >= 0]
    if seen_nodes != n_nodes or seen_leaves != n_leaves:
        raise _Bad(
            f"node 0 reaches {seen_nodes} of {n_nodes} nodes and {seen_leaves} of {n_leaves} "
            "leaves (a cycle or a detached part)"
        )


def _check_tree(block: str, n_features: int) -> None:
    fields = _fields(block)
    n_leaves = _int(fields, "num_leaves", 1, MAX_LEAVES)
    n_cat = _int(fields, "num_cat", 0, max(0, n_leaves - 1)) if "num_cat" in fields else 0
    if fields.get("is_linear", "0") != "0":
        raise _Bad("linear trees are not read (hpo never trains them)")
    leaf_value = _array(fields, "leaf_value", n_leaves, float)
    if not np.isfinite(leaf_value).all():
        raise _Bad("'leaf_value' holds NaN or inf")
    for key in _OPTIONAL_LEAF_KEYS:
        # LightGBM writes a tree that never split (one leaf) with an empty 'leaf_weight'
        if key in fields and not (n_leaves == 1 and not fields[key]):
            _array(fields, key, n_leaves, float)
    n_nodes = n_leaves - 1
    for key in _OPTIONAL_NODE_KEYS:
        if key in fields:
            _array(fields, key, n_nodes, float)
    if n_nodes == 0:
        return
    feature = _array(fields, "split_feature", n_nodes, int)
    outside = feature[(feature < 0) | (feature >= n_features)]
    if outside.size:  # the first one, as the file holds it
        raise _Bad(f"'split_feature' {outside[0]} is not a column (0..{n_features - 1})")
    _array(fields, "split_gain", n_nodes, float)
    threshold = _array(fields, "threshold", n_nodes, float)
    decision = _array(fields, "decision_type", n_nodes, int)
    if decision.min() < 0 or decision.max() > 15:
        raise _Bad("'decision_type' outside 0..15")
    categorical = (decision & 1).astype(bool)
    if categorical.any():
        if n_cat == 0:
            raise _Bad("a categorical split but 'num_cat' is 0")
        bounds = _array(fields, "cat_boundaries", n_cat + 1, int)
        words = fields.get("cat_threshold", "").split()
        if bounds[0] != 0 or (np.diff(bounds) < 0).any() or bounds[-1] != len(words):
            raise _Bad("'cat_boundaries' do not delimit 'cat_threshold'")
        cats = threshold[categorical]
        if (cats != np.round(cats)).any() or cats.min() < 0 or cats.max() >= n_cat:
            raise _Bad(f"a categorical split's threshold is not one of the {n_cat} categories")
    _check_children(
        _array(fields, "left_child", n_nodes, int),
        _array(fields, "right_child", n_nodes, int),
        n_leaves,
    )


def _check_header(header: str, n_columns: int) -> None:
    fields = _fields(header)
    _int(fields, "num_class", 1, 1)
    _int(fields, "num_tree_per_iteration", 1, 1)
    max_idx = _int(fields, "max_feature_idx", 0, 10**7)
    if max_idx + 1 != n_columns:
        raise _Bad(f"reads {max_idx + 1} features, model.json lists {n_columns} columns")
    for key in ("feature_names", "feature_infos"):
        count = len(fields.get(key, "").split())
        if count != n_columns:
            raise _Bad(f"'{key}' has {count} entries, expected {n_columns}")


def _check_trees(data: bytes, n_columns: int) -> None:
    end = data.find(b"\n" + _END)
    if not data.startswith(b"tree\n") or end < 0:
        raise _Bad("truncated or not a LightGBM text model")
    starts = [m for m in _TREE.finditer(data, 0, end + 1)]
    header_end = starts[0].start() if starts else end
    _check_header(data[:header_end].decode("utf-8"), n_columns)
    numbers = [int(m.group(1)) for m in starts]
    if numbers != list(range(len(starts))):
        raise _Bad("trees are not numbered 0, 1, 2, ...")
    bounds = [m.start() for m in starts] + [end + 1]
    sizes_text = _fields(data[:header_end].decode("utf-8")).get("tree_sizes")
    if sizes_text is not None:
        try:
            sizes = [int(s) for s in sizes_text.split()]
        except ValueError:
            raise _Bad("'tree_sizes' is not a list of integers") from None
        if sizes != [b - a for a, b in zip(bounds, bounds[1:], strict=False)]:
            raise _Bad(f"'tree_sizes' does not match the {len(starts)} trees' lengths")
    for i, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
        try:
            _check_tree(data[a:b].decode("utf-8"), n_columns)
        except _Bad as exc:
            raise _Bad(f"tree {i}: {exc}") from None


def check_booster_text(data: bytes, model_file: Path, n_columns: int) -> str:
    """Check that ``data`` is a well-formed LightGBM text forest over ``n_columns`` features.

    Parameters
    ----------
    data
        The file's bytes.
    model_file
        Its path, for the message.
    n_columns
        The feature columns ``model.json`` says the booster reads.

    Returns
    -------
    str
        The text, ready for ``lightgbm.Booster(model_str=...)``.

    Raises
    ------
    ConfigError
        Naming the file and the first fault found.
    """
    try:
        _check_trees(data, n_columns)
        return data.decode("utf-8")
    except UnicodeDecodeError:
        fault = "not UTF-8 text"
    except _Bad as exc:
        fault = str(exc)
    raise ConfigError(f"{model_file}: not a well-formed LightGBM model ({fault}); refusing to load")
