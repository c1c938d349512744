"""LangChain integration: LangChain's standard retriever tests, documents, tool, an LCEL chain."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core", reason="needs the [langchain] extra")
pytest.importorskip("langchain_tests", reason="needs langchain-tests ([dev] extra)")

from conftest import import_error_without
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_tests.integration_tests import RetrieversIntegrationTests

from hybrid_rag import HybridRAG
from hybrid_rag.integrations.langchain import HybridRAGRetriever, as_retriever
from hybrid_rag.samples import sample_pdfs

FLASH = "What is the flash point of Examplon Solvent 99%?"
_SHARED: dict[str, HybridRAG] = {}


def _shared_rag(tmp: Path) -> HybridRAG:
    if "rag" not in _SHARED:
        rag = HybridRAG(embedder="hashing")
        rag.ingest_many(sample_pdfs(tmp))
        _SHARED["rag"] = rag
    return _SHARED["rag"]


@pytest.fixture(scope="module", autouse=True)
def _rag_for_standard_tests(tmp_path_factory: pytest.TempPathFactory) -> Any:
    rag = _shared_rag(tmp_path_factory.mktemp("lc"))
    yield rag
    rag.close()
    _SHARED.clear()


# The suite's one async test relies on pytest-asyncio; mark it (this repo runs strict mode).
pytest.mark.asyncio(RetrieversIntegrationTests.test_ainvoke_returns_documents)


class TestStandardRetriever(RetrieversIntegrationTests):
    """LangChain's own retriever suite (k in the constructor and in invoke, sync and async)."""

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return HybridRAGRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"rag": _SHARED["rag"], "mode": "hybrid"}

    @property
    def retriever_query_example(self) -> str:
        return "Which first aid measures apply after contact with Examplon Solvent 99%?"


def test_documents_carry_provenance(sample_rag: HybridRAG) -> None:
    docs = sample_rag.as_retriever(k=8).invoke(FLASH)
    assert 1 <= len(docs) <= 8
    assert {d.metadata["source"] for d in docs} == {"kg", "vector"}
    answer = sample_rag.ask(FLASH, top_k=8)
    kg = [d for d in docs if d.metadata["source"] == "kg"]
    assert kg[0].metadata["quote"] == answer.facts[0].evidence.quote
    assert "-18" in " ".join(d.page_content for d in kg)
    for d in docs:
        assert {"doc_id", "page", "quote", "score", "source"} <= set(d.metadata)
        assert d.metadata["page"] >= 1 and d.metadata["doc_id"] == "examplon-solvent-99"


def test_scope_and_mode_are_respected(sample_rag: HybridRAG) -> None:
    r = as_retriever(sample_rag, mode="vector", docs=["demoline-glass-cleaner"], k=5)
    assert r.invoke(FLASH) == []  # it names a product outside the scope: nothing retrieved
    docs = r.invoke("What is the flash point of Demoline Glass Cleaner?")
    assert docs and {d.metadata["source"] for d in docs} == {"vector"}
    assert {d.metadata["doc_id"] for d in docs} == {"demoline-glass-cleaner"}


def test_tool_returns_answer_with_citations(sample_rag: HybridRAG) -> None:
    tool = sample_rag.as_tool()
    assert tool.name == "search_documents" and "question" in tool.args
    out = tool.invoke({"question": FLASH})
    assert "-18" in out and "Citations:" in out
    assert "[1] examplon-solvent-99, page " in out


def test_lcel_chain_with_a_fake_chat_model(sample_rag: HybridRAG) -> None:
    seen: list[str] = []

    def record(prompt: Any) -> Any:
        seen.append(prompt.to_string())
        return prompt

    llm = FakeMessagesListChatModel(responses=[AIMessage(content="It is -18 °C [1].")])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from the context only.\n{context}"), ("human", "{question}")]
    )
    context = sample_rag.as_retriever(k=3) | RunnableLambda(
        lambda docs: "\n".join(f"[{d.metadata['page']}] {d.page_content}" for d in docs)
    )
    chain = (
        {"context": context, "question": RunnablePassthrough()}
        | prompt
        | RunnableLambda(record)
        | llm
        | StrOutputParser()
    )
    assert chain.invoke(FLASH) == "It is -18 °C [1]."
    assert "Flash" in seen[0] and "-18" in seen[0] and FLASH in seen[0]


def test_missing_extra_names_the_install_line() -> None:
    message = import_error_without("hybrid_rag.integrations.langchain", blocked="langchain_core")
    assert "pip install 'hybrid-rag[langchain]'" in message
