"""Optuna as the external peer of ``bench_optimizers.py``: TPE sampler plus HyperbandPruner.

The comparison is only fair if Optuna searches the same thing as SMAC, so nothing of the
objective is re-implemented here: the hpo search space (a ConfigSpace
``ConfigurationSpace``) is turned into Optuna suggestions one hyperparameter at a time, a
child only when its parent condition holds, and the suggestion is built back into a
ConfigSpace ``Configuration`` (which validates it), so hpo's own ``RankerObjective`` gets
exactly the kind of value SMAC would give it: same features, ranker, metric and budgets.

Budgets are boosting rounds. A trial trains rung by rung (``rung_budgets``: SMAC's
Hyperband budgets ``max_budget * eta**-k``, i.e. ``min_budget * eta**k`` when
``max_budget / min_budget`` is a power of eta), continuing its booster through the
objective's ``model_dir`` (keyed by configuration and seed), reports the score at each rung
and asks the pruner whether to go on. Every evaluation is appended to ``evaluations.jsonl``
as it ends, in the shape the benchmark report reads.

Optuna is an optional dependency (the ``bench`` extra): it is imported only when a study
runs, with an install hint when it is missing.
"""

from __future__ import annotations

import json
import math
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from ConfigSpace import Configuration, ConfigurationSpace
from ConfigSpace.hyperparameters import (
    CategoricalHyperparameter,
    Constant,
    OrdinalHyperparameter,
    UniformFloatHyperparameter,
    UniformIntegerHyperparameter,
)

from hpo.errors import ConfigError, UsageError

__all__ = [
    "DONE_FILE",
    "EVALUATIONS_FILE",
    "import_optuna",
    "rung_budgets",
    "run_optuna_study",
    "suggest_configuration",
]

EVALUATIONS_FILE = "evaluations.jsonl"
DONE_FILE = "done.json"
INSTALL_HINT = (
    "optuna is not installed; the benchmark's Optuna peer needs the bench extra: "
    "pip install -e '.[bench]' (or pip install 'optuna>=3.5')"
)


def import_optuna() -> Any:
    """Import optuna, or raise a one-line :class:`UsageError` saying how to install it."""
    try:
        import optuna
    except ImportError as exc:
        raise UsageError(INSTALL_HINT) from exc
    return optuna


def rung_budgets(min_budget: float, max_budget: float, eta: int) -> list[int]:
    """Boosting rounds of the rungs, ascending, as SMAC's Hyperband computes its budgets.

    SMAC takes ``max_budget * eta**-k`` for ``k = 0 .. floor(log_eta(max / min))``, so the
    largest budget is always a rung; Optuna must report at the same rounds for its scores to
    be comparable with the campaigns'.
    """
    if not 0 < min_budget <= max_budget or eta < 2:
        raise ConfigError(
            f"budgets: expected 0 < min_budget <= max_budget and eta >= 2, found "
            f"{min_budget:g}, {max_budget:g}, eta {eta}"
        )
    s_max = int(math.floor(math.log(max_budget / min_budget) / math.log(eta) + 1e-9))
    return sorted({max(1, int(round(max_budget / eta**k))) for k in range(s_max + 1)})


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _holds(condition: Any, values: dict[str, Any]) -> bool:
    """Whether ``condition`` holds for the values chosen so far; an inactive parent fails it.

    ConfigSpace's own ``satisfied_by_value`` raises ``KeyError`` for an inactive parent, where
    its sampler treats the condition as false (a child of an inactive parent is inactive).
    """
    components = getattr(condition, "components", None)
    if components is not None:  # AndConjunction / OrConjunction
        results = [_holds(c, values) for c in components]
        return any(results) if type(condition).__name__ == "OrConjunction" else all(results)
    if condition.parent.name not in values:
        return False
    return bool(condition.satisfied_by_value(values))


def check_convertible(space: ConfigurationSpace) -> None:
    """Raise :class:`ConfigError` if the space has parts the Optuna peer cannot search."""
    if list(space.forbidden_clauses):
        raise ConfigError(
            f"search space '{space.name}': forbidden clauses are not supported by the Optuna "
            "peer (expected none)"
        )
    supported = (
        CategoricalHyperparameter,
        Constant,
        OrdinalHyperparameter,
        UniformFloatHyperparameter,
        UniformIntegerHyperparameter,
    )
    for hp in space.values():
        if not isinstance(hp, supported):
            raise ConfigError(
                f"search space '{space.name}': hyperparameter '{hp.name}' is a "
                f"{type(hp).__name__}; the Optuna peer supports uniform floats/ints (log or "
                "not), categoricals, ordinals and constants"
            )


def suggest_configuration(trial: Any, space: ConfigurationSpace) -> Configuration:
    """Ask an Optuna trial for one configuration of ``space``.

    Hyperparameters are visited in the space's topological order (parents first); one whose
    parent conditions do not all hold is inactive and not suggested, so Optuna never sees a
    value that would not reach the objective. Categorical weights are ignored (Optuna's
    categoricals have none); an ordinal is suggested as an index so its order is kept.

    Returns
    -------
    Configuration
        Validated by ConfigSpace (activity, bounds), as SMAC would hand it to the target.
    """
    values: dict[str, Any] = {}
    for hp in space.values():
        conditions = space.parent_conditions_of[hp.name]
        if not all(_holds(c, values) for c in conditions):
            continue
        if isinstance(hp, UniformFloatHyperparameter):
            values[hp.name] = trial.suggest_float(
                hp.name, float(hp.lower), float(hp.upper), log=bool(hp.log)
            )
        elif isinstance(hp, UniformIntegerHyperparameter):
            values[hp.name] = trial.suggest_int(
                hp.name, int(hp.lower), int(hp.upper), log=bool(hp.log)
            )
        elif isinstance(hp, CategoricalHyperparameter):
            values[hp.name] = trial.suggest_categorical(hp.name, [_plain(c) for c in hp.choices])
        elif isinstance(hp, OrdinalHyperparameter):
            index = trial.suggest_int(hp.name, 0, len(hp.sequence) - 1)
            values[hp.name] = _plain(hp.sequence[index])
        elif isinstance(hp, Constant):
            values[hp.name] = _plain(hp.value)
        else:
            check_convertible(space)  # raises, naming the hyperparameter
    return Configuration(space, values=values)


def _append(path: Path, record: dict[str, Any]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")


def run_optuna_study(
    run_dir: Path,
    objective: Callable[..., tuple[float, dict[str, Any]]],
    space: ConfigurationSpace,
    *,
    seed: int,
    walltime: float,
    min_budget: float,
    max_budget: float,
    eta: int,
) -> dict[str, Any]:
    """Run one TPE + Hyperband-pruned study for ``walltime`` seconds in ``run_dir``.

    Parameters
    ----------
    run_dir
        Study folder: ``evaluations.jsonl`` is written there, then ``done.json``.
    objective
        hpo's ``RankerObjective`` ``(config, seed=, budget=) -> (cost, info)``; its
        ``model_dir`` should be a folder of this study, so rungs continue their boosters.
    seed
        Seed of the TPE sampler and of LightGBM.
    walltime
        Seconds of the study (``study.optimize(timeout=...)``); no new rung starts after it.

    Returns
    -------
    dict
        The content of ``done.json``: trial counts per Optuna state.
    """
    optuna = import_optuna()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    check_convertible(space)
    rungs = rung_budgets(min_budget, max_budget, eta)
    run_dir.mkdir(parents=True, exist_ok=True)
    log = run_dir / EVALUATIONS_FILE
    log.unlink(missing_ok=True)  # an unfinished study is run again from the start
    study = optuna.create_study(
        direction="maximize",
        sampler=optuna.samplers.TPESampler(seed=seed),
        pruner=optuna.pruners.HyperbandPruner(
            min_resource=rungs[0], max_resource=rungs[-1], reduction_factor=eta
        ),
    )
    t0 = time.perf_counter()

    def optimize(trial: Any) -> float:
        config = suggest_configuration(trial, space)
        score = math.nan
        for rounds in rungs:
            start = time.perf_counter() - t0
            if start >= walltime:  # the deadline passed during an earlier rung
                study.stop()
                raise optuna.TrialPruned()
            record: dict[str, Any] = {
                "trial": trial.number,
                "budget": float(rounds),
                "config": {k: _plain(v) for k, v in dict(config).items()},
                "start": start,
            }
            try:
                _, info = objective(config, seed=seed, budget=float(rounds))
            except Exception:  # recorded like SMAC's CRASHED trial, then Optuna marks it FAIL
                _append(log, {**record, "status": "CRASHED", "end": time.perf_counter() - t0,
                              "error": traceback.format_exc()})  # fmt: skip
                raise
            score = float(info["score"])
            _append(log, {**record, "status": "SUCCESS", "end": time.perf_counter() - t0,
                          "score": score, "metrics": info.get("metrics", {})})  # fmt: skip
            trial.report(score, step=rounds)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return score

    # catch: a crashing configuration fails its trial, never the study (as in SMAC)
    study.optimize(optimize, timeout=walltime, catch=(Exception,), gc_after_trial=False)
    states: dict[str, int] = {}
    for t in study.trials:
        states[t.state.name] = states.get(t.state.name, 0) + 1
    done = {"finished": time.time(), "seconds": time.perf_counter() - t0, "trials": states,
            "rungs": rungs, "optuna": optuna.__version__}  # fmt: skip
    (run_dir / DONE_FILE).write_text(json.dumps(done, indent=2), encoding="utf-8")
    return done
