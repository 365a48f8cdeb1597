"""A fake run folder written the way a campaign writes one: shared by the runs, deploy and
cli tests, which need a run to read without paying for a real campaign."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import numpy as np

from hpo.campaign import CampaignConfig, CampaignResult
from hpo.ranking.scoring.metrics import LAYOUT_METRIC
from hpo.ranking.spaces import load_space, space_to_dict
from hpo.runs.record.campaign_file import CAMPAIGN_FORMAT
from hpo.runs.record.folder import (
    data_fingerprint,
    package_versions,
    write_json_atomic,
)

FAKE_COLLECTIONS = (
    "tile:xla",
    "layout:xla:default",
    "layout:xla:random",
    "layout:nlp:default",
    "layout:nlp:random",
)
# (budget, status) per trial, in log order: hyperband-like with eta 3 and budgets 5/15/45.
FAKE_PLAN = (
    [(5.0, "SUCCESS")] * 5
    + [(5.0, "CRASHED")]
    + [(5.0, "SUCCESS")] * 4
    + [(15.0, "SUCCESS")] * 3
    + [(45.0, "SUCCESS")] * 2
)


def _score(config: dict[str, Any], budget: float) -> float:
    """A made-up validation score: best near learning_rate 0.1, better at higher budget."""
    import math

    lr = float(config["learning_rate"])
    return (
        0.6
        - 0.2 * math.log(lr / 0.1) ** 2
        + 0.05 * math.log(budget / 5.0)
        + (0.02 if config["relative_features"] else 0.0)
    )


def build_fake_run(
    runs_dir: Path,
    data_root: Path,
    *,
    name: str = "fake",
    collections: tuple[str, ...] = FAKE_COLLECTIONS,
    finished: bool = True,
    optimizer: str = "hyperband",
    seed: int = 0,
    duplicate_and_truncate: bool = True,
) -> Path:
    """Write a realistic run folder as ``hpo run`` would, without running SMAC.

    It has no saved boosters (no model was trained): export it with ``retrain=True``.

    Configs come from the ``lambdarank_small`` space; budgets are boosting rounds 5/15/45;
    trial 6 crashed with a traceback; the last two trials re-evaluate the configs of the best
    budget-15 trials at budget 45. With ``duplicate_and_truncate``, ``trials.jsonl`` also
    holds a repeated record and a truncated last line (as after ``kill -9``).
    """
    cfg = CampaignConfig(
        data_root=data_root,
        name=name,
        collections=collections,
        space="lambdarank_small",
        runs_dir=runs_dir,
        trials=len(FAKE_PLAN),
        optimizer=optimizer,
        min_budget=5.0,
        max_budget=45.0,
        seed=seed,
        cache_dir=runs_dir / ".cache",
    )
    run_dir = runs_dir / name
    run_dir.mkdir(parents=True)
    space = load_space("lambdarank_small", seed=seed)
    created = time.time() - 3600.0
    write_json_atomic(
        run_dir / "campaign.json",
        {
            "format": CAMPAIGN_FORMAT,
            "config": cfg.to_dict(),
            "space": space_to_dict(space),
            "data_fingerprint": data_fingerprint(data_root, collections),
            "versions": package_versions(),
            "created": created,
            "layout_metric": LAYOUT_METRIC,
        },
    )
    configs = [dict(c) for c in space.sample_configuration(10)]
    configs = [{k: (v.item() if hasattr(v, "item") else v) for k, v in c.items()} for c in configs]
    # learning_rate, which drives the score, spread over its range in an order of its own: a
    # sample of 10 could tie it to another hyperparameter by chance, and importance could not
    # tell them apart (which one won changed with every hyperparameter a space gained)
    grid = np.geomspace(0.012, 0.28, 10)[[3, 7, 0, 9, 5, 1, 8, 4, 6, 2]]
    for config, lr in zip(configs, grid.tolist(), strict=True):
        config["learning_rate"] = lr
        # one objective per family (the defaults), so the truncations are inactive in every
        # trial: a value switched on and off at random over 10 configs can line up with the
        # score by chance
        for objective, truncation, default in (
            ("layout_objective", "lambdarank_truncation_level", "sampled_pairs"),
            ("tile_objective", "tile_truncation_level", "rank_xendcg"),
        ):
            if objective in config:
                config[objective] = default
                config.pop(truncation, None)
    low = sorted(range(10), key=lambda i: -_score(configs[i], 5.0))
    plan_configs = list(range(10)) + low[:3] + low[:2]
    records: list[dict[str, Any]] = []
    clock = created + 20.0
    for i, ((budget, status), ci) in enumerate(zip(FAKE_PLAN, plan_configs, strict=True)):
        config = configs[ci]
        duration = 2.0 * budget / 5.0
        ok = status == "SUCCESS"
        value = _score(config, budget)
        score = value if ok else None
        metrics = {c: value - 0.01 * j for j, c in enumerate(collections)} if ok else {}
        records.append(
            {
                "trial": i + 1,
                "config_id": ci + 1,
                "config": config,
                "budget": budget,
                "seed": seed,
                "status": status,
                "cost": 1.0 - value if ok else 10.0,
                "score": score,
                "metrics": metrics,
                "start": clock,
                "end": clock + duration,
                "duration": duration,
                "worker": f"{socket.gethostname()}:1234",
                "error": None
                if ok
                else 'Traceback (most recent call last):\n  File "x.py"\n'
                "lightgbm.basic.LightGBMError: Check failed: num_leaves > 1",
                "info": {"train_seconds": duration} if ok else {},
            }
        )
        clock += duration + 1.0
    lines = [json.dumps(r) for r in records]
    if duplicate_and_truncate:
        lines.insert(3, lines[2])  # a trial logged twice
    text = "\n".join(lines) + "\n"
    if duplicate_and_truncate:
        text += lines[-1][: len(lines[-1]) // 2]  # cut by kill -9 while appending
    (run_dir / "trials.jsonl").write_text(text)
    if finished:
        best = max((r for r in records if r["budget"] == 45.0), key=lambda r: r["score"])
        result = CampaignResult(
            run_dir=run_dir,
            incumbent=best["config"],
            trial=best["trial"],
            cost=best["cost"],
            score=best["score"],
            metrics=best["metrics"],
            budget=best["budget"],
            n_trials=len(records),
            n_crashed=1,
            finished=clock,
        )
        write_json_atomic(run_dir / "result.json", result.to_dict())
    return run_dir


def as_older_metric_run(run_dir: Path) -> Path:
    """Make ``run_dir`` read as a run made before ``campaign.json`` recorded its layout metric
    (so scored by the tau-b of the scores); returns it."""
    path = run_dir / "campaign.json"
    campaign = json.loads(path.read_text())
    del campaign["layout_metric"]
    path.write_text(json.dumps(campaign))
    return run_dir
