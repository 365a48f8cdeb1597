"""The family of hidden layout laws: constants and switches, random members, ``law.json``.

Why: defaults and features judged only on the law they were written after say
nothing about laws nobody wrote down. :class:`LawConstants` holds every constant of the
second-order law (:mod:`hpo.synth.layout_law`) and a switch per effect; ``hpo data synth
--law random --law-seed N`` draws a member (:func:`draw_law`), and every generated root
records its law in ``law.json`` (:func:`read_law`) so a benchmark can price the noise ceiling
and report which law it judged on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from hpo.data.load import LAW_FILE
from hpo.errors import ConfigError, UsageError

__all__ = [
    "LAW_FILE",
    "LAW_NAMES",
    "RANDOM_ON",
    "RANDOM_SCALE",
    "SECOND_ORDER",
    "LawConstants",
    "draw_law",
    "law_record",
    "read_law",
    "resolve_law",
]


@dataclass(frozen=True)
class LawConstants:
    """Constants and switches of one member of the family of second-order laws.

    The defaults are the ``second-order`` law. ``hpo data synth --law random`` draws a member
    (:func:`draw_law`): every constant scaled by a log-uniform factor in [0.2, 5] and every
    effect switched on or off at random, so that defaults and features can be judged on laws
    nobody wrote down. An effect switched off is neutral: its factor is 1 (matrix
    unit, bitcast, opcode weights), its term 0 (input, kernel, copies, reader copies), every
    type pads to 8 rows (element tiles), or a major-only mismatch costs a relayout
    (mismatch classes).
    """

    name: str = "second-order"
    seed: int | None = None
    conv: float = 4.0  # opcode factors of the output term
    dot: float = 3.5
    reshape: float = 1.0
    transpose: float = 1.0
    fusion: float = 1.0
    mxu_minor: float = 0.5  # conv/dot (and conv kernel) factor when the feature dim is most minor
    bitcast: float = 0.03  # reshape/transpose cost factor when it is a bitcast
    input_factor: float = 0.3
    kernel_factor: float = 0.5
    relayout: float = 1.5  # mismatch in the two minor positions
    cheap_copy: float = 0.08  # mismatch in major positions only (x relayout when classes off)
    reader_copy: float = 1.0
    element_tiles: bool = True
    opcode_weights: bool = True
    mxu: bool = True
    bitcasts: bool = True
    input_term: bool = True
    kernel_term: bool = True
    copies: bool = True
    mismatch_classes: bool = True
    reader_copies: bool = True

    def to_dict(self) -> dict[str, Any]:
        """The law as JSON-ready data (``law.json`` of a generated root)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> LawConstants:
        """Read :meth:`to_dict`'s output back; one-line :class:`ConfigError` naming ``where``."""
        known = {f.name: f for f in fields(cls)}
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected a JSON object")
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ConfigError(f"{where}: unknown law key '{unknown[0]}'")
        for key, value in data.items():
            kind = str(known[key].type)
            number = isinstance(value, int | float) and not isinstance(value, bool)
            ok = {
                "str": isinstance(value, str),
                "int | None": value is None or (number and isinstance(value, int)),
                "bool": isinstance(value, bool),
                "float": number and bool(np.isfinite(value)) and value >= 0,
            }[kind]
            if not ok:
                raise ConfigError(f"{where}: law key '{key}': expected {kind}, found {value!r}")
        return cls(**data)


SECOND_ORDER = LawConstants()
_FACTORS = (
    "conv",
    "dot",
    "reshape",
    "transpose",
    "fusion",
    "mxu_minor",
    "bitcast",
    "input_factor",
    "kernel_factor",
    "relayout",
    "cheap_copy",
    "reader_copy",
)
_SWITCHES = (
    "element_tiles",
    "opcode_weights",
    "mxu",
    "bitcasts",
    "input_term",
    "kernel_term",
    "copies",
    "mismatch_classes",
    "reader_copies",
)
#: Range of the factor every constant of a random law is scaled by (log-uniform).
RANDOM_SCALE = (0.2, 5.0)
#: Chance that each effect of a random law is on.
RANDOM_ON = 0.6


def draw_law(seed: int) -> LawConstants:
    """The member ``seed`` of the family of laws (``hpo data synth --law random``).

    A function of ``seed`` only. Ratios that have a physical sign keep it: the matrix-unit
    and bitcast factors stay below 1 (a discount), so a drawn law may weaken an effect but
    not turn it into its opposite, which no hardware would do.
    """
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(19,)))
    low, high = np.log(RANDOM_SCALE)
    values: dict[str, Any] = {}
    for key in _FACTORS:
        value = getattr(SECOND_ORDER, key) * float(np.exp(rng.uniform(low, high)))
        values[key] = min(value, 0.95) if key in ("mxu_minor", "bitcast") else value
    for key in _SWITCHES:
        values[key] = bool(rng.random() < RANDOM_ON)
    return LawConstants(name="random", seed=int(seed), **values)


def resolve_law(law: str | LawConstants, seed: int = 0) -> LawConstants | None:
    """The constants of ``law`` (``None``: the first-order law of :mod:`hpo.synth.layout`).

    Raises
    ------
    UsageError
        If ``law`` is a name that is not one of :data:`LAW_NAMES`.
    """
    if isinstance(law, LawConstants):
        return law
    if law == "first-order":
        return None
    if law == "second-order":
        return SECOND_ORDER
    if law == "random":
        return draw_law(seed)
    raise UsageError(f"unknown law '{law}' (expected one of {', '.join(LAW_NAMES)})")


#: Law names ``hpo data synth --law`` accepts.
LAW_NAMES: tuple[str, ...] = ("second-order", "first-order", "random")


def law_record(law: LawConstants | None) -> dict[str, Any]:
    """JSON data of a law: ``{"name": "first-order"}`` or every constant and switch."""
    return {"name": "first-order"} if law is None else law.to_dict()


def read_law(root: Path) -> LawConstants | None:
    """The law recorded in ``root/law.json`` (``None``: first-order).

    Raises
    ------
    ConfigError
        If the file is missing or malformed.
    """
    path = Path(root) / LAW_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: missing (roots from hpo data synth record their law)") from exc
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from exc
    if isinstance(data, dict) and data.get("name") == "first-order" and len(data) == 1:
        return None
    return LawConstants.from_dict(data, str(path))
