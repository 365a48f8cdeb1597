"""Weighs a node-additive ranker on the blind laws: a config's score as a sum over its nodes.

Issue 52's deeper option: a tree model of one configurable node's cost, from that node's own
layout and what it shares with its neighbours (the per-node quantities behind the ``nd_``
columns, :func:`hpo.features.layout.nodes.node_quantities`, its static shape and op, the sizes
of its minor dims under the chosen layouts, and the raw layout), summed over the graph's
configurable nodes. LightGBM fits it on ``(config, node)`` rows with a custom objective: the
rows' predictions are summed per config, the sampled-pair loss
(:class:`hpo.ranking.model.pairs.SampledPairs`) gives each config its gradient, and every row
of the config gets that gradient (and the config's hessian times its row count, so a leaf
holding all of a config's rows moves the config's sum by one Newton step).

For every law and layout collection: the default configuration (672 rounds, the one training
path, as ``bench_blind.py --mode default``) and the node model (``--cap`` configs per train
graph, ``--node-rounds`` rounds) are trained on the tuning root's train split; the unseen root's
labeled graphs are scored as a share of the noise ceiling by the default alone, the node model
alone, and ``z(default) + w * z(node)`` (each standardized within its graph) for every ``w`` of
``--weights``; ``valid-chosen`` takes per collection the ``w`` with the best mean tau on the
tuning root's valid graphs (what a model could choose without seeing unseen graphs).

    python bench/bench_node_sum.py --work /tmp/blind --laws blind_01,...,blind_07 --json n.json
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
from bench_blind import (
    LABELED,
    LAYOUT,
    LayoutStudy,
    as_set_weights,
    cells_moved,
    noise_ceiling,
    run_study,
    study_parser,
)

from hpo.data.load import LayoutGraph, list_graphs, load_layout_graph
from hpo.features.layout.nodes import dim_sizes, node_quantities, node_static
from hpo.features.layout.partial import read_block
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.model.pairs import SampledPairs
from hpo.ranking.scoring.metrics import kendall_tau
from hpo.ranking.scoring.valid import blended_predict, valid_rows
from hpo.ranking.training import train_family

#: Configs scored per pass of one graph (bounds the memory of its node rows).
PASS_CONFIGS = 512


def node_rows(graph: LayoutGraph, raw: np.ndarray) -> np.ndarray:
    """Rows ``(k * nc, F)`` of configs ``raw`` (int8 ``(k, nc, 18)``), config-major; column 0
    is the node's opcode (categorical)."""
    st = node_static(graph)
    k, nc = raw.shape[:2]
    quantities = np.log1p(np.maximum(node_quantities(raw, st), 0.0))
    sizes = []
    for t, block in ((st.out, raw[..., 0:6]), (st.op0, raw[..., 6:12]), (st.op1, raw[..., 12:18])):
        lay = read_block(block, t.default, t.rank)
        sizes += [np.log2(dim_sizes(t.dims, lay.minor[..., p])) for p in (0, 1)]
    static = np.stack(
        [
            graph.node_opcode[graph.node_config_ids].astype(np.float64),
            np.log1p(st.out.nbytes),
            np.log1p(st.op0.nbytes),
            np.log1p(st.op1.nbytes),
            st.out.rank,
            np.log1p(st.region_out),
            np.log1p(st.region_in),
            np.bincount(st.edge_from, minlength=nc),
        ],
        axis=-1,
    )
    parts = [np.broadcast_to(static[None], (k, nc, static.shape[1])), quantities]
    parts += [np.stack(sizes, axis=-1), raw.astype(np.float64)]
    return np.concatenate(parts, axis=-1).reshape(k * nc, -1)


def _configs(path: Path) -> np.ndarray:
    with np.load(path) as npz:
        return npz["node_config_feat"].astype(np.int8)


class NodeSumObjective:
    """LightGBM ``fobj`` on node rows: the sampled-pair loss of the per-config sums."""

    def __init__(self, config: np.ndarray, runtime: np.ndarray, graph: np.ndarray, seed: int):
        self.config = config
        self.n = runtime.size
        self.pairs = SampledPairs(runtime, graph, seed=seed)
        self.rows_per_config = np.bincount(config, minlength=self.n).astype(np.float64)

    def __call__(self, preds: np.ndarray, dataset: Any) -> tuple[np.ndarray, np.ndarray]:
        sums = np.bincount(self.config, weights=preds, minlength=self.n)
        grad, hess = self.pairs(sums, dataset)
        return grad[self.config], (hess * self.rows_per_config)[self.config]


def train_node_model(root: Path, collection: str, args: argparse.Namespace) -> lgb.Booster:
    """The node model of ``collection``'s train graphs, ``--cap`` random configs of each."""
    rng = np.random.default_rng(args.seed)
    X, config, runtime, graph = [], [], [], []
    n_configs = 0
    for gid, path in enumerate(list_graphs(root, collection, "train")):
        g, raw = load_layout_graph(path), _configs(path)
        keep = np.arange(len(raw))
        if len(raw) > args.cap:
            keep = np.sort(rng.choice(len(raw), args.cap, replace=False))
        X.append(node_rows(g, raw[keep]))
        config.append(np.repeat(np.arange(keep.size) + n_configs, len(g.node_config_ids)))
        runtime.append(g.config_runtime[keep])
        graph.append(np.full(keep.size, gid))
        n_configs += keep.size
    objective = NodeSumObjective(
        np.concatenate(config), np.concatenate(runtime), np.concatenate(graph), args.seed
    )
    params = dict(
        objective=objective, learning_rate=0.05, num_leaves=31, min_data_in_leaf=50,
        feature_fraction=0.8, verbose=-1, num_threads=args.threads, seed=args.seed,
    )  # fmt: skip
    dataset = lgb.Dataset(np.concatenate(X), categorical_feature=[0])
    return lgb.train(params, dataset, num_boost_round=args.node_rounds)


def node_scores(booster: lgb.Booster, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Every config's node-model score (higher: faster) and its runtime, of one graph."""
    g, raw = load_layout_graph(path), _configs(path)
    nc = len(g.node_config_ids)
    out = np.empty(len(raw))
    for a in range(0, len(raw), PASS_CONFIGS):
        chunk = raw[a : a + PASS_CONFIGS]
        out[a : a + len(chunk)] = (
            booster.predict(node_rows(g, chunk)).reshape(len(chunk), nc).sum(1)
        )
    return out, g.config_runtime


def table_predictions(fit: Any, table: Any, weight: Any) -> dict[tuple[str, str], np.ndarray]:
    """The default's per-graph predictions (lower: faster) by ``(collection, stem)``."""
    view = valid_rows(table, LAYOUT)
    pred = blended_predict(fit.ranker, table, view, fit.columns, weight, fit.prior)
    refs = [table.graphs[g] for g in view.graphs]
    bounds = view.bounds
    return {
        (r.collection, r.stem): pred[a:b]
        for r, a, b in zip(refs, bounds[:-1], bounds[1:], strict=True)
    }


def _z(x: np.ndarray) -> np.ndarray:
    return (x - x.mean()) / (x.std() + 1e-12)


def blend_taus(
    booster: lgb.Booster, root: Path, collection: str, splits: tuple[str, ...],
    table: dict[tuple[str, str], np.ndarray], weights: list[float],
) -> dict[str, float]:  # fmt: skip
    """Mean tau over ``root``'s graphs of every blend weight, and of the node model alone."""
    taus: dict[str, list[float]] = {str(w): [] for w in weights} | {"node": []}
    for split in splits:
        for path in list_graphs(root, collection, split):
            base = table.get((collection, path.stem))
            if base is None:  # a graph without a ranking
                continue
            score, runtime = node_scores(booster, path)
            for w in weights:
                taus[str(w)].append(kendall_tau(_z(base) + w * _z(-score), runtime))
            taus["node"].append(kendall_tau(-score, runtime))
    return {k: float(np.mean(v)) for k, v in taus.items()}


def judge(law: str, args: argparse.Namespace) -> dict[str, Any]:
    study = LayoutStudy.of(law, args)
    tuning, unseen, hp, tables, other = (study.tuning, study.unseen, study.hp,
                                         study.tables, study.other)  # fmt: skip
    fit = train_family(
        tables[("layout", "train")], tables[("layout", "valid")], LAYOUT, hp,
        rounds=args.rounds, seed=args.seed, options=FitOptions(n_threads=args.threads),
    )  # fmt: skip
    weight = as_set_weights(fit, hp, LAYOUT)
    unseen_pred: dict[tuple[str, str], np.ndarray] = {}
    for split in LABELED:
        unseen_pred |= table_predictions(fit, other[("layout", split)], weight)
    valid_pred = table_predictions(fit, tables[("layout", "valid")], weight)
    ceiling = noise_ceiling(unseen)
    out: dict[str, Any] = {}
    for c in LAYOUT:
        t0 = time.perf_counter()
        booster = train_node_model(tuning, c, args)
        u = blend_taus(booster, unseen, c, LABELED, unseen_pred, args.weights)
        v = blend_taus(booster, tuning, c, ("valid",), valid_pred, args.weights)
        chosen = max((str(w) for w in args.weights), key=lambda k: v[k])  # first best: smallest w
        shares = {k: x / ceiling[c] for k, x in u.items()}
        shares["valid-chosen"] = shares[chosen]
        out[c] = {"shares": shares, "valid": v, "chosen": chosen}
        line = " ".join(f"{k}:{x:.3f}" for k, x in shares.items())
        print(f"  {law} {c}: {line} (w={chosen}, {time.perf_counter() - t0:.0f} s)", flush=True)
    return out


def summary(results: dict[str, dict[str, Any]], rows: list[str]) -> list[str]:
    lines = ["| scored by | median | worst |", "|---|---|---|"]
    for row in rows:
        cells = [[results[law][c]["shares"][row] for law in results] for c in LAYOUT]
        med = " / ".join(f"{np.median(v):.3f}" for v in cells)
        worst = " / ".join(f"{np.min(v):.3f}" for v in cells)
        label = {"0.0": "the default alone", "node": "the node model alone"}.get(row, row)
        lines.append(f"| {label if row in ('0.0', 'node', 'valid-chosen') else 'w = ' + row} "
                     f"| {med} | {worst} |")  # fmt: skip
    for row in rows[1:]:  # each against the default alone, cell by cell
        gains = [
            r[c]["shares"][row] - r[c]["shares"]["0.0"] for r in results.values() for c in LAYOUT
        ]
        lines.append(f"{row}: {cells_moved(gains)}")
    return lines


def main() -> None:
    ap = study_parser(__doc__.splitlines()[0])
    ap.add_argument("--node-rounds", type=int, default=600)
    ap.add_argument("--cap", type=int, default=256, help="configs per train graph, node model")
    ap.add_argument("--weights", default="0,0.1,0.25,0.5,1,2")
    args = ap.parse_args()
    args.weights = [float(w) for w in args.weights.split(",")]
    results = run_study(args, judge)
    rows = ["0.0", "node", *[str(w) for w in args.weights if w], "valid-chosen"]
    print("\n".join(summary(results, rows)))


if __name__ == "__main__":
    main()
