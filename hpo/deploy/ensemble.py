"""``hpo export NAME --ensemble K``: one model folder averaging a run's K best configurations.

Why: inside one graph the rank noise of one booster is large next to the differences
between a run's top configurations (docs/benchmarks.md), and averaging several good rankers is
how ranking competitions are usually won. The members are the K best distinct
configurations *at the largest budget* (the budget the incumbent rule compares at, see
:mod:`hpo.runs.incumbent`), the incumbent first. Each member scores a graph's configs as its
single-configuration model would (:meth:`hpo.deploy.model.FamilyModel.predict`, blend
included, and whatever that method returns in future), the scores are standardized over the
graph's rows (:func:`hpo.ranking.prior.blend.standardized`, the blend's own z-scoring) so no
member dominates by its score range, and averaged.

A member's boosters are *copied* from the run's store when the run kept them (a finished
campaign keeps those of its top configurations at the largest budget, see
:func:`hpo.campaign.lifecycle.run`), else retrained with the run's settings, as ``hpo export
--retrain`` would (older runs; ``model.json`` says which per member). The ensemble is scored
on the valid rows the run's trials were scored on before the folder is installed; the score
goes to ``model.json`` (``validation``) and to the run folder (``ensemble.json``), which
``hpo runs show`` prints beside the incumbent's.

Model folder format 3: ``model.json`` has the top-level keys of format 1 except
``hyperparameters`` / ``families`` / ``rounds``, plus ``ensemble``: ``{"combine", "k",
"requested"}`` and ``members``: ``[{"hyperparameters", "families": {family: {"file":
"m<i>/<family>.txt", "columns", "sha256"}}, "rounds", "seed", "source", "trial"}]``.
Single campaigns only: a per-subset or cross-validated run is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from hpo.deploy.export import export_rounds, name_files, provenance
from hpo.deploy.model import (
    ENSEMBLE_MODEL_FORMAT,
    FORMAT_LOADERS,
    MODEL_FILE,
    FamilyModel,
    _load_families,
    load_model,
    route_collections,
)
from hpo.deploy.model_files import write_model_file
from hpo.deploy.out_folder import (
    check_out_dir,
    folder_beside,
    install_model_folder,
    writing_out,
)
from hpo.deploy.retrain import ExportOptions, train_families
from hpo.deploy.scored import copy_scored_boosters, score_on_run_rows
from hpo.deploy.subsets import validation_entry
from hpo.errors import ConfigError, UsageError
from hpo.features import FeatureSpec, family_of
from hpo.ranking.prior.blend import standardized
from hpo.runs.incumbent import config_key
from hpo.runs.record.boosters import write_booster
from hpo.runs.record.folder import (
    ENSEMBLE_FILE,
    jsonable,
    write_json_atomic,
)
from hpo.runs.views.history import RunHistory, Trial
from hpo.runs.views.nested import AnyRun, SubsetRun, as_run

__all__ = [
    "ENSEMBLE_WITHIN",
    "EnsembleFamilyModel",
    "ensemble_families",
    "ensemble_members",
    "export_ensemble",
]

COMBINE = "mean of per-graph standardized member scores"


@dataclass(frozen=True, eq=False)
class EnsembleFamilyModel(FamilyModel):
    """The members' family models of one family, averaged per graph (a :class:`FamilyModel`
    to every reader: ``evaluate`` and ``predict`` call :meth:`predict` on one graph's rows)."""

    members: tuple[FamilyModel, ...] = ()

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Mean over members of their scores standardized over this graph's rows; lower =
        predicted faster."""
        scores = np.stack([standardized(m.predict(X)) for m in self.members])
        return np.asarray(scores.mean(axis=0), dtype=np.float64)


def ensemble_families(
    folder: Path, meta_file: Path, spec: FeatureSpec, collections: tuple[str, ...], meta: Any
) -> tuple[dict[str, FamilyModel], dict[str, FamilyModel]]:
    """Format 3: ``({"m<i>/<family>": member model}, {collection: ensemble model})``.

    Raises
    ------
    ConfigError
        If ``members`` is malformed or a member's boosters do not load.
    """
    members = meta.get("members")
    if (
        not isinstance(members, list)
        or not members
        or any(not isinstance(m, dict) for m in members)
    ):
        raise ConfigError(f"{meta_file}: key 'members': expected a non-empty list of objects")
    loaded = [
        _load_families(
            folder,
            meta_file,
            spec,
            collections,
            m.get("families"),
            f"member {i}: ",
            m.get("hyperparameters"),
        )
        for i, m in enumerate(members)
    ]
    families = {f"m{i}/{f}": model for i, fams in enumerate(loaded) for f, model in fams.items()}
    # each member blends a collection with its own weight for it (route_collections)
    routes = [
        route_collections(fams, m.get("hyperparameters"), collections)
        for fams, m in zip(loaded, members, strict=True)
    ]
    combined: dict[str, FamilyModel] = {}
    for c in collections:
        parts = tuple(r[c] for r in routes)
        n = parts[0].n_features
        combined[c] = EnsembleFamilyModel(
            family_of(c), None, np.arange(n, dtype=np.int64), n, members=parts
        )
    return families, combined


#: Default of ``--ensemble-within``: a member's valid score may lie at most this far below
#: the incumbent's. Why: the case for averaging is configurations of nearly equal score, whose
#: differences are within one booster's rank noise (about 0.005-0.01 of the score on ``small``
#: data, docs/benchmarks.md). In 2-minute campaigns the second or third best configuration at
#: the largest budget was often 0.04-0.12 below the incumbent, and averaging them in cost the
#: ensemble up to 0.028 on valid and 0.036 on unseen graphs (docs/benchmarks.md, "Ensembles").
ENSEMBLE_WITHIN = 0.01


def ensemble_members(run: RunHistory, k: int, within: float = ENSEMBLE_WITHIN) -> list[Trial]:
    """The ``k`` best distinct configurations at the run's largest budget, incumbent first,
    each scoring on valid at most ``within`` below the incumbent.

    Raises
    ------
    UsageError
        If ``k`` < 2, ``within`` is negative or NaN, or fewer than two configurations
        qualify.
    """
    if k < 2:
        raise UsageError(f"--ensemble {k}: an ensemble needs at least 2 configurations")
    if not within >= 0:
        raise UsageError(f"--ensemble-within {within}: expected a score difference >= 0")
    inc = run.incumbent
    if inc is None:
        raise UsageError(f"run '{run.name}' has no successful trial to export")
    ranked = [t for t in run.top(len(run.scored)) if t.budget == inc.budget]
    rest = [t for t in ranked if config_key(t.config) != config_key(inc.config)]
    floor = (inc.score or 0.0) - within - 1e-12  # a member exactly D below qualifies
    close = [t for t in rest if t.score is not None and t.score >= floor]
    members = [inc, *close][:k]
    if len(members) < 2:
        near = (
            f"; {len(rest)} more reached it, none within {within:g} of the incumbent's valid "
            f"score ({inc.score or 0.0:.4f}): raise --ensemble-within"
            if rest
            else ""
        )
        raise UsageError(
            f"run '{run.name}': only 1 configuration qualifies at the largest budget "
            f"({inc.budget:g}){near}; an ensemble needs at least 2"
        )
    return members


def _write_member(
    run: RunHistory, trial: Trial, folder: Path, spec: FeatureSpec, options: ExportOptions
) -> tuple[dict[str, dict[str, Any]], int, str]:
    """One member's boosters in ``folder``: copied if the run kept them, else retrained.

    A retrained member trains on train only, as its trial did, so the prior's shares it
    chooses on the held-out valid graphs are its trial's choice again (``hpo export
    --train-on train+valid`` keeps the trial's instead: :func:`hpo.deploy.scored.
    scored_blend_shares`)."""
    seed = trial.seed if trial.seed is not None else run.settings.seed
    rounds = export_rounds(run, trial.budget)
    folder.mkdir(parents=True)
    try:
        return copy_scored_boosters(run, trial, seed, spec, folder), rounds, "copied"
    except UsageError:  # not kept (a run made before top boosters were kept): retrain it
        pass
    trained = train_families(
        run.collections,
        trial.config,
        spec,
        rounds=rounds,
        seed=seed,
        splits=("train",),
        caps=run.settings.caps,
        options=options,
    )
    families: dict[str, dict[str, Any]] = {}
    for family, booster in trained.boosters.items():
        write_booster(booster, folder / f"{family}.txt")
        families[family] = {"file": f"{family}.txt", "columns": trained.columns[family]}
        if family in trained.priors:  # the learned prior the member blends, as export keeps it
            families[family]["prior"] = trained.priors[family]
    return families, rounds, "retrained"


def _per_subset(run: SubsetRun) -> NoReturn:
    """Refuse a per-subset run: an ensemble of subsets is not written yet."""
    raise UsageError(f"--ensemble: run '{run.name}' is per-subset; not supported yet")


def export_ensemble(
    run: AnyRun | Path | str,
    out_dir: Path | str,
    k: int,
    *,
    within: float = ENSEMBLE_WITHIN,
    options: ExportOptions | None = None,
) -> Path:
    """Write a model folder averaging the run's ``k`` best configurations (see the module).

    ``run``, ``out_dir`` and ``options`` are those of :func:`hpo.deploy.export.export_model`;
    ``k`` is at least 2 (fewer qualifying configurations make a smaller ensemble, recorded
    as such); ``within`` bounds how far below the incumbent's valid score a member may be.

    Raises
    ------
    UsageError
        If the run is per-subset or cross-validated, has fewer than two configurations at
        its largest budget, or ``out_dir`` is a non-empty non-model folder.
    """
    history = as_run(run).by_kind(lambda single: single, _per_subset)
    if history.folds:
        raise UsageError(f"--ensemble: run '{history.name}' is cross-validated; not supported")
    members = ensemble_members(history, k, within)
    out = Path(out_dir)
    with writing_out(out):
        check_out_dir(out)
        how = (options or ExportOptions()).for_run(history.settings)
        spec = history.settings.features
        with folder_beside(out) as tmp:
            entries = []
            for i, trial in enumerate(members):
                families, rounds, source = _write_member(history, trial, tmp / f"m{i}", spec, how)
                name_files(families, tmp, f"m{i}/")
                entries.append(
                    {
                        "hyperparameters": trial.config,
                        "families": families,
                        "rounds": rounds,
                        "seed": trial.seed,
                        "source": source,
                        "trial": {
                            "trial": trial.trial,
                            "budget": trial.budget,
                            "score": trial.score,
                        },
                    }
                )
            meta = _meta(history, members, entries, spec, how.root, (k, within))
            write_model_file(tmp / MODEL_FILE, meta)
            if how.progress is not None:
                how.progress(0, 1, "scoring the ensemble on valid")
            model = load_model(tmp)
            metrics = score_on_run_rows(model, history, spec, how)
            meta["validation"] = validation_entry(
                metrics,
                members[0].metrics,
                in_training=False,
                older_metric=history.older_layout_metric,
            )
            write_model_file(tmp / MODEL_FILE, meta)
        install_model_folder(tmp, out)
    _record_in_run(history, out, meta)
    return out


def _meta(
    history: RunHistory,
    members: list[Trial],
    entries: list[dict[str, Any]],
    spec: FeatureSpec,
    root: Path,
    requested: tuple[int, float],
) -> dict[str, Any]:
    """``model.json`` of an ensemble, without its validation entry."""
    inc = members[0]
    return {
        "format": ENSEMBLE_MODEL_FORMAT,
        "feature_version": spec.version,
        "feature_spec": spec.to_dict(),
        "collections": list(history.collections),
        "ensemble": {
            "combine": COMBINE,
            "k": len(members),
            "requested": requested[0],
            "within": requested[1] if math.isfinite(requested[1]) else None,  # None: any
        },
        "members": entries,
        "source": "copied" if all(e["source"] == "copied" for e in entries) else "mixed",
        "fidelity": history.fidelity,
        "train_on": ["train"],
        **provenance(history, inc, root),
    }


def _record_in_run(history: RunHistory, out: Path, meta: dict[str, Any]) -> None:
    """Write ``ensemble.json`` in the run folder: what ``hpo runs show`` reports."""
    validation = meta["validation"]
    record = {
        "model": str(out.absolute()),
        "k": meta["ensemble"]["k"],
        "trials": [m["trial"]["trial"] for m in meta["members"]],
        "score": validation["score"],
        "metrics": validation["metrics"],
        "incumbent_score": meta["run"]["score"],
        "created": meta["created"],
    }
    if "run_layout_metric" in validation:  # the incumbent's score is of another metric
        record["run_layout_metric"] = validation["run_layout_metric"]
    try:
        write_json_atomic(history.path / ENSEMBLE_FILE, jsonable(record))
    except OSError as exc:  # the model is written; a read-only run folder only loses the note
        raise UsageError(
            f"{history.path / ENSEMBLE_FILE}: model written to {out}, but the run folder "
            f"cannot record it ({exc.strerror})"
        ) from exc


# load_model reads format 3 through this module: hpo.deploy imports it, so whoever imports
# hpo.deploy.model (or anything under hpo.deploy) has it registered
FORMAT_LOADERS[ENSEMBLE_MODEL_FORMAT] = ensemble_families
