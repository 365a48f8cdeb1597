"""Figures of runs (matplotlib, Agg backend, imported only when a figure is drawn).

- :func:`plot_run`: one run on four panels: the incumbent's validation score (the best at the
  highest budget so far, :meth:`~hpo.runs.views.history.RunHistory.incumbent_trajectory`, as
  ``runs list`` and ``runs show`` give it) over wall time and over trials (every trial a dot
  coloured by its budget, failed ones crosses at the bottom), the incumbent's validation
  metrics per collection, and the hyperparameter importance.
- :func:`plot_subsets`: a per-subset run, one best-score-over-time panel per subset.
- :func:`plot_compare`: the any-time curves (the incumbent's score vs wall time) of runs.

A figure replaces a file at its path only if hpo wrote that file (:mod:`hpo.ownership`):
every PNG, PDF, SVG and PostScript figure records :data:`FIGURE_CREATOR` as its creator
(PNG text, PDF info, SVG metadata, the PostScript header), and :func:`is_hpo_figure` looks for
it. Formats without such metadata (JPEG, TIFF, ...) are written where nothing is; so is a
figure named by a symlink, which is never replaced. ``runs compare`` once replaced any
``compare.png`` in the working directory, and a text file named ``notes.png``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpo.errors import UsageError
from hpo.ownership import check_replaceable
from hpo.runs.record.campaign_file import is_run_folder
from hpo.runs.record.folder import write_file_atomic
from hpo.runs.views.history import RunHistory, Trial
from hpo.runs.views.importance import Importance, hyperparameter_importance
from hpo.runs.views.nested import SubsetRun

__all__ = [
    "FIGURE_CREATOR",
    "RUN_FIGURE",
    "compare_label",
    "is_hpo_figure",
    "plot_compare",
    "plot_run",
    "plot_subsets",
]

_DPI = 110
#: The creator every figure hpo writes records in its metadata: what proves it is hpo's.
FIGURE_CREATOR = "hpo runs plot/compare"
#: The figure ``hpo runs plot`` writes in a run folder by default.
RUN_FIGURE = "run.png"
#: The formats whose metadata holds a creator, by the bytes each file starts with.
_SIGNATURES = {
    "png": b"\x89PNG\r\n\x1a\n",
    "pdf": b"%PDF-",
    "svg": b"<?xml",
    "ps": b"%!PS",
    "eps": b"%!PS",
}
#: Bytes read at each end of a file for the creator (PNG, SVG and PostScript keep it near
#: the start, PDF near the end).
_CREATOR_WINDOW = 1 << 16


def _ends(path: Path) -> tuple[bytes, bytes]:
    """The first and last :data:`_CREATOR_WINDOW` bytes of ``path`` (empty if unreadable)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_CREATOR_WINDOW)
            fh.seek(max(0, fh.seek(0, 2) - _CREATOR_WINDOW))
            return head, fh.read()
    except OSError:
        return b"", b""


def is_hpo_figure(path: Path) -> bool:
    """Whether the file ``path`` is a figure hpo wrote: a PNG, PDF, SVG or PostScript file (by
    its suffix and first bytes) whose metadata names :data:`FIGURE_CREATOR`."""
    signature = _SIGNATURES.get(Path(path).suffix[1:].lower())
    if signature is None:
        return False
    head, tail = _ends(path)
    creator = FIGURE_CREATOR.encode()
    return head.startswith(signature) and (creator in head or creator in tail)


def _replaceable(path: Path) -> bool:
    """A figure hpo wrote, or the PNG ``runs plot`` keeps in a run folder (written before
    figures recorded their creator; nothing else writes there)."""
    if is_hpo_figure(path):
        return True
    return (
        path.name == RUN_FIGURE
        and is_run_folder(path.parent)
        and _ends(path)[0].startswith(_SIGNATURES["png"])
    )


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out_png: Path | str) -> Path:
    """Write ``fig`` to ``out_png`` (its suffix names the format; none: matplotlib's default,
    added as matplotlib adds it), refusing a folder or a suffix matplotlib cannot write (once
    matplotlib's ValueError), and a file there hpo did not write (see the module's
    docstring), and close it. Written whole or not at all: a disk that refuses it is one line
    (:func:`~hpo.runs.record.folder.write_file_atomic`)."""
    try:
        out = Path(out_png)
        formats = fig.canvas.get_supported_filetypes()
        if out.is_dir() or (out.suffix and out.suffix[1:].lower() not in formats):
            what = "is a folder" if out.is_dir() else f"'{out.suffix}' is not an image format"
            raise UsageError(f"--out {out}: {what} (use .png, or one of {', '.join(formats)})")
        fmt = out.suffix[1:].lower() or str(_pyplot().rcParams["savefig.format"])
        out = out if out.suffix else out.with_name(f"{out.name}.{fmt}")
        check_replaceable(out, "--out", kind="figure", owned=_replaceable)
        meta = {"metadata": {"Creator": FIGURE_CREATOR}} if fmt in _SIGNATURES else {}
        write_file_atomic(out, lambda tmp: fig.savefig(tmp, format=fmt, **meta), option="--out")
    finally:
        _pyplot().close(fig)
    return out


def _time_unit(seconds: float) -> tuple[float, str]:
    return (3600.0, "h") if seconds >= 7200 else (60.0, "min") if seconds >= 120 else (1.0, "s")


def _step(points: list[tuple[float, float]], end: float) -> tuple[list[float], list[float]]:
    """A best-so-far step curve extended to ``end``."""
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    if points and end > xs[-1]:
        xs.append(end)
        ys.append(ys[-1])
    return xs, ys


_DISCRETE_BUDGETS = 8


def _budget_colors(run: RunHistory) -> tuple[dict[float, Any], Any, Any]:
    """Colour per budget: a discrete palette for few budgets, else a (log) colour scale.

    Returns ``(palette, cmap, norm)``; ``palette`` is empty when the scale is continuous.
    """
    import matplotlib as mpl
    from matplotlib.colors import LogNorm, Normalize

    budgets = run.budgets or [1.0]
    low, high = min(budgets), max(budgets)
    cmap = mpl.colormaps["viridis"]
    if len(budgets) <= _DISCRETE_BUDGETS:
        steps = np.linspace(0.0, 0.85, len(budgets)) if len(budgets) > 1 else [0.45]
        return {b: cmap(float(x)) for b, x in zip(budgets, steps, strict=True)}, cmap, None
    if low > 0 and high / low > 8:
        return {}, cmap, LogNorm(vmin=low, vmax=high)
    return {}, cmap, Normalize(vmin=low, vmax=high)


def _clip_outliers(ax: Any, ok: Sequence[Trial], x_of: Callable[[Trial], float]) -> None:
    """Keep the y axis on the scores that matter: a few disastrous trials (the tile score can
    reach -30) would squash every other point into one line. Scores far below the median are
    drawn as triangles at the bottom edge, with their count and minimum in the legend."""
    scores = np.array([t.score for t in ok], dtype=float)
    if scores.size < 4:
        return
    best, median = float(scores.max()), float(np.median(scores))
    floor = median - 3.0 * max(best - median, 0.02)
    low = [t for t in ok if t.score is not None and t.score < floor]
    if not low:
        return
    pad = 0.05 * (best - floor)
    ax.set_ylim(floor - pad, best + pad)
    label = f"{len(low)} trials below {floor:.2f} (min {scores.min():.2f})"
    xs, ys = [x_of(t) for t in low], [floor - pad / 2] * len(low)
    ax.scatter(xs, ys, marker="v", color="0.35", s=28, zorder=3, label=label)


def _panel_progress(ax: Any, run: RunHistory, over_time: bool, colors: tuple) -> Any:
    from matplotlib.ticker import MaxNLocator

    palette, cmap, norm = colors
    ok = run.successful
    traj = run.incumbent_trajectory()
    last_end = max((run.elapsed(t.end) for t in run.trials), default=1.0)
    scale, unit = _time_unit(last_end)

    def x_of(t: Trial) -> float:
        return run.elapsed(t.end) / scale if over_time else float(t.trial)

    if over_time:
        points = [(p.elapsed / scale, p.score) for p in traj]
        end = last_end / scale
        ax.set_xlabel(f"campaign time since start [{unit}] (idle time before resumes left out)")
        ax.set_title("Incumbent's validation score over wall time")
    else:
        points = [(float(p.trial), p.score) for p in traj]
        end = float(max((t.trial for t in run.trials), default=1))
        ax.set_xlabel("trial")
        ax.set_title("Incumbent's validation score over trials")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if points:
        sx, sy = _step(points, end)
        ax.step(sx, sy, where="post", color="crimson", lw=1.6, label="incumbent", zorder=2)
    base = run.baseline
    if base is not None and base.score is not None:  # what tuning has to beat
        ax.axhline(
            base.score, color="0.2", ls="--", lw=1.1, zorder=2, label=f"baseline {base.score:.3f}"
        )
    mappable = None
    if palette:
        for budget, color in palette.items():
            these = [t for t in ok if t.budget == budget]
            if these:
                ax.scatter(
                    [x_of(t) for t in these],
                    [t.score for t in these],
                    color=color,
                    s=26,
                    edgecolors="white",
                    linewidths=0.4,
                    zorder=3,
                    label=f"trial, budget {budget:g}",
                )
    elif ok:
        mappable = ax.scatter(
            [x_of(t) for t in ok],
            [t.score for t in ok],
            c=[t.budget or 0.0 for t in ok],
            cmap=cmap,
            norm=norm,
            s=26,
            edgecolors="white",
            linewidths=0.4,
            zorder=3,
            label="trial",
        )
    _clip_outliers(ax, ok, x_of)
    failed = run.crashed
    if failed:  # at the bottom edge: a failed trial has no score
        ax.scatter(
            [x_of(t) for t in failed],
            [0.03] * len(failed),
            marker="x",
            color="0.3",
            s=30,
            transform=ax.get_xaxis_transform(),
            label="failed trial",
            zorder=3,
        )
    if over_time:
        ax.set_xlim(0.0, max(end, 1e-9) * 1.03)
    else:
        ax.set_xlim(0.5, end + 0.5)
    ax.set_ylabel("validation score (higher is better)")
    ax.grid(alpha=0.3)
    if ok:
        ax.legend(loc="best", fontsize=8, framealpha=0.9)
    else:
        ax.set_yticks([])
        ax.text(0.5, 0.5, "no successful trial", ha="center", va="center", transform=ax.transAxes)
        if failed:
            ax.legend(loc="upper right", fontsize=8)
    return mappable


def _panel_metrics(ax: Any, run: RunHistory) -> None:
    inc = run.incumbent
    if inc is None or not inc.metrics:
        ax.set_title("Incumbent: validation metric per collection")
        ax.text(0.5, 0.5, "no incumbent yet", ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    names = list(inc.metrics)
    values = [inc.metrics[n] for n in names]
    bars = ax.barh(range(len(names)), values, color="tab:blue")
    ax.set_yticks(range(len(names)), labels=names)
    ax.invert_yaxis()
    ax.axvline(0.0, color="0.3", lw=0.8)
    ax.set_xlabel("Kendall tau (layout) / top-5 tile score (tile)")
    _label_bars(ax, bars, values, negative_ha="right")
    base = run.baseline
    if base is not None and base.metrics:  # the baseline (run.baseline_origin), per collection
        rows = [i for i, n in enumerate(names) if n in base.metrics]
        marks = [base.metrics[names[i]] for i in rows]
        ax.scatter(marks, rows, marker="|", s=400, color="0.1", zorder=3)
        values = values + marks
    ax.set_xlim(min(0.0, min(values) * 1.2), max(1.0, max(values) * 1.15))
    budget = "?" if inc.budget is None else f"{inc.budget:g}"
    marked = "; black tick: baseline" if base is not None and base.metrics else ""
    ax.set_title(
        f"Incumbent (trial {inc.trial}, budget {budget}, score {inc.score:.3f}): "
        f"validation metric per collection{marked}",
        fontsize=10 if marked else None,
    )
    ax.grid(axis="x", alpha=0.3)


def _label_bars(ax: Any, bars: Any, values: list[float], *, negative_ha: str) -> None:
    """Write each bar's value at its end (left of it for a negative value: ``negative_ha``)."""
    for bar, v in zip(bars, values, strict=True):
        ax.text(
            bar.get_width(),
            bar.get_y() + bar.get_height() / 2,
            f" {v:.3f}",
            va="center",
            ha="left" if v >= 0 else negative_ha,
            fontsize=8,
        )


def _panel_importance(ax: Any, imp: Importance) -> None:
    ax.set_title(f"Hyperparameter importance ({imp.method}, {imp.n_trials} trials)")
    if not imp.ok or not imp.values:
        ax.text(
            0.5,
            0.5,
            imp.message or "no importance",
            ha="center",
            va="center",
            transform=ax.transAxes,
            wrap=True,
        )
        ax.set_axis_off()
        return
    names = list(imp.values)
    values = [imp.values[n] for n in names]
    bars = ax.barh(range(len(names)), values, color="tab:orange")
    _label_bars(ax, bars, values, negative_ha="left")
    ax.set_yticks(range(len(names)), labels=names)
    ax.invert_yaxis()
    ax.set_xlabel("share of explained score variance")
    ax.set_xlim(0.0, max(values) * 1.15 if max(values) > 0 else 1.0)
    ax.grid(axis="x", alpha=0.3)


def plot_run(run: RunHistory, out_png: Path | str, *, importance: Importance | None = None) -> Path:
    """Draw the four-panel figure of one run into ``out_png``.

    Parameters
    ----------
    run
        A loaded run.
    out_png
        The PNG file to write.
    importance
        Precomputed importance (computed from the run when ``None``).

    Returns
    -------
    Path
        ``out_png``.
    """
    plt = _pyplot()
    imp = importance if importance is not None else hyperparameter_importance(run)
    fig, axes = plt.subplots(2, 2, figsize=(14, 9.5), dpi=_DPI, layout="constrained")
    colors = _budget_colors(run)
    mappable = _panel_progress(axes[0, 0], run, True, colors)
    _panel_progress(axes[0, 1], run, False, colors)
    _panel_metrics(axes[1, 0], run)
    _panel_importance(axes[1, 1], imp)
    if mappable is not None:
        from matplotlib.colors import LogNorm
        from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

        bar = fig.colorbar(mappable, ax=axes[0, :].tolist(), fraction=0.025, pad=0.02)
        bar.set_label(f"budget ({run.fidelity})")
        if isinstance(colors[2], LogNorm):
            bar.ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        bar.ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        bar.ax.yaxis.set_minor_formatter(NullFormatter())
    n_failed = len(run.crashed)
    fig.suptitle(
        f"Run '{run.name}': {run.optimizer}, fidelity {run.fidelity}, {len(run.trials)} trials "
        f"({n_failed} failed), {run.state}",
        fontsize=13,
    )
    return _save(fig, out_png)


def plot_subsets(run: SubsetRun, out_png: Path | str) -> Path:
    """Draw one panel per subset of a per-subset run (its trials and best score over wall
    time, titled with its incumbent's score) into ``out_png``; returns ``out_png``."""
    plt = _pyplot()
    n = max(1, len(run.plan))
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(5.5 * cols, 4.2 * rows), dpi=_DPI, layout="constrained", squeeze=False
    )
    for ax, name in zip(axes.flat, run.plan, strict=False):
        sub = run.subsets.get(name)
        if sub is None:
            ax.text(0.5, 0.5, "not started", ha="center", va="center", transform=ax.transAxes)
            ax.set_title(name)
            continue
        _panel_progress(ax, sub, True, _budget_colors(sub))
        inc = sub.incumbent
        shown = "no incumbent" if inc is None else f"incumbent {inc.score:.3f} (trial {inc.trial})"
        ax.set_title(f"{name}: {shown}", fontsize=10)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    score = "-" if run.score is None else f"{run.score:.4f}"
    fig.suptitle(
        f"Run '{run.name}': {run.optimizer} per {run.per}, {run.n_trials} trials, {run.state}; "
        f"combined score {score}",
        fontsize=13,
    )
    return _save(fig, out_png)


def compare_label(run: RunHistory) -> str:
    """A run's curve in ``runs compare``: ``<run> (<optimizer>)``, and the older layout metric
    when its trials were scored by one (its layout scores are not comparable with today's)."""
    older = ", older layout metric" if run.older_layout_metric else ""
    return f"{run.name} ({run.optimizer}{older})"


def plot_compare(runs: Sequence[RunHistory], out_png: Path | str) -> Path:
    """Overlay the any-time curves (best score vs wall time) of several runs.

    Parameters
    ----------
    runs
        Loaded runs; each is one curve named by :func:`compare_label`.
    out_png
        The PNG file to write.

    Returns
    -------
    Path
        ``out_png``.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 6), dpi=_DPI, layout="constrained")
    longest = max(
        (r.elapsed(t.end) for r in runs for t in r.trials if t.end is not None), default=1.0
    )
    scale, unit = _time_unit(longest)
    for run in runs:
        traj = run.incumbent_trajectory()
        label = compare_label(run)
        if not traj:
            ax.plot([], [], label=f"{label}: no successful trial")
            continue
        end = max((run.elapsed(t.end) for t in run.trials), default=0.0) / scale
        xs, ys = _step([(p.elapsed / scale, p.score) for p in traj], end)
        line = ax.step(xs, ys, where="post", lw=2, label=f"{label}: incumbent {ys[-1]:.3f}")[0]
        ax.scatter(xs[: len(traj)], ys[: len(traj)], s=18, color=line.get_color(), zorder=3)
        base = run.baseline
        if base is not None and base.score is not None:
            ax.axhline(base.score, color=line.get_color(), ls="--", lw=1.0, alpha=0.7)
    ax.set_xlim(left=0.0)
    ax.set_xlabel(f"campaign time since start [{unit}] (idle time before resumes left out)")
    ax.set_ylabel("incumbent's validation score (best at the highest budget so far)")
    ax.set_title("Any-time performance: the incumbent's validation score vs wall time")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=9, title="run (optimizer); dashed: its baseline")
    return _save(fig, out_png)
