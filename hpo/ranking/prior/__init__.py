"""The learned cost prior and its blend with the ranker's scores: the ridge fit
(:mod:`~hpo.ranking.prior.fit`), its additive variant, the fitted prior a model carries
(:mod:`~hpo.ranking.prior.learned`), and the per-graph blend rule (:mod:`~hpo.ranking.prior.blend`).
"""
