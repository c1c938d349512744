"""hybrid_rag: agentic hybrid RAG over an ontology-constrained knowledge graph and chunks.

Every document becomes an RDF named graph (facts with page-level evidence) and embedded
chunks; a question runs against both and returns a typed :class:`Answer` with citations.
"""

from hybrid_rag.errors import (
    ConfigurationError,
    DocumentError,
    DocumentNotFoundError,
    EmptyDocumentError,
    EncryptedDocumentError,
    HybridRAGError,
    InvalidDocIdError,
    LLMError,
    OntologyError,
    SparqlValidationError,
    StoreError,
    UnsupportedFormatError,
)
from hybrid_rag.models import (
    Answer,
    ChainError,
    ChatMessage,
    Chunk,
    Completion,
    DocumentInfo,
    Evidence,
    Fact,
    IngestReport,
    Passage,
    SparqlAttempt,
    Usage,
)
from hybrid_rag.protocols import (
    Catalog,
    Embedder,
    GraphStore,
    LLMProvider,
    Ontology,
    VectorHit,
    VectorStore,
)
from hybrid_rag.rag import HybridRAG
from hybrid_rag.rdf import SparqlResult, Term

__version__ = "0.1.0"

__all__ = [
    "Answer",
    "Catalog",
    "ChainError",
    "ChatMessage",
    "Chunk",
    "Completion",
    "ConfigurationError",
    "DocumentError",
    "DocumentInfo",
    "DocumentNotFoundError",
    "Embedder",
    "EmptyDocumentError",
    "EncryptedDocumentError",
    "Evidence",
    "Fact",
    "GraphStore",
    "HybridRAG",
    "HybridRAGError",
    "IngestReport",
    "InvalidDocIdError",
    "LLMError",
    "LLMProvider",
    "Ontology",
    "OntologyError",
    "Passage",
    "SparqlAttempt",
    "SparqlResult",
    "SparqlValidationError",
    "StoreError",
    "Term",
    "UnsupportedFormatError",
    "Usage",
    "VectorHit",
    "VectorStore",
    "__version__",
]
