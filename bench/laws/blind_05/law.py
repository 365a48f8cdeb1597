#!/usr/bin/env python3
"""blind_05: a synthetic TPU runtime law, written without knowledge of the tool under test.

Usage:  python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Writes a TpuGraphs-format dataset root (five collections x train/valid/test) and, for every
labeled file, ROOT/noiseless/<relpath>.npy: the noise-free runtime (float64, one per config;
for tile the noise-free config_runtime in ns, before normalisation).

=====================================================================================
THE LAW (full description, for auditors; not for the tool's side)
=====================================================================================
Graphs (our own sampler). Layout graphs are unfused HLO-like modules: vision nets for the
xla collections (ResNet/VGG/MobileNet/Inception/U-Net-like, 2-D NHWC or 3-D NDHWC) and
transformers for nlp (embedding gather, attention with reshapes/transposes/batch dots,
MLP, LM head), as inference or as training steps (a reverse-mode differentiator emits the
backward pass, optional all-reduces, momentum/Adam updates). Reducers and while loops are
called computations placed before the main computation; each while body/cond closes a
node_splits segment; the main computation ends in a root tuple. Configurable nodes are
convolutions, dots, reshapes and transposes of the main computation (heavy ones first,
then the largest reshapes/transposes). Tile graphs are single fused kernels (conv, dot,
elementwise loop, reduction, copy/transpose) with an epilogue, outer params + a fusion node.

Everything the law uses is read back from the file's arrays: shapes, element types,
opcodes, operand order (= edge_index row order per consumer), `dimensions`, window and
convolution dimension numbers, default layouts (cols 134-139; zero -> row-major), the
configurable ids and the config features. Operands of dots are canonical
[B..,M,K] x [B..,K,N].

Layout law (ns):
 * Tiled storage: the two most-minor dims are padded to (sublane, 128 lanes), sublane =
   8 x (4 / element bytes); lane waste capped 8x, sublane waste 4x, product 16x.
 * Resolution. Output block: all -1 -> node default; a prefix -> prefix then the other dims
   in default order. Input/kernel block (operands 0/1): all -1 -> whatever the producer
   provides; a prefix -> only the prefix is required, the rest keeps the producer's order.
   Non-configurable ops propagate: elementwise ops take the layout of their first
   same-shape operand whose producer is not broadcast/constant/iota/rng (those are
   "flexible": rematerialised in any layout for free); slice/pad/concat/reduce-window/
   select-and-scatter/all-reduce/... follow operand 0; reduce keeps the operand's relative
   order of surviving dims; a non-configurable transpose becomes a free bitcast; anything
   else takes its default.
 * Copies: when a consumer requires a layout different from what a non-flexible producer
   gives (input/kernel prefixes, other same-rank operands of elementwise/follow ops, root
   tuple operands which need their default), one copy per producer and distinct target
   layout: (src + dst padded bytes)/BW x {0.45 if the two minor dims are unchanged, 0.9 if
   only the sublane dim changes, 1.6 if the lane dim changes} + 1 us. Copies feeding a
   compute-bound conv/dot hide behind up to 45% of its compute slack.
 * Convolution: FLOPs = 2|out| kernel[in-feature] prod(kernel spatial); MXU efficiency =
   fill128(Cin)^0.5 fill128(Cout) fill_sub(out sublane dim)^0.3 x kernel factor (1.0 if the
   kernel's lane/sublane dims are (out-feature, in-feature), 0.96 swapped, 0.9 if only the
   lane dim is a feature dim, else 0.75 plus a 2x kernel relayout); depthwise/batch-grouped
   convs run on the VPU (x2.5 if the output lane dim is not the feature dim). Input whose
   lane dim is not its feature dim: +1.5 x padded input/BW; output lane dim not the output
   feature: +1.3 x padded output/BW. time = max(C, M) + 0.15 min(C, M) + relayouts, M = padded
   bytes of input, kernel and output / BW (BW 1200 B/ns; peak 197 TFLOP/s bf16, 1/4 f32).
 * Dot: lhs lane dim K best, M -> x0.9 efficiency, else +1.5 x lhs/BW; rhs lane N best,
   K -> x0.95, else +1.5 x rhs/BW; output lane N best, M -> +0.8 x out/BW, else +1.5x.
   Same roofline combination.
 * Configurable reshape: free iff both layouts are row-major, lane dims equal in size and
   sublane dims equal or both tile-aligned; else (in + out padded)/BW x (0.9 if the lane size
   is kept, else 1.6) + 1 us. Transpose: free iff perm[out_layout[j]] == in_layout[j] for all
   j; else (in + out padded)/BW x (0.8 if the lane dim is kept, else 1.7) + 1 us.
 * Fused memory-bound ops pay raw bytes + 30% of the padding waste: elementwise 0.3 x (out +
   same-shape operands)/BW (x1.3 transcendental); reduce 0.45 x input/BW x (1.7 if a reduced
   dim is the lane dim, 1.25 if the sublane dim); reduce-window/select-and-scatter 0.3 x
   (in+out)/BW x1.5 when the window spans the lane dim; concatenate 0.3 x (ins+out)/BW x1.6
   along an unaligned lane dim; all-reduce padded/90 B/ns; fixed per-op overheads; +120 us per
   program.
Config sampling: `random` collections draw per config a random subset of nodes and random
(full or two-minor-dim) layouts biased to feature dims, plus the default and ~5%
re-measurements; `default` collections run a compiler-like local search from the default
(explicit or all -1), mutating 1-4 blocks per child, parents by tournament on noisy
measurements, children screened by a noisy cost model (the law +-3%), 10% re-measurements.
Tile law (per fused kernel). Output bounds = tile extent per output dim, in units of 128 on
the output's lane dim and 8 on its sublane dim; conv kernel bounds = (taps per spatial dim,
Cin/8, Cout/128); dot kernel bounds = (K/8, N/128); reduction kernel bounds = chunk of each
reduced dim (same units in the input's layout). Runtime = steps x (max(compute, memory) +
0.1 min + 350 ns) + pipeline fill, where steps = output tiles x K-chunks x N-passes (x tap
chunks); memory = tile bytes / (BW x DMA efficiency run/(run+2 KiB)) with halos for conv and
lhs/rhs re-reads per output tile; compute = MXU flops / (peak x fill of the tile dims) + VPU
epilogue (transcendentals x3) + XLU for cross-lane reductions/transposes; a VMEM footprint
(double-buffered tiles + f32 accumulator) above 16 MiB multiplies memory time by
1 + 2 x overflow. The autotuner never tries tiles under min(output, 128 KiB) nor ones its
model predicts > 30x its best; the compiler default is the argmin of the law x lognormal
(sigma 0.15) over the candidate space, and the normaliser is its measured runtime.
Noise (stored runtimes only): lognormal jitter with sigma ~ U(0.05%, 0.3%) per graph, plus
0.5% slow outliers x (1 + min(25%, 1% x Pareto(2)+1%)); rounded to int64 >= 1.
"""
import argparse
import itertools
import math
import os
import sys
import time
from functools import lru_cache

import numpy as np

# ----------------------------------------------------------------------------------------
# HLO opcode ids (tpu_graphs hlo_opcode.h) and primitive types (featurizers.h order)
# ----------------------------------------------------------------------------------------
O = dict(
    abs=1, add=2, all_reduce=5, atan2=7, bitcast_convert=12, broadcast=13, ceil=15,
    clamp=17, compare=20, concatenate=22, constant=24, convert=25, convolution=26, copy=27,
    cosine=30, custom_call=31, divide=32, dot=34, dynamic_slice=35, dynamic_update_slice=36,
    exponential=37, floor=40, fusion=41, gather=42, get_tuple_element=45, iota=48, log=50,
    log1p=51, and_=52, not_=53, or_=54, maximum=57, minimum=58, multiply=59, negate=60,
    pad=62, parameter=63, power=66, reduce=70, reduce_window=72, replica_id=74,
    reshape=75, reverse=76, rng=77, rsqrt=81, scatter=82, select=83,
    select_and_scatter=84, shift_left=87, shift_right_logical=89, sign=90, slice=92,
    sort=93, sqrt=94, subtract=95, tanh=96, transpose=98, tuple=100, while_=102,
    all_gather=104, logistic=107)

# element type index in the one-hot block (column 2 + index)
ET = dict(invalid=0, pred=1, s8=2, s16=3, s32=4, s64=5, u8=6, u16=7, u32=8, u64=9, f16=10,
          f32=11, f64=12, bf16=13, c64=14, c128=15, tuple=16, opaque=17, token=18)
ET_BYTES = np.array([4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8, 16, 0, 0, 0], dtype=np.int64)

ELEMENTWISE = {1, 2, 7, 12, 15, 17, 19, 20, 25, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53, 54,
               55, 57, 58, 59, 60, 65, 66, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94, 95,
               96, 103, 107, 118, 119, 120}
TRANSCENDENTAL = {7, 30, 32, 37, 38, 50, 51, 66, 81, 91, 94, 96, 103, 107, 120}
FOLLOW0 = {5, 18, 22, 27, 35, 36, 62, 72, 76, 84, 92, 93, 104, 111}
FLEXIBLE = {13, 24, 48, 77}
CONFIGURABLE_OPS = {26, 34, 75, 98}


# ----------------------------------------------------------------------------------------
# A small HLO module builder
# ----------------------------------------------------------------------------------------
class Node:
    __slots__ = ('op', 'et', 'shape', 'layout', 'tsize', 'pnum', 'dims', 'win', 'cdn', 'fgc',
                 'bgc', 'slc', 'dyn', 'padc', 'root', 'stable', 'ops', 'calls', 'id', 'rg',
                 'meta', 'cfg')

    def __init__(self, op, et, shape, ops=(), **kw):
        self.op = op
        self.et = et
        self.shape = tuple(int(s) for s in shape)
        self.ops = list(ops)
        self.layout = kw.get('layout', 'default')
        self.tsize = kw.get('tsize', 0)
        self.pnum = kw.get('pnum', 0)
        self.dims = list(kw.get('dims', ()))
        self.win = kw.get('win', None)
        self.cdn = kw.get('cdn', None)
        self.fgc = kw.get('fgc', 0)
        self.bgc = kw.get('bgc', 0)
        self.slc = kw.get('slc', None)
        self.dyn = kw.get('dyn', None)
        self.padc = kw.get('padc', None)
        self.root = 0
        self.stable = kw.get('stable', 0)
        self.calls = list(kw.get('calls', ()))
        self.id = -1
        self.rg = any(getattr(o, 'rg', False) for o in self.ops)
        self.meta = kw.get('meta', None)
        self.cfg = False

    @property
    def rank(self):
        return len(self.shape)

    def nelem(self):
        return int(np.prod(self.shape)) if self.shape else 1


def win_dims(sizes, strides=None, pads=None, wdil=None, bdil=None, rev=None):
    r = len(sizes)
    strides = strides or [1] * r
    pads = pads or [(0, 0)] * r
    wdil = wdil or [1] * r
    bdil = bdil or [1] * r
    rev = rev or [0] * r
    return [dict(size=sizes[i], stride=strides[i], pl=pads[i][0], ph=pads[i][1],
                 wd=wdil[i], bd=bdil[i], rev=rev[i]) for i in range(r)]


class Builder:
    """Collects called computations (reducers, loop bodies, fused computations) ahead of
    the main computation, as TpuGraphs' encoder orders them."""

    def __init__(self, rng):
        self.rng = rng
        self.pre = []
        self.main = []
        self.cur = self.main
        self.split_points = []
        self.nparam_main = 0

    # -- generic
    def add(self, op, et, shape, ops=(), **kw):
        n = Node(op, et, shape, ops, **kw)
        self.cur.append(n)
        return n

    def begin_sub(self):
        saved = self.cur
        self.cur = []
        return saved

    def end_sub(self, saved, split=False):
        nodes = self.cur
        self.cur = saved
        if nodes:
            nodes[-1].root = 1
        self.pre.extend(nodes)
        if split:
            self.split_points.append(len(self.pre))
        return nodes[-1] if nodes else None

    # -- leaves
    def param(self, et, shape, trainable=False, layout='default'):
        n = self.add(O['parameter'], et, shape, pnum=self.nparam_main, layout=layout)
        self.nparam_main += 1
        n.rg = trainable
        n.meta = 'trainable' if trainable else None
        return n

    def const(self, et='f32', shape=()):
        return self.add(O['constant'], et, shape)

    def reducer(self, kind='add', et='f32'):
        saved = self.begin_sub()
        a = self.add(O['parameter'], et, (), pnum=0, layout=None)
        b = self.add(O['parameter'], et, (), pnum=1, layout=None)
        self.add(O[kind], et, (), [a, b], layout=None)
        return self.end_sub(saved)

    # -- ops
    def ew(self, opname, *xs, et=None):
        return self.add(O[opname], et or xs[0].et, xs[0].shape, xs)

    def bcast(self, x, shape, dims):
        return self.add(O['broadcast'], x.et, shape, [x], dims=dims)

    def scalar_b(self, shape, et='f32'):
        key = (id(self.cur), et, int(self.rng.integers(3)))
        cst = getattr(self, '_cse', None)
        if cst is None:
            cst = self._cse = {}
        if key not in cst:
            cst[key] = self.const(et)
        return self.bcast(cst[key], shape, [])

    def convert(self, x, et):
        if x.et == et:
            return x
        return self.add(O['convert'], et, x.shape, [x])

    def reduce(self, x, rdims, kind='add'):
        rdims = sorted(rdims)
        oshape = tuple(s for i, s in enumerate(x.shape) if i not in rdims)
        init = self.const(x.et)
        red = self.reducer('add' if kind == 'add' else 'maximum', x.et)
        n = self.add(O['reduce'], x.et, oshape, [x, init], dims=rdims, calls=[red])
        n.meta = kind
        return n

    def reshape(self, x, shape):
        assert int(np.prod(shape)) == x.nelem(), (shape, x.shape)
        return self.add(O['reshape'], x.et, shape, [x])

    def transpose(self, x, perm):
        shape = tuple(x.shape[p] for p in perm)
        return self.add(O['transpose'], x.et, shape, [x], dims=list(perm))

    def dot(self, a, w, et=None):
        nb = a.rank - 2
        assert w.rank == a.rank and a.shape[:nb] == w.shape[:nb] and a.shape[-1] == w.shape[-2]
        shape = a.shape[:-1] + (w.shape[-1],)
        return self.add(O['dot'], et or a.et, shape, [a, w])

    def conv(self, x, w, cdn, win, oshape, fgc=1, et=None):
        return self.add(O['convolution'], et or x.et, oshape, [x, w], cdn=cdn, win=win,
                        fgc=fgc, bgc=1)

    def tuple_(self, xs):
        return self.add(O['tuple'], 'tuple', (), xs, tsize=len(xs), layout=None)

    def gte(self, t, et, shape):
        return self.add(O['get_tuple_element'], et, shape, [t])

    def finalize(self):
        """Assign ids; returns (nodes, splits)."""
        nodes = self.pre + self.main
        for i, n in enumerate(nodes):
            n.id = i
        self.main[-1].root = 1
        splits = [0] + [p for p in self.split_points] + [len(nodes)]
        return nodes, splits


# ----------------------------------------------------------------------------------------
# 140-column node features, exactly as the upstream featurizer lays them out
# ----------------------------------------------------------------------------------------
def _seq(vals, k, empty_zero_product=False):
    out = [0.0] * (k + 2)
    for i, v in enumerate(vals[:k]):
        out[i] = float(v)
    out[k] = float(sum(vals))
    p = 1
    for v in vals:
        p *= v
    out[k + 1] = 0.0 if (not vals and empty_zero_product) else float(p)
    return out


def encode_node(n):
    f = np.zeros(140, dtype=np.float64)
    f[0] = float(n.root)
    f[2 + ET[n.et]] = 1.0
    f[21:29] = _seq(list(n.shape), 6)
    f[29] = float(n.tsize)
    f[30] = float(n.pnum)
    for i, d in enumerate(n.dims[:6]):
        f[31 + i] = d
    w = n.win or []
    col = 37
    for key in ('size', 'stride', 'pl', 'ph', 'wd', 'bd'):
        f[col:col + 8] = _seq([d[key] for d in w], 6)
        col += 8
    rev = [d['rev'] for d in w]
    for i, v in enumerate(rev[:6]):
        f[85 + i] = float(v)
    f[91] = float(sum(1 for v in rev if v))
    f[92] = float(sum(1 for v in rev if not v))
    if n.cdn is not None:
        c = n.cdn
        f[93] = c['ib']
        f[94] = c['if']
        for i, d in enumerate(c['is'][:4]):
            f[95 + i] = d
        f[99] = c['kif']
        f[100] = c['kof']
        for i, d in enumerate(c['ks'][:4]):
            f[101 + i] = d
        f[105] = c['ob']
        f[106] = c['of']
    f[107] = float(n.fgc)
    f[108] = float(n.bgc)
    s = n.slc or []
    f[109:113] = _seq([a[0] for a in s], 2)
    f[113:117] = _seq([a[1] for a in s], 2)
    f[117:121] = _seq([a[2] for a in s], 2)
    f[121:125] = _seq(list(n.dyn or []), 2)
    p = n.padc or []
    f[125:129] = _seq([a[0] for a in p], 2)
    f[129:133] = _seq([a[1] for a in p], 2)
    f[133] = float(n.stable)
    lay = n.layout
    if lay == 'default':
        lay = tuple(range(n.rank - 1, -1, -1)) if n.rank else None
    if lay:
        for i, d in enumerate(lay[:6]):
            f[134 + i] = d
    return f


def module_arrays(nodes, splits=None):
    nf = np.stack([encode_node(n) for n in nodes]).astype(np.float32)
    opc = np.array([n.op for n in nodes], dtype=np.uint8)
    rows = []
    for n in nodes:
        for v in n.ops:
            rows.append((n.id, v.id))
        for v in n.calls:
            rows.append((n.id, v.id))
    ei = np.array(rows, dtype=np.int64).reshape(-1, 2)
    out = dict(node_feat=nf, node_opcode=opc, edge_index=ei)
    if splits is not None:
        out['node_splits'] = np.array([splits], dtype=np.int64)
    return out


# ----------------------------------------------------------------------------------------
# Model samplers: our own graph structures
# ----------------------------------------------------------------------------------------
def _ceil_div(a, b):
    return -(-a // b)


class Net:
    """Forward/backward helpers on top of a Builder."""

    def __init__(self, b, rng, act):
        self.b = b
        self.rng = rng
        self.act = act

    # -------- forward building blocks
    def weight(self, shape):
        if not getattr(self, 'train', True):
            return self.b.param(self.act, shape, trainable=True)
        w = self.b.param('f32', shape, trainable=True)
        return self.b.convert(w, self.act) if self.act != 'f32' else w

    def conv(self, x, cout, k, stride=1, depthwise=False, base_dil=1):
        b = self.b
        sd = x.rank - 2
        cin = x.shape[-1]
        if depthwise:
            wshape = [k] * sd + [1, cin]
            cout = cin
            fgc = cin
        else:
            wshape = [k] * sd + [cin, cout]
            fgc = 1
        w = self.weight(wshape)
        lo = (k - 1) // 2
        hi = k - 1 - lo
        if base_dil > 1:
            osp = [s * base_dil for s in x.shape[1:-1]]
            stride = 1
        else:
            osp = [_ceil_div(s, stride) for s in x.shape[1:-1]]
        cdn = dict(ib=0, **{'if': sd + 1}, **{'is': list(range(1, sd + 1))}, kif=sd,
                   kof=sd + 1, ks=list(range(sd)), ob=0, of=sd + 1)
        win = win_dims([k] * sd, [stride] * sd, [(lo, hi)] * sd, bdil=[base_dil] * sd)
        y = b.conv(x, w, cdn, win, [x.shape[0]] + osp + [cout], fgc=fgc)
        y.meta = dict(k=k, stride=stride, lo=lo, hi=hi, sd=sd, bd=base_dil, fgc=fgc)
        return y

    def bn(self, y, train):
        b = self.b
        r = y.rank
        c = y.shape[-1]
        if not train:
            s = b.bcast(b.param(y.et, [c]), y.shape, [r - 1])
            t = b.bcast(b.param(y.et, [c]), y.shape, [r - 1])
            return b.ew('add', b.ew('multiply', y, s), t)
        yf = b.convert(y, 'f32')
        mean = b.ew('multiply', b.reduce(yf, range(r - 1)), b.scalar_b((c,)))
        d = b.ew('subtract', yf, b.bcast(mean, y.shape, [r - 1]))
        var = b.ew('multiply', b.reduce(b.ew('multiply', d, d), range(r - 1)), b.scalar_b((c,)))
        inv = b.ew('rsqrt', b.ew('add', var, b.scalar_b((c,))))
        gamma = b.param('f32', [c], trainable=True)
        beta = b.param('f32', [c], trainable=True)
        sc = b.ew('multiply', inv, gamma)
        o = b.ew('add', b.ew('multiply', d, b.bcast(sc, y.shape, [r - 1])),
                 b.bcast(beta, y.shape, [r - 1]))
        return b.convert(o, y.et)

    def relu(self, x):
        return self.b.ew('maximum', x, self.b.scalar_b(x.shape, x.et))

    def pool(self, x, k=2, s=2):
        b = self.b
        sd = x.rank - 2
        osp = [_ceil_div(v, s) for v in x.shape[1:-1]]
        win = win_dims([1] + [k] * sd + [1], [1] + [s] * sd + [1])
        init = b.const(x.et)
        red = b.reducer('maximum', x.et)
        n = b.add(O['reduce_window'], x.et, [x.shape[0]] + osp + [x.shape[-1]], [x, init],
                  win=win, calls=[red])
        n.meta = dict(k=k, s=s)
        return n

    def layernorm(self, x):
        b = self.b
        r = x.rank
        d = x.shape[-1]
        xf = b.convert(x, 'f32')
        keep = list(range(r - 1))
        mean = b.ew('multiply', b.reduce(xf, [r - 1]), b.scalar_b(x.shape[:-1]))
        c = b.ew('subtract', xf, b.bcast(mean, x.shape, keep))
        var = b.ew('multiply', b.reduce(b.ew('multiply', c, c), [r - 1]), b.scalar_b(x.shape[:-1]))
        inv = b.ew('rsqrt', b.ew('add', var, b.scalar_b(x.shape[:-1])))
        o = b.ew('multiply', c, b.bcast(inv, x.shape, keep))
        g = b.param('f32', [d], trainable=True)
        be = b.param('f32', [d], trainable=True)
        o = b.ew('add', b.ew('multiply', o, b.bcast(g, x.shape, [r - 1])), b.bcast(be, x.shape, [r - 1]))
        return b.convert(o, x.et)

    def softmax(self, s):
        b = self.b
        r = s.rank
        keep = list(range(r - 1))
        m = b.reduce(s, [r - 1], kind='max')
        e = b.ew('exponential', b.ew('subtract', s, b.bcast(m, s.shape, keep)))
        z = b.reduce(e, [r - 1])
        return b.ew('divide', e, b.bcast(z, s.shape, keep))

    def gelu(self, x):
        b = self.b
        x3 = b.ew('multiply', x, b.ew('multiply', x, x))
        inner = b.ew('add', x, b.ew('multiply', x3, b.scalar_b(x.shape, x.et)))
        t = b.ew('tanh', b.ew('multiply', inner, b.scalar_b(x.shape, x.et)))
        return b.ew('multiply', b.ew('multiply', x, b.scalar_b(x.shape, x.et)),
                    b.ew('add', t, b.scalar_b(x.shape, x.et)))

    def bias(self, x):
        b = self.b
        p = self.b.convert(b.param('f32', [x.shape[-1]], trainable=True), x.et)
        return b.ew('add', x, b.bcast(p, x.shape, [x.rank - 1]))

    def xent(self, logits):
        """softmax cross-entropy -> scalar loss (f32)."""
        b = self.b
        lf = b.convert(logits, 'f32')
        r = lf.rank
        keep = list(range(r - 1))
        m = b.reduce(lf, [r - 1], kind='max')
        sh = b.ew('subtract', lf, b.bcast(m, lf.shape, keep))
        lse = b.ew('log', b.reduce(b.ew('exponential', sh), [r - 1]))
        logp = b.ew('subtract', sh, b.bcast(lse, lf.shape, keep))
        lab = b.param('f32', lf.shape)
        tot = b.reduce(b.ew('multiply', logp, lab), range(r))
        return b.ew('multiply', tot, b.const('f32'))

    # -------- reverse mode
    def backward(self, loss):
        b = self.b
        fwd = [n for n in b.main if n.rg]
        grads = {id(loss): [b.const(loss.et)]}
        pgrads = []

        def acc(node, g):
            if node.rg and node.op not in (O['constant'],):
                grads.setdefault(id(node), []).append(g)

        for n in reversed(fwd):
            gl = grads.pop(id(n), None)
            if not gl:
                continue
            g = gl[0]
            for h in gl[1:]:
                g = b.ew('add', g, h)
            if n.op == O['parameter']:
                pgrads.append((n, g))
                continue
            for node, gg in self._rule(n, g):
                acc(node, gg)
        return pgrads

    def _zeros(self, shape, et):
        return self.b.scalar_b(shape, et)

    def _rule(self, n, g):
        b = self.b
        op = n.op
        xs = n.ops
        if op == O['add']:
            return [(xs[0], g), (xs[1], g)]
        if op == O['subtract']:
            return [(xs[0], g), (xs[1], b.ew('negate', g))] if xs[1].rg else [(xs[0], g)]
        if op == O['multiply']:
            out = []
            if xs[0].rg:
                out.append((xs[0], b.ew('multiply', g, xs[1])))
            if xs[1].rg:
                out.append((xs[1], b.ew('multiply', g, xs[0])))
            return out
        if op == O['divide']:
            out = [(xs[0], b.ew('divide', g, xs[1]))]
            if xs[1].rg:
                out.append((xs[1], b.ew('negate', b.ew('multiply', g, b.ew('divide', n, xs[1])))))
            return out
        if op in (O['maximum'], O['minimum']):
            c = b.add(O['compare'], 'pred', n.shape, [xs[0], xs[1]])
            z = self._zeros(n.shape, n.et)
            out = [(xs[0], b.ew('select', c, g, z, et=n.et))]
            if xs[1].rg:
                out.append((xs[1], b.ew('select', c, z, g, et=n.et)))
            return out
        if op == O['select']:
            z = self._zeros(n.shape, n.et)
            return [(xs[1], b.ew('select', xs[0], g, z, et=n.et)),
                    (xs[2], b.ew('select', xs[0], z, g, et=n.et))]
        if op == O['exponential']:
            return [(xs[0], b.ew('multiply', g, n))]
        if op == O['tanh']:
            d = b.ew('subtract', b.scalar_b(n.shape, n.et), b.ew('multiply', n, n))
            return [(xs[0], b.ew('multiply', g, d))]
        if op == O['rsqrt']:
            n3 = b.ew('multiply', n, b.ew('multiply', n, n))
            return [(xs[0], b.ew('multiply', b.ew('multiply', g, n3), b.scalar_b(n.shape, n.et)))]
        if op == O['log']:
            return [(xs[0], b.ew('divide', g, xs[0]))]
        if op == O['negate']:
            return [(xs[0], b.ew('negate', g))]
        if op == O['convert']:
            return [(xs[0], b.convert(g, xs[0].et))]
        if op == O['broadcast']:
            x = xs[0]
            others = [i for i in range(n.rank) if i not in n.dims]
            return [(x, b.reduce(g, others) if others else b.reshape(g, x.shape))]
        if op == O['reduce']:
            x = xs[0]
            kept = [i for i in range(x.rank) if i not in n.dims]
            gb = b.bcast(g, x.shape, kept)
            if n.meta == 'max':
                c = b.add(O['compare'], 'pred', x.shape, [x, b.bcast(n, x.shape, kept)])
                return [(x, b.ew('select', c, gb, self._zeros(x.shape, x.et), et=x.et))]
            return [(x, gb)]
        if op == O['reshape']:
            return [(xs[0], b.reshape(g, xs[0].shape))]
        if op == O['transpose']:
            inv = list(np.argsort(n.dims))
            return [(xs[0], b.transpose(g, inv))]
        if op == O['dot']:
            a, w = xs
            r = a.rank
            sw = list(range(r - 2)) + [r - 1, r - 2]
            out = []
            if a.rg:
                out.append((a, b.dot(g, b.transpose(w, sw))))
            if w.rg:
                out.append((w, b.dot(b.transpose(a, sw), g)))
            return out
        if op == O['convolution']:
            return self._conv_rule(n, g)
        if op == O['reduce_window']:
            x = xs[0]
            sel = b.reducer('maximum', x.et)   # stands in for the select computation (ge)
            sca = b.reducer('add', x.et)
            init = b.const(x.et)
            gi = b.add(O['select_and_scatter'], x.et, x.shape, [x, g, init], win=n.win,
                       calls=[sel, sca])
            return [(x, gi)]
        if op == O['concatenate']:
            d = n.dims[0]
            out = []
            start = 0
            for x in xs:
                lim = start + x.shape[d]
                slc = [(0, 1, s) for s in n.shape]
                slc[d] = (start, 1, lim)
                if x.rg:
                    out.append((x, b.add(O['slice'], n.et, x.shape, [g], slc=slc)))
                start = lim
            return out
        if op == O['gather']:
            table, ids = xs
            z = self._zeros(table.shape, g.et)
            red = b.reducer('add', g.et)
            s = b.add(O['scatter'], g.et, table.shape, [z, ids, g], calls=[red])
            return [(table, s)]
        return []

    def _conv_rule(self, n, g):
        b = self.b
        x, w = n.ops
        m = n.meta
        sd = m['sd']
        r = x.rank
        k = m['k']
        out = []
        if x.rg:
            cdn = dict(ib=0, **{'if': sd + 1}, **{'is': list(range(1, sd + 1))}, kif=sd + 1,
                       kof=sd, ks=list(range(sd)), ob=0, of=sd + 1)
            if m['fgc'] > 1:
                cdn['kif'], cdn['kof'] = sd, sd + 1
            pl = k - 1 - m['lo']
            ph = k - 1 - m['hi']
            if m['bd'] > 1:
                win = win_dims([k] * sd, [m['bd']] * sd, [(pl, ph)] * sd, rev=[1] * sd)
            else:
                win = win_dims([k] * sd, [1] * sd, [(pl, ph + m['stride'] - 1)] * sd,
                               bdil=[m['stride']] * sd, rev=[1] * sd)
            gi = b.conv(g, w, cdn, win, x.shape, fgc=m['fgc'])
            out.append((x, gi))
        if w.rg:
            cdn = dict(ib=r - 1, **{'if': 0}, **{'is': list(range(1, sd + 1))}, kif=0,
                       kof=r - 1, ks=list(range(1, sd + 1)), ob=sd, of=sd + 1)
            osp = list(n.shape[1:-1])
            if m['bd'] > 1:
                win = win_dims(osp, [m['bd']] * sd, [(m['lo'], m['hi'])] * sd)
            else:
                win = win_dims(osp, [1] * sd, [(m['lo'], m['hi'])] * sd, wdil=[m['stride']] * sd)
            gw = b.conv(x, g, cdn, win, w.shape, fgc=1)
            if m['fgc'] > 1:
                gw.bgc = m['fgc']
            out.append((w, gw))
        return out

    def optimizer(self, pgrads, adam=False, allreduce=False):
        b = self.b
        outs = []
        for p, g in pgrads:
            if g.shape != p.shape:
                continue
            if g.et != p.et:
                g = b.convert(g, p.et)
            if allreduce:
                red = b.reducer('add', g.et)
                g = b.add(O['all_reduce'], g.et, g.shape, [g], calls=[red])
            m = b.param(p.et, p.shape)
            m2 = b.ew('add', b.ew('multiply', m, b.scalar_b(p.shape)), g)
            if adam:
                v = b.param(p.et, p.shape)
                v2 = b.ew('add', b.ew('multiply', v, b.scalar_b(p.shape)),
                          b.ew('multiply', b.ew('multiply', g, g), b.scalar_b(p.shape)))
                upd = b.ew('divide', m2, b.ew('add', b.ew('sqrt', v2), b.scalar_b(p.shape)))
                outs.append(v2)
            else:
                upd = m2
            outs.append(b.ew('subtract', p, b.ew('multiply', upd, b.scalar_b(p.shape))))
            outs.append(m2)
        return outs


def add_while_loop(b, rng, feed):
    """A small counted loop (body + cond computations, each closing a node_splits segment)."""
    k = int(rng.choice([8, 16, 32, 64, 128]))
    et = 'f32'
    shp = (k,)
    # body
    saved = b.begin_sub()
    p = b.add(O['parameter'], 'tuple', (), pnum=0, tsize=2, layout=None)
    i = b.gte(p, 's32', ())
    acc = b.gte(p, et, shp)
    one = b.const('s32')
    i2 = b.ew('add', i, one)
    ds = b.add(O['dynamic_slice'], et, (1,), [acc, i], dyn=[1])
    upd = b.ew('multiply', ds, b.bcast(b.const(et), (1,), []))
    acc2 = b.add(O['dynamic_update_slice'], et, shp, [acc, upd, i])
    if rng.random() < 0.5:
        acc2 = b.ew('add', acc2, b.bcast(b.const(et), shp, []))
    b.tuple_([i2, acc2])
    body = b.end_sub(saved, split=True)
    # cond
    saved = b.begin_sub()
    p = b.add(O['parameter'], 'tuple', (), pnum=0, tsize=2, layout=None)
    i = b.gte(p, 's32', ())
    b.add(O['compare'], 'pred', (), [i, b.const('s32')], layout=None)
    cond = b.end_sub(saved, split=True)
    # call site
    init = b.tuple_([b.const('s32'), feed])
    w = b.add(O['while_'], 'tuple', (), [init], tsize=2, calls=[cond, body], layout=None)
    return b.gte(w, et, shp)


def _feed_vector(b, x, k):
    """Reduce some tensor to a [k] f32 vector to feed a while loop."""
    xf = b.convert(x, 'f32')
    v = b.reduce(xf, list(range(xf.rank)))
    return b.bcast(v, (k,), [])


def build_vision(spec, L):
    rng = np.random.default_rng(spec['seed'])
    b = Builder(rng)
    net = Net(b, rng, spec['act'])
    train = spec['train']
    net.train = train
    sd = spec['sd']
    N, H, cin0 = spec['N'], spec['H'], spec['cin']
    x = b.param('f32', [N] + [H] * sd + [cin0])
    x = b.convert(x, spec['act'])
    arch = spec['arch']
    c = spec['c0']
    skips = []
    convs = 0
    for l in range(L):
        if arch == 'unet':
            depth = spec['depth']
            if l < depth:
                x = net.relu(net.bn(net.conv(x, c, 3), train))
                x = net.relu(net.bn(net.conv(x, c, 3), train))
                skips.append(x)
                if x.shape[1] >= 4:
                    x = net.pool(x)
                c = min(c * 2, 512)
            elif skips:
                s = skips.pop()
                c = s.shape[-1]
                if x.shape[1] * 2 == s.shape[1]:
                    x = net.conv(x, c, 2 if rng.random() < 0.5 else 3, base_dil=2)
                else:
                    x = net.conv(x, c, 1)
                x = b.add(O['concatenate'], x.et, x.shape[:-1] + (x.shape[-1] + s.shape[-1],),
                          [x, s], dims=[x.rank - 1])
                x = net.relu(net.bn(net.conv(x, c, 3), train))
            else:
                x = net.relu(net.bn(net.conv(x, c, 3), train))
        elif arch == 'resnet':
            stride = 2 if (l > 0 and l % spec['every'] == 0 and x.shape[1] >= 8) else 1
            cout = min(c * 2, 1024) if stride == 2 else c
            y = net.relu(net.bn(net.conv(x, cout, 3, stride), train))
            y = net.bn(net.conv(y, cout, 3), train)
            if stride != 1 or cout != x.shape[-1]:
                x = net.bn(net.conv(x, cout, 1, stride), train)
            x = net.relu(b.ew('add', y, x))
            c = cout
        elif arch == 'mobilenet':
            stride = 2 if (l % spec['every'] == 1 and x.shape[1] >= 8) else 1
            y = net.relu(net.bn(net.conv(x, x.shape[-1], 3, stride, depthwise=True), train))
            cout = min(c * 2, 1024) if stride == 2 else c
            x = net.relu(net.bn(net.conv(y, cout, 1), train))
            c = cout
        elif arch == 'inception':
            br1 = net.relu(net.bn(net.conv(x, c // 2, 1), train))
            br2 = net.relu(net.bn(net.conv(net.relu(net.conv(x, c // 2, 1)), c, 3), train))
            br3 = net.relu(net.conv(x, c // 4, 5))
            cat = br1.shape[-1] + br2.shape[-1] + br3.shape[-1]
            x = b.add(O['concatenate'], x.et, x.shape[:-1] + (cat,), [br1, br2, br3],
                      dims=[x.rank - 1])
            if l % 2 == 1 and x.shape[1] >= 8:
                x = net.pool(x, 3, 2)
        else:  # vgg
            x = net.relu(net.bn(net.conv(x, c, 3), train))
            if l % spec['every'] == spec['every'] - 1 and x.shape[1] >= 4:
                x = net.pool(x)
                c = min(c * 2, 512)
    # head
    if arch == 'unet':
        logits = net.conv(x, spec['classes'], 1)
        flat = b.reshape(logits, (logits.nelem() // spec['classes'], spec['classes']))
        head = flat
    else:
        if spec['flatten'] and x.nelem() // N <= 65536:
            f = b.reshape(x, (N, x.nelem() // N))
        else:
            f = b.ew('multiply', b.reduce(x, list(range(1, sd + 1))), b.scalar_b((N, x.shape[-1]), x.et))
        w = net.weight([f.shape[-1], spec['classes']])
        head = net.bias(b.dot(f, w))
    if train:
        loss = net.xent(head)
        pg = net.backward(loss)
        outs = net.optimizer(pg, adam=False, allreduce=spec['dp'])
        outs.append(loss)
    else:
        outs = [head]
    for _ in range(spec['loops']):
        outs.append(add_while_loop(b, rng, b.bcast(b.const('f32'), (int(rng.choice([8, 16, 32])),), [])))
    b.tuple_(outs)
    return b


def build_nlp(spec, L):
    rng = np.random.default_rng(spec['seed'])
    b = Builder(rng)
    act = spec['act']
    net = Net(b, rng, act)
    net.train = spec['train']
    B, S, D, Hh, F, V = spec['B'], spec['S'], spec['D'], spec['H'], spec['F'], spec['V']
    Dh = D // Hh
    train = spec['train']
    ids = b.param('s32', [B, S])
    table = b.param('f32', [V, D], trainable=True)
    e = b.add(O['gather'], 'f32', (B, S, D), [table, ids])
    pos = b.param('f32', [S, D], trainable=True)
    x = b.ew('add', e, b.bcast(pos, (B, S, D), [1, 2]))
    x = b.convert(x, act)
    for l in range(L):
        if l % 2 == 0:          # attention half-layer
            h = net.layernorm(x)
            h2 = b.reshape(h, (B * S, D))
            q = net.bias(b.dot(h2, net.weight([D, D])))
            k = net.bias(b.dot(h2, net.weight([D, D])))
            v = net.bias(b.dot(h2, net.weight([D, D])))
            qt = b.transpose(b.reshape(q, (B, S, Hh, Dh)), [0, 2, 1, 3])
            kt = b.transpose(b.reshape(k, (B, S, Hh, Dh)), [0, 2, 3, 1])
            vt = b.transpose(b.reshape(v, (B, S, Hh, Dh)), [0, 2, 1, 3])
            s = b.dot(qt, kt)
            s = b.ew('multiply', s, b.scalar_b(s.shape, s.et))
            if spec['mask']:
                mk = b.convert(b.param('f32', [B, S]), act)
                s = b.ew('add', s, b.bcast(mk, s.shape, [0, 3]))
            p = net.softmax(s)
            o = b.dot(p, vt)
            o = b.reshape(b.transpose(o, [0, 2, 1, 3]), (B * S, D))
            o = net.bias(b.dot(o, net.weight([D, D])))
            x = b.ew('add', x, b.reshape(o, (B, S, D)))
        else:                   # MLP half-layer
            h = b.reshape(net.layernorm(x), (B * S, D))
            f1 = net.bias(b.dot(h, net.weight([D, F])))
            f1 = net.gelu(f1) if spec['gelu'] else net.relu(f1)
            f2 = net.bias(b.dot(f1, net.weight([F, D])))
            x = b.ew('add', x, b.reshape(f2, (B, S, D)))
    h = b.reshape(net.layernorm(x), (B * S, D))
    if spec['tied']:
        wt = b.transpose(b.convert(table, act), [1, 0])
    else:
        wt = net.weight([D, V])
    logits = b.dot(h, wt)
    if train:
        loss = net.xent(logits)
        pg = net.backward(loss)
        outs = net.optimizer(pg, adam=True, allreduce=spec['dp'])
        outs.append(loss)
    else:
        outs = [logits]
    for _ in range(spec['loops']):
        outs.append(add_while_loop(b, rng, b.bcast(b.const('f32'), (int(rng.choice([8, 16, 32])),), [])))
    b.tuple_(outs)
    return b


# ----------------------------------------------------------------------------------------
# Layout codes: every permutation of rank 0..6 gets a small integer id
# ----------------------------------------------------------------------------------------
PERMS = []
PIDX = {}
for _r in range(7):
    for _p in itertools.permutations(range(_r)):
        PIDX[_p] = len(PERMS)
        PERMS.append(_p)
NCODES = len(PERMS)
DESC = [PIDX[tuple(range(r - 1, -1, -1))] for r in range(7)]

# hardware constants of the law (ns, bytes)
BW = 1200.0            # HBM bytes per ns
ICI_BW = 90.0          # interconnect bytes per ns
PEAK = {2: 1.97e5, 4: 0.49e5, 1: 3.9e5, 8: 0.49e5}   # MXU FLOP per ns by element bytes
VPU_FLOPS = 4.0e3
VPU_RATE = 4096.0      # elementwise element-ops per ns
XLU_RATE = 1024.0
OVH_OP = 300.0
OVH_COPY = 1000.0
OVH_PROGRAM = 120000.0  # launch + host synchronisation of one step
ALPHA_EW = 0.30
HIDE = 0.45
VMEM = 16.0 * 2 ** 20
STEP_OVH = 350.0


def _fill(s, u):
    if isinstance(s, np.ndarray):
        return s / (np.ceil(s / u) * u)
    return s / float(_ceil_div(s, u) * u)


def _sub(nbytes):
    return 8 * max(1, 4 // max(1, int(nbytes)))


@lru_cache(maxsize=None)
def padded(shape, nbytes, code):
    r = len(shape)
    tot = float(np.prod(shape)) * nbytes if r else float(nbytes)
    if r == 0:
        return tot
    L = PERMS[code]
    s0 = shape[L[0]]
    w = min(_ceil_div(s0, 128) * 128 / s0, 8.0)
    if r >= 2:
        s1 = shape[L[1]]
        u = _sub(nbytes)
        w *= min(_ceil_div(s1, u) * u / s1, 4.0)
    return tot * min(w, 16.0)


@lru_cache(maxsize=None)
def padded_fused(shape, nbytes, code):
    """what a fused memory-bound op pays: the raw bytes plus 30% of the padding waste."""
    raw = float(np.prod(shape)) * nbytes if shape else float(nbytes)
    return raw + 0.3 * (padded(shape, nbytes, code) - raw)


@lru_cache(maxsize=None)
def block_prefix(key):
    out = []
    for k in range(6):
        v = (key >> (3 * k)) & 7
        if v == 0:
            break
        out.append(v - 1)
    return tuple(out)


@lru_cache(maxsize=None)
def resolve(key, ref_code, rank):
    """prefix from a block key, completed with the remaining dims in ref's order."""
    pre = block_prefix(key)
    if not pre or len(set(pre)) != len(pre) or max(pre) >= rank:
        return ref_code
    ref = PERMS[ref_code]
    rest = tuple(d for d in ref if d not in pre)
    return PIDX[pre + rest]


def block_keys(blk):
    """(c, 6) float block -> int64 key (3 bits per entry, -1 -> 0)."""
    v = np.rint(blk).astype(np.int64) + 1
    v = np.clip(v, 0, 7)
    w = (1 << (3 * np.arange(6, dtype=np.int64)))
    return (v * w).sum(axis=1)


def _is_const(v):
    return not isinstance(v, np.ndarray)


def _squeeze(v):
    if isinstance(v, np.ndarray) and v.size and (v == v[0]).all():
        return int(v[0])
    return v


def umap(fn, vals, c, dtype=np.float64):
    """Apply fn to every distinct combination of (int or array) values."""
    if all(_is_const(v) for v in vals):
        return fn(*vals)
    arrs = [np.full(c, v, dtype=np.int64) if _is_const(v) else v.astype(np.int64) for v in vals]
    if len(arrs) == 1:
        key = arrs[0]
    else:
        key = arrs[0].copy()
        for a in arrs[1:]:
            key = key * 1024 + a
    uk, inv = np.unique(key, return_inverse=True)
    first = np.zeros(len(uk), dtype=np.int64)
    first[inv[::-1]] = np.arange(c - 1, -1, -1)
    res = np.array([fn(*[int(a[i]) for a in arrs]) for i in first], dtype=dtype)
    return res[inv]


class LayoutGraph:
    """Everything the layout law needs, parsed from the file's own arrays."""

    def __init__(self, node_feat, node_opcode, edge_index, node_config_ids):
        nf = np.asarray(node_feat, dtype=np.float64)
        self.n = n = len(node_opcode)
        self.op = np.asarray(node_opcode).astype(np.int64)
        dims = np.rint(nf[:, 21:27]).astype(np.int64)
        self.shape = []
        for i in range(n):
            r = 0
            while r < 6 and dims[i, r] > 0:
                r += 1
            self.shape.append(tuple(int(d) for d in dims[i, :r]))
        et = np.argmax(nf[:, 2:21], axis=1)
        self.bytes = [int(max(1, ET_BYTES[e])) for e in et]
        self.default = []
        for i in range(n):
            r = len(self.shape[i])
            lay = tuple(int(round(v)) for v in nf[i, 134:134 + r])
            self.default.append(PIDX[lay] if sorted(lay) == list(range(r)) else DESC[r])
        self.attr = np.rint(nf[:, 31:37]).astype(np.int64)
        self.cdn = np.rint(nf[:, 93:107]).astype(np.int64)
        self.wsize = np.rint(nf[:, 37:43]).astype(np.int64)
        self.wstride = np.rint(nf[:, 45:51]).astype(np.int64)
        self.fgc = np.rint(nf[:, 107]).astype(np.int64)
        self.bgc = np.rint(nf[:, 108]).astype(np.int64)
        ei = np.asarray(edge_index, dtype=np.int64).reshape(-1, 2)
        order = np.argsort(ei[:, 0], kind='stable')
        self.operands = [[] for _ in range(n)]
        for u, v in ei[order]:
            self.operands[int(u)].append(int(v))
        self.cids = np.asarray(node_config_ids, dtype=np.int64)
        self.cpos = {int(v): j for j, v in enumerate(self.cids)}
        self.root = n - 1
        self._memo = {}

    def table(self, tag, i, fn):
        """per-layout-code lookup of a single-code function, filled lazily."""
        key = ('T', tag, i)
        ent = self._memo.get(key)
        if ent is None:
            ent = self._memo[key] = [np.full(NCODES, np.nan), fn]
        tabl = ent[0]

        def f(v):
            if _is_const(v):
                x = tabl[v]
                if x != x:
                    x = tabl[v] = fn(int(v))
                return float(x)
            vals = tabl[v]
            if np.isnan(vals).any():
                miss = np.unique(v[np.isnan(vals)])
                for m in miss:
                    tabl[m] = fn(int(m))
                vals = tabl[v]
            return vals
        return f

    def memo(self, tag, i, fn):
        d = self._memo.setdefault((tag, i), {})

        def f(*a):
            r = d.get(a)
            if r is None:
                r = d[a] = fn(*a)
            return r
        return f

    def same_shape_ops(self, i):
        return [v for v in self.operands[i] if self.shape[v] == self.shape[i]]

    def same_rank_ops(self, i):
        r = len(self.shape[i])
        return [v for v in self.operands[i] if len(self.shape[v]) == r and r > 0]


# -------- per-op cost models (all in ns) --------------------------------------------------
def _vmax(a, b):
    return np.maximum(a, b) if not (_is_const(a) and _is_const(b)) else max(a, b)


def _vmin(a, b):
    return np.minimum(a, b) if not (_is_const(a) and _is_const(b)) else min(a, b)


def conv_cost(g, i, lin, lk, lo):
    """vectorised over configs: lin/lk/lo are int codes or (c,) code arrays."""
    x, w = g.operands[i][0], g.operands[i][1]
    I, K, Os = g.shape[x], g.shape[w], g.shape[i]
    c = g.cdn[i]
    ifd, kif, kof, of = int(c[1]), int(c[6]), int(c[7]), int(c[13])
    sd = len(I) - 2
    ks = [int(v) for v in c[8:8 + sd]]
    flops = 2.0 * float(math.prod(Os)) * K[kif] * float(math.prod([K[d] for d in ks]))
    bI, bK, bO = g.bytes[x], g.bytes[w], g.bytes[i]
    u = _sub(bO)
    depthwise = g.fgc[i] > 1 or g.bgc[i] > 1

    def f_in(code):
        p = padded(I, bI, code)
        return p, (0.0 if PERMS[code][0] == ifd else 1.5 * p / BW)

    def f_k(code):
        Lk = PERMS[code]
        p = padded(K, bK, code)
        if Lk[0] == kof and Lk[1] == kif:
            kf = 1.0
        elif Lk[0] == kif and Lk[1] == kof:
            kf = 0.96
        elif Lk[0] in (kif, kof):
            kf = 0.9
        else:
            kf = 0.75
        return p, kf, (0.0 if Lk[0] in (kif, kof) else 2.0 * p / BW)

    def f_out(code):
        Lo = PERMS[code]
        p = padded(Os, bO, code)
        fM = _fill(Os[Lo[1]], u) ** 0.3 if len(Os) >= 2 else 1.0
        return p, fM, (0.0 if Lo[0] == of else 1.3 * p / BW), (1.0 if Lo[0] == of else 2.5)

    pI = g.table('cin_p', i, lambda v: f_in(v)[0])(lin)
    rin = g.table('cin_r', i, lambda v: f_in(v)[1])(lin)
    pK = g.table('ck_p', i, lambda v: f_k(v)[0])(lk)
    kf = g.table('ck_f', i, lambda v: f_k(v)[1])(lk)
    krel = g.table('ck_r', i, lambda v: f_k(v)[2])(lk)
    pO = g.table('co_p', i, lambda v: f_out(v)[0])(lo)
    fM = g.table('co_m', i, lambda v: f_out(v)[1])(lo)
    rout = g.table('co_r', i, lambda v: f_out(v)[2])(lo)
    mem = (pI + pK + pO) / BW
    if depthwise:
        comp = flops / VPU_FLOPS * g.table('co_d', i, lambda v: f_out(v)[3])(lo)
    else:
        fK = _fill(I[ifd], 128) ** 0.5
        fN = _fill(Os[of], 128)
        comp = flops / (PEAK.get(bI, PEAK[4]) * fK * fN * fM * kf)
    t = _vmax(comp, mem) + 0.15 * _vmin(comp, mem) + rin + rout + krel
    return t, _vmax(comp - mem, 0.0)


def dot_cost(g, i, la, lw, lo):
    a, w = g.operands[i][0], g.operands[i][1]
    A, W, Os = g.shape[a], g.shape[w], g.shape[i]
    nb = len(Os) - 2
    K = A[-1]
    N = Os[-1]
    flops = 2.0 * float(math.prod(Os)) * K
    bA, bW, bO = g.bytes[a], g.bytes[w], g.bytes[i]
    u = _sub(bO)

    def f_a(code):
        La = PERMS[code]
        p = padded(A, bA, code)
        if La[0] == nb + 1:
            return p, 1.0, 0.0
        if La[0] == nb:
            return p, 0.9, 0.0
        return p, 1.0, 1.5 * p / BW

    def f_w(code):
        Lw = PERMS[code]
        p = padded(W, bW, code)
        if Lw[0] == nb + 1:
            return p, 1.0, 0.0
        if Lw[0] == nb:
            return p, 0.95, 0.0
        return p, 1.0, 1.5 * p / BW

    def f_o(code):
        Lo = PERMS[code]
        p = padded(Os, bO, code)
        fM = _fill(Os[Lo[1]], u) ** 0.3
        ro = 0.0 if Lo[0] == nb + 1 else (0.8 * p / BW if Lo[0] == nb else 1.5 * p / BW)
        return p, fM, ro

    pA = g.table('da_p', i, lambda v: f_a(v)[0])(la)
    fa = g.table('da_f', i, lambda v: f_a(v)[1])(la)
    ra = g.table('da_r', i, lambda v: f_a(v)[2])(la)
    pW = g.table('dw_p', i, lambda v: f_w(v)[0])(lw)
    fw = g.table('dw_f', i, lambda v: f_w(v)[1])(lw)
    rw = g.table('dw_r', i, lambda v: f_w(v)[2])(lw)
    pO = g.table('do_p', i, lambda v: f_o(v)[0])(lo)
    fM = g.table('do_m', i, lambda v: f_o(v)[1])(lo)
    ro = g.table('do_r', i, lambda v: f_o(v)[2])(lo)
    fK = _fill(K, 128) ** 0.5
    fN = _fill(N, 128)
    comp = flops / (PEAK.get(bA, PEAK[4]) * fK * fN * fM * fa * fw)
    mem = (pA + pW + pO) / BW
    t = _vmax(comp, mem) + 0.15 * _vmin(comp, mem) + ra + rw + ro
    return t, _vmax(comp - mem, 0.0)


def reshape_cost(g, i, lin, lo):
    x = g.operands[i][0]
    I, Os = g.shape[x], g.shape[i]
    Li, Lo = PERMS[lin], PERMS[lo]
    if not I or not Os:
        return 0.0
    mi, mo = I[Li[0]], Os[Lo[0]]
    if lin == DESC[len(I)] and lo == DESC[len(Os)] and mi == mo:
        if len(I) < 2 or len(Os) < 2:
            return 0.0
        s1i, s1o = I[Li[1]], Os[Lo[1]]
        u = _sub(g.bytes[i])
        if s1i == s1o or (s1i % u == 0 and s1o % u == 0):
            return 0.0
    f = 0.9 if mi == mo else 1.6
    return (padded(I, g.bytes[x], lin) + padded(Os, g.bytes[i], lo)) / BW * f + OVH_COPY


def transpose_cost(g, i, lin, lo):
    x = g.operands[i][0]
    perm = [int(v) for v in g.attr[i][:len(g.shape[i])]]
    Li, Lo = PERMS[lin], PERMS[lo]
    if all(perm[Lo[j]] == Li[j] for j in range(len(Lo))):
        return 0.0
    f = 0.8 if perm[Lo[0]] == Li[0] else 1.7
    return (padded(g.shape[x], g.bytes[x], lin) + padded(g.shape[i], g.bytes[i], lo)) / BW * f + OVH_COPY


def copy_cost(shape, nbytes, p, r):
    if p == r:
        return 0.0
    P, R = PERMS[p], PERMS[r]
    if P[0] == R[0] and (len(P) < 2 or P[1] == R[1]):
        f = 0.45
    elif P[0] == R[0]:
        f = 0.9
    else:
        f = 1.6
    return (padded(shape, nbytes, p) + padded(shape, nbytes, r)) / BW * f + OVH_COPY


def transpose_bitcast_layout(perm, lin):
    """output layout making a transpose free: perm[lo[j]] == lin[j]."""
    pinv = np.argsort(perm)
    return PIDX[tuple(int(pinv[d]) for d in PERMS[lin])]


def layout_law(g, cfg, parts=None):
    """Noise-free runtime (ns) of every config row. cfg: (c, nc, 18) float array.
    parts: optional dict, filled with per-category sums (diagnostics only)."""
    cfg = np.asarray(cfg)
    c = cfg.shape[0]
    n = g.n
    L = [0] * n                  # layout code per node (int or (c,) array)
    eff = {}                     # (node, operand k) -> effective operand layout
    reqs = {}                    # producer -> list of (consumer, required layout)
    total = np.zeros(c, dtype=np.float64)
    const_total = 0.0
    heavy_slack = {}

    cat = ['other']

    def add(v):
        nonlocal total, const_total
        if parts is not None:
            parts[cat[0]] = parts.get(cat[0], 0.0) + v
        if _is_const(v):
            const_total += float(v)
        else:
            total += v

    def require(prod, cons, R):
        if g.op[prod] in FLEXIBLE or len(g.shape[prod]) == 0:
            return
        reqs.setdefault(prod, []).append((cons, R))

    for i in range(n):
        op = int(g.op[i])
        shp = g.shape[i]
        r = len(shp)
        ops = g.operands[i]
        if i in g.cpos:
            j = g.cpos[i]
            ko = block_keys(cfg[:, j, 0:6])
            ko = _squeeze(ko)
            L[i] = _squeeze(umap(lambda k, d=g.default[i], rr=r: resolve(k, d, rr), [ko], c, np.int64))
            nin = 2 if op == O['convolution'] else 1
            for k in range(min(nin, len(ops))):
                v = ops[k]
                kb = _squeeze(block_keys(cfg[:, j, 6 + 6 * k:12 + 6 * k]))
                rv = len(g.shape[v])
                R = _squeeze(umap(lambda kk, p, rr=rv: resolve(kk, p, rr), [kb, L[v]], c, np.int64))
                eff[(i, k)] = R
                if g.op[v] not in FLEXIBLE:
                    if not (_is_const(R) and _is_const(L[v]) and R == L[v]):
                        require(v, i, R)
        elif op in ELEMENTWISE and r > 0:
            same = g.same_shape_ops(i)
            dom = next((v for v in same if g.op[v] not in FLEXIBLE), None)
            L[i] = L[dom] if dom is not None else g.default[i]
            for v in same:
                if v != dom and g.op[v] not in FLEXIBLE and L[v] is not L[i]:
                    if not (_is_const(L[v]) and _is_const(L[i]) and L[v] == L[i]):
                        require(v, i, L[i])
        elif op in FOLLOW0 and r > 0 and ops and len(g.shape[ops[0]]) == r:
            L[i] = L[ops[0]]
            for v in ops[1:]:
                if len(g.shape[v]) == r and v != ops[0] and L[v] is not L[i]:
                    if not (_is_const(L[v]) and _is_const(L[i]) and L[v] == L[i]):
                        require(v, i, L[i])
        elif op == O['reduce'] and ops and len(g.shape[ops[0]]) > r:
            x = ops[0]
            rx = len(g.shape[x])
            rd = set(int(d) for d in g.attr[i][:rx - r])
            ren = {}
            kk = 0
            for d in range(rx):
                if d not in rd:
                    ren[d] = kk
                    kk += 1

            def red_map(code, rd=rd, ren=ren):
                return PIDX[tuple(ren[d] for d in PERMS[code] if d not in rd)]
            L[i] = _squeeze(umap(red_map, [L[x]], c, np.int64)) if r > 0 else 0
        elif op == O['transpose'] and ops and r > 0:
            perm = [int(v) for v in g.attr[i][:r]]
            L[i] = _squeeze(umap(lambda lc, perm=perm: transpose_bitcast_layout(perm, lc), [L[ops[0]]], c, np.int64))
        else:
            L[i] = g.default[i] if r > 0 else 0

    # root tuple wants default layouts
    for v in g.operands[g.root]:
        if len(g.shape[v]) > 0 and g.op[v] not in FLEXIBLE:
            require(v, g.root, g.default[v])

    # ---- node costs
    for i in range(n):
        op = int(g.op[i])
        cat[0] = {26: 'conv', 34: 'dot', 75: 'reshape', 98: 'transpose'}.get(op, 'ew' if op in ELEMENTWISE else 'other')
        ops = g.operands[i]
        shp = g.shape[i]
        r = len(shp)
        if op in (O['parameter'], O['constant'], O['get_tuple_element'], O['tuple'], O['while_'],
                  O['iota']):
            continue
        if op == O['convolution'] and len(ops) >= 2:
            lin = eff.get((i, 0), L[ops[0]])
            lk = eff.get((i, 1), L[ops[1]])
            tc, sl = conv_cost(g, i, lin, lk, L[i])
            add(tc)
            heavy_slack[i] = sl
            add(OVH_OP)
        elif op == O['dot'] and len(ops) >= 2:
            la = eff.get((i, 0), L[ops[0]])
            lw = eff.get((i, 1), L[ops[1]])
            tc, sl = dot_cost(g, i, la, lw, L[i])
            add(tc)
            heavy_slack[i] = sl
            add(OVH_OP)
        elif op == O['reshape'] and ops and r > 0 and len(g.shape[ops[0]]) > 0:
            lin = eff.get((i, 0), L[ops[0]])
            add(umap(lambda a, o: reshape_cost(g, i, a, o), [lin, L[i]], c))
        elif op == O['transpose'] and ops and r > 0:
            lin = eff.get((i, 0), L[ops[0]])
            add(umap(lambda a, o: transpose_cost(g, i, a, o), [lin, L[i]], c))
        elif op in ELEMENTWISE:
            if r == 0:
                add(OVH_OP * 0.1)
                continue
            same = g.same_shape_ops(i)
            fac = ALPHA_EW * (1.3 if op in TRANSCENDENTAL else 1.0) / BW
            sigs = [(g.shape[v], g.bytes[v]) for v in same] + [(shp, g.bytes[i])]

            def ew_cost(code, sigs=sigs, fac=fac):
                return fac * sum(padded_fused(s, b_, code) for s, b_ in sigs)
            add(g.table('ew', i, ew_cost)(L[i]))
            add(OVH_OP * 0.5)
        elif op == O['reduce'] and ops and len(g.shape[ops[0]]) > 0:
            x = ops[0]
            X = g.shape[x]
            rd = set(int(d) for d in g.attr[i][:len(X) - r])

            def red_cost(code, X=X, bx=g.bytes[x], rd=rd):
                Lx = PERMS[code]
                f = 1.0
                if Lx[0] in rd and len(X) > 1:
                    f = 1.7
                elif len(X) > 1 and Lx[1] in rd:
                    f = 1.25
                return 0.45 * padded_fused(X, bx, code) / BW * f
            add(g.table('red', i, red_cost)(L[x]))
            add(OVH_OP)
        elif op in (O['reduce_window'], O['select_and_scatter']) and r > 0:
            x = ops[0]
            ws = [int(v) for v in g.wsize[i][:r]]

            def rw_cost(code, ws=ws, x=x):
                Lx = PERMS[code]
                f = 1.5 if ws[Lx[0]] > 1 else 1.0
                return 0.3 * (padded_fused(g.shape[x], g.bytes[x], code) + padded_fused(shp, g.bytes[i], code)) / BW * f
            add(g.table('rw', i, rw_cost)(L[i]))
            add(OVH_OP)
        elif op == O['concatenate'] and r > 0:
            d = int(g.attr[i][0])
            ins = [(g.shape[v], g.bytes[v]) for v in ops if len(g.shape[v]) == r]

            def cat_cost(code, ins=ins, d=d):
                Lc = PERMS[code]
                f = 1.6 if (Lc[0] == d and any(s[d] % 128 for s, _ in ins)) else 1.0
                return 0.3 * (sum(padded_fused(s, b_, code) for s, b_ in ins) + padded_fused(shp, g.bytes[i], code)) / BW * f
            add(g.table('cat', i, cat_cost)(L[i]))
            add(OVH_OP)
        elif op in (O['all_reduce'], O['all_gather']) and r > 0:
            add(g.table('ar', i, lambda code, shp=shp, bb=g.bytes[i]: padded(shp, bb, code) / ICI_BW)(L[i]))
            add(OVH_OP * 3)
        elif op in FOLLOW0 and r > 0:
            ins = [(g.shape[v], g.bytes[v]) for v in ops if len(g.shape[v]) == r]

            def mv_cost(code, ins=ins):
                return 0.3 * (sum(padded_fused(s, b_, code) for s, b_ in ins) + padded_fused(shp, g.bytes[i], code)) / BW
            add(g.table('mv', i, mv_cost)(L[i]))
            add(OVH_OP)
        elif op == O['broadcast'] and r > 0:
            add(0.1 * padded(shp, g.bytes[i], g.default[i]) / BW)
        elif op in (O['gather'], O['scatter']) and r > 0:
            add(0.5 * padded(shp, g.bytes[i], g.default[i]) / BW + OVH_OP)
        elif r > 0:
            add(0.3 * padded(shp, g.bytes[i], g.default[i]) / BW)

    # ---- copies (one per producer and distinct target layout)
    cat[0] = 'copy'
    feed = {}
    for v, lst in reqs.items():
        P = L[v]
        shp, nb = g.shape[v], g.bytes[v]
        seen = []
        for (u, R) in lst:
            need = np.broadcast_to(np.asarray(R) != np.asarray(P), (c,))
            for S in seen:
                need = need & (np.asarray(R) != np.asarray(S))
            seen.append(R)
            if not need.any():
                continue
            cc = umap(g.memo('copy', v, lambda p, rr, shp=shp, nb=nb: copy_cost(shp, nb, p, rr)), [P, R], c)
            cc = np.where(need, cc, 0.0)
            if u in heavy_slack:
                feed[u] = feed.get(u, 0.0) + cc
            add(cc)
    for u, fc in feed.items():
        hid = np.minimum(fc, HIDE * np.asarray(heavy_slack[u]))
        add(-hid)
    return total + const_total + OVH_PROGRAM


# ----------------------------------------------------------------------------------------
# Graph specs and fitting to the requested size ranges
# ----------------------------------------------------------------------------------------
def sample_vision_spec(rng):
    sd = 3 if rng.random() < 0.2 else 2
    if sd == 3:
        arch = str(rng.choice(['unet', 'vgg', 'resnet'], p=[0.6, 0.2, 0.2]))
        N = int(rng.choice([1, 2, 4]))
        H = int(rng.choice([16, 24, 32, 48, 64]))
        c0 = int(rng.choice([8, 16, 32]))
        cin = int(rng.choice([1, 4]))
    else:
        arch = str(rng.choice(['resnet', 'vgg', 'mobilenet', 'inception', 'unet'],
                              p=[0.3, 0.15, 0.15, 0.15, 0.25]))
        N = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
        H = int(rng.choice([28, 32, 56, 64, 96, 112, 128, 224]))
        c0 = int(rng.choice([16, 32, 48, 64, 96, 128]))
        cin = 3
    while N * H ** sd > 2 ** 21 and N > 1:
        N //= 2
    while N * H ** sd > 2 ** 21:
        H //= 2
    return dict(kind='vision', seed=int(rng.integers(2 ** 31)), sd=sd, arch=arch, N=N, H=H, c0=c0,
                cin=cin, act='bf16' if rng.random() < 0.65 else 'f32',
                classes=int(rng.choice([2, 4, 10, 21, 100, 1000])), train=bool(rng.random() < 0.6),
                dp=bool(rng.random() < 0.5), loops=int(rng.integers(0, 3)),
                every=int(rng.integers(2, 4)), depth=int(rng.integers(2, 5)),
                flatten=bool(rng.random() < 0.3))


def sample_nlp_spec(rng):
    B = int(rng.choice([1, 2, 4, 8, 16, 32]))
    S = int(rng.choice([64, 128, 256, 512]))
    while B * S > 8192:
        B //= 2
    D = int(rng.choice([128, 256, 384, 512, 768, 1024]))
    hd = int(rng.choice([32, 64, 128])) if D >= 256 else 32
    V = int(rng.choice([1000, 4096, 8192, 30522, 32000]))
    while B * S * V > 2 ** 27 and V > 1000:
        V //= 2
    return dict(kind='nlp', seed=int(rng.integers(2 ** 31)), B=B, S=S, D=D, H=max(1, D // hd),
                F=int(rng.choice([2, 4])) * D, V=V, act='bf16' if rng.random() < 0.7 else 'f32',
                train=bool(rng.random() < 0.6), dp=bool(rng.random() < 0.4),
                loops=int(rng.integers(0, 3)), mask=bool(rng.random() < 0.5),
                gelu=bool(rng.random() < 0.7), tied=bool(rng.random() < 0.4))


def _tensor_bytes(n):
    return n.nelem() * int(ET_BYTES[ET[n.et]])


def fit_layout_graph(rng, family, nrange, crange, max_layers=60):
    best = None
    for attempt in range(60):
        spec = sample_vision_spec(rng) if family == 'xla' else sample_nlp_spec(rng)
        target = math.exp(rng.uniform(math.log(nrange[0]), math.log(nrange[1])))
        chosen = None
        for L in range(1, max_layers + 1):
            b = build_vision(spec, L) if family == 'xla' else build_nlp(spec, L)
            n = len(b.pre) + len(b.main)
            if n > nrange[1]:
                break
            chosen = b
            if n >= target:
                break
        if chosen is None:
            continue
        b = chosen
        n = len(b.pre) + len(b.main)
        cand = [x for x in b.main if x.op in CONFIGURABLE_OPS and x.rank >= 1 and x.ops
                and x.ops[0].rank >= 1]
        if n < nrange[0] or len(cand) < crange[0]:
            if best is None or n > best[1]:
                best = (b, n, spec)
            continue
        hi = min(crange[1], len(cand))
        nc = int(rng.integers(crange[0], hi + 1))
        pos = {id(x): k for k, x in enumerate(b.main)}
        heavy = sorted([x for x in cand if x.op in (O['convolution'], O['dot'])],
                       key=lambda x: (-_tensor_bytes(x), pos[id(x)]))
        light = sorted([x for x in cand if x.op not in (O['convolution'], O['dot'])],
                       key=lambda x: (-_tensor_bytes(x), pos[id(x)]))
        n_light = min(len(light), max(nc - len(heavy), int(round(nc * rng.uniform(0.1, 0.5)))))
        n_heavy = min(len(heavy), nc - n_light)
        n_light = nc - n_heavy
        for x in heavy[:n_heavy] + light[:n_light]:
            x.cfg = True
        return b, spec
    raise RuntimeError('could not fit a %s graph into %s nodes / %s configurable' % (family, nrange, crange))


def finalize_layout_graph(b, rng):
    nodes, splits = b.finalize()
    p_nolay = rng.uniform(0.0, 0.5)
    for x in b.main:
        if x.rank >= 1 and not x.cfg and x.op not in (O['convolution'], O['dot']) \
                and rng.random() < p_nolay:
            x.layout = None
    arrs = module_arrays(nodes, splits)
    arrs['node_config_ids'] = np.array(sorted(x.id for x in nodes if x.cfg), dtype=np.int64)
    return arrs


# ----------------------------------------------------------------------------------------
# Layout config samplers
# ----------------------------------------------------------------------------------------
def _node_prefs(g, i):
    """preferred (lane, sublane) dims for output / input / kernel of configurable node i."""
    op = int(g.op[i])
    r = len(g.shape[i])
    ops = g.operands[i]
    dflt = PERMS[g.default[i]]
    if op == O['convolution']:
        c = g.cdn[i]
        sd = r - 2
        spatial_out = [d for d in range(r) if d not in (int(c[12]), int(c[13]))]
        return dict(out=[int(c[13]), int(c[12])] + spatial_out[-1:],
                    inp=[int(c[1]), int(c[0])], ker=[int(c[7]), int(c[6])])
    if op == O['dot']:
        nb = r - 2
        return dict(out=[nb + 1, nb], inp=[nb + 1, nb], ker=[])
    x = ops[0]
    return dict(out=list(dflt[:2]), inp=list(PERMS[g.default[x]][:2]), ker=[])


def _rand_block(rng, r, pref, p_unset, p_partial):
    blk = [-1] * 6
    if r == 0 or rng.random() < p_unset:
        return blk
    dims = list(range(r))
    if pref and rng.random() < 0.5 and pref[0] < r:
        m = pref[0]
    else:
        m = int(rng.integers(r))
    rest = [d for d in dims if d != m]
    if not rest:
        blk[0] = m
        return blk
    if len(pref) > 1 and pref[1] != m and pref[1] < r and rng.random() < 0.35:
        s = pref[1]
    else:
        s = int(rng.choice(rest))
    others = [d for d in rest if d != s]
    if r > 2 and rng.random() < p_partial:
        blk[0], blk[1] = m, s
        return blk
    rng.shuffle(others)
    full = [m, s] + others
    blk[:r] = full
    return blk


def _rand_blocks(rng, c, r, pref, p_unset, p_partial):
    """vectorised _rand_block for c configs."""
    blk = np.full((c, 6), -1, dtype=np.int64)
    if r == 0:
        return blk
    keys = rng.random((c, r))
    if pref and pref[0] < r:
        sel = rng.random(c) < 0.5
        keys[sel, pref[0]] = -2.0
    if len(pref) > 1 and pref[1] < r:
        sel = rng.random(c) < 0.35
        keys[sel, pref[1]] = np.minimum(keys[sel, pref[1]], -1.0)
    perm = np.argsort(keys, axis=1)
    blk[:, :r] = perm
    if r > 2:
        part = rng.random(c) < p_partial
        blk[part, 2:] = -1
    unset = rng.random(c) < p_unset
    blk[unset] = -1
    return blk


def _explicit(code):
    blk = [-1] * 6
    p = PERMS[code]
    blk[:len(p)] = list(p)
    return blk


class ConfigSpace:
    def __init__(self, g):
        self.g = g
        self.nc = len(g.cids)
        self.info = []
        for i in g.cids:
            i = int(i)
            ops = g.operands[i]
            r_out = len(g.shape[i])
            r_in = len(g.shape[ops[0]]) if ops else 0
            r_k = len(g.shape[ops[1]]) if (g.op[i] == O['convolution'] and len(ops) > 1) else 0
            self.info.append(dict(i=i, r_out=r_out, r_in=r_in, r_k=r_k, pref=_node_prefs(g, i),
                                  d_out=g.default[i],
                                  d_in=g.default[ops[0]] if ops else 0,
                                  d_k=g.default[ops[1]] if r_k else 0))

    def random_configs(self, rng, c):
        """Random search: each config re-draws a random subset of node layouts."""
        out = np.full((c, self.nc, 18), -1.0, dtype=np.float32)
        p_unset = rng.uniform(0.05, 0.25)
        p_partial = rng.uniform(0.2, 0.8)
        q = rng.uniform(0.3, 0.95, size=c)
        for j, inf in enumerate(self.info):
            chg = rng.random(c) < q
            pr = inf['pref']
            out[:, j, 0:6] = np.where(chg[:, None], _rand_blocks(rng, c, inf['r_out'], pr['out'], p_unset, p_partial), -1)
            m_in = chg & (rng.random(c) < 0.7)
            out[:, j, 6:12] = np.where(m_in[:, None], _rand_blocks(rng, c, inf['r_in'], pr['inp'], p_unset, p_partial), -1)
            if inf['r_k']:
                m_k = chg & (rng.random(c) < 0.7)
                out[:, j, 12:18] = np.where(m_k[:, None], _rand_blocks(rng, c, inf['r_k'], pr['ker'], p_unset, p_partial), -1)
        return out

    def default_base(self, explicit):
        base = np.full((self.nc, 18), -1.0, dtype=np.float32)
        if explicit:
            for j, inf in enumerate(self.info):
                if inf['r_out']:
                    base[j, 0:6] = _explicit(inf['d_out'])
        return base

    def mutate(self, rng, cfg):
        cfg = cfg.copy()
        nm = 1 + min(int(rng.geometric(0.55)) - 1, 3)
        for _ in range(nm):
            j = int(rng.integers(self.nc))
            inf = self.info[j]
            u = rng.random()
            if inf['r_k'] and u < 0.15:
                sl, r, d, pref = slice(12, 18), inf['r_k'], inf['d_k'], inf['pref']['ker']
            elif u < 0.45 and inf['r_in']:
                sl, r, d, pref = slice(6, 12), inf['r_in'], inf['d_in'], inf['pref']['inp']
            else:
                sl, r, d, pref = slice(0, 6), inf['r_out'], inf['d_out'], inf['pref']['out']
            if r == 0:
                continue
            dl = list(PERMS[d])
            v = rng.random()
            blk = [-1] * 6
            if v < 0.2:
                pass                                   # back to compiler default
            elif v < 0.4:
                blk = _explicit(d)
            elif v < 0.6 and r >= 2:
                sw = [dl[1], dl[0]] + dl[2:]           # swap the two minor dims
                blk[:r] = sw
            elif v < 0.8 and r >= 2:
                other = [x for x in range(r) if x != dl[0]]
                blk[0], blk[1] = dl[0], int(rng.choice(other))
                if r == 2:
                    blk[:2] = [dl[0], blk[1]]
            elif v < 0.93 and len(pref) >= 2 and r >= 2 and pref[0] != pref[1]:
                blk[0], blk[1] = pref[0], pref[1]
            else:
                blk = _rand_block(rng, r, pref, 0.0, 0.5)
            cfg[j, sl] = blk
        return cfg

    def default_search(self, rng, c, evaluate):
        """Compiler-like local search around the default, guided by (noisy) measurements."""
        base = self.default_base(explicit=bool(rng.random() < 0.5))
        cfgs = [base]
        meas = list(evaluate(base[None]) * np.exp(rng.normal(0, 0.002, 1)))
        gen = max(64, c // 8)
        while len(cfgs) < c:
            m = min(gen, c - len(cfgs))
            arr = np.array(meas)
            kids, pm = [], []
            for _ in range(2 * m):
                a, bb = rng.integers(len(cfgs), size=2)
                if rng.random() < 0.3:
                    a = int(np.argsort(arr)[int(rng.integers(min(8, len(arr))))])
                p = a if arr[a] <= arr[bb] else bb
                pm.append(arr[p])
                kids.append(cfgs[p].copy() if rng.random() < 0.1 else self.mutate(rng, cfgs[p]))
            kids = np.stack(kids)
            t = evaluate(kids)
            # the search's own cost model screens out most candidates it expects to be slow
            est = t * np.exp(rng.normal(0, 0.03, len(t)))
            keep = (est <= 1.03 * np.array(pm)) | (rng.random(len(t)) < 0.12)
            idx = np.flatnonzero(keep)[:m]
            if len(idx) < m:
                idx = np.concatenate([idx, np.flatnonzero(~keep)[:m - len(idx)]])
            t = t[idx] * np.exp(rng.normal(0, 0.002, len(idx)))
            cfgs.extend(list(kids[idx]))
            meas.extend(list(t))
        out = np.stack(cfgs[:c]).astype(np.float32)
        perm = rng.permutation(c)
        return out[perm]


# ----------------------------------------------------------------------------------------
# Tile collection: fused kernels
# ----------------------------------------------------------------------------------------
def _act_layout(r, style):
    if r >= 3 and style == 'tpu':
        return tuple([r - 1, 0] + list(range(r - 2, 0, -1)))
    return tuple(range(r - 1, -1, -1))


def build_tile_kernel(rng, nrange):
    """A fused computation (inner params ... root), outer params and the fusion node."""
    kind = str(rng.choice(['conv', 'dot', 'loop', 'reduce', 'transpose'], p=[0.3, 0.25, 0.2, 0.15, 0.1]))
    style = 'tpu' if rng.random() < 0.6 else 'desc'
    et = 'bf16' if rng.random() < 0.6 else 'f32'
    target = int(rng.integers(nrange[0], nrange[1] + 1))
    b = Builder(rng)
    saved = b.begin_sub()
    inner = []

    def iparam(et_, shape, layout='default'):
        p = b.add(O['parameter'], et_, shape, pnum=len(inner), layout=layout)
        inner.append(p)
        return p

    if kind == 'conv':
        N = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
        Hs = int(rng.choice([7, 13, 14, 26, 28, 56, 112]))
        cin = int(rng.choice([3, 16, 32, 64, 96, 128, 192, 256, 384, 512]))
        cout = int(rng.choice([16, 32, 64, 128, 192, 256, 384, 512, 1024]))
        k = int(rng.choice([1, 3, 3, 5, 7]))
        st = int(rng.choice([1, 1, 2]))
        while N * Hs * Hs * max(cin, cout) > 2 ** 26 and N > 1:
            N //= 2
        x = iparam(et, (N, Hs, Hs, cin), layout=_act_layout(4, style))
        w = iparam(et, (k, k, cin, cout))
        ho = _ceil_div(Hs, st)
        cdn = dict(ib=0, **{'if': 3}, **{'is': [1, 2]}, kif=2, kof=3, ks=[0, 1], ob=0, of=3)
        lo = (k - 1) // 2
        y = b.add(O['convolution'], et, (N, ho, ho, cout), [x, w], cdn=cdn,
                  win=win_dims([k, k], [st, st], [(lo, k - 1 - lo)] * 2), fgc=1, bgc=1,
                  layout=_act_layout(4, style))
    elif kind == 'dot':
        M = int(rng.choice([128, 256, 512, 1024, 2048, 4096, 8192, 16384]))
        K = int(rng.choice([64, 128, 256, 512, 768, 1024, 2048, 4096]))
        Nn = int(rng.choice([64, 128, 256, 512, 1024, 2048, 4096, 8192]))
        if rng.random() < 0.3:
            Bt = int(rng.choice([2, 4, 8, 16]))
            a = iparam(et, (Bt, M // 4, K))
            w = iparam(et, (Bt, K, Nn))
            y = b.add(O['dot'], et, (Bt, M // 4, Nn), [a, w])
        else:
            a = iparam(et, (M, K))
            w = iparam(et, (K, Nn))
            y = b.add(O['dot'], et, (M, Nn), [a, w])
    else:
        r = int(rng.choice([2, 3, 4], p=[0.3, 0.3, 0.4]))
        dims = [int(rng.choice([2, 4, 8, 16, 32, 64, 128])), int(rng.choice([7, 14, 28, 56, 128, 512, 2048])),
                int(rng.choice([14, 28, 56, 112, 256, 1024])), int(rng.choice([128, 256, 384, 768, 1024, 2048, 4096]))]
        while math.prod(dims[4 - r:]) > 2 ** 25:
            j = max(range(4 - r, 4), key=lambda q: dims[q])
            dims[j] //= 2
        shape = tuple(dims[4 - r:])
        lay = _act_layout(r, style)
        if kind == 'transpose':
            src_lay = tuple(range(r - 1, -1, -1)) if style == 'tpu' else _act_layout(r, 'tpu')
            if src_lay == lay:
                src_lay = tuple([lay[1], lay[0]] + list(lay[2:]))
            x = iparam(et, shape, layout=src_lay)
            y = b.add(O['copy'], et, shape, [x], layout=lay)
        else:
            x = iparam(et, shape, layout=lay)
            y = b.ew('multiply', x, iparam(et, shape, layout=lay))
            y.layout = lay
    main_shape = y.shape
    lay_y = y.layout if y.layout != 'default' else _act_layout(y.rank, 'desc')
    # epilogue to reach the node budget
    cur = y
    r = cur.rank
    reserve = 8 if kind == 'reduce' else 1

    def count():
        return len(b.pre) + len(b.cur) + len(inner) + 1

    while count() + reserve + 4 <= target:
        u = rng.random()
        if u < 0.3:
            vec = iparam('f32' if rng.random() < 0.5 else cur.et, (cur.shape[-1],))
            vb = b.bcast(b.convert(vec, cur.et), cur.shape, [r - 1])
            vb.layout = lay_y
            cur = b.ew('add' if rng.random() < 0.6 else 'multiply', cur, vb)
        elif u < 0.45:
            cur = b.ew(str(rng.choice(['maximum', 'minimum'])), cur, b.scalar_b(cur.shape, cur.et))
        elif u < 0.6:
            cur = b.ew(str(rng.choice(['exponential', 'tanh', 'rsqrt', 'logistic', 'negate', 'abs'])), cur)
        elif u < 0.75:
            t = b.convert(cur, 'f32' if cur.et != 'f32' else 'bf16')
            t.layout = lay_y
            cur = b.convert(t, cur.et)
        elif u < 0.9:
            other = iparam(cur.et, cur.shape, layout=lay_y)
            cur = b.ew(str(rng.choice(['add', 'subtract', 'multiply'])), cur, other)
        else:
            c_ = b.add(O['compare'], 'pred', cur.shape, [cur, b.scalar_b(cur.shape, cur.et)], layout=lay_y)
            cur = b.ew('select', c_, cur, b.scalar_b(cur.shape, cur.et), et=cur.et)
        cur.layout = lay_y
    if kind == 'reduce':
        rd = [int(rng.integers(2))] if r == 2 else (list(range(r - 1)) if rng.random() < 0.4 else list(range(1, r - 1)))
        red = b.reduce(b.convert(cur, 'f32'), rd)
        kr = red.rank
        red.layout = tuple(range(kr - 1, -1, -1))
        cur = red
    root = cur
    for n_ in b.cur:
        if n_.layout == 'default' and n_.rank >= 2 and n_.shape == main_shape:
            n_.layout = lay_y
    inner_root = b.end_sub(saved)
    # outer computation: parameters in the same order + fusion
    outer = []
    for k_, p in enumerate(inner):
        q = b.add(O['parameter'], p.et, p.shape, pnum=k_, layout=p.layout)
        outer.append(q)
    fz = b.add(O['fusion'], root.et, root.shape, outer, calls=[inner_root], layout=root.layout)
    fz.meta = kind
    return b


def tile_info(node_feat, node_opcode, edge_index):
    g = LayoutGraph(node_feat, node_opcode, edge_index, np.zeros(0, dtype=np.int64))
    f = g.n - 1
    info = dict(g=g, f=f, O=g.shape[f], bo=g.bytes[f], Lo=PERMS[g.default[f]])
    outer = set(v for v in g.operands[f] if g.op[v] == O['parameter'])
    info['params'] = [(g.shape[v], g.bytes[v], PERMS[g.default[v]]) for v in g.operands[f]
                      if g.op[v] == O['parameter']]
    inner = [i for i in range(g.n - 1) if i not in outer]
    heavy = [i for i in inner if g.op[i] in (O['convolution'], O['dot'])]
    info['heavy'] = heavy[0] if heavy else None
    info['nv'] = sum(1 for i in inner if g.op[i] in ELEMENTWISE and g.shape[i])
    info['nt'] = sum(1 for i in inner if g.op[i] in TRANSCENDENTAL and g.shape[i])
    reds = [i for i in inner if g.op[i] == O['reduce'] and g.operands[i]
            and len(g.shape[g.operands[i][0]]) > len(g.shape[i])]
    info['reduce'] = reds[-1] if reds else None
    if reds:
        xr = g.operands[reds[-1]][0]
        X = g.shape[xr]
        rd = [int(d) for d in g.attr[reds[-1]][:len(X) - len(g.shape[reds[-1]])]]
        Lx = PERMS[g.default[xr]]
        ux = [1] * len(X)
        ux[Lx[0]] = 128
        if len(X) >= 2:
            ux[Lx[1]] = 8
        info['red_x'] = (X, g.bytes[xr], Lx, rd, ux)
    cps = [i for i in inner if g.op[i] in (O['copy'], O['transpose'])]
    info['copy'] = cps[0] if cps else None
    r = len(info['O'])
    units = [1] * r
    if r >= 1:
        units[info['Lo'][0]] = 128
    if r >= 2:
        units[info['Lo'][1]] = 8
    info['units'] = units
    return info


def _runs(extents, full, lay, nbytes):
    """bytes of the longest contiguous run of a tile in a layout (minor to major)."""
    run = np.full(np.shape(extents[0]), float(nbytes))
    cont = np.ones(np.shape(extents[0]), dtype=bool)
    for d in lay:
        run = np.where(cont, run * extents[d], run)
        cont = cont & (extents[d] >= full[d])
    return run


def _dma(run):
    return run / (run + 2048.0)


def tile_law(info, cf):
    """Noise-free runtime (ns) of each tile config row. cf: (c, 24)."""
    cf = np.asarray(cf, dtype=np.float64)
    c = cf.shape[0]
    Os = info['O']
    r = len(Os)
    units = info['units']
    bo = info['bo']
    ob = np.maximum(np.rint(cf[:, 8:8 + r]), 1)
    t = [np.minimum(ob[:, d] * units[d], _ceil_div(Os[d], units[d]) * units[d]) for d in range(r)]
    steps_d = [np.ceil(Os[d] / t[d]) for d in range(r)]
    steps = np.prod(np.stack(steps_d), axis=0) if r else np.ones(c)
    telem = np.prod(np.stack(t), axis=0) if r else np.ones(c)
    out_tile = telem * bo
    run_o = _runs(t, Os, info['Lo'], bo)
    g = info['g']
    vpu = (info['nv'] + 3.0 * info['nt']) * telem / VPU_RATE
    h = info['heavy']
    if h is not None and g.op[h] == O['dot']:
        a, w = g.operands[h][0], g.operands[h][1]
        A, W, Y = g.shape[a], g.shape[w], g.shape[h]
        nb = len(Y) - 2
        K, N = A[-1], Y[-1]
        kb = np.maximum(np.rint(cf[:, 0:2]), 1)
        Kt = np.minimum(kb[:, 0] * 8, _ceil_div(K, 8) * 8)
        Nk = np.minimum(kb[:, 1] * 128, _ceil_div(N, 128) * 128)
        tM = t[nb] if len(Y) == r else np.full(c, float(Y[nb]))
        tN = t[nb + 1] if len(Y) == r else np.full(c, float(N))
        tB = np.prod(np.stack([t[d] for d in range(nb)]), axis=0) if nb and len(Y) == r else np.ones(c)
        Ne = np.minimum(tN, Nk)
        npass = np.ceil(tN / Nk)
        kch = np.ceil(K / Kt)
        ba, bw = g.bytes[a], g.bytes[w]
        a_t = tB * tM * Kt * ba
        w_t = tB * Kt * Ne * bw
        flops = 2.0 * tB * tM * Kt * Ne
        util = _fill(Ne, 128) * np.minimum(1.0, Kt / 128.0) ** 0.5 \
            * np.minimum(1.0, tM / 128.0) ** 0.35
        comp = flops / (PEAK.get(ba, PEAK[4]) * util)
        inner = npass * kch
        mem = (a_t / _dma(Kt * ba) + w_t / _dma(Ne * bw)) / BW + out_tile / _dma(run_o) / BW / inner
        vm = 2.0 * (a_t + w_t) + tB * tM * tN * 4.0 + out_tile
        spill = 1.0 + 2.0 * np.maximum(0.0, vm / VMEM - 1.0)
        comp = comp + vpu / inner
        step = np.maximum(comp, mem * spill) + 0.1 * np.minimum(comp, mem * spill) + STEP_OVH
        tot = steps * inner * step + (a_t + w_t) / BW
    elif h is not None and g.op[h] == O['convolution']:
        x, w = g.operands[h][0], g.operands[h][1]
        I, Kk, Y = g.shape[x], g.shape[w], g.shape[h]
        cd = g.cdn[h]
        sd = len(I) - 2
        kb = np.maximum(np.rint(cf[:, 0:sd + 2]), 1)
        ksz = [Kk[d] for d in range(sd)]
        kt = [np.minimum(kb[:, d], ksz[d]) for d in range(sd)]
        cin, cout = Kk[sd], Kk[sd + 1]
        cin_t = np.minimum(kb[:, sd] * 8, _ceil_div(cin, 8) * 8)
        cout_t = np.minimum(kb[:, sd + 1] * 128, _ceil_div(cout, 128) * 128)
        stride = [max(1, int(v)) for v in g.wstride[h][:sd]]
        tN_ = t[0]
        ts = [t[1 + d] for d in range(sd)]
        tC = t[r - 1]
        Ce = np.minimum(tC, cout_t)
        npass = np.ceil(tC / cout_t)
        tap_ch = np.prod(np.stack([np.ceil(ksz[d] / kt[d]) for d in range(sd)]), axis=0)
        cin_ch = np.ceil(cin / cin_t)
        inner = npass * tap_ch * cin_ch
        bi, bk = g.bytes[x], g.bytes[w]
        halo = np.prod(np.stack([(ts[d] - 1) * stride[d] + kt[d] for d in range(sd)]), axis=0)
        in_t = tN_ * halo * cin_t * bi
        w_t = np.prod(np.stack(kt), axis=0) * cin_t * Ce * bk
        rows = tN_ * np.prod(np.stack(ts), axis=0)
        flops = 2.0 * rows * np.prod(np.stack(kt), axis=0) * cin_t * Ce
        util = _fill(Ce, 128) \
            * np.minimum(1.0, cin_t * np.prod(np.stack(kt), axis=0) / 128.0) ** 0.5 \
            * np.minimum(1.0, rows / 128.0) ** 0.35
        comp = flops / (PEAK.get(bi, PEAK[4]) * util) + vpu / inner
        mem = (in_t / _dma(cin_t * bi) + w_t / _dma(Ce * bk)) / BW + out_tile / _dma(run_o) / BW / inner
        vm = 2.0 * (in_t + w_t) + rows * tC * 4.0 + out_tile
        spill = 1.0 + 2.0 * np.maximum(0.0, vm / VMEM - 1.0)
        step = np.maximum(comp, mem * spill) + 0.1 * np.minimum(comp, mem * spill) + STEP_OVH
        tot = steps * inner * step + (in_t + w_t) / BW
    elif info['reduce'] is not None:
        X, bx, Lx, rd, ux = info['red_x']
        kb = np.maximum(np.rint(cf[:, 0:len(rd)]), 1)
        kc = [np.minimum(kb[:, k] * ux[d], _ceil_div(X[d], ux[d]) * ux[d]) for k, d in enumerate(rd)]
        chunks = np.prod(np.stack([np.ceil(X[d] / kc[k]) for k, d in enumerate(rd)]), axis=0)
        relem = np.prod(np.stack(kc), axis=0)
        in_el = telem * relem
        in_t = in_el * bx
        # contiguous run of the input tile in its own layout
        kept = [d for d in range(len(X)) if d not in rd]
        ext = [None] * len(X)
        for k, d in enumerate(rd):
            ext[d] = kc[k]
        for j, d in enumerate(kept):
            ext[d] = t[j] if j < r else np.ones(c)
        run_i = _runs(ext, X, Lx, bx)
        cross = (Lx[0] in rd)
        comp = (info['nv'] + 3.0 * info['nt']) * in_el / VPU_RATE + (in_el / XLU_RATE if cross else 0.0)
        mem = in_t / _dma(run_i) / BW + out_tile / _dma(run_o) / BW / chunks
        vm = 2.0 * in_t + telem * 4.0 + out_tile
        spill = 1.0 + 2.0 * np.maximum(0.0, vm / VMEM - 1.0)
        step = np.maximum(comp, mem * spill) + 0.1 * np.minimum(comp, mem * spill) + STEP_OVH
        tot = steps * chunks * step + in_t / BW
    else:
        onel = float(math.prod(Os)) if r else 1.0
        in_t = np.zeros(c)
        in_eff = np.zeros(c)
        cp = info['copy']
        for (ps, pb, pl) in info['params']:
            pel = float(math.prod(ps)) if ps else 1.0
            if ps == Os or pel >= onel:
                bt = telem * pb
                run = _runs(t, Os, pl, pb) if len(ps) == r else run_o
            else:
                bt = np.minimum(pel, np.maximum(telem * pel / onel, t[info['Lo'][0]] if r else 1.0)) * pb
                run = bt
            in_t = in_t + bt
            in_eff = in_eff + bt / _dma(run)
        mem = (in_eff + out_tile / _dma(run_o)) / BW
        comp = vpu
        if cp is not None:
            src = PERMS[g.default[g.operands[cp][0]]] if g.operands[cp] else info['Lo']
            if src[0] != info['Lo'][0]:
                comp = comp + telem / XLU_RATE
        vm = 2.0 * (in_t + out_tile)
        spill = 1.0 + 2.0 * np.maximum(0.0, vm / VMEM - 1.0)
        step = np.maximum(comp, mem * spill) + 0.1 * np.minimum(comp, mem * spill) + STEP_OVH
        tot = steps * step + in_t / BW
    return tot


def _with_sums(rows, nk, r):
    """sums and products of the listed bounds (product 0 when no bound is listed)."""
    rows = rows.copy()
    rows[:, 6] = rows[:, 0:nk].sum(axis=1)
    rows[:, 7] = np.prod(rows[:, 0:nk], axis=1) if nk else 0.0
    rows[:, 14] = rows[:, 8:8 + r].sum(axis=1)
    rows[:, 15] = np.prod(rows[:, 8:8 + r], axis=1) if r else 0.0
    return rows


def _bound_choices(n_units):
    ch = set([1 << k for k in range(0, 20) if (1 << k) <= n_units] + [n_units])
    ch |= set(d for d in range(1, min(n_units, 64) + 1) if n_units % d == 0)
    return sorted(ch)


def tile_space(info):
    """per-position choice lists: kernel bounds (positions 0..5), output bounds (8..)."""
    Os = info['O']
    r = len(Os)
    units = info['units']
    g = info['g']
    h = info['heavy']
    ochoice = [_bound_choices(_ceil_div(Os[d], units[d])) for d in range(r)]
    kchoice = []
    if h is not None and g.op[h] == O['dot']:
        A = g.shape[g.operands[h][0]]
        Y = g.shape[h]
        kchoice = [_bound_choices(_ceil_div(A[-1], 8)), _bound_choices(_ceil_div(Y[-1], 128))]
    elif h is not None:
        Kk = g.shape[g.operands[h][1]]
        sd = len(Kk) - 2
        kchoice = [list(range(1, Kk[d] + 1)) for d in range(sd)] + \
            [_bound_choices(_ceil_div(Kk[sd], 8)), _bound_choices(_ceil_div(Kk[sd + 1], 128))]
    elif info['reduce'] is not None:
        X, bx, Lx, rd, ux = info['red_x']
        kchoice = [_bound_choices(_ceil_div(X[d], ux[d])) for d in rd]
    return kchoice, ochoice


def _tile_rows(kchoice, ochoice, idx):
    rows = np.zeros((idx.shape[0], 24), dtype=np.float64)
    for p, ch in enumerate(kchoice):
        rows[:, p] = np.asarray(ch, dtype=np.float64)[idx[:, p]]
    for p, ch in enumerate(ochoice):
        rows[:, 8 + p] = np.asarray(ch, dtype=np.float64)[idx[:, len(kchoice) + p]]
    return _with_sums(rows, len(kchoice), len(ochoice))


def tile_candidates(info, rng, c):
    """Tile configs (c, 24) as an autotuner would try them, and the compiler default's row."""
    kchoice, ochoice = tile_space(info)
    allch = kchoice + ochoice
    sizes = [len(ch) for ch in allch]
    space = int(np.prod(sizes)) if sizes else 1
    if space <= 200000:
        grids = np.meshgrid(*[np.arange(k) for k in sizes], indexing='ij')
        idx = np.stack([gg.ravel() for gg in grids], axis=1) if sizes else np.zeros((1, 0), dtype=int)
    else:
        idx = np.stack([rng.integers(k, size=200000) for k in sizes], axis=1)
        idx = np.unique(idx, axis=0)
    rows = _tile_rows(kchoice, ochoice, idx)
    # the autotuner never tries absurdly small tiles
    Os, units, bo = info['O'], info['units'], info['bo']
    r = len(Os)
    tl = [np.minimum(rows[:, 8 + d] * units[d], _ceil_div(Os[d], units[d]) * units[d]) for d in range(r)]
    tb = np.prod(np.stack(tl), axis=0) * bo if r else np.full(len(rows), float(bo))
    ob_total = float(math.prod(Os)) * bo if r else float(bo)
    y_all = None
    thr = min(ob_total, 128 * 1024.0)
    while True:
        keep = tb >= thr
        if keep.sum() >= min(c, len(rows)) or thr < 1:
            break
        thr /= 2
    rows = rows[keep]
    # and drops candidates its cost model predicts to be hopeless (> 30x its best guess)
    sub = rows if len(rows) <= 6000 else rows[rng.choice(len(rows), 6000, replace=False)]
    est_sub = tile_law(info, sub) * np.exp(rng.normal(0, 0.15, len(sub)))
    dflt = sub[int(np.argmin(est_sub))]
    if len(rows) > c:
        est = tile_law(info, rows)
        ok = est <= 30.0 * est.min()
        if ok.sum() >= c:
            rows = rows[ok]
    rest = rows[~np.all(rows == dflt, axis=1)]
    take = min(c - 1, len(rest))
    pick = rest[rng.choice(len(rest), take, replace=False)] if take > 0 else rest[:0]
    out = np.concatenate([dflt[None], pick], axis=0)
    if len(out) < c:          # tiny search space: re-measurements of the same configs
        out = np.concatenate([out, out[rng.integers(len(out), size=c - len(out))]], axis=0)
    perm = rng.permutation(len(out))
    out = out[perm]
    return out.astype(np.float32), int(np.argmax(perm == 0))


# ----------------------------------------------------------------------------------------
# Measurement noise (stored runtimes only)
# ----------------------------------------------------------------------------------------
def measure(rng, y):
    y = np.asarray(y, dtype=np.float64)
    sigma = rng.uniform(0.0005, 0.003)
    m = y * np.exp(rng.normal(0.0, sigma, len(y)))
    out = rng.random(len(y)) < 0.005
    if out.any():
        m[out] *= 1.0 + np.minimum(0.25, 0.01 * (rng.pareto(2.0, int(out.sum())) + 1.0))
    return np.maximum(1, np.rint(m)).astype(np.int64)


# ----------------------------------------------------------------------------------------
# Dataset writer
# ----------------------------------------------------------------------------------------
SCALES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120), lay_cfg=(300, 3000),
                  lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20), lay_cfg=(30, 200),
                 lay_test_cfg=(30, 60)),
}
SPLITS = ('train', 'valid', 'test')
COLLECTIONS = ('tile:xla', 'layout:xla:default', 'layout:xla:random', 'layout:nlp:default',
               'layout:nlp:random')
TILE_MODELS = ['alexnet', 'resnet50', 'resnet_v2_101', 'inception_v3', 'mobilenet_v2',
               'efficientnet_b0', 'unet_3d', 'bert_base', 'transformer', 'retinanet', 'ncf',
               'vit_b16', 'gpt2_small', 't5_base', 'shapemask', 'squeezenet', 'densenet121',
               'mask_rcnn', 'wide_deep', 'deeplab_v3']


def _hexsig(rng):
    v = int(rng.integers(1, 2 ** 62))
    return ('-' if rng.random() < 0.5 else '') + format(v, 'x')


def _hex32(rng):
    return ''.join(format(int(x), '02x') for x in rng.integers(0, 256, 16))


def _loguni(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def _unique(stem, used):
    s, k = stem, 2
    while s in used:
        s = '%s_%d' % (stem, k)
        k += 1
    used.add(s)
    return s


def make_tile(rng, sc, split):
    c0 = _loguni(rng, *sc['tile_cfg'])
    for attempt in range(300):
        b = build_tile_kernel(rng, sc['tile_nodes'])
        n = len(b.pre) + len(b.main)
        if not sc['tile_nodes'][0] <= n <= sc['tile_nodes'][1]:
            continue
        nodes, _ = b.finalize()
        arrs = module_arrays(nodes)
        info = tile_info(arrs['node_feat'], arrs['node_opcode'], arrs['edge_index'])
        kc, oc = tile_space(info)
        space = math.prod(len(x) for x in kc + oc)
        c = min(c0, int(0.4 * space))
        if c >= sc['tile_cfg'][0]:
            break
    cf, d = tile_candidates(info, rng, c)
    arrs['config_feat'] = cf
    y = tile_law(info, cf)
    meas = measure(rng, y)
    if split == 'test':
        arrs['config_runtime'] = np.zeros(len(cf), dtype=np.int64)
        arrs['config_runtime_normalizers'] = np.ones(len(cf), dtype=np.int64)
        return arrs, None, b.main[-1].meta
    arrs['config_runtime'] = meas
    arrs['config_runtime_normalizers'] = np.full(len(cf), meas[d], dtype=np.int64)
    return arrs, y, b.main[-1].meta


def make_layout(rng, sc, family, search, split):
    b, spec = fit_layout_graph(rng, family, sc['lay_nodes'], sc['lay_nc'])
    arrs = finalize_layout_graph(b, rng)
    g = LayoutGraph(arrs['node_feat'], arrs['node_opcode'], arrs['edge_index'], arrs['node_config_ids'])
    cs = ConfigSpace(g)
    c = _loguni(rng, *(sc['lay_test_cfg'] if split == 'test' else sc['lay_cfg']))

    def evaluate(x):
        return np.concatenate([layout_law(g, x[k:k + 1024]) for k in range(0, len(x), 1024)])

    if search == 'random':
        cfg = cs.random_configs(rng, c)
        cfg[int(rng.integers(c))] = cs.default_base(explicit=False)
        dup = np.flatnonzero(rng.random(c) < 0.05)
        for k in dup:
            if k > 0:
                cfg[k] = cfg[int(rng.integers(k))]
        y = evaluate(cfg)
    else:
        cfg = cs.default_search(rng, c, evaluate)
        y = evaluate(cfg)
    arrs['node_config_feat'] = cfg.astype(np.float32)
    if split == 'test':
        arrs['config_runtime'] = np.zeros(c, dtype=np.int64)
        return arrs, None, spec
    arrs['config_runtime'] = measure(rng, y)
    return arrs, y, spec


def _layout_stem(rng, family, spec, split):
    if split == 'test':
        return _hex32(rng)
    topo = str(rng.choice(['2x2', '4x4', '8x8', '2x4', '8x16', '4x8']))
    prec = 'bf16' if spec['act'] == 'bf16' else 'fp32'
    phase = 'train' if spec['train'] else 'inference'
    if family == 'xla':
        name = {'unet': 'unet_%dd' % spec['sd'], 'resnet': 'resnet', 'vgg': 'vgg',
                'mobilenet': 'mobilenet', 'inception': 'inception'}[spec['arch']]
        return '%s_%s_batch_%d.%s.%s' % (name, phase, spec['N'], topo, prec)
    return 'transformer_H-%d_A-%d_seq_%d_batch_size_%d_%s.%s' % (
        spec['D'], spec['H'], spec['S'], spec['B'], phase, prec)


def generate(out, seed, scale='small', graphs_factor=1.0, verbose=True):
    sc = SCALES[scale]
    t0 = time.time()
    for ci, coll in enumerate(COLLECTIONS):
        parts = coll.split(':')
        counts = sc['tile'] if parts[0] == 'tile' else sc['lay']
        for si, split in enumerate(SPLITS):
            ng = max(1, int(round(counts[si] * graphs_factor)))
            rel = os.path.join('npz', *parts, split)
            os.makedirs(os.path.join(out, rel), exist_ok=True)
            used = set()
            for k in range(ng):
                rng = np.random.default_rng([int(seed), ci, si, k])
                if parts[0] == 'tile':
                    arrs, y, kind = make_tile(rng, sc, split)
                    if split == 'test':
                        stem = _hex32(rng)
                    else:
                        stem = '%s_%s_batch_%d_%s' % (str(rng.choice(TILE_MODELS)),
                                                      str(rng.choice(['train', 'inference'])),
                                                      int(rng.choice([1, 8, 16, 32, 64, 128])),
                                                      _hexsig(rng))
                else:
                    arrs, y, spec = make_layout(rng, sc, parts[1], parts[2], split)
                    stem = _layout_stem(rng, parts[1], spec, split)
                stem = _unique(stem, used)
                np.savez_compressed(os.path.join(out, rel, stem + '.npz'), **arrs)
                if y is not None:
                    nd = os.path.join(out, 'noiseless', rel)
                    os.makedirs(nd, exist_ok=True)
                    np.save(os.path.join(nd, stem + '.npy'), np.asarray(y, dtype=np.float64))
            if verbose:
                print('%-20s %-5s %3d graphs  (%.1fs)' % (coll, split, ng, time.time() - t0),
                      file=sys.stderr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=sorted(SCALES), default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    ap.add_argument('--quiet', action='store_true')
    a = ap.parse_args(argv)
    generate(a.out, a.seed, a.scale, a.graphs_factor, verbose=not a.quiet)


if __name__ == '__main__':
    main()
