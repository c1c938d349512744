"""One exception tree for the library, rooted at ``HybridRAGError``.

Every error a user can trigger with bad input is one of these, names the problem in its
message, and is raised before any store is changed.
"""

from __future__ import annotations

__all__ = [
    "ConfigurationError",
    "DamagedStoreError",
    "DiskFullError",
    "DocumentError",
    "DocumentExistsError",
    "DocumentNotFoundError",
    "DocumentTooLargeError",
    "EmptyDocumentError",
    "EncryptedDocumentError",
    "HybridRAGError",
    "InputError",
    "InvalidDocIdError",
    "LLMError",
    "LLMTimeoutError",
    "OcrUnavailableError",
    "OntologyError",
    "QueryTimeoutError",
    "SparqlValidationError",
    "StoreError",
    "StoreLockedError",
    "UnsupportedFormatError",
]


class HybridRAGError(Exception):
    """Base class of every error raised by hybrid_rag."""


class ConfigurationError(HybridRAGError):
    """A setting or a combination of constructor arguments is invalid."""


class InputError(HybridRAGError, ValueError):
    """An argument of a call is invalid: wrong type, out of range, empty or too long.

    Raised before any I/O; the message names the argument and what was wrong with it.
    """


class InvalidDocIdError(InputError):
    """A document id does not match ``[A-Za-z0-9_.-]{1,128}`` (or is ``.`` or ``..``)."""


class DocumentNotFoundError(HybridRAGError, KeyError):
    """A document id named by the caller is not in the catalog."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "document not found"


class DocumentError(HybridRAGError, ValueError):
    """A document cannot be read (corrupt, truncated, wrong type)."""


class DocumentTooLargeError(DocumentError):
    """The document is larger than the ``max_bytes`` limit; nothing of it was read past it."""


class DocumentExistsError(HybridRAGError):
    """A document of that id exists with other content and the call asked not to replace it
    (``ingest(..., replace=False)``, a service upload without ``replace=true``)."""


class UnsupportedFormatError(DocumentError):
    """The file extension or content type is not one the loaders handle."""


class EncryptedDocumentError(DocumentError):
    """The PDF is encrypted and cannot be read without a password."""


class EmptyDocumentError(DocumentError):
    """The document has no extractable text (empty file, scanned PDF)."""


class OcrUnavailableError(EmptyDocumentError, ImportError):
    """A document (a scanned PDF, an image file) can only be read by OCR, and no OCR
    engine is installed; the message names the install line
    (``pip install "hybrid-rag[ocr]"``).

    An ``EmptyDocumentError`` (the document yields no text) and an ``ImportError`` (a
    missing optional dependency) at once, so either kind of handler catches it.
    """


class OntologyError(HybridRAGError, ValueError):
    """An ontology file is invalid or a term is not defined in the ontology."""


class SparqlValidationError(HybridRAGError, ValueError):
    """A SPARQL query was rejected before execution (not read-only, SERVICE, out of scope)."""


class StoreError(HybridRAGError):
    """A store failed to read or write (I/O, engine error)."""


class DamagedStoreError(StoreError):
    """A store file is missing, damaged, or disagrees with the other stores.

    Raised before anything is answered or written; nothing was changed or deleted. The
    message names the file and the way to repair it.

    Attributes:
        problem: What is wrong, in words.
        path: The damaged or missing file or folder.
        repair: What to do (usually ``hybrid-rag repair --store <path>``).
    """

    def __init__(self, problem: str, *, path: str, repair: str) -> None:
        super().__init__(f"{problem} ({path}); to repair: {repair}")
        self.problem, self.path, self.repair = problem, path, repair


class DiskFullError(StoreError):
    """A write ran out of disk space ("no space left on device"); it was rolled back."""


class QueryTimeoutError(StoreError):
    """A query ran out of its time and was stopped (its worker process killed)."""


class StoreLockedError(StoreError):
    """An embedded store is held by another handle (another process, or another
    ``HybridRAG``/store object in this one): one writer per store.

    Raised at once, before anything is read or written. The message and the attributes
    say who holds it.

    Attributes:
        path: The lock file, when known.
        pid: Process id of the holder, when known.
        host: Host name of the holder, when known.
        since: When the holder took the lock (ISO 8601, UTC), when known.
        holder: What the holder is (its command line, and what it serves), when known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        pid: int | None = None,
        host: str | None = None,
        since: str | None = None,
        holder: str | None = None,
    ) -> None:
        super().__init__(message)
        self.path, self.pid, self.host, self.since = path, pid, host, since
        self.holder = holder


class LLMError(HybridRAGError):
    """An LLM provider call failed or returned an unusable response."""


class LLMTimeoutError(LLMError):
    """A model call got no reply in time: its own timeout, or the question's time budget.

    The call was sent, so it counts in ``Usage.llm_calls``.
    """
