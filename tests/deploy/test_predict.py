from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from disks import FULL, READ_ONLY, disk_error, leftovers, one_line
from fake_runs import build_fake_run

from hpo.cli import main
from hpo.data.load import COLLECTIONS, is_layout, list_graphs, load_graph
from hpo.deploy.export import export_model
from hpo.deploy.model import ExportedModel, load_model
from hpo.deploy.predict import HEADER, write_submission
from hpo.deploy.retrain import ExportOptions
from hpo.errors import DataFormatError, UsageError

ID_FORMAT = re.compile(r"(tile:xla|layout:(xla|nlp):(default|random)):([0-9a-f]{32})")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory, tiny_root: Path) -> ExportedModel:
    base = tmp_path_factory.mktemp("predict")
    run_dir = build_fake_run(base / "runs", tiny_root)
    return load_model(
        export_model(run_dir, base / "model", retrain=True, options=ExportOptions(n_jobs=1))
    )


@pytest.fixture(scope="module")
def submission(
    model: ExportedModel, tiny_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, int]]:
    out = tmp_path_factory.mktemp("sub") / "submission.csv"
    return out, write_submission(model, tiny_root, out)


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_header_and_ids(submission: tuple[Path, dict[str, int]], tiny_root: Path) -> None:
    out, counts = submission
    assert out.read_text().splitlines()[0] == HEADER
    rows = _rows(out)
    expected = {f"{c}:{p.stem}" for c in COLLECTIONS for p in list_graphs(tiny_root, c, "test")}
    assert {r["ID"] for r in rows} == expected
    assert len(rows) == len(expected) == sum(counts.values())
    for r in rows:
        assert ID_FORMAT.fullmatch(r["ID"]), r["ID"]
    assert not list(out.parent.glob(".*.tmp"))


def test_rankings_are_valid(submission: tuple[Path, dict[str, int]], tiny_root: Path) -> None:
    for r in _rows(submission[0]):
        collection, stem = r["ID"].rsplit(":", 1)
        graph = load_graph(
            tiny_root / "npz" / Path(*collection.split(":")) / "test" / f"{stem}.npz", collection
        )
        indices = [int(x) for x in r["TopConfigs"].split(";")]
        if is_layout(collection):  # a permutation of every config index
            assert sorted(indices) == list(range(graph.n_configs))
        else:  # distinct valid indices, top 5
            assert len(indices) == min(5, graph.n_configs)
            assert len(set(indices)) == len(indices)
            assert all(0 <= i < graph.n_configs for i in indices)


def test_rows_follow_model_ranking(
    submission: tuple[Path, dict[str, int]], model: ExportedModel, tiny_root: Path
) -> None:
    rows = {r["ID"]: r["TopConfigs"] for r in _rows(submission[0])}
    for collection in ("tile:xla", "layout:nlp:default"):
        path = list_graphs(tiny_root, collection, "test")[0]
        scores = model.predict_graph(path, collection)
        ranking = [int(x) for x in rows[f"{collection}:{path.stem}"].split(";")]
        assert (np.diff(scores[ranking]) >= 0).all()


@pytest.mark.parametrize("top_k", [1, 3, 10_000])
def test_top_k(model: ExportedModel, tiny_root: Path, tmp_path: Path, top_k: int) -> None:
    out = tmp_path / "s.csv"
    counts = write_submission(model, tiny_root, out, collections=["tile:xla"], top_k=top_k)
    assert counts == {"tile:xla": 2}
    for r in _rows(out):
        stem = r["ID"].rsplit(":", 1)[1]
        n = load_graph(tiny_root / "npz/tile/xla/test" / f"{stem}.npz", "tile:xla").n_configs
        indices = [int(x) for x in r["TopConfigs"].split(";")]
        assert len(indices) == min(top_k, n) == len(set(indices))


def test_bad_top_k(model: ExportedModel, tiny_root: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--top-k must be >= 1, got 0"):
        write_submission(model, tiny_root, tmp_path / "s.csv", top_k=0)


def test_missing_collection_leaves_no_file(
    model: ExportedModel, tiny_root: Path, tmp_path: Path
) -> None:
    partial = tmp_path / "partial"
    shutil.copytree(tiny_root / "npz" / "layout", partial / "npz" / "layout")
    out = tmp_path / "s.csv"
    out.write_text("previous\n")
    with pytest.raises(UsageError, match=r"partial: no tile:xla test data \(missing folder") as exc:
        write_submission(model, partial, out, collections=["tile:xla"])
    assert "\n" not in str(exc.value)
    assert out.read_text() == "previous\n"


def test_partial_root_serves_what_it_holds(
    model: ExportedModel, tiny_root: Path, tmp_path: Path
) -> None:
    partial = tmp_path / "partial"
    shutil.copytree(tiny_root / "npz" / "layout", partial / "npz" / "layout")
    counts = write_submission(model, partial, tmp_path / "s.csv")
    assert list(counts) == list(model.collections[1:])
    ids = [line.split(",")[0] for line in (tmp_path / "s.csv").read_text().splitlines()[1:]]
    assert ids
    assert not any(i.startswith("tile:xla:") for i in ids)
    assert len(ids) == sum(counts.values())


def test_failure_midway_keeps_previous_file(
    model: ExportedModel, tiny_root: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(tiny_root, broken)
    victim = list_graphs(broken, "layout:nlp:random", "test")[-1]
    victim.write_bytes(victim.read_bytes()[:200])
    out = tmp_path / "s.csv"
    write_submission(model, tiny_root, out, collections=("tile:xla",))
    previous = out.read_text()
    with pytest.raises(DataFormatError, match=re.escape(victim.name)):
        write_submission(model, broken, out)
    assert out.read_text() == previous
    assert not list(tmp_path.glob(".*.tmp"))


def test_ids_needing_quotes_are_quoted(
    model: ExportedModel, tiny_root: Path, tmp_path: Path
) -> None:
    odd = tmp_path / "odd"
    shutil.copytree(tiny_root, odd)
    folder = odd / "npz" / "tile" / "xla" / "test"
    first, second = sorted(folder.glob("*.npz"))[:2]
    shutil.copy(first, folder / "a line\nbreak alone.npz")  # no quote to make the writer quote
    first.rename(folder / "a,b.npz")
    second.rename(folder / 'new\nline "q".npz')
    out = tmp_path / "s.csv"
    counts = write_submission(model, odd, out, collections=("tile:xla",))
    rows = _rows(out)
    assert len(rows) == counts["tile:xla"]
    ids = {r["ID"] for r in rows}
    assert {"tile:xla:a,b", 'tile:xla:new\nline "q"', "tile:xla:a line\nbreak alone"} <= ids
    assert all(len(r) == 2 and r["TopConfigs"] for r in rows)


def test_out_onto_a_folder_is_refused_before_any_work(
    model: ExportedModel, tiny_root: Path, tmp_path: Path
) -> None:
    (tmp_path / "dir").mkdir()
    with pytest.raises(UsageError, match=r"dir: is a folder; --out names the submission CSV"):
        write_submission(model, tiny_root, tmp_path / "dir")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir"]
    assert not any((tmp_path / "dir").iterdir())


def test_out_over_the_model_or_a_data_file_is_refused(
    model: ExportedModel, tiny_root: Path, tmp_path: Path
) -> None:
    """``--out`` once replaced whatever it named: the model's own files, or a graph."""
    before = (model.path / "model.json").read_bytes()
    with pytest.raises(UsageError, match="is inside the model folder"):
        write_submission(model, tiny_root, model.path / "model.json")
    assert (model.path / "model.json").read_bytes() == before
    graph = list_graphs(tiny_root, "tile:xla", "test")[0]
    with pytest.raises(UsageError, match=r"is not a submission hpo wrote"):
        write_submission(model, tiny_root, graph)
    assert np.load(graph, allow_pickle=False).files  # still the graph
    with pytest.raises(UsageError, match="cannot write there"):
        write_submission(model, tiny_root, Path("/proc/hpo-submission.csv"))
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(UsageError, match="does not exist or is not a folder"):
        write_submission(model, tiny_root, afile / "s.csv")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(UsageError, match="does not exist or is not a folder|cannot resolve"):
        write_submission(model, tiny_root, loop / "s.csv")
    link = tmp_path / "latest.csv"  # a link is never followed nor replaced
    link.symlink_to(model.path / "sub.csv")
    with pytest.raises(UsageError, match="is a symlink"):
        write_submission(model, tiny_root, link, collections=("tile:xla",))
    assert link.is_symlink()
    assert not (model.path / "sub.csv").exists()


def test_out_replaces_only_a_submission(
    model: ExportedModel, tiny_root: Path, tmp_path: Path
) -> None:
    """``--out runs/live/campaign.json`` once replaced a live run's record."""
    record = tmp_path / "campaign.json"
    record.write_text('{"format": 2}')
    with pytest.raises(UsageError, match=r"campaign.json: exists and is not a submission"):
        write_submission(model, tiny_root, record, collections=("tile:xla",))
    assert record.read_text() == '{"format": 2}'
    out = tmp_path / "s.csv"
    write_submission(model, tiny_root, out, collections=("tile:xla",))
    first = out.read_text()
    write_submission(model, tiny_root, out)  # its own: replaced
    assert out.read_text() != first
    assert out.read_text().startswith(first)


@pytest.mark.parametrize(
    "found",
    [
        "ID,TopConfigs\ntile:xla:foo,1;2;3\n",  # another tool's submission
        None,  # hpo's, edited since: its digest no longer proves it
    ],
)
def test_out_replaces_only_a_submission_hpo_wrote(
    model: ExportedModel, tiny_root: Path, tmp_path: Path, found: str | None
) -> None:
    """probe2 #72: any file with the competition's header was taken for hpo's and replaced."""
    out = tmp_path / "kaggle_sub.csv"
    if found is None:
        write_submission(model, tiny_root, out, collections=("tile:xla",))
        found = out.read_text() + "tile:xla:mine,0\n"
    out.write_text(found)
    with pytest.raises(UsageError, match=r"kaggle_sub.csv: exists and is not a submission hpo"):
        write_submission(model, tiny_root, out, collections=("tile:xla",))
    assert out.read_text() == found


def test_a_full_cache_stops_predict_in_one_line(
    model: ExportedModel, tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """A full --cache-dir once ended predict in a traceback (its error named no file)."""
    cache = tmp_path / "cache"

    def full(file: Any, *args: Any, **kwargs: Any) -> None:
        raise disk_error(FULL)

    monkeypatch.setattr(np, "savez", full)
    out = tmp_path / "s.csv"
    argv = ["predict", "--model", str(model.path), "--data", str(tiny_root), "--out", str(out)]
    assert main([*argv, "--cache-dir", str(cache), "--collections", "tile:xla"]) == 2
    err = one_line(capsys.readouterr().err)
    assert err.startswith(f"hpo: error: {cache / 'tile_xla'}/")
    assert err.endswith(
        ".npz: No space left on device; free space there or choose another --cache-dir\n"
    )
    assert not out.exists()
    assert leftovers(tmp_path) == []


def test_out_on_a_read_only_file_system_says_so_itself(
    model: ExportedModel, tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary file's cleanup on a read-only file system once raised EROFS in place of
    the message: the cleanup's error is dropped, the write's is the one told."""
    out = tmp_path / "s.csv"

    def refuse(path: Any, *args: Any, **kwargs: Any) -> Any:
        raise disk_error(READ_ONLY, path)

    monkeypatch.setattr("hpo.deploy.predict.open", refuse, raising=False)
    monkeypatch.setattr(Path, "unlink", lambda self, missing_ok=False: refuse(self))
    with pytest.raises(
        UsageError,
        match=rf"^--out {re.escape(str(out))}: cannot write there \(Read-only file system\); "
        "choose another --out$",
    ):
        write_submission(model, tiny_root, out, collections=("tile:xla",))


def test_out_dash_is_refused_in_one_line(
    model: ExportedModel,
    tiny_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """probe2 #76: ``--out -`` wrote a file named ``-`` ("wrote -")."""
    monkeypatch.chdir(tmp_path)
    argv = ["predict", "--model", str(model.path), "--data", str(tiny_root), "--out", "-"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--out -: predict writes the submission to a file" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "-").exists()
