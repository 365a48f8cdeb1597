"""Where a campaign's first configurations come from: warm starts from earlier runs
(:mod:`~hpo.campaign.seeding.warm_start`), the reuse of a same-problem run's best booster as the
baseline (:mod:`~hpo.campaign.seeding.warm_reuse`), and the local initial design around the
baseline (:mod:`~hpo.campaign.seeding.local_design`).
"""
