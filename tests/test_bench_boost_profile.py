"""bench/bench_boost_profile.py: LightGBM's lambdarank pair count, and one run on a tiny table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bench_modules import load_bench


def _brute_pairs(sizes: list[int], truncation: int) -> int:
    # LightGBM's loop: for i < cnt - 1 and i < truncation, for j in i + 1 .. cnt - 1
    return sum(1 for n in sizes for i in range(n - 1) if i < truncation for _ in range(i + 1, n))


@pytest.mark.parametrize("truncation", [1, 3, 10, 100])
def test_pairs_match_lightgbms_loop(truncation: int) -> None:
    sizes = [1, 2, 5, 17, 40]
    got = load_bench("bench_boost_profile").lambdarank_pairs(np.array(sizes), truncation)
    assert got == _brute_pairs(sizes, truncation)


def test_profile_runs_on_a_tiny_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    prefix = tmp_path / "layout-train-k"
    group = np.repeat(np.arange(4), 60)
    np.save(f"{prefix}.X.npy", rng.normal(size=(len(group), 5)).astype(np.float32))
    np.save(f"{prefix}.target.npy", rng.random(len(group)))
    np.save(f"{prefix}.group.npy", group)
    module = load_bench("bench_boost_profile")
    assert module.main([str(prefix), "--rounds", "2", "--threads", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert len(rows) == 1 + len(module.VARIANTS)  # header and one row per objective
    from hpo.ranking.model.pairs import PAIR_SAMPLES
    from hpo.ranking.model.ranker import sub_group_sizes

    for row, (label, extra, group_size) in zip(rows[1:], module.VARIANTS, strict=True):
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[0] == label
        assert float(cells[2]) > 0
        trunc = extra.get("lambdarank_truncation_level")
        if extra.get("objective") == "sampled_pairs":  # each row's partners, whole graphs
            assert cells[3] == f"{len(group) * PAIR_SAMPLES / 1e6:.1f}"
            continue
        sub = sub_group_sizes(np.full(4, 60), group_size)
        want = "-" if trunc is None else f"{module.lambdarank_pairs(sub, trunc) / 1e6:.1f}"
        assert cells[3] == want
