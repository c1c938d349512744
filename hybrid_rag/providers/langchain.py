"""Any LangChain chat model or embeddings object as a provider (the ``[langchain]`` extra).

Bedrock, Vertex, a company gateway, or anything else LangChain wraps plugs in unchanged
and gains the shared call policy (timeout, retries on 429 / 5xx / timeouts, concurrency
limit, response cache, usage). Set the model's own options (temperature, max tokens)
on the LangChain object; the ones of a call are passed where the model accepts them.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from hybrid_rag.errors import ConfigurationError, LLMError
from hybrid_rag.models import ChatMessage, Completion, Usage
from hybrid_rag.providers._base import BatchedEmbedder, ChatProvider
from hybrid_rag.providers._cache import ResponseCache
from hybrid_rag.providers._chat import DEFAULT_MAX_TOKENS, chat_parts
from hybrid_rag.providers._resilient import CallPolicy, ShapeRejected

__all__ = ["INSTALL_HINT", "LangChainEmbedder", "LangChainLLM"]

INSTALL_HINT = 'pip install "hybrid-rag[langchain]"'


def _messages(messages: Sequence[ChatMessage]) -> list[Any]:
    try:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    except ImportError as exc:
        raise ImportError(f"LangChainLLM needs langchain-core: {INSTALL_HINT}") from exc
    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds[m.role](content=m.content) for m in messages]


def _text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content blocks
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)
    raise LLMError(f"unexpected LangChain reply: {type(message).__name__}")


def _tokens(message: Any) -> tuple[int, int]:
    meta = getattr(message, "usage_metadata", None) or {}
    return int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))


def _model_name(obj: Any) -> str:
    for attr in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(obj, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(obj).__name__


class LangChainLLM(ChatProvider):
    """An ``LLMProvider`` over a LangChain chat model.

    Structured output (``json_schema``) uses the model's ``with_structured_output``
    when it has one, else the schema goes into the system message and the reply is read
    tolerantly.

    Args:
        chat_model: A ``langchain_core`` ``BaseChatModel`` (e.g. ``ChatBedrock``).
        name: Model name for cache keys and logs; default read from the model.
        timeout, max_retries, max_concurrency, cache: The shared call policy, see
            ``OpenAILLM``.

    Raises:
        ConfigurationError: ``chat_model`` has no ``ainvoke``, or a bad option.
    """

    _ladder = ("native", "text")

    def __init__(
        self,
        chat_model: Any,
        *,
        name: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        max_concurrency: int = 8,
        cache: ResponseCache | str | os.PathLike[str] | None = None,
    ) -> None:
        if not callable(getattr(chat_model, "ainvoke", None)):
            raise ConfigurationError(
                f"LangChainLLM needs a LangChain chat model, got {type(chat_model).__name__}"
            )
        self._chat_model = chat_model
        self._model = name or _model_name(chat_model)
        self._init_chat(max_tokens=DEFAULT_MAX_TOKENS, structured="auto")
        self._policy = CallPolicy(
            label=f"langchain:{self._model}",
            timeout=timeout,
            max_retries=max_retries,
            max_concurrency=max_concurrency,
            cache=cache,
        )

    def __repr__(self) -> str:
        return f"LangChainLLM(model={type(self._chat_model).__name__}, name={self._model!r})"

    def _cache_parts(
        self, messages: Sequence[ChatMessage], params: Mapping[str, Any]
    ) -> dict[str, Any]:
        return chat_parts(
            "langchain", type(self._chat_model).__name__, self._model, messages, params
        )

    def _params(
        self, temperature: float, max_tokens: int, json_schema: Mapping[str, Any] | None, shape: str
    ) -> dict[str, Any]:
        # the model's own options stay on the LangChain object; these key the cache
        native = json_schema if shape == "native" else None
        return {"temperature": temperature, "max_tokens": max_tokens, "schema": native}

    async def _send(
        self,
        messages: list[ChatMessage],
        params: dict[str, Any],
        json_schema: Mapping[str, Any] | None,
    ) -> Completion:
        schema = params.get("schema")
        if schema is None:
            reply = await self._chat_model.ainvoke(_messages(messages))
            prompt, completion = _tokens(reply)
            return Completion(text=_text(reply), prompt_tokens=prompt, completion_tokens=completion)
        try:
            runnable = self._chat_model.with_structured_output(dict(schema), include_raw=True)
        except (NotImplementedError, AttributeError, TypeError, ValueError) as exc:
            raise ShapeRejected(f"{self._model}: no structured output: {exc}") from exc
        reply = await runnable.ainvoke(_messages(messages))
        if reply.get("parsing_error") or reply.get("parsed") is None:
            raise LLMError(f"{self._model}: no structured reply: {reply.get('parsing_error')}")
        prompt, completion = _tokens(reply.get("raw"))
        text = json.dumps(reply["parsed"], ensure_ascii=False)
        return Completion(text=text, prompt_tokens=prompt, completion_tokens=completion)

    async def _open(
        self, messages: list[ChatMessage], params: dict[str, Any]
    ) -> AsyncIterator[str | Usage]:
        async for chunk in self._chat_model.astream(_messages(messages)):
            prompt, completion = _tokens(chunk)
            if prompt or completion:
                yield Usage(prompt_tokens=prompt, completion_tokens=completion)
            text = _text(chunk)
            if text:
                yield text


class LangChainEmbedder(BatchedEmbedder):
    """An ``Embedder`` over a LangChain ``Embeddings`` object.

    Args:
        embeddings: A ``langchain_core`` ``Embeddings`` (``aembed_documents``).
        dim: Its vector size (the protocol needs it before any call).
        name: Model name for cache keys; default read from the object.
        batch_size: Texts per ``aembed_documents`` call.
        timeout, max_retries, max_concurrency, cache: The shared call policy.

    Raises:
        ConfigurationError: Not an embeddings object, or a bad option.
    """

    def __init__(
        self,
        embeddings: Any,
        *,
        dim: int,
        name: str | None = None,
        batch_size: int = 128,
        timeout: float = 60.0,
        max_retries: int = 4,
        max_concurrency: int = 4,
        cache: ResponseCache | str | os.PathLike[str] | None = None,
    ) -> None:
        if not callable(getattr(embeddings, "aembed_documents", None)):
            raise ConfigurationError(
                f"LangChainEmbedder needs LangChain Embeddings, got {type(embeddings).__name__}"
            )
        if dim < 1:
            raise ConfigurationError(f"dim must be >= 1 (got {dim})")
        self._embeddings = embeddings
        name = name or _model_name(embeddings)
        super().__init__(
            name=name,
            dim=dim,
            batch_size=batch_size,
            policy=CallPolicy(
                label=f"langchain:{name}",
                timeout=timeout,
                max_retries=max_retries,
                max_concurrency=max_concurrency,
                cache=cache,
            ),
            cache_parts={"provider": "langchain", "endpoint": type(embeddings).__name__},
        )

    def __repr__(self) -> str:
        return f"LangChainEmbedder(model={type(self._embeddings).__name__}, name={self._name!r})"

    async def _request(self, texts: list[str]) -> Any:
        return await self._embeddings.aembed_documents(texts)
