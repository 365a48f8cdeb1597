"""A short campaign per law of the family against the default configuration (issue 19, point 4).

``bench_laws.py`` judges the space's default configuration over a family of hidden laws. This
asks the issue's other question of the same laws: does a campaign, run as a user runs it, beat
the default, and does the model it exports hold on graphs no trial saw? For every law:

1. the tuning root and the unseen root of ``bench_laws.law_roots`` (generated once, shared
   with ``bench_laws.py`` when ``--work`` is the same folder);
2. ``hpo run --data TUNING --collections layout --walltime W --seed S`` through the command
   line (the default optimizer, budgets and caps: what a user gets), whose first trial is the
   default configuration at the largest budget (the run's baseline);
3. on valid: the incumbent's score against that baseline's, per layout collection too;
4. ``export`` (the incumbent's scored boosters), then the exported model scored on every
   labeled graph (train and valid) of the unseen root, per collection, as a share of the
   noise ceiling (``bench_ablation.noise_ceiling``), the figure ``bench_laws.py`` gives the
   default;
5. with ``--ensemble K``, also ``export --ensemble K`` (issue 23's ensemble of the best
   configurations at the largest budget): its valid score against the baseline's, and its
   shares on the unseen root beside the incumbent export's. Where the export refuses (only
   the incumbent qualifies), the user's model is the incumbent export, and it is counted as
   that.

With ``--default-json`` (a ``bench_laws.py`` JSON of the same roots, at the campaign's largest
budget in rounds) the report puts the default configuration's share beside the export's.
A finished run of an earlier call is kept, so an interrupted benchmark continues. Campaigns are
timed by walltime: run this alone on the machine.

    python bench/bench_laws_campaign.py --work /tmp/bench/laws \
        --laws first-order,second-order,1,2,3,4,5,6 --walltime 4m \
        --default-json /tmp/bench/laws672.json --json /tmp/bench/laws_campaign.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from hpo.api import evaluate_model, export_model, load_model, load_run
from hpo.deploy.ensemble import ENSEMBLE_WITHIN, export_ensemble
from hpo.errors import UsageError
from hpo.runs.record.folder import run_state
from hpo.synth.law_family import law_record, read_law

sys.path.insert(0, str(Path(__file__).parent))
from bench_ablation import noise_ceiling  # noqa: E402
from bench_laws import LABELED, LAYOUT, law_roots  # noqa: E402

CLI = "import sys; from hpo.cli.main import main; sys.exit(main())"


def run_campaign(tuning: Path, work: Path, name: str, args: argparse.Namespace) -> Path:
    """Run (or keep, when finished) the campaign on ``tuning``; return its folder."""
    runs_dir = work / "runs"
    folder = runs_dir / name
    if folder.is_dir() and run_state(folder) == "finished":
        print(f"  {name}: finished earlier, kept", flush=True)
        return folder
    cmd = [sys.executable, "-c", CLI, "run", "--data", str(tuning), "--collections", "layout",
           "--walltime", args.walltime, "--seed", str(args.seed), "--name", name,
           "--runs-dir", str(runs_dir), "--cache-dir", str(work / "cache"), "--quiet",
           "--overwrite", *args.extra]  # fmt: skip
    t0 = time.perf_counter()
    log = work / f"{name}.log"
    with log.open("w") as fh:
        done = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name}: hpo run failed ({done.returncode}); see {log}")
    print(f"  {name}: campaign {time.perf_counter() - t0:.0f} s", flush=True)
    return folder


def unseen_shares(model_dir: Path, unseen: Path, ceiling: dict[str, float], cache: Path) -> dict:
    """The exported model's mean metric per layout collection over the unseen root's labeled
    graphs (every split in ``LABELED``, each graph counted once), as a share of the ceiling."""
    model = load_model(model_dir)
    rows: list[dict[str, Any]] = []
    for split in LABELED:
        rows += evaluate_model(model, unseen, split, LAYOUT, cache_dir=cache)["graphs"]
    return {c: float(np.mean([r["metric"] for r in rows if r["collection"] == c])) / ceiling[c]
            for c in LAYOUT}  # fmt: skip


def judge_campaign(law: str, args: argparse.Namespace) -> dict[str, Any]:
    """One law: the campaign's valid scores against its baseline, and the export on unseen."""
    tuning, unseen = law_roots(args.work, law, args.scale)
    name = f"law-{law}-s{args.seed}"
    folder = run_campaign(tuning, args.work, name, args)
    run = load_run(folder)
    base, inc = run.baseline, run.incumbent
    if base is None or inc is None or base.score is None or inc.score is None:
        raise SystemExit(f"{folder}: no scored baseline or incumbent")
    model_dir = args.work / "models" / name
    export_model(run, model_dir)
    ceiling = noise_ceiling(unseen, read_law(unseen) or "first-order", LABELED)
    shares = unseen_shares(model_dir, unseen, ceiling, args.work / "cache")
    ensemble = None
    if args.ensemble:
        ensemble = judge_ensemble(run, args, name, base.score, unseen, ceiling)
        if ensemble["refused"] is not None:  # the user's model stays the incumbent export
            ensemble.update(valid_gain=inc.score - base.score, unseen_share=shares)
    return {
        "run": str(folder),
        "trials": len(run.trials),
        "incumbent": {"trial": inc.trial, "budget": inc.budget, "config": inc.config},
        "valid": {
            "baseline": base.score,
            "incumbent": inc.score,
            "gain": inc.score - base.score,
            "baseline_metrics": base.metrics,
            "incumbent_metrics": inc.metrics,
        },
        "unseen_share": shares,
        "ensemble": ensemble,
        "ceiling": ceiling,
        "law": law_record(read_law(unseen)),
    }


def judge_ensemble(
    run: Any, args: argparse.Namespace, name: str, base: float, unseen: Path, ceiling: dict
) -> dict[str, Any]:
    """``export --ensemble K`` of the run: its members, valid score and unseen shares, or why
    the export refused."""
    out = args.work / "models" / f"{name}-ens{args.ensemble}"
    try:
        export_ensemble(run, out, args.ensemble, within=args.ensemble_within)
    except UsageError as exc:
        if "only 1 configuration qualifies" not in str(exc):
            raise  # not the refusal the reading counts as the incumbent
        return {"refused": str(exc), "k": 1}
    meta = json.loads((out / "model.json").read_text())
    score = float(meta["validation"]["score"])
    return {
        "refused": None,
        "k": meta["ensemble"]["k"],
        "members": [m["trial"] for m in meta["members"]],  # {trial, budget, score} each
        "valid": score,
        "valid_gain": score - base,
        "unseen_share": unseen_shares(out, unseen, ceiling, args.work / "cache"),
    }


def summarize_ensembles(results: dict[str, Any]) -> dict[str, Any]:
    """The ensemble export against the baseline on valid and the incumbent export on unseen:
    medians over laws, and the worst share per collection of each."""
    gains = np.array([r["ensemble"]["valid_gain"] for r in results.values()])
    ens = np.array([[r["ensemble"]["unseen_share"][c] for c in LAYOUT] for r in results.values()])
    inc = np.array([[r["unseen_share"][c] for c in LAYOUT] for r in results.values()])
    diff = ens.mean(axis=1) - inc.mean(axis=1)
    return {
        "formed": sum(r["ensemble"]["refused"] is None for r in results.values()),
        "valid_gain_median": float(np.median(gains)),
        "valid_gain_positive": int((gains > 0).sum()),
        "unseen_minus_incumbent": diff.tolist(),
        "unseen_minus_incumbent_median": float(np.median(diff)),
        "ensemble_median": dict(zip(LAYOUT, np.median(ens, axis=0).tolist(), strict=True)),
        "ensemble_worst": dict(zip(LAYOUT, ens.min(axis=0).tolist(), strict=True)),
        "worst_minus_incumbent_worst": dict(
            zip(LAYOUT, (ens.min(axis=0) - inc.min(axis=0)).tolist(), strict=True)
        ),
    }


def print_ensembles(results: dict[str, Any], summary: dict[str, Any]) -> None:
    """Per law: the ensemble's size, valid gain over the baseline and unseen shares."""
    head = f"{'ensemble':<14}{'k':>3}{'valid gain':>11}" + "".join(f"{c[7:]:>13}" for c in LAYOUT)
    print("\n" + head + "\n" + "-" * len(head))
    for law, r in results.items():
        e = r["ensemble"]
        cells = "".join(f"{e['unseen_share'][c]:>13.3f}" for c in LAYOUT)
        print(f"{law:<14}{e['k']:>3}{e['valid_gain']:>+11.4f}{cells}")
    for key in ("ensemble_median", "ensemble_worst", "worst_minus_incumbent_worst"):
        print(f"{key:<28}" + "".join(f"{summary[key][c]:>13.3f}" for c in LAYOUT))
    print(f"ensembles formed on {summary['formed']} of {len(results)} laws; valid gain over the "
          f"default: median {summary['valid_gain_median']:+.4f}, positive on "
          f"{summary['valid_gain_positive']}; unseen mean share minus the incumbent export's: "
          f"median {summary['unseen_minus_incumbent_median']:+.4f}")  # fmt: skip


def summarize(
    results: dict[str, Any], default: dict[str, Any] | None, label: str = "default"
) -> dict[str, Any]:
    """Median and worst over laws of the export's shares; the median law's valid gain.

    ``default`` holds ``bench_laws.py``'s results per law, ``label`` the setting among them
    that is the default configuration (``"default"``; ``"on w=1"`` in a JSON written before
    per-collection weights).
    """
    table = np.array([[r["unseen_share"][c] for c in LAYOUT] for r in results.values()])
    gains = np.array([r["valid"]["gain"] for r in results.values()])
    out: dict[str, Any] = {
        "export_median": dict(zip(LAYOUT, np.median(table, axis=0).tolist(), strict=True)),
        "export_worst": dict(zip(LAYOUT, table.min(axis=0).tolist(), strict=True)),
        "valid_gain_median": float(np.median(gains)),
        "valid_gain_positive": int((gains > 0).sum()),
    }
    if default is not None:
        shares = next(iter(default.values()))["shares"]
        if label not in shares:
            raise SystemExit(f"--default-setting: no '{label}' in the JSON ({', '.join(shares)})")
        base = np.array([[default[law]["shares"][label][c] for c in LAYOUT] for law in results])
        out["default_label"] = label
        out["default_median"] = dict(zip(LAYOUT, np.median(base, axis=0).tolist(), strict=True))
        out["default_worst"] = dict(zip(LAYOUT, base.min(axis=0).tolist(), strict=True))
        out["export_minus_default_median"] = dict(
            zip(LAYOUT, np.median(table - base, axis=0).tolist(), strict=True)
        )
    return out


def print_report(results: dict[str, Any], summary: dict[str, Any], default: Any) -> None:
    """Per law: valid gain and the export's (and the default's) shares; then the summary."""
    head = f"{'law':<14}{'trials':>7}{'valid gain':>11}" + "".join(f"{c[7:]:>13}" for c in LAYOUT)
    print("\n" + head + "\n" + "-" * len(head))
    for law, r in results.items():
        cells = "".join(f"{r['unseen_share'][c]:>13.3f}" for c in LAYOUT)
        print(f"{law:<14}{r['trials']:>7}{r['valid']['gain']:>+11.4f}{cells}")
        if default is not None:
            d = default[law]["shares"][summary["default_label"]]
            print(f"{'  default':<32}" + "".join(f"{d[c]:>13.3f}" for c in LAYOUT))
    for key in ("export_median", "export_worst", "default_median", "default_worst",
                "export_minus_default_median"):  # fmt: skip
        if key in summary:
            print(f"{key:<32}" + "".join(f"{summary[key][c]:>13.3f}" for c in LAYOUT))
    print(f"valid gain over the default: median {summary['valid_gain_median']:+.4f}, "
          f"positive on {summary['valid_gain_positive']} of {len(results)} laws")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for roots, runs, cache")
    parser.add_argument("--laws", default="first-order,second-order,1,2,3,4,5,6")
    parser.add_argument("--scale", default="small", choices=("tiny", "small"))
    parser.add_argument("--walltime", default="4m", help="each campaign's (hpo run --walltime)")
    parser.add_argument("--seed", type=int, default=0, help="the campaigns' seed")
    parser.add_argument(
        "--default-json",
        type=Path,
        default=None,
        help="bench_laws.py JSON of the same roots, for the default's shares",
    )
    parser.add_argument(
        "--default-setting",
        default="default",
        help="the default configuration's setting in --default-json (before per-collection "
        "weights: 'on w=1')",
    )
    parser.add_argument(
        "--ensemble",
        type=int,
        default=0,
        metavar="K",
        help="also export --ensemble K and judge it (0: no ensemble)",
    )
    parser.add_argument(
        "--ensemble-within",
        type=float,
        default=ENSEMBLE_WITHIN,
        metavar="D",
        help=f"export --ensemble-within (default {ENSEMBLE_WITHIN})",
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("extra", nargs="*", help="after --: more hpo run options")
    args = parser.parse_args()
    if args.ensemble == 1 or args.ensemble < 0:
        parser.error(f"--ensemble {args.ensemble}: expected 0 (no ensemble) or at least 2")
    t0 = time.perf_counter()
    default = None
    if args.default_json is not None:
        default = json.loads(args.default_json.read_text())["results"]
    results = {law: judge_campaign(law, args) for law in args.laws.split(",")}
    if default is not None and not set(results) <= set(default):
        raise SystemExit(f"{args.default_json}: no figures for laws {set(results) - set(default)}")
    summary = summarize(results, default, args.default_setting)
    print(f"\n{args.walltime} campaigns (seed {args.seed}, scale {args.scale}); shares of the "
          "noise ceiling of each exported model on unseen graphs")  # fmt: skip
    print_report(results, summary, default)
    if args.ensemble:
        summary["ensemble"] = summarize_ensembles(results)
        print_ensembles(results, summary["ensemble"])
    print(f"total {time.perf_counter() - t0:.0f} s")
    if args.json is not None:
        record = {"args": {k: str(v) for k, v in vars(args).items()}, "results": results,
                  "summary": summary}  # fmt: skip
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=1, default=float))


if __name__ == "__main__":
    main()
