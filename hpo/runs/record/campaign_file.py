"""``campaign.json``: its format number, the check on load and the upgrade of older formats.

``campaign.json`` records everything that defines the models of a run (settings with the
feature spec, fidelity settings, search space and seed), so the objective, a resumed
campaign and ``hpo export`` rebuild the same rows and the same training from the folder,
not from today's defaults. Both readers (:func:`hpo.runs.views.history.load_run` and
:func:`hpo.campaign.config.read_campaign`) go through :func:`read_campaign_file`, so a
format this ``hpo`` does not know is refused in one place, with one line.

Formats
-------
1
    Settings without ``features``, ``fixed_rounds`` and ``fast_bias``: those runs were made
    with the defaults of the time, which :data:`FORMAT_1_SETTINGS` spells out *literally*
    (not by reference to today's defaults), so a later change of a default never changes
    how an old run is read, resumed or exported.
2
    Settings hold ``features`` (a :class:`hpo.features.FeatureSpec` as a dict),
    ``fixed_rounds`` and ``fast_bias``.

Settings added later within a format are filled in from :data:`ADDED_SETTINGS` when a file
lacks them, with the value the runs without them were made with (``cv``: 0, the valid split;
``per``: one campaign; the config caps: none). These are the only defaults a reader applies:
:class:`hpo.runs.record.settings.RunSettings` types the completed settings and refuses a missing
one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hpo.errors import ConfigError
from hpo.runs.record.folder import CAMPAIGN_FILE, LOCK_FILE, read_json, write_json_atomic

__all__ = [
    "ADDED_SETTINGS",
    "CAMPAIGN_FORMAT",
    "FORMAT_1_SETTINGS",
    "SUPPORTED_FORMATS",
    "is_run_folder",
    "read_campaign_file",
    "update_campaign_file",
]

#: Format written by this ``hpo``.
CAMPAIGN_FORMAT = 2
#: Formats this ``hpo`` reads.
SUPPORTED_FORMATS = (1, 2)
#: What format-1 runs were made with (the defaults before they were recorded).
FORMAT_1_SETTINGS: dict[str, Any] = {
    "features": {
        "relative": True,
        "graph_descriptor": True,
        "chunk_size": 2048,
        "producer_hops": 4,
        "version": 1,
    },
    "fixed_rounds": 200,
    "fast_bias": 2.0,
    # every config of every graph became a row (per-graph caps came with format 2)
    "train_configs": 0,
    "valid_configs": 0,
    "keep_fastest": 0,
    # SMAC's own initial design (the setting came later, with a measured default of 8)
    "n_init": None,
    # BOHB's d + 1 results before the forest is fitted (the measured default of 5 came later)
    "min_trials": None,
    # one LightGBM thread per trial, whatever the cores (threads came with format 2)
    "threads": 1,
}

#: Settings added to format 2 after its first runs, and what those runs were made with.
ADDED_SETTINGS: dict[str, Any] = {
    # scored on the valid split (k-fold cross-validation came later)
    "cv": 0,
    # one campaign for all collections (per-subset runs came later)
    "per": "none",
    # every config of every graph became a row (the per-graph caps came later)
    "train_configs": 0,
    "valid_configs": 0,
    "keep_fastest": 0,
    # ended with SMAC's loop, no configuration taken to the largest budget after it
    "finish": 0,
    # every initial configuration drawn at random (neighbours of the baseline came later)
    "n_local": 0,
    # LightGBM's unbounded histogram pool (the setting came later)
    "histogram_pool_mb": 0,
    # no check of graphs shared between splits (it came later): nothing refused
    "allow_overlap": True,
}


def read_campaign_file(path: Path) -> dict[str, Any]:
    """Read a ``campaign.json``, check its format, and return it with complete settings.

    The ``format`` key keeps the value found; the settings of a format-1 file get
    :data:`FORMAT_1_SETTINGS` for the keys it lacks, and every file :data:`ADDED_SETTINGS`.

    Raises
    ------
    ConfigError
        If the file is missing, not a JSON object, has no object under ``config``, or has a
        format this ``hpo`` does not read.
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    found = data.get("format")
    if isinstance(found, bool) or found not in SUPPORTED_FORMATS:
        supported = ", ".join(str(f) for f in SUPPORTED_FORMATS)
        raise ConfigError(
            f"{path}: campaign format {found!r} is not supported by this hpo (it reads "
            f"formats {supported}); use the hpo version that made the run"
        )
    settings = data.get("config")
    if not isinstance(settings, dict):
        raise ConfigError(f"{path}: key 'config': expected a JSON object")
    added = {**(FORMAT_1_SETTINGS if found == 1 else {}), **ADDED_SETTINGS}
    upgraded = {k: v for k, v in added.items() if k not in settings}
    if upgraded:
        data = {**data, "config": {**settings, **upgraded}}
    return data


def update_campaign_file(
    run_dir: Path, change: Callable[[dict[str, Any]], Mapping[str, Any]]
) -> dict[str, Any]:
    """Set the top-level keys ``change(data)`` returns in ``run_dir``'s ``campaign.json``;
    return the file's data as it now is.

    The file is read as it is on disk (not upgraded as :func:`read_campaign_file` reads it:
    an old run's settings stay as they were written) and written atomically, so a kill
    leaves the old file or the new one. Nothing is written when every key already holds
    its value (a resumed run does not rewrite an unchanged record).

    Raises
    ------
    ConfigError
        If the file is missing or not JSON (from :func:`~hpo.runs.record.folder.read_json`), or not
        a JSON object.
    """
    path = Path(run_dir) / CAMPAIGN_FILE
    data = read_json(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object")
    keys = dict(change(data))
    if any(data.get(k, object()) != v for k, v in keys.items()):
        data = {**data, **keys}
        write_json_atomic(path, data)
    return data


def is_run_folder(path: Path) -> bool:
    """Whether ``path`` is a run folder hpo wrote: a readable ``campaign.json`` of a format
    this hpo reads, or nothing but the lock a start left before it wrote one.

    This is what ``run --overwrite`` may delete (:func:`hpo.ownership.check_replaceable`).
    """
    path = Path(path)
    try:
        read_campaign_file(path / CAMPAIGN_FILE)
    except ConfigError:
        return {child.name for child in path.iterdir()} <= {LOCK_FILE}
    return True
