"""A notebook API mirroring the command line.

>>> from hpo import api
>>> run = api.load_run("demo")                       # hpo runs show demo
>>> api.plot_run(run, "demo.png")                    # hpo runs plot demo
>>> api.export_model(run, "models/demo")             # hpo export demo
>>> api.export_model(run, "models/x", options=api.ExportOptions(n_threads=4))
>>> model = api.load_model("models/demo")
>>> api.evaluate_model(model, "data")["overall"]     # hpo evaluate --model ... --data data
>>> api.rank_graph(model, "data/npz/tile/xla/test/x.npz", "tile:xla")[:5]
>>> api.write_submission(model, "data", "submission.csv")   # hpo predict ...

Plotting imports matplotlib only when a figure is drawn.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hpo.deploy.evaluate import evaluate_model
from hpo.deploy.explain import Explanation, explain_configs
from hpo.deploy.export import export_model
from hpo.deploy.model import ExportedModel, load_model
from hpo.deploy.predict import write_submission
from hpo.deploy.retrain import ExportOptions
from hpo.runs.views.history import RunHistory, load_run
from hpo.runs.views.importance import Importance, hyperparameter_importance
from hpo.runs.views.nested import RunSummary, list_runs
from hpo.runs.views.plots import plot_compare, plot_run

__all__ = [
    "ExportOptions",
    "ExportedModel",
    "Explanation",
    "Importance",
    "RunHistory",
    "RunSummary",
    "evaluate_model",
    "explain_configs",
    "export_model",
    "hyperparameter_importance",
    "list_runs",
    "load_model",
    "load_run",
    "plot_compare",
    "plot_run",
    "rank_graph",
    "write_submission",
]


def rank_graph(
    model: ExportedModel | Path | str,
    path: Path | str,
    collection: str,
    *,
    cache_dir: Path | str | None = None,
) -> np.ndarray:
    """Config indices of one graph file, predicted fastest first.

    Parameters
    ----------
    model
        A loaded model or the path of a model folder.
    path
        A graph ``.npz`` file.
    collection
        Its collection (``tile:xla``, ``layout:xla:default`` ...).
    cache_dir
        Feature cache (``None``: no caching).
    """
    loaded = model if isinstance(model, ExportedModel) else load_model(model)
    cache = Path(cache_dir) if cache_dir is not None else None
    return loaded.rank_graph(path, collection, cache_dir=cache)
