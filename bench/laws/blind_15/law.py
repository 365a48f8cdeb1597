#!/usr/bin/env python3
"""Blind runtime law #15 -- on-chip memory capacity, padding and minor/major access.

Writes a synthetic dataset root in the TpuGraphs npz format (five collections,
train/valid/test), plus noise-free runtimes for labeled files under ROOT/noiseless/.

    python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

THE LAW (kept out of NOTE.md on purpose; only this docstring describes it)
==========================================================================
Everything the noise-free runtime uses is read back from the arrays written to the
file (node_feat, node_opcode, edge_index, node_splits, node_config_ids,
node_config_feat, config_feat).  Generators and law share only parsing helpers.

Hardware constants: HBM bandwidth 1000 B/ns, MXU peak 2e5 flop/ns for 16-bit
operands (a quarter of that when an operand is 32-bit), VPU 3e3 elem-ops/ns,
usable on-chip VMEM 12 MiB, 90 ns per grid step, ~1 us per kernel launch.
Arrays are stored in (sublane x 128) tiles: the second-minor dim is padded to 8
(32-bit), 16 (16-bit) or 32 (8-bit) rows; the most-minor dim is padded towards 128
lanes with a softened inflation d*(pad128(d)/d)^0.6.  Size-1 dims occupy no tiles
(they are moved to the major end before any minor/major decision).

Layout collections (per configuration, one value per graph):
 * Physical layouts.  A configurable node's output layout is its config block,
   completed (for -1 entries) by the node's own layout in node_feat 134-139.
   Input / kernel blocks say the layout in which the node reads its lhs / rhs
   (kernel only for convolutions); -1 entries are completed from the producer's
   physical layout.  lhs/rhs are told apart from shapes and dimension numbers.
   Elementwise ops inherit the layout of their first same-shape, non-broadcast
   operand; every other op has the layout from its node_feat.
 * Relayout copies.  Whenever an operand is read in a layout different from the
   one its producer wrote (required input / kernel layouts, elementwise operands
   of the same shape but another layout) a copy kernel is paid: launch + read +
   write of both padded sizes, x1.8 when the most-minor dim changes.
   Reshapes are free bitcasts only when input and output are row-major with the
   same minor dim and compatible second-minor tiling; transposes only when the
   output layout is the permuted input layout; otherwise they are copies.
 * Fusion.  Elementwise chains fuse into the producer they inherit their layout
   from when it has a single consumer (anchors: conv, dot, reduce, reduce-window,
   gather, dynamic-slice, concatenate, slice, pad, reverse).  Only group inputs
   from outside and the group's last output touch HBM.
 * On-chip residency: a produced tensor whose padded size fits a residency budget
   of 4 MiB / (1 + live/24) (live = tensors live across it, a property of the
   graph) is written and read at 10% of its HBM cost.  Small late tensors in small
   programs fall off this cliff when padding inflates them; in big programs with
   many live tensors residency rarely happens and raw padded traffic dominates.
 * Conv / dot groups:  T_comp = flops / (peak * u_in * u_k * u_n * u_w), with
   u_in = 1 / 0.8 / 0.55 when the lhs contraction dim is minor / second-minor /
   major, u_k = sqrt(lane fill of the contraction) if minor else 0.85, u_n = sqrt
   lane fill of the output's minor dim (x0.7 unless it is the output feature),
   u_w = 1 / 0.85 / 0.6 by how the kernel's feature dims sit in its two minor dims.
   Capacity: weights stay resident up to half the VMEM (else blocked, the input
   re-read once per block); a small lhs (<= VMEM/4) stays resident too.  Otherwise
   the lhs streams in units = one input tile-row times its depth (all contraction
   rows when the contraction dim is not in the lanes, window taps of major spatial
   dims, halo of the second-minor dim).  One unit serves rpu output rows.  Rows per
   step R are what fits double-buffered (output row + fused stream rows + half a
   row per fused broadcast + f32 accumulator row for 16-bit outputs); R < rpu
   re-fetches the unit (x sqrt(min(4, rpu/R))), halo re-fetch 1+(w-1)/(R*sublane).
   R >= 1: pipelined max(compute, memory) + steps.  Otherwise, if one buffer fits:
   compute + memory, doubled step overhead.  Else spill: s = ceil(unit/VMEM) <= 4,
   memory x s^1.25, compute x (1+0.15 s).  Padding costs twice: in bytes moved
   and in rows that fit, and the two multiply.
 * Reductions: padded read x 1.9 (lane reduce over the minor dim only), 1.5
   (both minor dims), 1.3 (second-minor), 1.0 (major only; x1.3 when the
   contiguous chunk is below 16 KiB).  Gathers / scatters by where the indexed
   dim sits: major = contiguous row DMAs (512 B granule), second-minor = whole
   sublane tiles per index, minor = per-element strided access (64 B / element +
   0.5 ns); scatters x1.6 (x2 more when minor).  Dynamic-(update-)slices: major
   1.0, second-minor 1.2*(1+sublane/extent), minor 2.5*(1+128/extent); updates x2.
   Window ops x1.5 along the minor dim, x1.2 along the second-minor; concatenation
   along the minor dim x1.6.
 * While bodies are multiplied by a trip count read from the stacked operand of
   their dynamic-slices.
 * Whole-graph HBM pressure (multiplicative): padded bytes of long-lived tensors
   (consumed > 60 nodes later) plus parameters against a 1.5 GiB budget; above
   it the whole runtime is multiplied by 1 + 0.5*(F/budget - 1)^1.2.

Tile collection (per configuration, config_feat kernel/output bounds):
 * Output bounds are tile sizes over the output's physical dims (major to minor),
   the last two in units of (sublane, 128); kernel bounds likewise over the conv
   kernel / dot rhs.  0 means the full extent.
 * Grid steps G = prod ceil(dim / tile); edge tiles waste work.  Contraction steps
   Kst from the kernel tile (plus chunks of 2048 for reductions whose output is
   the fusion output), extra inner steps when the kernel's output-feature tile is
   smaller than the output's (over-fetch when larger).  Input tiles include the
   conv halo and lane/sublane padding of their own layout; the kernel is fetched
   once only when one kernel tile covers it.
 * Fused full-size streams (x2 when their layout differs from the output's), VPU
   work by number of fused elementwise ops (x1.5 lane reduce), an inner reduction
   that the output tile does not cover forces a second pass, and long fused chains
   need VMEM scratch (one output tile per 12 ops): long graphs hit the cliff at
   smaller tiles, short ones are dominated by per-step overhead.
 * Working set = 2*(input + kernel + output*(1+streams) + reduce input) + f32
   accumulator + scratch.  Fits: max(memory, compute) + steps + prologue.
   Single-buffered fits: memory + compute, overhead x1.3.  Else spill
   s = ceil(single / VMEM): memory x s^1.2, compute x (1+0.1 s), steps x s.
 * MXU utilisation sqrt(lane fill of the output feature tile) * sqrt(fill of the
   contraction tile).
 * The default config (normaliser) comes from a compiler-like heuristic in the
   generator: from full extents, halve whichever tile dim reduces the working set
   most until it fits half the VMEM.  It is written into the configs once.

Noise (stored config_runtime only): log-runtime + sigma_g * Student-t(nu), sigma_g
drawn per graph (log-normal around 0.4% for layout, 2% for tile; nu 3 / 2.5;
clipped at 12), plus rare outliers (0.4% / 0.6%) x(1 + 0.5 * Lomax(1.1)) capped at
30.  The tile normaliser is the default configuration measured once, and that
measurement is also the default's own entry.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

# ----------------------------------------------------------------------------
# constants
# ----------------------------------------------------------------------------
HBM_BW = 1000.0  # B / ns
PEAK16 = 2.0e5  # flop / ns
VPU_RATE = 3.0e3  # element-ops / ns
VMEM = 12.0 * 2 ** 20
C_STEP = 90.0
LAUNCH = 900.0
COPY_LAUNCH = 1200.0
HBM_BUDGET = 1.5 * 2 ** 30
LIVE_SPAN = 60
PIN_BASE = 4.0 * 2 ** 20
LIVE_REF = 24.0

# primitive type indices (position in upstream's one-hot list)
PRED, S8, S32, U32, F32, BF16, TUPLE = 1, 2, 4, 8, 11, 13, 16
TYBYTES = {0: 4, 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 2, 8: 4, 9: 8, 10: 2, 11: 4,
           12: 8, 13: 2, 14: 8, 15: 16, 16: 0, 17: 0, 18: 0}

# opcode ids (upstream hlo_opcode.h)
OP = dict(abs=1, add=2, allreduce=5, bitcast=11, bitcast_convert=12, broadcast=13,
          ceil=15, clamp=17, compare=20, concatenate=22, constant=24, convert=25,
          convolution=26, copy=27, cosine=30, divide=32, dot=34, dynamic_slice=35,
          dynamic_update_slice=36, exponential=37, floor=40, fusion=41, gather=42,
          gte=45, iota=48, log=50, log1p=51, and_=52, not_=53, or_=54, maximum=57,
          minimum=58, multiply=59, negate=60, pad=62, parameter=63, power=66,
          reduce=70, reduce_window=72, reshape=75, reverse=76, rsqrt=81, scatter=82,
          select=83, select_and_scatter=84, shift_left=87, sign=90, sine=91, slice=92,
          sort=93, sqrt=94, subtract=95, tanh=96, transpose=98, tuple=100,
          while_=102, logistic=107)
ELEMENTWISE = {1, 2, 7, 12, 15, 17, 20, 25, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53, 54,
               55, 57, 58, 59, 60, 65, 66, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94,
               95, 96, 103, 107, 118, 120}
FUSE_ANCHORS = {26, 34, 70, 72, 42, 35, 22, 92, 62, 76}
FREE_SOURCES = {13, 24, 48}  # broadcast / constant / iota: materialised in any layout
ZERO_COST = {63, 45, 24, 100, 102, 11, 14, 23, 4, 3, 33, 64, 74, 43, 114, 13, 48}


def sub_rows(b):
    return 8 * max(1, 4 // max(int(b), 1))


def pad_to(x, m):
    return np.ceil(np.asarray(x, dtype=np.float64) / m) * m


# ----------------------------------------------------------------------------
# HLO builder and node features
# ----------------------------------------------------------------------------
class Node:
    __slots__ = ("op", "dims", "ty", "ops", "calls", "a", "gid", "root")

    def __init__(self, op, dims, ty, ops, a):
        self.op = op
        self.dims = tuple(int(d) for d in dims)
        self.ty = ty
        self.ops = list(ops)
        self.calls = list(a.pop("calls", []))
        self.a = a
        self.gid = -1
        self.root = False


class Comp:
    def __init__(self, kind):
        self.kind = kind
        self.nodes = []
        self.root = None
        self.nparam = 0

    def add(self, op, dims, ty, ops=(), **a):
        nd = Node(op, dims, ty, ops, a)
        self.nodes.append(nd)
        return nd

    def param(self, dims, ty, layout=None):
        a = {"param": self.nparam}
        if layout is not None:
            a["layout"] = layout
        self.nparam += 1
        return self.add(OP["parameter"], dims, ty, **a)

    def const(self, ty=F32):
        return self.add(OP["constant"], (), ty)

    def bcast(self, x, dims, bdims):
        return self.add(OP["broadcast"], dims, x.ty, [x], dimensions=list(bdims))

    def scalar_bcast(self, dims, ty):
        return self.bcast(self.const(ty), dims, [])

    def ew(self, op, *xs, ty=None):
        return self.add(op, xs[0].dims, xs[0].ty if ty is None else ty, list(xs))


class Prog:
    """A module: reducer computations first, then loop computations, then main."""

    def __init__(self):
        self.reducers = []
        self.loops = []
        self.main = Comp("main")

    def reducer(self, ty, op=2):
        c = Comp("red")
        p0 = c.param((), ty)
        p1 = c.param((), ty)
        r = c.add(op, (), ty, [p0, p1])
        c.root = r
        self.reducers.append(c)
        return r

    def reduce(self, c, x, rdims, op=2):
        rdims = sorted(rdims)
        out = [d for i, d in enumerate(x.dims) if i not in rdims]
        init = c.const(x.ty)
        rr = self.reducer(x.ty, op)
        return c.add(OP["reduce"], out, x.ty, [x, init], dimensions=rdims, calls=[rr])

    def finalize(self, with_splits=True):
        comps = self.reducers + self.loops + [self.main]
        gid = 0
        splits = [0]
        for ci, c in enumerate(comps):
            for nd in c.nodes:
                nd.gid = gid
                gid += 1
            root = c.root if c.root is not None else c.nodes[-1]
            root.root = True
            if c.kind in ("loop",) or (c.kind == "red" and (ci + 1 == len(comps) or comps[ci + 1].kind != "red")):
                splits.append(gid)
        if splits[-1] != gid:
            splits.append(gid)
        nodes = [nd for c in comps for nd in c.nodes]
        n = len(nodes)
        nf = np.zeros((n, 140), np.float32)
        opc = np.zeros(n, np.uint8)
        edges = set()
        for nd in nodes:
            nf[nd.gid] = node_features(nd)
            opc[nd.gid] = nd.op
            for p in nd.ops + nd.calls:
                assert p.gid < nd.gid
                edges.add((nd.gid, p.gid))
        ei = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
        out = {"node_feat": nf, "node_opcode": opc, "edge_index": ei}
        if with_splits:
            out["node_splits"] = np.array([splits], dtype=np.int64)
        return out, nodes


def _seq(vals, k=6):
    vals = list(vals)
    v = np.zeros(k + 2, np.float64)
    for i, x in enumerate(vals[:k]):
        v[i] = x
    v[k] = sum(vals)
    v[k + 1] = float(np.prod(vals)) if vals else 1.0
    return v


def node_features(nd):
    f = np.zeros(140, np.float64)
    a = nd.a
    f[0] = 1.0 if nd.root else 0.0
    f[2 + nd.ty] = 1.0
    if nd.ty != TUPLE:
        f[21:29] = _seq(nd.dims)
    else:
        f[28] = 1.0
        f[29] = a.get("tuple_size", 0)
    f[30] = a.get("param", 0)
    dm = a.get("dimensions", [])
    for i, x in enumerate(dm[:6]):
        f[31 + i] = x
    win = a.get("win")
    if win is not None:
        for g, key in enumerate(("size", "stride", "lo", "hi", "wd", "bd")):
            f[37 + 8 * g: 45 + 8 * g] = _seq(win[key])
        rev = win.get("rev", [0] * len(win["size"]))
        for i, x in enumerate(rev[:6]):
            f[85 + i] = x
        f[91] = sum(rev)
        f[92] = len(rev) - sum(rev)
    else:
        for g in range(6):
            f[44 + 8 * g] = 1.0
    dn = a.get("dn")
    if dn is not None:
        f[93] = dn["ib"]
        f[94] = dn["if"]
        for i, x in enumerate(dn["isp"][:4]):
            f[95 + i] = x
        f[99] = dn["ki"]
        f[100] = dn["ko"]
        for i, x in enumerate(dn["ksp"][:4]):
            f[101 + i] = x
        f[105] = dn["ob"]
        f[106] = dn["of"]
        f[107] = 1.0
        f[108] = 1.0
    sl = a.get("slice")
    if sl is not None:
        f[109:113] = _seq(sl[0], 2)
        f[113:117] = _seq(sl[1], 2)
        f[117:121] = _seq(sl[2], 2)
    else:
        f[112] = f[116] = f[120] = 1.0
    f[121:125] = _seq(a.get("ds_sizes", []), 2)
    pc = a.get("padcfg")
    if pc is not None:
        f[125:129] = _seq(pc[0], 2)
        f[129:133] = _seq(pc[1], 2)
    else:
        f[128] = f[132] = 1.0
    f[133] = a.get("is_stable", 0)
    if nd.ty != TUPLE and len(nd.dims) > 0:
        lay = a.get("layout", list(range(len(nd.dims) - 1, -1, -1)))
        f[134:134 + len(lay)] = lay
    return f


def window(nd_, sizes, strides=None, pads=None, rev=None):
    strides = strides or [1] * nd_
    pads = pads or [(s - 1) // 2 for s in sizes]
    return {"size": list(sizes), "stride": list(strides), "lo": list(pads), "hi": list(pads),
            "wd": [1] * nd_, "bd": [1] * nd_, "rev": list(rev or [0] * nd_)}


# ----------------------------------------------------------------------------
# parsing (shared by generators and laws: reads only the arrays)
# ----------------------------------------------------------------------------
class Graph:
    pass


def parse_graph(A):
    nf = A["node_feat"]
    op = A["node_opcode"].astype(np.int64)
    E = A["edge_index"]
    n = len(op)
    g = Graph()
    g.n = n
    g.nf = nf
    g.op = op
    raw = np.rint(nf[:, 21:27]).astype(np.int64)
    ranks = np.zeros(n, np.int64)
    for i in range(n):
        r = 0
        while r < 6 and raw[i, r] > 0:
            r += 1
        ranks[i] = r
    g.rank = ranks
    g.dims = [raw[i, :ranks[i]].copy() for i in range(n)]
    g.vol = np.array([float(np.prod(d)) if len(d) else 1.0 for d in g.dims])
    ty = np.argmax(nf[:, 2:21], axis=1)
    g.ty = ty
    g.istuple = (ty == TUPLE) | (nf[:, 29] > 0)
    g.b = np.array([TYBYTES.get(int(t), 4) for t in ty], np.float64)
    g.b[g.b == 0] = 4.0
    lay = np.rint(nf[:, 134:140]).astype(np.int64)
    g.deflay = []
    for i in range(n):
        r = ranks[i]
        p = lay[i, :r]
        if r > 0 and sorted(p.tolist()) != list(range(r)):
            p = np.arange(r - 1, -1, -1)
        g.deflay.append(p.copy())
    if "node_splits" in A:
        sp = A["node_splits"].reshape(-1)
        seg = np.searchsorted(sp, np.arange(n), side="right") - 1
        seg = np.clip(seg, 0, None)
    else:
        seg = np.zeros(n, np.int64)
    g.seg = seg
    g.operands = [[] for _ in range(n)]
    g.calls = [[] for _ in range(n)]
    g.consumers = [[] for _ in range(n)]
    for u, v in E:
        u = int(u)
        v = int(v)
        if seg[u] == seg[v]:
            g.operands[u].append(v)
            g.consumers[v].append(u)
        else:
            g.calls[u].append(v)
    for i in range(n):
        g.operands[i].sort()
    # trip counts of segments (while bodies): from dynamic-slices over stacked operands
    trip = {}
    for v in range(n):
        if op[v] == OP["dynamic_slice"] and g.operands[v]:
            x = max(g.operands[v], key=lambda q: g.vol[q])
            if g.rank[x] == g.rank[v] and g.rank[v] > 0:
                for d in range(g.rank[v]):
                    if g.dims[v][d] == 1 and g.dims[x][d] > 1:
                        trip[seg[v]] = max(trip.get(seg[v], 1), int(g.dims[x][d]))
    last = seg.max() if n else 0
    g.trip = np.array([1 if seg[v] == last else trip.get(seg[v], 1) for v in range(n)], np.float64)
    return g


def operand_roles(g, v):
    """(lhs, rhs) of a convolution or dot, from shapes and dimension numbers."""
    ops = [p for p in g.operands[v] if not g.istuple[p]]
    if len(ops) < 2:
        return (ops[0], ops[0]) if ops else (None, None)
    a, b = ops[0], ops[1]
    O = g.dims[v]

    def score(l, r):
        L, R = g.dims[l], g.dims[r]
        s = 0
        if g.op[v] == OP["convolution"]:
            nf = g.nf[v]
            ib, fi, ki, ob = (int(nf[93]), int(nf[94]), int(nf[99]), int(nf[105]))
            if fi < len(L) and ki < len(R) and L[fi] == R[ki]:
                s += 1
            if ib < len(L) and ob < len(O) and L[ib] == O[ob]:
                s += 1
            ko, of = int(nf[100]), int(nf[106])
            if ko < len(R) and of < len(O) and R[ko] == O[of]:
                s += 1
        else:
            nb = len(O) - 2
            if len(L) == len(O) and len(R) == len(O):
                if tuple(L[:-1]) == tuple(O[:-1]):
                    s += 1
                if R[-1] == O[-1]:
                    s += 1
                if nb >= 0 and L[-1] == R[nb]:
                    s += 1
        return s

    return (a, b) if score(a, b) >= score(b, a) else (b, a)


def configurable_candidates(g):
    out = []
    for v in range(g.n):
        if g.op[v] in (OP["convolution"], OP["dot"], OP["reshape"], OP["transpose"]) and g.rank[v] >= 1:
            if g.operands[v] and g.rank[g.operands[v][0]] >= 1:
                out.append(v)
    return out


def layout_blocks_ranks(g, v):
    """(out rank, input rank, kernel rank or 0) of a configurable node."""
    if g.op[v] in (OP["convolution"], OP["dot"]):
        l, r = operand_roles(g, v)
        return g.rank[v], g.rank[l], (g.rank[r] if g.op[v] == OP["convolution"] else 0)
    x = g.operands[v][0]
    return g.rank[v], g.rank[x], 0


# ----------------------------------------------------------------------------
# layout graph samplers
# ----------------------------------------------------------------------------
class ParamSource:
    """Parameters of a computation: separate parameters, or one tuple parameter + GTEs."""

    def __init__(self, c, rng):
        self.c = c
        self.tuple_mode = rng.random() < 0.5
        self.tp = None
        self.count = 0
        if self.tuple_mode:
            self.tp = c.add(OP["parameter"], (), TUPLE, param=0, tuple_size=0)

    def get(self, dims, ty):
        if self.tuple_mode:
            self.count += 1
            self.tp.a["tuple_size"] = self.count
            return self.c.add(OP["gte"], dims, ty, [self.tp])
        return self.c.param(dims, ty)


def relu(c, x):
    return c.ew(OP["maximum"], x, c.scalar_bcast(x.dims, x.ty))


def conv_node(c, x, w, cout, k, stride, nd_):
    sp = [int(math.ceil(s / stride)) for s in x.dims[1:-1]]
    dn = dict(ib=0, isp=list(range(1, nd_ + 1)), ki=nd_, ko=nd_ + 1, ksp=list(range(nd_)), ob=0, of=nd_ + 1)
    dn["if"] = nd_ + 1
    return c.add(OP["convolution"], (x.dims[0],) + tuple(sp) + (cout,), x.ty, [x, w],
                 win=window(nd_, [k] * nd_, [stride] * nd_), dn=dn)


def build_cnn(rng, fwd_budget, tiny):
    P = Prog()
    c = P.main
    ps = ParamSource(c, rng)
    nd_ = int(rng.choice([1, 2, 3], p=[0.15, 0.6, 0.25]))
    dt = F32 if rng.random() < 0.5 else BF16
    if nd_ == 3:
        S = int(rng.choice([8, 16, 24] if tiny else [16, 24, 32, 48, 64, 96]))
        B = int(rng.choice([1, 2, 4]))
    elif nd_ == 2:
        S = int(rng.choice([14, 28, 32] if tiny else [28, 32, 56, 64, 96, 112, 128, 224]))
        B = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
    else:
        S = int(rng.choice([64, 128, 256] if tiny else [128, 256, 512, 1024, 2048, 4096]))
        B = int(rng.choice([1, 2, 4, 8, 16, 32, 64]))
    cin0 = int(rng.choice([1, 3, 4, 8, 16, 32]))
    width = int(rng.choice([8, 16, 24, 32, 48, 64, 96, 128]))
    cap = 2.0e7 if dt == F32 else 3.5e7
    while B * S ** nd_ * width > cap and B > 1:
        B //= 2
    while B * S ** nd_ * width > cap:
        S = max(4, S // 2)
    train = rng.random() < 0.6
    use_bn = rng.random() < 0.5
    classes = int(rng.choice([2, 10, 21, 91, 100, 1000]))
    shape_in = (B,) + (S,) * nd_ + (cin0,)
    if rng.random() < 0.3:
        margin = int(rng.choice([4, 8, 16]))
        full = ps.get((B,) + (S + margin,) * nd_ + (cin0,), dt)
        idx = [c.const(S32) for _ in range(nd_ + 2)]
        x = c.add(OP["dynamic_slice"], shape_in, dt, [full] + idx, ds_sizes=list(shape_in))
    else:
        x = ps.get(shape_in, dt)
    if rng.random() < 0.3:
        x = c.ew(OP["multiply"], x, c.scalar_bcast(x.dims, dt))
    recs = []
    cur_c = width
    nblocks = 0

    def count():
        return len(c.nodes) + 3 * len(P.reducers)

    stage_len = int(rng.integers(1, 4))
    while count() < fwd_budget or nblocks < 2:
        k = int(rng.choice([1, 3, 3, 3, 5] if nd_ < 3 else [1, 3, 3]))
        cin = x.dims[-1]
        if rng.random() < 0.12 and nblocks > 0 and len(recs) > 0 and nd_ >= 2:
            # dense-style concatenation along features
            prev = recs[-1]["y"]
            if prev.dims[:-1] == x.dims[:-1] and prev is not x:
                x = c.add(OP["concatenate"], x.dims[:-1] + (x.dims[-1] + prev.dims[-1],), dt, [x, prev],
                          dimensions=[nd_ + 1])
                cin = x.dims[-1]
        w = ps.get((k,) * nd_ + (cin, cur_c), dt)
        y = conv_node(c, x, w, cur_c, k, 1, nd_)
        bias = ps.get((cur_c,), dt)
        y = c.ew(OP["add"], y, c.bcast(bias, y.dims, [nd_ + 1]))
        if use_bn:
            rd = list(range(nd_ + 1))
            m = P.reduce(c, y, rd)
            m = c.ew(OP["divide"], m, c.scalar_bcast(m.dims, dt))
            d = c.ew(OP["subtract"], y, c.bcast(m, y.dims, [nd_ + 1]))
            v = P.reduce(c, c.ew(OP["multiply"], d, d), rd)
            r = c.ew(OP["rsqrt"], c.ew(OP["add"], v, c.scalar_bcast(v.dims, dt)))
            y = c.ew(OP["multiply"], d, c.bcast(r, y.dims, [nd_ + 1]))
        pre = y
        y = relu(c, y)
        if x.dims == y.dims and rng.random() < 0.4:
            y = c.ew(OP["add"], y, x)
        if rng.random() < 0.15 and nd_ >= 2:
            flat = (y.dims[0], int(np.prod(y.dims[1:-1])), y.dims[-1])
            r1 = c.add(OP["reshape"], flat, dt, [y])
            r2 = c.ew(OP["multiply"], r1, c.scalar_bcast(flat, dt))
            y = c.add(OP["reshape"], y.dims, dt, [r2])
        recs.append(dict(x=x, w=w, y=y, pre=pre, k=k, kind="conv"))
        x = y
        nblocks += 1
        if nblocks % stage_len == 0 and min(x.dims[1:-1]) >= 4:
            if rng.random() < 0.5:
                sz = [1] + [2] * nd_ + [1]
                st = [1] + [2] * nd_ + [1]
                rr = P.reducer(dt, OP["maximum"])
                init = c.const(dt)
                out = (x.dims[0],) + tuple(int(math.ceil(s / 2)) for s in x.dims[1:-1]) + (x.dims[-1],)
                xp = c.add(OP["reduce_window"], out, dt, [x, init], calls=[rr],
                           win=window(nd_ + 2, sz, st, [0] * (nd_ + 2)))
                recs.append(dict(x=x, y=xp, kind="pool", sz=sz, st=st))
                x = xp
            else:
                cin = x.dims[-1]
                w = ps.get((3,) * nd_ + (cin, cur_c), dt)
                y = conv_node(c, x, w, cur_c, 3, 2, nd_)
                y = relu(c, y)
                recs.append(dict(x=x, w=w, y=y, pre=y, k=3, kind="conv", stride=2))
                x = y
            cur_c = min(1024, cur_c * 2)
    # head
    rd = list(range(1, nd_ + 1))
    flatten = rng.random() < 0.4 and np.prod(x.dims[1:]) <= 65536
    if flatten:
        h = c.add(OP["reshape"], (x.dims[0], int(np.prod(x.dims[1:]))), dt, [x])
    else:
        h = P.reduce(c, x, rd)
        h = c.ew(OP["divide"], h, c.scalar_bcast(h.dims, dt))
    F = h.dims[1]
    wfc = ps.get((F, classes), dt)
    logits = c.add(OP["dot"], (h.dims[0], classes), dt, [h, wfc])
    logits = c.ew(OP["add"], logits, c.bcast(ps.get((classes,), dt), logits.dims, [1]))
    mx = P.reduce(c, logits, [1], OP["maximum"])
    e = c.ew(OP["exponential"], c.ew(OP["subtract"], logits, c.bcast(mx, logits.dims, [0])))
    z = P.reduce(c, e, [1])
    sm = c.ew(OP["divide"], e, c.bcast(z, logits.dims, [0]))
    labels = ps.get((h.dims[0], classes), dt)
    if rng.random() < 0.3:
        lab_ids = ps.get((h.dims[0],), S32)
        cw = ps.get((classes, 1), dt)
        gw = c.add(OP["gather"], (h.dims[0], 1), dt, [cw, lab_ids])
        gw = c.add(OP["reshape"], (h.dims[0],), dt, [gw])
        labels = c.ew(OP["multiply"], labels, c.bcast(gw, labels.dims, [0]))
    loss = c.ew(OP["multiply"], c.ew(OP["log"], sm), labels)
    loss = P.reduce(c, loss, [0, 1])
    outs = [loss]
    if train:
        lr = c.const(dt)
        dl = c.ew(OP["subtract"], sm, labels)
        hT = c.add(OP["transpose"], (F, h.dims[0]), dt, [h], dimensions=[1, 0])
        dW = c.add(OP["dot"], (F, classes), dt, [hT, dl])
        outs.append(c.ew(OP["subtract"], wfc, c.ew(OP["multiply"], dW, c.bcast(lr, dW.dims, []))))
        wT = c.add(OP["transpose"], (classes, F), dt, [wfc], dimensions=[1, 0])
        dh = c.add(OP["dot"], (h.dims[0], F), dt, [dl, wT])
        if flatten:
            dy = c.add(OP["reshape"], x.dims, dt, [dh])
        else:
            dy = c.ew(OP["divide"], c.bcast(dh, x.dims, [0, nd_ + 1]), c.scalar_bcast(x.dims, dt))
        for rec in reversed(recs):
            if dy.dims != rec["y"].dims:
                break
            if rec["kind"] == "pool":
                rr = P.reducer(dt, OP["add"])
                init = c.const(dt)
                dy = c.add(OP["select_and_scatter"], rec["x"].dims, dt, [rec["x"], dy, init], calls=[rr],
                           win=window(nd_ + 2, rec["sz"], rec["st"], [0] * (nd_ + 2)))
                continue
            xin, w, k = rec["x"], rec["w"], rec["k"]
            msk = c.ew(OP["compare"], rec["pre"], c.scalar_bcast(rec["pre"].dims, dt), ty=PRED)
            dy = c.add(OP["select"], dy.dims, dt, [msk, dy, c.scalar_bcast(dy.dims, dt)])
            if rng.random() < 0.7:
                P.reduce(c, dy, list(range(nd_ + 1)))
            stride = rec.get("stride", 1)
            # weight gradient: lhs = activations (batch as feature), rhs = output gradient
            sp = list(dy.dims[1:-1])
            dnw = dict(ib=nd_ + 1, isp=list(range(1, nd_ + 1)), ki=0, ko=nd_ + 1, ksp=list(range(1, nd_ + 1)),
                       ob=nd_, of=nd_ + 1)
            dnw["if"] = 0
            if xin.dims[1:-1] == dy.dims[1:-1] or stride == 1:
                dw = c.add(OP["convolution"], w.dims, dt, [xin, dy], dn=dnw,
                           win=window(nd_, sp, [1] * nd_, [(k - 1) // 2] * nd_, None))
                outs.append(c.ew(OP["subtract"], w, c.ew(OP["multiply"], dw, c.bcast(lr, dw.dims, []))))
            # input gradient
            dni = dict(ib=0, isp=list(range(1, nd_ + 1)), ki=nd_ + 1, ko=nd_, ksp=list(range(nd_)), ob=0, of=nd_ + 1)
            dni["if"] = nd_ + 1
            win = window(nd_, [k] * nd_, [1] * nd_, [(k - 1) // 2] * nd_, [1] * nd_)
            if stride > 1:
                win["bd"] = [stride] * nd_
            dx = c.add(OP["convolution"], xin.dims, dt, [dy, w], dn=dni, win=win)
            if rng.random() < 0.3 and nd_ >= 2:
                dx = c.ew(OP["add"], dx, c.scalar_bcast(dx.dims, dt))
            dy = dx
            if count() > 2.6 * fwd_budget:
                break
    root = c.add(OP["tuple"], (), TUPLE, outs, tuple_size=len(outs))
    c.root = root
    return P


def layernorm(P, c, x, axis, ps):
    dt = x.ty
    keep = [i for i in range(len(x.dims)) if i != axis]
    m = P.reduce(c, x, [axis])
    m = c.ew(OP["divide"], m, c.scalar_bcast(m.dims, dt))
    d = c.ew(OP["subtract"], x, c.bcast(m, x.dims, keep))
    v = P.reduce(c, c.ew(OP["multiply"], d, d), [axis])
    r = c.ew(OP["rsqrt"], c.ew(OP["add"], v, c.scalar_bcast(v.dims, dt)))
    y = c.ew(OP["multiply"], d, c.bcast(r, x.dims, keep))
    gmm = ps.get((x.dims[axis],), dt)
    return c.ew(OP["add"], c.ew(OP["multiply"], y, c.bcast(gmm, x.dims, [axis])), c.scalar_bcast(x.dims, dt))


def tfm_layer(P, c, h, W, dims, rng, tiny, ps):
    B, S, H, nh, dh, FF = dims
    dt = h.ty
    N = B * S
    ln = layernorm(P, c, h, 1, ps) if not tiny or rng.random() < 0.5 else h
    qkv = []
    for nm in ("q", "k", "v"):
        y = c.add(OP["dot"], (N, H), dt, [ln, W[nm]])
        y4 = c.add(OP["reshape"], (B, S, nh, dh), dt, [y])
        if nm == "k":
            qkv.append(c.add(OP["transpose"], (B, nh, dh, S), dt, [y4], dimensions=[0, 2, 3, 1]))
        else:
            qkv.append(c.add(OP["transpose"], (B, nh, S, dh), dt, [y4], dimensions=[0, 2, 1, 3]))
    q, k, v = qkv
    s = c.add(OP["dot"], (B, nh, S, S), dt, [q, k])
    s = c.ew(OP["multiply"], s, c.scalar_bcast(s.dims, dt))
    if rng.random() < 0.6:
        mask = ps.get((B, S), dt)
        s = c.ew(OP["add"], s, c.bcast(mask, s.dims, [0, 3]))
    m = P.reduce(c, s, [3], OP["maximum"])
    e = c.ew(OP["exponential"], c.ew(OP["subtract"], s, c.bcast(m, s.dims, [0, 1, 2])))
    z = P.reduce(c, e, [3])
    p = c.ew(OP["divide"], e, c.bcast(z, s.dims, [0, 1, 2]))
    o = c.add(OP["dot"], (B, nh, S, dh), dt, [p, v])
    ot = c.add(OP["transpose"], (B, S, nh, dh), dt, [o], dimensions=[0, 2, 1, 3])
    o2 = c.add(OP["reshape"], (N, H), dt, [ot])
    a = c.add(OP["dot"], (N, H), dt, [o2, W["o"]])
    h = c.ew(OP["add"], h, a)
    ln2 = layernorm(P, c, h, 1, ps) if not tiny else h
    f1 = c.add(OP["dot"], (N, FF), dt, [ln2, W["f1"]])
    f1 = c.ew(OP["add"], f1, c.bcast(W["b1"], f1.dims, [1]))
    g = c.ew(OP["multiply"], f1, c.ew(OP["logistic"], c.ew(OP["multiply"], f1, c.scalar_bcast(f1.dims, dt))))
    f2 = c.add(OP["dot"], (N, H), dt, [g, W["f2"]])
    h = c.ew(OP["add"], h, f2)
    return h, dict(ln=ln, ln2=ln2, g=g, o2=o2)


def build_tfm(rng, fwd_budget, tiny):
    P = Prog()
    c = P.main
    ps = ParamSource(c, rng)
    dt = BF16 if rng.random() < 0.7 else F32
    if tiny:
        B = int(rng.choice([1, 2, 4, 8]))
        S = int(rng.choice([32, 64, 128]))
        H = int(rng.choice([64, 128, 256]))
        V = int(rng.choice([1000, 4096, 8192]))
    else:
        B = int(rng.choice([1, 2, 4, 8, 16, 32]))
        S = int(rng.choice([64, 128, 256, 384, 512]))
        H = int(rng.choice([128, 256, 512, 768, 1024]))
        V = int(rng.choice([8192, 30522, 32000, 50257]))
    while B * S > 8192 and B > 1:
        B //= 2
    dh = int(rng.choice([32, 64, 64, 128]))
    dh = min(dh, H)
    nh = H // dh
    FF = H * int(rng.choice([2, 4]))
    N = B * S
    while N * V > 2.5e8:
        V //= 2
    train = rng.random() < 0.5
    loop = rng.random() < 0.35 and not tiny
    ids = ps.get((B, S), S32)
    table = ps.get((V, H), dt)
    emb = c.add(OP["gather"], (B, S, H), dt, [table, ids])
    pos = ps.get((max(512, S), H), dt)
    psl = c.add(OP["slice"], (S, H), dt, [pos], slice=([0, 0], [1, 1], [S, H]))
    x = c.ew(OP["add"], emb, c.bcast(psl, (B, S, H), [1, 2]))
    h = c.add(OP["reshape"], (N, H), dt, [x])
    per_layer = 70 if not tiny else 40
    nl = max(1, int(round(fwd_budget / per_layer)) - 1)
    dims = (B, S, H, nh, dh, FF)
    shapes = dict(q=(H, H), k=(H, H), v=(H, H), o=(H, H), f1=(H, FF), f2=(FF, H), b1=(FF,))
    saved = []
    if loop:
        L = max(2, nl)
        stacked = {k: ps.get((L,) + s, dt) for k, s in shapes.items()}
        cond = Comp("loop")
        body = Comp("loop")
        # condition
        cp = cond.add(OP["parameter"], (), TUPLE, param=0, tuple_size=2 + len(shapes))
        ci = cond.add(OP["gte"], (), S32, [cp])
        cond.root = cond.add(OP["compare"], (), PRED, [ci, cond.const(S32)])
        # body
        bp = body.add(OP["parameter"], (), TUPLE, param=0, tuple_size=2 + len(shapes))
        bi = body.add(OP["gte"], (), S32, [bp])
        bh = body.add(OP["gte"], (N, H), dt, [bp])
        bw = {}
        bps = ParamSource(body, rng)
        bps.tuple_mode = False
        for k, s in shapes.items():
            st = body.add(OP["gte"], (L,) + s, dt, [bp])
            zero = body.const(S32)
            ds = body.add(OP["dynamic_slice"], (1,) + s, dt, [st, bi] + [zero] * len(s), ds_sizes=[1] + list(s))
            bw[k] = body.add(OP["reshape"], s, dt, [ds])
        bh2, _ = tfm_layer(P, body, bh, bw, dims, rng, tiny, bps)
        bi2 = body.ew(OP["add"], bi, body.const(S32))
        body.root = body.add(OP["tuple"], (), TUPLE, [bi2, bh2], tuple_size=2 + len(shapes))
        P.loops += [cond, body]
        init = c.add(OP["tuple"], (), TUPLE, [c.const(S32), h] + list(stacked.values()),
                     tuple_size=2 + len(shapes))
        wl = c.add(OP["while_"], (), TUPLE, [init], calls=[cond.root, body.root], tuple_size=2 + len(shapes))
        h = c.add(OP["gte"], (N, H), dt, [wl])
    else:
        for li in range(nl):
            W = {k: ps.get(s, dt) for k, s in shapes.items()}
            hin = h
            h, aux = tfm_layer(P, c, h, W, dims, rng, tiny, ps)
            saved.append((hin, W, aux))
    hf = layernorm(P, c, h, 1, ps) if not tiny else h
    wout = ps.get((H, V), dt)
    logits = c.add(OP["dot"], (N, V), dt, [hf, wout])
    mx = P.reduce(c, logits, [1], OP["maximum"])
    sh = c.ew(OP["subtract"], logits, c.bcast(mx, logits.dims, [0]))
    z = P.reduce(c, c.ew(OP["exponential"], sh), [1])
    lp = c.ew(OP["subtract"], sh, c.bcast(c.ew(OP["log"], z), logits.dims, [0]))
    labels = ps.get((N,), S32)
    picked = c.add(OP["gather"], (N,), dt, [lp, labels])
    loss = P.reduce(c, picked, [0])
    outs = [loss]
    if train:
        lr = c.const(dt)
        dl = c.ew(OP["subtract"], c.ew(OP["exponential"], lp), c.scalar_bcast(lp.dims, dt))
        hT = c.add(OP["transpose"], (H, N), dt, [hf], dimensions=[1, 0])
        dWo = c.add(OP["dot"], (H, V), dt, [hT, dl])
        outs.append(c.ew(OP["subtract"], wout, c.ew(OP["multiply"], dWo, c.bcast(lr, dWo.dims, []))))
        woT = c.add(OP["transpose"], (V, H), dt, [wout], dimensions=[1, 0])
        dh_ = c.add(OP["dot"], (N, H), dt, [dl, woT])
        for hin, W, aux in reversed(saved):
            for nm, xin in (("f2", aux["g"]), ("o", aux["o2"])):
                w = W[nm]
                xT = c.add(OP["transpose"], (xin.dims[1], N), dt, [xin], dimensions=[1, 0])
                dw = c.add(OP["dot"], w.dims, dt, [xT, dh_])
                outs.append(c.ew(OP["subtract"], w, c.ew(OP["multiply"], dw, c.bcast(lr, dw.dims, []))))
                wT = c.add(OP["transpose"], (w.dims[1], w.dims[0]), dt, [w], dimensions=[1, 0])
                dx = c.add(OP["dot"], (N, w.dims[0]), dt, [dh_, wT])
                if nm == "f2":
                    dx = c.ew(OP["multiply"], dx, aux["g"])
                    db = P.reduce(c, dx, [0])
                    outs.append(c.ew(OP["subtract"], W["b1"], db))
                    w1 = W["f1"]
                    lT = c.add(OP["transpose"], (H, N), dt, [aux["ln2"]], dimensions=[1, 0])
                    dw1 = c.add(OP["dot"], w1.dims, dt, [lT, dx])
                    outs.append(c.ew(OP["subtract"], w1, dw1))
                    w1T = c.add(OP["transpose"], (FF, H), dt, [w1], dimensions=[1, 0])
                    dh_ = c.ew(OP["add"], dh_, c.add(OP["dot"], (N, H), dt, [dx, w1T]))
                else:
                    dh_ = c.ew(OP["add"], dh_, dx)
            if len(c.nodes) + 3 * len(P.reducers) > 2.6 * fwd_budget:
                break
        d3 = c.add(OP["reshape"], (B, S, H), dt, [dh_])
        zeros = c.bcast(c.const(dt), (V, H), [])
        rr = P.reducer(dt, OP["add"])
        demb = c.add(OP["scatter"], (V, H), dt, [zeros, ids, d3], calls=[rr])
        outs.append(c.ew(OP["subtract"], table, demb))
    root = c.add(OP["tuple"], (), TUPLE, outs, tuple_size=len(outs))
    c.root = root
    return P


def sample_layout_graph(rng, src, n_lo, n_hi, c_lo):
    tiny = n_hi <= 200
    for attempt in range(60):
        target = float(np.exp(rng.uniform(np.log(n_lo), np.log(n_hi))))
        if src == "xla":
            budget = target * (0.42 if attempt % 2 == 0 else 0.6)
            P = build_cnn(rng, budget, tiny)
        else:
            budget = target * (0.5 if attempt % 2 == 0 else 0.8)
            P = build_tfm(rng, budget, tiny)
        A, _ = P.finalize(True)
        n = len(A["node_opcode"])
        if not (n_lo <= n <= n_hi):
            continue
        g = parse_graph(A)
        cand = configurable_candidates(g)
        if len(cand) < c_lo:
            continue
        return A, g, cand
    raise RuntimeError("could not sample a layout graph in range")


# ----------------------------------------------------------------------------
# layout configurations (what a search would try)
# ----------------------------------------------------------------------------
def _block(spec):
    b = np.full(6, -1.0, np.float32)
    b[:len(spec)] = spec
    return b


def _rand_spec(rng, r):
    if r <= 0:
        return []
    if r == 1:
        return [0]
    perm = rng.permutation(r).tolist()
    if r >= 3 and rng.random() < 0.6:
        return perm[:2]
    return perm


def gen_layout_configs(rng, g, cfg_nodes, c, search):
    nc = len(cfg_nodes)
    ranks = [layout_blocks_ranks(g, v) for v in cfg_nodes]
    refs = []
    for v in cfg_nodes:
        if g.op[v] in (OP["convolution"], OP["dot"]):
            l, r = operand_roles(g, v)
        else:
            l, r = g.operands[v][0], None
        refs.append((g.deflay[v], g.deflay[l], g.deflay[r] if r is not None else None))
    out = np.full((c, nc, 18), -1.0, np.float32)
    if search == "random":
        def rand_specs(r):
            if r == 1:
                return np.zeros((c, 1), np.float32)
            sp = np.argsort(rng.random((c, r)), axis=1).astype(np.float32)
            if r >= 3:
                sp[rng.random(c) < 0.6, 2:] = -1.0
            return sp

        styles = {}
        for j, v in enumerate(cfg_nodes):
            keep = rng.random(c) >= 0.08  # else the whole node is left to the compiler
            for bi, r in enumerate(ranks[j]):
                r = int(r)
                if r == 0:
                    continue
                key = (bi, r, int(g.op[v]))
                own = rand_specs(r)
                if key in styles:
                    use = rng.random(c) < 0.5
                    own = np.where(use[:, None], styles[key], own)
                else:
                    styles[key] = own
                m = keep & ((bi == 0) | (rng.random(c) >= 0.15))
                blk = out[:, j, 6 * bi:6 * bi + r]
                blk[m] = own[m]
                out[:, j, 6 * bi:6 * bi + r] = blk
        return out
    # default search: a fixed base near the compiler's choice plus a few mutations
    base = np.full((nc, 18), -1.0, np.float32)
    for j in range(nc):
        for bi, r in enumerate(ranks[j]):
            if r >= 2 and rng.random() < (0.45 if bi == 0 else 0.3):
                base[j, 6 * bi:6 * bi + 6] = _block(refs[j][bi][:2].tolist())
    hot = [j for j in range(nc) if rng.random() < 0.35] or [int(rng.integers(nc))]
    for i in range(c):
        cfg = base.copy()
        if rng.random() < 0.12:
            out[i] = cfg
            continue
        k = 1 + int(rng.poisson(1.0))
        for _ in range(k):
            j = int(rng.choice(hot)) if rng.random() < 0.75 else int(rng.integers(nc))
            choices = [bi for bi, r in enumerate(ranks[j]) if r >= 2]
            if not choices:
                continue
            bi = int(rng.choice(choices))
            r = int(ranks[j][bi])
            cur = refs[j][bi].tolist()
            spec = cfg[j, 6 * bi:6 * bi + 6]
            specified = [int(x) for x in spec if x >= 0]
            cur = specified + [d for d in cur if d not in specified]
            u = rng.random()
            if u < 0.6:
                new = [cur[1], cur[0]] + cur[2:]
            elif u < 0.9:
                d = int(rng.integers(1, r))
                new = [cur[d]] + [x for x in cur if x != cur[d]]
            else:
                new = rng.permutation(r).tolist()
            cfg[j, 6 * bi:6 * bi + 6] = _block(new[:2] if r >= 3 else new)
        out[i] = cfg
    return out


# ----------------------------------------------------------------------------
# layout law (reads only the file's arrays)
# ----------------------------------------------------------------------------
def complete_layout(Bk, r, ref):
    """Complete (u,6) minor-to-major blocks (-1 = free) into (u,r) perms using ref's order."""
    u = Bk.shape[0]
    ref = np.broadcast_to(ref, (u, r)) if ref.shape[0] == 1 else ref
    if ref.shape[0] != u:
        ref = np.broadcast_to(ref[:1], (u, r))
    if r == 0:
        return np.zeros((u, 0), np.int64)
    spec = Bk[:, :r]
    k = (spec >= 0).cumprod(axis=1).sum(axis=1)
    ok = np.all(Bk[:, r:] < 0, axis=1) if r < 6 else np.ones(u, bool)
    cnt = np.zeros((u, r), np.int64)
    inspec = np.zeros((u, r), bool)
    for i in range(r):
        sel = i < k
        idx = spec[:, i]
        ok &= ~sel | ((idx >= 0) & (idx < r))
        np.add.at(cnt, (np.nonzero(sel & (idx >= 0) & (idx < r))[0], idx[sel & (idx >= 0) & (idx < r)]), 1)
        inspec |= (ref == idx[:, None]) & sel[:, None]
    ok &= np.all(cnt <= 1, axis=1)
    ok &= np.all((spec < 0) | (np.arange(r)[None, :] < k[:, None]), axis=1)
    order = np.argsort(inspec, axis=1, kind="stable")
    rem = np.take_along_axis(ref, order, axis=1)
    out = np.empty((u, r), np.int64)
    for pos in range(r):
        out[:, pos] = np.where(pos < k, spec[:, pos], rem[np.arange(u), np.clip(pos - k, 0, r - 1)])
    out = np.where(ok[:, None], out, ref)
    return out


def pid(P):
    w = 7 ** np.arange(P.shape[1])
    return (P * w[None, :]).sum(axis=1)


def _dimsel(dims, idx):
    return np.asarray(dims, np.float64)[idx]


def canon(dims, P):
    """Move size-1 dims to the major end: they occupy no tiles."""
    if P.shape[1] <= 1:
        return P
    big = np.asarray(dims)[P] > 1
    order = np.argsort(~big, axis=1, kind="stable")
    return np.take_along_axis(P, order, axis=1)


def lane_pad(d):
    d = np.maximum(np.asarray(d, np.float64), 1.0)
    return d * (pad_to(d, 128) / d) ** 0.6


def padded_bytes(dims, P, b):
    r = len(dims)
    if r == 0:
        return np.array([float(b)])
    P = canon(dims, P)
    d0 = _dimsel(dims, P[:, 0])
    if r == 1:
        return lane_pad(d0) * b
    d1 = _dimsel(dims, P[:, 1])
    vol = float(np.prod(np.asarray(dims, np.float64)))
    return vol / (d0 * d1) * lane_pad(d0) * pad_to(d1, sub_rows(b)) * b


def copy_cost(dims, b, Pfrom, Pto):
    if len(dims) <= 1:
        return np.zeros(1)
    Pfrom = canon(dims, Pfrom)
    Pto = canon(dims, Pto)
    eq = pid(Pfrom) == pid(Pto)
    same_minor = Pfrom[:, 0] == Pto[:, 0]
    t = COPY_LAUNCH + (padded_bytes(dims, Pfrom, b) + padded_bytes(dims, Pto, b)) / HBM_BW * np.where(same_minor, 1.0, 1.8)
    return np.where(eq, 0.0, t)


def _minor2(P, dims):
    P = canon(dims, P)
    m0 = P[:, 0]
    m1 = P[:, 1] if P.shape[1] > 1 else np.full(P.shape[0], -1)
    return m0, m1


def _rows(dims, P, b):
    """(number of tile-rows, bytes of one tile-row) of an array under layout P."""
    r = len(dims)
    if r == 0:
        return np.ones(1), np.full(1, 512.0)
    P = canon(dims, P)
    d0 = _dimsel(dims, P[:, 0])
    rowb = lane_pad(d0) * sub_rows(b) * b
    if r == 1:
        return np.ones_like(d0), lane_pad(d0) * b
    d1 = _dimsel(dims, P[:, 1])
    vol = float(np.prod(np.asarray(dims, np.float64)))
    return vol / (d0 * d1) * np.ceil(d1 / sub_rows(b)), rowb


def mxu_group_cost(g, h, Pin, Pk, Pout, lhs, rhs, stream_bytes, stream_rowb, nbc, n_e, res_in=1.0, res_out=1.0):
    nf = g.nf[h]
    O, X, W = g.dims[h], g.dims[lhs], g.dims[rhs]
    bo, bx, bw = g.b[h], g.b[lhs], g.b[rhs]
    rO, rX = len(O), len(X)
    w_in = np.ones(max(rX, 1))
    w_out = np.ones(max(rO, 1))
    if g.op[h] == OP["convolution"]:
        fi, ki, ko, of = int(nf[94]), int(nf[99]), int(nf[100]), int(nf[106])
        ns = max(rX - 2, 0)
        isp = [int(x) for x in nf[95:95 + ns]]
        wins = [max(1, int(x)) for x in nf[37:37 + ns]]
        osp = [d for d in range(rO) if d not in (int(nf[105]), of)]
        for i, d in enumerate(isp):
            if d < rX:
                w_in[d] = wins[i]
        for i, d in enumerate(osp[:ns]):
            w_out[d] = wins[i]
        fi = min(fi, rX - 1)
        K = float(X[fi]) * float(np.prod(wins)) if wins else float(X[fi])
    else:
        nb = rO - 2
        fi = rX - 1
        ki = max(nb, 0)
        ko = len(W) - 1
        of = rO - 1
        K = float(X[fi])
    volO = float(np.prod(np.asarray(O, np.float64)))
    flops = 2.0 * volO * K
    m0, m1 = _minor2(Pin, X)
    Kc = float(X[fi])
    u_in = np.where(m0 == fi, 1.0, np.where(m1 == fi, 0.8, 0.55))
    u_k = np.where(m0 == fi, math.sqrt(Kc / pad_to(Kc, 128)), 0.85)
    mo0, mo1 = _minor2(Pout, O)
    fill_o = np.sqrt(_dimsel(O, mo0) / pad_to(_dimsel(O, mo0), 128))
    u_n = np.where(mo0 == of, fill_o, 0.7 * fill_o)
    k0, k1 = _minor2(Pk, W)
    feat = lambda m: (m == ki) | (m == ko)
    u_w = np.where(feat(k0) & feat(k1), 1.0, np.where(feat(k0), 0.85, 0.6))
    peak = PEAK16 if max(bx, bw) <= 2 else PEAK16 / 4.0
    t_comp = flops / (peak * u_in * u_k * u_n * u_w)
    # working set per output tile-row
    fX = np.ones(max(rX, 1))
    fX[fi] = X[fi]
    for d in range(rX):
        if d != fi and w_in[d] > 1:
            fX[d] = w_in[d]
    sx = sub_rows(bx)
    tot = float(np.prod(fX))
    f_m0 = fX[m0]
    f_m1 = np.where(m1 >= 0, fX[np.clip(m1, 0, None)], 1.0)
    depth = tot / (f_m0 * f_m1)
    m1fac = np.where(m1 == fi, np.ceil(Kc / sx),
                     np.where((m1 >= 0) & (w_in[np.clip(m1, 0, None)] > 1),
                              (sx + w_in[np.clip(m1, 0, None)] - 1) / sx, 1.0))
    depth = depth * m1fac
    row_in = lane_pad(_dimsel(X, m0)) * sx * bx
    nrows, row_out = _rows(O, Pout, bo)
    acc = row_out * (4.0 / bo) if bo < 4 else 0.0
    b_in = padded_bytes(X, Pin, bx)
    bk = padded_bytes(W, Pk, bw)
    wres = np.minimum(bk, VMEM / 2)
    nwb = np.ceil(bk / (VMEM / 2))
    # a small lhs stays resident like the weights; otherwise it is streamed in units
    in_res = (b_in <= VMEM / 4) & (b_in + wres <= 0.6 * VMEM)
    in_unit = np.where(in_res, 0.0, np.minimum(row_in * depth, b_in))
    avail = VMEM - wres - np.where(in_res, b_in, 0.0)
    # how many output tile-rows one input unit serves
    d0x = _dimsel(X, m0)
    d1x = np.where(m1 >= 0, _dimsel(X, np.clip(m1, 0, None)), 1.0)
    p_in = np.where(m0 == fi, np.minimum(d1x, sx), np.where(m1 == fi, np.minimum(d0x, 128), np.minimum(d0x, 128) * np.minimum(d1x, sx)))
    d0o = _dimsel(O, mo0)
    d1o = np.where(mo1 >= 0, _dimsel(O, np.clip(mo1, 0, None)), 1.0)
    e_row = np.maximum(np.minimum(d0o, 128) * np.minimum(d1o, sub_rows(bo)), 1.0)
    rpu = np.maximum(1.0, p_in * float(O[of]) / e_row)
    rowstuff = row_out + stream_rowb + 0.5 * nbc * row_out + acc
    R1 = np.floor((avail / 2.0 - in_unit) / rowstuff)
    R2 = np.floor(avail / (2.0 * (in_unit / rpu + rowstuff)))
    R = np.where(R2 >= rpu, R2, R1)
    R = np.minimum(R, nrows)
    Rc = np.maximum(R, 1.0)
    refetch = np.where(in_res, 1.0, np.sqrt(np.minimum(4.0, np.ceil(rpu / Rc))))
    w_m1 = np.where(mo1 >= 0, w_out[np.clip(mo1, 0, None)], 1.0)
    halo = 1.0 + (w_m1 - 1.0) / (Rc * sub_rows(bo))
    halo = np.where(in_res, 1.0, halo)
    b_out = padded_bytes(O, Pout, bo)
    t_mem = (b_in * nwb * halo * refetch * res_in + bk + b_out * res_out + stream_bytes) / HBM_BW
    t_vpu = n_e * b_out / bo / VPU_RATE
    steps = np.ceil(nrows / Rc)
    t2 = np.maximum(t_comp + t_vpu, t_mem) + steps * C_STEP
    r_single = np.clip(np.floor((avail - in_unit) / rowstuff), 1.0, rpu)
    t1 = t_comp + t_vpu + t_mem + np.ceil(nrows / r_single) * C_STEP * 2.0
    unit1 = in_unit + rowstuff
    s = np.minimum(np.ceil(unit1 / np.maximum(avail, 1.0)), 4.0)
    t0 = t_comp * (1.0 + 0.15 * s) + t_vpu + t_mem * s ** 1.25 + np.ceil(nrows / rpu) * s * C_STEP * 2.0
    t = np.where(R >= 1, t2, np.where(avail >= unit1, t1, t0))
    return t + LAUNCH


def _data_operand(g, v):
    ops = [p for p in g.operands[v] if g.rank[p] >= 1 and not g.istuple[p]]
    if not ops:
        return None
    flt = [p for p in ops if g.ty[p] not in (S32, U32, S8, PRED, 3, 5, 6, 7, 9)]
    cand = flt or ops
    return max(cand, key=lambda p: (g.vol[p], -p))


def index_operand(g, v):
    ops = [p for p in g.operands[v] if g.rank[p] >= 1 and g.ty[p] in (S32, U32, 5, 9)]
    return ops[0] if ops else None


def gather_like_cost(g, v, T, Pt, n_idx, row, scatter=False):
    dims = g.dims[T]
    bt = g.b[T]
    outdims = g.dims[v]
    cand = [d for d in range(len(dims)) if dims[d] not in outdims] if not scatter else []
    if scatter:
        upd = [p for p in g.operands[v] if p != T and g.rank[p] >= 1 and g.ty[p] not in (S32, U32)]
        ud = g.dims[upd[0]] if upd else ()
        cand = [d for d in range(len(dims)) if dims[d] not in ud]
    gd = max(cand, key=lambda d: dims[d]) if cand else 0
    m0, m1 = _minor2(Pt, dims)
    d0 = _dimsel(dims, m0)
    lane_pad = pad_to(d0, 128) / d0
    rowb = row * bt * np.where(m0 == gd, 1.0, lane_pad)
    major = n_idx * np.maximum(rowb, 512.0) / HBM_BW + n_idx * 2.0
    second = n_idx * np.maximum(rowb, 512.0) * sub_rows(bt) / HBM_BW + n_idx * 2.0
    minor = n_idx * row * 64.0 / HBM_BW + n_idx * row * 0.5
    t = np.where(m0 == gd, minor, np.where(m1 == gd, second, major))
    if scatter:
        t = t * 1.6 * np.where(m0 == gd, 2.0, 1.0)
    return t


DEBUG = None


def _dbg(kind, v, arr):
    if DEBUG is not None:
        DEBUG.append((kind, v, np.array(arr, np.float64)))


def layout_law(A):
    g = parse_graph(A)
    n = g.n
    ids = A["node_config_ids"].astype(np.int64)
    ncf = A["node_config_feat"]
    c = ncf.shape[0]
    flat = np.ascontiguousarray(ncf.reshape(c, -1))
    uq, inv = np.unique(flat, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    u = uq.shape[0]
    Uc = np.rint(uq.reshape(u, len(ids), 18)).astype(np.int64)
    cfgpos = {int(v): j for j, v in enumerate(ids)}
    L = [None] * n
    req = {}
    inh = [-1] * n
    roles = {}
    for v in range(n):
        r = int(g.rank[v])
        if r == 0 or g.istuple[v]:
            continue
        opv = int(g.op[v])
        if v in cfgpos:
            j = cfgpos[v]
            L[v] = complete_layout(Uc[:, j, 0:6], r, g.deflay[v][None, :])
            if opv in (OP["convolution"], OP["dot"]):
                lhs, rhs = operand_roles(g, v)
            else:
                lhs, rhs = (g.operands[v][0] if g.operands[v] else None), None
            roles[v] = (lhs, rhs)
            if lhs is not None and L[lhs] is not None:
                req[(v, lhs)] = complete_layout(Uc[:, j, 6:12], int(g.rank[lhs]), L[lhs])
            if opv == OP["convolution"] and rhs is not None and L[rhs] is not None:
                req[(v, rhs)] = complete_layout(Uc[:, j, 12:18], int(g.rank[rhs]), L[rhs])
        elif opv in ELEMENTWISE:
            same = [p for p in g.operands[v] if L[p] is not None and np.array_equal(g.dims[p], g.dims[v])]
            pref = [p for p in same if g.op[p] not in FREE_SOURCES]
            src = pref[0] if pref else (same[0] if same else None)
            if src is not None:
                L[v] = L[src]
                inh[v] = src
            else:
                L[v] = g.deflay[v][None, :]
            for p in pref:
                if p != src:
                    req[(v, p)] = L[v]
        else:
            L[v] = g.deflay[v][None, :]
            if opv in (OP["convolution"], OP["dot"]):
                roles[v] = operand_roles(g, v)
    # on-chip residency of small intermediates: budget shrinks with the number of live tensors
    live = np.zeros(n + 1)
    for v in range(n):
        if L[v] is None or g.op[v] in (OP["parameter"], OP["gte"], OP["constant"]) or not g.consumers[v]:
            continue
        last = max(g.consumers[v])
        if last > v + 1:
            live[v + 1] += 1
            live[last] -= 1
    live = np.cumsum(live)[:n]
    res = [1.0] * n
    for v in range(n):
        if L[v] is None or g.op[v] in (OP["parameter"], OP["gte"], OP["constant"]) or g.op[v] in FREE_SOURCES:
            continue
        budget = PIN_BASE / (1.0 + live[v] / LIVE_REF)
        res[v] = np.where(padded_bytes(g.dims[v], L[v], g.b[v]) <= budget, 0.1, 1.0)
    total = np.zeros(u)
    # relayout copies
    for (v, p), Pq in req.items():
        if g.op[v] in (OP["reshape"], OP["transpose"]):
            continue  # handled with the node itself
        total = total + copy_cost(g.dims[p], g.b[p], L[p], Pq) * g.trip[v]
        _dbg("copy", v, copy_cost(g.dims[p], g.b[p], L[p], Pq) * g.trip[v])
    # fusion groups
    group = [-1] * n
    members = {}
    for v in range(n):
        if L[v] is None:
            continue
        opv = int(g.op[v])
        if opv in ELEMENTWISE:
            src = inh[v]
            if src >= 0 and group[src] >= 0 and len(g.consumers[src]) == 1 and \
                    (g.op[src] in ELEMENTWISE or g.op[src] in FUSE_ANCHORS) and members[group[src]][-1] == src:
                group[v] = group[src]
                members[group[v]].append(v)
                continue
            group[v] = v
            members[v] = [v]
        elif opv in FUSE_ANCHORS:
            group[v] = v
            members[v] = [v]
    for h, M in members.items():
        tail = M[-1]
        Pout = L[tail]
        sbytes = np.zeros(1)
        srow = np.zeros(1)
        nbc = 0
        n_e = 0
        for m in M:
            if g.op[m] in ELEMENTWISE:
                n_e += 1
            if m == h and g.op[h] not in ELEMENTWISE:
                continue
            for p in g.operands[m]:
                if p in M or g.rank[p] == 0 or g.istuple[p]:
                    continue
                if g.op[p] in FREE_SOURCES:
                    if g.rank[p] == g.rank[m]:
                        nbc += 1
                    continue
                if np.array_equal(g.dims[p], g.dims[m]):
                    sbytes = sbytes + padded_bytes(g.dims[p], L[m], g.b[p]) * res[p]
                    srow = srow + _rows(g.dims[p], L[m], g.b[p])[1]
                else:
                    sbytes = sbytes + padded_bytes(g.dims[p], L[p], g.b[p]) * res[p]
        opv = int(g.op[h])
        b_tail = padded_bytes(g.dims[tail], Pout, g.b[tail])
        elems_tail = b_tail / g.b[tail]
        b_tail = b_tail * res[tail]
        if opv in (OP["convolution"], OP["dot"]):
            lhs, rhs = roles.get(h, operand_roles(g, h))
            if lhs is None or rhs is None or L[lhs] is None or L[rhs] is None:
                t = b_tail / HBM_BW + LAUNCH
            else:
                Pin = req.get((h, lhs), L[lhs])
                Pk = req.get((h, rhs), L[rhs])
                t = mxu_group_cost(g, h, Pin, Pk, Pout, lhs, rhs, sbytes, srow, nbc, n_e, res[lhs], res[tail])
        else:
            t = (sbytes + b_tail) / HBM_BW + n_e * elems_tail / VPU_RATE + LAUNCH
            t = t + anchor_cost(g, h, L, opv, res)
        total = total + t * g.trip[h]
        _dbg("group%d" % opv, h, t * g.trip[h])
    # non-fused ops with layout-dependent cost
    for v in range(n):
        if L[v] is None or group[v] >= 0:
            continue
        opv = int(g.op[v])
        if opv in ZERO_COST:
            continue
        t = other_cost(g, v, L, req, opv)
        if t is not None:
            total = total + t * g.trip[v]
            _dbg("other%d" % opv, v, t * g.trip[v])
    # whole-graph HBM pressure
    F = np.zeros(1)
    for v in range(n):
        if L[v] is None or g.op[v] in FREE_SOURCES or g.rank[v] == 0:
            continue
        if g.op[v] in (OP["parameter"], OP["gte"]) or (g.consumers[v] and max(g.consumers[v]) - v > LIVE_SPAN):
            F = F + padded_bytes(g.dims[v], L[v], g.b[v])
    press = 1.0 + 0.5 * np.maximum(0.0, F / HBM_BUDGET - 1.0) ** 1.2
    _dbg("F", -1, F)
    total = total * press
    _dbg("press", -1, press)
    return np.broadcast_to(total, (u,))[inv].astype(np.float64)


def anchor_cost(g, h, L, opv, res):
    """Extra cost of a fusion's non-MXU anchor (beyond streaming its output)."""
    O = g.dims[h]
    if opv == OP["reduce"]:
        x = _data_operand(g, h)
        if x is None:
            return 0.0
        P = L[x]
        k = int(g.rank[x] - g.rank[h])
        rd = set(int(d) for d in g.nf[h, 31:31 + k])
        m0, m1 = _minor2(P, g.dims[x])
        in0 = np.isin(m0, list(rd))
        in1 = np.isin(m1, list(rd))
        f = np.where(in0, np.where(in1, 1.5, 1.9), np.where(in1, 1.3, 1.0))
        nrow, rowb = _rows(g.dims[x], P, g.b[x])
        chunk = rowb * np.minimum(nrow, 8)
        f = np.where(~in0 & ~in1 & (chunk < 16384), 1.3, f)
        return padded_bytes(g.dims[x], P, g.b[x]) * f * res[x] / HBM_BW
    if opv == OP["gather"]:
        T = _data_operand(g, h)
        idx = index_operand(g, h)
        if T is None:
            return 0.0
        n_idx = g.vol[idx] if idx is not None else 1.0
        row = g.vol[h] / max(n_idx, 1.0)
        return gather_like_cost(g, h, T, L[T], n_idx, row)
    if opv == OP["dynamic_slice"]:
        X = _data_operand(g, h)
        if X is None or g.rank[X] != g.rank[h]:
            return 0.0
        return slice_like_cost(g, X, O, L[X], 1.0)
    if opv in (OP["reduce_window"],):
        X = _data_operand(g, h)
        if X is None:
            return 0.0
        r = int(g.rank[X])
        w = np.maximum(g.nf[h, 37:37 + r], 1)
        m0, m1 = _minor2(L[X], g.dims[X])
        f = np.where(w[m0] > 1, 1.5, 1.0) * np.where((m1 >= 0) & (w[np.clip(m1, 0, None)] > 1), 1.2, 1.0)
        return padded_bytes(g.dims[X], L[X], g.b[X]) * f / HBM_BW
    if opv == OP["concatenate"]:
        d = int(g.nf[h, 31])
        t = 0.0
        for p in g.operands[h]:
            if L[p] is not None:
                t = t + padded_bytes(g.dims[p], L[p], g.b[p]) * np.where(canon(O, L[h])[:, 0] == d, 1.6, 1.0) / HBM_BW
        return t
    if opv in (OP["slice"], OP["pad"], OP["reverse"]):
        X = _data_operand(g, h)
        if X is None:
            return 0.0
        return padded_bytes(g.dims[X], L[X], g.b[X]) / HBM_BW
    return 0.0


def slice_like_cost(g, X, Sd, P, mult):
    dims = g.dims[X]
    sl = [d for d in range(len(dims)) if d < len(Sd) and Sd[d] < dims[d]]
    m0, m1 = _minor2(P, dims)
    bx = g.b[X]
    base = padded_bytes(np.asarray(Sd), P, bx)
    s0 = np.isin(m0, sl)
    s1 = np.isin(m1, sl)
    d0 = _dimsel(Sd, m0)
    d1 = np.where(m1 >= 0, _dimsel(Sd, np.clip(m1, 0, None)), 1.0)
    f = np.where(s0, 2.5 * (1.0 + 128.0 / np.maximum(d0, 1)), np.where(s1, 1.2 * (1.0 + sub_rows(bx) / np.maximum(d1, 1)), 1.0))
    return base * f * mult / HBM_BW


def other_cost(g, v, L, req, opv):
    O = g.dims[v]
    if opv in (OP["reshape"], OP["transpose"]):
        if not g.operands[v]:
            return None
        x = g.operands[v][0]
        if L[x] is None:
            return None
        Pin = req.get((v, x), L[x])
        t = copy_cost(g.dims[x], g.b[x], L[x], Pin)
        Pout = L[v]
        if opv == OP["transpose"]:
            r = int(g.rank[v])
            perm = np.rint(g.nf[v, 31:31 + r]).astype(np.int64)
            if sorted(perm.tolist()) != list(range(r)):
                perm = np.arange(r)
            mapped = perm[Pout]
            return t + copy_cost(g.dims[x], g.b[x], Pin, np.broadcast_to(mapped, (max(mapped.shape[0], Pin.shape[0]), r)))
        X = g.dims[x]
        rx, ro = len(X), len(O)
        desc_in = pid(canon(X, Pin)) == pid(canon(X, np.arange(rx - 1, -1, -1)[None, :]))[0]
        desc_out = pid(canon(O, Pout)) == pid(canon(O, np.arange(ro - 1, -1, -1)[None, :]))[0]
        s = sub_rows(g.b[v])
        compat = X[-1] == O[-1] and (rx < 2 or ro < 2 or X[-2] == O[-2] or (X[-2] % s == 0 and O[-2] % s == 0))
        free = desc_in & desc_out & bool(compat)
        mo_in = _dimsel(X, canon(X, Pin)[:, 0])
        mo_out = _dimsel(O, canon(O, Pout)[:, 0])
        ct = COPY_LAUNCH + (padded_bytes(X, Pin, g.b[x]) + padded_bytes(O, Pout, g.b[v])) / HBM_BW * \
            np.where(mo_in == mo_out, 1.0, 1.8)
        return t + np.where(free, 0.0, ct)
    if opv == OP["scatter"]:
        T = _data_operand(g, v)
        idx = index_operand(g, v)
        if T is None:
            return None
        upd = [p for p in g.operands[v] if p != T and g.rank[p] >= 1 and g.ty[p] not in (S32, U32)]
        n_idx = g.vol[idx] if idx is not None else 1.0
        row = (g.vol[upd[0]] if upd else 1.0) / max(n_idx, 1.0)
        t = gather_like_cost(g, v, T, L[T], n_idx, row, scatter=True)
        if upd:
            t = t + padded_bytes(g.dims[upd[0]], L[upd[0]], g.b[upd[0]]) / HBM_BW
        return t + LAUNCH
    if opv == OP["dynamic_update_slice"]:
        X = _data_operand(g, v)
        if X is None:
            return None
        ups = [p for p in g.operands[v] if p != X and g.rank[p] == g.rank[X]]
        if not ups:
            return None
        return slice_like_cost(g, X, g.dims[ups[0]], L[X], 2.0) + LAUNCH
    if opv == OP["select_and_scatter"]:
        X = _data_operand(g, v)
        r = int(g.rank[v])
        w = np.maximum(g.nf[v, 37:37 + r], 1)
        m0, _ = _minor2(L[v], O)
        f = np.where(w[m0] > 1, 1.5, 1.0)
        return 2.0 * padded_bytes(O, L[v], g.b[v]) * f / HBM_BW + LAUNCH
    if opv == OP["sort"]:
        return padded_bytes(O, L[v], g.b[v]) * max(1.0, math.log2(max(O[-1], 2))) * 0.5 / HBM_BW + LAUNCH
    if opv in (OP["allreduce"], 104, 111):
        return 4.0 * padded_bytes(O, L[v], g.b[v]) / HBM_BW + 5000.0
    if opv in ELEMENTWISE or opv in FUSE_ANCHORS:
        return None
    return padded_bytes(O, L[v], g.b[v]) / HBM_BW + LAUNCH


# ----------------------------------------------------------------------------
# tile graphs: one fused kernel each
# ----------------------------------------------------------------------------
def _rand_perm_for(rng, r, feat_last=True):
    if r <= 1:
        return list(range(r - 1, -1, -1))
    u = rng.random()
    if u < 0.55:
        return list(range(r - 1, -1, -1))
    if u < 0.8 and r >= 3:
        # feature minor, batch second-minor, the rest descending (as in real [3,0,2,1])
        return [r - 1, 0] + list(range(r - 2, 0, -1))
    if u < 0.9 and r >= 2:
        return [r - 2, r - 1] + list(range(r - 3, -1, -1))
    return rng.permutation(r).tolist()


def build_tile_graph(rng, n_lo, n_hi):
    for _ in range(100):
        A, fam = _build_tile_graph(rng, n_lo, n_hi)
        if n_lo <= len(A["node_opcode"]) <= n_hi:
            return A, fam
    raise RuntimeError("could not sample a tile graph in range")


def _build_tile_graph(rng, n_lo, n_hi):
    fam = str(rng.choice(["conv", "dot", "elem", "reduce"], p=[0.35, 0.3, 0.2, 0.15]))
    dt = F32 if rng.random() < 0.45 else BF16
    P = Prog()
    inner = Comp("loop")
    target = int(rng.integers(n_lo, n_hi + 1))
    inner_params = []

    def iparam(dims, ty, lay):
        p = inner.param(dims, ty, layout=lay)
        inner_params.append(p)
        return p

    if fam == "conv":
        k = int(rng.choice([1, 3, 3, 5]))
        B = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
        Hs = int(rng.choice([7, 14, 28, 56, 112]))
        while B * Hs * Hs > 400000 and B > 1:
            B //= 2
        cin = int(rng.choice([3, 16, 32, 64, 96, 128, 192, 256, 384, 512]))
        cout = int(rng.choice([32, 64, 96, 128, 192, 256, 384, 512, 1024]))
        lay = _rand_perm_for(rng, 4)
        klay = [3, 2, 1, 0] if rng.random() < 0.6 else [2, 3, 1, 0]
        x = iparam((B, Hs, Hs, cin), dt, lay)
        w = iparam((k, k, cin, cout), dt, klay)
        y = conv_node(inner, x, w, cout, k, 1, 2)
        y.a["layout"] = lay
    elif fam == "dot":
        M = int(rng.choice([256, 512, 1024, 2048, 4096, 8192, 16384]))
        K = int(rng.choice([128, 256, 512, 768, 1024, 2048, 4096]))
        N = int(rng.choice([64, 128, 256, 512, 1000, 1024, 2048, 4096]))
        if N >= M:
            N = max(64, M // 2)
        lay = _rand_perm_for(rng, 2)
        x = iparam((M, K), dt, [1, 0] if rng.random() < 0.8 else [0, 1])
        w = iparam((K, N), dt, [1, 0] if rng.random() < 0.7 else [0, 1])
        y = inner.add(OP["dot"], (M, N), dt, [x, w], layout=lay)
    elif fam == "elem":
        r = int(rng.choice([1, 2, 3, 4], p=[0.15, 0.45, 0.2, 0.2]))
        sizes = [int(rng.choice([2, 3, 8, 16, 32, 64, 100, 128, 256, 512, 1000, 1024, 2048, 4096, 8192]))
                 for _ in range(r)]
        while np.prod(sizes) > 3e7:
            i = int(np.argmax(sizes))
            sizes[i] = max(1, sizes[i] // 4)
        while np.prod(sizes) < 2048:
            sizes[int(rng.integers(r))] *= 4
        lay = _rand_perm_for(rng, r)
        y = iparam(tuple(sizes), dt, lay)
        y = inner.ew(int(rng.choice([OP["exponential"], OP["tanh"], OP["negate"], OP["convert"]])), y)
        y.a["layout"] = lay
    else:
        R_ = int(rng.choice([32, 128, 512, 1024, 4096, 8192, 16384]))
        C_ = int(rng.choice([16, 100, 128, 512, 768, 1000, 1024, 4096, 32000]))
        while R_ * C_ > 6e7:
            R_ //= 2
        lay = [1, 0] if rng.random() < 0.75 else [0, 1]
        xin = iparam((R_, C_), dt, lay)
        y = inner.ew(OP["exponential"], xin)
        y.a["layout"] = lay
        rd = 1 if rng.random() < 0.8 else 0
        mx = P.reduce(inner, y, [rd], OP["maximum"])
        mx.a["layout"] = [0]
        if rng.random() < 0.55:
            # reduce stays inside: the output keeps the full shape (softmax-like)
            b = inner.bcast(mx, y.dims, [1 - rd])
            b.a["layout"] = lay
            y = inner.ew(OP["subtract"], y, b)
            y.a["layout"] = lay
        else:
            y = mx
            lay = [0]
    out_dims = y.dims
    ops_un = [OP["exponential"], OP["tanh"], OP["negate"], OP["rsqrt"], OP["log"], OP["abs"], OP["convert"],
              OP["logistic"]]
    ops_bin = [OP["add"], OP["multiply"], OP["maximum"], OP["subtract"], OP["minimum"], OP["divide"]]
    if fam in ("conv", "dot") and rng.random() < 0.8:
        bias = iparam((out_dims[-1],), dt, [0])
        bb = inner.bcast(bias, out_dims, [len(out_dims) - 1])
        bb.a["layout"] = lay
        y = inner.ew(OP["add"], y, bb)
        y.a["layout"] = lay
    while len(inner.nodes) + 3 * len(P.reducers) + len(inner_params) + 2 < target:
        u = rng.random()
        if u < 0.3:
            y = inner.ew(int(rng.choice(ops_un)), y)
        elif u < 0.75:
            cb = inner.bcast(inner.const(dt), out_dims, [])
            cb.a["layout"] = lay
            y = inner.ew(int(rng.choice(ops_bin)), y, cb)
        elif u < 0.85:
            m = inner.ew(OP["compare"], y, y, ty=PRED)
            m.a["layout"] = lay
            y = inner.add(OP["select"], out_dims, y.ty, [m, y, y])
        else:
            slay = lay if rng.random() < 0.75 else _rand_perm_for(rng, len(out_dims))
            s = iparam(out_dims, dt, slay)
            y = inner.ew(int(rng.choice(ops_bin)), y, s)
        y.a["layout"] = lay
    multi = rng.random() < 0.12
    if multi:
        root = inner.add(OP["tuple"], (), TUPLE, [y, inner_params[0]], tuple_size=2)
    else:
        root = y
    inner.root = root
    outer = Comp("main")
    oparams = [outer.param(p.dims, p.ty, layout=p.a.get("layout")) for p in inner_params]
    if multi:
        fus = outer.add(OP["fusion"], (), TUPLE, [root] + oparams, tuple_size=2)
    else:
        fus = outer.add(OP["fusion"], out_dims, y.ty, [root] + oparams, layout=lay)
    P.loops = [inner]
    P.main = outer
    A, _ = P.finalize(with_splits=False)
    return A, fam


class TileInfo:
    pass


def tile_parse(A):
    g = parse_graph(A)
    n = g.n
    t = TileInfo()
    t.g = g
    last = n - 1
    outer_ops = set(g.operands[last]) if g.op[last] == OP["fusion"] else set()
    T = None
    if not g.istuple[last] and g.rank[last] > 0:
        T = last
    else:
        roots = [v for v in range(n - 1) if g.nf[v, 0] > 0.5 and v in outer_ops]
        rt = roots[-1] if roots else last - 1
        cands = [p for p in g.operands[rt] if g.rank[p] > 0] if g.istuple[rt] else [rt]
        T = max(cands, key=lambda p: g.vol[p]) if cands else rt
    t.T = T
    t.dims = g.dims[T]
    t.perm = g.deflay[T]
    t.b = g.b[T]
    anchors = [v for v in range(n) if g.op[v] in (OP["convolution"], OP["dot"]) and g.rank[v] > 0]
    t.anchor = None
    if anchors:
        a = max(anchors, key=lambda v: g.vol[v])
        if np.array_equal(g.dims[a], t.dims):
            t.anchor = a
    t.inner_params = [v for v in range(n) if g.op[v] == OP["parameter"] and v not in outer_ops and g.rank[v] > 0]
    excl = set()
    if t.anchor is not None:
        t.lhs, t.rhs = operand_roles(g, t.anchor)
        excl = {t.lhs, t.rhs}
    t.streams = []
    for p in t.inner_params:
        if p in excl or g.vol[p] < 0.5 * g.vol[T]:
            continue
        mism = not (np.array_equal(g.dims[p], t.dims) and np.array_equal(g.deflay[p], t.perm))
        t.streams.append(2.0 if mism else 1.0)
    inner = [v for v in range(n) if v not in outer_ops and v != last]
    t.n_ops = sum(1.0 for v in inner if g.op[v] in ELEMENTWISE and g.rank[v] > 0) + \
        0.5 * sum(1.0 for v in inner if g.op[v] == OP["broadcast"])
    reds = [v for v in range(n) if g.op[v] == OP["reduce"] and g.operands[v]]
    t.red = None
    if reds:
        r = max(reds, key=lambda v: g.vol[_data_operand(g, v)] if _data_operand(g, v) is not None else 0)
        x = _data_operand(g, r)
        if x is not None:
            k = int(g.rank[x] - g.rank[r])
            t.red = (r, x, [int(d) for d in g.nf[r, 31:31 + k]])
    return t


def phys_units(dims, perm, b):
    r = len(dims)
    phys = list(perm[::-1])  # major -> minor
    q = np.array([dims[d] for d in phys], np.float64)
    u = np.ones(r)
    if r >= 1:
        u[-1] = 128
    if r >= 2:
        u[-2] = sub_rows(b)
    return phys, q, u


def _tile_extents(bounds, q, u):
    """Tile element extents per physical dim from bounds (c,r) in units (0 = full)."""
    E = np.ceil(q / u)
    t = np.where(bounds > 0, bounds, E[None, :])
    return t * u[None, :]


def _padded_tile_bytes(ext_by_dim, perm, b):
    """Bytes of a tile given per logical dim extents (c, r) laid out with perm."""
    r = ext_by_dim.shape[1]
    if r == 0:
        return np.full(ext_by_dim.shape[0], float(b))
    tot = np.prod(ext_by_dim, axis=1)
    m0 = perm[0]
    e0 = ext_by_dim[:, m0]
    f = pad_to(e0, 128) / np.maximum(e0, 1)
    if r >= 2:
        m1 = perm[1]
        e1 = ext_by_dim[:, m1]
        f = f * pad_to(e1, sub_rows(b)) / np.maximum(e1, 1)
    return tot * f * b


VMEM_T = VMEM
RED_CHUNK = 2048.0
C_STEP_T = 85.0
LAUNCH_T = 450.0


def tile_law(A):
    t = tile_parse(A)
    return tile_eval(t, A["config_feat"].astype(np.float64))[0]


def tile_eval(t, cf):
    g = t.g
    c = cf.shape[0]
    r = len(t.dims)
    b = t.b
    phys, q, u = phys_units(t.dims, t.perm, b)
    ob = np.rint(cf[:, 8:8 + r])
    e = _tile_extents(ob, q, u)  # (c, r) physical
    steps = np.ceil(q[None, :] / e)
    G = np.prod(steps, axis=1)
    tile_el = np.prod(e, axis=1)
    proc = G * tile_el
    te = np.zeros((c, r))
    for j, d in enumerate(phys):
        te[:, d] = e[:, j]
    O_t = _padded_tile_bytes(np.minimum(te, np.asarray(t.dims, np.float64)[None, :]), t.perm, b)
    O_t = np.maximum(O_t, tile_el * b)
    in_tile = np.zeros(c)
    k_tile = np.zeros(c)
    in_traf = np.zeros(c)
    k_traf = np.zeros(c)
    acc = np.zeros(c)
    flops = np.zeros(c)
    Kst = np.ones(c)
    inner = np.ones(c)
    u_mxu = np.ones(c)
    peak = PEAK16
    if t.anchor is not None:
        a, X, W = t.anchor, t.lhs, t.rhs
        Xd = np.asarray(g.dims[X], np.float64)
        Wd = np.asarray(g.dims[W], np.float64)
        bx, bw = g.b[X], g.b[W]
        peak = PEAK16 if max(bx, bw) <= 2 else PEAK16 / 4
        kphys, kq, ku = phys_units(g.dims[W], g.deflay[W], bw)
        kb = np.rint(cf[:, 0:len(Wd)])
        ke_p = _tile_extents(kb, kq, ku)
        ke = np.zeros((c, len(Wd)))
        for j, d in enumerate(kphys):
            ke[:, d] = ke_p[:, j]
        ke = np.minimum(ke, Wd[None, :])
        nf = g.nf[a]
        if g.op[a] == OP["convolution"]:
            fi, ki, ko, of, obd = int(nf[94]), int(nf[99]), int(nf[100]), int(nf[106]), int(nf[105])
            ns = len(Xd) - 2
            isp = [int(x) for x in nf[95:95 + ns]]
            ksp = [int(x) for x in nf[101:101 + ns]]
            strides = [max(1, int(x)) for x in nf[45:45 + ns]]
            osp = [d for d in range(r) if d not in (obd, of)]
            Cin = Xd[fi]
            Cin_t = ke[:, ki]
            kst = np.ceil(Cin / Cin_t)
            xext = np.zeros((c, len(Xd)))
            xext[:, fi] = Cin_t
            kw_prod = 1.0
            for i in range(ns):
                ks_t = ke[:, ksp[i]]
                kst = kst * np.ceil(Wd[ksp[i]] / ks_t)
                xext[:, isp[i]] = np.minimum((te[:, osp[i]] - 1) * strides[i] + ks_t, Xd[isp[i]] + Wd[ksp[i]])
                kw_prod *= Wd[ksp[i]]
            xext[:, int(nf[93])] = te[:, obd]
            Kc = Cin * kw_prod
            Kst = kst
        else:
            nb = r - 2
            fi, ki, ko, of = len(Xd) - 1, nb, len(Wd) - 1, r - 1
            Kc = Xd[fi]
            Cin_t = ke[:, ki]
            Kst = np.ceil(Kc / Cin_t)
            xext = np.zeros((c, len(Xd)))
            for d in range(len(Xd) - 1):
                xext[:, d] = te[:, d]
            xext[:, fi] = Cin_t
        Cout = Wd[ko]
        e_of = np.minimum(te[:, of], t.dims[of])
        cout_kt = ke[:, ko]
        inner = np.where(cout_kt < e_of, np.ceil(e_of / cout_kt), 1.0)
        over = np.maximum(1.0, np.minimum(cout_kt, Cout) / e_of)
        in_tile = _padded_tile_bytes(np.minimum(xext, Xd[None, :] + 8), g.deflay[X], bx)
        k_tile = _padded_tile_bytes(ke, g.deflay[W], bw)
        k_all = float(np.prod(Wd)) * bw
        resident = (Kst == 1) & (cout_kt >= Cout) & (k_tile <= VMEM_T / 3)
        k_traf = np.where(resident, k_all, G * Kst * k_tile * over)
        in_traf = G * Kst * in_tile
        acc = np.where(Kst > 1, tile_el * 4.0, 0.0)
        flops = 2.0 * proc * Kc
        out_minor = t.perm[0]
        fill_n = np.where(out_minor == of, e_of / pad_to(e_of, 128), 0.7)
        x_minor = g.deflay[X][0]
        fill_k = np.where(x_minor == fi, Cin_t / pad_to(Cin_t, 128), 0.8)
        u_mxu = np.sqrt(np.clip(fill_n, 0.01, 1)) * np.sqrt(np.clip(fill_k, 0.01, 1))
    n_s = float(sum(t.streams))
    red_tile = np.zeros(c)
    red_traf = np.zeros(c)
    xlu = 1.0
    passes = np.ones(c)
    if t.red is not None:
        rr, xr, rd = t.red
        Xr = np.asarray(g.dims[xr], np.float64)
        rmin = g.deflay[xr][0] if len(Xr) else -1
        if rmin in rd:
            xlu = 1.5
        if len(g.dims[t.T]) < len(Xr) and np.array_equal(g.dims[rr], t.dims):
            red_ext = float(np.prod([Xr[d] for d in rd]))
            lanef = (pad_to(Xr[rmin], 128) / Xr[rmin]) if rmin in rd else 1.0
            chunk = min(red_ext, RED_CHUNK)
            red_steps = math.ceil(red_ext / chunk)
            red_tile = tile_el * chunk * g.b[xr] * lanef
            red_traf = G * red_tile * red_steps
            passes = np.full(c, 1.0)
            Kst = Kst * red_steps
        elif len(Xr) == r:
            cover = np.ones(c, bool)
            for d in rd:
                cover &= te[:, d] >= t.dims[d]
            passes = np.where(cover, 1.0, 2.0)
    n_ops = t.n_ops
    scratch = O_t * math.floor(n_ops / 12.0)
    ws = 2.0 * (in_tile + k_tile + O_t * (1.0 + n_s) + red_tile) + acc + scratch
    ws1 = in_tile + k_tile + O_t * (1.0 + n_s) + red_tile + acc + scratch
    t_mem = (in_traf + k_traf + G * O_t * (1.0 + n_s) * passes + red_traf) / HBM_BW
    t_comp = flops / (peak * u_mxu)
    t_vpu = proc * n_ops * xlu * passes / VPU_RATE
    over_h = G * Kst * inner * passes * C_STEP_T
    prologue = (in_tile + k_tile + O_t) / HBM_BW
    fit2 = np.maximum(t_mem, t_comp + t_vpu) + over_h + prologue
    fit1 = t_mem + t_comp + t_vpu + 1.3 * over_h
    s = np.ceil(ws1 / VMEM_T)
    spill = t_mem * s ** 1.2 + (t_comp + t_vpu) * (1.0 + 0.1 * s) + over_h * s
    tt = np.where(ws <= VMEM_T, fit2, np.where(ws1 <= VMEM_T, fit1, spill))
    return (tt + LAUNCH_T).astype(np.float64), ws


def _tile_options(E):
    E = int(E)
    base = [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512]
    opts = sorted(set([x for x in base if x <= E] + [E] + [d for d in range(1, min(E, 64) + 1) if E % d == 0]))
    return opts


def gen_tile_configs(rng, A, c):
    t = tile_parse(A)
    g = t.g
    r = len(t.dims)
    phys, q, u = phys_units(t.dims, t.perm, t.b)
    E = np.ceil(q / u).astype(int)
    has_k = t.anchor is not None
    if has_k:
        W = t.rhs
        kphys, kq, ku = phys_units(g.dims[W], g.deflay[W], g.b[W])
        KE = np.ceil(kq / ku).astype(int)
    # compiler default: start from full extents and shrink (major output dims first, then the
    # contraction tile, then the minor dims) until its working-set estimate fits half the VMEM
    dflt = E.copy().astype(float)
    kd = None
    jk = jo = kci = None
    if has_k:
        kd = KE.copy().astype(float)
        nf = g.nf[t.anchor]
        conv = g.op[t.anchor] == OP["convolution"]
        ko = int(nf[100]) if conv else len(g.dims[W]) - 1
        ki = int(nf[99]) if conv else max(r - 2, 0)
        of = int(nf[106]) if conv else r - 1
        jo = phys.index(of)
        jk = kphys.index(ko)
        kci = kphys.index(ki)

    def row(ob_, kb_):
        rw = np.zeros(24, np.float64)
        if kb_ is not None:
            rw[0:len(kb_)] = kb_
            rw[6] = kb_.sum()
            rw[7] = np.prod(kb_)
        rw[8:8 + r] = ob_
        rw[14] = ob_.sum()
        rw[15] = np.prod(ob_)
        return rw

    def sync():
        if has_k:
            kd[jk] = max(1, min(KE[jk], math.ceil(dflt[jo] * u[jo] / ku[jk])))

    order = [("o", j) for j in range(max(r - 2, 0))] + ([("k", kci)] if has_k else []) + \
        [("o", j) for j in range(max(r - 2, 0), r)]
    sync()
    ws = tile_eval(t, row(dflt, kd)[None, :])[1][0]
    for _ in range(200):
        if ws <= 0.5 * VMEM_T:
            break
        cands = []
        for kind, j in order:
            arr = dflt if kind == "o" else kd
            if arr[j] > 1:
                o2 = dflt.copy()
                k2 = kd.copy() if has_k else None
                (o2 if kind == "o" else k2)[j] = max(1, math.ceil(arr[j] / 2))
                if has_k:
                    k2[jk] = max(1, min(KE[jk], math.ceil(o2[jo] * u[jo] / ku[jk])))
                cands.append((o2, k2))
        if not cands:
            break
        wss = tile_eval(t, np.stack([row(o2, k2) for o2, k2 in cands]))[1]
        i = int(np.argmin(wss))
        if wss[i] >= ws:
            break
        dflt, kd = cands[i]
        ws = wss[i]
    opts = [_tile_options(x) for x in E]
    kopts = [_tile_options(x) for x in KE] if has_k else []
    rows = []
    for i in range(c):
        v = rng.random()
        ob = dflt.copy()
        kb = kd.copy() if has_k else None
        if v < 0.08:
            pass
        elif v < 0.5:
            for _ in range(1 + int(rng.integers(2))):
                jj = int(rng.integers(r))
                cur = int(ob[jj])
                cand = [x for x in opts[jj] if x != cur]
                if cand:
                    near = sorted(cand, key=lambda x: abs(math.log(x) - math.log(cur)))[:3]
                    ob[jj] = float(rng.choice(near))
            if has_k and rng.random() < 0.5:
                jj = int(rng.integers(len(KE)))
                kb[jj] = float(rng.choice(kopts[jj]))
        else:
            for jj in range(r):
                if rng.random() < 0.6:
                    w = np.sqrt(np.asarray(opts[jj], np.float64))
                    ob[jj] = float(rng.choice(opts[jj], p=w / w.sum()))
            if has_k:
                for jj in range(len(KE)):
                    if rng.random() < 0.6:
                        w = np.sqrt(np.asarray(kopts[jj], np.float64))
                        kb[jj] = float(rng.choice(kopts[jj], p=w / w.sum()))
        row = np.zeros(24, np.float32)
        if has_k:
            row[0:len(kb)] = kb
            row[6] = kb.sum()
            row[7] = np.prod(kb)
        row[8:8 + r] = ob
        row[14] = ob.sum()
        row[15] = np.prod(ob)
        rows.append(row)
    cfg = np.stack(rows)
    drow = np.zeros(24, np.float32)
    if has_k:
        drow[0:len(kd)] = kd
        drow[6] = kd.sum()
        drow[7] = np.prod(kd)
    drow[8:8 + r] = dflt
    drow[14] = dflt.sum()
    drow[15] = np.prod(dflt)
    return cfg, drow


# ----------------------------------------------------------------------------
# noise
# ----------------------------------------------------------------------------
def measure(rng, y, sigma, nu, p_out):
    t = np.clip(rng.standard_t(nu, size=len(y)), -12.0, 12.0)
    f = np.exp(sigma * t)
    out = rng.random(len(y)) < p_out
    if out.any():
        f[out] *= np.minimum(1.0 + 0.5 * rng.pareto(1.1, int(out.sum())), 30.0)
    return y * f


# ----------------------------------------------------------------------------
# names
# ----------------------------------------------------------------------------
XLA_MODELS = ["resnet50", "resnet_v1_101", "unet_3d", "efficientnet_b0", "inception_v3", "mask_rcnn",
              "retinanet", "vgg16", "mobilenet_v2", "densenet121", "shapemask", "magenta_dilated",
              "mnasnet", "spinenet49", "wavenet", "deeplab_v3", "ncf", "transformer_tf2"]
NLP_MODELS = ["bert_en_uncased_L-12_H-768_A-12", "small_bert_bert_en_uncased_L-4_H-256_A-4", "albert_en_base",
              "electra_small", "talking-heads_base", "mlperf_bert", "bert_multi_cased_L-12_H-768_A-12",
              "experts_pubmed", "lambert_en_uncased_L-24_H-1024_A-16", "t5_small", "gpt2_small"]
TILE_KINDS = {"conv": "fusion", "dot": "fusion", "elem": "fusion", "reduce": "fusion"}


def hex_id(rng, k):
    return "".join("0123456789abcdef"[i] for i in rng.integers(0, 16, k))


def layout_stem(rng, src, used):
    for _ in range(100):
        if src == "xla":
            m = str(rng.choice(XLA_MODELS))
            u = rng.random()
            if u < 0.4:
                st = "%s_batch_%d_%s" % (m, int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128])),
                                         str(rng.choice(["train", "inference", "eval"])))
            elif u < 0.8:
                st = "%s.%dx%d.%s" % (m, int(rng.choice([2, 4, 8])), int(rng.choice([2, 4, 8])),
                                      str(rng.choice(["fp16", "fp32", "bf16"])))
            else:
                st = "%s_%s" % (m, hex_id(rng, 6))
        else:
            m = str(rng.choice(NLP_MODELS))
            if rng.random() < 0.6:
                st = "%s_batch_size_%d_%s" % (m, int(rng.choice([8, 16, 24, 32, 64])),
                                              str(rng.choice(["train", "test", "eval"])))
            else:
                st = "%s.%dx%d.%s" % (m, int(rng.choice([2, 4, 8])), int(rng.choice([2, 4, 16])),
                                      str(rng.choice(["fp16", "bf16"])))
        if st not in used:
            used.add(st)
            return st
    st = "%s_%s" % (src, hex_id(rng, 12))
    used.add(st)
    return st


def tile_stem(rng, fam, nnodes, used):
    while True:
        fp = hex_id(rng, int(rng.integers(13, 17))).lstrip("0") or "1"
        sign = "-" if rng.random() < 0.5 else ""
        st = "%s_%d_%s%s" % (TILE_KINDS[fam], int(rng.integers(1, 400)), sign, fp)
        if st not in used:
            used.add(st)
            return st


# ----------------------------------------------------------------------------
# dataset writer
# ----------------------------------------------------------------------------
SCALES = {
    "small": dict(tile_counts=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay_counts=(16, 6, 4), lay_nodes=(200, 1500), lay_cfgnodes=(20, 120),
                  lay_cfg=(300, 3000), lay_cfg_test=(300, 600)),
    "tiny": dict(tile_counts=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay_counts=(4, 2, 2), lay_nodes=(40, 150), lay_cfgnodes=(5, 20),
                 lay_cfg=(30, 200), lay_cfg_test=(30, 60)),
}
SPLITS = ("train", "valid", "test")


def _logint(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def write_npz(root, rel, arrays):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrays)


def write_noiseless(root, rel, y):
    path = os.path.join(root, "noiseless", rel[:-4] + ".npy")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.asarray(y, np.float64))


def make_tile(root, seed, sc, factor):
    counts = [max(1, int(round(x * factor))) for x in sc["tile_counts"]]
    used = set()
    for si, split in enumerate(SPLITS):
        for gi in range(counts[si]):
            rng = np.random.default_rng([seed, 0, si, gi])
            nrng = np.random.default_rng([seed, 0, si, gi, 1])
            A, fam = build_tile_graph(rng, *sc["tile_nodes"])
            c = _logint(rng, *sc["tile_cfg"])
            cfg, drow = gen_tile_configs(rng, A, c - 1)
            pos = int(rng.integers(0, c))
            cfg = np.insert(cfg, pos, drow, axis=0).astype(np.float32)
            A["config_feat"] = cfg
            stem = hex_id(rng, 32) if split == "test" else tile_stem(rng, fam, len(A["node_opcode"]), used)
            rel = os.path.join("npz", "tile", "xla", split, stem + ".npz")
            if split == "test":
                A["config_runtime"] = np.zeros(c, np.int64)
                A["config_runtime_normalizers"] = np.ones(c, np.int64)
            else:
                y = tile_law(A)
                yd = float(tile_law({**A, "config_feat": drow[None, :].astype(np.float32)})[0])
                sigma = 0.02 * math.exp(nrng.normal(0.0, 0.7))
                meas = measure(nrng, y, sigma, 2.5, 0.006)
                norm = float(measure(nrng, np.array([yd]), sigma, 2.5, 0.006)[0])
                meas[pos] = norm
                A["config_runtime"] = np.maximum(1, np.rint(meas)).astype(np.int64)
                A["config_runtime_normalizers"] = np.full(c, max(1, int(round(norm))), np.int64)
                write_noiseless(root, rel, y)
            write_npz(root, rel, A)


def make_layout(root, seed, sc, factor, src, search, ci):
    counts = [max(1, int(round(x * factor))) for x in sc["lay_counts"]]
    n_lo, n_hi = sc["lay_nodes"]
    c_lo, c_hi = sc["lay_cfgnodes"]
    used = set()
    for si, split in enumerate(SPLITS):
        for gi in range(counts[si]):
            rng = np.random.default_rng([seed, ci, si, gi])
            nrng = np.random.default_rng([seed, ci, si, gi, 1])
            kind = src if (src == "nlp" or rng.random() < 0.8) else "nlp"
            A, g, cand = sample_layout_graph(rng, kind, n_lo, n_hi, c_lo)
            nc = min(len(cand), int(rng.integers(c_lo, c_hi + 1)))
            cfg_nodes = sorted(int(x) for x in rng.choice(cand, nc, replace=False))
            c = _logint(rng, *(sc["lay_cfg_test"] if split == "test" else sc["lay_cfg"]))
            A["node_config_ids"] = np.array(cfg_nodes, np.int64)
            A["node_config_feat"] = gen_layout_configs(rng, g, cfg_nodes, c, search)
            order = ["node_feat", "node_opcode", "edge_index", "node_config_ids", "node_config_feat", "node_splits"]
            A = {k: A[k] for k in order}
            stem = hex_id(rng, 32) if split == "test" else layout_stem(rng, src, used)
            rel = os.path.join("npz", "layout", src, search, split, stem + ".npz")
            if split == "test":
                A["config_runtime"] = np.zeros(c, np.int64)
            else:
                y = layout_law(A)
                sigma = 0.004 * math.exp(nrng.normal(0.0, 0.8))
                meas = measure(nrng, y, sigma, 3.0, 0.004)
                A["config_runtime"] = np.maximum(1, np.rint(meas)).astype(np.int64)
                write_noiseless(root, rel, y)
            write_npz(root, rel, A)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--scale", choices=sorted(SCALES), default="small")
    ap.add_argument("--graphs-factor", type=float, default=1.0)
    a = ap.parse_args(argv)
    sc = SCALES[a.scale]
    t0 = time.time()
    os.makedirs(a.out, exist_ok=True)
    make_tile(a.out, a.seed, sc, a.graphs_factor)
    ci = 1
    for src in ("xla", "nlp"):
        for search in ("default", "random"):
            make_layout(a.out, a.seed, sc, a.graphs_factor, src, search, ci)
            ci += 1
    print("wrote %s in %.1fs" % (a.out, time.time() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
