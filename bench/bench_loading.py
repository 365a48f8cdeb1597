"""Peak memory and time of reading ``node_config_feat`` whole versus in chunks.

Writes one large synthetic layout file (default 40,000 configs x 400 configurable nodes,
about 1.15 GB of ``node_config_feat``), then measures, each in a fresh subprocess so that
``ru_maxrss`` is the peak of that reader alone:

- ``baseline``: the interpreter with numpy and hpo imported, nothing read;
- ``full``: ``np.load(path)["node_config_feat"]`` and a float64 sum of it;
- ``chunked``: ``hpo.data.load.iter_config_chunks(path, chunk)`` summing chunk by chunk.

Usage::

    python bench/bench_loading.py [--configs 40000] [--config-nodes 400] [--chunk 4096]

The file is kept under ``--out`` (default ``/tmp/hpo-bench``, outside the repository) and
reused when it already exists. It is written by a subprocess too: on Linux a child's
``ru_maxrss`` starts from its parent's peak at fork time, so the measuring parent must stay
small. ``VmHWM`` (``/proc/self/status``) is shown as a
cross-check.
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

MODES = ("baseline", "full", "chunked")


def _measure(mode: str, path: Path, chunk: int) -> dict[str, float]:
    """Run one reader in this process and return its wall time, peak RSS and checksum."""
    from hpo.data.load import iter_config_chunks

    start = time.perf_counter()
    total = 0.0
    if mode == "full":
        with np.load(path) as npz:
            total = float(npz["node_config_feat"].sum(dtype=np.float64))
    elif mode == "chunked":
        for _, block in iter_config_chunks(path, chunk):
            total += float(block.sum(dtype=np.float64))
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    return {
        "seconds": seconds,
        "peak_mib": peak_kib / 1024,
        "hwm_mib": _vm_hwm_mib(),
        "checksum": total,
    }


def _vm_hwm_mib() -> float:
    """Peak RSS of this process image from ``/proc/self/status`` (NaN where unavailable)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _run_child(*args: str) -> str:
    cmd = [sys.executable, __file__, *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


def _generate(path: Path, configs: int, config_nodes: int, nodes: int, seed: int) -> str:
    """Write the benchmark file (run in a subprocess); return a one-line report."""
    from hpo.synth.layout import write_layout_file

    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    nc = write_layout_file(
        path,
        np.random.default_rng(seed),
        collection="layout:nlp:random",
        n_nodes=nodes,
        n_config_nodes=config_nodes,
        n_configs=configs,
        labeled=True,
    )
    return (
        f"wrote {path}: {configs} configs x {nc} configurable nodes, "
        f"{path.stat().st_size / 1e9:.2f} GB in {time.perf_counter() - start:.1f} s, "
        f"generator peak RSS {_vm_hwm_mib():.0f} MiB"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark (or, with ``--measure``, one measurement) and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=40_000)
    parser.add_argument("--config-nodes", type=int, default=400)
    parser.add_argument("--nodes", type=int, default=5_000)
    parser.add_argument("--chunk", type=int, default=4096, help="configs per chunk")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("/tmp/hpo-bench"))
    parser.add_argument("--measure", choices=MODES, help=argparse.SUPPRESS)
    parser.add_argument("--generate", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.measure:
        print(json.dumps(_measure(args.measure, args.path, args.chunk)))
        return 0
    sizes = (args.configs, args.config_nodes, args.nodes, args.seed)
    if args.generate:
        print(_generate(args.path, *sizes))
        return 0

    path = args.out / f"layout_{args.configs}x{args.config_nodes}_n{args.nodes}_seed{args.seed}.npz"
    if path.exists():
        print(f"reusing {path}")
    else:
        print(
            _run_child(
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
            )
        )
    results = {
        mode: json.loads(
            _run_child(
                "--measure", mode, "--path", str(path), "--chunk", str(args.chunk)
            ).splitlines()[-1]
        )
        for mode in MODES
    }
    if results["full"]["checksum"] != results["chunked"]["checksum"]:
        print("checksums differ between full and chunked reads", file=sys.stderr)
        return 1
    print(
        f"\nnode_config_feat of {path.name} ({path.stat().st_size / 1e9:.2f} GB file), "
        f"chunk = {args.chunk} configs\n"
    )
    print(f"| {'reader':<34} | {'wall s':>7} | {'ru_maxrss MiB':>13} | {'VmHWM MiB':>9} |")
    print(f"|{'-' * 36}|{'-' * 9}|{'-' * 15}|{'-' * 11}|")
    labels = {
        "baseline": "baseline (imports only)",
        "full": 'np.load(...)["node_config_feat"]',
        "chunked": f"iter_config_chunks(path, {args.chunk})",
    }
    for mode in MODES:
        r = results[mode]
        print(
            f"| {labels[mode]:<34} | {r['seconds']:>7.2f} | {r['peak_mib']:>13.0f} "
            f"| {r['hwm_mib']:>9.0f} |"
        )
    full, chunked, base = results["full"], results["chunked"], results["baseline"]
    above = (chunked["peak_mib"] - base["peak_mib"]) / max(full["peak_mib"] - base["peak_mib"], 1.0)
    print(
        f"\nchunked / full: peak RSS {chunked['peak_mib'] / full['peak_mib']:.3f} "
        f"(above baseline: {above:.3f}), wall time {chunked['seconds'] / full['seconds']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
