"""Extractors: the offline (no-LLM) one, and the checks every extraction passes.

``OfflineExtractor`` is the default ``Extractor``: the
ontology's labels drive pattern extraction (``extract_offline``).
``checked_extraction`` enforces the seam's rules on any extractor's output before the
pipeline builds triples from it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import PurePath

from hybrid_rag.errors import OntologyError
from hybrid_rag.ingest.extract import ExtractedFact, Extraction, extract_offline
from hybrid_rag.models import PreparedDocument
from hybrid_rag.protocols import Ontology

__all__ = ["OfflineExtractor", "checked_extraction"]


class OfflineExtractor:
    """Ontology-driven pattern extraction: deterministic, offline, CPU only.

    Values printed next to a property's label (or alternative label) become facts with
    their verbatim quote and page; quantities are parsed into number + unit; "No
    information available" is recorded as ``unavailable``. The ingest pipeline runs it in
    its parse worker (a process when ingesting batches), so it costs no extra hop.
    """

    name = "offline"

    async def extract(self, document: PreparedDocument, *, ontology: Ontology) -> Extraction:
        """The product and facts of ``document`` (CPU-bound; call from a worker thread)."""
        return self.extract_sync(document, ontology=ontology)

    def extract_sync(self, document: PreparedDocument, *, ontology: Ontology) -> Extraction:
        """``extract`` without an event loop."""
        return extract_offline(
            document.pages, ontology=ontology, chunks=document.chunks, source_name=document.name
        )

    def __repr__(self) -> str:
        return "OfflineExtractor()"


def checked_extraction(
    extraction: Extraction, document: PreparedDocument, *, ontology: Ontology
) -> Extraction:
    """``extraction`` without the facts the ``Extractor`` rules forbid.

    A fact is dropped (and counted in ``warnings``) when its property is not in the
    ontology, its page is not a page of the document, its quote is not an exact substring
    of that page's text, or its ``chunk_id`` names no chunk of that page (the chunk id is
    then cleared rather than the fact dropped).
    """
    pages = {p.number: p.text for p in document.pages}
    chunks = {c.chunk_id: c.page for c in document.chunks}
    kept: list[ExtractedFact] = []
    dropped: dict[str, int] = {}
    for f in extraction.facts:
        problem = _problem(f, pages, ontology)
        if problem is not None:
            dropped[problem] = dropped.get(problem, 0) + 1
            continue
        if f.chunk_id is not None and chunks.get(f.chunk_id) != f.page:
            f = replace(f, chunk_id=None)
        kept.append(f)
    subject = extraction.subject.strip() or PurePath(document.name).stem or document.doc_id
    if not dropped and subject == extraction.subject:
        return extraction
    notes = [f"dropped {n} fact(s): {why}" for why, n in sorted(dropped.items())]
    return replace(
        extraction,
        subject=subject,
        facts=tuple(kept),
        warnings=(*extraction.warnings, *notes),
    )


def _problem(f: ExtractedFact, pages: dict[int, str], ontology: Ontology) -> str | None:
    try:
        ontology.property(f.prop)
    except OntologyError:
        return "property not in the ontology"
    text = pages.get(f.page)
    if text is None:
        return "page not in the document"
    if not f.quote or f.quote not in text:
        return "quote not found on its page"
    return None
