"""Two processes on one store: the second is refused at once and corrupts nothing.

Issue 12's run: a second process's write failed with ``UNIQUE constraint failed`` after
it had already written into the shared vector file (23 of 704 vectors no longer matched
their chunks). Now the holder keeps an OS lock; the other process gets
``StoreLockedError`` before it reads or writes, and every vector still matches its chunk.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from hybrid_rag import HybridRAG, StoreLockedError
from hybrid_rag.samples import sample_pdfs

_HOLDER = """
import sys
from hybrid_rag import HybridRAG
rag = HybridRAG(sys.argv[1], embedder="hashing")
rag.ingest(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
rag.close()
"""

_INTRUDER = """
import sys
from hybrid_rag import HybridRAG, StoreLockedError
rag = HybridRAG(sys.argv[1], embedder="hashing")
try:
    rag.ingest(sys.argv[2])
except StoreLockedError as exc:
    print("locked:", exc.pid, flush=True)
    sys.exit(3)
sys.exit(0)
"""


def _vectors_match_chunks(rag: HybridRAG) -> int:
    """Count chunks whose stored vector is the embedding of their own text."""
    matched = 0
    for doc in rag.vectors.doc_ids():
        for chunk in rag.vectors.chunks(doc):
            vector = asyncio.run(rag.embedder.embed_documents([chunk.text]))[0]
            best = rag.vectors.search(vector, k=1, doc_ids=[doc])[0]
            matched += best.chunk.chunk_id == chunk.chunk_id and best.score > 0.999
    return matched


def test_second_process_is_refused_and_the_first_keeps_its_data(tmp_path: Path) -> None:
    first, second = sample_pdfs(tmp_path / "pdfs")[:2]
    store = tmp_path / "store"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(store), str(first)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        intruder = subprocess.run(
            [sys.executable, "-c", _INTRUDER, str(store), str(second)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert intruder.returncode == 3, intruder.stderr[-2000:]
        assert intruder.stdout.strip() == f"locked: {holder.pid}"
        in_process = HybridRAG(store, embedder="hashing")  # a second handle here, too
        with pytest.raises(StoreLockedError):
            in_process.ask("What is the flash point?")
        in_process.close()
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=60) == 0
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
    with HybridRAG(store, embedder="hashing") as rag:
        assert [d.doc_id for d in rag.documents()] == [first.stem]
        chunks = len(rag.vectors.chunks(first.stem))
        assert chunks > 0
        assert _vectors_match_chunks(rag) == chunks
