"""One bounded set of worker threads per ``HybridRAG``.

Stores block (pyoxigraph, SQLite, hdbcli, numpy), so the async core calls them from worker
threads. ``Workers`` bounds how many such calls one instance runs at once, across
every concurrent ask, ingest and forget, and across event loops (each sync twin called
from a notebook runs its own loop): a thread-level semaphore, not a loop-bound limiter.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import anyio

__all__ = ["Workers"]

T = TypeVar("T")


class Workers:
    """Runs blocking calls in worker threads, at most ``max_threads`` at a time.

    Args:
        max_threads: the most calls running at once (>= 1).
    """

    def __init__(self, max_threads: int) -> None:
        self._max = max_threads
        self._slots = threading.BoundedSemaphore(max_threads)
        self._lock = threading.Lock()
        self._running = 0
        self.peak = 0
        """The most calls that ran at once so far (for tests and metrics)."""

    @property
    def max_threads(self) -> int:
        """The bound."""
        return self._max

    async def run(self, fn: Callable[[], T], *, abandon_on_cancel: bool = False) -> T:
        """``fn()`` in a worker thread once a slot is free; its result or its exception.

        Args:
            fn: the blocking call.
            abandon_on_cancel: on cancellation, return at once and leave the thread to
                finish on its own (it keeps its slot until then). Only for reads whose
                result may be dropped: the ask chains use it so a deadline is kept
                whatever a store does; writes must never be abandoned.
        """
        return await anyio.to_thread.run_sync(
            lambda: self._call(fn), abandon_on_cancel=abandon_on_cancel
        )

    def _call(self, fn: Callable[[], T]) -> T:
        with self._slots:
            with self._lock:
                self._running += 1
                self.peak = max(self.peak, self._running)
            try:
                return fn()
            finally:
                with self._lock:
                    self._running -= 1
