"""Initial-design configurations near the baseline: one hyperparameter of it changed each.

Why: the packaged spaces' default configuration was chosen over many laws
(docs/benchmarks.md#defaults-over-a-family-of-laws), and a short campaign takes only a few
configurations to its largest budget. In 4-minute campaigns on 8 laws, those besides the
baseline were the same few configurations on every law, drawn at random or picked early,
each changing 10-15 hyperparameters of the default at once, and none beat it
(docs/benchmarks.md#defaults-over-a-family-of-laws). A neighbour changes one hyperparameter,
so it keeps what made the baseline good and asks whether one setting should move for this
data.

The neighbours are ConfigSpace's one-exchange neighbourhood of the baseline (the moves
SMAC's own local search makes), one per hyperparameter in a seeded random order. A
neighbour that changes nothing the campaign's collections train or blend with (a tile key in
a layout-only campaign, the blend in a tile-only one, say) is skipped: it would train the
baseline again (all of a campaign's trials share its seed) and spend a trial for nothing.
The list depends only on the baseline, the collections and the seed. It is saved in
``campaign.json`` (key ``local_design``) when the campaign starts, and a resumed campaign
reads it from there (:func:`saved_local_design`): ConfigSpace's neighbourhood draws are its
own, so one upgraded between the start and the resume could otherwise give another design.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ConfigSpace import Configuration, ConfigurationSpace
from ConfigSpace.util import get_one_exchange_neighbourhood

from hpo.data.load import is_layout
from hpo.errors import ConfigError
from hpo.ranking.hyperparameters import (
    BLEND_SETTINGS,
    TILE_OBJECTIVE_KEY,
    TRAINED_WITHOUT,
    TRUNCATION_KEY,
    family_hyperparameters,
)
from hpo.ranking.prior.blend import estimate_weight
from hpo.runs.record.campaign_file import CampaignRecord
from hpo.runs.record.folder import jsonable

__all__ = [
    "LOCAL_DESIGN_KEY",
    "local_configs",
    "local_design_record",
    "saved_local_design",
    "trained_view",
]

#: The key of ``campaign.json`` that holds the neighbours, as plain values.
LOCAL_DESIGN_KEY = "local_design"
#: SMAC's ``origin`` of a neighbour (shown in SMAC's logs).
_ORIGIN = "Local design: a neighbour of the baseline"


def trained_view(config: Mapping[str, Any], collection: str) -> tuple[dict[str, Any], float]:
    """What ``collection`` is trained and blended with under ``config``.

    The family's hyperparameters (the tile keys resolved or dropped:
    :func:`hpo.ranking.hyperparameters.family_hyperparameters`; for tile without LightGBM's
    truncation unless it trains with lambdarank) and the collection's blend weight
    (:func:`hpo.ranking.prior.blend.estimate_weight`; 0 for tile, which is never blended). Two
    configurations with equal views train the same booster for the collection (values
    compare with ``==``, so ConfigSpace's numpy scalars equal plain numbers).
    """
    plain = {k: v for k, v in config.items() if k not in BLEND_SETTINGS}
    family = family_hyperparameters(plain, [collection])
    if not is_layout(collection):
        # tile is never blended, and a listwise objective has no truncation
        if family.get(TILE_OBJECTIVE_KEY, TRAINED_WITHOUT[TILE_OBJECTIVE_KEY]) != "lambdarank":
            family.pop(TRUNCATION_KEY, None)
        return family, 0.0
    return family, estimate_weight(config, collection)


def local_configs(
    baseline: Configuration,
    n: int,
    collections: Sequence[str],
    seed: int,
) -> list[Configuration]:
    """Up to ``n`` distinct neighbours of ``baseline``, each changing what some collection
    of ``collections`` trains with.

    Fewer than ``n`` only when the space has fewer such moves (one per hyperparameter, and
    one per other choice of a categorical).
    """
    if n <= 0:
        return []
    base = dict(baseline)
    views = {c: trained_view(base, c) for c in collections}
    out: list[Configuration] = []
    # one neighbour per hyperparameter (per other choice of a categorical), each unlike the
    # baseline: no two are equal
    for config in get_one_exchange_neighbourhood(baseline, seed=seed, num_neighbors=1):
        if all(trained_view(dict(config), c) == views[c] for c in collections):
            continue
        # ConfigSpace gives a flipped boolean as numpy's bool, which SMAC's saved meta (its
        # initial design's additional configurations) cannot write as JSON: plain values
        plain = Configuration(baseline.config_space, values=jsonable(dict(config)))
        plain.origin = _ORIGIN
        out.append(plain)
        if len(out) == n:
            break
    return out


def local_design_record(
    baseline: Configuration, n: int, collections: Sequence[str], seed: int
) -> tuple[dict[str, Any], ...] | None:
    """The ``local_design`` of a new campaign's ``campaign.json`` (the :func:`local_configs`
    as plain values); ``None`` when ``n`` is 0."""
    if n <= 0:
        return None
    local = local_configs(baseline, n, collections, seed)
    return tuple(jsonable(dict(c)) for c in local)


def saved_local_design(
    saved: CampaignRecord,
    space: ConfigurationSpace,
    baseline: Configuration,
    n: int,
    collections: Sequence[str],
    seed: int,
) -> list[Configuration]:
    """The neighbours a campaign runs: those its ``campaign.json`` saved, else (a run started
    before they were saved) :func:`local_configs` as it computed them then.

    Raises
    ------
    ConfigError
        If a configuration does not fit the run's space (a malformed list is refused as the
        record is read).
    """
    if saved.local_design is None:
        return local_configs(baseline, n, collections, seed)
    where = f"{saved.source}: key '{LOCAL_DESIGN_KEY}'"
    out = []
    for values in saved.local_design:
        try:
            config = Configuration(space, values=values)
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(f"{where}: {exc}") from None
        config.origin = _ORIGIN
        out.append(config)
    return out
