"""The settings of a campaign: :class:`CampaignConfig`, saved in ``campaign.json``.

Kept apart from :mod:`hpo.campaign.lifecycle.run` (which re-exports it) so that reading a run folder
needs neither SMAC nor Dask.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpo.campaign.optimizers import (
    get_optimizer,
    legacy_aliases,
    multi_fidelity_optimizers,
    offered_optimizers,
)
from hpo.data.load import COLLECTIONS
from hpo.errors import ConfigError, UsageError
from hpo.features.sampling import (
    DEFAULT_KEEP_FASTEST,
    DEFAULT_TRAIN_CONFIGS,
    DEFAULT_VALID_CONFIGS,
)
from hpo.features.spec import FeatureSpec
from hpo.ranking.spaces import DEFAULT_SPACE
from hpo.ranking.training import DEFAULT_FIXED_ROUNDS
from hpo.runs.record.campaign_file import CampaignRecord, read_campaign_file
from hpo.runs.record.folder import CAMPAIGN_FILE, jsonable
from hpo.runs.record.settings import FIDELITIES
from hpo.runs.record.settings import check_int as _int
from hpo.runs.record.settings import check_positive as _positive
from hpo.runs.record.settings import setting_error as _bad

__all__ = [
    "FIDELITIES",
    "DEFAULT_FINISH",
    "FIDELITY_BUDGETS",
    "LEGACY_OPTIMIZERS",  # noqa: F822  (a view: __getattr__ below)
    "MAX_BUDGET",
    "MAX_SEED",
    "MULTI_FIDELITY",  # noqa: F822
    "OPTIMIZERS",  # noqa: F822
    "PER_MODES",
    "CampaignConfig",
    "SavedCampaign",
    "read_campaign",
]

#: The largest seed: numpy, SMAC and LightGBM seed with 32 bits.
MAX_SEED = 2**32 - 1
#: The largest budget, in boosting rounds or configurations per graph (LightGBM counts both
#: in 32 bits; no campaign of a million rounds per trial would end).
MAX_BUDGET = 1_000_000
#: Default (min_budget, max_budget) per fidelity: boosting rounds, or configurations sampled
#: per training graph (see ``hpo.campaign.objective``). Both span 2**4, so at the default eta 2
#: every stage is a budget SMAC runs (it uses ``max * eta**-i``, never a smaller minimum):
#: rounds 42/84/168/336/672, configs 27/54/108/216/432.
FIDELITY_BUDGETS: dict[str, tuple[float, float]] = {
    "rounds": (42.0, 672.0),
    "configs": (27.0, 432.0),
}
#: ``per``: one campaign for all collections (``none``), one per family (tile, layout) or one
#: per collection, each tuned on its own rows and metric (see
#: :mod:`hpo.campaign.lifecycle.subsets`).
PER_MODES = ("none", "family", "collection")
#: Initial random configurations of the model-based optimizers, chosen by measurement.
DEFAULT_N_INIT = 8
#: Results a budget needs before the surrogate is fitted on it, chosen by measurement.
DEFAULT_MIN_TRIALS = 5
#: Of the initial configurations, those that are neighbours of the baseline
#: (:mod:`hpo.campaign.seeding.local_design`).
DEFAULT_N_LOCAL = 0
#: LightGBM's histogram pool per trial in MiB; 0: unbounded (docs/benchmarks.md#speed-and-memory).
DEFAULT_HISTOGRAM_POOL_MB = 0
#: Configurations a multi-fidelity campaign takes to the largest budget in its reserve
#: (:mod:`hpo.campaign.lifecycle.finish`).
DEFAULT_FINISH = 3
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


#: Views of the optimizer table (:mod:`hpo.campaign.optimizers`), read when asked for, so
#: an optimizer registered later is in them: ``OPTIMIZERS`` (offered, the default first),
#: ``LEGACY_OPTIMIZERS`` (``{old name: name}``), ``MULTI_FIDELITY`` (the optimizers that use
#: budgets between ``min_budget`` and ``max_budget``).
_OPTIMIZER_VIEWS = {
    "OPTIMIZERS": offered_optimizers,
    "LEGACY_OPTIMIZERS": legacy_aliases,
    "MULTI_FIDELITY": multi_fidelity_optimizers,
}


def __getattr__(name: str) -> Any:
    if name in _OPTIMIZER_VIEWS:
        return _OPTIMIZER_VIEWS[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True, kw_only=True)
class CampaignConfig:
    """Every setting of a campaign; saved in ``campaign.json`` so a run can be re-created.

    Paths are made absolute; budgets left ``None`` take :data:`FIDELITY_BUDGETS` of the
    fidelity. For ``bo`` and ``random`` every trial runs at ``max_budget``. The legacy optimizer
    names of :data:`LEGACY_OPTIMIZERS` are replaced by what they ran, so old runs load and resume.
    ``n_init``, ``n_local`` and ``random_prob`` only act on the model-based optimizers
    (``model-hb``, ``model-sh``, ``bo``); model-free ones accept and record them.

    Besides how to search, it records what defines every model of the run, so the objective,
    a resumed campaign and ``hpo export`` read them from ``campaign.json`` instead of from
    today's defaults: ``features`` (the feature spec; a dict is accepted), ``fidelity``,
    ``fixed_rounds`` (boosting rounds of every trial with the ``configs`` fidelity),
    ``fast_bias`` (bias toward fast configs when sampling configs per graph), ``space`` and
    ``seed``. ``per`` splits the run into one campaign per family or per collection
    (:data:`PER_MODES`, :mod:`hpo.campaign.lifecycle.subsets`). ``cv`` = K >= 2 scores each trial on
    one of K folds of the labeled train+valid graphs instead of on the valid split; every
    trial then trains at ``max_budget`` (multi-fidelity optimizers race over folds instead of
    budgets, so ``min_budget`` is unused and ``eta`` applies to folds: see
    :mod:`hpo.campaign.smac.facades`).

    Raises
    ------
    ConfigError
        If a setting is out of range or of the wrong type.
    """

    data_root: Path
    name: str
    collections: tuple[str, ...] = COLLECTIONS
    space: str = DEFAULT_SPACE
    runs_dir: Path = Path("runs")
    trials: int = 100
    walltime: float | None = None
    optimizer: str = "model-hb"
    fidelity: str = "rounds"
    min_budget: float | None = None
    max_budget: float | None = None
    # eta 2 (halve, not third, at each stage) was measured best for the model-based default:
    # more stages promote more configurations to the largest budget, where the surrogate is
    # fitted (docs/benchmarks.md#optimizers)
    eta: int = 2
    # surrogate settings of model-hb, model-sh and bo (random-hb and random have no model):
    # n_init: random configurations before the surrogate proposes (at most --trials), 8 by
    # measurement (docs/benchmarks.md); None: SMAC's own design (10 per hyperparameter, at most a
    # quarter of the trials). random_prob: the share of configs sampled at random between
    # model picks
    n_init: int | None = DEFAULT_N_INIT
    # n_local: how many of the initial configurations are neighbours of the baseline, one
    # hyperparameter changed each (hpo.campaign.seeding.local_design), instead of random draws; at
    # most n_init of them (see local_initial)
    n_local: int = DEFAULT_N_LOCAL
    random_prob: float = 0.2
    # trials one budget needs before the surrogate of model-hb/model-sh is fitted on it, 5 by
    # measurement (docs/benchmarks.md#optimizers, the surrogate's settings: BOHB's d + 1 leaves the
    # forest idle for most of a short campaign, SMAC's 1 fits it on the lone baseline); None: BOHB's
    # d + 1
    min_trials: int | None = DEFAULT_MIN_TRIALS
    seed: int = 0
    workers: int = 1
    # the local cluster's workers as processes (each holds its own binned Datasets, and one
    # that dies, say of a LightGBM crash, is restarted) instead of threads of this process,
    # which share them (docs/benchmarks.md#speed-and-memory); --workers 2 or more only
    worker_processes: bool = False
    # LightGBM threads per trial; None fills the machine's cores (cores // workers)
    threads: int | None = None
    # LightGBM's histogram pool per trial in MiB (a trial holds one histogram per leaf,
    # 0.47 MiB each on a real-size layout Dataset at max_bin 255); 0: unbounded, LightGBM's default
    histogram_pool_mb: int = DEFAULT_HISTOGRAM_POOL_MB
    dask_scheduler: str | None = None
    cache_dir: Path = Path(".hpo_cache")
    # finite (an infinite cost breaks SMAC's random forest) and above any real cost: the tile
    # score is heavy-tailed (a graph can score -30), so a cost of 10 was reachable by trials
    crash_cost: float = 100.0
    features: FeatureSpec = field(default_factory=FeatureSpec)
    fixed_rounds: int = DEFAULT_FIXED_ROUNDS
    fast_bias: float = 2.0
    # per-graph config caps of the feature tables (0: no cap); see hpo.features.sampling
    train_configs: int = DEFAULT_TRAIN_CONFIGS
    valid_configs: int = DEFAULT_VALID_CONFIGS
    keep_fastest: int = DEFAULT_KEEP_FASTEST
    per: str = "none"
    # 0: score every trial on the valid split; K >= 2: K-fold cross-validation over the
    # labeled graphs of train+valid, the folds being SMAC instances (hpo.ranking.folds)
    cv: int = 0
    # the most promising configurations that did not reach max_budget, taken there in a
    # reserve kept back from the walltime (or the last trials); 0: none (runs made before
    # it read as 0). Only multi-fidelity optimizers without cv have any
    # (hpo.campaign.lifecycle.finish)
    finish: int = DEFAULT_FINISH
    # run on a root whose valid or test graphs are also in train (by content,
    # hpo.data.overlap); their valid scores then measure fit, and the summary says so
    allow_overlap: bool = False

    @property
    def distributed(self) -> bool:
        """Whether trials run on Dask: a local cluster (``workers`` > 1) or a scheduler's."""
        return self.workers > 1 or self.dask_scheduler is not None

    def __post_init__(self) -> None:
        put = object.__setattr__
        if isinstance(self.features, dict):
            try:
                put(self, "features", FeatureSpec.from_dict(self.features))
            except (ConfigError, TypeError) as exc:
                raise _bad("features", "a feature spec", self.features) from exc
        if not isinstance(self.features, FeatureSpec):
            raise _bad("features", "a feature spec", self.features)
        _int("fixed_rounds", self.fixed_rounds, 1)
        if (
            isinstance(self.fast_bias, bool)
            or not isinstance(self.fast_bias, (int, float))
            or not 0 <= self.fast_bias < math.inf
        ):
            raise _bad("fast_bias", "a finite number >= 0", self.fast_bias)
        put(self, "fast_bias", float(self.fast_bias))
        for key in ("data_root", "runs_dir", "cache_dir"):
            value = getattr(self, key)
            if not isinstance(value, (str, Path)) or not str(value):
                raise _bad(key, "a path", value)
            put(self, key, Path(value).expanduser().absolute())
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise _bad("name", "1-100 letters, digits, '.', '_' or '-' (not first)", self.name)
        collections = (self.collections,) if isinstance(self.collections, str) else self.collections
        if (
            not isinstance(collections, (tuple, list))
            or not collections
            or any(c not in COLLECTIONS for c in collections)
        ):
            raise _bad(
                "collections",
                f"a non-empty selection of {', '.join(COLLECTIONS)}",
                self.collections,
            )
        put(self, "collections", tuple(c for c in COLLECTIONS if c in collections))
        if not isinstance(self.space, str) or not self.space:
            raise _bad("space", "a space name or path", self.space)
        _int("trials", self.trials, 1)
        if self.walltime is not None:
            put(self, "walltime", _positive("walltime", self.walltime))
        if not isinstance(self.optimizer, str):
            raise _bad("optimizer", f"one of {', '.join(offered_optimizers())}", self.optimizer)
        put(self, "optimizer", get_optimizer(self.optimizer).name)
        if self.fidelity not in FIDELITIES:
            raise _bad("fidelity", f"one of {', '.join(FIDELITIES)}", self.fidelity)
        self._check_budgets()
        if self.threads is not None:
            _int("threads", self.threads, 1)
        if self.n_init is not None:
            _int("n_init", self.n_init, 1)
        if self.min_trials is not None:
            _int("min_trials", self.min_trials, 1)
        _int("n_local", self.n_local, 0)
        _int("histogram_pool_mb", self.histogram_pool_mb, 0)
        prob = self.random_prob
        if isinstance(prob, bool) or not isinstance(prob, (int, float)) or not 0 <= prob <= 1:
            raise _bad("random_prob", "a probability in [0, 1]", prob)
        put(self, "random_prob", float(prob))
        if _int("seed", self.seed, 0) > MAX_SEED:  # numpy, SMAC and LightGBM take 32 bits
            raise _bad("seed", f"an integer in [0, {MAX_SEED}]", self.seed)
        _int("workers", self.workers, 1)
        if not isinstance(self.worker_processes, bool):
            raise _bad("worker_processes", "true or false", self.worker_processes)
        if self.worker_processes and (self.workers == 1 or self.dask_scheduler is not None):
            raise ConfigError(
                "campaign setting 'worker_processes' needs a local cluster of 2 or more "
                f"'workers' (found {self.workers}"
                + (", and a dask_scheduler)" if self.dask_scheduler is not None else ")")
            )
        if self.dask_scheduler is not None:
            if not isinstance(self.dask_scheduler, str) or not self.dask_scheduler:
                raise _bad("dask_scheduler", "a scheduler address", self.dask_scheduler)
            if self.workers > 1:
                raise ConfigError(
                    "campaign settings 'workers' and 'dask_scheduler' exclude each "
                    "other (the scheduler's workers are used)"
                )
        put(self, "crash_cost", _positive("crash_cost", self.crash_cost))
        for key in ("train_configs", "valid_configs", "keep_fastest"):
            _int(key, getattr(self, key), 0)
        if self.per not in PER_MODES:
            raise _bad("per", f"one of {', '.join(PER_MODES)}", self.per)
        cv = self.cv
        if isinstance(cv, bool) or not isinstance(cv, int) or cv == 1 or cv < 0:
            raise _bad("cv", "0 (score on the valid split) or a number of folds >= 2", cv)
        _int("finish", self.finish, 0)
        if not isinstance(self.allow_overlap, bool):
            raise _bad("allow_overlap", "true or false", self.allow_overlap)

    def _check_budgets(self) -> None:
        default_min, default_max = FIDELITY_BUDGETS[self.fidelity]
        low = default_min if self.min_budget is None else _positive("min_budget", self.min_budget)
        high = default_max if self.max_budget is None else _positive("max_budget", self.max_budget)
        for key, value in (("min_budget", low), ("max_budget", high)):
            if value > MAX_BUDGET:  # a trial's rounds or configs are 32-bit in LightGBM
                raise _bad(key, f"a budget of at most {MAX_BUDGET:,} {self.fidelity}", value)
        object.__setattr__(self, "min_budget", float(low))
        object.__setattr__(self, "max_budget", float(high))
        eta = _int("eta", self.eta, 2)
        # with cv, successive halving races over folds (1..cv), not over these budgets
        if get_optimizer(self.optimizer).multi_fidelity and not self.cv and high < low * eta:
            raise ConfigError(
                f"campaign settings: max_budget ({high:g}) must be at least eta ({eta}) times "
                f"min_budget ({low:g}) for successive halving to have two stages"
            )

    @property
    def run_dir(self) -> Path:
        """The run folder ``<runs_dir>/<name>``."""
        return self.runs_dir / self.name

    @property
    def local_initial(self) -> int:
        """How many initial configurations are neighbours of the baseline: ``n_local``, at
        most ``n_init`` (so a smaller ``--n-init`` needs no ``--n-local`` beside it), and none
        for an optimizer without an initial design (the random ones)."""
        if not get_optimizer(self.optimizer).model_based:
            return 0
        return self.n_local if self.n_init is None else min(self.n_local, self.n_init)

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as JSON-compatible values (the feature spec as a dict)."""
        out = {f.name: jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}
        out["features"] = self.features.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: Any, source: str = "campaign settings") -> CampaignConfig:
        """Re-create a config from :meth:`to_dict` output; unknown keys are errors."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a JSON object, found {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"{source}: unknown campaign setting '{unknown[0]}'")
        missing = sorted(k for k in ("data_root", "name") if k not in data)
        if missing:
            raise ConfigError(f"{source}: missing campaign setting '{missing[0]}'")
        values: dict[str, Any] = {
            k: tuple(v) if k == "collections" and isinstance(v, list) else v
            for k, v in data.items()
        }
        try:
            return cls(**values)
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    def to_json(self) -> str:
        """Serialise the settings to a JSON string."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str, source: str = "campaign settings") -> CampaignConfig:
        """Re-create a config from :meth:`to_json` output."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{source}: not valid JSON ({exc})") from exc
        return cls.from_dict(data, source)


@dataclass(frozen=True)
class SavedCampaign:
    """A run folder's ``campaign.json``: the record (:class:`~hpo.runs.record.campaign_file.
    CampaignRecord`) and the campaign's settings it holds, checked as a new campaign's are."""

    record: CampaignRecord
    config: CampaignConfig


def read_campaign(run_dir: Path) -> SavedCampaign:
    """Read ``campaign.json``: its record, and its settings as a :class:`CampaignConfig`.

    Raises
    ------
    UsageError
        If the folder has no ``campaign.json``.
    ConfigError
        If the file is not a valid campaign file, or of a format this hpo does not read
        (format-1 files read with the settings of that time, see
        :mod:`hpo.runs.record.campaign_file`).
    """
    path = Path(run_dir) / CAMPAIGN_FILE
    if not path.exists():
        raise UsageError(f"{run_dir}: not a run folder (missing {CAMPAIGN_FILE})")
    record = read_campaign_file(path)
    if record.space is None:
        raise ConfigError(f"{path}: expected keys 'config' and 'space'")
    return SavedCampaign(record, CampaignConfig.from_dict(record.config, str(path)))
