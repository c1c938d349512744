"""Embedding calls for 1,000 chunks, and on re-ingest, against a loopback OpenAI server.

The real ``openai`` SDK talks HTTP to :class:`hybrid_rag.testing.llm_server.FakeLLMServer`
(a fake model server on 127.0.0.1); calls are counted on the server side. Rows:

* ``seed``: one request per chunk (``batch_size=1``), as the original pipeline did.
* ``ours``: :class:`~hybrid_rag.providers.OpenAIEmbedder` defaults (batches of 128).
* ``re-embed``: a new embedder (a new process would do the same) on the same cache
  directory: every vector comes from the cache.
* ``ingest`` / ``re-ingest``: ``HybridRAG.ingest_many`` over generated text documents
  (about 1,000 chunks) with the embedder, then the same documents into a NEW store on
  the same cache (the content-hash skip cannot help there; only the cache can).

Targets (issue 8): <= 16 embedding calls for 1,000 chunks (seed: 1,000); 0 on re-ingest.

Usage::

    python benchmarks/llm_providers.py [--chunks 1000]

Writes ``benchmarks/results/llm_providers.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from hybrid_rag import HybridRAG
from hybrid_rag.providers import OpenAIEmbedder
from hybrid_rag.testing.llm_server import FakeLLMServer

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "llm_providers.json"
DIM = 64
_SENTENCE = (
    "Section {s}. Product {d} has a flash point of {t} °C and must be stored below {u} °C, "
    "away from ignition sources; wear nitrile gloves (EN 374) and eye protection."
)


def _texts(n: int) -> list[str]:
    return [_SENTENCE.format(s=i % 16 + 1, d=i, t=-20 + i % 50, u=25 + i % 10) for i in range(n)]


def _embedder(server: FakeLLMServer, cache: Path | None, batch_size: int = 128) -> Any:
    return OpenAIEmbedder(
        "bench-embed",
        base_url=server.openai_url,
        dimensions=DIM,
        batch_size=batch_size,
        cache=cache,
    )


def _embed_row(server: FakeLLMServer, name: str, texts: list[str], emb: Any) -> dict[str, Any]:
    before = len(server.calls("/embeddings"))
    start = time.perf_counter()
    anyio.run(lambda: emb.embed_documents(texts))
    return {
        "row": name,
        "texts": len(texts),
        "http_calls": len(server.calls("/embeddings")) - before,
        "cache_hits": emb.usage.cache_hits,
        "seconds": round(time.perf_counter() - start, 3),
    }


def _write_docs(folder: Path, chunks: int) -> list[Path]:
    docs = []
    per_doc = max(1, chunks * 3 // 10)  # about three sentences per chunk
    for d in range(10):
        lines = [
            f"Safety data sheet {d}, paragraph {i}. " + t for i, t in enumerate(_texts(per_doc))
        ]
        path = folder / f"doc{d}.md"
        path.write_text("\n\n".join(lines), encoding="utf-8")
        docs.append(path)
    return docs


def _ingest_row(
    server: FakeLLMServer, name: str, store: Path, cache: Path, docs: list[Path]
) -> dict[str, Any]:
    before = len(server.calls("/embeddings"))
    start = time.perf_counter()
    with HybridRAG(path=store, embedder=_embedder(server, cache)) as rag:
        reports = rag.ingest_many([str(p) for p in docs])
    return {
        "row": name,
        "texts": sum(r.chunks for r in reports),
        "http_calls": len(server.calls("/embeddings")) - before,
        "seconds": round(time.perf_counter() - start, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--chunks", type=int, default=1000)
    args = parser.parse_args()
    texts = _texts(args.chunks)
    rows = []
    with FakeLLMServer(dim=DIM) as server, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        rows.append(_embed_row(server, "seed (batch_size=1)", texts, _embedder(server, None, 1)))
        rows.append(_embed_row(server, "ours", texts, _embedder(server, root / "c1")))
        rows.append(_embed_row(server, "re-embed (cache)", texts, _embedder(server, root / "c1")))
        docs = _write_docs(root, args.chunks)
        rows.append(_ingest_row(server, "ingest", root / "s1", root / "c2", docs))
        rows.append(_ingest_row(server, "re-ingest, new store", root / "s2", root / "c2", docs))
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} python {platform.python_version()} {platform.system()}",
        "rows": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for row in rows:
        print(
            f"{row['row']:<24} texts={row['texts']:>5} calls={row['http_calls']:>5} "
            f"{row['seconds']:>7.2f}s"
        )


if __name__ == "__main__":
    main()
