"""Layout features: one row per (graph, layout configuration), streamed chunk by chunk.

A layout names tensor dimensions from most minor to most major (``-1`` pads unused dims; an
all ``-1`` block leaves the choice to the compiler, which we resolve to the node's own
default layout from ``node_feat[134:140]``; a ``-1`` in a block that also holds dims leaves
that dim to the compiler: it never counts as a mismatch or a change, and sizes take the
remaining dims in default order, see :mod:`hpo.features.layout.partial`). Per configurable
node we derive what the hardware sees under the chosen layout and aggregate over nodes into
a fixed width:

- sizes of the most-minor and second-minor dims and their padding to 8 x 128 tiles,
  as volume-weighted sums (memory traffic) per opcode group;
- copies: a consumer whose input layout differs from the output layout of the nearest
  configurable node producing its first operand; siblings (consumers of one producer) that
  disagree on their input layout; a node whose output layout differs from its input layout;
- how far the config is from the compiler default, and how often the same config occurs
  in the graph (pattern frequency);
- generic per-node quantities summed per op class (:mod:`hpo.features.layout.nodes`) and
  which role (batch, feature, other) the layout puts in the two minor positions of each
  convolution's and dot's tensors (:mod:`hpo.features.layout.roles`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hpo.data.load import LayoutGraph, iter_config_chunks
from hpo.data.opcodes import CONVOLUTION, DOT, RESHAPE, TRANSPOSE
from hpo.features.graph import graph_descriptor, graph_descriptor_names
from hpo.features.hashing import hash_int8_rows
from hpo.features.layout.nodes import NODE_GROUPS, NodeStatic, node_chunk, node_static
from hpo.features.layout.op_class import is_prior_only
from hpo.features.layout.partial import disagree, mask_bits, pack, read_block
from hpo.features.layout.roles import ROLE_GROUPS, RoleStatic, role_chunk, role_static
from hpo.features.layout.second_order import (
    SECOND_ORDER_GROUPS,
    SecondOrderStatic,
    second_order_chunk,
    second_order_static,
)
from hpo.features.layout.shapes import NodeShapes
from hpo.features.relative import relative_features, relative_names
from hpo.features.spec import FeatureSpec

__all__ = [
    "LAYOUT_GROUPS",
    "LayoutStatic",
    "extract_layout_features",
    "layout_block_rows",
    "layout_config_features",
    "layout_feature_names",
    "layout_rows",
    "layout_static",
]

#: The per-config columns in order, each with its feature group (:mod:`hpo.features.groups`).
_PER_CONFIG_GROUPS: dict[str, str] = {
    "log_padded_volume": "padding",
    "log_padded_volume_convdot": "padding",
    "log_padded_volume_reshape": "padding",
    "log_padded_volume_other": "padding",
    "log_padding_waste": "padding",
    "mean_pad_ratio": "padding",
    "max_log_pad_ratio": "padding",
    "vw_pad_ratio": "padding",
    "frac_default_out": "defaults",
    "n_nondefault_out": "defaults",
    "vw_nondefault_out": "defaults",
    "vw_largest_dim_minor": "minor_dims",
    "mean_log_minor": "minor_dims",
    "mean_log_second_minor": "minor_dims",
    "vw_minor_mult128": "padding",
    "vw_second_minor_mult8": "padding",
    "n_copies": "copies",
    "log_copy_volume": "copies",
    "n_explicit_copies": "copies",
    "n_sibling_disagree": "copies",
    "log_sibling_volume": "copies",
    "n_in_out_differ": "copies",
    "log_in_out_volume": "copies",
    "log_input_padded_volume": "padding",
    "frac_default_kernel": "defaults",
    "mean_minor_index": "minor_dims",
    **SECOND_ORDER_GROUPS,
    **NODE_GROUPS,
    **ROLE_GROUPS,
    "log_pattern_count": "pattern",
}
_PER_CONFIG = list(_PER_CONFIG_GROUPS)
#: Per-config columns with relative versions: all but the prior's own (they get none: no
#: booster reads them, and the prior standardizes within graphs itself).
_RELATIVE_OF = np.array([not is_prior_only(n) for n in _PER_CONFIG])
_STATIC = [
    "log_n_config_nodes",
    "log_config_volume",
    "frac_cfg_convdot",
    "frac_cfg_reshape",
    "frac_cfg_with_producer",
    "log_n_configs",
]
#: The feature group of every layout column but the relative and graph-descriptor ones.
LAYOUT_GROUPS: dict[str, str] = {**_PER_CONFIG_GROUPS, **dict.fromkeys(_STATIC, "graph_static")}


def layout_feature_names(spec: FeatureSpec) -> list[str]:
    """Column names of :func:`extract_layout_features` under ``spec``."""
    names = list(_PER_CONFIG) + _STATIC
    if spec.relative:
        names += relative_names([n for n, r in zip(_PER_CONFIG, _RELATIVE_OF, strict=True) if r])
    if spec.graph_descriptor:
        names += graph_descriptor_names()
    return names


@dataclass(frozen=True)
class LayoutStatic(NodeShapes):
    """What does not depend on the config: the nodes' shapes (:class:`NodeShapes`), and the
    precomputed parts of each kind of column."""

    second_order: SecondOrderStatic | None = None  # see hpo.features.layout.second_order
    nodes: NodeStatic | None = None  # see hpo.features.layout.nodes
    roles: RoleStatic | None = None  # see hpo.features.layout.roles


def _first_operand(edge_index: np.ndarray, n: int) -> np.ndarray:
    first = np.full(n, -1, dtype=np.int64)
    if len(edge_index):
        order = np.argsort(edge_index[:, 0], kind="stable")
        users, idx = np.unique(edge_index[order, 0], return_index=True)
        first[users] = edge_index[order[idx], 1]
    return first


def layout_static(graph: LayoutGraph, spec: FeatureSpec) -> LayoutStatic:
    """Pre-compute the config-independent parts of one layout graph."""
    ids = graph.node_config_ids
    nf = graph.node_feat
    nc = len(ids)
    dims = np.maximum(nf[ids, 21:27].astype(np.float64), 0.0)
    rank = np.count_nonzero(dims > 0, axis=1)
    mask = np.arange(6)[None, :] < rank[:, None]
    volume = np.where(mask, dims, 1.0).prod(axis=1)
    cand = nf[ids, 134:140].astype(np.int64)
    xla_default = np.where(mask, rank[:, None] - 1 - np.arange(6)[None, :], -1)
    is_perm = (np.sort(np.where(mask, cand, 99), axis=1) == np.where(mask, np.arange(6), 99)).all(1)
    default = np.where(is_perm[:, None] & mask, cand, xla_default).astype(np.int8)
    ops = graph.node_opcode[ids]
    cfg_index = np.full(graph.n_nodes, -1, dtype=np.int64)
    cfg_index[ids] = np.arange(nc)
    first = _first_operand(graph.edge_index, graph.n_nodes)
    all_rank = np.count_nonzero(nf[:, 21:27] > 0, axis=1)
    in_rank = np.where(first[ids] >= 0, all_rank[np.maximum(first[ids], 0)], 0)
    producer = np.full(nc, -1, dtype=np.int64)
    cur = first[ids].copy()
    active = np.ones(nc, dtype=bool)
    for _ in range(spec.producer_hops + 1):
        valid = active & (cur >= 0)
        hit = valid & (cfg_index[np.maximum(cur, 0)] >= 0)
        producer[hit] = cfg_index[cur[hit]]
        active &= ~hit & (cur >= 0)
        cur[active] = first[cur[active]]
    sibling_first = np.full(nc, -1, dtype=np.int64)
    has = np.flatnonzero(producer >= 0)
    if has.size:
        order = has[np.argsort(producer[has], kind="stable")]
        prods = producer[order]
        starts = np.r_[True, prods[1:] != prods[:-1]]
        group_first = order[np.flatnonzero(starts)[np.cumsum(starts) - 1]]
        sibling_first[order] = np.where(group_first == order, -1, group_first)
    so = second_order_static(graph, dims, rank, producer)
    return LayoutStatic(
        dims=dims,
        rank=rank,
        mask=mask,
        volume=volume,
        default=default,
        convdot=(ops == CONVOLUTION) | (ops == DOT),
        reshape=(ops == RESHAPE) | (ops == TRANSPOSE),
        producer=producer,
        in_rank=in_rank,
        sibling_first=sibling_first,
        second_order=so,
        nodes=node_static(graph),
        roles=role_static(graph, rank, volume * so.out_bytes, so.in_work, so.kernel_bytes),
    )


def _gather(dims: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``dims[j, idx[k, j]]`` with out-of-range or negative idx giving 1."""
    k = idx.shape[0]
    safe = np.clip(idx, 0, 5)
    vals = np.take_along_axis(np.broadcast_to(dims, (k, *dims.shape)), safe[..., None], axis=-1)
    vals = vals[..., 0]
    return np.where((idx >= 0) & (vals > 0), vals, 1.0)


def _pad_ratio(d0: np.ndarray, d1: np.ndarray) -> np.ndarray:
    return (np.ceil(d0 / 128) * 128 * np.ceil(d1 / 8) * 8) / (d0 * d1)


def _chunk_features(raw: np.ndarray, st: LayoutStatic) -> np.ndarray:
    """Per-config features (without pattern frequency) of one int8 chunk (k, nc, 18)."""
    k = raw.shape[0]
    out_raw, in_raw, ker_raw = raw[..., 0:6], raw[..., 6:12], raw[..., 12:18]
    # packed layouts: free dims of partial layouts are wildcards in comparisons, and .minor
    # holds the two most-minor dims of the completed layout (sizes need a dim everywhere)
    out = read_block(out_raw, st.default, st.rank)
    vol = st.volume[None, :]
    d0 = _gather(st.dims, out.minor[..., 0])
    d1 = np.where(st.rank[None, :] >= 2, _gather(st.dims, out.minor[..., 1]), 1.0)
    ratio = _pad_ratio(d0, d1)
    padded = vol * ratio
    total_vol = max(float(st.volume.sum()), 1.0)
    rank_bits = mask_bits(st.mask)
    nondefault = disagree((out.code, out.care), pack(st.default), rank_bits[None])
    largest = st.dims.max(axis=1)[None, :]

    has_prod = st.producer >= 0
    prod = np.maximum(st.producer, 0)
    inp = read_block(in_raw, st.default[prod], st.in_rank)
    in_packed = (inp.code, inp.care)
    pbits = np.where(has_prod, rank_bits[prod], 0)[None]
    copy = disagree(in_packed, (out.code[:, prod], out.care[:, prod]), pbits)
    explicit = copy & inp.is_set & out.is_set[:, prod]
    pvol = st.volume[prod][None, :]
    has_sib = st.sibling_first >= 0
    sib = np.maximum(st.sibling_first, 0)
    sib_dis = disagree(in_packed, (inp.code[:, sib], inp.care[:, sib]), np.where(has_sib, pbits, 0))
    same_rank = has_prod & (st.rank == st.rank[prod])
    in_out = disagree((out.code, out.care), in_packed, np.where(same_rank, rank_bits, 0)[None])
    in_d0 = _gather(st.dims[prod], inp.minor[..., 0])
    in_d1 = np.where(st.rank[prod][None, :] >= 2, _gather(st.dims[prod], inp.minor[..., 1]), 1.0)
    in_padded = np.where(has_prod[None, :], pvol * _pad_ratio(in_d0, in_d1), 0.0)
    is_conv = st.convdot[None, :]
    ker_unset = (ker_raw < 0).all(axis=-1)
    ker_default = np.where(is_conv, ker_unset, False).sum(1) / max(st.convdot.sum(), 1)
    other = ~(st.convdot | st.reshape)[None, :]
    nc = raw.shape[1]
    cols = [
        np.log1p(padded.sum(1)),
        np.log1p((padded * is_conv).sum(1)),
        np.log1p((padded * st.reshape[None, :]).sum(1)),
        np.log1p((padded * other).sum(1)),
        np.log1p((padded - vol).sum(1)),
        ratio.mean(1),
        np.log(ratio).max(1),
        padded.sum(1) / total_vol,
        1.0 - nondefault.mean(1),
        nondefault.sum(1).astype(np.float64),
        (nondefault * vol).sum(1) / total_vol,
        ((d0 == largest) * vol).sum(1) / total_vol,
        np.log(d0).mean(1),
        np.log(d1).mean(1),
        ((d0 % 128 == 0) * vol).sum(1) / total_vol,
        ((d1 % 8 == 0) * vol).sum(1) / total_vol,
        copy.sum(1).astype(np.float64),
        np.log1p((copy * pvol).sum(1)),
        explicit.sum(1).astype(np.float64),
        sib_dis.sum(1).astype(np.float64),
        np.log1p((sib_dis * pvol).sum(1)),
        in_out.sum(1).astype(np.float64),
        np.log1p((in_out * vol).sum(1)),
        np.log1p(in_padded.sum(1)),
        ker_default,
        out.minor[..., 0].clip(0, 5).mean(1) if nc else np.zeros(k),
    ]
    so = st.second_order
    operand = kernel = None
    if so is not None:  # the first operand's and kernel's layouts, read once for both users
        operand = read_block(raw[..., 6:12], so.in_default, so.in_rank)
        kernel = read_block(raw[..., 12:18], so.kernel_default)
        cols.append(second_order_chunk(out, operand, kernel, d0, d1, st, so))
    if st.nodes is not None:
        cols.append(node_chunk(raw, st.nodes))
    if st.roles is not None and operand is not None and kernel is not None:
        cols.append(role_chunk((out, operand, kernel), st.roles))
    return np.column_stack(cols)


def layout_config_features(
    graph: LayoutGraph, spec: FeatureSpec, wanted: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-config features of the ``wanted`` configs and hashes of every config, in one pass.

    Every chunk of ``node_config_feat`` is read and hashed (the duplicate counts behind
    ``log_pattern_count`` and the merging of identical train configs need every config), but
    only the rows in ``wanted`` are featurized: with the sampling caps that is a few thousand
    of up to 100,000 configs, which keeps extraction near the cost of reading the file.

    Parameters
    ----------
    graph
        A loaded layout graph.
    spec
        Feature settings.
    wanted
        Sorted, distinct config indices to featurize (``None``: every config).

    Returns
    -------
    tuple of numpy.ndarray
        float64 per-config features (len(wanted), len(_PER_CONFIG)) in ``wanted`` order, and
        uint64 hashes (c,) of every config (equal configs have equal hashes).
    """
    st = layout_static(graph, spec)
    c = graph.n_configs
    rows = np.arange(c, dtype=np.int64) if wanted is None else np.asarray(wanted, dtype=np.int64)
    per_config = np.empty((rows.size, len(_PER_CONFIG)), dtype=np.float64)
    hashes = np.empty(c, dtype=np.uint64)
    for start, block in iter_config_chunks(graph.path, spec.chunk_size):
        stop = start + block.shape[0]
        # layouts are integers -1..5 (exact in any float dtype): a plain cast is exact and costs
        # a sixth of rint + cast; int8 keeps the chunk small for the features and the hash
        raw = block.astype(np.int8)
        hashes[start:stop] = hash_int8_rows(raw.reshape(raw.shape[0], -1))
        lo, hi = np.searchsorted(rows, [start, stop])
        if hi > lo:
            picked = raw if hi - lo == raw.shape[0] else raw[rows[lo:hi] - start]
            per_config[lo:hi, :-1] = _chunk_features(picked, st)
    uniq, inverse, counts = np.unique(hashes, return_inverse=True, return_counts=True)
    del uniq
    per_config[:, -1] = np.log(counts[inverse[rows]])
    return per_config, hashes


def layout_rows(
    graph: LayoutGraph,
    collection: str,
    spec: FeatureSpec,
    per_config: np.ndarray,
    reference: np.ndarray | None = None,
) -> np.ndarray:
    """Assemble full feature rows from per-config features of some configs of one graph.

    Parameters
    ----------
    per_config
        Output of :func:`layout_config_features` for the configs that become rows.
    reference
        Per-config features of a uniform sample of the graph's configs, against which the
        relative columns are computed (``None``: ``per_config`` itself). A biased train sample
        passes a uniform reference, so its relative columns mean what they mean on a test
        graph, whose configs are all featurized.

    Returns
    -------
    numpy.ndarray
        float32 rows (len(per_config), len(layout_feature_names(spec))).
    """
    st = layout_static(graph, spec)
    k = per_config.shape[0]
    static = np.array(
        [
            np.log1p(graph.n_config_nodes),
            np.log1p(st.volume.sum()),
            st.convdot.mean(),
            st.reshape.mean(),
            (st.producer >= 0).mean(),
            np.log1p(graph.n_configs),
        ]
    )
    parts = [per_config.astype(np.float32), np.broadcast_to(static, (k, static.size))]
    if spec.relative:
        ref = None if reference is None else reference[:, _RELATIVE_OF]
        parts.append(relative_features(per_config[:, _RELATIVE_OF], reference=ref))
    if spec.graph_descriptor:
        desc = graph_descriptor(graph.node_opcode, graph.edge_index, graph.node_feat, collection)
        parts.append(np.broadcast_to(desc, (k, desc.size)))
    return np.ascontiguousarray(np.concatenate(parts, axis=1), dtype=np.float32)


def extract_layout_features(
    graph: LayoutGraph, collection: str, spec: FeatureSpec
) -> tuple[np.ndarray, np.ndarray]:
    """Feature rows of every configuration of one layout graph, streaming its configs.

    Peak memory is a few arrays of ``spec.chunk_size x nc`` plus the (c, F) result.

    Returns
    -------
    tuple of numpy.ndarray
        float32 features (c, len(layout_feature_names(spec))) with row i for config i, and
        uint64 config hashes (c,) (equal configs have equal hashes).
    """
    per_config, hashes = layout_config_features(graph, spec)
    return layout_rows(graph, collection, spec, per_config), hashes


def layout_block_rows(
    graph: LayoutGraph, collection: str, spec: FeatureSpec, blocks: np.ndarray
) -> np.ndarray:
    """Feature rows of layout configurations given as blocks, among the graph's own configs.

    What a counterfactual reads (``hpo explain``: config A with one node's layout taken from
    config B): each row is the row that configuration would have as one more config of the
    file, its relative columns taken against the file's configs and its pattern frequency
    the count of its equals among them (at least 1). A block equal to a config of the file
    gets that config's row.

    Parameters
    ----------
    blocks
        Layouts of shape (k, nc, 18), as ``node_config_feat`` holds them.
    """
    reference, hashes = layout_config_features(graph, spec)
    raw = np.asarray(blocks).astype(np.int8)
    per_config = np.empty((raw.shape[0], len(_PER_CONFIG)), dtype=np.float64)
    per_config[:, :-1] = _chunk_features(raw, layout_static(graph, spec))
    mine = hash_int8_rows(raw.reshape(raw.shape[0], -1))
    per_config[:, -1] = np.log(np.maximum((mine[:, None] == hashes[None, :]).sum(1), 1))
    return layout_rows(graph, collection, spec, per_config, reference=reference)
