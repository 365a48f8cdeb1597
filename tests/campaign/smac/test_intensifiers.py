"""hpo's intensifiers against SMAC's own, on the sequence of a 2-worker campaign (issue 24).

The whole campaigns on two workers are in tests/campaign/lifecycle/test_parallel.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


def _race_with_a_known_configuration(kind: type, tmp_path: Path) -> list[Any]:
    """Drive successive halving as a 2-worker campaign does; return what reached budget 3.

    Configuration A (the baseline) is *running* at the largest budget when the intensifier
    starts, so SMAC seeds its first stage with A plus one new configuration. Every trial the
    intensifier yields then finishes at once, while A's largest-budget trial still runs.
    """
    from ConfigSpace import ConfigurationSpace
    from smac import Scenario
    from smac.runhistory import RunHistory, StatusType, TrialInfo

    space = ConfigurationSpace({"x": (0.0, 1.0)}, seed=0)
    scenario = Scenario(
        space, deterministic=True, min_budget=1, max_budget=9, output_directory=tmp_path
    )
    sh = kind(scenario, eta=3)  # stages of 9, 3 and 1 configurations
    sh.runhistory = RunHistory()
    sh.__post_init__()
    sh._config_generator = iter(space.sample_configuration(40))
    seed = sh.get_instance_seed_keys_of_interest()[0].seed
    sh.runhistory.add_running_trial(
        TrialInfo(space.get_default_configuration(), seed=seed, budget=9)
    )
    promoted: list[Any] = []
    for info in sh:
        if info.budget != 1:
            promoted.append(info.config)
            if len(promoted) == 3:
                break
            continue
        cost = float(info.config["x"])
        sh.runhistory.add(
            config=info.config, cost=cost, status=StatusType.SUCCESS, seed=info.seed, budget=1
        )
    return promoted


def test_smac_successive_halving_still_crashes_on_a_known_configuration(tmp_path: Path) -> None:
    """Fails once SMAC fixes its fault: then ``intensifiers.FullBrackets`` can go (issue 24)."""
    from smac.intensifier import SuccessiveHalving

    with pytest.raises(ValueError, match="need at least one array to concatenate"):
        _race_with_a_known_configuration(SuccessiveHalving, tmp_path)


def test_hpo_successive_halving_races_a_full_first_stage(tmp_path: Path) -> None:
    from hpo.campaign.smac.intensifiers import CampaignSuccessiveHalving

    promoted = _race_with_a_known_configuration(CampaignSuccessiveHalving, tmp_path)
    assert len(promoted) == 3  # 9 raced at budget 1 (A among them), 3 go on to budget 3
