"""A campaign's limits in one object (hpo.campaign.limits)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from toy_objectives import toy_config

from hpo.campaign.limits import Limits
from hpo.runs.record.campaign_file import CampaignRecord, Extension


def test_limits_of_a_new_campaign_started_as_they_are(tmp_path: Path) -> None:
    cfg = toy_config(tmp_path, tmp_path, trials=40, walltime=600.0, finish=3)
    limits = Limits.of(cfg)
    assert (limits.trials, limits.walltime) == (40, 600.0)
    assert (limits.started_trials, limits.started_walltime, limits.since) == (40, 600.0, 0)
    assert limits.finish == 3
    assert limits.reserved_trials == 3
    assert Limits.of(dataclasses.replace(cfg, trials=8)).reserved_trials == 2  # a third
    assert Limits.of(dataclasses.replace(cfg, optimizer="bo")).finish == 0  # all at the top
    assert Limits.of(dataclasses.replace(cfg, cv=3)).finish == 0  # budgets count folds


def test_limits_of_an_extended_campaign_keep_how_it_started(tmp_path: Path) -> None:
    cfg = toy_config(tmp_path, tmp_path, trials=30, walltime=None)
    record = CampaignRecord(
        settings=cfg.to_dict(),
        extensions=(
            Extension(at=1.0, trials=(10, 20), walltime=(None, None), records=10),
            Extension(at=2.0, trials=(20, 30), walltime=(None, None), records=21),
        ),
    )
    limits = Limits.of(cfg, record)
    assert (limits.trials, limits.started_trials, limits.since) == (30, 10, 21)
    assert (limits.walltime, limits.started_walltime) == (None, None)
