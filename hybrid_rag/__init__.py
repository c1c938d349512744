"""hybrid_rag: agentic hybrid RAG over an ontology-constrained knowledge graph and chunks.

Every document becomes an RDF named graph (facts with page-level evidence) and embedded
chunks; a question runs against both and returns a typed ``Answer`` with citations.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hybrid_rag.ask.compose import AnswerComposer
    from hybrid_rag.errors import (
        ConfigurationError,
        DamagedStoreError,
        DiskFullError,
        DocumentError,
        DocumentExistsError,
        DocumentNotFoundError,
        DocumentTooLargeError,
        EmptyDocumentError,
        EncryptedDocumentError,
        HybridRAGError,
        InputError,
        InvalidDocIdError,
        LLMError,
        OcrUnavailableError,
        OntologyError,
        SparqlValidationError,
        StoreError,
        StoreLockedError,
        UnsupportedFormatError,
    )
    from hybrid_rag.ingest.formats.ocr import OcrOptions
    from hybrid_rag.models import (
        Answer,
        ChainError,
        ChatMessage,
        Chunk,
        Completion,
        DocumentInfo,
        DocumentList,
        Evidence,
        Fact,
        IngestReport,
        NameReading,
        Passage,
        PreparedDocument,
        SparqlAttempt,
        Usage,
    )
    from hybrid_rag.protocols import (
        Catalog,
        Embedder,
        Extractor,
        GraphStore,
        LLMProvider,
        Ontology,
        OntologyMatching,
        QuestionRouter,
        VectorHit,
        VectorStore,
    )
    from hybrid_rag.rag import HybridRAG, StreamDelta
    from hybrid_rag.rdf import SparqlResult, Term

__version__ = "0.1.0"

_LAZY = {
    "Extractor": "hybrid_rag.protocols",
    "QuestionRouter": "hybrid_rag.protocols",
    "OntologyMatching": "hybrid_rag.protocols",
    "PreparedDocument": "hybrid_rag.models",
    "StreamDelta": "hybrid_rag.rag",
    "AnswerComposer": "hybrid_rag.ask.compose",
    "Answer": "hybrid_rag.models",
    "Catalog": "hybrid_rag.protocols",
    "ChainError": "hybrid_rag.models",
    "ChatMessage": "hybrid_rag.models",
    "Chunk": "hybrid_rag.models",
    "Completion": "hybrid_rag.models",
    "ConfigurationError": "hybrid_rag.errors",
    "DamagedStoreError": "hybrid_rag.errors",
    "DiskFullError": "hybrid_rag.errors",
    "DocumentExistsError": "hybrid_rag.errors",
    "DocumentTooLargeError": "hybrid_rag.errors",
    "DocumentError": "hybrid_rag.errors",
    "DocumentInfo": "hybrid_rag.models",
    "DocumentList": "hybrid_rag.models",
    "DocumentNotFoundError": "hybrid_rag.errors",
    "Embedder": "hybrid_rag.protocols",
    "EmptyDocumentError": "hybrid_rag.errors",
    "EncryptedDocumentError": "hybrid_rag.errors",
    "Evidence": "hybrid_rag.models",
    "Fact": "hybrid_rag.models",
    "GraphStore": "hybrid_rag.protocols",
    "HybridRAG": "hybrid_rag.rag",
    "HybridRAGError": "hybrid_rag.errors",
    "IngestReport": "hybrid_rag.models",
    "InputError": "hybrid_rag.errors",
    "InvalidDocIdError": "hybrid_rag.errors",
    "LLMError": "hybrid_rag.errors",
    "LLMProvider": "hybrid_rag.protocols",
    "OcrOptions": "hybrid_rag.ingest.formats.ocr",
    "OcrUnavailableError": "hybrid_rag.errors",
    "Ontology": "hybrid_rag.protocols",
    "OntologyError": "hybrid_rag.errors",
    "Passage": "hybrid_rag.models",
    "NameReading": "hybrid_rag.models",
    "SparqlAttempt": "hybrid_rag.models",
    "SparqlResult": "hybrid_rag.rdf",
    "SparqlValidationError": "hybrid_rag.errors",
    "StoreError": "hybrid_rag.errors",
    "StoreLockedError": "hybrid_rag.errors",
    "Term": "hybrid_rag.rdf",
    "UnsupportedFormatError": "hybrid_rag.errors",
    "Usage": "hybrid_rag.models",
    "VectorHit": "hybrid_rag.protocols",
    "VectorStore": "hybrid_rag.protocols",
}


def __getattr__(name: str) -> Any:
    """Load public names on first use (PEP 562) so ``import hybrid_rag`` stays light."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hybrid_rag' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Answer",
    "AnswerComposer",
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
    "Extractor",
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
    "OntologyMatching",
    "Passage",
    "PreparedDocument",
    "QuestionRouter",
    "SparqlAttempt",
    "SparqlResult",
    "SparqlValidationError",
    "StoreError",
    "StoreLockedError",
    "StreamDelta",
    "Term",
    "UnsupportedFormatError",
    "Usage",
    "VectorHit",
    "VectorStore",
    "__version__",
]
