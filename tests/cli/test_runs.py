"""The ``runs``, ``export``, ``evaluate`` and ``predict`` commands, run in-process."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest
from fake_runs import FAKE_COLLECTIONS, build_fake_run

from hpo.cli import main
from hpo.data.load import COLLECTIONS, list_graphs
from hpo.features import FEATURE_VERSION

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, tiny_root: Path) -> dict[str, Path]:
    """Two fake runs and, exported once through the CLI, a model of the first."""
    base = tmp_path_factory.mktemp("cli")
    runs = base / "runs"
    build_fake_run(runs, tiny_root, name="hb")
    build_fake_run(runs, tiny_root, name="bo", optimizer="bo", seed=3, finished=False)
    model = base / "models" / "hb"
    code = main(
        ["export", "hb", "--runs-dir", str(runs), "--out", str(model), "--jobs", "1", "--retrain"]
    )
    assert code == 0
    return {"base": base, "runs": runs, "model": model}


def _error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def test_runs_list(workspace: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "list", "--runs-dir", str(workspace["runs"])]) == 0
    out = capsys.readouterr().out
    assert "hb" in out
    assert "bo" in out
    assert "finished" in out
    assert "0.7" in out


def test_runs_list_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "list", "--runs-dir", str(tmp_path)]) == 0
    assert "no runs in" in capsys.readouterr().err


def test_runs_show(workspace: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "show", "hb", "--runs-dir", str(workspace["runs"])]) == 0
    out = capsys.readouterr().out
    for text in (
        "Trials per budget",
        "Incumbent",
        "Trajectory",
        "Top configurations",
        "Failed trials (1)",
        "num_leaves > 1",
        "Hyperparameter importance",
    ):
        assert text in out, text


def test_runs_show_json(workspace: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "show", "hb", "--runs-dir", str(workspace["runs"]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["state"] == "finished"
    assert data["n_trials"] == 15
    assert data["failed"][0]["trial"] == 6
    assert data["incumbent"]["budget"] == 45.0
    assert data["trials_per_budget"]["45.0"] == {"total": 2, "success": 2, "failed": 0}
    assert data["trajectory"][-1]["score"] == data["incumbent"]["score"]
    assert next(iter(data["importance"]["values"])) == "learning_rate"


def test_runs_show_says_how_much_disk_the_run_holds(
    workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(workspace["runs"] / "hb", runs / "hb")
    (runs / "hb" / "boosters").mkdir()
    (runs / "hb" / "boosters" / f"{'0' * 16}-45.txt").write_bytes(b"x" * 2048)
    total = sum(p.stat().st_size for p in (runs / "hb").rglob("*") if p.is_file())
    assert main(["runs", "show", "hb", "--runs-dir", str(runs), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["disk_bytes"] == {"total": total, "boosters": 2048}
    assert main(["runs", "show", "hb", "--runs-dir", str(runs)]) == 0
    assert re.search(r"disk \d+\.\d KB \(boosters 2\.0 KB\)", capsys.readouterr().out)


def test_export_without_boosters_is_one_line(
    workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m"
    argv = ["export", "hb", "--runs-dir", str(workspace["runs"]), "--out", str(out)]
    assert main(argv) == 2
    assert _error_line(capsys).endswith("so export with retrain (hpo export hb --retrain)")


def test_missing_run(workspace: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["runs", "show", "nope"], ["runs", "plot", "nope"], ["export", "nope"]):
        assert main([*argv, "--runs-dir", str(workspace["runs"])]) == 2
        line = _error_line(capsys)
        assert line.startswith("hpo: error: no run 'nope' in ")
        assert line.endswith("(runs there: bo, hb)")


def test_runs_plot_and_compare(workspace: dict[str, Path], tmp_path: Path) -> None:
    runs = str(workspace["runs"])
    assert main(["runs", "plot", "hb", "--runs-dir", runs, "--out", str(tmp_path / "r.png")]) == 0
    assert (tmp_path / "r.png").read_bytes()[:8] == PNG_MAGIC
    assert main(["runs", "plot", "bo", "--runs-dir", runs]) == 0  # default: in the run folder
    assert (workspace["runs"] / "bo" / "run.png").read_bytes()[:8] == PNG_MAGIC
    out = tmp_path / "sub" / "c.png"
    assert main(["runs", "compare", "hb", "bo", "--runs-dir", runs, "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_export_wrote_a_model(workspace: dict[str, Path]) -> None:
    meta = json.loads((workspace["model"] / "model.json").read_text())
    assert meta["collections"] == list(FAKE_COLLECTIONS)
    assert meta["train_on"] == ["train"]


def test_evaluate_json_matches_export(
    workspace: dict[str, Path], tiny_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["evaluate", "--model", str(workspace["model"]), "--data", str(tiny_root), "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    meta = json.loads((workspace["model"] / "model.json").read_text())
    for collection, value in meta["validation"]["metrics"].items():
        assert report["collections"][collection]["metric"] == pytest.approx(value, abs=1e-12)


def test_evaluate_table(
    workspace: dict[str, Path],
    tiny_root: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    argv = [
        "evaluate",
        "--model",
        str(workspace["model"]),
        "--data",
        str(tiny_root),
        "--collections",
        "tile,layout:nlp:random",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "tile score" in out
    assert "kendall tau" in out
    assert "overall" in out


def test_predict(
    workspace: dict[str, Path],
    tiny_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "submission.csv"
    argv = [
        "predict",
        "--model",
        str(workspace["model"]),
        "--data",
        str(tiny_root),
        "--out",
        str(out),
        "--top-k",
        "3",
    ]
    assert main(argv) == 0
    assert "wrote" in capsys.readouterr().out
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == sum(len(list_graphs(tiny_root, c, "test")) for c in COLLECTIONS)
    tile = [r for r in rows if r["ID"].startswith("tile:xla:")]
    assert tile
    assert all(len(r["TopConfigs"].split(";")) == 3 for r in tile)


def test_incompatible_model(
    workspace: dict[str, Path],
    tiny_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    old = tmp_path / "old_model"
    shutil.copytree(workspace["model"], old)
    meta = json.loads((old / "model.json").read_text())
    meta["feature_version"] = 0
    (old / "model.json").write_text(json.dumps(meta))
    for command in (["evaluate"], ["predict", "--out", str(tmp_path / "s.csv")]):
        assert main([*command, "--model", str(old), "--data", str(tiny_root)]) == 2
        line = _error_line(capsys)
        assert line == (
            f"hpo: error: {old}: model was exported with feature version 0, this hpo "
            f"extracts feature version {FEATURE_VERSION} and reads 1, 2, 3, 4; re-export the model "
            "with this hpo"
        )
    assert not (tmp_path / "s.csv").exists()


def test_data_without_collection(
    workspace: dict[str, Path],
    tiny_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    partial = tmp_path / "partial"
    shutil.copytree(tiny_root / "npz" / "tile", partial / "npz" / "tile")
    for command in (["evaluate"], ["predict", "--out", str(tmp_path / "s.csv")]):
        # the collections the root holds are served, the absent ones named in one line
        assert main([*command, "--model", str(workspace["model"]), "--data", str(partial)]) == 0
        err = capsys.readouterr().err.splitlines()
        assert [line for line in err if line.startswith("note:")][0] == (
            f"note: {partial} has no {'valid' if command == ['evaluate'] else 'test'} data for "
            "layout:xla:default, layout:xla:random, layout:nlp:default, layout:nlp:random; "
            "served tile:xla"
        )
        args = [*command, "--model", str(workspace["model"]), "--data", str(partial)]
        assert main([*args, "--collections", "tile,layout:xla:default"]) == 2
        line = _error_line(capsys)
        assert line.startswith(f"hpo: error: {partial}: no layout:xla:default ")
        assert "missing folder" in line


@pytest.mark.slow
def test_end_to_end_real_campaign(
    tiny_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A short real SMAC campaign, then every command of this module on its run folder."""
    runs, model, cache = tmp_path / "runs", tmp_path / "model", tmp_path / "cache"
    code = main(
        [
            "run",
            "--data",
            str(tiny_root),
            "--collection",
            "tile,layout:xla:random",
            "--optimizer",
            "model-hb",
            "--trials",
            "8",
            "--min-budget",
            "5",
            "--max-budget",
            "15",
            "--eta",
            "3",
            "--name",
            "e2e",
            "--runs-dir",
            str(runs),
            "--cache-dir",
            str(cache),
            "--quiet",
        ]
    )
    assert code == 0
    capsys.readouterr()
    assert main(["runs", "show", "e2e", "--runs-dir", str(runs), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["state"] == "finished"
    assert shown["n_trials"] == 8
    assert shown["baseline"]["trial"] == 1
    assert shown["baseline"]["budget"] == 15.0
    assert set(shown["baseline"]["gain"]["metrics"]) == {"tile:xla", "layout:xla:random"}
    assert shown["smac"]["facade"] == "smac.facade.multi_fidelity_facade.MultiFidelityFacade"
    result = json.loads((runs / "e2e" / "result.json").read_text())
    assert shown["incumbent"]["config"] == result["incumbent"]
    assert main(["runs", "plot", "e2e", "--runs-dir", str(runs)]) == 0
    assert (runs / "e2e" / "run.png").read_bytes()[:8] == PNG_MAGIC
    assert main(["export", "e2e", "--runs-dir", str(runs), "--out", str(model), "--jobs", "1"]) == 0
    meta = json.loads((model / "model.json").read_text())
    assert meta["rounds"] == 15
    assert meta["source"] == "copied"
    assert meta["validation"]["max_abs_difference"] < 1e-9
    assert meta["hyperparameters"] == result["incumbent"]
    assert main(["evaluate", "--model", str(model), "--data", str(tiny_root), "--json"]) == 0
    capsys.readouterr()
    out = tmp_path / "submission.csv"
    assert (
        main(["predict", "--model", str(model), "--data", str(tiny_root), "--out", str(out)]) == 0
    )
    ids = [line.split(",")[0] for line in out.read_text().splitlines()[1:]]
    assert {i.rsplit(":", 1)[0] for i in ids} == {"tile:xla", "layout:xla:random"}
