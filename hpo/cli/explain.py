"""``hpo explain``: why a model ranks config A of a graph before or after config B."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import TYPE_CHECKING, Any

from rich.table import Table

from hpo.campaign.progress import stdout_console
from hpo.cli.options import add_options
from hpo.data.load import is_layout
from hpo.errors import UsageError

if TYPE_CHECKING:
    from hpo.deploy.explain import Explanation

__all__ = ["add_parsers"]


def add_parsers(sub: Any) -> None:
    """Add ``explain`` to the top-level sub-parsers."""
    p = sub.add_parser(
        "explain",
        help="why a model orders two configs of a graph: feature groups and, for layouts, nodes",
    )
    add_options(p, "model", "data-required", "graph", "configs", "cache-dir-of-model", "json")
    p.set_defaults(handler=_cmd_explain)


def _pair(text: str) -> tuple[int, int]:
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().lstrip("-").isdigit() for p in parts):
        raise UsageError(f"--configs: expected two config indices A,B, found '{text}'")
    return int(parts[0]), int(parts[1])


def _json(e: Explanation) -> dict[str, Any]:
    out = dataclasses.asdict(e)
    out["path"] = str(e.path)
    out["difference"] = e.difference
    out["tied"] = e.tied
    for g, group in zip(out["groups"], e.groups, strict=True):
        g["difference"] = group.difference
    return out


def _measured(e: Explanation) -> str:
    """The measured runtimes as the file holds them: layout in ns (shown in ms), tile over
    the default tiling's runtime (the file's normalizer)."""
    if e.runtime_a is None or e.runtime_b is None:
        return "measured - and -"
    if is_layout(e.collection):
        return f"measured {e.runtime_a / 1e6:.3f} ms and {e.runtime_b / 1e6:.3f} ms"
    return f"measured {e.runtime_a:.4g}x and {e.runtime_b:.4g}x the default tiling's runtime"


def _print(e: Explanation) -> None:
    console = stdout_console()
    d = e.difference
    if e.tied:
        ranks = f"configs {e.a} and {e.b} tied at rank {e.rank_a + 1} (the same model score)"
        verdict = "no order predicted between them"
    else:
        ranks = f"config {e.a} ranked {e.rank_a + 1}, config {e.b} ranked {e.rank_b + 1}"
        verdict = f"B predicted {'slower' if d > 0 else 'faster'}"
    console.print(
        f"{e.collection} {e.path.stem} ({e.n_configs} configs): {ranks} by the model "
        f"({_measured(e)})\n"
        f"trees' score (lower = predicted faster): A {e.score_a:.4f}, B {e.score_b:.4f}, "
        f"B - A {d:+.4f} ({verdict})",
        highlight=False,
    )
    groups = Table(
        title="Feature groups (contribution to B - A, largest first)", title_justify="left"
    )
    for col in ("group", "A", "B", "B - A", "share"):
        groups.add_column(col, justify="left" if col == "group" else "right")
    for g in e.groups:
        if g.a == 0 and g.b == 0:
            continue  # the trees never split on it
        share = g.difference / d if d else 0.0
        groups.add_row(g.group, f"{g.a:.4f}", f"{g.b:.4f}", f"{g.difference:+.4f}", f"{share:.0%}")
    console.print(groups)
    if e.nodes is None:
        return
    nodes = Table(
        title=f"Nodes whose layout differs ({len(e.nodes)}): A with that node alone taking B's "
        "layout, largest move towards B first",
        title_justify="left",
    )
    for col in ("node", "opcode", "shape", "layout A -> B", "move", "share"):
        nodes.add_column(col, justify="right" if col in ("node", "move", "share") else "left")
    for n in e.nodes[:15]:
        share = n.effect / d if d else 0.0
        nodes.add_row(
            str(n.node),
            n.opcode,
            "x".join(map(str, n.shape)),
            "  ".join(f"{k} {v} -> {n.layout_b[k]}" for k, v in n.layout_a.items()),
            f"{n.effect:+.4f}",
            f"{share:.0%}",
        )
    console.print(nodes)
    if e.together is not None and e.together_nodes:
        share = e.together / d if d else 0.0
        named = ", ".join(str(n.node) for n in e.nodes[: len(e.together_nodes)])
        console.print(
            f"nodes {named} switched to B's layout together move A by {e.together:+.4f}: "
            f"{share:.0%} of B - A",
            highlight=False,
        )


def _cmd_explain(args: argparse.Namespace) -> int:
    from hpo.deploy.explain import explain_configs
    from hpo.deploy.model import load_model

    a, b = _pair(args.configs)
    model = load_model(args.model)
    e = explain_configs(model, args.data, args.graph, a, b, cache_dir=args.cache_dir)
    if args.json:
        print(json.dumps(_json(e), indent=2))
    else:
        _print(e)
    return 0
