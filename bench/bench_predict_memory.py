"""Peak RSS of one family model's predict on one large graph (issue 20: the prior's estimate).

Usage (two code trees, one after the other; MODEL from ``hpo export``)::

    PYTHONPATH=<tree> python bench/bench_predict_memory.py MODEL GRAPH.npz COLLECTION SCORES.npy

Prints the rows, the RSS before ``FamilyModel.predict`` and its peak (sampled every 20 ms),
and saves the scores so that two trees can be compared.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rss import PeakRss  # noqa: E402


def main() -> int:
    import hpo
    from hpo.deploy.model import load_model
    from hpo.features import extract_file

    model_dir, graph, collection, scores_out = sys.argv[1:5]
    model = load_model(Path(model_dir))
    X, *_ = extract_file(Path(graph), collection, model.spec, None)
    X = np.asarray(X)
    family = model.family_model(collection)  # routed: the collection's own blend weight
    rss = PeakRss(0.02)
    before = rss.reset()
    rss.start()
    t0 = time.perf_counter()
    scores = family.predict(X)
    seconds = time.perf_counter() - t0
    time.sleep(0.1)
    rss.stop()
    np.save(scores_out, scores)
    print(
        f"{Path(hpo.__file__).parent.parent}: rows {X.shape}, RSS before predict {before:.0f} "
        f"MiB, peak {rss.peak:.0f} MiB (+{rss.peak - before:.0f}), {seconds:.1f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
