"""What every bundled provider shares: the call policy, usage, one chat-call wrapper,
structured-output negotiation, batched embedding."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

import anyio

from hybrid_rag.errors import ConfigurationError
from hybrid_rag.models import ChatMessage, Completion, Usage
from hybrid_rag.providers._chat import (
    LADDER,
    chat_parts,
    check_json_reply,
    with_schema_instruction,
)
from hybrid_rag.providers._resilient import CallPolicy, PerLoop, ShapeRejected, check_batch_size

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["BatchedEmbedder", "ChatProvider", "Metered"]

log = logging.getLogger("hybrid_rag.providers")


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


class ChatProvider(Metered):
    """The one call wrapper of every bundled chat provider (``LLMProvider``).

    ``complete`` and ``stream`` are written here once: the request's cache identity, the
    call policy, the JSON check, and the structured-output shape. A subclass says how to
    send: ``_params`` (the request parameters for a shape), ``_send`` (one call) and
    ``_open`` (one streamed call).

    **Structured output.** The shapes in ``_ladder`` are tried most constrained first;
    when the server rejects one (a 4xx, or a 5xx that says the request is invalid) the
    next is used at once, without retrying, and remembered for the provider's life
    (logged once). Shapes other than the first put the schema in the prompt too, at the
    end of the system message, and the reply is read tolerantly
    (``hybrid_rag.providers._chat.read_json_object``). Until one structured call has
    settled the shape, structured calls go one at a time (``_probing``): calls started
    together do not all send a shape the server refuses.
    """

    _model: str
    _max_tokens: int
    _ladder: tuple[str, ...] = LADDER
    _shape: int = 0
    _fixed_shape: bool = False
    _settled: bool = False
    _probing: PerLoop[anyio.Lock]

    def _init_chat(self, *, max_tokens: int, structured: str) -> None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
            raise ConfigurationError(f"max_tokens must be an int >= 1 (got {max_tokens!r})")
        self._max_tokens = max_tokens
        self._probing = PerLoop(anyio.Lock)
        if structured == "auto":
            self._shape, self._fixed_shape = 0, False
        elif structured in self._ladder:
            self._shape, self._fixed_shape = self._ladder.index(structured), True
            self._settled = True
        else:
            shapes = ", ".join(repr(x) for x in ("auto", *self._ladder))
            raise ConfigurationError(f"structured_output must be one of {shapes}: {structured!r}")

    @property
    def name(self) -> str:
        """The model name."""
        return self._model

    @property
    def structured_output(self) -> str:
        """The structured-output shape in use (found on the first structured call)."""
        return self._ladder[self._shape]

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        """Answer a conversation; see ``LLMProvider``."""
        limit = max_tokens or self._max_tokens
        if json_schema is None:
            return await self._call(list(messages), self._params(temperature, limit, None, "text"))
        if not self._settled:
            async with self._probing.get():  # one probe at a time until the shape is known
                if not self._settled:
                    done = await self._structured(messages, temperature, limit, json_schema)
                    self._settled = True
                    return done
        return await self._structured(messages, temperature, limit, json_schema)

    async def _structured(
        self,
        messages: Sequence[ChatMessage],
        temperature: float,
        limit: int,
        json_schema: Mapping[str, Any],
    ) -> Completion:
        """One structured call, stepping down the ladder while the server refuses shapes."""
        while True:
            tried = self._shape
            shape = self._ladder[tried]
            sent = list(messages) if tried == 0 else with_schema_instruction(messages, json_schema)
            params = self._params(temperature, limit, json_schema, shape)
            try:
                return await self._call(sent, params, json_schema)
            except ShapeRejected as exc:
                if self._fixed_shape or tried + 1 >= len(self._ladder):
                    raise
                if self._shape == tried:  # concurrent calls refused alike step down once
                    self._shape = tried + 1
                    log.warning(
                        "%s: the server does not take structured output as %s (%s); using %s",
                        self._policy.label,
                        shape,
                        str(exc)[:160],
                        self._ladder[self._shape],
                    )

    async def _call(
        self,
        messages: list[ChatMessage],
        params: dict[str, Any],
        json_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        return await self._policy.complete(
            self._cache_parts(messages, params),
            lambda: self._send(messages, params, json_schema),
            check=lambda done: check_json_reply(done, json_schema, self._model),
        )

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> AsyncIterator[str]:
        """Answer as text pieces while they arrive; see ``LLMProvider``."""
        sent = list(messages)
        params = self._params(temperature, max_tokens or self._max_tokens, None, "text")
        pieces = self._policy.stream(
            self._cache_parts(sent, params), lambda: self._open(sent, params)
        )
        async with aclosing(pieces):  # a consumer that stops early frees the slot at once
            async for piece in pieces:
                yield piece

    # --- what a provider implements ---------------------------------------------------

    def _cache_parts(
        self, messages: Sequence[ChatMessage], params: Mapping[str, Any]
    ) -> dict[str, Any]:
        """What identifies a request in the response cache (provider, endpoint, model ...)."""
        return chat_parts(type(self).__name__, "", self._model, messages, params)

    def _params(
        self, temperature: float, max_tokens: int, json_schema: Mapping[str, Any] | None, shape: str
    ) -> dict[str, Any]:
        raise NotImplementedError

    async def _send(
        self,
        messages: list[ChatMessage],
        params: dict[str, Any],
        json_schema: Mapping[str, Any] | None,
    ) -> Completion:
        raise NotImplementedError

    def _open(
        self, messages: list[ChatMessage], params: dict[str, Any]
    ) -> AsyncIterator[str | Usage]:
        raise NotImplementedError


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
