"""``campaign.json``, the run record: its type, its format, the one reader and the one writer.

``campaign.json`` records everything that defines the models of a run (settings with the
feature spec, fidelity settings, search space and seed), so the objective, a resumed
campaign and ``hpo export`` rebuild the same rows and the same training from the folder,
not from today's defaults; and what happened to the run since (its resumes, extensions,
SMAC's setup). :class:`CampaignRecord` is that file, typed: :func:`read_campaign_file` is
the only reader (it refuses a format this ``hpo`` does not know in one line, and upgrades
what older files lack), :func:`write_campaign_file` and :func:`update_campaign_file` the
only writers. No other module looks a key of the file up.

Formats
-------
1
    Settings without ``features``, ``fixed_rounds`` and ``fast_bias``: those runs were made
    with the defaults of the time, which :data:`FORMAT_1_SETTINGS` spells out *literally*
    (not by reference to today's defaults), so a later change of a default never changes
    how an old run is read, resumed or exported.
2
    Settings hold ``features`` (a :class:`hpo.features.FeatureSpec` as a dict),
    ``fixed_rounds`` and ``fast_bias``.

Settings added later within a format are filled in from :data:`ADDED_SETTINGS` when a file
lacks them, with the value the runs without them were made with (``cv``: 0, the valid split;
``per``: one campaign; the config caps: none); so is a missing ``layout_metric`` (the metric
of the runs made before it was recorded). These are the only defaults a reader applies:
:class:`hpo.runs.record.settings.RunSettings` types the completed settings and refuses a
missing one. A record is written back with its settings as they were written (an update
never upgrades an old file), but for an extension, which records the campaign's settings
anew.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpo.errors import ConfigError
from hpo.runs.record.folder import CAMPAIGN_FILE, LOCK_FILE, read_json, write_json_atomic

__all__ = [
    "ADDED_SETTINGS",
    "CAMPAIGN_FORMAT",
    "FORMAT_1_SETTINGS",
    "SUPPORTED_FORMATS",
    "CampaignRecord",
    "Extension",
    "Resume",
    "Reuse",
    "SmacSetup",
    "SourceTrial",
    "WarmSource",
    "WarmStartRecord",
    "campaign_identity",
    "complete_settings",
    "is_run_folder",
    "read_campaign_file",
    "update_campaign_file",
    "write_campaign_file",
]

#: Format written by this ``hpo``.
CAMPAIGN_FORMAT = 2
#: Formats this ``hpo`` reads.
SUPPORTED_FORMATS = (1, 2)
#: What format-1 runs were made with (the defaults before they were recorded).
FORMAT_1_SETTINGS: dict[str, Any] = {
    "features": {
        "relative": True,
        "graph_descriptor": True,
        "chunk_size": 2048,
        "producer_hops": 4,
        "version": 1,
    },
    "fixed_rounds": 200,
    "fast_bias": 2.0,
    # every config of every graph became a row (per-graph caps came with format 2)
    "train_configs": 0,
    "valid_configs": 0,
    "keep_fastest": 0,
    # SMAC's own initial design (the setting came later, with a measured default of 8)
    "n_init": None,
    # BOHB's d + 1 results before the forest is fitted (the measured default of 5 came later)
    "min_trials": None,
    # one LightGBM thread per trial, whatever the cores (threads came with format 2)
    "threads": 1,
}

#: Settings added to format 2 after its first runs, and what those runs were made with.
ADDED_SETTINGS: dict[str, Any] = {
    # scored on the valid split (k-fold cross-validation came later)
    "cv": 0,
    # one campaign for all collections (per-subset runs came later)
    "per": "none",
    # every config of every graph became a row (the per-graph caps came later)
    "train_configs": 0,
    "valid_configs": 0,
    "keep_fastest": 0,
    # ended with SMAC's loop, no configuration taken to the largest budget after it
    "finish": 0,
    # every initial configuration drawn at random (neighbours of the baseline came later)
    "n_local": 0,
    # LightGBM's unbounded histogram pool (the setting came later)
    "histogram_pool_mb": 0,
    # no check of graphs shared between splits (it came later): nothing refused
    "allow_overlap": True,
}


def complete_settings(found: int, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The settings of a format-``found`` record with what they lack filled in: the settings
    a format-1 run was made with (:data:`FORMAT_1_SETTINGS`), then :data:`ADDED_SETTINGS`."""
    added = {**(FORMAT_1_SETTINGS if found == 1 else {}), **ADDED_SETTINGS}
    return {**settings, **{k: v for k, v in added.items() if k not in settings}}


# ---- reading values ------------------------------------------------------------------------


class _Where:
    """Names the file and the key of a value that is not what it must be (one line)."""

    def __init__(self, source: Path | str, key: str) -> None:
        self.source, self.key = source, key

    def error(self, expected: str) -> ConfigError:
        return ConfigError(f"{self.source}: key '{self.key}': {expected}")

    def object(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise self.error("expected a JSON object")
        return dict(value)

    def objects(self, value: Any) -> list[dict[str, Any]]:
        if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
            raise self.error("expected a list of JSON objects")
        return [dict(v) for v in value]


def _number(value: Any) -> float | None:
    """``value`` as a float if it is a finite number, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _mapping(value: Any) -> dict[str, Any] | None:
    return dict(value) if isinstance(value, Mapping) else None


def _drop_none(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


#: How a field of each optional scalar type is read (this module's annotations are strings).
_SCALAR_READERS: dict[str, Callable[[Any], Any]] = {
    "float | None": _number,
    "int | None": _int,
    "str | None": _text,
}


def _scalars(cls: type, entry: Mapping[str, Any], **given: Any) -> dict[str, Any]:
    """The keyword arguments of ``cls``: each optional scalar field read from ``entry`` by its
    type (a value of another type reads as ``None``), the other fields from ``given``.

    Why: one declaration of a record part (its dataclass fields) says how it is read, so a new
    field cannot be written to the file and forgotten by the reader."""
    out = dict(given)
    for f in dataclasses.fields(cls):
        if f.name not in out:
            out[f.name] = _SCALAR_READERS[str(f.type)](entry.get(f.name))
    return out


# ---- the parts of a record -------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Resume:
    """One resume of the run (``resumes``): when (epoch seconds), and the trials logged by
    then. :meth:`hpo.runs.views.history.RunHistory.elapsed` leaves the idle time before it
    out of the run's curves."""

    at: float | None
    records: int | None

    @classmethod
    def from_json(cls, value: Any, where: _Where) -> Resume:
        return cls(**_scalars(cls, where.object(value)))

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "records": self.records}


@dataclass(frozen=True, kw_only=True)
class Extension:
    """One extension of the run (``extensions``: ``--resume`` with a higher ``--trials`` or
    ``--walltime``): when, each limit before and after, and the trials logged by then (the
    finishing phase counts its own trials from there)."""

    at: float | None
    trials: tuple[int, int]
    walltime: tuple[float | None, float | None]
    records: int

    @classmethod
    def from_json(cls, value: Any, where: _Where) -> Extension:
        entry = where.object(value)
        trials, walltime = entry.get("trials"), entry.get("walltime")
        if not isinstance(trials, list) or not isinstance(walltime, list):
            raise where.error("expected trials and walltime as [before, after]")
        if len(trials) != 2 or len(walltime) != 2 or any(_int(t) is None for t in trials):
            raise where.error("expected trials and walltime as [before, after]")
        if any(w is not None and _number(w) is None for w in walltime):
            raise where.error("expected trials and walltime as [before, after]")
        records = _int(entry.get("records"))
        return cls(
            at=_number(entry.get("at")),
            trials=(trials[0], trials[1]),
            walltime=(_number(walltime[0]), _number(walltime[1])),
            records=0 if records is None else records,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "trials": list(self.trials),
            "walltime": list(self.walltime),
            "records": self.records,
        }


@dataclass(frozen=True, kw_only=True)
class WarmSource:
    """A ``--warm-start`` source (``warm_start.sources``): the run, its folder, and how many
    configurations it gave, clipped or dropped (a per-subset run's record: the run only)."""

    run: str | None
    path: str | None
    configs: int | None = None
    clipped: int | None = None
    dropped: int | None = None

    @classmethod
    def from_json(cls, value: Any, where: _Where) -> WarmSource:
        return cls(**_scalars(cls, where.object(value)))

    def to_json(self) -> dict[str, Any]:
        return _drop_none(dataclasses.asdict(self))


@dataclass(frozen=True, kw_only=True)
class SourceTrial:
    """The source's trial a warm start's baseline came from (``warm_start.baseline_trial``):
    number, configuration, seed, budget, score and the source's run folder."""

    trial: int | None
    config: dict[str, Any]
    seed: int | None
    budget: float | None
    score: float | None
    path: str | None

    @classmethod
    def from_json(cls, value: Any) -> SourceTrial | None:
        entry = _mapping(value)
        if entry is None:
            return None
        return cls(**_scalars(cls, entry, config=_mapping(entry.get("config")) or {}))

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, kw_only=True)
class Reuse:
    """How a warm start's baseline is scored (``warm_start.reuse``,
    :mod:`hpo.campaign.seeding.warm_reuse`): the source's boosters scored again, or why not.

    Attributes
    ----------
    refused
        Why the baseline trains (``None`` when its boosters are reused).
    boosters
        ``{family: booster path in the source}``, when reused.
    size
        The boosters' budget size (rounds, or configs per graph).
    run, trial, score, path, created, data_fingerprint
        The source run, trial and score, its folder, and what identifies it (checked again
        once its boosters are copied).
    """

    refused: str | None = None
    boosters: dict[str, str] | None = None
    size: int | None = None
    run: str | None = None
    trial: int | None = None
    score: float | None = None
    path: str | None = None
    created: float | None = None
    data_fingerprint: str | None = None

    @classmethod
    def from_json(cls, value: Any, where: _Where) -> Reuse | None:
        entry = _mapping(value)
        if entry is None:
            return None
        boosters = entry.get("boosters")
        if "boosters" in entry:  # reused: what scores the baseline must be whole
            size = entry.get("size")
            named = isinstance(boosters, Mapping) and all(
                isinstance(p, str) for p in boosters.values()
            )
            if not named or type(size) is not int:
                raise where.error("malformed 'reuse'")
        return cls(**_scalars(cls, entry, boosters=None if boosters is None else dict(boosters)))

    def to_json(self) -> dict[str, Any]:
        if self.boosters is None:
            return {"refused": self.refused}
        return _drop_none(
            {
                "run": self.run,
                "trial": self.trial,
                "score": self.score,
                "size": self.size,
                "boosters": self.boosters,
                "path": self.path,
                "created": self.created,
                "data_fingerprint": self.data_fingerprint,
            }
        )


@dataclass(frozen=True, kw_only=True)
class WarmStartRecord:
    """A warm-started run's ``warm_start`` (:func:`hpo.campaign.seeding.warm_start.
    warm_configs`); a per-subset run's holds its sources only.

    Attributes
    ----------
    sources
        The source runs.
    baseline
        The first source's best, mapped onto the run's space: the baseline trial's
        configuration (``None``: the space's default is the baseline).
    baseline_run
        The campaign that gave it (``RUN`` or ``RUN/SUBSET``).
    baseline_is_default
        Whether that best is the space's default (``None``: a record made before it said;
        compared with the saved space's default).
    baseline_trial
        The source trial the baseline came from.
    reuse
        How the baseline is scored (``None``: a record made before reuse, or no baseline).
    configs
        The other mapped configurations, run first (``None`` in a per-subset run's record).
    """

    sources: tuple[WarmSource, ...] = ()
    baseline: dict[str, Any] | None = None
    baseline_run: str | None = None
    baseline_is_default: bool | None = None
    baseline_trial: SourceTrial | None = None
    reuse: Reuse | None = None
    configs: tuple[dict[str, Any], ...] | None = None

    @classmethod
    def from_json(cls, value: Any, source: Path | str) -> WarmStartRecord:
        where = _Where(source, "warm_start")
        record = where.object(value)
        baseline = record.get("baseline")
        if baseline is not None and not isinstance(baseline, Mapping):
            raise where.error("expected baseline as an object")
        configs = record.get("configs")
        if not isinstance(configs, list) or not all(isinstance(c, Mapping) for c in configs):
            configs = None  # a per-subset run's record, or a malformed one (refused where used)
        reuse = Reuse.from_json(record.get("reuse"), where)
        if reuse is not None and reuse.boosters is not None and baseline is None:
            raise where.error("malformed 'reuse'")  # a reused booster scores the baseline
        flag = record.get("baseline_is_default")
        return cls(
            sources=tuple(WarmSource.from_json(s, where) for s in record.get("sources") or []),
            baseline=None if baseline is None else dict(baseline),
            baseline_run=_text(record.get("baseline_run")),
            baseline_is_default=flag if isinstance(flag, bool) else None,
            baseline_trial=SourceTrial.from_json(record.get("baseline_trial")),
            reuse=reuse,
            configs=None if configs is None else tuple(dict(c) for c in configs),
        )

    def to_json(self) -> dict[str, Any]:
        trial = self.baseline_trial
        values = {
            "sources": [s.to_json() for s in self.sources],
            "baseline": self.baseline,
            "baseline_run": self.baseline_run,
            "baseline_is_default": self.baseline_is_default,
            "baseline_trial": None if trial is None else trial.to_json(),
            "configs": None if self.configs is None else list(self.configs),
            "reuse": None if self.reuse is None else self.reuse.to_json(),
        }
        # a new run's record names its baseline, none included; a per-subset run's holds
        # its sources only, and older records lack what came later
        said = ("sources", "baseline", "baseline_run", "baseline_trial", "configs")
        full = self.configs is not None
        return {k: v for k, v in values.items() if v is not None or (full and k in said)}


@dataclass(frozen=True)
class SmacSetup:
    """What searched (``smac``, :func:`hpo.campaign.smac.facades.describe_facade`): SMAC's
    facade and each component's class and settings, as SMAC's own meta gives them."""

    data: dict[str, Any]

    @property
    def facade(self) -> str | None:
        """The facade's class name."""
        return _text(self.data.get("facade"))

    def component(self, name: str) -> tuple[str, dict[str, Any]]:
        """The class name (``?`` when not recorded) and the settings of the component
        ``name`` (``intensifier``, ``initial_design`` ...)."""
        settings = _mapping(self.data.get(name)) or {}
        return str(settings.pop("class", "?")).rsplit(".", 1)[-1], settings


# ---- the record ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CampaignRecord:
    """A run's ``campaign.json``, read by :func:`read_campaign_file`.

    Attributes
    ----------
    format
        The format the file was written in (:data:`SUPPORTED_FORMATS`).
    settings
        The campaign's settings as written (:attr:`config` completes them).
    space
        The search space (ConfigSpace's serialisation), ``None`` if the file has none.
    data_fingerprint
        The hash of the data files the run read (:func:`hpo.runs.record.folder.
        data_fingerprint`).
    shared_graphs
        Valid or test graphs also in train, when the run was allowed to overlap (``None``:
        a record made before they were looked for).
    versions
        The package versions at the start (``None``: unreadable).
    layout_metric
        How the run's trials scored layout graphs (older runs: the metric of their time).
    created
        Epoch seconds the record was made.
    smac
        What searched, once SMAC was set up.
    warm_start
        The warm start of a warm-started run.
    local_design
        The baseline's neighbours a run with ``n_local`` runs first (``None``: a record made
        before they were saved, which draws them again).
    subsets
        A per-subset run's ``{subset folder: its collections}``.
    resumes, extensions
        Every resume, and every extension, in order.
    other
        Keys this ``hpo`` does not know, written back as they were.
    source
        The file read (named in errors).
    """

    format: int = CAMPAIGN_FORMAT
    settings: dict[str, Any]
    space: dict[str, Any] | None = None
    data_fingerprint: str | None = None
    shared_graphs: tuple[str, ...] | None = None
    versions: dict[str, Any] | None = None
    layout_metric: str | None = None
    created: float | None = None
    smac: SmacSetup | None = None
    warm_start: WarmStartRecord | None = None
    local_design: tuple[dict[str, Any], ...] | None = None
    subsets: dict[str, tuple[str, ...]] | None = None
    resumes: tuple[Resume, ...] = ()
    extensions: tuple[Extension, ...] = ()
    other: dict[str, Any] = field(default_factory=dict)
    source: str = field(default=CAMPAIGN_FILE, compare=False)

    #: The keys of the file, in the order they are written; any other is kept in ``other``.
    KEYS = (
        "format",
        "config",
        "space",
        "data_fingerprint",
        "shared_graphs",
        "versions",
        "layout_metric",
        "created",
        "subsets",
        "warm_start",
        "local_design",
        "smac",
        "resumes",
        "extensions",
    )

    @property
    def config(self) -> dict[str, Any]:
        """The settings, completed with what older files lack (:func:`complete_settings`)."""
        return complete_settings(self.format, self.settings)

    @property
    def recorded_layout_metric(self) -> str:
        """How the run's trials scored layout graphs: :attr:`layout_metric`, or for a run
        made before it was recorded the metric of that time."""
        if self.layout_metric is not None:
            return self.layout_metric
        from hpo.ranking.scoring.metrics import LEGACY_LAYOUT_METRIC  # hpo.ranking is heavy

        return LEGACY_LAYOUT_METRIC

    @property
    def kind(self) -> str:
        """``"subsets"`` for a per-subset run (its settings' ``per`` and its subsets), else
        ``"single"``: the one place the kind of a run is decided."""
        per = self.config.get("per")
        return "subsets" if per != "none" and self.subsets is not None else "single"

    @classmethod
    def from_json(cls, data: Any, source: Path | str = CAMPAIGN_FILE) -> CampaignRecord:
        """The record of a ``campaign.json``'s content (see :func:`read_campaign_file`).

        Raises
        ------
        ConfigError
            One line naming ``source`` if the content is not an object, its format is not
            one this ``hpo`` reads, or a key holds what it cannot.
        """
        found, settings = _format_and_settings(data, source)
        warm = data.get("warm_start")
        local = data.get("local_design")
        subsets = data.get("subsets")
        shared = data.get("shared_graphs")
        smac = _mapping(data.get("smac"))
        return cls(
            format=found,
            settings=settings,
            space=_mapping(data.get("space")),
            data_fingerprint=_text(data.get("data_fingerprint")),
            shared_graphs=tuple(str(s) for s in shared) if isinstance(shared, list) else None,
            versions=_mapping(data.get("versions")),
            layout_metric=_text(data.get("layout_metric")),
            created=_number(data.get("created")),
            smac=None if smac is None else SmacSetup(smac),
            warm_start=None if warm is None else WarmStartRecord.from_json(warm, source),
            local_design=None if local is None else _local_design(local, source),
            subsets=None if subsets is None else _subsets(subsets, source),
            resumes=tuple(
                Resume.from_json(e, _Where(source, "resumes")) for e in data.get("resumes") or []
            ),
            extensions=tuple(
                Extension.from_json(e, _Where(source, "extensions"))
                for e in data.get("extensions") or []
            ),
            other={k: v for k, v in data.items() if k not in cls.KEYS},
            source=str(source),
        )

    def to_json(self) -> dict[str, Any]:
        """The content of the file: the settings as written, optional keys only when set."""
        warm, local = self.warm_start, self.local_design
        values: dict[str, Any] = {
            "format": self.format,
            "config": self.settings,
            "space": self.space,
            "data_fingerprint": self.data_fingerprint,
            "shared_graphs": None if self.shared_graphs is None else list(self.shared_graphs),
            "versions": self.versions,
            "layout_metric": self.layout_metric,
            "created": self.created,
            "subsets": None
            if self.subsets is None
            else {k: list(v) for k, v in self.subsets.items()},
            "warm_start": None if warm is None else warm.to_json(),
            "local_design": None if local is None else list(local),
            "smac": None if self.smac is None else self.smac.data,
            "resumes": [r.to_json() for r in self.resumes] or None,
            "extensions": [e.to_json() for e in self.extensions] or None,
        }
        return {**_drop_none(values), **self.other}

    def version(self, package: str) -> str | None:
        """The version of ``package`` the run started with (:attr:`versions`)."""
        return _text((self.versions or {}).get(package))

    @property
    def warm_baseline(self) -> tuple[str, bool] | None:
        """The warm start's baseline, as ``(source run, is the default)``; ``None`` when the
        baseline is the space's default configuration (no warm baseline).

        The one place that reads it: the labels of the summary, ``runs show`` (and its JSON)
        and the campaign's start-up log all come from here.
        """
        warm = self.warm_start
        if warm is None or warm.baseline is None:
            return None
        return warm.baseline_run or "an earlier run", self._warm_baseline_is_default(warm)

    def _warm_baseline_is_default(self, warm: WarmStartRecord) -> bool:
        """Whether a warm start's baseline (the first source's best, mapped onto the run's
        space) is that space's default configuration: the source never beat the default.

        The record says it (``baseline_is_default``). A record written before it did is
        compared with the default of the space saved beside it, so a run warm-started earlier
        is labelled the same way; ``False`` when that space cannot be read.
        """
        if warm.baseline_is_default is not None:
            return warm.baseline_is_default
        from hpo.errors import HpoError
        from hpo.ranking.spaces import space_from_dict
        from hpo.runs.incumbent import config_key

        try:
            default = dict(space_from_dict(self.space).get_default_configuration())
        except HpoError:
            return False
        return config_key(warm.baseline) == config_key(default)

    @property
    def baseline_origin(self) -> str:
        """What the run's baseline is: ``"default configuration"``, or ``"warm start: best of
        RUN"`` when a warm start's best took the default's place.

        When that best is the space's default, the label says so, ``"warm start: best of RUN
        = the default configuration"``: without it a reader would take the baseline for a
        tuned configuration.
        """
        warm = self.warm_baseline
        if warm is None:
            return "default configuration"
        run, is_default = warm
        return f"warm start: best of {run}" + (" = the default configuration" if is_default else "")

    def with_resume(self, resume: Resume) -> CampaignRecord:
        """The record with one more resume."""
        return dataclasses.replace(self, resumes=(*self.resumes, resume))


def _format_and_settings(data: Any, source: Path | str) -> tuple[int, dict[str, Any]]:
    """The format of a record and its settings; a ConfigError unless this ``hpo`` reads it."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: expected a JSON object")
    found = data.get("format")
    if isinstance(found, bool) or found not in SUPPORTED_FORMATS:
        supported = ", ".join(str(f) for f in SUPPORTED_FORMATS)
        raise ConfigError(
            f"{source}: campaign format {found!r} is not supported by this hpo (it reads "
            f"formats {supported}); use the hpo version that made the run"
        )
    settings = data.get("config")
    if not isinstance(settings, Mapping):
        raise ConfigError(f"{source}: key 'config': expected a JSON object")
    return found, dict(settings)


def _local_design(value: Any, source: Path | str) -> tuple[dict[str, Any], ...]:
    if not isinstance(value, list) or not all(isinstance(c, Mapping) for c in value):
        raise ConfigError(f"{source}: key 'local_design': expected a list of configurations")
    return tuple(dict(c) for c in value)


def _subsets(value: Any, source: Path | str) -> dict[str, tuple[str, ...]]:
    if not isinstance(value, Mapping) or not all(isinstance(v, list) for v in value.values()):
        raise ConfigError(f"{source}: key 'subsets': expected {{subset: [collections]}}")
    return {str(k): tuple(str(c) for c in v) for k, v in value.items()}


def read_campaign_file(path: Path) -> CampaignRecord:
    """Read a ``campaign.json``: the one reader of the run record.

    The ``format`` keeps the value found; :attr:`CampaignRecord.config` gives the settings
    completed (a format-1 file's with :data:`FORMAT_1_SETTINGS` for the keys it lacks, and
    every file's with :data:`ADDED_SETTINGS`).

    Raises
    ------
    ConfigError
        If the file is missing, not a JSON object, has no object under ``config``, has a
        format this ``hpo`` does not read, or a key holds what it cannot (one line naming
        the file and the key).
    """
    path = Path(path)
    return CampaignRecord.from_json(read_json(path), path)


def write_campaign_file(run_dir: Path, record: CampaignRecord) -> None:
    """Write ``record`` as ``run_dir``'s ``campaign.json``, atomically (a kill leaves the old
    file or the new one)."""
    write_json_atomic(Path(run_dir) / CAMPAIGN_FILE, record.to_json())


def update_campaign_file(
    run_dir: Path, change: Callable[[CampaignRecord], CampaignRecord]
) -> CampaignRecord:
    """Write the record ``change`` makes of ``run_dir``'s ``campaign.json``; return it.

    The file is read again first (so what another step wrote is kept) and its settings are
    written as they were (an old run's stay as written). Nothing is written when the record
    is unchanged (a resumed run does not rewrite an unchanged record).

    Raises
    ------
    ConfigError
        If the file is missing or not a record this ``hpo`` reads.
    """
    path = Path(run_dir) / CAMPAIGN_FILE
    before = read_campaign_file(path)
    after = change(before)
    if after.to_json() != before.to_json():
        write_campaign_file(run_dir, after)
    return after


def campaign_identity(path: Path) -> tuple[Any, Any] | None:
    """``(created, data_fingerprint)`` of the ``campaign.json`` at ``path`` as it stands,
    read leniently (``None`` when it is not a JSON object): what tells one run from another
    that took its folder."""
    data = read_json(path)
    if not isinstance(data, Mapping):
        return None
    return data.get("created"), data.get("data_fingerprint")


def is_run_folder(path: Path) -> bool:
    """Whether ``path`` is a run folder hpo wrote: a readable ``campaign.json`` of a format
    this hpo reads, or nothing but the lock a start left before it wrote one.

    This is what ``run --overwrite`` may delete (:func:`hpo.ownership.check_replaceable`).
    """
    path = Path(path)
    try:
        _format_and_settings(read_json(path / CAMPAIGN_FILE), path / CAMPAIGN_FILE)
    except ConfigError:
        return {child.name for child in path.iterdir()} <= {LOCK_FILE}
    return True
