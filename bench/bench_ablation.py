"""Do the second-order features help, and how close to the data's ceiling do they get?

For the layout collections of one dataset: a default-hyperparameter ranker (the defaults of
``spaces/lambdarank_small.json``) trained on train, scored on valid, with
- "first-order": today's features (every second-order group switched off),
- "all": every feature group on,
- with ``--per-group``: every group removed in turn from "all",
next to the noise ceiling per collection: the mean over valid graphs of the Kendall tau
between the generator's noiseless cost (``hpo.synth.layout.noiseless_layout_cost``) and the
measured runtime. Only meaningful on generated data (``hpo data synth --law ...``).

    python bench/bench_ablation.py --data ROOT --law second-order [--rounds 200] [--per-group]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from hpo.data.load import COLLECTIONS, is_layout, list_graphs
from hpo.features import FeatureSpec, build_tables
from hpo.features.groups import GROUP_PREFIX, GROUPS
from hpo.features.layout_second_order import SECOND_ORDER_GROUPS
from hpo.features.table import FeatureTable
from hpo.ranking.spaces import load_space
from hpo.ranking.training import (
    collection_means,
    feature_columns,
    make_ranker,
    score_table,
    select_rows,
)
from hpo.synth.layout import noiseless_layout_cost

LAYOUT = tuple(c for c in COLLECTIONS if is_layout(c))
SECOND_ORDER = tuple(dict.fromkeys(SECOND_ORDER_GROUPS.values()))


def default_hyperparameters() -> dict:
    """The defaults of the small space, as a campaign's first trial would use them."""
    config = load_space("lambdarank_small").get_default_configuration()
    return dict(config)


def fit_and_score(
    train: FeatureTable, valid: FeatureTable, hp: dict, rounds: int, seed: int
) -> tuple[dict[str, float], int]:
    """Valid metric per collection and the number of columns used."""
    columns = feature_columns(train, hp)
    rows = select_rows(train, LAYOUT)
    ranker = make_ranker(hp, num_boost_round=rounds, seed=seed, n_threads=2)
    ranker.fit(train.X[rows][:, columns], train.target[rows], train.group[rows])
    return collection_means(score_table(ranker, valid, columns, LAYOUT), LAYOUT), len(columns)


def noise_ceiling(root: Path, law: str, split: str = "valid") -> dict[str, float]:
    """Mean Kendall tau per collection between the noiseless cost and the measured runtime."""
    out = {}
    for collection in LAYOUT:
        taus = []
        for path in list_graphs(root, collection, split):
            with np.load(path) as npz:
                runtime = npz["config_runtime"]
            taus.append(kendalltau(noiseless_layout_cost(path, law), runtime).statistic)
        out[collection] = float(np.mean(taus))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--law", choices=("second-order", "first-order"), required=True)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--per-group", action="store_true", help="also remove each group")
    args = parser.parse_args()

    t0 = time.perf_counter()
    tables = build_tables(
        args.data, LAYOUT, ("train", "valid"), FeatureSpec(), cache_dir=args.cache_dir, n_jobs=2
    )
    print(f"features built in {time.perf_counter() - t0:.1f} s")
    train, valid = tables[("layout", "train")], tables[("layout", "valid")]
    hp = default_hyperparameters()
    variants = {
        "first-order": {**hp, **{f"{GROUP_PREFIX}{g}": False for g in SECOND_ORDER}},
        "all": hp,
    }
    if args.per_group:
        layout_groups = [g for g in GROUPS if not g.startswith("tile_")]
        variants.update({f"-{g}": {**hp, f"{GROUP_PREFIX}{g}": False} for g in layout_groups})
    results: dict[str, dict[str, float]] = {"ceiling": noise_ceiling(args.data, args.law)}
    widths: dict[str, int] = {}
    for label, params in variants.items():
        results[label], widths[label] = fit_and_score(train, valid, params, args.rounds, args.seed)
    print(f"law {args.law}, {args.rounds} rounds, default hyperparameters, valid split")
    header = f"{'variant':<20}{'cols':>6}" + "".join(f"{c[7:]:>14}" for c in LAYOUT) + "     mean"
    print(header)
    print("-" * len(header))
    for label, means in results.items():
        cols = f"{widths[label]:>6}" if label in widths else " " * 6
        vals = [means.get(c, float("nan")) for c in LAYOUT]
        cells = "".join(f"{v:>14.4f}" for v in vals)
        print(f"{label:<20}{cols}{cells}{np.mean(vals):>9.4f}")
    ceiling = results["ceiling"]
    for label in ("first-order", "all"):
        share = [results[label][c] / ceiling[c] for c in LAYOUT]
        print(f"{label} / ceiling: " + "  ".join(f"{s:.2f}" for s in share))


if __name__ == "__main__":
    main()
