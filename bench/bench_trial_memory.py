"""Where a trial's memory goes: RSS around each stage of ``train_family`` (issue 20).

Usage::

    PYTHONPATH=<tree> python bench/bench_trial_memory.py RUN_DIR [--trials 2]

Rebuilds the objective of the campaign in ``RUN_DIR`` (its ``campaign.json``: data, caps,
cache; the tables come from the cache), then replays its first trials (configuration, seed,
budget from ``trials.jsonl``) in this process. RSS is sampled every 50 ms; each stage prints
its RSS at start, its peak and its RSS at the end. Stages: binning or loading the Dataset
(``_bin_parts``), the learned prior's equations (``family_equations``), boosting
(``fit_dataset``), valid prediction (``blended_predict``) and scoring (``graph_metrics``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rss import PeakRss  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--trials", type=int, default=2)
    a = p.parse_args(argv)

    import hpo.ranking.model.ranker as ranker
    import hpo.ranking.training as training
    from hpo.campaign.config import CampaignConfig
    from hpo.campaign.objective import build_objective
    from hpo.ranking.model.datasets import DatasetCache

    rss = PeakRss(0.05).start()

    def watched(owner: Any, name: str) -> None:
        inner = getattr(owner, name)

        def stage(*args: Any, **kwargs: Any) -> Any:
            start = rss.reset()
            t0 = time.perf_counter()
            out = inner(*args, **kwargs)
            end = rss.now()
            print(
                f"   {name:18s} start {start:6.0f}  peak {rss.peak:6.0f}  end {end:6.0f} MiB"
                f"  {time.perf_counter() - t0:5.1f} s",
                flush=True,
            )
            return out

        setattr(owner, name, stage)

    for name in ("family_equations", "blended_predict", "graph_metrics", "_bin_parts"):
        watched(training, name)
    watched(ranker.LambdaRanker, "fit_dataset")

    saved = json.loads((a.run_dir / "campaign.json").read_text())["config"]
    cfg = CampaignConfig.from_dict(saved, str(a.run_dir / "campaign.json"))
    objective, scatter = build_objective(cfg, n_jobs=1)
    tables = scatter["tables"] if scatter else objective.tables
    records = [json.loads(line) for line in (a.run_dir / "trials.jsonl").read_text().splitlines()]
    cache = DatasetCache()
    for r in records[: a.trials]:
        print(f"trial {r['trial']}: budget {r['budget']:g}", flush=True)
        objective(r["config"], seed=r["seed"], budget=r["budget"], tables=tables, datasets=cache)
    rss.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
