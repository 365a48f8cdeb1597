"""hpo: tune learned runtime models for ML compilers (TpuGraphs) with SMAC3.

The stable public API is listed in ``__all__``. Names are imported lazily on first use, so
``import hpo`` stays cheap and heavy dependencies (SMAC, LightGBM, Dask, matplotlib) load
only where they are needed.
"""

from __future__ import annotations

import importlib
from typing import Any

from hpo.errors import ConfigError, DataFormatError, HpoError, StorageError, UsageError

__version__ = "0.1.0"

_LAZY = {
    # data
    "COLLECTIONS": "hpo.data",
    "list_graphs": "hpo.data",
    "load_layout_graph": "hpo.data",
    "load_tile_graph": "hpo.data",
    "iter_config_chunks": "hpo.data",
    "resolve_collections": "hpo.data",
    "check_dataset": "hpo.data",
    "generate_dataset": "hpo.synth",
    # metrics
    "kendall_tau": "hpo.ranking",
    "tile_score": "hpo.ranking",
    "topk_error": "hpo.ranking",
    "score_collection": "hpo.ranking",
    "overall_score": "hpo.ranking",
    # features, ranker, objective
    "FeatureSpec": "hpo.features",
    "build_tables": "hpo.features",
    "ExtractOptions": "hpo.features",
    "extract_layout_features": "hpo.features",
    "extract_tile_features": "hpo.features",
    "LambdaRanker": "hpo.ranking",
    "ObjectiveSettings": "hpo.campaign",
    "RankerObjective": "hpo.campaign",
    # campaigns
    "load_space": "hpo.ranking",
    "list_spaces": "hpo.ranking",
    "CampaignConfig": "hpo.campaign",
    "run_campaign": "hpo.campaign",
    # after a campaign
    "load_run": "hpo.api",
    "list_runs": "hpo.api",
    "export_model": "hpo.api",
    "ExportOptions": "hpo.api",
    "load_model": "hpo.api",
    "rank_graph": "hpo.api",
    "evaluate_model": "hpo.api",
    "write_submission": "hpo.api",
    "plot_run": "hpo.api",
    "plot_compare": "hpo.api",
    "hyperparameter_importance": "hpo.api",
}

__all__ = [
    "ConfigError",
    "DataFormatError",
    "HpoError",
    "StorageError",
    "UsageError",
    "__version__",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hpo' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
