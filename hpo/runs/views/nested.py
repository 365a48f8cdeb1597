"""Reading per-subset runs (``hpo run --per family|collection``) and the list of runs.

A per-subset run folder holds a ``campaign.json`` whose settings have ``per`` other than
``none`` and whose key ``subsets`` maps each subset folder to its collections; every subset
folder is a complete single-campaign run folder, read with :func:`hpo.runs.views.history.load_run`.
:class:`SubsetRun` gathers them: each subset's incumbent and trajectory, and the combined
leaderboard score, the mean over every collection of the metric of its subset's incumbent
(what one submission built from the per-subset model would score on valid).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Never, Protocol, TypeVar

import numpy as np

from hpo.errors import ConfigError, UsageError
from hpo.runs.record.campaign_file import CampaignRecord
from hpo.runs.record.folder import CAMPAIGN_FILE, run_state
from hpo.runs.record.settings import RunSettings, SettingsView, read_run_campaign
from hpo.runs.record.trial import Trial
from hpo.runs.views.history import (
    DEFAULT_RUNS_DIR,
    RunHistory,
    folder_fields,
    load_run,
    resolve_run_dir,
)

__all__ = [
    "AnyRun",
    "Run",
    "RunKind",
    "RunSummary",
    "SubsetRun",
    "as_run",
    "combine_subsets",
    "is_subset_run",
    "list_runs",
    "load_any",
    "load_subset_run",
    "run_kind",
    "run_type",
]

T = TypeVar("T")

#: The two kinds of run: one campaign, or one campaign per subset (``--per``).
RunKind = Literal["single", "subsets"]


def _plan(record: CampaignRecord) -> dict[str, tuple[str, ...]] | None:
    """The ``subsets`` of a parent ``campaign.json``, ``None`` for a single campaign."""
    return record.subsets if record.kind == "subsets" else None


def combine_subsets(
    plan: Mapping[str, Sequence[str]], metrics: Mapping[str, Mapping[str, float] | None]
) -> tuple[dict[str, float], float | None]:
    """The one rule for a per-subset run's combined leaderboard score.

    Each collection takes the metric of its own subset's incumbent (``metrics[subset]``,
    ``None`` for a subset without one), and the score is their mean over every collection of
    the plan: what one submission built from the per-subset model would score. ``None`` until
    every collection has a metric, since a partial mean would flatter the run.
    """
    out: dict[str, float] = {}
    for name, collections in plan.items():
        got = metrics.get(name) or {}
        out.update({c: float(got[c]) for c in collections if c in got})
    everyone = [c for cs in plan.values() for c in cs]
    if not everyone or any(c not in out for c in everyone):
        return out, None
    return out, float(np.mean([out[c] for c in everyone]))


def is_subset_run(path: Path | str) -> bool:
    """Whether the run folder ``path`` is a per-subset run (its ``campaign.json`` has subsets)."""
    return read_run_campaign(Path(path))[0].kind == "subsets"


def run_kind(per: str) -> RunKind:
    """The kind of run the setting ``per`` makes: ``"single"`` for ``none``, else ``"subsets"``."""
    return "single" if per == "none" else "subsets"


@dataclass(frozen=True, eq=False)
class SubsetRun(SettingsView):
    """A per-subset run: its settings and one :class:`RunHistory` per started subset.

    Attributes
    ----------
    name, path, settings, record, state, result
        As for :class:`~hpo.runs.views.history.RunHistory` (``result`` is the parent's
        ``result.json``, written when every subset has finished).
    plan
        ``{subset folder: its collections}``, every subset of the run in order.
    subsets
        ``{subset: RunHistory}`` of the subsets that have started.
    """

    name: str
    path: Path
    settings: RunSettings
    record: CampaignRecord
    state: str
    result: dict[str, Any] | None
    plan: dict[str, tuple[str, ...]]
    subsets: dict[str, RunHistory]

    @property
    def kind(self) -> Literal["subsets"]:
        """``"subsets"``: one campaign per subset (a single campaign says ``"single"``)."""
        return "subsets"

    @property
    def members(self) -> dict[str, RunHistory]:
        """``{"<subset>/": its campaign}`` for every subset in order: the members of its
        model folder.

        Raises
        ------
        UsageError
            If a subset has not started (the run was interrupted before it): resume the run.
        """
        missing = [k for k in self.plan if k not in self.subsets]
        if missing:
            raise UsageError(
                f"run '{self.name}': subset '{missing[0]}' has not started, so it has no model "
                f"to export; finish the run first (hpo run --resume {self.name})"
            )
        return {f"{k}/": self.subsets[k] for k in self.plan}

    def curves(self) -> list[RunHistory]:
        """The campaigns ``runs compare`` draws: one per started subset, named run/subset."""
        return [dataclasses.replace(s, name=f"{self.name}/{k}") for k, s in self.subsets.items()]

    def campaigns(self) -> list[tuple[str | None, RunHistory]]:
        """``(subset, campaign)`` of every started subset, in plan order."""
        return list(self.subsets.items())

    def by_kind(self, single: Callable[[Never], T], subsets: Callable[[SubsetRun], T]) -> T:
        """The variant of an operation a later stage owns, for this kind: ``subsets(self)``."""
        return subsets(self)

    # ---- as the folder of a per-subset run, before it is loaded (the class run_type picks)
    @classmethod
    def load(cls, path: Path) -> SubsetRun:
        """The run folder ``path`` loaded (:func:`load_subset_run`)."""
        return load_subset_run(path)

    @staticmethod
    def warm_folders(path: Path, subset: str | None) -> list[Path]:
        """The single-campaign folders the run ``path`` stands for as a ``--warm-start``
        source of the campaign ``subset``: its subset of that name when it has started it
        (``--per`` runs warm-start each subset from the matching one), else every subset it
        has started (their configurations were each good for part of the data)."""
        matched = _matched_subset(path, subset)
        if matched is not None:
            return [matched]
        return sorted(p.parent for p in path.glob(f"*/{CAMPAIGN_FILE}"))

    @staticmethod
    def warm_source(path: Path, subset: str) -> Path:
        """The source of the subset campaign ``subset``: the run's subset of that name, else
        the run itself (which then gives the best of all its subsets and no baseline)."""
        matched = _matched_subset(path, subset)
        return path if matched is None else matched

    @staticmethod
    def gives_baseline(path: Path, subset: str | None) -> bool:
        """Whether the best of the run ``path`` may be the baseline of the campaign
        ``subset``: only by its subset of that name (another subset's best was tuned for
        other data)."""
        return _matched_subset(path, subset) is not None

    @staticmethod
    def name_inside(folder: Path) -> str:
        """The name of the campaign ``folder`` inside a per-subset run: ``RUN/SUBSET``."""
        return f"{folder.parent.name}/{folder.name}"

    @staticmethod
    def check_inner_extension(path: Path, name: str) -> None:
        """A subset ``name`` of the per-subset run ``path`` extended alone.

        Raises
        ------
        UsageError
            Always: the run shares its limits among its subsets, so only it is extended.
        """
        raise UsageError(
            f"'{name}' is a subset of the per-subset run '{path.name}', which "
            f"shares its limits among its subsets: extend that run (hpo run --runs-dir "
            f"{path.parent} --resume {path.name} ...)"
        )

    @property
    def started(self) -> float | None:
        """Epoch seconds the run started."""
        return self.record.created

    @property
    def n_trials(self) -> int:
        """Trials of all subsets."""
        return sum(len(r.trials) for r in self.subsets.values())

    @property
    def n_failed(self) -> int:
        """Failed trials of all subsets."""
        return sum(len(r.crashed) for r in self.subsets.values())

    @property
    def incumbents(self) -> dict[str, Trial | None]:
        """``{subset: its incumbent trial}`` for every subset (``None``: none yet)."""
        return {k: (self.subsets[k].incumbent if k in self.subsets else None) for k in self.plan}

    def _combined(self) -> tuple[dict[str, float], float | None]:
        incumbents = self.incumbents
        got = {k: (None if inc is None else inc.metrics) for k, inc in incumbents.items()}
        return combine_subsets(self.plan, got)

    @property
    def metrics(self) -> dict[str, float]:
        """``{collection: metric of its subset's incumbent}`` for the collections that have one."""
        return self._combined()[0]

    @property
    def score(self) -> float | None:
        """The combined leaderboard score (:func:`combine_subsets`); ``None`` until every
        collection has a metric."""
        return self._combined()[1]


def load_subset_run(name_or_path: str | Path, runs_dir: str | Path | None = None) -> SubsetRun:
    """Load a per-subset run folder and the subsets that have started.

    Raises
    ------
    UsageError
        If there is no such run, or it is a single campaign.
    ConfigError
        If a file of the run or of a subset is malformed.
    """
    path = resolve_run_dir(name_or_path, runs_dir)
    record, settings = read_run_campaign(path)
    plan = _plan(record)
    if plan is None:
        raise UsageError(f"{path}: a single campaign, not a per-subset run")
    subsets = {k: load_run(path / k) for k in plan if (path / k / CAMPAIGN_FILE).is_file()}
    return SubsetRun(
        **folder_fields(path, record, settings),
        plan=plan,
        subsets=subsets,
    )


def _matched_subset(path: Path, subset: str | None) -> Path | None:
    """The subset named ``subset`` of the per-subset run ``path``, if it has started it."""
    if subset is None or not (path / subset / CAMPAIGN_FILE).is_file():
        return None
    return path / subset


class Run(Protocol):
    """A run folder of either kind: :class:`~hpo.runs.views.history.RunHistory` (one
    campaign) or :class:`SubsetRun` (one campaign per subset).

    What differs between the kinds is answered by the run itself, never by a branch on its
    kind elsewhere: its ``members`` (``{prefix: campaign}`` of its model folder), its
    ``curves()``, its ``campaigns()`` (``(subset, campaign)`` pairs), and
    ``by_kind(single, subsets)``, which applies the variant of an operation that a later
    stage owns (``runs show``, ``runs plot``, the model format of ``hpo export``) to the run.
    Before a folder is loaded, :func:`run_type` gives its class, whose static methods answer
    for the folder as a ``--warm-start`` source (``warm_folders``, ``warm_source``,
    ``gives_baseline``), name the campaigns it holds (``name_inside``) and refuse extending
    one of them alone (``check_inner_extension``).
    """

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> Path: ...

    @property
    def settings(self) -> RunSettings: ...

    @property
    def state(self) -> str: ...

    @property
    def result(self) -> dict[str, Any] | None: ...

    @property
    def kind(self) -> RunKind: ...

    @property
    def members(self) -> dict[str, RunHistory]: ...

    def curves(self) -> list[RunHistory]: ...

    def campaigns(self) -> list[tuple[str | None, RunHistory]]: ...

    def by_kind(
        self, single: Callable[[RunHistory], T], subsets: Callable[[SubsetRun], T]
    ) -> T: ...


#: A run folder of either kind, as loaded (:class:`Run`).
AnyRun = RunHistory | SubsetRun
_KINDS: tuple[type[Run], ...] = (RunHistory, SubsetRun)  # mypy checks both against Run


def run_type(path: Path | str) -> type[RunHistory] | type[SubsetRun]:
    """The class of the run folder ``path``: the one place that decides the kind of a folder."""
    return SubsetRun if is_subset_run(path) else RunHistory


def as_run(run: AnyRun | Path | str) -> AnyRun:
    """``run`` if it is loaded already, else the run folder at that path (:func:`load_any`)."""
    if isinstance(run, (Path, str)):
        return load_any(Path(run))
    return run


def load_any(name_or_path: str | Path, runs_dir: str | Path | None = None) -> AnyRun:
    """Load a run folder: a :class:`SubsetRun` for a per-subset run, else a
    :class:`~hpo.runs.views.history.RunHistory`."""
    path = resolve_run_dir(name_or_path, runs_dir)
    return run_type(path).load(path)


@dataclass(frozen=True)
class RunSummary:
    """One line of ``hpo runs list``; ``problem`` says why a folder could not be read.

    A per-subset run is one line (``optimizer`` names ``per``, ``best_score`` is the combined
    score) followed by one line per started subset, named ``<run>/<subset>``.
    """

    name: str
    path: Path
    state: str
    optimizer: str = "?"
    n_trials: int = 0
    n_failed: int = 0
    best_score: float | None = None
    best_budget: float | None = None
    started: float | None = None
    problem: str | None = None
    older_metric: str | None = None  # the layout metric it was scored by, if not today's
    collections: tuple[str, ...] = ()  # the collections its score is the mean over


def _summary(run: RunHistory, name: str) -> RunSummary:
    inc = run.incumbent
    return RunSummary(
        name=name,
        path=run.path,
        state=run.state,
        optimizer=run.optimizer + (f" cv {run.folds}" if run.folds else ""),
        n_trials=len(run.trials),
        n_failed=len(run.crashed),
        best_score=None if inc is None else inc.score,
        best_budget=None if inc is None else inc.budget,
        started=run.started,
        older_metric=run.older_layout_metric,
        collections=run.collections,
    )


def _summaries(folder: Path) -> list[RunSummary]:
    return load_any(folder).by_kind(
        lambda run: [_summary(run, run.name)], lambda run: _subset_summaries(run, folder)
    )


def _subset_summaries(run: SubsetRun, folder: Path) -> list[RunSummary]:
    head = RunSummary(
        name=run.name,
        path=folder,
        state=run.state,
        optimizer=f"{run.optimizer} per {run.per}"
        + (f" cv {run.settings.cv}" if run.settings.cv else ""),
        n_trials=run.n_trials,
        n_failed=run.n_failed,
        best_score=run.score,
        started=run.started,
        older_metric=run.older_layout_metric,
        collections=run.collections,
    )
    return [head, *(_summary(sub, f"{run.name}/{k}") for k, sub in run.subsets.items())]


def list_runs(runs_dir: str | Path | None = None) -> list[RunSummary]:
    """Summaries of every run folder under ``runs_dir``, oldest first.

    A folder that cannot be read is listed with its ``problem`` instead of failing the list.
    """
    runs = Path(runs_dir) if runs_dir is not None else DEFAULT_RUNS_DIR
    if not runs.is_dir():
        return []
    groups: list[list[RunSummary]] = []
    for folder in sorted(p for p in runs.iterdir() if (p / CAMPAIGN_FILE).is_file()):
        try:
            groups.append(_summaries(folder))
        except (ConfigError, UsageError) as exc:
            groups.append([RunSummary(folder.name, folder, run_state(folder), problem=str(exc))])
    groups.sort(key=lambda g: (g[0].started is None, g[0].started or 0.0, g[0].name))
    return [s for g in groups for s in g]
