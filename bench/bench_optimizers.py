"""Which optimizer finds a better ranker in the same wall-clock? hpo's optimizers vs Optuna.

Every (dataset, optimizer, seed) is one run with the same data, space, objective, budgets
and walltime. hpo optimizers (any name ``hpo run --optimizer`` takes) run as hpo campaigns;
``optuna`` runs Optuna's TPE sampler with its HyperbandPruner on hpo's own objective (see
``optuna_peer.py``). Runs live in ``OUT/<dataset>/<optimizer>-s<seed>/``: a finished run is
kept, an interrupted campaign resumed, an unfinished Optuna study run again, so the
benchmark can be stopped and restarted; ``--report-only`` rebuilds the report from the
folders. With ``--parallel K`` K runs go at once as subprocesses, each with
``cores // K`` LightGBM threads, in an order that interleaves optimizers and seeds so that
contention hits every optimizer alike.

The report (``optimizer_report.py``): any-time curves of the best score at the largest
budget (median and IQR over seeds, the default configuration as a reference line) in
``OUT/anytime.png``, every curve in ``OUT/curves.json``, and ``OUT/report.md``: per dataset
and optimizer the final median (IQR), mean rank, a two-sided Wilcoxon signed-rank p-value
against the reference (random search) paired by seed, and when the median curve first
reaches the reference's final median.

    python bench/bench_optimizers.py --data small0=/tmp/small0 --data small1=/tmp/small1 \\
        --walltime 10m --seeds 0,1,2,3,4 --min-budget 42 --max-budget 672 --parallel 2
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling bench modules

import numpy as np  # noqa: E402
import optimizer_report as rep  # noqa: E402
import optuna_peer  # noqa: E402

from hpo.campaign import FIDELITY_BUDGETS, OPTIMIZERS, CampaignConfig  # noqa: E402
from hpo.campaign.progress import format_duration  # noqa: E402
from hpo.cli.campaign import parse_duration  # noqa: E402
from hpo.data.load import resolve_collections  # noqa: E402
from hpo.errors import HpoError, UsageError  # noqa: E402
from hpo.runs.record.folder import run_state  # noqa: E402

OPTUNA = "optuna"
MANIFEST = "bench.json"
DEFAULT_FILE = "default.json"
#: CampaignConfig fields that set LightGBM threads, if this hpo version has one.
THREAD_FIELDS = ("threads", "n_threads", "lgbm_threads")


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _dataset(text: str) -> tuple[str, Path]:
    label, sep, path = text.partition("=")
    return (label, Path(path)) if sep else (Path(text).name, Path(text))


def _setting(text: str) -> tuple[str, Any]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, found {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options of the benchmark."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=_dataset, action="append", default=[],
                   help="dataset as LABEL=PATH (repeat for several)")  # fmt: skip
    p.add_argument("--collection", default="all", help="collections (default: all)")
    p.add_argument("--space", default="lambdarank", help="search space (default: lambdarank)")
    p.add_argument("--walltime", type=parse_duration, default=1800.0,
                   help="wall-clock of each run (default: 30m)")  # fmt: skip
    p.add_argument("--optimizers", type=_csv, default=[*OPTIMIZERS, OPTUNA],
                   help=f"comma list (default: {','.join([*OPTIMIZERS, OPTUNA])})")  # fmt: skip
    p.add_argument("--reference", default="random", help="optimizer tested against")
    p.add_argument("--seeds", type=lambda s: [int(x) for x in _csv(s)], default=[0, 1, 2, 3, 4],
                   help="comma list of seeds (default: 0,1,2,3,4)")  # fmt: skip
    p.add_argument("--min-budget", type=float, default=FIDELITY_BUDGETS["rounds"][0])
    p.add_argument("--max-budget", type=float, default=FIDELITY_BUDGETS["rounds"][1])
    p.add_argument("--eta", type=int, default=CampaignConfig.eta)
    p.add_argument("--parallel", type=int, default=1, help="runs at once (default: 1)")
    p.add_argument("--threads", type=int, help="LightGBM threads per run (default: cores // K)")
    p.add_argument("--campaign-setting", type=_setting, action="append", default=[],
                   metavar="KEY=VALUE", help="extra CampaignConfig setting")  # fmt: skip
    p.add_argument("--out", type=Path, default=Path("/tmp/hpo-bench/optimizers"))
    p.add_argument("--cache-dir", type=Path, help="feature cache (default: OUT/cache)")
    p.add_argument("--report-only", action="store_true", help="only read existing runs")
    p.add_argument("--run-one", help=argparse.SUPPRESS)  # a subprocess: one run, as JSON
    args = p.parse_args(argv)
    if args.run_one is None and not args.data:
        p.error("give at least one --data LABEL=PATH")
    if args.parallel < 1:
        p.error(f"--parallel: expected an integer >= 1, found {args.parallel}")
    unknown = sorted(set(args.optimizers) - {*OPTIMIZERS, OPTUNA})
    if unknown:
        p.error(f"unknown optimizer(s) {', '.join(unknown)} (expected "
                f"{', '.join([*OPTIMIZERS, OPTUNA])})")  # fmt: skip
    args.out = args.out.absolute()
    args.cache_dir = (args.cache_dir or args.out / "cache").absolute()
    cores = os.cpu_count() or 1
    args.threads = args.threads or max(1, cores // args.parallel)
    return args


# ---- one run ---------------------------------------------------------------------------------
def plan(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every run's spec, seed-major and with the optimizers rotated per seed.

    With K runs at a time, neighbours in this order run together: rotating the optimizers
    means no optimizer always starts a seed (or always shares the machine with the same one).
    """
    specs = []
    for i, seed in enumerate(args.seeds):
        k = i % len(args.optimizers)
        for label, path in args.data:
            for optimizer in args.optimizers[k:] + args.optimizers[:k]:
                specs.append({
                    "optimizer": optimizer, "seed": seed, "label": label,
                    "data": str(path.absolute()), "runs_dir": str(args.out / label),
                    "collections": list(resolve_collections(args.collection)),
                    "space": args.space, "walltime": args.walltime, "eta": args.eta,
                    "min_budget": args.min_budget, "max_budget": args.max_budget,
                    "threads": args.threads, "cache_dir": str(args.cache_dir),
                    "settings": dict(args.campaign_setting),
                })  # fmt: skip
    return specs


def run_dir(spec: dict[str, Any]) -> Path:
    """Folder of one run."""
    return Path(spec["runs_dir"]) / f"{spec['optimizer']}-s{spec['seed']}"


def is_done(spec: dict[str, Any]) -> bool:
    """Whether the run has finished (its folder is kept and not run again)."""
    if spec["optimizer"] == OPTUNA:
        return (run_dir(spec) / optuna_peer.DONE_FILE).exists()
    return run_state(run_dir(spec)) == "finished"


def campaign_config(spec: dict[str, Any]) -> CampaignConfig:
    """The hpo campaign of one spec: walltime rules, the trial limit is out of reach."""
    fields = {f.name for f in dataclasses.fields(CampaignConfig)}
    threads = {k: spec["threads"] for k in THREAD_FIELDS if k in fields}
    threads = dict(list(threads.items())[:1])  # the first such field this version has
    return CampaignConfig(
        data_root=Path(spec["data"]), collections=tuple(spec["collections"]),
        space=spec["space"], name=run_dir(spec).name, runs_dir=Path(spec["runs_dir"]),
        trials=1_000_000, walltime=spec["walltime"], optimizer=spec["optimizer"],
        fidelity="rounds", min_budget=spec["min_budget"], max_budget=spec["max_budget"],
        eta=spec["eta"], seed=spec["seed"], workers=1, cache_dir=Path(spec["cache_dir"]),
        **{**threads, **spec["settings"]},
    )  # fmt: skip


def load_tables(data: Path, collections: Sequence[str], cache_dir: Path) -> Any:
    """Feature tables of a dataset (train and valid), from the cache after the first time."""
    from hpo.features import ExtractOptions, FeatureSpec, build_tables, extraction_jobs

    extract = ExtractOptions(cache_dir=cache_dir, n_jobs=extraction_jobs(None))
    return build_tables(data, tuple(collections), ("train", "valid"), FeatureSpec(),
                        extract=extract)  # fmt: skip


def run_one(spec: dict[str, Any]) -> None:
    """Run, resume or keep one run (called in a subprocess)."""
    if is_done(spec):
        return
    folder = run_dir(spec)
    if spec["optimizer"] != OPTUNA:
        from hpo.campaign import run_campaign

        state = run_state(folder)
        if state == "running":
            raise UsageError(f"{folder}: held by a live campaign process")
        run_campaign(campaign_config(spec), quiet=True, resume=state == "interrupted")
        return
    from hpo.campaign.objective import ObjectiveSettings, RankerObjective
    from hpo.ranking.spaces import load_space

    optuna_peer.import_optuna()  # fail before loading anything
    shutil.rmtree(folder, ignore_errors=True)  # an unfinished study starts again
    tables = load_tables(Path(spec["data"]), spec["collections"], Path(spec["cache_dir"]))
    settings = ObjectiveSettings(
        collections=tuple(spec["collections"]), fidelity="rounds",
        max_budget=float(spec["max_budget"]), model_dir=str(folder / "boosters"),
        n_threads=int(spec["threads"]),
    )  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.json").write_text(json.dumps(spec, indent=2), encoding="utf-8")
    optuna_peer.run_optuna_study(
        folder, RankerObjective(settings, tables), load_space(spec["space"], seed=spec["seed"]),
        seed=spec["seed"], walltime=spec["walltime"], min_budget=spec["min_budget"],
        max_budget=spec["max_budget"], eta=spec["eta"],
    )  # fmt: skip


# ---- many runs -------------------------------------------------------------------------------
def run_all(specs: list[dict[str, Any]], parallel: int) -> list[str]:
    """Run the unfinished specs, ``parallel`` subprocesses at a time; return failed names."""
    todo = [s for s in specs if not is_done(s)]
    print(f"{len(specs) - len(todo)} run(s) finished before, {len(todo)} to run, "
          f"{parallel} at a time", file=sys.stderr)  # fmt: skip
    running: list[tuple[subprocess.Popen[bytes], dict[str, Any], Any]] = []
    failed: list[str] = []
    try:
        while todo or running:
            while todo and len(running) < parallel:
                spec = todo.pop(0)
                logs = Path(spec["runs_dir"]) / "logs"
                logs.mkdir(parents=True, exist_ok=True)
                fh = open(logs / f"{run_dir(spec).name}.log", "ab")  # noqa: SIM115
                env = {**os.environ, "OMP_NUM_THREADS": str(spec["threads"])}
                cmd = [sys.executable, str(Path(__file__).resolve()), "--run-one",
                       json.dumps(spec)]  # fmt: skip
                running.append((subprocess.Popen(cmd, stdout=fh, stderr=fh, env=env), spec, fh))
                print(f"started {spec['label']}/{run_dir(spec).name}", file=sys.stderr)
            time.sleep(0.5)
            for item in [r for r in running if r[0].poll() is not None]:
                proc, spec, fh = item
                running.remove(item)
                fh.close()
                name = f"{spec['label']}/{run_dir(spec).name}"
                if proc.returncode != 0:
                    failed.append(name)
                print(f"{'FAILED' if proc.returncode else 'finished'} {name} "
                      f"(exit {proc.returncode})", file=sys.stderr)  # fmt: skip
    finally:
        for proc, _, fh in running:  # only our own children, on interrupt
            proc.terminate()
            proc.wait()
            fh.close()
    return failed


def default_score(label: str, data: Path, args: argparse.Namespace) -> tuple[float | None, str]:
    """Score of the space's default configuration at the largest budget, and where it came from.

    A campaign's baseline trial (the default configuration at the largest budget) is used
    when campaigns have one (the median over campaigns); otherwise the script evaluates it
    once, with seed 0, and caches it in ``OUT/<dataset>/default.json``.
    """
    from hpo.ranking.spaces import load_space

    space = load_space(args.space)
    default = {k: optuna_peer._plain(v) for k, v in dict(space.get_default_configuration()).items()}
    canon = json.dumps(default, sort_keys=True)
    found = []
    for optimizer in args.optimizers:
        for seed in args.seeds:
            folder = args.out / label / f"{optimizer}-s{seed}"
            if optimizer == OPTUNA or run_state(folder) == "missing":
                continue
            found += [e.score for e in rep.hpo_evaluations(folder)
                      if e.score is not None and e.budget == args.max_budget
                      and json.dumps(e.config, sort_keys=True) == canon][:1]  # fmt: skip
    if found:
        return float(np.median(found)), f"baseline trials of {len(found)} campaigns (median)"
    cache = args.out / label / DEFAULT_FILE
    key = {"space": args.space, "max_budget": args.max_budget,
           "collections": list(resolve_collections(args.collection)), "seed": 0}  # fmt: skip
    if cache.exists():
        saved = json.loads(cache.read_text(encoding="utf-8"))
        if saved.get("key") == key:
            return float(saved["score"]), f"evaluated by the script, cached in {cache}"
    if not data.exists():
        return None, "unknown (no baseline trial, no cache, no data)"
    from hpo.campaign.objective import ObjectiveSettings, RankerObjective

    tables = load_tables(data, key["collections"], args.cache_dir)
    settings = ObjectiveSettings(collections=tuple(key["collections"]), fidelity="rounds",
                                 max_budget=args.max_budget, n_threads=args.threads)  # fmt: skip
    _, info = RankerObjective(settings, tables)(space.get_default_configuration(), seed=0)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({"key": key, "score": info["score"], "metrics": info["metrics"]},
                                indent=2), encoding="utf-8")  # fmt: skip
    return float(info["score"]), f"evaluated by the script, cached in {cache}"


def collect(args: argparse.Namespace, label: str) -> dict[str, dict[int, rep.Curve]]:
    """Every finished or interrupted run's curve of one dataset, per optimizer and seed."""
    out: dict[str, dict[int, rep.Curve]] = {}
    for optimizer in args.optimizers:
        for seed in args.seeds:
            folder = args.out / label / f"{optimizer}-s{seed}"
            if optimizer == OPTUNA:
                log = folder / optuna_peer.EVALUATIONS_FILE
                evals = rep.optuna_evaluations(log) if log.exists() else None
            else:
                evals = None if run_state(folder) == "missing" else rep.hpo_evaluations(folder)
            if evals is not None:
                curve = rep.best_curve(evals, args.max_budget, args.walltime)
                out.setdefault(optimizer, {})[seed] = curve
    return out


def report(args: argparse.Namespace) -> str:
    """Build the table, the figure and the curves JSON from the run folders."""
    manifest_path = args.out / MANIFEST
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    rungs = optuna_peer.rung_budgets(args.min_budget, args.max_budget, args.eta)
    how = (f"{manifest['parallel']} runs at a time, {manifest['threads']} LightGBM thread(s) "
           f"each ({manifest['thread_note']}), {manifest['cores']} cores"
           if manifest else "parallelism unknown (no bench.json)")  # fmt: skip
    header = (f"Walltime {format_duration(args.walltime)} per run; rounds budgets "
              f"{'/'.join(map(str, rungs))} (eta {args.eta}); seeds "
              f"{','.join(map(str, args.seeds))}; space {args.space}; {how}. Score: best valid "
              "score at the largest budget; Wilcoxon signed-rank, two-sided, paired by seed, "
              "zero differences dropped.")  # fmt: skip
    summaries, raw, defaults, parts = {}, {}, {}, [header]
    for label, data in args.data:
        raw[label] = collect(args, label)
        summaries[label] = rep.summarise(raw[label], args.walltime)
        defaults[label], source = default_score(label, data, args)
        parts.append(rep.dataset_table(label, summaries[label], reference=args.reference,
                                       walltime=args.walltime, default_score=defaults[label])
                     + f"\n\nDefault configuration score: {source}.")  # fmt: skip
    parts.append("### All datasets\n\n" + rep.overall_table(summaries, args.reference))
    text = "\n\n".join(parts) + "\n"
    (args.out / "report.md").write_text(text, encoding="utf-8")
    settings = {k: v for k, v in manifest.items()} | {"walltime": args.walltime, "rungs": rungs}
    (args.out / "curves.json").write_text(
        json.dumps(rep.curves_json(summaries, raw, defaults, settings)), encoding="utf-8"
    )
    title = (f"median and IQR over seeds; {format_duration(args.walltime)} per run; "
             f"{how.split(',')[0]}")  # fmt: skip
    rep.plot_curves(args.out / "anytime.png", summaries, defaults, title=title)
    return text


def write_manifest(args: argparse.Namespace) -> None:
    """Record how the runs were made (K at a time, threads), for the report."""
    fields = {f.name for f in dataclasses.fields(CampaignConfig)}
    passed = [k for k in THREAD_FIELDS if k in fields][:1]
    note = (f"campaigns via CampaignConfig.{passed[0]}" if passed else
            "Optuna only; this hpo's campaigns train with their own thread setting")  # fmt: skip
    manifest = {"parallel": args.parallel, "threads": args.threads, "thread_note": note,
                "cores": os.cpu_count(), "host": socket.gethostname(), "written": time.time(),
                "walltime": args.walltime, "optimizers": args.optimizers, "seeds": args.seeds,
                "datasets": {k: str(v) for k, v in args.data}}  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark (unless --report-only), then print and write the report."""
    args = parse_args(argv)
    try:
        if args.run_one is not None:
            run_one(json.loads(args.run_one))
            return 0
        failed: list[str] = []
        if not args.report_only:
            specs = plan(args)
            if OPTUNA in args.optimizers:
                optuna_peer.import_optuna()
            for label, data in args.data:  # extract once, before runs read the cache at once
                print(f"{label}: feature tables ({data})", file=sys.stderr)
                load_tables(data, resolve_collections(args.collection), args.cache_dir)
            write_manifest(args)
            failed = run_all(specs, args.parallel)
        print(report(args))
    except HpoError as exc:
        print(f"bench_optimizers: error: {exc}", file=sys.stderr)
        return 2
    print(f"report: {args.out / 'report.md'}, figure: {args.out / 'anytime.png'}, "
          f"curves: {args.out / 'curves.json'}")  # fmt: skip
    if failed:
        print(f"bench_optimizers: {len(failed)} run(s) failed: {', '.join(failed)} "
              f"(logs in OUT/<dataset>/logs)", file=sys.stderr)  # fmt: skip
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
