"""The config-independent shapes of one layout graph's configurable nodes.

Every kind of layout column reads them; they live below the extractor, which adds the
precomputed parts of each kind (:class:`hpo.features.layout.extract.LayoutStatic`), so a
column module takes them without importing the extractor that imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["NodeShapes"]


@dataclass(frozen=True)
class NodeShapes:
    """Shapes, default layouts, producers and sibling groups of the ``nc`` configurable nodes.

    Attributes
    ----------
    dims
        ``(nc, 6)`` float dimension sizes, 0 where unused.
    rank
        ``(nc,)`` int ranks.
    mask
        ``(nc, 6)`` bool, True for the dims below the rank.
    volume
        ``(nc,)`` float element counts.
    default
        ``(nc, 6)`` int8 default layouts, -1 padded.
    convdot, reshape
        ``(nc,)`` bool: the node is a convolution or dot; a reshape or transpose.
    producer
        ``(nc,)`` int index of the configurable producer, or -1.
    in_rank
        ``(nc,)`` int rank of the first operand (0 if none).
    sibling_first
        ``(nc,)`` int index of the first consumer of the same producer, or -1.
    """

    dims: np.ndarray
    rank: np.ndarray
    mask: np.ndarray
    volume: np.ndarray
    default: np.ndarray
    convdot: np.ndarray
    reshape: np.ndarray
    producer: np.ndarray
    in_rank: np.ndarray
    sibling_first: np.ndarray
