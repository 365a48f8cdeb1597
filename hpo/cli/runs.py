"""``hpo runs list|show|plot|compare``: inspect the run folders of campaigns."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from hpo.campaign.progress import format_budget as _b
from hpo.campaign.progress import format_number as _f
from hpo.campaign.progress import stdout_console
from hpo.cli import run_tables
from hpo.cli.baseline import baseline_json, print_baseline, smac_line
from hpo.cli.options import add_options
from hpo.data.load import is_layout

if TYPE_CHECKING:
    from hpo.runs.record.campaign_file import CampaignRecord
    from hpo.runs.views.history import RunHistory, Trial
    from hpo.runs.views.importance import Importance
    from hpo.runs.views.nested import SubsetRun

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    """Add ``runs`` to the top-level sub-parsers."""
    runs = sub.add_parser("runs", help="inspect, plot and compare campaign runs")
    runs_sub = runs.add_subparsers(dest="runs_command", metavar="SUBCOMMAND", required=True)

    p = runs_sub.add_parser("list", help="one line per run: state, trials, best score")
    add_options(p, "runs-dir")
    p.set_defaults(handler=_cmd_list)

    p = runs_sub.add_parser("show", help="settings, incumbent, trajectory, failures of one run")
    add_options(p, "name", "runs-dir", "json")
    p.set_defaults(handler=_cmd_show)

    p = runs_sub.add_parser("plot", help="draw the progress / incumbent / importance figure")
    add_options(p, "name", "runs-dir", "out-png")
    p.set_defaults(handler=_cmd_plot)

    p = runs_sub.add_parser("compare", help="overlay the best-score-over-time curves of runs")
    add_options(p, "names", "runs-dir", "out-compare")
    p.set_defaults(handler=_cmd_compare)

    run_tables.add_parsers(runs_sub)


def _extensions(record: CampaignRecord) -> list[str]:
    """One line per extension of the run (``hpo run --resume NAME --walltime ...``)."""
    out = []
    for e in record.extensions:
        changed = [
            f"{key} {before:g} -> {after:g}{' s' if key == 'walltime' else ''}"
            for key, (before, after) in (("trials", e.trials), ("walltime", e.walltime))
            if before != after
        ]
        out.append(f"extended {_when(e.at)}: {', '.join(changed)}")
    return out


def _when(epoch: float | None) -> str:
    return "-" if epoch is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(epoch))


def _cmd_list(args: argparse.Namespace) -> int:
    from hpo.runs.views.nested import list_runs

    runs = list_runs(args.runs_dir)
    if not runs:
        print(f"no runs in {args.runs_dir}", file=sys.stderr)
        return 0
    table = Table(title=f"Runs in {args.runs_dir}")
    right = ("trials", "failed", "best score", "budget")
    for col in ("name", "state", "optimizer", *right, "started", "collections"):
        table.add_column(col, justify="right" if col in right else "left")
    for r in runs:
        if r.problem:  # marked here, its one-line reason under the table
            table.add_row(r.name, r.state, "[red]unreadable[/red]", "", "", "", "", "", "")
            continue
        table.add_row(
            r.name,
            r.state,
            r.optimizer,
            str(r.n_trials),
            str(r.n_failed),
            _f(r.best_score) + (" *" if r.older_metric else ""),
            _b(r.best_budget),
            _when(r.started),
            ", ".join(r.collections),
        )
    stdout_console().print(table)
    older = sorted({r.older_metric for r in runs if r.older_metric})
    if older:  # their layout scores are not comparable with today's runs'
        print(f"* layout collections scored by an older metric ({'; '.join(older)})")
    for r in runs:
        if r.problem:
            print(f"hpo: run '{r.name}' unreadable: {r.problem}", file=sys.stderr)
    return 0


def _trial_json(t: Trial) -> dict[str, Any]:
    out = {
        "trial": t.trial,
        "budget": t.budget,
        "score": t.score,
        "metrics": t.metrics,
        "config": t.config,
        "seed": t.seed,
        "finish": t.finish,
    }
    out.update(t.fold_spread)  # cross-validation: the score is the mean over these folds
    if t.blend_shares:  # the learned prior's shares it chose (absent collection: whole)
        out["blend_shares"] = t.blend_shares
    return out


def _prior_text(t: Trial, collections: tuple[str, ...]) -> str:
    """How much of the learned prior the trial blended per layout collection, as it chose on
    the graphs it scored (``learned prior: layout:xla:random whole, ...``); '' when it recorded
    no choice (no blend, or a run made before trials kept it)."""
    shares = t.blend_shares.get("layout")
    if shares is None:
        return ""
    parts = []
    for c in (c for c in collections if is_layout(c)):
        share = shares.get(c, 1.0)
        how = "whole" if share == 1 else "off" if share == 0 else f"at {share:g} of its weight"
        parts.append(f"{c} {how}")
    chosen = "on the folds" if t.folds is not None else "on valid"
    return f"learned prior, as chosen {chosen}: {', '.join(parts)}"


def _folds_text(t: Trial) -> str:
    """``, mean over 3 folds (std 0.0123): fold0 0.61 ...`` for a combined trial, else ''."""
    folds = t.folds
    if folds is None:
        return ""
    each = " ".join(f"{k} {_f(v.get('score'))}" for k, v in folds.items())
    return f", mean over {len(folds)} folds (std {_f(t.fold_spread['score_std'])}): {each}"


def _disk(run: RunHistory) -> dict[str, int]:
    """Bytes the run folder holds, and of those its booster store."""
    from hpo.runs.record.boosters import BOOSTERS_DIR, folder_bytes

    return {"total": folder_bytes(run.path), "boosters": folder_bytes(run.path / BOOSTERS_DIR)}


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _run_json(run: RunHistory, imp: Importance) -> dict[str, Any]:
    """What ``hpo runs show --json`` prints."""
    from hpo.runs.views.budgets import budget_correlations

    inc = run.incumbent
    return {
        "name": run.name,
        "path": str(run.path),
        "state": run.state,
        "disk_bytes": _disk(run),
        "settings": run.record.config,  # as recorded
        "extensions": [e.to_json() for e in run.record.extensions],
        "n_trials": len(run.trials),
        "n_failed": len(run.crashed),
        "trials_per_budget": {str(k): v for k, v in run.trials_per_budget().items()},
        "incumbent": None if inc is None else _trial_json(inc),
        "baseline": baseline_json(run),
        "smac": None if run.smac is None else run.smac.data,
        "trajectory": [dataclasses.asdict(p) for p in run.trajectory()],  # any budget
        "incumbent_trajectory": [dataclasses.asdict(p) for p in run.incumbent_trajectory()],
        "top": [_trial_json(t) for t in run.top(5)],
        "ensemble": run.ensemble,
        "failed": [
            {"trial": t.trial, "budget": t.budget, "status": t.status, "error": t.error_line}
            for t in run.crashed
        ],
        "importance": {"values": imp.values, "method": imp.method, "message": imp.message},
        "budget_correlation": run_tables.budget_json(budget_correlations(run)),
    }


def _subsets_json(run: SubsetRun) -> dict[str, Any]:
    """What ``hpo runs show --json`` prints for a per-subset run."""
    from hpo.runs.views.budgets import budget_correlations

    subsets: dict[str, Any] = {}
    for name, collections in run.plan.items():
        sub = run.subsets.get(name)
        inc = None if sub is None else sub.incumbent
        subsets[name] = {
            "collections": list(collections),
            "state": "not started" if sub is None else sub.state,
            "n_trials": 0 if sub is None else len(sub.trials),
            "n_failed": 0 if sub is None else len(sub.crashed),
            "incumbent": None if inc is None else _trial_json(inc),
            "trajectory": [] if sub is None else [dataclasses.asdict(p) for p in sub.trajectory()],
            "budget_correlation": []
            if sub is None
            else run_tables.budget_json(budget_correlations(sub)),
        }
    return {
        "name": run.name,
        "path": str(run.path),
        "state": run.state,
        "per": run.per,
        "settings": run.record.config,  # as recorded
        "subsets": subsets,
        "metrics": run.metrics,
        "score": run.score,
    }


def _show_subsets(run: SubsetRun, as_json: bool) -> int:
    """``hpo runs show`` of a per-subset run: one line per subset, trajectories, combined score."""
    from hpo.runs.views.budgets import budget_correlations

    if as_json:
        print(json.dumps(_subsets_json(run), indent=2, default=str))
        return 0
    console = stdout_console()
    s = run.settings
    console.print(
        f"[bold]{run.name}[/bold]  {run.state}  {run.optimizer} per {run.per}  fidelity "
        f"{run.fidelity} [{_b(s.min_budget)}, {_b(s.max_budget)}]  space "
        f"{s.space}  seed {s.seed}\ndata {s.data_root}\nstarted "
        f"{_when(run.started)}  folder {run.path}",
        highlight=False,
    )
    table = Table(title="Subsets (each its own campaign)", title_justify="left")
    for col in ("subset", "state", "trials", "failed", "trial", "budget", "score", "metrics"):
        table.add_column(col, justify="left" if col in ("subset", "state", "metrics") else "right")
    traj = Table(
        title="Incumbent over time (best at the highest budget so far)", title_justify="left"
    )
    for col in ("subset", "elapsed", "trial", "budget", "score"):
        traj.add_column(col, justify="left" if col == "subset" else "right")
    for name in run.plan:
        sub = run.subsets.get(name)
        if sub is None:
            table.add_row(name, "not started", "0", "0", "-", "-", "-", "")
            continue
        inc = sub.incumbent
        metrics = "" if inc is None else "  ".join(f"{k} {_f(v)}" for k, v in inc.metrics.items())
        table.add_row(
            name,
            sub.state,
            str(len(sub.trials)),
            str(len(sub.crashed)),
            "-" if inc is None else str(inc.trial),
            "-" if inc is None else _b(inc.budget),
            "-" if inc is None else _f(inc.score),
            metrics,
        )
        for p in sub.incumbent_trajectory():
            traj.add_row(name, f"{p.elapsed:.1f} s", str(p.trial), _b(p.budget), _f(p.score))
    console.print(table)
    console.print(traj)
    for name, sub in run.subsets.items():
        run_tables.print_budget_correlation(console, budget_correlations(sub), f" of {name}")
    console.print(
        f"combined score (mean over collections of each subset's incumbent): {_f(run.score)}\n"
        f"details of a subset: hpo runs show {run.name}/<subset>",
        highlight=False,
    )
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    from hpo.runs.views.nested import load_any

    return load_any(args.name, args.runs_dir).by_kind(
        lambda one: _show_single(one, args.json), lambda per: _show_subsets(per, args.json)
    )


def _show_single(run: RunHistory, as_json: bool) -> int:
    from hpo.runs import RESULT_FILE, TRIALS_FILE
    from hpo.runs.views.budgets import budget_correlations
    from hpo.runs.views.importance import hyperparameter_importance

    if run.lost_trials:
        print(
            f"hpo: warning: {run.path / TRIALS_FILE}: {run.lost_trials} of the trials "
            f"{run.path / RESULT_FILE} counts are missing (the log was cut or edited after the "
            "campaign ended)",
            file=sys.stderr,
        )
    imp = hyperparameter_importance(run)
    if as_json:
        print(json.dumps(_run_json(run, imp), indent=2, default=str))
        return 0
    console = stdout_console()
    s = run.settings
    console.print(
        f"[bold]{run.name}[/bold]  {run.state}  {run.optimizer}  fidelity {run.fidelity} "
        f"[{_b(s.min_budget)}, {_b(s.max_budget)}]  space {s.space}  "
        f"seed {s.seed}\ncollections {', '.join(run.collections)}\ndata {s.data_root}"
        f"{_data_note(run)}"
        f"\nstarted {_when(run.started)}  folder {run.path}\n{smac_line(run.smac)}"
        + "".join(f"\n{line}" for line in _extensions(run.record)),
        highlight=False,
    )
    disk = _disk(run)
    console.print(
        f"disk {_bytes(disk['total'])} (boosters {_bytes(disk['boosters'])})", highlight=False
    )
    budgets = Table(title="Trials per budget", title_justify="left")
    for col in ("budget", "trials", "success", "failed"):
        budgets.add_column(col, justify="right")
    for b, c in run.trials_per_budget().items():
        budgets.add_row(_b(b), str(c["total"]), str(c["success"]), str(c["failed"]))
    console.print(budgets)
    run_tables.print_budget_correlation(console, budget_correlations(run))
    inc = run.incumbent
    if inc is None:
        console.print("no successful trial yet")
    else:
        t = Table(
            title=f"Incumbent (trial {inc.trial}, budget {_b(inc.budget)}, score {_f(inc.score)}"
            f"{_folds_text(inc)}{', finished at the end of the campaign' if inc.finish else ''})",
            title_justify="left",
        )
        t.add_column("hyperparameter / collection")
        t.add_column("value", justify="right")
        for k, v in inc.config.items():
            t.add_row(k, _f(v, 6))
        for k, v in inc.metrics.items():
            t.add_row(f"[cyan]{k}[/cyan]", _f(v))
        console.print(t)
        prior = _prior_text(inc, run.collections)
        if prior:
            console.print(prior, highlight=False, soft_wrap=True)
    if run.ensemble is not None:
        e = run.ensemble
        score, inc_score = _f(e.get("score")), _f(e.get("incumbent_score"))
        older = run.older_layout_metric  # then the incumbent's score is of another metric
        inc_text = (
            f"{inc_score} (scored by the older layout metric: {older})" if older else inc_score
        )
        console.print(f"ensemble of {e.get('k')} (trials {e.get('trials')}): valid score {score} "
                      f"beside the incumbent's {inc_text}, exported to {e.get('model')}",
                      highlight=False, soft_wrap=True)  # fmt: skip
    print_baseline(console, run)
    traj = Table(
        title="Incumbent over time (best at the highest budget so far)", title_justify="left"
    )
    for col in ("elapsed", "trial", "budget", "score"):
        traj.add_column(col, justify="right")
    for p in run.incumbent_trajectory():
        traj.add_row(f"{p.elapsed:.1f} s", str(p.trial), _b(p.budget), _f(p.score))
    console.print(traj)
    top = Table(title="Top configurations (highest budget first)", title_justify="left")
    top.add_column("trial", justify="right")
    top.add_column("budget", justify="right")
    top.add_column("score", justify="right")
    top.add_column("config")
    for tr in run.top(5):
        cfg = "  ".join(f"{k}={_f(v, 4)}" for k, v in tr.config.items())
        top.add_row(str(tr.trial), _b(tr.budget), _f(tr.score), cfg)
    console.print(top)
    if run.crashed:
        bad = Table(title=f"Failed trials ({len(run.crashed)})", title_justify="left")
        for col in ("trial", "budget", "status", "error"):
            bad.add_column(col)
        for tr in run.crashed:
            bad.add_row(str(tr.trial), _b(tr.budget), tr.status, tr.error_line)
        console.print(bad)
    if imp.ok:
        it = Table(title=f"Hyperparameter importance ({imp.method})", title_justify="left")
        it.add_column("name")
        it.add_column("importance", justify="right")
        for k, v in imp.values.items():
            it.add_row(k, f"{v:.3f}")
        console.print(it)
    else:
        console.print(f"importance: {imp.message}", highlight=False)
    return 0


def _cmd_plot(args: argparse.Namespace) -> int:
    from hpo.runs.views.nested import load_any
    from hpo.runs.views.plots import plot_run, plot_subsets

    run = load_any(args.name, args.runs_dir)
    out_png = args.out if args.out is not None else run.path / "run.png"
    out = run.by_kind(lambda one: plot_run(one, out_png), lambda per: plot_subsets(per, out_png))
    print(f"wrote {out}")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from hpo.runs.views.nested import load_any
    from hpo.runs.views.plots import plot_compare

    runs: list[RunHistory] = []
    for name in args.names:  # a per-subset run is one curve per subset, named run/subset
        runs += load_any(name, args.runs_dir).curves()
    table = Table(title="Runs compared", title_justify="left")
    for col in ("run", "optimizer", "state", "trials", "failed", "score", "budget", "collections"):
        table.add_column(
            col, justify="left" if col in ("run", "optimizer", "state", "collections") else "right"
        )
    for r in runs:
        inc = r.incumbent
        table.add_row(
            r.name,
            r.optimizer + (f" cv {r.folds}" if r.folds else ""),
            r.state,
            str(len(r.trials)),
            str(len(r.crashed)),
            "-" if inc is None else _f(inc.score),
            "-" if inc is None else _b(inc.budget),
            ", ".join(r.collections),
        )
    stdout_console().print(table)
    if len({frozenset(r.collections) for r in runs}) > 1:
        # a score is a mean over the run's own collections: other collections, other scale
        print(
            "warning: these runs do not score the same collections, so their scores are not "
            "comparable: " + "; ".join(f"{r.name}: {', '.join(r.collections)}" for r in runs),
            file=sys.stderr,
        )
    out = plot_compare(runs, args.out)
    print(f"wrote {out}")
    return 0


def _data_note(run: RunHistory) -> str:
    """What ``runs show`` adds to the data root when its files are not the ones the run
    started with (the fingerprint ``campaign.json`` keeps): the root was edited in the
    record, moved, or its files changed since. Empty when they match or nothing is kept."""
    from hpo.errors import HpoError
    from hpo.runs.record.folder import data_files, fingerprint_of

    kept = run.record.data_fingerprint
    root = Path(run.settings.data_root)
    if kept is None:
        return ""
    if not root.is_dir():
        return "  (gone: moved or deleted since)"
    try:
        now = fingerprint_of(data_files(root, run.collections))
    except HpoError:
        now = None
    if now != kept:
        return "  (not the files this run used: the root or campaign.json changed since)"
    return ""
