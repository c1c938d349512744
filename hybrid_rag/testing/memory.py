"""In-memory TEST FAKES of the Catalog and VectorStore seams, written from their docstrings.

They are small reference implementations: built from the contracts in
``hybrid_rag.protocols`` alone (not from the real stores) and checked by the same
contract suites, which proves the docstrings say enough to implement a seam. They keep
everything in Python dicts, scan every chunk on each search and persist nothing: use
them in tests, not in production (the embedded stores are
``SqliteCatalog`` and
``LocalVectorStore``).

Example:
    >>> from hybrid_rag.testing import InMemoryCatalog, InMemoryVectorStore
    >>> store = InMemoryVectorStore(dim=8)
    >>> store.keyword_search("UN1090", k=3)
    []
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hybrid_rag._checks import (
    check_chunks,
    check_doc_id,
    check_doc_ids,
    check_info,
    check_k,
    check_matrix,
    check_text,
    check_vector,
)
from hybrid_rag.errors import ConfigurationError, StoreError
from hybrid_rag.protocols import VectorHit

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from hybrid_rag.models import Chunk, DocumentInfo

__all__ = ["InMemoryCatalog", "InMemoryVectorStore"]

# A run of letters/digits joined by - . / , is one token; a 1-3 letter code written apart
# from its number also yields the joined form ("un 1090" -> "un1090").
_TOKEN = re.compile(r"[^\W_]+(?:[-./,][^\W_]+)*")
_SPLIT_CODE = re.compile(r"\b([^\W\d_]{1,3})\s+(\d+)\b")


def _tokens(text: str) -> list[str]:
    low = unicodedata.normalize("NFKC", text).lower()
    return _TOKEN.findall(low) + [a + b for a, b in _SPLIT_CODE.findall(low)]


class InMemoryCatalog:
    """A TEST FAKE ``Catalog``: a dict behind a lock."""

    def __init__(self) -> None:
        self._entries: dict[str, DocumentInfo] = {}
        self._lock = threading.Lock()

    def get(self, doc_id: str) -> DocumentInfo | None:
        """The entry of a document, or ``None``."""
        check_doc_id(doc_id)
        with self._lock:
            return self._entries.get(doc_id)

    def put(self, info: DocumentInfo) -> None:
        """Insert or replace an entry."""
        check_info(info)
        with self._lock:
            self._entries[info.doc_id] = info

    def delete(self, doc_id: str) -> bool:
        """Remove an entry; ``False`` when absent."""
        check_doc_id(doc_id)
        with self._lock:
            return self._entries.pop(doc_id, None) is not None

    def list(self) -> list[DocumentInfo]:
        """All entries ordered by doc id."""
        with self._lock:
            return [self._entries[d] for d in sorted(self._entries)]

    def close(self) -> None:
        """Nothing to release."""


class InMemoryVectorStore:
    """A TEST FAKE ``VectorStore``: exact scans, a plain BM25.

    Keyword scores are textbook Okapi BM25 (k1 = 1.5, b = 0.75) over the chunks in scope,
    computed on each call: small and slow on purpose; no dependency beyond numpy.

    Args:
        dim: Vector dimension; ``None`` takes it from the first write.
    """

    def __init__(self, *, dim: int | None = None) -> None:
        if dim is not None and dim < 1:
            raise ConfigurationError(f"dim must be >= 1, got {dim}")
        self._dim = dim
        self._docs: dict[str, tuple[list[Chunk], npt.NDArray[np.float32]]] = {}
        self._lock = threading.Lock()

    def replace(
        self, doc_id: str, chunks: Sequence[Chunk], vectors: npt.NDArray[np.float32]
    ) -> int:
        """Make the document hold exactly ``chunks``; returns the number stored."""
        import numpy as np

        check_doc_id(doc_id)
        items, arr = check_chunks(chunks), check_matrix(vectors)
        if not items and arr.size == 0:
            self.delete(doc_id)
            return 0
        with self._lock:
            self._check_rows(doc_id, items, arr)
            self._dim = int(arr.shape[1])
            norms = np.linalg.norm(arr, axis=1, keepdims=True)
            self._docs[doc_id] = (items, (arr / np.where(norms > 0, norms, 1)).astype(np.float32))
        return len(items)

    def _check_rows(self, doc_id: str, chunks: list[Chunk], arr: npt.NDArray[np.float32]) -> None:
        import numpy as np

        if arr.ndim != 2 or arr.shape[0] != len(chunks):
            raise StoreError(f"{len(chunks)} chunks but vectors of shape {arr.shape}")
        if self._dim is not None and arr.shape[1] != self._dim:
            raise StoreError(f"vectors of dimension {arr.shape[1]}, store has {self._dim}")
        if not np.isfinite(arr).all():
            raise StoreError("vectors contain NaN or infinite values")
        if any(c.doc_id != doc_id for c in chunks):
            raise StoreError(f"every chunk must belong to {doc_id!r}")
        if len({c.chunk_id for c in chunks}) != len(chunks):
            raise StoreError(f"duplicate chunk ids in {doc_id!r}")

    def delete(self, doc_id: str) -> int:
        """Remove the document's chunks; returns how many were removed."""
        with self._lock:
            removed = self._docs.pop(doc_id, None)
        return 0 if removed is None else len(removed[0])

    def _scope(self, doc_ids: Sequence[str] | None) -> list[str]:
        wanted = sorted(self._docs) if doc_ids is None else check_doc_ids(doc_ids)
        return [d for d in wanted if d in self._docs]

    def search(
        self, vector: npt.NDArray[np.float32], *, k: int, doc_ids: Sequence[str] | None = None
    ) -> list[VectorHit]:
        """Top-``k`` chunks by cosine similarity, optionally restricted to documents."""
        import numpy as np

        q, k = check_vector(vector), check_k(k)
        with self._lock:
            if self._dim is not None and q.shape[0] != self._dim:
                raise StoreError(f"query of dimension {q.shape[0]}, store has {self._dim}")
            pairs = [
                (c, v) for d in self._scope(doc_ids) for c, v in zip(*self._docs[d], strict=True)
            ]
        if not pairs:
            return []
        q = q / (float(np.linalg.norm(q)) or 1.0)
        scores = np.stack([v for _, v in pairs]) @ q
        order = np.argsort(-scores, kind="stable")[:k]
        return [VectorHit(chunk=pairs[i][0], score=float(scores[i])) for i in order]

    def keyword_search(
        self, text: str, *, k: int, doc_ids: Sequence[str] | None = None
    ) -> list[VectorHit]:
        """Top-``k`` chunks by BM25 (scores > 0), optionally restricted to documents."""
        query, k = _tokens(check_text(text)), check_k(k)
        with self._lock:
            chunks = [c for d in self._scope(doc_ids) for c in self._docs[d][0]]
        if not chunks or not query:
            return []
        scores = _bm25([_tokens(c.text) for c in chunks], list(dict.fromkeys(query)))
        order = sorted(range(len(chunks)), key=lambda i: -scores[i])[:k]
        return [VectorHit(chunk=chunks[i], score=scores[i]) for i in order if scores[i] > 0]

    def chunks(self, doc_id: str) -> list[Chunk]:
        """The document's chunks in page/offset order (empty when unknown)."""
        with self._lock:
            found = self._docs.get(doc_id, ([], None))[0]
        return sorted(found, key=lambda c: (c.page, c.start))

    def close(self) -> None:
        """Nothing to persist."""


def _bm25(docs: list[list[str]], query: list[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """Okapi BM25 of each tokenised document for ``query`` (textbook formula)."""
    import math
    from collections import Counter

    n = len(docs)
    avg = sum(len(d) for d in docs) / n or 1.0
    df = Counter(t for d in docs for t in set(d))
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query}
    out = []
    for d in docs:
        tf = Counter(d)
        norm = k1 * (1 - b + b * len(d) / avg)
        out.append(sum(idf[t] * tf[t] * (k1 + 1) / (tf[t] + norm) for t in query if tf[t]))
    return out
