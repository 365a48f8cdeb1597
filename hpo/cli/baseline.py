"""The baseline and SMAC's setup in ``hpo runs show``: what searched, and what tuning gained.

Apart from :mod:`hpo.cli.runs` to keep that module short. The baseline is the space's
default configuration (or with ``--warm-start`` the first source's best) at the largest
budget, a campaign's first trial; the gain is the
incumbent's score (and per-collection metric) minus the baseline's, so positive is better.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table

from hpo.campaign.progress import format_budget as _b
from hpo.campaign.progress import format_number as _f

if TYPE_CHECKING:
    from rich.console import Console

    from hpo.runs.record.campaign_file import SmacSetup
    from hpo.runs.views.history import RunHistory

__all__ = ["baseline_json", "print_baseline", "smac_line"]


def _gain(tuned: float | None, base: float | None) -> float | None:
    return None if tuned is None or base is None else tuned - base


def baseline_json(run: RunHistory) -> dict[str, Any] | None:
    """The baseline trial and what the incumbent gained over it (incumbent minus baseline)."""
    base, inc = run.baseline, run.incumbent
    if base is None:
        return None
    inc_metrics = {} if inc is None else inc.metrics
    warm = run.record.warm_baseline
    return {
        "trial": base.trial,
        "budget": base.budget,
        "status": base.status,
        "score": base.score,
        "metrics": base.metrics,
        "config": base.config,
        "origin": run.baseline_origin,
        # the same, as fields: which campaign gave a warm baseline, and whether it is the
        # space's default configuration (None: no warm baseline)
        "baseline_run": None if warm is None else warm[0],
        "is_default": None if warm is None else warm[1],
        "folds": base.folds,  # cross-validation: the score is their mean
        "gain": {
            "score": _gain(None if inc is None else inc.score, base.score),
            "metrics": {k: _gain(inc_metrics.get(k), v) for k, v in base.metrics.items()},
        },
    }


def smac_line(smac: SmacSetup | None) -> str:
    """One line naming what searched: SMAC's facade and its parts, with their settings."""
    if smac is None:
        return "searched by: not recorded (a run made before hpo recorded SMAC's setup)"

    def part(key: str, settings: tuple[str, ...]) -> str:
        name, comp = smac.component(key)
        shown = ", ".join(f"{k} {comp[k]}" for k in settings if comp.get(k) is not None)
        return f"{name} ({shown})" if shown else name

    return (
        f"searched by: {smac.facade}; intensifier "
        f"{part('intensifier', ('eta', 'incumbent_selection', 'max_config_calls'))}; "
        f"initial design {part('initial_design', ('n_configs',))}; "
        f"random design {part('random_design', ('probability',))}; "
        f"model {part('model', ())}"
    )


def print_baseline(console: Console, run: RunHistory) -> None:
    """The baseline's score and metrics beside the incumbent's, with the gain."""
    base = baseline_json(run)
    if base is None:
        why = "not on every fold yet" if run.folds else "a run made before baselines"
        console.print(f"baseline: none recorded ({why})", highlight=False)
        return
    inc = run.incumbent
    t = Table(
        title=f"Baseline: {run.baseline_origin} (trial {base['trial']}, budget "
        f"{_b(base['budget'])}, {base['status']}"
        + (f", mean over {len(base['folds'])} folds)" if base["folds"] else ")"),
        title_justify="left",
    )
    for col in ("collection", "baseline", "incumbent", "gain"):
        t.add_column(col, justify="left" if col == "collection" else "right")
    for k, v in base["metrics"].items():
        tuned = None if inc is None else inc.metrics.get(k)
        t.add_row(k, _f(v), _f(tuned), _signed(base["gain"]["metrics"].get(k)))
    t.add_row(
        "score",
        _f(base["score"]),
        _f(None if inc is None else inc.score),
        _signed(base["gain"]["score"]),
        style="bold",
    )
    console.print(t)


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"
