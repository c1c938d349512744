"""Embeddings computed inside HANA with ``VECTOR_EMBEDDING`` (no AI Core call).

One SQL statement embeds a whole batch (``SELECT ... FROM DUMMY UNION ALL ...``, every
text a bound parameter). HANA returns the vectors in its binary format (the pool
connects with ``vectoroutputtype="memoryview"``); they are L2-normalised here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from hybrid_rag._checks import check_text, check_texts
from hybrid_rag.errors import ConfigurationError, InputError, StoreError
from hybrid_rag.stores.hana._connection import (
    HanaConnectionPool,
    HanaSettings,
    engine_message,
    pool_for,
)
from hybrid_rag.stores.hana.vectors import _parse_vector

__all__ = ["HanaInternalEmbedder"]

F32 = npt.NDArray[np.float32]
_KINDS = ("DOCUMENT", "QUERY")


class HanaInternalEmbedder:
    """An ``Embedder`` running HANA's ``VECTOR_EMBEDDING``.

    Args:
        settings: Connection settings (ignored when ``pool`` is given).
        pool: A connection pool to use (closed by ``close``).
        model: HANA embedding model id.
        dim: Dimension the model returns (768 for ``SAP_NEB.20240715``).
        batch_size: Texts per SQL statement.
    """

    def __init__(
        self,
        settings: HanaSettings | None = None,
        *,
        pool: HanaConnectionPool | None = None,
        model: str = "SAP_NEB.20240715",
        dim: int = 768,
        batch_size: int = 64,
    ) -> None:
        if dim < 1 or batch_size < 1:
            raise ConfigurationError("dim and batch_size must be >= 1")
        self._pool = pool_for(settings, pool, owner="HanaInternalEmbedder")
        self._model, self._dim, self._batch = model, dim, batch_size

    def __repr__(self) -> str:
        return f"HanaInternalEmbedder(model={self._model!r}, dim={self._dim})"

    @property
    def name(self) -> str:
        """``"hana:<model>"``."""
        return f"hana:{self._model}"

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    async def embed_documents(self, texts: Sequence[str]) -> F32:
        """Embed passages (``'DOCUMENT'``); shape ``(len(texts), dim)``."""
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self.embed_sync, check_texts(texts), "DOCUMENT")

    async def embed_query(self, text: str) -> F32:
        """Embed a question (``'QUERY'``); shape ``(dim,)``."""
        import anyio.to_thread

        batch = [check_text(text)]
        out: F32 = (await anyio.to_thread.run_sync(self.embed_sync, batch, "QUERY"))[0]
        return out

    def embed_sync(self, texts: Sequence[str], kind: Literal["DOCUMENT", "QUERY"]) -> F32:
        """Blocking batch embedding in HANA.

        Raises:
            InputError: ``kind`` is not ``"DOCUMENT"`` or ``"QUERY"`` (it is written into
                the SQL text as a keyword, so nothing else may pass).
            StoreError: HANA failed.
        """
        if kind not in _KINDS:
            raise InputError(f"kind must be 'DOCUMENT' or 'QUERY', got {kind!r}")
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for start in range(0, len(texts), self._batch):
            batch = list(texts[start : start + self._batch])
            out[start : start + len(batch)] = self._embed_batch(batch, kind)
        return out

    def _embed_batch(self, texts: list[str], kind: str) -> F32:
        kind = _KINDS[_KINDS.index(kind)]  # the constant itself, never caller text
        one = f'SELECT ? AS "I", VECTOR_EMBEDDING(?, \'{kind}\', ?) AS "V" FROM DUMMY'
        sql = " UNION ALL ".join([one] * len(texts)) + ' ORDER BY "I"'
        params: list[Any] = []
        for i, text in enumerate(texts):
            params += [i, text, self._model]

        def run(conn: Any) -> list[Any]:
            cur = conn.cursor()
            try:
                cur.execute(sql, params)
                return [row[1] for row in cur.fetchall()]
            finally:
                cur.close()

        try:
            values = self._pool.run(run)
        except self._pool.error_types as exc:
            raise StoreError(f"VECTOR_EMBEDDING failed: {engine_message(exc)}") from None
        vecs = np.stack([_parse_vector(v) for v in values]) if values else np.zeros((0, self._dim))
        if vecs.shape != (len(texts), self._dim):
            raise StoreError(
                f"HANA returned vectors of shape {vecs.shape}, expected dim {self._dim}"
            )
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        result: F32 = (vecs / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        return result

    def close(self) -> None:
        """Close the pool's connections; idempotent."""
        self._pool.close()
