"""One feature group on and off, judged over a family of laws (issue 19): the default's blend.

For every law (as :mod:`bench_laws`: a tuning root and an unseen root of the same law), the
space's default configuration is trained twice at ``--rounds`` (booster seed 0, 1 thread):
with the group ``--group`` on (today's product) and switched off (``use_group_<name>`` false:
no tree splits on it and the learned prior does not read it, which is the product before the
group existed). A group whose columns only the learned prior reads (``is_prior_only``) leaves
the trees as they are, so it is trained once and the ``off`` prior is solved from the same
sums without the group's columns (as a campaign's trial with the switch off does). Each is
scored on every labeled graph of the unseen root, as a share of the
noise ceiling, per layout collection:

- ``on`` / ``off``: the blend at the space's default weights;
- ``on, default x3`` / ``off, default x3``: the default collections' weight times 3 (the
  random collections' unchanged), a lead for nlp:default;
- ``on, trees`` / ``off, trees``: the blend off (the booster alone);
- ``on, prior`` / ``off, prior``: the learned prior alone.

Then the median and the worst over laws, and each setting's largest loss to the better of
``off`` and ``off, trees`` (the product before, prior on or off).

    python bench/bench_feature_group.py --work /tmp/bench/laws --laws 31,32,33,34 \\
        --group kernel_padding --json /tmp/bench/group_a.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hpo.features import is_prior_only
from hpo.features.groups import GROUP_PREFIX, GROUPS, group_of
from hpo.ranking.model.fit_options import FitOptions
from hpo.ranking.prior.blend import BLEND_KEY, collection_weights
from hpo.ranking.prior.fit import family_equations
from hpo.ranking.scoring.valid import select_rows
from hpo.ranking.spaces import DEFAULT_SPACE, load_space
from hpo.ranking.training import train_family
from hpo.synth.law_family import read_law

sys.path.insert(0, str(Path(__file__).parent))
from bench_ablation import noise_ceiling  # noqa: E402
from bench_laws import LABELED, LAYOUT  # noqa: E402
from bench_prior_columns import (  # noqa: E402
    default_collections_tripled,
    law_tables,
    run_laws,
    summarize,
    unseen_shares,
)

#: The weight that scores the prior alone (the trees' standardized score is then a tie-break).
ALONE = 1e6


def judge(
    law: str, work: Path, group: str, rounds: int, seed: int, scale: str = "small"
) -> dict[str, Any]:
    """Shares of the ceiling of every setting on one law's unseen graphs."""
    unseen, train, valid, other = law_tables(work, law, scale)
    default = dict(load_space(DEFAULT_SPACE).get_default_configuration())
    weights = collection_weights(default, LAYOUT)
    tripled = default_collections_tripled(weights)
    ceiling = noise_ceiling(unseen, read_law(unseen) or "first-order", LABELED)
    shares: dict[str, dict[str, float]] = {}
    names = train.feature_names
    mine = np.array([group_of(n) == group for n in names])
    prior_only = bool(mine.any()) and all(is_prior_only(n) for n in np.asarray(names)[mine])
    for state, on in (("on", True), ("off", False)):
        hp = {**default, BLEND_KEY: True, f"{GROUP_PREFIX}{group}": on}
        if on or not prior_only:
            fit = train_family(train, valid, LAYOUT, hp, rounds=rounds, seed=seed,
                               options=FitOptions(n_threads=1))  # fmt: skip
            prior = fit.prior
        else:  # the same trees; the prior of the live columns without the group's
            every = np.arange(len(names))
            equations = family_equations([(train, select_rows(train, LAYOUT))], every)
            assert equations is not None
            prior = equations.solve(fit.live[~mine[fit.live]])
        settings: dict[str, float | dict[str, float]] = {
            state: weights,
            f"{state}, default x3": tripled,
            f"{state}, trees": 0.0,
            f"{state}, prior": {c: ALONE for c in LAYOUT},
        }
        for label, weight in settings.items():
            shares[label] = unseen_shares(fit, other, prior, weight, ceiling)
    return {"shares": shares}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for roots and cache")
    parser.add_argument("--laws", default="31,32,33,34,35,36,37,38")
    parser.add_argument("--group", required=True, choices=GROUPS)
    parser.add_argument("--rounds", type=int, default=672)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, default=None, help="results, resumed if present")
    args = parser.parse_args()
    results = run_laws(
        args.laws, args.json, lambda law: judge(law, args.work, args.group, args.rounds, args.seed)
    )
    summarize(results, before=("off", "off, trees"))


if __name__ == "__main__":
    main()
