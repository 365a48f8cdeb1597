"""Report of ``bench_warm_longer.sh``'s extensions: a campaign extended with ``hpo run --resume
NAME --walltime LONG`` against one campaign run for LONG from the start (issue 23, "simply
for longer").

Usage::

    python bench/bench_extend_report.py B --seeds 1 2 3 4 5 [--png F] [--json F]

Per seed ``t``: ``cold{t}`` (the source, WALL), ``ext{t}`` (a copy of it extended to LONG,
timed on its own clock: ``optimizer_report.hpo_evaluations``) and ``long{t}`` (LONG from the
start, same seed). Scores over time are the best valid score at the largest budget, as in
``bench_warm_report.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_warm_report import campaign, plot, report_parser  # noqa: E402
from optimizer_report import quantile, step_values  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    a = report_parser(__doc__).parse_args(argv)
    runs = a.folder / "runs"
    curves: dict[str, list[Any]] = {"long": [], "ext": []}
    sources, totals, walls = [], set(), set()
    for t in a.seeds:
        source, wall, _ = campaign(runs / f"cold{t}")
        walls.add(wall)
        sources.append(source[-1][1] if source else -np.inf)
        for kind in curves:
            curve, total, _ = campaign(runs / f"{kind}{t}")
            curves[kind].append(curve)
            totals.add(total)
    if len(totals) != 1 or len(walls) != 1:
        raise SystemExit(f"walltimes differ: sources {sorted(walls)}, others {sorted(totals)}")
    total = totals.pop()
    times = np.unique(
        np.concatenate([[0.0, total], *[[x for x, _ in c] for k in curves for c in curves[k]]])
    )
    times = times[times <= total]
    values = {k: np.array([step_values(c, times) for c in v]) for k, v in curves.items()}
    out: dict[str, Any] = {"total": total, "seeds": {}}
    print(
        "| seed | source final | extended final | one run of the total time | "
        "extended minus one run | exported incumbent: extended / one run |\n"
        "|---:|---:|---:|---:|---:|---:|"
    )
    for i, t in enumerate(a.seeds):
        ext, long = float(values["ext"][i][-1]), float(values["long"][i][-1])
        # what export takes: the incumbent in result.json, whenever its trial ended
        got = {
            k: json.loads((runs / f"{k}{t}" / "result.json").read_text())["score"] for k in curves
        }
        print(
            f"| {t} | {sources[i]:.4f} | {ext:.4f} | {long:.4f} | {ext - long:+.4f} | "
            f"{got['ext']:.4f} / {got['long']:.4f} |"
        )
        out["seeds"][t] = {"source": sources[i], "extended": ext, "long": long, "exported": got}
    med = {k: quantile(v, 0.5) for k, v in values.items()}
    diffs = [s["extended"] - s["long"] for s in out["seeds"].values()]
    out["medians"] = {k: float(v[-1]) for k, v in med.items()}
    print(
        f"\nfinal medians at {total:.0f} s: extended {med['ext'][-1]:.4f}, one run "
        f"{med['long'][-1]:.4f}; extended minus one run: median {np.median(diffs):+.4f} "
        f"(min {min(diffs):+.4f}, max {max(diffs):+.4f}); extended ahead in "
        f"{sum(d > 0 for d in diffs)}, equal in {sum(d == 0 for d in diffs)} of {len(diffs)}"
    )
    if a.json:
        a.json.write_text(json.dumps(out, indent=1, default=float))
    if a.png:
        labels = {"long": "one run of the total time", "ext": "the source, extended"}
        plot(a.png, times, values, labels, (wall, "the source's walltime"), float(med["long"][-1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
