"""Stage 5, campaigns: SMAC runs the objective and the run folder is written as it goes.

Here are a new campaign's settings (:class:`CampaignConfig`, saved in ``campaign.json``; the
readers of a recorded run take them from :class:`hpo.runs.settings.RunSettings`), the target
function (:mod:`~hpo.campaign.objective`), SMAC's assembly per optimizer
(:mod:`~hpo.campaign.facades`, :mod:`~hpo.campaign.intensifiers`,
:mod:`~hpo.campaign.runners`, :mod:`~hpo.campaign.smac_state`), per-subset and warm-started
runs, and the live progress view. Search spaces live in :mod:`hpo.ranking.spaces`.

Only those four SMAC modules import SMAC, and :func:`run_campaign` imports them when a
campaign starts: importing this package (settings, objective, progress) loads neither SMAC
nor Dask.
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
