"""Trials per minute of one campaign on 1 and 2 local workers and on 2 Dask worker processes.

Runs the same ``hpo run`` campaign (same data, seed and walltime) four times, one after the
other in one invocation so the four share the machine's state: ``--workers 1``,
``--workers 2`` (a local Dask cluster of threads, the default), ``--workers 2
--worker-processes`` (one process per worker) and ``--dask-scheduler`` against a scheduler and
``dask worker --nworkers 2`` started here on loopback. Reports, per mode, the finished
trials, trials per minute of the campaign's wall-clock (first trial start to last trial end),
how many trials each worker ran, and whether the campaign ended cleanly (issue 24: every
successive-halving optimizer crashed on two workers).

    python bench/bench_workers.py --data DIR [--walltime 3m] [--seed 0]
        [--out /tmp/hpo-bench/workers] [--run-args "--min-budget 21 --max-budget 168"]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HPO = [sys.executable, "-c", "import sys; from hpo.cli import main; sys.exit(main())"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _campaign(args: argparse.Namespace, name: str, extra: list[str]) -> dict[str, Any]:
    runs = args.out / "runs"
    command = [
        *HPO, "run", "--data", str(args.data), "--name", name, "--runs-dir", str(runs),
        "--walltime", args.walltime, "--seed", str(args.seed), "--optimizer", args.optimizer,
        "--cache-dir", str(args.out / "cache"), "--quiet", "--overwrite", *args.run_args, *extra,
    ]  # fmt: skip
    started = time.time()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    records = [json.loads(line) for line in (runs / name / "trials.jsonl").open()]
    first = min(r["start"] for r in records)
    last = max(r["end"] for r in records)
    workers = collections.Counter(r["worker"] for r in records)
    return {
        "mode": name,
        "returncode": done.returncode,
        "error": done.stderr.strip().splitlines()[-1:] if done.returncode else [],
        "trials": len(records),
        "minutes": (last - first) / 60,
        "trials_per_minute": len(records) / ((last - first) / 60),
        "per_worker": sorted(workers.values(), reverse=True),
        "wall_seconds": time.time() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--walltime", default="3m")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--optimizer", default="model-hb")
    parser.add_argument("--out", type=Path, default=Path("/tmp/hpo-bench/workers"))
    parser.add_argument(
        "--run-args", default="", help="more 'hpo run' options, e.g. '--max-budget 168'"
    )
    args = parser.parse_args()
    args.run_args = args.run_args.split()
    args.out.mkdir(parents=True, exist_ok=True)
    # warm the feature cache first, so no mode pays for extraction
    _campaign(args, "warmup", ["--trials", "1"])
    results = [
        _campaign(args, "workers1", ["--workers", "1"]),
        _campaign(args, "workers2", ["--workers", "2"]),
        _campaign(args, "procs2", ["--workers", "2", "--worker-processes"]),
    ]
    address = f"tcp://127.0.0.1:{_free_port()}"
    dask_cli = str(Path(sys.executable).with_name("dask"))
    quiet: dict[str, Any] = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    host, port = address.removeprefix("tcp://").split(":")
    procs = [
        subprocess.Popen([dask_cli, "scheduler", "--host", host, "--port", port], env=env, **quiet)
    ]
    procs.append(
        subprocess.Popen(
            [dask_cli, "worker", address, "--nworkers", "2", "--nthreads", "1"], env=env, **quiet
        )
    )
    try:
        time.sleep(5)
        # the campaign cannot see the workers' cores: one LightGBM thread per trial, as each
        # worker process has one core's share (README, "Scaling out with Dask")
        dask_args = ["--dask-scheduler", address, "--threads", "1"]
        results.append(_campaign(args, "dask2", dask_args))
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(timeout=30)
    base = results[0]["trials_per_minute"]
    head = ("mode", "rc", "trials", "minutes", "trials/min", "ratio")
    print("{:<10} {:>3} {:>6} {:>7} {:>10} {:>6}  per worker".format(*head))
    for r in results:
        ratio = r["trials_per_minute"] / base
        print(
            f"{r['mode']:<10} {r['returncode']:>3} {r['trials']:>6} {r['minutes']:>7.2f} "
            f"{r['trials_per_minute']:>10.2f} {ratio:>6.2f}  {r['per_worker']} {r['error']}"
        )
    (args.out / "workers.json").write_text(json.dumps(results, indent=2))
    shutil.rmtree(args.out / "runs" / "warmup", ignore_errors=True)


if __name__ == "__main__":
    main()
