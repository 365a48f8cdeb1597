"""The per-subset side of ``hpo export``: which runs a model folder is made of, and its
``model.json`` (format 2, see :mod:`hpo.deploy.model`).

A per-subset run (:class:`hpo.runs.views.nested.SubsetRun`) exports as one folder with one member
per subset: the subset's incumbent boosters under ``<subset>/``, each with its own
hyperparameters, rounds and feature columns. :func:`hpo.deploy.export.export_model` writes
the members; this module names them and describes the folder.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hpo.deploy.model import SUBSETS_MODEL_FORMAT
from hpo.features import FeatureSpec
from hpo.runs.record.folder import data_fingerprint, package_versions
from hpo.runs.views.history import RunHistory, Trial
from hpo.runs.views.nested import SubsetRun

__all__ = ["Member", "data_provenance", "subsets_meta", "validation_entry"]


@dataclass(frozen=True, eq=False)
class Member:
    """One run's incumbent as written into a model folder.

    ``families`` are ``model.json`` entries (file relative to the folder, columns, checksum);
    ``metrics`` are the valid metrics of a retrained member (``None`` when copied).
    """

    inc: Trial
    families: dict[str, dict[str, Any]]
    rounds: int
    seed: int
    metrics: dict[str, float] | None


def validation_entry(
    metrics: dict[str, float],
    recorded: dict[str, float],
    *,
    in_training: bool,
    older_metric: str | None = None,
) -> dict[str, Any]:
    """``model.json``'s validation entry; ``max_abs_difference`` is against the run's record
    (the incumbent trial's metrics, or for a per-subset run each subset's incumbent's).

    ``older_metric`` is the layout metric the run's trials were scored by when it is not
    today's (``older_layout_metric`` of the run, ``None`` otherwise). The entry then names it
    (``run_layout_metric``): the recorded metrics were computed another way, and that, not the
    model, is the difference on collections where a model tied configs.
    """
    shared = [c for c in metrics if c in recorded]
    entry: dict[str, Any] = {
        "split": "valid",
        "metrics": metrics,
        "score": float(np.mean(list(metrics.values()))),
        "in_training": in_training,
        "max_abs_difference": max((abs(metrics[c] - recorded[c]) for c in shared), default=None),
    }
    if older_metric is not None:
        entry["run_layout_metric"] = older_metric
    return entry


def subsets_meta(
    run: SubsetRun,
    written: dict[str, Member],
    spec: FeatureSpec,
    splits: tuple[str, ...],
    root: Path,
    retrain: bool,
) -> dict[str, Any]:
    """``model.json`` of a per-subset run (format 2) without its validation entry."""
    subsets: dict[str, Any] = {}
    for name in run.plan:
        member, sub = written[f"{name}/"], run.subsets[name]
        subsets[name] = {
            "collections": list(run.plan[name]),
            "hyperparameters": member.inc.config,
            "families": member.families,
            "rounds": member.rounds,
            "seed": member.seed,
            "run": {
                "name": sub.name,
                "trial": member.inc.trial,
                "budget": member.inc.budget,
                "metrics": member.inc.metrics,
                "score": member.inc.score,
            },
        }
    return {
        "format": SUBSETS_MODEL_FORMAT,
        "feature_version": spec.version,  # of the run: its columns are named per subset
        "feature_spec": spec.to_dict(),
        "collections": list(run.collections),
        "per": run.per,
        "subsets": subsets,
        "source": "retrained" if retrain else "copied",
        "fidelity": run.fidelity,
        "train_on": list(splits) if retrain else ["train"],
        "run": {
            "name": run.name,
            "path": str(run.path.absolute()),
            "optimizer": run.optimizer,
            "per": run.per,
            "metrics": run.metrics,
            "score": run.score,
        },
        **data_provenance(run, root),
    }


def data_provenance(run: RunHistory | SubsetRun, root: Path) -> dict[str, Any]:
    """The keys every ``model.json`` format ends with: the data it was exported on (and
    whether that is the data the run tuned on), package versions and the time."""
    fingerprint = data_fingerprint(root, run.collections)
    run_fingerprint = run.record.data_fingerprint
    return {
        "data": {
            "root": str(root.absolute()),
            "fingerprint": fingerprint,
            "run_fingerprint": run_fingerprint,
            "matches_run": fingerprint == run_fingerprint,
        },
        "versions": package_versions(),
        "created": time.time(),
    }
