"""The real TPU fixtures (../shared/realdata, upstream's measured test data) through every
command a user runs: ``data check``, ``run`` (tile and layout), ``export``, ``evaluate`` and
``predict``.

These files are what generated data may not be: ``node_splits`` ending with n, partial
layouts on 5-D tensors, tile graphs of 2 configs, reshape kernels with all-zero
``config_feat``, a root holding two of the five collections and train == valid. The folder
sits next to the checkout (``<repo>/../shared/realdata``), in CI as on the machines that made
it; the tests skip, saying so, only where it is absent.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from hpo.cli import main
from hpo.data.load import list_graphs, load_layout_graph
from hpo.features import FeatureSpec, extract_layout_features, layout_feature_names

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"

pytestmark = pytest.mark.skipif(
    not (REALDATA / "npz").is_dir(),
    reason=f"the real TPU fixtures are not here ({REALDATA} has no npz/ folder)",
)

PRESENT = ("tile:xla", "layout:xla:random")


def test_data_check_accepts_every_real_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", str(REALDATA)]) == 0
    out = capsys.readouterr().out
    for collection in PRESENT:
        assert collection in out


def test_real_layout_features_are_finite_and_see_the_partial_layouts() -> None:
    graph = load_layout_graph(list_graphs(REALDATA, "layout:xla:random", "valid")[0])
    assert graph.node_splits[0, -1] == graph.n_nodes  # upstream's form, ending with n
    spec = FeatureSpec()
    X, hashes = extract_layout_features(graph, "layout:xla:random", spec)
    assert X.shape[0] == graph.n_configs == 112
    assert np.isfinite(X).all()
    assert len(np.unique(hashes)) == 91  # the README's distinct configs
    # "off the default" counted by hand: a set output block that contradicts the node's
    # default layout in a position it fixes (a -1 next to fixed dims is left to the compiler)
    with np.load(graph.path) as npz:
        out = npz["node_config_feat"][..., 0:6].astype(int)
    ids = graph.node_config_ids
    rank = (graph.node_feat[ids, 21:27] > 0).sum(axis=1)
    default = graph.node_feat[ids, 134:140].astype(int)
    expected = np.zeros(graph.n_configs)
    for c in range(graph.n_configs):
        for j in range(len(ids)):
            fixed = [p for p in range(rank[j]) if out[c, j, p] >= 0]
            expected[c] += any(out[c, j, p] != default[j, p] for p in fixed)
    assert (out[..., 2] == -1).mean() > 0.5  # most blocks are partial (or default)
    column = X[:, layout_feature_names(spec).index("n_nondefault_out")]
    np.testing.assert_array_equal(column, expected)
    assert len(np.unique(expected)) > 1  # reading every set block as a change gives 57 always


def test_every_command_on_the_real_fixtures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    argv = [
        "run", "--data", str(REALDATA), "--runs-dir", str(runs), "--name", "real",
        "--space", "lambdarank_small", "--optimizer", "random", "--trials", "2",
        "--min-budget", "8", "--max-budget", "16", "--threads", "1", "--quiet",
    ]  # fmt: skip
    # realdata's train files are copies of its valid ones: refused, then run with the note
    assert main(argv) == 2
    assert "16 valid/test graph(s) are also in train" in capsys.readouterr().err
    assert not (runs / "real").exists()
    # the default --collection all runs the two collections the root holds
    assert main([*argv, "--allow-overlap"]) == 0
    out = capsys.readouterr().out
    assert (
        "has no train data for layout:xla:default, layout:nlp:default, layout:nlp:random; "
        "running tile:xla, layout:xla:random"
    ) in out
    assert "note: 16 valid/test graph(s) are also in train (--allow-overlap)" in out
    campaign = json.loads((runs / "real" / "campaign.json").read_text())
    assert campaign["config"]["collections"] == list(PRESENT)

    model = tmp_path / "model"
    assert main(["export", "real", "--runs-dir", str(runs), "--out", str(model)]) == 0
    capsys.readouterr()

    assert main(["evaluate", "--model", str(model), "--data", str(REALDATA), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["collections"]) == list(PRESENT)
    assert report["collections"]["tile:xla"]["graphs"] == 15
    assert report["collections"]["layout:xla:random"]["graphs"] == 1
    assert all(np.isfinite(v["metric"]) for v in report["collections"].values())
    assert report["absent"] == []  # the model serves only what it was tuned on

    sub = tmp_path / "s.csv"
    args = ["--model", str(model), "--data", str(REALDATA), "--split", "valid"]
    assert main(["predict", *args, "--out", str(sub)]) == 0
    with open(sub, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 16
    layout = [r for r in rows if r["ID"].startswith("layout:xla:random:")]
    assert len(layout) == 1
    assert sorted(map(int, layout[0]["TopConfigs"].split(";"))) == list(range(112))
    tile = {r["ID"]: r["TopConfigs"].split(";") for r in rows if r["ID"].startswith("tile:")}
    # at most 5 per kernel; the 2-config kernels list both
    assert sorted(len(v) for v in tile.values())[:3] == [2, 2, 2]
    assert max(len(v) for v in tile.values()) == 5
