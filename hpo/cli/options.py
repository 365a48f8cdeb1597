"""Every option of every command, declared once: its flags, its help, how argparse reads it.

A command builds its parser from this table (:func:`add_options`), so one flag is spelled and
explained one way across commands; an old spelling stays accepted as a hidden alias
(``--collection`` for ``--collections``). A ``run`` option that sets a campaign setting names
its :class:`~hpo.campaign.config.CampaignConfig` field (``setting``): ``hpo run`` reads the
settings a resumed campaign takes from its folder off the same table. ``tests/cli/test_options.py``
checks every option of every command against it.

Help texts may hold ``{name}`` fields, filled when the parser is built from
:func:`help_context` (the campaign defaults, the budget ranges, the optimizer table), so
building a parser is the only thing that reads them.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "OPTIONS",
    "Option",
    "add_options",
    "help_context",
    "parse_duration",
    "parse_seed",
    "run_settings",
]


@dataclasses.dataclass(frozen=True)
class Option:
    """One option as argparse takes it.

    ``flags`` are its spellings (one, or a positional's name); ``aliases`` older spellings,
    accepted but not shown; ``setting`` the campaign setting it gives (``hpo run`` only);
    ``kwargs`` what else :meth:`argparse.ArgumentParser.add_argument` takes (a callable
    ``choices`` is called when the parser is built).
    """

    flags: tuple[str, ...]
    help: str
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    setting: str | None = None

    @property
    def dest(self) -> str:
        """The attribute of the parsed namespace that holds its value."""
        return str(self.kwargs.get("dest") or self.flags[0].lstrip("-").replace("-", "_"))


def _optimizer_choices() -> tuple[str, ...]:
    from hpo.campaign.optimizers import offered_optimizers

    return tuple(offered_optimizers())


def help_context() -> dict[str, Any]:
    """The values help texts quote: the campaign defaults (``d``), the budget ranges of each
    fidelity (``lows``, ``highs``), one line per optimizer (``optimizers``) and the names of
    the model-based ones, which the initial-design options apply to (``model_based``)."""
    from hpo.campaign.config import FIDELITY_BUDGETS, CampaignConfig
    from hpo.campaign.optimizers import get_optimizer, offered_optimizers

    d = {
        f.name: f.default
        for f in dataclasses.fields(CampaignConfig)
        if f.default is not dataclasses.MISSING
    }
    return {
        "d": d,
        "lows": ", ".join(f"{k} {lo:g}" for k, (lo, _) in FIDELITY_BUDGETS.items()),
        "highs": ", ".join(f"{k} {hi:g}" for k, (_, hi) in FIDELITY_BUDGETS.items()),
        "optimizers": "; ".join(
            f"{n}: {get_optimizer(n).description}" for n in offered_optimizers()
        ),
        "model_based": ", ".join(n for n in offered_optimizers() if get_optimizer(n).model_based),
    }


_DURATION = re.compile(
    r"(?:(\d+(?:\.\d*)?)d)?(?:(\d+(?:\.\d*)?)h)?(?:(\d+(?:\.\d*)?)m)?"
    r"(?:(\d+(?:\.\d*)?)s?)?"
)


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


def parse_seed(text: str) -> int:
    """Parse a seed of ``data synth``: an integer from 0 to
    :data:`~hpo.campaign.config.MAX_SEED`, the seeds ``hpo run`` takes (numpy refused a
    negative one with a traceback)."""
    from hpo.campaign.config import MAX_SEED

    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(
            f"invalid seed '{text}' (expected an integer from 0 to {MAX_SEED})"
        )
    return value


_RUNS_DIR = "folder of the run folders (default: runs)"

#: Every option, by the name a command asks for it with.
OPTIONS: dict[str, Option] = {
    # -- where things are
    "runs-dir": Option(
        ("--runs-dir",), _RUNS_DIR, {"metavar": "DIR", "type": Path, "default": Path("runs")}
    ),
    "name": Option(("name",), "run name (or path of a run folder)"),
    "names": Option(("names",), "runs to compare", {"nargs": "+", "metavar": "NAME"}),
    "data": Option(
        ("--data",),
        "dataset root (required unless --resume)",
        {"metavar": "ROOT", "type": Path},
        setting="data_root",
    ),
    "data-of-run": Option(
        ("--data",), "dataset root (default: the campaign's)", {"metavar": "ROOT", "type": Path}
    ),
    "data-required": Option(
        ("--data",),
        "dataset root (holding npz/)",
        {"metavar": "ROOT", "type": Path, "required": True},
    ),
    "data-to-check": Option(
        ("--data",), "dataset root (holding npz/), as ROOT", {"metavar": "ROOT", "type": Path}
    ),
    "root": Option(("root",), "dataset root (holding npz/)", {"type": Path, "nargs": "?"}),
    "cache-dir": Option(
        ("--cache-dir",),
        "feature cache (default: {d[cache_dir]})",
        {"metavar": "DIR", "type": Path},
        setting="cache_dir",
    ),
    "cache-dir-of-run": Option(
        ("--cache-dir",),
        "feature cache (default: the campaign's)",
        {"metavar": "DIR", "type": Path},
    ),
    "cache-dir-of-model": Option(
        ("--cache-dir",),
        "feature cache (default: .hpo_cache)",
        {"metavar": "DIR", "type": Path, "default": Path(".hpo_cache")},
    ),
    "model": Option(
        ("--model",), "model folder (from hpo export)", {"type": Path, "required": True}
    ),
    "graph": Option(
        ("--graph",), "graph file stem (without .npz)", {"metavar": "STEM", "required": True}
    ),
    "configs": Option(
        ("--configs",),
        "two config indices of the graph file, A,B",
        {"metavar": "A,B", "required": True},
    ),
    "collections": Option(
        ("--collections",),
        "collection name, 'layout', 'all' or a comma list (default: all); 'all' and "
        "'layout' run the collections the data root holds and name the absent ones",
        {"metavar": "SPEC"},
        aliases=("--collection",),
        setting="collections",
    ),
    "collections-of-model": Option(
        ("--collections",),
        "comma-separated subset, each must be in the data (default: the model's that the "
        "data holds; the absent ones are named on stderr)",
        {"metavar": "SPEC"},
        aliases=("--collection",),
    ),
    # -- outputs
    "out-model": Option(
        ("--out",),
        "model folder (default: models/NAME, unless it holds another run's export)",
        {"type": Path},
    ),
    "out-csv": Option(("--out",), "submission CSV to write", {"type": Path, "required": True}),
    "out-png": Option(("--out",), "PNG to write (default: <run folder>/run.png)", {"type": Path}),
    "out-compare": Option(
        ("--out",),
        "PNG to write (default: compare.png; an existing one only if hpo wrote it)",
        {"type": Path, "default": Path("compare.png")},
    ),
    "out-root": Option(("--out",), "dataset root to create", {"type": Path, "required": True}),
    "out-export": Option(
        ("--out",),
        "folder to write the export to",
        {"metavar": "DIR", "type": Path, "required": True},
    ),
    "json": Option(("--json",), "print JSON instead of tables", {"action": "store_true"}),
    "csv": Option(("--csv",), "print CSV instead of a table", {"action": "store_true"}),
    "export-format": Option(
        ("--format",), "the format to write", {"choices": ("deepcave",), "required": True}
    ),
    "quiet": Option(("--quiet",), "plain log lines, no live view", {"action": "store_true"}),
    "quiet-synth": Option(("--quiet",), "print only the final line", {"action": "store_true"}),
    # -- a campaign's settings (hpo run)
    "space": Option(
        ("--space",),
        "search space name or ConfigSpace .json file (default: {d[space]})",
        {"metavar": "NAME|PATH"},
        setting="space",
    ),
    "run-name": Option(("--name",), "run name (default: generated from the time)", setting="name"),
    "trials": Option(
        ("--trials",), "trial limit (default: {d[trials]})", {"type": int}, setting="trials"
    ),
    "walltime": Option(
        ("--walltime",),
        "walltime limit, e.g. 3600, 45m, 2h; a trial still boosting a quarter of it (at least "
        "30 s) past it is cut and recorded as crashed (default: none)",
        {"type": parse_duration, "metavar": "DURATION"},
        setting="walltime",
    ),
    "min-budget": Option(
        ("--min-budget",),
        "smallest budget of successive halving (default: {lows})",
        {"type": float},
        setting="min_budget",
    ),
    "max-budget": Option(
        ("--max-budget",),
        "largest budget, the one every bo/random trial gets; at most 1,000,000 (default: {highs})",
        {"type": float},
        setting="max_budget",
    ),
    "eta": Option(
        ("--eta",), "successive halving factor (default: {d[eta]})", {"type": int}, setting="eta"
    ),
    "optimizer": Option(
        ("--optimizer",),
        "{optimizers} (default: {d[optimizer]})",
        {"choices": _optimizer_choices},
        setting="optimizer",
    ),
    "n-init": Option(
        ("--n-init",),
        "initial random configurations before the surrogate is used ({model_based}; "
        "default: {d[n_init]})",
        {"type": int, "metavar": "N"},
        setting="n_init",
    ),
    "n-local": Option(
        ("--n-local",),
        "of the initial configurations, how many are neighbours of the baseline (one "
        "hyperparameter changed each) instead of random ({model_based}; default: "
        "{d[n_local]})",
        {"type": int, "metavar": "N"},
        setting="n_local",
    ),
    "random-prob": Option(
        ("--random-prob",),
        "share of configurations sampled at random between the surrogate's picks "
        "({model_based}; default: {d[random_prob]})",
        {"type": float, "metavar": "P"},
        setting="random_prob",
    ),
    "min-trials": Option(
        ("--min-trials",),
        "trials a budget needs before the surrogate is fitted on it (model-hb, model-sh; "
        "default: {d[min_trials]}; BOHB uses the space's hyperparameters + 1)",
        {"type": int, "metavar": "N"},
        setting="min_trials",
    ),
    "fidelity": Option(
        ("--fidelity",),
        "what the budget counts: boosting rounds, or configs sampled per "
        "training graph (default: {d[fidelity]})",
        {"choices": ("rounds", "configs")},
        setting="fidelity",
    ),
    "per": Option(
        ("--per",),
        "one campaign for all collections (none), or one per family or per collection, "
        "each tuned on its own rows and metric, one after the other with the walltime split "
        "equally and --trials each, in RUNS_DIR/NAME/<subset>/ (default: {d[per]})",
        {"choices": ("none", "family", "collection")},
        setting="per",
    ),
    "cv": Option(
        ("--cv",),
        "score each trial on one of K folds of the labeled train+valid graphs (split by "
        "graph) instead of on the valid split; SMAC races configurations over the folds and "
        "every trial trains --max-budget; export retrains on every labeled graph (default: "
        "{d[cv]}, the valid split)",
        {"type": int, "metavar": "K"},
        setting="cv",
    ),
    "finish": Option(
        ("--finish",),
        "keep back part of the walltime (or the last K trials) to take the K most "
        "promising configurations that did not reach --max-budget there, so the incumbent is "
        "the best found; multi-fidelity optimizers without --cv only; 0: off (default: "
        "{d[finish]})",
        {"type": int, "metavar": "K"},
        setting="finish",
    ),
    "allow-overlap": Option(
        ("--allow-overlap",),
        "run although valid or test graphs are also in train (same nodes and edges, "
        "whatever the file names; hpo data check lists them): valid scores then measure fit, "
        "and the summary says so (default: refused)",
        {"action": "store_const", "const": True},
        setting="allow_overlap",
    ),
    "seed": Option(
        ("--seed",),
        "seed of everything, 0 to 2^32-1 (default: {d[seed]})",
        {"type": int},
        setting="seed",
    ),
    "workers": Option(
        ("--workers",),
        "parallel trials on a local Dask cluster whose workers are threads of this "
        "process, sharing its binned Datasets; at most the machine's cores (default: 1, no "
        "cluster)",
        {"type": int},
        setting="workers",
    ),
    "worker-processes": Option(
        ("--worker-processes",),
        "with --workers: one process per worker instead (each holds its own Datasets; "
        "one that crashes is restarted)",
        {"action": "store_true", "default": None},
        setting="worker_processes",
    ),
    "threads": Option(
        ("--threads",),
        "LightGBM threads per trial, at most the machine's cores (default: the cores divided "
        "by the workers); a --resume may change it: results do not depend on it",
        {"type": int},
        setting="threads",
    ),
    "histogram-pool-mb": Option(
        ("--histogram-pool-mb",),
        "LightGBM's histogram memory per trial, in MiB (it holds a histogram per leaf, "
        "about 0.5 MiB each on real-size layout data; a smaller pool recomputes, for time); "
        "0: unbounded (default: {d[histogram_pool_mb]})",
        {"type": int, "metavar": "MB"},
        setting="histogram_pool_mb",
    ),
    "dask-scheduler": Option(
        ("--dask-scheduler",),
        "use the workers of a running Dask scheduler, e.g. tcp://host:8786",
        {"metavar": "ADDR"},
        setting="dask_scheduler",
    ),
    "train-configs": Option(
        ("--train-configs",),
        "distinct configs kept per train graph, biased toward fast ones; 0: all "
        "(default: {d[train_configs]})",
        {"type": int, "metavar": "N"},
        setting="train_configs",
    ),
    "valid-configs": Option(
        ("--valid-configs",),
        "configs drawn uniformly per valid layout graph (tile valid keeps all); 0: all "
        "(default: {d[valid_configs]})",
        {"type": int, "metavar": "M"},
        setting="valid_configs",
    ),
    "keep-fastest": Option(
        ("--keep-fastest",),
        "fastest configs of a train graph always kept (default: {d[keep_fastest]})",
        {"type": int, "metavar": "K"},
        setting="keep_fastest",
    ),
    "warm-start": Option(
        ("--warm-start",),
        "seed the new campaign with the best configurations of earlier runs (names under "
        "--runs-dir, or folders): the hyperparameters the spaces share, the rest at their "
        "defaults, run first; the first run's best is the baseline, in place of the default "
        "configuration; --per runs seed each subset from the matching subset",
        {"nargs": "+", "metavar": "RUN"},
    ),
    "resume": Option(
        ("--resume",),
        "continue the interrupted run NAME with its saved settings; with a higher "
        "--walltime or --trials (the new totals), extend it, finished or not",
        {"metavar": "NAME"},
    ),
    "overwrite": Option(
        ("--overwrite",),
        "delete an existing run of the same name first",
        {"action": "store_true"},
    ),
    # -- export, evaluate, predict
    "retrain": Option(
        ("--retrain",),
        "train the incumbent again instead of copying the boosters it was scored with",
        {"action": "store_true"},
    ),
    "train-on": Option(
        ("--train-on",),
        "splits to train on; train+valid retrains (default: train; a --cv run always "
        "retrains on train+valid)",
        {"choices": ("train", "train+valid"), "default": "train"},
    ),
    "threads-export": Option(
        ("--threads",),
        "LightGBM threads for --retrain, at most the machine's cores (default: every core)",
        {"type": int, "default": None},
    ),
    "jobs": Option(
        ("--jobs",), "feature extraction processes (default: CPUs, <= 4)", {"type": int}
    ),
    "ensemble": Option(
        ("--ensemble",),
        "one model averaging the K best distinct configurations at the largest budget "
        "(per-graph standardized scores), scored on valid before it is written",
        {"type": int, "metavar": "K"},
    ),
    "ensemble-within": Option(
        ("--ensemble-within",),
        "with --ensemble: members score at most D below the incumbent on valid "
        "(default: 0.01; inf takes the K best whatever their score)",
        {"type": float, "metavar": "D", "default": None},
    ),
    "split-valid": Option(
        ("--split",),
        "split (default: valid)",
        {"choices": ("train", "valid", "test"), "default": "valid"},
    ),
    "split-test": Option(
        ("--split",),
        "split (default: test)",
        {"choices": ("train", "valid", "test"), "default": "test"},
    ),
    "top-k": Option(
        ("--top-k",), "configs per tile graph (default: 5)", {"type": int, "default": 5}
    ),
    # -- data synth, data check
    "scale": Option(
        ("--scale",),
        "tiny: seconds, for tests; small: the demo; full: real statistics scaled down; "
        "real: real per-graph sizes, about 11 GB (default: small)",
        {"choices": ("tiny", "small", "full", "real"), "default": "small"},
    ),
    "seed-synth": Option(
        ("--seed",), "random seed, 0 to 2^32-1 (default: 0)", {"type": parse_seed, "default": 0}
    ),
    "law": Option(
        ("--law",),
        "hidden layout cost law: second-order adds element-type tiles, matrix-unit "
        "layouts, bitcasts and mismatch classes; first-order is padding and copies only; "
        "random draws a member of the second-order family (constants x0.2-x5, effects on or "
        "off) from --law-seed; the law is written to law.json in the root "
        "(default: second-order)",
        {"choices": ("second-order", "first-order", "random"), "default": "second-order"},
    ),
    "law-seed": Option(
        ("--law-seed",),
        "seed of a random law, 0 to 2^32-1 (default: --seed); keep it and change --seed for "
        "unseen graphs of the same law",
        {"type": parse_seed, "default": None},
    ),
    "quick": Option(
        ("--quick",),
        "skip streaming node_config_feat of layout files (headers are still checked)",
        {"action": "store_true"},
    ),
}


def add_options(
    parser: argparse.ArgumentParser | Any, *names: str, context: Mapping[str, Any] | None = None
) -> None:
    """Add the options ``names`` (keys of :data:`OPTIONS`) to ``parser`` (or an argument group).

    ``context`` fills the help texts' fields (:func:`help_context`, built when one asks).
    """
    for name in names:
        option = OPTIONS[name]
        kwargs = dict(option.kwargs)
        if callable(kwargs.get("choices")):
            kwargs["choices"] = kwargs["choices"]()
        text = option.help
        if "{" in text:
            context = context if context is not None else help_context()
            text = text.format(**context)
        parser.add_argument(*option.flags, help=text, **kwargs)
        for alias in option.aliases:
            hidden = {k: v for k, v in kwargs.items() if k not in ("default", "required")}
            parser.add_argument(alias, dest=option.dest, help=argparse.SUPPRESS, **hidden)


def run_settings(names: tuple[str, ...]) -> dict[str, str]:
    """Parsed attribute -> :class:`~hpo.campaign.config.CampaignConfig` field, for the options
    ``names`` that set a campaign setting."""
    return {OPTIONS[n].dest: setting for n in names if (setting := OPTIONS[n].setting) is not None}
