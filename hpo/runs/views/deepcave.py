"""A run written as DeepCAVE (automl/DeepCAVE, the analysis GUI for SMAC runs) reads it:
``hpo runs export NAME --format deepcave --out DIR``.

DeepCAVE reads SMAC3's output folder (``runhistory.json``, ``configspace.json``,
``scenario.json``: its ``SMAC3v2Run`` converter), so that is what is written, one folder per
campaign, named after the run (DeepCAVE names a run by its folder):

- a single campaign: ``DIR/<name>/``;
- a cross-validated one likewise, each configuration's folds combined into one trial (their
  mean, :attr:`~hpo.runs.views.history.RunHistory.scored`): DeepCAVE refuses a runhistory
  with more than one instance, and a fold alone is not what the run scores;
- a per-subset run: ``DIR/<name>-<subset>/`` for each subset that started, each its own
  campaign with its own collections (select them together in DeepCAVE to compare them).

With more than one collection the objectives are the cost (1 - score, what SMAC minimised)
and one cost per collection (``cost <collection>``, 1 - its metric), so DeepCAVE's Pareto
front and per-objective views work; with one collection, the cost alone. A failed trial is
kept (DeepCAVE drops its costs). Nothing here imports DeepCAVE: it needs Python < 3.11, and
hpo does not depend on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hpo.errors import UsageError
from hpo.ownership import check_replaceable
from hpo.runs.incumbent import config_key
from hpo.runs.record.folder import write_json_atomic
from hpo.runs.views.history import RunHistory, Trial
from hpo.runs.views.nested import AnyRun, SubsetRun

__all__ = ["SMAC_STATUS", "export_deepcave", "objective_names"]

#: The files an export writes in a run's folder (:func:`_write`).
_FILES = ("configspace.json", "scenario.json", "runhistory.json")

#: SMAC3's ``StatusType`` values by the status names hpo records.
SMAC_STATUS = {"SUCCESS": 1, "CRASHED": 2, "TIMEOUT": 3, "MEMORYOUT": 4}


def objective_names(collections: tuple[str, ...]) -> list[str]:
    """``["cost"]`` for one collection, else ``["cost", "cost <collection>", ...]``."""
    if len(collections) == 1:
        return ["cost"]
    return ["cost", *(f"cost {c}" for c in collections)]


def _costs(t: Trial, collections: tuple[str, ...]) -> float | list[float | None] | None:
    score = t.score if t.ok else None
    cost = None if score is None else 1.0 - score
    if len(collections) == 1:
        return cost
    each = [None if c not in t.metrics or not t.ok else 1.0 - t.metrics[c] for c in collections]
    return [cost, *each]


def _entry(t: Trial, config_id: int, collections: tuple[str, ...]) -> dict[str, Any]:
    start = t.start if t.start is not None else (t.end or 0.0)
    end = t.end if t.end is not None else start + (t.duration or 0.0)
    info: dict[str, Any] = {"trial": t.trial, "worker": t.worker, "score": t.score}
    info["metrics"] = t.metrics
    if "n_folds" in t.info:
        info.update(folds=t.info["n_folds"], score_std=t.info.get("score_std"))
    if not t.ok:
        info["traceback"] = t.error or t.status
    # the order of the keys is the order SMAC3 writes and DeepCAVE reads them in
    return {
        "config_id": config_id,
        "instance": None,
        "seed": t.seed if t.seed is not None else 0,
        "budget": t.budget,
        "cost": _costs(t, collections),
        "time": t.duration if t.duration is not None else end - start,
        "cpu_time": 0.0,
        "status": SMAC_STATUS.get(t.status, 2) if not t.ok else 1,
        "starttime": start,
        "endtime": end,
        "additional_info": info,
    }


def _exported_run(folder: Path) -> str | None:
    """The run folder an earlier export's ``scenario.json`` records (its ``hpo.run``)."""
    try:
        scenario = json.loads((folder / "scenario.json").read_text(encoding="utf-8"))
        run = scenario["hpo"]["run"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError):
        return None
    return run if isinstance(run, str) else None


def _is_export(folder: Path) -> bool:
    """Whether ``folder`` holds an earlier export and nothing else: only :data:`_FILES`, and
    a ``scenario.json`` naming the run it was written from (a bare ``runhistory.json`` may
    be anyone's)."""
    return (
        folder.is_dir()
        and all(p.name in _FILES and p.is_file() and not p.is_symlink() for p in folder.iterdir())
        and _exported_run(folder) is not None
    )


def _check_folder(folder: Path, run: RunHistory) -> None:
    """Refuse a ``folder`` an export would replace files of, unless an earlier export of
    ``run``: runs of one name (another ``--runs-dir``) share the folder, and one export
    silently replaced the other's (as ``hpo export`` refuses, :mod:`hpo.deploy.out_folder`)."""
    check_replaceable(folder, "--out", kind="DeepCAVE export", owned=_is_export)
    recorded = _exported_run(folder) if folder.is_dir() else None
    if recorded is not None and Path(recorded).resolve() != Path(run.path).resolve():
        raise UsageError(
            f"--out {folder}: holds the DeepCAVE export of run {recorded}; move it or choose "
            "another --out"
        )


def _write(run: RunHistory, folder: Path) -> Path:
    space = run.space
    if space is None:
        raise UsageError(
            f"run '{run.name}': campaign.json holds no search space, which DeepCAVE needs"
        )
    collections = tuple(run.collections)
    # failures first: a success of the same configuration, budget and seed replaces them
    trials = [*run.crashed, *run.scored]
    ids: dict[str, int] = {}
    configs: dict[str, dict[str, Any]] = {}
    origins: dict[str, str] = {}
    data = []
    for t in trials:
        key = config_key(t.config)
        if key not in ids:
            ids[key] = len(ids) + 1
            configs[str(ids[key])] = t.config
            origins[str(ids[key])] = "baseline" if t.baseline else run.optimizer
        data.append(_entry(t, ids[key], collections))
    data.sort(key=lambda d: d["endtime"])
    folder.mkdir(parents=True, exist_ok=True)
    names = objective_names(collections)
    s = run.settings
    scenario = {
        "name": run.name,
        "objectives": names[0] if len(names) == 1 else names,
        "deterministic": True,
        "seed": s.seed,
        "n_trials": len(run.trials),
        "min_budget": s.min_budget,
        "max_budget": s.max_budget,
        "instances": None,
        "hpo": {
            "run": str(Path(run.path).resolve()),
            "optimizer": run.optimizer,
            "fidelity": run.fidelity,
            "collections": list(collections),
            "folds": run.folds,
            "cost": "1 - score (the mean metric over the collections); per collection 1 - metric",
        },
    }
    write_json_atomic(folder / "configspace.json", space)
    write_json_atomic(folder / "scenario.json", scenario)
    history = {"stats": {"submitted": len(data), "finished": len(data), "running": 0},
               "data": data, "configs": configs, "config_origins": origins}  # fmt: skip
    write_json_atomic(folder / "runhistory.json", history)
    return folder


def export_deepcave(run: AnyRun, out: Path | str) -> list[Path]:
    """Write ``run`` under ``out`` as SMAC3 output folders DeepCAVE loads; returns them.

    Raises
    ------
    UsageError
        If the run holds no search space, a per-subset run has no started subset, or a
        folder to write is there and not an earlier export (:mod:`hpo.ownership`).
    """
    root = Path(out)

    def single(one: RunHistory) -> list[tuple[RunHistory, Path]]:
        return [(one, root / one.name)]

    def subsets(per: SubsetRun) -> list[tuple[RunHistory, Path]]:
        return _subsets(per, root)

    folders = run.by_kind(single, subsets)
    for r, folder in folders:  # every one before any is written
        _check_folder(folder, r)
    return [_write(r, folder) for r, folder in folders]


def _subsets(run: SubsetRun, out: Path) -> list[tuple[RunHistory, Path]]:
    """The folder of each started subset, ``<run>-<subset>``."""
    if not run.subsets:
        raise UsageError(f"run '{run.name}': no subset has started, so there is nothing to export")
    return [(sub, out / f"{run.name}-{name}") for name, sub in run.subsets.items()]
