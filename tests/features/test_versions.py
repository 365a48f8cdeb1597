"""Feature versions: a run or model of a readable version is served the extractor's columns
without those added after it and those superseded by then, so it sees exactly the columns it
was tuned on, with the values they had."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hpo.errors import ConfigError
from hpo.features import FEATURE_VERSION, ExtractOptions, FeatureSpec, build_tables, feature_names
from hpo.features.layout.extract import layout_feature_names
from hpo.features.relative import relative_base
from hpo.features.spec import SUPERSEDED_IN_VERSION
from hpo.features.tile import tile_feature_names

COLLECTIONS = ("tile:xla", "layout:xla:random")


def _extracted(family: str) -> list[str]:
    """Every column today's extractor computes: today's and those superseded since."""
    spec = FeatureSpec()
    return layout_feature_names(spec) if family == "layout" else tile_feature_names(spec)


def test_version_1_names_are_todays_without_the_second_order_columns() -> None:
    old, new = FeatureSpec(version=1), FeatureSpec()
    for family in ("tile", "layout"):
        kept = feature_names(family, old)
        assert not any(n.startswith("so_") for n in kept)
        assert kept == [n for n in _extracted(family) if n in kept]
    assert len(feature_names("layout", old)) == 220  # the width feature version 1 had
    assert len(feature_names("layout", new)) > 220


def test_version_2_names_are_todays_without_the_cost_estimates() -> None:
    old, new = FeatureSpec(version=2), FeatureSpec()
    kept = feature_names("layout", old)
    assert any(n.startswith("so_") for n in kept)
    assert not any(n.startswith("est_") for n in kept)
    assert kept == [n for n in feature_names("layout", new) if n in kept]
    assert len(kept) == 286  # the width feature version 2 had
    # 5 estimates, _dmed, _prank
    assert len(feature_names("layout", FeatureSpec(version=4))) == 286 + 3 * 5
    assert feature_names("tile", old) == feature_names("tile", FeatureSpec(version=4))


def test_version_4_names_are_version_5s_without_the_tile_readings() -> None:
    old, new = FeatureSpec(version=4), FeatureSpec(version=5)
    assert feature_names("layout", old) == feature_names("layout", FeatureSpec(version=5))
    kept, today = feature_names("tile", old), feature_names("tile", new)
    assert not any(n.startswith("tp_") for n in kept)
    assert kept == [n for n in today if n in kept]
    assert len(today) == len(kept) + 2 * 6  # 6 columns and their _dmed


def test_version_5_names_are_version_6s_without_the_op_class_totals() -> None:
    old, new = FeatureSpec(version=5), FeatureSpec(version=6)
    kept, today = feature_names("layout", old), feature_names("layout", new)
    assert not any(n.startswith("oc_") for n in kept)
    assert kept == [n for n in today if n in kept]
    # 12 totals, without relative columns: only the learned prior reads them
    assert [n for n in today if n not in kept] == [n for n in today if n.startswith("oc_")]
    assert len(today) == len(kept) + 12
    assert feature_names("tile", old) == feature_names("tile", new)


def test_version_6_names_are_version_7s_without_the_kernel_padding() -> None:
    old, new = FeatureSpec(version=6), FeatureSpec(version=7)
    kept, today = feature_names("layout", old), feature_names("layout", new)
    assert not any(n.startswith("kp_") for n in kept)
    assert kept == [n for n in today if n in kept]
    added = [n for n in today if n not in kept]
    # 2 totals, without relative columns: only the learned prior reads them
    assert added == [n for n in today if n.startswith("kp_")]
    assert len(added) == 2
    assert feature_names("tile", old) == feature_names("tile", new)


def test_version_7_names_are_version_9s_with_the_k_reading_columns_it_had() -> None:
    old, new = FeatureSpec(version=7), FeatureSpec(version=9)
    layout = feature_names("layout", new)
    assert feature_names("layout", old) == [n for n in layout if not n.startswith("nd_")]
    kept, today = feature_names("tile", old), feature_names("tile", new)
    assert len(kept) == len(today)
    added = [n for n in today if n not in kept]
    superseded = [n for n in kept if n not in today]
    assert all(n.startswith("kc_") for n in added)
    assert added == [f"kc_{n}" for n in superseded]  # one copy per original, in their order
    assert {relative_base(n)[0] for n in superseded} == set(SUPERSEDED_IN_VERSION[8])
    assert len(superseded) == 2 * 11  # 11 columns and their _dmed


def test_version_8_names_are_version_9s_without_the_node_quantities() -> None:
    old, new = FeatureSpec(version=8), FeatureSpec(version=9)
    assert feature_names("tile", old) == feature_names("tile", new)
    layout = feature_names("layout", new)
    assert feature_names("layout", old) == [n for n in layout if not n.startswith("nd_")]
    assert len(layout) - len(feature_names("layout", old)) == 3 * 68  # with _dmed and _prank


def test_version_9_names_are_todays_without_the_roles() -> None:
    old, new = FeatureSpec(version=9), FeatureSpec()
    assert feature_names("tile", old) == feature_names("tile", new)
    layout = feature_names("layout", new)
    assert feature_names("layout", old) == [n for n in layout if not n.startswith("rl_")]
    assert len(layout) - len(feature_names("layout", old)) == 3 * 18  # with _dmed and _prank


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 6, 7, 8, 9])
def test_older_version_tables_are_todays_columns(
    tiny_root: Path, tmp_path: Path, version: int
) -> None:
    old = build_tables(
        tiny_root,
        COLLECTIONS,
        ("valid",),
        FeatureSpec(version=version),
        extract=ExtractOptions(cache_dir=tmp_path),
    )
    new = build_tables(
        tiny_root,
        COLLECTIONS,
        ("valid",),
        FeatureSpec(),
        extract=ExtractOptions(cache_dir=tmp_path),
    )
    # the columns version 8 superseded: version 7 has them as the older versions do
    last = build_tables(
        tiny_root,
        COLLECTIONS,
        ("valid",),
        FeatureSpec(version=7),
        extract=ExtractOptions(cache_dir=tmp_path),
    )
    for key, table in old.items():
        assert table.X.shape[1] == len(table.feature_names)
        for source in (new[key], last[key]):
            names = list(source.feature_names)
            shared = [i for i, n in enumerate(table.feature_names) if n in names]
            idx = [names.index(table.feature_names[i]) for i in shared]
            np.testing.assert_array_equal(table.X[:, shared], source.X[:, idx])
        gone = {n for n in table.feature_names if n not in new[key].feature_names}
        assert {relative_base(n)[0] for n in gone} <= set(SUPERSEDED_IN_VERSION[8])
        assert gone <= set(last[key].feature_names)


@pytest.mark.parametrize("version", [0, 99, True])
def test_unreadable_versions_are_refused(version: object) -> None:
    with pytest.raises(ConfigError, match=r"feature spec version .* is not supported"):
        FeatureSpec.from_dict({"version": version})


def test_a_readable_spec_extracts_with_todays_version() -> None:
    assert FeatureSpec(version=1).extracting().version == FEATURE_VERSION
