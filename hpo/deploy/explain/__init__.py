"""Why a model orders two configurations of a graph as it does (``hpo explain``): feature
groups' contributions and, for layouts, per-node counterfactuals."""

from __future__ import annotations

from hpo.deploy.explain.counterfactual import NodeEffect, opcode_name
from hpo.deploy.explain.explanation import (
    TOGETHER,
    Explanation,
    GroupEffect,
    explain_configs,
    find_graph,
)

__all__ = [
    "TOGETHER",
    "Explanation",
    "GroupEffect",
    "NodeEffect",
    "explain_configs",
    "find_graph",
    "opcode_name",
]
