"""Exported model folders, loaded with only ``hpo``: LightGBM boosters routed by collection.

Three formats of ``model.json`` are read (its key ``format``):

1. *One configuration* (``hpo export`` of a single campaign, and every older folder):
   feature spec and ``FEATURE_VERSION``, hyperparameters, collections served, per family its
   model file, checksum and feature columns, rounds, validation metrics, training data
   fingerprint, package versions; the files ``tile.txt`` / ``layout.txt``. Every collection
   is served by the booster of its family.
2. *One configuration per subset* (``hpo export`` of a ``--per family|collection`` run):
   the same top-level keys except ``hyperparameters`` / ``families`` / ``rounds``, plus
   ``per`` and ``subsets``: ``{subset: {"collections", "hyperparameters", "rounds", "seed",
   "families": {family: {"file": "<subset>/<family>.txt", "columns", "sha256"}}, "run"}}``.
   Each collection is served by the booster of its family *in its subset*, so every graph
   is ranked by the model tuned for it; one feature spec serves all (one run, one spec).
3. *An ensemble* of a run's best configurations (``hpo export --ensemble``, ``ensemble.py``).

:func:`hpo.deploy.export.export_model` writes one; :func:`load_model` reads either, refusing a
folder from another feature version, of an unknown format or with damaged files in one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from hpo.deploy.model_files import (
    check_booster_columns,
    check_content,
    member_file,
    model_keys,
    read_booster,
)
from hpo.errors import ConfigError, UsageError
from hpo.features import (
    FEATURE_VERSION,
    READABLE_VERSIONS,
    FeatureSpec,
    by_family,
    extract_file,
    family_of,
    feature_names,
)
from hpo.features.groups import live_columns
from hpo.ranking.prior.blend import blend_scores, estimate_position, estimate_weight
from hpo.ranking.prior.learned import LearnedPrior

__all__ = [
    "MODEL_FILE",
    "MODEL_FORMAT",
    "SUBSETS_MODEL_FORMAT",
    "ExportedModel",
    "FamilyModel",
    "GraphPrediction",
    "ProgressFn",
    "load_model",
    "route_collections",
]

MODEL_FILE = "model.json"
#: Format of a one-configuration folder, and of a per-subset one.
MODEL_FORMAT = 1
SUBSETS_MODEL_FORMAT = 2
ENSEMBLE_MODEL_FORMAT = 3
MODEL_FORMATS = (MODEL_FORMAT, SUBSETS_MODEL_FORMAT, ENSEMBLE_MODEL_FORMAT)
#: Loaders of formats other modules own, registered as hpo.deploy imports them (3: ensemble).
FORMAT_LOADERS: dict[int, Callable[..., tuple[dict[str, FamilyModel], dict]]] = {}
#: ``progress(done, total, label)``, called as work advances.
ProgressFn = Callable[[int, int, str], None]


@dataclass(frozen=True, eq=False)
class FamilyModel:
    """The booster of one family, the feature columns it reads and its estimate blend.

    ``estimate_weight`` is the blend weight of the collections it is routed to
    (:mod:`hpo.ranking.prior.blend`; 0 for models exported before the blend): a family's model is
    at ``estimate_weight``, and a copy at ``estimate_weight_default_collections`` serves the
    default layout collections (:func:`route_collections`). ``estimate_column`` is the index
    of the estimate among the family's columns (``None``: the booster does not read it, so
    no blend), so a prediction is scored exactly as the campaign scored the trial. ``prior``
    is the learned cost prior the trial blended (:mod:`hpo.ranking.prior.fit`; ``None`` for
    models exported before it, which blend the estimate column) and ``prior_columns`` its
    basis among the family's columns. ``file`` is the booster's model file, named when its
    scores cannot be used.
    """

    family: str
    booster: Any
    columns: np.ndarray
    n_features: int
    estimate_weight: float = 0.0
    estimate_column: int | None = None
    prior: LearnedPrior | None = None
    prior_columns: tuple[int, ...] = ()
    file: Path | None = None

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Scores of the feature rows of ONE graph (all columns of the family), lower = faster.

        One graph, because the blend standardizes the scores over the graph's rows.
        """
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ConfigError(
                f"{self.family} model: expected {self.n_features} feature columns, found "
                f"shape {X.shape}"
            )
        scores = -np.asarray(self.booster.predict(X[:, self.columns]), dtype=np.float64)
        self._check_finite(scores)
        if self.estimate_weight == 0:
            return scores
        if self.prior is not None:
            bounds = np.array([0, X.shape[0]])
            estimate = self.prior.estimate(X, bounds, self.prior_columns)
            return blend_scores(scores, estimate, None, self.estimate_weight)
        if self.estimate_column is None:
            return scores
        return blend_scores(scores, X[:, self.estimate_column], None, self.estimate_weight)

    def _check_finite(self, scores: np.ndarray) -> None:
        """Refuse a booster's scores that are not all finite: an order drawn from inf or NaN
        ranks nothing, yet was scored as if it did (a forged booster whose every leaf is
        1e308 once scored -0.1753 on tile, exit code 0)."""
        bad = ~np.isfinite(scores)
        if bad.any():
            where = self.file if self.file is not None else f"the {self.family} booster"
            raise ConfigError(
                f"{where}: predicts {int(bad.sum())} of {scores.size} configs as inf or NaN "
                "(its leaf values sum beyond the float range); refusing its scores"
            )


@dataclass(frozen=True, eq=False)
class GraphPrediction:
    """Scores of every config of one graph file, with its runtimes when labeled."""

    scores: np.ndarray
    target: np.ndarray
    labeled: bool


@dataclass(frozen=True, eq=False)
class ExportedModel:
    """A loaded model folder (see :func:`load_model`).

    Attributes
    ----------
    path
        The model folder.
    spec
        Feature settings the model was trained with.
    hyperparameters
        The incumbent's hyperparameters (format 1; ``{}`` for a per-subset model, whose
        subsets each have their own: ``meta["subsets"][name]["hyperparameters"]``).
    collections
        Collections the model serves.
    families
        ``{family: FamilyModel}`` (format 1) or ``{"<subset>/<family>": FamilyModel}``.
    meta
        The whole ``model.json``.
    routes
        ``{collection: FamilyModel}``: the booster that ranks each collection's graphs.
    """

    path: Path
    spec: FeatureSpec
    hyperparameters: dict[str, Any]
    collections: tuple[str, ...]
    families: dict[str, FamilyModel]
    meta: dict[str, Any]
    routes: dict[str, FamilyModel]

    @property
    def format(self) -> int:
        """``model.json``'s format: 1 (one configuration) or 2 (one per subset)."""
        return int(self.meta.get("format", MODEL_FORMAT))

    @property
    def validation_metrics(self) -> dict[str, float]:
        """Per-collection metrics on the valid split, computed at export."""
        return dict(self.meta.get("validation", {}).get("metrics", {}))

    def family_model(self, collection: str) -> FamilyModel:
        """The family model serving ``collection``.

        Raises
        ------
        UsageError
            If the model does not serve ``collection``.
        """
        if collection not in self.collections:
            raise UsageError(
                f"model {self.path} serves {', '.join(self.collections)}, not {collection}"
            )
        return self.routes[collection]

    def predict_file(
        self, path: Path | str, collection: str, *, cache_dir: Path | None = None
    ) -> GraphPrediction:
        """Scores, runtimes and label flag of one graph file (layout configs are streamed)."""
        fam = self.family_model(collection)
        X, target, _, labeled, _ = extract_file(Path(path), collection, self.spec, cache_dir)
        return GraphPrediction(fam.predict(X), target, labeled)

    def predict_graph(
        self, path: Path | str, collection: str, *, cache_dir: Path | None = None
    ) -> np.ndarray:
        """Scores for every config of one graph file, lower = predicted faster."""
        return self.predict_file(path, collection, cache_dir=cache_dir).scores

    def rank_graph(
        self, path: Path | str, collection: str, *, cache_dir: Path | None = None
    ) -> np.ndarray:
        """Config indices of one graph file, predicted fastest first."""
        return np.argsort(self.predict_graph(path, collection, cache_dir=cache_dir), kind="stable")


def _family_columns(family: str, spec: FeatureSpec, used: Sequence[str], where: Path) -> np.ndarray:
    names = feature_names(family, spec)
    index = {n: i for i, n in enumerate(names)}
    missing = [n for n in used if n not in index]
    if missing:
        raise ConfigError(
            f"{where}: {family} model reads feature '{missing[0]}' that this hpo does not "
            "extract; re-export the model"
        )
    return np.asarray([index[n] for n in used], dtype=np.int64)


def _load_families(
    folder: Path,
    meta_file: Path,
    spec: FeatureSpec,
    collections: tuple[str, ...],
    family_meta: Any,
    where: str,
    hyperparameters: Any,
) -> dict[str, FamilyModel]:
    """Load the boosters of ``family_meta`` (``{family: entry}``) the collections need.

    ``hyperparameters`` (of the model, or of its subset) give the estimate blend's weight.
    """
    if not isinstance(hyperparameters, dict):
        raise ConfigError(f"{meta_file}: {where}key 'hyperparameters': expected a JSON object")
    try:
        weight = estimate_weight(hyperparameters)
        live_columns((), hyperparameters)  # an unknown group switch is refused here, file named
    except ConfigError as exc:
        raise ConfigError(f"{meta_file}: {where}{exc}") from exc
    if not isinstance(family_meta, dict):
        raise ConfigError(f"{meta_file}: {where}key 'families': expected a JSON object")
    families: dict[str, FamilyModel] = {}
    for family in by_family(collections):
        entry = family_meta.get(family)
        if not isinstance(entry, dict) or "file" not in entry or "columns" not in entry:
            raise ConfigError(f"{meta_file}: {where}no '{family}' model entry for {collections}")
        model_file = member_file(folder, entry["file"], meta_file, where)
        names = entry["columns"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(
                f"{meta_file}: {where}'{family}' key 'columns': expected a list of feature names"
            )
        columns = _family_columns(family, spec, names, folder)
        booster = read_booster(model_file, entry.get("sha256"), len(columns))
        if booster.num_feature() != len(columns):
            raise ConfigError(
                f"{model_file}: model reads {booster.num_feature()} features, model.json lists "
                f"{len(columns)}"
            )
        check_booster_columns(booster, names, model_file)
        pos = estimate_position(names)  # among the booster's columns
        if pos is not None and pos not in live_columns(names, hyperparameters):
            pos = None  # switched off: its trial blended nothing (hpo.ranking.training)
        prior: LearnedPrior | None = None
        prior_columns: tuple[int, ...] = ()
        if entry.get("prior") is not None:
            where_prior = f"{meta_file}: {where}{family}"
            prior = LearnedPrior.from_dict(entry["prior"], where_prior)
            # among the family's columns: the prior may read columns the booster does not
            prior_columns = tuple(prior.positions_in(feature_names(family, spec), where_prior))
        families[family] = FamilyModel(
            family,
            booster,
            columns,
            len(feature_names(family, spec)),
            weight,
            None if pos is None else int(columns[pos]),  # among the family's columns
            prior,
            prior_columns,
            model_file,
        )
    return families


def route_collections(
    families: dict[str, FamilyModel], hyperparameters: Any, collections: Sequence[str]
) -> dict[str, FamilyModel]:
    """``{collection: its family's model}``, each blending with its collection's weight.

    A joint layout model blends the default collections with
    ``estimate_weight_default_collections`` when the configuration has it
    (:func:`hpo.ranking.prior.blend.estimate_weight`), and a random collection with its own prior
    weights when the prior has them (:meth:`hpo.ranking.prior.fit.LearnedPrior.for_collection`),
    and a collection its trial ranked by the trees alone (the prior's ``off``) with weight 0,
    one it doubted (the prior's ``doubt``) with that share of its weight, so those routes are
    copies of the family's model with that weight and prior: a graph is scored as its trial
    scored it.
    """
    routes: dict[str, FamilyModel] = {}
    for c in collections:
        model = families[family_of(c)]
        weight = estimate_weight(hyperparameters, c)  # checked by _load_families
        if model.prior is not None:  # its trial's share (estimate_blend_select): 0 is off
            weight *= model.prior.weight_share(c)
        prior = model.prior.for_collection(c) if model.prior is not None else None
        if weight != model.estimate_weight or prior is not model.prior:
            model = replace(model, estimate_weight=weight, prior=prior)
        routes[c] = model
    return routes


def _subset_families(
    folder: Path, meta_file: Path, spec: FeatureSpec, meta: dict[str, Any]
) -> tuple[dict[str, FamilyModel], dict[str, FamilyModel]]:
    """Format 2: ``({"<subset>/<family>": model}, {collection: model})``.

    Raises
    ------
    ConfigError
        If ``subsets`` is malformed, a collection is in two subsets, or a served collection
        is in none.
    """
    subsets = meta.get("subsets")
    if not isinstance(subsets, dict) or not subsets:
        raise ConfigError(f"{meta_file}: key 'subsets': expected a non-empty JSON object")
    families: dict[str, FamilyModel] = {}
    routes: dict[str, FamilyModel] = {}
    for name, entry in subsets.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("collections"), list):
            raise ConfigError(f"{meta_file}: subset '{name}': expected 'collections' (a list)")
        collections = tuple(str(c) for c in entry["collections"])
        hyperparameters = entry.get("hyperparameters", {})
        loaded = _load_families(
            folder,
            meta_file,
            spec,
            collections,
            entry.get("families"),
            f"subset '{name}': ",
            hyperparameters,
        )
        families.update({f"{name}/{f}": m for f, m in loaded.items()})
        for c, model in route_collections(loaded, hyperparameters, collections).items():
            if c in routes:
                raise ConfigError(f"{meta_file}: collection {c} is in two subsets")
            routes[c] = model
    return families, routes


def load_model(path: Path | str) -> ExportedModel:
    """Load a model folder written by :func:`export_model` (either format).

    Raises
    ------
    ConfigError
        If the folder or ``model.json`` is missing or corrupt, of an unknown format, a model
        file is missing or unreadable, or the model was built with another feature version.
    """
    folder = Path(path)
    meta_file = folder / MODEL_FILE
    if not meta_file.is_file():
        raise ConfigError(f"{folder}: not a model folder (missing {MODEL_FILE})")
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{meta_file}: not valid JSON ({exc})") from exc
    if not isinstance(meta, dict):
        raise ConfigError(f"{meta_file}: expected a JSON object")
    fmt = meta.get("format", MODEL_FORMAT)
    if isinstance(fmt, bool) or fmt not in MODEL_FORMATS:
        raise ConfigError(
            f"{meta_file}: model format {fmt!r} is not read by this hpo (it reads formats "
            f"{', '.join(map(str, MODEL_FORMATS))}); use the hpo version that exported it"
        )
    version = meta.get("feature_version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise ConfigError(
            f"{folder}: model was exported with feature version {version}, this hpo extracts "
            f"feature version {FEATURE_VERSION} and reads "
            f"{', '.join(str(v) for v in READABLE_VERSIONS)}; re-export the model with this hpo"
        )
    raw_spec, collections, hyperparameters = model_keys(meta, meta_file, fmt == MODEL_FORMAT)
    family_meta = meta.get("families") if fmt == MODEL_FORMAT else None
    try:
        # the extractor computes every readable version's columns, unchanged; the model's rows
        # are those of feature_version (checked above; a spec dict without one reads as today's)
        spec = replace(FeatureSpec.from_dict(dict(raw_spec)), version=int(version))
    except (TypeError, ValueError, ConfigError) as exc:
        raise ConfigError(f"{meta_file}: key 'feature_spec': {exc}") from exc
    if fmt == MODEL_FORMAT:
        families = _load_families(
            folder, meta_file, spec, collections, family_meta, "", hyperparameters
        )
        routes = route_collections(families, hyperparameters, collections)
    elif fmt in FORMAT_LOADERS:
        families, routes = FORMAT_LOADERS[fmt](folder, meta_file, spec, collections, meta)
    else:
        families, routes = _subset_families(folder, meta_file, spec, meta)
        missing = [c for c in collections if c not in routes]
        if missing:
            raise ConfigError(f"{meta_file}: collection {missing[0]} is in no subset")
    check_content(meta, meta_file)  # last: the checks above name what is wrong more closely
    return ExportedModel(
        folder, spec, hyperparameters, collections, families=families, meta=meta, routes=routes
    )
