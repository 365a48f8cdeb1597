"""Which SMAC optimizer finds a better ranker in the same walltime? hyperband, sh, bo, random.

Each (optimizer, seed) is one campaign on the same data, space and walltime, in
``RUNS_DIR/<optimizer>-s<seed>`` (a finished run is reused, an interrupted one resumed). From
each ``trials.jsonl`` the best validation score so far is taken as a function of time since
the run's first trial started (feature extraction, cached after the first run, is not
counted). By default only trials at the largest budget count, since a score at a low fidelity
is not the score of the model one would export; ``--any-budget`` counts every trial.

Prints the median (over seeds) best score at each time point per optimizer, and writes every
curve to ``RUNS_DIR/curves.csv``.

    python bench/bench_optimizers.py --data DATA_ROOT --walltime 30m --seeds 0,1,2 \\
        --times 5m,10m,20m,30m [--optimizers hyperband,sh,bo,random] [--report-only]
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from hpo.campaign import OPTIMIZERS, CampaignConfig, run_campaign
from hpo.campaign.progress import format_duration
from hpo.cli.campaign import parse_duration
from hpo.data.load import resolve_collections
from hpo.errors import HpoError
from hpo.runs.folder import run_state
from hpo.runs.history import RunHistory, load_run

Curve = list[tuple[float, float]]  # (seconds since the first trial started, best score so far)


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options of the benchmark."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, required=True, help="dataset root")
    p.add_argument("--collection", default="all", help="collections (default: all)")
    p.add_argument("--space", default="lambdarank", help="search space (default: lambdarank)")
    p.add_argument(
        "--walltime",
        type=parse_duration,
        default=1800.0,
        help="walltime of each campaign (default: 30m)",
    )
    p.add_argument(
        "--optimizers", type=_csv, default=list(OPTIMIZERS), help="comma list (default: all four)"
    )
    p.add_argument(
        "--seeds",
        type=lambda s: [int(x) for x in _csv(s)],
        default=[0, 1, 2],
        help="comma list of seeds (default: 0,1,2)",
    )
    p.add_argument(
        "--times",
        type=lambda s: [parse_duration(x) for x in _csv(s)],
        help="time points of the table (default: 1/6, 1/3, 2/3 and all of walltime)",
    )
    p.add_argument("--fidelity", choices=("rounds", "configs"), default="rounds")
    p.add_argument("--min-budget", type=float)
    p.add_argument("--max-budget", type=float)
    p.add_argument("--eta", type=int, default=3)
    p.add_argument("--workers", type=int, default=1, help="parallel trials per campaign")
    p.add_argument("--cache-dir", type=Path, default=Path(".hpo_cache"))
    p.add_argument("--runs-dir", type=Path, default=Path("bench/out/optimizers"))
    p.add_argument(
        "--any-budget",
        action="store_true",
        help="count trials at every budget, not only the largest",
    )
    p.add_argument("--report-only", action="store_true", help="only read existing runs")
    p.add_argument("--quiet", action="store_true", help="plain log lines while running")
    args = p.parse_args(argv)
    unknown = sorted(set(args.optimizers) - set(OPTIMIZERS))
    if unknown:
        p.error(f"unknown optimizer(s) {', '.join(unknown)} (expected {', '.join(OPTIMIZERS)})")
    if args.times is None:
        args.times = [args.walltime * f for f in (1 / 6, 1 / 3, 2 / 3, 1.0)]
    return args


def campaign_config(args: argparse.Namespace, optimizer: str, seed: int) -> CampaignConfig:
    """The campaign of one (optimizer, seed): the trial limit is out of reach, walltime rules."""
    return CampaignConfig(
        data_root=args.data,
        collections=resolve_collections(args.collection),
        space=args.space,
        name=f"{optimizer}-s{seed}",
        runs_dir=args.runs_dir,
        trials=1_000_000,
        walltime=args.walltime,
        optimizer=optimizer,
        fidelity=args.fidelity,
        min_budget=args.min_budget,
        max_budget=args.max_budget,
        eta=args.eta,
        seed=seed,
        workers=args.workers,
        cache_dir=args.cache_dir,
    )


def run_one(cfg: CampaignConfig, quiet: bool) -> None:
    """Run, resume, or keep the campaign of ``cfg``."""
    state = run_state(cfg.run_dir)
    if state == "finished":
        print(f"{cfg.name}: finished, reused", file=sys.stderr)
        return
    run_campaign(cfg, quiet=quiet, resume=state == "interrupted")


def best_curve(run: RunHistory, max_budget_only: bool) -> Curve:
    """Best score so far at each trial end, in seconds since the first trial started."""
    starts = [t.start for t in run.trials if t.start is not None]
    if not starts:
        return []
    t0 = min(starts)
    top = run.settings.get("max_budget")
    points = sorted(
        (t.end - t0, t.score)
        for t in run.successful
        if t.end is not None and t.score is not None and (not max_budget_only or t.budget == top)
    )
    curve: Curve = []
    best = -math.inf
    for seconds, score in points:
        if score > best:
            best = score
            curve.append((seconds, best))
    return curve


def best_at(curve: Curve, seconds: float) -> float | None:
    """Best score reached by ``seconds``; ``None`` before the first counted trial."""
    reached = [score for t, score in curve if t <= seconds]
    return reached[-1] if reached else None


def report(curves: dict[str, list[Curve]], times: list[float]) -> str:
    """Table of the median best score over seeds, per optimizer and time point."""
    header = ["optimizer", "runs", *(format_duration(t) for t in times)]
    rows = [header]
    for optimizer, runs in curves.items():
        cells = [optimizer, str(len(runs))]
        for t in times:
            values = [v for v in (best_at(c, t) for c in runs) if v is not None]
            cell = f"{statistics.median(values):.4f}" if values else "-"
            if values and len(values) < len(runs):
                cell += f" ({len(values)}/{len(runs)})"
            cells.append(cell)
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows)


def write_curves(path: Path, curves: dict[str, list[tuple[int, Curve]]]) -> None:
    """Every curve point as CSV rows ``optimizer,seed,seconds,best_score``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["optimizer", "seed", "seconds", "best_score"])
        for optimizer, runs in curves.items():
            for seed, curve in runs:
                for seconds, score in curve:
                    writer.writerow([optimizer, seed, f"{seconds:.3f}", f"{score:.6f}"])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark campaigns (unless --report-only) and print the comparison."""
    args = parse_args(argv)
    by_optimizer: dict[str, list[tuple[int, Curve]]] = {}
    try:
        for optimizer in args.optimizers:
            for seed in args.seeds:
                cfg = campaign_config(args, optimizer, seed)
                if not args.report_only:
                    run_one(cfg, args.quiet)
                if run_state(cfg.run_dir) == "missing":
                    continue
                curve = best_curve(load_run(cfg.run_dir), not args.any_budget)
                by_optimizer.setdefault(optimizer, []).append((seed, curve))
    except HpoError as exc:
        print(f"bench_optimizers: error: {exc}", file=sys.stderr)
        return 2
    write_curves(args.runs_dir / "curves.csv", by_optimizer)
    counted = "any budget" if args.any_budget else "largest budget only"
    print(f"median best validation score over seeds {args.seeds} ({counted}), "
          f"walltime {format_duration(args.walltime)} per run")  # fmt: skip
    print(report({k: [c for _, c in v] for k, v in by_optimizer.items()}, args.times))
    print(f"curves: {args.runs_dir / 'curves.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
