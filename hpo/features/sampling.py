"""Per-graph config sampling: which configs of a file become rows, decided before featurizing.

A real nlp layout graph holds up to 100,040 configs; featurizing and keeping every one of
the ~28 million layout train configs needs about 20 GB of tables
(docs/benchmarks.md#speed-and-memory). The table builder therefore keeps, per graph:

- train: up to ``train_configs`` *distinct* configs (identical configs merged into one row with
  their mean runtime). The ``keep_fastest`` fastest measured configs are always kept (the
  ranking that matters most is at the fast end); the rest are drawn without replacement with
  weights that fall from 1 (fastest) to ``exp(-FAST_BIAS)`` (slowest), so the slow end is
  still seen, only more thinly;
- valid layout graphs: up to ``valid_configs`` configs drawn uniformly, so Kendall's tau on
  the sample is an unbiased estimate of the tau on the whole graph;
- valid tile graphs and test graphs: every config (the tile top-5 score needs the true best,
  and prediction ranks every config).

Every draw is reproducible: the generator of a graph is seeded by the campaign seed and the
file's stem, so it does not depend on the order or the process in which files are extracted.
"""

from __future__ import annotations

import dataclasses
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpo.errors import ConfigError

__all__ = [
    "DEFAULT_KEEP_FASTEST",
    "DEFAULT_TRAIN_CONFIGS",
    "DEFAULT_VALID_CONFIGS",
    "FAST_BIAS",
    "SampleCaps",
    "SampleRule",
    "choose_groups",
    "priority_order",
]

#: Defaults chosen by measurement (docs/benchmarks.md#speed-and-memory): 2,000 distinct configs
#: per train graph was first the most a 24 GB machine held (about 19 GB estimated when campaigns
#: held float32 tables). Since the tables stay on disk and trials hold binned Datasets, it needs
#: about 4 GB, 4,000 about 5 GB: memory no longer binds, a trial's time (linear in rows) does,
#: so 2,000 stays and users with cores or hours to spend raise it. 1,000 valid configs is the
#: size of a real layout test graph.
DEFAULT_TRAIN_CONFIGS = 2000
DEFAULT_VALID_CONFIGS = 1000
DEFAULT_KEEP_FASTEST = 100
#: Weight of the slowest config relative to the fastest is exp(-FAST_BIAS).
FAST_BIAS = 2.0


@dataclass(frozen=True)
class SampleRule:
    """How the configs of one file become rows.

    Attributes
    ----------
    merge
        Merge identical configs into one row with their mean target (training).
    cap
        Keep at most this many rows (0: every row).
    biased
        Draw toward fast configs and always keep the ``keep_fastest`` fastest (training);
        otherwise draw uniformly.
    keep_fastest
        Fastest configs always kept by a biased draw.
    seed
        Seed of the draw (the file's stem is mixed in).
    """

    merge: bool = False
    cap: int = 0
    biased: bool = False
    keep_fastest: int = 0
    seed: int = 0

    @property
    def samples(self) -> bool:
        """Whether rows may be left out."""
        return self.cap > 0

    def token(self) -> str:
        """The part of a cache key that depends on the rule."""
        if not self.samples:
            return f"m{int(self.merge)}-all"
        kind = f"fast{self.keep_fastest}b{FAST_BIAS:g}" if self.biased else "unif"
        return f"m{int(self.merge)}-cap{self.cap}-{kind}-s{self.seed}"

    def rng(self, stem: str, stream: int = 0) -> np.random.Generator:
        """The generator of one file's draw (``stream`` 1: its uniform reference sample)."""
        return np.random.default_rng([self.seed, zlib.crc32(stem.encode()), stream])


#: The rule of test graphs and of anything that must rank every config.
EVERY_CONFIG = SampleRule()


@dataclass(frozen=True, kw_only=True)
class SampleCaps:
    """The per-graph caps of a campaign; 0 means no cap.

    Parameters
    ----------
    train_configs
        Distinct configs kept per train graph (after merging duplicates).
    valid_configs
        Configs kept per valid layout graph (uniform draw); valid tile graphs keep all.
    keep_fastest
        Fastest train configs always kept (at most ``train_configs``).
    seed
        Seed of every draw (the campaign seed).
    """

    train_configs: int = DEFAULT_TRAIN_CONFIGS
    valid_configs: int = DEFAULT_VALID_CONFIGS
    keep_fastest: int = DEFAULT_KEEP_FASTEST
    seed: int = 0

    def __post_init__(self) -> None:
        for key in ("train_configs", "valid_configs", "keep_fastest", "seed"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"sample caps: '{key}' expected an integer >= 0, found {value!r}")

    @classmethod
    def unlimited(cls) -> SampleCaps:
        """Caps that keep every config (what ``build_tables`` did before caps existed)."""
        return cls(train_configs=0, valid_configs=0, keep_fastest=0)

    def to_dict(self) -> dict[str, Any]:
        """The caps as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_settings(cls, settings: Any) -> SampleCaps:
        """The caps of a campaign: its ``train_configs``, ``valid_configs``, ``keep_fastest``
        and ``seed`` (a :class:`~hpo.campaign.config.CampaignConfig`).

        A recorded run's caps are :attr:`hpo.runs.record.settings.RunSettings.caps` (a run recorded
        before caps existed has none).
        """
        return cls(
            train_configs=settings.train_configs,
            valid_configs=settings.valid_configs,
            keep_fastest=settings.keep_fastest,
            seed=settings.seed,
        )

    def rule(self, split: str, layout: bool, merge: bool) -> SampleRule:
        """The rule of one file of ``split`` (layout or tile) whose duplicates are ``merge``-d."""
        if split == "train":
            keep = min(self.keep_fastest, self.train_configs)
            return SampleRule(
                merge=merge, cap=self.train_configs, biased=True, keep_fastest=keep, seed=self.seed
            )
        if split == "valid" and layout and not merge:
            return SampleRule(merge=False, cap=self.valid_configs, seed=self.seed)
        return SampleRule(merge=merge)


def priority_order(target: np.ndarray, rule: SampleRule, stem: str) -> np.ndarray:
    """Config indices in the order they are taken; the first ``cap`` (distinct) ones are kept.

    Biased rules put the ``keep_fastest`` fastest configs first (fastest first), then the rest
    in the order of Efraimidis-Spirakis keys ``u ** (1 / w)`` with ``w = exp(-FAST_BIAS * r)``
    and ``r`` the runtime rank scaled to [0, 1]: a weighted draw without replacement in
    O(c log c). Uniform rules use a random permutation.
    """
    c = int(target.shape[0])
    rng = rule.rng(stem)
    if not rule.biased:
        return rng.permutation(c).astype(np.int64)
    by_speed = np.argsort(target, kind="stable")
    rank = np.empty(c, dtype=np.float64)
    rank[by_speed] = np.arange(c) / max(c - 1, 1)
    # log of u ** (1 / w) = log(u) / w: larger is earlier; the fastest get +inf
    log_key = np.log(rng.random(c)) / np.exp(-FAST_BIAS * rank)
    log_key[by_speed[: rule.keep_fastest]] = np.inf
    order = np.argsort(-log_key, kind="stable")
    head = min(rule.keep_fastest, c)
    order[:head] = by_speed[:head]
    return order.astype(np.int64)


def choose_groups(
    order: np.ndarray, hashes: np.ndarray, target: np.ndarray, rule: SampleRule
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pick the rows of one file from its priority order and its config hashes.

    Returns
    -------
    tuple of numpy.ndarray
        ``(representative, config_index, mean_target, dup_count)`` per kept row, ordered by
        ``config_index``. ``representative`` is the member of the row's group taken first in
        ``order`` (whose features are computed: members of a group have equal features);
        ``config_index`` is the group's first config in the file.
    """
    c = int(order.shape[0])
    if not rule.merge:
        keep = order if not rule.samples else order[: rule.cap]
        keep = np.sort(keep)
        return keep, keep, target[keep].astype(np.float64), np.ones(keep.size, dtype=np.int64)
    _, first, inverse, counts = np.unique(
        hashes, return_index=True, return_inverse=True, return_counts=True
    )
    mean_target = np.bincount(inverse, weights=target, minlength=counts.size) / counts
    position = np.empty(c, dtype=np.int64)
    position[order] = np.arange(c)
    # the earliest position in priority order of each group, and the config found there
    best = np.full(counts.size, c, dtype=np.int64)
    np.minimum.at(best, inverse, position)
    groups = np.arange(counts.size)
    if rule.samples and counts.size > rule.cap:
        groups = np.argsort(best, kind="stable")[: rule.cap]
    groups = groups[np.argsort(first[groups], kind="stable")]
    return (
        order[best[groups]],
        first[groups].astype(np.int64),
        mean_target[groups],
        counts[groups].astype(np.int64),
    )
