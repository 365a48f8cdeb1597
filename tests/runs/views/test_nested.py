"""Reading per-subset runs (hpo.runs.views.nested): load_any, the combined score, the run list,
and their figure (hpo.runs.views.plots.plot_subsets). Runs are made with a toy objective."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
from graphs import write_toy_root
from rich.console import Console
from toy_objectives import InterruptAfter, toy_config

from hpo.campaign import run_campaign
from hpo.errors import UsageError
from hpo.runs.views.history import RunHistory
from hpo.runs.views.nested import (
    SubsetRun,
    as_run,
    combine_subsets,
    is_subset_run,
    list_runs,
    load_any,
    load_subset_run,
)
from hpo.runs.views.plots import plot_subsets

TWO = ("tile:xla", "layout:xla:default")


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    write_toy_root(root, ("tile/xla", "layout/xla/default"))
    console = Console(file=io.StringIO())
    for name, per in (("pc", "collection"), ("one", "none")):
        cfg = toy_config(tmp_path / "runs", root, name=name, collections=TWO, per=per, trials=4)
        run_campaign(cfg, objective=InterruptAfter(10**6), quiet=True, console=console)
    return tmp_path / "runs"


def test_load_any_tells_the_two_kinds_apart(runs: Path) -> None:
    nested, single = load_any("pc", runs), load_any("one", runs)
    assert isinstance(nested, SubsetRun)
    assert isinstance(single, RunHistory)
    assert is_subset_run(runs / "pc")
    assert not is_subset_run(runs / "one")
    assert isinstance(load_any("pc/tile-xla", runs), RunHistory)  # a subset is a plain run
    with pytest.raises(UsageError, match="a single campaign, not a per-subset run"):
        load_subset_run("one", runs)


def test_combined_score_is_the_mean_of_each_subsets_own_metric(runs: Path) -> None:
    run = load_subset_run("pc", runs)
    assert (run.per, run.collections, run.n_trials) == ("collection", TWO, 8)
    inc = run.incumbents
    assert inc["tile-xla"] is not None
    assert inc["layout-xla-default"] is not None
    # each collection is scored by its own subset's incumbent, never by the other's
    assert run.metrics == {
        "tile:xla": inc["tile-xla"].metrics["tile:xla"],
        "layout:xla:default": inc["layout-xla-default"].metrics["layout:xla:default"],
    }
    assert run.score == pytest.approx(sum(run.metrics.values()) / 2)


def test_both_kinds_share_one_interface(runs: Path) -> None:
    nested, single = load_any("pc", runs), load_any("one", runs)
    assert (nested.kind, single.kind) == ("subsets", "single")
    assert single.members == {"": single}
    assert list(nested.members) == ["tile-xla/", "layout-xla-default/"]
    assert nested.members["tile-xla/"].path == runs / "pc" / "tile-xla"
    assert [r.name for r in single.curves()] == ["one"]
    assert [r.name for r in nested.curves()] == ["pc/tile-xla", "pc/layout-xla-default"]
    assert as_run(single) is single
    assert as_run(runs / "pc").kind == "subsets"


def test_members_of_a_run_with_a_subset_not_started_is_an_error(runs: Path) -> None:
    shutil.rmtree(runs / "pc" / "layout-xla-default")
    with pytest.raises(UsageError, match="subset 'layout-xla-default' has not started"):
        _ = load_subset_run("pc", runs).members


def test_combine_subsets_takes_each_collection_from_its_own_subset() -> None:
    plan = {"a": ("tile:xla",), "b": ("layout:xla:default", "layout:nlp:default")}
    own = {"tile:xla": 0.9, "layout:xla:default": 0.1}  # b's tile score must not be taken
    metrics, score = combine_subsets(
        plan,
        {"a": own, "b": {"tile:xla": 0.0, "layout:xla:default": 0.5, "layout:nlp:default": 0.3}},
    )
    assert metrics == {"tile:xla": 0.9, "layout:xla:default": 0.5, "layout:nlp:default": 0.3}
    assert score == pytest.approx((0.9 + 0.5 + 0.3) / 3)
    metrics, score = combine_subsets(plan, {"a": own, "b": None})
    assert (metrics, score) == ({"tile:xla": 0.9}, None)  # a partial mean would flatter


def test_no_module_asks_which_kind_of_run_it_holds() -> None:
    """Readers use the shared interface (``kind``, ``members``, ``curves``); only the two
    modules that define the kinds test an object's class against them."""
    import ast

    hpo_dir = Path(__file__).resolve().parents[3] / "hpo"
    views = hpo_dir / "runs" / "views"
    allowed = {views / "history.py", views / "nested.py"}
    found = []
    for path in sorted(hpo_dir.rglob("*.py")):
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
                names = {n.id for n in ast.walk(node.args[1]) if isinstance(n, ast.Name)}
                if names & {"RunHistory", "SubsetRun"}:
                    found.append(f"{path.relative_to(hpo_dir)}:{node.lineno}")
    assert found == []


def test_a_subset_not_started_leaves_no_combined_score(runs: Path) -> None:
    shutil.rmtree(runs / "pc" / "layout-xla-default")
    run = load_subset_run("pc", runs)
    assert list(run.subsets) == ["tile-xla"]
    assert run.incumbents["layout-xla-default"] is None
    assert run.score is None
    assert set(run.metrics) == {"tile:xla"}


def test_list_runs_has_the_parent_then_its_subsets(runs: Path) -> None:
    rows = list_runs(runs)
    names = [r.name for r in rows]
    assert names.index("pc/tile-xla") == names.index("pc") + 1
    assert set(names) == {"pc", "pc/tile-xla", "pc/layout-xla-default", "one"}
    parent = next(r for r in rows if r.name == "pc")
    assert parent.optimizer == "random-hb per collection"
    assert parent.n_trials == 8
    assert parent.best_score == pytest.approx(load_subset_run("pc", runs).score)


def test_plot_subsets_draws_one_panel_per_subset(runs: Path, tmp_path: Path) -> None:
    shutil.rmtree(runs / "pc" / "layout-xla-default")  # a missing panel says so, no crash
    out = plot_subsets(load_subset_run("pc", runs), tmp_path / "fig" / "pc.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
