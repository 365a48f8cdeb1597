"""bench_realscale's child processes run the code tree they are given, not the cwd's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench_modules import load_bench

REPO = Path(__file__).resolve().parents[1]


def _fake_tree(root: Path) -> Path:
    (root / "hpo").mkdir(parents=True)
    (root / "hpo" / "__init__.py").write_text("")
    (root / "hpo" / "cli.py").write_text(
        "import hpo, sys\ndef main():\n    print(hpo.__file__, sys.argv[1:])\n    return 0\n"
    )
    return root


def test_the_child_runs_the_given_tree_even_from_another_checkout(tmp_path: Path) -> None:
    code = load_bench("bench_realscale").tree_code(_fake_tree(tmp_path / "tree"))
    # from the repository root, whose own hpo `python -c` would otherwise import first
    out = subprocess.run(
        [sys.executable, "-c", code, "run", "--x"],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.split()[0] == str((tmp_path / "tree" / "hpo" / "__init__.py").resolve())
    assert "['run', '--x']" in out.stdout


def test_a_tree_without_hpo_fails_instead_of_running_another(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code = load_bench("bench_realscale").tree_code(tmp_path / "empty")
    out = subprocess.run(
        [sys.executable, "-c", code, "run"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert out.returncode != 0
    assert "hpo from " + str(REPO / "hpo") in out.stderr
