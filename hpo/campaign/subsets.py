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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from hpo.campaign.config import CampaignConfig, read_campaign
from hpo.campaign.progress import stdout_console
from hpo.campaign.result import CampaignResult
from hpo.campaign.warm_start import source_runs
from hpo.errors import ConfigError, HpoError, UsageError
from hpo.features.table import family_of
from hpo.ranking.spaces import load_space, space_to_dict
from hpo.runs.campaign_file import CAMPAIGN_FORMAT
from hpo.runs.folder import (
    CAMPAIGN_FILE,
    RESULT_FILE,
    TRIALS_FILE,
    RunLock,
    clear_run_dir,
    data_fingerprint,
    discard_new_run,
    jsonable,
    package_versions,
    read_trials,
    run_state,
    write_json_atomic,
)
from hpo.runs.nested import combine_subsets

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


def _parent_record(
    cfg: CampaignConfig, plan: dict[str, tuple[str, ...]], warm_start: Sequence[Path]
) -> dict[str, Any]:
    # the sources only: each subset's campaign.json holds what its matching subset gave
    sources = [{"run": p.name, "path": str(p)} for p in warm_start]
    return {
        **({"warm_start": {"sources": sources}} if warm_start else {}),
        "format": CAMPAIGN_FORMAT,
        "config": cfg.to_dict(),
        "space": space_to_dict(load_space(cfg.space)),
        "data_fingerprint": data_fingerprint(cfg.data_root, cfg.collections),
        "versions": package_versions(),
        "created": time.time(),
        "subsets": {k: list(v) for k, v in plan.items()},
    }


def _check_parent(cfg: CampaignConfig) -> None:
    """A resumed per-subset run must have the saved settings and data: a subset not started
    yet would otherwise tune on other data than the finished ones."""
    record = read_campaign(cfg.run_dir)
    saved = record["config"]
    if dataclasses.replace(saved, runs_dir=cfg.runs_dir, name=cfg.name) != cfg:
        old, new = saved.to_dict(), cfg.to_dict()
        keys = [k for k in new if new[k] != old.get(k) and k != "runs_dir"]
        raise ConfigError(
            f"{cfg.run_dir / CAMPAIGN_FILE}: cannot resume with different settings: "
            + ", ".join(f"{k} (saved {old.get(k)!r}, now {new[k]!r})" for k in keys)
        )
    if data_fingerprint(cfg.data_root, cfg.collections) != record.get("data_fingerprint"):
        raise ConfigError(
            f"{cfg.data_root}: the data of {', '.join(cfg.collections)} changed since campaign "
            f"'{cfg.name}' started; resuming would mix results (start a new campaign)"
        )


def _matching(sources: Sequence[Path], runs_dir: Path, subset: str) -> list[Path]:
    """The run folders that seed ``subset``: each source's matching subset, or the source."""
    return [f for w in sources for f in source_runs(w, runs_dir, subset)]


def run_subsets(
    cfg: CampaignConfig,
    run_one: Callable[..., CampaignResult],
    *,
    resume: bool = False,
    overwrite: bool = False,
    console: Console | None = None,
    warm_start: Sequence[Path] = (),
) -> SubsetsResult:
    """Run (or resume) one campaign per subset of ``cfg`` (``cfg.per`` is not ``none``).

    Parameters
    ----------
    cfg
        The run's settings.
    run_one
        Runs one campaign (:func:`hpo.campaign.run.run_single_campaign`, with the objective,
        data and quietness that serve every subset bound; passed in so this module does not
        import the module that dispatches to it).
    console
        As for one campaign.
    resume
        Continue the run: finished subsets are skipped, an interrupted one resumes, the
        others start.
    overwrite
        Delete an existing run of the same name first.
    warm_start
        Earlier run folders: each subset starts from the matching subset of a per-subset
        source, or from every subset of one that has no such subset, or from a single run.

    Raises
    ------
    UsageError, ConfigError
        As for one campaign.
    """
    if resume and overwrite:
        raise UsageError("--resume and --overwrite exclude each other")
    run_dir = cfg.run_dir
    if resume and not (run_dir / CAMPAIGN_FILE).exists():
        raise UsageError(f"no campaign '{cfg.name}' to resume in {cfg.runs_dir}")
    if not resume and not overwrite and run_dir.exists() and any(run_dir.iterdir()):
        raise UsageError(
            f"run '{cfg.name}' already exists in {cfg.runs_dir} ({run_state(run_dir)}); use "
            f"--resume {cfg.name} to continue it or --overwrite to start it again"
        )
    plan = plan_subsets(cfg.collections, cfg.per)
    # before any folder is made: checks space and data first
    record = None if resume else _parent_record(cfg, plan, warm_start)
    console = console if console is not None else Console()
    results: dict[str, CampaignResult] = {}
    created, locked = not run_dir.exists(), False
    try:
        with RunLock(run_dir):
            locked = True  # from here on, what is in the folder is this run's
            if resume:
                _check_parent(cfg)
                # a subset the interruption kept from starting is seeded as planned
                saved = read_campaign(run_dir).get("warm_start") or {}
                warm_start = [Path(w["path"]) for w in saved.get("sources", [])]
            if overwrite:
                clear_run_dir(run_dir)
            if record is not None:
                write_json_atomic(run_dir / CAMPAIGN_FILE, record)
            for i, (name, collections) in enumerate(plan.items(), start=1):
                sub = subset_config(cfg, name, collections)
                started = (sub.run_dir / CAMPAIGN_FILE).exists()
                fresh = sub.run_dir.exists() and not started  # interrupted before it began
                console.print(
                    f"subset {i}/{len(plan)} '{name}': {', '.join(collections)}"
                    + (" (resumed)" if started else ""),
                    highlight=False,
                )
                results[name] = run_one(
                    sub,
                    resume=started,
                    overwrite=fresh,
                    console=console,
                    warm_start=() if started else _matching(warm_start, cfg.runs_dir, name),
                )
            got = {name: r.metrics for name, r in results.items()}
            metrics, score = combine_subsets(plan, got)
            result = SubsetsResult(
                run_dir=run_dir,
                per=cfg.per,
                subsets=results,
                metrics=metrics,
                score=score,
                finished=time.time(),
            )
            write_json_atomic(run_dir / RESULT_FILE, result.to_dict())
    except HpoError:
        # refused before any subset's first trial: no "interrupted" run is left behind
        subsets = [subset_config(cfg, n, c).run_dir for n, c in plan.items()]
        if locked and not resume and not any(read_trials(d / TRIALS_FILE) for d in subsets):
            discard_new_run(run_dir, remove_folder=created or overwrite)
        raise
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
