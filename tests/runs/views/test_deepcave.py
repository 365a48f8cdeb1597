"""``hpo runs export NAME --format deepcave``: DeepCAVE itself loads what is written, for a
single, a cross-validated and a per-subset run, and a plain run's ``smac/<seed>`` folder.

DeepCAVE needs Python < 3.11, so it runs in a subprocess of an interpreter that has it: the
one named by ``HPO_DEEPCAVE_PYTHON``, else ``python3.10`` on the PATH when it imports
deepcave (docs/inspecting.md). Without one the DeepCAVE test skips, saying so; the suite
never installs DeepCAVE.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from toy_runs import TWO, build_toy_runs

from hpo.cli import main
from hpo.errors import UsageError
from hpo.runs.views.deepcave import export_deepcave, objective_names
from hpo.runs.views.nested import load_any

#: What DeepCAVE makes of each folder, printed as JSON: its run handler tries its converters
#: in this order and keeps the first that loads the folder.
_LOAD = """
import json, sys
from pathlib import Path
from deepcave.config import Config
out = {}
for p in sys.argv[1:]:
    errors = []
    for converter in Config().CONVERTERS:
        try:
            run = converter.from_path(Path(p))
        except Exception as exc:
            errors.append(f"{converter.__name__}: {exc}")
            continue
        out[p] = {"converter": converter.__name__, "name": run.name,
                  "objectives": [o.name for o in run.get_objectives()],
                  "trials": len(run.history), "budgets": [float(b) for b in run.get_budgets()]}
        break
    else:
        out[p] = {"errors": errors}
print(json.dumps(out))
"""


def deepcave_python() -> str | None:
    """An interpreter that imports deepcave: ``HPO_DEEPCAVE_PYTHON``, else ``python3.10``."""
    named = os.environ.get("HPO_DEEPCAVE_PYTHON")
    candidates = [named] if named else [shutil.which("python3.10")]
    for python in candidates:
        if python is None:
            continue
        probe = subprocess.run([python, "-c", "import deepcave"], capture_output=True, timeout=120)
        if probe.returncode == 0:
            return python
    return None


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_toy_runs(tmp_path_factory.mktemp("dc"))


def _history(folder: Path) -> dict:
    return json.loads((folder / "runhistory.json").read_text())


def test_every_kind_of_run_is_written_as_smac_folders(runs: Path, tmp_path: Path) -> None:
    single = export_deepcave(load_any("single", runs), tmp_path)
    cv = export_deepcave(load_any("cv", runs), tmp_path)
    subsets = export_deepcave(load_any("subsets", runs), tmp_path)
    assert single == [tmp_path / "single"]
    assert cv == [tmp_path / "cv"]
    assert subsets == [tmp_path / "subsets-tile-xla", tmp_path / "subsets-layout-xla-default"]
    scenario = json.loads((tmp_path / "single" / "scenario.json").read_text())
    assert scenario["objectives"] == objective_names(TWO) == [
        "cost", "cost tile:xla", "cost layout:xla:default"
    ]  # fmt: skip
    first = _history(tmp_path / "single")["data"][0]
    assert list(first) == [
        "config_id", "instance", "seed", "budget", "cost", "time", "cpu_time", "status",
        "starttime", "endtime", "additional_info",
    ]  # fmt: skip
    assert len(first["cost"]) == 3
    # cross-validation: one instance (DeepCAVE refuses more), each configuration's folds
    # combined, as many trials as the run scored
    data = _history(tmp_path / "cv")["data"]
    assert {d["instance"] for d in data} == {None}
    assert len(data) == len(load_any("cv", runs).scored)
    assert all(d["additional_info"]["folds"] == 2 for d in data)
    # a subset scores its own collection only: one objective
    assert json.loads((subsets[0] / "scenario.json").read_text())["objectives"] == "cost"


def test_runs_export_command(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["runs", "export", "cv", "--runs-dir", str(runs), "--format", "deepcave"]
    assert main([*argv, "--out", str(tmp_path / "dc")]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path / 'dc' / 'cv'}" in out
    assert "deepcave --open" in out


def test_deepcave_loads_the_exports_and_a_plain_smac_folder(runs: Path, tmp_path: Path) -> None:
    python = deepcave_python()
    if python is None:
        pytest.skip(
            "no interpreter with DeepCAVE (it needs Python < 3.11): set HPO_DEEPCAVE_PYTHON "
            "to one, or put a python3.10 that imports deepcave on the PATH"
        )
    folders = [p for name in ("single", "cv", "subsets") for p in
               export_deepcave(load_any(name, runs), tmp_path)]  # fmt: skip
    plain = next((runs / "single" / "smac").iterdir())  # smac/<seed>
    argv = [python, "-c", _LOAD, *map(str, [*folders, plain])]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert {v.get("converter") for v in loaded.values()} == {"SMAC3v2Run"}, loaded
    single = loaded[str(tmp_path / "single")]
    assert single["name"] == "single"  # named after the run, not its seed
    assert single["objectives"] == ["cost", "cost tile:xla", "cost layout:xla:default", "Time"]
    assert single["trials"] == len(load_any("single", runs).trials)
    assert loaded[str(tmp_path / "cv")]["trials"] == len(load_any("cv", runs).scored)
    for name in ("subsets-tile-xla", "subsets-layout-xla-default"):
        assert loaded[str(tmp_path / name)]["objectives"] == ["cost", "Time"]
    assert loaded[str(plain)]["trials"] == len(load_any("single", runs).trials)


def test_a_file_where_the_folder_goes_is_one_line(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """probe2 #59: a file named like the run was a FileExistsError traceback."""
    (tmp_path / "single").write_text("hi\n")
    argv = ["runs", "export", "single", "--runs-dir", str(runs), "--format", "deepcave"]
    assert main([*argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path / 'single'}: exists and is not a DeepCAVE export" in err
    assert len(err.strip().splitlines()) == 1
    assert (tmp_path / "single").read_text() == "hi\n"


def test_a_folder_that_is_no_export_is_kept(runs: Path, tmp_path: Path) -> None:
    """probe2 #57: a runhistory.json of the run's name, hpo's or not, was overwritten."""
    (tmp_path / "single").mkdir()
    (tmp_path / "single" / "runhistory.json").write_text("precious\n")
    with pytest.raises(UsageError, match=r"single: exists and is not a DeepCAVE export hpo"):
        export_deepcave(load_any("single", runs), tmp_path)
    assert (tmp_path / "single" / "runhistory.json").read_text() == "precious\n"
    assert not (tmp_path / "single" / "scenario.json").exists()


def test_another_runs_export_is_kept(runs: Path, tmp_path: Path) -> None:
    """probe2 #58: a run of the same name in another --runs-dir replaced the export."""
    other = tmp_path / "projB" / "runs"
    shutil.copytree(runs / "cv", other / "single")
    export_deepcave(load_any("single", runs), tmp_path / "dcs")
    first = (tmp_path / "dcs" / "single" / "runhistory.json").read_text()
    with pytest.raises(UsageError, match=r"single: holds the DeepCAVE export of run .*runs"):
        export_deepcave(load_any("single", other), tmp_path / "dcs")
    assert (tmp_path / "dcs" / "single" / "runhistory.json").read_text() == first
    export_deepcave(load_any("single", runs), tmp_path / "dcs")  # its own: written again
    assert (tmp_path / "dcs" / "single" / "runhistory.json").read_text() == first
