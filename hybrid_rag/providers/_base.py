"""What every bundled provider shares: the call policy, usage, batched embedding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hybrid_rag.models import Usage
from hybrid_rag.providers._resilient import CallPolicy, PerLoop, check_batch_size

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["BatchedEmbedder", "Metered"]


class Metered:
    """A provider whose calls go through one ``CallPolicy`` (and SDK clients)."""

    _policy: CallPolicy
    _clients: PerLoop[Any] | None = None

    @property
    def usage(self) -> Usage:
        """Calls, tokens, embedded texts and cache hits of this provider so far."""
        return self._policy.meter.usage

    async def aclose(self) -> None:
        """Close the SDK's HTTP clients (idempotent); the provider stays usable."""
        if self._clients is not None:
            for client in self._clients.values():
                await client.close()


class BatchedEmbedder(Metered):
    """An ``Embedder`` that sends ``_request`` batches.

    Subclasses implement ``_request(texts) -> rows`` (one HTTP call or SDK call).
    """

    def __init__(
        self,
        *,
        name: str,
        dim: int,
        batch_size: int,
        policy: CallPolicy,
        cache_parts: Mapping[str, Any],
    ) -> None:
        self._name = name
        self._dim = dim
        self._batch_size = check_batch_size(batch_size)
        self._policy = policy
        self._cache_parts = {**cache_parts, "model": name, "dim": dim}

    @property
    def name(self) -> str:
        """The model name (with the dimension when shortened)."""
        return self._name

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    async def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed passages in batches of ``batch_size``; shape ``(len(texts), dim)``.

        Cached vectors cost no call; identical texts are sent once; batches run
        concurrently within the provider's limit.
        """
        return await self._policy.embed(
            self._cache_parts, texts, self._request, batch_size=self._batch_size, dim=self._dim
        )

    async def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Embed one question (cached alike); shape ``(dim,)``."""
        vector: npt.NDArray[np.float32] = (await self.embed_documents([text]))[0]
        return vector

    async def _request(self, texts: list[str]) -> Any:
        raise NotImplementedError
