"""The README opens with two commands; run them as a new user would, in a fresh clone."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Set in the environment of the README's test command when this file runs it: that command
#: runs the whole suite, this test included, which must not run it again.
INNER_RUN = "HPO_README_INNER_RUN"
#: Opts in to the fresh-clone test: it runs the demo and then the whole suite a second time,
#: which would double CI's time (CI runs the README's test command itself).
FRESH_CLONE = "HPO_FRESH_CLONE"


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```bash\n(.+?)\n```", text, flags=re.S)[:2]


def test_readme_opens_with_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    first_block = text.index("```bash")
    assert text[:first_block].count("\n") <= 2  # only the title precedes them
    install, test = _readme_commands()
    assert "hpo data synth" in install
    assert "hpo run" in install
    assert "hpo export" in install
    assert "pytest" in test


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == _readme_commands()[1]


def test_scaling_docs_slurm_example_builds_its_job_script() -> None:
    # dask-jobqueue is a test extra for this: the documented cluster must be one it accepts
    pytest.importorskip("dask_jobqueue")
    text = (ROOT / "docs" / "scaling.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.+?)\n```", text, flags=re.S) if "SLURM" in b]
    setup = block.split("cluster.scale", 1)[0]  # scaling would submit jobs to sbatch
    names: dict[str, Any] = {}
    exec(compile(setup, "docs/scaling.md", "exec"), names)
    cluster = names["cluster"]
    try:
        script = cluster.job_script()
        assert "#SBATCH" in script
        assert "06:00:00" in script
        assert "--nworkers 4" in script
        assert str(cluster.scheduler_address).startswith("tcp://")
    finally:
        cluster.close()


def test_readme_demo_uses_real_cli_options() -> None:
    from hpo.cli import build_parser

    install = _readme_commands()[0]
    parser = build_parser()
    for part in install.split("&&"):
        words = part.split()
        if words and words[0].endswith("/hpo"):
            parser.parse_args(words[1:])  # raises SystemExit on an unknown option


def _git_head() -> str:
    """The commit checked out at ROOT; skips when git or a git checkout is missing."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed: cannot make a fresh clone")
    top = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--show-toplevel", "HEAD"],
        capture_output=True,
        text=True,
    )
    lines = top.stdout.split()
    if top.returncode != 0 or len(lines) != 2 or Path(lines[0]).resolve() != ROOT:
        pytest.skip(f"{ROOT} is not a git checkout (an sdist?): cannot make a fresh clone")
    return lines[1]


def _clean_env() -> dict[str, str]:
    """The environment of a new user's shell: no virtualenv of ours on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    ours = str(Path(sys.prefix) / "bin")
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != ours)
    env[INNER_RUN] = "1"
    return env


def test_tests_run_outside_the_checkout() -> None:
    """The autouse fixture in conftest.py moves every test to an empty directory of its own,
    so what the demo leaves in the checkout (``runs/``, ``models/``, caches) is never seen."""
    here = Path.cwd().resolve()
    assert here != ROOT
    assert ROOT not in here.parents
    assert list(here.iterdir()) == []


@pytest.mark.slow
@pytest.mark.timeout(3600)
@pytest.mark.skipif(bool(os.environ.get(INNER_RUN)), reason="inside the README's test command")
@pytest.mark.skipif(
    os.environ.get(FRESH_CLONE) != "1", reason=f"a release check: set {FRESH_CLONE}=1 to run it"
)
def test_readme_commands_pass_in_sequence_in_a_fresh_clone(tmp_path: Path) -> None:
    """A new user's first minutes: the demo, then the test command, in one fresh clone.

    The clone is of the committed HEAD (uncommitted changes are not in it), so this checks
    what a user gets. Both commands run verbatim, the demo's two-minute walltime included:
    the test command must pass in a checkout where the demo left ``runs/demo``,
    ``models/demo`` and ``.hpo_cache/``, which is what this test exists for. It costs the
    demo (install, synth, a 2-minute campaign, export) and a second, inner run of the suite
    (without this test, skipped through ``HPO_README_INNER_RUN``); the seconds of each
    command are printed.
    """
    head = _git_head()
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", head], check=True)
    env = _clean_env()
    for number, command in enumerate(_readme_commands(), start=1):
        log = tmp_path / f"command{number}.log"
        start = time.monotonic()
        with open(log, "w") as out:
            done = subprocess.run(
                ["bash", "-c", command], cwd=clone, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        seconds = time.monotonic() - start
        print(f"README command {number}: exit {done.returncode} in {seconds:.0f} s")
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        assert done.returncode == 0, f"README command {number} failed:\n{command}\n{tail}"
    assert (clone / "runs" / "demo" / "result.json").is_file()
    assert (clone / "models" / "demo").is_dir()
