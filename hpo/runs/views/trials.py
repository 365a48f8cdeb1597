"""Every trial of a run as one flat row: the table Optuna's ``trials_dataframe`` and Ray
Tune's ``get_dataframe`` give their users (``hpo runs trials``).

One row per record of ``trials.jsonl``, for every kind of run: a cross-validated run has one
row per fold (``fold`` names it; ``runs show`` combines them), a per-subset run the rows of
each subset (``subset`` names it). A row's columns are fixed ones (:data:`FIXED_COLUMNS`),
then ``config.<hyperparameter>`` and ``metric.<collection>`` for every hyperparameter and
collection any trial of the run has, so every row of a table has the same columns.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any

from hpo.runs.views.history import RunHistory, Trial
from hpo.runs.views.nested import AnyRun

__all__ = ["FIXED_COLUMNS", "TrialTable", "trial_table"]

#: The columns every table starts with, in order.
FIXED_COLUMNS = (
    "subset",
    "trial",
    "config_id",
    "fold",
    "budget",
    "status",
    "score",
    "start",
    "elapsed",
    "duration",
    "worker",
    "baseline",
    "finish",
    "error",
)


@dataclass(frozen=True)
class TrialTable:
    """The rows of :func:`trial_table`: ``columns`` (names in order) and ``rows`` (dicts)."""

    columns: list[str]
    rows: list[dict[str, Any]]

    def __len__(self) -> int:
        return len(self.rows)


def _iso(epoch: float | None) -> str | None:
    """``epoch`` as ISO 8601 in UTC (seconds), ``None`` for ``None``."""
    if epoch is None:
        return None
    return _dt.datetime.fromtimestamp(epoch, tz=_dt.timezone.utc).isoformat(timespec="seconds")


def _row(run: RunHistory, subset: str | None, t: Trial) -> dict[str, Any]:
    row: dict[str, Any] = {
        "subset": subset,
        "trial": t.trial,
        "config_id": t.config_id,
        "fold": t.instance,
        "budget": t.budget,
        "status": t.status,
        "score": t.score,
        "start": _iso(t.start),
        "elapsed": None if t.start is None else round(run.elapsed(t.start), 3),
        "duration": t.duration,
        "worker": t.worker,
        "baseline": t.baseline,
        "finish": t.finish,
        "error": None if t.ok else t.error_line,
    }
    row.update({f"config.{k}": v for k, v in t.config.items()})
    row.update({f"metric.{k}": v for k, v in t.metrics.items()})
    return row


def trial_table(run: AnyRun) -> TrialTable:
    """Every trial of ``run`` as one row (a per-subset run: each subset's, in plan order).

    Columns a trial lacks (a crashed trial's metrics, a hyperparameter of a conditional
    space) are ``None`` in its row.
    """
    rows = [_row(history, subset, t) for subset, history in run.campaigns() for t in history.trials]
    hyper = dict.fromkeys(k for r in rows for k in r if k.startswith("config."))
    metric = dict.fromkeys(k for r in rows for k in r if k.startswith("metric."))
    columns = [*FIXED_COLUMNS, *hyper, *metric]
    return TrialTable(columns, [{c: r.get(c) for c in columns} for r in rows])
