#!/usr/bin/env python3
"""blind_06: a synthetic TpuGraphs dataset whose runtimes follow a law of its own.

Usage: python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Written without looking at the tool that is tested on it. Sources: the TpuGraphs format
description, the real fixture files, upstream tpu_graphs (hlo_opcode.h, featurizers.h) and
general public knowledge of TPUs (8x128 vreg tiles, 128x128 systolic MXUs, VMEM scratchpad,
HBM, XLU transpose unit, per-grid-step overheads).

THE LAW (nobody on the tool side reads this file)
=================================================
Hardware model "HX": HBM 1200 B/ns; an on-chip cache (CMEM) serves any tensor whose *padded*
size is <= 16 MiB 1.9x faster; HBM "channel camping": a tensor whose padded minor-dim row
pitch is a multiple of 8 KiB and has >= 32 rows streams 1.3x slower. Padding rule (own):
a minor dim >= 128 pads to a multiple of 128 lanes, a narrower one to a power of two >= 16;
the 2nd-minor dim pads to the sublane count (8 for 32-bit, 16 for 16-bit, 32 for 8-bit
types) but at most 4x. So padded size depends on which two dims are most minor and on the
element type. The XLU transposes at 400/230/120 B/ns for 4/2/1-byte elements. MXU peak
1.15e5 flop/ns for 16-bit operands, 3 passes for f32, utilisation ceil-to-128 of the
contraction and output-feature sizes. Costs of one op combine as a soft maximum
(a^3+b^3+c^3)^(1/3) of MXU, memory and XLU time, plus launch overheads (600 ns heavy ops).

Layout law (a pure function of the file): each configurable node's output/input/kernel block
is resolved to a full minor-to-major order: given dims first, the rest in the order of the
tensor's default layout (node_feat 134-139). An all -1 *output* block means the node's
default layout; an all -1 *input/kernel* block means "read the operand as it is produced".
Data operands = edges in stored order whose producer is not a computation root.
Layouts propagate forward through elementwise ops (they adopt operand 0's layout).
Costs that depend on the configuration:
 * conv: feeding the MXU wants the input feature dim minor, else an XLU relayout of the input
   (0.5x its bytes if feature is 2nd-minor, 1.2x otherwise), except thin inputs (<32
   features) whose minor is a spatial dim with feature 2nd-minor: then an im2col-like
   packing along that spatial dim (0.15x) raises MXU utilisation by the window size.
   Kernel wants (out-feature minor, in-feature 2nd); swapped costs 0.2x, anything else 0.8x
   of the kernel bytes, times ceil(output rows / 16384) reloads. Output wants the output
   feature dim minor (0.5x / 1.2x). Memory: padded input x ceil(Cout/1024) + padded kernel x
   reloads + padded output. Depthwise convs (1 input feature per group) run on the VPU.
 * dot (lhs [..,M,K] x rhs [..,K,N]): lhs wants K minor (M-minor with K 2nd: 0.4x, else
   1.1x), output wants N minor (same factors); if both lhs and output are M-minor the MXU
   computes the transposed product and both relayouts vanish.
 * reshape: free iff both layouts are descending and the tiling of the two minor dims is
   compatible for the element type (same last dim, or 128-multiples; 2nd-minor equal or
   sublane-multiples); a DMA copy if both minor dims are the logical last dims with equal
   size; else a copy with XLU work (0.5x bytes) and a 1.2 us launch.
 * transpose: free iff the output layout is the input layout permuted by the transpose; a
   DMA copy if the physical minor dim is kept, else with XLU work.
 * elementwise nodes (partly fused) pay 0.35 x (array operands+1) x padded bytes (soft max
   with VPU work: transcendentals 6, divide 4, others 1 op per element).
 * reduce and copy adapt to their operand's layout; a reduce over the physical minor dim
   needs cross-lane XLU work (0.35x bytes), over the 2nd-minor 0.08x, else 0.03x.
 * every edge whose consumer wants a layout different from the producer's inserts a copy
   (DMA if the minor dim is kept, plus 0.5x XLU work otherwise, 1.2 us launch; < 16 KiB
   only 0.3 us); consumers of one producer wanting the same layout share one copy.
   Non-adaptive consumers (tuple, broadcast, non-configurable heavy ops, ...) want the
   producer's default layout; configurable consumers want their input/kernel block.
 * nodes in sub-computation segments (all node_splits segments but the last: loop bodies,
   conditions, reducers) count TRIP=6 times.
 Everything else is a per-graph constant (+2e4 ns).
Noise (layout): multiplicative exp(1.5e-4 * t(df=2)) plus, with prob. 1.2%, a slowdown of
0.4% * Pareto(1.4) (heavy-tailed).

Tile law: bounds are read in the physical major-to-minor order of the tiled tensor (its
node_feat layout); the minor dim counts in 128s, the 2nd-minor in 8s, others in elements.
Output tensor = the kernel's root (largest element of a root tuple). For conv/dot kernels
(main op = largest-flop conv/dot; kernel = its operand 1): output tile gives rows (batch x
spatial) and Cout_t, kernel bounds give spatial taps, Cin_t and Cout_k.
MXU cycles per step = taps x ceil(Cin_t/128) x ceil(min(Cout_t,Cout_k)/128) x (rows rounded
to 8 + 128 weight-load cycles, 0 if the whole kernel stays stationary) / 4 MXUs, f32 x3;
Cout_k < Cout_t re-runs the step ceil(Cout_t/Cout_k) times, Cout_k > Cout_t over-fetches.
Input tiles include the conv halo ((T-1)*stride + taps). DMA time = bytes/BW + 0.25 ns per
contiguous chunk, chunks from the operand's layout and which dims the tile covers fully.
VMEM 16 MiB: working set <= 45% hides DMA fully, above that 30% of min(compute, dma) is
exposed, above 100% a spill factor. Step overhead 300 ns. Epilogue per output tile: VPU work
of the fused elementwise ops on the padded tile, 1.35x if the f32 accumulator tile has a
4 KiB-multiple lane pitch and 64-multiple rows (bank conflicts), 1.25x for 16-bit outputs
whose row extent is not a multiple of 16 (half-packed stores); store overlapped (25% exposed).
Loop fusions: per-step DMA of same-shape inputs, broadcast operands (<= 64 KiB) loaded once,
larger ones scaled by their size ratio; cross-lane reduction cost when a reduce runs over its
input's minor dim; VPU work; same overlap/VMEM rules. Launch 1.5 us.
Candidate tiles: <= 3000 grid steps and working set <= VMEM (others "fail to compile").
The default config is the argmin of the compiler's crude model (same law without weight-load,
chunk, bank, packing and exposed-DMA terms, and only tiles using <= 60% of VMEM).
Noise (tile): exp(0.012 * t(df=2.5)) plus, with prob. 2%, a slowdown of 8% * Pareto(1.3);
normalizer = default config's noiseless runtime x exp(0.004 * t(df=3)) per row.
"""
from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

# --------------------------------------------------------------------------------------
# Opcode ids (tpu_graphs hlo_opcode.h)
# --------------------------------------------------------------------------------------
_OPS = """abs 1 add 2 add-dependency 3 after-all 4 all-reduce 5 all-to-all 6 atan2 7
batch-norm-grad 8 batch-norm-inference 9 batch-norm-training 10 bitcast 11 bitcast-convert 12
broadcast 13 call 14 ceil 15 cholesky 16 clamp 17 collective-permute 18 count-leading-zeros 19
compare 20 complex 21 concatenate 22 conditional 23 constant 24 convert 25 convolution 26
copy 27 copy-done 28 copy-start 29 cosine 30 custom-call 31 divide 32 domain 33 dot 34
dynamic-slice 35 dynamic-update-slice 36 exponential 37 exponential-minus-one 38 fft 39
floor 40 fusion 41 gather 42 get-dimension-size 43 set-dimension-size 44 get-tuple-element 45
imag 46 infeed 47 iota 48 is-finite 49 log 50 log-plus-one 51 and 52 not 53 or 54 xor 55
map 56 maximum 57 minimum 58 multiply 59 negate 60 outfeed 61 pad 62 parameter 63
partition-id 64 popcnt 65 power 66 real 67 recv 68 recv-done 69 reduce 70 reduce-precision 71
reduce-window 72 remainder 73 replica-id 74 reshape 75 reverse 76 rng 77
rng-get-and-update-state 78 rng-bit-generator 79 round-nearest-afz 80 rsqrt 81 scatter 82
select 83 select-and-scatter 84 send 85 send-done 86 shift-left 87 shift-right-arithmetic 88
shift-right-logical 89 sign 90 sine 91 slice 92 sort 93 sqrt 94 subtract 95 tanh 96
transpose 98 triangular-solve 99 tuple 100 while 102 cbrt 103 all-gather 104
collective-permute-start 105 collective-permute-done 106 logistic 107 dynamic-reshape 108
all-reduce-start 109 all-reduce-done 110 reduce-scatter 111 all-gather-start 112
all-gather-done 113 opt-barrier 114 async-start 115 async-update 116 async-done 117
round-nearest-even 118 stochastic-convert 119 tan 120""".split()
OPC = {_OPS[i]: int(_OPS[i + 1]) for i in range(0, len(_OPS), 2)}

# primitive type one-hot order of featurizers.h
DT_IDX = {'invalid': 0, 'pred': 1, 's8': 2, 's16': 3, 's32': 4, 's64': 5, 'u8': 6, 'u16': 7,
          'u32': 8, 'u64': 9, 'f16': 10, 'f32': 11, 'f64': 12, 'bf16': 13, 'c64': 14,
          'c128': 15, 'tuple': 16, 'opaque': 17, 'token': 18}
EB_BY_IDX = np.array([4, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8, 16, 4, 4, 4], np.int64)
SUB_BY_IDX = np.where(EB_BY_IDX == 1, 32, np.where(EB_BY_IDX == 2, 16, 8)).astype(np.int64)

# ---------------------------------------------------------------------------------------
# Law constants (hardware model "HX")
# ---------------------------------------------------------------------------------------
HBM_BW = 1200.0            # B / ns
CMEM_CAP = 16 << 20        # bytes (padded)
CMEM_BOOST = 1.9
CONFLICT_PITCH = 8192      # bytes
CONFLICT_ROWS = 32
CONFLICT_PEN = 1.3
XLU_BPS = {1: 120.0, 2: 230.0, 4: 400.0, 8: 400.0, 16: 400.0}
PEAK = 1.15e5              # flop / ns, 16-bit operands
F32_PASSES = 3.0
VPU_EPS = 3000.0           # element-ops / ns
LAUNCH = 600.0             # ns, heavy op launch
COPY_LAUNCH = 1200.0       # ns, inserted copy kernel
TRIP = 6.0                 # loop-body multiplier
FUSE = 0.35

TRANSPARENT = {1, 2, 12, 15, 17, 20, 25, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53, 54, 55, 57,
               58, 59, 60, 65, 66, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94, 95, 96, 103,
               107, 118, 119, 120}
HEAVY_EW = {30: 6, 37: 6, 38: 6, 50: 6, 51: 6, 66: 6, 81: 6, 91: 6, 94: 6, 96: 6, 103: 6,
            107: 6, 120: 6, 32: 4, 73: 4}
ZERO_COST = {3, 4, 11, 14, 23, 24, 33, 43, 45, 63, 64, 74, 100, 102, 114}


def lane_pad(x):
    """lanes used by a minor dim of x elements: 128-multiples, narrow dims a power of two >= 16."""
    x = np.asarray(x, np.float64)
    narrow = np.maximum(16.0, 2.0 ** np.ceil(np.log2(np.maximum(x, 1.0))))
    return np.where(x >= 128.0, np.ceil(x / 128.0) * 128.0, np.minimum(narrow, 128.0))


def ew_weight(o):
    return HEAVY_EW.get(int(o), 1)


# =======================================================================================
# Shared parsing of a file
# =======================================================================================
class Parsed:
    def __init__(self, nf, opc, ei):
        self.nf = nf
        self.op = opc.astype(np.int64)
        n = len(opc)
        self.n = n
        d = np.rint(nf[:, 21:27]).astype(np.int64)
        self.rank = (d > 0).sum(1)
        self.dims = np.where(d > 0, d, 1)
        self.vol = np.prod(self.dims, axis=1).astype(np.float64)
        tix = np.argmax(nf[:, 2:21], axis=1)
        self.eb = EB_BY_IDX[tix]
        self.sub = SUB_BY_IDX[tix]
        self.is_tuple = tix == DT_IDX['tuple']
        self.is_root = nf[:, 0] > 0.5
        lay = np.rint(nf[:, 134:140]).astype(np.int64)
        self.lay = lay
        self.defcode = np.zeros(n, np.int64)
        self.desccode = np.zeros(n, np.int64)
        for k in range(6):
            m = self.rank > k
            self.defcode += np.where(m, lay[:, k] << (3 * k), 0)
            self.desccode += np.where(m, (self.rank - 1 - k) << (3 * k), 0)
        # operands in edge order; called-computation roots are not data operands
        self.all_ops = [[] for _ in range(n)]
        if len(ei):
            order = np.argsort(ei[:, 0], kind='stable')
            for u, v in ei[order]:
                self.all_ops[int(u)].append(int(v))
        self.ops = [[v for v in lst if not self.is_root[v]] for lst in self.all_ops]
        self.users = [[] for _ in range(n)]
        for u in range(n):
            for k, v in enumerate(self.ops[u]):
                self.users[v].append((u, k))

    def perm(self, u):
        return [int(x) for x in self.lay[u, :self.rank[u]]]


def decode(code, r):
    """code (c,) -> (c, r) minor-to-major dims."""
    code = np.asarray(code, np.int64)
    return np.stack([(code >> (3 * k)) & 7 for k in range(r)], axis=-1)


def softmax3(*xs):
    s = 0.0
    for x in xs:
        s = s + np.asarray(x, np.float64) ** 3
    return s ** (1.0 / 3.0)


# =======================================================================================
# Layout law
# =======================================================================================
class LayoutLaw:
    def __init__(self, P: Parsed):
        self.P = P

    # geometry of tensor u under layout code (array or scalar)
    def geom(self, u, code):
        P = self.P
        r = int(P.rank[u])
        eb = float(P.eb[u])
        sub = int(P.sub[u])
        code = np.asarray(code, np.int64)
        if r == 0 or P.is_tuple[u]:
            b = np.full(code.shape, eb)
            return b, b, np.ones(code.shape)
        D = P.dims[u]
        if r == 1:
            b = np.full(code.shape, float(lane_pad(D[0])) * eb)
            return b, b, np.ones(code.shape)
        m = code & 7
        s = (code >> 3) & 7
        Dm = D[m].astype(np.float64)
        Ds = D[s].astype(np.float64)
        pm = lane_pad(Dm)
        ps = np.minimum(np.ceil(Ds / sub) * sub, 4.0 * Ds)
        b = P.vol[u] / (Dm * Ds) * pm * ps * eb
        return b, pm * eb, Ds

    def read(self, u, code):
        b, pitch, rows = self.geom(u, code)
        t = b / HBM_BW
        t = np.where(b <= CMEM_CAP, t / CMEM_BOOST, t)
        camp = (np.mod(pitch, CONFLICT_PITCH) == 0) & (rows >= CONFLICT_ROWS)
        return np.where(camp, t * CONFLICT_PEN, t)

    def xlu(self, u):
        P = self.P
        return P.vol[u] * P.eb[u] / XLU_BPS.get(int(P.eb[u]), 400.0)

    def copy_cost(self, v, a, b):
        """copy of tensor v from layout a to layout b (arrays)."""
        P = self.P
        a = np.asarray(a, np.int64)
        b = np.asarray(b, np.int64)
        if P.rank[v] < 2:
            return np.zeros(np.broadcast(a, b).shape)
        if P.vol[v] * P.eb[v] < 16384:
            return np.full(np.broadcast(a, b).shape, 0.25 * COPY_LAUNCH)
        t = self.read(v, a) + self.read(v, b)
        same_minor = (a & 7) == (b & 7)
        return COPY_LAUNCH + np.where(same_minor, t, t + 0.5 * self.xlu(v))

    # ---------------------------------------------------------------- node kinds
    def conv_cost(self, u, co, ci, ck):
        P = self.P
        f = P.nf[u]
        p0, p1 = P.ops[u][0], P.ops[u][1]
        ri = int(P.rank[p0])
        ib, ifd = int(f[93]), int(f[94])
        ki, ko = int(f[99]), int(f[100])
        of = int(f[106])
        in_sp = [int(f[95 + k]) for k in range(max(0, ri - 2))]
        Din, Dk, Do = P.dims[p0], P.dims[p1], P.dims[u]
        Cin = float(Din[ifd])
        Cout = float(Do[of])
        Ck = float(Dk[ki])
        Nk = float(Dk[ko])
        flops = 2.0 * P.vol[u] * P.vol[p1] / max(Nk, 1.0)
        passes = F32_PASSES if P.eb[p0] >= 4 else 1.0
        wsz = np.ones(8)
        for k, d in enumerate(in_sp):
            wsz[d] = max(1.0, float(f[37 + k]))
        ci = np.asarray(ci, np.int64)
        ck = np.asarray(ck, np.int64)
        co = np.asarray(co, np.int64)
        mi, si = ci & 7, (ci >> 3) & 7
        mk, sk = ck & 7, (ck >> 3) & 7
        mo, so = co & 7, (co >> 3) & 7

        def util(x):
            x = np.asarray(x, np.float64)
            return x / (np.ceil(x / 128.0) * 128.0)

        spatial_minor = np.isin(mi, in_sp)
        im2col = (Cin < 32) & spatial_minor & (si == ifd)
        u_in = np.where(im2col, util(np.minimum(Ck * wsz[mi], 128.0)), util(Ck))
        if Ck <= 1 and f[107] > 1:   # depthwise: VPU path
            t_mxu = flops / (2.0 * VPU_EPS) * np.ones(ci.shape)
        else:
            t_mxu = flops * passes / PEAK / (u_in * util(Nk))
        rows_out = P.vol[u] / max(Cout, 1.0)
        reloads = math.ceil(rows_out / 16384.0)
        feed = np.where(mi == ifd, 0.0, np.where(im2col, 0.15, np.where(si == ifd, 0.5, 1.2)))
        kfac = np.where((mk == ko) & (sk == ki), 0.0,
                        np.where((mk == ki) & (sk == ko), 0.2, 0.8))
        ofac = np.where(mo == of, 0.0, np.where(so == of, 0.5, 1.2))
        t_xlu = feed * self.xlu(p0) + kfac * self.xlu(p1) * reloads + ofac * self.xlu(u)
        t_mem = (self.read(p0, ci) * math.ceil(Cout / 1024.0) + self.read(p1, ck) * reloads
                 + self.read(u, co))
        return softmax3(t_mxu, t_mem, t_xlu) + LAUNCH

    def dot_cost(self, u, co, ci, crhs):
        P = self.P
        p0, p1 = P.ops[u][0], P.ops[u][1]
        r = int(P.rank[u])
        rl = int(P.rank[p0])
        if r < 2 or rl < 2:
            return self.generic_cost(u, co, [ci, crhs])
        K = float(P.dims[p0][rl - 1])
        M = float(P.dims[u][r - 2])
        N = float(P.dims[u][r - 1])
        flops = 2.0 * P.vol[u] * K
        passes = F32_PASSES if P.eb[p0] >= 4 else 1.0
        u_k = K / (math.ceil(K / 128) * 128)
        u_n = N / (math.ceil(N / 128) * 128)
        t_mxu = flops * passes / PEAK / (u_k * u_n)
        ci = np.asarray(ci, np.int64)
        co = np.asarray(co, np.int64)
        mi, si = ci & 7, (ci >> 3) & 7
        mo, so = co & 7, (co >> 3) & 7
        lf = np.where(mi == rl - 1, 0.0, np.where((mi == rl - 2) & (si == rl - 1), 0.4, 1.1))
        of = np.where(mo == r - 1, 0.0, np.where((mo == r - 2) & (so == r - 1), 0.4, 1.1))
        swapped = (mi == rl - 2) & (mo == r - 2)
        t_xlu = np.where(swapped, 0.0, lf * self.xlu(p0) + of * self.xlu(u))
        rows = P.vol[u] / max(N, 1.0)
        t_mem = (self.read(p0, ci) * math.ceil(N / 2048.0)
                 + self.read(p1, crhs) * math.ceil(rows / 8192.0) + self.read(u, co))
        return softmax3(t_mxu, t_mem, t_xlu) + LAUNCH

    def reshape_cost(self, u, co, ci):
        P = self.P
        p0 = P.ops[u][0]
        ri, ro = int(P.rank[p0]), int(P.rank[u])
        co = np.asarray(co, np.int64)
        ci = np.asarray(ci, np.int64)
        if P.vol[u] * P.eb[u] < 4096 or (ri < 2 and ro < 2):
            return np.full(np.broadcast(co, ci).shape, 50.0)
        Din, Dout = P.dims[p0], P.dims[u]
        sub = int(P.sub[u])
        li = Din[ri - 1] if ri >= 1 else 1
        lo = Dout[ro - 1] if ro >= 1 else 1
        si_ = Din[ri - 2] if ri >= 2 else 1
        so_ = Dout[ro - 2] if ro >= 2 else 1
        same_last = li == lo
        lane_ok = same_last or (li % 128 == 0 and lo % 128 == 0)
        sub_ok = (same_last and si_ == so_) or (si_ % sub == 0 and so_ % sub == 0)
        tiles_ok = lane_ok and sub_ok
        in_desc = ci == P.desccode[p0]
        out_desc = co == P.desccode[u]
        bitcast = in_desc & out_desc & tiles_ok
        semi = ((ci & 7) == ri - 1) & ((co & 7) == ro - 1) & same_last
        t = self.read(p0, ci) + self.read(u, co)
        full = COPY_LAUNCH + t + 0.5 * self.xlu(u)
        return np.where(bitcast, 50.0, np.where(semi, 0.5 * COPY_LAUNCH + t, full))

    def transpose_cost(self, u, co, ci):
        P = self.P
        p0 = P.ops[u][0]
        r = int(P.rank[u])
        co = np.asarray(co, np.int64)
        ci = np.asarray(ci, np.int64)
        shape = np.broadcast(co, ci).shape
        if r < 2 or P.vol[u] * P.eb[u] < 4096:
            return np.full(shape, 50.0)
        p = np.array([int(x) for x in np.rint(P.nf[u, 31:31 + r])], np.int64)
        po = decode(np.broadcast_to(co, shape), r)
        pi = decode(np.broadcast_to(ci, shape), r)
        mapped = p[po]
        bitcast = np.all(mapped == pi, axis=-1)
        keep_minor = mapped[..., 0] == pi[..., 0]
        t = self.read(p0, ci) + self.read(u, co)
        return np.where(bitcast, 50.0,
                        np.where(keep_minor, COPY_LAUNCH + t, COPY_LAUNCH + t + 0.5 * self.xlu(u)))

    def ew_cost(self, u, code):
        P = self.P
        nin = sum(1 for v in P.ops[u] if P.rank[v] >= 1) + 1
        mem = FUSE * nin * self.read(u, code)
        comp = P.vol[u] * ew_weight(P.op[u]) / VPU_EPS
        return np.sqrt(mem ** 2 + comp ** 2)

    def reduce_cost(self, u, a):
        P = self.P
        if not P.ops[u]:
            return np.zeros(np.shape(a))
        p0 = P.ops[u][0]
        ri, ro = int(P.rank[p0]), int(P.rank[u])
        nred = max(0, ri - ro)
        red = [int(x) for x in np.rint(P.nf[u, 31:31 + nred])]
        a = np.asarray(a, np.int64)
        if ri >= 2:
            fac = np.where(np.isin(a & 7, red), 0.35,
                           np.where(np.isin((a >> 3) & 7, red), 0.08, 0.03))
        else:
            fac = np.full(a.shape, 0.35 if nred else 0.03)
        t_mem = self.read(p0, a) + self.read(u, P.defcode[u])
        return softmax3(t_mem, fac * self.xlu(p0)) + 0.5 * LAUNCH

    def generic_cost(self, u, co, cins):
        P = self.P
        t = self.read(u, co)
        for v, c in zip(P.ops[u], cins):
            if P.rank[v] >= 1:
                t = t + self.read(v, c)
        return 0.5 * t + 0.25 * LAUNCH

    def node_cost(self, u, co, cins):
        P = self.P
        o = int(P.op[u])
        if o in ZERO_COST or P.is_tuple[u]:
            return np.zeros(np.shape(co))
        ops = P.ops[u]
        if o == 26 and len(ops) >= 2:
            return self.conv_cost(u, co, cins[0], cins[1])
        if o == 34 and len(ops) >= 2:
            return self.dot_cost(u, co, cins[0], cins[1])
        if o == 75 and ops:
            return self.reshape_cost(u, co, cins[0])
        if o == 98 and ops:
            return self.transpose_cost(u, co, cins[0])
        if o in TRANSPARENT:
            return self.ew_cost(u, co)
        if o == 70 and ops:
            return self.reduce_cost(u, cins[0])
        if o == 27 and ops:
            return self.copy_cost(ops[0], cins[0], co)
        return self.generic_cost(u, co, cins)


def resolve_block(blk, r, dperm, adapt):
    """blk (c,6) ints -> (c,) codes; prefix of given dims, rest in default order."""
    c = blk.shape[0]
    if r == 0:
        return np.zeros(c, np.int64)
    b = blk[:, :r].astype(np.int64)
    fixed = b >= 0
    nfix = fixed.sum(1)
    code = np.zeros(c, np.int64)
    for k in range(r):
        code += np.where(fixed[:, k], np.left_shift(np.maximum(b[:, k], 0), 3 * k), 0)
    cnt = nfix.copy()
    for d in dperm:
        m = ~np.any(b == d, axis=1)
        code += np.where(m, np.left_shift(np.int64(d), 3 * cnt), 0)
        cnt += m
    return np.where(nfix == 0, adapt, code)


def layout_noiseless(a):
    nf = a['node_feat']
    P = Parsed(nf, a['node_opcode'], a['edge_index'])
    L = LayoutLaw(P)
    ids = [int(x) for x in a['node_config_ids']]
    ncf = np.rint(a['node_config_feat']).astype(np.int64)
    c = ncf.shape[0]
    n = P.n
    splits = np.asarray(a['node_splits']).ravel()
    mult = np.ones(n)
    if len(splits) >= 3:
        mult[:int(splits[-2])] = TRIP
    conf = {u: j for j, u in enumerate(ids)}

    eff = {}
    cin = {}
    for u in range(n):
        ops = P.ops[u]
        if u in conf:
            j = conf[u]
            blk = ncf[:, j, :]
            eff[u] = resolve_block(blk[:, 0:6], int(P.rank[u]), P.perm(u), P.defcode[u])
            ins = []
            for k, v in enumerate(ops):
                ev = eff.get(v, np.full(c, P.defcode[v]))
                if k == 0:
                    ins.append(resolve_block(blk[:, 6:12], int(P.rank[v]), P.perm(v), ev))
                elif k == 1 and P.op[u] == 26:
                    ins.append(resolve_block(blk[:, 12:18], int(P.rank[v]), P.perm(v), ev))
                else:
                    ins.append(np.full(c, P.defcode[v]))
            cin[u] = ins
        elif (P.op[u] in TRANSPARENT and ops and ops[0] in eff and P.rank[u] >= 2
              and np.array_equal(P.dims[u], P.dims[ops[0]])):
            eff[u] = eff[ops[0]]

    def effc(v):
        return eff[v] if v in eff else P.defcode[v]

    total = np.zeros(c)
    base = 0.0
    for u in range(n):
        ops = P.ops[u]
        o = int(P.op[u])
        if u in conf:
            total += mult[u] * L.node_cost(u, eff[u], cin[u])
        elif u in eff:
            total += mult[u] * L.ew_cost(u, eff[u])
        elif o in (70, 27) and ops and ops[0] in eff:
            cins = [effc(ops[0])] + [P.defcode[v] for v in ops[1:]]
            total += mult[u] * L.node_cost(u, np.full(c, P.defcode[u]), cins)
        else:
            cins = [P.defcode[v] for v in ops]
            base += mult[u] * float(np.sum(L.node_cost(u, P.defcode[u], cins)))

    # inserted copies, grouped per producer
    demands = {}
    for v in range(n):
        if P.rank[v] < 2 or P.is_tuple[v]:
            continue
        ev = effc(v)
        for (u, k) in P.users[v]:
            o = int(P.op[u])
            if u in conf:
                if k == 0 or (k == 1 and o == 26):
                    dem = cin[u][k]
                else:
                    dem = P.defcode[v]
            elif o in TRANSPARENT:
                if k == 0 or not np.array_equal(P.dims[u], P.dims[v]):
                    continue
                dem = effc(u)
            elif o in (70, 27) and k == 0:
                continue
            else:
                dem = P.defcode[v]
            if np.ndim(dem) == 0 and np.ndim(ev) == 0:
                if int(dem) != int(ev):
                    base += mult[v] * float(L.copy_cost(v, ev, dem))
                continue
            demands.setdefault(v, []).append(np.broadcast_to(np.asarray(dem, np.int64), (c,)))
    for v, lst in demands.items():
        D = np.sort(np.stack(lst, axis=1), axis=1)
        ev = np.broadcast_to(np.asarray(effc(v), np.int64), (c,))
        first = np.ones(D.shape, bool)
        first[:, 1:] = D[:, 1:] != D[:, :-1]
        for j in range(D.shape[1]):
            use = first[:, j] & (D[:, j] != ev)
            if use.any():
                total += mult[v] * np.where(use, L.copy_cost(v, ev, D[:, j]), 0.0)
    return total + base + 2.0e4


# =======================================================================================
# Tile law
# =======================================================================================
VMEM = 16 << 20
STEP_OVH = 300.0
CHUNK_NS = 0.25
N_MXU = 4.0
FREQ = 0.94          # cycles / ns
W_LOAD = 128.0
TILE_LAUNCH = 1500.0


def _units(P, u):
    r = int(P.rank[u])
    L = P.perm(u)
    un = np.ones(r, np.int64)
    if r >= 1:
        un[L[0]] = 128
    if r >= 2:
        un[L[1]] = 8
    return un


def _tile_from_bounds(P, u, B):
    """B (c, r) bounds in physical major->minor order -> (c, r) logical tile extents."""
    r = int(P.rank[u])
    L = P.perm(u)
    un = _units(P, u)
    D = P.dims[u][:r]
    T = np.zeros((B.shape[0], r), np.float64)
    for p in range(r):
        d = L[r - 1 - p]
        b = B[:, p].astype(np.float64)
        T[:, d] = np.where(b <= 0, D[d], np.minimum(D[d], b * un[d]))
    return T


def _chunks(P, u, E):
    """E (c, r) tile extents of tensor u -> (n_chunks (c,), elems (c,))."""
    r = int(P.rank[u])
    L = P.perm(u)
    D = P.dims[u][:r].astype(np.float64)
    elems = np.prod(E, axis=1) if r else np.ones(E.shape[0])
    chunk = np.ones(E.shape[0])
    going = np.ones(E.shape[0], bool)
    for k in range(r):
        d = L[k]
        chunk = np.where(going, chunk * E[:, d], chunk)
        going = going & (E[:, d] >= D[d])
    return elems / np.maximum(chunk, 1.0), elems


def _overlap(comp, dma, W, crude=False):
    o = np.maximum(comp, dma)
    if crude:
        return o
    o = np.where(W <= 0.45 * VMEM, o, o + 0.3 * np.minimum(comp, dma))
    return np.where(W > VMEM, o * (1.0 + 1.8 * (W / VMEM - 1.0)), o)


def tile_analyse(P):
    """Static facts of a tile kernel file."""
    n = P.n
    roots = np.nonzero(P.is_root)[0]
    final = int(roots[-1]) if len(roots) else n - 1
    out = final
    if P.is_tuple[final] or P.rank[final] == 0:
        cands = []
        for v in P.all_ops[final]:
            if P.op[v] == 100:
                cands += [w for w in P.all_ops[v] if not P.is_tuple[w] and P.rank[w] >= 1]
        if not cands:
            cands = [v for v in P.all_ops[final]
                     if P.op[v] != 63 and not P.is_tuple[v] and P.rank[v] >= 1]
        if cands:
            out = max(cands, key=lambda w: (P.vol[w], -w))
    main = None
    best = -1.0
    for u in range(n):
        if P.op[u] in (26, 34) and len(P.ops[u]) >= 2:
            if P.op[u] == 26:
                ko = int(P.nf[u, 100])
                fl = 2.0 * P.vol[u] * P.vol[P.ops[u][1]] / max(1.0, float(P.dims[P.ops[u][1]][ko]))
            else:
                rl = int(P.rank[P.ops[u][0]])
                fl = 2.0 * P.vol[u] * float(P.dims[P.ops[u][0]][rl - 1])
            if fl > best:
                best, main = fl, u
    opw = 0.0
    for u in range(n):
        if P.op[u] in TRANSPARENT and P.rank[u] >= 1:
            opw += ew_weight(P.op[u]) * min(1.0, P.vol[u] / max(P.vol[out], 1.0))
    inner_params = []
    for u in range(n):
        if P.op[u] == 63 and not P.is_tuple[u] and any(w != final for (w, _) in P.users[u]):
            inner_params.append(u)
    return dict(final=final, out=out, main=main, opw=max(opw, 0.5), params=inner_params)


def tile_noiseless(a):
    return tile_eval(a)[0]


def tile_eval(a, crude=False):
    """(runtime, working set) per config. crude=True is the compiler's own simplified
    model (used only to pick the default config): no weight-load, chunk, bank, packing or
    exposed-DMA terms."""
    cn = 0.0 if crude else CHUNK_NS
    nf = a['node_feat']
    P = Parsed(nf, a['node_opcode'], a['edge_index'])
    info = tile_analyse(P)
    cf = np.rint(a['config_feat']).astype(np.int64)
    c = cf.shape[0]
    out = info['out']
    r = int(P.rank[out])
    To = _tile_from_bounds(P, out, cf[:, 8:8 + r])
    Do = P.dims[out][:r].astype(np.float64)
    steps_out = np.prod(np.ceil(Do / To), axis=1)
    Lo = P.perm(out)
    eb_o = float(P.eb[out])
    sub_o = int(P.sub[out])
    # padded output tile
    e1 = To[:, Lo[0]] if r >= 1 else np.ones(c)
    e2 = To[:, Lo[1]] if r >= 2 else np.ones(c)
    p1 = np.ceil(e1 / 128.0) * 128.0
    p2 = np.ceil(e2 / sub_o) * sub_o if r >= 2 else np.ones(c)
    t_el = np.prod(To, axis=1)
    t_pad = t_el / (e1 * e2) * p1 * p2
    ch_o, _ = _chunks(P, out, To)
    store = t_pad * eb_o / HBM_BW + ch_o * cn
    main = info['main']
    opw = info['opw']
    if main is not None:
        u = main
        p0, pk = P.ops[u][0], P.ops[u][1]
        same = int(P.rank[u]) == r and np.array_equal(P.dims[u][:r], P.dims[out][:r])
        if same:
            Tm = To
        else:   # epilogue changes the shape: whole main output per step, scaled
            Tm = np.tile(P.dims[u][:int(P.rank[u])].astype(np.float64), (c, 1))
        rk = int(P.rank[pk])
        Tk = _tile_from_bounds(P, pk, cf[:, 0:rk])
        Dk = P.dims[pk][:rk].astype(np.float64)
        Din = P.dims[p0].astype(np.float64)
        ri = int(P.rank[p0])
        eb_i = float(P.eb[p0])
        eb_k = float(P.eb[pk])
        f = P.nf[u]
        if P.op[u] == 26:
            ob, ofd = int(f[105]), int(f[106])
            ki, ko = int(f[99]), int(f[100])
            ib, ifd = int(f[93]), int(f[94])
            ro = int(P.rank[u])
            osp = [d for d in range(ro) if d not in (ob, ofd)]
            ksp = [int(f[101 + k]) for k in range(len(osp))]
            isp = [int(f[95 + k]) for k in range(len(osp))]
            Tn = Tm[:, ofd]
            rows = Tm[:, ob] * (np.prod(Tm[:, osp], axis=1) if osp else 1.0)
            Tcin = Tk[:, ki]
            Tco = Tk[:, ko]
            Tks = Tk[:, ksp] if ksp else np.ones((c, 1))
            Ks = Dk[ksp] if ksp else np.ones(1)
            Cin = Dk[ki]
            Cout = Dk[ko]
            E = np.zeros((c, ri))
            E[:, ib] = Tm[:, ob]
            E[:, ifd] = np.minimum(Tcin, Din[ifd])
            for j, (dsp, dk_) in enumerate(zip(isp, ksp)):
                st = max(1.0, float(f[45 + j]))
                E[:, dsp] = np.minimum(Din[dsp], (Tm[:, osp[j]] - 1.0) * st + Tk[:, dk_])
        else:
            ro = int(P.rank[u])
            Tn = Tm[:, ro - 1]
            rows = np.prod(Tm[:, :ro - 1], axis=1)
            Tcin = Tk[:, rk - 2] if rk >= 2 else np.full(c, Dk[0])
            Tco = Tk[:, rk - 1]
            Tks = np.ones((c, 1))
            Ks = np.ones(1)
            Cin = Dk[rk - 2] if rk >= 2 else Dk[0]
            Cout = Dk[rk - 1]
            E = np.zeros((c, ri))
            for d in range(ri - 1):
                E[:, d] = Tm[:, d] if d < ro - 1 else Din[d]
            E[:, ri - 1] = np.minimum(Tcin, Din[ri - 1])
        k_steps = np.ceil(Cin / Tcin) * np.prod(np.ceil(Ks / Tks), axis=1)
        n_sub = np.where(Tco < Tn, np.ceil(Tn / np.maximum(Tco, 1.0)), 1.0)
        eff_n = np.minimum(Tn, Tco)
        ksv = np.prod(Tks, axis=1)
        stationary = (k_steps == 1) & (n_sub == 1) & (Tco >= Cout)
        wl = np.where(stationary | crude, 0.0, W_LOAD)
        passes = F32_PASSES if eb_i >= 4 else 1.0
        if P.op[u] == 26 and Cin <= 1 and f[107] > 1:
            t_mxu = 2.0 * rows * eff_n * ksv / (2.0 * VPU_EPS)
        else:
            cyc = ksv * np.ceil(Tcin / 128.0) * np.ceil(eff_n / 128.0) * (
                np.ceil(rows / 8.0) * 8.0 + wl) * passes / N_MXU
            t_mxu = cyc / FREQ
        in_bytes = np.prod(E, axis=1) * eb_i
        ch_i, _ = _chunks(P, p0, E)
        k_bytes = ksv * Tcin * Tco * eb_k
        Ek = Tk.copy()
        ch_k, _ = _chunks(P, pk, Ek)
        dma = in_bytes / HBM_BW + ch_i * cn + k_bytes / HBM_BW + ch_k * cn
        W = 2.0 * (in_bytes + k_bytes) + rows * Tn * 4.0 + 2.0 * t_pad * eb_o
        step = _overlap(t_mxu, dma, W, crude) + STEP_OVH
        acc_pitch = np.ceil(e1 / 128.0) * 128.0 * 4.0
        bank = (np.mod(acc_pitch, 4096) == 0) & (np.mod(p2, 64) == 0)
        vpu = t_pad * opw / VPU_EPS * np.where(bank & (not crude), 1.35, 1.0)
        if eb_o == 2 and r >= 2 and not crude:
            vpu = vpu * np.where(np.mod(e2, 16) != 0, 1.25, 1.0)
        epi = np.maximum(vpu, store) + 0.25 * np.minimum(vpu, store)
        if not same:
            frac = t_el / max(P.vol[out], 1.0)
            per_tile = (k_steps * n_sub * step) * frac + epi
        else:
            per_tile = k_steps * n_sub * step + epi
        total = steps_out * per_tile + dma + TILE_LAUNCH
        return total, W
    # loop fusion
    in_b = np.zeros(c)
    dma = np.zeros(c)
    once = 0.0
    for p in info['params']:
        bp = float(P.eb[p])
        if int(P.rank[p]) == r and np.array_equal(P.dims[p][:r], P.dims[out][:r]):
            ch, _ = _chunks(P, p, To)
            in_b += t_el * bp
            dma += t_el * bp / HBM_BW + ch * cn
        elif P.vol[p] * bp <= 65536:
            once += P.vol[p] * bp / HBM_BW
        else:
            ratio = P.vol[p] / max(P.vol[out], 1.0)
            in_b += t_el * ratio * bp
            dma += t_el * ratio * bp / HBM_BW * 1.1
    xl = np.zeros(c)
    for u in range(P.n):
        if P.op[u] == 70 and P.ops[u]:
            p0 = P.ops[u][0]
            ri, ro_ = int(P.rank[p0]), int(P.rank[u])
            red = [int(x) for x in np.rint(P.nf[u, 31:31 + max(0, ri - ro_)])]
            if ri >= 1 and P.lay[p0, 0] in red:
                xl += t_el * (P.vol[p0] / max(P.vol[out], 1.0)) * P.eb[p0] / XLU_BPS.get(int(P.eb[p0]), 400.0) * 0.6
    comp = t_pad * opw / VPU_EPS + xl
    W = 2.0 * in_b + 2.0 * t_pad * eb_o
    step = _overlap(comp, dma + store, W, crude) + STEP_OVH
    return steps_out * step + once + dma + TILE_LAUNCH, W


# =======================================================================================
# Graph construction (own sampler)
# =======================================================================================
def desc(r):
    return tuple(range(r - 1, -1, -1))


class GB:
    """HLO-like graph builder with computations assembled at the end."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.comp_of = []
        self.comps = []        # (kind, list of node ids)
        self.cur = None
        self.pnum = 0

    def begin(self, kind):
        self.comps.append((kind, []))
        self.cur = len(self.comps) - 1
        self.pnum = 0
        return self.cur

    def set_comp(self, ci):
        self.cur = ci

    def add(self, op, shape=(), dt='f32', ins=(), lay=None, **kw):
        shape = tuple(int(s) for s in shape)
        ins = [int(i) for i in ins]
        if dt in ('tuple', 'token') or len(shape) == 0:
            lay = ()
        elif lay is None:
            for i in ins:
                if self.nodes[i]['shape'] == shape and self.nodes[i]['lay']:
                    lay = self.nodes[i]['lay']
                    break
            if lay is None:
                lay = desc(len(shape))
        idx = len(self.nodes)
        self.nodes.append(dict(op=OPC[op], shape=shape, dt=dt, ins=ins, lay=tuple(int(x) for x in lay),
                               kw=kw, root=False))
        self.comps[self.cur][1].append(idx)
        return idx

    def N(self, i):
        return self.nodes[i]

    def sh(self, i):
        return self.nodes[i]['shape']

    def dt(self, i):
        return self.nodes[i]['dt']

    def lay(self, i):
        return self.nodes[i]['lay']

    def root(self, i):
        self.nodes[i]['root'] = True

    # ---- helpers
    def param(self, shape, dt='f32', lay=None):
        i = self.add('parameter', shape, dt, (), lay, param=self.pnum)
        self.pnum += 1
        return i

    def const(self, dt='f32', shape=()):
        return self.add('constant', shape, dt)

    def bcast(self, x, shape, dims, like=None):
        lay = self.lay(like) if like is not None else None
        return self.add('broadcast', shape, self.dt(x), [x], lay, dims=list(dims))

    def scalar_like(self, x, dt=None):
        c = self.const(dt or self.dt(x))
        return self.bcast(c, self.sh(x), [], like=x)

    def ew(self, op, *xs, dt=None):
        return self.add(op, self.sh(xs[0]), dt or self.dt(xs[0]), xs)

    def convert(self, x, dt):
        return self.add('convert', self.sh(x), dt, [x])

    def reducer(self, kind='add', dt='f32'):
        saved = (self.cur, self.pnum)
        self.begin('reducer')
        a = self.param((), dt)
        b = self.param((), dt)
        r = self.add(kind, (), dt, [a, b])
        self.root(r)
        self.cur, self.pnum = saved
        return r

    def reduce(self, x, dims, kind='add'):
        shp = [s for k, s in enumerate(self.sh(x)) if k not in dims]
        red = self.reducer(kind, 'f32' if self.dt(x) in ('f32', 'bf16', 'f16') else self.dt(x))
        init = self.const(self.dt(x))
        keep = [k for k in range(len(self.sh(x))) if k not in dims]
        # default layout of the result: input order restricted
        lx = self.lay(x)
        pos = {d: i for i, d in enumerate(keep)}
        lay = tuple(pos[d] for d in lx if d in pos)
        return self.add('reduce', shp, self.dt(x), [red, x, init], lay, dims=list(dims))

    def reshape(self, x, shape, lay=None):
        return self.add('reshape', shape, self.dt(x), [x], lay if lay is not None else desc(len(shape)))

    def transpose(self, x, perm):
        shp = tuple(self.sh(x)[p] for p in perm)
        inv = [0] * len(perm)
        for i, p in enumerate(perm):
            inv[p] = i
        lay = tuple(inv[d] for d in self.lay(x))
        return self.add('transpose', shp, self.dt(x), [x], lay, dims=list(perm))

    def dot(self, a, b, dt=None, lay=None):
        sa, sb = self.sh(a), self.sh(b)
        shp = tuple(sa[:-1]) + (sb[-1],)
        return self.add('dot', shp, dt or self.dt(a), [a, b], lay if lay is not None else desc(len(shp)))

    def conv(self, x, w, out_shape, dn, window, dt=None, lay=None, fgc=1):
        return self.add('convolution', out_shape, dt or self.dt(x), [x, w], lay, window=window,
                        convdn=dn, fgc=fgc, bgc=1)

    def tuple_(self, xs):
        return self.add('tuple', (), 'tuple', xs, tuple_size=len(xs))

    # ---- assemble
    def assemble(self):
        order = []
        bounds = []
        kinds_first = [ci for ci, (k, _) in enumerate(self.comps) if k == 'reducer']
        others = [ci for ci, (k, _) in enumerate(self.comps) if k != 'reducer']
        for ci in kinds_first + others:
            order += self.comps[ci][1]
            if self.comps[ci][0] in ('body', 'cond'):
                bounds.append(len(order))
        remap = {old: new for new, old in enumerate(order)}
        n = len(order)
        nf = np.zeros((n, 140), np.float32)
        opc = np.zeros(n, np.uint8)
        edges = []
        for new, old in enumerate(order):
            nd = self.nodes[old]
            nf[new] = feat_row(nd)
            opc[new] = nd['op']
            for v in nd['ins']:
                edges.append((new, remap[v]))
        ei = np.array(edges, np.int64).reshape(-1, 2)
        splits = np.array([[0] + bounds + [n]], np.int64)
        return nf, opc, ei, splits, remap


def _seq(f, base, vals, lead, zero_empty=False):
    for k, v in enumerate(vals[:lead]):
        f[base + k] = v
    f[base + lead] = float(sum(vals))
    if len(vals) == 0:
        f[base + lead + 1] = 0.0 if zero_empty else 1.0
    else:
        p = 1.0
        for v in vals:
            p *= v
        f[base + lead + 1] = p


def feat_row(nd):
    f = np.zeros(140, np.float32)
    kw = nd['kw']
    f[0] = 1.0 if nd['root'] else 0.0
    f[2 + DT_IDX[nd['dt']]] = 1.0
    shp = list(nd['shape'])
    _seq(f, 21, shp, 6)
    f[29] = kw.get('tuple_size', 0)
    f[30] = kw.get('param', 0)
    for k, d in enumerate(kw.get('dims', [])[:6]):
        f[31 + k] = d
    win = kw.get('window')
    if win:
        _seq(f, 37, [w['size'] for w in win], 6)
        _seq(f, 45, [w.get('stride', 1) for w in win], 6)
        _seq(f, 53, [w.get('lo', 0) for w in win], 6)
        _seq(f, 61, [w.get('hi', 0) for w in win], 6)
        _seq(f, 69, [w.get('wdil', 1) for w in win], 6)
        _seq(f, 77, [w.get('bdil', 1) for w in win], 6)
        rev = [bool(w.get('rev', False)) for w in win]
        for k, b in enumerate(rev[:6]):
            f[85 + k] = 1.0 if b else 0.0
        f[91] = sum(rev)
        f[92] = len(rev) - sum(rev)
    else:
        for b in (44, 52, 60, 68, 76, 84):
            f[b] = 1.0
    dn = kw.get('convdn')
    if dn:
        f[93] = dn['ib']
        f[94] = dn['if']
        for k, d in enumerate(dn['isp'][:4]):
            f[95 + k] = d
        f[99] = dn['ki']
        f[100] = dn['ko']
        for k, d in enumerate(dn['ksp'][:4]):
            f[101 + k] = d
        f[105] = dn['ob']
        f[106] = dn['of']
    f[107] = kw.get('fgc', 0) if dn or nd['op'] == OPC['custom-call'] else 0
    f[108] = kw.get('bgc', 0) if dn or nd['op'] == OPC['custom-call'] else 0
    sl = kw.get('slice')
    if sl:
        _seq(f, 109, [s[0] for s in sl], 2)
        _seq(f, 113, [s[1] for s in sl], 2)
        _seq(f, 117, [s[2] for s in sl], 2)
    else:
        f[112] = f[116] = f[120] = 1.0
    _seq(f, 121, kw.get('dss', []), 2)
    pad = kw.get('pad')
    if pad:
        _seq(f, 125, [p[0] for p in pad], 2)
        _seq(f, 129, [p[1] for p in pad], 2)
    else:
        f[128] = f[132] = 1.0
    f[133] = 1.0 if kw.get('stable') else 0.0
    lay = nd['lay']
    for k, d in enumerate(lay[:6]):
        f[134 + k] = d
    return f


# ---------------------------------------------------------------------------------------
# model families for layout graphs
# ---------------------------------------------------------------------------------------
def conv_out(H, k, s):
    Ho = -(-H // s)
    pad = max((Ho - 1) * s + k - H, 0)
    return Ho, pad // 2, pad - pad // 2


class CNN:
    """2-D (NHWC) or 3-D (NDHWC) conv nets, optionally with backward convs."""

    def __init__(self, g, rng, nd=2, train=False):
        self.g, self.rng, self.nd, self.train = g, rng, nd, train
        self.cands = []
        self.grads = []
        self.outs = []

    def act_lay(self, r, N):
        if self.nd == 2 and self.bmin and N >= 8:
            return (r - 1, 0) + tuple(range(r - 2, 0, -1))
        return desc(r)

    def conv_layer(self, x, Cout, k=3, s=1, bias=True, relu=True, groups=1):
        g = self.g
        shp = g.sh(x)
        nd = self.nd
        N, C = shp[0], shp[-1]
        sp = shp[1:-1]
        outs = [conv_out(H, k, s) for H in sp]
        oshape = (N,) + tuple(o[0] for o in outs) + (Cout,)
        cin_k = C // groups
        w = g.param(tuple([k] * nd) + (cin_k, Cout), self.wdt)
        if self.wdt != g.dt(x):
            w = g.convert(w, g.dt(x))
        dn = dict(ib=0, **{'if': nd + 1}, isp=list(range(1, nd + 1)), ki=nd, ko=nd + 1,
                  ksp=list(range(nd)), ob=0, of=nd + 1)
        win = [dict(size=k, stride=s, lo=o[1], hi=o[2]) for o in outs]
        y = g.conv(x, w, oshape, dn, win, lay=self.act_lay(nd + 2, N), fgc=groups)
        self.cands.append(y)
        if self.train and self.rng.random() < 0.5:
            self.grads.append((x, y, w, k, s, outs, groups))
        if bias:
            b = g.param((Cout,), g.dt(x))
            y = g.ew('add', y, g.bcast(b, oshape, [nd + 1], like=y))
        if self.bn:
            y = self.batchnorm(y)
        if relu:
            y = g.ew('maximum', y, g.scalar_like(y))
        return y

    def batchnorm(self, y):
        g = self.g
        shp = g.sh(y)
        r = len(shp)
        C = shp[-1]
        if self.train:
            red = list(range(r - 1))
            yf = g.convert(y, 'f32') if g.dt(y) != 'f32' else y
            m = g.reduce(yf, red)
            m = g.ew('multiply', m, g.scalar_like(m))
            mb = g.bcast(m, shp, [r - 1], like=yf)
            d = g.ew('subtract', yf, mb)
            v = g.reduce(g.ew('multiply', d, d), red)
            v = g.ew('rsqrt', g.ew('add', v, g.scalar_like(v)))
            y2 = g.ew('multiply', d, g.bcast(v, shp, [r - 1], like=yf))
            if g.dt(y) != 'f32':
                y2 = g.convert(y2, g.dt(y))
            return y2
        sc = g.param((C,), g.dt(y))
        sh = g.param((C,), g.dt(y))
        y = g.ew('multiply', y, g.bcast(sc, shp, [r - 1], like=y))
        return g.ew('add', y, g.bcast(sh, shp, [r - 1], like=y))

    def pool(self, x, k=2, s=2, kind='maximum'):
        g = self.g
        shp = g.sh(x)
        nd = self.nd
        outs = [conv_out(H, k, s) for H in shp[1:-1]]
        oshape = (shp[0],) + tuple(o[0] for o in outs) + (shp[-1],)
        win = [dict(size=1, stride=1)] + [dict(size=k, stride=s, lo=o[1], hi=o[2]) for o in outs] + [dict(size=1, stride=1)]
        red = g.reducer(kind, 'f32')
        init = g.const(g.dt(x))
        return g.add('reduce-window', oshape, g.dt(x), [red, x, init], g.lay(x), window=win)

    def upsample(self, x, Cout):
        """transposed conv expressed as a base-dilated convolution."""
        g = self.g
        shp = g.sh(x)
        nd = self.nd
        N, C = shp[0], shp[-1]
        oshape = (N,) + tuple(2 * h for h in shp[1:-1]) + (Cout,)
        w = g.param(tuple([2] * nd) + (C, Cout), self.wdt)
        if self.wdt != g.dt(x):
            w = g.convert(w, g.dt(x))
        dn = dict(ib=0, **{'if': nd + 1}, isp=list(range(1, nd + 1)), ki=nd, ko=nd + 1,
                  ksp=list(range(nd)), ob=0, of=nd + 1)
        win = [dict(size=2, stride=1, lo=1, hi=1, bdil=2) for _ in range(nd)]
        y = g.conv(x, w, oshape, dn, win, lay=self.act_lay(nd + 2, N))
        self.cands.append(y)
        return y

    def backward(self, max_n):
        g = self.g
        nd = self.nd
        for (x, y, w, k, s, outs, groups) in self.grads[:max_n]:
            if groups != 1:
                continue
            dy = g.add('select', g.sh(y), g.dt(y), [g.add('compare', g.sh(y), 'pred', [y, g.scalar_like(y)]), y, g.scalar_like(y)])
            sx = g.sh(x)
            wsh = g.sh(w)
            # weight gradient: contraction over batch and spatial
            dn = dict(ib=nd + 1, **{'if': 0}, isp=list(range(1, nd + 1)), ki=0, ko=nd + 1,
                      ksp=list(range(1, nd + 1)), ob=nd, of=nd + 1)
            win = [dict(size=o[0], stride=1, lo=o[1], hi=o[2], wdil=s) for o in outs]
            dw = g.conv(x, dy, wsh, dn, win, dt='f32', lay=desc(nd + 2))
            self.cands.append(dw)
            wp = g.param(wsh, 'f32')
            upd = g.ew('subtract', wp, g.ew('multiply', dw, g.scalar_like(dw)))
            self.outs.append(upd)
            # data gradient
            if self.rng.random() < 0.6:
                dn2 = dict(ib=0, **{'if': nd + 1}, isp=list(range(1, nd + 1)), ki=nd + 1, ko=nd,
                           ksp=list(range(nd)), ob=0, of=nd + 1)
                win2 = [dict(size=k, stride=1, lo=k - 1 - o[1], hi=k - 1 - o[2] + (s - 1), bdil=s, rev=True)
                        for o in outs]
                wc = w if g.dt(w) == g.dt(dy) else g.convert(w, g.dt(dy))
                dx = g.conv(dy, wc, sx, dn2, win2, lay=g.lay(x))
                self.cands.append(dx)
                self.outs.append(g.reduce(g.convert(dx, 'f32') if g.dt(dx) != 'f32' else dx,
                                          list(range(1, nd + 2))))


def build_cnn(g, rng, target, ncand, nd, train):
    net = CNN(g, rng, nd=nd, train=train)
    lite = target < 220
    net.bn = rng.random() < (0.25 if lite else 0.8)
    net.bmin = rng.random() < 0.6
    dt = 'bf16' if rng.random() < 0.6 else 'f32'
    net.wdt = 'f32' if rng.random() < 0.5 else dt
    g.begin('main')
    if nd == 2:
        N = int(rng.choice([8, 16, 32, 64, 128]))
        H = int(rng.choice([32, 64, 112, 128, 224]))
        sp = (H, H)
    else:
        N = int(rng.choice([1, 2, 4]))
        H = int(rng.choice([32, 48, 64, 96]))
        sp = (H, H, H)
    Cin = int(rng.choice([1, 3, 4])) if nd == 3 else 3
    x = g.param((N,) + sp + (Cin,), 'f32', lay=net.act_lay(nd + 2, N))
    if dt != 'f32':
        x = g.convert(x, dt)
    C = int(rng.choice([16, 32, 64])) if nd == 2 else int(rng.choice([8, 16, 32]))
    ks = 7 if (nd == 2 and rng.random() < 0.5) else 3
    x = net.conv_layer(x, C, k=ks, s=2 if (nd == 2 and H >= 112) else 1)
    if nd == 2 and rng.random() < 0.6:
        x = net.pool(x, 3, 2)
    skips = []
    stage = 0
    depthwise = nd == 2 and rng.random() < 0.3
    while len(g.nodes) < target * 0.8 or len(net.cands) < ncand:
        if len(g.nodes) > target * 1.2:
            break
        nb = 1 if lite else int(rng.integers(1, 4))
        for _ in range(nb):
            if len(g.nodes) > target * 0.8 and len(net.cands) >= ncand:
                break
            h = x
            if depthwise:
                h = net.conv_layer(h, C * 2, k=1)
                h = net.conv_layer(h, C * 2, k=3, groups=C * 2)
                h = net.conv_layer(h, C, k=1, relu=False)
            elif lite:
                h = net.conv_layer(h, C, k=3, relu=False)
            else:
                h = net.conv_layer(h, C, k=3)
                h = net.conv_layer(h, C, k=3, relu=False)
            x = g.ew('maximum', g.ew('add', x, h), g.scalar_like(x))
        spn = g.sh(x)[1]
        if len(g.nodes) > target * 0.8 and len(net.cands) >= ncand:
            break
        if spn >= 8 and stage < 5:
            skips.append(x)
            if rng.random() < 0.5:
                x = net.pool(x)
                x = net.conv_layer(x, min(C * 2, 1024), k=1)
            else:
                x = net.conv_layer(x, min(C * 2, 1024), k=3, s=2)
            C = min(C * 2, 1024)
            stage += 1
        elif nd == 3 and skips:
            sk = skips.pop()
            x = net.upsample(x, g.sh(sk)[-1])
            x = g.add('concatenate', g.sh(x)[:-1] + (g.sh(x)[-1] + g.sh(sk)[-1],), g.dt(x), [x, sk],
                      g.lay(x), dims=[nd + 1])
            C = g.sh(sk)[-1]
            x = net.conv_layer(x, C, k=3)
        else:
            x = net.conv_layer(x, C, k=3)
    # head
    r = nd + 2
    xf = g.convert(x, 'f32') if g.dt(x) != 'f32' else x
    pooled = g.reduce(xf, list(range(1, nd + 1)))
    pooled = g.ew('multiply', pooled, g.scalar_like(pooled))
    classes = int(rng.choice([10, 100, 1000]))
    wfc = g.param((g.sh(pooled)[1], classes), 'f32')
    logits = g.dot(pooled, wfc)
    net.cands.append(logits)
    logits = g.ew('add', logits, g.bcast(g.param((classes,), 'f32'), (N, classes), [1], like=logits))
    mx = g.reduce(logits, [1], 'maximum')
    e = g.ew('exponential', g.ew('subtract', logits, g.bcast(mx, (N, classes), [0], like=logits)))
    s = g.reduce(e, [1])
    prob = g.ew('divide', e, g.bcast(s, (N, classes), [0], like=e))
    outs = [prob]
    if train:
        loss = g.reduce(g.ew('log', prob), [0, 1])
        outs.append(loss)
        net.backward(2 if lite else max(2, len(net.grads)))
        outs += net.outs
    root = g.tuple_(outs) if len(outs) > 1 else outs[0]
    g.root(root)
    return net.cands


def build_rnn(g, rng, target, ncand):
    """LSTM in a while loop + dense head (xla collection)."""
    dt = 'bf16' if rng.random() < 0.5 else 'f32'
    B = int(rng.choice([8, 16, 32, 64, 128]))
    E = int(rng.choice([128, 256, 512]))
    H = int(rng.choice([256, 512, 1024]))
    T = int(rng.choice([16, 32, 64]))
    cands = []
    # body
    body = g.begin('body')
    tshapes = [((), 's32'), ((B, H), dt), ((B, H), dt), ((T, B, E), dt), ((T, B, H), dt),
               ((E, 4 * H), dt), ((H, 4 * H), dt), ((4 * H,), dt)]
    p = g.add('parameter', (), 'tuple', (), param=0, tuple_size=len(tshapes))
    gte = [g.add('get-tuple-element', s, d, [p]) for s, d in tshapes]
    i, h, c, xs, out, wx, wh, bb = gte
    nlayers = 1 + int(rng.integers(0, 2))
    zero = g.const('s32')
    xt = g.add('dynamic-slice', (1, B, E), dt, [xs, i, zero, zero], dss=[1, B, E])
    xt2 = g.reshape(xt, (B, E))
    cands.append(xt2)
    for _ in range(nlayers):
        gx = g.dot(xt2, wx)
        gh = g.dot(h, wh)
        cands += [gx, gh]
        z = g.ew('add', g.ew('add', gx, gh), g.bcast(bb, (B, 4 * H), [1], like=gx))
        gates = []
        for k in range(4):
            gates.append(g.add('slice', (B, H), dt, [z], slice=[(0, 1, B), (k * H, 1, (k + 1) * H)]))
        ig = g.ew('logistic', gates[0])
        fg = g.ew('logistic', gates[1])
        gg = g.ew('tanh', gates[2])
        og = g.ew('logistic', gates[3])
        c = g.ew('add', g.ew('multiply', fg, c), g.ew('multiply', ig, gg))
        h = g.ew('multiply', og, g.ew('tanh', c))
    h3 = g.reshape(h, (1, B, H))
    cands.append(h3)
    out2 = g.add('dynamic-update-slice', (T, B, H), dt, [out, h3, i, zero, zero])
    i2 = g.ew('add', i, g.const('s32'))
    broot = g.tuple_([i2, h, c, xs, out2, wx, wh, bb])
    g.root(broot)
    cond = g.begin('cond')
    pc = g.add('parameter', (), 'tuple', (), param=0, tuple_size=len(tshapes))
    ic = g.add('get-tuple-element', (), 's32', [pc])
    lt = g.add('compare', (), 'pred', [ic, g.const('s32')])
    g.root(lt)
    g.begin('main')
    ids = g.param((B, T), 's32')
    table = g.param((int(rng.choice([5000, 20000, 32000])), E), dt)
    emb = g.add('gather', (B, T, E), dt, [table, ids])
    embt = g.transpose(emb, [1, 0, 2])
    cands.append(embt)
    init = g.tuple_([g.const('s32'), g.param((B, H), dt), g.param((B, H), dt), embt,
                     g.param((T, B, H), dt), g.param((E, 4 * H), dt), g.param((H, 4 * H), dt),
                     g.param((4 * H,), dt)])
    wl = g.add('while', (), 'tuple', [broot, lt, init], tuple_size=len(tshapes))
    seq = g.add('get-tuple-element', (T, B, H), dt, [wl])
    x = g.transpose(seq, [1, 0, 2])
    cands.append(x)
    outs = []
    while len(g.nodes) < target or len(cands) < ncand:
        if len(g.nodes) > target * 1.3:
            break
        x2 = g.reshape(x, (B * T, H))
        cands.append(x2)
        w = g.param((H, H), dt)
        y = g.dot(x2, w)
        cands.append(y)
        y = g.ew('tanh', g.ew('add', y, g.bcast(g.param((H,), dt), (B * T, H), [1], like=y)))
        y3 = g.reshape(y, (B, T, H))
        cands.append(y3)
        x = g.ew('add', x, y3)
        if rng.random() < 0.4:
            xf = g.convert(x, 'f32') if dt != 'f32' else x
            m = g.reduce(xf, [2])
            outs.append(m)
    xf = g.convert(x, 'f32') if dt != 'f32' else x
    outs.append(g.reduce(xf, [1]))
    root = g.tuple_(outs)
    g.root(root)
    return cands


def build_transformer(g, rng, target, ncand, family, train):
    dt = 'bf16' if rng.random() < 0.65 else 'f32'
    B = int(rng.choice([1, 2, 4, 8, 16, 32]))
    S = int(rng.choice([64, 128, 256, 384, 512]))
    H = int(rng.choice([256, 384, 512, 768, 1024]))
    dh = 64
    nh = H // dh
    F = 4 * H
    V = int(rng.choice([8000, 30522, 32000, 50257]))
    cands = []
    grads = []
    g.begin('main')

    lite = target < 220

    def layernorm(x):
        xf = g.convert(x, 'f32') if g.dt(x) != 'f32' else x
        shp = g.sh(xf)
        if lite:
            m = g.reduce(xf, [2])
            d = g.ew('subtract', xf, g.bcast(m, shp, [0, 1], like=xf))
            y = g.ew('multiply', d, g.bcast(g.param((H,), 'f32'), shp, [2], like=d))
            return g.convert(y, dt) if dt != 'f32' else y
        m = g.reduce(xf, [2])
        m = g.ew('multiply', m, g.scalar_like(m))
        d = g.ew('subtract', xf, g.bcast(m, shp, [0, 1], like=xf))
        v = g.reduce(g.ew('multiply', d, d), [2])
        v = g.ew('rsqrt', g.ew('add', g.ew('multiply', v, g.scalar_like(v)), g.scalar_like(v)))
        y = g.ew('multiply', d, g.bcast(v, shp, [0, 1], like=xf))
        y = g.ew('multiply', y, g.bcast(g.param((H,), 'f32'), shp, [2], like=y))
        y = g.ew('add', y, g.bcast(g.param((H,), 'f32'), shp, [2], like=y))
        return g.convert(y, dt) if dt != 'f32' else y

    def dense(x2, n_out, act=None):
        w = g.param((g.sh(x2)[1], n_out), dt)
        y = g.dot(x2, w)
        cands.append(y)
        if train and rng.random() < 0.35:
            grads.append((x2, y))
        y = g.ew('add', y, g.bcast(g.param((n_out,), dt), g.sh(y), [1], like=y))
        if act == 'gelu':
            y3 = g.ew('multiply', g.ew('multiply', y, y), y)
            inner = g.ew('add', y, g.ew('multiply', y3, g.scalar_like(y)))
            t = g.ew('tanh', g.ew('multiply', inner, g.scalar_like(y)))
            y = g.ew('multiply', g.ew('multiply', y, g.scalar_like(y)), g.ew('add', t, g.scalar_like(t)))
        elif act == 'relu':
            y = g.ew('maximum', y, g.scalar_like(y))
        return y

    def heads(x2):
        y = dense(x2, H)
        y4 = g.reshape(y, (B, S, nh, dh))
        cands.append(y4)
        return y4

    ids = g.param((B, S), 's32')
    table = g.param((V, H), dt)
    x = g.add('gather', (B, S, H), dt, [table, ids])
    pos = g.param((S, H), dt)
    x = g.ew('add', x, g.bcast(pos, (B, S, H), [1, 2], like=x))
    causal = family in ('gpt', 't5dec')
    while len(g.nodes) < target * 0.85 or len(cands) < ncand:
        if len(g.nodes) > target * 1.2:
            break
        if lite and rng.random() < 0.5:
            h2 = g.reshape(layernorm(x), (B * S, H))
            cands.append(h2)
            f2 = dense(dense(h2, F, 'relu'), H)
            f3 = g.reshape(f2, (B, S, H))
            cands.append(f3)
            x = g.ew('add', x, f3)
            continue
        h = layernorm(x)
        h2 = g.reshape(h, (B * S, H))
        cands.append(h2)
        q = g.transpose(heads(h2), [0, 2, 1, 3])
        k = g.transpose(heads(h2), [0, 2, 3, 1])
        v = g.transpose(heads(h2), [0, 2, 1, 3])
        cands += [q, k, v]
        s = g.dot(q, k)
        cands.append(s)
        sf = g.convert(s, 'f32') if dt != 'f32' else s
        sf = g.ew('multiply', sf, g.scalar_like(sf))
        shp = g.sh(sf)
        if causal:
            io = g.add('iota', shp, 's32', [], g.lay(sf), dims=[2])
            io2 = g.add('iota', shp, 's32', [], g.lay(sf), dims=[3])
            msk = g.add('compare', shp, 'pred', [io, io2])
            sf = g.add('select', shp, 'f32', [msk, sf, g.scalar_like(sf)])
        mx = g.reduce(sf, [3], 'maximum')
        e = g.ew('exponential', g.ew('subtract', sf, g.bcast(mx, shp, [0, 1, 2], like=sf)))
        sm = g.reduce(e, [3])
        p = g.ew('divide', e, g.bcast(sm, shp, [0, 1, 2], like=e))
        if dt != 'f32':
            p = g.convert(p, dt)
        ctx = g.dot(p, v)
        cands.append(ctx)
        ct = g.transpose(ctx, [0, 2, 1, 3])
        cands.append(ct)
        c2 = g.reshape(ct, (B * S, H))
        cands.append(c2)
        o = dense(c2, H)
        o3 = g.reshape(o, (B, S, H))
        cands.append(o3)
        x = g.ew('add', x, o3)
        if lite:
            continue
        h = layernorm(x)
        h2 = g.reshape(h, (B * S, H))
        cands.append(h2)
        f1 = dense(h2, F, 'gelu' if family != 't5' else 'relu')
        f2 = dense(f1, H)
        f3 = g.reshape(f2, (B, S, H))
        cands.append(f3)
        x = g.ew('add', x, f3)
    h = layernorm(x)
    outs = []
    if rng.random() < 0.5:
        h2 = g.reshape(h, (B * S, H))
        cands.append(h2)
        logits = g.dot(h2, g.transpose(table, [1, 0]))
        cands.append(logits)
        lf = g.convert(logits, 'f32') if dt != 'f32' else logits
        outs.append(g.reduce(lf, [1], 'maximum'))
    else:
        first = g.add('slice', (B, 1, H), dt, [h], slice=[(0, 1, B), (0, 1, 1), (0, 1, H)])
        f2 = g.reshape(first, (B, H))
        cands.append(f2)
        pooled = g.ew('tanh', dense(f2, H))
        outs.append(g.dot(pooled, g.param((H, int(rng.choice([2, 3, 1000]))), dt)))
        cands.append(outs[-1])
    if train:
        for (x2, y) in grads:
            dy = g.ew('multiply', y, g.scalar_like(y))
            xt = g.transpose(x2, [1, 0])
            cands.append(xt)
            dw = g.dot(xt, dy)
            cands.append(dw)
            wp = g.param(g.sh(dw), dt)
            outs.append(g.ew('subtract', wp, g.ew('multiply', dw, g.scalar_like(dw))))
    root = g.tuple_(outs) if len(outs) > 1 else outs[0]
    g.root(root)
    return cands


# ---------------------------------------------------------------------------------------
# layout configs
# ---------------------------------------------------------------------------------------
def _blk(perm, partial=False):
    b = [-1] * 6
    src = list(perm[:2]) if partial else list(perm)
    for k, d in enumerate(src):
        b[k] = int(d)
    return b


def _neighbor(perm, rng):
    r = len(perm)
    p = list(perm)
    if r < 2:
        return p
    kind = rng.integers(0, 5)
    if kind == 0:
        p[0], p[1] = p[1], p[0]
    elif kind == 1:
        x = int(rng.choice(p[1:]))
        p = [x] + [d for d in p if d != x]
    elif kind == 2 and r >= 3:
        k = int(rng.integers(2, r))
        p[1], p[k] = p[k], p[1]
    elif kind == 3:
        p = list(desc(r))
    else:
        x = int(rng.choice(p[1:]))
        p = [p[0], x] + [d for d in p[1:] if d != x]
    return p


def make_layout_configs(nf, opc, ei, ids, search, c, rng):
    P = Parsed(nf, opc, ei)
    nc = len(ids)
    fields = []   # per node: list of (slot, rank, default perm)
    for u in ids:
        u = int(u)
        lst = [(0, int(P.rank[u]), P.perm(u))]
        if P.ops[u]:
            v = P.ops[u][0]
            lst.append((1, int(P.rank[v]), P.perm(v)))
        if P.op[u] == 26 and len(P.ops[u]) >= 2:
            v = P.ops[u][1]
            lst.append((2, int(P.rank[v]), P.perm(v)))
        fields.append(lst)
    base = np.full((nc, 18), -1, np.int64)
    explicit = rng.random() < 0.5
    for j, lst in enumerate(fields):
        for (slot, r, dp) in lst:
            if r < 1:
                continue
            if slot == 0 and (explicit or rng.random() < 0.3):
                base[j, 0:6] = _blk(dp, partial=rng.random() < 0.5)
            elif slot > 0 and rng.random() < 0.25:
                base[j, 6 * slot:6 * slot + 6] = _blk(dp, partial=rng.random() < 0.5)
    out = np.empty((c, nc, 18), np.float32)
    if search == 'default':
        pool = []
        nuniq = max(3, int(c * rng.uniform(0.25, 0.7)))
        for _ in range(nuniq):
            cfg = base.copy()
            k = int(rng.geometric(0.5))
            for j in rng.choice(nc, size=min(k, nc), replace=False):
                lst = [f for f in fields[j] if f[1] >= 2]
                if not lst:
                    continue
                w = np.array([0.6 if f[0] == 0 else (0.3 if f[0] == 1 else 0.1) for f in lst])
                slot, r, dp = lst[int(rng.choice(len(lst), p=w / w.sum()))]
                nb = _neighbor(dp, rng)
                cfg[j, 6 * slot:6 * slot + 6] = _blk(nb, partial=rng.random() < 0.4)
            pool.append(cfg)
        pool[0] = base.copy()
        pick = rng.integers(0, len(pool), size=c)
        # favour a few popular patterns
        hot = rng.random(c) < 0.2
        pick = np.where(hot, rng.integers(0, min(4, len(pool)), size=c), pick)
        out[:] = np.stack(pool).astype(np.float32)[pick]
    else:
        out[:] = base[None].astype(np.float32)
        frac = rng.uniform(0.2, 1.0, size=c)
        for j in range(nc):
            changed = rng.random(c) < frac
            for (slot, r, dp) in fields[j]:
                if r < 1:
                    continue
                x = rng.random(c)
                perms = rng.permuted(np.tile(np.arange(r), (c, 1)), axis=1)
                blk = np.full((c, 6), -1, np.int64)
                blk[:, :r] = perms
                part = (x >= 0.15) & (x < 0.55) & (r >= 2)
                blk[part, 2:] = -1
                blk[x < 0.15] = -1
                sel = changed
                out[sel, j, 6 * slot:6 * slot + 6] = blk[sel]
    return out


# ---------------------------------------------------------------------------------------
# tile kernels
# ---------------------------------------------------------------------------------------
NICE = [8, 12, 16, 24, 28, 32, 48, 56, 64, 96, 112, 128, 192, 224, 256, 384, 512, 768, 1024]


def build_tile_kernel(rng, target):
    """Returns arrays + info of one fused kernel graph."""
    g = GB(rng)
    kind = rng.choice(['conv', 'dot', 'loop'], p=[0.4, 0.3, 0.3])
    g.begin('fused')
    dt = 'bf16' if rng.random() < 0.6 else 'f32'
    inner_params = []

    def P_(shape, d, lay=None):
        i = g.param(shape, d, lay)
        inner_params.append(i)
        return i

    if kind == 'conv':
        N = int(rng.choice([8, 16, 32, 64, 128]))
        Hs = int(rng.choice([7, 12, 14, 16, 28, 32, 56]))
        Cin = int(rng.choice([64, 96, 128, 192, 256, 384, 512]))
        Cout = int(rng.choice([64, 128, 192, 256, 384, 512, 768]))
        k = int(rng.choice([1, 3, 3, 5]))
        lay = (3, 0, 2, 1) if rng.random() < 0.6 else (3, 2, 1, 0)
        x = P_((N, Hs, Hs, Cin), dt, lay)
        w = P_((k, k, Cin, Cout), 'f32' if rng.random() < 0.4 else dt, (3, 2, 1, 0))
        if g.dt(w) != dt:
            w = g.convert(w, dt)
        outs = [conv_out(Hs, k, 1)] * 2
        oshape = (N, Hs, Hs, Cout)
        dn = dict(ib=0, **{'if': 3}, isp=[1, 2], ki=2, ko=3, ksp=[0, 1], ob=0, of=3)
        win = [dict(size=k, stride=1, lo=o[1], hi=o[2]) for o in outs]
        y = g.conv(x, w, oshape, dn, win, dt='f32', lay=lay, fgc=1)
        b = P_((Cout,), 'f32')
        y = g.ew('add', y, g.bcast(b, oshape, [3], like=y))
    elif kind == 'dot':
        M = int(rng.choice([128, 256, 512, 1024, 2048, 4096]))
        K = int(rng.choice([256, 512, 768, 1024, 2048, 4096]))
        Nn = int(rng.choice([256, 512, 768, 1024, 3072, 4096]))
        if rng.random() < 0.35:
            Bt = int(rng.choice([2, 4, 8, 16]))
            M = max(64, M // Bt)
            a = P_((Bt, M, K), dt, (2, 1, 0))
            bmat = P_((Bt, K, Nn), dt, (2, 1, 0))
        else:
            a = P_((M, K), dt, (1, 0))
            bmat = P_((K, Nn), dt, (1, 0))
        y = g.dot(a, bmat, dt='f32')
        bias = P_((Nn,), 'f32')
        y = g.ew('add', y, g.bcast(bias, g.sh(y), [len(g.sh(y)) - 1], like=y))
    else:
        r = int(rng.choice([3, 4]))
        shp = tuple(int(rng.choice(NICE[:12])) for _ in range(r - 1)) + (int(rng.choice([128, 256, 384, 512, 768, 1024])),)
        lay = desc(r) if rng.random() < 0.6 else tuple([r - 1, 0] + list(range(r - 2, 0, -1)))
        y = P_(shp, dt, lay)
        if dt != 'f32':
            y = g.convert(y, 'f32')
    # epilogue
    ops = ['multiply', 'add', 'maximum', 'exponential', 'tanh', 'subtract', 'logistic', 'divide',
           'rsqrt', 'negate', 'minimum', 'abs']
    has_reduce = kind == 'loop' and rng.random() < 0.5
    extra_out = None
    while len(g.nodes) < target - 4:
        x = rng.random()
        if x < 0.35:
            y = g.ew(str(rng.choice(ops[:3] + ops[5:6] + ops[10:11])), y, g.scalar_like(y))
        elif x < 0.55:
            y = g.ew(str(rng.choice(ops)), y)
        elif x < 0.75:
            other = P_(g.sh(y), dt, g.lay(y))
            o2 = g.convert(other, g.dt(y)) if dt != g.dt(y) else other
            y = g.ew(str(rng.choice(['add', 'multiply', 'subtract', 'maximum'])), y, o2)
        elif x < 0.85:
            cmp = g.add('compare', g.sh(y), 'pred', [y, g.scalar_like(y)])
            y = g.add('select', g.sh(y), g.dt(y), [cmp, y, g.scalar_like(y)])
        elif has_reduce and x < 0.95:
            r = len(g.sh(y))
            m = g.reduce(y, [r - 1], 'maximum')
            y = g.ew('subtract', y, g.bcast(m, g.sh(y), list(range(r - 1)), like=y))
            y = g.ew('exponential', y)
            has_reduce = False
        else:
            c = g.const('f32')
            y = g.ew('multiply', y, g.bcast(c, g.sh(y), [], like=y))
    outv = g.convert(y, 'bf16') if (dt == 'bf16' and rng.random() < 0.7) else y
    if kind != 'loop' and rng.random() < 0.3:
        r = len(g.sh(y))
        extra_out = g.reduce(y, list(range(r - 1)))
        root = g.tuple_([outv, extra_out])
    else:
        root = outv
    g.root(root)
    # outer computation: parameters and the fusion instruction
    g.begin('main')
    outer = []
    for i in inner_params:
        outer.append(g.add('parameter', g.sh(i), g.dt(i), (), g.lay(i), param=len(outer)))
    fshape = g.sh(root)
    fdt = g.dt(root)
    fus = g.add('fusion', fshape, fdt, [root] + outer, g.lay(root) if fdt != 'tuple' else (),
                tuple_size=(2 if fdt == 'tuple' else 0))
    g.root(fus)
    nf, opc, ei, splits, _ = g.assemble()
    return nf, opc, ei, kind


MAX_STEPS = 3000


def tile_candidates(P, info, rng, c_target, c_min):
    out = info['out']
    r = int(P.rank[out])
    L = P.perm(out)
    un = _units(P, out)
    D = P.dims[out][:r]
    cand = []
    for p in range(r):
        d = L[r - 1 - p]
        U = int(math.ceil(D[d] / un[d]))
        vals = sorted(set([x for x in range(1, U + 1) if U % x == 0] +
                          [int(v) for v in rng.integers(1, U + 1, size=2)]))
        if len(vals) > 7:
            keep = set(vals[:2] + vals[-2:])
            keep |= set(int(v) for v in rng.choice(vals, size=4, replace=False))
            vals = sorted(keep)
        cand.append(vals)
    kcand = []
    if info['main'] is not None:
        pk = P.ops[info['main']][1]
        rk = int(P.rank[pk])
        Lk = P.perm(pk)
        unk = _units(P, pk)
        Dk = P.dims[pk][:rk]
        for p in range(rk):
            d = Lk[rk - 1 - p]
            U = int(math.ceil(Dk[d] / unk[d]))
            vals = sorted(set([x for x in range(1, U + 1) if U % x == 0] +
                              [int(v) for v in rng.integers(1, U + 1, size=1)]))
            if len(vals) > 5:
                vals = sorted(set(vals[-2:] + [int(v) for v in rng.choice(vals, size=3, replace=False)]))
            kcand.append(vals)
    space = int(np.prod([len(v) for v in cand + kcand]))
    rows = set()
    tries = 0
    want = min(c_target * 3, space)
    while len(rows) < want and tries < want * 20:
        tries += 1
        ob = tuple(int(rng.choice(v)) for v in cand)
        kb = tuple(int(rng.choice(v)) for v in kcand)
        rows.add((kb, ob))
    rows = sorted(rows)
    if rows:
        cf0 = np.zeros((len(rows), 24), np.int64)
        for i, (kb, ob) in enumerate(rows):
            cf0[i, 0:len(kb)] = kb
            cf0[i, 8:8 + len(ob)] = ob
        To = _tile_from_bounds(P, out, cf0[:, 8:8 + r])
        steps = np.prod(np.ceil(D[:r].astype(np.float64) / To), axis=1)
        if kcand:
            Tk = _tile_from_bounds(P, pk, cf0[:, 0:rk])
            steps = steps * np.prod(np.ceil(Dk[:rk].astype(np.float64) / Tk), axis=1)
        rows = [rw for rw, st in zip(rows, steps) if st <= MAX_STEPS]
    cf = np.zeros((len(rows), 24), np.float32)
    for i, (kb, ob) in enumerate(rows):
        if kb:
            cf[i, 0:len(kb)] = kb
            cf[i, 6] = sum(kb)
            cf[i, 7] = float(np.prod(kb))
        cf[i, 8:8 + len(ob)] = ob
        cf[i, 14] = sum(ob)
        cf[i, 15] = float(np.prod(ob))
    return cf


def compiler_default(arrays):
    """The compiler's pick: argmin of its crude cost model among tiles using <= 60% VMEM."""
    t, W = tile_eval(arrays, crude=True)
    t = np.where(W <= 0.6 * VMEM, t, t * 100.0)
    return int(np.argmin(t))


# =======================================================================================
# noise
# =======================================================================================
def layout_noise(y, rng):
    eps = 1.5e-4 * rng.standard_t(2.0, size=y.shape)
    eps = np.clip(eps, -0.05, 0.3)
    spike = rng.random(y.shape) < 0.012
    slow = 0.004 * (rng.pareto(1.4, size=y.shape) + 1.0)
    f = np.exp(eps) * np.where(spike, 1.0 + np.minimum(slow, 2.0), 1.0)
    return np.maximum(1, np.rint(y * f)).astype(np.int64)


def tile_noise(y, rng):
    eps = 0.012 * rng.standard_t(2.5, size=y.shape)
    eps = np.clip(eps, -0.3, 1.0)
    spike = rng.random(y.shape) < 0.02
    slow = 0.08 * (rng.pareto(1.3, size=y.shape) + 1.0)
    f = np.exp(eps) * np.where(spike, 1.0 + np.minimum(slow, 5.0), 1.0)
    return np.maximum(1, np.rint(y * f)).astype(np.int64)


# =======================================================================================
# dataset writer
# =======================================================================================
SCALES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120),
                  lay_cfg=(300, 3000), lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20),
                 lay_cfg=(30, 200), lay_test_cfg=(30, 60)),
}
SPLITS = ('train', 'valid', 'test')
TILE_MODELS = ['resnet50', 'resnet_v2_101', 'inception_v3', 'efficientnet_b0', 'bert_base',
               'mobilenet_v2', 'transformer_lm', 'unet_2d', 'vit_b16', 'mlp_mixer', 'dlrm',
               'retinanet', 'mask_rcnn', 'wide_deep', 'ncf']
XLA_MODELS = ['resnet50', 'resnet_v1_18', 'inception_v2', 'efficientnet', 'unet_3d',
              'mobilenet', 'mnasnet', 'lstm_ptb', 'gnmt_rnn', 'shufflenet', 'densenet', 'vgg']
NLP_MODELS = ['bert_base', 'bert_large', 'albert_en', 'electra_small', 'gpt2', 't5_small',
              'roberta', 'xlnet', 'bert_pretraining', 'mlperf_bert', 'talking_heads', 'small_bert']


def _hex(rng, nbytes):
    return ''.join('%02x' % int(b) for b in rng.integers(0, 256, size=nbytes))


def _fp(rng):
    v = int(rng.integers(1, 2 ** 63 - 1))
    s = '%x' % v
    return ('-' + s) if rng.random() < 0.5 else s


def _count(k, F):
    return max(1, int(round(k * F)))


def _save(root, rel, arrays):
    path = os.path.join(root, rel + '.npz')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrays)


def _save_noiseless(root, rel, y):
    path = os.path.join(root, 'noiseless', rel + '.npy')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.asarray(y, np.float64))


def _loguniform_int(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def sample_tile_graph(rng, S):
    for attempt in range(80):
        nn = int(rng.integers(S['tile_nodes'][0], S['tile_nodes'][1] + 1))
        nf, opc, ei, kind = build_tile_kernel(rng, nn)
        if not (S['tile_nodes'][0] <= len(opc) <= S['tile_nodes'][1]):
            continue
        P = Parsed(nf, opc, ei)
        info = tile_analyse(P)
        ct = _loguniform_int(rng, S['tile_cfg'][0], S['tile_cfg'][1])
        cf = tile_candidates(P, info, rng, ct, S['tile_cfg'][0])
        if len(cf) < S['tile_cfg'][0]:
            continue
        arr0 = dict(node_feat=nf, node_opcode=opc, edge_index=ei, config_feat=cf)
        _, W = tile_eval(arr0)
        cf = cf[W <= VMEM]
        if len(cf) < S['tile_cfg'][0]:
            continue
        arr0['config_feat'] = cf
        d0 = compiler_default(arr0)
        others = np.array([i for i in range(len(cf)) if i != d0], np.int64)
        sel = rng.choice(others, size=min(ct, len(cf)) - 1, replace=False)
        idx = np.concatenate([[d0], sel]).astype(np.int64)
        rng.shuffle(idx)
        cf = cf[idx]
        dpos = int(np.nonzero(idx == d0)[0][0])
        return nf, opc, ei, cf, dpos, kind
    raise RuntimeError('tile sampler failed')


def gen_tile(root, seed, S, F):
    used = set()
    for si, split in enumerate(SPLITS):
        cnt = _count(S['tile'][si], F)
        for gi in range(cnt):
            rng = np.random.default_rng(np.random.SeedSequence([seed, 1, si, gi]))
            nf, opc, ei, cf, dpos, kind = sample_tile_graph(rng, S)
            arrays = dict(node_feat=nf, node_opcode=opc, edge_index=ei, config_feat=cf)
            y = tile_noiseless(arrays)
            if split == 'test':
                rt = np.zeros(len(cf), np.int64)
                nm = np.ones(len(cf), np.int64)
                stem = _hex(rng, 16)
            else:
                nrng = np.random.default_rng(np.random.SeedSequence([seed, 11, si, gi]))
                rt = tile_noise(y, nrng)
                nz = np.exp(0.004 * np.clip(nrng.standard_t(3.0, size=len(cf)), -20, 20))
                nm = np.maximum(1, np.rint(y[dpos] * nz)).astype(np.int64)
                while True:
                    stem = '%s_%s_batch_%d_%s' % (rng.choice(TILE_MODELS), rng.choice(['train', 'inference']),
                                                  int(rng.choice([1, 8, 16, 32, 64, 128])), _fp(rng))
                    if stem not in used:
                        break
            used.add(stem)
            arrays.update(config_runtime=rt, config_runtime_normalizers=nm)
            rel = 'npz/tile/xla/%s/%s' % (split, stem)
            _save(root, rel, arrays)
            if split != 'test':
                _save_noiseless(root, rel, y)


def build_layout_graph(rng, source, S):
    lo, hi = S['lay_nodes']
    for attempt in range(40):
        target = _loguniform_int(rng, lo, hi)
        ncand = int(rng.integers(S['lay_nc'][0], S['lay_nc'][1] + 1))
        g = GB(rng)
        if source == 'xla':
            fam = rng.choice(['cnn2d', 'cnn2d', 'cnn3d', 'rnn'])
            train = rng.random() < 0.5
            if fam == 'rnn':
                cands = build_rnn(g, rng, target, ncand)
            else:
                cands = build_cnn(g, rng, target, ncand, 2 if fam == 'cnn2d' else 3, train)
            name_pool = XLA_MODELS
        else:
            fam = rng.choice(['bert', 'gpt', 't5', 'bert'])
            train = rng.random() < 0.5
            cands = build_transformer(g, rng, target, ncand, fam, train)
            name_pool = NLP_MODELS
        nf, opc, ei, splits, remap = g.assemble()
        n = len(opc)
        if not (lo <= n <= hi):
            continue
        cset = sorted(set(remap[c] for c in cands))
        P = Parsed(nf, opc, ei)
        cset = [u for u in cset if P.rank[u] >= 2 or (P.ops[u] and P.rank[P.ops[u][0]] >= 2)]
        if len(cset) < S['lay_nc'][0]:
            continue
        k = min(len(cset), ncand)
        ids = np.array(sorted(rng.choice(cset, size=k, replace=False)), np.int64)
        return nf, opc, ei, splits, ids, fam, train, name_pool
    raise RuntimeError('layout sampler failed')


def gen_layout(root, seed, S, F):
    for srci, source in enumerate(('xla', 'nlp')):
        used = set()
        for si, split in enumerate(SPLITS):
            cnt = _count(S['lay'][si], F)
            for gi in range(cnt):
                rng = np.random.default_rng(np.random.SeedSequence([seed, 2, srci, si, gi]))
                nf, opc, ei, splits, ids, fam, train, pool = build_layout_graph(rng, source, S)
                if split == 'test':
                    stem = _hex(rng, 16)
                else:
                    while True:
                        nm = str(rng.choice(pool))
                        if source == 'nlp':
                            stem = '%s_batch_size_%d_%s' % (nm, int(rng.choice([8, 16, 32, 64])),
                                                            'train' if train else 'test')
                            if rng.random() < 0.5:
                                stem = '%s.%dx%d.%s' % (nm, int(rng.choice([2, 4, 8])), int(rng.choice([2, 4, 8, 16])),
                                                        rng.choice(['fp16', 'fp32', 'bf16']))
                        else:
                            stem = '%s_batch_%d_%s' % (nm, int(rng.choice([8, 16, 32, 64, 128])),
                                                       'train' if train else 'inference')
                        stem = '%s_%s' % (stem, _fp(rng)[:9])
                        if stem not in used:
                            break
                used.add(stem)
                for sj, search in enumerate(('default', 'random')):
                    crng = np.random.default_rng(np.random.SeedSequence([seed, 3, srci, si, gi, sj]))
                    if split == 'test':
                        c = int(crng.integers(S['lay_test_cfg'][0], S['lay_test_cfg'][1] + 1))
                    else:
                        c = _loguniform_int(crng, S['lay_cfg'][0], S['lay_cfg'][1])
                    ncf = make_layout_configs(nf, opc, ei, ids, search, c, crng)
                    arrays = dict(node_feat=nf, node_opcode=opc, edge_index=ei, node_config_ids=ids,
                                  node_config_feat=ncf, node_splits=splits)
                    rel = 'npz/layout/%s/%s/%s/%s' % (source, search, split, stem)
                    if split == 'test':
                        arrays['config_runtime'] = np.zeros(c, np.int64)
                    else:
                        y = layout_noiseless(arrays)
                        nrng = np.random.default_rng(np.random.SeedSequence([seed, 13, srci, si, gi, sj]))
                        arrays['config_runtime'] = layout_noise(y, nrng)
                        _save_noiseless(root, rel, y)
                    _save(root, rel, arrays)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=['tiny', 'small'], default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    a = ap.parse_args(argv)
    S = SCALES[a.scale]
    t0 = time.time()
    gen_tile(a.out, a.seed, S, a.graphs_factor)
    gen_layout(a.out, a.seed, S, a.graphs_factor)
    print('wrote %s in %.1fs' % (a.out, time.time() - t0))


if __name__ == '__main__':
    main()
