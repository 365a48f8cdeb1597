"""Where a trial's time goes: Dataset construction, boosting, predicting valid, scoring.

Runs the campaign objective (default configuration of the space, every collection) a few times
per budget on the same objective, as a worker would, and prints the median seconds of each part
(from the trial info's ``seconds``), the rest of the trial (booster save, bookkeeping) and the
trials per minute. The first trial of the objective builds the Datasets (a cold worker); later
trials reuse them, so both are shown.

    python bench/bench_trial.py --data /tmp/h1-small --cache-dir /tmp/h1-cache \\
        --budgets 16 25 144 675 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from hpo.campaign.objective import ObjectiveSettings, RankerObjective, default_threads
from hpo.data.load import COLLECTIONS
from hpo.features import ExtractOptions, FeatureSpec, build_tables
from hpo.ranking.spaces import load_space

PARTS = ("dataset", "boost", "predict", "score")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=Path(".hpo_cache"))
    parser.add_argument("--budgets", type=int, nargs="+", default=[16, 25, 144, 675])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=default_threads(1))
    args = parser.parse_args()
    tables = build_tables(
        args.data,
        COLLECTIONS,
        ("train", "valid"),
        FeatureSpec(),
        extract=ExtractOptions(cache_dir=args.cache_dir),
    )
    hp = dict(load_space("lambdarank").get_default_configuration())
    with tempfile.TemporaryDirectory() as boosters:
        settings = ObjectiveSettings(
            collections=COLLECTIONS, model_dir=boosters, n_threads=args.threads
        )
        objective = RankerObjective(settings, tables)
        print(f"threads {args.threads}; default configuration of the lambdarank space")
        print(f"{'budget':>6} {'trial':>7} {'/min':>6} " + " ".join(f"{p:>15}" for p in PARTS))
        for label, budgets in (("cold", args.budgets[:1]), ("warm", args.budgets)):
            for budget in budgets:
                runs = []
                for _ in range(1 if label == "cold" else args.repeats):
                    if label == "cold":
                        objective.datasets.clear()
                    t0 = time.perf_counter()
                    _, info = objective(hp, seed=0, budget=budget)
                    runs.append((time.perf_counter() - t0, info["seconds"]))
                    for path in Path(boosters).glob("*.txt"):
                        path.unlink()  # no continuation: every trial boosts all its rounds
                total = statistics.median(r[0] for r in runs)
                parts = {p: statistics.median(r[1][p] for r in runs) for p in PARTS}
                cells = " ".join(f"{parts[p]:7.3f}s {100 * parts[p] / total:5.1f}%" for p in PARTS)
                print(f"{budget:>6} {total:6.2f}s {60 / total:6.1f} {cells}  ({label})")


if __name__ == "__main__":
    main()
