"""The feature specification: the settings that change what a feature row holds."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hpo.errors import ConfigError
from hpo.features.relative import relative_base

__all__ = [
    "ADDED_IN_VERSION",
    "FEATURE_VERSION",
    "READABLE_VERSIONS",
    "SUPERSEDED_IN_VERSION",
    "FeatureSpec",
]

#: Bumped whenever any extractor changes its output; part of every cache key and model folder.
FEATURE_VERSION = 10
#: For each version, the base-name prefixes of the columns it added. A later version that only
#: *adds* columns can still serve the runs and models of an earlier one: their rows are
#: today's rows without the columns added since (version 2 added the second-order ``so_*``
#: columns and left version 1's unchanged, which tests/features check on generated data;
#: version 3 added the ``est_*`` cost estimates and left version 2's unchanged). Version 4
#: added no column: it reads partial layouts (a -1 next to fixed dims is a free dim, never a
#: mismatch or a change), which leaves every column of a file without partial layouts as it
#: was except the ``*nondefault_out`` and ``frac_default_out`` ones, which now count a layout
#: that differs from the default rather than any explicit one (an explicit copy of the default
#: is no change); so models of versions 1-3 stay readable. Version 5 added the tile ``tp_*``
#: columns (padding and working set under the other reading of a tile's dims, and a working
#: set with a tile of each kernel input) and left version 4's unchanged. Version 6 added the
#: per-op-class byte totals ``oc_*`` (:mod:`hpo.features.layout.op_class`), read only by the
#: learned prior, and left version 5's unchanged. Version 7 added the conv
#: kernels' padded bytes ``kp_*`` (the ``kernel_padding`` group) and left version 6's unchanged.
#: Version 8 supersedes the tile columns that read a contracting (K) dim
#: (:data:`SUPERSEDED_IN_VERSION`) with ``kc_*`` copies that read one only in kernels holding a
#: convolution, dot or reduce; a version-8 row holds the copies, an older one the originals,
#: which today's extractor still computes unchanged. Version 9 added the generic node
#: quantities ``nd_*`` (:mod:`hpo.features.layout.nodes`) and left version 8's unchanged.
#: Version 10 added the roles of the minor dims of convolutions and dots ``rl_*``
#: (:mod:`hpo.features.layout.roles`) and left version 9's unchanged.
ADDED_IN_VERSION: dict[int, tuple[str, ...]] = {
    2: ("so_",),
    3: ("est_",),
    5: ("tp_",),
    6: ("oc_",),
    7: ("kp_",),
    8: ("kc_",),
    9: ("nd_",),
    10: ("rl_",),
}
#: For each version, the base names of the columns it replaced by others (left out of its rows
#: and of every later version's; older versions keep them).
SUPERSEDED_IN_VERSION: dict[int, tuple[str, ...]] = {
    8: (
        "log_k_tile",
        "log_k_steps",
        "k_padding_waste",
        "log_kernel_steps",
        "log_vmem_bytes",
        "vmem_over_16mib",
        "log_est_compute",
        "tp_log_vmem_bytes_last",
        "tp_vmem_over_16mib_last",
        "tp_log_vmem_inputs_bytes",
        "tp_vmem_inputs_over_16mib",
    ),
}
#: Versions whose runs can be resumed or exported and whose model folders can be loaded.
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)


@dataclass(frozen=True, kw_only=True)
class FeatureSpec:
    """Settings of the feature extractors.

    Parameters
    ----------
    relative
        Also give every per-config feature relative to its graph (minus the graph's median,
        and as a percentile rank inside the graph), so thresholds shared by all graphs can see
        differences inside one graph.
    graph_descriptor
        Append the graph descriptor (opcode histogram, log sizes, collection indicator).
    chunk_size
        Layout configs processed at once; bounds peak memory.
    producer_hops
        How many non-configurable nodes to walk back through to find the configurable node
        whose output layout a configurable node consumes.
    """

    relative: bool = True
    graph_descriptor: bool = True
    chunk_size: int = 2048
    producer_hops: int = 4
    version: int = FEATURE_VERSION

    def __post_init__(self) -> None:
        # a spec read from someone's model.json: a string here became a cache file's name
        for name in ("relative", "graph_descriptor"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(
                    f"feature spec: {name} must be true or false, got {getattr(self, name)!r}"
                )
        for name in ("chunk_size", "producer_hops", "version"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"feature spec: {name} must be an integer, got {value!r}")
        if self.chunk_size < 1:
            raise ConfigError(f"feature spec: chunk_size must be >= 1, got {self.chunk_size}")
        if not 0 <= self.producer_hops <= 64:
            raise ConfigError(
                f"feature spec: producer_hops must be in 0..64, got {self.producer_hops}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The spec as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeatureSpec:
        """Re-create a spec from :meth:`to_dict` output.

        Raises
        ------
        ConfigError
            If a key is unknown or the version differs from this package's extractors.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"feature spec: unknown keys {sorted(unknown)}")
        version = data.get("version", FEATURE_VERSION)
        if isinstance(version, bool) or version not in READABLE_VERSIONS:
            readable = ", ".join(str(v) for v in READABLE_VERSIONS)
            raise ConfigError(
                f"feature spec version {version!r} is not supported by this hpo (it reads "
                f"feature versions {readable}); use the hpo version that made it"
            )
        return cls(**data)

    def extracting(self) -> FeatureSpec:
        """The spec today's extractors run with: this one at :data:`FEATURE_VERSION`.

        The extractors compute the columns of every readable version; the rows of a version
        (this one too) leave out those added after it and those it or an earlier version
        superseded (:meth:`drops`; :func:`hpo.features.table.feature_table.version_columns`).
        """
        return dataclasses.replace(self, version=FEATURE_VERSION)

    def drops(self, name: str) -> bool:
        """Whether column ``name`` is not one of this spec's version: added after it, or
        superseded by then."""
        base, _ = relative_base(name)
        added_later = any(
            base.startswith(prefix)
            for version, prefixes in ADDED_IN_VERSION.items()
            if version > self.version
            for prefix in prefixes
        )
        return added_later or any(
            base in names
            for version, names in SUPERSEDED_IN_VERSION.items()
            if version <= self.version
        )

    def cache_token(self) -> str:
        """The part of a cache key that depends on the spec and on the extractors' code.

        The chunk size is left out (it does not change rows); a digest of the source of every
        module that shapes a row (``hpo.features`` and ``hpo.data``: loading, ``.npy``
        streaming, the opcode schema) is included, so editing one can never serve stale rows.
        """
        return (
            f"v{self.version}-rel{int(self.relative)}-gd{int(self.graph_descriptor)}"
            f"-hop{self.producer_hops}-{_source_digest()}"
        )


#: Packages whose source shapes a feature row (relative to the ``hpo`` package folder).
ROW_SOURCES: tuple[str, ...] = ("features", "data")


def row_source_files() -> list[Path]:
    """The source files hashed into every cache key, subpackages included, in a fixed order."""
    package = Path(__file__).resolve().parent.parent
    return [path for sub in ROW_SOURCES for path in sorted((package / sub).rglob("*.py"))]


def _source_name(path: Path) -> str:
    """``path`` relative to the ``hpo`` package folder, as ``features/layout/extract.py``."""
    return path.resolve().relative_to(Path(__file__).resolve().parent.parent).as_posix()


@functools.cache
def _source_digest() -> str:
    h = hashlib.blake2b(digest_size=6)
    for path in row_source_files():
        h.update(f"{_source_name(path)}\0".encode())
        h.update(path.read_bytes())
    return h.hexdigest()
