from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from disks import READ_ONLY, disk_error, leftovers, one_line
from fake_runs import build_fake_run

from hpo.cli import main
from hpo.errors import UsageError
from hpo.runs.views.history import RunHistory, load_run
from hpo.runs.views.importance import Importance
from hpo.runs.views.plots import plot_compare, plot_run

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _image_shape(path: Path) -> tuple[int, ...]:
    import matplotlib.image

    assert path.read_bytes()[:8] == PNG_MAGIC
    return tuple(matplotlib.image.imread(path).shape)


@pytest.fixture
def run(tmp_path: Path, tiny_root: Path) -> RunHistory:
    return load_run(build_fake_run(tmp_path / "runs", tiny_root))


def _no_successes(run: RunHistory) -> RunHistory:
    path = run.path / "trials.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()[:-1]]
    failed = [r | {"status": "CRASHED", "score": None, "metrics": {}} for r in lines[:3]]
    path.write_text("\n".join(json.dumps(r) for r in failed) + "\n")
    (run.path / "result.json").unlink()
    return load_run(run.path)


def test_plot_run_writes_a_png_without_warnings(run: RunHistory, tmp_path: Path) -> None:
    out = tmp_path / "figs" / "run.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. a layout that cannot fit its labels
        assert plot_run(run, out) == out
    height, width, _ = _image_shape(out)
    assert (width, height) == (1540, 1045)


def test_plot_run_with_precomputed_importance(run: RunHistory, tmp_path: Path) -> None:
    imp = Importance(values={"learning_rate": 0.7, "num_leaves": 0.3}, n_trials=14)
    assert _image_shape(plot_run(run, tmp_path / "r.png", importance=imp))[2] in (3, 4)


def test_plot_run_without_successful_trials(run: RunHistory, tmp_path: Path) -> None:
    empty = _no_successes(run)
    assert empty.incumbent is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot_run(empty, tmp_path / "empty.png")
    assert _image_shape(tmp_path / "empty.png")[0] > 0


def test_plot_run_with_many_budgets_uses_a_colour_scale(run: RunHistory, tmp_path: Path) -> None:
    path = run.path / "trials.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()[:-1]]
    for i, r in enumerate(records):
        r["budget"] = float(3 + 4 * i)  # 15 distinct budgets
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    (run.path / "result.json").unlink()
    plot_run(load_run(run.path), tmp_path / "many.png")
    assert _image_shape(tmp_path / "many.png")[0] > 0


def test_plot_compare(run: RunHistory, tmp_path: Path, tiny_root: Path) -> None:
    other = load_run(
        build_fake_run(tmp_path / "more", tiny_root, name="bo", optimizer="bo", seed=5)
    )
    empty = _no_successes(load_run(build_fake_run(tmp_path / "x", tiny_root, name="dead")))
    out = tmp_path / "compare.png"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert plot_compare([run, other, empty], out) == out
    height, width, _ = _image_shape(out)
    assert (width, height) == (1100, 660)


def test_a_curve_scored_by_the_older_layout_metric_says_so(run: RunHistory) -> None:
    from hpo.runs.views.plots import compare_label

    assert compare_label(run) == f"{run.name} ({run.optimizer})"
    older = dataclasses.replace(run, record=dataclasses.replace(run.record, layout_metric=None))
    assert compare_label(older) == f"{run.name} ({run.optimizer}, older layout metric)"


def test_disastrous_trials_do_not_squash_the_score_axis() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hpo.runs.views.plots import _clip_outliers

    class _T:
        def __init__(self, trial: int, score: float) -> None:
            self.trial, self.score = trial, score

    trials = [_T(i, s) for i, s in enumerate([0.55, 0.57, 0.6, 0.52, 0.58, -31.9, -6.1])]
    fig, ax = plt.subplots()
    ax.scatter([t.trial for t in trials], [t.score for t in trials])
    _clip_outliers(ax, trials, lambda t: float(t.trial))  # type: ignore[arg-type]
    bottom, top = ax.get_ylim()
    assert bottom > -1.0
    assert top >= 0.6
    assert "2 trials below" in ax.get_legend_handles_labels()[1][-1]
    plt.close(fig)


def test_an_out_matplotlib_cannot_write_is_refused_before_writing(
    run: RunHistory, tmp_path: Path
) -> None:
    """``--out trials.jsonl`` ended in matplotlib's ValueError; a folder was written beside."""
    victim = tmp_path / "trials.jsonl"
    victim.write_text("{}\n")
    with pytest.raises(UsageError, match=r"'\.jsonl' is not an image format \(use \.png"):
        plot_run(run, victim)
    with pytest.raises(UsageError, match=r"'\.jsonl' is not an image format"):
        plot_compare([run], victim)
    assert victim.read_text() == "{}\n"
    with pytest.raises(UsageError, match="is a folder"):
        plot_run(run, tmp_path)
    assert plot_run(run, tmp_path / "run.svg").read_text().startswith("<?xml")


def test_runs_plot_into_a_read_only_run_folder_is_one_line(
    run: RunHistory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``runs plot`` writes into the run folder by default; a read-only one once ended in a
    traceback. The line names the figure (not its temporary name) and ``--out``."""
    from matplotlib.figure import Figure

    def refuse(self: Figure, fname: Any, *args: Any, **kwargs: Any) -> None:
        raise disk_error(READ_ONLY, fname)

    monkeypatch.setattr(Figure, "savefig", refuse)
    assert main(["runs", "plot", str(run.path)]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"hpo: error: {run.path / 'run.png'}: Read-only file system; choose a --out on a "
        "writable file system\n"
    )
    assert leftovers(run.path) == []


def test_compare_replaces_only_a_figure_hpo_wrote(
    run: RunHistory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Probe 60: ``runs compare`` replaced any ``compare.png`` of the working directory, and
    ``--out notes.png`` a text file. A figure hpo wrote (its creator in the metadata) is
    replaced; anything else, or a symlink, is refused in one line and left as it was."""
    from hpo.runs.views.plots import is_hpo_figure

    monkeypatch.chdir(tmp_path)
    args = ["runs", "compare", str(run.path), "--runs-dir", str(tmp_path)]
    assert main(args) == 0
    assert is_hpo_figure(tmp_path / "compare.png")
    assert main(args) == 0  # its own figure: replaced
    capsys.readouterr()
    foreign = PNG_MAGIC + b"a photo"
    (tmp_path / "compare.png").write_bytes(foreign)
    (tmp_path / "notes.png").write_text("notes\n")
    (tmp_path / "link.png").symlink_to(tmp_path / "elsewhere.png")
    for out, what in [
        ("compare.png", "exists and is not a figure hpo wrote"),
        ("notes.png", "exists and is not a figure hpo wrote"),
        ("link.png", "is a symlink"),
    ]:
        assert main([*args, "--out", out]) == 2
        assert what in one_line(capsys.readouterr().err)
    assert (tmp_path / "compare.png").read_bytes() == foreign
    assert (tmp_path / "notes.png").read_text() == "notes\n"
    assert not (tmp_path / "elsewhere.png").exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("suffix", ["png", "pdf", "svg", "ps", "eps"])
def test_every_figure_format_with_metadata_names_hpo(
    run: RunHistory, tmp_path: Path, suffix: str
) -> None:
    from hpo.runs.views.plots import is_hpo_figure

    out = tmp_path / f"c.{suffix}"
    plot_compare([run], out)
    assert is_hpo_figure(out)
    plot_compare([run], out)  # replaced
    other = tmp_path / f"other.{suffix}"
    other.write_bytes(out.read_bytes().replace(b"hpo runs plot/compare", b"someone else!!!!!!!!"))
    assert not is_hpo_figure(other)
    with pytest.raises(UsageError, match="not a figure hpo wrote"):
        plot_compare([run], other)


def test_a_run_png_from_before_the_creator_is_still_replaced(run: RunHistory) -> None:
    """``runs plot`` wrote run.png in the run folder before figures named their creator."""
    old = run.path / "run.png"
    old.write_bytes(PNG_MAGIC + b"an older figure")
    assert main(["runs", "plot", str(run.path)]) == 0
    assert old.read_bytes() != PNG_MAGIC + b"an older figure"
    other = run.path / "other.png"  # only run.png is a run folder's own figure
    other.write_bytes(PNG_MAGIC)
    with pytest.raises(UsageError, match="not a figure hpo wrote"):
        plot_compare([run], other)
