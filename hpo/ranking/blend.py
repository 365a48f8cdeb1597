"""Blend the ranker's scores with the analytical cost estimate, per graph.

Why: on default-collection graphs a config changes one or two nodes, so most configs of a
graph differ by less than the measurement noise and the relevance labels of that bulk are
mostly noise. The trees fit it: on ``hpo data synth`` data the trained ranker ordered unseen
nlp:default graphs *worse* than the one column ``est_log_total_bytes`` alone (0.87-0.89 of the
noise ceiling against 0.95-0.97; bench/README.md, "Blending the cost estimate into the
ranking"). Adding the estimate to the ranker's score keeps what the trees learned (they win on
the random collections) and lets the estimate order the bulk the labels cannot.

The blend works inside one graph, where the ranking is scored: both scores are divided by
their standard deviation over the graph's rows, so ``estimate_weight`` means the same on every
graph whatever its runtime scale and the booster's score range::

    blended = score / std(score) + estimate_weight * estimate / std(estimate)

A per-graph constant shifts no ranking, so nothing is centred. ``estimate_weight`` is a
hyperparameter of the search spaces (0 turns the blend off; absent means 0, as for runs and
models made before it), so a campaign on data where the estimate is wrong can tune it away.
The tile family has no estimate column and is never blended.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hpo.errors import ConfigError

__all__ = ["ESTIMATE_COLUMN", "WEIGHT_KEY", "blend_scores", "estimate_position", "estimate_weight"]

#: The column blended in: the weighted total of the second-order cost estimates (log bytes).
ESTIMATE_COLUMN = "est_log_total_bytes"
#: The hyperparameter holding the blend weight.
WEIGHT_KEY = "estimate_weight"


def estimate_weight(hyperparameters: Mapping[str, Any]) -> float:
    """The blend weight of a hyperparameter mapping (0 when absent).

    Raises
    ------
    ConfigError
        If the weight is not a finite non-negative number.
    """
    value = hyperparameters.get(WEIGHT_KEY, 0.0)
    try:
        weight = float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{WEIGHT_KEY}: expected a number, found {value!r}") from exc
    if not np.isfinite(weight) or weight < 0:
        raise ConfigError(f"{WEIGHT_KEY}: expected a finite number >= 0, found {value!r}")
    return weight


def estimate_position(column_names: Sequence[str]) -> int | None:
    """Index of :data:`ESTIMATE_COLUMN` among a model's columns (``None``: not read)."""
    names = list(column_names)
    return names.index(ESTIMATE_COLUMN) if ESTIMATE_COLUMN in names else None


def _per_graph_std(values: np.ndarray, gid: np.ndarray, n: int) -> np.ndarray:
    """Standard deviation of ``values`` per graph, 1 where a graph does not vary."""
    count = np.maximum(np.bincount(gid, minlength=n), 1)
    mean = np.bincount(gid, values, minlength=n) / count
    var = np.bincount(gid, (values - mean[gid]) ** 2, minlength=n) / count
    std = np.sqrt(var)
    return np.where(std > 1e-12 * np.maximum(np.abs(mean), 1.0), std, 1.0)


def blend_scores(
    scores: np.ndarray,
    estimate: np.ndarray,
    bounds: np.ndarray | None,
    weight: float,
) -> np.ndarray:
    """Scores blended with the estimate inside each graph; lower = predicted faster.

    Parameters
    ----------
    scores
        ``(n,)`` ranker scores, lower = predicted faster.
    estimate
        ``(n,)`` the estimate column of the same rows (higher = more bytes = slower).
    bounds
        Row offsets of the graphs (rows of graph g are ``bounds[g]:bounds[g + 1]``);
        ``None``: all rows are one graph.
    weight
        ``estimate_weight``; 0 returns ``scores`` unchanged.

    Returns
    -------
    numpy.ndarray
        float64 ``(n,)``. Vectorised over graphs (``bincount``), no Python loop.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if weight == 0 or scores.size == 0:
        return scores
    estimate = np.asarray(estimate, dtype=np.float64)
    if estimate.shape != scores.shape:
        raise ConfigError(f"estimate: expected shape {scores.shape}, found {estimate.shape}")
    n = len(scores)
    edges = np.array([0, n]) if bounds is None else np.asarray(bounds, dtype=np.int64)
    n_graphs = len(edges) - 1
    gid = np.repeat(np.arange(n_graphs), np.diff(edges))
    s_scores = _per_graph_std(scores, gid, n_graphs)
    s_est = _per_graph_std(estimate, gid, n_graphs)
    return scores / s_scores[gid] + weight * estimate / s_est[gid]
