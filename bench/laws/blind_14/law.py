#!/usr/bin/env python3
"""Blind runtime law 14: a synthetic TpuGraphs-format dataset generator.

Usage:
    python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Everything below is the law's own model of a TPU-like machine.  It was written
without reading the ranking tool's code or its generator.  The noise-free runtime
of every labeled file is computed *from the arrays written into that file*
(function `layout_runtime(arrays)` / `tile_runtime(arrays)`), never from hidden
generator state.

======================================================================
THE LAW (kept out of NOTE.md on purpose)
======================================================================
Machine constants: HBM bandwidth BW bytes/ns, HBM transfers move whole bursts of
BURST bytes, vector unit works on (sublane x 128) vregs (sublane = 8 for 32-bit,
16 for 16-bit), matrix unit of MXU_RATE flop/ns (f32 at a fraction of bf16).

Layout collections (per-node costs, summed; one core executes ops in sequence).
 * Layout propagation: parameters/constants/get-tuple-element keep their
   default layout (node_feat 134-139); elementwise-like ops inherit the layout
   of their first non-broadcast operand; reduce drops the reduced dims from its
   operand's layout; transpose is turned into a bitcast (its layout is the
   permuted operand layout); convolution / dot / reshape take the configured
   output layout (partial specs are completed with the node's default order,
   all -1 = default).  A configured input (and conv kernel) layout that differs
   from the producer's physical layout inserts a relayout copy (partial input
   specs are completed with the producer's own order, so matching minor dims
   need no copy).
 * HBM access efficiency: an op reads/writes blocks (BLOCK_ELEMS elements) that
   are filled along the op's *preferred* dims (fastest first).  The contiguous
   run in HBM is the product of the block extents along the physical
   minor-to-major order until the first dim the block does not cover fully.
   Each run costs whole bursts: eff = run_bytes / (ceil(run_bytes/BURST)*BURST).
 * Vector work is done on padded tiles of the two most-minor physical dims
   (128 lanes, 8/16 sublanes), so small minor dims waste vector throughput.
 * Convolutions choose the cheapest of four internal loop orders
   (feature-in-lanes, batch-in-lanes, spatial-in-lanes, generic). Each order
   has its own base efficiency, its own lane-utilisation formula (feature /
   im2col-K / batch / innermost-spatial sizes vs 128), its own preferred block
   orders for input/kernel/output, and pays an in-VMEM transpose for every
   operand whose physical minor dim is not the one it wants.
   Time = max(mxu, mem) + OVL*min(mxu, mem) + transposes + launch.
 * Dots (canonical form: lhs [b..,M,K], rhs [b..,K,N]) choose among five loop
   orders the same way (NN, NT, TN, transposed-output, generic).
 * Reshape is a free bitcast only if both sides are row-major (up to unit
   dims); otherwise a copy whose burst efficiency is set by the common logical
   row-major run of the two layouts.  Weighted more in matmul programs.
 * Reduce pays extra cross-lane / cross-sublane work when it reduces the
   physical minor / second-minor dim.  Reduce-window pays extra when its window
   spans the minor dim.
 * Elementwise ops read mismatched operands with a transposing (burst-limited)
   read.  Rigid consumers (tuple, while, custom-call, all-reduce, ...) need
   the operand's default layout, else a copy.
 * Fusion (path effect): an elementwise op with a single consumer is fused
   into that consumer (its HBM write + read and launch are refunded at the
   fraction FUSE) only if all of its operands already share its layout and the
   consumer takes it without a relayout; so a chain A -> e1 -> e2 -> B fuses
   only when A's output layout agrees with B's input layout along the path.
 * Cross-op pipelining (path of three matrix ops A -> B -> C, each found by
   walking operand 0 back through up to 8 glue nodes: elementwise, slice-like,
   reshape, transpose): if B reads without relayout with feature/K minor and
   writes feature/N minor, and C reads B's result without relayout with
   feature/K minor, part of B's output traffic and launch is hidden (PIPE).
 * Program kind: kappa = #conv / (#conv + #dot) of the file; fusion refund
   and reshape-copy weight grow with (1-kappa), pipelining with kappa.
 * A per-graph constant (launch/infeed) is added.

Tile collection (one fused kernel, per config):
 * Bounds are tile sizes per physical dim (major to minor) of the kernel's
   iteration space, in units of 128 on the minor dim, 8/16 on the second-minor
   dim and 1 elsewhere.  Grid = prod ceil(D/T); partial tiles are padded work.
 * Matrix kernels (conv / dot): output tile M_t x N_t, kernel tile gives the
   K chunk (in-feature x window) and the weight block.  If the whole K fits in
   one chunk the compiler keeps one operand resident across steps (weights
   outer or activations outer, whichever moves fewer bytes); otherwise both
   are re-fetched every step.  Halo of the window is re-read.  A kernel weight
   block narrower than the output feature tile needs several descriptors.
   Per step: max(MXU time (with systolic fill M_t/(M_t+M0)), DMA time) + step
   overhead; plus an un-overlapped prologue (first loads) and epilogue (last
   store + fused epilogue ops).  Over-subscribed VMEM spills (penalty).
 * Elementwise / reduce kernels: per step max(vector work on padded tile, DMA)
   + overhead, DMA also pays per contiguous row segment; reductions over the
   lane dim pay cross-lane work; prologue/epilogue as above.
Config sets: tile configs sample per-dim bound candidates; failed compiles
(footprint > 2.5 VMEM) are dropped; the default (row 0, normaliser) is the
argmin of a cruder analytical model (no bursts, smaller step overhead, ...).
Layout "random" search draws layouts from per-tensor libraries (partial specs,
a few all -1 blocks); "default" search writes the default layouts and moves
1-2 nodes per config (major-dim swaps, neighbours, -1 blocks, coherent
producer/consumer moves), with ~15% exact duplicates.
Noise: multiplicative log-normal with a per-graph sigma (layout 2e-4..5e-3,
tile 3e-3..3e-2, log-uniform), plus 1-5% of configs measured with a
systematic slowdown of 2-6%.
"""
import argparse
import functools
import math
import os
import sys
import time

import numpy as np

# ----------------------------------------------------------------------------
# HLO facts
# ----------------------------------------------------------------------------
OPC = dict(
    abs=1, add=2, all_reduce=5, bitcast=11, bitcast_convert=12, broadcast=13,
    ceil=15, clamp=17, compare=20, concatenate=22, conditional=23, constant=24,
    convert=25, convolution=26, copy=27, custom_call=31, divide=32, dot=34,
    dynamic_slice=35, dynamic_update_slice=36, exponential=37, floor=40,
    fusion=41, gather=42, get_tuple_element=45, iota=48, log=50, and_=52,
    not_=53, or_=54, maximum=57, minimum=58, multiply=59, negate=60, pad=62,
    parameter=63, power=66, reduce=70, reduce_window=72, reshape=75,
    reverse=76, rng=77, rsqrt=81, select=83, select_and_scatter=84,
    shift_left=87, shift_right_logical=89, slice=92, sort=93, sqrt=94,
    subtract=95, tanh=96, transpose=98, tuple=100, while_=102, logistic=107,
)
EW_OPS = {1, 2, 7, 12, 15, 17, 19, 20, 25, 30, 32, 37, 38, 40, 49, 50, 51, 52,
          53, 54, 55, 57, 58, 59, 60, 65, 66, 71, 73, 80, 81, 83, 87, 88, 89,
          90, 91, 94, 95, 96, 103, 107, 118, 120}
HEAVY_EW = {32, 37, 38, 50, 51, 66, 81, 94, 96, 107, 30, 91, 120, 7}
FREE_OPS = {13, 24, 48, 77}
INHERIT_OPS = {92, 62, 22, 35, 36, 76, 27, 11, 42, 82}
RIGID_OPS = {100, 102, 31, 5, 61, 93, 23, 14, 111, 104, 6, 18}
FIXED_OPS = {63, 45}

ETYPES = ['invalid', 'pred', 's8', 's16', 's32', 's64', 'u8', 'u16', 'u32',
          'u64', 'f16', 'f32', 'f64', 'bf16', 'c64', 'c128', 'tuple',
          'opaque', 'token']
ESIZE = {'invalid': 4, 'pred': 1, 's8': 1, 's16': 2, 's32': 4, 's64': 8,
         'u8': 1, 'u16': 2, 'u32': 4, 'u64': 8, 'f16': 2, 'f32': 4, 'f64': 8,
         'bf16': 2, 'c64': 8, 'c128': 16, 'tuple': 4, 'opaque': 4, 'token': 4}


def desc(r):
    return tuple(range(r - 1, -1, -1))


# ----------------------------------------------------------------------------
# Graph builder and the 140-column featurizer
# ----------------------------------------------------------------------------
class Node:
    __slots__ = ('op', 'shape', 'et', 'lay', 'ops', 'dims', 'win', 'cdn', 'fgc',
                 'root', 'pnum', 'tup', 'slc', 'pad', 'dss', 'stable')

    def __init__(self, op, shape, et, ops):
        self.op = op
        self.shape = tuple(int(s) for s in shape)
        self.et = et
        self.ops = list(ops)
        self.lay = None
        self.dims = []
        self.win = None
        self.cdn = None
        self.fgc = 0
        self.root = 0
        self.pnum = 0
        self.tup = 0
        self.slc = None
        self.pad = None
        self.dss = None
        self.stable = 0


class Builder:
    def __init__(self):
        self.N = []
        self.pcount = 0

    def __len__(self):
        return len(self.N)

    def add(self, op, shape, et, ops=(), lay=None, dims=None, **kw):
        n = Node(op, shape, et, ops)
        if dims is not None:
            n.dims = list(dims)
        for k, v in kw.items():
            setattr(n, k, v)
        r = len(n.shape)
        if lay is None:
            lay = self._infer_layout(n)
        assert len(lay) == r and sorted(lay) == list(range(r)), (op, shape, lay)
        n.lay = tuple(lay)
        self.N.append(n)
        return len(self.N) - 1

    def _infer_layout(self, n):
        r = len(n.shape)
        if r == 0:
            return ()
        if n.op in EW_OPS or n.op in INHERIT_OPS or n.op in (72, 84):
            for o in n.ops:
                on = self.N[o]
                if on.op not in FREE_OPS and len(on.shape) == r:
                    return on.lay
            return desc(r)
        if n.op == 70 and n.ops:
            src = self.N[n.ops[0]]
            red = set(n.dims)
            keep = [d for d in range(len(src.shape)) if d not in red]
            ren = {d: i for i, d in enumerate(keep)}
            return tuple(ren[d] for d in src.lay if d in ren)
        if n.op == 98 and n.ops:
            src = self.N[n.ops[0]]
            P = n.dims
            inv = {P[k]: k for k in range(len(P))}
            return tuple(inv[d] for d in src.lay)
        return desc(r)

    # convenience constructors --------------------------------------------
    def param(self, shape, et, lay=None):
        i = self.add(63, shape, et, (), lay=lay, pnum=self.pcount)
        self.pcount += 1
        return i

    def const(self, shape, et):
        return self.add(24, shape, et, ())

    def sconst(self, et):
        """A scalar constant shared by many consumers."""
        if not hasattr(self, '_sc'):
            self._sc = {}
        if et not in self._sc:
            self._sc[et] = self.add(24, (), et, ())
        return self._sc[et]

    def cb(self, shape, et):
        """Broadcast of the shared scalar constant, reused per shape."""
        if not hasattr(self, '_cb'):
            self._cb = {}
        key = (tuple(shape), et)
        if key not in self._cb:
            self._cb[key] = self.bcast(self.sconst(et), shape, [])
        return self._cb[key]

    def bcast(self, src, shape, dims):
        return self.add(13, shape, self.N[src].et, (src,), dims=dims)

    def ew(self, op, *ops, et=None):
        s = self.N[ops[0]]
        return self.add(op, s.shape, et or s.et, ops)

    def sh(self, i):
        return self.N[i].shape


def featurize(N):
    n = len(N)
    F = np.zeros((n, 140), np.float32)
    op = np.zeros(n, np.uint8)
    edges = []
    for i, nd in enumerate(N):
        op[i] = nd.op
        f = F[i]
        f[0] = nd.root
        f[2 + ETYPES.index(nd.et)] = 1.0
        sh = list(nd.shape)[:6]
        f[21:21 + len(sh)] = sh
        f[27] = sum(nd.shape)
        f[28] = float(np.prod(nd.shape)) if nd.shape else 1.0
        f[29] = nd.tup
        f[30] = nd.pnum
        d = nd.dims[:6]
        f[31:31 + len(d)] = d
        # window: size, stride, pad lo, pad hi, win dil, base dil (6+sum+prod)
        w = nd.win
        base = 37
        keys = ('size', 'stride', 'plo', 'phi', 'wdil', 'bdil')
        for k in keys:
            vals = w[k] if w else []
            f[base:base + len(vals[:6])] = vals[:6]
            f[base + 6] = sum(vals)
            f[base + 7] = float(np.prod(vals)) if vals else 1.0
            base += 8
        nw = len(w['size']) if w else 0
        f[91] = 0.0
        f[92] = nw  # window_reversal false count
        c = nd.cdn
        if c:
            f[93] = c['ib']
            f[94] = c['if']
            f[95:95 + len(c['isp'][:4])] = c['isp'][:4]
            f[99] = c['ki']
            f[100] = c['ko']
            f[101:101 + len(c['ksp'][:4])] = c['ksp'][:4]
            f[105] = c['ob']
            f[106] = c['of']
            f[107] = nd.fgc or 1
            f[108] = 1
        s = nd.slc
        base = 109
        for k in range(3):
            vals = s[k] if s else []
            f[base:base + len(vals[:2])] = vals[:2]
            f[base + 2] = sum(vals)
            f[base + 3] = float(np.prod(vals)) if vals else 1.0
            base += 4
        vals = nd.dss or []
        f[121:121 + len(vals[:2])] = vals[:2]
        f[123] = sum(vals)
        f[124] = float(np.prod(vals)) if vals else 1.0
        p = nd.pad
        base = 125
        for k in range(2):
            vals = p[k] if p else []
            f[base:base + len(vals[:2])] = vals[:2]
            f[base + 2] = sum(vals)
            f[base + 3] = float(np.prod(vals)) if vals else 1.0
            base += 4
        f[133] = nd.stable
        lay = list(nd.lay)[:6]
        f[134:134 + len(lay)] = lay
        for o in nd.ops:
            edges.append((i, o))
    E = np.array(edges, np.int64).reshape(-1, 2)
    return F, op, E


# ----------------------------------------------------------------------------
# Reading graph facts back from the arrays (the law only uses these)
# ----------------------------------------------------------------------------
class GView:
    """Everything the law knows about a graph, decoded from the file arrays."""

    def __init__(self, A):
        F = A['node_feat']
        self.op = A['node_opcode'].astype(np.int64)
        n = len(self.op)
        self.n = n
        E = A['edge_index']
        self.ops = [[] for _ in range(n)]
        self.cons = [[] for _ in range(n)]
        for u, v in E:
            self.ops[int(u)].append(int(v))
            self.cons[int(v)].append(int(u))
        self.shape = []
        self.et = []
        self.lay = []
        self.esize = np.zeros(n)
        for i in range(n):
            dims = F[i, 21:27]
            r = int(np.count_nonzero(dims))
            sh = tuple(int(x) for x in dims[:r])
            self.shape.append(sh)
            t = int(np.argmax(F[i, 2:21]))
            et = ETYPES[t]
            self.et.append(et)
            self.esize[i] = ESIZE[et]
            lay = tuple(int(x) for x in F[i, 134:134 + r])
            if sorted(lay) != list(range(r)):
                lay = desc(r)
            self.lay.append(lay)
        self.F = F
        self._vol = [float(np.prod(s)) if s else 1.0 for s in self.shape]

    def vol(self, i):
        return self._vol[i]

    def nbytes(self, i):
        return self._vol[i] * self.esize[i]

    def dimsattr(self, i, k):
        return [int(x) for x in self.F[i, 31:31 + k]]

    def conv_dn(self, i):
        f = self.F[i]
        r = len(self.shape[i])
        ns = max(r - 2, 0)
        return dict(ib=int(f[93]), if_=int(f[94]), isp=[int(x) for x in f[95:95 + ns]],
                    ki=int(f[99]), ko=int(f[100]), ksp=[int(x) for x in f[101:101 + ns]],
                    ob=int(f[105]), of=int(f[106]),
                    win=[int(x) for x in f[37:37 + ns]],
                    stride=[int(x) for x in f[45:45 + ns]],
                    fgc=max(1, int(f[107])))


# ----------------------------------------------------------------------------
# Machine constants of the law
# ----------------------------------------------------------------------------
BW = 1200.0            # bytes / ns
BURST = 128.0          # bytes per HBM burst
BLOCK_ELEMS = 16384    # elements in an op's VMEM block
VPU_RATE = 4096.0      # padded elements / ns for one simple vector op
XLU_RATE = 450.0       # bytes / ns for an in-VMEM transpose
MXU_BF16 = 1.3e5       # flop / ns
MXU_F32_FRAC = 0.4
OVL = 0.18             # imperfect overlap of compute and memory
OVH_MX = 1500.0
OVH_EW = 350.0
OVH_SMALL = 60.0
OVH_COPY = 600.0
LANE_RED = 1.6
SUB_RED = 0.5
M_FILL = 96.0


def sublane(esize):
    return int(max(8, 32 // max(int(esize), 1)))


def pad_to(x, m):
    return int(math.ceil(x / m) * m)


def padvol(shape, perm, esize):
    r = len(shape)
    if r == 0:
        return 1.0
    if r == 1:
        return float(pad_to(shape[0], 128))
    v = 1.0
    for k, d in enumerate(perm):
        if k == 0:
            v *= pad_to(shape[d], 128)
        elif k == 1:
            v *= pad_to(shape[d], sublane(esize))
        else:
            v *= shape[d]
    return v


def burst_eff(run_bytes):
    if run_bytes <= 0:
        return 1.0
    return run_bytes / (math.ceil(run_bytes / BURST) * BURST)


def access_eff(shape, perm, pref, esize):
    return _access_eff(tuple(shape), tuple(perm), tuple(pref), float(esize))


@functools.lru_cache(maxsize=200000)
def _access_eff(shape, perm, pref, esize):
    """Burst efficiency of moving blocks filled along `pref` from layout `perm`."""
    r = len(shape)
    if r == 0:
        return 1.0
    ext = [1] * r
    rem = BLOCK_ELEMS
    for d in pref:
        if rem <= 1:
            break
        if shape[d] <= rem:
            ext[d] = shape[d]
            rem //= max(shape[d], 1)
        else:
            ext[d] = rem
            rem = 1
    run = 1
    for d in perm:
        run *= ext[d]
        if ext[d] < shape[d]:
            break
    return burst_eff(run * esize)


def relayout_time(shape, src, dst, esize):
    if src == dst or len(shape) < 2:
        return 0.0
    b = float(math.prod(shape)) * esize
    eff = access_eff(shape, src, dst, esize)
    return b / BW * (1.0 / eff + 1.0) + OVH_COPY


def rowmajor_run(shape, perm):
    r = len(shape)
    run = 1
    k = r - 1
    for d in perm:
        if shape[d] == 1:
            continue
        while k >= 0 and shape[k] == 1:
            k -= 1
        if d == k:
            run *= shape[d]
            k -= 1
        else:
            break
    return run


# layout codes -----------------------------------------------------------------
_DEC = {}


def enc(p):
    c = 0
    for k, d in enumerate(p):
        c += (d + 1) * (8 ** k)
    if c not in _DEC:
        _DEC[c] = tuple(p)
    return c


def dec(c):
    return _DEC[int(c)]


def spec_code(row6):
    """Partial layout spec (6 floats, -1 padded) -> int code (0 = all -1)."""
    c = 0
    for k in range(6):
        x = int(row6[k])
        if x < 0:
            break
        c += (x + 1) * (8 ** k)
    return c


def spec_dims(c):
    out = []
    c = int(c)
    while c:
        out.append(c % 8 - 1)
        c //= 8
    return out


def complete(spec_c, base):
    dims = spec_dims(spec_c)
    if not dims:
        return tuple(base)
    r = len(base)
    dims = [d for d in dims if 0 <= d < r]
    seen = set()
    fixed = []
    for d in dims:
        if d not in seen:
            fixed.append(d)
            seen.add(d)
    rest = [d for d in base if d not in seen]
    return tuple(fixed + rest)


# ----------------------------------------------------------------------------
# Layout law
# ----------------------------------------------------------------------------
def _codes_from_block(block):
    """block (U, 6) float -> int code per row; collapses to int if constant."""
    U = block.shape[0]
    val = np.zeros(U, np.int64)
    alive = np.ones(U, bool)
    for k in range(6):
        x = block[:, k].astype(np.int64)
        alive &= x >= 0
        val += np.where(alive, (x + 1) * (8 ** k), 0)
    if U == 0 or np.all(val == val[0]):
        return int(val[0]) if U else 0
    return val


def _evaluate(keys, fn, n_out):
    """Evaluate scalar fn on the unique combinations of (int | array) keys."""
    arrs = [k for k in keys if isinstance(k, np.ndarray)]
    if not arrs:
        return fn(*keys)
    U = len(arrs[0])
    key = np.zeros(U, np.int64)
    for a in arrs:
        u, ai = np.unique(a, return_inverse=True)
        key = key * len(u) + ai.reshape(-1)
        if key.max(initial=0) > (1 << 40):
            key = np.unique(key, return_inverse=True)[1].reshape(-1)
    uk, first, kinv = np.unique(key, return_index=True, return_inverse=True)
    kinv = kinv.reshape(-1)
    res = []
    for f0 in first:
        args = [k[f0] if isinstance(k, np.ndarray) else k for k in keys]
        res.append(fn(*args))
    outs = []
    for p in range(n_out):
        col = np.array([r[p] for r in res])
        if np.all(col == col[0]):
            v = col[0]
            outs.append(float(v) if p == 0 else int(v))
        else:
            outs.append(col[kinv])
    return tuple(outs)


def _pad128(x):
    return pad_to(max(x, 1), 128)


def layout_runtime(A):
    """Noise-free runtime (ns, float64 array of shape (c,)) of a layout file."""
    g = GView(A)
    ids = [int(i) for i in A['node_config_ids']]
    ncf = A['node_config_feat']
    c = ncf.shape[0]
    flat = ncf.reshape(c, -1)
    uq, inv = np.unique(flat, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    U = uq.shape[0]
    ncfu = uq.reshape(U, len(ids), 18)
    spec = {}
    for j, i in enumerate(ids):
        spec[i] = (_codes_from_block(ncfu[:, j, 0:6]),
                   _codes_from_block(ncfu[:, j, 6:12]),
                   _codes_from_block(ncfu[:, j, 12:18]))

    op = g.op
    n_conv = int(np.sum(op == 26))
    n_dot = int(np.sum(op == 34))
    kappa = n_conv / max(1, n_conv + n_dot)
    FUSE = 0.55 + 0.35 * (1.0 - kappa)
    W_RS = 1.0 + 0.8 * (1.0 - kappa)
    PIPE = 0.25 + 0.35 * kappa

    n = g.n
    phys = [0] * n
    fus = [0] * n
    pipe = [0] * n
    total = 0.0
    glue = EW_OPS | INHERIT_OPS | {72, 75, 98}

    def fuse_cand(o):
        return op[o] in EW_OPS and len(g.cons[o]) == 1

    def upstream_mx(i):
        if not g.ops[i]:
            return -1
        o = g.ops[i][0]
        for _ in range(8):
            if op[o] in (26, 34):
                return o
            if op[o] in glue and g.ops[o]:
                nf = [q for q in g.ops[o] if op[q] not in FREE_OPS]
                if not nf:
                    return -1
                o = nf[0]
            else:
                return -1
        return -1

    def overlap(a, b):
        return max(a, b) + OVL * min(a, b)

    # ------------------------------------------------ matrix-op loop orders
    def mx_strategies(i, x, y):
        """List of (t_mxu, ((shape, esize, bytes, pref|None, needx) x3)) or a float."""
        so = g.shape[i]
        r = len(so)
        sx, sy = g.shape[x], g.shape[y]
        ex, ey, eo = g.esize[x], g.esize[y], g.esize[i]
        bx, by, bo = g.nbytes(x), g.nbytes(y), g.nbytes(i)
        rate = MXU_BF16 * (MXU_F32_FRAC if ex >= 4 else 1.0)
        out = []
        if op[i] == 26:
            dn = g.conv_dn(i)
            b, f = dn['ib'], dn['if_']
            sp = [d for d in dn['isp'] if 0 <= d < len(sx)]
            ki, ko = dn['ki'], dn['ko']
            ksp = [d for d in dn['ksp'] if 0 <= d < len(sy)]
            ob, of = dn['ob'], dn['of']
            osp = [d for d in range(r) if d not in (ob, of)]
            if not (0 <= f < len(sx) and 0 <= of < r and 0 <= ko < len(sy) and 0 <= b < len(sx)):
                return overlap(bx / BW, bo / BW) + OVH_MX
            Ci, Co, Nb = sx[f], so[of], sx[b]
            win = float(np.prod([sy[d] for d in ksp])) if ksp else 1.0
            Kf = max(Ci / dn['fgc'], 1.0)
            volo = g.vol(i)
            flops = 2.0 * volo * Kf * win
            M = volo / max(Co, 1)
            fill = M / (M + M_FILL)
            uN = Co / _pad128(Co)
            kimc = Kf * win
            pk = [ko, ki] + ksp[::-1]
            cand = [(1.0, (Kf / _pad128(Kf)) * uN * fill, [f, b] + sp[::-1], pk, [of, ob] + osp[::-1]),
                    (0.8, (kimc / _pad128(kimc)) * uN * fill * max(0.25, Nb / _pad128(Nb)),
                     [b, f] + sp[::-1], pk, [ob, of] + osp[::-1])]
            if sp and osp:
                w = sx[sp[-1]]
                cand.append((0.6, (kimc / _pad128(kimc)) * uN * fill * max(0.25, w / _pad128(w)),
                             [sp[-1], f, b] + sp[-2::-1], pk, [osp[-1], of, ob] + osp[-2::-1]))
            for base, util, px_, py_, po_ in cand:
                out.append((flops / (rate * base * max(util, 1e-3)),
                            ((sx, ex, bx, px_, True), (sy, ey, by, py_, True), (so, eo, bo, po_, True))))
            out.append((flops / (rate * 0.3 * max((Kf / _pad128(Kf)) * uN * fill, 1e-3)),
                        ((sx, ex, bx, None, False), (sy, ey, by, None, False), (so, eo, bo, None, False))))
            return out
        nb = r - 2
        ok = (r >= 2 and len(sx) == r and len(sy) == r and sx[nb + 1] == sy[nb]
              and so[nb] == sx[nb] and so[nb + 1] == sy[nb + 1])
        if not ok:
            return overlap(2.0 * g.vol(i) * 128 / MXU_BF16, (bx + by + bo) / BW) + OVH_MX
        M, K, Nn = sx[nb], sx[nb + 1], sy[nb + 1]
        bat = float(np.prod(sx[:nb])) if nb else 1.0
        flops = 2.0 * bat * M * K * Nn
        fill = bat * M / (bat * M + M_FILL)
        uK, uN, uM = K / _pad128(K), Nn / _pad128(Nn), M / _pad128(M)
        bd = list(range(nb - 1, -1, -1))
        L_M, L_K, R_K, R_N, O_M, O_N = nb, nb + 1, nb, nb + 1, nb, nb + 1
        cand = [(1.0, uK * uN * fill, [L_K, L_M], [R_N, R_K], [O_N, O_M]),
                (0.88, uK * uN * fill, [L_K, L_M], [R_K, R_N], [O_N, O_M]),
                (0.8, uM * uN * K / (K + M_FILL), [L_M, L_K], [R_N, R_K], [O_N, O_M]),
                (0.85, uK * uM * Nn / (Nn + M_FILL), [L_K, L_M], [R_N, R_K], [O_M, O_N])]
        for base, util, px_, py_, po_ in cand:
            out.append((flops / (rate * base * max(util, 1e-3)),
                        ((sx, ex, bx, px_ + bd, True), (sy, ey, by, py_ + bd, True),
                         (so, eo, bo, po_ + bd, True))))
        out.append((flops / (rate * 0.3 * max(uK * uN * fill, 1e-3)),
                    ((sx, ex, bx, None, False), (sy, ey, by, None, False), (so, eo, bo, None, False))))
        return out

    def _uinv(a, U):
        if isinstance(a, np.ndarray):
            u, inv_ = np.unique(a, return_inverse=True)
            return u, inv_.reshape(-1)
        return np.array([a]), np.zeros(U, np.int64)

    def mx_core(i, x, y, reqx, reqy, pout, batch_pen):
        strat = mx_strategies(i, x, y)
        if not isinstance(strat, list):
            return strat
        arrays = [a for a in (reqx, reqy, pout) if isinstance(a, np.ndarray)]
        U = len(arrays[0]) if arrays else 1
        parts = [_uinv(a, U) for a in (reqx, reqy, pout)]
        best = None
        for t_mxu, ops3 in strat:
            mem = np.zeros(U)
            tx = np.zeros(U)
            for (shp, es, byt, pref, needx), (u, iv) in zip(ops3, parts):
                mv = np.empty(len(u))
                xv = np.zeros(len(u))
                for a, cc in enumerate(u):
                    p = dec(cc)
                    pr = [d for d in pref if 0 <= d < len(shp)] if pref is not None else list(p)
                    mv[a] = byt / (BW * access_eff(shp, p, pr, es))
                    if needx and p and pr and p[0] != pr[0]:
                        xv[a] = byt / XLU_RATE
                mem += mv[iv]
                tx += xv[iv]
            tm = t_mxu * (batch_pen if batch_pen is not None else 1.0)
            t = np.maximum(tm, mem) + OVL * np.minimum(tm, mem) + tx
            best = t if best is None else np.minimum(best, t)
        best = best + OVH_MX
        return best if arrays else float(best[0])

    def _arr(v):
        if isinstance(v, np.ndarray):
            return v
        return v

    def _minor_is(code, d):
        return _evaluate([code], lambda c: (0.0, int(len(dec(c)) > 0 and dec(c)[0] == d)), 2)[1]

    def eval_mx(i):
        is_conv = op[i] == 26
        x = g.ops[i][0]
        y = g.ops[i][1]
        B = upstream_mx(i)
        has_up = int(B >= 0 and upstream_mx(B) >= 0)
        fx = fuse_cand(x)
        fy = fuse_cand(y) and y != x
        so_, si_, sk_ = spec.get(i, (0, 0, 0))

        def req(cx, s, sh, es):
            p = dec(cx)
            q = complete(s, p)
            return relayout_time(sh, p, q, es), enc(q), int(q == p)

        cpx, reqx, nocx = _evaluate([phys[x], si_], lambda a, s: req(a, s, g.shape[x], g.esize[x]), 3)
        if is_conv:
            cpy, reqy, nocy = _evaluate([phys[y], sk_], lambda a, s: req(a, s, g.shape[y], g.esize[y]), 3)
        else:
            cpy, reqy, nocy = 0.0, phys[y], 1
        pout = _evaluate([so_], lambda s: (0.0, enc(complete(s, g.lay[i]))), 2)[1]
        bpen = None
        r = len(g.shape[i])
        if not is_conv and r > 2:
            nb = r - 2
            bpen = _evaluate([reqx, reqy, pout],
                             lambda a, b_, c_: (0.5 if min(dec(a)[0], dec(b_)[0], dec(c_)[0]) < nb else 1.0,), 1)[0]
        core = mx_core(i, x, y, reqx, reqy, pout, bpen)
        if is_conv:
            dn = g.conv_dn(i)
            in_feat, out_feat = dn['if_'], dn['of']
        else:
            in_feat, out_feat = r - 1, r - 1
        cost = cpx + cpy + core
        if fx:
            cost = cost - FUSE * (g.nbytes(x) / BW + OVH_EW) * (np.asarray(fus[x]) * np.asarray(nocx))
        if fy:
            cost = cost - FUSE * (g.nbytes(y) / BW + OVH_EW) * (np.asarray(fus[y]) * np.asarray(nocy))
        in_ok = np.asarray(nocx) * np.asarray(_minor_is(reqx, in_feat))
        myp = has_up * in_ok * np.asarray(_minor_is(pout, out_feat))
        if B >= 0:
            cost = cost - PIPE * (g.nbytes(B) / BW + OVH_MX) * (np.asarray(pipe[B]) * in_ok)
        myp = myp if (isinstance(myp, np.ndarray) and myp.ndim) else int(myp)
        return cost, pout, 0, myp

    def eval_reshape(i):
        x = g.ops[i][0]
        fx = fuse_cand(x)
        sx, so = g.shape[x], g.shape[i]
        vol = g.vol(i)
        so_, si_, _ = spec.get(i, (0, 0, 0))

        def req(cx, s):
            p = dec(cx)
            q = complete(s, p)
            return relayout_time(sx, p, q, g.esize[x]), enc(q), int(q == p), rowmajor_run(sx, q)

        cpx, reqx, nocx, lin = _evaluate([phys[x], si_], req, 4)
        pout, lout = _evaluate([so_], lambda s: (0.0, enc(complete(s, g.lay[i])),
                                                 rowmajor_run(so, complete(s, g.lay[i]))), 3)[1:]
        lin = np.asarray(lin, np.float64)
        lout = np.asarray(lout, np.float64)
        bitcast = (lin >= vol) & (lout >= vol)
        run = np.minimum(lin, lout) * g.esize[i]
        eff = run / (np.ceil(run / BURST) * BURST)
        copy_t = W_RS * (g.nbytes(i) / BW) * (1.0 / eff + 1.0) + OVH_COPY
        cost = cpx + np.where(bitcast, OVH_SMALL, copy_t)
        if fx:
            cost = cost - FUSE * (g.nbytes(x) / BW + OVH_EW) * (
                np.asarray(fus[x]) * np.asarray(nocx) * (~bitcast))
        if not isinstance(cost, np.ndarray) or cost.ndim == 0:
            cost = float(cost)
        return cost, pout, 0, 0

    def make_ew_fn(i):
        nf = [o for o in g.ops[i] if op[o] not in FREE_OPS]
        r = len(g.shape[i])
        heavy = 4.0 if op[i] in HEAVY_EW else 1.0
        is_rw = op[i] in (72, 84)
        wprod = 1.0
        wsz = []
        if is_rw and r:
            wsz = [int(v) for v in g.F[i, 37:37 + r]]
            wprod = float(np.prod([max(v, 1) for v in wsz]))
        cands = [fuse_cand(o) for o in nf]

        def fn(*vals):
            m = len(nf)
            perms = [dec(v) for v in vals[:m]]
            fl = vals[m:]
            p = None
            for o, po in zip(nf, perms):
                if len(g.shape[o]) == r:
                    p = po
                    break
            if p is None:
                p = g.lay[i]
            w = heavy * (wprod if is_rw else 1.0)
            if is_rw and p and len(wsz) == r and wsz[p[0]] > 1:
                w *= 1.6
            comp = w * padvol(g.shape[i], p, g.esize[i]) / VPU_RATE
            mem = g.nbytes(i) / BW
            refund = 0.0
            fusible = 1
            for o, po, cd, fo in zip(nf, perms, cands, fl):
                if len(g.shape[o]) == r and po != p:
                    eff = access_eff(g.shape[o], po, p, g.esize[o])
                    mem += g.nbytes(o) / (BW * eff)
                    fusible = 0
                elif cd and fo and po == p:
                    refund += FUSE * (g.nbytes(o) / BW + OVH_EW)
                else:
                    mem += g.nbytes(o) / BW
            return overlap(comp, mem) + OVH_EW - refund, enc(p), fusible, 0

        keys = [phys[o] for o in nf] + [fus[o] if cd else 0 for o, cd in zip(nf, cands)]
        return keys, fn

    def make_reduce_fn(i):
        x = g.ops[i][0] if g.ops[i] else -1
        if x < 0:
            return [], lambda: (OVH_EW, enc(g.lay[i]), 0, 0)
        rin, rout = len(g.shape[x]), len(g.shape[i])
        red = set(g.dimsattr(i, max(rin - rout, 0)))
        fx = fuse_cand(x)

        def fn(cx, fx_):
            q = dec(cx)
            keep = [d for d in range(rin) if d not in red]
            ren = {d: k for k, d in enumerate(keep)}
            pout = tuple(ren[d] for d in q if d in ren)
            if len(pout) != rout:
                pout = g.lay[i]
            w = 1.0
            if q and q[0] in red:
                w += LANE_RED
            if len(q) > 1 and q[1] in red:
                w += SUB_RED
            comp = w * padvol(g.shape[x], q, g.esize[x]) / VPU_RATE
            mem = g.nbytes(i) / BW
            refund = 0.0
            if fx and fx_:
                refund = FUSE * (g.nbytes(x) / BW + OVH_EW)
            else:
                mem += g.nbytes(x) / BW
            return overlap(comp, mem) + OVH_EW - refund, enc(pout), 0, 0

        return [phys[x], fus[x] if fx else 0], fn

    def make_transpose_fn(i):
        x = g.ops[i][0]
        r = len(g.shape[i])
        P = g.dimsattr(i, r)
        if sorted(P) != list(range(r)) or len(g.shape[x]) != r:
            return [], lambda: (OVH_EW + g.nbytes(i) / BW * 2, enc(g.lay[i]), 0, 0)
        inv_ = {P[k]: k for k in range(r)}

        def fn(cx):
            q = dec(cx)
            return OVH_SMALL, enc(tuple(inv_[d] for d in q)), 0, 0

        return [phys[x]], fn

    def eval_rigid(i, work):
        xs = [o for o in g.ops[i] if len(g.shape[o]) >= 2 and op[o] not in FREE_OPS]
        t = work
        for o in xs:
            c_ = _evaluate([phys[o]], lambda v, o=o: (relayout_time(g.shape[o], dec(v), g.lay[o], g.esize[o]),), 1)[0]
            t = t + c_
        return t, enc(g.lay[i]), 0, 0

    for i in range(n):
        o_ = int(op[i])
        if o_ in (26, 34) and len(g.ops[i]) >= 2:
            cost, ph, fu, pp = eval_mx(i)
            phys[i], fus[i], pipe[i] = ph, fu, pp
            total = total + cost
            continue
        if o_ == 75 and g.ops[i]:
            cost, ph, fu, pp = eval_reshape(i)
            phys[i], fus[i], pipe[i] = ph, fu, pp
            total = total + cost
            continue
        if o_ in FREE_OPS:
            keys, fn = [], (lambda i=i: (0.0, enc(g.lay[i]), 0, 0))
        elif o_ in FIXED_OPS:
            keys, fn = [], (lambda i=i: (0.0, enc(g.lay[i]), 0, 0))
        elif o_ == 70:
            keys, fn = make_reduce_fn(i)
        elif o_ == 98 and g.ops[i]:
            keys, fn = make_transpose_fn(i)
        elif (o_ in EW_OPS or o_ in INHERIT_OPS or o_ in (72, 84)) and g.ops[i]:
            keys, fn = make_ew_fn(i)
        else:
            work = OVH_SMALL if o_ == 100 else OVH_EW + g.nbytes(i) / BW
            cost, ph, fu, pp = eval_rigid(i, work)
            phys[i], fus[i], pipe[i] = ph, fu, pp
            total = total + cost
            continue
        cost, ph, fu, pp = _evaluate(keys, fn, 4)
        phys[i], fus[i], pipe[i] = ph, fu, pp
        total = total + cost
    base = 20000.0 + 40.0 * n
    out = np.broadcast_to(np.asarray(total, np.float64) + base, (U,)).astype(np.float64)
    return out[inv]


# ----------------------------------------------------------------------------
# Graph samplers (the law's own; HLO-like graphs of CNN and transformer steps)
# ----------------------------------------------------------------------------
def _reducer(b, et='f32', kind=2):
    p0 = b.add(63, (), et, (), pnum=0)
    p1 = b.add(63, (), et, (), pnum=1)
    return b.add(kind, (), et, (p0, p1), root=1)


def _while_pair(b, rng):
    """A small condition computation and a small body computation (scalars)."""
    splits = []
    t = b.add(63, (), 'tuple', (), tup=3)
    g0 = b.add(45, (), 's32', (t,))
    c0 = b.const((), 's32')
    b.add(20, (), 'pred', (g0, c0), root=1)
    splits.append(len(b))
    t = b.add(63, (), 'tuple', (), tup=3)
    g0 = b.add(45, (), 's32', (t,))
    g1 = b.add(45, (), 'f32', (t,))
    c1 = b.const((), 's32')
    a = b.add(2, (), 's32', (g0, c1))
    x = g1
    for _ in range(int(rng.integers(2, 12))):
        cc = b.const((), 'f32')
        x = b.add(int(rng.choice([2, 59, 95, 57])), (), 'f32', (x, cc))
    b.add(100, (), 'tuple', (a, x, g1), tup=3, root=1)
    splits.append(len(b))
    return splits


def _prefix(b, rng, nred):
    for _ in range(nred):
        _reducer(b, str(rng.choice(['f32', 'bf16', 's32'])), int(rng.choice([2, 2, 57])))
    splits = [0, len(b)]
    for _ in range(int(rng.integers(0, 3))):
        splits += _while_pair(b, rng)
    return splits


def _scalar_filler(b, rng, n_target, outs):
    x = b.param((), 'f32')
    while len(b) < n_target:
        k = rng.random()
        if k < 0.3:
            c = b.const((), 'f32')
            x = b.add(int(rng.choice([2, 59, 95, 32, 57])), (), 'f32', (x, c))
        elif k < 0.45:
            x = b.add(int(rng.choice([81, 37, 50, 60, 94])), (), 'f32', (x,))
        elif k < 0.6:
            y = b.param((), 'f32')
            cmp = b.add(20, (), 'pred', (x, y))
            x = b.add(83, (), 'f32', (cmp, x, y))
        elif k < 0.8:
            m = int(rng.choice([2, 4, 8, 32, 128]))
            v = b.param((m,), 'f32')
            v2 = b.add(59, (m,), 'f32', (v, b.bcast(x, (m,), [])))
            i0 = b.const((), 's32')
            x = b.add(70, (), 'f32', (v2, i0), dims=[0])
        else:
            x = b.add(25, (), 'f32', (b.add(25, (), 'bf16', (x,)),))
    outs.append(x)


def _adam(b, w, et, rng):
    shp, lay = b.sh(w), b.N[w].lay
    c = b.cb(shp, et)
    gw = b.param(shp, et, lay=lay)
    if rng.random() < 0.5:
        return b.ew(95, w, b.ew(59, gw, c))
    m = b.param(shp, et, lay=lay)
    v = b.param(shp, et, lay=lay)
    m2 = b.ew(2, b.ew(59, m, c), b.ew(59, gw, c))
    v2 = b.ew(2, b.ew(59, v, c), b.ew(59, b.ew(59, gw, gw), c))
    u = b.ew(32, m2, b.ew(2, b.ew(94, v2), c))
    return b.ew(95, w, b.ew(59, u, c))


def _act_layout(r, style):
    if r >= 4 and style == 'fb':
        return (r - 1, 0) + tuple(range(r - 2, 0, -1))
    return desc(r)


def _conv(b, x, w, out_shape, stride, pad_, kdims_swapped=False, lay=None):
    r = len(out_shape)
    ns = r - 2
    ksh = b.sh(w)
    win = dict(size=list(ksh[:ns]), stride=[stride] * ns, plo=[pad_] * ns, phi=[pad_] * ns,
               wdil=[1] * ns, bdil=[1] * ns)
    if kdims_swapped:
        ki, ko = r - 1, r - 2
    else:
        ki, ko = r - 2, r - 1
    cdn = dict(ib=0, if_=r - 1, isp=list(range(1, r - 1)), ki=ki, ko=ko,
               ksp=list(range(0, ns)), ob=0, of=r - 1)
    cdn['if'] = cdn.pop('if_')
    return b.add(26, out_shape, b.N[x].et, (x, w), lay=lay, win=win, cdn=cdn, fgc=1)


def gen_xla(rng, conf_lo, conf_hi, node_lo, node_hi):
    b = Builder()
    target_conf = int(rng.integers(conf_lo, conf_hi + 1))
    target_nodes = int(np.clip(target_conf * rng.uniform(7.0, 13.0), node_lo, node_hi))
    splits = _prefix(b, rng, int(rng.integers(1, 4 if node_hi < 300 else 9)))
    et = 'bf16' if rng.random() < 0.5 else 'f32'
    is3d = rng.random() < 0.2
    training = rng.random() < 0.55
    if is3d:
        Nb = int(rng.choice([1, 2, 4]))
        S = int(rng.choice([16, 24, 32, 48, 64]))
        sp = [S, S, S]
    else:
        Nb = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
        S = int(rng.choice([28, 32, 56, 64, 96, 112, 128, 224]))
        while Nb * S * S > 1.5e6 and S > 28:
            S //= 2
        sp = [S, S]
    r = len(sp) + 2
    style = 'fb' if (Nb >= 8 and rng.random() < 0.6) else 'desc'
    C = int(rng.choice([3, 4, 8, 16]))
    cur = b.param(tuple([Nb] + sp + [C]), et, lay=_act_layout(r, style))
    width = int(rng.choice([16, 32, 48, 64]))
    outs = []
    weights = []
    nconf = [0]
    skip = None

    def conf_count():
        return sum(1 for nd in b.N if nd.op in (26, 34, 75))

    def glue(y):
        shp = b.sh(y)
        Co = shp[-1]
        k = rng.random()
        if k < 0.7:
            bp = b.param((Co,), et)
            y = b.ew(2, y, b.bcast(bp, shp, [len(shp) - 1]))
        if rng.random() < 0.6:
            s1 = b.param((Co,), et)
            y = b.ew(59, y, b.bcast(s1, shp, [len(shp) - 1]))
            s2 = b.param((Co,), et)
            y = b.ew(2, y, b.bcast(s2, shp, [len(shp) - 1]))
        if rng.random() < 0.85:
            z = b.cb(shp, et)
            if rng.random() < 0.5:
                y = b.ew(57, y, z)
            else:
                cm = b.add(20, shp, 'pred', (y, z))
                y = b.add(83, shp, et, (cm, y, z))
        if rng.random() < 0.15:
            y = b.add(25, shp, 'f32' if et == 'bf16' else 'bf16', (y,))
            y = b.add(25, shp, et, (y,))
        return y

    stage_len = int(rng.integers(2, 5))
    unit = 0
    while True:
        nc = conf_count()
        if nc >= target_conf or len(b) > node_hi - 45:
            break
        shp = b.sh(cur)
        Ci = shp[-1]
        spc = list(shp[1:-1])
        kind = rng.random()
        if kind < 0.1 and min(spc) >= 8 and unit > 0:
            ns = len(spc)
            nsp = [s // 2 for s in spc]
            init = b.sconst(et)
            win = dict(size=[1] + [2] * ns + [1], stride=[1] + [2] * ns + [1], plo=[0] * r,
                       phi=[0] * r, wdil=[1] * r, bdil=[1] * r)
            cur = b.add(72, tuple([shp[0]] + nsp + [Ci]), et, (cur, init), win=win)
            continue
        if kind < 0.18 and nc + 2 <= conf_hi and r == 4:
            flat = b.add(75, (shp[0], spc[0] * spc[1], Ci), et, (cur,),
                         lay=(2, 0, 1) if style == 'fb' and rng.random() < 0.5 else None)
            y = b.ew(int(rng.choice([59, 2, 57])), flat, b.cb(b.sh(flat), et))
            if rng.random() < 0.5:
                i0 = b.sconst(et)
                red = b.add(70, (shp[0], Ci), et, (y, i0), dims=[1])
                outs.append(red)
            cur = b.add(75, shp, et, (y,), lay=b.N[cur].lay)
            continue
        if kind < 0.22 and nc + 2 <= conf_hi and r == 5:
            m = b.add(75, (shp[0] * spc[0], spc[1], spc[2], Ci), et, (cur,), lay=_act_layout(4, style))
            y = b.ew(57, m, b.cb(b.sh(m), et))
            cur = b.add(75, shp, et, (y,), lay=b.N[cur].lay)
            continue
        # conv unit
        unit += 1
        down = unit % (stage_len * 2) == 0 and min(spc) >= 8
        if down:
            width = min(width * 2, 1024)
        k = int(rng.choice([1, 3, 3, 3, 5, 7] if unit == 1 else [1, 1, 3, 3, 3]))
        stride = 2 if down else 1
        osp = [int(math.ceil(s / stride)) for s in spc]
        Co = width if rng.random() < 0.85 else int(width * rng.choice([2, 4]))
        klay = None if rng.random() < 0.85 else ((r - 2, r - 1) + tuple(range(r - 3, -1, -1)))
        w = b.param(tuple([k] * len(spc) + [Ci, Co]), et, lay=klay)
        weights.append(w)
        y = _conv(b, cur, w, tuple([shp[0]] + osp + [Co]), stride, k // 2, lay=b.N[cur].lay)
        y = glue(y)
        if skip is not None and b.sh(skip) == b.sh(y) and rng.random() < 0.6:
            y = b.ew(2, y, skip)
            skip = None
        elif skip is None or rng.random() < 0.3:
            skip = y
        if training and rng.random() < 0.45 and conf_count() + 2 <= conf_hi:
            # data-gradient conv (kernel in/out swapped) and weight-gradient conv
            dy = b.param(b.sh(y), et, lay=b.N[y].lay)
            if stride == 1:
                dx = _conv(b, dy, w, shp, 1, k // 2, kdims_swapped=True, lay=b.N[cur].lay)
                outs.append(b.ew(59, dx, b.cb(shp, et)))
            ns = len(spc)
            win = dict(size=list(osp), stride=[1] * ns, plo=[k // 2] * ns, phi=[k // 2] * ns,
                       wdil=[stride] * ns, bdil=[1] * ns)
            cdn = {'ib': r - 1, 'if': 0, 'isp': list(range(1, r - 1)), 'ki': 0, 'ko': r - 1,
                   'ksp': list(range(1, r - 1)), 'ob': r - 2, 'of': r - 1}
            dw = b.add(26, b.sh(w), et, (cur, dy), win=win, cdn=cdn, fgc=1)
            outs.append(dw)
        cur = y
    # head: global pool -> matmul -> softmax-ish loss
    shp = b.sh(cur)
    Ci = shp[-1]
    i0 = b.sconst(et)
    pooled = b.add(70, (shp[0], Ci), et, (cur, i0), dims=list(range(1, r - 1)))
    K = int(rng.choice([10, 100, 1000]))
    wf = b.param((Ci, K), et, lay=(0, 1) if rng.random() < 0.3 else None)
    weights.append(wf)
    if rng.random() < 0.5:
        logits = b.add(34, (shp[0], K), et, (pooled, wf))
    else:
        cdn = {'ib': 0, 'if': 1, 'isp': [], 'ki': 0, 'ko': 1, 'ksp': [], 'ob': 0, 'of': 1}
        logits = b.add(26, (shp[0], K), et, (pooled, wf),
                       win=dict(size=[], stride=[], plo=[], phi=[], wdil=[], bdil=[]), cdn=cdn, fgc=1)
    bb = b.param((K,), et)
    logits = b.ew(2, logits, b.bcast(bb, (shp[0], K), [1]))
    mx = b.add(70, (shp[0],), et, (logits, b.sconst(et)), dims=[1])
    sh_ = b.ew(95, logits, b.bcast(mx, (shp[0], K), [0]))
    ex = b.ew(37, sh_)
    sm = b.add(70, (shp[0],), et, (ex, b.sconst(et)), dims=[1])
    lg = b.ew(50, sm)
    loss = b.add(70, (), et, (lg, b.sconst(et)), dims=[0])
    outs.append(loss)
    if training:
        for w in weights:
            if len(b) + 20 >= min(target_nodes, node_hi):
                break
            outs.append(_adam(b, w, et, rng))
    _scalar_filler(b, rng, min(target_nodes, node_hi) - 1, outs)
    b.add(100, (), 'tuple', tuple(outs), tup=len(outs), root=1)
    splits.append(len(b))
    return b, splits


def gen_nlp(rng, conf_lo, conf_hi, node_lo, node_hi):
    b = Builder()
    target_conf = int(rng.integers(conf_lo, conf_hi + 1))
    target_nodes = int(np.clip(target_conf * rng.uniform(6.0, 12.0), node_lo, node_hi))
    splits = _prefix(b, rng, int(rng.integers(1, 4 if node_hi < 300 else 9)))
    et = 'bf16' if rng.random() < 0.7 else 'f32'
    training = rng.random() < 0.5
    Bt = int(rng.choice([1, 2, 4, 8, 16, 32]))
    S = int(rng.choice([64, 128, 256, 384, 512]))
    H = int(rng.choice([256, 384, 512, 768, 1024]))
    dh = int(rng.choice([32, 64, 128]))
    while H % dh:
        dh //= 2
    nh = H // dh
    FF = H * int(rng.choice([2, 4]))
    V = int(rng.choice([8192, 16384, 30522, 32000]))
    outs = []
    weights = []
    cnt = [0]

    def add_conf(i):
        cnt[0] += 1
        return i

    ids_ = b.param((Bt, S), 's32')
    table = b.param((V, H), et)
    weights.append(table)
    x = b.add(42, (Bt, S, H), et, (table, ids_))
    pos = b.param((S, H), et)
    x = b.ew(2, x, b.bcast(pos, (Bt, S, H), [1, 2]))

    def layernorm(x):
        shp = b.sh(x)
        r = len(shp)
        red = b.add(70, shp[:-1], et, (x, b.sconst(et)), dims=[r - 1])
        mean = b.ew(59, red, b.cb(shp[:-1], et))
        d = b.ew(95, x, b.bcast(mean, shp, list(range(r - 1))))
        sq = b.ew(59, d, d)
        var = b.add(70, shp[:-1], et, (sq, b.sconst(et)), dims=[r - 1])
        v2 = b.ew(2, b.ew(59, var, b.cb(shp[:-1], et)),
                  b.cb(shp[:-1], et))
        rs = b.ew(81, v2)
        y = b.ew(59, d, b.bcast(rs, shp, list(range(r - 1))))
        gm = b.param((shp[-1],), et)
        bt = b.param((shp[-1],), et)
        y = b.ew(59, y, b.bcast(gm, shp, [r - 1]))
        return b.ew(2, y, b.bcast(bt, shp, [r - 1]))

    def dense(x2, nin, nout, bias=True):
        w = b.param((nin, nout), et, lay=(0, 1) if rng.random() < 0.15 else None)
        weights.append(w)
        y = add_conf(b.add(34, (b.sh(x2)[0], nout), et, (x2, w)))
        if bias:
            bb = b.param((nout,), et)
            y = b.ew(2, y, b.bcast(bb, b.sh(y), [1]))
        return y

    def attention(x):
        h = layernorm(x)
        h2 = add_conf(b.add(75, (Bt * S, H), et, (h,)))
        heads = []
        for perm in ([0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3]):
            p = dense(h2, H, H)
            p4 = add_conf(b.add(75, (Bt, S, nh, dh), et, (p,)))
            tsh = tuple((Bt, S, nh, dh)[k] for k in perm)
            heads.append(b.add(98, tsh, et, (p4,), dims=perm))
        q, kt, v = heads
        s = add_conf(b.add(34, (Bt, nh, S, S), et, (q, kt)))
        s = b.ew(59, s, b.cb((Bt, nh, S, S), et))
        mask = b.param((Bt, S), et)
        s = b.ew(2, s, b.bcast(mask, (Bt, nh, S, S), [0, 3]))
        mx = b.add(70, (Bt, nh, S), et, (s, b.sconst(et)), dims=[3])
        e = b.ew(37, b.ew(95, s, b.bcast(mx, (Bt, nh, S, S), [0, 1, 2])))
        sm = b.add(70, (Bt, nh, S), et, (e, b.sconst(et)), dims=[3])
        p = b.ew(32, e, b.bcast(sm, (Bt, nh, S, S), [0, 1, 2]))
        ctx = add_conf(b.add(34, (Bt, nh, S, dh), et, (p, v)))
        ct = b.add(98, (Bt, S, nh, dh), et, (ctx,), dims=[0, 2, 1, 3])
        c2 = add_conf(b.add(75, (Bt * S, H), et, (ct,)))
        o = dense(c2, H, H)
        o3 = add_conf(b.add(75, (Bt, S, H), et, (o,)))
        return b.ew(2, x, o3)

    def mlp(x):
        h = layernorm(x)
        h2 = add_conf(b.add(75, (Bt * S, H), et, (h,)))
        u = dense(h2, H, FF)
        c1 = b.cb(b.sh(u), et)
        t = b.ew(59, b.ew(59, u, u), u)
        t = b.ew(2, u, b.ew(59, t, c1))
        t = b.ew(96, b.ew(59, t, c1))
        t = b.ew(59, u, b.ew(2, t, c1))
        d = dense(t, FF, H)
        d3 = add_conf(b.add(75, (Bt, S, H), et, (d,)))
        return b.ew(2, x, d3)

    while True:
        if cnt[0] >= target_conf or len(b) >= target_nodes * 0.85:
            break
        room = conf_hi - 3 - cnt[0]
        if room >= 12 and len(b) + 110 < node_hi and rng.random() < 0.6:
            x = attention(x)
        elif room >= 4 and len(b) + 70 < node_hi:
            x = mlp(x)
        else:
            break
    x = layernorm(x)
    x2 = b.add(75, (Bt * S, H), et, (x,))
    x3 = b.add(75, (Bt, S, H), et, (x2,))
    pooled = b.add(70, (Bt, H), et, (x3, b.sconst(et)), dims=[1])
    nlab = int(rng.choice([2, 3, 16, 128]))
    wc = b.param((H, nlab), et)
    weights.append(wc)
    lg = b.add(34, (Bt, nlab), et, (pooled, wc))
    mx = b.add(70, (Bt,), et, (lg, b.sconst(et)), dims=[1])
    outs.append(b.ew(50, mx))
    if training:
        for w in weights:
            if len(b) + 20 >= min(target_nodes, node_hi):
                break
            outs.append(_adam(b, w, et, rng))
    _scalar_filler(b, rng, min(target_nodes, node_hi) - 1, outs)
    b.add(100, (), 'tuple', tuple(outs), tup=len(outs), root=1)
    splits.append(len(b))
    return b, splits


# ----------------------------------------------------------------------------
# Tile kernels (10-60 node fusions) and the tile law
# ----------------------------------------------------------------------------
VMEM = 16.0 * 2 ** 20
STEP_OVH = 350.0
LAUNCH = 2000.0
DESC_NS = 40.0
DMA_LAT = 500.0
EPI_ROWS = 1.0


def gen_tile(rng, node_lo, node_hi):
    b = Builder()
    n_target = int(rng.integers(node_lo + 2, node_hi + 1))
    et = 'bf16' if rng.random() < 0.5 else 'f32'
    u = rng.random()
    kind = 'conv' if u < 0.4 else 'mm' if u < 0.65 else 'ew' if u < 0.85 else 'red'
    outs = []
    for _ in range(int(rng.integers(0, 3))):
        b.param((), et)
    if kind == 'conv':
        Nb = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
        S = int(rng.choice([7, 8, 14, 16, 28, 32, 56]))
        Ci = int(rng.choice([3, 16, 32, 64, 96, 128, 192, 256, 384, 512]))
        Co = int(rng.choice([16, 32, 64, 128, 192, 256, 384, 512, 1024]))
        k = int(rng.choice([1, 3, 3, 5, 7]))
        k = min(k, S)
        stride = 2 if (rng.random() < 0.25 and S >= 14) else 1
        style = 'fb' if rng.random() < 0.5 else 'desc'
        x = b.param((Nb, S, S, Ci), et, lay=_act_layout(4, style))
        if rng.random() < 0.5:
            x = b.add(11, b.sh(x), et, (x,), lay=b.N[x].lay)
        w = b.param((k, k, Ci, Co), et)
        if rng.random() < 0.5:
            w = b.add(11, b.sh(w), et, (w,), lay=b.N[w].lay)
        So = int(math.ceil(S / stride))
        y = _conv(b, x, w, (Nb, So, So, Co), stride, k // 2, lay=_act_layout(4, style))
    elif kind == 'mm':
        M = int(rng.choice([8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]))
        K = int(rng.choice([128, 256, 512, 768, 1024, 2048, 4096, 8192]))
        Nn = int(rng.choice([128, 256, 384, 512, 1000, 1024, 2048, 4096]))
        x = b.param((M, K), et, lay=(0, 1) if rng.random() < 0.2 else None)
        w = b.param((K, Nn), et, lay=(0, 1) if rng.random() < 0.35 else None)
        if rng.random() < 0.3:
            y = b.add(34, (M, Nn), et, (x, w))
        else:
            cdn = {'ib': 0, 'if': 1, 'isp': [], 'ki': 0, 'ko': 1, 'ksp': [], 'ob': 0, 'of': 1}
            y = b.add(26, (M, Nn), et, (x, w), win=dict(size=[], stride=[], plo=[], phi=[], wdil=[], bdil=[]),
                      cdn=cdn, fgc=1)
    else:
        if rng.random() < 0.5:
            shp = (int(rng.choice([1, 2, 8, 32, 128])), int(rng.choice([7, 14, 28, 56, 112, 300])),
                   int(rng.choice([7, 14, 28, 56, 112, 300])), int(rng.choice([3, 32, 64, 128, 256, 512])))
            lay = _act_layout(4, 'fb' if rng.random() < 0.5 else 'desc')
        else:
            shp = (int(rng.choice([1, 4, 8, 32])), int(rng.choice([128, 512, 1024])),
                   int(rng.choice([256, 768, 1024, 3072])))
            lay = desc(3) if rng.random() < 0.8 else (1, 2, 0)
        y = b.param(shp, et, lay=lay)
        for _ in range(int(rng.integers(0, 3))):
            y = b.ew(int(rng.choice([2, 59, 95])), y, b.param(shp, et, lay=lay))
    # epilogue chain
    shp = b.sh(y)
    r = len(shp)
    stats = kind == 'conv' and rng.random() < 0.4
    tail = 2 + (1 if kind == 'red' else 0) + (1 if stats else 0)
    while len(b) < n_target - tail - 2:
        k = rng.random()
        if k < 0.3:
            p = b.param((shp[-1],), et)
            y = b.ew(int(rng.choice([2, 59])), y, b.bcast(p, shp, [r - 1]))
        elif k < 0.5:
            y = b.ew(57, y, b.cb(shp, et))
        elif k < 0.6:
            z = b.cb(shp, et)
            cm = b.add(20, shp, 'pred', (y, z))
            y = b.add(83, shp, et, (cm, y, z))
        elif k < 0.7:
            y = b.ew(int(rng.choice([37, 96, 81, 107])), y)
        elif k < 0.8:
            y = b.add(25, shp, 'f32' if et == 'bf16' else 'bf16', (y,))
            et = b.N[y].et
        elif k < 0.9:
            y = b.ew(2, y, b.param(shp, et, lay=b.N[y].lay))
        else:
            y = b.ew(int(rng.choice([59, 95])), y, b.cb(shp, et))
    if kind == 'red':
        rd = [0, 1, 2] if r == 4 else [r - 1] if rng.random() < 0.6 else [0, 1]
        oshape = tuple(s for d, s in enumerate(shp) if d not in rd)
        y = b.add(70, oshape, b.N[y].et, (y, b.sconst(b.N[y].et)), dims=rd)
    outs.append(y)
    if stats:
        outs.append(b.add(70, (shp[-1],), b.N[y].et, (y, b.sconst(b.N[y].et)), dims=[0, 1, 2]))
    t = b.add(100, (), 'tuple', tuple(outs), tup=len(outs), root=1)
    ps = [i for i, nd in enumerate(b.N) if nd.op == 63][:3]
    b.add(41, (), 'tuple', tuple([t] + ps), tup=len(outs), root=1)
    return b, kind


def _phys_units(shape, lay, esize):
    """Physical dims (major -> minor) of a tensor and their bound units."""
    order = list(lay)[::-1]
    D = [shape[d] for d in order]
    unit = [1] * len(D)
    if len(D) >= 1:
        unit[-1] = 128
    if len(D) >= 2:
        unit[-2] = sublane(esize)
    return order, D, unit


def tile_space(A):
    """What a tile file says about its kernel: (kind, output node, kernel node)."""
    g = GView(A)
    mx = [i for i in range(g.n) if g.op[i] in (26, 34) and len(g.ops[i]) >= 2]
    if mx:
        i = mx[0]
        return g, 'mx', i, g.ops[i][1]
    vols = [g.vol(i) if g.op[i] not in (100, 41) else 0 for i in range(g.n)]
    i = int(np.argmax(vols))
    return g, 'ew', i, -1


def tile_runtime(A, heur=False):
    """Noise-free runtime (ns) for every config of a tile file.

    heur=True gives the compiler's own cruder analytical model (used only to
    pick the default configuration, never for labels)."""
    g, kind, io, ik = tile_space(A)
    cf = A['config_feat'].astype(np.float64)
    c = cf.shape[0]
    e_o = g.esize[io]
    shape_o = g.shape[io]
    order_o, D_o, u_o = _phys_units(shape_o, g.lay[io], e_o)
    r = len(D_o)
    Bo = cf[:, 8:8 + r] if r else np.zeros((c, 0))
    Bo = np.maximum(Bo, 1.0)
    D_o_arr = np.array(D_o, np.float64)
    T_o = Bo * np.array(u_o, np.float64)  # tiles larger than the dim are padded work
    nT_o = np.ceil(D_o_arr / T_o)
    volo = g.vol(io)
    n_ew = sum(1 for i in range(g.n) if g.op[i] in EW_OPS and g.vol(i) >= 0.25 * volo)
    heavy = sum(1 for i in range(g.n) if g.op[i] in HEAVY_EW and g.vol(i) >= 0.25 * volo)
    vpu_w = 1.0 + n_ew + 3.0 * heavy
    # contiguous runs of a tile along the physical minor dims
    if r >= 1:
        tm = np.minimum(T_o[:, -1], D_o_arr[-1])
        full = T_o[:, -1] >= D_o_arr[-1]
        run = tm.copy()
        if r >= 2:
            run = np.where(full, tm * np.minimum(T_o[:, -2], D_o_arr[-2]), tm)
    else:
        run = np.ones(c)
    rb = run * e_o
    eff_o = rb / (np.ceil(rb / BURST) * BURST)
    if heur:
        eff_o = np.ones(c)
    step_ovh = STEP_OVH * (0.6 if heur else 1.0)
    mfill = M_FILL * (0.5 if heur else 1.0)
    spill_k = 3.0 if heur else 1.5
    desc_ns = 0.0 if heur else DESC_NS

    if kind == 'mx':
        ix = g.ops[io][0]
        e_i, e_k = g.esize[ix], g.esize[ik]
        shape_k = g.shape[ik]
        order_k, D_k, u_k = _phys_units(shape_k, g.lay[ik], e_k)
        rk = len(D_k)
        Bk = np.maximum(cf[:, 0:rk], 1.0)
        T_k = Bk * np.array(u_k)
        pos_k = {d: p for p, d in enumerate(order_k)}
        pos_o = {d: p for p, d in enumerate(order_o)}
        ro = len(shape_o)
        if g.op[io] == 26:
            dn = g.conv_dn(io)
            of, ob = dn['of'], dn['ob']
            ki, ko = dn['ki'], dn['ko']
            ksp = [d for d in dn['ksp'] if 0 <= d < rk]
            osp = [d for d in range(ro) if d not in (of, ob)]
            stride = dn['stride'] + [1] * 4
            sx = g.shape[ix]
            isp = [d for d in dn['isp'] if 0 <= d < len(sx)]
        else:
            nb = ro - 2
            of, ob = ro - 1, -1
            ki, ko = nb, nb + 1
            ksp, osp, isp, sx = [], [], [], g.shape[ix]
            stride = [1] * 6
        if not (0 <= of < ro and 0 <= ki < rk and 0 <= ko < rk):
            return np.full(c, LAUNCH + 2 * g.nbytes(io) / BW)
        Ci = shape_k[ki]
        Co = shape_o[of]
        Tn = T_o[:, pos_o[of]]
        nN = nT_o[:, pos_o[of]]
        rows = [d for d in range(ro) if d != of]
        Mt = np.ones(c)
        nM = np.ones(c)
        for d in rows:
            Mt *= T_o[:, pos_o[d]]
            nM *= nT_o[:, pos_o[d]]
        Tci = T_k[:, pos_k[ki]]
        nK = np.ceil(Ci / Tci)
        Kt = Tci.copy()
        for d in ksp:
            Tw = np.minimum(T_k[:, pos_k[d]], shape_k[d])
            Kt *= Tw
            nK *= np.ceil(shape_k[d] / Tw)
        Tco = T_k[:, pos_k[ko]]
        if g.op[io] == 26:
            in_t = (T_o[:, pos_o[ob]] if 0 <= ob < ro else 1.0) * Tci
            for j, d in enumerate(osp):
                if j < len(ksp) and j < len(isp):
                    ext = (T_o[:, pos_o[d]] - 1) * stride[j] + np.minimum(T_k[:, pos_k[ksp[j]]], shape_k[ksp[j]])
                    in_t = in_t * np.minimum(ext, sx[isp[j]] + 2 * (shape_k[ksp[j]] // 2))
                else:
                    in_t = in_t * T_o[:, pos_o[d]]
        else:
            in_t = Mt * Tci
        w_t = Kt * np.maximum(Tn, Tco)
        ndesc = np.ceil(Tn / Tco)
        out_t = Mt * Tn
        steps = nM * nN * nK
        one_k = nK <= 1
        A_b = nN * w_t * e_k + nN * nM * in_t * e_i
        B_b = nM * in_t * e_i + nM * nN * w_t * e_k
        loads = np.where(one_k, np.minimum(A_b, B_b), steps * (in_t * e_i + w_t * e_k))
        n_extra = sum(1 for i in range(g.n) if g.op[i] == 63 and g.vol(i) >= 0.25 * volo
                      and i not in (ix, ik))
        outb = nM * nN * out_t * e_o * (1.0 + n_extra)
        dma_total = loads / (BW * np.maximum(eff_o, 0.05) ** 0.5) + outb / (BW * eff_o)
        dma_step = dma_total / steps + desc_ns * (1.0 + ndesc)
        rate = MXU_BF16 * (MXU_F32_FRAC if e_i >= 4 else 1.0)
        mxu_step = 2.0 * Mt * Tn * Kt / (rate * Mt / (Mt + mfill))
        epi_tile = vpu_w * out_t / VPU_RATE
        comp_step = mxu_step + epi_tile / nK
        step = np.maximum(comp_step, dma_step) + OVL * np.minimum(comp_step, dma_step) + step_ovh
        prologue = (in_t * e_i + w_t * e_k) / BW + DMA_LAT
        epilogue = out_t * e_o / BW + epi_tile
        foot = 2.0 * (in_t * e_i + w_t * e_k) + out_t * 4.0 + 2.0 * out_t * e_o
    else:
        # elementwise / reduce kernel over the largest tensor
        red_pos = set()
        for i in range(g.n):
            if g.op[i] == 70 and g.ops[i] and g.shape[g.ops[i][0]] == shape_o:
                rin, rout = len(shape_o), len(g.shape[i])
                for d in g.dimsattr(i, max(rin - rout, 0)):
                    if d in order_o:
                        red_pos.add(order_o.index(d))
        n_in = max(1, sum(1 for i in range(g.n) if g.op[i] == 63 and g.vol(i) >= 0.25 * volo))
        tile = np.prod(T_o, axis=1) if r else np.ones(c)
        steps = np.prod(nT_o, axis=1) if r else np.ones(c)
        out_t = tile.copy()
        n_out_tiles = steps.copy()
        for p in red_pos:
            out_t = out_t / T_o[:, p]
            n_out_tiles = n_out_tiles / nT_o[:, p]
        lane_red = (r - 1) in red_pos
        outb = n_out_tiles * out_t * e_o
        dma_step = (n_in * tile * e_o + outb / steps) / (BW * eff_o) + desc_ns * (n_in + 1)
        comp_step = vpu_w * tile / VPU_RATE * (1.0 + (LANE_RED if lane_red else 0.0))
        step = np.maximum(comp_step, dma_step) + OVL * np.minimum(comp_step, dma_step) + step_ovh
        prologue = n_in * tile * e_o / BW + DMA_LAT
        epilogue = out_t * e_o / BW + vpu_w * out_t / VPU_RATE
        foot = 2.0 * (n_in + 1) * tile * e_o
    spill = 1.0 + spill_k * np.maximum(0.0, foot / VMEM - 1.0)
    return LAUNCH + prologue + steps * step * spill + epilogue


def _bound_candidates(rng, mb):
    if mb <= 1:
        return [1]
    pool = {1, mb}
    p = 1
    while p < mb:
        pool.add(p)
        p *= 2
    for d in range(1, mb + 1):
        if mb % d == 0:
            pool.add(d)
    pool = sorted(pool | {int(x) for x in rng.integers(1, mb + 1, size=3)})
    k = int(min(len(pool), rng.integers(2, 7)))
    return sorted(int(x) for x in rng.choice(pool, size=k, replace=False))


def tile_full_space(A_graph):
    g, kind, io, ik = tile_space(A_graph)
    _, D_o, u_o = _phys_units(g.shape[io], g.lay[io], g.esize[io])
    tot = 1
    for D, u in zip(D_o, u_o):
        tot *= max(1, int(math.ceil(D / u)))
    if kind == 'mx':
        _, D_k, u_k = _phys_units(g.shape[ik], g.lay[ik], g.esize[ik])
        for D, u in zip(D_k, u_k):
            tot *= max(1, int(math.ceil(D / u)))
    return tot


def tile_configs(rng, A_graph, n_cfg):
    """Config feature rows (c, 24) for a tile graph, default at row 0."""
    g, kind, io, ik = tile_space(A_graph)
    order_o, D_o, u_o = _phys_units(g.shape[io], g.lay[io], g.esize[io])
    mb_o = [int(math.ceil(D / u)) for D, u in zip(D_o, u_o)]
    cand_o = [_bound_candidates(rng, m) for m in mb_o]
    if kind == 'mx':
        order_k, D_k, u_k = _phys_units(g.shape[ik], g.lay[ik], g.esize[ik])
        mb_k = [int(math.ceil(D / u)) for D, u in zip(D_k, u_k)]
        cand_k = [_bound_candidates(rng, m) for m in mb_k]
    else:
        cand_k = []
    mbs = mb_o + (mb_k if kind == 'mx' else [])
    cands = cand_k + cand_o
    order_mb = (mb_k if kind == 'mx' else []) + mb_o
    full = int(np.prod([max(m, 1) for m in order_mb]))
    # grow the candidate sets until the space is comfortably larger than n_cfg
    while int(np.prod([len(x) for x in cands])) < min(4 * n_cfg, full):
        grow = [q for q, x in enumerate(cands) if len(x) < order_mb[q]]
        q = int(rng.choice(grow))
        missing = [v for v in range(1, order_mb[q] + 1) if v not in cands[q]]
        cands[q] = sorted(cands[q] + [int(rng.choice(missing))])
    cand_k, cand_o = cands[:len(cand_k)], cands[len(cand_k):]
    space = int(np.prod([len(x) for x in cand_o + cand_k]))
    want = min(n_cfg * 3, space)
    rows = set()
    tries = 0
    while len(rows) < want and tries < want * 20:
        tries += 1
        rows.add(tuple(int(rng.choice(x)) for x in cand_k) + tuple(int(rng.choice(x)) for x in cand_o))
    rows = sorted(rows)
    nk = len(cand_k)

    def feat(row):
        f = np.zeros(24, np.float32)
        kb, ob = row[:nk], row[nk:]
        if nk:
            f[0:nk] = kb
            f[6] = sum(kb)
            f[7] = float(np.prod(kb))
        if ob:
            f[8:8 + len(ob)] = ob
            f[14] = sum(ob)
            f[15] = float(np.prod(ob))
        return f

    F = np.stack([feat(rw) for rw in rows])
    tmp = dict(A_graph)
    tmp['config_feat'] = F
    h = tile_runtime(tmp, heur=True)
    # configs whose footprint is far beyond VMEM fail to compile and are dropped
    vol_tile = np.ones(len(rows))
    for p in range(len(cand_o)):
        vol_tile *= F[:, 8 + p] * u_o[p]
    foot = vol_tile * g.esize[io] * (4.0 if kind == 'mx' else 3.0)
    if kind == 'mx':
        vk = np.ones(len(rows))
        for p in range(nk):
            vk *= F[:, p] * u_k[p]
        foot = foot + 2.0 * vk * g.esize[ik]
    idx_ok = np.where(foot <= 2.5 * VMEM)[0]
    if len(idx_ok) == 0:
        idx_ok = np.arange(len(rows))
    d = int(idx_ok[np.argmin(h[idx_ok])])
    others = [int(x) for x in idx_ok if x != d]
    rng.shuffle(others)
    sel = [d] + others[:max(0, n_cfg - 1)]
    return F[sel]


# ----------------------------------------------------------------------------
# Layout configs (compiler-like "default" search and "random" search)
# ----------------------------------------------------------------------------
def _partial(p, partial):
    return list(p[:2]) if partial and len(p) >= 3 else list(p)


def _neighbor(rng, p):
    p = list(p)
    r = len(p)
    if r < 2:
        return p
    k = rng.random()
    if k < 0.4:
        p[0], p[1] = p[1], p[0]
    elif k < 0.6 and r >= 3:
        p[1], p[2] = p[2], p[1]
    elif k < 0.8 and r >= 3 and p[1] != 0:
        p.remove(0)
        p.insert(1, 0)
    elif k < 0.9:
        j = int(rng.integers(1, r))
        d = p.pop(j)
        p.insert(0, d)
    else:
        p = [int(x) for x in rng.permutation(r)]
    return p


def _layout_lib(rng, default, partial_p):
    """A library of random layouts for one tensor, with sampling weights."""
    r = len(default)
    if r == 0:
        return [[]], np.array([1.0])
    lib = {}
    if r <= 4:
        import itertools
        for p in itertools.permutations(range(r)):
            lib[tuple(p)] = 1.0
    else:
        for _ in range(60):
            lib[tuple(int(x) for x in rng.permutation(r))] = 1.0
    for _ in range(8):
        p = list(default)
        d = int(rng.integers(0, r))
        p.remove(d)
        p.insert(0, d)
        lib[tuple(p)] = lib.get(tuple(p), 1.0) + 1.0
    keys = list(lib)
    out, w = [], []
    for k in keys:
        if r >= 3 and partial_p > 0:
            out.append(list(k[:2]))
            w.append(lib[k] * partial_p)
            out.append(list(k))
            w.append(lib[k] * (1 - partial_p))
        else:
            out.append(list(k))
            w.append(lib[k])
    w = np.array(w)
    return out, w / w.sum()


def _conf_nodes(b, rng, conf_hi):
    ids = [i for i, nd in enumerate(b.N) if nd.op in (26, 34, 75) and nd.ops]
    if len(ids) > conf_hi:
        ids = sorted(int(x) for x in rng.choice(ids, size=conf_hi, replace=False))
    return ids


def layout_configs(rng, b, ids, n_cfg, search):
    nc = len(ids)
    X = np.full((n_cfg, nc, 18), -1.0, np.float32)
    info = []
    for i in ids:
        nd = b.N[i]
        x = nd.ops[0]
        k = nd.ops[1] if (nd.op == 26 and len(nd.ops) > 1) else -1
        info.append((nd.lay, b.N[x].lay, b.N[k].lay if k >= 0 else None))
    if search == 'random':
        pp = float(rng.uniform(0.3, 0.95))
        pm = float(rng.uniform(0.03, 0.12))
        for j, (lo, li, lk) in enumerate(info):
            for blk, lay in ((0, lo), (1, li), (2, lk)):
                if lay is None or len(lay) == 0:
                    continue
                part = pp if len(lay) >= 4 else pp * 0.25
                lib, w = _layout_lib(rng, lay, part)
                pick = rng.choice(len(lib), size=n_cfg, p=w)
                minus = rng.random(n_cfg) < pm
                arr = np.full((len(lib), 6), -1.0, np.float32)
                for q, p in enumerate(lib):
                    arr[q, :len(p)] = p
                blockv = arr[pick]
                blockv[minus] = -1.0
                X[:, j, blk * 6:(blk + 1) * 6] = blockv
        return X
    # default search: explicit defaults, a few nodes moved per config
    partial = rng.random() < 0.5
    base = np.full((nc, 18), -1.0, np.float32)
    for j, (lo, li, lk) in enumerate(info):
        for blk, lay in ((0, lo), (1, li), (2, lk)):
            if lay is None or len(lay) == 0 or rng.random() < 0.05:
                continue
            p = _partial(lay, partial and len(lay) >= 4)
            base[j, blk * 6:blk * 6 + len(p)] = p
    # coherent moves: configurable consumers whose operand 0 follows j through glue
    pos = {i: j for j, i in enumerate(ids)}
    glue = EW_OPS | INHERIT_OPS | {72}
    followers = {j: [] for j in range(nc)}
    for j2, i2 in enumerate(ids):
        o = b.N[i2].ops[0]
        for _ in range(4):
            if o in pos:
                followers[pos[o]].append(j2)
                break
            if b.N[o].op in glue and b.N[o].ops:
                nf = [q for q in b.N[o].ops if b.N[q].op not in FREE_OPS]
                if not nf:
                    break
                o = nf[0]
            else:
                break
    X[:] = base
    for c in range(n_cfg):
        if c == 0:
            continue
        u = rng.random()
        if u < 0.15:
            X[c] = X[int(rng.integers(0, c))]
            continue
        m = 1 + int(rng.poisson(0.5))
        for _ in range(m):
            j = int(rng.integers(0, nc))
            lo, li, lk = info[j]
            opts = [0, 0, 1] + ([2] if lk is not None and len(lk) else [])
            blk = int(rng.choice(opts))
            lay = (lo, li, lk)[blk]
            if lay is None or len(lay) < 2:
                continue
            u = rng.random()
            if u < 0.15:
                X[c, j, blk * 6:(blk + 1) * 6] = -1.0
                continue
            if u < 0.5 and len(lay) >= 3:
                p = list(lay)
                k0 = int(rng.integers(1, len(p) - 1))
                p[k0], p[k0 + 1] = p[k0 + 1], p[k0]
            else:
                p = _neighbor(rng, lay)
            pv = _partial(p, partial and len(p) >= 4)
            X[c, j, blk * 6:(blk + 1) * 6] = -1.0
            X[c, j, blk * 6:blk * 6 + len(pv)] = pv
            if blk == 0 and rng.random() < 0.6:
                for j2 in followers[j]:
                    li2 = info[j2][1]
                    if len(li2) == len(p):
                        X[c, j2, 6:12] = -1.0
                        X[c, j2, 6:6 + len(pv)] = pv
    return X


# ----------------------------------------------------------------------------
# Dataset writer
# ----------------------------------------------------------------------------
SCALES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay=(16, 6, 4), lay_nodes=(200, 1500), lay_conf=(20, 120),
                  lay_cfg=(300, 3000), lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay=(4, 2, 2), lay_nodes=(40, 150), lay_conf=(5, 20),
                 lay_cfg=(30, 200), lay_test_cfg=(30, 60)),
}
SPLITS = ('train', 'valid', 'test')
XLA_MODELS = ['resnet50', 'resnet_v1_101', 'unet_3d', 'inception_v3', 'mobilenet_v2',
              'efficientnet_b0', 'vgg16', 'alexnet', 'mask_rcnn', 'retinanet', 'densenet121',
              'shufflenet_v2', 'yolo_v3', 'deeplab_v3', 'ssd_resnet34', 'nasnet_a']
NLP_MODELS = ['bert_en_cased_L-12_H-768_A-12', 'bert_en_uncased_L-24_H-1024_A-16',
              'small_bert_bert_en_uncased_L-4_H-512_A-8', 'albert_en_base', 'electra_small',
              'talking-heads_base', 'experts_pubmed', 'mobilebert_en_uncased', 'roberta_base',
              't5_small_encoder', 'gpt2_small', 'xlnet_base']


def _rng(*key):
    return np.random.default_rng(np.random.SeedSequence([int(k) for k in key]))


def _hexstem(rng, n=32):
    return ''.join('0123456789abcdef'[int(x)] for x in rng.integers(0, 16, size=n))


def _signed_hex(rng):
    v = int(rng.integers(1, 2 ** 62)) * (1 if rng.random() < 0.5 else -1)
    return ('-' if v < 0 else '') + format(abs(v), 'x')


def _noise(rng, clean, lo, hi):
    n = len(clean)
    sigma = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    f = np.exp(rng.normal(0.0, sigma, n))
    frac = rng.uniform(0.01, 0.05)
    slow = rng.random(n) < frac
    f = f * np.where(slow, rng.uniform(1.02, 1.06, n), 1.0)
    return clean * f


def _save(root, rel, arrays, clean):
    p = os.path.join(root, 'npz', rel + '.npz')
    os.makedirs(os.path.dirname(p), exist_ok=True)
    np.savez_compressed(p, **arrays)
    if clean is not None:
        assert np.all(np.isfinite(clean)) and np.all(clean > 0), rel
        q = os.path.join(root, 'noiseless', 'npz', rel + '.npy')
        os.makedirs(os.path.dirname(q), exist_ok=True)
        np.save(q, np.asarray(clean, np.float64))


def build(root, seed, scale, gf):
    S = SCALES[scale]
    cnt = lambda k: max(1, int(round(k * gf)))
    used = set()

    def unique(stem, rng):
        while stem in used:
            stem = stem + '_' + _hexstem(rng, 4)
        used.add(stem)
        return stem

    # ---------------------------------------------------------------- tile
    for si, split in enumerate(SPLITS):
        for k in range(cnt(S['tile'][si])):
            rg = _rng(seed, 1, si, k, 0)
            for _attempt in range(100):
                b, kind = gen_tile(rg, *S['tile_nodes'])
                F, opc, E = featurize(b.N)
                A = dict(node_feat=F, node_opcode=opc, edge_index=E)
                space = tile_full_space(A)
                if space >= 2 * S['tile_cfg'][0]:
                    break
            n_cfg = min(int(rg.integers(S['tile_cfg'][0], S['tile_cfg'][1] + 1)), space)
            CF = tile_configs(_rng(seed, 1, si, k, 1), A, n_cfg)
            A['config_feat'] = CF.astype(np.float32)
            c = CF.shape[0]
            if split == 'test':
                stem = unique(_hexstem(rg), rg)
                A['config_runtime'] = np.zeros(c, np.int64)
                A['config_runtime_normalizers'] = np.ones(c, np.int64)
                clean = None
            else:
                model = str(rg.choice(XLA_MODELS))
                stem = unique('%s_%s_batch_%d_%s' % (model, rg.choice(['train', 'inference']),
                                                     int(rg.choice([1, 8, 16, 32, 64, 128])),
                                                     _signed_hex(rg)), rg)
                clean = tile_runtime(A)
                noisy = _noise(_rng(seed, 1, si, k, 2), clean, 0.003, 0.03)
                rt = np.maximum(np.rint(noisy), 1).astype(np.int64)
                A['config_runtime'] = rt
                A['config_runtime_normalizers'] = np.full(c, rt[0], np.int64)
            _save(root, 'tile/xla/%s/%s' % (split, stem), A, clean)
    # -------------------------------------------------------------- layout
    for fi, fam in enumerate(('xla', 'nlp')):
        for si, split in enumerate(SPLITS):
            for k in range(cnt(S['lay'][si])):
                rg = _rng(seed, 2 + fi, si, k, 0)
                gen = gen_xla if fam == 'xla' else gen_nlp
                for _attempt in range(100):
                    b, spl = gen(rg, S['lay_conf'][0], S['lay_conf'][1], S['lay_nodes'][0], S['lay_nodes'][1])
                    ids = _conf_nodes(b, rg, S['lay_conf'][1])
                    if (S['lay_nodes'][0] <= len(b) <= S['lay_nodes'][1]
                            and len(ids) >= S['lay_conf'][0]):
                        break
                F, opc, E = featurize(b.N)
                if split == 'test':
                    stem = unique(_hexstem(rg), rg)
                elif fam == 'xla':
                    stem = unique('%s_%s_batch_%d.%dx%d.%s' % (
                        rg.choice(XLA_MODELS), rg.choice(['train', 'inference', 'eval']),
                        int(rg.choice([1, 4, 8, 16, 32, 64, 128])), int(rg.choice([2, 4, 8])),
                        int(rg.choice([2, 4, 8])), rg.choice(['fp32', 'bf16', 'fp16'])), rg)
                else:
                    stem = unique('%s_batch_size_%d_%s' % (
                        rg.choice(NLP_MODELS), int(rg.choice([8, 16, 32, 64])),
                        rg.choice(['train', 'test', 'eval'])), rg)
                for qi, search in enumerate(('default', 'random')):
                    rc = _rng(seed, 2 + fi, si, k, 1 + qi)
                    lo, hi = S['lay_test_cfg'] if split == 'test' else S['lay_cfg']
                    n_cfg = int(rc.integers(lo, hi + 1))
                    X = layout_configs(rc, b, ids, n_cfg, search)
                    A = dict(node_feat=F, node_opcode=opc, edge_index=E,
                             node_config_ids=np.array(ids, np.int64), node_config_feat=X,
                             node_splits=np.array([spl], np.int64))
                    if split == 'test':
                        A['config_runtime'] = np.zeros(n_cfg, np.int64)
                        clean = None
                    else:
                        clean = layout_runtime(A)
                        noisy = _noise(_rng(seed, 2 + fi, si, k, 5 + qi), clean, 0.0002, 0.005)
                        A['config_runtime'] = np.maximum(np.rint(noisy), 1).astype(np.int64)
                    _save(root, 'layout/%s/%s/%s/%s' % (fam, search, split, stem), A, clean)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=sorted(SCALES), default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    a = ap.parse_args(argv)
    t0 = time.time()
    build(a.out, a.seed, a.scale, a.graphs_factor)
    print('wrote %s in %.1fs' % (a.out, time.time() - t0), file=sys.stderr)


if __name__ == '__main__':
    main()
