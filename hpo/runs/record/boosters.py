"""The booster store ``runs/<name>/boosters/``: the LightGBM model of every scored trial.

Why keep boosters
-----------------
- *Continuation*: with the ``rounds`` fidelity a configuration promoted to a higher budget
  continues its booster from the lower budget (LightGBM ``init_model``) instead of
  retraining from scratch.
- *Exact export*: a continued booster is not the booster a fresh training would give
  (LightGBM starts its bagging, feature-fraction and ``rank_xendcg`` random streams again
  when it continues; hpo seeds them from the seed and the rounds done,
  :func:`hpo.ranking.model.lightgbm_adapter.continued_seeds`, so the new rounds draw new samples,
  but not a straight training's; for
  two trials in ``docs/benchmarks.md`` the score moved by more than 0.05). ``hpo export``
  therefore copies the booster that was scored, for either fidelity.

Layout and identity
-------------------
One text model per (configuration, seed, family, size)::

    boosters/<key>-<size>.txt

``key`` = :func:`booster_key` (a hash of the configuration's :func:`config_key`, the seed and
the family), ``size`` = :func:`budget_size` of the trial's budget: the boosting rounds
(``rounds`` fidelity) or configs per training graph (``configs`` fidelity). Both fidelities
round the budget the same way when training, so a trial's budget names its file.

What is kept
------------
- While a campaign runs, or after it was interrupted: the largest size of every key. A
  booster superseded by a successful continuation of the same key is pruned
  (:meth:`BoosterStore.prune_below`), since nothing continues from it again and it cannot be
  the incumbent (the incumbent is at the highest budget, which the continuation reached or
  passed). So an interrupted run can still continue every promotion it had pending, and can
  export its incumbent so far.
- When a campaign finishes: only the incumbent's boosters (:meth:`BoosterStore.keep_only`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import stat
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hpo.errors import naming
from hpo.ownership import TEMP_SUFFIX, temp_prefix
from hpo.runs.incumbent import config_key

__all__ = [
    "BOOSTERS_DIR",
    "MAX_ADOPTED_BYTES",
    "BoosterStore",
    "booster_key",
    "budget_size",
    "folder_bytes",
    "trial_budget",
    "write_booster",
]

BOOSTERS_DIR = "boosters"
_FILE = re.compile(r"([0-9a-f]{16})-([0-9]+)\.txt")


def booster_key(config: Mapping[str, Any], seed: int, family: str) -> str:
    """Identity of a trial's booster apart from its size (16 hex digits).

    The hash is of ``{"family", "hp", "seed"}`` as canonical JSON, the key boosters were
    saved under before this store, so boosters of older runs are still found.
    """
    blob = json.dumps(
        {"hp": json.loads(config_key(config)), "seed": int(seed), "family": family},
        sort_keys=True,
    )
    return hashlib.sha1(blob.encode()).hexdigest()[:16]


def trial_budget(budget: float | None, largest: float) -> float:
    """The budget a trial ran at: no budget means the largest (single-fidelity optimizers
    pass none, and their trials run at the campaign's ``max_budget``)."""
    return float(largest if budget is None else budget)


def budget_size(budget: float) -> int:
    """What a budget trains: boosting rounds or configs per graph, ``max(1, round(budget))``."""
    return max(1, int(round(float(budget))))


def folder_bytes(path: Path) -> int:
    """Bytes of all regular files under ``path`` (0 if it does not exist)."""
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):  # removed while walking (a live campaign)
                total += os.lstat(os.path.join(root, name)).st_size
    return total


#: LightGBM's line after a text model's last tree, and how far from the end it is looked for
#: (the parameters and feature importances LightGBM writes after it take a few KB).
_END_OF_TREES = b"end of trees"
_TAIL_BYTES = 1 << 20


#: The largest booster file a warm start copies from another run (a text model of 2,000 rounds
#: of 1,024 leaves is about 150 MB).
MAX_ADOPTED_BYTES = 1 << 30


def _temp_beside(final: Path) -> Path:
    """A temporary name beside ``final``, one per process and thread: written, then renamed
    onto ``final``, so no reader (another trial, ``export``) sees a file half written."""
    return final.parent / f"{temp_prefix(final)}{threading.get_ident()}{TEMP_SUFFIX}"


def _prior_beside(booster: Path) -> Path:
    """The prior file saved beside a booster file (:meth:`BoosterStore.prior_path`)."""
    return booster.with_suffix(".prior.json")


def _copy_regular(source: Path, dest: Path, max_bytes: int) -> None:
    """Copy the regular file ``source`` of at most ``max_bytes`` to ``dest`` (temporary file,
    then rename); the temporary file is removed whatever happens."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(source, flags)  # a FIFO opens without waiting for a writer, and is refused
    tmp = _temp_beside(dest)
    try:
        with os.fdopen(fd, "rb") as src:
            st = os.fstat(src.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
                raise OSError(f"{source}: not a regular file of at most {max_bytes} bytes")
            with tmp.open("wb") as out:
                shutil.copyfileobj(src, out)
            if tmp.stat().st_size > max_bytes:  # grew while copied
                raise OSError(f"{source}: more than {max_bytes} bytes")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _write_atomic(final: Path, data: bytes) -> None:
    """Write ``data`` to a temporary name beside ``final``, then rename it; on failure (a
    full disk) the temporary file is removed and ``final`` is as it was."""
    tmp = _temp_beside(final)
    try:
        with naming(final):
            with tmp.open("wb") as fh:
                fh.write(data)
            os.replace(tmp, final)
    finally:
        with contextlib.suppress(OSError):  # renamed, or never written
            tmp.unlink(missing_ok=True)


def write_booster(booster: Any, path: Path) -> None:
    """Save a LightGBM booster's text model at ``path`` atomically, as ``Booster.save_model``
    writes it.

    Written by Python, not by LightGBM's ``save_model``: on a full disk that raises a
    LightGBMError and prints its own ``[Fatal]`` line; here the failure is a
    :class:`~hpo.errors.StorageError` naming ``path``, and no partial file is left.
    """
    _write_atomic(Path(path), booster.model_to_string().encode("utf-8"))


class BoosterStore:
    """The boosters of one run folder (see the module docstring).

    Parameters
    ----------
    folder
        The ``boosters/`` folder (created on the first save).
    """

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)

    def path(self, key: str, size: int) -> Path:
        """Where the booster of ``key`` at ``size`` lives."""
        return self.folder / f"{key}-{int(size)}.txt"

    def sizes(self, key: str) -> list[int]:
        """Sizes saved for ``key``, ascending."""
        if not self.folder.is_dir():
            return []
        found = [_FILE.fullmatch(p.name) for p in self.folder.glob(f"{key}-*.txt")]
        return sorted(int(m.group(2)) for m in found if m is not None and m.group(1) == key)

    def prior_path(self, key: str, size: int) -> Path:
        """Where the learned cost prior saved beside a booster lives (JSON)."""
        return _prior_beside(self.path(key, size))

    def discard(self, booster: Path) -> None:
        """Delete a booster file of this store and the prior saved beside it, if there."""
        booster.unlink(missing_ok=True)
        _prior_beside(booster).unlink(missing_ok=True)

    def save(
        self, key: str, size: int, booster: Any, prior: Mapping[str, Any] | None = None
    ) -> Path:
        """Save ``booster`` atomically (temporary file, then rename); return its path.

        ``prior`` (JSON data of :class:`hpo.ranking.prior.fit.LearnedPrior`) is saved beside it,
        first, so a booster on disk always has the prior it was scored with; without one a
        stale prior of the same name is removed.
        """
        final = self.path(key, size)
        side = self.prior_path(key, size)
        with naming(final):
            self.folder.mkdir(parents=True, exist_ok=True)
            if prior is None:
                side.unlink(missing_ok=True)
            else:
                _write_atomic(side, json.dumps(dict(prior)).encode())
        write_booster(booster, final)
        return final

    def warm_path(self, family: str, size: int) -> Path:
        """Where a warm start's source booster of ``family`` is kept until the baseline scores
        it (:mod:`hpo.campaign.seeding.warm_reuse`); :meth:`keep_only` removes it with the rest."""
        return self.folder / f"warm-{family}-{int(size)}.txt"

    def adopt(self, source: Path, dest: Path, max_bytes: int = MAX_ADOPTED_BYTES) -> Path:
        """Copy the booster file ``source`` (and the prior saved beside it) to ``dest`` in this
        store, atomically as :meth:`save` writes; return ``dest``.

        ``source`` may be another run's, so it is read only if it is a regular file (not a
        link, a FIFO or a device) of at most ``max_bytes``; nothing half-copied is left.

        Raises
        ------
        OSError
            If a file cannot be read or is not such a file (the caller trains instead).
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        side, source_side = _prior_beside(dest), _prior_beside(source)
        if source_side.exists() or source_side.is_symlink():
            _copy_regular(source_side, side, max_bytes)
        else:
            side.unlink(missing_ok=True)
        _copy_regular(source, dest, max_bytes)
        return dest

    def load_prior(self, key: str, size: int) -> dict[str, Any] | None:
        """The prior saved beside the booster of ``key`` at ``size`` (``None``: none saved)."""
        side = self.prior_path(key, size)
        if not side.is_file():
            return None
        try:
            data = json.loads(side.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError, OSError):
            return None
        return data if isinstance(data, dict) else None

    def load(self, key: str, size: int) -> Any | None:
        """The booster of ``key`` at ``size``; ``None`` if missing or unreadable."""
        path = self.path(key, size)
        if not path.is_file():
            return None
        import lightgbm as lgb

        # A file this store wrote is whole (saved, then renamed), so one without LightGBM's
        # closing line was cut short (a full disk, a copy): skipped here, without letting
        # LightGBM print its "[Fatal]" line. Its stdout is not redirected instead: that is the
        # whole process's, and the trials of thread workers load boosters while the
        # campaign's view writes, so a redirect would swallow the view's lines, or leave
        # sys.stdout pointing at a buffer when two overlapped
        try:
            with path.open("rb") as fh:
                fh.seek(max(0, path.stat().st_size - _TAIL_BYTES))
                if _END_OF_TREES not in fh.read():
                    return None
            return lgb.Booster(model_file=str(path))
        except (lgb.basic.LightGBMError, OSError):
            return None

    def latest_below(self, key: str, size: int) -> tuple[Any | None, int]:
        """The readable booster of ``key`` with the largest size below ``size``, and that size.

        ``(None, 0)`` when there is none: the caller trains from scratch.
        """
        for found in reversed([s for s in self.sizes(key) if s < size]):
            booster = self.load(key, found)
            if booster is not None:
                return booster, found
        return None, 0

    def prune_below(self, key: str, size: int) -> int:
        """Delete the boosters of ``key`` smaller than ``size`` (superseded); return how many."""
        gone = 0
        for found in self.sizes(key):
            if found < size:
                self.discard(self.path(key, found))
                gone += 1
        return gone

    def keep_only(self, keep: Iterable[tuple[str, int]]) -> int:
        """Delete every booster (and stray temporary file) not in ``keep``; return how many."""
        keep = list(keep)
        wanted = {self.path(k, s).name for k, s in keep}
        wanted |= {self.prior_path(k, s).name for k, s in keep}
        if not self.folder.is_dir():
            return 0
        gone = 0
        for path in self.folder.iterdir():
            if path.is_file() and path.name not in wanted:
                path.unlink(missing_ok=True)
                gone += 1
        return gone

    def disk_bytes(self) -> int:
        """Bytes the store holds."""
        return folder_bytes(self.folder)
