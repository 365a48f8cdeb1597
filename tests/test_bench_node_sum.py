"""bench/bench_node_sum.py: the node rows of a real file, and the node-sum objective."""

from __future__ import annotations

from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest
from bench_modules import load_bench

from hpo.data.load import load_layout_graph
from hpo.ranking.scoring.metrics import kendall_tau

REAL_LAYOUT = (
    Path(__file__).resolve().parents[1].parent
    / "shared/realdata/npz/layout/xla/random/valid/main_10904.npz"
)


@pytest.mark.skipif(not REAL_LAYOUT.is_file(), reason=f"no real layout file at {REAL_LAYOUT}")
def test_node_rows_of_a_real_file_are_one_finite_row_per_config_and_node() -> None:
    bench = load_bench("bench_node_sum")
    graph = load_layout_graph(REAL_LAYOUT)
    with np.load(REAL_LAYOUT) as npz:
        raw = npz["node_config_feat"][:7].astype(np.int8)
    rows = bench.node_rows(graph, raw)
    nc = len(graph.node_config_ids)
    assert rows.shape[0] == 7 * nc
    assert np.isfinite(rows).all()
    opcodes = graph.node_opcode[graph.node_config_ids]
    np.testing.assert_array_equal(rows[:, 0].reshape(7, nc), np.tile(opcodes, (7, 1)))
    # the raw layout is the last 18 columns, config-major
    np.testing.assert_array_equal(rows[:, -18:].reshape(7, nc, 18), raw)


def test_the_node_sum_objective_learns_a_cost_that_adds_up_over_nodes() -> None:
    bench = load_bench("bench_node_sum")
    rng = np.random.default_rng(3)
    n_graphs, configs, nodes = 6, 60, 5
    n = n_graphs * configs
    config = np.repeat(np.arange(n), nodes)
    X = rng.uniform(-2, 2, size=(n * nodes, 3))
    X[:, 0] = rng.integers(0, 4, size=n * nodes)  # a categorical opcode, as in the node rows
    cost = (X[:, 1] ** 2) * (1 + X[:, 0]) + np.abs(X[:, 2])  # a node's own cost, not linear
    runtime = np.bincount(config, weights=cost)
    graph = np.repeat(np.arange(n_graphs), configs)
    train = graph < 4
    rows = train[config]
    objective = bench.NodeSumObjective(config[rows], runtime[train], graph[train], seed=0)
    params = {"objective": objective, "learning_rate": 0.1, "num_leaves": 7, "verbose": -1,
              "min_data_in_leaf": 5, "num_threads": 1, "seed": 0}  # fmt: skip
    booster = lgb.train(params, lgb.Dataset(X[rows], categorical_feature=[0]), num_boost_round=200)
    # scored as the bench scores: the configs' sums of node scores, higher is faster
    held = ~train
    sums = np.bincount(config[~rows] - config[~rows].min(), weights=booster.predict(X[~rows]))
    taus = [
        kendall_tau(
            -sums[g * configs : (g + 1) * configs], runtime[held][g * configs : (g + 1) * configs]
        )
        for g in range(2)
    ]
    assert min(taus) > 0.8


def test_each_row_gets_its_configs_gradient_and_a_share_of_its_hessian() -> None:
    bench = load_bench("bench_node_sum")
    config = np.array([0, 0, 0, 1, 2, 2])  # 3, 1 and 2 rows
    runtime = np.array([3.0, 1.0, 2.0])
    objective = bench.NodeSumObjective(config, runtime, np.zeros(3, dtype=np.int64), seed=0)
    preds = np.array([0.1, 0.2, 0.3, -0.4, 0.5, 0.0])
    grad, hess = objective(preds, None)
    reference = bench.SampledPairs(runtime, np.zeros(3, dtype=np.int64), seed=0)
    g_cfg, h_cfg = reference(np.bincount(config, weights=preds), None)
    np.testing.assert_allclose(grad, g_cfg[config])
    np.testing.assert_allclose(hess, (h_cfg * np.array([3, 1, 2]))[config])
