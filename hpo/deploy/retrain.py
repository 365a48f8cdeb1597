"""Retraining a run's incumbent on request (``hpo export --retrain``, ``--train-on train+valid``).

The default export copies the boosters that were scored (:mod:`hpo.deploy.scored`); this is
the other way, through the one training path (:func:`hpo.ranking.training.train_family`),
with the run's recorded feature spec and per-graph caps, so it sees the rows the run was
tuned on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hpo.deploy.model import ProgressFn
from hpo.errors import UsageError
from hpo.features import FeatureSpec, SampleCaps, family_of

__all__ = ["TRAIN_SPLITS", "Trained", "train_families"]

TRAIN_SPLITS = ("train", "valid")


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
    root: Path,
    collections: Sequence[str],
    hyperparameters: dict[str, Any],
    spec: FeatureSpec,
    *,
    rounds: int,
    seed: int,
    splits: tuple[str, ...],
    cache_dir: Path | None,
    n_threads: int,
    n_jobs: int,
    progress: ProgressFn | None,
    caps: SampleCaps | None = None,
) -> Trained:
    """Train one ranker per family on ``splits`` and score it on every valid graph."""
    from hpo.data.load import list_graphs
    from hpo.features import build_tables
    from hpo.ranking.training import train_family

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
        cache_dir=cache_dir,
        caps=caps,
        n_jobs=n_jobs,
        on_file=on_file,
    )
    out = Trained({}, {}, {}, {})
    families = sorted({family_of(c) for c in collections})
    for i, family in enumerate(families):
        if progress is not None:
            progress(i, len(families), f"training {family} ({rounds} rounds)")
        wanted = [c for c in collections if family_of(c) == family]
        train, valid = tables[(family, "train")], tables[(family, "valid")]
        fit = train_family(
            train,
            valid,
            wanted,
            hyperparameters,
            rounds=rounds,
            seed=seed,
            n_threads=n_threads,
            extra=[valid] if "valid" in splits else (),
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
