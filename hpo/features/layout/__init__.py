"""Layout features: the row of one (graph, layout configuration)
(:mod:`~hpo.features.layout.extract`), partial layouts, the second-order TPU costs, their
estimate in bytes moved, and the per-op-class byte totals a learned prior weighs.
"""
