"""Views of recorded runs: the history of one campaign (:mod:`~hpo.runs.views.history`),
per-subset runs and the list of runs (:mod:`~hpo.runs.views.nested`), hyperparameter importance
and figures.
"""
