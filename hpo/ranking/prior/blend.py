"""Blend the ranker's scores with a cost prior, per graph.

Why: on default-collection graphs a config changes one or two nodes, so most configs of a
graph differ by less than the measurement noise and the relevance labels of that bulk are
mostly noise. The trees fit it: on ``hpo data synth`` data the trained ranker ordered unseen
nlp:default graphs *worse* than the one column ``est_log_total_bytes`` alone (0.87-0.89 of the
noise ceiling against 0.95-0.97; docs/benchmarks.md#the-learned-prior-and-its-weights).
Adding the estimate to the ranker's score keeps what the trees learned (they win on the random
collections) and lets the estimate order the bulk the labels cannot.

The blend works inside one graph, where the ranking is scored: both scores are standardized
over the graph's rows, so ``estimate_weight`` means the same on every graph whatever its
runtime scale and the booster's score range::

    blended = z(score) + estimate_weight * z(estimate),   z(x) = (x - mean(x)) / std(x)

The estimate is the learned prior of :mod:`hpo.ranking.prior.fit` (weights fitted on the train
split); models exported before it blend the column :data:`ESTIMATE_COLUMN`, whose
weights were written by hand, and keep scoring as they did.

``estimate_blend`` (on/off) and ``estimate_weight`` are hyperparameters of the search spaces:
the switch has its own branch, so a campaign reaches "off" with one choice instead of a
weight near the end of a range, and the weight is only searched while it is on.
Absent switch: on when the weight is above 0 (runs and models made before it); absent
weight: 0.

The default layout collections have their own weight, ``estimate_weight_default_collections``
(:data:`DEFAULT_WEIGHT_KEY`, default 27, searched over log 0.1-100; ``estimate_weight`` then
serves the random ones, default 100, searched over log 0.1-1000). Why: a default collection's
configs differ in a node or two, so most of their labels are noise the trees fit, and the two
kinds of collection want different weights over a family of laws
(docs/benchmarks.md#the-learned-prior-and-its-weights).

The tile family has no estimate column and is never blended.

Known limit: with ``--cv K`` a fold also scores train-split graphs on their training sample
(capped per graph, biased to the fastest configs, duplicates merged), whose spread is not a
whole graph's, so a cross-validated campaign tunes the weight on a somewhat different scale
than prediction uses. Hold-out scoring (the default) samples valid graphs uniformly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hpo.errors import ConfigError

__all__ = [
    "BLEND_KEY",
    "DEFAULT_WEIGHT_KEY",
    "SELECT_KEY",
    "ESTIMATE_COLUMN",
    "WEIGHT_KEY",
    "blend_scores",
    "blend_selects",
    "collection_weights",
    "estimate_position",
    "estimate_weight",
    "is_default_collection",
    "standardized",
]

#: The column blended in: the weighted total of the second-order cost estimates (log bytes).
ESTIMATE_COLUMN = "est_log_total_bytes"
#: The hyperparameter holding the blend weight.
WEIGHT_KEY = "estimate_weight"
#: The hyperparameter switching the blend on or off.
BLEND_KEY = "estimate_blend"
#: The blend weight of the default layout collections (``layout:*:default``), where the
#: trees fit more label noise than on the random ones (their configs differ in a node or two),
#: so the prior deserves more weight there. Absent (runs and models made before it, spaces
#: without it): :data:`WEIGHT_KEY`'s weight serves every collection.
DEFAULT_WEIGHT_KEY = "estimate_weight_default_collections"
#: The hyperparameter that keeps a collection's blend only where it scores above the trees
#: alone on the trial's scored graphs, and at a small share of its weight where the two cannot
#: be told apart (:func:`blend_selects`). Absent (runs and models made before it): every
#: collection keeps its blend.
SELECT_KEY = "estimate_blend_select"


def _blend_on(value: Any, key: str = BLEND_KEY) -> bool:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ConfigError(f"{key}: expected true or false, found {value!r}")


def _weight(hyperparameters: Mapping[str, Any], key: str) -> float:
    value = hyperparameters.get(key, 0.0)
    if isinstance(value, bool | str):  # float("3") or float(True) would pass silently
        raise ConfigError(f"{key}: expected a number, found {value!r}")
    try:
        weight = float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{key}: expected a number, found {value!r}") from exc
    if not np.isfinite(weight) or weight < 0:
        raise ConfigError(f"{key}: expected a finite number >= 0, found {value!r}")
    return weight


def is_default_collection(collection: str) -> bool:
    """Whether ``collection`` is a layout collection of the compiler's default search
    (``layout:*:default``), whose configs differ in one or two nodes."""
    return collection.startswith("layout:") and collection.endswith(":default")


def estimate_weight(hyperparameters: Mapping[str, Any], collection: str | None = None) -> float:
    """The blend weight of a hyperparameter mapping: 0 when the switch is off or absent.

    With ``collection`` a default layout collection (:func:`is_default_collection`) and
    :data:`DEFAULT_WEIGHT_KEY` in the mapping, that weight; otherwise :data:`WEIGHT_KEY`'s.
    Without ``collection``: :data:`WEIGHT_KEY`'s.

    Raises
    ------
    ConfigError
        If a weight is not a finite non-negative number, or the switch not a boolean.
    """
    if BLEND_KEY in hyperparameters and not _blend_on(hyperparameters[BLEND_KEY]):
        return 0.0
    weight = _weight(hyperparameters, WEIGHT_KEY)
    if DEFAULT_WEIGHT_KEY in hyperparameters:
        own = _weight(hyperparameters, DEFAULT_WEIGHT_KEY)  # checked whatever the collection
        if collection is not None and is_default_collection(collection):
            return own
    return weight


def blend_selects(hyperparameters: Mapping[str, Any]) -> bool:
    """Whether a configuration keeps the blend of a collection only where it scores above the
    trees alone on the scored graphs, at a share of its weight where the scored graphs cannot
    tell (:data:`SELECT_KEY`; absent: no; :func:`hpo.ranking.scoring.valid.prior_share`).

    Why: a prior fitted on the train split helps where the runtimes follow forms its byte
    totals can add up to, and costs the ranking where they do not; which of the two holds is
    a property of the data, so each trial measures it per collection on the graphs it is
    scored on, and its models rank as it was scored (:meth:`hpo.ranking.prior.learned.
    LearnedPrior.weight_share`: off, at a share, or whole).
    """
    if SELECT_KEY not in hyperparameters:
        return False
    return _blend_on(hyperparameters[SELECT_KEY], SELECT_KEY)


def collection_weights(
    hyperparameters: Mapping[str, Any], collections: Sequence[str]
) -> dict[str, float]:
    """``{collection: blend weight}`` (:func:`estimate_weight` of each)."""
    return {c: estimate_weight(hyperparameters, c) for c in collections}


def estimate_position(column_names: Sequence[str]) -> int | None:
    """Index of :data:`ESTIMATE_COLUMN` among a model's columns (``None``: not read)."""
    names = list(column_names)
    return names.index(ESTIMATE_COLUMN) if ESTIMATE_COLUMN in names else None


def _standardized(values: np.ndarray, gid: np.ndarray, n: int) -> np.ndarray:
    """``values`` minus their graph's mean, over their graph's std (1 where it does not vary).

    Centring changes no ranking; it keeps both terms of the blend near 1 in size, so a graph
    where a few configs differ does not add two numbers of 1e9 that nearly cancel.
    """
    count = np.maximum(np.bincount(gid, minlength=n), 1)
    mean = np.bincount(gid, values, minlength=n) / count
    centred = values - mean[gid]
    std = np.sqrt(np.bincount(gid, centred**2, minlength=n) / count)
    std = np.where(std > 1e-12 * np.maximum(np.abs(mean), 1.0), std, 1.0)
    return centred / std[gid]


def standardized(values: np.ndarray, bounds: np.ndarray | None = None) -> np.ndarray:
    """``values`` z-scored within each graph (``bounds`` as for :func:`blend_scores`; ``None``:
    one graph), the blend's own scaling: an ensemble averages its members' scores on it
    (:mod:`hpo.deploy.ensemble`), so no member dominates by its score range."""
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    edges = np.array([0, n]) if bounds is None else np.asarray(bounds, dtype=np.int64)
    gid = np.repeat(np.arange(len(edges) - 1), np.diff(edges))
    return _standardized(values, gid, len(edges) - 1)


def blend_scores(
    scores: np.ndarray,
    estimate: np.ndarray,
    bounds: np.ndarray | None,
    weight: float | np.ndarray,
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
        ``estimate_weight``, or ``(n_graphs,)`` one per graph (a joint layout model scores
        default and random collections with their own weights); all 0 returns ``scores``
        unchanged.

    Returns
    -------
    numpy.ndarray
        float64 ``(n,)``, each graph's rows centred on its mean (a graph whose own weight is 0
        keeps its scores: the order a model at weight 0 gives). Vectorised over graphs
        (``bincount``), no Python loop.

    Raises
    ------
    ConfigError
        If ``estimate`` has another shape than ``scores``, or ``bounds`` do not cut the rows
        into graphs (start at 0, end at ``n``, never fall).
    """
    scores = np.asarray(scores, dtype=np.float64)
    weights = np.asarray(weight, dtype=np.float64)
    if not np.any(weights) or scores.size == 0:
        return scores
    estimate = np.asarray(estimate, dtype=np.float64)
    if estimate.shape != scores.shape:
        raise ConfigError(f"estimate: expected shape {scores.shape}, found {estimate.shape}")
    n = len(scores)
    edges = np.array([0, n]) if bounds is None else np.asarray(bounds, dtype=np.int64)
    if edges.ndim != 1 or len(edges) < 2 or edges[0] != 0 or edges[-1] != n:
        raise ConfigError(f"bounds: expected offsets from 0 to {n}, found {edges.tolist()}")
    if np.any(np.diff(edges) < 0):
        raise ConfigError(f"bounds: offsets must not fall, found {edges.tolist()}")
    n_graphs = len(edges) - 1
    if weights.ndim and weights.shape != (n_graphs,):
        raise ConfigError(f"weight: expected one per graph ({n_graphs}), found {weights.shape}")
    gid = np.repeat(np.arange(n_graphs), np.diff(edges))
    scale = weights[gid] if weights.ndim else weights
    blended = _standardized(scores, gid, n_graphs) + scale * _standardized(estimate, gid, n_graphs)
    # one weight is > 0 here; per graph, a graph at weight 0 keeps its own scores
    return np.where(scale > 0, blended, scores) if weights.ndim else blended
