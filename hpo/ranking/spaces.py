"""Search spaces as data: ConfigSpace JSON files loaded into ``ConfigurationSpace`` objects.

A space is one JSON file in ConfigSpace's own serialisation (``ConfigurationSpace.to_json``).
The packaged spaces live in ``spaces/`` at the repository root; a wheel ships them as
``hpo/_spaces/``. :func:`load_space` takes either the NAME of a packaged space (``lambdarank``)
or the PATH of a JSON file, and turns every defect of the file into a one-line
:class:`hpo.errors.ConfigError` naming the file and the problem.
"""

from __future__ import annotations

import importlib.resources
import json
import math
from pathlib import Path
from typing import Any

from ConfigSpace import ConfigurationSpace
from ConfigSpace.read_and_write.dictionary import (
    CONDITION_DECODERS,
    FORBIDDEN_DECODERS,
    HYPERPARAMETER_DECODERS,
)

from hpo.errors import ConfigError
from hpo.ranking.hyperparameters import (
    HPO_SET_PARAMS,
    LAYOUT_OBJECTIVE_KEY,
    TILE_KEYS,
    TILE_LABEL_LEVELS_KEY,
    TILE_OBJECTIVE_KEY,
    lightgbm_aliases,
    lightgbm_refusal,
    route_hyperparameters,
)
from hpo.ranking.model.ranker import OBJECTIVES
from hpo.ranking.prior.blend import DEFAULT_WEIGHT_KEY, WEIGHT_KEY

__all__ = [
    "DEFAULT_SPACE",
    "HPO_SET_PARAMS",
    "check_space_keys",
    "check_space_values",
    "list_spaces",
    "load_space",
    "space_from_dict",
    "space_to_dict",
]

DEFAULT_SPACE = "lambdarank"
_SUFFIX = ".json"


def _space_dirs() -> list[Path]:
    """Folders holding packaged spaces, in lookup order (wheel first, then the checkout)."""
    dirs: list[Path] = []
    packaged = importlib.resources.files("hpo") / "_spaces"
    if packaged.is_dir():
        dirs.append(Path(str(packaged)))
    checkout = Path(__file__).resolve().parents[2] / "spaces"
    if checkout.is_dir():
        dirs.append(checkout)
    return dirs


def list_spaces() -> list[str]:
    """Return the names of the packaged search spaces, sorted."""
    names = {p.stem for d in _space_dirs() for p in d.glob(f"*{_SUFFIX}")}
    return sorted(names)


def _resolve(name_or_path: str | Path) -> Path:
    text = str(name_or_path)
    looks_like_path = (
        isinstance(name_or_path, Path) or text.endswith(_SUFFIX) or "/" in text or "\\" in text
    )
    if looks_like_path:
        path = Path(text).expanduser()
        if not path.is_file():
            raise ConfigError(f"{path}: search space file not found")
        return path
    for folder in _space_dirs():
        candidate = folder / f"{text}{_SUFFIX}"
        if candidate.is_file():
            return candidate
    available = ", ".join(list_spaces()) or "none"
    raise ConfigError(
        f"unknown search space '{text}' (packaged spaces: {available}; or pass the path of a "
        "ConfigSpace .json file)"
    )


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _check_structure(source: str, data: Any) -> None:
    """Check the parts ConfigSpace reports badly: types and names referenced by conditions."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a JSON object, found {type(data).__name__}")
    hps = data.get("hyperparameters")
    if not isinstance(hps, list) or not hps:
        raise ConfigError(f"{source}: key 'hyperparameters': expected a non-empty list")
    names: set[str] = set()
    for i, hp in enumerate(hps):
        if not isinstance(hp, dict) or not isinstance(hp.get("name"), str):
            raise ConfigError(f"{source}: hyperparameter #{i}: expected an object with a 'name'")
        _check_type(source, f"hyperparameter '{hp['name']}'", hp, HYPERPARAMETER_DECODERS)
        if hp["name"] in names:
            raise ConfigError(f"{source}: hyperparameter '{hp['name']}' is defined twice")
        names.add(hp["name"])
        for key, value in hp.items():  # ConfigSpace answers a NaN bound with another message
            if isinstance(value, float) and not math.isfinite(value):
                raise ConfigError(
                    f"{source}: hyperparameter '{hp['name']}': '{key}' is {value}; expected a "
                    "finite number"
                )
    for key, decoders in (("conditions", CONDITION_DECODERS), ("forbiddens", FORBIDDEN_DECODERS)):
        items = data.get(key, [])
        if not isinstance(items, list):
            raise ConfigError(f"{source}: key '{key}': expected a list")
        for i, item in enumerate(items):
            _check_clause(source, f"{key[:-1]} #{i}", item, decoders, names)


def _check_type(source: str, where: str, item: dict[str, Any], decoders: dict[str, Any]) -> None:
    """Refuse an entry whose ``type`` no decoder reads, naming the ones there are."""
    kind = item.get("type")
    if kind not in decoders:
        raise ConfigError(
            f"{source}: {where}: unknown type {kind!r} (expected one of "
            f"{', '.join(sorted(decoders))})"
        )


def _check_clause(
    source: str, where: str, item: Any, decoders: dict[str, Any], names: set[str]
) -> None:
    if not isinstance(item, dict):
        raise ConfigError(f"{source}: {where}: expected an object")
    _check_type(source, where, item, decoders)
    for ref_key in ("child", "parent", "name", "left", "right"):
        ref = item.get(ref_key)
        if isinstance(ref, str) and ref not in names:
            raise ConfigError(f"{source}: {where}: unknown hyperparameter '{ref}' in '{ref_key}'")
    for sub_key in ("conditions", "clauses"):
        for j, sub in enumerate(item.get(sub_key) or []):
            _check_clause(source, f"{where}.{sub_key}[{j}]", sub, decoders, names)


def _values(hp: Any) -> tuple[Any, ...]:
    """The values of a hyperparameter that bound what it can take: its bounds and default, or
    every choice."""
    for attr in ("choices", "sequence"):
        found = getattr(hp, attr, None)
        if found is not None:
            return tuple(found)
    bounds = (getattr(hp, "lower", None), getattr(hp, "upper", None))
    values = (*bounds, getattr(hp, "default_value", None), getattr(hp, "value", None))
    return tuple(v.item() if hasattr(v, "item") else v for v in values if v is not None)


#: hpo's own numeric settings: the smallest value each takes.
_HPO_MINIMA = {
    "label_levels": 2,
    TILE_LABEL_LEVELS_KEY: 2,
    "max_group_size": 1,
    WEIGHT_KEY: 0,
    DEFAULT_WEIGHT_KEY: 0,
}


def check_space_values(source: str, space: ConfigurationSpace) -> None:
    """Refuse a space that can draw a value no trial can train with.

    Checked when the space loads, so a bad range stops the campaign before its first trial
    instead of crashing every trial that draws it: a ``tile_objective`` that is not a ranking
    objective; a LightGBM parameter whose bounds (or choices) the installed LightGBM refuses
    (:func:`hpo.ranking.hyperparameters.lightgbm_refusal`, LightGBM's own checks); an hpo
    setting below its smallest value.

    Raises
    ------
    ConfigError
        Naming the file, the hyperparameter and the value.
    """
    route_hyperparameters(dict.fromkeys(space.keys()), source)
    known = lightgbm_aliases()
    for name in space:
        hp = space[name]
        for value in _values(hp):
            if name in (TILE_OBJECTIVE_KEY, LAYOUT_OBJECTIVE_KEY) and value not in OBJECTIVES:
                raise ConfigError(
                    f"{source}: {name} value {value!r} is not a ranking "
                    f"objective ({', '.join(OBJECTIVES)})"
                )
            low = _HPO_MINIMA.get(name)
            if low is not None and not (isinstance(value, (int, float)) and value >= low):
                raise ConfigError(f"{source}: {name} can be {value!r}; expected a number >= {low}")
            # a LightGBM parameter, or a tile key as the LightGBM parameter it stands for
            param = TILE_KEYS.get(name, name)
            if param in known:
                refusal = lightgbm_refusal(str(param), value)
                if refusal is not None:
                    raise ConfigError(
                        f"{source}: {name} can be {value!r}, which LightGBM refuses ({refusal})"
                    )


def check_space_keys(source: str, names: list[str]) -> None:
    """Refuse a hyperparameter that hpo sets itself, or that nobody owns.

    The space's names go through :func:`hpo.ranking.hyperparameters.route_hyperparameters`,
    the routing training uses, so a space holds only keys a trial can use.

    Raises
    ------
    ConfigError
        Naming the file and the first offending key.
    """
    route_hyperparameters(dict.fromkeys(names), source)


def space_from_dict(data: Any, source: str = "search space") -> ConfigurationSpace:
    """Build a space from its ConfigSpace serialisation (a dict), as :func:`load_space` does.

    Parameters
    ----------
    data
        The decoded JSON object.
    source
        Named in error messages (usually the file).

    Raises
    ------
    ConfigError
        If the dict is not a valid serialised space.
    """
    _check_structure(source, data)
    try:
        return ConfigurationSpace.from_serialized_dict(json.loads(json.dumps(data)))
    except (KeyError, ValueError, TypeError, AssertionError, AttributeError) as exc:
        raise ConfigError(f"{source}: invalid search space: {_one_line(exc)}") from exc


def space_to_dict(space: ConfigurationSpace) -> dict[str, Any]:
    """Return the ConfigSpace serialisation of ``space`` (JSON-compatible)."""
    return dict(json.loads(json.dumps(space.to_serialized_dict())))


def load_space(name_or_path: str | Path, seed: int | None = None) -> ConfigurationSpace:
    """Load a search space by packaged NAME or by PATH of a ConfigSpace JSON file.

    Parameters
    ----------
    name_or_path
        A packaged space name (see :func:`list_spaces`), or a path; a string ending in
        ``.json`` or containing a path separator is taken as a path.
    seed
        Seed of the space's sampler; ``None`` leaves it unseeded.

    Raises
    ------
    ConfigError
        If the space is unknown, the file is missing or is not valid JSON, a hyperparameter
        has an unknown type or a name hpo sets itself or nobody knows
        (:func:`check_space_keys`), a ``tile_objective`` LightGBM is not trained with
        (:func:`check_space_values`), or a condition or forbidden clause is invalid.
    """
    path = _resolve(name_or_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: unreadable ({_one_line(exc)})") from exc
    space = space_from_dict(data, source=str(path))
    check_space_keys(str(path), list(space.keys()))
    check_space_values(str(path), space)
    if seed is not None:
        space.seed(seed)
    return space
