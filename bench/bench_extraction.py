"""Layout feature extraction: throughput (rows/s) and peak memory on a real-size file.

Uses the same large synthetic layout file as bench_loading.py (default 40,000 configs x 400
configurable nodes, 1.15 GB of node_config_feat) and measures, each in a fresh subprocess:

- ``stream``: only streaming node_config_feat (iter_config_chunks) — the I/O floor;
- ``full``: np.load of node_config_feat whole — the memory a naive reader needs;
- ``extract``: hpo's extract_file (no cache): all features of every config;
- ``train-capped`` / ``valid-capped``: ``extract_rows`` under the default caps' rule of a
  train graph (``DEFAULT_TRAIN_CONFIGS`` distinct configs, biased to fast ones, duplicates
  merged) and of a valid layout graph (``DEFAULT_VALID_CONFIGS`` uniform configs).

With ``--dataset ROOT`` it instead extracts every train and valid file of a dataset root
(e.g. ``hpo data synth --scale full``) with ``build_tables``, without cache: once in one
process (peak RSS of that process) and once with two joblib workers (wall time).

Usage::

    python bench/bench_extraction.py [--configs 40000] [--config-nodes 400] [--chunk 2048]
    python bench/bench_extraction.py --dataset ROOT
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

MODES = ("stream", "full", "extract", "train-capped", "valid-capped")


def _measure(mode: str, path: Path, chunk: int) -> dict[str, float]:
    from hpo.data.load import iter_config_chunks
    from hpo.features import FeatureSpec, SampleCaps, extract_file, extract_rows

    start = time.perf_counter()
    rows = 0
    if mode == "stream":
        for _, block in iter_config_chunks(path, chunk):
            rows += block.shape[0]
    elif mode == "full":
        with np.load(path) as npz:
            rows = npz["node_config_feat"].shape[0]
    elif mode == "extract":
        X = extract_file(path, "layout:nlp:random", FeatureSpec(chunk_size=chunk), None)[0]
        rows = X.shape[0]
    else:
        split = mode.split("-")[0]
        rule = SampleCaps().rule(split, layout=True, merge=split == "train")
        got, _ = extract_rows(path, "layout:nlp:random", FeatureSpec(chunk_size=chunk), rule)
        rows = got.n_configs  # rows/s counts configs of the file, all of which are read
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "peak_mib": peak, "rows": rows}


def _measure_dataset(root: Path, n_jobs: int) -> dict[str, float]:
    from hpo.data.load import COLLECTIONS
    from hpo.features import ExtractOptions, FeatureSpec, build_tables

    start = time.perf_counter()
    tables = build_tables(
        root, COLLECTIONS, ("train", "valid"), FeatureSpec(), extract=ExtractOptions(n_jobs=n_jobs)
    )
    seconds = time.perf_counter() - start
    rows = sum(g.n_configs for t in tables.values() for g in t.graphs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    table_mib = sum(t.X.nbytes for t in tables.values()) / 2**20
    return {"seconds": seconds, "peak_mib": peak, "rows": rows, "table_mib": table_mib}


def _dataset_report(root: Path) -> int:
    results = {}
    for n_jobs in (1, 2):
        cmd = [sys.executable, __file__, "--dataset", str(root), "--jobs", str(n_jobs)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        results[n_jobs] = json.loads(out.strip().splitlines()[-1])
    size = sum(p.stat().st_size for p in root.rglob("*.npz")) / 1e9
    print(f"\nbuild_tables on {root} (train + valid, all collections; {size:.2f} GB of files)\n")
    print(
        f"| {'joblib workers':<14} | {'configs':>9} | {'wall s':>7} | {'configs/s':>9} "
        f"| {'peak RSS MiB (main)':>19} | {'tables MiB':>10} |"
    )
    print(f"|{'-' * 16}|{'-' * 11}|{'-' * 9}|{'-' * 11}|{'-' * 21}|{'-' * 12}|")
    for n_jobs, r in results.items():
        rate = r["rows"] / r["seconds"]
        print(
            f"| {n_jobs:<14} | {r['rows']:>9} | {r['seconds']:>7.1f} | {rate:>9.0f} "
            f"| {r['peak_mib']:>19.0f} | {r['table_mib']:>10.0f} |"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=40_000)
    parser.add_argument("--config-nodes", type=int, default=400)
    parser.add_argument("--nodes", type=int, default=5_000)
    parser.add_argument("--chunk", type=int, default=2048)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/hpo-bench"))
    parser.add_argument("--measure", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--dataset", type=Path, help="measure build_tables on a dataset root")
    parser.add_argument("--jobs", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dataset and args.jobs:
        print(json.dumps(_measure_dataset(args.dataset, args.jobs)))
        return 0
    if args.dataset:
        return _dataset_report(args.dataset)
    if args.measure:
        print(json.dumps(_measure(args.measure, args.path, args.chunk)))
        return 0

    path = args.out / f"layout_{args.configs}x{args.config_nodes}_n{args.nodes}_seed{args.seed}.npz"
    loading = str(Path(__file__).parent / "bench_loading.py")
    if not path.exists():
        cmd = [
            sys.executable,
            loading,
            "--generate",
            "--path",
            str(path),
            "--configs",
            str(args.configs),
            "--config-nodes",
            str(args.config_nodes),
            "--nodes",
            str(args.nodes),
            "--seed",
            str(args.seed),
        ]
        print(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip())
    results = {}
    for mode in MODES:
        cmd = [
            sys.executable,
            __file__,
            "--measure",
            mode,
            "--path",
            str(path),
            "--chunk",
            str(args.chunk),
        ]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        results[mode] = json.loads(out.strip().splitlines()[-1])
    print(f"\n{path.name} ({path.stat().st_size / 1e9:.2f} GB), chunk = {args.chunk} configs\n")
    print(f"| {'mode':<42} | {'wall s':>7} | {'rows/s':>9} | {'peak RSS MiB':>12} |")
    print(f"|{'-' * 44}|{'-' * 9}|{'-' * 11}|{'-' * 14}|")
    labels = {
        "stream": "stream node_config_feat (I/O floor)",
        "full": 'np.load(...)["node_config_feat"] (memory)',
        "extract": "extract_file: all layout features",
        "train-capped": "extract_rows, train caps (merge + biased)",
        "valid-capped": "extract_rows, valid layout cap (uniform)",
    }
    for mode in MODES:
        r = results[mode]
        print(
            f"| {labels[mode]:<42} | {r['seconds']:>7.2f} | {r['rows'] / r['seconds']:>9.0f} "
            f"| {r['peak_mib']:>12.0f} |"
        )
    ex, st, full = results["extract"], results["stream"], results["full"]
    print(
        f"\nextract / stream wall time: {ex['seconds'] / st['seconds']:.2f}; "
        f"train-capped / stream: {results['train-capped']['seconds'] / st['seconds']:.2f}; "
        f"valid-capped / stream: {results['valid-capped']['seconds'] / st['seconds']:.2f}; "
        f"extract / full-load peak RSS: {ex['peak_mib'] / full['peak_mib']:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
