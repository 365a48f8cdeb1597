"""Per-seed columns of the 30-minute report that the driver's report.md does not print.

Reads each seed's final best valid score at the largest budget from the driver's
``curves.json`` (written by ``--report-only``), and from each run folder's ``trials.jsonl``
how many trials the run recorded, how many of them succeeded at the largest budget, and how
many did not succeed.

    python per_seed.py OUT [MAX_BUDGET]
"""

import json
import sys
from pathlib import Path

from hpo.runs.folder import TRIALS_FILE, read_trials


def main() -> None:
    out = Path(sys.argv[1])
    top = float(sys.argv[2]) if len(sys.argv) > 2 else 144.0
    curves = json.loads((out / "curves.json").read_text())["datasets"]
    for law, entry in curves.items():
        print(f"{law}: default {entry['default_score']:.4f}")
        for opt, data in entry["optimizers"].items():
            seeds = sorted(data["final"], key=int)
            finals = [f"{data['final'][s]:.4f}" for s in seeds]
            trials, at_top, crashed = [], [], []
            for s in seeds:
                rows = read_trials(out / law / f"{opt}-s{s}" / TRIALS_FILE)
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
