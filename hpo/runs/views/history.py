"""Reading run folders: settings, trials, state, incumbent, trajectory.

A run folder ``runs/<name>/`` (see ``docs/ARCHITECTURE.md``) holds ``campaign.json`` (the
frozen campaign config), ``trials.jsonl`` (one record per finished trial), ``lock.json``
while a campaign process is alive and ``result.json`` once it has ended. Everything here
only reads: a run can be inspected while its campaign is still running.

The incumbent is chosen by :func:`hpo.runs.incumbent.choose_incumbent` (the best successful
trial at the highest budget any successful trial reached); when the campaign has ended,
``result.json`` names SMAC's choice, which that function honours.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Never, TypeVar

from hpo.errors import ConfigError, UsageError
from hpo.runs.incumbent import choose_incumbent, combine_folds, config_key, rule_order
from hpo.runs.record.campaign_file import CampaignRecord, SmacSetup
from hpo.runs.record.folder import (
    CAMPAIGN_FILE,
    ENSEMBLE_FILE,
    RESULT_FILE,
    TRIALS_FILE,
    read_json,
    read_trials,
    run_state,
)
from hpo.runs.record.settings import RunSettings, SettingsView, read_run_campaign
from hpo.runs.record.trial import TrajectoryPoint, Trial, baseline_record, trials_of

__all__ = [
    "DEFAULT_RUNS_DIR",
    "RunHistory",
    "TrajectoryPoint",
    "Trial",
    "baseline_record",
    "load_run",
    "resolve_run_dir",
]

DEFAULT_RUNS_DIR = Path("runs")

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class RunHistory(SettingsView):
    """Everything recorded in one run folder.

    Attributes
    ----------
    name
        Folder name.
    path
        The run folder.
    settings
        The campaign's settings, typed (``data_root``, ``collections``, ``optimizer``, ...).
    record
        The whole ``campaign.json`` (settings, search space, data fingerprint, versions).
    state
        ``running``, ``finished`` or ``interrupted``.
    trials
        De-duplicated trials in log order.
    result
        ``result.json`` when the campaign has ended, else ``None``.
    logged
        How many records ``trials.jsonl`` holds, repeats included (``None``: not counted).
    """

    name: str
    path: Path
    settings: RunSettings
    record: CampaignRecord
    state: str
    trials: tuple[Trial, ...]
    result: dict[str, Any] | None
    logged: int | None = None

    # ---- the interface a per-subset run shares (hpo.runs.views.nested.SubsetRun) -----------------
    @property
    def kind(self) -> Literal["single"]:
        """``"single"``: one campaign (a per-subset run says ``"subsets"``)."""
        return "single"

    @property
    def members(self) -> dict[str, RunHistory]:
        """``{prefix: campaign}`` of what a model folder holds: this one run, prefix ``""``."""
        return {"": self}

    def curves(self) -> list[RunHistory]:
        """The campaigns ``runs compare`` draws: this one."""
        return [self]

    def campaigns(self) -> list[tuple[str | None, RunHistory]]:
        """``(subset, campaign)`` of every started campaign: this one, of no subset."""
        return [(None, self)]

    def by_kind(self, single: Callable[[RunHistory], T], subsets: Callable[[Never], T]) -> T:
        """The variant of an operation a later stage owns, for this kind: ``single(self)``."""
        return single(self)

    # ---- as the folder of one campaign, before it is loaded (the class nested.run_type picks)
    @classmethod
    def load(cls, path: Path) -> RunHistory:
        """The run folder ``path`` loaded (:func:`load_run`)."""
        return load_run(path)

    @staticmethod
    def warm_folders(path: Path, subset: str | None) -> list[Path]:
        """The single-campaign folders the run ``path`` stands for as a ``--warm-start``
        source of the campaign ``subset``: its own."""
        return [path]

    @staticmethod
    def warm_source(path: Path, subset: str) -> Path:
        """The source of the subset campaign ``subset``: the run ``path`` itself."""
        return path

    @staticmethod
    def gives_baseline(path: Path, subset: str | None) -> bool:
        """Whether the best of the run ``path`` may be the baseline of the campaign
        ``subset``: always, as one campaign for it."""
        return True

    @staticmethod
    def name_inside(folder: Path) -> str:
        """The name of the campaign ``folder`` inside a run folder of this kind: its own
        (one campaign holds no campaigns)."""
        return folder.name

    @staticmethod
    def check_inner_extension(path: Path, name: str) -> None:
        """A campaign ``name`` inside the run ``path`` extended alone: nothing to refuse."""

    # ---- baseline and SMAC setup ----------------------------------------------------------
    @property
    def baseline(self) -> Trial | None:
        """The baseline trial (:attr:`baseline_origin`, largest budget), ``None`` if none.

        With cross-validation, its folds combined (mean score), once every fold succeeded.
        """
        return next((t for t in self.scored if t.baseline), None)

    @property
    def baseline_origin(self) -> str:
        """What the baseline is: the default configuration, or a warm start's best."""
        return self.record.baseline_origin

    @property
    def smac(self) -> SmacSetup | None:
        """SMAC's facade and components that searched (``campaign.json`` key ``smac``)."""
        return self.record.smac

    # ---- settings (optimizer, collections, fidelity, per, folds: SettingsView) ---------
    @property
    def space(self) -> dict[str, Any] | None:
        """The search space (ConfigSpace serialisation) if ``campaign.json`` holds one."""
        value = self.record.space
        return value if value is not None and "hyperparameters" in value else None

    @property
    def started(self) -> float | None:
        """Epoch seconds the campaign started (``created``, else the first trial's start)."""
        starts = [t.start for t in self.trials if t.start is not None]
        created = self.record.created
        if created is not None and (not starts or created <= min(starts)):
            return created
        return min(starts) if starts else created

    def elapsed(self, epoch: float | None) -> float:
        """Seconds of the campaign's own time from its start to ``epoch`` (0 for ``None``).

        A resumed campaign (interrupted, or extended with ``hpo run --resume NAME --walltime
        ...``; each resume is recorded under ``resumes`` in ``campaign.json``) is not charged
        the idle time between its last trial before a resume and the resume's start, as SMAC
        does not charge it to the walltime; so its curves read as one campaign's. The
        start-up of a resume that went on to run trials counts; one that failed before a
        trial does not (its span merges with the next).
        """
        if epoch is None:
            return 0.0
        idle = sum(max(0.0, min(epoch, hi) - lo) for lo, hi in self._idle if lo < epoch)
        return max(0.0, epoch - (self.started or 0.0) - idle)

    @functools.cached_property
    def _idle(self) -> list[tuple[float, float]]:
        """The idle spans :meth:`elapsed` leaves out, merged: two resumes with no trial
        between them (a start-up that failed, say) share their span, counted once."""
        spans = []
        for resume in self.record.resumes:
            at, n = resume.at, resume.records or 0
            ends = [t.end for t in self.trials if t.end is not None and t.trial <= n]
            if at is not None and ends and max(ends) < at:
                spans.append((max(ends), at))
        merged: list[tuple[float, float]] = []
        for lo, hi in sorted(spans):
            if merged and lo <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        return merged

    # ---- trials --------------------------------------------------------------------------
    @property
    def successful(self) -> list[Trial]:
        """Trials that succeeded."""
        return [t for t in self.trials if t.ok]

    @property
    def scored(self) -> list[Trial]:
        """What the run's results are read from: the successful trials, or with
        cross-validation each configuration's folds combined (:func:`combine_folds`)."""
        return combine_folds(self.trials, self.folds) if self.folds else self.successful

    @property
    def crashed(self) -> list[Trial]:
        """Trials that failed (crashed, timed out, ...), with their errors."""
        return [t for t in self.trials if not t.ok]

    @property
    def lost_trials(self) -> int:
        """How many trials ``result.json`` counts that ``trials.jsonl`` no longer holds (0
        before the end): a log cut or edited after the campaign ended."""
        counted = (self.result or {}).get("n_trials")
        if self.logged is None or isinstance(counted, bool) or not isinstance(counted, int):
            return 0
        return max(counted - self.logged, 0)

    @property
    def budgets(self) -> list[float]:
        """Distinct budgets of all trials, ascending."""
        return sorted({t.budget for t in self.trials if t.budget is not None})

    def trials_per_budget(self) -> dict[float | None, dict[str, int]]:
        """``{budget: {"total", "success", "failed"}}``, budgets ascending."""
        out: dict[float | None, dict[str, int]] = {}
        keys: list[float | None] = [*self.budgets]
        if any(t.budget is None for t in self.trials):
            keys.append(None)
        for b in keys:
            these = [t for t in self.trials if t.budget == b]
            ok = sum(t.ok for t in these)
            out[b] = {"total": len(these), "success": ok, "failed": len(these) - ok}
        return out

    @property
    def incumbent(self) -> Trial | None:
        """The incumbent trial (:func:`~hpo.runs.incumbent.choose_incumbent`); ``None``
        without a success.

        ``result.json``'s incumbent is honoured when it was validated at the highest budget;
        when the log lacks every trial of it (a log cut short), it becomes a trial of its own.
        """
        res = self.result or {}
        named = res.get("incumbent")
        if not isinstance(named, dict) or not named:
            return choose_incumbent(self.trials, folds=self.folds)
        trial = res.get("trial")
        named_trial = trial if isinstance(trial, int) else None
        key = config_key(named)
        if any(config_key(t.config) == key for t in self.scored):
            return choose_incumbent(self.trials, named, named_trial=named_trial, folds=self.folds)
        record = {**res, "config": named, "status": "SUCCESS", "trial": named_trial or 0}
        return Trial.from_record(record, position=0)

    @property
    def ensemble(self) -> dict[str, Any] | None:
        """The last ensemble exported from the run (``ensemble.json``: ``model``, ``k``,
        ``trials``, ``score``, ``metrics``, ``incumbent_score``), ``None`` if none was."""
        path = self.path / ENSEMBLE_FILE
        data = read_json(path) if path.is_file() else None
        return data if isinstance(data, dict) else None

    def trajectory(self) -> list[TrajectoryPoint]:
        """Each new best score over all successful trials, in order of finishing.

        This is the best score at *any* budget so far; it mixes budgets, so its last point
        can differ from the incumbent (:meth:`incumbent_trajectory` is the rule's curve).
        With cross-validation a point is a configuration's mean over the folds, when its last
        fold finished.
        """
        ok = sorted(self.scored, key=lambda t: (t.end if t.end is not None else 0.0, t.trial))
        out: list[TrajectoryPoint] = []
        best = -math.inf
        for t in ok:
            assert t.score is not None
            if t.score > best:
                best = t.score
                out.append(TrajectoryPoint(self.elapsed(t.end), t.trial, t.budget, t.score))
        return out

    def incumbent_trajectory(self) -> list[TrajectoryPoint]:
        """The incumbent over time: a point each time the rule's choice among the trials
        finished so far changes (:func:`~hpo.runs.incumbent.choose_incumbent`).

        Unlike :meth:`trajectory` it never compares scores across budgets, so it can fall when
        a first trial reaches a higher budget; its last point is the score ``runs list`` and
        ``runs show`` give the run, so ``runs plot`` and ``runs compare`` draw this curve.
        """
        ok = sorted(self.scored, key=lambda t: (t.end if t.end is not None else 0.0, t.trial))
        out: list[TrajectoryPoint] = []
        best = (-math.inf, -math.inf)
        for t in ok:
            assert t.score is not None
            order = rule_order(t)
            if order > best:
                best = order
                out.append(TrajectoryPoint(self.elapsed(t.end), t.trial, t.budget, t.score))
        return out

    def top(self, n: int = 5) -> list[Trial]:
        """The ``n`` best configurations, each by its trial at its highest budget.

        Sorted by budget (highest first), then by score, the order of the incumbent rule.
        """
        best: dict[str, Trial] = {}
        for t in self.scored:
            key = config_key(t.config)
            old = best.get(key)
            if old is None or rule_order(t) > rule_order(old):
                best[key] = t
        ranked = sorted(best.values(), key=rule_order, reverse=True)
        return ranked[:n]


def resolve_run_dir(name_or_path: str | Path, runs_dir: str | Path | None = None) -> Path:
    """The folder of a run given its NAME (under ``runs_dir``) or its PATH.

    Raises
    ------
    UsageError
        If neither ``runs_dir/NAME`` nor the path is a run folder.
    """
    runs = Path(runs_dir) if runs_dir is not None else DEFAULT_RUNS_DIR
    for cand in (runs / str(name_or_path), Path(name_or_path)):
        if (cand / CAMPAIGN_FILE).is_file():
            return cand
    folders = sorted(runs.iterdir()) if runs.is_dir() else []
    known = [p.name for p in folders if (p / CAMPAIGN_FILE).is_file()]
    hint = f" (runs there: {', '.join(known)})" if known else ""
    raise UsageError(f"no run '{name_or_path}' in {runs}{hint}")


def folder_fields(path: Path, record: CampaignRecord, settings: RunSettings) -> dict[str, Any]:
    """What either kind of run reads off its folder besides its trials or subsets: its name,
    path, settings, ``campaign.json``, state and result."""
    return {
        "name": path.name,
        "path": path,
        "settings": settings,
        "record": record,
        "state": run_state(path),
        "result": read_result(path),
    }


def load_run(name_or_path: str | Path, runs_dir: str | Path | None = None) -> RunHistory:
    """Load a run folder.

    Parameters
    ----------
    name_or_path
        The run's name (a folder of ``runs_dir``) or the path of its folder.
    runs_dir
        Folder of the runs (default ``runs``).

    Raises
    ------
    UsageError
        If there is no such run.
    ConfigError
        If ``campaign.json`` or ``result.json`` is not valid JSON, ``campaign.json`` has a
        format this hpo does not read, or a line of ``trials.jsonl`` other than a truncated
        last one is corrupt, or ``campaign.json``'s budgets disagree with SMAC's saved
        scenario (the file was edited).
    """
    path = resolve_run_dir(name_or_path, runs_dir)
    record, settings = read_run_campaign(path)
    seen: set[tuple[str, Any, Any, Any]] = set()
    trials: list[Trial] = []
    records = read_trials(path / TRIALS_FILE)  # names the file and the line itself
    try:
        logged = trials_of(records)
    except ConfigError as exc:
        raise ConfigError(f"{path / TRIALS_FILE}: {exc}") from None
    for trial in logged:
        if trial.key in seen:
            continue
        seen.add(trial.key)
        trials.append(trial)
    return RunHistory(
        **folder_fields(path, record, settings), trials=tuple(trials), logged=len(records)
    )


def read_result(path: Path) -> dict[str, Any] | None:
    """A run folder's ``result.json`` (written when the run finished), ``None`` before.

    Raises
    ------
    ConfigError
        If the file holds anything but a JSON object.
    """
    result = read_json(path / RESULT_FILE) if (path / RESULT_FILE).is_file() else None
    if result is not None and not isinstance(result, dict):
        raise ConfigError(f"{path / RESULT_FILE}: expected a JSON object")
    return result
