"""A campaign's limits, in one object: :class:`Limits`.

The trials and the walltime are set once, from the campaign's settings (``--trials``,
``--walltime``, raised by an extension), and never rewound. What the campaign *started* with
(before its first extension, ``campaign.json``'s ``extensions``) is what SMAC's scenario
records (:func:`hpo.campaign.smac.facades.make_scenario`): SMAC sizes its initial design from
it, and compares its saved scenario on a resume, so an extended campaign keeps the SMAC folder
it ran with. SMAC's loop stops at :class:`Limits`' own trials and walltime
(:func:`hpo.campaign.smac.adapter.limit_loop`), never at the scenario's. The reserve the
finishing phase keeps (:mod:`hpo.campaign.lifecycle.finish`) is counted here too.
"""

from __future__ import annotations

from dataclasses import dataclass

from hpo.campaign.config import CampaignConfig
from hpo.campaign.optimizers import is_multi_fidelity
from hpo.runs.record.campaign_file import CampaignRecord

__all__ = ["FINISH_SHARE", "Limits"]

#: Largest share of the walltime (or trials) the finishing reserve may take: the search
#: keeps most of the campaign; a quarter was too little in 2-minute campaigns.
FINISH_SHARE = 1 / 3


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The limits of one stretch of a campaign (a start, a resume or an extension).

    Attributes
    ----------
    trials, walltime
        The limits SMAC's loop and the finishing phase run to (``walltime`` in seconds,
        ``None``: none).
    started_trials, started_walltime
        The limits the campaign started with, before any extension: what SMAC's scenario
        records.
    finish
        How many configurations the finishing phase takes to the largest budget: ``--finish``,
        or 0 where every trial already runs at the largest budget (``bo``, ``random``) or
        budgets count folds.
    budget
        The largest budget, where the finishing phase takes them (``None``: not yet set).
    since
        The first ``trials.jsonl`` record of this stretch (the last extension's): the
        finishing phase counts its own trials from there.
    """

    trials: int
    walltime: float | None
    started_trials: int
    started_walltime: float | None
    finish: int
    budget: float | None = None
    since: int = 0

    @classmethod
    def of(cls, cfg: CampaignConfig, record: CampaignRecord | None = None) -> Limits:
        """The limits of ``cfg``, a campaign whose ``campaign.json`` is ``record`` (``None``:
        a new campaign, or one never extended)."""
        extensions = record.extensions if record is not None else ()
        first = extensions[0] if extensions else None
        multi = is_multi_fidelity(cfg.optimizer) and not cfg.cv
        return cls(
            trials=cfg.trials,
            walltime=cfg.walltime,
            started_trials=cfg.trials if first is None else first.trials[0],
            started_walltime=cfg.walltime if first is None else first.walltime[0],
            finish=cfg.finish if multi else 0,
            budget=cfg.max_budget,
            since=extensions[-1].records if extensions else 0,
        )

    @property
    def reserved_trials(self) -> int:
        """The trials kept back for finishing: :attr:`finish`, at most :data:`FINISH_SHARE`
        of :attr:`trials`."""
        return min(self.finish, int(FINISH_SHARE * self.trials))

    @property
    def walltime_cap(self) -> float | None:
        """The most seconds the finishing reserve may take (``None`` without a walltime)."""
        return None if self.walltime is None else FINISH_SHARE * self.walltime
