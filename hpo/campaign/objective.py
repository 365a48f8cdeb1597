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
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpo.campaign.config import FIDELITIES
from hpo.errors import ConfigError, UsageError
from hpo.features.table import FeatureTable, family_of
from hpo.ranking.training import (
    DEFAULT_FIXED_ROUNDS,
    collection_means,
    feature_columns,
    make_ranker,
    sample_configs,
    score_table,
    select_rows,
)

__all__ = ["ObjectiveSettings", "RankerObjective", "build_objective"]

Tables = Mapping[tuple[str, str], FeatureTable]


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
        Budget used when SMAC passes none (single-fidelity optimizers).
    fixed_rounds
        Boosting rounds when the fidelity is ``configs``.
    fast_bias
        Bias toward fast configs when sampling configs per graph.
    model_dir
        Where boosters are kept for continued training (``rounds`` fidelity); ``None`` retrains.
    n_threads
        LightGBM threads per trial.
    """

    collections: tuple[str, ...]
    fidelity: str = "rounds"
    max_budget: float = 300.0
    fixed_rounds: int = DEFAULT_FIXED_ROUNDS
    fast_bias: float = 2.0
    model_dir: str | None = None
    n_threads: int = 1

    def __post_init__(self) -> None:
        if self.fidelity not in FIDELITIES:
            raise ConfigError(f"fidelity must be one of {FIDELITIES}, found '{self.fidelity}'")
        if not self.collections:
            raise ConfigError("objective: no collections selected")


def _config_dict(config: Any) -> dict[str, Any]:
    raw = dict(config)  # a ConfigSpace Configuration is a Mapping
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in raw.items()}


def _booster_key(hyperparameters: Mapping[str, Any], seed: int, family: str) -> str:
    blob = json.dumps({"hp": hyperparameters, "seed": seed, "family": family}, sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


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

    def _continue_from(self, key: str, rounds: int) -> tuple[Any, int]:
        """Booster saved for ``key`` at the largest round count below ``rounds``."""
        if self.settings.model_dir is None:
            return None, 0
        folder = Path(self.settings.model_dir)
        best = 0
        for path in folder.glob(f"{key}-*.txt"):
            try:
                r = int(path.stem.rsplit("-", 1)[1])
            except ValueError:
                continue
            if best < r < rounds:
                best = r
        if best == 0:
            return None, 0
        import lightgbm as lgb

        try:
            return lgb.Booster(model_file=str(folder / f"{key}-{best}.txt")), best
        except lgb.basic.LightGBMError:
            return None, 0  # a half-written booster file: retrain from scratch

    def _save_booster(self, key: str, rounds: int, booster: Any) -> None:
        if self.settings.model_dir is None:
            return
        folder = Path(self.settings.model_dir)
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{key}-{rounds}.{os.getpid()}.tmp"
        booster.save_model(str(tmp))
        os.replace(tmp, folder / f"{key}-{rounds}.txt")

    def __call__(
        self,
        config: Any,
        seed: int = 0,
        budget: float | None = None,
        tables: Tables | None = None,
        **_: Any,
    ) -> tuple[float, dict[str, Any]]:
        """Train at ``budget`` and return ``(cost, info)``."""
        s = self.settings
        tables = tables if tables is not None else self.tables
        if tables is None:
            raise UsageError("objective called without feature tables")
        hp = _config_dict(config)
        budget = float(s.max_budget if budget is None else budget)
        metrics: dict[str, float] = {}
        rows_used = model_bytes = 0
        rounds_trained = rounds_reused = 0
        t0 = time.perf_counter()
        families = sorted({family_of(c) for c in s.collections})
        for family in families:
            wanted = [c for c in s.collections if family_of(c) == family]
            train, valid = tables[(family, "train")], tables[(family, "valid")]
            columns = feature_columns(train, hp)
            rows = select_rows(train, wanted)
            rng = np.random.default_rng(seed)
            if s.fidelity == "configs":
                rows = sample_configs(train, rows, max(1, int(round(budget))), rng, s.fast_bias)
                rounds, init, done = s.fixed_rounds, None, 0
            else:
                rounds = max(1, int(round(budget)))
                key = _booster_key(hp, seed, family)
                init, done = self._continue_from(key, rounds)
            ranker = make_ranker(
                hp, num_boost_round=rounds - done, seed=seed, n_threads=s.n_threads
            )
            ranker.fit(
                train.X[rows][:, columns], train.target[rows], train.group[rows], init_model=init
            )
            if s.fidelity == "rounds":
                self._save_booster(key, rounds, ranker.booster_)
            rounds_trained += rounds - done
            rounds_reused += done
            rows_used += int(rows.size)
            model_bytes += len(ranker.booster_.model_to_string())
            metrics.update(collection_means(score_table(ranker, valid, columns, wanted), wanted))
        missing = [c for c in s.collections if c not in metrics]
        if missing:
            raise UsageError(f"no labeled valid graphs to score for {', '.join(missing)}")
        score = float(np.mean([metrics[c] for c in s.collections]))
        info = {
            "metrics": metrics,
            "score": score,
            "train_seconds": time.perf_counter() - t0,
            "rows": rows_used,
            "model_bytes": model_bytes,
            "worker": f"{socket.gethostname()}:{os.getpid()}",
            "budget": budget,
            "fidelity": s.fidelity,
            "rounds_trained": rounds_trained,
            "rounds_reused": rounds_reused,
        }
        return 1.0 - score, info


def build_objective(
    cfg: Any, progress: Any = None, *, n_jobs: int | None = None
) -> tuple[RankerObjective, dict[str, Any] | None]:
    """Extract (or load from cache) the feature tables of a campaign and build its objective.

    Parameters
    ----------
    cfg
        A campaign config (``data_root``, ``collections``, ``fidelity``, ``max_budget``,
        ``cache_dir``, ``runs_dir``, ``name``, ``workers``, ``dask_scheduler``).
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
    from hpo.features import FeatureSpec, SampleCaps, build_tables

    tables = build_tables(
        Path(cfg.data_root),
        tuple(cfg.collections),
        ("train", "valid"),
        FeatureSpec(),
        cache_dir=Path(cfg.cache_dir) if cfg.cache_dir else None,
        caps=SampleCaps.from_settings(cfg),
        n_jobs=n_jobs or min(4, os.cpu_count() or 1),
        on_file=progress,
    )
    settings = ObjectiveSettings(
        collections=tuple(cfg.collections),
        fidelity=cfg.fidelity,
        max_budget=float(cfg.max_budget),
        model_dir=str(Path(cfg.runs_dir) / cfg.name / "boosters"),
    )
    distributed = int(getattr(cfg, "workers", 1)) > 1 or bool(getattr(cfg, "dask_scheduler", None))
    if distributed:
        return RankerObjective(settings), {"tables": tables}
    return RankerObjective(settings, tables), None
