"""The HTTP service under malformed requests, callers without a key, and rival uploads.

Issue 19's run: ``POST /ask`` with a JSON ``\\ud800`` escape returned HTTP 500;
``/docs`` and ``/openapi.json`` were served without a key with no way to turn them off;
``/health`` told anyone the document count and error texts; a file uploaded by one
client replaced another client's document of the same file name without a word.
In-process (httpx ASGI transport) against a real ``HybridRAG`` with the sample sheets.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="needs the [server] extra")

import httpx
import pytest_asyncio

from hybrid_rag import HybridRAG
from hybrid_rag.samples import pdf_bytes, sample_text
from hybrid_rag.server import create_app

KEYS = ["alpha-key", "beta-key"]
Q = "What is the flash point of Examplon Solvent 99?"


@pytest.fixture
def rag(sample_paths: list[Path]) -> Iterator[HybridRAG]:
    with HybridRAG(embedder="hashing", processes=False) as r:
        r.ingest_many(sample_paths, raise_errors=True)
        yield r


def _client(app: Any, key: str | None = None) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(transport=transport, base_url="http://test", headers=headers)


@pytest_asyncio.fixture
async def alpha(rag: HybridRAG) -> AsyncIterator[httpx.AsyncClient]:
    async with _client(create_app(rag, api_keys=KEYS), KEYS[0]) as c:
        yield c


BAD_BODIES: list[tuple[str, bytes]] = [
    ("lone-surrogate", b'{"question": "\\ud800"}'),
    ("lone-surrogate-in-history", b'{"question": "q?", "history": [{"role": "user", '
     b'"content": "\\udfff"}]}'),
    ("surrogate-in-docs", b'{"question": "q?", "docs": ["\\ud83d"]}'),
    ("not-json", b"{question: flash"),
    ("truncated-json", b'{"question": "flash'),
    ("question-a-number", b'{"question": 5}'),
    ("question-empty", b'{"question": ""}'),
    ("question-too-long", b'{"question": "' + b"x" * 4001 + b'"}'),
    ("mode-unknown", b'{"question": "q?", "mode": "sql"}'),
    ("top-k-text", b'{"question": "q?", "top_k": "three"}'),
    ("top-k-zero", b'{"question": "q?", "top_k": 0}'),
    ("docs-a-string", b'{"question": "q?", "docs": "abc"}'),
    ("a-list", b'["question"]'),
    ("null", b"null"),
    ("nan", b'{"question": "q?", "top_k": NaN}'),
]  # fmt: skip
BAD_CHATS: list[tuple[str, bytes]] = [
    ("lone-surrogate", b'{"messages": [{"role": "user", "content": "\\ud800"}]}'),
    ("surrogate-in-a-part", b'{"messages": [{"role": "user", "content": [{"type": "text", '
     b'"text": "\\udc00"}]}]}'),
    ("no-messages", b'{"messages": []}'),
    ("content-a-number", b'{"messages": [{"role": "user", "content": 5}]}'),
    ("mode-unknown", b'{"messages": [{"role": "user", "content": "q?"}], "mode": "sql"}'),
    ("not-json", b"{messages"),
    ("null", b"null"),
]  # fmt: skip
ROUTES = [("/ask", b) for b in BAD_BODIES] + [("/ask/stream", b) for b in BAD_BODIES]
ROUTES += [("/v1/chat/completions", b) for b in BAD_CHATS]


@pytest.mark.asyncio
@pytest.mark.parametrize(("route", "case"), ROUTES, ids=[f"{r}:{b[0]}" for r, b in ROUTES])
async def test_malformed_requests_are_a_json_4xx(
    route: str, case: tuple[str, bytes], alpha: httpx.AsyncClient
) -> None:
    name, body = case
    r = await alpha.post(route, content=body, headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500, (name, r.status_code, r.text[:300])
    payload = r.json()
    if route.startswith("/v1/"):  # OpenAI's error shape, which its clients read
        assert payload["error"]["type"] == "invalid_request_error", payload
    else:
        assert payload["type"] in ("RequestValidationError", "InputError"), payload
    assert "\\ud800" not in r.text and "x" * 100 not in r.text  # the input is not echoed


@pytest.mark.asyncio
async def test_the_api_docs_need_the_key_and_can_be_switched_off(rag: HybridRAG) -> None:
    app = create_app(rag, api_keys=KEYS)
    async with _client(app) as anon, _client(app, KEYS[1]) as beta:
        for route in ("/docs", "/openapi.json", "/redoc"):
            assert (await anon.get(route)).status_code in (401, 404), route
        assert (await beta.get("/openapi.json")).json()["info"]["title"] == "hybrid_rag"
        assert "swagger" in (await beta.get("/docs")).text.lower()
    async with _client(create_app(rag, api_keys=KEYS, api_docs=False), KEYS[0]) as c:
        assert (await c.get("/docs")).status_code == 404
        assert (await c.get("/openapi.json")).status_code == 404


@pytest.mark.asyncio
async def test_health_tells_a_caller_without_a_key_nothing_more(rag: HybridRAG) -> None:
    app = create_app(rag, api_keys=KEYS)
    async with _client(app) as anon, _client(app, KEYS[0]) as alpha:
        assert (await anon.get("/health")).json() == {"status": "ok"}
        assert (await alpha.get("/health")).json() == {"status": "ok", "documents": 3}
        rag.close()  # the store fails from now on
        down = await anon.get("/health")
        assert down.status_code == 503 and down.json() == {"status": "error"}
        told = await alpha.get("/health")
        assert told.status_code == 503 and "closed" in told.json()["detail"]


async def _upload(c: httpx.AsyncClient, name: str, data: bytes, **params: str) -> dict[str, Any]:
    r = await c.post("/documents", files={"files": (name, data)}, params=params)
    assert r.status_code == 202, r.text
    for _ in range(600):
        job: dict[str, Any] = (await c.get(r.json()["status_url"])).json()
        if job["status"] == "done":
            return job
        await asyncio.sleep(0.05)
    raise AssertionError("upload job did not finish")


@pytest.mark.asyncio
async def test_uploads_from_different_clients_never_replace_silently(rag: HybridRAG) -> None:
    app = create_app(rag, api_keys=KEYS)
    mine = pdf_bytes(sample_text("examplon-solvent-99").split("\n\n"))
    theirs = pdf_bytes(sample_text("examplon-solvent-99").replace("-18 °C", "40 °C").split("\n\n"))
    async with _client(app, KEYS[0]) as alpha, _client(app, KEYS[1]) as beta:
        first = await _upload(alpha, "shared-name.pdf", mine)
        assert first["files"][0]["status"] == "ingested"
        clash = (await _upload(beta, "shared-name.pdf", theirs))["files"][0]
        assert clash["status"] == "failed" and "DocumentExistsError" in clash["error"]
        assert "replace=true" in clash["error"]
        served = (await alpha.post("/ask", json={"question": Q, "docs": ["shared-name"]})).json()
        assert "-18 °C" in served["text"]  # alpha's document is untouched
        taken = (await _upload(beta, "shared-name.pdf", theirs, replace="true"))["files"][0]
        fingerprint = hashlib.sha256(KEYS[0].encode()).hexdigest()[:8]
        assert taken["status"] == "replaced"
        assert f"uploaded by key {fingerprint}" in taken["replaced"]
        again = await _upload(alpha, "shared-name.pdf", theirs)  # the same bytes: skipped
        assert again["files"][0]["status"] == "skipped"
