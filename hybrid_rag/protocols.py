"""The seams of hybrid_rag: small protocols whose docstrings state the behaviour.

Stores are synchronous (pyoxigraph, numpy and hdbcli block); the core calls them from
worker threads through anyio with a capacity limit, so a store must tolerate calls from
several threads (one call at a time per store is NOT guaranteed). Embedders and LLM
providers are asynchronous (network-bound, they gain from concurrency).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from hybrid_rag.models import ChatMessage, Chunk, Completion, DocumentInfo
    from hybrid_rag.rdf import SparqlResult, Triple

__all__ = [
    "Catalog",
    "ClassDef",
    "Embedder",
    "GraphStore",
    "LLMProvider",
    "Ontology",
    "PropertyDef",
    "VectorHit",
    "VectorStore",
]


@runtime_checkable
class GraphStore(Protocol):
    """An RDF quad store holding one named graph per document.

    Contract (checked by :class:`hybrid_rag.testing.contracts.GraphStoreContract`):

    * ``replace(doc_id, triples)`` makes the document's graph hold exactly ``triples``
      (previous content gone); writing the same triples twice leaves one copy. Other
      documents' graphs are untouched. Returns the number of distinct triples stored.
    * ``delete(doc_id)`` removes the document's graph; deleting an absent graph is a no-op
      returning ``False``.
    * ``query(sparql, scope=...)`` runs a read-only SELECT or ASK with the dataset set by
      the store to exactly the graphs of ``scope`` (as default graph union and as named
      graphs). ``FROM``, ``FROM NAMED`` and ``GRAPH <iri>`` in the query cannot widen it.
      An empty scope returns an empty result without touching the engine. Updates raise
      :class:`~hybrid_rag.errors.SparqlValidationError`; engine errors raise
      :class:`~hybrid_rag.errors.StoreError` whose message carries the engine's text.
    * ``doc_ids()`` lists documents that have a graph.
    * Thread-safe; ``close()`` is idempotent.
    """

    def graph_iri(self, doc_id: str) -> str:
        """The named graph IRI of a document."""
        ...

    def replace(self, doc_id: str, triples: Sequence[Triple]) -> int:
        """Make the document's named graph hold exactly ``triples``."""
        ...

    def delete(self, doc_id: str) -> bool:
        """Drop the document's named graph; ``False`` when there was none."""
        ...

    def query(self, sparql: str, *, scope: Sequence[str]) -> SparqlResult:
        """Run a read-only query over exactly the graphs of ``scope``."""
        ...

    def doc_ids(self) -> list[str]:
        """Documents that have a named graph."""
        ...

    def close(self) -> None:
        """Release resources; further calls may fail."""
        ...


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A chunk returned by a search, with the retriever's score (higher is better)."""

    chunk: Chunk
    score: float


@runtime_checkable
class VectorStore(Protocol):
    """Chunks with their embeddings, searchable densely (cosine) and lexically (BM25).

    Contract (checked by :class:`hybrid_rag.testing.contracts.VectorStoreContract`):

    * ``replace(doc_id, chunks, vectors)`` makes the document hold exactly these chunks
      (old ones gone, others untouched); ``vectors`` has one row per chunk. A dimension
      different from the store's raises :class:`~hybrid_rag.errors.StoreError` and writes
      nothing.
    * ``search(vector, k=, doc_ids=)`` returns at most ``k`` hits by descending cosine
      similarity; ``doc_ids`` restricts hits to those documents (``None`` = all, empty
      sequence = no hits).
    * ``keyword_search(text, k=, doc_ids=)`` ranks by BM25; identifiers such as
      ``67-64-1``, ``UN1090`` or ``H225`` are found by their exact string.
    * ``delete(doc_id)`` removes the document's chunks and returns how many.
    * ``chunks(doc_id)`` returns the document's chunks in page/offset order.
    * Thread-safe; ``close()`` persists what is not yet persisted and is idempotent.
    """

    def replace(
        self, doc_id: str, chunks: Sequence[Chunk], vectors: npt.NDArray[np.float32]
    ) -> int:
        """Make the document hold exactly ``chunks``; returns the number stored."""
        ...

    def delete(self, doc_id: str) -> int:
        """Remove the document's chunks; returns how many were removed."""
        ...

    def search(
        self, vector: npt.NDArray[np.float32], *, k: int, doc_ids: Sequence[str] | None = None
    ) -> list[VectorHit]:
        """Top-``k`` chunks by cosine similarity, optionally restricted to documents."""
        ...

    def keyword_search(
        self, text: str, *, k: int, doc_ids: Sequence[str] | None = None
    ) -> list[VectorHit]:
        """Top-``k`` chunks by BM25, optionally restricted to documents."""
        ...

    def chunks(self, doc_id: str) -> list[Chunk]:
        """The document's chunks in page/offset order (empty when unknown)."""
        ...

    def close(self) -> None:
        """Persist and release resources."""
        ...


@runtime_checkable
class Catalog(Protocol):
    """The record of ingested documents. Written last on ingest, first removed on forget.

    ``get`` returns ``None`` for an unknown id; ``put`` inserts or replaces; ``delete``
    of an unknown id is a no-op returning ``False``. Thread-safe.
    """

    def get(self, doc_id: str) -> DocumentInfo | None:
        """The entry of a document, or ``None``."""
        ...

    def put(self, info: DocumentInfo) -> None:
        """Insert or replace an entry."""
        ...

    def delete(self, doc_id: str) -> bool:
        """Remove an entry; ``False`` when absent."""
        ...

    def list(self) -> list[DocumentInfo]:
        """All entries ordered by doc id."""
        ...

    def close(self) -> None:
        """Release resources."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of a fixed dimension.

    One call embeds a whole batch (never one call per chunk). Deterministic embedders
    return the same vector for the same text. ``name`` identifies the model so a store
    built with another model can be detected.
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
        """Embed passages; returns an array of shape ``(len(texts), dim)``."""
        ...

    async def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Embed a question; returns an array of shape ``(dim,)``."""
        ...


@runtime_checkable
class LLMProvider(Protocol):
    """A chat model. Plugs into ingest (triple extraction) and ask (SPARQL, synthesis).

    Contract:

    * ``complete`` answers a conversation with one :class:`~hybrid_rag.models.Completion`
      (text plus token counts, ``0`` when the back end does not report them).
    * ``json_schema``: when given, the reply is constrained to one JSON document meant to
      validate against that JSON Schema (OpenAI ``response_format`` ``json_schema`` with
      ``strict``, a LangChain model's structured output, or the schema in the prompt
      where the back end has no constrained decoding). ``Completion.text`` is then that
      JSON text; a reply that is not a JSON object raises
      :class:`~hybrid_rag.errors.LLMError`. Validating it against the schema (for
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
    * Failures raise :class:`~hybrid_rag.errors.LLMError`; retries on rate limits,
      5xx and timeouts are the provider's job (the bundled providers share one policy:
      :mod:`hybrid_rag.providers`). Safe to call concurrently from one event loop.
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


@dataclass(frozen=True, slots=True)
class PropertyDef:
    """An ontology property: its IRI, local name, labels and, for quantities, its unit."""

    iri: str
    name: str
    label: str
    kind: Literal["object", "datatype"]
    alt_labels: tuple[str, ...] = ()
    domain: str | None = None
    range: str | None = None
    unit: str | None = None
    comment: str | None = None

    @property
    def labels(self) -> tuple[str, ...]:
        """Preferred label first, then alternatives."""
        return (self.label, *self.alt_labels)


@dataclass(frozen=True, slots=True)
class ClassDef:
    """An ontology class with its labels."""

    iri: str
    name: str
    label: str
    alt_labels: tuple[str, ...] = ()
    parents: tuple[str, ...] = field(default=())
    comment: str | None = None


@runtime_checkable
class Ontology(Protocol):
    """The vocabulary that constrains the knowledge graph.

    ``mint_iri`` returns IRIs safe for SAP HANA's SPARQL: local names match
    ``[A-Za-z][A-Za-z0-9_-]*``. ``validate`` returns the problems of a set of triples
    (unknown predicates or classes) without raising.
    """

    @property
    def namespace(self) -> str:
        """Namespace IRI of the ontology's terms."""
        ...

    def classes(self) -> list[ClassDef]:
        """All classes."""
        ...

    def properties(self) -> list[PropertyDef]:
        """All object and datatype properties."""
        ...

    def property(self, name: str) -> PropertyDef:
        """A property by local name or IRI; unknown -> OntologyError."""
        ...

    def mint_iri(self, label: str, *, base: str) -> str:
        """A HANA-safe IRI under ``base`` derived from ``label``."""
        ...

    def validate(self, triples: Sequence[Triple]) -> list[str]:
        """Problems with ``triples`` (empty when they conform)."""
        ...

    def vocabulary(self) -> str:
        """A compact text listing of classes and properties for LLM prompts."""
        ...
