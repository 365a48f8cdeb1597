"""Do hpo's features beat a naive baseline? Default-hyperparameter rankers, valid split.

Baseline rows: tile -> the raw 24 config_feat columns; layout -> the mean over configurable
nodes of node_config_feat (18 columns). Ours: hpo.features (with and without the per-graph
relative features). Same LambdaRanker, same hyperparameters, same rounds, same seed.

    python bench/bench_features.py --data DATA_ROOT [--rounds 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from hpo.data.load import COLLECTIONS, is_layout, iter_config_chunks, list_graphs, load_graph
from hpo.features import ExtractOptions, FeatureSpec, build_tables
from hpo.features.table.feature_table import FeatureTable, GraphRef, family_of
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.training import train_family

HP = {"learning_rate": 0.05, "num_leaves": 31, "min_data_in_leaf": 20, "label_levels": 16}


def naive_table(root: Path, split: str, family: str) -> FeatureTable:
    """Rows of raw config features (tile) or node-mean of node_config_feat (layout)."""
    xs, ts, refs = [], [], []
    for collection in COLLECTIONS:
        if family_of(collection) != family:
            continue
        for path in list_graphs(root, collection, split):
            g = load_graph(path, collection)
            if is_layout(collection):
                x = np.concatenate([b.mean(axis=1) for _, b in iter_config_chunks(path, 4096)])
            else:
                x = g.config_feat
            onehot = np.broadcast_to([float(collection == c) for c in COLLECTIONS], (len(x), 5))
            xs.append(np.concatenate([x, onehot], axis=1))
            ts.append(g.target)
            refs.append(GraphRef(collection, path.stem, len(x), g.labeled))
    sizes = [len(x) for x in xs]
    return FeatureTable(
        family=family,
        split=split,
        X=np.concatenate(xs).astype(np.float32),
        target=np.concatenate(ts),
        group=np.repeat(np.arange(len(xs)), sizes),
        config_index=np.concatenate([np.arange(s) for s in sizes]),
        dup_count=np.ones(sum(sizes), dtype=np.int64),
        graphs=tuple(refs),
        feature_names=tuple(f"f{i}" for i in range(xs[0].shape[1])),
    )


def fit_and_score(
    train: FeatureTable, valid: FeatureTable, hp: dict, rounds: int, seed: int
) -> dict[str, float]:
    fit = train_family(
        train,
        valid,
        train.collections(),
        hp,
        rounds=rounds,
        seed=seed,
        options=FitOptions(n_threads=2),
    )
    return fit.metrics


def ablation(tables: dict, rounds: int, seed: int) -> None:
    """Mean metric per family with subsets of the relative columns (absolute always kept)."""
    print("\nablation of the relative columns (mean metric of the family's collections)")
    for family in ("tile", "layout"):
        train, valid = tables[(family, "train")], tables[(family, "valid")]
        names = np.array(train.feature_names)
        dmed, prank = np.char.endswith(names, "_dmed"), np.char.endswith(names, "_prank")
        subsets = {
            "absolute": ~dmed & ~prank,
            "+ minus median": ~prank,
            "+ percentile rank": ~dmed,
            "all": np.ones(len(names), dtype=bool),
        }
        collections = train.collections()
        line = []
        for label, mask in subsets.items():
            if not mask.any() or (label != "absolute" and mask.sum() == (~dmed & ~prank).sum()):
                continue
            means = train_family(
                train,
                valid,
                collections,
                HP,
                rounds=rounds,
                seed=seed,
                options=FitOptions(n_threads=2, columns=np.flatnonzero(mask)),
            ).metrics
            line.append(f"{label} {np.mean(list(means.values())):.4f}")
        print(f"  {family:<7}" + "  ".join(line))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache-dir", type=Path, default=Path(".hpo_cache"))
    parser.add_argument("--ablation", action="store_true", help="also ablate relative columns")
    args = parser.parse_args()

    t0 = time.perf_counter()
    ours = build_tables(
        args.data,
        COLLECTIONS,
        ("train", "valid"),
        FeatureSpec(),
        extract=ExtractOptions(cache_dir=args.cache_dir, n_jobs=2),
    )
    print(f"hpo features built in {time.perf_counter() - t0:.1f} s")
    results: dict[str, dict[str, float]] = {"baseline": {}, "hpo": {}, "hpo, no relative": {}}
    for family in ("tile", "layout"):
        t0 = time.perf_counter()
        base_train, base_valid = (
            naive_table(args.data, "train", family),
            naive_table(args.data, "valid", family),
        )
        print(f"baseline {family} rows built in {time.perf_counter() - t0:.1f} s")
        results["baseline"].update(
            fit_and_score(base_train, base_valid, HP, args.rounds, args.seed)
        )
        train, valid = ours[(family, "train")], ours[(family, "valid")]
        results["hpo"].update(fit_and_score(train, valid, HP, args.rounds, args.seed))
        no_rel = {**HP, "relative_features": False}
        results["hpo, no relative"].update(
            fit_and_score(train, valid, no_rel, args.rounds, args.seed)
        )
    header = f"{'collection':<22}" + "".join(f"{k:>18}" for k in results)
    print(header)
    print("-" * len(header))
    for c in COLLECTIONS:
        print(f"{c:<22}" + "".join(f"{results[k][c]:>18.4f}" for k in results))
    means = {k: float(np.mean(list(v.values()))) for k, v in results.items()}
    print(f"{'mean (leaderboard)':<22}" + "".join(f"{means[k]:>18.4f}" for k in results))
    if args.ablation:
        ablation(ours, args.rounds, args.seed)


if __name__ == "__main__":
    main()
