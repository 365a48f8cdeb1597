"""Every blind law (bench/laws/blind_*) still runs and writes roots hpo accepts.

The laws are run, never read (bench/laws/README.md); this only checks their output: the exact
format (``hpo data check``), no graph shared between splits, and a noise-free runtime for every
labeled file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hpo.cli import main
from hpo.data.check import check_dataset
from hpo.data.load import COLLECTIONS, list_graphs

LAWS = sorted((Path(__file__).parents[1] / "bench" / "laws").glob("blind_*/law.py"))


def test_there_are_at_least_six_blind_laws() -> None:
    assert len(LAWS) >= 6


@pytest.mark.parametrize("law", LAWS, ids=[p.parent.name for p in LAWS])
def test_a_tiny_root_of_the_law_is_accepted(
    law: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "root"
    cmd = [sys.executable, str(law), "--out", str(root), "--seed", "3", "--scale", "tiny"]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    assert main(["data", "check", str(root)]) == 0
    report = check_dataset(root, deep=False)
    assert report.shared == []
    for collection in COLLECTIONS:
        for split in ("train", "valid"):
            for path in list_graphs(root, collection, split):
                rel = path.relative_to(root).with_suffix(".npy")
                noiseless = np.load(root / "noiseless" / rel)
                with np.load(path) as npz:
                    assert noiseless.shape == npz["config_runtime"].shape
                assert np.isfinite(noiseless).all()
