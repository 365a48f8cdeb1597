"""Judge hpo on the blind laws (bench/laws/blind_*): what a user gets on runtimes nobody here wrote.

For every law two roots are generated at ``--scale``: one to tune on (``--data-seed``) and one of
unseen graphs of the same law (data seed + 1000). Scores are on every labeled graph (train and
valid) of the unseen root, per layout collection as a share of the noise ceiling: the mean
Kendall tau (:func:`hpo.ranking.scoring.metrics.kendall_tau`) between the law's noise-free runtime
(``ROOT/noiseless``, written by the law) and the measured one, i.e. what a perfect model of
the law reaches. Tile is its mean top-5 score. The laws are run, never read.

Two modes:

``default``
    The space's default configuration, with ``--set key=value`` overrides, trained on the
    tuning root's train split at ``--rounds`` (the default campaign's largest budget) by the
    one training path every trial takes (:func:`hpo.ranking.training.train_family`), once
    with the prior blend as configured and once with it off (``--blend-off-too``). No
    walltime: the figures do not depend on the machine's load.
``campaign``
    What a user runs: ``hpo run --data TUNING --walltime W`` (every other setting the
    default), ``hpo export``, then the exported model scored on the unseen root. Timed by
    walltime, so run it alone on the machine.

``--train-graphs-too`` also scores the graphs the model was trained on, against the tuning
root's ceiling: a share well above the unseen one is a generalisation gap, a low one a
representation that cannot fit the law even on its own graphs.

``--bag K`` also trains the default at the seeds after ``--seed`` (K in all), scores each alone
(``seed N``) and their mean score (``bag of K``, blended with the first one's prior): how much
of a law's share is the booster's seed, and whether averaging seeds buys any of it back.

``--valid-too`` also trains the default on the train and valid graphs, as ``hpo export
--train-on train+valid`` does (``train+valid``: blended at the shares the train-only model's
trial chose, as that export blends it; ``train+valid, chosen again``: at shares chosen on the
valid graphs it trained on, as the export did before): what the held-out graphs are worth as
training data. In campaign mode it exports the incumbent both ways (``export`` and ``export,
train+valid``).

``--graphs-factor F`` grows the tuning root to ``F`` times the scale's graphs (the unseen root
stays as it is): how the shares grow with the train graphs a user has.

    python bench/bench_blind.py --work /tmp/blind --mode default --blend-off-too --json d.json
    python bench/bench_blind.py --work /tmp/blind --mode campaign --walltime 4m --json c.json
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from hpo.data.load import COLLECTIONS, is_layout, list_graphs
from hpo.features import ExtractOptions, FeatureSpec, FeatureTable, build_tables
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import BLEND_KEY, collection_weights
from hpo.ranking.scoring.metrics import kendall_tau, tile_score
from hpo.ranking.spaces import DEFAULT_SPACE, load_space
from hpo.ranking.training import FamilyFit, collection_means, score_table, train_family

LAWS_DIR = Path(__file__).parent / "laws"
LAYOUT = tuple(c for c in COLLECTIONS if is_layout(c))
LABELED = ("train", "valid")
UNSEEN_OFFSET = 1000
CLI = "import sys; from hpo.cli.main import main; sys.exit(main())"


def blind_laws(selection: str) -> list[str]:
    """The law names (``blind_01`` ...) of ``selection``: ``all`` or a comma list."""
    every = sorted(p.parent.name for p in LAWS_DIR.glob("blind_*/law.py"))
    if selection == "all":
        return every
    wanted = [s.strip() for s in selection.split(",") if s.strip()]
    unknown = [w for w in wanted if w not in every]
    if unknown:
        raise SystemExit(f"unknown law(s) {', '.join(unknown)} (have {', '.join(every)})")
    return wanted


def law_root(work: Path, law: str, seed: int, scale: str, graphs_factor: float = 1.0) -> Path:
    """Generate (once) the root of ``law`` at ``seed``, with ``graphs_factor`` times the
    scale's graphs; a finished root has a ``done`` file."""
    size = scale if graphs_factor == 1.0 else f"{scale}x{graphs_factor:g}"
    root = work / "data" / f"{law}-{size}-{seed}"
    if not (root / "done").is_file():
        t0 = time.perf_counter()
        script = LAWS_DIR / law / "law.py"
        cmd = [sys.executable, str(script), "--out", str(root), "--seed", str(seed)]
        cmd += ["--scale", scale, "--graphs-factor", f"{graphs_factor:g}"]
        subprocess.run(cmd, check=True, capture_output=True)
        (root / "done").write_text("")
        print(f"  generated {root} in {time.perf_counter() - t0:.0f} s", flush=True)
    return root


def noise_ceiling(root: Path) -> dict[str, float]:
    """What ranking by the law's noise-free runtime scores against the measured one.

    Per layout collection the mean Kendall tau; for tile the mean top-5 score (a perfect model
    of the law can lose the measured best config to the noise there too).
    """
    out: dict[str, float] = {}
    for collection in COLLECTIONS:
        metric = kendall_tau if is_layout(collection) else tile_score
        values = []
        for split in LABELED:
            for path in list_graphs(root, collection, split):
                noiseless = np.load(root / "noiseless" / path.relative_to(root).with_suffix(".npy"))
                with np.load(path) as npz:
                    measured = npz["config_runtime"].astype(np.float64)
                    if not is_layout(collection):  # tile is scored on the normalized runtime
                        measured = measured / npz["config_runtime_normalizers"]
                    values.append(metric(noiseless, measured))
        out[collection] = float(np.mean(values))
    return out


def parse_sets(items: list[str]) -> dict[str, Any]:
    """``key=value`` overrides; values are read as JSON when they parse, else as text."""
    out: dict[str, Any] = {}
    for item in items:
        key, _, text = item.partition("=")
        try:
            out[key] = json.loads(text)
        except json.JSONDecodeError:
            out[key] = text
    return out


def as_set_weights(
    fit: FamilyFit, hp: dict[str, Any], collections: Sequence[str]
) -> dict[str, float] | float:
    """The blend weights a model of configuration ``hp`` scores ``collections`` with (what
    "as set" means): its weights times the shares its trial kept (the prior's ``off`` and
    ``doubt``, ``estimate_blend_select``); 0 where it does not blend."""
    on = collection_weights(hp, collections) if hp.get(BLEND_KEY) else {}
    return (on if fit.prior is None else fit.prior.blend_weights(on)) or 0.0


def model_means(
    fit: FamilyFit, tables: list[FeatureTable], collections: tuple[str, ...], weight: Any
) -> dict[str, float]:
    """The mean metric per collection of ``fit``'s model over the labeled graphs of ``tables``,
    blended with its prior at ``weight``."""
    scores = []
    for table in tables:
        scores += score_table(
            fit.ranker, table, fit.columns, collections, weight=weight, prior=fit.prior
        )
    return collection_means(scores, collections)


def ceiling_shares(means: dict[str, float], ceiling: dict[str, float]) -> dict[str, float]:
    """Layout means as shares of their collection's noise ceiling; tile's score as it is."""
    return {c: v / ceiling[c] if is_layout(c) else v for c, v in means.items()}


class MeanRanker:
    """The mean of several rankers' scores (a bag of boosters at other seeds)."""

    def __init__(self, rankers: list[Any]) -> None:
        self.rankers = rankers

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.mean([r.predict(X) for r in self.rankers], axis=0)


def as_set_shares(
    model: FamilyFit,
    hp: dict[str, Any],
    collections: tuple[str, ...],
    unseen: list[FeatureTable],
    ceiling: dict[str, float],
) -> dict[str, float]:
    """Shares of the ceiling of ``model`` on the ``unseen`` tables, blended as set."""
    means = model_means(model, unseen, collections, as_set_weights(model, hp, collections))
    return ceiling_shares(means, ceiling)


#: A model's shares of the ceiling on the unseen graphs (:func:`as_set_shares`, its data bound).
Judge = Callable[[FamilyFit], dict[str, float]]


def bag_shares(
    fit: FamilyFit, train_at: Callable[..., FamilyFit], judge: Judge, args: argparse.Namespace
) -> dict[str, dict[str, float]]:
    """``{label: shares}`` of ``--bag``: each other seed's model alone (``train_at(seed=...)``
    trains it as ``fit`` was), and the mean of all (blended with ``fit``'s prior)."""
    fits, out = [fit], {}
    for seed in range(args.seed + 1, args.seed + args.bag):
        fits.append(train_at(seed=seed))
        out[f"seed {seed}"] = judge(fits[-1])
    bag = dataclasses.replace(fit, ranker=cast(Any, MeanRanker([f.ranker for f in fits])))
    out[f"bag of {args.bag}"] = judge(bag)
    return out


def valid_too_shares(
    fit: FamilyFit,
    train_at: Callable[..., FamilyFit],
    judge: Judge,
    valid: FeatureTable,
    args: argparse.Namespace,
) -> dict[str, dict[str, float]]:
    """``{label: shares}`` of ``--valid-too``: the model trained on the train and valid graphs
    as ``hpo export --train-on train+valid`` trains it, blended at the shares ``fit``'s trial
    chose (``FitOptions.blend_shares``, :meth:`LearnedPrior.with_shares`), and at the shares
    chosen on the valid graphs it trained on. The booster and the prior's weights do not depend
    on the shares, so one training serves both."""
    both = train_at(seed=args.seed, options=FitOptions(n_threads=args.threads, extra=[valid]))
    kept = both
    if both.prior is not None and fit.prior is not None:
        kept = dataclasses.replace(both, prior=both.prior.with_shares(fit.prior.chosen_shares()))
    return {"train+valid": judge(kept), "train+valid, chosen again": judge(both)}


def judge_default(tuning: Path, unseen: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Shares of the ceiling (and the tile score) of the default configuration with overrides."""
    hp = {**dict(load_space(args.space).get_default_configuration()), **parse_sets(args.set)}
    build = dict(spec=FeatureSpec(), extract=ExtractOptions(cache_dir=args.work / "cache"))
    families = {"layout": LAYOUT, "tile": ("tile:xla",)}
    families = {f: c for f, c in families.items() if args.family in (f, "both")}
    ceiling = noise_ceiling(unseen)
    tuning_ceiling = noise_ceiling(tuning) if args.train_graphs_too else ceiling
    out: dict[str, Any] = {"ceiling": ceiling, "shares": {}, "seconds": {}}
    groups = list(families.items())
    if args.per_collection:  # one model per collection, as `hpo run --per collection` trains
        groups = [(f, (c,)) for f, cs in families.items() for c in cs]
    built: dict[str, tuple[Any, Any]] = {}
    for family, collections in groups:
        if family not in built:
            built[family] = (
                build_tables(tuning, families[family], LABELED, **build),
                build_tables(unseen, families[family], LABELED, merge_duplicates_in=(), **build),
            )
        tables, other = built[family]
        train_at = functools.partial(
            train_family,
            tables[(family, "train")],
            tables[(family, "valid")],
            collections,
            hp,
            rounds=args.rounds,
            options=FitOptions(n_threads=args.threads),
        )
        unseen_tables = [other[(family, split)] for split in LABELED]
        t0 = time.perf_counter()
        fit = train_at(seed=args.seed)
        seconds = out["seconds"].get(family, 0.0)
        out["seconds"][family] = seconds + time.perf_counter() - t0
        judge = functools.partial(as_set_shares, hp=hp, collections=collections,
                                  unseen=unseen_tables, ceiling=ceiling)  # fmt: skip
        more = bag_shares(fit, train_at, judge, args) if args.bag > 1 else {}
        if args.valid_too:  # what `hpo export --train-on train+valid` trains
            more |= valid_too_shares(fit, train_at, judge, tables[(family, "valid")], args)
        for label, shares in more.items():
            out["shares"].setdefault(label, {}).update(shares)
        settings: dict[str, Any] = {"as set": as_set_weights(fit, hp, collections)}
        if family == "layout" and args.blend_off_too and hp.get(BLEND_KEY):
            settings["blend on"] = collection_weights(hp, collections)
            settings["blend off"] = 0.0
        valid: dict[str, dict[str, float]] = {}
        for label, weight in settings.items():
            means = model_means(fit, unseen_tables, collections, weight)
            out["shares"].setdefault(label, {}).update(ceiling_shares(means, ceiling))
            if args.train_graphs_too:  # the graphs it was trained on: fit, not generalisation
                fitted = model_means(fit, [tables[(family, "train")]], collections, weight)
                own = out["shares"].setdefault(f"{label}, train graphs", {})
                own.update(ceiling_shares(fitted, tuning_ceiling))
            valid[label] = model_means(fit, [tables[(family, "valid")]], collections, weight)
        if len(settings) > 1:  # per collection, the better of on and off on valid
            chosen = out["shares"].setdefault("valid-chosen", {})
            for c in collections:
                best = max(("blend on", "blend off"), key=lambda label: valid[label][c])
                chosen[c] = out["shares"][best][c]
    return out


def run_name(tuning: Path, seed: int, walltime: str) -> str:
    """The campaign's run (and model) folder name: its tuning root's (which names the law,
    the scale, the graphs factor and the data seed), the booster seed and the walltime. A
    finished run of that name is scored again, not run again, so a name that left one of them
    out scored another campaign (``--graphs-factor 3`` scored the 1x root's)."""
    return f"{tuning.name}-s{seed}-w{walltime}"


def judge_campaign(tuning: Path, unseen: Path, args: argparse.Namespace) -> dict:
    """The default campaign a user runs, exported and scored on the unseen graphs; one that
    ends with no incumbent (no trial finished within the walltime) gives ``no_model``, the
    last failed trial's reason, and no shares."""
    from hpo.api import evaluate_model, export_model, load_model, load_run

    name = run_name(tuning, args.seed, args.walltime)
    runs, models, cache = args.work / "runs", args.work / "models", args.work / "cache"
    folder = runs / name
    if not (folder / "result.json").is_file():
        cmd = ["run", "--data", str(tuning), "--runs-dir", str(runs), "--name", name,
               "--walltime", args.walltime, "--seed", str(args.seed), "--cache-dir", str(cache),
               "--quiet", *(["--overwrite"] if folder.exists() else [])]  # fmt: skip
        done = subprocess.run([sys.executable, "-c", CLI, *cmd], capture_output=True, text=True)
        # 1 with a result: the campaign ran and no trial succeeded; else hpo failed
        if done.returncode != 0 and not (
            done.returncode == 1 and (folder / "result.json").is_file()
        ):
            raise SystemExit(f"hpo run failed on {tuning}: {done.stderr.strip()[-2000:]}")
    run = load_run(folder)
    if run.incumbent is None:  # nothing to export: what a user of this walltime gets
        why = [t.error_line for t in run.trials if not t.ok][-1:] or ["no trial"]
        return {"shares": {}, "trials": len(run.trials), "no_model": why[0]}
    ceiling = noise_ceiling(unseen)

    def exported(folder: Path, **how: Any) -> dict[str, float]:
        export_model(run, folder, **how)
        model, rows = load_model(folder), []
        for split in LABELED:
            rows += evaluate_model(model, unseen, split, cache_dir=cache)["graphs"]
        return ceiling_shares(
            {c: float(np.mean([r["metric"] for r in rows if r["collection"] == c]))
             for c in COLLECTIONS},
            ceiling,
        )  # fmt: skip

    shares = {"export": exported(models / name)}
    if args.valid_too:  # the incumbent trained again on the valid graphs too, as for a submission
        shares["export, train+valid"] = exported(models / f"{name}-tv", train_on="train+valid")
    base, inc = run.baseline, run.incumbent
    return {
        "ceiling": ceiling,
        "shares": shares,
        "trials": len(run.trials),
        "valid_gain": None if base is None or inc is None else inc.score - base.score,
        "incumbent": None if inc is None else inc.config,
    }


def summary(results: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown table per setting: each law's shares, then the median and the worst."""
    lines: list[str] = []
    settings = sorted({s for r in results.values() for s in r["shares"]})
    for setting in settings:
        lines += [f"### {setting}", "", "| law | " + " | ".join(COLLECTIONS) + " |",
                  "|---|" + "---:|" * len(COLLECTIONS)]  # fmt: skip
        table = {law: r["shares"][setting] for law, r in results.items() if setting in r["shares"]}
        for law, shares in table.items():
            cells = [f"{shares[c]:.3f}" if c in shares else "-" for c in COLLECTIONS]
            lines.append(f"| {law} | " + " | ".join(cells) + " |")
        for label, how in (("median", np.median), ("worst", np.min)):
            cells = []
            for c in COLLECTIONS:
                vals = [s[c] for s in table.values() if c in s]
                cells.append(f"{how(vals):.3f}" if vals else "-")
            lines.append(f"| **{label}** | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [f"no model: {law} ({r['no_model']})" for law, r in results.items() if "no_model" in r]
    return lines


@dataclasses.dataclass(frozen=True)
class LayoutStudy:
    """A law's two roots at the small scale, the default configuration, and the layout
    tables of both (what ``bench_node_sum.py`` and ``bench_prior_column.py`` start from)."""

    tuning: Path
    unseen: Path
    hp: dict[str, Any]
    tables: dict[tuple[str, str], FeatureTable]
    other: dict[tuple[str, str], FeatureTable]

    @classmethod
    def of(cls, law: str, args: argparse.Namespace) -> LayoutStudy:
        """Generate (once) and featurize ``law``'s roots of ``args.data_seed`` (tuning) and
        ``UNSEEN_OFFSET`` after it (unseen)."""
        tuning = law_root(args.work, law, args.data_seed, "small")
        unseen = law_root(args.work, law, args.data_seed + UNSEEN_OFFSET, "small")
        hp = dict(load_space(args.space).get_default_configuration())
        build = dict(spec=FeatureSpec(), extract=ExtractOptions(cache_dir=args.work / "cache"))
        tables = build_tables(tuning, LAYOUT, LABELED, **build)
        other = build_tables(unseen, LAYOUT, LABELED, merge_duplicates_in=(), **build)
        return cls(tuning, unseen, hp, tables, other)


def study_parser(description: str) -> argparse.ArgumentParser:
    """The options of every study of the blind laws (this script, ``bench_node_sum.py``,
    ``bench_prior_column.py``): where the roots are, which laws, seeds, space, rounds, threads
    and the JSON record; each study adds its own."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--work", type=Path, required=True, help="roots, cache, runs")
    ap.add_argument("--laws", default="all", help="blind laws: all, or a comma list")
    ap.add_argument("--data-seed", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0, help="training / campaign seed")
    ap.add_argument("--space", default=DEFAULT_SPACE)
    ap.add_argument("--rounds", type=int, default=672, help="the default's rounds")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", type=Path)
    return ap


def run_study(
    args: argparse.Namespace, judge: Callable[[str, argparse.Namespace], dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """``{law: judge(law, args)}`` over ``args.laws``, the JSON record (``args.json``) written
    after each law, so a long study stopped midway keeps the laws it finished."""
    results: dict[str, dict[str, Any]] = {}
    for law in blind_laws(args.laws):
        print(law, flush=True)
        results[law] = judge(law, args)
        if args.json:
            record = {k: str(v) for k, v in vars(args).items()}
            args.json.write_text(json.dumps({"args": record, "results": results}, indent=1))
    return results


def cells_moved(gains: Sequence[float]) -> str:
    """``better on B, worse on W of N cells (lo to hi)``: how a variant moved the cells of a
    study against its baseline (a move within 0.001 counts as neither)."""
    better, worse = sum(g > 0.001 for g in gains), sum(g < -0.001 for g in gains)
    return (f"better on {better}, worse on {worse} of {len(gains)} cells "
            f"({min(gains):+.3f} to {max(gains):+.3f})")  # fmt: skip


def show_shares(shares: dict[str, dict[str, float]]) -> None:
    """Print a law's shares, one line per setting (``as set``, ``export`` ...)."""
    for setting, values in shares.items():
        shown = " ".join(f"{c.split(':', 1)[-1]}={v:.3f}" for c, v in values.items())
        print(f"  {setting}: {shown}", flush=True)


def judge_law(law: str, args: argparse.Namespace) -> dict[str, Any]:
    """``--mode``'s judgement of ``law`` on its tuning and unseen roots, printed as it ends."""
    tuning = law_root(args.work, law, args.data_seed, args.scale, args.graphs_factor)
    unseen = law_root(args.work, law, args.data_seed + UNSEEN_OFFSET, args.scale)
    judge = judge_default if args.mode == "default" else judge_campaign
    result = judge(tuning, unseen, args)
    if "no_model" in result:
        print(f"  no model: {result['no_model']}", flush=True)
    show_shares(result["shares"])
    return result


def main() -> None:
    parser = study_parser(__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("default", "campaign"), default="default")
    parser.add_argument("--scale", default="small")
    parser.add_argument(
        "--graphs-factor", type=float, default=1.0,
        help="times the scale's graphs in the tuning root (the unseen root keeps the scale's)",
    )  # fmt: skip
    parser.add_argument("--set", action="append", default=[], help="key=value override")
    parser.add_argument("--blend-off-too", action="store_true")
    parser.add_argument(
        "--train-graphs-too", action="store_true",
        help="also score the tuning root's train graphs (fit; against that root's ceiling)",
    )  # fmt: skip
    parser.add_argument(
        "--family", choices=("both", "layout", "tile"), default="both", help="default mode only"
    )
    parser.add_argument(
        "--per-collection", action="store_true",
        help="default mode: train a model per collection instead of one per family",
    )  # fmt: skip
    parser.add_argument(
        "--bag", type=int, default=1,
        help="default mode: also train K-1 more seeds, score each and their mean",
    )  # fmt: skip
    parser.add_argument(
        "--valid-too", action="store_true",
        help="also train on train and valid, as hpo export --train-on train+valid (default mode: "
        "the default configuration; campaign mode: the incumbent, exported both ways)",
    )  # fmt: skip
    parser.add_argument("--walltime", default="4m")
    results = run_study(parser.parse_args(), judge_law)
    print("\n".join(summary(results)))


if __name__ == "__main__":
    main()
