"""Any-time curves, statistics, table and figure of ``bench_optimizers.py``.

Only a model trained at the LARGEST budget is one you would export, so a run's any-time
curve is the best score among its evaluations at the largest budget that ENDED by a given
number of seconds since the optimizer started (hpo: the first trial's start, so the cached
feature loading is not counted; Optuna: the study's start). Evaluations that end after the
walltime are cut, so every optimizer gets exactly the same wall-clock.

Across seeds, a run that has no largest-budget result yet counts as ``-inf`` (it has
nothing to export): the median is defined once more than half the seeds have a result, and
the quantiles interpolate linearly as numpy's default does, except that an interpolation
touching ``-inf`` is ``-inf``.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpo.runs.views.history import load_run

__all__ = [
    "Evaluation",
    "best_curve",
    "hpo_evaluations",
    "mean_ranks",
    "optuna_evaluations",
    "quantile",
    "step_values",
    "summarise",
    "time_to_reach",
    "wilcoxon_vs",
]

Curve = list[tuple[float, float]]  # (seconds, best score at the largest budget so far)


@dataclass(frozen=True)
class Evaluation:
    """One finished evaluation: ``end`` seconds after the optimizer started."""

    end: float
    budget: float | None
    score: float | None  # None for a failed evaluation
    config: dict[str, Any]


def hpo_evaluations(run_dir: Path) -> list[Evaluation]:
    """Evaluations of an hpo campaign folder (``trials.jsonl``), timed from its first start.

    A resumed campaign (extended with ``hpo run --resume NAME --walltime ...``, say) is
    timed on its own clock (:meth:`hpo.runs.views.history.RunHistory.elapsed`): the idle time
    between the two commands is not counted, the second start-up is.
    """
    run = load_run(run_dir)
    starts = [t.start for t in run.trials if t.start is not None]
    if not starts:
        return []
    t0 = run.elapsed(min(starts))
    return [
        Evaluation(run.elapsed(t.end) - t0, t.budget, t.score if t.ok else None, dict(t.config))
        for t in run.trials
        if t.end is not None
    ]


def optuna_evaluations(path: Path) -> list[Evaluation]:
    """Evaluations of an Optuna study's ``evaluations.jsonl`` (a torn last line is skipped)."""
    out: list[Evaluation] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        ok = rec.get("status") == "SUCCESS" and isinstance(rec.get("score"), (int, float))
        out.append(
            Evaluation(
                float(rec["end"]),
                rec.get("budget"),
                rec["score"] if ok else None,
                dict(rec.get("config") or {}),
            )  # fmt: skip
        )
    return out


def best_curve(evaluations: Sequence[Evaluation], max_budget: float, walltime: float) -> Curve:
    """Each new best score at ``max_budget``, with the time it was reached (up to walltime)."""
    points = sorted(
        (e.end, e.score)
        for e in evaluations
        if e.score is not None
        and math.isfinite(e.score)
        and e.budget is not None
        and math.isclose(e.budget, max_budget)
        and e.end <= walltime
    )
    curve: Curve = []
    for seconds, score in points:
        if not curve or score > curve[-1][1]:
            curve.append((max(0.0, seconds), score))
    return curve


def step_values(curve: Curve, times: np.ndarray) -> np.ndarray:
    """The curve's best score at each of ``times`` (``-inf`` before its first point)."""
    if not curve:
        return np.full(times.shape, -np.inf)
    at = np.array([p[0] for p in curve])
    value = np.array([p[1] for p in curve])
    idx = np.searchsorted(at, times, side="right") - 1
    return np.where(idx >= 0, value[np.clip(idx, 0, None)], -np.inf)


def quantile(values: np.ndarray, q: float) -> np.ndarray:
    """Quantile ``q`` over axis 0 (seeds), linear like numpy's default, ``-inf``-aware.

    ``np.quantile`` turns ``-inf + w * inf`` into NaN; here an interpolation whose lower
    neighbour is ``-inf`` is ``-inf`` (fewer seeds than needed have reached a result).
    """
    ordered = np.sort(values, axis=0)
    h = (ordered.shape[0] - 1) * q
    lo, hi = math.floor(h), math.ceil(h)
    a, b = ordered[lo], ordered[hi]
    if hi == lo:
        return a
    with np.errstate(invalid="ignore"):
        mixed = a + (h - lo) * (b - a)
    return np.where(np.isneginf(a), -np.inf, mixed)


def summarise(
    curves: Mapping[str, Mapping[int, Curve]], walltime: float
) -> dict[str, dict[str, Any]]:
    """Median and IQR over seeds of each optimizer's curve, on one exact time grid.

    The grid is every time any curve of the dataset improves, plus 0 and ``walltime``, so the
    median step function is exact (no resampling).

    Returns
    -------
    dict
        ``{optimizer: {"times", "median", "q25", "q75" (arrays), "final": {seed: best}}}``.
    """
    events = {0.0, float(walltime)}
    for runs in curves.values():
        for curve in runs.values():
            events.update(t for t, _ in curve)
    times = np.array(sorted(events))
    out: dict[str, dict[str, Any]] = {}
    for name, runs in curves.items():
        if not runs:
            continue
        seeds = sorted(runs)
        values = np.stack([step_values(runs[s], times) for s in seeds])
        out[name] = {
            "times": times,
            "median": quantile(values, 0.5),
            "q25": quantile(values, 0.25),
            "q75": quantile(values, 0.75),
            "final": {s: float(values[i, -1]) for i, s in enumerate(seeds)},
        }
    return out


def time_to_reach(times: np.ndarray, curve: np.ndarray, target: float) -> float | None:
    """First time at which ``curve`` is at least ``target``; ``None`` if never."""
    hit = np.flatnonzero(curve >= target)
    return float(times[hit[0]]) if hit.size else None


def _with_floor(values: np.ndarray, floor: float) -> np.ndarray:
    return np.where(np.isneginf(values), floor, values)


def mean_ranks(
    finals: Sequence[Mapping[str, float]],
) -> dict[str, tuple[float, int]]:
    """Mean rank of each optimizer over blocks (one block per (dataset, seed) pair).

    Each block maps optimizer -> final best score; rank 1 is the best, ties share the mean
    rank, ``-inf`` (no largest-budget result) ranks last. Only blocks holding every
    optimizer are counted, so every optimizer is ranked on the same blocks.
    """
    from scipy.stats import rankdata

    names = sorted({n for block in finals for n in block})
    full = [b for b in finals if all(n in b for n in names)]
    if not full:
        return {}
    scores = np.array([[b[n] for n in names] for b in full])
    ranks = rankdata(-scores, axis=1)  # -(-inf) = inf ranks last
    return {n: (float(ranks[:, j].mean()), len(full)) for j, n in enumerate(names)}


@dataclass(frozen=True)
class PairedTest:
    """Two-sided Wilcoxon signed-rank test of paired final scores."""

    p: float | None  # None when there are no pairs
    n: int  # pairs
    n_nonzero: int  # pairs with a non-zero difference (zeros are dropped: zero_method wilcox)


def wilcoxon_vs(scores: Mapping[Any, float], reference: Mapping[Any, float]) -> PairedTest:
    """Wilcoxon signed-rank test of ``scores`` against ``reference``, paired by key.

    ``-inf`` (no result at the largest budget) is replaced by one less than the lowest finite
    score of the pairs, which keeps every sign and rank. Zero differences are dropped
    (Wilcoxon's original rule); if every difference is zero, p is 1.
    """
    from scipy.stats import wilcoxon

    keys = sorted(set(scores) & set(reference), key=str)
    if not keys:
        return PairedTest(None, 0, 0)
    x = np.array([scores[k] for k in keys], dtype=float)
    y = np.array([reference[k] for k in keys], dtype=float)
    both = np.concatenate([x, y])
    finite = both[np.isfinite(both)]
    floor = float(finite.min()) - 1.0 if finite.size else 0.0
    x, y = _with_floor(x, floor), _with_floor(y, floor)
    nonzero = int(np.count_nonzero(x - y))
    if nonzero == 0:
        return PairedTest(1.0, len(keys), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns that n is small: the exact test is used
        result = wilcoxon(x, y, zero_method="wilcox", alternative="two-sided")
    return PairedTest(float(result.pvalue), len(keys), nonzero)


# ---- presentation ---------------------------------------------------------------------------
def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.{digits}f}"


def median_iqr(finals: Mapping[int, float]) -> str:
    """``median (q25-q75)`` of final scores over seeds."""
    values = np.array([list(finals.values())], dtype=float).T
    med, q25, q75 = (float(quantile(values, q)[0]) for q in (0.5, 0.25, 0.75))
    return f"{_fmt(med)} ({_fmt(q25)}-{_fmt(q75)})"


def _seconds(value: float | None, walltime: float) -> str:
    if value is None:
        return "never"
    return f"{value:.0f} s ({value / walltime:.2f} of walltime)"


def _p(test: PairedTest) -> str:
    if test.p is None:
        return "-"
    return f"{test.p:.3g} (n={test.n}, {test.n_nonzero} non-zero)"


def dataset_table(
    label: str,
    summary: Mapping[str, Mapping[str, Any]],
    *,
    reference: str,
    walltime: float,
    default_score: float | None,
) -> str:
    """Markdown table of one dataset: final median (IQR), mean rank, Wilcoxon, time to target."""
    ranks = mean_ranks(
        [{n: s["final"][seed] for n, s in summary.items()} for seed in _common_seeds(summary)]
    )
    ref = summary.get(reference)
    target = float(quantile(np.array([list(ref["final"].values())]).T, 0.5)[0]) if ref else None
    lines = [
        f"### {label}",
        "",
        f"Default configuration: {_fmt(default_score)}. Target: {reference}'s final median "
        f"{_fmt(target)}.",
        "",
        f"| optimizer | seeds | final best, median (IQR) | gain over default | mean rank | "
        f"Wilcoxon vs {reference}, two-sided p | reaches {reference}'s final median at |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in summary.items():
        med = float(quantile(np.array([list(s["final"].values())]).T, 0.5)[0])
        gain = med - default_score if default_score is not None and math.isfinite(med) else None
        rank = ranks.get(name)
        test = wilcoxon_vs(s["final"], ref["final"]) if ref and name != reference else None
        reach = time_to_reach(s["times"], s["median"], target) if target is not None else None
        lines.append(
            f"| {name} | {len(s['final'])} | {median_iqr(s['final'])} | "
            f"{'-' if gain is None else f'{gain:+.4f}'} | "
            f"{'-' if rank is None else f'{rank[0]:.2f}'} | {'-' if test is None else _p(test)} | "
            f"{_seconds(reach, walltime) if target is not None else '-'} |"
        )
    return "\n".join(lines)


def _common_seeds(summary: Mapping[str, Mapping[str, Any]]) -> list[int]:
    sets = [set(s["final"]) for s in summary.values()]
    return sorted(set.intersection(*sets)) if sets else []


def overall_table(summaries: Mapping[str, Mapping[str, Mapping[str, Any]]], reference: str) -> str:
    """Markdown table over all datasets: mean rank and pooled Wilcoxon over (dataset, seed)."""
    blocks: list[dict[str, float]] = []
    pooled: dict[str, dict[tuple[str, int], float]] = {}
    for label, summary in summaries.items():
        for seed in _common_seeds(summary):
            blocks.append({n: s["final"][seed] for n, s in summary.items()})
        for name, s in summary.items():
            pooled.setdefault(name, {}).update({(label, k): v for k, v in s["final"].items()})
    ranks = mean_ranks(blocks)
    lines = [
        f"| optimizer | mean rank over (dataset, seed) pairs | Wilcoxon vs {reference}, "
        "pooled over datasets, two-sided p |",
        "|---|---:|---:|",
    ]
    for name in pooled:
        rank = ranks.get(name)
        test = wilcoxon_vs(pooled[name], pooled[reference]) if reference in pooled else None
        lines.append(
            f"| {name} | {'-' if rank is None else f'{rank[0]:.2f} (n={rank[1]})'} | "
            f"{'-' if test is None or name == reference else _p(test)} |"
        )
    return "\n".join(lines)


def _jsonable_curve(values: np.ndarray) -> list[float | None]:
    return [float(v) if math.isfinite(v) else None for v in values]


def curves_json(
    summaries: Mapping[str, Mapping[str, Mapping[str, Any]]],
    raw: Mapping[str, Mapping[str, Mapping[int, Curve]]],
    defaults: Mapping[str, float | None],
    settings: Mapping[str, Any],
) -> dict[str, Any]:
    """Everything needed to re-plot: raw step curves per seed, and the median/IQR curves."""
    return {
        "settings": dict(settings),
        "datasets": {
            label: {
                "default_score": defaults.get(label),
                "optimizers": {
                    name: {
                        "curves": {str(seed): c for seed, c in raw[label][name].items()},
                        "times": [float(t) for t in s["times"]],
                        **{k: _jsonable_curve(s[k]) for k in ("median", "q25", "q75")},
                        "final": {
                            str(k): (v if math.isfinite(v) else None) for k, v in s["final"].items()
                        },  # fmt: skip
                    }
                    for name, s in summary.items()
                },
            }
            for label, summary in summaries.items()
        },
    }


def plot_curves(
    path: Path,
    summaries: Mapping[str, Mapping[str, Mapping[str, Any]]],
    defaults: Mapping[str, float | None],
    *,
    title: str,
) -> None:
    """One panel per dataset: median (line) and IQR (band) per optimizer, default as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(1, len(summaries))
    fig, axes = plt.subplots(1, n, figsize=(6.0 * n, 4.5), squeeze=False, sharey=False)
    for ax, (label, summary) in zip(axes[0], summaries.items(), strict=False):
        finite: list[float] = []
        for i, (name, s) in enumerate(summary.items()):
            color = f"C{i}"
            med = np.where(np.isfinite(s["median"]), s["median"], np.nan)
            lo = np.where(np.isfinite(s["q25"]), s["q25"], np.nan)
            hi = np.where(np.isfinite(s["q75"]), s["q75"], np.nan)
            label_n = f"{name} (n={len(s['final'])})"
            ax.step(s["times"], med, where="post", color=color, label=label_n)
            ax.fill_between(s["times"], lo, hi, step="post", color=color, alpha=0.18, linewidth=0)
            finite.extend(med[np.isfinite(med)].tolist())
        default = defaults.get(label)
        if default is not None:
            ax.axhline(default, color="black", linestyle="--", linewidth=1, label="default config")
            finite.append(default)
        if finite:
            # the tile score is heavy-tailed: one early -7 would flatten every curve that
            # matters, so the axis starts at the default or the 20th percentile of the medians
            top = max(finite)
            bottom = float(np.percentile(finite, 20))
            if default is not None:
                bottom = min(bottom, default)
            pad = 0.05 * (top - bottom) or 0.01
            ax.set_ylim(bottom - pad, top + 3 * pad)
            if min(finite) < bottom - pad:
                ax.text(0.01, 0.01, "axis clipped: lower early medians not shown", fontsize=7,
                        transform=ax.transAxes, va="bottom")  # fmt: skip
        ax.set_xlim(0.0, max(float(s["times"][-1]) for s in summary.values()) if summary else 1.0)
        ax.set_title(label)
        ax.set_xlabel("wall-clock seconds since the optimizer started")
        ax.set_ylabel("best valid score at the largest budget")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
