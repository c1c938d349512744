"""The offline (no-LLM) reader, driven by the ontology: ``extract_offline``.

For every datatype property the ontology lists labels and alternative labels (in every
language it gives: "Invoice number", "Factuurnummer", "Rechnungsnr."). A line that
starts with one of them (case, spacing and punctuation ignored) yields a fact whose value
is the rest of the line, or the next line when the label stands alone; a column of
labels takes the values that follow in order; a table whose header names properties
gives the values in its rows; procedures are read as whole paragraphs; numbered sections
bound to properties are followed. Values are typed by the property's value kind
(numbers in their unit or with their currency, dates, identifiers). A ``PackReader``
adds what only one kind of document prints (the SDS pack's hazard classes).

Every fact carries a ``quote`` that is an exact substring of its page's text.
Extraction is linear in the text. The modules of this package, one job each:
``_labels`` (the compiled ontology), ``_values`` (typed values), ``_scan`` (the page
scan), ``_tables``, ``_parts`` (line items), ``_layout`` (a second reading of a short
PDF's laid-out text for what the plain reading missed), ``_names`` (the subject),
``_derive`` (values read from others, chunk ids), ``pack`` (the seam).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading._derive import (
    _derive,
    _found_by_pattern,
    _in_currency,
    _printed_currency,
    _with_chunks,
)
from hybrid_rag.ingest.reading._labels import _compile
from hybrid_rag.ingest.reading._layout import fill_from_layout
from hybrid_rag.ingest.reading._names import _names, name_fact
from hybrid_rag.ingest.reading._parts import settle_subject_columns
from hybrid_rag.ingest.reading._scan import _scan_page
from hybrid_rag.ingest.reading._state import _State
from hybrid_rag.ingest.reading._values import is_unavailable, parse_quantity
from hybrid_rag.ingest.reading.pack import BasePackReader, PackReader, Reading, quote_of
from hybrid_rag.types import DocumentModel, Extraction, OntologyMatching

if TYPE_CHECKING:
    from hybrid_rag.models import Chunk, Page
    from hybrid_rag.types import Ontology

__all__ = [
    "NO_NAME",
    "BasePackReader",
    "PackReader",
    "Reading",
    "extract_offline",
    "is_unavailable",
    "parse_quantity",
    "quote_of",
]


NO_NAME = "no name found for the document's subject"
"""How the warning starts when the subject's name came from the file name."""


def extract_offline(
    pages: Sequence[Page],
    *,
    ontology: Ontology,
    chunks: Sequence[Chunk] = (),
    source_name: str | None = None,
    reader: PackReader | None = None,
) -> Extraction:
    """Extract facts from a document's pages without an LLM.

    Args:
        pages: the document's pages (1-based numbers, their text).
        ontology: the ontology whose labels drive extraction.
        chunks: the document's chunks; each fact gets the chunk covering its quote.
        source_name: file name, for the subject's name when the document gives none.
        reader: reading only these documents need; default: the bundled pack's reader
            when ``ontology`` is a bundled pack's (``hybrid_rag.packs.reader_for``).
            ``BasePackReader()`` reads with none.

    Returns:
        The subject's name, its aliases, and the facts, in page order.
    """
    if reader is None:
        from hybrid_rag.packs import reader_for

        reader = reader_for(ontology)
    state = _State(_compile(ontology), pack=reader)
    for page in pages:
        _scan_page(state, page)
    settle_subject_columns(state)
    _derive(state)
    fill_from_layout(state, pages)
    _found_by_pattern(state, pages)
    _printed_currency(state, pages)
    _in_currency(state)
    found = state.result()
    model = ontology.document_model() if isinstance(ontology, OntologyMatching) else None
    model = model or DocumentModel()
    subject, aliases, fallback = _names(pages, found, source_name, model, reader)
    warnings: list[str] = []
    if fallback:
        warnings.append(f"{NO_NAME}; using {subject!r}")
    if model.naming and (named := name_fact(subject, pages, found, model.naming[0])):
        found.append(named)  # a name from the file name too, where a line prints it
    if not found:
        warnings.append("no facts found")
    facts = _with_chunks(found, pages, chunks)
    return Extraction(
        subject=subject, aliases=aliases, facts=tuple(facts), warnings=tuple(warnings)
    )
