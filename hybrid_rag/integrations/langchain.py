"""LangChain integration: a retriever and an agent tool backed by ``HybridRAG``.

Needs the ``[langchain]`` extra (``langchain-core``). Both run the same hybrid retrieval
as ``HybridRAG.aask`` (product linking, the knowledge-graph and vector chains, fusion):
the retriever returns the answer's facts and passages as LangChain ``Document`` objects,
the tool returns the answer text with numbered citations.

Example:
    >>> from hybrid_rag.integrations.langchain import as_retriever, as_tool
    >>> retriever = as_retriever(rag, k=4)                               # doctest: +SKIP
    >>> retriever.invoke("What is the flash point of acetone?")         # doctest: +SKIP
    >>> tool = as_tool(rag)                                             # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from hybrid_rag._display import cited_text
from hybrid_rag._sync import run_sync

try:
    from langchain_core.callbacks import (
        AsyncCallbackManagerForRetrieverRun,
        CallbackManagerForRetrieverRun,
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tools import BaseTool, StructuredTool
    from pydantic import BaseModel, Field
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "the LangChain integration needs langchain-core: pip install 'hybrid-rag[langchain]'"
    ) from exc

Mode = Literal["hybrid", "kg", "vector"]

if TYPE_CHECKING:
    from hybrid_rag.models import Answer


class _Asks(Protocol):
    """What the integration needs of a ``HybridRAG``: its async ``aask`` (typed here, not
    imported, so the facade and its adapters import each other in one direction only)."""

    async def aask(
        self,
        question: str,
        *,
        docs: Sequence[str] | None = None,
        mode: Mode = "hybrid",
        top_k: int | None = None,
    ) -> Answer: ...


__all__ = ["HybridRAGRetriever", "answer_documents", "as_retriever", "as_tool"]

_TOOL_DESCRIPTION = (
    "Answers a question from the ingested documents (a knowledge graph of their facts and "
    "their text). Returns the answer followed by numbered citations (document, page, quote). "
    "Input: one self-contained question naming the product or document it is about."
)


def answer_documents(answer: Answer) -> list[Document]:
    """An answer's facts, then its passages, as LangChain documents (best first).

    Facts (``source="kg"``) come from a graph query that matched the question exactly and
    carry ``score=1.0``; passages (``source="vector"``) carry their fused retrieval score.
    Every document's ``metadata`` has ``doc_id``, ``page``, ``quote``, ``score`` and ``source``.
    """
    docs = [
        Document(
            page_content=f"{f.subject}: {f.predicate_label}: {f.value}",
            metadata={
                "doc_id": f.doc_id,
                "page": f.evidence.page,
                "quote": f.evidence.quote,
                "score": 1.0,
                "source": "kg",
                "predicate": f.predicate,
                "status": f.status,
            },
        )
        for f in answer.facts
    ]
    docs += [
        Document(
            page_content=p.text,
            metadata={
                "doc_id": p.doc_id,
                "page": p.page,
                "quote": p.text,
                "score": p.score,
                "source": "vector",
                "chunk_id": p.chunk_id,
            },
        )
        for p in answer.passages
    ]
    return docs


class HybridRAGRetriever(BaseRetriever):
    """A LangChain retriever over a ``HybridRAG`` (see ``as_retriever``).

    Attributes:
        rag: the ``HybridRAG`` to ask.
        mode: ``"hybrid"`` (both chains), ``"kg"`` or ``"vector"``.
        docs: document ids in scope; ``None`` for all.
        k: at most this many documents per call (facts first, then passages);
            ``invoke(query, k=...)`` overrides it for one call.
    """

    rag: Any
    mode: Mode = "hybrid"
    docs: list[str] | None = None
    k: int = Field(default=4, ge=1)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return run_sync(lambda: self._aget_documents(query, kwargs.get("k")))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return await self._aget_documents(query, kwargs.get("k"))

    async def _aget_documents(self, query: str, k: int | None) -> list[Document]:
        k = self.k if k is None else int(k)
        answer = await self.rag.aask(query, docs=self.docs, mode=self.mode, top_k=k)
        return answer_documents(answer)[:k]


def as_retriever(
    rag: _Asks,
    *,
    mode: Mode = "hybrid",
    docs: Sequence[str] | None = None,
    k: int = 4,
) -> HybridRAGRetriever:
    """A LangChain ``BaseRetriever`` running ``rag``'s hybrid retrieval.

    Args:
        rag: the ``HybridRAG`` to ask.
        mode: ``"hybrid"`` (both chains), ``"kg"`` or ``"vector"``.
        docs: document ids in scope; ``None`` for all.
        k: at most this many documents per call.

    Returns:
        A retriever whose ``invoke`` / ``ainvoke`` return ``Document`` objects; see
        ``answer_documents`` for their content and metadata.
    """
    return HybridRAGRetriever(rag=rag, mode=mode, docs=None if docs is None else list(docs), k=k)


class _Question(BaseModel):
    question: str = Field(description="A self-contained question about the documents.")


def as_tool(
    rag: _Asks,
    *,
    name: str = "search_documents",
    description: str = _TOOL_DESCRIPTION,
    mode: Mode = "hybrid",
    docs: Sequence[str] | None = None,
) -> BaseTool:
    """A LangChain tool an agent can call; it returns the answer with citations.

    Args:
        rag: the ``HybridRAG`` to ask.
        name: the tool name the model sees.
        description: what the model is told the tool does.
        mode: ``"hybrid"`` (both chains), ``"kg"`` or ``"vector"``.
        docs: document ids in scope; ``None`` for all.

    Returns:
        A ``StructuredTool`` taking ``question`` and returning the answer text followed by
        ``Citations:`` and one numbered line per citation (document, page, quote).
    """
    scope = None if docs is None else list(docs)

    async def arun(question: str) -> str:
        return cited_text(await rag.aask(question, docs=scope, mode=mode))

    def run(question: str) -> str:
        return run_sync(lambda: arun(question))

    return StructuredTool.from_function(
        func=run, coroutine=arun, name=name, description=description, args_schema=_Question
    )
