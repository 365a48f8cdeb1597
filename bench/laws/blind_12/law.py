#!/usr/bin/env python3
"""Blind runtime law #12: synthetic TpuGraphs-format datasets.

Usage:  python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Everything below is this law's own model of a TPU-like chip (two TensorCores per chip,
8x128 vector tiles, a 128x128 systolic matrix unit, DMA engines moving (8,128) tiles,
a transpose/permute unit).  It was written from public knowledge only.

THE LAW (full description; NOTE.md deliberately says nothing about it)
======================================================================
Chip constants (per TensorCore, two cores): HBM 600 B/ns, MXU 1.37e5 flop/ns for 16-bit
(one third for 32-bit), vector unit 4000 element-ops/ns, transpose unit (XLU) 450 el/ns,
an effective per-DMA-descriptor cost, a per-grid-step cost, per-op launch costs.

Tiled memory.  A tensor stored with a minor-to-major layout p keeps its most-minor dim
padded to 128 lanes and its second-most-minor dim padded to the sublane tile (8 for
32-bit, 16 for 16-bit, 32 for 8-bit).  Every byte moved or computed is a padded byte.

Two-core split.  Each op's work is split between the two cores along the most-major
physical dim (of its output) whose size is >= 2; if there is none, along the
second-minor dim in sublane tiles, then the minor dim in lane tiles.  The busier core
sets the time: factor 2*ceil(d/2)/d (d the split extent; 2 if nothing can be split).

Layout law (layout:* collections).  The noise-free runtime of a config is
    100 us + sum over all nodes of node_time(node | effective layouts)
where effective layouts are derived from the file only:
  * a configurable node's output layout is its output block; -1 entries are filled by
    the node's own default layout order (node_feat 134-139); all -1 = that default;
  * elementwise-like ops (unary/binary/compare/select/convert/all-reduce/
    reduce-window/select-and-scatter ...) inherit the effective layout of their
    largest same-rank operand; every other node keeps its node_feat layout;
  * a configurable node's input (and, for convolutions, kernel) block is a
    requirement on its activation (kernel) operand: fixed minor dims as given, the
    rest in the order the operand already has; all -1 = no requirement.  When the
    requirement differs from the operand's effective layout a relayout copy is paid.
  * an elementwise op whose other same-shape operands (not broadcasts/constants/iotas)
    have a different effective layout pays a relayout copy for each of them.
Relayout copy cost of a tensor from layout A to B: padded bytes read + written over
HBM, plus DMA descriptors: few if A and B share their two most-minor dims, one per
128-element row if they share only the minor dim, one per (sublane x 128) tile and a
transpose-unit pass if the minor dims differ; the transpose pass is scaled by
1 + 0.35*|log2(size(minor_A)/size(minor_B))| (depends on the ratio of the two minor
extents, not on either).  The whole copy gets the two-core split factor of B.
Node times (all divided over two cores with the split factor of the relevant layout):
  * convolution: flops = 2*|out|*window*Cin/groups on the MXU with utilisation
    u_out*u_in*aspect*kernel_factor.  u_out = Cout/pad128(Cout) if the output feature dim
    is minor, else a halved efficiency plus an XLU transpose of the output.  u_in:
    contraction Cin (small Cin packs window taps) padded to 128, if the input feature
    dim is minor; else an XLU transpose of the input.  aspect = 1/(1+0.12*max(0,
    log2(pad128(minor)/(8*second)))) on the output's laid-out minor/second-minor sizes.
    kernel_factor 1 (out-feature minor, in-feature second), 1.04, 1.12 (in-feature
    minor) or 1.3 (a spatial dim minor).  Memory: padded input + output + kernel bytes
    (kernel re-read per 2048 output rows, at most 16 times).  time = max(compute, mem).
  * dot (batch dims leading, lhs [.., M, K], rhs [.., K, N], roles found from shapes):
    similar, u from N (or M) minor of the output, K minor of lhs (else transpose),
    rhs N-minor (else a transpose of rhs; a batch dim minor is worse).
  * reshape: free (bitcast) when the physical element order is unchanged under the two
    layouts (checked exactly on sampled indices); otherwise a relayout whose cost
    depends on whether the minor extents match and, if not, on their ratio.
  * transpose: free when it is a bitcast under the layouts, else a relayout.
  * reduce: reads its padded input; lane (minor-dim) reductions need the XLU, sublane
    reductions cost extra vector work; if the kept dims' order in the input layout does
    not match the output's layout an extra output relayout is paid.
  * slice/pad/dynamic-(update-)slice/copy/concatenate keep their own node_feat output
    layout: cheap when the largest operand's effective layout agrees with it (two
    most-minor dims), otherwise an XLU relayout scaled by the ratio of the minor extents.
  * elementwise ops: fused, so only 30% of their padded traffic counts; transcendental
    ops cost 4 vector ops per element; reduce-window pays 2.4x when its window spans the
    minor dim, 1.3x when it spans the second-minor dim.
  * parameters/constants/tuples/get-tuple-element/while: small constants.

Tile law (tile:xla).  The kernel is the fusion's fused computation; its output is the
fused root (largest tuple element).  Output bounds (config_feat 8-13) and kernel bounds
(0-5) count tiles per physical dim, major to minor, in units of 128 (minor), 8 (second
minor), 1 (others).  Per config:
  grid G_i = ceil(U_i/b_i), steps S = prod G_i, padded block extents; edge blocks are
  computed in full (waste).  DMA descriptors per block = block elements / contiguous
  run, the run growing from the minor side only over dims the block covers fully.
  Operands stored in another physical order are gathered with short runs and pay an XLU
  pass scaled by the ratio of the block's two minor extents.  Convolution/dot kernels:
  the kernel bounds give the contraction chunk (Cin/K), the output-feature chunk and the
  window-tap chunk; more contraction steps, MXU utilisation kc/pad128(kc) with
  kc = Cin chunk * taps in the chunk, Cout chunk/pad128(Cout chunk),
  weight-load amortisation rows/(rows+96) and a block aspect factor
  1/(1+0.02*log2(h/w)^2); activations re-read per output-feature block unless the
  contraction fits one step; weights stay resident when <= 4 MiB.  Reductions read full
  reduced extents, lane reductions pay XLU work.  Step time = max(compute, DMA) + 10% of
  the smaller + a fixed per-step cost; a double-buffered footprint over 16 MiB loses
  overlap (and over 32 MiB scales up); the first block's DMA is exposed; the grid is
  split over two cores along the outermost grid dim with >= 2 blocks (busier core:
  ceil(G/2)/G of the work).  (The config sampler, not the law, leaves out configs with
  more than 48x the default's grid steps, blocks over 8 MiB or over-fine kernel grids, as
  an autotuner would; the default tile config is the best of a few candidates under a
  noisy copy of this law, i.e. the compiler's imperfect cost model.)

Measurement noise (stored runtimes only, never in ROOT/noiseless): multiplicative,
lognormal with a level that drifts slowly along the file order of configs (smoothed
random walk), a warm-up bias on the first configs, and rare large outliers (Pareto tail).
Tile normalizers are the default config's own stored (noisy) runtime, constant in a file.

Graphs are drawn by this script's own samplers (CNN/U-Net style convolution programs
with optional backward pass for xla, transformer programs for nlp, single fused kernels
for tile), encoded like upstream's encoder (sorted unique operand edges, edges to called
computations' roots, roots flagged, node_splits ending at n).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

# ----------------------------------------------------------------------------------------
# opcode ids (upstream hlo_opcode.h order)
ABS, ADD, ALLREDUCE, BITCAST, BROADCAST, CLAMP, COMPARE, CONCAT = 1, 2, 5, 11, 13, 17, 20, 22
CONSTANT, CONVERT, CONV, COPY, DIVIDE, DOT, DSLICE, DUS = 24, 25, 26, 27, 32, 34, 35, 36
EXP, FUSION, GATHER, GTE, IOTA, LOG, AND, MAX, MIN, MUL, NEG = 37, 41, 42, 45, 48, 50, 52, 57, 58, 59, 60
OR, PAD, PARAM, POWER, REDUCE, REDUCEWIN, RESHAPE, RSQRT = 54, 62, 63, 66, 70, 72, 75, 81
SELECT, SELSCAT, SLICE, SQRT, SUB, TANH, TRANSPOSE, TUPLE, WHILE, LOGISTIC = 83, 84, 92, 94, 95, 96, 98, 100, 102, 107
SORT = 93

EW_OPS = {1, 2, 7, 12, 15, 17, 19, 20, 25, 30, 32, 37, 38, 40, 46, 49, 50, 51, 52, 53, 54, 55, 57,
          58, 59, 60, 65, 66, 67, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94, 95, 96, 103, 107,
          118, 119, 120}
FOLLOW_OPS = EW_OPS | {ALLREDUCE, REDUCEWIN, SELSCAT}
TRANSC_OPS = {7, 30, 32, 37, 38, 50, 51, 66, 81, 91, 94, 96, 103, 107, 120}
FREE_OPERANDS = {BROADCAST, CONSTANT, IOTA}
CONFIGURABLE = (CONV, DOT, RESHAPE, TRANSPOSE)

DT = {'pred': (3, 1), 's8': (4, 1), 's32': (6, 4), 'u8': (8, 1), 'u32': (10, 4),
      'f16': (12, 2), 'f32': (13, 4), 'bf16': (15, 2), 'tuple': (18, 0)}
COL_BYTES = {2: 4, 3: 1, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8, 12: 2, 13: 4,
             14: 8, 15: 2, 16: 8, 17: 16, 18: 0, 19: 0, 20: 0}


def prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p


# ----------------------------------------------------------------------------------------
# HLO-like graph builder and upstream-style encoder


class Node:
    __slots__ = ('op', 'shape', 'dt', 'layout', 'ins', 'calls', 'adims', 'window', 'convdn',
                 'fgc', 'bgc', 'slc', 'dss', 'padc', 'pnum', 'tn', 'root', 'idx', 'stable', 'tag')

    def __init__(self, op, shape, dt, ins, layout=None):
        self.op = op
        self.shape = tuple(int(x) for x in shape)
        self.dt = dt
        self.ins = list(ins)
        self.calls = []
        r = len(self.shape)
        self.layout = tuple(layout) if layout is not None else tuple(range(r - 1, -1, -1))
        self.adims = ()
        self.window = None
        self.convdn = None
        self.fgc = 0
        self.bgc = 0
        self.slc = None
        self.dss = None
        self.padc = None
        self.pnum = 0
        self.tn = 0
        self.root = False
        self.idx = -1
        self.stable = False
        self.tag = None


class Comp:
    def __init__(self, kind):
        self.kind = kind
        self.nodes = []
        self.nparam = 0


class HG:
    def __init__(self):
        self.pre = []
        self.loops = []
        self.main = Comp('main')
        self.cur = self.main

    def count(self):
        return sum(len(c.nodes) for c in self.pre + self.loops + [self.main])

    def add(self, op, shape, dt, ins=(), comp=None, layout=None, **kw):
        comp = comp if comp is not None else self.cur
        nd = Node(op, shape, dt, ins, layout)
        for k, v in kw.items():
            setattr(nd, k, v)
        comp.nodes.append(nd)
        return nd

    def param(self, shape, dt, comp=None, layout=None):
        comp = comp if comp is not None else self.cur
        nd = self.add(PARAM, shape, dt, (), comp, layout)
        nd.pnum = comp.nparam
        comp.nparam += 1
        return nd

    def tparam(self, n_el, comp):
        nd = self.add(PARAM, (), 'tuple', (), comp)
        nd.tn = n_el
        nd.pnum = comp.nparam
        comp.nparam += 1
        return nd

    def const(self, dt='f32', shape=()):
        return self.add(CONSTANT, shape, dt)

    def reducer(self, dt, kind='add'):
        c = Comp('reducer')
        p0 = self.param((), dt, c)
        p1 = self.param((), dt, c)
        r = self.add({'add': ADD, 'max': MAX, 'min': MIN, 'or': OR}[kind], (), dt, (p0, p1), c)
        self.pre.append(c)
        return r

    # --- ops
    def bcast(self, x, shape, dims):
        return self.add(BROADCAST, shape, x.dt, (x,), adims=tuple(dims))

    def sbcast(self, shape, dt):
        return self.bcast(self.const(dt), shape, ())

    def ew(self, op, *xs, dt=None):
        big = max(xs, key=lambda t: prod(t.shape))
        return self.add(op, big.shape, dt or big.dt, xs)

    def convert(self, x, dt):
        if x.dt == dt:
            return x
        return self.add(CONVERT, x.shape, dt, (x,))

    def reduce(self, x, dims, kind='add', dt=None):
        dt = dt or x.dt
        red = self.reducer(dt, kind)
        init = self.const(dt)
        shape = tuple(d for i, d in enumerate(x.shape) if i not in dims)
        nd = self.add(REDUCE, shape, dt, (x, init), adims=tuple(sorted(dims)))
        nd.calls = [red]
        return nd

    def reshape(self, x, shape, layout=None):
        assert prod(shape) == prod(x.shape), (shape, x.shape)
        return self.add(RESHAPE, shape, x.dt, (x,), layout=layout)

    def transpose(self, x, perm):
        return self.add(TRANSPOSE, [x.shape[p] for p in perm], x.dt, (x,), adims=tuple(perm))

    def dot(self, a, b, dt=None):
        shape = a.shape[:-1] + (b.shape[-1],)
        return self.add(DOT, shape, dt or a.dt, (a, b))

    def conv(self, x, w, out_shape, window, dn, fgc=1, dt=None, layout=None):
        return self.add(CONV, out_shape, dt or x.dt, (x, w), layout=layout, window=window,
                        convdn=dn, fgc=fgc, bgc=1)

    def tuple_(self, xs):
        nd = self.add(TUPLE, (), 'tuple', xs)
        nd.tn = len(xs)
        return nd

    def gte(self, t, shape, dt, comp=None):
        return self.add(GTE, shape, dt, (t,), comp)

    def allreduce(self, x):
        red = self.reducer(x.dt, 'add')
        nd = self.add(ALLREDUCE, x.shape, x.dt, (x,))
        nd.calls = [red]
        return nd

    def reduce_window(self, x, window, out_shape, kind='max'):
        red = self.reducer(x.dt, kind)
        init = self.const(x.dt)
        nd = self.add(REDUCEWIN, out_shape, x.dt, (x, init), window=window)
        nd.calls = [red]
        return nd

    def concat(self, xs, dim):
        shape = list(xs[0].shape)
        shape[dim] = sum(x.shape[dim] for x in xs)
        return self.add(CONCAT, shape, xs[0].dt, xs, adims=(dim,))

    def slice_(self, x, starts, limits):
        shape = [l - s for s, l in zip(starts, limits)]
        slc = [(s, 1, l) for s, l in zip(starts, limits)]
        return self.add(SLICE, shape, x.dt, (x,), slc=slc)

    def pad_(self, x, lo, hi):
        shape = [d + a + b for d, a, b in zip(x.shape, lo, hi)]
        pv = self.const(x.dt)
        return self.add(PAD, shape, x.dt, (x, pv), padc=list(zip(lo, hi)))

    def add_while(self, x, body_ops=2):
        """Small counted loop: tuple(i, x) -> while -> gte(x)."""
        cond = Comp('while_cond')
        p = self.tparam(2, cond)
        i = self.gte(p, (), 's32', cond)
        lim = self.add(CONSTANT, (), 's32', (), cond)
        self.add(COMPARE, (), 'pred', (i, lim), cond)
        body = Comp('while_body')
        pb = self.tparam(2, body)
        ib = self.gte(pb, (), 's32', body)
        vb = self.gte(pb, x.shape, x.dt, body)
        one = self.add(CONSTANT, (), 's32', (), body)
        i2 = self.add(ADD, (), 's32', (ib, one), body)
        v = vb
        for _ in range(body_ops):
            c = self.add(CONSTANT, (), x.dt, (), body)
            b = self.add(BROADCAST, x.shape, x.dt, (c,), body)
            v = self.add(MUL, x.shape, x.dt, (v, b), body)
        t = self.add(TUPLE, (), 'tuple', (i2, v), body)
        t.tn = 2
        self.loops += [cond, body]
        z = self.add(CONSTANT, (), 's32')
        init = self.tuple_([z, x])
        w = self.add(WHILE, (), 'tuple', (init,))
        w.tn = 2
        w.calls = [cond.nodes[-1], body.nodes[-1]]
        return self.gte(w, x.shape, x.dt)


def _fill_seq(f, base, vals, lead, prod_empty=1.0):
    k = min(lead, len(vals))
    if k:
        f[base:base + k] = vals[:k]
    f[base + lead] = float(sum(vals))
    f[base + lead + 1] = float(prod(vals)) if vals else prod_empty


def encode_node(nd):
    f = np.zeros(140, np.float64)
    f[0] = 1.0 if nd.root else 0.0
    f[DT[nd.dt][0]] = 1.0
    sh = list(nd.shape) if nd.dt != 'tuple' else []
    _fill_seq(f, 21, sh, 6)
    f[29] = nd.tn
    f[30] = nd.pnum
    ad = list(nd.adims)[:6]
    if ad:
        f[31:31 + len(ad)] = ad
    w = nd.window or []
    for gi in range(6):
        _fill_seq(f, 37 + 8 * gi, [wd[gi] for wd in w], 6)
    rev = [int(wd[6]) for wd in w]
    if rev:
        f[85:85 + min(6, len(rev))] = rev[:6]
    f[91] = sum(rev)
    f[92] = len(rev) - sum(rev)
    if nd.convdn is not None:
        ib, iff, isp, kin, kout, ksp, ob, of = nd.convdn
        vals = [ib, iff] + list(isp) + [0] * (4 - len(isp)) + [kin, kout] + list(ksp) + \
            [0] * (4 - len(ksp)) + [ob, of]
        f[93:107] = vals
    f[107] = nd.fgc
    f[108] = nd.bgc
    s = nd.slc or []
    for gi in range(3):
        _fill_seq(f, 109 + 4 * gi, [t[gi] for t in s], 2)
    _fill_seq(f, 121, list(nd.dss or []), 2)
    pc = nd.padc or []
    _fill_seq(f, 125, [t[0] for t in pc], 2)
    _fill_seq(f, 129, [t[1] for t in pc], 2)
    f[133] = 1.0 if nd.stable else 0.0
    if sh:
        lay = list(nd.layout)[:6]
        f[134:134 + len(lay)] = lay
    return f


def finalize(g):
    comps = g.pre + g.loops + [g.main]
    idx = 0
    splits = [0]
    for c in comps:
        for nd in c.nodes:
            nd.idx = idx
            idx += 1
        c.nodes[-1].root = True
        if c.kind in ('while_cond', 'while_body'):
            splits.append(idx)
    n = idx
    if splits[-1] < n:
        splits.append(n)
    feat = np.zeros((n, 140), np.float32)
    opc = np.zeros(n, np.uint8)
    edges = []
    nodes = []
    for c in comps:
        for nd in c.nodes:
            feat[nd.idx] = encode_node(nd)
            opc[nd.idx] = nd.op
            prods = {x.idx for x in nd.ins} | {r.idx for r in nd.calls}
            prods.discard(nd.idx)
            for p in sorted(prods):
                edges.append((nd.idx, p))
            nodes.append(nd)
    ei = np.array(edges, np.int64).reshape(-1, 2)
    return nodes, feat, opc, ei, np.array([splits], np.int64)


# ----------------------------------------------------------------------------------------
# graph samplers: convolutional programs (xla), transformer programs (nlp)

CNN_MODELS = ['resnet50', 'resnet101', 'resnet_v1_18', 'inception_v3', 'mobilenet_v2',
              'efficientnet_b0', 'vgg16', 'densenet121', 'retinanet', 'mask_rcnn', 'shapemask',
              'unet_3d']
NLP_FAMILIES = ['bert_en_cased', 'bert_en_uncased', 'albert_en', 'electra', 'talking-heads',
                'small_bert', 'roberta', 'transformer_lm', 'gpt2', 't5_encoder']


class CNNB:
    def __init__(self, g, R, sp, act, training):
        self.g, self.R, self.sp, self.act, self.training = g, R, sp, act, training
        self.convs = []
        self.outs = []

    def conv(self, x, cout, k, stride, groups=1, bn=True, relu=True, record=True):
        g, sp = self.g, self.sp
        N, spat, cin = x.shape[0], x.shape[1:-1], x.shape[-1]
        kshape = (k,) * sp + (cin // groups, cout)
        w = g.param(kshape, 'f32')
        wc = g.convert(w, self.act)
        pads = [((k - 1) // 2, k // 2)] * sp
        out_sp = [max(1, (s + pl + ph - k) // stride + 1) for s, (pl, ph) in zip(spat, pads)]
        y_shape = (N,) + tuple(out_sp) + (cout,)
        dn = (0, sp + 1, list(range(1, sp + 1)), sp, sp + 1, list(range(sp)), 0, sp + 1)
        window = [(k, stride, pl, ph, 1, 1, 0) for (pl, ph) in pads]
        y = g.conv(x, wc, y_shape, window, dn, fgc=groups)
        z = self.bn(y) if bn else y
        if relu:
            z = g.ew(MAX, z, g.sbcast(z.shape, z.dt))
        if record:
            self.convs.append(dict(x=x, w=w, wc=wc, y=y, z=z, k=k, stride=stride, groups=groups,
                                   pads=pads))
        return z

    def bn(self, y):
        g, R = self.g, self.R
        C, r = y.shape[-1], len(y.shape)
        if not self.training or R.random() < 0.2:
            gam = g.convert(g.param((C,), 'f32'), y.dt)
            z = g.ew(MUL, y, g.bcast(gam, y.shape, (r - 1,)))
            bet = g.convert(g.param((C,), 'f32'), y.dt)
            return g.ew(ADD, z, g.bcast(bet, y.shape, (r - 1,)))
        yf = g.convert(y, 'f32')
        red = list(range(r - 1))
        cnt = g.sbcast((C,), 'f32')
        mean = g.ew(DIVIDE, g.reduce(yf, red), cnt)
        d = g.ew(SUB, yf, g.bcast(mean, y.shape, (r - 1,)))
        var = g.ew(DIVIDE, g.reduce(g.ew(MUL, d, d), red), cnt)
        rs = g.ew(RSQRT, g.ew(ADD, var, g.sbcast((C,), 'f32')))
        sc = g.ew(MUL, rs, g.param((C,), 'f32'))
        z = g.ew(MUL, d, g.bcast(sc, yf.shape, (r - 1,)))
        z = g.ew(ADD, z, g.bcast(g.param((C,), 'f32'), yf.shape, (r - 1,)))
        return g.convert(z, y.dt)

    def maxpool(self, x, k=3, s=2):
        sp = self.sp
        spat = x.shape[1:-1]
        out_sp = [max(1, (d + 1 - k) // s + 1) for d in spat]
        win = [(1, 1, 0, 0, 1, 1, 0)] + [(k, s, 0, 1, 1, 1, 0)] * sp + [(1, 1, 0, 0, 1, 1, 0)]
        return self.g.reduce_window(x, win, (x.shape[0],) + tuple(out_sp) + (x.shape[-1],), 'max')

    def upsample(self, x, cout):
        """transposed convolution (base dilation 2)"""
        g, sp = self.g, self.sp
        N, spat, cin = x.shape[0], x.shape[1:-1], x.shape[-1]
        w = g.convert(g.param((2,) * sp + (cin, cout), 'f32'), self.act)
        dn = (0, sp + 1, list(range(1, sp + 1)), sp, sp + 1, list(range(sp)), 0, sp + 1)
        window = [(2, 1, 1, 1, 1, 2, 0)] * sp
        y = g.conv(x, w, (N,) + tuple(2 * d for d in spat) + (cout,), window, dn)
        return g.ew(MAX, y, g.sbcast(y.shape, y.dt))

    def backward(self, budget_end, n_hard):
        """Weight-gradient and input-gradient convolutions, chained where possible."""
        g, R, sp = self.g, self.R, self.sp
        grads = {}
        for rec in reversed(self.convs):
            if g.count() >= budget_end or g.count() + 30 > n_hard:
                break
            z, y, x = rec['z'], rec['y'], rec['x']
            gz = grads.get(id(z))
            if gz is None:
                gz = g.ew(MUL, z, g.sbcast(z.shape, z.dt))
            if z is not y:
                zero = g.sbcast(z.shape, z.dt)
                mask = g.ew(COMPARE, z, zero, dt='pred')
                gy = g.ew(SELECT, mask, gz, g.sbcast(z.shape, z.dt), dt=z.dt)
            else:
                gy = gz
            k, s, groups = rec['k'], rec['stride'], rec['groups']
            kshape = rec['w'].shape
            # weight gradient: contraction over the batch
            win = [(ys, 1, pl, ph, s, 1, 0) for ys, (pl, ph) in zip(y.shape[1:-1], rec['pads'])]
            dn = (sp + 1, 0, list(range(1, sp + 1)), 0, sp + 1, list(range(1, sp + 1)), sp, sp + 1)
            dw = g.conv(x, gy, kshape, win, dn, fgc=1)
            if groups > 1:
                dw.bgc = groups
            if R.random() < 0.8:
                dw = g.allreduce(dw)
            upd = g.ew(SUB, rec['w'], g.ew(MUL, g.convert(dw, 'f32'), g.sbcast(kshape, 'f32')))
            self.outs.append(upd)
            # input gradient
            if x.op != PARAM and x.op != CONVERT and g.count() + 20 < n_hard:
                winx = [(k, 1, k - 1 - pl, k - 1 - ph + (s - 1), 1, s, 1) for (pl, ph) in rec['pads']]
                dnx = (0, sp + 1, list(range(1, sp + 1)), sp + 1, sp, list(range(sp)), 0, sp + 1)
                dx = g.conv(gy, rec['wc'], x.shape, winx, dnx, fgc=groups)
                if id(x) in grads:
                    dx = g.ew(ADD, grads[id(x)], dx)
                grads[id(x)] = dx


def build_cnn(R, n_target, n_hard, tiny):
    model = str(R.choice(CNN_MODELS))
    is3d = model == 'unet_3d'
    sp = 3 if is3d else 2
    g = HG()
    act = 'bf16' if R.random() < 0.75 else 'f32'
    training = R.random() < (0.35 if tiny else 0.6)
    if tiny:
        N = int(R.choice([1, 2, 4] if is3d else [2, 4, 8, 16]))
        res = int(R.choice([16, 24, 32] if is3d else [28, 32, 56, 64]))
    else:
        N = int(R.choice([1, 2, 4] if is3d else [4, 8, 16, 32, 64, 128]))
        res = int(R.choice([32, 48, 64, 96] if is3d else [64, 96, 112, 128, 160, 224, 256, 299]))
    C = int(R.choice([8, 16, 32] if is3d else [16, 24, 32, 48, 64]))
    b = CNNB(g, R, sp, act, training)
    x = g.param((N,) + (res,) * sp + (int(R.choice([1, 3, 4])),), 'f32')
    x = g.convert(x, act)
    head_cost = 40
    fwd_end = (n_target - head_cost) * (0.5 if training else 1.0)
    # stem
    if not is3d and model.startswith('resnet') and R.random() < 0.4 and res % 2 == 0:
        h = res // 2
        t = g.reshape(x, (N, h, 2, h, 2, x.shape[-1]))
        t = g.transpose(t, (0, 1, 3, 2, 4, 5))
        x = g.reshape(t, (N, h, h, 4 * x.shape[-1]))
        x = b.conv(x, C, 3, 1)
    else:
        x = b.conv(x, C, 3 if (is3d or tiny) else 7, 1 if is3d else 2)
    if not is3d and x.shape[1] >= 16 and R.random() < 0.7:
        x = b.maxpool(x)
    feats, skips = [], []
    per_stage = int(R.integers(1, 4))
    nblk = 0
    while g.count() < fwd_end and g.count() < n_hard - head_cost - 30:
        cur = x.shape[-1]
        down = nblk > 0 and nblk % per_stage == 0 and x.shape[1] >= 8
        if is3d:
            if down:
                skips.append(x)
                x = b.conv(x, min(cur * 2, 256), 3, 2)
            else:
                x = b.conv(x, cur, 3, 1)
        elif model in ('mobilenet_v2', 'efficientnet_b0'):
            e = b.conv(x, cur * int(R.choice([2, 4, 6])), 1, 1)
            d = b.conv(e, e.shape[-1], 3, 2 if down else 1, groups=e.shape[-1])
            cout = cur * 2 if down else cur
            p = b.conv(d, cout, 1, 1, relu=False)
            x = g.ew(ADD, p, x) if p.shape == x.shape else p
        elif model == 'inception_v3':
            br = [b.conv(x, max(8, cur // 4), 1, 2 if down else 1)]
            t = b.conv(x, max(8, cur // 4), 1, 1)
            br.append(b.conv(t, max(8, cur // 2), 3, 2 if down else 1))
            if R.random() < 0.6:
                t = b.conv(x, max(8, cur // 8), 1, 1)
                t = b.conv(t, max(8, cur // 4), 3, 1)
                br.append(b.conv(t, max(8, cur // 4), 3, 2 if down else 1))
            x = g.concat(br, sp + 1)
        elif model == 'densenet121':
            t = b.conv(x, 4 * 32, 1, 1)
            t = b.conv(t, 32, 3, 1)
            x = g.concat([x, t], sp + 1)
            if down:
                x = b.conv(x, x.shape[-1] // 2, 1, 1)
                x = b.maxpool(x, 2, 2)
        elif model == 'vgg16':
            x = b.conv(x, min(cur * 2, 512) if down else cur, 3, 1)
            if down:
                x = b.maxpool(x, 2, 2)
        elif model == 'resnet_v1_18':
            cout = min(cur * 2, 512) if down else cur
            t = b.conv(x, cout, 3, 2 if down else 1)
            t = b.conv(t, cout, 3, 1, relu=False)
            sc = x if (t.shape == x.shape) else b.conv(x, cout, 1, 2 if down else 1, relu=False)
            x = g.ew(MAX, g.ew(ADD, t, sc), g.sbcast(t.shape, t.dt))
        else:  # bottleneck resnets and detection backbones
            mid = max(16, cur // 4) if nblk else cur
            cout = min(cur * 2, 2048) if down else max(cur, 4 * mid if nblk == 0 else cur)
            t = b.conv(x, mid, 1, 1)
            t = b.conv(t, mid, 3, 2 if down else 1)
            t = b.conv(t, cout, 1, 1, relu=False)
            sc = x if (t.shape == x.shape) else b.conv(x, cout, 1, 2 if down else 1, relu=False)
            x = g.ew(MAX, g.ew(ADD, t, sc), g.sbcast(t.shape, t.dt))
        if down:
            feats.append(x)
        nblk += 1
    feats.append(x)
    outs = []
    if is3d:
        while skips and g.count() < n_hard - 60:
            s = skips.pop()
            u = b.upsample(x, s.shape[-1])
            if u.shape[1:-1] != s.shape[1:-1]:
                break
            x = g.concat([u, s], sp + 1)
            x = b.conv(x, s.shape[-1], 3, 1)
        C2 = x.shape[-1]
        logits = b.conv(x, int(R.choice([2, 3, 4])), 1, 1, bn=False, relu=False)
        vol = prod(logits.shape[1:-1])
        flat = g.reshape(logits, (N, vol, logits.shape[-1]))
        lf = g.convert(flat, 'f32')
        mx = g.reduce(lf, [2], 'max')
        e = g.ew(EXP, g.ew(SUB, lf, g.bcast(mx, lf.shape, (0, 1))))
        ssum = g.reduce(e, [2])
        lp = g.ew(SUB, lf, g.bcast(g.ew(LOG, ssum), lf.shape, (0, 1)))
        lab = g.param(lf.shape, 'f32')
        outs.append(g.reduce(g.ew(MUL, lp, lab), [0, 1, 2]))
        del C2
    elif model in ('retinanet', 'mask_rcnn', 'shapemask'):
        K = int(R.choice([4, 8, 16]))
        A = int(R.choice([3, 9]))
        levels = []
        for f in feats[-3:]:
            if levels and g.count() > n_hard - 40:
                break
            c = b.conv(f, A * K, 3, 1, bn=False, relu=False)
            hw = prod(c.shape[1:-1])
            levels.append(g.reshape(c, (N, hw * A, K)))
        cat = g.concat(levels, 1) if len(levels) > 1 else levels[0]
        cf = g.ew(LOGISTIC, g.convert(cat, 'f32'))
        lab = g.param(cf.shape, 'f32')
        outs.append(g.reduce(g.ew(MUL, cf, lab), [0, 1, 2]))
    else:
        Cf = x.shape[-1]
        if R.random() < 0.5:
            win = [(1, 1, 0, 0, 1, 1, 0)] + [(d, 1, 0, 0, 1, 1, 0) for d in x.shape[1:-1]] + \
                [(1, 1, 0, 0, 1, 1, 0)]
            pooled = g.reduce_window(x, win, (N,) + (1,) * sp + (Cf,), 'add')
            feat = g.reshape(pooled, (N, Cf))
        elif model == 'vgg16' and prod(x.shape[1:-1]) <= 64:
            feat = g.reshape(x, (N, prod(x.shape[1:])))
        else:
            feat = g.reduce(x, list(range(1, sp + 1)))
        K = int(R.choice([10, 100, 1000, 1001]))
        wf = g.convert(g.param((feat.shape[1], K), 'f32'), act)
        lg = g.dot(feat, wf)
        lg = g.ew(ADD, lg, g.bcast(g.convert(g.param((K,), 'f32'), act), lg.shape, (1,)))
        lf = g.convert(lg, 'f32')
        mx = g.reduce(lf, [1], 'max')
        e = g.ew(EXP, g.ew(SUB, lf, g.bcast(mx, lf.shape, (0,))))
        lp = g.ew(SUB, lf, g.bcast(g.ew(LOG, g.reduce(e, [1])), lf.shape, (0,)))
        outs.append(g.reduce(g.ew(MUL, lp, g.param(lf.shape, 'f32')), [0, 1]))
        if training:
            gl = g.convert(g.ew(MUL, lf, g.sbcast(lf.shape, 'f32')), act)
            ft = g.transpose(feat, (1, 0))
            dwf = g.dot(ft, gl)
            outs.append(g.allreduce(dwf))
    if training:
        b.backward(n_target - 8, n_hard - 8)
    if R.random() < 0.3 and g.count() < n_hard - 25:
        outs.append(g.add_while(outs[0] if outs[0].shape else g.sbcast((8, 128), 'f32'),
                                int(R.integers(1, 3))))
    g.tuple_(outs + b.outs)
    topo = str(R.choice(['2x2', '4x4', '4x8', '8x8', '2x4']))
    mode = 'train' if training else 'inference'
    name = (f"{model}_batch_{N}_{mode}" if R.random() < 0.6
            else f"{model}.{topo}.{'bf16' if act == 'bf16' else 'fp32'}")
    return g, name


class TFM:
    def __init__(self, g, act, lite=False):
        self.g, self.act, self.lite = g, act, lite
        self.dense = []

    def ln(self, x):
        g = self.g
        B, S, H = x.shape
        xf = g.convert(x, 'f32')
        if self.lite:  # rms-style norm
            ms = g.reduce(g.ew(MUL, xf, xf), [2])
            y = g.ew(MUL, xf, g.bcast(g.ew(RSQRT, ms), xf.shape, (0, 1)))
            return g.convert(y, self.act)
        m = g.ew(DIVIDE, g.reduce(xf, [2]), g.sbcast((B, S), 'f32'))
        d = g.ew(SUB, xf, g.bcast(m, xf.shape, (0, 1)))
        v = g.ew(DIVIDE, g.reduce(g.ew(MUL, d, d), [2]), g.sbcast((B, S), 'f32'))
        rs = g.ew(RSQRT, g.ew(ADD, v, g.sbcast((B, S), 'f32')))
        y = g.ew(MUL, d, g.bcast(rs, xf.shape, (0, 1)))
        y = g.ew(MUL, y, g.bcast(g.param((H,), 'f32'), xf.shape, (2,)))
        y = g.ew(ADD, y, g.bcast(g.param((H,), 'f32'), xf.shape, (2,)))
        return g.convert(y, self.act)

    def dense_(self, x2, nout, bias=True):
        g = self.g
        bias = bias and not self.lite
        W = g.convert(g.param((x2.shape[-1], nout), 'f32'), self.act)
        y = g.dot(x2, W)
        if bias:
            y = g.ew(ADD, y, g.bcast(g.convert(g.param((nout,), 'f32'), self.act), y.shape, (1,)))
        self.dense.append((x2, W, y))
        return y

    def layer(self, x, nH, dH, F, mask, R):
        g = self.g
        B, S, H = x.shape
        y = self.ln(x)
        y2 = g.reshape(y, (B * S, H))
        heads = []
        for which in range(3):
            p = self.dense_(y2, H)
            p4 = g.reshape(p, (B, S, nH, dH))
            perm = (0, 2, 3, 1) if which == 1 else (0, 2, 1, 3)
            heads.append(g.transpose(p4, perm))
        q, kt, v = heads
        s = g.dot(q, kt)
        s = g.ew(MUL, s, g.sbcast(s.shape, s.dt))
        if mask is not None:
            s = g.ew(ADD, s, g.bcast(mask, s.shape, (0, 3)))
        sf = g.convert(s, 'f32')
        mx = g.reduce(sf, [3], 'max')
        e = g.ew(EXP, g.ew(SUB, sf, g.bcast(mx, sf.shape, (0, 1, 2))))
        sm = g.reduce(e, [3])
        pr = g.convert(g.ew(DIVIDE, e, g.bcast(sm, e.shape, (0, 1, 2))), self.act)
        c = g.dot(pr, v)
        ct = g.transpose(c, (0, 2, 1, 3))
        c2 = g.reshape(ct, (B * S, H))
        o = self.dense_(c2, H)
        x = g.ew(ADD, x, g.reshape(o, (B, S, H)))
        y = self.ln(x) if not self.lite else x
        f = self.dense_(g.reshape(y, (B * S, H)), F)
        if R.random() < 0.5 and not self.lite:  # tanh gelu
            f3 = g.ew(MUL, g.ew(MUL, f, f), f)
            inner = g.ew(ADD, f, g.ew(MUL, f3, g.sbcast(f.shape, f.dt)))
            t = g.ew(TANH, g.ew(MUL, inner, g.sbcast(f.shape, f.dt)))
            gl = g.ew(MUL, g.ew(MUL, f, g.sbcast(f.shape, f.dt)), g.ew(ADD, t, g.sbcast(f.shape, f.dt)))
        else:
            gl = g.ew(MAX, f, g.sbcast(f.shape, f.dt))
        f2 = self.dense_(gl, H)
        return g.ew(ADD, x, g.reshape(f2, (B, S, H)))


def build_tfm(R, n_target, n_hard, tiny):
    fam = str(R.choice(NLP_FAMILIES))
    g = HG()
    act = 'bf16' if R.random() < 0.7 else 'f32'
    training = R.random() < (0.35 if tiny else 0.5)
    if tiny:
        B = int(R.choice([1, 2, 4, 8]))
        S = int(R.choice([32, 64, 128]))
        H = int(R.choice([128, 256]))
        V = int(R.choice([1024, 4096, 8192]))
    else:
        B = int(R.choice([1, 2, 4, 8, 16, 32]))
        S = int(R.choice([64, 128, 256, 384, 512]))
        H = int(R.choice([128, 256, 384, 512, 768, 1024]))
        V = int(R.choice([8192, 30522, 32000, 50257]))
    dH = 32 if H <= 256 else 64
    nH = H // dH
    F = 4 * H
    lite = tiny or R.random() < 0.15
    t = TFM(g, act, lite)
    ids = g.param((B, S), 's32')
    emb = g.convert(g.param((V, H), 'f32'), act)
    x = g.add(GATHER, (B, S, H), act, (emb, ids))
    x = g.ew(ADD, x, g.bcast(g.convert(g.param((S, H), 'f32'), act), (B, S, H), (1, 2)))
    mask = g.param((B, S), act) if R.random() < 0.7 else None
    per_layer = 60 if lite else 150
    fwd_end = (n_target - 45) * (0.62 if training else 1.0)
    nl = 0
    while (nl == 0 or g.count() + per_layer < fwd_end) and g.count() + per_layer < n_hard - 45:
        x = t.layer(x, nH, dH, F, mask, R)
        nl += 1
    y = t.ln(x)
    y2 = g.reshape(y, (B * S, H))
    outs = []
    if R.random() < 0.6:
        et = g.transpose(emb, (1, 0))
        lg = g.dot(y2, et)
    else:
        lg = t.dense_(y2, int(R.choice([2, 3, 1000, 4096])), bias=False)
    lf = g.convert(lg, 'f32')
    mx = g.reduce(lf, [1], 'max')
    e = g.ew(EXP, g.ew(SUB, lf, g.bcast(mx, lf.shape, (0,))))
    lp = g.ew(SUB, lf, g.bcast(g.ew(LOG, g.reduce(e, [1])), lf.shape, (0,)))
    outs.append(g.reduce(g.ew(MUL, lp, g.param(lf.shape, 'f32')), [0, 1]))
    if training:
        for (x2, W, yv) in reversed(t.dense):
            if g.count() + 14 > n_target or g.count() + 14 > n_hard:
                break
            gy = g.ew(MUL, yv, g.sbcast(yv.shape, yv.dt))
            dW = g.dot(g.transpose(x2, (1, 0)), gy)
            dW = g.allreduce(dW) if R.random() < 0.8 else dW
            outs.append(g.ew(SUB, g.convert(dW, 'f32'), g.sbcast(dW.shape, 'f32')))
            dx = g.dot(gy, g.transpose(W, (1, 0)))
            outs.append(g.reduce(dx, [0, 1]))
    if R.random() < 0.25 and g.count() < n_hard - 25:
        outs.append(g.add_while(g.sbcast((B, H), 'f32'), 1))
    g.tuple_(outs)
    mode = 'train' if training else 'test'
    if fam in ('bert_en_cased', 'bert_en_uncased', 'small_bert', 'talking-heads'):
        name = f"{fam}_L-{nl}_H-{H}_A-{nH}_batch_size_{B}_{mode}"
    else:
        name = f"{fam}_seq_{S}_batch_size_{B}_{mode}"
    return g, name


# ----------------------------------------------------------------------------------------
# tile kernels (one fused computation + its entry computation)

TILE_MODELS = ['alexnet', 'resnet50', 'inception_v3', 'mobilenet_v2', 'bert', 'transformer',
               'unet', 'vgg16', 'efficientnet', 'ncf', 'dlrm', 'mask_rcnn', 'retinanet',
               'densenet', 'wavenet', 'resnet_v2_101', 'gnmt']


def _tpu_layout(r, R, p_batch_second=0.6):
    """typical post-layout-assignment layouts: feature minor, maybe batch second"""
    if r >= 3 and R.random() < p_batch_second:
        return tuple([r - 1, 0] + list(range(r - 2, 0, -1)))
    return tuple(range(r - 1, -1, -1))


def build_tile(R, n_lo, n_hi):
    g = HG()
    fused = Comp('fused')
    g.loops.append(fused)
    g.cur = fused
    target = int(R.integers(n_lo, n_hi + 1))
    kind = str(R.choice(['conv', 'dot', 'ew', 'red', 'xpose'], p=[0.3, 0.2, 0.22, 0.13, 0.15]))
    act = 'bf16' if R.random() < 0.7 else 'f32'
    N = int(R.choice([1, 2, 4, 8, 16, 32, 64, 128]))

    def lay_of(shape_ref, lay_ref, shape):
        return lay_ref if tuple(shape) == tuple(shape_ref) else None

    outs = []
    if kind == 'conv':
        sp = 3 if R.random() < 0.1 else 2
        Hs = int(R.choice([4, 6, 8, 12, 16]) if sp == 3 else R.choice([7, 8, 12, 14, 16, 28, 32, 56]))
        if sp == 3:
            N = int(R.choice([1, 2, 4]))
        Cin = int(R.choice([3, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512]))
        Cout = int(R.choice([16, 32, 64, 96, 128, 192, 256, 384, 512, 1024]))
        k = int(R.choice([1, 3])) if Cin > 3 else 3
        stride = 2 if (R.random() < 0.2 and Hs >= 8) else 1
        while N * Hs ** sp * max(Cin, Cout) > 6e7 and N > 1:
            N //= 2
        r = sp + 2
        La = _tpu_layout(r, R)
        a = g.param((N,) + (Hs * stride,) * sp + (Cin,), act, layout=La)
        Lk = tuple(range(r - 1, -1, -1)) if R.random() < 0.8 else tuple([r - 2, r - 1] + list(range(r - 3, -1, -1)))
        w = g.param((k,) * sp + (Cin, Cout), act, layout=Lk)
        pads = [((k - 1) // 2, k // 2)] * sp
        window = [(k, stride, pl, ph, 1, 1, 0) for (pl, ph) in pads]
        dn = (0, sp + 1, list(range(1, sp + 1)), sp, sp + 1, list(range(sp)), 0, sp + 1)
        oshape = (N,) + (Hs,) * sp + (Cout,)
        y = g.conv(a, w, oshape, window, dn, layout=La)
        main = y
    elif kind == 'dot':
        M = int(R.choice([8, 32, 64, 128, 256, 512, 1000, 1024, 2048, 4096, 8192]))
        K = int(R.choice([64, 128, 256, 512, 768, 1024, 2048, 4096]))
        Nn = int(R.choice([2, 10, 64, 128, 256, 512, 1000, 1024, 3072, 4096]))
        batch = () if R.random() < 0.7 else (int(R.choice([2, 4, 8, 12, 16])),)
        while prod(batch) * M * max(K, Nn) > 6e7 and M > 8:
            M //= 2
        rb = len(batch)
        Ll = tuple(range(rb + 1, -1, -1))
        lhs = g.param(batch + (M, K), act, layout=Ll)
        Lr = Ll if R.random() < 0.6 else tuple([rb, rb + 1] + list(range(rb - 1, -1, -1)))
        rhs = g.param(batch + (K, Nn), act, layout=Lr)
        y = g.add(DOT, batch + (M, Nn), act, (lhs, rhs), layout=Ll)
        main = y
    elif kind == 'red':
        r = int(R.choice([2, 3, 4]))
        if r == 4:
            X = (N, int(R.choice([7, 14, 28, 56])), int(R.choice([7, 14, 28, 56])),
                 int(R.choice([64, 128, 256, 512])))
            dims = [0, 1, 2] if R.random() < 0.6 else [1, 2]
        elif r == 3:
            X = (N, int(R.choice([64, 128, 256, 512])), int(R.choice([128, 256, 768, 1024, 4096])))
            dims = [2] if R.random() < 0.7 else [1]
        else:
            X = (int(R.choice([64, 256, 1024, 4096, 8192])), int(R.choice([10, 128, 1000, 1024, 4096])))
            dims = [1] if R.random() < 0.6 else [0]
        while prod(X) > 6e7:
            X = (max(1, X[0] // 2),) + X[1:]
        Lx = _tpu_layout(r, R)
        x = g.param(X, act, layout=Lx)
        xf = g.add(CONVERT, X, 'f32', (x,), layout=Lx) if act != 'f32' else x
        if R.random() < 0.5:
            x2 = g.param(X, act, layout=Lx)
            x2f = g.add(CONVERT, X, 'f32', (x2,), layout=Lx) if act != 'f32' else x2
            xf = g.add(MUL, X, 'f32', (xf, x2f), layout=Lx)
        rd = g.reduce(xf, dims)
        y = rd
        main = rd
    else:  # 'ew' or 'xpose'
        r = int(R.choice([2, 3, 4]))
        if r == 2:
            shape = (int(R.choice([64, 128, 256, 512, 1024, 4096])), int(R.choice([128, 256, 768, 1000, 1024, 4096])))
        elif r == 3:
            shape = (N, int(R.choice([16, 64, 128, 256, 512])), int(R.choice([64, 128, 256, 768, 1024])))
        else:
            shape = (N, int(R.choice([7, 14, 28, 56, 112])), int(R.choice([7, 14, 28, 56, 112])),
                     int(R.choice([3, 32, 64, 96, 128, 256, 512])))
        while prod(shape) > 5e7:
            shape = (max(1, shape[0] // 2),) + shape[1:]
        Lo = _tpu_layout(r, R)
        if kind == 'xpose':
            if R.random() < 0.5:
                Li = tuple(R.permutation(r).tolist())
                while Li == Lo:
                    Li = tuple(R.permutation(r).tolist())
                x = g.param(shape, act, layout=Li)
                y = g.add(COPY, shape, act, (x,), layout=Lo)
            else:
                perm = tuple(R.permutation(r).tolist())
                while perm == tuple(range(r)):
                    perm = tuple(R.permutation(r).tolist())
                inv = [perm.index(i) for i in range(r)]
                ishape = tuple(shape[inv[i]] for i in range(r))
                x = g.param(ishape, act, layout=tuple(range(r - 1, -1, -1)))
                y = g.add(TRANSPOSE, shape, act, (x,), layout=Lo, adims=perm)
        else:
            xs = []
            for i in range(int(R.integers(1, 4))):
                L = Lo if R.random() < 0.85 else tuple(R.permutation(r).tolist())
                xs.append(g.param(shape, act, layout=L))
            y = xs[0]
            for x in xs[1:]:
                y = g.add(int(R.choice([ADD, MUL, SUB, MAX])), shape, act, (y, x), layout=Lo)
            if y.op == PARAM:
                y = g.add(int(R.choice([EXP, TANH, NEG, RSQRT, CONVERT])), shape, act, (y,), layout=Lo)
        main = y
    # epilogue until the node budget is used
    oshape, olay = y.shape, y.layout
    r = len(oshape)
    stats = None
    if kind == 'conv' and R.random() < 0.3:
        yf = g.add(CONVERT, oshape, 'f32', (y,), layout=olay)
        stats = g.reduce(yf, list(range(r - 1)))
    while True:
        extra_outer = fused.nparam + 1 + (1 if stats is not None else 0)
        if g.count() + extra_outer >= target - 1:
            break
        t = R.random()
        if t < 0.3:
            bp = g.param((oshape[-1],) if r else (), 'f32' if R.random() < 0.5 else y.dt)
            bc = g.add(BROADCAST, oshape, bp.dt, (bp,), layout=olay, adims=(r - 1,) if r else ())
            y = g.add(int(R.choice([ADD, MUL])), oshape, y.dt, (y, g.add(CONVERT, oshape, y.dt, (bc,), layout=olay) if bc.dt != y.dt else bc), layout=olay)
        elif t < 0.5:
            c = g.const(y.dt)
            bc = g.add(BROADCAST, oshape, y.dt, (c,), layout=olay)
            y = g.add(int(R.choice([MAX, MUL, ADD, MIN])), oshape, y.dt, (y, bc), layout=olay)
        elif t < 0.62:
            c = g.const(y.dt)
            bc = g.add(BROADCAST, oshape, y.dt, (c,), layout=olay)
            m = g.add(COMPARE, oshape, 'pred', (y, bc), layout=olay)
            y = g.add(SELECT, oshape, y.dt, (m, y, bc), layout=olay)
        elif t < 0.75 and kind != 'red':
            res = g.param(oshape, y.dt, layout=olay)
            y = g.add(ADD, oshape, y.dt, (y, res), layout=olay)
        elif t < 0.87:
            y = g.add(int(R.choice([EXP, TANH, RSQRT, LOGISTIC, NEG, ABS])), oshape, y.dt, (y,), layout=olay)
        else:
            ndt = 'f32' if y.dt != 'f32' else act
            y = g.add(CONVERT, oshape, ndt, (y,), layout=olay)
    if stats is not None:
        root = g.tuple_([y, stats])
    else:
        root = y
    # entry computation
    g.cur = g.main
    oparams = []
    for nd in fused.nodes:
        if nd.op == PARAM:
            oparams.append(g.param(nd.shape, nd.dt, layout=nd.layout))
    if root.op == TUPLE:
        fu = g.add(FUSION, (), 'tuple', oparams)
        fu.tn = root.tn
    else:
        fu = g.add(FUSION, root.shape, root.dt, oparams, layout=root.layout)
    fu.calls = [root]
    del main
    model = str(R.choice(TILE_MODELS))
    mode = 'train' if R.random() < 0.6 else 'inference'
    h = ''.join('%x' % int(v) for v in R.integers(0, 16, size=int(R.choice([15, 16]))))
    if h[0] == '0':
        h = 'a' + h[1:]
    name = f"{model}_{mode}_batch_{N}_{'-' if R.random() < 0.5 else ''}{h}"
    return g, name


# ----------------------------------------------------------------------------------------
# layout configuration samplers (generator side; the law only reads the arrays)


def _blk(vals):
    row = [-1] * 6
    for i, v in enumerate(vals[:6]):
        row[i] = int(v)
    return row


def _second_pref(shape, first, batch, spat):
    if batch is not None and shape[batch] >= 8:
        return batch
    cands = [d for d in spat if d != first]
    if cands:
        return max(cands, key=lambda d: shape[d])
    return batch if batch is not None else first


def compiler_default_blocks(nd, R):
    """The compiler's own choice (minor two dims) for (output, input, kernel) blocks."""
    r = len(nd.shape)
    out, inn, ker = [], [], []
    if nd.op == CONV:
        ib, iff, isp, kin, kout, ksp, ob, of = nd.convdn
        osp = [d for d in range(r) if d not in (ob, of)]
        out = [of, _second_pref(nd.shape, of, ob, osp)]
        x = nd.ins[0]
        inn = [iff, _second_pref(x.shape, iff, ib, list(isp))]
        ker = [kout, kin]
    elif nd.op == DOT:
        out = [r - 1, r - 2] if r >= 2 else [0]
        rl = len(nd.ins[0].shape)
        inn = [rl - 1, rl - 2] if rl >= 2 else [0]
    elif nd.op == RESHAPE:
        out = list(nd.layout[:2])
    elif nd.op == TRANSPOSE:
        x = nd.ins[0]
        perm = list(nd.adims)
        inv = {p: i for i, p in enumerate(perm)}
        out = [inv[d] for d in x.layout][:2]
    if R.random() < 0.2:
        out = []
    if R.random() < 0.5:
        inn = []
    if R.random() < 0.3:
        ker = []
    return out, inn, ker


def _rand_block(R, r):
    if r == 0:
        return []
    t = R.random()
    if t < 0.1:
        return []
    if r == 1:
        return [0]
    if t < 0.62:
        a, b = R.choice(r, size=2, replace=False)
        return [int(a), int(b)]
    return [int(v) for v in R.permutation(r)]


def _pick_dim(R, cands, shape):
    if not shape:
        return int(R.choice(cands))
    w = np.array([min(shape[d], 128) ** 1.5 + 0.5 for d in cands], np.float64)
    return int(cands[int(R.choice(len(cands), p=w / w.sum()))])


def _mutate_block(R, blk, r, dflt, shape=None):
    cur = list(blk) if blk else list(dflt)
    if r <= 1:
        return [] if (blk and R.random() < 0.5) else ([0] if r == 1 else [])
    if len(cur) < 2:
        cur = [cur[0] if cur else r - 1]
        cur.append(next(d for d in range(r - 1, -1, -1) if d not in cur))
    t = R.random()
    if t < 0.06:
        return [cur[1], cur[0]] + cur[2:]
    if t < 0.55:
        others = [d for d in range(r) if d not in cur[:1]]
        return [cur[0], _pick_dim(R, others, shape)]
    if t < 0.7:
        return []
    if t < 0.96:
        rest = [d for d in range(r) if d not in cur[:2]]
        R.shuffle(rest)
        return cur[:2] + rest
    others = [d for d in range(r) if d != cur[0]]
    return [_pick_dim(R, others, shape), cur[0]]


def sample_layout_configs(R, cnodes, c, search):
    """cnodes: list of (rank_out, rank_in, rank_k, (out, in, ker) defaults)."""
    nc = len(cnodes)
    D = np.full((nc, 18), -1, np.int64)
    for j, (ro, ri, rk, (o, i, k), _) in enumerate(cnodes):
        D[j, 0:6] = _blk(o)
        D[j, 6:12] = _blk(i)
        if rk:
            D[j, 12:18] = _blk(k)
    out = np.empty((c, nc, 18), np.float32)
    if search == 'random':
        pk = R.uniform(0.1, 0.5)
        out[:] = D[None, :, :]
        for j, (ro, ri, rk, _, _) in enumerate(cnodes):
            for bi, rr in ((0, ro), (1, ri), (2, rk)):
                if rr == 0:
                    continue
                keep = R.random(c) < pk
                t = R.random(c)
                P = np.argsort(R.random((c, rr)), axis=1)
                blk = np.full((c, 6), -1, np.int64)
                blk[:, :rr] = P
                if rr >= 2:
                    blk[t < 0.62, 2:] = -1
                else:
                    blk[:, 1:] = -1
                blk[t < 0.1, :] = -1
                cur = out[:, j, 6 * bi:6 * bi + 6]
                out[:, j, 6 * bi:6 * bi + 6] = np.where(keep[:, None], cur, blk)
        return out
    # default search: close to the compiler default, many repeats
    made = []
    for t in range(c):
        if made and R.random() < 0.3:
            out[t] = made[int(R.integers(len(made)))]
            continue
        M = D.copy()
        if t > 0 or R.random() < 0.5:
            kchg = 1 + int(R.geometric(0.55)) - 1
            for _ in range(min(kchg, nc)):
                j = int(R.integers(nc))
                ro, ri, rk, dfl, shp = cnodes[j]
                bi = int(R.choice(3, p=[0.6, 0.25, 0.15] if rk else [0.7, 0.3, 0.0]))
                rr = (ro, ri, rk)[bi]
                if rr == 0:
                    continue
                cur = [int(v) for v in M[j, 6 * bi:6 * bi + 6] if v >= 0]
                base = dfl[bi] if dfl[bi] else list(range(rr - 1, -1, -1))[:2]
                M[j, 6 * bi:6 * bi + 6] = _blk(_mutate_block(R, cur, rr, base, shp[bi]))
        out[t] = M
        made.append(M.astype(np.float32))
    return out


# ----------------------------------------------------------------------------------------
# THE LAW.  Everything below reads only the arrays stored in a file.

CORES = 2
BW = 600.0            # HBM bytes per ns per core
PEAK16 = 1.37e5       # MXU flop per ns per core, 16-bit operands
PEAK32 = PEAK16 / 3.0
VPU = 4000.0          # vector element-ops per ns per core
XLU = 450.0           # transpose/permute unit elements per ns per core
TDESC = 1.6           # ns per DMA descriptor per core (layout programs)
ICI = 90.0            # bytes per ns for cross-chip reductions
FUSE = 0.3            # share of an elementwise op's traffic left after fusion
GRAPH_CONST = 100000.0

_PERMS = []
_PID = {}


def pid(t):
    t = tuple(int(x) for x in t)
    i = _PID.get(t)
    if i is None:
        i = len(_PERMS)
        _PERMS.append(t)
        _PID[t] = i
    return i


def _pad(x, m):
    return -(-int(x) // m) * m


def _sub(eb):
    return 32 if eb == 1 else (16 if eb == 2 else 8)


def _g(ratio):
    return 1.0 + 0.35 * abs(math.log2(max(ratio, 1e-9)))


def parse_nodes(nf):
    n = nf.shape[0]
    dims, eb, dl, tup = [], [], [], []
    for u in range(n):
        f = nf[u]
        d = []
        for k in range(6):
            v = int(round(float(f[21 + k])))
            if v <= 0:
                break
            d.append(v)
        tcol = 2 + int(np.argmax(f[2:21]))
        istup = tcol == 18
        if istup:
            d = []
        r = len(d)
        lay = tuple(int(round(float(x))) for x in f[134:134 + r])
        if sorted(lay) != list(range(r)):
            lay = tuple(range(r - 1, -1, -1))
        dims.append(tuple(d))
        eb.append(max(1, COL_BYTES.get(tcol, 4)) if not istup else 0)
        dl.append(pid(lay))
        tup.append(istup)
    return dims, eb, dl, tup


_TQ = {}


def tq(dims, eb, p):
    """(padded elements, two-core split factor, minor size, second-minor size)"""
    key = (dims, eb, p)
    v = _TQ.get(key)
    if v is not None:
        return v
    perm = _PERMS[p]
    r = len(dims)
    if r == 0:
        v = (1.0, 2.0, 1, 1)
    else:
        sub = _sub(eb)
        m = dims[perm[0]]
        s = dims[perm[1]] if r >= 2 else 1
        rest = prod(dims) // (m * s)
        pe = float(_pad(m, 128) * (_pad(s, sub) if r >= 2 else 1) * rest)
        d = 0
        for k in reversed(perm[2:]):
            if dims[k] >= 2:
                d = dims[k]
                break
        if d < 2:
            d = -(-s // sub) if r >= 2 else 1
        if d < 2:
            d = -(-m // 128)
        imb = 2.0 if d < 2 else 2.0 * (-(-d // 2)) / d
        v = (pe, imb, m, s)
    _TQ[key] = v
    return v


_CP = {}


def copy_cost(dims, eb, pa, pb):
    if pa == pb or len(dims) == 0:
        return 0.0
    key = (dims, eb, pa, pb)
    v = _CP.get(key)
    if v is not None:
        return v
    A, B = _PERMS[pa], _PERMS[pb]
    r = len(dims)
    sub = _sub(eb)
    va, _, ma, _ = tq(dims, eb, pa)
    vb, imb, mb, _ = tq(dims, eb, pb)
    k = 0
    while k < r and A[k] == B[k]:
        k += 1
    if k >= 2:
        run = _pad(dims[A[0]], 128) * _pad(dims[A[1]], sub) * prod(dims[A[i]] for i in range(2, k))
        desc = vb / max(run, 1)
        x = 0.0
    elif k == 1:
        desc = vb / 128.0
        x = 0.15 * vb / XLU
    else:
        desc = vb / (128.0 * sub)
        x = vb * _g(ma / mb) / XLU
    mem = (va + vb) * eb / BW + desc * TDESC
    v = 700.0 + imb * (max(mem, x) + 0.2 * min(mem, x)) / CORES
    _CP[key] = v
    return v


def _bitcast_reshape(din, pin, dout, pout):
    vol = prod(din)
    if vol <= 1:
        return True
    K = min(vol, 64)
    idx = np.unique(np.concatenate([np.arange(K, dtype=np.int64),
                                    (np.arange(256, dtype=np.int64) * 2654435761 + 97) % vol]))
    rin = len(din)
    ph_in = [din[d] for d in reversed(pin)]
    coords_ph = np.unravel_index(idx, ph_in)
    coords = [None] * rin
    for i, d in enumerate(reversed(pin)):
        coords[d] = coords_ph[i]
    lin = np.ravel_multi_index(coords, din)
    cout = np.unravel_index(lin, dout)
    ph_out = [dout[d] for d in reversed(pout)]
    out_lin = np.ravel_multi_index([cout[d] for d in reversed(pout)], ph_out)
    return bool(np.array_equal(out_lin, idx))


def vmap(fn, args, c):
    """Evaluate fn on the distinct combinations of (scalar or per-config) perm ids."""
    arrs = [a for a in args if isinstance(a, np.ndarray)]
    if not arrs:
        return fn(*args)
    cols = [a if isinstance(a, np.ndarray) else np.full(c, a, np.int64) for a in args]
    if len(cols) <= 4:
        key = np.zeros(c, np.int64)
        for a in cols:
            key = key * 32768 + a
        _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(np.stack(cols, 1), axis=0, return_index=True, return_inverse=True)
    res = np.array([fn(*[int(a[i]) for a in cols]) for i in first], np.float64)
    return res[inv.reshape(-1)]


def _resolve(row, base):
    fixed = []
    r = len(base)
    for v in row:
        v = int(v)
        if 0 <= v < r and v not in fixed:
            fixed.append(v)
    if not fixed:
        return None
    return tuple(fixed + [d for d in base if d not in fixed])


def _rows_ids(rows):
    r = np.clip(np.rint(rows).astype(np.int64), -1, 6) + 1
    key = np.zeros(r.shape[0], np.int64)
    for i in range(r.shape[1]):
        key = key * 8 + r[:, i]
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    return np.rint(rows[first]).astype(np.int64), inv.reshape(-1)


def resolve_out(rows, dflt_pid, c):
    u, inv = _rows_ids(rows)
    base = _PERMS[dflt_pid]
    vals = []
    for row in u:
        t = _resolve(row, base)
        vals.append(dflt_pid if t is None else pid(t))
    vals = np.array(vals, np.int64)
    if len(vals) == 1:
        return int(vals[0])
    return vals[inv]


def resolve_req(rows, prod_eff, c):
    """requirement on an operand: returns per-config pid (equal to prod_eff where none)."""
    u, inv = _rows_ids(rows)
    if len(u) == 1 and all(v < 0 for v in u[0]):
        return prod_eff
    pe = prod_eff if isinstance(prod_eff, np.ndarray) else np.full(c, prod_eff, np.int64)
    key = inv.astype(np.int64) * 32768 + pe
    _, first, kinv = np.unique(key, return_index=True, return_inverse=True)
    vals = []
    for i in first:
        t = _resolve(u[inv[i]], _PERMS[int(pe[i])])
        vals.append(int(pe[i]) if t is None else pid(t))
    vals = np.array(vals, np.int64)
    if len(vals) == 1:
        return int(vals[0])
    return vals[kinv.reshape(-1)]


def _conv_roles(u, ops, dims, nf):
    if len(ops) == 1:
        return ops[0], ops[0]
    f = nf[u]
    ib, iff, kin, kout, ob, of = (int(f[93]), int(f[94]), int(f[99]), int(f[100]), int(f[105]), int(f[106]))
    fgc = max(1, int(round(float(f[107]))))
    best, bs = (ops[0], ops[1]), -1
    for a, k in ((ops[0], ops[1]), (ops[1], ops[0])):
        da, dk, do = dims[a], dims[k], dims[u]
        try:
            s = (da[ib] == do[ob]) + (dk[kout] == do[of]) + (da[iff] == dk[kin] * fgc)
        except IndexError:
            s = 0
        if s > bs:
            best, bs = (a, k), s
    return best


def _dot_roles(u, ops, dims):
    if len(ops) == 1:
        return ops[0], ops[0]
    do = dims[u]
    for l, r in ((ops[0], ops[1]), (ops[1], ops[0])):
        dl_, dr = dims[l], dims[r]
        if len(dl_) >= 1 and len(dr) >= 2 and dl_[-1] == dr[-2] and do[-1] == dr[-1] and \
                (len(do) < 2 or len(dl_) < 2 or do[-2] == dl_[-2]):
            return l, r
    return ops[0], ops[1]


def layout_noiseless(nf, op, ei, ids, ncf):
    nf = np.asarray(nf, np.float64)
    op = np.asarray(op).astype(np.int64)
    n = nf.shape[0]
    c = ncf.shape[0]
    dims, eb, dl, tup = parse_nodes(nf)
    rank = [len(d) for d in dims]
    vol = [prod(d) for d in dims]
    prods = [[] for _ in range(n)]
    for u, v in np.asarray(ei).reshape(-1, 2):
        prods[int(u)].append(int(v))
    conf = {int(u): j for j, u in enumerate(np.asarray(ids).reshape(-1))}
    data = [[v for v in prods[u] if rank[v] > 0 and not tup[v]] for u in range(n)]

    def largest(u, same_rank=True):
        cands = [v for v in data[u] if (rank[v] == rank[u] or not same_rank)]
        if not cands:
            return None
        same = [v for v in cands if dims[v] == dims[u]]
        pool = same if same else cands
        return max(pool, key=lambda v: (vol[v], -v))

    eff = [None] * n
    src = [None] * n
    roles = {}
    req_in, req_k = {}, {}
    for u in range(n):
        o = int(op[u])
        if o == CONV:
            ops = [v for v in data[u] if rank[v] == rank[u]] or data[u][:1] or [u]
            roles[u] = _conv_roles(u, ops, dims, nf)
        elif o == DOT:
            ops = data[u] or [u]
            roles[u] = _dot_roles(u, ops, dims)
        else:
            mo = largest(u, same_rank=False)
            roles[u] = (mo if mo is not None else u, None)
        if u in conf:
            j = conf[u]
            eff[u] = resolve_out(ncf[:, j, 0:6], dl[u], c)
            a = roles[u][0]
            if a != u and rank[a] > 0:
                req_in[u] = resolve_req(ncf[:, j, 6:12], eff[a], c)
            if o == CONV:
                k = roles[u][1]
                if k != u and rank[k] > 0:
                    req_k[u] = resolve_req(ncf[:, j, 12:18], eff[k], c)
        elif o in FOLLOW_OPS and rank[u] > 0 and not tup[u]:
            s = largest(u, same_rank=True)
            src[u] = s
            eff[u] = eff[s] if s is not None else dl[u]
        else:
            eff[u] = dl[u]

    total = np.full(c, GRAPH_CONST, np.float64)
    for u in range(n):
        o = int(op[u])
        cost = 0.0
        if o in (PARAM,):
            cost = 0.0
        elif o in (CONSTANT, GTE, TUPLE, BITCAST):
            cost = 20.0
        elif o == WHILE:
            cost = 2500.0
        elif o in (BROADCAST, IOTA):
            pe = tq(dims[u], eb[u], dl[u])[0]
            cost = 100.0 + FUSE * pe * max(eb[u], 1) / BW / CORES
        elif o == CONV:
            cost = _conv_cost(u, roles[u], dims, eb, eff, req_in, req_k, nf, c)
        elif o == DOT:
            cost = _dot_cost(u, roles[u], dims, eb, eff, req_in, c)
        elif o == RESHAPE:
            cost = _reshape_cost(u, roles[u][0], dims, eb, eff, req_in, c)
        elif o == TRANSPOSE:
            cost = _transpose_cost(u, roles[u][0], dims, eb, eff, req_in, nf, c)
        elif o == REDUCE and roles[u][0] != u and rank[roles[u][0]] > rank[u]:
            cost = _reduce_cost(u, roles[u][0], dims, eb, eff, dl, nf, c)
        elif o in (REDUCEWIN, SELSCAT) and rank[u] > 0:
            cost = _rw_cost(u, roles[u][0], dims, eb, eff, nf, c)
        elif o == CONCAT and rank[u] > 0:
            cost = _concat_cost(u, data[u], dims, eb, eff, dl, nf, c)
        elif o in (SLICE, PAD, DSLICE, DUS) and rank[u] > 0:
            cost = _slice_cost(u, largest(u), dims, eb, eff, dl, c)
        elif o == COPY and rank[u] > 0 and roles[u][0] != u:
            x = roles[u][0]
            if dims[x] == dims[u]:
                cost = vmap(lambda px, du=dl[u], x=x: (
                    copy_cost(dims[x], eb[x], px, du) if px != du else
                    300.0 + tq(dims[u], eb[u], du)[1] * 2 * tq(dims[u], eb[u], du)[0] * eb[u] / BW / CORES),
                    [eff[x]], c)
            else:
                cost = 300.0 + 2 * tq(dims[u], eb[u], dl[u])[0] * eb[u] / BW / CORES
        elif o in FOLLOW_OPS and rank[u] > 0 and not tup[u]:
            cost = _ew_cost(u, o, src[u], data[u], dims, eb, eff, op, c)
        elif o == GATHER and rank[u] > 0:
            cost = 1500.0 + 3.0 * tq(dims[u], eb[u], dl[u])[0] * eb[u] / BW / CORES
        elif rank[u] > 0 and not tup[u]:
            cost = 300.0 + 2.0 * tq(dims[u], eb[u], dl[u])[0] * eb[u] / BW / CORES
        else:
            cost = 40.0
        total += cost
    return total


def _ew_cost(u, o, s, ins, dims, eb, eff, op, c):
    real = [v for v in ins if int(op[v]) not in FREE_OPERANDS]
    opw = 4.0 if o in TRANSC_OPS else 1.0
    du, ebu = dims[u], eb[u]

    def f(po, *pvs):
        pe, imb, _, _ = tq(du, ebu, po)
        if o == ALLREDUCE:
            return 6000.0 + pe * ebu / ICI
        byt = pe * ebu
        for v, pv in zip(real, pvs):
            byt += tq(dims[v], eb[v], pv)[0] * eb[v]
        mem = FUSE * byt / BW
        comp = pe * opw / VPU
        return 120.0 + imb * max(mem, comp) / CORES

    cost = vmap(f, [eff[u]] + [eff[v] for v in real], c)
    for v in real:
        if v != s and dims[v] == du:
            cost = cost + vmap(lambda a, b, v=v: copy_cost(dims[v], eb[v], a, b), [eff[v], eff[u]], c)
    return cost


def _conv_cost(u, role, dims, eb, eff, req_in, req_k, nf, c):
    a, k = role
    f = nf[u]
    iff, kin, kout, of = int(f[94]), int(f[99]), int(f[100]), int(f[106])
    fgc = max(1, int(round(float(f[107]))))
    win = max(1.0, float(f[44]))
    du, da, dk = dims[u], dims[a], dims[k]
    r = len(du)
    if r == 0 or not (0 <= of < r) or not (0 <= iff < len(da)):
        return 1500.0
    Cin, Cout = da[iff], du[of]
    flops = 2.0 * prod(du) * win * Cin / fgc
    peak = PEAK16 if max(eb[a], eb[k]) <= 2 else PEAK32
    pi = req_in.get(u, eff[a])
    pk = req_k.get(u, eff[k])
    extra = 0.0
    if u in req_in:
        extra = extra + vmap(lambda x, y: copy_cost(da, eb[a], x, y), [eff[a], pi], c)
    if u in req_k:
        extra = extra + vmap(lambda x, y: copy_cost(dk, eb[k], x, y), [eff[k], pk], c)

    def fo(po):
        pe, imb, m, s = tq(du, eb[u], po)
        p = _PERMS[po]
        if p[0] == of:
            uo, xo = m / _pad(m, 128), 0.0
        else:
            uo, xo = 0.5 * Cout / _pad(Cout, 128), pe * _g(m / Cout)
        asp = 1.0 / (1.0 + 0.12 * max(0.0, math.log2(_pad(m, 128) / (8.0 * s))))
        return (uo * asp, xo, pe * eb[u], imb)

    def fi(pp):
        pe, _, mi, _ = tq(da, eb[a], pp)
        Kc = Cin * win if Cin < 64 else Cin
        ui = Kc / _pad(int(Kc), 128)
        if _PERMS[pp][0] == iff:
            xi = 0.0
        else:
            ui *= 0.85
            xi = pe * _g(mi / Cin)
        return (ui, xi, pe * eb[a])

    def fk(pp):
        pe = tq(dk, eb[k], pp)[0]
        p = _PERMS[pp]
        if len(p) == 0:
            kf = 1.0
        elif p[0] == kout and (len(p) < 2 or p[1] == kin):
            kf = 1.0
        elif p[0] == kout:
            kf = 1.04
        elif p[0] == kin:
            kf = 1.12
        else:
            kf = 1.3
        return (kf, pe * eb[k])

    O = _vm_multi(fo, eff[u], c, 4)
    I = _vm_multi(fi, pi, c, 3)
    Kk = _vm_multi(fk, pk, c, 2)
    rows = prod(du) / max(Cout, 1)
    reloads = min(16.0, math.ceil(rows / 2048.0))
    comp = flops / (peak * O[0] * I[0]) * Kk[0]
    mem = (I[2] + O[2] + Kk[1] * reloads) / BW
    return 1500.0 + O[3] * np.maximum(comp, mem) / CORES + (O[1] + I[1]) / XLU / CORES + extra


def _vm_multi(fn, p, c, k):
    if isinstance(p, np.ndarray):
        _, first, inv = np.unique(p, return_index=True, return_inverse=True)
        res = np.array([fn(int(p[i])) for i in first], np.float64)[inv.reshape(-1)]
        return [res[:, i] for i in range(k)]
    return list(fn(int(p)))


def _dot_cost(u, role, dims, eb, eff, req_in, c):
    l, rr = role
    du, dl_, dr = dims[u], dims[l], dims[rr]
    r = len(du)
    if r == 0 or len(dl_) == 0:
        return 1500.0
    N = du[-1]
    M = du[-2] if r >= 2 else 1
    K = dl_[-1]
    flops = 2.0 * prod(du) * K
    peak = PEAK16 if max(eb[l], eb[rr]) <= 2 else PEAK32
    pl = req_in.get(u, eff[l])
    extra = 0.0
    if u in req_in:
        extra = vmap(lambda x, y: copy_cost(dl_, eb[l], x, y), [eff[l], pl], c)

    def fo(po):
        pe, imb, m, s = tq(du, eb[u], po)
        p0 = _PERMS[po][0]
        if p0 == r - 1:
            uo, xo = N / _pad(N, 128), 0.0
        elif p0 == r - 2:
            uo, xo = 0.95 * M / _pad(M, 128), 0.0
        else:
            uo, xo = 0.4 * N / _pad(N, 128), pe * _g(m / N)
        asp = 1.0 / (1.0 + 0.12 * max(0.0, math.log2(_pad(m, 128) / (8.0 * s))))
        return (uo * asp, xo, pe * eb[u], imb)

    def fl(pp):
        pe, _, ml, _ = tq(dl_, eb[l], pp)
        rl = len(dl_)
        p0 = _PERMS[pp][0]
        uk = K / _pad(K, 128)
        if p0 == rl - 1:
            xl = 0.0
        elif p0 == rl - 2:
            xl = pe * _g(ml / K)
        else:
            uk *= 0.6
            xl = 1.5 * pe * _g(ml / K)
        return (uk, xl, pe * eb[l])

    def fr(pp):
        pe, _, mr, _ = tq(dr, eb[rr], pp)
        rk = len(dr)
        if rk == 0:
            return (0.0, pe * eb[rr])
        p0 = _PERMS[pp][0]
        if p0 == rk - 1:
            xr = 0.0
        elif rk >= 2 and p0 == rk - 2:
            xr = 0.5 * pe * _g(mr / N)
        else:
            xr = 1.5 * pe * _g(mr / N)
        return (xr, pe * eb[rr])

    O = _vm_multi(fo, eff[u], c, 4)
    L = _vm_multi(fl, pl, c, 3)
    Rr = _vm_multi(fr, eff[rr], c, 2) if rr != l else [0.0, 0.0]
    comp = flops / (peak * O[0] * L[0])
    mem = (L[2] + O[2] + Rr[1]) / BW
    return 1500.0 + O[3] * np.maximum(comp, mem) / CORES + (O[1] + L[1] + Rr[0]) / XLU / CORES + extra


def _reshape_cost(u, a, dims, eb, eff, req_in, c):
    du, da = dims[u], dims[a]
    if a == u or len(du) == 0 or len(da) == 0 or prod(du) != prod(da):
        return 60.0
    pi = req_in.get(u, eff[a])
    extra = 0.0
    if u in req_in:
        extra = vmap(lambda x, y: copy_cost(da, eb[a], x, y), [eff[a], pi], c)
    e = eb[u]
    sub = _sub(e)

    def f(pin, pout):
        if _bitcast_reshape(da, _PERMS[pin], du, _PERMS[pout]):
            return 60.0
        pe_o, imb, mo, _ = tq(du, e, pout)
        pe_i, _, mi, _ = tq(da, eb[a], pin)
        if mi == mo:
            desc, x = pe_o / 128.0, 0.0
        else:
            desc, x = pe_o / (128.0 * sub), pe_o * _g(mi / mo) / XLU
        mem = (pe_i * eb[a] + pe_o * e) / BW + desc * TDESC
        return 800.0 + imb * (max(mem, x) + 0.2 * min(mem, x)) / CORES

    return vmap(f, [pi, eff[u]], c) + extra


def _transpose_cost(u, a, dims, eb, eff, req_in, nf, c):
    du, da = dims[u], dims[a]
    r = len(du)
    if a == u or r == 0 or len(da) != r:
        return 50.0
    perm = [int(round(float(x))) for x in nf[u, 31:31 + r]]
    if sorted(perm) != list(range(r)):
        perm = list(range(r))
    pi = req_in.get(u, eff[a])
    extra = 0.0
    if u in req_in:
        extra = vmap(lambda x, y: copy_cost(da, eb[a], x, y), [eff[a], pi], c)

    def f(pin, pout):
        q = tuple(perm[x] for x in _PERMS[pout])
        qi = pid(q)
        if qi == pin:
            return 50.0
        return copy_cost(da, eb[a], pin, qi) + 100.0

    return vmap(f, [pi, eff[u]], c) + extra


def _reduce_cost(u, x, dims, eb, eff, dl, nf, c):
    du, dx = dims[u], dims[x]
    cnt = len(dx) - len(du)
    R = set(int(round(float(v))) for v in nf[u, 31:31 + min(cnt, 6)])
    pout = dl[u]

    def f(px):
        pe, imb, m, s = tq(dx, eb[x], px)
        p = _PERMS[px]
        lane = p[0] in R
        subl = len(p) >= 2 and p[1] in R
        mem = pe * eb[x] / BW
        comp = pe / VPU * (1.0 + (0.6 if subl else 0.0)) + (0.5 * pe / XLU if lane else 0.0)
        extra = 0.0
        if len(du) >= 2:
            kept = [d for d in p if d not in R]
            idx = {d: i for i, d in enumerate(sorted(kept))}
            order = tuple(idx[d] for d in kept)
            Q = _PERMS[pout]
            if order != Q:
                pe_o = tq(du, eb[u], pout)[0]
                extra = 2.0 * pe_o * eb[u] / BW + pe_o * _g(du[order[0]] / du[Q[0]]) / XLU
        return 500.0 + imb * max(mem, comp) / CORES + extra / CORES

    return vmap(f, [eff[x]], c)


def _rw_cost(u, x, dims, eb, eff, nf, c):
    du = dims[u]
    r = len(du)
    w = [max(1, int(round(float(v)))) for v in nf[u, 37:37 + r]]
    wp = max(1, prod(w))
    dx = dims[x] if x != u else du

    def f(p, px):
        pe_o, imb, _, _ = tq(du, eb[u], p)
        pe_i = tq(dx, eb[x], px)[0] if len(dx) else pe_o
        P = _PERMS[p]
        pen = 1.0 + (1.4 if w[P[0]] > 1 else 0.0) + (0.3 if r >= 2 and w[P[1]] > 1 else 0.0)
        comp = pe_o * wp / VPU * pen
        mem = (pe_i * eb[x] + pe_o * eb[u]) / BW
        return 400.0 + imb * max(comp, mem) / CORES

    return vmap(f, [eff[u], eff[x] if len(dx) == r else eff[u]], c)


def _concat_cost(u, ins, dims, eb, eff, dl, nf, c):
    du = dims[u]
    pc = dl[u]
    cd = int(round(float(nf[u, 31])))
    ops = [v for v in ins if len(dims[v]) == len(du)]
    base = tq(du, eb[u], pc)[0] * eb[u]
    shift = False
    for v in ops:
        base += tq(dims[v], eb[v], pc)[0] * eb[v]
        if 0 <= cd < len(du) and dims[v][cd] % 128:
            shift = True
    fac = 1.8 if (shift and _PERMS[pc][0] == cd) else 1.0
    cost = 400.0 + tq(du, eb[u], pc)[1] * fac * base / BW / CORES
    for v in ops:
        cost = cost + vmap(lambda a, v=v: copy_cost(dims[v], eb[v], a, pc), [eff[v]], c)
    return cost


def _slice_cost(u, x, dims, eb, eff, dl, c):
    du = dims[u]
    po = dl[u]
    if x is None:
        return 250.0 + 2.0 * tq(du, eb[u], po)[0] * eb[u] / BW / CORES
    dx = dims[x]

    def f(px):
        pe_o, imb, _, _ = tq(du, eb[u], po)
        P, Q = _PERMS[px], _PERMS[po]
        if P[:2] == Q[:2]:
            return 250.0 + imb * (2.0 * pe_o * eb[u] / BW) / CORES
        pe_x = tq(dx, eb[x], px)[0]
        return 250.0 + imb * ((pe_x * eb[x] + pe_o * eb[u]) / BW +
                              pe_o * _g(dx[P[0]] / du[Q[0]]) / XLU) / CORES

    return vmap(f, [eff[x]], c)


# ---------------------------------------------------------------- tile law

T_BW = 600.0
T_VPU = 4000.0
T_XLU = 450.0
T_DESC = 4.0
T_STEP = 300.0
T_LAUNCH = 1800.0
T_VMEM = 16 * 2 ** 20


def _phys(dims, lay):
    r = len(dims)
    order = [lay[r - 1 - i] for i in range(r)]
    unit = [1] * r
    if r >= 1:
        unit[-1] = 128
    if r >= 2:
        unit[-2] = 8
    P = [dims[d] for d in order]
    U = [-(-P[i] // unit[i]) for i in range(r)]
    return order, unit, P, U


def _tblk(dims, lay, eb, E):
    """bytes, DMA descriptors and padded elements of one block given true logical extents E (c, r)."""
    order, unit, P, U = _phys(dims, lay)
    r = len(dims)
    c = E.shape[0]
    elems = np.ones(c)
    run = np.ones(c)
    still = np.ones(c, bool)
    exts = []
    for i in range(r):
        e = np.ceil(E[:, order[i]] / unit[i]) * unit[i]
        exts.append(e)
        elems = elems * e
    for i in reversed(range(r)):
        run = np.where(still, run * exts[i], run)
        still = still & (exts[i] >= U[i] * unit[i])
    return elems * eb, elems / run, elems


def _chain_params(v, prods, op, dims):
    """parameters reached from v through convert/bitcast/copy chains"""
    out, stack, seen = set(), [v], set()
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        if int(op[x]) == PARAM:
            out.add(x)
        elif int(op[x]) in (CONVERT, BITCAST, COPY):
            stack.extend(p for p in prods[x] if dims[p] == dims[x] or int(op[x]) == BITCAST)
    return out


def tile_parse(nf, op, ei):
    nf = np.asarray(nf, np.float64)
    op = np.asarray(op).astype(np.int64)
    n = len(op)
    dims, eb, dl, tup = parse_nodes(nf)
    lay = [_PERMS[p] for p in dl]
    prods = [[] for _ in range(n)]
    cons = [[] for _ in range(n)]
    for u, v in np.asarray(ei).reshape(-1, 2):
        prods[int(u)].append(int(v))
        cons[int(v)].append(int(u))
    last = n - 1
    outer = set()
    out = last
    if int(op[last]) == FUSION:
        outer = {last} | {v for v in prods[last] if int(op[v]) == PARAM}
        roots = [v for v in prods[last] if v not in outer and nf[v, 0] > 0.5]
        if roots:
            out = max(roots)
    if tup[out] or len(dims[out]) == 0:
        cands = [v for v in prods[out] if len(dims[v]) > 0 and not tup[v]]
        if cands:
            out = max(cands, key=lambda v: (prod(dims[v]), -v))
    inner = [u for u in range(n) if u not in outer]
    main, mkind, kern, act = None, None, None, None
    for kop in (CONV, DOT):
        cs = [u for u in inner if int(op[u]) == kop and dims[u] == dims[out]]
        if cs:
            main = max(cs, key=lambda u: (prod(dims[u]), -u))
            mkind = kop
            break
    if main is not None:
        ops = [v for v in prods[main] if len(dims[v]) > 0 and not tup[v]]
        if mkind == CONV:
            ops2 = [v for v in ops if len(dims[v]) == len(dims[main])] or ops
            act, kern = _conv_roles(main, ops2, dims, nf) if ops2 else (None, None)
        else:
            act, kern = _dot_roles(main, ops, dims) if ops else (None, None)
        if act is None or kern is None or len(dims[kern]) < 2:
            main, mkind = None, None
    red = None
    if main is None:
        rs = [u for u in inner if int(op[u]) == REDUCE and dims[u] == dims[out]]
        if rs:
            red = rs[-1]
    params = [u for u in inner if int(op[u]) == PARAM and len(dims[u]) > 0 and not tup[u]]
    Uo = _phys(dims[out], lay[out])[3] if dims[out] else []
    Uk = _phys(dims[kern], lay[kern])[3] if main is not None else []
    return dict(n=n, nf=nf, op=op, dims=dims, eb=eb, lay=lay, tup=tup, prods=prods, cons=cons,
                out=out, inner=inner, main=main, mkind=mkind, act=act, kern=kern, red=red,
                params=params, Uo=Uo, Uk=Uk)


def tile_noiseless(nf, op, ei, cf):
    T = tile_parse(nf, op, ei)
    nf, op, dims, eb, lay = T['nf'], T['op'], T['dims'], T['eb'], T['lay']
    prods, cons = T['prods'], T['cons']
    cf = np.asarray(cf, np.float64)
    c = cf.shape[0]
    out = T['out']
    du = dims[out]
    ro = len(du)
    if ro == 0:
        return np.full(c, T_LAUNCH)
    order_o, unit_o, P_o, U_o = _phys(du, lay[out])
    U_arr = np.array(U_o, np.float64)
    bo = np.rint(cf[:, 8:8 + min(ro, 6)])
    bo = np.where(bo <= 0, U_arr[None, :], bo)
    bo = np.clip(bo, 1, U_arr[None, :])
    ext = bo * np.array(unit_o, np.float64)[None, :]
    G = np.ceil(U_arr[None, :] / bo)
    S = np.prod(G, axis=1)
    Eo = np.empty((c, ro))
    for i in range(ro):
        Eo[:, order_o[i]] = np.minimum(ext[:, i], P_o[i])
    b_o, d_o, e_o = _tblk(du, lay[out], eb[out], Eo)
    vo = prod(du)
    main, red = T['main'], T['red']
    w_ops = 0.0
    for u in T['inner']:
        o = int(op[u])
        if u in (main, red) or o in (PARAM, CONSTANT, TUPLE) or T['tup'][u] or not dims[u]:
            continue
        if prod(dims[u]) < 0.5 * vo:
            continue
        w_ops += 4.0 if o in TRANSC_OPS else (0.5 if o == BROADCAST else 1.0)
    w_ops = max(1.0, w_ops)
    accounted = set()
    if main is not None:
        accounted |= _chain_params(T['act'], prods, op, dims) | _chain_params(T['kern'], prods, op, dims)
    # reduction input block
    Ex, X, Rset = None, None, set()
    if red is not None:
        X = max((v for v in prods[red] if len(dims[v]) > 0), key=lambda v: (prod(dims[v]), -v), default=None)
        if X is not None and len(dims[X]) > ro:
            cnt = len(dims[X]) - ro
            Rset = set(int(round(float(v))) for v in nf[red, 31:31 + min(cnt, 6)])
            kept = [d for d in range(len(dims[X])) if d not in Rset]
            if len(kept) == ro:
                Ex = np.empty((c, len(dims[X])))
                for i, d in enumerate(kept):
                    Ex[:, d] = Eo[:, i]
                for d in Rset:
                    Ex[:, d] = dims[X][d]
    om = order_o[-1]
    streamed, once = [], 0.0
    xlu = np.zeros(c)
    for p in T['params']:
        if p in accounted:
            continue
        dp = dims[p]
        E = None
        if dp == du:
            E = Eo
            pm_out = lay[p][0]
        else:
            for t in cons[p]:
                if int(op[t]) == TRANSPOSE and dims[t] == du:
                    perm = [int(round(float(x))) for x in nf[t, 31:31 + ro]]
                    if sorted(perm) == list(range(ro)):
                        E = np.empty((c, ro))
                        for i in range(ro):
                            E[:, perm[i]] = Eo[:, i]
                        pm_out = perm.index(lay[p][0])
                    break
            if E is None and Ex is not None and dp == dims[X]:
                E = Ex
                pm_out = None
        if E is None:
            once += prod(dp) * eb[p]
            continue
        bp, dp_, ep = _tblk(dp, lay[p], eb[p], E)
        streamed.append((bp, dp_))
        if pm_out is not None and pm_out != om:
            xlu += ep * (1.0 + 0.35 * np.abs(np.log2(Eo[:, om] / np.maximum(E[:, lay[p][0]], 1)))) / T_XLU
    s_b = sum((b for b, _ in streamed), np.zeros(c))
    s_d = sum((d for _, d in streamed), np.zeros(c))
    if main is not None:
        a, k = T['act'], T['kern']
        da, dk = dims[a], dims[k]
        order_k, unit_k, P_k, U_k = _phys(dk, lay[k])
        rk = len(dk)
        Uk_arr = np.array(U_k, np.float64)
        bk = np.rint(cf[:, 0:min(rk, 6)])
        bk = np.where(bk <= 0, Uk_arr[None, :], bk)
        bk = np.clip(bk, 1, Uk_arr[None, :])
        extk = bk * np.array(unit_k, np.float64)[None, :]
        Ek = np.empty((c, rk))
        for i in range(rk):
            Ek[:, order_k[i]] = np.minimum(extk[:, i], P_k[i])
        f = nf[main]
        if T['mkind'] == CONV:
            ib, iff, kin, kout, ob, of = (int(f[93]), int(f[94]), int(f[99]), int(f[100]),
                                          int(f[105]), int(f[106]))
            nsp = ro - 2
            isp = [int(f[95 + j]) for j in range(nsp)]
            ksp = [int(f[101 + j]) for j in range(nsp)]
            win = [max(1, int(f[37 + j])) for j in range(nsp)]
            strd = [max(1, int(f[45 + j])) for j in range(nsp)]
            wdil = [max(1, int(f[69 + j])) for j in range(nsp)]
            fgc = max(1, int(round(float(f[107]))))
            osp = [d for d in range(ro) if d not in (ob, of)]
            cin_k = dk[kin]
            cin_chunk = Ek[:, kin]
            cb = np.minimum(Ek[:, kout], Eo[:, of])
            taps = np.ones(c)
            Gk = np.ceil(cin_k / cin_chunk)
            for j in range(nsp):
                taps = taps * Ek[:, ksp[j]]
                Gk = Gk * np.ceil(dk[ksp[j]] / Ek[:, ksp[j]])
            Ea = np.empty((c, len(da)))
            Ea[:, ib] = Eo[:, ob]
            for j in range(nsp):
                Ea[:, isp[j]] = np.minimum((Eo[:, osp[j]] - 1) * strd[j] + (win[j] - 1) * wdil[j] + 1, da[isp[j]])
            Ea[:, iff] = cin_chunk * fgc if fgc == 1 else np.minimum(Eo[:, of], da[iff])
            Ekb = Ek.copy()
            Ekb[:, kout] = cb
            feat_dim = of
        else:
            K = da[-1]
            kchunk = Ek[:, -2]
            cin_chunk = kchunk
            cb = np.minimum(Ek[:, -1], Eo[:, -1])
            taps = np.ones(c)
            Gk = np.ceil(K / kchunk)
            Ea = np.empty((c, len(da)))
            nb = len(da) - 2
            for d in range(nb):
                Ea[:, d] = Eo[:, d] if d < ro else 1
            if len(da) >= 2:
                Ea[:, -2] = Eo[:, -2] if ro >= 2 else 1
            Ea[:, -1] = kchunk
            Ekb = Ek.copy()
            for d in range(rk - 2):
                Ekb[:, d] = Eo[:, d] if d < ro else Ekb[:, d]
            Ekb[:, -1] = cb
            feat_dim = ro - 1
        Gn = np.ceil(Eo[:, feat_dim] / cb)
        b_a, d_a, e_a = _tblk(da, lay[a], eb[a], Ea)
        b_k, d_k, e_k = _tblk(dk, lay[k], eb[k], Ekb)
        steps = S * Gn * Gk
        fpos = order_o.index(feat_dim)
        G_f = G[:, fpos]
        act_loads = np.where(Gk == 1, S / G_f, steps)
        w_total = float(np.prod([U_k[i] * unit_k[i] for i in range(rk)])) * eb[k]
        if w_total <= 4 * 2 ** 20:
            w_bytes, w_desc = np.full(c, w_total), np.full(c, 8.0)
        else:
            w_bytes, w_desc = steps * b_k, steps * d_k
        bytes_total = act_loads * b_a + w_bytes + S * (b_o + s_b)
        desc_total = act_loads * d_a + w_desc + S * (d_o + s_d)
        fext = np.ceil(Eo[:, feat_dim] / unit_o[fpos]) * unit_o[fpos]
        rows = e_o / fext
        flops = 2.0 * S * Gn * rows * cb * cin_chunk * taps * Gk
        kc = cin_chunk * taps
        u_k = kc / (np.ceil(kc / 128.0) * 128.0)
        u_n = cb / (np.ceil(cb / 128.0) * 128.0)
        e_rows = rows / (rows + 96.0)
        h = ext[:, -2] if ro >= 2 else np.ones(c)
        wv = ext[:, -1]
        e_asp = 1.0 / (1.0 + 0.02 * np.log2(h / wv) ** 2)
        peak = PEAK16 if max(eb[a], eb[k]) <= 2 else PEAK32
        comp_total = flops / (peak * u_k * u_n * e_rows * e_asp) + S * e_o * w_ops / T_VPU + S * xlu
        vmem = b_a + b_k + b_o + s_b
    else:
        steps = S
        comp = e_o * w_ops / T_VPU + xlu
        if Ex is not None:
            b_x, d_x, e_x = _tblk(dims[X], lay[X], eb[X], Ex)
            lane = lay[X][0] in Rset
            comp = comp + e_x / T_VPU * (1.0 + (1.5 if lane else 0.0))
        comp_total = S * comp
        bytes_total = S * (b_o + s_b)
        desc_total = S * (d_o + s_d)
        vmem = b_o + s_b
    dma_total = bytes_total / T_BW + desc_total * T_DESC
    comp_step = comp_total / steps
    dma_step = dma_total / steps
    step = np.maximum(comp_step, dma_step) + 0.1 * np.minimum(comp_step, dma_step) + T_STEP
    foot = 2.0 * vmem
    step = np.where(foot > T_VMEM, comp_step + dma_step + T_STEP, step)
    step = np.where(foot > 2 * T_VMEM, step * foot / (2 * T_VMEM), step)
    frac = np.ones(c)
    found = np.zeros(c, bool)
    for i in range(ro):
        Gi = G[:, i]
        sel = (~found) & (Gi >= 2)
        frac = np.where(sel, np.ceil(Gi / 2.0) / Gi, frac)
        found |= sel
    fill = dma_step + once / T_BW
    return T_LAUNCH + fill + steps * frac * step


# ----------------------------------------------------------------------------------------
# measurement noise (stored runtimes only)


def _walk(R, c, frac):
    k = max(3, int(c * frac))
    w = np.cumsum(R.normal(size=c + 2 * k))
    ker = np.ones(k) / k
    s = np.convolve(w, ker, mode='same')[k:k + c]
    s = s - s.mean()
    sd = s.std()
    return s / sd if sd > 0 else s


def measure(R, c, sigma0, warm_amp, p_out):
    lvl = sigma0 * np.exp(0.6 * _walk(R, c, 0.08))
    tau = max(1.0, c * R.uniform(0.03, 0.15))
    mean = warm_amp * np.exp(-np.arange(c) / tau) + 0.5 * sigma0 * _walk(R, c, 0.15)
    f1 = np.exp(mean + lvl * R.normal(size=c))
    f2 = np.exp(mean + lvl * R.normal(size=c))
    for f in (f1, f2):
        m = R.random(c) < p_out
        if m.any():
            f[m] *= 1.05 + 0.15 * R.pareto(1.3, size=int(m.sum()))
    return f1, f2


# ----------------------------------------------------------------------------------------
# dataset generation


def _hex(R, k):
    return ''.join('%x' % int(v) for v in R.integers(0, 16, size=k))


def _sample_bound(R, U):
    if U <= 1:
        return 1
    t = R.random()
    if t < 0.35:
        return 2 ** int(R.integers(0, int(math.log2(U)) + 1))
    if t < 0.55:
        divs = [d for d in range(1, U + 1) if U % d == 0]
        return int(R.choice(divs))
    if t < 0.68:
        return U
    return int(R.integers(1, U + 1))


def tile_default_cfg(T):
    Uo, Uk = T['Uo'], T['Uk']
    r = len(Uo)
    eb = max(1, T['eb'][T['out']])
    unit = [1] * r
    unit[-1] = 128
    if r >= 2:
        unit[-2] = 8
    b = [1] * r
    b[-1] = min(Uo[-1], 4)
    if r >= 2:
        b[-2] = min(Uo[-2], 8)
    byt = prod(bi * ui for bi, ui in zip(b, unit)) * eb
    for i in range(r - 3, -1, -1):
        while b[i] * 2 <= Uo[i] and byt * 2 <= 2 ** 19:
            b[i] *= 2
            byt *= 2
    bk = []
    if Uk:
        bk = [min(u, 16) for u in Uk]
        bk[-1] = min(Uk[-1], 4)
    return tuple(bk), tuple(b)


def _cfg_row(bk, bo):
    row = np.zeros(24, np.float32)
    if bk:
        row[0:len(bk)] = bk
        row[6] = sum(bk)
        row[7] = prod(bk)
    row[8:8 + len(bo)] = bo
    row[14] = sum(bo)
    row[15] = prod(bo)
    return row


def _tile_ok(T, key, s_ref, k_ref=1):
    bk, bo = key
    Uo = T['Uo']
    if bk and prod(-(-u // b) for u, b in zip(T['Uk'], bk)) > max(24, 8 * k_ref):
        return False
    r = len(Uo)
    unit = [1] * r
    unit[-1] = 128
    if r >= 2:
        unit[-2] = 8
    steps = prod(-(-u // b) for u, b in zip(Uo, bo))
    byt = prod(b * un for b, un in zip(bo, unit)) * max(1, T['eb'][T['out']])
    return steps <= 48 * s_ref and byt <= 8 * 2 ** 20


def sample_tile_configs(R, T, ncfg, arrays):
    Uo, Uk = T['Uo'], T['Uk']
    h = tile_default_cfg(T)
    s_ref = prod(-(-u // b) for u, b in zip(Uo, h[1]))
    k_ref = prod(-(-u // b) for u, b in zip(Uk, h[0])) if Uk else 1
    # the compiler's pick: its (imperfect) cost model over a few candidates
    cands = [h]
    for _ in range(200):
        if len(cands) >= 12:
            break
        key = (tuple(_sample_bound(R, u) for u in Uk), tuple(_sample_bound(R, u) for u in Uo))
        if key not in cands and _tile_ok(T, key, s_ref, k_ref):
            cands.append(key)
    est = tile_noiseless(arrays[0], arrays[1], arrays[2], np.stack([_cfg_row(bk, bo) for bk, bo in cands]))
    est = est * np.exp(R.normal(0.0, 0.35, size=len(cands)))
    d = cands[int(np.argmin(est))]
    seen = {d}
    cfgs = [d]
    tries = 0
    while len(cfgs) < ncfg and tries < ncfg * 40:
        tries += 1
        if R.random() < 0.3:
            bk, bo = list(d[0]), list(d[1])
            for _ in range(int(R.integers(1, 3))):
                if bk and R.random() < 0.4:
                    i = int(R.integers(len(bk)))
                    bk[i] = int(min(Uk[i], max(1, bk[i] * 2 if R.random() < 0.5 else bk[i] // 2)))
                else:
                    i = int(R.integers(len(bo)))
                    bo[i] = int(min(Uo[i], max(1, bo[i] * 2 if R.random() < 0.5 else bo[i] // 2)))
            key = (tuple(bk), tuple(bo))
        else:
            key = (tuple(_sample_bound(R, u) for u in Uk), tuple(_sample_bound(R, u) for u in Uo))
        if key not in seen and _tile_ok(T, key, s_ref, k_ref):
            seen.add(key)
            cfgs.append(key)
    order = R.permutation(len(cfgs))
    cfgs = [cfgs[i] for i in order]
    dflt = int(np.where(order == 0)[0][0])
    return np.stack([_cfg_row(bk, bo) for bk, bo in cfgs]), dflt


SIZES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  layout=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120),
                  lay_cfg=(300, 3000), lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 layout=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20),
                 lay_cfg=(30, 200), lay_test_cfg=(30, 60)),
}
COLLECTIONS = [('tile', 'xla', None), ('layout', 'xla', 'default'), ('layout', 'xla', 'random'),
               ('layout', 'nlp', 'default'), ('layout', 'nlp', 'random')]
SPLITS = ('train', 'valid', 'test')


def _save(root, rel, arrays, noiseless):
    path = os.path.join(root, rel + '.npz')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrays)
    if noiseless is not None:
        npath = os.path.join(root, 'noiseless', rel + '.npy')
        os.makedirs(os.path.dirname(npath), exist_ok=True)
        np.save(npath, np.asarray(noiseless, np.float64))


def gen_tile_file(R, root, split, Z):
    n_lo, n_hi = Z['tile_nodes']
    ncfg = int(R.integers(Z['tile_cfg'][0], Z['tile_cfg'][1] + 1))
    for _ in range(80):
        g, name = build_tile(R, n_lo, n_hi)
        nodes, feat, opc, ei, _ = finalize(g)
        T = tile_parse(feat, opc, ei)
        combos = prod(T['Uo']) * (prod(T['Uk']) if T['Uk'] else 1)
        if combos >= 2 * ncfg and n_lo <= len(nodes) <= n_hi and T['Uo']:
            break
    cf, dflt = sample_tile_configs(R, T, ncfg, (feat, opc, ei))
    c = cf.shape[0]
    stem = name if split != 'test' else _hex(R, 32)
    rel = f"npz/tile/xla/{split}/{stem}"
    if split == 'test':
        arrays = dict(node_feat=feat, node_opcode=opc, edge_index=ei, config_feat=cf,
                      config_runtime=np.zeros(c, np.int64),
                      config_runtime_normalizers=np.ones(c, np.int64))
        _save(root, rel, arrays, None)
        return rel, len(nodes), c
    true = tile_noiseless(feat, opc, ei, cf)
    f1, f2 = measure(R, c, R.uniform(0.003, 0.01), R.uniform(0.0, 0.02), 0.006)
    rt = np.maximum(1, np.rint(true * f1)).astype(np.int64)
    nrm = np.full(c, rt[dflt], np.int64)
    arrays = dict(node_feat=feat, node_opcode=opc, edge_index=ei, config_feat=cf,
                  config_runtime=rt, config_runtime_normalizers=nrm)
    _save(root, rel, arrays, true)
    return rel, len(nodes), c


def gen_layout_file(R, root, src, search, split, Z):
    n_lo, n_hi = Z['lay_nodes']
    nc_lo, nc_hi = Z['lay_nc']
    tiny = n_hi <= 200
    builder = build_cnn if src == 'xla' else build_tfm
    span = n_hi - n_lo
    for _ in range(60):
        n_target = int(R.integers(n_lo + span // 12, n_hi - span // 10))
        g, name = builder(R, n_target, n_hi, tiny)
        cnt = g.count()
        if not (n_lo <= cnt <= n_hi):
            continue
        nodes, feat, opc, ei, splits = finalize(g)
        cands = [nd for nd in nodes if nd.op in CONFIGURABLE and len(nd.shape) > 0 and nd.ins
                 and len(nd.ins[0].shape) > 0]
        if len(cands) >= nc_lo:
            break
    nc = int(R.integers(nc_lo, nc_hi + 1))
    if len(cands) > nc:
        w = np.array([2.0 if nd.op in (CONV, DOT) else 1.0 for nd in cands])
        pick = R.choice(len(cands), size=nc, replace=False, p=w / w.sum())
        cands = [cands[i] for i in sorted(pick)]
    cands.sort(key=lambda nd: nd.idx)
    ids = np.array([nd.idx for nd in cands], np.int64)
    cnodes = []
    for nd in cands:
        rk = len(nd.ins[1].shape) if (nd.op == CONV and len(nd.ins) > 1) else 0
        shp = (nd.shape, nd.ins[0].shape, nd.ins[1].shape if rk else ())
        cnodes.append((len(nd.shape), len(nd.ins[0].shape), rk, compiler_default_blocks(nd, R), shp))
    if split == 'test':
        c = int(R.integers(Z['lay_test_cfg'][0], Z['lay_test_cfg'][1] + 1))
    else:
        c = int(R.integers(Z['lay_cfg'][0], Z['lay_cfg'][1] + 1))
    ncf = sample_layout_configs(R, cnodes, c, search)
    stem = f"{name}_{_hex(R, 4)}" if split != 'test' else _hex(R, 32)
    rel = f"npz/layout/{src}/{search}/{split}/{stem}"
    arrays = dict(node_feat=feat, node_opcode=opc, edge_index=ei, node_config_ids=ids,
                  node_config_feat=ncf, node_splits=splits)
    if split == 'test':
        arrays['config_runtime'] = np.zeros(c, np.int64)
        _save(root, rel, arrays, None)
        return rel, len(nodes), c
    true = layout_noiseless(feat, opc, ei, ids, ncf)
    sig = R.uniform(0.001, 0.004) if search == 'default' else R.uniform(0.001, 0.003)
    f1, _ = measure(R, c, sig, R.uniform(0.0, 2.5) * sig, 0.003)
    arrays['config_runtime'] = np.maximum(1, np.rint(true * f1)).astype(np.int64)
    _save(root, rel, arrays, true)
    return rel, len(nodes), c


def run_task(task):
    root, seed, scale, ci, si, i = task
    Z = SIZES[scale]
    kind, src, search = COLLECTIONS[ci]
    R = np.random.default_rng(np.random.SeedSequence([int(seed), 12, ci, si, i]))
    t0 = time.time()
    if kind == 'tile':
        out = gen_tile_file(R, root, SPLITS[si], Z)
    else:
        out = gen_layout_file(R, root, src, search, SPLITS[si], Z)
    return out + (time.time() - t0,)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=['tiny', 'small'], default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    ap.add_argument('--workers', type=int, default=min(2, os.cpu_count() or 1))
    a = ap.parse_args(argv)
    Z = SIZES[a.scale]
    tasks = []
    for ci, (kind, src, search) in enumerate(COLLECTIONS):
        counts = Z['tile'] if kind == 'tile' else Z['layout']
        for si in range(3):
            k = max(1, int(round(counts[si] * a.graphs_factor)))
            for i in range(k):
                tasks.append((a.out, a.seed, a.scale, ci, si, i))
    # biggest jobs first for balance
    tasks.sort(key=lambda t: (t[3] == 0, t[4] == 2))
    t0 = time.time()
    if a.workers > 1 and len(tasks) > 4:
        import multiprocessing as mp
        with mp.get_context('fork').Pool(a.workers) as pool:
            res = list(pool.imap_unordered(run_task, tasks, chunksize=1))
    else:
        res = [run_task(t) for t in tasks]
    rels = [r[0] for r in res]
    if len(set(rels)) != len(rels):
        print('warning: duplicate stems', file=sys.stderr)
    print(f"wrote {len(res)} files under {a.out} in {time.time() - t0:.1f}s")


if __name__ == '__main__':
    main()
