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

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hpo.campaign.config import read_campaign
from hpo.errors import ConfigError, HpoError
from hpo.features.table.feature_table import FeatureTable, by_family
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.rescore import rescore_family
from hpo.ranking.training import FamilyFit, booster_columns
from hpo.runs.incumbent import config_key
from hpo.runs.record.booster_text import check_booster_text
from hpo.runs.record.boosters import BOOSTERS_DIR, BoosterStore, booster_key, budget_size
from hpo.runs.record.campaign_file import update_campaign_file
from hpo.runs.record.folder import CAMPAIGN_FILE, read_json
from hpo.runs.record.trial import baseline_records

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


def _refusal(source: Mapping[str, Any], record: Mapping[str, Any]) -> str | None:
    """Why the source's ``campaign.json`` is not of the new campaign's problem, or ``None``."""
    mine, theirs = record.get("config") or {}, source.get("config") or {}
    differ = [k for k in SAME_PROBLEM if mine.get(k) != theirs.get(k)]
    if differ:
        return f"its {', '.join(differ)} differ"
    if not record.get("data_fingerprint") or (
        record.get("data_fingerprint") != source.get("data_fingerprint")
    ):
        return "its data differ"
    if mine.get("cv"):
        return "cross-validation keeps no boosters"
    theirs_versions = source.get("versions")
    if not isinstance(theirs_versions, Mapping):
        return "its package versions are unreadable"
    if (record.get("versions") or {}).get("lightgbm") != theirs_versions.get("lightgbm"):
        return "another LightGBM trained it"
    return None


def reuse_record(
    warm: Mapping[str, Any], record: Mapping[str, Any], source: Path | None
) -> dict[str, Any]:
    """The ``reuse`` entry of a new campaign's ``warm_start`` record.

    Parameters
    ----------
    warm
        The ``warm_start`` record (:func:`hpo.campaign.seeding.warm_start.warm_configs`): its
        ``baseline`` and the source trial it came from (``baseline_trial``).
    record
        The new campaign's ``campaign.json`` (its config, data fingerprint, versions).
    source
        The run folder that gave the baseline (``None``: no warm-start baseline).

    Returns
    -------
    dict
        ``{"run", "trial", "score", "size", "boosters": {family: path}}`` when the baseline's
        boosters are reused, else ``{"refused": why}`` (one clause, said in the run's log).
    """
    trial = warm.get("baseline_trial")
    if source is None or not isinstance(trial, dict) or warm.get("baseline") is None:
        return {"refused": "no source gave the baseline"}
    try:
        theirs = read_campaign(source)
    except HpoError as exc:
        return {"refused": str(exc)}
    except OSError as exc:  # another user's folder: a permission, not a traceback
        return {"refused": f"{source}: {exc.strerror or exc}"}
    theirs = {**theirs, "config": theirs["config"].to_dict()}  # as the new record holds it
    why = _refusal(theirs, record)
    config = trial.get("config") or {}
    if why is None and config_key(config) != config_key(warm["baseline"]):
        why = "its best changed on the way onto this space"
    max_budget = (record.get("config") or {}).get("max_budget")
    if why is None and (max_budget is None or trial.get("budget") != max_budget):
        why = "its best did not reach the largest budget"
    if why is not None or max_budget is None:
        return {"refused": why or "no largest budget"}
    size = budget_size(float(max_budget))
    seed = trial.get("seed")
    if seed is None:
        seed = (theirs.get("config") or {}).get("seed", 0)
    store = BoosterStore(source / BOOSTERS_DIR)
    boosters = {}
    for family in by_family((record.get("config") or {}).get("collections") or []):
        path = store.path(booster_key(config, int(seed), family), size)
        try:
            found = path.is_file()
        except OSError as exc:  # Python 3.11's is_file re-raises a permission error
            return {"refused": f"{path.parent}: {exc.strerror or exc}"}
        if not found:
            return {"refused": f"its best's {family} booster is gone"}
        boosters[family] = str(path.absolute())
    return {
        "run": warm.get("baseline_run") or source.name,
        "trial": trial.get("trial"),
        "score": trial.get("score"),
        "size": size,
        "boosters": boosters,
        "path": str(source.absolute()),  # which folder, and which run in it: checked as copied
        "created": theirs.get("created"),
        "data_fingerprint": theirs.get("data_fingerprint"),
    }


def settle_reuse(
    saved: dict[str, Any], run_dir: Path, *, resume: bool, records: list[dict[str, Any]]
) -> dict[str, Any]:
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
    (``records``, the run's trial log), nothing is checked.

    Where the reuse fails, ``campaign.json``'s ``warm_start.reuse`` becomes ``{"refused":
    why}``, so the start-up line and the record say that the baseline trains, and why.
    """
    warm = saved.get("warm_start")
    if baseline_records(records) or not isinstance(warm, dict):
        return saved
    reuse = warm.get("reuse")
    if not isinstance(reuse, dict) or not isinstance(reuse.get("boosters"), dict):
        return saved
    size, boosters = reuse.get("size"), reuse["boosters"]
    if type(size) is not int or not all(isinstance(p, str) for p in boosters.values()):
        return saved  # malformed: reuse_entries names it
    store = BoosterStore(run_dir / BOOSTERS_DIR)
    families = [f for f in FAMILIES if f in boosters]
    why = _copies_missing(store, families, size) if resume else _copy(reuse, store, families)
    if why is None:
        return saved
    for family in families:
        store.discard(store.warm_path(family, size))
    refused = {"reuse": {"refused": why}}
    update_campaign_file(
        run_dir, lambda raw: {"warm_start": {**raw.get("warm_start", {}), **refused}}
    )
    return {**saved, "warm_start": {**warm, **refused}}


def _copy(reuse: Mapping[str, Any], store: BoosterStore, families: list[str]) -> str | None:
    """Copy the source's boosters into ``store``; why they could not be, or ``None``."""
    for family in families:
        try:
            store.adopt(Path(reuse["boosters"][family]), store.warm_path(family, reuse["size"]))
        except OSError as exc:
            return f"its best's {family} booster could not be copied ({exc.strerror or exc})"
    if reuse.get("path") is None:
        return None
    try:
        theirs = read_json(Path(reuse["path"]) / CAMPAIGN_FILE)
    except (HpoError, OSError):
        return "its run folder changed as this run started"
    same = all(
        isinstance(theirs, dict) and theirs.get(k) == reuse.get(k)
        for k in ("created", "data_fingerprint")
    )
    return None if same else "its run folder was replaced as this run started"


def _copies_missing(store: BoosterStore, families: list[str], size: int) -> str | None:
    if all(store.warm_path(f, size).is_file() for f in families):
        return None
    return "its copies in this run are gone (the run stopped before it copied them)"


def reuse_entries(saved: Mapping[str, Any], run_dir: Path) -> tuple[tuple[str, str, int, str], ...]:
    """:attr:`hpo.campaign.objective.ObjectiveSettings.reuse` of the run in ``run_dir``: the
    copies :func:`settle_reuse` made, never a path the record names.

    Raises
    ------
    ConfigError
        If the ``reuse`` entry of ``saved`` (the run's ``campaign.json``) is malformed.
    """
    warm = saved.get("warm_start")
    reuse = warm.get("reuse") if isinstance(warm, dict) else None
    if not isinstance(warm, dict) or not isinstance(reuse, dict) or "boosters" not in reuse:
        return ()
    boosters, size = reuse.get("boosters"), reuse.get("size")
    baseline = warm.get("baseline")
    if not isinstance(boosters, dict) or not isinstance(baseline, dict) or type(size) is not int:
        raise ConfigError(f"{run_dir / CAMPAIGN_FILE}: key 'warm_start': malformed 'reuse'")
    store, key = BoosterStore(run_dir / BOOSTERS_DIR), config_key(baseline)
    families = [f for f in FAMILIES if f in boosters]
    return tuple((key, f, size, str(store.warm_path(f, size))) for f in families)


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
