"""The ``runs``, ``export``, ``evaluate`` and ``predict`` commands, run in-process."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from fake_runs import FAKE_COLLECTIONS, as_older_metric_run, build_fake_run

from hpo.cli import main
from hpo.data.load import COLLECTIONS, list_graphs
from hpo.features import FEATURE_VERSION
from hpo.features.spec import READABLE_VERSIONS
from hpo.ranking.scoring.metrics import LEGACY_LAYOUT_METRIC

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


def test_runs_list_marks_a_run_scored_by_the_older_layout_metric(
    workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(workspace["runs"], runs)
    assert main(["runs", "list", "--runs-dir", str(runs)]) == 0
    assert "older metric" not in capsys.readouterr().out  # both scored by today's metric
    as_older_metric_run(runs / "bo")
    assert main(["runs", "list", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    marked = [line for line in out.splitlines() if re.search(r"[0-9] \*\s*│", line)]
    assert len(marked) == 1
    assert marked[0].startswith("│ bo ")
    assert f"* layout collections scored by an older metric ({LEGACY_LAYOUT_METRIC})" in out


def test_runs_list_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "list", "--runs-dir", str(tmp_path)]) == 0
    assert "no runs in" in capsys.readouterr().err


def test_runs_show(workspace: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", "show", "hb", "--runs-dir", str(workspace["runs"])]) == 0
    out = capsys.readouterr().out
    for text in (
        "Trials per budget",
        "Incumbent",
        "Incumbent over time",
        "Top configurations",
        "Failed trials (1)",
        "num_leaves > 1",
        "Hyperparameter importance",
    ):
        assert text in out, text


def test_runs_show_says_when_a_run_was_extended(
    tmp_path: Path, tiny_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = build_fake_run(tmp_path / "runs", tiny_root, name="ext")
    record = json.loads((folder / "campaign.json").read_text())
    extension = {"at": 1.8e9, "trials": [15, 15], "walltime": [120.0, 240.0], "records": 15}
    record["extensions"] = [extension]
    (folder / "campaign.json").write_text(json.dumps(record))
    assert main(["runs", "show", "ext", "--runs-dir", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"extended 20\d\d-\d\d-\d\d \d\d:\d\d: walltime 120 -> 240 s\n", out)
    assert "trials 15 -> 15" not in out  # only what changed
    assert main(["runs", "show", "ext", "--runs-dir", str(tmp_path / "runs"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["extensions"] == [extension]


def test_runs_show_warns_of_trials_the_log_lost(
    tmp_path: Path, tiny_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A finished run whose ``trials.jsonl`` was cut once showed as whole, 3 trials of 4 and
    no word of the others (probe2 #46): ``result.json`` counts them, so the loss is named."""
    runs = tmp_path / "runs"
    folder = build_fake_run(runs, tiny_root, name="cut", duplicate_and_truncate=False)
    log = folder / "trials.jsonl"
    log.write_bytes(log.read_bytes()[:-40])
    assert main(["runs", "show", "cut", "--runs-dir", str(runs)]) == 0
    assert _error_line(capsys) == (
        f"hpo: warning: {log}: 1 of the trials {folder / 'result.json'} counts are missing "
        "(the log was cut or edited after the campaign ended)"
    )
    build_fake_run(runs, tiny_root, name="whole")  # a repeated and a cut line, none lost
    assert main(["runs", "show", "whole", "--runs-dir", str(runs), "--json"]) == 0
    assert capsys.readouterr().err == ""


def test_runs_show_says_when_the_data_root_is_not_the_runs(
    tmp_path: Path, tiny_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """probe3 N62: a data_root edited in campaign.json was shown as the run's data."""
    runs = tmp_path / "runs"
    folder = build_fake_run(runs, tiny_root, name="same")
    assert main(["runs", "show", "same", "--runs-dir", str(runs)]) == 0
    assert "not the files this run used" not in capsys.readouterr().out
    other = tmp_path / "other"
    shutil.copytree(tiny_root, other, copy_function=shutil.copy)  # other mtimes: other files
    record = json.loads((folder / "campaign.json").read_text())
    record["config"]["data_root"] = str(other)
    (folder / "campaign.json").write_text(json.dumps(record))
    assert main(["runs", "show", "same", "--runs-dir", str(runs)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"data {other} (not the files this run used" in out
    record["config"]["data_root"] = str(tmp_path / "gone")
    (folder / "campaign.json").write_text(json.dumps(record))
    assert main(["runs", "show", "same", "--runs-dir", str(runs)]) == 0
    assert "(gone: moved or deleted since)" in capsys.readouterr().out


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
            f"extracts feature version {FEATURE_VERSION} and reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}; "
            "re-export the model with this hpo"
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


def _corrupt_config(run_dir: Path, trial: int) -> None:
    lines = (run_dir / "trials.jsonl").read_text().splitlines()
    record = json.loads(lines[trial - 1])
    record["config"] = "notadict"
    lines[trial - 1] = json.dumps(record)
    (run_dir / "trials.jsonl").write_text("\n".join(lines) + "\n")


def test_runs_list_marks_a_corrupt_run_and_lists_the_others(
    workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(workspace["runs"], runs)
    _corrupt_config(runs / "bo", 2)
    before = {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()}
    assert main(["runs", "list", "--runs-dir", str(runs)]) == 0
    out, err = capsys.readouterr()
    assert err == (
        f"hpo: run 'bo' unreadable: {runs / 'bo' / 'trials.jsonl'}: trial 2: key 'config': "
        "expected a JSON object, found str 'notadict'\n"
    )
    assert "finished" in out  # the healthy run, in full
    assert "0.7" in out
    assert re.search(r"│ bo +│ interrupted +│ unreadable +│", out)
    assert main(["runs", "show", "bo", "--runs-dir", str(runs)]) == 2
    line = _error_line(capsys)
    assert "trials.jsonl: trial 2: key 'config': expected a JSON object, found str" in line
    assert {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()} == before


def test_export_refuses_a_budget_beyond_the_campaigns(
    workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(workspace["runs"], runs)
    path = runs / "hb" / "trials.jsonl"
    lines = path.read_text().splitlines()[:-1]  # without the fake run's truncated last line
    records = [json.loads(x) for x in lines]
    best = max((r for r in records if r.get("score") is not None), key=lambda r: r["score"])
    best["budget"] = 1e308
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (runs / "hb" / "result.json").unlink()
    argv = ["export", "hb", "--runs-dir", str(runs), "--out", str(tmp_path / "m")]
    assert main(argv) == 2
    assert re.search(r"trials\.jsonl: trial \d+ has budget 1e\+308, above the campaign's max_b",
                     _error_line(capsys))  # fmt: skip
    assert not (tmp_path / "m").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]


def test_export_out_dot_keeps_the_folder(
    workspace: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The issue's repro: --out . in a folder holding a model.json and notes."""
    here = tmp_path / "x"
    here.mkdir()
    shutil.copy(workspace["model"] / "model.json", here)
    (here / "notes.txt").write_text("hi\n")
    monkeypatch.chdir(here)
    argv = ["export", "hb", "--runs-dir", str(workspace["runs"]), "--out", ".", "--retrain"]
    assert main(argv) == 2
    assert "is the working directory" in _error_line(capsys)
    assert sorted(p.name for p in here.iterdir()) == ["model.json", "notes.txt"]
    argv[-2] = str(here)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert "holds files that no export wrote (notes.txt)" in _error_line(capsys)
    assert sorted(p.name for p in here.iterdir()) == ["model.json", "notes.txt"]


@pytest.mark.parametrize("command", ["evaluate", "predict"])
def test_bad_data_is_refused_by_evaluate_and_predict(
    workspace: dict[str, Path],
    tiny_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    """NaN in node_config_feat: data check's line, exit 2, no submission (and no temporary)."""
    import numpy as np

    root = tmp_path / "root"
    shutil.copytree(tiny_root, root)
    split = "valid" if command == "evaluate" else "test"
    path = list_graphs(root, "layout:nlp:random", split)[0]
    with np.load(path) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["node_config_feat"] = arrays["node_config_feat"].astype(np.float32)
    arrays["node_config_feat"][2, 0, 1] = np.nan
    np.savez(path, **arrays)
    out = tmp_path / "sub.csv"
    argv = [command, "--model", str(workspace["model"]), "--data", str(root)]
    argv += ["--out", str(out)] if command == "predict" else []
    assert main(argv) == 2
    assert _error_line(capsys) == (
        f"hpo: error: {path}: key 'node_config_feat': expected dimension indices in -1..5, "
        "found nan in config 2"
    )
    # the feature cache (.hpo_cache, the default of every command) may hold the good files
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".hpo_cache") == ["root"]


@pytest.mark.parametrize("command", ["export", "evaluate", "predict"])
def test_no_empty_line_on_stderr(
    workspace: dict[str, Path], tiny_root: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str], command: str,
) -> None:  # fmt: skip
    """Each once printed an empty line on stderr first: rich's progress bar, which off a
    terminal draws nothing but that line when it stops, before an error's one line."""
    model = ["--model", str(workspace["model"]), "--data", str(tiny_root)]
    argv = {
        "export": ["export", "hb", "--runs-dir", str(workspace["runs"]), "--out",
                   str(tmp_path / "m"), "--jobs", "1", "--retrain"],
        "evaluate": ["evaluate", *model, "--collections", "tile"],
        "predict": ["predict", *model, "--out", str(tmp_path / "s.csv"), "--collections", "tile"],
    }[command]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert all(line.strip() for line in err.splitlines()), repr(err)


def test_a_graph_name_that_is_not_utf8_gets_one_line_from_every_command(
    workspace: dict[str, Path], tiny_root: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """``data check`` passed such a name; ``run`` and ``predict`` failed on it in a traceback,
    ``predict`` only after ranking every graph. Each command now refuses it, in the same
    line, before reading a graph."""
    from hpo.deploy.model import ExportedModel

    root = tmp_path / "root"
    shutil.copytree(tiny_root / "npz" / "tile", root / "npz" / "tile")
    for split in ("train", "valid", "test"):
        folder = root / "npz" / "tile" / "xla" / split
        first = sorted(folder.glob("*.npz"))[0]
        first.rename(os.fsdecode(bytes(folder) + b"/z\xff.npz"))
    line = "the file name is not UTF-8 (graph ids are written as text); rename it"
    ranked: list[Path] = []
    real = ExportedModel.rank_graph
    monkeypatch.setattr(
        ExportedModel,
        "rank_graph",
        lambda self, p, *a, **k: ranked.append(p) or real(self, p, *a, **k),
    )
    model = ["--model", str(workspace["model"]), "--data", str(root)]
    commands = {
        "run": ["run", "--data", str(root), "--runs-dir", str(tmp_path / "runs"), "--trials", "2"],
        "evaluate": ["evaluate", *model],
        "predict": ["predict", *model, "--out", str(tmp_path / "s.csv")],
    }
    for split, argv in zip(("train", "valid", "test"), commands.values(), strict=True):
        assert main(argv) == 2
        bad = root / "npz" / "tile" / "xla" / split / "z\\xff.npz"
        assert capsys.readouterr().err == f"hpo: error: {bad}: {line}\n", argv[0]
    assert ranked == []
    assert not (tmp_path / "s.csv").exists()
    assert not (tmp_path / "runs").exists()
    assert main(["data", "check", str(root)]) == 1
    err = capsys.readouterr().err
    assert err.count(f": {line}\n") == 3


def test_exporting_a_live_run_says_it_is_the_incumbent_so_far(
    workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The export of a running campaign once said nothing of it: its incumbent may change."""
    from hpo.runs.record.folder import RunLock

    runs = workspace["runs"]
    argv = ["export", "bo", "--runs-dir", str(runs), "--jobs", "1", "--retrain"]
    with RunLock(runs / "bo"):  # held here, as the live campaign holds it
        assert main([*argv, "--out", str(tmp_path / "live")]) == 0
    assert re.fullmatch(
        r"note: run 'bo' is still running: this is its incumbent so far \(trial \d+\); export "
        r"again once it ends for its final one\n",
        capsys.readouterr().err,
    )
    assert main([*argv, "--out", str(tmp_path / "done")]) == 0
    assert capsys.readouterr().err == ""


def test_runs_list_names_each_runs_collections(
    tmp_path: Path, tiny_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root, name="tile", collections=("tile:xla",))
    assert main(["runs", "list", "--runs-dir", str(runs)]) == 0
    out = capsys.readouterr().out
    assert "collections" in out
    assert re.search(r"│ tile .*│ tile:xla\s*│", out)


def test_runs_compare_prints_a_table_and_warns_of_other_collections(
    tmp_path: Path, tiny_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    build_fake_run(runs, tiny_root, name="tile", collections=("tile:xla",))
    build_fake_run(runs, tiny_root, name="both", collections=("tile:xla", "layout:xla:random"))
    build_fake_run(runs, tiny_root, name="tile2", collections=("tile:xla",), seed=2)
    argv = ["runs", "compare", "--runs-dir", str(runs), "--out", str(tmp_path / "c.png")]
    assert main([*argv, "tile", "tile2"]) == 0
    captured = capsys.readouterr()
    assert "Runs compared" in captured.out
    assert "tile2" in captured.out
    assert captured.err == ""  # the same collections: no warning
    assert main([*argv, "tile", "both"]) == 0
    err = capsys.readouterr().err
    assert "do not score the same collections" in err
    assert "both: tile:xla, layout:xla:random" in err


def test_runs_show_says_how_much_of_the_prior_the_incumbent_blended(
    workspace: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = Path(shutil.copytree(workspace["runs"] / "hb", tmp_path / "runs" / "hb"))
    assert main(["runs", "show", str(run), "--json"]) == 0
    inc = json.loads(capsys.readouterr().out)["incumbent"]
    assert "blend_shares" not in inc  # a run made before trials recorded them: nothing said
    layout = [c for c in FAKE_COLLECTIONS if c.startswith("layout:")]
    shares = {layout[0]: 0.03} | ({layout[1]: 0.0} if len(layout) > 1 else {})
    log = run / "trials.jsonl"
    lines = log.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("{") and f'"trial": {inc["trial"]},' in line:
            record = json.loads(line)
            record.setdefault("info", {})["blend_shares"] = {"layout": shares}
            lines[i] = json.dumps(record)
    log.write_text("\n".join(lines) + "\n")
    assert main(["runs", "show", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["incumbent"]["blend_shares"] == {"layout": shares}
    assert main(["runs", "show", str(run)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("learned prior"))
    assert f"{layout[0]} at 0.03 of its weight" in line
    if len(layout) > 1:
        assert f"{layout[1]} off" in line
    assert all(f"{c} whole" in line for c in layout[2:])
