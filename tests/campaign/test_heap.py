from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from hpo.campaign.heap import release_freed_memory


def _rss_mib() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_freed_blocks_below_a_live_one_go_back_to_the_system() -> None:
    if not Path("/proc/self/statm").exists() or not release_freed_memory():
        pytest.skip("needs glibc's malloc_trim and /proc (Linux)")
    # 3,000 blocks of 64 KB sit on the heap (under glibc's mmap threshold); the last one stays
    # alive, so freeing the others leaves their pages inside the heap, where free() keeps them
    blocks = [np.ones(8_000) for _ in range(3_000)]
    del blocks[:-1]
    kept = _rss_mib()
    assert release_freed_memory()
    assert kept - _rss_mib() > 100, "malloc_trim returned less than half of 183 MiB freed"
    assert blocks[0].sum() == 8_000
