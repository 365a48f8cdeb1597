#!/usr/bin/env python3
"""Blind runtime law #10: a synthetic TpuGraphs-format dataset generator.

Usage: python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Everything here was written from public TPU/XLA knowledge (TPU vector memory is
tiled in (sublane x 128-lane) tiles, 8 sublanes of 32 bits so narrow types pack
2 or 4 rows per sublane; the MXU is a 128x128 systolic array fed in bf16; f32
matmuls are multi-pass; HBM bandwidth ~1.2 TB/s; VMEM is a small scratchpad)
and from the TpuGraphs format (upstream featurizers.h / hlo_opcode.h and the
real fixture files).  It is NOT derived from any tool's feature code.

THE LAW (nobody on the tool's side reads this file)
===================================================
Units: ns.  Physical tensor model: a tensor of shape D, minor_to_major L, element
bits b is stored in tiles of (s(b) rows x 128 lanes) over its two most-minor dims,
s(32-bit)=8, s(16-bit)=16, s(8-bit)=32.  Padded bytes pb = ceil(D[L0]/128)*128 *
ceil(D[L1]/s)*s * prod(other dims) * b/8 (rank 1: padded to 512 elements, rank 0:
4 bytes).  Padding waste therefore depends on layout and dtype together.

Layout collections.  Runtime = 60 us program overhead + sum over computations
(node_splits segments) of
mult(segment) * sum of node times, mult = 1 for the last (entry) segment and
1 + len(segment) % 7 for the others (loop bodies; scalar lambdas cost ~0).
Layouts propagate in topological order:
 * configurable nodes (conv/dot/reshape/transpose) take the output layout of
   their config (all -1 = node_feat default; a partial spec fixes the listed
   most-minor dims and the rest follow the default order); their input/kernel
   spec all -1 = accept the producer's layout, otherwise the spec is completed
   with the producer's order and a relayout copy is charged when it differs.
 * elementwise ops inherit the layout of their first non-broadcast operand;
   other operands of another layout pay a copy; broadcasts/constants/iota are
   "flexible" and never copied but a broadcast costs VPU/XLU work depending on
   where its source dims sit in the consumer's layout (lane-aligned cheap,
   second-minor only = cross-lane broadcast, expensive).
 * reduce drops the reduced dims from its operand's layout; reduce-window,
   concat/slice/pad, sort, collectives keep their operand's layout; copy,
   gather, custom-call, GTE, parameters use their default layout; tuples
   (computation outputs) and custom-calls require default layouts (copies).
Copy cost: 1.1us latency + (pb_in+pb_out)/BW * f, f=0.55 for a major-dim
permutation, 1.35*pack for a second-minor change, 2.2*pack^0.8 when the lane dim
changes (pack = 1, 1.8, 3.0 for 32/16/8-bit: crossing the packed sublane dim);
tensors of <= 256 elements copy for 150 ns.
Node costs (smooth max, p=4, of compute and memory, plus exposed extras):
 * conv: flops = 2*out_vol*window_prod*Cin/fgc on the MXU at peak(dtype)
   (bf16 1x, f32 1/3, int8 2x) * efficiency; efficiency = lane fill of Cin
   (contraction) * lane fill of Cout * sublane fill of the output's second-minor
   dim (batch vs spatial, dtype-dependent row packing) * kernel-orientation
   factor; if the input's minor dim is not its feature dim, or the output's
   minor is not Cout, or the kernel's two minor dims are not {Cin,Cout}, an
   internal transpose pass is exposed; a sublane-resident windowed spatial dim
   adds shift work.  Depthwise convs (fgc=Cin) run on the VPU instead.
   Copies feeding a compute-bound conv/dot are hidden up to 50% of its slack.
 * dot: lhs [..,M,K], rhs [..,K,N]: K minor on lhs, (N,K) or (K,N) minor pair on
   rhs (transposed weights 5% slower), N minor on the output; batch dims in the
   two minor positions split the matmul into tiny ones (x3 efficiency loss).
 * reshape/transpose: free bitcast when the physical order is preserved (and
   the lane / sublane dims keep compatible sizes); otherwise a copy-like pass.
 * reduce: reads the operand; cross-lane reduction (reduced dim = lane dim)
   x4 XLU work, reducing the packed sublane dim of a narrow type costs extra.
 * reduce-window / select-and-scatter: window over the lane dim x3 work.
 * concat/slice/pad/dynamic-slice: unaligned change on the lane dim x3, on the
   packed sublane dim x2.  gather with the gathered dim minor x6.  sort on a
   non-minor dim x2.5.  all-reduce: 8us + pb/ICI.  custom-call: 20us.
 * elementwise: fused; compute on padded volume (transcendentals x6, width
   changing converts x2.5); HBM read/write only at fusion boundaries; kernel
   launch 0.8us per materialised result.
Tile collection.  The kernel output (the fusion node) is cut in tiles given by
output_bounds in units of 128 lanes (lane dim), 8 rows (sublane dim), 1 (others)
per logical dim; tiles are padded to (s(b) rows, 128 lanes), so odd sublane
bounds waste half/three quarters of packed bf16/int8 tiles.  Per grid step:
time = smoothmax(compute, memory) + 80 ns; + 0.5 us launch + exposed prologue.
Elementwise kernels stream inputs (transposed inputs read with DMA efficiency
min(1, bytes along their minor dim / 512B); small operands re-fetched each step).
Reductions read a slab per output tile (x4 cross-lane); input_bounds (16-21)
chunk the reduced dims (in the input's units), each extra chunk adds steps and
accumulator work, big slabs spill.  Conv/dot kernels:
kernel_bounds chunk Cin (contraction, K steps with f32 accumulator RMW), Cout,
and kernel spatial dims; weights are re-fetched per M tile (so batch tiling
matters), activations per N chunk, with conv halos.  Working set (double
buffered) above 16 MiB VMEM spills: memory time x (1 + 2.5*(ws/16MiB - 1)).
Noise (stored labels only): multiplicative exp(Laplace) jitter, plus rare
Pareto-tailed slow-downs (heavy tail).  Layout: scale 0.0015, 3% outliers;
tile: scale 0.01, 2% outliers.  The normaliser is one noisy measurement of the
default tile config, stored both as normaliser and as that config's runtime.
"""
import argparse
import math
import os
import sys

import numpy as np

# ----------------------------------------------------------------------------
# Encoding tables (upstream featurizers.h order)
# ----------------------------------------------------------------------------
DT = {'pred': (3, 8), 's8': (4, 8), 's16': (5, 16), 's32': (6, 32), 's64': (7, 64),
      'u8': (8, 8), 'u16': (9, 16), 'u32': (10, 32), 'u64': (11, 64), 'f16': (12, 16),
      'f32': (13, 32), 'f64': (14, 64), 'bf16': (15, 16), 'c64': (16, 64),
      'tuple': (18, 0), 'token': (20, 0)}
COL2BITS = {c: b for (c, b) in DT.values()}
COL2NAME = {c: n for n, (c, b) in DT.items()}

OP = dict(abs=1, add=2, atan2=7, bitcast=11, bitcast_convert=12, broadcast=13, call=14,
          ceil=15, clamp=17, compare=20, concatenate=22, conditional=23, constant=24,
          convert=25, convolution=26, copy=27, cosine=30, custom_call=31, divide=32,
          dot=34, dynamic_slice=35, dynamic_update_slice=36, exponential=37, floor=40,
          fusion=41, gather=42, gte=45, iota=48, log=50, and_=52, not_=53, or_=54,
          maximum=57, minimum=58, multiply=59, negate=60, pad=62, parameter=63,
          power=66, reduce=70, reduce_window=72, reshape=75, reverse=76, rng=77,
          rsqrt=81, scatter=82, select=83, select_and_scatter=84, shift_left=87,
          shift_right_logical=89, slice=92, sort=93, sqrt=94, subtract=95, tanh=96,
          transpose=98, tuple=100, while_=102, all_gather=104, logistic=107,
          all_reduce=5, after_all=4, sign=90, iota_=48)

ELEMENTWISE = {1, 2, 7, 12, 15, 17, 19, 20, 25, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53,
               54, 55, 57, 58, 59, 60, 65, 66, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91,
               94, 95, 96, 103, 107, 118, 119, 120}
TRANSC = {7, 30, 32, 37, 38, 50, 51, 66, 81, 91, 94, 96, 103, 107, 120}
FLEXSRC = {13, 24, 48}
SOURCES = {63, 45, 47, 68, 64, 74, 79}
ZEROCOST = {100, 102, 14, 23, 41, 4, 3, 114, 11, 33, 97, 115, 116, 117}
MOVE = {22, 62, 92, 35, 36, 76}
COLL = {5, 6, 18, 104, 111, 109, 110, 112, 113, 105, 106}
FUSIBLE = ELEMENTWISE | FLEXSRC | {11}

# ----------------------------------------------------------------------------
# Hardware constants of the law
# ----------------------------------------------------------------------------
LANES = 128
HBM_BW = 1200.0          # bytes / ns
ICI_BW = 90.0            # bytes / ns
MXU_PEAK = 1.2e5         # bf16 flop / ns
VPU_RATE = 1500.0        # 32-bit elements / ns
VMEM = 16 * 1024 * 1024
COPY_LAT = 1100.0
OP_OVH = 800.0
PROGRAM_OVH = 60000.0
STEP_OVH = 80.0
LAUNCH = 500.0


def sublanes(bits):
    if bits <= 8:
        return 32
    if bits <= 16:
        return 16
    return 8


def pack_pen(bits):
    if bits <= 8:
        return 3.0
    if bits <= 16:
        return 1.8
    return 1.0


def mxu_peak(bits, is_int):
    if is_int and bits <= 8:
        return MXU_PEAK * 2.0
    if bits <= 16:
        return MXU_PEAK
    return MXU_PEAK / 3.0


def vpu_rate(bits):
    return VPU_RATE * (1.5 if bits <= 16 else 1.0)


def smax(a, b, p=4.0):
    a = np.maximum(a, 1e-9)
    b = np.maximum(b, 1e-9)
    return (a ** p + b ** p) ** (1.0 / p)


def ceil_to(x, m):
    return int(-(-int(x) // m) * m)


def padded_vol(shape, L, bits):
    r = len(shape)
    if r == 0:
        return 1
    if r == 1:
        return ceil_to(shape[0], 512)
    s = sublanes(bits)
    v = ceil_to(shape[L[0]], LANES) * ceil_to(shape[L[1]], s)
    for d in L[2:]:
        v *= shape[d]
    return v


def pbytes(shape, L, bits):
    if len(shape) == 0:
        return 4.0
    return padded_vol(shape, L, bits) * max(bits, 8) / 8.0


def vol(shape):
    v = 1
    for d in shape:
        v *= d
    return v


# ----------------------------------------------------------------------------
# Layout registry (layout tuple <-> small int id); -1 = flexible
# ----------------------------------------------------------------------------
_LAY = {}
_LAYL = []


def lid(t):
    t = tuple(int(x) for x in t)
    k = _LAY.get(t)
    if k is None:
        k = len(_LAYL)
        _LAY[t] = k
        _LAYL.append(t)
    return k


def lay(i):
    return _LAYL[i]


def V(fn, *args):
    """Apply fn over the unique combinations of int-id args (ints or arrays)."""
    arr = [a for a in args if isinstance(a, np.ndarray)]
    if not arr:
        return fn(*args)
    n = len(arr[0])
    key = np.zeros(n, np.int64)
    for a in args:
        if isinstance(a, np.ndarray):
            key = key * 8192 + (a.astype(np.int64) + 2)
    u, first, inv = np.unique(key, return_index=True, return_inverse=True)
    vals = []
    for f in first:
        vals.append(fn(*[(int(a[f]) if isinstance(a, np.ndarray) else a) for a in args]))
    vals = np.asarray(vals)
    out = vals[inv]
    return out


def collapse(a):
    if isinstance(a, np.ndarray) and a.dtype.kind in 'iu':
        if (a == a[0]).all():
            return int(a[0])
    return a


# ----------------------------------------------------------------------------
# Graph builder (our own HLO-like graph sampler)
# ----------------------------------------------------------------------------
class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.splits = [0]
        self.pcount = 0

    def add(self, op, dt, shape, ops=(), layout=None, calls=(), **kw):
        shape = tuple(int(s) for s in shape)
        r = len(shape)
        if layout is None:
            layout = None
            for o in ops:
                on = self.nodes[o]
                if len(on['shape']) == r and r > 0 and on['dt'] != 'tuple':
                    layout = on['layout']
                    break
            if layout is None:
                layout = tuple(range(r - 1, -1, -1))
        n = dict(op=op, dt=dt, shape=shape, layout=tuple(layout) if r else (), ops=list(ops),
                 calls=list(calls), root=False)
        n.update(kw)
        self.nodes.append(n)
        return len(self.nodes) - 1

    def end_comp(self, root, split=True):
        self.nodes[root]['root'] = True
        if split:
            self.splits.append(len(self.nodes))
        self.pcount = 0

    # --- helpers ---
    def P(self, dt, shape, layout=None):
        k = self.add(63, dt, shape, layout=layout, param=self.pcount)
        self.pcount += 1
        return k

    def C(self, dt, shape=()):
        return self.add(24, dt, shape)

    def sh(self, x):
        return self.nodes[x]['shape']

    def dt(self, x):
        return self.nodes[x]['dt']

    def bc(self, x, shape, dims, layout=None):
        return self.add(13, self.dt(x), shape, [x], layout=layout, dims=list(dims))

    def bconst(self, dt, shape, layout=None):
        return self.bc(self.C(dt), shape, [], layout=layout)

    def ew(self, op, *xs, dt=None):
        ref = xs[0]
        for x in xs:
            if len(self.sh(x)) >= len(self.sh(ref)):
                ref = x
        return self.add(op, dt or self.dt(ref), self.sh(ref), list(xs))

    def cvt(self, x, dt):
        if self.dt(x) == dt:
            return x
        return self.add(25, dt, self.sh(x), [x])

    def red(self, x, dims, lam, dt=None):
        s = self.sh(x)
        out = [d for i, d in enumerate(s) if i not in dims]
        L = self.nodes[x]['layout']
        nl = [d - sum(1 for q in dims if q < d) for d in L if d not in dims]
        init = self.C(dt or self.dt(x))
        return self.add(70, dt or self.dt(x), out, [x, init], layout=nl, calls=[lam],
                        dims=sorted(dims))

    def reshape(self, x, shape, layout=None):
        if layout is None:
            layout = tuple(range(len(shape) - 1, -1, -1))
        return self.add(75, self.dt(x), shape, [x], layout=layout)

    def transpose(self, x, perm, layout=None):
        s = self.sh(x)
        shape = [s[p] for p in perm]
        if layout is None:
            layout = tuple(range(len(shape) - 1, -1, -1))
        return self.add(98, self.dt(x), shape, [x], layout=layout, dims=list(perm))

    def dot(self, a, b_, dt=None, layout=None):
        sa, sb = self.sh(a), self.sh(b_)
        out = list(sa[:-1]) + [sb[-1]]
        if layout is None:
            layout = tuple(range(len(out) - 1, -1, -1))
        return self.add(34, dt or self.dt(a), out, [a, b_], layout=layout)


def window_dict(size, stride=None, plo=None, phi=None, wdil=None, bdil=None, rev=None):
    n = len(size)
    return dict(size=list(size), stride=list(stride or [1] * n), plo=list(plo or [0] * n),
                phi=list(phi or [0] * n), wdil=list(wdil or [1] * n),
                bdil=list(bdil or [1] * n), rev=list(rev or [0] * n))


def _seq(f, start, vals, k, empty_prod=1):
    for i, v in enumerate(vals[:k]):
        f[start + i] = v
    f[start + k] = sum(vals)
    if len(vals) == 0:
        f[start + k + 1] = empty_prod
    else:
        p = 1
        for v in vals:
            p *= v
        f[start + k + 1] = p


def featurize(n):
    f = np.zeros(140, np.float64)
    f[0] = 1.0 if n['root'] else 0.0
    f[DT[n['dt']][0]] = 1.0
    shp = list(n['shape'])
    _seq(f, 21, shp, 6)
    f[29] = n.get('tuple_n', 0)
    f[30] = n.get('param', 0)
    for i, d in enumerate(n.get('dims', [])[:6]):
        f[31 + i] = d
    w = n.get('window')
    if w is None:
        w = window_dict([])
    _seq(f, 37, w['size'], 6)
    _seq(f, 45, w['stride'], 6)
    _seq(f, 53, w['plo'], 6)
    _seq(f, 61, w['phi'], 6)
    _seq(f, 69, w['wdil'], 6)
    _seq(f, 77, w['bdil'], 6)
    for i, v in enumerate(w['rev'][:6]):
        f[85 + i] = 1.0 if v else 0.0
    f[91] = sum(1 for v in w['rev'] if v)
    f[92] = sum(1 for v in w['rev'] if not v)
    cv = n.get('conv')
    if cv is not None:
        f[93] = cv['ib']
        f[94] = cv['if']
        for i, v in enumerate(cv['isp'][:4]):
            f[95 + i] = v
        f[99] = cv['ki']
        f[100] = cv['ko']
        for i, v in enumerate(cv['ksp'][:4]):
            f[101 + i] = v
        f[105] = cv['ob']
        f[106] = cv['of']
    if n['op'] in (26, 31):
        f[107] = n.get('fgc', 1)
        f[108] = 1
    sl = n.get('slice', {'start': [], 'stride': [], 'limit': []})
    _seq(f, 109, sl['start'], 2)
    _seq(f, 113, sl['stride'], 2)
    _seq(f, 117, sl['limit'], 2)
    _seq(f, 121, n.get('dsizes', []), 2)
    pd = n.get('padcfg', {'lo': [], 'hi': []})
    _seq(f, 125, pd['lo'], 2)
    _seq(f, 129, pd['hi'], 2)
    f[133] = n.get('stable', 0)
    if len(shp) > 0 and n['dt'] != 'tuple':
        for i, v in enumerate(list(n['layout'])[:6]):
            f[134 + i] = v
    return f.astype(np.float32)


def to_arrays(b):
    nodes = b.nodes
    n = len(nodes)
    nf = np.stack([featurize(x) for x in nodes]).astype(np.float32)
    opc = np.array([x['op'] for x in nodes], np.uint8)
    edges = []
    for u, x in enumerate(nodes):
        for v in list(x['ops']) + list(x['calls']):
            assert v < u
            edges.append((u, v))
    ei = np.array(edges, np.int64).reshape(-1, 2)
    return nf, opc, ei


# ----------------------------------------------------------------------------
# Parsing a file back (the laws only use what the file holds)
# ----------------------------------------------------------------------------
class Parsed:
    def __init__(self, nf, opc, ei):
        self.n = n = len(opc)
        self.op = opc.astype(np.int64)
        dims = nf[:, 21:27].astype(np.int64)
        self.shape = []
        self.bits = []
        self.isint = []
        self.L0 = []
        for i in range(n):
            r = 0
            while r < 6 and dims[i, r] > 0:
                r += 1
            shp = tuple(int(x) for x in dims[i, :r])
            self.shape.append(shp)
            oh = np.nonzero(nf[i, 2:21])[0]
            col = int(oh[0]) + 2 if len(oh) else 13
            self.bits.append(COL2BITS.get(col, 32) or 32)
            self.isint.append(col in (3, 4, 5, 6, 7, 8, 9, 10, 11))
            L = [int(x) for x in nf[i, 134:134 + r]]
            if sorted(L) != list(range(r)):
                L = list(range(r - 1, -1, -1))
            self.L0.append(lid(L))
        self.dtcol = [int(np.nonzero(nf[i, 2:21])[0][0]) + 2 if nf[i, 2:21].any() else 13
                      for i in range(n)]
        self.dimsf = nf[:, 31:37].astype(np.int64)
        self.win = nf[:, 37:43].astype(np.int64)
        self.winprod = nf[:, 44].astype(np.float64)
        self.conv = nf[:, 93:107].astype(np.int64)
        self.fgc = np.maximum(nf[:, 107].astype(np.int64), 1)
        self.root = nf[:, 0] > 0
        self.opnds = [[] for _ in range(n)]
        self.users = [[] for _ in range(n)]
        for u, v in ei:
            self.opnds[int(u)].append(int(v))
            self.users[int(v)].append(int(u))


# ----------------------------------------------------------------------------
# Layout law
# ----------------------------------------------------------------------------
def copy_cost(shape, bits, Lf, Lt):
    """Cost of converting a tensor from layout id Lf to Lt (ids)."""
    if Lf == Lt or Lf < 0 or Lt < 0 or len(shape) <= 1:
        return 0.0
    if vol(shape) <= 256:
        return 150.0
    a, b = lay(Lf), lay(Lt)
    byt = pbytes(shape, a, bits) + pbytes(shape, b, bits)
    if a[0] == b[0] and a[1] == b[1]:
        f = 0.55
    elif a[0] == b[0]:
        f = 1.35 * pack_pen(bits)
    else:
        f = 2.2 * pack_pen(bits) ** 0.8
    return COPY_LAT + byt / HBM_BW * f


def copy_mem(shape, bits, Lf, Lt):
    """Internal (exposed) transpose pass, without a launch latency."""
    if Lf == Lt or len(shape) <= 1:
        return 0.0
    a, b = lay(Lf), lay(Lt)
    byt = pbytes(shape, a, bits) + pbytes(shape, b, bits)
    f = 1.0 if a[0] == b[0] else 2.0 * pack_pen(bits) ** 0.8
    return byt / HBM_BW * f


def resolve_out(spec, default_id, r):
    if spec is None or all(x < 0 for x in spec):
        return default_id
    sp = [x for x in spec if x >= 0]
    if len(set(sp)) != len(sp) or any(x >= r for x in sp):
        return default_id
    rest = [d for d in lay(default_id) if d not in sp]
    return lid(sp + rest)


def resolve_in(spec, prod_id, r):
    if spec is None or all(x < 0 for x in spec) or prod_id < 0:
        return prod_id
    sp = [x for x in spec if x >= 0]
    if len(set(sp)) != len(sp) or any(x >= r for x in sp):
        return prod_id
    rest = [d for d in lay(prod_id) if d not in sp]
    return lid(sp + rest)


def row_major_ok(shape, L):
    phys = [d for d in reversed(L) if shape[d] > 1]
    return phys == sorted(phys)


def reshape_cost(ishape, iL, oshape, oL, bits):
    if len(ishape) == 0 or len(oshape) == 0 or vol(ishape) <= 256:
        return 0.0
    a = lay(iL)
    b = lay(oL)
    if row_major_ok(ishape, a) and row_major_ok(oshape, b):
        s = sublanes(bits)
        im = ishape[a[0]]
        om = oshape[b[0]]
        i2 = ishape[a[1]] if len(a) > 1 else 1
        o2 = oshape[b[1]] if len(b) > 1 else 1
        if im == om and (i2 == o2 or (i2 % s == 0 and o2 % s == 0)):
            return 0.0
        byt = pbytes(ishape, a, bits) + pbytes(oshape, b, bits)
        return 600.0 + byt / HBM_BW * 1.0
    byt = pbytes(ishape, a, bits) + pbytes(oshape, b, bits)
    return COPY_LAT + byt / HBM_BW * 2.0 * pack_pen(bits) ** 0.8


def transpose_cost(ishape, iL, oL, perm, bits):
    a = lay(iL)
    b = lay(oL)
    mapped = [perm[d] for d in b]
    if len(ishape) <= 1 or list(mapped) == list(a) or vol(ishape) <= 256:
        return 0.0
    return copy_cost(ishape, bits, iL, lid(mapped))


class LayoutLaw:
    def __init__(self, nf, opc, ei, splits, cfg_ids):
        self.g = g = Parsed(nf, opc, ei)
        n = g.n
        sp = [int(x) for x in np.asarray(splits).reshape(-1)]
        sp = sorted(set([0] + [x for x in sp if 0 <= x <= n] + [n]))
        self.mult = np.ones(n)
        for k in range(len(sp) - 1):
            a, b = sp[k], sp[k + 1]
            if b < n:
                self.mult[a:b] = 1 + (b - a) % 7
        self.cfg_pos = {int(v): k for k, v in enumerate(cfg_ids)}
        # fusion boundaries (config independent)
        self.mat = np.ones(n, bool)
        for i in range(n):
            if g.op[i] in FUSIBLE:
                us = g.users[i]
                if (not g.root[i]) and len(us) <= 2 and us and all(
                        (g.op[u] in FUSIBLE or g.op[u] == 70) for u in us):
                    self.mat[i] = False
        self.flexsrc = np.array([g.op[i] in FLEXSRC for i in range(n)])

    # ---- per-op helpers (scalar) ----
    def ew_cost(self, i, Lout):
        g = self.g
        shp = g.shape[i]
        b = g.bits[i]
        if len(shp) == 0:
            return 0.0
        L = lay(Lout) if Lout >= 0 else lay(g.L0[i])
        pv = padded_vol(shp, L, b)
        w = 1.0
        if g.op[i] in TRANSC:
            w = 6.0
        elif g.op[i] == 25:
            src = g.opnds[i][0] if g.opnds[i] else i
            if g.bits[src] != b:
                w = 2.5
        c = pv * w / vpu_rate(b)
        m = 0.0
        if self.mat[i]:
            m += pbytes(shp, L, b) / HBM_BW
        return c, m

    def bcast_cost(self, j, Lout, out_shape, bits):
        """Broadcast node j fused into a consumer with layout Lout."""
        g = self.g
        if g.op[j] != 13 or len(out_shape) == 0 or Lout < 0:
            return 0.0
        L = lay(Lout)
        src_r = len(g.shape[j]) and 0
        srcdims = [int(x) for x in g.dimsf[j, :len(g.shape[g.opnds[j][0]])]] if g.opnds[j] else []
        if not srcdims or len(g.shape[g.opnds[j][0]]) == 0:
            f = 0.05
        elif L[0] in srcdims:
            f = 0.3
        elif len(L) > 1 and L[1] in srcdims:
            f = 2.5
        else:
            f = 0.12
        return padded_vol(out_shape, L, bits) * f / vpu_rate(bits)

    # ---- main evaluation ----
    def evaluate(self, ncf):
        """ncf: (c, nc, 18) float array -> runtime (c,) float64 (noise-free)."""
        g = self.g
        n = g.n
        c = ncf.shape[0]
        flat = ncf.reshape(c, -1)
        uq, inv = np.unique(flat, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        cu = uq.shape[0]
        uq = uq.reshape(cu, ncf.shape[1], 18)
        # spec ids per configurable node and block
        specs = {}
        spec_tab = {}
        spec_list = []

        def spec_ids(block):
            rows = np.round(block).astype(np.int64)
            u2, inv2 = np.unique(rows, axis=0, return_inverse=True)
            ids = []
            for row in u2:
                t = tuple(int(x) for x in row)
                if t not in spec_tab:
                    spec_tab[t] = len(spec_list)
                    spec_list.append(t)
                ids.append(spec_tab[t])
            return collapse(np.asarray(ids, np.int64)[inv2.reshape(-1)])

        for node, k in self.cfg_pos.items():
            specs[node] = (spec_ids(uq[:, k, 0:6]), spec_ids(uq[:, k, 6:12]),
                           spec_ids(uq[:, k, 12:18]))
        SP = lambda s: spec_list[s]  # noqa: E731
        NOSPEC = None

        Lay = [None] * n
        total = np.zeros(cu)
        trace = getattr(self, 'trace', None)
        prev = total.copy()
        for i in range(n):
            if trace is not None and i > 0:
                trace[i - 1] = total - prev
                prev = total.copy()
            op = int(g.op[i])
            shp = g.shape[i]
            r = len(shp)
            b = g.bits[i]
            ops = g.opnds[i]
            mult = self.mult[i]
            cost = 0.0
            if op in SOURCES or (op == 24) or (op == 48):
                Lay[i] = -1 if op in FLEXSRC else g.L0[i]
                if op == 48 or op == 77:
                    cost = padded_vol(shp, lay(g.L0[i]), b) / vpu_rate(b) if r else 0.0
                total += cost * mult
                continue
            if op == 13:
                Lay[i] = -1
                continue
            if r == 0 and op not in (100, 102, 14, 23):
                Lay[i] = g.L0[i]
                continue
            cfg = i in self.cfg_pos
            if cfg:
                so, si, sk = specs[i]
            else:
                so = si = sk = NOSPEC
            arr_ops = [j for j in ops if len(g.shape[j]) > 0]
            if op in ELEMENTWISE:
                same = [j for j in ops if len(g.shape[j]) == r and r > 0]
                lead = None
                for j in same:
                    if not isinstance(Lay[j], int) or Lay[j] >= 0:
                        lead = j
                        break
                if lead is None:
                    Lay[i] = -1 if all(Lay[j] is not None and isinstance(Lay[j], int) and Lay[j] < 0
                                       for j in same) and same else g.L0[i]
                    if Lay[i] == -1:
                        continue
                    Lout = Lay[i]
                else:
                    Lout = Lay[lead]
                Lay[i] = Lout

                def f_ew(Lo, i=i):
                    cm = self.ew_cost(i, Lo)
                    if not isinstance(cm, tuple):
                        return 0.0
                    cc, mm = cm
                    for j in g.opnds[i]:
                        if self.mat[j] or g.op[j] in SOURCES:
                            if len(g.shape[j]) > 0 and not (g.op[j] in FLEXSRC):
                                Lj = Lo if len(g.shape[j]) == r else g.L0[j]
                                mm += pbytes(g.shape[j], lay(Lj), g.bits[j]) / HBM_BW
                        if g.op[j] == 13:
                            cc += self.bcast_cost(j, Lo, shp, b)
                    t = smax(cc, mm)
                    if self.mat[i]:
                        t += OP_OVH
                    return float(t)
                cost = V(f_ew, Lout)
                for j in same:
                    if j == lead:
                        continue
                    Lj = Lay[j]
                    if isinstance(Lj, int) and Lj < 0:
                        continue
                    cost = cost + V(lambda a, o, j=j: copy_cost(g.shape[j], g.bits[j], a, o), Lj, Lout)
                total += cost * mult
                continue
            if op in (26, 34):
                total += self._mxu(i, so, si, sk, SP, Lay) * mult
                continue
            if op == 75 or op == 98:
                src = ops[0] if ops else None
                Lin = Lay[src] if src is not None else g.L0[i]
                if isinstance(Lin, int) and Lin < 0:
                    Lin = g.L0[src]
                rin = len(g.shape[src]) if src is not None else r
                if so is None:
                    Lo = g.L0[i]
                else:
                    Lo = V(lambda s: resolve_out(SP(s), g.L0[i], r), so)
                    Lo = collapse(Lo)
                ccopy = 0.0
                if si is not None:
                    Lreq = collapse(V(lambda s, p: resolve_in(SP(s), p, rin), si, Lin))
                    ccopy = V(lambda a, q: copy_cost(g.shape[src], g.bits[src], a, q), Lin, Lreq)
                    Lin = Lreq
                Lay[i] = Lo
                if src is None:
                    continue
                if op == 75:
                    cst = V(lambda a, o: reshape_cost(g.shape[src], a, shp, o, b), Lin, Lo)
                else:
                    perm = [int(x) for x in g.dimsf[i, :r]]
                    if sorted(perm) != list(range(r)):
                        perm = list(range(r))
                    cst = V(lambda a, o: transpose_cost(g.shape[src], a, o, perm, b), Lin, Lo)
                total += (cst + ccopy) * mult
                continue
            if op == 70:
                src = ops[0]
                Lin = Lay[src]
                if isinstance(Lin, int) and Lin < 0:
                    Lin = g.L0[src]
                rd = [int(x) for x in g.dimsf[i, :max(0, len(g.shape[src]) - r)]]
                rin = len(g.shape[src])
                if not rd or any(x >= rin for x in rd):
                    rd = [d for d in range(rin)][:rin - r]

                def f_lo(a):
                    La = lay(a)
                    nl = [d - sum(1 for q in rd if q < d) for d in La if d not in rd]
                    if sorted(nl) != list(range(r)):
                        return g.L0[i]
                    return lid(nl)

                def f_red(a):
                    La = lay(a)
                    ish = g.shape[src]
                    bi = g.bits[src]
                    pv = padded_vol(ish, La, bi)
                    fct = 1.0
                    if La and La[0] in rd:
                        fct += 3.0
                    if len(La) > 1 and La[1] in rd:
                        fct += 0.5 * (pack_pen(bi) - 1.0) * 2.5 + 0.2
                    cc = pv * fct / vpu_rate(bi)
                    mm = (pbytes(ish, La, bi) / HBM_BW if (self.mat[src] or g.op[src] in SOURCES) else 0.0)
                    Lo_ = f_lo(a)
                    mm += pbytes(shp, lay(Lo_), b) / HBM_BW if r else 0.0
                    return float(smax(cc, mm) + OP_OVH)
                Lay[i] = collapse(V(f_lo, Lin)) if r else g.L0[i]
                total += V(f_red, Lin) * mult
                continue
            if op in (72, 84) or op in MOVE or op in COLL or op == 93:
                src = ops[0] if ops else None
                if src is None or len(g.shape[src]) != r:
                    Lay[i] = g.L0[i]
                    total += OP_OVH * mult
                    continue
                Lin = Lay[src]
                if isinstance(Lin, int) and Lin < 0:
                    Lin = g.L0[src]
                Lay[i] = Lin
                cost = V(lambda a: self._misc(i, a), Lin)
                for j in ops[1:]:
                    if len(g.shape[j]) == r and not (isinstance(Lay[j], int) and Lay[j] < 0):
                        cost = cost + V(lambda a, o, j=j: copy_cost(g.shape[j], g.bits[j], a, o), Lay[j], Lin)
                total += cost * mult
                continue
            if op in (100, 31):
                # outputs / custom calls require default layouts
                cost = 20000.0 + sum(pbytes(g.shape[j], lay(g.L0[j]), g.bits[j]) for j in arr_ops) / HBM_BW \
                    if op == 31 else 0.0
                for j in ops:
                    if len(g.shape[j]) >= 2 and not (isinstance(Lay[j], int) and Lay[j] < 0):
                        cost = cost + V(lambda a, j=j: copy_cost(g.shape[j], g.bits[j], a, g.L0[j]), Lay[j])
                Lay[i] = g.L0[i]
                total += cost * mult
                continue
            if op == 27:
                src = ops[0]
                Lin = Lay[src]
                if isinstance(Lin, int) and Lin < 0:
                    Lin = g.L0[src]
                Lay[i] = g.L0[i]
                cst = V(lambda a: (copy_cost(shp, b, a, g.L0[i]) if a != g.L0[i] else
                                   OP_OVH + 2 * pbytes(shp, lay(a), b) / HBM_BW), Lin)
                total += cst * mult
                continue
            if op in (42, 82):
                src = ops[0]
                Lin = Lay[src]
                if isinstance(Lin, int) and Lin < 0:
                    Lin = g.L0[src]
                Lay[i] = g.L0[i]

                def f_g(a):
                    La = lay(a)
                    f = 6.0 if (La and La[0] == 0 and len(La) > 1) else 1.0
                    return OP_OVH + pbytes(shp, lay(g.L0[i]), b) * f / HBM_BW * 2
                total += V(f_g, Lin) * mult
                continue
            # zero cost / default
            Lay[i] = g.L0[i]
            if op not in ZEROCOST and r > 0:
                total += (OP_OVH + pbytes(shp, lay(g.L0[i]), b) / HBM_BW) * mult
        return (total + PROGRAM_OVH)[inv]

    def _misc(self, i, a):
        g = self.g
        op = int(g.op[i])
        shp = g.shape[i]
        b = g.bits[i]
        L = lay(a)
        src = g.opnds[i][0]
        ish = g.shape[src]
        r = len(shp)
        byt = pbytes(ish, L, g.bits[src]) + pbytes(shp, L, b)
        if op in COLL:
            return 8000.0 + byt / ICI_BW
        if op in (72, 84):
            wsz = [int(x) for x in g.win[i, :r]]
            f = 1.0
            if r and L[0] < len(wsz) and wsz[L[0]] > 1:
                f = 3.0
            elif r > 1 and L[1] < len(wsz) and wsz[L[1]] > 1:
                f = 1.0 + 0.6 * pack_pen(b)
            wp = max(1.0, float(g.winprod[i]))
            cc = padded_vol(shp, L, b) * wp * f / vpu_rate(b)
            if op == 84:
                cc *= 2.0
            return float(smax(cc, byt / HBM_BW) + OP_OVH)
        if op == 93:
            sd = int(g.dimsf[i, 0]) if r else 0
            nn = shp[sd] if sd < r else 2
            f = 1.0 if (r and L[0] == sd) else 2.5
            cc = padded_vol(shp, L, b) * max(1.0, math.log2(max(nn, 2))) ** 2 * f / vpu_rate(b)
            return float(smax(cc, byt / HBM_BW) + OP_OVH)
        # MOVE
        if op in (22, 76):
            act = [int(g.dimsf[i, 0])] if r else []
        else:
            ref = shp
            other = ish
            if op == 36 and len(g.opnds[i]) > 1:
                other = g.shape[g.opnds[i][1]]
            act = [d for d in range(r) if d < len(other) and other[d] != ref[d]]
        f = 1.0
        s = sublanes(b)
        if r and L[0] in act:
            dd = L[0]
            if shp[dd] % LANES or (dd < len(ish) and ish[dd] % LANES):
                f = 3.0
            else:
                f = 1.2
        elif r > 1 and L[1] in act:
            dd = L[1]
            if shp[dd] % s or (dd < len(ish) and ish[dd] % s):
                f = 1.0 + 0.55 * pack_pen(b)
        return float(OP_OVH + byt / HBM_BW * f)

    def _mxu(self, i, so, si, sk, SP, Lay):
        g = self.g
        op = int(g.op[i])
        shp = g.shape[i]
        r = len(shp)
        ops = g.opnds[i]
        if len(ops) < 2:
            return OP_OVH
        x, w = ops[0], ops[1]
        xs, ws = g.shape[x], g.shape[w]
        bx, bw, bo = g.bits[x], g.bits[w], g.bits[i]
        Lx = Lay[x]
        if isinstance(Lx, int) and Lx < 0:
            Lx = g.L0[x]
        Lw = Lay[w]
        if isinstance(Lw, int) and Lw < 0:
            Lw = g.L0[w]
        # resolved layouts
        if so is None:
            Lo = g.L0[i]
        else:
            Lo = collapse(V(lambda s: resolve_out(SP(s), g.L0[i], r), so))
        cp = 0.0
        if si is not None:
            Lxr = collapse(V(lambda s, p: resolve_in(SP(s), p, len(xs)), si, Lx))
            cp = cp + V(lambda a, q: copy_cost(xs, bx, a, q), Lx, Lxr)
            Lx = Lxr
        if sk is not None:
            Lwr = collapse(V(lambda s, p: resolve_in(SP(s), p, len(ws)), sk, Lw))
            cp = cp + V(lambda a, q: copy_cost(ws, bw, a, q), Lw, Lwr)
            Lw = Lwr
        Lay[i] = Lo
        peak = mxu_peak(bx, g.isint[x])
        if op == 26:
            cv = g.conv[i]
            ib, iff = int(cv[0]), int(cv[1])
            ki, ko = int(cv[6]), int(cv[7])
            ob, of = int(cv[12]), int(cv[13])
            if max(iff, ib) >= len(xs) or max(ki, ko) >= len(ws) or max(ob, of) >= r:
                return OP_OVH + cp
            cin = xs[iff]
            cout = shp[of]
            fgc = int(g.fgc[i])
            wp = max(1.0, float(g.winprod[i]))
            flops = 2.0 * vol(shp) * wp * cin / fgc
            depthwise = fgc > 1 and fgc == cin
            nsp = [d for d in range(len(xs)) if d not in (ib, iff)]
            wins = [int(v) for v in g.win[i, :len(nsp)]]

            def f_in(a):
                La = lay(a)
                if La[0] == iff:
                    eK = 1.0 if depthwise else (cin / fgc) / ceil_to(cin / fgc, LANES)
                    X = 0.0
                else:
                    eK = 1.0 if depthwise else (cin / fgc) / ceil_to(cin / fgc, LANES)
                    X = copy_mem(xs, bx, a, lid([iff] + [d for d in La if d != iff]))
                sh = 1.0
                if len(La) > 1 and La[1] in nsp:
                    k = nsp.index(La[1])
                    if k < len(wins) and wins[k] > 1:
                        sh = 1.0 + 0.12 * (wins[k] - 1) * pack_pen(bx) ** 0.5
                return np.array([eK, X, sh, pbytes(xs, La, bx)])

            def f_out(a):
                La = lay(a)
                s = sublanes(bo)
                if La[0] == of:
                    eN = cout / ceil_to(cout, LANES)
                    m2 = La[1] if len(La) > 1 else None
                    eM = shp[m2] / ceil_to(shp[m2], s) if m2 is not None else 1.0 / s
                    X = 0.0
                else:
                    eN = cout / ceil_to(cout, LANES)
                    alt = [of] + [d for d in La if d != of]
                    eM = shp[alt[1]] / ceil_to(shp[alt[1]], s) if r > 1 else 1.0
                    X = copy_mem(shp, bo, lid(alt), a)
                return np.array([eN, eM, X, pbytes(shp, La, bo)])

            def f_k(a):
                La = lay(a)
                if len(La) < 2:
                    return np.array([1.0, 0.0, pbytes(ws, La, bw)])
                if La[0] == ko and La[1] == ki:
                    e, X = 1.0, 0.0
                elif La[0] == ki and La[1] == ko:
                    e, X = 0.93, 0.0
                else:
                    e = 1.0
                    X = copy_mem(ws, bw, a, lid([ko, ki] + [d for d in La if d not in (ko, ki)]))
                return np.array([e, X, pbytes(ws, La, bw)])
            A = V(f_in, Lx)
            B = V(f_out, Lo)
            K = V(f_k, Lw)
            A, B, K = [np.asarray(z, np.float64) for z in (A, B, K)]
            eK, Xi, shf, bi = A[..., 0], A[..., 1], A[..., 2], A[..., 3]
            eN, eM, Xo, bo_ = B[..., 0], B[..., 1], B[..., 2], B[..., 3]
            eW, Xk, bk = K[..., 0], K[..., 1], K[..., 2]
            if depthwise:
                C = flops * shf / (vpu_rate(bx) * 2.0 * np.maximum(eN * eM, 0.05))
            else:
                C = flops * shf / (peak * np.maximum(eK * eN * eM * eW, 0.05))
        else:
            rx, rw = len(xs), len(ws)
            if rx < 2 or rw < 2 or r < 2:
                return OP_OVH + cp
            kx, mx = rx - 1, rx - 2
            kw_, nw = rw - 2, rw - 1
            no, mo = r - 1, r - 2
            K_ = xs[kx]
            M_ = shp[mo]
            N_ = shp[no]
            flops = 2.0 * vol(shp) * K_

            def f_in(a):
                La = lay(a)
                s = sublanes(bx)
                if La[0] == kx:
                    X = 0.0
                    sec = La[1]
                else:
                    alt = [kx] + [d for d in La if d != kx]
                    X = copy_mem(xs, bx, a, lid(alt))
                    sec = alt[1]
                eK = K_ / ceil_to(K_, LANES)
                bpen = 1.0 if sec == mx else 0.9
                if sec != mx and sec != kx and xs[sec] < 8:
                    bpen = 1.0 / 3.0
                return np.array([eK * bpen, X, 1.0, pbytes(xs, La, bx)])

            def f_out(a):
                La = lay(a)
                s = sublanes(bo)
                if La[0] == no:
                    X = 0.0
                    sec = La[1]
                else:
                    alt = [no] + [d for d in La if d != no]
                    X = copy_mem(shp, bo, lid(alt), a)
                    sec = alt[1]
                eN = N_ / ceil_to(N_, LANES)
                eM = shp[sec] / ceil_to(shp[sec], s)
                if sec != mo:
                    eM *= (1.0 / 3.0 if shp[sec] < 8 else 0.85)
                return np.array([eN, eM, X, pbytes(shp, La, bo)])

            def f_k(a):
                La = lay(a)
                if La[0] == nw and La[1] == kw_:
                    e, X = 1.0, 0.0
                elif La[0] == kw_ and La[1] == nw:
                    e, X = 0.95, 0.0
                else:
                    e = 1.0 / 3.0 if (La[0] < rw - 2 or La[1] < rw - 2) else 1.0
                    X = copy_mem(ws, bw, a, lid([nw, kw_] + [d for d in La if d not in (nw, kw_)]))
                return np.array([e, X, pbytes(ws, La, bw)])
            A = np.asarray(V(f_in, Lx), np.float64)
            B = np.asarray(V(f_out, Lo), np.float64)
            K = np.asarray(V(f_k, Lw), np.float64)
            eK, Xi, bi = A[..., 0], A[..., 1], A[..., 3]
            eN, eM, Xo, bo_ = B[..., 0], B[..., 1], B[..., 2], B[..., 3]
            eW, Xk, bk = K[..., 0], K[..., 1], K[..., 2]
            C = flops / (peak * np.maximum(eK * eN * eM * eW, 0.05))
        Mm = (bi + bk + bo_) / HBM_BW
        slack = np.maximum(C - Mm, 0.0)
        cp = np.asarray(cp, np.float64)
        hidden = np.minimum(0.5 * slack, np.maximum(cp - COPY_LAT, 0.0))
        t = smax(C, Mm) + Xi + Xo + Xk + OP_OVH + cp - hidden
        return t


# ----------------------------------------------------------------------------
# Tile law
# ----------------------------------------------------------------------------
def bound_units(r, L):
    u = [1] * r
    if r >= 1:
        u[L[0]] = LANES
    if r >= 2:
        u[L[1]] = 8
    return u


class TileLaw:
    def __init__(self, nf, opc, ei):
        self.g = g = Parsed(nf, opc, ei)
        n = g.n
        last = n - 1
        o = last
        if g.dtcol[o] == 18 or len(g.shape[o]) == 0:
            # tuple output: use the first array operand of the fused root tuple
            cand = [j for j in g.opnds[last] if g.root[j]]
            if cand:
                t = cand[0]
                arrs = [j for j in g.opnds[t] if len(g.shape[j]) > 0]
                if arrs:
                    o = arrs[0]
        self.out = o
        self.entry_params = [j for j in g.opnds[last] if g.op[j] == 63]
        self.mxu = next((i for i in range(n) if g.op[i] in (26, 34)), None)
        self.red = next((i for i in range(n) if g.op[i] == 70 and len(g.shape[g.opnds[i][0]]) > 0), None)
        arr = [i for i in range(n) if len(g.shape[i]) > 0]
        self.n_ew = sum(1 for i in arr if g.op[i] in ELEMENTWISE)
        self.n_tr = sum(1 for i in arr if g.op[i] in TRANSC)
        self.n_cvt = sum(1 for i in arr if g.op[i] == 25)

    def evaluate(self, cf):
        g = self.g
        cf = np.asarray(cf, np.float64)
        c = cf.shape[0]
        o = self.out
        D = np.array(g.shape[o], np.float64)
        r = len(D)
        L = list(lay(g.L0[o]))
        bo = g.bits[o]
        if r == 0:
            return np.full(c, LAUNCH + 300.0)
        u = np.array(bound_units(r, L), np.float64)
        ob = cf[:, 8:8 + r]
        maxb = np.ceil(D / u)
        ob = np.where(ob <= 0, maxb[None, :], ob)
        e = np.minimum(ob * u[None, :], D[None, :])
        nt = np.ceil(D[None, :] / e)
        T = nt.prod(axis=1)
        so = sublanes(bo)
        pe = e.copy()
        pe[:, L[0]] = np.ceil(e[:, L[0]] / LANES) * LANES
        if r >= 2:
            pe[:, L[1]] = np.ceil(e[:, L[1]] / so) * so
        Vt = pe.prod(axis=1)
        ob_bytes = max(bo, 8) / 8.0
        vout = float(np.prod(D))
        ew_ops = self.n_ew + 5.0 * self.n_tr + 1.5 * self.n_cvt
        if self.mxu is not None:
            return self._mxu(cf, e, pe, Vt, T, D, L, bo, ew_ops)
        steps = T
        if self.red is not None:
            x = g.opnds[self.red][0]
            xs = g.shape[x]
            bx = g.bits[x]
            rd = sorted(int(v) for v in g.dimsf[self.red, :max(0, len(xs) - len(g.shape[self.red]))])
            rd = [d for d in rd if d < len(xs)]
            Lx = lay(g.L0[x])
            ux = bound_units(len(xs), list(Lx))
            slab = np.ones(c)
            nR = np.ones(c)
            sx = sublanes(bx)
            for k, d in enumerate(rd):
                ib = cf[:, 16 + k] if k < 6 else np.zeros(c)
                full = math.ceil(xs[d] / ux[d])
                ib = np.where(ib <= 0, full, ib)
                er = np.minimum(ib * ux[d], xs[d])
                nR = nR * np.ceil(xs[d] / er)
                if Lx[0] == d:
                    er = np.ceil(er / LANES) * LANES
                elif len(Lx) > 1 and Lx[1] == d:
                    er = np.ceil(er / sx) * sx
                slab = slab * er
            in_step = Vt * slab * max(bx, 8) / 8.0
            out_step = Vt * ob_bytes / nR
            f = 4.0 if (Lx and Lx[0] in rd) else 1.0
            comp = Vt * slab * (1.0 + ew_ops * 0.5) * f / vpu_rate(bx)
            comp = comp + np.where(nR > 1, Vt / VPU_RATE * 2.0, 0.0)
            mem = (in_step + out_step) / HBM_BW + 30.0
            ws = 2.0 * in_step + Vt * 4.0 + out_step
            steps = T * nR
        else:
            in_step = np.zeros(c)
            for p in self.entry_params:
                ps = g.shape[p]
                if len(ps) == 0:
                    continue
                bp = max(g.bits[p], 8) / 8.0
                vp = float(np.prod(ps))
                rho = vp / vout
                if rho >= 0.5:
                    pen = 1.0
                    Lp = lay(g.L0[p])
                    if len(ps) == r and Lp[0] != L[0]:
                        ext = e[:, Lp[0]] * bp
                        pen = 1.0 / np.minimum(1.0, ext / 512.0)
                    in_step = in_step + Vt * rho * bp * pen
                else:
                    in_step = in_step + np.minimum(vp * bp, Vt * bp)
            out_step = Vt * ob_bytes
            comp = Vt * max(ew_ops, 1.0) / vpu_rate(bo)
            mem = (in_step + out_step) / HBM_BW + 30.0 * max(1, len(self.entry_params))
            ws = 2.0 * (in_step + out_step)
        spill = np.where(ws > VMEM, 1.0 + 2.5 * (ws / VMEM - 1.0), 1.0)
        mem = mem * spill
        step = smax(comp, mem) + STEP_OVH
        return LAUNCH + steps * step + mem

    def _mxu(self, cf, e, pe, Vt, T, D, L, bo, ew_ops):
        g = self.g
        i = self.mxu
        ops = g.opnds[i]
        x, w = ops[0], ops[1]
        xs, ws = g.shape[x], g.shape[w]
        bx, bw = g.bits[x], g.bits[w]
        shp = g.shape[i]
        r = len(D)
        c = cf.shape[0]
        if g.op[i] == 26:
            cv = g.conv[i]
            iff, ki, ko, of = int(cv[1]), int(cv[6]), int(cv[7]), int(cv[13])
            cin = xs[iff] / g.fgc[i]
            cout = shp[of]
            ksp = [d for d in range(len(ws)) if d not in (ki, ko)]
            wins = [int(v) for v in g.win[i, :len(ksp)]]
        else:
            ki, ko = len(ws) - 2, len(ws) - 1
            of = len(shp) - 1
            cin = xs[-1]
            cout = shp[-1]
            ksp = []
            wins = []
        if len(shp) != r:
            of = r - 1
        Lw = lay(g.L0[w])
        uw = np.array(bound_units(len(ws), Lw), np.float64)
        kb = cf[:, 0:len(ws)]
        Wd = np.array(ws, np.float64)
        kb = np.where(kb <= 0, np.ceil(Wd / uw)[None, :], kb)
        ek = np.minimum(kb * uw[None, :], Wd[None, :])
        eKin = np.minimum(ek[:, ki], cin)
        eKout = ek[:, ko]
        nks = np.ones(c)
        kspat = 1.0
        for d in ksp:
            nks = nks * np.ceil(Wd[d] / ek[:, d])
            kspat *= Wd[d]
        eN = e[:, of]
        Nc = np.minimum(eN, eKout)
        nN = np.ceil(eN / Nc)
        nK = np.ceil(cin / eKin) * nks
        steps = T * nN * nK
        peN = pe[:, of]
        eM_pad = Vt / np.maximum(peN, 1.0)
        eM = np.prod(e, axis=1) / np.maximum(eN, 1.0)
        peak = mxu_peak(bx, g.isint[x])
        Kc = eKin
        sK = sublanes(bx)
        Kc_pad = np.ceil(Kc / sK) * sK
        Kc_pad = np.maximum(Kc_pad, np.minimum(np.ceil(Kc / LANES) * LANES, 128.0) * 0.5 + Kc_pad * 0.5)
        flops = 2.0 * eM_pad * (np.ceil(Nc / LANES) * LANES) * Kc_pad * (kspat / nks)
        comp = flops / peak
        halo = np.ones(c)
        if g.op[i] == 26:
            sp_out = [d for d in range(r) if d != of and d != int(g.conv[i][12])]
            for k, d in enumerate(sp_out):
                kw_ = wins[k] if k < len(wins) else 1
                halo = halo * (e[:, d] + kw_ - 1) / e[:, d]
        act = eM * halo * Kc * max(bx, 8) / 8.0
        wgt = (kspat / nks) * Kc * Nc * max(bw, 8) / 8.0
        outb = eM * eN * max(bo, 8) / 8.0 / (nN * nK)
        acc = np.where(nK > 1, eM_pad * np.ceil(Nc / LANES) * LANES / VPU_RATE, 0.0)
        epi = eM_pad * np.ceil(Nc / LANES) * LANES * max(ew_ops, 1.0) / VPU_RATE / nK
        comp = comp + acc + epi
        mem = (act + wgt + outb) / HBM_BW + 60.0
        ws_ = 2.0 * (act + wgt) + eM_pad * np.ceil(eN / LANES) * LANES * 4.0 + 2.0 * eM * eN * max(bo, 8) / 8.0
        spill = np.where(ws_ > VMEM, 1.0 + 2.5 * (ws_ / VMEM - 1.0), 1.0)
        mem = mem * spill
        step = smax(comp, mem) + STEP_OVH
        return LAUNCH + steps * step + (act + wgt) / HBM_BW


# ----------------------------------------------------------------------------
# Layout graph families (our own sampler)
# ----------------------------------------------------------------------------
def make_lambdas(b):
    lams = {}
    for dt in ('f32', 'bf16', 's32'):
        for nm, op in (('add', 2), ('max', 57)):
            p0 = b.P(dt, ())
            p1 = b.P(dt, ())
            k = b.add(op, dt, (), [p0, p1])
            b.end_comp(k, split=False)
            lams[(nm, dt)] = k
    b.splits.append(len(b.nodes))
    return lams


def conv_node(b, x, w, cout, k, stride, dt, act_layout, nd):
    xs = b.sh(x)
    N = xs[0]
    sp = xs[1:-1]
    pad = (k - 1) // 2
    osp = [max(1, (s + 2 * pad - k) // stride + 1) for s in sp]
    out = [N] + osp + [cout]
    return b.add(26, dt, out, [x, w], layout=act_layout,
                 window=window_dict([k] * nd, [stride] * nd, [pad] * nd, [pad] * nd),
                 conv=dict(ib=0, **{'if': nd + 1}, isp=list(range(1, nd + 1)), ki=nd, ko=nd + 1,
                           ksp=list(range(nd)), ob=0, of=nd + 1), fgc=1)


def build_cnn(b, rng, lams, target, nd=2):
    dt = str(rng.choice(['bf16', 'f32'], p=[0.6, 0.4]))
    train = rng.random() < 0.7
    if nd == 2:
        N = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
        H = int(rng.choice([28, 32, 56, 64, 112, 128, 224]))
        good = (3, 0, 2, 1) if N >= 8 else (3, 2, 1, 0)
        bad = (3, 2, 1, 0) if N >= 8 else (3, 0, 2, 1)
        act = good if rng.random() < 0.82 else bad
    else:
        N = int(rng.choice([1, 2, 4]))
        H = int(rng.choice([16, 24, 32, 48, 64, 96]))
        act = (4, 3, 2, 1, 0) if rng.random() < 0.6 else (4, 0, 3, 2, 1)
    C = int(rng.choice([1, 3, 4])) if nd == 2 else int(rng.choice([1, 2, 4]))
    b.meta = dict(train=train, batch=N, dt=dt)
    wl = tuple(range(nd + 1, -1, -1))
    x = b.P(dt, [N] + [H] * nd + [C], layout=act)
    fw = []
    cur_c = C
    chans = [16, 32, 64, 128, 256, 384, 512] if nd == 2 else [8, 16, 32, 64, 96, 128]
    ci = int(rng.integers(1, 4))
    f32 = 'f32'

    def bn_relu(y):
        ys = b.sh(y)
        cdim = len(ys) - 1
        if train:
            yf = b.cvt(y, f32)
            s = b.red(yf, list(range(cdim)), lams[('add', f32)])
            m = b.ew(59, s, b.bconst(f32, b.sh(s)))
            mb = b.bc(m, ys, [cdim])
            xc = b.ew(95, yf, mb)
            sq = b.ew(59, xc, xc)
            v = b.red(sq, list(range(cdim)), lams[('add', f32)])
            v = b.ew(2, v, b.bconst(f32, b.sh(v)))
            rs = b.ew(81, v)
            yn = b.ew(59, xc, b.bc(rs, ys, [cdim]))
            gma = b.P(f32, [ys[-1]])
            yn = b.ew(59, yn, b.bc(gma, ys, [cdim]))
            bta = b.P(f32, [ys[-1]])
            yn = b.ew(2, yn, b.bc(bta, ys, [cdim]))
            yn = b.cvt(yn, dt)
        else:
            sc = b.P(dt, [ys[-1]])
            yn = b.ew(59, y, b.bc(sc, ys, [cdim]))
            bi = b.P(dt, [ys[-1]])
            yn = b.ew(2, yn, b.bc(bi, ys, [cdim]))
        return b.ew(57, yn, b.bconst(dt, ys))

    budget = target * (0.55 if train else 0.85)
    while len(b.nodes) < budget:
        xs = b.sh(x)
        spat = xs[1]
        kind = rng.random()
        if kind < 0.12 and spat > 8:
            # pooling
            win = [1] + [3] * nd + [1]
            st = [1] + [2] * nd + [1]
            osh = [xs[0]] + [max(1, (s - 1) // 2 + 1) for s in xs[1:-1]] + [xs[-1]]
            x = b.add(72, dt, osh, [x, b.C(dt)], calls=[lams[('max', dt)]],
                      window=window_dict(win, st, [0] + [1] * nd + [0], [0] + [1] * nd + [0]))
            continue
        stride = 2 if (kind < 0.3 and spat > 7) else 1
        if stride == 2 and ci < len(chans) - 1:
            ci += 1
        cout = chans[ci]
        k = int(rng.choice([1, 3, 3, 3, 5] if nd == 2 else [1, 3, 3]))
        if cur_c <= 4:
            k = 7 if nd == 2 and rng.random() < 0.5 else 3
        if rng.random() < 0.08 and cur_c == cout and stride == 1 and nd == 2:
            # depthwise conv
            w = b.P(dt, [k] * nd + [1, cout], layout=wl)
            y = b.add(26, dt, b.sh(x), [x, w], layout=act,
                      window=window_dict([k] * nd, [1] * nd, [(k - 1) // 2] * nd, [(k - 1) // 2] * nd),
                      conv=dict(ib=0, **{'if': nd + 1}, isp=list(range(1, nd + 1)), ki=nd, ko=nd + 1,
                                ksp=list(range(nd)), ob=0, of=nd + 1), fgc=cout)
        else:
            w = b.P(dt, [k] * nd + [cur_c, cout], layout=wl)
            y = conv_node(b, x, w, cout, k, stride, dt, act, nd)
        fw.append((x, w, y, k, stride))
        y = bn_relu(y)
        if rng.random() < 0.35 and b.sh(y) == b.sh(x):
            y = b.ew(2, y, x)
        x = y
        cur_c = cout
    # head
    xs = b.sh(x)
    feat = b.red(b.cvt(x, f32), list(range(1, nd + 1)), lams[('add', f32)])
    ncls = int(rng.choice([10, 100, 1000]))
    W = b.P(f32, [xs[-1], ncls])
    lg = b.dot(feat, W)
    lg = b.ew(2, lg, b.bc(b.P(f32, [ncls]), b.sh(lg), [1]))
    mx = b.red(lg, [1], lams[('max', f32)])
    z = b.ew(95, lg, b.bc(mx, b.sh(lg), [0]))
    ez = b.ew(37, z)
    se = b.red(ez, [1], lams[('add', f32)])
    pr = b.ew(32, ez, b.bc(se, b.sh(ez), [0]))
    outs = [pr]
    if train:
        lab = b.P(f32, b.sh(pr))
        dl = b.ew(95, pr, lab)
        ft = b.transpose(feat, [1, 0])
        dW = b.dot(ft, dl)
        dW = b.add(5, f32, b.sh(dW), [dW], calls=[lams[('add', f32)]])
        outs.append(b.ew(95, W, b.ew(59, dW, b.bconst(f32, b.sh(dW)))))
        g = b.dot(dl, b.transpose(W, [1, 0]))
        g = b.bc(g, b.sh(x), [0, nd + 1])
        g = b.cvt(g, dt)
        for (xi, wi, yi, k, stride) in reversed(fw):
            if len(b.nodes) > target * 0.97:
                break
            gs = b.sh(g)
            if gs != b.sh(yi):
                g = b.bc(b.red(b.cvt(g, f32), list(range(1, nd + 1)), lams[('add', f32)]), b.sh(yi), [0, nd + 1])
                g = b.cvt(g, dt)
            # relu grad
            msk = b.add(20, 'pred', b.sh(yi), [yi, b.bconst(dt, b.sh(yi))])
            g = b.add(83, dt, b.sh(yi), [msk, g, b.bconst(dt, b.sh(yi))])
            ws_ = b.sh(wi)
            xs_ = b.sh(xi)
            osp = b.sh(yi)[1:-1]
            # kernel grad conv: input batch=feature dim, feature = N
            dw = b.add(26, dt, ws_, [xi, g], layout=tuple(range(nd + 1, -1, -1)),
                       window=window_dict(list(osp), [1] * nd, [(k - 1) // 2] * nd, [(k - 1) // 2] * nd,
                                          [stride] * nd),
                       conv=dict(ib=nd + 1, **{'if': 0}, isp=list(range(1, nd + 1)), ki=0, ko=nd + 1,
                                 ksp=list(range(1, nd + 1)), ob=nd, of=nd + 1), fgc=1)
            dw = b.add(5, dt, ws_, [dw], calls=[lams[('add', dt)]])
            upd = b.ew(95, wi, b.ew(59, dw, b.bconst(dt, ws_)))
            outs.append(upd)
            if ws_[-2] > 1 and xs_[-1] == ws_[-2]:
                # input grad conv
                g = b.add(26, dt, xs_, [g, wi], layout=act,
                          window=window_dict([k] * nd, [1] * nd, [(k - 1) // 2] * nd, [(k - 1) // 2] * nd,
                                             [1] * nd, [stride] * nd, [1] * nd),
                          conv=dict(ib=0, **{'if': nd + 1}, isp=list(range(1, nd + 1)), ki=nd + 1, ko=nd,
                                    ksp=list(range(nd)), ob=0, of=nd + 1), fgc=1)
            else:
                break
    return outs


def build_transformer(b, rng, lams, target, nlp=True):
    dt = str(rng.choice(['bf16', 'f32'], p=[0.7, 0.3]))
    f32 = 'f32'
    B = int(rng.choice([1, 2, 4, 8, 16, 32, 64]))
    S = int(rng.choice([32, 64, 128, 256, 384, 512]))
    H = int(rng.choice([2, 4, 8, 12, 16]))
    dh = int(rng.choice([32, 64, 64, 128]))
    D = H * dh
    F = D * int(rng.choice([2, 4]))
    Vv = int(rng.choice([8000, 30522, 32000, 50257]))
    train = rng.random() < 0.6
    b.meta = dict(train=train, batch=B, dt=dt)
    ids = b.P('s32', [B, S])
    emb = b.P(dt, [Vv, D])
    x = b.add(42, dt, [B, S, D], [emb, ids])
    pos = b.P(dt, [S, D])
    x = b.ew(2, x, b.bc(pos, [B, S, D], [1, 2]))
    saved = []

    lite = target < 260

    def ln(y):
        ys = b.sh(y)
        if lite:
            yf = b.cvt(y, f32)
            v = b.red(b.ew(59, yf, yf), [2], lams[('add', f32)])
            rs = b.ew(81, v)
            return b.cvt(b.ew(59, yf, b.bc(rs, ys, [0, 1])), dt)
        yf = b.cvt(y, f32)
        s = b.red(yf, [2], lams[('add', f32)])
        m = b.ew(59, s, b.bconst(f32, b.sh(s)))
        xc = b.ew(95, yf, b.bc(m, ys, [0, 1]))
        v = b.red(b.ew(59, xc, xc), [2], lams[('add', f32)])
        rs = b.ew(81, b.ew(2, v, b.bconst(f32, b.sh(v))))
        yn = b.ew(59, xc, b.bc(rs, ys, [0, 1]))
        yn = b.ew(59, yn, b.bc(b.P(f32, [ys[2]]), ys, [2]))
        yn = b.ew(2, yn, b.bc(b.P(f32, [ys[2]]), ys, [2]))
        return b.cvt(yn, dt)

    def dense(y2, n_out, act=None):
        Wt = b.P(dt, [b.sh(y2)[-1], n_out])
        z = b.dot(y2, Wt)
        z = b.ew(2, z, b.bc(b.P(dt, [n_out]), b.sh(z), [1]))
        saved.append((y2, Wt, z))
        if act == 'gelu':
            z3 = b.ew(59, b.ew(59, z, z), z)
            t = b.ew(96, b.ew(2, z, b.ew(59, z3, b.bconst(dt, b.sh(z)))))
            z = b.ew(59, b.ew(59, z, b.bconst(dt, b.sh(z))), b.ew(2, t, b.bconst(dt, b.sh(z))))
        elif act == 'relu':
            z = b.ew(57, z, b.bconst(dt, b.sh(z)))
        return z

    budget = target * (0.6 if train else 0.85)
    nl = 0
    while len(b.nodes) < budget or nl == 0:
        nl += 1
        h = ln(x)
        h2 = b.reshape(h, [B * S, D])
        heads = []
        for _ in range(3):
            z = dense(h2, D)
            z4 = b.reshape(z, [B, S, H, dh])
            heads.append(z4)
        q = b.transpose(heads[0], [0, 2, 1, 3])
        k = b.transpose(heads[1], [0, 2, 3, 1])
        v = b.transpose(heads[2], [0, 2, 1, 3])
        sc = b.dot(q, k)
        sc = b.ew(59, sc, b.bconst(dt, b.sh(sc)))
        if rng.random() < 0.5 and not lite:
            mask = b.P(dt, [B, S])
            sc = b.ew(2, sc, b.bc(mask, b.sh(sc), [0, 3]))
        scf = b.cvt(sc, f32)
        mx = b.red(scf, [3], lams[('max', f32)])
        e = b.ew(37, b.ew(95, scf, b.bc(mx, b.sh(scf), [0, 1, 2])))
        se = b.red(e, [3], lams[('add', f32)])
        p = b.cvt(b.ew(32, e, b.bc(se, b.sh(e), [0, 1, 2])), dt)
        ctx = b.dot(p, v)
        ctx = b.transpose(ctx, [0, 2, 1, 3])
        ctx = b.reshape(ctx, [B * S, D])
        o = dense(ctx, D)
        o = b.reshape(o, [B, S, D])
        x = b.ew(2, x, o)
        h = ln(x)
        h2 = b.reshape(h, [B * S, D])
        f1 = dense(h2, F, act='gelu' if (rng.random() < 0.7 and not lite) else 'relu')
        f2 = dense(f1, D)
        x = b.ew(2, x, b.reshape(f2, [B, S, D]))
    h = ln(x)
    if nlp and rng.random() < 0.5:
        pooled = b.reshape(b.add(92, dt, [B, 1, D], [h], slice=dict(start=[0, 0], stride=[1, 1], limit=[B, 1])), [B, D])
        lg = dense(pooled, int(rng.choice([2, 3, 1000])))
    else:
        lg = dense(b.reshape(h, [B * S, D]), int(rng.choice([512, 1024, 2048])))
    lgf = b.cvt(lg, f32)
    mx = b.red(lgf, [1], lams[('max', f32)])
    z = b.ew(95, lgf, b.bc(mx, b.sh(lgf), [0]))
    se = b.red(b.ew(37, z), [1], lams[('add', f32)])
    lsm = b.ew(95, z, b.bc(b.ew(50, se), b.sh(z), [0]))
    outs = [lsm]
    if train:
        gz = b.cvt(b.ew(59, lsm, b.P(f32, b.sh(lsm))), dt)
        for (y2, Wt, z) in reversed(saved):
            if len(b.nodes) > target * 0.96:
                break
            if b.sh(gz) != b.sh(z):
                gz = b.P(dt, b.sh(z))
            yt = b.transpose(y2, [1, 0])
            dW = b.dot(yt, gz)
            dW = b.add(5, dt, b.sh(dW), [dW], calls=[lams[('add', dt)]])
            outs.append(b.ew(95, Wt, b.ew(59, dW, b.bconst(dt, b.sh(dW)))))
            gz = b.dot(gz, b.transpose(Wt, [1, 0]))
    return outs


def build_rnn(b, rng, lams, target):
    """MLP / LSTM-ish model with a while loop (body in its own computation)."""
    dt = str(rng.choice(['bf16', 'f32']))
    Bt = int(rng.choice([1, 8, 16, 32, 64, 128, 256]))
    Hd = int(rng.choice([128, 256, 512, 1024]))
    In = int(rng.choice([64, 128, 300, 512]))
    b.meta = dict(train=False, batch=Bt, dt=dt)
    # condition computation
    st_shapes = [('s32', ()), (dt, (Bt, Hd)), (dt, (Bt, Hd))]
    p = b.add(63, 'tuple', (), tuple_n=3, param=0)
    i0 = b.add(45, 's32', (), [p])
    lim = b.C('s32')
    cnd = b.add(20, 'pred', (), [i0, lim])
    b.end_comp(cnd)
    # body
    p = b.add(63, 'tuple', (), tuple_n=3, param=0)
    it = b.add(45, 's32', (), [p])
    hh = b.add(45, dt, (Bt, Hd), [p])
    cc = b.add(45, dt, (Bt, Hd), [p])
    xt = b.P(dt, (Bt, In))
    Wx = b.P(dt, (In, 4 * Hd))
    Wh = b.P(dt, (Hd, 4 * Hd))
    g1 = b.dot(xt, Wx)
    g2 = b.dot(hh, Wh)
    gg = b.ew(2, g1, g2)
    gg = b.ew(2, gg, b.bc(b.P(dt, [4 * Hd]), b.sh(gg), [1]))
    parts = []
    for k in range(4):
        parts.append(b.add(92, dt, (Bt, Hd), [gg], slice=dict(start=[0, k * Hd], stride=[1, 1],
                                                              limit=[Bt, (k + 1) * Hd])))
    ig = b.ew(107, parts[0])
    fg = b.ew(107, parts[1])
    og = b.ew(107, parts[2])
    cg = b.ew(96, parts[3])
    cn = b.ew(2, b.ew(59, fg, cc), b.ew(59, ig, cg))
    hn = b.ew(59, og, b.ew(96, cn))
    itn = b.ew(2, it, b.C('s32'))
    tup = b.add(100, 'tuple', (), [itn, hn, cn], tuple_n=3)
    b.end_comp(tup)
    body_root = tup
    cond_root = cnd
    # entry: MLP tower then the loop
    x = b.P(dt, (Bt, In))
    wi = b.add(100, 'tuple', (), [b.C('s32'), b.P(dt, (Bt, Hd)), b.P(dt, (Bt, Hd))], tuple_n=3)
    wl = b.add(102, 'tuple', (), [wi], calls=[cond_root, body_root], tuple_n=3)
    h = b.add(45, dt, (Bt, Hd), [wl])
    outs = []
    width = Hd
    while len(b.nodes) < target * 0.9:
        kind = rng.random()
        if kind < 0.15 and Bt % 8 == 0:
            # reshape into 3-d and back (batch split), transpose trick
            r3 = b.reshape(h, [Bt // 8, 8, width])
            r3 = b.ew(59, r3, b.bconst(dt, b.sh(r3)))
            h = b.reshape(r3, [Bt, width])
            continue
        nw = int(rng.choice([128, 256, 512, 1024, 2048]))
        Wt = b.P(dt, (width, nw))
        z = b.dot(h, Wt)
        z = b.ew(2, z, b.bc(b.P(dt, [nw]), b.sh(z), [1]))
        if rng.random() < 0.5:
            z = b.ew(57, z, b.bconst(dt, b.sh(z)))
        else:
            z = b.ew(96, z)
        if rng.random() < 0.3:
            zt = b.transpose(z, [1, 0])
            s = b.red(b.cvt(zt, 'f32'), [1], lams[('add', 'f32')])
            outs.append(s)
        if rng.random() < 0.15:
            z2 = b.add(22, dt, (Bt, 2 * nw), [z, z], dims=[1])
            z = b.add(92, dt, (Bt, nw), [z2], slice=dict(start=[0, 0], stride=[1, 1], limit=[Bt, nw]))
        if rng.random() < 0.1:
            srt = b.add(93, dt, b.sh(z), [z], dims=[1], calls=[lams[('max', dt if dt in ('f32', 'bf16') else 'f32')]])
            z = srt
        if rng.random() < 0.1:
            z = b.add(31, dt, b.sh(z), [z], fgc=1)
        h = z
        width = nw
    outs.append(h)
    return outs


def finalize(b, outs):
    root = b.add(100, 'tuple', (), outs, tuple_n=len(outs))
    b.end_comp(root, split=False)
    n = len(b.nodes)
    if b.splits[-1] != n:
        b.splits.append(n)


def build_layout_graph(rng, source, nodes_rng, nc_rng):
    for attempt in range(80):
        target = int(rng.integers(nodes_rng[0], nodes_rng[1] + 1))
        b = Builder(rng)
        lams = make_lambdas(b)
        if source == 'nlp':
            fam = 'transformer'
        else:
            fam = str(rng.choice(['cnn', 'unet3d', 'transformer', 'rnn'], p=[0.4, 0.15, 0.2, 0.25]))
        if fam == 'cnn':
            outs = build_cnn(b, rng, lams, target, 2)
        elif fam == 'unet3d':
            outs = build_cnn(b, rng, lams, target, 3)
        elif fam == 'transformer':
            outs = build_transformer(b, rng, lams, target, source == 'nlp')
        else:
            outs = build_rnn(b, rng, lams, target)
        finalize(b, outs)
        n = len(b.nodes)
        cands = [i for i, x in enumerate(b.nodes) if x['op'] in (26, 34, 75, 98) and len(x['shape']) >= 1]
        if n < nodes_rng[0] or n > nodes_rng[1] or len(cands) < nc_rng[0]:
            continue
        nc = int(rng.integers(nc_rng[0], nc_rng[1] + 1))
        nc = min(nc, len(cands))
        if len(cands) > nc:
            # prefer heavy ops, but keep some reshapes/transposes
            w = np.array([3.0 if b.nodes[i]['op'] in (26, 34) else 1.0 for i in cands])
            sel = rng.choice(len(cands), size=nc, replace=False, p=w / w.sum())
            cands = sorted(cands[k] for k in sel)
        return b, fam, np.array(cands, np.int64)
    raise RuntimeError('could not build a layout graph within limits')


# ----------------------------------------------------------------------------
# Layout configs
# ----------------------------------------------------------------------------
def node_blocks(b, i):
    n = b.nodes[i]
    r = len(n['shape'])
    ro = len(b.nodes[n['ops'][0]]['shape']) if n['ops'] else 0
    rk = len(b.nodes[n['ops'][1]]['shape']) if (n['op'] in (26, 34) and len(n['ops']) > 1) else 0
    return r, ro, rk


def gen_layout_configs(rng, b, cfg, c, search):
    nc = len(cfg)
    out = -np.ones((c, nc, 18), np.float32)
    info = [node_blocks(b, i) for i in cfg]
    if search == 'random':
        def perms(rk, p_keep, p_partial):
            blk = -np.ones((c, 6), np.float32)
            if rk == 0:
                return blk
            pr = np.argsort(rng.random((c, rk)), axis=1).astype(np.float32)
            if rk >= 3:
                part = rng.random(c) < p_partial
                pr[part, 2:] = -1
            keep = rng.random(c) < p_keep
            pr[~keep] = -1
            blk[:, :rk] = pr
            return blk
        for k in range(nc):
            r, ro, rk = info[k]
            out[:, k, 0:6] = perms(r, 0.88, 0.4)
            if ro > 0:
                out[:, k, 6:12] = perms(ro, 0.7, 0.4)
            if rk > 0:
                out[:, k, 12:18] = perms(rk, 0.7, 0.4)
        # a few exact duplicates, as measured repeatedly
        nd = int(c * 0.05)
        if nd:
            src = rng.integers(0, c, nd)
            dst = rng.integers(0, c, nd)
            out[dst] = out[src]
        return out
    # default search: near the compiler default, few nodes touched per config
    for ci in range(c):
        if ci > 0 and rng.random() < 0.15:
            out[ci] = out[int(rng.integers(0, ci))]
            continue
        kk = 1 + rng.poisson(1.0)
        nodes = rng.choice(nc, size=min(nc, kk), replace=False)
        for k in nodes:
            r, ro, rk = info[k]
            i = cfg[k]
            dl = list(b.nodes[i]['layout'])
            u = rng.random()
            blk = -np.ones(6)
            if r == 0:
                continue
            if u < 0.35:
                blk[:r] = dl
                out[ci, k, 0:6] = blk
            elif u < 0.55:
                blk[:min(2, r)] = dl[:2]
                out[ci, k, 0:6] = blk
            elif u < 0.8 and r >= 3:
                d2 = dl[:]
                a_, b_ = int(rng.integers(2, r)), int(rng.integers(2, r))
                d2[a_], d2[b_] = d2[b_], d2[a_]
                blk[:r] = d2
                out[ci, k, 0:6] = blk
            elif u < 0.92 and ro >= 2:
                src = b.nodes[i]['ops'][0]
                sl = list(b.nodes[src]['layout'])
                d2 = sl[:]
                if rng.random() < 0.75 and ro >= 3:
                    a_, b_ = int(rng.integers(1, ro)), int(rng.integers(1, ro))
                else:
                    a_, b_ = 0, 1
                d2[a_], d2[b_] = d2[b_], d2[a_]
                blk[:ro] = d2
                out[ci, k, 6:12] = blk
            elif r >= 2:
                d2 = dl[:]
                d2[0], d2[1] = d2[1], d2[0]
                blk[:2] = d2[:2]
                out[ci, k, 0:6] = blk
    return out


# ----------------------------------------------------------------------------
# Tile graphs
# ----------------------------------------------------------------------------
def build_tile_graph(rng, nodes_rng):
    for attempt in range(50):
        target = int(rng.integers(nodes_rng[0], nodes_rng[1] + 1))
        kind = str(rng.choice(['ew', 'reduce', 'conv', 'dot'], p=[0.3, 0.2, 0.28, 0.22]))
        dt = str(rng.choice(['f32', 'bf16', 's8'], p=[0.45, 0.43, 0.12]))
        if kind in ('ew', 'reduce') and dt == 's8':
            dt = 'bf16'
        b = Builder(rng)
        lams = {}
        if kind == 'reduce' or rng.random() < 0.3:
            for nm, op in (('add', 2), ('max', 57)):
                p0 = b.P('f32', ())
                p1 = b.P('f32', ())
                k = b.add(op, 'f32', (), [p0, p1])
                b.end_comp(k, split=False)
                lams[nm] = k
        act = (3, 0, 2, 1) if rng.random() < 0.7 else (3, 2, 1, 0)
        fparams = []   # (shape, dt, layout) of fused-computation params

        def fparam(dt_, shape, layout=None, nested=False):
            if nested:
                q = b.P(dt_, shape, layout=layout)
                bcn = b.add(11, dt_, shape, [q], layout=layout)
                b.end_comp(bcn, split=False)
                return ('nested', bcn, dt_, shape, layout)
            return ('plain', None, dt_, shape, layout)
        specs = []
        if kind == 'conv':
            N = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
            Hs = int(rng.choice([7, 8, 14, 16, 28, 32, 56]))
            cin = int(rng.choice([32, 64, 96, 128, 192, 256, 384, 512]))
            cout = int(rng.choice([64, 128, 192, 256, 384, 512, 1024]))
            kk = int(rng.choice([1, 3, 3, 5]))
            specs.append(fparam(dt, (N, Hs, Hs, cin), act, nested=rng.random() < 0.5))
            specs.append(fparam(dt, (kk, kk, cin, cout), (3, 2, 1, 0), nested=rng.random() < 0.5))
            specs.append(fparam('f32', (cout,)))
        elif kind == 'dot':
            M = int(rng.choice([8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]))
            K = int(rng.choice([128, 256, 512, 768, 1024, 2048, 4096]))
            Nn = int(rng.choice([128, 256, 512, 1000, 1024, 2048, 3072, 4096]))
            if rng.random() < 0.3:
                Bb = int(rng.choice([2, 4, 8, 12, 16]))
                specs.append(fparam(dt, (Bb, M, K), (2, 1, 0)))
                specs.append(fparam(dt, (Bb, K, Nn), (2, 1, 0) if rng.random() < 0.7 else (1, 2, 0)))
            else:
                specs.append(fparam(dt, (M, K), (1, 0)))
                specs.append(fparam(dt, (K, Nn), (1, 0) if rng.random() < 0.7 else (0, 1),
                                    nested=rng.random() < 0.4))
            specs.append(fparam('f32', (Nn,)))
        elif kind == 'reduce':
            if rng.random() < 0.5:
                N = int(rng.choice([8, 16, 32, 64, 128]))
                Hs = int(rng.choice([7, 14, 28, 56]))
                C = int(rng.choice([64, 128, 256, 512, 1024, 2048]))
                specs.append(fparam(dt, (N, Hs, Hs, C), act))
                red_dims = [1, 2] if rng.random() < 0.5 else [0, 1, 2]
            else:
                Bq = int(rng.choice([1, 4, 8, 16, 32, 64]))
                S = int(rng.choice([128, 256, 512, 1024]))
                Dd = int(rng.choice([256, 512, 768, 1024, 4096]))
                specs.append(fparam(dt, (Bq, S, Dd), (2, 1, 0)))
                red_dims = [2] if rng.random() < 0.6 else [1]
            specs.append(fparam(dt, specs[0][3], specs[0][4]))
        else:
            if rng.random() < 0.6:
                N = int(rng.choice([1, 2, 8, 16, 32, 64, 128]))
                Hs = int(rng.choice([7, 14, 28, 56, 112]))
                C = int(rng.choice([32, 64, 128, 256, 512, 1024]))
                shape = (N, Hs, Hs, C)
                lay_ = act
                alt = (3, 2, 1, 0) if act != (3, 2, 1, 0) else (3, 0, 2, 1)
            else:
                shape = (int(rng.choice([64, 128, 256, 512, 1024, 4096])), int(rng.choice([128, 256, 768, 1024, 4096])))
                lay_ = (1, 0)
                alt = (0, 1)
            specs.append(fparam(dt, shape, lay_))
            specs.append(fparam(dt, shape, alt if rng.random() < 0.35 else lay_))
            specs.append(fparam('f32', (shape[-1],)))
        # fused computation
        pnodes = []
        for (kd, root, dt_, shape, layout) in specs:
            q = b.P(dt_, shape, layout=layout)
            if kd == 'nested':
                q = b.add(41, dt_, shape, [root, q], layout=layout)
            pnodes.append(q)
        if kind == 'conv':
            x, w, bias = pnodes
            N, Hs, _, cin = b.sh(x)
            kk = b.sh(w)[0]
            cout = b.sh(w)[3]
            y = b.add(26, 'f32' if dt != 's8' else 's32', (N, Hs, Hs, cout), [x, w], layout=act,
                      window=window_dict([kk, kk], [1, 1], [(kk - 1) // 2] * 2, [(kk - 1) // 2] * 2),
                      conv=dict(ib=0, **{'if': 3}, isp=[1, 2], ki=2, ko=3, ksp=[0, 1], ob=0, of=3), fgc=1)
            if dt == 's8':
                y = b.cvt(y, 'f32')
            y = b.ew(2, y, b.bc(bias, b.sh(y), [3]))
            out_dt = 'bf16' if dt != 'f32' else 'f32'
        elif kind == 'dot':
            x, w, bias = pnodes
            sx, sw = b.sh(x), b.sh(w)
            y = b.add(34, 'f32' if dt != 's8' else 's32', tuple(sx[:-1]) + (sw[-1],), [x, w])
            if dt == 's8':
                y = b.cvt(y, 'f32')
            y = b.ew(2, y, b.bc(bias, b.sh(y), [len(b.sh(y)) - 1]))
            out_dt = 'bf16' if dt != 'f32' else 'f32'
        elif kind == 'reduce':
            x, x2 = pnodes
            y = b.ew(59, b.cvt(x, 'f32'), b.cvt(x2, 'f32'))
            out_dt = 'f32'
        else:
            x, x2, bias = pnodes
            if b.nodes[x2]['layout'] != b.nodes[x]['layout']:
                x2 = b.add(27, dt, b.sh(x2), [x2], layout=b.nodes[x]['layout'])
            y = b.ew(2, b.cvt(x, 'f32'), b.cvt(x2, 'f32'))
            y = b.ew(2, y, b.bc(bias, b.sh(y), [len(b.sh(y)) - 1]))
            out_dt = dt if rng.random() < 0.7 else ('pred' if rng.random() < 0.3 else dt)
        # pad with elementwise ops
        ew_choices = [59, 2, 57, 95, 37, 96, 107, 81, 32, 58]
        base_nodes = len(b.nodes) + 6 + len(specs)
        while len(b.nodes) + 4 + len(specs) < target:
            opx = int(rng.choice(ew_choices))
            if rng.random() < 0.2:
                pr = b.add(20, 'pred', b.sh(y), [y, b.bconst('f32', b.sh(y))])
                y = b.add(83, b.dt(y), b.sh(y), [pr, y, b.bconst('f32', b.sh(y))])
            elif rng.random() < 0.5 or opx in (37, 96, 107, 81):
                if opx in (2, 59, 57, 95, 32, 58):
                    y = b.ew(opx, y, b.bconst('f32', b.sh(y)))
                else:
                    y = b.ew(opx, y)
            else:
                y = b.ew(opx, y, b.bconst('f32', b.sh(y)))
        if kind == 'reduce':
            s = b.sh(y)
            lam = lams.get('add')
            y = b.red(y, red_dims, lam)
        if out_dt == 'pred':
            y = b.add(20, 'pred', b.sh(y), [y, b.bconst('f32', b.sh(y))])
        else:
            y = b.cvt(y, out_dt)
        b.end_comp(y, split=False)
        # entry
        eps = []
        for (kd, root, dt_, shape, layout) in specs:
            eps.append(b.P(dt_, shape, layout=layout))
        fus = b.add(41, b.dt(y), b.sh(y), [y] + eps, layout=b.nodes[y]['layout'])
        b.end_comp(fus, split=False)
        n = len(b.nodes)
        if n < nodes_rng[0] or n > nodes_rng[1]:
            continue
        return b, kind
    raise RuntimeError('tile graph')


def tile_space(b):
    """Per-dim maxima for output bounds, kernel bounds and reduction input bounds."""
    nodes = b.nodes
    out = nodes[-1]
    D = out['shape']
    L = list(out['layout'])
    r = len(D)
    u = bound_units(r, L)
    maxo = [int(math.ceil(D[d] / u[d])) for d in range(r)]
    mx = next((i for i, x in enumerate(nodes) if x['op'] in (26, 34)), None)
    maxk = []
    if mx is not None:
        w = nodes[mx]['ops'][1]
        wshape = nodes[w]['shape']
        Lw = list(nodes[w]['layout'])
        uw = bound_units(len(wshape), Lw)
        maxk = [int(math.ceil(wshape[d] / uw[d])) for d in range(len(wshape))]
    maxi = []
    rn = next((i for i, x in enumerate(nodes) if x['op'] == 70 and len(nodes[x['ops'][0]]['shape']) > 0), None)
    if rn is not None and mx is None:
        x = nodes[rn]['ops'][0]
        xs = nodes[x]['shape']
        ux = bound_units(len(xs), list(nodes[x]['layout']))
        maxi = [int(math.ceil(xs[d] / ux[d])) for d in sorted(nodes[rn]['dims'])]
    return maxo, maxk, maxi, L


def opts_for(m, rng):
    base = sorted(set([1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, m] + [int(rng.integers(1, m + 1))]))
    return [x for x in base if 1 <= x <= m]


def space_size(b, rng):
    maxo, maxk, maxi, L = tile_space(b)
    n = 1
    for m in maxo + maxk + maxi:
        n *= len(opts_for(m, rng))
    return n


def default_tile(b, maxo, maxk, maxi, L, bits):
    """The 'compiler heuristic' default tile.  It budgets bytes with f32-style
    (8-row) sublane padding, i.e. it ignores narrow-type packing, conv halos and
    weight re-fetch."""
    nodes = b.nodes
    r = len(maxo)
    ob = [1] * r
    if r >= 1:
        ob[L[0]] = min(maxo[L[0]], 4)
    if r >= 2:
        ob[L[1]] = min(maxo[L[1]], 16 if not maxi else 4)
    u = bound_units(r, L)
    D = nodes[-1]['shape']
    ent = [j for j in nodes[-1]['ops'][1:] if nodes[j]['op'] == 63]
    vout = float(np.prod(D)) if r else 1.0
    per_elem = max(bits, 8) / 8.0
    for j in ent:
        vj = float(np.prod(nodes[j]['shape'])) if nodes[j]['shape'] else 1.0
        if vj / vout >= 0.5:
            per_elem += vj / vout * max(DT[nodes[j]['dt']][1], 8) / 8.0
    ib = []
    red_dims = []
    xs = None
    if maxi:
        rn = next(i for i, x in enumerate(nodes) if x['op'] == 70 and len(nodes[x['ops'][0]]['shape']) > 0)
        x = nodes[rn]['ops'][0]
        xs = nodes[x]['shape']
        red_dims = sorted(nodes[rn]['dims'])
        ux = bound_units(len(xs), list(nodes[x]['layout']))
        ib = list(maxi)
        per_elem = 4.0

    def tile_elems():
        v = 1.0
        for d in range(r):
            e = min(ob[d] * u[d], D[d])
            if d == L[0]:
                e = ceil_to(e, LANES)
            elif r > 1 and d == L[1]:
                e = ceil_to(e, 8)
            v *= e
        if maxi:
            for k, d in enumerate(red_dims):
                v *= min(ib[k] * ux[d], xs[d])
        return v
    budget = 3 * 1024 * 1024
    if maxi:
        k = len(ib) - 1
        while tile_elems() * per_elem > budget and k >= 0:
            if ib[k] > 1:
                ib[k] = max(1, ib[k] // 2)
            else:
                k -= 1
    for d in list(L[2:]):
        while ob[d] < maxo[d] and tile_elems() * 2 * per_elem <= budget:
            ob[d] = min(maxo[d], ob[d] * 2)
    kb = []
    if maxk:
        kb = list(maxk)
        mx = next(i for i, x in enumerate(nodes) if x['op'] in (26, 34))
        w = nodes[mx]['ops'][1]
        ws = nodes[w]['shape']
        Lw = list(nodes[w]['layout'])
        uw = bound_units(len(ws), Lw)
        for d in range(len(ws)):
            if uw[d] == 8:
                kb[d] = min(maxk[d], 64)
            elif uw[d] == LANES:
                kb[d] = min(maxk[d], 4)
    return ob, kb, ib


def gen_tile_configs(rng, b, c):
    maxo, maxk, maxi, L = tile_space(b)
    bits = DT[b.nodes[-1]['dt']][1]
    oo = [opts_for(m, rng) for m in maxo]
    ko = [opts_for(m, rng) for m in maxk]
    io = [opts_for(m, rng) for m in maxi]
    dob, dkb, dib = default_tile(b, maxo, maxk, maxi, L, bits)
    u = bound_units(len(maxo), L)
    D = b.nodes[-1]['shape']
    seen = set()
    rows = []

    def enc(ob, kb, ib):
        v = np.zeros(24, np.float32)
        if kb:
            v[0:len(kb)] = kb
            v[6] = sum(kb)
            v[7] = float(np.prod(kb))
        v[8:8 + len(ob)] = ob
        v[14] = sum(ob)
        v[15] = float(np.prod(ob)) if ob else 0.0
        if ib:
            v[16:16 + len(ib)] = ib
            v[22] = sum(ib)
            v[23] = float(np.prod(ib))
        return v

    def sane(ob):
        ntiles = 1
        tvol = 1
        for d in range(len(ob)):
            e = min(ob[d] * u[d], D[d])
            ntiles *= math.ceil(D[d] / e)
            tvol *= e
        return ntiles <= 16384 and tvol * max(bits, 8) / 8 >= 2048
    key = (tuple(dob), tuple(dkb), tuple(dib))
    seen.add(key)
    rows.append(enc(dob, dkb, dib))
    tries = 0
    while len(rows) < c and tries < c * 40:
        tries += 1
        if rng.random() < 0.5:
            ob = [int(rng.choice(o)) for o in oo]
            kb = [int(rng.choice(o)) for o in ko]
            ib = [int(rng.choice(o)) for o in io]
        else:
            ob = list(dob)
            kb = list(dkb)
            ib = list(dib)
            for _ in range(int(rng.integers(1, 3))):
                q = rng.random()
                if kb and q < 0.4:
                    d = int(rng.integers(0, len(kb)))
                    kb[d] = int(rng.choice(ko[d]))
                elif ib and q < 0.5:
                    d = int(rng.integers(0, len(ib)))
                    ib[d] = int(rng.choice(io[d]))
                else:
                    d = int(rng.integers(0, len(ob)))
                    ob[d] = int(rng.choice(oo[d]))
        if not sane(ob) and tries < c * 30:
            continue
        k = (tuple(ob), tuple(kb), tuple(ib))
        if k in seen:
            continue
        seen.add(k)
        rows.append(enc(ob, kb, ib))
    cfg = np.stack(rows).astype(np.float32)
    perm = rng.permutation(len(rows))
    cfg = cfg[perm]
    dpos = int(np.nonzero(perm == 0)[0][0])
    return cfg, dpos


# ----------------------------------------------------------------------------
# Noise
# ----------------------------------------------------------------------------
def noisy(rng, t, scale, p_out, tail):
    j = np.exp(rng.laplace(0.0, scale, size=t.shape))
    out = rng.random(t.shape) < p_out
    bump = 1.0 + tail * (rng.pareto(2.2, size=t.shape))
    return t * j * np.where(out, bump, 1.0)


# ----------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------
SCALES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120),
                  lay_cfg=(300, 3000), lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20),
                 lay_cfg=(30, 200), lay_test_cfg=(30, 60)),
}
SPLITS = ('train', 'valid', 'test')


def hexid(rng, k=16):
    return ''.join('0123456789abcdef'[int(x)] for x in rng.integers(0, 16, k))


def fp_hex(rng):
    v = int(rng.integers(-(2 ** 62), 2 ** 62))
    return ('-' if v < 0 else '') + format(abs(v), 'x')


def save_npz(path, **arrs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrs)


def save_noiseless(root, rel, arr):
    p = os.path.join(root, 'noiseless', rel[:-4] + '.npy')
    os.makedirs(os.path.dirname(p), exist_ok=True)
    np.save(p, np.asarray(arr, np.float64))


def gen_tile(root, seed, sc, factor):
    counts = [max(1, int(round(k * factor))) for k in sc['tile']]
    names = set()
    for si, split in enumerate(SPLITS):
        for gi in range(counts[si]):
            rng = np.random.default_rng([seed, 1, si, gi])
            c = int(rng.integers(sc['tile_cfg'][0], sc['tile_cfg'][1] + 1))
            for _ in range(200):
                b, kind = build_tile_graph(rng, sc['tile_nodes'])
                if space_size(b, rng) >= max(2 * sc['tile_cfg'][0], min(c, 3 * sc['tile_cfg'][0])):
                    break
            nf, opc, ei = to_arrays(b)
            cfg, dpos = gen_tile_configs(rng, b, c)
            if split == 'test':
                stem = hexid(rng, 32)
            else:
                base = {'ew': 'fusion', 'reduce': 'fusion', 'conv': 'convolution', 'dot': 'fusion'}[kind]
                if kind == 'conv' and rng.random() < 0.6:
                    base = 'fusion'
                stem = '%s_%d_%s' % (base, int(rng.integers(1, 900)), fp_hex(rng))
            while stem in names:
                stem = stem + 'x'
            names.add(stem)
            rel = 'npz/tile/xla/%s/%s.npz' % (split, stem)
            cc = cfg.shape[0]
            if split == 'test':
                rt = np.zeros(cc, np.int64)
                nm = np.ones(cc, np.int64)
            else:
                law = TileLaw(nf, opc, ei)
                t = law.evaluate(cfg)
                meas = noisy(rng, t, 0.01, 0.02, 0.05)
                rt = np.maximum(1, np.round(meas)).astype(np.int64)
                nm = np.full(cc, rt[dpos], np.int64)
                save_noiseless(root, rel, t)
            save_npz(os.path.join(root, rel), node_feat=nf, node_opcode=opc, edge_index=ei,
                     config_feat=cfg.astype(np.float32), config_runtime=rt,
                     config_runtime_normalizers=nm)


LAYOUT_NAMES = {
    'cnn': ['resnet50', 'resnet_v1_101', 'efficientnet_b0', 'mobilenet_v2', 'inception_v3', 'vgg16',
            'alexnet', 'retinanet_resnet50'],
    'unet3d': ['unet3d', 'unet_3d_brats', 'vnet'],
    'transformer': ['transformer_tf2', 'bert_classifier', 'gpt2_small', 't5_encoder', 'xlnet'],
    'rnn': ['lstm_lm', 'mlp_ranking', 'dlrm_tower', 'seq2seq_rnn'],
    'nlp': ['bert_en_cased_L-12_H-768_A-12', 'albert_en_base', 'talking-heads_en_base',
            'electra_small', 'small_bert_bert_en_uncased_L-4_H-512_A-8', 'bert_multi_cased',
            'experts_pubmed', 'mobilebert_en_uncased'],
}


def gen_layout(root, seed, sc, factor, source, search, coll_id):
    counts = [max(1, int(round(k * factor))) for k in sc['lay']]
    names = set()
    for si, split in enumerate(SPLITS):
        for gi in range(counts[si]):
            rng = np.random.default_rng([seed, 2 + coll_id, si, gi])
            b, fam, cfg_nodes = build_layout_graph(rng, source, sc['lay_nodes'], sc['lay_nc'])
            nf, opc, ei = to_arrays(b)
            splits = np.array([b.splits], np.int64)
            if split == 'test':
                c = int(rng.integers(sc['lay_test_cfg'][0], sc['lay_test_cfg'][1] + 1))
            else:
                c = int(rng.integers(sc['lay_cfg'][0], sc['lay_cfg'][1] + 1))
            ncf = gen_layout_configs(rng, b, cfg_nodes, c, search)
            if split == 'test':
                stem = hexid(rng, 32)
            else:
                nmlist = LAYOUT_NAMES['nlp'] if source == 'nlp' else LAYOUT_NAMES[fam]
                nm = str(rng.choice(nmlist))
                meta = getattr(b, 'meta', {})
                tr = meta.get('train', False)
                bs = meta.get('batch', 1)
                if source == 'nlp':
                    stem = '%s_batch_size_%d_%s_%s' % (nm, bs, 'train' if tr else 'test', hexid(rng, 6))
                else:
                    stem = '%s_%s_batch_%d_%s' % (nm, 'train' if tr else 'inference', bs, fp_hex(rng))
            while stem in names:
                stem = stem + 'x'
            names.add(stem)
            rel = 'npz/layout/%s/%s/%s/%s.npz' % (source, search, split, stem)
            if split == 'test':
                rt = np.zeros(c, np.int64)
            else:
                law = LayoutLaw(nf, opc, ei, splits, cfg_nodes)
                t = law.evaluate(ncf)
                meas = noisy(rng, t, 0.0015, 0.03, 0.01)
                rt = np.maximum(1, np.round(meas)).astype(np.int64)
                save_noiseless(root, rel, t)
            save_npz(os.path.join(root, rel), node_feat=nf, node_opcode=opc, edge_index=ei,
                     node_config_ids=cfg_nodes.astype(np.int64),
                     node_config_feat=ncf.astype(np.float32), node_splits=splits,
                     config_runtime=rt)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', default='small', choices=['tiny', 'small'])
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    a = ap.parse_args(argv)
    sc = SCALES[a.scale]
    os.makedirs(a.out, exist_ok=True)
    gen_tile(a.out, a.seed, sc, a.graphs_factor)
    cid = 0
    for source in ('xla', 'nlp'):
        for search in ('default', 'random'):
            gen_layout(a.out, a.seed, sc, a.graphs_factor, source, search, cid)
            cid += 1


if __name__ == '__main__':
    main()
