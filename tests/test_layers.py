"""The stages import one way: a lower stage never imports a higher one, and modules form no cycle.

Inside a stage the same holds for its subpackages (``hpo.campaign.smac``, ``hpo.runs.record``
...): each has a rank and imports only its stage's own modules and subpackages of a lower rank.
A package folder holds at most ten modules: one that grows past that is cut by concept into
subpackages (STYLE.md), not by a line count.

Every ``import`` counts, including those inside functions and under ``TYPE_CHECKING``: a
type-only import still ties two modules together for a reader, and a function-level import
still loads the higher stage at run time.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hpo"

#: Rank of each stage; a module may import only stages of a lower rank, or its own stage.
#: Stages of equal rank (synth and features; campaign and deploy) must not import each other.
RANKS = {
    "errors": 0,
    "ownership": 1,
    "data": 1,
    "synth": 2,
    "features": 2,
    "ranking": 3,
    "runs": 4,
    "campaign": 5,
    "deploy": 5,
    "cli": 6,
    "api": 6,
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every ``hpo.*`` module imported anywhere in ``path``."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("hpo."))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "hpo":
                found.update(f"hpo.{a.name}" for a in node.names)
            elif node.module.startswith("hpo."):
                found.add(node.module)
    return found


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


MODULES = {
    _module_name(p): _imports(p) for p in sorted(PACKAGE.rglob("*.py")) if "_spaces" not in p.parts
}


def test_every_stage_has_a_rank() -> None:
    stages = {_stage(m) for m in MODULES} - {None}
    assert stages <= set(RANKS), f"stages without a rank: {sorted(stages - set(RANKS))}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _stage(m) is not None))
def test_imports_flow_down(module: str) -> None:
    own = _stage(module)
    assert own is not None
    wrong = sorted(
        target
        for target in MODULES[module]
        if (stage := _stage(target)) is not None
        and stage != own
        and stage in RANKS
        and RANKS[stage] >= RANKS[own]
    )
    assert not wrong, f"{module} (stage {own}) imports a stage at or above its own: {wrong}"


def _resolve(target: str) -> str | None:
    """The module a dotted import names (a name imported from a package counts as the package)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def test_no_import_cycles() -> None:
    graph: dict[str, set[str]] = {}
    for module, targets in MODULES.items():
        edges = {_resolve(t) for t in targets} - {None, module}
        # a package's __init__ re-exports its modules: that is not a dependency of theirs
        graph[module] = {e for e in edges if e is not None and not module.startswith(e + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt.startswith(node + "."):
                continue  # a package importing its own module
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt) :] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if state.get(nxt) is None:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for module in sorted(graph):
        if state.get(module) is None:
            visit(module)


@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("hpo.runs", ("smac", "dask", "matplotlib")),
        ("hpo.deploy", ("smac", "dask")),
        ("hpo.ranking", ("smac", "dask")),
        ("hpo.features", ("smac", "lightgbm", "dask")),
    ],
)
def test_lower_stages_load_without_heavy_dependencies(module: str, forbidden: tuple[str]) -> None:
    code = f"import sys, {module}; print(','.join(m for m in {forbidden!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"importing {module} loaded {out.stdout.strip()}"


#: Largest number of modules (``__init__.py`` not counted) one package folder may hold.
MAX_MODULES_PER_FOLDER = 10


def _folders() -> list[Path]:
    return sorted(
        p for p in [PACKAGE, *PACKAGE.rglob("*")] if p.is_dir() and (p / "__init__.py").exists()
    )


@pytest.mark.parametrize("folder", _folders(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_package_folder_holds_more_than_ten_modules(folder: Path) -> None:
    """A folder that grows past this is cut by concept into subpackages (STYLE.md)."""
    modules = sorted(p.name for p in folder.glob("*.py") if p.name != "__init__.py")
    assert len(modules) <= MAX_MODULES_PER_FOLDER, (
        f"{folder.relative_to(PACKAGE.parent)} holds {len(modules)} modules: cut it by concept"
    )


#: Rank of each subpackage inside its stage; a subpackage may import its stage's own modules and
#: subpackages of a lower rank. Subpackages of equal rank must not import each other.
SUBPACKAGE_RANKS = {
    "campaign": {"seeding": 1, "smac": 2, "lifecycle": 3},
    "ranking": {"model": 1, "prior": 1, "scoring": 2},
    "features": {"layout": 1, "table": 2},
    "runs": {"record": 1, "views": 2},
    "deploy": {"explain": 1},
}


def _unit(module: str) -> tuple[str, str] | None:
    """``(stage, part)``: the subpackage or top-level module of its stage that ``module`` is in."""
    parts = module.split(".")
    return (parts[1], parts[2]) if len(parts) > 2 else None


def _subpackages() -> set[tuple[str, str]]:
    return {
        (p.parent.name, p.name)
        for p in PACKAGE.glob("*/*")
        if p.is_dir() and (p / "__init__.py").exists()
    }


def test_every_subpackage_has_a_rank() -> None:
    ranked = {(stage, sub) for stage, subs in SUBPACKAGE_RANKS.items() for sub in subs}
    assert _subpackages() == ranked


@pytest.mark.parametrize(
    "module", sorted(m for m in MODULES if (u := _unit(m)) is not None and u in _subpackages())
)
def test_subpackages_import_down(module: str) -> None:
    stage, own = _unit(module) or ("", "")
    ranks = SUBPACKAGE_RANKS[stage]
    wrong = sorted(
        target
        for target in MODULES[module]
        if (unit := _unit(target)) is not None
        and unit[0] == stage
        and unit[1] != own
        and unit[1] in ranks
        and ranks[unit[1]] >= ranks[own]
    )
    assert not wrong, f"{module} ({stage}.{own}) imports a subpackage at or above its own: {wrong}"


def test_no_cycles_between_the_parts_of_a_stage() -> None:
    """Top-level modules and subpackages of one stage, taken as wholes, form no cycle."""
    graph: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for module, targets in MODULES.items():
        own = _unit(module)
        if own is None:
            continue
        edges = graph.setdefault(own, set())
        for target in targets:
            unit = _unit(target)
            if unit is not None and unit[0] == own[0] and unit != own:
                edges.add(unit)
    done: set[tuple[str, str]] = set()

    def visit(node: tuple[str, str], path: list[tuple[str, str]]) -> None:
        if node in path:
            cycle = path[path.index(node) :] + [node]
            pytest.fail("cycle: " + " -> ".join(".".join(u) for u in cycle))
        if node in done:
            return
        for nxt in sorted(graph.get(node, ())):
            visit(nxt, [*path, node])
        done.add(node)

    for node in sorted(graph):
        visit(node, [])
