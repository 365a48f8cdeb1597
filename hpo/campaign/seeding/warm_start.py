"""``hpo run --warm-start RUN ...``: seed a campaign with the best configurations of earlier runs.

A campaign normally starts from nothing; a user who runs again (more data, a new feature
version, another collection, simply longer) already knows good configurations. Each source
run gives its :data:`WARM_CONFIGS` best distinct configurations, ranked as the incumbent
rule ranks them (:meth:`hpo.runs.views.history.RunHistory.top`: by the highest budget a
configuration reached, then its score there; crashed trials never count, and with
cross-validation only configurations scored on every fold). They are mapped onto the new
campaign's space (:func:`map_config`). The first source's best becomes the campaign's
**baseline**, its first trial at the largest budget, in place of the space's default
configuration (a per-subset source gives it only from the subset of this campaign's name:
:func:`warm_configs`); the others become extra configurations of SMAC's initial design,
evaluated first (:mod:`hpo.campaign.smac.facades`). With ``random-hb``, whose initial design holds
the default configuration, a warm-started run races the default like its other samples.

Why the source's best as the baseline: the baseline is what the campaign starts from and what its
gain is measured against, and a user who warm-starts starts from that configuration, not from the
default. It also gives the campaign its first incumbent at the largest budget after one trial; as an
initial-design configuration it would start at the smallest budget and reach the largest only after
a bracket: a warm run then reached the cold runs' final median only at 0.76 of the walltime
(docs/benchmarks.md#warm-starts-and-extensions). A full-budget trial of the default, which the user
already had without this campaign, would be the cost of keeping the default as the baseline.

Why only the initial design, never SMAC's history: a configuration SMAC has been *told*
is one it never runs again (its config selector skips what the runhistory holds), so a
source's best could never become this run's incumbent, and the incumbent must be a trial of
this run whose boosters this run holds (the exported model is the model that was scored;
``trials.jsonl`` is this run's record). Seeding the initial design re-evaluates the
configurations on this run's data, features and budgets, which is also the only honest
option when those differ from the source's.

The mapped configurations are saved in ``campaign.json`` (key ``warm_start``) with the
sources; a resumed campaign reads them from there and never reads the sources again (they
may have changed or gone), so SMAC sees the same initial design and skips what it ran.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from ConfigSpace import (
    CategoricalHyperparameter,
    Configuration,
    ConfigurationSpace,
    Constant,
    OrdinalHyperparameter,
)
from ConfigSpace.hyperparameters import NumericalHyperparameter
from ConfigSpace.util import deactivate_inactive_hyperparameters

from hpo.errors import ConfigError, HpoError
from hpo.ranking.hyperparameters import (
    TILE_EXTRA_TREES_KEY,
    TILE_LABEL_LEVELS_KEY,
    TILE_OBJECTIVE_KEY,
    TILE_TRUNCATION_KEY,
    TRAINED_WITHOUT,
    TRUNCATION_KEY,
    lightgbm_aliases,
)
from hpo.ranking.prior.blend import DEFAULT_WEIGHT_KEY, WEIGHT_KEY
from hpo.runs.incumbent import config_key
from hpo.runs.record.campaign_file import (
    CampaignRecord,
    SourceTrial,
    WarmSource,
    WarmStartRecord,
)
from hpo.runs.record.folder import CAMPAIGN_FILE
from hpo.runs.views.history import load_run, resolve_run_dir
from hpo.runs.views.nested import run_type

__all__ = [
    "WARM_CONFIGS",
    "WarmStart",
    "map_config",
    "matching_source",
    "resolve_sources",
    "source_runs",
    "warm_configs",
    "warm_start_record",
]

#: Configurations each source run gives: enough to cover the top of a run whose best few are
#: close (docs/benchmarks.md), few enough to leave most of the initial design to exploration.
WARM_CONFIGS = 5


def _mapped_value(hp: Any, value: Any) -> tuple[Any, str]:
    """``(value in hp's range, "kept" | "clipped" | "dropped")``; dropped -> the default."""
    if isinstance(hp, Constant):
        return hp.value, "kept" if value == hp.value else "dropped"
    if isinstance(hp, (CategoricalHyperparameter, OrdinalHyperparameter)):
        options = hp.choices if isinstance(hp, CategoricalHyperparameter) else hp.sequence
        for option in options:  # JSON gives 1 for True and 5.0 for 5: match by equal type too
            if option == value and isinstance(option, bool) == isinstance(value, bool):
                return option, "kept"
        return hp.default_value, "dropped"
    if isinstance(hp, NumericalHyperparameter):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            return hp.default_value, "dropped"
        low, high = hp.lower, hp.upper
        inside = float(np.clip(value, low, high))
        is_int = isinstance(hp.default_value, (int, np.integer))
        out = int(round(inside)) if is_int else inside
        return out, "kept" if out == value else "clipped"
    return hp.default_value, "dropped"


#: Keys split off an older key, and that key: a source without them used the older one's
#: value there (the default collections' blend weight; the tile family's truncation, label
#: levels and extra trees).
_INHERITED = {
    DEFAULT_WEIGHT_KEY: WEIGHT_KEY,
    TILE_TRUNCATION_KEY: TRUNCATION_KEY,
    TILE_LABEL_LEVELS_KEY: "label_levels",
    TILE_EXTRA_TREES_KEY: "extra_trees",
}


def _as_trained(config: Mapping[str, Any]) -> dict[str, Any]:
    """``config`` with what its run trained with where it lacks a key (training's
    :data:`~hpo.ranking.hyperparameters.TRAINED_WITHOUT`, then :data:`_INHERITED`), so a source
    from before a key scores as it did, not as the new space's default would."""
    # the key the source spells each LightGBM parameter with (it may be an alias)
    aliases = lightgbm_aliases()
    spelled = {aliases.get(key, key): key for key in config}
    out = {**{k: v for k, v in TRAINED_WITHOUT.items() if k not in spelled}, **config}
    for new_key, old_key in _INHERITED.items():
        # a source whose tile did not use a truncation lacks it for that reason
        unused = new_key == TILE_TRUNCATION_KEY and out[TILE_OBJECTIVE_KEY] != "lambdarank"
        old_key = spelled.get(old_key, old_key)
        if old_key in out and new_key not in out and not unused:
            out[new_key] = out[old_key]
    return out


def map_config(
    config: Mapping[str, Any], space: ConfigurationSpace
) -> tuple[dict[str, Any] | None, dict[str, int]]:
    """Map an earlier run's configuration onto ``space``.

    Hyperparameters both spaces have keep their value; a numeric value outside the new range
    is **clipped** to it (the nearest value the new space allows, still informed by the
    source), a categorical value the new space lacks is **dropped** (the new default takes its
    place: there is no nearest category). Hyperparameters the source lacks take the new
    space's defaults, except where the source's run trained with a value (:func:`_as_trained`):
    ``estimate_weight_default_collections`` takes the source's ``estimate_weight``,
    ``tile_truncation_level`` its ``lambdarank_truncation_level`` and ``tile_label_levels``
    its ``label_levels`` and ``tile_extra_trees`` its ``extra_trees`` (under any LightGBM
    alias), which served every collection or family there, ``tile_objective`` is lambdarank,
    ``label_levels`` 16 and ``extra_trees`` off; ones the new space lacks are ignored.
    Conditions are re-applied (a child whose parent now says inactive is removed); a
    configuration that violates a forbidden clause of the new space is dropped as a whole
    (``None``).

    Returns
    -------
    (values, counts)
        The active values of the mapped configuration (``None`` if dropped) and how many
        shared values were ``kept``, ``clipped`` and ``dropped``.
    """
    counts = {"kept": 0, "clipped": 0, "dropped": 0}
    values: dict[str, Any] = {}
    config = _as_trained(config)
    for hp in space.values():
        if hp.name in config:
            values[hp.name], how = _mapped_value(hp, config[hp.name])
            counts[how] += 1
        else:
            values[hp.name] = hp.default_value
    try:
        mapped = deactivate_inactive_hyperparameters(values, space)
        mapped.check_valid_configuration()
    except (ValueError, TypeError):  # a forbidden clause, or a value ConfigSpace refuses
        return None, counts
    return dict(mapped), counts


def resolve_sources(sources: Sequence[str | Path], runs_dir: Path) -> tuple[Path, ...]:
    """The run folders of ``--warm-start`` sources (names under ``runs_dir``, or paths).

    Resolved once, before a per-subset run moves its subsets' ``runs_dir`` into the run.

    Raises
    ------
    UsageError
        If a source is neither a run name under ``runs_dir`` nor a run folder.
    """
    return tuple(resolve_run_dir(s, runs_dir).absolute() for s in sources)


def source_runs(source: str | Path, runs_dir: Path, subset: str | None) -> list[Path]:
    """The single-campaign folders one ``--warm-start`` source stands for.

    A per-subset source gives its subset of the same name when the new campaign is that
    subset (``--per`` runs warm-start each subset from the matching one), else every subset
    it has started (their configurations were each good for part of the data).

    Raises
    ------
    UsageError
        If ``source`` is neither a run name under ``runs_dir`` nor a run folder.
    """
    path = resolve_run_dir(source, runs_dir)
    return run_type(path).warm_folders(path, subset)


def matching_source(source: Path, runs_dir: Path, subset: str) -> Path:
    """The source of the subset campaign ``subset``: a per-subset source's subset of that
    name, else the source itself (a per-subset source without one then gives the best of all
    its subsets, and none of them as the baseline: :func:`warm_configs`)."""
    path = resolve_run_dir(source, runs_dir)
    return run_type(path).warm_source(path, subset)


def _campaign_name(folder: Path) -> str:
    """``RUN``, or ``RUN/SUBSET`` for a subset of a per-subset run."""
    parent = folder.parent
    if not (parent / CAMPAIGN_FILE).is_file():
        return folder.name
    return run_type(parent).name_inside(folder)


def warm_configs(
    sources: Sequence[str | Path],
    space: ConfigurationSpace,
    runs_dir: Path,
    *,
    subset: str | None = None,
    per_source: int = WARM_CONFIGS,
) -> WarmStartRecord:
    """The ``warm_start`` record of ``campaign.json``: the sources and the mapped configs.

    Configurations are distinct across sources (a repeat counts for the first source only).
    The best of the first source that is one campaign for this one (a single run, or the
    per-subset source's subset of this campaign's name) is the ``baseline``, the campaign's
    first trial at the largest budget; it may be the new space's default, when that source
    never beat it. Without such a source (only per-subset sources without a matching subset,
    whose subsets were tuned each for part of the data) the default stays the baseline.
    When the baseline is not the default, the default is the first of the other
    configurations: a source's best from other data can be worse than the default here.

    Returns
    -------
    WarmStartRecord
        The sources, the ``baseline`` (or None), the campaign that gave it (``RUN`` or
        ``RUN/SUBSET``), its trial there (number, config, seed, budget, score, folder path),
        whether that best is the new space's default, and the other ``configs``, in order;
        a source's ``configs`` counts the configurations it gave (the baseline among them),
        ``clipped`` and ``dropped`` the values (or, for ``dropped``, also whole
        configurations) changed by :func:`map_config`.

    Raises
    ------
    UsageError
        If a source is not a run folder.
    ConfigError
        If a source's files are malformed.
    """
    seen: set[str] = set()
    configs: list[dict[str, Any]] = []
    out_sources: list[WarmSource] = []
    baseline: dict[str, Any] | None = None
    baseline_run: str | None = None
    source_trial: SourceTrial | None = None
    for source in sources:
        given = clipped = dropped = 0
        folders = source_runs(source, runs_dir, subset)
        # only a source that is one campaign for this one (a single run, or the matching
        # subset) gives the baseline: another subset's best was tuned for other data
        whole = resolve_run_dir(source, runs_dir)
        one = run_type(whole).gives_baseline(whole, subset)
        for folder in folders:
            try:
                run = load_run(folder)
            except HpoError as exc:
                raise type(exc)(f"--warm-start {source}: {exc}") from None
            for trial in run.top(per_source):
                mapped, counts = map_config(trial.config, space)
                clipped += counts["clipped"]
                dropped += counts["dropped"] + (mapped is None)
                if mapped is None or config_key(mapped) in seen:
                    continue
                seen.add(config_key(mapped))
                given += 1
                if baseline is None and one:
                    baseline, baseline_run = mapped, _campaign_name(folder)
                    source_trial = SourceTrial(  # for warm_reuse
                        trial=trial.trial,
                        config=trial.config,
                        seed=trial.seed,
                        budget=trial.budget,
                        score=trial.score,
                        path=str(folder.absolute()),
                    )
                else:
                    configs.append(mapped)
        path = whole.absolute()
        out_sources.append(
            WarmSource(
                run=path.name, path=str(path), configs=given, clipped=clipped, dropped=dropped
            )
        )
    default = dict(space.get_default_configuration())
    configs = [c for c in configs if config_key(c) != config_key(default)]
    is_default = baseline is not None and config_key(baseline) == config_key(default)
    if baseline is not None and not is_default:
        # the default is no longer the baseline; where the sources' data differ from this
        # run's it may still be the best start, so it races with the seeds
        configs.insert(0, default)
    return WarmStartRecord(
        sources=tuple(out_sources),
        baseline=baseline,
        baseline_run=baseline_run,
        # said beside the baseline's name (CampaignRecord.baseline_origin): the source's best,
        # mapped onto this space, is its default (the source never beat it, or differed only
        # where this space has no hyperparameter)
        baseline_is_default=is_default,
        baseline_trial=source_trial,
        configs=tuple(configs),
    )


@dataclass(frozen=True)
class WarmStart:
    """A campaign's warm start as SMAC configurations (:func:`warm_start_record`).

    Attributes
    ----------
    baseline
        The first trial at the largest budget: the first source's best (which may equal the
        space's default), or ``None`` when there is no warm-start baseline and the trial is
        the default (no warm start, no source that is one campaign for this one, or a run
        warm-started before the source's best became the baseline).
    configs
        The other configurations, SMAC's initial design runs them first.
    local
        The baseline's neighbours (``--n-local``, :mod:`hpo.campaign.seeding.local_design`), which
        the initial design runs after ``configs``: with them, this is everything a campaign
        starts from besides SMAC's own draws.
    """

    baseline: Configuration | None = None
    configs: tuple[Configuration, ...] = ()
    local: tuple[Configuration, ...] = ()

    def first_trial(self, space: ConfigurationSpace) -> Configuration:
        """The baseline trial's configuration: :attr:`baseline`, else ``space``'s default."""
        return space.get_default_configuration() if self.baseline is None else self.baseline


def warm_start_record(
    saved: CampaignRecord, space: ConfigurationSpace, log: Callable[[str], None]
) -> WarmStart:
    """The warm start of a ``campaign.json`` as SMAC configurations.

    ``log`` is told where they came from (nothing when the run is not warm-started). A
    record without ``baseline`` (a run warm-started before the source's best became the
    baseline) keeps the default as its baseline, so it resumes as it started.

    Raises
    ------
    ConfigError
        If the record is malformed or a configuration does not fit the run's space.
    """
    record = saved.warm_start
    if record is None:
        return WarmStart()
    if record.configs is None:
        raise ConfigError(f"{saved.source}: key 'warm_start': expected configs as a list")
    try:
        configs = tuple(Configuration(space, values=c) for c in record.configs)
        first = record.baseline
        baseline = None if first is None else Configuration(space, values=first)
    except (ValueError, TypeError, KeyError) as exc:
        raise ConfigError(f"{saved.source}: key 'warm_start': {exc}") from None
    names = ", ".join(f"{s.run} ({s.configs})" for s in record.sources)
    base = "the default configuration"
    warm = saved.warm_baseline
    if warm is not None:
        base = f"the best of {warm[0]}" + (" = the default configuration" if warm[1] else "")
        reuse = record.reuse
        if reuse is not None and (reuse.boosters is not None or reuse.refused):  # warm_reuse
            refused = None if reuse.boosters is not None else reuse.refused
            base += f" (trained again: {refused})" if refused else " (its booster, scored again)"
    log(
        f"warm start from {names or 'no run'}: baseline {base}, then "
        f"{len(configs)} configuration(s) first"
    )
    return WarmStart(baseline=baseline, configs=configs)
