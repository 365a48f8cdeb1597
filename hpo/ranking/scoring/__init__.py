"""Scores of predictions: the TpuGraphs metrics (:mod:`~hpo.ranking.scoring.metrics`) and the
scoring of a ranker on the valid rows of a table in graph-aligned chunks
(:mod:`~hpo.ranking.scoring.valid`).
"""
