"""The settings of a recorded run, typed: what every reader of a run folder takes from them.

``campaign.json`` holds the campaign's settings as a JSON object. :class:`RunSettings` is
that object read once, checked once and typed, so the readers of a run folder (history,
export, ensembles, the CLI) use its fields instead of each looking keys up with a default of
its own. Keys that older files lack are filled in before, in one place, by
:func:`hpo.runs.record.campaign_file.read_campaign_file` (with what those runs were made with).

It lives here, below :mod:`hpo.campaign`, because reading a run needs neither SMAC nor the
optimizer tables: the campaign's own :class:`hpo.campaign.CampaignConfig` (which checks
every setting of a new campaign, and which a resumed campaign re-creates) is written by a
higher stage and shares its checks (:func:`setting_error`, :func:`check_int`,
:func:`check_positive`) from here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpo.data.load import is_layout
from hpo.errors import ConfigError
from hpo.features.sampling import SampleCaps
from hpo.features.spec import FeatureSpec
from hpo.runs.record.campaign_file import CampaignRecord, read_campaign_file
from hpo.runs.record.folder import CAMPAIGN_FILE, SMAC_DIR

__all__ = [
    "FIDELITIES",
    "RunSettings",
    "SettingsView",
    "check_int",
    "check_positive",
    "read_run_campaign",
    "setting_error",
]

#: What a budget counts: boosting rounds, or configurations sampled per training graph.
FIDELITIES = ("rounds", "configs")


def setting_error(key: str, expected: str, found: Any) -> ConfigError:
    """The one-line error of a campaign setting that is out of range or of the wrong type."""
    return ConfigError(f"campaign setting '{key}': expected {expected}, found {found!r}")


def check_int(key: str, value: Any, low: int) -> int:
    """``value`` if it is an integer (not a bool) of at least ``low``, else a ConfigError."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise setting_error(key, f"an integer >= {low}", value)
    return value


def check_positive(key: str, value: Any) -> float:
    """``value`` as a float if it is a finite number > 0, else a ConfigError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < math.inf:
        raise setting_error(key, "a finite number > 0", value)
    return float(value)


def _text(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise setting_error(key, "a non-empty string", value)
    return value


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """The settings a run recorded, as its readers use them.

    Attributes
    ----------
    name
        The run's name (its folder).
    data_root, cache_dir
        The dataset the campaign read and its feature cache (``None``: none).
    collections
        The collections the campaign scored.
    space
        The search space's name or path.
    optimizer
        The optimizer's name, as recorded (older files hold legacy names).
    fidelity
        What a budget counts (:data:`FIDELITIES`).
    min_budget, max_budget
        The budget range; the largest is where the incumbent is chosen.
    seed
        The campaign's seed (trials record their own).
    cv
        Cross-validation folds, 0 when trials were scored on the valid split.
    per
        ``none`` for a single campaign, ``family`` or ``collection`` for a per-subset run.
    fixed_rounds
        Boosting rounds of every trial with the ``configs`` fidelity.
    fast_bias
        Bias toward fast configs when configs are sampled per graph.
    features
        The feature spec every model of the run was trained with.
    caps
        The per-graph config caps of its feature tables (with the campaign seed).
    """

    name: str
    data_root: Path
    cache_dir: Path | None
    collections: tuple[str, ...]
    space: str
    optimizer: str
    fidelity: str
    min_budget: float
    max_budget: float
    seed: int
    cv: int
    per: str
    fixed_rounds: int
    fast_bias: float
    features: FeatureSpec
    caps: SampleCaps

    @classmethod
    def from_dict(cls, settings: Mapping[str, Any], source: str) -> RunSettings:
        """Type and check the settings of a ``campaign.json`` (``source`` names the file).

        Raises
        ------
        ConfigError
            One line naming ``source`` and the setting, if a setting is missing, of the wrong
            type or out of range.
        """
        try:
            return cls._from_dict(settings)
        except KeyError as exc:
            raise ConfigError(f"{source}: missing campaign setting {exc}") from None
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None

    @classmethod
    def _from_dict(cls, s: Mapping[str, Any]) -> RunSettings:
        collections = s["collections"]
        if not isinstance(collections, list | tuple) or not collections:
            raise setting_error("collections", "a non-empty list", collections)
        fidelity = s["fidelity"]
        if fidelity not in FIDELITIES:
            raise setting_error("fidelity", f"one of {', '.join(FIDELITIES)}", fidelity)
        cv = s["cv"]
        if isinstance(cv, bool) or not isinstance(cv, int) or cv == 1 or cv < 0:
            raise setting_error("cv", "0 or a number of folds >= 2", cv)
        fast_bias = s["fast_bias"]
        if isinstance(fast_bias, bool) or not isinstance(fast_bias, int | float) or fast_bias < 0:
            raise setting_error("fast_bias", "a number >= 0", fast_bias)
        features = s["features"]
        try:
            spec = FeatureSpec.from_dict(dict(features))
        except (ConfigError, TypeError, ValueError) as exc:
            raise setting_error("features", "a feature spec", features) from exc
        seed = check_int("seed", s["seed"], 0)
        cache_dir = s["cache_dir"]
        return cls(
            name=_text("name", s["name"]),
            data_root=Path(_text("data_root", s["data_root"])),
            cache_dir=Path(cache_dir) if cache_dir else None,
            collections=tuple(_text("collections", c) for c in collections),
            space=_text("space", s["space"]),
            optimizer=_text("optimizer", s["optimizer"]),
            fidelity=fidelity,
            min_budget=check_positive("min_budget", s["min_budget"]),
            max_budget=check_positive("max_budget", s["max_budget"]),
            seed=seed,
            cv=cv,
            per=_text("per", s["per"]),
            fixed_rounds=check_int("fixed_rounds", s["fixed_rounds"], 1),
            fast_bias=float(fast_bias),
            features=spec,
            caps=SampleCaps(
                train_configs=check_int("train_configs", s["train_configs"], 0),
                valid_configs=check_int("valid_configs", s["valid_configs"], 0),
                keep_fastest=check_int("keep_fastest", s["keep_fastest"], 0),
                seed=seed,
            ),
        )


def read_run_campaign(run_dir: Path) -> tuple[CampaignRecord, RunSettings]:
    """A run folder's ``campaign.json`` (:func:`~hpo.runs.record.campaign_file.
    read_campaign_file`) and its settings, typed.

    Raises
    ------
    ConfigError
        If the file is missing, malformed, of a format this hpo does not read, or a setting
        is missing or invalid.
    """
    record = read_campaign_file(Path(run_dir) / CAMPAIGN_FILE)
    settings = RunSettings.from_dict(record.config, record.source)
    _check_smac_budgets(Path(run_dir), settings, record.source)
    return record, settings


def _check_smac_budgets(run_dir: Path, settings: RunSettings, source: str) -> None:
    """Refuse settings whose budgets SMAC's saved scenario (``smac/<seed>/scenario.json``,
    written as the campaign started) contradicts: ``campaign.json`` was edited, and every
    reader would show and export budgets no trial ran at. With folds, SMAC's budgets count
    them (:func:`hpo.campaign.smac.facades.make_scenario`) and are not compared."""
    if settings.cv:
        return
    for saved in sorted((run_dir / SMAC_DIR).glob("*/scenario.json")):
        try:
            scenario = json.loads(saved.read_text())
        except (OSError, ValueError):
            continue  # an unreadable scenario is refused where SMAC's state is read
        if not isinstance(scenario, dict):
            continue
        for key in ("min_budget", "max_budget"):
            value, mine = scenario.get(key), getattr(settings, key)
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue  # a single-fidelity optimizer's scenario has no budgets
            if not math.isclose(value, mine):
                raise ConfigError(
                    f"{source}: {key} {mine:g} differs from SMAC's saved scenario ({saved}: "
                    f"{value:g}); the file was edited: restore it"
                )


class SettingsView:
    """What both kinds of run read off their settings (``self.settings``), in one place.

    :class:`~hpo.runs.views.history.RunHistory` and :class:`~hpo.runs.views.nested.SubsetRun`
    inherit it, so a reader asks either kind the same questions.
    """

    settings: RunSettings
    record: CampaignRecord

    @property
    def optimizer(self) -> str:
        """Optimizer name of the campaign (every subset's, for a per-subset run)."""
        return self.settings.optimizer

    @property
    def collections(self) -> tuple[str, ...]:
        """Collections the run scored."""
        return self.settings.collections

    @property
    def fidelity(self) -> str:
        """What a budget means: ``rounds`` or ``configs``."""
        return self.settings.fidelity

    @property
    def per(self) -> str:
        """``none`` for one campaign, else ``family`` or ``collection``."""
        return self.settings.per

    @property
    def folds(self) -> int:
        """Cross-validation folds (``cv``), 0 when trials were scored on the valid split."""
        return self.settings.cv

    @property
    def older_layout_metric(self) -> str | None:
        """The layout metric the run's trials were scored by, when it is not today's and the
        run scores a layout collection (else ``None``).

        Why: such a run's layout scores (``best score``, curves) are not comparable with those
        of runs made since, where a model tied configs; listings and plots say so.
        """
        from hpo.ranking.scoring.metrics import LAYOUT_METRIC  # hpo.ranking is heavy

        used = self.record.recorded_layout_metric
        layout = any(is_layout(c) for c in self.collections)
        return used if layout and used != LAYOUT_METRIC else None
