"""The LightGBM lambdarank estimator and what it trains on: the ranker
(:mod:`~hpo.ranking.model.ranker`), the fit options, the cache of constructed Datasets, the
Dataset shared by the trials of a process, and the one module that uses LightGBM's private names
(:mod:`~hpo.ranking.model.lightgbm_adapter`).
"""
