"""HLO opcode ids as stored in TpuGraphs ``node_opcode`` (uint8, 1..120).

Only the opcodes the features single out are named. The ids follow the ones reported for
the dataset by competition write-ups; the synthetic generator uses the same table, and
features that count these opcodes stay valid (if less sharp) should an id differ.
"""

from __future__ import annotations

__all__ = [
    "CONTRACTING",
    "CONVOLUTION",
    "DOT",
    "FUSION",
    "N_OPCODES",
    "PARAMETER",
    "REDUCE",
    "RESHAPE",
    "TRANSPOSE",
]

N_OPCODES = 121  # ids 0..120; 0 never occurs in real files
CONVOLUTION = 26
DOT = 34
FUSION = 41
PARAMETER = 63
REDUCE = 70
RESHAPE = 75
TRANSPOSE = 98
#: Ops that contract (reduce away) a dim of their operand: a kernel holding one iterates over a
#: K dim its output does not have (tile features read it; :mod:`hpo.features.tile`).
CONTRACTING = (CONVOLUTION, DOT, REDUCE)
