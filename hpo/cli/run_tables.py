"""``hpo runs trials`` (every trial as one row: a table, ``--csv`` or ``--json``), ``hpo runs
export`` (a run in the format of another tool: DeepCAVE) and the budget correlation table that
``hpo runs show`` prints."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import TYPE_CHECKING, Any

from rich.table import Table

from hpo.campaign.progress import format_budget as _b
from hpo.campaign.progress import format_number as _f
from hpo.campaign.progress import stdout_console
from hpo.cli.options import add_options
from hpo.errors import UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from hpo.runs.views.budgets import BudgetCorrelation
    from hpo.runs.views.trials import TrialTable

__all__ = ["add_parsers", "budget_json", "print_budget_correlation"]


def add_parsers(runs_sub: Any) -> None:
    """Add ``trials`` and ``export`` to the sub-parsers of ``hpo runs``."""
    p = runs_sub.add_parser(
        "trials", help="every trial as one row: config, budget, status, scores, time, worker"
    )
    add_options(p, "name", "runs-dir", "csv", "json")
    p.set_defaults(handler=_cmd_trials)

    p = runs_sub.add_parser("export", help="write a run in another tool's format (DeepCAVE)")
    add_options(p, "name", "runs-dir", "export-format", "out-export")
    p.set_defaults(handler=_cmd_export)


def _cell(column: str, value: Any) -> str:
    if value is None:
        return ""
    if column == "budget":
        return _b(value)
    if column in ("elapsed", "duration"):
        return f"{value:.1f}"
    return _f(value)


def _cmd_trials(args: argparse.Namespace) -> int:
    from hpo.runs.views.nested import load_any
    from hpo.runs.views.trials import trial_table

    if args.csv and args.json:
        raise UsageError("runs trials: give --csv or --json, not both")
    table = trial_table(load_any(args.name, args.runs_dir))
    if args.json:
        print(json.dumps(table.rows, indent=2, default=str))
        return 0
    if args.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=table.columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in r.items()} for r in table.rows)
        return 0
    _print_trials(args.name, table)
    return 0


#: Columns of the terminal table, by the table's column names (the rest are folded into
#: ``note``, the start shown as seconds since the campaign's start).
_SHORT = {"config_id": "config", "elapsed": "at s", "duration": "took s"}


def _note(row: dict[str, Any]) -> str:
    marks = [m for m in ("baseline", "finish") if row[m]]
    return " ".join([*marks, *([row["error"]] if row["error"] else [])])


def _print_trials(name: str, table: TrialTable) -> None:
    """The terminal table, narrow enough to read: each trial's configuration by its id, and
    the hyperparameters of each id in a second table (all of them: ``--csv``, ``--json``)."""
    rows = table.rows
    fixed = ("subset", "trial", "fold", "config_id", "budget", "status", "score")
    shown = [c for c in fixed if any(r[c] is not None for r in rows)]
    metrics = [c for c in table.columns if c.startswith("metric.")]
    tail = ("elapsed", "duration", "worker")
    out = Table(title=f"Trials of {name} ({len(table)})", title_justify="left")
    for c in [*shown, *metrics, *tail, "note"]:
        left = c in ("subset", "fold", "status", "worker", "note")
        out.add_column(
            _SHORT.get(c, c.removeprefix("metric.")), justify="left" if left else "right"
        )
    for r in rows:
        out.add_row(*(_cell(c, r[c]) for c in [*shown, *metrics, *tail]), _note(r))
    console = stdout_console()
    console.print(out)
    varied = [
        c for c in table.columns if c.startswith("config.") and len({str(r[c]) for r in rows}) > 1
    ]
    configs = Table(title="Configurations (the hyperparameters that differ)", title_justify="left")
    for c in ["subset", "config"] if "subset" in shown else ["config"]:
        configs.add_column(c, justify="right" if c == "config" else "left")
    configs.add_column("hyperparameters")
    seen: set[tuple[Any, Any]] = set()
    for r in rows:
        key = (r["subset"], r["config_id"])
        if key in seen:
            continue
        seen.add(key)
        hp = " ".join(
            f"{c.removeprefix('config.')}={_f(r[c], 3)}" for c in varied if r[c] is not None
        )
        configs.add_row(*([str(r["subset"])] if "subset" in shown else []), _cell("", key[1]), hp)
    console.print(configs)


def _cmd_export(args: argparse.Namespace) -> int:
    from hpo.runs.views.deepcave import export_deepcave
    from hpo.runs.views.nested import load_any

    written = export_deepcave(load_any(args.name, args.runs_dir), args.out)
    for path in written:
        print(f"wrote {path}")
    print(f"open with DeepCAVE (Python 3.10): deepcave --open, then load {args.out}")
    return 0


def budget_json(correlations: list[BudgetCorrelation]) -> list[dict[str, Any]]:
    """The budget correlation as ``runs show --json`` prints it."""
    return [
        {"low": c.low, "high": c.high, "n": c.n, "spearman": c.spearman, "kendall": c.kendall}
        for c in correlations
    ]


def print_budget_correlation(
    console: Console, correlations: list[BudgetCorrelation], title: str = ""
) -> None:
    """The table of rank correlations between budgets and, when the smallest budget does not
    predict the largest, a one-line note under it."""
    from hpo.runs.views.budgets import budget_note

    if not correlations:
        return
    table = Table(
        title=f"Budget correlation{title}",
        title_justify="left",
    )
    for col in ("budgets", "configs at both", "spearman", "kendall"):
        table.add_column(col, justify="right")
    for c in correlations:
        table.add_row(f"{_b(c.low)} -> {_b(c.high)}", str(c.n), _f(c.spearman), _f(c.kendall))
    console.print(table)
    note = budget_note(correlations)
    if note is not None:
        console.print(f"note: {note}", highlight=False)
