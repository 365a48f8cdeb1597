"""A model folder from someone else: checked before LightGBM or the file system is trusted."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fake_runs import build_fake_run

from hpo.deploy.export import export_model
from hpo.deploy.model import load_model
from hpo.deploy.model_files import write_model_file
from hpo.deploy.retrain import ExportOptions
from hpo.errors import ConfigError, UsageError

_MAIN = "import sys; from hpo.cli import main; sys.exit(main())"


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory, tiny_root: Path) -> Path:
    base = tmp_path_factory.mktemp("untrusted")
    run_dir = build_fake_run(base / "runs", tiny_root)
    return export_model(
        run_dir, base / "models" / "fake", retrain=True, options=ExportOptions(n_jobs=1)
    )


def _edit(model_dir: Path, tmp_path: Path, family: str, **entry: object) -> Path:
    dst = tmp_path / "model"
    shutil.copytree(model_dir, dst)
    meta = json.loads((dst / "model.json").read_text())
    meta["families"][family].update(entry)
    (dst / "model.json").write_text(json.dumps(meta))
    return dst


@pytest.mark.parametrize("name", ["../tile.txt", "/etc/hostname", "sub/../../tile.txt", ""])
def test_model_file_outside_the_folder(model_dir: Path, tmp_path: Path, name: str) -> None:
    dst = _edit(model_dir, tmp_path, "tile", file=name)
    shutil.copy(dst / "tile.txt", tmp_path / "tile.txt")  # a readable target, were it followed
    with pytest.raises(ConfigError, match=r"model file '.*' is not a relative path inside") as exc:
        load_model(dst)
    assert "\n" not in str(exc.value)


def test_model_file_linking_out_of_the_folder(model_dir: Path, tmp_path: Path) -> None:
    dst = _edit(model_dir, tmp_path, "tile")
    shutil.move(dst / "tile.txt", tmp_path / "outside.txt")
    os.symlink(tmp_path / "outside.txt", dst / "tile.txt")
    with pytest.raises(ConfigError, match=r"tile\.txt: a link out of the model folder"):
        load_model(dst)


def test_columns_not_a_list(model_dir: Path, tmp_path: Path) -> None:
    dst = _edit(model_dir, tmp_path, "layout", columns=5)
    with pytest.raises(ConfigError, match=r"'layout' key 'columns': expected a list of feature"):
        load_model(dst)


def _write_tile(dst: Path, text: str) -> None:
    """Write ``tile.txt`` and, as an attacker would, its checksum in ``model.json`` (and the
    file's own digest)."""
    (dst / "tile.txt").write_text(text)
    meta = json.loads((dst / "model.json").read_text())
    meta["families"]["tile"]["sha256"] = hashlib.sha256(text.encode()).hexdigest()
    write_model_file(dst / "model.json", meta)


def _real_trees(dst: Path) -> str:
    """Replace the tiny data's one-leaf tile booster by one with real splits, same columns."""
    import lightgbm as lgb

    n = len(json.loads((dst / "model.json").read_text())["families"]["tile"]["columns"])
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, n)), rng.integers(0, 4, 300)
    params = {"objective": "lambdarank", "num_leaves": 4, "verbose": -1, "min_data_in_leaf": 5}
    text = str(lgb.train(params, lgb.Dataset(X, y, group=[30] * 10), 2).model_to_string())
    _write_tile(dst, text)
    return text


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("key", "value"), [("split_feature", "99999999"), ("left_child", "7777"), ("left_child", "0")]
)
def test_hostile_booster_is_refused_by_the_cli(
    model_dir: Path, tmp_path: Path, tiny_root: Path, key: str, value: str
) -> None:
    """The issue's probes (a segfault and a hang), with the checksum updated as an attacker
    would: ``hpo evaluate`` exits 2 with one line and writes nothing."""
    dst = tmp_path / "model"
    shutil.copytree(model_dir, dst)
    text = _real_trees(dst)
    load_model(dst)  # the untouched forest loads
    text = re.sub(rf"^{key}=(\S+)", f"{key}={value}", text, count=1, flags=re.MULTILINE)
    if key == "left_child" and value == "0":  # a child of node 1 pointing back to the root
        text = re.sub(r"^left_child=(\S+) (\S+)", r"left_child=\1 0", text, flags=re.MULTILINE)
    _write_tile(dst, text)
    before = sorted(tmp_path.rglob("*"))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    for command in (["evaluate"], ["predict", "--out", str(tmp_path / "sub.csv")]):
        proc = subprocess.run(
            [sys.executable, "-c", _MAIN, *command, "--model", str(dst)]
            + ["--data", str(tiny_root)],
            capture_output=True,
            text=True,
            env=env,
            timeout=100,
        )
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1
        assert re.match(r"hpo: error: .*tile\.txt: not a well-formed LightGBM model", lines[0])
        assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("command", ["evaluate", "predict"])
def test_a_booster_that_predicts_inf_is_refused_in_one_line(
    model_dir: Path,
    tmp_path: Path,
    tiny_root: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    """Every leaf 1e308: each tree is well formed, their sum is inf. ``hpo evaluate`` once
    scored that order (tile -0.1753, exit code 0) without a word."""
    from hpo.cli import main

    dst = tmp_path / "model"
    shutil.copytree(model_dir, dst)
    text = _real_trees(dst)
    forged = re.sub(
        r"^leaf_value=(.*)$",
        lambda m: "leaf_value=" + " ".join("1e308" for _ in m.group(1).split()),
        re.sub(r"^tree_sizes=.*\n", "", text, flags=re.MULTILINE),  # optional; now wrong
        flags=re.MULTILINE,
    )
    _write_tile(dst, forged)
    out = tmp_path / "sub.csv"
    extra = ["--out", str(out)] if command == "predict" else []
    argv = [command, "--model", str(dst), "--data", str(tiny_root), "--collections", "tile"]
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(
        rf"hpo: error: {dst / 'tile.txt'}: predicts \d+ of \d+ configs as inf or NaN \(its leaf "
        r"values sum beyond the float range\); refusing its scores\n",
        err,
    ), err
    assert not out.exists()


def test_a_failed_booster_copy_names_the_runs_file(
    tiny_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not the temporary folder, which is gone by the time the message is read."""
    import hpo.deploy.scored
    from hpo.features import family_of
    from hpo.runs.record.boosters import BOOSTERS_DIR, BoosterStore, booster_key, budget_size
    from hpo.runs.views.history import load_run

    run_dir = build_fake_run(tmp_path / "runs", tiny_root)
    run = load_run(run_dir)
    inc = run.incumbent
    assert inc is not None
    assert inc.budget is not None
    seed = inc.seed if inc.seed is not None else 0
    store = BoosterStore(run_dir / BOOSTERS_DIR)
    store.folder.mkdir()
    for family in {family_of(c) for c in run.collections}:
        store.path(booster_key(inc.config, seed, family), budget_size(inc.budget)).write_text("x")

    class Unreadable:  # the run's booster: its disk fails on read
        def read(self, *args: object) -> bytes:
            raise OSError(5, "Input/output error")

        def __enter__(self) -> Unreadable:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    real = open
    monkeypatch.setattr(
        hpo.deploy.scored,
        "open",
        lambda path, mode="r", *a, **k: Unreadable() if mode == "rb" else real(path, mode, *a, **k),
        raising=False,
    )
    message = (
        rf"^{re.escape(str(store.folder))}/\w+-45\.txt: cannot copy the layout booster of "
        r"trial \d+ \(Input/output error\)$"
    )
    with pytest.raises(UsageError, match=message):
        export_model(run_dir, tmp_path / "m")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]


def _swap_two_columns(dst: Path, family: str) -> dict:
    meta = json.loads((dst / "model.json").read_text())
    columns = meta["families"][family]["columns"]
    columns[0], columns[1] = columns[1], columns[0]
    return meta


def test_the_boosters_carry_their_column_names(model_dir: Path) -> None:
    model = load_model(model_dir)
    meta = json.loads((model_dir / "model.json").read_text())
    for family, fam in model.families.items():
        assert fam.booster.feature_name() == meta["families"][family]["columns"]


@pytest.mark.parametrize("family", ["tile", "layout"])
def test_swapped_column_names_are_refused(model_dir: Path, tmp_path: Path, family: str) -> None:
    """Two names swapped in model.json once changed a tile top-1 error from 0.505 to 0.006."""
    dst = tmp_path / "model"
    shutil.copytree(model_dir, dst)
    meta = _swap_two_columns(dst, family)
    message = r"the booster's column 0 is '.+' but model.json lists '.+'; .* re-export"
    (dst / "model.json").write_text(json.dumps(meta))  # by hand (the digest no longer fits)
    with pytest.raises(ConfigError, match=message):
        load_model(dst)
    write_model_file(dst / "model.json", meta)  # sealed again: the boosters still disagree
    with pytest.raises(ConfigError, match=message):
        load_model(dst)


def test_an_edited_feature_spec_is_refused(model_dir: Path, tmp_path: Path) -> None:
    """producer_hops changes feature values under the same names: only the digest sees it."""
    dst = tmp_path / "model"
    shutil.copytree(model_dir, dst)
    meta = json.loads((dst / "model.json").read_text())
    meta["feature_spec"]["producer_hops"] = 1
    (dst / "model.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match=r"edited after export .* re-export the model"):
        load_model(dst)
