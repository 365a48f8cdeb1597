"""Feature tables: a table of rows in memory or on disk
(:mod:`~hpo.features.table.feature_table`, :mod:`~hpo.features.table.on_disk`), the rows of one file
(:mod:`~hpo.features.table.rows`), reading rows in bounded chunks (:mod:`~hpo.features.table.store`)
and the building of a dataset's tables (:mod:`~hpo.features.table.build`).
"""
