"""The synthetic generator: files in the exact TpuGraphs format with hidden TPU-like cost laws.

The real dataset cannot be downloaded on every machine, so the demo, the tests and the
benchmarks run on data written here. It depends only on :mod:`hpo.data` (the schema).
"""

from __future__ import annotations

from hpo.synth.dataset import (
    SCALES,
    ScaleSpec,
    generate_dataset,
    scale_spec,
)

__all__ = [
    "SCALES",
    "ScaleSpec",
    "generate_dataset",
    "scale_spec",
]
