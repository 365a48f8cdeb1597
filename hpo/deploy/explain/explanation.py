"""Why a model ranks config A of a graph before or after config B (``hpo explain``).

Two answers, both about the model's trees (the score a booster gives, lower = predicted
faster; a model that blends a learned prior adds it after, :class:`Explanation` says how much):

- which feature groups move the two scores apart: LightGBM's per-feature contributions of
  each row (``pred_contrib``, SHAP values of the trees, which add up to the raw score), summed
  by feature group (:mod:`hpo.features.groups`);
- for a layout graph, which nodes do (:mod:`hpo.deploy.explain.counterfactual`): config A with
  one node at a time taking B's layout, largest move first, and the first three together.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from hpo.data.load import is_layout, list_graphs
from hpo.deploy.explain.counterfactual import NodeEffect, node_effects, switched_together
from hpo.deploy.model import ExportedModel
from hpo.errors import UsageError
from hpo.features import extract_file, family_of, feature_names
from hpo.features.groups import group_of

__all__ = ["TOGETHER", "Explanation", "GroupEffect", "explain_configs", "find_graph"]

#: How many of the first-named nodes are also switched together.
TOGETHER = 3


@dataclass(frozen=True)
class GroupEffect:
    """A feature group's contribution to B's trees score minus A's (positive: it makes B
    predicted slower than A), with its contribution to each."""

    group: str
    a: float
    b: float

    @property
    def difference(self) -> float:
        """Contribution to B minus contribution to A."""
        return self.b - self.a


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain_configs` finds for configs ``a`` and ``b`` of one graph.

    ``score_*`` are the trees' scores (lower = predicted faster), ``model_score_*`` the
    model's own (with its prior's blend, standardized over the graph's configs) and
    ``rank_*`` each config's place in the model's order of the graph (0 = predicted fastest;
    configs of one model score share the first place of their tie, :attr:`tied`);
    ``runtime_*`` the measured runtimes when the file is labeled: in ns for layout, over
    the default tiling's runtime (the file's normalizer) for tile. ``nodes`` is ``None`` for
    a tile graph; ``together`` is the move of A's score when the first :data:`TOGETHER`
    nodes take B's layout at once.
    """

    path: Path
    collection: str
    a: int
    b: int
    score_a: float
    score_b: float
    model_score_a: float
    model_score_b: float
    rank_a: int
    rank_b: int
    n_configs: int
    runtime_a: float | None
    runtime_b: float | None
    groups: list[GroupEffect]
    nodes: list[NodeEffect] | None = None
    together: float | None = None
    together_nodes: list[int] = field(default_factory=list)

    @property
    def difference(self) -> float:
        """B's trees score minus A's (positive: B predicted slower)."""
        return self.score_b - self.score_a

    @property
    def tied(self) -> bool:
        """Whether the model gives A and B the same score: no order between them is predicted."""
        return self.model_score_a == self.model_score_b


def find_graph(model: ExportedModel, root: Path, stem: str) -> tuple[Path, str]:
    """The file of graph ``stem`` under ``root`` in a collection the model serves, and that
    collection (valid first, then test, then train).

    Raises
    ------
    UsageError
        If no collection of the model has such a graph.
    """
    for split in ("valid", "test", "train"):
        for collection in model.collections:
            try:
                paths = list_graphs(root, collection, split)
            except UsageError:
                continue  # the root holds no such split of that collection
            for path in paths:
                if path.stem == stem:
                    return path, collection
    raise UsageError(
        f"no graph '{stem}' under {root} in the model's collections "
        f"({', '.join(model.collections)})"
    )


def explain_configs(
    model: ExportedModel,
    root: Path | str,
    stem: str,
    a: int,
    b: int,
    *,
    cache_dir: Path | None = None,
) -> Explanation:
    """Explain the model's order of configs ``a`` and ``b`` of graph ``stem`` (indices in the
    file, as ``predict`` ranks them).

    Raises
    ------
    UsageError
        If the graph is not found or an index is out of range.
    """
    path, collection = find_graph(model, Path(root), stem)
    fam = model.family_model(collection)
    X, target, _, labeled, _ = extract_file(path, collection, model.spec, cache_dir)
    for i in (a, b):
        if not 0 <= i < X.shape[0]:
            raise UsageError(f"{path}: config {i} out of range (it has {X.shape[0]} configs)")
    full = fam.predict(X)
    contrib = -np.asarray(fam.booster.predict(X[[a, b]][:, fam.columns], pred_contrib=True))
    every = feature_names(family_of(collection), model.spec)
    names = [every[i] for i in fam.columns]
    by_group: dict[str, list[float]] = {}
    for j, name in enumerate(names):
        acc = by_group.setdefault(group_of(name) or "ungrouped", [0.0, 0.0])
        acc[0] += float(contrib[0, j])
        acc[1] += float(contrib[1, j])
    groups = [GroupEffect(g, va, vb) for g, (va, vb) in by_group.items()]
    groups.sort(key=lambda g: -abs(g.difference))
    explanation = Explanation(
        path=path,
        collection=collection,
        a=a,
        b=b,
        score_a=float(contrib[0].sum()),
        score_b=float(contrib[1].sum()),
        model_score_a=float(full[a]),
        model_score_b=float(full[b]),
        rank_a=int(np.count_nonzero(full < full[a])),  # a tie: no order, one place
        rank_b=int(np.count_nonzero(full < full[b])),
        n_configs=int(X.shape[0]),
        runtime_a=float(target[a]) if labeled else None,
        runtime_b=float(target[b]) if labeled else None,
        groups=groups,
    )
    if not is_layout(collection):
        return explanation
    _, _, nodes = node_effects(fam, path, collection, model.spec, a, b)
    first = [n.position for n in nodes[:TOGETHER]]
    together = switched_together(fam, path, collection, model.spec, a, b, first) if first else 0.0
    return replace(explanation, nodes=nodes, together=together, together_nodes=first)
