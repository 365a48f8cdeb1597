"""One trial of ``trials.jsonl`` (:class:`Trial`), the one type it is written and read as.

A record of ``trials.jsonl`` is read by :meth:`Trial.from_record` alone, which upgrades what
older runs lack (``finish``: false; ``instance``: none; a ``score`` from the ``cost``), and
written by :meth:`Trial.to_record` alone (:class:`hpo.runs.record.folder.TrialLog`); every other
reader of a trial, the campaign's included, uses the typed fields. The records have no format
number of their own: they change with ``campaign.json``'s (:mod:`hpo.runs.record.campaign_file`).

Kept apart from :mod:`hpo.runs.views.history` (which re-exports them) so that the run history and
the reading of per-subset runs (:mod:`hpo.runs.views.nested`) share them without a cycle.

With cross-validation a trial scores one fold (``instance``);
:func:`hpo.runs.incumbent.combine_folds` makes one trial of a configuration's folds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hpo.errors import ConfigError

__all__ = [
    "TrajectoryPoint",
    "Trial",
    "baseline_record",
    "baseline_records",
    "finite_float",
    "record_problem",
    "trials_of",
]


def finite_float(value: Any) -> float | None:
    """``value`` as a float if it is a finite number, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:  # a JSON integer of 309 digits or more is no float
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


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


#: The keys without which a record is no trial: what was tried and how it ended.
REQUIRED_KEYS = ("config", "status")

#: The highest score a trial can have: every metric is at most 1 (Kendall's tau; the tile
#: score ``2 - min(runtime of the k best-predicted) / min(runtime)``), so is their mean;
#: a successful trial's cost (``1 - score``) is at least 0. The slack is for rounding.
MAX_SCORE = 1.0 + 1e-9


def record_problem(record: Mapping[str, Any]) -> str | None:
    """What makes ``record`` no trial of ``trials.jsonl`` (a key it lacks, a score no metric
    can reach), or ``None``."""
    missing = [key for key in REQUIRED_KEYS if key not in record]
    if missing:
        return f"not a trial record: lacks {', '.join(repr(k) for k in missing)}"
    score = finite_float(record.get("score"))
    if score is not None and score > MAX_SCORE:
        return f"score {score:g} is impossible (no metric exceeds 1)"
    cost = finite_float(record.get("cost"))
    if record.get("status") == "SUCCESS" and cost is not None and cost < 1.0 - MAX_SCORE:
        return f"cost {cost:g} is impossible (1 - score, and no metric exceeds 1)"
    metrics = record.get("metrics")
    for name, value in metrics.items() if isinstance(metrics, Mapping) else ():
        number = finite_float(value)
        if number is not None and number > MAX_SCORE:
            return f"metric {name!r} {number:g} is impossible (no metric exceeds 1)"
    return None


def baseline_record(trials: Sequence[Trial]) -> Trial | None:
    """The trial marked ``"baseline": true``, if any.

    The baseline is a campaign's first trial (with cross-validation the first of its folds)
    at the largest budget: the space's default configuration, or with ``--warm-start`` the
    best configuration of its first source (:attr:`~hpo.runs.record.campaign_file.
    CampaignRecord.baseline_origin`). Runs made before it
    existed have none.
    """
    return next((t for t in trials if t.baseline), None)


def baseline_records(trials: Sequence[Trial]) -> list[Trial]:
    """Every trial marked ``"baseline": true``: one, or one per fold with cross-validation."""
    return [t for t in trials if t.baseline]


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
        Whether this is the baseline (:attr:`~hpo.runs.record.campaign_file.CampaignRecord.
        baseline_origin`): the default configuration or
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

    @property
    def key(self) -> tuple[str, float | None, int | None, str | None]:
        """The trial's identity: (:func:`~hpo.runs.incumbent.config_key`, budget, seed,
        instance); records made before folds existed have no instance and keep theirs."""
        from hpo.runs.incumbent import config_key

        return config_key(self.config), self.budget, self.seed, self.instance

    @property
    def rounds(self) -> tuple[int, int] | None:
        """``(rounds trained, rounds reused)`` over the families, when the objective said so
        (a ``rounds`` fidelity trial that continued a booster reused some)."""
        trained, reused = self.info.get("rounds_trained"), self.info.get("rounds_reused")
        if isinstance(trained, int) and isinstance(reused, int):
            return trained, reused
        return None

    @property
    def reused(self) -> bool:
        """Whether the trial scored a warm start's booster again instead of training
        (:mod:`hpo.campaign.seeding.warm_reuse`): its time says nothing of a training's."""
        return bool(self.info.get("reused"))

    @property
    def blend_shares(self) -> dict[str, dict[str, float]]:
        """``{family: {collection: share}}``: the shares of the learned prior's blend the
        trial chose on the graphs it scored (a collection absent: the whole weight;
        :meth:`hpo.ranking.prior.learned.LearnedPrior.chosen_shares`). For a trial of
        :func:`~hpo.runs.incumbent.combine_folds`, the folds' combined. Empty for a trial that
        blended no prior, one recorded before trials kept them, and a record whose entry is
        not such a mapping (a hand edit: the export then chooses the shares on valid)."""
        recorded = self.info.get("blend_shares")
        if not isinstance(recorded, Mapping):
            return {}
        out: dict[str, dict[str, float]] = {}
        for family, shares in recorded.items():
            if not isinstance(shares, Mapping):
                return {}
            values = {c: finite_float(v) for c, v in shares.items()}
            if any(v is None or not 0 <= v <= 1 for v in values.values()):
                return {}
            out[str(family)] = {str(c): float(v) for c, v in values.items() if v is not None}
        return out

    @property
    def folds(self) -> dict[str, Any] | None:
        """A trial of :func:`~hpo.runs.incumbent.combine_folds`: ``{fold: {trial, score,
        metrics}}``, else ``None``."""
        folds = self.info.get("folds")
        return folds if isinstance(folds, dict) else None

    @property
    def fold_spread(self) -> dict[str, Any]:
        """A combined trial's ``folds``, ``score_std`` and ``n_folds`` (empty for any other)."""
        if "folds" not in self.info:
            return {}
        return {k: self.info.get(k) for k in ("folds", "score_std", "n_folds")}

    def to_record(self) -> dict[str, Any]:
        """The ``trials.jsonl`` record of the trial (the one writer: :class:`~hpo.runs.record.
        folder.TrialLog`)."""
        return {
            "trial": self.trial,
            "config_id": self.config_id,
            "config": self.config,
            "budget": self.budget,
            "instance": self.instance,
            "baseline": self.baseline,
            "finish": self.finish,
            "seed": self.seed,
            "status": self.status,
            "cost": self.cost,
            "score": self.score,
            "metrics": self.metrics,
            "start": self.start,
            "end": self.end,
            "duration": self.duration,
            "worker": self.worker,
            "error": self.error,
            "info": self.info,
        }

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
