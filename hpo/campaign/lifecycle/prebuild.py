"""Build a campaign's binned Datasets once, in a short-lived process, before its workers start.

Why: building a LightGBM Dataset holds its bin sample, up to
``bin_construct_sample_cnt`` rows of float64 values (about 0.7 GB at 200,000 rows of 301
columns), far more than the binned Dataset it makes. A worker that builds its own Datasets
peaks that much higher at least once. Here one spawned process builds every Dataset the
campaign's trials can ask for and exits, returning its memory to the machine, and the
workers (and the campaign process itself) only load the binary files
(:func:`hpo.ranking.model.datasets.binary_dataset`). In the `--scale real` runs of
docs/benchmarks.md that process peaked at 720 MiB and each worker at 495 MiB. Most of a
worker's former ~1 GB was the learned prior's fit (:mod:`hpo.ranking.prior.fit`), fixed with
this step, so what this step alone saves per worker was not measured separately.

What "every Dataset" means: one per family and per combination of the values the space can
give the hyperparameters that shape a Dataset (``max_bin`` ...; :data:`~hpo.ranking.model.ranker.
DATASET_PARAMS`), all others at their defaults, on every labeled training row at the trials'
seed. A space whose Dataset hyperparameters are numeric ranges, or have more than
:data:`MAX_VARIANTS` combinations, gets the default's Dataset only; the rest are built by the
first trial that needs them, as without this step. A wrong guess costs time, never results:
a trial whose file is missing builds it.
"""

from __future__ import annotations

import itertools
import multiprocessing
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ConfigSpace import ConfigurationSpace
from ConfigSpace.hyperparameters import CategoricalHyperparameter, Constant, OrdinalHyperparameter

from hpo.features.table.feature_table import FeatureTable, by_family
from hpo.ranking.model.ranker import DATASET_PARAMS
from hpo.runs.record.trial import Trial

__all__ = ["MAX_VARIANTS", "PrebuildPlan", "dataset_variants", "prebuild_datasets", "trial_seed"]

#: The most Dataset-shaping combinations built ahead (per family); beyond it only the default.
MAX_VARIANTS = 12


def dataset_variants(
    space: ConfigurationSpace, also: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The configurations whose Datasets a campaign over ``space`` can need, defaults elsewhere.

    The default configuration with every combination of the values of its Dataset-shaping
    hyperparameters (categorical, ordinal or constant ones); only the default when one of
    them is a numeric range or the combinations exceed :data:`MAX_VARIANTS`. ``also`` are
    configurations known to run (a warm start's baseline, the campaign's first trial): their
    Dataset-shaping values are added when no variant has them.
    """
    variants = _space_variants(space)
    default = dict(space.get_default_configuration())

    def shape(config: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(config.get(k) for k in sorted(DATASET_PARAMS))

    for config in also:
        # the default's other values with exactly the configuration's Dataset values (one
        # inactive there is absent, as in its trials)
        extra = {k: v for k, v in default.items() if k not in DATASET_PARAMS}
        extra.update({k: v for k, v in config.items() if k in DATASET_PARAMS})
        if shape(extra) not in {shape(v) for v in variants}:
            variants.append(extra)
    return variants


def _space_variants(space: ConfigurationSpace) -> list[dict[str, Any]]:
    """:func:`dataset_variants` of the space alone."""
    default = dict(space.get_default_configuration())
    choices: dict[str, Sequence[Any]] = {}
    for hp in space.values():
        if hp.name not in DATASET_PARAMS:
            continue
        if isinstance(hp, CategoricalHyperparameter):
            choices[hp.name] = list(hp.choices)
        elif isinstance(hp, OrdinalHyperparameter):
            choices[hp.name] = list(hp.sequence)
        elif isinstance(hp, Constant):
            choices[hp.name] = [hp.value]
        else:
            return [default]
    n = 1
    for values in choices.values():
        n *= len(values)
    if not choices or n > MAX_VARIANTS:
        return [default]
    names = list(choices)
    return [
        {**default, **dict(zip(names, combo, strict=True))}
        for combo in itertools.product(*(choices[k] for k in names))
    ]


def trial_seed(scenario_seed: int, trials: Sequence[Trial] = ()) -> int:
    """The seed SMAC gives this campaign's trials (its scenario is deterministic: one seed).

    A resumed campaign's trials carry it in ``trials.jsonl`` (``trials``); a new one gets
    SMAC's first draw from its intensifier's generator
    (:func:`hpo.campaign.smac.adapter.first_trial_seed`).
    """
    from hpo.campaign.smac.adapter import first_trial_seed

    for t in trials:
        if t.seed is not None:
            return t.seed
    return first_trial_seed(scenario_seed)


@dataclass(frozen=True)
class PrebuildPlan:
    """What the prebuild process does: the tables, the configurations and where to save."""

    tables: Mapping[tuple[str, str], FeatureTable]
    collections: tuple[str, ...]
    variants: tuple[dict[str, Any], ...]
    seed: int
    dataset_dir: str
    n_threads: int


def _build_all(plan: PrebuildPlan) -> tuple[int, int]:
    """Save every planned Dataset (in the prebuild process); ``(built, found)``."""
    from hpo.ranking.training import save_family_dataset

    built = found = 0
    for family, wanted in by_family(plan.collections).items():
        for hp in plan.variants:
            made = save_family_dataset(
                plan.tables[(family, "train")],
                wanted,
                hp,
                seed=plan.seed,
                dataset_dir=Path(plan.dataset_dir),
                n_threads=plan.n_threads,
            )
            built += made is True
            found += made is False
    return built, found


def _child(plan: PrebuildPlan, conn: Any) -> None:
    """The prebuild process: :func:`_build_all`, its outcome sent back on ``conn``."""
    try:
        conn.send(("ok", _build_all(plan)))
    except Exception as exc:  # noqa: BLE001 (reported to the campaign, which goes on)
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def prebuild_datasets(plan: PrebuildPlan, log: Callable[[str], None]) -> tuple[int, int]:
    """Run :func:`_build_all` in a spawned process that exits after it; ``(built, found)``.

    A spawned process (not a fork) starts without the campaign's memory and gives all of its
    own back when it ends. The tables travel as file references (memory-mapped tables pickle
    as their file's name). A failure is logged and the campaign goes on: its trials build
    what they miss, as they would without this step. An interrupted campaign (Ctrl-C,
    SIGTERM) terminates the process instead of waiting for its builds.
    """
    t0 = time.perf_counter()
    n = len(plan.variants) * len(by_family(plan.collections))
    log(f"binning the training Datasets ({n}) in a separate process (not counted in --walltime)")
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(plan, send), name="hpo-prebuild")
    try:
        proc.start()
        send.close()
        try:
            status, value = receive.recv()  # EOFError: the process died without a word
        except EOFError:
            status, value = "error", "the process ended without a result"
        proc.join()
    except OSError as exc:
        status, value = "error", f"{type(exc).__name__}: {exc}"
    finally:
        if proc.is_alive():
            proc.terminate()
            proc.join()
        receive.close()
    if status != "ok":
        log(f"binning ahead failed ({value}); trials bin their own Datasets")
        return 0, 0
    built, found = value
    log(f"binned Datasets: {built} built, {found} found, in {time.perf_counter() - t0:.1f} s")
    return built, found
