"""Judge the space's default configuration over a family of hidden laws (issue 19, point 4).

For every law (``first-order``, ``second-order`` and seeds of ``hpo data synth --law random``)
two roots are generated at ``--scale``: one to train on (data seed = law seed), one of unseen
graphs (data seed + 1000, the same law). The default configuration of ``--space`` is trained
on the first root's train split at ``--rounds`` (one booster per law: the blend is not a
LightGBM parameter, so the trees are the same with the prior on or off) and scored on every
labeled graph (train and valid, every config) of the unseen root, per layout collection, as a
share of the noise ceiling (``bench_ablation.noise_ceiling``: mean Kendall tau between the
order of the law's noiseless cost and the measured runtimes of the same graphs, configs of
equal cost in a random order; ``tau_b_ceiling`` in the record is the tau-b of the cost, the
ceiling before the metric scored orders) with

- the prior off (``estimate_blend`` false), and
- the space's default configuration (``default``: blend on, each collection at its default
  weight, :func:`hpo.ranking.prior.blend.collection_weights`),
- the learned prior on at each weight of ``--weights`` for every collection,
- the learned prior alone (weight 1e6: what the ridge orders without the trees),
- ``written w=3``: the blend before issue 19, the hand-written ``est_log_total_bytes`` at the
  old default weight 3, and
- ``valid-chosen``: per collection, whichever of the settings above (bar ``written w=3``)
  scores best on the tuning root's valid split: what a blend weight learned per collection
  from the data would give,

then the median and the worst share over laws per collection, and per law the loss of each
setting against the better of prior on (at the default weight) and off. Tile, whose runtimes
do not depend on the layout law, is scored once (first law's roots): the mean top-5 score.
``--tile-only`` scores tile alone on every law's roots instead (``first-order`` and
``second-order`` share data seed 0, so list only one of them to count each root once).

    python bench/bench_laws.py --work /tmp/bench/laws --laws first-order,second-order,1,2,3,4,5,6 \
        --scale small --rounds 200 --threads 1 --weights 0.3,1,3 --json /tmp/bench/laws.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from hpo.data.load import COLLECTIONS, is_layout
from hpo.features import ExtractOptions, FeatureSpec, build_tables
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import BLEND_KEY, WEIGHT_KEY, collection_weights
from hpo.ranking.spaces import DEFAULT_SPACE, load_space
from hpo.ranking.training import collection_means, score_table, train_family
from hpo.synth.dataset import generate_dataset
from hpo.synth.law_family import LAW_FILE, law_record, read_law, resolve_law

sys.path.insert(0, str(Path(__file__).parent))
from bench_ablation import noise_ceilings  # noqa: E402

LAYOUT = tuple(c for c in COLLECTIONS if is_layout(c))
LABELED = ("train", "valid")
UNSEEN_OFFSET = 1000
#: The space's default configuration (each collection at its default blend weight).
DEFAULT = "default"
#: The setting chosen per collection on the tuning root's valid split.
CHOSEN = "valid-chosen"


def law_roots(work: Path, law: str, scale: str) -> tuple[Path, Path]:
    """Generate (once) the tuning and unseen roots of ``law``: a name or a random law's seed."""
    name, seed = ("random", int(law)) if law.isdigit() else (law, 0)
    roots = []
    for data_seed in (seed, seed + UNSEEN_OFFSET):
        root = work / f"{law}-{scale}-{data_seed}"
        wanted = law_record(resolve_law(name, seed))
        done = (root / LAW_FILE).is_file() and json.loads((root / LAW_FILE).read_text()) == wanted
        if not done:
            t0 = time.perf_counter()
            generate_dataset(root, scale, data_seed, law=name, law_seed=seed, overwrite=True)
            print(f"  generated {root} in {time.perf_counter() - t0:.0f} s", flush=True)
        roots.append(root)
    return roots[0], roots[1]


def judge_law(
    tuning: Path,
    unseen: Path,
    hp: dict[str, Any],
    weights: list[float],
    *,
    rounds: int,
    threads: int,
    jobs: int,
    cache_dir: Path,
    seed: int = 0,
) -> dict[str, Any]:
    """Shares of the ceiling per collection: prior off, and on at each weight."""
    build = dict(spec=FeatureSpec(), extract=ExtractOptions(cache_dir=cache_dir, n_jobs=jobs))
    tables = build_tables(tuning, LAYOUT, LABELED, **build)
    other = build_tables(unseen, LAYOUT, LABELED, merge_duplicates_in=(), **build)
    scored = [other[("layout", s)] for s in LABELED]
    on = {**hp, BLEND_KEY: True, WEIGHT_KEY: max(weights)}  # any weight > 0 fits the prior
    t0 = time.perf_counter()
    fit = train_family(
        tables[("layout", "train")],
        tables[("layout", "valid")],
        LAYOUT,
        on,
        rounds=rounds,
        seed=seed,
        options=FitOptions(n_threads=threads),
    )
    seconds = time.perf_counter() - t0
    # and the ceiling before: the tau-b of the cost, reached only by ties where the cost ties
    ceiling, tau_b_ceiling = noise_ceilings(unseen, read_law(unseen) or "first-order", LABELED)
    shares: dict[str, dict[str, float]] = {}
    settings: list[tuple[str, Any, Any]] = [("off", 0.0, fit.prior)]
    settings += [(DEFAULT, collection_weights(hp, LAYOUT), fit.prior)]
    settings += [(f"on w={w:g}", w, fit.prior) for w in weights]
    settings += [
        ("prior only", 1e6, fit.prior),  # the learned prior alone orders the configs
        ("written w=3", 3.0, None),  # before issue 19: the hand-written estimate column
    ]
    valid: dict[str, dict[str, float]] = {}  # the tuning root's valid split, per setting
    for label, weight, prior in settings:
        scores = []
        for table in scored:
            scores += score_table(
                fit.ranker, table, fit.columns, LAYOUT, weight=weight, prior=prior
            )
        means = collection_means(scores, LAYOUT)
        shares[label] = {c: means[c] / ceiling[c] for c in LAYOUT}
        valid[label] = collection_means(
            score_table(fit.ranker, tables[("layout", "valid")], fit.columns, LAYOUT,
                        weight=weight, prior=prior),
            LAYOUT,
        )  # fmt: skip
    # a weight learned per collection: the setting (off, a weight, or the prior alone) that
    # scores best on the tuning root's valid split, judged on the unseen graphs like the rest
    chosen = {
        c: max((k for k in valid if k != "written w=3"), key=lambda k: valid[k][c]) for c in LAYOUT
    }
    shares[CHOSEN] = {c: shares[chosen[c]][c] for c in LAYOUT}
    return {"ceiling": ceiling, "shares": shares, "train_seconds": seconds,
            "valid": valid, "chosen": chosen, "tau_b_ceiling": tau_b_ceiling}  # fmt: skip


def tile_score(tuning: Path, unseen: Path, hp: dict[str, Any], rounds: int, threads: int,
               jobs: int, cache_dir: Path, seed: int = 0) -> float:  # fmt: skip
    """Mean top-5 tile score on the unseen root's labeled graphs."""
    build = dict(spec=FeatureSpec(), extract=ExtractOptions(cache_dir=cache_dir, n_jobs=jobs))
    tables = build_tables(tuning, ("tile:xla",), LABELED, **build)
    other = build_tables(unseen, ("tile:xla",), LABELED, merge_duplicates_in=(), **build)
    fit = train_family(
        tables[("tile", "train")], tables[("tile", "valid")], ("tile:xla",), hp,
        rounds=rounds, seed=seed, options=FitOptions(n_threads=threads),
    )  # fmt: skip
    scores = []
    for s in LABELED:
        scores += score_table(fit.ranker, other[("tile", s)], fit.columns, ("tile:xla",))
    return collection_means(scores, ("tile:xla",))["tile:xla"]


def summarize(results: dict[str, Any], default_label: str) -> dict[str, Any]:
    """Median and worst share per collection and setting; per law the loss vs the better."""
    labels = list(next(iter(results.values()))["shares"])
    summary: dict[str, Any] = {"median": {}, "worst": {}, "max_loss": {}}
    for label in labels:
        table = np.array([[r["shares"][label][c] for c in LAYOUT] for r in results.values()])
        summary["median"][label] = dict(zip(LAYOUT, np.median(table, axis=0).tolist(), strict=True))
        summary["worst"][label] = dict(zip(LAYOUT, table.min(axis=0).tolist(), strict=True))
        losses = []
        for r in results.values():
            best = np.maximum(
                [r["shares"]["off"][c] for c in LAYOUT],
                [r["shares"][default_label][c] for c in LAYOUT],
            )
            losses.append(best - np.array([r["shares"][label][c] for c in LAYOUT]))
        summary["max_loss"][label] = dict(zip(LAYOUT, np.max(losses, axis=0).tolist(), strict=True))
    return summary


def print_report(results: dict[str, Any], summary: dict[str, Any]) -> None:
    """Per law and setting the shares, then the medians, worsts and largest losses."""
    head = f"{'law':<14}{'setting':<12}" + "".join(f"{c[7:]:>13}" for c in LAYOUT)
    print("\n" + head + "\n" + "-" * len(head))
    for law, r in results.items():
        for label, shares in r["shares"].items():
            print(f"{law:<14}{label:<12}" + "".join(f"{shares[c]:>13.3f}" for c in LAYOUT))
    for part in ("median", "worst", "max_loss"):
        print(f"\n{part} over {len(results)} laws")
        for label, vals in summary[part].items():
            print(f"{'':<14}{label:<12}" + "".join(f"{vals[c]:>13.3f}" for c in LAYOUT))


def write_record(path: Path | None, args: argparse.Namespace, record: dict[str, Any]) -> None:
    """Write ``record`` and the command's arguments as JSON to ``path`` (``None``: nothing)."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"args": {k: str(v) for k, v in vars(args).items()}, **record}
    path.write_text(json.dumps(record, indent=1, default=float))


def tile_only(args: argparse.Namespace, hp: dict[str, Any]) -> None:
    """``--tile-only``: tile's top-5 score on every law's unseen root (trained on its tuning
    root), then the median and worst over them."""
    scores = {}
    for law in args.laws.split(","):
        tuning, unseen = law_roots(args.work, law, args.scale)
        scores[law] = tile_score(
            tuning, unseen, hp, args.rounds, args.threads, args.jobs, args.work / "cache", args.seed
        )
        print(f"  law {law}: tile {scores[law]:.4f}", flush=True)
    values = list(scores.values())
    print(f"tile over {len(values)} roots: median {np.median(values):.4f}, worst {min(values):.4f}")
    write_record(args.json, args, {"tile": scores})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for roots and cache")
    parser.add_argument(
        "--laws",
        default="first-order,second-order,1,2,3,4,5,6",
        help="comma list: law names, or integers (seeds of --law random)",
    )
    parser.add_argument("--scale", default="small", choices=("tiny", "small"))
    parser.add_argument("--space", default=DEFAULT_SPACE)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument(
        "--weights", default="", help="comma list, each for every collection (default: 1)"
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--seed", type=int, default=0, help="the boosters' seed (another one: the seed noise)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="extraction processes")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--tile-only",
        action="store_true",
        help="score only tile, on every law's roots (tile runtimes follow no layout law: the "
        "laws differ only in their graphs; first-order and second-order share one root)",
    )
    args = parser.parse_args()
    hp = dict(load_space(args.space).get_default_configuration())
    if args.tile_only:
        tile_only(args, hp)
        return

    t0 = time.perf_counter()
    weights = sorted({float(w) for w in args.weights.split(",") if w} or {1.0})
    default_label = DEFAULT
    cache_dir = args.work / "cache"
    results: dict[str, Any] = {}
    tile = None
    for law in args.laws.split(","):
        tuning, unseen = law_roots(args.work, law, args.scale)
        t1 = time.perf_counter()
        results[law] = judge_law(
            tuning, unseen, hp, weights, rounds=args.rounds, threads=args.threads,
            jobs=args.jobs, cache_dir=cache_dir, seed=args.seed,
        )  # fmt: skip
        results[law]["law"] = law_record(read_law(unseen))
        if tile is None:
            tile = tile_score(
                tuning, unseen, hp, args.rounds, args.threads, args.jobs, cache_dir, args.seed
            )
        print(f"  law {law}: {time.perf_counter() - t1:.0f} s", flush=True)
    summary = summarize(results, default_label)
    on = collection_weights(hp, LAYOUT) if hp.get(BLEND_KEY, True) else "blend off"
    print(f"\nspace {args.space} defaults (weights {on}); {args.rounds} rounds; "
          f"scale {args.scale}; shares of the noise ceiling on unseen graphs")  # fmt: skip
    print_report(results, summary)
    print(f"\ntile (top-5 score, unseen graphs of law {args.laws.split(',')[0]}): {tile:.4f}")
    print(f"total {time.perf_counter() - t0:.0f} s")
    record = {"hyperparameters": hp, "results": results, "summary": summary, "tile": tile}
    write_record(args.json, args, record)


if __name__ == "__main__":
    main()
