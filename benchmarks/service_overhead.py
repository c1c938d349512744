"""What the HTTP service adds to a question: ``aask`` in process vs ``POST /ask`` on loopback.

    python benchmarks/service_overhead.py [--corpus ../shared/corpus/sds/laballey] [--asks 200]

Asks the questions directly (``rag.ask`` on an on-disk store), then starts
``hybrid-rag serve`` (uvicorn) on a free loopback port over another on-disk store, uploads
the documents through ``POST /documents`` (timing upload -> job done) and asks the same
questions over HTTP, one at a time and then all at once. Without
``--corpus`` it uses the shipped sample sheets. Needs the ``[server]`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

QUESTIONS = [
    "What is the flash point of Examplon Solvent 99%?",
    "What should I do if Samplex Acid Descaler gets into my eyes?",
    "What is the pH of Demoline Glass Cleaner?",
]


def _ms(values: list[float]) -> dict[str, float]:
    values = sorted(values)
    return {
        "p50_ms": round(statistics.median(values) * 1000, 2),
        "p95_ms": round(values[int(0.95 * (len(values) - 1))] * 1000, 2),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _upload(c: httpx.AsyncClient, files: list[Path]) -> float:
    t0 = time.perf_counter()
    parts = [("files", (f.name, f.read_bytes())) for f in files]
    job = (await c.post("/documents", files=parts)).json()
    while (await c.get(job["status_url"])).json()["status"] != "done":
        await asyncio.sleep(0.05)
    return time.perf_counter() - t0


async def _timed(c: httpx.AsyncClient, q: str) -> float:
    t0 = time.perf_counter()
    r = await c.post("/ask", json={"question": q})
    r.raise_for_status()
    return time.perf_counter() - t0


async def _over_http(url: str, files: list[Path], asks: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=120) as c:
        upload_s = await _upload(c, files)
        serial = [await _timed(c, QUESTIONS[i % 3]) for i in range(asks)]
        t0 = time.perf_counter()
        burst = await asyncio.gather(*(_timed(c, QUESTIONS[i % 3]) for i in range(asks)))
        wall = time.perf_counter() - t0
    return {
        "upload_to_done_s": round(upload_s, 2),
        "http_serial": _ms(serial),
        "http_concurrent": {**_ms(list(burst)), "asks_per_s": round(asks / wall, 1)},
    }


def _direct(files: list[Path], asks: int, store: Path) -> dict[str, float]:
    from hybrid_rag import HybridRAG

    with HybridRAG(store, embedder="hashing") as rag:
        rag.ingest_many(files)
        times = []
        for i in range(asks):
            t0 = time.perf_counter()
            rag.ask(QUESTIONS[i % 3])
            times.append(time.perf_counter() - t0)
    return _ms(times)


async def _in_process(files: list[Path], asks: int, store: Path) -> dict[str, Any]:
    """``aask`` and ``POST /ask`` through the ASGI transport, in one event loop."""
    from hybrid_rag import HybridRAG
    from hybrid_rag.server import create_app

    async with HybridRAG(store, embedder="hashing") as rag:
        await rag.aingest_many(files)
        transport = httpx.ASGITransport(app=create_app(rag, api_keys=[]))
        async with httpx.AsyncClient(transport=transport, base_url="http://asgi") as c:
            via_app = [await _timed(c, QUESTIONS[i % 3]) for i in range(asks)]
        direct = []
        for i in range(asks):
            t0 = time.perf_counter()
            await rag.aask(QUESTIONS[i % 3])
            direct.append(time.perf_counter() - t0)
    return {"aask_in_loop": _ms(direct), "asgi_in_process": _ms(via_app)}


def _serve(store: Path, port: int) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "hybrid_rag.cli", "serve", "--store", str(store)]
    cmd += ["--port", str(port), "--embedder", "hashing"]
    env = {k: v for k, v in os.environ.items() if k != "HYBRID_RAG_API_KEYS"}
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).raise_for_status()
            return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("the service did not start")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--corpus", type=Path, help="folder of PDFs (default: the shipped samples)")
    p.add_argument("--asks", type=int, default=200)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/service_overhead.json"))
    a = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hrag_bench_"))
    if a.corpus is None:
        from hybrid_rag.samples import sample_pdfs

        files = sample_pdfs(tmp / "samples")
    else:
        files = sorted(a.corpus.glob("*.pdf"))
    direct = _direct(files, a.asks, tmp / "direct")
    in_process = asyncio.run(_in_process(files, a.asks, tmp / "asgi"))
    port = _free_port()
    proc = _serve(tmp / "store", port)
    try:
        http = asyncio.run(_over_http(f"http://127.0.0.1:{port}", files, a.asks))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    load = [round(x, 1) for x in os.getloadavg()]
    result = {"documents": len(files), "asks": a.asks, "load_avg": load, "direct_serial": direct}
    result.update(in_process)
    result.update(http)
    a.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
