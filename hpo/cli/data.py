"""``hpo data synth`` and ``hpo data check``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from hpo.cli.options import add_options
from hpo.errors import UsageError

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    """Add the ``data`` command group to the top-level sub-parsers."""
    data = sub.add_parser("data", help="generate or validate TpuGraphs data")
    data_sub = data.add_subparsers(dest="data_command", metavar="SUBCOMMAND", required=True)

    synth = data_sub.add_parser(
        "synth",
        help="write a synthetic dataset in the exact TpuGraphs format",
        description="Write all five collections and three splits of synthetic TpuGraphs files.",
    )
    add_options(synth, "out-root", "scale", "seed-synth", "law", "law-seed", "quiet-synth")
    synth.set_defaults(handler=_cmd_synth)

    check = data_sub.add_parser(
        "check",
        help="validate every file of a dataset root and print a summary",
        description="Validate every file; exit 1 with one line per bad file.",
    )
    add_options(check, "root", "data-to-check", "quick")
    check.set_defaults(handler=_cmd_check)


def _cmd_synth(args: argparse.Namespace) -> int:
    from hpo.synth.dataset import generate_dataset

    t0 = time.perf_counter()
    progress = None if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    summary = generate_dataset(
        args.out,
        scale=args.scale,
        seed=args.seed,
        progress=progress,
        law=args.law,
        law_seed=args.law_seed,
    )
    n_files = summary["n_files"]
    print(f"wrote {n_files} files to {args.out} in {time.perf_counter() - t0:.1f} s")
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from hpo.campaign.progress import stdout_console
    from hpo.data.check import absent_line, check_dataset, summary_rows

    root = _root_to_check(args)
    err = Console(stderr=True)
    with err.status("checking") as status:
        report = check_dataset(
            root,
            deep=not args.quick,
            on_file=lambda p: status.update(f"checking {p.parent.name}/{p.name}"),
        )
    table = Table(title=f"TpuGraphs data under {root}")
    for col in ("collection", "split", "graphs", "unlabeled", "bad"):
        table.add_column(col, justify="left" if col in ("collection", "split") else "right")
    for col in ("nodes min/med/max", "cfg nodes min/med/max", "configs min/med/max"):
        table.add_column(col, justify="right")
    for row in summary_rows(report):
        table.add_row(*row)
    stdout_console().print(table)
    absent = absent_line(report)
    if absent is not None:
        print(f"hpo: note: {absent}", file=sys.stderr)
    _warn_each(
        "shared graph",
        [shared.line() for shared in report.shared],
        "valid/test graph(s) are also in train (same nodes and edges): their scores measure "
        "fit; hpo run refuses this root without --allow-overlap",
    )
    _warn_each(
        "no ranking",
        list(report.unranked),
        "labeled graph(s) carry no ranking: no prediction can order their configs, so run, "
        "export and evaluate leave them out of the means",
    )
    for line in report.problems:
        print(f"hpo: bad file: {line}", file=sys.stderr)
    if report.incomplete is not None:
        print(f"hpo: incomplete: {report.incomplete}", file=sys.stderr)
    if report.problems:
        print(f"hpo: {len(report.problems)} bad file(s)", file=sys.stderr)
        return 1
    if report.incomplete is not None:
        return 1
    if not report.ok:
        print(f"hpo: no graph files found under {root}", file=sys.stderr)
        return 1
    return 0


def _root_to_check(args: argparse.Namespace) -> Path:
    """The dataset root of ``hpo data check``: ``ROOT`` or ``--data ROOT``, once."""
    if args.root is not None and args.data is not None and args.root != args.data:
        raise UsageError(f"data check takes one dataset root: {args.root} or --data {args.data}")
    root = args.root if args.root is not None else args.data
    if root is None:
        raise UsageError("data check needs a dataset root: hpo data check --data ROOT")
    return Path(root)


def _warn_each(label: str, lines: list[str], warning: str) -> None:
    """One stderr line per item (``hpo: <label>: <line>``), then the count and what it means."""
    for line in lines:
        print(f"hpo: {label}: {line}", file=sys.stderr)
    if lines:
        print(f"hpo: warning: {len(lines)} {warning}", file=sys.stderr)
