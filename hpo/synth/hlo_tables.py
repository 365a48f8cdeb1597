"""The generator's HLO vocabulary: opcode ids it draws, their shape rules and arities, and the
frequencies of opcodes, ranks and dimension sizes per source (xla, nlp).

Data, not logic: kept apart from :mod:`hpo.synth.graph` so the graph builder reads as an
algorithm. Changing a number here changes every generated dataset (the generator is
byte-identical for a seed), so the synth tests' digests guard it.
"""

from __future__ import annotations

import numpy as np

from hpo.data.opcodes import CONVOLUTION, DOT, PARAMETER, REDUCE, RESHAPE, TRANSPOSE

# The other opcode ids the generator draws (same table as hpo.data.opcodes).
ADD, BITCAST, BROADCAST, COMPARE, CONCATENATE = 2, 11, 13, 20, 22
CONSTANT, CONVERT, COPY, DIVIDE = 24, 25, 27, 32
EXPONENTIAL, FUSION, GET_TUPLE_ELEMENT, IOTA, MAXIMUM, MULTIPLY = 37, 41, 45, 48, 57, 59
PAD, REDUCE_WINDOW, RSQRT = 62, 72, 81
SELECT, SLICE, SUBTRACT, TANH, TUPLE, LOGISTIC = 83, 92, 95, 96, 100, 107

# Shape classes: a fresh shape, the first operand's shape, derived from it, or no array.
_FRESH, _INHERIT, _DERIVED, _NONE = 0, 1, 2, 3
_OPCODE_TABLE: dict[int, tuple[int, int, int]] = {  # opcode: (shape class, min, max arity)
    PARAMETER: (_FRESH, 0, 0),
    CONSTANT: (_FRESH, 0, 0),
    IOTA: (_FRESH, 0, 0),
    BROADCAST: (_FRESH, 1, 1),
    RESHAPE: (_FRESH, 1, 1),
    SLICE: (_FRESH, 1, 1),
    GET_TUPLE_ELEMENT: (_FRESH, 1, 1),
    PAD: (_FRESH, 2, 2),
    REDUCE_WINDOW: (_FRESH, 2, 2),
    CONVOLUTION: (_FRESH, 2, 2),
    DOT: (_FRESH, 2, 2),
    CONCATENATE: (_FRESH, 2, 3),
    BITCAST: (_INHERIT, 1, 1),
    CONVERT: (_INHERIT, 1, 1),
    COPY: (_INHERIT, 1, 1),
    EXPONENTIAL: (_INHERIT, 1, 1),
    RSQRT: (_INHERIT, 1, 1),
    TANH: (_INHERIT, 1, 1),
    LOGISTIC: (_INHERIT, 1, 1),
    ADD: (_INHERIT, 2, 2),
    SUBTRACT: (_INHERIT, 2, 2),
    MULTIPLY: (_INHERIT, 2, 2),
    DIVIDE: (_INHERIT, 2, 2),
    MAXIMUM: (_INHERIT, 2, 2),
    COMPARE: (_INHERIT, 2, 2),
    SELECT: (_INHERIT, 3, 3),
    FUSION: (_INHERIT, 1, 4),
    TRANSPOSE: (_DERIVED, 1, 1),
    REDUCE: (_DERIVED, 2, 2),
    TUPLE: (_NONE, 2, 4),
}


def _opcode_lookup(field: int, fill: int) -> np.ndarray:
    """A table indexed by opcode id holding one field of ``_OPCODE_TABLE``."""
    table = np.full(256, fill, dtype=np.int64)
    table[list(_OPCODE_TABLE)] = [row[field] for row in _OPCODE_TABLE.values()]
    return table


_SHAPE_CLASS = _opcode_lookup(0, _FRESH)
_ARITY_LO = _opcode_lookup(1, 1)
_ARITY_HI = _opcode_lookup(2, 1)

_OPCODE_MIX: dict[str, dict[int, float]] = {  # relative frequency of non-parameter opcodes
    "xla": {
        CONVOLUTION: 8,
        DOT: 2,
        ADD: 10,
        MULTIPLY: 8,
        SUBTRACT: 2,
        MAXIMUM: 4,
        DIVIDE: 2,
        RSQRT: 1,
        EXPONENTIAL: 1,
        COMPARE: 2,
        SELECT: 2,
        CONVERT: 3,
        COPY: 1,
        RESHAPE: 8,
        TRANSPOSE: 3,
        BROADCAST: 7,
        REDUCE: 5,
        REDUCE_WINDOW: 1,
        FUSION: 14,
        CONSTANT: 5,
        GET_TUPLE_ELEMENT: 3,
        TUPLE: 1,
        SLICE: 2,
        PAD: 1,
        CONCATENATE: 1,
        BITCAST: 2,
    },
    "nlp": {
        DOT: 8,
        CONVOLUTION: 0.5,
        ADD: 10,
        MULTIPLY: 9,
        SUBTRACT: 2,
        MAXIMUM: 1,
        DIVIDE: 3,
        RSQRT: 2,
        EXPONENTIAL: 2,
        TANH: 1,
        LOGISTIC: 1,
        COMPARE: 2,
        SELECT: 3,
        CONVERT: 4,
        COPY: 1,
        RESHAPE: 9,
        TRANSPOSE: 5,
        BROADCAST: 8,
        REDUCE: 4,
        FUSION: 15,
        CONSTANT: 5,
        GET_TUPLE_ELEMENT: 3,
        TUPLE: 1,
        SLICE: 2,
        CONCATENATE: 1,
        IOTA: 0.5,
    },
}
_RANK_P = {"xla": (0.03, 0.12, 0.25, 0.12, 0.43, 0.05), "nlp": (0.03, 0.15, 0.35, 0.35, 0.10, 0.02)}
_DIM_POOL = {  # sizes of tensor dimensions and their weights  # fmt: skip
    "xla": (
        (
            1,
            2,
            3,
            7,
            8,
            14,
            16,
            28,
            32,
            56,
            64,
            96,
            112,
            128,
            192,
            224,
            256,
            384,
            512,
            1000,
            1024,
            2048,
        ),
        (6, 2, 3, 4, 3, 4, 4, 4, 6, 4, 7, 2, 3, 7, 2, 2, 6, 2, 5, 1, 2, 2),
    ),
    "nlp": (
        (1, 2, 8, 12, 16, 32, 64, 100, 128, 256, 384, 512, 768, 1024, 2048, 3072, 4096, 30522),
        (6, 2, 3, 4, 5, 5, 8, 1, 9, 5, 4, 7, 7, 4, 2, 2, 1, 0.3),
    ),
}
_SMALL_DIMS = np.array([1, 2, 3, 7, 8, 16, 32])
_BATCH_SIZES = np.array([1, 8, 16, 32, 64, 128, 256])
_MAX_VOLUME = 1 << 24
