"""Real-size campaigns, side by side with a frozen checkout (issue 20).

Runs ``hpo run`` of two code trees (each put first on ``PYTHONPATH``: today's checkout and a
frozen worktree of the code before the change) on the same ``--scale real`` data, one after
the other, with the same settings, and samples the resident memory of the campaign's whole
process tree (the CLI, and Dask workers with ``--workers k``) every 0.2 s with psutil:

- ``peak tree``: the largest sum of RSS over the tree's processes (what the machine must hold);
- ``peak proc``: the largest RSS of one process;
- ``peak anon``: the same sum without file-backed pages (``rss - shared``): memory that cannot
  be dropped, where memory-mapped table pages (reclaimable) do not count;
- phases: the extraction (before the first trial starts) and the trials (from the trial
  log's first ``start``) are reported apart.

From the run's trial log: trials finished, seconds per trial per budget (median), and trials
per hour over the span from the first trial's start to the last trial's end (extraction
excluded: later campaigns with the same caps read it from the cache).

Usage::

    hpo data synth --out /tmp/r20/real --scale real --seed 0
    python bench/bench_realscale.py --data /tmp/r20/real --work /tmp/r20/work \
        --code new=/work/main --code old=/work/frozen20 --train-configs 2000 4000 \
        --walltime 600 [--workers 1 2] [--json out.json] [--shared-cache] [-- more run args]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil


def _tree_memory(
    root: psutil.Process, per_pid: dict[int, float] | None = None
) -> tuple[float, float, float, int]:
    """(sum RSS, max RSS, sum anonymous RSS, processes) of ``root`` and its descendants, MiB.

    ``per_pid`` (when given) keeps each process's largest RSS seen, MiB.
    """
    procs = [root]
    try:
        procs += root.children(recursive=True)
    except psutil.Error:
        pass
    total = biggest = anon = 0.0
    count = 0
    for p in procs:
        try:
            mem = p.memory_info()
        except psutil.Error:
            continue
        total += mem.rss
        biggest = max(biggest, mem.rss)
        if per_pid is not None:
            per_pid[p.pid] = max(per_pid.get(p.pid, 0.0), mem.rss / (1024.0 * 1024.0))
        anon += mem.rss - mem.shared
        count += 1
    mib = 1024.0 * 1024.0
    return total / mib, biggest / mib, anon / mib, count


class _Sampler(threading.Thread):
    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.root = psutil.Process(pid)
        self.samples: list[tuple[float, float, float, float, int]] = []
        self.stop = threading.Event()
        self.per_pid: dict[int, float] = {}

    def run(self) -> None:
        while not self.stop.is_set():
            total, biggest, anon, count = _tree_memory(self.root, self.per_pid)
            self.samples.append((time.time(), total, biggest, anon, count))
            self.stop.wait(0.2)


def _trials(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "trials.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _case(args: argparse.Namespace, label: str, code: str, caps: int, workers: int) -> dict:
    name = f"{label}-n{caps}-w{workers}"
    runs = Path(args.work) / "runs"
    cmd = [
        sys.executable,
        "-c",
        tree_code(code),
        "run",
        "--data",
        args.data,
        "--train-configs",
        str(caps),
        "--walltime",
        str(args.walltime),
        "--runs-dir",
        str(runs),
        "--cache-dir",
        str(Path(args.work) / ("cache" if args.shared_cache else f"cache-{label}")),
        "--name",
        name,
        "--workers",
        str(workers),
        "--overwrite",
        "--quiet",
        *args.extra,
    ]
    env = dict(os.environ, PYTHONPATH=str(Path(code).resolve()))
    start = time.time()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    sampler = _Sampler(proc.pid)
    sampler.start()
    out, _ = proc.communicate()
    sampler.stop.set()
    sampler.join()
    wall = time.time() - start
    trials = _trials(runs / name)
    done = [t for t in trials if t.get("status") == "SUCCESS"]
    first = min((t["start"] for t in trials), default=float("inf"))
    last = max((t["end"] for t in trials), default=start)

    def peak(column: int, phase: str) -> float:
        keep = [
            s[column]
            for s in sampler.samples
            if (s[0] < first) == (phase == "extract") or phase == "all"
        ]
        return round(max(keep, default=0.0), 1)

    per_budget: dict[str, list[float]] = {}
    for t in done:
        per_budget.setdefault(str(int(t["budget"])), []).append(float(t["duration"]))
    span = max(last - first, 1e-9)
    result = {
        "case": name,
        "code": code,
        "train_configs": caps,
        "workers": workers,
        "returncode": proc.returncode,
        "wall_s": round(wall, 1),
        "trials": len(done),
        "crashed": len(trials) - len(done),
        "trials_per_hour": round(3600.0 * len(done) / span, 2) if done else 0.0,
        "seconds_per_budget": {
            b: round(statistics.median(v), 1)
            for b, v in sorted(per_budget.items(), key=lambda kv: float(kv[0]))
        },
        "rows": max((int(t.get("info", {}).get("rows", 0)) for t in done), default=0),
        "peak_tree_mib": {"extract": peak(1, "extract"), "trials": peak(1, "trials")},
        "peak_proc_mib": {"extract": peak(2, "extract"), "trials": peak(2, "trials")},
        "peak_anon_mib": {"extract": peak(3, "extract"), "trials": peak(3, "trials")},
        "processes": max((s[4] for s in sampler.samples), default=0),
        # the largest peaks of single processes (the CLI, Dask workers, nannies), MiB
        "peak_per_process_mib": sorted(round(v, 1) for v in sampler.per_pid.values())[::-1][:4],
        "best_score": max((float(t.get("score", 0.0)) for t in done), default=None),
    }
    if proc.returncode != 0:
        result["output"] = out.decode(errors="replace")[-2000:]
    return result


def tree_code(tree: str | Path) -> str:
    """``python -c`` code that runs hpo's CLI from ``tree`` and fails if hpo comes from elsewhere.

    Why: ``python -c`` puts the current directory ahead of ``PYTHONPATH``, so run from a
    checkout, both labels would run that checkout's code (a comparison of 2026-12-02 did:
    its "old" trials held a key only the new space has). The tree goes first on ``sys.path``
    (and on ``PYTHONPATH``, for the processes the campaign starts), and the child checks it.
    """
    root = str(Path(tree).resolve())
    return (
        f"import sys; sys.path.insert(0, {root!r}); import hpo; "
        f"assert hpo.__file__.startswith({root + '/'!r}), 'hpo from ' + hpo.__file__; "
        "from hpo.cli import main; sys.exit(main())"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--code", action="append", required=True, help="LABEL=PATH")
    parser.add_argument("--train-configs", type=int, nargs="+", default=[2000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1])
    parser.add_argument("--walltime", type=int, default=600)
    parser.add_argument("--json", default=None)
    parser.add_argument(
        "--shared-cache",
        action="store_true",
        help="one --cache-dir for every code: codes whose hpo/features sources are equal share "
        "the per-file entries (their key hashes that source), others each extract their own; "
        "the later settings of one code read what its earlier ones extracted",
    )
    parser.add_argument("extra", nargs="*", help="more `hpo run` arguments, after --")
    args = parser.parse_args(argv)
    results = []
    for caps in args.train_configs:
        for workers in args.workers:
            for spec in args.code:  # codes alternate inside each setting: same minutes
                label, _, code = spec.partition("=")
                res = _case(args, label, code, caps, workers)
                print(json.dumps(res), flush=True)
                results.append(res)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
