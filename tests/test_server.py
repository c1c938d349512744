"""The HTTP service: every route in-process (httpx ASGI transport), errors, auth, limits."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="needs the [server] extra")

import httpx
import pytest_asyncio
from conftest import import_error_without

from hybrid_rag import HybridRAG
from hybrid_rag.server import create_app

FLASH = "What is the flash point of Examplon Solvent 99%?"


@pytest.fixture
def rag() -> Iterator[HybridRAG]:
    with HybridRAG(embedder="hashing", processes=False) as r:
        yield r


def _client(app: Any, **headers: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers)


async def _upload(c: httpx.AsyncClient, paths: list[Path], extra: dict[str, bytes]) -> str:
    files = [("files", (p.name, p.read_bytes(), "application/pdf")) for p in paths]
    files += [("files", (n, b, "application/octet-stream")) for n, b in extra.items()]
    r = await c.post("/documents", files=files)
    assert r.status_code == 202, r.text
    return str(r.json()["job_id"])


async def _wait(c: httpx.AsyncClient, job_id: str) -> dict[str, Any]:
    for _ in range(600):
        job: dict[str, Any] = (await c.get(f"/jobs/{job_id}")).json()
        if job["status"] == "done":
            return job
        await asyncio.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish")


@pytest_asyncio.fixture
async def client(rag: HybridRAG, sample_paths: list[Path]) -> AsyncIterator[httpx.AsyncClient]:
    async with _client(create_app(rag, api_keys=[])) as c:
        await _wait(c, await _upload(c, sample_paths, {}))
        yield c


def _events(body: str) -> list[tuple[str, str]]:
    out = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines.get("event", "message"), lines["data"]))
    return out


@pytest.mark.asyncio
async def test_upload_jobs_list_delete(rag: HybridRAG, sample_paths: list[Path]) -> None:
    async with _client(create_app(rag, api_keys=[])) as c:
        job_id = await _upload(c, sample_paths[:1], {"broken.pdf": b"%PDF-1.4 not a pdf"})
        job = await _wait(c, job_id)
        first, bad = job["files"]
        assert first == {
            "name": sample_paths[0].name,
            "status": "ingested",
            "doc_id": sample_paths[0].stem,
            "error": None,
            "replaced": None,
        }
        assert bad["status"] == "failed" and "Error" in bad["error"]
        again = await _wait(c, await _upload(c, sample_paths[:1], {}))
        assert again["files"][0]["status"] == "skipped"
        listed = (await c.get("/documents")).json()
        assert [d["doc_id"] for d in listed] == [sample_paths[0].stem]
        assert (await c.delete(f"/documents/{sample_paths[0].stem}")).status_code == 204
        gone = await c.delete(f"/documents/{sample_paths[0].stem}")
        assert gone.status_code == 404 and gone.json()["type"] == "DocumentNotFoundError"
        bad_id = await c.delete("/documents/bad%20id")
        assert bad_id.status_code == 400 and bad_id.json()["type"] == "InvalidDocIdError"
        assert (await c.get("/jobs/nope")).status_code == 404
        assert (await c.post("/documents")).status_code == 422


@pytest.mark.asyncio
async def test_ask_returns_the_answer(client: httpx.AsyncClient) -> None:
    r = await client.post("/ask", json={"question": FLASH, "mode": "kg"})
    assert r.status_code == 200
    body = r.json()
    assert "-18" in body["text"] and body["sources"] == ["kg"] and body["facts"]
    follow = await client.post(
        "/ask",
        json={
            "question": "and its boiling point?",
            "history": [{"role": "user", "content": FLASH}],
        },
    )
    assert follow.json()["facts"][0]["doc_id"] == "examplon-solvent-99"


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"question": ""}, 422),
        ({"question": "x", "mode": "sql"}, 422),
        ({"question": FLASH, "docs": ["unknown-doc"]}, 404),
        ({"question": FLASH, "docs": ["bad id!"]}, 400),
        ({"nothing": 1}, 422),
    ],
)
async def test_bad_asks_are_clear_4xx(client: httpx.AsyncClient, body: Any, status: int) -> None:
    for route in ("/ask", "/ask/stream"):
        r = await client.post(route, json=body)
        assert r.status_code == status, (route, r.text)
        assert r.headers["content-type"] == "application/json" and "detail" in r.json()


@pytest.mark.asyncio
async def test_ask_stream_sends_deltas_then_the_answer(client: httpx.AsyncClient) -> None:
    r = await client.post("/ask/stream", json={"question": FLASH})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    events = _events(r.text)
    assert [e for e, _ in events][-1] == "answer" and events[0][0] == "delta"
    answer = json.loads(events[-1][1])
    text = "".join(json.loads(d)["delta"] for e, d in events if e == "delta")
    assert text == answer["text"] and "-18" in text


@pytest.mark.asyncio
async def test_openai_chat_completions(client: httpx.AsyncClient) -> None:
    msgs = [{"role": "system", "content": "be brief"}, {"role": "user", "content": FLASH}]
    r = await client.post("/v1/chat/completions", json={"model": "hybrid-rag", "messages": msgs})
    assert r.status_code == 200
    body = r.json()
    content = body["choices"][0]["message"]["content"]
    assert body["object"] == "chat.completion" and "-18" in content
    assert "Citations:\n[1] examplon-solvent-99, page " in content
    assert body["citations"][0]["doc_id"] == "examplon-solvent-99"

    r = await client.post("/v1/chat/completions", json={"messages": msgs, "stream": True})
    chunks = [d for _, d in _events(r.text)]
    assert chunks[-1] == "[DONE]"
    parsed = [json.loads(d) for d in chunks[:-1]]
    assert parsed[0]["choices"][0]["delta"]["role"] == "assistant"
    assert parsed[-1]["choices"][0]["finish_reason"] == "stop"
    streamed = "".join(p["choices"][0]["delta"].get("content", "") for p in parsed)
    assert streamed == content
    models = (await client.get("/v1/models")).json()
    assert models["data"][0]["id"] == "hybrid-rag"


@pytest.mark.asyncio
async def test_chat_needs_a_final_user_message(client: httpx.AsyncClient) -> None:
    msgs = [{"role": "user", "content": FLASH}, {"role": "assistant", "content": "-18 °C"}]
    r = await client.post("/v1/chat/completions", json={"messages": msgs})
    assert r.status_code == 400 and "last message" in r.json()["error"]["message"]
    assert (await client.post("/v1/chat/completions", json={"messages": []})).status_code == 422


def _openai_error(r: httpx.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"message", "type", "param", "code"}
    kind = "server_error" if status >= 500 else "invalid_request_error"
    assert body["error"]["type"] == kind and body["error"]["message"]
    return dict(body["error"])


@pytest.mark.asyncio
async def test_v1_errors_have_openais_shape(client: httpx.AsyncClient) -> None:
    ask = {"messages": [{"role": "user", "content": FLASH}]}
    err = _openai_error(
        await client.post("/v1/chat/completions", json={**ask, "docs": ["nope-doc"]}), 404
    )
    assert err["message"] == "unknown document id 'nope-doc' in docs="  # closing quote kept
    assert (err["param"], err["code"]) == ("docs", "document_not_found")
    err = _openai_error(
        await client.post("/v1/chat/completions", json={**ask, "docs": ["a b"]}), 400
    )
    assert (err["param"], err["code"]) == ("docs", "invalid_doc_id")
    err = _openai_error(await client.post("/v1/chat/completions", json={"messages": []}), 422)
    assert err["param"] == "messages" and err["message"].startswith("messages: ")
    err = _openai_error(await client.post("/v1/chat/completions", json={**ask, "mode": "x"}), 422)
    assert err["param"] == "mode"
    err = _openai_error(await client.post("/v1/embeddings", json={}), 404)
    assert "Invalid URL (POST /v1/embeddings)" in err["message"]
    _openai_error(await client.delete("/v1/models"), 405)
    # the other routes keep their own shape, with the closing quote too
    r = await client.post("/ask", json={"question": FLASH, "docs": ["nope-doc"]})
    assert r.json() == {
        "detail": "unknown document id 'nope-doc' in docs=",
        "type": "DocumentNotFoundError",
    }
    assert "detail" in (await client.post("/ask", json={})).json()


@pytest.mark.asyncio
async def test_v1_errors_when_mounted_and_limited(rag: HybridRAG) -> None:
    from fastapi import FastAPI

    outer = FastAPI()
    outer.mount("/rag", create_app(rag, api_keys=["k1"], max_upload_bytes=2000))
    async with _client(outer) as anon:
        err = _openai_error(await anon.get("/rag/v1/models"), 401)
        assert err["code"] == "invalid_api_key" and "API key" in err["message"]
        assert "detail" in (await anon.get("/rag/documents")).json()
    async with _client(outer, Authorization="Bearer k1") as c:
        big = {"messages": [{"role": "user", "content": "x" * 5000}]}
        err = _openai_error(await c.post("/rag/v1/chat/completions", json=big), 413)
        assert err["code"] == "request_too_large" and "2000-byte limit" in err["message"]


@pytest.mark.asyncio
async def test_api_keys(rag: HybridRAG, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HYBRID_RAG_API_KEYS", "k1, k2")
    app = create_app(rag)
    async with _client(app) as anon:
        assert (await anon.get("/health")).status_code == 200
        for method, route in [
            ("GET", "/documents"),
            ("POST", "/ask"),
            ("GET", "/metrics"),
            ("POST", "/v1/chat/completions"),
            ("GET", "/jobs/x"),
        ]:
            r = await anon.request(method, route, json={})
            body = r.json()
            message = body["error"]["message"] if route.startswith("/v1/") else body["detail"]
            assert r.status_code == 401 and "API key" in message, route
    async with _client(app, Authorization="Bearer wrong") as bad:
        assert (await bad.get("/documents")).status_code == 401
    async with _client(app, Authorization="Bearer k2") as ok:
        assert (await ok.get("/documents")).status_code == 200


@pytest.mark.asyncio
async def test_upload_size_limit(rag: HybridRAG, sample_paths: list[Path]) -> None:
    async with _client(create_app(rag, api_keys=[], max_upload_bytes=2000)) as c:
        r = await c.post("/documents", files=[("files", ("a.pdf", b"x" * 5000, "application/pdf"))])
        assert r.status_code == 413 and "2000-byte limit" in r.json()["detail"]

        form = httpx.Request("POST", "http://t", files={"files": ("a.pdf", b"x" * 5000)})
        data = form.read()

        async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: counted as it comes
            for i in range(0, len(data), 500):
                yield data[i : i + 500]

        headers = {"content-type": form.headers["content-type"]}
        r = await c.post("/documents", content=chunked(), headers=headers)
        assert r.status_code == 413 and "2000-byte limit" in r.json()["detail"]
        assert (await c.get("/documents")).json() == []
        assert (await c.get("/health")).json() == {"status": "ok", "documents": 0}


@pytest.mark.asyncio
async def test_metrics(client: httpx.AsyncClient) -> None:
    await client.post("/ask", json={"question": FLASH})
    await client.post("/ask", json={"question": FLASH, "docs": ["unknown-doc"]})
    text = (await client.get("/metrics")).text
    assert "hybrid_rag_documents 3.0" in text
    assert 'hybrid_rag_ingests_total{status="ingested"} 3.0' in text
    assert 'hybrid_rag_asks_total{mode="hybrid",route="ask"} 1.0' in text
    assert 'hybrid_rag_ask_seconds_bucket{le="+Inf",route="ask"} 1.0' in text
    assert 'hybrid_rag_http_errors_total{status="404"} 1.0' in text
    assert "hybrid_rag_llm_calls_total 0.0" in text and "hybrid_rag_chain_errors" in text


class _Exploding:
    """Stands in for a HybridRAG whose store has a bug (raises a plain RuntimeError)."""

    def documents(self) -> list[Any]:
        raise RuntimeError("bug")

    async def aask(self, *a: Any, **k: Any) -> Any:
        raise RuntimeError("bug")


@pytest.mark.asyncio
async def test_unexpected_errors_are_500_json_and_the_app_goes_on() -> None:
    async with _client(create_app(_Exploding(), api_keys=[])) as c:  # type: ignore[arg-type]
        for _ in range(2):
            r = await c.post("/ask", json={"question": FLASH})
            assert r.status_code == 500 and r.json() == {
                "detail": "internal error",
                "type": "RuntimeError",
            }
        assert (await c.get("/documents")).status_code == 500


@pytest.mark.asyncio
async def test_chat_stream_without_an_answer_says_so(client: httpx.AsyncClient) -> None:
    body = {
        "messages": [{"role": "user", "content": "What is the boiling point of Unobtainium X?"}],
        "mode": "kg",
        "docs": ["demoline-glass-cleaner"],
        "stream": True,
    }
    plain = (
        await client.post(
            "/ask",
            json={"question": body["messages"][0]["content"], "mode": "kg", "docs": body["docs"]},
        )
    ).json()
    r = await client.post("/v1/chat/completions", json=body)
    parsed = [json.loads(d) for _, d in _events(r.text)[:-1]]
    streamed = "".join(p["choices"][0]["delta"].get("content", "") for p in parsed)
    assert plain["abstention"] == "out_of_scope"  # no document in scope is about X
    assert streamed == plain["text"] and "Unobtainium X" in streamed
    assert parsed[-1]["choices"][0]["finish_reason"] == "stop"


def test_missing_extra_names_the_install_line() -> None:
    message = import_error_without("hybrid_rag.server", blocked="fastapi")
    assert "pip install 'hybrid-rag[server]'" in message and "fastapi" in message


@pytest.mark.asyncio
async def test_ask_stream_with_a_model_sends_its_pieces(
    client: httpx.AsyncClient, rag: HybridRAG
) -> None:
    from hybrid_rag.testing import FunctionLLM

    with rag.override(llm=FunctionLLM(lambda _m: "The flash point is -18 °C [1].")):
        r = await client.post("/ask/stream", json={"question": FLASH})
    events = _events(r.text)
    deltas = [json.loads(d)["delta"] for e, d in events if e == "delta"]
    answer = json.loads(events[-1][1])
    assert len(deltas) > 1 and answer["generation"] == "llm"  # streamed, not one block
    assert "".join(deltas) == "The flash point is -18 °C [1]." == answer["text"]


@pytest.mark.asyncio
async def test_a_request_may_set_its_own_time_budget(client: httpx.AsyncClient) -> None:
    ok = await client.post("/ask", json={"question": FLASH, "mode": "kg", "timeout": 20})
    assert ok.status_code == 200 and "-18" in ok.json()["text"]
    for bad in (0.5, -3, "soon"):
        r = await client.post("/ask", json={"question": FLASH, "timeout": bad})
        assert r.status_code == 422, bad
    stream = await client.post("/ask/stream", json={"question": FLASH, "timeout": 0.2})
    assert stream.status_code == 422
