"""Stage 5, deployment: model folders (export and load), evaluation on a split and the
competition's submission file.

It reads run folders (:mod:`hpo.runs`) and trains through :mod:`hpo.ranking`; it never
imports the campaign stage, so a model can be served without SMAC.
"""

from __future__ import annotations

from hpo.deploy.ensemble import (
    export_ensemble,
)
from hpo.deploy.evaluate import (
    TOP_K,
    evaluate_model,
    graph_metrics,
    model_collections,
)
from hpo.deploy.explain import (
    Explanation,
    explain_configs,
)
from hpo.deploy.export import (
    export_model,
    export_rounds,
)
from hpo.deploy.model import (
    MODEL_FILE,
    ExportedModel,
    FamilyModel,
    GraphPrediction,
    ProgressFn,
    load_model,
)
from hpo.deploy.predict import (
    DEFAULT_TOP_K,
    HEADER,
    format_row,
    submission_id,
    write_submission,
)
from hpo.deploy.retrain import (
    ExportOptions,
)

__all__ = [
    "DEFAULT_TOP_K",
    "ExportOptions",
    "ExportedModel",
    "Explanation",
    "FamilyModel",
    "GraphPrediction",
    "HEADER",
    "MODEL_FILE",
    "ProgressFn",
    "TOP_K",
    "evaluate_model",
    "explain_configs",
    "export_ensemble",
    "export_model",
    "export_rounds",
    "format_row",
    "graph_metrics",
    "load_model",
    "model_collections",
    "submission_id",
    "write_submission",
]
