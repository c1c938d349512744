"""Two processes on one store: the second is refused at once and corrupts nothing, and a
reader beside the writer is told exactly what holds the store.

Issue 12's run: a second process's write failed with ``UNIQUE constraint failed`` after
it had already written into the shared vector file (23 of 704 vectors no longer matched
their chunks). Now the holder keeps an OS lock; the other process gets
``StoreLockedError`` before it reads or writes, and every vector still matches its chunk.
"""

from __future__ import annotations

import asyncio
import json
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


# -- readers beside a writer (issue 19) ----------------------------------------------------

_SERVICE_LIKE = """
import sys
from hybrid_rag import HybridRAG
from hybrid_rag.stores._lock import describe_holder
if sys.argv[3] == "service":
    describe_holder("the hybrid-rag service at http://127.0.0.1:8765 (POST /ask)")
rag = HybridRAG(sys.argv[1], embedder="hashing")
rag.ingest(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
rag.close()
"""


def _holding(store: Path, pdf: Path, kind: str) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", _SERVICE_LIKE, str(store), str(pdf), kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
    return holder


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hybrid_rag.cli", *args], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("kind", ["service", "script"])
def test_the_cli_beside_a_writer_reads_the_catalog_and_says_what_holds_the_store(
    kind: str, tmp_path: Path
) -> None:
    """Issue 19: while `hybrid-rag serve` ran, `docs` and `ask` failed with a hint about
    the embedder. Now `docs` reads the catalog beside the writer, and `ask` says exactly
    what holds the store and what to do."""
    pdf = sample_pdfs(tmp_path / "pdfs")[0]
    store = tmp_path / "store"
    holder = _holding(store, pdf, kind)
    try:
        docs = _cli("docs", "--store", str(store), "--json")
        assert docs.returncode == 0, docs.stderr
        assert [d["doc_id"] for d in json.loads(docs.stdout)] == [pdf.stem]
        assert "read beside the writer" in docs.stderr
        ask = _cli("ask", "What is the flash point?", "--store", str(store))
        assert ask.returncode == 1
        said = " ".join(ask.stderr.split())
        assert f"pid {holder.pid}" in said and "-c" in said  # its command line
        if kind == "service":
            assert "use the hybrid-rag service at http://127.0.0.1:8765" in said
        else:
            assert "stop that process" in said
        hint = said[said.index("hint:") :]
        assert "embedder" not in hint and "what holds the store" in hint
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=60)


def test_recreating_the_facade_in_a_notebook_just_works(tmp_path: Path) -> None:
    """Re-running a cell `rag = HybridRAG(path)` without closing the previous one."""
    pdfs = sample_pdfs(tmp_path / "pdfs")
    answers = []
    for pdf in pdfs:
        rag = HybridRAG(tmp_path / "store", embedder="hashing")  # the old one is not closed
        rag.ingest(pdf)
        answers.append(rag.ask("What is the flash point?", docs=[pdf.stem]).text)
    assert all(answers) and [d.doc_id for d in rag.documents()] == sorted(p.stem for p in pdfs)
    rag.close()
