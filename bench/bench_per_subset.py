"""One joint configuration vs ``--per family`` vs ``--per collection``, scored on unseen graphs.

For each mode a campaign runs on ``--data`` with the same total walltime; its incumbent(s) are
exported (the boosters they were scored with) and evaluated on every config of the labeled
graphs (train and valid; ``--unseen-splits``) of ``--unseen``, a second dataset generated with
another seed, so no campaign trained or selected on those graphs. Per collection it reports
the selection score (the incumbent's valid metric the campaign chose it by), the unseen score
and their gap (selection minus unseen: how much the selection flattered itself).

    hpo data synth --out /tmp/sel --scale small --seed 0
    hpo data synth --out /tmp/unseen --scale small --seed 1
    python bench/bench_per_subset.py --data /tmp/sel --unseen /tmp/unseen --walltime 20m \\
        --seeds 0 1 2 --out /tmp/hpo-bench/per_subset.json

A mode is a ``--per`` mode with an optional ``+cvK``: ``collection+cv5`` runs ``--per
collection --cv 5``, whose selection score is the incumbent's mean over 5 folds of the labeled
train+valid graphs, and whose export is retrained on all of them. Compare the valid split
with k-fold selection in one invocation:

    python bench/bench_per_subset.py --data /tmp/sel --unseen /tmp/unseen --walltime 20m \
        --modes none,none+cv5,collection,collection+cv5 --seeds 0 1 2

Runs are kept in ``--runs-dir`` (default ``/tmp/hpo-bench/runs``) and reused when already finished,
so an interrupted benchmark continues where it stopped.
"""

from __future__ import annotations

import argparse
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

MODES = ("none", "family", "collection")


def parse_mode(mode: str) -> tuple[str, int]:
    """``collection+cv5`` -> (``collection``, 5); ``family`` -> (``family``, 0)."""
    per, _, cv = mode.partition("+")
    if per not in MODES or (cv and not (cv.startswith("cv") and cv[2:].isdigit())):
        raise argparse.ArgumentTypeError(
            f"mode {mode!r}: expected one of {', '.join(MODES)}, optionally with +cvK"
        )
    return per, int(cv[2:]) if cv else 0


def parse_modes(text: str) -> list[str]:
    """A comma list of modes, each checked by :func:`parse_mode`."""
    modes = [m.strip() for m in text.split(",") if m.strip()]
    for m in modes:
        parse_mode(m)
    return modes


def selection_metrics(run: Any) -> dict[str, float]:
    """The valid metrics each collection's incumbent was selected by (single or per-subset)."""
    from hpo.runs.views.history import RunHistory

    if isinstance(run, RunHistory):
        inc = run.incumbent
        return {} if inc is None else dict(inc.metrics)
    return dict(run.metrics)


def gap_rows(mode: str, seed: int, selected: dict[str, float], unseen: dict[str, float]) -> list:
    """One row per collection (and ``overall``): selection, unseen, gap = selection - unseen."""
    rows = []
    for c in unseen:
        s = selected.get(c)
        rows.append(
            {
                "mode": mode,
                "seed": seed,
                "collection": c,
                "selection": s,
                "unseen": unseen[c],
                "gap": None if s is None else s - unseen[c],
            }
        )
    if unseen and all(c in selected for c in unseen):
        sel = float(np.mean([selected[c] for c in unseen]))
        uns = float(np.mean(list(unseen.values())))
        rows.append(
            {
                "mode": mode,
                "seed": seed,
                "collection": "overall",
                "selection": sel,
                "unseen": uns,
                "gap": sel - uns,
            }
        )
    return rows


def unseen_means(graphs: list[dict[str, Any]]) -> dict[str, float]:
    """Per collection, the mean metric over every scored graph (all unseen splits pooled).

    Why pooled per graph: the valid split of a ``small`` dataset holds 6 graphs per layout
    collection, too few to tell modes apart; its train graphs are just as unseen.
    """
    out: dict[str, list[float]] = {}
    for g in graphs:
        out.setdefault(g["collection"], []).append(float(g["metric"]))
    return {c: float(np.mean(v)) for c, v in out.items()}


def score_unseen(
    model: Any,
    root: Path,
    splits: Sequence[str],
    *,
    collections: Sequence[str] | None = None,
    cache_dir: Path | None = None,
) -> dict[str, float]:
    """An exported model's mean metric per collection over every graph of ``splits``, pooled."""
    from hpo.deploy.evaluate import evaluate_model

    return unseen_means(
        [
            graph
            for split in splits
            for graph in evaluate_model(model, root, split, collections, cache_dir=cache_dir)[
                "graphs"
            ]
        ]
    )


def summary_table(rows: list[dict[str, Any]]) -> str:
    """Markdown table: per mode and collection, the mean (over seeds) selection, unseen, gap."""

    def order(key: tuple[str, str]) -> tuple[int, int, str]:
        per, cv = parse_mode(key[0])
        return MODES.index(per), cv, key[1]

    keys = sorted({(r["mode"], r["collection"]) for r in rows}, key=order)
    lines = [
        "| mode | collection | selection | unseen | gap | seeds |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for mode, c in keys:
        these = [r for r in rows if (r["mode"], r["collection"]) == (mode, c)]

        def mean(key: str, these: list = these) -> str:
            vals = [r[key] for r in these if r[key] is not None]
            return "-" if not vals else f"{np.mean(vals):.4f}"

        cells = [mode, c, mean("selection"), mean("unseen"), mean("gap"), str(len(these))]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_mode(args: argparse.Namespace, mode: str, seed: int) -> list[dict[str, Any]]:
    """Run (or reuse) one campaign, export it, evaluate it on the unseen graphs."""
    from rich.console import Console

    from hpo.campaign import CampaignConfig, run_campaign
    from hpo.deploy.export import export_model
    from hpo.deploy.model import load_model
    from hpo.deploy.retrain import ExportOptions
    from hpo.runs.record.folder import run_state
    from hpo.runs.views.nested import load_any

    per, cv = parse_mode(mode)
    cfg = CampaignConfig(
        data_root=args.data,
        name=f"per-{per}{f'-cv{cv}' if cv else ''}-seed{seed}",
        runs_dir=args.runs_dir,
        cache_dir=args.cache_dir,
        per=per,
        cv=cv,
        walltime=args.walltime,
        trials=args.trials,
        seed=seed,
        optimizer=args.optimizer,
        max_budget=args.max_budget,
    )
    state = run_state(cfg.run_dir)
    if state != "finished":
        console = Console(file=io.StringIO())
        run_campaign(cfg, quiet=True, resume=state == "interrupted", console=console)
    run = load_any(cfg.run_dir)
    model_dir = args.runs_dir.parent / "models" / cfg.name
    export_model(
        run, model_dir, options=ExportOptions(cache_dir=args.cache_dir)
    )  # a cv run: retrained on all labeled
    model = load_model(model_dir)
    unseen = score_unseen(model, args.unseen, args.unseen_splits, cache_dir=args.cache_dir)
    return gap_rows(mode, seed, selection_metrics(run), unseen)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="dataset the campaigns tune on")
    p.add_argument("--unseen", type=Path, required=True, help="dataset whose graphs score")
    p.add_argument(
        "--unseen-splits",
        type=lambda t: [x for x in t.split(",") if x],
        default=["train", "valid"],
        help="labeled splits of --unseen to score, pooled per graph (default: train,valid)",
    )
    p.add_argument("--walltime", type=float, default=600.0, help="seconds per campaign (total)")
    p.add_argument("--trials", type=int, default=10_000, help="trial limit (per subset)")
    p.add_argument("--optimizer", default="model-hb")
    p.add_argument(
        "--modes",
        nargs="+",
        type=parse_modes,
        default=[list(MODES)],
        help="per modes, optionally +cvK, comma or space separated (e.g. none,collection+cv5)",
    )
    p.add_argument("--max-budget", type=float, help="largest budget (default: hpo's)")
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--runs-dir", type=Path, default=Path("/tmp/hpo-bench/runs"))
    p.add_argument("--cache-dir", type=Path, default=Path(".hpo_cache"))
    p.add_argument("--out", type=Path, default=Path("/tmp/hpo-bench/per_subset.json"))
    args = p.parse_args(argv)
    args.modes = [m for group in args.modes for m in group]
    rows: list[dict[str, Any]] = []
    for seed in args.seeds:
        for mode in args.modes:
            rows += run_mode(args, mode, seed)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(rows, indent=2))
    print(summary_table(rows))


if __name__ == "__main__":
    main()
