"""The learned prior's additive fit: byte totals with shared weights and one scale per graph.

Why: a program's runtime adds up over its kernels, so within one graph a
config's runtime is about ``base + sum_k w_k * bytes_k`` for its byte totals ``bytes_k``.
The prior before this fit standardized every basis column within its graph, which keeps
each column's order but not the ratios between columns: a total that varies a little in one
graph weighs as much as one that varies a lot, so one set of weights cannot add them up the
way the runtime does. On unseen graphs of two laws where the default ranked worst, the prior
alone reached 0.75 and 0.86 of the noise ceiling on nlp:random standardized that way and 0.92
additively (docs/benchmarks.md#the-learned-prior-and-its-weights).

So the linear byte columns keep their ratios: each graph's columns are only centred, and the
whole centred design of a graph is scaled by one factor ``a_g``. The target is the runtime
centred and over its std in the graph. The weights are shared by all graphs; the factors are
what makes graphs of different runtime scales comparable. They are found by alternating
passes, each a ridge, until the weights stop moving: with the weights fixed, ``a_g`` makes
the graph's composite ``design @ w`` unit-variance, as the target is; with the factors
fixed, the weights are a ridge on the scaled rows (columns rescaled by their pooled root
mean square first, so the penalty means the same for every column). The factors absorb the
weights' size, so the weights are kept at unit length: the blend standardizes the estimate
within each graph, and only their direction orders configs.

The fit needs only each graph's centred Gram matrix and cross-product with the target, so a
campaign sums them once per row set in bounded chunks
(:func:`hpo.ranking.prior.fit.family_equations`) and solves any set of live columns from a sub-block
in milliseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MAX_PASSES", "TOLERANCE", "GraphGrams", "solve_additive"]

#: Alternating passes at most, and the change of the unit-length weights that ends them. The
#: passes converge linearly (36 passes on 518 graphs of the tests' law with noise); a pass
#: costs two matrix-vector products over the ``(graphs, m * m)`` sums, about 2 ms at 45
#: columns and 518 graphs.
MAX_PASSES = 1000
TOLERANCE = 1e-10


@dataclass
class GraphGrams:
    """Per graph: centred Gram of the basis, its cross-product with the standardized target,
    the row count and the target's std (0: the runtimes of the graph do not vary)."""

    gram: np.ndarray  # (graphs, m, m)
    cross: np.ndarray  # (graphs, m)
    count: np.ndarray  # (graphs,)
    target_std: np.ndarray  # (graphs,)

    @classmethod
    def empty(cls, n_graphs: int, width: int) -> GraphGrams:
        return cls(
            np.zeros((n_graphs, width, width)),
            np.zeros((n_graphs, width)),
            np.zeros(n_graphs, dtype=np.int64),
            np.zeros(n_graphs),
        )

    @property
    def signal(self) -> bool:
        """Whether some graph has configs of different runtimes (something to learn)."""
        return bool(np.any(self.target_std > 0))

    def add(self, centred: np.ndarray, target: np.ndarray, graph: np.ndarray) -> None:
        """Add rows of graphs ``graph`` (runs contiguous): ``centred`` design (each column
        minus its graph's mean) and ``target`` (the runtime minus its graph's mean, over its
        std; :attr:`target_std` must be set)."""
        if centred.shape[0] == 0:
            return
        starts = np.flatnonzero(np.r_[True, graph[1:] != graph[:-1]])
        ends = np.r_[starts[1:], len(graph)]
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
            g = int(graph[a])
            block = centred[a:b]
            self.gram[g] += block.T @ block
            self.cross[g] += block.T @ target[a:b]
            self.count[g] += b - a

    def merged(self, other: GraphGrams) -> GraphGrams:
        """Both sets of graphs."""
        return GraphGrams(
            np.concatenate([self.gram, other.gram]),
            np.concatenate([self.cross, other.cross]),
            np.concatenate([self.count, other.count]),
            np.concatenate([self.target_std, other.target_std]),
        )


def solve_additive(grams: GraphGrams, want: list[int], ridge: float) -> np.ndarray | None:
    """The shared weights of basis entries ``want``, or ``None`` when nothing is to learn (or
    the scaled sums leave float64's range, where no weights can be trusted).

    Graphs whose runtimes do not vary teach nothing and are left out. Deterministic: the
    same sums give the same bits.
    """
    keep = (grams.target_std > 0) & (grams.count >= 2)
    if not want or not keep.any():
        return None
    m = len(want)
    # each graph's sub-block as one row of m * m: a pass is then two matrix-vector products
    flat = np.ascontiguousarray(grams.gram[keep][:, want][:, :, want]).reshape(-1, m * m)
    diag = flat[:, :: m + 1]  # each graph's column variances (times its rows)
    cross = grams.cross[keep][:, want]
    count = grams.count[keep].astype(np.float64)
    n = float(count.sum())
    scale = 1.0 / grams.target_std[keep]  # the first pass: the runtime's own scale
    eye = np.eye(m)
    coef = np.zeros(m)
    for _ in range(MAX_PASSES):
        before = coef
        with np.errstate(over="ignore", invalid="ignore"):
            pooled = (scale**2 @ flat).reshape(m, m)
            rhs = scale @ cross
        if not (np.isfinite(pooled).all() and np.isfinite(rhs).all()):
            # a graph's sums past float64's range under its scale (its composite all but
            # constant): no weights to trust, as when nothing varies
            return None
        q = np.sqrt(np.diag(pooled) / n)
        q[q == 0] = 1.0
        coef = np.linalg.solve(pooled / np.outer(q, q) / n + ridge * eye, rhs / q / n) / q
        # the factors absorb the weights' size (the ridge shrinks it a little every pass), and
        # the blend standardizes the estimate: only the direction is fitted, at unit length
        length = np.linalg.norm(coef)
        if length == 0:  # no live total varies in any graph: nothing to learn
            return None
        coef /= length
        spread = np.sqrt(np.maximum(flat @ np.outer(coef, coef).ravel(), 0.0) / count)
        # a graph whose composite does not vary, or only by cancelling rounding (next to what
        # its weighted columns add up to), teaches nothing about the weights: it drops out
        # instead of getting an unbounded scale
        size = np.sqrt(np.maximum(diag @ coef**2, 0.0) / count)
        varies = spread > 1e-12 * size
        scale = np.where(varies, 1.0 / np.where(varies, spread, 1.0), 0.0)
        if np.linalg.norm(coef - before) <= TOLERANCE:
            break
    return coef
