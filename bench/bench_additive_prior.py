"""The learned prior fitted additively against the prior fitted on standardized columns (issue 19).

Run it with the code *before* the additive prior on the path (a frozen worktree: its
``train_family`` fits the standardized prior, "product"), and point ``--additive`` at the
additive fit to judge (``hpo/ranking/prior/additive.py`` of the tree that ships it; the module needs
numpy only). For every law (as :mod:`bench_laws`: a tuning root and an unseen root), the
space's default configuration is trained once (672 rounds, booster seed 0, 1 thread), so every
prior below shares the trees, and each blend is scored on every labeled graph of the unseen
root as a share of the noise ceiling:

- ``trees``: the booster alone (blend off);
- ``product``: the booster blended with the standardized prior at the default weights;
- ``converged``: blended with the additive prior the ``--additive`` module fits, on the
  trial's live byte totals (per-graph sums as :func:`hpo.ranking.prior.fit.family_equations`
  makes them; the random collections' own weights read the ``oc_`` totals, the pooled ones
  do not); ``x3``, ``x10`` and ``x1/3``: the same at 3, 10 and 1/3 times the default
  weights; ``alone``: the prior alone;
- ``additive``: the first form of the idea, six alternating passes on the rows themselves
  (not converged, every graph kept), recorded because it was measured.

    PYTHONPATH=/work/frozen_base python bench/bench_additive_prior.py --work /tmp/laws \
        --laws second-order,4,6 --json /tmp/additive.json \
        --additive /work/main/hpo/ranking/additive.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_ablation import noise_ceiling  # noqa: E402
from bench_laws import LABELED, LAYOUT, law_roots  # noqa: E402

from hpo.features import ExtractOptions, FeatureSpec, build_tables, is_prior_only
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import BLEND_KEY, collection_weights, is_default_collection
from hpo.ranking.prior.fit import prior_basis
from hpo.ranking.prior.learned import basis_design
from hpo.ranking.scoring.metrics import kendall_tau
from hpo.ranking.scoring.valid import blended_predict, valid_rows
from hpo.ranking.spaces import DEFAULT_SPACE, load_space
from hpo.ranking.training import train_family
from hpo.synth.law_family import read_law


def lin_positions(names, with_oc, live=None):
    pos, lin = prior_basis(names)
    keep = set(range(len(names))) if live is None else set(int(i) for i in live)
    return [
        p
        for p, flag in zip(pos, lin, strict=True)
        if flag and p in keep and (with_oc or not is_prior_only(names[p]))
    ]


def graphs_of(table, rows_mask_colls):
    b = table.group_bounds()
    out = []
    for gi, ref in enumerate(table.graphs):
        if ref.labeled and ref.collection in rows_mask_colls and b[gi + 1] > b[gi]:
            out.append((gi, int(b[gi]), int(b[gi + 1])))
    return out


def fit_additive(table, colls, positions, ridge=0.01, iters=6):
    Bs, rs = [], []
    X = np.asarray(table.X)
    for _gi, a, b in graphs_of(table, colls):
        B = basis_design(X[a:b], positions, [True] * len(positions))
        r = np.asarray(table.target[a:b], dtype=np.float64)
        sr = r.std() or 1.0
        Bs.append((B - B.mean(0)) / sr)
        rs.append((r - r.mean()) / sr)
    w = None
    for _ in range(iters):
        if w is not None:
            Bs = [Bg / (np.std(Bg @ w) or 1.0) for Bg in Bs]
        B, r = np.vstack(Bs), np.concatenate(rs)
        q = np.sqrt((B**2).mean(0))
        q[q == 0] = 1
        Bq = B / q
        w = np.linalg.solve(Bq.T @ Bq + ridge * len(r) * np.eye(Bq.shape[1]), Bq.T @ r) / q
    return w


AD: Any = None  # the additive module to judge (--additive)


def load_additive(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("additive_judged", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fit_new(table, colls, positions, ridge=0.01):
    """The shipped fit: per-graph sums as hpo.ranking.prior.fit._graph_grams makes them, solved
    by the shipped solve_additive (a copy of hpo/ranking/prior/additive.py)."""
    X = np.asarray(table.X)
    gs = graphs_of(table, colls)
    grams = AD.GraphGrams.empty(len(gs), len(positions))
    for k, (_gi, a, b) in enumerate(gs):
        B = basis_design(X[a:b], positions, [True] * len(positions))
        r = np.asarray(table.target[a:b], dtype=np.float64)
        mean, std = r.mean(), r.std()
        varies = std > 1e-9 * max(abs(mean), 1.0)
        grams.target_std[k] = std if varies else 0.0
        t = (r - mean) / std if varies else np.zeros_like(r)
        centred = B - B.mean(0)
        steady = B.std(0) <= 1e-9 * np.maximum(np.abs(B.mean(0)), 1.0)  # as the product:
        centred[:, steady] = 0.0  # a total constant in the graph is 0, not its rounding
        grams.add(centred, t, np.full(b - a, k))
    return AD.solve_additive(grams, list(range(len(positions))), ridge)


def z(x):
    s = x.std()
    return (x - x.mean()) / s if s > 0 else np.zeros_like(x)


def judge(law, work):
    tuning, unseen = law_roots(work, law, "small")
    spec, extract = FeatureSpec(), ExtractOptions(cache_dir=work / "cache", n_jobs=1)
    tables = build_tables(tuning, LAYOUT, LABELED, spec, extract=extract)
    other = build_tables(unseen, LAYOUT, LABELED, spec, merge_duplicates_in=(), extract=extract)
    train, valid = tables[("layout", "train")], tables[("layout", "valid")]
    hp = dict(load_space(DEFAULT_SPACE).get_default_configuration())
    fit = train_family(
        train,
        valid,
        LAYOUT,
        {**hp, BLEND_KEY: True},
        rounds=672,
        seed=0,
        options=FitOptions(n_threads=1),
    )
    names = train.feature_names
    pooled_pos = lin_positions(names, False)
    own_pos = lin_positions(names, True)
    defaults = [c for c in LAYOUT if is_default_collection(c)]
    w_pooled = fit_additive(train, list(LAYOUT), pooled_pos)
    w_own = {c: fit_additive(train, [c], own_pos) for c in LAYOUT if c not in defaults}
    print("  live basis", len(lin_positions(names, True, fit.live)), "of", len(own_pos), flush=True)
    cpooled_pos = lin_positions(names, False, fit.live)
    cown_pos = lin_positions(names, True, fit.live)
    cw_pooled = fit_new(train, list(LAYOUT), cpooled_pos)
    cw_own = {c: fit_new(train, [c], cown_pos) for c in LAYOUT if c not in defaults}
    weights = collection_weights(hp, LAYOUT)
    ceiling = noise_ceiling(unseen, read_law(unseen) or "first-order", LABELED)
    keys = (
        "trees",
        "product",
        "additive",
        "additive alone",
        "product alone",
        "additive x3",
        "additive x1/3",
        "converged",
        "converged alone",
        "converged x3",
        "converged x1/3",
        "converged x10",
    )
    taus = {k: {c: [] for c in LAYOUT} for k in keys}
    for split in LABELED:
        t = other[("layout", split)]
        view = valid_rows(t, LAYOUT)
        raw = blended_predict(fit.ranker, t, view, fit.columns, 0.0, None)
        prod = blended_predict(fit.ranker, t, view, fit.columns, weights, fit.prior)
        alone = blended_predict(
            fit.ranker, t, view, fit.columns, {c: 1e9 for c in LAYOUT}, fit.prior
        )
        X = np.asarray(t.X)
        for i, g in enumerate(view.graphs):
            a, b = int(view.bounds[i]), int(view.bounds[i + 1])
            c = t.graphs[g].collection
            rows = view.rows[a:b]
            y = view.runtime[a:b]
            if c in w_own:
                est = basis_design(X[rows], own_pos, [True] * len(own_pos)) @ w_own[c]
            else:
                est = basis_design(X[rows], pooled_pos, [True] * len(pooled_pos)) @ w_pooled
            add = z(raw[a:b]) + weights[c] * z(est)
            cp = cown_pos if c in cw_own else cpooled_pos
            cest = basis_design(X[rows], cp, [True] * len(cp)) @ (
                cw_own[c] if c in cw_own else cw_pooled
            )
            for k, s in (
                ("trees", raw[a:b]),
                ("product", prod[a:b]),
                ("additive", add),
                ("additive alone", est),
                ("product alone", alone[a:b]),
                ("additive x3", z(raw[a:b]) + 3 * weights[c] * z(est)),
                ("additive x1/3", z(raw[a:b]) + weights[c] / 3 * z(est)),
                ("converged", z(raw[a:b]) + weights[c] * z(cest)),
                ("converged alone", cest),
                ("converged x3", z(raw[a:b]) + 3 * weights[c] * z(cest)),
                ("converged x1/3", z(raw[a:b]) + weights[c] / 3 * z(cest)),
                ("converged x10", z(raw[a:b]) + 10 * weights[c] * z(cest)),
            ):
                taus[k][c].append(kendall_tau(s, y))
    return {k: {c: float(np.nanmean(v[c])) / ceiling[c] for c in LAYOUT} for k, v in taus.items()}


def summarize(res: dict[str, Any]) -> None:
    laws = list(res)
    print(f"{len(laws)} laws: {','.join(laws)}; shares of the noise ceiling, median | worst")
    for label in res[laws[0]]:
        t = np.array([[res[law][label][c] for c in LAYOUT] for law in laws])
        med = " ".join(f"{v:.3f}" for v in np.median(t, 0))
        print(f"  {label:<16}{med} | " + " ".join(f"{v:.3f}" for v in t.min(0)))


def main() -> None:
    global AD
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for roots and cache")
    parser.add_argument("--laws", default="second-order,4,6,8,9,10,12")
    parser.add_argument("--json", type=Path, required=True, help="results, resumed if present")
    parser.add_argument("--additive", type=Path, required=True, help="additive.py to judge")
    args = parser.parse_args()
    AD = load_additive(args.additive)
    res = json.loads(args.json.read_text()) if args.json.is_file() else {}
    for law in args.laws.split(","):
        if law in res:
            continue
        t0 = time.perf_counter()
        res[law] = judge(law, args.work)
        args.json.write_text(json.dumps(res, indent=1))
        print(f"law {law} ({time.perf_counter() - t0:.0f} s)", flush=True)
        for k, row in res[law].items():
            print(f"  {k:<16}" + "".join(f"{row[c]:>8.3f}" for c in LAYOUT), flush=True)
    summarize(res)


if __name__ == "__main__":
    main()
