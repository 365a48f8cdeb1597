"""Report of ``bench_ensemble_warm.sh``: the ensemble against the incumbent on unseen graphs, and
warm-started against cold campaigns (issue 23).

Usage::

    python bench/bench_warm_report.py B --seeds 0 1 2 3 4 [--png B/warm_cold.png] [--json F]
    python bench/bench_warm_report.py B --seeds 0 1 2 3 4 --skip-ensemble --warm again \
        --long long [--png B/again.png]        # the runs of bench_warm_longer.sh

``B`` is the script's folder. Per seed ``s`` it reads ``eval-e{s}[-ens3|-ens3all]-{train,
valid}.json`` (the incumbent of campaign ``e{s}``, its ensemble by the default rule, members
within ``--ensemble-within`` 0.01 of the incumbent, and the ensemble of its 3 best whatever
their score; evaluated on every labeled graph of ``small1``, which no campaign of ``e{s}``
saw) and the runs ``cold{s+1}`` and ``warm{s+1}``. A refused default ensemble (no member
within 0.01) counts as the incumbent alone.

Scores:
- a model on unseen graphs: the mean over collections of the collection metric, over the
  ``train`` and ``valid`` graphs of ``small1`` (each split's mean, then their mean weighted by
  graphs);
- a campaign over time: the best valid score among its trials AT THE LARGEST BUDGET that
  ended by ``t`` seconds after its first trial started (``optimizer_report.best_curve``), the
  score its export would have at ``t``. The target is the cold campaigns' final median; the
  report gives the first time the warm campaigns' median curve reaches it, as a share of the
  walltime (issue 23: at most half).

``--long PREFIX`` (runs of ``bench_warm_longer.sh``) adds the comparison at equal total time:
the source ``cold{s+1}`` followed by its warm-started ``{warm}{s+1}`` on the same data,
against ``{PREFIX}{s+1}``, one cold campaign as long as both. The two-run path's curve is the
source's until the source's walltime, then the warm run's (its export), with the source's
final score held until the warm run's first score at the largest budget. ``--skip-ensemble``
leaves out the ensemble table (folders without ``eval-*.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from optimizer_report import (  # noqa: E402
    best_curve,
    hpo_evaluations,
    quantile,
    step_values,
    time_to_reach,
)


def unseen_score(folder: Path, model: str) -> tuple[float, dict[str, float]]:
    """Graph-weighted mean over both splits of the mean collection metric; per collection too."""
    totals: dict[str, list[float]] = {}
    for split in ("train", "valid"):
        data = json.loads((folder / f"eval-{model}-{split}.json").read_text())
        for name, c in data["collections"].items():
            t = totals.setdefault(name, [0.0, 0.0])
            t[0] += c["metric"] * c["graphs"]
            t[1] += c["graphs"]
    per = {name: s / n for name, (s, n) in totals.items() if n}
    return float(np.mean(list(per.values()))), per


def campaign(run_dir: Path) -> tuple[list[tuple[float, float]], float, float]:
    """(best curve, walltime, largest budget) of one campaign folder."""
    config = json.loads((run_dir / "campaign.json").read_text())["config"]
    walltime, top = float(config["walltime"]), float(config["max_budget"])
    return best_curve(hpo_evaluations(run_dir), top, walltime), walltime, top


def baseline_end(run_dir: Path) -> float:
    """Seconds from a campaign's first trial start to the end of its baseline trial: the
    first score at the largest budget, whatever the optimizer (a campaign whose Datasets were
    cached by an earlier one gets it sooner)."""
    records = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    start = min(r["start"] for r in records)
    return min(r["end"] for r in records if r.get("baseline")) - start


def report_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments of every report of these runs: the folder, the seeds, the outputs."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("folder", type=Path)
    p.add_argument("--seeds", type=int, nargs="+", required=True)
    p.add_argument("--png", type=Path)
    p.add_argument("--json", type=Path)
    return p


def main(argv: list[str] | None = None) -> int:
    p = report_parser(__doc__)
    p.add_argument(
        "--warm",
        default="warm",
        help="name prefix of the warm runs (warm{s+1}); e.g. 'again' for runs warm-started "
        "from cold{s+1} on the same data",
    )
    p.add_argument("--long", help="name prefix of cold runs as long as source plus warm run")
    p.add_argument(
        "--sources",
        help="name prefix of the warm runs' sources when they are not the cold arm (src{s+1}): "
        "their finals, and when each warm run reaches its own source's",
    )
    p.add_argument("--skip-ensemble", action="store_true")
    a = p.parse_args(argv)
    B, runs = a.folder, a.folder / "runs"
    out: dict[str, Any] = {"ensemble": {}, "warm": {}}
    if not a.skip_ensemble:
        ensemble_table(B, a.seeds, out)
    figures: list[tuple[Any, ...]] = []  # plot() arguments, drawn after the JSON is written
    warm_table(runs, a, out, figures)
    if a.long:
        longer_table(runs, a, out, figures)
    if a.json:
        a.json.write_text(json.dumps(out, indent=1, default=float))
    for figure in figures:
        plot(*figure)
    return 0


def ensemble_table(B: Path, seeds: list[int], out: dict[str, Any]) -> None:
    """The ensemble against the incumbent on unseen graphs, per seed."""
    print(
        "| seed | incumbent, unseen | ensemble, members within 0.01 (default) | difference | "
        "ensemble of the 3 best | difference |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    diffs: dict[str, list[float]] = {"ens3": [], "ens3all": []}
    for s in seeds:
        inc, inc_per = unseen_score(B, f"e{s}")
        row, entry = [f"{inc:.4f}"], {"incumbent": inc, "per": {"incumbent": inc_per}}
        for kind in ("ens3", "ens3all"):
            if not (B / f"eval-e{s}-{kind}-train.json").exists():  # refused: the incumbent
                row += ["refused (incumbent alone)", "+0.0000"]
                diffs[kind].append(0.0)
                continue
            ens, per = unseen_score(B, f"e{s}-{kind}")
            diffs[kind].append(ens - inc)
            entry[kind], entry["per"][kind] = ens, per
            row += [f"{ens:.4f}", f"{ens - inc:+.4f}"]
        out["ensemble"][s] = entry
        print(f"| {s} | " + " | ".join(row) + " |")
    for kind, d in diffs.items():
        print(
            f"\n{kind}: median difference (ensemble - incumbent) {np.median(d):+.4f}, "
            f"mean {np.mean(d):+.4f}; better in {sum(x > 0 for x in d)} of {len(d)} seeds"
        )
    print()


def warm_table(
    runs: Path, a: argparse.Namespace, out: dict[str, Any], figures: list[tuple[Any, ...]]
) -> None:
    """Warm against cold campaigns of equal walltime, per seed and as median curves."""
    curves: dict[str, list[list[tuple[float, float]]]] = {"cold": [], "warm": []}
    walltime = 0.0
    for s in a.seeds:
        for kind in ("cold", "warm"):
            name = a.warm if kind == "warm" else kind
            curve, walltime, _ = campaign(runs / f"{name}{s + 1}")
            curves[kind].append(curve)
    times = np.unique(
        np.concatenate([[0.0, walltime], *[[t for t, _ in c] for k in curves for c in curves[k]]])
    )
    values = {k: np.array([step_values(c, times) for c in curves[k]]) for k in curves}
    med = {k: quantile(v, 0.5) for k, v in values.items()}
    target = float(med["cold"][-1])
    reach = time_to_reach(times, med["warm"], target)
    print(
        "| seed | cold final | warm final | warm reaches its cold's final at | "
        "baseline ends, cold / warm | warm beats the cold's final at |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for i, s in enumerate(a.seeds):
        cold_final, warm_final = values["cold"][i][-1], values["warm"][i][-1]
        t = time_to_reach(times, values["warm"][i], cold_final)
        beat = time_to_reach(times, values["warm"][i], np.nextafter(cold_final, np.inf))
        when = "never" if t is None else f"{t:.0f} s ({t / walltime:.2f})"
        above = "never" if beat is None else f"{beat:.0f} s ({beat / walltime:.2f})"
        ends = [baseline_end(runs / f"{k}{s + 1}") for k in ("cold", a.warm)]
        print(
            f"| {s} | {cold_final:.4f} | {warm_final:.4f} | {when} | "
            f"{ends[0]:.0f} / {ends[1]:.0f} s | {above} |"
        )
        out["warm"][s] = {
            "cold": cold_final,
            "warm": warm_final,
            "reach": t,
            "beat": beat,
            "baseline_end": ends,
        }
    when = "never" if reach is None else f"{reach:.0f} s ({reach / walltime:.2f} of the walltime)"
    print(
        f"\ncold final median {target:.4f}, warm final median {med['warm'][-1]:.4f}; "
        f"the warm median curve reaches the cold final median: {when}"
    )
    out.update(target=target, reach=reach, walltime=walltime)
    if a.sources:
        source_lines(runs, a, times, values["warm"], out)
    if a.png:
        labels = {"cold": "cold", "warm": "warm"}
        figures.append((a.png, times, values, labels, (walltime / 2, "half the walltime"), target))


def source_lines(
    runs: Path, a: argparse.Namespace, times: np.ndarray, warm: np.ndarray, out: dict[str, Any]
) -> None:
    """The sources' finals (another draw of a cold campaign), and per seed when the warm run
    reaches its own source's final."""
    finals = []
    for i, s in enumerate(a.seeds):
        curve, _, _ = campaign(runs / f"{a.sources}{s + 1}")
        final = curve[-1][1]
        finals.append(final)
        t = time_to_reach(times, warm[i], final)
        when = "never" if t is None else f"{t:.0f} s"
        print(f"seed {s}: source final {final:.4f}, warm reaches it at {when}")
        out["warm"][s].update(source=final, reach_source=t)
    print(f"sources' final median {float(np.median(finals)):.4f}")
    out["source_median"] = float(np.median(finals))


def warm_source(run_dir: Path) -> str | None:
    """The first source a run was warm-started from (its ``campaign.json``), if any."""
    saved = json.loads((run_dir / "campaign.json").read_text())
    sources = (saved.get("warm_start") or {}).get("sources") or [{}]
    return sources[0].get("run")


def longer_table(
    runs: Path, a: argparse.Namespace, out: dict[str, Any], figures: list[tuple[Any, ...]]
) -> None:
    """Source then warm run on the same data, against one cold run of their total time.

    Refuses runs that do not pair up: a warm run not started from its ``cold{s+1}``, or
    source plus warm walltimes that differ from the long run's (or between seeds).
    """
    paths: list[list[tuple[float, float]]] = []
    longs: list[list[tuple[float, float]]] = []
    totals = set()
    for s in a.seeds:
        source_dir, again_dir = runs / f"cold{s + 1}", runs / f"{a.warm}{s + 1}"
        if warm_source(again_dir) != source_dir.name:
            raise SystemExit(f"{again_dir}: not warm-started from {source_dir.name}")
        source, wall, _ = campaign(source_dir)
        again, again_wall, _ = campaign(again_dir)
        long, total, _ = campaign(runs / f"{a.long}{s + 1}")
        if abs(wall + again_wall - total) > 1e-6:
            raise SystemExit(f"seed {s}: walltimes {wall:g} + {again_wall:g} s != {total:g} s")
        totals.add(total)
        held = source[-1][1] if source else -np.inf
        # the source's curve, its final held until the warm run's first score, then the warm
        # run's (what its export would hold), offset by the source's walltime
        paths.append([*source, (wall, held), *[(wall + t, v) for t, v in again]])
        longs.append(long)
    if len(totals) != 1:
        raise SystemExit(f"the long runs' walltimes differ: {sorted(totals)}")
    total = totals.pop()
    times = np.unique(np.concatenate([[0.0, total], *[[t for t, _ in c] for c in paths + longs]]))
    times = times[times <= total]
    values = {
        "long": np.array([step_values(c, times) for c in longs]),
        "path": np.array([step_values(c, times) for c in paths]),
    }
    print(
        "\n| seed | source final | warm-started run final | one cold run of the total time | "
        "warm-started minus one run |\n|---:|---:|---:|---:|---:|"
    )
    for i, s in enumerate(a.seeds):
        src = values["path"][i][np.searchsorted(times, total / 2, side="right") - 1]
        again_final, long_final = values["path"][i][-1], values["long"][i][-1]
        print(
            f"| {s} | {src:.4f} | {again_final:.4f} | {long_final:.4f} | "
            f"{again_final - long_final:+.4f} |"
        )
        out.setdefault("longer", {})[s] = {"source": src, "again": again_final, "long": long_final}
    med = {k: quantile(v, 0.5) for k, v in values.items()}
    out["longer_total"] = total
    out["longer_medians"] = {k: float(v[-1]) for k, v in med.items()}
    print(
        f"\nfinal medians at {total:.0f} s: source then warm run {med['path'][-1]:.4f}, one cold "
        f"run {med['long'][-1]:.4f}"
    )
    if a.png:
        png = a.png.with_name(a.png.stem + "_longer" + a.png.suffix)
        labels = {"long": "one cold run", "path": "source, then warm-started run"}
        mark = (total / 2, "the source's end")
        figures.append((png, times, values, labels, mark, float(med["long"][-1])))


def plot(
    png: Path,
    times: np.ndarray,
    values: dict[str, np.ndarray],
    labels: dict[str, str],
    mark: tuple[float, str],
    target: float,
) -> None:
    """Median and IQR step curves of ``values`` (runs x times), the target, a time mark."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for (kind, label), color in zip(labels.items(), ("grey", "tab:blue"), strict=True):
        med = quantile(values[kind], 0.5)
        lo, hi = quantile(values[kind], 0.25), quantile(values[kind], 0.75)
        finite = np.isfinite(med)
        ax.step(times[finite], med[finite], where="post", color=color, label=label)
        band = np.isfinite(lo) & np.isfinite(hi)
        ax.fill_between(times[band], lo[band], hi[band], step="post", color=color, alpha=0.2)
    first = next(iter(labels))  # the reference: its final median is the target line
    ax.axhline(target, color="black", ls="--", lw=0.8, label=f"{labels[first]} final median")
    ax.axvline(mark[0], color="black", ls=":", lw=0.8, label=mark[1])
    ax.set_xlabel("seconds since the first trial started")
    ax.set_ylabel("best valid score at the largest budget")
    names = list(labels.values())[::-1]
    ax.set_title(f"{' vs '.join(names)}, {len(values[first])} seeds (median, IQR)")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
