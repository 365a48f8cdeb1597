#!/usr/bin/env python3
"""blind_02: a synthetic TpuGraphs-format dataset whose runtimes follow an independent TPU cost law.

Usage:  python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F] [--jobs N]

Written without reading the tool under test.  numpy + standard library only.

THE LAW (private: nobody on the tool's side reads this file)
============================================================
The noise-free runtime is a deterministic function of what a file holds (node_feat, node_opcode,
edge_index, node_config_ids, node_config_feat / config_feat) and the constants below; it is
recomputed from the stored arrays.  Measurement noise touches only the stored labels.

Machine: HBM bandwidth BW, MXU peak per element width, a vector unit, and (8 x 128)-tiled memory:
the most-minor dim of an array is padded to a multiple of 128 lanes (dims <= 64 are packed: padded
to twice the next power of two), the second-most-minor to a multiple of SUB sublanes (8 / 16 / 32
for 4 / 2 / 1-byte elements; narrower dims packed the same way).  Byte counts below are such padded bytes.

LAYOUT collections: runtime = program overhead + sum of per-op times (ops run one after another).
  * Resolution.  A layout block lists dims from most minor; -1 entries are filled by the compiler:
    output -> remaining dims in the order of the node's default layout (node_feat 134-139);
    input -> in the order of the producer's effective layout; kernel -> in the order of the kernel
    producer's layout.  An all -1 input block means "compiler's choice": the producer's layout if
    its minor dim suits the op (input feature dim for convolution, contracting or row dim for dot,
    anything for reshape/transpose), else that layout with the preferred dim moved to minor.
    Layout-assigning ops: convolution, dot, reshape, transpose (unlisted ones act as all -1).
    Operand roles are inferred from shapes (conv dimension numbers; dot [..,M,K] x [..,K,N]).
  * Propagation.  Element-wise-like ops (same rank) take the layout of their dominant operand (the
    largest same-rank operand that is not broadcast/constant/iota/rng, lowest id on ties); reduce
    drops the reduced dims; everything else keeps its default layout.  Broadcasts etc. adapt freely.
  * Copies on edges whose producer layout differs from what the consumer needs: other operands of
    element-wise ops must match the op's layout; tuple / while / call / custom-call / outfeed /
    all-gather operands must be in their own default layout; layout-assigning ops need their input
    (and conv kernel) in the resolved layout.  Copy cost: minor dim unchanged -> strided DMA with
    efficiency run / (run + 384 B), run = contiguous bytes (padded minor row, or whole tiles and
    further kept dims when the two minor dims are kept); minor dim changed -> XLU transpose at
    1.6x (new minor = old second minor) or 2.4x (other) of read + write bytes.  Layouts differing
    only in where size-1 major dims sit are identical.  Each copy adds a fixed overhead.
  * Convolution: max(compute, memory) + 0.2 min(compute, memory) + extras.  compute = FLOPs /
    (PEAK * Cin-lane use * Cout-lane use * e_sub * e_kernel).  e_sub = 0.75 + 0.25 * sublane fill of
    the input's second-minor dim (x0.9 if that dim is windowed, x0.8 if strided).  e_kernel: minor
    (Cout, Cin) 1.0, (Cin, Cout) 0.93, Cout minor only 0.85 (+ weight relayout), else 0.8 (+ weight
    relayout).  Input minor != input feature -> internal relayout cost.  Output minor != output
    feature -> transposing store, 0.7 x copy cost.  Depthwise (1 input feature per group) runs on
    the vector unit.  memory = padded input + kernel + output bytes / BW.
  * Dot: FLOPs = 2 * out * K; lane use K, N and row fill of M; lhs minor K ideal, M x0.9, else a
    relayout; second-minor not in (M, K) x0.9; rhs minor N ideal, K x0.95, else relayout; output
    minor N direct, M -> 0.6 x copy, else a full copy.  Same max/min combination.
  * Reshape: bitcast (free) if both sides are in row-major physical order and keep the minor size;
    row-major but minor size changes -> 0.5 (both minor sizes multiples of 128) or 1.1 x read+write;
    otherwise a gather copy: 1.2 x read+write / efficiency of the shorter logically contiguous run.
  * Transpose: free if the output layout makes it a bitcast of the input, else a copy (above).
  * Other ops: element-wise 0.8 x padded output bytes / BW; reduce reads its padded input with
    factor 1 + 0.9 (minor dim reduced: cross-lane) + 0.25 (second minor reduced); slice / dynamic
    slice / pad / concatenate that cut the minor dim pay a strided-run efficiency; reduce-window
    with a window on the minor dim x1.6; all-reduce 3x; broadcasts 0.4x.  Fixed per-op overhead.

TILE collection: one fused kernel, output cut into tiles.  Bound b on output dim i gives a tile of
  b*128 elements on the output's minor dim, b elements on other dims (clipped; 0 = whole dim).
  time = launch + prologue DMA + ceil(tiles / 2 cores) * (per-tile time + inner steps * step overhead).
  Per tile: inner steps overlap MXU work with their DMA, then the epilogue overlaps vector work
  (one pass per element-wise op, on the padded tile) with streamed-input and output DMA.  DMA
  efficiency follows the contiguous run of the tile in each array's own layout (grows while the tile
  spans whole dims); inputs whose minor dim differs from the output's also pay an in-VMEM transpose.
  Convolution: input tile with halo ((T-1)*stride + (k-1)*dilation + 1), kernel bounds (same unit
  rule, on the kernel's dims and layout) give the Cin / Cout / spatial chunk of each inner step;
  MXU use = Cout-chunk lanes * Cin-chunk depth * row fill; weights stay resident when one chunk
  covers the whole kernel and the tile covers all output features.  Dot likewise (K, N chunks).
  Reductions read the whole reduced extent per tile (cross-lane extra work if the reduced dim is
  the input's minor).  Double-buffered working set over VMEM -> no overlap and a spill factor.
  The autotuner's space drops tilings > 25x slower than its best candidate; the compiler default
  (normalizer) is the argmin of the true time times a per-config log-normal estimate error (0.12).

CONFIG GENERATION: random search = random (partial) permutations, large dims favoured as minor;
default search = 5 rounds of 1-3 node mutations (near-default candidates) of the best 30% found so
far, judged by the noise-free law, plus re-measured duplicates.

NOISE (heavy tailed, multiplicative): Student-t(2.5) jitter (0.25% layout, 1% tile) plus outliers
(2% / 3% of measurements) slowed by 1 + min(s * (1 + Pareto(1.2)), 3), s = 0.03 / 0.08.  Tile
normalizers carry their own draw.
"""
import argparse
import hashlib
import math
import os
import sys
import time

import numpy as np

# ----------------------------------------------------------------------------------------------
# HLO opcode ids (XLA HloOpcode order as stored by TpuGraphs)
# ----------------------------------------------------------------------------------------------
ABS, ADD, ALLREDUCE, BITCAST, BITCASTCONVERT, BROADCAST = 1, 2, 5, 11, 12, 13
CALL, CLAMP, COMPARE, CONCAT, CONDITIONAL, CONSTANT, CONVERT, CONV, COPY = 14, 17, 20, 22, 23, 24, 25, 26, 27
CUSTOMCALL, DIVIDE, DOT, DSLICE, DUSLICE, EXP, FUSION, GATHER, GTE = 31, 32, 34, 35, 36, 37, 41, 42, 45
IOTA, LOG, AND, NOT, OR, MAXIMUM, MINIMUM, MULTIPLY, NEGATE = 48, 50, 52, 53, 54, 57, 58, 59, 60
OUTFEED, PAD, PARAM, POWER, REDUCE, REDUCEWINDOW, RESHAPE, RNG = 61, 62, 63, 66, 70, 72, 75, 77
RSQRT, SELECT, SELSCATTER, SLICE, SQRT, SUBTRACT, TANH, TRANSPOSE, TUPLE, WHILE = 81, 83, 84, 92, 94, 95, 96, 98, 100, 102
ALLGATHER, LOGISTIC = 104, 107

PRESERVE = {1, 2, 5, 7, 9, 12, 15, 17, 20, 22, 25, 27, 30, 32, 35, 36, 37, 38, 40, 49, 50, 51, 52, 53,
            54, 55, 57, 58, 59, 60, 62, 66, 71, 72, 73, 76, 80, 81, 83, 84, 87, 88, 89, 90, 91,
            92, 94, 95, 96, 103, 107, 118, 120}
ADAPTIVE = {BROADCAST, CONSTANT, IOTA, RNG}
REQUIRE_DEFAULT = {TUPLE, WHILE, CONDITIONAL, CALL, CUSTOMCALL, OUTFEED, ALLGATHER}
FREE_OPS = {PARAM, CONSTANT, GTE, TUPLE, BITCAST}
ASSIGNING = {CONV, DOT, RESHAPE, TRANSPOSE}

# element types: name -> (node_feat column, bytes)
DT = {'pred': (3, 1), 's8': (4, 1), 's32': (6, 4), 's64': (7, 8), 'u8': (8, 1), 'u32': (10, 4),
      'f16': (12, 2), 'f32': (13, 4), 'bf16': (15, 2), 'tuple': (18, 0)}
COL_BYTES = {2: 0, 3: 1, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8, 12: 2, 13: 4, 14: 8,
             15: 2, 16: 8, 17: 16, 18: 0, 19: 0, 20: 0}

# ----------------------------------------------------------------------------------------------
# machine constants of the law
# ----------------------------------------------------------------------------------------------
BW = 1200.0             # HBM bytes per ns
PEAK = {2: 2.6e5, 4: 5.5e4, 1: 5.2e5, 8: 1.5e4}   # MXU flop/ns by element bytes
VPU_FLOP = 4.0e3        # vector unit flop/ns
VPU_ELEM = 2.0e3        # vector unit element-ops/ns
XLU_ELEM = 9.0e2        # in-VMEM transpose elements/ns
DMA_OVH = 384.0         # bytes-equivalent cost per contiguous DMA chunk
COPY_OVH = 1200.0       # ns per inserted copy
OP_OVH = 160.0          # ns per executed op
VMEM = 16.0 * 2 ** 20   # bytes
STEP_OVH = 350.0        # ns per grid step
LAUNCH = 1800.0         # ns per kernel launch
PROGRAM_OVH = 60000.0   # ns per program run (launch, infeed/outfeed sync)


def _sub(b):
    return 8 if b >= 4 else (16 if b == 2 else 32)


def _cdiv(a, b):
    return -(-a // b)


# ==============================================================================================
# Reading a graph back from the arrays (the law only ever looks at these)
# ==============================================================================================
class Parsed:
    pass


def parse_graph(node_feat, node_opcode, edge_index):
    g = Parsed()
    n = node_feat.shape[0]
    g.n = n
    g.op = [int(x) for x in node_opcode]
    dims = node_feat[:, 21:27].astype(np.int64)
    g.shape = []
    for i in range(n):
        r = 0
        while r < 6 and dims[i, r] > 0:
            r += 1
        g.shape.append(tuple(int(x) for x in dims[i, :r]))
    tcol = np.argmax(node_feat[:, 2:21], axis=1) + 2
    g.b = [COL_BYTES[int(t)] for t in tcol]
    g.dl = []
    lay = node_feat[:, 134:140].astype(np.int64)
    for i in range(n):
        r = len(g.shape[i])
        p = tuple(int(x) for x in lay[i, :r])
        if sorted(p) != list(range(r)):
            p = tuple(range(r - 1, -1, -1))
        g.dl.append(p)
    g.attr_dims = node_feat[:, 31:37].astype(np.int64)
    g.win_size = node_feat[:, 37:43].astype(np.int64)
    g.win_stride = node_feat[:, 45:51].astype(np.int64)
    g.win_wdil = node_feat[:, 69:75].astype(np.int64)
    g.nwin = (node_feat[:, 91] + node_feat[:, 92]).astype(np.int64)
    g.cdn = node_feat[:, 93:107].astype(np.int64)
    g.fgc = node_feat[:, 107].astype(np.int64)
    g.root = node_feat[:, 0] > 0.5
    g.ops = [[] for _ in range(n)]
    g.cons = [[] for _ in range(n)]
    for u, v in edge_index.tolist():
        g.ops[u].append(v)
        g.cons[v].append(u)
    g.vol = [int(np.prod(s)) if len(s) else 1 for s in g.shape]
    return g


def _pad_minor(m):
    """lanes used by a most-minor dim of m elements (narrow dims are packed, at most 2x waste)"""
    if m > 64:
        return _cdiv(m, 128) * 128
    return min(128, 2 * (1 << (max(m, 1) - 1).bit_length()))


def _pad_second(m, sub):
    if m >= sub:
        return _cdiv(m, sub) * sub
    return min(sub, 2 * (1 << (max(m, 1) - 1).bit_length()))


def pad_elems(shape, perm, b):
    r = len(shape)
    if r == 0:
        return 1
    sub = _sub(b)
    tot = 1
    for k, d in enumerate(perm):
        s = shape[d]
        if k == 0:
            s = _pad_minor(s)
        elif k == 1:
            s = _pad_second(s, sub)
        tot *= s
    return tot


def pad_bytes(shape, perm, b):
    return float(pad_elems(shape, perm, b)) * max(b, 1)


def canon(shape, perm):
    return tuple(perm[:2]) + tuple(d for d in perm[2:] if shape[d] != 1)


_RELAYOUT_CACHE = {}


def relayout_ns(shape, b, A, B):
    """Cost of a copy that turns layout A into layout B (minor_to_major tuples)."""
    if len(shape) <= 1 or A == B:
        return 0.0
    key = (shape, b, A, B)
    v = _RELAYOUT_CACHE.get(key)
    if v is not None:
        return v
    if canon(shape, A) == canon(shape, B):
        v = 0.0
    else:
        b1 = max(b, 1)
        pa = pad_bytes(shape, A, b1)
        pb = pad_bytes(shape, B, b1)
        if A[0] == B[0]:
            k = 0
            while k < len(A) and A[k] == B[k]:
                k += 1
            sub = _sub(b1)
            if k >= 2:
                run = _pad_minor(shape[A[0]]) * _pad_second(shape[A[1]], sub) * b1
                for i in range(2, k):
                    run *= shape[A[i]]
            else:
                run = _pad_minor(shape[A[0]]) * b1
            run = min(run, 1 << 20)
            eff = run / (run + DMA_OVH)
            v = (pa + pb) / (BW * eff) + COPY_OVH
        else:
            x = 1.6 if (len(A) > 1 and B[0] == A[1]) else 2.4
            v = (pa + pb) / BW * x + COPY_OVH
    _RELAYOUT_CACHE[key] = v
    return v


def logical_run(shape, perm):
    r = len(shape)
    phys = [d for d in perm if shape[d] != 1]
    logi = [d for d in range(r - 1, -1, -1) if shape[d] != 1]
    run = 1
    for a, c in zip(phys, logi):
        if a != c:
            break
        run *= shape[a]
    return run


def resolve_block(blk, r, fallback):
    """blk: iterable of up to 6 numbers (-1 = free).  Returns a full minor_to_major tuple."""
    if r == 0:
        return ()
    pre = []
    for x in blk:
        x = int(x)
        if 0 <= x < r and x not in pre:
            pre.append(x)
    if not pre:
        return tuple(fallback)
    rest = [d for d in fallback if d not in pre]
    return tuple(pre + rest)


def move_front(perm, d):
    return (d,) + tuple(x for x in perm if x != d)


# ----------------------------------------------------------------------------------------------
# operand roles (edges are stored sorted, so roles are inferred from shapes)
# ----------------------------------------------------------------------------------------------
def array_operands(g, u):
    return [v for v in g.ops[u] if len(g.shape[v]) >= 1 and g.op[v] != TUPLE]


def conv_roles(g, u):
    arr = [v for v in array_operands(g, u) if len(g.shape[v]) == len(g.shape[u])]
    if len(arr) < 2:
        return None
    cd = g.cdn[u]
    ib, fi, ki, ko, ob, of = int(cd[0]), int(cd[1]), int(cd[6]), int(cd[7]), int(cd[12]), int(cd[13])
    so = g.shape[u]
    r = len(so)
    if max(ib, fi, ki, ko, ob, of) >= r:
        return None
    good = []
    for a in arr:
        for k in arr:
            if a == k:
                continue
            si, sk = g.shape[a], g.shape[k]
            if sk[ko] == so[of] and si[fi] == sk[ki] * max(1, int(g.fgc[u])):
                good.append((a, k))
    if good:
        return good[0]
    arr = sorted(arr, key=lambda v: (-g.vol[v], v))
    return arr[0], arr[1]


def dot_roles(g, u):
    arr = [v for v in array_operands(g, u)]
    so = g.shape[u]
    if len(arr) < 2 or len(so) < 2:
        return None
    for a in arr:
        for k in arr:
            if a == k:
                continue
            sl, sr = g.shape[a], g.shape[k]
            if len(sl) == len(so) and len(sr) == len(so) and sl[-1] == sr[-2] and \
                    sl[-2] == so[-2] and sr[-1] == so[-1]:
                return a, k
    return None


def main_operand(g, u):
    arr = array_operands(g, u)
    if not arr:
        return None
    return sorted(arr, key=lambda v: (-len(g.shape[v]), -g.vol[v], v))[0]


# ==============================================================================================
# LAYOUT LAW
# ==============================================================================================
def _node_cost(g, v, perm, dperm):
    """Layout-dependent time of a non-assigning op v with layout perm; dperm = its dominant operand's."""
    op = g.op[v]
    s = g.shape[v]
    b = max(g.b[v], 1)
    if op in FREE_OPS or op in ADAPTIVE or len(s) == 0:
        if op == BROADCAST and len(s):
            return 0.4 * pad_bytes(s, perm, b) / BW
        return 0.0
    out = pad_bytes(s, perm, b)
    if op == REDUCE:
        d = main_operand(g, v)
        if d is None or dperm is None:
            return out / BW
        si = g.shape[d]
        bi = max(g.b[d], 1)
        k = len(si) - len(s)
        red = [int(x) for x in g.attr_dims[v][:k]]
        f = 1.0 + (0.9 if dperm[0] in red else 0.0) + (0.25 if len(dperm) > 1 and dperm[1] in red else 0.0)
        return (pad_bytes(si, dperm, bi) * f + out) / BW
    if op in (SLICE, DSLICE, PAD):
        d = main_operand(g, v)
        if d is not None and len(g.shape[d]) == len(s):
            si = g.shape[d]
            m = perm[0]
            if si[m] != s[m]:
                run = min(si[m], s[m]) * b
                eff = run / (run + DMA_OVH)
                return 2.0 * out / (BW * eff)
        return 2.0 * out / BW
    if op == CONCAT:
        arr = array_operands(g, v)
        m = perm[0]
        if arr and any(g.shape[a][m] != s[m] for a in arr if len(g.shape[a]) == len(s)):
            run = min(g.shape[a][m] for a in arr if len(g.shape[a]) == len(s)) * b
            eff = run / (run + DMA_OVH)
            return 2.0 * out / (BW * eff)
        return 2.0 * out / BW
    if op in (REDUCEWINDOW, SELSCATTER):
        d = main_operand(g, v)
        if d is None or dperm is None or len(g.shape[d]) != len(s):
            return 2.0 * out / BW
        inb = pad_bytes(g.shape[d], dperm, max(g.b[d], 1))
        f = 1.6 if g.win_size[v][dperm[0]] > 1 else 1.0
        mult = 2.0 if op == SELSCATTER else 1.0
        return mult * (inb * f + out) / BW
    if op == ALLREDUCE:
        return 3.0 * out / BW
    return 0.8 * out / BW


def _dominant(g, v):
    r = len(g.shape[v])
    cands = [a for a in g.ops[v] if len(g.shape[a]) == r and g.op[a] not in ADAPTIVE and g.op[a] != TUPLE]
    if not cands:
        return None
    return sorted(cands, key=lambda a: (-g.vol[a], a))[0]


class _Uniq:
    """Helper: index a list of hashable objects."""

    def __init__(self):
        self.items = []
        self.idx = {}

    def get(self, x):
        i = self.idx.get(x)
        if i is None:
            i = len(self.items)
            self.idx[x] = i
            self.items.append(x)
        return i


def _rows_unique(a):
    """unique rows of a 2-D array -> (unique rows, inverse)"""
    u, inv = np.unique(a, axis=0, return_inverse=True)
    return u, inv.reshape(-1)


def layout_noiseless(node_feat, node_opcode, edge_index, node_config_ids, node_config_feat):
    g = parse_graph(node_feat, node_opcode, edge_index)
    n = g.n
    c = node_config_feat.shape[0]
    cpos = {int(x): j for j, x in enumerate(node_config_ids.tolist())}
    ncf = node_config_feat.astype(np.int64)
    total = np.zeros(c, dtype=np.float64)
    const = PROGRAM_OVH
    neg = np.full((1, 6), -1, dtype=np.int64)

    def blocks(a, lo):
        j = cpos.get(a)
        if j is None:
            return neg, np.zeros(c, dtype=np.int64)
        return _rows_unique(ncf[:, j, lo:lo + 6])

    # ---- 1. resolved output layouts of layout-assigning nodes
    E = [None] * n          # list of perms indexed by code of source
    src = [-1] * n          # source node id (-1 = fixed)
    codes = {-1: np.zeros(c, dtype=np.int64)}
    assigning = [v for v in range(n) if g.op[v] in ASSIGNING and len(g.shape[v]) >= 1]
    aset = set(assigning)
    for v in range(n):
        if v in aset:
            ub, inv = blocks(v, 0)
            U = _Uniq()
            m = np.array([U.get(resolve_block(row, len(g.shape[v]), g.dl[v])) for row in ub], dtype=np.int64)
            E[v] = U.items
            src[v] = v
            codes[v] = m[inv] if len(inv) == c else np.zeros(c, dtype=np.int64)
            continue
        op = g.op[v]
        r = len(g.shape[v])
        if op in PRESERVE and r >= 1:
            d = _dominant(g, v)
            if d is not None and src[d] != -1:
                src[v] = src[d]
                E[v] = E[d]
                continue
        if op == REDUCE and r >= 1:
            d = main_operand(g, v)
            if d is not None and src[d] != -1:
                k = len(g.shape[d]) - r
                red = [int(x) for x in g.attr_dims[v][:k]]
                if all(0 <= x < len(g.shape[d]) for x in red) and len(set(red)) == k:
                    keep = [x for x in range(len(g.shape[d])) if x not in red]
                    ren = {x: i for i, x in enumerate(keep)}
                    src[v] = src[d]
                    E[v] = [tuple(ren[x] for x in p if x in ren) for p in E[d]]
                    continue
        E[v] = [g.dl[v]]

    # ---- 2. non-assigning op costs, grouped by source
    tabs = {}

    def tab(s):
        t = tabs.get(s)
        if t is None:
            t = np.zeros(len(E[s]), dtype=np.float64)
            tabs[s] = t
        return t

    for v in range(n):
        op = g.op[v]
        if op not in FREE_OPS:
            const += OP_OVH
        if v in aset:
            continue
        if op in (REDUCE, REDUCEWINDOW, SELSCATTER, SLICE, DSLICE, PAD):
            d = main_operand(g, v)
        else:
            d = None
        s = src[v]
        if s == -1:
            dp = E[d][0] if (d is not None and src[d] == -1) else (g.dl[d] if d is not None else None)
            const += _node_cost(g, v, E[v][0], dp)
        else:
            t = tab(s)
            for k, p in enumerate(E[v]):
                dp = E[d][k] if (d is not None and src[d] == s) else (g.dl[d] if d is not None else None)
                t[k] += _node_cost(g, v, p, dp)

    # ---- 3. copies required by non-assigning consumers
    pair_terms = {}
    for u in range(n):
        op = g.op[u]
        if u in aset:
            continue
        reqs = []   # (producer v, required-perm source: ('node', u) or ('default',))
        if op in PRESERVE and len(g.shape[u]) >= 1:
            d = _dominant(g, u)
            if d is not None:
                for v in g.ops[u]:
                    if v != d and len(g.shape[v]) == len(g.shape[u]) and len(g.shape[v]) >= 2 and \
                            g.op[v] not in ADAPTIVE and g.op[v] != TUPLE:
                        reqs.append((v, 'node'))
        elif op in REQUIRE_DEFAULT:
            for v in g.ops[u]:
                if len(g.shape[v]) >= 2 and g.op[v] not in ADAPTIVE:
                    reqs.append((v, 'default'))
        for v, kind in reqs:
            sv = src[v]
            sh, bb = g.shape[v], max(g.b[v], 1)
            if kind == 'default':
                if sv == -1:
                    const += relayout_ns(sh, bb, E[v][0], g.dl[v])
                else:
                    t = tab(sv)
                    for k, p in enumerate(E[v]):
                        t[k] += relayout_ns(sh, bb, p, g.dl[v])
                continue
            su = src[u]
            if sv == -1 and su == -1:
                const += relayout_ns(sh, bb, E[v][0], E[u][0])
            elif sv == su:
                t = tab(sv)
                for k in range(len(E[v])):
                    t[k] += relayout_ns(sh, bb, E[v][k], E[u][k])
            elif sv == -1:
                t = tab(su)
                for k in range(len(E[u])):
                    t[k] += relayout_ns(sh, bb, E[v][0], E[u][k])
            elif su == -1:
                t = tab(sv)
                for k in range(len(E[v])):
                    t[k] += relayout_ns(sh, bb, E[v][k], E[u][0])
            else:
                pair_terms.setdefault((sv, su), []).append((v, u))

    for (s1, s2), lst in pair_terms.items():
        n2 = len(E[s2])
        key = codes[s1] * n2 + codes[s2]
        uk, inv = np.unique(key, return_inverse=True)
        vals = np.zeros(len(uk))
        for i, kk in enumerate(uk.tolist()):
            k1, k2 = divmod(kk, n2)
            acc = 0.0
            for v, u in lst:
                acc += relayout_ns(g.shape[v], max(g.b[v], 1), E[v][k1], E[u][k2])
            vals[i] = acc
        total += vals[inv.reshape(-1)]

    # ---- 4. layout-assigning ops
    def operand_resolution(a, p, lo, fallback_fn):
        """resolved perm codes for operand p of a, from block at lo; returns (perm list, code array, copy cost)"""
        sp = src[p]
        cp = codes[sp]
        Ep = E[p]
        ub, inv = blocks(a, lo)
        if len(inv) != c:
            inv = np.zeros(c, dtype=np.int64)
        key = inv * len(Ep) + cp
        uk, kinv = np.unique(key, return_inverse=True)
        U = _Uniq()
        pc = np.zeros(len(uk), dtype=np.int64)
        cc = np.zeros(len(uk))
        adaptive = g.op[p] in ADAPTIVE
        r = len(g.shape[p])
        for i, kk in enumerate(uk.tolist()):
            bi, ki = divmod(kk, len(Ep))
            pe = Ep[ki]
            blk = ub[bi]
            if np.all(blk < 0):
                PI = fallback_fn(pe)
            else:
                PI = resolve_block(blk, r, pe)
            pc[i] = U.get(PI)
            if not adaptive:
                cc[i] = relayout_ns(g.shape[p], max(g.b[p], 1), pe, PI)
        kinv = kinv.reshape(-1)
        return U.items, pc[kinv], cc[kinv]

    for a in assigning:
        op = g.op[a]
        so = g.shape[a]
        bo = max(g.b[a], 1)
        PO = E[a]
        oc = codes[a]
        if op == CONV:
            roles = conv_roles(g, a)
            if roles is None:
                const += _node_cost(g, a, PO[0], None)
                continue
            x, w = roles
            cd = g.cdn[a]
            fi, ki, ko, of = int(cd[1]), int(cd[6]), int(cd[7]), int(cd[13])
            r = len(so)
            si, sk = g.shape[x], g.shape[w]
            bi, bk = max(g.b[x], 1), max(g.b[w], 1)
            ksp = [d for d in range(r) if d not in (ki, ko)]
            isp_all = [d for d in range(r) if d not in (int(cd[0]), fi)]
            kspat = 1
            for d in ksp:
                kspat *= sk[d]
            flops = 2.0 * g.vol[a] * kspat * sk[ki]
            depthwise = sk[ki] == 1 and g.fgc[a] > 1
            INP, inc, incopy = operand_resolution(a, x, 6, lambda pe: pe if pe[0] == fi else move_front(pe, fi))
            KP, kc, kcopy = operand_resolution(a, w, 12, lambda pe: pe)
            total += incopy + kcopy
            # input-side tables
            esub = np.zeros(len(INP))
            xin = np.zeros(len(INP))
            pin = np.zeros(len(INP))
            sub_i = _sub(bi)
            win_dims = {}
            for t_i, d in enumerate(isp_all[:4]):
                win_dims[d] = (int(g.win_size[a][t_i]) if t_i < 6 else 1, int(g.win_stride[a][t_i]))
            for i, P in enumerate(INP):
                pin[i] = pad_bytes(si, P, bi)
                Pf = P if P[0] == fi else move_front(P, fi)
                if P[0] != fi:
                    xin[i] = relayout_ns(si, bi, P, Pf)
                if len(Pf) > 1:
                    m1 = Pf[1]
                    s1 = si[m1]
                    e = 0.75 + 0.25 * s1 / (_cdiv(s1, sub_i) * sub_i)
                    if m1 in win_dims:
                        ws, st = win_dims[m1]
                        if ws > 1:
                            e *= 0.9
                        if st > 1:
                            e *= 0.8
                else:
                    e = 1.0
                esub[i] = e
            ek = np.zeros(len(KP))
            xk = np.zeros(len(KP))
            pk = np.zeros(len(KP))
            for i, P in enumerate(KP):
                pk[i] = pad_bytes(sk, P, bk)
                if len(P) < 2:
                    ek[i] = 1.0
                elif P[0] == ko and P[1] == ki:
                    ek[i] = 1.0
                elif P[0] == ki and P[1] == ko:
                    ek[i] = 0.93
                elif P[0] == ko:
                    ek[i] = 0.85
                    xk[i] = relayout_ns(sk, bk, P, (ko, ki) + tuple(d for d in P if d not in (ko, ki)))
                else:
                    ek[i] = 0.8
                    xk[i] = relayout_ns(sk, bk, P, (ko, ki) + tuple(d for d in P if d not in (ko, ki)))
            xo = np.zeros(len(PO))
            po = np.zeros(len(PO))
            for i, P in enumerate(PO):
                po[i] = pad_bytes(so, P, bo)
                if P[0] != of:
                    xo[i] = 0.7 * relayout_ns(so, bo, move_front(P, of), P)
            cin, cout = si[fi], so[of]
            lane = (cin / (_cdiv(cin, 128) * 128)) * (cout / (_cdiv(cout, 128) * 128))
            if depthwise:
                compute = flops / (VPU_FLOP * (cout / (_cdiv(cout, 128) * 128))) / esub[inc]
            else:
                compute = flops / (PEAK.get(bi, PEAK[4]) * lane * esub[inc] * ek[kc])
            mem = (pin[inc] + pk[kc] + po[oc]) / BW
            total += np.maximum(compute, mem) + 0.2 * np.minimum(compute, mem) + xin[inc] + xk[kc] + xo[oc]
        elif op == DOT:
            roles = dot_roles(g, a)
            if roles is None:
                const += _node_cost(g, a, PO[0], None)
                continue
            lhs, rhs = roles
            r = len(so)
            sl, sr = g.shape[lhs], g.shape[rhs]
            bl, br = max(g.b[lhs], 1), max(g.b[rhs], 1)
            K = sl[-1]
            flops = 2.0 * g.vol[a] * K
            kd, md = r - 1, r - 2
            INP, inc, incopy = operand_resolution(
                a, lhs, 6, lambda pe: pe if pe[0] in (kd, md) else move_front(pe, kd))
            total += incopy
            el = np.zeros(len(INP))
            xl = np.zeros(len(INP))
            pl = np.zeros(len(INP))
            for i, P in enumerate(INP):
                pl[i] = pad_bytes(sl, P, bl)
                if P[0] == kd:
                    el[i] = 1.0
                elif P[0] == md:
                    el[i] = 0.9
                else:
                    el[i] = 1.0
                    xl[i] = relayout_ns(sl, bl, P, move_front(P, kd))
                if len(P) > 1 and P[0] in (kd, md) and P[1] not in (kd, md):
                    el[i] *= 0.9
            Er = E[rhs]
            rc = codes[src[rhs]]
            er = np.zeros(len(Er))
            xr = np.zeros(len(Er))
            pr = np.zeros(len(Er))
            for i, P in enumerate(Er):
                pr[i] = pad_bytes(sr, P, br)
                if P[0] == r - 1:
                    er[i] = 1.0
                elif P[0] == r - 2:
                    er[i] = 0.95
                else:
                    er[i] = 1.0
                    xr[i] = relayout_ns(sr, br, P, move_front(P, r - 1))
            xo = np.zeros(len(PO))
            po = np.zeros(len(PO))
            for i, P in enumerate(PO):
                po[i] = pad_bytes(so, P, bo)
                if P[0] == md:
                    xo[i] = 0.6 * relayout_ns(so, bo, move_front(P, r - 1), P)
                elif P[0] != r - 1:
                    xo[i] = relayout_ns(so, bo, move_front(P, r - 1), P)
            N = so[-1]
            M = so[-2]
            lane = (K / (_cdiv(K, 128) * 128)) * (N / (_cdiv(N, 128) * 128)) * (0.8 + 0.2 * M / (_cdiv(M, 8) * 8))
            compute = flops / (PEAK.get(bl, PEAK[4]) * lane * el[inc] * er[rc])
            mem = (pl[inc] + pr[rc] + po[oc]) / BW
            total += np.maximum(compute, mem) + 0.2 * np.minimum(compute, mem) + xl[inc] + xr[rc] + xo[oc]
        else:   # RESHAPE / TRANSPOSE
            x = main_operand(g, a)
            if x is None:
                continue
            si = g.shape[x]
            bi = max(g.b[x], 1)
            INP, inc, incopy = operand_resolution(a, x, 6, lambda pe: pe)
            total += incopy
            nO = len(PO)
            key = inc * nO + oc
            uk, kinv = np.unique(key, return_inverse=True)
            vals = np.zeros(len(uk))
            perm_attr = [int(t) for t in g.attr_dims[a][:len(so)]]
            for i, kk in enumerate(uk.tolist()):
                ii, oo = divmod(kk, nO)
                PI, P = INP[ii], PO[oo]
                if op == TRANSPOSE and sorted(perm_attr) == list(range(len(so))) and len(si) == len(so):
                    mapped = tuple(perm_attr[d] for d in P)
                    vals[i] = relayout_ns(si, bi, PI, mapped)
                    continue
                pin_b = pad_bytes(si, PI, bi)
                pout_b = pad_bytes(so, P, bo)
                V = g.vol[a]
                ri, ro = logical_run(si, PI), logical_run(so, P)
                if ri >= V and ro >= V:
                    mi = si[PI[0]] if si else 1
                    mo = so[P[0]] if so else 1
                    if mi == mo:
                        vals[i] = 50.0
                    elif mi % 128 == 0 and mo % 128 == 0:
                        vals[i] = 0.5 * (pin_b + pout_b) / BW + COPY_OVH
                    else:
                        vals[i] = 1.1 * (pin_b + pout_b) / BW + COPY_OVH
                else:
                    run = min(ri, ro) * bi
                    run = min(run, 1 << 20)
                    eff = run / (run + DMA_OVH)
                    vals[i] = 1.2 * (pin_b + pout_b) / (BW * eff) + COPY_OVH
            total += vals[kinv.reshape(-1)]

    for s, t in tabs.items():
        total += t[codes[s]]
    total += const
    return total


# ==============================================================================================
# TILE LAW
# ==============================================================================================
def _tile_sizes(cf, lo, shape, perm, b):
    """tile extents (c, r) from bounds at config_feat[lo:lo+r]"""
    r = len(shape)
    c = cf.shape[0]
    T = np.zeros((c, r))
    for i in range(r):
        unit = 128 if (perm and perm[0] == i) else 1
        bnd = cf[:, lo + i] if i < 6 else np.zeros(c)
        t = np.where(bnd > 0, bnd * unit, shape[i])
        T[:, i] = np.minimum(t, shape[i])
    return np.maximum(T, 1)


def _padded_tile(T, perm, b):
    out = np.ones(T.shape[0])
    sub = _sub(b)
    for k, d in enumerate(perm):
        t = T[:, d]
        if k == 0:
            t = np.ceil(t / 128) * 128
        elif k == 1:
            t = np.ceil(t / sub) * sub
        out = out * t
    return out


def _tile_eff(T, perm, shape, b):
    """DMA efficiency of moving a tile: the contiguous run grows while the tile spans whole dims"""
    c = T.shape[0]
    if not perm:
        return np.ones(c)
    run = np.ones(c)
    full = np.ones(c, dtype=bool)
    for k, d in enumerate(perm):
        t = T[:, d]
        if k == 0:
            t = np.ceil(t / 128) * 128
        run = np.where(full, run * t, run)
        full = full & (T[:, d] >= shape[d])
    if len(perm) > 1:
        t0 = np.ceil(T[:, perm[0]] / 128) * 128
        run = np.maximum(run, t0 * np.minimum(T[:, perm[1]], _sub(b)))
    run = np.minimum(run * b, float(1 << 20))
    return run / (run + DMA_OVH)


def kernel_summary(g):
    n = g.n
    # output: largest non-parameter array that is a root or feeds a root tuple
    cands = []
    for v in range(n):
        if g.op[v] in (PARAM, TUPLE, FUSION) or len(g.shape[v]) == 0:
            continue
        if g.root[v] or any(g.op[u] == TUPLE and g.root[u] for u in g.cons[v]):
            cands.append(v)
    if not cands:
        cands = [v for v in range(n) if len(g.shape[v]) > 0] or [n - 1]
    out = sorted(cands, key=lambda v: (-g.vol[v], v))[0]
    return out


def tile_noiseless(node_feat, node_opcode, edge_index, config_feat):
    g = parse_graph(node_feat, node_opcode, edge_index)
    cf = config_feat.astype(np.float64)
    c = cf.shape[0]
    O = kernel_summary(g)
    so = g.shape[O]
    bo = max(g.b[O], 1)
    PO = g.dl[O]
    r = len(so)
    if r == 0:
        so, PO, r = (1,), (0,), 1
    VO = float(np.prod(so))
    T = _tile_sizes(cf, 8, so, PO, bo)
    ntiles = np.ones(c)
    for i in range(r):
        ntiles *= np.ceil(so[i] / T[:, i])
    tvol = np.prod(T, axis=1)
    tpad = _padded_tile(T, PO, bo)
    out_tile_b = tpad * bo
    # vector work: number of real array ops
    kv = sum(1 for v in range(g.n) if g.op[v] not in FREE_OPS and g.op[v] not in (FUSION, CONV, DOT)
             and len(g.shape[v]) >= 1)
    kv = max(kv, 1)
    # inner parameters (consumed by something other than a fusion node)
    streamed_dma = np.zeros(c)
    streamed_b = np.zeros(c)
    xpose = np.zeros(c)
    once_b = 0.0
    main = None
    for v in range(g.n):
        if g.op[v] in (CONV, DOT) and main is None:
            main = v
    red = None
    if main is None:
        for v in range(g.n):
            if g.op[v] == REDUCE and len(g.shape[v]) >= 1:
                d = main_operand(g, v)
                if d is not None and len(g.shape[d]) > len(g.shape[v]) and g.shape[v] == tuple(so):
                    red = (v, d)
                    break
    conv_inputs = set()
    if main is not None:
        roles = conv_roles(g, main) if g.op[main] == CONV else dot_roles(g, main)
        if roles:
            conv_inputs = set(roles)
    for v in range(g.n):
        if g.op[v] != PARAM or len(g.shape[v]) == 0:
            continue
        if not g.cons[v] or all(g.op[u] == FUSION for u in g.cons[v]):
            continue
        if any(u in conv_inputs for u in g.cons[v]) or v in conv_inputs:
            continue
        if any(g.op[u] == FUSION for u in g.cons[v]) and any(u in conv_inputs for u in g.cons[v]):
            continue
        sp, bp, Pp = g.shape[v], max(g.b[v], 1), g.dl[v]
        if red is not None and g.vol[v] >= g.vol[red[1]] * 0.5:
            continue      # read by the reduction term below
        if g.vol[v] * 2 >= VO:
            frac = g.vol[v] / VO
            if sp == tuple(so):
                tp = _padded_tile(T, Pp, bp) * bp
                eff = _tile_eff(T, Pp, sp, bp)
                if Pp[0] != PO[0]:
                    xpose += tvol / XLU_ELEM
            else:
                tp = tpad * bp * frac
                eff = _tile_eff(T, PO, so, bp)
            streamed_dma += tp / (BW * eff)
            streamed_b += tp
        else:
            once_b += pad_bytes(sp, Pp, bp)
    vpu = kv * tpad / VPU_ELEM + xpose
    out_dma = out_tile_b / (BW * _tile_eff(T, PO, so, bo))
    inner = np.ones(c)
    mxu = np.zeros(c)
    main_dma = np.zeros(c)
    main_b = np.zeros(c)
    resident_w = np.zeros(c)
    if main is not None and conv_inputs and g.shape[main] == tuple(so):
        x, w = roles
        si, sk = g.shape[x], g.shape[w]
        bi, bk = max(g.b[x], 1), max(g.b[w], 1)
        Pk = g.dl[w]
        Tk = _tile_sizes(cf, 0, sk, Pk, bk)
        if g.op[main] == CONV:
            cd = g.cdn[main]
            ib, fi, ki, ko, ob, of = [int(cd[t]) for t in (0, 1, 6, 7, 12, 13)]
            ksp = [d for d in range(len(sk)) if d not in (ki, ko)]
            isp = [d for d in range(len(si)) if d not in (ib, fi)]
            osp = [d for d in range(r) if d not in (ob, of)]
            ci = Tk[:, ki]
            co = np.minimum(Tk[:, ko], T[:, of])
            in_tile = T[:, ob] * ci
            Tin = np.zeros((c, len(si)))
            Tin[:, ib] = T[:, ob]
            Tin[:, fi] = np.minimum(ci * max(int(g.fgc[main]), 1), si[fi])
            spat_out = np.ones(c)
            kspat_t = np.ones(c)
            nk = np.ceil(si[fi] / np.maximum(ci * max(int(g.fgc[main]), 1), 1))
            if g.fgc[main] > 1:
                nk = np.ones(c)
                ci = np.ones(c)
            for t_i in range(min(len(osp), len(isp), len(ksp))):
                ws = max(int(g.win_size[main][t_i]), 1)
                st = max(int(g.win_stride[main][t_i]), 1)
                wd = max(int(g.win_wdil[main][t_i]), 1)
                tk = Tk[:, ksp[t_i]]
                ext = (T[:, osp[t_i]] - 1) * st + (np.minimum(tk, ws) - 1) * wd + 1
                ext = np.minimum(ext, si[isp[t_i]] + ws)
                in_tile = in_tile * ext
                Tin[:, isp[t_i]] = np.minimum(ext, si[isp[t_i]])
                spat_out *= T[:, osp[t_i]]
                kspat_t *= tk
                nk = nk * np.ceil(ws / tk)
            nco = np.ceil(T[:, of] / co)
            inner = nk * nco
            rows = T[:, ob] * spat_out
            util = (co / (np.ceil(co / 128) * 128)) * \
                   (ci / (np.ceil(ci / 128) * 128)) * (0.7 + 0.3 * rows / (np.ceil(rows / 8) * 8))
            if g.fgc[main] > 1:
                mxu = 2.0 * rows * co * kspat_t / (VPU_FLOP * (co / (np.ceil(co / 128) * 128)))
            else:
                mxu = 2.0 * rows * co * ci * kspat_t / (PEAK.get(bi, PEAK[4]) * util)
            w_chunk = kspat_t * ci * co * bk
            in_chunk = in_tile * bi
            whole_k = (nk == 1) & (Tk[:, ko] >= sk[ko])
            resident_w = np.where(whole_k & (T[:, of] >= so[of]), float(g.vol[w] * bk), 0.0)
            w_stream = np.where(whole_k & (T[:, of] >= so[of]), 0.0, w_chunk)
            eff_in = _tile_eff(np.maximum(Tin, 1), g.dl[x], si, bi)
            main_dma = in_chunk / (BW * eff_in) + w_stream / BW
            main_b = in_chunk + w_chunk
        else:   # dot
            K = si[-1]
            tkk = Tk[:, len(sk) - 2]
            tn = np.minimum(Tk[:, len(sk) - 1], T[:, r - 1])
            nk = np.ceil(K / tkk)
            nn = np.ceil(T[:, r - 1] / tn)
            inner = nk * nn
            rows = tvol / np.maximum(T[:, r - 1], 1)
            util = (tkk / (np.ceil(tkk / 128) * 128)) * (tn / (np.ceil(tn / 128) * 128)) * \
                   (0.7 + 0.3 * rows / (np.ceil(rows / 8) * 8))
            mxu = 2.0 * rows * tn * tkk / (PEAK.get(bi, PEAK[4]) * util)
            lhs_chunk = rows * tkk * bi
            Tl = np.ones((c, len(si)))
            for d in range(len(si) - 2):
                Tl[:, d] = T[:, d]
            Tl[:, len(si) - 2] = T[:, r - 2]
            Tl[:, len(si) - 1] = tkk
            eff_l = _tile_eff(Tl, g.dl[x], si, bi)
            w_chunk = tkk * tn * bk
            bdims = 1.0
            for d in range(len(sk) - 2):
                bdims *= sk[d]
            whole_k = (nk == 1) & (Tk[:, len(sk) - 1] >= sk[-1])
            resident_w = np.where(whole_k & (T[:, r - 1] >= so[-1]) & (bdims == 1), float(g.vol[w] * bk), 0.0)
            w_stream = np.where(resident_w > 0, 0.0, w_chunk)
            main_dma = lhs_chunk / (BW * eff_l) + w_stream / BW
            main_b = lhs_chunk + w_chunk
    elif red is not None:
        v, d = red
        si = g.shape[d]
        bi = max(g.b[d], 1)
        Pi = g.dl[d]
        k = len(si) - r
        rd = [int(x) for x in g.attr_dims[v][:k]]
        keep = [x for x in range(len(si)) if x not in rd]
        redvol = 1.0
        for x in rd:
            if 0 <= x < len(si):
                redvol *= si[x]
        in_tile = tvol * redvol
        minor_red = Pi[0] in rd
        inpad = in_tile
        if not minor_red and len(keep) == r:
            m = keep.index(Pi[0]) if Pi[0] in keep else None
            run = (T[:, m] * bi) if m is not None else np.full(c, 512.0)
        else:
            run = np.full(c, float(min(si[Pi[0]] * bi, 1 << 20)))
        eff = run / (run + DMA_OVH)
        nin = sum(1 for p in range(g.n) if g.op[p] == PARAM and g.vol[p] == g.vol[d] and g.cons[p]
                  and not all(g.op[u] == FUSION for u in g.cons[p]))
        nin = max(nin, 1)
        main_dma = nin * inpad * bi / (BW * eff)
        main_b = nin * inpad * bi
        mxu = in_tile * (kv + (1.8 if minor_red else 0.0)) / VPU_ELEM
    # per output tile: `inner` steps, each overlapping its MXU work with its DMA, then the epilogue
    work = np.maximum(mxu, main_dma) * inner + np.maximum(vpu, streamed_dma + out_dma)
    serial = (mxu + main_dma) * inner + vpu + streamed_dma + out_dma
    steps = inner * STEP_OVH
    need = 2.0 * (streamed_b + main_b + out_tile_b) + tpad * 4.0
    over = need / VMEM
    spill = over > 1.0
    per_tile = np.where(spill, serial * (1.0 + 1.5 * (over - 1.0)), work) + steps
    ncore = np.ceil(ntiles / 2.0)
    prologue = (streamed_dma + main_dma + out_dma)
    total = LAUNCH + prologue + ncore * per_tile + (once_b + resident_w) / BW
    return total


# ==============================================================================================
# GRAPH BUILDER + FEATURIZER (own sampler of HLO-like graphs)
# ==============================================================================================
def _desc(r):
    return tuple(range(r - 1, -1, -1))


class HG:
    def __init__(self):
        self.N = []
        self.splits = [0]
        self.pnum = 0
        self.cse = {}

    def __len__(self):
        return len(self.N)

    def begin_comp(self, split=False):
        if split and len(self.N) > self.splits[-1]:
            self.splits.append(len(self.N))
        self.pnum = 0
        self.cse = {}

    def add(self, op, shape, dt, ops=(), layout=None, **kw):
        shape = tuple(int(x) for x in shape)
        if dt == 'tuple':
            shape = ()
        if layout is None:
            layout = _desc(len(shape))
        nd = dict(op=op, shape=shape, dt=dt, ops=[o for o in ops if o is not None], layout=tuple(layout))
        nd.update(kw)
        self.N.append(nd)
        return len(self.N) - 1

    def root(self, v):
        self.N[v]['root'] = 1
        return v

    # --- helpers
    def shape(self, v):
        return self.N[v]['shape']

    def dt(self, v):
        return self.N[v]['dt']

    def lay(self, v):
        return self.N[v]['layout']

    def param(self, shape, dt, layout=None):
        v = self.add(PARAM, shape, dt, layout=layout, pnum=self.pnum)
        self.pnum += 1
        return v

    def const(self, shape, dt):
        return self.add(CONSTANT, shape, dt)

    def bcast(self, x, shape, dims, layout=None):
        return self.add(BROADCAST, shape, self.dt(x), [x], layout=layout, dims=list(dims))

    def scalar_bcast(self, val_dt, like):
        # identical scalar broadcasts are shared within a computation (as after CSE)
        key = (val_dt, self.shape(like), self.lay(like))
        v = self.cse.get(key)
        if v is None:
            c = self.const((), val_dt)
            v = self.bcast(c, self.shape(like), [], layout=self.lay(like))
            self.cse[key] = v
        return v

    def un(self, op, x, dt=None):
        return self.add(op, self.shape(x), dt or self.dt(x), [x], layout=self.lay(x))

    def bin(self, op, a, b, dt=None):
        return self.add(op, self.shape(a), dt or self.dt(a), [a, b], layout=self.lay(a))

    def convert(self, x, dt):
        return self.add(CONVERT, self.shape(x), dt, [x], layout=self.lay(x))

    def reshape(self, x, shape, layout=None):
        return self.add(RESHAPE, shape, self.dt(x), [x], layout=layout)

    def transpose(self, x, perm, layout=None):
        s = self.shape(x)
        return self.add(TRANSPOSE, [s[p] for p in perm], self.dt(x), [x], layout=layout, dims=list(perm))

    def reduce(self, x, dims, reducer, layout=None, dt=None):
        s = self.shape(x)
        out = [s[i] for i in range(len(s)) if i not in dims]
        dt = dt or self.dt(x)
        init = self.const((), dt)
        if layout is None:
            lx = self.lay(x)
            keep = [i for i in range(len(s)) if i not in dims]
            ren = {d: i for i, d in enumerate(keep)}
            layout = tuple(ren[d] for d in lx if d in ren)
        return self.add(REDUCE, out, dt, [x, init, reducer], layout=layout, dims=sorted(dims))

    def dot(self, a, b, layout=None, dt=None):
        sa, sb = self.shape(a), self.shape(b)
        out = list(sa[:-1]) + [sb[-1]]
        return self.add(DOT, out, dt or self.dt(a), [a, b], layout=layout)

    def conv(self, x, w, out_shape, window, dn, fgc=1, layout=None, dt=None):
        return self.add(CONV, out_shape, dt or self.dt(x), [x, w], layout=layout, window=window, cdn=dn,
                        fgc=fgc, bgc=1)

    def tuple_(self, vs):
        return self.add(TUPLE, (), 'tuple', vs, tsize=len(vs))

    def edges(self):
        E = set()
        for u, nd in enumerate(self.N):
            for v in nd['ops']:
                if v != u:
                    E.add((u, v))
        if not E:
            return np.zeros((0, 2), dtype=np.int64)
        return np.array(sorted(E), dtype=np.int64)


def _seq(vals, k):
    vals = list(vals)
    out = [float(x) for x in vals[:k]] + [0.0] * max(0, k - len(vals))
    return out


def _seq_sp(vals, k, empty_prod=1.0):
    vals = [int(x) for x in vals]
    prod = 1
    for x in vals:
        prod *= x
    if not vals:
        prod = empty_prod
    return _seq(vals, k) + [float(sum(vals)), float(prod)]


def featurize(hg):
    n = len(hg.N)
    F = np.zeros((n, 140), dtype=np.float32)
    for i, nd in enumerate(hg.N):
        f = [0.0] * 140
        f[0] = float(nd.get('root', 0))
        f[DT[nd['dt']][0]] = 1.0
        s = nd['shape']
        f[21:29] = _seq_sp(s, 6)
        f[29] = float(nd.get('tsize', 0))
        f[30] = float(nd.get('pnum', 0))
        f[31:37] = _seq(nd.get('dims', []), 6)
        win = nd.get('window', [])
        keys = ['size', 'stride', 'pl', 'ph', 'wd', 'bd']
        for gi, k in enumerate(keys):
            f[37 + 8 * gi: 45 + 8 * gi] = _seq_sp([w[k] for w in win], 6)
        rev = [1 if w.get('rev') else 0 for w in win]
        f[85:93] = _seq(rev, 6) + [float(sum(rev)), float(len(rev) - sum(rev))]
        dn = nd.get('cdn')
        if dn is not None:
            f[93] = dn['ib']
            f[94] = dn['if']
            f[95:99] = _seq(dn['isp'], 4)
            f[99] = dn['ki']
            f[100] = dn['ko']
            f[101:105] = _seq(dn['ksp'], 4)
            f[105] = dn['ob']
            f[106] = dn['of']
            f[107] = float(nd.get('fgc', 1))
            f[108] = float(nd.get('bgc', 1))
        sl = nd.get('slice')
        if sl is not None:
            f[109:113] = _seq_sp(sl[0], 2)
            f[113:117] = _seq_sp(sl[1], 2)
            f[117:121] = _seq_sp(sl[2], 2)
        else:
            f[109:121] = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]
        f[121:125] = _seq_sp(nd.get('dsizes', []), 2)
        pd = nd.get('pad')
        if pd is not None:
            f[125:129] = _seq_sp(pd[0], 2)
            f[129:133] = _seq_sp(pd[1], 2)
        else:
            f[125:133] = [0, 0, 0, 1, 0, 0, 0, 1]
        f[133] = float(nd.get('stable', 0))
        if len(s):
            f[134:140] = _seq(nd['layout'], 6)
        F[i] = np.array(f, dtype=np.float32)
    return F


def opcodes(hg):
    return np.array([nd['op'] for nd in hg.N], dtype=np.uint8)


# ----------------------------------------------------------------------------------------------
# model pieces
# ----------------------------------------------------------------------------------------------
class Model:
    """Adds ML-model structure to an HG.  Holds reducers and style."""

    def __init__(self, hg, rng, style_tpu, adt):
        self.h = hg
        self.rng = rng
        self.tpu = style_tpu
        self.adt = adt            # activation dtype
        self.red = {}
        self.outputs = []
        self.fused_bn = False
        self.compact = False

    def act_layout(self, r):
        if self.tpu and r == 4:
            return (3, 0, 2, 1)
        if self.tpu and r == 5:
            return (4, 0, 3, 2, 1)
        return _desc(r)

    def make_reducers(self):
        h = self.h
        for kind, op in (('add', ADD), ('max', MAXIMUM)):
            for dt in ('f32', 'bf16'):
                h.begin_comp()
                a = h.param((), dt)
                b = h.param((), dt)
                self.red[(kind, dt)] = h.root(h.bin(op, a, b))
        h.begin_comp()
        a = h.param((), 'pred')
        b = h.param((), 'pred')
        self.red[('or', 'pred')] = h.root(h.bin(OR, a, b))

    def reducer(self, kind, dt):
        return self.red.get((kind, dt), self.red[(kind, 'f32')])

    # ---- while loops (cond/body computations) created before the entry computation
    def make_while_comps(self, shape, dt):
        h = self.h
        h.begin_comp(split=True)
        p = h.param((), 'tuple')
        h.N[p]['tsize'] = 3
        i = h.add(GTE, (), 's32', [p])
        lim = h.const((), 's32')
        cond = h.root(h.add(COMPARE, (), 'pred', [i, lim]))
        h.begin_comp(split=True)
        p = h.param((), 'tuple')
        h.N[p]['tsize'] = 3
        i = h.add(GTE, (), 's32', [p])
        one = h.const((), 's32')
        i2 = h.bin(ADD, i, one)
        acc = h.add(GTE, shape, dt, [p], layout=self.act_layout(len(shape)))
        xs = h.add(GTE, (4,) + tuple(shape), dt, [p])
        z = h.const((), 's32')
        sl = h.add(DSLICE, (1,) + tuple(shape), dt, [xs, i, z], dsizes=[1] + list(shape))
        rs = h.reshape(sl, shape, layout=self.act_layout(len(shape)))
        nx = h.bin(ADD, acc, rs)
        m = h.bin(MULTIPLY, nx, h.scalar_bcast(dt, nx))
        t = h.un(TANH, m)
        body = h.root(h.tuple_([i2, t, xs]))
        return cond, body

    def while_loop(self, cond, body, x):
        h = self.h
        s = h.shape(x)
        i0 = h.const((), 's32')
        xs = h.param((4,) + tuple(s), h.dt(x))
        t = h.tuple_([i0, x, xs])
        w = h.add(WHILE, (), 'tuple', [t, cond, body], tsize=3)
        return h.add(GTE, s, h.dt(x), [w], layout=h.lay(x))

    # ---- normalisation / activations
    def batchnorm(self, x, axes, relu=True):
        h = self.h
        s = h.shape(x)
        r = len(s)
        feat = [d for d in range(r) if d not in axes]
        if self.fused_bn:
            ps = [h.param((s[d],), 'f32') for d in feat for _ in range(4)]
            y = h.add(9, s, h.dt(x), [x] + ps, layout=h.lay(x))
            if relu:
                y = h.bin(MAXIMUM, y, h.scalar_bcast(h.dt(y), y))
            return y
        xf = h.convert(x, 'f32') if h.dt(x) != 'f32' else x
        ssum = h.reduce(xf, axes, self.reducer('add', 'f32'))
        mean = h.bin(MULTIPLY, ssum, h.scalar_bcast('f32', ssum))
        mb = h.bcast(mean, s, feat, layout=h.lay(xf))
        cen = h.bin(SUBTRACT, xf, mb)
        sq = h.un(MULTIPLY, cen)
        var = h.reduce(sq, axes, self.reducer('add', 'f32'))
        var = h.bin(MULTIPLY, var, h.scalar_bcast('f32', var))
        ve = h.bin(ADD, var, h.scalar_bcast('f32', var))
        inv = h.un(RSQRT, ve)
        gamma = h.param(h.shape(inv), 'f32')
        sc = h.bin(MULTIPLY, inv, gamma)
        scb = h.bcast(sc, s, feat, layout=h.lay(xf))
        y = h.bin(MULTIPLY, cen, scb)
        beta = h.param(h.shape(inv), 'f32')
        y = h.bin(ADD, y, h.bcast(beta, s, feat, layout=h.lay(xf)))
        if h.dt(x) != 'f32':
            y = h.convert(y, h.dt(x))
        if relu:
            y = h.bin(MAXIMUM, y, h.scalar_bcast(h.dt(y), y))
        return y

    def layernorm(self, x, rms=False):
        h = self.h
        s = h.shape(x)
        r = len(s)
        keep = list(range(r - 1))
        xf = h.convert(x, 'f32') if h.dt(x) != 'f32' else x
        if not rms:
            m = h.reduce(xf, [r - 1], self.reducer('add', 'f32'))
            m = h.bin(MULTIPLY, m, h.scalar_bcast('f32', m))
            xf = h.bin(SUBTRACT, xf, h.bcast(m, s, keep, layout=h.lay(xf)))
        sq = h.bin(MULTIPLY, xf, h.scalar_bcast('f32', xf))
        h.N[sq]['ops'] = [xf]
        v = h.reduce(sq, [r - 1], self.reducer('add', 'f32'))
        v = h.bin(MULTIPLY, v, h.scalar_bcast('f32', v))
        v = h.bin(ADD, v, h.scalar_bcast('f32', v))
        inv = h.un(RSQRT, v)
        y = h.bin(MULTIPLY, xf, h.bcast(inv, s, keep, layout=h.lay(xf)))
        g = h.param((s[-1],), 'f32')
        y = h.bin(MULTIPLY, y, h.bcast(g, s, [r - 1], layout=h.lay(xf)))
        if not rms:
            bt = h.param((s[-1],), 'f32')
            y = h.bin(ADD, y, h.bcast(bt, s, [r - 1], layout=h.lay(xf)))
        if h.dt(x) != 'f32':
            y = h.convert(y, h.dt(x))
        return y

    def gelu(self, x):
        h = self.h
        x3 = h.bin(MULTIPLY, x, x)
        x3 = h.bin(MULTIPLY, x3, x)
        t = h.bin(MULTIPLY, x3, h.scalar_bcast(h.dt(x), x))
        t = h.bin(ADD, x, t)
        t = h.bin(MULTIPLY, t, h.scalar_bcast(h.dt(x), x))
        t = h.un(TANH, t)
        t = h.bin(ADD, t, h.scalar_bcast(h.dt(x), x))
        return h.bin(MULTIPLY, x, t)

    def softmax(self, x, axis):
        h = self.h
        s = h.shape(x)
        keep = [d for d in range(len(s)) if d != axis]
        mx = h.reduce(x, [axis], self.reducer('max', h.dt(x)))
        z = h.bin(SUBTRACT, x, h.bcast(mx, s, keep, layout=h.lay(x)))
        e = h.un(EXP, z)
        sm = h.reduce(e, [axis], self.reducer('add', h.dt(x)))
        return h.bin(DIVIDE, e, h.bcast(sm, s, keep, layout=h.lay(x)))

    # ---- convolutions
    def conv_nd(self, x, cout, k, stride=1, groups=1, dil=1, base_dil=1, rev=False, wdt=None):
        h = self.h
        s = h.shape(x)
        r = len(s)
        nsp = r - 2
        cin = s[-1]
        wdt = wdt or h.dt(x)
        ks = [k] * nsp
        w = h.param(tuple(ks) + (cin // groups, cout), wdt)
        win = []
        osp = []
        for i in range(nsp):
            pad = (k - 1) * dil // 2
            inn = (s[1 + i] - 1) * base_dil + 1
            o = (inn + 2 * pad - (k - 1) * dil - 1) // stride + 1
            osp.append(max(o, 1))
            win.append(dict(size=k, stride=stride, pl=pad, ph=pad, wd=dil, bd=base_dil, rev=rev))
        dn = dict(ib=0, **{'if': r - 1}, isp=list(range(1, r - 1)), ki=r - 2, ko=r - 1,
                  ksp=list(range(nsp)), ob=0, of=r - 1)
        out = (s[0],) + tuple(osp) + (cout,)
        return h.conv(x, w, out, win, dn, fgc=groups, layout=self.act_layout(r))

    def conv_wgrad(self, x, dy, k):
        """weight-gradient convolution: contracts batch and spatial dims"""
        h = self.h
        s, sd = h.shape(x), h.shape(dy)
        r = len(s)
        nsp = r - 2
        win = [dict(size=sd[1 + i], stride=1, pl=k // 2, ph=k // 2, wd=max(1, s[1 + i] // max(sd[1 + i], 1)),
                    bd=1, rev=False) for i in range(nsp)]
        dn = dict(ib=r - 1, **{'if': 0}, isp=list(range(1, r - 1)), ki=0, ko=r - 1,
                  ksp=list(range(1, r - 1)), ob=r - 2, of=r - 1)
        out = tuple([k] * nsp) + (s[-1], sd[-1])
        return h.conv(x, dy, out, win, dn, layout=_desc(r))

    def conv_dgrad(self, dy, w_shape, x_shape, stride):
        h = self.h
        r = len(x_shape)
        nsp = r - 2
        k = w_shape[0]
        w = h.param(tuple(w_shape[:-2]) + (w_shape[-1], w_shape[-2]), h.dt(dy))
        win = [dict(size=k, stride=1, pl=k - 1 - k // 2, ph=k - 1 - k // 2, wd=1, bd=stride, rev=True)
               for _ in range(nsp)]
        dn = dict(ib=0, **{'if': r - 1}, isp=list(range(1, r - 1)), ki=r - 2, ko=r - 1,
                  ksp=list(range(nsp)), ob=0, of=r - 1)
        return h.conv(dy, w, tuple(x_shape), win, dn, layout=self.act_layout(r))

    def pool(self, x, k, stride, kind='max'):
        h = self.h
        s = h.shape(x)
        r = len(s)
        win = [dict(size=1, stride=1, pl=0, ph=0, wd=1, bd=1)]
        out = [s[0]]
        for i in range(1, r - 1):
            win.append(dict(size=k, stride=stride, pl=0, ph=0, wd=1, bd=1))
            out.append(max(1, (s[i] - k) // stride + 1))
        win.append(dict(size=1, stride=1, pl=0, ph=0, wd=1, bd=1))
        out.append(s[-1])
        init = h.const((), h.dt(x))
        return h.add(REDUCEWINDOW, out, h.dt(x), [x, init, self.reducer(kind, h.dt(x))],
                     layout=h.lay(x), window=win)


# ----------------------------------------------------------------------------------------------
# layout-collection model families
# ----------------------------------------------------------------------------------------------
def _choice(rng, xs, p=None):
    return xs[int(rng.choice(len(xs), p=p))]


def build_cnn(m, target, train, kind):
    """ResNet / MobileNet-like 2-D CNN (NHWC)."""
    h, rng = m.h, m.rng
    B = int(_choice(rng, [1, 2, 4, 8, 16, 32, 64, 128]))
    H = int(_choice(rng, [32, 56, 64, 96, 112, 128, 160, 224]))
    c0 = int(_choice(rng, [16, 24, 32, 48, 64]))
    x = h.param((B, H, H, 3), m.adt, layout=m.act_layout(4))
    y = m.conv_nd(x, c0, int(_choice(rng, [3, 5, 7])), stride=2)
    y = m.batchnorm(y, [0, 1, 2])
    if rng.random() < 0.6:
        y = m.pool(y, 3, 2)
    convs = []
    c = c0
    stage = 0
    budget = target * (0.62 if train else 0.82)
    while len(h) < budget:
        s = h.shape(y)
        stride = 2 if (stage > 0 and s[1] > 4 and rng.random() < 0.5) else 1
        cout = c * 2 if stride == 2 else c
        cout = min(cout, 2048)
        if kind == 'mobile':
            e = int(_choice(rng, [1, 3, 6]))
            t = m.conv_nd(y, c * e, 1)
            t = m.batchnorm(t, [0, 1, 2])
            t = m.conv_nd(t, c * e, 3, stride=stride, groups=c * e)
            t = m.batchnorm(t, [0, 1, 2])
            if rng.random() < 0.4:   # squeeze-excite
                ts = h.shape(t)
                sq = h.reduce(t, [1, 2], m.reducer('add', h.dt(t)))
                rs = h.reshape(sq, (ts[0], ts[3]))
                w1 = h.param((ts[3], max(8, ts[3] // 4)), h.dt(t))
                d1 = h.dot(rs, w1)
                d1 = h.bin(MAXIMUM, d1, h.scalar_bcast(h.dt(d1), d1))
                w2 = h.param((h.shape(d1)[1], ts[3]), h.dt(t))
                d2 = h.un(LOGISTIC, h.dot(d1, w2))
                r4b = h.add(BROADCAST, ts, h.dt(t), [d2], layout=h.lay(t), dims=[0, 3])
                t = h.bin(MULTIPLY, t, r4b)
            t = m.conv_nd(t, cout, 1)
            t = m.batchnorm(t, [0, 1, 2], relu=False)
        else:
            bott = rng.random() < 0.6
            if bott:
                mid = max(16, cout // 4)
                t = m.conv_nd(y, mid, 1)
                t = m.batchnorm(t, [0, 1, 2])
                convs.append((t, y))
                t2 = m.conv_nd(t, mid, 3, stride=stride)
                t2 = m.batchnorm(t2, [0, 1, 2])
                convs.append((t2, t))
                t = m.conv_nd(t2, cout, 1)
                t = m.batchnorm(t, [0, 1, 2], relu=False)
            else:
                t = m.conv_nd(y, cout, 3, stride=stride)
                t = m.batchnorm(t, [0, 1, 2])
                convs.append((t, y))
                t = m.conv_nd(t, cout, 3)
                t = m.batchnorm(t, [0, 1, 2], relu=False)
        if h.shape(t) == h.shape(y):
            t = h.bin(ADD, t, y)
        elif rng.random() < 0.7:
            sc = m.conv_nd(y, cout, 1, stride=stride)
            if h.shape(sc) == h.shape(t):
                t = h.bin(ADD, t, sc)
        y = h.bin(MAXIMUM, t, h.scalar_bcast(h.dt(t), t))
        c = cout
        stage += 1
    s = h.shape(y)
    gp = h.reduce(y, [1, 2], m.reducer('add', h.dt(y)))
    gp = h.bin(MULTIPLY, gp, h.scalar_bcast(h.dt(gp), gp))
    ncls = int(_choice(rng, [10, 100, 1000, 1001]))
    wfc = h.param((s[3], ncls), h.dt(y))
    logits = h.dot(gp, wfc)
    bias = h.param((ncls,), h.dt(y))
    logits = h.bin(ADD, logits, h.bcast(bias, h.shape(logits), [1]))
    lf = h.convert(logits, 'f32')
    prob = m.softmax(lf, 1)
    outs = [prob]
    if train:
        lab = h.param(h.shape(prob), 'f32')
        dl = h.bin(SUBTRACT, prob, lab)
        dl = h.convert(dl, h.dt(y))
        wt = h.transpose(wfc, (1, 0))
        dg = h.dot(dl, wt)
        gw = h.dot(h.transpose(gp, (1, 0)), dl)
        outs.append(h.bin(SUBTRACT, wfc, h.bin(MULTIPLY, gw, h.scalar_bcast(h.dt(gw), gw))))
        dsp = h.bcast(dg, s, [0, 3], layout=h.lay(y))
        mask = h.add(COMPARE, s, 'pred', [y, h.scalar_bcast(h.dt(y), y)], layout=h.lay(y))
        dy = h.add(SELECT, s, h.dt(y), [mask, dsp, h.scalar_bcast(h.dt(y), y)], layout=h.lay(y))
        for (out_v, in_v) in reversed(convs):
            if len(h) > target * 0.97:
                break
            so, si = h.shape(out_v), h.shape(in_v)
            if h.shape(dy) != so:
                dy = h.reshape(h.reduce(dy, [1, 2], m.reducer('add', h.dt(dy))), (so[0], 1, 1, h.shape(dy)[3]))
                dy = h.bcast(h.reshape(dy, (so[0], h.shape(dy)[3])), (so[0], so[1], so[2], h.shape(dy)[3]), [0, 3],
                             layout=m.act_layout(4))
                if h.shape(dy) != so:
                    cfix = m.conv_nd(dy, so[3], 1)
                    dy = cfix
                if h.shape(dy) != so:
                    continue
            k = 3 if so[1] * 2 <= si[1] or so[3] != si[3] else 1
            gwv = m.conv_wgrad(in_v, dy, k)
            wcur = h.param(h.shape(gwv), h.dt(gwv))
            upd = h.bin(SUBTRACT, wcur, h.bin(MULTIPLY, gwv, h.scalar_bcast(h.dt(gwv), gwv)))
            outs.append(upd)
            stride = max(1, si[1] // max(so[1], 1))
            if stride == 1:
                dx = m.conv_dgrad(dy, (k, k, si[3], so[3]), si, 1)
                if h.shape(dx) == si:
                    msk = h.add(COMPARE, si, 'pred', [in_v, h.scalar_bcast(h.dt(in_v), in_v)], layout=h.lay(in_v))
                    dy = h.add(SELECT, si, h.dt(dx), [msk, dx, h.scalar_bcast(h.dt(dx), dx)], layout=h.lay(dx))
    return outs, 'resnet' if kind == 'res' else 'mobilenet', B


def build_unet3d(m, target, train):
    h, rng = m.h, m.rng
    B = int(_choice(rng, [1, 2, 4]))
    D = int(_choice(rng, [16, 24, 32, 48, 64]))
    c = int(_choice(rng, [8, 16, 32]))
    cin = int(_choice(rng, [1, 2, 4]))
    x = h.param((B, D, D, D, cin), m.adt, layout=m.act_layout(5))
    y = x
    skips = []
    lvl = 0
    budget = target * 0.45
    while len(h) < budget and h.shape(y)[1] >= 4 and lvl < 5:
        y = m.conv_nd(y, c, 3)
        y = m.batchnorm(y, [0, 1, 2, 3])
        y = m.conv_nd(y, c, 3)
        y = m.batchnorm(y, [0, 1, 2, 3])
        skips.append(y)
        y = m.pool(y, 2, 2)
        c *= 2
        lvl += 1
    y = m.conv_nd(y, c, 3)
    y = m.batchnorm(y, [0, 1, 2, 3])
    while skips and len(h) < target * 0.9:
        sk = skips.pop()
        c //= 2
        up = m.conv_nd(y, c, 2, base_dil=2)
        if h.shape(up)[1:4] != h.shape(sk)[1:4]:
            s = h.shape(sk)
            up = h.add(PAD, (s[0], s[1], s[2], s[3], c), h.dt(up), [up, h.const((), h.dt(up))],
                       layout=h.lay(up), pad=([0, 1], [0, 1]))
        cat = h.add(CONCAT, h.shape(sk)[:-1] + (h.shape(sk)[-1] + c,), h.dt(sk), [sk, up],
                    layout=h.lay(sk), dims=[4])
        y = m.conv_nd(cat, c, 3)
        y = m.batchnorm(y, [0, 1, 2, 3])
        y = m.conv_nd(y, c, 3)
        y = m.batchnorm(y, [0, 1, 2, 3])
    ncls = int(_choice(rng, [2, 3, 4]))
    logits = m.conv_nd(y, ncls, 1)
    lf = h.convert(logits, 'f32')
    prob = m.softmax(lf, 4)
    outs = [prob]
    if train:
        lab = h.param(h.shape(prob), 'f32')
        d = h.bin(SUBTRACT, prob, lab)
        loss = h.reduce(h.bin(MULTIPLY, d, d), [0, 1, 2, 3, 4], m.reducer('add', 'f32'))
        outs.append(loss)
        dd = h.convert(d, h.dt(y))
        gw = m.conv_wgrad(y, dd, 1)
        outs.append(gw)
    return outs, 'unet_3d', B


def build_mlp(m, target, train):
    h, rng = m.h, m.rng
    B = int(_choice(rng, [64, 128, 256, 512, 1024, 2048]))
    F = int(_choice(rng, [8, 13, 26]))
    Dm = int(_choice(rng, [16, 32, 64, 128]))
    V = int(_choice(rng, [1000, 10000, 100000]))
    ids = h.param((B, F), 's32')
    table = h.param((V, Dm), m.adt)
    emb = h.add(GATHER, (B, F, Dm), m.adt, [table, ids])
    dense = h.param((B, 13), 'f32')
    dn = h.convert(dense, m.adt)
    widths = [int(_choice(rng, [256, 512, 1024])) for _ in range(3)]
    x = dn
    for wdt in widths:
        w = h.param((h.shape(x)[1], wdt), m.adt)
        x = h.dot(x, w)
        x = h.bin(ADD, x, h.bcast(h.param((wdt,), m.adt), h.shape(x), [1]))
        x = h.bin(MAXIMUM, x, h.scalar_bcast(m.adt, x))
    w = h.param((h.shape(x)[1], Dm), m.adt)
    x = h.dot(x, w)
    x3 = h.reshape(x, (B, 1, Dm))
    cat = h.add(CONCAT, (B, F + 1, Dm), m.adt, [emb, x3], dims=[1])
    catT = h.transpose(cat, (0, 2, 1))
    inter = h.dot(cat, catT)
    flat = h.reshape(inter, (B, (F + 1) * (F + 1)))
    x = h.add(CONCAT, (B, (F + 1) * (F + 1) + Dm), m.adt, [flat, x], dims=[1])
    while len(h) < target * 0.9:
        wdt = int(_choice(rng, [128, 256, 512, 1024]))
        w = h.param((h.shape(x)[1], wdt), m.adt)
        x = h.dot(x, w)
        x = h.bin(ADD, x, h.bcast(h.param((wdt,), m.adt), h.shape(x), [1]))
        if rng.random() < 0.5:
            x = m.layernorm(x)
        x = h.bin(MAXIMUM, x, h.scalar_bcast(m.adt, x))
        if rng.random() < 0.3:
            g = int(_choice(rng, [2, 4, 8]))
            if wdt % g == 0:
                r3 = h.reshape(x, (B, g, wdt // g))
                t3 = h.transpose(r3, (1, 0, 2))
                w3 = h.param((g, wdt // g, wdt // g), m.adt)
                d3 = h.dot(t3, w3)
                t3b = h.transpose(d3, (1, 0, 2))
                x = h.reshape(t3b, (B, wdt))
    w = h.param((h.shape(x)[1], 1), m.adt)
    out = h.un(LOGISTIC, h.dot(x, w))
    return [out], 'dlrm', B


def build_transformer(m, target, train, variant):
    h, rng = m.h, m.rng
    B = int(_choice(rng, [1, 2, 4, 8, 16, 32, 64]))
    S = int(_choice(rng, [32, 64, 128, 256, 384, 512]))
    Hd = int(_choice(rng, [128, 256, 384, 512, 768, 1024]))
    nh = int(_choice(rng, [2, 4, 8, 12, 16]))
    while Hd % nh:
        nh //= 2
    dh = Hd // nh
    V = int(_choice(rng, [8192, 30522, 32000, 50257]))
    adt = m.adt
    ids = h.param((B, S), 's32')
    table = h.param((V, Hd), adt)
    x = h.add(GATHER, (B, S, Hd), adt, [table, ids])
    pos = h.param((S, Hd), adt)
    x = h.bin(ADD, x, h.bcast(pos, (B, S, Hd), [1, 2]))
    if variant != 'gpt' and not m.compact:
        x = m.layernorm(x)
    mask = None
    if variant == 'gpt':
        io1 = h.add(IOTA, (S, S), 's32', [])
        io2 = h.add(IOTA, (S, S), 's32', [])
        mask = h.add(COMPARE, (S, S), 'pred', [io1, io2])
    else:
        am = h.param((B, S), adt)
        mask = am
    L = 0
    cm = m.compact
    per_layer = 48 if cm else 95
    while len(h) + per_layer < target * 0.93 or L == 0:
        L += 1
        inp = x
        if variant == 'gpt' and not cm:
            x = m.layernorm(x, rms=rng.random() < 0.5)
        x2 = h.reshape(x, (B * S, Hd))
        heads = []
        for _ in range(3):
            w = h.param((Hd, Hd), adt)
            q = h.dot(x2, w)
            if variant != 't5' and not cm:
                q = h.bin(ADD, q, h.bcast(h.param((Hd,), adt), (B * S, Hd), [1]))
            q4 = h.reshape(q, (B, S, nh, dh))
            heads.append(q4)
        q = h.transpose(heads[0], (0, 2, 1, 3))
        kT = h.transpose(heads[1], (0, 2, 3, 1))
        v = h.transpose(heads[2], (0, 2, 1, 3))
        sc = h.dot(q, kT)
        sc = h.bin(MULTIPLY, sc, h.scalar_bcast(adt, sc))
        if cm:
            pass
        elif variant == 'gpt':
            mb = h.bcast(mask, (B, nh, S, S), [2, 3], layout=h.lay(sc))
            sc = h.add(SELECT, (B, nh, S, S), adt, [mb, sc, h.scalar_bcast(adt, sc)], layout=h.lay(sc))
        else:
            sc = h.bin(ADD, sc, h.bcast(mask, (B, nh, S, S), [0, 3], layout=h.lay(sc)))
        scf = h.convert(sc, 'f32') if adt != 'f32' else sc
        p = m.softmax(scf, 3)
        if adt != 'f32':
            p = h.convert(p, adt)
        ctx = h.dot(p, v)
        ctx = h.transpose(ctx, (0, 2, 1, 3))
        ctx = h.reshape(ctx, (B * S, Hd))
        wo = h.param((Hd, Hd), adt)
        o = h.dot(ctx, wo)
        if not cm:
            o = h.bin(ADD, o, h.bcast(h.param((Hd,), adt), (B * S, Hd), [1]))
        o = h.reshape(o, (B, S, Hd))
        x = h.bin(ADD, o, inp)
        if variant != 'gpt' or cm:
            x = m.layernorm(x, rms=cm)
        inp2 = x
        f = int(_choice(rng, [2, 4]))
        x2 = h.reshape(x, (B * S, Hd))
        w1 = h.param((Hd, f * Hd), adt)
        u = h.dot(x2, w1)
        if cm:
            u = h.bin(MAXIMUM, u, h.scalar_bcast(adt, u))
        else:
            u = h.bin(ADD, u, h.bcast(h.param((f * Hd,), adt), h.shape(u), [1]))
            u = m.gelu(u)
        w2 = h.param((f * Hd, Hd), adt)
        d = h.dot(u, w2)
        if not cm:
            d = h.bin(ADD, d, h.bcast(h.param((Hd,), adt), h.shape(d), [1]))
        d = h.reshape(d, (B, S, Hd))
        x = h.bin(ADD, d, inp2)
        if variant != 'gpt' and not cm:
            x = m.layernorm(x)
    outs = []
    if variant == 'bert':
        first = h.add(SLICE, (B, 1, Hd), adt, [x], slice=([0, 0], [1, 1], [B, 1]))
        pooled = h.reshape(first, (B, Hd))
        wp = h.param((Hd, Hd), adt)
        pl = h.un(TANH, h.dot(pooled, wp))
        wc = h.param((Hd, 2), adt)
        outs.append(h.dot(pl, wc))
    x2 = h.reshape(x, (B * S, Hd))
    if train or variant != 'bert':
        wv = h.param((Hd, min(V, 8192)), adt)
        lg = h.dot(x2, wv)
        lf = h.convert(lg, 'f32') if adt != 'f32' else lg
        outs.append(m.softmax(lf, 1))
    else:
        outs.append(x2)
    return outs, variant, (B, S, Hd, nh, L)


def build_layout_graph(rng, source, target):
    hg = HG()
    adt = 'bf16' if rng.random() < 0.7 else 'f32'
    m = Model(hg, rng, style_tpu=rng.random() < 0.6, adt=adt)
    m.make_reducers()
    train = rng.random() < 0.55
    m.fused_bn = (not train) and rng.random() < 0.75
    m.compact = target < 220
    nwhile = int(rng.choice([0, 0, 1, 1, 2])) if target > 220 else 0
    wcomps = []
    if source == 'xla':
        fam = _choice(rng, ['res', 'res', 'mobile', 'unet', 'mlp'])
    else:
        fam = _choice(rng, ['bert', 'bert', 'gpt', 't5'])
    loop_shape = (8, 128) if fam in ('res', 'mobile', 'unet', 'mlp') else (16, 256)
    for _ in range(nwhile):
        wcomps.append(m.make_while_comps(loop_shape, adt))
    hg.begin_comp(split=True)
    pre = []
    for cond, body in wcomps:
        x0 = hg.param(loop_shape, adt)
        pre.append(m.while_loop(cond, body, x0))
    if fam in ('res', 'mobile'):
        outs, name, B = build_cnn(m, target, train, fam)
        ver = _choice(rng, ['18', '34', '50', '101', '152'] if fam == 'res' else ['_v1', '_v2', '_v3'])
        stem = f"{name}{ver}_{'train' if train else 'inference'}_batch_{B}"
    elif fam == 'unet':
        outs, name, B = build_unet3d(m, target, train)
        stem = f"unet_3d.{_choice(rng, ['4x4', '2x2', '8x8'])}.{adt}_batch_{B}"
    elif fam == 'mlp':
        outs, name, B = build_mlp(m, target, train)
        stem = f"dlrm_{'train' if train else 'inference'}_batch_{B}"
    else:
        outs, name, (B, S, Hd, nh, L) = build_transformer(m, target, train, fam)
        label = {'bert': 'bert_en_uncased', 'gpt': 'gpt_decoder', 't5': 't5_encoder'}[fam]
        stem = f"{label}_L-{L}_H-{Hd}_A-{nh}_batch_size_{B}_seq_{S}_{'train' if train else 'test'}"
    outs = outs + pre
    if len(outs) > 1 or rng.random() < 0.7:
        r = hg.tuple_(outs)
    else:
        r = outs[0]
    hg.root(r)
    return hg, stem


# ----------------------------------------------------------------------------------------------
# tile-collection kernels (one fused computation, as in the tile files)
# ----------------------------------------------------------------------------------------------
EW_UN = [EXP, TANH, NEGATE, RSQRT, LOGISTIC, ABS, LOG, SQRT]
EW_BIN = [ADD, MULTIPLY, SUBTRACT, MAXIMUM, MINIMUM, DIVIDE]


def _fill_chain(h, rng, x, nmore):
    """element-wise filler (bias, activations, scalings, masks)"""
    for _ in range(max(0, nmore)):
        r = rng.random()
        if r < 0.35:
            x = h.bin(int(_choice(rng, EW_BIN)), x, h.scalar_bcast(h.dt(x), x))
        elif r < 0.6:
            x = h.un(int(_choice(rng, EW_UN)), x)
        elif r < 0.75:
            p = h.param((h.shape(x)[-1],), h.dt(x))
            x = h.bin(int(_choice(rng, [ADD, MULTIPLY])), x, h.bcast(p, h.shape(x), [len(h.shape(x)) - 1],
                                                                    layout=h.lay(x)))
        elif r < 0.88:
            z = h.scalar_bcast(h.dt(x), x)
            m = h.add(COMPARE, h.shape(x), 'pred', [x, z], layout=h.lay(x))
            x = h.add(SELECT, h.shape(x), h.dt(x), [m, x, z], layout=h.lay(x))
        else:
            x = h.convert(x, 'f32' if h.dt(x) != 'f32' else 'bf16')
    return x


def build_tile_graph(rng, target):
    h = HG()
    kind = _choice(rng, ['conv', 'conv', 'conv', 'dot', 'dot', 'ew', 'ew', 'reduce', 'reduce', 'copy'])
    adt = 'bf16' if rng.random() < 0.7 else 'f32'
    tpu = rng.random() < 0.6
    red_root = None
    if kind == 'reduce' or rng.random() < 0.3:
        h.begin_comp()
        dtr = 'f32'
        a = h.param((), dtr)
        b = h.param((), dtr)
        red_root = h.root(h.bin(ADD if kind == 'reduce' else OR, a, b))
    nested = []

    def nested_comp(shape, dt, layout):
        h.begin_comp()
        p = h.param(shape, dt, layout=layout)
        rt = h.root(h.add(BITCAST, shape, dt, [p], layout=layout))
        nested.append(rt)
        return rt

    def act_l(r):
        if tpu and r == 4:
            return (3, 0, 2, 1)
        return _desc(r)

    if kind == 'conv':
        B = int(_choice(rng, [1, 2, 4, 8, 16, 32, 64, 128]))
        Hs = int(_choice(rng, [7, 8, 12, 14, 16, 19, 28, 32, 56, 64, 112]))
        ci = int(_choice(rng, [3, 16, 32, 64, 96, 128, 192, 256, 384, 512]))
        co = int(_choice(rng, [32, 64, 128, 192, 256, 384, 512, 1024]))
        k = int(_choice(rng, [1, 1, 3, 3, 3, 5, 7]))
        st = int(_choice(rng, [1, 1, 1, 2]))
        xs, ws = (B, Hs, Hs, ci), (k, k, ci, co)
        rx = nested_comp(xs, adt, act_l(4)) if rng.random() < 0.6 else None
        rw = nested_comp(ws, adt, _desc(4)) if rng.random() < 0.6 else None
        h.begin_comp()
        px = h.param(xs, adt, layout=act_l(4))
        x = h.add(FUSION, xs, adt, [rx, px], layout=act_l(4)) if rx is not None else px
        pw = h.param(ws, adt)
        w = h.add(FUSION, ws, adt, [rw, pw]) if rw is not None else pw
        pad = (k - 1) // 2
        o = (Hs + 2 * pad - k) // st + 1
        win = [dict(size=k, stride=st, pl=pad, ph=pad, wd=1, bd=1) for _ in range(2)]
        dn = dict(ib=0, **{'if': 3}, isp=[1, 2], ki=2, ko=3, ksp=[0, 1], ob=0, of=3)
        y = h.conv(x, w, (B, o, o, co), win, dn, layout=act_l(4))
    elif kind == 'dot':
        M = int(_choice(rng, [8, 32, 128, 256, 512, 1024, 2048, 4096]))
        K = int(_choice(rng, [64, 128, 256, 512, 768, 1024, 2048, 4096]))
        N = int(_choice(rng, [64, 128, 256, 512, 768, 1024, 3072, 4096]))
        bt = int(_choice(rng, [0, 0, 4, 8, 12, 16]))
        ls = (bt, M, K) if bt else (M, K)
        rs = (bt, K, N) if bt else (K, N)
        h.begin_comp()
        pa = h.param(ls, adt)
        pb = h.param(rs, adt)
        y = h.dot(pa, pb)
    elif kind in ('ew', 'copy'):
        r = int(_choice(rng, [2, 3, 4, 4]))
        dims = {2: [(1024, 768), (4096, 1000), (512, 3072), (32, 4096), (2048, 2048)],
                3: [(32, 128, 768), (8, 512, 1024), (64, 49, 512), (16, 256, 256)],
                4: [(32, 12, 12, 384), (2, 300, 300, 64), (128, 14, 14, 512), (32, 56, 56, 64),
                    (8, 28, 28, 256), (4, 112, 112, 32)]}[r]
        s = dims[int(rng.integers(len(dims)))]
        h.begin_comp()
        ninp = int(rng.integers(1, 4))
        outs_l = act_l(r)
        ins = []
        for i in range(ninp):
            lay = outs_l
            if (kind == 'copy' and i == 0) or rng.random() < 0.15:
                p = list(range(r))
                rng.shuffle(p)
                lay = tuple(p)
            ins.append(h.param(s, adt, layout=lay))
        if kind == 'copy':
            y = h.add(COPY, s, adt, [ins[0]], layout=outs_l)
        else:
            y = h.convert(ins[0], adt) if rng.random() < 0.3 else h.un(int(_choice(rng, EW_UN)), ins[0])
            h.N[y]['layout'] = outs_l
        for p in ins[1:]:
            y = h.add(int(_choice(rng, EW_BIN)), s, adt, [y, p], layout=outs_l)
    else:   # reduce
        shapes = [((64, 512, 1024), [2]), ((32, 128, 768), [0]), ((8, 512, 1024), [1]),
                  ((16, 384, 1024), [2]), ((128, 14, 14, 1024), [1, 2]), ((256, 7, 7, 2048), [1, 2]),
                  ((64, 28, 28, 512), [1, 2]), ((32, 56, 56, 256), [0]), ((4, 64, 64, 384), [3])]
        s, rd0 = shapes[int(rng.integers(len(shapes)))]
        r = len(s)
        h.begin_comp()
        lay = act_l(r)
        p = h.param(s, adt, layout=lay)
        y = h.convert(p, 'f32')
    # fill element-wise work, then the root
    nnow = len(h)
    if kind == 'reduce':
        y = _fill_chain(h, rng, y, max(2, (target - nnow - 10) // 3))
        rd = rd0
        r1 = h.reduce(y, rd, red_root)
        outs = [r1]
        if rng.random() < 0.5:
            sq = h.un(MULTIPLY, y)
            outs.append(h.reduce(sq, rd, red_root))
        rt = h.root(h.tuple_(outs) if len(outs) > 1 else outs[0])
    else:
        y = _fill_chain(h, rng, y, max(1, (target - nnow - 6) // 3))
        if rng.random() < 0.25 and red_root is not None and len(h.shape(y)) >= 2:
            s = h.shape(y)
            yr = h.reduce(h.convert(y, 'f32'), [0], red_root)
            rt = h.root(h.tuple_([y, yr]))
        else:
            rt = h.root(y)
    # outer computation: parameters for the fused computation's parameters + the fusion
    inner_params = [i for i, nd in enumerate(h.N) if nd['op'] == PARAM and i > (nested[-1] if nested else -1)
                    and (red_root is None or i > red_root)]
    h.begin_comp()
    outer = [h.param(h.shape(p), h.dt(p), layout=h.lay(p)) for p in inner_params]
    rs = h.N[rt]
    f = h.add(FUSION, rs['shape'], rs['dt'], outer + [rt], layout=rs['layout'])
    if rs['dt'] == 'tuple':
        h.N[f]['tsize'] = rs.get('tsize', 0)
    h.root(f)
    num = int(rng.integers(10, 4000))
    fp = int(rng.integers(-2 ** 62, 2 ** 62))
    name = {'conv': 'fusion', 'dot': 'fusion', 'ew': 'fusion', 'reduce': 'fusion', 'copy': 'copy'}[kind]
    if kind in ('conv', 'dot') and rng.random() < 0.2:
        name = 'convolution' if kind == 'conv' else 'dot'
    stem = f"{name}_{num}_{'-' if fp < 0 else ''}{abs(fp):x}"
    return h, stem


# ----------------------------------------------------------------------------------------------
# configuration generators
# ----------------------------------------------------------------------------------------------
def _rand_perm_rows(rng, c, shape):
    """random orders of the dims, large dims more likely in the minor positions"""
    w = np.array([min(max(x, 1), 128) ** 0.7 for x in shape], dtype=np.float64)
    keys = rng.random((c, len(shape))) ** (1.0 / w)
    return np.argsort(-keys, axis=1)


def _block_rows(rng, c, shape, p_full=0.55, p_part=0.35):
    """c random layout blocks (c, 6) for a tensor of this shape"""
    r = len(shape)
    out = np.full((c, 6), -1, dtype=np.int64)
    if r <= 1:
        return out
    perms = _rand_perm_rows(rng, c, shape)
    mode = rng.random(c)
    full = mode < p_full
    part = (mode >= p_full) & (mode < p_full + p_part)
    out[full, :r] = perms[full]
    out[part, :2] = perms[part, :2]
    return out


def _conf_info(h, a):
    nd = h.N[a]
    ops = nd['ops']
    x = ops[0] if ops else None
    w = ops[1] if (nd['op'] == CONV and len(ops) > 1) else None
    return dict(ro=len(nd['shape']), dlo=nd['layout'], so=nd['shape'],
                ri=len(h.N[x]['shape']) if x is not None else 0, dli=h.N[x]['layout'] if x is not None else (),
                si=h.N[x]['shape'] if x is not None else (),
                rk=len(h.N[w]['shape']) if w is not None else 0, dlk=h.N[w]['layout'] if w is not None else (),
                sk=h.N[w]['shape'] if w is not None else ())


def gen_random_configs(rng, infos, c):
    nc = len(infos)
    A = np.full((c, nc, 18), -1, dtype=np.int64)
    frac = rng.uniform(0.3, 0.95, size=c)
    for j, inf in enumerate(infos):
        chg = rng.random(c) < frac
        ob = _block_rows(rng, c, inf['so'])
        ib = _block_rows(rng, c, inf['si'])
        if inf['ri'] == inf['ro']:
            same = rng.random(c) < 0.4
            ib[same] = ob[same]
        kb = _block_rows(rng, c, inf['sk'], 0.6, 0.3)
        A[chg, j, 0:6] = ob[chg]
        A[chg, j, 6:12] = ib[chg]
        A[chg, j, 12:18] = kb[chg]
    nd = int(rng.integers(1, 3))
    A[rng.choice(c, size=min(nd, c), replace=False)] = -1
    ndup = int(0.05 * c)
    if ndup:
        dst = rng.choice(c, size=ndup, replace=False)
        srcs = rng.choice(c, size=ndup)
        A[dst] = A[srcs]
    return A


def _near_default_blocks(rng, r, dl):
    """layout blocks a compiler's search would try around its default dl"""
    cands = [[-1] * 6]
    w = [3.0]
    if r <= 1:
        return cands, w
    full = list(dl) + [-1] * (6 - r)
    cands.append(full)
    w.append(2.0)
    cands.append([dl[0], dl[1]] + [-1] * 4)
    w.append(1.5)
    for x in dl[2:]:
        cands.append([dl[0], x] + [-1] * 4)
        w.append(1.0)
    if r >= 4:
        for _ in range(3):
            maj = list(dl[2:])
            rng.shuffle(maj)
            cands.append([dl[0], dl[1]] + maj + [-1] * (6 - r))
            w.append(0.8)
    cands.append([dl[1], dl[0]] + [-1] * 4)
    w.append(0.25)
    if r >= 3:
        cands.append([dl[2], dl[0]] + [-1] * 4)
        w.append(0.1)
    return cands, w


def gen_default_configs(rng, infos, c, evaluate):
    """configs visited by a compiler-style search around its default: rounds of 1-2 node mutations of
    good configs found so far (judged by `evaluate`), with re-measured duplicates."""
    nc = len(infos)
    opts = []
    for inf in infos:
        oc, ow = _near_default_blocks(rng, inf['ro'], inf['dlo'])
        ic, iw = _near_default_blocks(rng, inf['ri'], inf['dli'])
        kc, kw = _near_default_blocks(rng, inf['rk'], inf['dlk']) if inf['rk'] else ([[-1] * 6], [1.0])
        opts.append((np.array(oc), np.array(ow) / sum(ow), np.array(ic), np.array(iw) / sum(iw),
                     np.array(kc), np.array(kw) / sum(kw)))
    movable = [j for j, inf in enumerate(infos) if inf['ro'] >= 2]
    A = np.full((c, nc, 18), -1, dtype=np.int64)
    if not movable or c < 2:
        return A

    def mutate(row):
        row = row.copy()
        k = int(_choice(rng, [1, 1, 1, 2, 2, 3]))
        for j in rng.choice(movable, size=min(k, len(movable)), replace=False):
            oc, ow, ic, iw, kc, kw = opts[j]
            row[j, 0:6] = oc[rng.choice(len(oc), p=ow)]
            row[j, 6:12] = ic[rng.choice(len(ic), p=iw)] if rng.random() < 0.45 else -1
            if rng.random() < 0.3:
                row[j, 12:18] = kc[rng.choice(len(kc), p=kw)]
        return row

    rounds = 5
    ends = [1] + [1 + int(round((c - 1) * (r + 1) / rounds)) for r in range(rounds)]
    ys = np.zeros(c)
    ys[:1] = evaluate(A[:1])
    for r in range(rounds):
        lo, hi = ends[r], ends[r + 1]
        if hi <= lo:
            continue
        good = np.argsort(ys[:lo], kind='stable')[:max(1, int(0.3 * lo))]
        for i in range(lo, hi):
            if rng.random() < 0.08:
                A[i] = A[int(rng.integers(0, i))] if i > lo else A[int(rng.integers(0, lo))]
            else:
                A[i] = mutate(A[int(good[int(rng.integers(len(good)))])] if r > 0 or rng.random() < 0.5
                              else A[0])
        ys[lo:hi] = evaluate(A[lo:hi])
    perm = rng.permutation(c)
    return A[perm]


def _bound_cands(bmax):
    s = set(range(1, min(bmax, 24) + 1))
    for d in range(1, bmax + 1):
        if bmax % d == 0:
            s.add(d)
    p = 1
    while p <= bmax:
        s.add(p)
        p *= 2
    s.add(bmax)
    return sorted(s)


def gen_tile_configs(rng, node_feat, node_opcode, edge_index, c_target):
    g = parse_graph(node_feat, node_opcode, edge_index)
    O = kernel_summary(g)
    so = g.shape[O] or (1,)
    PO = g.dl[O] or (0,)
    bo = max(g.b[O], 1)
    main = next((v for v in range(g.n) if g.op[v] in (CONV, DOT)), None)
    wshape, wl, bk = None, None, 2
    if main is not None:
        roles = conv_roles(g, main) if g.op[main] == CONV else dot_roles(g, main)
        if roles:
            wshape, wl, bk = g.shape[roles[1]], g.dl[roles[1]], max(g.b[roles[1]], 1)

    def units(shape, perm, b):
        u = [1] * len(shape)
        if perm:
            u[perm[0]] = 128
        return [max(1, _cdiv(s, uu)) for s, uu in zip(shape, u)]

    ob_max = units(so, PO, bo)
    ocands = [_bound_cands(b) for b in ob_max]
    kcands = [_bound_cands(b) for b in units(wshape, wl, bk)] if wshape else []
    seen = set()
    rows = []
    tries = 0
    while len(rows) < c_target and tries < c_target * 40:
        tries += 1
        ob = []
        for cs, bm in zip(ocands, ob_max):
            if rng.random() < 0.2:
                ob.append(bm)
            else:
                ob.append(int(cs[int(rng.integers(len(cs)))]))
        kb = []
        for cs in kcands:
            if rng.random() < 0.35:
                kb.append(int(cs[-1]))
            else:
                kb.append(int(cs[int(rng.integers(len(cs)))]))
        key = tuple(ob) + (-1,) + tuple(kb)
        if key in seen:
            continue
        seen.add(key)
        rows.append((kb, ob))
    cf = np.zeros((len(rows), 24), dtype=np.float32)
    for i, (kb, ob) in enumerate(rows):
        if kb:
            cf[i, 0:8] = _seq_sp(kb, 6)
        cf[i, 8:16] = _seq_sp(ob, 6)
    return cf


# ----------------------------------------------------------------------------------------------
# measurement noise (heavy tailed)
# ----------------------------------------------------------------------------------------------
def noisy(rng, y, jitter, p_out, out_scale):
    y = np.asarray(y, dtype=np.float64)
    eps = jitter * rng.standard_t(2.5, size=y.shape)
    eps = np.clip(eps, -8 * jitter, 60 * jitter)
    f = 1.0 + eps
    out = rng.random(y.shape) < p_out
    f = np.where(out, f * (1.0 + np.minimum(out_scale * (1.0 + rng.pareto(1.2, size=y.shape)), 3.0)), f)
    return np.maximum(np.rint(y * f), 1).astype(np.int64)


# ==============================================================================================
# DATASET WRITER
# ==============================================================================================
SCALES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay=(16, 6, 4), lay_nodes=(200, 1500), lay_conf=(20, 120), lay_cfg=(300, 3000),
                  lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay=(4, 2, 2), lay_nodes=(40, 150), lay_conf=(5, 20), lay_cfg=(30, 200),
                 lay_test_cfg=(30, 60)),
}
COLLS = ['tile:xla', 'layout:xla:default', 'layout:xla:random', 'layout:nlp:default', 'layout:nlp:random']
SPLITS = ['train', 'valid', 'test']


def _rng(*keys):
    h = hashlib.sha256(repr(keys).encode()).digest()
    return np.random.default_rng([int.from_bytes(h[i:i + 4], 'little') for i in range(0, 32, 4)])


def _hex32(*keys):
    return hashlib.md5(repr(keys).encode()).hexdigest()


def _loguniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def _write(root, rel, arrays, noiseless=None):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    np.savez_compressed(p, **arrays)
    if noiseless is not None:
        q = os.path.join(root, 'noiseless', rel[:-4] + '.npy')
        os.makedirs(os.path.dirname(q), exist_ok=True)
        np.save(q, np.asarray(noiseless, dtype=np.float64))


def make_tile(job):
    root, seed, scale, split, idx = job
    S = SCALES[scale]
    rng = _rng('tile', seed, scale, split, idx)
    lo, hi = S['tile_nodes']
    ct = int(rng.integers(S['tile_cfg'][0], S['tile_cfg'][1] + 1))
    for _ in range(20):
        target = int(rng.integers(lo, hi + 1))
        h, stem = build_tile_graph(rng, target)
        if not lo <= len(h) <= hi:
            continue
        nf = featurize(h)
        opc = opcodes(h)
        ei = h.edges()
        cf = gen_tile_configs(rng, nf, opc, ei, 3 * ct)
        if cf.shape[0] >= ct:
            break
    # the autotuner's space leaves out hopeless tilings (far slower than the best candidate)
    y_all = tile_noiseless(nf, opc, ei, cf)
    order = np.argsort(y_all, kind='stable')
    ok = [int(i) for i in order if y_all[i] <= 25.0 * y_all[order[0]]]
    if len(ok) < ct:
        ok = [int(i) for i in order[:ct]]
    pick = np.sort(rng.choice(ok, size=min(ct, len(ok)), replace=False))
    cf = cf[rng.permutation(pick)]
    c = cf.shape[0]
    if split == 'test':
        stem = _hex32('tile', seed, scale, idx)
        arr = dict(node_feat=nf, node_opcode=opc, edge_index=ei, config_feat=cf,
                   config_runtime=np.zeros(c, dtype=np.int64),
                   config_runtime_normalizers=np.ones(c, dtype=np.int64))
        _write(root, f"npz/tile/xla/test/{stem}.npz", arr)
        return ('tile:xla', split, len(h), c)
    y = tile_noiseless(nf, opc, ei, cf)
    # the compiler's default tiling: its own (imperfect) estimate of the best one
    d = int(np.argmin(y * np.exp(0.12 * rng.standard_normal(c))))
    meas = noisy(rng, y, 0.01, 0.03, 0.08)
    norm = noisy(rng, y[d:d + 1], 0.01, 0.03, 0.08)[0]
    arr = dict(node_feat=nf, node_opcode=opc, edge_index=ei, config_feat=cf,
               config_runtime=meas, config_runtime_normalizers=np.full(c, norm, dtype=np.int64))
    stem = f"{stem}"
    _write(root, f"npz/tile/xla/{split}/{stem}.npz", arr, noiseless=y)
    return ('tile:xla', split, len(h), c)


def make_layout(job):
    root, seed, scale, coll, split, idx = job
    S = SCALES[scale]
    _, source, search = coll.split(':')
    rng = _rng('layout', seed, scale, coll, split, idx)
    lo, hi = S['lay_nodes']
    clo = S['lay_conf'][0]
    best, bscore = None, None
    for _ in range(12):
        target = _loguniform(rng, lo, hi)
        h, stem = build_layout_graph(rng, source, target)
        nel = sum(1 for nd in h.N if nd['op'] in ASSIGNING)
        score = max(0, lo - len(h)) + max(0, len(h) - hi) + 20 * max(0, clo - nel)
        if best is None or score < bscore:
            best, bscore = (h, stem), score
        if score == 0:
            break
    h, stem = best
    nf = featurize(h)
    opc = opcodes(h)
    ei = h.edges()
    n = len(h)
    splits = np.array([h.splits + ([n] if h.splits[-1] != n else [])], dtype=np.int64)
    elig = [i for i, nd in enumerate(h.N) if nd['op'] in ASSIGNING]
    clo, chi = S['lay_conf']
    k = min(len(elig), int(rng.integers(clo, chi + 1)))
    wts = np.array([(3.0 if h.N[i]['op'] in (CONV, DOT) else 2.0 if h.N[i]['op'] == TRANSPOSE else 1.5)
                    * (1.0 if len(h.N[i]['shape']) >= 2 else 0.15) for i in elig])
    conf = sorted(int(x) for x in rng.choice(elig, size=k, replace=False, p=wts / wts.sum())) if k else []
    infos = [_conf_info(h, a) for a in conf]
    if split == 'test':
        c = int(rng.integers(S['lay_test_cfg'][0], S['lay_test_cfg'][1] + 1))
    else:
        c = _loguniform(rng, *S['lay_cfg'])
    if search == 'random':
        A = gen_random_configs(rng, infos, c)
    else:
        A = gen_default_configs(rng, infos, c, lambda B: layout_noiseless(
            nf, opc, ei, np.array(conf, dtype=np.int64), B.astype(np.float32)))
    ncf = A.astype(np.float32)
    nci = np.array(conf, dtype=np.int64)
    arr = dict(node_feat=nf, node_opcode=opc, edge_index=ei, node_config_feat=ncf,
               node_config_ids=nci, node_splits=splits)
    base = f"npz/layout/{source}/{search}/{split}"
    if split == 'test':
        stem = _hex32('layout', seed, scale, coll, idx)
        arr['config_runtime'] = np.zeros(c, dtype=np.int64)
        _write(root, f"{base}/{stem}.npz", arr)
        return (coll, split, n, c)
    y = layout_noiseless(nf, opc, ei, nci, ncf)
    arr['config_runtime'] = noisy(rng, y, 0.0025, 0.02, 0.03)
    stem = f"{stem}_{_hex32('s', seed, coll, split, idx)[:6]}"
    _write(root, f"{base}/{stem}.npz", arr, noiseless=y)
    return (coll, split, n, c)


def _run(job):
    t = time.time()
    if job[0] == 'T':
        r = make_tile(job[1:])
    else:
        r = make_layout(job[1:])
    return r + (time.time() - t,)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=['tiny', 'small'], default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    ap.add_argument('--jobs', type=int, default=2)
    a = ap.parse_args(argv)
    S = SCALES[a.scale]
    root = a.out
    os.makedirs(root, exist_ok=True)

    def cnt(x):
        return max(1, int(round(x * a.graphs_factor)))

    jobs = []
    for coll in COLLS[1:]:
        for si, sp in enumerate(SPLITS):
            for i in range(cnt(S['lay'][si])):
                jobs.append(('L', root, a.seed, a.scale, coll, sp, i))
    for si, sp in enumerate(SPLITS):
        for i in range(cnt(S['tile'][si])):
            jobs.append(('T', root, a.seed, a.scale, sp, i))
    t0 = time.time()
    if a.jobs > 1:
        import multiprocessing as mp
        with mp.get_context('fork').Pool(a.jobs) as pool:
            res = list(pool.imap_unordered(_run, jobs, chunksize=1))
    else:
        res = [_run(j) for j in jobs]
    by = {}
    for coll, sp, n, c, dt in res:
        k = (coll, sp)
        e = by.setdefault(k, [0, 0, 0, 0.0])
        e[0] += 1
        e[1] += n
        e[2] += c
        e[3] += dt
    for (coll, sp), (g, n, c, dt) in sorted(by.items()):
        print(f"{coll:22s} {sp:5s} graphs={g:3d} mean_nodes={n / g:7.1f} mean_configs={c / g:7.1f} "
              f"cpu={dt:6.1f}s")
    print(f"done in {time.time() - t0:.1f}s -> {root}")


if __name__ == '__main__':
    main()
