"""LangChainLLM / LangChainEmbedder with LangChain's own fake models."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from hybrid_rag.errors import ConfigurationError, LLMError
from hybrid_rag.models import ChatMessage
from hybrid_rag.protocols import Embedder, LLMProvider
from hybrid_rag.testing.contracts import FAIL, LLMProviderContract, MakeLLM

pytest.importorskip("langchain_core")
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage

from hybrid_rag.providers.langchain import LangChainEmbedder, LangChainLLM

USER = [ChatMessage(role="system", content="Be brief."), ChatMessage(role="user", content="Q?")]


class RateLimited(Exception):
    """Looks like a provider SDK's 429 (status_code + response headers)."""

    status_code = 429

    class response:  # mimics an HTTP response object
        status_code = 429
        headers: ClassVar[dict[str, str]] = {"retry-after": "0.05"}


class FlakyChat(FakeListChatModel):
    """Fails with a 429 on the first call, then answers from the list."""

    failures: int = 1

    async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
        if self.failures:
            self.failures -= 1
            raise RateLimited("slow down")
        return await super().ainvoke(*args, **kwargs)


def test_complete_and_protocol() -> None:
    llm = LangChainLLM(FakeListChatModel(responses=["-20 °C"]), name="fake")
    assert isinstance(llm, LLMProvider) and llm.name == "fake"
    assert anyio.run(lambda: llm.complete(USER)).text == "-20 °C"
    assert llm.usage.llm_calls == 1


def test_stream_uses_astream() -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(content="flash point is low")]))
    llm = LangChainLLM(model, name="generic")

    async def collect() -> list[str]:
        return [piece async for piece in llm.stream(USER)]

    pieces = anyio.run(collect)
    assert len(pieces) > 1 and "".join(pieces) == "flash point is low"


def test_rate_limit_from_the_model_is_retried() -> None:
    llm = LangChainLLM(FlakyChat(responses=["ok"]), name="flaky")
    assert anyio.run(lambda: llm.complete(USER)).text == "ok"


def test_json_schema_without_structured_output_support_goes_in_the_prompt() -> None:
    model = FakeListChatModel(responses=['```json\n{"value": -20}\n```', "nope"])
    llm = LangChainLLM(model, name="fake")
    schema = {"type": "object", "properties": {"value": {"type": "number"}}}
    done = anyio.run(lambda: llm.complete(USER, json_schema=schema))
    assert json.loads(done.text) == {"value": -20}
    with pytest.raises(LLMError, match="not a JSON object"):
        anyio.run(lambda: llm.complete(USER, json_schema=schema, temperature=0.2))


def test_cache_serves_a_repeat(tmp_path: Path) -> None:
    model = FakeListChatModel(responses=["first", "second"])
    llm = LangChainLLM(model, name="fake", cache=tmp_path)
    assert anyio.run(lambda: llm.complete(USER)).text == "first"
    assert anyio.run(lambda: llm.complete(USER)).text == "first"
    assert llm.usage.llm_calls == 1 and llm.usage.cache_hits == 1


def test_embedder_batches_and_is_an_embedder() -> None:
    emb = LangChainEmbedder(DeterministicFakeEmbedding(size=8), dim=8, batch_size=2)
    assert isinstance(emb, Embedder)
    vectors = anyio.run(lambda: emb.embed_documents(["a", "b", "c"]))
    assert vectors.shape == (3, 8) and emb.usage.embedding_calls == 2
    assert anyio.run(lambda: emb.embed_query("a")).tolist() == vectors[0].tolist()


def test_wrong_objects_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError):
        LangChainLLM(object())
    with pytest.raises(ConfigurationError):
        LangChainEmbedder(object(), dim=8)
    with pytest.raises(LLMError, match="dimension 4"):
        emb = LangChainEmbedder(DeterministicFakeEmbedding(size=8), dim=4, max_retries=0)
        anyio.run(lambda: emb.embed_documents(["x"]))


class _ScriptChat(FakeListChatModel):
    """LangChain's fake list model; a ``FAIL`` reply raises as a broken back end would."""

    async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
        if self.responses[self.i % len(self.responses)] == FAIL:
            self.i += 1
            raise ValueError("back end down")
        return await super().ainvoke(*args, **kwargs)


class TestLangChainLLMContract(LLMProviderContract):
    @pytest.fixture
    def make_llm(self) -> MakeLLM:
        def make(replies: Sequence[str]) -> LangChainLLM:
            return LangChainLLM(_ScriptChat(responses=list(replies)), name="script", max_retries=0)

        return make
