"""Run a toy campaign in a child process, for the kill -9 / resume test.

Usage: ``python tests/campaign_child.py RUNS_DIR DATA_ROOT NAME TRIALS OPTIMIZER [PER]``;
with PER (``collection`` or ``family``) a per-subset run over tile:xla and layout:xla:default.
The objective sleeps 0.3 s per trial so the parent can kill the process mid-campaign.
"""

from __future__ import annotations

import sys

from toy_objectives import ToyObjective, toy_config

from hpo.campaign import run_campaign

if __name__ == "__main__":
    runs_dir, data_root, name, trials, optimizer = sys.argv[1:6]
    extra = {}
    if len(sys.argv) > 6:
        extra = {"per": sys.argv[6], "collections": ("tile:xla", "layout:xla:default")}
    cfg = toy_config(
        runs_dir, data_root, name=name, trials=int(trials), optimizer=optimizer, **extra
    )
    run_campaign(cfg, objective=ToyObjective(sleep=0.3), quiet=True)
