"""Which priors read the per-op-class totals (issue 19): the default's blend on unseen graphs.

For every law (as :mod:`bench_laws`: a tuning root and an unseen root of the same law), the
space's default configuration is trained once at ``--rounds`` (no booster reads the ``oc_``
columns, so the trees are the same for every prior below), then the same train rows give
three priors, and the blend is scored on every labeled graph of the unseen root as a share
of the noise ceiling, per layout collection:

- ``P0``: no prior reads the prior-only columns (``oc_`` totals, ``kp_`` kernel bytes);
- ``P1``: only the random collections' own weights read the ``oc_`` totals (the product of
  feature version 6 until 4577b8b);
- ``P2``: every prior reads them, the pooled weights of the default collections too (the
  product since);

and ``off`` (the blend off). With ``--tripled``, also ``P1 default x3`` and ``P2 default x3``:
the same priors with the default collections' blend weight times 3. With ``--ridges``, for
each penalty r also ``ridge=r`` (P2 with every weight at ridge r) and ``pooled ridge=r`` (P2
with only the pooled weights, those of the default collections, at r). Then the median and
the worst over laws, and each setting's largest loss to the better of ``P0`` and ``off``.

    python bench/bench_prior_columns.py --work /tmp/bench/laws --laws 7,8,9,10 \
        --json /tmp/bench/prior_a.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hpo.features import ExtractOptions, FeatureSpec, build_tables, is_prior_only
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import BLEND_KEY, collection_weights, is_default_collection
from hpo.ranking.prior.fit import LearnedPrior, PriorEquations, family_equations
from hpo.ranking.scoring.valid import select_rows
from hpo.ranking.spaces import DEFAULT_SPACE, load_space
from hpo.ranking.training import collection_means, score_table, train_family
from hpo.synth.law_family import read_law

sys.path.insert(0, str(Path(__file__).parent))
from bench_ablation import noise_ceiling  # noqa: E402
from bench_laws import LABELED, LAYOUT, law_roots  # noqa: E402


def _only_own_weights_read_them(
    equations: PriorEquations, live: np.ndarray, p2: LearnedPrior
) -> LearnedPrior:
    """``P1``: the pooled weights of the basis without the ``oc_`` totals (0 there), the
    collections' own weights as ``P2``'s (the product until 4577b8b)."""
    want = equations.basis_of(live)
    assert tuple(equations.names[i] for i in want) == p2.names
    shared = [k for k, i in enumerate(want) if not equations.names[i].startswith("oc_")]
    pooled = equations._solve(equations.sums, [want[k] for k in shared], p2.ridge)  # noqa: SLF001
    assert pooled is not None
    coef = np.zeros(len(want))
    coef[shared] = pooled.coef
    return LearnedPrior(p2.names, p2.linear, coef, p2.ridge, dict(p2.own), p2.additive)


def law_tables(work: Path, law: str, scale: str) -> tuple[Path, Any, Any, dict[Any, Any]]:
    """``(unseen root, train table, valid table, the unseen root's layout tables)`` of
    ``law`` (roots generated once under ``work``, features cached there)."""
    tuning, unseen = law_roots(work, law, scale)
    spec, extract = FeatureSpec(), ExtractOptions(cache_dir=work / "cache", n_jobs=1)
    tables = build_tables(tuning, LAYOUT, LABELED, spec, extract=extract)
    other = build_tables(unseen, LAYOUT, LABELED, spec, merge_duplicates_in=(), extract=extract)
    return unseen, tables[("layout", "train")], tables[("layout", "valid")], other


def judge(
    law: str,
    work: Path,
    scale: str,
    rounds: int,
    seed: int,
    ridges: tuple[float, ...] = (),
    tripled: bool = False,
) -> dict[str, Any]:
    """Shares of the ceiling of every setting on one law's unseen graphs."""
    unseen, train, valid, other = law_tables(work, law, scale)
    hp = dict(load_space(DEFAULT_SPACE).get_default_configuration())
    fit = train_family(train, valid, LAYOUT, {**hp, BLEND_KEY: True}, rounds=rounds, seed=seed,
                       options=FitOptions(n_threads=1))  # fmt: skip
    every = np.arange(len(train.feature_names))
    equations = family_equations([(train, select_rows(train, LAYOUT))], every)
    assert equations is not None
    assert fit.prior is not None
    only = np.array([is_prior_only(n) for n in train.feature_names])
    p0 = equations.solve(fit.live[~only[fit.live]])
    p2 = equations.solve(fit.live)
    assert p0 is not None
    assert p2 is not None
    np.testing.assert_allclose(p2.coef, fit.prior.coef)  # P2 is what the trial blended
    p1 = _only_own_weights_read_them(equations, fit.live, p2)
    priors = {"off": p0, "P0": p0, "P1": p1, "P2": p2}
    for r in ridges:
        every_at_r = equations.solve(fit.live, r)
        assert every_at_r is not None
        priors[f"ridge={r:g}"] = every_at_r
        pooled = LearnedPrior(p2.names, p2.linear, every_at_r.coef, r, dict(p2.own), p2.additive)
        priors[f"pooled ridge={r:g}"] = pooled
    weights = collection_weights(hp, LAYOUT)
    times3 = default_collections_tripled(weights)
    weight_of = {label: weights for label in priors} | {"off": 0.0}
    if tripled:
        for name in ("P1", "P2"):
            priors[f"{name} default x3"] = priors[name]
            weight_of[f"{name} default x3"] = times3
    ceiling = noise_ceiling(unseen, read_law(unseen) or "first-order", LABELED)
    shares = {
        label: unseen_shares(fit, other, prior, weight_of[label], ceiling)
        for label, prior in priors.items()
    }
    return {"shares": shares}


def default_collections_tripled(weights: dict[str, float]) -> dict[str, float]:
    """``weights`` (per collection) with the default collections' weight times 3."""
    return {c: w * (3.0 if is_default_collection(c) else 1.0) for c, w in weights.items()}


def unseen_shares(
    fit: Any, other: dict[Any, Any], prior: LearnedPrior | None, weight: Any, ceiling: dict
) -> dict[str, float]:
    """Per layout collection, the blend of ``fit``'s booster with ``prior`` at ``weight`` on
    every labeled graph of the unseen tables ``other``, as a share of ``ceiling``."""
    scores = []
    for split in LABELED:
        table = other[("layout", split)]
        scores += score_table(fit.ranker, table, fit.columns, LAYOUT, weight=weight, prior=prior)
    means = collection_means(scores, LAYOUT)
    return {c: means[c] / ceiling[c] for c in LAYOUT}


def summarize(results: dict[str, Any], before: tuple[str, str] = ("off", "P0")) -> None:
    """Print the median and worst per setting and collection, and the largest losses to the
    better of the two settings ``before``."""
    laws = list(results)
    print(f"{len(laws)} laws: {','.join(laws)}; shares of the noise ceiling")
    print(f"{'':<34}" + "".join(f"{c[7:]:>13}" for c in LAYOUT))
    for label in results[laws[0]]["shares"]:
        shares = [results[law]["shares"] for law in laws]
        t = np.array([[s[label][c] for c in LAYOUT] for s in shares])
        better = np.array([[max(s[b][c] for b in before) for c in LAYOUT] for s in shares])
        loss = (better - t).max(0)
        rows = (("median", np.median(t, 0)), ("worst", t.min(0)), ("largest loss", loss))
        for name, row in rows:
            print(f"{label + ' ' + name:<34}" + "".join(f"{v:>13.4f}" for v in row))


def run_laws(laws: str, json_path: Path | None, judge_law: Callable[[str], dict]) -> dict:
    """``judge_law`` of every law of the comma list ``laws`` not already in ``json_path``
    (results resumed from it and written back after each law)."""
    results: dict[str, Any] = {}
    if json_path is not None and json_path.is_file():
        results = json.loads(json_path.read_text())
    for law in laws.split(","):
        if law not in results:
            t0 = time.perf_counter()
            results[law] = judge_law(law)
            print(f"  law {law}: {time.perf_counter() - t0:.0f} s", flush=True)
            if json_path is not None:
                json_path.parent.mkdir(parents=True, exist_ok=True)
                json_path.write_text(json.dumps(results, indent=1))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for roots and cache")
    parser.add_argument("--laws", default="7,8,9,10,11,12,13,14")
    parser.add_argument("--scale", default="small", choices=("tiny", "small"))
    parser.add_argument("--rounds", type=int, default=672)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="results, resumed if present")
    parser.add_argument("--ridges", default="", help="comma list of ridge penalties to add")
    parser.add_argument("--tripled", action="store_true", help="also the default collections x3")
    args = parser.parse_args()
    ridges = tuple(float(r) for r in args.ridges.split(",") if r)
    results = run_laws(
        args.laws,
        args.json,
        lambda law: judge(law, args.work, args.scale, args.rounds, args.seed, ridges, args.tripled),
    )
    summarize(results)


if __name__ == "__main__":
    main()
