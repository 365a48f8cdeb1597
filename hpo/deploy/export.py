"""Model folders: ship a run's incumbent, exactly as it was scored, or retrained on request.

A model folder ``models/<name>/`` holds

- ``model.json``: feature spec and ``FEATURE_VERSION``, hyperparameters, collections served,
  per family its model file and feature columns, boosting rounds, ``source`` (``copied`` or
  ``retrained``), the validation metrics of the exported model (computed at export), the
  run's recorded incumbent metrics, the training data fingerprint, package versions and the
  creation time;
- ``tile.txt`` / ``layout.txt``: one LightGBM text model per family the collections need.

By default the incumbent's boosters are *copied* from the run's booster store
(:mod:`hpo.runs.record.boosters`): the model that ships is the model that was scored, at the budget
it was validated at (the campaign's largest budget, where the incumbent is chosen; see
:mod:`hpo.runs.incumbent`). Retraining would not give it back: when a trial continued a
lower-budget booster, its new rounds drew their column, row and ``rank_xendcg`` samples
from streams LightGBM started again (seeded from the seed and the rounds done since
:func:`hpo.ranking.model.lightgbm_adapter.continued_seeds`; restarted from the seed before), not
from where a straight training's streams would be, and
for two trials in ``docs/benchmarks.md`` a fresh training moved the score by more than 0.05. The
copy's validation metrics therefore equal the trial's recorded ones (``model.json`` keeps
both and their largest difference; a run scored by an older layout metric, named in
``run_layout_metric``, differs where a model tied configs): they are computed on the valid
rows the trials were scored on, which with a valid cap (``valid_configs``) is the run's
uniform sample of each layout graph's configs; ``hpo evaluate`` scores every config, an
unbiased estimate of the same figure that differs from it by that sample's noise.

On request (``retrain=True``, implied by training on ``train+valid``) the incumbent is
trained again from scratch with the run's feature spec and fidelity settings: with the
``rounds`` fidelity for as many rounds as its budget, with ``configs`` on every training
config at the run's ``fixed_rounds``; the trial's seed is reused. The learned prior is fitted
again on the rows trained on, and blended at the shares its trial chose on graphs it had not
seen (:func:`hpo.deploy.scored.scored_blend_shares`; a cross-validated run's, its folds'
combined), not chosen again on valid graphs that ``train+valid`` trains on. Each family's
``prior_shares`` in ``model.json`` says which (``trial``, ``folds``, or ``valid`` where none
are usable: recorded before trials kept them, or edited by hand into something else).

A cross-validated run (``hpo run --cv K``) is always retrained, on every labeled graph
(train+valid, the graphs its folds were drawn from), at the largest budget: each of its
trials trained on K-1 folds and kept no booster, and the score that chose the incumbent is
a mean over folds, not the score of one model. ``model.json`` records ``cv`` (the folds);
its validation metrics are on valid, which was trained on (``in_training``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hpo.deploy.model import (
    MODEL_FILE,
    MODEL_FORMAT,
    load_model,
)
from hpo.deploy.model_files import write_model_file
from hpo.deploy.out_folder import (
    check_out_dir,
    folder_beside,
    install_model_folder,
    writing_out,
)
from hpo.deploy.retrain import TRAIN_SPLITS, ExportOptions, train_families
from hpo.deploy.scored import copy_scored_boosters, score_on_run_rows, scored_blend_shares
from hpo.deploy.subsets import (
    Member,
    data_provenance,
    subsets_meta,
    validation_entry,
)
from hpo.errors import ConfigError, UsageError
from hpo.features import FeatureSpec
from hpo.runs.record.boosters import budget_size, trial_budget, write_booster
from hpo.runs.views.history import RunHistory, Trial
from hpo.runs.views.nested import AnyRun, as_run

__all__ = ["export_model", "export_rounds", "run_folds"]


def _parse_train_on(train_on: Sequence[str] | str) -> tuple[str, ...]:
    parts = tuple(train_on.split("+")) if isinstance(train_on, str) else tuple(train_on)
    if parts not in (("train",), ("train", "valid"), ("valid", "train")):
        raise UsageError(
            f"train_on must be ('train',) or ('train', 'valid'), found {'+'.join(parts)}"
        )
    return tuple(s for s in TRAIN_SPLITS if s in parts)


def export_rounds(run: RunHistory, budget: float | None) -> int:
    """Boosting rounds of the exported model.

    ``rounds`` fidelity: the budget at which the incumbent was validated. Hyperband and
    successive halving campaigns pick their incumbent at the largest budget, so this is the
    campaign's ``max_budget``; a campaign too short for any configuration to reach it exports
    at the budget its best trial was scored at, never at one no trial tried (more rounds of a
    high learning rate can overfit). Without an incumbent budget: ``max_budget``.
    ``configs`` fidelity: every training config at the objective's fixed rounds.
    """
    if run.fidelity == "configs":
        return run.settings.fixed_rounds
    return budget_size(trial_budget(budget, run.settings.max_budget))


def run_folds(run: AnyRun) -> int:
    """The cross-validation folds of a run (``cv`` in ``campaign.json``), 0 without."""
    return run.settings.cv


def export_model(
    run: AnyRun | Path | str,
    out_dir: Path | str,
    *,
    retrain: bool = False,
    train_on: Sequence[str] | str = ("train",),
    options: ExportOptions | None = None,
) -> Path:
    """Write a model folder of a run's incumbent: its scored boosters, or retrained ones.

    A per-subset run (``hpo run --per ...``) gives one folder (model format 2) holding each
    subset's incumbent boosters, with its own hyperparameters, rounds and feature columns,
    under ``<subset>/``; ``evaluate`` and ``predict`` route each graph to its subset's.

    Parameters
    ----------
    run
        A loaded run (single or per-subset), or the path of a run folder.
    out_dir
        The model folder to write (an earlier model folder there is replaced).
    retrain
        Train the incumbent again instead of copying the boosters it was scored with
        (always, for a cross-validated run).
    train_on
        ``("train",)`` or ``("train", "valid")`` (also ``"train+valid"``, which implies
        ``retrain``; a cross-validated run always trains on both). Validation metrics are
        always computed on valid, so they are optimistic when valid is trained on.
    options
        Dataset root and feature cache (default: the run's), threads, extraction processes
        and progress (:class:`~hpo.deploy.retrain.ExportOptions`).

    Returns
    -------
    Path
        ``out_dir``.

    Raises
    ------
    UsageError
        If the run (or a subset) has no successful trial, the incumbent's boosters are not
        in the run (and ``retrain`` is off), or ``out_dir`` is a non-empty non-model folder.
    """
    history = as_run(run)
    folds = run_folds(history)
    splits = TRAIN_SPLITS if folds else _parse_train_on(train_on)  # cv: every labeled graph
    retrain = retrain or bool(folds) or splits != ("train",)
    out = Path(out_dir)
    with writing_out(out):
        check_out_dir(out)
        members = history.members
        how = (options or ExportOptions()).for_run(history.settings)
        root, progress = how.root, how.progress
        spec = next(iter(members.values())).settings.features
        with folder_beside(out) as tmp:
            written = {
                prefix: _write_member(
                    member, tmp, prefix, spec, retrain=retrain, splits=splits, options=how
                )
                for prefix, member in members.items()
            }
            meta, recorded = history.by_kind(  # model format 1, or 2: one member per subset
                lambda one: (
                    _model_meta(one, written[""], spec, splits, root, retrain),
                    written[""].inc.metrics,
                ),
                lambda per: (subsets_meta(per, written, spec, splits, root, retrain), per.metrics),
            )
            if folds:
                meta["cv"] = folds
            write_model_file(tmp / MODEL_FILE, meta)
            if retrain:
                metrics = {c: v for w in written.values() for c, v in (w.metrics or {}).items()}
            else:  # score the copy on the rows its trials were scored on: it must match exactly
                if progress is not None:
                    progress(0, 1, "scoring the copied boosters on valid")
                model = load_model(tmp)
                metrics = {}
                for member in members.values():
                    metrics.update(score_on_run_rows(model, member, spec, how))
            meta["validation"] = validation_entry(
                metrics,
                recorded,
                in_training="valid" in splits,
                older_metric=history.older_layout_metric,
            )
            write_model_file(tmp / MODEL_FILE, meta)
        install_model_folder(tmp, out)
    return out


def _write_member(
    history: RunHistory,
    tmp: Path,
    prefix: str,
    spec: FeatureSpec,
    *,
    retrain: bool,
    splits: tuple[str, ...],
    options: ExportOptions,
) -> Member:
    """Put one run's incumbent boosters into ``tmp/<prefix>`` (copied or retrained)."""
    inc = history.incumbent
    if inc is None:
        if history.successful:  # only cross-validation leaves no incumbent then
            raise UsageError(
                f"run '{history.name}': no configuration was scored on every fold yet; resume "
                "it with a higher --trials or --walltime, then export"
            )
        raise UsageError(f"run '{history.name}' has no successful trial to export")
    seed = inc.seed if inc.seed is not None else history.settings.seed
    top = history.settings.max_budget
    if inc.budget is not None and inc.budget > top * 1.000001:
        raise ConfigError(  # a hand-edited log: it would name a booster of 1e308 rounds
            f"{history.path / 'trials.jsonl'}: trial {inc.trial} has budget {inc.budget:g}, "
            f"above the campaign's max_budget {top:g}"
        )
    rounds = export_rounds(history, inc.budget)
    folder = tmp / prefix
    folder.mkdir(parents=True, exist_ok=True)
    metrics: dict[str, float] | None = None
    if retrain:
        shares = scored_blend_shares(history, inc, seed)
        trained = train_families(
            history.collections,
            inc.config,
            spec,
            rounds=rounds,
            seed=seed,
            splits=splits,
            caps=history.settings.caps,  # the rows it was tuned on
            options=options,
            blend_shares=shares,
        )
        families: dict[str, dict[str, Any]] = {}
        for family, booster in trained.boosters.items():
            write_booster(booster, folder / f"{family}.txt")
            families[family] = {
                "file": f"{family}.txt",
                "columns": trained.columns[family],
                "training_rows": trained.rows[family],
            }
            if family in trained.priors:
                families[family]["prior"] = trained.priors[family]
                families[family]["prior_shares"] = _shares_origin(history, family in shares)
        metrics = trained.metrics
    else:
        families = copy_scored_boosters(history, inc, seed, spec, folder)
    name_files(families, tmp, prefix)
    return Member(inc, families, rounds, seed, metrics)


def _shares_origin(history: RunHistory, kept: bool) -> str:
    """Where a retrained family's blend shares come from, as ``model.json`` records it:
    ``trial`` (the incumbent's, kept), ``folds`` (its folds' combined) or ``valid`` (chosen
    again on the valid graphs, which a ``train+valid`` model trained on)."""
    if not kept:
        return "valid"
    return "folds" if run_folds(history) else "trial"


def name_files(families: dict[str, dict[str, Any]], tmp: Path, prefix: str) -> None:
    """Name each family's model file as ``model.json`` records it: its path in the model
    folder ``tmp`` (the member's files are under ``prefix``) and its checksum."""
    for entry in families.values():
        entry["file"] = f"{prefix}{entry['file']}"
        entry["sha256"] = hashlib.sha256((tmp / entry["file"]).read_bytes()).hexdigest()


def _model_meta(
    history: RunHistory,
    member: Member,
    spec: FeatureSpec,
    splits: tuple[str, ...],
    root: Path,
    retrain: bool,
) -> dict[str, Any]:
    """``model.json`` without its validation entry."""
    return {
        "format": MODEL_FORMAT,
        "feature_version": spec.version,  # of the run: its columns are named below
        "feature_spec": spec.to_dict(),
        "hyperparameters": member.inc.config,
        "collections": list(history.collections),
        "families": member.families,
        "source": "retrained" if retrain else "copied",
        "rounds": member.rounds,
        "seed": member.seed,
        "fidelity": history.fidelity,
        "train_on": list(splits) if retrain else ["train"],
        **provenance(history, member.inc, root),
    }


def provenance(history: RunHistory, inc: Trial, root: Path) -> dict[str, Any]:
    """The keys of ``model.json`` that say where a model comes from (formats 1 and 3).

    The run and trial it was scored as, then :func:`~hpo.deploy.subsets.data_provenance`.
    """
    return {
        "run": {
            "name": history.name,
            "path": str(history.path.absolute()),
            "optimizer": history.optimizer,
            "trial": inc.trial,
            "budget": inc.budget,
            "metrics": inc.metrics,
            "score": inc.score,
        },
        **data_provenance(history, root),
    }
