#!/usr/bin/env python3
"""blind_17: a synthetic TpuGraphs-format dataset whose runtimes follow a hand-written TPU law.

Usage:  python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Everything below (graph sampler, config sampler, cost law, noise) was written from public
TPU/XLA knowledge and the public TpuGraphs format only.  Output is a pure function of
(seed, scale, graphs-factor).

=====================================================================================
THE LAW  (the noise-free runtime is computed from the arrays stored in the file only)
=====================================================================================
Hardware model ("one TPU core"): HBM 700 B/ns, MXU 60 Tflop/s bf16 (f32 at 1/3 rate),
arrays stored in (sublane x lane) tiles: 128 lanes on the physical minor dim, 8 (32-bit),
16 (16-bit) or 32 (8-bit) sublanes on the second-minor dim.  Padded bytes of a tensor under
a layout = product of its dims with the minor dim rounded up to 128 and the second-minor
dim rounded up to the sublane count.  VMEM 16 MiB.

LAYOUT collections --------------------------------------------------------------------
1. Physical layout of every node.
   * configurable node: its output block (partial blocks are completed with the remaining
     dims in the order of the node's default layout; all -1 = the default layout).
   * "follower" ops (elementwise ops, convert, select, slice, pad, concatenate, reverse...)
     inherit the layout of their dominant operand (largest same-rank operand that is not a
     broadcast/constant/iota/scalar, lowest id on ties), so a layout choice propagates
     forward through elementwise chains.
   * everything else (parameters, gte, reduces, broadcasts, windows, collectives, ...) has
     its default layout (node_feat 134-139).
2. Expected operand layouts (edge u <- v):
   * configurable consumer: operand 0 (conv input / dot lhs / reshape / transpose input)
     expects the input block, conv operand 1 (kernel) expects the kernel block; an all -1
     block means "adopt whatever the producer has" (no conflict).  Other operands adopt.
   * follower consumer: same-rank, non-flexible operands are expected in the follower's
     own (inherited) layout.
   * reduce / broadcast / gte / bitcast consumers adopt anything (cost depends on layout).
   * every other consumer (tuple = program/loop outputs, while, all-reduce, gather,
     scatter, window ops, sort, custom-call, non-configured conv/dot/reshape/transpose)
     insists on the producer's default layout.
   A conflict costs a relayout of the tensor. Severity sev: 0.2 if the two minor dims are
   kept (whole tiles move), 0.55 if only the minor dim is kept, 1.0 if the minor dim changes.
   * follower consumer: the transposed read is fused into its loop: 0.25*sev*B_src/BW.
   * rigid consumer, producer is a follower with a single consumer: the relayout is fused
     into the producer's fusion: f*sev*(B_src+B_dst)/2/BW, with f = 0.3, but 0.6 when the
     producer's own dominant operand (two hops away) is a conv/dot (MXU output fusion must
     transpose its result tiles) and 0.45 when it is a parameter / gte (strided HBM reads).
   * otherwise a real copy kernel: c(sev)*(B_src+B_dst)/BW + 900 ns, c = 0.6/0.8/1.0, and
     its destination buffer is live at the consumer (counts for the memory peak).
3. Node costs:
   * conv: roofline max(t_mxu, t_mem) + 0.2*min + 500 ns.  t_mxu = flops/(peak*eff),
     eff = a_in*a_out*a_k*fill.  a_in (input layout): feature dim minor 1.0 (0.93 if the
     batch dim is not second-minor), feature second-minor 0.75, else 0.5.  a_out (output
     layout): out-feature minor 1.0 (0.95 if batch not second), second 0.8, else 0.55.
     a_k (kernel layout): (minor,second) = (out-feat, in-feat) 1.0, (in, out) 0.9, one of
     them minor 0.7, else 0.45.  fill = sqrt(Cin/pad128(Cin) * Cout/pad128(Cout)).
     t_mem = padded bytes of input (in its effective layout), kernel and output / BW.
   * dot: same structure with lhs (K minor 1.0 / K second 0.8 / else 0.5), rhs
     ((N,K) as (minor,second) 1.0, (K,N) 0.9, one minor 0.65, else 0.45), output (N minor
     1.0 / second 0.8 / else 0.55); fill = sqrt(K/pad128(K) * N/pad128(N) * min(1,M/8)).
   * reshape: free (bitcast) iff both the effective input layout and the output layout
     are row-major once size-1 dims are ignored; else sev*(B_in+B_out)/BW + 500 ns with
     sev 0.6 if the physical minor dims have the same size, else 1.0; x0.35 and no launch
     when its only consumer is a follower (fused into the consumer's loop).
   * transpose (dims perm p): free iff p[L_out[i]] == L_in[i] for all i; else like the
     reshape copy with sev 1.0 if the minor dim changes, else 0.45.
   * follower: 0.15*B/BW, plus B/BW + 250 ns when its output is materialized (more than
     one consumer, or a consumer that is not a follower).
   * reduce: B_in/BW*(1 + 0.8*[a reduced dim is the input's physical minor]
     + 0.25*[... second-minor]) + B_out/BW + 250 ns.
   * broadcast 0.1*B/BW; reduce-window/select-and-scatter windowed reads; all-reduce
     2B/(80 B/ns)+4us; gather/scatter/sort/custom-call 2B/BW + 500 ns; others 0.
   * nodes of a while-loop body segment (node_splits segment whose root feeds a while)
     count 8 times (8 trips).
4. Memory: buffers live from their producer to their last consumer (entry parameters from
   the start, program outputs to the end), sizes = padded bytes under the chosen layout,
   fused followers hold no buffer, real copies add their destination buffer.  The peak over
   the schedule (node order) is compared with a budget = 1.08 x the peak of the all-default
   configuration; the excess costs 4*excess/BW (spilling).
5. total = sum of costs + spill + 100 us + 40 ns * n.

TILE collection ------------------------------------------------------------------------
The kernel is the last node (a fusion).  output_bounds[i] = tile extent along logical
output dim i (elements); kernel_bounds = per-spatial window chunk, Cin chunk, Cout tile
(conv) or K chunk, N tile (dot).  Grid G = prod ceil(D_i/t_i).  Tile extents are padded to
128 on the output's physical minor dim and to the sublane count on the second-minor dim
(layout from node_feat 134-139), so ragged tiles and tiles that are not multiples of the
native (sublane x lane) tile waste work.  DMA efficiency min(1, 0.35+0.65*t_minor*esz/512).
* loop fusions: G*(padded tile bytes of every full-size operand + output)/(BW*dma_eff),
  VPU time G*tile*n_ops/2000 per ns; small (broadcast) operands are read once.
* copy/transpose fusions: like loop, plus the read side uses the input's minor extent for
  its DMA efficiency, plus an XLU transpose cost when the minor dim changes.
* reduce fusions: each step reads tile x reduced extent; cross-lane reduction (reduced dim
  is the input's minor) costs 2x VPU.
* dot / conv fusions: implicit GEMM.  M tile = product of the non-feature output tiles, N
  tile = feature tile, K chunk = window chunk x Cin chunk.  Activations are re-read once
  per N tile (conv: times a halo factor), weights are re-read once per M tile unless the
  whole K extent fits in one chunk (then they stay resident: reuse of the smaller operand).
  MXU time G*2*pad8(M)*pad128(N)*pad128(K chunk)/peak plus a weight-load cost per step.
* every kernel: total = max(compute, dma) + 0.2*min + G*120 ns + 1.2 us launch, times
  (1 + 2*(ws/VMEM - 1)) when the double-buffered working set ws exceeds VMEM.

SAMPLERS ------------------------------------------------------------------------------
Graphs: own HLO-like builder (post-order node ids, edges [consumer, producer], dedup'd and
sorted like upstream's encoder; reducer computations first, an optional while loop
(cond + body segments recorded in node_splits), then the entry computation ending in a
root tuple).  xla: ResNet/Inception-like 2-D CNNs (TPU-style [3,0,2,1] or row-major
activation layouts), 3-D U-Net-like CNNs (rank 5), some transformers; nlp: BERT-like
encoders (reshape/transpose around batched dots, softmax, layer norm, GELU).  Training
graphs get a generated backward pass (grad-input convs with reversed kernels, weight-grad
convs + transposes, transposed dots, select-and-scatter, scatter for embeddings),
optional all-reduces and an SGD update.  Configurable nodes: a random subset of the
conv/dot/reshape/transpose nodes.  random search: per config a touch rate, random
permutations (often only the two minor dims fixed), input/kernel blocks often -1, some
configs share one permutation across nodes.  default search: mostly all -1, a few nodes
per config set to nearby alternatives (explicit default, minor-two swap, partial default,
major reorder) that do not inflate the padded size by more than 30%.
Tile kernels: conv / dot / loop / reduce / copy fusions with an epilogue of elementwise
ops; configs sampled around realistic tile volumes; the default config is a heuristic
(aligned minor tile, 2 sublane tiles, grow major dims under a budget), placed at a random
index; configs slower than 25x the default are dropped (the autotuner rejects them).

NOISE (stored config_runtime only): multiplicative log-normal (sigma 0.005 layout, 0.025
tile) for every config; in each graph a fraction f ~ U(0, 0.12) (drawn per graph) of the
configs is additionally slowed by 1.07 (60%) or 1.30 (40%) ("slow compiler path").
The tile normalizer is a separate noisy measurement of the default config.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

# ----------------------------------------------------------------------------- opcodes
ABS, ADD, ALLREDUCE, BITCAST, BCONVERT, BROADCAST, CLAMP, COMPARE, CONCAT = 1, 2, 5, 11, 12, 13, 17, 20, 22
CONSTANT, CONVERT, CONV, COPY, CUSTOMCALL, DIVIDE, DOT, DSLICE, DUS = 24, 25, 26, 27, 31, 32, 34, 35, 36
EXP, FUSION, GATHER, GTE, IOTA, LOG, AND, NOT, OR = 37, 41, 42, 45, 48, 50, 52, 53, 54
MAXIMUM, MINIMUM, MUL, NEG, PAD, PARAM, POWER, REDUCE, REDUCEWINDOW = 57, 58, 59, 60, 62, 63, 66, 70, 72
RESHAPE, REVERSE, RNG, RSQRT, SCATTER, SELECT, SELSCATTER, SLICE, SORT = 75, 76, 77, 81, 82, 83, 84, 92, 93
SQRT, SUB, TANH, TRANSPOSE, TUPLE, WHILE, LOGISTIC = 94, 95, 96, 98, 100, 102, 107

ELEMENTWISE = {1, 2, 7, 12, 15, 17, 19, 20, 25, 30, 32, 37, 38, 40, 49, 50, 51, 52, 53, 54, 55, 57, 58,
               59, 60, 65, 66, 71, 73, 80, 81, 83, 87, 88, 89, 90, 91, 94, 95, 96, 103, 107, 118, 119, 120}
FOLLOW = ELEMENTWISE | {SLICE, PAD, CONCAT, DSLICE, REVERSE}
FLEXIBLE = {BROADCAST, CONSTANT, IOTA, RNG}
ADAPTIVE = {REDUCE, BROADCAST, GTE, BITCAST}
CONFIGURABLE = {CONV, DOT, RESHAPE, TRANSPOSE}

# primitive type index (TpuGraphs one-hot order, columns 2..20)
DT = {'pred': 1, 's8': 2, 's32': 4, 'u32': 8, 'f16': 10, 'f32': 11, 'bf16': 13, 'tuple': 16}
ESZ = np.array([0, 1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, 8, 16, 0, 0, 0], dtype=np.int64)

# ----------------------------------------------------------------------------- constants
BW = 700.0              # HBM bytes per ns
PEAK_BF16 = 60000.0     # flop per ns
PEAK_F32 = 20000.0
ICI_BW = 80.0
OP_OVH = 500.0
COPY_OVH = 900.0
LOOP_TRIPS = 8.0
BUDGET_FRAC = 1.08
SPILL_COEF = 4.0
VMEM = 16 * 2 ** 20
STEP_OVH = 120.0
LAUNCH = 1200.0
VPU_RATE = 2000.0       # elements per ns
XLU_RATE = 1000.0
SIG_LAYOUT = 0.005
SIG_TILE = 0.025
SLOW_FACTORS = (1.07, 1.30)
SLOW_P = (0.6, 0.4)
SLOW_FRAC_MAX = 0.12


def c128(x):
    return np.ceil(np.asarray(x, dtype=np.float64) / 128.0) * 128.0


def sublane(esz):
    return {1: 32, 2: 16}.get(int(esz), 8)


def cround(x, m):
    return np.ceil(np.asarray(x, dtype=np.float64) / m) * m


# ============================================================================ graph builder
class GB:
    """A tiny HLO-like graph builder (nodes are created in post-order / topological order)."""

    def __init__(self):
        self.op, self.shape, self.dt, self.ins, self.lay, self.root, self.at = [], [], [], [], [], [], []
        self.nparam = 0
        self.cse = {}

    def new_computation(self):
        self.nparam = 0
        self.cse = {}

    def __len__(self):
        return len(self.op)

    def add(self, op, shape, dt, ins=(), lay=None, **at):
        shape = tuple(int(x) for x in shape)
        if lay is None:
            lay = tuple(range(len(shape) - 1, -1, -1))
        assert len(lay) == len(shape), (op, shape, lay)
        self.op.append(int(op)); self.shape.append(shape); self.dt.append(dt)
        self.ins.append(list(dict.fromkeys(int(i) for i in ins))); self.lay.append(tuple(int(x) for x in lay))
        self.root.append(0); self.at.append(at)
        return len(self.op) - 1

    def size(self, i):
        return int(np.prod(self.shape[i])) if self.shape[i] else 1

    def flex(self, i):
        return self.op[i] in FLEXIBLE or len(self.shape[i]) == 0

    def dominant(self, ins, rank):
        c = [x for x in ins if not self.flex(x) and len(self.shape[x]) == rank]
        if not c:
            return None
        return sorted(c, key=lambda x: (-self.size(x), x))[0]

    # ---- helpers
    def param(self, shape, dt, lay=None):
        i = self.add(PARAM, shape, dt, (), lay, param=self.nparam)
        self.nparam += 1
        return i

    def const(self, dt='f32', fresh=False):
        key = ('c', dt)
        if fresh or key not in self.cse:
            self.cse[key] = self.add(CONSTANT, (), dt)
        return self.cse[key]

    def bcast(self, x, shape, dims, lay=None):
        return self.add(BROADCAST, shape, self.dt[x], [x], lay, dims=list(dims))

    def sb(self, like, dt=None):
        """scalar constant broadcast to the shape/layout of node `like`."""
        dt = dt or self.dt[like]
        key = ('b', dt, self.shape[like], self.lay[like])
        if key not in self.cse:
            c = self.const(dt)
            self.cse[key] = self.bcast(c, self.shape[like], [], self.lay[like])
        return self.cse[key]

    def ew(self, op, *xs, dt=None):
        rank = max(len(self.shape[x]) for x in xs)
        d = self.dominant(xs, rank)
        if d is None:
            d = [x for x in xs if len(self.shape[x]) == rank][0]
        return self.add(op, self.shape[d], dt or self.dt[d], xs, self.lay[d])

    def convert(self, x, dt):
        return self.add(CONVERT, self.shape[x], dt, [x], self.lay[x])

    def reduce(self, x, dims, red_root, dt=None):
        dims = sorted(dims)
        shp = [d for i, d in enumerate(self.shape[x]) if i not in dims]
        keep = [i for i in range(len(self.shape[x])) if i not in dims]
        remap = {d: j for j, d in enumerate(keep)}
        lay = [remap[d] for d in self.lay[x] if d in remap]
        init = self.const(dt or self.dt[x])
        return self.add(REDUCE, shp, dt or self.dt[x], [red_root, x, init], lay, dims=dims)

    def reshape(self, x, shape, lay=None):
        return self.add(RESHAPE, shape, self.dt[x], [x], lay)

    def transpose(self, x, perm):
        shp = [self.shape[x][p] for p in perm]
        pinv = np.argsort(perm)
        lay = [int(pinv[d]) for d in self.lay[x]]
        return self.add(TRANSPOSE, shp, self.dt[x], [x], lay, dims=list(perm))

    def dot(self, a, b, lay=None, dt=None):
        sa, sbb = self.shape[a], self.shape[b]
        assert sa[-1] == sbb[-2] and sa[:-2] == sbb[:-2], (sa, sbb)
        shp = tuple(sa[:-1]) + (sbb[-1],)
        return self.add(DOT, shp, dt or self.dt[a], [a, b], lay)

    def conv(self, x, w, dn, window, out_shape, lay, dt=None):
        return self.add(CONV, out_shape, dt or self.dt[x], [x, w], lay, dn=dn, window=window, fgc=1, bgc=1)

    def tuple_(self, xs):
        return self.add(TUPLE, (), 'tuple', xs, tuple_size=len(xs))


def seqf(vals, lead, zero_prod_empty=False):
    vals = [float(v) for v in vals]
    out = [0.0] * lead
    for i, v in enumerate(vals[:lead]):
        out[i] = v
    p = 1.0
    for v in vals:
        p *= v
    if not vals and zero_prod_empty:
        p = 0.0
    return out + [float(sum(vals)), p]


def node_features(g):
    n = len(g)
    F = np.zeros((n, 140), dtype=np.float32)
    for i in range(n):
        at = g.at[i]
        row = [float(g.root[i]), 0.0]
        oh = [0.0] * 19
        oh[DT[g.dt[i]]] = 1.0
        row += oh
        row += seqf(g.shape[i], 6)
        row.append(float(at.get('tuple_size', 0)))
        row.append(float(at.get('param', 0)))
        dims = list(at.get('dims', []))[:6]
        row += [float(d) for d in dims] + [0.0] * (6 - len(dims))
        win = at.get('window')
        if win:
            for key in ('size', 'stride', 'pad_lo', 'pad_hi', 'wdil', 'bdil'):
                row += seqf([w[key] for w in win], 6)
            rev = [bool(w.get('rev', False)) for w in win]
            row += [1.0 if b else 0.0 for b in rev[:6]] + [0.0] * (6 - min(6, len(rev)))
            row += [float(sum(rev)), float(len(rev) - sum(rev))]
        else:
            for _ in range(6):
                row += seqf([], 6)
            row += [0.0] * 8
        dn = at.get('dn')
        if dn:
            isp = list(dn['isp'])[:4]
            ksp = list(dn['ksp'])[:4]
            row += [dn['ib'], dn['if']] + isp + [0] * (4 - len(isp)) + [dn['kin'], dn['kout']] + ksp + \
                [0] * (4 - len(ksp)) + [dn['ob'], dn['of']]
        else:
            row += [0.0] * 14
        row.append(float(at.get('fgc', 0)))
        row.append(float(at.get('bgc', 0)))
        sl = at.get('slice')
        if sl:
            row += seqf(sl[0], 2) + seqf(sl[1], 2) + seqf(sl[2], 2)
        else:
            row += seqf([], 2) * 3
        row += seqf(at.get('dsizes', []), 2)
        pc = at.get('padcfg')
        if pc:
            row += seqf(pc[0], 2) + seqf(pc[1], 2)
        else:
            row += seqf([], 2) * 2
        row.append(float(at.get('stable', 0)))
        lay = list(g.lay[i])[:6]
        row += [float(x) for x in lay] + [0.0] * (6 - len(lay))
        assert len(row) == 140, len(row)
        F[i] = row
    return F


def edges_of(g):
    e = set()
    for u in range(len(g)):
        for v in g.ins[u]:
            assert v < u
            e.add((u, v))
    if not e:
        return np.zeros((0, 2), dtype=np.int64)
    return np.array(sorted(e), dtype=np.int64)


# ============================================================================ model families
def make_reducer(g, op, dt='f32'):
    g.new_computation()
    a = g.param((), dt)
    b = g.param((), dt)
    r = g.add(op, (), dt, [a, b])
    g.root[r] = 1
    return r


def add_while(g, B, H, dt):
    """cond + body computations of a small recurrent loop. returns (cond_root, body_root, end_cond)."""
    g.new_computation()
    p = g.add(PARAM, (), 'tuple', (), param=0, tuple_size=3)
    i = g.add(GTE, (), 's32', [p])
    c = g.const('s32', fresh=True)
    cr = g.add(COMPARE, (), 'pred', [i, c])
    g.root[cr] = 1
    end_cond = len(g)
    g.new_computation()
    p = g.add(PARAM, (), 'tuple', (), param=0, tuple_size=3)
    gi = g.add(GTE, (), 's32', [p])
    gh = g.add(GTE, (B, H), dt, [p])
    gw = g.add(GTE, (H, H), dt, [p])
    d = g.dot(gh, gw)
    t = g.ew(TANH, d)
    h2 = g.ew(ADD, t, gh)
    one = g.const('s32', fresh=True)
    i2 = g.ew(ADD, gi, one)
    br = g.tuple_([i2, h2, gw])
    g.root[br] = 1
    return cr, br, end_cond


class Autodiff:
    def __init__(self, g, red_add, red_max):
        self.g, self.ra, self.rm = g, red_add, red_max

    def run(self, loss, weights):
        g = self.g
        nf = len(g)
        wset = set(weights)
        dep = np.zeros(nf, dtype=bool)
        fl = {'f32', 'bf16', 'f16'}
        for i in range(nf):
            if i in wset:
                dep[i] = True
            elif g.dt[i] in fl and any(dep[x] for x in g.ins[i]) and g.op[i] not in (TUPLE, WHILE):
                dep[i] = True
        grads = {loss: [g.const(g.dt[loss])]}
        wgrad = {}
        for y in range(nf - 1, -1, -1):
            if y not in grads or not dep[y]:
                continue
            parts = grads.pop(y)
            gy = parts[0]
            for p in parts[1:]:
                gy = g.ew(ADD, gy, p)
            if y in wset:
                wgrad[y] = gy
                continue
            for x, gx in self.rule(y, gy, dep):
                grads.setdefault(x, []).append(gx)
        return wgrad

    def zeros(self, like):
        return self.g.sb(like)

    def rule(self, y, gy, dep):
        g = self.g
        op, ins = g.op[y], g.ins[y]
        out = []
        need = [x for x in ins if dep[x]]
        if not need:
            return out
        if op == ADD:
            for x in need:
                if g.shape[x] == g.shape[y]:
                    out.append((x, gy))
        elif op == SUB:
            a, b = ins[0], ins[1]
            if dep[a]:
                out.append((a, gy))
            if dep[b]:
                out.append((b, g.ew(NEG, gy)))
        elif op == MUL:
            a = ins[0]
            b = ins[1] if len(ins) > 1 else ins[0]
            if dep[a]:
                out.append((a, g.ew(MUL, gy, b)))
            if dep[b] and b != a:
                out.append((b, g.ew(MUL, gy, a)))
        elif op == DIVIDE:
            a, b = ins[0], ins[1]
            q = g.ew(DIVIDE, gy, b)
            if dep[a]:
                out.append((a, q))
            if dep[b]:
                out.append((b, g.ew(NEG, g.ew(MUL, q, y))))
        elif op == MAXIMUM:
            a = ins[0]
            z = self.zeros(a)
            cmp = g.ew(COMPARE, a, z, dt='pred')
            z2 = self.zeros(y)
            if dep[a]:
                out.append((a, g.ew(SELECT, cmp, gy, z2)))
        elif op == SELECT:
            p = ins[0]
            for j, x in enumerate(ins[1:3]):
                if dep[x]:
                    z = self.zeros(y)
                    out.append((x, g.ew(SELECT, p, gy, z) if j == 0 else g.ew(SELECT, p, z, gy)))
        elif op == EXP:
            out.append((ins[0], g.ew(MUL, gy, y)))
        elif op == TANH:
            d = g.ew(SUB, self.zeros(y), g.ew(MUL, y, y))
            out.append((ins[0], g.ew(MUL, gy, d)))
        elif op == RSQRT:
            y3 = g.ew(MUL, y, g.ew(MUL, y, y))
            out.append((ins[0], g.ew(MUL, g.ew(MUL, gy, y3), self.zeros(y))))
        elif op in (LOG, SQRT):
            out.append((ins[0], g.ew(DIVIDE, gy, ins[0] if op == LOG else y)))
        elif op == LOGISTIC:
            d = g.ew(MUL, y, g.ew(SUB, self.zeros(y), y))
            out.append((ins[0], g.ew(MUL, gy, d)))
        elif op == NEG:
            out.append((ins[0], g.ew(NEG, gy)))
        elif op == CONVERT:
            out.append((ins[0], g.convert(gy, g.dt[ins[0]])))
        elif op == BROADCAST:
            a = ins[0]
            if g.op[a] != CONSTANT and g.shape[a]:
                dims = g.at[y]['dims']
                red = [i for i in range(len(g.shape[y])) if i not in dims]
                out.append((a, g.reduce(gy, red, self.ra)))
        elif op == REDUCE:
            x = max([i for i in ins if g.shape[i]], key=lambda i: len(g.shape[i]))
            red = g.at[y]['dims']
            kept = [i for i in range(len(g.shape[x])) if i not in red]
            b = g.bcast(gy, g.shape[x], kept, g.lay[x])
            if ins[0] == self.rm:
                yb = g.bcast(y, g.shape[x], kept, g.lay[x])
                cmp = g.ew(COMPARE, x, yb, dt='pred')
                b = g.ew(SELECT, cmp, b, self.zeros(x))
            out.append((x, b))
        elif op == RESHAPE:
            x = ins[0]
            out.append((x, g.reshape(gy, g.shape[x], g.lay[x])))
        elif op == TRANSPOSE:
            perm = g.at[y]['dims']
            out.append((ins[0], g.transpose(gy, list(np.argsort(perm)))))
        elif op == DOT:
            a, b = ins[0], ins[1]
            r = len(g.shape[y])
            sw = list(range(r - 2)) + [r - 1, r - 2]
            if dep[a]:
                bt = g.transpose(b, sw)
                out.append((a, g.dot(gy, bt, dt=g.dt[a])))
            if dep[b]:
                at_ = g.transpose(a, sw)
                out.append((b, g.dot(at_, gy, dt=g.dt[b])))
        elif op == CONV:
            x, w = ins[0], ins[1]
            dn, win = g.at[y]['dn'], g.at[y]['window']
            r = len(g.shape[y])
            nsp = r - 2
            if dep[x]:
                wr = g.add(REVERSE, g.shape[w], g.dt[w], [w], g.lay[w], dims=list(dn['ksp']))
                win2 = [dict(size=wd['size'], stride=1, pad_lo=wd['size'] - 1 - wd['pad_lo'],
                             pad_hi=wd['size'] - 1 - wd['pad_hi'], wdil=1, bdil=wd['stride']) for wd in win]
                dn2 = dict(ib=dn['ob'], isp=list(range(1, r - 1)), kin=dn['kout'], kout=dn['kin'],
                           ksp=list(dn['ksp']), ob=dn['ib'], of=dn['if'])
                dn2['if'] = dn['of']
                out.append((x, g.conv(gy, wr, dn2, win2, g.shape[x], g.lay[x])))
            if dep[w]:
                win3 = [dict(size=g.shape[gy][1 + j], stride=1, pad_lo=win[j]['pad_lo'], pad_hi=win[j]['pad_hi'],
                             wdil=win[j]['stride'], bdil=1) for j in range(nsp)]
                dn3 = dict(ib=r - 1, isp=list(range(1, r - 1)), kin=0, kout=r - 1,
                           ksp=list(range(1, r - 1)), ob=0, of=r - 1)
                dn3['if'] = 0
                shp = (g.shape[x][r - 1],) + tuple(g.shape[w][:nsp]) + (g.shape[w][r - 1],)
                gw = g.conv(x, gy, dn3, win3, shp, tuple(range(r - 1, -1, -1)), dt=g.dt[w])
                perm = list(range(1, nsp + 1)) + [0, r - 1]
                out.append((w, g.transpose(gw, perm)))
        elif op == REDUCEWINDOW:
            x = max([i for i in ins if g.shape[i]], key=lambda i: len(g.shape[i]))
            init = g.const(g.dt[x])
            out.append((x, g.add(SELSCATTER, g.shape[x], g.dt[x], [x, gy, init], g.lay[x],
                                 window=g.at[y]['window'])))
        elif op == GATHER:
            t = ins[0]
            if dep[t]:
                z = self.zeros(t)
                out.append((t, g.add(SCATTER, g.shape[t], g.dt[t], [z, ins[1], gy], g.lay[t])))
        return out


def optimizer_tail(g, wgrad, allreduce):
    outs = []
    for w, gw in sorted(wgrad.items()):
        if allreduce:
            gw = g.add(ALLREDUCE, g.shape[gw], g.dt[gw], [gw], g.lay[gw])
        lr = g.sb(w)
        upd = g.ew(MUL, gw, lr)
        outs.append(g.ew(SUB, w, upd))
    return outs


def softmax_xent(g, logits, rng, red_add, red_max):
    N, K = g.shape[logits]
    m = g.reduce(logits, [1], red_max)
    mb = g.bcast(m, (N, K), [0], g.lay[logits])
    s = g.ew(SUB, logits, mb)
    e = g.ew(EXP, s)
    z = g.reduce(e, [1], red_add)
    lz = g.ew(LOG, z)
    lzb = g.bcast(lz, (N, K), [0], g.lay[logits])
    lp = g.ew(SUB, s, lzb)
    lab = g.param((N, K), 'f32')
    t = g.ew(MUL, lp, lab)
    tot = g.reduce(t, [0, 1], red_add)
    return g.ew(NEG, tot)


def build_cnn(rng, target, nsp, training, tpu_style, with_while):
    g = GB()
    ra = make_reducer(g, ADD)
    rm = make_reducer(g, MAXIMUM)
    splits = [0]
    loop = None
    r = nsp + 2
    if nsp == 2:
        N = int(rng.choice([8, 16, 32, 64, 128, 256]))
        S = int(rng.choice([32, 56, 64, 112, 128, 224, 299]))
        C0 = int(rng.choice([16, 32, 64]))
        cin0 = 3
    else:
        N = int(rng.choice([1, 2, 4, 8]))
        S = int(rng.choice([16, 24, 32, 48, 64, 96, 128]))
        C0 = int(rng.choice([8, 16, 32]))
        cin0 = int(rng.choice([1, 2, 4]))
    act_dt = 'bf16' if rng.random() < 0.8 else 'f32'
    if with_while:
        Hh = int(rng.choice([128, 256, 512]))
        cr, br, endc = add_while(g, N, Hh, act_dt)
        splits += [endc, len(g)]
        loop = (cr, br, Hh)
    g.new_computation()
    main_start = len(g)
    act_lay = (tuple([r - 1, 0] + list(range(r - 2, 0, -1))) if tpu_style else tuple(range(r - 1, -1, -1)))
    weights = []
    x = g.param((N,) + (S,) * nsp + (cin0,), 'f32', act_lay)
    x = g.convert(x, act_dt)

    def conv_layer(x, cout, k, stride):
        cin = g.shape[x][-1]
        w = g.param((k,) * nsp + (cin, cout), 'f32')
        weights.append(w)
        wb = g.convert(w, act_dt) if act_dt != 'f32' else w
        sp_in = g.shape[x][1:1 + nsp]
        sp_out = [int(math.ceil(s / stride)) for s in sp_in]
        pad = (k - 1) // 2
        win = [dict(size=k, stride=stride, pad_lo=pad, pad_hi=k - 1 - pad, wdil=1, bdil=1) for _ in range(nsp)]
        dn = dict(ib=0, isp=list(range(1, r - 1)), kin=nsp, kout=nsp + 1, ksp=list(range(nsp)), ob=0, of=r - 1)
        dn['if'] = r - 1
        return g.conv(x, wb, dn, win, (g.shape[x][0],) + tuple(sp_out) + (cout,), act_lay)

    def bn(y, stats):
        C = g.shape[y][-1]
        if stats and training:
            yf = g.convert(y, 'f32') if act_dt != 'f32' else y
            m = g.reduce(yf, list(range(r - 1)), ra)
            m = g.ew(MUL, m, g.sb(m))
            mb = g.bcast(m, g.shape[y], [r - 1], g.lay[y])
            d = g.ew(SUB, yf, mb)
            y = g.convert(d, act_dt) if act_dt != 'f32' else d
        sc = g.param((C,), 'f32')
        weights.append(sc)
        scb = g.bcast(g.convert(sc, act_dt) if act_dt != 'f32' else sc, g.shape[y], [r - 1], g.lay[y])
        y = g.ew(MUL, y, scb)
        bi = g.param((C,), 'f32')
        weights.append(bi)
        bib = g.bcast(g.convert(bi, act_dt) if act_dt != 'f32' else bi, g.shape[y], [r - 1], g.lay[y])
        return g.ew(ADD, y, bib)

    def relu(y):
        return g.ew(MAXIMUM, y, g.sb(y))

    stats = rng.random() < 0.6
    fwd_target = target * (0.36 if training else 0.9)
    y = relu(bn(conv_layer(x, C0, 7 if nsp == 2 else 3, 2), stats))
    if nsp == 2 and rng.random() < 0.7:
        sp = [int(math.ceil(s / 2)) for s in g.shape[y][1:1 + nsp]]
        win = [dict(size=1, stride=1, pad_lo=0, pad_hi=0, wdil=1, bdil=1)] + \
              [dict(size=3, stride=2, pad_lo=1, pad_hi=1, wdil=1, bdil=1) for _ in range(nsp)] + \
              [dict(size=1, stride=1, pad_lo=0, pad_hi=0, wdil=1, bdil=1)]
        init = g.const(act_dt)
        y = g.add(REDUCEWINDOW, (g.shape[y][0],) + tuple(sp) + (g.shape[y][-1],), act_dt, [rm, y, init],
                  g.lay[y], window=win)
    C = C0
    stage = 0
    bottleneck = rng.random() < 0.4
    while len(g) < fwd_target:
        nblocks = int(rng.integers(1, 4))
        for b in range(nblocks):
            stride = 2 if (b == 0 and stage > 0 and min(g.shape[y][1:1 + nsp]) > 4) else 1
            cout = C
            if bottleneck:
                h = relu(bn(conv_layer(y, max(8, cout // 4), 1, 1), stats))
                h = relu(bn(conv_layer(h, max(8, cout // 4), 3, stride), stats))
                h = bn(conv_layer(h, cout, 1, 1), stats)
            else:
                h = relu(bn(conv_layer(y, cout, 3, stride), stats))
                h = bn(conv_layer(h, cout, 3, 1), stats)
            if stride != 1 or g.shape[y][-1] != cout:
                sc = bn(conv_layer(y, cout, 1, stride), False)
            else:
                sc = y
            y = relu(g.ew(ADD, h, sc))
            if len(g) >= fwd_target:
                break
        stage += 1
        C = min(C * 2, 1024)
    # head
    Cf = g.shape[y][-1]
    if rng.random() < 0.35 and int(np.prod(g.shape[y][1:])) <= 65536:
        flat = g.reshape(y, (N, int(np.prod(g.shape[y][1:]))))
        feat = g.convert(flat, 'f32') if act_dt != 'f32' else flat
    else:
        yf = g.convert(y, 'f32') if act_dt != 'f32' else y
        feat = g.reduce(yf, list(range(1, r - 1)), ra)
        feat = g.ew(MUL, feat, g.sb(feat))
    K = int(rng.choice([10, 100, 1000]))
    wfc = g.param((g.shape[feat][1], K), 'f32')
    weights.append(wfc)
    logits = g.dot(feat, wfc)
    bfc = g.param((K,), 'f32')
    weights.append(bfc)
    logits = g.ew(ADD, logits, g.bcast(bfc, (N, K), [1]))
    extra = []
    if loop is not None:
        cr, br, Hh = loop
        h0 = g.convert(g.param((N, Hh), 'f32'), act_dt)
        W0 = g.convert(g.param((Hh, Hh), 'f32'), act_dt)
        init = g.tuple_([g.const('s32'), h0, W0])
        wl = g.add(WHILE, (), 'tuple', [init, cr, br], tuple_size=3)
        extra.append(g.add(GTE, (N, Hh), act_dt, [wl]))
    if training:
        loss = softmax_xent(g, logits, rng, ra, rm)
        wgrad = Autodiff(g, ra, rm).run(loss, weights)
        outs = optimizer_tail(g, wgrad, rng.random() < 0.7)
        rt = g.tuple_([loss] + outs + extra)
    else:
        rt = g.tuple_([logits] + extra)
    g.root[rt] = 1
    splits.append(len(g))
    return g, splits, main_start


def build_transformer(rng, target, training, with_while, nlp):
    g = GB()
    ra = make_reducer(g, ADD)
    rm = make_reducer(g, MAXIMUM)
    splits = [0]
    loop = None
    B = int(rng.choice([2, 4, 8, 16, 32, 64]))
    S = int(rng.choice([128, 128, 256, 384, 512]))
    H = int(rng.choice([128, 256, 384, 512, 768, 1024]))
    nh = int(rng.choice([h for h in (2, 4, 8, 12, 16) if H % h == 0 and H // h >= 16]))
    dh = H // nh
    FF = H * int(rng.choice([2, 4]))
    V = int(rng.choice([1000, 8000, 30522]))
    act_dt = 'bf16' if rng.random() < 0.75 else 'f32'
    if with_while:
        cr, br, endc = add_while(g, B, H, act_dt)
        splits += [endc, len(g)]
        loop = (cr, br)
    g.new_computation()
    main_start = len(g)
    weights = []

    def cv(x, dt):
        return g.convert(x, dt) if g.dt[x] != dt else x

    use_bias = rng.random() < 0.8

    def dense(x2, out):
        w = g.param((g.shape[x2][1], out), 'f32')
        weights.append(w)
        y = g.dot(x2, cv(w, act_dt))
        if not use_bias:
            return y
        b = g.param((out,), 'f32')
        weights.append(b)
        return g.ew(ADD, y, g.bcast(cv(b, act_dt), g.shape[y], [1], g.lay[y]))

    def ln(x):
        xf = cv(x, 'f32')
        shp = g.shape[xf]
        m = g.reduce(xf, [2], ra)
        m = g.ew(MUL, m, g.sb(m))
        d = g.ew(SUB, xf, g.bcast(m, shp, [0, 1], g.lay[xf]))
        v = g.reduce(g.ew(MUL, d, d), [2], ra)
        v = g.ew(ADD, g.ew(MUL, v, g.sb(v)), g.sb(v))
        rs = g.ew(RSQRT, v)
        y = g.ew(MUL, d, g.bcast(rs, shp, [0, 1], g.lay[xf]))
        ga = g.param((H,), 'f32')
        be = g.param((H,), 'f32')
        weights.extend([ga, be])
        y = g.ew(MUL, y, g.bcast(ga, shp, [2], g.lay[xf]))
        y = g.ew(ADD, y, g.bcast(be, shp, [2], g.lay[xf]))
        return cv(y, act_dt)

    ids = g.param((B, S), 's32')
    table = g.param((V, H), 'f32')
    weights.append(table)
    x = g.add(GATHER, (B, S, H), 'f32', [table, ids])
    pos = g.param((S, H), 'f32')
    weights.append(pos)
    x = g.ew(ADD, x, g.bcast(pos, (B, S, H), [1, 2]))
    x = cv(x, act_dt)
    fwd_target = target * (0.38 if training else 0.92)
    mask = g.param((B, S), 'f32')
    pre_ln = rng.random() < 0.5
    compact = target < 320
    use_mask = rng.random() < 0.7
    dropout = float(rng.choice([0.0, 0.5, 1.0]))
    act = str(rng.choice(['gelu', 'gelu', 'relu', 'sigmoid']))
    first = True
    while first or len(g) < fwd_target:
        first = False
        h = ln(x) if (pre_ln and not compact) else x
        h2 = g.reshape(h, (B * S, H))
        q = g.transpose(g.reshape(dense(h2, H), (B, S, nh, dh)), [0, 2, 1, 3])
        k = g.transpose(g.reshape(dense(h2, H), (B, S, nh, dh)), [0, 2, 3, 1])
        v = g.transpose(g.reshape(dense(h2, H), (B, S, nh, dh)), [0, 2, 1, 3])
        s = g.dot(q, k)
        s = g.ew(MUL, s, g.sb(s))
        if not compact and use_mask:
            s = g.ew(ADD, s, g.bcast(cv(mask, act_dt), g.shape[s], [0, 3], g.lay[s]))
        m = g.reduce(s, [3], rm)
        e = g.ew(EXP, g.ew(SUB, s, g.bcast(m, g.shape[s], [0, 1, 2], g.lay[s])))
        z = g.reduce(e, [3], ra)
        p = g.ew(DIVIDE, e, g.bcast(z, g.shape[s], [0, 1, 2], g.lay[s]))
        if training and rng.random() < dropout:
            rn = g.add(RNG, g.shape[p], 'f32', [g.const('f32'), g.const('f32', fresh=True)], g.lay[p])
            keep = g.ew(COMPARE, rn, g.sb(p, 'f32'), dt='pred')
            p = g.ew(SELECT, keep, p, g.sb(p))
        c = g.dot(p, v)
        c = g.reshape(g.transpose(c, [0, 2, 1, 3]), (B * S, H))
        o = g.reshape(dense(c, H), (B, S, H))
        x = g.ew(ADD, x, o)
        if not pre_ln and not compact:
            x = ln(x)
        h = ln(x) if (pre_ln and not compact) else x
        f = dense(g.reshape(h, (B * S, H)), FF)
        if compact or act == 'relu':
            f = g.ew(MAXIMUM, f, g.sb(f))
        elif act == 'sigmoid':
            f = g.ew(MUL, f, g.ew(LOGISTIC, g.ew(MUL, f, g.sb(f))))
        else:
            f3 = g.ew(MUL, f, g.ew(MUL, f, f))
            t = g.ew(TANH, g.ew(MUL, g.ew(ADD, f, g.ew(MUL, f3, g.sb(f3))), g.sb(f)))
            f = g.ew(MUL, f, g.ew(MUL, g.ew(ADD, t, g.sb(t)), g.sb(t)))
        f = g.reshape(dense(f, H), (B, S, H))
        x = g.ew(ADD, x, f)
        if not pre_ln and not compact:
            x = ln(x)
    K = int(rng.choice([2, 3, 16, 128]))
    xf = cv(x, 'f32')
    pooled = g.reduce(xf, [1], ra)
    wfc = g.param((H, K), 'f32')
    weights.append(wfc)
    logits = g.dot(pooled, wfc)
    extra = []
    if loop is not None:
        cr, br = loop
        h0 = g.convert(g.param((B, H), 'f32'), act_dt)
        W0 = g.convert(g.param((H, H), 'f32'), act_dt)
        init = g.tuple_([g.const('s32'), h0, W0])
        wl = g.add(WHILE, (), 'tuple', [init, cr, br], tuple_size=3)
        extra.append(g.add(GTE, (B, H), act_dt, [wl]))
    if training:
        loss = softmax_xent(g, logits, rng, ra, rm)
        wgrad = Autodiff(g, ra, rm).run(loss, weights)
        outs = optimizer_tail(g, wgrad, rng.random() < 0.6)
        rt = g.tuple_([loss] + outs + extra)
    else:
        rt = g.tuple_([logits] + extra)
    g.root[rt] = 1
    splits.append(len(g))
    return g, splits, main_start


XLA_NAMES = ['resnet50', 'resnet_v1_18', 'resnet_v2_101', 'inception_v3', 'efficientnet_b0', 'mobilenet_v2',
             'vgg16', 'retinanet', 'mask_rcnn', 'densenet121', 'shapemask', 'spinenet']
XLA3D_NAMES = ['unet_3d', 'vnet_3d', 'resnet3d_18', 'c3d']
XLA_TF_NAMES = ['transformer_tf2', 'bert_base_classifier', 'ncf_transformer', 'magenta_attention']
NLP_NAMES = ['bert_en_uncased_L-12_H-768_A-12', 'albert_en_base', 'electra_small_discriminator',
             'small_bert_bert_en_uncased_L-4_H-256_A-4', 'talking-heads_base', 'mobilebert_en_uncased',
             'experts_pubmed', 'bert_multi_cased_L-12_H-768_A-12', 'lambert_en_uncased_L-24_H-1024',
             'universal-sentence-encoder-cmlm', 'tn_bert', 'wiki_books_mnli']


def fingerprint(rng):
    v = int(rng.integers(0, 2 ** 63 - 1))
    s = format(v, 'x')
    return ('-' if rng.random() < 0.5 else '') + s


def sample_layout_graph(rng, source, nlo, nhi, nclo, nchi):
    """returns (GB, splits, main_start, configurable ids, descriptive name)."""
    target = int(rng.integers(nlo, nhi + 1))
    for attempt in range(40):
        training = rng.random() < 0.65
        with_while = rng.random() < 0.3
        if source == 'xla':
            u = rng.random()
            if u < 0.55:
                g, splits, ms = build_cnn(rng, target, 2, training, rng.random() < 0.7, with_while)
                name = str(rng.choice(XLA_NAMES))
            elif u < 0.75:
                g, splits, ms = build_cnn(rng, target, 3, training, rng.random() < 0.6, with_while)
                name = str(rng.choice(XLA3D_NAMES))
            else:
                g, splits, ms = build_transformer(rng, target, training, with_while, False)
                name = str(rng.choice(XLA_TF_NAMES))
        else:
            g, splits, ms = build_transformer(rng, target, training and (target >= 250 or rng.random() < 0.25),
                                              with_while, True)
            name = str(rng.choice(NLP_NAMES))
        n = len(g)
        cands = [i for i in range(splits[1] if len(splits) > 2 else 0, n) if g.op[i] in CONFIGURABLE]
        cands = [i for i in cands if i >= 6]
        if n > nhi:
            target = int(target * 0.8 * nhi / n) + 1
            continue
        if n < nlo or len(cands) < nclo:
            target = int(target * 1.2) + 5
            continue
        nc = int(rng.integers(nclo, min(nchi, len(cands)) + 1))
        ids = np.sort(rng.choice(np.array(cands), size=nc, replace=False))
        tag = ('train' if training else 'inference')
        return g, splits, ms, ids, f"{name}_{tag}_{fingerprint(rng)}"
    raise RuntimeError('could not sample a layout graph in range')


# ============================================================================ layout configs
def _rand_perm_block(rng, C, r, partial_p):
    blk = -np.ones((C, 6), dtype=np.float32)
    if r == 0:
        return blk
    perm = np.argsort(rng.random((C, r)), axis=1)
    blk[:, :r] = perm
    if r >= 3:
        part = rng.random(C) < partial_p
        blk[np.ix_(part, np.arange(2, 6))] = -1
    return blk


def sample_layout_configs(rng, g, ids, C, search):
    nc = len(ids)
    ncf = -np.ones((C, nc, 18), dtype=np.float32)
    prods = [g.ins[v] for v in ids]
    if search == 'random':
        rate = rng.uniform(0.15, 0.95, size=C)
        shared = rng.random(C) < 0.35
        shared_perm = {r: np.argsort(rng.random((C, r)), axis=1) for r in range(1, 7)}
        for k, v in enumerate(ids):
            r = len(g.shape[v])
            touched = rng.random(C) < rate
            pp = 0.7 if r >= 4 else 0.45
            ob = _rand_perm_block(rng, C, r, pp)
            if r > 0:
                sh = shared & (rng.random(C) < 0.8)
                ob[sh, :r] = shared_perm[r][sh]
                if r >= 3:
                    part = sh & (rng.random(C) < pp)
                    ob[np.ix_(part, np.arange(2, 6))] = -1
            ops = [x for x in prods[k] if g.shape[x]]
            x0 = ops[0] if ops else None
            ib = -np.ones((C, 6), dtype=np.float32)
            if x0 is not None:
                ib = _rand_perm_block(rng, C, len(g.shape[x0]), pp)
                ib[rng.random(C) < 0.35] = -1
            kb = -np.ones((C, 6), dtype=np.float32)
            if g.op[v] == CONV and len(ops) > 1:
                kb = _rand_perm_block(rng, C, len(g.shape[ops[1]]), pp)
                kb[rng.random(C) < 0.3] = -1
            ncf[touched, k, 0:6] = ob[touched]
            ncf[touched, k, 6:12] = ib[touched]
            ncf[touched, k, 12:18] = kb[touched]
    else:
        # "default" search: start from the compiler default and try a few nearby alternatives
        q = rng.uniform(0.02, 0.3, size=C)
        for k, v in enumerate(ids):
            r = len(g.shape[v])
            ops = [x for x in prods[k] if g.shape[x]]
            cand = []   # list of (block_slot, values)

            def alts(node):
                lay = list(g.lay[node])
                rr = len(lay)
                out = []
                if rr == 0:
                    return out
                out.append(lay)
                if rr >= 2:
                    out.append(lay[:2])
                    out.append([lay[1], lay[0]] + lay[2:])
                    if rr >= 3:
                        out.append([lay[0], lay[2], lay[1]] + lay[3:])
                        out.append([lay[2], lay[0]])
                        out.append(lay[:2] + list(reversed(lay[2:])))
                # the compiler's search does not try layouts that blow up the padded size
                tab = pad_table(g.shape[node], ESZ[DT[g.dt[node]]])
                ref = tab[lay[0], lay[1] if rr >= 2 else lay[0]]
                keep = []
                for a in out:
                    m_ = a[0]
                    s_ = a[1] if rr >= 2 else a[0]
                    if tab[m_, s_] <= 1.3 * ref:
                        keep.append(a)
                return keep
            for a in alts(v):
                cand.append((0, a))
            if ops:
                for a in alts(ops[0])[:4]:
                    cand.append((6, a))
            if g.op[v] == CONV and len(ops) > 1:
                for a in alts(ops[1])[:4]:
                    cand.append((12, a))
            if not cand:
                continue
            pick = rng.random(C) < q
            idx = np.nonzero(pick)[0]
            if len(idx) == 0:
                continue
            ch = rng.integers(0, len(cand), size=len(idx))
            ch2 = rng.integers(0, len(cand), size=len(idx))
            two = rng.random(len(idx)) < 0.3
            for j, c in enumerate(idx):
                for choice in ([ch[j], ch2[j]] if two[j] else [ch[j]]):
                    slot, vals = cand[choice]
                    ncf[c, k, slot:slot + 6] = -1
                    ncf[c, k, slot:slot + len(vals)] = vals
    return ncf


# ============================================================================ layout law
class Lay:
    __slots__ = ('perm', 'minor', 'second', 'code')

    def __init__(self, perm):
        perm = np.asarray(perm, dtype=np.int64)
        if perm.ndim == 1:
            perm = perm[None, :]
        self.perm = perm
        r = perm.shape[1]
        if r == 0:
            self.minor = np.zeros(perm.shape[0], dtype=np.int64)
            self.second = self.minor
            self.code = self.minor
        else:
            self.minor = perm[:, 0]
            self.second = perm[:, 1] if r >= 2 else perm[:, 0]
            self.code = (perm * (8 ** np.arange(r))).sum(1)


def complete_block(blk, r, default):
    """blk (C,6) float -> (perm (C,r), allneg (C,))"""
    C = blk.shape[0]
    if r == 0:
        return np.zeros((C, 0), dtype=np.int64), np.ones(C, dtype=bool)
    b = np.rint(blk[:, :r]).astype(np.int64)
    allneg = (b < 0).all(1)
    defpos = np.empty(r, dtype=np.int64)
    defpos[np.asarray(default, dtype=np.int64)] = np.arange(r)
    key = np.broadcast_to(10 + defpos, (C, r)).copy()
    rows = np.arange(C)
    for p in range(r):
        col = b[:, p]
        ok = (col >= 0) & (col < r)
        if ok.any():
            key[rows[ok], col[ok]] = p
    return np.argsort(key, axis=1, kind='stable'), allneg


def pad_table(d, esz):
    r = len(d)
    if r == 0:
        return np.array([[float(esz)]])
    if r == 1:
        return np.array([[float(c128(d[0])) * esz]])
    sub = sublane(esz)
    tot = float(np.prod(d))
    tab = np.zeros((r, r))
    for m in range(r):
        for s in range(r):
            if m == s:
                tab[m, s] = float(c128(d[m])) * tot / d[m] * esz
            else:
                tab[m, s] = tot / d[m] / d[s] * float(c128(d[m])) * float(cround(d[s], sub)) * esz
    return tab


def rowmajor_mask(perm, d):
    big = np.asarray(d) > 1
    mask = big[perm]
    k = int(mask[0].sum()) if perm.shape[0] else 0
    if k <= 1:
        return np.ones(perm.shape[0], dtype=bool)
    Q = perm[mask].reshape(perm.shape[0], k)
    return np.all(Q[:, :-1] > Q[:, 1:], axis=1)


class Parsed:
    def __init__(self, nf, opc, ei):
        n = len(opc)
        self.n = n
        self.op = opc.astype(np.int64)
        dims = np.rint(nf[:, 21:27]).astype(np.int64)
        self.rank = (dims > 0).sum(1)
        self.dims = [tuple(dims[i, :self.rank[i]]) for i in range(n)]
        self.esz = ESZ[np.argmax(nf[:, 2:21], axis=1)]
        self.deflay = [tuple(np.rint(nf[i, 134:134 + self.rank[i]]).astype(np.int64)) for i in range(n)]
        self.prods = [[] for _ in range(n)]
        self.cons = [[] for _ in range(n)]
        for u, v in ei:
            self.prods[int(u)].append(int(v))
            self.cons[int(v)].append(int(u))
        self.size = np.array([float(np.prod(d)) if len(d) else 1.0 for d in self.dims])
        self.flex = np.array([(self.op[i] in FLEXIBLE) or self.rank[i] == 0 for i in range(n)])
        self.nf = nf

    def nonscalar_prods(self, v):
        return [p for p in self.prods[v] if self.rank[p] > 0]

    def dominant(self, v):
        c = [p for p in self.prods[v] if not self.flex[p] and self.rank[p] == self.rank[v]]
        if not c:
            return None
        return sorted(c, key=lambda x: (-self.size[x], x))[0]

    def conv_operands(self, v):
        nf = self.nf
        ifeat, kin = int(nf[v, 94]), int(nf[v, 99])
        c = [p for p in self.prods[v] if self.rank[p] == self.rank[v]]
        if len(c) < 2:
            return (c[0] if c else None), None
        a, b = c[0], c[1]
        ok = lambda x, w: self.dims[w][kin] == self.dims[x][ifeat]
        if ok(a, b):
            return a, b
        if ok(b, a):
            return b, a
        return a, b

    def dot_operands(self, v):
        c = [p for p in self.prods[v] if self.rank[p] == self.rank[v]]
        if len(c) < 2:
            return (c[0] if c else None), (c[0] if c else None)
        o = self.dims[v]

        def ok(a, b):
            da, db = self.dims[a], self.dims[b]
            return da[-1] == db[-2] and o[-2] == da[-2] and o[-1] == db[-1] and da[:-2] == db[:-2]
        a, b = c[0], c[1]
        if ok(a, b):
            return a, b
        if ok(b, a):
            return b, a
        return a, b


def layout_runtime(nf, opc, ei, ids, ncf, splits):
    """noise-free runtime (ns) of every config row of ncf, computed from file contents."""
    P = Parsed(nf, opc, ei)
    n = P.n
    C = ncf.shape[0]
    ncf = np.concatenate([ncf, -np.ones((1,) + ncf.shape[1:], dtype=ncf.dtype)], 0)   # + default row
    C1 = C + 1
    cfg = {int(v): k for k, v in enumerate(ids)}
    op = P.op

    # loop multiplier per node
    mult = np.ones(n)
    sp = [int(s) for s in np.asarray(splits).ravel()]
    sp = sorted(set([0] + [min(max(s, 0), n) for s in sp] + [n]))
    for a, b in zip(sp[:-1], sp[1:]):
        if b - 1 >= a and b < n and any(op[u] == WHILE for u in P.cons[b - 1]):
            mult[a:b] = LOOP_TRIPS
    main_start = sp[-2] if len(sp) >= 2 else 0

    tabs = [pad_table(P.dims[v], P.esz[v]) for v in range(n)]
    defL = [Lay(np.array(P.deflay[v], dtype=np.int64).reshape(1, -1)) for v in range(n)]
    dom = [P.dominant(v) if op[v] in FOLLOW else None for v in range(n)]

    lays = [None] * n
    for v in range(n):
        if v in cfg:
            perm, _ = complete_block(ncf[:, cfg[v], 0:6], P.rank[v], P.deflay[v])
            lays[v] = Lay(perm)
        elif op[v] in FOLLOW and dom[v] is not None:
            lays[v] = lays[dom[v]]
        else:
            lays[v] = defL[v]

    def nbytes(v, L):
        return tabs[v][L.minor, L.second]

    B = [nbytes(v, lays[v]) for v in range(n)]
    outdeg = np.array([len(P.cons[v]) for v in range(n)])
    materialized = np.array([(outdeg[v] != 1) or (op[P.cons[v][0]] not in FOLLOW) for v in range(n)])

    cost = np.zeros(C1)
    eff_in = {}
    copy_bufs = []

    def sev_of(La, Lb):
        return np.where(La.minor == Lb.minor, np.where(La.second == Lb.second, 0.2, 0.55), 1.0)

    # ------------------------------------------------------------------ edges (conflicts)
    for u in range(n):
        if not P.prods[u]:
            continue
        roles = {}
        if op[u] == CONV:
            x, w = P.conv_operands(u)
            roles = {x: 6, w: 12}
        elif op[u] == DOT:
            a, b = P.dot_operands(u)
            roles = {a: 6}
            if b is not None and b != a:
                roles[b] = None
        elif op[u] in (RESHAPE, TRANSPOSE):
            ns = P.nonscalar_prods(u)
            if ns:
                roles = {ns[0]: 6}
        for v in P.prods[u]:
            if P.flex[v]:
                continue
            fusible = False
            if op[u] in CONFIGURABLE:
                slot = roles.get(v, None)
                if slot is None:
                    continue
                if u in cfg:
                    perm, adopt = complete_block(ncf[:, cfg[u], slot:slot + 6], P.rank[v], P.deflay[v])
                    Le = Lay(perm)
                    eff_in[(u, v)] = Lay(np.where(adopt[:, None], np.broadcast_to(lays[v].perm, perm.shape), perm))
                    mism = (~adopt) & (Le.code != lays[v].code)
                else:
                    Le = defL[v]
                    eff_in[(u, v)] = Le
                    mism = np.broadcast_to(Le.code != lays[v].code, (C1,))
            elif op[u] in FOLLOW:
                if P.rank[v] != P.rank[u] or v == dom[u]:
                    continue
                Le = lays[u]
                mism = np.broadcast_to(Le.code != lays[v].code, (C1,))
                fusible = True
            elif op[u] in ADAPTIVE:
                continue
            else:
                Le = defL[v]
                mism = np.broadcast_to(Le.code != lays[v].code, (C1,))
            if P.rank[v] <= 1 or not mism.any():
                continue
            sev = sev_of(lays[v], Le)
            Bs = B[v]
            Bd = nbytes(v, Le)
            if fusible:
                c = 0.25 * sev * Bs / BW
            elif op[v] in FOLLOW and outdeg[v] == 1:
                w = dom[v]
                f = 0.3
                if w is not None and op[w] in (CONV, DOT):
                    f = 0.6
                elif w is not None and op[w] in (PARAM, GTE):
                    f = 0.45
                c = f * sev * (Bs + Bd) / 2.0 / BW
            else:
                cf = np.where(sev >= 1.0, 1.0, np.where(sev >= 0.5, 0.8, 0.6))
                c = cf * (Bs + Bd) / BW + COPY_OVH
                copy_bufs.append((u, np.where(mism, Bd, 0.0)))
            cost += np.where(mism, c, 0.0) * mult[u]

    def eff(u, v):
        if (u, v) in eff_in:
            return eff_in[(u, v)]
        return lays[v]

    # ------------------------------------------------------------------ node costs
    nfv = nf
    for v in range(n):
        o = op[v]
        c = None
        if o == CONV:
            x, w = P.conv_operands(v)
            if x is None or w is None:
                continue
            ib, ifeat = int(nfv[v, 93]), int(nfv[v, 94])
            kin, kout = int(nfv[v, 99]), int(nfv[v, 100])
            ob, of = int(nfv[v, 105]), int(nfv[v, 106])
            nsp = int(round(nfv[v, 92]))
            win = np.maximum(np.rint(nfv[v, 37:37 + nsp]), 1)
            fgc = max(1.0, float(nfv[v, 107]))
            Cin = P.dims[x][ifeat]
            Cout = P.dims[w][kout]
            flops = 2.0 * P.size[v] * float(np.prod(win)) * Cin / fgc
            Li, Lk, Lo = eff(v, x), eff(v, w), lays[v]
            a_in = np.where(Li.minor == ifeat, np.where(Li.second == ib, 1.0, 0.93),
                            np.where(Li.second == ifeat, 0.75, 0.5))
            a_out = np.where(Lo.minor == of, np.where(Lo.second == ob, 1.0, 0.95),
                             np.where(Lo.second == of, 0.8, 0.55))
            a_k = np.where((Lk.minor == kout) & (Lk.second == kin), 1.0,
                           np.where((Lk.minor == kin) & (Lk.second == kout), 0.9,
                                    np.where((Lk.minor == kin) | (Lk.minor == kout), 0.7, 0.45)))
            fill = math.sqrt(Cin / float(c128(Cin)) * Cout / float(c128(Cout)))
            peak = PEAK_BF16 if P.esz[x] <= 2 else PEAK_F32
            t_mxu = flops / (peak * a_in * a_out * a_k * fill)
            t_mem = (nbytes(x, Li) + nbytes(w, Lk) + B[v]) / BW
            c = np.maximum(t_mxu, t_mem) + 0.2 * np.minimum(t_mxu, t_mem) + OP_OVH
        elif o == DOT:
            a, b = P.dot_operands(v)
            if a is None:
                continue
            r = P.rank[v]
            K = P.dims[a][-1]
            M = P.dims[a][-2] if r >= 2 else 1
            N = P.dims[b][-1]
            batch = float(np.prod(P.dims[v][:-2])) if r > 2 else 1.0
            flops = 2.0 * batch * M * N * K
            La, Lb, Lo = eff(v, a), eff(v, b), lays[v]
            iK, iM = r - 1, r - 2
            a_l = np.where(La.minor == iK, np.where(La.second == iM, 1.0, 0.95),
                           np.where(La.second == iK, 0.8, 0.5))
            a_r = np.where((Lb.minor == iK) & (Lb.second == iM), 1.0,
                           np.where((Lb.minor == iM) & (Lb.second == iK), 0.9,
                                    np.where((Lb.minor == iM) | (Lb.minor == iK), 0.65, 0.45)))
            a_o = np.where(Lo.minor == iK, np.where(Lo.second == iM, 1.0, 0.95),
                           np.where(Lo.second == iK, 0.8, 0.55))
            fill = math.sqrt(K / float(c128(K)) * N / float(c128(N)) * min(1.0, M / 8.0))
            peak = PEAK_BF16 if P.esz[a] <= 2 else PEAK_F32
            t_mxu = flops / (peak * a_l * a_r * a_o * fill)
            t_mem = (nbytes(a, La) + nbytes(b, Lb) + B[v]) / BW
            c = np.maximum(t_mxu, t_mem) + 0.2 * np.minimum(t_mxu, t_mem) + OP_OVH
        elif o in (RESHAPE, TRANSPOSE):
            ns = P.nonscalar_prods(v)
            if not ns or P.rank[v] == 0:
                continue
            x = ns[0]
            Li, Lo = eff(v, x), lays[v]
            if o == RESHAPE:
                bit = rowmajor_mask(Li.perm, P.dims[x]) & rowmajor_mask(Lo.perm, P.dims[v])
                dx = np.array(P.dims[x])
                dv = np.array(P.dims[v])
                sev = np.where(dx[Li.minor] == dv[Lo.minor], 0.6, 1.0)
            else:
                p = np.rint(nfv[v, 31:31 + P.rank[v]]).astype(np.int64)
                p = np.clip(p, 0, P.rank[x] - 1)
                bit = np.all(p[Lo.perm] == Li.perm, axis=1)
                sev = np.where(p[Lo.minor] == Li.minor, 0.45, 1.0)
            fused = outdeg[v] == 1 and op[P.cons[v][0]] in FOLLOW
            mv = sev * (nbytes(x, Li) + B[v]) / BW
            mv = mv * 0.35 if fused else mv + OP_OVH
            c = np.where(bit, 0.0, mv)
        elif o in FOLLOW:
            c = 0.15 * B[v] / BW
            if materialized[v]:
                c = c + B[v] / BW + 0.5 * OP_OVH
        elif o == REDUCE:
            ns = P.nonscalar_prods(v)
            if not ns:
                continue
            x = max(ns, key=lambda i: (P.rank[i], -i))
            nred = max(0, P.rank[x] - P.rank[v])
            red = np.rint(nfv[v, 31:31 + nred]).astype(np.int64)
            Lx = lays[x]
            m1 = np.isin(Lx.minor, red)
            m2 = np.isin(Lx.second, red) & (P.rank[x] >= 2)
            c = B[x] / BW * (1.0 + 0.8 * m1 + 0.25 * m2) + B[v] / BW + 0.5 * OP_OVH
        elif o == BROADCAST:
            c = 0.1 * B[v] / BW
        elif o in (REDUCEWINDOW, SELSCATTER):
            ns = P.nonscalar_prods(v)
            x = ns[0] if ns else v
            wp = float(max(1.0, nfv[v, 44]))
            c = B[x] / BW * (1.0 + 0.1 * wp) * (1.5 if o == SELSCATTER else 1.0) + B[v] / BW + OP_OVH
        elif o == ALLREDUCE:
            c = 2.0 * B[v] / ICI_BW + 4000.0
        elif o in (GATHER, SCATTER, SORT, CUSTOMCALL, DUS):
            c = 2.0 * B[v] / BW + OP_OVH
        if c is not None:
            cost += c * mult[v]

    # ------------------------------------------------------------------ memory peak
    T = n + 1
    base = np.zeros(T + 1)
    var = np.zeros((C1, T + 1))
    root_main = n - 1
    for v in range(n):
        o = op[v]
        if P.rank[v] == 0 or o in (TUPLE, GTE, WHILE, BITCAST) or o in FLEXIBLE:
            continue
        if o in FOLLOW and not materialized[v]:
            continue
        start = main_start if (o == PARAM and v >= main_start) else v
        end = max(P.cons[v]) if P.cons[v] else v
        if root_main in P.cons[v]:
            end = n
        s = B[v]
        if s.shape[0] == 1:
            base[start] += s[0]
            base[end + 1] -= s[0]
        else:
            var[:, start] += s
            var[:, end + 1] -= s
    for u, s in copy_bufs:
        var[:, u] += s
        var[:, u + 1] -= s
    live = np.cumsum(base)[None, :] + np.cumsum(var, axis=1)
    peak = live.max(1)
    budget = BUDGET_FRAC * peak[-1]
    spill = SPILL_COEF * np.maximum(0.0, peak - budget) / BW
    total = cost + spill + 100000.0 + 40.0 * n
    return total[:C]


# ============================================================================ tile kernels
def build_tile_kernel(rng, nlo, nhi):
    """a fused kernel graph: [reducer] + fusion body + outer params + fusion root."""
    target = int(rng.integers(nlo, nhi + 1))
    kind = str(rng.choice(['conv', 'conv', 'dot', 'loop', 'reduce', 'copy'], p=[0.2, 0.15, 0.2, 0.2, 0.15, 0.1]))
    g = GB()
    red = None
    if kind == 'reduce':
        red = make_reducer(g, ADD if rng.random() < 0.7 else MAXIMUM)
    g.new_computation()
    body_params = []

    def bparam(shape, dt, lay=None):
        p = g.param(shape, dt, lay)
        body_params.append(p)
        return p
    dt = 'bf16' if rng.random() < 0.7 else 'f32'
    info = {'kind': kind}
    if kind == 'conv':
        nsp = 2 if rng.random() < 0.85 else 3
        r = nsp + 2
        N = int(rng.choice([1, 4, 8, 16, 32, 64, 128]))
        S = int(rng.choice([7, 12, 14, 26, 28, 56, 112] if nsp == 2 else [8, 16, 24, 32]))
        Cin = int(rng.choice([3, 32, 64, 96, 128, 192, 256, 384, 512]))
        Cout = int(rng.choice([32, 64, 128, 192, 256, 384, 512, 1024]))
        k = int(rng.choice([1, 3, 3, 5, 7]))
        stride = int(rng.choice([1, 1, 2]))
        while 2.0 * N * (S / stride) ** nsp * Cout * k ** nsp * Cin > 1.5e11:
            if N > 1:
                N //= 2
            elif S > 8:
                S //= 2
            else:
                Cin = max(8, Cin // 2)
        tpu = rng.random() < 0.7
        act_lay = tuple([r - 1, 0] + list(range(r - 2, 0, -1))) if tpu else tuple(range(r - 1, -1, -1))
        x = bparam((N,) + (S,) * nsp + (Cin,), dt, act_lay)
        w = bparam((k,) * nsp + (Cin, Cout), dt)
        pad = (k - 1) // 2
        so = int(math.ceil(S / stride))
        win = [dict(size=k, stride=stride, pad_lo=pad, pad_hi=k - 1 - pad, wdil=1, bdil=1) for _ in range(nsp)]
        dn = dict(ib=0, isp=list(range(1, r - 1)), kin=nsp, kout=nsp + 1, ksp=list(range(nsp)), ob=0, of=r - 1)
        dn['if'] = r - 1
        y = g.conv(x, w, dn, win, (N,) + (so,) * nsp + (Cout,), act_lay)
    elif kind == 'dot':
        batched = rng.random() < 0.3
        M = int(rng.choice([8, 32, 128, 256, 512, 1024, 2048, 4096]))
        K = int(rng.choice([64, 128, 256, 512, 768, 1024, 2048, 4096]))
        Nn = int(rng.choice([64, 128, 256, 384, 512, 1000, 1024, 3072, 4096]))
        pre = (int(rng.choice([2, 4, 8, 12, 16])),) if batched else ()
        while 2.0 * float(np.prod(pre)) * M * K * Nn > 1.5e11:
            M = max(8, M // 2)
        a = bparam(pre + (M, K), dt)
        b = bparam(pre + (K, Nn), dt)
        y = g.dot(a, b)
    else:
        r = int(rng.choice([2, 3, 4]))
        shp = tuple(int(rng.choice([2, 4, 8, 16, 32, 64, 128, 256, 512, 1024])) for _ in range(r))
        while np.prod(shp) > 2 ** 25:
            shp = tuple(max(1, s // 2) for s in shp)
        perm = tuple(int(i) for i in rng.permutation(r))
        lay = perm if rng.random() < 0.3 else tuple(range(r - 1, -1, -1))
        x = bparam(shp, dt, lay)
        y = g.ew(int(rng.choice([EXP, TANH, NEG, ABS, RSQRT])), x) if rng.random() < 0.7 else g.convert(x, 'f32')
        if kind == 'reduce':
            nred = 1 if (r == 2 or rng.random() < 0.6) else 2
            dims = sorted(int(i) for i in rng.choice(r, size=nred, replace=False))
            y = g.reduce(y, dims, red)
        elif kind == 'copy':
            lay2 = tuple(int(i) for i in rng.permutation(r))
            if lay2 == g.lay[y]:
                lay2 = tuple(reversed(g.lay[y]))
            y = g.add(COPY, g.shape[y], g.dt[y], [y], lay2)
    # extra elementwise epilogue until the node target is reached
    guard = 0
    while len(g) + len(body_params) + 2 < target and guard < 200:
        guard += 1
        u = rng.random()
        rk = len(g.shape[y])
        if u < 0.3 and rk >= 1:
            C = g.shape[y][-1]
            p = bparam((C,), 'f32')
            pb = g.bcast(g.convert(p, g.dt[y]) if g.dt[y] != 'f32' else p, g.shape[y], [rk - 1], g.lay[y])
            y = g.ew(int(rng.choice([ADD, MUL])), y, pb)
        elif u < 0.45 and rk >= 1 and len(body_params) < 8:
            p = bparam(g.shape[y], g.dt[y], g.lay[y])
            y = g.ew(int(rng.choice([ADD, MUL, SUB])), y, p)
        elif u < 0.65:
            y = g.ew(int(rng.choice([MAXIMUM, MINIMUM])), y, g.sb(y))
        elif u < 0.8:
            y = g.ew(int(rng.choice([EXP, TANH, LOGISTIC, NEG, RSQRT])), y)
        else:
            y = g.ew(MUL, y, g.sb(y))
    if len(g.shape[y]) == 0:
        y = g.add(RESHAPE, (1,), g.dt[y], [y])
    g.root[y] = 1
    g.new_computation()
    outer = [g.param(g.shape[p], g.dt[p], g.lay[p]) for p in body_params]
    f = g.add(FUSION, g.shape[y], g.dt[y], [y] + outer, g.lay[y])
    g.root[f] = 1
    return g, info


def tile_geometry(P):
    """everything the tile law needs from the file contents."""
    n = P.n
    root = n - 1
    op = P.op
    D = np.array(P.dims[root], dtype=np.float64)
    L = np.array(P.deflay[root], dtype=np.int64)
    geo = dict(D=D, L=L, r=len(D), esz=float(P.esz[root]))
    outer = [p for p in P.prods[root] if op[p] == PARAM]
    main_nums = set()
    for v in range(n - 1):
        if op[v] in (CONV, DOT):
            for p in P.prods[v]:
                if op[p] == PARAM:
                    main_nums.add(int(round(P.nf[p, 30])))
            break
    outer = [p for p in outer if int(round(P.nf[p, 30])) not in main_nums]
    full, small = 0.0, 0.0
    tot_out = float(np.prod(D)) if len(D) else 1.0
    for p in outer:
        b = P.size[p] * P.esz[p]
        if P.rank[p] == len(D) and P.size[p] >= tot_out:
            full += P.esz[p]
        else:
            small += b
    geo['full_esz'] = full
    geo['small_bytes'] = small
    body = [v for v in range(n - 1) if op[v] != PARAM]
    geo['n_ops'] = max(1, sum(1 for v in body if op[v] in ELEMENTWISE))
    convs = [v for v in range(n) if op[v] == CONV]
    dots = [v for v in range(n) if op[v] == DOT]
    reds = [v for v in range(n) if op[v] == REDUCE and P.rank[v] > 0]
    copies = [v for v in range(n) if op[v] in (COPY, TRANSPOSE)]
    if convs:
        v = convs[0]
        x, w = P.conv_operands(v)
        nf = P.nf
        nsp = int(round(nf[v, 92]))
        geo.update(kind='conv', x=x, w=w, nsp=nsp,
                   ks=np.maximum(np.rint(nf[v, 37:37 + nsp]), 1), st=np.maximum(np.rint(nf[v, 45:45 + nsp]), 1),
                   of=int(nf[v, 106]), ob=int(nf[v, 105]), osp=[i for i in range(P.rank[v])
                                                                if i not in (int(nf[v, 106]), int(nf[v, 105]))],
                   Cin=float(P.dims[x][int(nf[v, 94])]), act_b=P.size[x] * P.esz[x], w_b=P.size[w] * P.esz[w],
                   mesz=float(P.esz[x]))
    elif dots:
        v = dots[0]
        a, b = P.dot_operands(v)
        geo.update(kind='dot', K=float(P.dims[a][-1]), lhs_b=P.size[a] * P.esz[a], rhs_b=P.size[b] * P.esz[b],
                   mesz=float(P.esz[a]))
    elif reds:
        v = reds[0]
        ns = P.nonscalar_prods(v)
        x = max(ns, key=lambda i: P.rank[i])
        nred = P.rank[x] - P.rank[v]
        red = np.rint(P.nf[v, 31:31 + nred]).astype(np.int64)
        dx = np.array(P.dims[x], dtype=np.float64)
        Lx = P.deflay[x]
        rext = float(np.prod(dx[red])) if nred else 1.0
        if len(Lx) and Lx[0] in set(red.tolist()):
            rext = rext / dx[Lx[0]] * float(c128(dx[Lx[0]]))
            cross = True
        else:
            cross = False
        geo.update(kind='reduce', rext=rext, cross=cross, in_esz=float(P.esz[x]))
    elif copies:
        v = copies[0]
        ns = P.nonscalar_prods(v)
        x = ns[0]
        Lin = P.deflay[x]
        Lo = P.deflay[v]
        if op[v] == TRANSPOSE:
            p = np.rint(P.nf[v, 31:31 + P.rank[v]]).astype(np.int64)
            in_minor_out = int(np.nonzero(p == Lin[0])[0][0]) if Lin[0] in p else int(L[0])
        else:
            in_minor_out = int(Lin[0])
        geo.update(kind='copy', in_minor=in_minor_out, xlu=(in_minor_out != int(L[0])))
    else:
        geo['kind'] = 'loop'
    return geo


def tile_runtime_geo(geo, cf):
    C = cf.shape[0]
    r = geo['r']
    D = geo['D']
    L = geo['L']
    esz = max(1.0, geo['esz'])
    if r == 0:
        return np.full(C, LAUNCH + 500.0)
    t = np.clip(np.rint(cf[:, 8:8 + r]).astype(np.float64), 1, D[None, :])
    nt = np.ceil(D[None, :] / t)
    G = nt.prod(1)
    m = int(L[0])
    s = int(L[1]) if r >= 2 else None
    e = t.copy()
    e[:, m] = c128(t[:, m])
    if s is not None:
        e[:, s] = cround(t[:, s], sublane(esz))
    tile_eff = e.prod(1)
    burst = np.minimum(1.0, 0.35 + 0.65 * t[:, m] * esz / 512.0)
    kind = geo['kind']
    ws = None
    if kind in ('loop', 'copy', 'reduce'):
        out_step = tile_eff * esz
        in_step = tile_eff * geo['full_esz']
        comp = G * tile_eff * geo['n_ops'] / VPU_RATE
        if kind == 'copy':
            im = geo['in_minor']
            burst_in = np.minimum(1.0, 0.35 + 0.65 * t[:, im] * esz / 512.0)
            dma = G * (in_step / (BW * burst_in) + out_step / (BW * burst))
            if geo['xlu']:
                comp = comp + G * tile_eff / XLU_RATE
        elif kind == 'reduce':
            rd = tile_eff * geo['rext']
            dma = G * (rd * geo['in_esz'] / (BW * burst) + out_step / (BW * burst))
            comp = G * rd * (2.0 if geo['cross'] else 1.0) / VPU_RATE
            in_step = rd * geo['in_esz']
        else:
            dma = G * (in_step + out_step) / (BW * burst)
        dma = dma + geo['small_bytes'] / BW
        ws = 2.0 * (in_step + out_step)
    elif kind == 'dot':
        K = geo['K']
        kb = np.rint(cf[:, 0]).astype(np.float64)
        tK = np.clip(kb, 1, K)
        nK = np.ceil(K / tK)
        tM = t[:, r - 2] if r >= 2 else np.ones(C)
        tN = t[:, r - 1]
        nN = nt[:, r - 1]
        nM = nt[:, :r - 1].prod(1)
        G = G * nK
        mesz = geo['mesz']
        lhs_t = geo['lhs_b'] * nN
        rhs_t = geo['rhs_b'] * np.where(nK == 1, 1.0, nM)
        out_t = float(np.prod(D)) * esz
        dma = (lhs_t + rhs_t) / BW + out_t / (BW * burst) + geo['small_bytes'] / BW
        dma = dma + G * tile_eff * geo['full_esz'] / BW / np.maximum(nK, 1)
        mt = e[:, r - 2] if r >= 2 else np.ones(C)
        comp = G * 2.0 * cround(mt, 8) * c128(tN) * c128(tK) / (PEAK_BF16 if mesz <= 2 else PEAK_F32)
        comp = comp + G * (c128(tK) / 128.0) * (c128(tN) / 128.0) * 24.0
        ws = 2.0 * (tM * tK + tK * tN) * mesz + tM * tN * 4.0
    else:  # conv
        nsp = geo['nsp']
        of, ob, osp = geo['of'], geo['ob'], geo['osp']
        kb = np.rint(cf[:, 0:nsp + 1]).astype(np.float64)
        ks = geo['ks']
        kt = np.clip(kb[:, :nsp], 1, ks[None, :])
        Cin = geo['Cin']
        tCin = np.clip(kb[:, nsp], 1, Cin)
        nK = np.ceil(ks[None, :] / kt).prod(1) * np.ceil(Cin / tCin)
        nC = nt[:, of]
        nMt = G / nC
        G = G * nK
        st = geo['st']
        tsp = t[:, osp]
        hf = (((tsp - 1) * st[None, :] + ks[None, :]) / (tsp * st[None, :])).prod(1)
        act_t = geo['act_b'] * hf * nC
        w_t = geo['w_b'] * np.where(nK == 1, 1.0, nMt)
        out_t = float(np.prod(D)) * esz
        dma = (act_t + w_t) / BW + out_t / (BW * burst) + geo['small_bytes'] / BW
        dma = dma + G * tile_eff * geo['full_esz'] / BW / np.maximum(nK, 1)
        Mtile = tile_eff / e[:, of]
        Ntile = e[:, of]
        Kch = kt.prod(1) * c128(tCin)
        mesz = geo['mesz']
        comp = G * 2.0 * Mtile * Ntile * Kch / (PEAK_BF16 if mesz <= 2 else PEAK_F32)
        comp = comp + G * (c128(tCin) / 128.0) * (c128(t[:, of]) / 128.0) * 24.0
        in_tile = (tsp * st[None, :] + ks[None, :]).prod(1) * t[:, ob] * tCin * mesz
        ws = 2.0 * (in_tile + kt.prod(1) * tCin * t[:, of] * mesz) + (t.prod(1) * 4.0)
    total = np.maximum(comp, dma) + 0.2 * np.minimum(comp, dma) + G * STEP_OVH + LAUNCH
    if ws is not None:
        over = np.maximum(0.0, ws / VMEM - 1.0)
        total = total * (1.0 + 2.0 * over)
    return total


def tile_runtime(nf, opc, ei, cf):
    P = Parsed(nf, opc, ei)
    return tile_runtime_geo(tile_geometry(P), cf)


def sample_tile_configs(rng, g, geo, C):
    r = geo['r']
    D = geo['D'].astype(np.int64)
    L = geo['L']
    m = int(L[0])
    s = int(L[1]) if r >= 2 else -1
    cands = []
    for i in range(r):
        if i == m:
            base = [8, 16, 32, 64, 96, 128, 160, 192, 256, 384, 512, 768, 1024, 2048]
        elif i == s:
            base = [1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256, 512]
        else:
            base = [1, 2, 3, 4, 6, 8, 12, 16, 32, 64]
        cands.append(sorted(set([b for b in base if b <= D[i]] + [int(D[i])])))
    kcands = []
    kind = geo['kind']
    if kind == 'conv':
        for j in range(geo['nsp']):
            kcands.append(sorted(set([1, int(geo['ks'][j])])))
        Cin = int(geo['Cin'])
        kcands.append(sorted(set([b for b in (8, 16, 32, 64, 128, 192, 256, 512) if b <= Cin] + [Cin])))
    elif kind == 'dot':
        K = int(geo['K'])
        kcands.append(sorted(set([b for b in (32, 64, 128, 256, 512, 1024, 2048) if b <= K] + [K])))

    def row(ob, kb):
        out = np.zeros(24, dtype=np.float32)
        if kb:
            out[0:len(kb)] = kb
            out[6] = sum(kb)
            out[7] = float(np.prod(kb))
        out[8:8 + r] = ob
        out[14] = sum(ob)
        out[15] = float(np.prod(ob)) if r else 0.0
        return out

    def kbounds(ob, kb):
        if kind == 'conv':
            return list(kb) + [ob[geo['of']]]
        if kind == 'dot':
            return list(kb) + [ob[r - 1]]
        return []
    # default (compiler heuristic): aligned minor tile, a few sublanes, then grow the major
    # dims (from the minor side) while the output tile stays under a fixed budget.
    esz = max(1.0, geo['esz'])
    sub = sublane(esz)
    dob = [1] * r
    dob[m] = int(D[m]) if D[m] < 128 else int(min(512, D[m] // 128 * 128))
    if s >= 0:
        dob[s] = int(min(D[s], 2 * sub))
    budget_elems = 2 ** 18 / max(1.0, 1.0 + geo['full_esz'] / esz)
    for i in [int(x) for x in L[2:]]:
        cur = float(np.prod([c128(dob[j]) if j == m else (cround(dob[j], sub) if j == s else dob[j])
                             for j in range(r)]))
        room = budget_elems / cur
        if room >= D[i]:
            dob[i] = int(D[i])
        else:
            dob[i] = int(max([c for c in cands[i] if c <= max(1.0, room)] + [1]))
            break
    dkb = []
    if kind == 'conv':
        dkb = [int(k) for k in geo['ks']] + [int(min(geo['Cin'], 512))]
    elif kind == 'dot':
        dkb = [int(min(geo['K'], 1024))]
    rows = {}
    default_row = row(dob, kbounds(dob, dkb))
    rows[default_row.tobytes()] = default_row
    tries = 0
    weights = [np.exp(-0.15 * np.abs(np.arange(len(c)) - len(c) * rng.uniform(0.3, 0.9))) for c in cands]
    weights = [w / w.sum() for w in weights]
    tot = float(np.prod(D)) if r else 1.0
    vlo = min(2.0 ** 12, tot / 4.0)
    vhi = 2.0 ** 21
    while len(rows) < C and tries < C * 40:
        tries += 1
        ob = [int(rng.choice(cands[i], p=weights[i])) for i in range(r)]
        vol = float(np.prod([c128(ob[j]) if j == m else (cround(ob[j], sub) if j == s else ob[j])
                             for j in range(r)]))
        if not (vlo <= vol <= vhi) and rng.random() < 0.9:
            continue
        kb = [int(rng.choice(kc)) for kc in kcands]
        rw = row(ob, kbounds(ob, kb))
        key = rw.tobytes()
        if key in rows:
            continue
        rows[key] = rw
    allrows = list(rows.values())
    cfm = np.stack(allrows[1:] + [allrows[0]]) if len(allrows) > 1 else np.stack(allrows)
    # filter hopeless working sets (the compiler would reject them)
    rt = tile_runtime_geo(geo, cfm)
    base = rt[-1]
    keep = rt < base * 25.0
    keep[-1] = True
    cfm = cfm[keep]
    perm = rng.permutation(cfm.shape[0])
    cfm = cfm[perm]
    didx = int(np.nonzero(perm == cfm.shape[0] - 1)[0][0])
    return cfm, didx


# ============================================================================ noise
def measure(rng, y, sigma):
    C = y.shape[0]
    frac = rng.uniform(0.0, SLOW_FRAC_MAX)
    slow = rng.random(C) < frac
    which = rng.random(C) < SLOW_P[0]
    fac = np.where(slow, np.where(which, SLOW_FACTORS[0], SLOW_FACTORS[1]), 1.0)
    z = y * np.exp(sigma * rng.standard_normal(C)) * fac
    return np.maximum(1, np.rint(z)).astype(np.int64)


# ============================================================================ writing
SCALES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  layout=(16, 6, 4), nodes=(200, 1500), ncfg=(20, 120), cfg=(300, 3000), test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 layout=(4, 2, 2), nodes=(40, 150), ncfg=(5, 20), cfg=(30, 200), test_cfg=(30, 60)),
}
SPLITS = ('train', 'valid', 'test')
COLLECTIONS = [('xla', 'default'), ('xla', 'random'), ('nlp', 'default'), ('nlp', 'random')]


def save_npz(path, **arrs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrs)


def save_noiseless(root, rel_npz, y):
    p = os.path.join(root, 'noiseless', rel_npz[:-4] + '.npy')
    os.makedirs(os.path.dirname(p), exist_ok=True)
    np.save(p, np.asarray(y, dtype=np.float64))


def loguniform_int(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def gen_tile(root, seed, scale, counts, used_stems):
    sc = SCALES[scale]
    for si, split in enumerate(SPLITS):
        for gi in range(counts[si]):
            rng = np.random.default_rng([seed, 0, si, gi, 17 + (scale == 'tiny')])
            lo, hi = sc['tile_cfg']
            for attempt in range(30):
                g, info = build_tile_kernel(rng, *sc['tile_nodes'])
                if not (sc['tile_nodes'][0] <= len(g) <= sc['tile_nodes'][1]):
                    continue
                nf = node_features(g)
                opc = np.array(g.op, dtype=np.uint8)
                ei = edges_of(g)
                geo = tile_geometry(Parsed(nf, opc, ei))
                C = int(rng.integers(lo, hi + 1))
                cf, didx = sample_tile_configs(rng, g, geo, C)
                if cf.shape[0] >= lo:
                    break
            y = tile_runtime(nf, opc, ei, cf)
            if split == 'test':
                stem = rng.bytes(16).hex()
                rt = np.zeros(cf.shape[0], dtype=np.int64)
                norm = np.ones(cf.shape[0], dtype=np.int64)
            else:
                model = str(rng.choice(XLA_NAMES + XLA_TF_NAMES + XLA3D_NAMES))
                kname = {'conv': 'fusion', 'dot': 'fusion', 'loop': 'fusion', 'reduce': 'fusion',
                         'copy': 'fusion'}[info['kind']]
                stem = f"{model}_batch_{int(rng.choice([8, 16, 32, 64, 128]))}_{kname}_{int(rng.integers(1, 900))}" \
                       f"_{fingerprint(rng)}"
                rt = measure(rng, y, SIG_TILE)
                nval = max(1, int(round(y[didx] * math.exp(SIG_TILE * rng.standard_normal()))))
                norm = np.full(cf.shape[0], nval, dtype=np.int64)
            while stem in used_stems:
                stem = stem + 'x'
            used_stems.add(stem)
            rel = f"npz/tile/xla/{split}/{stem}.npz"
            save_npz(os.path.join(root, rel), node_feat=nf, node_opcode=opc, edge_index=ei,
                     config_feat=cf.astype(np.float32), config_runtime=rt, config_runtime_normalizers=norm)
            if split != 'test':
                save_noiseless(root, rel, y)


def gen_layout(root, seed, scale, counts, used_stems, verbose=False):
    sc = SCALES[scale]
    for ci, (source, search) in enumerate(COLLECTIONS):
        for si, split in enumerate(SPLITS):
            for gi in range(counts[si]):
                t0 = time.time()
                rng = np.random.default_rng([seed, 1 + ci, si, gi, 17 + (scale == 'tiny')])
                g, splits, ms, ids, name = sample_layout_graph(rng, source, *sc['nodes'], *sc['ncfg'])
                nf = node_features(g)
                opc = np.array(g.op, dtype=np.uint8)
                ei = edges_of(g)
                if split == 'test':
                    C = int(rng.integers(sc['test_cfg'][0], sc['test_cfg'][1] + 1))
                else:
                    C = loguniform_int(rng, *sc['cfg'])
                ncf = sample_layout_configs(rng, g, ids, C, search)
                node_splits = np.array([splits], dtype=np.int64)
                if split == 'test':
                    stem = rng.bytes(16).hex()
                    rt = np.zeros(C, dtype=np.int64)
                    y = None
                else:
                    stem = name
                    y = layout_runtime(nf, opc, ei, ids, ncf, node_splits)
                    rt = measure(rng, y, SIG_LAYOUT)
                while stem in used_stems:
                    stem = stem + 'x'
                used_stems.add(stem)
                rel = f"npz/layout/{source}/{search}/{split}/{stem}.npz"
                save_npz(os.path.join(root, rel), node_feat=nf, node_opcode=opc, edge_index=ei,
                         node_config_ids=ids.astype(np.int64), node_config_feat=ncf.astype(np.float32),
                         node_splits=node_splits, config_runtime=rt)
                if y is not None:
                    save_noiseless(root, rel, y)
                if verbose:
                    extra = ''
                    if y is not None:
                        extra = f" rt {y.min():.3g}-{y.max():.3g} spread {y.max() / y.min():.3f}"
                    print(f"{source}:{search}:{split} {stem[:40]:40s} n={len(g)} nc={len(ids)} c={C}"
                          f" {time.time() - t0:.2f}s{extra}", file=sys.stderr)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=['tiny', 'small'], default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    ap.add_argument('--verbose', action='store_true')
    a = ap.parse_args(argv)
    sc = SCALES[a.scale]
    f = a.graphs_factor
    tcounts = [max(1, int(round(c * f))) for c in sc['tile']]
    lcounts = [max(1, int(round(c * f))) for c in sc['layout']]
    t0 = time.time()
    used = set()
    gen_tile(a.out, a.seed, a.scale, tcounts, used)
    if a.verbose:
        print(f"tile done {time.time() - t0:.1f}s", file=sys.stderr)
    gen_layout(a.out, a.seed, a.scale, lcounts, used, a.verbose)
    if a.verbose:
        print(f"all done {time.time() - t0:.1f}s", file=sys.stderr)


if __name__ == '__main__':
    main()
