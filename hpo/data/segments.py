"""``node_splits``: the segment boundaries of a layout graph, in the forms upstream writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hpo.errors import DataFormatError

__all__ = ["check_node_splits"]


def check_node_splits(path: Path, splits: np.ndarray, n: int) -> None:
    """Segment boundaries in [0, n], non-decreasing.

    Upstream's encoder writes 0, the node count after each computation and finally ``n``
    itself (every real file ends with n); its README calls them "starting node ids", the form
    without the final n. Both are accepted: segment i is nodes ``splits[i]`` to
    ``splits[i+1] - 1``, so a boundary may equal n but never exceed it, and a decreasing pair
    would make a negative segment.
    """
    if not splits.size:
        return
    if splits.min() < 0 or splits.max() > n:
        raise DataFormatError(
            f"{path}: key 'node_splits': expected boundaries in [0, {n}], found "
            f"[{splits.min()}, {splits.max()}]"
        )
    steps = np.diff(splits[0].astype(np.int64))  # in range now; unsigned steps would wrap
    if (steps < 0).any():
        at = int(np.flatnonzero(steps < 0)[0])
        raise DataFormatError(
            f"{path}: key 'node_splits': expected non-decreasing boundaries, found "
            f"{splits[0, at]} before {splits[0, at + 1]}"
        )
