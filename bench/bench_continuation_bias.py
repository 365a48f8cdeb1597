"""Does a continued booster score like one trained straight? Same configuration, same seed.

A multi-fidelity campaign's baseline trains straight to the largest budget, while every
other configuration reaches it by continuing its booster from the lower budgets (LightGBM
``init_model``). LightGBM starts its per-round random streams again at each continuation
(before 0b2881f from their seeds, since then from seeds of the rounds done:
``hpo.ranking.model.lightgbm_adapter.continued_seeds``). If continuing costs score, challengers
are judged against the baseline with a handicap. Per finished run (``rounds`` fidelity, no
folds) this trains, in a scratch booster folder:

- the **baseline** again along the campaign's budget ladder (min budget, then each stage,
  each continuing the last), against its recorded straight score;
- each **other trial at the largest budget** straight, against its recorded score (which
  was reached by continuing, or straight when the trial started at the largest budget).

    python bench/bench_continuation_bias.py RUN [RUN ...] --json out.json [--threads 2]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from hpo.campaign import read_campaign
from hpo.campaign.objective import RankerObjective, build_objective
from hpo.runs.record.folder import TRIALS_FILE, read_trials

sys.path.insert(0, str(Path(__file__).parent))
from optuna_peer import rung_budgets  # noqa: E402  (SMAC's rungs, as the campaigns ran them)


def replay(run: Path, threads: int, others: bool = True) -> dict[str, Any]:
    """One run: the baseline along the ladder, and (``others``) the largest-budget trials
    straight."""
    cfg = read_campaign(run)["config"]
    if cfg.fidelity != "rounds" or cfg.cv:
        raise SystemExit(f"{run}: needs the rounds fidelity without folds")
    objective, _ = build_objective(cfg, n_jobs=1)
    trials = [t for t in read_trials(run / TRIALS_FILE) if t.get("status") == "SUCCESS"]
    top = float(cfg.max_budget)
    out: dict[str, Any] = {"run": str(run), "baseline": None, "others": []}
    with tempfile.TemporaryDirectory() as scratch:
        chained = RankerObjective(
            dataclasses.replace(objective.settings, model_dir=scratch, n_threads=threads),
            objective.tables,
        )
        straight = RankerObjective(
            dataclasses.replace(objective.settings, model_dir=None, n_threads=threads),
            objective.tables,
        )
        base = next(t for t in trials if t.get("baseline"))
        score = math.nan
        for budget in rung_budgets(float(cfg.min_budget), top, cfg.eta):
            cost, _ = chained(base["config"], seed=base["seed"], budget=budget)
            score = 1.0 - cost
        again, _ = straight(base["config"], seed=base["seed"], budget=top)  # the replay check
        out["baseline"] = {"straight": base["score"], "continued": score, "replayed": 1.0 - again}
        print(f"{run.name}: baseline straight {base['score']:.4f} (replayed {1.0 - again:.4f}), "
              f"continued {score:.4f}")  # fmt: skip
        for t in trials if others else []:
            if t.get("baseline") or t["budget"] != top:
                continue
            cost, _ = straight(t["config"], seed=t["seed"], budget=top)
            reused = (t.get("info") or {}).get("rounds_reused", 0)
            row = {"trial": t["trial"], "recorded": t["score"], "straight": 1.0 - cost,
                   "continued": reused > 0}  # fmt: skip
            out["others"].append(row)
            how = "continued" if reused else "straight"
            print(f"  trial {t['trial']}: recorded {t['score']:.4f} ({how}), "
                  f"straight {1.0 - cost:.4f}")  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--baseline-only", action="store_true", help="skip the other trials")
    args = parser.parse_args()
    results = [replay(run, args.threads, not args.baseline_only) for run in args.runs]
    base = np.array([r["baseline"]["continued"] - r["baseline"]["straight"] for r in results])
    others = np.array(
        [o["recorded"] - o["straight"] for r in results for o in r["others"] if o["continued"]]
    )
    summary = {
        "baseline_continued_minus_straight": base.tolist(),
        "others_continued_minus_straight": others.tolist(),
    }
    for name, diffs in (("baseline", base), ("other trials", others)):
        if diffs.size:
            below = int((diffs < 0).sum())
            print(f"{name}: continued minus straight, median {np.median(diffs):+.4f}, "
                  f"mean {diffs.mean():+.4f}, below 0 in {below} of {diffs.size}")  # fmt: skip
    args.json.write_text(json.dumps({"results": results, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
