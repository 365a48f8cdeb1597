"""The rows of one file under a :class:`~hpo.features.sampling.SampleRule`, without the cache.

Layout files are read once: the priority order of the configs is known before reading (it
depends only on the runtimes), so the configs that can end up as rows are featurized as their
chunk streams by, and every config is hashed on the way. Only when merging duplicates pushes
the chosen rows past those candidates is the file streamed a second time, for those rows
alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpo.data.load import LayoutGraph, is_layout, load_layout_graph, load_tile_graph
from hpo.errors import DataFormatError
from hpo.features.layout.extract import extract_layout_features, layout_config_features, layout_rows
from hpo.features.sampling import SampleRule, choose_groups, priority_order
from hpo.features.spec import FeatureSpec
from hpo.features.tile import extract_tile_features

__all__ = ["REFERENCE_CONFIGS", "GraphRows", "extract_graph_rows"]

#: Uniformly drawn configs a biased layout sample takes its relative columns against: about
#: the size of a real layout test graph, whose relative columns are over all its configs.
REFERENCE_CONFIGS = 1000
#: Candidates featurized during the single pass, as a multiple of the cap: room for the
#: duplicates that merging skips before a second pass is needed.
CANDIDATE_FACTOR = 1.5


@dataclass(frozen=True, eq=False)
class GraphRows:
    """The rows of one file: features, target, the config each row stands for, merge counts."""

    X: np.ndarray
    target: np.ndarray
    config_index: np.ndarray
    dup_count: np.ndarray
    labeled: bool
    n_configs: int


def _layout_sampled(
    graph: LayoutGraph, collection: str, spec: FeatureSpec, rule: SampleRule
) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    target = graph.target
    c = graph.n_configs
    order = priority_order(target, rule, graph.path.stem)
    reach = rule.cap if not rule.merge else int(np.ceil(rule.cap * CANDIDATE_FACTOR))
    candidates = order[:reach]
    reference = None
    if rule.biased:
        ref_rng = rule.rng(graph.path.stem, stream=1)
        reference = ref_rng.choice(c, size=min(c, REFERENCE_CONFIGS), replace=False)
        candidates = np.union1d(candidates, reference)
    wanted = np.unique(candidates)
    per_config, hashes = layout_config_features(graph, spec, wanted)
    rep, index, mean_target, dups = choose_groups(order, hashes, target, rule)
    missing = np.setdiff1d(rep, wanted)
    if missing.size:  # heavy duplication pushed the chosen rows past the candidates
        extra, _ = layout_config_features(graph, spec, missing)
        wanted = np.concatenate([wanted, missing])
        per_config = np.concatenate([per_config, extra])
        by_index = np.argsort(wanted, kind="stable")
        wanted, per_config = wanted[by_index], per_config[by_index]
    rows = per_config[np.searchsorted(wanted, rep)]
    ref_rows = None if reference is None else per_config[np.searchsorted(wanted, reference)]
    X = layout_rows(graph, collection, spec, rows, ref_rows)
    return X, (index, mean_target, dups)


def extract_graph_rows(
    path: Path, collection: str, spec: FeatureSpec, rule: SampleRule
) -> GraphRows:
    """Rows of one file under ``rule``: only the kept configs of a layout file are featurized.

    Raises
    ------
    DataFormatError
        If the file is invalid or its features are not finite.
    """
    if is_layout(collection):
        lgraph = load_layout_graph(path)
        target, labeled, c = lgraph.target, lgraph.labeled, lgraph.n_configs
        if rule.samples:
            X, (index, mean_target, dups) = _layout_sampled(lgraph, collection, spec, rule)
        else:
            X_all, hashes = extract_layout_features(lgraph, collection, spec)
            rep, index, mean_target, dups = choose_groups(
                np.arange(c, dtype=np.int64), hashes, target, rule
            )
            X = X_all if rep.size == c else X_all[rep]
    else:
        tgraph = load_tile_graph(path)
        target, labeled, c = tgraph.target, tgraph.labeled, tgraph.n_configs
        X_all, hashes = extract_tile_features(tgraph, collection, spec)
        order = priority_order(target, rule, path.stem) if rule.samples else np.arange(c)
        rep, index, mean_target, dups = choose_groups(order, hashes, target, rule)
        X = X_all if rep.size == c and not rule.samples else X_all[rep]
    if not np.isfinite(X).all():
        raise DataFormatError(f"{path}: features contain NaN/inf (unexpected values in the file)")
    return GraphRows(
        X=np.ascontiguousarray(X, dtype=np.float32),
        target=mean_target,
        config_index=index,
        dup_count=dups,
        labeled=labeled,
        n_configs=c,
    )
