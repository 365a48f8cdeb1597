"""The SMAC target function: train a ranker at a fidelity, score it on the valid split.

``cost = 1 - mean over the selected collections of the collection metric`` (Kendall's tau for
layout collections, the top-5 tile score for tile:xla). One ranker is trained per family
(``tile``, ``layout``) with the same hyperparameters; the layout ranker serves the four layout
collections through the collection indicator of the features.

Fidelity (SMAC's ``budget``):

- ``rounds``: boosting rounds on all training rows. With a ``model_dir``, a configuration
  promoted to a higher budget continues the booster saved at its lower budget instead of
  retraining from scratch (LightGBM ``init_model``).
- ``configs``: configs sampled per training graph (biased toward fast ones), at a fixed
  number of rounds.

Cross-validation (``cv`` = K >= 2, :mod:`hpo.ranking.folds`): the objective holds one table
per family of the labeled train *and* valid graphs (joined once per campaign, key
``(family, "labeled")``), and SMAC passes the fold as its ``instance`` (``fold0`` ...). A trial
trains on the graphs outside the fold, at the budget SMAC gives (the campaign's
``max_budget`` for every optimizer: with instances, SMAC's budget counts folds) and is scored
on the fold's graphs; ``info`` carries ``fold``. Nothing is kept in the booster store: a
booster of one fold cannot continue another fold's training, and export retrains on every
labeled graph.

With a ``model_dir``, every trial's boosters are saved (both fidelities) in the run's booster
store, so ``hpo export`` can ship exactly the booster that was scored; a successful trial
prunes the smaller boosters of its configuration (see :mod:`hpo.runs.record.boosters`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpo.campaign.config import FIDELITIES, FIDELITY_BUDGETS, CampaignConfig
from hpo.campaign.heap import release_freed_memory
from hpo.campaign.seeding.warm_reuse import rescored
from hpo.errors import ConfigError, UsageError
from hpo.features.table.feature_table import FeatureTable, by_family
from hpo.ranking.folds import assign_folds, fold_index, fold_rows, labeled_table
from hpo.ranking.model.datasets import DatasetCache
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.training import (
    DEFAULT_FIXED_ROUNDS,
    booster_columns,
    sample_configs,
    select_rows,
    train_family,
)
from hpo.runs.record.boosters import (
    BOOSTERS_DIR,
    BoosterStore,
    booster_key,
    budget_size,
    trial_budget,
)
from hpo.runs.record.folder import this_worker

__all__ = [
    "ObjectiveSettings",
    "RankerObjective",
    "build_objective",
    "cv_tables",
    "default_threads",
    "trial_deadline",
]

Tables = Mapping[tuple[str, str], FeatureTable]

#: Least seconds past the walltime a running trial may go on before it is cut.
DEADLINE_GRACE = 30.0


@dataclass(frozen=True, kw_only=True)
class ObjectiveSettings:
    """What the target function needs besides the tables.

    Parameters
    ----------
    collections
        Collections scored (and trained on).
    fidelity
        ``rounds`` or ``configs`` (what SMAC's budget means).
    max_budget
        Budget used when SMAC passes none (single-fidelity optimizers); by default a new
        campaign's largest rounds budget (:data:`~hpo.campaign.config.FIDELITY_BUDGETS`).
    fixed_rounds
        Boosting rounds when the fidelity is ``configs``.
    fast_bias
        Bias toward fast configs when sampling configs per graph.
    model_dir
        The run's booster store (:class:`hpo.runs.record.boosters.BoosterStore`): every trial's
        boosters are saved there for export, and with the ``rounds`` fidelity a higher budget
        continues the booster of a lower one; ``None`` keeps nothing.
    n_threads
        LightGBM threads per trial (default: :func:`default_threads` for one worker).
    folds
        0: train on train, score on valid; K >= 2: the SMAC instance names the fold, and the
        tables hold the labeled table of each family (:mod:`hpo.ranking.folds`).
    fold_seed
        The campaign seed the folds are drawn from (the same on every worker).
    dataset_dir
        Where binned training Datasets are saved and shared by the workers of a machine
        (:func:`hpo.ranking.model.datasets.binary_dataset`; only those of memory-mapped tables);
        ``None``: each worker process bins its own.
    histogram_pool_mb
        LightGBM's histogram pool per trial in MiB, 0 unbounded
        (:class:`hpo.ranking.model.fit_options.FitOptions`).
    deadline
        Wall-clock time (``time.time()``) after which a trial still boosting stops and is
        recorded as crashed (:class:`hpo.errors.TrialCut`): the session's start plus its
        walltime and a grace (:func:`trial_deadline`); ``None`` without a walltime.
    reuse
        Boosters scored again instead of trained: ``(config_key, family, size, path)`` of a
        warm start's baseline from a run of the same problem
        (:mod:`hpo.campaign.seeding.warm_reuse`). The trial of that configuration at that size
        copies the file into the booster store and scores it; one whose copy cannot be read or
        scored trains as any other.
    """

    collections: tuple[str, ...]
    fidelity: str = "rounds"
    max_budget: float = FIDELITY_BUDGETS["rounds"][1]
    fixed_rounds: int = DEFAULT_FIXED_ROUNDS
    fast_bias: float = 2.0
    model_dir: str | None = None
    n_threads: int = dataclasses.field(default_factory=lambda: default_threads(1))
    folds: int = 0
    fold_seed: int = 0
    dataset_dir: str | None = None
    histogram_pool_mb: int = 0
    deadline: float | None = None
    reuse: tuple[tuple[str, str, int, str], ...] = ()

    def __post_init__(self) -> None:
        if self.fidelity not in FIDELITIES:
            raise ConfigError(f"fidelity must be one of {FIDELITIES}, found '{self.fidelity}'")
        if not self.collections:
            raise ConfigError("objective: no collections selected")
        if self.n_threads < 1:
            raise ConfigError(f"objective: n_threads must be >= 1, found {self.n_threads}")


def default_threads(workers: int) -> int:
    """LightGBM threads per trial so that ``workers`` parallel trials fill this machine's cores.

    A 1-worker campaign on 2 cores used to train with one thread, leaving half the machine idle.
    """
    return max(1, (os.cpu_count() or 1) // max(1, workers))


def _config_dict(config: Any) -> dict[str, Any]:
    raw = dict(config)  # a ConfigSpace Configuration is a Mapping
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in raw.items()}


class RankerObjective:
    """Picklable SMAC target function ``(config, seed, budget, **scattered) -> (cost, info)``.

    Parameters
    ----------
    settings
        Objective settings.
    tables
        Feature tables ``{(family, split): table}``; may instead arrive per call as the
        scattered keyword ``tables`` (Dask workers).
    """

    def __init__(self, settings: ObjectiveSettings, tables: Tables | None = None) -> None:
        self.settings = settings
        self.tables = tables
        #: binned training Datasets and gathered valid rows, reused across trials and budgets
        #: by this process; a pickled objective starts with it empty. Dask deserialises the
        #: objective anew for every task, so there the cache arrives instead as the scattered
        #: keyword ``datasets``, which lives on each worker for the whole campaign (the one
        #: object itself, shared by the thread workers of a local cluster)
        self.datasets = DatasetCache()

    def _store(self) -> BoosterStore | None:
        return None if self.settings.model_dir is None else BoosterStore(self.settings.model_dir)

    def __call__(
        self,
        config: Any,
        seed: int = 0,
        budget: float | None = None,
        tables: Tables | None = None,
        datasets: DatasetCache | None = None,
        instance: str | None = None,
        **_: Any,
    ) -> tuple[float, dict[str, Any]]:
        """Train at ``budget`` (on the graphs outside fold ``instance``) and return
        ``(cost, info)``.

        Whether the trial succeeds or fails, the memory it freed goes back to the operating
        system when it ends (:func:`hpo.campaign.heap.release_freed_memory`): otherwise the
        process keeps its largest trial's blocks between trials.
        """
        try:
            return self._trial(config, seed, budget, tables, datasets, instance)
        finally:
            release_freed_memory()

    def _trial(
        self,
        config: Any,
        seed: int,
        budget: float | None,
        tables: Tables | None,
        datasets: DatasetCache | None,
        instance: str | None,
    ) -> tuple[float, dict[str, Any]]:
        s = self.settings
        tables = tables if tables is not None else self.tables
        if tables is None:
            raise UsageError("objective called without feature tables")
        hp = _config_dict(config)
        budget = trial_budget(budget, s.max_budget)
        metrics: dict[str, float] = {}
        seconds = dict.fromkeys(("dataset", "boost", "predict", "score"), 0.0)
        rows_used = model_bytes = datasets_reused = 0
        rounds_trained = rounds_reused = 0
        t0 = time.perf_counter()
        store, size = self._store(), budget_size(budget)
        fold = fold_index(instance, s.folds) if s.folds else None
        if fold is not None:
            store = None  # a fold's booster continues nothing, and export retrains
        keys: list[str] = []
        reused: list[str] = []  # families whose booster was scored again, not trained
        shares: dict[str, dict[str, float]] = {}  # the prior's blend as each family chose it
        unranked: list[str] = []  # scored graphs left out of the means: nothing to order
        for family, wanted in by_family(s.collections).items():
            scored = None
            if fold is None:
                train, valid = tables[(family, "train")], tables[(family, "valid")]
                rows = select_rows(train, wanted)
            else:
                train = valid = tables[(family, "labeled")]
                folds = assign_folds(train.graphs, s.folds, s.fold_seed, wanted)
                rows, scored = fold_rows(train, folds, fold, wanted)
            rng = np.random.default_rng(seed)
            key = booster_key(hp, seed, family)
            options = FitOptions(
                n_threads=s.n_threads,
                rows=rows,
                cache=datasets if datasets is not None else self.datasets,
                score_graphs=scored,
                rows_return=s.fidelity != "configs",
                dataset_dir=None if s.dataset_dir is None else Path(s.dataset_dir),
                histogram_pool_mb=s.histogram_pool_mb,
                deadline=s.deadline,
            )
            fit = rescored(s.reuse, store, (key, size), (train, valid, wanted, hp), options)
            init, done = None, 0
            if fit is not None:  # nothing trained: the whole booster is the reused one
                reused.append(family)
                rounds = done = fit.ranker.booster_.current_iteration()
            elif s.fidelity == "configs":
                rows = sample_configs(train, rows, size, rng, s.fast_bias)
                rounds = s.fixed_rounds
            else:
                rounds = size
                init, done = (None, 0) if store is None else store.latest_below(key, rounds)
                width = booster_columns(train.feature_names).size
                if init is not None and init.num_feature() != width:
                    # saved before boosters read every column (a resumed older run): it
                    # cannot continue on a Dataset of another width, so the trial starts afresh
                    init, done = None, 0
            if fit is None:
                options = dataclasses.replace(options, rows=rows, init_model=init)
                fit = train_family(
                    train, valid, wanted, hp, rounds=rounds - done, seed=seed, options=options
                )
            if store is not None:  # both fidelities: export copies the booster it scored
                # the saved file's size is the model's size: serialising it again only to
                # count its bytes cost seconds per trial at hundreds of rounds
                prior = None if fit.prior is None else fit.prior.to_dict()
                if reused[-1:] == [family]:  # rescored copied it to this key already
                    saved = store.path(key, size)
                else:
                    saved = store.save(key, size, fit.ranker.booster_, prior)
                model_bytes += saved.stat().st_size
                keys.append(key)
            else:
                model_bytes += len(fit.ranker.booster_.model_to_string())
            rounds_trained += rounds - done
            rounds_reused += done
            rows_used += fit.rows
            datasets_reused += fit.dataset_reused
            if fit.prior is not None:  # what an export on train+valid blends at: not refitted
                shares[family] = fit.prior.chosen_shares()
            metrics.update(fit.metrics)
            unranked += [f"{g.collection}/{g.stem}" for g in fit.scores if not g.ranked]
            for part, value in fit.seconds.items():
                seconds[part] += value
            # the next family trains without this one's booster: a LightGBM Booster keeps its
            # tree learner's buffers (histograms of every leaf) for as long as it lives
            del fit, init
        missing = [c for c in s.collections if c not in metrics]
        if missing:
            where = "valid graphs" if fold is None else f"graphs in fold {fold}"
            raise UsageError(
                f"no labeled {where} that carry a ranking (two configs or more, not all of "
                f"one runtime) to score for {', '.join(missing)}"
            )
        score = float(np.mean([metrics[c] for c in s.collections]))
        if store is not None:  # a success at `size` supersedes the key's smaller boosters
            for key in keys:
                store.prune_below(key, size)
        info = {
            "metrics": metrics,
            "score": score,
            "train_seconds": time.perf_counter() - t0,
            "rows": rows_used,
            "model_bytes": model_bytes,
            "worker": this_worker(),
            "budget": budget,
            "fidelity": s.fidelity,
            "rounds_trained": rounds_trained,
            "rounds_reused": rounds_reused,
            "n_threads": s.n_threads,
            "seconds": seconds,
            "datasets_reused": datasets_reused,
        }
        if fold is not None:
            info["fold"] = fold
        if shares:
            info["blend_shares"] = shares
        if reused:
            info["reused"] = reused
        if unranked:
            info["unranked"] = unranked
        return 1.0 - score, info


#: Folder of the feature cache holding the binned training Datasets (LightGBM binary files).
DATASETS_DIR = "datasets"
#: Seconds an idle feature-extraction worker process waits before it exits.
EXTRACT_WORKER_IDLE = 5


def build_objective(
    cfg: CampaignConfig, progress: Any = None, *, n_jobs: int | None = None
) -> tuple[RankerObjective, dict[str, Any] | None]:
    """Extract (or load from cache) the feature tables of a campaign and build its objective.

    Parameters
    ----------
    cfg
        The campaign config. The feature spec and the fidelity settings come from it (so
        from the run's ``campaign.json`` on resume), never from today's defaults.
    progress
        Optional callable ``(path, cache_hit)`` called as each file is ready.
    n_jobs
        Extraction processes (default: the number of CPUs, at most 4).

    Returns
    -------
    tuple
        The objective, and ``data_to_scatter`` for SMAC's Dask runner (``None`` when trials
        run in this process, where the objective holds the tables itself).
    """
    from joblib import parallel_config

    from hpo.features import ExtractOptions, SampleCaps, build_tables, extraction_jobs

    assert cfg.max_budget is not None  # CampaignConfig fills it in
    # extraction happens once: its worker processes leave soon after instead of idling for
    # loky's default 5 minutes, which outlived a campaign killed with SIGKILL
    with parallel_config(backend="loky", idle_worker_timeout=EXTRACT_WORKER_IDLE):
        tables = build_tables(
            Path(cfg.data_root),
            tuple(cfg.collections),
            ("train", "valid"),
            cfg.features,
            caps=SampleCaps.from_settings(cfg),
            extract=ExtractOptions(
                cache_dir=Path(cfg.cache_dir) if cfg.cache_dir else None,
                n_jobs=extraction_jobs(n_jobs),
                on_file=progress,
            ),
        )
    check_labeled(tables, cfg)
    if cfg.cv:
        tables = cv_tables(tables, cfg)
    settings = ObjectiveSettings(
        collections=tuple(cfg.collections),
        fidelity=cfg.fidelity,
        max_budget=float(cfg.max_budget),
        fixed_rounds=cfg.fixed_rounds,
        fast_bias=cfg.fast_bias,
        model_dir=None if cfg.cv else str(cfg.run_dir / BOOSTERS_DIR),
        n_threads=cfg.threads or default_threads(cfg.workers),
        folds=cfg.cv,
        fold_seed=cfg.seed,
        dataset_dir=str(Path(cfg.cache_dir) / DATASETS_DIR) if cfg.cache_dir else None,
        histogram_pool_mb=cfg.histogram_pool_mb,
        deadline=trial_deadline(cfg.walltime),
    )
    distributed = cfg.distributed
    if distributed:
        # scattered once and kept there: the Dataset cache (sent empty to worker processes,
        # shared as it is by the thread workers of a local cluster)
        return RankerObjective(settings), {"tables": tables, "datasets": DatasetCache()}
    return RankerObjective(settings, tables), None


def trial_deadline(walltime: float | None, now: float | None = None) -> float | None:
    """When a trial still boosting is cut: ``walltime`` seconds from ``now`` (the objective is
    built as the session starts) plus a grace of a quarter of it, at least
    :data:`DEADLINE_GRACE` seconds. SMAC starts no trial after the walltime but lets those
    running finish; the grace keeps that (a finishing trial a little late is normal), and the
    deadline keeps one trial from running without end (``--max-budget 1000000``)."""
    if walltime is None:
        return None
    start = time.time() if now is None else now
    return start + walltime + max(DEADLINE_GRACE, 0.25 * walltime)


def check_labeled(tables: Tables, cfg: CampaignConfig) -> None:
    """Refuse a collection with no labeled graph where trials train or score.

    Every trial would fail on it (a file whose runtimes are all 0 is unlabeled: the test
    split's placeholders), so the campaign stops before its first trial instead.

    Raises
    ------
    ConfigError
        Naming the collection, the split and the data root.
    """
    for family, wanted in by_family(cfg.collections).items():
        for split in ("train", "valid"):
            labeled = {g.collection for g in tables[(family, split)].graphs if g.labeled}
            missing = [c for c in wanted if c not in labeled]
            if missing and not (cfg.cv and split == "valid"):  # cv needs labels in the union
                raise ConfigError(
                    f"{cfg.data_root}: no labeled {missing[0]} graph in {split} (every file's "
                    "runtimes are 0, the placeholders of an unlabeled split); a campaign "
                    "trains on labeled train graphs and scores labeled valid ones"
                )


def cv_tables(tables: Tables, cfg: CampaignConfig) -> dict[tuple[str, str], FeatureTable]:
    """The labeled table of each family (train and valid rows joined once), folds checked.

    The train and valid tables are not kept: a campaign holds one copy of its rows.

    Raises
    ------
    ConfigError
        If a collection has fewer labeled graphs than ``cfg.cv`` folds.
    """
    out: dict[tuple[str, str], FeatureTable] = {}
    for family, wanted in by_family(cfg.collections).items():
        table = labeled_table(tables[(family, "train")], tables[(family, "valid")])
        assign_folds(table.graphs, cfg.cv, cfg.seed, wanted)  # refuses too few graphs now
        out[(family, "labeled")] = table
    return out
