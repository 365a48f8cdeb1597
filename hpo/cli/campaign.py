"""``hpo run``: start, resume or overwrite a SMAC campaign from the command line."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hpo.cli.options import add_options, parse_duration, run_settings
from hpo.errors import UsageError

__all__ = ["add_parsers", "default_run_name", "parse_duration"]

#: The options of ``hpo run`` (:data:`hpo.cli.options.OPTIONS`), in the order help shows them.
RUN_OPTIONS = (
    "data",
    "collections",
    "space",
    "run-name",
    "runs-dir",
    "trials",
    "walltime",
    "min-budget",
    "max-budget",
    "eta",
    "optimizer",
    "n-init",
    "n-local",
    "random-prob",
    "min-trials",
    "fidelity",
    "per",
    "cv",
    "finish",
    "allow-overlap",
    "seed",
    "workers",
    "worker-processes",
    "threads",
    "histogram-pool-mb",
    "dask-scheduler",
    "cache-dir",
    "train-configs",
    "valid-configs",
    "keep-fastest",
    "warm-start",
    "quiet",
)
# parsed option -> CampaignConfig field, for the settings a resumed campaign takes from its folder
_SETTINGS = run_settings(RUN_OPTIONS)


def default_run_name(optimizer: str) -> str:
    """A run name from the current time, e.g. ``20250101-120000-model-hb``."""
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{optimizer}"


def _defaults() -> dict[str, Any]:
    from hpo.campaign.config import CampaignConfig

    return {
        f.name: f.default
        for f in dataclasses.fields(CampaignConfig)
        if f.default is not dataclasses.MISSING
    }


def add_parsers(subparsers: Any) -> None:
    """Add the ``run`` sub-command to the ``hpo`` parser."""
    p = subparsers.add_parser(
        "run",
        help="run (or resume) a SMAC campaign",
        description="Tune LightGBM lambdarank hyperparameters with SMAC. The run folder "
        "RUNS_DIR/NAME holds campaign.json, trials.jsonl, SMAC's state and result.json.",
    )
    add_options(p, *RUN_OPTIONS)
    mode = p.add_mutually_exclusive_group()
    add_options(mode, "resume", "overwrite")
    p.set_defaults(handler=run_command, stdout_is_log=True)  # its result is the run folder


def _config_from_args(args: argparse.Namespace) -> Any:
    from hpo.campaign.config import CampaignConfig
    from hpo.data.load import resolve_collections

    if args.data is None:
        raise UsageError("--data ROOT is required (unless --resume NAME)")
    values: dict[str, Any] = {
        field: getattr(args, option)
        for option, field in _SETTINGS.items()
        if getattr(args, option) is not None
    }
    spec = args.collections if args.collections is not None else "all"
    values["collections"] = resolve_collections(spec)
    groups = {"all", "layout"} & {part.strip() for part in spec.split(",")}
    if groups:
        values["collections"] = _present_collections(args.data, spec, values["collections"])
    values.setdefault("name", default_run_name(args.optimizer or _defaults()["optimizer"]))
    return CampaignConfig(runs_dir=args.runs_dir, **values)


def _present_collections(root: Path, spec: str, wanted: tuple[str, ...]) -> tuple[str, ...]:
    """Narrow a group selector (``all``, ``layout``) to the collections ``root`` holds.

    A root may hold only some collections (the real fixtures hold tile:xla and
    layout:xla:random): a group runs the ones with a train folder and names the others on
    stdout; a collection named on its own must be there (the campaign says so if not).
    """
    from hpo.data.load import collection_dir, resolve_collections

    named = [p.strip() for p in spec.split(",") if p.strip() not in ("all", "layout")]
    must = set(resolve_collections(",".join(named))) if named else set()
    present = tuple(c for c in wanted if c in must or collection_dir(root, c, "train").is_dir())
    if not present:
        raise UsageError(
            f"{root}: no train data for any of {', '.join(wanted)} (expected folders like "
            f"{collection_dir(root, wanted[0], 'train')})"
        )
    absent = [c for c in wanted if c not in present]
    if absent:
        # stdout, with the campaign's log: stderr is kept for the one line of an error
        print(
            f"note: {root} has no train data for {', '.join(absent)}; running {', '.join(present)}"
        )
    return present


def _resumed_config(args: argparse.Namespace) -> Any:
    """The saved settings of the run to resume, with the limits given raised (an extension,
    checked against the saved ones by :func:`hpo.campaign.lifecycle.preflight.check_saved`)."""
    from hpo.campaign.config import read_campaign
    from hpo.campaign.lifecycle.extend import LIMITS
    from hpo.campaign.lifecycle.preflight import SESSION_SETTINGS
    from hpo.runs.views.nested import run_type

    given = [
        f"--{o.replace('_', '-')}"
        for o in _SETTINGS
        if getattr(args, o) is not None and o not in (*LIMITS, *SESSION_SETTINGS, "data")
    ]
    if given:
        raise UsageError(
            "--resume takes every setting from the run folder (but --trials and --walltime, "
            "which extend it, --threads, which changes no result, and --data, a moved data "
            f"root); drop {', '.join(given)}"
        )
    run_dir = args.runs_dir / args.resume
    if not run_dir.is_dir():
        raise UsageError(f"no run '{args.resume}' in {args.runs_dir}")
    cfg = read_campaign(run_dir).config
    limits = {o: getattr(args, o) for o in LIMITS if getattr(args, o) is not None}
    raised = {o: v for o, v in limits.items() if v != getattr(cfg, o)}  # the saved value: no-op
    if raised and (args.runs_dir / "campaign.json").is_file():  # inside another run
        run_type(args.runs_dir).check_inner_extension(args.runs_dir, args.resume)
    # the folder given is the run: a moved runs folder, or a copied or renamed run folder,
    # resumes in place (campaign.json keeps the name it was started with)
    session = {o: getattr(args, o) for o in SESSION_SETTINGS if getattr(args, o) is not None}
    # a moved data root: taken when its files are the run's (checked with the data)
    moved = {} if args.data is None else {"data_root": args.data}
    return dataclasses.replace(
        cfg, runs_dir=args.runs_dir, name=args.resume, **raised, **session, **moved
    )


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM (batch schedulers, ``kill``) into KeyboardInterrupt so cleanup runs."""

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_command(args: argparse.Namespace) -> int:
    """Handle ``hpo run``; return 0, or 1 when no trial succeeded."""
    from hpo.campaign.lifecycle.launch import run_campaign

    if args.resume and args.warm_start:
        raise UsageError("--warm-start seeds a new campaign; a resumed one keeps its seeds")
    cfg = _resumed_config(args) if args.resume else _config_from_args(args)
    with _sigterm_as_interrupt():
        result = run_campaign(
            cfg,
            quiet=args.quiet,
            resume=args.resume is not None,
            overwrite=args.overwrite,
            warm_start=args.warm_start or (),
        )
    return 0 if result.incumbent is not None else 1
