"""The outcome of a campaign, :class:`CampaignResult`, as written to ``result.json``.

Its own module so that the progress view (which prints it) and the campaign (which makes it)
both depend on it, and not on each other.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpo.runs.record.folder import jsonable

__all__ = ["CampaignResult"]


@dataclass(frozen=True, kw_only=True)
class CampaignResult:
    """The outcome of a campaign, as written to ``result.json``.

    With cross-validation, ``score``, ``cost`` and ``metrics`` are the incumbent's means
    over the folds, ``trial`` the fold trial that completed them, and ``folds`` holds each
    fold's ``{"trial", "score", "metrics"}``.
    """

    run_dir: Path
    incumbent: dict[str, Any] | None
    trial: int | None
    cost: float | None
    score: float | None
    metrics: dict[str, Any]
    budget: float | None
    n_trials: int
    n_crashed: int
    finished: float
    folds: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON content of ``result.json``."""
        out = {f.name: jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)}
        del out["run_dir"]
        return out
