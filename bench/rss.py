"""This process's peak resident memory, sampled by a daemon thread.

The one sampler of the in-process memory benchmarks (``bench_predict_memory.py``,
``bench_trial_memory.py``): a peak read from ``psutil`` every ``interval`` seconds, which a
benchmark resets at the start of each stage it measures. (``bench_realscale.py`` samples a
whole process tree from outside, a different job.)
"""

from __future__ import annotations

import threading

import psutil

__all__ = ["PeakRss"]


class PeakRss:
    """Peak RSS of this process in MiB since the last :meth:`reset`."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.peak = 0.0
        self._me = psutil.Process()
        self._stop = threading.Event()

    def now(self) -> float:
        """The RSS now, in MiB."""
        return self._me.memory_info().rss / 2**20

    def reset(self) -> float:
        """Start a new peak at the RSS now, and return it."""
        self.peak = self.now()
        return self.peak

    def start(self) -> PeakRss:
        """Sample in a daemon thread until :meth:`stop`."""

        def sample() -> None:
            while not self._stop.is_set():
                self.peak = max(self.peak, self.now())
                self._stop.wait(self.interval)

        threading.Thread(target=sample, daemon=True).start()
        return self

    def stop(self) -> None:
        """End the sampling thread."""
        self._stop.set()
