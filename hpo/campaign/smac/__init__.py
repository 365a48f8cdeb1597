"""SMAC's side of a campaign: the scenario and facade per optimizer, the intensifiers, the
runners that call the objective, SMAC's saved state in a run folder, and the adapter.

Every use of SMAC's private (underscore) names is in :mod:`hpo.campaign.smac.adapter` and
nowhere else. Modules here import SMAC at module level: nothing below ``hpo.campaign`` loads
them until a campaign is assembled.
"""
