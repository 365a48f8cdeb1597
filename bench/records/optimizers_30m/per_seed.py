"""Per-seed columns of the 30-minute report that the driver's report.md does not print.

Reads each seed's final best valid score at the largest budget from the driver's
``curves.json`` (written by ``--report-only``), and from each run folder's ``trials.jsonl``
how many trials the run recorded, how many of them succeeded at the largest budget, how many
did not succeed, and how long its baseline trial took. Then, per law, the readings of the
figure that bench/README.md quotes: each median at 600 s and its last rise, when model-hb's
median is below or level with another's, and when model-hb's IQR band lies wholly above each
other band.

    python per_seed.py OUT [MAX_BUDGET]
"""

import bisect
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
            trials, at_top, crashed, base = [], [], [], []
            for s in seeds:
                rows = read_trials(out / law / f"{opt}-s{s}" / TRIALS_FILE)
                base += [f"{r['duration']:.1f}" for r in rows if r.get("baseline")]
                trials.append(str(len(rows)))
                at_top.append(
                    str(sum(r["budget"] == top and r["status"] == "SUCCESS" for r in rows))
                )
                crashed.append(str(sum(r["status"] != "SUCCESS" for r in rows)))
            print(
                f"  {opt}: seeds {','.join(seeds)} | final {', '.join(finals)} | trials "
                f"{', '.join(trials)} | at {top:g} {', '.join(at_top)} | not success "
                f"{', '.join(crashed)} | baseline trial s {', '.join(base)}"
            )

    for law, entry in curves.items():
        print_crossings(law, entry["optimizers"])


def print_crossings(law: str, optimizers: dict[str, dict]) -> None:
    """Print the figure's readings for one law: model-hb against every other optimizer."""

    def at(name: str, key: str, t: float) -> float | None:
        # a step curve: the value of the last change at or before t (None before the first)
        data = optimizers[name]
        i = bisect.bisect_right(data["times"], t) - 1
        return data[key][i] if i >= 0 else None

    times = sorted({t for data in optimizers.values() for t in data["times"]})
    medians = ", ".join(f"{name} {at(name, 'median', 600.0):.4f}" for name in optimizers)
    print(f"{law}: medians at 600 s: {medians}")
    others = [name for name in optimizers if name != "model-hb"]
    below = []
    for t in times:
        own = at("model-hb", "median", t)
        if own is not None and any((at(o, "median", t) or own) > own for o in others):
            below.append(f"{t:.0f}")
    print(f"  model-hb's median below another's at (s): {', '.join(below)}")
    level = [t for t in times if any(at(o, "median", t) == at("model-hb", "median", t)
                                     for o in others)]  # fmt: skip
    print(f"  model-hb's median level with another's last at: {level[-1]:.0f} s")
    for name, data in optimizers.items():
        med = data["median"]
        i = max(k for k in range(1, len(med)) if med[k] != med[k - 1])
        print(f"  {name}'s median last rose at {data['times'][i]:.0f} s, "
              f"{med[i - 1]:.4f} -> {med[i]:.4f}")  # fmt: skip
    for other in others:
        spans, since = [], None  # since: when the current stretch above began
        for t in times:
            lo, hi = at("model-hb", "q25", t), at(other, "q75", t)
            above = lo is not None and hi is not None and lo > hi
            if above and since is None:
                since = t
            elif not above and since is not None:
                spans.append(f"{since:.0f}-{t:.0f}")
                since = None
        if since is not None:
            spans.append(f"{since:.0f}-end")
        print(f"  model-hb's IQR band wholly above {other}'s from (s): {', '.join(spans)}")


if __name__ == "__main__":
    main()
