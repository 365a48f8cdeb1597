"""hpo: tune learned runtime models for ML compilers (TpuGraphs) with SMAC3.

Heavy modules (SMAC, LightGBM, Dask, matplotlib) are imported only where used; the names
below are the stable public API.
"""

from __future__ import annotations

__version__ = "0.1.0"

from hpo.errors import ConfigError, DataFormatError, HpoError, UsageError

__all__ = [
    "ConfigError",
    "DataFormatError",
    "HpoError",
    "UsageError",
    "__version__",
]
