"""Answer parts for the streaming endpoints: text deltas, then the complete :class:`Answer`.

Uses ``rag.astream`` when the :class:`HybridRAG` has it. Until then (TEMPORARY, delete on
merge with ``HybridRAG.astream``) it falls back to ``aask`` and yields the answer text as
one delta followed by the answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hybrid_rag.models import Answer, ChatMessage

if TYPE_CHECKING:
    from hybrid_rag.rag import HybridRAG

__all__ = ["Delta", "answer_parts"]


@dataclass(frozen=True)
class Delta:
    """A piece of answer text."""

    delta: str


async def answer_parts(
    rag: HybridRAG,
    question: str,
    *,
    docs: Sequence[str] | None,
    mode: Any,
    history: Sequence[ChatMessage] | None,
) -> AsyncIterator[Delta | Answer]:
    """Text deltas, then the complete answer (always last, exactly once)."""
    astream = getattr(rag, "astream", None)
    if astream is not None:
        async for part in astream(question, docs=docs, mode=mode, history=history):
            yield part if isinstance(part, Answer) else Delta(str(part.delta))
        return
    answer = await rag.aask(question, docs=docs, mode=mode, history=history)  # TEMPORARY
    if answer.text:
        yield Delta(answer.text)
    yield answer
