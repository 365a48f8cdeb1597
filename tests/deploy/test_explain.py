"""``hpo explain``: feature groups' contributions and, on the real U-Net (../shared/realdata),
the nodes whose layouts set its runtime levels.

The model is trained as ``hpo export --retrain`` trains one, on a tiny budget (45 rounds of
112 configs): a run whose incumbent may split on small leaves (the real file has one graph).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from fake_runs import build_fake_run

from hpo.cli import main
from hpo.data.load import list_graphs, load_layout_graph
from hpo.deploy.explain import TOGETHER, explain_configs
from hpo.deploy.explain.counterfactual import config_blocks, switched_together
from hpo.deploy.export import export_model
from hpo.deploy.model import ExportedModel, load_model
from hpo.deploy.retrain import ExportOptions
from hpo.errors import UsageError
from hpo.features import extract_file, extract_layout_blocks

REALDATA = Path(__file__).resolve().parents[2].parent / "shared" / "realdata"
UNET = "main_10904"
LAYOUT = "layout:xla:random"

pytestmark = pytest.mark.skipif(
    not (REALDATA / "npz").is_dir(),
    reason=f"the real TPU fixtures are not here ({REALDATA} has no npz/ folder)",
)

#: An incumbent that can split on a graph of 112 configs (the fake run's may not).
INCUMBENT = {
    "estimate_blend": False,
    "feature_fraction": 1.0,
    "lambdarank_truncation_level": 256,
    "learning_rate": 0.1,
    "min_data_in_leaf": 5,
    "num_leaves": 15,
    "relative_features": True,
    "tile_label_levels": 31,
    "tile_objective": "rank_xendcg",
}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> ExportedModel:
    base = tmp_path_factory.mktemp("explain")
    folder = build_fake_run(base / "runs", REALDATA, name="real", collections=("tile:xla", LAYOUT))
    result = json.loads((folder / "result.json").read_text())
    result.update(incumbent=INCUMBENT, trial=None)
    (folder / "result.json").write_text(json.dumps(result))
    options = ExportOptions(cache_dir=base / "cache", n_jobs=1)
    return load_model(export_model(folder, base / "model", retrain=True, options=options))


def _levels() -> tuple[int, int]:
    """A config of the fastest runtime level of the U-Net and one of the slowest."""
    runtime = load_layout_graph(list_graphs(REALDATA, LAYOUT, "valid")[0]).target
    return int(np.argmin(runtime)), int(np.argmax(runtime))


def test_three_nodes_named_first_account_for_half_the_predicted_difference(
    model: ExportedModel,
) -> None:
    a, b = _levels()
    e = explain_configs(model, REALDATA, UNET, a, b)
    assert e.runtime_a is not None
    assert e.runtime_b is not None
    assert e.runtime_b - e.runtime_a > 1e7  # 910.9 ms against 925.6 ms
    assert e.difference > 0  # the model predicts B slower
    assert e.nodes is not None
    assert len(e.nodes) >= TOGETHER
    first = [n.position for n in e.nodes[:TOGETHER]]
    assert e.together_nodes == first
    together = switched_together(
        model.family_model(LAYOUT), e.path, LAYOUT, model.spec, a, b, first
    )
    assert together == pytest.approx(e.together)
    assert together >= 0.5 * e.difference
    # the README: the levels are set by the output layouts of a handful of convolutions
    assert all(n.opcode == "convolution" for n in e.nodes[:TOGETHER])
    assert all(n.shape and n.layout_a and n.layout_a.keys() == n.layout_b.keys() for n in e.nodes)
    moves = [n.effect for n in e.nodes]
    assert moves == sorted(moves, reverse=True)  # largest move towards B first


def test_groups_add_up_to_the_trees_difference(model: ExportedModel) -> None:
    a, b = _levels()
    e = explain_configs(model, REALDATA, UNET, a, b)
    assert sum(g.difference for g in e.groups) == pytest.approx(e.difference)
    assert abs(e.groups[0].difference) == max(abs(g.difference) for g in e.groups)


def test_counterfactual_rows_of_the_files_own_configs_are_its_rows(model: ExportedModel) -> None:
    path = list_graphs(REALDATA, LAYOUT, "valid")[0]
    X, _, _, _, _ = extract_file(path, LAYOUT, model.spec)
    picked = (0, 5, 111)
    rows = extract_layout_blocks(path, LAYOUT, model.spec, config_blocks(path, picked))
    np.testing.assert_allclose(rows, X[list(picked)], rtol=1e-6)


def test_a_tile_graph_gets_groups_and_no_nodes(model: ExportedModel) -> None:
    stem = list_graphs(REALDATA, "tile:xla", "valid")[-1].stem
    e = explain_configs(model, REALDATA, stem, 0, 1)
    assert e.collection == "tile:xla"
    assert e.nodes is None
    assert sum(g.difference for g in e.groups) == pytest.approx(e.difference)


def test_explain_command(model: ExportedModel, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _levels()
    argv = ["explain", "--model", str(model.path), "--data", str(REALDATA), "--graph", UNET]
    assert main([*argv, "--configs", f"{a},{b}"]) == 0
    out = capsys.readouterr().out
    assert "Feature groups" in out
    assert "Nodes whose layout differs" in out
    assert "convolution" in out
    assert main([*argv, "--configs", f"{a},{b}", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["nodes"][0]["opcode"] == "convolution"
    assert shown["difference"] > 0
    assert main([*argv, "--configs", "1"]) == 2
    assert "expected two config indices A,B" in capsys.readouterr().err
    assert main([*argv, "--configs", "0,500"]) == 2
    assert "config 500 out of range (it has 112 configs)" in capsys.readouterr().err
    assert main([*argv, "--configs", "-1,0"]) == 2  # probe2 #23: "expected one argument"
    assert "config -1 out of range (it has 112 configs)" in capsys.readouterr().err


def test_an_unknown_graph_is_refused(model: ExportedModel) -> None:
    with pytest.raises(UsageError, match="no graph 'nope' under"):
        explain_configs(model, REALDATA, "nope", 0, 1)


def test_configs_of_one_score_are_said_to_tie(
    model: ExportedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    """probe2 #84: a config against itself was 'ranked 1 / ranked 2', 'B predicted faster'."""
    stem = list_graphs(REALDATA, "tile:xla", "valid")[0].stem
    e = explain_configs(model, REALDATA, stem, 3, 3)
    assert e.tied
    assert e.rank_a == e.rank_b
    argv = ["explain", "--model", str(model.path), "--data", str(REALDATA), "--graph", stem]
    assert main([*argv, "--configs", "3,3"]) == 0
    out = capsys.readouterr().out
    assert f"configs 3 and 3 tied at rank {e.rank_a + 1} (the same model score)" in out
    assert "no order predicted between them" in out
    assert "B predicted" not in out


def test_a_tile_graph_shows_its_runtimes_over_the_default_tiling(
    model: ExportedModel, capsys: pytest.CaptureFixture[str]
) -> None:
    """probe3 N14: a tile file's runtimes over its normalizer were printed as ns ('0.000 ms')."""
    stem = list_graphs(REALDATA, "tile:xla", "valid")[0].stem
    e = explain_configs(model, REALDATA, stem, 0, 1)
    argv = ["explain", "--model", str(model.path), "--data", str(REALDATA), "--graph", stem]
    assert main([*argv, "--configs", "0,1"]) == 0
    out = capsys.readouterr().out
    assert f"measured {e.runtime_a:.4g}x and {e.runtime_b:.4g}x the default tiling's runtime" in out
    assert " ms" not in out.splitlines()[0]
