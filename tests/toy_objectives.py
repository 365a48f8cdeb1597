"""Cheap, picklable target functions for campaign tests (importable by Dask workers).

They follow the contract of ``hpo.campaign.objective.RankerObjective``:
``objective(config, seed=0, budget=None, **scattered) -> (cost, info)`` with ``info``
holding ``metrics`` ({collection: value}) and ``score``.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

from hpo.runs.record.folder import this_worker

TOY_COLLECTIONS = ("tile:xla", "layout:xla:default")


def run_toy_with_output(cfg: Any, objective: Any = None, **kwargs: Any) -> tuple[Any, str]:
    """``run_campaign`` quietly with ``objective`` (default :class:`ToyObjective`): its result
    and what it printed. hpo and rich are imported here, not by the Dask workers that import
    this module for its objectives."""
    import io

    from rich.console import Console

    from hpo.campaign import run_campaign

    out = io.StringIO()
    console = Console(file=out, width=300)
    objective = objective if objective is not None else ToyObjective()
    result = run_campaign(cfg, objective=objective, quiet=True, console=console, **kwargs)
    return result, out.getvalue()


def run_toy(cfg: Any, objective: Any = None, **kwargs: Any) -> Any:
    """:func:`run_toy_with_output`'s result alone."""
    return run_toy_with_output(cfg, objective, **kwargs)[0]


def toy_cost(config: Any, budget: float | None, best: tuple[float, float] = (0.05, 31.0)) -> float:
    """A smooth cost, least near ``best`` (learning_rate, num_leaves), lower at high budget.

    The default ``best`` is the space's default configuration (the baseline)."""
    lr = float(config["learning_rate"])
    leaves = float(config["num_leaves"])
    base = (math.log(lr / best[0])) ** 2 / 4 + (math.log(leaves / best[1])) ** 2 / 8
    fidelity = 0.0 if budget is None else 2.0 / math.sqrt(float(budget))
    return base + fidelity


class ToyObjective:
    """Toy objective; optional sleep, crash rule and required scattered tables.

    Parameters
    ----------
    sleep
        Seconds to sleep per call.
    crash_above_leaves
        Raise ``ValueError`` when ``num_leaves`` exceeds this.
    expect_tables
        Raise ``KeyError`` unless the scattered kwarg ``tables`` arrives.
    sleep_per_budget, budget_power
        Sleep ``sleep_per_budget * budget ** budget_power`` seconds on top of ``sleep``: a
        trial at the largest budget (the baseline) is still running while many cheap ones
        finish, as in a real campaign.
    best
        The (learning_rate, num_leaves) of least cost (:func:`toy_cost`).
    """

    def __init__(
        self,
        *,
        sleep: float = 0.0,
        crash_above_leaves: int | None = None,
        expect_tables: bool = False,
        sleep_per_budget: float = 0.0,
        budget_power: float = 1.0,
        best: tuple[float, float] = (0.05, 31.0),
    ) -> None:
        self.sleep = sleep
        self.best = best
        self.budget_power = budget_power
        self.crash_above_leaves = crash_above_leaves
        self.expect_tables = expect_tables
        self.sleep_per_budget = sleep_per_budget

    def __call__(
        self, config: Any, seed: int = 0, budget: float | None = None, **scattered: Any
    ) -> tuple[float, dict[str, Any]]:
        if self.expect_tables and "tables" not in scattered:
            raise KeyError(f"no scattered 'tables' (got {sorted(scattered)})")
        pause = self.sleep + self.sleep_per_budget * float(budget or 0.0) ** self.budget_power
        if pause:
            time.sleep(pause)
        leaves = int(config["num_leaves"])
        if self.crash_above_leaves is not None and leaves > self.crash_above_leaves:
            raise ValueError(f"toy crash: num_leaves {leaves} > {self.crash_above_leaves}")
        cost = toy_cost(config, budget, self.best)
        fold = scattered.get("instance")  # cross-validation: fold I is a little harder
        if fold is not None:
            cost += 0.05 * int(str(fold).removeprefix("fold"))
        metrics = {TOY_COLLECTIONS[0]: 1.0 - cost / 2, TOY_COLLECTIONS[1]: 1.0 - 1.5 * cost}
        score = sum(metrics.values()) / len(metrics)
        info = {
            "metrics": metrics,
            "score": score,
            "train_seconds": self.sleep,
            "rows": 100,
            "budget": budget,
            "worker": this_worker(),
        }
        if fold is not None:
            info["fold"] = fold
        if scattered.get("tables") is not None:
            info["tables_rows"] = int(scattered["tables"]["rows"])
            info["tables_id"] = id(scattered["tables"])  # the object, not a copy, in threads
        return 1.0 - score, info


def always_crash(config: Any, seed: int = 0, budget: float | None = None) -> tuple[float, dict]:
    """An objective that always raises."""
    raise RuntimeError("toy objective always crashes")


def nan_cost(config: Any, seed: int = 0, budget: float | None = None) -> tuple[float, dict]:
    """An objective that returns a NaN cost."""
    return float("nan"), {"metrics": {}, "score": None}


class InterruptAfter(ToyObjective):
    """Toy objective that raises KeyboardInterrupt on call number ``calls + 1`` (in-process)."""

    def __init__(self, calls: int, **settings: Any) -> None:
        super().__init__(**settings)
        self.calls = calls
        self.done = 0

    def __call__(
        self, config: Any, seed: int = 0, budget: float | None = None, **scattered: Any
    ) -> tuple[float, dict[str, Any]]:
        if self.done >= self.calls:
            raise KeyboardInterrupt("injected interrupt")
        self.done += 1
        return super().__call__(config, seed=seed, budget=budget, **scattered)


def toy_config(runs_dir: Any, data_root: Any, **overrides: Any) -> Any:
    """A small campaign over ``lambdarank_small`` for tests (budgets 1..27, eta 3)."""
    from hpo.campaign import CampaignConfig

    settings: dict[str, Any] = {
        "data_root": data_root,
        "runs_dir": runs_dir,
        "name": "toy",
        "collections": ("tile:xla",),
        "space": "lambdarank_small",
        "trials": 12,
        "optimizer": "random-hb",
        "min_budget": 1.0,
        "max_budget": 27.0,
        "eta": 3,
        "seed": 3,
    }
    settings.update(overrides)
    return CampaignConfig(**settings)


class DieOnce(ToyObjective):
    """Toy objective that kills its process once, like an OOM kill.

    It dies on call number ``after + 1`` counted across processes (calls append a byte to
    ``marker + ".calls"``), so ``after`` > 0 kills a worker in the middle of a campaign. With
    ``below`` it only dies in a trial whose budget is below it (later calls count): on a slow
    machine the baseline, at the largest budget, can start as late as call ``after + 1``.
    """

    def __init__(
        self,
        marker: str,
        *,
        after: int = 0,
        below: float | None = None,
        sleep_per_budget: float = 0.0,
    ) -> None:
        super().__init__(sleep_per_budget=sleep_per_budget)
        self.marker = marker
        self.after = after
        self.below = below

    def __call__(
        self, config: Any, seed: int = 0, budget: float | None = None, **scattered: Any
    ) -> tuple[float, dict[str, Any]]:
        if self.after:
            with open(self.marker + ".calls", "ab") as calls:
                calls.write(b".")
                calls.flush()
                if calls.tell() <= self.after:
                    return super().__call__(config, seed=seed, budget=budget, **scattered)
        if self.below is not None and (budget is None or budget >= self.below):
            return super().__call__(config, seed=seed, budget=budget, **scattered)
        try:
            fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return super().__call__(config, seed=seed, budget=budget, **scattered)
        os.close(fd)
        os._exit(3)
