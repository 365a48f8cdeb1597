#!/usr/bin/env python3
"""blind_03: a synthetic TpuGraphs-format dataset whose runtimes follow a law
written without looking at the ranking tool's code.

Usage:  python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Everything below (graph samplers, config samplers, the runtime laws, the noise)
is self-contained: numpy + the standard library only.

============================================================================
THE LAW (kept out of NOTE.md on purpose)
============================================================================
A toy TPU: HBM 1.3 kB/ns, MXU peak 120 kflop/ns (bf16; f32 operands run at 1/3),
VPU 2500 elem-op/ns, 16 MiB VMEM.  Arrays in HBM are tiled on their two
most-minor dims: the most-minor dim pads to 128 lanes, the second-minor to
8 sublanes (16 for 2-byte, 32 for 1-byte types).  Every byte count below is a
*padded* byte count under the layout in force.

LAYOUT collections (runtime of a whole program under one layout config)
  * Nodes are split into anchors (the configurable nodes: convolution, dot,
    reshape, transpose), elementwise "regions" (maximal connected sets of
    same-shape elementwise ops, one fused kernel each) and fixed nodes
    (parameters, reduces, collectives, ...; their cost is a per-graph constant
    except where noted).
  * Config blocks resolve to full permutations: the output block's unspecified
    dims are filled in the order of the node's recorded layout (node_feat
    134-139; an all -1 output block = that recorded layout).  An input/kernel
    block is a *demand* on the operand: all -1 accepts whatever arrives; a
    partial block (k fixed minor dims) is met by any operand layout sharing
    that k-prefix; otherwise the operand is copied into the demanded layout
    (its free dims in the producer's recorded order).  Broadcasts, constants,
    iota and rng produce any demanded layout for free.
  * Copy (relayout) of a tensor between layouts a != b costs
    (bytes_a + bytes_b) / (BW * eff) + 0.7 us with eff 0.85 if only major dims
    move, 0.55 if the minor dim stays but the second-minor changes, 0.28 if the
    minor (lane) dim changes (cross-lane transpose).
  * Region layout (multi-node combination): each region picks ONE layout for
    all its members = argmin over candidates {layouts of its ports, its
    recorded layout} of  [fused-kernel time under that layout + sum of copies
    needed at every port + layout-dependent read cost of its reduce readers].
    Ports are: outputs of anchors feeding it, demands of anchors it feeds,
    same-shape fixed producers (recorded layout), and "sinks" (tuple /
    all-reduce / reverse consumers) that need the recorded layout.
  * conv/dot kernel: soft roofline  max(Tc,Tm) + 0.15 min(Tc,Tm) + 0.9 us.
    Tc = flops / (peak * util), util = product of lane efficiencies
    (dim size / padded-to-128 size) of: the operand dim mapped to lanes
    (contraction dim best; batch x0.8; spatial x0.65 for convs; for dots the
    M dim x0.75, batch x0.5), the output lane dim (feature best; batch x0.85;
    other x0.6 / x0.7 / x0.5), a sublane factor 0.5+0.5*eff8(second-minor of
    output), and a kernel factor (1.0 if kernel's out-feature is minor and
    in-feature second, 0.92 swapped; otherwise 1.0 but the kernel is
    re-laid-out in VMEM at XLU speed).  Dots: rhs layout (whatever arrives)
    gives 1.0 (N minor) / 0.9 (K minor) / 0.6.
    Tm = (in + kernel + out bytes) / BW, plus a VMEM residency cliff: if the
    padded kernel exceeds 8 MiB it is re-streamed once per 4 MiB output block
    (up to 16x).
  * reshape: free (bitcast) iff operand and output layouts are both
    row-major-equivalent (ignoring size-1 dims) and the minor dims tile
    compatibly; otherwise a copy (eff 0.85 if the logical minor stays minor on
    both sides, else 0.28).  transpose: free iff output layout composed with the
    permutation equals the operand layout; else a copy (0.85 if the physical
    minor dim is preserved, else 0.28).
  * reduce readers: reading a tensor whose lane dim is reduced costs x1.25,
    sublane dim x1.1.
  * Global HBM cliff (all nodes together): peak live memory F = max over
    program order of the padded bytes of all tensors alive at that point
    (a tensor lives from its producer to its last consumer; anchors and
    regions sized under the config, fixed nodes under their recorded layout).
    Budget = 1.10 x F(all-default config) + 64 KiB.  Above budget:
    + 3 (F-B)/BW + 2% of the all-default runtime (rematerialisation).
  * Plus a per-graph constant (fixed nodes' traffic, 15 us step overhead).
  * Config samplers: "random" draws every block independently (8-15% all -1,
    otherwise two minor dims from a plausible/uniform mix, partial or full);
    "default" is a search from the compiler default that mutates 1-3 nodes at
    a time with mild moves only (keep the lane dim, vary the sublane dim; swap
    the two minor dims on non-conv nodes), skipping moves that pad a tensor to
    more than 1.5x its default size; 12% of its configs are exact repeats.

TILE collection (one fused kernel, runtime per tile-size config)
  * Output bounds: per output dim, tile extent in granules: 128 elements on
    the output's minor dim, 8 on its second-minor dim, 1 elsewhere.  Kernel
    bounds (conv/dot only): conv kernel spatial dims in elements, in-feature
    in units of 32, out-feature in units of 128; dot rhs K and N in units of
    128.  Tiles are computed whole (overhang is wasted work).
  * Per step (one output tile x one contraction chunk): operand tiles with
    halos, kernel tile (columns loaded in blocks of the kernel's out-feature
    bound; overshooting loads waste), f32 accumulator, output and epilogue
    tiles.  W2 = double-buffered working set.  W2 <= VMEM: DMA and compute
    overlap (max); otherwise they serialise (sum) -- a cliff.  Configs whose
    single-buffered set exceeds VMEM do not compile and are never emitted.
  * MXU util: contraction per pass packs in-feature chunk x kernel taps into
    128 rows; output feature extent vs 128 columns.  DMA efficiency per
    operand depends on its contiguous run (extent along its minor dim x bytes)
    as run/(run+256 B).  Weights are loaded once per output-feature tile when
    the whole contraction fits one chunk.  120 ns per step, 1.2 us launch.
  * Elementwise / reduce / transpose kernels: same tiling, DMA vs VPU (and XLU
    for transposes / cross-lane reductions).
  * The default config is the "compiler heuristic": among candidates whose
    double-buffered working set fits in 3/4 of VMEM, the one with the best
    coarse estimate (steps x overhead + raw bytes / BW + flops / (peak x
    contraction packing)), which ignores DMA run lengths, overhang waste and
    lane fill -- so it is usually, not always, the best.  The normaliser is
    its measured runtime.  Configs are shuffled (the default is at no fixed
    index).

NOISE (measurement only; never in the noiseless arrays)
  Multiplicative, heavy-tailed: exp(sigma * t3) with Student-t (3 dof) plus
  rare positive spikes (Pareto tail).  Layout sigma 0.15%, tile sigma 0.8%.
  Duplicate configs are measured independently.
============================================================================
"""
import argparse
import hashlib
import itertools
import math
import os
import sys
import time

import numpy as np

# ----------------------------------------------------------------------------
# Opcode ids (TpuGraphs / tpu_graphs hlo_opcode.h order)
# ----------------------------------------------------------------------------
OP = dict(abs=1, add=2, all_reduce=5, bitcast=11, broadcast=13, call=14, clamp=17,
          compare=20, concatenate=22, constant=24, convert=25, convolution=26, copy=27,
          divide=32, dot=34, dynamic_slice=35, dynamic_update_slice=36, exponential=37,
          fusion=41, gather=42, get_tuple_element=45, iota=48, log=50, and_=52, or_=54,
          maximum=57, minimum=58, multiply=59, negate=60, pad=62, parameter=63,
          power=66, reduce=70, reduce_window=72, reshape=75, reverse=76, rng=77,
          rsqrt=81, select=83, select_and_scatter=84, slice=92, sqrt=94, subtract=95,
          tanh=96, transpose=98, tuple=100, while_=102, logistic=107)

ELEMENTWISE = {1, 2, 7, 12, 15, 17, 20, 25, 27, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53, 54,
               55, 57, 58, 59, 60, 66, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94, 95, 96,
               103, 107}
FREE_SOURCES = {13, 24, 48, 77}          # can materialise any layout for free
SINKS = {100, 5, 76, 61, 104, 111}       # need the recorded layout
ANCHOR_OPS = {26, 34, 75, 98}

DTYPES = ['invalid', 'pred', 's8', 's16', 's32', 's64', 'u8', 'u16', 'u32', 'u64', 'f16',
          'f32', 'f64', 'bf16', 'c64', 'c128', 'tuple', 'opaque', 'token']
DT_COL = {d: 2 + i for i, d in enumerate(DTYPES)}
DT_BYTES = np.array([4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8, 16, 0, 0, 0], dtype=np.float64)

# ----------------------------------------------------------------------------
# Machine constants of the law
# ----------------------------------------------------------------------------
BW = 1300.0            # bytes / ns
PEAK = 120000.0        # flop / ns (bf16)
VPU = 2500.0           # elem-op / ns
XLU = 1500.0           # elements / ns through the transpose unit
VMEM = 16.0 * 2 ** 20
OVH_KERNEL = 900.0
OVH_COPY = 700.0
GRAPH_CONST = 15000.0
TILE_LAUNCH = 1200.0
TILE_STEP = 120.0


def pad_up(x, g):
    return np.ceil(np.asarray(x, dtype=np.float64) / g) * g


def lane_eff(x, g=128.0):
    x = np.maximum(np.asarray(x, dtype=np.float64), 1.0)
    return x / pad_up(x, g)


# ----------------------------------------------------------------------------
# Permutation tables
# ----------------------------------------------------------------------------
PERMS = {}
PERM_ID = {}
for _r in range(0, 7):
    if _r <= 5:
        lst = list(itertools.permutations(range(_r)))
    else:
        lst = [tuple(range(_r - 1, -1, -1))]
    PERMS[_r] = np.array(lst, dtype=np.int64).reshape(len(lst), _r)
    PERM_ID[_r] = {p: i for i, p in enumerate(lst)}


def perm_id(p):
    r = len(p)
    return PERM_ID[r].get(tuple(int(x) for x in p), 0)


def prefix_codes(r):
    """code[k][pid] = integer code of the first k entries of perm pid."""
    P = PERMS[r]
    out = []
    for k in range(r + 1):
        if k == 0:
            out.append(np.zeros(len(P), dtype=np.int64))
        else:
            code = np.zeros(len(P), dtype=np.int64)
            for j in range(k):
                code = code * 8 + P[:, j] + 1
            out.append(code)
    return out


PREFIX = {r: prefix_codes(r) for r in range(0, 7)}


# ============================================================================
# File parsing shared by the laws
# ============================================================================
class Parsed:
    pass


def parse_graph(nf, op, ei):
    g = Parsed()
    n = len(op)
    g.n = n
    g.op = op.astype(np.int64)
    d = nf[:, 21:27].astype(np.int64)
    rank = np.zeros(n, dtype=np.int64)
    for j in range(6):
        rank = np.where((rank == j) & (d[:, j] > 0), j + 1, rank)
    g.rank = rank
    g.dims = [tuple(int(x) for x in d[i, :rank[i]]) for i in range(n)]
    dt = np.argmax(nf[:, 2:21], axis=1)
    g.ebytes = DT_BYTES[dt]
    g.ebytes = np.where(g.ebytes <= 0, 4.0, g.ebytes)
    lay = nf[:, 134:140].astype(np.int64)
    g.layout = []
    for i in range(n):
        r = rank[i]
        p = tuple(int(x) for x in lay[i, :r])
        if r > 5 or sorted(p) != list(range(r)):
            p = tuple(range(r - 1, -1, -1))
        g.layout.append(p)
    g.nf = nf
    g.operands = [[] for _ in range(n)]
    g.consumers = [[] for _ in range(n)]
    for u, v in ei:
        u = int(u)
        v = int(v)
        k = len(g.operands[u])
        g.operands[u].append(v)
        g.consumers[v].append((u, k))
    return g


def padded_table(dims, e):
    """padded bytes of a tensor for every permutation (minor-to-major)."""
    r = len(dims)
    P = PERMS[r]
    if r == 0:
        return np.array([e], dtype=np.float64)
    D = np.array(dims, dtype=np.float64)
    sub = 8.0 if e >= 4 else (16.0 if e == 2 else 32.0)
    tot = np.prod(D)
    m0 = D[P[:, 0]]
    res = tot / m0 * pad_up(m0, 128.0)
    if r >= 2:
        m1 = D[P[:, 1]]
        res = res / m1 * pad_up(m1, sub)
    return res * e


def copy_cost(tab, a, b, P):
    """cost of relayout between perm arrays a and b of one tensor (table tab)."""
    same = a == b
    if P.shape[1] == 0:
        return np.zeros(a.shape)
    m0 = P[a, 0] == P[b, 0]
    if P.shape[1] >= 2:
        m1 = P[a, 1] == P[b, 1]
    else:
        m1 = np.ones(a.shape, dtype=bool)
    eff = np.where(m0 & m1, 0.85, np.where(m0, 0.55, 0.28))
    c = (tab[a] + tab[b]) / (BW * eff) + OVH_COPY
    return np.where(same, 0.0, c)


def fill_perm(block, ref):
    """resolve a minor-to-major block (with -1) against a reference order."""
    r = len(ref)
    fixed = []
    for x in block[:r]:
        x = int(x)
        if x < 0 or x >= r or x in fixed:
            break
        fixed.append(x)
    rest = [x for x in ref if x not in fixed]
    return tuple(fixed + rest), len(fixed)


# ============================================================================
# LAYOUT LAW
# ============================================================================
def layout_law(nf, op, ei, ids, ncf):
    """noise-free runtime (ns, float64) of every config of a layout file."""
    g = parse_graph(nf, op, ei)
    C = ncf.shape[0]
    ids = [int(x) for x in ids]
    # evaluate one extra "all compiler default" config to anchor the HBM budget
    ncf_ext = np.concatenate([ncf, -np.ones((1,) + ncf.shape[1:], dtype=ncf.dtype)], axis=0)
    tot, foot = _layout_eval(g, ids, ncf_ext, C + 1)
    T_def, F_def = tot[-1], foot[-1]
    budget = 1.10 * F_def + 65536.0
    over = foot - budget
    pen = np.where(over > 0, 3.0 * over / BW + 0.02 * T_def, 0.0)
    return (tot + pen)[:C]


def _resolve_blocks(blocks, ref, as_demand):
    """blocks (C,6) -> (perm ids (C,), n_fixed (C,)) for rank len(ref)."""
    r = len(ref)
    C = blocks.shape[0]
    if r == 0 or r > 5:
        return np.zeros(C, dtype=np.int64), np.zeros(C, dtype=np.int64)
    bi = np.clip(blocks.astype(np.int64), -1, 6) + 1
    key = np.zeros(C, dtype=np.int64)
    for j in range(6):
        key = key * 8 + bi[:, j]
    ukey, inv = np.unique(key, return_inverse=True)
    inv = inv.reshape(-1)
    pid = np.zeros(len(ukey), dtype=np.int64)
    nfx = np.zeros(len(ukey), dtype=np.int64)
    for j, kk in enumerate(ukey):
        row = []
        for _ in range(6):
            row.append(int(kk % 8) - 1)
            kk //= 8
        row = row[::-1]
        p, k = fill_perm(row, ref)
        pid[j] = perm_id(p)
        nfx[j] = min(k, r)
    return pid[inv], nfx[inv]


def _match(actual, dem_pid, dem_k, r):
    """does an operand with layout `actual` satisfy a demand (pid, k)?"""
    ok = np.ones(actual.shape, dtype=bool)
    pc = PREFIX[r]
    for k in range(1, r + 1):
        sel = dem_k == k
        if sel.any():
            ok = np.where(sel, pc[k][actual] == pc[k][dem_pid], ok)
    return ok


def _desc_eq_table(dims):
    """per perm: is it row-major-equivalent ignoring size-1 dims; logical minor."""
    r = len(dims)
    P = PERMS[r]
    res = np.zeros(len(P), dtype=bool)
    nonone = [d for d in range(r) if dims[d] != 1]
    last = nonone[-1] if nonone else (r - 1)
    for i, p in enumerate(P):
        seq = [x for x in p if dims[x] != 1]
        res[i] = all(seq[j] > seq[j + 1] for j in range(len(seq) - 1))
    minor_is_last = P[:, 0] == last if r > 0 else np.ones(1, dtype=bool)
    return res, minor_is_last, last


def _layout_eval(g, ids, ncf, C):
    n = g.n
    is_anchor = np.zeros(n, dtype=bool)
    is_anchor[ids] = True
    col = {nid: j for j, nid in enumerate(ids)}
    tabs = {}

    def tab(i):
        if i not in tabs:
            tabs[i] = padded_table(g.dims[i], g.ebytes[i])
        return tabs[i]

    def full(pid):
        return np.full(C, pid, dtype=np.int64)

    def default_pid(i):
        r = g.rank[i]
        return perm_id(g.layout[i]) if r <= 5 else 0

    # ---------------- anchors: output layouts and operand demands
    Lo = {}
    demand = {}      # (anchor, operand index) -> (pid, k)
    for nid in ids:
        j = col[nid]
        r = g.rank[nid]
        Lo[nid] = _resolve_blocks(ncf[:, j, 0:6], g.layout[nid], False)[0] if r <= 5 else full(0)
        ops_ = g.operands[nid]
        if len(ops_) >= 1:
            p0 = ops_[0]
            if g.rank[p0] <= 5:
                demand[(nid, 0)] = _resolve_blocks(ncf[:, j, 6:12], g.layout[p0], True)
        if g.op[nid] == 26 and len(ops_) >= 2:
            p1 = ops_[1]
            if g.rank[p1] <= 5:
                demand[(nid, 1)] = _resolve_blocks(ncf[:, j, 12:18], g.layout[p1], True)

    # ---------------- regions (union-find over same-shape elementwise nodes)
    flex = np.array([(not is_anchor[i]) and (g.op[i] in ELEMENTWISE) and 1 <= g.rank[i] <= 5
                     for i in range(n)])
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for u in range(n):
        if not flex[u]:
            continue
        for v in g.operands[u]:
            if flex[v] and g.dims[u] == g.dims[v]:
                ru, rv = find(u), find(v)
                if ru != rv:
                    parent[ru] = rv
    regions = {}
    for i in range(n):
        if flex[i]:
            regions.setdefault(find(i), []).append(i)
    region_of = {}
    for rid, mem in regions.items():
        for m in mem:
            region_of[m] = rid

    total = np.full(C, GRAPH_CONST)

    # constant part: fixed nodes' own traffic
    const = 0.0
    for i in range(n):
        if is_anchor[i] or flex[i] or g.rank[i] == 0:
            continue
        if g.op[i] in (63, 24, 45, 100, 102):
            continue
        vol = float(np.prod(g.dims[i])) * g.ebytes[i]
        const += 2.0 * vol / BW + 150.0
    total += const

    def reduce_factor(q, producer, L):
        """read-cost multiplier for reduce consumer q of `producer` in layout L."""
        r = g.rank[producer]
        if g.op[q] != 70 or r == 0:
            return np.ones(C)
        rk = r - g.rank[q]
        red = [int(x) for x in g.nf[q, 31:31 + max(rk, 0)]]
        P = PERMS[r]
        f = np.ones(C)
        if r >= 2:
            f = np.where(np.isin(P[L, 1], red), 1.1, f)
        f = np.where(np.isin(P[L, 0], red), 1.25, f)
        return f

    # ---------------- region layout choice
    region_L = {}
    for rid, mem in regions.items():
        S = g.dims[mem[0]]
        r = len(S)
        P = PERMS[r]
        e_R = max(g.ebytes[m] for m in mem)
        tabR = padded_table(S, e_R)
        memset = set(mem)
        ports = []      # (kind, layout pid array, k array or None, table)
        readers = []    # (consumer, member)
        n_in = 0
        n_out = 0
        for m in mem:
            for v in g.operands[m]:
                if v in memset:
                    continue
                if g.dims[v] == S:
                    n_in += 1
                    if is_anchor[v]:
                        ports.append(('src', Lo[v], None, tab(v)))
                    elif g.op[v] not in FREE_SOURCES:
                        ports.append(('src', full(default_pid(v)), None, tab(v)))
            ext = False
            for (q, k) in g.consumers[m]:
                if q in memset:
                    continue
                ext = True
                if is_anchor[q]:
                    if (q, k) in demand:
                        dp, dk = demand[(q, k)]
                        if (dk > 0).any():
                            ports.append(('dem', dp, dk, tab(m)))
                elif g.op[q] in SINKS:
                    ports.append(('src', full(default_pid(m)), None, tab(m)))
                elif g.dims[q] != S and g.rank[q] >= 0:
                    readers.append((q, m))
            if ext:
                n_out += 1
        n_io = max(n_in + n_out, 1)
        nmem = len(mem)
        vol_pad_el = tabR / e_R

        cands = [full(default_pid(mem[0]))]
        for (kind, L, k, t) in ports:
            if not any(np.array_equal(L, c0) for c0 in cands):
                cands.append(L)

        def cost_of(Lc):
            c = np.maximum(n_io * tabR[Lc] / BW, nmem * vol_pad_el[Lc] / VPU) + OVH_KERNEL
            for (kind, L, k, t) in ports:
                if kind == 'src':
                    c = c + copy_cost(t, L, Lc, P)
                else:
                    ok = _match(Lc, L, k, r)
                    c = c + np.where(ok, 0.0, copy_cost(t, Lc, L, P))
            for (q, m) in readers:
                c = c + tab(m)[Lc] / BW * reduce_factor(q, m, Lc)
            return c

        costs = np.stack([cost_of(L) for L in cands])
        best = np.argmin(costs, axis=0)
        Lr = np.stack(cands)[best, np.arange(C)]
        region_L[rid] = Lr
        total += costs[best, np.arange(C)]

    def out_layout(v):
        """layout (pid array) in which node v's output exists."""
        if is_anchor[v]:
            return Lo[v]
        if v in region_of:
            return region_L[region_of[v]]
        return full(default_pid(v))

    # ---------------- anchors
    for nid in ids:
        o = g.op[nid]
        ops_ = g.operands[nid]
        r_out = g.rank[nid]
        if r_out > 5:
            continue
        # actual operand layouts (+ copies not accounted for by regions)
        actual = {}
        for k, v in enumerate(ops_[:2]):
            if g.rank[v] == 0 or g.rank[v] > 5:
                continue
            Pv = PERMS[g.rank[v]]
            if (nid, k) in demand:
                dp, dk = demand[(nid, k)]
                if g.op[v] in FREE_SOURCES and not is_anchor[v]:
                    have = np.where(dk > 0, dp, full(default_pid(v)))
                    actual[k] = have
                    continue
                src = out_layout(v)
                ok = _match(src, dp, dk, g.rank[v])
                actual[k] = np.where(ok, src, dp)
                if v not in region_of:      # region ports already paid their copies
                    total += np.where(ok, 0.0, copy_cost(tab(v), src, dp, Pv))
            else:
                actual[k] = out_layout(v)
        L = Lo[nid]
        Pout = PERMS[r_out]
        # consumers of the anchor that are not regions/anchors
        for (q, k) in g.consumers[nid]:
            if is_anchor[q] or q in region_of:
                continue
            if g.op[q] in SINKS:
                total += copy_cost(tab(nid), L, full(default_pid(nid)), Pout)
            elif g.rank[nid] > 0:
                total += tab(nid)[L] / BW * reduce_factor(q, nid, L)

        if o == 26 and 0 in actual and 1 in actual:
            total += _conv_cost(g, nid, actual[0], actual[1], L, tab)
        elif o == 34 and 0 in actual and 1 in actual:
            total += _dot_cost(g, nid, actual[0], actual[1], L, tab)
        elif o == 75 and 0 in actual:
            total += _reshape_cost(g, nid, ops_[0], actual[0], L, tab)
        elif o == 98 and 0 in actual:
            total += _transpose_cost(g, nid, ops_[0], actual[0], L, tab)
        else:
            total += tab(nid)[L] * 2.0 / BW + OVH_KERNEL

    # ---------------- peak live HBM (all tensors together, program order)
    const_curve = np.zeros(n + 1)
    delta = np.zeros((n + 1, C))
    for i in range(n):
        if g.rank[i] == 0 or g.rank[i] > 5:
            continue
        death = max([q for (q, _) in g.consumers[i]] + [i])
        if is_anchor[i]:
            sz = tab(i)[Lo[i]]
        elif i in region_of:
            sz = tab(i)[region_L[region_of[i]]]
        else:
            const_curve[i] += tab(i)[default_pid(i)]
            const_curve[death + 1] -= tab(i)[default_pid(i)]
            continue
        delta[i] += sz
        delta[death + 1] -= sz
    live = np.cumsum(delta, axis=0) + np.cumsum(const_curve)[:, None]
    foot = live.max(axis=0)
    return total, foot


def _roofline(tc, tm):
    return np.maximum(tc, tm) + 0.15 * np.minimum(tc, tm) + OVH_KERNEL


def _conv_cost(g, nid, A0, A1, Lo, tab):
    nf = g.nf[nid]
    x, w = g.operands[nid][0], g.operands[nid][1]
    Din, Dk, Dout = g.dims[x], g.dims[w], g.dims[nid]
    ri, rk, ro = len(Din), len(Dk), len(Dout)
    in_b, in_f = int(nf[93]), int(nf[94])
    k_if, k_of = int(nf[99]), int(nf[100])
    o_b, o_f = int(nf[105]), int(nf[106])
    if max(in_b, in_f) >= ri or max(k_if, k_of) >= rk or max(o_b, o_f) >= ro:
        return tab(nid)[Lo] * 2 / BW + OVH_KERNEL
    fgc = max(float(nf[107]), 1.0)
    contraction = float(np.prod(Dk)) / max(Dk[k_of], 1)
    flops = 2.0 * float(np.prod(Dout)) * contraction / fgc
    Pi, Pk, Po = PERMS[ri], PERMS[rk], PERMS[ro]
    Di = np.array(Din, dtype=np.float64)
    Do = np.array(Dout, dtype=np.float64)
    m0 = Pi[A0, 0]
    u_in = np.where(m0 == in_f, lane_eff(Di[m0]),
                    np.where(m0 == in_b, 0.8 * lane_eff(Di[m0]), 0.65 * lane_eff(Di[m0])))
    o0 = Po[Lo, 0]
    u_out = np.where(o0 == o_f, lane_eff(Do[o0]),
                     np.where(o0 == o_b, 0.85 * lane_eff(Do[o0]), 0.6 * lane_eff(Do[o0])))
    if ro >= 2:
        u_rows = 0.5 + 0.5 * lane_eff(Do[Po[Lo, 1]], 8.0)
    else:
        u_rows = np.ones(len(Lo))
    k0, k1 = Pk[A1, 0], Pk[A1, 1]
    good_k = ((k0 == k_of) & (k1 == k_if)) | ((k0 == k_if) & (k1 == k_of))
    u_k = np.where((k0 == k_of) & (k1 == k_if), 1.0, np.where(good_k, 0.92, 1.0))
    kb = tab(w)[A1]
    relay_k = np.where(good_k, 0.0, 2.0 * kb / (BW * 0.28) + float(np.prod(Dk)) / XLU)
    peak = PEAK / (3.0 if (g.ebytes[x] >= 4 or g.ebytes[w] >= 4) else 1.0)
    util = np.maximum(u_in * u_out * u_rows * u_k, 0.005)
    tc = flops / (peak * util)
    ob = tab(nid)[Lo]
    blocks = np.minimum(np.ceil(ob / (4.0 * 2 ** 20)), 16.0)
    extra = np.where(kb > 8.0 * 2 ** 20, kb * (blocks - 1.0), 0.0)
    tm = (tab(x)[A0] + kb + ob + extra) / BW
    return _roofline(tc, tm) + relay_k


def _dot_cost(g, nid, A0, A1, Lo, tab):
    x, w = g.operands[nid][0], g.operands[nid][1]
    Dl, Dr, Do = g.dims[x], g.dims[w], g.dims[nid]
    rl, rr, ro = len(Dl), len(Dr), len(Do)
    if rl < 2 or rr < 2 or ro < 2:
        return tab(nid)[Lo] * 2 / BW + OVH_KERNEL
    K = float(Dl[-1])
    flops = 2.0 * float(np.prod(Do)) * K
    Pl, Pr, Po = PERMS[rl], PERMS[rr], PERMS[ro]
    Dof = np.array(Do, dtype=np.float64)
    m0 = Pl[A0, 0]
    u_in = np.where(m0 == rl - 1, lane_eff(K),
                    np.where(m0 == rl - 2, 0.75 * lane_eff(K), 0.5 * lane_eff(K)))
    r0 = Pr[A1, 0]
    u_r = np.where(r0 == rr - 1, 1.0, np.where(r0 == rr - 2, 0.9, 0.6))
    o0 = Po[Lo, 0]
    u_out = np.where(o0 == ro - 1, lane_eff(Dof[o0]),
                     np.where(o0 == ro - 2, 0.7 * lane_eff(Dof[o0]), 0.5 * lane_eff(Dof[o0])))
    u_rows = 0.5 + 0.5 * lane_eff(Dof[Po[Lo, 1]], 8.0)
    peak = PEAK / (3.0 if (g.ebytes[x] >= 4 or g.ebytes[w] >= 4) else 1.0)
    util = np.maximum(u_in * u_r * u_out * u_rows, 0.005)
    tc = flops / (peak * util)
    kb = tab(w)[A1]
    ob = tab(nid)[Lo]
    blocks = np.minimum(np.ceil(ob / (4.0 * 2 ** 20)), 16.0)
    extra = np.where(kb > 8.0 * 2 ** 20, kb * (blocks - 1.0), 0.0)
    tm = (tab(x)[A0] + kb + ob + extra) / BW
    return _roofline(tc, tm)


def _reshape_cost(g, nid, x, A0, Lo, tab):
    Din, Dout = g.dims[x], g.dims[nid]
    if len(Din) == 0 or len(Dout) == 0:
        return np.full(len(Lo), 200.0)
    de_in, mil_in, last_in = _desc_eq_table(Din)
    de_out, mil_out, last_out = _desc_eq_table(Dout)
    Pi, Po = PERMS[len(Din)], PERMS[len(Dout)]
    mi = np.array(Din)[Pi[A0, 0]]
    mo = np.array(Dout)[Po[Lo, 0]]
    tile_ok = (mi == mo) | ((mi % 128 == 0) & (mo % 128 == 0))
    bitcast = de_in[A0] & de_out[Lo] & tile_ok
    eff = np.where(mil_in[A0] & mil_out[Lo], 0.85, 0.28)
    c = (tab(x)[A0] + tab(nid)[Lo]) / (BW * eff) + OVH_COPY
    return np.where(bitcast, 200.0, c)


def _transpose_cost(g, nid, x, A0, Lo, tab):
    r = g.rank[nid]
    if r == 0 or g.rank[x] != r:
        return np.full(len(Lo), 200.0)
    perm = [int(v) for v in g.nf[nid, 31:31 + r]]
    if sorted(perm) != list(range(r)):
        perm = list(range(r))
    Po = PERMS[r]
    mapped = np.array([perm_id([perm[o] for o in row]) for row in Po], dtype=np.int64)
    phys = mapped[Lo]
    bitcast = phys == A0
    keep_minor = PERMS[r][phys, 0] == PERMS[r][A0, 0]
    eff = np.where(keep_minor, 0.85, 0.28)
    c = (tab(x)[A0] + tab(nid)[Lo]) / (BW * eff) + OVH_COPY
    c = c + np.where(keep_minor, 0.0, float(np.prod(g.dims[nid])) / XLU)
    return np.where(bitcast, 200.0, c)


# ============================================================================
# TILE LAW
# ============================================================================
def tile_analyze(nf, op, ei, cf):
    """returns (noise-free runtime ns (C,), single-buffered working set (C,),
    double-buffered working set (C,), output tile volume (C,), n_k (C,),
    the compiler's own coarse estimate (C,) used only to pick its default)."""
    g = parse_graph(nf, op, ei)
    C = cf.shape[0]
    root = g.n - 1
    od = np.array(g.dims[root], dtype=np.float64)
    r = len(od)
    ol = g.layout[root]
    gran = np.ones(r)
    gran[ol[0]] = 128.0
    if r >= 2:
        gran[ol[1]] = 8.0
    e_out = g.ebytes[root]
    b = np.maximum(cf[:, 8:8 + r].astype(np.float64), 1.0)
    t = b * gran                                   # (C, r) tile extents
    nt_dim = np.ceil(od / t)
    n_tiles = np.prod(nt_dim, axis=1)
    tvol = np.prod(t, axis=1)
    # contiguous run of the output tile along its minor dim
    run_out = np.minimum(t[:, ol[0]], od[ol[0]]) * e_out

    def bw_eff(run):
        return BW * run / (run + 256.0)

    n_ops = sum(1 for i in range(g.n) if g.op[i] in ELEMENTWISE)
    core = None
    best = -1.0
    for i in range(g.n):
        if g.op[i] in (26, 34) and len(g.operands[i]) >= 2:
            fl = float(np.prod(g.dims[i])) * float(np.prod(g.dims[g.operands[i][1]]))
            if fl > best:
                best, core = fl, i
    outer = [v for v in g.operands[root] if g.op[v] == 63]
    core_dims = []
    red = None
    tr = None
    for i in range(g.n):
        if g.op[i] == 70 and g.dims[i] == g.dims[root] and len(g.operands[i]) >= 1:
            red = i
        if g.op[i] == 98 and g.dims[i] == g.dims[root] and len(g.operands[i]) >= 1:
            tr = i
    if core is not None:
        core_dims = [g.dims[g.operands[core][0]], g.dims[g.operands[core][1]]]
    elif red is not None:
        core_dims = [g.dims[g.operands[red][0]]]
    elif tr is not None:
        core_dims = [g.dims[g.operands[tr][0]]]
    epi_b = np.zeros(C)
    used = list(core_dims)
    for v in outer:
        if g.dims[v] in used:
            used.remove(g.dims[v])
            continue
        vol = float(np.prod(g.dims[v])) if g.rank[v] > 0 else 1.0
        epi_b += np.minimum(vol, tvol) * g.ebytes[v]

    if core is not None:
        x, w = g.operands[core][0], g.operands[core][1]
        Din = np.array(g.dims[x], dtype=np.float64)
        Dk = np.array(g.dims[w], dtype=np.float64)
        e_in, e_k = g.ebytes[x], g.ebytes[w]
        kb = cf[:, 0:len(Dk)].astype(np.float64)
        kb = np.maximum(kb, 1.0)
        if g.op[core] == 26:
            nfc = g.nf[core]
            nsp = int(nfc[91] + nfc[92])
            in_b, in_f = int(nfc[93]), int(nfc[94])
            isp = [int(v) for v in nfc[95:95 + nsp]]
            k_if, k_of = int(nfc[99]), int(nfc[100])
            ksp = [int(v) for v in nfc[101:101 + nsp]]
            o_b, o_f = int(nfc[105]), int(nfc[106])
            osp = [d for d in range(r) if d not in (o_b, o_f)]
            strides = [max(float(v), 1.0) for v in nfc[45:45 + nsp]]
            Ci, Co = Din[in_f], Dk[k_of]
            ci_c = kb[:, k_if] * 32.0
            ci_eff = np.minimum(ci_c, Ci)
            co_c = kb[:, k_of] * 128.0
            t_f, t_b = t[:, o_f], np.minimum(t[:, o_b], od[o_b])
            in_elems = t_b * ci_eff
            taps = np.ones(C)
            n_k = np.ceil(Ci / ci_c)
            ext = {}
            for s in range(nsp):
                ks = Dk[ksp[s]]
                ksc = np.minimum(kb[:, ksp[s]], ks)
                taps = taps * ksc
                n_k = n_k * np.ceil(ks / ksc)
                es = np.minimum((t[:, osp[s]] - 1.0) * strides[s] + ksc, Din[isp[s]] + ks - 1.0)
                ext[isp[s]] = es
                in_elems = in_elems * es
            n_co_sub = np.ceil(t_f / co_c)
            k_elems = taps * ci_eff * co_c * n_co_sub
            K_pack = ci_eff * taps
            lay_x = g.layout[x]
            mx = lay_x[0]
            run_in = np.where(mx == in_f, ci_eff, np.where(mx == in_b, t_b, ext.get(mx, t_b))) * e_in
            lay_w = g.layout[w]
            mw = lay_w[0]
            run_k = np.where(mw == k_of, co_c, np.where(mw == k_if, ci_eff, taps)) * e_k
            n_co_tiles = nt_dim[:, o_f]
        else:  # dot
            rl = len(Din)
            K = Din[-1]
            kc = kb[:, len(Dk) - 2] * 128.0
            K_eff = np.minimum(kc, K)
            n_k = np.ceil(K / kc)
            co_c = kb[:, len(Dk) - 1] * 128.0
            t_f = t[:, r - 1]
            t_m = np.minimum(t[:, r - 2], od[r - 2])
            t_batch = np.ones(C)
            for d in range(r - 2):
                t_batch = t_batch * np.minimum(t[:, d], od[d])
            n_co_sub = np.ceil(t_f / co_c)
            in_elems = t_batch * t_m * K_eff
            k_elems = t_batch * K_eff * co_c * n_co_sub
            K_pack = K_eff
            mx = g.layout[x][0]
            run_in = np.where(mx == rl - 1, K_eff, t_m) * e_in
            mw = g.layout[w][0]
            run_k = np.where(mw == len(Dk) - 1, co_c, K_eff) * e_k
            n_co_tiles = nt_dim[:, r - 1]
        in_bytes = in_elems * e_in
        k_bytes = k_elems * e_k
        acc = tvol * 4.0
        out_b = tvol * e_out
        W1 = in_bytes + k_bytes + acc + out_b + epi_b
        W2 = 2.0 * (in_bytes + k_bytes + out_b + epi_b) + acc
        dbuf = W2 <= VMEM
        util_k = lane_eff(K_pack)
        util_n = lane_eff(t_f)
        peak = PEAK / (3.0 if (e_in >= 4 or e_k >= 4) else 1.0)
        steps = n_tiles * n_k
        flops = 2.0 * steps * tvol * K_pack
        comp = flops / (peak * np.maximum(util_k * util_n, 0.005))
        dma_in = steps * in_bytes / bw_eff(run_in)
        dma_k = np.where(n_k <= 1.0, n_co_tiles * k_bytes, steps * k_bytes) / bw_eff(run_k)
        dma = dma_in + dma_k + n_tiles * (out_b / bw_eff(run_out) + epi_b / BW)
        vpu = n_tiles * tvol * max(n_ops, 1) / VPU
        first = (in_bytes + k_bytes) / BW
        T = np.where(dbuf,
                     np.maximum(np.maximum(comp, dma), vpu) + 0.1 * np.minimum(comp, dma) + first,
                     comp + dma + vpu)
        T = T + steps * TILE_STEP + TILE_LAUNCH
        est = (steps * TILE_STEP + (steps * (in_bytes + k_bytes) + n_tiles * out_b) / BW
               + flops / (peak * util_k))
        return T, W1, W2, tvol, n_k, est

    # ---- no contraction: reduce / transpose / elementwise kernels
    out_b = tvol * e_out
    in_b = np.zeros(C)
    xlu = np.zeros(C)
    run_in = run_out
    vpu_f = np.ones(C)
    R = 1.0
    if red is not None:
        x = g.operands[red][0]
        Din = g.dims[x]
        rk = len(Din) - r
        reddims = [int(v) for v in g.nf[red, 31:31 + max(rk, 0)]]
        kept = [d for d in range(len(Din)) if d not in reddims]
        R = float(np.prod([Din[d] for d in reddims])) if reddims else 1.0
        in_b = tvol * R * g.ebytes[x]
        mx = g.layout[x][0]
        if mx in reddims:
            run_in = np.full(C, Din[mx] * g.ebytes[x])
            vpu_f = np.full(C, 1.4)
        elif mx in kept and len(kept) == r:
            j = kept.index(mx)
            run_in = np.minimum(t[:, j], od[j]) * g.ebytes[x]
    elif tr is not None:
        x = g.operands[tr][0]
        perm = [int(v) for v in g.nf[tr, 31:31 + r]]
        if sorted(perm) != list(range(r)):
            perm = list(range(r))
        mx = g.layout[x][0]
        j = perm.index(mx)
        run_in = np.minimum(t[:, j], od[j]) * g.ebytes[x]
        in_b = tvol * g.ebytes[x]
        if perm[ol[0]] != mx:
            xlu = tvol / XLU
    W1 = in_b + out_b + epi_b
    W2 = 2.0 * W1
    dbuf = W2 <= VMEM
    dma = n_tiles * (in_b / bw_eff(run_in) + out_b / bw_eff(run_out) + epi_b / BW)
    vpu = n_tiles * tvol * (max(n_ops, 1) + R) / VPU * vpu_f
    xl = n_tiles * xlu
    T = np.where(dbuf, np.maximum(np.maximum(dma, vpu), xl) + 0.1 * np.minimum(dma, vpu),
                 dma + vpu + xl)
    T = T + n_tiles * TILE_STEP + TILE_LAUNCH
    est = n_tiles * TILE_STEP + n_tiles * (in_b + out_b + epi_b) / BW
    return T, W1, W2, tvol, np.ones(C), est


def tile_law(nf, op, ei, cf):
    return tile_analyze(nf, op, ei, cf)[0]


# ============================================================================
# HLO graph builder + featurizer
# ============================================================================
class Comp:
    def __init__(self, kind):
        self.kind = kind         # 'reducer', 'while', 'fused', 'main'
        self.nodes = []


class Builder:
    def __init__(self):
        self.comps = []

    def comp(self, kind):
        c = Comp(kind)
        self.comps.append(c)
        return len(self.comps) - 1

    def add(self, ci, opname, dims, dt='f32', ops=(), **attr):
        nd = dict(op=OP[opname] if isinstance(opname, str) else int(opname),
                  dims=tuple(int(x) for x in dims), dt=dt,
                  ops=[(ci, o) if isinstance(o, int) else o for o in ops], attr=attr)
        self.comps[ci].nodes.append(nd)
        return len(self.comps[ci].nodes) - 1

    def set_root(self, ci, li):
        self.comps[ci].root = li

    def finalize(self, order):
        """order: list of comp ids in output order.  Returns arrays."""
        off = {}
        pos = 0
        for ci in order:
            off[ci] = pos
            pos += len(self.comps[ci].nodes)
        n = pos
        nf = np.zeros((n, 140), dtype=np.float32)
        opc = np.zeros(n, dtype=np.uint8)
        edges = []
        splits = [0]
        for ci in order:
            c = self.comps[ci]
            root = getattr(c, 'root', len(c.nodes) - 1)
            for li, nd in enumerate(c.nodes):
                gi = off[ci] + li
                opc[gi] = nd['op']
                nf[gi] = featurize(nd, li == root)
                for (cj, lj) in nd['ops']:
                    edges.append((gi, off[cj] + lj))
                for cj in nd['attr'].get('calls', []):
                    cr = getattr(self.comps[cj], 'root', len(self.comps[cj].nodes) - 1)
                    edges.append((gi, off[cj] + cr))
            if c.kind == 'while':
                splits.append(off[ci] + len(c.nodes))
        splits.append(n)
        ei = np.array(edges, dtype=np.int64).reshape(-1, 2)
        return nf, opc, ei, np.array(sorted(set(splits)), dtype=np.int64).reshape(1, -1), off


def _seq(out, vals, k, with_agg=True, empty_prod=1.0):
    vals = [float(v) for v in vals]
    for i in range(k):
        out.append(vals[i] if i < len(vals) else 0.0)
    if with_agg:
        out.append(float(sum(vals)))
        out.append(float(math.prod(vals)) if vals else empty_prod)


def featurize(nd, is_root):
    a = nd['attr']
    dims = nd['dims']
    dt = nd['dt']
    f = [1.0 if is_root else 0.0, 0.0]
    oh = [0.0] * 19
    oh[DTYPES.index(dt)] = 1.0
    f += oh
    _seq(f, dims, 6)
    f.append(float(a.get('tuple_size', 0)))
    f.append(float(a.get('param', 0)))
    _seq(f, a.get('dimensions', []), 6, with_agg=False)
    win = a.get('window')  # list of dicts per spatial dim
    wd = win or []
    for key, dflt in (('size', 1), ('stride', 1), ('pad_lo', 0), ('pad_hi', 0), ('wdil', 1),
                      ('bdil', 1)):
        _seq(f, [w.get(key, dflt) for w in wd], 6)
    rev = [1.0 if w.get('rev', False) else 0.0 for w in wd]
    for i in range(6):
        f.append(rev[i] if i < len(rev) else 0.0)
    f.append(float(sum(rev)))
    f.append(float(len(rev) - sum(rev)))
    cd = a.get('conv')
    if cd:
        f.append(float(cd['in_b']))
        f.append(float(cd['in_f']))
        _seq(f, cd['in_sp'], 4, with_agg=False)
        f.append(float(cd['k_if']))
        f.append(float(cd['k_of']))
        _seq(f, cd['k_sp'], 4, with_agg=False)
        f.append(float(cd['o_b']))
        f.append(float(cd['o_f']))
        f.append(float(a.get('fgc', 1)))
        f.append(1.0)
    else:
        f += [0.0] * 14
        f += [0.0, 0.0]
    sl = a.get('slice', [])
    _seq(f, [s[0] for s in sl], 2)
    _seq(f, [s[1] for s in sl], 2)
    _seq(f, [s[2] for s in sl], 2)
    _seq(f, a.get('dyn_sizes', []), 2)
    pc = a.get('pad', [])
    _seq(f, [p[0] for p in pc], 2)
    _seq(f, [p[1] for p in pc], 2)
    f.append(1.0 if a.get('stable', False) else 0.0)
    lay = a.get('layout')
    if lay is None:
        lay = list(range(len(dims) - 1, -1, -1))
    if dt == 'tuple':
        lay = []
    _seq(f, lay, 6, with_agg=False)
    assert len(f) == 140, len(f)
    return np.array(f, dtype=np.float32)


# ============================================================================
# Layout graph samplers
# ============================================================================
class LG:
    """helper around Builder for the main computation of a layout program."""

    def __init__(self, rng):
        self.b = Builder()
        self.rng = rng
        self.red_comps = []
        self.while_comps = []
        self.main = None
        self.nparam = 0
        self.outputs = []
        self.n_anchor = 0

    def start(self):
        self.main = self.b.comp('main')

    def add(self, opname, dims, dt='f32', ops=(), **attr):
        if (OP[opname] if isinstance(opname, str) else opname) in ANCHOR_OPS:
            self.n_anchor += 1
        return self.b.add(self.main, opname, dims, dt, ops, **attr)

    def count(self):
        return len(self.b.comps[self.main].nodes) + sum(len(self.b.comps[c].nodes)
                                                       for c in self.red_comps + self.while_comps)

    def param(self, dims, dt='f32'):
        p = self.add('parameter', dims, dt, param=self.nparam)
        self.nparam += 1
        return p

    def reducer(self, kind='add', dt='f32'):
        ci = self.b.comp('reducer')
        p0 = self.b.add(ci, 'parameter', (), dt, param=0)
        p1 = self.b.add(ci, 'parameter', (), dt, param=1)
        self.b.add(ci, kind, (), dt, [p0, p1])
        self.red_comps.append(ci)
        return ci

    def const(self, dt='f32'):
        return self.add('constant', (), dt)

    def bcast(self, x, dims, dt, bdims):
        return self.add('broadcast', dims, dt, [x], dimensions=bdims)

    def scalar_bcast(self, dims, dt='f32'):
        return self.bcast(self.const(dt), dims, dt, [])

    def reduce(self, x, in_dims, red, dt='f32', kind='add'):
        out = tuple(d for i, d in enumerate(in_dims) if i not in red)
        rc = self.reducer(kind, dt)
        return self.add('reduce', out, dt, [x, self.const(dt)], dimensions=list(red),
                        calls=[rc]), out

    def all_reduce(self, x, dims, dt='f32'):
        rc = self.reducer('add', dt)
        return self.add('all_reduce', dims, dt, [x], calls=[rc])

    def while_loop(self):
        """small counter loop: cond (4 nodes) + body (8-24 nodes)."""
        rng = self.rng
        cond = self.b.comp('while')
        p = self.b.add(cond, 'parameter', (), 'tuple', param=0, tuple_size=3)
        gte = self.b.add(cond, 'get_tuple_element', (), 's32', [p])
        c = self.b.add(cond, 'constant', (), 's32')
        self.b.add(cond, 'compare', (), 'pred', [gte, c])
        body = self.b.comp('while')
        p = self.b.add(body, 'parameter', (), 'tuple', param=0, tuple_size=3)
        i = self.b.add(body, 'get_tuple_element', (), 's32', [p])
        one = self.b.add(body, 'constant', (), 's32')
        i2 = self.b.add(body, 'add', (), 's32', [i, one])
        buf = self.b.add(body, 'get_tuple_element', (64,), 'f32', [p])
        acc = self.b.add(body, 'get_tuple_element', (), 'f32', [p])
        cur = buf
        for _ in range(int(rng.integers(1, 8))):
            ds = self.b.add(body, 'dynamic_slice', (1,), 'f32', [cur, i], dyn_sizes=[1])
            rs = self.b.add(body, 'reshape', (), 'f32', [ds])
            acc = self.b.add(body, 'add', (), 'f32', [acc, rs])
        t = self.b.add(body, 'tuple', (), 'tuple', [i2, buf, acc], tuple_size=3)
        self.while_comps += [cond, body]
        init_i = self.const('s32')
        init_b = self.param((64,))
        init_a = self.const('f32')
        tup = self.add('tuple', (), 'tuple', [init_i, init_b, init_a], tuple_size=3)
        w = self.add('while_', (), 'tuple', [tup], calls=[cond, body], tuple_size=3)
        out = self.add('get_tuple_element', (), 'f32', [w])
        self.outputs.append(out)

    def finish(self):
        root = self.add('tuple', (), 'tuple', list(self.outputs), tuple_size=len(self.outputs))
        self.b.set_root(self.main, root)
        return self

    def sizes(self):
        """(node count, configurable node count) without featurizing."""
        n = 0
        nc = 0
        for ci in self.red_comps + self.while_comps + [self.main]:
            for nd in self.b.comps[ci].nodes:
                n += 1
                nc += nd['op'] in ANCHOR_OPS
        return n, nc

    def arrays(self):
        order = self.red_comps + self.while_comps + [self.main]
        nf, opc, ei, splits, off = self.b.finalize(order)
        # node_splits: 0, the end of each while computation, n
        return nf, opc, ei, splits


def conv_attrs(nsp, ks, stride, pad, rev=False, bdil=1, wsize=None):
    win = []
    for s in range(nsp):
        win.append(dict(size=(wsize[s] if wsize else ks), stride=stride, pad_lo=pad, pad_hi=pad,
                        wdil=1, bdil=bdil, rev=rev))
    return win


def build_convnet(rng, target_anchor, max_nodes, training):
    """ResNet / VGG / 3-D U-Net flavoured training or inference step."""
    g = LG(rng)
    g.start()
    three_d = rng.random() < 0.25
    nsp = 3 if three_d else 2
    r = nsp + 2
    B = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128] if not three_d else [1, 2, 4]))
    if three_d:
        H = int(rng.choice([24, 32, 48, 64, 96]))
    else:
        H = int(rng.choice([28, 32, 56, 64, 112, 128, 224]))
    while B * H ** nsp > 2 ** 21:          # keep one step under about a second
        if B > 1:
            B //= 2
        else:
            H //= 2
    C = int(rng.choice([1, 3, 4]))
    act_dt = 'bf16' if rng.random() < 0.75 else 'f32'
    bn = rng.random() < 0.6
    residual = rng.random() < 0.6
    x = g.param((B,) + (H,) * nsp + (C,))
    if act_dt != 'f32':
        x = g.add('convert', (B,) + (H,) * nsp + (C,), act_dt, [x])
    cur = x
    cur_shape = (B,) + (H,) * nsp + (C,)
    width = int(rng.choice([16, 32, 64] if three_d else [32, 64, 96, 128]))
    saved = []          # (input, output, weight, weight param, shape_in, shape_out) for bwd
    skip = None
    layer = 0
    per_layer = 3 if training else 1
    while True:
        if g.n_anchor + per_layer + 3 > target_anchor or g.count() > max_nodes * 0.8:
            break
        Ci = cur_shape[-1]
        down = (layer > 0 and rng.random() < 0.25 and cur_shape[1] >= 8)
        if layer > 0 and down:
            width = min(width * 2, 1024 if not three_d else 256)
        Co = width if layer > 0 else width
        ks = int(rng.choice([1, 3, 3, 3, 5] if not three_d else [1, 3, 3]))
        if layer == 0 and not three_d and rng.random() < 0.5:
            ks = 7
        stride = 2 if down else 1
        Hs = cur_shape[1:1 + nsp]
        Ho = tuple(int(math.ceil(h / stride)) for h in Hs)
        wshape = (ks,) * nsp + (Ci, Co)
        wp = g.param(wshape)
        w = wp
        if act_dt != 'f32':
            w = g.add('convert', wshape, act_dt, [wp])
        oshape = (B,) + Ho + (Co,)
        cd = dict(in_b=0, in_f=r - 1, in_sp=list(range(1, 1 + nsp)), k_if=nsp, k_of=nsp + 1,
                  k_sp=list(range(nsp)), o_b=0, o_f=r - 1)
        y = g.add('convolution', oshape, act_dt, [cur, w], conv=cd,
                  window=conv_attrs(nsp, ks, stride, ks // 2))
        # epilogue (elementwise region + reductions)
        if bn:
            yf = g.add('convert', oshape, 'f32', [y]) if act_dt != 'f32' else y
            s1, vshape = g.reduce(yf, oshape, list(range(r - 1)))
            mean = g.add('multiply', vshape, 'f32', [s1, g.bcast(g.const(), vshape, 'f32', [])])
            mb = g.bcast(mean, oshape, 'f32', [r - 1])
            yc = g.add('subtract', oshape, 'f32', [yf, mb])
            sq = g.add('multiply', oshape, 'f32', [yc, yc])
            s2, _ = g.reduce(sq, oshape, list(range(r - 1)))
            var = g.add('multiply', vshape, 'f32', [s2, g.bcast(g.const(), vshape, 'f32', [])])
            rs = g.add('rsqrt', vshape, 'f32', [g.add('add', vshape, 'f32',
                                                       [var, g.bcast(g.const(), vshape, 'f32', [])])])
            gam = g.param(vshape)
            sc = g.add('multiply', vshape, 'f32', [rs, gam])
            yn = g.add('multiply', oshape, 'f32', [yc, g.bcast(sc, oshape, 'f32', [r - 1])])
            bet = g.param(vshape)
            z = g.add('add', oshape, 'f32', [yn, g.bcast(bet, oshape, 'f32', [r - 1])])
        else:
            bias = g.param((Co,))
            z = g.add('add', oshape, act_dt, [y, g.bcast(bias, oshape, act_dt, [r - 1])])
        if residual and skip is not None and g.b.comps[g.main].nodes[skip]['dims'] == oshape:
            z = g.add('add', oshape, g.b.comps[g.main].nodes[z]['dt'], [z, skip])
        zdt = g.b.comps[g.main].nodes[z]['dt']
        a = g.add('maximum', oshape, zdt, [z, g.scalar_bcast(oshape, zdt)])
        if zdt != act_dt:
            a = g.add('convert', oshape, act_dt, [a])
        saved.append((cur, a, w, wp, cur_shape, oshape, ks, stride, wshape))
        if rng.random() < 0.35:
            skip = a
        cur, cur_shape = a, oshape
        if rng.random() < 0.15 and cur_shape[1] >= 4 and not training:
            ps = (B,) + tuple(h // 2 for h in cur_shape[1:1 + nsp]) + (cur_shape[-1],)
            rc = g.reducer('maximum', act_dt)
            win = [dict(size=1, stride=1)] + [dict(size=2, stride=2)] * nsp + [dict(size=1, stride=1)]
            cur = g.add('reduce_window', ps, act_dt, [cur, g.const(act_dt)], window=win, calls=[rc])
            cur_shape = ps
        layer += 1
    # head: global pool (reduce), reshape, dot, softmax-ish loss
    pooled, pshape = g.reduce(cur, cur_shape, list(range(1, 1 + nsp)), act_dt)
    p4 = g.add('reshape', (B,) + (1,) * nsp + (cur_shape[-1],), act_dt, [pooled])
    flat = g.add('reshape', (B, cur_shape[-1]), act_dt, [p4])
    ncls = int(rng.choice([10, 100, 1000]))
    wd = g.param((cur_shape[-1], ncls))
    wdc = g.add('convert', (cur_shape[-1], ncls), act_dt, [wd]) if act_dt != 'f32' else wd
    logits = g.add('dot', (B, ncls), act_dt, [flat, wdc])
    lf = g.add('convert', (B, ncls), 'f32', [logits]) if act_dt != 'f32' else logits
    mx, _ = g.reduce(lf, (B, ncls), [1], 'f32', 'maximum')
    sh = g.add('subtract', (B, ncls), 'f32', [lf, g.bcast(mx, (B, ncls), 'f32', [0])])
    ex = g.add('exponential', (B, ncls), 'f32', [sh])
    se, _ = g.reduce(ex, (B, ncls), [1], 'f32')
    prob = g.add('divide', (B, ncls), 'f32', [ex, g.bcast(se, (B, ncls), 'f32', [0])])
    if not training:
        g.outputs.append(prob)
    else:
        lab = g.param((B, ncls))
        dlog = g.add('subtract', (B, ncls), 'f32', [prob, lab])
        loss, _ = g.reduce(g.add('multiply', (B, ncls), 'f32', [dlog, dlog]), (B, ncls), [0, 1])
        g.outputs.append(loss)
        dl = g.add('convert', (B, ncls), act_dt, [dlog]) if act_dt != 'f32' else dlog
        # grads of dense layer
        wT = g.add('transpose', (ncls, cur_shape[-1]), act_dt, [wdc], dimensions=[1, 0])
        dflat = g.add('dot', (B, cur_shape[-1]), act_dt, [dl, wT])
        fT = g.add('transpose', (cur_shape[-1], B), act_dt, [flat], dimensions=[1, 0])
        dwd = g.add('dot', (cur_shape[-1], ncls), act_dt, [fT, dl])
        _update(g, wd, dwd, (cur_shape[-1], ncls), act_dt)
        d4 = g.add('reshape', (B,) + (1,) * nsp + (cur_shape[-1],), act_dt, [dflat])
        dcur = g.add('broadcast', cur_shape, act_dt, [g.add('reshape', (B, cur_shape[-1]), act_dt, [d4])],
                     dimensions=[0, r - 1])
        for (xin, aout, w, wp, sin, sout, ks, stride, wshape) in reversed(saved):
            if g.count() > max_nodes - 12:
                break
            if sout != cur_shape:
                break
            # relu grad
            msk = g.add('compare', sout, 'pred', [aout, g.scalar_bcast(sout, act_dt)])
            dz = g.add('select', sout, act_dt, [msk, dcur, g.scalar_bcast(sout, act_dt)])
            # weight gradient conv: output has the kernel's shape
            cdw = dict(in_b=r - 1, in_f=0, in_sp=list(range(1, 1 + nsp)), k_if=0, k_of=r - 1,
                       k_sp=list(range(1, 1 + nsp)), o_b=nsp, o_f=nsp + 1)
            dw = g.add('convolution', wshape, act_dt, [xin, dz], conv=cdw,
                       window=conv_attrs(nsp, ks, 1, ks // 2, wsize=list(sout[1:1 + nsp])))
            dwf = g.add('convert', wshape, 'f32', [dw]) if act_dt != 'f32' else dw
            _update(g, wp, dwf, wshape, 'f32', conv=True)
            # input gradient conv (uses reversed weights)
            wr = g.add('reverse', wshape, act_dt, [w], dimensions=list(range(nsp)))
            cdi = dict(in_b=0, in_f=r - 1, in_sp=list(range(1, 1 + nsp)), k_if=nsp + 1, k_of=nsp,
                       k_sp=list(range(nsp)), o_b=0, o_f=r - 1)
            dcur = g.add('convolution', sin, act_dt, [dz, wr], conv=cdi,
                         window=conv_attrs(nsp, ks, 1, ks // 2, rev=True, bdil=stride))
            cur_shape = sin
    n_while = int(rng.integers(1, 4))
    for _ in range(n_while):
        g.while_loop()
    return g.finish()


def _update(g, wp, grad, shape, dt, conv=False):
    gr = g.all_reduce(grad, shape, dt)
    if dt != 'f32':
        gr = g.add('convert', shape, 'f32', [gr])
    lr = g.scalar_bcast(shape, 'f32')
    step = g.add('multiply', shape, 'f32', [gr, lr])
    new = g.add('subtract', shape, 'f32', [wp, step])
    g.outputs.append(new)


def build_transformer(rng, target_anchor, max_nodes, training):
    """BERT-like encoder blocks (attention / feed-forward), optional backward."""
    g = LG(rng)
    g.start()
    B = int(rng.choice([1, 4, 8, 16, 32, 64]))
    S = int(rng.choice([64, 128, 256, 384, 512]))
    H = int(rng.choice([128, 256, 512, 768, 1024]))
    A = int(rng.choice([h for h in (2, 4, 8, 12, 16) if H % h == 0 and H // h >= 32]))
    dh = H // A
    FF = H * int(rng.choice([2, 4]))
    V = int(rng.choice([8192, 30522, 32000]))
    dt = 'bf16' if rng.random() < 0.7 else 'f32'
    ids = g.param((B, S), 's32')
    emb = g.param((V, H))
    x = g.add('gather', (B, S, H), 'f32', [emb, ids])
    pos = g.param((S, H))
    x = g.add('add', (B, S, H), 'f32', [x, g.bcast(pos, (B, S, H), 'f32', [1, 2])])
    x = _layernorm(g, x, (B, S, H))
    grads = []

    def dense(inp2d, din, dout, name_dt):
        w = g.param((din, dout))
        wc = g.add('convert', (din, dout), name_dt, [w]) if name_dt != 'f32' else w
        y = g.add('dot', (B * S, dout), name_dt, [inp2d, wc])
        bias = g.param((dout,))
        bb = g.bcast(bias, (B * S, dout), name_dt, [1])
        y = g.add('add', (B * S, dout), name_dt, [y, bb])
        grads.append((inp2d, w, wc, din, dout))
        return y

    def attention(x):
        xc = g.add('convert', (B, S, H), dt, [x]) if dt != 'f32' else x
        x2 = g.add('reshape', (B * S, H), dt, [xc])
        heads = []
        for kind in ('q', 'k', 'v'):
            y = dense(x2, H, H, dt)
            y4 = g.add('reshape', (B, S, A, dh), dt, [y])
            if kind == 'k':
                yt = g.add('transpose', (B, A, dh, S), dt, [y4], dimensions=[0, 2, 3, 1])
            else:
                yt = g.add('transpose', (B, A, S, dh), dt, [y4], dimensions=[0, 2, 1, 3])
            heads.append(yt)
        q, k, v = heads
        sc = g.add('dot', (B, A, S, S), dt, [q, k])
        scf = g.add('convert', (B, A, S, S), 'f32', [sc]) if dt != 'f32' else sc
        scf = g.add('multiply', (B, A, S, S), 'f32', [scf, g.scalar_bcast((B, A, S, S))])
        if rng.random() < 0.6:
            mask = g.param((B, S))
            scf = g.add('add', (B, A, S, S), 'f32', [scf, g.bcast(mask, (B, A, S, S), 'f32', [0, 3])])
        mx, _ = g.reduce(scf, (B, A, S, S), [3], 'f32', 'maximum')
        sh = g.add('subtract', (B, A, S, S), 'f32', [scf, g.bcast(mx, (B, A, S, S), 'f32', [0, 1, 2])])
        ex = g.add('exponential', (B, A, S, S), 'f32', [sh])
        se, _ = g.reduce(ex, (B, A, S, S), [3], 'f32')
        pr = g.add('divide', (B, A, S, S), 'f32', [ex, g.bcast(se, (B, A, S, S), 'f32', [0, 1, 2])])
        prc = g.add('convert', (B, A, S, S), dt, [pr]) if dt != 'f32' else pr
        ctx = g.add('dot', (B, A, S, dh), dt, [prc, v])
        ct = g.add('transpose', (B, S, A, dh), dt, [ctx], dimensions=[0, 2, 1, 3])
        c2 = g.add('reshape', (B * S, H), dt, [ct])
        o = dense(c2, H, H, dt)
        o3 = g.add('reshape', (B, S, H), dt, [o])
        o3f = g.add('convert', (B, S, H), 'f32', [o3]) if dt != 'f32' else o3
        x = g.add('add', (B, S, H), 'f32', [x, o3f])
        return _layernorm(g, x, (B, S, H))

    def feedforward(x):
        xc = g.add('convert', (B, S, H), dt, [x]) if dt != 'f32' else x
        h2 = g.add('reshape', (B * S, H), dt, [xc])
        f1 = dense(h2, H, FF, dt)
        sh2 = (B * S, FF)
        cube = g.add('multiply', sh2, dt, [f1, g.add('multiply', sh2, dt, [f1, f1])])
        inner = g.add('add', sh2, dt, [f1, g.add('multiply', sh2, dt, [cube, g.scalar_bcast(sh2, dt)])])
        th = g.add('tanh', sh2, dt, [g.add('multiply', sh2, dt, [inner, g.scalar_bcast(sh2, dt)])])
        ge = g.add('multiply', sh2, dt, [f1, g.add('add', sh2, dt, [th, g.scalar_bcast(sh2, dt)])])
        f2 = dense(ge, FF, H, dt)
        f3 = g.add('reshape', (B, S, H), dt, [f2])
        f3f = g.add('convert', (B, S, H), 'f32', [f3]) if dt != 'f32' else f3
        x = g.add('add', (B, S, H), 'f32', [x, f3f])
        return _layernorm(g, x, (B, S, H))

    # anchors: attention 15 (+8 bwd), feed-forward 4 (+4 bwd), head 2 (+0)
    bwd = 1 if training else 0
    budget = target_anchor - 2
    blocks = 0
    while True:
        nxt = 'attn' if blocks % 2 == 0 else 'ff'
        cost = (15 + 8 * bwd) if nxt == 'attn' else (4 + 4 * bwd)
        if budget < 15 + 8 * bwd and blocks % 2 == 0:
            nxt, cost = 'ff', 4 + 4 * bwd
        if cost > budget or g.count() > max_nodes * 0.75:
            if blocks > 0:
                break
        x = attention(x) if nxt == 'attn' else feedforward(x)
        budget -= cost
        blocks += 1
        if blocks >= 24:
            break
    # head: first token pooling -> classifier
    first = g.add('slice', (B, 1, H), 'f32', [x], slice=[(0, 1, B), (0, 1, 1), (0, 1, H)])
    pooled = g.add('reshape', (B, H), 'f32', [first])
    ncls = int(rng.choice([2, 3, 1000]))
    wcl = g.param((H, ncls))
    lg_ = g.add('dot', (B, ncls), 'f32', [pooled, wcl])
    mxl, _ = g.reduce(lg_, (B, ncls), [1], 'f32', 'maximum')
    shl = g.add('subtract', (B, ncls), 'f32', [lg_, g.bcast(mxl, (B, ncls), 'f32', [0])])
    g.outputs.append(shl)
    if training:
        dY = g.param((B * S, H))
        dYc = g.add('convert', (B * S, H), dt, [dY]) if dt != 'f32' else dY
        dYf = g.param((B * S, FF))
        dYfc = g.add('convert', (B * S, FF), dt, [dYf]) if dt != 'f32' else dYf
        for (inp, w, wc, din, dout) in reversed(grads):
            if g.count() > max_nodes - 12:
                break
            dy = dYc if dout == H else dYfc
            # dW = X^T dY ; dX = dY W^T
            xT = g.add('transpose', (din, B * S), dt, [inp], dimensions=[1, 0])
            dW = g.add('dot', (din, dout), dt, [xT, dy])
            dWf = g.add('convert', (din, dout), 'f32', [dW]) if dt != 'f32' else dW
            _update(g, w, dWf, (din, dout), 'f32')
            wT = g.add('transpose', (dout, din), dt, [wc], dimensions=[1, 0])
            dX = g.add('dot', (B * S, din), dt, [dy, wT])
            if din == H:
                dYc = g.add('add', (B * S, H), dt, [dX, dYc])
            else:
                dYfc = g.add('add', (B * S, FF), dt, [dX, dYfc])
        g.outputs.append(dYc)
        g.outputs.append(dYfc)
    for _ in range(int(rng.integers(1, 3))):
        g.while_loop()
    return g.finish()


def _layernorm(g, x, shape):
    r = len(shape)
    red = [r - 1]
    s, vs = g.reduce(x, shape, red)
    mean = g.add('multiply', vs, 'f32', [s, g.bcast(g.const(), vs, 'f32', [])])
    xc = g.add('subtract', shape, 'f32', [x, g.bcast(mean, shape, 'f32', list(range(r - 1)))])
    sq = g.add('multiply', shape, 'f32', [xc, xc])
    s2, _ = g.reduce(sq, shape, red)
    rs = g.add('rsqrt', vs, 'f32', [g.add('add', vs, 'f32', [s2, g.bcast(g.const(), vs, 'f32', [])])])
    y = g.add('multiply', shape, 'f32', [xc, g.bcast(rs, shape, 'f32', list(range(r - 1)))])
    gam = g.param((shape[-1],))
    y = g.add('multiply', shape, 'f32', [y, g.bcast(gam, shape, 'f32', [r - 1])])
    bet = g.param((shape[-1],))
    return g.add('add', shape, 'f32', [y, g.bcast(bet, shape, 'f32', [r - 1])])


def sample_layout_graph(rng, source, nodes_rng, nc_rng):
    lo_n, hi_n = nodes_rng
    lo_c, hi_c = nc_rng
    best = None
    for attempt in range(80):
        target = int(rng.integers(lo_c, hi_c + 1))
        training = rng.random() < 0.6
        sub = np.random.default_rng(rng.integers(1 << 62))
        if source == 'xla':
            lg = build_convnet(sub, target, hi_n, training)
        else:
            lg = build_transformer(sub, target, hi_n, training)
        n, nc = lg.sizes()
        if lo_n <= n <= hi_n and lo_c <= nc <= hi_c:
            best = lg
            break
        # keep the closest one as a fallback
        bad = max(0, lo_n - n) / lo_n + max(0, n - hi_n) / hi_n + \
            max(0, lo_c - nc) / lo_c + max(0, nc - hi_c) / hi_c
        if best is None or bad < best[0]:
            best = (bad, lg)
    if isinstance(best, tuple):
        best = best[1]
    nf, opc, ei, splits = best.arrays()
    ids = np.nonzero(np.isin(opc, list(ANCHOR_OPS)))[0]
    return nf, opc, ei, splits, ids.astype(np.int64)


# ============================================================================
# Layout config samplers
# ============================================================================
class NodeInfo:
    pass


def node_infos(nf, opc, ei, ids):
    g = parse_graph(nf, opc, ei)
    infos = []
    for nid in ids:
        nid = int(nid)
        ni = NodeInfo()
        ni.op = int(opc[nid])
        ni.r_out = g.rank[nid]
        ops_ = g.operands[nid]
        ni.r_in = g.rank[ops_[0]] if ops_ else 0
        ni.r_k = g.rank[ops_[1]] if (ni.op == 26 and len(ops_) > 1) else 0
        ni.dl_out = list(g.layout[nid])
        ni.dl_in = list(g.layout[ops_[0]]) if ops_ else []
        ni.dl_k = list(g.layout[ops_[1]]) if ni.r_k else []
        ni.d_out, ni.e_out = g.dims[nid], g.ebytes[nid]
        ni.d_in = g.dims[ops_[0]] if ops_ else ()
        ni.e_in = g.ebytes[ops_[0]] if ops_ else 4.0
        ni.d_k = g.dims[ops_[1]] if ni.r_k else ()
        ni.e_k = g.ebytes[ops_[1]] if ni.r_k else 4.0
        f = nf[nid]
        if ni.op == 26:
            ni.roles_out = (int(f[106]), int(f[105]))
            ni.roles_in = (int(f[94]), int(f[93]))
            ni.roles_k = (int(f[100]), int(f[99]))
        elif ni.op == 34:
            ni.roles_out = (ni.r_out - 1, ni.r_out - 2)
            ni.roles_in = (ni.r_in - 1, ni.r_in - 2)
            ni.roles_k = None
        else:
            ni.roles_out = (ni.r_out - 1, 0) if ni.r_out >= 2 else None
            ni.roles_in = (ni.r_in - 1, 0) if ni.r_in >= 2 else None
            ni.roles_k = None
        infos.append(ni)
    return infos


def plausible_pairs(r, dl, roles):
    pairs = []
    if r >= 2:
        pairs.append((dl[0], dl[1]))
        pairs.append((dl[1], dl[0]))
        if roles:
            a, b = roles
            if a != b and a < r and b < r:
                pairs.append((a, b))
                pairs.append((b, a))
        pairs.append((r - 1, 0))
        pairs.append((0, r - 1))
    out = []
    for p in pairs:
        if p[0] != p[1] and p not in out:
            out.append(p)
    return out


def random_blocks(rng, c, r, dl, roles, full_prob=0.45, none_prob=0.08, plaus=0.6):
    """c random layout blocks (c, 6) for a tensor of rank r (vectorised)."""
    blk = -np.ones((c, 6), dtype=np.int8)
    if r == 0 or r > 5:
        return blk
    if r == 1:
        blk[:, 0] = 0
        blk[rng.random(c) < none_prob, 0] = -1
        return blk
    P = PERMS[r]
    pp = np.array(plausible_pairs(r, dl, roles), dtype=np.int64)
    q = P[rng.integers(len(P), size=c)]                 # random full perms
    use_pl = rng.random(c) < plaus
    pl = pp[rng.integers(len(pp), size=c)]
    m0 = np.where(use_pl, pl[:, 0], q[:, 0])
    m1 = np.where(use_pl, pl[:, 1], q[:, 1])
    # order: m0, m1, then the rest in the random order of q
    key = np.argsort(q, axis=1).astype(np.float64)       # position of each dim in q
    rows = np.arange(c)
    key[rows, m0] = -2.0
    key[rows, m1] = -1.0
    seq = np.argsort(key, axis=1, kind='stable')
    full = rng.random(c) < full_prob
    blk[:, :r] = seq
    part = ~full
    if r > 2:
        blk[part, 2:] = -1
    none = rng.random(c) < none_prob
    blk[none] = -1
    return blk


def sample_random_configs(rng, infos, c):
    nc = len(infos)
    arr = -np.ones((c, nc, 18), dtype=np.int8)
    for j, ni in enumerate(infos):
        reshape_like = ni.op in (75, 98)
        fp = 0.75 if reshape_like else 0.4
        arr[:, j, 0:6] = random_blocks(rng, c, ni.r_out, ni.dl_out, ni.roles_out, full_prob=fp)
        inb = random_blocks(rng, c, ni.r_in, ni.dl_in, ni.roles_in, full_prob=fp, none_prob=0.15)
        if ni.op == 26:
            inb[rng.random(c) < 0.15] = -1
        arr[:, j, 6:12] = inb
        if ni.op == 26:
            arr[:, j, 12:18] = random_blocks(rng, c, ni.r_k, ni.dl_k, ni.roles_k, full_prob=0.3,
                                             none_prob=0.1, plaus=0.8)
    return arr.astype(np.float32)


def mild_pairs(r, dl, dims, e, allow_swap, max_ratio=1.5):
    """what a compiler's own search tries: keep the lane dim and vary the
    sublane dim, or (not for convolutions) swap the two minor dims; skip
    candidates that pad much worse than the default."""
    if r < 2 or r > 5:
        return []
    tab = padded_table(dims, e)
    base = tab[perm_id(dl)]
    cands = [(dl[0], d) for d in dl[1:]]
    if allow_swap:
        cands.append((dl[1], dl[0]))
    out = []
    for m in cands:
        p, _ = fill_perm(list(m), dl)
        if tab[perm_id(p)] <= max_ratio * base:
            out.append(m)
    return out


def sample_default_configs(rng, infos, c):
    """configs as a compiler's own search would try: start at the default and
    explore a few mild single-node changes at a time."""
    nc = len(infos)
    base = -np.ones((nc, 18), dtype=np.int8)
    for j, ni in enumerate(infos):
        if ni.r_out >= 2 and rng.random() < 0.45:
            base[j, 0] = ni.dl_out[0]
            base[j, 1] = ni.dl_out[1]
        if ni.r_in >= 2 and rng.random() < 0.25:
            base[j, 6] = ni.dl_in[0]
            base[j, 7] = ni.dl_in[1]
    mild = [(mild_pairs(ni.r_out, ni.dl_out, ni.d_out, ni.e_out, ni.op != 26),
             mild_pairs(ni.r_in, ni.dl_in, ni.d_in, ni.e_in, ni.op != 26),
             mild_pairs(ni.r_k, ni.dl_k, ni.d_k, ni.e_k, False)) for ni in infos]
    out = np.empty((c, nc, 18), dtype=np.int8)
    out[0] = base
    for i in range(1, c):
        u = rng.random()
        if u < 0.12:
            out[i] = out[int(rng.integers(i))]
            continue
        lo = max(0, i - 64)
        par = out[int(rng.integers(lo, i))].copy() if rng.random() < 0.8 else base.copy()
        nm = 1 + int(rng.poisson(0.6))
        for _ in range(nm):
            j = int(rng.integers(nc))
            ni = infos[j]
            if rng.random() < 0.25:
                par[j] = base[j]
                continue
            which = rng.random()
            opts = []
            if which < 0.6 and ni.r_out >= 2:
                opts = [(0, mild[j][0])]
            elif which < 0.9 and ni.r_in >= 2:
                opts = [(6, mild[j][1])]
            elif ni.r_k >= 2:
                opts = [(12, mild[j][2])]
            for (off, pp) in opts:
                if not pp:
                    continue
                m = pp[int(rng.integers(len(pp)))]
                par[j, off:off + 6] = -1
                par[j, off], par[j, off + 1] = m
        out[i] = par
    return out.astype(np.float32)


# ============================================================================
# Tile graph sampler
# ============================================================================
def build_tile_graph(rng, n_lo, n_hi):
    """one fused kernel: returns nf, opc, ei."""
    b = Builder()
    kind = rng.choice(['conv', 'conv', 'conv', 'dot', 'dot', 'elem', 'reduce', 'transpose'])
    target_nodes = int(rng.integers(n_lo, n_hi + 1))
    red_ci = []
    fused = b.comp('fused')
    outer_params = []   # (dims, dt, layout)
    nparam = [0]

    def inner_param(dims, dt, lay=None):
        li = b.add(fused, 'parameter', dims, dt, param=nparam[0], layout=lay)
        nparam[0] += 1
        outer_params.append((dims, dt, lay))
        return li

    def desc(r):
        return list(range(r - 1, -1, -1))

    act_dt = 'bf16' if rng.random() < 0.6 else 'f32'
    cur = None
    if kind == 'conv':
        B = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
        Hh = int(rng.choice([7, 8, 12, 14, 16, 19, 24, 28, 32, 56, 64, 112]))
        Ci = int(rng.choice([3, 16, 32, 64, 128, 192, 256, 384, 512, 1024]))
        Co = int(rng.choice([32, 64, 128, 256, 384, 512, 768, 1024, 2048]))
        ks = int(rng.choice([1, 1, 3, 3, 3, 5, 7]))
        ks = min(ks, Hh)
        stride = int(rng.choice([1, 1, 1, 2]))
        Ho = int(math.ceil(Hh / stride))
        lay_act = desc(4) if rng.random() < 0.6 else [3, 0, 2, 1]
        x = inner_param((B, Hh, Hh, Ci), act_dt, lay_act)
        w = inner_param((ks, ks, Ci, Co), act_dt, desc(4))
        oshape = (B, Ho, Ho, Co)
        cd = dict(in_b=0, in_f=3, in_sp=[1, 2], k_if=2, k_of=3, k_sp=[0, 1], o_b=0, o_f=3)
        cur = b.add(fused, 'convolution', oshape, act_dt, [x, w], conv=cd,
                    window=conv_attrs(2, ks, stride, ks // 2), layout=lay_act)
        lay_out = lay_act
    elif kind == 'dot':
        batched = rng.random() < 0.3
        M = int(rng.choice([64, 128, 256, 512, 1024, 2048, 4096]))
        K = int(rng.choice([64, 128, 256, 512, 768, 1024, 2048, 4096]))
        N = int(rng.choice([64, 128, 256, 512, 768, 1024, 3072]))
        Bt = (int(rng.choice([2, 4, 8, 12, 16])),) if batched else ()
        r = len(Bt) + 2
        x = inner_param(Bt + (M, K), act_dt, desc(r))
        w = inner_param(Bt + (K, N), act_dt, desc(r))
        oshape = Bt + (M, N)
        lay_out = desc(r)
        cur = b.add(fused, 'dot', oshape, act_dt, [x, w], layout=lay_out)
    elif kind == 'reduce':
        r_in = int(rng.choice([2, 3, 4]))
        shp = tuple(int(rng.choice([2, 8, 16, 32, 64, 128, 256, 512, 1024])) for _ in range(r_in))
        red = [r_in - 1] if rng.random() < 0.5 else [int(x) for x in range(1, r_in - 1)] or [0]
        x = inner_param(shp, 'f32', desc(r_in))
        cur = x
        for _ in range(int(rng.integers(1, 4))):
            cur = b.add(fused, rng.choice(['multiply', 'add', 'exponential']), shp, 'f32', [cur])
        rc = b.comp('reducer')
        red_ci.append(rc)
        p0 = b.add(rc, 'parameter', (), 'f32', param=0)
        p1 = b.add(rc, 'parameter', (), 'f32', param=1)
        b.add(rc, 'add', (), 'f32', [p0, p1])
        oshape = tuple(d for i, d in enumerate(shp) if i not in red)
        c0 = b.add(fused, 'constant', (), 'f32')
        cur = b.add(fused, 'reduce', oshape, 'f32', [cur, c0], dimensions=red, calls=[rc])
        lay_out = desc(len(oshape))
    elif kind == 'transpose':
        r = int(rng.choice([2, 3, 4]))
        shp = tuple(int(rng.choice([8, 16, 32, 64, 128, 256, 512, 1024])) for _ in range(r))
        perm = [int(v) for v in rng.permutation(r)]
        if perm == list(range(r)):
            perm = perm[::-1]
        x = inner_param(shp, act_dt, desc(r))
        oshape = tuple(shp[p] for p in perm)
        lay_out = desc(r)
        cur = b.add(fused, 'transpose', oshape, act_dt, [x], dimensions=perm, layout=lay_out)
    else:
        r = int(rng.choice([2, 3, 4]))
        oshape = tuple(int(rng.choice([2, 4, 16, 32, 64, 128, 256, 512, 1024, 2048])) for _ in range(r))
        lay_out = desc(r) if rng.random() < 0.7 else [int(v) for v in rng.permutation(r)]
        cur = inner_param(oshape, act_dt, lay_out)
    # epilogue to reach node count
    r = len(oshape)
    while len(b.comps[fused].nodes) + len(outer_params) + 2 < target_nodes:
        u = rng.random()
        if u < 0.3:
            p = inner_param((oshape[-1],) if r else (), 'f32', None)
            bc = b.add(fused, 'broadcast', oshape, act_dt, [p], dimensions=[r - 1], layout=lay_out)
            cur = b.add(fused, rng.choice(['add', 'multiply', 'subtract']), oshape, act_dt,
                        [cur, bc], layout=lay_out)
        elif u < 0.5:
            c0 = b.add(fused, 'constant', (), act_dt)
            bc = b.add(fused, 'broadcast', oshape, act_dt, [c0], layout=lay_out)
            cur = b.add(fused, rng.choice(['maximum', 'minimum', 'multiply']), oshape, act_dt,
                        [cur, bc], layout=lay_out)
        elif u < 0.62:
            p = inner_param(oshape, act_dt, lay_out)
            cur = b.add(fused, 'add', oshape, act_dt, [cur, p], layout=lay_out)
        elif u < 0.72:
            c0 = b.add(fused, 'constant', (), act_dt)
            bc = b.add(fused, 'broadcast', oshape, act_dt, [c0], layout=lay_out)
            cm = b.add(fused, 'compare', oshape, 'pred', [cur, bc], layout=lay_out)
            cur = b.add(fused, 'select', oshape, act_dt, [cm, cur, bc], layout=lay_out)
        elif u < 0.86:
            cur = b.add(fused, rng.choice(['exponential', 'tanh', 'rsqrt', 'negate', 'logistic']),
                        oshape, act_dt, [cur], layout=lay_out)
        else:
            ndt = 'f32' if act_dt == 'bf16' else 'bf16'
            cur = b.add(fused, 'convert', oshape, ndt, [cur], layout=lay_out)
            act_dt = ndt
    b.set_root(fused, cur)
    top = b.comp('main')
    outs = []
    for i, (dims, dt, lay) in enumerate(outer_params):
        outs.append(b.add(top, 'parameter', dims, dt, param=i, layout=lay))
    root_dt = b.comps[fused].nodes[cur]['dt']
    fu = b.add(top, 'fusion', oshape, root_dt, [(fused, cur)] + [(top, o) for o in outs],
               layout=lay_out)
    b.set_root(top, fu)
    nf, opc, ei, _, _ = b.finalize(red_ci + [fused, top])
    return nf, opc, ei, kind


def tile_bound_space(nf, opc, ei):
    g = parse_graph(nf, opc, ei)
    root = g.n - 1
    od = g.dims[root]
    r = len(od)
    ol = g.layout[root]
    gran = [1] * r
    gran[ol[0]] = 128
    if r >= 2:
        gran[ol[1]] = 8
    out_max = [max(1, int(math.ceil(od[i] / gran[i]))) for i in range(r)]
    kmax = []
    for i in range(g.n):
        if g.op[i] in (26, 34):
            w = g.operands[i][1]
            Dk = g.dims[w]
            if g.op[i] == 26:
                f = g.nf[i]
                k_if, k_of = int(f[99]), int(f[100])
                for d in range(len(Dk)):
                    if d == k_if:
                        kmax.append(max(1, int(math.ceil(Dk[d] / 32))))
                    elif d == k_of:
                        kmax.append(max(1, int(math.ceil(Dk[d] / 128))))
                    else:
                        kmax.append(int(Dk[d]))
            else:
                for d in range(len(Dk)):
                    if d >= len(Dk) - 2:
                        kmax.append(max(1, int(math.ceil(Dk[d] / 128))))
                    else:
                        kmax.append(1)
            break
    return out_max, kmax


def _pick(rng, m):
    u = rng.random()
    if m <= 1:
        return 1
    if u < 0.5:
        e = int(rng.integers(0, int(math.log2(m)) + 1))
        return 2 ** e
    if u < 0.7:
        return m
    return int(rng.integers(1, m + 1))


def cfg_row(ob, kb):
    row = np.zeros(24, dtype=np.float32)
    if kb:
        row[0:len(kb)] = kb
        row[6] = sum(kb)
        row[7] = float(np.prod(kb))
    row[8:8 + len(ob)] = ob
    row[14] = sum(ob)
    row[15] = float(np.prod(ob))
    return row


def sample_tile_configs(rng, nf, opc, ei, c_target):
    out_max, kmax = tile_bound_space(nf, opc, ei)
    seen = set()
    rows = []
    tries = 0
    while len(rows) < c_target * 3 and tries < c_target * 40:
        tries += 1
        ob = [_pick(rng, m) for m in out_max]
        kb = [_pick(rng, m) for m in kmax]
        key = tuple(ob + kb)
        if key in seen:
            continue
        seen.add(key)
        rows.append(cfg_row(ob, kb))
    # the compiler's own choice (heuristic) comes from a systematic sweep
    sweep = []
    for _ in range(400):
        ob = [_pick(rng, m) for m in out_max]
        kb = list(kmax)
        if rng.random() < 0.5 and kb:
            kb = [max(1, k // int(rng.choice([1, 2, 4]))) for k in kb]
        sweep.append(cfg_row(ob, kb))
    cand = np.array(rows + sweep, dtype=np.float32)
    _, W1, W2, tvol, n_k, est = tile_analyze(nf, opc, ei, cand)
    feas = W1 <= VMEM
    nrow = len(rows)
    # compiler default: best coarse estimate among tiles that double-buffer in 3/4 of VMEM
    score = np.where(W2 <= 0.75 * VMEM, -est, -np.inf)
    if not np.isfinite(score).any():
        score = np.where(feas, -W1, -np.inf)
    if not np.isfinite(score).any():
        return None, None
    d = int(np.argmax(score))
    default = cand[d]
    pool = [i for i in range(nrow) if feas[i] and not np.array_equal(cand[i], default)]
    if len(pool) + 1 < c_target:
        return None, None
    pick = rng.choice(pool, size=c_target - 1, replace=False)
    cfg = np.concatenate([default[None, :], cand[pick]], axis=0)
    perm = rng.permutation(len(cfg))
    cfg = cfg[perm]
    dflt_idx = int(np.nonzero(perm == 0)[0][0])
    return cfg, dflt_idx


# ============================================================================
# Noise
# ============================================================================
def measure(rng, clean, sigma, spike_p, spike_scale):
    t = rng.standard_t(3, size=clean.shape)
    t = np.clip(t, -12, 12)
    m = clean * np.exp(sigma * t)
    spikes = rng.random(clean.shape) < spike_p
    m = m * np.where(spikes, 1.0 + spike_scale * (rng.pareto(1.7, size=clean.shape) + 0.2), 1.0)
    return np.maximum(np.round(m), 1).astype(np.int64)


# ============================================================================
# Naming
# ============================================================================
XLA_NAMES = ['resnet50', 'resnet_v1_101', 'resnet_v2_152', 'vgg16', 'alexnet', 'inception_v3',
             'efficientnet_b0', 'mobilenet_v2', 'unet_3d', 'mask_rcnn_backbone', 'retinanet',
             'shapemask', 'densenet121', 'mnasnet', 'spinenet49', 'unet2d_medical']
NLP_NAMES = ['bert_en_uncased_L-12_H-768_A-12', 'bert_en_cased_L-24_H-1024_A-16', 'albert_en_base',
             'electra_small', 'talking-heads_base', 'small_bert_bert_en_uncased_L-4_H-256_A-4',
             'experts_bert_pubmed', 'mobilebert_en_uncased', 'lambert_en_uncased',
             'bert_multi_cased_L-12_H-768_A-12', 'transformer_lm', 'wiki40b_lm']


def hex32(rng):
    return ''.join('%08x' % int(x) for x in rng.integers(0, 2 ** 32, size=4, dtype=np.uint64))


def fingerprint(rng):
    v = int(rng.integers(-(2 ** 62), 2 ** 62))
    return ('-' if v < 0 else '') + format(abs(v), 'x')


def stem_for(rng, coll, split, i):
    if split == 'test':
        return hex32(rng)
    if coll == 'tile':
        nm = XLA_NAMES[int(rng.integers(len(XLA_NAMES)))]
        return '%s_%s_batch_%d_%s' % (nm, rng.choice(['train', 'inference']),
                                      int(rng.choice([1, 8, 16, 32, 64, 128])), fingerprint(rng))
    if coll == 'xla':
        nm = XLA_NAMES[int(rng.integers(len(XLA_NAMES)))]
        return '%s_batch_%d_%s_%d' % (nm, int(rng.choice([1, 4, 8, 16, 32, 64, 128])),
                                      rng.choice(['train', 'inference', 'eval']), i)
    nm = NLP_NAMES[int(rng.integers(len(NLP_NAMES)))]
    return '%s_batch_size_%d_%s_%d' % (nm, int(rng.choice([8, 16, 32, 64])),
                                       rng.choice(['train', 'test', 'fp16']), i)


# ============================================================================
# Driver
# ============================================================================
SCALES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  layout=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120),
                  lay_cfg=(300, 3000), lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 layout=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20),
                 lay_cfg=(30, 200), lay_test_cfg=(30, 60)),
}
SPLITS = ('train', 'valid', 'test')


def sub_rng(seed, *keys):
    h = hashlib.sha256(('%d|' % seed + '|'.join(str(k) for k in keys)).encode()).digest()
    return np.random.default_rng(int.from_bytes(h[:8], 'little'))


def save_npz(path, **arrs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrs)


def save_noiseless(root, rel, arr):
    p = os.path.join(root, 'noiseless', rel[:-4] + '.npy')
    os.makedirs(os.path.dirname(p), exist_ok=True)
    np.save(p, np.asarray(arr, dtype=np.float64))


def gen_tile(root, seed, sc, factor, log):
    counts = [max(1, int(round(c * factor))) for c in sc['tile']]
    for si, split in enumerate(SPLITS):
        used = set()
        for i in range(counts[si]):
            rng = sub_rng(seed, 'tile', split, i)
            for attempt in range(200):
                nf, opc, ei, kind = build_tile_graph(rng, *sc['tile_nodes'])
                if not (sc['tile_nodes'][0] <= len(opc) <= sc['tile_nodes'][1]):
                    continue
                c = int(rng.integers(sc['tile_cfg'][0], sc['tile_cfg'][1] + 1))
                cfg, d = sample_tile_configs(rng, nf, opc, ei, c)
                if cfg is not None:
                    break
            else:
                raise RuntimeError('tile graph sampling failed')
            clean = tile_law(nf, opc, ei, cfg)
            stem = stem_for(rng, 'tile', split, i)
            while stem in used:
                stem = stem + 'x'
            used.add(stem)
            rel = 'npz/tile/xla/%s/%s.npz' % (split, stem)
            if split == 'test':
                rt = np.zeros(len(cfg), dtype=np.int64)
                norm = np.ones(len(cfg), dtype=np.int64)
            else:
                nrng = sub_rng(seed, 'tile-noise', split, i)
                rt = measure(nrng, clean, 0.008, 0.01, 0.05)
                norm = np.full(len(cfg), rt[d], dtype=np.int64)
                save_noiseless(root, rel, clean)
            save_npz(os.path.join(root, rel), node_feat=nf, node_opcode=opc, edge_index=ei,
                     config_feat=cfg.astype(np.float32), config_runtime=rt,
                     config_runtime_normalizers=norm)
    log('tile done')


def gen_layout(root, seed, sc, factor, log):
    counts = [max(1, int(round(c * factor))) for c in sc['layout']]
    for source in ('xla', 'nlp'):
        for search in ('default', 'random'):
            for si, split in enumerate(SPLITS):
                used = set()
                for i in range(counts[si]):
                    rng = sub_rng(seed, 'layout', source, search, split, i)
                    nf, opc, ei, splits, ids = sample_layout_graph(rng, source, sc['lay_nodes'],
                                                                   sc['lay_nc'])
                    infos = node_infos(nf, opc, ei, ids)
                    if split == 'test':
                        c = int(rng.integers(sc['lay_test_cfg'][0], sc['lay_test_cfg'][1] + 1))
                    else:
                        c = int(rng.integers(sc['lay_cfg'][0], sc['lay_cfg'][1] + 1))
                    if search == 'random':
                        ncf = sample_random_configs(rng, infos, c)
                    else:
                        ncf = sample_default_configs(rng, infos, c)
                    stem = stem_for(rng, source, split, i)
                    while stem in used:
                        stem = stem + 'x'
                    used.add(stem)
                    rel = 'npz/layout/%s/%s/%s/%s.npz' % (source, search, split, stem)
                    if split == 'test':
                        rt = np.zeros(c, dtype=np.int64)
                    else:
                        clean = layout_law(nf, opc, ei, ids, ncf)
                        nrng = sub_rng(seed, 'layout-noise', source, search, split, i)
                        rt = measure(nrng, clean, 0.0015, 0.005, 0.01)
                        save_noiseless(root, rel, clean)
                    save_npz(os.path.join(root, rel), node_feat=nf, node_opcode=opc, edge_index=ei,
                             node_config_ids=ids.astype(np.int64), node_config_feat=ncf,
                             node_splits=splits.astype(np.int64), config_runtime=rt)
            log('layout %s:%s done' % (source, search))


def verify(root):
    """recompute noise-free runtimes from the files on disk."""
    bad = 0
    for dp, _, fns in os.walk(os.path.join(root, 'npz')):
        for fn in fns:
            p = os.path.join(dp, fn)
            rel = os.path.relpath(p, root)
            q = os.path.join(root, 'noiseless', rel[:-4] + '.npy')
            if not os.path.exists(q):
                continue
            d = np.load(p)
            if 'node_config_feat' in d:
                r = layout_law(d['node_feat'], d['node_opcode'], d['edge_index'],
                               d['node_config_ids'], d['node_config_feat'])
            else:
                r = tile_law(d['node_feat'], d['node_opcode'], d['edge_index'], d['config_feat'])
            ref = np.load(q)
            if not np.allclose(r, ref, rtol=1e-12, atol=0):
                bad += 1
                print('MISMATCH', rel)
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', default='small', choices=['tiny', 'small'])
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    ap.add_argument('--verify', action='store_true', help='recompute noiseless from disk')
    a = ap.parse_args(argv)
    t0 = time.time()

    def log(msg):
        print('[%6.1fs] %s' % (time.time() - t0, msg), file=sys.stderr)

    sc = SCALES[a.scale]
    gen_tile(a.out, a.seed, sc, a.graphs_factor, log)
    gen_layout(a.out, a.seed, sc, a.graphs_factor, log)
    if a.verify:
        nb = verify(a.out)
        log('verify: %d mismatches' % nb)
        if nb:
            sys.exit(1)
    log('done')


if __name__ == '__main__':
    main()
