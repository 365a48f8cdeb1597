"""Cost of the layout value check that every reader of ``node_config_feat`` runs per chunk.

Times :func:`hpo.data.values.check_config_block` on one chunk of random layouts (-1 as the
suffix of each 6-dimension layout, as in real files) against the int8 cast the features do
anyway, best of 30 runs.

    python bench/bench_values.py [--configs 4096] [--config-nodes 60]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from hpo.data.values import check_config_block


def _best(fn: Callable[[], object], repeats: int = 30) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    """Print the cast's and the check's time for one chunk."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=4096, help="configs per chunk")
    parser.add_argument("--config-nodes", type=int, default=60, help="configurable nodes")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    k, nc = args.configs, args.config_nodes
    cut = rng.integers(0, 7, size=(k, nc, 3, 1))
    dims = rng.integers(0, 6, size=(k, nc, 3, 6))
    block = np.where(np.arange(6) >= cut, -1, dims).reshape(k, nc, 18).astype(np.float32)
    cast = _best(lambda: block.astype(np.int8))
    check = _best(lambda: check_config_block(Path("x.npz"), 0, block))
    mb = block.nbytes / 1e6
    print(
        f"chunk {block.shape} float32 ({mb:.1f} MB): int8 cast {cast * 1e3:.2f} ms, "
        f"check_config_block {check * 1e3:.2f} ms ({mb / check:.0f} MB/s)"
    )


if __name__ == "__main__":
    main()
