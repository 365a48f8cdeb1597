"""The real fixtures (../shared/realdata, or ``--data``): what the default configuration fits.

The realdata root's ``train/`` files are byte-identical copies of ``valid/``, so these
figures measure **fit, not generalisation**: can the representation express the runtime
levels of a real XLA program? The U-Net layout file's runtimes fall into three levels set by
the output layouts of a few convolutions; a perfect model of the levels reaches a Kendall
tau-b of about 0.57 there (its README), the rest being measurement noise. Tile is the mean
top-5 score over the 15 measured kernels.

Each setting trains the space's default configuration (with ``--set`` overrides) by the one
training path every trial takes (:func:`hpo.ranking.training.train_family`) and scores the
valid split; every setting is measured in the same run, against the default as baseline.

    python bench/bench_realdata.py --data REALDATA_ROOT --work /tmp/rd
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench_blind import as_set_weights

from hpo.data.load import COLLECTIONS
from hpo.features import ExtractOptions, FeatureSpec, build_tables
from hpo.ranking.hyperparameters import TRUNCATION_KEY
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import BLEND_KEY
from hpo.ranking.spaces import DEFAULT_SPACE, load_space
from hpo.ranking.training import collection_means, score_table, train_family

#: The settings compared, each as overrides of the space's default configuration.
SETTINGS: dict[str, dict[str, Any]] = {
    "default": {},
    "no node aggregates": {"use_group_node_aggregates": False},
    "blend off": {BLEND_KEY: False},
    # its truncation is inactive under the default objective: give it the space's default
    "layout_objective=lambdarank": {"layout_objective": "lambdarank", TRUNCATION_KEY: 256},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="a root of real files")
    parser.add_argument("--work", type=Path, required=True, help="feature cache")
    parser.add_argument("--space", default=DEFAULT_SPACE)
    parser.add_argument("--rounds", type=int, default=672)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    space = load_space(args.space)
    base = dict(space.get_default_configuration())
    present = [c for c in COLLECTIONS if any((args.data / "npz" / c.replace(":", "/")).glob("*"))]
    families: dict[str, tuple[str, ...]] = {
        f: tuple(c for c in present if c.startswith(f)) for f in ("layout", "tile")
    }
    build = dict(spec=FeatureSpec(), extract=ExtractOptions(cache_dir=args.work / "cache"))
    results: dict[str, dict[str, list[float]]] = {}
    for label, overrides in SETTINGS.items():
        hp = {**base, **overrides}
        for family, collections in families.items():
            if not collections:
                continue
            tables = build_tables(args.data, collections, ("train", "valid"), **build)
            for seed in range(args.seeds):
                fit = train_family(tables[(family, "train")], tables[(family, "valid")],
                                   collections, hp, rounds=args.rounds, seed=seed,
                                   options=FitOptions(n_threads=2))  # fmt: skip
                weight = as_set_weights(fit, hp, collections)
                scores = score_table(fit.ranker, tables[(family, "valid")], fit.columns,
                                     collections, weight=weight, prior=fit.prior)  # fmt: skip
                for c, value in collection_means(scores, collections).items():
                    results.setdefault(label, {}).setdefault(c, []).append(value)
    cols = sorted({c for r in results.values() for c in r})
    print("| setting | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for label, per in results.items():
        cells = [f"{min(per[c]):.3f}-{max(per[c]):.3f}" if c in per else "-" for c in cols]
        print(f"| {label} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps({"args": vars(args), "results": results}, default=str))


if __name__ == "__main__":
    main()
