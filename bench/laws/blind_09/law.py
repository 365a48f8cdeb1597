#!/usr/bin/env python3
"""Blind runtime law 09: a synthetic TpuGraphs-format dataset generator.

Usage: python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Everything below was written from public TPU/XLA knowledge (Cloud TPU performance guide:
8x128 vreg tiling, padding of the two most-minor dims, 128x128 MXU; XLA tiled-layout docs;
the TpuGraphs upstream featurizer/README for the file format) and my own reasoning.

======================================================================================
THE LAW (full description; the NOTE.md deliberately does not describe it)
======================================================================================
The noise-free runtime of every labeled file is computed ONLY from the arrays written in
that file (node_feat, node_opcode, edge_index, node_config_ids, node_config_feat,
node_splits / config_feat) plus the fixed constants below (see `LayoutLaw`, `TileLaw`).

Hardware model (per TensorCore): HBM 800 B/ns, VPU 1500 elem/ns, XLU (transpose /
cross-lane unit) 200 B/ns, MXU 90 kflop/ns bf16 (30 kflop/ns f32), ICI 60 B/ns.
Physical tensor size: the two most-minor dims of a layout are padded to the (sublane,
lane) tile: lane 128, sublane 8 for 32-bit, 16 for 16-bit, 32 for 8-bit types; rank-1
arrays pad to 128; majors unpadded.

LAYOUT collections -- a program is a sequence of kernels:
 * Layout resolution.  A configurable node gets output / input / kernel layouts from its
   18-wide block.  Fixed dims (>=0) are the most-minor dims in order, the missing dims are
   appended in the order of the slot's "natural" layout; an all -1 block = natural.  The
   natural layout is: descending (row major) for generic tensors and dots; for convolutions
   the feature dim in lanes and the batch dim in sublanes when batch >= 8 (else the last
   spatial dim), kernel: output feature in lanes, input feature in sublanes.  For
   reshape/transpose an all -1 input slot means "accept the arriving layout".
 * Layout propagation.  Parameters, get-tuple-element, reduce, slice, gather, ... and
   non-configurable reshape/transpose produce the descending layout; constant, broadcast,
   iota, rng are "flexible" (materialise in whatever layout is asked, free).  Elementwise
   ops (and all-reduce, copy) inherit the layout of their first same-shape operand whose
   layout comes from a configurable node (else the first fixed one).  Every other
   same-shape non-flexible operand whose layout differs must be converted.
 * Demands and copies (neighbourhood effect).  Elementwise merges, conv/dot input and
   kernel slots (natural for non-configurable conv/dot), explicit reshape/transpose input
   slots and every tuple operand (descending) demand a layout of their producer.  For each
   producer the compiler inserts ONE copy per distinct demanded layout that differs from
   the producer's layout; consumers that demand the same layout share it (so the cost
   depends jointly on a producer, all its consumers and their siblings).  Copy cost:
   read+write of padded bytes; if the lane dim changes, an XLU transpose over the larger
   side; if only the sublane dim changes a VPU shuffle; + 1 us launch.
 * Kernel costs (compute c, memory m; a kernel takes max(c,m) + 0.3 min(c,m) + launch):
   - conv: flops = 2*|out|*window*|in_feature|/groups at the MXU peak of its element type,
     divided by a feed quality per operand (1 if the wanted dim is in lanes, 0.88 if the
     sublane-wanted dim sits in lanes, 0.7 otherwise, the last two also cost XLU time
     over that operand's bytes), times the padding factor of the output layout (padded
     rows stream through the MXU) and the 128-padding of in/out features.  Memory: padded
     bytes of input, kernel and output under their layouts.
   - dot (canonical (B..,M,K)x(B..,K,N)): same with lhs wants K in lanes, M in sublanes;
     rhs N/K; output N/M.  The rhs is read in whatever layout arrives (no slot).
   - reshape: free (bitcast) when both sides are row-major up to size-1 dims and the
     tiled minor dims are compatible (same lane size; same sublane size or both multiples
     of 8); row-major but tile-incompatible -> relayout copy with VPU shuffling; otherwise
     a transposing copy (XLU).  transpose: free when the physical order is preserved,
     else copy (XLU when the lane dim moves).
   - elementwise: VPU work on padded elements (weights: 1 simple, 4 divide, 6
     transcendental) and 0.35 of the padded bytes of output + same-shape operands
     (the rest stays fused on chip).
   - reduce: reads padded input; cross-lane reduction (lane dim reduced) costs 3x VPU,
     sublane reduction 1.5x.  reduce-window / select-and-scatter: window work, 2x when the
     window moves along the lane dim.  slice-like/gather/concat/pad/dus/sort: padded reads
     (a lane-cut slice reads whole lane rows).  all-reduce: padded bytes over ICI + 4 us.
 * Neighbouring kernels overlap imperfectly: in topological order, when heavy kernel v
   does not depend (within 3 hops) on the previous heavy kernel u, 0.6*min(max(0,c_u-m_u),
   m_v) is hidden (v prefetches while u is compute bound).
 * Nodes inside while bodies (segments whose tuple root feeds a while) cost 8x.
 * + 80 us program overhead + 50 ns per node.

TILE collection -- one fused kernel, the tile is over the "target" tensor (conv/dot output,
else the reduce operand, else the largest tensor) in its physical major-to-minor order;
bounds are in elements for majors, units of 8 for the sublane dim and 128 for the lane dim.
 * grid steps = prod ceil(dim/tile); per step: DMA of input tiles (an input whose lane dim
   is not the target's lane dim is read with efficiency min(1, tile extent along that
   dim/128) plus XLU time), epilogue VPU work (op weights x relative volume), output
   write; small inputs (<= 1 MiB) stay resident.  MXU: per output tile the K dimension is
   streamed in chunks given by the kernel bounds: efficiency K_t/(K_t+64), N chunks
   re-stream activations, 150 ns per chunk pass; the kernel is re-fetched per output tile
   unless it fits 4 MiB.  Reductions split across steps pay partial-sum read/write;
   lane reductions cost XLU time.
 * Double-buffered when 2 x working set <= 16 MiB VMEM: step = max(dma, comp) +
   0.2 min + 350 ns; single-buffered (no overlap) when it fits once; beyond VMEM a spill
   penalty.  Two cores split the outermost non-reduced dim with >= 2 steps (imbalance
   when odd, none when no such dim).  + 2 us launch + prologue load + epilogue store.

NOISE (measurement only, heavy-tailed): layout: x exp(0.002 * t_2) (Student t, 2 dof,
clipped at 40) and, w.p. 2%, x (1 + 0.05 * Pareto(1.5)).  Tile: per batch of ~48 configs
a machine factor exp(N(0, 0.03)) applied to both the runtime and the default config's
normaliser (measured alongside, own noise), x exp(0.015 * t_2.5), w.p. 3% x (1 + 0.1 *
Pareto(1.3)).
"""
import argparse
import hashlib
import itertools
import math
import os
import sys
from multiprocessing import Pool

import numpy as np

# ----------------------------------------------------------------------------- opcodes
OP = dict(abs=1, add=2, all_reduce=5, bitcast=11, broadcast=13, clamp=17, compare=20,
          concatenate=22, constant=24, convert=25, convolution=26, copy=27, divide=32,
          dot=34, dynamic_slice=35, dynamic_update_slice=36, exponential=37, fusion=41,
          gather=42, gte=45, iota=48, log=50, and_=52, not_=53, maximum=57, minimum=58,
          multiply=59, negate=60, pad=62, parameter=63, power=66, reduce=70,
          reduce_window=72, reshape=75, rsqrt=81, select=83, select_and_scatter=84,
          shift_left=87, slice=92, sort=93, sqrt=94, subtract=95, tanh=96, transpose=98,
          tuple=100, while_=102, logistic=107)

# primitive type index in upstream kPrimitiveTypeFeatures (column = 2 + index)
T_PRED, T_S8, T_S32, T_U32, T_F16, T_F32, T_BF16, T_TUPLE = 1, 2, 4, 8, 10, 11, 13, 16
TYPE_BYTES = np.array([4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8, 16, 4, 4, 4], float)

# ----------------------------------------------------------------------------- law constants
BW = 800.0          # HBM bytes / ns
VPU = 1500.0        # elements / ns
XLU_BW = 200.0      # bytes / ns
PEAK_BF16 = 90000.0  # flop / ns
PEAK_F32 = 30000.0
ICI_BW = 60.0
KAPPA = 0.3         # imperfect compute/memory overlap inside a kernel
OMEGA = 0.6         # overlap between neighbouring independent kernels
GAMMA_EW = 0.35
WHILE_TRIPS = 8.0
LAUNCH_HEAVY = 1500.0
LAUNCH_COPY = 1000.0
BASE_NS = 80000.0
PER_NODE_NS = 50.0
VMEM = 16.0 * 2 ** 20
STEP_OVH = 350.0
TILE_LAUNCH = 2000.0

FLEX_OPS = {24, 13, 48, 77}
EW_OPS = {1, 2, 5, 7, 12, 15, 17, 19, 20, 25, 27, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53,
          54, 55, 57, 58, 59, 60, 65, 66, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94, 95,
          96, 103, 107, 118, 120}
TRANSC = {37, 38, 50, 51, 66, 81, 94, 96, 107, 30, 91, 120, 103, 7}
READ_OPS = {22, 35, 36, 42, 62, 92, 93, 82, 31}
RWIN_OPS = {72, 84}

# permutation codes: every minor_to_major tuple of rank <= 6 has an integer code < 1024
PERMS = []
PCODE = {}
for _r in range(7):
    for _p in itertools.permutations(range(_r)):
        PCODE[_p] = len(PERMS)
        PERMS.append(_p)


def desc(r):
    return tuple(range(r - 1, -1, -1))


def prod(xs):
    p = 1
    for x in xs:
        p *= int(x)
    return p


def sub_tile(eb):
    return 8 if eb >= 4 else (16 if eb == 2 else 32)


def padded(shape, mtm, eb):
    r = len(shape)
    if r == 0:
        return 1.0
    if r == 1:
        return float(-(-shape[0] // 128) * 128)
    lane = shape[mtm[0]]
    sub = shape[mtm[1]]
    st = sub_tile(eb)
    rest = 1.0
    for d in mtm[2:]:
        rest *= shape[d]
    return rest * (-(-lane // 128) * 128) * (-(-sub // st) * st)


# ============================================================================ HLO builder
class Graph:
    def __init__(self):
        self.N = []
        self.comps = []

    def comp(self, kind):
        self.comps.append(dict(kind=kind, nodes=[], root=None))
        return len(self.comps) - 1

    def add(self, c, op, shape, dt, ops=(), **a):
        nid = len(self.N)
        self.N.append(dict(op=op, shape=tuple(int(s) for s in shape), dt=dt,
                           ops=list(ops), a=a, comp=c))
        self.comps[c]['nodes'].append(nid)
        return nid

    def reducer(self, dt, op=OP['add']):
        c = self.comp('reducer')
        p0 = self.add(c, OP['parameter'], (), dt, pnum=0)
        p1 = self.add(c, OP['parameter'], (), dt, pnum=1)
        r = self.add(c, op, (), dt, [p0, p1])
        self.comps[c]['root'] = r
        return r


class Em:
    """Emitter bound to one computation."""

    def __init__(self, g, c):
        self.g, self.c, self.pn = g, c, 0

    def sh(self, x):
        return self.g.N[x]['shape']

    def dt(self, x):
        return self.g.N[x]['dt']

    def add(self, op, shape, dt, ops=(), **a):
        return self.g.add(self.c, op, shape, dt, ops, **a)

    def param(self, shape, dt):
        x = self.add(OP['parameter'], shape, dt, pnum=self.pn)
        self.pn += 1
        return x

    def const(self, dt, shape=()):
        return self.add(OP['constant'], shape, dt)

    def bcast(self, x, shape, dims):
        return self.add(OP['broadcast'], shape, self.dt(x), [x], dims=tuple(dims))

    def sbcast(self, shape, dt):
        return self.bcast(self.const(dt), shape, ())

    def ew(self, op, *xs, dt=None):
        return self.add(op, self.sh(xs[0]), dt if dt is not None else self.dt(xs[0]), xs)

    def convert(self, x, dt):
        return self.add(OP['convert'], self.sh(x), dt, [x])

    def reduce(self, x, dims, op=OP['add']):
        dt = self.dt(x)
        r = self.g.reducer(dt, op)
        init = self.const(dt)
        shp = [s for i, s in enumerate(self.sh(x)) if i not in dims]
        return self.add(OP['reduce'], shp, dt, [x, init, r], dims=tuple(sorted(dims)))

    def reshape(self, x, shape):
        assert prod(shape) == prod(self.sh(x)), (shape, self.sh(x))
        return self.add(OP['reshape'], shape, self.dt(x), [x])

    def transpose(self, x, perm):
        s = self.sh(x)
        return self.add(OP['transpose'], [s[p] for p in perm], self.dt(x), [x], dims=tuple(perm))

    def dot(self, a, b, dt=None):
        sa, sb = self.sh(a), self.sh(b)
        assert sa[-1] == sb[-2] and sa[:-2] == sb[:-2], (sa, sb)
        return self.add(OP['dot'], tuple(sa[:-1]) + (sb[-1],), dt or self.dt(a), [a, b])

    def tuple_(self, xs):
        return self.add(OP['tuple'], (), T_TUPLE, xs, tuple_size=len(xs))

    def gte(self, t, shape, dt):
        return self.add(OP['gte'], shape, dt, [t])


def win_dims(sizes, strides=None, lo=None, hi=None, wdil=None, bdil=None, rev=None):
    k = len(sizes)
    strides = strides or [1] * k
    lo = lo or [0] * k
    hi = hi or [0] * k
    wdil = wdil or [1] * k
    bdil = bdil or [1] * k
    rev = rev or [0] * k
    return [dict(size=sizes[i], stride=strides[i], lo=lo[i], hi=hi[i], wdil=wdil[i],
                 bdil=bdil[i], rev=rev[i]) for i in range(k)]


def _seq(f, base, vals, n):
    vals = [int(v) for v in vals]
    for i, v in enumerate(vals[:n]):
        f[base + i] = v
    f[base + n] = sum(vals)
    f[base + n + 1] = prod(vals)


def featurize(nd, mtm, is_root):
    f = np.zeros(140, np.float32)
    a = nd['a']
    f[0] = 1.0 if is_root else 0.0
    f[2 + nd['dt']] = 1.0
    _seq(f, 21, nd['shape'], 6)
    f[29] = a.get('tuple_size', 0)
    f[30] = a.get('pnum', 0)
    for i, v in enumerate(a.get('dims', ())[:6]):
        f[31 + i] = v
    w = a.get('window', [])
    for gi, key in enumerate(['size', 'stride', 'lo', 'hi', 'wdil', 'bdil']):
        _seq(f, 37 + 8 * gi, [d[key] for d in w], 6)
    for i, d in enumerate(w[:6]):
        f[85 + i] = 1.0 if d['rev'] else 0.0
    f[91] = sum(1 for d in w if d['rev'])
    f[92] = sum(1 for d in w if not d['rev'])
    cd = a.get('conv')
    if cd is not None:
        f[93] = cd['ib']
        f[94] = cd['if']
        for i, v in enumerate(cd['isp'][:4]):
            f[95 + i] = v
        f[99] = cd['ki']
        f[100] = cd['ko']
        for i, v in enumerate(cd['ksp'][:4]):
            f[101 + i] = v
        f[105] = cd['ob']
        f[106] = cd['of']
    f[107] = a.get('fgc', 0)
    f[108] = a.get('bgc', 0)
    sl = a.get('slice', [])
    _seq(f, 109, [s[0] for s in sl], 2)
    _seq(f, 113, [s[1] for s in sl], 2)
    _seq(f, 117, [s[2] for s in sl], 2)
    _seq(f, 121, a.get('dsizes', []), 2)
    pc = a.get('padcfg', [])
    _seq(f, 125, [p[0] for p in pc], 2)
    _seq(f, 129, [p[1] for p in pc], 2)
    f[133] = a.get('stable', 0)
    if len(nd['shape']) > 0 and mtm is not None:
        for i, v in enumerate(mtm[:6]):
            f[134 + i] = v
    return f


def finalize(g, order, layout_of=None):
    """order: list of computation ids in output order. Returns arrays + old->new map."""
    newid = {}
    seq = []
    for c in order:
        for nid in g.comps[c]['nodes']:
            newid[nid] = len(seq)
            seq.append(nid)
    assert len(seq) == len(g.N)
    roots = set(g.comps[c]['root'] for c in order if g.comps[c]['root'] is not None)
    n = len(seq)
    nf = np.zeros((n, 140), np.float32)
    opc = np.zeros(n, np.uint8)
    edges = []
    for i, nid in enumerate(seq):
        nd = g.N[nid]
        r = len(nd['shape'])
        mtm = layout_of(nid) if layout_of is not None else desc(r)
        nf[i] = featurize(nd, mtm, nid in roots)
        opc[i] = nd['op']
        for o in nd['ops']:
            assert newid[o] < i, 'not topological'
            edges.append((i, newid[o]))
    ei = np.array(edges, np.int64).reshape(-1, 2)
    return nf, opc, ei, newid


# ============================================================================ shared parsing
def parse_graph(nf, opc, ei):
    n = len(opc)
    dims = nf[:, 21:27]
    pos = dims > 0
    rank = np.where(pos.all(1), 6, np.argmin(pos, axis=1)).astype(int)
    shape = [tuple(int(v) for v in dims[i, :rank[i]]) for i in range(n)]
    tidx = np.argmax(nf[:, 2:21], axis=1)
    eb = TYPE_BYTES[tidx]
    ops = [[] for _ in range(n)]
    cons = [[] for _ in range(n)]
    for u, v in np.asarray(ei).reshape(-1, 2).tolist():
        ops[u].append(v)
        cons[v].append(u)
    return rank, shape, eb, ops, cons


def vol(s):
    return float(prod(s))


def _ceil(a, b):
    return -(-a // b) * b


def conv_natural(shape, bdim, fdim, sps):
    r = len(shape)
    lane = fdim
    sub = bdim if shape[bdim] >= 8 else (sps[-1] if len(sps) else bdim)
    if sub == lane:
        sub = [d for d in range(r - 1, -1, -1) if d != lane][0]
    rest = [d for d in range(r - 1, -1, -1) if d not in (lane, sub)]
    return (lane, sub) + tuple(rest)


def is_rowmajor(s, m):
    ph = [d for d in reversed(m) if s[d] > 1]
    return all(ph[i] < ph[i + 1] for i in range(len(ph) - 1))


def minor_sizes(s, m):
    if len(s) == 0:
        return 1, 1
    if len(s) == 1:
        return s[0], 1
    return s[m[0]], s[m[1]]


def encode_cols(cols, c):
    """cols: list of scalars or (c,) int arrays with values in [-1, 1022].  Returns
    (inverse index (c,), list of per-unique tuples of column values)."""
    arrs = [np.broadcast_to(np.asarray(x, np.int64), (c,)) for x in cols]
    if len(arrs) <= 6:
        key = np.zeros(c, np.int64)
        for a in arrs:
            key = key * 1024 + (a + 1)
        u, first, inv = np.unique(key, return_index=True, return_inverse=True)
    else:
        mat = np.stack(arrs, 1)
        u, first, inv = np.unique(mat, axis=0, return_index=True, return_inverse=True)
    vals = [tuple(int(a[f]) for a in arrs) for f in first]
    return inv.reshape(-1), vals


def keyed(cols, c, fn):
    """Evaluate fn(*codes)->tuple of floats for every distinct row; return arrays or scalars."""
    if all(np.isscalar(x) or np.ndim(x) == 0 for x in cols):
        return fn(*[int(x) for x in cols])
    inv, vals = encode_cols(cols, c)
    res = np.array([fn(*v) for v in vals], float)
    if len(vals) == 1:
        return tuple(float(x) for x in res[0])
    return tuple(res[inv, j] for j in range(res.shape[1]))


def copy_cost(shape, eb, src, dst):
    if src == dst or src < 0 or dst < 0:
        return 0.0
    s, d = PERMS[src], PERMS[dst]
    r = len(shape)
    if r == 0:
        return 0.0
    bs = padded(shape, s, eb) * eb
    bd = padded(shape, d, eb) * eb
    mem = (bs + bd) / BW
    comp = 0.0
    if r >= 2:
        if s[0] == d[0]:
            if s[1] != d[1]:
                comp = max(bs, bd) / eb / VPU * 1.5
                mem *= 1.15
        else:
            comp = max(bs, bd) / XLU_BW
    return max(comp, mem) + KAPPA * min(comp, mem) + LAUNCH_COPY


# ============================================================================ layout law
class LayoutLaw:
    def __init__(self, nf, opc, ei, cfg_ids, splits):
        nf = np.asarray(nf, np.float64)
        self.nf = nf
        self.opc = np.asarray(opc).astype(int)
        n = len(self.opc)
        self.n = n
        self.rank, self.shape, self.eb, self.ops, self.cons = parse_graph(nf, opc, ei)
        cfg_ids = [int(x) for x in np.asarray(cfg_ids).reshape(-1)]
        self.cfg_ids = cfg_ids
        self.kidx = {nid: k for k, nid in enumerate(cfg_ids)}
        sp = np.asarray(splits).reshape(-1)
        seg = np.searchsorted(sp, np.arange(n), side='right') - 1
        body = set()
        for i in np.where(self.opc == OP['while_'])[0]:
            for o in self.ops[i]:
                if self.opc[o] == OP['tuple'] and seg[o] != seg[i]:
                    body.add(int(seg[o]))
        self.seg = seg
        self.mult = np.array([WHILE_TRIPS if seg[i] in body else 1.0 for i in range(n)])
        R, S, op = self.rank, self.shape, self.opc
        # ---- naturals
        self.nat = [PCODE[desc(R[i])] for i in range(n)]
        self.convinfo = {}
        for i in range(n):
            if op[i] == OP['convolution'] and len(self.ops[i]) >= 2:
                x, w = self.ops[i][0], self.ops[i][1]
                ri = R[x]
                nsp = max(ri - 2, 0)
                f = nf[i]
                ib, if_ = int(f[93]), int(f[94])
                isp = [int(v) for v in f[95:95 + nsp]]
                ki, ko = int(f[99]), int(f[100])
                ob, of = int(f[105]), int(f[106])
                osp = [d for d in range(R[i]) if d not in (ob, of)]
                nat_o = conv_natural(S[i], ob, of, osp)
                nat_i = conv_natural(S[x], ib, if_, isp)
                rest = [d for d in range(R[w] - 1, -1, -1) if d not in (ko, ki)]
                nat_k = (ko, ki) + tuple(rest)
                self.convinfo[i] = dict(x=x, w=w, ib=ib, if_=if_, ki=ki, ko=ko, ob=ob, of=of,
                                        nat_o=PCODE[nat_o], nat_i=PCODE[nat_i],
                                        nat_k=PCODE[nat_k], wprod=max(1.0, f[44]),
                                        fgc=max(1.0, f[107]))
                self.nat[i] = PCODE[nat_o]
        # ---- slots of configurable nodes: (rank, natural code, accept-if-all-minus-one)
        self.slots = []
        for k, i in enumerate(cfg_ids):
            o = op[i]
            x = self.ops[i][0] if self.ops[i] else None
            sl = [None, None, None]
            if o == OP['convolution'] and i in self.convinfo:
                ci = self.convinfo[i]
                sl = [(R[i], ci['nat_o'], False), (R[ci['x']], ci['nat_i'], False),
                      (R[ci['w']], ci['nat_k'], False)]
            elif o == OP['dot']:
                sl = [(R[i], PCODE[desc(R[i])], False), (R[x], PCODE[desc(R[x])], False), None]
            else:
                sl = [(R[i], PCODE[desc(R[i])], o == OP['transpose']),
                      (R[x], PCODE[desc(R[x])], True) if x is not None else None, None]
            self.slots.append(sl)
        # ---- origins (structural)
        kind = [None] * n    # 'flex', 'fix', 'var'
        org = [None] * n
        demands = {}

        def dem(p, cns, src):
            if kind[p] == 'flex' or R[p] == 0:
                return
            demands.setdefault(p, []).append((cns, src))

        for i in range(n):
            o = op[i]
            if i in self.kidx:
                org[i] = ('cfg', self.kidx[i])
                kind[i] = 'var'
            elif R[i] == 0 or o == OP['tuple']:
                org[i] = ('fix', 0)
                kind[i] = 'fix'
            elif o in FLEX_OPS:
                org[i] = ('flex',)
                kind[i] = 'flex'
            elif o in EW_OPS:
                same = [j for j in self.ops[i] if S[j] == S[i]]
                var = [j for j in same if kind[j] == 'var']
                fix = [j for j in same if kind[j] == 'fix']
                win = var[0] if var else (fix[0] if fix else None)
                if win is None:
                    org[i] = ('flex',)
                    kind[i] = 'flex'
                else:
                    org[i] = ('same', win)
                    kind[i] = kind[win]
                    for j in same:
                        if j != win:
                            dem(j, i, ('node', win))
            else:
                org[i] = ('fix', self.nat[i])
                kind[i] = 'fix'
            # consumer-side demands
            if i in self.kidx:
                k = self.kidx[i]
                if o == OP['convolution'] and i in self.convinfo:
                    dem(self.ops[i][0], i, ('slot', k, 1))
                    dem(self.ops[i][1], i, ('slot', k, 2))
                elif self.ops[i] and self.slots[k][1] is not None:
                    dem(self.ops[i][0], i, ('slot', k, 1))
            elif o == OP['convolution'] and i in self.convinfo:
                ci = self.convinfo[i]
                dem(ci['x'], i, ('fix', ci['nat_i']))
                dem(ci['w'], i, ('fix', ci['nat_k']))
            elif o == OP['dot'] and self.ops[i]:
                x = self.ops[i][0]
                dem(x, i, ('fix', PCODE[desc(R[x])]))
            elif o == OP['tuple']:
                for j in self.ops[i]:
                    if R[j] > 0 and op[j] != OP['tuple']:
                        dem(j, i, ('fix', PCODE[desc(R[j])]))
        self.kind, self.org, self.demands = kind, org, demands
        # ---- heavy kernels and their independence from the previous heavy kernel
        heavy = []
        for i in range(n):
            o = op[i]
            if R[i] == 0 and o not in (OP['reduce'],):
                continue
            if o in (OP['convolution'], OP['dot'], OP['reduce'], OP['all_reduce'], OP['reshape'],
                     OP['transpose']) or o in READ_OPS or o in RWIN_OPS:
                heavy.append(i)
        self.heavy = heavy
        pairs = []
        for a, b in zip(heavy[:-1], heavy[1:]):
            if seg[a] != seg[b]:
                continue
            anc = set()
            front = [b]
            for _ in range(3):
                nxt = []
                for v in front:
                    for u in self.ops[v]:
                        if u not in anc:
                            anc.add(u)
                            nxt.append(u)
                front = nxt
            if a not in anc:
                pairs.append((a, b))
        self.pairs = pairs

    # ------------------------------------------------------------------ cost primitives
    def _feed(self, m, want_lane, want_sub, nbytes):
        if len(m) < 2:
            return 1.0, 0.0
        if m[0] == want_lane:
            return 1.0, 0.0
        if m[0] == want_sub:
            return 0.88, nbytes / XLU_BW
        return 0.7, 1.5 * nbytes / XLU_BW

    def _mxu(self, flops, peak, K, N, so, eo, mo, parts):
        """parts: list of (shape, eb, mtm, want_lane, want_sub)."""
        kpad = _ceil(int(max(K, 1)), 128) / max(K, 1)
        npad = _ceil(int(max(N, 1)), 128) / max(N, 1)
        q = 1.0
        xlu = 0.0
        mem = 0.0
        for (s, e, m, wl, ws) in parts:
            b = padded(s, m, e) * e
            mem += b
            qq, xx = self._feed(m, wl, ws, b)
            q *= qq
            xlu += xx
        pad_o = padded(so, mo, eo) / max(vol(so), 1.0)
        comp = flops / peak * kpad * npad * pad_o / q + xlu
        return comp, mem / BW, LAUNCH_HEAVY

    def conv_cost(self, i, lo, li, lk):
        ci = self.convinfo[i]
        x, w = ci['x'], ci['w']
        S, eb = self.shape, self.eb
        so, si, sk = S[i], S[x], S[w]
        fin = si[ci['if_']]
        fout = so[ci['of']]
        flops = 2.0 * vol(so) * ci['wprod'] * fin / ci['fgc']
        peak = PEAK_BF16 if (eb[x] <= 2 and eb[w] <= 2) else PEAK_F32
        mo, mi, mk = PERMS[lo], PERMS[li], PERMS[lk]
        nat_o, nat_i = PERMS[ci['nat_o']], PERMS[ci['nat_i']]
        parts = [(si, eb[x], mi, ci['if_'], nat_i[1] if len(nat_i) > 1 else -1),
                 (sk, eb[w], mk, ci['ko'], ci['ki']),
                 (so, eb[i], mo, ci['of'], nat_o[1] if len(nat_o) > 1 else -1)]
        return self._mxu(flops, peak, fin * ci['wprod'], fout, so, eb[i], mo, parts)

    def dot_cost(self, i, lo, ll, lr):
        x, y = self.ops[i][0], self.ops[i][1]
        S, eb = self.shape, self.eb
        so, sl, sr = S[i], S[x], S[y]
        r = len(so)
        if r < 2 or len(sl) < 2 or len(sr) < 2:
            b = (padded(sl, PERMS[ll], eb[x]) * eb[x] + padded(sr, PERMS[lr], eb[y]) * eb[y]) / BW
            return vol(sl) * 2 / PEAK_F32, b, LAUNCH_HEAVY
        K = sl[-1]
        N = so[-1]
        flops = 2.0 * vol(so) * K
        peak = PEAK_BF16 if (eb[x] <= 2 and eb[y] <= 2) else PEAK_F32
        parts = [(sl, eb[x], PERMS[ll], len(sl) - 1, len(sl) - 2),
                 (sr, eb[y], PERMS[lr], len(sr) - 1, len(sr) - 2),
                 (so, eb[i], PERMS[lo], r - 1, r - 2)]
        return self._mxu(flops, peak, K, N, so, eb[i], PERMS[lo], parts)

    def reshape_cost(self, i, li, lo):
        x = self.ops[i][0]
        si, so = self.shape[x], self.shape[i]
        e = self.eb[i]
        mi, mo = PERMS[li], PERMS[lo]
        if len(si) == 0 or len(so) == 0:
            return 0.0, 0.0, 0.0
        li_s, si_s = minor_sizes(si, mi)
        lo_s, so_s = minor_sizes(so, mo)
        st = sub_tile(e)
        compat = li_s == lo_s and (si_s == so_s or (si_s % st == 0 and so_s % st == 0))
        rm = is_rowmajor(si, mi) and is_rowmajor(so, mo)
        if rm and compat:
            return 0.0, 0.0, 0.0
        bi = padded(si, mi, e) * e
        bo = padded(so, mo, e) * e
        if rm:
            return max(bi, bo) / e / VPU, (bi + bo) / BW, LAUNCH_COPY
        return max(bi, bo) / XLU_BW, 1.1 * (bi + bo) / BW, LAUNCH_COPY

    def transpose_out_bitcast(self, i, li):
        r = self.rank[i]
        p = [int(v) for v in self.nf[i, 31:31 + r]]
        if sorted(p) != list(range(r)):
            return PCODE[desc(r)]
        pinv = [0] * r
        for j, v in enumerate(p):
            pinv[v] = j
        mi = PERMS[li]
        return PCODE[tuple(pinv[d] for d in mi)]

    def transpose_cost(self, i, li, lo):
        x = self.ops[i][0]
        r = self.rank[i]
        p = [int(v) for v in self.nf[i, 31:31 + r]]
        if r == 0 or sorted(p) != list(range(r)):
            return 0.0, 0.0, 0.0
        mi, mo = PERMS[li], PERMS[lo]
        if all(p[mo[t]] == mi[t] for t in range(r)):
            return 0.0, 0.0, 0.0
        e = self.eb[i]
        bi = padded(self.shape[x], mi, e) * e
        bo = padded(self.shape[i], mo, e) * e
        if p[mo[0]] != mi[0]:
            comp = max(bi, bo) / XLU_BW
        else:
            comp = max(bi, bo) / e / VPU * 1.5
        return comp, (bi + bo) / BW, LAUNCH_COPY

    def ew_cost(self, i, L):
        s = self.shape[i]
        if L < 0:
            L = self.nat[i]
        P = padded(s, PERMS[L], self.eb[i])
        o = self.opc[i]
        if o == OP['all_reduce']:
            return P / VPU, P * self.eb[i] / ICI_BW, 4000.0
        w = 6.0 if o in TRANSC else (4.0 if o == OP['divide'] else 1.0)
        byt = self.eb[i]
        for j in self.ops[i]:
            if self.shape[j] == s and self.kind[j] != 'flex':
                byt += self.eb[j]
        return P * w / VPU, GAMMA_EW * P * byt / BW, 0.0

    def reduce_cost(self, i, L):
        x = self.ops[i][0]
        sx = self.shape[x]
        if len(sx) == 0:
            return 0.0, 0.0, 0.0
        if L < 0:
            L = self.nat[x]
        m = PERMS[L]
        nred = len(sx) - self.rank[i]
        red = set(int(v) for v in self.nf[i, 31:31 + max(nred, 0)])
        Px = padded(sx, m, self.eb[x])
        lane_red = m[0] in red
        sub_red = len(m) > 1 and m[1] in red
        comp = Px / VPU * (1.0 + 2.0 * lane_red + 0.5 * sub_red)
        po = padded(self.shape[i], desc(self.rank[i]), self.eb[i]) * self.eb[i]
        return comp, (Px * self.eb[x] + po) / BW, 600.0

    def rwin_cost(self, i, L):
        x = self.ops[i][0]
        sx = self.shape[x]
        if len(sx) == 0:
            return 0.0, 0.0, 0.0
        if L < 0:
            L = self.nat[x]
        m = PERMS[L]
        Px = padded(sx, m, self.eb[x])
        wsz = self.nf[i, 37:37 + len(sx)]
        wprod = max(1.0, self.nf[i, 44])
        lanefac = 2.0 if wsz[m[0]] > 1 else 1.0
        so = self.shape[i]
        Po = padded(so, desc(len(so)), self.eb[i])
        comp = (max(vol(so), vol(sx)) * wprod / VPU) * lanefac / 4.0 + Px / VPU
        return comp, (Px * self.eb[x] + Po * self.eb[i]) / BW, 800.0

    def read_cost(self, i, L):
        x = self.ops[i][0]
        sx, so = self.shape[x], self.shape[i]
        if len(sx) == 0:
            return 0.0, 0.0, 0.0
        if L < 0:
            L = self.nat[x]
        m = PERMS[L]
        Px = padded(sx, m, self.eb[x])
        Po = padded(so, desc(len(so)), self.eb[i]) if len(so) else 1.0
        o = self.opc[i]
        if o in (OP['slice'], OP['dynamic_slice'], OP['gather']):
            frac = min(1.0, vol(so) / max(vol(sx), 1.0))
            if len(so) == len(sx) and so[m[0]] < sx[m[0]]:
                frac = min(1.0, frac * sx[m[0]] / max(so[m[0]], 1))
        else:
            frac = 1.0
        return Po / VPU * 0.5, (Px * frac * self.eb[x] + Po * self.eb[i]) / BW, 500.0

    # ------------------------------------------------------------------ evaluation
    def resolve_slot(self, blocks, r, nat):
        """blocks: (c, 6) int; returns code array (c,) and all-minus-one mask."""
        c = blocks.shape[0]
        b = blocks[:, :r].astype(np.int64)
        allneg = (b < 0).all(1) if r > 0 else np.ones(c, bool)
        if r == 0:
            return np.zeros(c, np.int64), allneg
        key = np.zeros(c, np.int64)
        for j in range(r):
            key = key * 8 + (np.clip(b[:, j], -1, 6) + 1)
        u, first, inv = np.unique(key, return_index=True, return_inverse=True)
        natp = PERMS[nat]
        table = []
        for f in first:
            fixed = [int(v) for v in b[f] if v >= 0]
            if len(set(fixed)) != len(fixed) or any(v >= r for v in fixed):
                table.append(nat)
                continue
            full = tuple(fixed + [d for d in natp if d not in fixed])
            table.append(PCODE[full])
        return np.array(table, np.int64)[inv.reshape(-1)], allneg

    def runtime(self, ncf, return_parts=False):
        ncf = np.asarray(ncf)
        c = ncf.shape[0]
        blk = np.rint(ncf).astype(np.int64)
        n = self.n
        R, S, op = self.rank, self.shape, self.opc
        slot_code = []
        slot_neg = []
        for k, sl in enumerate(self.slots):
            codes, negs = [None] * 3, [None] * 3
            for s in range(3):
                if sl[s] is None:
                    continue
                r, nat, acc = sl[s]
                code, neg = self.resolve_slot(blk[:, k, 6 * s:6 * s + 6], r, nat)
                codes[s], negs[s] = code, neg
            slot_code.append(codes)
            slot_neg.append(negs)

        def simp(a):
            if np.ndim(a) == 0:
                return int(a)
            if (a == a[0]).all():
                return int(a[0])
            return a

        E = [None] * n
        in_eff = {}
        for i in range(n):
            og = self.org[i]
            if og[0] == 'fix':
                E[i] = og[1]
            elif og[0] == 'flex':
                E[i] = -1
            elif og[0] == 'same':
                E[i] = E[og[1]]
            else:
                k = og[1]
                sl = self.slots[k]
                out = slot_code[k][0]
                if sl[1] is not None and sl[1][2]:       # reshape / transpose: accept arriving
                    x = self.ops[i][0]
                    ex = E[x]
                    if np.ndim(ex) == 0 and ex < 0:
                        ex = self.nat[x]
                    elif np.ndim(ex) > 0:
                        ex = np.where(ex < 0, self.nat[x], ex)
                    inn = np.where(slot_neg[k][1], ex, slot_code[k][1])
                    in_eff[k] = simp(inn)
                elif sl[1] is not None:
                    in_eff[k] = simp(slot_code[k][1])
                if op[i] == OP['transpose'] and sl[0][2] and k in in_eff:
                    ie = in_eff[k]
                    bit = keyed([ie], c, lambda a, i=i: (self.transpose_out_bitcast(i, a),))[0]
                    out = np.where(slot_neg[k][0], bit, out)
                E[i] = simp(out)

        def eff(j):
            e = E[j]
            if np.ndim(e) == 0:
                return self.nat[j] if e < 0 else e
            return np.where(e < 0, self.nat[j], e)

        total = np.full(c, BASE_NS + PER_NODE_NS * n)
        cm = {}
        for i in range(n):
            o = op[i]
            k = self.kidx.get(i)
            res = None
            if o == OP['convolution'] and i in self.convinfo:
                ci = self.convinfo[i]
                if k is not None:
                    cols = [E[i], in_eff[k], simp(slot_code[k][2])]
                else:
                    cols = [ci['nat_o'], ci['nat_i'], ci['nat_k']]
                res = keyed(cols, c, lambda a, b, d, i=i: self.conv_cost(i, a, b, d))
            elif o == OP['dot'] and len(self.ops[i]) >= 2:
                x, y = self.ops[i][0], self.ops[i][1]
                if k is not None:
                    cols = [E[i], in_eff[k], eff(y)]
                else:
                    cols = [self.nat[i], PCODE[desc(R[x])], eff(y)]
                res = keyed(cols, c, lambda a, b, d, i=i: self.dot_cost(i, a, b, d))
            elif o in (OP['reshape'], OP['transpose']) and self.ops[i]:
                x = self.ops[i][0]
                if k is not None and k in in_eff:
                    cols = [in_eff[k], E[i]]
                else:
                    cols = [eff(x), self.nat[i]]
                f = self.reshape_cost if o == OP['reshape'] else self.transpose_cost
                res = keyed(cols, c, lambda a, b, i=i, f=f: f(i, a, b))
            elif o in EW_OPS and R[i] > 0:
                res = keyed([E[i]], c, lambda a, i=i: self.ew_cost(i, a))
            elif o == OP['reduce'] and self.ops[i]:
                res = keyed([eff(self.ops[i][0])], c, lambda a, i=i: self.reduce_cost(i, a))
            elif o in RWIN_OPS and self.ops[i]:
                res = keyed([eff(self.ops[i][0])], c, lambda a, i=i: self.rwin_cost(i, a))
            elif o in READ_OPS and self.ops[i]:
                res = keyed([eff(self.ops[i][0])], c, lambda a, i=i: self.read_cost(i, a))
            if res is None:
                continue
            cc, mm, ll = res
            cm[i] = (cc, mm)
            total += self.mult[i] * (np.maximum(cc, mm) + KAPPA * np.minimum(cc, mm) + ll)
        # ---- copies for layout demands, shared between sibling consumers
        for p, evs in self.demands.items():
            cols = [eff(p)]
            mult = 1.0
            for (cns, src) in evs:
                mult = max(mult, self.mult[cns])
                if src[0] == 'fix':
                    cols.append(src[1])
                elif src[0] == 'node':
                    cols.append(eff(src[1]))
                else:
                    k, s = src[1], src[2]
                    cols.append(in_eff[k] if s == 1 else simp(slot_code[k][s]))
            shp, e = S[p], self.eb[p]

            def fcopy(src, *ds, shp=shp, e=e):
                tot = 0.0
                for d in set(ds):
                    if d != src:
                        tot += copy_cost(shp, e, src, d)
                return (tot,)
            total += mult * keyed(cols, c, fcopy)[0]
        # ---- overlap between neighbouring independent kernels
        for a, b in self.pairs:
            if a in cm and b in cm:
                ca, ma = cm[a]
                cb, mb = cm[b]
                total -= self.mult[b] * OMEGA * np.minimum(np.maximum(0.0, ca - ma), mb)
        return np.broadcast_to(total, (c,)).astype(np.float64).copy()


# ============================================================================ layout graph sampler
def _pick(rng, xs, p=None):
    return xs[int(rng.choice(len(xs), p=p))]


def same_pad(k):
    return (k - 1) // 2, k // 2


class CNNGen:
    """ResNet / U-Net-like convolutional programs (2-D NHWC or 3-D NDHWC)."""

    def __init__(self, rng):
        self.sp = int(_pick(rng, [2, 2, 2, 3]))
        if self.sp == 2:
            self.N = int(_pick(rng, [1, 2, 4, 8, 16, 32, 64, 128]))
            self.H = int(_pick(rng, [28, 32, 56, 64, 112, 128, 224]))
        else:
            self.N = int(_pick(rng, [1, 2, 4, 8]))
            self.H = int(_pick(rng, [16, 24, 32, 48, 64, 96]))
        cap = 2 ** 19 if self.sp == 2 else 2 ** 18
        while self.N * self.H ** self.sp > cap:
            if self.N > 1 and (rng.random() < 0.5 or self.H <= 16):
                self.N //= 2
            else:
                self.H //= 2
        self.C0 = int(_pick(rng, [1, 3, 4]))
        self.adt = T_BF16 if rng.random() < 0.5 else T_F32
        self.train = rng.random() < 0.65
        self.bn_train = self.train and rng.random() < 0.8
        self.base = int(_pick(rng, [16, 32, 64]))
        self.grow = int(_pick(rng, [2, 3, 4]))
        self.allreduce = self.train and rng.random() < 0.5
        self.res_p = rng.random() * 0.6
        self.pool_p = rng.random() * 0.25
        self.k1_p = rng.random() * 0.4
        self.classes = int(_pick(rng, [10, 100, 1000]))
        self.extra_reshape_p = rng.random() * 0.3
        self.name = ('unet3d' if self.sp == 3 else _pick(rng, ['resnet', 'resnet_v2', 'vgg',
                                                              'efficientnet', 'mobilenet',
                                                              'inception', 'retinanet',
                                                              'mask_rcnn', 'alexnet']))

    def build(self, seed, L):
        rng = np.random.default_rng(seed)
        g = Graph()
        main = g.comp('main')
        m = Em(g, main)
        sp, N = self.sp, self.N
        adt = self.adt
        x = m.param([N] + [self.H] * sp + [self.C0], T_F32)
        if adt != T_F32:
            x = m.convert(x, adt)
        labels = m.param([N, self.classes], T_F32)
        cur, C, Hc = x, self.C0, self.H
        layers = []
        outputs = []
        for li in range(L):
            F = min(512, self.base * (2 ** (li // self.grow)))
            k = 7 if (li == 0 and rng.random() < 0.5) else (1 if rng.random() < self.k1_p else 3)
            stride = 2 if (Hc >= 8 and (li == 0 or rng.random() < 0.2)) else 1
            w = m.param([k] * sp + [C, F], T_F32)
            wd = m.convert(w, adt) if adt != T_F32 else w
            Ho = -(-Hc // stride)
            lo, hi = same_pad(k)
            win = win_dims([k] * sp, [stride] * sp, [lo] * sp, [hi] * sp)
            dn = dict(ib=0, **{'if': sp + 1}, isp=list(range(1, sp + 1)), ki=sp, ko=sp + 1,
                      ksp=list(range(sp)), ob=0, of=sp + 1)
            dn['if'] = sp + 1
            oshape = [N] + [Ho] * sp + [F]
            y = m.add(OP['convolution'], oshape, adt, [cur, wd], window=win, conv=_cd(dn),
                      fgc=1, bgc=1)
            red = list(range(sp + 1))
            if self.bn_train:
                cnt = m.sbcast((F,), adt)
                mean = m.ew(OP['multiply'], m.reduce(y, red), cnt)
                d = m.ew(OP['subtract'], y, m.bcast(mean, oshape, (sp + 1,)))
                var = m.ew(OP['multiply'], m.reduce(m.ew(OP['multiply'], d, d), red),
                           m.sbcast((F,), adt))
                rs = m.ew(OP['rsqrt'], m.ew(OP['add'], var, m.sbcast((F,), adt)))
                gam = m.param([F], adt)
                sc = m.ew(OP['multiply'], rs, gam)
                yb = m.ew(OP['multiply'], d, m.bcast(sc, oshape, (sp + 1,)))
            else:
                gam = m.param([F], adt)
                yb = m.ew(OP['multiply'], y, m.bcast(gam, oshape, (sp + 1,)))
            bet = m.param([F], adt)
            yb = m.ew(OP['add'], yb, m.bcast(bet, oshape, (sp + 1,)))
            pre_relu = yb
            yr = m.ew(OP['maximum'], yb, m.sbcast(oshape, adt))
            if m.sh(cur) == tuple(oshape) and rng.random() < self.res_p:
                yr = m.ew(OP['add'], yr, cur)
            post = yr
            pooled = None
            if Ho >= 8 and rng.random() < self.pool_p:
                Hp = -(-Ho // 2)
                pwin = win_dims([1] + [3] * sp + [1], [1] + [2] * sp + [1],
                                [0] + [1] * sp + [0], [0] + [1] * sp + [0])
                r = g.reducer(adt, OP['maximum'])
                post = m.add(OP['reduce_window'], [N] + [Hp] * sp + [F], adt,
                             [yr, m.const(adt), r], window=pwin)
                pooled = (yr, pwin)
                Ho = Hp
            if rng.random() < self.extra_reshape_p and sp == 2:
                # space-to-depth style reshape round trip (common in TPU input pipelines)
                s = m.sh(post)
                if s[2] % 2 == 0:
                    r1 = m.reshape(post, [s[0], s[1], s[2] // 2, 2 * s[3]])
                    post = m.reshape(m.ew(OP['multiply'], r1, m.sbcast(m.sh(r1), adt)), s)
            layers.append(dict(x=cur, w=w, wd=wd, y=y, pre=pre_relu, act=yr, post=post,
                               pooled=pooled, k=k, stride=stride, C=C, F=F, Hin=Hc, Ho=-(-Hc // stride),
                               gam=gam))
            cur, C, Hc = post, F, Ho
        # ---- head
        s = m.sh(cur)
        feat = m.reduce(cur, list(range(1, sp + 1)))
        feat = m.ew(OP['multiply'], feat, m.sbcast((N, C), adt))
        if adt != T_F32:
            feat = m.convert(feat, T_F32)
        if rng.random() < 0.4:
            flat = m.reshape(feat, [N, 1, C])
            feat = m.reshape(flat, [N, C])
        wfc = m.param([C, self.classes], T_F32)
        logits = m.dot(feat, wfc)
        bfc = m.param([self.classes], T_F32)
        logits = m.ew(OP['add'], logits, m.bcast(bfc, (N, self.classes), (1,)))
        mx = m.reduce(logits, [1], OP['maximum'])
        sh_ = m.ew(OP['subtract'], logits, m.bcast(mx, (N, self.classes), (0,)))
        ex = m.ew(OP['exponential'], sh_)
        se = m.reduce(ex, [1])
        lse = m.ew(OP['log'], se)
        nll = m.ew(OP['multiply'], m.ew(OP['subtract'], sh_, m.bcast(lse, (N, self.classes), (0,))),
                   labels)
        loss = m.reduce(nll, [0, 1])
        outputs.append(loss)
        if self.train:
            prob = m.ew(OP['divide'], ex, m.bcast(se, (N, self.classes), (0,)))
            dlog = m.ew(OP['subtract'], prob, labels)
            dwfc = m.dot(m.transpose(feat, [1, 0]), dlog)
            dfeat = m.dot(dlog, m.transpose(wfc, [1, 0]))
            outputs.append(m.ew(OP['subtract'], wfc,
                                m.ew(OP['multiply'], dwfc, m.sbcast((C, self.classes), T_F32))))
            if adt != T_F32:
                dfeat = m.convert(dfeat, adt)
            dy = m.bcast(dfeat, s, (0, sp + 1))
            for li in range(len(layers) - 1, -1, -1):
                Ly = layers[li]
                if Ly['pooled'] is not None:
                    act, pwin = Ly['pooled']
                    sel = g.comp('reducer')
                    q0 = g.add(sel, OP['parameter'], (), adt, pnum=0)
                    q1 = g.add(sel, OP['parameter'], (), adt, pnum=1)
                    g.comps[sel]['root'] = g.add(sel, OP['compare'], (), T_PRED, [q0, q1])
                    sct = g.reducer(adt)
                    dy = m.add(OP['select_and_scatter'], m.sh(act), adt,
                               [act, dy, m.const(adt), g.comps[sel]['root'], sct], window=pwin)
                ys = m.sh(Ly['act'])
                mask = m.ew(OP['compare'], Ly['pre'], m.sbcast(ys, adt), dt=T_PRED)
                dy = m.ew(OP['select'], mask, dy, m.sbcast(ys, adt), dt=adt)
                dy = m.ew(OP['multiply'], dy, m.bcast(Ly['gam'], ys, (sp + 1,)))
                k, st, Cc, F = Ly['k'], Ly['stride'], Ly['C'], Ly['F']
                Hin, Ho = Ly['Hin'], Ly['Ho']
                lo, hi = same_pad(k)
                # kernel gradient: contract over batch and output spatial positions
                kwin = win_dims([Ho] * sp, [1] * sp, [lo] * sp, [max(0, hi)] * sp,
                                wdil=[st] * sp)
                kdn = dict(ib=sp + 1, isp=list(range(1, sp + 1)), ki=0, ko=sp + 1,
                           ksp=list(range(1, sp + 1)), ob=sp, of=sp + 1)
                kdn['if'] = 0
                dw = m.add(OP['convolution'], [k] * sp + [Cc, F], adt, [Ly['x'], dy],
                           window=kwin, conv=_cd(kdn), fgc=1, bgc=1)
                if adt != T_F32:
                    dw = m.convert(dw, T_F32)
                if self.allreduce:
                    dw = m.add(OP['all_reduce'], m.sh(dw), T_F32, [dw, g.reducer(T_F32)])
                outputs.append(m.ew(OP['subtract'], Ly['w'],
                                    m.ew(OP['multiply'], dw, m.sbcast(m.sh(dw), T_F32))))
                if li > 0:
                    iwin = win_dims([k] * sp, [1] * sp, [k - 1 - lo] * sp, [k - 1 - hi + st - 1] * sp,
                                    bdil=[st] * sp, rev=[1] * sp)
                    idn = dict(ib=0, isp=list(range(1, sp + 1)), ki=sp + 1, ko=sp,
                               ksp=list(range(sp)), ob=0, of=sp + 1)
                    idn['if'] = sp + 1
                    dy = m.add(OP['convolution'], m.sh(Ly['x']), adt, [dy, Ly['wd']],
                               window=iwin, conv=_cd(idn), fgc=1, bgc=1)
        root = m.tuple_(outputs)
        g.comps[main]['root'] = root
        return g, main, []


def _cd(dn):
    return dict(ib=dn['ib'], isp=dn['isp'], ki=dn['ki'], ko=dn['ko'], ksp=dn['ksp'], ob=dn['ob'],
                of=dn['of'], **{'if': dn['if']}) if False else {
        'ib': dn['ib'], 'if': dn['if'], 'isp': dn['isp'], 'ki': dn['ki'], 'ko': dn['ko'],
        'ksp': dn['ksp'], 'ob': dn['ob'], 'of': dn['of']}


class TransformerGen:
    """BERT / T5 / GPT-like programs; optional scan over layers in a while loop.
    lite=True builds smaller blocks (attention-only / FFN-only, no layer norm) for tiny graphs."""

    def __init__(self, rng, lite=False):
        self.lite = lite
        self.B = int(_pick(rng, [1, 2, 4, 8, 16, 32]))
        self.S = int(_pick(rng, [32, 64, 128, 256, 384, 512]))
        self.D = int(_pick(rng, [64, 128, 256, 384, 512, 768, 1024]))
        hs = [h for h in [1, 2, 4, 8, 12, 16] if self.D % h == 0 and self.D // h >= 16]
        self.Hh = int(_pick(rng, hs))
        while self.B * self.S > 8192:
            self.B //= 2
        self.F = self.D * int(_pick(rng, [2, 4]))
        self.V = int(_pick(rng, [1000, 8000, 30522, 32000]))
        self.dt = T_BF16 if rng.random() < 0.6 else T_F32
        self.train = rng.random() < (0.25 if lite else 0.5)
        self.use_while = rng.random() < 0.35
        self.lm_head = rng.random() < (0.2 if lite else 0.5)
        self.mask = rng.random() < 0.5
        self.kinds_seed = int(rng.integers(2 ** 31))
        self.name = _pick(rng, ['bert', 'albert', 'electra', 't5', 'gpt2', 'roberta', 'xlnet',
                                'funnel', 'mpnet', 'bart'])

    def block_kind(self, rng):
        if not self.lite:
            return 'full'
        return 'attn' if rng.random() < 0.5 else 'ffn'

    def dense(self, m, inp, w, b, n_out):
        y = m.dot(inp, w)
        return m.ew(OP['add'], y, m.bcast(b, (m.sh(inp)[0], n_out), (1,)))

    def attention(self, m, x, W):
        B, S, D, H, dt = self.B, self.S, self.D, self.Hh, self.dt
        Dh = D // H
        x2 = m.reshape(x, [B * S, D])
        q = self.dense(m, x2, W['q'], W['bq'], D)
        k = self.dense(m, x2, W['k'], W['bk'], D)
        v = self.dense(m, x2, W['v'], W['bv'], D)
        q = m.transpose(m.reshape(q, [B, S, H, Dh]), [0, 2, 1, 3])
        k = m.transpose(m.reshape(k, [B, S, H, Dh]), [0, 2, 3, 1])
        v = m.transpose(m.reshape(v, [B, S, H, Dh]), [0, 2, 1, 3])
        s = m.dot(q, k)
        ss = (B, H, S, S)
        s = m.ew(OP['multiply'], s, m.sbcast(ss, dt))
        if self.mask and W.get('mask') is not None:
            s = m.ew(OP['add'], s, m.bcast(W['mask'], ss, (0, 3)))
        mx = m.reduce(s, [3], OP['maximum'])
        s = m.ew(OP['subtract'], s, m.bcast(mx, ss, (0, 1, 2)))
        e = m.ew(OP['exponential'], s)
        se = m.reduce(e, [3])
        p = m.ew(OP['divide'], e, m.bcast(se, ss, (0, 1, 2)))
        ctx = m.dot(p, v)
        ctx = m.reshape(m.transpose(ctx, [0, 2, 1, 3]), [B * S, D])
        o = self.dense(m, ctx, W['o'], W['bo'], D)
        x = m.ew(OP['add'], x, m.reshape(o, [B, S, D]))
        return x if self.lite else self.layernorm(m, x)

    def ffn(self, m, x, W):
        B, S, D, F, dt = self.B, self.S, self.D, self.F, self.dt
        h = self.dense(m, m.reshape(x, [B * S, D]), W['w1'], W['b1'], F)
        hs = (B * S, F)
        h3 = m.ew(OP['multiply'], h, m.ew(OP['multiply'], h, h))
        t = m.ew(OP['tanh'], m.ew(OP['multiply'],
                                  m.ew(OP['add'], h, m.ew(OP['multiply'], h3, m.sbcast(hs, dt))),
                                  m.sbcast(hs, dt)))
        gl = m.ew(OP['multiply'], m.ew(OP['multiply'], h, m.sbcast(hs, dt)),
                  m.ew(OP['add'], t, m.sbcast(hs, dt)))
        o2 = self.dense(m, gl, W['w2'], W['b2'], D)
        y = m.ew(OP['add'], x, m.reshape(o2, [B, S, D]))
        return (y if self.lite else self.layernorm(m, y)), gl

    def layer(self, m, x, W, kind):
        info = None
        if kind in ('full', 'attn'):
            x = self.attention(m, x, W)
        if kind in ('full', 'ffn'):
            xin = x
            x, gl = self.ffn(m, x, W)
            info = (W, gl, xin)
        return x, info

    def layernorm(self, m, x):
        s = m.sh(x)
        mean = m.ew(OP['multiply'], m.reduce(x, [2]), m.sbcast(s[:2], self.dt))
        d = m.ew(OP['subtract'], x, m.bcast(mean, s, (0, 1)))
        var = m.ew(OP['multiply'], m.reduce(m.ew(OP['multiply'], d, d), [2]), m.sbcast(s[:2], self.dt))
        rs = m.ew(OP['rsqrt'], m.ew(OP['add'], var, m.sbcast(s[:2], self.dt)))
        return m.ew(OP['multiply'], d, m.bcast(rs, s, (0, 1)))

    def wspecs(self, kind):
        D, F = self.D, self.F
        mats, biases = [], []
        if kind in ('full', 'attn'):
            mats += [('q', (D, D)), ('k', (D, D)), ('v', (D, D)), ('o', (D, D))]
            biases += [('bq', D), ('bk', D), ('bv', D), ('bo', D)]
        if kind in ('full', 'ffn'):
            mats += [('w1', (D, F)), ('w2', (F, D))]
            biases += [('b1', F), ('b2', D)]
        return mats, biases

    def weights(self, m, kind):
        mats, biases = self.wspecs(kind)
        W = {}
        for nm, shp in mats:
            W[nm] = m.param(shp, self.dt)
        for nm, n_ in biases:
            W[nm] = m.param((n_,), self.dt)
        return W

    def build(self, seed, L):
        rng = np.random.default_rng(seed)
        krng = np.random.default_rng(self.kinds_seed)
        g = Graph()
        main = g.comp('main')
        m = Em(g, main)
        B, S, D, dt = self.B, self.S, self.D, self.dt
        ids = m.param([B, S], T_S32)
        table = m.param([self.V, D], dt)
        x = m.add(OP['gather'], [B, S, D], dt, [table, ids])
        pos = m.param([S, D], dt)
        x = m.ew(OP['add'], x, m.bcast(pos, (B, S, D), (1, 2)))
        if not self.lite:
            x = self.layernorm(m, x)
        mask = m.param([B, S], dt) if self.mask else None
        outputs = []
        whiles = []
        grads_from = []
        if self.use_while:
            kind = self.block_kind(krng)
            body = g.comp('body')
            cond = g.comp('cond')
            mats, biases = self.wspecs(kind)
            stk = {nm: m.param((L,) + shp, dt) for nm, shp in mats}
            bias = {nm: m.param((n_,), dt) for nm, n_ in biases}
            items = [m.const(T_S32), x] + [stk[nm] for nm, _ in mats] + [bias[b] for b, _ in biases]
            if mask is not None:
                items.append(mask)
            init = m.tuple_(items)
            bm = Em(g, body)
            bp = bm.add(OP['parameter'], (), T_TUPLE, pnum=0, tuple_size=len(items))
            gt = [bm.gte(bp, g.N[it]['shape'], g.N[it]['dt']) for it in items]
            ctr, bx = gt[0], gt[1]
            W = {}
            for j, (nm, shp) in enumerate(mats):
                z1, z2 = bm.const(T_S32), bm.const(T_S32)
                ds = bm.add(OP['dynamic_slice'], (1,) + shp, dt, [gt[2 + j], ctr, z1, z2],
                            dsizes=[1] + list(shp))
                W[nm] = bm.reshape(ds, list(shp))
            for j, (b, _) in enumerate(biases):
                W[b] = gt[2 + len(mats) + j]
            W['mask'] = gt[-1] if mask is not None else None
            nx, _ = self.layer(bm, bx, W, kind)
            c1 = bm.ew(OP['add'], ctr, bm.const(T_S32))
            broot = bm.tuple_([c1, nx] + gt[2:])
            g.comps[body]['root'] = broot
            cm_ = Em(g, cond)
            cp = cm_.add(OP['parameter'], (), T_TUPLE, pnum=0, tuple_size=len(items))
            cc = cm_.gte(cp, (), T_S32)
            croot = cm_.add(OP['compare'], (), T_PRED, [cc, cm_.const(T_S32)])
            g.comps[cond]['root'] = croot
            wh = m.add(OP['while_'], (), T_TUPLE, [broot, croot, init], tuple_size=len(items))
            x = m.gte(wh, (B, S, D), dt)
            whiles.append((body, cond))
        else:
            for li in range(L):
                kind = self.block_kind(krng)
                W = self.weights(m, kind)
                W['mask'] = mask
                x, info = self.layer(m, x, W, kind)
                if info is not None:
                    grads_from.append(info)
        # ---- head
        if self.lm_head:
            x2 = m.reshape(x, [B * S, D])
            logits = m.dot(x2, m.transpose(table, [1, 0]))
            ls = (B * S, self.V)
        else:
            cls = m.add(OP['slice'], [B, 1, D], dt, [x], slice=[(0, 1, B), (0, 1, 1), (0, 1, D)])
            x2 = m.reshape(cls, [B, D])
            wc = m.param([D, 16], dt)
            logits = m.dot(x2, wc)
            ls = (B, 16)
        mx = m.reduce(logits, [1], OP['maximum'])
        shl = m.ew(OP['subtract'], logits, m.bcast(mx, ls, (0,)))
        ex = m.ew(OP['exponential'], shl)
        se = m.reduce(ex, [1])
        loss = m.reduce(m.ew(OP['log'], se), [0])
        outputs.append(loss)
        if self.train and grads_from:
            dlog = m.ew(OP['divide'], ex, m.bcast(se, ls, (0,)))
            if self.lm_head:
                dx2 = m.dot(dlog, table)
            else:
                dx = m.dot(dlog, m.transpose(wc, [1, 0]))
                dx2 = m.reshape(m.bcast(dx, (B, S, D), (0, 2)), [B * S, D])
            for (W, gl, xin) in reversed(grads_from):
                dW2 = m.dot(m.transpose(gl, [1, 0]), dx2)
                outputs.append(m.ew(OP['subtract'], W['w2'], m.ew(OP['multiply'], dW2,
                                                                  m.sbcast(m.sh(dW2), dt))))
                dgl = m.dot(dx2, m.transpose(W['w2'], [1, 0]))
                x_in2 = m.reshape(xin, [B * S, D])
                dW1 = m.dot(m.transpose(x_in2, [1, 0]), dgl)
                outputs.append(m.ew(OP['subtract'], W['w1'], m.ew(OP['multiply'], dW1,
                                                                  m.sbcast(m.sh(dW1), dt))))
                dx2 = m.ew(OP['add'], dx2, m.dot(dgl, m.transpose(W['w1'], [1, 0])))
            outputs.append(m.reshape(dx2, [B, S, D]))
        root = m.tuple_(outputs)
        g.comps[main]['root'] = root
        return g, main, whiles


CFG_OPS = (OP['convolution'], OP['dot'], OP['reshape'], OP['transpose'])


def order_layout(g, main, whiles):
    order = [c for c, cp in enumerate(g.comps) if cp['kind'] == 'reducer']
    cuts = []
    for body, cond in whiles:
        order.append(body)
        cuts.append(sum(len(g.comps[c]['nodes']) for c in order))
        order.append(cond)
        cuts.append(sum(len(g.comps[c]['nodes']) for c in order))
    order.append(main)
    return order, cuts


def sample_layout_graph(rng, source, nrange, ncrange):
    for attempt in range(60):
        lite = nrange[1] < 400
        gen = CNNGen(rng) if source == 'xla' else TransformerGen(rng, lite)
        if source == 'xla' and rng.random() < 0.12:
            gen = TransformerGen(rng, lite)
            gen.name = _pick(rng, ['transformer', 'wmt', 'mlperf_bert', 'ncf', 'dlrm'])
        seed = int(rng.integers(2 ** 62))
        tgt = int(rng.integers(nrange[0], nrange[1] + 1))

        def size(L):
            g, _, _ = gen.build(seed, L)
            return len(g.N)
        n1 = size(1)
        if n1 > nrange[1]:
            continue
        n2 = size(2)
        slope = max(1, n2 - n1)
        L = max(1, int(round(1 + (tgt - n1) / slope)))
        got = None
        for _ in range(8):
            n = size(L)
            if n > nrange[1]:
                L -= 1
                if L < 1:
                    break
            elif n < nrange[0]:
                L += 1
            else:
                got = L
                break
        if got is None:
            continue
        g, main, whiles = gen.build(seed, got)
        cand = [i for i, nd in enumerate(g.N) if nd['op'] in CFG_OPS and len(nd['shape']) > 0
                and g.comps[nd['comp']]['kind'] in ('main', 'body')]
        if len(cand) < ncrange[0]:
            continue
        nc = int(rng.integers(ncrange[0], ncrange[1] + 1))
        nc = min(nc, len(cand))
        w = np.array([3.0 if g.N[i]['op'] in (OP['convolution'], OP['dot']) else 1.0 for i in cand])
        chosen = rng.choice(len(cand), size=nc, replace=False, p=w / w.sum())
        chosen_nodes = set(cand[j] for j in chosen)
        order, cuts = order_layout(g, main, whiles)
        nf, opc, ei, newid = finalize(g, order)
        cfg = np.array(sorted(newid[i] for i in chosen_nodes), np.int64)
        splits = np.array([[0] + cuts + [len(opc)]], np.int64)
        return dict(node_feat=nf, node_opcode=opc, edge_index=ei, node_config_ids=cfg,
                    node_splits=splits), gen
    raise RuntimeError('could not sample a layout graph')


# ============================================================================ layout config samplers
def slot_pool(rng, r, nat):
    if r == 0:
        return [()]
    if r == 1:
        return [(), (0,)]
    natp = PERMS[nat]
    if r == 2:
        return [(), (natp[0], natp[1]), (natp[1], natp[0])]
    pool = [natp[:2], (natp[1], natp[0])]
    for d in range(r):
        if d not in natp[:2]:
            pool.append((natp[0], d))
    for d in range(r):
        if d != natp[0]:
            pool.append((d, natp[0]))
    pool.append(desc(r)[:2])
    for _ in range(2):
        pool.append(tuple(int(v) for v in rng.permutation(r)))
    out = [()]
    for p in pool:
        if p not in out:
            out.append(p)
    return out


def options_table(opts):
    t = -np.ones((len(opts), 6), np.int64)
    for j, o in enumerate(opts):
        t[j, :len(o)] = o
    return t


def build_ncf(tables, idx):
    """tables[k][s]: (m,6) arrays or None; idx: (c, nc, 3) option indices."""
    c, nc = idx.shape[0], idx.shape[1]
    ncf = -np.ones((c, nc, 18), np.float32)
    for k in range(nc):
        for s in range(3):
            t = tables[k][s]
            if t is None:
                continue
            ncf[:, k, 6 * s:6 * s + 6] = t[idx[:, k, s]]
    return ncf


def make_slot_options(rng, law, search):
    tables, weights = [], []
    for k, sl in enumerate(law.slots):
        tk, wk = [None] * 3, [None] * 3
        for s in range(3):
            if sl[s] is None:
                continue
            r, nat, acc = sl[s]
            pool = slot_pool(rng, r, nat)
            if len(pool) == 1:
                opts = pool
                w = np.array([1.0])
            elif search == 'random':
                m = int(rng.integers(1, min(4, len(pool) - 1) + 1))
                pick = rng.choice(np.arange(1, len(pool)), size=m, replace=False)
                opts = [()] + [pool[j] for j in sorted(pick)]
                w = np.ones(len(opts))
                w[0] = 0.0 if rng.random() < 0.5 else 1.0
                if w.sum() == 0:
                    w[0] = 1.0
            else:
                # compiler-style search: natural spelled out, plus plausible neighbours
                natp = PERMS[nat]
                alts = [q for q in pool[2:] if q[0] == natp[0] or q == (natp[1], natp[0])
                        or rng.random() < 0.15] if len(pool) > 2 else []
                m = int(rng.integers(1, min(3, max(1, len(alts))) + 1)) if alts else 0
                pick = list(rng.choice(len(alts), size=min(m, len(alts)), replace=False)) if alts else []
                opts = [(), pool[1]] + [alts[j] for j in sorted(pick)]
                w = np.ones(len(opts))
            tk[s] = options_table(opts)
            wk[s] = w / w.sum()
        tables.append(tk)
        weights.append(wk)
    return tables, weights


def sample_random_configs(rng, law, c):
    tables, weights = make_slot_options(rng, law, 'random')
    nc = len(law.slots)
    idx = np.zeros((c, nc, 3), np.int64)
    for k in range(nc):
        for s in range(3):
            if tables[k][s] is None:
                continue
            w = weights[k][s]
            idx[:, k, s] = rng.choice(len(w), size=c, p=w)
        alldef = rng.random(c) < 0.07
        idx[alldef, k, :] = 0
    return build_ncf(tables, idx)


def sample_default_configs(rng, law, c):
    """Local search around the compiler default, guided by the law's own (noise-free) runtime,
    recording every configuration it measures."""
    tables, _ = make_slot_options(rng, law, 'default')
    nc = len(law.slots)
    mutable = [(k, s) for k in range(nc) for s in range(3)
               if tables[k][s] is not None and len(tables[k][s]) > 1]
    base = np.zeros((nc, 3), np.int64)
    # the compiler sometimes spells the default out explicitly
    for (k, s) in mutable:
        if rng.random() < 0.3:
            base[k, s] = 1
    pop = [base]
    rts = list(law.runtime(build_ncf(tables, base[None]))[:1])
    while len(pop) < c:
        nb = min(c - len(pop), max(16, c // 8))
        order = np.argsort(rts, kind='stable')
        top = max(3, len(pop) // 10)
        batch = []
        for _ in range(nb):
            if rng.random() < 0.75:
                par = pop[order[int(rng.integers(0, min(top, len(pop))))]]
            else:
                par = pop[int(rng.integers(0, len(pop)))]
            ch = par.copy()
            if rng.random() < 0.12 or not mutable:
                batch.append(ch)
                continue
            nm = 1 + int(rng.geometric(0.55)) - 1
            for _m in range(max(1, nm)):
                k, s = mutable[int(rng.integers(0, len(mutable)))]
                m = len(tables[k][s])
                if rng.random() < 0.3:
                    ch[k, s] = int(rng.integers(0, 2))
                else:
                    ch[k, s] = int(rng.integers(0, m))
            batch.append(ch)
        bi = np.stack(batch)
        rts.extend(law.runtime(build_ncf(tables, bi)).tolist())
        pop.extend(batch)
    idx = np.stack(pop[:c])
    perm = rng.permutation(c)
    return build_ncf(tables, idx[perm])


# ============================================================================ tile graph sampler
def gen_tile_graph(rng, nlo, nhi):
    """A fused kernel: reducer computations, optional inner fusions, the fused computation,
    then the outer wrapper (parameters + the fusion instruction)."""
    kind = _pick(rng, ['conv', 'dot', 'loop', 'reduce'], p=[0.3, 0.2, 0.25, 0.25])
    tgt_n = int(rng.integers(nlo, nhi + 1))
    g = Graph()
    inner_comps = []
    fused = g.comp('fused')
    m = Em(g, fused)
    lay = {}
    dt = T_BF16 if rng.random() < 0.45 else T_F32
    fparams = []

    def P(shape, d, mtm=None):
        x = m.param(shape, d)
        fparams.append(x)
        if mtm is not None:
            lay[x] = mtm
        return x

    def maybe_inner(x):
        # an inner fusion (e.g. a convert) feeding the fused computation
        if rng.random() < 0.3:
            ic = g.comp('inner')
            im = Em(g, ic)
            ip = im.param(m.sh(x), m.dt(x))
            ir = im.add(OP['bitcast'] if rng.random() < 0.5 else OP['convert'], m.sh(x), m.dt(x), [ip])
            g.comps[ic]['root'] = ir
            inner_comps.append(ic)
            if x in lay:
                lay[ip] = lay[x]
                lay[ir] = lay[x]
            fx = m.add(OP['fusion'], m.sh(x), m.dt(x), [ir, x])
            if x in lay:
                lay[fx] = lay[x]
            return fx
        return x

    outs = []
    if kind == 'conv':
        N = int(_pick(rng, [1, 2, 4, 8, 16, 32, 64, 128]))
        H = int(_pick(rng, [7, 14, 17, 28, 35, 56, 112]))
        C = int(_pick(rng, [3, 16, 32, 64, 96, 128, 192, 256, 384, 512]))
        F = int(_pick(rng, [16, 32, 64, 128, 192, 256, 384, 512, 1024]))
        k = int(_pick(rng, [1, 3, 3, 5, 7] if C < 64 else [1, 1, 3, 3]))
        st = 2 if (H >= 14 and rng.random() < 0.25) else 1
        amtm = (3, 0, 2, 1) if N >= 8 else (3, 2, 1, 0)
        x = maybe_inner(P([N, H, H, C], dt, amtm))
        w = maybe_inner(P([k, k, C, F], dt, (3, 2, 1, 0)))
        Ho = -(-H // st)
        lo, hi = same_pad(k)
        cdn = {'ib': 0, 'if': 3, 'isp': [1, 2], 'ki': 2, 'ko': 3, 'ksp': [0, 1], 'ob': 0, 'of': 3}
        oshape = (N, Ho, Ho, F)
        odt = T_F32 if rng.random() < 0.5 else dt
        y = m.add(OP['convolution'], oshape, odt, [x, w],
                  window=win_dims([k, k], [st, st], [lo, lo], [hi, hi]), conv=cdn, fgc=1, bgc=1)
        lay[y] = amtm
        cur = y
        feat_dim = 3
    elif kind == 'dot':
        batched = rng.random() < 0.35
        M = int(_pick(rng, [8, 32, 128, 256, 512, 1024, 2048, 4096]))
        K = int(_pick(rng, [64, 128, 256, 512, 768, 1024, 2048, 4096]))
        Nn = int(_pick(rng, [64, 128, 256, 512, 768, 1024, 3072, 4096]))
        if batched:
            Bb = int(_pick(rng, [2, 4, 8, 12, 16]))
            a = maybe_inner(P([Bb, M, K], dt))
            b = maybe_inner(P([Bb, K, Nn], dt))
            oshape = (Bb, M, Nn)
        else:
            a = maybe_inner(P([M, K], dt))
            b = maybe_inner(P([K, Nn], dt))
            oshape = (M, Nn)
        y = m.add(OP['dot'], oshape, dt, [a, b])
        cur = y
        feat_dim = len(oshape) - 1
    else:
        r = int(_pick(rng, [2, 3, 4]))
        if r == 2:
            shape = (int(_pick(rng, [256, 1024, 4096, 8192, 32768])), int(_pick(rng, [128, 256, 768, 1024, 4096])))
        elif r == 3:
            shape = (int(_pick(rng, [2, 8, 16, 32])), int(_pick(rng, [64, 128, 512, 1024])),
                     int(_pick(rng, [128, 256, 768, 1024])))
        else:
            shape = (int(_pick(rng, [8, 16, 32, 64])), int(_pick(rng, [7, 12, 14, 28, 56])),
                     int(_pick(rng, [7, 12, 14, 28, 56])), int(_pick(rng, [32, 64, 128, 256, 384])))
        shape = tuple(shape)
        mt = (3, 0, 2, 1) if (r == 4 and rng.random() < 0.5) else desc(r)
        x = maybe_inner(P(list(shape), dt, mt))
        lay[x] = mt
        if rng.random() < 0.35 and r >= 2:
            # an operand arriving transposed (different physical order)
            perm = list(range(r))
            perm[-1], perm[-2] = perm[-2], perm[-1]
            src_shape = [shape[p] for p in perm]
            xt = P(src_shape, dt, desc(r))
            tt = m.add(OP['transpose'], shape, dt, [xt], dims=tuple(perm))
            lay[tt] = mt
            x = m.ew(OP['add'], x, tt)
            lay[x] = mt
        cur = x
        feat_dim = r - 1
    # ---- epilogue chain to reach the node budget
    shp = m.sh(cur)
    cdt = m.dt(cur)
    base_lay = lay.get(cur, desc(len(shp)))

    def L(x):
        lay[x] = base_lay
        return x
    budget = tgt_n - len(g.N) - 4 - (6 if kind == 'reduce' else 0)
    chain_ops = [OP['add'], OP['multiply'], OP['maximum'], OP['subtract'], OP['exponential'],
                 OP['tanh'], OP['rsqrt'], OP['divide'], OP['convert'], OP['select'], OP['compare'],
                 OP['minimum'], OP['negate'], OP['log']]
    while budget > 0:
        o = _pick(rng, chain_ops)
        if o in (OP['add'], OP['multiply'], OP['maximum'], OP['subtract'], OP['divide'], OP['minimum']):
            u = rng.random()
            if u < 0.4:
                bvec = P([shp[feat_dim]], cdt, (0,))
                other = L(m.bcast(bvec, shp, (feat_dim,)))
                budget -= 2
            elif u < 0.6 and budget > 2:
                other = L(m.sbcast(shp, cdt))
                budget -= 2
            else:
                other = L(P(list(shp), cdt, base_lay))
                budget -= 1
            cur = L(m.ew(o, cur, other))
            budget -= 1
        elif o == OP['convert']:
            cdt = T_F32 if cdt == T_BF16 else T_BF16
            cur = L(m.convert(cur, cdt))
            budget -= 1
        elif o == OP['select']:
            z = L(m.sbcast(shp, cdt))
            cmp = L(m.ew(OP['compare'], cur, z, dt=T_PRED))
            cur = L(m.ew(OP['select'], cmp, cur, z, dt=cdt))
            budget -= 4
        elif o == OP['compare']:
            continue
        else:
            cur = L(m.ew(o, cur))
            budget -= 1
    if kind == 'reduce':
        r = len(shp)
        nred = int(rng.integers(1, r))
        if rng.random() < 0.5:
            dims = list(range(r - nred, r))
        else:
            dims = sorted(int(v) for v in rng.choice(r, size=nred, replace=False))
        red = m.reduce(cur, dims, OP['maximum'] if rng.random() < 0.3 else OP['add'])
        outs.append(red)
        if rng.random() < 0.4:
            sq = L(m.ew(OP['multiply'], cur, cur))
            outs.append(m.reduce(sq, dims))
    else:
        outs.append(cur)
        if rng.random() < 0.25 and kind in ('conv', 'dot'):
            outs.append(m.reduce(cur, [d for d in range(len(shp)) if d != feat_dim]))
    if len(outs) == 1:
        froot = outs[0]
    else:
        froot = m.tuple_(outs)
    g.comps[fused]['root'] = froot
    outer = g.comp('outer')
    om = Em(g, outer)
    ops = [froot]
    for p in fparams:
        q = om.param(g.N[p]['shape'], g.N[p]['dt'])
        if p in lay:
            lay[q] = lay[p]
        ops.append(q)
    fin = om.add(OP['fusion'], g.N[froot]['shape'], g.N[froot]['dt'], ops,
                 tuple_size=g.N[froot]['a'].get('tuple_size', 0))
    g.comps[outer]['root'] = fin
    for o in outs:
        if o not in lay:
            lay[o] = desc(len(g.N[o]['shape']))
    if fin not in lay and len(g.N[fin]['shape']):
        lay[fin] = lay.get(froot, desc(len(g.N[fin]['shape'])))
    order = [c for c, cp in enumerate(g.comps) if cp['kind'] == 'reducer'] + inner_comps + [fused, outer]

    def layout_of(nid):
        return lay.get(nid, desc(len(g.N[nid]['shape'])))
    nf, opc, ei, _ = finalize(g, order, layout_of)
    return dict(node_feat=nf, node_opcode=opc, edge_index=ei), kind


# ============================================================================ tile law
def opw_tile(o):
    if o in TRANSC:
        return 6.0
    if o == OP['divide']:
        return 4.0
    if o in (OP['broadcast'],):
        return 0.3
    if o in (OP['constant'], OP['iota']):
        return 0.2
    if o in (OP['reshape'], OP['bitcast'], OP['fusion'], OP['copy'], OP['dynamic_slice'],
             OP['tuple'], OP['gte']):
        return 0.5
    if o == OP['transpose']:
        return 1.5
    return 1.0


def units_for(r):
    if r == 1:
        return np.array([128.0])
    return np.array([1.0] * (r - 2) + [8.0, 128.0])


def get_mtm(nf_row, r):
    m = [int(v) for v in nf_row[134:134 + r]]
    if sorted(m) != list(range(r)):
        return desc(r)
    return tuple(m)


class TileLaw:
    def __init__(self, nf, opc, ei):
        nf = np.asarray(nf, np.float64)
        self.nf = nf
        self.opc = np.asarray(opc).astype(int)
        n = len(self.opc)
        self.rank, self.shape, self.eb, self.ops, self.cons = parse_graph(nf, opc, ei)
        R, S, op = self.rank, self.shape, self.opc
        cands = [i for i in range(n - 1) if op[i] != OP['parameter'] and R[i] >= 1]
        if not cands:
            cands = [i for i in range(n) if R[i] >= 1] or [n - 1]
        mx = [i for i in cands if op[i] in (OP['convolution'], OP['dot']) and len(self.ops[i]) >= 2]
        reds = [i for i in cands if op[i] == OP['reduce'] and self.ops[i] and R[self.ops[i][0]] >= 1]
        self.main = None
        if mx:
            self.mode = 'mxu'
            self.main = mx[0]
            tgt = self.main
        elif reds:
            self.mode = 'reduce'
            self.main = reds[0]
            tgt = self.ops[self.main][0]
        else:
            self.mode = 'loop'
            vols = [vol(S[i]) for i in cands]
            tgt = cands[int(np.argmax(vols))]
        self.tgt = tgt
        ts = S[tgt]
        r = max(1, len(ts))
        if len(ts) == 0:
            ts = (1,)
        self.r = r
        tm = get_mtm(nf[tgt], r)
        self.phys = list(reversed(tm))
        D = np.array([ts[d] for d in self.phys], float)
        self.units = units_for(r)
        st = sub_tile(self.eb[tgt])
        Dp = D.copy()
        Dp[-1] = _ceil(int(D[-1]), 128)
        if r >= 2:
            Dp[-2] = _ceil(int(D[-2]), st)
        self.D, self.Dp = D, Dp
        self.vol_t = float(np.prod(Dp))
        # ancestors of the MXU operands (their traffic is accounted as activation / kernel)
        anc = set()
        if self.mode == 'mxu':
            stack = list(self.ops[self.main][:2])
            while stack:
                v = stack.pop()
                if v in anc:
                    continue
                anc.add(v)
                stack.extend(self.ops[v])
        # VPU work per target element
        w = 0.0
        for i in cands:
            if i == self.main and self.mode == 'mxu':
                continue
            if i in anc:
                continue
            w += opw_tile(op[i]) * vol(S[i]) / max(vol(ts), 1.0)
        self.w_elem = w
        # inputs
        last = n - 1
        used = set()
        for i in range(n - 1):
            for o in self.ops[i]:
                used.add(o)
        self.stream, self.small = [], []
        for i in range(n - 1):
            if op[i] != OP['parameter'] or R[i] == 0 or i not in used or i in anc:
                continue
            v = vol(S[i])
            pm = get_mtm(nf[i], R[i])
            lp = S[i][pm[0]]
            if v >= 0.5 * vol(ts):
                pos = None
                if lp != D[-1]:
                    for j in range(r - 1, -1, -1):
                        if D[j] == lp:
                            pos = j
                            break
                self.stream.append((v / max(vol(ts), 1.0), self.eb[i], lp != D[-1], pos))
            else:
                self.small.append(v * self.eb[i])
        # outputs of the fused computation
        root = self.ops[last][0] if self.ops[last] else last
        outs = self.ops[root] if op[root] == OP['tuple'] else [root]
        self.out_total = sum(vol(S[o]) * self.eb[o] for o in outs if R[o] >= 1) or 4.0
        # mode specifics
        if self.mode == 'mxu':
            i = self.main
            x, wt = self.ops[i][0], self.ops[i][1]
            self.x, self.wt = x, wt
            if op[i] == OP['convolution']:
                f = nf[i]
                if_, ki, ko, of = int(f[94]), int(f[99]), int(f[100]), int(f[106])
                ksp = [int(v) for v in f[101:101 + max(R[wt] - 2, 0)]]
                self.fin = S[x][if_] if if_ < R[x] else 1
                self.K = self.fin * max(1.0, f[44])
                self.N = S[i][of] if of < R[i] else 1
                self.halo = 1.3 if f[44] > 1 else 1.0
                self.k_contract = [ki] + ksp
                self.k_n = ko
                self.o_n = of
            else:
                self.fin = S[x][-1]
                self.K = float(S[x][-1])
                self.N = S[i][-1]
                self.halo = 1.0
                self.k_contract = [R[wt] - 2]
                self.k_n = R[wt] - 1
                self.o_n = R[i] - 1
            km = get_mtm(nf[wt], R[wt])
            self.kphys = list(reversed(km))
            KD = np.array([S[wt][d] for d in self.kphys], float)
            self.KD = KD
            self.kunits = units_for(R[wt])
            self.kbytes = vol(S[wt]) * self.eb[wt]
            self.peak = PEAK_BF16 if (self.eb[x] <= 2 and self.eb[wt] <= 2) else PEAK_F32
            self.n_pos = self.phys.index(self.o_n) if self.o_n in self.phys else r - 1
            self.acc_eb = 4.0
        if self.mode == 'reduce':
            nred = R[self.tgt] - R[self.main]
            red = [int(v) for v in nf[self.main, 31:31 + max(nred, 0)]]
            self.red_pos = [self.phys.index(d) for d in red if d in self.phys]
        else:
            self.red_pos = []

    def tiles(self, cf):
        cf = np.asarray(cf, np.float64)
        b = cf[:, 8:8 + self.r]
        t = np.clip(b * self.units[None, :], 1.0, self.Dp[None, :])
        t = np.where(b <= 0, self.Dp[None, :], t)      # no bound given: whole dimension
        return t

    def run(self, cf, simplified=False):
        """Returns (runtime ns, working set bytes) per config."""
        cf = np.asarray(cf, np.float64)
        c = cf.shape[0]
        r = self.r
        t = self.tiles(cf)
        nsteps = np.ceil(self.Dp[None, :] / t)
        S = np.prod(nsteps, axis=1)
        Et = np.prod(t, axis=1)
        frac = Et / self.vol_t
        tgt_eb = self.eb[self.tgt]
        comp = Et * self.w_elem / VPU
        dma = np.zeros(c)
        ws = np.zeros(c)
        resident = float(sum(b for b in self.small if b <= 2 ** 20))
        ws += resident
        for (rel, e, lane_mis, pos) in self.stream:
            byt = Et * rel * e
            ws += byt
            if lane_mis and not simplified:
                if pos is not None:
                    eff = np.minimum(1.0, t[:, pos] / 128.0)
                else:
                    eff = 1.0
                dma += byt / eff
                comp += byt / XLU_BW
            else:
                dma += byt
        for b in self.small:
            if b > 2 ** 20:
                dma += b * frac
                ws += b * frac
        if self.mode == 'reduce':
            out_step = self.out_total / S
        else:
            out_step = self.out_total * frac
        dma += out_step
        ws += out_step
        if self.mode == 'mxu':
            kcf = cf[:, 0:len(self.kphys)]
            if np.all(kcf == 0):
                kt = np.broadcast_to(self.KD, (c, len(self.KD)))
            else:
                kt = np.clip(kcf * self.kunits[None, :], 1.0, np.maximum(self.KD, 1)[None, :] *
                             np.where(self.kunits > 1, self.kunits, 1)[None, :])
                kt = np.minimum(kt, np.maximum(self.KD[None, :], self.kunits[None, :]))
            Kt = np.ones(c)
            for d in self.k_contract:
                if d in self.kphys:
                    Kt = Kt * kt[:, self.kphys.index(d)]
            Kt = np.minimum(Kt, self.K)
            Ntk = kt[:, self.kphys.index(self.k_n)] if self.k_n in self.kphys else np.full(c, float(self.N))
            Nt = t[:, self.n_pos]
            Mt = Et / Nt
            n_k = np.ceil(self.K / Kt)
            n_n = np.ceil(Nt / np.maximum(Ntk, 1.0))
            eff = Kt / (Kt + 64.0)
            flops = 2.0 * Mt * Nt * self.K
            comp = comp + flops / (self.peak * eff) + n_k * n_n * 150.0
            ebx, ebw = self.eb[self.x], self.eb[self.wt]
            act = Mt * self.fin * ebx * self.halo * n_n
            dma += act
            ws += Mt * np.minimum(Kt, self.fin) * ebx * self.halo * 2 + Et * self.acc_eb
            if self.kbytes <= 4 * 2 ** 20:
                resident += self.kbytes
                ws += self.kbytes
            else:
                dma += self.K * Nt * ebw
                ws += Kt * np.minimum(Ntk, Nt) * ebw * 2
        if self.mode == 'reduce' and self.red_pos:
            split = np.zeros(c, bool)
            keep = np.ones(c)
            for j in range(r):
                if j in self.red_pos:
                    split |= nsteps[:, j] > 1
                else:
                    keep = keep * t[:, j]
            if not simplified:
                dma += np.where(split, 2.0 * keep * 4.0, 0.0)
            if (r - 1) in self.red_pos:
                comp += Et / VPU * 1.5
            if r >= 2 and (r - 2) in self.red_pos:
                comp += Et / VPU * 0.3
        dma_t = dma / BW
        dbl = 2.0 * ws <= VMEM
        single = ws <= VMEM
        step = np.where(dbl, np.maximum(dma_t, comp) + 0.2 * np.minimum(dma_t, comp) + STEP_OVH,
                        np.where(single, dma_t + comp + STEP_OVH,
                                 (dma_t + comp) * (1.0 + 2.0 * (ws / VMEM - 1.0)) + STEP_OVH))
        # two cores split the outermost non-reduced dim with >= 2 steps
        steps_core = S.copy()
        if not simplified:
            done = np.zeros(c, bool)
            for j in range(r):
                if j in self.red_pos:
                    continue
                sel = (~done) & (nsteps[:, j] >= 2)
                steps_core = np.where(sel, np.ceil(nsteps[:, j] / 2.0) * S / nsteps[:, j], steps_core)
                done |= sel
        else:
            steps_core = np.maximum(1.0, S / 2.0)
        total = TILE_LAUNCH + resident / BW + dma_t + steps_core * step + out_step / BW
        return total, ws


# ============================================================================ tile config sampler
_UNITS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048]


def unit_choices(Dj, unit):
    maxu = max(1, int(-(-int(Dj) // int(unit))))
    return sorted(set([v for v in _UNITS if v <= maxu] + [maxu]))


def tile_rows(T, ob, kb):
    """ob: (c, r) output bound units, kb: (c, rk) kernel bound units or None."""
    c = ob.shape[0]
    cf = np.zeros((c, 24), np.float32)
    r = ob.shape[1]
    cf[:, 8:8 + r] = ob
    cf[:, 14] = ob.sum(1)
    cf[:, 15] = np.prod(ob, axis=1)
    if kb is not None:
        rk = kb.shape[1]
        cf[:, 0:rk] = kb
        cf[:, 6] = kb.sum(1)
        cf[:, 7] = np.prod(kb, axis=1)
    return cf


def sample_tile_configs(rng, T, c_target):
    r = T.r
    och = [unit_choices(T.D[j], T.units[j]) for j in range(r)]
    kch = None
    if T.mode == 'mxu':
        kch = [unit_choices(T.KD[j], T.kunits[j]) for j in range(len(T.KD))]
    npool = max(400, 8 * c_target)

    def draw(chs, m):
        cols = []
        for ch in chs:
            # log-uniform over the allowed tile sizes, with extra mass on the full dimension
            pw = np.ones(len(ch))
            pw[-1] += 0.5
            cols.append(np.array(ch, float)[rng.choice(len(ch), size=m, p=pw / pw.sum())])
        return np.stack(cols, 1)
    ob = draw(och, npool)
    kb = draw(kch, npool) if kch is not None else None
    cf = tile_rows(T, ob, kb)
    cf = np.unique(cf, axis=0)
    cf = cf[rng.permutation(len(cf))]
    rt, ws = T.run(cf)
    ok = ws <= VMEM
    cf = cf[ok]
    if len(cf) == 0:
        return None, None
    # the compiler's own choice: best under its simplified analytical model
    srt, _ = T.run(cf, simplified=True)
    dflt = cf[int(np.argmin(srt))]
    cf = cf[:c_target]
    if rng.random() < 0.7 and not (cf == dflt).all(1).any():
        cf[int(rng.integers(0, len(cf)))] = dflt
    return cf, dflt


# ============================================================================ noise
def heavy_t(rng, df, size, clip=40.0):
    return np.clip(rng.standard_t(df, size=size), -clip, clip)


def layout_noise(rng, f):
    c = len(f)
    y = f * np.exp(0.002 * heavy_t(rng, 2.0, c))
    out = rng.random(c) < 0.02
    y = np.where(out, y * (1.0 + 0.05 * rng.pareto(1.5, size=c)), y)
    return np.maximum(1, np.rint(y)).astype(np.int64)


def tile_noise(rng, f, f_default):
    c = len(f)
    batch = np.arange(c) // 48
    nb = int(batch.max()) + 1
    mach = np.exp(rng.normal(0.0, 0.03, size=nb))
    y = f * mach[batch] * np.exp(0.015 * heavy_t(rng, 2.5, c))
    out = rng.random(c) < 0.03
    y = np.where(out, y * (1.0 + 0.1 * rng.pareto(1.3, size=c)), y)
    norm = f_default * mach * np.exp(0.015 * heavy_t(rng, 2.5, nb))
    return (np.maximum(1, np.rint(y)).astype(np.int64),
            np.maximum(1, np.rint(norm[batch])).astype(np.int64))


# ============================================================================ dataset writer
SIZES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  layout=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120),
                  lay_cfg=(300, 3000), lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 layout=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20),
                 lay_cfg=(30, 200), lay_test_cfg=(30, 60)),
}
COLLECTIONS = ['tile:xla', 'layout:xla:default', 'layout:xla:random', 'layout:nlp:default',
               'layout:nlp:random']
SPLITS = ['train', 'valid', 'test']
TILE_MODELS = ['resnet50', 'resnet_v1_101', 'inception_v3', 'efficientnet_b0', 'mobilenet_v2',
               'bert_base', 'transformer_wmt', 'unet3d', 'mask_rcnn', 'retinanet', 'dlrm',
               'alexnet', 'vgg16', 'ncf', 'shapemask', 'magenta', 'brax', 'tacotron']


def signed_hex(rng):
    v = int(rng.integers(-(2 ** 63), 2 ** 63 - 1))
    return ('-%x' % -v) if v < 0 else ('%x' % v)


def hex32(rng):
    return ''.join('%08x' % int(rng.integers(0, 2 ** 32)) for _ in range(4))


def save_npz(path, arrays):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrays)


def save_noiseless(root, rel, f):
    p = os.path.join(root, 'noiseless', rel[:-4] + '.npy')
    os.makedirs(os.path.dirname(p), exist_ok=True)
    np.save(p, np.asarray(f, np.float64))


def make_tile(root, rng, split, sz):
    for _ in range(200):
        d, kind = gen_tile_graph(rng, sz['tile_nodes'][0], sz['tile_nodes'][1])
        n = len(d['node_opcode'])
        if not (sz['tile_nodes'][0] <= n <= sz['tile_nodes'][1]):
            continue
        T = TileLaw(d['node_feat'], d['node_opcode'], d['edge_index'])
        c_target = int(rng.integers(sz['tile_cfg'][0], sz['tile_cfg'][1] + 1))
        cf, dflt = sample_tile_configs(rng, T, c_target)
        if cf is None or len(cf) < sz['tile_cfg'][0]:
            continue
        break
    else:
        raise RuntimeError('tile graph sampling failed')
    f, _ = T.run(cf)
    fd, _ = T.run(dflt[None])
    if split == 'test':
        stem = hex32(rng)
        rt = np.zeros(len(cf), np.int64)
        nz = np.ones(len(cf), np.int64)
    else:
        stem = '%s_%s_%d_%s' % (_pick(rng, TILE_MODELS), 'fusion' if kind != 'loop' or rng.random() < 0.8
                                else 'copy', int(rng.integers(1, 900)), signed_hex(rng))
        rt, nz = tile_noise(rng, f, float(fd[0]))
    rel = 'npz/tile/xla/%s/%s.npz' % (split, stem)
    save_npz(os.path.join(root, rel), dict(node_feat=d['node_feat'], node_opcode=d['node_opcode'],
                                           edge_index=d['edge_index'], config_feat=cf.astype(np.float32),
                                           config_runtime=rt, config_runtime_normalizers=nz))
    if split != 'test':
        save_noiseless(root, rel, f)
    return rel


def make_layout(root, rng, coll, split, sz):
    _, source, search = coll.split(':')
    d, gen = sample_layout_graph(rng, source, sz['lay_nodes'], sz['lay_nc'])
    law = LayoutLaw(d['node_feat'], d['node_opcode'], d['edge_index'], d['node_config_ids'],
                    d['node_splits'])
    rng_c = sz['lay_test_cfg'] if split == 'test' else sz['lay_cfg']
    c = int(rng.integers(rng_c[0], rng_c[1] + 1))
    if search == 'random':
        ncf = sample_random_configs(rng, law, c)
    else:
        ncf = sample_default_configs(rng, law, c)
    if split == 'test':
        stem = hex32(rng)
        rt = np.zeros(c, np.int64)
        f = None
    else:
        f = law.runtime(ncf)
        rt = layout_noise(rng, f)
        if isinstance(gen, CNNGen):
            stem = '%s_%s_batch_%d_%s' % (gen.name, 'train' if gen.train else 'inference', gen.N,
                                          signed_hex(rng))
        else:
            stem = '%s_en_H-%d_A-%d_batch_size_%d_seq_%d_%s.%s' % (
                gen.name, gen.D, gen.Hh, gen.B, gen.S, 'train' if gen.train else 'test',
                '%08x' % int(rng.integers(0, 2 ** 32)))
    rel = 'npz/layout/%s/%s/%s/%s.npz' % (source, search, split, stem)
    save_npz(os.path.join(root, rel), dict(node_feat=d['node_feat'], node_opcode=d['node_opcode'],
                                           edge_index=d['edge_index'],
                                           node_config_ids=d['node_config_ids'],
                                           node_config_feat=ncf.astype(np.float32),
                                           node_splits=d['node_splits'], config_runtime=rt))
    if f is not None:
        save_noiseless(root, rel, f)
    return rel


def run_task(task):
    root, seed, scale, ci, si, idx = task
    rng = np.random.default_rng([int(seed), 9090, ci, si, idx])
    sz = SIZES[scale]
    coll = COLLECTIONS[ci]
    if coll == 'tile:xla':
        return make_tile(root, rng, SPLITS[si], sz)
    return make_layout(root, rng, coll, SPLITS[si], sz)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=['tiny', 'small'], default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    ap.add_argument('--workers', type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args(argv)
    sz = SIZES[args.scale]
    tasks = []
    for ci, coll in enumerate(COLLECTIONS):
        counts = sz['tile'] if coll == 'tile:xla' else sz['layout']
        for si in range(3):
            k = max(1, int(round(counts[si] * args.graphs_factor)))
            for idx in range(k):
                tasks.append((args.out, args.seed, args.scale, ci, si, idx))
    # heavy (layout) tasks first for better load balance
    tasks.sort(key=lambda t: (t[3] == 0, t[4], t[5]))
    os.makedirs(args.out, exist_ok=True)
    if args.workers > 1 and len(tasks) > 4:
        with Pool(args.workers) as pool:
            rels = pool.map(run_task, tasks, chunksize=1)
    else:
        rels = [run_task(t) for t in tasks]
    dup = len(rels) - len(set(rels))
    if dup:
        print('warning: %d duplicate stems' % dup, file=sys.stderr)
    print('wrote %d graphs to %s' % (len(rels), args.out))


if __name__ == '__main__':
    main()
