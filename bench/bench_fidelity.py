"""Which fidelity should the budget mean? Boosting rounds vs configs sampled per graph.

A low budget is useful to successive halving when it ranks configurations like the full
budget does, and is cheap. For N random configurations of the search space this evaluates
each at low, middle and full budget under both fidelities and prints, per fidelity, the
Spearman correlation of low/middle scores with the full-budget scores and the mean time per
trial at each budget.

    python bench/bench_fidelity.py --data ROOT [--configs 10] [--space lambdarank]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from hpo.campaign.objective import ObjectiveSettings, RankerObjective
from hpo.data.load import COLLECTIONS
from hpo.features import ExtractOptions, FeatureSpec, build_tables
from hpo.ranking.spaces import load_space

BUDGETS = {"rounds": (25.0, 75.0, 225.0), "configs": (16.0, 48.0, 144.0)}
FIXED_ROUNDS = 225


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--configs", type=int, default=10)
    parser.add_argument("--space", default="lambdarank")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=Path(".hpo_cache"))
    args = parser.parse_args()

    tables = build_tables(
        args.data,
        COLLECTIONS,
        ("train", "valid"),
        FeatureSpec(),
        extract=ExtractOptions(cache_dir=args.cache_dir, n_jobs=2),
    )
    space = load_space(args.space, seed=args.seed)
    configs = space.sample_configuration(args.configs)
    print(f"{args.configs} random configurations of '{args.space}', all collections")
    for fidelity, budgets in BUDGETS.items():
        settings = ObjectiveSettings(
            collections=COLLECTIONS,
            fidelity=fidelity,
            max_budget=budgets[-1],
            fixed_rounds=FIXED_ROUNDS,
            n_threads=2,
        )
        objective = RankerObjective(settings, tables)
        scores = np.zeros((len(configs), len(budgets)))
        seconds = np.zeros(len(budgets))
        for i, config in enumerate(configs):
            for j, budget in enumerate(budgets):
                t0 = time.perf_counter()
                cost, _ = objective(config, seed=args.seed, budget=budget)
                seconds[j] += time.perf_counter() - t0
                scores[i, j] = 1.0 - cost
        print(f"\nfidelity '{fidelity}' (configs fidelity trains {FIXED_ROUNDS} rounds)")
        for j, budget in enumerate(budgets):
            rho = spearmanr(scores[:, j], scores[:, -1]).statistic if j < len(budgets) - 1 else 1.0
            print(
                f"  budget {budget:>6g}: mean s/trial {seconds[j] / len(configs):6.2f}  "
                f"Spearman vs full {rho:6.3f}  best score {scores[:, j].max():.4f}"
            )


if __name__ == "__main__":
    main()
