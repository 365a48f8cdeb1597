"""Run a toy campaign in a child process, for the kill -9 / resume test.

Usage: ``python tests/campaign_child.py RUNS_DIR DATA_ROOT NAME TRIALS OPTIMIZER``.
The objective sleeps 0.3 s per trial so the parent can kill the process mid-campaign.
"""

from __future__ import annotations

import sys

from toy_objectives import ToyObjective, toy_config

from hpo.campaign import run_campaign

if __name__ == "__main__":
    runs_dir, data_root, name, trials, optimizer = sys.argv[1:6]
    cfg = toy_config(runs_dir, data_root, name=name, trials=int(trials), optimizer=optimizer)
    run_campaign(cfg, objective=ToyObjective(sleep=0.3), quiet=True)
