#!/usr/bin/env python3
"""Blind runtime law #13: a synthetic TpuGraphs-format dataset writer.

Usage: python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Everything below is this author's own model of a TPU; it was written without reading
the tool under test.  Only numpy and the standard library are used.

==========================================================================================
GRAPHS (own sampler)
  Layout graphs are whole XLA programs built op by op from model families: 2-D/3-D CNNs
  (NHWC or NCHW logical order, batch-norm or group-norm, residuals, pooling), transformer
  encoders (gather embeddings, QKV dots, per-head reshape/transpose, softmax, layer-norm,
  GELU), recommender MLPs (embedding gathers, concatenates, pairwise-interaction dots) and
  LSTMs in a `while` loop (body/cond computations, dynamic-slice / dynamic-update-slice).
  Training graphs get a backward pass from a small autodiff over the HLO ops, all-reduces
  and SGD updates, and a tuple root.  Reduce-like ops call 3-node lambda computations,
  which are emitted first like upstream's encoder does; node_splits close after every
  while body / cond computation and end with n.  Edges are [consumer, producer], deduped
  and sorted, plus an edge to the root of every called computation.
  Tile graphs are single fusions: [lambdas][fused computation][outer params + fusion].
  Kinds: elementwise, reduction (row-normalise or reduce-to-smaller), dot+epilogue,
  conv+epilogue, transpose/copy.

LAYOUT LAW (noise-free runtime = sum of per-node costs, all derived from file content)
  Layout codes: every tensor gets a full minor-to-major permutation.  A configurable
  node's output block completes the fixed dims with its default order (node_feat
  134-139); an all -1 output block = default.  An all -1 input/kernel block means the
  node ADOPTS its operand's current layout (no copy); a (partial) block is completed with
  the operand's default order.  Layouts propagate forward through elementwise ops (from
  the first same-shape operand that is not broadcast/constant/iota); everything else
  keeps its default output layout.
  * Hardware tiling: a tensor's padded size pads the physical minor dim to 128 and the
    second-minor to 8 (32-bit) / 16 (16-bit) / 32 (8-bit) elements.
  * Elementwise: VPU work on padded elements (transcendentals cost more), a write if
    the value leaves its fusion, reads of materialised operands; a same-shape operand
    whose layout differs from the node's layout costs a relayout copy plus a fusion break.
  * Copies (relayouts): launch overhead + (src+dst padded bytes)/BW x factor, the factor
    growing when the second-minor dim changes and more when the lane (minor) dim changes,
    16-bit types paying extra for lane changes (packing).
  * Convolution: MXU time / efficiency.  Efficiency = product of output, input and kernel
    factors: output feature-minor is the fast path (batch-minor 0.9, spatial-minor
    generic 0.45), input feature-minor fast (batch 0.85, spatial 0.5), lane utilisation of
    the minor dim, sublane utilisation of the second minor; kernel fast when the two minor
    dims are {in,out} features (out-minor best; in-minor 0.93 f32 / 0.85 16-bit), 0.7/0.5
    otherwise.  f32 runs at 1/3 of bf16 MXU rate.  Memory roofline with padded bytes.
    A required input/kernel layout differing from the operand's layout costs a copy.
  * Dot (lhs [...,M,K] x rhs [...,K,N], roles found from shapes): lhs K-minor fast,
    M-minor transposed feed (0.8 f32 / 0.62 16-bit), batch-minor generic 0.3; rhs N-minor
    fast, K-minor 0.9; output N-minor fast, M-minor 0.85, else 0.3.
  * Reshape: free iff it is a bitcast: the physical atom order (common refinement of the
    two shapes) is preserved AND the tiled minor / second-minor sizes are compatible;
    otherwise a relayout kernel.  Transpose: free iff the output layout is the permuted
    input layout, otherwise a physical transpose (costlier when the lane dim moves).
  * Reduce: bytes/BW x (1.45 if a lane dim is reduced, 1.15 if a sublane dim).
  * Ops with fixed output layouts (concat, slice, pad, gather, scatter, all-reduce, ...)
    relayout a same-rank operand whose layout differs from their own.
  * Every kernel pays a launch overhead, so graphs of many small tensors are dominated by
    the number of copies / non-bitcast reshapes / fusion breaks rather than bytes.
  Multi-hop effects: a conv's output layout travels through elementwise chains to the
  next conv/dot/reshape (copy or not, efficiency) and to residual adds (fusion breaks).

TILE LAW (one fused kernel; bounds are per physical dim, major->minor; minor in units of
  128, second-minor in units of 8, others in elements)
  grid steps x 0.35us overhead + launch + pipeline fill + max(compute, memory) with:
  padded tile work; DMA efficiency from contiguous run length; VMEM working set (double
  buffered) > budget -> spill cliff; elementwise: streamed operand bytes; reductions:
  tiles covering the whole reduced dims keep rows on chip (single pass), otherwise two
  passes (row-normalise) or chunked accumulation (reduce-to-smaller); dot/conv: operand
  re-reads ~ number of tiles along the other dim, K split -> accumulator steps (spill if
  accumulator large), kernel-N vs output-N tile mismatch -> restreaming or waste, MXU
  padding of M to 8 and N/K to 128, conv halo re-reads for spatial tiles; transpose: read
  and write DMA efficiencies from the runs along the input and output minor dims.
  The normaliser is the measured runtime of the default (compiler heuristic) config,
  which is stored at index 0.

NOISE (stored runtimes only): multiplicative log-normal jitter (sigma per file) and bursts
  in which a run of consecutive configs (file order = measurement order) is slowed by a
  common factor.  Not heavy-tailed otherwise.
==========================================================================================
"""
import argparse
import itertools
import math
import os
import sys

import numpy as np

# ----------------------------------------------------------------------------------------
# opcode table (upstream hlo_opcode.h)
OPC = {
    'abs': 1, 'add': 2, 'add-dependency': 3, 'after-all': 4, 'all-reduce': 5, 'all-to-all': 6,
    'atan2': 7, 'bitcast': 11, 'bitcast-convert': 12, 'broadcast': 13, 'call': 14, 'ceil': 15,
    'clamp': 17, 'collective-permute': 18, 'compare': 20, 'concatenate': 22, 'conditional': 23,
    'constant': 24, 'convert': 25, 'convolution': 26, 'copy': 27, 'cosine': 30,
    'custom-call': 31, 'divide': 32, 'dot': 34, 'dynamic-slice': 35,
    'dynamic-update-slice': 36, 'exponential': 37, 'exponential-minus-one': 38, 'floor': 40,
    'fusion': 41, 'gather': 42, 'get-tuple-element': 45, 'iota': 48, 'is-finite': 49,
    'log': 50, 'log-plus-one': 51, 'and': 52, 'not': 53, 'or': 54, 'xor': 55, 'maximum': 57,
    'minimum': 58, 'multiply': 59, 'negate': 60, 'pad': 62, 'parameter': 63, 'power': 66,
    'reduce': 70, 'reduce-precision': 71, 'reduce-window': 72, 'remainder': 73,
    'reshape': 75, 'reverse': 76, 'rng': 77, 'rsqrt': 81, 'scatter': 82, 'select': 83,
    'select-and-scatter': 84, 'shift-left': 87, 'shift-right-logical': 89, 'sign': 90,
    'sine': 91, 'slice': 92, 'sort': 93, 'sqrt': 94, 'subtract': 95, 'tanh': 96,
    'transpose': 98, 'tuple': 100, 'while': 102, 'all-gather': 104, 'logistic': 107,
    'reduce-scatter': 111, 'opt-barrier': 114,
}
EW_OPS = {1, 2, 7, 15, 17, 20, 25, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53, 54, 55, 57, 58,
          59, 60, 66, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94, 95, 96, 103, 107, 118, 120}
FLEX_OPS = {13, 24, 48, 77}          # broadcast / constant / iota / rng: any layout for free
FREE_OPS = {63, 24, 45, 100, 11, 102, 4, 3, 14, 23, 64, 74, 13, 48, 114, 77, 43, 44}
HEAVY_W = {37: 4.0, 38: 4.0, 50: 4.0, 51: 4.0, 81: 3.0, 94: 3.0, 96: 4.0, 107: 4.0, 30: 5.0,
           91: 5.0, 66: 6.0, 32: 2.5, 7: 6.0, 120: 6.0, 73: 3.0, 103: 5.0}

DT_IDX = {'invalid': 0, 'pred': 1, 's8': 2, 's16': 3, 's32': 4, 's64': 5, 'u8': 6, 'u16': 7,
          'u32': 8, 'u64': 9, 'f16': 10, 'f32': 11, 'f64': 12, 'bf16': 13, 'c64': 14,
          'c128': 15, 'tuple': 16, 'opaque': 17, 'token': 18}
IDX_BYTES = np.array([4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8, 16, 4, 4, 4])

# hardware constants of this law
BW = 1200.0            # HBM bytes per ns
PEAK16 = 240e3         # MXU flops per ns (16-bit)
PEAK32 = PEAK16 / 3.0  # f32 via multi-pass
VPU = 1800.0           # padded element-ops per ns
OVH = 850.0            # kernel launch / pipeline fill (ns)
OVH_COPY = 1100.0
FUSEBREAK = 700.0
VMEM_BUDGET = 12.0 * 2 ** 20
STEP = 350.0           # per grid step (ns)
ACC_LIMIT = 4.0 * 2 ** 20

# ----------------------------------------------------------------------------------------
# permutation tables
PERMS = {}
PIDX = {}
for _r in range(0, 7):
    _p = list(itertools.permutations(range(_r)))
    PERMS[_r] = np.array(_p, dtype=np.int64).reshape(len(_p), _r)
    PIDX[_r] = {t: k for k, t in enumerate(_p)}


def rm(r):
    return tuple(range(r - 1, -1, -1))


def ceil_to(x, m):
    return np.ceil(np.asarray(x, dtype=np.float64) / m) * m


def subtile(b):
    return 32 if b == 1 else (16 if b == 2 else 8)


def lane_u(x):
    x = np.asarray(x, dtype=np.float64)
    return x / ceil_to(x, 128)


_PADCACHE = {}


def padvol_table(shape, b):
    key = (shape, b)
    t = _PADCACHE.get(key)
    if t is not None:
        return t
    r = len(shape)
    if r == 0:
        t = np.ones(1)
    else:
        P = PERMS[r]
        S = np.asarray(shape, dtype=np.float64)[P]
        S[:, 0] = ceil_to(S[:, 0], 128)
        if r >= 2:
            S[:, 1] = ceil_to(S[:, 1], subtile(b))
        t = S.prod(axis=1)
    _PADCACHE[key] = t
    return t


# ========================================================================================
# Graph builder
# ========================================================================================
class HB:
    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.comps = []
        self.stack = []
        self.train = set()

    # computations ------------------------------------------------------------------
    def begin(self, kind):
        comp = {'kind': kind, 'ids': [], 'pc': 0}
        self.comps.append(comp)
        self.stack.append(comp)
        return comp

    def end(self, root):
        self.nodes[root]['root'] = 1
        self.stack.pop()
        return root

    def add(self, op, shape, dt, ops=(), lay=None, **at):
        if isinstance(op, str):
            op = OPC[op]
        shape = tuple(int(s) for s in shape)
        if lay is None:
            lay = rm(len(shape))
        lay = tuple(int(v) for v in lay)
        assert sorted(lay) == list(range(len(shape))), (op, shape, lay)
        nid = len(self.nodes)
        self.nodes.append(dict(op=op, shape=shape, dt=dt, ops=list(ops), lay=lay, root=0, at=at))
        self.stack[-1]['ids'].append(nid)
        return nid

    def S(self, x):
        return self.nodes[x]['shape']

    def D(self, x):
        return self.nodes[x]['dt']

    def L(self, x):
        return self.nodes[x]['lay']

    def O(self, x):
        return self.nodes[x]['op']

    # leaves -------------------------------------------------------------------------
    def param(self, shape, dt, lay=None, train=False):
        c = self.stack[-1]
        p = self.add('parameter', shape, dt, (), lay, pnum=c['pc'])
        c['pc'] += 1
        if train:
            self.train.add(p)
        return p

    def const(self, dt='f32', shape=()):
        return self.add('constant', shape, dt)

    def bcast(self, x, shape, dims=(), lay=None):
        return self.add('broadcast', shape, self.D(x), [x], lay, dims=list(dims))

    def scal(self, like, dt=None):
        dt = dt or self.D(like)
        return self.bcast(self.const(dt), self.S(like), (), self.L(like))

    def ew(self, name, *xs, dt=None, lay=None):
        sh = self.S(xs[0])
        for x in xs:
            assert self.S(x) == sh, (name, [self.S(y) for y in xs])
        if lay is None:
            prim = None
            for x in xs:
                if self.O(x) not in FLEX_OPS:
                    prim = x
                    break
            lay = self.L(prim if prim is not None else xs[0])
        if dt is None:
            dt = 'pred' if name == 'compare' else self.D(xs[-1] if name == 'select' else xs[0])
        return self.add(name, sh, dt, xs, lay)

    def cvt(self, x, dt):
        if self.D(x) == dt:
            return x
        return self.ew('convert', x, dt=dt)

    def tuple_(self, xs):
        return self.add('tuple', (), 'tuple', xs, tup=len(xs))

    def gte(self, t, idx, shape, dt, lay=None):
        return self.add('get-tuple-element', shape, dt, [t], lay)

    def lam(self, kind='add', dt='f32'):
        self.begin('lambda')
        a = self.param((), dt)
        b = self.param((), dt)
        r = self.ew(kind, a, b, dt=dt if kind != 'compare' else 'pred')
        return self.end(r)

    # structural ops -------------------------------------------------------------------
    def reduce(self, x, rdims, kind='add'):
        sh = self.S(x)
        rdims = sorted(set(rdims))
        keep = [d for d in range(len(sh)) if d not in rdims]
        out = [sh[d] for d in keep]
        lay = [keep.index(d) for d in self.L(x) if d in keep]
        lam = self.lam(kind, self.D(x))
        init = self.const(self.D(x))
        return self.add('reduce', out, self.D(x), [lam, x, init], lay, dims=rdims)

    def reshape(self, x, shape, lay=None):
        if lay is None:
            lay = reshape_default_layout(self.S(x), self.L(x), tuple(shape))
        return self.add('reshape', shape, self.D(x), [x], lay)

    def transpose(self, x, perm, bitcast=True):
        sh = self.S(x)
        out = [sh[p] for p in perm]
        if bitcast:
            lay = [list(perm).index(a) for a in self.L(x)]
        else:
            lay = None
        return self.add('transpose', out, self.D(x), [x], lay, dims=list(perm))

    def dot(self, a, b, dt=None):
        sa, sb = self.S(a), self.S(b)
        assert sa[-1] == sb[-2] and sa[:-2] == sb[:-2], (sa, sb)
        out = list(sa[:-1]) + [sb[-1]]
        return self.add('dot', out, dt or self.D(a), [a, b])

    def conv(self, x, w, cdn, win, fgc=1, out_shape=None, lay=None, dt=None):
        sx, sw = self.S(x), self.S(w)
        nsp = len(cdn['isp'])
        r = len(sx)
        out = [0] * r
        out[cdn['ob']] = sx[cdn['ib']] if cdn.get('bgc', 1) == 1 else sx[cdn['ib']]
        out[cdn['of']] = sw[cdn['kof']]
        osp = [d for d in range(r) if d not in (cdn['ob'], cdn['of'])]
        for s in range(nsp):
            w_ = win[s]
            din = (sx[cdn['isp'][s]] - 1) * w_['bd'] + 1
            k = (sw[cdn['ksp'][s]] - 1) * w_['wd'] + 1
            out[osp[s]] = (din + w_['pl'] + w_['ph'] - k) // w_['st'] + 1
        if out_shape is not None:
            out = list(out_shape)
        assert min(out) >= 1, (sx, sw, out)
        if lay is None:
            of = cdn['of']
            lay = [of] + [d for d in reversed(range(r)) if d != of]
        return self.add('convolution', out, dt or self.D(x), [x, w], lay, cdn=cdn, win=win,
                        fgc=fgc, bgc=1)

    def slice_(self, x, starts, limits, strides=None):
        sh = self.S(x)
        strides = strides or [1] * len(sh)
        out = [(l - s + st - 1) // st for s, l, st in zip(starts, limits, strides)]
        return self.add('slice', out, self.D(x), [x], self.L(x),
                        slc=list(zip(starts, strides, limits)))

    def pad(self, x, lo, hi):
        sh = self.S(x)
        out = [s + a + b for s, a, b in zip(sh, lo, hi)]
        z = self.const(self.D(x))
        return self.add('pad', out, self.D(x), [x, z], self.L(x), padcfg=list(zip(lo, hi)))

    def concat(self, xs, dim):
        sh = list(self.S(xs[0]))
        sh[dim] = sum(self.S(x)[dim] for x in xs)
        return self.add('concatenate', sh, self.D(xs[0]), xs, self.L(xs[0]), dims=[dim])

    def gather(self, table, idx):
        st, si = self.S(table), self.S(idx)
        out = list(si) + [st[-1]]
        return self.add('gather', out, self.D(table), [table, idx])

    def scatter(self, base, idx, upd):
        lam = self.lam('add', self.D(base))
        return self.add('scatter', self.S(base), self.D(base), [lam, base, idx, upd],
                        self.L(base))

    def all_reduce(self, x):
        lam = self.lam('add', self.D(x))
        return self.add('all-reduce', self.S(x), self.D(x), [lam, x], self.L(x))

    def reduce_window(self, x, win):
        sh = self.S(x)
        out = [(s + w['pl'] + w['ph'] - w['sz']) // w['st'] + 1 for s, w in zip(sh, win)]
        lam = self.lam('maximum', self.D(x))
        init = self.const(self.D(x))
        return self.add('reduce-window', out, self.D(x), [lam, x, init], self.L(x), win=win)

    def select_scatter(self, x, g, win):
        sel = self.lam('compare', self.D(x))
        sc = self.lam('add', self.D(x))
        init = self.const(self.D(x))
        return self.add('select-and-scatter', self.S(x), self.D(x), [sel, sc, x, g, init],
                        self.L(x), win=win)

    def reverse(self, x, dims):
        return self.add('reverse', self.S(x), self.D(x), [x], self.L(x), dims=list(dims))


def reshape_atoms(a, b):
    """Common refinement of two shapes (row-major).  Returns (atoms_a, atoms_b): for each
    dim the list of atom ids, or None when the shapes mix non-divisibly."""
    A = [[] for _ in a]
    B = [[] for _ in b]
    i = j = 0
    ra = a[0] if a else 1
    rb = b[0] if b else 1
    k = 0
    na, nb = len(a), len(b)
    while True:
        while i < na and ra == 1:
            i += 1
            ra = a[i] if i < na else 1
        while j < nb and rb == 1:
            j += 1
            rb = b[j] if j < nb else 1
        if i >= na or j >= nb:
            break
        if ra % rb == 0:
            A[i].append(k)
            B[j].append(k)
            ra //= rb
            rb = 1
        elif rb % ra == 0:
            A[i].append(k)
            B[j].append(k)
            rb //= ra
            ra = 1
        else:
            return None
        k += 1
    return A, B


def phys_atoms(groups, lay):
    seq = []
    for d in reversed(lay):
        seq.extend(groups[d])
    return seq


def reshape_default_layout(sin, lin, sout):
    ro = len(sout)
    if ro <= 1:
        return rm(ro)
    at = reshape_atoms(sin, sout)
    if at is None:
        return rm(ro)
    A, B = at
    target = phys_atoms(A, lin)
    if phys_atoms(B, rm(ro)) == target:
        return rm(ro)
    for p in itertools.permutations(range(ro)):
        if phys_atoms(B, p) == target:
            return p
    return rm(ro)


# ========================================================================================
# mini autodiff over the builder's ops (shapes exact, maths approximate)
# ========================================================================================
def backward(hb, loss, comp_ids):
    N = hb.nodes
    req = set()
    for nid in comp_ids:
        n = N[nid]
        if nid in hb.train or any(o in req for o in n['ops']):
            if n['op'] not in (20, 48, 24):
                req.add(nid)
    grads = {loss: [hb.scal(loss) if hb.S(loss) else hb.const(hb.D(loss))]}
    pgrads = {}

    def acc(x, g):
        if x in req:
            grads.setdefault(x, []).append(g)

    for nid in reversed(comp_ids):
        if nid not in grads:
            continue
        gl = grads.pop(nid)
        g = gl[0]
        for h in gl[1:]:
            g = hb.ew('add', g, h)
        n = N[nid]
        op = n['op']
        ops = [o for o in n['ops'] if N[o]['root'] == 0]
        if op == 63:
            pgrads[nid] = g
            continue
        if op in (2, 95):
            for k, o in enumerate(ops):
                if hb.S(o) == hb.S(nid):
                    acc(o, g if (op == 2 or k == 0) else hb.ew('negate', g))
        elif op == 59:
            a, b = (ops + ops)[:2]
            acc(a, hb.ew('multiply', g, b))
            if b != a:
                acc(b, hb.ew('multiply', g, a))
        elif op == 32:
            a, b = ops[0], ops[-1]
            acc(a, hb.ew('divide', g, b))
            if b != a and hb.S(b) == hb.S(nid):
                acc(b, hb.ew('negate', hb.ew('multiply', g, hb.ew('divide', nid, b))))
        elif op in (57, 58):
            a, b = ops[0], ops[-1]
            m = hb.ew('compare', a, b)
            z = hb.scal(g)
            acc(a, hb.ew('select', m, g, z))
            if b != a and hb.S(b) == hb.S(nid):
                acc(b, hb.ew('select', m, z, g))
        elif op == 83:
            p, a, b = (ops + ops + ops)[:3] if len(ops) >= 3 else (ops[0], ops[-1], ops[-1])
            z = hb.scal(g)
            acc(a, hb.ew('select', p, g, z))
            if b != a:
                acc(b, hb.ew('select', p, z, g))
        elif op in (37,):
            acc(ops[0], hb.ew('multiply', g, nid))
        elif op in (96, 107):
            one = hb.scal(nid)
            d = hb.ew('subtract', one, hb.ew('multiply', nid, nid)) if op == 96 else \
                hb.ew('multiply', nid, hb.ew('subtract', one, nid))
            acc(ops[0], hb.ew('multiply', g, d))
        elif op == 81:
            acc(ops[0], hb.ew('multiply', g, hb.ew('multiply', nid, hb.ew('multiply', nid, nid))))
        elif op in (50, 94):
            acc(ops[0], hb.ew('divide', g, ops[0] if op == 50 else nid))
        elif op == 60:
            acc(ops[0], hb.ew('negate', g))
        elif op == 25:
            acc(ops[0], hb.cvt(g, hb.D(ops[0])))
        elif op == 13:
            x = ops[0]
            dims = n['at']['dims']
            rd = [d for d in range(len(hb.S(nid))) if d not in dims]
            if rd:
                acc(x, hb.reduce(g, rd) if hb.S(x) else hb.reduce(g, rd))
        elif op == 70:
            x = ops[0]
            keep = [d for d in range(len(hb.S(x))) if d not in n['at']['dims']]
            acc(x, hb.bcast(g, hb.S(x), keep, hb.L(x)))
        elif op == 75:
            acc(ops[0], hb.reshape(g, hb.S(ops[0])))
        elif op == 98:
            perm = n['at']['dims']
            inv = [perm.index(d) for d in range(len(perm))]
            acc(ops[0], hb.transpose(g, inv, bitcast=hb.rng.random() < 0.6))
        elif op == 34:
            a, b = ops[0], ops[-1]
            if hb.S(a)[-1] != hb.S(b)[-2] or hb.S(b)[-1] != hb.S(nid)[-1]:
                a, b = b, a
            r = len(hb.S(a))
            sw = list(range(r - 2)) + [r - 1, r - 2]
            if a in req:
                acc(a, hb.dot(g, hb.transpose(b, sw, bitcast=hb.rng.random() < 0.5)))
            if b in req:
                acc(b, hb.dot(hb.transpose(a, sw, bitcast=hb.rng.random() < 0.5), g))
        elif op == 26:
            x, w = n['ops'][0], n['ops'][1]
            cdn, win = n['at']['cdn'], n['at']['win']
            if x in req:
                sx, sw = hb.S(x), hb.S(w)
                wr = hb.reverse(w, cdn['ksp'])
                cdn2 = dict(cdn, ib=cdn['ob'], if_=cdn['of'],
                            isp=[d for d in range(len(sx)) if d not in (cdn['ob'], cdn['of'])],
                            kif=cdn['kof'], kof=cdn['kif'], ob=cdn['ib'], of=cdn['if_'])
                win2 = []
                sg = hb.S(nid)
                for s, w_ in enumerate(win):
                    k = sw[cdn['ksp'][s]]
                    din = (sg[cdn2['isp'][s]] - 1) * w_['st'] + 1
                    tot = sx[cdn['isp'][s]] + k - 1 - din
                    pl = max(0, tot // 2)
                    win2.append(dict(sz=k, st=1, pl=pl, ph=tot - pl, wd=1, bd=w_['st'], rev=1))
                acc(x, hb.conv(g, wr, cdn2, win2, out_shape=sx, lay=hb.L(x)))
            if w in req:
                sx, sw, sg = hb.S(x), hb.S(w), hb.S(nid)
                osp = [d for d in range(len(sg)) if d not in (cdn['ob'], cdn['of'])]
                cdn3 = dict(ib=cdn['if_'], if_=cdn['ib'], isp=cdn['isp'], kif=cdn['ob'],
                            kof=cdn['of'], ksp=osp, ob=cdn['kif'], of=cdn['kof'])
                win3 = []
                for s, w_ in enumerate(win):
                    k = sw[cdn['ksp'][s]]
                    gsz = sg[osp[s]]
                    ph = k + (gsz - 1) * w_['st'] - sx[cdn['isp'][s]] - w_['pl']
                    win3.append(dict(sz=gsz, st=1, pl=w_['pl'], ph=ph, wd=w_['st'], bd=1, rev=0))
                acc(w, hb.conv(x, g, cdn3, win3, out_shape=sw, lay=hb.L(w)))
        elif op == 42:
            t, idx = ops[0], ops[-1]
            if hb.S(t) and len(hb.S(t)) == 2 and hb.D(idx) == 's32' or True:
                z = hb.bcast(hb.const(hb.D(t)), hb.S(t), (), hb.L(t))
                acc(t, hb.scatter(z, idx, g))
        elif op == 92:
            x = ops[0]
            slc = n['at']['slc']
            lo = [s for s, _, _ in slc]
            hi = [hb.S(x)[d] - slc[d][2] for d in range(len(slc))]
            acc(x, hb.pad(g, lo, hi))
        elif op == 22:
            dim = n['at']['dims'][0]
            off = 0
            for x in ops:
                sh = hb.S(x)
                st = [0] * len(sh)
                li = list(hb.S(nid))
                st[dim] = off
                li[dim] = off + sh[dim]
                off += sh[dim]
                acc(x, hb.slice_(g, st, li))
        elif op == 72:
            x = ops[0]
            acc(x, hb.select_scatter(x, g, n['at']['win']))
        # other ops: no gradient
    return pgrads


# ========================================================================================
# model families for layout graphs
# ========================================================================================
def pick(rng, xs, p=None):
    return xs[int(rng.choice(len(xs), p=p))]


def lay_nchw(r):
    return tuple([1] + list(range(r - 1, 1, -1)) + [0])


def fam_cnn(hb, rng, knob, P):
    nd, style, dt, B, H, C0 = P['nd'], P['style'], P['dt'], P['B'], P['H'], P['C0']
    r = nd + 2
    if style == 'nhwc':
        feat, bd, sp = r - 1, 0, list(range(1, r - 1))
        alay = rm(r)
    else:
        feat, bd, sp = 1, 0, list(range(2, r))
        alay = lay_nchw(r)

    def mk(Hs, C):
        s = [0] * r
        s[bd] = B
        s[feat] = C
        for d, h in zip(sp, Hs):
            s[d] = h
        return s

    x = hb.param(mk([H] * nd, P['Cin']), 'f32', alay)
    if dt != 'f32':
        x = hb.cvt(x, dt)
    cdn = dict(ib=bd, if_=feat, isp=sp, kif=nd, kof=nd + 1, ksp=list(range(nd)), ob=bd,
               of=feat)

    def conv(x, Cout, k, s):
        Cin = hb.S(x)[feat]
        w = hb.param([k] * nd + [Cin, Cout], 'f32', rm(r), train=True)
        if dt != 'f32':
            w = hb.cvt(w, dt)
        pl = (k - 1) // 2
        win = [dict(sz=k, st=s, pl=pl, ph=k - 1 - pl, wd=1, bd=1, rev=0) for _ in range(nd)]
        return hb.conv(x, w, cdn, win, lay=alay)

    def norm(y):
        kind = P['norm']
        if kind == 'none':
            b = hb.param([hb.S(y)[feat]], dt, train=True)
            return hb.ew('add', y, hb.bcast(b, hb.S(y), [feat], hb.L(y)))
        yf = hb.cvt(y, 'f32')
        sh = hb.S(yf)
        C = sh[feat]
        if kind == 'bn':
            rd = [d for d in range(r) if d != feat]
            mean = hb.ew('multiply', hb.reduce(yf, rd), None or hb.bcast(hb.const(), [C], ()))
            cen = hb.ew('subtract', yf, hb.bcast(mean, sh, [feat], hb.L(yf)))
            var = hb.reduce(hb.ew('multiply', cen, cen), rd)
            inv = hb.ew('rsqrt', hb.ew('add', var, hb.bcast(hb.const(), [C], ())))
            z = hb.ew('multiply', cen, hb.bcast(inv, sh, [feat], hb.L(yf)))
        else:
            G = P['G']
            if style == 'nhwc':
                s5 = list(sh[:-1]) + [G, C // G]
                gdims = [r - 1, r]
                rdims = sp + [r]
                keep = [bd, r - 1]
            else:
                s5 = [sh[0], G, C // G] + list(sh[2:])
                gdims = [1, 2]
                rdims = [2] + [d + 1 for d in sp]
                keep = [0, 1]
            y5 = hb.reshape(yf, s5)
            m = hb.reduce(y5, rdims)
            cen = hb.ew('subtract', y5, hb.bcast(m, s5, keep, hb.L(y5)))
            var = hb.reduce(hb.ew('multiply', cen, cen), rdims)
            inv = hb.ew('rsqrt', hb.ew('add', var, hb.scal(var)))
            z5 = hb.ew('multiply', cen, hb.bcast(inv, s5, keep, hb.L(y5)))
            z = hb.reshape(z5, sh, lay=hb.L(yf))
        gam = hb.param([C], 'f32', train=True)
        bet = hb.param([C], 'f32', train=True)
        z = hb.ew('multiply', z, hb.bcast(gam, sh, [feat], hb.L(z)))
        z = hb.ew('add', z, hb.bcast(bet, sh, [feat], hb.L(z)))
        return hb.cvt(z, dt)

    def relu(y):
        return hb.ew('maximum', y, hb.scal(y))

    C = C0
    y = relu(norm(conv(x, C, P['k0'], 2 if H >= 32 else 1)))
    Hc = hb.S(y)[sp[0]]
    if P['pool'] and Hc >= 8:
        win = [dict(sz=1, st=1, pl=0, ph=0, wd=1, bd=1, rev=0) for _ in range(r)]
        for d in sp:
            win[d] = dict(sz=3, st=2, pl=1, ph=1, wd=1, bd=1, rev=0)
        y = hb.reduce_window(y, win)
    for blk in range(knob):
        Hc = hb.S(y)[sp[0]]
        down = blk > 0 and blk % P['every'] == 0 and Hc >= 4
        Cn = min(C * 2, 1024) if down else C
        s = 2 if down else 1
        skip = y
        h = relu(norm(conv(y, Cn, 3 if rng.random() < 0.8 else 1, s)))
        h = norm(conv(h, Cn, 3 if P['basic'] else 1, 1))
        if P['resid']:
            if down or Cn != C:
                skip = norm(conv(skip, Cn, 1, s))
            h = hb.ew('add', h, skip)
        y = relu(h)
        C = Cn
    sh = hb.S(y)
    pooled = hb.reduce(hb.cvt(y, 'f32'), sp)          # [B, C] (ordered as remaining dims)
    pooled = hb.ew('multiply', pooled, hb.scal(pooled))
    if hb.S(pooled)[0] != B:
        pooled = hb.transpose(pooled, [1, 0])
    wfc = hb.param([C, P['ncls']], 'f32', train=True)
    logits = hb.dot(pooled, wfc)
    bfc = hb.param([P['ncls']], 'f32', train=True)
    logits = hb.ew('add', logits, hb.bcast(bfc, hb.S(logits), [1]))
    lbl = hb.param(hb.S(logits), 'f32')
    mx = hb.reduce(logits, [1], 'maximum')
    sh_l = hb.ew('subtract', logits, hb.bcast(mx, hb.S(logits), [0]))
    lse = hb.reduce(hb.ew('exponential', sh_l), [1])
    lz = hb.ew('log', lse)
    nll = hb.ew('multiply', hb.ew('subtract', sh_l, hb.bcast(lz, hb.S(logits), [0])), lbl)
    loss = hb.reduce(nll, [0, 1])
    return loss


def fam_transformer(hb, rng, knob, P):
    B, S, H, A, dt, V = P['B'], P['S'], P['H'], P['A'], P['dt'], P['V']
    dh = H // A
    F = P['F']
    ids = hb.param([B, S], 's32')
    table = hb.param([V, H], 'f32', train=True)
    emb = hb.gather(table, ids)                               # [B,S,H]
    pos = hb.param([S, H], 'f32', train=True)
    emb = hb.ew('add', emb, hb.bcast(pos, [B, S, H], [1, 2]))
    x = hb.reshape(emb, [B * S, H])
    x = hb.cvt(x, dt)
    mask = hb.param([B, S], 'f32')

    def dense(x, n_out, bias=True):
        w = hb.param([hb.S(x)[-1], n_out], 'f32', train=True)
        y = hb.dot(x, hb.cvt(w, dt))
        if bias:
            b = hb.param([n_out], 'f32', train=True)
            y = hb.ew('add', y, hb.bcast(hb.cvt(b, dt), hb.S(y), [1]))
        return y

    def layernorm(x):
        xf = hb.cvt(x, 'f32')
        sh = hb.S(xf)
        m = hb.ew('multiply', hb.reduce(xf, [1]), None or hb.bcast(hb.const(), [sh[0]], ()))
        c = hb.ew('subtract', xf, hb.bcast(m, sh, [0]))
        v = hb.reduce(hb.ew('multiply', c, c), [1])
        inv = hb.ew('rsqrt', hb.ew('add', v, hb.scal(v)))
        z = hb.ew('multiply', c, hb.bcast(inv, sh, [0]))
        g = hb.param([sh[1]], 'f32', train=True)
        b = hb.param([sh[1]], 'f32', train=True)
        z = hb.ew('add', hb.ew('multiply', z, hb.bcast(g, sh, [1])), hb.bcast(b, sh, [1]))
        return hb.cvt(z, dt)

    def heads(t):
        t4 = hb.reshape(t, [B, S, A, dh])
        return t4

    for layer in range(knob):
        if P['fused_qkv']:
            qkv = dense(x, 3 * H)
            q = hb.slice_(qkv, [0, 0], [B * S, H])
            k = hb.slice_(qkv, [0, H], [B * S, 2 * H])
            v = hb.slice_(qkv, [0, 2 * H], [B * S, 3 * H])
        else:
            q, k, v = dense(x, H), dense(x, H), dense(x, H)
        q4 = hb.transpose(heads(q), [0, 2, 1, 3], bitcast=rng.random() < P['tbit'])
        k4 = hb.transpose(heads(k), [0, 2, 3, 1], bitcast=rng.random() < P['tbit'])
        v4 = hb.transpose(heads(v), [0, 2, 1, 3], bitcast=rng.random() < P['tbit'])
        sc = hb.dot(q4, k4)                                   # [B,A,S,S]
        sc = hb.ew('multiply', sc, hb.scal(sc))
        sc = hb.ew('add', sc, hb.bcast(hb.cvt(mask, dt), hb.S(sc), [0, 3]))
        scf = hb.cvt(sc, 'f32')
        mx = hb.reduce(scf, [3], 'maximum')
        e = hb.ew('exponential', hb.ew('subtract', scf, hb.bcast(mx, hb.S(scf), [0, 1, 2])))
        sm = hb.reduce(e, [3])
        pr = hb.cvt(hb.ew('divide', e, hb.bcast(sm, hb.S(e), [0, 1, 2])), dt)
        ctx = hb.dot(pr, v4)                                  # [B,A,S,dh]
        ctx = hb.transpose(ctx, [0, 2, 1, 3], bitcast=rng.random() < P['tbit'])
        ctx = hb.reshape(ctx, [B * S, H])
        o = dense(ctx, H)
        x = layernorm(hb.ew('add', o, x))
        h1 = dense(x, F)
        if P['act'] == 'gelu':
            c3 = hb.ew('multiply', h1, hb.ew('multiply', h1, h1))
            t = hb.ew('tanh', hb.ew('multiply', hb.ew('add', h1, hb.ew('multiply', c3, hb.scal(h1))),
                                    hb.scal(h1)))
            h1 = hb.ew('multiply', hb.ew('multiply', h1, hb.scal(h1)), hb.ew('add', t, hb.scal(t)))
        else:
            h1 = hb.ew('maximum', h1, hb.scal(h1))
        h2 = dense(h1, H)
        x = layernorm(hb.ew('add', h2, x))
    # head: pooled classifier or LM head
    if P['lm']:
        logits = hb.dot(x, hb.transpose(hb.cvt(table, dt), [1, 0], bitcast=False))
    else:
        x3 = hb.reshape(x, [B, S, H])
        first = hb.reshape(hb.slice_(x3, [0, 0, 0], [B, 1, H]), [B, H])
        pooled = hb.ew('tanh', dense(first, H))
        logits = dense(pooled, P['ncls'])
    lf = hb.cvt(logits, 'f32')
    mxl = hb.reduce(lf, [1], 'maximum')
    sh = hb.ew('subtract', lf, hb.bcast(mxl, hb.S(lf), [0]))
    lse = hb.ew('log', hb.reduce(hb.ew('exponential', sh), [1]))
    lbl = hb.param(hb.S(lf), 'f32')
    nll = hb.ew('multiply', hb.ew('subtract', sh, hb.bcast(lse, hb.S(lf), [0])), lbl)
    return hb.reduce(nll, [0, 1])


def fam_mlp(hb, rng, knob, P):
    B, d, nf, dt = P['B'], P['d'], P['nf'], P['dt']
    dense_in = hb.param([B, P['nd']], 'f32')

    def mlp(x, widths):
        for w_ in widths:
            w = hb.param([hb.S(x)[-1], w_], 'f32', train=True)
            y = hb.dot(x, hb.cvt(w, dt))
            b = hb.param([w_], 'f32', train=True)
            y = hb.ew('add', y, hb.bcast(hb.cvt(b, dt), hb.S(y), [1]))
            x = hb.ew('maximum', y, hb.scal(y))
        return x

    bot = mlp(hb.cvt(dense_in, dt), [P['h']] * 2 + [d])
    embs = []
    for f in range(nf):
        t = hb.param([int(rng.integers(100, 5000)), d], 'f32', train=True)
        ids = hb.param([B], 's32')
        embs.append(hb.cvt(hb.gather(t, ids), dt))
    allv = embs + [bot]
    for blk in range(knob):
        st = hb.concat(allv, 1)                                  # [B, (nf+1)*d]
        x3 = hb.reshape(st, [B, len(allv), d])
        xt = hb.transpose(x3, [0, 2, 1], bitcast=rng.random() < 0.5)
        inter = hb.dot(x3, xt)                                   # [B, F, F]
        fl = hb.reshape(inter, [B, len(allv) * len(allv)])
        z = hb.concat([fl, bot], 1)
        top = mlp(z, [P['h']] * P['depth'] + [d])
        allv = allv[1:] + [top]
        bot = top
    w = hb.param([d, 1], 'f32', train=True)
    out = hb.cvt(hb.dot(bot, hb.cvt(w, dt)), 'f32')
    p = hb.ew('logistic', out)
    lbl = hb.param([B, 1], 'f32')
    l = hb.ew('multiply', hb.ew('log', p), lbl)
    return hb.reduce(l, [0, 1])


def fam_rnn(hb, rng, knob, P):
    """LSTM in while loops; returns (loss, extra) and builds body/cond computations."""
    T, B, E, H, dt = P['T'], P['B'], P['E'], P['H'], P['dt']
    xs = hb.param([T, B, E], dt)
    outs = []
    cur_in = xs
    for layer in range(knob):
        Ein = hb.S(cur_in)[-1]
        W = hb.param([Ein, 4 * H], dt, train=False)
        U = hb.param([H, 4 * H], dt)
        bb = hb.param([4 * H], dt)
        h0 = hb.bcast(hb.const(dt), [B, H], ())
        c0 = hb.bcast(hb.const(dt), [B, H], ())
        o0 = hb.bcast(hb.const(dt), [T, B, H], ())
        i0 = hb.const('s32')
        shapes = [((), 's32'), ((B, H), dt), ((B, H), dt), ((T, B, Ein), dt), ((T, B, H), dt),
                  ((Ein, 4 * H), dt), ((H, 4 * H), dt), ((4 * H,), dt)]
        init = hb.tuple_([i0, h0, c0, cur_in, o0, W, U, bb])
        # body
        hb.begin('body')
        pt = hb.param((), 'tuple')
        g = [hb.gte(pt, k, s, d) for k, (s, d) in enumerate(shapes)]
        i, h, c, xin, ob, Wb, Ub, bv = g
        z0 = hb.const('s32')
        xt = hb.add('dynamic-slice', [1, B, Ein], dt, [xin, i, z0], dss=[1, B, Ein])
        xt = hb.reshape(xt, [B, Ein])
        zz = hb.ew('add', hb.dot(xt, Wb), hb.dot(h, Ub))
        zz = hb.ew('add', zz, hb.bcast(bv, [B, 4 * H], [1]))
        gates = [hb.slice_(zz, [0, k * H], [B, (k + 1) * H]) for k in range(4)]
        ig, fg, og = [hb.ew('logistic', gg) for gg in gates[:3]]
        gg = hb.ew('tanh', gates[3])
        c2 = hb.ew('add', hb.ew('multiply', fg, c), hb.ew('multiply', ig, gg))
        h2 = hb.ew('multiply', og, hb.ew('tanh', c2))
        h3 = hb.reshape(h2, [1, B, H])
        ob2 = hb.add('dynamic-update-slice', [T, B, H], dt, [ob, h3, i, z0])
        i2 = hb.ew('add', i, hb.const('s32'))
        broot = hb.tuple_([i2, h2, c2, xin, ob2, Wb, Ub, bv])
        hb.end(broot)
        # cond
        hb.begin('cond')
        pc = hb.param((), 'tuple')
        ic = hb.gte(pc, 0, (), 's32')
        lim = hb.const('s32')
        croot = hb.ew('compare', ic, lim)
        hb.end(croot)
        wl = hb.add('while', (), 'tuple', [croot, broot, init], tup=8)
        cur_in = hb.gte(wl, 4, (T, B, H), dt)
        outs.append(cur_in)
    y = hb.reshape(cur_in, [T * B, H])
    wo = hb.param([H, P['V']], 'f32', train=True)
    logits = hb.cvt(hb.dot(hb.cvt(y, 'f32'), wo), 'f32')
    mx = hb.reduce(logits, [1], 'maximum')
    sh = hb.ew('subtract', logits, hb.bcast(mx, hb.S(logits), [0]))
    lse = hb.ew('log', hb.reduce(hb.ew('exponential', sh), [1]))
    lbl = hb.param(hb.S(logits), 'f32')
    nll = hb.ew('multiply', hb.ew('subtract', sh, hb.bcast(lse, hb.S(logits), [0])), lbl)
    return hb.reduce(nll, [0, 1])


def sample_family(rng, coll, scale):
    tiny = scale == 'tiny'
    if coll == 'xla':
        fam = pick(rng, ['cnn', 'transformer', 'mlp', 'rnn'], [0.5, 0.2, 0.17, 0.13])
    else:
        fam = pick(rng, ['transformer', 'mlp', 'rnn'], [0.76, 0.12, 0.12])
    dt = pick(rng, ['bf16', 'f32'], [0.65, 0.35])
    train = rng.random() < (0.55 if not tiny else 0.3)
    P = dict(fam=fam, dt=dt, train=train, multi=rng.random() < 0.5)
    if fam == 'cnn':
        nd = 3 if rng.random() < 0.2 else 2
        P.update(nd=nd, style=pick(rng, ['nhwc', 'nchw'], [0.65, 0.35]),
                 B=int(pick(rng, [1, 2, 4, 8, 16, 32, 64, 128])),
                 H=int(pick(rng, [16, 24, 32, 48, 64] if nd == 3 else [14, 28, 32, 56, 64, 112, 224])),
                 C0=int(pick(rng, [16, 32, 64, 128, 96])), Cin=int(pick(rng, [1, 3, 4, 8])),
                 k0=int(pick(rng, [3, 5, 7])), norm=pick(rng, ['bn', 'gn', 'none'], [0.55, 0.3, 0.15]),
                 G=int(pick(rng, [8, 16, 32])), resid=rng.random() < 0.7, pool=rng.random() < 0.5,
                 every=int(rng.integers(1, 4)), basic=rng.random() < 0.5,
                 ncls=int(pick(rng, [10, 100, 1000, 21])))
        if nd == 3:
            P['B'] = min(P['B'], 8)
        P['G'] = min(P['G'], P['C0'])
    elif fam == 'transformer':
        H = int(pick(rng, [128, 256, 384, 512, 768, 1024]))
        A = int(pick(rng, [a for a in [2, 4, 8, 12, 16] if H % a == 0 and H // a >= 32]))
        P.update(B=int(pick(rng, [1, 2, 4, 8, 16, 32, 64])), S=int(pick(rng, [16, 32, 64, 128, 256, 384, 512])),
                 H=H, A=A, F=int(H * pick(rng, [2, 4])), V=int(pick(rng, [1000, 8000, 30522, 32000])),
                 fused_qkv=rng.random() < 0.4, act=pick(rng, ['gelu', 'relu'], [0.75, 0.25]),
                 lm=rng.random() < 0.4, ncls=int(pick(rng, [2, 3, 10])), tbit=float(rng.uniform(0.2, 0.9)))
        if tiny:
            P['V'] = min(P['V'], 8000)
    elif fam == 'mlp':
        P.update(B=int(pick(rng, [8, 16, 32, 64, 128, 256, 2048])), d=int(pick(rng, [8, 16, 32, 64])),
                 nf=int(rng.integers(2, 9)), nd=int(pick(rng, [4, 13, 16])),
                 h=int(pick(rng, [64, 128, 256, 512])), depth=int(rng.integers(1, 4)))
    else:
        P.update(T=int(pick(rng, [8, 16, 32, 64])), B=int(pick(rng, [4, 8, 16, 32, 64])),
                 E=int(pick(rng, [64, 128, 256, 512])), H=int(pick(rng, [64, 128, 256, 512, 1024])),
                 V=int(pick(rng, [1000, 4000, 10000])))
        P['train'] = P['train'] and False
    return P


FAMS = {'cnn': fam_cnn, 'transformer': fam_transformer, 'mlp': fam_mlp, 'rnn': fam_rnn}
CFG_OPS = {26, 34, 75, 98}


def build_layout_graph(rng, P, knob):
    hb = HB(rng)
    hb.begin('main')
    main = hb.comps[0]
    loss = FAMS[P['fam']](hb, rng, knob, P)
    outs = [loss]
    if P['train']:
        ids = list(main['ids'])
        pg = backward(hb, loss, ids)
        lr = hb.const('f32')
        for p in sorted(pg):
            g = pg[p]
            if hb.D(g) != hb.D(p):
                g = hb.cvt(g, hb.D(p))
            if P['multi']:
                g = hb.all_reduce(g)
            if hb.S(p):
                upd = hb.ew('subtract', p, hb.ew('multiply', g, hb.bcast(lr, hb.S(p), (), hb.L(p))))
            else:
                upd = hb.ew('subtract', p, g)
            outs.append(upd)
    root = hb.tuple_(outs) if len(outs) > 1 else outs[0]
    hb.end(root)
    return hb


def finalize(hb, kind='layout'):
    """Order computations like upstream (callees first), build arrays."""
    comps = hb.comps
    if kind == 'layout':
        order = [c for c in comps if c['kind'] == 'lambda']
        rest = [c for c in comps if c['kind'] in ('body', 'cond')]
        order += rest + [c for c in comps if c['kind'] == 'main']
    else:
        order = [c for c in comps if c['kind'] == 'lambda'] + \
                [c for c in comps if c['kind'] == 'fused'] + [c for c in comps if c['kind'] == 'outer']
    gid = {}
    seq = []
    splits = [0]
    for c in order:
        for nid in c['ids']:
            gid[nid] = len(seq)
            seq.append(nid)
        if c['kind'] in ('body', 'cond'):
            splits.append(len(seq))
    n = len(seq)
    if splits[-1] < n:
        splits.append(n)
    nf = np.zeros((n, 140), dtype=np.float32)
    opc = np.zeros(n, dtype=np.uint8)
    edges = []
    for k, nid in enumerate(seq):
        nd = hb.nodes[nid]
        opc[k] = nd['op']
        nf[k] = featurize(nd)
        srcs = sorted(set(gid[o] for o in nd['ops']))
        for s in srcs:
            assert s < k, (nd['op'], s, k)
            edges.append((k, s))
    ei = np.array(edges, dtype=np.int64).reshape(-1, 2)
    return dict(node_feat=nf, node_opcode=opc, edge_index=ei,
                node_splits=np.array([splits], dtype=np.int64)), gid, seq


def _seq(vals, k, zero_prod_empty=False):
    out = [0.0] * (k + 2)
    for i, v in enumerate(vals[:k]):
        out[i] = float(v)
    out[k] = float(sum(vals))
    p = 1.0
    for v in vals:
        p *= float(v)
    out[k + 1] = 0.0 if (zero_prod_empty and not vals) else p
    return out


def featurize(nd):
    f = np.zeros(140, dtype=np.float64)
    at = nd['at']
    f[0] = nd['root']
    f[2 + DT_IDX[nd['dt']]] = 1.0
    sh = list(nd['shape'])
    f[21:29] = _seq(sh, 6)
    f[29] = at.get('tup', 0)
    f[30] = at.get('pnum', 0)
    dims = at.get('dims', [])
    for i, v in enumerate(dims[:6]):
        f[31 + i] = v
    win = at.get('win', [])
    keys = ['sz', 'st', 'pl', 'ph', 'wd', 'bd']
    for k, key in enumerate(keys):
        f[37 + 8 * k: 45 + 8 * k] = _seq([w[key] for w in win], 6)
    rev = [w['rev'] for w in win]
    for i, v in enumerate(rev[:6]):
        f[85 + i] = v
    f[91] = sum(rev)
    f[92] = len(rev) - sum(rev)
    cdn = at.get('cdn')
    if cdn is not None:
        f[93] = cdn['ib']
        f[94] = cdn['if_']
        for i, v in enumerate(cdn['isp'][:4]):
            f[95 + i] = v
        f[99] = cdn['kif']
        f[100] = cdn['kof']
        for i, v in enumerate(cdn['ksp'][:4]):
            f[101 + i] = v
        f[105] = cdn['ob']
        f[106] = cdn['of']
        f[107] = at.get('fgc', 1)
        f[108] = at.get('bgc', 1)
    slc = at.get('slc', [])
    f[109:113] = _seq([s[0] for s in slc], 2)
    f[113:117] = _seq([s[1] for s in slc], 2)
    f[117:121] = _seq([s[2] for s in slc], 2)
    f[121:125] = _seq(at.get('dss', []), 2)
    pc = at.get('padcfg', [])
    f[125:129] = _seq([p[0] for p in pc], 2)
    f[129:133] = _seq([p[1] for p in pc], 2)
    f[133] = at.get('stable', 0)
    for i, v in enumerate(nd['lay'][:6]):
        f[134 + i] = v
    return f.astype(np.float32)


# ========================================================================================
# parsing a file (the law only sees what is stored)
# ========================================================================================
class PG:
    pass


def parse(nf, opc, ei):
    g = PG()
    n = nf.shape[0]
    g.n = n
    g.op = opc.astype(np.int64)
    dimsblk = np.rint(nf[:, 21:27]).astype(np.int64)
    g.rank = (dimsblk > 0).sum(1)
    g.shape = [tuple(int(v) for v in dimsblk[i, :g.rank[i]]) for i in range(n)]
    g.dti = np.argmax(nf[:, 2:21], axis=1)
    g.b = IDX_BYTES[g.dti]
    g.root = nf[:, 0] > 0.5
    g.vol = np.array([float(np.prod(s)) if s else 1.0 for s in g.shape])
    lays = np.rint(nf[:, 134:140]).astype(np.int64)
    g.lay = []
    g.lcode = np.zeros(n, dtype=np.int64)
    for i in range(n):
        r = g.rank[i]
        t = tuple(int(v) for v in lays[i, :r])
        if sorted(t) != list(range(r)):
            t = rm(r)
        g.lay.append(t)
        g.lcode[i] = PIDX[r][t]
    g.dims = np.rint(nf[:, 31:37]).astype(np.int64)
    g.cdn = np.rint(nf[:, 93:107]).astype(np.int64)
    g.win = nf[:, 37:93]
    ops = [[] for _ in range(n)]
    cons = [[] for _ in range(n)]
    if len(ei):
        order = np.lexsort((ei[:, 1], ei[:, 0]))
        for u, v in ei[order]:
            ops[int(u)].append(int(v))
            cons[int(v)].append(int(u))
    g.allops = ops
    g.ops = [[v for v in ops[i] if not g.root[v]] for i in range(n)]
    g.cons = cons
    return g


# ========================================================================================
# LAYOUT LAW
# ========================================================================================
_TCACHE = {}


def cached(key, fn):
    t = _TCACHE.get(key)
    if t is None:
        t = fn()
        _TCACHE[key] = t
    return t


def minor_tbl(r):
    return PERMS[r][:, 0] if r >= 1 else np.array([-1])


def second_tbl(r):
    return PERMS[r][:, 1] if r >= 2 else np.full(max(1, len(PERMS[r])), -1)


def t_conv_out(shape, b, ob, of):
    r = len(shape)
    P = PERMS[r]
    S = np.asarray(shape, dtype=np.float64)
    m, s = P[:, 0], P[:, 1]
    kind = np.where(m == of, 1.0, np.where(m == ob, 0.9, 0.45))
    lane = 0.15 + 0.85 * lane_u(S[m])
    sub = S[s] / ceil_to(S[s], subtile(b))
    return kind * lane * (0.75 + 0.25 * sub)


def t_conv_in(shape, b, ib, if_):
    r = len(shape)
    P = PERMS[r]
    S = np.asarray(shape, dtype=np.float64)
    m, s = P[:, 0], P[:, 1]
    kind = np.where(m == if_, 1.0, np.where(m == ib, 0.85, 0.5))
    lane = 0.15 + 0.85 * lane_u(S[m])
    sub = S[s] / ceil_to(S[s], subtile(b))
    return kind * lane * (0.8 + 0.2 * sub)


def t_conv_k(shape, b, kif, kof):
    r = len(shape)
    P = PERMS[r]
    S = np.asarray(shape, dtype=np.float64)
    m, s = P[:, 0], P[:, 1]
    tr = 0.93 if b >= 4 else 0.85
    best = (m == kof) & (s == kif)
    trn = (m == kif) & (s == kof)
    one = np.isin(m, [kif, kof]) | np.isin(s, [kif, kof])
    kind = np.where(best, 1.0, np.where(trn, tr, np.where(one, 0.7, 0.5)))
    return kind * (0.5 + 0.5 * lane_u(S[m]))


def t_dot_lhs(shape, b):
    r = len(shape)
    P = PERMS[r]
    S = np.asarray(shape, dtype=np.float64)
    m = P[:, 0]
    K, M = r - 1, r - 2
    trn = 0.8 if b >= 4 else 0.62
    kind = np.where(m == K, 1.0, np.where(m == M, trn, 0.3))
    out = kind * (0.15 + 0.85 * lane_u(S[m]))
    if r >= 2:
        s = P[:, 1]
        out = out * (0.8 + 0.2 * S[s] / ceil_to(S[s], subtile(b)))
    return out


def t_dot_rhs(shape, b):
    r = len(shape)
    P = PERMS[r]
    S = np.asarray(shape, dtype=np.float64)
    m = P[:, 0]
    N, K = r - 1, r - 2
    kind = np.where(m == N, 1.0, np.where(m == K, 0.9, 0.3))
    return kind * (0.15 + 0.85 * lane_u(S[m]))


def t_dot_out(shape, b):
    r = len(shape)
    P = PERMS[r]
    S = np.asarray(shape, dtype=np.float64)
    m = P[:, 0]
    N, M = r - 1, r - 2
    kind = np.where(m == N, 1.0, np.where(m == M, 0.85, 0.3))
    out = kind * (0.15 + 0.85 * lane_u(S[m]))
    if r >= 2:
        s = P[:, 1]
        out = out * (0.75 + 0.25 * S[s] / ceil_to(S[s], subtile(b)))
    return out


def is_bitcast_reshape(sin, pin, sout, pout, b):
    ri, ro = len(sin), len(sout)
    at = reshape_atoms(sin, sout)
    if at is None:
        ok = tuple(pin) == rm(ri) and tuple(pout) == rm(ro)
    else:
        A, B = at
        ok = phys_atoms(A, pin) == phys_atoms(B, pout)
    if not ok:
        return False, True
    mi = sin[pin[0]] if ri else 1
    mo = sout[pout[0]] if ro else 1
    lane_ok = (mi == mo) or (mi % 128 == 0 and mo % 128 == 0)
    si = sin[pin[1]] if ri >= 2 else 1
    so = sout[pout[1]] if ro >= 2 else 1
    st = subtile(b)
    sub_ok = (si == so) or (si % st == 0 and so % st == 0)
    return bool(lane_ok and sub_ok), not (mi == mo)


def copy_cost(g, o, cf, ct):
    r = g.rank[o]
    if r == 0:
        return np.where(np.asarray(cf) != np.asarray(ct), OVH_COPY, 0.0)
    b = int(g.b[o])
    pb = padvol_table(g.shape[o], b) * b
    mt = minor_tbl(r)
    lane = (mt[cf] != mt[ct]).astype(np.float64)
    if r >= 2:
        st = second_tbl(r)
        sub = (st[cf] != st[ct]).astype(np.float64)
    else:
        sub = 0.0
    f = 1.0 + 0.35 * sub + lane * (1.0 + (0.5 if b <= 2 else 0.0))
    cost = OVH_COPY + (pb[cf] + pb[ct]) / BW * f
    return np.where(np.asarray(cf) != np.asarray(ct), cost, 0.0)


def decode_block(blk, base, r, follow):
    """blk: (c,6) floats.  Returns (c,) codes; -1 = follow operand."""
    c = blk.shape[0]
    if r == 0:
        return np.zeros(c, dtype=np.int64) if not follow else np.full(c, -1, dtype=np.int64)
    b = np.rint(blk).astype(np.int64)
    u, inv = np.unique(b, axis=0, return_inverse=True)
    codes = np.empty(len(u), dtype=np.int64)
    for k, row in enumerate(u):
        if np.all(row == -1):
            codes[k] = -1 if follow else PIDX[r][tuple(base)]
            continue
        spec = []
        for v in row:
            if v < 0:
                break
            if v < r and v not in spec:
                spec.append(int(v))
        rest = [d for d in base if d not in spec]
        codes[k] = PIDX[r][tuple(spec + rest)]
    return codes[np.asarray(inv).reshape(-1)]


def conv_roles(g, i):
    ops = g.ops[i]
    if len(ops) < 2:
        return None
    cd = g.cdn[i]
    ib, if_, kif, kof, ob, of = cd[0], cd[1], cd[6], cd[7], cd[12], cd[13]
    so = g.shape[i]
    for x, w in ((ops[0], ops[1]), (ops[1], ops[0])):
        sx, sw = g.shape[x], g.shape[w]
        if len(sx) != len(so) or len(sw) != len(so):
            continue
        if max(ib, if_) >= len(sx) or max(kif, kof) >= len(sw) or max(ob, of) >= len(so):
            continue
        if sw[kof] == so[of] and sx[ib] == so[ob] and sx[if_] % max(1, sw[kif]) == 0:
            return x, w
    x, w = ops[0], ops[1]
    if len(g.shape[x]) == len(so) and len(g.shape[w]) == len(so):
        return x, w
    return None


def dot_roles(g, i):
    ops = g.ops[i]
    if len(ops) == 1:
        ops = [ops[0], ops[0]]
    if len(ops) < 2:
        return None
    so = g.shape[i]
    for a, b in ((ops[0], ops[1]), (ops[1], ops[0])):
        sa, sb = g.shape[a], g.shape[b]
        if len(sa) >= 2 and len(sb) >= 2 and len(so) >= 2 and sa[-1] == sb[-2] \
                and so[-1] == sb[-1] and so[-2] == sa[-2]:
            return a, b
    return None


def layout_law(nf, opc, ei, cids, ncf, parts=None):
    g = parse(nf, opc, ei)
    c = ncf.shape[0]
    cfg = {int(i): k for k, i in enumerate(cids)}
    OV, IV, KV = {}, {}, {}
    role = {}
    for i, k in cfg.items():
        r = g.rank[i]
        OV[i] = decode_block(ncf[:, k, 0:6], g.lay[i], r, follow=False)
        op = g.op[i]
        x = w = None
        if op == 26:
            rr = conv_roles(g, i)
            if rr:
                x, w = rr
        elif op == 34:
            rr = dot_roles(g, i)
            if rr:
                x, w = rr
        elif g.ops[i]:
            x = g.ops[i][0]
        role[i] = (x, w)
        if x is not None:
            IV[i] = decode_block(ncf[:, k, 6:12], g.lay[x], g.rank[x], follow=True)
        if w is not None and op == 26:
            KV[i] = decode_block(ncf[:, k, 12:18], g.lay[w], g.rank[w], follow=True)
    # layout sources
    src = [None] * g.n
    for i in range(g.n):
        if i in cfg:
            src[i] = ('v', i)
            continue
        if g.op[i] in EW_OPS and g.rank[i] >= 1:
            prim = None
            for o in g.ops[i]:
                if g.shape[o] == g.shape[i] and g.op[o] not in FLEX_OPS:
                    prim = o
                    break
            if prim is None:
                for o in g.ops[i]:
                    if g.shape[o] == g.shape[i]:
                        prim = o
                        break
            if prim is not None:
                src[i] = src[prim]
                continue
        src[i] = ('f', int(g.lcode[i]))

    def code(i):
        s = src[i]
        return OV[s[1]] if s[0] == 'v' else s[1]

    def prim_of(i):
        for o in g.ops[i]:
            if g.shape[o] == g.shape[i] and g.op[o] not in FLEX_OPS:
                return o
        for o in g.ops[i]:
            if g.shape[o] == g.shape[i]:
                return o
        return None

    escapes = np.zeros(g.n, dtype=bool)
    for i in range(g.n):
        cs = g.cons[i]
        escapes[i] = g.root[i] or len(cs) != 1 or (g.op[cs[0]] not in EW_OPS)

    def pb(i):
        return padvol_table(g.shape[i], int(g.b[i])) * float(g.b[i])

    def materialized(o):
        return (g.op[o] not in EW_OPS) or escapes[o]

    total = np.zeros(c, dtype=np.float64)
    const = 60000.0   # program launch, host sync, infeed/outfeed

    def put(cat, v):
        if parts is not None:
            parts[cat] = parts.get(cat, 0.0) + v
        return v

    for i in range(g.n):
        op = int(g.op[i])
        r = g.rank[i]
        if op in FREE_OPS:
            continue
        if op in EW_OPS:
            ci = code(i)
            pv = padvol_table(g.shape[i], int(g.b[i]))
            w = HEAVY_W.get(op, 1.0)
            cost = pv[ci] * w / VPU
            if escapes[i]:
                cost = cost + pv[ci] * g.b[i] / BW + OVH
            prim = prim_of(i)
            for o in g.ops[i]:
                if g.op[o] in FLEX_OPS or g.shape[o] != g.shape[i]:
                    if g.op[o] not in FLEX_OPS:
                        cost = cost + g.vol[o] * g.b[o] / BW
                    continue
                co = code(o)
                if materialized(o):
                    cost = cost + pb(o)[co] / BW
                if o != prim:
                    total += put('ew_mismatch', copy_cost(g, o, co, ci) +
                                 np.where(np.asarray(co) != np.asarray(ci), FUSEBREAK, 0.0))
            total += put('ew', cost)
            continue
        if op == 26 or op == 34:
            rr = role.get(i) if i in cfg else None
            if rr is None or rr[0] is None:
                rr = conv_roles(g, i) if op == 26 else dot_roles(g, i)
            if rr is None:
                const += OVH + g.vol[i] * g.b[i] / BW
                continue
            x, w = rr
            co = code(i)
            cx, cw = code(x), code(w)
            ix = cx
            if i in IV:
                ix = np.where(IV[i] < 0, cx, IV[i])
            kw = cw
            if i in KV:
                kw = np.where(KV[i] < 0, cw, KV[i])
            b = int(g.b[i])
            bx, bw_ = int(g.b[x]), int(g.b[w])
            if op == 26:
                cd = g.cdn[i]
                ib, if_, kif, kof, ob, of = (int(v) for v in (cd[0], cd[1], cd[6], cd[7], cd[12], cd[13]))
                sx, sw, so = g.shape[x], g.shape[w], g.shape[i]
                if max(ib, if_) >= len(sx) or max(kif, kof) >= len(sw) or max(ob, of) >= len(so):
                    const += OVH + g.vol[i] * b / BW
                    continue
                nsp = len(so) - 2
                ksp = [int(v) for v in cd[8:8 + nsp]] if nsp <= 4 else []
                kvol = float(np.prod([sw[d] for d in ksp if d < len(sw)])) if ksp else 1.0
                flops = 2.0 * g.vol[i] * kvol * sw[kif]
                e_o = cached(('co', so, b, ob, of), lambda: t_conv_out(so, b, ob, of))
                e_i = cached(('ci', sx, bx, ib, if_), lambda: t_conv_in(sx, bx, ib, if_))
                e_k = cached(('ck', sw, bw_, kif, kof), lambda: t_conv_k(sw, bw_, kif, kof))
                eff = np.maximum(e_o[co] ** 0.6 * e_i[ix] ** 0.7 * e_k[kw], 0.02)
            else:
                sx, sw, so = g.shape[x], g.shape[w], g.shape[i]
                M, K, N = sx[-2], sx[-1], sw[-1]
                batch = float(np.prod(sx[:-2])) if len(sx) > 2 else 1.0
                flops = 2.0 * batch * M * K * N
                e_o = cached(('do', so, b), lambda: t_dot_out(so, b))
                e_i = cached(('dl', sx, bx), lambda: t_dot_lhs(sx, bx))
                e_k = cached(('dr', sw, bw_), lambda: t_dot_rhs(sw, bw_))
                eff = np.maximum(e_o[co] ** 0.6 * e_i[ix] ** 0.7 * e_k[kw] ** 0.5, 0.02)
            rate = PEAK16 if min(bx, bw_) <= 2 else PEAK32
            comp = flops / rate / eff
            mem = (pb(x)[ix] + pb(w)[kw] + pb(i)[co]) / BW
            t = OVH + np.maximum(comp, mem) + 0.2 * np.minimum(comp, mem)
            total += put('conv' if op == 26 else 'dot', t)
            total += put('heavy_copy', copy_cost(g, x, cx, ix) + copy_cost(g, w, cw, kw))
            continue
        if op in (75, 98, 27):
            if not g.ops[i]:
                continue
            x = g.ops[i][0]
            cx = code(x)
            ix = cx
            if i in IV:
                ix = np.where(IV[i] < 0, cx, IV[i])
            co = code(i)
            total += put('rt_copy', copy_cost(g, x, cx, ix))
            ixa = np.broadcast_to(np.asarray(ix), (c,))
            coa = np.broadcast_to(np.asarray(co), (c,))
            pairs, inv = np.unique(np.stack([ixa, coa], 1), axis=0, return_inverse=True)
            vals = np.empty(len(pairs))
            sx, so = g.shape[x], g.shape[i]
            bx = int(g.b[x])
            pbx, pbo = pb(x), pb(i)
            rx, ro = g.rank[x], g.rank[i]
            for k, (a, bcode) in enumerate(pairs):
                pin = tuple(PERMS[rx][a]) if rx else ()
                pout = tuple(PERMS[ro][bcode]) if ro else ()
                if op == 75:
                    free, lanechg = is_bitcast_reshape(sx, pin, so, pout, bx)
                elif op == 98:
                    perm = [int(v) for v in g.dims[i, :ro]]
                    mapped = tuple(perm[d] for d in pout) if sorted(perm) == list(range(ro)) else None
                    free = mapped == pin
                    lanechg = (mapped is None) or (not ro) or mapped[0] != pin[0]
                else:
                    free = False
                    lanechg = (rx and ro and pin[0] != pout[0])
                if free:
                    vals[k] = 0.0
                else:
                    f = (2.0 if lanechg else 1.2) * (1.3 if (lanechg and bx <= 2) else 1.0)
                    vals[k] = OVH + (pbx[a] + pbo[bcode]) / BW * f
            total += put('reshape' if op == 75 else 'transpose', vals[np.asarray(inv).reshape(-1)])
            continue
        if op == 70:
            xs = [o for o in g.ops[i] if g.rank[o] > r]
            if not xs:
                const += OVH
                continue
            x = xs[0]
            cx = code(x)
            rx = g.rank[x]
            nred = rx - r
            rd = set(int(v) for v in g.dims[i, :nred])
            mt = minor_tbl(rx)
            st = second_tbl(rx)
            fl = np.array([1.45 if m in rd else 1.0 for m in range(rx)] + [1.0])
            fs = np.array([1.15 if s in rd else 1.0 for s in range(rx)] + [1.0])
            f = fl[mt[cx]] * fs[st[cx]] * (1.1 if g.b[x] <= 2 else 1.0)
            total += put('reduce', OVH + pb(x)[cx] / BW * f + pb(i)[int(g.lcode[i])] / BW)
            continue
        # other ops: fixed output layout, relayout mismatching same-rank operands
        k = {5: 3.0, 104: 3.0, 111: 3.0, 42: 1.5, 82: 2.0, 93: 6.0, 92: 0.6, 35: 0.3,
             36: 0.5, 72: 1.3, 84: 2.5, 76: 1.2, 62: 1.0, 22: 1.0, 31: 1.0}.get(op, 1.0)
        extra = 4000.0 if op in (5, 104, 111) else 0.0
        own = int(g.lcode[i])
        cost = OVH + extra + pb(i)[own] / BW * k
        for o in g.ops[i]:
            if g.rank[o] == 0 or g.op[o] in FLEX_OPS:
                continue
            co = code(o)
            cost = cost + pb(o)[co] / BW * k
            if g.rank[o] == r and r >= 1:
                # a same-rank operand must arrive in this op's own (fixed) layout
                total += put('other_copy', copy_cost(g, o, co, own))
        total += put('other', cost)
    return total + const


# ========================================================================================
# layout config generation
# ========================================================================================
def rand_blocks(rng, r, c, p_partial):
    b = np.full((c, 6), -1.0, dtype=np.float32)
    if r == 0:
        return b
    perm = np.argsort(rng.random((c, r)), axis=1)
    b[:, :r] = perm
    if r >= 3:
        part = rng.random(c) < p_partial
        b[part, 2:] = -1
    return b


def rand_block(rng, r, p_partial, allow_default=True):
    b = [-1] * 6
    if r == 0:
        return b
    if r >= 3 and rng.random() < p_partial:
        dd = rng.choice(r, size=2, replace=False)
        b[0], b[1] = int(dd[0]), int(dd[1])
        return b
    p = rng.permutation(r)
    b[:r] = [int(v) for v in p]
    return b


def near_block(rng, r, base, p_partial):
    """A block close to a default order: keep the minor dim, vary the rest."""
    b = [-1] * 6
    if r == 0:
        return b
    if r == 1:
        b[0] = 0
        return b
    if rng.random() < 0.05:
        return rand_block(rng, r, p_partial)
    m = base[0]
    rest = [d for d in base[1:]]
    if r >= 3 and rng.random() < p_partial:
        b[0] = m
        b[1] = int(rng.choice(rest))
        return b
    rng.shuffle(rest)
    b[:r] = [m] + [int(v) for v in rest]
    return b


def gen_layout_configs(rng, g, cids, c, search):
    nc = len(cids)
    out = np.full((c, nc, 18), -1.0, dtype=np.float32)
    info = []
    for i in cids:
        op = int(g.op[i])
        x = w = None
        if op == 26:
            rr = conv_roles(g, i)
            if rr:
                x, w = rr
        elif op == 34:
            rr = dot_roles(g, i)
            if rr:
                x = rr[0]
        elif g.ops[i]:
            x = g.ops[i][0]
        info.append((g.rank[i], g.lay[i], g.rank[x] if x is not None else 0,
                     g.lay[x] if x is not None else (), g.rank[w] if w is not None else 0,
                     g.lay[w] if w is not None else (), x is not None, w is not None))
    if search == 'random':
        p_def = rng.uniform(0.03, 0.3)
        p_part = rng.uniform(0.2, 0.8)
        p_in = rng.uniform(0.3, 0.9)
        for j, (ro, lo, ri, li, rk, lk, hx, hw) in enumerate(info):
            blk = rand_blocks(rng, ro, c, p_part)
            blk[rng.random(c) < p_def] = -1
            out[:, j, 0:6] = blk
            if hx:
                blk = rand_blocks(rng, ri, c, p_part)
                blk[rng.random(c) >= p_in] = -1
                out[:, j, 6:12] = blk
            if hw:
                blk = rand_blocks(rng, rk, c, p_part)
                blk[rng.random(c) >= p_in] = -1
                out[:, j, 12:18] = blk
        ndup = int(c * rng.uniform(0.0, 0.12))
        for _ in range(ndup):
            a, b = int(rng.integers(c)), int(rng.integers(c))
            out[b] = out[a]
        return out
    # default-search style: perturbations of the default, focused on a hot set
    hot = rng.choice(nc, size=max(1, int(nc * rng.uniform(0.08, 0.35))), replace=False)
    p_part = rng.uniform(0.3, 0.9)
    for t in range(1, c):
        u = rng.random()
        if u < 0.08:
            out[t] = out[int(rng.integers(t))]
            continue
        if u < 0.45:
            cur = out[0].copy()
        else:
            cur = out[max(0, t - 1 - int(rng.geometric(0.3)))].copy()
        m = 1 + int(rng.geometric(0.55)) - 1
        for _ in range(max(1, m)):
            j = int(rng.choice(hot)) if rng.random() < 0.85 else int(rng.integers(nc))
            ro, lo, ri, li, rk, lk, hx, hw = info[j]
            if rng.random() < 0.25:
                cur[j] = -1
                continue
            which = rng.random()
            if which < 0.5 or not hx:
                cur[j, 0:6] = near_block(rng, ro, lo, p_part)
            elif which < 0.8 or not hw:
                cur[j, 6:12] = near_block(rng, ri, li, p_part)
            else:
                cur[j, 12:18] = near_block(rng, rk, lk, p_part)
        out[t] = cur
    return out


# ========================================================================================
# TILE graphs, configs and law
# ========================================================================================
def tile_graph(rng, scale):
    lo, hi = (10, 40) if scale == 'tiny' else (10, 60)
    for _ in range(60):
        hb = HB(rng)
        kind = pick(rng, ['ew', 'reduce', 'dot', 'conv', 'transpose'], [0.24, 0.22, 0.24, 0.18, 0.12])
        try:
            meta = _tile_body(hb, rng, kind, int(rng.integers(lo, hi + 1)))
        except AssertionError:
            continue
        arrs, gid, seq = finalize(hb, kind='tile')
        n = len(seq)
        if lo <= n <= hi and tile_space(arrs) >= 12:
            return arrs, kind, meta
    raise RuntimeError('tile graph sampling failed')


def _ew_chain(hb, rng, x, n_ops, extras):
    """Apply a chain of elementwise ops to x using extra operands (same shape)."""
    for _ in range(n_ops):
        u = rng.random()
        if u < 0.35 and extras:
            y = extras[int(rng.integers(len(extras)))]
            x = hb.ew(pick(rng, ['add', 'multiply', 'subtract', 'maximum']), x, y)
        elif u < 0.6:
            x = hb.ew(pick(rng, ['add', 'multiply', 'maximum', 'minimum']), x, hb.scal(x))
        elif u < 0.85:
            x = hb.ew(pick(rng, ['exponential', 'tanh', 'logistic', 'rsqrt', 'negate', 'abs', 'log']), x)
        else:
            m = hb.ew('compare', x, hb.scal(x))
            x = hb.ew('select', m, x, hb.scal(x))
    return x


def _tile_shape(rng, r):
    pools = {2: [[8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192], [64, 128, 256, 384, 512, 768, 1000, 1024, 2048, 4096]],
             3: [[1, 2, 4, 8, 16, 32], [16, 32, 64, 128, 256, 512], [64, 128, 256, 512, 768, 1024]],
             4: [[1, 2, 4, 8, 16, 32, 64, 128], [7, 8, 12, 14, 16, 28, 32, 56], [7, 8, 12, 14, 16, 28, 32, 56], [32, 64, 96, 128, 192, 256, 384, 512]]}
    return [int(pick(rng, p)) for p in pools[r]]


def _rand_lay(rng, r, p_rm=0.7):
    if rng.random() < p_rm:
        return rm(r)
    return tuple(int(v) for v in rng.permutation(r))


def _tile_body(hb, rng, kind, target):
    dt = pick(rng, ['f32', 'bf16'], [0.5, 0.5])
    lams = []
    hb.begin('fused')
    params = []

    def P(shape, d, lay=None):
        p = hb.param(shape, d, lay)
        params.append(p)
        return p

    budget = max(2, target - 8)
    meta = {}
    if kind == 'ew' or kind == 'transpose':
        r = int(pick(rng, [2, 3, 4], [0.35, 0.35, 0.3]))
        sh = _tile_shape(rng, r)
        lay = _rand_lay(rng, r, 0.6)
        ins = [P(sh, dt, lay) for _ in range(int(rng.integers(1, 4)))]
        x = ins[0]
        if rng.random() < 0.5:
            bp = P([sh[-1]], dt)
            ins.append(hb.bcast(bp, sh, [r - 1], lay))
        nops = max(1, budget // 2 - len(ins))
        x = _ew_chain(hb, rng, x, nops, ins[1:])
        if kind == 'transpose':
            if rng.random() < 0.5:
                perm = list(rng.permutation(r))
                while perm == list(range(r)):
                    perm = list(rng.permutation(r))
                x = hb.transpose(x, perm, bitcast=False)
            else:
                newlay = _rand_lay(rng, r, 0.0)
                while newlay == hb.L(x):
                    newlay = _rand_lay(rng, r, 0.0)
                x = hb.add('copy', hb.S(x), hb.D(x), [x], newlay)
            x = _ew_chain(hb, rng, x, max(1, budget // 4), [])
        if rng.random() < 0.3:
            x = hb.cvt(x, 'bf16' if dt == 'f32' else 'f32')
        root = x
        if rng.random() < 0.25 and kind == 'ew':
            y = hb.ew('compare', x, hb.scal(x))
            root = hb.tuple_([x, y])
    elif kind == 'reduce':
        r = int(pick(rng, [2, 3, 4], [0.45, 0.35, 0.2]))
        sh = _tile_shape(rng, r)
        lay = _rand_lay(rng, r, 0.7)
        x = P(sh, dt, lay)
        xf = hb.cvt(x, 'f32')
        sub = rng.random() < 0.55    # row-normalise (softmax / layernorm)
        if sub:
            rd = [r - 1] if rng.random() < 0.7 else [int(rng.integers(r))]
            keep = [d for d in range(r) if d not in rd]
            m = hb.reduce(xf, rd, pick(rng, ['maximum', 'add']))
            c = hb.ew('subtract', xf, hb.bcast(m, sh, keep, hb.L(xf)))
            e = _ew_chain(hb, rng, c, max(1, budget // 3), [])
            s = hb.reduce(e, rd)
            y = hb.ew('divide', e, hb.bcast(s, sh, keep, hb.L(e)))
            y = _ew_chain(hb, rng, y, max(0, budget // 4), [])
            root = hb.cvt(y, dt)
        else:
            nred = int(rng.integers(1, r))
            rd = sorted(int(v) for v in rng.choice(r, size=nred, replace=False))
            y = _ew_chain(hb, rng, xf, max(1, budget // 2), [])
            s1 = hb.reduce(y, rd)
            if rng.random() < 0.5:
                s2 = hb.reduce(hb.ew('multiply', y, y), rd)
                root = hb.tuple_([s1, s2])
            else:
                root = s1
        meta['rd'] = rd
    elif kind == 'dot':
        batched = rng.random() < 0.25
        M = int(pick(rng, [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]))
        K = int(pick(rng, [64, 128, 256, 512, 768, 1024, 2048, 4096]))
        N = int(pick(rng, [64, 128, 256, 384, 512, 1000, 1024, 2048, 4096]))
        pre = [int(pick(rng, [2, 4, 8, 12, 16]))] if batched else []
        a = P(pre + [M, K], dt, _rand_lay(rng, len(pre) + 2, 0.8))
        b = P(pre + [K, N], 'f32' if rng.random() < 0.3 else dt, _rand_lay(rng, len(pre) + 2, 0.6))
        if rng.random() < 0.4:
            a = _ew_chain(hb, rng, a, int(rng.integers(1, 3)), [])
        bb = hb.cvt(b, dt)
        y = hb.dot(a, bb)
        bias = P([N], dt)
        y = hb.ew('add', y, hb.bcast(bias, hb.S(y), [len(pre) + 1], hb.L(y)))
        y = _ew_chain(hb, rng, y, max(1, budget // 2 - 4), [])
        root = y
    else:  # conv
        B = int(pick(rng, [1, 2, 4, 8, 16, 32, 64, 128]))
        Hs = int(pick(rng, [7, 8, 14, 16, 28, 32, 56]))
        Ci = int(pick(rng, [3, 16, 32, 64, 96, 128, 192, 256, 512]))
        Co = int(pick(rng, [32, 64, 96, 128, 192, 256, 384, 512]))
        k = int(pick(rng, [1, 3, 5]))
        st = 1 if rng.random() < 0.8 else 2
        nchw = rng.random() < 0.3
        if nchw:
            xs, lay, cdn = [B, Ci, Hs, Hs], (1, 3, 2, 0), dict(ib=0, if_=1, isp=[2, 3], kif=2, kof=3, ksp=[0, 1], ob=0, of=1)
        else:
            xs, lay, cdn = [B, Hs, Hs, Ci], (3, 0, 2, 1) if rng.random() < 0.4 else (3, 2, 1, 0), \
                dict(ib=0, if_=3, isp=[1, 2], kif=2, kof=3, ksp=[0, 1], ob=0, of=3)
        x = P(xs, dt, lay)
        w = P([k, k, Ci, Co], dt, rm(4))
        pl = (k - 1) // 2
        win = [dict(sz=k, st=st, pl=pl, ph=k - 1 - pl, wd=1, bd=1, rev=0) for _ in range(2)]
        olay = lay
        y = hb.conv(x, w, cdn, win, lay=olay)
        bias = P([Co], dt)
        y = hb.ew('add', y, hb.bcast(bias, hb.S(y), [cdn['of']], hb.L(y)))
        y = _ew_chain(hb, rng, y, max(1, budget // 2 - 4), [])
        root = y
    hb.end(root)
    hb.begin('outer')
    outer = [hb.param(hb.S(p), hb.D(p), hb.L(p)) for p in params]
    rs, rd_, rl = hb.S(root), hb.D(root), hb.L(root)
    fus = hb.add('fusion', rs, rd_, [root] + outer, rl, tup=hb.nodes[root]['at'].get('tup', 0))
    hb.end(fus)
    return meta


def tile_info(nf, opc, ei):
    g = parse(nf, opc, ei)
    fus = g.n - 1
    broot = [o for o in g.allops[fus] if g.root[o]]
    broot = broot[-1] if broot else fus - 1
    body = set()
    st = [broot]
    while st:
        u = st.pop()
        if u in body:
            continue
        body.add(u)
        st.extend(g.allops[u])
    body = sorted(body)
    ops_in = set(int(g.op[u]) for u in body)
    kind = 'ew'
    if 26 in ops_in:
        kind = 'conv'
    elif 34 in ops_in:
        kind = 'dot'
    elif any(g.op[u] == 70 and any(g.rank[o] > g.rank[u] for o in g.ops[u]) for u in body):
        kind = 'reduce'
    elif 98 in ops_in or 27 in ops_in:
        kind = 'transpose'
    if g.dti[broot] == DT_IDX['tuple']:
        outs = [o for o in g.ops[broot] if g.rank[o] >= 1]
    else:
        outs = [broot]
    out = max(outs, key=lambda o: (g.vol[o], -o))
    return g, body, kind, out, outs


def phys(g, i):
    lay = g.lay[i]
    return list(reversed(lay))


def extents(bounds, D):
    r = len(D)
    e = np.zeros_like(bounds, dtype=np.float64)
    for p in range(r):
        unit = 128 if p == r - 1 else (8 if p == r - 2 else 1)
        bb = bounds[:, p].astype(np.float64)
        e[:, p] = np.where(bb <= 0, D[p], np.minimum(np.maximum(bb, 1) * unit, D[p]))
    return e


def tile_law(nf, opc, ei, cf):
    g, body, kind, out, outs = tile_info(nf, opc, ei)
    c = cf.shape[0]
    po = phys(g, out)
    r = len(po)
    D = np.array([g.shape[out][d] for d in po], dtype=np.float64)
    if r == 0:
        return np.full(c, OVH + 500.0)
    bo = int(g.b[out])
    e = extents(np.rint(cf[:, 8:8 + r]), D)
    ntile = np.prod(np.ceil(D / e), axis=1)
    ep = e.copy()
    ep[:, -1] = ceil_to(e[:, -1], 128)
    if r >= 2:
        ep[:, -2] = ceil_to(e[:, -2], subtile(bo))
    tvol = np.prod(e, axis=1)
    tpvol = np.prod(ep, axis=1)
    W = ntile * tpvol
    out_bytes_pe = float(sum(g.b[o] * g.vol[o] for o in outs)) / g.vol[out]
    opw = 0.0
    for u in body:
        if g.op[u] in EW_OPS and g.rank[u] >= 1:
            opw += HEAVY_W.get(int(g.op[u]), 1.0) * g.vol[u] / g.vol[out]
    params = [u for u in body if g.op[u] == 63 and g.rank[u] >= 1]
    # contiguous run for DMA of output tiles
    if r >= 2:
        run = np.where(e[:, -1] >= D[-1], e[:, -1] * e[:, -2], e[:, -1]) * bo
    else:
        run = e[:, -1] * bo
    dma = run / (run + 384.0)
    fill_base = tpvol * bo / BW

    def finish(mem_bytes, comp, ws, steps, extra=0.0):
        mem = mem_bytes / BW
        spill = ws > VMEM_BUDGET
        over = np.maximum(ws / VMEM_BUDGET - 1.0, 0.0)
        mem = np.where(spill, mem * (1.8 + 1.5 * np.sqrt(over)), mem)
        t = 2000.0 + np.maximum(mem, comp) + 0.15 * np.minimum(mem, comp) + steps * STEP \
            + fill_base + extra + np.where(spill, 3000.0, 0.0)
        return t

    if kind in ('ew', 'transpose'):
        stream = [p for p in params if g.vol[p] >= 0.5 * g.vol[out]]
        small = [p for p in params if p not in stream]
        sb = sum(float(g.b[p]) * g.vol[p] / g.vol[out] for p in stream)
        small_b = sum(float(g.b[p]) * g.vol[p] for p in small)
        per = sb + out_bytes_pe
        if kind == 'transpose':
            # read runs along the input's minor dim
            src = stream[0] if stream else out
            pin = phys(g, src)
            smin = pin[-1]
            # find the output logical dim that carries the input's minor dim
            tr = [u for u in body if g.op[u] in (98, 27)]
            tnode = tr[0]
            if g.op[tnode] == 98:
                perm = [int(v) for v in g.dims[tnode, :g.rank[tnode]]]
                outdim = perm.index(smin) if smin in perm else po[-1]
            else:
                outdim = smin
            pos = po.index(outdim) if outdim in po else r - 1
            rin = e[:, pos] * g.b[src]
            rin = np.where(e[:, pos] >= D[pos], rin * 4.0, rin)
            rdma = rin / (rin + 384.0)
            lanechg = 1.0 if pos != r - 1 else 0.0
            mem_bytes = W * (sb / rdma + out_bytes_pe / dma) + ntile * np.minimum(small_b, tpvol * 4)
            comp = W * (opw + 3.0 * lanechg) / VPU
        else:
            mem_bytes = W * per / dma + ntile * np.minimum(small_b, tpvol * 4)
            comp = W * opw / VPU
        ws = 2.0 * tpvol * per
        return finish(mem_bytes, comp, ws, ntile)

    if kind == 'reduce':
        red = [u for u in body if g.op[u] == 70 and any(g.rank[o] > g.rank[u] for o in g.ops[u])]
        rn = red[0]
        x = [o for o in g.ops[rn] if g.rank[o] > g.rank[rn]][0]
        rx = g.rank[x]
        rd = [int(v) for v in g.dims[rn, :rx - g.rank[rn]]]
        inp = max(params, key=lambda p: g.vol[p]) if params else x
        b_in = float(g.b[inp])
        if g.shape[out] == g.shape[x] or g.vol[out] >= g.vol[x]:
            # row-normalise: tile over the same iteration space
            posr = [po.index(d) for d in rd if d in po]
            whole = np.all(e[:, posr] >= D[posr], axis=1) if posr else np.ones(c, bool)
            lane_red = (r - 1) in posr
            passes = np.where(whole, 1.0, 2.0)
            mem_bytes = W * (b_in * passes + out_bytes_pe) / dma
            comp = W * opw / VPU * (1.5 if lane_red else 1.0) * np.where(whole, 1.0, 1.3)
            ws = 2.0 * tpvol * (b_in + out_bytes_pe) + tpvol * 4
            steps = ntile * passes
            extra = np.where(whole, 0.0, ntile * 600.0)
            return finish(mem_bytes, comp, ws, steps, extra)
        # reduce to smaller output: each output tile iterates the full reduced dims
        rsize = float(np.prod([g.shape[x][d] for d in rd]))
        slab = tpvol * rsize * b_in
        chunks = np.maximum(1.0, np.ceil(2.0 * slab / VMEM_BUDGET))
        pin = phys(g, x)
        lane_red = pin[-1] in rd
        in_run = g.shape[x][pin[-1]] * b_in if lane_red else np.minimum(e[:, -1], D[-1]) * b_in
        in_dma = in_run / (in_run + 384.0)
        mem_bytes = W * rsize * b_in / in_dma + W * out_bytes_pe / dma + (chunks - 1) * ntile * tpvol * 8
        comp = W * max(opw, rsize) / VPU * (1.5 if lane_red else 1.0)
        ws = np.minimum(2.0 * slab, VMEM_BUDGET * 0.9) + tpvol * 8
        steps = ntile * chunks
        extra = np.where(chunks > 1, ntile * chunks * 400.0, 0.0)
        return finish(mem_bytes, comp, ws, steps, extra)

    # dot / conv
    hv = [u for u in body if g.op[u] in (34, 26)][0]
    if kind == 'dot':
        rr = dot_roles(g, hv)
        if rr is None:
            return finish(W * out_bytes_pe, W * opw / VPU, 2.0 * tpvol * out_bytes_pe, ntile)
        a, bnode = rr
        sa, sb = g.shape[a], g.shape[bnode]
        M, K, N = sa[-2], sa[-1], sb[-1]
        ro = g.rank[hv]
        mdim, ndim = ro - 2, ro - 1
        elog = np.ones((c, ro))
        for p, d in enumerate(po):
            if d < ro:
                elog[:, d] = e[:, p]
        Mt, Nt = elog[:, mdim], elog[:, ndim]
        Bt = np.prod(elog[:, :ro - 2], axis=1) if ro > 2 else np.ones(c)
        pk = phys(g, bnode)
        rk = len(pk)
        Dk = np.array([sb[d] for d in pk], dtype=np.float64)
        ke = extents(np.rint(cf[:, 0:rk]), Dk)
        klog = np.ones((c, rk))
        for p, d in enumerate(pk):
            klog[:, d] = ke[:, p]
        kK, kN = klog[:, rk - 2], klog[:, rk - 1]
        ksteps = np.ceil(K / kK)
        Ksz = float(K)
        halo = 1.0
        a_bytes = g.vol[a] * g.b[a]
        b_bytes = g.vol[bnode] * g.b[bnode]
        nNt = np.ceil(N / Nt)
        nMt = np.ceil(M / Mt)
    else:
        rr = conv_roles(g, hv)
        if rr is None:
            return finish(W * out_bytes_pe, W * opw / VPU, 2.0 * tpvol * out_bytes_pe, ntile)
        x, w = rr
        cd = g.cdn[hv]
        ib, if_, kif, kof, ob, of = (int(v) for v in (cd[0], cd[1], cd[6], cd[7], cd[12], cd[13]))
        so, sx, sw = g.shape[hv], g.shape[x], g.shape[w]
        ro = len(so)
        osp = [d for d in range(ro) if d not in (ob, of)]
        ksp = [int(v) for v in cd[8:8 + len(osp)]]
        elog = np.ones((c, ro))
        for p, d in enumerate(po):
            elog[:, d] = e[:, p]
        Nt = elog[:, of]
        Mt = elog[:, ob] * np.prod(elog[:, osp], axis=1)
        Bt = np.ones(c)
        M = float(so[ob] * np.prod([so[d] for d in osp]))
        N = float(so[of])
        pk = phys(g, w)
        rk = len(pk)
        Dk = np.array([sw[d] for d in pk], dtype=np.float64)
        ke = extents(np.rint(cf[:, 0:rk]), Dk)
        klog = np.ones((c, rk))
        for p, d in enumerate(pk):
            klog[:, d] = ke[:, p]
        kN = klog[:, kof]
        kK = klog[:, kif] * np.prod(klog[:, ksp], axis=1)
        Ksz = float(sw[kif] * np.prod([sw[d] for d in ksp]))
        ksteps = np.ceil(sw[kif] / klog[:, kif]) * np.prod(
            np.ceil(np.array([sw[d] for d in ksp])[None, :] / klog[:, ksp]), axis=1)
        st = g.win[hv, 8:8 + len(osp)]
        halo = np.ones(c)
        for s_, d in enumerate(osp):
            kk = sw[ksp[s_]]
            stv = max(1.0, float(st[s_]))
            es = elog[:, d]
            hf = (es * stv + kk - 1) / (es * stv)
            halo = halo * np.where(es >= so[d], 1.0, hf)
        a, bnode = x, w
        a_bytes = g.vol[a] * g.b[a]
        b_bytes = g.vol[bnode] * g.b[bnode]
        nNt = np.ceil(N / Nt)
        nMt = ntile / nNt
    restream = np.where(kN < Nt, np.ceil(Nt / kN), 1.0)
    waste = np.maximum(1.0, kN / Nt)
    acc = Mt * Bt * Nt * 4.0
    acc_spill = (acc > ACC_LIMIT) & (ksteps > 1)
    out_b = g.vol[out] * out_bytes_pe
    mem_bytes = a_bytes * halo * nNt + b_bytes * nMt * waste + out_b / dma + \
        np.where(acc_spill, g.vol[hv] * 8.0 * (ksteps - 1), 0.0)
    ba, bk = int(g.b[a]), int(g.b[bnode])
    rate = PEAK16 if min(ba, bk) <= 2 else PEAK32
    Kp = ceil_to(np.minimum(kK, Ksz), 128)
    flops = 2.0 * ntile * ksteps * ceil_to(Mt * Bt, 8) * ceil_to(Nt, 128) * Kp
    comp = flops / rate + W * opw / VPU
    ws = 2.0 * (Mt * Bt * kK * ba * halo + kK * np.maximum(kN, Nt) * bk) + np.minimum(acc, ACC_LIMIT * 2)
    steps = ntile * ksteps * restream
    return finish(mem_bytes, comp, ws, steps)


def tile_space(arrs):
    g, body, k2, out, outs = tile_info(arrs['node_feat'], arrs['node_opcode'], arrs['edge_index'])
    D = [g.shape[out][d] for d in phys(g, out)]
    sp = int(np.prod([len(s) for s in tile_candidates(D, None)])) if D else 1
    if k2 in ('dot', 'conv'):
        hv = [u for u in body if g.op[u] in (34, 26)][0]
        rr = dot_roles(g, hv) if k2 == 'dot' else conv_roles(g, hv)
        if rr:
            Dk = [g.shape[rr[1]][d] for d in phys(g, rr[1])]
            sp *= int(np.prod([len(s) for s in tile_candidates(Dk, None)]))
    return sp


def tile_candidates(D, rng):
    r = len(D)
    cands = []
    for p in range(r):
        unit = 128 if p == r - 1 else (8 if p == r - 2 else 1)
        U = int(math.ceil(D[p] / unit))
        if U <= 16:
            s = list(range(1, U + 1))
        else:
            s = sorted(set([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512][:]) & set(range(1, U + 1))
                       | {U} | {d for d in range(1, min(U, 64) + 1) if U % d == 0})
        cands.append(s)
    return cands


def default_tile(D, b, budget_bytes, lanes=4, rows=None):
    r = len(D)
    ext = [1] * r
    units = [128 if p == r - 1 else (8 if p == r - 2 else 1) for p in range(r)]
    U = [int(math.ceil(D[p] / units[p])) for p in range(r)]
    ext[r - 1] = min(U[r - 1], lanes)
    if r >= 2:
        ext[r - 2] = min(U[r - 2], rows if rows else (8 if b >= 4 else 16))
    for p in range(r - 3, -1, -1):
        vol = b * np.prod([min(ext[q] * units[q], D[q]) for q in range(r)])
        best = 1
        for cand in range(1, U[p] + 1):
            if U[p] % cand == 0 and vol * cand <= budget_bytes:
                best = cand
        ext[p] = best
    return ext


def gen_tile_configs(rng, nf, opc, ei, kind, c):
    g, body, k2, out, outs = tile_info(nf, opc, ei)
    po = phys(g, out)
    D = [g.shape[out][d] for d in po]
    r = len(D)
    kern = None
    if k2 in ('dot', 'conv'):
        hv = [u for u in body if g.op[u] in (34, 26)][0]
        rr = dot_roles(g, hv) if k2 == 'dot' else conv_roles(g, hv)
        if rr:
            kern = rr[1]
    cand_o = tile_candidates(D, rng)
    if kern is not None:
        pk = phys(g, kern)
        Dk = [g.shape[kern][d] for d in pk]
        cand_k = tile_candidates(Dk, rng)
    else:
        Dk, cand_k = [], []
    rows = []
    seen = set()
    # the compiler's default: the best of a few heuristic tilings under its own (imperfect)
    # cost model = this law times a deterministic per-candidate model error
    heur = []
    for bud in (64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024):
        for lanes in (1, 2, 4, 8):
            for rws in (None, 4, 32):
                o = tuple(default_tile(D, int(g.b[out]), bud, lanes, rws))
                if kern is not None:
                    for kb in (512 * 1024, 4 * 1024 * 1024):
                        kk = default_tile(Dk, int(g.b[kern]), kb, lanes, rws)
                        heur.append((tuple(kk), o))
                else:
                    heur.append((tuple(), o))
    heur = sorted(set(heur))
    th = tile_law(nf, opc, ei, tile_rows_to_cf(heur))
    err = np.exp(np.random.default_rng(len(heur) * 7919 + int(th.sum()) % 100003).normal(0, 0.2, len(heur)))
    best = heur[int(np.argmin(th * err))]
    rows.append(best)
    seen.add(rows[0])
    space = int(np.prod([len(s) for s in cand_o])) * max(1, int(np.prod([len(s) for s in cand_k])) if cand_k else 1)
    tries = 0
    while len(rows) < c and tries < 20 * c:
        tries += 1
        o = tuple(int(s[_biased_idx(rng, len(s))]) for s in cand_o)
        kk = tuple(int(s[_biased_idx(rng, len(s))]) for s in cand_k)
        key = (kk, o)
        if key in seen and len(seen) < space:
            continue
        seen.add(key)
        rows.append(key)
    while len(rows) < c:
        rows.append(rows[int(rng.integers(len(rows)))])
    # a few re-measured duplicates like the real data
    for _ in range(int(c * 0.01)):
        rows[int(rng.integers(1, c))] = rows[int(rng.integers(c))]
    return tile_rows_to_cf(rows)


def _biased_idx(rng, n):
    """Autotuner candidates lean towards the larger tiles of each dim."""
    w = np.arange(1, n + 1, dtype=np.float64) ** 0.8
    return int(rng.choice(n, p=w / w.sum()))


def tile_rows_to_cf(rows):
    cf = np.zeros((len(rows), 24), dtype=np.float32)
    for t, (kk, o) in enumerate(rows):
        if kk:
            cf[t, 0:len(kk)] = kk
            cf[t, 6] = sum(kk)
            cf[t, 7] = float(np.prod(kk))
        cf[t, 8:8 + len(o)] = o
        cf[t, 14] = sum(o)
        cf[t, 15] = float(np.prod(o))
    return cf


# ========================================================================================
# noise
# ========================================================================================
def measure(rng, t, sigma, burst_per_100, burst_scale):
    c = len(t)
    m = t * np.exp(rng.normal(0.0, sigma, size=c))
    nb = rng.poisson(burst_per_100 * c / 100.0 + 0.2)
    for _ in range(nb):
        s = int(rng.integers(c))
        L = 2 + int(rng.geometric(0.12))
        f = 1.0 + burst_scale * rng.lognormal(0.0, 0.6)
        m[s:s + L] *= f
    return np.maximum(1, np.rint(m)).astype(np.int64)


# ========================================================================================
# names
# ========================================================================================
def fp_hex(rng):
    v = int(rng.integers(-2 ** 62, 2 ** 62))
    return ('-' if v < 0 else '') + format(abs(v), 'x')


def hex32(rng):
    return ''.join(format(int(v), 'x') for v in rng.integers(0, 16, size=32))


def layout_name(rng, P):
    fam = P['fam']
    dt = 'bf16' if P['dt'] == 'bf16' else 'fp32'
    topo = pick(rng, ['2x2', '4x4', '8x8', '2x4', '8x16'])
    if fam == 'cnn':
        base = pick(rng, ['resnet', 'resnet_v1', 'efficientnet', 'inception', 'unet_3d' if P['nd'] == 3 else 'mobilenet',
                          'retinanet', 'mask_rcnn', 'vgg'])
        s = f"{base}_{'train' if P['train'] else 'inference'}_batch_{P['B']}_{P['H']}px.{topo}.{dt}"
    elif fam == 'transformer':
        base = pick(rng, ['bert_en_uncased', 'albert_en', 'electra', 'talking-heads', 'transformer_lm',
                          'small_bert', 'mobilebert', 'gpt'])
        s = f"{base}_L-{P.get('L', 0)}_H-{P['H']}_A-{P['A']}_batch_size_{P['B']}_seq_{P['S']}_{'train' if P['train'] else 'test'}"
    elif fam == 'mlp':
        s = f"{pick(rng, ['dlrm', 'ncf', 'wide_deep', 'dcn'])}_batch_{P['B']}_emb_{P['d']}.{topo}"
    else:
        s = f"{pick(rng, ['lstm_lm', 'seq2seq_lstm', 'rnn_t'])}_T{P['T']}_B{P['B']}_H{P['H']}.{dt}"
    return s + '_' + fp_hex(rng)[:9]


# ========================================================================================
# writers
# ========================================================================================
SIZES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120), lay_cfg=(300, 3000),
                  lay_cfg_test=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20), lay_cfg=(30, 200),
                 lay_cfg_test=(30, 60)),
}
SPLITS = ('train', 'valid', 'test')


def save_npz(path, **arrs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrs)


def save_noiseless(root, rel_npz, t):
    p = os.path.join(root, 'noiseless', rel_npz[:-4] + '.npy')
    os.makedirs(os.path.dirname(p), exist_ok=True)
    np.save(p, np.asarray(t, dtype=np.float64))


def make_layout_graph(rng, coll, scale):
    sz = SIZES[scale]
    nlo, nhi = sz['lay_nodes']
    clo, chi = sz['lay_nc']
    for attempt in range(80):
        P = sample_family(rng, coll, scale)
        target = int(np.exp(rng.uniform(np.log(nlo), np.log(nhi + 1))))
        bseed = int(rng.integers(2 ** 32))

        def build(k):
            P['L'] = k
            return build_layout_graph(np.random.default_rng(bseed), P, k)
        h1 = build(1)
        n1 = len(h1.nodes)
        if n1 > nhi:
            continue
        if n1 >= target:
            hb, knob = h1, 1
        else:
            n2 = len(build(2).nodes)
            per = max(1, n2 - n1)
            knob = max(1, int(round(1 + (target - n1) / per)))
            hb = build(knob)
            while len(hb.nodes) > nhi and knob > 1:
                knob -= 1
                hb = build(knob)
        n = len(hb.nodes)
        if n < nlo:
            continue
        cand = [k for k, nd in enumerate(hb.nodes) if nd['op'] in CFG_OPS]
        if len(cand) < clo:
            continue
        arrs, gid, seq = finalize(hb)
        P['L'] = knob
        return arrs, [gid[k] for k in cand], P
    raise RuntimeError('layout graph sampling failed')


def write_layout(root, coll, search, scale, seed, factor, counts_rng_seed):
    sz = SIZES[scale]
    clo, chi = sz['lay_nc']
    cid = {'xla': 1, 'nlp': 2}[coll] * 10 + {'default': 1, 'random': 2}[search]
    names = set()
    for si, split in enumerate(SPLITS):
        ng = max(1, int(round(sz['lay'][si] * factor)))
        for gi in range(ng):
            rng = np.random.default_rng([seed, cid, si, gi, 7])
            arrs, cand, P = make_layout_graph(rng, coll, scale)
            nc_t = int(rng.integers(clo, chi + 1))
            nc_t = min(nc_t, len(cand))
            cids = np.sort(rng.choice(np.array(cand), size=nc_t, replace=False)).astype(np.int64)
            if split == 'test':
                c = int(rng.integers(*sz['lay_cfg_test']) + 1)
            else:
                lo, hi = sz['lay_cfg']
                c = int(np.exp(rng.uniform(np.log(lo), np.log(hi + 1))))
                c = min(max(c, lo), hi)
            g = parse(arrs['node_feat'], arrs['node_opcode'], arrs['edge_index'])
            ncf = gen_layout_configs(rng, g, cids, c, search)
            if split == 'test':
                rt = np.zeros(c, dtype=np.int64)
                stem = hex32(rng)
            else:
                t = layout_law(arrs['node_feat'], arrs['node_opcode'], arrs['edge_index'], cids, ncf)
                sigma = rng.uniform(0.0008, 0.004)
                rt = measure(rng, t, sigma, rng.uniform(0.1, 0.6), rng.uniform(0.01, 0.05))
                stem = layout_name(rng, P)
                while stem in names:
                    stem = layout_name(rng, P)
                names.add(stem)
            rel = f'npz/layout/{coll}/{search}/{split}/{stem}.npz'
            save_npz(os.path.join(root, rel), node_feat=arrs['node_feat'],
                     node_opcode=arrs['node_opcode'], edge_index=arrs['edge_index'],
                     node_config_ids=cids, node_config_feat=ncf,
                     node_splits=arrs['node_splits'], config_runtime=rt)
            if split != 'test':
                save_noiseless(root, rel, t)


def write_tile(root, scale, seed, factor):
    sz = SIZES[scale]
    names = set()
    for si, split in enumerate(SPLITS):
        ng = max(1, int(round(sz['tile'][si] * factor)))
        for gi in range(ng):
            rng = np.random.default_rng([seed, 5, si, gi, 3])
            arrs, kind, meta = tile_graph(rng, scale)
            lo, hi = sz['tile_cfg']
            c = int(np.exp(rng.uniform(np.log(lo), np.log(hi + 1))))
            c = min(max(c, lo), hi)
            cf = gen_tile_configs(rng, arrs['node_feat'], arrs['node_opcode'], arrs['edge_index'], kind, c)
            if split == 'test':
                rt = np.zeros(c, dtype=np.int64)
                nz = np.ones(c, dtype=np.int64)
                stem = hex32(rng)
            else:
                t = tile_law(arrs['node_feat'], arrs['node_opcode'], arrs['edge_index'], cf)
                rt = measure(rng, t, rng.uniform(0.004, 0.02), rng.uniform(0.2, 1.0), rng.uniform(0.03, 0.15))
                nz = np.full(c, rt[0], dtype=np.int64)
                kname = {'ew': 'fusion', 'reduce': 'fusion', 'dot': 'fusion', 'conv': 'fusion',
                         'transpose': pick(rng, ['copy', 'fusion', 'transpose'])}[kind]
                stem = f"{kname}_{int(rng.integers(1, 4000))}_{fp_hex(rng)}"
                while stem in names:
                    stem = f"{kname}_{int(rng.integers(1, 4000))}_{fp_hex(rng)}"
                names.add(stem)
            rel = f'npz/tile/xla/{split}/{stem}.npz'
            save_npz(os.path.join(root, rel), node_feat=arrs['node_feat'],
                     node_opcode=arrs['node_opcode'], edge_index=arrs['edge_index'],
                     config_feat=cf, config_runtime=rt, config_runtime_normalizers=nz)
            if split != 'test':
                save_noiseless(root, rel, t)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', default='small', choices=['tiny', 'small'])
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    write_tile(a.out, a.scale, a.seed, a.graphs_factor)
    for coll in ('xla', 'nlp'):
        for search in ('default', 'random'):
            write_layout(a.out, coll, search, a.scale, a.seed, a.graphs_factor, 0)


if __name__ == '__main__':
    main()
