"""A deterministic, offline, LEXICAL embedder based on the hashing trick.

No model, no download: each word and each character n-gram of a word is hashed (CRC-32,
stable across processes, unlike Python's salted ``hash()``) to a signed bucket of a
fixed-size vector. Texts that share words or word pieces get similar vectors; synonyms do
not. It is the embedder of the offline default and of tests; use a semantic model
(``[local]`` extra or a hosted one) for paraphrase-level retrieval.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from hybrid_rag._checks import check_text, check_texts
from hybrid_rag.errors import ConfigurationError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["HashingEmbedder"]

_TOKEN = re.compile(r"\w+")
_THREAD_THRESHOLD = 64  # batches larger than this run in a worker thread
_STOPWORDS = frozenset(
    {
        *("a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in"),
        *("is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were"),
        *("will", "with"),
    }
)


@lru_cache(maxsize=1 << 17)
def _features(
    word: str, dim: int, lo: int, hi: int, char_weight: float
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Bucket indices and signed weights of one word and its character n-grams."""
    import numpy as np

    grams = [word]
    if hi > 0:
        marked = f"<{word}>"
        grams += [marked[i : i + n] for n in range(lo, hi + 1) for i in range(len(marked) - n + 1)]
    hashes = np.fromiter((zlib.crc32(g.encode()) for g in grams), dtype=np.int64, count=len(grams))
    idx = (hashes >> 1) % dim
    wts = np.where(hashes & 1, 1.0, -1.0)
    wts[1:] *= char_weight / math.sqrt(max(1, len(grams) - 1))
    return idx, wts


class HashingEmbedder:
    """Lexical embeddings by signed feature hashing of words and character n-grams.

    Deterministic and offline (the same text gives the same vector in every process).
    Term frequency is damped (``1 + log tf``) and a few English stop words are ignored.
    Vectors are L2-normalised float32; a text without any word maps to the zero vector.

    Args:
        dim: Vector dimension.
        ngram: Inclusive range of character n-gram lengths taken from each word (with
            ``<``/``>`` boundary marks), or ``None`` for whole words only.
        char_weight: Total weight of a word's n-grams relative to the word itself.

    Example:
        >>> import anyio
        >>> emb = HashingEmbedder(dim=64)
        >>> anyio.run(emb.embed_query, "flash point").shape
        (64,)
    """

    def __init__(
        self, *, dim: int = 384, ngram: tuple[int, int] | None = (3, 5), char_weight: float = 0.5
    ) -> None:
        if dim < 2:
            raise ConfigurationError(f"HashingEmbedder dim must be >= 2 (got {dim})")
        if ngram is not None and not 1 <= ngram[0] <= ngram[1]:
            raise ConfigurationError(f"HashingEmbedder ngram must be (lo, hi), 1<=lo<=hi: {ngram}")
        self._dim = dim
        self._lo, self._hi = ngram if ngram is not None else (0, 0)
        self._char_weight = float(char_weight)
        suffix = "" if (ngram, char_weight) == ((3, 5), 0.5) else self._variant()
        self._name = f"hashing-{dim}{suffix}"

    def _variant(self) -> str:
        grams = f"-c{self._lo}{self._hi}" if self._hi else "-words"
        return grams + (f"-w{self._char_weight:g}" if self._hi else "")

    @property
    def name(self) -> str:
        """``"hashing-{dim}"`` (plus a variant tag for non-default options)."""
        return self._name

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    def __repr__(self) -> str:
        return f"HashingEmbedder(name={self._name!r})"

    async def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed a batch; large batches run in a worker thread. Shape ``(len(texts), dim)``."""
        items = check_texts(texts)
        if len(items) <= _THREAD_THRESHOLD:
            return self.embed_sync(items)
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self.embed_sync, items)

    async def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Embed one question. Shape ``(dim,)``."""
        vector: npt.NDArray[np.float32] = self.embed_sync([check_text(text)])[0]
        return vector

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Synchronous batch embedding (the CPU-bound core of the async methods)."""
        import numpy as np

        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            out[row] = self._vector(text)
        return out

    def _vector(self, text: str) -> npt.NDArray[np.float64]:
        import numpy as np

        counts = Counter(_TOKEN.findall(text.lower()))
        idx_parts, wt_parts = [], []
        for word, tf in counts.items():
            if word in _STOPWORDS:
                continue
            idx, wts = _features(word, self._dim, self._lo, self._hi, self._char_weight)
            idx_parts.append(idx)
            wt_parts.append(wts * (1.0 + math.log(tf)) if tf > 1 else wts)
        if not idx_parts:
            return np.zeros(self._dim)
        vec: npt.NDArray[np.float64] = np.bincount(
            np.concatenate(idx_parts), weights=np.concatenate(wt_parts), minlength=self._dim
        ).astype(np.float64, copy=False)
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm > 0 else vec
