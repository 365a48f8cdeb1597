"""``hpo data check``: validate every file of a dataset root and summarise it.

A bad file never stops the others from being checked: each one yields one problem line
(path, key, expected vs found) and the summary covers the good files.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hpo.data.graph_files import graph_file_problem
from hpo.data.load import (
    COLLECTIONS,
    LAW_FILE,
    SPLITS,
    SYNTH_FILE,
    LayoutGraph,
    collection_dir,
    is_layout,
    iter_config_chunks,
    load_graph,
)
from hpo.data.overlap import SharedGraph, graph_digest, shared_graphs
from hpo.data.runtimes import carries_ranking
from hpo.errors import DataFormatError, UsageError

__all__ = ["CheckReport", "SplitSummary", "absent_line", "check_dataset", "incomplete_root"]


@dataclass
class SplitSummary:
    """Sizes of the valid graphs of one collection and split."""

    collection: str
    split: str
    nodes: list[int] = field(default_factory=list)
    config_nodes: list[int] = field(default_factory=list)
    configs: list[int] = field(default_factory=list)
    unlabeled: int = 0
    bad: int = 0

    @property
    def graphs(self) -> int:
        """Number of valid graphs."""
        return len(self.nodes)


@dataclass
class CheckReport:
    """What :func:`check_dataset` found: per-split summaries, one line per bad file, the
    ``(collection, split)`` pairs with no folder (a run on them would fail later), the
    valid and test graphs that are also in train (:mod:`hpo.data.overlap`), whether the
    root is one ``data synth`` did not finish (``incomplete``: the line saying so), and the
    labeled graphs that carry no ranking (``unranked``, one line each: one config, or every
    runtime equal; scoring leaves them out of its means)."""

    summaries: list[SplitSummary]
    problems: list[str]
    absent: list[tuple[str, str]] = field(default_factory=list)
    shared: list[SharedGraph] = field(default_factory=list)
    incomplete: str | None = None
    unranked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every file is valid, at least one graph was found and the root is whole."""
        return (
            not self.problems and self.incomplete is None and any(s.graphs for s in self.summaries)
        )


def incomplete_root(root: Path) -> str | None:
    """One line if ``root`` is a root ``data synth`` began and did not finish (it writes
    ``law.json`` first and ``synth.json`` after the last graph), else ``None``."""
    if not (root / LAW_FILE).is_file() or (root / SYNTH_FILE).is_file():
        return None
    return (
        f"{root}: data synth did not finish this root (it holds {LAW_FILE} but not "
        f"{SYNTH_FILE}, written after the last graph); run data synth again with the same "
        "--out, --scale and --seed"
    )


def _check_config_values(graph: LayoutGraph, chunk_size: int) -> None:
    """Stream node_config_feat whole: its zip CRC and the layout values are checked on the way
    (by :func:`hpo.data.load.iter_config_chunks`, as for every command that reads it)."""
    for _ in iter_config_chunks(graph.path, chunk_size):
        pass


def check_dataset(
    root: Path,
    *,
    deep: bool = True,
    chunk_size: int = 2048,
    on_file: Callable[[Path], None] | None = None,
) -> CheckReport:
    """Validate every graph file under ``root``.

    Parameters
    ----------
    root
        Dataset root (holding ``npz/``).
    deep
        Also stream every layout file's ``node_config_feat`` (checks its CRC and values);
        without it only headers, shapes and the small keys are checked.
    chunk_size
        Configs per chunk when streaming.
    on_file
        Called with each path before it is checked (for progress display).

    Raises
    ------
    UsageError
        If ``root`` has no ``npz`` folder.
    """
    root = Path(root)
    if not (root / "npz").is_dir():
        raise UsageError(f"{root}: not a TpuGraphs dataset root (no npz/ folder)")
    summaries: list[SplitSummary] = []
    problems: list[str] = []
    absent: list[tuple[str, str]] = []
    digests: dict[tuple[str, str], dict[Path, str]] = {}
    unranked: list[str] = []
    for collection in COLLECTIONS:
        for split in SPLITS:
            folder = collection_dir(root, collection, split)
            if not folder.is_dir():
                absent.append((collection, split))
                continue
            summary = SplitSummary(collection, split)
            summaries.append(summary)
            found = digests.setdefault((collection, split), {})
            for path in sorted(folder.glob("*.npz")):
                if on_file is not None:
                    on_file(path)
                problem = graph_file_problem(path)  # what every command that lists says
                if problem is not None:
                    problems.append(problem)
                    summary.bad += 1
                    continue
                try:
                    graph = load_graph(path, collection)
                    if isinstance(graph, LayoutGraph):
                        if deep:
                            _check_config_values(graph, chunk_size)
                        summary.config_nodes.append(graph.n_config_nodes)
                except DataFormatError as exc:
                    problems.append(str(exc))
                    summary.bad += 1
                    continue
                summary.nodes.append(graph.n_nodes)
                summary.configs.append(graph.n_configs)
                summary.unlabeled += int(not graph.labeled)
                if graph.labeled and not carries_ranking(graph.target):
                    unranked.append(_unranked_problem(path, graph.target))
                found[path] = graph_digest(graph.node_feat, graph.node_opcode, graph.edge_index)
    return CheckReport(
        summaries=summaries,
        problems=problems,
        absent=absent,
        shared=shared_graphs(digests),
        incomplete=incomplete_root(root),
        unranked=unranked,
    )


def _unranked_problem(path: Path, target: np.ndarray) -> str:
    """One line of a labeled graph that carries no ranking: what it holds."""
    if target.size < 2:
        return f"{path}: one config, nothing to order"
    return f"{path}: every one of its {target.size} configs has the runtime {target[0]:g}"


def absent_line(report: CheckReport) -> str | None:
    """One line naming the collections and splits with no folder, or ``None``."""
    parts: list[str] = []
    for collection in COLLECTIONS:
        splits = [s for c, s in report.absent if c == collection]
        if len(splits) == len(SPLITS):
            parts.append(f"{collection} (every split)")
        elif splits:
            parts.append(f"{collection} {'/'.join(splits)}")
    return f"absent: {', '.join(parts)}" if parts else None


def format_range(values: list[int]) -> str:
    """``min/median/max`` of a list of sizes, or ``-`` when empty."""
    if not values:
        return "-"
    arr = np.asarray(values)
    return f"{arr.min()}/{int(np.median(arr))}/{arr.max()}"


def summary_rows(report: CheckReport) -> list[list[str]]:
    """Rows of the summary table: collection, split, graphs, unlabeled, bad, sizes."""
    return [
        [
            s.collection,
            s.split,
            str(s.graphs),
            str(s.unlabeled),
            str(s.bad),
            format_range(s.nodes),
            format_range(s.config_nodes) if is_layout(s.collection) else "-",
            format_range(s.configs),
        ]
        for s in report.summaries
    ]
