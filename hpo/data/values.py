"""Value checks of graph files, shared by loading and by ``hpo data check``.

Every command that reads data goes through :mod:`hpo.data.load`, which calls these, so
``hpo data check`` and ``hpo run`` / ``evaluate`` / ``predict`` accept and refuse the same
files. Shapes and dtypes are checked in :mod:`hpo.data.load`, runtimes in
:mod:`hpo.data.runtimes`; here are the values:

- features (``node_feat``, tile ``config_feat``): finite and at most 2^53 in magnitude.
  They are sizes, counts and flags; the features sum and multiply them, so a value near
  float32's limit (3e38) is finite in the file yet gives inf features. 2^53 (every integer
  exact in float64) is far above any real tensor size and keeps every feature finite;
- ``node_opcode``: HLO opcode ids, ``0..N_OPCODES - 1`` (real files use the whole range);
- ``node_config_ids``: distinct (one row of layouts per configurable node);
- ``node_splits``: checked by :mod:`hpo.data.segments` (boundaries in ``[0, n]``, non-decreasing);
- ``node_config_feat``: whole numbers in -1..5, and in each of the three 6-dimension blocks
  (output, input 1, input 2) the -1 entries ("left to the compiler") form a suffix:
  ``[4, 0, -1, -1, -1, -1]`` fixes the two most-minor dimensions; a -1 followed by a fixed
  dimension does not occur in real files. Checked chunk by chunk as the configs stream.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hpo.data.opcodes import N_OPCODES
from hpo.errors import DataFormatError

__all__ = [
    "MAX_FEATURE",
    "check_config_block",
    "check_config_ids",
    "check_feature_values",
    "check_opcodes",
]

#: Largest magnitude of a feature value (see the module docstring).
MAX_FEATURE = float(2**53)
_LAYOUT_DIMS = 6


def check_feature_values(path: Path, key: str, values: np.ndarray) -> None:
    """Refuse NaN, inf, or a magnitude above :data:`MAX_FEATURE` in a feature array."""
    with np.errstate(invalid="ignore"):
        # a numpy float64 bound, not a Python float: NumPy casts a Python float to the
        # array's dtype, and 2^53 is inf in float16, so inf once passed in a float16 file
        bad = ~(np.abs(values) <= np.float64(MAX_FEATURE))  # NaN compares False
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise DataFormatError(
            f"{path}: key '{key}': expected finite values of magnitude <= 2^53, found "
            f"{float(values[row, col]):g} in row {row}, column {col}"
        )


def check_opcodes(path: Path, opcodes: np.ndarray) -> None:
    """Refuse an opcode id outside the HLO range ``0..N_OPCODES - 1``."""
    if opcodes.size and (opcodes.min() < 0 or opcodes.max() >= N_OPCODES):
        raise DataFormatError(
            f"{path}: key 'node_opcode': expected HLO opcode ids in [0, {N_OPCODES}), found "
            f"[{opcodes.min()}, {opcodes.max()}]"
        )


def check_config_ids(path: Path, ids: np.ndarray) -> None:
    """Refuse a configurable node listed twice."""
    uniq, counts = np.unique(ids, return_counts=True)
    if (counts > 1).any():
        raise DataFormatError(
            f"{path}: key 'node_config_ids': expected distinct node ids, found "
            f"{int(uniq[counts > 1][0])} {int(counts.max())} times"
        )


def check_config_block(path: Path, start: int, block: np.ndarray) -> np.ndarray:
    """Check a chunk of ``node_config_feat`` and return it as int8 layouts.

    The cast to int8 is what the features do anyway; comparing back finds NaN, fractions
    and out-of-range values in one pass.

    Raises
    ------
    DataFormatError
        Naming the first bad config.
    """
    with np.errstate(invalid="ignore"):
        raw = block.astype(np.int8)
    if not (block.size == 0 or (block.min() >= -1 and block.max() <= 5)) or not np.array_equal(
        raw, block
    ):  # NaN fails the range test; a fraction or a wrapped int8 the equality
        bad = (raw != block) | (raw < -1) | (raw > 5)
        row, *rest = np.argwhere(bad)[0]
        raise DataFormatError(
            f"{path}: key 'node_config_feat': expected dimension indices in -1..5, found "
            f"{float(block[(row, *rest)]):g} in config {start + int(row)}"
        )
    # a -1 followed by a fixed dimension, on the flat contiguous array (strided views of the
    # 6-wide last axis cost ten times more); pairs crossing two layouts are masked out
    unset = (raw == -1).reshape(-1)
    gap = unset[:-1] & ~unset[1:]
    gap[_LAYOUT_DIMS - 1 :: _LAYOUT_DIMS] = False
    if gap.any():
        at = int(np.argmax(gap)) // _LAYOUT_DIMS * _LAYOUT_DIMS
        row = at // (raw[0].size if raw.ndim > 1 else 1)
        found = raw.reshape(-1)[at : at + _LAYOUT_DIMS].tolist()
        raise DataFormatError(
            f"{path}: key 'node_config_feat': expected the -1 entries of each 6-dimension "
            f"layout at its end, found {found} in config {start + row}"
        )
    return raw
