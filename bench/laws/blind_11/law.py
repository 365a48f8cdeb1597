#!/usr/bin/env python3
"""Blind runtime law no. 11: synthetic TpuGraphs-format datasets.

Written without reading the tool's code. Sources: the TpuGraphs format notes and the
real sample files given to the author, upstream tpu_graphs' encoder sources
(hlo_opcode.h, featurizers.h, hlo_encoder.cc) for the opcode ids and the 140 node
feature columns, and general public TPU performance knowledge (8x128 vreg tiling,
padding of the two most-minor dimensions, MXU ops, ~0.35 us per pipelined grid step).

Usage:  python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

-------------------------------------------------------------------------------------
THE LAW (kept out of NOTE.md on purpose)
-------------------------------------------------------------------------------------
Everything below is evaluated from the arrays stored in the file only
(`layout_law(arrays)` / `tile_law(arrays)`), with fixed constants.

Common hardware picture: HBM 1200 B/ns, MXU 137 Tflop/s for 16-bit inputs (a third of
it for 32-bit), vector unit 3000 element-ops/ns.  A tensor lives in (S x 128) tiles.
Dims of extent 1 are elided from a layout (they take no tile position), so the
"effective" minor / second-minor dims are the first two dims of extent > 1 in the
minor-to-major list, and two layouts that agree after elision are the same buffer.
The effective minor extent m is padded to a multiple of 128 lanes when m >= 64, else to
min(128, 4 * next_pow2(m)) (small-lane packing); the second-minor extent s to a
multiple of S sublanes (S = 8 for 4-byte, 16 for 2-byte, 32 for 1-byte types) when
s >= S, else to next_pow2(s).  "Padded bytes" = bytes of that footprint (>= 512).

LAYOUT collections
  * Segments come from node_splits; operand edges are the edges inside a segment,
    call edges cross segments.  A segment whose tuple root is called by a `while`
    node is a loop body; its trip count T is read off the body's dynamic-slices
    (largest operand dim0 / slice dim0, clipped to [1, 64]).  Body costs are
    multiplied by T, the reducer segment (segment 0) costs nothing.
  * Layout resolution.  A configurable node's output layout is the config's
    minor-to-major list; dims left at -1 are filled in the order of the node's
    default layout (node_feat 134-139); an all -1 block means the default.
    Elementwise ops (and all-reduce / reduce-window / select-and-scatter) take the
    layout of their dominant operand (largest non-broadcast producer of the same
    shape), so a choice propagates down whole chains.  Broadcast / constant / iota /
    rng adopt whatever their consumer wants (never a copy).  Everything else keeps its
    default layout.
  * Boundaries.  On each operand edge the consumer requires a layout: a configurable
    conv/dot/reshape/transpose requires its input (and conv kernel) block when that
    block is set, otherwise accepts what it gets; elementwise consumers require their
    own (propagated) layout from every same-shape operand; reduce and MXU ops that are
    not configured accept anything; every other consumer (tuple, while, concat, slice,
    dynamic-slice, rigid reshape/transpose, ...) requires the producer's default.
    A mismatch (after elision of size-1 dims) inserts a copy costing
        ovh + rate * (padded src + padded dst bytes) / BW
    with (ovh, rate) = (1800 ns, 1.9) if the most-minor dim changes (lane transpose),
    (1100, 1.25) if only the second-minor dim changes, (700, 0.95) if only major dims
    move.  Size class on the raw bytes: tiny (< 32 KiB) costs 0.5 ovh + 0.3 of the
    traffic term; huge (> 96 MiB) costs 1.4x the traffic term.  Op kinds on the two
    sides scale it: MXU producer -> elementwise consumer 0.55 (0.8 for lane
    transposes: epilogue fusion), elementwise -> MXU 0.7, elementwise -> elementwise
    0.85, a reshape on either side 1.3 (the reshape stops being a bitcast), a
    transpose producer 0.9, a tuple/while consumer 1.15 (loop-carried state).
  * Node costs.
      conv/dot:  flops F (conv: 2 |out| prod(kernel spatial) Cin / groups, dot:
        2 |out| K with K = lhs last dim).  Efficiency
        eff = U_out^0.8 U_in^0.5 U_k^0.4 * p_out * p_in * p_k, where U = |t| /
        padded |t| under the layout used, p_out = 0.72 unless the output feature dim
        is minor, p_in = 0.8 unless the input contraction (feature) dim is minor,
        p_k = 0.85 unless the kernel's two feature dims are the two most-minor ones
        (dot: rhs minor must be K or N).  t_comp = min(F/peak/eff, fallback) where
        the fallback is the compiler relayouting internally (default-layout
        efficiency + 2 (in+out padded bytes)/BW + 1500 ns).  Node time =
        max(t_comp, t_mem) + 0.15 min(t_comp, t_mem) + 900 ns, t_mem = padded in +
        kernel + out bytes / BW.
      elementwise: 0.4 * padded bytes / BW * w (w = 1.6 transcendental, 1.3 divide,
        power); all-reduce: padded bytes / 90 B/ns + 4 us; reduce-window /
        select-and-scatter: (in + out padded) / BW * (1 + 0.6 if the window is wider
        than 1 along the layout's minor dim) + 600 ns.
      reduce: padded input bytes / BW * (1 + 1.2 [minor dim reduced] + 0.35 [second
        minor dim reduced]) + out / BW + 500 ns (cross-lane reductions are slow).
      configurable reshape: a bitcast (40 ns) iff input and output are both row-major;
        otherwise a copy of the "second-minor" class if the minor dims have equal
        extent, else of the lane-transpose class.
      configurable transpose: a bitcast iff the output layout is the input layout
        pushed through the permutation; otherwise a copy, lane-transpose class iff
        the output minor dim does not come from the input minor dim.
      anything else: constant (0.7 default padded bytes / BW + 400 ns).
  * Combination per segment: mxu + other + copies - hidden, where
    hidden = min(0.45 * copies touching an MXU op, 0.12 * mxu) (copies overlap with
    MXU work).  Program = sum_seg T_seg * seg + spill + 20 us + 30 ns * n, where
    spill = 2.5 * max(0, live - 1.08 live_default) / BW, live = padded bytes of all
    array values (+ every inserted copy's destination) and live_default the same with
    all-default layouts.  (Memory pressure couples every choice of the program.)

TILE collection (config_feat 0-7 kernel tile extents in the kernel operand's
minor-to-major order, 8-15 output tile extents in the output's minor-to-major order)
  * The kernel output is the largest array root; tile t_j over its dims d_j (m2m).
    n_tiles = prod ceil(d_j/t_j); tile footprint P = ceil128(t_0) ceilS(t_1) prod t_j.
  * Per tile: DMA = P * eb * (1 + in_ratio) / BW / read_eff, where in_ratio = bytes of
    the fusion's parameters / output bytes, read_eff = (min(t_j,128)/128)^0.6 for the
    output dim that is minor in a transposed operand (copy/transpose kernels);
    VPU = P * w * (1 + 0.25 in_ratio) / 3000 with w the weighted elementwise op count,
    x2.5 if a reduce runs across the lanes of its operand.
  * conv/dot kernels: tile over output feature dim tf, kernel tile over in-feature
    k_if / out-feature k_of / spatial; MXU time per tile = 2 rows tf Kc / peak /
    (u_n u_k u_m) (u = fill of 128-wide MXU / 8 rows) + 120 ns per contraction pass,
    input slab re-read per feature tile with halo (t+w-1)/t on spatial dims, weights
    re-read per spatial tile.
  * VMEM = 2 (in + out + weight tile bytes); above 16 MiB the DMA term grows by
    1 + 1.5 (VMEM/16MiB - 1)^1.3 (spilling).  Kernel time = 900 ns +
    n_tiles (max(DMA, compute) + 350 ns) + one DMA (pipeline fill).
  * Search space / default (sampler side, not part of the law): the compiler default
    is the best of ~600 power-of-two tilings under the compiler's own simplified model
    (no halo, no strided-read or lane-reduction penalty, 250 ns steps, VMEM <= 8 MiB);
    sampled configs are kept only if VMEM <= 32 MiB (else "compile error", dropped)
    and they use at most 10x the default's number of tiles; MXU kernel tiles >= 8.
  * Normalizer: the measurement of the compiler default tile config (that config's
    stored runtime is the same measurement).

NOISE (stored config_runtime only): multiplicative lognormal (sigma 0.4% layout,
1% tile), additive Gaussian jitter (400 ns layout, 15 ns tile), and rare one-sided
outliers (p 0.3% / 0.5%, x(1 + lognormal around 0.25)).
"""
import argparse
import math
import os
import sys
import time

import numpy as np

# ----------------------------------------------------------------------------------
# opcode ids (tpu_graphs hlo_opcode.h)
# ----------------------------------------------------------------------------------
O = dict(
    abs=1, add=2, all_reduce=5, bitcast=11, bitcast_convert=12, broadcast=13,
    clamp=17, compare=20, concatenate=22, constant=24, convert=25, convolution=26,
    copy=27, custom_call=31, divide=32, dot=34, dynamic_slice=35,
    dynamic_update_slice=36, exponential=37, fusion=41, gather=42, gte=45, iota=48,
    log=50, and_=52, not_=53, or_=54, maximum=57, minimum=58, multiply=59,
    negate=60, pad=62, parameter=63, power=66, reduce=70, reduce_window=72,
    reshape=75, rng=77, rsqrt=81, select=83, select_and_scatter=84, slice=92,
    sort=93, sqrt=94, subtract=95, tanh=96, transpose=98, tuple=100, while_=102,
    logistic=107, all_gather=104,
)

# element type -> one-hot column (2 + index in PRIMITIVE_TYPE_FEATURES)
ET_COL = {'pred': 3, 's8': 4, 's16': 5, 's32': 6, 's64': 7, 'u8': 8, 'u32': 10,
          'f16': 12, 'f32': 13, 'f64': 14, 'bf16': 15, 'tuple': 18, 'token': 20}
# bytes per element by one-hot column
COL_BYTES = np.array([4, 0, 4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8, 16, 0, 0, 0],
                     dtype=np.float64)

# ----------------------------------------------------------------------------------
# law constants
# ----------------------------------------------------------------------------------
BW = 1200.0            # HBM bytes per ns
ICI = 90.0             # collective bytes per ns
PEAK16 = 137000.0      # flop per ns, 16-bit MXU inputs
VPU = 3000.0           # element-ops per ns
OVH_MXU = 900.0
OVH_RIGID = 400.0
TINY_B = 32 * 1024
HUGE_B = 96 * 1024 * 1024
VMEM_CAP = 16 * 1024 * 1024
STEP = 350.0
LAUNCH = 900.0

EW_OPS = {1, 2, 7, 12, 15, 17, 19, 20, 25, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53,
          54, 55, 57, 58, 59, 60, 65, 66, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94,
          95, 96, 103, 107, 118}
FOLLOW_OPS = EW_OPS | {5, 72, 84}          # take the layout of the dominant operand
FREE_OPS = {13, 24, 48, 77}                # adopt the consumer's layout
ZERO_OPS = {63, 45, 100, 11, 102, 24, 4, 14, 23}
MXU_OPS = {26, 34}
TRANSC = {37, 38, 50, 51, 81, 96, 107, 94, 30, 91, 7}
HEAVY = {32, 66, 73}


def op_weight(o):
    if o in TRANSC:
        return 1.6
    if o in HEAVY:
        return 1.3
    return 1.0


# ==================================================================================
# HLO-like program builder
# ==================================================================================
class Node:
    __slots__ = ('op', 'dims', 'et', 'opnds', 'calls', 'f', 'tsize', 'pnum', 'lay',
                 'gid', 'comp')

    def __init__(self, op, dims, et, opnds, calls, f, tsize, pnum, lay, comp):
        self.op = op
        self.dims = tuple(int(d) for d in dims)
        self.et = et
        self.opnds = list(opnds)
        self.calls = list(calls)
        self.f = f or {}
        self.tsize = tsize
        self.pnum = pnum
        self.lay = lay
        self.gid = -1
        self.comp = comp


class Comp:
    def __init__(self, prog, kind):
        self.prog = prog
        self.kind = kind      # 'reducer', 'cond', 'body', 'entry', 'fused'
        self.nodes = []
        self.root = None
        self.npar = 0

    # -- generic --------------------------------------------------------------
    def add(self, op, dims, et, opnds=(), calls=(), f=None, tsize=0, pnum=0, lay=None):
        for x in opnds:
            assert x.comp is self, 'operand from another computation'
        n = Node(op, dims, et, opnds, calls, f, tsize, pnum, lay, self)
        self.nodes.append(n)
        return n

    def param(self, dims, et, lay=None):
        n = self.add(O['parameter'], dims, et, pnum=self.npar, lay=lay)
        self.npar += 1
        return n

    def tparam(self, elems):
        n = self.add(O['parameter'], (), 'tuple', tsize=len(elems), pnum=self.npar)
        self.npar += 1
        return n

    def const(self, et='f32', dims=()):
        # scalar constants are CSE'd by the compiler: one per type per computation
        key = ('c', et, tuple(dims))
        cache = self.__dict__.setdefault('_cse', {})
        if key not in cache or self.prog.rng.random() < 0.25:
            cache[key] = self.add(O['constant'], dims, et)
        return cache[key]

    def bcast(self, x, dims, bdims):
        return self.add(O['broadcast'], dims, x.et, [x], f={'dimensions': list(bdims)})

    def scal_b(self, dims, et):
        key = ('b', et, tuple(dims))
        cache = self.__dict__.setdefault('_cse', {})
        if key not in cache or self.prog.rng.random() < 0.3:
            cache[key] = self.bcast(self.const(et), dims, [])
        return cache[key]

    def ew(self, opname, a, *rest):
        et = 'pred' if opname == 'compare' else a.et
        return self.add(O[opname], a.dims, et, [a, *rest])

    def convert(self, x, et):
        return self.add(O['convert'], x.dims, et, [x])

    def reducer(self, et, kind='add'):
        return self.prog.new_reducer(et, kind)

    def reduce(self, x, rdims, kind='add'):
        rdims = sorted(rdims)
        out = [d for i, d in enumerate(x.dims) if i not in rdims]
        init = self.const(x.et)
        return self.add(O['reduce'], out, x.et, [x, init], calls=[self.reducer(x.et, kind)],
                        f={'dimensions': rdims})

    def reshape(self, x, dims):
        assert int(np.prod(dims)) == int(np.prod(x.dims)), (dims, x.dims)
        return self.add(O['reshape'], dims, x.et, [x])

    def transpose(self, x, perm):
        return self.add(O['transpose'], [x.dims[p] for p in perm], x.et, [x],
                        f={'dimensions': list(perm)})

    def dot(self, a, b, et=None):
        # lhs [..., M, K], rhs [..., K, N] -> [..., M, N]
        assert a.dims[-1] == b.dims[-2], (a.dims, b.dims)
        out = list(a.dims[:-1]) + [b.dims[-1]]
        return self.add(O['dot'], out, et or a.et, [a, b])

    def conv(self, x, k, sp):
        """sp: dict with in_b, in_f, in_sp, k_in, k_out, k_sp, out_b, out_f, out_sp,
        win, stride, plo, phi, bdil, rev, fgc"""
        ns = len(sp['in_sp'])
        out = [0] * (ns + 2)
        out[sp['out_b']] = x.dims[sp['in_b']]
        out[sp['out_f']] = k.dims[sp['k_out']]
        for i in range(ns):
            n_in = x.dims[sp['in_sp'][i]]
            n_in = (n_in - 1) * sp['bdil'][i] + 1
            wd = sp.get('wdil', [1] * ns)[i]
            we = (sp['win'][i] - 1) * wd + 1
            o = (n_in + sp['plo'][i] + sp['phi'][i] - we) // sp['stride'][i] + 1
            out[sp['out_sp'][i]] = max(1, o)
        return self.add(O['convolution'], out, x.et, [x, k], f={'conv': sp})

    def reduce_window(self, x, win, stride, kind='max'):
        out = [max(1, (d - w) // s + 1) for d, w, s in zip(x.dims, win, stride)]
        init = self.const(x.et)
        return self.add(O['reduce_window'], out, x.et, [x, init],
                        calls=[self.reducer(x.et, kind)],
                        f={'window': dict(win=win, stride=stride, plo=[0] * len(win),
                                          phi=[0] * len(win), bdil=[1] * len(win),
                                          rev=[0] * len(win))})

    def select_and_scatter(self, x, src, win, stride):
        init = self.const(x.et)
        return self.add(O['select_and_scatter'], x.dims, x.et, [x, src, init],
                        calls=[self.reducer('pred', 'ge'), self.reducer(x.et, 'add')],
                        f={'window': dict(win=win, stride=stride, plo=[0] * len(win),
                                          phi=[0] * len(win), bdil=[1] * len(win),
                                          rev=[0] * len(win))})

    def all_reduce(self, x):
        return self.add(O['all_reduce'], x.dims, x.et, [x], calls=[self.reducer(x.et, 'add')])

    def dyn_slice(self, x, idx, sizes):
        return self.add(O['dynamic_slice'], sizes, x.et, [x] + list(idx),
                        f={'dss': list(sizes)})

    def dus(self, x, upd, idx):
        return self.add(O['dynamic_update_slice'], x.dims, x.et, [x, upd] + list(idx))

    def slice(self, x, starts, limits):
        dims = [l - s for s, l in zip(starts, limits)]
        return self.add(O['slice'], dims, x.et, [x],
                        f={'slice': (list(starts), [1] * len(starts), list(limits))})

    def concat(self, xs, dim):
        dims = list(xs[0].dims)
        dims[dim] = sum(x.dims[dim] for x in xs)
        return self.add(O['concatenate'], dims, xs[0].et, xs, f={'dimensions': [dim]})

    def pad(self, x, lo, hi):
        dims = [d + a + b for d, a, b in zip(x.dims, lo, hi)]
        pv = self.const(x.et)
        return self.add(O['pad'], dims, x.et, [x, pv], f={'pad': (list(lo), list(hi))})

    def tuple(self, xs):
        return self.add(O['tuple'], (), 'tuple', xs, tsize=len(xs))

    def gte(self, t, dims, et):
        return self.add(O['gte'], dims, et, [t])

    def set_root(self, n):
        self.root = n


class Prog:
    def __init__(self, rng, deflay=None):
        self.rng = rng
        self.reducers = []
        self.loops = []       # (cond, body)
        self.fused = []       # fused computations (tile graphs)
        self.entry = Comp(self, 'entry')
        self.deflay = deflay or {}

    def new_reducer(self, et, kind):
        c = Comp(self, 'reducer')
        a = c.param((), et)
        b = c.param((), et)
        if kind == 'ge':
            r = c.add(O['compare'], (), 'pred', [a, b])
        else:
            r = c.add(O['maximum'] if kind == 'max' else O['add'], (), et, [a, b])
        c.set_root(r)
        self.reducers.append(c)
        return c

    def default_layout(self, n):
        r = len(n.dims)
        if n.et == 'tuple' or r == 0:
            return []
        if n.lay is not None:
            return list(n.lay)
        if r in self.deflay:
            return list(self.deflay[r])
        return list(range(r - 1, -1, -1))

    def while_loop(self, comp, init_elems, body_fn, trip_hint):
        """body_fn(body_comp, elems) -> list of new elems (same shapes)."""
        cond = Comp(self, 'cond')
        tp = cond.tparam(init_elems)
        ctr = cond.gte(tp, (), 's32')
        lim = cond.const('s32')
        cond.set_root(cond.add(O['compare'], (), 'pred', [ctr, lim]))
        body = Comp(self, 'body')
        bp = body.tparam(init_elems)
        els = [body.gte(bp, e.dims, e.et) for e in init_elems]
        new = body_fn(body, els)
        body.set_root(body.tuple(new))
        self.loops.append((cond, body))
        t = comp.tuple(init_elems)
        w = comp.add(O['while_'], (), 'tuple', [t], calls=[cond, body], tsize=len(init_elems))
        return w

    # -- finalize to arrays ------------------------------------------------------
    def order(self):
        comps = list(self.reducers)
        splits = [0]
        for cond, body in self.loops:
            comps.append(cond)
            comps.append(body)
        comps.extend(self.fused)
        comps.append(self.entry)
        gid = 0
        starts = {}
        for c in comps:
            starts[id(c)] = gid
            for nd in c.nodes:
                nd.gid = gid
                gid += 1
        for cond, body in self.loops:
            splits.append(starts[id(cond)])
            splits.append(starts[id(body)])
        if self.loops:
            splits.append(starts[id(self.entry)])
        elif self.reducers:
            splits.append(starts[id(self.entry)])
        splits.append(gid)
        return comps, splits, gid

    def finalize(self, with_splits=True):
        comps, splits, n = self.order()
        feat = np.zeros((n, 140), dtype=np.float32)
        opc = np.zeros(n, dtype=np.uint8)
        edges = []
        for c in comps:
            if c.root is None:
                c.root = c.nodes[-1]
            for nd in c.nodes:
                g = nd.gid
                opc[g] = nd.op
                feat[g] = encode_node(nd, self.default_layout(nd), nd is c.root)
                for v in sorted(set(x.gid for x in nd.opnds)):
                    edges.append((g, v))
                for cc in nd.calls:
                    edges.append((g, cc.root.gid))
        e = np.array(sorted(set(edges)), dtype=np.int64).reshape(-1, 2)
        out = dict(node_feat=feat, node_opcode=opc, edge_index=e)
        if with_splits:
            out['node_splits'] = np.array([splits], dtype=np.int64)
        return out, comps


def _seq(vals, k, empty_prod=1.0):
    vals = list(vals)
    out = [0.0] * k
    for i, v in enumerate(vals[:k]):
        out[i] = float(v)
    s = float(sum(vals))
    p = float(np.prod(vals)) if vals else empty_prod
    return out + [s, p]


def _noagg(vals, k):
    out = [0.0] * k
    for i, v in enumerate(list(vals)[:k]):
        out[i] = float(v)
    return out


def encode_node(nd, layout, is_root):
    f = [0.0] * 140
    f[0] = 1.0 if is_root else 0.0
    f[ET_COL.get(nd.et, 13)] = 1.0
    f[21:29] = _seq(nd.dims, 6)
    f[29] = float(nd.tsize)
    f[30] = float(nd.pnum) if nd.op == O['parameter'] else 0.0
    f[31:37] = _noagg(nd.f.get('dimensions', []), 6)
    w = None
    if 'conv' in nd.f:
        sp = nd.f['conv']
        w = dict(win=sp['win'], stride=sp['stride'], plo=sp['plo'], phi=sp['phi'],
                 bdil=sp['bdil'], rev=sp['rev'], wdil=sp.get('wdil', [1] * len(sp['win'])))
    elif 'window' in nd.f:
        w = nd.f['window']
    if w is None:
        win = []
        st = pl = ph = wd = bd = rv = []
    else:
        win, st, pl, ph = w['win'], w['stride'], w['plo'], w['phi']
        wd = w.get('wdil', [1] * len(win))
        bd, rv = w['bdil'], w['rev']
    f[37:45] = _seq(win, 6)
    f[45:53] = _seq(st, 6)
    f[53:61] = _seq(pl, 6)
    f[61:69] = _seq(ph, 6)
    f[69:77] = _seq(wd, 6)
    f[77:85] = _seq(bd, 6)
    f[85:91] = _noagg(rv, 6)
    f[91] = float(sum(1 for x in rv if x))
    f[92] = float(sum(1 for x in rv if not x))
    if 'conv' in nd.f:
        sp = nd.f['conv']
        f[93] = sp['in_b']
        f[94] = sp['in_f']
        f[95:99] = _noagg(sp['in_sp'], 4)
        f[99] = sp['k_in']
        f[100] = sp['k_out']
        f[101:105] = _noagg(sp['k_sp'], 4)
        f[105] = sp['out_b']
        f[106] = sp['out_f']
        f[107] = sp['fgc']
        f[108] = 1
    elif nd.op == O['custom_call']:
        f[107] = 1
        f[108] = 1
    sl = nd.f.get('slice')
    if sl:
        f[109:113] = _seq(sl[0], 2)
        f[113:117] = _seq(sl[1], 2)
        f[117:121] = _seq(sl[2], 2)
    else:
        f[109:121] = [0, 0, 0, 1] * 3
    f[121:125] = _seq(nd.f.get('dss', []), 2)
    pd = nd.f.get('pad')
    if pd:
        f[125:129] = _seq(pd[0], 2)
        f[129:133] = _seq(pd[1], 2)
    else:
        f[125:133] = [0, 0, 0, 1] * 2
    f[133] = 1.0 if nd.f.get('stable') else 0.0
    f[134:140] = _noagg(layout, 6)
    return np.array(f, dtype=np.float32)


# ==================================================================================
# graph samplers (own; HLO-like programs of ML models)
# ==================================================================================
def prog_size(p):
    s = len(p.entry.nodes) + sum(len(c.nodes) for c in p.reducers)
    for a, b in p.loops:
        s += len(a.nodes) + len(b.nodes)
    return s


class Fmt:
    """Positions of batch / feature / spatial dims for activations and kernels."""

    def __init__(self, kind):
        self.kind = kind
        if kind == 'nhwc':
            self.ns, self.b, self.c, self.sp = 2, 0, 3, [1, 2]
            self.ksp, self.ki, self.ko = [0, 1], 2, 3
        elif kind == 'nchw':
            self.ns, self.b, self.c, self.sp = 2, 0, 1, [2, 3]
            self.ksp, self.ki, self.ko = [2, 3], 1, 0
        else:  # ndhwc
            self.ns, self.b, self.c, self.sp = 3, 0, 4, [1, 2, 3]
            self.ksp, self.ki, self.ko = [0, 1, 2], 3, 4
        self.r = self.ns + 2

    def act(self, B, C, S):
        d = [0] * self.r
        d[self.b] = B
        d[self.c] = C
        for p, s in zip(self.sp, S):
            d[p] = s
        return d

    def ker(self, K, Ci, Co):
        d = [0] * self.r
        d[self.ki] = Ci
        d[self.ko] = Co
        for p, k in zip(self.ksp, K):
            d[p] = k
        return d

    def spatial(self, x):
        return [x.dims[p] for p in self.sp]


def fwd_conv(c, fm, x, w, k, stride, fgc=1):
    ns = fm.ns
    pl = [(k - 1) // 2] * ns
    ph = [k - 1 - (k - 1) // 2] * ns
    sp = dict(in_b=fm.b, in_f=fm.c, in_sp=fm.sp, k_in=fm.ki, k_out=fm.ko, k_sp=fm.ksp,
              out_b=fm.b, out_f=fm.c, out_sp=fm.sp, win=[k] * ns, stride=[stride] * ns,
              plo=pl, phi=ph, bdil=[1] * ns, rev=[0] * ns, fgc=fgc)
    return c.conv(x, w, sp)


def wgrad_conv(c, fm, x, g, k, stride):
    """Weight-gradient convolution: x [act], g [grad of output] -> kernel-shaped,
    output laid out as [Ci, k.., Co]-like (batch<->feature roles swapped)."""
    ns = fm.ns
    Hs = fm.spatial(x)
    Hos = fm.spatial(g)
    pl, ph = [], []
    for H, Ho in zip(Hs, Hos):
        tot = k + (Ho - 1) * stride - H
        a = max(0, tot // 2)
        pl.append(a)
        ph.append(tot - a)
    # output dims order: [Ci, spatial..., Co]
    out_sp = list(range(1, ns + 1))
    sp = dict(in_b=fm.c, in_f=fm.b, in_sp=fm.sp, k_in=fm.b, k_out=fm.c, k_sp=fm.sp,
              out_b=0, out_f=ns + 1, out_sp=out_sp, win=Hos, stride=[1] * ns,
              plo=pl, phi=ph, bdil=[1] * ns, rev=[0] * ns, fgc=1, wdil=[stride] * ns)
    return c.conv(x, g, sp)


def igrad_conv(c, fm, g, w, k, stride, target_sp):
    ns = fm.ns
    pl, ph = [], []
    for Ho, H in zip(fm.spatial(g), target_sp):
        a = k - 1 - (k - 1) // 2
        b = H + k - 2 - a - (Ho - 1) * stride
        if b < 0:
            a = max(0, a + b)
            b = 0
        pl.append(a)
        ph.append(b)
    sp = dict(in_b=fm.b, in_f=fm.c, in_sp=fm.sp, k_in=fm.ko, k_out=fm.ki, k_sp=fm.ksp,
              out_b=fm.b, out_f=fm.c, out_sp=fm.sp, win=[k] * ns, stride=[1] * ns,
              plo=pl, phi=ph, bdil=[stride] * ns, rev=[1] * ns, fgc=1)
    return c.conv(g, w, sp)


def batchnorm(c, fm, x, train, rng):
    C = x.dims[fm.c]
    red = [fm.b] + fm.sp
    if train:
        s = c.reduce(x, red)
        m = c.ew('multiply', s, c.scal_b(s.dims, s.et))
        xc = c.ew('subtract', x, c.bcast(m, x.dims, [fm.c]))
        v = c.reduce(c.ew('multiply', xc, xc), red)
        v = c.ew('multiply', v, c.scal_b(v.dims, v.et))
        inv = c.ew('rsqrt', c.ew('add', v, c.scal_b(v.dims, v.et)))
        y = c.ew('multiply', xc, c.bcast(inv, x.dims, [fm.c]))
    else:
        y = x
    g = c.param([C], x.et)
    b = c.param([C], x.et)
    y = c.ew('multiply', y, c.bcast(g, x.dims, [fm.c]))
    y = c.ew('add', y, c.bcast(b, x.dims, [fm.c]))
    return y


def relu(c, x):
    return c.ew('maximum', x, c.scal_b(x.dims, x.et))


def gen_cnn(rng, target_n, tiny):
    kind = rng.choice(['nhwc', 'nchw', 'ndhwc'], p=[0.55, 0.2, 0.25])
    fm = Fmt(kind)
    deflay = {}
    if rng.random() < 0.3 and kind != 'nchw':
        r = fm.r
        deflay[r] = [r - 1, 0] + list(range(r - 2, 0, -1))
    p = Prog(rng, deflay)
    c = p.entry
    dt = 'bf16' if rng.random() < 0.6 else 'f32'
    train = rng.random() < (0.65 if target_n >= 250 else 0.0)
    if kind == 'ndhwc':
        B = int(rng.choice([1, 2, 4]))
        H = int(rng.choice([16, 24, 32, 48, 64]))
        Cin = int(rng.choice([1, 2, 4]))
    else:
        B = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
        H = int(rng.choice([28, 32, 56, 64, 96, 112, 128, 224]))
        Cin = 3
    if tiny:
        H = min(H, 32)
        B = min(B, 8)
    S = [H] * fm.ns
    x = c.param(fm.act(B, Cin, S), 'f32')
    if dt != 'f32':
        x = c.convert(x, dt)
    width = int(rng.choice([16, 24, 32, 48, 64]))
    blocktype = rng.choice(['basic', 'bottleneck', 'dw', 'plain'], p=[0.35, 0.25, 0.15, 0.25])
    use_loop = rng.random() < 0.35
    convs = []          # records for backward
    outs = []

    def conv_layer(x, Co, k, stride, fgc=1, act=True):
        Ci = x.dims[fm.c]
        wp = c.param(fm.ker([k] * fm.ns, Ci // fgc, Co), 'f32')
        w = c.convert(wp, dt) if dt != 'f32' else wp
        y = fwd_conv(c, fm, x, w, k, stride, fgc)
        rec = dict(x=x, w=w, wp=wp, k=k, stride=stride, out=y, fgc=fgc)
        y = batchnorm(c, fm, y, train, rng)
        if act:
            y = relu(c, y)
        rec['act'] = y
        convs.append(rec)
        return y

    x = conv_layer(x, width, int(rng.choice([3, 5, 7])), 2 if H >= 56 else 1)
    reserve = 40 if not train else 60
    stage = 0
    C = width
    while prog_size(p) < target_n - reserve - (len(convs) * 14 if train else 0):
        # one stage
        nb = int(rng.integers(1, 4))
        for _ in range(nb):
            if prog_size(p) >= target_n - reserve - (len(convs) * 14 if train else 0):
                break
            if blocktype == 'basic':
                y = conv_layer(x, C, 3, 1)
                y = conv_layer(y, C, 3, 1, act=False)
                x = relu(c, c.ew('add', y, x)) if y.dims == x.dims else relu(c, y)
            elif blocktype == 'bottleneck':
                y = conv_layer(x, max(8, C // 4), 1, 1)
                y = conv_layer(y, max(8, C // 4), 3, 1)
                y = conv_layer(y, C, 1, 1, act=False)
                x = relu(c, c.ew('add', y, x)) if y.dims == x.dims else relu(c, y)
            elif blocktype == 'dw':
                y = conv_layer(x, C, 3, 1, fgc=C)
                y = conv_layer(y, C, 1, 1, act=False)
                x = c.ew('add', y, x) if y.dims == x.dims else y
            else:
                x = conv_layer(x, C, 3, 1)
        stage += 1
        sp = fm.spatial(x)
        if min(sp) >= 4:
            if rng.random() < 0.5:
                win = [1] * fm.r
                st = [1] * fm.r
                for q in fm.sp:
                    win[q] = 2
                    st[q] = 2
                prev = x
                x = c.reduce_window(x, win, st, 'max')
                convs.append(dict(pool=True, x=prev, out=x, win=win, st=st))
                C2 = min(C * 2, 1024)
                x = conv_layer(x, C2, 1, 1)
            else:
                C2 = min(C * 2, 1024)
                x = conv_layer(x, C2, 3, 2)
            C = C2
        if stage > 40:
            break

    # optional loop: iterative refinement with stacked weights
    if use_loop:
        L = int(rng.choice([2, 3, 4, 6, 8, 12, 16]))
        Cx = x.dims[fm.c]
        kshape = fm.ker([3] * fm.ns, Cx, Cx)
        stacked = c.param([L] + kshape, dt)
        ctr0 = c.const('s32')

        def body(b, els):
            ctr, xx, st = els
            zero = b.const('s32')
            ws = b.dyn_slice(st, [ctr, zero], [1] + kshape)
            w = b.reshape(ws, kshape)
            y = fwd_conv(b, fm, xx, w, 3, 1)
            g = b.param([Cx], xx.et)
            y = b.ew('multiply', y, b.bcast(g, y.dims, [fm.c]))
            y = relu(b, y)
            y = b.ew('add', y, xx)
            if rng.random() < 0.5:
                y2 = fwd_conv(b, fm, y, w, 3, 1)
                y = b.ew('add', relu(b, y2), y)
            one = b.const('s32')
            return [b.add(O['add'], (), 's32', [ctr, one]), y, st]

        w_ = p.while_loop(c, [ctr0, x, stacked], body, L)
        x = c.gte(w_, x.dims, x.et)

    # head
    sp = fm.spatial(x)
    Cx = x.dims[fm.c]
    if kind == 'nchw':
        flat = c.reshape(x, [x.dims[0], Cx, int(np.prod(sp))])
        pooled = c.reduce(flat, [2])
    else:
        flat = c.reshape(x, [x.dims[0], int(np.prod(sp)), Cx])
        pooled = c.reduce(flat, [1])
    ncls = int(rng.choice([10, 100, 1000]))
    wfc = c.param([Cx, ncls], dt)
    logits = c.dot(pooled, wfc)
    logits = c.ew('add', logits, c.bcast(c.param([ncls], dt), logits.dims, [1]))
    mx = c.reduce(logits, [1], 'max')
    e = c.ew('exponential', c.ew('subtract', logits, c.bcast(mx, logits.dims, [0])))
    z = c.reduce(e, [1])
    prob = c.ew('divide', e, c.bcast(z, e.dims, [0]))
    lab = c.param(logits.dims, dt)
    loss = c.reduce(c.ew('multiply', c.ew('log', prob), lab), [0, 1])
    outs.append(loss)
    if train:
        gl = c.ew('subtract', prob, lab)
        pt = c.transpose(pooled, [1, 0])
        dwfc = c.dot(pt, gl)
        dwfc = c.all_reduce(dwfc)
        outs.append(c.ew('subtract', wfc, c.ew('multiply', dwfc, c.scal_b(dwfc.dims, dwfc.et))))
        # backward through the conv stack (approximate but shape-true)
        g = c.ew('multiply', x, c.scal_b(x.dims, x.et))
        for rec in reversed(convs):
            if prog_size(p) >= target_n - 8:
                break
            if rec.get('pool'):
                if g.dims != rec['out'].dims:
                    g = c.scal_b(rec['out'].dims, rec['out'].et)
                g = c.select_and_scatter(rec['x'], g, rec['win'], rec['st'])
                continue
            act = rec['act']
            if g.dims != act.dims:
                g = c.ew('multiply', act, c.scal_b(act.dims, act.et))
            mask = c.ew('compare', act, c.scal_b(act.dims, act.et))
            g = c.ew('select', mask, g, c.scal_b(act.dims, act.et))
            if rec['fgc'] == 1:
                dw = wgrad_conv(c, fm, rec['x'], g, rec['k'], rec['stride'])
                perm = list(range(1, fm.ns + 1))
                # [Ci, k.., Co] -> kernel layout of this format
                kd = rec['wp'].dims
                src_axes = {fm.ki: 0, fm.ko: fm.ns + 1}
                for j, q in enumerate(fm.ksp):
                    src_axes[q] = perm[j]
                dwt = c.transpose(dw, [src_axes[i] for i in range(fm.r)])
                assert dwt.dims == kd, (dwt.dims, kd)
                if dt != 'f32':
                    dwt = c.convert(dwt, 'f32')
                dwt = c.all_reduce(dwt)
                outs.append(c.ew('subtract', rec['wp'],
                                 c.ew('multiply', dwt, c.scal_b(dwt.dims, dwt.et))))
                gi = igrad_conv(c, fm, g, rec['w'], rec['k'], rec['stride'],
                                fm.spatial(rec['x']))
                if gi.dims == rec['x'].dims:
                    g = gi
                else:
                    g = c.ew('multiply', rec['x'], c.scal_b(rec['x'].dims, rec['x'].et))
            else:
                g = c.ew('multiply', g, c.bcast(c.param([act.dims[fm.c]], act.et), act.dims, [fm.c]))
                if g.dims != rec['x'].dims:
                    g = c.ew('multiply', rec['x'], c.scal_b(rec['x'].dims, rec['x'].et))
        outs.append(c.reduce(g, list(range(len(g.dims)))))
    c.set_root(c.tuple(outs))
    name = model_name_cnn(rng, kind, blocktype, B, train, dt, len(convs))
    return p, name


def gen_rnn(rng, target_n, tiny):
    p = Prog(rng)
    c = p.entry
    dt = 'bf16' if rng.random() < 0.5 else 'f32'
    B = int(rng.choice([8, 16, 32, 64, 128]))
    F = int(rng.choice([64, 80, 128, 240, 256, 512]))
    Hd = int(rng.choice([128, 256, 384, 512, 1024]))
    T = int(rng.choice([8, 16, 20, 32, 50, 64]))
    if tiny:
        B, F, Hd, T = min(B, 16), min(F, 128), min(Hd, 256), min(T, 16)
    xs = c.param([T, B, F], dt)
    layers = 0
    inp = xs
    while prog_size(p) < target_n - 100 and layers < 12 or layers == 0:
        Fi = inp.dims[2]
        wx = c.param([Fi, 4 * Hd], dt)
        wh = c.param([Hd, 4 * Hd], dt)
        bb = c.param([4 * Hd], dt)
        outb = c.bcast(c.const(dt), [T, B, Hd], [])
        h0 = c.bcast(c.const(dt), [B, Hd], [])
        cc0 = c.bcast(c.const(dt), [B, Hd], [])
        ctr0 = c.const('s32')

        def body(b, els):
            ctr, h, cell, xin, ob, wxx, whh, bias = els
            zero = b.const('s32')
            xt = b.dyn_slice(xin, [ctr, zero], [1, B, Fi])
            xt = b.reshape(xt, [B, Fi])
            g = b.ew('add', b.dot(xt, wxx), b.dot(h, whh))
            g = b.ew('add', g, b.bcast(bias, g.dims, [1]))
            g3 = b.reshape(g, [B, 4, Hd])
            gt = b.transpose(g3, [1, 0, 2])
            gates = []
            for q in range(4):
                s = b.slice(gt, [q, 0, 0], [q + 1, B, Hd])
                s = b.reshape(s, [B, Hd])
                gates.append(b.ew('logistic' if q != 2 else 'tanh', s))
            cell2 = b.ew('add', b.ew('multiply', gates[1], cell), b.ew('multiply', gates[0], gates[2]))
            h2 = b.ew('multiply', gates[3], b.ew('tanh', cell2))
            h3 = b.reshape(h2, [1, B, Hd])
            ob2 = b.dus(ob, h3, [ctr, zero])
            one = b.const('s32')
            return [b.add(O['add'], (), 's32', [ctr, one]), h2, cell2, xin, ob2, wxx, whh, bias]

        w_ = p.while_loop(c, [ctr0, h0, cc0, inp, outb, wx, wh, bb], body, T)
        inp = c.gte(w_, [T, B, Hd], dt)
        layers += 1
    flat = c.reshape(inp, [T * B, Hd])
    V = int(rng.choice([32, 128, 1000, 4096]))
    wo = c.param([Hd, V], dt)
    lg = c.dot(flat, wo)
    mx = c.reduce(lg, [1], 'max')
    e = c.ew('exponential', c.ew('subtract', lg, c.bcast(mx, lg.dims, [0])))
    z = c.reduce(e, [1])
    pr = c.ew('divide', e, c.bcast(z, e.dims, [0]))
    lab = c.param(lg.dims, dt)
    gl = c.ew('subtract', pr, lab)
    ft = c.transpose(flat, [1, 0])
    dwo = c.all_reduce(c.dot(ft, gl))
    outs = [c.reduce(c.ew('multiply', c.ew('log', pr), lab), [0, 1]),
            c.ew('subtract', wo, c.ew('multiply', dwo, c.scal_b(dwo.dims, dwo.et)))]
    c.set_root(c.tuple(outs))
    nm = str(rng.choice(['lstm_seq2seq', 'rnn_t', 'deepspeech', 'lstm_lm', 'ncf_rnn']))
    name = f'{nm}_batch_{B}_T{T}_L{layers}'
    return p, name


def gen_transformer(rng, target_n, tiny):
    p = Prog(rng)
    c = p.entry
    dt = 'bf16' if rng.random() < 0.6 else 'f32'
    B = int(rng.choice([1, 2, 4, 8, 16, 32]))
    Sq = int(rng.choice([64, 128, 256, 384, 512]))
    Hh = int(rng.choice([128, 256, 512, 768, 1024]))
    nh = int(rng.choice([2, 4, 8, 12, 16]))
    while Hh % nh:
        nh //= 2
    if tiny:
        B, Sq, Hh = min(B, 4), min(Sq, 128), min(Hh, 256)
        while Hh % nh:
            nh //= 2
    dh = Hh // nh
    Ff = 4 * Hh
    V = int(rng.choice([8192, 30522, 32000]))
    train = rng.random() < 0.5
    scan = rng.random() < 0.55
    ids = c.param([B, Sq], 's32')
    emb = c.param([V, Hh], dt)
    x = c.add(O['gather'], [B, Sq, Hh], dt, [emb, ids])
    pos = c.param([Sq, Hh], dt)
    x = c.ew('add', x, c.bcast(pos, x.dims, [1, 2]))
    M = B * Sq

    def layernorm(b, h):
        m = b.reduce(h, [1])
        m = b.ew('multiply', m, b.scal_b(m.dims, m.et))
        hc = b.ew('subtract', h, b.bcast(m, h.dims, [0]))
        v = b.reduce(b.ew('multiply', hc, hc), [1])
        inv = b.ew('rsqrt', b.ew('add', v, b.scal_b(v.dims, v.et)))
        y = b.ew('multiply', hc, b.bcast(inv, h.dims, [0]))
        y = b.ew('multiply', y, b.bcast(b.param([Hh], dt), h.dims, [1]))
        return b.ew('add', y, b.bcast(b.param([Hh], dt), h.dims, [1]))

    grads = []

    lite = target_n < 260

    def layer(b, x3, W):
        wq, wk, wv, wo, w1, w2 = W
        x2 = b.reshape(x3, [M, Hh])
        heads = []
        for wgt in (wq, wk, wv):
            hproj = b.dot(x2, wgt)
            if not lite:
                hproj = b.ew('add', hproj, b.bcast(b.param([Hh], dt), hproj.dims, [1]))
            heads.append(b.reshape(hproj, [B, Sq, nh, dh]))
        q = b.transpose(heads[0], [0, 2, 1, 3])          # B nh S dh
        kt = b.transpose(heads[1], [0, 2, 3, 1])         # B nh dh S
        v = b.transpose(heads[2], [0, 2, 1, 3])          # B nh S dh
        s = b.dot(q, kt)                                 # B nh S S
        s = b.ew('multiply', s, b.scal_b(s.dims, s.et))
        mask = b.param([B, Sq], dt)
        s = b.ew('add', s, b.bcast(mask, s.dims, [0, 3]))
        mx = b.reduce(s, [3], 'max')
        e = b.ew('exponential', b.ew('subtract', s, b.bcast(mx, s.dims, [0, 1, 2])))
        z = b.reduce(e, [3])
        pr = b.ew('divide', e, b.bcast(z, e.dims, [0, 1, 2]))
        o = b.dot(pr, v)                                 # B nh S dh
        ot = b.transpose(o, [0, 2, 1, 3])
        o2 = b.reshape(ot, [M, Hh])
        a = b.dot(o2, wo)
        if lite:
            h = b.ew('add', a, x2)
            f1 = b.dot(h, w1)
            g = b.ew('tanh', f1)
            f2 = b.dot(g, w2)
            out = b.ew('add', f2, h)
        else:
            a = b.ew('add', a, b.bcast(b.param([Hh], dt), a.dims, [1]))
            h = layernorm(b, b.ew('add', a, x2))
            f1 = b.dot(h, w1)
            f1 = b.ew('add', f1, b.bcast(b.param([Ff], dt), f1.dims, [1]))
            g = b.ew('multiply', f1, b.ew('tanh', b.ew('multiply', f1, b.scal_b(f1.dims, dt))))
            g = b.ew('add', g, f1)
            f2 = b.dot(g, w2)
            f2 = b.ew('add', f2, b.bcast(b.param([Hh], dt), f2.dims, [1]))
            out = layernorm(b, b.ew('add', f2, h))
        if train and b is c:
            # backward of the two FFN projections and the output projection
            gy = b.ew('multiply', out, b.scal_b(out.dims, dt))
            w2t = b.transpose(w2, [1, 0])
            gg = b.dot(gy, w2t)
            gt = b.transpose(g, [1, 0])
            grads.append((w2, b.dot(gt, gy)))
            gg = b.ew('multiply', gg, b.ew('subtract', b.scal_b(gg.dims, dt), b.ew('multiply', g, g)))
            ht = b.transpose(h, [1, 0])
            grads.append((w1, b.dot(ht, gg)))
            w1t = b.transpose(w1, [1, 0])
            gh = b.dot(gg, w1t)
            o2t = b.transpose(o2, [1, 0])
            grads.append((wo, b.dot(o2t, gh)))
        return b.reshape(out, [B, Sq, Hh])

    nl = 0
    per_layer = (45 if lite else 110) + (45 if train and not scan else 0)
    if scan:
        L = int(rng.choice([2, 4, 6, 8, 12, 24]))
        shapes = [[Hh, Hh]] * 4 + [[Hh, Ff], [Ff, Hh]]
        stk = [c.param([L] + s, dt) for s in shapes]
        ctr0 = c.const('s32')

        def body(b, els):
            ctr, xx = els[0], els[1]
            zero = b.const('s32')
            W = []
            for st, s in zip(els[2:], shapes):
                ws = b.dyn_slice(st, [ctr, zero], [1] + s)
                W.append(b.reshape(ws, s))
            y = layer(b, xx, W)
            one = b.const('s32')
            return [b.add(O['add'], (), 's32', [ctr, one]), y] + list(els[2:])

        w_ = p.while_loop(c, [ctr0, x] + stk, body, L)
        x = c.gte(w_, x.dims, x.et)
        nl = L
    while prog_size(p) < target_n - per_layer - 30 and nl < 48:
        W = [c.param([Hh, Hh], dt) for _ in range(4)] + [c.param([Hh, Ff], dt), c.param([Ff, Hh], dt)]
        x = layer(c, x, W)
        nl += 1
    if nl == 0:
        W = [c.param([Hh, Hh], dt) for _ in range(4)] + [c.param([Hh, Ff], dt), c.param([Ff, Hh], dt)]
        x = layer(c, x, W)
        nl = 1
    x2 = c.reshape(x, [M, Hh])
    pooled = c.slice(x, [0, 0, 0], [B, 1, Hh])
    pooled = c.reshape(pooled, [B, Hh])
    wp = c.param([Hh, Hh], dt)
    pl = c.ew('tanh', c.dot(pooled, wp))
    wc = c.param([Hh, 2], dt)
    lg = c.dot(pl, wc)
    outs = [c.reduce(lg, [0, 1])]
    # MLM-ish head
    wm = c.param([Hh, Hh], dt)
    hm = c.ew('tanh', c.dot(x2, wm))
    outs.append(c.reduce(hm, [0, 1]))
    for w, gw in grads:
        gw = c.all_reduce(gw)
        outs.append(c.ew('subtract', w, c.ew('multiply', gw, c.scal_b(gw.dims, gw.et))))
    c.set_root(c.tuple(outs))
    fam = str(rng.choice(['bert_en_uncased', 'albert_en_base', 'electra_small',
                          'talking-heads_base', 'bert_multi_cased', 'small_bert_bert_en_uncased',
                          'experts_wiki_books', 'mobilebert_en_uncased']))
    name = (f'{fam}_L-{nl}_H-{Hh}_A-{nh}_batch_size_{B}_' + ('train' if train else 'test'))
    return p, name


def model_name_cnn(rng, kind, blocktype, B, train, dt, nconv):
    if kind == 'ndhwc':
        base = str(rng.choice(['unet_3d', 'vnet_3d', 'mri_seg_3d', 'video_c3d']))
    else:
        base = {'basic': ['resnet_v1_18', 'resnet_v2_34', 'inception_like'],
                'bottleneck': ['resnet_v1_50', 'resnet50_v2', 'retinanet_backbone'],
                'dw': ['mobilenet_v2', 'efficientnet_b0', 'mnasnet_a1'],
                'plain': ['vgg_like', 'alexnet', 'shapemask', 'mask_rcnn_head']}[blocktype]
        base = str(rng.choice(base))
    return f"{base}_{'train' if train else 'infer'}_batch_{B}_{dt}_{nconv}c"


# ==================================================================================
# LAW: evaluation from the stored arrays only
# ==================================================================================
def encode_perm(perm):
    code = 0
    for i, d in enumerate(perm):
        code |= int(d) << (3 * i)
    return code


def rowmajor_code(r):
    return encode_perm(list(range(r - 1, -1, -1)))


def ceil_to(x, m):
    return np.ceil(np.asarray(x, dtype=np.float64) / m) * m


class Parsed:
    """Static facts about a graph, read from node_feat / node_opcode / edge_index."""

    def __init__(self, arr):
        nf = np.asarray(arr['node_feat'], dtype=np.float64)
        self.op = np.asarray(arr['node_opcode']).astype(np.int64)
        ei = np.asarray(arr['edge_index']).astype(np.int64).reshape(-1, 2)
        n = self.n = len(self.op)
        self.nf = nf
        self.dims = np.rint(nf[:, 21:27]).astype(np.int64)
        etc = np.argmax(nf[:, 2:21], axis=1) + 2
        self.eb = COL_BYTES[etc]
        self.tup = (etc == 18) | (nf[:, 29] > 0)
        rank = (self.dims > 0).sum(1)
        rank[self.tup] = 0
        self.rank = rank
        self.vol = np.where(rank > 0, np.maximum(nf[:, 28], 1.0), 1.0)
        self.sub = np.where(self.eb >= 4, 8, np.where(self.eb == 2, 16, 32)).astype(np.float64)
        self.is_root = nf[:, 0] > 0.5
        lay = np.rint(nf[:, 134:140]).astype(np.int64)
        self.defperm = []
        self.defcode = np.zeros(n, dtype=np.int64)
        for i in range(n):
            r = int(rank[i])
            p = [int(x) for x in lay[i, :r]]
            if sorted(p) != list(range(r)):
                p = list(range(r - 1, -1, -1))
            self.defperm.append(p)
            self.defcode[i] = encode_perm(p)
        splits = np.asarray(arr.get('node_splits', np.array([[0, n]]))).reshape(-1)
        splits = np.clip(splits.astype(np.int64), 0, n)
        self.seg = np.searchsorted(splits, np.arange(n), side='right') - 1
        self.seg = np.clip(self.seg, 0, None)
        same = self.seg[ei[:, 0]] == self.seg[ei[:, 1]] if len(ei) else np.zeros(0, bool)
        self.prods = [[] for _ in range(n)]
        self.cons = [[] for _ in range(n)]
        for u, v in ei[same]:
            self.prods[u].append(int(v))
            self.cons[v].append(int(u))
        for lst in self.prods:
            lst.sort()
        self.calls = [[] for _ in range(n)]
        for u, v in ei[~same]:
            self.calls[u].append(int(v))
        self.ei = ei
        self._cache = {}

    def arr_prods(self, u):
        return [v for v in self.prods[u] if self.rank[v] > 0]

    def largest_prod(self, u):
        ps = self.arr_prods(u)
        if not ps:
            return None
        return max(ps, key=lambda v: (self.vol[v], -v))

    def conv_io(self, u):
        ps = self.arr_prods(u)
        if not ps:
            return None, None
        if len(ps) == 1:
            return ps[0], ps[0]
        f = self.nf[u]
        ib, ifd, ki, ko, ob, of = (int(round(f[j])) for j in (93, 94, 99, 100, 105, 106))
        best = None
        for a in ps:
            for b in ps:
                if a == b:
                    continue
                da, db, do = self.dims[a], self.dims[b], self.dims[u]
                sc = 0
                sc += int(ib < 6 and ob < 6 and da[ib] == do[ob])
                sc += int(ko < 6 and of < 6 and db[ko] == do[of])
                sc += int(ifd < 6 and ki < 6 and da[ifd] == db[ki])
                key = (sc, -a)
                if best is None or key > best[0]:
                    best = (key, a, b)
        return best[1], best[2]

    def dot_io(self, u):
        ps = self.arr_prods(u)
        if not ps:
            return None, None
        if len(ps) == 1:
            return ps[0], ps[0]
        do = list(self.dims[u, :self.rank[u]])
        best = None
        for a in ps:
            for b in ps:
                if a == b:
                    continue
                da = list(self.dims[a, :self.rank[a]])
                db = list(self.dims[b, :self.rank[b]])
                sc = 2 * int(da[:-1] == do[:-1]) + int(db[-1:] == do[-1:])
                sc += int(len(db) >= 2 and da[-1] == db[-2])
                key = (sc, -a)
                if best is None or key > best[0]:
                    best = (key, a, b)
        return best[1], best[2]

    def mxu_io(self, u):
        return self.conv_io(u) if self.op[u] == 26 else self.dot_io(u)

    def dominant(self, u):
        r = self.rank[u]
        best = None
        for v in self.prods[u]:
            if self.rank[v] != r or r == 0 or self.op[v] in FREE_OPS:
                continue
            if not np.array_equal(self.dims[v, :r], self.dims[u, :r]):
                continue
            if best is None or self.vol[v] > self.vol[best]:
                best = v
        return best

    # -- layouts: canonical form (size-1 dims elided) and padded footprint -----
    def lay_info(self, i, code):
        """(canonical code, effective minor dim, effective second-minor dim); dims of
        extent 1 take no tile position, so they are skipped (-1: none)."""
        key = None
        if np.ndim(code) == 0:
            key = (i, int(code))
            hit = self._cache.get(key)
            if hit is not None:
                return hit
        r = int(self.rank[i])
        code = np.asarray(code, dtype=np.int64)
        d = self.dims[i, :max(r, 1)]
        cc = np.zeros_like(code)
        k = np.zeros_like(code)
        mi = np.full_like(code, -1)
        si = np.full_like(code, -1)
        for pos in range(r):
            dg = (code >> (3 * pos)) & 7
            nd = d[dg] > 1
            cc = np.where(nd, cc | ((dg + 1) << (3 * k)), cc)
            mi = np.where(nd & (k == 0), dg, mi)
            si = np.where(nd & (k == 1), dg, si)
            k = k + nd
        out = (cc, mi, si)
        if key is not None:
            self._cache[key] = out
        return out

    def padded(self, i, code):
        r = int(self.rank[i])
        if r == 0:
            return np.float64(1.0)
        _, mi, si = self.lay_info(i, code)
        d = self.dims[i, :r].astype(np.float64)
        m = np.where(mi >= 0, d[np.maximum(mi, 0)], 1.0)
        s = np.where(si >= 0, d[np.maximum(si, 0)], 1.0)
        pm = np.where(m >= 64, ceil_to(m, 128.0), np.minimum(128.0, 4.0 * next_pow2(m)))
        S = self.sub[i]
        ps = np.where(s >= S, ceil_to(s, S), next_pow2(s))
        return self.vol[i] / (m * s) * pm * ps

    def pbytes(self, i, code):
        return np.maximum(self.padded(i, code) * self.eb[i], 512.0)

    def minor(self, i, code):
        return self.lay_info(i, code)[1]

    def second(self, i, code):
        return self.lay_info(i, code)[2]

    def canon(self, i, code):
        return self.lay_info(i, code)[0]


def next_pow2(x):
    x = np.maximum(np.asarray(x, dtype=np.float64), 1.0)
    return 2.0 ** np.ceil(np.log2(x) - 1e-9)


def resolve_block(block, r, defperm):
    """(c,6) minor-to-major block -> (codes, constrained) for a tensor of rank r."""
    blk = np.rint(block).astype(np.int64)
    uniq, inv = np.unique(blk, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    dcode = encode_perm(defperm)
    codes, con = [], []
    for row in uniq:
        fixed = [int(x) for x in row if x >= 0]
        if (not fixed or r == 0 or any(x >= r for x in fixed)
                or len(set(fixed)) != len(fixed)):
            codes.append(dcode)
            con.append(False)
        else:
            perm = fixed + [d for d in defperm if d not in fixed]
            codes.append(encode_perm(perm))
            con.append(True)
    codes = np.array(codes, dtype=np.int64)[inv]
    con = np.array(con, dtype=bool)[inv]
    if np.all(codes == codes[0]) and np.all(con == con[0]):
        return np.int64(codes[0]), bool(con[0])
    return codes, con


def kind_of(o):
    if o in MXU_OPS:
        return 'mxu'
    if o in FOLLOW_OPS:
        return 'ew'
    if o == 75:
        return 'reshape'
    if o == 98:
        return 'transpose'
    if o in (100, 102):
        return 'loopio'
    if o in (63, 45):
        return 'param'
    return 'other'


def relayout_cost(G, v_src, A, v_dst, R, minor_change, second_change, raw_bytes):
    """Cost of physically moving a tensor from layout A (as v_src) to R (as v_dst)."""
    bs = G.pbytes(v_src, A)
    bd = G.pbytes(v_dst, R)
    rate = np.where(minor_change, 1.9, np.where(second_change, 1.25, 0.95))
    ovh = np.where(minor_change, 1800.0, np.where(second_change, 1100.0, 700.0))
    traffic = rate * (bs + bd) / BW
    if raw_bytes < TINY_B:
        return 0.5 * ovh + 0.3 * traffic
    if raw_bytes > HUGE_B:
        return ovh + 1.4 * traffic
    return ovh + traffic


def copy_cost(G, v, A, R, kp, kc):
    mch = G.minor(v, A) != G.minor(v, R)
    sch = G.second(v, A) != G.second(v, R)
    raw = G.vol[v] * G.eb[v]
    cost = relayout_cost(G, v, A, v, R, mch, sch, raw)
    f = 1.0
    if kp == 'mxu' and kc == 'ew':
        f = np.where(mch, 0.8, 0.55)
    elif kp == 'ew' and kc == 'mxu':
        f = 0.7
    elif kp == 'ew' and kc == 'ew':
        f = 0.85
    if kp == 'reshape' or kc == 'reshape':
        f = f * 1.3
    if kp == 'transpose':
        f = f * 0.9
    if kc == 'loopio':
        f = f * 1.15
    return cost * f


def segment_info(G):
    """multiplier per segment: loop bodies x trip count, reducer segments 0."""
    nseg = int(G.seg.max()) + 1
    mult = np.zeros(nseg)
    last = G.seg[G.n - 1]
    mult[last] = 1.0
    body_of = {}
    for u in np.nonzero(G.op == 102)[0]:
        for r in G.calls[u]:
            s = G.seg[r]
            if G.op[r] == 100:
                body_of[s] = ('body', u)
            else:
                body_of[s] = ('cond', u)
    trip = {}
    for s, (k, w) in body_of.items():
        if k != 'body':
            continue
        T = 1.0
        for u in np.nonzero((G.seg == s) & (G.op == 35))[0]:
            v = G.largest_prod(u)
            if v is None or G.rank[u] == 0:
                continue
            T = max(T, G.dims[v, 0] / max(1, G.dims[u, 0]))
        trip[w] = float(np.clip(T, 1, 64))
    for s, (k, w) in body_of.items():
        mult[s] = trip.get(w, 1.0)
    # segments neither loop parts nor the entry: reducers etc.
    return mult


def layout_law(arr):
    G = Parsed(arr)
    ids = np.asarray(arr['node_config_ids']).astype(np.int64)
    ncf = np.asarray(arr['node_config_feat'])
    c = ncf.shape[0]
    n = G.n
    mult = segment_info(G)
    nseg = len(mult)

    cfg = {}
    for j, k in enumerate(ids):
        k = int(k)
        o = G.op[k]
        if o in MXU_OPS:
            ip, kp = G.mxu_io(k)
        else:
            ip, kp = G.largest_prod(k), None
        oc, _ = resolve_block(ncf[:, j, 0:6], G.rank[k], G.defperm[k])
        ic, icon = (None, False)
        if ip is not None:
            ic, icon = resolve_block(ncf[:, j, 6:12], G.rank[ip], G.defperm[ip])
        kc, kcon = (None, False)
        if o == 26 and kp is not None:
            kc, kcon = resolve_block(ncf[:, j, 12:18], G.rank[kp], G.defperm[kp])
        cfg[k] = dict(out=oc, inp=ip, ic=ic, icon=icon, ker=kp, kc=kc, kcon=kcon)

    L = [None] * n
    mxu = [0.0] * nseg
    other = [0.0] * nseg
    copies = [0.0] * nseg
    covl = [0.0] * nseg
    live = 0.0
    live_def = 0.0
    const = 0.0
    for u in range(n):
        s = G.seg[u]
        o = int(G.op[u])
        dc = G.defcode[u]
        if mult[s] == 0.0:
            L[u] = dc
            continue
        # ---- output layout
        if u in cfg:
            L[u] = cfg[u]['out']
        elif o in FOLLOW_OPS:
            d = G.dominant(u)
            L[u] = L[d] if d is not None else dc
        else:
            L[u] = dc
        ku = kind_of(o)
        # ---- operand boundaries
        eff = {}
        info = cfg.get(u)
        for v in G.prods[u]:
            if G.rank[v] == 0 or G.op[v] in FREE_OPS:
                continue
            A = L[v]
            R = None
            if info is not None:
                if v == info['inp'] and info['ic'] is not None:
                    R = np.where(info['icon'], info['ic'], A) if np.ndim(info['icon']) else (
                        info['ic'] if info['icon'] else None)
                if o == 26 and v == info['ker'] and info['kc'] is not None and v != info['inp']:
                    R = np.where(info['kcon'], info['kc'], A) if np.ndim(info['kcon']) else (
                        info['kc'] if info['kcon'] else None)
            elif o in MXU_OPS or o == 70 or o in (11, 45):
                R = None
            elif o in FOLLOW_OPS:
                if G.rank[v] == G.rank[u] and np.array_equal(G.dims[v, :G.rank[u]], G.dims[u, :G.rank[u]]):
                    R = L[u]
            else:
                R = G.defcode[v]
            if R is None:
                eff[v] = A
                continue
            mism = G.canon(v, A) != G.canon(v, R)
            if not np.any(mism):
                eff[v] = A
                continue
            kv = kind_of(int(G.op[v]))
            cc = np.where(mism, copy_cost(G, v, A, R, kv, ku), 0.0)
            copies[s] = copies[s] + cc
            if kv == 'mxu' or ku == 'mxu':
                covl[s] = covl[s] + cc
            live = live + np.where(mism, G.pbytes(v, R), 0.0)
            eff[v] = R
        # ---- node cost
        Lu = L[u]
        if o in MXU_OPS:
            ip, kp = (info['inp'], info['ker']) if info else G.mxu_io(u)
            if ip is not None:
                t = mxu_cost(G, u, ip, kp, Lu, eff.get(ip, L[ip]), eff.get(kp, L[kp]) if kp is not None else None)
                mxu[s] = mxu[s] + t
        elif o == 75 or o == 98:
            ip = G.largest_prod(u)
            if ip is not None:
                t = reshape_transpose_cost(G, u, ip, eff.get(ip, L[ip]), Lu)
                other[s] = other[s] + t
        elif o == 70:
            v = G.largest_prod(u)
            if v is not None:
                A = eff.get(v, L[v])
                nr = int(G.rank[v] - G.rank[u])
                rd = [int(round(x)) for x in G.nf[u, 31:31 + max(nr, 0)]]
                m = G.minor(v, A)
                s2 = G.second(v, A)
                fac = 1.0 + 1.2 * np.isin(m, rd) + 0.35 * np.isin(s2, rd)
                t = G.pbytes(v, A) / BW * fac + G.pbytes(u, dc) / BW + 500.0
                other[s] = other[s] + t
        elif o == 5:
            other[s] = other[s] + G.pbytes(u, Lu) / ICI + 4000.0
        elif o in (72, 84):
            v = G.largest_prod(u)
            A = eff.get(v, L[v]) if v is not None else Lu
            win = np.rint(G.nf[u, 37:43]).astype(np.int64)
            mu = G.minor(u, Lu)
            wm = (mu >= 0) & (win[np.maximum(mu, 0)] > 1)
            t = (G.pbytes(v if v is not None else u, A) + G.pbytes(u, Lu)) / BW * (1 + 0.6 * wm) + 600.0
            other[s] = other[s] + t
        elif o in FOLLOW_OPS:
            other[s] = other[s] + 0.4 * G.pbytes(u, Lu) / BW * op_weight(o)
        elif o in FREE_OPS:
            const += mult[s] * 0.1 * G.pbytes(u, dc) / BW
        elif o in ZERO_OPS:
            if o == 102:
                const += 2000.0
        else:
            const += mult[s] * (0.7 * G.pbytes(u, dc) / BW + OVH_RIGID)
        if G.rank[u] > 0:
            live = live + G.pbytes(u, Lu)
            live_def += float(G.pbytes(u, dc))
    total = const + 20000.0 + 30.0 * n
    for s in range(nseg):
        if mult[s] == 0.0:
            continue
        hidden = np.minimum(0.45 * np.asarray(covl[s]), 0.12 * np.asarray(mxu[s]))
        seg_t = np.asarray(mxu[s]) + np.asarray(other[s]) + np.asarray(copies[s]) - hidden
        total = total + mult[s] * seg_t
    spill = 2.5 * np.maximum(0.0, np.asarray(live) - 1.08 * live_def) / BW
    total = total + spill
    return np.broadcast_to(np.asarray(total, dtype=np.float64), (c,)).copy()


def mxu_cost(G, u, ip, kp, Lo, Li, Lk):
    o = G.op[u]
    f = G.nf[u]
    if kp is None:
        kp = ip
        Lk = Li
    if o == 26:
        r = int(G.rank[kp])
        ksp = [int(round(x)) for x in f[101:101 + max(r - 2, 0)]]
        kd = G.dims[kp]
        ki, ko = int(round(f[99])), int(round(f[100]))
        spp = float(np.prod([kd[q] for q in ksp if q < 6])) if ksp else 1.0
        cin = float(kd[ki]) if ki < 6 else 1.0
        F = 2.0 * G.vol[u] * spp * cin
        feat_out = int(round(f[106]))
        feat_in = int(round(f[94]))
        kset = {ki, ko}
    else:
        K = float(G.dims[ip, max(G.rank[ip] - 1, 0)])
        F = 2.0 * G.vol[u] * K
        feat_out = int(G.rank[u] - 1)
        feat_in = int(G.rank[ip] - 1)
        rk = int(G.rank[kp])
        kset = {rk - 1, rk - 2}
    peak = PEAK16 if G.eb[ip] <= 2 else PEAK16 / 3.0
    Uo = G.vol[u] / G.padded(u, Lo)
    Ui = G.vol[ip] / G.padded(ip, Li)
    Uk = G.vol[kp] / G.padded(kp, Lk)
    Lo_, Li_, Lk_ = np.asarray(Lo), np.asarray(Li), np.asarray(Lk)
    p_out = np.where(G.minor(u, Lo_) == feat_out, 1.0, 0.72)
    p_in = np.where(G.minor(ip, Li_) == feat_in, 1.0, 0.8)
    km, ks = G.minor(kp, Lk_), G.second(kp, Lk_)
    if o == 26:
        okk = np.isin(km, list(kset)) & (np.isin(ks, list(kset)) | (ks < 0))
    else:
        okk = np.isin(km, list(kset))
    p_k = np.where(okk, 1.0, 0.85)
    eff = Uo ** 0.8 * Ui ** 0.5 * Uk ** 0.4 * p_out * p_in * p_k
    t_c = F / peak / eff
    Uo_d = G.vol[u] / G.padded(u, G.defcode[u])
    Ui_d = G.vol[ip] / G.padded(ip, G.defcode[ip])
    Uk_d = G.vol[kp] / G.padded(kp, G.defcode[kp])
    eff_fb = Uo_d ** 0.8 * Ui_d ** 0.5 * Uk_d ** 0.4
    t_fb = F / peak / eff_fb + 2.0 * (G.pbytes(ip, Li) + G.pbytes(u, Lo)) / BW + 1500.0
    t_comp = np.minimum(t_c, t_fb)
    t_mem = (G.pbytes(ip, Li) + G.pbytes(kp, Lk) + G.pbytes(u, Lo)) / BW
    return np.maximum(t_comp, t_mem) + 0.15 * np.minimum(t_comp, t_mem) + OVH_MXU


def reshape_transpose_cost(G, u, ip, Li, Lo):
    ri, ro = int(G.rank[ip]), int(G.rank[u])
    if ri == 0 or ro == 0:
        return 40.0
    Li_, Lo_ = np.asarray(Li), np.asarray(Lo)
    if G.op[u] == 75:
        bit = ((G.canon(ip, Li_) == G.canon(ip, rowmajor_code(ri)))
               & (G.canon(u, Lo_) == G.canon(u, rowmajor_code(ro))))
        mi, mo = G.minor(ip, Li_), G.minor(u, Lo_)
        di = np.where(mi >= 0, G.dims[ip, :ri][np.maximum(mi, 0)], 1)
        do = np.where(mo >= 0, G.dims[u, :ro][np.maximum(mo, 0)], 1)
        same_minor = di == do
    else:
        perm = [int(round(x)) for x in G.nf[u, 31:31 + ro]]
        if sorted(perm) != list(range(ro)) or ri != ro:
            perm = list(range(ro))
        pinv = np.argsort(perm)
        exp = np.zeros_like(Li_)
        for i in range(ri):
            a = (Li_ >> (3 * i)) & 7
            exp = exp | (pinv[a] << (3 * i))
        bit = G.canon(u, Lo_) == G.canon(u, exp)
        mo, mi = G.minor(u, Lo_), G.minor(ip, Li_)
        same_minor = np.where(mo >= 0, np.asarray(perm)[np.maximum(mo, 0)], -1) == mi
    raw = G.vol[u] * G.eb[u]
    sec = np.ones_like(bit, dtype=bool)
    cost = relayout_cost(G, ip, Li, u, Lo, ~same_minor, sec, raw)
    return np.where(bit, 40.0, cost)


# ----------------------------------------------------------------------------------
# tile law
# ----------------------------------------------------------------------------------
class TileInfo:
    def __init__(self, arr):
        G = self.G = Parsed(arr)
        n = G.n
        cand = [i for i in range(n) if G.is_root[i] and G.rank[i] > 0]
        if not cand:
            cand = [i for i in range(n) if G.rank[i] > 0] or [n - 1]
        o = self.o = max(cand, key=lambda i: (G.vol[i], -i))
        r = self.r = int(G.rank[o])
        perm = G.defperm[o]
        self.d = np.array([G.dims[o, p] for p in perm], dtype=np.float64) if r else np.ones(1)
        self.perm = perm
        last = n - 1
        outer = [v for v in G.prods[last] if G.op[v] == 63] if G.op[last] == 41 else []
        if not outer:
            outer = [i for i in range(n) if G.op[i] == 63 and G.rank[i] > 0]
        in_bytes = sum(G.vol[v] * G.eb[v] for v in outer if G.rank[v] > 0)
        self.eb = G.eb[o] if G.eb[o] > 0 else 4.0
        self.out_bytes = G.vol[o] * self.eb
        nout = 1
        if G.op[last] == 41 and G.tup[last]:
            nout = max(1, int(round(G.nf[last, 29])))
        self.nout = nout
        self.in_ratio = max(0.05, in_bytes / max(self.out_bytes, 1.0))
        self.S = G.sub[o]
        w = 0.0
        for i in range(n):
            if G.op[i] in EW_OPS and G.rank[i] > 0:
                w += op_weight(int(G.op[i]))
        self.w = max(1.0, w)
        # lane-crossing reductions
        self.lane_red = False
        for u in np.nonzero(G.op == 70)[0]:
            v = G.largest_prod(u)
            if v is None:
                continue
            nr = int(G.rank[v] - G.rank[u])
            rd = [int(round(x)) for x in G.nf[u, 31:31 + max(nr, 0)]]
            if G.defperm[v] and G.defperm[v][0] in rd:
                self.lane_red = True
        # transposed operand: output dim that is minor in an operand of a transpose/copy
        self.tdim = None
        for u in np.nonzero(np.isin(G.op, [98, 27]))[0]:
            v = G.largest_prod(u)
            if v is None or G.rank[u] != r or not np.array_equal(G.dims[u, :r], G.dims[o, :r]):
                continue
            vm = G.defperm[v][0] if G.defperm[v] else 0
            if G.op[u] == 98:
                pm = [int(round(x)) for x in G.nf[u, 31:31 + r]]
                if sorted(pm) != list(range(r)):
                    continue
                od = pm.index(vm)
            else:
                od = vm
            pos = perm.index(od) if od in perm else 0
            if pos != 0:
                self.tdim = pos
        # MXU
        self.mxu = None
        ms = [i for i in range(n) if G.op[i] in MXU_OPS and G.rank[i] > 0]
        if ms:
            u = ms[0]
            ip, kp = G.mxu_io(u)
            if ip is not None and kp is not None:
                f = G.nf[u]
                kperm = G.defperm[kp]
                kd = np.array([G.dims[kp, p] for p in kperm], dtype=np.float64)
                if G.op[u] == 26:
                    ki, ko = int(round(f[99])), int(round(f[100]))
                    fo = int(round(f[106]))
                    ns = max(int(G.rank[kp]) - 2, 0)
                    ksp = [int(round(x)) for x in f[101:101 + ns]]
                    wsz = [max(1, int(round(x))) for x in f[37:37 + ns]]
                else:
                    rk = int(G.rank[kp])
                    ki, ko = rk - 2, rk - 1
                    fo = int(G.rank[u]) - 1
                    ksp, wsz = [], []
                Cout = float(G.dims[u, fo])
                Kc = float(np.prod(kd)) / max(Cout, 1.0)
                jf = perm.index(fo) if (fo in perm and G.rank[u] == r) else 0
                self.mxu = dict(kd=kd, pki=kperm.index(ki) if ki in kperm else 0,
                                pko=kperm.index(ko) if ko in kperm else 0,
                                ksp=[kperm.index(q) for q in ksp if q in kperm],
                                wsz=wsz, jf=jf, Cout=Cout, Kc=Kc,
                                F=2.0 * G.vol[u] * Kc,
                                in_bytes=G.vol[ip] * G.eb[ip], w_bytes=G.vol[kp] * G.eb[kp],
                                peak=PEAK16 if G.eb[ip] <= 2 else PEAK16 / 3.0,
                                spj=[perm.index(q) for q in [int(round(x)) for x in f[95:95 + len(ksp)]]
                                     if q in perm] if G.op[u] == 26 else [])


def tile_eval(T, cf, want_vmem=False, compiler=False):
    """compiler=True: the compiler's own (simplified) cost model, used only by the
    sampler to pick the default tiling; the law is compiler=False."""
    cf = np.asarray(cf, dtype=np.float64)
    c = cf.shape[0]
    r = max(T.r, 1)
    d = T.d[:r]
    t = cf[:, 8:8 + r].copy()
    t = np.where(t <= 0, d[None, :], t)
    t = np.minimum(np.maximum(t, 1.0), d[None, :])
    ntiles = np.prod(np.ceil(d[None, :] / t), axis=1)
    P = ceil_to(t[:, 0], 128.0)
    if r >= 2:
        P = P * ceil_to(t[:, 1], T.S)
        if r > 2:
            P = P * np.prod(t[:, 2:], axis=1)
    else:
        P = P * T.S
    eb = T.eb
    out_tile = P * eb * T.nout
    in_tile = P * eb * T.in_ratio
    w_tile = np.zeros(c)
    read_eff = np.ones(c)
    if T.tdim is not None and T.tdim < r and not compiler:
        read_eff = (np.minimum(t[:, T.tdim], 128.0) / 128.0) ** 0.6
    vpu = P * T.w * (1.0 + 0.25 * T.in_ratio) / VPU
    if T.lane_red and not compiler:
        vpu = vpu * 2.5
    comp = vpu
    if T.mxu is not None:
        M = T.mxu
        kd = M['kd']
        rk = len(kd)
        kb = cf[:, 0:rk].copy()
        kb = np.where(kb <= 0, kd[None, :], kb)
        kb = np.minimum(np.maximum(kb, 1.0), kd[None, :])
        tf = t[:, M['jf']] if M['jf'] < r else np.ones(c)
        k_if = kb[:, M['pki']]
        k_of = kb[:, M['pko']]
        rows = np.prod(t, axis=1) / np.maximum(tf, 1.0)
        nn = np.minimum(tf, k_of)
        u_n = np.where(nn < 128, nn / 128.0, nn / ceil_to(nn, 128.0))
        u_k = np.where(k_if < 128, k_if / 128.0, k_if / ceil_to(k_if, 128.0))
        u_m = rows / ceil_to(rows, 8.0)
        eff = np.maximum(u_n * u_k * u_m, 1e-3)
        passes = np.ones(c)
        for j in range(rk):
            if j == M['pko']:
                continue
            passes = passes * np.ceil(kd[j] / kb[:, j])
        mxu_t = 2.0 * rows * tf * M['Kc'] / M['peak'] / eff + 120.0 * passes
        halo = np.ones(c)
        for j, wz in zip(M['spj'], M['wsz']):
            if j < r and not compiler:
                halo = halo * (t[:, j] + wz - 1) / t[:, j]
        nfeat = np.ceil(M['Cout'] / np.maximum(tf, 1.0))
        nsp = ntiles / nfeat
        in_total = M['in_bytes'] * nfeat * halo
        w_total = M['w_bytes'] * nsp
        in_tile = in_total / ntiles
        w_tile = np.prod(kb, axis=1) * eb
        in_tile = in_tile + (w_total / ntiles)
        comp = np.maximum(vpu, mxu_t)
    vmem = 2.0 * (in_tile + out_tile + w_tile)
    dma = (in_tile + out_tile) / BW / read_eff
    if compiler:
        tt = LAUNCH + ntiles * (np.maximum(dma, comp) + 250.0) + dma
        tt = np.where(vmem > VMEM_CAP / 2, np.inf, tt)
        return tt
    spill = np.where(vmem > VMEM_CAP, 1.0 + 1.5 * np.maximum(vmem / VMEM_CAP - 1.0, 0) ** 1.3, 1.0)
    dma = dma * spill
    tt = LAUNCH + ntiles * (np.maximum(dma, comp) + STEP) + dma
    if want_vmem:
        return tt, vmem, ntiles
    return tt


def tile_law(arr):
    T = TileInfo(arr)
    return tile_eval(T, arr['config_feat'])


# ==================================================================================
# tile kernels (fusion computations, 10-60 nodes)
# ==================================================================================
EW_UNARY = ['exponential', 'tanh', 'negate', 'rsqrt', 'logistic', 'abs', 'log', 'sqrt']
EW_BINARY = ['add', 'multiply', 'subtract', 'maximum', 'minimum', 'divide']


def gen_tile_kernel(rng, nmin, nmax):
    kind = str(rng.choice(['ew', 'reduce', 'conv', 'dot', 'transpose', 'copy'],
                          p=[0.3, 0.2, 0.2, 0.12, 0.1, 0.08]))
    hlo = {'copy': 'copy', 'transpose': str(rng.choice(['transpose', 'fusion']))}.get(kind, 'fusion')
    dt = 'bf16' if rng.random() < 0.5 else 'f32'
    p = Prog(rng)
    f = Comp(p, 'fused')
    p.fused.append(f)
    fparams = []

    def fparam(dims, et=dt, lay=None):
        x = f.param(dims, et, lay=lay)
        fparams.append(x)
        return x

    def rand_dims(rank, lo=2 ** 11, hi=2 ** 22):
        for _ in range(100):
            choices = [1, 2, 3, 4, 5, 7, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384,
                       512, 768, 1000, 1024, 2048, 4096]
            d = [int(rng.choice(choices)) for _ in range(rank)]
            v = int(np.prod(d))
            if lo <= v <= hi and d[-1] >= 2:
                return d
        return [64] * (rank - 1) + [128]

    def ew_chain(x, k):
        for _ in range(k):
            if rng.random() < 0.4:
                x = f.ew(str(rng.choice(EW_UNARY)), x)
            else:
                if rng.random() < 0.5:
                    other = f.scal_b(x.dims, x.et)
                elif rng.random() < 0.5 and len(x.dims) >= 2:
                    b = fparam([x.dims[-1]], x.et)
                    other = f.bcast(b, x.dims, [len(x.dims) - 1])
                else:
                    other = fparam(x.dims, x.et)
                x = f.ew(str(rng.choice(EW_BINARY)), x, other)
        return x

    target = int(rng.integers(nmin, nmax + 1))
    lay_out = None
    if kind == 'ew':
        r = int(rng.integers(1, 5))
        dims = rand_dims(r)
        x = fparam(dims)
        root = ew_chain(x, max(2, (target - 4) // 3))
    elif kind == 'reduce':
        r = int(rng.integers(2, 5))
        dims = rand_dims(r, 2 ** 13, 2 ** 23)
        x = fparam(dims)
        x = ew_chain(x, max(1, (target - 10) // 6))
        nred = 1 if (r == 2 or rng.random() < 0.6) else 2
        rd = sorted(rng.choice(r, size=nred, replace=False).tolist())
        y = f.reduce(x, rd, str(rng.choice(['add', 'max'])))
        if len(y.dims) == 0:
            y = f.reshape(y, [1])
        root = ew_chain(y, max(1, (target - 10) // 6))
    elif kind in ('conv', 'dot'):
        if kind == 'conv':
            B = int(rng.choice([1, 2, 8, 16, 32, 64, 128]))
            Hs = int(rng.choice([4, 7, 8, 12, 14, 16, 28, 32, 56]))
            Ci = int(rng.choice([3, 16, 32, 64, 96, 128, 192, 256, 384, 512]))
            Co = int(rng.choice([16, 32, 64, 128, 192, 256, 384, 512]))
            k = int(rng.choice([1, 3, 3, 5]))
            tpu = rng.random() < 0.5
            fm = Fmt('nhwc')
            xl = [3, 0, 2, 1] if tpu else None
            x = fparam(fm.act(B, Ci, [Hs, Hs]), lay=xl)
            w = fparam(fm.ker([k, k], Ci, Co))
            y = fwd_conv(f, fm, x, w, k, int(rng.choice([1, 1, 2])))
            y.lay = xl
            lay_out = xl
            bias = fparam([Co])
            y = f.ew('add', y, f.bcast(bias, y.dims, [3]))
            for q in (y,):
                q.lay = xl
        else:
            M = int(rng.choice([8, 32, 128, 256, 512, 1024, 2048, 4096]))
            K = int(rng.choice([64, 128, 256, 512, 768, 1024, 4096]))
            N = int(rng.choice([64, 128, 256, 512, 1000, 1024, 3072]))
            x = fparam([M, K])
            w = fparam([K, N])
            y = f.dot(x, w)
            y = f.ew('add', y, f.bcast(fparam([N]), y.dims, [1]))
        root = y
        nrest = max(1, (target - len(f.nodes) - 6) // 3)
        for _ in range(nrest):
            if rng.random() < 0.5:
                root = f.ew(str(rng.choice(['maximum', 'multiply', 'add'])), root, f.scal_b(root.dims, root.et))
            else:
                root = f.ew(str(rng.choice(['tanh', 'logistic', 'exponential', 'negate'])), root)
            root.lay = lay_out
        if lay_out is not None:
            for nd in f.nodes:
                if len(nd.dims) == 4 and nd.lay is None and nd.op != O['parameter']:
                    nd.lay = lay_out
    else:  # transpose / copy
        r = int(rng.integers(2, 5))
        dims = rand_dims(r)
        x = fparam(dims)
        x = ew_chain(x, max(1, (target - 8) // 6))
        if kind == 'transpose':
            perm = list(rng.permutation(r))
            if perm == list(range(r)):
                perm = perm[::-1]
            y = f.transpose(x, perm)
        else:
            lay = list(range(r - 1, -1, -1))
            while lay == list(range(r - 1, -1, -1)):
                lay = [int(v) for v in rng.permutation(r)]
            y = f.add(O['copy'], x.dims, x.et, [x], lay=lay)
            lay_out = lay
        root = ew_chain(y, max(1, (target - len(f.nodes) - 4) // 3))
        if lay_out is not None:
            for nd in f.nodes[f.nodes.index(y):]:
                if nd.dims == y.dims and nd.op != O['parameter']:
                    nd.lay = lay_out
    # multi-output fusions sometimes
    if rng.random() < 0.2 and root.dims:
        side = f.reduce(root, [0])
        if len(side.dims) == 0:
            side = f.reshape(side, [1])
        f.set_root(f.tuple([root, side]))
        out_dims, out_et, tsz = (), 'tuple', 2
    else:
        f.set_root(root)
        out_dims, out_et, tsz = root.dims, root.et, 0
    e = p.entry
    outer = [e.param(x.dims, x.et, lay=x.lay) for x in fparams]
    e.set_root(e.add(O['fusion'], out_dims, out_et, outer, calls=[f], tsize=tsz,
                     lay=(root.lay if tsz == 0 else None)))
    return p, hlo


def tile_cands(d, rng):
    d = int(d)
    s = {1, d}
    v = 1
    while v <= d:
        s.add(v)
        v *= 2
    for k in range(1, 9):
        if 128 * k <= d:
            s.add(128 * k)
        if 8 * k <= d:
            s.add(8 * k)
    divs = [q for q in range(2, min(d, 4096) + 1) if d % q == 0]
    if divs:
        for q in rng.choice(divs, size=min(4, len(divs)), replace=False):
            s.add(int(q))
    for q in (3, 5, 6, 12, 24, 48):
        if q <= d:
            s.add(q)
    return np.array(sorted(s), dtype=np.float64)


def tile_default(T):
    r = max(T.r, 1)
    d = T.d[:r]
    t = np.ones(r)
    t[0] = d[0] if d[0] < 128 else min(d[0], 512) // 128 * 128
    if r >= 2:
        t[1] = d[1] if d[1] < T.S else max(T.S, min(d[1], 64) // T.S * T.S)
    budget = 2 * 1024 * 1024
    for j in range(2, r):
        best = 1.0
        v = 1.0
        while v <= d[j]:
            tt = t.copy()
            tt[j] = v
            P = ceil_to(tt[0], 128) * ceil_to(tt[1], T.S) * np.prod(tt[2:])
            if P * T.eb * (1 + T.in_ratio) * 2 <= budget:
                best = v
            v *= 2
        t[j] = best
    kb = None
    if T.mxu is not None:
        M = T.mxu
        jf = M['jf']
        if jf < r:
            t[jf] = d[jf] if d[jf] <= 128 else 128
        kb = M['kd'].copy()
        kb[M['pki']] = min(M['kd'][M['pki']], 256)
        kb[M['pko']] = min(M['kd'][M['pko']], 128)
    return t, kb


def tile_row(T, t, kb):
    row = np.zeros(24, dtype=np.float64)
    if kb is not None:
        row[0:8] = _seq(list(kb), 6, 0.0)
    row[8:16] = _seq(list(t), 6, 0.0)
    return row


def pow2_cands(d):
    d = int(d)
    s = {d}
    v = 1
    while v < d:
        s.add(v)
        v *= 2
    return np.array(sorted(s), dtype=np.float64)


def compiler_default(rng, T):
    """The compiler's default tiling: best of a power-of-two grid under its own
    simplified cost model (not the law)."""
    r = max(T.r, 1)
    t0, kb0 = tile_default(T)
    m = 600
    pc = [pow2_cands(T.d[j]) for j in range(r)]
    ts = np.stack([rng.choice(cc, size=m) for cc in pc], axis=1)
    ts[0] = t0
    kbs = None
    if T.mxu is not None:
        kcs = [pow2_cands(x) for x in T.mxu['kd']]
        kbs = np.stack([rng.choice(cc, size=m) for cc in kcs], axis=1)
        kbs[0] = kb0
    rows = np.stack([tile_row(T, ts[i], kbs[i] if kbs is not None else None) for i in range(m)])
    cost = tile_eval(T, rows, compiler=True)
    i = int(np.argmin(cost)) if np.isfinite(cost).any() else 0
    return ts[i], (kbs[i] if kbs is not None else None)


def tile_configs(rng, T, cmin, cmax):
    r = max(T.r, 1)
    t0, kb0 = compiler_default(rng, T)
    want = int(rng.integers(cmin, cmax + 1))
    cands = [tile_cands(T.d[j], rng) for j in range(r)]
    kc = [tile_cands(x, rng) for x in T.mxu['kd']] if T.mxu is not None else None
    if kc is not None:
        kc = [cc[cc >= min(x, 8)] for cc, x in zip(kc, T.mxu['kd'])]
        jf = T.mxu['jf']
        if jf < r:
            cands[jf] = cands[jf][cands[jf] >= min(T.d[jf], 8)]
    rows = [tile_row(T, t0, kb0)]
    seen = {rows[0].tobytes()}
    _, _, P0 = tile_eval(T, np.stack(rows), want_vmem=True)
    kvol0 = float(np.prod(kb0)) if kb0 is not None else 1.0
    for _ in range(6):
        m = 6 * want
        ts = np.stack([rng.choice(cc, size=m) for cc in cands], axis=1)
        # sometimes stay near the default
        near = rng.random(m) < 0.3
        ts[near] = np.where(rng.random((near.sum(), r)) < 0.6, t0[None, :], ts[near])
        kbs = None
        if kc is not None:
            kbs = np.stack([rng.choice(cc, size=m) for cc in kc], axis=1)
        batch = np.stack([tile_row(T, ts[i], kbs[i] if kbs is not None else None)
                          for i in range(m)])
        _, vmem, P = tile_eval(T, batch, want_vmem=True)
        ok = (vmem <= 2 * VMEM_CAP) & (P <= P0[0] * 10.0)
        if kbs is not None:
            ok &= np.prod(kbs, axis=1) >= kvol0 / 48.0
        for i in np.nonzero(ok)[0]:
            b = batch[i].tobytes()
            if b not in seen:
                seen.add(b)
                rows.append(batch[i])
            if len(rows) >= want:
                break
        if len(rows) >= want:
            break
    cf = np.stack(rows).astype(np.float32)
    perm = rng.permutation(len(cf))
    cf = cf[perm]
    dflt = int(np.nonzero(perm == 0)[0][0])
    return cf, dflt


# ==================================================================================
# layout config samplers
# ==================================================================================
def node_cfg_info(G, ids):
    info = []
    for k in ids:
        o = G.op[k]
        if o in MXU_OPS:
            ip, kp = G.mxu_io(k)
        else:
            ip, kp = G.largest_prod(k), None
        f = G.nf[k]
        ro = int(G.rank[k])
        ri = int(G.rank[ip]) if ip is not None else 0
        rk = int(G.rank[kp]) if (kp is not None and o == 26) else 0
        if o == 26:
            fo, fi, fk = int(round(f[106])), int(round(f[94])), int(round(f[100]))
            fk2 = int(round(f[99]))
        else:
            fo, fi, fk, fk2 = ro - 1, ri - 1, None, None
        info.append(dict(ro=ro, ri=ri, rk=rk, fo=fo, fi=fi, fk=fk, fk2=fk2,
                         do=G.defperm[k], di=G.defperm[ip] if ip is not None else [],
                         dk=G.defperm[kp] if (kp is not None and o == 26) else []))
    return info


def rand_blocks(rng, c, r, feat, p_partial, p_set, feat2=None):
    """(c,6) random minor-to-major blocks."""
    out = -np.ones((c, 6), dtype=np.int64)
    if r == 0:
        return out
    if r == 1:
        out[:, 0] = np.where(rng.random(c) < p_set, 0, -1)
        return out
    keys = rng.random((c, r))
    if feat is not None and 0 <= feat < r:
        pick = rng.random(c) < 0.45
        keys[pick, feat] = -1.0
        if feat2 is not None and 0 <= feat2 < r and feat2 != feat:
            p2 = pick & (rng.random(c) < 0.5)
            keys[p2, feat2] = -0.5
    perm = np.argsort(keys, axis=1)
    out[:, :r] = perm
    if r >= 3:
        part = rng.random(c) < p_partial
        out[part, 2:] = -1
    unset = rng.random(c) >= p_set
    out[unset] = -1
    return out


def pad6(perm):
    return list(perm) + [-1] * (6 - len(perm))


def layout_configs(rng, G, ids, c, search):
    info = node_cfg_info(G, ids)
    nc = len(ids)
    ncf = -np.ones((c, nc, 18), dtype=np.int64)
    if search == 'random':
        for j, I in enumerate(info):
            ncf[:, j, 0:6] = rand_blocks(rng, c, I['ro'], I['fo'], 0.5, 0.9)
            ncf[:, j, 6:12] = rand_blocks(rng, c, I['ri'], I['fi'], 0.5, 0.7)
            if I['rk']:
                ncf[:, j, 12:18] = rand_blocks(rng, c, I['rk'], I['fk'], 0.5, 0.7, I['fk2'])
            alldef = rng.random(c) < 0.12
            ncf[alldef, j, :] = -1
        dup = np.nonzero(rng.random(c) < 0.04)[0]
        for i in dup:
            if i > 0:
                ncf[i] = ncf[int(rng.integers(0, i))]
    else:
        # a compiler's own search: few nodes moved away from its default at a time
        cand = []
        for I in info:
            cl = []
            ro, do = I['ro'], I['do']
            ri, di = I['ri'], I['di']
            if ro >= 1:
                cl.append((pad6(do), [-1] * 6, 0.15))
            if ro >= 2:
                # other second-minor dims, minor kept
                for sdim in do[2:]:
                    cl.append((pad6([do[0], sdim]), [-1] * 6, 0.3 / max(1, ro - 2)))
                    if ri == ro and di and di[0] == do[0] and sdim in di:
                        cl.append((pad6([do[0], sdim]), pad6([di[0], sdim]), 0.15 / max(1, ro - 2)))
                cl.append((pad6([do[1], do[0]]), [-1] * 6, 0.08))
                if 0 <= I['fo'] < ro and I['fo'] != do[0]:
                    sec = [x for x in do if x != I['fo']][0]
                    inp = [-1] * 6
                    if ri >= 2 and 0 <= I['fi'] < ri:
                        s2 = [x for x in di if x != I['fi']][0]
                        inp = pad6([I['fi'], s2])
                    cl.append((pad6([I['fo'], sec]), inp, 0.2))
                rp = [do[0]] + [int(x) for x in rng.permutation(ro) if x != do[0]]
                cl.append((pad6(rp), [-1] * 6, 0.05))
                if ri >= 2:
                    cl.append((pad6(do[:2]), pad6(di[:2]), 0.12))
            cand.append(cl)
        for i in range(c):
            if rng.random() < 0.06:
                continue
            k = min(nc, 1 + int(rng.poisson(1.3)))
            for j in rng.choice(nc, size=k, replace=False):
                cl = cand[j]
                if not cl:
                    continue
                w = np.array([x[2] for x in cl])
                q = cl[int(rng.choice(len(cl), p=w / w.sum()))]
                ncf[i, j, 0:6] = q[0]
                ncf[i, j, 6:12] = q[1]
    return ncf.astype(np.float32)


# ==================================================================================
# noise
# ==================================================================================
def measure(rng, noiseless, sigma, jitter, p_out):
    y = noiseless * np.exp(rng.normal(0.0, sigma, size=noiseless.shape))
    y = y + rng.normal(0.0, jitter, size=noiseless.shape)
    out = rng.random(noiseless.shape) < p_out
    if out.any():
        y[out] = y[out] * (1.0 + np.exp(rng.normal(math.log(0.25), 0.7, size=out.sum())))
    return np.maximum(np.rint(y), 1).astype(np.int64)


# ==================================================================================
# driver
# ==================================================================================
SIZES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120),
                  lay_cfg=(300, 3000), lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20),
                 lay_cfg=(30, 200), lay_test_cfg=(30, 60)),
}
SPLITS = ('train', 'valid', 'test')
COLLS = [('tile', 'xla', None), ('layout', 'xla', 'default'), ('layout', 'xla', 'random'),
         ('layout', 'nlp', 'default'), ('layout', 'nlp', 'random')]


def signed_hex(rng):
    v = int(rng.integers(0, 2 ** 62)) * (1 if rng.random() < 0.5 else -1)
    h = format(abs(v), 'x')
    return ('-' if v < 0 else '') + h


def make_layout_graph(rng, src, tiny, S):
    lo, hi = S['lay_nodes']
    clo, chi = S['lay_nc']
    target = int(rng.integers(lo, hi + 1))
    for attempt in range(40):
        if src == 'xla':
            gen = gen_rnn if rng.random() < 0.15 else gen_cnn
        else:
            gen = gen_transformer
        p, name = gen(rng, target, tiny)
        arr, _ = p.finalize()
        n = len(arr['node_opcode'])
        op = arr['node_opcode']
        G = Parsed(arr)
        cand = [i for i in range(n) if op[i] in (26, 34, 75, 98) and G.rank[i] > 0
                and G.seg[i] == G.seg[n - 1] or (op[i] in (26, 34, 75, 98) and G.rank[i] > 0
                                                  and G.seg[i] > 0)]
        cand = sorted(set(cand))
        if n > hi:
            target = max(lo, int(target * 0.8))
            continue
        if n < lo or len(cand) < clo:
            target = min(hi, int(target * 1.25) + 10)
            continue
        k = len(cand)
        if k > chi:
            k = int(rng.integers(max(clo, int(chi * 0.6)), chi + 1))
        ids = np.sort(rng.choice(cand, size=k, replace=False)).astype(np.int64)
        return arr, G, ids, name
    raise RuntimeError('could not sample a layout graph within the size limits')


def build_root(out, seed, scale, gf):
    S = SIZES[scale]
    stats = []
    for ci, (task, src, search) in enumerate(COLLS):
        counts = S['tile'] if task == 'tile' else S['lay']
        for si, split in enumerate(SPLITS):
            ng = max(1, int(round(counts[si] * gf)))
            if task == 'tile':
                rel = os.path.join('npz', 'tile', src, split)
            else:
                rel = os.path.join('npz', 'layout', src, search, split)
            os.makedirs(os.path.join(out, rel), exist_ok=True)
            labeled = split != 'test'
            if labeled:
                os.makedirs(os.path.join(out, 'noiseless', rel), exist_ok=True)
            used = set()
            for g in range(ng):
                ss = np.random.SeedSequence([int(seed), ci, si, g, 11])
                rng = np.random.default_rng(ss)
                nrng = np.random.default_rng(np.random.SeedSequence([int(seed), ci, si, g, 11, 7]))
                if task == 'tile':
                    nlo, nhi = S['tile_nodes']
                    for _ in range(200):
                        p, kkind = gen_tile_kernel(rng, nlo, nhi)
                        arr, _ = p.finalize(with_splits=False)
                        if not nlo <= len(arr['node_opcode']) <= nhi:
                            continue
                        T = TileInfo(arr)
                        cf, dflt = tile_configs(rng, T, *S['tile_cfg'])
                        if len(cf) >= S['tile_cfg'][0]:
                            break
                    arr['config_feat'] = cf
                    c = len(cf)
                    mdl = model_stem(rng)
                    stem = f"{mdl}_{kkind}_{int(rng.integers(1, 400))}_{signed_hex(rng)}"
                    if labeled:
                        nl = tile_law(arr)
                        y = measure(nrng, nl, 0.01, 15.0, 0.005)
                        norm = y[dflt]
                        arr['config_runtime'] = y
                        arr['config_runtime_normalizers'] = np.full(c, norm, dtype=np.int64)
                    else:
                        arr['config_runtime'] = np.zeros(c, dtype=np.int64)
                        arr['config_runtime_normalizers'] = np.ones(c, dtype=np.int64)
                    keys = ['node_feat', 'node_opcode', 'edge_index', 'config_feat',
                            'config_runtime', 'config_runtime_normalizers']
                else:
                    arr, G, ids, name = make_layout_graph(rng, src, scale == 'tiny', S)
                    if labeled:
                        c = int(np.exp(rng.uniform(np.log(S['lay_cfg'][0]), np.log(S['lay_cfg'][1]))))
                    else:
                        c = int(rng.integers(S['lay_test_cfg'][0], S['lay_test_cfg'][1] + 1))
                    ncf = layout_configs(rng, G, ids, c, search)
                    arr['node_config_ids'] = ids
                    arr['node_config_feat'] = ncf
                    stem = f"{name}_{signed_hex(rng)}"
                    if labeled:
                        nl = layout_law(arr)
                        y = measure(nrng, nl, 0.004, 400.0, 0.003)
                        arr['config_runtime'] = y
                    else:
                        arr['config_runtime'] = np.zeros(c, dtype=np.int64)
                    keys = ['node_feat', 'node_opcode', 'edge_index', 'node_config_ids',
                            'node_config_feat', 'node_splits', 'config_runtime']
                if not labeled:
                    stem = rng.bytes(16).hex()
                while stem in used:
                    stem = stem + 'x'
                used.add(stem)
                arrays = {k: arr[k] for k in keys}
                arrays['node_feat'] = arrays['node_feat'].astype(np.float32)
                arrays['node_opcode'] = arrays['node_opcode'].astype(np.uint8)
                arrays['edge_index'] = arrays['edge_index'].astype(np.int64)
                np.savez_compressed(os.path.join(out, rel, stem + '.npz'), **arrays)
                if labeled:
                    np.save(os.path.join(out, 'noiseless', rel, stem + '.npy'),
                            np.asarray(nl, dtype=np.float64))
                    stats.append((task, src, search, split, stem, float(np.min(nl)),
                                  float(np.max(nl))))
    return stats


def model_stem(rng):
    base = str(rng.choice(['alexnet_train_batch_32', 'resnet_v1_50_official_batch_128_bf16',
                           'inception_v3_batch_128_train', 'mlperf_bert_batch_24_2x2',
                           'efficientnet_b7_eval_batch_1', 'unet_3d.4x4.bf16',
                           'mnasnet_a1_batch_128', 'transformer_tf2_dynamic_shape',
                           'ncf_batch_1024', 'retinanet.4x4.fp32', 'shapemask.4x4.fp32',
                           'magenta_dynamic', 'brax_es', 'openai_v0_rnn_natural']))
    return base


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=['tiny', 'small'], default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    a = ap.parse_args(argv)
    t0 = time.time()
    stats = build_root(a.out, a.seed, a.scale, a.graphs_factor)
    print(f'wrote {a.out} ({len(stats)} labeled graphs) in {time.time() - t0:.1f}s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
