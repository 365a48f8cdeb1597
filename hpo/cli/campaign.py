"""``hpo run``: start, resume or overwrite a SMAC campaign from the command line."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hpo.errors import UsageError

__all__ = ["add_parsers", "default_run_name", "parse_duration"]

_DURATION = re.compile(
    r"(?:(\d+(?:\.\d*)?)d)?(?:(\d+(?:\.\d*)?)h)?(?:(\d+(?:\.\d*)?)m)?"
    r"(?:(\d+(?:\.\d*)?)s?)?"
)
# CLI option -> CampaignConfig field, for the settings a resumed campaign takes from its folder.
_SETTINGS = {
    "data": "data_root",
    "collection": "collections",
    "space": "space",
    "name": "name",
    "trials": "trials",
    "walltime": "walltime",
    "min_budget": "min_budget",
    "max_budget": "max_budget",
    "eta": "eta",
    "n_init": "n_init",
    "n_local": "n_local",
    "random_prob": "random_prob",
    "min_trials": "min_trials",
    "optimizer": "optimizer",
    "fidelity": "fidelity",
    "seed": "seed",
    "workers": "workers",
    "worker_processes": "worker_processes",
    "threads": "threads",
    "histogram_pool_mb": "histogram_pool_mb",
    "dask_scheduler": "dask_scheduler",
    "cache_dir": "cache_dir",
    "train_configs": "train_configs",
    "valid_configs": "valid_configs",
    "keep_fastest": "keep_fastest",
    "per": "per",
    "cv": "cv",
    "finish": "finish",
    "allow_overlap": "allow_overlap",
}


def parse_duration(text: str) -> float:
    """Parse ``3600``, ``90s``, ``30m``, ``2h``, ``1h30m`` or ``1d`` into seconds."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not text.strip() or match is None or not any(match.groups()):
        raise argparse.ArgumentTypeError(
            f"invalid duration '{text}' (expected seconds or e.g. 90s, 30m, 2h, 1h30m)"
        )
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    total = days * 86400 + hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise argparse.ArgumentTypeError(f"invalid duration '{text}' (must be > 0)")
    return total


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
    from hpo.campaign.config import FIDELITY_BUDGETS
    from hpo.campaign.optimizers import get_optimizer, offered_optimizers

    d = _defaults()
    lows = ", ".join(f"{k} {lo:g}" for k, (lo, _) in FIDELITY_BUDGETS.items())
    highs = ", ".join(f"{k} {hi:g}" for k, (_, hi) in FIDELITY_BUDGETS.items())
    p = subparsers.add_parser(
        "run",
        help="run (or resume) a SMAC campaign",
        description="Tune LightGBM lambdarank hyperparameters with SMAC. The run folder "
        "RUNS_DIR/NAME holds campaign.json, trials.jsonl, SMAC's state and result.json.",
    )
    p.add_argument(
        "--data", metavar="ROOT", type=Path, help="dataset root (required unless --resume)"
    )
    p.add_argument(
        "--collection",
        metavar="SPEC",
        help="collection name, 'layout', 'all' or a comma list (default: all); 'all' and "
        "'layout' run the collections the data root holds and name the absent ones",
    )
    p.add_argument(
        "--space",
        metavar="NAME|PATH",
        help=f"search space name or ConfigSpace .json file (default: {d['space']})",
    )
    p.add_argument("--name", help="run name (default: generated from the time)")
    p.add_argument(
        "--runs-dir",
        metavar="DIR",
        type=Path,
        default=Path("runs"),
        help="folder of run folders (default: runs)",
    )
    p.add_argument("--trials", type=int, help=f"trial limit (default: {d['trials']})")
    p.add_argument(
        "--walltime",
        type=parse_duration,
        metavar="DURATION",
        help="walltime limit, e.g. 3600, 45m, 2h (default: none)",
    )
    p.add_argument(
        "--min-budget", type=float, help=f"smallest budget of successive halving (default: {lows})"
    )
    p.add_argument(
        "--max-budget",
        type=float,
        help=f"largest budget, the one every bo/random trial gets; at most 1,000,000 (default: "
        f"{highs})",
    )
    p.add_argument("--eta", type=int, help=f"successive halving factor (default: {d['eta']})")
    p.add_argument(
        "--optimizer",
        choices=offered_optimizers(),
        help="; ".join(f"{n}: {get_optimizer(n).description}" for n in offered_optimizers())
        + f" (default: {d['optimizer']})",
    )
    p.add_argument(
        "--n-init",
        type=int,
        metavar="N",
        help="initial random configurations before the surrogate is used (model-hb, model-sh, "
        f"bo; default: {d['n_init']})",
    )
    p.add_argument(
        "--n-local",
        type=int,
        metavar="N",
        help="of the initial configurations, how many are neighbours of the baseline (one "
        f"hyperparameter changed each) instead of random (model-hb, model-sh, bo; default: "
        f"{d['n_local']})",
    )
    p.add_argument(
        "--random-prob",
        type=float,
        metavar="P",
        help="share of configurations sampled at random between the surrogate's picks "
        f"(model-hb, model-sh, bo; default: {d['random_prob']})",
    )
    p.add_argument(
        "--min-trials",
        type=int,
        metavar="N",
        help="trials a budget needs before the surrogate is fitted on it (model-hb, model-sh; "
        f"default: {d['min_trials']}; BOHB uses the space's hyperparameters + 1)",
    )
    p.add_argument(
        "--fidelity",
        choices=("rounds", "configs"),
        help="what the budget counts: boosting rounds, or configs sampled per "
        f"training graph (default: {d['fidelity']})",
    )
    p.add_argument(
        "--per",
        choices=("none", "family", "collection"),
        help="one campaign for all collections (none), or one per family or per collection, "
        "each tuned on its own rows and metric, one after the other with the walltime split "
        f"equally and --trials each, in RUNS_DIR/NAME/<subset>/ (default: {d['per']})",
    )
    p.add_argument(
        "--cv",
        type=int,
        metavar="K",
        help="score each trial on one of K folds of the labeled train+valid graphs (split by "
        "graph) instead of on the valid split; SMAC races configurations over the folds and "
        "every trial trains --max-budget; export retrains on every labeled graph (default: "
        f"{d['cv']}, the valid split)",
    )
    p.add_argument(
        "--finish",
        type=int,
        metavar="K",
        help="keep back part of the walltime (or the last K trials) to take the K most "
        "promising configurations that did not reach --max-budget there, so the incumbent is "
        "the best found; multi-fidelity optimizers without --cv only; 0: off (default: "
        f"{d['finish']})",
    )
    p.add_argument(
        "--allow-overlap",
        action="store_const",
        const=True,
        help="run although valid or test graphs are also in train (same nodes and edges, "
        "whatever the file names; hpo data check lists them): valid scores then measure fit, "
        "and the summary says so (default: refused)",
    )
    p.add_argument(
        "--seed", type=int, help=f"seed of everything, 0 to 2^32-1 (default: {d['seed']})"
    )
    p.add_argument(
        "--workers",
        type=int,
        help="parallel trials on a local Dask cluster whose workers are threads of this "
        "process, sharing its binned Datasets; at most the machine's cores (default: 1, no "
        "cluster)",
    )
    p.add_argument(
        "--worker-processes",
        action="store_true",
        default=None,
        help="with --workers: one process per worker instead (each holds its own Datasets; "
        "one that crashes is restarted)",
    )
    p.add_argument(
        "--threads",
        type=int,
        help="LightGBM threads per trial (default: the machine's cores divided by the workers)",
    )
    p.add_argument(
        "--histogram-pool-mb",
        type=int,
        metavar="MB",
        help="LightGBM's histogram memory per trial, in MiB (it holds a histogram per leaf, "
        "about 0.5 MiB each on real-size layout data; a smaller pool recomputes, for time); "
        f"0: unbounded (default: {d['histogram_pool_mb']})",
    )
    p.add_argument(
        "--dask-scheduler",
        metavar="ADDR",
        help="use the workers of a running Dask scheduler, e.g. tcp://host:8786",
    )
    p.add_argument(
        "--cache-dir", metavar="DIR", type=Path, help=f"feature cache (default: {d['cache_dir']})"
    )
    p.add_argument(
        "--train-configs",
        type=int,
        metavar="N",
        help="distinct configs kept per train graph, biased toward fast ones; 0: all "
        f"(default: {d['train_configs']})",
    )
    p.add_argument(
        "--valid-configs",
        type=int,
        metavar="M",
        help="configs drawn uniformly per valid layout graph (tile valid keeps all); 0: all "
        f"(default: {d['valid_configs']})",
    )
    p.add_argument(
        "--keep-fastest",
        type=int,
        metavar="K",
        help=f"fastest configs of a train graph always kept (default: {d['keep_fastest']})",
    )
    p.add_argument(
        "--warm-start",
        nargs="+",
        metavar="RUN",
        help="seed the new campaign with the best configurations of earlier runs (names under "
        "--runs-dir, or folders): the hyperparameters the spaces share, the rest at their "
        "defaults, run first; the first run's best is the baseline, in place of the default "
        "configuration; --per runs seed each subset from the matching subset",
    )
    p.add_argument("--quiet", action="store_true", help="plain log lines, no live view")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--resume",
        metavar="NAME",
        help="continue the interrupted run NAME with its saved settings; with a higher "
        "--walltime or --trials (the new totals), extend it, finished or not",
    )
    mode.add_argument(
        "--overwrite", action="store_true", help="delete an existing run of the same name first"
    )
    p.set_defaults(handler=run_command)


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
    spec = args.collection if args.collection is not None else "all"
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
    from hpo.runs.views.nested import is_subset_run

    given = [
        f"--{o.replace('_', '-')}"
        for o in _SETTINGS
        if getattr(args, o) is not None and o not in LIMITS
    ]
    if given:
        raise UsageError(
            "--resume takes every setting from the run folder (but --trials and --walltime, "
            f"which extend it); drop {', '.join(given)}"
        )
    run_dir = args.runs_dir / args.resume
    if not run_dir.is_dir():
        raise UsageError(f"no run '{args.resume}' in {args.runs_dir}")
    cfg = read_campaign(run_dir)["config"]
    limits = {o: getattr(args, o) for o in LIMITS if getattr(args, o) is not None}
    raised = {o: v for o, v in limits.items() if v != getattr(cfg, o)}  # the saved value: no-op
    if raised and (args.runs_dir / "campaign.json").is_file() and is_subset_run(args.runs_dir):
        raise UsageError(
            f"'{args.resume}' is a subset of the per-subset run '{args.runs_dir.name}', which "
            f"shares its limits among its subsets: extend that run (hpo run --runs-dir "
            f"{args.runs_dir.parent} --resume {args.runs_dir.name} ...)"
        )
    # the folder given is the run: a moved runs folder, or a copied or renamed run folder,
    # resumes in place (campaign.json keeps the name it was started with)
    return dataclasses.replace(cfg, runs_dir=args.runs_dir, name=args.resume, **raised)


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
