"""The optimizer table: one entry adds an optimizer; settings, CLI, SMAC and the docs read it."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from toy_objectives import ToyObjective, toy_config

from hpo.campaign import config as config_module
from hpo.campaign import run_campaign
from hpo.campaign.optimizers import (
    Optimizer,
    canonical_name,
    get_optimizer,
    known_optimizers,
    legacy_aliases,
    multi_fidelity_optimizers,
    offered_optimizers,
    register,
    unregister,
)
from hpo.cli import main
from hpo.errors import ConfigError
from hpo.runs.record.folder import read_trials
from hpo.runs.views.history import load_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def plain_random() -> Iterator[Optimizer]:
    """Random search under another name, registered for one test."""
    from hpo.campaign.smac.facade_builders import build_random

    entry = register(
        Optimizer(
            name="plain-random",
            multi_fidelity=False,
            facade=build_random,
            description="random search, registered by a test",
        )
    )
    yield entry
    unregister(entry.name)


def test_the_built_in_table() -> None:
    assert offered_optimizers() == ("model-hb", "model-sh", "random-hb", "bo", "random")
    assert known_optimizers() == (*offered_optimizers(), "random-sh")
    assert multi_fidelity_optimizers() == ("model-hb", "model-sh", "random-hb", "random-sh")
    assert legacy_aliases() == {"hyperband": "random-hb", "sh": "random-sh"}
    assert canonical_name("sh") == "random-sh"
    assert get_optimizer("hyperband").name == "random-hb"
    model_based = tuple(n for n in known_optimizers() if get_optimizer(n).model_based)
    assert model_based == ("model-hb", "model-sh", "bo")


def test_the_old_names_are_views_of_the_table(plain_random: Optimizer) -> None:
    assert "plain-random" in config_module.OPTIMIZERS
    assert "plain-random" not in config_module.MULTI_FIDELITY
    assert config_module.LEGACY_OPTIMIZERS == legacy_aliases()
    with pytest.raises(AttributeError, match="has no attribute 'NOPE'"):
        _ = config_module.NOPE


def test_every_builder_path_resolves() -> None:
    for name in known_optimizers():
        builder = get_optimizer(name).builder()
        assert builder.__module__ == "hpo.campaign.smac.facade_builders", name
        assert builder.__name__ == "build_" + name.replace("-", "_"), name


def test_an_unknown_optimizer_is_one_line(data_root: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'optimizer': expected one of model-hb, .*'nope'"):
        toy_config(tmp_path, data_root, optimizer="nope")


def test_a_taken_name_cannot_be_registered_twice() -> None:
    twin = Optimizer(name="x", multi_fidelity=False, facade="m:f", description="d", aliases=("sh",))
    with pytest.raises(ConfigError, match="optimizer 'sh' is registered already"):
        register(twin)
    assert "x" not in known_optimizers()


def test_a_registered_optimizer_runs_a_campaign(
    plain_random: Optimizer, data_root: Path, tmp_path: Path
) -> None:
    cfg = toy_config(tmp_path / "runs", data_root, trials=5, optimizer="plain-random")
    out = io.StringIO()
    result = run_campaign(
        cfg, objective=ToyObjective(), quiet=True, console=Console(file=out, width=300)
    )
    records = read_trials(cfg.run_dir / "trials.jsonl")
    assert result.n_trials == len(records) == 5
    assert records[0]["baseline"] is True
    # single-fidelity: every trial at the largest budget
    assert {r["budget"] for r in records} == {cfg.max_budget}
    assert load_run(cfg.run_dir).optimizer == "plain-random"


def test_the_cli_offers_a_registered_optimizer(
    plain_random: Optimizer, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help
    assert "plain-random: random search, registered by a test" in text
    assert "{model-hb,model-sh,random-hb,bo,random,plain-random}" in text


def test_an_unregistered_optimizer_is_gone() -> None:
    register(Optimizer(name="gone", multi_fidelity=True, facade="m:f", description="d"))
    unregister("gone")
    assert "gone" not in known_optimizers()
    with pytest.raises(ConfigError, match="found 'gone'"):
        get_optimizer("gone")


def test_the_campaign_docs_list_every_offered_optimizer() -> None:
    text = (ROOT / "docs" / "campaigns.md").read_text()
    listed = re.search(r"`--optimizer` \(([^;]+);", text)
    assert listed is not None, "docs/campaigns.md: the '--optimizer (...)' list is missing"
    names = re.findall(r"`([a-z-]+)`", listed.group(1))
    assert tuple(names) == offered_optimizers()
    paragraph = text[text.index("**Optimizers.**") :].split("\n\n")[0]
    for name in offered_optimizers():
        assert f"`{name}`" in paragraph, f"docs/campaigns.md: Optimizers omits {name}"


def test_the_table_loads_without_smac() -> None:
    """Settings and run folders are read without SMAC (about 3 seconds to import)."""
    code = "import sys, hpo.campaign.config as c; c.OPTIMIZERS; print('smac' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
