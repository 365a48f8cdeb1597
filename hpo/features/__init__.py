"""Feature extraction: one tabular row per (graph, configuration)."""

from __future__ import annotations

from hpo.features.layout.extract import extract_layout_features, layout_feature_names
from hpo.features.layout.op_class import is_prior_only
from hpo.features.relative import relative_features
from hpo.features.sampling import SampleCaps, SampleRule
from hpo.features.spec import FEATURE_VERSION, READABLE_VERSIONS, FeatureSpec
from hpo.features.table.build import ExtractOptions, build_tables
from hpo.features.table.feature_table import (
    FeatureTable,
    GraphRef,
    by_family,
    extract_file,
    extract_layout_blocks,
    extract_rows,
    extracted_names,
    extraction_jobs,
    family_of,
    feature_names,
)
from hpo.features.table.rows import GraphRows
from hpo.features.tile import extract_tile_features, tile_feature_names

__all__ = [
    "FEATURE_VERSION",
    "READABLE_VERSIONS",
    "ExtractOptions",
    "FeatureSpec",
    "FeatureTable",
    "GraphRef",
    "GraphRows",
    "SampleCaps",
    "SampleRule",
    "build_tables",
    "by_family",
    "extract_file",
    "extract_layout_blocks",
    "extracted_names",
    "extract_rows",
    "extract_layout_features",
    "extract_tile_features",
    "extraction_jobs",
    "family_of",
    "feature_names",
    "is_prior_only",
    "layout_feature_names",
    "relative_features",
    "tile_feature_names",
]
