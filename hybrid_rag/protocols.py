"""The seams of hybrid_rag: small protocols whose docstrings state the behaviour.

Stores are synchronous (pyoxigraph, numpy and hdbcli block); the core calls them from
worker threads through anyio with a capacity limit, so a store must tolerate calls from
several threads (one call at a time per store is NOT guaranteed). Embedders and LLM
providers are asynchronous (network-bound, they gain from concurrency).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from hybrid_rag.types import (
    ClassDef,
    DocumentModel,
    Extraction,
    Ontology,
    OntologyMatching,
    PropertyDef,
    QuestionAnalysis,
    ScopeView,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from hybrid_rag.models import ChatMessage, Chunk, Completion, DocumentInfo, PreparedDocument
    from hybrid_rag.rdf import SparqlResult, Triple

__all__ = [
    "BoundedQueries",
    "Catalog",
    "ClassDef",
    "DocumentModel",
    "Embedder",
    "Extractor",
    "GraphStore",
    "LLMProvider",
    "Ontology",
    "OntologyMatching",
    "PropertyDef",
    "QuestionRouter",
    "VectorHit",
    "VectorStore",
]


@runtime_checkable
class GraphStore(Protocol):
    """An RDF quad store holding one named graph per document.

    Contract (checked by ``hybrid_rag.testing.contracts.GraphStoreContract``):

    * **Doc ids.** Every ``doc_id`` (argument or ``scope`` entry) must match
      ``[A-Za-z0-9_.-]{1,128}`` and not be ``.`` or ``..``; anything else (including a
      non-``str``) raises ``InvalidDocIdError`` before any I/O.
    * ``graph_iri(doc_id)`` is the document's named graph IRI: distinct per document and
      ending with the doc id (typically ``graph_base + doc_id``).
    * ``replace(doc_id, triples)`` makes the document's graph hold exactly ``triples``
      (previous content gone); duplicates within ``triples`` and a second write of the
      same triples leave one copy. Other documents' graphs are untouched. Returns the
      number of distinct triples stored; an empty ``triples`` removes the graph and
      returns 0. ``triples`` must be a sequence (or set) of ``(Term, Term, Term)`` tuples
      (``Term``), else ``InputError``; a
      triple the engine cannot store (a literal subject or predicate, an invalid or
      relative IRI) raises ``StoreError``. Either way the graph
      is unchanged.
    * Terms round-trip exactly: any literal text (quotes, backslashes, newlines, control
      characters, non-ASCII, the empty string), language tags, datatypes and blank nodes.
      A plain literal comes back with ``datatype=None``; ``xsd:integer``,
      ``xsd:decimal``, ``xsd:double`` and ``xsd:boolean`` keep their datatype and
      compare, sort and aggregate as numbers in queries, across documents.
    * ``delete(doc_id)`` removes the document's graph and returns ``True``; deleting an
      absent graph is a no-op returning ``False``.
    * ``doc_ids()`` lists the documents that have a graph (any order).
    * ``query(sparql, scope=...)`` runs a read-only SELECT or ASK with the dataset set by
      the store to exactly the graphs of ``scope`` (as default graph union and as named
      graphs): ``GRAPH ?g`` ranges over the scope's graphs only, a doc id in ``scope``
      without a graph contributes nothing. ``FROM``, ``FROM NAMED`` and ``GRAPH <iri>``
      naming a graph outside the scope cannot widen it: the store either raises
      ``SparqlValidationError`` or returns nothing from that
      graph. An empty ``scope`` returns an empty result without touching the engine.
      ``scope`` must be a sequence (or set) of doc ids, not a ``str``
      (``InputError``).
    * Results are ``SparqlResult``: a SELECT has ``variables`` in
      projection order, one dict per row without the unbound variables, and
      ``boolean=None``; an ASK has ``boolean`` set and no rows.
    * Rejected before execution with ``SparqlValidationError``,
      the store unchanged: updates (``INSERT``, ``DELETE``, ``DROP``, ``CLEAR``, ``LOAD``,
      ``CREATE``, a query followed by ``; update``), ``CONSTRUCT`` and ``DESCRIBE``,
      ``SERVICE`` anywhere in the query (the message names ``SERVICE``), and a query that
      is empty, not a ``str`` or does not parse. Engine errors raise
      ``StoreError`` whose message carries the engine's text.
    * Thread-safe: queries and writes may come from several threads at once.
      ``close()`` is idempotent; other calls after it may raise ``StoreError``.
    """

    def graph_iri(self, doc_id: str) -> str:
        """The named graph IRI of a document.

        Raises:
            InvalidDocIdError: ``doc_id`` is not a valid doc id.
        """
        ...

    def replace(self, doc_id: str, triples: Sequence[Triple]) -> int:
        """Make the document's named graph hold exactly ``triples``.

        Returns:
            The number of distinct triples now in the graph.

        Raises:
            InvalidDocIdError: Bad ``doc_id``.
            InputError: ``triples`` is not a sequence of ``(Term, Term, Term)``.
            StoreError: The engine refused a triple or failed; the graph is unchanged.
        """
        ...

    def delete(self, doc_id: str) -> bool:
        """Drop the document's named graph; ``False`` when there was none."""
        ...

    def query(self, sparql: str, *, scope: Sequence[str]) -> SparqlResult:
        """Run a read-only SELECT or ASK over exactly the graphs of ``scope``.

        Raises:
            SparqlValidationError: Not a read-only SELECT/ASK, SERVICE, a graph outside
                the scope (or the store returns nothing from it), or no parse.
            InvalidDocIdError: A scope entry is not a valid doc id.
            InputError: ``scope`` is a ``str`` or not a sequence.
            StoreError: The engine failed; the message carries its text.
        """
        ...

    def doc_ids(self) -> list[str]:
        """Documents that have a named graph, in any order."""
        ...

    def close(self) -> None:
        """Release resources; idempotent. Further calls may raise StoreError."""
        ...


@runtime_checkable
class BoundedQueries(Protocol):
    """A graph store that can run a query it cannot trust to be cheap, and stop it.

    Optional: the KG chain runs LLM-written SPARQL through ``query_bounded`` when the
    store offers it (checked with ``isinstance``), else through ``GraphStore.query`` in a
    thread it abandons at the deadline (where the engine may go on working).
    """

    def query_bounded(
        self, sparql: str, *, scope: Sequence[str], timeout: float, max_rows: int
    ) -> SparqlResult:
        """``GraphStore.query``, stopped after ``timeout`` s, at most ``max_rows`` rows read.

        Raises:
            QueryTimeoutError: the time ran out; the engine's work was stopped and its
                resources freed.
            StoreError: every error ``GraphStore.query`` raises, raised the same way.
        """
        ...


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A chunk returned by a search, with the retriever's score (higher is better).

    For ``VectorStore.search`` the score is the cosine similarity of the query and
    the chunk's vector; for ``VectorStore.keyword_search`` it is the BM25 score
    (always > 0).
    """

    chunk: Chunk
    score: float


@runtime_checkable
class VectorStore(Protocol):
    """Chunks with their embeddings, searchable densely (cosine) and lexically (BM25).

    Contract (checked by ``hybrid_rag.testing.contracts.VectorStoreContract``):

    * **Writing.** ``replace(doc_id, chunks, vectors)`` makes the document hold exactly
      these chunks (old ones gone, other documents untouched) and returns how many it
      stored; writing the same chunks twice leaves one copy. ``vectors`` has one row per
      chunk (shape ``(len(chunks), dim)``); rows need not be normalised (scores are
      cosines). ``doc_id`` must be a valid doc id (``[A-Za-z0-9_.-]{1,128}``, not
      ``.``/``..``, else ``InvalidDocIdError``). Empty ``chunks`` with an empty
      ``vectors`` removes the document and returns 0.
    * **Bad writes** raise before anything is written, leaving the store unchanged:
      ``InputError`` when ``chunks`` is not a sequence of
      ``Chunk`` or ``vectors`` is not an array of numbers;
      ``StoreError`` when the row count differs from the number
      of chunks, the dimension differs from the store's (a new store takes its dimension
      from its configuration or the first write), a value is NaN or infinite, a chunk's
      ``doc_id`` is not ``doc_id``, or two chunks share a ``chunk_id``.
    * ``search(vector, k=, doc_ids=)`` returns at most ``k`` hits by descending cosine
      similarity (the score; the query need not be normalised, its length does not
      change scores). ``vector`` must be one row of finite numbers
      (``InputError`` otherwise); a length other than the
      store's dimension raises ``StoreError``. An empty store
      returns ``[]``.
    * ``keyword_search(text, k=, doc_ids=)`` ranks chunks by BM25 and returns at most
      ``k`` hits with a score > 0, best first (no match: ``[]``). Matching is
      case-insensitive after Unicode NFKC normalisation. A run of letters and digits
      joined by ``-``, ``.``, ``/`` or ``,`` is one token, so identifiers such as
      ``67-64-1``, ``UN1090`` or ``H225`` are found by their exact string, also inside a
      question (``"What is CAS 67-64-1?"``). A letter code of 1-3 letters written apart
      from its number (``un 1090``, ``H 225``) must match the joined form (``UN1090``,
      ``H225``): e.g. tokenise both chunks and queries to emit the joined token too.
      Whether the parts of a compound (``67``, ``64``) also count, stop words and
      stemming are the store's choice.
    * **Filters.** ``doc_ids`` restricts both searches to those documents: ``None`` means
      all, an empty sequence means no hits, unknown ids match nothing. It must be a
      sequence (or set) of ``str``, never a ``str`` itself
      (``InputError``).
    * **Arguments.** ``k`` must be an ``int`` >= 1 and ``text`` a ``str``, else
      ``InputError``.
    * ``delete(doc_id)`` removes the document's chunks from both searches and returns how
      many it removed (0 when unknown).
    * ``chunks(doc_id)`` returns the document's chunks, equal to those written, ordered
      by page, then start offset, then write order (``[]`` when unknown).
    * Thread-safe: searches and writes may come from several threads at once.
      ``close()`` persists what is not yet persisted and is idempotent.
    """

    def replace(
        self, doc_id: str, chunks: Sequence[Chunk], vectors: npt.NDArray[np.float32]
    ) -> int:
        """Make the document hold exactly ``chunks``; returns the number stored.

        Raises:
            InvalidDocIdError: Bad ``doc_id``.
            InputError: ``chunks`` or ``vectors`` of the wrong type.
            StoreError: Row count, dimension, non-finite values, chunk ownership or
                duplicate chunk ids wrong, or the engine failed; nothing is written.
        """
        ...

    def delete(self, doc_id: str) -> int:
        """Remove the document's chunks; returns how many were removed."""
        ...

    def search(
        self, vector: npt.NDArray[np.float32], *, k: int, doc_ids: Sequence[str] | None = None
    ) -> list[VectorHit]:
        """Top-``k`` chunks by cosine similarity, optionally restricted to documents.

        Raises:
            InputError: ``vector`` is not a row of finite numbers, ``k`` < 1 or not an
                int, ``doc_ids`` is a ``str``.
            StoreError: ``vector`` has a dimension other than the store's.
        """
        ...

    def keyword_search(
        self, text: str, *, k: int, doc_ids: Sequence[str] | None = None
    ) -> list[VectorHit]:
        """Top-``k`` chunks by BM25 (scores > 0), optionally restricted to documents.

        Raises:
            InputError: ``text`` is not a ``str``, ``k`` < 1 or not an int, ``doc_ids``
                is a ``str``.
        """
        ...

    def chunks(self, doc_id: str) -> list[Chunk]:
        """The document's chunks in page/offset order (empty when unknown)."""
        ...

    def close(self) -> None:
        """Persist and release resources; idempotent."""
        ...


@runtime_checkable
class Catalog(Protocol):
    """The record of ingested documents. Written last on ingest, first removed on forget.

    Contract (checked by ``hybrid_rag.testing.contracts.CatalogContract``):

    * ``put(info)`` inserts the entry, or replaces the one with the same ``doc_id``.
      ``info`` must be a ``DocumentInfo`` (else
      ``InputError``) whose ``doc_id`` matches
      ``[A-Za-z0-9_.-]{1,128}``, not ``.``/``..`` (else ``InvalidDocIdError``);
      nothing is written then.
    * ``get(doc_id)`` returns an entry equal to the last one put (every field, including
      time-zone-aware timestamps, ``None`` values and aliases), or ``None`` for an
      unknown id.
    * ``delete(doc_id)`` removes the entry and returns ``True``; an unknown id is a no-op
      returning ``False``. Other entries are untouched.
    * ``list()`` returns every entry ordered by doc id (code-point order); ``[]`` when
      empty.
    * A ``doc_id`` argument that is not a valid doc id raises
      ``InvalidDocIdError`` (an ``InputError``).
    * Thread-safe; ``close()`` is idempotent. Failures of the underlying database raise
      ``StoreError``.
    """

    def get(self, doc_id: str) -> DocumentInfo | None:
        """The entry of a document, or ``None``.

        Raises:
            InvalidDocIdError: ``doc_id`` is not a valid doc id.
        """
        ...

    def put(self, info: DocumentInfo) -> None:
        """Insert or replace an entry.

        Raises:
            InputError: ``info`` is not a ``DocumentInfo``.
            InvalidDocIdError: ``info.doc_id`` is not a valid doc id.
        """
        ...

    def delete(self, doc_id: str) -> bool:
        """Remove an entry; ``False`` when absent.

        Raises:
            InvalidDocIdError: ``doc_id`` is not a valid doc id.
        """
        ...

    def list(self) -> list[DocumentInfo]:
        """All entries ordered by doc id."""
        ...

    def close(self) -> None:
        """Release resources; idempotent."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    Contract (checked by ``hybrid_rag.testing.contracts.EmbedderContract``):

    * ``name`` (a non-empty ``str``) identifies the model so a store built with another
      model can be detected; ``dim`` (an ``int`` >= 1) is the vector length. Both are
      stable: the same values before and after embedding.
    * ``embed_documents(texts)`` returns a ``float32`` array of shape
      ``(len(texts), dim)``, row ``i`` for ``texts[i]``; an empty batch returns shape
      ``(0, dim)``. ``embed_query(text)`` returns a ``float32`` array of shape
      ``(dim,)``. Query and document vectors may differ for the same text (asymmetric
      models).
    * Every vector has L2 norm 1, except that a text with nothing to embed (empty, or
      no word characters) may give the zero vector. Values are finite.
    * One call embeds a whole batch: the texts go to the model in batches (one request
      per batch of up to the embedder's batch size), never one request per text.
    * Deterministic embedders return the same vector for the same text, whatever the
      batch it is in.
    * ``texts`` must be a sequence of ``str`` (not a ``str`` itself) and ``text`` a
      ``str``; anything else raises ``InputError`` before any
      model call.
    * Safe to call concurrently (several embeddings in flight from one event loop).
    """

    @property
    def name(self) -> str:
        """Model identifier, e.g. ``"hashing-384"`` or ``"all-MiniLM-L6-v2"``."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    async def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed passages; returns an array of shape ``(len(texts), dim)``.

        Raises:
            InputError: ``texts`` is a ``str`` or holds a non-``str``.
        """
        ...

    async def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Embed a question; returns an array of shape ``(dim,)``.

        Raises:
            InputError: ``text`` is not a ``str``.
        """
        ...


@runtime_checkable
class LLMProvider(Protocol):
    """A chat model. Plugs into ingest (triple extraction) and ask (SPARQL, synthesis).

    Contract:

    * ``complete`` answers a conversation with one ``Completion``
      (text plus token counts, ``0`` when the back end does not report them).
    * ``json_schema``: when given, the reply is constrained to one JSON document meant to
      validate against that JSON Schema (OpenAI ``response_format`` ``json_schema`` with
      ``strict``, a LangChain model's structured output, or the schema in the prompt
      where the back end has no constrained decoding). ``Completion.text`` is then that
      JSON text; a reply that is not a JSON object raises
      ``LLMError``. Validating it against the schema (for
      instance ``Model.model_validate_json(text)``) is the caller's job: back ends differ
      in how strictly they enforce a schema.
    * ``stream`` yields the reply's text in pieces as the model produces them; joined
      they equal what ``complete`` would have returned for the same call. It fails with
      ``LLMError`` before the first piece (a failure after the first piece also raises
      ``LLMError``; nothing is retried once text has been yielded). A consumer that
      stops early closes the iterator (``await it.aclose()`` or
      ``contextlib.aclosing``) so the provider frees its connection and concurrency slot.
    * ``max_tokens=None`` means the provider's own explicit default, never the back end's
      (some truncate answers silently).
    * Failures raise ``LLMError``; retries on rate limits,
      5xx and timeouts are the provider's job (the bundled providers share one policy:
      ``hybrid_rag.providers``). Safe to call concurrently from one event loop.
    """

    @property
    def name(self) -> str:
        """Model identifier used in cache keys and logs."""
        ...

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        """Answer a conversation (optionally as JSON constrained by ``json_schema``)."""
        ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> AsyncIterator[str]:
        """Answer a conversation as text pieces, in order, as they arrive."""
        ...


@runtime_checkable
class Extractor(Protocol):
    """Reads the facts of one prepared (parsed and chunked) document under an ontology.

    Contract (checked by ``hybrid_rag.testing.contracts.ExtractorContract``):

    * ``extract(document, ontology=)`` returns an
      ``Extraction``: the product the document is about
      (``product``, never empty: fall back to the file name), its ``aliases``, and
      ``facts``. Every fact names a property the ontology defines (``ontology.property(
      fact.prop)`` resolves), a 1-based ``page`` of the document, and a ``quote`` that is
      an exact substring of that page's text; ``chunk_id``, when set, is the id of a chunk
      of the document on that page.
    * A value it cannot back with such a quote is not returned: it is dropped and counted
      in ``warnings`` (one readable line per reason). The ingest pipeline re-checks both
      rules and drops (with a warning) what breaks them, so a faulty extractor cannot put
      an unsupported fact into the graph.
    * ``status="unavailable"`` records a value the document says is not available ("No
      information available"), with the quote that says so.
    * Never writes to a store. Deterministic extractors return the same result for the
      same input. Failures of a model or service raise
      ``LLMError``; a document with nothing to extract yields an
      extraction with no facts and a warning, not an error.
    * Safe to call concurrently for different documents.
    """

    @property
    def name(self) -> str:
        """Identifier of the extractor (and its model), for reports and caches."""
        ...

    async def extract(self, document: PreparedDocument, *, ontology: Ontology) -> Extraction:
        """The product and the facts ``document`` states, each with its quote."""
        ...


@runtime_checkable
class QuestionRouter(Protocol):
    """Reads a question against what the scope holds; the chains run on its analysis.

    Contract (checked by ``hybrid_rag.testing.contracts.QuestionRouterContract``):

    * ``route(question, scope=, history=)`` returns a
      ``QuestionAnalysis`` for exactly ``question``
      (``analysis.question == question``).
    * ``products`` only name documents of ``scope.doc_ids``; ``properties`` are
      properties of ``scope.ontology``.
    * ``intent`` is one of ``lookup`` (one or several properties of the named products),
      ``min`` / ``max`` (a comparison on a quantity, superlative or comparative),
      ``filter`` ("which of these are ..."), ``same`` (same / different value),
      ``procedure`` (first aid, firefighting, spill clean-up, handling, storage,
      disposal), ``out_of_scope`` (nothing in the question links to the documents in
      scope, or it names a product that is not in scope: ``missing`` lists it) and
      ``unsafe`` (a request to change, delete or reveal the system). For the last two
      ``reason`` says why in a sentence a person can read; the supervisor answers them
      without touching any store.
    * ``history`` holds earlier turns (oldest first); a follow-up ("and its boiling
      point?") may take its products from them.
    * Never writes to a store; reads nothing but its arguments (an LLM router may call its
      model). Failures of a model raise ``LLMError``. Safe to call
      concurrently.
    """

    async def route(
        self,
        question: str,
        *,
        scope: ScopeView,
        history: Sequence[ChatMessage] = (),
    ) -> QuestionAnalysis:
        """The analysis the chains run on."""
        ...
