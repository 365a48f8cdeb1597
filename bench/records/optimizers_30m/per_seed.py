"""Per-seed columns of the 30-minute report that the driver's report.md does not print.

Reads the driver's ``curves.json`` (written by ``--report-only``) for each seed's final best
valid score at the largest budget, and each run folder's ``trials.jsonl`` for how many trials
a run finished and how many of them at the largest budget.

    python per_seed.py OUT [MAX_BUDGET]
"""

import json
import sys
from pathlib import Path


def main() -> None:
    out = Path(sys.argv[1])
    top = float(sys.argv[2]) if len(sys.argv) > 2 else 144.0
    curves = json.loads((out / "curves.json").read_text())["datasets"]
    for law, entry in curves.items():
        print(f"{law}: default {entry['default_score']:.4f}")
        for opt, data in entry["optimizers"].items():
            seeds = sorted(data["curves"], key=int)
            finals = [f"{data['curves'][s][-1][1]:.4f}" for s in seeds]
            trials, at_top, crashed = [], [], []
            for s in seeds:
                rows = [
                    json.loads(line)
                    for line in (out / law / f"{opt}-s{s}" / "trials.jsonl")
                    .read_text()
                    .splitlines()
                    if line.strip()
                ]
                trials.append(str(len(rows)))
                at_top.append(
                    str(sum(r["budget"] == top and r["status"] == "SUCCESS" for r in rows))
                )
                crashed.append(str(sum(r["status"] != "SUCCESS" for r in rows)))
            print(
                f"  {opt}: seeds {','.join(seeds)} | final {', '.join(finals)} | trials "
                f"{', '.join(trials)} | at {top:g} {', '.join(at_top)} | not success "
                f"{', '.join(crashed)}"
            )


if __name__ == "__main__":
    main()
