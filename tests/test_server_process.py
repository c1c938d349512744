"""`hybrid-rag serve` as a real uvicorn process on loopback, under concurrent uploads and asks."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("uvicorn", reason="needs the [server] extra")

import httpx

FLASH = "What is the flash point of Examplon Solvent 99%?"
KEY = "test-key-1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "HYBRID_RAG_API_KEYS": KEY}
    cmd = [
        sys.executable,
        "-m",
        "hybrid_rag.cli",
        "serve",
        "--store",
        str(tmp_path / "store"),
        "--port",
        str(port),
        "--embedder",
        "hashing",
    ]
    proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""


async def _job(c: httpx.AsyncClient, path: Path) -> dict[str, Any]:
    r = await c.post("/documents", files={"files": (path.name, path.read_bytes())})
    assert r.status_code == 202, r.text
    for _ in range(600):
        job: dict[str, Any] = (await c.get(r.json()["status_url"])).json()
        if job["status"] == "done":
            return job
        await asyncio.sleep(0.1)
    raise AssertionError("upload job did not finish")


async def _ask(c: httpx.AsyncClient, question: str) -> httpx.Response:
    return await c.post("/ask", json={"question": question})


def test_concurrent_uploads_and_asks(server: str, sample_paths: list[Path]) -> None:
    async def scenario() -> None:
        auth = {"Authorization": f"Bearer {KEY}"}
        async with httpx.AsyncClient(base_url=server, headers=auth, timeout=60) as c:
            assert (await c.get("/documents")).json() == []
            # uploads and asks at the same time: asks see some or none of the sheets, never fail
            results = await asyncio.gather(
                *(_job(c, p) for p in sample_paths), *(_ask(c, FLASH) for _ in range(4))
            )
            jobs, early = results[: len(sample_paths)], results[len(sample_paths) :]
            assert all(isinstance(r, httpx.Response) and r.status_code == 200 for r in early)
            assert [j["files"][0]["status"] for j in jobs] == ["ingested"] * len(sample_paths)
            answers = await asyncio.gather(*(_ask(c, FLASH) for _ in range(8)))
            assert all(r.status_code == 200 and "-18" in r.json()["text"] for r in answers)
            metrics = (await c.get("/metrics")).text
            assert "hybrid_rag_documents 3.0" in metrics
            assert 'hybrid_rag_asks_total{mode="hybrid",route="ask"} 12.0' in metrics
            assert (await c.get("/health")).json() == {"status": "ok", "documents": 3}
        async with httpx.AsyncClient(base_url=server) as anon:
            assert (await anon.get("/documents")).status_code == 401
            assert (await anon.get("/health")).json() == {"status": "ok"}  # nothing more

    asyncio.run(scenario())
