"""Per-subset tuning: one SMAC campaign per family or per collection, inside one run folder.

``hpo run --per collection`` (or ``--per family``) tunes a ranker for each subset against the
subset's own metric (Kendall's tau for a layout collection, the top-5 score for tile:xla),
trained on the subset's own rows, instead of one configuration for the mean over all five.
The run folder ``<runs_dir>/<name>/`` holds the lock, a ``campaign.json`` with ``per`` and
the subsets, ``result.json`` once every subset has finished, and one complete single-campaign
run folder per subset (``tile-xla/``, ``layout-xla-default/`` ... or ``tile/`` and
``layout/``), each with its own ``campaign.json``, SMAC state, ``trials.jsonl``, boosters
and ``result.json``. A subset's campaign is an ordinary campaign whose collections are the
subset's, so it is read, plotted, resumed and exported like any other.

Sharing the machine: subsets run **one after the other**, and the run's walltime is split
equally (each subset gets ``walltime / n``); the trial limit applies to each subset. On the
two-core machines this tool targets, running subsets at once would only make each trial
slower (LightGBM and extraction already use the cores), and sequential subsets keep resume
simple: a finished subset is never touched again, an interrupted one resumes from its SMAC
state. An equal split is honest for comparisons at equal total wall-clock; a subset that
stops early (its trial limit) leaves its remaining time unused, so that a resumed run gives
each subset exactly the walltime recorded in its ``campaign.json``. (Running subsets at once
on Dask workers is a possible extension; ``--workers`` today parallelises the trials of one
subset.)

Features are extracted once: subsets never share a collection, so each graph file belongs
to exactly one subset's tables (and the feature cache keeps them across a resume).

The combined score is the leaderboard score: the mean, over every collection, of the metric
of the incumbent of the collection's subset.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from hpo.campaign.config import CampaignConfig, read_campaign
from hpo.campaign.lifecycle.extend import LIMITS, check_extension
from hpo.campaign.lifecycle.preflight import (
    Runtime,
    Start,
    campaign_record,
    check_saved,
    locked_run,
)
from hpo.campaign.lifecycle.run import run_single_campaign
from hpo.campaign.progress import stdout_console
from hpo.campaign.result import CampaignResult
from hpo.campaign.seeding.warm_start import matching_source
from hpo.errors import ConfigError, UsageError
from hpo.features.table.feature_table import family_of
from hpo.ranking.spaces import load_space
from hpo.runs.record.campaign_file import WarmSource, WarmStartRecord
from hpo.runs.record.folder import (
    CAMPAIGN_FILE,
    RESULT_FILE,
    TRIALS_FILE,
    jsonable,
    read_trials,
    write_json_atomic,
)
from hpo.runs.views.nested import combine_subsets

__all__ = ["SubsetsResult", "plan_subsets", "run_subsets", "subset_config", "subset_name"]


def subset_name(key: str) -> str:
    """Folder name of a subset: a collection or family with ``:`` made ``-`` (``tile-xla``)."""
    return key.replace(":", "-")


def plan_subsets(collections: tuple[str, ...], per: str) -> dict[str, tuple[str, ...]]:
    """``{subset folder: its collections}`` in collection order.

    Raises
    ------
    ConfigError
        If ``per`` is not ``family`` or ``collection``.
    """
    if per == "collection":
        return {subset_name(c): (c,) for c in collections}
    if per == "family":
        families = list(dict.fromkeys(family_of(c) for c in collections))
        return {f: tuple(c for c in collections if family_of(c) == f) for f in families}
    raise ConfigError(f"campaign setting 'per': expected family or collection, found {per!r}")


def subset_config(cfg: CampaignConfig, name: str, collections: tuple[str, ...]) -> CampaignConfig:
    """The single campaign of one subset: the run's settings, its collections, its share of
    the walltime, in the folder ``<run folder>/<name>``."""
    n = len(plan_subsets(cfg.collections, cfg.per))
    walltime = None if cfg.walltime is None else cfg.walltime / n
    return dataclasses.replace(
        cfg,
        per="none",
        name=name,
        runs_dir=cfg.run_dir,
        collections=collections,
        walltime=walltime,
    )


@dataclass(frozen=True, kw_only=True)
class SubsetsResult:
    """The outcome of a per-subset run, as written to the parent's ``result.json``.

    Attributes
    ----------
    run_dir
        The parent run folder.
    per
        ``family`` or ``collection``.
    subsets
        ``{subset: CampaignResult}`` of every subset, in order.
    metrics
        ``{collection: metric of its subset's incumbent}``.
    score
        The combined leaderboard score: mean of ``metrics``; ``None`` unless every subset
        has an incumbent.
    finished
        Epoch seconds.
    """

    run_dir: Path
    per: str
    subsets: dict[str, CampaignResult]
    metrics: dict[str, float]
    score: float | None
    finished: float

    @property
    def incumbent(self) -> dict[str, dict[str, Any]] | None:
        """``{subset: incumbent configuration}``; ``None`` when a subset has none."""
        if any(r.incumbent is None for r in self.subsets.values()):
            return None
        return {k: dict(r.incumbent or {}) for k, r in self.subsets.items()}

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON content of the parent's ``result.json``."""
        return jsonable(
            {
                "per": self.per,
                "score": self.score,
                "metrics": self.metrics,
                "subsets": {k: r.to_dict() for k, r in self.subsets.items()},
                "finished": self.finished,
            }
        )


def _matching(sources: Sequence[Path], runs_dir: Path, subset: str) -> list[Path]:
    """The run folders that seed ``subset``: each source's matching subset, or the source."""
    return [matching_source(w, runs_dir, subset) for w in sources]


def _check_subset_limits(cfg: CampaignConfig, plan: dict[str, tuple[str, ...]]) -> None:
    """Check the raised limits of every started subset (:func:`~hpo.campaign.lifecycle.extend.
    check_extension`) before anything is written, so a refused extension leaves the run as
    it was; a subset's error names the run's own setting."""
    for name, collections in plan.items():
        sub = subset_config(cfg, name, collections)
        if not (sub.run_dir / CAMPAIGN_FILE).exists():
            continue
        saved = read_campaign(sub.run_dir).config
        if all(getattr(saved, k) == getattr(sub, k) for k in LIMITS):
            continue
        try:
            check_extension(sub, saved)
        except UsageError as exc:
            n = len(plan)
            share = f" (its 1/{n} share of --walltime {cfg.walltime:g})" if cfg.walltime else ""
            hint = f"; the run's --walltime is {n} times a subset's" if cfg.walltime else ""
            raise UsageError(f"subset '{name}'{share}: {exc}{hint}") from None


def run_subsets(
    cfg: CampaignConfig,
    start: Start,
    runtime: Runtime | None = None,
) -> SubsetsResult:
    """Run (or resume) one campaign per subset of ``cfg`` (``cfg.per`` is not ``none``).

    Each subset is an ordinary campaign (:func:`hpo.campaign.lifecycle.run.run_single_campaign`) in
    a folder of the run; this function holds the run's lock, record and resume check, the same
    ones a single campaign uses (:mod:`hpo.campaign.lifecycle.preflight`).

    Parameters
    ----------
    cfg
        The run's settings.
    start
        How the run starts. Resumed: finished subsets are skipped, an interrupted one
        resumes, the others start. ``warm_start``: each subset starts from the matching
        subset of a per-subset source, or from every subset of one that has no such subset,
        or from a single run.
    runtime
        What serves every subset's campaign (:class:`~hpo.campaign.lifecycle.preflight.Runtime`).

    Raises
    ------
    UsageError, ConfigError
        As for one campaign.
    """
    start.check(cfg)
    plan = plan_subsets(cfg.collections, cfg.per)
    record = None  # built before any folder is made: checks the space and the data first
    if not start.resume:
        # the sources only: each subset's campaign.json holds what its matching subset gave
        sources = tuple(WarmSource(run=p.name, path=str(p)) for p in start.warm_start)
        warm = WarmStartRecord(sources=sources) if sources else None
        record = campaign_record(cfg, load_space(cfg.space), warm_start=warm, subsets=plan)
    rt = runtime if runtime is not None else Runtime()
    console = rt.console if rt.console is not None else Console()
    rt = dataclasses.replace(rt, console=console)
    results: dict[str, CampaignResult] = {}
    warm_start: Sequence[Path] = start.warm_start

    def has_trials() -> bool:
        subsets = [subset_config(cfg, n, c).run_dir for n, c in plan.items()]
        return any(read_trials(d / TRIALS_FILE) for d in subsets)

    with locked_run(cfg, start, record, has_trials):
        if start.resume:
            _check_subset_limits(cfg, plan)  # before the run's record says it is extended
            saved = check_saved(cfg, console.print)
            # a subset the interruption kept from starting is seeded as planned
            warm = saved.record.warm_start
            warm_start = [Path(w.path) for w in (warm.sources if warm else ()) if w.path]
        for i, (name, collections) in enumerate(plan.items(), start=1):
            sub = subset_config(cfg, name, collections)
            started = (sub.run_dir / CAMPAIGN_FILE).exists()
            fresh = sub.run_dir.exists() and not started  # interrupted before it began
            console.print(
                f"subset {i}/{len(plan)} '{name}': {', '.join(collections)}"
                + (" (resumed)" if started else ""),
                highlight=False,
            )
            seeds = () if started else tuple(_matching(warm_start, cfg.runs_dir, name))
            start_sub = Start(resume=started, overwrite=fresh, warm_start=seeds)
            results[name] = run_single_campaign(sub, start_sub, rt)
        got = {name: r.metrics for name, r in results.items()}
        metrics, score = combine_subsets(plan, got)
        result = SubsetsResult(
            run_dir=cfg.run_dir,
            per=cfg.per,
            subsets=results,
            metrics=metrics,
            score=score,
            finished=time.time(),
        )
        write_json_atomic(cfg.run_dir / RESULT_FILE, result.to_dict())
    print_subsets_summary(console, result)
    return result


def print_subsets_summary(console: Console | None, result: SubsetsResult) -> None:
    """One line per subset (incumbent score, metrics, trials), then the combined score."""
    console = console if console is not None else stdout_console()
    console.print(f"per-{result.per} run {result.run_dir}:", highlight=False, soft_wrap=True)
    for name, r in result.subsets.items():
        if r.incumbent is None:
            console.print(f"  {name}: no successful trial ({r.n_trials} trials)", highlight=False)
            continue
        metrics = " ".join(f"{k}={v:.4f}" for k, v in r.metrics.items())
        console.print(
            f"  {name}: trial {r.trial}, budget {r.budget:g}, {metrics} "
            f"({r.n_trials} trials, {r.n_crashed} crashed)",
            highlight=False,
            soft_wrap=True,
        )
    shown = "-" if result.score is None else f"{result.score:.4f}"
    console.print(f"combined score (mean over collections): {shown}", highlight=False)
