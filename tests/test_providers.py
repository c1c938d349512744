"""The hosted providers against a real HTTP server on loopback (no network).

The ``openai`` and ``sap-ai-sdk-gen`` SDKs are pointed at
:class:`~hybrid_rag.testing.llm_server.FakeLLMServer` through their own configuration
(``base_url``; ``AICORE_AUTH_URL`` / ``AICORE_BASE_URL`` ...), so HTTP, SSE streaming,
retries, timeouts, the cache and usage counting all run for real.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import anyio
import pytest

from hybrid_rag.errors import ConfigurationError, LLMError
from hybrid_rag.models import ChatMessage
from hybrid_rag.providers import ResponseCache, track_usage
from hybrid_rag.testing.contracts import FAIL, LLMProviderContract, MakeLLM
from hybrid_rag.testing.llm_server import FakeLLMServer, Reply

pytest.importorskip("openai")
from hybrid_rag.providers.openai import OpenAIEmbedder, OpenAILLM

SECRET = "sk-very-secret-123"
USER = [ChatMessage(role="user", content="What is the flash point of acetone?")]


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(dim=8) as srv:
        yield srv


def _llm(server: FakeLLMServer, **kw: object) -> OpenAILLM:
    options: dict[str, object] = {"timeout": 2.0, "max_retries": 2, "api_key": SECRET}
    options.update(kw)
    return OpenAILLM("gpt-test", base_url=server.openai_url, **options)  # type: ignore[arg-type]


def test_complete_sends_explicit_max_tokens_and_counts_usage(server: FakeLLMServer) -> None:
    llm = _llm(server, max_tokens=77)
    done = anyio.run(lambda: llm.complete(USER))
    assert done.text == "echo: What is the flash point of acetone?"
    body = server.calls("/chat/completions")[0].body
    assert body["max_tokens"] == 77 and body["model"] == "gpt-test"
    assert server.calls("/chat/completions")[0].headers["authorization"] == f"Bearer {SECRET}"
    assert llm.usage.llm_calls == 1 and llm.usage.prompt_tokens == 7
    assert SECRET not in repr(llm)


def test_429_then_success_honours_retry_after(server: FakeLLMServer) -> None:
    server.script(Reply.error(429, retry_after=0.6), Reply.with_text("ok"))
    llm = _llm(server)
    start = time.perf_counter()
    assert anyio.run(lambda: llm.complete(USER)).text == "ok"
    assert time.perf_counter() - start >= 0.6
    assert len(server.calls("/chat/completions")) == 2


def test_500_is_retried_then_fails_with_llm_error(server: FakeLLMServer) -> None:
    server.script(*[Reply.error(500)] * 3)
    llm = _llm(server, max_retries=2)
    with pytest.raises(LLMError, match="HTTP 500 after 3 attempt"):
        anyio.run(lambda: llm.complete(USER))
    assert len(server.calls("/chat/completions")) == 3


def test_400_is_not_retried(server: FakeLLMServer) -> None:
    server.script(Reply.error(400))
    with pytest.raises(LLMError, match="400"):
        anyio.run(lambda: _llm(server).complete(USER))
    assert len(server.calls("/chat/completions")) == 1


def test_malformed_json_is_an_llm_error(server: FakeLLMServer) -> None:
    server.script(Reply.malformed())
    with pytest.raises(LLMError, match="gpt-test"):
        anyio.run(lambda: _llm(server, max_retries=0).complete(USER))


def test_stall_past_timeout_retries_then_succeeds(server: FakeLLMServer) -> None:
    server.script(Reply.stall(1.5), Reply.with_text("in time"))
    llm = _llm(server, timeout=0.5, max_retries=1)
    assert anyio.run(lambda: llm.complete(USER)).text == "in time"


def test_stall_every_time_is_a_timeout_error(server: FakeLLMServer) -> None:
    server.script(Reply.stall(1.5), Reply.stall(1.5))
    with pytest.raises(LLMError, match=r"no reply within 0\.5s"):
        anyio.run(lambda: _llm(server, timeout=0.5, max_retries=1).complete(USER))


def test_stream_yields_pieces_that_join_to_the_reply(server: FakeLLMServer) -> None:
    server.script(Reply.with_text("flash point is -20 °C"))
    llm = _llm(server)

    async def collect() -> list[str]:
        return [piece async for piece in llm.stream(USER)]

    pieces = anyio.run(collect)
    assert len(pieces) > 1 and "".join(pieces) == "flash point is -20 °C"
    assert server.calls("/chat/completions")[0].body["stream"] is True
    assert llm.usage.llm_calls == 1 and llm.usage.completion_tokens == 5


def test_stream_retries_a_429_before_the_first_piece(server: FakeLLMServer) -> None:
    server.script(Reply.error(429, retry_after=0.1), Reply.with_text("a b"))

    async def collect() -> str:
        return "".join([piece async for piece in _llm(server).stream(USER)])

    assert anyio.run(collect) == "a b"


def test_json_schema_is_sent_as_response_format(server: FakeLLMServer) -> None:
    schema = {"title": "Flash point", "type": "object", "properties": {"c": {"type": "number"}}}
    server.script(Reply.with_text('{"c": -20}'), Reply.with_text("not json"))
    llm = _llm(server)
    done = anyio.run(lambda: llm.complete(USER, json_schema=schema))
    assert json.loads(done.text) == {"c": -20}
    sent = server.calls("/chat/completions")[0].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == schema
    assert sent["json_schema"]["name"] == "Flash_point"
    with pytest.raises(LLMError, match="not a JSON object"):
        anyio.run(lambda: llm.complete(USER, json_schema=schema, temperature=0.1))


def test_cache_makes_a_repeat_cost_no_call(server: FakeLLMServer, tmp_path: Path) -> None:
    first = _llm(server, cache=tmp_path)
    anyio.run(lambda: first.complete(USER))
    again = _llm(server, cache=ResponseCache(tmp_path))  # a new process, same directory
    with track_usage() as meter:
        done = anyio.run(lambda: again.complete(USER))
    assert done.text.startswith("echo:") and len(server.calls("/chat/completions")) == 1
    assert meter.usage.cache_hits == 1 and meter.usage.llm_calls == 0
    anyio.run(lambda: again.complete(USER, temperature=0.5))  # other parameters: a call
    assert len(server.calls("/chat/completions")) == 2


def test_a_reply_that_fails_the_json_check_is_not_cached(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    schema = {"type": "object"}
    server.script(Reply.with_text("sorry, no JSON"), Reply.with_text('{"ok": true}'))
    llm = _llm(server, cache=tmp_path)
    with pytest.raises(LLMError, match="not a JSON object"):
        anyio.run(lambda: llm.complete(USER, json_schema=schema))
    assert anyio.run(lambda: llm.complete(USER, json_schema=schema)).text == '{"ok": true}'
    assert len(server.calls("/chat/completions")) == 2
    assert llm.usage.llm_calls == 2  # the bad reply was paid for, and counted


def test_concurrency_limit_holds(server: FakeLLMServer) -> None:
    server.script(*[Reply(text="x", delay=0.3)] * 4)
    llm = _llm(server, max_concurrency=2)

    async def four() -> float:
        start = time.perf_counter()
        async with anyio.create_task_group() as group:
            for i in range(4):
                msgs = [ChatMessage(role="user", content=f"q{i}")]
                group.start_soon(llm.complete, msgs)
        return time.perf_counter() - start

    assert anyio.run(four) >= 0.6  # two waves of two


def test_embedder_batches_caches_and_normalises(server: FakeLLMServer, tmp_path: Path) -> None:
    texts = [f"chunk {i}" for i in range(10)]
    emb = OpenAIEmbedder(
        "e", base_url=server.openai_url, dimensions=8, batch_size=4, cache=tmp_path
    )
    vectors = anyio.run(lambda: emb.embed_documents(texts))
    assert vectors.shape == (10, 8) and str(vectors.dtype) == "float32"
    assert abs(float((vectors**2).sum(axis=1).max()) - 1.0) < 1e-5
    assert len(server.calls("/embeddings")) == 3 and emb.usage.embedded_texts == 10
    assert server.calls("/embeddings")[0].body["dimensions"] == 8
    again = anyio.run(lambda: emb.embed_documents(texts))
    assert (again == vectors).all() and len(server.calls("/embeddings")) == 3
    assert emb.usage.cache_hits == 10


def test_embedder_429_then_success(server: FakeLLMServer) -> None:
    server.script(Reply.error(429, retry_after=0.1))
    emb = OpenAIEmbedder("e", base_url=server.openai_url, dimensions=8)
    assert anyio.run(lambda: emb.embed_query("x")).shape == (8,)
    assert len(server.calls("/embeddings")) == 2


def test_embedder_needs_a_known_dimension_and_openai_a_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigurationError, match="dimensions"):
        OpenAIEmbedder("nomic-embed-text", base_url="http://127.0.0.1:1/v1")
    assert OpenAIEmbedder("text-embedding-3-large", api_key="k").dim == 3072
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAILLM("gpt-4o")


def test_sync_twins_reuse_a_provider_across_event_loops(server: FakeLLMServer) -> None:
    llm = _llm(server)
    for _ in range(2):  # each anyio.run is a fresh loop; the client must not be reused
        assert anyio.run(lambda: llm.complete(USER)).text.startswith("echo")


def test_from_env_wires_openai_without_leaking_the_key(
    server: FakeLLMServer, tmp_path: Path
) -> None:
    from hybrid_rag.config import resolve_components

    got = resolve_components(
        env={
            "HYBRID_RAG_LLM": "openai:gpt-test",
            "HYBRID_RAG_EMBEDDER": "openai:emb",
            "HYBRID_RAG_EMBEDDING_DIM": "8",
            "OPENAI_BASE_URL": server.openai_url,
            "OPENAI_API_KEY": SECRET,
            "HYBRID_RAG_CACHE_DIR": str(tmp_path),
        }
    )
    assert isinstance(got.llm, OpenAILLM) and isinstance(got.embedder, OpenAIEmbedder)
    assert got.embedder.dim == 8 and "llm=openai:gpt-test" in got.description
    assert SECRET not in got.description and SECRET not in repr(got.llm)
    assert anyio.run(lambda: got.llm.complete(USER)).text.startswith("echo")  # type: ignore[union-attr]
    assert (tmp_path / "responses.sqlite").is_file()


def test_constructors_do_no_io(tmp_path: Path) -> None:
    cache = tmp_path / "never"
    OpenAILLM("m", base_url="http://127.0.0.1:1/v1", cache=cache)
    OpenAIEmbedder("m", base_url="http://127.0.0.1:1/v1", dimensions=4, cache=cache)
    assert not cache.exists()


def test_bad_options_are_configuration_errors() -> None:
    for bad in ({"timeout": 0}, {"max_retries": -1}, {"max_concurrency": 0}):
        with pytest.raises(ConfigurationError):
            OpenAILLM("m", base_url="http://127.0.0.1:1/v1", **bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="batch_size"):
        OpenAIEmbedder("m", base_url="http://127.0.0.1:1/v1", dimensions=4, batch_size=0)


def test_reasoning_models_get_max_completion_tokens(server: FakeLLMServer) -> None:
    llm = OpenAILLM("o3-mini", base_url=server.openai_url, max_tokens=50)
    anyio.run(lambda: llm.complete(USER))
    body = server.calls("/chat/completions")[0].body
    assert body["max_completion_tokens"] == 50
    assert "max_tokens" not in body and "temperature" not in body


SCHEMA = {
    "title": "reading",
    "type": "object",
    "properties": {"colour": {"type": "string"}},
    "required": ["colour"],
    "additionalProperties": False,
}


def _formats(server: FakeLLMServer) -> list[str | None]:
    return [
        (c.body.get("response_format") or {}).get("type") for c in server.calls("/chat/completions")
    ]


def test_a_server_without_json_schema_gets_json_mode_at_once_and_keeps_it() -> None:
    with FakeLLMServer(response_formats={"text", "json_object"}) as server:
        server.script(Reply.with_text('{"colour": "amber"}'), Reply.with_text('{"colour": "red"}'))
        llm = _llm(server, max_retries=3)
        assert json.loads(anyio.run(lambda: llm.complete(USER, json_schema=SCHEMA)).text) == {
            "colour": "amber"
        }
        anyio.run(lambda: llm.complete(USER, json_schema=SCHEMA))
        # one refused request (not retried), then JSON mode remembered for the next call
        assert _formats(server) == ["json_schema", "json_object", "json_object"]
        assert llm.structured_output == "json_object"
        sent = server.calls("/chat/completions")[1].body
        assert sent["response_format"]["schema"] == SCHEMA
        assert '"colour"' in sent["messages"][0]["content"]  # the schema in the prompt too


def test_a_plain_text_server_gets_the_schema_in_the_prompt_and_a_tolerant_reader() -> None:
    with FakeLLMServer(response_formats=set()) as server:
        server.script(Reply.with_text('Sure! Here it is:\n```json\n{"colour": "pale blue"}\n```'))
        llm = _llm(server)
        done = anyio.run(lambda: llm.complete(USER, json_schema=SCHEMA))
        assert json.loads(done.text) == {"colour": "pale blue"}
        assert _formats(server) == ["json_schema", "json_object", None]
        system = server.calls("/chat/completions")[-1].body["messages"][0]
        assert system["role"] == "system"
        assert json.dumps(SCHEMA, sort_keys=True, separators=(",", ":")) in system["content"]


def test_a_fixed_shape_is_never_changed() -> None:
    with FakeLLMServer(response_formats={"json_object"}) as server:
        llm = _llm(server, structured_output="json_schema")
        with pytest.raises(LLMError, match="rejected the request"):
            anyio.run(lambda: llm.complete(USER, json_schema=SCHEMA))
        assert _formats(server) == ["json_schema"]
        with pytest.raises(ConfigurationError, match="structured_output"):
            _llm(server, structured_output="xml")


def test_a_500_that_is_not_about_the_request_is_still_retried(server: FakeLLMServer) -> None:
    server.script(Reply.error(500), Reply.with_text("fine"))
    assert anyio.run(lambda: _llm(server).complete(USER)).text == "fine"
    assert len(server.calls("/chat/completions")) == 2


def test_a_cut_structured_reply_says_it_was_cut(server: FakeLLMServer) -> None:
    from hybrid_rag.models import Completion
    from hybrid_rag.providers._chat import check_json_reply

    cut = Completion(text='{"colour": "gre', finish_reason="length")
    with pytest.raises(LLMError, match="cut at the reply's token limit"):
        check_json_reply(cut, SCHEMA, "m")


def test_a_timeout_behind_other_calls_drops_concurrency_to_one(server: FakeLLMServer) -> None:
    server.script(*[Reply.stall(1.0, "late")] * 3, *[Reply.with_text("ok")] * 6)
    llm = _llm(server, timeout=0.5, max_retries=2, max_concurrency=3)

    async def three() -> None:
        async with anyio.create_task_group() as group:
            for i in range(3):
                group.start_soon(llm.complete, [ChatMessage(role="user", content=f"q{i}")])

    anyio.run(three)
    assert llm._policy.max_concurrency == 1  # the server queues: one at a time from now on


def test_a_stream_without_a_usage_chunk_still_counts_tokens() -> None:
    with FakeLLMServer(stream_usage=False) as server:
        server.script(Reply.with_text("one two three four"))
        llm = _llm(server)

        async def run() -> list[str]:
            return [p async for p in llm.stream(USER)]

        assert "".join(anyio.run(run)) == "one two three four"
        assert llm.usage.llm_calls == 1 and llm.usage.completion_tokens == 4
        assert llm.usage.prompt_tokens > 0


def test_streamed_completions_join_and_count(server: FakeLLMServer) -> None:
    llm = _llm(server, stream_completions=True)
    done = anyio.run(lambda: llm.complete(USER, json_schema=None))
    assert done.text == "echo: What is the flash point of acetone?"
    assert server.calls("/chat/completions")[0].body["stream"] is True
    assert done.completion_tokens > 0 and done.finish_reason == "stop"


def test_the_question_budget_cuts_an_attempt_without_retrying_and_counts_it(
    server: FakeLLMServer,
) -> None:
    from hybrid_rag._budget import open_budget

    server.script(Reply.stall(2.0))
    llm = _llm(server, timeout=30, max_retries=3)

    async def ask() -> None:
        with open_budget(0.5), track_usage() as meter:
            try:
                await llm.complete(USER)
            finally:
                assert meter.usage.llm_calls == 1  # the cut call was sent: it counts

    started = time.perf_counter()
    with pytest.raises(LLMError, match="ran out of time"):
        anyio.run(ask)
    assert time.perf_counter() - started < 1.8
    assert len(server.calls("/chat/completions")) == 1  # no retry: no time for one


class TestOpenAILLMContract(LLMProviderContract):
    """``OpenAILLM`` against the scripted server (a 400 for a failure)."""

    @pytest.fixture
    def make_llm(self, server: FakeLLMServer) -> MakeLLM:
        def make(replies: Sequence[str]) -> OpenAILLM:
            server.script(*(Reply.error(400) if r == FAIL else Reply.with_text(r) for r in replies))
            return _llm(server, max_retries=0)

        return make


def _at_once(llm: OpenAILLM, n: int) -> None:
    """``n`` structured calls started together on one loop."""

    async def calls() -> None:
        async with anyio.create_task_group() as group:
            for _ in range(n):
                group.start_soon(lambda: llm.complete(USER, json_schema=SCHEMA))

    anyio.run(calls)


def test_concurrent_refusals_step_down_one_shape_only() -> None:
    with FakeLLMServer(response_formats={"json_object"}) as server:
        llm = _llm(server)
        server.script(*[Reply.with_text('{"colour": "grey"}')] * 4)
        _at_once(llm, 4)
        assert llm.structured_output == "json_object"  # not "text": one step for one refusal


def test_calls_started_together_send_a_refused_shape_once() -> None:
    """Six structured calls at once against a server without json_schema: the first is
    refused once and resent as JSON mode; the other five wait for it and go as JSON mode
    (none sends the refused shape)."""
    with FakeLLMServer(response_formats={"text", "json_object"}) as server:
        llm = _llm(server, max_concurrency=6)
        server.script(*[Reply.with_text('{"colour": "teal"}')] * 7)
        _at_once(llm, 6)
        assert _formats(server) == ["json_schema"] + ["json_object"] * 6
        anyio.run(lambda: llm.complete(USER, json_schema=SCHEMA))  # a new loop: still settled
        assert _formats(server)[-1] == "json_object" and len(_formats(server)) == 8
