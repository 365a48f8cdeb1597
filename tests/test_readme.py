from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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


def test_readme_demo_uses_real_cli_options() -> None:
    from hpo.cli import build_parser

    install = _readme_commands()[0]
    parser = build_parser()
    for part in install.split("&&"):
        words = part.split()
        if words and words[0].endswith("/hpo"):
            parser.parse_args(words[1:])  # raises SystemExit on an unknown option
