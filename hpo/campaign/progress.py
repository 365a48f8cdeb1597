"""What a campaign shows while it runs, and the summary it prints at the end.

:class:`CampaignProgress` is a rich live view (trials done / limit, last trial, best score
with its per-collection metrics, elapsed and remaining walltime) or, when ``quiet``, one plain
line per finished trial. The objective builder receives it too: it is callable as
``progress(path, cache_hit)`` for each feature file ready, and has :meth:`log`.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from hpo.runs.incumbent import rule_order
from hpo.runs.record.trial import Trial

if TYPE_CHECKING:
    from hpo.campaign.result import CampaignResult

__all__ = [
    "BaselineSummary",
    "GAIN_NOISE",
    "gain_notes",
    "CampaignProgress",
    "stdout_console",
    "format_budget",
    "format_duration",
    "format_number",
    "print_summary",
    "smac_logs_to",
]


def format_duration(seconds: float | None) -> str:
    """Format seconds as ``H:MM:SS``; ``None`` or infinite gives ``-``."""
    if seconds is None or seconds != seconds or seconds in (float("inf"), float("-inf")):
        return "-"
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


def format_number(value: Any, digits: int = 4) -> str:
    """A score or metric as every view prints it: a float to ``digits`` decimals, none ``-``."""
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return "-" if value is None else str(value)


def format_budget(value: Any, digits: int = 6) -> str:
    """A budget as a plain number (16, 48, 144; 16.67 when fractional), none as ``-``."""
    return f"{value:.{digits}g}" if isinstance(value, (int, float)) else "-"


_fmt = format_number


def _budget(value: Any) -> str:
    return format_budget(value, 4)  # the live view is narrow


def _plain(console: Console, line: str) -> None:
    console.print(line, markup=False, highlight=False, soft_wrap=True)


def _short_error(trial: Trial) -> str:
    lines = [ln for ln in str(trial.error or "").strip().splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "no traceback"


class CampaignProgress:
    """Progress of one campaign, shown live with rich or as plain log lines.

    Parameters
    ----------
    trials
        The trial limit.
    walltime
        The walltime limit in seconds, ``None`` for none.
    quiet
        Plain log lines instead of a live view.
    console
        Where to print; a new ``rich.console.Console`` by default.
    cv
        Folds: the best shown is then one fold's score ("best fold"); without, the incumbent
        rule's (:func:`~hpo.runs.incumbent.rule_order`: the highest budget reached, then the score).
    """

    def __init__(
        self,
        *,
        trials: int,
        walltime: float | None,
        quiet: bool = False,
        console: Console | None = None,
        cv: int = 0,
    ) -> None:
        self.trials, self.best_label = trials, "best fold" if cv else "best"
        self.walltime = walltime
        self.quiet = quiet
        self.console = console if console is not None else Console()
        self.done = 0
        self.crashed = 0
        self.last: Trial | None = None
        self.best: Trial | None = None
        self.files = 0
        self.files_cached = 0
        self._files_logged = time.time()
        self._clock_start = time.time()
        self._live: Live | None = None
        self._lock = threading.Lock()

    # lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> CampaignProgress:
        if not self.quiet:
            self._live = Live(
                self,
                console=self.console,
                refresh_per_second=4,
                transient=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
            if not self.console.is_terminal:
                self.console.line()  # rich leaves the last frame without a newline

    # updates -----------------------------------------------------------------------------
    def log(self, message: str) -> None:
        """Print one line (above the live view when it is shown)."""
        _plain(self.console, f"[{time.strftime('%H:%M:%S')}] {message}")

    def __call__(self, path: object, cache_hit: bool) -> None:
        """Count one feature file ready (``build_tables``' ``on_file`` callback)."""
        with self._lock:
            self.files += 1
            self.files_cached += int(bool(cache_hit))
        if self.quiet and time.time() - self._files_logged >= 5.0:
            self._files_logged = time.time()
            self.log(self._files_line())

    def _files_line(self) -> str:
        return f"features: {self.files} files ready ({self.files_cached} from cache)"

    def start_clock(self, used: float = 0.0) -> None:
        """Start the elapsed-time clock; ``used`` seconds were spent before (resume)."""
        if self.files:
            self.log(self._files_line())
        self._clock_start = time.time() - used

    @property
    def elapsed(self) -> float:
        """Seconds since the campaign started (including time before a resume)."""
        return time.time() - self._clock_start

    @property
    def remaining(self) -> float | None:
        """Seconds of walltime left, ``None`` without a walltime limit."""
        return None if self.walltime is None else max(0.0, self.walltime - self.elapsed)

    def _count(self, trial: Trial) -> None:
        self.done += 1
        self.last = trial
        if trial.status != "SUCCESS":
            self.crashed += 1
            return
        if trial.score is None:
            return
        if self.best is None or rule_order(trial) > rule_order(self.best):
            self.best = trial

    def add_previous(self, trials: Iterable[Trial]) -> None:
        """Count trials finished before a resume, silently."""
        with self._lock:
            for trial in trials:
                self._count(trial)
        if self.done:
            self.log(f"resuming: {self.done} trials already finished")

    def trial_finished(self, trial: Trial) -> None:
        """Count one finished trial and show it."""
        with self._lock:
            self._count(trial)
        if self.quiet:
            self.log(self._plain_line(trial))
        elif trial.status != "SUCCESS":
            self.log(f"trial {trial.trial} {trial.status}: {_short_error(trial)}")

    # rendering ---------------------------------------------------------------------------
    def _plain_line(self, trial: Trial) -> str:
        parts = [f"trial {self.done}/{self.trials}", f"budget {_budget(trial.budget)}"]
        parts.append(trial.status)
        if trial.status == "SUCCESS":
            parts.append(f"score {_fmt(trial.score)}")
        else:
            parts.append(_short_error(trial))
        if self.best is not None:
            at = f"trial {self.best.trial}, budget {_budget(self.best.budget)}"
            parts.append(f"{self.best_label} {_fmt(self.best.score)} ({at})")
        parts.append(f"elapsed {format_duration(self.elapsed)}")
        if self.remaining is not None:
            parts.append(f"left {format_duration(self.remaining)}")
        return "  ".join(parts)

    def __rich__(self) -> RenderableType:
        with self._lock:
            done, last, best, crashed = self.done, self.last, self.best, self.crashed
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold")
        grid.add_column()
        bar = Table.grid(padding=(0, 1))
        bar.add_row(
            ProgressBar(total=self.trials, completed=min(done, self.trials), width=40),
            Text(f"{done}/{self.trials} trials" + (f" ({crashed} crashed)" if crashed else "")),
        )
        if self.files and not done:
            grid.add_row("features", self._files_line())
        grid.add_row("trials", bar)
        if last is not None:
            grid.add_row(
                "last trial",
                f"#{last.trial}  budget {_budget(last.budget)}  {last.status}  score "
                f"{_fmt(last.score)}  ({_fmt(last.duration, 1)} s)",
            )
        if best is not None:
            shown = "  ".join(f"{k} {_fmt(v)}" for k, v in best.metrics.items())
            grid.add_row(
                f"{self.best_label} so far",
                f"{_fmt(best.score)}  (trial {best.trial}, budget {_budget(best.budget)})"
                + (f"\n{shown}" if shown else ""),
            )
        clock = f"{format_duration(self.elapsed)} elapsed"
        if self.remaining is not None:
            clock += f"  {format_duration(self.remaining)} remaining"
        grid.add_row("time", clock)
        return grid


def _gain(tuned: Any, base: Any) -> str:
    """``tuned - base`` with a sign, or ``-`` when either is missing."""
    if isinstance(tuned, (int, float)) and isinstance(base, (int, float)):
        return f"{tuned - base:+.4f}"
    return "-"


@dataclass(frozen=True)
class BaselineSummary:
    """The baseline as the summary shows it: its trial (with folds, their mean), and what
    it is (``origin``: :func:`hpo.runs.record.trial.baseline_origin`)."""

    trial: Trial
    origin: str = "default configuration"
    folds: str | None = None  # "mean over K folds"

    @property
    def ok(self) -> bool:
        """Whether the baseline succeeded (its metrics can be compared)."""
        return self.trial.status == "SUCCESS"


def _baseline_lines(result: CampaignResult, baseline: BaselineSummary | None) -> list[str]:
    """The baseline's score and metrics, and what tuning gained over it (plain lines)."""
    if baseline is None:
        return []
    base, origin = baseline.trial, baseline.origin
    if not baseline.ok:
        return [f"baseline ({origin}): {base.status}"]
    shown = " ".join(f"{k}={_fmt(v)}" for k, v in base.metrics.items())
    gains = " ".join(f"{k}={_gain(result.metrics.get(k), v)}" for k, v in base.metrics.items())
    folds = f", {baseline.folds}" if baseline.folds else ""
    return [
        f"baseline ({origin}, budget {_budget(base.budget)}{folds}): "
        f"score {_fmt(base.score)}: {shown}",
        f"gain over baseline: score {_gain(result.score, base.score)}: {gains}",
    ]


#: A gain over the baseline below this is no gain: about one booster seed's spread of the
#: score (docs/benchmarks.md#defaults-over-a-family-of-laws).
GAIN_NOISE = 0.002


def gain_notes(
    result: CampaignResult, baseline: BaselineSummary | None, *, generated: bool
) -> list[str]:
    """Why the summary shows no gain over the baseline, when it shows none.

    Empty when the incumbent beat the baseline by at least :data:`GAIN_NOISE`, or when there
    is no scored baseline to compare with. ``generated``: the data root was written by
    ``hpo data synth``, whose default configuration is near the noise ceiling.
    """
    base = baseline.trial.score if baseline is not None and baseline.ok else None
    if result.score is None or base is None:
        return []
    gain = result.score - base
    if gain >= GAIN_NOISE:
        return []
    origin = baseline.origin if baseline is not None else "default configuration"
    head = (
        f"no configuration beat the baseline ({origin}) on valid"
        if gain <= 0
        else f"the gain over the baseline ({gain:+.4f}) is within one booster seed's spread"
    )
    if generated:
        why = (
            "on data from 'hpo data synth' the default configuration is already near the noise "
            "ceiling (0.97-0.99 of it at the median over 34 of the generator's laws), so a "
            "short campaign ties it; 30-minute campaigns gained 0.003-0.015 there, and tuning "
            "pays most on data the defaults were not chosen on (docs/benchmarks.md)"
        )
    else:
        why = (
            "a longer --walltime lets more configurations reach the largest budget, where the "
            "incumbent is chosen; extend this run with: hpo run --resume NAME --walltime LONGER"
        )
    return [f"{head}: {why}"]


def _fold_lines(result: CampaignResult) -> list[str]:
    """With cross-validation: the incumbent's score on each fold (its spread)."""
    if not result.folds:
        return []
    scores = {k: v.get("score") for k, v in result.folds.items()}
    shown = " ".join(f"{k}={_fmt(v)}" for k, v in scores.items())
    return [f"incumbent per fold (the score is their mean): {shown}"]


def print_summary(
    console: Console,
    result: CampaignResult,
    *,
    quiet: bool = False,
    baseline: BaselineSummary | None = None,
    cv: int = 0,
    notes: Sequence[str] = (),
) -> None:
    """Print the incumbent, its per-collection validation metrics and the run folder.

    ``baseline`` (the baseline's trial at the largest budget, and its ``origin``) adds its
    metrics and what tuning gained over it: incumbent minus baseline. With ``cv`` folds,
    successes and no incumbent mean no configuration was scored on every fold yet. ``notes``
    are printed last, before the run folder (what the scores do not mean, say).
    """
    if result.incumbent is None:
        ok = result.n_trials - result.n_crashed
        line = (
            f"no incumbent yet: {ok} trial(s) succeeded, but no configuration was scored on all "
            f"{cv} folds; resume the run with a higher --trials or --walltime to complete one"
            if cv and ok
            else f"no successful trial ({result.n_trials} trials, {result.n_crashed} crashed); "
            f"see the errors in {result.run_dir / 'trials.jsonl'}"
        )
        _plain(console, line)
        for note in notes:
            _plain(console, f"note: {note}")
        _plain(console, f"run folder: {result.run_dir}")
        return
    if quiet:
        config = " ".join(f"{k}={v}" for k, v in result.incumbent.items())
        metrics = " ".join(f"{k}={_fmt(v)}" for k, v in result.metrics.items())
        lines = [
            f"incumbent: {config}",
            f"score {_fmt(result.score)} (cost {_fmt(result.cost)}, budget "
            f"{_budget(result.budget)}): {metrics}",
            *_fold_lines(result),
            *_baseline_lines(result, baseline),
            f"trials: {result.n_trials} ({result.n_crashed} crashed)",
            *(f"note: {note}" for note in notes),
            f"run folder: {result.run_dir}",
        ]
        for line in lines:
            _plain(console, line)
        return
    config_table = Table(title="Incumbent configuration", title_justify="left")
    config_table.add_column("hyperparameter")
    config_table.add_column("value", justify="right")
    for key, value in result.incumbent.items():
        config_table.add_row(key, _fmt(value, 6))
    base_ok = baseline is not None and baseline.ok
    base_metrics = baseline.trial.metrics if baseline is not None and base_ok else {}
    title = f"Mean over {len(result.folds)} folds" if result.folds else "Validation metrics"
    metric_table = Table(title=title, title_justify="left")
    metric_table.add_column("collection")
    metric_table.add_column("incumbent", justify="right")
    if base_ok:
        metric_table.add_column("baseline", justify="right")
        metric_table.add_column("gain", justify="right")
    for key, value in result.metrics.items():
        extra = [_fmt(base_metrics.get(key)), _gain(value, base_metrics.get(key))]
        metric_table.add_row(key, _fmt(value), *(extra if base_ok else []))
    base_score = None if baseline is None else baseline.trial.score
    score = [_fmt(base_score), _gain(result.score, base_score)]
    metric_table.add_row("score", _fmt(result.score), *(score if base_ok else []), style="bold")
    console.print(Group(config_table, metric_table))
    _plain(
        console,
        f"budget {_budget(result.budget)}, {result.n_trials} trials ({result.n_crashed} crashed)",
    )
    for line in _fold_lines(result):
        _plain(console, line)
    if baseline is not None and not base_ok:
        _plain(console, f"baseline ({baseline.origin}): {baseline.trial.status}")
    elif baseline is not None:
        _plain(console, f"baseline: {baseline.origin}, at the largest budget")
    for note in notes:
        _plain(console, f"note: {note}")
    _plain(console, f"run folder: {result.run_dir}")


def stdout_console() -> Console:
    """A console for tables on stdout; piped output gets 160 columns instead of rich's 80,
    so collection names and numbers are not cut in logs and files."""
    import sys

    return Console() if sys.stdout.isatty() else Console(width=160)


class _ProgressLogHandler(logging.Handler):
    def __init__(self, progress: CampaignProgress) -> None:
        super().__init__(level=logging.WARNING)
        self.progress = progress

    def emit(self, record: logging.LogRecord) -> None:
        self.progress.log(f"smac {record.levelname.lower()}: {record.getMessage()}")


@contextlib.contextmanager
def smac_logs_to(progress: CampaignProgress) -> Iterator[None]:
    """Show SMAC's warnings in the progress view; never touch the root logger."""
    logger = logging.getLogger("smac")
    handler = _ProgressLogHandler(progress)
    propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
