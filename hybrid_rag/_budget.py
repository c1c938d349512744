"""The time and call budget of one question, visible to every model call made for it.

The supervisor opens a ``Budget`` for each question (``ask(..., timeout=...)``); a context
variable carries it into the router, the KG chain, the composer and the provider's call
policy, which all read it instead of keeping their own clocks:

* ``left()`` is the time that remains; a provider's attempt never waits longer than that
  (and a budget that runs out is not retried: there is no time for a retry);
* ``take_call()`` spends one of the question's model calls (``max_calls``), so routing,
  LLM-written SPARQL and synthesis together stay within it; ``reserve`` keeps calls back
  for a later stage (the synthesis);
* ``note()`` records a stage that was cut or skipped, as a ``ChainError`` the ``Answer``
  reports.

No budget open (ingest, a provider used on its own): ``current()`` is ``None`` and every
caller behaves as before.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Literal

from hybrid_rag.models import ChainError

__all__ = ["DEFAULT_MAX_CALLS", "Budget", "current", "open_budget"]

DEFAULT_MAX_CALLS = 2
"""Model calls one question may make: one for its reading or query, one for its answer."""

_ACTIVE: ContextVar[Budget | None] = ContextVar("hybrid_rag_budget", default=None)
Stage = Literal["kg", "vector", "synthesis", "routing"]


@dataclass(slots=True)
class Budget:
    """What is left for one question: seconds until ``deadline`` and model calls.

    Attributes:
        seconds: the budget as given.
        deadline: ``time.monotonic()`` value at which the question's time is spent.
        max_calls: model calls the question may make (``None``: no cap).
        calls: model calls taken so far.
        notes: stages cut or skipped, reported in ``Answer.errors``.
    """

    seconds: float
    deadline: float
    max_calls: int | None = DEFAULT_MAX_CALLS
    calls: int = 0
    notes: list[ChainError] = field(default_factory=list)

    def left(self) -> float:
        """Seconds left (``0.0`` when spent)."""
        return max(0.0, self.deadline - time.monotonic())

    def take_call(self, *, reserve: int = 0) -> bool:
        """Spend one model call if one is left after keeping ``reserve`` for later stages."""
        if self.max_calls is not None and self.calls + 1 + reserve > self.max_calls:
            return False
        self.calls += 1
        return True

    def note(self, stage: Stage, kind: str, message: str) -> None:
        """Record that ``stage`` was cut (``kind="timeout"``) or skipped."""
        self.notes.append(ChainError(chain=stage, kind=kind, message=message))


def current() -> Budget | None:
    """The budget of the question being answered in this context, if any."""
    return _ACTIVE.get()


@contextmanager
def open_budget(seconds: float, *, max_calls: int | None = DEFAULT_MAX_CALLS) -> Iterator[Budget]:
    """Open a budget of ``seconds`` for the code inside (and the tasks it starts).

    Raises:
        ValueError: ``seconds`` is not a finite positive number.
    """
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"a time budget must be a finite number of seconds > 0, not {seconds}")
    budget = Budget(seconds, time.monotonic() + seconds, max_calls)
    token = _ACTIVE.set(budget)
    try:
        yield budget
    finally:
        try:
            _ACTIVE.reset(token)
        except ValueError:  # an async generator resumed in another context (a stream)
            _ACTIVE.set(None)
