"""Weighs the learned prior as a tree column, cross-fitted by graph, on the blind laws.

The prior (:mod:`hpo.ranking.prior.fit`, a ridge on the byte totals) enters today's model
only as a blend after the trees, switched per collection by its gain on valid. This study
gives it to the trees as one more column instead, where a split can use it in one region of
the configs and ignore it in another. A prior fitted on a graph's own rows would read that
graph's runtimes, so the trees would trust it more than it deserves on a graph it never saw;
each train row's column therefore comes from a prior fitted on the other folds' graphs
(``--folds`` folds, by graph, per collection: cross-fitting), and the valid and unseen rows'
from the prior fitted on every train row, as a model would score at prediction. The column is
the estimate standardized within its graph (``xp_prior_z``); with ``--only-random`` it is
missing (NaN) on the default collections' graphs, whose labels are mostly noise.

For every law: the default configuration (672 rounds, the one training path, the blend as
set), trained on the tuning root's train split without and with the column, in the same run,
each scored on the unseen root's labeled graphs as a share of the noise ceiling
(as ``bench_blind.py --mode default``).

    python bench/bench_prior_column.py --work /tmp/blind --laws blind_01,...,blind_07 --json p.json
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
from typing import Any

import numpy as np
from bench_blind import (
    LABELED,
    LAYOUT,
    LayoutStudy,
    as_set_shares,
    cells_moved,
    noise_ceiling,
    run_study,
    show_shares,
    study_parser,
)

from hpo.features import FeatureTable
from hpo.ranking.chunks import graph_bounds
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import is_default_collection
from hpo.ranking.prior.fit import LearnedPrior, fit_family_prior
from hpo.ranking.training import feature_columns, select_rows, train_family

COLUMN = "xp_prior_z"


def estimate(prior: LearnedPrior, table: FeatureTable, graphs: np.ndarray) -> np.ndarray:
    """The prior's estimate of every row of the graphs flagged in ``graphs`` (0 elsewhere),
    each graph by its collection's weights."""
    X = np.asarray(table.X)
    out = np.zeros(X.shape[0])
    positions = prior.positions_in(table.feature_names, "bench_prior_column")
    bounds = graph_bounds(table.group)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        g = int(table.group[a])
        if graphs[g]:
            own = prior.for_collection(table.graphs[g].collection)
            out[a:b] = own.estimate(X[a:b], np.array([0, b - a]), positions)
    return out


def cross_fitted(
    train: FeatureTable, rows: np.ndarray, live: np.ndarray, folds: int, seed: int = 0
) -> np.ndarray:
    """Each train row's estimate by a prior fitted on the graphs of the other folds; folds are
    drawn per collection (from ``seed``), so every fold holds graphs of every collection."""
    fold = np.zeros(len(train.graphs), dtype=np.int64)
    rng = np.random.default_rng(seed)
    for c in sorted({g.collection for g in train.graphs}):
        members = np.flatnonzero([g.collection == c for g in train.graphs])
        fold[rng.permutation(members)] = np.arange(members.size) % folds
    out = np.zeros(train.n_rows)
    for k in range(folds):
        held = fold == k
        prior = fit_family_prior([(train, rows[~held[train.group[rows]]])], live)
        if prior is not None:
            out += estimate(prior, train, held)
    return out


def with_column(table: FeatureTable, values: np.ndarray, only_random: bool) -> FeatureTable:
    """``table`` with the estimate standardized within each graph appended as a column."""
    z = np.zeros(values.size)
    bounds = graph_bounds(table.group)
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        spread = values[a:b].std()
        z[a:b] = (values[a:b] - values[a:b].mean()) / spread if spread > 0 else 0.0
    if only_random:
        default = np.array([is_default_collection(g.collection) for g in table.graphs])
        z[default[table.group]] = np.nan
    X = np.hstack([np.asarray(table.X), z[:, None].astype(np.float32)])
    return dataclasses.replace(table, X=X, feature_names=(*table.feature_names, COLUMN))


def judge(law: str, args: argparse.Namespace) -> dict[str, Any]:
    """Shares of the ceiling without and with the column, on the unseen graphs of ``law``."""
    study = LayoutStudy.of(law, args)
    hp, tables, other = study.hp, study.tables, study.other
    train, valid = tables[("layout", "train")], tables[("layout", "valid")]
    unseen_tables = [other[("layout", split)] for split in LABELED]
    ceiling = noise_ceiling(study.unseen)
    options = FitOptions(n_threads=args.threads)

    judge = functools.partial(as_set_shares, hp=hp, collections=LAYOUT, ceiling=ceiling)
    base = train_family(train, valid, LAYOUT, hp, rounds=args.rounds, seed=args.seed,
                        options=options)  # fmt: skip
    live = feature_columns(train, hp)
    rows = select_rows(train, LAYOUT)
    full = fit_family_prior([(train, rows)], live)
    if full is None:
        raise SystemExit(f"{law}: no prior could be fitted")

    def scored_by_full(table: FeatureTable) -> FeatureTable:
        every = np.ones(len(table.graphs), dtype=bool)
        return with_column(table, estimate(full, table, every), args.only_random)

    oof = cross_fitted(train, rows, live, args.folds, args.fold_seed)
    columned = train_family(
        with_column(train, oof, args.only_random),
        scored_by_full(valid), LAYOUT, hp, rounds=args.rounds, seed=args.seed, options=options,
    )  # fmt: skip
    out = {
        "without": judge(base, unseen=unseen_tables),
        "with": judge(columned, unseen=[scored_by_full(t) for t in unseen_tables]),
    }
    show_shares(out)
    return out


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def summary(results: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    """Per law both rows, then median and worst of each, and how many cells moved."""
    lines = [_row(["law", "column", *(c.split(":", 1)[1] for c in LAYOUT)])]
    lines.append("|---|---|" + "---:|" * len(LAYOUT))
    for law, rows in results.items():
        for label, shares in rows.items():
            lines.append(_row([law, label, *(f"{shares[c]:.3f}" for c in LAYOUT)]))
    for label in ("without", "with"):
        cells = [[r[label][c] for r in results.values()] for c in LAYOUT]
        lines.append(_row(["median", label, *(f"{np.median(v):.3f}" for v in cells)]))
        lines.append(_row(["worst", label, *(f"{np.min(v):.3f}" for v in cells)]))
    gain = [r["with"][c] - r["without"][c] for r in results.values() for c in LAYOUT]
    lines.append(cells_moved(gain))
    return lines


def main() -> None:
    ap = study_parser(__doc__.splitlines()[0])
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--fold-seed", type=int, default=0, help="seeds the graphs' fold draw")
    ap.add_argument("--only-random", action="store_true",
                    help="the column is missing on the default collections' graphs")  # fmt: skip
    args = ap.parse_args()
    results = run_study(args, judge)
    print("\n".join(summary(results)))


if __name__ == "__main__":
    main()
