"""A warm start from a run of the same problem: its best booster, scored again, is the baseline.

:mod:`hpo.campaign.seeding.warm_start` makes the first source's best configuration the new
campaign's baseline, its first trial at the largest budget. Trained again, that booster draws
LightGBM's random streams from this run's seed and scores differently: in
docs/benchmarks.md#warm-starts-and-extensions the warm runs' baselines came out below their
sources' scores in 2 seeds of 5, and a warm run took 0.70 of its walltime to reach the cold
runs' final median. Where the source ran the *same problem* as the new campaign, the source's
booster is a model of this problem already trained at this budget, so the baseline trial copies
it into this run's booster store and scores it on this run's valid split instead of training
(:mod:`hpo.ranking.rescore`), in a second instead of a trial's minutes; the model export ships
is the one this run scored.

The score is this run's: a graph with more configs than the caps (``valid_configs``,
``train_configs``) is sampled with the campaign's seed, so a run of another seed scores the
booster on other valid rows than its source did (and the booster was trained on the source's
sample of the same train graphs). With the source's seed, or graphs under the caps, it is the
source's score to the bit.

The same problem (:func:`reuse_record`): the same data (``data_fingerprint``), collections,
feature spec, sampling caps, fidelity and largest budget, no cross-validation, the same
LightGBM, and the best's configuration unchanged by the mapping onto the new space. Otherwise,
or when the source's boosters are gone, the baseline trains as before, and ``campaign.json``
says why (``warm_start.reuse.refused``).

Only the baseline is reused. The source's other trials are not told to SMAC as history: a
configuration SMAC has been told is one it never runs (see :mod:`hpo.campaign.seeding.warm_start`),
and the surrogate of a campaign that resumes the same problem is what ``hpo run --resume NAME
--walltime`` keeps (:mod:`hpo.campaign.lifecycle.extend`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from hpo.campaign.config import SavedCampaign, read_campaign
from hpo.errors import ConfigError, HpoError
from hpo.features.table.feature_table import FeatureTable, by_family
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.rescore import rescore_family
from hpo.ranking.training import FamilyFit, booster_columns
from hpo.runs.incumbent import config_key
from hpo.runs.record.booster_text import check_booster_text
from hpo.runs.record.boosters import BOOSTERS_DIR, BoosterStore, booster_key, budget_size
from hpo.runs.record.campaign_file import (
    CampaignRecord,
    Reuse,
    WarmStartRecord,
    campaign_identity,
    update_campaign_file,
)
from hpo.runs.record.folder import CAMPAIGN_FILE
from hpo.runs.record.trial import Trial, baseline_records

__all__ = [
    "SAME_PROBLEM",
    "rescored",
    "reuse_entries",
    "reuse_record",
    "settle_reuse",
]

#: The model families a run keeps boosters of (:func:`hpo.features.table.feature_table.by_family`).
FAMILIES = ("layout", "tile")

#: The settings of ``campaign.json``'s ``config`` that decide what a trial at a budget trains
#: and scores: a source that differs in any of them ran another problem.
SAME_PROBLEM = (
    "collections",
    "features",
    "fidelity",
    "max_budget",
    "fixed_rounds",
    "fast_bias",
    "train_configs",
    "valid_configs",
    "keep_fastest",
    "cv",
)

Problem = tuple[FeatureTable, FeatureTable, tuple[str, ...] | list[str], dict[str, Any]]


def _refusal(theirs: SavedCampaign, mine: SavedCampaign) -> str | None:
    """Why the source's campaign (``theirs``) is not of the new campaign's problem, or
    ``None``."""
    differ = [k for k in SAME_PROBLEM if getattr(mine.config, k) != getattr(theirs.config, k)]
    if differ:
        return f"its {', '.join(differ)} differ"
    fingerprint = mine.record.data_fingerprint
    if not fingerprint or fingerprint != theirs.record.data_fingerprint:
        return "its data differ"
    if mine.config.cv:
        return "cross-validation keeps no boosters"
    if theirs.record.versions is None:
        return "its package versions are unreadable"
    if mine.record.version("lightgbm") != theirs.record.version("lightgbm"):
        return "another LightGBM trained it"
    return None


def reuse_record(warm: WarmStartRecord, mine: SavedCampaign, source: Path | None) -> Reuse:
    """The ``reuse`` entry of a new campaign's ``warm_start`` record.

    Parameters
    ----------
    warm
        The ``warm_start`` record (:func:`hpo.campaign.seeding.warm_start.warm_configs`): its
        ``baseline`` and the source trial it came from (``baseline_trial``).
    mine
        The new campaign's ``campaign.json`` (its settings, data fingerprint, versions).
    source
        The run folder that gave the baseline (``None``: no warm-start baseline).

    Returns
    -------
    Reuse
        The source run, trial, score, size and ``boosters`` (``{family: path}``) when the
        baseline's boosters are reused, else why not (``refused``: one clause, said in the
        run's log).
    """
    trial = warm.baseline_trial
    if source is None or trial is None or warm.baseline is None:
        return Reuse(refused="no source gave the baseline")
    try:
        theirs = read_campaign(source)
    except HpoError as exc:
        return Reuse(refused=str(exc))
    except OSError as exc:  # another user's folder: a permission, not a traceback
        return Reuse(refused=f"{source}: {exc.strerror or exc}")
    why = _refusal(theirs, mine)
    if why is None and config_key(trial.config) != config_key(warm.baseline):
        why = "its best changed on the way onto this space"
    max_budget = mine.config.max_budget
    if why is None and (max_budget is None or trial.budget != max_budget):
        why = "its best did not reach the largest budget"
    if why is not None or max_budget is None:
        return Reuse(refused=why or "no largest budget")
    size = budget_size(float(max_budget))
    seed = theirs.config.seed if trial.seed is None else trial.seed
    store = BoosterStore(source / BOOSTERS_DIR)
    boosters = {}
    for family in by_family(mine.config.collections):
        path = store.path(booster_key(trial.config, int(seed), family), size)
        try:
            found = path.is_file()
        except OSError as exc:  # Python 3.11's is_file re-raises a permission error
            return Reuse(refused=f"{path.parent}: {exc.strerror or exc}")
        if not found:
            return Reuse(refused=f"its best's {family} booster is gone")
        boosters[family] = str(path.absolute())
    return Reuse(
        run=warm.baseline_run or source.name,
        trial=trial.trial,
        score=trial.score,
        size=size,
        boosters=boosters,
        path=str(source.absolute()),  # which folder, and which run in it: checked as copied
        created=theirs.record.created,
        data_fingerprint=theirs.record.data_fingerprint,
    )


def settle_reuse(
    saved: CampaignRecord, run_dir: Path, *, resume: bool, trials: list[Trial]
) -> CampaignRecord:
    """Make the run hold the source boosters its ``reuse`` record names, or refuse the reuse;
    return ``saved`` as it now stands.

    Called as the campaign starts, under the run's lock and before its features are built
    (minutes at real size): from then on the run holds what its baseline will score, and a
    resume never reads the source again (it may have been overwritten by another problem's
    run, or deleted). Both families' boosters are copied (:meth:`BoosterStore.warm_path`) or
    neither: a baseline half scored and half trained would be neither the source's model nor
    a trained one. After copying, the source's ``campaign.json`` must still be the run the
    record was made from (its ``created`` and data fingerprint): a folder replaced in between
    gave boosters of another problem. A resume whose baseline has not run checks that the
    copies are there (a run stopped before it copied has none); once the baseline has run
    (``trials``, the run's trial log), nothing is checked.

    Where the reuse fails, ``campaign.json``'s ``warm_start.reuse`` becomes ``{"refused":
    why}``, so the start-up line and the record say that the baseline trains, and why.
    """
    warm = saved.warm_start
    if baseline_records(trials) or warm is None:
        return saved
    reuse = warm.reuse
    if reuse is None or reuse.boosters is None or reuse.size is None:
        return saved
    store = BoosterStore(run_dir / BOOSTERS_DIR)
    families = [f for f in FAMILIES if f in reuse.boosters]
    if resume:
        why = _copies_missing(store, families, reuse.size)
    else:
        why = _copy(reuse, store, families)
    if why is None:
        return saved
    for family in families:
        store.discard(store.warm_path(family, reuse.size))
    refused = Reuse(refused=why)
    update_campaign_file(run_dir, lambda record: _with_reuse(record, refused))
    return _with_reuse(saved, refused)


def _with_reuse(record: CampaignRecord, reuse: Reuse) -> CampaignRecord:
    warm = record.warm_start or WarmStartRecord()
    return dataclasses.replace(record, warm_start=dataclasses.replace(warm, reuse=reuse))


def _copy(reuse: Reuse, store: BoosterStore, families: list[str]) -> str | None:
    """Copy the source's boosters into ``store``; why they could not be, or ``None``."""
    assert reuse.boosters is not None
    assert reuse.size is not None
    for family in families:
        try:
            store.adopt(Path(reuse.boosters[family]), store.warm_path(family, reuse.size))
        except OSError as exc:
            return f"its best's {family} booster could not be copied ({exc.strerror or exc})"
    if reuse.path is None:
        return None
    try:
        theirs = campaign_identity(Path(reuse.path) / CAMPAIGN_FILE)
    except (HpoError, OSError):
        return "its run folder changed as this run started"
    same = theirs == (reuse.created, reuse.data_fingerprint)
    return None if same else "its run folder was replaced as this run started"


def _copies_missing(store: BoosterStore, families: list[str], size: int) -> str | None:
    if all(store.warm_path(f, size).is_file() for f in families):
        return None
    return "its copies in this run are gone (the run stopped before it copied them)"


def reuse_entries(saved: CampaignRecord, run_dir: Path) -> tuple[tuple[str, str, int, str], ...]:
    """:attr:`hpo.campaign.objective.ObjectiveSettings.reuse` of the run in ``run_dir``: the
    copies :func:`settle_reuse` made, never a path the record names (a malformed ``reuse``
    is refused as the record is read: :class:`~hpo.runs.record.campaign_file.Reuse`)."""
    warm = saved.warm_start
    reuse = None if warm is None else warm.reuse
    if warm is None or warm.baseline is None or reuse is None:
        return ()
    if reuse.boosters is None or reuse.size is None:
        return ()
    store, key = BoosterStore(run_dir / BOOSTERS_DIR), config_key(warm.baseline)
    families = [f for f in FAMILIES if f in reuse.boosters]
    return tuple((key, f, reuse.size, str(store.warm_path(f, reuse.size))) for f in families)


def rescored(
    reuse: tuple[tuple[str, str, int, str], ...],
    store: BoosterStore | None,
    at: tuple[str, int],
    problem: Problem,
    options: FitOptions,
) -> FamilyFit | None:
    """A trial's family fit from a booster of ``reuse``, or ``None`` when it trains.

    ``at`` is the trial's booster key and size, ``problem`` its ``(train, valid, collections,
    hyperparameters)``. The matching booster is copied into ``store`` as ``at``, checked as
    export checks a model folder's (:func:`hpo.runs.record.booster_text.check_booster_text`:
    LightGBM trusts a text model's indices, and the file came from another run) and scored again. A
    copy that cannot be read, checked or loaded (LightGBM's or json's refusal, a prior that
    does not parse) is removed and the trial trains as any other; one whose scoring fails is
    removed and the trial fails as any trial does.
    """
    train, valid, wanted, hp = problem
    if store is None or not reuse:
        return None
    want = (config_key(hp), train.family, at[1])
    source = next((path for *entry, path in reuse if tuple(entry) == want), None)
    if source is None:
        return None
    import lightgbm as lgb

    key, size = at
    dest = store.path(key, size)
    try:
        store.adopt(Path(source), dest)
        width = booster_columns(train.feature_names).size
        text = check_booster_text(dest.read_bytes(), dest, width)
        booster = lgb.Booster(model_str=text)  # its tail (pandas_categorical) is json: ValueError
        prior = store.load_prior(key, size)
        if prior is None and store.prior_path(key, size).exists():
            raise ConfigError(f"{store.prior_path(key, size)}: unreadable prior")
    except (OSError, ConfigError, ValueError, lgb.basic.LightGBMError):
        store.discard(dest)  # the copy is not a model of this problem: the trial trains
        return None
    try:
        return rescore_family(train, valid, wanted, hp, booster, prior, options=options)
    except BaseException:
        store.discard(dest)  # no booster stands for a trial that failed
        raise
