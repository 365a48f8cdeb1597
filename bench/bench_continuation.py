"""Compute saved by continued training in a multi-fidelity campaign (``rounds`` fidelity).

SMAC's successive halving retrains a promoted configuration at the higher budget; hpo
continues the booster saved at the lower budget instead. This reads a finished campaign's
trials.jsonl and, for every trial that continued a booster, retrains the same configuration
at the same budget from scratch on the same feature tables, timing both. Trials that did not
continue are counted once on both sides (their recorded time).

    python bench/bench_continuation.py --run RUN_DIR [--cache-dir DIR] [--limit 20]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from hpo.campaign import read_campaign
from hpo.campaign.objective import ObjectiveSettings, RankerObjective
from hpo.features import ExtractOptions, FeatureSpec, build_tables
from hpo.runs.record.folder import TRIALS_FILE, read_trials


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a finished run folder")
    parser.add_argument("--cache-dir", type=Path, default=Path(".hpo_cache"))
    parser.add_argument("--limit", type=int, default=20, help="continued trials to replay")
    args = parser.parse_args()

    cfg = read_campaign(args.run)["config"]
    if cfg.fidelity != "rounds":
        raise SystemExit(f"{args.run}: fidelity is '{cfg.fidelity}', continuation needs 'rounds'")
    trials = [t for t in read_trials(args.run / TRIALS_FILE) if t.get("status") == "SUCCESS"]
    continued = [t for t in trials if (t.get("info") or {}).get("rounds_reused", 0) > 0]
    tables = build_tables(
        cfg.data_root,
        cfg.collections,
        ("train", "valid"),
        FeatureSpec(),
        extract=ExtractOptions(cache_dir=args.cache_dir, n_jobs=2),
    )
    scratch = RankerObjective(
        ObjectiveSettings(collections=tuple(cfg.collections), max_budget=cfg.max_budget), tables
    )
    replay = continued[: args.limit]
    t_cont = sum(t["info"]["train_seconds"] for t in replay)
    rounds_cont = sum(t["info"]["rounds_trained"] for t in replay)
    rounds_full = sum(t["info"]["rounds_trained"] + t["info"]["rounds_reused"] for t in replay)
    t_scratch = 0.0
    diffs: list[float] = []
    for t in replay:
        t0 = time.perf_counter()
        cost, _ = scratch(t["config"], seed=t["seed"], budget=t["budget"])
        t_scratch += time.perf_counter() - t0
        diffs.append(abs((1.0 - cost) - t["score"]))
    others = sum(t["info"]["train_seconds"] for t in trials if t not in continued)
    print(
        f"{args.run.name}: {len(trials)} successful trials, {len(continued)} continued a "
        f"booster; replayed {len(replay)} from scratch"
    )
    print(
        f"  rounds trained, replayed trials: continued {rounds_cont}, from scratch {rounds_full}"
        f" ({rounds_cont / max(rounds_full, 1):.2f})"
    )
    print(
        f"  train+score seconds, replayed trials: continued {t_cont:.1f}, from scratch "
        f"{t_scratch:.1f} ({t_cont / max(t_scratch, 1e-9):.2f})"
    )
    if len(replay) == len(continued):
        total_c, total_s = others + t_cont, others + t_scratch
        print(
            f"  whole campaign compute: {total_c:.1f} s with continuation, {total_s:.1f} s "
            f"without ({total_c / total_s:.2f}, {1 - total_c / total_s:.0%} saved)"
        )
    if diffs:
        d = np.asarray(diffs)
        print(
            f"  |score continued - score scratch|: median {np.median(d):.4f}, "
            f"max {d.max():.4f}, {int((d > 0.05).sum())} of {d.size} above 0.05"
        )


if __name__ == "__main__":
    main()
