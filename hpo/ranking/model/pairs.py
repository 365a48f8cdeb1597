"""The sampled-pair objective: a logistic loss on pairs of configs of one graph, drawn uniformly.

Why: layout is scored by Kendall's tau, where every pair of configs of a graph weighs the
same. LightGBM's lambdarank weighs a pair by how much swapping it changes NDCG, so it spends
its gradient on the graph's fastest configs; a uniform pair loss spends it where the metric
does. Each round, every row is paired with ``samples`` configs of its own graph drawn at
random (a new draw each round, from the seed and the round), and gets the gradient of
``log(1 + exp(-(s_faster - s_slower)))`` from each pair it is in. Pairs of equal runtime give
nothing. The cost is linear in the rows (lambdarank's grows with the square of a query's
size, cut by its truncation level).

Scores follow LightGBM's ranking convention: higher is predicted faster, so a booster of
either objective is read the same way (:meth:`hpo.ranking.model.ranker.LambdaRanker.predict`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["PAIR_SAMPLES", "SampledPairs"]

#: Partners drawn for every row each round.
PAIR_SAMPLES = 16
#: Smallest hessian of a row: rows in no informative pair must not divide by zero.
_MIN_HESSIAN = 1e-9


class SampledPairs:
    """A LightGBM custom objective ``fobj(preds, dataset) -> (grad, hess)`` over the rows of a
    Dataset whose runtimes and graphs are given in its row order.

    Parameters
    ----------
    runtime
        Runtime of every row (lower is faster), in Dataset order.
    graph
        Graph id of every row, in Dataset order; a graph's rows need not be contiguous.
    seed
        Seeds the draws; the draw of round ``r`` depends on ``(seed, r)`` only, so a booster
        continued from round ``r`` draws what one trained from scratch would.
    start_round
        The round the first call is (a continued booster's rounds so far).
    samples
        Partners per row per round.
    """

    def __init__(
        self,
        runtime: np.ndarray,
        graph: np.ndarray,
        *,
        seed: int,
        start_round: int = 0,
        samples: int = PAIR_SAMPLES,
    ) -> None:
        self.runtime = np.asarray(runtime, dtype=np.float64)
        graph = np.asarray(graph, dtype=np.int64)
        order = np.argsort(graph, kind="stable")
        sizes = np.bincount(graph)
        starts = np.r_[0, np.cumsum(sizes)[:-1]]
        #: rows sorted by graph, and each row's graph's start and size in that order
        self._by_graph = order
        self._start = starts[graph]
        self._size = sizes[graph]
        self.seed = int(seed)
        self.round = int(start_round)
        self.samples = int(samples)

    def __call__(self, preds: np.ndarray, dataset: Any) -> tuple[np.ndarray, np.ndarray]:
        n = self.runtime.size
        rng = np.random.default_rng((self.seed, self.round))
        self.round += 1
        a = np.repeat(np.arange(n), self.samples)
        offset = (rng.random(a.size) * self._size[a]).astype(np.int64)
        b = self._by_graph[self._start[a] + offset]
        sign = np.sign(self.runtime[b] - self.runtime[a])  # +1: a is faster
        keep = sign != 0
        a, b, sign = a[keep], b[keep], sign[keep]
        s = np.asarray(preds, dtype=np.float64)
        # loss log(1 + exp(-m)) with margin m = sign * (s_a - s_b); p = sigmoid(-m)
        p = 0.5 * (1.0 - np.tanh(0.5 * sign * (s[a] - s[b])))
        pull = p * sign
        grad = np.bincount(b, weights=pull, minlength=n) - np.bincount(a, weights=pull, minlength=n)
        curv = p * (1.0 - p)
        hess = np.bincount(a, weights=curv, minlength=n) + np.bincount(b, weights=curv, minlength=n)
        return grad, np.maximum(hess, _MIN_HESSIAN)
