"""OpenAI-compatible chat and embeddings (the ``[openai]`` extra).

One client for every server that speaks the OpenAI API: OpenAI itself, Azure OpenAI
(``base_url="https://<resource>.openai.azure.com/openai/v1/"``), vLLM, Ollama
(``http://localhost:11434/v1``), LM Studio, LiteLLM and company gateways. The ``openai``
SDK is imported on first use; its own retries are off (``max_retries=0``) because the
shared policy of ``hybrid_rag.providers._resilient`` retries, limits, caches and counts.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hybrid_rag.errors import ConfigurationError, LLMError
from hybrid_rag.models import ChatMessage, Completion, Usage
from hybrid_rag.providers._base import BatchedEmbedder, ChatProvider
from hybrid_rag.providers._cache import ResponseCache
from hybrid_rag.providers._chat import (
    DEFAULT_MAX_TOKENS,
    StructuredOutput,
    chat_parts,
    openai_messages,
    response_format,
    sampling_params,
)
from hybrid_rag.providers._resilient import CallPolicy, PerLoop

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = [
    "INSTALL_HINT",
    "OpenAIEmbedder",
    "OpenAILLM",
    "chat_completion",
    "joined_stream",
    "stream_chat",
]

INSTALL_HINT = 'pip install "hybrid-rag[openai]"'
_KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_LOCAL_KEY = "not-needed"  # vLLM / Ollama ignore the key, the SDK insists on one


def _client_factory(*, base_url: str | None, api_key: str, timeout: float) -> Any:
    try:
        import openai
    except ImportError as exc:
        raise ImportError(f"the OpenAI providers need the openai package: {INSTALL_HINT}") from exc

    def make() -> AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout
        )

    return make


def _api_key(api_key: str | None, base_url: str | None) -> str:
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url:
        return _LOCAL_KEY
    raise ConfigurationError(
        "OpenAI needs an API key: pass api_key=... or set OPENAI_API_KEY "
        "(a local server such as vLLM or Ollama needs only base_url=...)"
    )


def _endpoint(base_url: str | None) -> str:
    return (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip(
        "/"
    )


async def chat_completion(
    client: Any, *, model: str, messages: Sequence[ChatMessage], params: Mapping[str, Any]
) -> Completion:
    """One chat-completions call on an OpenAI-style async client (also used by AI Core)."""
    response = await client.chat.completions.create(
        model=model, messages=openai_messages(messages), **params
    )
    choices = getattr(response, "choices", None)
    if not choices:
        raise LLMError(f"{model}: response without choices: {str(response)[:200]!r}")
    text = choices[0].message.content
    if text is None:
        raise LLMError(f"{model}: response without text (finish: {choices[0].finish_reason})")
    usage = getattr(response, "usage", None)
    return Completion(
        text=text,
        prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
        completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
        finish_reason=getattr(choices[0], "finish_reason", None),
    )


async def stream_chat(
    client: Any, *, model: str, messages: Sequence[ChatMessage], params: Mapping[str, Any]
) -> AsyncGenerator[str | Usage, None]:
    """Text pieces (and, last, the token counts) of a streamed chat completion.

    The HTTP response is closed when the consumer stops early or is cancelled, so a
    server that stops generating on a closed connection (llama.cpp, vLLM, OpenAI) does
    no more work for it.
    """
    stream = await client.chat.completions.create(
        model=model,
        messages=openai_messages(messages),
        stream=True,
        stream_options={"include_usage": True},
        **params,
    )
    try:
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content
            if chunk.choices and chunk.choices[0].finish_reason == "length":
                yield _CUT
            if getattr(chunk, "usage", None):
                yield Usage(
                    prompt_tokens=chunk.usage.prompt_tokens or 0,
                    completion_tokens=chunk.usage.completion_tokens or 0,
                )
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            await close()


_CUT = Usage()  # marker: the streamed reply stopped at its token limit (counts nothing)


async def joined_stream(pieces: AsyncIterator[str | Usage]) -> Completion:
    """One ``Completion`` from a streamed call (token counts estimated when none came)."""
    text: list[str] = []
    used, cut = Usage(), False
    async for item in pieces:
        if item is _CUT:
            cut = True
        elif isinstance(item, Usage):
            used = used + item
        else:
            text.append(item)
    return Completion(
        text="".join(text),
        prompt_tokens=used.prompt_tokens,
        completion_tokens=used.completion_tokens or len(text),
        finish_reason="length" if cut else "stop",
    )


class OpenAILLM(ChatProvider):
    """A chat model behind any OpenAI-compatible endpoint.

    Args:
        model: Model (or Azure deployment) name, e.g. ``"gpt-4o-mini"``.
        base_url: API root; default ``OPENAI_BASE_URL`` or OpenAI's.
        api_key: Secret key; default ``OPENAI_API_KEY`` (not needed with a local
            ``base_url``). Never shown in ``repr`` or logs.
        max_tokens: Reply limit used when a call gives none.
        timeout: Seconds per attempt (per piece when streaming). Inside a question's time
            budget an attempt may use what is left of the budget instead.
        max_retries: Retries on 429 / 5xx / timeouts / connection errors.
        max_concurrency: Calls in flight at once (drops to 1 by itself when a call times
            out behind others: a server that serves one request at a time).
        cache: A ``ResponseCache`` or a directory for one;
            ``None`` caches nothing.
        strict_schema: Send ``json_schema`` with ``strict: true`` (OpenAI then requires
            ``additionalProperties: false`` and every property required).
        structured_output: How JSON replies are asked for (``StructuredOutput``):
            ``"auto"`` finds what the server takes on the first structured call.
        stream_completions: Send ``complete`` calls as streamed requests, so a call that
            is cut or cancelled closes its connection and the server stops generating
            (llama.cpp, vLLM); token counts come from the server's usage chunk or are
            estimated.

    Raises:
        ConfigurationError: No API key for OpenAI's own endpoint, or a bad option.
        ImportError: The ``[openai]`` extra is not installed.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout: float = 60.0,
        max_retries: int = 4,
        max_concurrency: int = 8,
        cache: ResponseCache | str | os.PathLike[str] | None = None,
        strict_schema: bool = True,
        structured_output: StructuredOutput = "auto",
        stream_completions: bool = False,
    ) -> None:
        self._model = model
        self._endpoint = _endpoint(base_url)
        self._init_chat(max_tokens=max_tokens, structured=structured_output)
        self._strict = strict_schema
        self._stream_completions = stream_completions
        make = _client_factory(
            base_url=self._endpoint, api_key=_api_key(api_key, base_url), timeout=timeout
        )
        self._clients: PerLoop[Any] = PerLoop(make)
        self._policy = CallPolicy(
            label=f"openai:{model}",
            timeout=timeout,
            max_retries=max_retries,
            max_concurrency=max_concurrency,
            cache=cache,
        )

    def __repr__(self) -> str:
        return f"OpenAILLM(model={self._model!r}, base_url={self._endpoint!r})"

    def _cache_parts(
        self, messages: Sequence[ChatMessage], params: Mapping[str, Any]
    ) -> dict[str, Any]:
        return chat_parts("openai", self._endpoint, self._model, messages, params)

    def _params(
        self, temperature: float, max_tokens: int, json_schema: Mapping[str, Any] | None, shape: str
    ) -> dict[str, Any]:
        params = sampling_params(self._model, temperature=temperature, max_tokens=max_tokens)
        if json_schema is not None:
            fmt = response_format(json_schema, strict=self._strict, mode=shape)
            if fmt is not None:
                params["response_format"] = fmt
        return params

    async def _send(
        self,
        messages: list[ChatMessage],
        params: dict[str, Any],
        json_schema: Mapping[str, Any] | None,
    ) -> Completion:
        if self._stream_completions:
            return await joined_stream(self._open(messages, params))
        return await chat_completion(
            self._clients.get(), model=self._model, messages=messages, params=params
        )

    def _open(
        self, messages: list[ChatMessage], params: dict[str, Any]
    ) -> AsyncIterator[str | Usage]:
        return stream_chat(self._clients.get(), model=self._model, messages=messages, params=params)


class OpenAIEmbedder(BatchedEmbedder):
    """Embeddings from any OpenAI-compatible ``/embeddings`` endpoint, in batches.

    Args:
        model: e.g. ``"text-embedding-3-small"``, or a vLLM / Ollama model name.
        base_url: API root; default ``OPENAI_BASE_URL`` or OpenAI's.
        api_key: Secret key; default ``OPENAI_API_KEY``. Never shown in ``repr``.
        dimensions: Vector size. Sent to the API (``text-embedding-3-*`` shorten their
            vectors to it); required for a model whose size is not known here.
        batch_size: Texts per request (1,000 chunks = 8 requests at 128).
        timeout, max_retries, max_concurrency, cache: As for ``OpenAILLM``.

    Raises:
        ConfigurationError: Unknown dimension, no API key, or a bad option.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 128,
        timeout: float = 60.0,
        max_retries: int = 4,
        max_concurrency: int = 4,
        cache: ResponseCache | str | os.PathLike[str] | None = None,
    ) -> None:
        self._model = model
        self._endpoint = _endpoint(base_url)
        self._dimensions = dimensions
        make = _client_factory(
            base_url=self._endpoint, api_key=_api_key(api_key, base_url), timeout=timeout
        )
        self._clients: PerLoop[Any] = PerLoop(make)
        super().__init__(
            name=model if dimensions is None else f"{model}@{dimensions}",
            dim=embedding_dim(model, dimensions),
            batch_size=batch_size,
            policy=CallPolicy(
                label=f"openai:{model}",
                timeout=timeout,
                max_retries=max_retries,
                max_concurrency=max_concurrency,
                cache=cache,
            ),
            cache_parts={"provider": "openai", "endpoint": self._endpoint},
        )

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self._model!r}, base_url={self._endpoint!r})"

    async def _request(self, texts: list[str]) -> list[list[float]]:
        return await embedding_request(
            self._clients.get(), model=self._model, texts=texts, dimensions=self._dimensions
        )


def embedding_dim(model: str, dimensions: int | None) -> int:
    """The vector size of ``model``: ``dimensions`` when given, else a known model's."""
    if dimensions is not None:
        if dimensions < 1:
            raise ConfigurationError(f"dimensions must be >= 1 (got {dimensions})")
        return dimensions
    known = _KNOWN_DIMS.get(model)
    if known is None:
        raise ConfigurationError(
            f"unknown vector size of embedding model {model!r}: pass dimensions=<size>"
        )
    return known


async def embedding_request(
    client: Any, *, model: str, texts: list[str], dimensions: int | None
) -> list[list[float]]:
    """One ``/embeddings`` call on an OpenAI-style async client; rows in input order."""
    extra: dict[str, Any] = {} if dimensions is None else {"dimensions": dimensions}
    response = await client.embeddings.create(
        model=model, input=texts, encoding_format="float", **extra
    )
    rows = sorted(response.data, key=lambda item: item.index)
    return [list(item.embedding) for item in rows]
