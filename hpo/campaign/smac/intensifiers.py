"""hpo's SMAC intensifiers: the baseline trial first, and successive halving that cannot crash.

Every optimizer's intensifier (:mod:`hpo.campaign.smac.facade_builders` picks one) is SMAC's own
with two additions:

- :class:`BaselineFirst`: the space's default configuration (or a warm start's best) at
  the largest budget is the first trial (one per fold with cross-validation), unless
  SMAC's runhistory or ``trials.jsonl`` already holds it (a resumed run);
- :class:`FullBrackets` (successive halving and Hyperband): full first-stage groups and
  promotions bounded by what a group holds, around a fault of SMAC 2.4 that the baseline
  triggers and that crashed every parallel campaign (docs/ARCHITECTURE.md,
  "SMAC's successive halving and a configuration it already knows").
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ConfigSpace import Configuration
from smac.intensifier import Hyperband, Intensifier
from smac.intensifier.abstract_intensifier import AbstractIntensifier
from smac.runhistory import StatusType, TrialInfo
from smac.runhistory.dataclasses import InstanceSeedBudgetKey
from smac.runhistory.errors import NotEvaluatedError
from smac.utils.pareto_front import calculate_pareto_front, sort_by_crowding_distance

from hpo.campaign.smac.adapter import (
    PromotionHook,
    next_order_seed,
    refresh_intensifier,
    stage_sizes,
    tracker,
)
from hpo.runs.record.trial import Trial

__all__ = [
    "BaselineFirst",
    "CampaignHyperband",
    "CampaignIntensifier",
    "CampaignSuccessiveHalving",
    "FullBrackets",
    "smac_class",
]


def smac_class(obj: Any) -> type:
    """The SMAC class ``obj`` specialises (its own class if it is one of SMAC's)."""
    return next(c for c in type(obj).__mro__ if c.__module__.startswith("smac."))


class BaselineFirst(AbstractIntensifier):
    """Intensifier mixin: yield the baseline trial first, unless SMAC already knows it.

    With instances (cross-validation folds) the baseline is one trial per instance, all
    yielded first. SMAC's meta (compared on resume) keeps naming the SMAC class: the
    algorithm is SMAC's, and runs made before the baseline existed still resume.
    """

    baseline_config: Configuration | None = None
    baseline_budget: float | None = None
    baseline_logged: tuple[Trial, ...] = ()

    def set_baseline(
        self, config: Configuration, budget: float | None, logged: list[Trial]
    ) -> None:
        """Evaluate ``config`` at ``budget`` first; ``logged``: its trials in trials.jsonl."""
        self.baseline_config, self.baseline_budget = config, budget
        self.baseline_logged = tuple(logged)

    @property
    def meta(self) -> dict[str, Any]:  # noqa: D102
        return {**super().meta, "name": smac_class(self).__name__}

    def baseline_known(self, instance: str | None) -> bool:
        assert self.baseline_config is not None
        config_id = self.runhistory.config_ids.get(self.baseline_config)
        return config_id is not None and any(
            k.config_id == config_id and k.budget == self.baseline_budget and k.instance == instance
            for k in self.runhistory
        )

    def restore_logged_baseline(self, instance: str | None) -> bool:
        """Give SMAC the logged baseline result (killed after logging, before SMAC saved)."""
        logged = next((t for t in self.baseline_logged if t.instance == instance), None)
        if logged is None or logged.cost is None or logged.status not in StatusType.__members__:
            return False
        assert self.baseline_config is not None
        self.runhistory.add(
            config=self.baseline_config,
            cost=logged.cost,
            time=logged.duration or 0.0,
            status=StatusType[logged.status],
            instance=instance,
            seed=logged.seed,
            budget=self.baseline_budget,
            starttime=logged.start or 0.0,
            endtime=logged.end or 0.0,
        )
        self.update_incumbents(self.baseline_config)
        return True

    def __iter__(self) -> Iterator[TrialInfo]:
        if self.baseline_config is not None:
            refresh_intensifier(self)  # the seeds of a resumed runhistory
            keys = self.get_instance_seed_keys_of_interest()
            # one key without instances; one per fold with them (the baseline gets every fold)
            for key in keys if self.uses_instances else keys[:1]:
                if self.baseline_known(key.instance):
                    continue
                if not self.restore_logged_baseline(key.instance):
                    yield TrialInfo(
                        config=self.baseline_config,
                        instance=key.instance,
                        seed=key.seed,
                        budget=self.baseline_budget,
                    )
        self.before_smac_iter()
        yield from super().__iter__()  # type: ignore[safe-super]  # SMAC's concrete class

    def before_smac_iter(self) -> None:
        """Hook run once the baseline is yielded, before SMAC's own loop starts."""


class FullBrackets(BaselineFirst, PromotionHook):
    """Successive halving that races full groups and promotes only what a group holds.

    Works around two faults of SMAC 2.4's ``SuccessiveHalving`` that the baseline trial
    triggers (docs/ARCHITECTURE.md has a minimal reproduction;
    ``tests/campaign/smac/test_intensifiers.py`` fails once SMAC fixes them, so this class can go):

    1. When its tracker is empty, SMAC seeds the first stage with the configurations
       already in the runhistory, topped up with *one* new configuration, not up to the
       stage's size. With the baseline known, the first group holds 2 configurations where
       the next stage wants ``n / eta``: once both have run, ``_get_best_configs`` asks the
       Pareto front of an empty list and raises ``ValueError: need at least one array to
       concatenate``. With one worker the group never completes (see 2) and the fault stays
       hidden; with two, the baseline is still running at the largest budget when its
       smallest-budget trial ends, the group looks complete and the campaign crashed.
       :meth:`before_smac_iter` fills the first stage to full groups itself, so SMAC's own
       fill never runs. It leaves the baseline out: it is known at the largest budget
       already, and racing it again would spend a bracket's promotion slots on a
       configuration whose largest-budget result exists (a bracket it won would add no new
       largest-budget trial). Other configurations in the runhistory (a run whose racing
       state was restarted) are raced first; their finished trials are not run again.
    2. A group counts as evaluated only when every configuration's *highest* observed budget
       is the stage's budget; the baseline, run at the largest budget first, never is, so
       its group would wait forever. :meth:`promote` checks every budget a
       configuration ran at, and promotes at most the configurations the group holds (a
       state saved before this fix, with its short group, resumes instead of crashing).
    """

    def before_smac_iter(self) -> None:
        refresh_intensifier(self)  # the stage sizes; SMAC's __iter__ does it again, harmlessly
        racing = tracker(self)
        if len(racing) > 0:  # restored from a saved state, or already filled
            return
        size = stage_sizes(self)[0][0]
        known = [c for c in self.runhistory.get_configs() if c != self.baseline_config]
        for start in range(0, max(len(known), 1), size):  # at least one group
            group = known[start : start + size]
            while len(group) < size:
                try:
                    group.append(next(self.config_generator))
                except StopIteration:  # the space is exhausted: race what there is
                    break
            if group:
                racing[(0, 0)].append((next_order_seed(self), group))

    def promote(
        self,
        configs: list[Configuration],
        bracket: int,
        stage: int,
        from_keys: list[InstanceSeedBudgetKey],
    ) -> list[Configuration]:
        """The configurations of a finished group that go on to the next stage."""
        rh = self.runhistory
        for config in configs:
            done = rh.get_instance_seed_budget_keys(config, highest_observed_budget_only=False)
            if not all(key in done for key in from_keys):
                raise NotEvaluatedError
        try:
            wanted = stage_sizes(self)[bracket][stage + 1]
        except IndexError:  # the last stage promotes nobody
            return []
        remaining = list(dict.fromkeys(configs))  # a configuration races once per group
        wanted = min(wanted, len(remaining))
        selected: list[Configuration] = []
        while len(selected) < wanted:  # SMAC's rule: successive Pareto fronts of the costs
            front = calculate_pareto_front(rh, remaining, [from_keys] * len(remaining))
            for config in front:
                remaining.remove(config)
                selected.append(config)
        if len(selected) > wanted:
            keys = [from_keys] * len(selected)
            selected = sort_by_crowding_distance(rh, selected, keys)[:wanted]
        return selected


class CampaignHyperband(FullBrackets, Hyperband):
    pass


class CampaignSuccessiveHalving(FullBrackets):
    pass


class CampaignIntensifier(BaselineFirst, Intensifier):
    pass
