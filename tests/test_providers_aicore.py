"""AICoreLLM / AICoreEmbedder through the real sap-ai-sdk-gen against a loopback emulator.

The emulator (:class:`~hybrid_rag.testing.llm_server.FakeLLMServer`) serves the
endpoints the SDK really calls: the XSUAA token (``POST <AICORE_AUTH_URL>/oauth/token``),
``GET /v2/lm/deployments``, and inference under ``/v2/inference/deployments/<id>/``
(``chat/completions``, ``embeddings``, and orchestration's ``completion``). The SDK is
configured only through its own ``AICORE_*`` variables. A live test runs when real
credentials are set.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import anyio
import pytest

from hybrid_rag.errors import LLMError
from hybrid_rag.models import ChatMessage
from hybrid_rag.testing.contracts import FAIL, LLMProviderContract, MakeLLM
from hybrid_rag.testing.llm_server import FakeLLMServer, Reply

pytest.importorskip("gen_ai_hub")
from hybrid_rag.providers.aicore import AICoreEmbedder, AICoreLLM

USER = [ChatMessage(role="user", content="Flash point of acetone?")]
SECRET = "aicore-client-secret-xyz"
DEPLOYMENTS = [
    ("d-gpt", "gpt-4o"),
    ("d-emb", "text-embedding-3-small"),
    ("d-orch", "orchestration"),
]
LIVE = all(os.environ.get(v) for v in ("AICORE_CLIENT_ID", "AICORE_BASE_URL")) or bool(
    os.environ.get("AICORE_SERVICE_KEY")
)


@pytest.fixture
def aicore(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer(dim=8, deployments=DEPLOYMENTS) as srv:
        for var in ("AICORE_SERVICE_KEY", "VCAP_SERVICES", "AICORE_PROFILE"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("AICORE_HOME", "/nonexistent-aicore-home")
        monkeypatch.setenv("AICORE_AUTH_URL", srv.url)
        monkeypatch.setenv("AICORE_BASE_URL", f"{srv.url}/v2")
        monkeypatch.setenv("AICORE_CLIENT_ID", "client")
        monkeypatch.setenv("AICORE_CLIENT_SECRET", SECRET)
        monkeypatch.setenv("AICORE_RESOURCE_GROUP", f"rg-{srv.url.rsplit(':', 1)[1]}")
        yield srv


def _llm(model: str = "gpt-4o", **kw: object) -> AICoreLLM:
    # one resource group per emulator: the shared proxy client is per resource group
    options: dict[str, object] = {
        "timeout": 15.0,
        "max_retries": 2,
        "resource_group": os.environ["AICORE_RESOURCE_GROUP"],
    }
    options.update(kw)
    return AICoreLLM(model, **options)  # type: ignore[arg-type]


def test_gpt_goes_through_token_deployments_and_inference(aicore: FakeLLMServer) -> None:
    llm = _llm(max_tokens=321)
    assert anyio.run(lambda: llm.complete(USER)).text == "echo: Flash point of acetone?"
    assert aicore.calls("/oauth/token") and aicore.calls("/v2/lm/deployments")
    call = aicore.calls("/v2/inference/deployments/d-gpt/chat/completions")[0]
    assert call.body["max_tokens"] == 321
    assert call.headers["authorization"] == "Bearer fake-token"
    assert call.headers["ai-resource-group"].startswith("rg-")
    assert SECRET not in repr(llm) and llm.usage.llm_calls == 1


def test_gpt_stream_and_retry_after(aicore: FakeLLMServer) -> None:
    llm = _llm()
    anyio.run(lambda: llm.complete(USER))  # warm: token and deployments fetched once
    aicore.script(Reply.error(429, retry_after=0.2), Reply.with_text("minus twenty"))

    async def collect() -> list[str]:
        return [piece async for piece in llm.stream(USER)]

    assert "".join(anyio.run(collect)) == "minus twenty"
    assert len(aicore.calls("/oauth/token")) == 1  # the shared proxy cached the token


def test_claude_goes_through_orchestration(aicore: FakeLLMServer) -> None:
    llm = _llm("anthropic--claude-4-sonnet", max_tokens=99)
    aicore.script(Reply.error(503), Reply.with_text("Claude says -20 °C"))
    assert anyio.run(lambda: llm.complete(USER)).text == "Claude says -20 °C"
    sent = aicore.calls("/v2/inference/deployments/d-orch/completion")[-1].body
    llm_config = sent["orchestration_config"]["module_configurations"]["llm_module_config"]
    assert llm_config["model_name"] == "anthropic--claude-4-sonnet"
    assert llm_config["model_params"]["max_tokens"] == 99


def test_claude_streams_through_orchestration(aicore: FakeLLMServer) -> None:
    llm = _llm("anthropic--claude-4-sonnet")
    aicore.script(Reply.with_text("flash point minus twenty"))

    async def collect() -> list[str]:
        return [piece async for piece in llm.stream(USER)]

    pieces = anyio.run(collect)
    assert len(pieces) == 4 and "".join(pieces) == "flash point minus twenty"
    sent = aicore.calls("/v2/inference/deployments/d-orch/completion")[-1].body
    assert sent["orchestration_config"]["stream"] is True
    assert llm.usage.completion_tokens == 4


def test_embedder_batches_on_the_embedding_deployment(aicore: FakeLLMServer) -> None:
    emb = AICoreEmbedder(
        "text-embedding-3-small",
        dimensions=8,
        batch_size=2,
        timeout=15.0,
        resource_group=os.environ["AICORE_RESOURCE_GROUP"],
    )
    vectors = anyio.run(lambda: emb.embed_documents(["a", "b", "c"]))
    assert vectors.shape == (3, 8)
    assert len(aicore.calls("/v2/inference/deployments/d-emb/embeddings")) == 2


def test_unknown_model_is_an_llm_error_naming_it(aicore: FakeLLMServer) -> None:
    with pytest.raises(LLMError, match="no-such-model"):
        anyio.run(lambda: _llm("no-such-model", max_retries=0).complete(USER))


@pytest.fixture
def live_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lift the conftest network guard for this one test (it runs only with credentials)."""
    import socket

    monkeypatch.delattr(socket.socket, "connect")  # back to the C implementation
    monkeypatch.delattr(socket.socket, "connect_ex")


@pytest.mark.integration
@pytest.mark.skipif(not LIVE, reason="no real AICORE_* credentials set")
def test_live_aicore(live_network: None) -> None:  # pragma: no cover - needs credentials
    model = os.environ.get("HYBRID_RAG_LIVE_AICORE_MODEL", "gpt-4o-mini")
    llm = AICoreLLM(model, max_tokens=16)
    question = [ChatMessage(role="user", content="Reply with the single word: pong")]
    done = anyio.run(lambda: llm.complete(question))
    assert "pong" in done.text.lower() and done.completion_tokens > 0


def test_from_env_passes_dotenv_credentials_to_the_sdk(
    aicore: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hybrid_rag.config import resolve_components

    for var in ("AICORE_AUTH_URL", "AICORE_BASE_URL", "AICORE_CLIENT_ID", "AICORE_CLIENT_SECRET"):
        monkeypatch.delenv(var)  # only the given env (a .env file) has them
    env = {
        "HYBRID_RAG_LLM": "aicore:gpt-4o",
        "HYBRID_RAG_CACHE_DIR": "off",
        "AICORE_AUTH_URL": aicore.url,
        "AICORE_BASE_URL": f"{aicore.url}/v2",
        "AICORE_CLIENT_ID": "client",
        "AICORE_CLIENT_SECRET": SECRET,
        "AICORE_RESOURCE_GROUP": "rg-dotenv",
    }
    got = resolve_components(env=env)
    assert isinstance(got.llm, AICoreLLM) and "llm=aicore:gpt-4o" in got.description
    assert SECRET not in got.description and SECRET not in repr(got.llm)
    assert anyio.run(lambda: got.llm.complete(USER)).text.startswith("echo")  # type: ignore[union-attr]
    assert aicore.calls("/oauth/token")[-1].body.count("client_id=client") == 1


def _service_key(url: str) -> dict[str, object]:
    return {
        "clientid": "client",
        "clientsecret": SECRET,
        "url": url,
        "serviceurls": {"AI_API_URL": url},
    }


@pytest.mark.parametrize("source", ["AICORE_SERVICE_KEY", "config.json", "VCAP_SERVICES"])
def test_credentials_from_each_source_the_sdk_reads(
    aicore: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str
) -> None:
    for var in ("AICORE_AUTH_URL", "AICORE_BASE_URL", "AICORE_CLIENT_ID", "AICORE_CLIENT_SECRET"):
        monkeypatch.delenv(var)
    key = _service_key(aicore.url)
    if source == "AICORE_SERVICE_KEY":
        monkeypatch.setenv("AICORE_SERVICE_KEY", json.dumps(key))
    elif source == "config.json":
        config = {
            "AICORE_AUTH_URL": aicore.url,
            "AICORE_BASE_URL": f"{aicore.url}/v2",
            "AICORE_CLIENT_ID": "client",
            "AICORE_CLIENT_SECRET": SECRET,
        }
        (tmp_path / "config.json").write_text(json.dumps(config))
        monkeypatch.setenv("AICORE_HOME", str(tmp_path))
    else:
        binding = {"name": "my-aicore", "label": "aicore", "credentials": key}
        monkeypatch.setenv("VCAP_SERVICES", json.dumps({"aicore": [binding]}))
    llm = _llm(resource_group=f"rg-{source}-{aicore.url.rsplit(':', 1)[1]}")
    assert anyio.run(lambda: llm.complete(USER)).text.startswith("echo")
    assert aicore.calls("/oauth/token") and aicore.calls("/chat/completions")


class TestAICoreLLMContract(LLMProviderContract):
    """``AICoreLLM`` (OpenAI route and orchestration) against the emulator."""

    @pytest.fixture(params=["gpt-4o", "anthropic--claude-4-sonnet"])
    def make_llm(self, aicore: FakeLLMServer, request: pytest.FixtureRequest) -> MakeLLM:
        def make(replies: Sequence[str]) -> AICoreLLM:
            aicore.script(*(Reply.error(400) if r == FAIL else Reply.with_text(r) for r in replies))
            route = "orchestration" if request.param.startswith("anthropic") else "openai"
            return _llm("gpt-4o", route=route, max_retries=0)

        return make
