"""What a campaign writes in its run folder, and its readers: the folder and its lock,
``campaign.json`` and its upgrade of older formats, the settings as typed, the trials of
``trials.jsonl``, and the booster store.
"""
