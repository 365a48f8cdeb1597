"""Where a boosting round's time goes: the ranking objective's gradients against the trees.

Usage::

    python bench/bench_boost_profile.py PREFIX [--rounds 30] [--threads 2 1]

``PREFIX`` is a table of a campaign's ``--cache-dir``/``tables/``, e.g.
``CACHE/tables/layout-train-KEY`` (its ``.X.npy``, ``.target.npy`` and ``.group.npy``). The
rows are read into memory (the whole table: meant for tables of up to a few GB, unlike the
ranker, which reads them in chunks), put in graph order, labelled and cut into sub-queries
as :class:`hpo.ranking.model.ranker.LambdaRanker` does (16 label levels), binned once
(``max_bin`` 255; the sub-queries are set per variant), and boosted for ``--rounds`` rounds
with the default configuration's tree settings (63 leaves, learning rate 0.05, feature
fraction 0.8, ``lambda_l2`` 1, 20 rows per leaf) under each objective below, per thread
count. One untimed round runs first, so no variant pays for warming up; a round's time
includes the Booster's set-up, spread over the rounds.

Why: a campaign's trial time is boosting (bench/README.md, "Where a trial's time goes"), and
issue 20 asks for several times the trials per hour. LightGBM's lambdarank gradient visits,
in a sub-query of ``n`` rows, every pair of one of its first ``k = min(truncation, n - 1)``
rows by score with a row after it: ``k (n - 1) - k (k - 1) / 2`` pairs a round (at most
``n (n - 1) / 2``; it skips the computation for pairs of equal labels, about 1 in 16 at 16
levels), however many leaves a tree has. The ``regression`` objective (one gradient per row)
grows trees of the same settings, so the difference between the two is what the pairwise
gradients cost. ``sampled_pairs`` (:mod:`hpo.ranking.model.pairs`, the layout default) draws
16 partners for every row of its whole graph each round, computed in numpy.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as hpo.ranking.model.ranker sets it

#: (label, extra LightGBM parameters, max_group_size)
VARIANTS = (
    (
        "lambdarank, truncation 256, groups of 1024 (its space default)",
        {"lambdarank_truncation_level": 256},
        1024,
    ),
    ("lambdarank, truncation 30, groups of 1024", {"lambdarank_truncation_level": 30}, 1024),
    ("lambdarank, truncation 1024, groups of 1024", {"lambdarank_truncation_level": 1024}, 1024),
    ("lambdarank, truncation 256, groups of 256", {"lambdarank_truncation_level": 256}, 256),
    ("lambdarank, truncation 256, groups of 4096", {"lambdarank_truncation_level": 256}, 4096),
    ("regression (no pairs: the trees alone)", {"objective": "regression"}, 1024),
    ("sampled_pairs, 16 partners a row (the layout default)", {"objective": "sampled_pairs"}, 0),
)


def lambdarank_pairs(sizes: np.ndarray, truncation: int) -> int:
    """Pairs LightGBM's lambdarank visits a round: in a query of ``n`` rows, each of its first
    ``k = min(truncation, n - 1)`` rows by score with every row after it."""
    n = sizes.astype(np.int64)
    k = np.minimum(truncation, n - 1)
    return int(np.sum(k * (n - 1) - k * (k - 1) // 2))


def main(argv: list[str] | None = None) -> int:
    import lightgbm as lgb

    from hpo.ranking.model.pairs import PAIR_SAMPLES, SampledPairs
    from hpo.ranking.model.ranker import relevance_labels, split_large_groups, sub_group_sizes

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("prefix")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--threads", type=int, nargs="+", default=[2, 1])
    a = p.parse_args(argv)
    X = np.load(a.prefix + ".X.npy", mmap_mode="r")
    y = np.load(a.prefix + ".target.npy")
    _, g = np.unique(np.load(a.prefix + ".group.npy"), return_inverse=True)
    order, _ = split_large_groups(g, 10_000, np.random.default_rng(0))
    X, y, g = np.ascontiguousarray(X[order]), y[order], g[order]
    sizes = np.bincount(g)
    labels = relevance_labels(y, g, 16)
    print(f"{a.prefix}: {X.shape[0]:,} rows x {X.shape[1]} columns, {len(sizes)} graphs")
    binning = {"max_bin": 255, "verbose": -1, "feature_pre_filter": False}
    dataset = lgb.Dataset(X, label=labels, free_raw_data=False, params=binning)
    dataset.set_group(sizes).construct()
    print("| objective | threads | ms per round | pairs visited per round (millions) |")
    print("|---|---:|---:|---:|")
    warm = True
    for threads in a.threads:
        for label, extra, group_size in VARIANTS:
            sub = sub_group_sizes(sizes, group_size) if group_size else sizes
            dataset.set_group(sub)
            params = {
                "objective": "lambdarank",
                "metric": "none",
                "label_gain": list(range(16)),
                "num_leaves": 63,
                "learning_rate": 0.05,
                "feature_fraction": 0.8,
                "lambda_l2": 1.0,
                "min_data_in_leaf": 20,
                "num_threads": threads,
                "force_row_wise": True,
                "deterministic": True,
                "verbose": -1,
                **extra,
            }
            trunc = extra.get("lambdarank_truncation_level")
            pairs = "-" if trunc is None else f"{lambdarank_pairs(sub, trunc) / 1e6:.1f}"
            if extra.get("objective") == "sampled_pairs":  # hpo's own, on whole graphs
                params["objective"] = SampledPairs(y, g, seed=0)
                pairs = f"{len(y) * PAIR_SAMPLES / 1e6:.1f}"
            if warm:  # one untimed round: the first Booster pays for the threads' start
                lgb.train(params, dataset, 1)
                warm = False
            t0 = time.perf_counter()
            lgb.train(params, dataset, a.rounds)
            ms = 1000 * (time.perf_counter() - t0) / a.rounds
            print(f"| {label} | {threads} | {ms:.1f} | {pairs} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
