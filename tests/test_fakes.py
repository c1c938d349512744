"""The public test fakes behave like the seams they stand in for."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import numpy as np
import pytest

from hybrid_rag.errors import ConfigurationError, LLMError
from hybrid_rag.models import ChatMessage, Completion
from hybrid_rag.protocols import Embedder, LLMProvider
from hybrid_rag.testing import FakeEmbedder, FunctionLLM, ScriptedLLM
from hybrid_rag.testing.contracts import FAIL, LLMProviderContract, MakeLLM

MSGS = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hi")]


def test_fake_embedder_is_deterministic_normalised_and_counts() -> None:
    emb = FakeEmbedder()
    assert isinstance(emb, Embedder) and emb.dim == 16
    a = anyio.run(emb.embed_documents, ["acetone flash point", "acetone flash point", ""])
    assert a.shape == (3, 16) and a.dtype == np.float32
    assert np.array_equal(a[0], a[1]) and not a[2].any()
    assert abs(float(np.linalg.norm(a[0])) - 1.0) < 1e-6
    q = anyio.run(emb.embed_query, "acetone flash point")
    assert np.allclose(q, a[0])
    assert (emb.calls, emb.texts_embedded) == (2, 4)
    assert FakeEmbedder(dim=8).dim == 8
    with pytest.raises(ConfigurationError):
        FakeEmbedder(dim=0)


def test_function_llm_sync_function_records_calls() -> None:
    seen: list[Sequence[ChatMessage]] = []

    def fn(messages: Sequence[ChatMessage]) -> str:
        seen.append(messages)
        return "hello there"

    llm = FunctionLLM(fn)
    assert isinstance(llm, LLMProvider) and llm.name == "function"
    out = anyio.run(llm.complete, MSGS)
    assert out.text == "hello there" and out.completion_tokens == 2 and out.prompt_tokens == 3
    assert llm.calls == [MSGS] and seen == [MSGS]


def test_function_llm_async_function_and_completion_passthrough() -> None:
    async def fn(messages: Sequence[ChatMessage]) -> Completion:
        await anyio.sleep(0)
        return Completion(text=messages[-1].content.upper(), prompt_tokens=7)

    llm = FunctionLLM(fn, name="upper")
    assert anyio.run(llm.complete, MSGS) == Completion(text="HI", prompt_tokens=7)
    assert llm.name == "upper" and len(llm.calls) == 1


def test_function_llm_wraps_errors() -> None:
    def boom(_: Sequence[ChatMessage]) -> str:
        raise RuntimeError("rate limited")

    with pytest.raises(LLMError, match="rate limited"):
        anyio.run(FunctionLLM(boom).complete, MSGS)
    with pytest.raises(LLMError, match="int"):
        anyio.run(FunctionLLM(lambda _m: 42).complete, MSGS)  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigurationError):
        FunctionLLM("not callable")  # type: ignore[arg-type]


def test_function_llm_stop_iteration_becomes_llm_error() -> None:
    replies = iter(["only one"])
    llm = FunctionLLM(lambda _m: next(replies))
    assert anyio.run(llm.complete, MSGS).text == "only one"
    with pytest.raises(LLMError):
        anyio.run(llm.complete, MSGS)


def test_scripted_llm_in_order_then_exhausted() -> None:
    llm = ScriptedLLM(["one", Completion(text="two", completion_tokens=5)])
    assert llm.remaining == 2
    assert anyio.run(llm.complete, MSGS).text == "one"
    assert anyio.run(llm.complete, MSGS).completion_tokens == 5
    assert llm.remaining == 0 and len(llm.calls) == 2
    with pytest.raises(LLMError, match="exhausted"):
        anyio.run(llm.complete, MSGS)


def test_function_llm_streams_and_checks_json() -> None:
    llm = FunctionLLM(lambda messages: "flash point -20 °C")
    msgs = [ChatMessage(role="user", content="q")]

    async def collect() -> list[str]:
        return [piece async for piece in llm.stream(msgs)]

    pieces = anyio.run(collect)
    assert len(pieces) == 4 and "".join(pieces) == "flash point -20 °C"
    schema = {"type": "object"}
    with pytest.raises(LLMError, match="not a JSON object"):
        anyio.run(lambda: llm.complete(msgs, json_schema=schema))
    assert llm.json_schemas[-1] == schema
    ok = FunctionLLM(lambda messages: '{"a": 1}')
    assert anyio.run(lambda: ok.complete(msgs, json_schema=schema)).text == '{"a": 1}'


class TestScriptedLLMContract(LLMProviderContract):
    """The library's own fake keeps the contract it stands in for."""

    @pytest.fixture
    def make_llm(self) -> MakeLLM:
        def make(replies: Sequence[str]) -> FunctionLLM:
            left = list(replies)

            def reply(_m: Sequence[ChatMessage]) -> str:
                text = left.pop(0)
                if text == FAIL:
                    raise ValueError("back end down")
                return text

            return FunctionLLM(reply)

        return make
