"""Malformed input to the public API: a typed error naming the problem, stores unchanged.

One store holds the three sample sheets; every case calls the facade with something
wrong and must raise a :class:`HybridRAGError` (never a bare ``TypeError``, a parser's
traceback or an ``ExceptionGroup``), after which the catalog, the graph and the vectors
hold exactly what they held before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hybrid_rag import HybridRAG, HybridRAGError
from hybrid_rag.samples import sample_pdfs

Case = Callable[[HybridRAG, Path], object]
Q = "What is the flash point?"


def _file(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


CASES: list[tuple[str, Case] | Any] = [
    # -- ask -----------------------------------------------------------------------------
    ("ask-question-empty", lambda r, t: r.ask("")),
    ("ask-question-blank", lambda r, t: r.ask("  \n\t ")),
    ("ask-docs-unknown", lambda r, t: r.ask(Q, docs=["no-such-doc"])),
    ("ask-docs-invalid-id", lambda r, t: r.ask(Q, docs=["../etc/passwd"])),
    ("ask-docs-id-with-space", lambda r, t: r.ask(Q, docs=["a b"])),
    ("ask-docs-id-too-long", lambda r, t: r.ask(Q, docs=["x" * 129])),
    ("ask-docs-a-string", lambda r, t: r.ask(Q, docs="samplex-acid-descaler-10")),
    ("ask-docs-unknown-in-generator", lambda r, t: r.ask(Q, docs=(d for d in ["nope"]))),
    ("ask-question-none", lambda r, t: r.ask(None)),
    ("ask-question-int", lambda r, t: r.ask(123)),
    ("ask-question-bytes", lambda r, t: r.ask(b"flash point")),
    ("ask-question-list", lambda r, t: r.ask([Q])),
    pytest.param("ask-docs-int", lambda r, t: r.ask(Q, docs=123)),
    ("ask-docs-int-entry", lambda r, t: r.ask(Q, docs=[123])),
    ("ask-docs-none-entry", lambda r, t: r.ask(Q, docs=[None])),
    ("ask-mode-unknown", lambda r, t: r.ask(Q, mode="sql")),
    ("ask-mode-none", lambda r, t: r.ask(Q, mode=None)),
    pytest.param("ask-top-k-zero", lambda r, t: r.ask(Q, top_k=0)),
    pytest.param("ask-top-k-negative", lambda r, t: r.ask(Q, top_k=-5)),
    pytest.param("ask-top-k-string", lambda r, t: r.ask(Q, top_k="3")),
    pytest.param("ask-top-k-float", lambda r, t: r.ask(Q, top_k=2.5)),
    pytest.param("ask-history-string", lambda r, t: r.ask(Q, history="earlier")),
    pytest.param("ask-history-ints", lambda r, t: r.ask(Q, history=[1, 2])),
    pytest.param(
        "ask-history-bad-role",
        lambda r, t: r.ask(Q, history=[("x", "y", "z")]),
    ),
    # -- ingest --------------------------------------------------------------------------
    ("ingest-missing-file", lambda r, t: r.ingest(t / "missing.pdf")),
    ("ingest-unsupported-format", lambda r, t: r.ingest(_file(t, "x.exe", b"MZ\x90\x00"))),
    ("ingest-empty-text", lambda r, t: r.ingest(_file(t, "empty.txt", b""))),
    ("ingest-blank-text", lambda r, t: r.ingest(_file(t, "blank.txt", b" \n \n"))),
    ("ingest-corrupt-pdf", lambda r, t: r.ingest(_file(t, "bad.pdf", b"%PDF-1.4 garbage"))),
    ("ingest-not-a-pdf", lambda r, t: r.ingest(_file(t, "fake.pdf", b"hello, world"))),
    ("ingest-truncated-pdf", lambda r, t: r.ingest(_truncated_pdf(t))),
    ("ingest-bytes-no-name", lambda r, t: r.ingest(b"some text")),
    ("ingest-bytes-no-extension", lambda r, t: r.ingest(b"some text", name="noext")),
    ("ingest-bytes-bad-extension", lambda r, t: r.ingest(b"MZ", name="x.exe")),
    ("ingest-doc-id-space", lambda r, t: r.ingest(_txt(t), doc_id="a b")),
    ("ingest-doc-id-empty", lambda r, t: r.ingest(_txt(t), doc_id="")),
    ("ingest-doc-id-too-long", lambda r, t: r.ingest(_txt(t), doc_id="x" * 129)),
    ("ingest-doc-id-traversal", lambda r, t: r.ingest(_txt(t), doc_id="../../etc")),
    ("ingest-doc-id-slash", lambda r, t: r.ingest(_txt(t), doc_id="a/b")),
    ("ingest-doc-id-unicode", lambda r, t: r.ingest(_txt(t), doc_id="säure")),
    ("ingest-doc-id-newline", lambda r, t: r.ingest(_txt(t), doc_id="a\nb")),
    ("ingest-doc-id-iri-break", lambda r, t: r.ingest(_txt(t), doc_id="a>b")),
    pytest.param("ingest-int", lambda r, t: r.ingest(12345)),
    pytest.param("ingest-none", lambda r, t: r.ingest(None)),
    pytest.param("ingest-dict", lambda r, t: r.ingest({"path": "x.pdf"})),
    ("ingest-doc-id-int", lambda r, t: r.ingest(_txt(t), doc_id=123)),
    pytest.param("ingest-name-int", lambda r, t: r.ingest(b"text", name=123)),
    pytest.param(  # an ExceptionGroup; issue 12 wants per-file reports like ingest_many
        "ingest-folder-one-bad-file", lambda r, t: r.ingest(_bad_folder(t))
    ),
    # -- ingest_many ---------------------------------------------------------------------
    pytest.param(  # an ExceptionGroup around the DocumentError
        "ingest-many-bad-file-raise",
        lambda r, t: r.ingest_many([_file(t, "bad2.pdf", b"%PDF-")], raise_errors=True),
    ),
    pytest.param("ingest-many-int", lambda r, t: r.ingest_many(123)),
    pytest.param(
        "ingest-many-int-entry",
        lambda r, t: r.ingest_many([123], raise_errors=True),
    ),
    pytest.param(
        "ingest-many-concurrency-zero",
        lambda r, t: r.ingest_many([], concurrency=0),
    ),
    pytest.param(
        "ingest-many-concurrency-str",
        lambda r, t: r.ingest_many([], concurrency="4"),
    ),
    pytest.param(
        "ingest-many-pair-not-bytes",
        lambda r, t: r.ingest_many([("a.txt", "not bytes")], raise_errors=True),
    ),
    # -- forget --------------------------------------------------------------------------
    ("forget-unknown", lambda r, t: r.forget("no-such-doc")),
    ("forget-invalid-id", lambda r, t: r.forget("a b")),
    ("forget-empty", lambda r, t: r.forget("")),
    ("forget-traversal", lambda r, t: r.forget("../x")),
    ("forget-none", lambda r, t: r.forget(None)),
    ("forget-int", lambda r, t: r.forget(123)),
    # -- constructor ---------------------------------------------------------------------
    ("new-top-k-zero", lambda r, t: HybridRAG(top_k=0)),
    ("new-timeout-zero", lambda r, t: HybridRAG(timeout=0)),
    ("new-chunk-size-tiny", lambda r, t: HybridRAG(chunk_size=10)),
    ("new-overlap-too-big", lambda r, t: HybridRAG(chunk_size=200, chunk_overlap=150)),
    ("new-max-threads-zero", lambda r, t: HybridRAG(max_threads=0)),
    ("new-ontology-missing", lambda r, t: HybridRAG(ontology=t / "none.ttl").ontology),
    ("new-embedder-unknown", lambda r, t: HybridRAG(embedder="no-such-embedder").embedder),
]


def _txt(tmp: Path) -> Path:
    return _file(tmp, "note.txt", b"Flash point: 12 C\n")


def _truncated_pdf(tmp: Path) -> Path:
    data = sample_pdfs(tmp / "pdf")[0].read_bytes()
    return _file(tmp, "truncated.pdf", data[: len(data) // 3])


def _bad_folder(tmp: Path) -> Path:
    folder = tmp / "folder"
    folder.mkdir()
    _file(folder, "good.txt", b"Product name: Goodex\nFlash point: 40 C\n")
    _file(folder, "bad.pdf", b"%PDF-1.4 broken")
    return folder


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HybridRAG]:
    root = tmp_path_factory.mktemp("inputs")
    with HybridRAG(root / "store", embedder="hashing") as r:
        r.ingest_many(sample_pdfs(root / "samples"), raise_errors=True)
        yield r


def _snapshot(r: HybridRAG) -> tuple[Any, ...]:
    docs = sorted((d.doc_id, d.content_hash) for d in r.documents())
    graphs = sorted((d, len(r.graph.dump(d))) for d in r.graph.doc_ids())  # type: ignore[attr-defined]
    chunks = sorted(c.chunk_id for d, _ in docs for c in r.vectors.chunks(d))
    return docs, graphs, chunks, len(r.vectors)  # type: ignore[arg-type]


def _plain(case: Any) -> tuple[str, Case]:
    return getattr(case, "values", case)  # type: ignore[no-any-return]  # a pytest.param


@pytest.mark.parametrize(("name", "call"), CASES)
def test_malformed_input_is_a_typed_error(
    name: str, call: Case, rag: HybridRAG, tmp_path: Path
) -> None:
    with pytest.raises(HybridRAGError) as info:
        call(rag, tmp_path)
    assert str(info.value).strip(), f"{name}: the error names no problem"


@pytest.mark.parametrize(("name", "call"), [_plain(c) for c in CASES])
def test_malformed_input_changes_no_store(
    name: str, call: Case, rag: HybridRAG, tmp_path: Path
) -> None:
    """Whatever happens (a typed error, not yet typed, or accepted), no store changes."""
    before = _snapshot(rag)
    with contextlib.suppress(Exception):
        call(rag, tmp_path)
    assert _snapshot(rag) == before, f"{name} changed a store"


def test_the_suite_is_large_enough() -> None:
    names = [_plain(c)[0] for c in CASES]
    assert len(names) >= 50 and len(set(names)) == len(names)
