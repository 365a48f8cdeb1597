"""Full-scale data: the per-graph config caps, measured three ways.

``ladder``: peak RSS and wall time of ``hpo run`` (a few trials) on datasets that differ only
in the configs per layout graph (one layout collection, ``layout:nlp:random``: 3 train, 1
valid and 1 test graph). Each rung is written with ``hpo.synth.layout.write_layout_file``
from the same seeds, run with the default caps and without caps, then deleted.

``caps``: the valid score of fixed hyperparameters against the train cap N (valid graphs
unsampled, so every N is scored on the same rows), with rows and seconds, on a dataset root.

``stages``: time and peak RSS of ``hpo data check``, ``hpo run``, ``hpo export`` and ``hpo
predict`` on a dataset root (the ``real`` scale).

Every measured command runs in a fresh wrapper process, so ``ru_maxrss`` of its children is
the peak of that command's process tree alone (see bench_loading.py).

Usage::

    python bench/bench_fullscale.py ladder [--configs 5000 20000 80000] [--work /tmp/ladder]
    python bench/bench_fullscale.py caps --data /tmp/full [--caps 250 1000 4000 0]
    python bench/bench_fullscale.py stages --data /tmp/real --work /tmp/real-work
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HPO = [sys.executable, "-m", "hpo.cli.main"]
LADDER_COLLECTION = "layout:nlp:random"


def _wrapped(cmd: list[str]) -> dict[str, float]:
    """Run ``cmd`` through a fresh wrapper process; its wall seconds and peak RSS (MiB)."""
    out = subprocess.run(
        [sys.executable, __file__, "measure", "--", *cmd],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def _measure(cmd: list[str]) -> int:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-4000:])
        return done.returncode
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mib": peak}))
    return 0


def _write_rung(root: Path, configs: int, config_nodes: int, seed: int) -> float:
    from hpo.data.load import collection_dir
    from hpo.synth.layout import write_layout_file

    plan = [("train", 3, configs), ("valid", 1, configs), ("test", 1, 1000)]
    size = 0
    for split, count, n in plan:
        folder = collection_dir(root, LADDER_COLLECTION, split)
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(count):
            path = folder / f"graph_{split}_{i}.npz"
            rng = np.random.default_rng([seed, ("train", "valid", "test").index(split), i])
            write_layout_file(
                path,
                rng,
                collection=LADDER_COLLECTION,
                n_nodes=2000,
                n_config_nodes=config_nodes,
                n_configs=n,
                labeled=split != "test",
            )
            size += path.stat().st_size
    return size / 1e9


def _ladder(args: argparse.Namespace) -> int:
    rows = []
    for configs in args.configs:
        root = args.work / f"rung-{configs}"
        shutil.rmtree(root, ignore_errors=True)
        gb = _write_rung(root, configs, args.config_nodes, args.seed)
        for label, extra in (("default caps", []), ("no caps", ["--train-configs", "0"])):
            extra = extra + (["--valid-configs", "0"] if extra else [])
            name = f"ladder-{configs}-{'caps' if not extra else 'nocaps'}"
            cmd = [
                *HPO,
                "run",
                "--data",
                str(root),
                "--collections",
                LADDER_COLLECTION,
                "--trials",
                str(args.trials),
                "--optimizer",
                "random",
                "--max-budget",
                str(args.rounds),
                "--name",
                name,
                "--runs-dir",
                str(args.work / "runs"),
                "--cache-dir",
                str(args.work / f"cache-{configs}"),
                "--quiet",
                *extra,
            ]
            r = _wrapped(cmd)
            rows.append((configs, gb, label, r["seconds"], r["peak_mib"]))
            print(f"{configs} configs ({gb:.2f} GB), {label}: {r}", flush=True)
        shutil.rmtree(root)
        shutil.rmtree(args.work / f"cache-{configs}", ignore_errors=True)
    print("\n| configs per layout graph | files GB | caps | wall s | peak RSS MiB |")
    print("|---:|---:|---|---:|---:|")
    for configs, gb, label, seconds, peak in rows:
        print(f"| {configs:,} | {gb:.2f} | {label} | {seconds:.0f} | {peak:.0f} |")
    return 0


def _caps(args: argparse.Namespace) -> int:
    from hpo.campaign.objective import ObjectiveSettings, RankerObjective
    from hpo.data.load import COLLECTIONS
    from hpo.features import FeatureSpec, SampleCaps, build_tables
    from hpo.ranking.spaces import load_space

    space = load_space("lambdarank", seed=args.seed)
    configs = [space.get_default_configuration()]
    for _ in range(args.configs - 1):
        configs.append(space.sample_configuration())
    print("| train cap N | train rows | extract s | train+score s | " + " | ".join(COLLECTIONS))
    for cap in args.caps:
        caps = SampleCaps(train_configs=cap, valid_configs=0, seed=args.seed)
        start = time.perf_counter()
        tables = build_tables(args.data, COLLECTIONS, ("train", "valid"), FeatureSpec(), caps=caps)
        extract = time.perf_counter() - start
        settings = ObjectiveSettings(
            collections=COLLECTIONS, fidelity="rounds", max_budget=args.rounds, n_threads=2
        )
        objective = RankerObjective(settings, tables)
        start = time.perf_counter()
        metrics = []
        for i, config in enumerate(configs):
            _, info = objective(config, seed=args.seed + i, budget=args.rounds)
            metrics.append([info["metrics"][c] for c in COLLECTIONS])
        fit = (time.perf_counter() - start) / len(configs)
        mean = np.mean(metrics, axis=0)
        rows = sum(t.n_rows for (_, split), t in tables.items() if split == "train")
        cells = " | ".join(f"{m:.4f}" for m in mean)
        print(
            f"| {cap or 'all'} | {rows:,} | {extract:.0f} | {fit:.1f} | {cells} | "
            f"mean {mean.mean():.4f}",
            flush=True,
        )
    return 0


def _stages(args: argparse.Namespace) -> int:
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    name = "fullscale"
    common = ["--runs-dir", str(work / "runs")]
    stages = [
        ("data check", [*HPO, "data", "check", str(args.data)]),
        (
            f"run ({args.trials} trials, {args.optimizer})",
            [
                *HPO,
                "run",
                "--data",
                str(args.data),
                "--trials",
                str(args.trials),
                "--optimizer",
                args.optimizer,
                "--name",
                name,
                "--cache-dir",
                str(work / "cache"),
                "--quiet",
                "--overwrite",
                *common,
                *args.run_args,
            ],
        ),
        ("export", [*HPO, "export", name, "--out", str(work / "model"), *common]),
        (
            "predict (every test config)",
            [
                *HPO,
                "predict",
                "--model",
                str(work / "model"),
                "--data",
                str(args.data),
                "--out",
                str(work / "submission.csv"),
            ],
        ),
    ]
    print("| stage | wall s | peak RSS MiB |\n|---|---:|---:|")
    for label, cmd in stages:
        r = _wrapped(cmd)
        print(f"| {label} | {r['seconds']:.0f} | {r['peak_mib']:.0f} |", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run one of the benchmarks and print a markdown table."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["measure", "--"]:
        return _measure(argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="bench", required=True)
    ladder = sub.add_parser("ladder")
    ladder.add_argument("--configs", type=int, nargs="+", default=[5000, 20000, 80000])
    ladder.add_argument("--config-nodes", type=int, default=100)
    ladder.add_argument("--trials", type=int, default=4)
    ladder.add_argument("--rounds", type=int, default=50)
    ladder.add_argument("--seed", type=int, default=0)
    ladder.add_argument("--work", type=Path, default=Path("/tmp/hpo-ladder"))
    caps = sub.add_parser("caps")
    caps.add_argument("--data", type=Path, required=True)
    caps.add_argument("--caps", type=int, nargs="+", default=[250, 1000, 4000, 0])
    caps.add_argument("--configs", type=int, default=2)
    caps.add_argument("--rounds", type=int, default=200)
    caps.add_argument("--seed", type=int, default=0)
    stages = sub.add_parser("stages")
    stages.add_argument("--data", type=Path, required=True)
    stages.add_argument("--work", type=Path, required=True)
    stages.add_argument("--trials", type=int, default=6)
    stages.add_argument("--optimizer", default="random")
    stages.add_argument("run_args", nargs="*", help="more `hpo run` options, after --")
    args = parser.parse_args(argv)
    handlers = {"ladder": _ladder, "caps": _caps, "stages": _stages}
    return handlers[args.bench](args)


if __name__ == "__main__":
    sys.exit(main())
