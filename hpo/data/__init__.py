"""Stage 1, the data: where a dataset root keeps its files, validated loading, streaming of
``node_config_feat`` in chunks of configs, ``hpo data check``, and the node_feat/opcode schema.

Everything above this stage reads TpuGraphs files only through here, so the format is checked
in one place.
"""

from __future__ import annotations

from hpo.data.check import (
    CheckReport,
    SplitSummary,
    check_dataset,
    incomplete_root,
)
from hpo.data.load import (
    COLLECTIONS,
    LAW_FILE,
    LAYOUT_COLLECTIONS,
    NODE_FEAT_DIM,
    SPLITS,
    SYNTH_FILE,
    LayoutGraph,
    TileGraph,
    collection_dir,
    is_layout,
    iter_config_chunks,
    list_graphs,
    load_graph,
    load_layout_graph,
    load_tile_graph,
    resolve_collections,
)
from hpo.data.npyzip import (
    NpyHeader,
    iter_member_rows,
    read_member_header,
)
from hpo.data.opcodes import (
    CONVOLUTION,
    DOT,
    N_OPCODES,
    PARAMETER,
    RESHAPE,
    TRANSPOSE,
)

__all__ = [
    "COLLECTIONS",
    "CONVOLUTION",
    "CheckReport",
    "DOT",
    "LAW_FILE",
    "LAYOUT_COLLECTIONS",
    "LayoutGraph",
    "NODE_FEAT_DIM",
    "N_OPCODES",
    "NpyHeader",
    "PARAMETER",
    "RESHAPE",
    "SPLITS",
    "SYNTH_FILE",
    "SplitSummary",
    "TRANSPOSE",
    "TileGraph",
    "check_dataset",
    "incomplete_root",
    "collection_dir",
    "is_layout",
    "iter_config_chunks",
    "iter_member_rows",
    "list_graphs",
    "load_graph",
    "load_layout_graph",
    "load_tile_graph",
    "read_member_header",
    "resolve_collections",
]
