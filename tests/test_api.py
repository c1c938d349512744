"""The public surface: pinned ``__all__``, a light import, JSON round-trips of the models."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime

import hybrid_rag
from hybrid_rag import (
    Answer,
    ChainError,
    DocumentInfo,
    Evidence,
    Fact,
    IngestReport,
    Passage,
    SparqlAttempt,
    Usage,
)

EXPECTED_ALL = {
    "Answer",
    "AnswerComposer",
    "Extractor",
    "OntologyMatching",
    "PreparedDocument",
    "QuestionRouter",
    "StreamDelta",
    "Catalog",
    "ChainError",
    "ChatMessage",
    "Chunk",
    "Completion",
    "ConfigurationError",
    "DamagedStoreError",
    "DiskFullError",
    "DocumentError",
    "DocumentExistsError",
    "DocumentInfo",
    "DocumentList",
    "DocumentNotFoundError",
    "DocumentTooLargeError",
    "Embedder",
    "EmptyDocumentError",
    "EncryptedDocumentError",
    "Evidence",
    "Fact",
    "GraphStore",
    "HybridRAG",
    "HybridRAGError",
    "IngestReport",
    "InputError",
    "InvalidDocIdError",
    "LLMError",
    "LLMProvider",
    "NameReading",
    "OcrOptions",
    "OcrUnavailableError",
    "Ontology",
    "OntologyError",
    "Passage",
    "SparqlAttempt",
    "SparqlResult",
    "SparqlValidationError",
    "StoreError",
    "StoreLockedError",
    "Term",
    "UnsupportedFormatError",
    "Usage",
    "VectorHit",
    "VectorStore",
    "__version__",
}


def test_all_is_pinned() -> None:
    assert set(hybrid_rag.__all__) == EXPECTED_ALL
    for name in hybrid_rag.__all__:
        assert hasattr(hybrid_rag, name), name


def test_import_is_light() -> None:
    code = (
        "import sys, hybrid_rag\n"
        "heavy = ['torch', 'sentence_transformers', 'rdflib', 'pypdf', 'pyoxigraph', 'bm25s',"
        " 'usearch', 'tantivy', 'openai', 'gen_ai_hub', 'hdbcli', 'numpy']\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _evidence() -> Evidence:
    return Evidence(
        doc_id="acetone",
        page=4,
        chunk_id="acetone#p4c1",
        quote='Flash Point -20 °C / -4 °F (Closed cup) "quoted"\n',
    )


def test_answer_round_trips_through_json() -> None:
    fact = Fact(
        doc_id="acetone",
        subject="Acetone, HPLC Grade",
        subject_iri="http://x/p",
        predicate="flashPoint",
        predicate_label="flash point",
        value="-20 °C",
        number=-20.0,
        unit="°C",
        evidence=_evidence(),
    )
    passage = Passage(
        doc_id="acetone",
        page=4,
        chunk_id="acetone#p4c1",
        text="Flash Point -20 °C",
        score=0.03,
        ranks={"dense": 1, "bm25": 2},
    )
    answer = Answer(
        question="flash point?",
        text="-20 °C [acetone p.4]",
        sources=["kg", "vector"],
        facts=[fact],
        passages=[passage],
        sparql=[SparqlAttempt(query="SELECT * {}", origin="template", rows=1)],
        errors=[ChainError(chain="vector", kind="timeout", message="slow")],
        usage=Usage(llm_calls=1, prompt_tokens=10),
        timings={"total_ms": 1.5},
        scope=["acetone"],
        citations=[_evidence()],
    )
    assert Answer.model_validate_json(answer.model_dump_json()) == answer


def test_reports_round_trip_and_are_frozen() -> None:
    rep = IngestReport(
        doc_id="a",
        source="a.pdf",
        status="replaced",
        content_hash="ab",
        pages=2,
        chunks=3,
        triples=40,
        warnings=["w"],
        timings={"parse_ms": 1.0},
    )
    assert IngestReport.model_validate_json(rep.model_dump_json()) == rep
    now = datetime.now(UTC)
    info = DocumentInfo(
        doc_id="a",
        source="a.pdf",
        content_hash="ab",
        pages=1,
        chunks=1,
        triples=1,
        title="A",
        aliases=["B"],
        created_at=now,
        updated_at=now,
    )
    assert DocumentInfo.model_validate_json(info.model_dump_json()) == info
    try:
        rep.status = "skipped"  # type: ignore[misc]
    except Exception as exc:  # pydantic raises ValidationError for frozen models
        assert "frozen" in str(exc)
    else:
        raise AssertionError("IngestReport is mutable")


def test_usage_adds() -> None:
    total = Usage(llm_calls=1, embedding_calls=2) + Usage(llm_calls=2, prompt_tokens=5)
    assert (total.llm_calls, total.embedding_calls, total.prompt_tokens) == (3, 2, 5)
