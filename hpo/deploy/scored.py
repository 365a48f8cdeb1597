"""The boosters a run scored, read back for export: which ones, where, and what they read.

The objective saves every trial's boosters in the run's store (:mod:`hpo.runs.record.boosters`);
:func:`copy_scored_boosters` finds the incumbent's, one per family, at the budget it was
scored at, and the feature columns each reads: every column of the family but those only the
learned prior reads (boosters trained on one Dataset of those columns, the switched-off ones
never split on), or, for boosters of
runs made before that, the columns the objective selected from the run's feature spec and
the feature switches.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from hpo.deploy.retrain import ExportOptions
from hpo.errors import ConfigError, UsageError, naming
from hpo.features import FeatureSpec, by_family
from hpo.features.table.feature_table import FeatureTable, feature_names
from hpo.features.table.store import read_rows
from hpo.ranking.prior.learned import LearnedPrior
from hpo.ranking.training import booster_columns as table_booster_columns
from hpo.ranking.training import feature_columns
from hpo.runs.record.boosters import BOOSTERS_DIR, BoosterStore, booster_key, budget_size
from hpo.runs.views.history import RunHistory, Trial

__all__ = [
    "booster_columns",
    "copy_scored_boosters",
    "score_on_run_rows",
    "scored_blend_shares",
    "used_columns",
]

#: How far into a LightGBM text model its header's ``max_feature_idx`` is looked for.
_HEADER_BYTES = 1 << 16
#: Bytes of a booster file copied at a time.
_COPY_BYTES = 1 << 20


def used_columns(family: str, spec: FeatureSpec, hyperparameters: dict[str, Any]) -> list[str]:
    """Names of the columns a booster of ``hyperparameters`` reads (as the objective chose)."""
    names = tuple(feature_names(family, spec))
    no_rows = np.zeros(0, dtype=np.int64)
    empty = FeatureTable(
        family=family,
        split="valid",
        X=np.zeros((0, len(names)), dtype=np.float32),
        target=np.zeros(0),
        group=no_rows,
        config_index=no_rows,
        dup_count=no_rows,
        graphs=(),
        feature_names=names,
    )
    return [names[j] for j in feature_columns(empty, hyperparameters)]


def booster_columns(
    model_file: Path, family: str, spec: FeatureSpec, hyperparameters: dict[str, Any]
) -> list[str]:
    """Names of the columns the booster in ``model_file`` reads.

    Every column of the family but those only the learned prior reads (the rule training
    bins by, :func:`hpo.ranking.training.booster_columns`) when the booster reads as many
    features (today's boosters), else :func:`used_columns` (boosters of older runs, trained
    on the selected columns only).
    """
    every = feature_names(family, spec)
    names = [every[j] for j in table_booster_columns(every)]
    with open(model_file, "rb") as fh:
        header = fh.read(_HEADER_BYTES).decode("utf-8", errors="replace")
    found = re.search(r"^max_feature_idx=(\d+)\s*$", header, re.MULTILINE)
    if found is not None and int(found.group(1)) + 1 == len(names):
        return names
    return used_columns(family, spec, hyperparameters)


def _copy_booster(source: Path, dest: Path, what: str) -> None:
    """Copy ``source`` to ``dest``, telling which side failed: a source that cannot be read
    is a UsageError naming it; a destination the disk refuses (full, read-only) is a
    :class:`~hpo.errors.StorageError` naming ``dest`` (the export names the place the user
    chose, :func:`hpo.deploy.out_folder.folder_beside`)."""
    try:
        src = open(source, "rb")  # noqa: SIM115 (closed by the with below)
    except OSError as exc:
        raise UsageError(f"{source}: cannot copy {what} ({exc.strerror or exc})") from exc
    with src, naming(dest), open(dest, "wb") as out:
        while True:
            try:
                block = src.read(_COPY_BYTES)
            except OSError as exc:
                raise UsageError(f"{source}: cannot copy {what} ({exc.strerror or exc})") from exc
            if not block:
                break
            out.write(block)


def copy_scored_boosters(
    history: RunHistory, inc: Trial, seed: int, spec: FeatureSpec, tmp: Path
) -> dict[str, dict[str, Any]]:
    """Copy the incumbent's boosters from the run's store into ``tmp``; their families' entries.

    Raises
    ------
    UsageError
        If a booster is not in the store (a run made before boosters were kept for export,
        or a store emptied by hand): retraining is the way out.
    """
    store = BoosterStore(history.path / BOOSTERS_DIR)
    size = budget_size(inc.budget if inc.budget is not None else 0.0)
    families: dict[str, dict[str, Any]] = {}
    for family in by_family(history.collections):
        source = store.path(booster_key(inc.config, seed, family), size)
        if inc.budget is None or not source.is_file():
            raise UsageError(
                f"{store.folder}: no saved {family} booster of trial {inc.trial} (budget "
                f"{inc.budget}); the run predates kept boosters or they were deleted, so "
                f"export with retrain (hpo export {history.name} --retrain)"
            )
        _copy_booster(source, tmp / f"{family}.txt", f"the {family} booster of trial {inc.trial}")
        families[family] = {
            "file": f"{family}.txt",
            "columns": booster_columns(tmp / f"{family}.txt", family, spec, inc.config),
            "booster": source.name,
        }
        prior = store.load_prior(booster_key(inc.config, seed, family), size)
        if prior is not None:  # the learned prior the trial blended
            families[family]["prior"] = prior
    return families


def scored_blend_shares(history: RunHistory, inc: Trial, seed: int) -> dict[str, dict[str, float]]:
    """``{family: {collection: share}}``: the shares of the learned prior's blend the
    incumbent's trial chose on the valid graphs it did not train on
    (:meth:`hpo.ranking.prior.learned.LearnedPrior.chosen_shares`): read from the prior saved
    beside its booster, else from its trial record (:attr:`Trial.blend_shares`; a
    cross-validated run's folds combined, :meth:`LearnedPrior.combined_shares`).

    A family with neither is absent (a trial that did not blend; one recorded before trials
    kept their shares, or a cv configuration with a fold that did not, whose store holds no
    readable prior; a record edited by hand into something else, or naming collections the
    run's family does not hold): its retrain chooses the shares on the valid graphs again,
    graphs it trains on with ``train+valid``.
    """
    families = by_family(history.collections)
    out: dict[str, dict[str, float]] = {}
    if inc.budget is not None:  # else no booster of it was saved
        store = BoosterStore(history.path / BOOSTERS_DIR)
        size = budget_size(inc.budget)
        for family in families:
            key = booster_key(inc.config, seed, family)
            saved = store.load_prior(key, size)
            if saved is None:
                continue
            try:  # unreadable as a prior: as absent, like a file that is not JSON (load_prior)
                prior = LearnedPrior.from_dict(saved, str(store.prior_path(key, size)))
            except ConfigError:
                continue
            out[family] = prior.chosen_shares()
    recorded = {  # a hand-edited record naming another family's collections: as none
        f: v for f, v in inc.blend_shares.items() if f in families and set(v) <= set(families[f])
    }
    return {**recorded, **out}


def score_on_run_rows(
    model: Any, run: RunHistory, spec: FeatureSpec, options: ExportOptions
) -> dict[str, float]:
    """Per-collection valid metrics of an exported ``model`` on the rows its trials were scored on.

    A run with a valid cap scored each layout valid graph on a uniform sample of its configs
    (:mod:`hpo.features.sampling`); scoring the copy on every config (as ``hpo evaluate``
    does) would give another, equally unbiased figure that no longer checks the copy against
    its trial. The sample is rebuilt from the run's caps and seed, from the feature cache.
    """
    from hpo.data.runtimes import carries_ranking
    from hpo.features import build_tables
    from hpo.ranking.scoring.metrics import collection_metric

    tables = build_tables(
        options.root,
        run.collections,
        ("valid",),
        spec,  # the rows of the run's feature version, which the model reads
        caps=run.settings.caps,
        extract=options.extract(),
    )
    per_graph: dict[str, list[float]] = {}
    for table in tables.values():
        bounds = table.group_bounds()
        for g, ref in enumerate(table.graphs):
            if not ref.labeled or ref.collection not in run.collections:
                continue
            a, b = int(bounds[g]), int(bounds[g + 1])
            if not carries_ranking(table.target[a:b]):  # out of the means, as its trials did
                continue
            X = read_rows(table.X, np.arange(a, b))  # a graph at a time, mapped or not
            pred = model.family_model(ref.collection).predict(X)  # routed
            metric = collection_metric(ref.collection, pred, table.target[a:b])
            per_graph.setdefault(ref.collection, []).append(metric)
    return {c: float(np.mean(v)) for c, v in per_graph.items()}
