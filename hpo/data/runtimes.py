"""Validation of the label keys: ``config_runtime`` and ``config_runtime_normalizers``.

Runtimes are integer nanoseconds in the TpuGraphs format and every metric divides by them
(the tile target is ``config_runtime / config_runtime_normalizers``; the tile score divides by
the best runtime). A bad value therefore does not fail loudly downstream: a NaN cast to int64
becomes ``-2**63`` with only a numpy ``RuntimeWarning``, a zero normalizer becomes an infinite
target, a negative runtime silently ranks first. So every bad value is refused here, at the
boundary, with one line naming the file, the key, what was expected and where the bad values
are.

Test-split files carry placeholder labels (tile runtimes all 0 and normalizers all 1; layout
runtimes all 0). They are recognised as *unlabeled* and pass, because a file without labels
is still a valid file to predict on; the zero check applies only to labeled files.

Float runtimes are accepted when every value is a whole number within int64 range, and cast
exactly: a file re-saved through a float64 column (pandas, a JSON round trip) holds the same
nanoseconds. A fractional value is refused rather than rounded, because it means the unit is
not nanoseconds (seconds or milliseconds, say); rounding would turn such runtimes into a
column of zeros and ones and silently destroy the ranking.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hpo.errors import DataFormatError

__all__ = [
    "carries_ranking",
    "unranked_line",
    "validate_layout_runtimes",
    "validate_tile_runtimes",
]

RUNTIME_KEY = "config_runtime"
NORMALIZER_KEY = "config_runtime_normalizers"
#: Indices listed per kind of bad value before the message says "...".
MAX_LISTED = 5
_INT64_LIMIT = np.float64(2**63)  # a float64 bound whatever the array's float dtype
#: The largest runtime taken: every whole number up to it is exact in float64, where the
#: metrics and ``hpo data check`` compare runtimes (2**60 + i all read as 1.15292e+18).
MAX_RUNTIME = 2**53


def carries_ranking(target: np.ndarray) -> bool:
    """Whether a labeled graph's runtimes (or tile targets) order its configs at all: two
    configs or more, not all equal.

    One that does not carries no ranking: every prediction scores the same on it (Kendall's
    tau is undefined, reported 0; the tile score is 1), so ``data check`` names it and the
    scores leave it out of their means (:mod:`hpo.ranking.scoring`).
    """
    values = np.asarray(target).ravel()
    return values.size >= 2 and bool((values != values[0]).any())


def unranked_line(graphs: Sequence[str]) -> str:
    """What every command says of the labeled ``graphs`` that carry no ranking (at most
    three named): ``2 labeled graph(s) carry no ranking ...: a, b``."""
    shown = ", ".join(graphs[:3]) + (", ..." if len(graphs) > 3 else "")
    return (
        f"{len(graphs)} labeled graph(s) carry no ranking (one config, or every runtime equal: "
        f"no prediction can order them) and are left out of the means: {shown}"
    )


def _where(mask: np.ndarray, what: str) -> str:
    """``3 NaN values at configs 4, 9, 17`` for the True entries of ``mask``."""
    idx = np.flatnonzero(mask)
    shown = ", ".join(str(i) for i in idx[:MAX_LISTED])
    more = ", ..." if idx.size > MAX_LISTED else ""
    plural = "s" if idx.size > 1 else ""
    return f"{idx.size} {what} value{plural} at config{plural} {shown}{more}"


def _bad_values(values: np.ndarray, *, zero_ok: bool) -> list[str]:
    """Describe each kind of bad value in ``values`` (empty when all are fine)."""
    found: list[str] = []
    if values.dtype.kind == "f":
        checks = [
            (np.isnan(values), "NaN"),
            (values == np.inf, "+inf"),
            (values == -np.inf, "-inf"),
        ]
        finite = np.isfinite(values)
        with np.errstate(invalid="ignore"):
            checks.append((finite & (values != np.trunc(values)), "fractional"))
            checks.append((finite & (np.abs(values) >= _INT64_LIMIT), "out-of-int64-range"))
            beyond = finite & (values > MAX_RUNTIME) & (values < _INT64_LIMIT)
            checks.append((beyond, "above-2^53"))
        found += [_where(mask, what) for mask, what in checks if mask.any()]
        negative, zero = finite & (values < 0), values == 0  # -inf is reported once, above
    else:
        negative, zero = values < 0, values == 0
        big = (
            values >= np.uint64(2**63)
            if values.dtype == np.uint64
            else np.zeros(values.shape, bool)
        )
        if big.any():
            found.append(_where(big, "out-of-int64-range"))
        if (beyond := ~big & (values > MAX_RUNTIME)).any():
            found.append(_where(beyond, "above-2^53"))
    if negative.any():
        found.append(_where(negative, "negative"))
    if not zero_ok and zero.any():
        found.append(_where(zero, "zero"))
    return found


def _validated(path: Path, key: str, values: np.ndarray, *, zero_ok: bool) -> np.ndarray:
    """Return ``values`` as int64 after refusing NaN, infinities, fractions, negatives (zeros)."""
    problems = _bad_values(values, zero_ok=zero_ok)
    if problems:
        expected = "whole non-negative" if zero_ok else "whole positive"
        raise DataFormatError(
            f"{path}: key '{key}': expected {expected} nanoseconds, found {'; '.join(problems)}"
        )
    return values.astype(np.int64, copy=False)


def validate_tile_runtimes(
    path: Path, runtime: np.ndarray, normalizers: np.ndarray
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Check the labels of a tile file; return them as int64 and whether the file is labeled.

    A file is unlabeled when its runtimes are all 0 and its normalizers all 1 (the test
    split's placeholders). Normalizers are divisors, so they must be positive in every file;
    runtimes must be positive in labeled files.

    Raises
    ------
    DataFormatError
        If a runtime or normalizer is NaN, infinite, fractional, negative, above 2**53, or
        zero where it must be positive; the message lists how many and at which configs.
    """
    labeled = not (np.all(runtime == 0) and np.all(normalizers == 1))
    runtime = _validated(path, RUNTIME_KEY, runtime, zero_ok=not labeled)
    normalizers = _validated(path, NORMALIZER_KEY, normalizers, zero_ok=False)
    return runtime, normalizers, labeled


def validate_layout_runtimes(path: Path, runtime: np.ndarray) -> tuple[np.ndarray, bool]:
    """Check the runtimes of a layout file; return them as int64 and whether it is labeled.

    A file is unlabeled when its runtimes are all 0 (the test split's placeholders).

    Raises
    ------
    DataFormatError
        If a runtime is NaN, infinite, fractional, negative, above 2**53, or zero in a
        labeled file.
    """
    labeled = not np.all(runtime == 0)
    return _validated(path, RUNTIME_KEY, runtime, zero_ok=not labeled), labeled
