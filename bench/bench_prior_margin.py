"""How big a gain on valid must the learned prior show to keep a collection? (``PRIOR_MARGIN``)

For every law the default configuration is trained once (672 rounds, booster seed 0, the one
training path: :func:`hpo.ranking.training.train_family`); its valid graphs are scored with the
prior forced on (at the default weights, and at those times each of ``--weight-scales``) and
off, and so are the unseen graphs of the same law. Each margin ``t`` of ``--margins`` then
decides each collection from the valid scores, and the unseen share of the noise ceiling of
that choice is reported: median and worst over the laws, and the largest loss to the better of
prior on and off. The rule is :func:`hpo.ranking.scoring.valid.prior_share` at each share of
``--doubts`` (the prior at that share of the weights where the valid gain is within ``t``
standard errors of 0, either way), or :func:`~hpo.ranking.scoring.valid.prior_earns` (on or off)
at a share of 0. A per-law table gives what a model of the default scores (``PRIOR_MARGIN``,
``PRIOR_DOUBT_SHARE``). No booster is trained again per rule; ``--from-json`` reports a saved
``--json`` again without training.

Laws are blind laws (``blind_NN``: roots from ``bench_blind.law_root``) or the generator's
(``NAME=TUNING:UNSEEN``, two roots of ``hpo data synth`` under ``--family-work``).

    python bench/bench_prior_margin.py --work /tmp/blind --laws blind_01,...,blind_10 \\
        --margins 0.5 --weight-scales 1,0.03 --json margin.json
    python bench/bench_prior_margin.py --work /tmp/famlaws --family-work /tmp/famlaws \\
        --family first-order=first-order-small-0:first-order-small-1000,... --margins 0.5 \\
        --weight-scales 1,0.03
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_ablation import noise_ceilings
from bench_blind import LABELED, LAYOUT, ceiling_shares, law_root, model_means, noise_ceiling

from hpo.features import ExtractOptions, FeatureSpec, build_tables
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import collection_weights
from hpo.ranking.scoring.valid import (
    PRIOR_DOUBT_SHARE,
    PRIOR_MARGIN,
    GraphScore,
    prior_share,
)
from hpo.ranking.spaces import DEFAULT_SPACE, load_space
from hpo.ranking.training import score_table, train_family
from hpo.synth.law_family import read_law


def blend_label(scale: float) -> str:
    """The key of the prior's scores at the default blend weights times ``scale``: ``on`` at 1,
    ``on@S`` otherwise (what :func:`judge` writes and :func:`report` reads)."""
    return "on" if scale == 1 else f"on@{scale:g}"


def judge(
    tuning: Path, unseen: Path, ceiling: dict[str, float], cache: Path, scales: list[float]
) -> dict[str, Any]:
    """Valid graph scores and unseen shares with the prior on and off, per collection; ``on``
    at the default weights, ``on@S`` at the default weights times each other scale ``S``."""
    hp = dict(load_space(DEFAULT_SPACE).get_default_configuration())
    build = dict(spec=FeatureSpec(), extract=ExtractOptions(cache_dir=cache))
    tables = build_tables(tuning, LAYOUT, LABELED, **build)
    other = build_tables(unseen, LAYOUT, LABELED, merge_duplicates_in=(), **build)
    valid = tables[("layout", "valid")]
    fit = train_family(tables[("layout", "train")], valid, LAYOUT, hp, rounds=672, seed=0,
                       options=FitOptions(n_threads=2))  # fmt: skip
    out: dict[str, Any] = {"valid": {}, "unseen": {}}
    weights = collection_weights(hp, LAYOUT)
    blends: list[tuple[str, Any]] = [("on", weights), ("off", 0.0)]
    for scale in (s for s in scales if s != 1):
        blends.append((blend_label(scale), {c: w * scale for c, w in weights.items()}))
    for label, weight in blends:
        scored = score_table(fit.ranker, valid, fit.columns, LAYOUT, weight=weight, prior=fit.prior)
        out["valid"][label] = [[s.collection, s.stem, s.metric, s.n_configs, s.ranked]
                               for s in scored]  # fmt: skip
        unseen_tables = [other[("layout", split)] for split in LABELED]
        means = model_means(fit, unseen_tables, LAYOUT, weight)
        out["unseen"][label] = ceiling_shares(means, ceiling)
    return out


def choice(
    r: dict[str, Any], c: str, margin: float, scale: float, doubt: float
) -> tuple[str, float]:
    """Which scores of law ``r`` collection ``c`` gets under the rule (a key of ``r["unseen"]``)
    and the share of the weights it keeps: :func:`hpo.ranking.scoring.valid.prior_share` with
    ``doubt`` (at 0, on or off as :func:`~hpo.ranking.scoring.valid.prior_earns` decides)."""
    on = [GraphScore(*s) for s in r["valid"][blend_label(scale)]]
    off = [GraphScore(*s) for s in r["valid"]["off"]]
    share = prior_share(on, off, c, margin=margin, doubt=doubt)
    return (blend_label(scale * share) if share else "off"), share


def report(
    results: dict[str, dict[str, Any]], margins: list[float], scale: float = 1, doubt: float = 0
) -> list[str]:
    """Per margin: median and worst unseen share per collection, the largest loss to the better
    of on and off, and how many collections kept the prior whole (and at a share); the prior
    blended at the default weights times ``scale`` (a scale :func:`judge` scored). ``doubt``:
    where :func:`hpo.ranking.scoring.valid.prior_share` cannot tell the gain from 0, the prior
    at that share of those weights (``scale * doubt`` must have been scored); 0: off there."""
    label = blend_label(scale)
    lines = ["| margin | median | worst | largest loss | whole, share |"]
    lines.append("|---:|---|---|---:|---:|")
    for t in margins:
        shares: dict[str, list[float]] = {c: [] for c in LAYOUT}
        loss, kept, partly = 0.0, 0, 0
        for r in results.values():
            for c in LAYOUT:
                picked, share = choice(r, c, t, scale, doubt)
                kept, partly = kept + (share == 1), partly + (0 < share < 1)
                u = r["unseen"]
                shares[c].append(u[picked][c])
                loss = max(loss, max(u[label][c], u["off"][c]) - shares[c][-1])
        med = " / ".join(f"{np.median(shares[c]):.3f}" for c in LAYOUT)
        worst = " / ".join(f"{min(shares[c]):.3f}" for c in LAYOUT)
        row = f"{t:g}" + (f", doubt {doubt:g}" if doubt else "")
        n = 4 * len(results)
        lines.append(f"| {row} | {med} | {worst} | {loss:.3f} | {kept}, {partly} of {n} |")
    return lines


def per_law(
    results: dict[str, dict[str, Any]],
    margin: float = PRIOR_MARGIN,
    doubt: float = PRIOR_DOUBT_SHARE,
) -> list[str]:
    """Each law's unseen shares under the rule at the default weights (at the defaults: what a
    model of the default configuration scores, ``bench_blind.py``'s "as set"), ``*`` where the
    prior is whole, ``~`` where at a share; ``-`` where that share's scores were not judged
    (``--weight-scales`` without it)."""
    lines = ["| law | " + " | ".join(LAYOUT) + " |", "|---|" + "---:|" * len(LAYOUT)]
    for law, r in results.items():
        cells = []
        for c in LAYOUT:
            picked, share = choice(r, c, margin, 1, doubt)
            mark = "*" if share == 1 else "~" if share else ""
            value = r["unseen"].get(picked, {}).get(c)
            cells.append("-" if value is None else f"{value:.3f}{mark}")
        lines.append(f"| {law} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="blind roots and cache")
    parser.add_argument("--laws", default="", help="blind laws, a comma list")
    parser.add_argument("--family", default="", help="NAME=TUNING:UNSEEN,... (generated roots)")
    parser.add_argument("--family-work", type=Path, help="folder of the generated roots")
    parser.add_argument("--margins", default="0,0.25,0.5,1,1.5")
    parser.add_argument(
        "--weight-scales", default="1", help="the blend's default weights times each, a comma list"
    )
    parser.add_argument(
        "--doubts",
        default=f"0,{PRIOR_DOUBT_SHARE:g}",
        help="shares of the weight where the gain is within the margin either way (0: off "
        "there, the rule before); each needs its share times a weight scale among the scales",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument("--from-json", type=Path, help="report a saved --json again, no training")
    args = parser.parse_args()
    margins = [float(m) for m in args.margins.split(",")]
    scales = [float(m) for m in args.weight_scales.split(",")]
    doubts = [float(m) for m in args.doubts.split(",")]
    groups: dict[str, dict[str, dict[str, Any]]] = {"blind": {}, "family": {}}
    if args.from_json is not None:
        groups = json.loads(args.from_json.read_text())
    for law in filter(None, args.laws.split(",")):
        t0 = time.perf_counter()
        tuning = law_root(args.work, law, 1, "small")
        unseen = law_root(args.work, law, 1001, "small")
        groups["blind"][law] = judge(
            tuning, unseen, noise_ceiling(unseen), args.work / "cache", scales
        )
        print(f"{law}: {time.perf_counter() - t0:.0f} s", flush=True)
    for item in filter(None, args.family.split(",")):
        t0 = time.perf_counter()
        name, _, pair = item.partition("=")
        tuning, unseen = (args.family_work / d for d in pair.split(":"))
        ceiling = noise_ceilings(unseen, read_law(unseen) or "first-order", LABELED)[0]
        groups["family"][name] = judge(tuning, unseen, ceiling, args.family_work / "cache", scales)
        print(f"{name}: {time.perf_counter() - t0:.0f} s", flush=True)
    if args.json is not None:  # first: a report that fails loses no training
        args.json.write_text(json.dumps(groups) + "\n")
    for group, results in groups.items():
        for scale in scales if results else ():
            named = f"{group} ({', '.join(results)}), weights x{scale:g}"
            print(f"\n{named}; xla:d / xla:r / nlp:d / nlp:r\n")
            for doubt in doubts:
                if doubt and not any(np.isclose(scale * doubt, x) for x in scales):
                    print(f"(doubt {doubt:g} at x{scale:g}: x{scale * doubt:g} was not scored)")
                    continue
                print("\n".join(report(results, margins, scale, doubt)))
        if results:
            rule = f"margin {PRIOR_MARGIN:g}, doubt {PRIOR_DOUBT_SHARE:g} (the defaults)"
            print(f"\n{group}, {rule}, per law (* the prior whole, ~ at a share)\n")
            print("\n".join(per_law(results)))


if __name__ == "__main__":
    main()
