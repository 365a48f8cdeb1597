"""``hpo data synth`` and ``hpo data check``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

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
    synth.add_argument("--out", type=Path, required=True, help="dataset root to create")
    synth.add_argument(
        "--scale",
        choices=("tiny", "small", "full", "real"),
        default="small",
        help="tiny: seconds, for tests; small: the demo; full: real statistics scaled down; "
        "real: real per-graph sizes, about 11 GB (default: small)",
    )
    synth.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    synth.add_argument(
        "--law",
        choices=("second-order", "first-order", "random"),
        default="second-order",
        help="hidden layout cost law: second-order adds element-type tiles, matrix-unit "
        "layouts, bitcasts and mismatch classes; first-order is padding and copies only; "
        "random draws a member of the second-order family (constants x0.2-x5, effects on or "
        "off) from --law-seed; the law is written to law.json in the root "
        "(default: second-order)",
    )
    synth.add_argument(
        "--law-seed",
        type=int,
        default=None,
        help="seed of a random law (default: --seed); keep it and change --seed for unseen "
        "graphs of the same law",
    )
    synth.add_argument("--quiet", action="store_true", help="print only the final line")
    synth.set_defaults(handler=_cmd_synth)

    check = data_sub.add_parser(
        "check",
        help="validate every file of a dataset root and print a summary",
        description="Validate every file; exit 1 with one line per bad file.",
    )
    check.add_argument("root", type=Path, help="dataset root (holding npz/)")
    check.add_argument(
        "--quick",
        action="store_true",
        help="skip streaming node_config_feat of layout files (headers are still checked)",
    )
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

    err = Console(stderr=True)
    with err.status("checking") as status:
        report = check_dataset(
            args.root,
            deep=not args.quick,
            on_file=lambda p: status.update(f"checking {p.parent.name}/{p.name}"),
        )
    table = Table(title=f"TpuGraphs data under {args.root}")
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
    for shared in report.shared:
        print(f"hpo: shared graph: {shared.line()}", file=sys.stderr)
    if report.shared:
        print(
            f"hpo: warning: {len(report.shared)} valid/test graph(s) are also in train (same "
            "nodes and edges): their scores measure fit; hpo run refuses this root without "
            "--allow-overlap",
            file=sys.stderr,
        )
    for line in report.problems:
        print(f"hpo: bad file: {line}", file=sys.stderr)
    if report.problems:
        print(f"hpo: {len(report.problems)} bad file(s)", file=sys.stderr)
        return 1
    if not report.ok:
        print(f"hpo: no graph files found under {args.root}", file=sys.stderr)
        return 1
    return 0
