"""One trial of ``trials.jsonl`` as read back (:class:`Trial`), and the trajectory's point.

Kept apart from :mod:`hpo.runs.views.history` (which re-exports them) so that the run history and
the reading of per-subset runs (:mod:`hpo.runs.views.nested`) share them without a cycle.

With cross-validation a trial scores one fold (``instance``);
:func:`hpo.runs.incumbent.combine_folds` makes one trial of a configuration's folds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hpo.errors import ConfigError, HpoError

__all__ = [
    "TrajectoryPoint",
    "Trial",
    "baseline_origin",
    "baseline_record",
    "baseline_records",
    "finite_float",
    "trials_of",
    "warm_baseline",
    "warm_baseline_is_default",
]


def finite_float(value: Any) -> float | None:
    """``value`` as a float if it is a finite number, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _mapping(record: Mapping[str, Any], key: str, position: int) -> dict[str, Any]:
    """``record[key]`` as a dict (``{}`` when absent or null)."""
    value = record.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"trial {position}: key '{key}': expected a JSON object, found "
            f"{type(value).__name__} {str(value)[:40]!r}"
        )
    return dict(value)


def baseline_record(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The ``trials.jsonl`` record marked ``"baseline": true``, if any.

    The baseline is a campaign's first trial (with cross-validation the first of its folds)
    at the largest budget: the space's default configuration, or with ``--warm-start`` the
    best configuration of its first source (:func:`baseline_origin`). Runs made before it
    existed have none.
    """
    return next((r for r in records if r.get("baseline") is True), None)


def warm_baseline_is_default(campaign: Mapping[str, Any]) -> bool:
    """Whether a warm start's baseline (the first source's best, mapped onto the run's space)
    is that space's default configuration: the source never beat the default.

    The ``warm_start`` record says it (``baseline_is_default``). A record written before it
    did is compared with the default of the space saved beside it, so a run warm-started
    earlier is labelled the same way; ``False`` when that space cannot be read.
    """
    warm = campaign.get("warm_start")
    if not isinstance(warm, Mapping) or not isinstance(warm.get("baseline"), Mapping):
        return False
    flag = warm.get("baseline_is_default")
    if isinstance(flag, bool):
        return flag
    from hpo.ranking.spaces import space_from_dict
    from hpo.runs.incumbent import config_key

    try:
        default = dict(space_from_dict(campaign.get("space")).get_default_configuration())
    except HpoError:
        return False
    return config_key(warm["baseline"]) == config_key(default)


def warm_baseline(campaign: Mapping[str, Any]) -> tuple[str, bool] | None:
    """The warm start's baseline of a ``campaign.json``, as ``(source run, is the default)``;
    ``None`` when the baseline is the space's default configuration (no warm baseline).

    The one place that reads it: the labels of the summary, ``runs show`` (and its JSON) and
    the campaign's start-up log all come from here.
    """
    warm = campaign.get("warm_start")
    if not isinstance(warm, Mapping) or not isinstance(warm.get("baseline"), Mapping):
        return None
    return str(warm.get("baseline_run") or "an earlier run"), warm_baseline_is_default(campaign)


def baseline_origin(campaign: Mapping[str, Any]) -> str:
    """What a run's baseline is, from its ``campaign.json``: ``"default configuration"``, or
    ``"warm start: best of RUN"`` when a warm start's best took the default's place.

    When that best is the space's default (:func:`warm_baseline_is_default`), the label says
    so, ``"warm start: best of RUN = the default configuration"``: without it a reader would
    take the baseline for a tuned configuration.
    """
    warm = warm_baseline(campaign)
    if warm is None:
        return "default configuration"
    run, is_default = warm
    return f"warm start: best of {run}" + (" = the default configuration" if is_default else "")


def baseline_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every record marked ``"baseline": true``: one, or one per fold with cross-validation."""
    return [r for r in records if r.get("baseline") is True]


@dataclass(frozen=True)
class Trial:
    """One finished trial of ``trials.jsonl``.

    Attributes
    ----------
    trial
        1-based position in the log.
    config
        Hyperparameters (a flat mapping).
    budget
        Fidelity value the trial was trained at (``None`` if not recorded).
    status
        SMAC status name (``SUCCESS``, ``CRASHED``, ``TIMEOUT`` ...).
    score
        Mean validation metric over the campaign's collections (higher is better);
        ``None`` for a failed trial.
    metrics
        ``{collection: metric}`` on the valid split.
    start, end
        Epoch seconds.
    error
        Traceback or reason of a failed trial.
    baseline
        Whether this is the baseline (:func:`baseline_origin`): the default configuration or
        a warm start's best, at the largest budget, evaluated first.
    finish
        Whether the campaign's finishing phase ran it: a promising configuration taken to
        the largest budget after SMAC's loop (:mod:`hpo.campaign.lifecycle.finish`).
    instance
        The cross-validation fold scored (``fold0`` ...); ``None`` without folds and for a
        trial of :func:`combine_folds` (whose ``info["folds"]`` holds each fold's).
    """

    trial: int
    config: dict[str, Any]
    budget: float | None
    status: str
    score: float | None = None
    cost: float | None = None
    metrics: dict[str, float] = field(default_factory=dict)
    seed: int | None = None
    config_id: int | None = None
    start: float | None = None
    end: float | None = None
    duration: float | None = None
    worker: str | None = None
    error: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    baseline: bool = False
    instance: str | None = None
    finish: bool = False

    @property
    def ok(self) -> bool:
        """Whether the trial succeeded with a finite score."""
        return self.status == "SUCCESS" and self.score is not None

    @property
    def error_line(self) -> str:
        """The last non-empty line of the error (the exception message), or the status."""
        lines = [ln.strip() for ln in str(self.error or "").splitlines() if ln.strip()]
        return lines[-1] if lines else self.status

    @classmethod
    def from_record(cls, record: Mapping[str, Any], position: int) -> Trial:
        """Build a trial from one ``trials.jsonl`` record (missing keys become ``None``).

        Raises
        ------
        ConfigError
            If ``config``, ``metrics`` or ``info`` is there but not a JSON object.
        """
        config = _mapping(record, "config", position)
        metrics = _mapping(record, "metrics", position)
        info = _mapping(record, "info", position)
        score = finite_float(record.get("score"))
        cost = finite_float(record.get("cost"))
        if score is None and cost is not None and record.get("status") == "SUCCESS":
            score = 1.0 - cost
        seed = record.get("seed")
        config_id = record.get("config_id")
        trial = record.get("trial")
        return cls(
            trial=int(trial) if isinstance(trial, int) else position,
            config=config,
            budget=finite_float(record.get("budget")),
            status=str(record.get("status") or "UNKNOWN"),
            score=score,
            cost=cost,
            metrics={str(k): float(v) for k, v in metrics.items() if finite_float(v) is not None},
            seed=seed if isinstance(seed, int) else None,
            config_id=config_id if isinstance(config_id, int) else None,
            start=finite_float(record.get("start")),
            end=finite_float(record.get("end")),
            duration=finite_float(record.get("duration")),
            worker=None if record.get("worker") is None else str(record.get("worker")),
            error=None if record.get("error") is None else str(record.get("error")),
            info=info,
            baseline=record.get("baseline") is True,
            instance=record.get("instance") if isinstance(record.get("instance"), str) else None,
            finish=record.get("finish") is True,
        )


@dataclass(frozen=True)
class TrajectoryPoint:
    """A new best score: ``elapsed`` seconds after the start, reached by ``trial``."""

    elapsed: float
    trial: int
    budget: float | None
    score: float


def trials_of(records: list[dict[str, Any]]) -> list[Trial]:
    """The trials of ``trials.jsonl`` records in log order, numbered from 1 where a record
    has no ``trial`` (as :meth:`Trial.from_record` reads one)."""
    return [Trial.from_record(r, i) for i, r in enumerate(records, start=1)]
