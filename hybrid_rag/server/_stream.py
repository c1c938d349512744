"""Answer parts for the streaming endpoints: text deltas, then the complete ``Answer``.

A thin adapter over ``hybrid_rag.HybridRAG.astream``: with an LLM the deltas are the
model's text as it arrives (the final ``Answer`` has passed the grounding check); on the
extractive path the text is one delta.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from hybrid_rag.models import Answer, ChatMessage
from hybrid_rag.rag import StreamDelta

if TYPE_CHECKING:
    from hybrid_rag.rag import HybridRAG

__all__ = ["Delta", "answer_parts"]

Delta = StreamDelta
"""A piece of answer text (``.delta``)."""


async def answer_parts(
    rag: HybridRAG,
    question: str,
    *,
    docs: Sequence[str] | None,
    mode: Any,
    history: Sequence[ChatMessage] | None,
    timeout: float | None = None,
) -> AsyncIterator[StreamDelta | Answer]:
    """Text deltas, then the complete answer (always last, exactly once)."""
    async for part in rag.astream(question, docs=docs, mode=mode, history=history, timeout=timeout):
        yield part
