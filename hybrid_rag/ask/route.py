"""The offline :class:`~hybrid_rag.protocols.QuestionRouter`: linking + ontology matching.

No model, no I/O: products are linked by their names (fuzzy, IDF-weighted), properties by
the ontology's labels, and the intent by generic question grammar (superlatives, "same",
"which of these ..."). A follow-up question that names no product takes the products of
the latest earlier user turn that named one.
"""

from __future__ import annotations

from collections.abc import Sequence

from hybrid_rag.ask.analysis import QuestionAnalysis, ScopeView, analyse
from hybrid_rag.models import ChatMessage

__all__ = ["OfflineRouter"]


class OfflineRouter:
    """The default router: deterministic, offline, no LLM call.

    Example:
        >>> from hybrid_rag.ask.route import OfflineRouter
        >>> router = OfflineRouter()
    """

    name = "offline"

    async def route(
        self,
        question: str,
        *,
        scope: ScopeView,
        history: Sequence[ChatMessage] = (),
    ) -> QuestionAnalysis:
        """Link products, match properties and classify the intent of ``question``."""
        return self.route_sync(question, scope=scope, history=history)

    def route_sync(
        self,
        question: str,
        *,
        scope: ScopeView,
        history: Sequence[ChatMessage] = (),
    ) -> QuestionAnalysis:
        """:meth:`route` without an event loop (it does no I/O)."""
        index = scope.products
        analysis = analyse(question, index=index, ontology=scope.ontology)
        if analysis.products or not history:
            return analysis
        for turn in reversed([m.content for m in history if m.role == "user"]):
            prev = analyse(turn, index=index, ontology=scope.ontology)
            if prev.products:
                names = "; ".join(p.label for p in prev.products)
                followed = analyse(f"{question} ({names})", index=index, ontology=scope.ontology)
                return _replace_question(followed, question)
        return analysis

    def __repr__(self) -> str:
        return "OfflineRouter()"


def _replace_question(a: QuestionAnalysis, question: str) -> QuestionAnalysis:
    """The analysis of an expanded follow-up, reported for the question as asked."""
    from dataclasses import replace

    return replace(a, question=question, search=a.search or a.topic)
