"""Write a competition submission CSV from an exported model.

Format (see TPUGRAPHS.md): header ``ID,TopConfigs``; one row per graph with ID
``<collection>:<stem>`` (``tile:xla:<stem>``, ``layout:<source>:<search>:<stem>``) and the
config indices predicted fastest first, joined by ``;``: the ``top_k`` best for tile (distinct
valid indices; fewer when the graph has fewer configs), the full ranking for layout.

Graphs are processed one at a time and each row is written as soon as it is ready, into a
temporary file next to the output that is renamed over it at the end, so an interrupted run
never leaves a half-written submission behind.

Beside it, ``.<name>.hpo-sha256`` records the CSV's SHA-256 (``sha256sum`` format): the
proof that hpo wrote a file there, which ``--out`` must have to replace it
(:mod:`hpo.ownership`). The competition's header is no proof: any tool writes it, and a
submission another tool made was replaced.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import hashlib
import io
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hpo.data.load import is_layout, list_graphs
from hpo.deploy.evaluate import model_collections
from hpo.deploy.model import ExportedModel, ProgressFn
from hpo.errors import UsageError
from hpo.ownership import TEMP_SUFFIX, check_replaceable, sweep_stale_temps, temp_prefix

__all__ = ["HEADER", "DEFAULT_TOP_K", "format_row", "submission_id", "write_submission"]

HEADER = "ID,TopConfigs"
DEFAULT_TOP_K = 5


def submission_id(collection: str, stem: str) -> str:
    """The submission ID of a graph: ``tile:xla:<stem>`` or ``layout:<src>:<search>:<stem>``."""
    return f"{collection}:{stem}"


def format_row(collection: str, stem: str, ranking: np.ndarray, top_k: int) -> str:
    """One CSV row: the full ranking for layout, its first ``top_k`` entries for tile.

    The ID is quoted as CSV requires when the file's stem holds a comma, a quote or a line
    break (real stems never do, but a file may be named anything).
    """
    shown = ranking if is_layout(collection) else ranking[:top_k]
    buf = io.StringIO()
    # the writer quotes a field holding a character of its line terminator: with an empty
    # one, a line break in a stem would have split the row
    csv.writer(buf, lineterminator="\r\n").writerow(
        [submission_id(collection, stem), ";".join(map(str, shown.tolist()))]
    )
    return buf.getvalue()[:-2]


def write_submission(
    model: ExportedModel,
    data_root: Path | str,
    out_csv: Path | str,
    split: str = "test",
    progress: ProgressFn | None = None,
    *,
    collections: Sequence[str] | None = None,
    top_k: int = DEFAULT_TOP_K,
    cache_dir: Path | str | None = None,
) -> dict[str, int]:
    """Rank every config of every graph of ``split`` and write the submission CSV.

    Parameters
    ----------
    model, data_root, progress, cache_dir
        As :func:`hpo.deploy.evaluate.evaluate_model` takes them.
    out_csv
        The CSV to write (replaced atomically).
    split
        Split to predict (``test`` for a submission).
    collections
        Collections to predict (default: every collection the model serves that ``data_root``
        holds for ``split``; :func:`hpo.deploy.evaluate.model_collections` names the others).
    top_k
        Configs listed per tile graph (at least 1).

    Returns
    -------
    dict
        ``{collection: rows written}``.

    Raises
    ------
    UsageError
        If ``top_k`` < 1, ``out_csv`` is a folder, in none, inside the model folder, a
        ``.npz`` name or cannot be written, a requested collection is
        missing from the data root or not served by the model, or the root holds none of the
        model's collections.
    """
    if top_k < 1:
        raise UsageError(f"--top-k must be >= 1, got {top_k}")
    root = Path(data_root)
    wanted, _ = model_collections(model, root, split, collections)
    files = [(c, p) for c in wanted for p in list_graphs(root, c, split)]
    out = Path(out_csv)
    _check_out(out, model.path)
    cache = Path(cache_dir) if cache_dir is not None else None
    sweep_stale_temps(out.parent)  # a submission a killed predict was writing
    tmp = out.with_name(f"{temp_prefix(out)}{TEMP_SUFFIX}")
    digest_file = _digest_file(out)
    digest_tmp = out.with_name(f"{temp_prefix(digest_file)}{TEMP_SUFFIX}")
    digest = hashlib.sha256()
    counts = dict.fromkeys(wanted, 0)
    try:
        try:
            fh = open(tmp, "w", encoding="utf-8", newline="\n")  # closed by the with below
        except OSError as exc:
            raise UsageError(
                f"--out {out}: cannot write there ({exc.strerror}); choose another --out"
            ) from None
        with fh:
            _write_line(fh, digest, HEADER)
            for i, (collection, path) in enumerate(files):
                ranking = model.rank_graph(path, collection, cache_dir=cache)
                _write_line(fh, digest, format_row(collection, path.stem, ranking, top_k))
                counts[collection] += 1
                if progress is not None:
                    progress(i + 1, len(files), f"{collection} {path.name}")
            fh.flush()
            os.fsync(fh.fileno())
        with open(digest_tmp, "w", encoding="utf-8", newline="\n") as sums:
            sums.write(f"{digest.hexdigest()}  {out.name}\n")
            sums.flush()
            os.fsync(sums.fileno())
        # the CSV first: a crash between the two leaves a CSV its old digest does not prove,
        # which is refused, never replaced
        os.replace(tmp, out)
        os.replace(digest_tmp, digest_file)
    except OSError as exc:
        ours = (tmp, out, digest_tmp, digest_file)
        if exc.filename is not None and Path(exc.filename) not in ours:
            raise  # not the CSV's: the CLI names that file
        full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        raise UsageError(
            f"--out {out}: could not write the submission ({exc.strerror}); "
            f"{'free space there or ' if full else ''}choose another --out"
        ) from None
    finally:
        with contextlib.suppress(OSError):  # a read-only or full disk: the error above says so
            tmp.unlink(missing_ok=True)
            digest_tmp.unlink(missing_ok=True)
    return counts


def _write_line(fh: io.TextIOBase, digest: Any, line: str) -> None:
    text = line + "\n"
    fh.write(text)
    digest.update(text.encode("utf-8"))


def _digest_file(csv_path: Path) -> Path:
    """Where the SHA-256 of the submission ``csv_path`` is recorded (see the module)."""
    return csv_path.with_name(f".{csv_path.name}.hpo-sha256")


#: A digest file's one line, as ``sha256sum`` writes it.
_DIGEST_LINE = re.compile(r"(?P<sha>[0-9a-f]{64})  (?P<name>[^\n]+)\n")


def _recorded_digest(csv_path: Path) -> str | None:
    """The SHA-256 hpo recorded for ``csv_path``; ``None`` without a readable record of it."""
    try:
        found = _DIGEST_LINE.fullmatch(_digest_file(csv_path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    return found["sha"] if found and found["name"] == csv_path.name else None


def _is_submission(path: Path) -> bool:
    """Whether ``path`` is a submission hpo wrote, unchanged since: its content has the
    SHA-256 recorded beside it (a file edited since holds more than hpo wrote)."""
    recorded = _recorded_digest(path)
    if recorded is None or not path.is_file():
        return False
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return False
    return digest.hexdigest() == recorded


def _check_out(out: Path, model_dir: Path) -> None:
    """Refuse an ``--out`` that is no place for a submission, before any graph is ranked:
    a missing folder, a folder, a file of the model folder (the CSV would replace the model
    it was written with), or an existing file that is not a submission hpo wrote
    (:mod:`hpo.ownership`: a live run's ``campaign.json`` was once replaced), and ``-``:
    the CSV is renamed into place when whole, so it cannot go to stdout (a file named ``-``
    was written)."""
    if str(out) == "-":
        raise UsageError(
            "--out -: predict writes the submission to a file (renamed into place when whole), "
            "not to stdout; name the CSV file"
        )
    if out.parent and not out.parent.is_dir():
        raise UsageError(f"{out}: {out.parent} does not exist or is not a folder")
    if out.is_dir():
        raise UsageError(f"{out}: is a folder; --out names the submission CSV to write")
    try:  # the folder it lands in: a link named --out is replaced, not followed
        inside = (out.parent.resolve() / out.name).is_relative_to(model_dir.resolve())
    except (OSError, RuntimeError) as exc:  # a symlink loop on the way
        raise UsageError(f"--out {out}: cannot resolve its folder ({exc})") from None
    if inside:
        raise UsageError(f"{out}: is inside the model folder {model_dir}; write the CSV elsewhere")
    check_replaceable(out, "--out", kind="submission", owned=_is_submission)
    digest_file = _digest_file(out)
    check_replaceable(
        digest_file,
        "--out",
        kind="digest of a submission",
        owned=lambda p: p.is_file() and _recorded_digest(out) is not None,
    )
