"""The pure parts of bench/bench_optimizers.py: space conversion to Optuna, curves, statistics.

The bench scripts are not a package; they are imported from their files. Optuna is only in
the ``bench`` extra, so the tests that need it are skipped without it.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from ConfigSpace import (
    Categorical,
    Configuration,
    ConfigurationSpace,
    EqualsCondition,
    Float,
    ForbiddenEqualsClause,
    Integer,
    NormalFloatHyperparameter,
    OrConjunction,
)

from hpo.errors import ConfigError
from hpo.ranking.spaces import load_space

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


peer = _load("optuna_peer")
rep = _load("optimizer_report")


# ---- budgets and space conversion ------------------------------------------------------------
@pytest.mark.parametrize(
    ("low", "high", "eta", "rungs"),
    [(4, 36, 3, [4, 12, 36]), (25, 675, 3, [25, 75, 225, 675]), (10, 100, 3, [11, 33, 100])],
)
def test_rungs_are_smacs_budgets(low: float, high: float, eta: int, rungs: list[int]) -> None:
    assert peer.rung_budgets(low, high, eta) == rungs


def test_rungs_reject_inverted_budgets() -> None:
    with pytest.raises(ConfigError, match="min_budget <= max_budget"):
        peer.rung_budgets(40, 4, 3)


def _nested_space() -> ConfigurationSpace:
    """``b`` only when ``a == 'x'``; ``c`` when ``b == 0.5`` or ``d == 2`` (a chain and an Or)."""
    cs = ConfigurationSpace(name="nested")
    a, b = Categorical("a", ["x", "y"]), Categorical("b", [0.5, 0.25])
    c, d = Float("c", (1e-3, 1.0), log=True), Integer("d", (1, 2))
    cs.add([a, b, c, d])
    cs.add(EqualsCondition(b, a, "x"))
    cs.add(OrConjunction(EqualsCondition(c, b, 0.5), EqualsCondition(c, d, 2)))
    return cs


@pytest.mark.parametrize(
    ("fixed", "active"),
    [
        ({"a": "y", "d": 1}, {"a", "d"}),  # b inactive, so c's first branch fails too
        ({"a": "y", "d": 2, "c": 0.1}, {"a", "d", "c"}),
        ({"a": "x", "b": 0.5, "d": 1, "c": 0.1}, {"a", "b", "c", "d"}),
        ({"a": "x", "b": 0.25, "d": 1}, {"a", "b", "d"}),
    ],
)
def test_children_suggested_only_when_their_condition_holds(
    fixed: dict[str, object], active: set[str]
) -> None:
    optuna = pytest.importorskip("optuna")
    config = peer.suggest_configuration(optuna.trial.FixedTrial(fixed), _nested_space())
    assert set(dict(config)) == active
    assert {k: dict(config)[k] for k in fixed} == fixed


def test_optuna_study_over_lambdarank_gives_valid_configurations() -> None:
    optuna = pytest.importorskip("optuna")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = load_space("lambdarank")
    seen: list[tuple[Configuration, dict[str, object]]] = []

    def objective(trial: object) -> float:
        config = peer.suggest_configuration(trial, space)
        seen.append((config, dict(trial.params)))  # type: ignore[attr-defined]
        return 0.0

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=30)
    assert {"bagging_fraction" in c for c, _ in seen} == {True, False}  # both branches seen
    for config, params in seen:
        # Optuna saw exactly the active hyperparameters; ConfigSpace keeps 13 digits of floats
        assert dict(config) == pytest.approx(params, rel=1e-12)
        assert ("bagging_fraction" in config) == (config["bagging_freq"] != 0)
        config.check_valid_configuration()


def test_unsupported_spaces_are_refused() -> None:
    cs = ConfigurationSpace(name="bad")
    cs.add(NormalFloatHyperparameter("n", mu=0.0, sigma=1.0, lower=-3.0, upper=3.0))
    with pytest.raises(ConfigError, match="'n' is a NormalFloatHyperparameter"):
        peer.check_convertible(cs)
    forbidden = _nested_space()
    forbidden.add(ForbiddenEqualsClause(forbidden["a"], "y"))
    with pytest.raises(ConfigError, match="forbidden clauses are not supported"):
        peer.check_convertible(forbidden)


# ---- curves and statistics -------------------------------------------------------------------
def _ev(end: float, budget: float, score: float | None) -> object:
    return rep.Evaluation(end, budget, score, {})


def test_best_curve_counts_the_largest_budget_within_the_walltime() -> None:
    evals = [_ev(1, 4, 0.9), _ev(2, 36, 0.5), _ev(3, 36, 0.4), _ev(4, 36, None),
             _ev(5, 36, 0.7), _ev(11, 36, 0.99)]  # fmt: skip
    assert rep.best_curve(evals, 36.0, 10.0) == [(2, 0.5), (5, 0.7)]
    curve = rep.best_curve(evals, 36.0, 10.0)
    got = rep.step_values(curve, np.array([0.0, 2.0, 4.9, 5.0, 10.0]))
    np.testing.assert_array_equal(got, [-np.inf, 0.5, 0.5, 0.7, 0.7])


def test_quantiles_treat_runs_without_a_result_as_worst() -> None:
    values = np.array([[-np.inf, 1.0], [-np.inf, 2.0], [0.5, 3.0], [0.7, 4.0]])
    np.testing.assert_array_equal(rep.quantile(values, 0.5), [-np.inf, 2.5])
    np.testing.assert_allclose(rep.quantile(values, 0.75), [0.55, 3.25])
    finite = np.array([[1.0, 5.0], [2.0, 6.0], [4.0, 9.0]])
    for q in (0.25, 0.5, 0.75):
        np.testing.assert_allclose(rep.quantile(finite, q), np.quantile(finite, q, axis=0))


def test_summary_median_iqr_and_time_to_reach_on_made_up_curves() -> None:
    curves = {
        "fast": {0: [(1.0, 0.6), (4.0, 0.8)], 1: [(2.0, 0.7)], 2: [(3.0, 0.9)]},
        "random": {0: [(5.0, 0.7)], 1: [(6.0, 0.65)], 2: [(7.0, 0.75)]},
    }
    s = rep.summarise(curves, walltime=10.0)
    times = s["fast"]["times"]
    assert times.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 10.0]
    # seeds at 1 s: (0.6, -inf, -inf), at 2 s: (0.6, 0.7, -inf), 3 s: all, 4 s: 0.6 -> 0.8
    expected = [-np.inf, -np.inf, 0.6, 0.7, 0.8, 0.8, 0.8, 0.8, 0.8]
    np.testing.assert_array_equal(s["fast"]["median"], expected)
    np.testing.assert_allclose(s["fast"]["q75"][3:5], [0.8, 0.85])
    assert s["random"]["final"] == {0: 0.7, 1: 0.65, 2: 0.75}
    target = 0.7  # random's final median
    assert rep.time_to_reach(times, s["fast"]["median"], target) == 3.0
    assert rep.time_to_reach(times, s["random"]["median"], target) == 7.0
    assert rep.time_to_reach(times, s["random"]["median"], 0.99) is None
    assert rep.median_iqr(s["random"]["final"]) == "0.7000 (0.6750-0.7250)"


def test_mean_ranks_share_ties_and_put_missing_results_last() -> None:
    blocks = [
        {"a": 0.9, "b": 0.8, "c": 0.8},
        {"a": -np.inf, "b": 0.1, "c": 0.2},
        {"a": 0.5, "b": 0.4},  # lacks c: not counted
    ]
    ranks = rep.mean_ranks(blocks)
    assert ranks == {"a": (2.0, 2), "b": (2.25, 2), "c": (1.75, 2)}


def test_wilcoxon_pairs_by_seed_and_handles_zeros_and_missing() -> None:
    from scipy.stats import wilcoxon

    ref = {0: 0.5, 1: 0.6, 2: 0.55, 3: 0.52, 4: 0.58}
    better = {k: v + 0.01 * (k + 1) for k, v in ref.items()}
    test = rep.wilcoxon_vs(better, ref)
    assert (test.n, test.n_nonzero) == (5, 5)
    assert test.p == pytest.approx(wilcoxon(list(better.values()), list(ref.values())).pvalue)
    assert test.p == pytest.approx(0.0625)  # exact two-sided p of 5 positive differences
    assert rep.wilcoxon_vs(ref, dict(ref)) == rep.PairedTest(1.0, 5, 0)
    missing = {**better, 0: -np.inf}  # no largest-budget result: worse than any score
    with_floor = rep.wilcoxon_vs(missing, ref)
    assert with_floor.n_nonzero == 5
    assert with_floor.p is not None
    assert math.isfinite(with_floor.p)
    assert rep.wilcoxon_vs({9: 1.0}, ref) == rep.PairedTest(None, 0, 0)


def test_an_extended_campaign_is_timed_on_its_own_clock(tmp_path: Path) -> None:
    import dataclasses
    import json

    from graphs import write_toy_root
    from toy_objectives import ToyObjective, run_toy, toy_config

    root = write_toy_root(tmp_path / "data")
    cfg = toy_config(tmp_path / "runs", root, trials=6)
    run_toy(cfg, ToyObjective())
    run_toy(dataclasses.replace(cfg, trials=10), ToyObjective(), resume=True)
    ends = [e.end for e in rep.hpo_evaluations(cfg.run_dir)]
    trials, record = cfg.run_dir / "trials.jsonl", cfg.run_dir / "campaign.json"
    saved = json.loads(record.read_text())
    (resume,) = saved["resumes"]
    n = resume["records"]  # the trials of the first stretch
    assert 0 < n < len(ends)
    # the same campaign, as if the extension had been started 1,000 s later
    rows = [json.loads(line) for line in trials.read_text().splitlines()]
    for r in rows[n:]:
        r["start"] += 1000.0
        r["end"] += 1000.0
    trials.write_text("".join(json.dumps(r) + "\n" for r in rows))
    resume["at"] += 1000.0
    record.write_text(json.dumps(saved))
    assert [e.end for e in rep.hpo_evaluations(cfg.run_dir)] == pytest.approx(ends)
    record.write_text(json.dumps({**saved, "resumes": []}))  # read as one stretch: it counts
    later = [e.end for e in rep.hpo_evaluations(cfg.run_dir)][n:]
    assert all(b - a >= 1000.0 for a, b in zip(ends[n:], later, strict=True))
