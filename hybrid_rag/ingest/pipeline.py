"""The CPU-bound half of ingest as one pure function: parse -> chunk -> extract -> triples.

Kept free of stores and event loops so it can run in a worker thread or process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hybrid_rag.ingest.chunk import chunk_pages
from hybrid_rag.ingest.extract import Extraction, extract_offline
from hybrid_rag.ingest.load import LoadedDocument, parse_document
from hybrid_rag.ingest.triples import build_triples
from hybrid_rag.models import Chunk
from hybrid_rag.protocols import Ontology
from hybrid_rag.rdf import Triple

__all__ = ["Prepared", "prepare", "prepare_in_worker"]


@dataclass(slots=True)
class Prepared:
    """A parsed, chunked and extracted document, ready to be written."""

    doc_id: str
    document: LoadedDocument
    chunks: list[Chunk]
    extraction: Extraction
    triples: list[Triple]
    timings: dict[str, float] = field(default_factory=dict)


def prepare(
    data: bytes,
    *,
    name: str,
    source: str,
    doc_id: str,
    ontology: Ontology,
    chunk_size: int,
    chunk_overlap: int,
) -> Prepared:
    """Parse, chunk and extract one document (no I/O; raises DocumentError on bad input)."""
    t0 = time.perf_counter()
    doc = parse_document(data, name=name, source=source)
    t1 = time.perf_counter()
    chunks = chunk_pages(doc.pages, doc_id=doc_id, size=chunk_size, overlap=chunk_overlap)
    t2 = time.perf_counter()
    extraction = extract_offline(doc.pages, ontology=ontology, chunks=chunks, source_name=name)
    triples = build_triples(doc_id, extraction, ontology=ontology)
    t3 = time.perf_counter()
    timings = {"parse_ms": _ms(t1 - t0), "chunk_ms": _ms(t2 - t1), "extract_ms": _ms(t3 - t2)}
    return Prepared(doc_id, doc, chunks, extraction, triples, timings)


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


_WORKER_ONTOLOGIES: dict[str, Ontology] = {}


def prepare_in_worker(
    data: bytes,
    name: str,
    source: str,
    doc_id: str,
    ontology_spec: str,
    chunk_size: int,
    chunk_overlap: int,
) -> Prepared:
    """:func:`prepare` for a worker process: the ontology comes as its spec, loaded once."""
    from hybrid_rag.ontology import load_ontology

    ontology = _WORKER_ONTOLOGIES.get(ontology_spec)
    if ontology is None:
        ontology = _WORKER_ONTOLOGIES[ontology_spec] = load_ontology(ontology_spec)
    return prepare(
        data,
        name=name,
        source=source,
        doc_id=doc_id,
        ontology=ontology,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
    )
