"""The contract suite of ``LLMProvider`` (see its docstring in ``hybrid_rag.protocols``).

Subclass ``LLMProviderContract`` and provide one fixture, ``make_llm``: a function that
takes the replies the back end should give, in order (a string is a reply's text,
``FAIL`` a failure the back end reports and no retry mends), and returns the provider
under test wired to that back end::

    class TestMyLLM(LLMProviderContract):
        @pytest.fixture
        def make_llm(self, server):
            def make(replies):
                server.script(*(Reply.error(400) if r is FAIL else Reply.with_text(r)
                                for r in replies))
                return MyLLM(base_url=server.url, max_retries=0)
            return make
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import pytest

from hybrid_rag.errors import LLMError
from hybrid_rag.models import ChatMessage, Completion
from hybrid_rag.protocols import LLMProvider

__all__ = ["FAIL", "LLMProviderContract", "MakeLLM"]

FAIL = "\x00fail"
"""A scripted reply meaning: the back end fails (an error no retry mends)."""

MakeLLM = Callable[[Sequence[str]], LLMProvider]

_ASK = [
    ChatMessage(role="system", content="You answer in one word."),
    ChatMessage(role="user", content="What colour is the sky on a clear day?"),
]
_SCHEMA: dict[str, Any] = {
    "title": "colour",
    "type": "object",
    "properties": {"colour": {"type": "string"}},
    "required": ["colour"],
    "additionalProperties": False,
}


class LLMProviderContract:
    """Behaviour every ``LLMProvider`` keeps; subclass and provide ``make_llm``."""

    @pytest.fixture
    def make_llm(self) -> MakeLLM:
        """The provider under test, answering the given replies in order."""
        raise NotImplementedError("provide a make_llm fixture")

    def test_it_is_an_llm_provider_with_a_name(self, make_llm: MakeLLM) -> None:
        llm = make_llm(["blue"])
        assert isinstance(llm, LLMProvider)
        assert isinstance(llm.name, str) and llm.name

    def test_complete_returns_the_reply_and_token_counts(self, make_llm: MakeLLM) -> None:
        llm = make_llm(["Blue."])
        done = anyio.run(lambda: llm.complete(_ASK))
        assert isinstance(done, Completion) and done.text == "Blue."
        assert done.prompt_tokens >= 0 and done.completion_tokens >= 0

    def test_a_json_reply_is_one_json_object(self, make_llm: MakeLLM) -> None:
        llm = make_llm(['{"colour": "blue"}'])
        done = anyio.run(lambda: llm.complete(_ASK, json_schema=_SCHEMA))
        assert json.loads(done.text) == {"colour": "blue"}

    def test_a_reply_that_is_not_a_json_object_is_an_llm_error(self, make_llm: MakeLLM) -> None:
        llm = make_llm(["the sky is blue", "the sky is blue"])
        with pytest.raises(LLMError):
            anyio.run(lambda: llm.complete(_ASK, json_schema=_SCHEMA))

    def test_a_back_end_failure_is_an_llm_error(self, make_llm: MakeLLM) -> None:
        llm = make_llm([FAIL, FAIL, FAIL])
        with pytest.raises(LLMError):
            anyio.run(lambda: llm.complete(_ASK))

    def test_stream_pieces_join_to_the_reply(self, make_llm: MakeLLM) -> None:
        llm = make_llm(["a clear blue sky"])

        async def pieces() -> list[str]:
            return [p async for p in llm.stream(_ASK)]

        got = anyio.run(pieces)
        assert got and all(isinstance(p, str) for p in got)
        assert "".join(got) == "a clear blue sky"

    def test_an_abandoned_stream_frees_the_provider(self, make_llm: MakeLLM) -> None:
        llm = make_llm(["one two three four", "again"])

        async def first_then_again() -> str:
            it = llm.stream(_ASK)
            await anext(aiter(it))
            close = getattr(it, "aclose", None)
            if close is not None:
                await close()
            return (await llm.complete(_ASK)).text

        assert anyio.run(first_then_again) == "again"

    def test_calls_may_run_concurrently(self, make_llm: MakeLLM) -> None:
        llm = make_llm(["x"] * 5)
        got: list[str] = []

        async def five() -> None:
            async def one(i: int) -> None:
                ask = [ChatMessage(role="user", content=f"Say x ({i})")]
                got.append((await llm.complete(ask)).text)

            async with anyio.create_task_group() as tg:
                for i in range(5):
                    tg.start_soon(one, i)

        anyio.run(five)
        assert got == ["x"] * 5
