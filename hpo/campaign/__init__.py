"""Stage 5, campaigns: settings, search spaces, the SMAC target function, SMAC's assembly and
the live progress view.

SMAC itself is imported only by :mod:`hpo.campaign.facades` and :mod:`hpo.campaign.runners`,
which the public names here load on first use.
"""

from __future__ import annotations

from hpo.campaign.config import (
    FIDELITIES,
    FIDELITY_BUDGETS,
    OPTIMIZERS,
    CampaignConfig,
    read_campaign,
)
from hpo.campaign.objective import (
    ObjectiveSettings,
    RankerObjective,
    build_objective,
)
from hpo.campaign.result import (
    CampaignResult,
)
from hpo.campaign.run import (
    run_campaign,
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
