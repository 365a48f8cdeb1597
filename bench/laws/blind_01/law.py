#!/usr/bin/env python3
"""blind_01: a synthetic TpuGraphs-format dataset whose runtimes follow a hand-written
TPU cost law (written without looking at the tool that is tested against it).

Usage:  python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Everything below this line is private to the law (the people who run the bench only read
NOTE.md).

THE LAW
=======
The machine is a TPU-v3-like TensorCore: HBM at 450 B/ns, two 128x128 systolic matrix units
(MXU) at 0.94 GHz (61.6 bf16 TFLOP/s; f32 operands take three passes), a vector unit that
processes (8 sublanes x 128 lanes) vregs of 4 KiB, a transpose/permute unit (XLU), 16 MiB
of VMEM.  Memory holds every array in (8 x 128) tiles over its two most-minor physical
dimensions (16 x 128 for 2-byte types, 32 x 128 for 1-byte types), so the padded size of a
tensor is  vol / (s_minor * s_second) * roundup(s_minor, 128) * roundup(s_second, sub)
(rank 1: roundup(s, 128)).  smax(a, b) = (a^3 + b^3)^(1/3) is a soft roofline.

Everything is computed from the npz contents alone: shapes, element types and default
layouts from node_feat (cols 21-28, 2-20, 134-139), conv dimension numbers and windows
from node_feat (93-106, 37-92), reduce dimensions / transpose permutation from 31-36,
operands = producers of a node's edges in ascending id order (scalars ignored).

Tile law (tile:xla), one fused kernel per graph
-----------------------------------------------
The kernel kind is chosen from the fused ops: convolution > dot > reduce > copy/transpose
> elementwise.  The iteration space is the conv/dot output, the reduce's input, the copy's
output, or the fusion output.  Output bound b_i gives the tile extent on dim i as
min(S_i, b_i * u_i) with u = 128 on the layout's minor dim, the sublane tile on the
second-minor dim, 1 elsewhere; kernel bounds do the same on the conv kernel / dot rhs
(contraction tile on the kernel input-feature and spatial dims).  Then
  steps  = product of ceil(S_i / ext_i) (x contraction steps for MXU kernels)
  T      = max(Tc, Tm) + min(Tc, Tm) / steps + 350 ns * steps + launch
(Tc compute, Tm memory: pipelining hides the smaller one except for one step; each grid
step pays a fixed overhead).  Compute: elementwise/reduce kernels pay VPU time on the
*padded* tile (small lane extents waste lanes), with transcendental ops weighted more and
lane reductions paying XLU work; copy kernels pay XLU transposes if the minor dims of the
input and output differ; MXU kernels pay per tile pass (rows streamed + 128 cycles of
weight load) for ceil(Kt/128)*taps*ceil(Nt/128) passes, so tiny M tiles waste the MXU.
Memory: streamed operands move once per tile, at a DMA efficiency chunk/(chunk+384 B)
that depends on the contiguous run along the minor dim; for MXU kernels the activations
are re-read once per output-feature tile (and with a spatial halo), the weights once per
row tile.  Working set = 2 x (tiles) (+ f32 accumulator when the contraction is split);
over 16 MiB the kernel spills: T *= 1 + 2*(ws/16MiB - 1).  The normaliser is the
compiler's pick (fewest steps with ws <= 8 MiB, then widest lane tile), which is good but
not always the best.

Layout law (layout:*), a whole program
--------------------------------------
Every array gets a physical layout.  A configurable node's output layout is its config
(partial prefixes are completed in the node's default order; all -1 = its default).  Its
requested input layout (and kernel layout for convs) is its config, all -1 = whatever the
producer delivers.  Elementwise ops (and reduce-window) inherit the layout of their first
non-broadcast operand; broadcasts/constants/iotas adapt to their consumer for free; other
ops produce their default layout.  Costs (ns), summed over the program:
 * relayout copy whenever a requested layout differs from the delivered one, when a
   non-primary elementwise operand arrives in another layout, and when an array reaches a
   layout-fixed consumer (tuple/root, gather, slice, concat, all-reduce, ...) or the
   program output in a non-default layout:  smax(HBM read+write of both padded sizes,
   XLU work) + 700, XLU work = vregs * 10 ns if the minor dim changes, 0.3x that if only
   the second-minor changes.
 * fused elementwise clusters (single-consumer elementwise chains, optionally ending in a
   reduce): smax(VPU work on padded vregs, HBM traffic of cluster inputs/outputs in their
   physical layouts) + 900; reductions over the lane dim cost 3x, over sublanes 1.5x;
   transcendental / divide ops weigh 4-10 vreg ops.
 * conv / dot: smax(MXU time + relayout work, HBM traffic) + 900.  MXU time =
   flops / (peak * eK * eN * eM); eK, eN are 128-padding efficiencies of the contraction
   (input features x up to 8 packed window taps) and output-feature sizes, eM the
   sublane padding efficiency of the output's second-minor dim.  The MXU wants the contraction dim minor on the input (else XLU work
   on the whole input), output features minor on the kernel (transposed kernel 0.3x XLU
   per 2048-row pass, anything else 1x) and output features minor on the output (else XLU
   work on the output).  For dots the contraction is the lhs's last dim, the rhs's
   second-to-last, output features the last dims.
 * reshape / transpose: free if it is a bitcast of the physical layouts (same dim
   grouping order and compatible minor tiling / permuted layout), else a relayout copy.
 * data-movement ops at fixed default layouts (gather, slices, pads, concatenates,
   collectives, sort) add a constant; while/tuple/GTE/parameters are free.

Graphs and configurations (own sampler, module classes CNN / Transformer / tile_graph):
xla programs are conv nets (2-D or 3-D, NHWC, batch-norm, relu, pooling, optional training
step with weight/input-gradient convolutions, all-reduces and updates); nlp programs are
transformer encoders (layernorm, attention with reshape/transpose/batched dots, gelu FFN,
optional backward of the dense layers).  Called computations (reducers, while cond/body)
precede the main computation as in upstream's encoder.  Configurable nodes: a random
subset of convolutions, dots, reshapes and transposes.  'default' search = mutations of
the compiler default with plausible layouts (the default itself, other second-minor dims,
the consumer's preferred layout, bitcast transposes, rare minor swaps) plus duplicates;
'random' search = random permutations (full or two-dim prefix) on most nodes.  Tile
kernels are conv / dot / elementwise / reduce / copy fusions with random tile candidates
that fit in 1.3 x VMEM.  `breakdown=` in layout_runtime is only a debugging aid.

Measurement noise (stored config_runtime only; never in ROOT/noiseless):
multiplicative, log-normal: sigma 0.03 (tile, also on the separately measured
normaliser), 0.006 (layout default search), 0.012 (layout random search), plus a per-file
factor exp(N(0, 0.02)) that is the same for every config of a file.
"""
from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

# ----------------------------------------------------------------------------------------
# hardware constants of the law
HBM_BW = 450.0            # bytes per ns
ICI_BW = 100.0            # bytes per ns (collectives)
MXU_PEAK = 61600.0        # bf16 flops per ns
MXU_CYC_PER_NS = 1.88     # 2 MXUs x 0.94 GHz
VPU_RATE = 1.9            # vreg ops per ns
XLU_NS = 10.0             # ns per vreg permuted
STEP_NS = 350.0
KERNEL_NS = 900.0
COPY_NS = 700.0
TILE_LAUNCH_NS = 1500.0
VMEM = 16 * 1024 * 1024
DMA_HALF = 384.0          # bytes: DMA efficiency chunk / (chunk + DMA_HALF)

# opcode ids (XLA HloOpcode order as in tpu_graphs hlo_opcode.h)
OP = dict(abs=1, add=2, all_reduce=5, bitcast=11, broadcast=13, clamp=17, compare=20,
          concatenate=22, constant=24, convert=25, convolution=26, copy=27, divide=32,
          dot=34, dynamic_slice=35, dynamic_update_slice=36, exponential=37, fusion=41,
          gather=42, get_tuple_element=45, iota=48, log=50, log_plus_one=51, and_=52,
          not_=53, or_=54, maximum=57, minimum=58, multiply=59, negate=60, pad=62,
          parameter=63, power=66, reduce=70, reduce_window=72, reshape=75, reverse=76,
          rsqrt=81, select=83, select_and_scatter=84, slice=92, sort=93, sqrt=94,
          subtract=95, tanh=96, transpose=98, tuple=100, while_=102, logistic=107)

ELEMENTWISE = {1, 2, 7, 12, 15, 17, 19, 20, 25, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53, 54,
               55, 57, 58, 59, 60, 65, 66, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94, 95,
               96, 103, 107, 118, 120}
HEAVY_EW = {32: 4.0, 37: 6.0, 38: 6.0, 50: 6.0, 51: 6.0, 66: 8.0, 81: 5.0, 94: 5.0,
            96: 6.0, 107: 6.0, 30: 8.0, 91: 8.0, 7: 10.0, 103: 8.0, 120: 10.0}
FLEXIBLE = {13, 24, 48}
FREE = {63, 45, 100, 102, 11, 4, 3, 14, 23}
MOVE = {22, 35, 36, 42, 62, 76, 82, 92, 93, 31, 5, 104, 111, 18, 6, 39, 77}

# element types: one-hot column 2 + index in tpu_graphs' kPrimitiveTypeFeatures
DTYPES = {'pred': (3, 1), 's8': (4, 1), 's32': (6, 4), 'u32': (10, 4), 'f16': (12, 2),
          'f32': (13, 4), 'bf16': (15, 2), 'tuple': (18, 0)}
COL_BYTES = {2: 4, 3: 1, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8, 12: 2, 13: 4,
             14: 8, 15: 2, 16: 8, 17: 16, 18: 0, 19: 0, 20: 0}


def sub_tile(nb):
    return 8 * max(1, 4 // max(1, int(nb)))


def ceil_div(a, b):
    return -(-a // b)


def roundup(a, m):
    return np.ceil(np.asarray(a, dtype=np.float64) / m) * m


def smax(a, b, p=3.0):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    m = np.maximum(np.maximum(a, b), 1e-9)
    return m * ((a / m) ** p + (b / m) ** p) ** (1.0 / p)


# ----------------------------------------------------------------------------------------
# reading a graph back from the file arrays (the law only ever uses these)
class PG:
    def __init__(self, node_feat, node_opcode, edge_index):
        nf = np.asarray(node_feat, dtype=np.float64)
        self.nf = nf
        self.op = np.asarray(node_opcode).astype(np.int64)
        n = self.n = len(self.op)
        dims = nf[:, 21:27]
        self.rank = (dims > 0).sum(1).astype(np.int64)
        self.shape = [dims[v, :self.rank[v]].astype(np.int64) for v in range(n)]
        tcol = 2 + np.argmax(nf[:, 2:21], axis=1)
        self.nb = np.array([COL_BYTES.get(int(c), 4) for c in tcol], dtype=np.int64)
        self.nb[self.nb == 0] = 4
        self.deflay = []
        for v in range(n):
            r = self.rank[v]
            lay = nf[v, 134:134 + r].astype(np.int64)
            if r and sorted(lay.tolist()) != list(range(r)):
                lay = np.arange(r - 1, -1, -1)
            self.deflay.append(lay)
        ei = np.asarray(edge_index, dtype=np.int64).reshape(-1, 2)
        self.operands = [[] for _ in range(n)]
        self.consumers = [[] for _ in range(n)]
        for u, v in ei.tolist():
            self.operands[u].append(v)
            self.consumers[v].append(u)
        for v in range(n):
            self.operands[v] = sorted(set(self.operands[v]))
            self.consumers[v] = sorted(set(self.consumers[v]))
        self.arr_ops = [[o for o in self.operands[v] if self.rank[o] > 0] for v in range(n)]
        # arrays that are cheap to materialise in any layout (broadcasts, constants and
        # elementwise functions of those only)
        self.flex = np.zeros(n, dtype=bool)
        for v in range(n):
            o = self.op[v]
            if o in FLEXIBLE:
                self.flex[v] = True
            elif o in ELEMENTWISE and self.arr_ops[v] and all(self.flex[a] for a in self.arr_ops[v]):
                self.flex[v] = True

    def vol(self, v):
        return float(np.prod(self.shape[v])) if self.rank[v] else 1.0


def pbytes(shape, L, nb):
    """padded bytes of an array of `shape` in physical layouts L (m, r) -> (m,)"""
    r = len(shape)
    if r == 0:
        return np.full(1, float(nb))
    if r == 1:
        return np.full(1, float(roundup(shape[0], 128)) * nb)
    vol = float(np.prod(shape))
    s = np.asarray(shape, dtype=np.float64)
    smin = s[L[:, 0]]
    ssub = s[L[:, 1]]
    st = sub_tile(nb)
    return vol / (smin * ssub) * roundup(smin, 128) * roundup(ssub, st) * nb


def neq(a, b):
    return np.any(a != b, axis=1)


def relayout_cost(shape, nb, La, Lb):
    pa = pbytes(shape, La, nb)
    pb_ = pbytes(shape, Lb, nb)
    mem = (pa + pb_) / HBM_BW
    if len(shape) < 2:
        return mem + COPY_NS
    minor = (La[:, 0] != Lb[:, 0])
    second = (La[:, 1] != Lb[:, 1]) & ~minor
    x = np.maximum(pa, pb_) / 4096.0 * XLU_NS * (minor * 1.0 + second * 0.3)
    return smax(mem, x) + COPY_NS


def resolve_block(block, r, deflay, base):
    """block (c, 6) floats; prefix-partial layouts completed in `deflay` order; all -1 -> base"""
    c = block.shape[0]
    if r == 0:
        return None
    blk = np.rint(block[:, :r]).astype(np.int64)
    allm1 = (blk < 0).all(1)
    if allm1.all():
        return base
    posdef = np.empty(r, dtype=np.int64)
    posdef[deflay] = np.arange(r)
    keys = np.broadcast_to(100 + posdef[None, :], (c, r)).copy()
    for p in range(r):
        col = blk[:, p]
        rows = np.nonzero((col >= 0) & (col < r))[0]
        keys[rows, col[rows]] = np.minimum(keys[rows, col[rows]], p)
    out = np.argsort(keys, axis=1, kind='stable').astype(np.int8)
    if allm1.any():
        b = np.broadcast_to(base, (c, r)) if base.shape[0] == 1 else base
        out[allm1] = b[allm1]
    return out


def _groups(sa, sb):
    """coarsest common factorisation of two shapes (row-major); size-1 dims get -1"""
    ga = [-1] * len(sa)
    gb = [-1] * len(sb)
    ia = [i for i, s in enumerate(sa) if s != 1]
    ib = [i for i, s in enumerate(sb) if s != 1]
    i = j = 0
    g = 0
    while i < len(ia) and j < len(ib):
        pa, pb_ = sa[ia[i]], sb[ib[j]]
        ga[ia[i]] = g
        gb[ib[j]] = g
        while pa != pb_:
            if pa < pb_:
                i += 1
                if i >= len(ia):
                    return None, None
                pa *= sa[ia[i]]
                ga[ia[i]] = g
            else:
                j += 1
                if j >= len(ib):
                    return None, None
                pb_ *= sb[ib[j]]
                gb[ib[j]] = g
        i += 1
        j += 1
        g += 1
    return ga, gb


def _group_order(shape, L, gid):
    seq = [d for d in reversed(list(L)) if shape[d] != 1]
    order = []
    last_dim = {}
    for d in seq:
        gg = gid[d]
        if order and order[-1] == gg:
            if d < last_dim[gg]:
                return None
        elif gg in order:
            return None
        else:
            order.append(gg)
        last_dim[gg] = d
    return order


def reshape_bitcast(sin, Lin, sout, Lout):
    sin = [int(x) for x in sin]
    sout = [int(x) for x in sout]
    ga, gb = _groups(sin, sout)
    if ga is None:
        return False
    oa = _group_order(sin, Lin, ga)
    ob = _group_order(sout, Lout, gb)
    if oa is None or ob is None or oa != ob:
        return False
    ma, mb = sin[Lin[0]], sout[Lout[0]]
    if ma != mb and not (ma % 128 == 0 and mb % 128 == 0):
        return False
    if len(sin) >= 2 and len(sout) >= 2:
        sa, sb = sin[Lin[1]], sout[Lout[1]]
        if ma == mb and sa != sb and not (sa % 8 == 0 and sb % 8 == 0):
            return False
    return True


# ----------------------------------------------------------------------------------------
# layout law
def _vregs(shape, L, nb):
    return pbytes(shape, L, nb) / 4096.0


def _mxu_cost(g, v, X, Lx, K, Lk, O, Lo, fin, kif, kof, of, nwin_prod, cin_g, nbx, nbk):
    cout = float(O[of])
    flops = 2.0 * float(np.prod(O)) * cin_g * nwin_prod
    peak = MXU_PEAK if (nbx <= 2 and nbk <= 2) else MXU_PEAK / 3.0
    kc = cin_g * min(nwin_prod, 8.0)
    ek = kc / float(roundup(kc, 128))
    en = cout / float(roundup(cout, 128))
    nbo = g.nb[v]
    lane_ok = (Lo[:, 0] == of)
    if len(O) >= 2:
        ssub = np.asarray(O, dtype=np.float64)[Lo[:, 1]]
        em = np.where(lane_ok, ssub / roundup(ssub, 8), 1.0)
    else:
        em = np.ones(1)
    t_mxu = flops / (peak * ek * en * em)
    t_in = (Lx[:, 0] != fin) * _vregs(X, Lx, nbx) * XLU_NS
    rows = float(np.prod(O)) / max(cout, 1.0)
    passes = max(1.0, math.ceil(rows / 2048.0))
    k_ok = (Lk[:, 0] == kof)
    k_tr = (Lk[:, 0] == kif)
    t_k = (~k_ok) * np.where(k_tr, 0.3, 1.0) * _vregs(K, Lk, nbk) * XLU_NS * passes
    t_out = (~lane_ok) * _vregs(O, Lo, nbo) * XLU_NS
    mem = (pbytes(X, Lx, nbx) + pbytes(K, Lk, nbk) + pbytes(O, Lo, nbo)) / HBM_BW
    return smax(t_mxu + t_in + t_k + t_out, mem) + KERNEL_NS


def layout_runtime(node_feat, node_opcode, edge_index, node_config_ids, node_config_feat,
                   breakdown=None):
    g = PG(node_feat, node_opcode, edge_index)
    ncf = np.asarray(node_config_feat, dtype=np.float32)
    c = ncf.shape[0]
    cfg_of = {int(k): j for j, k in enumerate(np.asarray(node_config_ids).tolist())}
    n = g.n
    phys = [None] * n
    total = np.zeros(c)
    op = g.op

    def dl(v):
        return g.deflay[v][None, :].astype(np.int8)

    cat = ['misc']

    def add(x):
        nonlocal total
        total = total + x
        if breakdown is not None:
            breakdown[cat[0]] = breakdown.get(cat[0], 0) + np.broadcast_to(x, total.shape)

    def dyn(a):
        return a is not None and a.shape[0] > 1

    # pass 1: layouts and per-op costs (non-cluster)
    for v in range(n):
        r = g.rank[v]
        o = op[v]
        aops = g.arr_ops[v]
        x = aops[0] if aops else None
        if v in cfg_of:
            j = cfg_of[v]
            out_l = resolve_block(ncf[:, j, 0:6], r, g.deflay[v], dl(v)) if r else None
            in_req = None
            if x is not None:
                in_req = resolve_block(ncf[:, j, 6:12], g.rank[x], g.deflay[x], phys[x])
                if dyn(in_req) or dyn(phys[x]):
                    m = neq(in_req, phys[x])
                    if m.any():
                        cat[0] = 'copy_in'; add(m * relayout_cost(g.shape[x], g.nb[x], phys[x], in_req))
            k_req = None
            if o == OP['convolution'] and len(aops) > 1:
                kk = aops[1]
                k_req = resolve_block(ncf[:, j, 12:18], g.rank[kk], g.deflay[kk], phys[kk])
                if dyn(k_req) or dyn(phys[kk]):
                    m = neq(k_req, phys[kk])
                    if m.any():
                        cat[0] = 'copy_ker'; add(m * relayout_cost(g.shape[kk], g.nb[kk], phys[kk], k_req))
        else:
            if r == 0:
                out_l = None
            elif (o in ELEMENTWISE or o == OP['reduce_window']) and x is not None \
                    and g.rank[x] == r and np.array_equal(g.shape[x], g.shape[v]):
                prim = next((a for a in aops if not g.flex[a] and g.rank[a] == r), x)
                out_l = phys[prim]
            else:
                out_l = dl(v)
            in_req = phys[x] if x is not None else None
            k_req = phys[aops[1]] if len(aops) > 1 else None
        phys[v] = out_l

        # costs
        if o == OP['convolution'] and len(aops) >= 2:
            kk = aops[1]
            nfv = g.nf[v]
            nsp = int((nfv[37:43] > 0).sum())
            wprod = float(np.prod(nfv[37:37 + nsp])) if nsp else 1.0
            fin, kif, kof, of = (int(nfv[94]), int(nfv[99]), int(nfv[100]), int(nfv[106]))
            fgc = max(1.0, nfv[107])
            X, K, O = g.shape[x], g.shape[kk], g.shape[v]
            if fin < len(X) and kif < len(K) and kof < len(K) and of < len(O):
                cin_g = float(X[fin]) / fgc
                cat[0] = 'conv'; add(_mxu_cost(g, v, X, in_req, K, k_req, O, out_l, fin, kif, kof, of,
                              wprod, cin_g, g.nb[x], g.nb[kk]))
        elif o == OP['dot'] and len(aops) >= 2:
            rr = aops[1]
            X, K, O = g.shape[x], g.shape[rr], g.shape[v]
            if len(X) >= 1 and len(K) >= 2 and len(O) >= 1:
                cat[0] = 'dot'; add(_mxu_cost(g, v, X, in_req, K, phys[rr], O, out_l, len(X) - 1,
                              len(K) - 2, len(K) - 1, len(O) - 1, 1.0, float(X[-1]),
                              g.nb[x], g.nb[rr]))
        elif o == OP['reshape'] and x is not None and r >= 1:
            X = g.shape[x]
            if g.rank[x] >= 1:
                cat[0] = 'reshape'; add(_reshape_cost(X, in_req, g.shape[v], out_l, g.nb[v]))
        elif o == OP['transpose'] and x is not None and r >= 2:
            perm = g.nf[v, 31:31 + r].astype(np.int64)
            if sorted(perm.tolist()) == list(range(r)):
                cat[0] = 'transpose'; add(_transpose_cost(g.shape[x], in_req, g.shape[v], out_l, perm, g.nb[v]))
        elif o == OP['copy'] and x is not None and r >= 1:
            if np.array_equal(g.shape[x], g.shape[v]):
                cat[0] = 'copyop'; add(relayout_cost(g.shape[v], g.nb[v], in_req, out_l))
        elif o in (OP['reduce_window'], OP['select_and_scatter']) and x is not None and r:
            nsp = int((g.nf[v, 37:43] > 0).sum())
            wl = g.nf[v, 37:37 + nsp]
            wprod = float(np.prod(wl)) if nsp else 1.0
            X = g.shape[x]
            vin = _vregs(X, in_req, g.nb[x])
            lanewin = np.ones(1)
            if nsp == len(X):
                lanewin = np.where(wl[in_req[:, 0].astype(np.int64)] > 1, 1.5, 1.0)
            vpu = vin * min(wprod, 27.0) * lanewin / VPU_RATE
            mem = (pbytes(X, in_req, g.nb[x]) + pbytes(g.shape[v], out_l, g.nb[v])) / HBM_BW
            cat[0] = 'window'; add(smax(vpu, mem) + KERNEL_NS)
        elif o in MOVE:
            b = sum(float(pbytes(g.shape[a], dl(a), g.nb[a])[0]) for a in aops)
            if r:
                b += float(pbytes(g.shape[v], dl(v), g.nb[v])[0])
            bw = ICI_BW if o in (5, 104, 111, 18, 6) else HBM_BW
            extra = 1.0 + (math.log2(max(2.0, g.vol(v))) if o == OP['sort'] else 0.0)
            cat[0] = 'move'; add(np.full(1, b / bw * extra + KERNEL_NS + (4000.0 if bw == ICI_BW else 0.0)))

        # layout-fixed consumers need their array operands in default layout
        if not (o in ELEMENTWISE or o in FLEXIBLE or o in (26, 34, 70, 72, 84, 75, 98, 27)):
            for a in aops:
                if dyn(phys[a]):
                    m = neq(phys[a], dl(a))
                    if m.any():
                        cat[0] = 'copy_fixed'; add(m * relayout_cost(g.shape[a], g.nb[a], phys[a], dl(a)))
        # elementwise: non-primary operands in another layout are copied
        if o in ELEMENTWISE and r and out_l is not None and not g.flex[v]:
            for a in aops:
                if g.flex[a] or g.rank[a] != r or phys[a] is out_l:
                    continue
                if dyn(phys[a]) or dyn(out_l):
                    m = neq(phys[a], out_l)
                    if m.any():
                        cat[0] = 'copy_ew'; add(m * relayout_cost(g.shape[a], g.nb[a], phys[a], out_l))
    # program outputs must come back in their default layout
    for v in range(n):
        if not g.consumers[v] and g.rank[v] and dyn(phys[v]):
            m = neq(phys[v], dl(v))
            if m.any():
                cat[0] = 'copy_out'; add(m * relayout_cost(g.shape[v], g.nb[v], phys[v], dl(v)))

    # pass 2: fused elementwise clusters
    parent = list(range(n))

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    def is_ew(v):
        return op[v] in ELEMENTWISE and g.rank[v] > 0 and not g.flex[v]

    for v in range(n):
        if is_ew(v) and len(g.consumers[v]) == 1:
            u = g.consumers[v][0]
            if (is_ew(u) and g.rank[u] == g.rank[v]) or (op[u] == OP['reduce'] and
                                                        g.arr_ops[u] and g.arr_ops[u][0] == v):
                parent[find(v)] = find(u)
    clusters = {}
    for v in range(n):
        if is_ew(v) or (op[v] == OP['reduce'] and g.arr_ops[v]):
            clusters.setdefault(find(v), []).append(v)
    for root, mem_ in clusters.items():
        ms = set(mem_)
        vpu = np.zeros(1)
        traffic = np.zeros(1)
        seen = set()
        for m in mem_:
            if op[m] == OP['reduce']:
                xin = g.arr_ops[m][0]
                Lx = phys[xin]
                rin, rout = g.rank[xin], g.rank[m]
                red = set(g.nf[m, 31:31 + max(0, rin - rout)].astype(np.int64).tolist())
                fac = np.ones(1)
                if rin >= 1:
                    lane = np.isin(Lx[:, 0], list(red))
                    fac = 1.0 + 2.0 * lane
                    if rin >= 2:
                        fac = fac + 0.5 * (np.isin(Lx[:, 1], list(red)) & ~lane)
                vpu = vpu + _vregs(g.shape[xin], Lx, g.nb[xin]) * fac
            else:
                vpu = vpu + _vregs(g.shape[m], phys[m], g.nb[m]) * HEAVY_EW.get(int(op[m]), 1.0)
            for a in g.arr_ops[m]:
                if a in ms or a in seen or g.flex[a]:
                    continue
                seen.add(a)
                traffic = traffic + pbytes(g.shape[a], phys[a], g.nb[a])
            if (not g.consumers[m]) or any(u not in ms for u in g.consumers[m]):
                if g.rank[m]:
                    traffic = traffic + pbytes(g.shape[m], phys[m], g.nb[m])
        cat[0] = 'cluster'; add(smax(vpu / VPU_RATE, traffic / HBM_BW) + KERNEL_NS)
    return total


def _reshape_cost(X, Lx, Y, Ly, nb):
    m = max(Lx.shape[0], Ly.shape[0])
    Lx_ = np.broadcast_to(Lx, (m, Lx.shape[1]))
    Ly_ = np.broadcast_to(Ly, (m, Ly.shape[1]))
    both = np.concatenate([Lx_, Ly_], axis=1)
    uq, inv = np.unique(both, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    rx = Lx.shape[1]
    isbc = np.array([reshape_bitcast(X, u[:rx], Y, u[rx:]) for u in uq])[inv]
    pa = pbytes(X, Lx_, nb)
    pb_ = pbytes(Y, Ly_, nb)
    mem = (pa + pb_) / HBM_BW
    xs = np.asarray(X)[Lx_[:, 0].astype(np.int64)]
    ys = np.asarray(Y)[Ly_[:, 0].astype(np.int64)]
    xl = np.maximum(pa, pb_) / 4096.0 * XLU_NS * (xs != ys)
    return (~isbc) * (smax(mem, xl) + COPY_NS)


def _transpose_cost(X, Lx, Y, Ly, perm, nb):
    r = len(perm)
    pinv = np.empty(r, dtype=np.int64)
    pinv[perm] = np.arange(r)
    mapped = pinv[Lx.astype(np.int64)]
    isbc = ~neq(mapped, Ly)
    pa = pbytes(X, Lx, nb)
    pb_ = pbytes(Y, Ly, nb)
    mem = (pa + pb_) / HBM_BW
    minor = mapped[:, 0] != Ly[:, 0]
    second = (mapped[:, 1] != Ly[:, 1]) & ~minor
    xl = np.maximum(pa, pb_) / 4096.0 * XLU_NS * (minor * 1.0 + second * 0.3)
    return (~isbc) * (smax(mem, xl) + COPY_NS)


# ----------------------------------------------------------------------------------------
# tile law
def _units(shape, lay, nb):
    u = np.ones(len(shape))
    if len(shape) >= 1:
        u[lay[0]] = 128
    if len(shape) >= 2:
        u[lay[1]] = sub_tile(nb)
    return u


def _ext(S, b, u):
    S = np.asarray(S, dtype=np.float64)[None, :]
    e = np.where(b > 0, b * u[None, :], S)
    return np.clip(e, 1, S)


def _dma_eff(chunk):
    return chunk / (chunk + DMA_HALF)


def tile_analyse(node_feat, node_opcode, edge_index):
    """config-independent description of the fused kernel"""
    g = PG(node_feat, node_opcode, edge_index)
    op = g.op
    n = g.n
    last = n - 1
    outer = [a for a in g.operands[last] if op[a] == OP['parameter'] and g.rank[a] > 0]
    d = dict(g=g, last=last, outer=outer)
    inner = [v for v in range(n) if v != last and v not in outer]
    d['params'] = [v for v in inner if op[v] == OP['parameter'] and g.rank[v] > 0]
    convs = [v for v in inner if op[v] == OP['convolution']]
    dots = [v for v in inner if op[v] == OP['dot']]
    reds = [v for v in inner if op[v] == OP['reduce'] and g.arr_ops[v]]
    cps = [v for v in inner if op[v] in (OP['transpose'], OP['copy']) and g.arr_ops[v]]
    ew_w = sum(HEAVY_EW.get(int(op[v]), 1.0) for v in inner
               if op[v] in ELEMENTWISE and g.rank[v] > 0 and not g.flex[v])
    d['ew_w'] = max(ew_w, 0.5)
    if convs or dots:
        m = (convs or dots)[0]
        d['kind'] = 'mxu'
        d['main'] = m
        d['S'] = g.shape[m]
        d['lay'] = g.deflay[m]
        d['nb'] = g.nb[m]
    elif reds:
        m = max(reds, key=lambda v: g.vol(g.arr_ops[v][0]))
        xin = g.arr_ops[m][0]
        d['kind'] = 'reduce'
        d['main'] = m
        d['S'] = g.shape[xin]
        d['lay'] = g.deflay[xin]
        d['nb'] = g.nb[xin]
        rin, rout = g.rank[xin], g.rank[m]
        d['red'] = g.nf[m, 31:31 + max(0, rin - rout)].astype(np.int64)
    elif cps:
        m = cps[0]
        d['kind'] = 'copy'
        d['main'] = m
        d['S'] = g.shape[m]
        d['lay'] = g.deflay[m]
        d['nb'] = g.nb[m]
    else:
        d['kind'] = 'ew'
        d['main'] = last
        d['S'] = g.shape[last]
        d['lay'] = g.deflay[last]
        d['nb'] = g.nb[last]
    d['u'] = _units(d['S'], d['lay'], d['nb'])
    if d['kind'] == 'mxu':
        m = d['main']
        aops = g.arr_ops[m]
        X, K = aops[0], aops[1]
        d['X'], d['K'] = X, K
        d['uk'] = _units(g.shape[K], g.deflay[K], g.nb[K])
        nfv = g.nf[m]
        if op[m] == OP['convolution']:
            nsp = int((nfv[37:43] > 0).sum())
            d['fin'], d['kif'], d['kof'], d['of'] = (int(nfv[94]), int(nfv[99]),
                                                     int(nfv[100]), int(nfv[106]))
            d['ks'] = nfv[101:101 + nsp].astype(np.int64)
            d['os'] = [i for i in range(len(d['S'])) if i not in (int(nfv[105]), d['of'])]
            d['win'] = nfv[37:37 + nsp]
        else:
            rk = g.rank[K]
            d['fin'], d['kif'], d['kof'], d['of'] = (g.rank[X] - 1, rk - 2, rk - 1,
                                                     len(d['S']) - 1)
            d['ks'] = np.zeros(0, dtype=np.int64)
            d['os'] = []
            d['win'] = np.zeros(0)
    return d


def tile_terms(d, cfg):
    """returns (runtime ns (c,), working set bytes (c,), steps (c,), lane extent (c,))"""
    g = d['g']
    cfg = np.asarray(cfg, dtype=np.float64)
    S = np.asarray(d['S'], dtype=np.float64)
    r = len(S)
    lay = d['lay']
    nb = float(d['nb'])
    st = sub_tile(nb)
    ext = _ext(S, cfg[:, 8:8 + r], d['u'])
    ntile = np.ceil(S[None, :] / ext)
    steps_o = ntile.prod(1)
    lane = lay[0]
    sub = lay[1] if r >= 2 else None
    pad_ext = ext.copy()
    pad_ext[:, lane] = roundup(ext[:, lane], 128)
    if sub is not None:
        pad_ext[:, sub] = roundup(ext[:, sub], st)
    tile_pad_el = pad_ext.prod(1)
    tile_vregs = tile_pad_el * nb / 4096.0
    chunk = ext[:, lane] * nb
    if sub is not None:
        chunk = np.where(ext[:, lane] >= S[lane], chunk * ext[:, sub], chunk)
    eff = _dma_eff(chunk)
    vol_it = float(np.prod(S))
    kind = d['kind']

    def streamed(out_tile_el, steps, it_vol):
        tr = np.zeros(1)
        ws = np.zeros(1)
        res = 0.0
        for a in d['params']:
            if d.get('X') == a or d.get('K') == a:
                continue
            if g.vol(a) >= it_vol * 0.5:
                tb = out_tile_el * g.nb[a] * min(1.0, g.vol(a) / it_vol)
                tr = tr + steps * tb
                ws = ws + 2 * tb
            else:
                b = float(pbytes(g.shape[a], g.deflay[a][None, :], g.nb[a])[0])
                res += b
                tr = tr + b
        return tr, ws + res

    if kind in ('ew', 'reduce', 'copy'):
        steps = steps_o
        tot_vregs = steps * tile_vregs
        tr_in, ws_in = streamed(tile_pad_el, steps, vol_it)
        if kind == 'ew':
            out_tr = steps * tile_pad_el * nb
            ws = ws_in + 2 * tile_pad_el * nb
            t_c = tot_vregs * d['ew_w'] / VPU_RATE
            t_m = (tr_in + out_tr) / (HBM_BW * eff)
        elif kind == 'reduce':
            red = [int(x) for x in d['red']]
            keep = [i for i in range(r) if i not in red]
            out_el = pad_ext[:, keep].prod(1) if keep else np.ones(1)
            steps_keep = ntile[:, keep].prod(1) if keep else np.ones(1)
            out_tr = steps_keep * out_el * 4.0
            ws = ws_in + 2 * out_el * 4.0
            fac = 1.0 + (2.0 if lane in red else 0.0) + (0.5 if (sub is not None and sub in red) else 0.0)
            t_c = tot_vregs * (d['ew_w'] + fac) / VPU_RATE
            t_m = tr_in / (HBM_BW * eff) + out_tr / HBM_BW
        else:
            m = d['main']
            x = g.arr_ops[m][0]
            if g.op[m] == OP['transpose']:
                perm = g.nf[m, 31:31 + r].astype(np.int64)
                pinv = np.empty(r, dtype=np.int64)
                pinv[perm] = np.arange(r)
                in_minor = int(pinv[g.deflay[x][0]])
            else:
                in_minor = int(g.deflay[x][0]) if g.rank[x] == r else lane
            chunk_r = ext[:, in_minor] * g.nb[x]
            eff_r = _dma_eff(chunk_r)
            tb = tile_pad_el * nb
            ws = 4 * tb
            xl = XLU_NS * (1.0 if in_minor != lane else 0.0)
            t_c = tot_vregs * (0.3 + xl * VPU_RATE) / VPU_RATE
            t_m = steps * tb / (HBM_BW * eff_r) + steps * tb / (HBM_BW * eff)
    else:
        X, K = d['X'], d['K']
        KS = np.asarray(g.shape[K], dtype=np.float64)
        rk = len(KS)
        kext = _ext(KS, cfg[:, 0:rk], d['uk'])
        of, kif, kof = d['of'], d['kif'], d['kof']
        cout = S[of]
        n_t = np.minimum(ext[:, of], kext[:, kof])
        mdims = [i for i in range(r) if i != of]
        m_t = ext[:, mdims].prod(1) if mdims else np.ones(1)
        n_m = ntile[:, mdims].prod(1) if mdims else np.ones(1)
        n_n = np.ceil(cout / n_t)
        cin = KS[kif]
        taps_t = np.ones(1)
        n_k = np.ceil(cin / kext[:, kif])
        for s in d['ks']:
            taps_t = taps_t * kext[:, s]
            n_k = n_k * np.ceil(KS[s] / kext[:, s])
        steps = n_m * n_n * n_k
        passes = np.ceil(kext[:, kif] / 128.0) * taps_t * np.ceil(n_t / 128.0)
        nbx, nbk = float(g.nb[X]), float(g.nb[K])
        cyc = passes * (roundup(m_t, 8) + 128.0) * (1.0 if max(nbx, nbk) <= 2 else 3.0)
        t_mxu = steps * cyc / MXU_CYC_PER_NS
        halo = np.ones(1)
        for i, s in zip(d['os'], d['ks']):
            halo = halo * (ext[:, i] + KS[s] - 1) / ext[:, i]
        xb = float(pbytes(g.shape[X], g.deflay[X][None, :], g.nb[X])[0])
        kb = float(pbytes(g.shape[K], g.deflay[K][None, :], g.nb[K])[0])
        ob = float(pbytes(g.shape[d['main']], g.deflay[d['main']][None, :], nb)[0])
        eff_x = _dma_eff(np.minimum(kext[:, kif], cin) * nbx)
        traffic = xb * n_n * halo / eff_x + kb * n_m / _dma_eff(n_t * nbk) + ob / eff
        tr_in, ws_in = streamed(tile_pad_el, steps_o, vol_it)
        traffic = traffic + tr_in / eff
        x_tile = m_t * halo * kext[:, kif] * nbx
        k_tile = taps_t * kext[:, kif] * n_t * nbk
        o_tile = m_t * n_t * nb
        ws = 2 * (x_tile + k_tile + o_tile) + (n_k > 1) * m_t * n_t * 4.0 + ws_in
        t_m = traffic / HBM_BW
        t_v = steps_o * tile_vregs * d['ew_w'] / VPU_RATE
        t_c = np.maximum(t_mxu, t_v)
    t = np.maximum(t_c, t_m) + np.minimum(t_c, t_m) / steps + steps * STEP_NS + TILE_LAUNCH_NS
    over = np.maximum(ws / VMEM - 1.0, 0.0)
    t = t * (1.0 + 2.0 * over)
    return t, ws, steps, ext[:, lane]


def tile_runtime(node_feat, node_opcode, edge_index, config_feat):
    d = tile_analyse(node_feat, node_opcode, edge_index)
    return tile_terms(d, config_feat)[0]


# ----------------------------------------------------------------------------------------
# graph builder (our own sampler of HLO-like graphs)
class Node:
    __slots__ = ('op', 'shape', 'dt', 'ops', 'lay', 'root', 'feat', 'calls', 'tsize', 'pnum')


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.pcount = 0

    def add(self, op, shape, dt, ops=(), lay=None, root=False, feat=None, calls=None,
            tsize=0, pnum=None):
        nd = Node()
        nd.op = int(op)
        nd.shape = tuple(int(s) for s in shape)
        nd.dt = dt
        nd.ops = [int(o) for o in ops]
        r = len(nd.shape)
        if lay is None:
            lay = tuple(range(r - 1, -1, -1))
        nd.lay = tuple(int(x) for x in lay)
        assert len(nd.lay) == r, (op, shape, lay)
        nd.root = root
        nd.feat = feat or {}
        nd.calls = calls or []
        nd.tsize = tsize
        nd.pnum = pnum
        self.nodes.append(nd)
        return len(self.nodes) - 1

    # helpers ---------------------------------------------------------------------------
    def sh(self, v):
        return self.nodes[v].shape

    def lay(self, v):
        return self.nodes[v].lay

    def dt(self, v):
        return self.nodes[v].dt

    def param(self, shape, dt, lay=None):
        p = self.pcount
        self.pcount += 1
        return self.add(OP['parameter'], shape, dt, lay=lay, pnum=p)

    def const(self, dt='f32'):
        return self.add(OP['constant'], (), dt)

    def bcast(self, src, shape, dims, lay):
        return self.add(OP['broadcast'], shape, self.dt(src), [src], lay=lay,
                        feat={'dims': list(dims)})

    def sbcast(self, shape, lay, dt='f32'):
        c = self.const(dt)
        return self.bcast(c, shape, [], lay)

    def ew(self, op, *ops, dt=None):
        a = ops[0]
        return self.add(op, self.sh(a), dt or self.dt(a), list(ops), lay=self.lay(a))

    def convert(self, a, dt):
        return self.add(OP['convert'], self.sh(a), dt, [a], lay=self.lay(a))

    def reduce(self, a, dims, kind='add', dt=None):
        dims = sorted(dims)
        s = self.sh(a)
        out = tuple(x for i, x in enumerate(s) if i not in dims)
        ol = None
        if out:
            # default output layout: keep the relative order of the input's layout
            keep = [i for i in range(len(s)) if i not in dims]
            remap = {d: k for k, d in enumerate(keep)}
            ol = tuple(remap[d] for d in self.lay(a) if d in remap)
        init = self.const(dt or self.dt(a))
        return self.add(OP['reduce'], out, dt or self.dt(a), [a, init], lay=ol,
                        feat={'dims': dims}, calls=[('reducer', kind, dt or self.dt(a))])

    def finalize(self, extra_comps=(), want_splits=False):
        """prologue: one reducer computation per reduce/reduce-window/all-reduce, then the
        extra computations (while cond/body: lists of (op, shape, dt, local operands, flag)
        with the main-local id of their caller), then the main computation."""
        pro = []          # (op, shape, dt, operands, is_root, pnum)
        call_edges = []   # (main local id, prologue id)
        for i, nd in enumerate(self.nodes):
            for cl in nd.calls:
                if cl[0] == 'reducer':
                    dt = cl[2] if cl[2] in DTYPES and cl[2] != 'tuple' else 'f32'
                    base = len(pro)
                    pro.append((OP['parameter'], (), dt, [], False, 0))
                    pro.append((OP['parameter'], (), dt, [], False, 1))
                    rop = {'add': OP['add'], 'max': OP['maximum'], 'min': OP['minimum'],
                           'or': OP['or_']}[cl[1]]
                    pro.append((rop, (), dt, [base, base + 1], True, None))
                    call_edges.append((i, base + 2))
        seg_ends = [len(pro)] if pro else []
        for comp, caller in extra_comps:
            base = len(pro)
            for (o, s, dt, ops, flag) in comp:
                if o == 'p':
                    pro.append((OP['parameter'], s, dt, [], False, 0))
                else:
                    pro.append((o, s, dt, [base + x for x in ops], flag == 'root', None))
            for k, t in enumerate(comp):
                if t[4] == 'root':
                    call_edges.append((caller, base + k))
            seg_ends.append(len(pro))
        npro = len(pro)
        n = npro + len(self.nodes)
        nf = np.zeros((n, 140), dtype=np.float32)
        opc = np.zeros(n, dtype=np.uint8)
        edges = set()
        for k, (o, s, dt, ops, isroot, pn) in enumerate(pro):
            _featurize(nf[k], o, s, dt, None, isroot, {}, 0, pn)
            opc[k] = o
            for x in ops:
                edges.add((k, x))
        for i, nd in enumerate(self.nodes):
            k = npro + i
            _featurize(nf[k], nd.op, nd.shape, nd.dt, nd.lay, nd.root, nd.feat, nd.tsize,
                       nd.pnum)
            opc[k] = nd.op
            for x in nd.ops:
                edges.add((k, npro + x))
        for (i, p) in call_edges:
            edges.add((npro + i, p))
        ei = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
        assert (ei[:, 0] > ei[:, 1]).all()
        if want_splits:
            splits = sorted(set([0] + seg_ends + [n]))
            return nf, opc, ei, np.array([splits], dtype=np.int64)
        return nf, opc, ei


def _seq(f, base, vals, n, agg=True, zero_prod_empty=False):
    vals = [float(x) for x in vals]
    for i, x in enumerate(vals[:n]):
        f[base + i] = x
    if agg:
        f[base + n] = sum(vals)
        f[base + n + 1] = (0.0 if (zero_prod_empty and not vals) else float(np.prod(vals)) if vals else 1.0)


def _featurize(f, op, shape, dt, lay, root, feat, tsize, pnum):
    f[0] = 1.0 if root else 0.0
    f[DTYPES[dt][0]] = 1.0
    _seq(f, 21, shape, 6)
    f[29] = tsize
    f[30] = pnum if pnum is not None else 0
    _seq(f, 31, feat.get('dims', []), 6, agg=False)
    w = feat.get('window')
    if w is None:
        for b in (37, 45, 53, 61, 69, 77):
            _seq(f, b, [], 6)
    else:
        for k, key in enumerate(('size', 'stride', 'plo', 'phi', 'wdil', 'bdil')):
            _seq(f, 37 + 8 * k, w[key], 6)
        rev = w.get('rev', [0] * len(w['size']))
        for i, x in enumerate(rev[:6]):
            f[85 + i] = float(x)
        f[91] = float(sum(1 for x in rev if x))
        f[92] = float(sum(1 for x in rev if not x))
    cd = feat.get('conv')
    if cd is not None:
        f[93] = cd['ib']
        f[94] = cd['if']
        _seq(f, 95, cd['is'], 4, agg=False)
        f[99] = cd['kif']
        f[100] = cd['kof']
        _seq(f, 101, cd['ks'], 4, agg=False)
        f[105] = cd['ob']
        f[106] = cd['of']
        f[107] = cd.get('fgc', 1)
        f[108] = cd.get('bgc', 1)
    if 'groups' in feat:
        f[107], f[108] = feat['groups']
    sl = feat.get('slice')
    if sl is None:
        for b in (109, 113, 117):
            _seq(f, b, [], 2)
    else:
        _seq(f, 109, sl[0], 2)
        _seq(f, 113, sl[1], 2)
        _seq(f, 117, sl[2], 2)
    _seq(f, 121, feat.get('dss', []), 2)
    pd = feat.get('pad')
    if pd is None:
        _seq(f, 125, [], 2)
        _seq(f, 129, [], 2)
    else:
        _seq(f, 125, pd[0], 2)
        _seq(f, 129, pd[1], 2)
    f[133] = feat.get('stable', 0)
    if lay is not None and len(shape):
        for i, x in enumerate(list(lay)[:6]):
            f[134 + i] = x


# ----------------------------------------------------------------------------------------
# graph families
def tpu_act_layout(r):
    # feature dim minor, batch second-minor, spatial dims major (TPU-style)
    return tuple([r - 1, 0] + list(range(r - 2, 0, -1)))


def std_layout(r):
    return tuple(range(r - 1, -1, -1))


def conv_window(ks, stride=1, pad='same', base_dil=1, wdil=1, rev=False):
    ns = len(ks)
    s = [stride] * ns
    plo = [((k - 1) * wdil) // 2 if pad == 'same' else 0 for k in ks]
    phi = [((k - 1) * wdil) - p if pad == 'same' else 0 for k, p in zip(ks, plo)]
    return {'size': list(ks), 'stride': s, 'plo': plo, 'phi': phi, 'wdil': [wdil] * ns,
            'bdil': [base_dil] * ns, 'rev': [1 if rev else 0] * ns}


class CNN:
    """vision model (ResNet/VGG/UNet-ish), optional training step"""

    def __init__(self, rng, target, tiny):
        self.rng = rng
        self.b = Builder(rng)
        self.target = target
        self.tiny = tiny

    def est(self):
        b = self.b
        return len(b.nodes) + 3 * sum(len(nd.calls) for nd in b.nodes)

    def alay(self, shape):
        """the compiler's default layout for an activation (batch, spatial..., feature)"""
        r = len(shape)
        B, C = shape[0], shape[-1]
        minor = r - 1 if (C >= 32 or C >= shape[r - 2]) else r - 2
        rest = [d for d in range(r) if d != minor]
        if self.style == 'tpu' and B >= 8:
            second = 0
        else:
            second = max(rest, key=lambda d: (shape[d] >= 8, d != 0, d))
        major = sorted([d for d in rest if d != second], reverse=True)
        return tuple([minor, second] + major)

    def build(self):
        rng = self.rng
        b = self.b
        three_d = rng.random() < 0.25
        self.nsp = 3 if three_d else 2
        r = self.nsp + 2
        self.r = r
        self.style = 'tpu' if rng.random() < 0.5 else 'std'
        self.dt = 'bf16' if rng.random() < 0.65 else 'f32'
        self.train = (not self.tiny) and rng.random() < 0.65
        if three_d:
            B = int(rng.choice([1, 2, 4]))
            H = int(rng.choice([32, 48, 64, 96]))
            C = int(rng.choice([1, 2, 4]))
        else:
            B = int(rng.choice([1, 2, 4, 8, 16, 32, 64, 128]))
            H = int(rng.choice([32, 56, 64, 96, 112, 128, 160, 224]))
            C = 3
        while B * H ** self.nsp * 64 > 2 ** 26 and B > 1:
            B //= 2
        while B * H ** self.nsp * 64 > 2 ** 26:
            H //= 2
        shape = (B,) + (H,) * self.nsp + (C,)
        x = b.param(shape, 'f32', lay=self.alay(shape))
        if self.dt == 'bf16':
            x = b.convert(x, 'bf16')
        self.blocks = []
        width = int(rng.choice([16, 32, 64]))
        nblk = 0
        budget = self.target * (0.42 if self.train else 0.8)
        skip = None
        while self.est() < budget or nblk < 1:
            s = b.sh(x)
            sp = s[1]
            down = nblk > 0 and sp > 4 and rng.random() < 0.3
            if down:
                width = min(width * 2, 1024)
            k = 7 if (nblk == 0 and not three_d and rng.random() < 0.5) else int(rng.choice([1, 3, 3, 3]))
            x, info = self.block(x, width, k, 2 if down else 1, skip if (not down and rng.random() < 0.5) else None)
            skip = x
            self.blocks.append(info)
            nblk += 1
            if rng.random() < 0.15 and b.sh(x)[1] > 8:
                x = self.pool(x)
                skip = None
        # head
        s = b.sh(x)
        sp_vol = int(np.prod(s[1:-1]))
        if sp_vol <= 64 and rng.random() < 0.6:
            flat = b.add(OP['reshape'], (s[0], sp_vol * s[-1]), b.dt(x), [x])
            feat = flat
        else:
            red = b.reduce(x, list(range(1, r - 1)))
            feat = b.ew(OP['multiply'], red, b.sbcast(b.sh(red), b.lay(red), b.dt(red)))
        ncls = int(rng.choice([10, 100, 1000]))
        Fd = b.sh(feat)[1]
        w = b.param((Fd, ncls), 'f32')
        wc = b.convert(w, self.dt) if self.dt == 'bf16' else w
        logits = b.add(OP['dot'], (s[0], ncls), self.dt, [feat, wc])
        lf = b.convert(logits, 'f32') if self.dt == 'bf16' else logits
        sm = self.softmax(lf, 1)
        if not self.train:
            b.add(OP['tuple'], (), 'tuple', [sm], root=True, tsize=1)
            return b
        labels = b.param(b.sh(sm), 'f32')
        lg = b.ew(OP['log'], sm)
        ml = b.ew(OP['multiply'], lg, labels)
        loss = b.reduce(ml, [0, 1])
        # backward
        fT = b.add(OP['transpose'], (Fd, s[0]), b.dt(feat), [feat], feat={'dims': [1, 0]})
        dlog = b.ew(OP['subtract'], sm, labels)
        if self.dt == 'bf16':
            dlog = b.convert(dlog, 'bf16')
        dW = b.add(OP['dot'], (Fd, ncls), self.dt, [fT, dlog])
        wT = b.add(OP['transpose'], (ncls, Fd), b.dt(wc), [wc], feat={'dims': [1, 0]})
        dfeat = b.add(OP['dot'], (s[0], Fd), self.dt, [dlog, wT])
        outs = [loss, self.update(w, dW)]
        if feat != x and b.nodes[feat].op == OP['reshape']:
            g = b.add(OP['reshape'], s, self.dt, [dfeat], lay=self.alay(s))
        else:
            bc = b.bcast(dfeat, s, [0, r - 1], self.alay(s))
            g = b.ew(OP['multiply'], bc, b.sbcast(s, self.alay(s), self.dt))
        for info in reversed(self.blocks):
            if self.est() > self.target * 0.97:
                break
            g, upd = self.block_back(g, info)
            outs.extend(upd)
        b.add(OP['tuple'], (), 'tuple', outs, root=True, tsize=len(outs))
        return b

    def update(self, w, dW):
        b = self.b
        d = b.convert(dW, 'f32') if b.dt(dW) != 'f32' else dW
        if self.rng.random() < 0.5:
            d = b.add(OP['all_reduce'], b.sh(d), 'f32', [d], lay=b.lay(d),
                      calls=[('reducer', 'add', 'f32')])
        lr = b.sbcast(b.sh(w), b.lay(w))
        step = b.ew(OP['multiply'], d, lr)
        return b.ew(OP['subtract'], w, step)

    def softmax(self, x, axis):
        b = self.b
        s = b.sh(x)
        mx = b.reduce(x, [axis], 'max')
        keep = [i for i in range(len(s)) if i != axis]
        mb = b.bcast(mx, s, keep, b.lay(x))
        e = b.ew(OP['exponential'], b.ew(OP['subtract'], x, mb))
        sm = b.reduce(e, [axis])
        sb = b.bcast(sm, s, keep, b.lay(x))
        return b.ew(OP['divide'], e, sb)

    def pool(self, x):
        b = self.b
        s = b.sh(x)
        r = len(s)
        size = [1] + [2] * self.nsp + [1]
        w = {'size': size, 'stride': size, 'plo': [0] * r, 'phi': [0] * r,
             'wdil': [1] * r, 'bdil': [1] * r, 'rev': [0] * r}
        out = (s[0],) + tuple(ceil_div(x_, 2) for x_ in s[1:-1]) + (s[-1],)
        init = b.const(b.dt(x))
        return b.add(OP['reduce_window'], out, b.dt(x), [x, init], lay=b.lay(x),
                     feat={'window': w}, calls=[('reducer', 'max', b.dt(x))])

    def conv_fwd(self, x, w_f32, k, stride):
        b = self.b
        s = b.sh(x)
        nsp = self.nsp
        cout = b.sh(w_f32)[-1]
        wk = b.convert(w_f32, self.dt) if self.dt == 'bf16' else w_f32
        out = (s[0],) + tuple(ceil_div(q, stride) for q in s[1:-1]) + (cout,)
        cd = {'ib': 0, 'if': nsp + 1, 'is': list(range(1, nsp + 1)), 'kif': nsp,
              'kof': nsp + 1, 'ks': list(range(nsp)), 'ob': 0, 'of': nsp + 1}
        win = conv_window([k] * nsp, stride)
        return b.add(OP['convolution'], out, self.dt, [x, wk], lay=self.alay(out),
                     feat={'window': win, 'conv': cd}), wk

    def block(self, x, width, k, stride, skip):
        b = self.b
        rng = self.rng
        s = b.sh(x)
        nsp = self.nsp
        cin = s[-1]
        w = b.param((k,) * nsp + (cin, width), 'f32')
        y, wk = self.conv_fwd(x, w, k, stride)
        ys = b.sh(y)
        info = {'x': x, 'w': w, 'k': k, 'stride': stride, 'y': y}
        C = ys[-1]
        r = self.r
        red_dims = list(range(0, r - 1))
        if self.train:
            yf = b.convert(y, 'f32') if self.dt == 'bf16' else y
            sm = b.reduce(yf, red_dims)
            mean = b.ew(OP['multiply'], sm, b.sbcast((C,), (0,)))
            mb = b.bcast(mean, ys, [r - 1], b.lay(y))
            dlt = b.ew(OP['subtract'], yf, mb)
            sq = b.ew(OP['multiply'], dlt, dlt)
            var = b.reduce(sq, red_dims)
            var = b.ew(OP['multiply'], var, b.sbcast((C,), (0,)))
            inv = b.ew(OP['rsqrt'], b.ew(OP['add'], var, b.sbcast((C,), (0,))))
            ib = b.bcast(inv, ys, [r - 1], b.lay(y))
            nrm = b.ew(OP['multiply'], dlt, ib)
            info['nrm'] = nrm
            info['inv'] = ib
        else:
            nrm = b.convert(y, 'f32') if (self.dt == 'bf16' and rng.random() < 0.3) else y
        gam = b.param((C,), 'f32')
        bet = b.param((C,), 'f32')
        gb = b.bcast(gam, ys, [r - 1], b.lay(y))
        h = b.ew(OP['multiply'], nrm, gb if b.dt(nrm) == 'f32' else b.convert(gb, b.dt(nrm)))
        bb = b.bcast(bet, ys, [r - 1], b.lay(y))
        h = b.ew(OP['add'], h, bb if b.dt(h) == 'f32' else b.convert(bb, b.dt(h)))
        info['gamma'] = gam
        if b.dt(h) != self.dt:
            h = b.convert(h, self.dt)
        if skip is not None and b.sh(skip) == b.sh(h):
            h = b.ew(OP['add'], h, skip)
        zero = b.sbcast(ys, b.lay(y), self.dt)
        a = b.ew(OP['maximum'], h, zero)
        info['pre'] = h
        info['a'] = a
        return a, info

    def block_back(self, g, info):
        b = self.b
        r = self.r
        nsp = self.nsp
        h, a = info['pre'], info['a']
        ys = b.sh(a)
        zero = b.sbcast(ys, b.lay(a), self.dt)
        cmp = b.add(OP['compare'], ys, 'pred', [h, zero], lay=b.lay(h))
        zero2 = b.sbcast(ys, b.lay(a), self.dt)
        gg = b.add(OP['select'], ys, self.dt, [cmp, g, zero2], lay=b.lay(h))
        gf = b.convert(gg, 'f32') if self.dt == 'bf16' else gg
        gam = info['gamma']
        dg = b.reduce(b.ew(OP['multiply'], gf, info.get('nrm', gf)), list(range(r - 1)))
        outs = [self.update(gam, dg)]
        gb = b.bcast(gam, ys, [r - 1], b.lay(a))
        gy = b.ew(OP['multiply'], gf, gb)
        if 'inv' in info:
            gy = b.ew(OP['multiply'], gy, info['inv'])
        gy = b.convert(gy, self.dt) if self.dt == 'bf16' else gy
        x, w, k, stride = info['x'], info['w'], info['k'], info['stride']
        xs = b.sh(x)
        ws = b.sh(w)
        # weight gradient: batch dim becomes the contraction
        cd = {'ib': nsp + 1, 'if': 0, 'is': list(range(1, nsp + 1)), 'kif': 0,
              'kof': nsp + 1, 'ks': list(range(1, nsp + 1)), 'ob': nsp, 'of': nsp + 1}
        win = {'size': list(ys[1:-1]), 'stride': [1] * nsp,
               'plo': [(k - 1) // 2] * nsp, 'phi': [k - 1 - (k - 1) // 2] * nsp,
               'wdil': [stride] * nsp, 'bdil': [1] * nsp, 'rev': [0] * nsp}
        dW = b.add(OP['convolution'], ws, self.dt, [x, gy], feat={'window': win, 'conv': cd})
        outs.append(self.update(w, dW))
        # input gradient (not for the first block: its input is the image)
        if b.nodes[x].op not in (OP['parameter'], OP['convert']):
            if self.dt == 'bf16':
                wk = b.convert(w, 'bf16')
                rev = True
            else:
                wk = b.add(OP['reverse'], ws, 'f32', [w], feat={'dims': list(range(nsp))})
                rev = False
            cd2 = {'ib': 0, 'if': nsp + 1, 'is': list(range(1, nsp + 1)), 'kif': nsp + 1,
                   'kof': nsp, 'ks': list(range(nsp)), 'ob': 0, 'of': nsp + 1}
            win2 = conv_window([k] * nsp, 1, base_dil=stride, rev=rev)
            dx = b.add(OP['convolution'], xs, self.dt, [gy, wk], lay=self.alay(xs),
                       feat={'window': win2, 'conv': cd2})
            return dx, outs
        return gy, outs


class Transformer:
    """NLP model (BERT/T5/GPT-ish encoder stack), optional training step"""

    def __init__(self, rng, target, tiny):
        self.rng = rng
        self.b = Builder(rng)
        self.target = target
        self.tiny = tiny

    def est(self):
        b = self.b
        return len(b.nodes) + 3 * sum(len(nd.calls) for nd in b.nodes)

    def build(self):
        rng = self.rng
        b = self.b
        self.dt = 'bf16' if rng.random() < 0.7 else 'f32'
        B = int(rng.choice([1, 2, 4, 8, 16, 32]))
        S = int(rng.choice([64, 128, 256, 384, 512]))
        D = int(rng.choice([128, 256, 512, 768, 1024]))
        H = int(rng.choice([h for h in (2, 4, 8, 12, 16) if D % h == 0 and D // h >= 16]))
        F = D * int(rng.choice([2, 4]))
        V = int(rng.choice([8192, 16384, 32000, 50257 // 8 * 8]))
        while B * S * F > 2 ** 26 and B > 1:
            B //= 2
        self.B, self.S, self.D, self.H, self.F = B, S, D, H, F
        self.train = (not self.tiny) and rng.random() < 0.5
        emb = b.param((V, D), 'f32')
        ids = b.param((B, S), 's32')
        x = b.add(OP['gather'], (B, S, D), 'f32', [emb, ids])
        pos = b.param((S, D), 'f32')
        x = b.ew(OP['add'], x, b.bcast(pos, (B, S, D), [1, 2], b.lay(x)))
        self.saved = []
        per_layer = 75 if not self.train else 150
        if self.tiny:
            per_layer = 45
        L = 0
        while (self.est() + per_layer < self.target * 0.93 and L < 48) or L == 0:
            x = self.layer(x, part=(('attn', 'ffn')[L % 2] if self.tiny else 'both'))
            L += 1
        if not self.tiny:
            x = self.layernorm(x)
        xc = b.convert(x, self.dt) if self.dt == 'bf16' else x
        if rng.random() < 0.5 or self.tiny:
            # pooled classifier head
            cls = int(rng.choice([2, 3, 16]))
            flat = b.add(OP['reshape'], (B * S, D), self.dt, [xc])
            w = b.param((D, cls), 'f32')
            wc = b.convert(w, self.dt) if self.dt == 'bf16' else w
            lo = b.add(OP['dot'], (B * S, cls), self.dt, [flat, wc])
            out = lo
        else:
            embc = b.convert(emb, self.dt) if self.dt == 'bf16' else emb
            et = b.add(OP['transpose'], (D, V), self.dt, [embc], feat={'dims': [1, 0]})
            lo = b.add(OP['dot'], (B, S, V), self.dt, [xc, et])
            lf = b.convert(lo, 'f32') if self.dt == 'bf16' else lo
            mx = b.reduce(lf, [2], 'max')
            out = mx
        outs = [out]
        if self.train:
            g = b.param((B, S, D), self.dt)
            for lay_info in reversed(self.saved):
                if self.est() > self.target * 0.97:
                    break
                g, upd = self.layer_back(g, lay_info)
                outs.extend(upd)
        b.add(OP['tuple'], (), 'tuple', outs, root=True, tsize=len(outs))
        return b

    def layernorm(self, x):
        b = self.b
        s = b.sh(x)
        C = s[-1]
        sm = b.reduce(x, [2])
        mean = b.ew(OP['multiply'], sm, b.sbcast(b.sh(sm), b.lay(sm)))
        d = b.ew(OP['subtract'], x, b.bcast(mean, s, [0, 1], b.lay(x)))
        var = b.reduce(b.ew(OP['multiply'], d, d), [2])
        var = b.ew(OP['multiply'], var, b.sbcast(b.sh(var), b.lay(var)))
        inv = b.ew(OP['rsqrt'], b.ew(OP['add'], var, b.sbcast(b.sh(var), b.lay(var))))
        n = b.ew(OP['multiply'], d, b.bcast(inv, s, [0, 1], b.lay(x)))
        gm = b.param((C,), 'f32')
        bt = b.param((C,), 'f32')
        n = b.ew(OP['multiply'], n, b.bcast(gm, s, [2], b.lay(x)))
        return b.ew(OP['add'], n, b.bcast(bt, s, [2], b.lay(x)))

    def dense(self, x, dout, bias=True):
        b = self.b
        s = b.sh(x)
        w = b.param((s[-1], dout), 'f32')
        wc = b.convert(w, self.dt) if self.dt == 'bf16' else w
        y = b.add(OP['dot'], s[:-1] + (dout,), self.dt, [x, wc])
        if bias:
            bp = b.param((dout,), 'f32')
            bc = b.bcast(bp, b.sh(y), [len(s) - 1], b.lay(y))
            if self.dt == 'bf16':
                bc = b.convert(bc, 'bf16')
            y = b.ew(OP['add'], y, bc)
        return y, w, wc

    def layer(self, x, part='both'):
        b = self.b
        rng = self.rng
        B, S, D, H, F = self.B, self.S, self.D, self.H, self.F
        dh = D // H
        info = {'x': x}
        if part == 'ffn':
            h2c = b.convert(x, self.dt) if self.dt == 'bf16' else x
            f1, w1, _ = self.dense(h2c, F)
            gl = b.ew(OP['maximum'], f1, b.sbcast(b.sh(f1), b.lay(f1), self.dt))
            f2, w2, _ = self.dense(gl, D)
            f2f = b.convert(f2, 'f32') if self.dt == 'bf16' else f2
            return b.ew(OP['add'], x, f2f)
        h = self.layernorm(x) if part == 'both' else x
        hc = b.convert(h, self.dt) if self.dt == 'bf16' else h
        info['hc'] = hc
        q, wq, _ = self.dense(hc, D)
        q4 = b.add(OP['reshape'], (B, S, H, dh), self.dt, [q])
        qt = b.add(OP['transpose'], (B, H, S, dh), self.dt, [q4], feat={'dims': [0, 2, 1, 3]})
        k, wk, _ = self.dense(hc, D)
        k4 = b.add(OP['reshape'], (B, S, H, dh), self.dt, [k])
        kt = b.add(OP['transpose'], (B, H, dh, S), self.dt, [k4], feat={'dims': [0, 2, 3, 1]})
        sc = b.add(OP['dot'], (B, H, S, S), self.dt, [qt, kt])
        sc = b.ew(OP['multiply'], sc, b.sbcast((B, H, S, S), b.lay(sc), self.dt))
        if rng.random() < 0.6:
            mask = b.param((B, S), 'f32')
            mb = b.bcast(mask, (B, H, S, S), [0, 3], b.lay(sc))
            if self.dt == 'bf16':
                mb = b.convert(mb, 'bf16')
            sc = b.ew(OP['add'], sc, mb)
        scf = b.convert(sc, 'f32') if self.dt == 'bf16' else sc
        p = CNN.softmax(self, scf, 3)
        pc = b.convert(p, self.dt) if self.dt == 'bf16' else p
        v, wv, _ = self.dense(hc, D)
        v4 = b.add(OP['reshape'], (B, S, H, dh), self.dt, [v])
        vt = b.add(OP['transpose'], (B, H, S, dh), self.dt, [v4], feat={'dims': [0, 2, 1, 3]})
        ctx = b.add(OP['dot'], (B, H, S, dh), self.dt, [pc, vt])
        ct = b.add(OP['transpose'], (B, S, H, dh), self.dt, [ctx], feat={'dims': [0, 2, 1, 3]})
        c3 = b.add(OP['reshape'], (B, S, D), self.dt, [ct])
        o, wo, _ = self.dense(c3, D)
        of = b.convert(o, 'f32') if self.dt == 'bf16' else o
        x = b.ew(OP['add'], x, of)
        if part == 'attn':
            return x
        h2 = self.layernorm(x)
        h2c = b.convert(h2, self.dt) if self.dt == 'bf16' else h2
        f1, w1, _ = self.dense(h2c, F)
        # gelu (tanh form)
        t = b.ew(OP['multiply'], f1, f1)
        t = b.ew(OP['multiply'], t, f1)
        t = b.ew(OP['multiply'], t, b.sbcast(b.sh(f1), b.lay(f1), self.dt))
        t = b.ew(OP['add'], f1, t)
        t = b.ew(OP['tanh'], t)
        t = b.ew(OP['add'], t, b.sbcast(b.sh(f1), b.lay(f1), self.dt))
        gl = b.ew(OP['multiply'], f1, t)
        f2, w2, _ = self.dense(gl, D)
        f2f = b.convert(f2, 'f32') if self.dt == 'bf16' else f2
        x = b.ew(OP['add'], x, f2f)
        info.update(h2c=h2c, gl=gl, w1=w1, w2=w2, wo=wo, c3=c3, f1=f1)
        self.saved.append(info)
        return x

    def dense_back(self, g, a, w):
        """g: (B,S,Dout) grad, a: (B,S,Din) input, w: (Din,Dout) f32 param"""
        b = self.b
        B, S = self.B, self.S
        din, dout = b.sh(w)
        wc = b.convert(w, self.dt) if self.dt == 'bf16' else w
        wT = b.add(OP['transpose'], (dout, din), self.dt, [wc], feat={'dims': [1, 0]})
        da = b.add(OP['dot'], (B, S, din), self.dt, [g, wT])
        a2 = b.add(OP['reshape'], (B * S, din), b.dt(a), [a])
        aT = b.add(OP['transpose'], (din, B * S), b.dt(a), [a2], feat={'dims': [1, 0]})
        g2 = b.add(OP['reshape'], (B * S, dout), self.dt, [g])
        dW = b.add(OP['dot'], (din, dout), self.dt, [aT, g2])
        return da, CNN.update(self, w, dW)

    def layer_back(self, g, info):
        b = self.b
        outs = []
        dgl, u = self.dense_back(g, info['gl'], info['w2'])
        outs.append(u)
        f1 = info['f1']
        t = b.ew(OP['tanh'], f1)
        t = b.ew(OP['multiply'], t, t)
        t = b.ew(OP['subtract'], b.sbcast(b.sh(f1), b.lay(f1), self.dt), t)
        dgl = b.ew(OP['multiply'], dgl, t)
        dh2, u = self.dense_back(dgl, info['h2c'], info['w1'])
        outs.append(u)
        g = b.ew(OP['add'], g, dh2)
        dc, u = self.dense_back(g, info['c3'], info['wo'])
        outs.append(u)
        g = b.ew(OP['add'], g, dc)
        return g, outs


def build_while(rng):
    """a small counter loop (cond/body computations) as in real programs"""
    cond = [('p', (), 'tuple', [], None), (OP['get_tuple_element'], (), 's32', [0], None),
            (OP['constant'], (), 's32', [], None), (OP['compare'], (), 'pred', [1, 2], 'root')]
    body = [('p', (), 'tuple', [], None), (OP['get_tuple_element'], (), 's32', [0], None),
            (OP['constant'], (), 's32', [], None), (OP['add'], (), 's32', [1, 2], None),
            (OP['get_tuple_element'], (), 'f32', [0], None),
            (OP['tuple'], (), 'tuple', [3, 4], 'root')]
    return cond, body


def layout_graph(rng, source, lo, hi, nc_lo, nc_hi, tiny):
    for attempt in range(40):
        target = int(rng.integers(lo, max(lo + 1, int(hi * 0.85))))
        m = (CNN if source == 'xla' else Transformer)(rng, target, tiny)
        b = m.build()
        extra = []
        if rng.random() < 0.5:
            # a small counter loop; the root tuple stays the last node
            cond, body = build_while(rng)
            root = b.nodes.pop()
            c0 = b.const('s32')
            t = b.add(OP['tuple'], (), 'tuple', [c0], tsize=1)
            wl = b.add(OP['while_'], (), 'tuple', [t], tsize=1)
            gte = b.add(OP['get_tuple_element'], (), 's32', [wl])
            root.ops.append(gte)
            root.tsize += 1
            b.nodes.append(root)
            extra = [(cond, wl), (body, wl)]
        try:
            nf, opc, ei, splits = b.finalize(extra_comps=extra, want_splits=True)
        except AssertionError:
            continue
        n = len(opc)
        if n < lo or n > hi:
            continue
        g = PG(nf, opc, ei)
        cand = [v for v in range(n) if opc[v] in (26, 34, 75, 98) and g.rank[v] >= 2
                and g.arr_ops[v] and g.rank[g.arr_ops[v][0]] >= 2]
        if len(cand) < nc_lo:
            continue
        k = int(rng.integers(nc_lo, min(nc_hi, len(cand)) + 1))
        ids = np.sort(rng.choice(np.array(cand), size=k, replace=False))
        return nf, opc, ei, splits, ids.astype(np.int64), m
    raise RuntimeError('could not sample a layout graph in range')


# ----------------------------------------------------------------------------------------
# layout configurations
def layout_configs(rng, g, ids, c, search):
    nc = len(ids)
    ranks = []
    for k in ids:
        x = g.arr_ops[k][0]
        rk = g.rank[g.arr_ops[k][1]] if (g.op[k] == OP['convolution'] and len(g.arr_ops[k]) > 1) else 0
        ranks.append((g.rank[k], g.rank[x], rk, x))
    cfg = -np.ones((c, nc, 18), dtype=np.float32)
    if search == 'random':
        p_node = rng.uniform(0.45, 0.85)
        p_block = rng.uniform(0.75, 0.97)
        p_part = rng.uniform(0.2, 0.6)
        for j, (ro, ri, rk, x) in enumerate(ranks):
            sel = rng.random(c) < p_node
            for off, r in ((0, ro), (6, ri), (12, rk)):
                if r == 0:
                    continue
                m = sel & (rng.random(c) < p_block)
                blk = -np.ones((c, 6), dtype=np.float32)
                blk[:, :r] = np.argsort(rng.random((c, r)), axis=1)
                if r >= 3:
                    blk[rng.random(c) < p_part, 2:] = -1
                cfg[m, j, off:off + 6] = blk[m]
        if rng.random() < 0.5:
            cfg[0] = -1
        return cfg
    # default search: mutate from the compiler default with sensible candidates
    cands = []
    for j, k in enumerate(ids):
        ro, ri, rk, x = ranks[j]
        cands.append((_cands(g, k, 'out', ro, None, k), _cands(g, x, 'in', ri, g.op[k], k),
                      _cands(g, g.arr_ops[k][1], 'ker', rk, None, k) if rk else ([], None)))
    pool = [cfg[0].copy()]
    m_mean = rng.uniform(0.8, 2.5)
    for i in range(1, c):
        u = rng.random()
        if u < 0.12 and i > 1:
            cfg[i] = cfg[int(rng.integers(0, i))]
            continue
        base = pool[int(rng.integers(0, len(pool)))] if rng.random() < 0.7 else cfg[0]
        cur = base.copy()
        nm = 1 + rng.poisson(m_mean)
        for _ in range(nm):
            j = int(rng.integers(0, nc))
            which = rng.choice(3, p=[0.55, 0.3, 0.15])
            cl, pw = cands[j][which]
            if not len(cl):
                cl, pw = cands[j][0]
                which = 0
            if not len(cl):
                continue
            if rng.random() < 0.1:
                cur[j, 6 * which:6 * which + 6] = -1
            else:
                cur[j, 6 * which:6 * which + 6] = cl[int(rng.choice(len(cl), p=pw))]
        cfg[i] = cur
        if rng.random() < 0.3:
            pool.append(cur)
    return cfg


def _cands(g, v, kind, r, cop=None, k=None):
    """layouts an autotuner starting from the compiler default would try: mostly the
    default itself (explicit or as a two-dim prefix), other second-minor dims, layouts the
    consuming op prefers, rarely a swap of the two minor dims"""
    if r < 2:
        return [], np.zeros(0)
    d = [int(x) for x in g.deflay[v]]
    out, w = [], []

    def blk(lst, wt):
        b = -np.ones(6)
        b[:len(lst)] = lst
        out.append(b)
        w.append(wt)

    def pref(first):
        rest = [q for q in d if q not in first]
        return list(first) + rest

    blk(d, 2.0)
    if r >= 3:
        blk(d[:2], 2.0)
    shp = g.shape[v]
    for dd in d[1:]:
        if dd != d[1]:
            blk(pref([d[0], dd]), 1.0 if shp[dd] >= 8 else 0.08)
    blk([d[1], d[0]] + d[2:], 0.4 if shp[d[1]] >= 64 else 0.05)
    if k is not None and kind == 'in' and cop in (OP['convolution'], OP['dot']):
        fin = int(g.nf[k, 94]) if cop == OP['convolution'] else r - 1
        if fin < r and fin != d[0]:
            blk(pref([fin]), 1.5)
    if kind == 'out' and k is not None and g.op[k] == OP['transpose']:
        perm = g.nf[k, 31:31 + r].astype(np.int64)
        x = g.arr_ops[k][0]
        if sorted(perm.tolist()) == list(range(r)) and g.rank[x] == r:
            pinv = np.empty(r, dtype=np.int64)
            pinv[perm] = np.arange(r)
            blk([int(q) for q in pinv[g.deflay[x]]], 2.0)
    if kind == 'ker' and k is not None:
        kif, kof = int(g.nf[k, 99]), int(g.nf[k, 100])
        if kof < r and kif < r:
            blk(pref([kof, kif]), 1.0)
    w = np.asarray(w)
    return out, w / w.sum()


# ----------------------------------------------------------------------------------------
# tile graphs and configurations
def tile_graph(rng, lo, hi):
    for attempt in range(60):
        kind = rng.choice(['conv', 'dot', 'ew', 'reduce', 'copy'], p=[0.25, 0.2, 0.25, 0.2, 0.1])
        target = int(rng.integers(lo, hi + 1))
        b = Builder(rng)
        outer_shapes = []
        dt = 'bf16' if rng.random() < 0.5 else 'f32'
        lay_style = rng.random()

        def alay(r):
            if r >= 3 and lay_style < 0.4:
                return tpu_act_layout(r)
            return std_layout(r)

        def p(shape, d=None, lay=None):
            outer_shapes.append((tuple(shape), d or dt, lay, b.pcount))
            return b.param(shape, d or dt, lay=lay)

        if kind == 'conv':
            nsp = 2 if rng.random() < 0.85 else 1
            B = int(rng.choice([1, 2, 4, 8, 16, 32, 64]))
            H = int(rng.choice([7, 8, 12, 14, 16, 28, 32, 56]))
            cin = int(rng.choice([3, 32, 64, 96, 128, 192, 256, 384, 512]))
            cout = int(rng.choice([32, 64, 128, 192, 256, 384, 512]))
            k = int(rng.choice([1, 3, 3, 5]))
            while B * H ** nsp * max(cin, cout) > 2 ** 25 and B > 1:
                B //= 2
            xs = (B,) + (H,) * nsp + (cin,)
            r = nsp + 2
            xl = alay(r)
            x = p(xs, lay=xl)
            w = p((k,) * nsp + (cin, cout))
            cd = {'ib': 0, 'if': nsp + 1, 'is': list(range(1, nsp + 1)), 'kif': nsp,
                  'kof': nsp + 1, 'ks': list(range(nsp)), 'ob': 0, 'of': nsp + 1}
            stride = 2 if rng.random() < 0.2 else 1
            os_ = (B,) + tuple(ceil_div(H, stride) for _ in range(nsp)) + (cout,)
            y = b.add(OP['convolution'], os_, dt, [x, w], lay=xl,
                      feat={'window': conv_window([k] * nsp, stride), 'conv': cd})
            cur = y
        elif kind == 'dot':
            batched = rng.random() < 0.35
            M = int(rng.choice([8, 32, 128, 256, 512, 1024, 2048, 4096]))
            K = int(rng.choice([64, 128, 256, 512, 768, 1024, 2048, 4096]))
            N = int(rng.choice([64, 128, 256, 512, 1000, 1024, 3072, 4096]))
            Bb = int(rng.choice([2, 4, 8, 12, 16])) if batched else 1
            while Bb * M * max(K, N) > 2 ** 25 and M > 8:
                M //= 2
            if batched:
                x = p((Bb, M, K))
                w = p((Bb, K, N))
                y = b.add(OP['dot'], (Bb, M, N), dt, [x, w])
            else:
                x = p((M, K))
                w = p((K, N))
                y = b.add(OP['dot'], (M, N), dt, [x, w])
            cur = y
        else:
            r = int(rng.choice([2, 3, 4], p=[0.35, 0.35, 0.3]))
            dims = [int(rng.choice([8, 16, 32, 64, 128, 256, 512, 768, 1024, 3, 5, 12, 26, 49, 196]))
                    for _ in range(r)]
            while np.prod(dims) > 2 ** 24:
                i = int(np.argmax(dims))
                dims[i] = max(1, dims[i] // 2)
            while np.prod(dims) < 2 ** 12:
                i = int(rng.integers(0, r))
                dims[i] *= 2
            shape = tuple(dims)
            if rng.random() < 0.5:
                lay = alay(r)
            else:
                # an odd layout chosen by an earlier pass; the minor dim is usually wide
                perm = list(rng.permutation(r))
                wide = [q for q in range(r) if shape[q] >= 64]
                if wide and rng.random() < 0.85 and shape[perm[0]] < 64:
                    q = int(rng.choice(wide))
                    perm.remove(q)
                    perm = [q] + perm
                lay = tuple(perm)
            x = p(shape, lay=lay)
            cur = x
            if kind == 'copy':
                if rng.random() < 0.5:
                    perm = list(rng.permutation(r))
                    if perm == list(range(r)):
                        perm = perm[::-1]
                    ts = tuple(shape[q] for q in perm)
                    cur = b.add(OP['transpose'], ts, dt, [x], lay=std_layout(r),
                                feat={'dims': perm})
                else:
                    nl = tuple(rng.permutation(r))
                    if nl == tuple(lay):
                        nl = tuple(reversed(lay))
                    cur = b.add(OP['copy'], shape, dt, [x], lay=nl)
        # elementwise prologue/epilogue up to the target size
        s = b.sh(cur)
        L = b.lay(cur)
        ew_ops = [OP['add'], OP['multiply'], OP['maximum'], OP['subtract'], OP['exponential'],
                  OP['tanh'], OP['rsqrt'], OP['divide'], OP['select'], OP['convert'], OP['negate']]
        budget = target - 4 - len(b.nodes) - (3 if kind == 'reduce' else 0)
        while budget > 2:
            u = rng.random()
            if u < 0.3:
                q = p(s, lay=L)
                cur = b.ew(int(rng.choice([OP['add'], OP['multiply'], OP['subtract']])), cur, q)
                budget -= 2
            elif u < 0.55:
                vec = p((s[-1],), d='f32')
                bc = b.bcast(vec, s, [len(s) - 1], L)
                if b.dt(cur) != 'f32':
                    bc = b.convert(bc, b.dt(cur))
                    budget -= 1
                cur = b.ew(int(rng.choice([OP['add'], OP['multiply']])), cur, bc)
                budget -= 3
            elif u < 0.75:
                o = int(rng.choice(ew_ops))
                if o == OP['select']:
                    z = b.sbcast(s, L, b.dt(cur))
                    cm = b.add(OP['compare'], s, 'pred', [cur, z], lay=L)
                    cur = b.add(OP['select'], s, b.dt(cur), [cm, cur, z], lay=L)
                    budget -= 5
                elif o == OP['convert']:
                    cur = b.convert(cur, 'f32' if b.dt(cur) == 'bf16' else 'bf16')
                    budget -= 1
                elif o in (OP['add'], OP['multiply'], OP['maximum'], OP['subtract'], OP['divide']):
                    z = b.sbcast(s, L, b.dt(cur))
                    cur = b.ew(o, cur, z)
                    budget -= 3
                else:
                    cur = b.ew(o, cur)
                    budget -= 1
            else:
                z = b.sbcast(s, L, b.dt(cur))
                cur = b.ew(OP['maximum'], cur, z)
                budget -= 3
        if kind == 'reduce':
            r = len(s)
            nd = int(rng.integers(1, r))
            dims = sorted(rng.choice(r, size=nd, replace=False).tolist())
            cur = b.reduce(cur, dims, 'add' if rng.random() < 0.7 else 'max')
        b.nodes[cur].root = True
        # outer computation: parameters + fusion
        outs = []
        for (shp, d, lay, pn) in outer_shapes:
            outs.append(b.add(OP['parameter'], shp, d, lay=lay, pnum=pn))
        fo = b.add(OP['fusion'], b.sh(cur), b.dt(cur), [cur] + outs, lay=b.lay(cur), root=True)
        nf, opc, ei = b.finalize()
        n = len(opc)
        if lo <= n <= hi:
            return nf, opc, ei
    raise RuntimeError('tile graph size')


def tile_configs(rng, d, c):
    g = d['g']
    S = np.asarray(d['S'])
    r = len(S)
    u = d['u']
    mx = np.ceil(S / u).astype(np.int64)
    mxu = d['kind'] == 'mxu'
    if mxu:
        KS = np.asarray(g.shape[d['K']])
        rk = len(KS)
        uk = d['uk']
        mk = np.ceil(KS / uk).astype(np.int64)

    def draw(m):
        if m <= 1:
            return 1
        if rng.random() < 0.3:
            return int(m)
        lo_ = math.log(max(1.0, m / 48.0))
        return int(min(m, max(1, round(math.exp(rng.uniform(lo_, math.log(m + 0.999)))))))

    rows = []
    seen = set()
    for rnd in range(8):
        batch = []
        for _ in range(max(64, 2 * (c - len(rows)))):
            ob = np.array([draw(m) for m in mx], dtype=np.float64)
            kb = np.zeros(0)
            if mxu:
                kb = np.zeros(rk)
                for i in range(rk):
                    if i == d['kif']:
                        kb[i] = draw(mk[i])
                    elif i == d['kof']:
                        eo = min(S[d['of']], ob[d['of']] * u[d['of']])
                        kb[i] = max(1, math.ceil(eo / uk[i]))
                    elif i in set(d['ks'].tolist()):
                        kb[i] = mk[i] if rng.random() < 0.7 else draw(mk[i])
                    else:
                        kb[i] = 1 if rng.random() < 0.5 else draw(mk[i])
            key = tuple(ob.tolist()) + tuple(kb.tolist())
            if key in seen:
                continue
            seen.add(key)
            row = np.zeros(24, dtype=np.float32)
            if mxu:
                row[0:rk] = kb
                row[6] = kb.sum()
                row[7] = np.prod(kb)
            row[8:8 + r] = ob
            row[14] = ob.sum()
            row[15] = np.prod(ob)
            batch.append(row)
        if batch:
            batch = np.array(batch)
            ws = tile_terms(d, batch)[1]
            rows.extend(list(batch[ws <= 1.3 * VMEM]))
        if len(rows) >= c:
            break
    rows = rows[:c]
    cfg = np.array(rows, dtype=np.float32)
    # the compiler's own pick becomes config 0 (the normaliser)
    t, ws, steps, lane = tile_terms(d, cfg)
    okm = ws <= 0.5 * VMEM
    score = np.where(okm, steps, np.inf) - 1e-6 * lane
    if not np.isfinite(score).any():
        score = ws
    k = int(np.argmin(score))
    cfg[[0, k]] = cfg[[k, 0]]
    return cfg


# ----------------------------------------------------------------------------------------
# writing
SIZES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120),
                  lay_cfg=(300, 3000), lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20),
                 lay_cfg=(30, 200), lay_test_cfg=(30, 60)),
}
XLA_NAMES = ['resnet50', 'resnet_v1_101', 'unet_3d', 'inception_v3', 'vgg16', 'alexnet',
             'mobilenet_v2', 'efficientnet_b0', 'retinanet', 'mask_rcnn', 'densenet121',
             'shapemask', 'spinenet', 'mnasnet', 'xception', 'nasnet_a']
NLP_NAMES = ['bert_pretraining', 'bert_classifier', 'albert_base', 'electra_small',
             't5_encoder', 'transformer_lm', 'gpt2_small', 'mlperf_bert', 'talking_heads',
             'funnel_transformer', 'roberta', 'xlnet_base']


def hexs(rng, n):
    return ''.join('0123456789abcdef'[int(x)] for x in rng.integers(0, 16, size=n))


def fingerprint(rng):
    v = int(rng.integers(0, 2 ** 62))
    return ('-' if rng.random() < 0.5 else '') + format(v, 'x')[:16]


def stem_for(rng, coll, split, i, used):
    while True:
        if split == 'test':
            s = hexs(rng, 32)
        elif coll == 'tile':
            kind = rng.choice(['fusion', 'fusion', 'fusion', 'convolution', 'copy', 'reduce'])
            s = f"{kind}_{int(rng.integers(1, 4000))}_{fingerprint(rng)}"
        else:
            src = coll.split(':')[1]
            names = XLA_NAMES if src == 'xla' else NLP_NAMES
            nm = str(rng.choice(names))
            style = int(rng.integers(0, 3))
            if style == 0:
                s = f"{nm}_train_batch_{int(rng.choice([8, 16, 32, 64, 128]))}_{fingerprint(rng)}"
            elif style == 1:
                s = f"{nm}.{int(rng.choice([2, 4, 8]))}x{int(rng.choice([2, 4, 8, 16]))}.{rng.choice(['fp16', 'bf16', 'fp32'])}_{hexs(rng, 6)}"
            else:
                s = f"{nm}_batch_{int(rng.choice([1, 4, 8, 32]))}_{hexs(rng, 8)}"
        if s not in used:
            used.add(s)
            return s


def save(path, **arrs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrs)


def save_noiseless(root, rel, arr):
    p = os.path.join(root, 'noiseless', rel[:-4] + '.npy')
    os.makedirs(os.path.dirname(p), exist_ok=True)
    np.save(p, np.asarray(arr, dtype=np.float64))


def gen_tile(root, seed, sz, gf):
    counts = [max(1, int(round(x * gf))) for x in sz['tile']]
    used = set()
    for si, (split, cnt) in enumerate(zip(('train', 'valid', 'test'), counts)):
        srng = np.random.default_rng([seed, 1, si, 999])
        for i in range(cnt):
            rng = np.random.default_rng([seed, 1, si, i])
            c = int(rng.integers(sz['tile_cfg'][0], sz['tile_cfg'][1] + 1))
            for attempt in range(50):
                nf, opc, ei = tile_graph(rng, *sz['tile_nodes'])
                d = tile_analyse(nf, opc, ei)
                cfg = tile_configs(rng, d, c)
                if len(cfg) >= c or (attempt >= 25 and len(cfg) >= sz['tile_cfg'][0]):
                    break
            stem = stem_for(srng, 'tile', split, i, used)
            rel = f"npz/tile/xla/{split}/{stem}.npz"
            if split == 'test':
                rt = np.zeros(len(cfg), dtype=np.int64)
                nz = np.ones(len(cfg), dtype=np.int64)
            else:
                t = tile_runtime(nf, opc, ei, cfg)
                noise = np.exp(rng.normal(0, 0.03, size=len(cfg)) + rng.normal(0, 0.02))
                rt = np.maximum(1, np.rint(t * noise)).astype(np.int64)
                norm = max(1, int(round(t[0] * math.exp(rng.normal(0, 0.03)))))
                nz = np.full(len(cfg), norm, dtype=np.int64)
                save_noiseless(root, rel, t)
            save(os.path.join(root, rel), node_feat=nf.astype(np.float32),
                 node_opcode=opc.astype(np.uint8), edge_index=ei.astype(np.int64),
                 config_feat=cfg.astype(np.float32), config_runtime=rt,
                 config_runtime_normalizers=nz)


def gen_layout(root, seed, sz, gf, tiny):
    counts = [max(1, int(round(x * gf))) for x in sz['lay']]
    for ci, (src, search) in enumerate([('xla', 'default'), ('xla', 'random'),
                                        ('nlp', 'default'), ('nlp', 'random')]):
        coll = f"layout:{src}:{search}"
        used = set()
        for si, (split, cnt) in enumerate(zip(('train', 'valid', 'test'), counts)):
            srng = np.random.default_rng([seed, 2 + ci, si, 999])
            for i in range(cnt):
                rng = np.random.default_rng([seed, 2 + ci, si, i])
                nf, opc, ei, splits, ids, _m = layout_graph(rng, src, *sz['lay_nodes'],
                                                           *sz['lay_nc'], tiny)
                g = PG(nf, opc, ei)
                if split == 'test':
                    c = int(rng.integers(sz['lay_test_cfg'][0], sz['lay_test_cfg'][1] + 1))
                else:
                    lo, hi = sz['lay_cfg']
                    c = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
                cfg = layout_configs(rng, g, ids, c, search)
                stem = stem_for(srng, coll, split, i, used)
                rel = f"npz/layout/{src}/{search}/{split}/{stem}.npz"
                if split == 'test':
                    rt = np.zeros(c, dtype=np.int64)
                else:
                    t = layout_runtime(nf, opc, ei, ids, cfg)
                    sig = 0.006 if search == 'default' else 0.012
                    noise = np.exp(rng.normal(0, sig, size=c) + rng.normal(0, 0.02))
                    rt = np.maximum(1, np.rint(t * noise)).astype(np.int64)
                    save_noiseless(root, rel, t)
                save(os.path.join(root, rel), node_feat=nf.astype(np.float32),
                     node_opcode=opc.astype(np.uint8), edge_index=ei.astype(np.int64),
                     node_config_ids=ids.astype(np.int64),
                     node_config_feat=cfg.astype(np.float32), node_splits=splits,
                     config_runtime=rt)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=['tiny', 'small'], default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    a = ap.parse_args(argv)
    t0 = time.time()
    sz = SIZES[a.scale]
    gen_tile(a.out, a.seed, sz, a.graphs_factor)
    gen_layout(a.out, a.seed, sz, a.graphs_factor, a.scale == 'tiny')
    print(f"wrote {a.out} (scale={a.scale}, seed={a.seed}) in {time.time() - t0:.1f}s")


if __name__ == '__main__':
    main()
