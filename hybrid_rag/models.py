"""Pydantic models users see: answers, facts, passages, evidence, reports.

All models are immutable (``frozen``) and round-trip through JSON
(``Model.model_validate_json(m.model_dump_json()) == m``).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hybrid_rag import _display

if TYPE_CHECKING:
    from rich.console import RenderableType

__all__ = [
    "OCR_CHUNK_SUFFIX",
    "Answer",
    "ChainError",
    "ChatMessage",
    "Chunk",
    "Completion",
    "DocumentInfo",
    "DocumentList",
    "Evidence",
    "Fact",
    "IngestReport",
    "NameReading",
    "Page",
    "Passage",
    "PreparedDocument",
    "SparqlAttempt",
    "Usage",
    "is_ocr_chunk_id",
]

AskMode = Literal["hybrid", "kg", "vector"]
Abstention = Literal[
    "not_in_documents",
    "not_stated",
    "out_of_scope",
    "refused",
    "store_error",
    "timeout",
    "no_documents",
]
"""Why an answer abstained: nothing in the documents speaks to the question; the sheet
says the value is not available; the question is about something outside the scope; the
request was refused (a request to change, delete or reveal the system); a store failed;
a search was cut at the question's time budget before it was complete (what it did not
read is not called absent); or the store holds no documents at all (nothing ingested
yet, or a mistyped path)."""
Source = Literal["kg", "vector"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


OCR_CHUNK_SUFFIX = "~ocr"
"""Ends the id of every chunk cut from a page that was read by OCR
(``"scan#p3c0~ocr"``), so the flag travels with the chunk id through every store and
every piece of evidence that names the chunk, with no store schema of its own."""
_OCR_ID = re.compile(r"#p\d+c\d+" + re.escape(OCR_CHUNK_SUFFIX) + r"\Z")


def is_ocr_chunk_id(chunk_id: str | None) -> bool:
    """Whether ``chunk_id`` names a chunk of a page read by OCR."""
    return chunk_id is not None and _OCR_ID.search(chunk_id) is not None


class _ReadByOcr(_Model):
    """A model with a ``chunk_id`` and an ``ocr`` flag that follows from it when not given."""

    @model_validator(mode="before")
    @classmethod
    def _ocr_from_chunk_id(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("ocr") and is_ocr_chunk_id(data.get("chunk_id")):
            return {**data, "ocr": True}
        return data


class Usage(_Model):
    """Counters of paid or slow calls made for one ingest or one question."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    embedded_texts: int = 0
    cache_hits: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(**{k: getattr(self, k) + getattr(other, k) for k in Usage.model_fields})


class Page(_Model):
    """One page of a loaded document: its 1-based number and its extracted text.

    ``ocr`` is ``True`` when the text was read from the page image by OCR (a scanned
    page, an image file) rather than copied from the file's text: it may hold reading
    errors. ``layout`` is a second reading of the page with its printed columns kept
    apart (a short PDF's: forms, invoices, receipts), which the offline reader consults
    for what ``text`` left unpaired; it is never chunked or quoted.
    """

    number: int = Field(ge=1)
    text: str
    ocr: bool = False
    layout: str | None = None


class Chunk(_ReadByOcr):
    """A piece of one page's text. Chunks never cross pages.

    ``start``/``end`` are character offsets into that page's text, so
    ``page_text[start:end] == text``. ``section`` is the heading in force at the chunk
    (a sheet's ``SECTION n`` line, a Markdown, Word or HTML heading). ``ocr`` is ``True``
    for a chunk of a page read by OCR; its id then ends in ``OCR_CHUNK_SUFFIX``.
    """

    chunk_id: str
    doc_id: str
    page: int = Field(ge=1)
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str
    section: str | None = None
    ocr: bool = False


class Evidence(_ReadByOcr):
    """Where a statement comes from: document, 1-based page, chunk and a verbatim quote.

    ``ocr`` is ``True`` when the quote comes from a page read by OCR: it is the text as
    the OCR engine read it from the page image, not characters copied from the file.
    """

    doc_id: str
    page: int = Field(ge=1)
    chunk_id: str | None = None
    quote: str
    ocr: bool = False


class Fact(_Model):
    """One statement from the knowledge graph, with its evidence.

    ``status`` is ``"unavailable"`` when the document says the value is not available
    ("No information available", "Not determined"): that is recorded, not dropped.
    ``position`` is the statement's place in the order its extractor read the document
    (``None`` when the graph does not record it): a procedure's parts are told in it.
    """

    doc_id: str
    subject: str
    subject_iri: str
    predicate: str
    predicate_label: str
    value: str
    number: float | None = None
    unit: str | None = None
    status: Literal["stated", "unavailable"] = "stated"
    evidence: Evidence
    position: int | None = None


class PreparedDocument(_Model):
    """A parsed and chunked document: what an ``Extractor`` reads.

    ``pages`` are every page in order (1-based numbers, empty pages kept so numbers stay
    true); ``chunks`` never cross pages.
    """

    doc_id: str
    name: str
    source: str
    pages: tuple[Page, ...]
    chunks: tuple[Chunk, ...] = ()


class Passage(_ReadByOcr):
    """A retrieved chunk with its fused score and its rank in each retriever (1-based).

    ``section`` is the document section the chunk starts in, when the chunker saw one
    ("SECTION 4: First-aid measures"); ``ranks`` may hold ``"section"`` for chunks read
    from the section a procedure question asks about. ``ocr`` is ``True`` when the
    chunk's page was read by OCR.
    """

    doc_id: str
    page: int = Field(ge=1)
    chunk_id: str
    text: str
    score: float
    ranks: dict[str, int] = Field(default_factory=dict)
    section: str | None = None
    ocr: bool = False


class SparqlAttempt(_Model):
    """One SPARQL query the KG chain ran (or tried to run)."""

    query: str
    origin: Literal["template", "llm", "repair", "broadened"]
    rows: int = 0
    error: str | None = None


class NameReading(_Model):
    """How a name the question gives was read when no document in scope prints it.

    A chat model reads the name ("slaked lime") as the name it is usually listed under
    ("calcium hydroxide"); the library then links the documents whose own names or
    synonyms print that reading, with its own name matching (never a document id the
    model wrote). ``Answer.text`` says so in a sentence; this is the same for code.

    Attributes:
        said: the name as the question writes it.
        read_as: what it was read as (the model's words).
        by: who read it: ``"model"``, the LLM router.
        doc_ids: the documents whose names print ``read_as`` and that the answer is
            about; empty when none does, or when the reading is unsure (the answer then
            abstains and says why).
    """

    said: str
    read_as: str
    by: Literal["model"] = "model"
    doc_ids: list[str] = Field(default_factory=list)


class ChainError(_Model):
    """A failure of one retrieval chain (or of the routing or synthesis call), as data.

    ``kind="timeout"`` with ``chain="routing"`` or ``"synthesis"`` means the model ran out
    of the question's time budget: its call was cut (and still counts in ``Answer.usage``).
    """

    chain: Literal["kg", "vector", "synthesis", "routing"]
    kind: str
    message: str


class Answer(_Model):
    """The typed result of ``HybridRAG.ask``.

    Every statement in ``text`` is backed by ``facts`` (each with evidence) or
    ``passages``. When the answer abstains, ``abstention`` says why (code reads it) and
    ``text`` is one short sentence a person can read, or ``None`` when neither chain found
    anything to say. When a model read a name no document prints (``readings``), the
    text opens with a sentence saying how it was read.
    """

    question: str
    text: str | None
    mode: AskMode = "hybrid"
    generation: Literal["extractive", "llm"] = "extractive"
    sources: list[Source] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)
    passages: list[Passage] = Field(default_factory=list)
    sparql: list[SparqlAttempt] = Field(default_factory=list)
    errors: list[ChainError] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    timings: dict[str, float] = Field(default_factory=dict)
    scope: list[str] | None = None
    citations: list[Evidence] = Field(default_factory=list)
    abstention: Abstention | None = None
    readings: list[NameReading] = Field(default_factory=list)

    def __repr__(self) -> str:
        return _display.answer_repr(self)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        """Jupyter view: the answer, citations, then facts, passages and SPARQL folded."""
        return _display.answer_html(self)

    def __rich__(self) -> RenderableType:
        """Terminal view for ``rich`` (``rich.print(answer)``)."""
        from hybrid_rag._cli_render import answer_view

        return answer_view(self)


class IngestReport(_Model):
    """What one ingest did. ``timings`` are milliseconds per stage.

    ``status`` is ``"failed"`` (with ``error``) only in the results of ``ingest_many``,
    which reports a bad document and goes on; ``ingest`` raises instead.
    """

    doc_id: str
    source: str
    status: Literal["ingested", "skipped", "replaced", "failed"]
    content_hash: str
    pages: int = 0
    chunks: int = 0
    triples: int = 0
    facts: int = 0
    warnings: list[str] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    error: str | None = None

    def __repr__(self) -> str:
        return _display.report_repr(self)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        """Jupyter view: status, counts, warnings, timings and usage."""
        return _display.report_html(self)

    def __rich__(self) -> RenderableType:
        """Terminal view for ``rich``."""
        from hybrid_rag._cli_render import report_view

        return report_view(self)


class DocumentInfo(_Model):
    """A catalog entry: one ingested document."""

    doc_id: str
    source: str
    content_hash: str
    pages: int
    chunks: int
    triples: int
    title: str | None = None
    aliases: list[str] = Field(default_factory=list)
    created_at: datetime
    updated_at: datetime


class DocumentList(list[DocumentInfo]):
    """What ``HybridRAG.documents`` returns: a plain ``list`` of ``DocumentInfo``
    that also renders as a table in Jupyter and in ``rich``."""

    def __repr__(self) -> str:
        return _display.documents_repr(self)

    def _repr_html_(self) -> str:
        """Jupyter view: one row per document."""
        return _display.documents_html(self)

    def __rich__(self) -> RenderableType:
        """Terminal view for ``rich``."""
        from hybrid_rag._cli_render import documents_table

        return documents_table(self)


class ChatMessage(_Model):
    """One chat message sent to an ``LLMProvider``."""

    role: Literal["system", "user", "assistant"]
    content: str


class Completion(_Model):
    """An LLM response and its token counts."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    """Why the model stopped, as the back end says (``"stop"``, ``"length"`` ...), if it does."""
