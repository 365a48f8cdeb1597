"""Stage 5, campaigns: SMAC runs the objective and the run folder is written as it goes.

The package is cut by concept:

- here: the settings (:class:`CampaignConfig`, saved in ``campaign.json``; the readers of a
  recorded run take them from :class:`hpo.runs.record.settings.RunSettings`), the target function
  (:mod:`~hpo.campaign.objective`), the optimizer table (:mod:`~hpo.campaign.optimizers`), the
  live progress view and the result;
- :mod:`hpo.campaign.smac`: SMAC's assembly per optimizer, its intensifiers, runners and saved
  state; SMAC's private names are used in :mod:`hpo.campaign.smac.adapter` only;
- :mod:`hpo.campaign.seeding`: warm starts and the local initial design;
- :mod:`hpo.campaign.lifecycle`: launch, preflight, the SMAC loop, per-subset runs, extend and
  finish.

``OPTIMIZERS`` is a view of the optimizer table, read when asked for. Search spaces live in
:mod:`hpo.ranking.spaces`. Importing this package (settings, objective, progress) loads neither
SMAC nor Dask.
"""

from __future__ import annotations

from typing import Any

from hpo.campaign.config import (
    FIDELITIES,
    FIDELITY_BUDGETS,
    CampaignConfig,
    SavedCampaign,
    read_campaign,
)
from hpo.campaign.lifecycle.launch import run_campaign
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
    "SavedCampaign",
    "read_campaign",
    "run_campaign",
]


def __getattr__(name: str) -> Any:
    if name == "OPTIMIZERS":
        return offered_optimizers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
