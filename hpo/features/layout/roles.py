"""Which dimension of a convolution or dot sits in the minor positions: the ``rl_`` columns.

A convolution's tensors have dims of known roles (``node_feat`` 93-106): the output and the
first operand a batch dim and a feature dim, the kernel an input-feature and an
output-feature dim; every other dim is spatial. A dot's output feature is its last dim. Which
role a layout puts in the lanes (most minor) and which in the sublanes (second minor) is what
a matrix unit and its operand feeds care about, and the sizes and padding columns do not say
it: two layouts with the same padded bytes can put the batch or the feature dim in the lanes.

For every configurable convolution and dot, for each of its three tensors (output, first
operand under its input layout, kernel under its kernel layout) and each of the two minor
positions, the tensor's bytes are added to the column of the role found there:
``rl_log_<tensor>_p<position>_<role>_bytes`` with tensor ``out``, ``in`` or ``ker``, position
0 (most minor) or 1, role ``a`` (batch; a kernel's input feature), ``b`` (feature; a kernel's
output feature) or ``s`` (any other dim), as ``log1p`` of the sum over the nodes.
No role is priced: which pairing a hardware prefers is left to the trees, which see all of
them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpo.data.load import LayoutGraph
from hpo.data.opcodes import CONVOLUTION, DOT
from hpo.features.layout.partial import Layouts

__all__ = ["ROLE_GROUPS", "RoleStatic", "role_chunk", "role_names", "role_static"]

#: The tensors of a node, in column order: output, first operand, kernel.
_TENSORS = ("out", "in", "ker")
#: Roles: ``a`` batch (kernel: input feature), ``b`` feature (kernel: output feature),
#: ``s`` any other dim.
_ROLES = ("a", "b", "s")
_NAMES = [f"rl_log_{t}_p{p}_{r}_bytes" for t in _TENSORS for p in (0, 1) for r in _ROLES]
#: The roles are per-node quantities like the ``nd_`` ones: one feature group serves both.
ROLE_GROUPS: dict[str, str] = dict.fromkeys(_NAMES, "node_aggregates")
#: ``node_feat`` columns of the roles a and b of each tensor of a convolution.
_CONV_ROLE_COLUMNS = ((105, 106), (93, 94), (99, 100))


def role_names() -> list[str]:
    """Column names of :func:`role_chunk`, in order."""
    return list(_NAMES)


@dataclass(frozen=True)
class RoleStatic:
    """Config-independent roles of one graph's configurable nodes (``nc`` of them).

    Attributes
    ----------
    dims
        ``(3, 2, nc)`` int: for each tensor (output, first operand, kernel), the dim of role
        ``a`` and of role ``b``; -1 where the node has none, or where both name one dim (a
        file without dimension numbers): every dim of that tensor is then role ``s``.
    weight
        ``(3, nc)`` bytes of each tensor; 0 where the node is no convolution or dot (and for
        the kernel of a dot), so other nodes add nothing.
    """

    dims: np.ndarray
    weight: np.ndarray


def role_static(
    graph: LayoutGraph,
    rank: np.ndarray,
    out_bytes: np.ndarray,
    in_bytes: np.ndarray,
    kernel_bytes: np.ndarray,
) -> RoleStatic:
    """The roles of one graph's configurable convolutions and dots.

    Parameters
    ----------
    graph
        The layout graph.
    rank
        ``(nc,)`` rank of each configurable node's output
        (:class:`hpo.features.layout.shapes.NodeShapes` has it).
    out_bytes, in_bytes, kernel_bytes
        ``(nc,)`` bytes of each configurable node's output, first operand and kernel
        (:class:`hpo.features.layout.second_order.SecondOrderStatic` has them).
    """
    ids = graph.node_config_ids
    nf = graph.node_feat[ids]
    ops = graph.node_opcode[ids]
    conv, dot = ops == CONVOLUTION, ops == DOT
    dims = np.stack(
        [
            np.stack([np.where(conv, nf[:, a], -1), np.where(conv, nf[:, b], -1)])
            for a, b in _CONV_ROLE_COLUMNS
        ]
    ).astype(np.int64)
    dims[0, 1] = np.where(dot, rank - 1, dims[0, 1])
    # a file without dimension numbers holds 0 in every column: a tensor whose two roles name
    # the same dim has no known roles (its bytes would count as both)
    unknown = dims[:, 0] == dims[:, 1]
    dims[:, 0] = np.where(unknown, -1, dims[:, 0])
    dims[:, 1] = np.where(unknown, -1, dims[:, 1])
    either = conv | dot
    weight = np.stack(
        [np.where(either, out_bytes, 0.0), np.where(either, in_bytes, 0.0),
         np.where(conv, kernel_bytes, 0.0)]
    )  # fmt: skip
    return RoleStatic(dims=dims, weight=weight)


def role_chunk(layouts: tuple[Layouts, Layouts, Layouts], rs: RoleStatic) -> np.ndarray:
    """The ``rl_`` columns ``(k, 18)`` of a chunk of ``k`` configs.

    Parameters
    ----------
    layouts
        The chunk's output, first-operand and kernel layouts
        (:func:`hpo.features.layout.partial.read_block`, defaults resolved).
    rs
        The graph's roles (:func:`role_static`).
    """
    cols = np.empty((layouts[0].minor.shape[0], len(_NAMES)))
    j = 0
    for t, lay in enumerate(layouts):
        weight = rs.weight[t]
        for p in (0, 1):
            pos = lay.minor[..., p]
            a = pos == rs.dims[t, 0][None]
            b = pos == rs.dims[t, 1][None]
            other = ~a & ~b & (pos >= 0)
            for mask in (a, b, other):  # a matrix product: 3x faster than a masked sum
                cols[:, j] = mask @ weight
                j += 1
    return np.log1p(cols)
