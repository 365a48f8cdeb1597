from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graphs import write_layout, write_root

from hpo.cli import main
from hpo.data.check import check_dataset, summary_rows
from hpo.errors import UsageError


def test_clean_root_passes(tmp_path: Path) -> None:
    report = check_dataset(write_root(tmp_path))
    assert report.ok
    assert not report.problems
    rows = summary_rows(report)
    assert len(rows) == 15
    assert rows[0][:3] == ["tile:xla", "train", "2"]


def test_bad_files_are_each_reported_and_others_checked(tmp_path: Path) -> None:
    root = write_root(tmp_path)
    folder = root / "npz/layout/xla/random/train"
    truncated = folder / "g0.npz"
    truncated.write_bytes(truncated.read_bytes()[:300])
    write_layout(folder / "g1.npz", node_opcode=np.ones(40, dtype=np.float32))
    write_layout(root / "npz/layout/nlp/default/valid/g0.npz", config_runtime=None)
    report = check_dataset(root)
    assert not report.ok
    assert len(report.problems) == 3
    assert any("g0.npz: not a readable .npz archive" in p for p in report.problems)
    assert any(
        "key 'node_opcode': expected integer dtype, found float32" in p for p in report.problems
    )
    assert any("missing key 'config_runtime'" in p for p in report.problems)
    good = [s for s in report.summaries if s.graphs]
    assert sum(s.graphs for s in good) == 30 - 3


def test_out_of_range_layout_value_found_by_deep_check(tmp_path: Path) -> None:
    root = write_root(tmp_path)
    path = root / "npz/layout/nlp/random/valid/g1.npz"
    with np.load(path) as z:
        arrays = dict(z)
    arrays["node_config_feat"][3, 0, 0] = 9
    np.savez(path, **arrays)
    assert check_dataset(root, deep=False).ok
    report = check_dataset(root)
    assert report.problems == [
        f"{path}: key 'node_config_feat': expected dimension indices in -1..5, found 9 in config 3"
    ]


def test_not_a_dataset_root(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a TpuGraphs dataset root"):
        check_dataset(tmp_path)


def test_cli_check_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = write_root(tmp_path)
    assert main(["data", "check", str(root)]) == 0
    path = root / "npz/tile/xla/valid/g1.npz"
    path.write_bytes(b"not a zip")
    assert main(["data", "check", str(root)]) == 1
    err = capsys.readouterr().err
    assert f"hpo: bad file: {path}: not a readable .npz archive" in err


def test_cli_check_missing_root(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", str(tmp_path / "nope")]) == 2
    assert "not a TpuGraphs dataset root" in capsys.readouterr().err


def test_cli_synth_tiny_then_check_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "tiny"
    assert main(["data", "synth", "--out", str(root), "--scale", "tiny", "--quiet"]) == 0
    assert "wrote 40 files" in capsys.readouterr().out
    assert main(["data", "check", str(root)]) == 0
    out = capsys.readouterr().out
    assert "layout:nlp:random" in out
    assert "tile:xla" in out
