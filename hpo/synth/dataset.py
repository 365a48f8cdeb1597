"""Generate a synthetic TpuGraphs dataset: the real file layout, keys and dtypes.

:func:`generate_dataset` writes the five collections x three splits under a root folder::

    npz/tile/xla/{train,valid,test}/<stem>.npz
    npz/layout/{xla,nlp}/{default,random}/{train,valid,test}/<stem>.npz

Runtimes follow hidden cost laws (hardware-tile padding, layout copies, tile memory budget;
see :mod:`hpo.synth.tile` and :mod:`hpo.synth.layout`) that good per-config features can
learn. The test split is unlabeled as in the real data (tile runtimes 0 and normalizers 1,
layout runtimes 0) and has 32-hex-character stems.

The output is a function of ``(scale, seed)`` only: every file has its own generator seeded by
``SeedSequence(seed, spawn_key=(collection, split, index))`` and is written with fixed zip
timestamps, so two runs give byte-identical files.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hpo.data.load import COLLECTIONS, LAW_FILE, SPLITS, SYNTH_FILE, collection_dir, is_layout
from hpo.errors import StorageError, UsageError, naming
from hpo.ownership import check_replaceable
from hpo.synth.law_family import LawConstants, law_record, resolve_law
from hpo.synth.layout import write_layout_file
from hpo.synth.tile import write_tile_file

__all__ = ["SCALES", "ScaleSpec", "generate_dataset", "scale_spec"]

SCALES: tuple[str, ...] = ("tiny", "small", "full", "real")


@dataclass(frozen=True, kw_only=True)
class ScaleSpec:
    """Sizes of one scale. Ranges are inclusive ``(low, high)``, drawn log-uniformly.

    Attributes
    ----------
    tile_graphs, layout_graphs
        Graphs per split ``(train, valid, test)``; ``layout_graphs`` is per layout collection.
    tile_nodes, tile_configs
        Nodes and configurations of a tile graph.
    layout_nodes, layout_config_nodes, layout_configs
        Nodes, configurable nodes and configurations of a labeled layout graph.
    layout_test_configs
        Configurations of a layout test graph.
    big_layout_configs
        Configurations of the first train graph of each ``nlp`` layout collection (the
        real nlp files are the largest), or None.
    nlp_layout_configs
        Configurations of every labeled ``nlp`` layout graph, or None (``layout_configs``).
    """

    name: str
    tile_graphs: tuple[int, int, int]
    tile_nodes: tuple[int, int]
    tile_configs: tuple[int, int]
    layout_graphs: tuple[int, int, int]
    layout_nodes: tuple[int, int]
    layout_config_nodes: tuple[int, int]
    layout_configs: tuple[int, int]
    layout_test_configs: tuple[int, int]
    big_layout_configs: tuple[int, int] | None = None
    nlp_layout_configs: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        for field in (
            "tile_nodes",
            "tile_configs",
            "layout_nodes",
            "layout_config_nodes",
            "layout_configs",
            "layout_test_configs",
        ):
            low, high = getattr(self, field)
            if not 1 <= low <= high:
                raise ValueError(f"ScaleSpec.{field}: expected 1 <= low <= high, got {low, high}")
        if min(self.tile_nodes + self.layout_nodes) < 8:
            raise ValueError("ScaleSpec: graphs need at least 8 nodes")

    def graphs(self, collection: str, split: str) -> int:
        """Number of graphs of ``collection`` in ``split``."""
        counts = self.layout_graphs if is_layout(collection) else self.tile_graphs
        return counts[SPLITS.index(split)]


def scale_spec(scale: str) -> ScaleSpec:
    """Return the :class:`ScaleSpec` named ``scale`` (one of :data:`SCALES`).

    Raises
    ------
    UsageError
        If ``scale`` is not a known scale.
    """
    if scale == "tiny":  # everything in a few seconds: unit tests
        return ScaleSpec(
            name="tiny",
            tile_graphs=(4, 2, 2),
            tile_nodes=(10, 40),
            tile_configs=(8, 60),
            layout_graphs=(4, 2, 2),
            layout_nodes=(40, 150),
            layout_config_nodes=(5, 20),
            layout_configs=(30, 200),
            layout_test_configs=(30, 60),
        )
    if scale == "small":  # demo campaign and benchmarks, within a minute
        return ScaleSpec(
            name="small",
            tile_graphs=(60, 15, 15),
            tile_nodes=(10, 60),
            tile_configs=(50, 400),
            layout_graphs=(16, 6, 4),
            layout_nodes=(200, 1500),
            layout_config_nodes=(20, 120),
            layout_configs=(300, 3000),
            layout_test_configs=(300, 600),
        )
    if scale == "full":  # the real statistics, scaled to a few minutes and a few GB
        return ScaleSpec(
            name="full",
            tile_graphs=(300, 60, 60),
            tile_nodes=(10, 60),
            tile_configs=(100, 4000),
            layout_graphs=(6, 3, 3),
            layout_nodes=(2000, 12000),
            layout_config_nodes=(50, 600),
            layout_configs=(2000, 12000),
            layout_test_configs=(900, 1100),
            big_layout_configs=(20000, 40000),
        )
    if scale == "real":  # real per-graph sizes, few graphs: memory and time of full-size files
        return ScaleSpec(
            name="real",
            tile_graphs=(100, 20, 20),
            tile_nodes=(10, 60),
            tile_configs=(
                300,
                6000,
            ),  # log-uniform, mean about 1,900 (real tile graphs: about 1,500)
            layout_graphs=(2, 1, 1),
            layout_nodes=(4000, 12000),
            # real graphs reach 600+ configurable nodes; 400 keeps the dataset near 11 GB
            layout_config_nodes=(200, 400),
            layout_configs=(8000, 10000),  # the real xla graphs
            layout_test_configs=(900, 1100),
            nlp_layout_configs=(60000, 100000),  # real nlp graphs: median 67,000, max 100,040
        )
    raise UsageError(f"unknown scale '{scale}' (expected one of {', '.join(SCALES)})")


_XLA_MODELS = (
    "resnet_v1_50",
    "resnet_v2_101",
    "inception_v3",
    "efficientnet_b4",
    "mask_rcnn",
    "retinanet",
    "unet_3d",
    "alexnet_train",
    "mobilenet_v2",
    "shapemask",
    "ncf",
    "dlrm",
    "transformer_tf2",
    "brax_es",
    "i3d",
    "vit_l16",
    "mlperf_bert",
    "magenta_dynamic",
)
_NLP_MODELS = (
    "bert_pretraining",
    "albert_en_base",
    "electra_small",
    "mobilebert_en_uncased",
    "talking-heads_base",
    "experts_bert_pubmed",
    "bert_en_cased_L-12_H-768_A-12",
    "small_bert_bert_en_uncased_L-4_H-512_A-8",
    "t5_small",
    "gpt2_medium",
)


def _draw_stem(rng: np.random.Generator, collection: str) -> str:
    batch = int(rng.choice([1, 8, 16, 32, 64, 128, 256]))
    if collection == "tile:xla":
        sign = "-" if rng.random() < 0.5 else ""
        return f"{rng.choice(_XLA_MODELS)}_batch_{batch}_{sign}{rng.bytes(8).hex()}"
    if ":xla:" in collection:
        return f"{rng.choice(_XLA_MODELS)}_batch_{batch}_{rng.bytes(4).hex()}"
    model = str(rng.choice(_NLP_MODELS))
    if rng.random() < 0.4:
        precision = rng.choice(["fp16", "fp32"])
        return f"{model}.{rng.choice([2, 4, 8])}x{rng.choice([8, 16])}.{precision}"
    return f"{model}_batch_size_{batch}_{rng.choice(['train', 'test'])}"


def _plan_stems(seed: int, spec: ScaleSpec) -> dict[tuple[str, str], list[str]]:
    """Stems of every file, unique across the whole dataset."""
    used: set[str] = set()
    plan: dict[tuple[str, str], list[str]] = {}
    for ci, collection in enumerate(COLLECTIONS):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(ci, len(SPLITS))))
        for split in SPLITS:
            stems: list[str] = []
            while len(stems) < spec.graphs(collection, split):  # loop over graphs
                stem = rng.bytes(16).hex() if split == "test" else _draw_stem(rng, collection)
                if stem in used:
                    continue
                used.add(stem)
                stems.append(stem)
            plan[(collection, split)] = stems
    return plan


def _log_uniform(rng: np.random.Generator, bounds: tuple[int, int]) -> int:
    low, high = bounds
    return int(np.rint(np.exp(rng.uniform(np.log(low), np.log(high)))))


def _write_graph(
    path: Path,
    rng: np.random.Generator,
    spec: ScaleSpec,
    collection: str,
    split: str,
    index: int,
    law: str | LawConstants = "second-order",
) -> tuple[int, int]:
    """Write one graph file; return ``(nodes, configs)``."""
    labeled = split != "test"
    if not is_layout(collection):
        n_nodes = int(rng.integers(spec.tile_nodes[0], spec.tile_nodes[1] + 1))
        n_configs = _log_uniform(rng, spec.tile_configs)
        return n_nodes, write_tile_file(
            path, rng, n_nodes=n_nodes, n_configs=n_configs, labeled=labeled
        )
    source = collection.split(":")[1]
    n_nodes = _log_uniform(rng, spec.layout_nodes)
    n_config_nodes = min(_log_uniform(rng, spec.layout_config_nodes), max(n_nodes // 4, 1))
    big = spec.big_layout_configs
    if not labeled:
        n_configs = _log_uniform(rng, spec.layout_test_configs)
    elif big is not None and source == "nlp" and split == "train" and index == 0:
        n_configs = _log_uniform(rng, big)
    elif spec.nlp_layout_configs is not None and source == "nlp":
        n_configs = _log_uniform(rng, spec.nlp_layout_configs)
    else:
        n_configs = _log_uniform(rng, spec.layout_configs)
    write_layout_file(
        path,
        rng,
        collection=collection,
        n_nodes=n_nodes,
        n_config_nodes=n_config_nodes,
        n_configs=n_configs,
        labeled=labeled,
        law=law,
    )
    return n_nodes, n_configs


def _is_generated_root(root: Path) -> bool:
    """Whether ``root`` is a root this generator wrote: it holds a readable ``law.json``."""
    try:
        return isinstance(json.loads((root / LAW_FILE).read_text(encoding="utf-8")), dict)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False


def _write_json(root: Path, name: str, data: dict) -> None:
    """Write ``root/name`` whole or not at all: a truncated ``law.json`` (a full disk) would
    make the root one this generator did not write, and refuse the run that fills it again;
    a truncated ``synth.json`` would call a root whole."""
    text = json.dumps(data, indent=1) + "\n"
    final, tmp = root / name, root / f".{name}.tmp"
    try:
        with naming(final, option="--out"):
            root.mkdir(parents=True, exist_ok=True)
            tmp.write_text(text)
            os.replace(tmp, final)
    finally:
        with contextlib.suppress(OSError):  # renamed, or never written
            tmp.unlink(missing_ok=True)


def generate_dataset(
    out: Path | str,
    scale: str = "tiny",
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
    *,
    overwrite: bool = False,
    law: str = "second-order",
    law_seed: int | None = None,
) -> dict:
    """Write a synthetic dataset of all five collections and three splits under ``out``.

    Parameters
    ----------
    out
        Dataset root; created if missing.
    scale
        One of :data:`SCALES`: ``tiny`` (unit tests, seconds), ``small`` (demo campaign,
        under a minute), ``full`` (real statistics scaled down, minutes and a few GB).
    seed
        The same seed and scale give byte-identical files.
    progress
        Called with one line of text after each file.
    overwrite
        Delete ``.npz`` files in the collection folders that this run would not write (from
        another seed or scale). Without it such files are an error.
    law
        Hidden layout cost law: ``"second-order"``, ``"first-order"`` (the older law; its
        files changed once, when the generator took upstream's form: ``node_splits`` ending
        with n and partial layouts) or ``"random"``, a member of the family of second-order
        laws drawn from ``law_seed`` (:func:`hpo.synth.layout_law.draw_law`); tile files do
        not depend on it. The law is written to ``law.json`` in the root.
    law_seed
        The seed of a ``random`` law (default: ``seed``); a second root with another ``seed``
        and the same ``law_seed`` holds unseen graphs of the same law.

    Returns
    -------
    dict
        ``root``, ``scale``, ``seed``, ``law`` (its JSON record), ``files``
        ({collection: {split: count}}), ``n_files``, ``configs`` ({collection: total
        configurations}) and ``bytes`` written. It is written to ``synth.json`` in the root
        after the last graph: a root with ``law.json`` (written first) and without
        ``synth.json`` is one a run did not finish (a full disk, Ctrl-C), which ``hpo data
        check`` refuses; running again with the same arguments completes it.

    Raises
    ------
    UsageError
        If ``scale`` or ``law`` is unknown, ``out`` exists and is not a root this generator
        wrote (:mod:`hpo.ownership`), or it holds other graph files and ``overwrite`` is
        False.
    """
    spec = scale_spec(scale)
    constants = resolve_law(law, seed if law_seed is None else law_seed)
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise UsageError(f"--out {root}: is a file; give a folder for the dataset root")
    check_replaceable(root, "--out", kind="generated dataset root", owned=_is_generated_root)
    plan = _plan_stems(seed, spec)
    stale: list[Path] = []
    for (collection, split), stems in plan.items():
        folder = collection_dir(root, collection, split)
        if folder.is_dir():
            stale += [p for p in sorted(folder.glob("*.npz")) if p.stem not in set(stems)]
    if stale and not overwrite:
        raise UsageError(
            f"{root}: holds {len(stale)} graph files this run would not write "
            f"(e.g. {stale[0]}, from another seed or scale); use an empty folder"
        )
    with naming(root / SYNTH_FILE, option="--out"):  # no longer whole, from here on
        (root / SYNTH_FILE).unlink(missing_ok=True)
    for path in stale:
        path.unlink()
    _write_json(root, LAW_FILE, law_record(constants))

    try:
        return _write_graphs(root, plan, spec, seed, scale, constants, progress)
    except StorageError as exc:  # a full disk: say what it left behind
        unfinished = (
            f"{root} is left unfinished (hpo data check refuses it): run data synth again with "
            "the same --out, --scale and --seed, or delete it"
        )
        action = exc.line(option="--out").rsplit("; ", 1)[-1]
        raise StorageError(
            exc.errno or errno.EIO, exc.strerror or "", exc.filename, f"{action}; {unfinished}"
        ) from exc


def _write_graphs(
    root: Path,
    plan: dict[tuple[str, str], list[str]],
    spec: ScaleSpec,
    seed: int,
    scale: str,
    constants: LawConstants | None,
    progress: Callable[[str], None] | None,
) -> dict:
    """Write every graph of ``plan`` under ``root``, then ``synth.json``; the summary."""
    total = sum(len(s) for s in plan.values())
    summary: dict = {
        "root": str(root),
        "scale": scale,
        "seed": seed,
        "law": law_record(constants),
        "files": {},
        "n_files": 0,
        "configs": {},
        "bytes": 0,
    }
    for ci, collection in enumerate(COLLECTIONS):
        summary["files"][collection] = {}
        summary["configs"][collection] = 0
        for si, split in enumerate(SPLITS):
            folder = collection_dir(root, collection, split)
            with naming(folder, option="--out"):
                folder.mkdir(parents=True, exist_ok=True)
            for gi, stem in enumerate(plan[(collection, split)]):
                rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(ci, si, gi)))
                path = folder / f"{stem}.npz"
                n_nodes, n_configs = _write_graph(
                    path, rng, spec, collection, split, gi, constants or "first-order"
                )
                summary["n_files"] += 1
                summary["configs"][collection] += n_configs
                summary["bytes"] += path.stat().st_size
                if progress is not None:
                    progress(
                        f"[{summary['n_files']}/{total}] {collection} {split} {stem}: "
                        f"{n_nodes} nodes, {n_configs} configs"
                    )
            summary["files"][collection][split] = len(plan[(collection, split)])
    _write_json(root, SYNTH_FILE, summary)  # last: the root is whole
    return summary
