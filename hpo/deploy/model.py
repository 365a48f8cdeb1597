"""Exported model folders, loaded with only ``hpo``: one LightGBM booster per family.

A model folder ``models/<name>/`` holds ``model.json`` (feature spec and ``FEATURE_VERSION``,
hyperparameters, collections served, per family its model file, checksum and feature columns,
rounds, validation metrics, training data fingerprint, package versions) and ``tile.txt`` /
``layout.txt``. :func:`hpo.deploy.export.export_model` writes one; :func:`load_model` reads it,
refusing a folder from another feature version or with damaged files in one line.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpo.errors import ConfigError, UsageError
from hpo.features import (
    FEATURE_VERSION,
    READABLE_VERSIONS,
    FeatureSpec,
    extract_file,
    family_of,
    feature_names,
)

__all__ = [
    "MODEL_FILE",
    "ExportedModel",
    "FamilyModel",
    "GraphPrediction",
    "ProgressFn",
    "load_model",
]

MODEL_FILE = "model.json"
MODEL_FORMAT = 1
#: ``progress(done, total, label)``, called as work advances.
ProgressFn = Callable[[int, int, str], None]


@dataclass(frozen=True, eq=False)
class FamilyModel:
    """The booster of one family and the feature columns it reads."""

    family: str
    booster: Any
    columns: np.ndarray
    n_features: int

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Scores of feature rows (all columns of the family), lower = predicted faster."""
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ConfigError(
                f"{self.family} model: expected {self.n_features} feature columns, found "
                f"shape {X.shape}"
            )
        return -np.asarray(self.booster.predict(X[:, self.columns]), dtype=np.float64)


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
        The incumbent's hyperparameters.
    collections
        Collections the model serves.
    families
        ``{family: FamilyModel}``.
    meta
        The whole ``model.json``.
    """

    path: Path
    spec: FeatureSpec
    hyperparameters: dict[str, Any]
    collections: tuple[str, ...]
    families: dict[str, FamilyModel]
    meta: dict[str, Any]

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
        return self.families[family_of(collection)]

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


def _read_booster(model_file: Path, sha256: Any) -> Any:
    """Load one LightGBM text model after checking its checksum and its frame.

    LightGBM aborts the whole process on some truncated model files instead of raising, so
    damage must be caught before the file reaches its parser.
    """
    import lightgbm as lgb

    if not model_file.is_file():
        raise ConfigError(f"{model_file.parent}: missing model file {model_file.name}")
    data = model_file.read_bytes()
    if isinstance(sha256, str) and hashlib.sha256(data).hexdigest() != sha256:
        raise ConfigError(
            f"{model_file}: corrupt (its SHA-256 differs from model.json); re-export the model"
        )
    text = data.decode("utf-8", errors="replace")
    if not text.startswith("tree\n") or "\nend of trees" not in text:
        raise ConfigError(
            f"{model_file}: not a readable LightGBM model (truncated or not a LightGBM text model)"
        )
    try:  # LightGBM prints its own "[Fatal]" line to stdout: keep the CLI to one line
        with contextlib.redirect_stdout(io.StringIO()):
            return lgb.Booster(model_str=text)
    except (lgb.basic.LightGBMError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{model_file}: not a readable LightGBM model ({first})") from exc


def load_model(path: Path | str) -> ExportedModel:
    """Load a model folder written by :func:`export_model`.

    Raises
    ------
    ConfigError
        If the folder or ``model.json`` is missing or corrupt, a model file is missing or
        unreadable, or the model was built with another feature version.
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
    version = meta.get("feature_version")
    if isinstance(version, bool) or version not in READABLE_VERSIONS:
        raise ConfigError(
            f"{folder}: model was exported with feature version {version}, this hpo extracts "
            f"feature version {FEATURE_VERSION} and reads "
            f"{', '.join(str(v) for v in READABLE_VERSIONS)}; re-export the model with this hpo"
        )
    try:
        # today's extractors compute every column an older readable version had, unchanged:
        # the boosters' columns are found by name among today's rows
        spec = FeatureSpec.from_dict(dict(meta["feature_spec"])).extracting()
        collections = tuple(str(c) for c in meta["collections"])
        family_meta = dict(meta["families"])
        hyperparameters = dict(meta["hyperparameters"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{meta_file}: missing or malformed key {exc}") from exc
    families: dict[str, FamilyModel] = {}
    for family in sorted({family_of(c) for c in collections}):
        entry = family_meta.get(family)
        if not isinstance(entry, dict) or "file" not in entry or "columns" not in entry:
            raise ConfigError(f"{meta_file}: no '{family}' model entry for {collections}")
        model_file = folder / str(entry["file"])
        booster = _read_booster(model_file, entry.get("sha256"))
        columns = _family_columns(family, spec, list(entry["columns"]), folder)
        if booster.num_feature() != len(columns):
            raise ConfigError(
                f"{model_file}: model reads {booster.num_feature()} features, model.json lists "
                f"{len(columns)}"
            )
        n_features = len(feature_names(family, spec))
        families[family] = FamilyModel(family, booster, columns, n_features)
    return ExportedModel(
        path=folder,
        spec=spec,
        hyperparameters=hyperparameters,
        collections=collections,
        families=families,
        meta=meta,
    )
