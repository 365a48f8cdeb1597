"""The one training path of a family: :func:`train_family` trains a ranker and scores it on valid.

The objective (every trial), export and the benchmarks call :func:`train_family`, so a trial
and an exported model are trained and scored the same way. Hyperparameters arrive as one flat
mapping (a SMAC configuration): ``label_levels``, ``max_group_size``, ``relative_features``,
``estimate_blend``, ``estimate_weight`` and ``estimate_weight_default_collections``
(:mod:`hpo.ranking.prior.blend`, a weight per collection) steer the ranker, the
feature selection and the scoring, ``use_group_<name>`` switches feature groups, every other
key must be LightGBM's and is passed to it (the owners are declared once, in
:mod:`hpo.ranking.hyperparameters`; an unknown key is refused). With the blend on, a layout
family also fits its learned cost prior (:mod:`hpo.ranking.prior.fit`) on the rows it trains on.
The valid rows are scored in chunks of whole graphs by :mod:`hpo.ranking.scoring.valid` (whose
public names this module re-exports).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpo.data.load import is_layout
from hpo.features.groups import live_columns
from hpo.features.layout.op_class import is_prior_only
from hpo.features.table.feature_table import FeatureTable
from hpo.ranking.hyperparameters import (
    BLEND_SETTINGS,
    LAYOUT_OBJECTIVE_KEY,
    RANKER_SETTINGS,
    TILE_OBJECTIVE_KEY,
    TRAINED_WITHOUT,
    family_hyperparameters,
    route_hyperparameters,
)
from hpo.ranking.model.datasets import binary_path, rows_digest
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.model.ranker import LambdaRanker
from hpo.ranking.prior.blend import blend_selects, collection_weights
from hpo.ranking.prior.fit import LearnedPrior, family_equations, fit_family_prior
from hpo.ranking.sampling import sample_configs
from hpo.ranking.scoring.valid import (
    GraphScore,
    blended_predict,
    collection_means,
    score_table,
    score_valid,
    select_rows,
    valid_view_of,
)

__all__ = [
    "DEFAULT_FIXED_ROUNDS",
    "FamilyFit",
    "FitOptions",
    "GraphScore",
    "RANKER_KEYS",
    "blended_predict",
    "collection_means",
    "feature_columns",
    "feature_contri",
    "fit_family_prior",
    "make_ranker",
    "sample_configs",
    "save_family_dataset",
    "score_table",
    "select_rows",
    "train_family",
]

#: Boosting rounds of every trial when the fidelity is ``configs`` (configs per graph).
DEFAULT_FIXED_ROUNDS = 200
#: Hyperparameters consumed by the ranker, the feature selection and the blend rather than
#: passed to LightGBM (the feature group switches aside): a view of the owners declared in
#: :mod:`hpo.ranking.hyperparameters`.
RANKER_KEYS = (*RANKER_SETTINGS, *BLEND_SETTINGS)


def feature_columns(table: FeatureTable, hyperparameters: Mapping[str, Any]) -> np.ndarray:
    """Indices of the feature columns to use.

    ``relative_features`` switches the relative columns and every ``use_group_<name>`` the
    feature group ``<name>`` (:mod:`hpo.features.groups`); absent switches are on.
    """
    return live_columns(table.feature_names, hyperparameters)


def make_ranker(
    hyperparameters: Mapping[str, Any],
    collections: Sequence[str],
    *,
    num_boost_round: int,
    seed: int,
    n_threads: int = 1,
) -> LambdaRanker:
    """Build an unfitted :class:`LambdaRanker` of the family of ``collections`` from a flat
    hyperparameter mapping.

    The configuration is the family's first (:func:`family_hyperparameters`: tile's own keys
    in place for tile, dropped for layout), so no caller can hand the layout family tile's
    objective. The LightGBM parameters are the keys :func:`route_hyperparameters` gives
    LightGBM; the objective is the family's own (:data:`TILE_OBJECTIVE_KEY`,
    :data:`LAYOUT_OBJECTIVE_KEY`), lambdarank where the configuration has none.

    Raises
    ------
    ConfigError
        If a key is owned by nobody, or is one hpo sets itself (``num_boost_round``: the
        rounds are the argument).
    """
    hyperparameters = family_hyperparameters(hyperparameters, collections)
    routed = route_hyperparameters(hyperparameters)
    layout = any(is_layout(c) for c in collections)
    objective_key = LAYOUT_OBJECTIVE_KEY if layout else TILE_OBJECTIVE_KEY
    params = {k: v.item() if isinstance(v, np.generic) else v for k, v in routed.lightgbm.items()}
    return LambdaRanker(
        params,
        num_boost_round=num_boost_round,
        label_levels=int(hyperparameters.get("label_levels", TRAINED_WITHOUT["label_levels"])),
        max_group_size=int(hyperparameters.get("max_group_size", 1024)),
        seed=seed,
        n_threads=n_threads,
        objective=str(hyperparameters.get(objective_key, TRAINED_WITHOUT[objective_key])),
    )


@dataclass(frozen=True, eq=False)
class FamilyFit:
    """What :func:`train_family` returns.

    Attributes
    ----------
    ranker
        The fitted ranker (``ranker.booster_`` is the LightGBM booster).
    columns, column_names
        The columns the booster reads (indices, names): every column of the table but those
        only the learned prior reads (:func:`booster_columns`).
    live, live_names
        The table columns switched on: the only ones split on, and what the learned prior
        reads.
    rows
        Training rows used.
    metrics
        Mean metric per collection on valid.
    scores
        The metric of every scored valid graph.
    seconds
        Wall time of ``dataset`` (rows, labels, binning; ~0 when reused), ``boost``,
        ``predict`` (valid) and ``score``.
    dataset_reused
        Whether the binned training Dataset came from the cache.
    prior
        The learned cost prior blended into the scores (``None``: blend off, or tile).
    """

    ranker: LambdaRanker
    columns: np.ndarray
    column_names: tuple[str, ...]
    live: np.ndarray
    live_names: tuple[str, ...]
    rows: int
    metrics: dict[str, float]
    scores: tuple[GraphScore, ...]
    seconds: dict[str, float]
    dataset_reused: bool
    prior: LearnedPrior | None = None


def booster_columns(feature_names: Sequence[str]) -> np.ndarray:
    """The table columns a booster's Dataset holds: all but those only the learned prior
    reads (:func:`hpo.features.is_prior_only`), in table order."""
    keep = [j for j, name in enumerate(feature_names) if not is_prior_only(name)]
    return np.asarray(keep, dtype=np.int64)


def feature_contri(columns: np.ndarray, live: np.ndarray) -> list[float] | None:
    """LightGBM's ``feature_contri`` of a Dataset of table ``columns``: gain multiplier 1 for
    the ``live`` ones (table indices), 0 for the others.

    Why: a feature switch (``use_group_<name>``, ``relative_features``) is a training
    parameter, so one Dataset of all columns serves every switch. A column whose gain is
    multiplied by 0 never makes a split (LightGBM splits a leaf only on a positive gain), so
    the trees equal those trained on the live columns alone, except with
    ``feature_fraction`` / ``feature_fraction_bynode`` below 1: the dead columns are still
    drawn, so fewer live columns are tried per tree (or node) than the fraction says and the
    draw differs from one over the live columns. ``None`` when every column is live (the
    parameter is then left out, as before it existed).
    """
    contri = np.isin(np.asarray(columns, dtype=np.int64), np.asarray(live, dtype=np.int64))
    return None if contri.all() else contri.astype(np.float64).tolist()


def _bin_parts(
    ranker: LambdaRanker,
    parts: Sequence[tuple[FeatureTable, np.ndarray]],
    seed: int,
    dataset_dir: Path | None,
    columns: np.ndarray,
) -> Any:
    """The ranker's binned Dataset of table ``columns`` of the ``(table, rows)`` parts, saved
    in ``dataset_dir``."""
    arrays = [(t.X, r) for t, r in parts]
    offsets = np.cumsum([0] + [len(t.graphs) for t, _ in parts])
    order = ranker.row_order(
        np.concatenate([t.target[r] for t, r in parts]),
        np.concatenate([t.group[r] + o for (t, r), o in zip(parts, offsets, strict=False)]),
    )
    disk = _binary_file(ranker, arrays, seed, dataset_dir, columns)
    names = [parts[0][0].feature_names[j] for j in columns]
    return ranker.bin_rows(arrays, order, disk, columns, names)


def _binary_file(
    ranker: LambdaRanker,
    arrays: Sequence[tuple[np.ndarray, np.ndarray]],
    seed: int,
    dataset_dir: Path | None,
    columns: np.ndarray,
) -> Path | None:
    """The binary Dataset file of table ``columns`` of rows ``arrays`` (``(X, rows)``)."""
    return binary_path(dataset_dir, arrays, seed, (ranker.dataset_key(), columns.tolist()))


def save_family_dataset(
    train: FeatureTable,
    collections: Sequence[str],
    hyperparameters: Mapping[str, Any],
    *,
    seed: int,
    dataset_dir: Path,
    n_threads: int = 1,
) -> bool | None:
    """Save the binary Dataset that :func:`train_family` loads for these hyperparameters.

    Why: building a Dataset holds LightGBM's bin sample (about 0.7 GB at 200,000 rows of 301
    columns). A campaign builds its Datasets here, in a short-lived process, before its
    workers start (:mod:`hpo.campaign.lifecycle.prebuild`), so no worker peaks with a sample; the
    workers then only load the files (:func:`hpo.ranking.model.datasets.binary_dataset`), with the
    same key as a trial of ``seed`` on every labeled row of ``collections`` (the ``rounds``
    fidelity, no folds).

    Returns
    -------
    bool or None
        True if the file was built, False if it was there already, None if the table is in
        memory (nothing names it outside this process, so nothing is saved).
    """
    ranker = make_ranker(
        hyperparameters, collections, num_boost_round=1, seed=seed, n_threads=n_threads
    )
    rows = select_rows(train, collections)
    columns = booster_columns(train.feature_names)
    disk = _binary_file(ranker, [(train.X, rows)], seed, dataset_dir, columns)
    if disk is None:
        return None
    if disk.is_file():
        return False
    _bin_parts(ranker, [(train, rows)], seed, dataset_dir, columns)
    return True


def train_family(
    train: FeatureTable,
    valid: FeatureTable,
    collections: Sequence[str],
    hyperparameters: Mapping[str, Any],
    *,
    rounds: int,
    seed: int,
    options: FitOptions | None = None,
) -> FamilyFit:
    """Train the ranker of one family on ``train`` and score it on ``valid``.

    One Dataset of every column, read from the tables in chunks, serves every feature switch
    (:func:`feature_contri`); it is cached in ``options.cache`` and ``options.dataset_dir``.

    Parameters
    ----------
    train, valid
        The family's feature tables.
    collections
        Collections trained on and scored (all of the family).
    hyperparameters
        A flat configuration (see :func:`make_ranker`).
    rounds
        Boosting rounds to add (to ``init_model``'s when continuing).
    seed
        Seeds LightGBM and the sub-query split.
    options
        Threads, and what the objective and export change: rows, continuation, extra
        tables, live columns, caches, scored graphs (default: :class:`FitOptions`'s).
    """
    t0 = time.perf_counter()
    opt = options if options is not None else FitOptions()
    cache = opt.cache
    chosen = feature_columns(train, hyperparameters) if opt.columns is None else opt.columns
    live = np.asarray(chosen).astype(np.int64)
    live_names = tuple(train.feature_names[j] for j in live)
    cols = booster_columns(train.feature_names)
    names = tuple(train.feature_names[j] for j in cols)
    weights = collection_weights(hyperparameters, collections)  # checked before any work
    selected = select_rows(train, collections) if opt.rows is None else np.asarray(opt.rows)
    parts = [(train, selected)] + [(t, select_rows(t, collections)) for t in opt.extra]
    ranker = make_ranker(
        hyperparameters,
        collections,
        num_boost_round=rounds,
        seed=seed,
        n_threads=opt.n_threads,
    )
    contri = feature_contri(cols, live)
    extra: dict[str, Any] = {} if contri is None else {"feature_contri": contri}
    if opt.histogram_pool_mb:
        extra["histogram_pool_size"] = float(opt.histogram_pool_mb)
    if extra:
        ranker.set_params(params={**(ranker.params or {}), **extra})

    def binned() -> Any:
        return _bin_parts(ranker, parts, seed, opt.dataset_dir, cols)

    blended = any(w > 0 and is_layout(c) for c, w in weights.items())
    learned: LearnedPrior | None = None
    valid_view = valid_view_of(valid, collections, opt)
    if cache is None:
        data, reused = binned(), False
        if blended:
            learned = fit_family_prior(parts, live)
    else:
        # no columns in the keys: one Dataset and one valid view serve every feature switch
        keep = [t for t, _ in parts]
        rows_key = (tuple((id(t), rows_digest(r)) for t, r in parts), seed)
        data, reused = cache.get(("train", rows_key, ranker.dataset_key()), binned, keep)
        if blended and opt.rows_return:  # the equations of every column, summed once per
            # row set; a feature switch picks its sub-block (hpo.ranking.prior.fit.PriorEquations)
            every = np.arange(len(train.feature_names), dtype=np.int64)  # the prior's own too
            sums = cache.get(("prior", rows_key), lambda: family_equations(parts, every), keep)[0]
            learned = None if sums is None else sums.solve(live)
        elif blended:  # rows seen once (a sample per trial): the live columns only
            learned = fit_family_prior(parts, live)
    select = blend_selects(hyperparameters)
    if learned is not None and opt.blend_shares is not None:  # a scored trial's choice
        learned, select = learned.with_shares(opt.blend_shares), False
    t1 = time.perf_counter()
    ranker.fit_dataset(data, init_model=opt.init_model, deadline=opt.deadline)
    t2 = time.perf_counter()
    scores, metrics, seconds, learned = score_valid(
        ranker,
        valid,
        valid_view,
        cols,
        weights,
        learned,
        live_names,
        select=select,
    )
    return FamilyFit(
        ranker=ranker,
        columns=cols,
        column_names=names,
        live=live,
        live_names=live_names,
        rows=int(sum(len(r) for _, r in parts)),
        metrics=metrics,
        scores=scores,
        seconds={"dataset": t1 - t0, "boost": t2 - t1, **seconds},
        dataset_reused=reused,
        prior=learned,
    )
