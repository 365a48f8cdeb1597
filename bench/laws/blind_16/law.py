#!/usr/bin/env python3
"""Blind runtime law #16: a synthetic TpuGraphs-format dataset generator.

Usage:  python law.py --out ROOT --seed S [--scale tiny|small] [--graphs-factor F]

Everything below is this law's own model of a TPU-like machine.  Nothing here was
derived from the tool under test.  This docstring documents the law fully; it is
not meant for the tool's authors.

MACHINE MODEL (shared by both tasks)
------------------------------------
* Vector registers hold one 2-D register tile of 4 KiB: 8 sublanes x 128 lanes of
  32-bit data (16 x 128 for 16-bit, 32 x 128 for 8-bit data).  A tensor laid out
  with minor-to-major order L occupies
      tiles = ceil(m0/128) * ceil(m1/sub) * (volume / (m0*m1))
  where m0 / m1 are the sizes of the most-minor / second-most-minor dims.
  CLIFF (ratio of two dims): if m0 < 128, 128 % m0 == 0 and m1 >= 8*m0 the compiler
  folds 128/m0 rows into each lane row ("row folding") and the 2-D part needs only
  ceil(m0*m1/(128*sub)) tiles.  Just below the ratio the tensor stays padded.
* HBM traffic is counted in whole tiles (padding is moved too), 1200 B/ns.
* Per-op time of an unfused op is a smooth max of a fixed launch overhead and its
  work: (ovh^4 + work^4)^(1/4): tiny tensors cost the overhead, big ones their work.

LAYOUT LAW
----------
Layout propagation.  Each configurable node (convolution, dot, reshape, transpose)
gets an output layout from its config block (a prefix of fixed minor dims; the
other dims keep the order of a fallback; an all -1 block is the fallback itself).
Fallbacks ("compiler defaults"): conv -> feature dim minor, then batch if batch >= 8
else the last output spatial dim, then the rest descending; dot/reshape ->
row-major; transpose -> the layout that makes it a bitcast of its (actual) input.
Input/kernel blocks give the layout the node wants for its data operand / conv
kernel operand (fallback: the producer's actual layout, i.e. no change).
Elementwise ops (and slice/pad/concat/reduce-window/bitcast/all-reduce) take the
layout of their first same-shaped non-broadcast operand; reduce keeps the order of
the surviving dims; broadcasts/constants/iota take the layout of their first
same-shaped elementwise user (free); everything else is row-major.
Costs (ns), summed over nodes:
* relayout copy on an edge whose producer layout differs from what the consumer
  needs (elementwise users need their own layout, conv/dot/reshape/transpose the
  input/kernel block, gather/scatter/sort/custom-call and the program's result
  tuple need row-major):  700 + (tilesA+tilesB)*4096/BW + transposition work, where
  transposition work = max(tilesA,tilesB) * 9 if the lane dim changes, * 1.5 if only
  the sublane dim changes, 30% extra memory time if only major dims move.
  If the producer is an elementwise op with a single user the copy fuses into it:
  no overhead and only a quarter of the memory time.
* elementwise: tiles * 0.35 * opweight (transcendentals 4-10); if its result is
  materialised (several users, or a non-elementwise user) plus a smooth-max of 400
  and a write of its tiles.  Broadcasts: tiles*0.175 in their user's layout.
* convolution / dot: MXU time flops/(R*util) (R=1.37e5 flop/ns bf16, /3 for f32;
  conv util = u(Cin*kernel_spatial)*u(Cout), dot util = u(K)*u(N)*min(1,M/8),
  u(c)=c/roundup128(c)) against memory time of
  in+kernel+out tiles: max + 0.15*min; plus in-emitter transposes (4.5 ns per tile)
  for every operand whose minor dims are not MXU friendly (conv: input feature
  minor, output feature minor, kernel {in,out feature} as the two minor dims with
  out-feature minor; dot: K minor on lhs, N minor/K second-minor on rhs, N minor on
  output); smooth-max with 900.
* reshape: free (bitcast) iff input and output are both row-major and the tiling of
  the two minor dims is kept; otherwise memory of in+out tiles plus 9 (lane size
  changes) or 1.5 per tile of shuffles; smooth-max 900.
* transpose: free iff its output layout is the bitcast of its input layout, else a
  relayout copy of its input into the output's physical order.
* reduce: tiles_in*(0.35 + 6 if the lane dim is reduced + 1 if the sublane dim is
  reduced) + memory; reduce-window: window work, lane dim windows cost XLU shifts;
  slice/pad/concat/dynamic-(update-)slice: memory plus shifts when the changed dim
  is the lane (4.5/tile) or sublane (0.75/tile) dim.
* all-reduce: communication M = 5000 + bytes/25 per all-reduce (layout free).
  Other ops: fixed (memory time of their row-major bytes).
Combination: T = max(C, M) + 0.25*min(C, M) + 30000, C = sum of compute costs.
Graphs whose communication dominates, whose tensors are tiny (overhead bound) or
whose dims are multiples of 128 are barely layout sensitive; graphs with awkward
small dims and many relayout opportunities are very sensitive.

TILE LAW
--------
The kernel's iteration tensor X is the largest-volume node that is not a
parameter, tuple or fusion (ties: highest id).  Its dims in physical major->minor
order (from its stored layout) are cut into units: elements for major dims,
groups of `sub` rows for the second-minor dim, 128-lane groups for the minor dim.
output_bounds b (cols 8..) are tile sizes in these units (major->minor).
  tiles n = prod ceil(U/b);  V = prod b  vregs per tile.
Per vreg compute = 0.35*(sum of elementwise op weights on X-shaped nodes + 0.5 per
broadcast) + 6/unroll + spill, unroll = inner 2-D block (b_minor*b_second) if it is
<= 64 vregs, else 8 (unroll limit cliff); spill = 0.8*live*(u*live-48)/(u*live)
when u*live > 48 registers, live = 1 + #input streams + #ops//4.
DMA per tile: bytes of every input/output stream for the tile / BW + 40 ns per
descriptor (a descriptor per major row, per sublane row when the tile does not
span the whole minor dim).  In-kernel relayouts (copy/transpose from an operand
with another minor dim) cost 4.5 ns per vreg (1.5 if only the sublane dim moves)
and read the operand in runs of b*unit elements along its minor dim; runs shorter
than a 64-byte burst multiply that stream's bytes by 64/run_bytes.  Per tile time = max(compute, dma) + 350 if twice the
tile's bytes fit in 16 MiB VMEM (double buffering), else compute + dma + 350.
Reductions split across tiles (a reduced dim not fully inside the tile) pay a
read-modify-write of the partial result; reducing along lanes costs 7 ns per
row-vreg of the tile (fewer with more lane units).  Conv/dot kernels: kernel bounds
(cols 0..) chunk the weights; MXU utilisation min(1,k_in/128)*min(1,k_out/128) of
the chunked feature dims; weights are streamed once per output tile, activations
are re-read per weight chunk unless input tile + 2 weight chunks + 2 output tiles
fit in VMEM; 120 ns per weight chunk step.  T = 2000 + n*per_tile + first DMA.
The default tile (the normaliser's config) is the compiler's pick: the best under
this cost model among six heuristic candidates (grow from the minor dim, or from
a relayout operand's minor dim, up to 128/512/2048 vregs, balanced splits).

SAMPLERS
--------
Own graph sampler: xla = conv nets (rank 4 or 5, bf16/f32, conv/bn/relu blocks,
residuals, pooling, concat branches, space-to-depth reshape/transpose, optional
training step with gradient convs and all-reduces of every weight), nlp =
transformers (layernorm, attention with reshapes/transposes/batched dots, MLP,
optional training step); reducer and while-loop computations in front, node_splits
after each while body / cond and n at the end.  Configurable nodes: conv, dot,
reshape, transpose of the main computation.  random: every node draws among a few
plausible layouts (or a random permutation), as full, two-minor-dims or -1 blocks;
default: a search from the all-default config mutating one to a few nodes at a
time, using only alternatives that alone cost at most a few percent more.
Tile kernels: loop, reduce, conv, dot and copy fusions with elementwise epilogues.

NOISE (measurement only, never in the noise-free arrays)
--------------------------------------------------------
measured = true * exp(s*Z) * (1 + 0.6*s*E) * (1 + B*4*s*P), Z~N(0,1), E~Exp(1),
B~Bernoulli(p), P~Pareto(1.5): multiplicative, right-skewed, heavy-tailed on the
slow side.  s grows as the config's own runtime gets shorter:
layout s = 0.0008 + 0.02*sqrt(1e5/t), p = 0.02;  tile s = 0.004 + 0.05*sqrt(2e3/t),
p = 0.03.  Every row (also duplicated configs) gets its own draw.  The tile
normaliser is the measurement of the default config, constant within a file.
"""

import argparse
import hashlib
import math
import os
import sys
import time

import numpy as np

# ----------------------------------------------------------------------------------
# opcode ids (XLA HloOpcode order as TpuGraphs stores them)
OP = {
    'abs': 1, 'add': 2, 'add-dependency': 3, 'after-all': 4, 'all-reduce': 5,
    'all-to-all': 6, 'atan2': 7, 'batch-norm-grad': 8, 'batch-norm-inference': 9,
    'batch-norm-training': 10, 'bitcast': 11, 'bitcast-convert': 12, 'broadcast': 13,
    'call': 14, 'ceil': 15, 'cholesky': 16, 'clamp': 17, 'collective-permute': 18,
    'count-leading-zeros': 19, 'compare': 20, 'complex': 21, 'concatenate': 22,
    'conditional': 23, 'constant': 24, 'convert': 25, 'convolution': 26, 'copy': 27,
    'copy-done': 28, 'copy-start': 29, 'cosine': 30, 'custom-call': 31, 'divide': 32,
    'domain': 33, 'dot': 34, 'dynamic-slice': 35, 'dynamic-update-slice': 36,
    'exponential': 37, 'exponential-minus-one': 38, 'fft': 39, 'floor': 40,
    'fusion': 41, 'gather': 42, 'get-dimension-size': 43, 'set-dimension-size': 44,
    'get-tuple-element': 45, 'imag': 46, 'infeed': 47, 'iota': 48, 'is-finite': 49,
    'log': 50, 'log-plus-one': 51, 'and': 52, 'not': 53, 'or': 54, 'xor': 55,
    'map': 56, 'maximum': 57, 'minimum': 58, 'multiply': 59, 'negate': 60,
    'outfeed': 61, 'pad': 62, 'parameter': 63, 'partition-id': 64, 'popcnt': 65,
    'power': 66, 'real': 67, 'recv': 68, 'recv-done': 69, 'reduce': 70,
    'reduce-precision': 71, 'reduce-window': 72, 'remainder': 73, 'replica-id': 74,
    'reshape': 75, 'reverse': 76, 'rng': 77, 'rng-get-and-update-state': 78,
    'rng-bit-generator': 79, 'round-nearest-afz': 80, 'rsqrt': 81, 'scatter': 82,
    'select': 83, 'select-and-scatter': 84, 'send': 85, 'send-done': 86,
    'shift-left': 87, 'shift-right-arithmetic': 88, 'shift-right-logical': 89,
    'sign': 90, 'sine': 91, 'slice': 92, 'sort': 93, 'sqrt': 94, 'subtract': 95,
    'tanh': 96, 'transpose': 98, 'triangular-solve': 99, 'tuple': 100, 'while': 102,
    'cbrt': 103, 'all-gather': 104, 'logistic': 107, 'round-nearest-even': 118,
    'stochastic-convert': 119, 'tan': 120,
}

# elementwise ops and their VPU weight (ops per register tile)
EW_WEIGHT = {
    1: 1, 2: 1, 7: 8, 12: 0.5, 15: 1, 17: 2, 19: 1, 20: 1, 21: 1, 25: 1, 27: 1,
    30: 8, 32: 4, 37: 6, 38: 6, 40: 1, 46: 1, 49: 1, 50: 6, 51: 6, 52: 1, 53: 1,
    54: 1, 55: 1, 56: 2, 57: 1, 58: 1, 59: 1, 60: 1, 65: 1, 66: 10, 67: 1, 71: 1,
    73: 4, 76: 1, 80: 1, 81: 4, 83: 1, 87: 1, 88: 1, 89: 1, 90: 1, 91: 8, 94: 4,
    95: 1, 96: 6, 103: 6, 107: 6, 118: 1, 119: 2, 120: 8, 8: 3, 9: 3, 10: 3,
}
FOLLOW_SHAPED = {22, 35, 36, 62, 72, 84, 92, 5, 11}  # follow operand-0 layout, own cost
FLEX = {13, 24, 48, 77, 79, 64, 74}
ZERO = {63, 45, 100, 102, 14, 23, 4, 3, 33, 114, 43, 44, 78, 28, 29, 68, 69, 85, 86}
CONFIGURABLE = {26, 34, 75, 98}
ROWMAJOR_NEED = {42, 82, 93, 31, 39, 16, 99, 6, 104, 18, 47, 61}

ET_BYTES = {2: 4, 3: 1, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8, 12: 2, 13: 4,
            14: 8, 15: 2, 16: 8, 17: 16, 18: 0, 19: 4, 20: 0}
ET_COL = {'pred': 3, 's32': 6, 'u32': 10, 'f32': 13, 'bf16': 15, 'tuple': 18}

# machine constants (ns, bytes)
TILE_B = 4096.0
BW = 1200.0                 # bytes / ns
C_VPU = 0.35
C_SUB = 1.5
C_LANE = 9.0
C_LANE_RED = 6.0
C_SUB_RED = 1.0
OVH_OP = 900.0
OVH_COPY = 700.0
OVH_FUS = 400.0
R_MXU = 1.37e5              # flop / ns (bf16)
ICI_BW = 25.0
OVH_COLL = 5000.0
BASE = 30000.0
FOLD_RATIO = 8.0
DEBUG = {}
VMEM = 16 * 1024 * 1024


# ----------------------------------------------------------------------------------
# graph parsing (shared by the law and by the config generator)

class Parsed:
    pass


def parse_graph(nf, opc, edges):
    P = Parsed()
    n = len(opc)
    P.n = n
    P.op = [int(x) for x in opc]
    dims = []
    for i in range(n):
        d = []
        for x in nf[i, 21:27]:
            if x <= 0:
                break
            d.append(int(x))
        dims.append(tuple(d))
    P.dims = dims
    P.rank = [len(d) for d in dims]
    P.vol = [float(np.prod(d)) if d else 1.0 for d in dims]
    oh = nf[:, 2:21]
    eb = []
    for i in range(n):
        k = int(np.argmax(oh[i])) + 2 if oh[i].max() > 0 else 13
        eb.append(ET_BYTES.get(k, 4) or 4)
    P.eb = eb
    P.is_root = nf[:, 0] > 0.5
    P.attr = nf[:, 31:37].astype(np.int64)
    P.win = nf[:, 37:43].astype(np.int64)
    P.conv = nf[:, 93:107].astype(np.int64)
    P.fgc = nf[:, 107]
    lay = []
    for i in range(n):
        r = P.rank[i]
        L = [int(x) for x in nf[i, 134:134 + r]]
        if sorted(L) != list(range(r)):
            L = list(range(r - 1, -1, -1))
        lay.append(tuple(L))
    P.layout = lay
    prods = [[] for _ in range(n)]
    cons = [[] for _ in range(n)]
    for u, v in edges:
        prods[int(u)].append(int(v))
        cons[int(v)].append(int(u))
    P.prods = [sorted(set(p)) for p in prods]
    P.cons = [sorted(set(c)) for c in cons]
    # operand roles
    P.role = {}
    for i in range(n):
        o = P.op[i]
        if o == 26:
            P.role[i] = conv_roles(P, i)
        elif o == 34:
            P.role[i] = dot_roles(P, i)
        elif o in (75, 98):
            P.role[i] = (data_operand(P, i), None)
    return P


def tensor_prods(P, i):
    return [p for p in P.prods[i] if P.rank[p] > 0 and P.op[p] not in (100, 102)]


def conv_dn(P, i):
    c = P.conv[i]
    r = P.rank[i]
    ns = r - 2
    return dict(ib=int(c[0]), if_=int(c[1]), isp=[int(x) for x in c[2:2 + ns]],
                kif=int(c[6]), kof=int(c[7]), ksp=[int(x) for x in c[8:8 + ns]],
                ob=int(c[12]), of=int(c[13]))


def conv_roles(P, i):
    cand = tensor_prods(P, i)
    dn = conv_dn(P, i)
    do = P.dims[i]
    r = P.rank[i]

    def ok(a, b):
        da, db = P.dims[a], P.dims[b]
        if len(da) != r or len(db) != r:
            return False
        try:
            return (da[dn['ib']] == do[dn['ob']] and db[dn['kof']] == do[dn['of']]
                    and da[dn['if_']] == db[dn['kif']] * max(1, int(P.fgc[i])))
        except IndexError:
            return False
    if len(cand) >= 2:
        for a in cand:
            for b in cand:
                if a != b and ok(a, b):
                    return (a, b)
        return (cand[-1], cand[0])
    if len(cand) == 1:
        return (cand[0], None)
    return (None, None)


def dot_roles(P, i):
    cand = tensor_prods(P, i)
    do = P.dims[i]
    r = P.rank[i]

    def ok(a, b):
        da, db = P.dims[a], P.dims[b]
        if len(da) != r or len(db) != r or r < 2:
            return False
        return (da[-2] == do[-2] and db[-1] == do[-1] and da[-1] == db[-2]
                and da[:-2] == do[:-2] and db[:-2] == do[:-2])
    if len(cand) >= 2:
        for a in cand:
            for b in cand:
                if a != b and ok(a, b):
                    return (a, b)
        return (cand[0], cand[-1])
    if len(cand) == 1:
        return (cand[0], None)
    return (None, None)


def data_operand(P, i):
    cand = tensor_prods(P, i)
    for p in cand:
        if P.vol[p] == P.vol[i]:
            return p
    if cand:
        return cand[0]
    return None


# ----------------------------------------------------------------------------------
# layout helpers (vectorised over configs: layouts are (k, r) int arrays)

def rowmajor(r):
    return np.arange(r - 1, -1, -1, dtype=np.int64)[None, :]


def is_rowmajor(L):
    r = L.shape[1]
    if r <= 1:
        return np.ones(L.shape[0], dtype=bool)
    return np.all(L == rowmajor(r), axis=1)


def tiles(d, eb, L):
    """register tiles of a tensor with dims d, element bytes eb, layouts L (k, r)."""
    r = len(d)
    if r == 0:
        return np.ones(1)
    da = np.asarray(d, dtype=np.float64)
    vol = float(np.prod(da))
    sub = max(1, 32 // max(1, eb))
    m0 = da[L[:, 0]]
    m1 = da[L[:, 1]] if r >= 2 else np.ones_like(m0)
    rest = vol / (m0 * m1)
    m0i = m0.astype(np.int64)
    fold = (m0 < 128) & ((128 % np.maximum(m0i, 1)) == 0) & (m1 >= FOLD_RATIO * m0)
    t2 = np.where(fold, np.ceil(m0 * m1 / (128.0 * sub)),
                  np.ceil(m0 / 128.0) * np.ceil(m1 / sub))
    return t2 * rest


def smax(ovh, work):
    return (ovh ** 4 + work ** 4) ** 0.25


def copy_cost(d, eb, A, B, fused=False):
    r = len(d)
    if r <= 1:
        return np.zeros(1)
    same = np.all(A == B, axis=1)
    if np.all(same):
        return np.zeros(1)
    tA = tiles(d, eb, A)
    tB = tiles(d, eb, B)
    mem = (tA + tB) * TILE_B / BW
    lane_same = A[:, 0] == B[:, 0]
    sub_same = A[:, 1] == B[:, 1]
    tmax = np.maximum(tA, tB)
    x = np.where(lane_same, np.where(sub_same, 0.3 * mem, tmax * C_SUB), tmax * C_LANE)
    if fused:
        c = 0.25 * mem + x
    else:
        c = OVH_COPY + mem + x
    return np.where(same, 0.0, c)


def resolve(block, r, fallback):
    """block (k, 6) with -1 = free; fallback (k' , r) -> layouts (max(k,k'), r)."""
    if r == 0:
        return np.zeros((1, 0), dtype=np.int64)
    k = max(block.shape[0], fallback.shape[0])
    fixed = block[:, :r].astype(np.int64)
    fixed = np.where((fixed >= 0) & (fixed < r), fixed, -1)
    if np.all(fixed < 0):
        return fallback
    fixed = np.broadcast_to(fixed, (k, r))
    fb = np.broadcast_to(fallback, (k, r))
    posF = np.argsort(fb, axis=1)  # inverse permutation
    key = r + posF.astype(np.int64)
    keyext = np.concatenate([key, np.zeros((k, 1), dtype=np.int64)], axis=1)
    idx = np.where(fixed >= 0, fixed, r)
    vals = np.broadcast_to(np.arange(r, dtype=np.int64)[None, :], (k, r))
    # only one write per real column (prefix entries are distinct)
    np.put_along_axis(keyext, idx, vals, axis=1)
    keyext = keyext[:, :r]
    # entries that were not written keep r + posF, entries written get position j
    return np.argsort(keyext, axis=1, kind='stable')


def squeeze_const(L):
    if L.shape[0] > 1 and np.all(L == L[:1]):
        return L[:1]
    return L


def lane_util(c):
    c = np.asarray(c, dtype=np.float64)
    return c / (np.ceil(c / 128.0) * 128.0)


# ----------------------------------------------------------------------------------
# LAYOUT LAW

def conv_default(P, i):
    dn = conv_dn(P, i)
    do = P.dims[i]
    r = len(do)
    of, ob = dn['of'], dn['ob']
    sp = [x for x in range(r) if x not in (of, ob)]
    second = ob if do[ob] >= 8 else (sp[-1] if sp else ob)
    rest = [x for x in range(r - 1, -1, -1) if x not in (of, second)]
    return np.array([[of, second] + rest], dtype=np.int64)


def layout_law(nf, opc, edges, splits, ids, ncf, P=None):
    """noise-free runtime (ns, float64) of every config row."""
    if P is None:
        P = parse_graph(nf, opc, edges)
    n = P.n
    c = ncf.shape[0]
    flat = np.ascontiguousarray(ncf.reshape(c, -1))
    uniq, inv = np.unique(flat, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    cu = uniq.shape[0]
    blocks = uniq.reshape(cu, len(ids), 18).astype(np.int64)
    cfg_of = {int(v): j for j, v in enumerate(ids)}
    NEG = -np.ones((1, 6), dtype=np.int64)

    def blk(i, part):
        j = cfg_of.get(i)
        if j is None:
            return NEG
        b = blocks[:, j, part * 6:(part + 1) * 6]
        if np.all(b == b[:1]):
            return b[:1]
        return b

    L = [None] * n
    C = np.zeros(cu)
    M = 0.0
    # root of the program: highest-id root
    roots = np.nonzero(P.is_root)[0]
    prog_root = int(roots[-1]) if len(roots) else n - 1
    # first same-shaped elementwise user of FLEX nodes
    flex_owner = {}
    for p in range(n):
        if P.op[p] in FLEX and P.rank[p] >= 2:
            for u in P.cons[p]:
                if P.op[u] in EW_WEIGHT and P.dims[u] == P.dims[p]:
                    flex_owner[p] = u
                    break
    tiles_cache = {}

    def T(i, Li):
        if Li.shape[0] == 1:
            key = (i, tuple(Li[0]))
            v = tiles_cache.get(key)
            if v is None:
                v = tiles(P.dims[i], P.eb[i], Li)
                tiles_cache[key] = v
            return v
        return tiles(P.dims[i], P.eb[i], Li)

    def single_ew_user(p):
        return P.op[p] in EW_WEIGHT and len(P.cons[p]) == 1

    def edge_copy(p, need):
        if P.rank[p] <= 1 or L[p] is None:
            return 0.0
        return copy_cost(P.dims[p], P.eb[p], L[p], need, fused=single_ew_user(p))

    for i in range(n):
        o = P.op[i]
        r = P.rank[i]
        d = P.dims[i]
        RM = rowmajor(r)
        if o in EW_WEIGHT or o in FOLLOW_SHAPED:
            src = None
            shaped = o in FOLLOW_SHAPED
            for p in P.prods[i]:
                if P.op[p] in FLEX or r == 0 or L[p] is None:
                    continue
                if P.dims[p] == d or (shaped and P.rank[p] == r):
                    src = p
                    break
            Li = L[src] if src is not None else RM
            if o == 11 or o == 5:
                src2 = data_operand(P, i)
                if src2 is not None and P.rank[src2] == r and L[src2] is not None:
                    Li = L[src2]
            L[i] = Li
            if r == 0:
                if o == 5:
                    M += OVH_COLL
                continue
            t = T(i, Li)
            if o in EW_WEIGHT:
                C = C + t * (C_VPU * EW_WEIGHT[o])
                mat = (len(P.cons[i]) != 1 or i == prog_root or
                       any(P.op[u] not in EW_WEIGHT for u in P.cons[i]))
                if mat:
                    C = C + smax(OVH_FUS, t * TILE_B / BW)
                for p in P.prods[i]:
                    if p == src:
                        continue
                    if P.op[p] in FLEX:
                        if flex_owner.get(p) == i:
                            C = C + T(p, Li) * (0.5 * C_VPU)
                        continue
                    if P.dims[p] == d:
                        C = C + edge_copy(p, Li)
            elif o == 5:
                M += OVH_COLL + P.vol[i] * P.eb[i] / ICI_BW
            elif o == 11:
                pass
            else:
                a = src if src is not None else data_operand(P, i)
                if a is not None and P.rank[a] == r:
                    da = P.dims[a]
                    changed = [x for x in range(r) if da[x] != d[x]]
                    ta = tiles(da, P.eb[a], Li)
                else:
                    changed = list(range(r))
                    ta = t
                mem = (ta + t) * TILE_B / BW
                lane_ch = np.isin(Li[:, 0], changed)
                sub_ch = np.isin(Li[:, 1], changed) if r >= 2 else np.zeros(Li.shape[0], bool)
                if o in (72, 84):
                    w = [max(1, int(x)) for x in P.win[i, :r]]
                    wp = float(np.prod(w))
                    wl = np.asarray(w)[Li[:, 0]] > 1
                    work = mem + ta * wp * (C_VPU + wl * 0.25 * C_LANE)
                    if o == 84:
                        work = work * 2.0
                else:
                    work = mem + t * (lane_ch * 0.5 * C_LANE + sub_ch * 0.5 * C_SUB)
                C = C + smax(OVH_OP, work)
                for p in P.prods[i]:
                    if p != src and P.rank[p] == r and P.op[p] not in FLEX and r >= 2:
                        C = C + edge_copy(p, Li)
            continue
        if o in FLEX:
            L[i] = RM
            if r > 0 and i not in flex_owner:
                C = C + T(i, RM) * (0.5 * C_VPU)
            continue
        if o in ZERO:
            L[i] = RM
            if i == prog_root:
                for p in P.prods[i]:
                    if P.rank[p] >= 2 and L[p] is not None:
                        C = C + edge_copy(p, rowmajor(P.rank[p]))
            continue
        if o == 70:
            a = data_operand(P, i)
            if a is None or L[a] is None or P.rank[a] == 0:
                L[i] = RM
                continue
            La = L[a]
            ra = P.rank[a]
            nred = ra - r
            red = [int(x) for x in P.attr[i, :max(nred, 0)]]
            ta = T(a, La)
            lane_red = np.isin(La[:, 0], red)
            sub_red = np.isin(La[:, 1], red) if ra >= 2 else np.zeros(La.shape[0], bool)
            work = ta * (C_VPU + lane_red * C_LANE_RED + sub_red * C_SUB_RED) + ta * TILE_B / BW
            C = C + smax(OVH_OP, work)
            if r > 0:
                keep = [x for x in range(ra) if x not in red]
                remap = np.full(ra, -1, dtype=np.int64)
                for k2, x in enumerate(keep):
                    remap[x] = k2
                Lm = remap[La]
                Lo = Lm[Lm >= 0].reshape(La.shape[0], r) if len(keep) == r else RM
                L[i] = squeeze_const(Lo)
            else:
                L[i] = RM
            continue
        if o in CONFIGURABLE:
            a, b = P.role.get(i, (None, None))
            if a is None or L[a] is None:
                L[i] = RM
                continue
            ra = P.rank[a]
            Lp = L[a]
            Lin = squeeze_const(resolve(blk(i, 1), ra, Lp))
            C = C + edge_copy(a, Lin)
            if o == 98:
                perm = np.array([int(x) for x in P.attr[i, :r]], dtype=np.int64)
                if sorted(perm.tolist()) != list(range(r)):
                    perm = np.arange(r)
                invp = np.argsort(perm)
                Lo = squeeze_const(resolve(blk(i, 0), r, invp[Lin]))
                L[i] = Lo
                if r >= 2:
                    C = C + copy_cost(P.dims[a], P.eb[a], Lin, perm[Lo])
                continue
            if o == 75:
                Lo = squeeze_const(resolve(blk(i, 0), r, RM))
                L[i] = Lo
                if r == 0 and ra == 0:
                    continue
                da = P.dims[a]
                sub = max(1, 32 // P.eb[i])
                di1 = da[-1] if ra >= 1 else 1
                do1 = d[-1] if r >= 1 else 1
                di2 = da[-2] if ra >= 2 else 1
                do2 = d[-2] if r >= 2 else 1
                keep = (di1 == do1) and (di2 == do2 or (di2 % sub == 0 and do2 % sub == 0))
                bitcast = is_rowmajor(Lin) & is_rowmajor(Lo) & keep
                if np.all(bitcast):
                    continue
                ti = tiles(da, P.eb[a], Lin) if ra > 0 else np.ones(1)
                to = tiles(d, P.eb[i], Lo) if r > 0 else np.ones(1)
                m0i = np.asarray(da, float)[Lin[:, 0]] if ra > 0 else np.ones(1)
                m0o = np.asarray(d, float)[Lo[:, 0]] if r > 0 else np.ones(1)
                x = np.where(m0i != m0o, C_LANE, C_SUB) * np.maximum(ti, to)
                work = (ti + to) * TILE_B / BW + x
                C = C + np.where(bitcast, 0.0, smax(OVH_OP, work))
                continue
            # convolution / dot
            if b is None or L[b] is None:
                Lo = squeeze_const(resolve(blk(i, 0), r, RM))
                L[i] = Lo
                C = C + smax(OVH_OP, T(i, Lo) * TILE_B / BW)
                continue
            rb = P.rank[b]
            if o == 26:
                Lk = squeeze_const(resolve(blk(i, 2), rb, L[b]))
                C = C + edge_copy(b, Lk)
                Lo = squeeze_const(resolve(blk(i, 0), r, conv_default(P, i)))
                L[i] = Lo
                dn = conv_dn(P, i)
                cin = P.dims[a][dn['if_']]
                cout = d[dn['of']]
                kspat = float(np.prod([P.dims[b][x] for x in dn['ksp']])) if dn['ksp'] else 1.0
                fgc = max(1.0, float(P.fgc[i]))
                flops = 2.0 * P.vol[i] * kspat * cin / fgc
                util = lane_util(cin * kspat) * lane_util(cout)
                f_in = Lin[:, 0] != dn['if_']
                f_out = Lo[:, 0] != dn['of']
                f_k = (Lk[:, 0] != dn['kof']) | (Lk[:, 1] != dn['kif'])
            else:
                Lk = L[b]
                Lo = squeeze_const(resolve(blk(i, 0), r, RM))
                L[i] = Lo
                K = P.dims[a][-1]
                N = d[-1]
                Mm = d[-2]
                flops = 2.0 * P.vol[i] * K
                util = lane_util(K) * lane_util(N) * min(1.0, Mm / 8.0)
                f_in = Lin[:, 0] != ra - 1
                f_out = Lo[:, 0] != r - 1
                f_k = (Lk[:, 0] != rb - 1) | (Lk[:, 1] != rb - 2)
            rate = R_MXU if P.eb[i] <= 2 else R_MXU / 3.0
            mxu = flops / (rate * max(util, 1e-3))
            ti = T(a, Lin) if Lin.shape[0] == 1 else tiles(P.dims[a], P.eb[a], Lin)
            tk = tiles(P.dims[b], P.eb[b], Lk)
            to = T(i, Lo) if Lo.shape[0] == 1 else tiles(d, P.eb[i], Lo)
            mem = (ti + tk + to) * TILE_B / BW
            x = 0.5 * C_LANE * (f_in * ti + f_out * to + f_k * tk)
            work = np.maximum(mxu, mem) + 0.15 * np.minimum(mxu, mem) + x
            C = C + smax(OVH_OP, work)
            continue
        # everything else: fixed cost, row-major operands
        L[i] = RM
        if r > 0 or o in ROWMAJOR_NEED:
            C = C + smax(OVH_OP, max(P.vol[i], 1.0) * P.eb[i] / BW * 1.5)
        if o in ROWMAJOR_NEED:
            for p in P.prods[i]:
                if P.rank[p] >= 2 and L[p] is not None:
                    C = C + edge_copy(p, rowmajor(P.rank[p]))
    C = np.broadcast_to(C, (cu,))
    DEBUG['C'], DEBUG['M'] = C, M
    Tt = np.maximum(C, M) + 0.25 * np.minimum(C, M) + BASE
    return Tt[inv].astype(np.float64)


# ----------------------------------------------------------------------------------
# TILE LAW

def tile_main(P):
    best, bv = None, -1.0
    for i in range(P.n):
        if P.op[i] in (63, 100, 41) or P.rank[i] == 0:
            continue
        if P.vol[i] >= bv:
            best, bv = i, P.vol[i]
    return best


def tile_units(d, L, eb):
    phys = [d[x] for x in reversed(L)]  # major -> minor
    r = len(phys)
    sub = max(1, 32 // max(1, eb))
    U = list(phys)
    unit = [1] * r
    U[-1] = int(math.ceil(phys[-1] / 128.0))
    unit[-1] = 128
    if r >= 2:
        U[-2] = int(math.ceil(phys[-2] / float(sub)))
        unit[-2] = sub
    return np.array(phys, float), np.array(U, float), np.array(unit, float)


def tile_law(nf, opc, edges, cfg, P=None):
    if P is None:
        P = parse_graph(nf, opc, edges)
    c = cfg.shape[0]
    m = tile_main(P)
    d = P.dims[m]
    Lm = P.layout[m]
    r = len(d)
    eb = P.eb[m]
    phys, U, unit = tile_units(d, Lm, eb)
    physdims = list(reversed(Lm))            # logical dim at each physical position
    b = np.clip(cfg[:, 8:8 + r].astype(np.float64), 1.0, U[None, :])
    ntile = np.prod(np.ceil(U[None, :] / b), axis=1)
    V = np.prod(b, axis=1)
    volm = P.vol[m]
    # fused elementwise work on X-shaped nodes
    ops_w = 0.0
    nops = 0
    for i in range(P.n):
        if P.dims[i] == d:
            if P.op[i] in EW_WEIGHT:
                ops_w += EW_WEIGHT[P.op[i]]
                nops += 1
            elif P.op[i] in FLEX:
                ops_w += 0.5
    ops_w = max(ops_w, 0.5)
    fus = [i for i in range(P.n) if P.op[i] == 41]
    f = fus[-1] if fus else P.n - 1
    ins = [p for p in P.prods[f] if P.op[p] == 63]
    inner = [p for p in P.prods[f] if P.op[p] != 63]
    outs = []
    for p in inner:
        if P.op[p] == 100:
            outs += [q for q in P.prods[p] if P.rank[q] > 0]
        elif P.rank[p] > 0:
            outs.append(p)
    if not outs:
        outs = [m]
    mx = [i for i in range(P.n) if P.op[i] in (26, 34)]
    mxu_shapes = set()
    if mx:
        a0, k0 = P.role.get(mx[-1], (None, None))
        for q in (a0, k0):
            if q is not None:
                mxu_shapes.add(P.dims[q])
    stream_b = np.zeros(c)
    big_in = 0
    for s in ins + outs:
        if s in ins and P.dims[s] in mxu_shapes:
            continue
        vs = P.vol[s] * P.eb[s]
        if P.vol[s] >= volm / 2.0:
            stream_b = stream_b + V * TILE_B * (P.vol[s] / volm) * (P.eb[s] / float(eb))
            if s in ins:
                big_in += 1
        else:
            stream_b = stream_b + np.minimum(vs, b[:, -1] * 128.0 * P.eb[s] * 8.0)
    dma_b = stream_b.copy()
    vmem_b = 2.0 * stream_b
    # register pressure and unrolling
    live = 1 + big_in + nops // 4
    ib = b[:, -1] * (b[:, -2] if r >= 2 else 1.0)
    u = np.where(ib <= 64, ib, 8.0)
    press = u * live
    spill = np.where(press > 48, 0.8 * live * (press - 48) / press, 0.0)
    comp = V * (C_VPU * ops_w + 6.0 / u + spill)
    ndesc = (np.prod(b[:, :-2], axis=1) if r > 2 else np.ones(c)) * \
        np.where(b[:, -1] >= U[-1], 1.0, b[:, -2] if r >= 2 else 1.0)
    # in-kernel relayout (copy/transpose whose operand is laid out differently)
    for i in range(P.n):
        if P.op[i] not in (27, 98) or P.dims[i] != d:
            continue
        a = data_operand(P, i)
        if a is None or P.rank[a] != r:
            continue
        La = P.layout[a]
        if P.op[i] == 98:
            perm = [int(x) for x in P.attr[i, :r]]
            La = tuple(perm.index(x) for x in La) if sorted(perm) == list(range(r)) else La
        if La[0] != Lm[0]:
            comp = comp + V * 0.5 * C_LANE
        elif r >= 2 and La[1] != Lm[1]:
            comp = comp + V * C_SUB
        # the operand is read with runs of `run` contiguous elements: DMA bursts
        # are at least 64 bytes, shorter runs waste bandwidth
        q = physdims.index(La[0])
        run = np.minimum(b[:, q] * unit[q], phys[q])
        waste = np.maximum(1.0, 64.0 / (run * P.eb[a]))
        dma_b = dma_b + V * TILE_B * (waste - 1.0)
    # reductions
    for i in range(P.n):
        if P.op[i] != 70:
            continue
        a = data_operand(P, i)
        if a is None or P.dims[a] != d:
            continue
        nred = P.rank[a] - P.rank[i]
        red = [int(x) for x in P.attr[i, :max(nred, 0)]]
        pos = [physdims.index(x) for x in red if x in physdims]
        if not pos:
            continue
        split = np.zeros(c, dtype=bool)
        for q in pos:
            split |= b[:, q] < U[q]
        out_tile = V * TILE_B / np.prod(b[:, pos], axis=1)
        dma_b = dma_b + np.where(split, 2.0 * out_tile, 0.0)
        if (r - 1) in pos:
            comp = comp + (V / b[:, -1]) * 7.0 + V * 0.2
        if r >= 2 and (r - 2) in pos:
            comp = comp + (V / b[:, -2]) * 1.5
    # conv / dot kernels
    kstep = np.zeros(c)
    if mx:
        i = mx[-1]
        a, kb = P.role.get(i, (None, None))
        if a is not None and kb is not None:
            dk = P.dims[kb]
            Lk = P.layout[kb]
            physk, Uk, unitk = tile_units(dk, Lk, P.eb[kb])
            rk = len(dk)
            kcfg = cfg[:, 0:rk].astype(np.float64)
            kb_ = np.where(kcfg >= 1, np.clip(kcfg, 1.0, Uk[None, :]), Uk[None, :])
            nk = np.prod(np.ceil(Uk[None, :] / kb_), axis=1)
            chunk = np.minimum(physk[None, :], kb_ * unitk[None, :])
            physorder = list(reversed(Lk))
            if P.op[i] == 26:
                dn = conv_dn(P, i)
                kin, kout = dn['kif'], dn['kof']
                kspat = float(np.prod([dk[x] for x in dn['ksp']])) if dn['ksp'] else 1.0
                cin = P.dims[a][dn['if_']]
                flops = 2.0 * P.vol[i] * kspat * cin / max(1.0, float(P.fgc[i]))
            else:
                kin, kout = rk - 2, rk - 1
                flops = 2.0 * P.vol[i] * P.dims[a][-1]
            ci = chunk[:, physorder.index(kin)]
            co = chunk[:, physorder.index(kout)]
            util = np.minimum(1.0, ci / 128.0) * np.minimum(1.0, co / 128.0)
            rate = R_MXU if P.eb[i] <= 2 else R_MXU / 3.0
            comp = comp + flops / ntile / (rate * np.maximum(util, 1e-3))
            wbytes = P.vol[kb] * P.eb[kb]
            in_tile = P.vol[a] * P.eb[a] / ntile
            wchunk = wbytes / nk
            resident = in_tile + 2.0 * wchunk + 2.0 * V * TILE_B <= VMEM
            dma_b = dma_b + wbytes + in_tile * np.where(resident, 1.0, nk)
            vmem_b = vmem_b + in_tile + 2.0 * wchunk
            kstep = nk * 120.0
    dma = dma_b / BW + ndesc * 40.0
    fits = vmem_b <= VMEM
    per_tile = np.where(fits, np.maximum(comp, dma), comp + dma) + 350.0 + kstep
    total = 2000.0 + ntile * per_tile + dma
    return total.astype(np.float64)


def tile_relayout_pos(P, m):
    """physical position (in X) of the minor dim of an in-kernel relayout's operand."""
    d = P.dims[m]
    r = len(d)
    physdims = list(reversed(P.layout[m]))
    for i in range(P.n):
        if P.op[i] in (27, 98) and P.dims[i] == d:
            a = data_operand(P, i)
            if a is not None and P.rank[a] == r:
                La = P.layout[a]
                if P.op[i] == 98:
                    perm = [int(x) for x in P.attr[i, :r]]
                    if sorted(perm) == list(range(r)):
                        La = tuple(perm.index(x) for x in La)
                return physdims.index(La[0])
    return None


def grow(U, order, budget):
    b = np.ones(len(U))
    for q in order:
        cur = float(np.prod(b))
        lim = max(1.0, math.floor(budget / cur))
        if U[q] <= lim:
            b[q] = U[q]
        else:
            b[q] = math.ceil(U[q] / math.ceil(U[q] / lim))  # balanced split
            break
    return b


def tile_candidates(P):
    """the compiler's own heuristic tile candidates (output bounds, kernel bounds)."""
    m = tile_main(P)
    d = P.dims[m]
    phys, U, unit = tile_units(d, P.layout[m], P.eb[m])
    r = len(d)
    orders = [list(range(r - 1, -1, -1))]
    q = tile_relayout_pos(P, m)
    if q is not None and q != r - 1:
        orders.append([q] + [x for x in range(r - 1, -1, -1) if x != q])
    kb = None
    mx = [i for i in range(P.n) if P.op[i] in (26, 34)]
    if mx:
        a, k = P.role.get(mx[-1], (None, None))
        if k is not None:
            physk, Uk, unitk = tile_units(P.dims[k], P.layout[k], P.eb[k])
            kb = Uk.copy()
            wb = P.vol[k] * P.eb[k]
            q = 0
            while wb > VMEM / 8 and q < len(kb) - 1:
                half = max(1.0, math.ceil(kb[q] / 2.0))
                wb = wb * half / kb[q]
                kb[q] = half
                if half == 1.0:
                    q += 1
    cands = []
    for order in orders:
        for budget in (128.0, 512.0, 2048.0):
            cands.append((grow(U, order, budget), kb))
    return cands


def tile_cfg_row(b, kb):
    v = np.zeros(24, dtype=np.float32)
    if kb is not None:
        v[0:len(kb)] = kb
        v[6] = float(np.sum(kb))
        v[7] = float(np.prod(kb))
    v[8:8 + len(b)] = b
    v[14] = float(np.sum(b))
    v[15] = float(np.prod(b))
    return v


def tile_default(P):
    cands = tile_candidates(P)
    rows = np.stack([tile_cfg_row(b, kb) for b, kb in cands])
    t = tile_law(None, None, None, rows, P)
    return cands[int(np.argmin(t))]


# ----------------------------------------------------------------------------------
# node features / HLO builder

class Node:
    __slots__ = ('op', 'shape', 'et', 'operands', 'called', 'attrs', 'root', 'layout')


class HLO:
    def __init__(self, tile=False):
        self.nodes = []
        self.splits = [0]
        self.tile = tile

    def add(self, op, shape=(), et='f32', operands=(), called=(), layout=None, **attrs):
        nd = Node()
        nd.op = OP[op] if isinstance(op, str) else op
        nd.shape = tuple(int(x) for x in shape)
        nd.et = et
        nd.operands = [int(x) for x in operands]
        nd.called = [int(x) for x in called]
        nd.attrs = attrs
        nd.root = False
        nd.layout = layout
        self.nodes.append(nd)
        return len(self.nodes) - 1

    def mark_root(self, i):
        self.nodes[i].root = True

    def split(self):
        self.splits.append(len(self.nodes))

    def shape(self, i):
        return self.nodes[i].shape

    def et(self, i):
        return self.nodes[i].et

    # ---- small computations
    def reducer(self, kind='add', et='f32'):
        p0 = self.add('parameter', (), et, param=0)
        p1 = self.add('parameter', (), et, param=1)
        r = self.add(kind, (), et, (p0, p1))
        self.mark_root(r)
        return r

    def to_arrays(self):
        n = len(self.nodes)
        nf = np.zeros((n, 140), dtype=np.float32)
        opc = np.zeros(n, dtype=np.uint8)
        edges = []
        for i, nd in enumerate(self.nodes):
            opc[i] = nd.op
            row = nf[i]
            row[0] = 1.0 if nd.root else 0.0
            row[ET_COL[nd.et]] = 1.0
            s = nd.shape
            for k, x in enumerate(s[:6]):
                row[21 + k] = x
            row[27] = float(sum(s))
            row[28] = float(np.prod(s)) if s else 1.0
            a = nd.attrs
            row[29] = a.get('tuple_size', 0)
            row[30] = a.get('param', 0)
            for k, x in enumerate(a.get('dims', [])[:6]):
                row[31 + k] = x
            win = a.get('window')
            # window: size, stride, pad lo, pad hi, window dilation, base dilation
            for f in range(6):
                vals = [w[f] for w in win] if win else []
                base = 37 + 8 * f
                for k, x in enumerate(vals[:6]):
                    row[base + k] = x
                row[base + 6] = float(sum(vals))
                row[base + 7] = float(np.prod(vals)) if vals else 1.0
            if win:
                rev = [w[6] for w in win]
                for k, x in enumerate(rev[:6]):
                    row[85 + k] = 1.0 if x else 0.0
                row[91] = float(sum(1 for x in rev if x))
                row[92] = float(sum(1 for x in rev if not x))
            cd = a.get('conv')
            if cd:
                row[93] = cd['ib']
                row[94] = cd['if_']
                for k, x in enumerate(cd['isp'][:4]):
                    row[95 + k] = x
                row[99] = cd['kif']
                row[100] = cd['kof']
                for k, x in enumerate(cd['ksp'][:4]):
                    row[101 + k] = x
                row[105] = cd['ob']
                row[106] = cd['of']
                row[107] = a.get('fgc', 1)
                row[108] = 1
            sl = a.get('slice', [])
            for f, base in ((0, 109), (1, 113), (2, 117)):
                vals = [x[f] for x in sl]
                for k, x in enumerate(vals[:2]):
                    row[base + k] = x
                row[base + 2] = float(sum(vals))
                row[base + 3] = float(np.prod(vals)) if vals else 1.0
            dss = a.get('dss', [])
            for k, x in enumerate(dss[:2]):
                row[121 + k] = x
            row[123] = float(sum(dss))
            row[124] = float(np.prod(dss)) if dss else 1.0
            pad = a.get('pad', [])
            for f, base in ((0, 125), (1, 129)):
                vals = [x[f] for x in pad]
                for k, x in enumerate(vals[:2]):
                    row[base + k] = x
                row[base + 2] = float(sum(vals))
                row[base + 3] = float(np.prod(vals)) if vals else 1.0
            row[133] = 1.0 if a.get('stable') else 0.0
            r = len(s)
            if r > 0:
                lay = nd.layout if nd.layout is not None else list(range(r - 1, -1, -1))
                for k, x in enumerate(lay[:6]):
                    row[134 + k] = x
            ops = sorted(set(nd.operands))
            for v in ops:
                edges.append((i, v))
            for v in nd.called:
                if v not in ops:
                    edges.append((i, v))
        e = np.array(edges, dtype=np.int64).reshape(-1, 2)
        return nf, opc, e


# ----------------------------------------------------------------------------------
# layout graph samplers

def same_pad(inp, k, s):
    out = (inp + s - 1) // s
    tot = max((out - 1) * s + k - inp, 0)
    return out, tot // 2, tot - tot // 2


class ConvNetGen:
    """Convolutional model (xla family): conv/bn/relu blocks, residuals, pooling,
    optional training step (batch statistics, gradient convs, all-reduces)."""

    def __init__(self, rng, g, tiny):
        self.rng = rng
        self.g = g
        self.tiny = tiny
        self.rank5 = rng.random() < 0.2
        self.et = 'bf16' if rng.random() < 0.5 else 'f32'
        self.training = rng.random() < 0.55
        self.pnum = 0
        self.add_red = None
        self.max_red = None
        self.weights = []
        self.has_grad = set()
        self.awkward = rng.random()  # probability of awkward channel counts

    def param(self, shape, et=None):
        i = self.g.add('parameter', shape, et or self.et, param=self.pnum)
        self.pnum += 1
        return i

    def chan(self, base):
        rng = self.rng
        if rng.random() < self.awkward:
            return int(rng.choice([12, 24, 40, 48, 72, 80, 96, 112, 144, 160, 192, 200, 240, 320, 384]))
        return int(base)

    def bcast(self, vec, shape, dim):
        return self.g.add('broadcast', shape, self.g.et(vec), (vec,), dims=[dim])

    def const_b(self, shape, et=None):
        c = self.g.add('constant', (), et or self.et)
        return self.g.add('broadcast', shape, et or self.et, (c,), dims=[])

    def conv(self, x, cout, k, stride):
        g = self.g
        s = g.shape(x)
        r = len(s)
        ns = r - 2
        cin = s[-1]
        w = self.param(tuple([k] * ns + [cin, cout]))
        self.weights.append(w)
        outsp, win = [], []
        for q in range(ns):
            o, pl, ph = same_pad(s[1 + q], k, stride)
            outsp.append(o)
            win.append((k, stride, pl, ph, 1, 1, False))
        oshape = (s[0],) + tuple(outsp) + (cout,)
        dn = dict(ib=0, if_=r - 1, isp=list(range(1, r - 1)), kif=ns, kof=ns + 1,
                  ksp=list(range(ns)), ob=0, of=r - 1)
        y = g.add('convolution', oshape, self.et, (x, w), window=win, conv=dn, fgc=1)
        return y, w

    def bn_relu(self, y):
        g = self.g
        s = g.shape(y)
        r = len(s)
        C = s[-1]
        if self.training and self.rng.random() < 0.7:
            zero = g.add('constant', (), 'f32')
            yf = y
            if self.et != 'f32':
                yf = g.add('convert', s, 'f32', (y,))
            mean = g.add('reduce', (C,), 'f32', (yf, zero), (self.add_red,), dims=list(range(r - 1)))
            cnt = g.add('constant', (), 'f32')
            cb = g.add('broadcast', (C,), 'f32', (cnt,), dims=[])
            mean = g.add('divide', (C,), 'f32', (mean, cb))
            mb = g.add('broadcast', s, 'f32', (mean,), dims=[r - 1])
            cen = g.add('subtract', s, 'f32', (yf, mb))
            sq = g.add('multiply', s, 'f32', (cen, cen))
            var = g.add('reduce', (C,), 'f32', (sq, zero), (self.add_red,), dims=list(range(r - 1)))
            eps = g.add('broadcast', (C,), 'f32', (cnt,), dims=[])
            var = g.add('add', (C,), 'f32', (var, eps))
            inv = g.add('rsqrt', (C,), 'f32', (var,))
            ib = g.add('broadcast', s, 'f32', (inv,), dims=[r - 1])
            y = g.add('multiply', s, 'f32', (cen, ib))
            if self.et != 'f32':
                y = g.add('convert', s, self.et, (y,))
        else:
            sc = self.param((C,))
            y = g.add('multiply', s, self.et, (y, self.bcast(sc, s, r - 1)))
        bi = self.param((C,))
        y = g.add('add', s, self.et, (y, self.bcast(bi, s, r - 1)))
        y = g.add('maximum', s, self.et, (y, self.const_b(s)))
        return y

    def block(self, x):
        rng = self.rng
        g = self.g
        s = g.shape(x)
        kind = rng.random()
        cin = s[-1]
        spatial = s[1]
        if kind < 0.45:
            stride = 2 if (spatial >= 8 and rng.random() < 0.2) else 1
            cout = self.chan(min(1024, cin * (2 if stride == 2 else 1)))
            k = int(rng.choice([1, 3, 3, 3, 5])) if not self.rank5 else int(rng.choice([1, 3, 3]))
            y, w = self.conv(x, cout, k, stride)
            y = self.bn_relu(y)
            if self.training and stride == 1 and rng.random() < 0.5:
                self.grad_convs(x, y, w, k)
            return y
        if kind < 0.7:
            # residual block
            y, w = self.conv(x, cin, 3, 1)
            y = self.bn_relu(y)
            y2, w2 = self.conv(y, cin, 1 if rng.random() < 0.5 else 3, 1)
            y2 = self.bn_relu(y2)
            z = g.add('add', s, self.et, (y2, x))
            if self.training and rng.random() < 0.4:
                self.grad_convs(y, y2, w2, g.shape(w2)[0])
            return g.add('maximum', s, self.et, (z, self.const_b(s)))
        if kind < 0.8 and spatial >= 4:
            # max pool
            ns = len(s) - 2
            outsp, win = [], [(1, 1, 0, 0, 1, 1, False)]
            for q in range(ns):
                o, pl, ph = same_pad(s[1 + q], 3, 2)
                outsp.append(o)
                win.append((3, 2, pl, ph, 1, 1, False))
            win.append((1, 1, 0, 0, 1, 1, False))
            oshape = (s[0],) + tuple(outsp) + (cin,)
            init = g.add('constant', (), self.et)
            y = g.add('reduce-window', oshape, self.et, (x, init), (self.max_red,), window=win)
            if self.training and rng.random() < 0.5:
                src = g.add('multiply', oshape, self.et, (y, self.const_b(oshape)))
                sas = g.add('select-and-scatter', s, self.et, (x, src, init),
                            (self.ge_comp, self.add_red), window=win)
                t = g.add('add', s, self.et, (sas, x))
                g.add('negate', s, self.et, (t,))
            return y
        if kind < 0.88:
            # space-to-depth style reshape + transpose + reshape
            if len(s) == 4 and s[1] % 2 == 0 and s[2] % 2 == 0 and s[1] >= 4:
                N, H, W, Cc = s
                a = g.add('reshape', (N, H // 2, 2, W // 2, 2, Cc), self.et, (x,))
                t = g.add('transpose', (N, H // 2, W // 2, 2, 2, Cc), self.et, (a,), dims=[0, 1, 3, 2, 4, 5])
                y = g.add('reshape', (N, H // 2, W // 2, 4 * Cc), self.et, (t,))
                return y
            y, w = self.conv(x, cin, 1, 1)
            return self.bn_relu(y)
        # concat of two branches
        y1, _ = self.conv(x, max(8, cin // 2), 1, 1)
        y2, _ = self.conv(x, max(8, cin // 2), 3, 1)
        s1, s2 = g.shape(y1), g.shape(y2)
        oshape = s1[:-1] + (s1[-1] + s2[-1],)
        y = g.add('concatenate', oshape, self.et, (y1, y2), dims=[len(s) - 1])
        return self.bn_relu(y)

    def grad_convs(self, x, y, w, k):
        """weight-gradient and data-gradient convolutions of a stride-1 conv."""
        g = self.g
        sx, sy, sw = g.shape(x), g.shape(y), g.shape(w)
        r = len(sx)
        ns = r - 2
        dy = g.add('multiply', sy, self.et, (y, self.const_b(sy)))
        # weight gradient: out = (k..k, Cin, Cout)
        win = []
        for q in range(ns):
            tot = k + sy[1 + q] - 1 - sx[1 + q]
            win.append((sy[1 + q], 1, tot // 2, tot - tot // 2, 1, 1, False))
        dn = dict(ib=r - 1, if_=0, isp=list(range(1, r - 1)), kif=0, kof=r - 1,
                  ksp=list(range(1, r - 1)), ob=ns, of=ns + 1)
        gw = g.add('convolution', sw, self.et, (x, dy), window=win, conv=dn, fgc=1)
        self.has_grad.add(w)
        if rng_bool(self.rng, 0.8):
            ar = g.add('all-reduce', sw, self.et, (gw,), (self.add_red,))
        else:
            ar = gw
        lr = self.const_b(sw)
        upd = g.add('multiply', sw, self.et, (ar, lr))
        g.add('subtract', sw, self.et, (w, upd))
        # data gradient: out = x shape, kernel used with swapped feature dims, reversed
        win = []
        for q in range(ns):
            tot = k - 1
            win.append((k, 1, tot // 2, tot - tot // 2, 1, 1, True))
        dn = dict(ib=0, if_=r - 1, isp=list(range(1, r - 1)), kif=ns + 1, kof=ns,
                  ksp=list(range(ns)), ob=0, of=r - 1)
        if sx[-1] >= 1:
            gx = g.add('convolution', sx, self.et, (dy, w), window=win, conv=dn, fgc=1)
            g.add('add', sx, self.et, (gx, x))

    def head(self, x):
        g = self.g
        s = g.shape(x)
        r = len(s)
        zero = g.add('constant', (), 'f32')
        xf = x if self.et == 'f32' else g.add('convert', s, 'f32', (x,))
        pooled = g.add('reduce', (s[0], s[-1]), 'f32', (xf, zero), (self.add_red,),
                       dims=list(range(1, r - 1)))
        ncls = int(self.rng.choice([10, 100, 1000, 1001, 21]))
        wfc = self.param((s[-1], ncls), 'f32')
        logits = g.add('dot', (s[0], ncls), 'f32', (pooled, wfc))
        mx = g.add('reduce', (s[0],), 'f32', (logits, zero), (self.max_red,), dims=[1])
        mb = g.add('broadcast', (s[0], ncls), 'f32', (mx,), dims=[0])
        sh = g.add('subtract', (s[0], ncls), 'f32', (logits, mb))
        ex = g.add('exponential', (s[0], ncls), 'f32', (sh,))
        sm = g.add('reduce', (s[0],), 'f32', (ex, zero), (self.add_red,), dims=[1])
        sb = g.add('broadcast', (s[0], ncls), 'f32', (sm,), dims=[0])
        pr = g.add('divide', (s[0], ncls), 'f32', (ex, sb))
        return pr


def rng_bool(rng, p):
    return bool(rng.random() < p)


def prefix_computations(rng, g, et, n_while):
    """reducers and while loops, placed before the main computation."""
    add_red = g.reducer('add', 'f32')
    max_red = g.reducer('maximum', 'f32')
    p0 = g.add('parameter', (), 'f32', param=0)
    p1 = g.add('parameter', (), 'f32', param=1)
    ge = g.add('compare', (), 'pred', (p0, p1))
    g.mark_root(ge)
    add_red_bf = g.reducer('add', et) if et != 'f32' else add_red
    whiles = []
    for _ in range(n_while):
        # body
        k = int(rng.integers(2, 5))
        shapes = [(), ] + [tuple(int(x) for x in rng.choice([4, 8, 16, 32, 128], size=int(rng.integers(1, 3))))
                           for _ in range(k - 1)]
        tp = g.add('parameter', (), 'tuple', param=0, tuple_size=k)
        gts = [g.add('get-tuple-element', s, 's32' if not s else 'f32', (tp,)) for s in shapes]
        one = g.add('constant', (), 's32')
        cnt = g.add('add', (), 's32', (gts[0], one))
        outs = [cnt]
        for q, s in enumerate(shapes[1:]):
            x = gts[q + 1]
            for _ in range(int(rng.integers(1, 6))):
                opn = rng.choice(['multiply', 'add', 'tanh', 'exponential', 'negate', 'maximum'])
                if opn in ('multiply', 'add', 'maximum'):
                    c = g.add('constant', (), 'f32')
                    b = g.add('broadcast', s, 'f32', (c,), dims=[])
                    x = g.add(str(opn), s, 'f32', (x, b))
                else:
                    x = g.add(str(opn), s, 'f32', (x,))
            outs.append(x)
        body_root = g.add('tuple', (), 'tuple', outs, tuple_size=k)
        g.mark_root(body_root)
        g.split()
        cp = g.add('parameter', (), 'tuple', param=0, tuple_size=k)
        cg = g.add('get-tuple-element', (), 's32', (cp,))
        lim = g.add('constant', (), 's32')
        cond_root = g.add('compare', (), 'pred', (cg, lim))
        g.mark_root(cond_root)
        g.split()
        whiles.append((body_root, cond_root, shapes))
    return add_red, max_red, ge, add_red_bf, whiles


def emit_whiles(g, whiles, rng):
    outs = []
    for body_root, cond_root, shapes in whiles:
        ins = []
        for s in shapes:
            if not s:
                ins.append(g.add('constant', (), 's32'))
            else:
                c = g.add('constant', (), 'f32')
                ins.append(g.add('broadcast', s, 'f32', (c,), dims=[]))
        t = g.add('tuple', (), 'tuple', ins, tuple_size=len(ins))
        w = g.add('while', (), 'tuple', (t,), (body_root, cond_root), tuple_size=len(ins))
        outs.append(g.add('get-tuple-element', shapes[-1], 'f32', (w,)))
    return outs


def finish_main(g, main_start, outs):
    used = set()
    for nd in g.nodes:
        used.update(nd.operands)
        used.update(nd.called)
    outs = list(outs)
    for i in range(main_start, len(g.nodes)):
        if i not in used and i not in outs and g.nodes[i].op not in (24, 63):
            outs.append(i)
    root = g.add('tuple', (), 'tuple', outs, tuple_size=len(outs))
    g.mark_root(root)
    g.split()


def n_candidates(g, start):
    return sum(1 for i in range(start, len(g.nodes)) if g.nodes[i].op in CONFIGURABLE)


def gen_convnet(rng, n_target, nc_target, tiny):
    g = HLO()
    et = 'bf16' if rng.random() < 0.5 else 'f32'
    n_while = int(rng.choice([0, 0, 1, 1, 2, 3]))
    add_red, max_red, ge, add_red_bf, whiles = prefix_computations(rng, g, et, n_while)
    main_start = len(g.nodes)
    gen = ConvNetGen(rng, g, tiny)
    gen.et = et
    gen.add_red, gen.max_red, gen.ge_comp = add_red, max_red, ge
    extras = emit_whiles(g, whiles, rng)
    if gen.rank5:
        N = int(rng.choice([1, 2, 4]))
        S = int(rng.choice([16, 24, 32, 48, 64] if not tiny else [8, 16]))
        shape = (N, S, S, S, int(rng.choice([1, 4, 8, 16, 32])))
    else:
        N = int(rng.choice([1, 2, 8, 16, 32, 64, 128]))
        S = int(rng.choice([28, 32, 56, 64, 112, 128, 224, 299] if not tiny else [14, 28, 32]))
        shape = (N, S, S, int(rng.choice([3, 4, 16, 32])))
    # keep activations in a sane size range
    while np.prod(shape) > 2.5e7:
        shape = (max(1, shape[0] // 2),) + shape[1:] if shape[0] > 1 else \
            (shape[0],) + tuple(max(4, x // 2) for x in shape[1:-1]) + (shape[-1],)
    x = gen.param(shape)
    x = g.add('convert', shape, et, (x,)) if rng.random() < 0.3 else x
    # stem conv
    c0 = gen.chan(int(rng.choice([16, 32, 64])))
    x, _ = gen.conv(x, c0, 3 if gen.rank5 else int(rng.choice([3, 7])), 1 if gen.rank5 else 2)
    x = gen.bn_relu(x)
    outs = list(extras)
    guard = 0
    while (len(g.nodes) < n_target or n_candidates(g, main_start) < nc_target) and guard < 400:
        guard += 1
        x = gen.block(x)
        s = g.shape(x)
        if np.prod(s) > 4e7:
            x, _ = gen.conv(x, max(8, s[-1] // 2), 1, 2)
    outs.append(gen.head(x))
    if gen.training:
        for w in gen.weights:
            if w in gen.has_grad:
                continue
            sw = g.shape(w)
            gacc = gen.param(sw)
            ar = g.add('all-reduce', sw, et, (gacc,), (add_red,))
            upd = g.add('multiply', sw, et, (ar, gen.const_b(sw)))
            g.add('subtract', sw, et, (w, upd))
    g.training, g.batch = gen.training, shape[0]
    finish_main(g, main_start, outs)
    return g, main_start


def gen_transformer(rng, n_target, nc_target, tiny):
    g = HLO()
    et = 'bf16' if rng.random() < 0.6 else 'f32'
    n_while = int(rng.choice([0, 1, 1, 2])) if not tiny else 0
    add_red, max_red, ge, add_red_bf, whiles = prefix_computations(rng, g, et, n_while)
    main_start = len(g.nodes)
    training = rng.random() < 0.5 and not tiny
    pn = [0]

    def param(shape, e=None):
        i = g.add('parameter', shape, e or et, param=pn[0])
        pn[0] += 1
        return i

    def cb(shape, e=None):
        c = g.add('constant', (), e or et)
        return g.add('broadcast', shape, e or et, (c,), dims=[])

    B = int(rng.choice([1, 2, 4, 8, 16, 32]))
    S = int(rng.choice([64, 128, 256, 384, 512] if not tiny else [16, 32, 64]))
    H = int(rng.choice([128, 256, 512, 768, 1024, 320, 200, 96]))
    dh = int(rng.choice([32, 64, 64, 128, 48])) if H % 64 == 0 else int(rng.choice([8, 16, 40, 32]))
    while H % dh != 0:
        dh //= 2
    nh = H // dh
    F = int(rng.choice([2, 4])) * H
    while (B * S * F > 3e7 or B * nh * S * S > 3e7) and B > 1:
        B //= 2
    while B * nh * S * S > 3e7 and S > 64:
        S //= 2
    gelu_tanh = rng.random() < 0.6
    extras = emit_whiles(g, whiles, rng)
    ids = param((B, S), 's32')
    emb = param((int(rng.choice([1000, 8000, 30522, 32000])), H))
    x = g.add('gather', (B, S, H), et, (emb, ids))
    outs = list(extras)
    weights = []
    all_w = []
    graded = set()

    def dense(x2, Win, Nout, name_b=True):
        w = param((Win, Nout))
        weights.append((w, x2))
        all_w.append(w)
        y = g.add('dot', (g.shape(x2)[0], Nout), et, (x2, w))
        if name_b:
            bvec = param((Nout,))
            bb = g.add('broadcast', g.shape(y), et, (bvec,), dims=[1])
            y = g.add('add', g.shape(y), et, (y, bb))
        return y

    def layernorm(x3):
        s = g.shape(x3)
        zero = g.add('constant', (), 'f32')
        xf = x3 if et == 'f32' else g.add('convert', s, 'f32', (x3,))
        mu = g.add('reduce', s[:-1], 'f32', (xf, zero), (add_red,), dims=[len(s) - 1])
        mub = g.add('broadcast', s, 'f32', (mu,), dims=list(range(len(s) - 1)))
        cen = g.add('subtract', s, 'f32', (xf, mub))
        sq = g.add('multiply', s, 'f32', (cen, cen))
        var = g.add('reduce', s[:-1], 'f32', (sq, zero), (add_red,), dims=[len(s) - 1])
        inv = g.add('rsqrt', s[:-1], 'f32', (var,))
        ib = g.add('broadcast', s, 'f32', (inv,), dims=list(range(len(s) - 1)))
        y = g.add('multiply', s, 'f32', (cen, ib))
        gam = param((s[-1],), 'f32')
        y = g.add('multiply', s, 'f32', (y, g.add('broadcast', s, 'f32', (gam,), dims=[len(s) - 1])))
        if et != 'f32':
            y = g.add('convert', s, et, (y,))
        return y

    guard = 0
    while (len(g.nodes) < n_target or n_candidates(g, main_start) < nc_target) and guard < 100:
        guard += 1
        s3 = (B, S, H)
        h = layernorm(x)
        h2 = g.add('reshape', (B * S, H), et, (h,))
        heads = []
        for nm in range(3):
            y = dense(h2, H, H)
            y = g.add('reshape', (B, S, nh, dh), et, (y,))
            y = g.add('transpose', (B, nh, S, dh), et, (y,), dims=[0, 2, 1, 3])
            heads.append(y)
        q, k, v = heads
        kt = g.add('transpose', (B, nh, dh, S), et, (k,), dims=[0, 1, 3, 2])
        sc = g.add('dot', (B, nh, S, S), et, (q, kt))
        sc = g.add('multiply', (B, nh, S, S), et, (sc, cb((B, nh, S, S))))
        if rng.random() < 0.5:
            mask = param((B, S), 'f32')
            mb = g.add('broadcast', (B, nh, S, S), 'f32', (mask,), dims=[0, 3])
            if et != 'f32':
                mb = g.add('convert', (B, nh, S, S), et, (mb,))
            sc = g.add('add', (B, nh, S, S), et, (sc, mb))
        zero = g.add('constant', (), et)
        mx = g.add('reduce', (B, nh, S), et, (sc, zero), (max_red,), dims=[3])
        mxb = g.add('broadcast', (B, nh, S, S), et, (mx,), dims=[0, 1, 2])
        e = g.add('exponential', (B, nh, S, S), et, (g.add('subtract', (B, nh, S, S), et, (sc, mxb)),))
        sm = g.add('reduce', (B, nh, S), et, (e, zero), (add_red_bf,), dims=[3])
        smb = g.add('broadcast', (B, nh, S, S), et, (sm,), dims=[0, 1, 2])
        p = g.add('divide', (B, nh, S, S), et, (e, smb))
        ctx = g.add('dot', (B, nh, S, dh), et, (p, v))
        ctx = g.add('transpose', (B, S, nh, dh), et, (ctx,), dims=[0, 2, 1, 3])
        ctx = g.add('reshape', (B * S, H), et, (ctx,))
        o = dense(ctx, H, H)
        o = g.add('reshape', s3, et, (o,))
        x = g.add('add', s3, et, (x, o))
        h = layernorm(x)
        h2 = g.add('reshape', (B * S, H), et, (h,))
        f = dense(h2, H, F)
        if gelu_tanh:
            c3 = g.add('multiply', (B * S, F), et, (f, g.add('multiply', (B * S, F), et, (f, f))))
            t = g.add('add', (B * S, F), et, (f, g.add('multiply', (B * S, F), et, (c3, cb((B * S, F))))))
            t = g.add('tanh', (B * S, F), et, (g.add('multiply', (B * S, F), et, (t, cb((B * S, F)))),))
            t = g.add('add', (B * S, F), et, (t, cb((B * S, F))))
            f = g.add('multiply', (B * S, F), et, (f, t))
        else:
            f = g.add('maximum', (B * S, F), et, (f, cb((B * S, F))))
        f = dense(f, F, H)
        f = g.add('reshape', s3, et, (f,))
        x = g.add('add', s3, et, (x, f))
        if training:
            # gradient of a few weights: x^T . dY with transposes, all-reduce, update
            for (w, xin) in weights[-4:]:
                if rng.random() < 0.5:
                    continue
                sw = g.shape(w)
                sx = g.shape(xin)
                dy = param((sx[0], sw[1]))
                xt = g.add('transpose', (sx[1], sx[0]), et, (xin,), dims=[1, 0])
                gw = g.add('dot', sw, et, (xt, dy))
                graded.add(w)
                ar = g.add('all-reduce', sw, et, (gw,), (add_red_bf,))
                upd = g.add('multiply', sw, et, (ar, cb(sw)))
                g.add('subtract', sw, et, (w, upd))
                wt = g.add('transpose', (sw[1], sw[0]), et, (w,), dims=[1, 0])
                gx = g.add('dot', (sx[0], sw[0]), et, (dy, wt))
                g.add('add', sx, et, (gx, xin))
            weights = []
    h = layernorm(x)
    h2 = g.add('reshape', (B * S, H), et, (h,))
    pool = g.add('slice', (B, H), et, (h2,), slice=[(0, S, B * S), (0, 1, H)])
    V = int(rng.choice([2, 3, 1000]))
    lo = dense(pool, H, V, name_b=False)
    outs.append(lo)
    if training:
        for w in all_w:
            if w in graded:
                continue
            sw = g.shape(w)
            gacc = param(sw)
            ar = g.add('all-reduce', sw, et, (gacc,), (add_red_bf,))
            upd = g.add('multiply', sw, et, (ar, cb(sw)))
            g.add('subtract', sw, et, (w, upd))
    g.training, g.batch, g.dims = training, B, (S, H, et)
    finish_main(g, main_start, outs)
    return g, main_start


# ----------------------------------------------------------------------------------
# layout config generation

def perm_options(rng, P, i, role, r):
    """a few plausible layouts for one tensor slot of a configurable node."""
    if r <= 1:
        return [list(range(r))]
    opts = [list(range(r - 1, -1, -1))]
    o = P.op[i]
    if o == 26 and role == 0:
        opts.append([int(x) for x in conv_default(P, i)[0]])
    if o == 26 and role == 1:
        dn = conv_dn(P, i)
        d = [x for x in range(r) if x not in (dn['if_'], dn['ib'])]
        opts.append([dn['if_'], dn['ib']] + d[::-1])
        opts.append([dn['ib'], dn['if_']] + d[::-1])
    if o == 26 and role == 2:
        dn = conv_dn(P, i)
        d = [x for x in range(r) if x not in (dn['kif'], dn['kof'])]
        opts.append([dn['kof'], dn['kif']] + d[::-1])
        opts.append([dn['kif'], dn['kof']] + d[::-1])
    for _ in range(int(rng.integers(1, 4))):
        opts.append([int(x) for x in rng.permutation(r)])
    sw = list(range(r - 1, -1, -1))
    sw[0], sw[1] = sw[1], sw[0]
    opts.append(sw)
    uniq = []
    for p in opts:
        if p not in uniq:
            uniq.append(p)
    return uniq


class SlotSpec:
    __slots__ = ('r', 'opts')


def config_slots(rng, P, ids):
    specs = []
    for i in ids:
        i = int(i)
        a, b = P.role.get(i, (None, None))
        ro = P.rank[i]
        ri = P.rank[a] if a is not None else 0
        rk = P.rank[b] if (b is not None and P.op[i] == 26) else 0
        slots = []
        for role, r in ((0, ro), (1, ri), (2, rk)):
            s = SlotSpec()
            s.r = r
            s.opts = perm_options(rng, P, i, role, r) if r > 0 else []
            slots.append(s)
        specs.append(slots)
    return specs


def write_slot(block, s, rng, mode):
    """mode: 'full', 'pre2', 'pre1', 'none'; picks an option."""
    if s.r == 0 or mode == 'none':
        return
    p = s.opts[int(rng.integers(0, len(s.opts)))]
    if mode == 'rand':
        p = [int(x) for x in rng.permutation(s.r)]
        mode = 'full'
    if mode == 'full' or s.r <= 2:
        k = s.r if mode == 'full' else min(s.r, 2)
    elif mode == 'pre1':
        k = 1
    else:
        k = 2
    block[:k] = p[:k]


def gen_random_configs(rng, specs, c):
    nc = len(specs)
    out = -np.ones((c, nc, 18), dtype=np.float32)
    for j, slots in enumerate(specs):
        skip = rng.random(c) < 0.07
        for t, sl in enumerate(slots):
            r = sl.r
            if r == 0:
                continue
            opts = np.array(sl.opts, dtype=np.int64)
            perms = opts[rng.integers(0, len(opts), size=c)]
            u = rng.random(c)
            rnd = (u >= 0.82) & (u < 0.9)
            if rnd.any():
                perms[rnd] = np.argsort(rng.random((int(rnd.sum()), r)), axis=1)
            k = np.where((u < 0.38) | rnd, r, np.where(u < 0.82, min(r, 2), 0))
            if t == 1 and r == 1:
                k = np.where(rng.random(c) < 0.5, 0, k)
            k = np.where(skip, 0, k)
            cols = np.arange(r)[None, :]
            vals = np.where(cols < k[:, None], perms, -1)
            out[:, j, 6 * t:6 * t + r] = vals
    # duplicated measurements
    ndup = int(c * rng.uniform(0.03, 0.15))
    for _ in range(ndup):
        a = int(rng.integers(1, c))
        b = int(rng.integers(0, a))
        out[a] = out[b]
    return out[rng.permutation(c)]


def gen_default_configs(rng, specs, c, screen=None):
    """a compiler-style search: start at the default, mutate few nodes at a time.
    `screen(rows)` returns the runtime of candidate single-node changes; the search
    only keeps alternatives that do not look harmful on their own."""
    nc = len(specs)
    out = -np.ones((c, nc, 18), dtype=np.float32)
    # the search only considers a couple of alternatives per node
    alt = []
    for slots in specs:
        choices = []
        for _ in range(int(rng.integers(1, 4))):
            blk = -np.ones(18, dtype=np.float32)
            for t, s in enumerate(slots):
                if s.r == 0:
                    continue
                if rng.random() < 0.6:
                    write_slot(blk[6 * t:6 * t + 6], s, rng, 'pre2' if rng.random() < 0.8 else 'full')
            choices.append(blk)
        alt.append(choices)
    if screen is not None:
        rows = [-np.ones((nc, 18), dtype=np.float32)]
        where = []
        for j in range(nc):
            for q, blk in enumerate(alt[j]):
                rr = -np.ones((nc, 18), dtype=np.float32)
                rr[j] = blk
                rows.append(rr)
                where.append((j, q))
        rt = screen(np.stack(rows))
        tol = rng.uniform(0.005, 0.06)
        keep = [[] for _ in range(nc)]
        best = {}
        for (j, q), t in zip(where, rt[1:]):
            if t <= rt[0] * (1.0 + tol):
                keep[j].append(alt[j][q])
            if t <= rt[0] * 1.15 and (j not in best or t < best[j][0]):
                best[j] = (t, q)
        for j, (t, q) in best.items():
            if not keep[j]:
                keep[j].append(alt[j][q])
        alt = [k if k else [-np.ones(18, dtype=np.float32)] for k in keep]
    hot = rng.random(nc) ** 2  # some nodes are searched far more often
    hot = hot / hot.sum()
    for q in range(1, c):
        u = rng.random()
        par = int(rng.integers(0, q)) if rng.random() < 0.7 else int(rng.integers(0, min(q, 8)))
        out[q] = out[par]
        if u < 0.25:
            continue
        nm = 1 + int(rng.geometric(0.6)) - 1
        for _ in range(max(1, nm)):
            j = int(rng.choice(nc, p=hot))
            if rng.random() < 0.3:
                out[q, j] = -1
            else:
                ch = alt[j]
                out[q, j] = ch[int(rng.integers(0, len(ch)))]
    perm = rng.permutation(c)
    return out[perm]


# ----------------------------------------------------------------------------------
# tile graph sampler

TILE_DIMS = [1, 2, 3, 4, 7, 8, 12, 13, 14, 16, 24, 26, 28, 32, 48, 56, 64, 96, 100, 112,
             128, 192, 200, 256, 384, 500, 512, 768, 1000, 1024, 2048]


def gen_tile_graph(rng, n_lo, n_hi):
    kind = str(rng.choice(['loop', 'reduce', 'conv', 'dot', 'transpose'],
                          p=[0.28, 0.2, 0.25, 0.15, 0.12]))
    n_target = int(rng.integers(n_lo, n_hi + 1))
    g = HLO(tile=True)
    et = 'bf16' if rng.random() < 0.5 else 'f32'
    red = None
    if kind == 'reduce':
        red = g.reducer('add' if rng.random() < 0.7 else 'maximum', 'f32')
    pn = [0]
    fparams = []

    def fparam(shape, e=None, layout=None):
        i = g.add('parameter', shape, e or et, param=pn[0], layout=layout)
        pn[0] += 1
        fparams.append(i)
        return i

    # main shape and layout
    if kind == 'conv':
        N = int(rng.choice([1, 2, 8, 16, 32, 64, 128]))
        Hs = int(rng.choice([7, 12, 13, 14, 26, 28, 56]))
        cin = int(rng.choice([3, 16, 32, 64, 96, 128, 192, 256, 384, 512]))
        cout = int(rng.choice([16, 32, 64, 96, 128, 192, 256, 384, 512, 1024]))
        k = int(rng.choice([1, 1, 3, 3, 5]))
        while N * Hs * Hs * max(cin, cout) > 2e7 and N > 1:
            N //= 2
        alay = [3, 0, 2, 1] if rng.random() < 0.7 else [3, 2, 1, 0]
        xin = fparam((N, Hs, Hs, cin), layout=alay)
        w = fparam((k, k, cin, cout), layout=[3, 2, 1, 0] if rng.random() < 0.8 else [2, 3, 1, 0])
        win = []
        for _ in range(2):
            o, pl, ph = same_pad(Hs, k, 1)
            win.append((k, 1, pl, ph, 1, 1, False))
        dn = dict(ib=0, if_=3, isp=[1, 2], kif=2, kof=3, ksp=[0, 1], ob=0, of=3)
        shape = (N, Hs, Hs, cout)
        lay = alay
        x = g.add('convolution', shape, et, (xin, w), window=win, conv=dn, fgc=1, layout=lay)
    elif kind == 'dot':
        Mm = int(rng.choice([8, 64, 128, 256, 512, 1000, 2048, 4096, 8192]))
        K = int(rng.choice([64, 128, 200, 256, 512, 768, 1024, 4096]))
        Nn = int(rng.choice([64, 128, 256, 384, 512, 1000, 1024, 3072]))
        while Mm * max(K, Nn) > 2e7 and Mm > 8:
            Mm //= 2
        lay = [1, 0]
        a = fparam((Mm, K), layout=[1, 0])
        b = fparam((K, Nn), layout=[1, 0] if rng.random() < 0.8 else [0, 1])
        shape = (Mm, Nn)
        x = g.add('dot', shape, et, (a, b), layout=lay)
    else:
        r = int(rng.choice([2, 3, 4]))
        shape = tuple(int(rng.choice(TILE_DIMS)) for _ in range(r))
        while np.prod(shape) > 2e7:
            j = int(np.argmax(shape))
            shape = tuple(x if q != j else max(1, x // 2) for q, x in enumerate(shape))
        while np.prod(shape) < 2e4:
            j = int(rng.integers(0, r))
            shape = tuple(x if q != j else x * 2 for q, x in enumerate(shape))
        if rng.random() < 0.5:
            lay = list(range(r - 1, -1, -1))
        elif r == 4 and rng.random() < 0.6:
            lay = [3, 0, 2, 1]
        else:
            lay = [int(v) for v in rng.permutation(r)]
        if kind == 'transpose':
            ilay = [int(v) for v in rng.permutation(r)]
            while ilay == lay:
                ilay = [int(v) for v in rng.permutation(r)]
            x0 = fparam(shape, layout=ilay)
            x = g.add('copy', shape, et, (x0,), layout=lay)
        else:
            x = fparam(shape, layout=lay)
    r = len(shape)
    # epilogue chain
    n_fixed = 2 + (3 if red is not None else 0) + (2 if kind == 'reduce' else 0)
    budget = max(3, n_target - n_fixed - 2 * len(fparams))
    cur = x
    ops_done = 0
    while True:
        est = len(g.nodes) + len(fparams) + 3 + (2 if kind == 'reduce' else 0)
        if ops_done > 0 and (est >= n_target or ops_done > budget):
            break
        u = rng.random()
        if u < 0.3:
            opn = str(rng.choice(['exponential', 'tanh', 'negate', 'abs', 'rsqrt', 'logistic',
                                  'sqrt', 'log', 'convert']))
            if opn == 'convert':
                cur = g.add('convert', shape, et, (cur,), layout=lay)
            else:
                cur = g.add(opn, shape, et, (cur,), layout=lay)
            ops_done += 1
        elif u < 0.55:
            vdim = int(rng.integers(0, r))
            vp = fparam((shape[vdim],))
            bb = g.add('broadcast', shape, et, (vp,), dims=[vdim], layout=lay)
            cur = g.add(str(rng.choice(['add', 'multiply', 'subtract'])), shape, et, (cur, bb), layout=lay)
            ops_done += 2
        elif u < 0.7 and len(fparams) < 8:
            p = fparam(shape, layout=lay)
            cur = g.add(str(rng.choice(['add', 'multiply', 'maximum'])), shape, et, (cur, p), layout=lay)
            ops_done += 1
        elif u < 0.85:
            c = g.add('constant', (), et)
            bb = g.add('broadcast', shape, et, (c,), dims=[], layout=lay)
            cur = g.add(str(rng.choice(['maximum', 'multiply', 'add', 'divide'])), shape, et, (cur, bb), layout=lay)
            ops_done += 2
        else:
            c = g.add('constant', (), et)
            bb = g.add('broadcast', shape, et, (c,), dims=[], layout=lay)
            cmpn = g.add('compare', shape, 'pred', (cur, bb), layout=lay)
            neg = g.add('negate', shape, et, (cur,), layout=lay)
            cur = g.add('select', shape, et, (cmpn, cur, neg), layout=lay)
            ops_done += 4
    outs = [cur]
    if kind == 'reduce':
        nred = int(rng.integers(1, r))
        rd = sorted(int(v) for v in rng.choice(r, size=nred, replace=False))
        oshape = tuple(shape[q] for q in range(r) if q not in rd)
        keep = [q for q in range(r) if q not in rd]
        olay = [keep.index(q) for q in lay if q in keep]
        init = g.add('constant', (), 'f32')
        curf = cur if et == 'f32' else g.add('convert', shape, 'f32', (cur,), layout=lay)
        rr = g.add('reduce', oshape, 'f32', (curf, init), (red,), dims=rd, layout=olay)
        outs = [rr]
    if rng.random() < 0.2 and kind != 'reduce':
        outs.append(g.add('multiply', shape, et, (cur, cur), layout=lay))
    if len(outs) > 1:
        froot = g.add('tuple', (), 'tuple', outs, tuple_size=len(outs))
    else:
        froot = outs[0]
    g.mark_root(froot)
    # outer computation
    oparams = []
    for q, p in enumerate(fparams):
        nd = g.nodes[p]
        oparams.append(g.add('parameter', nd.shape, nd.et, param=q, layout=nd.layout))
    fn = g.nodes[froot]
    fu = g.add('fusion', fn.shape, fn.et, oparams, (froot,), tuple_size=len(outs) if len(outs) > 1 else 0,
               layout=fn.layout)
    g.mark_root(fu)
    return g, kind


def tile_space(P):
    m = tile_main(P)
    _, U, _ = tile_units(P.dims[m], P.layout[m], P.eb[m])
    sp = float(np.prod(U))
    mx = [i for i in range(P.n) if P.op[i] in (26, 34)]
    if mx:
        a, k = P.role.get(mx[-1], (None, None))
        if k is not None:
            _, Uk, _ = tile_units(P.dims[k], P.layout[k], P.eb[k])
            sp *= float(np.prod(Uk))
    return sp


def gen_tile_configs(rng, P, c):
    m = tile_main(P)
    phys, U, unit = tile_units(P.dims[m], P.layout[m], P.eb[m])
    r = len(U)
    b0, kb0 = tile_default(P)
    kU = None
    if kb0 is not None:
        mx = [i for i in range(P.n) if P.op[i] in (26, 34)]
        a, k = P.role[mx[-1]]
        _, kU, _ = tile_units(P.dims[k], P.layout[k], P.eb[k])
    rows = []
    row = tile_cfg_row

    def draw(Uq):
        u = rng.random()
        if u < 0.45:
            e = int(rng.integers(0, int(math.log2(max(1, Uq))) + 1))
            return float(min(Uq, 2 ** e))
        if u < 0.65:
            return float(Uq)
        return float(rng.integers(1, int(Uq) + 1))

    rows.append(row(b0, kb0))
    seen = {tuple(rows[0])}
    tries = 0
    while len(rows) < c and tries < c * 20:
        tries += 1
        if rng.random() < 0.4:
            b = b0.copy()
            for q in rng.choice(r, size=int(rng.integers(1, r + 1)), replace=False):
                b[q] = draw(U[q])
        else:
            b = np.array([draw(U[q]) for q in range(r)])
        kb = None
        if kb0 is not None:
            kb = kb0.copy() if rng.random() < 0.5 else np.array([draw(kU[q]) for q in range(len(kU))])
        v = row(b, kb)
        t = tuple(v)
        if t in seen and rng.random() < 0.97:
            continue
        seen.add(t)
        rows.append(v)
    while len(rows) < c:
        rows.append(rows[int(rng.integers(0, len(rows)))].copy())
    cfg = np.stack(rows).astype(np.float32)
    perm = rng.permutation(len(cfg))
    cfg = cfg[perm]
    default_idx = int(np.nonzero(perm == 0)[0][0])
    return cfg, default_idx


# ----------------------------------------------------------------------------------
# noise

def measure(rng, t, kind):
    t = np.asarray(t, dtype=np.float64)
    if kind == 'layout':
        s = 0.0008 + 0.02 * np.sqrt(1e5 / t)
        p = 0.02
    else:
        s = 0.004 + 0.05 * np.sqrt(2e3 / t)
        p = 0.03
    z = rng.standard_normal(t.shape)
    e = rng.exponential(1.0, t.shape)
    b = rng.random(t.shape) < p
    par = rng.pareto(1.5, t.shape)
    f = np.exp(s * z) * (1.0 + 0.6 * s * e) * (1.0 + b * 4.0 * s * (1.0 + par))
    return np.maximum(1, np.round(t * f)).astype(np.int64)


# ----------------------------------------------------------------------------------
# names

XLA_MODELS = ['resnet50', 'resnet_v2_101', 'inception_v3', 'unet_3d', 'efficientnet_b3',
              'mobilenet_v2', 'retinanet', 'mask_rcnn', 'vgg16', 'alexnet', 'densenet121',
              'shufflenet_v2', 'nasnet_mobile', 'unet_2d', 'deeplab_v3']
NLP_MODELS = ['bert_pretraining', 'bert_squad', 't5_small', 'albert_en_base', 'transformer_lm',
              'gpt2_small', 'xlnet_base', 'electra_small', 'roberta_base', 'mt5_base',
              'small_bert_uncased', 'talking_heads_base']


def hexs(rng, k):
    return ''.join('0123456789abcdef'[int(x)] for x in rng.integers(0, 16, size=k))


def stem_for(rng, coll, split, kind, g=None):
    if split == 'test':
        return hexs(rng, 32)
    h = hexs(rng, int(rng.integers(14, 17)))
    if rng.random() < 0.4:
        h = '-' + h[1:]
    if coll == 'tile':
        return f"{kind}_{int(rng.integers(1, 900))}_{h}"
    if coll.startswith('layout:xla'):
        m = str(rng.choice(XLA_MODELS))
        mode = 'train' if g.training else 'inference'
        return f"{m}_{mode}_batch_{g.batch}_{h}"
    m = str(rng.choice(NLP_MODELS))
    S, H, et = g.dims
    kind = 'pretraining' if g.training else 'inference'
    return f"{m}_{kind}.{g.batch}x{S}x{H}.{et}_{h[-6:]}"


# ----------------------------------------------------------------------------------
# dataset writer

SCALES = {
    'small': dict(tile=(60, 15, 15), tile_nodes=(10, 60), tile_cfg=(50, 400),
                  lay=(16, 6, 4), lay_nodes=(200, 1500), lay_nc=(20, 120),
                  lay_cfg=(300, 3000), lay_test_cfg=(300, 600)),
    'tiny': dict(tile=(4, 2, 2), tile_nodes=(10, 40), tile_cfg=(8, 60),
                 lay=(4, 2, 2), lay_nodes=(40, 150), lay_nc=(5, 20),
                 lay_cfg=(30, 200), lay_test_cfg=(30, 60)),
}
SPLITS = ['train', 'valid', 'test']
COLL_IDS = {'tile': 1, 'layout:xla:default': 2, 'layout:xla:random': 3,
            'layout:nlp:default': 4, 'layout:nlp:random': 5}


def graph_rng(seed, coll, split, idx, salt=0):
    ss = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, 16, COLL_IDS[coll], SPLITS.index(split), idx, salt])
    return np.random.default_rng(ss)


def loguni(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def save_npz(path, **arrays):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.savez_compressed(path, **arrays)


def save_npy(path, arr):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, arr)


def make_tile_graph(seed, split, idx, sc, root, used):
    rng = graph_rng(seed, 'tile', split, idx)
    for _attempt in range(40):
        g, kind = gen_tile_graph(rng, *sc['tile_nodes'])
        if not (sc['tile_nodes'][0] <= len(g.nodes) <= sc['tile_nodes'][1]):
            continue
        nf, opc, e = g.to_arrays()
        P = parse_graph(nf, opc, e)
        if tile_space(P) >= 2 * sc['tile_cfg'][1]:
            break
    c = int(rng.integers(sc['tile_cfg'][0], sc['tile_cfg'][1] + 1))
    c = max(sc['tile_cfg'][0], min(c, int(tile_space(P) // 2)))
    cfg, didx = gen_tile_configs(rng, P, c)
    true = tile_law(nf, opc, e, cfg, P)
    name_kind = 'fusion' if kind != 'transpose' or rng.random() < 0.5 else 'copy'
    stem = stem_for(rng, 'tile', split, name_kind)
    while stem in used:
        stem = stem_for(rng, 'tile', split, name_kind)
    used.add(stem)
    rel = f"npz/tile/xla/{split}/{stem}"
    if split == 'test':
        rt = np.zeros(len(cfg), dtype=np.int64)
        nm = np.ones(len(cfg), dtype=np.int64)
    else:
        nrng = graph_rng(seed, 'tile', split, idx, salt=7)
        rt = measure(nrng, true, 'tile')
        nm = np.full(len(cfg), rt[didx], dtype=np.int64)
        save_npy(os.path.join(root, 'noiseless', rel + '.npy'), true.astype(np.float64))
    save_npz(os.path.join(root, rel + '.npz'), node_feat=nf, node_opcode=opc, edge_index=e,
             config_feat=cfg, config_runtime=rt, config_runtime_normalizers=nm)
    return len(opc), len(cfg)


def make_layout_graph(seed, coll, split, idx, sc, root, used):
    rng = graph_rng(seed, coll, split, idx)
    _, src, search = coll.split(':')
    n_target = int(rng.integers(sc['lay_nodes'][0], int(sc['lay_nodes'][1] * 0.8) + 1))
    hi_nc = min(sc['lay_nc'][1], max(sc['lay_nc'][0], int(n_target * 0.12)))
    nc_target = int(rng.integers(sc['lay_nc'][0], hi_nc + 1))
    tiny = sc is SCALES['tiny']
    for _attempt in range(8):
        if src == 'xla':
            g, main_start = gen_convnet(rng, n_target, nc_target, tiny)
        else:
            g, main_start = gen_transformer(rng, n_target, nc_target, tiny)
        if len(g.nodes) <= sc['lay_nodes'][1]:
            break
        n_target = max(sc['lay_nodes'][0], int(n_target * 0.7))
        nc_target = max(sc['lay_nc'][0], int(nc_target * 0.7))
    nf, opc, e = g.to_arrays()
    P = parse_graph(nf, opc, e)
    cands = [i for i in range(main_start, P.n) if P.op[i] in CONFIGURABLE and P.role.get(i, (None,))[0] is not None]
    nc = min(len(cands), sc['lay_nc'][1], max(nc_target, sc['lay_nc'][0]))
    ids = np.array(sorted(rng.choice(cands, size=nc, replace=False).tolist()), dtype=np.int64)
    specs = config_slots(rng, P, ids)
    if split == 'test':
        c = int(rng.integers(sc['lay_test_cfg'][0], sc['lay_test_cfg'][1] + 1))
    else:
        c = loguni(rng, *sc['lay_cfg'])
    if search == 'random':
        ncf = gen_random_configs(rng, specs, c)
    else:
        ncf = gen_default_configs(rng, specs, c,
                                  screen=lambda rows: layout_law(nf, opc, e, None, ids, rows, P))
    splits = np.array([g.splits], dtype=np.int64)
    stem = stem_for(rng, coll, split, None, g)
    while stem in used:
        stem = stem_for(rng, coll, split, None, g)
    used.add(stem)
    rel = f"npz/layout/{src}/{search}/{split}/{stem}"
    if split == 'test':
        rt = np.zeros(c, dtype=np.int64)
    else:
        true = layout_law(nf, opc, e, splits, ids, ncf, P)
        nrng = graph_rng(seed, coll, split, idx, salt=7)
        rt = measure(nrng, true, 'layout')
        save_npy(os.path.join(root, 'noiseless', rel + '.npy'), true.astype(np.float64))
    save_npz(os.path.join(root, rel + '.npz'), node_feat=nf, node_opcode=opc, edge_index=e,
             node_config_feat=ncf, node_config_ids=ids, node_splits=splits, config_runtime=rt)
    return len(opc), c


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', required=True)
    ap.add_argument('--seed', type=int, required=True)
    ap.add_argument('--scale', choices=['tiny', 'small'], default='small')
    ap.add_argument('--graphs-factor', type=float, default=1.0)
    ap.add_argument('--verbose', action='store_true')
    a = ap.parse_args(argv)
    sc = SCALES[a.scale]
    t0 = time.time()

    def cnt(k):
        return max(1, int(round(k * a.graphs_factor)))
    root = a.out
    os.makedirs(root, exist_ok=True)
    used = set()
    for si, split in enumerate(SPLITS):
        for idx in range(cnt(sc['tile'][si])):
            n, c = make_tile_graph(a.seed, split, idx, sc, root, used)
            if a.verbose:
                print(f"tile {split} {idx} n={n} c={c} {time.time() - t0:.1f}s", file=sys.stderr)
    for coll in ['layout:xla:default', 'layout:xla:random', 'layout:nlp:default', 'layout:nlp:random']:
        used = set()
        for si, split in enumerate(SPLITS):
            for idx in range(cnt(sc['lay'][si])):
                n, c = make_layout_graph(a.seed, coll, split, idx, sc, root, used)
                if a.verbose:
                    print(f"{coll} {split} {idx} n={n} c={c} {time.time() - t0:.1f}s", file=sys.stderr)
    if a.verbose:
        print(f"done in {time.time() - t0:.1f}s", file=sys.stderr)


if __name__ == '__main__':
    main()
