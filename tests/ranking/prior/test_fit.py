"""The learned cost prior: its basis, the additive fit over chunks, the ridge and its JSON form."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau

from hpo.errors import ConfigError
from hpo.features import FeatureSpec, is_prior_only
from hpo.features.layout import nodes
from hpo.features.layout.extract import layout_feature_names
from hpo.features.relative import RELATIVE_SUFFIXES
from hpo.features.table import store
from hpo.features.table.feature_table import FeatureTable, GraphRef
from hpo.ranking import chunks
from hpo.ranking.prior.fit import (
    LearnedPrior,
    design_row_bytes,
    family_equations,
    fit_family_prior,
    fit_prior,
    has_own_prior,
    prior_basis,
)


def test_the_basis_is_the_byte_totals_on_a_linear_scale() -> None:
    """Counts and shares do not add up over kernels; relative columns are per-graph copies."""
    names = ["log_bytes", "n_copies", "log_bytes_dmed", "n_copies_prank", "est_log_total_bytes"]
    positions, linear = prior_basis(names)
    assert positions == (0, 4)
    assert linear == (True, True)


def test_the_basis_holds_the_node_aggregates_byte_totals_not_their_counts() -> None:
    """``nd_`` columns are byte totals (``log1p``) or raw counts; ``expm1`` of a count is no
    total, so only the byte ones are read, and the roles' byte columns too."""
    names = [
        "nd_out_padded_bytes_cd",
        "nd_n_consumer_mismatch_cd",
        "rl_log_out_p0_a_bytes",
        "nd_in_mismatch_bytes_all_dmed",
        "rl_log_ker_p1_b_bytes_prank",
    ]
    assert prior_basis(names)[0] == (0, 2)
    columns = [n for n in layout_feature_names(FeatureSpec()) if n.startswith("nd_")]
    read = {columns[i] for i in prior_basis(columns)[0]}
    is_bytes = {name: total for name, total in nodes._QUANTITIES}
    for name in columns:
        if name.endswith(RELATIVE_SUFFIXES):
            assert name not in read
        else:  # nd_<quantity>_<class>
            assert (name in read) == is_bytes[name[len("nd_") :].rsplit("_", 1)[0]], name


def _graphs(rng: np.random.Generator, weights: np.ndarray, n_graphs: int = 12):
    """Graphs whose runtime is a linear sum of byte totals (logged in the columns)."""
    sizes = rng.integers(20, 60, n_graphs)
    bounds = np.r_[0, np.cumsum(sizes)]
    scale = np.repeat(10 ** rng.uniform(3, 8, n_graphs), sizes)  # every graph its own scale
    bytes_ = rng.uniform(1.0, 2.0, (bounds[-1], len(weights))) * scale[:, None]
    runtime = 5 * scale + bytes_ @ weights
    X = np.column_stack([np.log1p(bytes_), rng.normal(size=bounds[-1])]).astype(np.float32)
    names = [f"log_b{i}" for i in range(len(weights))] + ["noise"]
    return X, runtime, bounds, names


def test_fit_learns_the_weights_of_a_law_it_was_not_told() -> None:
    rng = np.random.default_rng(0)
    weights = np.array([3.0, 0.2, 1.0])
    X, runtime, bounds, names = _graphs(rng, weights)
    prior = fit_prior(X, runtime, bounds, names)
    assert prior is not None
    Xt, rt, bt, _ = _graphs(np.random.default_rng(1), weights)  # unseen graphs
    estimate = prior.estimate(Xt, bt, prior.positions_in(names, "test"))
    taus = [
        kendalltau(estimate[a:b], rt[a:b]).statistic for a, b in zip(bt[:-1], bt[1:], strict=True)
    ]
    assert np.mean(taus) > 0.85
    # the same data under another law gets other weights: nothing is read off a constant
    X2, runtime2, _, _ = _graphs(np.random.default_rng(0), np.array([0.2, 3.0, 1.0]))
    other = fit_prior(X2, runtime2, bounds, names)
    assert other is not None
    assert not np.allclose(other.coef, prior.coef)


def test_nothing_to_learn_gives_no_prior() -> None:
    X = np.ones((6, 2), dtype=np.float32)
    assert fit_prior(X, np.full(6, 3.0), np.array([0, 3, 6]), ["log_a", "b"]) is None
    assert fit_prior(X[:0], np.zeros(0), np.array([0]), ["log_a", "b"]) is None


def _as_table(X: np.ndarray, runtime: np.ndarray, bounds: np.ndarray, names: list[str]):
    """The rows of :func:`_graphs` as a layout feature table, plus a relative column."""
    sizes = np.diff(bounds)
    return FeatureTable(
        family="layout",
        split="train",
        X=np.column_stack([X, X[:, :1] - 1.0]).astype(np.float32),
        target=runtime,
        group=np.repeat(np.arange(len(sizes)), sizes),
        config_index=np.concatenate([np.arange(s) for s in sizes]),
        dup_count=np.ones(len(runtime), dtype=np.int64),
        graphs=tuple(
            GraphRef("layout:xla:random", f"g{i}", int(s), True) for i, s in enumerate(sizes)
        ),
        feature_names=(*names, f"{names[0]}_dmed"),
    )


@pytest.mark.parametrize("chunk_rows", [1, 45, 10**6])
def test_the_family_prior_summed_over_chunks_is_the_in_memory_fit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, chunk_rows: int
) -> None:
    rng = np.random.default_rng(3)
    table = _as_table(*_graphs(rng, np.array([3.0, 0.2, 1.0]), n_graphs=30))
    other = _as_table(*_graphs(np.random.default_rng(4), np.array([3.0, 0.2, 1.0]), n_graphs=5))
    np.save(tmp_path / "X.npy", other.X)  # a second part, memory-mapped as campaign tables are
    mapped = dataclasses.replace(other, X=np.load(tmp_path / "X.npy", mmap_mode="r"))
    rows = np.flatnonzero(table.group % 3 != 1)  # some graphs left out
    columns = np.array([4, 0, 2, 3, 1])  # any order; the relative column 4 is not in the basis
    # a row costs its 3 float32 basis columns read and the runtime with the 3-column design
    monkeypatch.setattr(store, "CHUNK_BYTES", (4 * 3 + design_row_bytes(4)) * chunk_rows)
    chunked = fit_family_prior([(table, rows), (mapped, np.arange(other.n_rows))], columns)
    # the reference: every row's columns concatenated and fitted at once
    X = np.concatenate([table.X[np.ix_(rows, columns)], other.X[:, columns]])
    target = np.concatenate([table.target[rows], other.target])
    group = np.concatenate([table.group[rows], other.group + len(table.graphs)])
    bounds = np.flatnonzero(np.r_[True, group[1:] != group[:-1], True])
    whole = fit_prior(X, target, bounds, [table.feature_names[j] for j in columns])
    assert chunked is not None
    assert whole is not None
    assert chunked.names == whole.names
    assert chunked.linear == whole.linear
    np.testing.assert_allclose(chunked.coef, whole.coef, rtol=1e-9, atol=0)
    assert not any(n.endswith("_dmed") for n in chunked.names)


def test_family_prior_of_nothing_to_learn() -> None:
    rng = np.random.default_rng(0)
    X, runtime, bounds, names = _graphs(rng, np.array([1.0]), n_graphs=3)
    table = _as_table(X, runtime, bounds, names)
    flat = dataclasses.replace(table, target=np.full(table.n_rows, 2.0))
    assert fit_family_prior([(flat, np.arange(flat.n_rows))], np.arange(3)) is None
    assert fit_family_prior([(table, np.zeros(0, dtype=np.int64))], np.arange(3)) is None
    assert fit_family_prior([(table, np.arange(table.n_rows))], np.array([2])) is None  # relative


def test_a_graph_larger_than_a_chunk_is_read_in_bounded_pieces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(6)
    table = _as_table(*_graphs(rng, np.array([3.0, 0.2, 1.0]), n_graphs=4))  # 20-60 rows each
    columns = np.arange(5)
    whole = fit_family_prior([(table, np.arange(table.n_rows))], columns)
    # the 3-column design with the runtime (4 float64 columns) and 3 float32 read: 10 rows
    monkeypatch.setattr(store, "CHUNK_BYTES", (4 * 3 + design_row_bytes(4)) * 10)
    monkeypatch.setattr(chunks, "MIN_PIECE_ROWS", 1)  # cut graphs of any size
    reads: list[int] = []
    real = store.read_rows

    def spy(X: np.ndarray, rows: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
        reads.append(len(rows))
        return real(X, rows, cols)

    monkeypatch.setattr("hpo.ranking.prior.fit.read_rows", spy)
    chunked = fit_family_prior([(table, np.arange(table.n_rows))], columns)
    assert max(reads) == 10 < min(np.diff(np.r_[0, np.flatnonzero(np.diff(table.group)) + 1]))
    assert sum(reads) == 2 * table.n_rows  # two passes: moments, then the sums
    assert chunked is not None
    assert whole is not None
    np.testing.assert_allclose(chunked.coef, whole.coef, rtol=1e-9, atol=1e-12)


def test_a_switch_solves_a_sub_block_of_the_equations_of_every_column() -> None:
    rng = np.random.default_rng(7)
    table = _as_table(*_graphs(rng, np.array([3.0, 0.2, 1.0]), n_graphs=20))
    parts = [(table, np.arange(table.n_rows))]
    every = family_equations(parts, np.arange(5))
    assert every is not None
    for live in (np.array([0, 2]), np.array([3, 1]), np.arange(5)):
        alone = fit_family_prior(parts, live)
        sub = every.solve(live)
        assert alone is not None
        assert sub is not None
        assert (sub.names, sub.linear) == (alone.names, alone.linear)
        np.testing.assert_allclose(sub.coef, alone.coef, rtol=1e-9, atol=1e-12)
    assert every.solve(np.array([4])) is None  # the relative column only: no basis


def test_the_estimate_of_a_graph_cut_into_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(8)
    X, runtime, bounds, names = _graphs(rng, np.array([3.0, 0.2, 1.0]), n_graphs=6)
    prior = fit_prior(X, runtime, bounds, names)
    assert prior is not None
    at = prior.positions_in(names, "test")
    whole = prior.estimate(X, bounds, at)
    # every graph whole, one at a time: the same bits as among the others
    for g in range(len(bounds) - 1):
        a, b = bounds[g], bounds[g + 1]
        alone = prior.estimate(X[a:b], np.array([0, b - a]), at)
        np.testing.assert_array_equal(alone, whole[a:b])
    monkeypatch.setattr(store, "CHUNK_BYTES", design_row_bytes(len(prior.names)) * 7)
    monkeypatch.setattr(chunks, "MIN_PIECE_ROWS", 1)  # graphs of 20-60 rows in 7-row pieces
    cut = prior.estimate(X, bounds, at)
    np.testing.assert_allclose(cut, whole, rtol=1e-9, atol=1e-12)
    # a graph cut into pieces is cut the same way alone (prediction) as among others
    for g in range(len(bounds) - 1):
        a, b = bounds[g], bounds[g + 1]
        np.testing.assert_array_equal(prior.estimate(X[a:b], np.array([0, b - a]), at), cut[a:b])


def _three_collections() -> FeatureTable:
    """Graphs of xla:random, nlp:random and xla:default whose laws weigh the bytes apart."""
    parts = [
        _graphs(np.random.default_rng(i), w, n_graphs=10)
        for i, w in enumerate([np.array([3.0, 0.2]), np.array([0.1, 4.0]), np.array([1.0, 1.0])])
    ]
    tables = [_as_table(*part) for part in parts]
    names = ("layout:xla:random", "layout:nlp:random", "layout:xla:default")
    offset = np.cumsum([0] + [len(t.graphs) for t in tables])
    return dataclasses.replace(
        tables[0],
        X=np.concatenate([t.X for t in tables]),
        target=np.concatenate([t.target for t in tables]),
        group=np.concatenate([t.group + o for t, o in zip(tables, offset, strict=False)]),
        config_index=np.concatenate([t.config_index for t in tables]),
        dup_count=np.concatenate([t.dup_count for t in tables]),
        graphs=tuple(
            dataclasses.replace(g, collection=c, stem=f"{c}-{g.stem}")
            for t, c in zip(tables, names, strict=True)
            for g in t.graphs
        ),
    )


def test_each_random_collection_gets_its_own_weights_the_rest_share_the_pooled() -> None:
    table = _three_collections()
    columns = np.arange(len(table.feature_names))
    prior = fit_family_prior([(table, np.arange(table.n_rows))], columns)
    assert prior is not None
    assert set(prior.own) == {"layout:xla:random", "layout:nlp:random"}
    assert [has_own_prior(c) for c in ("layout:xla:random", "layout:xla:default", "tile:xla")] == [
        True,
        False,
        False,
    ]
    assert prior.for_collection("layout:xla:default") is prior
    for c, own in prior.own.items():
        assert own.names == prior.names  # one basis
        assert own.linear == prior.linear
        rows = np.flatnonzero([table.graphs[g].collection == c for g in table.group])
        alone = fit_family_prior([(table, rows)], columns)
        assert alone is not None
        np.testing.assert_array_equal(own.coef, alone.coef)  # its rows only, the same sums
        assert prior.for_collection(c) is own
    # the pooled weights are the fit on every row, whatever order the collections' sums add in
    X = table.X[:, columns]
    bounds = np.flatnonzero(np.r_[True, table.group[1:] != table.group[:-1], True])
    whole = fit_prior(X, table.target, bounds, list(table.feature_names))
    assert whole is not None
    np.testing.assert_allclose(prior.coef, whole.coef, rtol=1e-9, atol=0)
    # the two random laws weigh the bytes apart, and so do their own priors
    xla, nlp = prior.own["layout:xla:random"], prior.own["layout:nlp:random"]
    b0, b1 = prior.names.index("log_b0"), prior.names.index("log_b1")
    assert xla.coef[b0] > 10 * xla.coef[b1] > 0  # the laws' weights: 3 and 0.2
    assert nlp.coef[b1] > 10 * nlp.coef[b0] > 0  # 0.1 and 4


def test_own_weights_survive_json_and_bad_ones_are_refused() -> None:
    table = _three_collections()
    columns = np.arange(len(table.feature_names))
    prior = fit_family_prior([(table, np.arange(table.n_rows))], columns)
    assert prior is not None
    back = LearnedPrior.from_dict(prior.to_dict(), "m.json")
    assert set(back.own) == set(prior.own)
    for c, own in prior.own.items():
        np.testing.assert_array_equal(back.own[c].coef, own.coef)
    assert "collections" not in LearnedPrior(("b",), (False,), np.ones(1)).to_dict()  # as before
    data = prior.to_dict()
    other = {**data["collections"]["layout:xla:random"], "names": ["x"] * len(prior.names)}
    bad = {**data, "collections": {"layout:xla:random": other}}
    with pytest.raises(ConfigError, match=r"^m.json: collection 'layout:xla:random': .*basis"):
        LearnedPrior.from_dict(bad, "m.json")
    with pytest.raises(ConfigError, match=r"^m.json: malformed prior \('collections'"):
        LearnedPrior.from_dict({**data, "collections": [1]}, "m.json")
    nested = {**data, "collections": {"layout:xla:random": data}}
    with pytest.raises(ConfigError, match="no own weights there, or nested"):
        LearnedPrior.from_dict(nested, "m.json")
    default = {
        **data,
        "collections": {"layout:xla:default": data["collections"]["layout:xla:random"]},
    }
    with pytest.raises(ConfigError, match="'layout:xla:default': .*no own weights there"):
        LearnedPrior.from_dict(default, "m.json")  # the default collections use the pooled ones
    with pytest.raises(ConfigError, match="'layout:nlp:random': malformed prior"):
        LearnedPrior.from_dict({**data, "collections": {"layout:nlp:random": 7}}, "m.json")


@pytest.mark.parametrize("name", ["oc_log_b1", "kp_log_b1"])
def test_every_prior_reads_the_columns_only_the_prior_reads(name: str) -> None:
    """A column no booster reads (``oc_*``, the per-op-class totals; ``kp_*``, the conv
    kernels' padded bytes) is a byte total like the others for every prior: the fit is the
    one of the same column under a booster's name, the pooled weights (the default
    collections') included."""
    table = _three_collections()
    names = list(table.feature_names)
    names[1] = name
    kernel = dataclasses.replace(table, feature_names=tuple(names))
    assert is_prior_only(name)
    columns = np.arange(len(names))
    prior = fit_family_prior([(kernel, np.arange(table.n_rows))], columns)
    plain = fit_family_prior([(table, np.arange(table.n_rows))], columns)
    assert prior is not None
    assert plain is not None
    at = prior.names.index(name)
    assert prior.coef[at] != 0.0
    np.testing.assert_array_equal(prior.coef, plain.coef)
    for c, own in prior.own.items():
        np.testing.assert_array_equal(own.coef, plain.own[c].coef)


def test_the_sums_of_a_chunked_read_are_each_graphs_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Graphs cut into pieces by the chunks: each graph's centred Gram, cross-product with its
    standardized runtime, rows and runtime std, against numpy on the whole graph."""
    table = _as_table(*_graphs(np.random.default_rng(9), np.array([3.0, 0.2, 1.0]), n_graphs=5))
    monkeypatch.setattr(store, "CHUNK_BYTES", (4 * 3 + design_row_bytes(4)) * 7)
    monkeypatch.setattr(chunks, "MIN_PIECE_ROWS", 1)  # graphs of 20-60 rows in 7-row pieces
    equations = family_equations([(table, np.arange(table.n_rows))], np.arange(5))
    assert equations is not None
    assert equations.names == ("log_b0", "log_b1", "log_b2")
    sums = equations.own["layout:xla:random"]
    bounds = np.flatnonzero(np.r_[True, np.diff(table.group) != 0, True])
    for g, (a, b) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        design = np.expm1(table.X[a:b, :3].astype(np.float64))
        centred = design - design.mean(0)
        runtime = table.target[a:b]
        target = (runtime - runtime.mean()) / runtime.std()
        np.testing.assert_allclose(sums.gram[g], centred.T @ centred, rtol=1e-9)
        np.testing.assert_allclose(sums.cross[g], centred.T @ target, rtol=1e-7, atol=1e-3)
        assert sums.count[g] == b - a
        assert sums.target_std[g] == pytest.approx(runtime.std(), rel=1e-12)


def test_a_total_constant_in_every_graph_gets_no_weight_and_changes_no_order() -> None:
    """A static total (the same in every config of a graph) centres to exactly 0: without
    that, the rounding of its mean, rescaled to unit size, took a huge weight."""
    X, runtime, bounds, names = _graphs(np.random.default_rng(11), np.array([3.0, 0.2, 1.0]))
    sizes = np.diff(bounds)
    static = np.repeat(np.random.default_rng(12).uniform(10, 20, len(sizes)), sizes)
    X2 = np.column_stack([X, static]).astype(np.float32)
    names2 = [*names, "log_static"]
    prior = fit_prior(X2, runtime, bounds, names2)
    base = fit_prior(X, runtime, bounds, names)
    assert prior is not None
    assert base is not None
    assert prior.coef[prior.names.index("log_static")] == 0.0
    np.testing.assert_allclose(prior.coef[:-1], base.coef, rtol=1e-9, atol=1e-15)
