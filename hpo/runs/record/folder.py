"""The run folder ``runs/<name>/``: its files, its lock, its trial log and its state.

Layout (see ``docs/ARCHITECTURE.md``)::

    campaign.json   settings, search space, data fingerprint, package versions, layout metric,
                    created time
    smac/<seed>/    SMAC's own output (scenario.json, runhistory.json, intensifier.json, ...)
    trials.jsonl    one JSON object per finished trial, appended (flush + fsync) as it ends
    lock.json       {"pid", "host", "started"}; flock-ed by the live campaign (RunLock)
    result.json     the incumbent, written when the campaign ends
    ensemble.json   the last ensemble exported from the run (hpo export --ensemble), if any
    data_files.json each data file the fingerprint hashed: {path: [size, mtime ns]} (runs
                    made since it was kept), so a resume names the file that changed

Nothing here knows about SMAC; :mod:`hpo.campaign.smac.facades` fills the trial records. The lock
lives in :mod:`hpo.runs.record.lock`; its names are re-exported here with the other run-folder
files.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import importlib.metadata
import json
import math
import os
import shutil
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from hpo.data.load import SPLITS, list_graphs
from hpo.errors import ConfigError, naming
from hpo.ownership import TEMP_SUFFIX, sweep_stale_temps, temp_prefix
from hpo.runs.record.lock import LOCK_FILE, RunLock, lock_is_held, read_lock, this_host, this_worker
from hpo.runs.record.trial import Trial, record_problem, trials_of

__all__ = [
    "CAMPAIGN_FILE",
    "DATA_FILES_FILE",
    "ENSEMBLE_FILE",
    "LOCK_FILE",
    "RESULT_FILE",
    "SMAC_DIR",
    "TRIALS_FILE",
    "RunLock",
    "TrialLog",
    "changed_data_files",
    "clear_run_dir",
    "data_files",
    "data_fingerprint",
    "fingerprint_of",
    "discard_new_run",
    "jsonable",
    "kept_data_files",
    "lock_is_held",
    "package_versions",
    "read_json",
    "read_lock",
    "read_trial_log",
    "read_trials",
    "run_state",
    "sweep_run_folder",
    "trial_key",
    "this_host",
    "this_worker",
    "write_file_atomic",
    "write_data_files",
    "write_json_atomic",
]

CAMPAIGN_FILE = "campaign.json"
TRIALS_FILE = "trials.jsonl"
RESULT_FILE = "result.json"
ENSEMBLE_FILE = "ensemble.json"
DATA_FILES_FILE = "data_files.json"
SMAC_DIR = "smac"
VERSIONED_PACKAGES = ("hpo", "smac", "ConfigSpace", "lightgbm", "numpy", "dask")
FINGERPRINT_SPLITS = tuple(s for s in SPLITS if s != "test")


def jsonable(value: Any) -> Any:
    """Return ``value`` with numpy scalars/arrays, paths and tuples turned into JSON types.

    Non-finite floats become ``None`` (JSON has no NaN); unknown objects become ``str``.
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, Path):
        return str(value)
    return str(value)


def write_file_atomic(
    path: Path, write: Callable[[Path], object], *, option: str | None = None
) -> None:
    """Write ``path`` by ``write(tmp)`` to a temporary name beside it, then rename it, so no
    reader sees it half written.

    Raises
    ------
    StorageError
        Naming ``path`` (and ``option``, the flag that chose it) when the disk refuses it
        (full, read-only); the temporary file is removed, the file at ``path`` is left as it
        was.
    """
    tmp = path.with_name(f"{temp_prefix(path)}{threading.get_ident()}{TEMP_SUFFIX}")
    try:
        with naming(path, option=option):
            path.parent.mkdir(parents=True, exist_ok=True)
            write(tmp)
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):  # renamed, or never written
            tmp.unlink(missing_ok=True)


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON to ``path`` (:func:`write_file_atomic`), synced."""

    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())

    write_file_atomic(path, write)


def read_json(path: Path) -> Any:
    """Read a JSON file of the run folder.

    Raises
    ------
    ConfigError
        If the file is missing or not valid JSON.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: file not found") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from exc


def data_files(root: Path, collections: Iterable[str]) -> dict[str, tuple[int, int]]:
    """The train and valid data files of ``collections`` under ``root``, in the order the
    fingerprint hashes them: ``{path relative to root: (size, mtime ns)}``.

    Raises
    ------
    UsageError
        If a collection has no train or valid folder under ``root``.
    """
    root = Path(root)
    out: dict[str, tuple[int, int]] = {}
    for collection in collections:
        for split in FINGERPRINT_SPLITS:
            for path in list_graphs(root, collection, split):
                st = path.stat()
                out[path.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


def fingerprint_of(files: dict[str, tuple[int, int]]) -> str:
    """The hash of :func:`data_files`' entries (see :func:`data_fingerprint`)."""
    digest = hashlib.sha256()
    for rel, (size, mtime_ns) in files.items():
        digest.update(f"{rel}\0{size}\0{mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def data_fingerprint(root: Path, collections: Iterable[str]) -> str:
    """Hash the train and valid data files of ``collections`` under ``root``.

    The hash covers each file's path relative to ``root``, its size and its mtime (ns), so it
    changes when a file is added, removed, replaced or touched, and not when the whole root
    is moved.

    Raises
    ------
    UsageError
        If a collection has no train or valid folder under ``root``.
    """
    return fingerprint_of(data_files(root, collections))


def write_data_files(run_dir: Path, files: dict[str, tuple[int, int]]) -> None:
    """Keep the files a run's fingerprint hashed (:data:`DATA_FILES_FILE`)."""
    write_json_atomic(Path(run_dir) / DATA_FILES_FILE, {k: list(v) for k, v in files.items()})


def kept_data_files(run_dir: Path) -> dict[str, tuple[int, int]] | None:
    """The data files a run kept (:func:`write_data_files`); ``None`` for a run made before
    it kept them, or a list that is not readable."""
    path = Path(run_dir) / DATA_FILES_FILE
    if not path.is_file():
        return None
    try:
        kept = read_json(path)
    except ConfigError:
        return None
    if not isinstance(kept, dict):
        return None
    entries = {k: v for k, v in kept.items() if isinstance(v, list) and len(v) == 2}
    return {k: (int(v[0]), int(v[1])) for k, v in entries.items()}


def changed_data_files(
    kept: dict[str, tuple[int, int]], now: dict[str, tuple[int, int]]
) -> list[str]:
    """What changed between the data files a run kept and ``now`` (:func:`data_files`): one
    phrase per file, new, gone, or with its size or mtime changed."""
    out = [f"{rel} is new" for rel in now if rel not in kept]
    out += [f"{rel} is gone" for rel in kept if rel not in now]
    for rel, (size, mtime_ns) in now.items():
        was = kept.get(rel)
        if was is None or was == (size, mtime_ns):
            continue
        if was[0] != size:
            out.append(f"{rel} changed size ({was[0]} -> {size} bytes)")
        else:
            when = _dt.datetime.fromtimestamp(mtime_ns / 1e9).isoformat(sep=" ", timespec="seconds")
            out.append(f"{rel} was modified (same size, mtime now {when})")
    return out


def package_versions() -> dict[str, str | None]:
    """Return the installed versions of the packages a campaign's results depend on."""
    out: dict[str, str | None] = {}
    for name in VERSIONED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def run_state(run_dir: Path) -> str:
    """Return ``running``, ``finished``, ``interrupted``, or ``missing`` for a run folder."""
    run_dir = Path(run_dir)
    if not (run_dir / CAMPAIGN_FILE).exists() and not (run_dir / LOCK_FILE).exists():
        return "missing"
    if lock_is_held(run_dir):
        return "running"
    if (run_dir / RESULT_FILE).exists():
        return "finished"
    return "interrupted"


def trial_key(record: Mapping[str, Any] | Trial) -> tuple[str, Any, Any, Any]:
    """Identity of a trial: (:func:`~hpo.runs.incumbent.config_key`, budget, seed, instance).

    ``instance`` is the cross-validation fold (``fold0`` ...), ``None`` without folds and in
    records made before folds existed, so those keep their identity. A record is read as a
    :class:`~hpo.runs.record.trial.Trial` (:attr:`Trial.key`).
    """
    trial = record if isinstance(record, Trial) else Trial.from_record(record, 0)
    return trial.key


def _parse_trial_lines(path: Path) -> tuple[list[dict[str, Any]], int]:
    """Parse ``trials.jsonl``; return the records and the byte length of the good prefix.

    Text after the last newline may be cut anywhere (``kill -9`` during a write) and is
    dropped; so is a last complete line that is not JSON. Any other bad line is an error.
    """
    lines = path.read_bytes().split(b"\n")
    records: list[dict[str, Any]] = []
    good = 0
    for number, line in enumerate(lines[:-1], start=1):  # lines[-1] has no newline after it
        if line.strip():
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError):
                if any(rest.strip() for rest in lines[number:]):
                    raise ConfigError(
                        f"{path}: line {number} is not valid JSON (only a truncated last line "
                        "is tolerated)"
                    ) from None
                break
            if not isinstance(record, dict):
                raise ConfigError(f"{path}: line {number}: expected a JSON object")
            problem = record_problem(record)
            if problem is not None:
                raise ConfigError(f"{path}: line {number}: {problem}")
            records.append(record)
        good += len(line) + 1
    return records, good


def read_trials(path: Path) -> list[dict[str, Any]]:
    """Read the records of a ``trials.jsonl``, ignoring a truncated last line.

    Raises
    ------
    ConfigError
        If a line other than the last is not a JSON object.
    """
    path = Path(path)
    if not path.exists():
        return []
    return _parse_trial_lines(path)[0]


def _append_line(path: Path, line: bytes) -> None:
    """Append ``line`` to ``path`` and fsync it; on a failed write (a full disk) the file is
    cut back to where it ended, so no half line is left for a later append to follow."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        end = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, end)
            raise
    finally:
        os.close(fd)


class TrialLog:
    """Append-only ``trials.jsonl`` with de-duplication by :attr:`Trial.key`.

    Opening cuts a truncated last line (left by ``kill -9``) so appends start on a clean line.

    Parameters
    ----------
    path
        The ``trials.jsonl`` file (created on first append).

    Attributes
    ----------
    trials
        Every trial of the log in order, as :meth:`Trial.from_record` reads it.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.trials: list[Trial] = []
        if self.path.exists():
            records, good = _parse_trial_lines(self.path)
            self.trials = trials_of(records)
            if good < self.path.stat().st_size:
                with open(self.path, "r+b") as fh:
                    fh.truncate(good)
        self._keys = {t.key for t in self.trials}

    def __len__(self) -> int:
        return len(self.trials)

    def __contains__(self, trial: Trial) -> bool:
        return trial.key in self._keys

    def append(self, trial: Trial) -> bool:
        """Append ``trial`` unless a trial with the same key is logged; return whether written.

        The record (:meth:`Trial.to_record`) gets ``trial`` = its 1-based position in the log.
        """
        record = jsonable({**trial.to_record(), "trial": len(self.trials) + 1})
        written = Trial.from_record(record, len(self.trials) + 1)  # as a reader will see it
        if written.key in self._keys:
            return False
        with naming(self.path):
            _append_line(self.path, (json.dumps(record) + "\n").encode("utf-8"))
        self.trials.append(written)
        self._keys.add(written.key)
        return True


def read_trial_log(path: Path) -> list[Trial]:
    """The trials of a ``trials.jsonl`` in log order (:func:`read_trials`, each record read by
    :meth:`Trial.from_record`), repeats included.

    Raises
    ------
    ConfigError
        If a line other than the last is not a JSON object, or a record's ``config``,
        ``metrics`` or ``info`` is not a JSON object.
    """
    return trials_of(read_trials(path))


def clear_run_dir(run_dir: Path) -> None:
    """Empty a run folder for ``--overwrite``, keeping the lock file its campaign holds open."""
    for child in run_dir.iterdir():
        if child.name == LOCK_FILE:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def sweep_run_folder(run_dir: Path) -> int:
    """Remove the temporary files a killed campaign left in its run folder (its own, SMAC's,
    the booster store's); return how many. Called by the campaign that holds the lock."""
    folders = [run_dir, run_dir / "boosters", *sorted((run_dir / SMAC_DIR).glob("*"))]
    return sum(sweep_stale_temps(folder) for folder in folders if folder.is_dir())


def discard_new_run(run_dir: Path, *, remove_folder: bool) -> None:
    """Remove what a new campaign wrote before failing; only its files were in the folder.

    ``remove_folder``: the campaign made the folder (or ``--overwrite`` emptied it), so it
    goes too; otherwise the empty folder that was there stays.
    """
    if remove_folder:
        shutil.rmtree(run_dir, ignore_errors=True)
    elif run_dir.is_dir():
        clear_run_dir(run_dir)
        (run_dir / LOCK_FILE).unlink(missing_ok=True)
