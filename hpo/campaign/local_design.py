"""Initial-design configurations near the baseline: one hyperparameter of it changed each.

Why: the packaged spaces' default configuration was chosen over many laws (bench/README.md,
"Defaults judged over a family of laws"), and a short campaign takes only a few
configurations to its largest budget. In 4-minute campaigns on 8 laws, those besides the
baseline were the same few configurations on every law, drawn at random or picked early,
each changing 10-15 hyperparameters of the default at once, and none beat it
(bench/README.md, "A 4-minute campaign on 8 laws"). A neighbour changes one hyperparameter,
so it keeps what made the baseline good and asks whether one setting should move for this
data.

The neighbours are ConfigSpace's one-exchange neighbourhood of the baseline (the moves
SMAC's own local search makes), one per hyperparameter in a seeded random order. A
neighbour that changes nothing the campaign's collections train or blend with (a tile key in
a layout-only campaign, the blend in a tile-only one, say) is skipped: it would train the
baseline again (all of a campaign's trials share its seed) and spend a trial for nothing.
The list depends only on the baseline, the collections and the seed, so a resumed campaign
gets the same design (with the same ConfigSpace: its neighbourhood draws are its own).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ConfigSpace import Configuration
from ConfigSpace.util import get_one_exchange_neighbourhood

from hpo.data.load import is_layout
from hpo.ranking.blend import estimate_weight
from hpo.ranking.hyperparameters import (
    BLEND_SETTINGS,
    TILE_OBJECTIVE_KEY,
    TRAINED_WITHOUT,
    TRUNCATION_KEY,
    family_hyperparameters,
)

__all__ = ["local_configs", "trained_view"]


def trained_view(config: Mapping[str, Any], collection: str) -> tuple[dict[str, Any], float]:
    """What ``collection`` is trained and blended with under ``config``.

    The family's hyperparameters (the tile keys resolved or dropped:
    :func:`hpo.ranking.hyperparameters.family_hyperparameters`; for tile without LightGBM's
    truncation unless it trains with lambdarank) and the collection's blend weight
    (:func:`hpo.ranking.blend.estimate_weight`; 0 for tile, which is never blended). Two
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
        config.origin = "Local design: a neighbour of the baseline"
        out.append(config)
        if len(out) == n:
            break
    return out
