from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from graphs import write_layout, write_root, write_tile

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


@pytest.mark.filterwarnings("error")  # the NaN must not reach an int64 cast
def test_bad_runtimes_are_one_line_each_and_test_placeholders_pass(tmp_path: Path) -> None:
    root = write_root(tmp_path)
    nan_tile = root / "npz/tile/xla/train/g0.npz"
    nan_runtime = np.arange(1000.0, 1020.0)
    nan_runtime[[4, 9, 17]] = np.nan
    write_tile(nan_tile, c=20, config_runtime=nan_runtime)
    zero_norm = root / "npz/tile/xla/valid/g1.npz"
    write_tile(zero_norm, c=20, config_runtime_normalizers=np.zeros(20, dtype=np.int64))
    inf_layout = root / "npz/layout/xla/default/valid/g0.npz"
    inf_runtime = np.full(25, 1e6)
    inf_runtime[3] = np.inf
    write_layout(inf_layout, c=25, config_runtime=inf_runtime)
    write_tile(  # test-split placeholders: unlabeled, not bad
        root / "npz/tile/xla/test/g0.npz",
        c=20,
        config_runtime=np.zeros(20, dtype=np.int64),
        config_runtime_normalizers=np.ones(20, dtype=np.int64),
    )
    write_layout(root / "npz/layout/nlp/random/test/g1.npz", c=25, config_runtime=np.zeros(25))
    report = check_dataset(root)
    assert sorted(report.problems) == sorted(
        [
            f"{nan_tile}: key 'config_runtime': expected whole positive nanoseconds, "
            "found 3 NaN values at configs 4, 9, 17",
            f"{zero_norm}: key 'config_runtime_normalizers': expected whole positive "
            "nanoseconds, found 20 zero values at configs 0, 1, 2, 3, 4, ...",
            f"{inf_layout}: key 'config_runtime': expected whole positive nanoseconds, "
            "found 1 +inf value at config 3",
        ]
    )
    by_split = {(s.collection, s.split): s for s in report.summaries}
    assert by_split["tile:xla", "train"].bad == 1
    assert by_split["tile:xla", "train"].graphs == 1  # the other file was still checked
    assert by_split["tile:xla", "test"].unlabeled == 1  # write_root labels its test files
    assert by_split["layout:nlp:random", "test"].unlabeled == 1
    assert by_split["layout:nlp:random", "test"].bad == 0


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


def test_upstream_form_passes_and_a_partial_root_is_summarised(tmp_path: Path) -> None:
    # node_splits ending with n and layouts fixing only two dims, as every real file has them,
    # in a root that holds one collection (as ../shared/realdata holds two)
    folder = tmp_path / "npz/layout/xla/random/train"
    feat = np.full((6, 8, 18), -1.0, dtype=np.float32)
    feat[:, :, 0:2] = [1, 0]
    feat[:3, :, 6:8] = [0, 1]
    write_layout(folder / "g.npz", n=40, c=6, node_config_feat=feat,
                 node_splits=np.array([[0, 16, 40]], dtype=np.int64))  # fmt: skip
    write_layout(folder / "bad.npz", n=40, node_splits=np.array([[0, 41]], dtype=np.int64))
    report = check_dataset(tmp_path)
    assert [(s.collection, s.split, s.graphs, s.bad) for s in report.summaries] == [
        ("layout:xla:random", "train", 1, 1)
    ]
    assert len(report.problems) == 1
    assert "bad.npz: key 'node_splits': expected boundaries in [0, 40]" in report.problems[0]


def test_labeled_graphs_without_a_ranking_are_named_not_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Equal runtimes, or one config: nothing to order, which scoring once counted as tau 0.
    data check names them (a warning, as shared graphs are) and exits 0."""
    root = write_root(tmp_path)
    flat = write_layout(
        root / "npz/layout/xla/random/valid/g0.npz", c=25, config_runtime=np.full(25, 700)
    )
    single = write_tile(root / "npz/tile/xla/train/g1.npz", c=1, seed=98)
    write_tile(  # test placeholders are unlabeled: no ranking is expected of them
        root / "npz/tile/xla/test/g0.npz",
        c=20,
        seed=99,
        config_runtime=np.zeros(20, dtype=np.int64),
        config_runtime_normalizers=np.ones(20, dtype=np.int64),
    )
    report = check_dataset(root)
    assert report.ok
    assert report.unranked == [
        f"{single}: one config, nothing to order",
        f"{flat}: every one of its 25 configs has the runtime 700",
    ]
    assert main(["data", "check", str(root)]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"hpo: no ranking: {single}: one config, nothing to order",
        f"hpo: no ranking: {flat}: every one of its 25 configs has the runtime 700",
        "hpo: warning: 2 labeled graph(s) carry no ranking: no prediction can order their "
        "configs, so run, export and evaluate leave them out of the means",
    ]
