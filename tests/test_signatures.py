"""No function in hpo/ takes more than 8 parameters: options that travel together are one object.

Counted: every parameter (positional, keyword-only, ``*args``, ``**kwargs``) but ``self`` and
``cls``, of functions, methods and lambdas alike.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hpo"
MAX_PARAMETERS = 8


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[str]:
    """The parameter names of ``node`` that count (all but ``self`` and ``cls``)."""
    a = node.args
    names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
    names += [p.arg for p in (a.vararg, a.kwarg) if p is not None]
    return [n for n in names if n not in ("self", "cls")]


def too_long(source: str, name: str) -> list[str]:
    """``file:line function (n)`` for every function of ``source`` over the limit."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            count = len(parameters(node))
            if count > MAX_PARAMETERS:
                label = getattr(node, "name", "<lambda>")
                found.append(f"{name}:{node.lineno} {label} ({count})")
    return found


def test_the_count_sees_every_kind_of_parameter() -> None:
    source = (
        "def f(a, /, b, *c, d, e, f, g, h, **i): pass\n"
        "class K:\n    def m(self, a, b, c, d, e, f, g, h): pass\n"
        "g = lambda a, b, c, d, e, f, g, h, i: 0\n"
    )
    assert too_long(source, "x.py") == ["x.py:1 f (9)", "x.py:4 <lambda> (9)"]


def test_no_function_takes_more_than_eight_parameters() -> None:
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        for hit in too_long(path.read_text(), str(path.relative_to(PACKAGE.parent)))
    ]
    assert not found, "bundle the options into one settings object: " + ", ".join(found)
