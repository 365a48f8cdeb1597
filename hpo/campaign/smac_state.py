"""SMAC's saved state inside a run folder: written atomically, checked and repaired on resume.

- SMAC's state files are replaced atomically, so ``kill -9`` cannot leave them truncated;
- SMAC never prompts on stdin: a resumed run is compared with SMAC's saved scenario here and
  a difference is a :class:`hpo.errors.ConfigError`;
- trials that were running when the process died are dropped from the saved runhistory on
  resume, so SMAC runs them again instead of waiting for them forever.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from smac import Scenario
from smac.facade.abstract_facade import AbstractFacade
from smac.main.smbo import SMBO
from smac.runhistory import StatusType

from hpo.errors import ConfigError
from hpo.runs.folder import SMAC_DIR, read_json, write_json_atomic

__all__ = ["STATE_FILES", "campaign_optimizer", "repair_smac_state", "smac_output_dir"]

STATE_FILES = ("optimization.json", "runhistory.json", "intensifier.json")


class _AtomicSMBO(SMBO):
    """SMBO whose state files are written to temporary names, then renamed together."""

    def save(self) -> None:  # noqa: D102
        path = self._scenario.output_directory
        if path is None:
            return
        path.mkdir(parents=True, exist_ok=True)
        tmp = {name: path / f".{name[:-5]}.tmp.json" for name in STATE_FILES}
        stats = {  # the keys SMBO.save writes and SMBO.load reads
            "used_walltime": self.used_walltime,
            "used_target_function_walltime": self.used_target_function_walltime,
            "used_target_function_cputime": self.used_target_function_cputime,
            "last_update": time.time(),
            "finished": self._finished,
        }
        tmp["optimization.json"].write_text(json.dumps(stats, indent=2))
        self._runhistory.save(tmp["runhistory.json"])
        self._intensifier.save(tmp["intensifier.json"])
        for name, src in tmp.items():
            os.replace(src, path / name)


def _diff(new: Any, old: Any, where: str = "") -> list[str]:
    if isinstance(new, dict) and isinstance(old, dict):
        out: list[str] = []
        for key in sorted(set(new) | set(old), key=str):
            out += _diff(new.get(key), old.get(key), f"{where}.{key}" if where else str(key))
        return out
    return [] if new == old else [f"{where} (saved {old!r}, now {new!r})"]


def _check_resumable(scenario: Scenario) -> None:
    """Compare ``scenario`` with the one SMAC saved; raise instead of letting SMAC prompt."""
    out = Path(scenario.output_directory)
    saved_file = out / "scenario.json"
    if not saved_file.exists():
        if any((out / name).exists() for name in STATE_FILES):
            raise ConfigError(
                f"{out}: SMAC state without scenario.json; start again with --overwrite"
            )
        return
    try:
        old = Scenario.load(out)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{saved_file}: unreadable SMAC scenario ({exc})") from exc
    new_s = Scenario.make_serializable(scenario)
    old_s = Scenario.make_serializable(old)
    if new_s["output_directory"] != old_s["output_directory"]:  # the run folder was moved
        data = read_json(saved_file)
        data["output_directory"] = new_s["output_directory"]
        write_json_atomic(saved_file, data)
        old_s["output_directory"] = new_s["output_directory"]
    if new_s != old_s:
        diff = _diff(new_s, old_s)
        shown = "; ".join(diff[:3]) + (f"; and {len(diff) - 3} more" if len(diff) > 3 else "")
        raise ConfigError(
            f"{saved_file}: cannot resume, SMAC's saved run differs from this campaign: {shown} "
            "(start again with --overwrite)"
        )


def campaign_optimizer(facade: AbstractFacade) -> SMBO:
    if not facade._overwrite:
        _check_resumable(facade._scenario)
    return _AtomicSMBO(
        scenario=facade._scenario,
        runner=facade._runner,
        runhistory=facade._runhistory,
        intensifier=facade._intensifier,
        overwrite=facade._overwrite,
    )


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
    present = [output_dir / name for name in STATE_FILES if (output_dir / name).exists()]
    states = {p.name: read_json(p) for p in present}
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
