"""Stage 5, campaigns: SMAC runs the objective and the run folder is written as it goes.

SMAC is imported by the modules that assemble and run it (``facades``, ``facade_builders``,
``intensifiers``, ``runners``, ``smac_state``, ``smac_adapter``), which the public names here
load on first use; SMAC's private names are used in ``smac_adapter`` only. ``OPTIMIZERS`` is a
view of the optimizer table (:mod:`hpo.campaign.optimizers`), read when asked for.

Here are a new campaign's settings (:class:`CampaignConfig`, saved in ``campaign.json``; the
readers of a recorded run take them from :class:`hpo.runs.settings.RunSettings`), the target
function (:mod:`~hpo.campaign.objective`), SMAC's assembly per optimizer, per-subset and
warm-started runs, and the live progress view. Search spaces live in :mod:`hpo.ranking.spaces`.
Importing this package (settings, objective, progress) loads neither SMAC nor Dask.
"""

from __future__ import annotations

from typing import Any

from hpo.campaign.config import (
    FIDELITIES,
    FIDELITY_BUDGETS,
    CampaignConfig,
    read_campaign,
)
from hpo.campaign.launch import run_campaign
from hpo.campaign.objective import (
    ObjectiveSettings,
    RankerObjective,
    build_objective,
)
from hpo.campaign.optimizers import offered_optimizers
from hpo.campaign.result import (
    CampaignResult,
)

__all__ = [
    "CampaignConfig",
    "CampaignResult",
    "FIDELITIES",
    "FIDELITY_BUDGETS",
    "OPTIMIZERS",
    "ObjectiveSettings",
    "RankerObjective",
    "build_objective",
    "read_campaign",
    "run_campaign",
]


def __getattr__(name: str) -> Any:
    if name == "OPTIMIZERS":
        return offered_optimizers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
