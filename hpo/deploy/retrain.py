"""Retraining a run's incumbent on request (``hpo export --retrain``, ``--train-on train+valid``).

The default export copies the boosters that were scored (:mod:`hpo.deploy.scored`); this is
the other way, through the one training path (:func:`hpo.ranking.training.train_family`),
with the run's recorded feature spec and per-graph caps, so it sees the rows the run was
tuned on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpo.deploy.model import ProgressFn
from hpo.errors import UsageError
from hpo.features import ExtractOptions, FeatureSpec, SampleCaps, by_family, extraction_jobs
from hpo.ranking.model.fit_options import check_threads
from hpo.runs.record.settings import RunSettings

__all__ = ["TRAIN_SPLITS", "ExportOptions", "Trained", "train_families"]

TRAIN_SPLITS = ("train", "valid")


@dataclass(frozen=True, kw_only=True)
class ExportOptions:
    """Where an export reads its data and how it computes; none of it changes the model.

    One object carries them from :func:`hpo.deploy.export.export_model` (and
    :func:`hpo.deploy.ensemble.export_ensemble`) down to every file extracted and every
    family trained.

    Attributes
    ----------
    data_root
        Dataset root (default: the run's).
    cache_dir
        Feature cache (default: the run's).
    n_threads
        LightGBM threads.
    n_jobs
        Feature extraction processes (default: :func:`hpo.features.extraction_jobs`).
    progress
        ``progress(done, total, label)`` as files are extracted, families trained and the
        model scored on valid.
    """

    data_root: Path | None = None
    cache_dir: Path | None = None
    n_threads: int = 1
    n_jobs: int | None = None
    progress: ProgressFn | None = None

    def for_run(self, settings: RunSettings) -> ExportOptions:
        """These options with the run's data root and feature cache where none was given.

        Raises
        ------
        UsageError
            If ``n_threads`` is not from 1 to the machine's cores (:func:`check_threads`).
        """
        check_threads(self.n_threads)
        return dataclasses.replace(
            self,
            data_root=Path(self.data_root if self.data_root is not None else settings.data_root),
            cache_dir=Path(self.cache_dir) if self.cache_dir is not None else settings.cache_dir,
            n_jobs=extraction_jobs(self.n_jobs),
        )

    @property
    def root(self) -> Path:
        """The dataset root (:meth:`for_run` fills it in from the run)."""
        if self.data_root is None:
            raise UsageError("export: no dataset root (give one, or read the run's)")
        return self.data_root

    def extract(self, on_file: Callable[[str, bool], None] | None = None) -> ExtractOptions:
        """The extraction part of these options, reporting each file to ``on_file``."""
        return ExtractOptions(
            cache_dir=self.cache_dir, n_jobs=extraction_jobs(self.n_jobs), on_file=on_file
        )


@dataclass(frozen=True, eq=False)
class Trained:
    """Boosters retrained per family, the columns each reads, rows, valid metrics and priors.

    ``priors`` holds the learned cost prior of each family that blends one (JSON data).
    """

    boosters: dict[str, Any]
    columns: dict[str, list[str]]
    rows: dict[str, int]
    metrics: dict[str, float]
    priors: dict[str, dict[str, Any]] = field(default_factory=dict)


def train_families(
    collections: Sequence[str],
    hyperparameters: dict[str, Any],
    spec: FeatureSpec,
    *,
    rounds: int,
    seed: int,
    splits: tuple[str, ...],
    caps: SampleCaps | None,
    options: ExportOptions,
    blend_shares: Mapping[str, Mapping[str, float]] | None = None,
) -> Trained:
    """Train one ranker per family on ``splits`` and score it on every valid graph.

    ``caps`` are the run's (the rows it was tuned on); ``options`` name the dataset root;
    ``blend_shares`` per family the shares of the learned prior's blend the scored trial chose
    (:attr:`hpo.ranking.model.fit_options.FitOptions.blend_shares`), kept rather than chosen
    again on valid graphs that may be among the training rows; a family absent chooses.
    """
    from hpo.data.load import list_graphs
    from hpo.features import build_tables
    from hpo.ranking.training import FitOptions, train_family

    root, progress = options.root, options.progress
    total = sum(len(list_graphs(root, c, s)) for c in collections for s in TRAIN_SPLITS)
    done = [0]

    def on_file(path: str, hit: bool) -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], total, f"features {Path(path).name}")

    tables = build_tables(
        root,
        collections,
        TRAIN_SPLITS,
        spec,
        caps=caps,
        extract=options.extract(on_file),
    )
    out = Trained({}, {}, {}, {})
    families = by_family(collections)
    for i, (family, wanted) in enumerate(families.items()):
        if progress is not None:
            progress(i, len(families), f"training {family} ({rounds} rounds)")
        train, valid = tables[(family, "train")], tables[(family, "valid")]
        fit = train_family(
            train,
            valid,
            wanted,
            hyperparameters,
            rounds=rounds,
            seed=seed,
            options=FitOptions(
                n_threads=options.n_threads,
                extra=[valid] if "valid" in splits else (),
                blend_shares=(blend_shares or {}).get(family),
            ),
        )
        out.boosters[family] = fit.ranker.booster_
        out.columns[family] = list(fit.column_names)
        out.rows[family] = fit.rows
        if fit.prior is not None:
            out.priors[family] = fit.prior.to_dict()
        out.metrics.update(fit.metrics)
    if progress is not None:
        progress(len(families), len(families), "trained")
    missing = [c for c in collections if c not in out.metrics]
    if missing:
        raise UsageError(f"{root}: no labeled valid graphs to score for {', '.join(missing)}")
    return out
