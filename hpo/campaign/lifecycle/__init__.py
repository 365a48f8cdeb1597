"""A campaign from start to end: the launch (:mod:`~hpo.campaign.lifecycle.launch`), the checks
before the first trial (``preflight``), the Datasets built before the workers start
(``prebuild``), the SMAC loop (``run``), per-subset runs (``subsets``), the extension of a
finished run (``extend``), and the finish of its most promising configurations (``finish``,
``candidates``).
"""
