"""Usage counting shared by every provider: per-provider totals and per-task meters.

A provider records each paid call (and each cache hit) once; the record goes to the
provider's own ``UsageMeter`` and to every meter opened with ``track_usage`` in
the current context. Context variables follow ``asyncio``/anyio tasks, so the meter of one
question or one ingest sees only its own calls even when several run at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from hybrid_rag.models import Usage

__all__ = ["UsageMeter", "combine_usage", "record_usage", "track_usage"]

_ACTIVE: ContextVar[tuple[UsageMeter, ...]] = ContextVar("hybrid_rag_usage_meters", default=())


class UsageMeter:
    """A thread-safe running total of ``Usage``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage = Usage()

    @property
    def usage(self) -> Usage:
        """The total so far (an immutable snapshot)."""
        with self._lock:
            return self._usage

    def add(self, usage: Usage) -> None:
        """Add ``usage`` to the total."""
        with self._lock:
            self._usage = self._usage + usage

    def __repr__(self) -> str:
        return f"UsageMeter({self.usage!r})"


@contextmanager
def track_usage() -> Iterator[UsageMeter]:
    """Count every provider call made in this context (and tasks it starts).

    Example:
        >>> with track_usage() as meter:
        ...     pass  # await llm.complete(...), await embedder.embed_documents(...)
        >>> meter.usage.llm_calls
        0
    """
    meter = UsageMeter()
    token = _ACTIVE.set((*_ACTIVE.get(), meter))
    try:
        yield meter
    finally:
        _ACTIVE.reset(token)


def record_usage(usage: Usage, *, owner: UsageMeter | None = None) -> None:
    """Add ``usage`` to ``owner`` (a provider's total) and to every active meter."""
    if owner is not None:
        owner.add(usage)
    for meter in _ACTIVE.get():
        meter.add(usage)


def combine_usage(reported: Usage, counted: Usage) -> Usage:
    """One figure from what providers reported and what the caller counted itself.

    Providers that report (every bundled one) are exact: cache hits are not calls. A
    model or embedder that reports nothing (a user's own class, a test fake) is covered by
    the caller's count of the calls it made. Decided per kind (LLM, embeddings).
    """
    llm_reported = reported.llm_calls > 0 or reported.prompt_tokens > 0
    emb_reported = reported.embedding_calls > 0 or reported.embedded_texts > 0
    src_llm = reported if llm_reported or reported.cache_hits else counted
    src_emb = reported if emb_reported or reported.cache_hits else counted
    return Usage(
        llm_calls=src_llm.llm_calls,
        prompt_tokens=src_llm.prompt_tokens,
        completion_tokens=src_llm.completion_tokens,
        embedding_calls=src_emb.embedding_calls,
        embedded_texts=src_emb.embedded_texts,
        cache_hits=reported.cache_hits,
    )
