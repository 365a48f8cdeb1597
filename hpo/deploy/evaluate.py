"""Score an exported model on a labeled split of a dataset root.

Per graph: Kendall's tau (layout collections), the top-5 tile score (tile:xla) and the
top-1/5/10 errors (all collections). Per collection: the means of those over its graphs that
carry a ranking (a graph with one config, or whose runtimes are all equal, scores the same
whatever the prediction: :func:`hpo.data.runtimes.carries_ranking`; it is listed under
``unranked``), where ``metric`` is the collection's competition metric; overall: the
leaderboard score (plain mean of the collection metrics) and the mean top-k errors over
collections. Graph files are streamed one
at a time through :meth:`hpo.deploy.model.ExportedModel.predict_file`, so memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpo.data.load import SPLITS, collection_dir, list_graphs
from hpo.data.runtimes import carries_ranking
from hpo.deploy.model import ExportedModel, ProgressFn
from hpo.errors import UsageError
from hpo.ranking.scoring.metrics import collection_metric, metric_name, overall_score, topk_error

__all__ = ["TOP_K", "evaluate_model", "graph_metrics", "model_collections"]

TOP_K = (1, 5, 10)


def graph_metrics(collection: str, scores: np.ndarray, runtime: np.ndarray) -> dict[str, float]:
    """Metrics of one graph: ``metric`` (the collection's), tau or tile score, top-k errors."""
    name = metric_name(collection)
    out = {name: collection_metric(collection, scores, runtime)}
    out["metric"] = out[name]
    for k in TOP_K:
        out[f"top{k}_error"] = topk_error(scores, runtime, k)
    return out


def model_collections(
    model: ExportedModel, data_root: Path | str, split: str, collections: Sequence[str] | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The collections to process, checked against the model and the data root.

    Without ``collections`` the model's collections that ``data_root`` holds for ``split`` are
    served and the others returned as absent (a root may hold only some collections, as the
    real fixtures do); collections asked for by name must all be there.

    Returns
    -------
    tuple of (tuple of str, tuple of str)
        The collections to process and the model's collections absent from the data root.

    Raises
    ------
    UsageError
        If the model does not serve a requested collection, the split is unknown, a requested
        collection's folder for ``split`` is missing, or the root holds none of the model's.
    """
    if split not in SPLITS:
        raise UsageError(f"unknown split '{split}' (expected one of {', '.join(SPLITS)})")
    wanted = tuple(collections) if collections else model.collections
    present: list[str] = []
    absent: list[str] = []
    for c in wanted:
        model.family_model(c)
        folder = collection_dir(Path(data_root), c, split)
        if folder.is_dir():
            present.append(c)
        elif collections:
            raise UsageError(
                f"{data_root}: no {c} {split} data (missing folder {folder}); the model "
                f"serves {', '.join(model.collections)}"
            )
        else:
            absent.append(c)
    if not present:
        raise UsageError(
            f"{data_root}: no {split} data for any collection the model serves "
            f"({', '.join(model.collections)}; expected folders like "
            f"{collection_dir(Path(data_root), wanted[0], split)})"
        )
    return tuple(present), tuple(absent)


def evaluate_model(
    model: ExportedModel,
    data_root: Path | str,
    split: str = "valid",
    collections: Sequence[str] | None = None,
    *,
    cache_dir: Path | str | None = None,
    progress: ProgressFn | None = None,
) -> dict[str, Any]:
    """Score ``model`` on every labeled graph of ``split`` under ``data_root``.

    Parameters
    ----------
    model
        A loaded model folder.
    data_root
        Dataset root.
    split
        Split to score (must be labeled; the test split is not).
    collections
        Collections to score (default: every collection the model serves that ``data_root``
        holds; the others are listed under ``absent``).
    cache_dir
        Feature cache (``None``: extract without caching).
    progress
        ``progress(done, total, label)`` after each graph.

    Returns
    -------
    dict
        ``split``, ``data_root``, ``model``, ``collections`` ({collection: {"metric",
        "kendall_tau" or "tile_score", "top1_error", "top5_error", "top10_error",
        "graphs"}}), ``overall`` ({"score", "top1_error", ...}) and ``graphs`` (one row per
        graph with its collection, stem, configs, metrics and ``ranked``), ``unranked`` (the
        ``collection/stem`` of the graphs left out of the means) and ``absent`` (the model's
        collections the root does not hold, when ``collections`` is not given).

    Raises
    ------
    UsageError
        If a requested collection is missing from the data root or not served by the model,
        the root holds none of the model's collections, or a collection has no labeled graph
        that carries a ranking in ``split``.
    """
    root = Path(data_root)
    wanted, absent = model_collections(model, root, split, collections)
    files = [(c, p) for c in wanted for p in list_graphs(root, c, split)]
    cache = Path(cache_dir) if cache_dir is not None else None
    rows: list[dict[str, Any]] = []
    for i, (collection, path) in enumerate(files):
        pred = model.predict_file(path, collection, cache_dir=cache)
        if pred.labeled:
            rows.append(
                {
                    "collection": collection,
                    "stem": path.stem,
                    "configs": int(pred.scores.size),
                    **graph_metrics(collection, pred.scores, pred.target),
                    "ranked": carries_ranking(pred.target),
                }
            )
        if progress is not None:
            progress(i + 1, len(files), f"{collection} {path.name}")
    per_collection: dict[str, dict[str, Any]] = {}
    for collection in wanted:
        labeled = [r for r in rows if r["collection"] == collection]
        these = [r for r in labeled if r["ranked"]]
        if not these:
            why = (
                "test labels are placeholders; evaluate on valid or train"
                if split == "test"
                else "every file's runtimes are 0, the placeholders of an unlabeled split"
                if not labeled
                else f"each of its {len(labeled)} has one config or runtimes all equal, "
                "which no prediction can order"
            )
            raise UsageError(f"{root}: no labeled {collection} graphs in split '{split}' ({why})")
        keys = [k for k in these[0] if k not in ("collection", "stem", "configs", "ranked")]
        summary: dict[str, Any] = {k: float(np.mean([r[k] for r in these])) for k in keys}
        summary["graphs"] = len(these)
        per_collection[collection] = summary
    overall: dict[str, Any] = {
        "score": overall_score({c: v["metric"] for c, v in per_collection.items()})
    }
    for k in TOP_K:
        key = f"top{k}_error"
        overall[key] = float(np.mean([v[key] for v in per_collection.values()]))
    overall["graphs"] = sum(v["graphs"] for v in per_collection.values())
    return {
        "split": split,
        "data_root": str(root),
        "model": str(model.path),
        "collections": per_collection,
        "overall": overall,
        "graphs": rows,
        "unranked": [f"{r['collection']}/{r['stem']}" for r in rows if not r["ranked"]],
        "absent": list(absent),
    }
