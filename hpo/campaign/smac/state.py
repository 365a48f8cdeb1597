"""SMAC's saved state inside a run folder: written atomically, checked and repaired on resume.

- SMAC's state files are replaced atomically, so ``kill -9`` cannot leave them truncated;
- SMAC never prompts on stdin: a resumed run is compared with SMAC's saved scenario here and
  a difference is a :class:`hpo.errors.ConfigError`;
- trials that were running when the process died are dropped from the saved runhistory on
  resume, so SMAC runs them again instead of waiting for them forever;
- when SMAC's own loop raised (:func:`note_loop_failure`), a resume restarts the
  intensifier's racing from the runhistory instead of from the state that failed, so the
  finished trials are kept and the campaign goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import traceback
from pathlib import Path
from typing import Any

from smac import Scenario
from smac.facade.abstract_facade import AbstractFacade
from smac.main.smbo import SMBO
from smac.runhistory import StatusType

from hpo.campaign.smac.adapter import (
    LimitedSMBO,
    facade_parts,
    scatter_keys,
    smbo_finished,
    smbo_scenario,
)
from hpo.errors import STORAGE_ERRNOS, ConfigError, HpoError, StorageError, naming
from hpo.ownership import TEMP_SUFFIX, temp_prefix
from hpo.runs.record.folder import SMAC_DIR, read_json, write_json_atomic

__all__ = [
    "LOOP_FAILURE_FILE",
    "STATE_FILES",
    "campaign_optimizer",
    "check_smac_resumable",
    "keep_saved_state",
    "note_loop_failure",
    "optimize_resumably",
    "reopen_smac_state",
    "repair_smac_state",
    "saved_smac_seeds",
    "smac_output_dir",
    "smac_usage",
]

STATE_FILES = ("optimization.json", "runhistory.json", "intensifier.json")
#: Written in SMAC's folder when SMAC's loop raised: the traceback, read by the next resume.
LOOP_FAILURE_FILE = "loop_failure.txt"


class _AtomicSMBO(LimitedSMBO):
    """SMBO whose state files are written to temporary names, then renamed together."""

    #: Set once a trial SMAC was told of could not be logged (:func:`keep_saved_state`).
    frozen = False

    def save(self) -> None:  # noqa: D102
        path = smbo_scenario(self).output_directory
        if path is None or self.frozen:
            return
        # SMAC saves only to names ending in .json
        tmp = {name: path / f"{temp_prefix(path / name)}{TEMP_SUFFIX}.json" for name in STATE_FILES}
        stats = {  # the keys SMBO.save writes and SMBO.load reads
            "used_walltime": self.used_walltime,
            "used_target_function_walltime": self.used_target_function_walltime,
            "used_target_function_cputime": self.used_target_function_cputime,
            "last_update": time.time(),
            "finished": smbo_finished(self),
        }
        try:
            with naming(path):  # a full disk: one line, and the state saved last stays
                path.mkdir(parents=True, exist_ok=True)
                tmp["optimization.json"].write_text(json.dumps(stats, indent=2))
                self.runhistory.save(tmp["runhistory.json"])
                self.intensifier.save(tmp["intensifier.json"])
                for name, src in tmp.items():
                    os.replace(src, path / name)
        finally:
            for src in tmp.values():
                with contextlib.suppress(OSError):  # renamed, or never written
                    src.unlink(missing_ok=True)


def keep_saved_state(smbo: SMBO) -> None:
    """Save no more of ``smbo``'s state: a trial it was told of could not be logged (a full
    disk), and SMAC saves again as its loop ends. The state on disk stays the one saved
    before that trial, so a resume runs it again instead of counting a trial that
    ``trials.jsonl`` has no record of."""
    if isinstance(smbo, _AtomicSMBO):
        smbo.frozen = True


def _diff(new: Any, old: Any, where: str = "") -> list[str]:
    if isinstance(new, dict) and isinstance(old, dict):
        out: list[str] = []
        for key in sorted(set(new) | set(old), key=str):
            out += _diff(new.get(key), old.get(key), f"{where}.{key}" if where else str(key))
        return out
    return [] if new == old else [f"{where} (saved {old!r}, now {new!r})"]


def _saved_scenario(out: Path) -> Scenario | None:
    """The scenario SMAC saved in ``out`` (``None``: SMAC saved nothing there yet)."""
    saved_file = out / "scenario.json"
    if not saved_file.exists():
        if any((out / name).exists() for name in STATE_FILES):
            raise ConfigError(
                f"{out}: SMAC state without scenario.json; start again with --overwrite"
            )
        return None
    try:
        return Scenario.load(out)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{saved_file}: unreadable SMAC scenario ({exc})") from exc


def check_smac_resumable(scenario: Scenario, *, meta: bool = True) -> None:
    """Refuse ``scenario`` unless it is the one SMAC saved in its output folder (nothing
    saved: nothing to refuse). Reads only: the run folder's place aside (a moved run folder
    is the same run). ``meta``: compare the facade's components too (SMAC sets them on the
    scenario when it builds the facade; a check before the facade exists leaves them out).

    Raises
    ------
    ConfigError
        One line naming the saved file and up to three settings that differ.
    """
    out = Path(scenario.output_directory)
    old = _saved_scenario(out)
    if old is None:
        return
    new_s = Scenario.make_serializable(scenario)
    old_s = Scenario.make_serializable(old)
    old_s["output_directory"] = new_s["output_directory"]
    if not meta:
        new_s.pop("_meta", None)
        old_s.pop("_meta", None)
    if new_s != old_s:
        diff = _diff(new_s, old_s)
        shown = "; ".join(diff[:3]) + (f"; and {len(diff) - 3} more" if len(diff) > 3 else "")
        raise ConfigError(
            f"{out / 'scenario.json'}: cannot resume, SMAC's saved run differs from this "
            f"campaign: {shown} (start again with --overwrite)"
        )


def saved_smac_seeds(run_dir: Path) -> list[int]:
    """The seeds SMAC saved a run for in ``run_dir`` (its ``smac/<seed>`` folders with a
    scenario), in order."""
    found = Path(run_dir) / SMAC_DIR
    if not found.is_dir():
        return []
    named = [d.name for d in found.iterdir() if (d / "scenario.json").is_file()]
    return sorted(int(n) for n in named if n.isdigit())


def _check_resumable(scenario: Scenario) -> None:
    """Compare ``scenario`` with the one SMAC saved (:func:`check_smac_resumable`); raise
    instead of letting SMAC prompt. A moved run folder's saved scenario names its new place."""
    check_smac_resumable(scenario)
    out = Path(scenario.output_directory)
    saved_file = out / "scenario.json"
    if not saved_file.exists():
        return
    data = read_json(saved_file)
    place = Scenario.make_serializable(scenario)["output_directory"]
    if data.get("output_directory") != place:  # the run folder was moved
        data["output_directory"] = place
        write_json_atomic(saved_file, data)


def campaign_optimizer(facade: AbstractFacade) -> SMBO:
    """The SMBO of every campaign facade: atomic state files, and a resume checked first."""
    parts = facade_parts(facade)
    if not parts.overwrite:
        _check_resumable(parts.scenario)
    return _AtomicSMBO(
        scenario=parts.scenario,
        runner=parts.runner,
        runhistory=parts.runhistory,
        intensifier=parts.intensifier,
        overwrite=parts.overwrite,
    )


def note_loop_failure(output_dir: Path, details: str) -> Path:
    """Record that SMAC's loop raised (``details``: the traceback); return the file written."""
    path = Path(output_dir) / LOOP_FAILURE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(details)
    return path


def _restart_racing_after_a_loop_failure(output_dir: Path, intensifier: Any) -> None:
    """Empty the saved racing state (tracker or queue) of a run whose SMAC loop raised.

    The state SMAC failed on would fail again on resume. Without it the intensifier starts
    its racing from the runhistory (every finished trial is kept and none runs twice:
    configurations already run at a stage's budget are not run again).
    """
    failure = output_dir / LOOP_FAILURE_FILE
    if not failure.exists():
        return
    if isinstance(intensifier, dict) and isinstance(intensifier.get("state"), dict):
        state = intensifier["state"]
        for key, empty in (("tracker", {}), ("queue", [])):
            if key in state:
                state[key] = empty
        write_json_atomic(output_dir / "intensifier.json", intensifier)
    failure.unlink()


def repair_smac_state(output_dir: Path) -> int:
    """Prepare SMAC's saved state for a resume; return how many running trials were dropped.

    Trials saved as RUNNING belonged to the dead process: they are removed (and the submitted
    count lowered) so the intensifier yields them again. ``trials.jsonl`` de-duplication keeps
    a trial that had been logged just before the kill from being logged twice.

    Raises
    ------
    ConfigError
        If one of SMAC's state files is not valid JSON.
    """
    output_dir = Path(output_dir)
    for name in STATE_FILES:  # the fixed temporary names of older runs (the lock is held)
        (output_dir / f".{name[:-5]}.tmp.json").unlink(missing_ok=True)
    present = [output_dir / name for name in STATE_FILES if (output_dir / name).exists()]
    states = {p.name: read_json(p) for p in present}
    _restart_racing_after_a_loop_failure(output_dir, states.get("intensifier.json"))
    history = states.get("runhistory.json")
    if not isinstance(history, dict) or not isinstance(history.get("data"), list):
        return 0
    running = [e for e in history["data"] if e.get("status") == StatusType.RUNNING]
    if not running:
        return 0
    history["data"] = [e for e in history["data"] if e.get("status") != StatusType.RUNNING]
    stats = history.setdefault("stats", {})
    stats["submitted"] = max(0, int(stats.get("submitted", 0)) - len(running))
    stats["running"] = max(0, int(stats.get("running", 0)) - len(running))
    write_json_atomic(output_dir / "runhistory.json", history)
    return len(running)


def smac_output_dir(run_dir: Path, seed: int) -> Path:
    """Where SMAC writes its files inside a run folder (``smac/<seed>``)."""
    return Path(run_dir) / SMAC_DIR / str(seed)


def optimize_resumably(
    facade: AbstractFacade, scatter: dict[str, Any] | None, output_dir: Path, name: str
) -> Any:
    """``facade.optimize``; a failure of SMAC's own loop becomes one line and a resumable run.

    A trial that raises is SMAC's business (a CRASHED trial); an exception out of SMAC's loop
    (its intensifier, model or runner) would otherwise end the campaign with a traceback and,
    on resume, fail again on the same saved state. SMAC saved its state after the last
    finished trial; the traceback is kept in ``output_dir`` (:func:`note_loop_failure`) and
    the next ``--resume`` restarts the racing from the finished trials
    (:func:`repair_smac_state`).
    """
    try:
        return facade.optimize(data_to_scatter=None if scatter is None else scatter_keys(scatter))
    except (HpoError, KeyboardInterrupt):
        raise
    except Exception as exc:
        if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:  # the disk, not SMAC
            raise StorageError.of(exc, exc.filename or output_dir) from exc
        note = note_loop_failure(output_dir, traceback.format_exc())
        raise HpoError(
            f"SMAC's search loop failed ({type(exc).__name__}: {exc}; traceback in {note}); "
            f"its finished trials are kept: 'hpo run --resume {name}' continues the campaign"
        ) from exc


def smac_usage(output_dir: Path) -> tuple[float, int] | None:
    """SMAC's saved walltime used (seconds) and trials submitted, but for those running at
    an interruption (a resume runs them again: :func:`repair_smac_state`); ``None`` before
    its first save. Read to check that a resume's raised limits leave room for a trial."""
    output_dir = Path(output_dir)
    state, history = output_dir / "optimization.json", output_dir / "runhistory.json"
    if not (state.exists() and history.exists()):
        return None
    saved = read_json(history)
    running = sum(e.get("status") == StatusType.RUNNING for e in saved.get("data") or [])
    submitted = int((saved.get("stats") or {}).get("submitted", 0)) - running
    return float(read_json(state).get("used_walltime", 0.0)), submitted


def reopen_smac_state(output_dir: Path) -> None:
    """Mark SMAC's saved run unfinished, so SMAC's loop goes on from its runhistory and
    racing state instead of returning its incumbent at once: a campaign whose limits a
    resume raised (:func:`hpo.campaign.lifecycle.preflight.check_saved`) runs again."""
    state_file = Path(output_dir) / "optimization.json"
    if state_file.exists():
        write_json_atomic(state_file, {**read_json(state_file), "finished": False})
