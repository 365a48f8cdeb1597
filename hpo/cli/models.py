"""``hpo export``, ``hpo evaluate`` and ``hpo predict``: model folders from runs, and their use."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from hpo.campaign.progress import format_number as _f
from hpo.campaign.progress import stdout_console
from hpo.cli.options import add_options
from hpo.cli.progress_bar import progress_bar
from hpo.errors import UsageError

if TYPE_CHECKING:
    from hpo.deploy.model import ProgressFn
    from hpo.deploy.retrain import ExportOptions

__all__ = ["add_parsers"]

#: What ``evaluate`` and ``predict`` read: a model folder and a dataset root.
MODEL_DATA_OPTIONS = ("model", "data-required", "collections-of-model", "cache-dir-of-model")


def add_parsers(sub: Any) -> None:
    """Add ``export``, ``evaluate`` and ``predict`` to the top-level sub-parsers."""
    p = sub.add_parser(
        "export", help="write a model folder of a run's incumbent (the boosters it was scored with)"
    )
    add_options(
        p,
        "name",
        "runs-dir",
        "out-model",
        "retrain",
        "train-on",
        "data-of-run",
        "cache-dir-of-run",
        "threads-export",
        "jobs",
        "ensemble",
        "ensemble-within",
    )
    p.set_defaults(handler=_cmd_export)

    p = sub.add_parser("evaluate", help="score a model folder on a labeled split")
    add_options(p, *MODEL_DATA_OPTIONS, "split-valid", "json")
    p.set_defaults(handler=_cmd_evaluate)

    p = sub.add_parser("predict", help="write a submission CSV from a model folder")
    add_options(p, *MODEL_DATA_OPTIONS, "split-test", "out-csv", "top-k")
    p.set_defaults(handler=_cmd_predict)


def _collections(spec: str | None) -> tuple[str, ...] | None:
    from hpo.data.load import resolve_collections

    return resolve_collections(spec) if spec else None


def _hp_line(hp: dict[str, Any]) -> str:
    return "  ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in sorted(hp.items())
    )


def _export_options(args: argparse.Namespace, progress: ProgressFn) -> ExportOptions:
    """``hpo export``'s data, cache, threads (default: every core) and processes."""
    from hpo.deploy.retrain import ExportOptions

    return ExportOptions(
        data_root=args.data,
        cache_dir=args.cache_dir,
        n_threads=(os.cpu_count() or 1) if args.threads is None else args.threads,
        n_jobs=args.jobs,
        progress=progress,
    )


def _cmd_export(args: argparse.Namespace) -> int:
    from hpo.deploy.out_folder import check_default_out, writing_out
    from hpo.features import extraction_jobs
    from hpo.runs.views.nested import load_any

    extraction_jobs(args.jobs)  # a bad --jobs is refused before anything is written
    run = load_any(args.name, args.runs_dir)
    out = args.out if args.out is not None else Path("models") / run.name
    with writing_out(out):  # until the folder is read back: no other export replaces it
        if args.out is None:
            check_default_out(out, run.path)
        return _export(args, run, out)


def _export(args: argparse.Namespace, run: Any, out: Path) -> int:
    from hpo.deploy.export import export_model
    from hpo.deploy.model import load_model

    if args.ensemble is not None:
        return _cmd_export_ensemble(args, run, out)
    if args.ensemble_within is not None:
        raise UsageError("--ensemble-within: only with --ensemble K")
    with progress_bar("export") as progress:
        export_model(
            run,
            out,
            retrain=args.retrain,
            train_on=args.train_on,
            options=_export_options(args, progress),
        )
    model = load_model(out)
    metrics = "  ".join(f"{k} {_f(v)}" for k, v in model.validation_metrics.items())
    val = model.meta["validation"]
    note = " (valid was trained on)" if val.get("in_training") else ""
    retrained = model.meta.get("source") == "retrained"
    if "subsets" in model.meta:
        how = f"retrained on {'+'.join(model.meta['train_on'])}" if retrained else "copied"
        print(f"wrote {out}: one booster set per {model.meta['per']} ({how})")
        for name, sub in model.meta["subsets"].items():
            scored = "" if retrained else f", the boosters trial {sub['run']['trial']} scored"
            print(f"  {name}: {sub['rounds']} rounds{scored}: {_hp_line(sub['hyperparameters'])}")
    else:
        how = (
            f"retrained on {'+'.join(model.meta['train_on'])}"
            if retrained
            else f"the boosters trial {model.meta['run']['trial']} was scored with"
        )
        print(f"wrote {out}: {model.meta['rounds']} rounds, {how}")
        print("best configuration: " + _hp_line(model.meta.get("hyperparameters", {})))
    if model.meta.get("cv"):
        print(
            f"cross-validated run ({model.meta['cv']} folds): retrained on every labeled graph "
            "(train+valid) at the largest budget; the run's score is its mean over the folds"
        )
    print(f"valid score {_f(val.get('score'))}{note}: {metrics}")
    trial = (model.meta.get("run") or {}).get("trial")  # a per-subset run has one per subset
    _note_live(run, "its incumbent so far" + ("" if trial is None else f" (trial {trial})"))
    _note_other_data(model.meta)
    return 0


def _note_other_data(meta: dict[str, Any]) -> None:
    """One stderr line when the model was exported on data other than the run's (``--data``
    of another root, or the run's files changed since): its valid score is of that data, so
    it may differ from the run's score and is no check of the export."""
    data = meta.get("data") or {}
    if data.get("matches_run") is False and data.get("run_fingerprint") is not None:
        print(
            f"note: exported on data other than the run tuned on ({data.get('root')}: its "
            "train/valid files differ from the run's in name, size or time); the valid score "
            "is of that data, not the run's",
            file=sys.stderr,
        )


def _note_live(run: Any, what: str) -> None:
    """One stderr line when the run exported is still running: the model is ``what`` (its
    best so far), and a later export may differ. Printed after the export succeeded, as the
    other notes are, so an error stays the only line on stderr."""
    if run.state == "running":
        print(
            f"note: run '{run.name}' is still running: this is {what}; export again once it "
            "ends for its final one",
            file=sys.stderr,
        )


def _cmd_export_ensemble(args: argparse.Namespace, run: Any, out: Path) -> int:
    from hpo.deploy.ensemble import ENSEMBLE_WITHIN, export_ensemble
    from hpo.deploy.model import load_model

    if args.retrain or args.train_on != "train":
        raise UsageError("--ensemble copies the scored boosters; drop --retrain / --train-on")
    with progress_bar("export") as progress:
        export_ensemble(
            run,
            out,
            args.ensemble,
            within=ENSEMBLE_WITHIN if args.ensemble_within is None else args.ensemble_within,
            options=_export_options(args, progress),
        )
    meta = load_model(out).meta
    ens, val = meta["ensemble"], meta["validation"]
    fewer = (
        f" (only {ens['k']} within {'inf' if ens['within'] is None else ens['within']} of the "
        "incumbent at the largest budget)"
        if ens["k"] < ens["requested"]
        else ""
    )
    print(f"wrote {out}: an ensemble of {ens['k']} configurations{fewer}")
    for m in meta["members"]:
        t = m["trial"]
        print(f"  trial {t['trial']} (score {_f(t['score'])}, {m['source']}): "
              + _hp_line(m["hyperparameters"]))  # fmt: skip
    metrics = "  ".join(f"{k} {_f(v)}" for k, v in val["metrics"].items())
    print(f"valid score {_f(val['score'])} (incumbent {_f(meta['run']['score'])}): {metrics}")
    if "run_layout_metric" in val:  # the two scores are of different metrics
        print(
            f"note: the run's trials were scored by an older layout metric "
            f"({val['run_layout_metric']}); the ensemble's score uses today's, so the two "
            "are not compared"
        )
    elif val["score"] < meta["run"]["score"]:
        print(
            "note: the ensemble scores below the incumbent on valid; `hpo export` without "
            "--ensemble writes the incumbent alone"
        )
    _note_live(run, "an ensemble of its best configurations so far")
    _note_other_data(meta)
    return 0


def _note_absent(model: Any, args: argparse.Namespace) -> None:
    """One stderr line naming the model's collections the data root does not hold.

    Printed after the command succeeded, so an error stays the only line on stderr.
    """
    from hpo.deploy.evaluate import model_collections

    present, absent = model_collections(
        model, args.data, args.split, _collections(args.collections)
    )
    if absent:
        print(
            f"note: {args.data} has no {args.split} data for {', '.join(absent)}; served "
            f"{', '.join(present)}",
            file=sys.stderr,
        )


def _serve(
    args: argparse.Namespace, label: str, command: Callable[..., Any], **options: Any
) -> tuple[Any, Any]:
    """The model folder ``--model`` loaded, and what ``command`` (``evaluate_model`` or
    ``write_submission``) returns on it over ``--data``, ``--split``, ``--collections`` and
    ``--cache-dir``, with a progress bar named ``label``."""
    from hpo.deploy.model import load_model

    model = load_model(args.model)
    with progress_bar(label) as progress:
        return model, command(
            model,
            args.data,
            split=args.split,
            collections=_collections(args.collections),
            cache_dir=args.cache_dir,
            progress=progress,
            **options,
        )


def _cmd_evaluate(args: argparse.Namespace) -> int:
    from hpo.deploy.evaluate import evaluate_model

    model, report = _serve(args, "evaluate", evaluate_model)
    if args.json:
        print(json.dumps(report, indent=2))
        _note_absent(model, args)
        _note_unranked(report["unranked"])
        return 0
    table = Table(title=f"{args.model} on {args.data} ({args.split})")
    for col in ("collection", "graphs", "metric", "value", "top-1 err", "top-5 err", "top-10 err"):
        table.add_column(col, justify="left" if col in ("collection", "metric") else "right")
    for c, v in report["collections"].items():
        name = "kendall tau" if "kendall_tau" in v else "tile score"
        table.add_row(
            c,
            str(v["graphs"]),
            name,
            _f(v["metric"]),
            _f(v["top1_error"]),
            _f(v["top5_error"]),
            _f(v["top10_error"]),
        )
    o = report["overall"]
    table.add_row(
        "overall",
        str(o["graphs"]),
        "mean",
        _f(o["score"]),
        _f(o["top1_error"]),
        _f(o["top5_error"]),
        _f(o["top10_error"]),
        style="bold",
    )
    stdout_console().print(table)
    _note_absent(model, args)
    _note_unranked(report["unranked"])
    return 0


def _note_unranked(unranked: list[str]) -> None:
    """One stderr line naming the graphs left out of the means: no prediction orders them."""
    from hpo.data.runtimes import unranked_line

    if unranked:
        print(f"note: {unranked_line(unranked)}", file=sys.stderr)


def _cmd_predict(args: argparse.Namespace) -> int:
    from hpo.data.load import COLLECTIONS
    from hpo.deploy.predict import write_submission

    model, counts = _serve(args, "predict", write_submission, out_csv=args.out, top_k=args.top_k)
    parts = ", ".join(f"{c} {n}" for c, n in counts.items())
    print(f"wrote {args.out}: {sum(counts.values())} rows ({parts})")
    _note_absent(model, args)
    missing = [c for c in COLLECTIONS if c not in model.collections]
    if missing:
        print(
            f"note: the model does not cover {', '.join(missing)}; a full submission needs "
            "all five collections",
            file=sys.stderr,
        )
    return 0
