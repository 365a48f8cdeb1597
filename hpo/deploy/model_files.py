"""The files of a model folder, read as untrusted input.

A model folder may come from someone else, and whoever edits a booster edits ``model.json``
(its SHA-256) too: a file named there must lie inside the folder, and a booster's text is
checked (:func:`hpo.runs.record.booster_text.check_booster_text`) before LightGBM, which trusts
the indices in it, parses it.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path, PurePosixPath
from typing import Any

from hpo.data.load import COLLECTIONS
from hpo.errors import ConfigError
from hpo.runs.record.booster_text import check_booster_text
from hpo.runs.record.folder import jsonable, write_json_atomic

__all__ = [
    "CONTENT_KEY",
    "check_booster_columns",
    "check_content",
    "is_member_name",
    "member_file",
    "model_keys",
    "read_booster",
    "write_model_file",
]

#: ``model.json``'s key holding the SHA-256 of the rest of the file.
CONTENT_KEY = "content_sha256"
#: LightGBM's names of a Dataset built without feature names (boosters exported before the
#: names were given): ``Column_0``, ``Column_1``, ...
_UNNAMED = "Column_"


def is_member_name(name: str) -> bool:
    """Whether ``name`` (a ``"file"`` of ``model.json``) is a plain path inside the folder.

    A model folder may come from someone else: an absolute path or a ``..`` part would make
    loading read, and replacing the folder delete, a file outside it.
    """
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and "\\" not in name and ".." not in path.parts


def member_file(folder: Path, name: Any, meta_file: Path, where: str) -> Path:
    """``folder / name`` after checking that it stays inside ``folder``."""
    if not isinstance(name, str) or not is_member_name(name):
        raise ConfigError(
            f"{meta_file}: {where}model file {name!r} is not a relative path inside the folder"
        )
    path = folder / name
    if path.is_symlink() or not path.resolve().is_relative_to(folder.resolve()):
        raise ConfigError(f"{path}: a link out of the model folder; refusing to read it")
    return path


def read_booster(model_file: Path, sha256: Any, n_columns: int) -> Any:
    """Load one LightGBM text model after checking its checksum and its structure.

    LightGBM trusts the indices in a text model (a bad one crashes or hangs the process) and
    aborts on some truncated files instead of raising, so the text is checked first
    (:func:`hpo.runs.record.booster_text.check_booster_text`).
    """
    import lightgbm as lgb

    if not model_file.is_file():
        raise ConfigError(f"{model_file.parent}: missing model file {model_file.name}")
    try:
        data = model_file.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{model_file}: unreadable ({exc.strerror})") from exc
    if isinstance(sha256, str) and hashlib.sha256(data).hexdigest() != sha256:
        raise ConfigError(
            f"{model_file}: corrupt (its SHA-256 differs from model.json); re-export the model"
        )
    text = check_booster_text(data, model_file, n_columns)
    try:  # LightGBM prints its own "[Fatal]" line to stdout: keep the CLI to one line
        with contextlib.redirect_stdout(io.StringIO()):
            return lgb.Booster(model_str=text)
    except (lgb.basic.LightGBMError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"{model_file}: not a readable LightGBM model ({first})") from exc


def _content_digest(meta: dict[str, Any]) -> str:
    body = {k: v for k, v in meta.items() if k != CONTENT_KEY}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def write_model_file(path: Path, meta: dict[str, Any]) -> None:
    """Write ``model.json`` at ``path`` with :data:`CONTENT_KEY`, the digest of the rest.

    An edit by hand (two column names swapped, a feature spec changed) would make the
    boosters read other features than they were trained on, silently; the digest makes
    :func:`check_content` refuse it.
    """
    data = jsonable(meta)
    data[CONTENT_KEY] = _content_digest(data)
    write_json_atomic(path, data)


def check_content(meta: dict[str, Any], meta_file: Path) -> None:
    """Refuse a ``model.json`` edited after export (its digest differs from its content).

    Files exported before the digest existed have none and are read as they are.
    """
    if CONTENT_KEY in meta and meta[CONTENT_KEY] != _content_digest(meta):
        raise ConfigError(
            f"{meta_file}: edited after export (its content no longer matches its "
            f"{CONTENT_KEY}); the boosters would read other features, re-export the model"
        )


def check_booster_columns(booster: Any, columns: list[str], model_file: Path) -> None:
    """Refuse a booster whose feature names are not ``model.json``'s ``columns``, in order.

    Boosters carry the names of the columns they were trained on; those exported before
    that carry LightGBM's ``Column_<i>`` and are only checked for their count (by the caller).
    """
    found = list(booster.feature_name())
    if all(name.startswith(_UNNAMED) for name in found):
        return
    if found != list(columns):
        at = next(
            (i for i, (a, b) in enumerate(zip(found, columns, strict=False)) if a != b),
            min(len(found), len(columns)),
        )
        shown = found[at] if at < len(found) else "nothing"
        listed = columns[at] if at < len(columns) else "nothing"
        raise ConfigError(
            f"{model_file}: the booster's column {at} is '{shown}' but model.json lists "
            f"'{listed}'; the model folder was edited, re-export the model"
        )


def model_keys(
    meta: dict[str, Any], meta_file: Path, with_hyperparameters: bool
) -> tuple[dict[str, Any], tuple[str, ...], dict[str, Any]]:
    """``model.json``'s ``feature_spec``, ``collections`` and (``with_hyperparameters``)
    ``hyperparameters``, each checked for its type, with one line naming the key.

    Raises
    ------
    ConfigError
        If a key is missing or of the wrong type, or ``collections`` is empty or names a
        collection that does not exist (an empty list once ended in an IndexError).
    """
    spec = meta.get("feature_spec")
    if not isinstance(spec, dict):
        raise ConfigError(f"{meta_file}: key 'feature_spec': expected a JSON object")
    collections = meta.get("collections")
    if (
        not isinstance(collections, list)
        or not collections
        or any(c not in COLLECTIONS for c in collections)
    ):
        raise ConfigError(
            f"{meta_file}: key 'collections': expected a non-empty list of "
            f"{', '.join(COLLECTIONS)}, found {str(collections)[:60]}"
        )
    hyperparameters = meta.get("hyperparameters") if with_hyperparameters else {}
    if not isinstance(hyperparameters, dict):
        raise ConfigError(f"{meta_file}: key 'hyperparameters': expected a JSON object")
    return spec, tuple(collections), hyperparameters
