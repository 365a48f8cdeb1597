"""Which feature groups earn their place, and how close to the data's ceiling do they get?

For the layout collections of one dataset (``--data``), a ranker trained on its train split
at fixed hyperparameters, scored per collection on
- ``valid``: the dataset's own valid split (what a campaign selects on), and
- ``unseen``: every labeled graph (train and valid, every config) of a second dataset made
  with another seed (``--unseen``), graphs no variant trained or was selected on,
with the variants
- ``naive``: the baseline rows of ``bench_features.py`` (the mean over configurable nodes of
  ``node_config_feat`` plus the collection one-hot),
- ``first-order``: today's features before issue 12 (every second-order group switched off),
- ``all``: every feature group on,
- with ``--per-group``: ``-<group>`` for every layout group removed in turn from ``all``,
next to the noise ceiling per collection: the mean over the same graphs of the Kendall tau
between the generator's noiseless cost (``hpo.synth.layout.noiseless_layout_cost``) and the
measured runtime. Only meaningful on generated data (``hpo data synth --law ...``).

Hyperparameters: the defaults of ``spaces/lambdarank_small.json`` at ``--rounds``, or with
``--hp-from RUN`` the incumbent of a finished campaign at its budget (the groups it switched
off stay off in ``all``; ``first-order`` and ``-<group>`` switch more off). ``--model DIR``
also scores an exported model (``hpo export``) on the unseen graphs: the issue-12 target is
0.9 of the ceiling there on every layout collection.

``--extraction`` measures the cost of the second-order groups in the same run: rows/s of
extracting the train split (no cache, one process) with the extractors as they are,
and with the second-order extractor replaced by zeros of the same shape (today's first-order
work only), plus the table width per group. The second-order groups share one pass over the
gathered operands, so their cost is given together, not per group.

``--set KEY=VALUE`` overrides one hyperparameter (repeatable), and ``--truncation 30,256``
adds an ``all`` variant per ``lambdarank_truncation_level``, timed like the others (fit plus
scoring), to weigh what a level buys against what it costs.

    python bench/bench_ablation.py --data ROOT --unseen ROOT2 --law second-order --per-group \
        [--naive] [--hp-from RUN_DIR | --rounds 200] [--model MODEL_DIR] [--extraction] \
        [--set lambdarank_truncation_level=30] [--truncation 30,256,1024] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau

from hpo.data.load import COLLECTIONS, is_layout, list_graphs
from hpo.deploy import load_model
from hpo.features import ExtractOptions, FeatureSpec, build_tables, is_prior_only
from hpo.features.groups import GROUP_PREFIX, GROUPS, group_of
from hpo.features.layout import extract as layout_features
from hpo.features.layout.second_order import SECOND_ORDER_GROUPS, second_order_names
from hpo.features.table.feature_table import FeatureTable
from hpo.ranking.prior.blend import collection_weights
from hpo.ranking.scoring.metrics import kendall_tau
from hpo.ranking.spaces import load_space
from hpo.ranking.training import (
    GraphScore,
    collection_means,
    feature_columns,
    fit_family_prior,
    make_ranker,
    score_table,
    select_rows,
)
from hpo.runs import load_run
from hpo.synth.law_family import LawConstants
from hpo.synth.layout import noiseless_layout_cost

sys.path.insert(0, str(Path(__file__).parent))
from bench_features import naive_table  # noqa: E402
from bench_per_subset import score_unseen  # noqa: E402

LAYOUT = tuple(c for c in COLLECTIONS if is_layout(c))
SECOND_ORDER = tuple(dict.fromkeys(SECOND_ORDER_GROUPS.values()))
LAYOUT_GROUPS = tuple(g for g in GROUPS if not g.startswith("tile_"))
LABELED = ("train", "valid")


def default_hyperparameters() -> tuple[dict[str, Any], int | None]:
    """The defaults of the small space, as a campaign's first trial would use them."""
    return dict(load_space("lambdarank_small").get_default_configuration()), None


def incumbent_hyperparameters(run_dir: Path) -> tuple[dict[str, Any], int]:
    """The incumbent's hyperparameters and its budget (boosting rounds) of a finished run."""
    run = load_run(run_dir)
    inc = run.incumbent
    if inc is None or inc.budget is None:
        raise SystemExit(f"{run_dir}: no incumbent with a budget")
    if run.fidelity != "rounds":
        raise SystemExit(f"{run_dir}: fidelity {run.fidelity}, this bench needs rounds")
    return dict(inc.config), int(round(inc.budget))


def parse_overrides(items: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as hyperparameters; VALUE is JSON (``256``, ``true``) or a string."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--set {item!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


class Variant:
    """Rows and columns of one variant: a table family, and the hyperparameters to train with."""

    def __init__(self, train: FeatureTable, scored: dict[str, FeatureTable], hp: dict) -> None:
        self.train, self.scored, self.hp = train, scored, hp


def fit_and_score(
    variant: Variant, rounds: int, seed: int, threads: int
) -> tuple[dict[str, dict[str, float]], int]:
    """Metric per collection on each scored part, and the number of columns used."""
    train = variant.train
    live = feature_columns(train, variant.hp)  # the prior reads these ...
    columns = live[[not is_prior_only(train.feature_names[j]) for j in live]]  # ... trees these
    rows = select_rows(train, LAYOUT)
    ranker = make_ranker(variant.hp, LAYOUT, num_boost_round=rounds, seed=seed, n_threads=threads)
    ranker.fit(train.X[rows][:, columns], train.target[rows], train.group[rows])
    weight = collection_weights(variant.hp, LAYOUT)  # each collection's, as a trial scores
    blended = max(weight.values()) > 0
    prior = fit_family_prior([(train, rows)], live) if blended else None  # as training
    out = {}
    for part, tables in variant.scored.items():
        scores: list[GraphScore] = []
        for table in tables:
            scores += score_table(ranker, table, columns, LAYOUT, weight=weight, prior=prior)
        out[part] = collection_means(scores, LAYOUT)
    return out, len(columns)


def noise_ceiling(root: Path, law: str | LawConstants, splits: Sequence[str]) -> dict[str, float]:
    """Mean Kendall tau per collection between the noiseless cost and the measured runtime.

    ``law`` is the root's (``hpo.synth.layout_law.read_law`` reads a generated root's).

    The tau is the project's metric (:func:`hpo.ranking.scoring.metrics.kendall_tau`): the order a
    submission would write from the noiseless cost, configs of equal cost in a random order.
    That is the best a ranker's order reaches in expectation: among configs the law prices
    alike the runtimes differ by noise alone.
    """
    return noise_ceilings(root, law, splits)[0]


def noise_ceilings(
    root: Path, law: str | LawConstants, splits: Sequence[str]
) -> tuple[dict[str, float], dict[str, float]]:
    """:func:`noise_ceiling`, and the ceiling before: the tau-b of the cost itself, from one
    pass over the files (the noiseless cost is the costly part).

    The tau-b leaves pairs of equal cost out of its count, so only a prediction tied exactly
    where the law's cost is could reach it; many configs of the default collections change
    nothing the law prices.
    """
    order: dict[str, float] = {}
    tau_b: dict[str, float] = {}
    for collection in LAYOUT:
        taus, taus_b = [], []
        for split in splits:
            for path in list_graphs(root, collection, split):
                with np.load(path) as npz:
                    runtime = npz["config_runtime"]
                cost = noiseless_layout_cost(path, law)
                taus.append(kendall_tau(cost, runtime))
                taus_b.append(kendalltau(cost, runtime).statistic)
        order[collection] = float(np.mean(taus))
        tau_b[collection] = float(np.mean(taus_b))
    return order, tau_b


def extraction_cost(root: Path) -> dict[str, Any]:
    """Rows/s of extracting the train split with and without the second-order extractor.

    One process (``n_jobs=1``), so the replaced extractor is the one that runs; "all" is
    measured before and after "first-order" so drift of the machine shows.
    """
    real = layout_features.second_order_chunk
    n_names = len(second_order_names())

    def zeros(out: Any, *_: Any) -> np.ndarray:
        return np.zeros((out.minor.shape[0], n_names), dtype=np.float32)

    out: dict[str, Any] = {}
    try:
        for label in ("all", "first-order", "all (repeat)"):
            layout_features.second_order_chunk = zeros if label == "first-order" else real
            t0 = time.perf_counter()
            tables = build_tables(
                root, LAYOUT, ("train",), FeatureSpec(), extract=ExtractOptions(n_jobs=1)
            )
            seconds = time.perf_counter() - t0
            rows = len(tables[("layout", "train")].target)
            out[label] = {"seconds": seconds, "rows": rows, "rows_per_s": rows / seconds}
    finally:
        layout_features.second_order_chunk = real
    return out


def widths_per_group(table: FeatureTable) -> dict[str, int]:
    """Columns of the full table per group (relative columns counted with their base's)."""
    counts: dict[str, int] = {}
    for name in table.feature_names:
        group = group_of(name) or "(ungrouped)"
        counts[group] = counts.get(group, 0) + 1
    return counts


def print_table(title: str, results: dict[str, dict[str, float]], widths: dict[str, int]) -> None:
    """One line per variant: columns, metric per collection, mean, and share of the ceiling."""
    print(f"\n{title}")
    header = f"{'variant':<24}{'cols':>6}" + "".join(f"{c[7:]:>14}" for c in LAYOUT) + "     mean"
    print(header)
    print("-" * len(header))
    ceiling = results.get("ceiling", {})
    for label, means in results.items():
        cols = f"{widths[label]:>6}" if label in widths else " " * 6
        vals = [means.get(c, float("nan")) for c in LAYOUT]
        cells = "".join(f"{v:>14.4f}" for v in vals)
        print(f"{label:<24}{cols}{cells}{np.mean(vals):>9.4f}")
    for label in results:
        if label != "ceiling" and ceiling and not label.startswith("-"):
            share = [results[label][c] / ceiling[c] for c in LAYOUT]
            print(f"{label} / ceiling: " + "  ".join(f"{s:.2f}" for s in share))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--unseen", type=Path, default=None, help="a second dataset (other seed)")
    parser.add_argument("--law", choices=("second-order", "first-order"), required=True)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--hp-from", type=Path, default=None, help="a finished run folder")
    parser.add_argument("--model", type=Path, default=None, help="an exported model folder")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2, help="extraction processes")
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--per-group", action="store_true", help="also remove each group")
    parser.add_argument("--naive", action="store_true", help="also the naive baseline rows")
    parser.add_argument("--extraction", action="store_true", help="measure extraction cost")
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one hyperparameter (repeatable; VALUE is read as JSON)",
    )
    parser.add_argument(
        "--truncation",
        default="",
        help="comma list: also train all features at each lambdarank_truncation_level",
    )
    args = parser.parse_args()

    t0 = time.perf_counter()
    build = dict(
        spec=FeatureSpec(), extract=ExtractOptions(cache_dir=args.cache_dir, n_jobs=args.jobs)
    )
    tables = build_tables(args.data, LAYOUT, LABELED, **build)
    train, valid = tables[("layout", "train")], tables[("layout", "valid")]
    scored: dict[str, list[FeatureTable]] = {"valid": [valid]}
    if args.unseen is not None:  # every config of every labeled graph, none merged
        other = build_tables(args.unseen, LAYOUT, LABELED, merge_duplicates_in=(), **build)
        scored["unseen"] = [other[("layout", s)] for s in LABELED]
    print(f"features built in {time.perf_counter() - t0:.1f} s")

    hp, budget = (
        incumbent_hyperparameters(args.hp_from) if args.hp_from else default_hyperparameters()
    )
    hp.update(parse_overrides(args.set))
    rounds = budget if budget is not None else args.rounds
    off = {f"{GROUP_PREFIX}{g}": False for g in SECOND_ORDER}
    variants = {
        "first-order": Variant(train, scored, {**hp, **off}),
        "all": Variant(train, scored, hp),
    }
    for level in [int(t) for t in args.truncation.split(",") if t]:
        variants[f"all, truncation {level}"] = Variant(
            train, scored, {**hp, "lambdarank_truncation_level": level}
        )
    if args.per_group:
        for g in LAYOUT_GROUPS:
            if hp.get(f"{GROUP_PREFIX}{g}", True) is not False:
                variants[f"-{g}"] = Variant(train, scored, {**hp, f"{GROUP_PREFIX}{g}": False})
    if args.naive:
        naive_scored = {"valid": [naive_table(args.data, "valid", "layout")]}
        if args.unseen is not None:
            naive_scored["unseen"] = [naive_table(args.unseen, s, "layout") for s in LABELED]
        naive_hp = {k: v for k, v in hp.items() if not k.startswith(GROUP_PREFIX)}
        naive_hp["relative_features"] = False
        variants = {
            "naive": Variant(naive_table(args.data, "train", "layout"), naive_scored, naive_hp),
            **variants,
        }

    results: dict[str, dict[str, dict[str, float]]] = {part: {} for part in scored}
    results["valid"]["ceiling"] = noise_ceiling(args.data, args.law, ("valid",))
    if args.unseen is not None:
        results["unseen"]["ceiling"] = noise_ceiling(args.unseen, args.law, LABELED)
    widths: dict[str, int] = {}
    for label, variant in variants.items():
        t1 = time.perf_counter()
        per_part, widths[label] = fit_and_score(variant, rounds, args.seed, args.threads)
        for part, means in per_part.items():
            results[part][label] = means
        print(f"  {label}: {time.perf_counter() - t1:.1f} s", flush=True)
    if args.model is not None and args.unseen is not None:
        results["unseen"]["exported model"] = score_unseen(
            load_model(args.model),
            args.unseen,
            LABELED,
            collections=LAYOUT,
            cache_dir=args.cache_dir,
        )

    source = f"incumbent of {args.hp_from}" if args.hp_from else "defaults of lambdarank_small"
    if args.set:
        source += f", with {', '.join(args.set)}"
    print(f"\nlaw {args.law}; hyperparameters: {source}; {rounds} rounds; seed {args.seed}")
    for part in results:
        print_table(
            f"{part} ({'unseen train+valid graphs' if part == 'unseen' else 'valid split'})",
            results[part],
            widths,
        )
    record: dict[str, Any] = {
        "data": str(args.data),
        "unseen": str(args.unseen) if args.unseen else None,
        "law": args.law,
        "hyperparameters": hp,
        "hp_source": source,
        "rounds": rounds,
        "results": results,
        "columns": widths,
        "columns_per_group": widths_per_group(train),
    }
    print("\ncolumns per group (full table):", record["columns_per_group"])
    if args.extraction:
        cost = extraction_cost(args.data)
        record["extraction"] = cost
        print("\nextraction of the train split, no cache:")
        for label, c in cost.items():
            rate = f"{c['rows']:>9} rows {c['seconds']:>8.1f} s {c['rows_per_s']:>10.0f} rows/s"
            print(f"  {label:<14}{rate}")
        ratio = cost["first-order"]["rows_per_s"] / np.mean(
            [cost["all"]["rows_per_s"], cost["all (repeat)"]["rows_per_s"]]
        )
        print(f"  first-order rows/s over all rows/s: {ratio:.2f}x")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=1, default=float))


if __name__ == "__main__":
    main()
