#!/usr/bin/env python3
"""blind_08 -- a synthetic TPU runtime law in the TpuGraphs npz format.

Usage:  python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F] [--workers 2]

Everything below is the author's own model of a TPU-like machine (one core with
4 MXUs of 128x128 at 0.94 GHz, HBM at 1.2 TB/s, 16 MiB of VMEM, (8,128) memory
tiles).  Nobody on the tool's side reads this file; NOTE.md does not describe it.

GRAPHS (own sampler)
  layout:xla  - CNN programs (ResNet/VGG/U-Net/MobileNet-like, 2-D or 3-D convs),
                inference or training steps (a small reverse-mode differentiator
                emits the backward convolutions, dots, select-and-scatter, ...),
                parameter layouts sometimes non-default, some while loops.
  layout:nlp  - transformer programs (encoder / decoder, dense layers either as a
                rank-3 dot or reshape->rank-2 dot->reshape, multi-head attention
                via reshape+transpose+batched dots, layer norms, GELU, softmax),
                inference or training.
  Pre-layout HLO: reducer sub-computations and while cond/body computations
  come first (node_splits = 0, end of every while cond/body computation, n),
  all convolution / dot / reshape nodes are configurable.
  tile:xla    - flattened fusion kernels: nested fusion computations, the fused
                computation, the outer parameters and the final fusion node.
                Kinds: elementwise, reduction, convolution, dot, transpose/copy.

LAYOUT LAW (noise-free runtime = pure function of the npz contents)
  * Resolution: an output block lists dims minor->major; -1 entries are filled in
    the order of the node's own layout (node_feat 134-139); an all -1 output block
    means that layout.  An input/kernel block that is all -1 means "take the
    operand as it is"; a partial one is completed in the operand's node_feat order.
  * Propagation: elementwise and data-movement ops take the physical layout of
    their first non-broadcast operand of the same shape/rank, reduce drops the
    reduced dims, transpose is a bitcast (permutes the layout), everything else
    (parameters, broadcasts, gathers, tuples ...) has its node_feat layout.
  * Padding: a tensor's footprint = major dims x ceil(2nd-minor / s) * s x
    ceil(minor / 128) * 128 elements, s = 8 (4-byte), 16 (2-byte), 32 (1-byte).
  * Convolution / dot (dims from the conv dimension numbers; dot dims inferred
    from the shapes: batch prefix, K = sqrt(lhs*rhs/(out*batch)), N = out[-1]):
      T_mxu = flops * passes / (PEAK * lane(K) * lane(N) * f_in * sqrt(f_ker * f_out)),
      passes 1 (bf16), 3 (f32), 2 (int), lane(x) = x / ceil128(x).  For each of
      input (wants K minor), kernel (wants N or K minor) and output (wants N
      minor): f = 0.75 + 0.25 * sublane use of the 2nd-minor dim when the wanted
      dim is minor (x0.95 for a K-minor kernel), 0.9 plus an XLU relayout of 0.3 x
      the padded tensor when it is 2nd-minor, else 0.85 plus a relayout of the
      whole padded tensor (XLU at 0.5 Telem/s).
      T_mem = padded bytes of input + kernel + output / HBM_BW.
      cost = (T_mxu^4 + T_mem^4)^(1/4) + T_xlu + launch.  Grouped (depthwise)
      convolutions run on the VPU: 2 x padded output x window x K/group / VPU.
  * Elementwise: padded elements x op weight (transcendentals 6, divide 4) / VPU
    rate, plus a write of the padded tensor if it leaves its fusion (feeds a
    conv/dot/reduce/reshape/data-movement op or the root, or has >= 3 users).
  * Reduce: padded input / VPU x (1 + 2 [minor dim reduced] + 0.5 [2nd minor
    reduced]) + launch, + reading its input if that is not fused.
  * Reshape: a bitcast (free) when both physical layouts keep every reshape
    factor group contiguous and row-major, in the same group order, and the
    minor dim sizes agree (or are both multiples of 128) and the 2nd-minor sizes
    agree (or both multiples of 8); otherwise a relayout copy
    (padded in + padded out) / BW x (1 + 0.8 [minor size changes]) + launch.
  * Layout copies: a requested input/kernel layout different from what the
    producer delivers, an elementwise/data-movement op whose same-shape operands
    disagree, or a root output not in its node_feat layout, costs
    launch + (padded src + padded dst) / BW x (1 + 0.8 [minor dim differs] +
    0.25 [2nd-minor differs]); identical copies of one producer are shared.
  * Program: static part + dynamic node costs + copies - hidden, where up to half
    of the copy time hides under the MXU slack (T_mxu - T_mem) of compute-bound
    convolutions / dots (at most 0.8 of that slack), + 80 us fixed.

TILE LAW
  The tiled iteration space is the physical (major->minor) shape of the anchor:
  the largest conv/dot output, else the reduce input, else the root output (a
  tuple root: its largest element).  output_bounds count tiles of 1 element on
  major dims, 8 rows on the 2nd-minor, 128 lanes on the minor dim; kernel_bounds
  the same on the kernel operand's physical dims.  Every grid step costs 190 ns
  plus max-ish(DMA, compute); partial last tiles are computed in full; DMA runs
  are efficient only when contiguous runs are long (eff = run/(run+512 B));
  double-buffered working set above 16 MiB serialises DMA and compute (x1.15).
  Conv/dot: per step MXU cycles = ceil(Ktile/128) * window_tile * ceil(Ntile/128)
  * (Mtile + 128) / 4 MXUs; activations are re-read per N tile and weights per M
  tile unless they stay resident; K/window splits re-walk the accumulator.
  Reductions pay cross-lane (minor) or sublane reductions and an accumulator
  read-modify-write when a reduced dim is split; transposes pay an XLU transpose
  when the minor dim changes and a strided read of the source.  The default
  config is a compiler heuristic (divisor-friendly tiles up to a byte budget) that
  ignores partial tiles, halos and VMEM pressure; normalizer = its measured
  runtime (the default config is one of the stored configs).

CONFIG SAMPLERS (generator side)
  random: per block a random full permutation (45%), only the two most-minor dims
    (40%) or -1 (15%); 7% of nodes all -1; 3% repeated configs.
  default: a compiler-style local search starting from all -1: children mutate
    1-3 blocks of a parent from the best quarter (80%) or any parent (20%), using
    two-most-minor candidates from {default minor, default 2nd-minor, largest dim,
    largest multiple-of-128 dim, dim 0, last dim} whose padded footprint is at most
    1.3x the default's, or the explicit default, or -1; 8% re-measurements.  The
    stored runtimes are the search's own measurements.  Configs are shuffled.
  The generator's default layouts: row-major, or feature-minor/batch-2nd-minor
  for conv activations when the batch is >= 8 (graph style); parameters sometimes
  carry non-default entry layouts.
  tile: per dim log-spaced values and divisors of the dim's tile count, 30% local
  around the default, configs over a 40 MiB working set dropped, 2% repeats,
  shuffled.  Default = divisor-friendly tiles grown to a 2 MiB tile (minor <= 16
  lane tiles, 2nd-minor <= 64 row tiles; MXU N tile <= 512 lanes, K <= 2048).

NOISE
  measured = true * exp(sigma(t) * z), z ~ N(0,1), sigma(t) = 0.003 +
  0.05 / sqrt(1 + t / 20000 ns)  (larger for short runtimes), and with
  probability 0.005 an outlier factor 1 + 0.1 * (1 + Pareto(1.5)) (capped 20).
  Default-search layout configs are re-measured during the search (duplicates
  carry independent noise).
"""
import argparse
import itertools
import math
import os
import sys
import time
import zlib

import numpy as np

# --------------------------------------------------------------------------
# HLO opcode ids (XLA hlo_opcode.h order, as TpuGraphs stores them)
# --------------------------------------------------------------------------
ABS, ADD, ALLREDUCE, BITCAST, BCAST, CLAMP, COMPARE, CONCAT, CONST, CONVERT = 1, 2, 5, 11, 13, 17, 20, 22, 24, 25
CONV, COPY, CUSTOM, DIV, DOT, DSLICE, DUS, EXP, FUSION, GATHER, GTE, IOTA = 26, 27, 31, 32, 34, 35, 36, 37, 41, 42, 45, 48
LOG, AND, MAX, MIN, MUL, NEG, PAD, PARAM, POW, REDUCE, REDWIN, RESHAPE = 50, 52, 57, 58, 59, 60, 62, 63, 66, 70, 72, 75
REVERSE, RNGBIT, RSQRT, SCATTER, SELECT, SELSCAT, SHL, SHRL, SLICE, SORT, SQRT = 76, 79, 81, 82, 83, 84, 87, 89, 92, 93, 94
SUB, TANH, TRANSPOSE, TUPLE, WHILE, ALLGATHER, LOGISTIC, OR, SIGN, EXPM1, LOG1P = 95, 96, 98, 100, 102, 104, 107, 54, 90, 38, 51

EW_OPS = {1, 2, 7, 12, 15, 17, 19, 20, 25, 30, 32, 37, 38, 40, 46, 49, 50, 51, 52, 53, 54, 55, 57, 58, 59, 60,
          65, 66, 67, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94, 95, 96, 103, 107, 118, 119, 120}
FLEX_OPS = {BCAST, CONST, IOTA}               # layout-flexible producers
SRC_OPS = {PARAM, CONST, IOTA, 77, RNGBIT, 74, 64}
MOVE_OPS = {CONCAT, DSLICE, DUS, PAD, REDWIN, SELSCAT, REVERSE, SORT, SLICE, ALLREDUCE, ALLGATHER, 111, 18, 6}
MXU_OPS = {CONV, DOT}
EW_WEIGHT = {EXP: 6., 38: 6., LOG: 6., 51: 6., RSQRT: 6., SQRT: 6., TANH: 6., LOGISTIC: 6., POW: 6., 30: 6., 91: 6.,
             120: 6., DIV: 4., 73: 4.}

# element types: index in the 19-way one-hot (column 2 + idx)
PRED, S8, S32, S64, U8, U32, F16, F32, BF16, TUPLE_T = 1, 2, 4, 5, 6, 8, 10, 11, 13, 16
DT_BYTES = {0: 4, 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 2, 8: 4, 9: 8, 10: 2, 11: 4, 12: 8, 13: 2, 14: 8, 15: 16,
            16: 0, 17: 0, 18: 0}

# machine constants (ns based)
CLOCK = 0.94e9
N_MXU = 4
PEAK = N_MXU * 128 * 128 * 2 * CLOCK          # flop/s (bf16)
HBM_BW = 1.2e12                               # B/s
VPU_RATE = 2 * 1024 * CLOCK                   # elem-ops/s
XLU_RATE = 0.5e12                             # elems/s relayout
ICI_BW = 1.0e11
LAUNCH = 900.0                                # ns per materialised kernel (layout programs)
GRAPH_OVH = 80000.0
TILE_LAUNCH = 700.0
STEP_OVH = 190.0
VMEM = 16 * 2 ** 20
VMEM_HARD = 40 * 2 ** 20
RUN0 = 512.0

# --------------------------------------------------------------------------
# permutations (minor_to_major lists) per rank
# --------------------------------------------------------------------------
PERMS = [np.array(list(itertools.permutations(range(r))), dtype=np.int64).reshape(max(math.factorial(r), 1), r)
         for r in range(7)]
PIDX = [{tuple(int(v) for v in p): i for i, p in enumerate(PERMS[r])} for r in range(7)]
INVALID = -1


def perm_code(r, m2m):
    return PIDX[r].get(tuple(int(v) for v in m2m), 0)


def rowmajor(r):
    return list(range(r - 1, -1, -1))


def ceil_to(x, m):
    return -(-x // m) * m


def sublane(b):
    return 8 if b >= 4 else (16 if b == 2 else 32)


def padded_table(shape, b):
    """padded element count for every permutation of rank len(shape)."""
    r = len(shape)
    P = PERMS[r]
    if r == 0:
        return np.ones(1)
    s = np.array(shape, dtype=np.float64)
    vol = float(np.prod(s))
    minor = s[P[:, 0]]
    if r == 1:
        return np.ceil(minor / 128.0) * 128.0
    second = s[P[:, 1]]
    rest = vol / (minor * second)
    ts = sublane(b)
    return rest * np.ceil(second / ts) * ts * np.ceil(minor / 128.0) * 128.0


def lane_use(x):
    return x / (math.ceil(x / 128.0) * 128.0) if x > 0 else 1.0


def sub_use(x, ts=8):
    return x / (math.ceil(x / ts) * ts) if x > 0 else 1.0


# --------------------------------------------------------------------------
# graph builder
# --------------------------------------------------------------------------
class Node:
    __slots__ = ('op', 'shape', 'dt', 'ins', 'lay', 'a', 'idx', 'root', 'pnum', 'cfg')

    def __init__(self, op, shape, dt, ins, lay, a):
        self.op, self.shape, self.dt, self.ins, self.lay, self.a = op, list(shape), dt, list(ins), lay, a
        self.idx, self.root, self.pnum, self.cfg = -1, 0, 0, False


def src_operand(op, shape, ins):
    """index (into ins) of the operand whose layout a node inherits, or -1."""
    if op in EW_OPS:
        cand = [k for k, x in enumerate(ins) if list(x.shape) == list(shape)]
    elif op in MOVE_OPS:
        cand = [k for k, x in enumerate(ins) if len(x.shape) == len(shape) and x.dt != TUPLE_T]
    else:
        return -1
    if not cand or len(shape) == 0:
        return -1
    for k in cand:
        if ins[k].op not in FLEX_OPS:
            return k
    return cand[0]


def map_reduce_layout(in_lay, red_dims):
    red = set(red_dims)
    return [d - sum(1 for q in red if q < d) for d in in_lay if d not in red]


def map_transpose_layout(in_lay, perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return [inv[d] for d in in_lay]


class Comp:
    def __init__(self, kind):
        self.nodes, self.kind, self.pcount, self.root = [], kind, 0, None


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.pre = []              # finished sub-computations (in order)
        self.boundaries = []       # len(pre) after each while cond/body computation
        self.main = Comp('main')
        self.stack = [self.main]

    # ---- computation context
    @property
    def cur(self):
        return self.stack[-1]

    def begin(self, kind):
        c = Comp(kind)
        self.stack.append(c)
        return c

    def end(self, root):
        c = self.stack.pop()
        c.root = root
        root.root = 1
        self.pre.extend(c.nodes)
        if c.kind in ('while_body', 'while_cond'):
            self.boundaries.append(len(self.pre))
        return root

    def add(self, op, shape, dt, ins=(), lay=None, **a):
        ins = list(ins)
        shape = [int(s) for s in shape]
        if lay is None:
            k = src_operand(op, shape, ins)
            if k >= 0:
                lay = list(ins[k].lay)
            elif op == REDUCE and ins:
                x = max(ins, key=lambda q: len(q.shape))
                lay = map_reduce_layout(x.lay, a['dims'][:len(x.shape) - len(shape)])
            elif op == TRANSPOSE:
                lay = map_transpose_layout(ins[0].lay, a['dims'])
            else:
                lay = rowmajor(len(shape))
        n = Node(op, shape, dt, ins, list(lay), a)
        if op == PARAM:
            n.pnum = self.cur.pcount
            self.cur.pcount += 1
        self.cur.nodes.append(n)
        return n

    # ---- common ops
    def param(self, shape, dt=F32, lay=None):
        return self.add(PARAM, shape, dt, lay=lay)

    def const(self, dt=F32, shape=()):
        return self.add(CONST, shape, dt)

    def bcast(self, x, shape, dims):
        return self.add(BCAST, shape, x.dt, [x], dims=list(dims))

    def scalar_bcast(self, shape, dt=F32):
        return self.bcast(self.const(dt), shape, [])

    def ew(self, op, *xs, dt=None):
        full = max(xs, key=lambda q: len(q.shape))
        if dt is None:
            dt = PRED if op == COMPARE else (xs[1].dt if op == SELECT else full.dt)
        return self.add(op, full.shape, dt, xs)

    def convert(self, x, dt):
        return self.add(CONVERT, x.shape, dt, [x])

    def reducer(self, dt, kind=ADD):
        self.begin('reducer')
        a = self.param([], dt)
        b = self.param([], dt)
        r = self.add(kind, [], dt, [a, b])
        return self.end(r)

    def reduce(self, x, dims, kind=ADD):
        dims = sorted(dims)
        red = self.reducer(x.dt, kind)
        init = self.const(x.dt)
        shape = [s for i, s in enumerate(x.shape) if i not in dims]
        return self.add(REDUCE, shape, x.dt, [red, x, init], dims=dims, kind=kind)

    def reshape(self, x, shape):
        assert int(np.prod(shape)) == int(np.prod(x.shape)), (x.shape, shape)
        n = self.add(RESHAPE, shape, x.dt, [x])
        n.cfg = True
        return n

    def transpose(self, x, perm):
        return self.add(TRANSPOSE, [x.shape[p] for p in perm], x.dt, [x], dims=list(perm))

    def tuple_(self, xs):
        return self.add(TUPLE, [], TUPLE_T, xs, tup=len(xs))

    def gte(self, t, shape, dt, lay=None):
        return self.add(GTE, shape, dt, [t], lay=lay)

    # ---- finalize
    def finalize(self, root):
        root.root = 1
        nodes = self.pre + self.main.nodes
        for i, n in enumerate(nodes):
            n.idx = i
        n_ = len(nodes)
        feat = np.zeros((n_, 140), np.float32)
        opc = np.zeros(n_, np.uint8)
        edges = []
        for i, n in enumerate(nodes):
            feat[i] = node_features(n)
            opc[i] = n.op
            for x in n.ins:
                assert x.idx >= 0 and x.idx < i, 'not topological'
                edges.append((i, x.idx))
        ei = np.array(edges, dtype=np.int64).reshape(-1, 2)
        splits = np.array([[0] + list(self.boundaries) + [n_]], dtype=np.int64)
        cfg_ids = np.array([n.idx for n in nodes if n.cfg], dtype=np.int64)
        return dict(node_feat=feat, node_opcode=opc, edge_index=ei, node_splits=splits, node_config_ids=cfg_ids)


def _seq(f, at, vals, lead):
    vals = [int(v) for v in vals]
    for k, v in enumerate(vals[:lead]):
        f[at + k] = v
    f[at + lead] = sum(vals)
    f[at + lead + 1] = float(np.prod(vals)) if vals else 1.0


def node_features(n):
    f = np.zeros(140, np.float32)
    a = n.a
    f[0] = n.root
    f[2 + n.dt] = 1.0
    sh = n.shape
    for k, v in enumerate(sh[:6]):
        f[21 + k] = v
    f[27] = sum(sh)
    f[28] = float(np.prod(sh)) if sh else 1.0
    f[29] = a.get('tup', 0)
    f[30] = n.pnum
    for k, v in enumerate(a.get('dims', [])[:6]):
        f[31 + k] = v
    w = a.get('win')
    if w is None:
        w = dict(size=[], stride=[], lo=[], hi=[], wd=[], bd=[], rev=[])
    for g, key in enumerate(('size', 'stride', 'lo', 'hi', 'wd', 'bd')):
        _seq(f, 37 + 8 * g, w[key], 6)
    rev = [bool(v) for v in w['rev']]
    for k, v in enumerate(rev[:6]):
        f[85 + k] = float(v)
    f[91] = sum(rev)
    f[92] = len(rev) - sum(rev)
    cd = a.get('cdims')
    if cd is not None:
        f[93] = cd['ib']
        f[94] = cd['if']
        for k, v in enumerate(cd['isp'][:4]):
            f[95 + k] = v
        f[99] = cd['ki']
        f[100] = cd['ko']
        for k, v in enumerate(cd['ksp'][:4]):
            f[101 + k] = v
        f[105] = cd['ob']
        f[106] = cd['of']
        f[107] = a.get('fgc', 1)
        f[108] = a.get('bgc', 1)
    sl = a.get('slice')
    _seq(f, 109, sl[0] if sl else [], 2)
    _seq(f, 113, sl[1] if sl else [], 2)
    _seq(f, 117, sl[2] if sl else [], 2)
    _seq(f, 121, a.get('dss', []), 2)
    pd = a.get('pad')
    _seq(f, 125, pd[0] if pd else [], 2)
    _seq(f, 129, pd[1] if pd else [], 2)
    f[133] = a.get('stable', 0)
    for k, v in enumerate(n.lay[:6]):
        f[134 + k] = v
    return f


# --------------------------------------------------------------------------
# layout graphs: model builders
# --------------------------------------------------------------------------
def act_layout(r, style, batch=8):
    if style == 'batch2nd' and r >= 3 and batch >= 8:
        return [r - 1, 0] + list(range(r - 2, 0, -1))
    return rowmajor(r)


class ModelBuilder(Builder):
    def __init__(self, rng, style='rowmajor', cdt=F32, mixed=False):
        super().__init__(rng)
        self.style, self.cdt, self.mixed = style, cdt, mixed
        self.trainables = []

    def ncfg(self):
        return sum(1 for n in self.pre if n.cfg) + sum(1 for n in self.main.nodes if n.cfg)

    def count(self):
        return len(self.pre) + sum(len(c.nodes) for c in self.stack)

    def weight(self, shape, lay=None):
        p = self.param(shape, F32, lay=lay)
        self.trainables.append(p)
        if self.cdt != F32:
            return self.convert(p, self.cdt)
        return p

    # ---- convolutions
    def conv(self, x, w, stride=1, fgc=1, lay=None):
        r = len(x.shape)
        nsp = r - 2
        k = w.shape[:nsp]
        cout = w.shape[-1]
        sp = x.shape[1:-1]
        osp = [-(-s // stride) for s in sp]
        lo, hi = [], []
        for s, o, kk in zip(sp, osp, k):
            tot = max((o - 1) * stride + kk - s, 0)
            lo.append(tot // 2)
            hi.append(tot - tot // 2)
        win = dict(size=k, stride=[stride] * nsp, lo=lo, hi=hi, wd=[1] * nsp, bd=[1] * nsp, rev=[0] * nsp)
        cd = dict(ib=0, **{'if': r - 1}, isp=list(range(1, r - 1)), ki=r - 2, ko=r - 1, ksp=list(range(nsp)),
                  ob=0, of=r - 1)
        if lay is None:
            lay = act_layout(r, self.style, x.shape[0])
        n = self.add(CONV, [x.shape[0]] + osp + [cout], x.dt, [x, w], lay=lay, win=win, cdims=cd, fgc=fgc, bgc=1,
                     fwd=dict(stride=stride, lo=lo, hi=hi, k=list(k)))
        n.cfg = True
        return n

    def conv_t(self, x, w):
        """transposed conv (x2 upsampling through base dilation)."""
        r = len(x.shape)
        nsp = r - 2
        win = dict(size=[3] * nsp, stride=[1] * nsp, lo=[1] * nsp, hi=[2] * nsp, wd=[1] * nsp, bd=[2] * nsp,
                   rev=[0] * nsp)
        cd = dict(ib=0, **{'if': r - 1}, isp=list(range(1, r - 1)), ki=r - 2, ko=r - 1, ksp=list(range(nsp)),
                  ob=0, of=r - 1)
        shape = [x.shape[0]] + [2 * s for s in x.shape[1:-1]] + [w.shape[-1]]
        n = self.add(CONV, shape, x.dt, [x, w], lay=act_layout(r, self.style, x.shape[0]), win=win, cdims=cd, fgc=1, bgc=1,
                     fwd=dict(stride=1, lo=[1] * nsp, hi=[2] * nsp, k=[3] * nsp))
        n.cfg = True
        return n

    def conv_bwd_input(self, dy, w, x_shape, fwd, fgc):
        r = len(x_shape)
        nsp = r - 2
        s = fwd['stride']
        k = fwd['k']
        lo, hi = [], []
        for i in range(nsp):
            l2 = max(k[i] - 1 - fwd['lo'][i], 0)
            h2 = x_shape[1 + i] + k[i] - 1 - ((dy.shape[1 + i] - 1) * s + 1) - l2
            lo.append(l2)
            hi.append(max(h2, 0))
        win = dict(size=k, stride=[1] * nsp, lo=lo, hi=hi, wd=[1] * nsp, bd=[s] * nsp, rev=[1] * nsp)
        cd = dict(ib=0, **{'if': r - 1}, isp=list(range(1, r - 1)), ki=r - 1, ko=r - 2, ksp=list(range(nsp)),
                  ob=0, of=r - 1)
        n = self.add(CONV, x_shape, dy.dt, [dy, w], lay=act_layout(r, self.style, x_shape[0]), win=win, cdims=cd,
                     fgc=fgc, bgc=1)
        n.cfg = True
        return n

    def conv_bwd_filter(self, x, dy, w_shape, fwd, fgc):
        r = len(x.shape)
        nsp = r - 2
        s = fwd['stride']
        lo, hi = list(fwd['lo']), []
        for i in range(nsp):
            h2 = w_shape[i] - 1 - x.shape[1 + i] - lo[i] + (dy.shape[1 + i] - 1) * s + 1
            hi.append(max(h2, 0))
        win = dict(size=dy.shape[1:-1], stride=[1] * nsp, lo=lo, hi=hi, wd=[s] * nsp, bd=[1] * nsp, rev=[0] * nsp)
        cd = dict(ib=r - 1, **{'if': 0}, isp=list(range(1, r - 1)), ki=0, ko=r - 1, ksp=list(range(1, r - 1)),
                  ob=r - 2, of=r - 1)
        n = self.add(CONV, w_shape, x.dt, [x, dy], lay=rowmajor(r), win=win, cdims=cd, fgc=1, bgc=fgc)
        n.cfg = True
        return n

    # ---- dots
    def dot(self, l, r, form):
        if form == 'kn':
            out = l.shape[:-1] + [r.shape[-1]]
        elif form == 'nk':
            out = l.shape[:-1] + [r.shape[-2]]
        else:
            out = l.shape[:-2] + [l.shape[-1], r.shape[-1]]
        n = self.add(DOT, out, l.dt, [l, r], form=form)
        n.cfg = True
        return n

    # ---- small helpers
    def zeros(self, shape, dt):
        return self.scalar_bcast(shape, dt)

    def bias_add(self, y, c_dim):
        b = self.weight([y.shape[c_dim]])
        return self.ew(ADD, y, self.bcast(b, y.shape, [c_dim]))

    def relu(self, y):
        return self.ew(MAX, y, self.zeros(y.shape, y.dt))

    def bn(self, y, training):
        r = len(y.shape)
        C = y.shape[-1]
        if not training:
            s = self.weight([C])
            b = self.weight([C])
            y = self.ew(MUL, y, self.bcast(s, y.shape, [r - 1]))
            return self.ew(ADD, y, self.bcast(b, y.shape, [r - 1]))
        red = list(range(r - 1))
        inv_n = self.scalar_bcast([C], y.dt)
        mean = self.ew(MUL, self.reduce(y, red), inv_n)
        d = self.ew(SUB, y, self.bcast(mean, y.shape, [r - 1]))
        var = self.ew(MUL, self.reduce(self.ew(MUL, d, d), red), self.scalar_bcast([C], y.dt))
        inv = self.ew(RSQRT, self.ew(ADD, var, self.scalar_bcast([C], y.dt)))
        g = self.weight([C])
        b = self.weight([C])
        sc = self.ew(MUL, inv, g)
        y = self.ew(MUL, d, self.bcast(sc, y.shape, [r - 1]))
        return self.ew(ADD, y, self.bcast(b, y.shape, [r - 1]))

    def conv_bn_relu(self, x, cout, k, stride, training, relu=True, fgc=1):
        nsp = len(x.shape) - 2
        cin = 1 if fgc > 1 else x.shape[-1]
        w = self.weight([k] * nsp + [cin, cout])
        y = self.conv(x, w, stride, fgc=fgc)
        y = self.bn(y, training)
        return self.relu(y) if relu else y

    def maxpool(self, x):
        r = len(x.shape)
        nsp = r - 2
        red = self.reducer(x.dt, MAX)
        init = self.const(x.dt)
        win = dict(size=[1] + [2] * nsp + [1], stride=[1] + [2] * nsp + [1], lo=[0] * r, hi=[0] * r,
                   wd=[1] * r, bd=[1] * r, rev=[0] * r)
        shape = [x.shape[0]] + [-(-s // 2) for s in x.shape[1:-1]] + [x.shape[-1]]
        return self.add(REDWIN, shape, x.dt, [red, x, init], win=win)

    def layer_norm(self, x):
        r = len(x.shape)
        D = x.shape[-1]
        keep = list(range(r - 1))
        sh = x.shape[:-1]
        mean = self.ew(MUL, self.reduce(x, [r - 1]), self.scalar_bcast(sh, x.dt))
        d = self.ew(SUB, x, self.bcast(mean, x.shape, keep))
        var = self.ew(MUL, self.reduce(self.ew(MUL, d, d), [r - 1]), self.scalar_bcast(sh, x.dt))
        inv = self.ew(RSQRT, self.ew(ADD, var, self.scalar_bcast(sh, x.dt)))
        y = self.ew(MUL, d, self.bcast(inv, x.shape, keep))
        y = self.ew(MUL, y, self.bcast(self.weight([D]), x.shape, [r - 1]))
        return self.ew(ADD, y, self.bcast(self.weight([D]), x.shape, [r - 1]))

    def softmax_ce(self, logits):
        r = len(logits.shape)
        keep = list(range(r - 1))
        sh = logits.shape[:-1]
        m = self.reduce(logits, [r - 1], MAX)
        s = self.ew(SUB, logits, self.bcast(m, logits.shape, keep))
        z = self.reduce(self.ew(EXP, s), [r - 1])
        lp = self.ew(SUB, s, self.bcast(self.ew(LOG, z), logits.shape, keep))
        lab = self.param(logits.shape, logits.dt)
        t = self.ew(MUL, lp, lab)
        tot = self.reduce(t, list(range(r)))
        return self.ew(NEG, tot)

    # ---- reverse mode
    def backward(self, loss):
        nodes = list(self.main.nodes)
        pos = nodes.index(loss)
        req = set(id(p) for p in self.trainables)
        for n in nodes[:pos + 1]:
            if n.op != TUPLE and any(id(x) in req for x in n.ins):
                req.add(id(n))
        grads = {id(loss): self.const(loss.dt)}

        def acc(x, gx):
            if id(x) not in req:
                return
            if gx.dt != x.dt and x.dt != TUPLE_T:
                gx = self.convert(gx, x.dt)
            if id(x) in grads:
                grads[id(x)] = self.ew(ADD, grads[id(x)], gx)
            else:
                grads[id(x)] = gx

        for n in reversed(nodes[:pos + 1]):
            if id(n) not in grads:
                continue
            dy = grads[id(n)]
            x = n.ins
            op = n.op
            if op == PARAM:
                continue
            if op == ADD:
                for q in x:
                    acc(q, dy)
            elif op == SUB:
                acc(x[0], dy)
                if id(x[1]) in req:
                    acc(x[1], self.ew(NEG, dy))
            elif op == MUL:
                if id(x[0]) in req:
                    acc(x[0], self.ew(MUL, dy, x[1]))
                if id(x[1]) in req:
                    acc(x[1], self.ew(MUL, dy, x[0]))
            elif op == DIV:
                q = self.ew(DIV, dy, x[1])
                acc(x[0], q)
                if id(x[1]) in req:
                    acc(x[1], self.ew(NEG, self.ew(MUL, q, n)))
            elif op in (MAX, MIN):
                m = self.ew(COMPARE, x[0], x[1])
                z = self.zeros(n.shape, dy.dt)
                if id(x[0]) in req:
                    acc(x[0], self.ew(SELECT, m, dy, z))
                if id(x[1]) in req:
                    acc(x[1], self.ew(SELECT, m, z, dy))
            elif op == EXP:
                acc(x[0], self.ew(MUL, dy, n))
            elif op == LOG:
                acc(x[0], self.ew(DIV, dy, x[0]))
            elif op == TANH:
                one = self.scalar_bcast(n.shape, n.dt)
                acc(x[0], self.ew(MUL, dy, self.ew(SUB, one, self.ew(MUL, n, n))))
            elif op == RSQRT:
                h = self.scalar_bcast(n.shape, n.dt)
                acc(x[0], self.ew(MUL, dy, self.ew(MUL, self.ew(MUL, n, self.ew(DIV, n, x[0])), h)))
            elif op == NEG:
                acc(x[0], self.ew(NEG, dy))
            elif op == CONVERT:
                acc(x[0], self.convert(dy, x[0].dt))
            elif op == SELECT:
                z = self.zeros(n.shape, dy.dt)
                if id(x[1]) in req:
                    acc(x[1], self.ew(SELECT, x[0], dy, z))
                if id(x[2]) in req:
                    acc(x[2], self.ew(SELECT, x[0], z, dy))
            elif op == BCAST:
                dims = n.a['dims']
                red = [i for i in range(len(n.shape)) if i not in dims]
                acc(x[0], self.reduce(dy, red) if red else dy)
            elif op == REDUCE:
                if n.a.get('kind', ADD) != ADD:
                    continue
                src = x[1]
                keep = [i for i in range(len(src.shape)) if i not in n.a['dims']]
                acc(src, self.bcast(dy, src.shape, keep))
            elif op == RESHAPE:
                acc(x[0], self.reshape(dy, x[0].shape))
            elif op == TRANSPOSE:
                perm = n.a['dims']
                inv = [0] * len(perm)
                for i, p in enumerate(perm):
                    inv[p] = i
                acc(x[0], self.transpose(dy, inv))
            elif op == DOT:
                self._dot_grad(n, dy, acc, req)
            elif op == CONV:
                xx, w = x
                fwd = n.a.get('fwd')
                if fwd is None:
                    continue
                fgc = n.a.get('fgc', 1)
                if id(xx) in req:
                    acc(xx, self.conv_bwd_input(dy, w, xx.shape, fwd, fgc))
                if id(w) in req:
                    acc(w, self.conv_bwd_filter(xx, dy, w.shape, fwd, fgc))
            elif op == REDWIN:
                src = x[1]
                sel = self.reducer(src.dt, COMPARE)
                sca = self.reducer(src.dt, ADD)
                init = self.const(src.dt)
                acc(src, self.add(SELSCAT, src.shape, src.dt, [sel, sca, src, dy, init], win=n.a['win']))
            elif op == CONCAT:
                d = n.a['dims'][0]
                off = 0
                for q in x:
                    st = [0] * len(n.shape)
                    lim = list(n.shape)
                    st[d] = off
                    lim[d] = off + q.shape[d]
                    off += q.shape[d]
                    if id(q) in req:
                        acc(q, self.add(SLICE, q.shape, dy.dt, [dy], slice=(st, [1] * len(st), lim)))
            elif op == GATHER:
                table, ids = x
                if id(table) in req:
                    sc = self.reducer(dy.dt, ADD)
                    z = self.zeros(table.shape, dy.dt)
                    acc(table, self.add(SCATTER, table.shape, dy.dt, [sc, z, ids, dy]))
        outs = [loss]
        for p in self.trainables:
            gp = grads.get(id(p))
            if gp is None:
                continue
            if gp.dt != p.dt:
                gp = self.convert(gp, p.dt)
            lr = self.scalar_bcast(p.shape, p.dt)
            outs.append(self.ew(SUB, p, self.ew(MUL, gp, lr)))
        return outs

    def _flat2(self, t):
        if len(t.shape) == 2:
            return t
        return self.reshape(t, [int(np.prod(t.shape[:-1])), t.shape[-1]])

    def _dot_grad(self, n, dy, acc, req):
        l, r = n.ins
        form = n.a['form']
        dense = len(r.shape) == 2 and len(l.shape) > 2
        if form == 'kn':
            if id(l) in req:
                acc(l, self.dot(dy, r, 'nk'))
            if id(r) in req:
                if dense or (len(r.shape) == 2 and len(l.shape) == 2):
                    acc(r, self.dot(self._flat2(l), self._flat2(dy), 'mn'))
                else:
                    acc(r, self.dot(l, dy, 'mn'))
        elif form == 'nk':
            if id(l) in req:
                acc(l, self.dot(dy, r, 'kn'))
            if id(r) in req:
                if len(r.shape) == 2:
                    acc(r, self.dot(self._flat2(dy), self._flat2(l), 'mn'))
                else:
                    acc(r, self.dot(dy, l, 'mn'))
        else:
            if id(l) in req:
                acc(l, self.dot(r, dy, 'nk'))
            if id(r) in req:
                acc(r, self.dot(l, dy, 'kn'))

    # ---- while loop (input pipeline / step counter)
    def while_loop(self, x):
        rng = self.rng
        shp, dt = x.shape, x.dt
        lay = list(x.lay)
        n_iter = [1] + list(shp[1:])
        # condition
        self.begin('while_cond')
        p = self.add(PARAM, [], TUPLE_T, tup=2)
        i = self.gte(p, [], S32)
        c = self.const(S32)
        self.end(self.add(COMPARE, [], PRED, [i, c]))
        cond_root = self.pre[-1]
        # body
        self.begin('while_body')
        p = self.add(PARAM, [], TUPLE_T, tup=2)
        i = self.gte(p, [], S32)
        d = self.gte(p, shp, dt, lay=lay)
        one = self.const(S32)
        i1 = self.ew(ADD, i, one)
        iv = self.bcast(i, [1], [])
        idx = self.reshape(self.add(SLICE, [1], S32, [iv], slice=([0], [1], [1])), [])
        zero = self.const(S32)
        sl = self.add(DSLICE, n_iter, dt, [d, idx] + [zero] * (len(shp) - 1), dss=n_iter)
        sc = self.ew(MUL, sl, self.scalar_bcast(n_iter, dt))
        if rng.random() < 0.5:
            sc = self.ew(ADD, sc, self.scalar_bcast(n_iter, dt))
        upd = self.add(DUS, shp, dt, [d, sc, idx] + [zero] * (len(shp) - 1))
        self.end(self.tuple_([i1, upd]))
        body_root = self.pre[-1]
        init = self.tuple_([self.const(S32), x])
        w = self.add(WHILE, [], TUPLE_T, [body_root, cond_root, init], tup=2)
        return self.gte(w, shp, dt, lay=lay)


def pick(rng, seq, p=None):
    return seq[int(rng.choice(len(seq), p=p))]


def gen_cnn(rng, node_budget, cmin, cmax, allow_train=True):
    three_d = rng.random() < 0.2
    training = rng.random() < 0.5 and allow_train
    mixed = rng.random() < 0.5
    style = pick(rng, ['rowmajor', 'batch2nd'])
    g = ModelBuilder(rng, style=style, cdt=BF16 if (mixed or rng.random() < 0.25) else F32, mixed=mixed)
    g.meta = dict(family='cnn', training=training)
    if three_d:
        N = pick(rng, [1, 2, 4])
        S = pick(rng, [16, 24, 32, 48, 64])
        nsp = 3
    else:
        N = pick(rng, [1, 2, 4, 8, 16, 32, 64, 128])
        S = pick(rng, [28, 32, 56, 64, 96, 112, 128, 224])
        nsp = 2
    arch = pick(rng, ['resnet', 'vgg', 'unet', 'mobilenet'], p=[.4, .2, .2, .2])
    C0 = pick(rng, [1, 3, 4, 8])
    mult = 2.8 if training else 1.0
    play = act_layout(nsp + 2, style, N) if rng.random() < 0.5 else rowmajor(nsp + 2)
    x = g.param([N] + [S] * nsp + [C0], F32, lay=play)
    if rng.random() < 0.3:
        x = g.while_loop(x)
    if g.cdt != F32:
        x = g.convert(x, g.cdt)

    def room(extra_nodes=25, extra_cfg=3):
        return (g.count() + extra_nodes) * mult < node_budget and (g.ncfg() + extra_cfg) * (3 if training else 1) < cmax - 4

    c = pick(rng, [8, 16, 32, 64])
    h = g.conv_bn_relu(x, c, pick(rng, [3, 5, 7]) if not three_d else 3, 2 if S >= 64 else 1, training)
    skips = []
    if arch == 'unet':
        depth = 0
        while room(60, 6) and min(h.shape[1:-1]) >= 8 and depth < 4:
            h = g.conv_bn_relu(h, c, 3, 1, training)
            skips.append(h)
            h = g.maxpool(h)
            c = min(c * 2, 512)
            depth += 1
        h = g.conv_bn_relu(h, c, 3, 1, training)
        for sk in reversed(skips):
            c = max(c // 2, 8)
            if nsp == 2 and rng.random() < 0.6:
                sh = h.shape
                b = g.bcast(h, [sh[0], sh[1], 2, sh[2], 2, sh[3]], [0, 1, 3, 5])
                h = g.reshape(b, [sh[0], 2 * sh[1], 2 * sh[2], sh[3]])
            else:
                w = g.weight([3] * nsp + [h.shape[-1], c])
                h = g.conv_t(h, w)
            if list(h.shape[1:-1]) != list(sk.shape[1:-1]):
                h = g.add(SLICE, [h.shape[0]] + list(sk.shape[1:-1]) + [h.shape[-1]], h.dt, [h],
                          slice=([0] * len(h.shape), [1] * len(h.shape),
                                 [h.shape[0]] + list(sk.shape[1:-1]) + [h.shape[-1]]))
            h = g.add(CONCAT, list(h.shape[:-1]) + [h.shape[-1] + sk.shape[-1]], h.dt, [h, sk], dims=[len(h.shape) - 1])
            h = g.conv_bn_relu(h, c, 3, 1, training)
            if room(10, 1):
                h = g.conv_bn_relu(h, c, 3, 1, training)
        ncls = pick(rng, [2, 4, 16, 21])
        w = g.weight([1] * nsp + [h.shape[-1], ncls])
        logits = g.conv(h, w, 1)
    else:
        while room():
            if arch == 'mobilenet':
                stride = 2 if (rng.random() < 0.3 and min(h.shape[1:-1]) >= 8) else 1
                h = g.conv_bn_relu(h, h.shape[-1], 3, stride, training, fgc=h.shape[-1])
                c2 = min(max(int(h.shape[-1] * pick(rng, [1, 1, 2])), 8), 1024)
                h = g.conv_bn_relu(h, c2, 1, 1, training)
            elif arch == 'vgg':
                h = g.conv_bn_relu(h, c, 3, 1, training)
                if rng.random() < 0.4 and min(h.shape[1:-1]) >= 4:
                    h = g.maxpool(h)
                    c = min(c * 2, 512)
            else:
                down = rng.random() < 0.3 and min(h.shape[1:-1]) >= 4
                c2 = min(c * 2, 512) if down else c
                y = g.conv_bn_relu(h, c2, 3, 2 if down else 1, training)
                y = g.conv_bn_relu(y, c2, 3, 1, training, relu=False)
                if down or h.shape[-1] != c2:
                    sc = g.conv_bn_relu(h, c2, 1, 2 if down else 1, training, relu=False)
                else:
                    sc = h
                h = g.relu(g.ew(ADD, y, sc))
                c = c2
        r = len(h.shape)
        if arch == 'vgg' and int(np.prod(h.shape[1:])) <= 65536:
            feat = g.reshape(h, [h.shape[0], int(np.prod(h.shape[1:]))])
        else:
            feat = g.ew(MUL, g.reduce(h, list(range(1, r - 1))), g.scalar_bcast([h.shape[0], h.shape[-1]], h.dt))
        if arch == 'vgg':
            feat = g.relu(g.bias_add(g.dot(feat, g.weight([feat.shape[1], pick(rng, [256, 512, 1024])]), 'kn'), 1))
        ncls = pick(rng, [10, 100, 1000])
        logits = g.bias_add(g.dot(feat, g.weight([feat.shape[1], ncls]), 'kn'), 1)
    if training:
        if logits.dt != F32:
            logits = g.convert(logits, F32)
        loss = g.softmax_ce(logits)
        outs = g.backward(loss)
    else:
        outs = [logits]
    return g, outs


def gen_transformer(rng, node_budget, cmin, cmax, small_model=False, allow_train=True):
    training = rng.random() < 0.45 and allow_train
    mixed = rng.random() < 0.5
    g = ModelBuilder(rng, style='rowmajor', cdt=BF16 if mixed else F32, mixed=mixed)
    g.meta = dict(family='transformer', training=training)
    B = pick(rng, [1, 2, 4, 8, 16, 32])
    S = pick(rng, [32, 64, 128, 256, 384, 512])
    D = pick(rng, [128, 256, 384, 512, 768, 1024]) if not small_model else pick(rng, [64, 128, 256])
    Dh = pick(rng, [32, 64, 128]) if D >= 256 else 32
    Dh = min(Dh, D)
    H = D // Dh
    F = D * pick(rng, [2, 4])
    V = pick(rng, [1000, 8192, 32000])
    decoder = rng.random() < 0.4
    flat = rng.random() < 0.5
    mult = 2.6 if training else 1.0

    def dense(x, din, dout):
        lay = [0, 1] if rng.random() < 0.12 else None
        w = g.weight([din, dout], lay=lay)
        if flat and len(x.shape) > 2:
            xf = g.reshape(x, [int(np.prod(x.shape[:-1])), din])
            y = g.reshape(g.dot(xf, w, 'kn'), x.shape[:-1] + [dout])
        else:
            y = g.dot(x, w, 'kn')
        return g.bias_add(y, len(y.shape) - 1)

    def heads(t):
        t = g.reshape(t, [B, S, H, Dh])
        return g.transpose(t, [0, 2, 1, 3])

    lite = node_budget < 300

    def layer(x):
        h = g.layer_norm(x)
        if lite:
            q = heads(dense(h, D, D))
            s = g.dot(q, q, 'nk')
            m = g.reduce(s, [3], MAX)
            e = g.ew(EXP, g.ew(SUB, s, g.bcast(m, s.shape, [0, 1, 2])))
            p = g.ew(DIV, e, g.bcast(g.reduce(e, [3]), s.shape, [0, 1, 2]))
            c = g.reshape(g.transpose(g.dot(p, q, 'kn'), [0, 2, 1, 3]), [B, S, D])
            return g.ew(ADD, x, c)
        q, k, v = heads(dense(h, D, D)), heads(dense(h, D, D)), heads(dense(h, D, D))
        s = g.dot(q, k, 'nk')
        s = g.ew(MUL, s, g.scalar_bcast(s.shape, s.dt))
        if decoder:
            i1 = g.add(IOTA, s.shape, S32, dims=[2])
            i2 = g.add(IOTA, s.shape, S32, dims=[3])
            s = g.ew(SELECT, g.ew(COMPARE, i1, i2), s, g.scalar_bcast(s.shape, s.dt))
        m = g.reduce(s, [3], MAX)
        e = g.ew(EXP, g.ew(SUB, s, g.bcast(m, s.shape, [0, 1, 2])))
        z = g.reduce(e, [3])
        p = g.ew(DIV, e, g.bcast(z, s.shape, [0, 1, 2]))
        c = g.dot(p, v, 'kn')
        c = g.reshape(g.transpose(c, [0, 2, 1, 3]), [B, S, D])
        x = g.ew(ADD, x, dense(c, D, D))
        h = g.layer_norm(x)
        f = dense(h, D, F)
        x3 = g.ew(MUL, g.ew(MUL, f, f), f)
        t = g.ew(TANH, g.ew(MUL, g.ew(ADD, f, g.ew(MUL, x3, g.scalar_bcast(f.shape, f.dt))),
                            g.scalar_bcast(f.shape, f.dt)))
        f = g.ew(MUL, g.ew(MUL, f, g.ew(ADD, t, g.scalar_bcast(f.shape, f.dt))), g.scalar_bcast(f.shape, f.dt))
        return g.ew(ADD, x, dense(f, F, D))

    ids = g.param([B, S], S32)
    emb = g.weight([V, D])
    x = g.add(GATHER, [B, S, D], emb.dt, [emb, ids], dss=[1, D])
    if rng.random() < 0.25:
        x = g.while_loop(x)
    pos = g.weight([S, D])
    x = g.ew(ADD, x, g.bcast(pos, [B, S, D], [1, 2]))
    per_cfg = 12 + (6 if flat else 0)
    nl = 0
    if lite:
        per_cfg = 5
    while nl == 0 or ((g.count() + (45 if lite else 130)) * mult < node_budget
                      and (g.ncfg() + per_cfg) * (3 if training else 1) < cmax - 4):
        x = layer(x)
        nl += 1
    x = g.layer_norm(x)
    if rng.random() < 0.5 and not lite:
        logits = dense(x, D, pick(rng, [V, 2 * D]))
    else:
        pooled = g.ew(MUL, g.reduce(x, [1]), g.scalar_bcast([B, D], x.dt))
        logits = dense(pooled, D, pick(rng, [2, 3, 16]))
    if training:
        if logits.dt != F32:
            logits = g.convert(logits, F32)
        outs = g.backward(g.softmax_ce(logits))
    else:
        outs = [logits]
    return g, outs


def finish_layout_graph(rng, g, outs, cmin, cmax):
    # summary outputs: extra reshapes until the configurable count is in range
    cands = [n for n in g.main.nodes if len(n.shape) >= 3 and n.op in EW_OPS and n.dt != PRED]
    k = 0
    while g.ncfg() < cmin and cands:
        t = cands[int(rng.integers(len(cands)))]
        sh = list(t.shape)
        i = int(rng.integers(len(sh) - 1))
        ns = sh[:i] + [sh[i] * sh[i + 1]] + sh[i + 2:]
        outs.append(g.reshape(t, ns))
        k += 1
    root = g.tuple_(outs)
    return g.finalize(root)


def gen_layout_graph(rng, source, nrange, crange):
    lo, hi = nrange
    best = None
    for attempt in range(10):
        budget = int(rng.integers(lo, hi + 1))
        tr = attempt < 5
        if source == 'xla':
            kind = rng.random()
            if kind < 0.82:
                g, outs = gen_cnn(rng, budget, crange[0], crange[1], allow_train=tr)
            else:
                g, outs = gen_transformer(rng, budget, crange[0], crange[1], small_model=True, allow_train=tr)
        else:
            g, outs = gen_transformer(rng, budget, crange[0], crange[1], allow_train=tr)
        arr = finish_layout_graph(rng, g, outs, crange[0], crange[1])
        arr['_meta'] = g.meta
        n = len(arr['node_opcode'])
        nc = len(arr['node_config_ids'])
        ok = lo <= n <= hi and crange[0] <= nc <= crange[1]
        score = (0 if ok else 1, abs(n - (lo + hi) / 2) / hi + (0 if crange[0] <= nc <= crange[1] else 10))
        if best is None or score < best[0]:
            best = (score, arr)
        if ok:
            break
    return best[1]


# --------------------------------------------------------------------------
# reading a graph back from its arrays (the law only ever sees these)
# --------------------------------------------------------------------------
class Parsed:
    def __init__(self, nf, op, ei):
        n = len(op)
        self.n = n
        self.op = [int(v) for v in op]
        dims = nf[:, 21:27]
        self.rank = [int(v) for v in (dims > 0).sum(1)]
        self.shape = [tuple(int(v) for v in nf[i, 21:21 + self.rank[i]]) for i in range(n)]
        self.dti = [int(v) for v in nf[:, 2:21].argmax(1)]
        self.b = [DT_BYTES.get(d, 4) for d in self.dti]
        self.lay = []
        for i in range(n):
            r = self.rank[i]
            l = tuple(int(v) for v in nf[i, 134:134 + r])
            if sorted(l) != list(range(r)):
                l = tuple(rowmajor(r))
            self.lay.append(l)
        self.defcode = [PIDX[self.rank[i]][self.lay[i]] for i in range(n)]
        self.ins = [[] for _ in range(n)]
        self.users = [[] for _ in range(n)]
        for u, v in ei:
            self.ins[int(u)].append(int(v))
            self.users[int(v)].append(int(u))
        self.attr_dims = nf[:, 31:37]
        self.nf = nf
        self.vol = [int(np.prod(s)) if s else 1 for s in self.shape]

    def src_of(self, i):
        op = self.op[i]
        ins = self.ins[i]
        if self.rank[i] == 0:
            return -1
        if op in EW_OPS:
            cand = [k for k in ins if self.shape[k] == self.shape[i]]
        elif op in MOVE_OPS:
            cand = [k for k in ins if self.rank[k] == self.rank[i] and self.dti[k] != TUPLE_T]
        else:
            return -1
        if not cand:
            return -1
        for k in cand:
            if self.op[k] not in FLEX_OPS:
                return k
        return cand[0]

    def reduce_input(self, i):
        ins = self.ins[i]
        if not ins:
            return -1
        return max(ins, key=lambda k: (self.rank[k], self.vol[k]))

    def reduce_dims(self, i, x):
        k = self.rank[x] - self.rank[i]
        return [int(v) for v in self.attr_dims[i, :k]]


_PAD_CACHE = {}


def padt(shape, b):
    key = (tuple(shape), b)
    t = _PAD_CACHE.get(key)
    if t is None:
        t = padded_table(shape, b)
        _PAD_CACHE[key] = t
    return t


def minor_arr(r):
    return PERMS[r][:, 0] if r >= 1 else np.array([-1])


def second_arr(r):
    return PERMS[r][:, 1] if r >= 2 else np.full(max(math.factorial(r), 1), -1)


def lane_use_arr(x):
    x = np.asarray(x, dtype=np.float64)
    return x / (np.ceil(x / 128.0) * 128.0)


def sub_use_arr(x, ts):
    x = np.asarray(x, dtype=np.float64)
    return x / (np.ceil(x / ts) * ts)


def dim_sizes(shape, idx):
    s = np.array(list(shape) + [1], dtype=np.float64)
    return s[np.where(idx >= 0, idx, len(shape))]


def reshape_groups(a, b):
    groups = []
    i = j = 0
    while i < len(a) or j < len(b):
        ga, gb = [], []
        pa = pb = 1
        if i < len(a):
            ga.append(i)
            pa *= a[i]
            i += 1
        if j < len(b):
            gb.append(j)
            pb *= b[j]
            j += 1
        while pa != pb:
            if pa < pb and i < len(a):
                ga.append(i)
                pa *= a[i]
                i += 1
            elif pb < pa and j < len(b):
                gb.append(j)
                pb *= b[j]
                j += 1
            else:
                break
        groups.append((ga, gb))
    return groups


def reshape_keys(shape, groups, side, keymap):
    r = len(shape)
    gid = {}
    for g, pair in enumerate(groups):
        for d in pair[side]:
            gid[d] = g
    out = np.empty(len(PERMS[r]), dtype=np.int64)
    for code, p in enumerate(PERMS[r]):
        phys = [int(d) for d in p[::-1] if shape[d] != 1]
        ok = True
        order = []
        last = {}
        for pos, d in enumerate(phys):
            g = gid.get(d, -1)
            if order and order[-1] == g:
                if d < last[g]:
                    ok = False
                    break
            else:
                if g in last:
                    ok = False
                    break
                order.append(g)
            last[g] = d
        if not ok:
            key = ('bad', side, code)
        else:
            mn = shape[p[0]] if r >= 1 else 1
            sc = shape[p[1]] if r >= 2 else 1
            key = (tuple(order), 0 if mn % 128 == 0 else mn, 0 if sc % 8 == 0 else sc)
        if key not in keymap:
            keymap[key] = len(keymap)
        out[code] = keymap[key]
    return out


def smax(a, b):
    return (a ** 4 + b ** 4) ** 0.25


def resolve_block(vals, r, ref):
    spec = [int(v) for v in vals if v >= 0]
    if not spec:
        return -1
    if any(v >= r for v in spec) or len(set(spec)) != len(spec):
        return -1
    rest = [d for d in ref if d not in spec]
    return PIDX[r][tuple(spec + rest)]


def pack_blocks(block):
    """(c, 6) float block -> int64 key per row."""
    v = np.rint(block).astype(np.int64) + 1
    v = np.clip(v, 0, 7)
    mult = 8 ** np.arange(6, dtype=np.int64)
    return (v * mult).sum(1)


class LayoutModel:
    """noise-free runtime of layout configs of one graph (pure function of the npz arrays)."""

    def __init__(self, nf, op, ei, nci):
        P = Parsed(nf, op, ei)
        self.P = P
        n = P.n
        self.nci = [int(v) for v in nci]
        self.cpos = {v: j for j, v in enumerate(self.nci)}
        kind = ['const'] * n
        src = [-1] * n
        table = [None] * n
        for i in range(n):
            o = P.op[i]
            if i in self.cpos:
                kind[i] = 'cfg'
                continue
            s = P.src_of(i)
            if s >= 0:
                kind[i], src[i] = 'follow', s
            elif o == REDUCE:
                x = P.reduce_input(i)
                red = P.reduce_dims(i, x) if x >= 0 else []
                if x >= 0 and P.rank[x] > P.rank[i] and len(set(red)) == len(red) and all(d < P.rank[x] for d in red):
                    kind[i], src[i] = 'map', x
                    table[i] = np.array([PIDX[P.rank[i]][tuple(map_reduce_layout(list(p), red))]
                                         for p in PERMS[P.rank[x]]], dtype=np.int64)
            elif o == TRANSPOSE and P.ins[i]:
                x = P.ins[i][0]
                perm = [int(v) for v in P.attr_dims[i, :P.rank[i]]]
                if P.rank[x] == P.rank[i] and sorted(perm) == list(range(P.rank[i])):
                    kind[i], src[i] = 'map', x
                    table[i] = np.array([PIDX[P.rank[i]][tuple(map_transpose_layout(list(p), perm))]
                                         for p in PERMS[P.rank[x]]], dtype=np.int64)
        self.kind, self.src, self.table = kind, src, table
        dyn = [False] * n
        for i in range(n):
            if kind[i] == 'cfg':
                dyn[i] = True
            elif kind[i] in ('follow', 'map'):
                dyn[i] = dyn[src[i]]
        self.dyn = dyn
        self.dyn_order = [i for i in range(n) if dyn[i]]
        # static propagation (all-default config)
        phys0 = np.array(P.defcode, dtype=np.int64)
        for i in range(n):
            if kind[i] == 'follow':
                phys0[i] = phys0[src[i]]
            elif kind[i] == 'map':
                phys0[i] = table[i][phys0[src[i]]]
        self.phys0 = phys0
        self._build_terms()

    # ---------------------------------------------------------------
    def _copy_parts(self, p):
        P = self.P
        r = P.rank[p]
        return (padt(P.shape[p], P.b[p]) * P.b[p] / HBM_BW * 1e9, minor_arr(r), second_arr(r))

    def _build_terms(self):
        P = self.P
        n = P.n
        self.static = GRAPH_OVH
        self.own_terms, self.src_terms = [], []
        self.mxu_terms, self.resh_terms, self.sites = [], [], []
        mat_users = lambda i: any(P.op[u] not in EW_OPS and P.op[u] not in (BCAST, TRANSPOSE) for u in P.users[i]) \
            or len(P.users[i]) >= 3
        for i in range(n):
            o = P.op[i]
            sh, b, r = P.shape[i], P.b[i], P.rank[i]
            if b == 0:
                continue
            cfg = i in self.cpos
            if o in EW_OPS and not cfg:
                tab = padt(sh, b) * EW_WEIGHT.get(o, 1.0) / VPU_RATE * 1e9
                if mat_users(i):
                    tab = tab + padt(sh, b) * b / HBM_BW * 1e9
                self._add_own(i, tab)
            elif o == REDUCE and not cfg:
                x = P.reduce_input(i)
                if x < 0:
                    continue
                red = set(P.reduce_dims(i, x)) if P.rank[x] > r else set()
                rx = P.rank[x]
                px = padt(P.shape[x], P.b[x])
                mi, se = minor_arr(rx), second_arr(rx)
                fac = 1.0 + 2.0 * np.isin(mi, list(red)) + 0.5 * np.isin(se, list(red))
                tab = px * fac / VPU_RATE * 1e9 + LAUNCH
                if P.op[x] not in EW_OPS and P.op[x] != BCAST:
                    tab = tab + px * P.b[x] / HBM_BW * 1e9
                self._add_src(x, tab)
            elif o in MOVE_OPS and not cfg:
                s = self.src[i]
                win = float(np.prod([v for v in P.nf[i, 37:43] if v > 0])) if o in (REDWIN, SELSCAT) else 0.0
                if s >= 0:
                    tab = (padt(P.shape[s], P.b[s]) * P.b[s] + padt(sh, b) * b) / HBM_BW * 1e9 + LAUNCH
                    if win:
                        tab = tab + padt(sh, b) * win / VPU_RATE * 1e9
                    if o in (ALLREDUCE, ALLGATHER):
                        tab = tab + padt(sh, b) * b / ICI_BW * 1e9
                    self._add_src(s, tab)
                    for k in P.ins[i]:
                        if k != s and P.rank[k] == r and P.op[k] not in FLEX_OPS and P.dti[k] != TUPLE_T \
                                and (o != DUS or P.shape[k] == P.shape[i] or True):
                            self.sites.append((k, ('phys', i)))
                else:
                    tin = sum(padt(P.shape[k], P.b[k])[self.phys0[k]] * P.b[k] for k in P.ins[i])
                    self.static += (tin + padt(sh, b)[self.phys0[i]] * b) / HBM_BW * 1e9 + LAUNCH
            elif o in (GATHER, SCATTER) and not cfg:
                tin = sum(padt(P.shape[k], P.b[k])[self.phys0[k]] * P.b[k] for k in P.ins[i] if P.b[k])
                self.static += (0.1 * tin + padt(sh, b)[self.phys0[i]] * b) / HBM_BW * 1e9 + LAUNCH
            elif o == COPY and not cfg and P.ins[i]:
                x = P.ins[i][0]
                if P.rank[x] == r:
                    pb, mi, se = self._copy_parts(x)
                    d = P.defcode[i]
                    tab = LAUNCH + (pb + pb[d]) * (1 + 0.8 * (mi != mi[d]) + 0.25 * (se != se[d]))
                    self._add_src(x, tab)
            elif o in MXU_OPS:
                self._build_mxu(i)
            elif o == RESHAPE:
                self._build_resh(i)
            if o in EW_OPS and self.src[i] >= 0:
                for k in P.ins[i]:
                    if k != self.src[i] and P.shape[k] == sh and P.op[k] not in FLEX_OPS:
                        self.sites.append((k, ('phys', i)))
        # root outputs keep their layouts
        root = n - 1
        outs = P.ins[root] if P.op[root] == TUPLE else [root]
        for k in outs:
            if P.rank[k] >= 2 and P.b[k] > 0:
                self.sites.append((k, ('def', k)))
        # group sites by producer
        by = {}
        for p, tgt in self.sites:
            by.setdefault(p, []).append(tgt)
        self.site_groups = [(p, tg, self._copy_parts(p)) for p, tg in by.items() if self.P.rank[p] >= 2]

    def _add_own(self, i, tab):
        if self.dyn[i]:
            self.own_terms.append((i, tab))
        else:
            self.static += float(tab[self.phys0[i]])

    def _add_src(self, x, tab):
        if self.dyn[x]:
            self.src_terms.append((x, tab))
        else:
            self.static += float(tab[self.phys0[x]])

    def _build_mxu(self, v):
        P = self.P
        ins = P.ins[v]
        if len(ins) < 2:
            return
        l, rr = ins[0], ins[1]
        sl, sr, so = P.shape[l], P.shape[rr], P.shape[v]
        if not sl or not sr or not so:
            return
        nf = P.nf
        dep = False
        if P.op[v] == CONV:
            kd = int(nf[v, 94])
            rkd, rnd, ond = int(nf[v, 99]), int(nf[v, 100]), int(nf[v, 106])
            fgc = max(int(nf[v, 107]), 1)
            bgc = max(int(nf[v, 108]), 1)
            nsp = max(len(sl) - 2, 0)
            wprod = float(np.prod([x for x in nf[v, 37:37 + nsp] if x > 0])) if nsp else 1.0
            if kd >= len(sl) or rkd >= len(sr) or rnd >= len(sr) or ond >= len(so):
                return
            K = sl[kd] / fgc
            N = so[ond]
            flops = 2.0 * P.vol[v] * K * wprod
            dep = fgc > 1 or bgc > 1
        else:
            rl, rrk, ro = len(sl), len(sr), len(so)
            nb = 0
            while nb < min(rl, rrk, ro) - 2 and sl[nb] == sr[nb] == so[nb]:
                nb += 1
            Bv = float(np.prod(so[:nb])) if nb else 1.0
            K = max(round(math.sqrt(P.vol[l] * P.vol[rr] / (P.vol[v] * Bv))), 1)
            N = so[-1]
            ond = ro - 1
            kd = next((d for d in range(rl - 1, nb - 1, -1) if sl[d] == K), rl - 1)
            order = [rrk - 2, rrk - 1] + list(range(nb, rrk - 2))
            rkd = next((d for d in order if d >= nb and sr[d] == K), rrk - 2 if rrk >= 2 else 0)
            rnd = next((d for d in range(rrk - 1, nb - 1, -1) if d != rkd and sr[d] == N), rrk - 1)
            flops = 2.0 * P.vol[v] * K
            wprod = 1.0
        passes = 3.0 if (P.dti[l] == F32 or P.dti[rr] == F32) else (1.0 if P.dti[l] in (BF16, F16) else 2.0)

        def side(i, good_dims, pref_dim):
            r = P.rank[i]
            pt = padt(P.shape[i], P.b[i])
            mi, se = minor_arr(r), second_arr(r)
            szs = dim_sizes(P.shape[i], se)
            ts = sublane(P.b[i])
            if r >= 2:
                mg = np.isin(mi, good_dims)
                sg = np.isin(se, good_dims)
                row = 0.75 + 0.25 * sub_use_arr(szs, ts)
                u = np.where(mg, row * np.where(mi == pref_dim, 1.0, 0.95), np.where(sg, 0.9, 0.85))
                x = np.where(mg, 0.0, np.where(sg, 0.3 * pt, pt))
            else:
                u = np.ones(len(pt))
                x = np.zeros(len(pt))
            return u, x / XLU_RATE * 1e9, pt * P.b[i] / HBM_BW * 1e9, pt

        ul, xl, ml, _ = side(l, [kd], kd)
        uk, xk, mk, _ = side(rr, [rkd, rnd], rnd)
        uo, xo, mo, po = side(v, [ond], ond)
        base_u = lane_use(K) * lane_use(N)
        t = dict(v=v, l=l, r=rr, flops=flops * passes / (PEAK * base_u) * 1e9, ul=ul, xl=xl, ml=ml, uk=uk, xk=xk,
                 mk=mk, uo=uo, xo=xo, mo=mo, dep=dep, vpu=2.0 * po * wprod * K / VPU_RATE * 1e9)
        self.mxu_terms.append(t)

    def _build_resh(self, v):
        P = self.P
        if not P.ins[v]:
            return
        x = P.ins[v][0]
        if P.b[x] == 0:
            return
        groups = reshape_groups(list(P.shape[x]), list(P.shape[v]))
        keymap = {}
        kin = reshape_keys(P.shape[x], groups, 0, keymap)
        kout = reshape_keys(P.shape[v], groups, 1, keymap)
        rx, rv = P.rank[x], P.rank[v]
        t = dict(v=v, x=x, kin=kin, kout=kout,
                 pin=padt(P.shape[x], P.b[x]) * P.b[x] / HBM_BW * 1e9,
                 pout=padt(P.shape[v], P.b[v]) * P.b[v] / HBM_BW * 1e9,
                 min_in=dim_sizes(P.shape[x], minor_arr(rx)), min_out=dim_sizes(P.shape[v], minor_arr(rv)))
        self.resh_terms.append(t)

    # ---------------------------------------------------------------
    def resolve(self, ncf):
        P = self.P
        c = ncf.shape[0]
        nc = len(self.nci)
        outc = np.empty((nc, c), dtype=np.int64)
        inc = np.full((nc, c), -1, dtype=np.int64)
        kc = np.full((nc, c), -1, dtype=np.int64)
        for j, v in enumerate(self.nci):
            ins = P.ins[v]
            parts = [(0, v, outc, P.defcode[v])]
            if ins and P.op[v] in (CONV, DOT, RESHAPE):
                parts.append((6, ins[0], inc, -1))
            if len(ins) > 1 and P.op[v] == CONV:
                parts.append((12, ins[1], kc, -1))
            for off, who, dest, dflt in parts:
                blk = ncf[:, j, off:off + 6]
                keys = pack_blocks(blk)
                uk, first, inv = np.unique(keys, return_index=True, return_inverse=True)
                r = P.rank[who]
                ref = P.lay[who]
                codes = np.empty(len(uk), dtype=np.int64)
                for q, f in enumerate(first):
                    cd = resolve_block(blk[f], r, ref)
                    codes[q] = dflt if cd < 0 else cd
                dest[j] = codes[inv.reshape(-1)]
        return outc, inc, kc

    def eval(self, ncf):
        P = self.P
        c = ncf.shape[0]
        outc, inc, kc = self.resolve(ncf)
        phys = np.empty((P.n, c), dtype=np.int64)
        phys[:] = self.phys0[:, None]
        for i in self.dyn_order:
            k = self.kind[i]
            if k == 'cfg':
                phys[i] = outc[self.cpos[i]]
            elif k == 'follow':
                phys[i] = phys[self.src[i]]
            else:
                phys[i] = self.table[i][phys[self.src[i]]]
        T = np.full(c, self.static, dtype=np.float64)
        for i, tab in self.own_terms:
            T += tab[phys[i]]
        for x, tab in self.src_terms:
            T += tab[phys[x]]
        slack = np.zeros(c)
        for t in self.mxu_terms:
            v = t['v']
            j = self.cpos.get(v)
            li = phys[t['l']] if j is None else np.where(inc[j] >= 0, inc[j], phys[t['l']])
            ki = phys[t['r']] if (j is None or P.op[v] != CONV) else np.where(kc[j] >= 0, kc[j], phys[t['r']])
            oi = phys[v]
            tmem = t['ml'][li] + t['mk'][ki] + t['mo'][oi]
            if t['dep']:
                T += smax(t['vpu'][oi], tmem) + LAUNCH
                continue
            tm = t['flops'] / (t['ul'][li] * np.sqrt(t['uk'][ki] * t['uo'][oi]))
            T += smax(tm, tmem) + t['xl'][li] + t['xk'][ki] + t['xo'][oi] + LAUNCH
            slack += np.maximum(tm - tmem, 0.0)
        for t in self.resh_terms:
            v = t['v']
            j = self.cpos.get(v)
            xi = phys[t['x']] if j is None else np.where(inc[j] >= 0, inc[j], phys[t['x']])
            oi = phys[v]
            bit = t['kin'][xi] == t['kout'][oi]
            cost = LAUNCH + (t['pin'][xi] + t['pout'][oi]) * (1.0 + 0.8 * (t['min_in'][xi] != t['min_out'][oi]))
            T += np.where(bit, 0.0, cost)
        # layout copies (shared per producer and target layout)
        cfg_sites = {}
        for j, v in enumerate(self.nci):
            ins = P.ins[v]
            if ins and P.op[v] in (CONV, DOT, RESHAPE):
                cfg_sites.setdefault(ins[0], []).append(inc[j])
            if len(ins) > 1 and P.op[v] == CONV:
                cfg_sites.setdefault(ins[1], []).append(kc[j])
        copy = np.zeros(c)
        done = set()
        groups = list(self.site_groups)
        for p in cfg_sites:
            if p not in {g[0] for g in self.site_groups} and P.rank[p] >= 2:
                groups.append((p, [], self._copy_parts(p)))
        for p, tg, (pb, mi, se) in groups:
            src = phys[p]
            targets = []
            for kind_, who in tg:
                targets.append(phys[who] if kind_ == 'phys' else np.full(c, P.defcode[who]))
            for arr in cfg_sites.get(p, []):
                targets.append(np.where(arr >= 0, arr, src))
            seen = []
            for tgt in targets:
                act = tgt != src
                for q in seen:
                    act &= tgt != q
                if act.any():
                    cc = LAUNCH + (pb[src] + pb[tgt]) * (1 + 0.8 * (mi[src] != mi[tgt]) + 0.25 * (se[src] != se[tgt]))
                    copy += np.where(act, cc, 0.0)
                seen.append(np.where(tgt != src, tgt, -7))
        hidden = np.minimum(0.5 * copy, 0.8 * slack)
        return T + copy - hidden


def layout_noiseless(arrs):
    m = LayoutModel(arrs['node_feat'], arrs['node_opcode'], arrs['edge_index'], arrs['node_config_ids'])
    ncf = arrs['node_config_feat']
    out = np.empty(ncf.shape[0])
    step = 512
    for s in range(0, ncf.shape[0], step):
        out[s:s + step] = m.eval(ncf[s:s + step])
    return out


# --------------------------------------------------------------------------
# measurement noise
# --------------------------------------------------------------------------
def measure(rng, t):
    t = np.asarray(t, dtype=np.float64)
    sigma = 0.003 + 0.05 / np.sqrt(1.0 + t / 20000.0)
    m = t * np.exp(sigma * rng.standard_normal(t.shape))
    out = rng.random(t.shape) < 0.005
    if out.any():
        m = np.where(out, m * np.minimum(1.0 + 0.1 * (1.0 + rng.pareto(1.5, t.shape)), 20.0), m)
    return np.maximum(np.rint(m), 1).astype(np.int64)


# --------------------------------------------------------------------------
# layout config samplers
# --------------------------------------------------------------------------
def layout_parts(model, j):
    P = model.P
    v = model.nci[j]
    parts = [(0, v)]
    ins = P.ins[v]
    if ins and P.op[v] in (CONV, DOT, RESHAPE):
        parts.append((6, ins[0]))
    if len(ins) > 1 and P.op[v] == CONV:
        parts.append((12, ins[1]))
    return parts


def random_layout_configs(rng, model, c):
    P = model.P
    nc = len(model.nci)
    ncf = np.full((c, nc, 18), -1, dtype=np.float32)
    for j in range(nc):
        for off, who in layout_parts(model, j):
            r = P.rank[who]
            if r == 0:
                continue
            perms = np.argsort(rng.random((c, r)), axis=1)
            mode = rng.choice(3, size=c, p=[0.45, 0.4, 0.15])
            if r <= 2:
                mode = np.where(mode == 1, 0, mode)
            blk = np.full((c, 6), -1, dtype=np.float32)
            blk[:, :r] = perms
            blk[mode == 1, 2:] = -1
            blk[mode == 2] = -1
            ncf[:, j, off:off + 6] = blk
        off_mask = rng.random(c) < 0.07
        ncf[off_mask, j, :] = -1
    dup = np.nonzero(rng.random(c) < 0.03)[0]
    for q in dup:
        if q > 0:
            ncf[q] = ncf[int(rng.integers(q))]
    return ncf


def default_candidates(model, j):
    P = model.P
    res = []
    for off, who in layout_parts(model, j):
        r = P.rank[who]
        if r == 0:
            continue
        lay = list(P.lay[who])
        sh = P.shape[who]
        dims = [lay[0]]
        if r >= 2:
            dims.append(lay[1])
        dims.append(int(np.argmax(sh)))
        m128 = [d for d in range(r) if sh[d] % 128 == 0]
        if m128:
            dims.append(max(m128, key=lambda d: sh[d]))
        dims.append(0)
        dims.append(r - 1)
        dd = []
        for d in dims:
            if d not in dd:
                dd.append(d)
        cands = []
        if r == 1:
            cands.append([0])
        else:
            pt = padt(sh, P.b[who])
            base = pt[P.defcode[who]]
            for a in dd:
                for b2 in dd:
                    if a != b2:
                        full = [a, b2] + [d for d in lay if d not in (a, b2)]
                        if pt[PIDX[r][tuple(full)]] <= 1.3 * base:
                            cands.append([a, b2])
            cands.append(lay)
        blocks = []
        for cd in cands:
            b = np.full(6, -1, dtype=np.float32)
            b[:len(cd)] = cd
            blocks.append(b)
        res.append((off, blocks))
    return res


def default_search_configs(rng, model, c):
    """a compiler-style local search around the default; returns (ncf, measured runtimes)."""
    nc = len(model.nci)
    cands = [default_candidates(model, j) for j in range(nc)]
    mutable = [j for j in range(nc) if cands[j]]
    base = np.full((nc, 18), -1, dtype=np.float32)
    confs = [base]
    meas = list(measure(rng, model.eval(base[None]))) if c > 0 else []
    while len(confs) < c:
        bs = min(max(48, c // 10), c - len(confs))
        order = np.argsort(np.array(meas))
        top = order[:max(4, len(order) // 4)]
        kids = []
        for _ in range(bs):
            u = rng.random()
            if u < 0.08 or not mutable:
                kids.append(confs[int(top[int(rng.integers(len(top)))])].copy())
                continue
            if rng.random() < 0.8:
                par = confs[int(top[int(rng.integers(len(top)))])]
            else:
                par = confs[int(rng.integers(len(confs)))]
            ch = par.copy()
            for _m in range(pick(rng, [1, 1, 1, 2, 2, 3])):
                j = mutable[int(rng.integers(len(mutable)))]
                off, blocks = cands[j][int(rng.integers(len(cands[j])))]
                if rng.random() < 0.25:
                    ch[j, off:off + 6] = -1
                else:
                    ch[j, off:off + 6] = blocks[int(rng.integers(len(blocks)))]
            kids.append(ch)
        rt = model.eval(np.stack(kids))
        confs.extend(kids)
        meas.extend(list(measure(rng, rt)))
    ncf = np.stack(confs[:c])
    meas = np.array(meas[:c], dtype=np.int64)
    perm = rng.permutation(c)
    return ncf[perm], meas[perm]


# --------------------------------------------------------------------------
# tile graphs
# --------------------------------------------------------------------------
ML_DIMS = [1, 2, 3, 4, 7, 8, 12, 14, 16, 28, 32, 56, 64, 96, 100, 128, 192, 196, 256, 384, 512, 768, 1000, 1024,
           2048, 3072, 4096]


def tile_shape(rng, rank):
    if rank == 4:
        N = pick(rng, [1, 2, 8, 16, 32, 64, 128])
        H = pick(rng, [7, 8, 14, 16, 28, 32, 56, 64, 112])
        C = pick(rng, [3, 16, 32, 64, 96, 128, 192, 256, 384, 512, 1024])
        return [N, H, H, C]
    if rank == 3:
        return [pick(rng, [1, 2, 4, 8, 16, 32]), pick(rng, [32, 64, 128, 256, 384, 512]),
                pick(rng, [64, 128, 256, 384, 512, 768, 1024, 3072])]
    if rank == 2:
        return [pick(rng, [1, 8, 16, 32, 64, 128, 256, 1000, 2048, 4096]),
                pick(rng, [10, 100, 128, 256, 512, 768, 1000, 1024, 2048, 4096, 6400])]
    return [pick(rng, [128, 256, 1000, 1024, 4096, 30522, 65536])]


def rand_lay(rng, r):
    u = rng.random()
    if u < 0.55:
        return rowmajor(r)
    if u < 0.85:
        return act_layout(r, 'batch2nd')
    return [int(v) for v in rng.permutation(r)]


def gen_tile_graph(rng, nrange):
    lo, hi = nrange
    target = int(rng.integers(lo, hi + 1))
    kind = pick(rng, ['ew', 'red', 'conv', 'dot', 'trans'], p=[.27, .2, .25, .15, .13])
    g = ModelBuilder(rng, style=pick(rng, ['rowmajor', 'batch2nd']))
    dt = pick(rng, [F32, BF16], p=[.6, .4])
    g.begin('fused')
    fparams = []

    def fparam(shape, dt_, lay=None):
        p = g.param(shape, dt_, lay=lay)
        fparams.append(p)
        return p

    def maybe_nested(x):
        if rng.random() < 0.5:
            return x
        g.begin('nested')
        q = g.param(x.shape, x.dt, lay=x.lay)
        y = g.add(pick(rng, [BITCAST, CONVERT]), x.shape, x.dt, [q], lay=x.lay)
        g.end(y)
        return g.add(FUSION, y.shape, y.dt, [y, x], lay=y.lay)

    def ew_chain(y, n_ops, params_ok=True):
        for _ in range(n_ops):
            u = rng.random()
            if u < 0.35:
                y = g.ew(pick(rng, [ADD, MUL, SUB, MAX]), y, g.scalar_bcast(y.shape, y.dt))
            elif u < 0.55:
                y = g.ew(pick(rng, [EXP, TANH, RSQRT, LOG, NEG, LOGISTIC, CONVERT]), y)
            elif u < 0.75 and params_ok:
                r = len(y.shape)
                if r >= 1:
                    d = int(rng.integers(r))
                    p = fparam([y.shape[d]], y.dt)
                    y = g.ew(pick(rng, [ADD, MUL]), y, g.bcast(p, y.shape, [d]))
                else:
                    y = g.ew(ADD, y, y)
            elif u < 0.85:
                m = g.ew(COMPARE, y, g.scalar_bcast(y.shape, y.dt))
                y = g.ew(SELECT, m, y, g.scalar_bcast(y.shape, y.dt))
            else:
                y = g.ew(MUL, y, y)
        return y

    outs_extra = []
    if kind == 'ew':
        r = pick(rng, [1, 2, 3, 4], p=[.1, .4, .2, .3])
        sh = tile_shape(rng, r)
        lay = rand_lay(rng, r)
        y = maybe_nested(fparam(sh, dt, lay))
        for _ in range(int(rng.integers(0, 3))):
            y = g.ew(pick(rng, [ADD, MUL, SUB, MAX]), y, maybe_nested(fparam(sh, dt, lay)))
        body = y
    elif kind == 'red':
        r = pick(rng, [2, 3, 4], p=[.5, .2, .3])
        sh = tile_shape(rng, r)
        lay = rand_lay(rng, r)
        x = maybe_nested(fparam(sh, dt, lay))
        x = ew_chain(x, int(rng.integers(1, 4)))
        u = rng.random()
        if u < 0.4:
            red = [r - 1]
        elif u < 0.8:
            red = list(range(r - 1))
        else:
            red = sorted(set(int(v) for v in rng.choice(r, size=int(rng.integers(1, r)), replace=False)))
        y = g.reduce(x, red)
        if rng.random() < 0.3:
            outs_extra.append(g.reduce(g.ew(MUL, x, x), red))
        body = y
    elif kind in ('conv', 'dot'):
        cdt = pick(rng, [BF16, F32], p=[.6, .4])
        if kind == 'conv':
            N = pick(rng, [1, 2, 8, 16, 32, 64, 128])
            H = pick(rng, [7, 8, 12, 14, 16, 28, 32, 56])
            Cin = pick(rng, [3, 16, 32, 64, 96, 128, 192, 256, 384, 512])
            Cout = pick(rng, [16, 32, 64, 128, 192, 256, 384, 512, 1024])
            k = pick(rng, [1, 3, 3, 5])
            stride = pick(rng, [1, 1, 2])
            x = maybe_nested(fparam([N, H, H, Cin], cdt, act_layout(4, g.style, N)))
            w = maybe_nested(fparam([k, k, Cin, Cout], cdt, rowmajor(4)))
            y = g.conv(x, w, stride)
        else:
            M = pick(rng, [8, 32, 64, 128, 256, 512, 1024, 2048, 4096])
            K = pick(rng, [64, 128, 256, 512, 768, 1000, 1024, 2048, 4096])
            Nn = pick(rng, [10, 64, 128, 256, 512, 768, 1000, 1024, 3072, 4096])
            if rng.random() < 0.3:
                Bb = pick(rng, [2, 4, 8, 12, 16])
                x = maybe_nested(fparam([Bb, M, K], cdt, rowmajor(3)))
                w = maybe_nested(fparam([Bb, K, Nn], cdt, rand_lay(rng, 3)))
            else:
                x = maybe_nested(fparam([M, K], cdt, rand_lay(rng, 2)))
                w = maybe_nested(fparam([K, Nn], cdt, rand_lay(rng, 2)))
            y = g.dot(x, w, 'kn')
        if rng.random() < 0.7:
            p = fparam([y.shape[-1]], y.dt)
            y = g.ew(ADD, y, g.bcast(p, y.shape, [len(y.shape) - 1]))
        if rng.random() < 0.6:
            y = g.ew(MAX, y, g.scalar_bcast(y.shape, y.dt))
        if rng.random() < 0.25:
            outs_extra.append(g.reduce(y, list(range(len(y.shape) - 1))))
        body = y
    else:
        r = pick(rng, [2, 3, 4], p=[.3, .3, .4])
        sh = tile_shape(rng, r)
        lay = rand_lay(rng, r)
        x = maybe_nested(fparam(sh, dt, lay))
        x = ew_chain(x, int(rng.integers(0, 3)))
        if rng.random() < 0.5:
            perm = [int(v) for v in rng.permutation(r)]
            if perm == list(range(r)):
                perm = perm[::-1]
            y = g.transpose(x, perm)
            y.lay = rowmajor(r)
        else:
            nl = rand_lay(rng, r)
            if nl == list(x.lay):
                nl = list(x.lay)[::-1]
            y = g.add(COPY, x.shape, x.dt, [x], lay=nl)
        body = y
    # epilogue filler up to the node target
    y = body
    guard = 0
    while g.count() + len(fparams) + 3 + 2 * len(outs_extra) < target and guard < 200:
        y = ew_chain(y, 1, params_ok=(kind != 'trans'))
        guard += 1
    if kind == 'trans' and y.lay != body.lay:
        y.lay = list(body.lay)
    if outs_extra:
        root = g.tuple_([y] + outs_extra)
    else:
        root = y
    g.end(root)
    outer = [g.param(p.shape, p.dt, lay=p.lay) for p in fparams]
    final = g.add(FUSION, root.shape, root.dt, [root] + outer, lay=root.lay, tup=root.a.get('tup', 0))
    return g.finalize(final)


# --------------------------------------------------------------------------
# tile law
# --------------------------------------------------------------------------
def _units(r):
    if r <= 1:
        return np.array([128.0])
    return np.array([1.0] * (r - 2) + [8.0, 128.0])


def _phys(P, i):
    r = P.rank[i]
    if r == 0:
        return [0], np.array([1.0])
    order = list(reversed(P.lay[i]))
    return order, np.array([float(P.shape[i][d]) for d in order])


def _runlen(e, Pv):
    """contiguous run (elements) of a tile in a buffer, dims major->minor."""
    r = e.shape[1]
    run = e[:, r - 1].copy()
    full = e[:, r - 1] >= Pv[r - 1]
    for k in range(r - 2, -1, -1):
        run = np.where(full, run * e[:, k], run)
        full = full & (e[:, k] >= Pv[k])
    return run


class TileSpace:
    def __init__(self, nf, op, ei):
        P = Parsed(nf, op, ei)
        self.P = P
        n = P.n
        final = n - 1
        root = P.ins[final][0] if (P.op[final] == FUSION and P.ins[final]) else final
        outs = [k for k in P.ins[root]] if P.op[root] == TUPLE else [root]
        outs = [k for k in outs if P.b[k] > 0] or [root]
        mx = [i for i in range(n) if P.op[i] in MXU_OPS and len(P.ins[i]) >= 2 and P.rank[i] >= 1
              and P.rank[P.ins[i][0]] >= 1 and P.rank[P.ins[i][1]] >= 1]
        reds = [i for i in range(n) if P.op[i] == REDUCE and P.reduce_input(i) >= 0
                and P.rank[P.reduce_input(i)] > P.rank[i]]
        trs = [i for i in range(n) if P.op[i] in (TRANSPOSE, COPY) and P.ins[i]]
        big_out = max(outs, key=lambda k: (P.vol[k], -k))
        self.mode = 'ew'
        if mx:
            a = max(mx, key=lambda i: (P.vol[i] * P.vol[P.ins[i][0]], i))
            self.mode = 'mxu'
        elif reds and max(P.vol[P.reduce_input(i)] for i in reds) > P.vol[big_out]:
            rn = max(reds, key=lambda i: (P.vol[P.reduce_input(i)], i))
            a = P.reduce_input(rn)
            self.mode = 'red'
            self.red_node = rn
        else:
            a = big_out
            if trs:
                t = trs[-1]
                if P.shape[t] == P.shape[a] and P.rank[P.ins[t][0]] == P.rank[t] and P.rank[t] >= 1:
                    self.mode = 'trans'
                    self.tnode = t
        self.anchor = a
        self.order, self.Pv = _phys(P, a)
        self.r = len(self.Pv)
        self.u = _units(self.r)
        self.cap = np.ceil(self.Pv / self.u)
        vol_a = float(P.vol[a])
        # streams
        self.Bin, self.small = 0.0, []
        for i in range(n):
            if P.op[i] == PARAM and P.b[i] > 0 and any(P.op[u] != FUSION for u in P.users[i]):
                if P.vol[i] >= 0.5 * vol_a:
                    self.Bin += P.b[i]
                else:
                    self.small.append((float(P.vol[i]), float(P.b[i])))
        self.Bout = sum(P.b[k] for k in outs if P.vol[k] >= 0.5 * vol_a) or float(P.b[big_out])
        self.w_ops = sum(EW_WEIGHT.get(P.op[i], 1.0) for i in range(n) if P.op[i] in EW_OPS) \
            + 0.3 * sum(1 for i in range(n) if P.op[i] == BCAST) + sum(1.0 for i in reds)
        self.bmax = float(max([P.b[a], 1] + [b for _, b in self.small]))
        if self.mode == 'red':
            red = P.reduce_dims(self.red_node, a)
            self.rpos = [k for k, d in enumerate(self.order) if d in red]
            self.Bout = float(P.b[self.red_node])
        if self.mode == 'trans':
            t = self.tnode
            x = P.ins[t][0]
            rr = P.rank[t]
            if P.op[t] == TRANSPOSE:
                perm = [int(v) for v in P.attr_dims[t, :rr]]
                if sorted(perm) != list(range(rr)):
                    perm = list(range(rr))
            else:
                perm = list(range(rr))
            # output logical dim i <-> input logical dim perm[i]
            pos_out = {d: k for k, d in enumerate(self.order)}
            in_order = list(reversed(P.lay[x]))
            inv = {perm[i]: i for i in range(rr)}
            self.in_map = [pos_out[inv[j]] for j in in_order]
            self.Pin = np.array([float(P.shape[x][j]) for j in in_order])
            self.bin_t = float(P.b[x])
            self.xpose = in_order[-1] != perm[self.order[-1]]
        if self.mode == 'mxu':
            self._mxu_setup(a)

    def _mxu_setup(self, v):
        P = self.P
        nf = P.nf
        l, k = P.ins[v][0], P.ins[v][1]
        sl, sk, so = P.shape[l], P.shape[k], P.shape[v]
        self.spatial = []
        if P.op[v] == CONV:
            kd, rkd, rnd, ond = int(nf[v, 94]), int(nf[v, 99]), int(nf[v, 100]), int(nf[v, 106])
            ob = int(nf[v, 105])
            fgc = max(int(nf[v, 107]), 1)
            nsp = max(len(sl) - 2, 0)
            ksp = [int(x) for x in nf[v, 101:101 + nsp]]
            osp = [d for d in range(len(so)) if d not in (ob, ond)]
            for q, d in enumerate(osp[:nsp]):
                self.spatial.append((d, max(float(nf[v, 37 + q]), 1.0), max(float(nf[v, 45 + q]), 1.0)))
            K = sl[min(kd, len(sl) - 1)] / fgc
        else:
            rl, rk, ro = len(sl), len(sk), len(so)
            nb = 0
            while nb < min(rl, rk, ro) - 2 and sl[nb] == sk[nb] == so[nb]:
                nb += 1
            Bv = float(np.prod(so[:nb])) if nb else 1.0
            K = max(round(math.sqrt(P.vol[l] * P.vol[k] / (P.vol[v] * Bv))), 1)
            N = so[-1]
            ond = ro - 1
            kd = next((d for d in range(rl - 1, nb - 1, -1) if sl[d] == K), rl - 1)
            order = [rk - 2, rk - 1] + list(range(nb, rk - 2))
            rkd = next((d for d in order if d >= nb and sk[d] == K), max(rk - 2, 0))
            rnd = next((d for d in range(rk - 1, nb - 1, -1) if d != rkd and sk[d] == N), rk - 1)
            ksp = []
        ond = min(ond, len(so) - 1)
        self.K = float(K)
        self.N = float(so[ond])
        self.npos = self.order.index(ond)
        self.korder, self.Pk = _phys(P, k)
        self.rk = len(self.Pk)
        self.uk = _units(self.rk)
        self.capk = np.ceil(self.Pk / self.uk)
        roles = []
        for d in self.korder:
            if d == rkd:
                roles.append('K')
            elif d == rnd:
                roles.append('N')
            elif d in ksp:
                roles.append('W')
            else:
                roles.append('B')
        self.kroles = roles
        self.Wtot = float(np.prod([self.Pk[q] for q, ro_ in enumerate(roles) if ro_ == 'W'])) if 'W' in roles else 1.0
        self.bl, self.bk, self.bo = float(P.b[l]), float(P.b[k]), float(P.b[v])
        self.passes = 3.0 if (P.dti[l] == F32 or P.dti[k] == F32) else (1.0 if P.dti[l] in (BF16, F16) else 2.0)
        lo, _ = _phys(P, l)
        self.l_kminor = (lo[-1] == kd)
        self.k_minor_role = roles[-1]
        self.epi = sum(EW_WEIGHT.get(P.op[i], 1.0) for i in range(P.n) if P.op[i] in EW_OPS and i > v)

    # ---------------------------------------------------------------
    def extents(self, cfg):
        r = self.r
        ob = np.asarray(cfg[:, 8:8 + r], dtype=np.float64)
        if ob.shape[1] < r:
            ob = np.concatenate([ob, np.zeros((ob.shape[0], r - ob.shape[1]))], 1)
        ob = np.where(ob < 1, self.cap, np.minimum(ob, self.cap))
        return ob * self.u

    def kextents(self, cfg):
        rk = self.rk
        kb = np.asarray(cfg[:, 0:rk], dtype=np.float64)
        kb = np.where(kb < 1, self.capk, np.minimum(kb, self.capk))
        return kb * self.uk

    def eval(self, cfg, want_ws=False):
        cfg = np.asarray(cfg, dtype=np.float64)
        c = cfg.shape[0]
        e = self.extents(cfg)
        G = np.ceil(self.Pv / e)
        steps = G.prod(1)
        te = e.prod(1)
        if self.mode == 'mxu':
            return self._eval_mxu(cfg, e, G, want_ws)
        small = np.zeros(c)
        for vol, b in self.small:
            small += np.minimum(vol, te) * b
        run_out = _runlen(e, self.Pv) * self.bmax
        eff_out = run_out / (run_out + RUN0)
        if self.mode == 'trans':
            ein = e[:, self.in_map]
            run_in = _runlen(ein, self.Pin) * self.bin_t
            eff_in = run_in / (run_in + RUN0)
            t_in = (te * self.bin_t + small) / (HBM_BW * eff_in) * 1e9
            t_dma = t_in + te * self.Bout / (HBM_BW * eff_out) * 1e9
            t_cmp = te * self.w_ops / VPU_RATE * 1e9 + (te / 1024.0 * 6.0 / CLOCK * 1e9 if self.xpose else 0.0)
            ws = 2 * te * (self.bin_t + self.Bout) + small
            extra = 0.0
        elif self.mode == 'red':
            R = self.rpos
            red_ext = e[:, R].prod(1) if R else np.ones(c)
            out_te = te / red_ext
            t_in = (te * self.Bin + small) / (HBM_BW * eff_out) * 1e9
            t_dma = t_in + out_te * self.Bout / HBM_BW * 1e9
            lane = (self.r - 1) in R
            sub = (self.r - 2) in R and self.r >= 2
            t_cmp = te * self.w_ops / VPU_RATE * 1e9 + (te / 1024.0 * 8.0 / CLOCK * 1e9 if lane else 0.0) \
                + (te / 1024.0 * 2.0 / CLOCK * 1e9 if sub else 0.0)
            split = (G[:, R] > 1).any(1) if R else np.zeros(c, bool)
            extra = np.where(split, 2 * out_te * 4.0 / HBM_BW * 1e9 + 60.0, 0.0)
            ws = 2 * te * self.Bin + 2 * out_te * max(self.Bout, 4.0) + small
        else:
            t_in = (te * self.Bin + small) / (HBM_BW * eff_out) * 1e9
            t_dma = t_in + te * self.Bout / (HBM_BW * eff_out) * 1e9
            t_cmp = te * self.w_ops / VPU_RATE * 1e9
            ws = 2 * te * (self.Bin + self.Bout) + small
            extra = 0.0
        over = ws > VMEM
        step = np.where(over, t_dma + t_cmp + 2 * STEP_OVH, smax(t_dma, t_cmp) + STEP_OVH) + extra
        total = TILE_LAUNCH + steps * step + t_in
        return (total, ws) if want_ws else total

    def _eval_mxu(self, cfg, e, G, want_ws):
        c = cfg.shape[0]
        ek = self.kextents(cfg)
        roles = self.kroles
        def kprod(role):
            idx = [q for q, ro_ in enumerate(roles) if ro_ == role]
            return ek[:, idx].prod(1) if idx else None
        Kt = kprod('K')
        Kt = np.minimum(Kt, self.K) if Kt is not None else np.full(c, self.K)
        Nk = kprod('N')
        Nt = np.minimum(e[:, self.npos], Nk if Nk is not None else np.inf)
        Nt = np.minimum(Nt, math.ceil(self.N / 128.0) * 128.0 if self.npos == self.r - 1 else self.N)
        Wt = kprod('W')
        Wt = np.minimum(Wt, self.Wtot) if Wt is not None else np.full(c, self.Wtot)
        mpos = [q for q in range(self.r) if q != self.npos]
        m_t = e[:, mpos].prod(1) if mpos else np.ones(c)
        G_M = G[:, mpos].prod(1) if mpos else np.ones(c)
        G_N = np.ceil(self.N / Nt)
        G_K = np.ceil(self.K / Kt)
        G_W = np.ceil(self.Wtot / Wt)
        steps = G_M * G_N * G_K * G_W
        halo = np.ones(c)
        for d, w, st in self.spatial:
            if d in self.order:
                q = self.order.index(d)
                halo *= ((e[:, q] - 1) * st + w) / (e[:, q] * st)
        act = m_t * np.minimum(halo, 4.0) * Kt * self.bl
        wt = Kt * Wt * Nt * self.bk
        out = m_t * Nt * self.bo
        kw = G_K * G_W
        act_f = G_M * kw * np.where(kw > 1, G_N, 1.0)
        w_f = G_N * kw * np.where(G_N * kw > 1, G_M, 1.0)
        run_a = (Kt if self.l_kminor else np.full(c, 128.0)) * self.bl
        run_w = (Nt if self.k_minor_role == 'N' else (Kt if self.k_minor_role == 'K' else np.full(c, 128.0))) * self.bk
        run_o = _runlen(e, self.Pv) * self.bo
        ea, ew_, eo = run_a / (run_a + RUN0), run_w / (run_w + RUN0), run_o / (run_o + RUN0)
        dma_tot = (act * act_f / ea + wt * w_f / ew_ + out * G_M * G_N / eo) / HBM_BW * 1e9
        cyc = np.ceil(Kt / 128.0) * Wt * np.ceil(Nt / 128.0) * (m_t + 128.0) * self.passes / N_MXU
        mxu = cyc / CLOCK * 1e9
        dma = dma_tot / steps
        acc = np.where(kw > 1, m_t * Nt * 4.0, 0.0)
        ws = 2 * (act + wt + out) + acc
        over = ws > VMEM
        step = np.where(over, (mxu + dma) * 1.15 + 2 * STEP_OVH, smax(mxu, dma) + STEP_OVH)
        epi = G_M * G_N * m_t * Nt * (self.epi + 1.0) / VPU_RATE * 1e9
        total = TILE_LAUNCH + steps * step + (act + wt) / HBM_BW * 1e9 + epi
        return (total, ws) if want_ws else total


def tile_noiseless(arrs):
    sp = TileSpace(arrs['node_feat'], arrs['node_opcode'], arrs['edge_index'])
    return sp.eval(arrs['config_feat'])


# --------------------------------------------------------------------------
# tile config sampler
# --------------------------------------------------------------------------
def _cands(cap):
    cap = int(cap)
    s = {1, cap}
    v = 1
    while v <= cap:
        s.add(v)
        if 3 * v // 2 <= cap:
            s.add(3 * v // 2)
        v *= 2
    for d in range(1, int(math.isqrt(cap)) + 1):
        if cap % d == 0:
            s.add(d)
            s.add(cap // d)
    return sorted(x for x in s if 1 <= x <= cap)


def _pow2_le(x):
    return 1 << (int(x).bit_length() - 1) if x >= 1 else 1


def _div_le(cap, lim):
    """largest divisor of cap not above lim; a power of two when no divisor comes close."""
    cap = int(cap)
    lim = int(max(1, min(cap, lim)))
    best = 1
    for d in range(1, int(math.isqrt(cap)) + 1):
        if cap % d == 0:
            for q in (d, cap // d):
                if best < q <= lim:
                    best = q
    return best if 2 * best > lim else _pow2_le(lim)


def tile_default(sp):
    """the compiler's heuristic: divisor-friendly tiles grown up to a byte budget."""
    r = sp.r
    t = np.ones(r)
    cap = sp.cap
    mxu = sp.mode == 'mxu'
    per = sp.bo if mxu else sp.bmax
    budget = 2 * 2 ** 20
    order = list(range(r - 1, -1, -1))
    if mxu:
        t[sp.npos] = _div_le(cap[sp.npos], 4 if sp.npos == r - 1 else 512)
        order = [q for q in order if q != sp.npos]
    for q in order:
        cur = float(np.prod(t * sp.u)) * per
        room_ = max(budget / cur, 1.0)
        lim = room_
        if q == r - 1:
            lim = min(room_, 16)
        elif q == r - 2:
            lim = min(room_, 64)
        t[q] = _div_le(cap[q], lim)
    kb = np.zeros(6)
    if mxu:
        tk = np.ones(sp.rk)
        for q, ro_ in enumerate(sp.kroles):
            if ro_ == 'K':
                tk[q] = _div_le(sp.capk[q], max(2048 / sp.uk[q], 1))
            elif ro_ == 'N':
                tk[q] = min(sp.capk[q], max(1, int(t[sp.npos] * sp.u[sp.npos] / sp.uk[q])))
            else:
                tk[q] = sp.capk[q]
        kb[:sp.rk] = tk
    ob = np.zeros(6)
    ob[:r] = t
    return kb, ob


def tile_config_row(kb, ob, rk, r):
    row = np.zeros(24, dtype=np.float32)
    if rk > 0 and kb[:rk].any():
        row[0:6] = kb
        row[6] = kb[:rk].sum()
        row[7] = float(np.prod(kb[:rk]))
    row[8:14] = ob
    row[14] = ob[:r].sum()
    row[15] = float(np.prod(ob[:r]))
    return row


def tile_configs(rng, sp, c):
    r = sp.r
    rk = sp.rk if sp.mode == 'mxu' else 0
    kb0, ob0 = tile_default(sp)
    default = tile_config_row(kb0, ob0, rk, r)
    oc = [_cands(x) for x in sp.cap]
    kc = [_cands(x) for x in sp.capk] if rk else []
    rows, seen = [default], {default.tobytes()}
    tries = 0
    while len(rows) < c and tries < 30:
        tries += 1
        m = 4 * c
        ob = np.zeros((m, 6))
        kb = np.zeros((m, 6))
        for k in range(r):
            ob[:, k] = np.array(oc[k])[rng.integers(len(oc[k]), size=m)]
        local = rng.random(m) < 0.3
        ob[local, :r] = np.where(rng.random((int(local.sum()), r)) < 0.6, ob0[:r], ob[local, :r])
        for k in range(rk):
            kb[:, k] = np.array(kc[k])[rng.integers(len(kc[k]), size=m)]
        cand = np.stack([tile_config_row(kb[q], ob[q], rk, r) for q in range(m)])
        _, ws = sp.eval(cand, want_ws=True)
        for q in np.nonzero(ws <= VMEM_HARD)[0]:
            key = cand[q].tobytes()
            if key in seen:
                continue
            seen.add(key)
            rows.append(cand[q])
            if len(rows) >= c:
                break
    rows = np.stack(rows)
    n = len(rows)
    if n > 3:
        dup = np.nonzero(rng.random(n) < 0.02)[0]
        dup = dup[dup >= 2]
        if len(dup):
            rows[dup] = rows[1 + rng.integers(n - 1, size=len(dup)) % (n - 1)]
    perm = rng.permutation(len(rows))
    rows = rows[perm]
    dflt = int(np.nonzero(perm == 0)[0][0])
    return rows, dflt


# --------------------------------------------------------------------------
# dataset writer
# --------------------------------------------------------------------------
SCALES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  layout=(16, 6, 4), lay_nodes=(200, 1500), lay_cfgnodes=(20, 120), lay_cfg=(300, 3000),
                  lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 layout=(4, 2, 2), lay_nodes=(40, 150), lay_cfgnodes=(5, 20), lay_cfg=(30, 200),
                 lay_test_cfg=(30, 60)),
}
SPLITS = ('train', 'valid', 'test')
XLA_MODELS = ['resnet50', 'resnet_v1_101', 'inception_v3', 'mobilenet_v2', 'efficientnet_b0', 'unet_3d', 'unet2d',
              'vgg16', 'alexnet', 'retinanet', 'densenet121', 'shufflenet_v2', 'mnasnet_a1', 'xception',
              'mask_rcnn', 'spinenet49', 'resnet_rs', 'nasnet_mobile']
NLP_MODELS = ['bert_pretraining', 'bert_classifier', 'albert_en_base', 'electra_small', 't5_small', 't5_base',
              'gpt2_medium', 'transformer_xl', 'funnel_transformer', 'mobilebert', 'talking_heads', 'roberta_base',
              'xlnet_base', 'small_bert_l4', 'expert_bert', 'lambert_en']


def graph_rng(seed, coll, split, gi):
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, zlib.crc32(coll.encode()), SPLITS.index(split), gi, 8])


def signed_hex(rng):
    v = int(rng.integers(0, 2 ** 63 - 1))
    return ('-' if rng.random() < 0.5 else '') + format(v, 'x')


def make_stem(rng, coll, split, used, meta=None):
    meta = meta or {}
    train = meta.get('training', rng.random() < 0.5)
    for _ in range(100):
        if split == 'test':
            stem = ''.join(format(int(x), 'x') for x in rng.integers(0, 16, size=32))
        elif coll.startswith('layout:nlp'):
            stem = '%s_%s.%dx%d.%s' % (pick(rng, NLP_MODELS),
                                       pick(rng, ['pretraining', 'finetune']) if train else 'inference',
                                       pick(rng, [2, 4, 8]), pick(rng, [2, 4, 8, 16]),
                                       pick(rng, ['fp16', 'bf16', 'fp32']))
            if stem in used:
                stem += '_' + format(int(rng.integers(0, 2 ** 31)), 'x')
        else:
            models = NLP_MODELS if meta.get('family') == 'transformer' else XLA_MODELS
            stem = '%s_%s_batch_%d_%s' % (pick(rng, models), 'train' if train else 'inference',
                                          pick(rng, [1, 8, 16, 32, 64, 128]), signed_hex(rng))
        if stem not in used:
            used.add(stem)
            return stem
    raise RuntimeError('stem collision')


def save_npz(path, arrs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrs)


def save_noiseless(root, rel_npz, vals):
    p = os.path.join(root, 'noiseless', rel_npz[:-4] + '.npy')
    os.makedirs(os.path.dirname(p), exist_ok=True)
    np.save(p, np.asarray(vals, dtype=np.float64))


def build_tile(rng, sc, split):
    lo, hi = sc['tile_nodes']
    best = None
    for attempt in range(12):
        a = gen_tile_graph(rng, sc['tile_nodes'])
        n = len(a['node_opcode'])
        if not lo <= n <= hi:
            continue
        sp = TileSpace(a['node_feat'], a['node_opcode'], a['edge_index'])
        c = int(rng.integers(sc['tile_cfg'][0], sc['tile_cfg'][1] + 1))
        cfg, dflt = tile_configs(rng, sp, c)
        if best is None or len(cfg) > len(best[2]):
            best = (a, sp, cfg, dflt)
        if len(cfg) >= sc['tile_cfg'][0]:
            break
    a, sp, cfg, dflt = best
    true = sp.eval(cfg)
    arrs = dict(node_feat=a['node_feat'], node_opcode=a['node_opcode'], edge_index=a['edge_index'],
                config_feat=cfg.astype(np.float32))
    if split == 'test':
        arrs['config_runtime'] = np.zeros(len(cfg), dtype=np.int64)
        arrs['config_runtime_normalizers'] = np.ones(len(cfg), dtype=np.int64)
        return arrs, None
    meas = measure(rng, true)
    arrs['config_runtime'] = meas
    arrs['config_runtime_normalizers'] = np.full(len(cfg), meas[dflt], dtype=np.int64)
    return arrs, true


def build_layout(rng, sc, coll, split):
    source, search = coll.split(':')[1:]
    a = gen_layout_graph(rng, source, sc['lay_nodes'], sc['lay_cfgnodes'])
    meta = a.pop('_meta')
    model = LayoutModel(a['node_feat'], a['node_opcode'], a['edge_index'], a['node_config_ids'])
    rngc = sc['lay_test_cfg'] if split == 'test' else sc['lay_cfg']
    c = int(rng.integers(rngc[0], rngc[1] + 1))
    if search == 'random':
        ncf = random_layout_configs(rng, model, c)
        true = np.concatenate([model.eval(ncf[s:s + 512]) for s in range(0, c, 512)])
        meas = measure(rng, true)
    else:
        ncf, meas = default_search_configs(rng, model, c)
        true = np.concatenate([model.eval(ncf[s:s + 512]) for s in range(0, c, 512)])
    arrs = dict(node_feat=a['node_feat'], node_opcode=a['node_opcode'], edge_index=a['edge_index'],
                node_config_feat=ncf.astype(np.float32), node_splits=a['node_splits'],
                node_config_ids=a['node_config_ids'], config_runtime=meas.astype(np.int64))
    arrs['_meta'] = meta
    if split == 'test':
        arrs['config_runtime'] = np.zeros(c, dtype=np.int64)
        return arrs, None
    return arrs, true


def job_list(scale, factor):
    sc = SCALES[scale]
    cnt = lambda k: max(1, int(round(k * factor)))
    jobs = []
    for si, split in enumerate(SPLITS):
        for gi in range(cnt(sc['tile'][si])):
            jobs.append(('tile:xla', split, gi))
    for coll in ('layout:xla:default', 'layout:xla:random', 'layout:nlp:default', 'layout:nlp:random'):
        for si, split in enumerate(SPLITS):
            for gi in range(cnt(sc['layout'][si])):
                jobs.append((coll, split, gi))
    return jobs


def run_job(args):
    root, seed, scale, coll, split, gi = args
    sc = SCALES[scale]
    rng = graph_rng(seed, coll, split, gi)
    if coll == 'tile:xla':
        arrs, true = build_tile(rng, sc, split)
    else:
        arrs, true = build_layout(rng, sc, coll, split)
    return coll, split, gi, rng.bit_generator.state['state']['state'] % (2 ** 61), arrs, true


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=sorted(SCALES), default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    ap.add_argument('--workers', type=int, default=2)
    a = ap.parse_args(argv)
    t0 = time.time()
    jobs = [(a.out, a.seed, a.scale, c, s, g) for c, s, g in job_list(a.scale, a.graphs_factor)]
    # heavy jobs first for a better balance
    jobs.sort(key=lambda j: (j[3] == 'tile:xla', j[4] == 'test'))
    used = {}
    count = 0

    def write(res):
        coll, split, gi, _, arrs, true = res
        parts = coll.split(':')
        sub = os.path.join('npz', parts[0], *parts[1:], split)
        names = used.setdefault((coll, split), set())
        srng = np.random.default_rng([int(a.seed) & 0xFFFFFFFF, zlib.crc32(coll.encode()), SPLITS.index(split), gi, 9])
        meta = arrs.pop('_meta', None)
        stem = make_stem(srng, coll, split, names, meta)
        rel = os.path.join(sub, stem + '.npz')
        save_npz(os.path.join(a.out, rel), arrs)
        if true is not None:
            save_noiseless(a.out, rel, true)

    if a.workers > 1:
        import multiprocessing as mp
        with mp.get_context('fork').Pool(a.workers) as pool:
            for res in pool.imap(run_job, jobs, chunksize=1):
                write(res)
                count += 1
    else:
        for j in jobs:
            write(run_job(j))
            count += 1
    print('wrote %d graphs to %s in %.1fs' % (count, a.out, time.time() - t0))


if __name__ == '__main__':
    main()
