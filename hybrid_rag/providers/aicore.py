"""SAP AI Core (generative AI hub) chat and embeddings (the ``[aicore]`` extra).

Built on the maintained ``sap-ai-sdk-gen`` (import path ``gen_ai_hub``, the same as the
deprecated ``generative-ai-hub-sdk``; tested with 7.4, needs >= 5.0). Credentials are read
by the SDK itself, first match wins: ``AICORE_SERVICE_KEY`` (a service key's JSON),
``AICORE_CLIENT_ID`` / ``AICORE_CLIENT_SECRET`` / ``AICORE_AUTH_URL`` /
``AICORE_BASE_URL`` (+ ``AICORE_RESOURCE_GROUP``), ``~/.aicore/config.json`` (or
``AICORE_HOME`` / ``AICORE_PROFILE``), then a Cloud Foundry ``VCAP_SERVICES`` binding.

Models are served through AI Core's OpenAI-compatible inference API: the SDK finds the
RUNNING deployment of the model (``GET /v2/lm/deployments``, cached), fetches an OAuth
token (cached until it nears expiry) and calls
``/v2/inference/deployments/<id>/chat/completions`` or ``.../embeddings``. All providers
of one resource group share one proxy client, so deployments and the token are fetched
once per process. The SDK's deployment lookup and token fetch are blocking; they run
once in a worker thread before the first call.

GPT models (``gpt-4o``, ``gpt-4.1``, ``gpt-5`` ...) and every model deployed with the
OpenAI chat API work as they are. Anthropic's Claude models (``anthropic--claude-...``)
are served by AI Core through AWS Bedrock's own API, not the OpenAI one: the native route
needs boto3 (``sap-ai-sdk-gen[amazon]``). We reach them instead through AI Core's
**orchestration** service, whose harmonised API is the same for every vendor, with no
extra dependency: ``AICoreLLM`` picks that route for ``anthropic--*`` models (and
for any model when ``route="orchestration"``).
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any, Literal

import anyio.to_thread

from hybrid_rag.errors import ConfigurationError, LLMError
from hybrid_rag.models import ChatMessage, Completion, Usage
from hybrid_rag.providers._base import BatchedEmbedder, ChatProvider, Metered
from hybrid_rag.providers._cache import ResponseCache
from hybrid_rag.providers._chat import (
    DEFAULT_MAX_TOKENS,
    StructuredOutput,
    chat_parts,
    response_format,
    sampling_params,
)
from hybrid_rag.providers._resilient import CallPolicy, PerLoop
from hybrid_rag.providers.openai import (
    chat_completion,
    embedding_dim,
    embedding_request,
    stream_chat,
)

__all__ = ["INSTALL_HINT", "AICoreEmbedder", "AICoreLLM", "shared_proxy_client"]

INSTALL_HINT = 'pip install "hybrid-rag[aicore]"'
Route = Literal["auto", "openai", "orchestration"]
_PROXIES: dict[tuple[tuple[str, str], ...], Any] = {}
_PROXIES_LOCK = threading.Lock()


def _import_gen_ai_hub() -> Any:
    try:
        import gen_ai_hub.proxy.native.openai as native
    except ImportError as exc:
        raise ImportError(f"the SAP AI Core providers need sap-ai-sdk-gen: {INSTALL_HINT}") from exc
    return native


def shared_proxy_client(
    resource_group: str | None = None, *, credentials: Mapping[str, str] | None = None
) -> Any:
    """The process-wide ``GenAIHubProxyClient`` of a resource group (made on first use).

    Reads credentials (no network); the token and deployments are fetched on first call.

    Args:
        resource_group: AI Core resource group; ``None`` = the SDK's default.
        credentials: ``base_url``, ``auth_url``, ``client_id``, ``client_secret`` to use
            instead of the SDK's own sources (a ``.env`` file read by ``from_env``).

    Raises:
        ConfigurationError: No AI Core credentials in any of the SDK's sources.
    """
    _import_gen_ai_hub()
    from gen_ai_hub.proxy.gen_ai_hub_proxy import GenAIHubProxyClient

    kwargs = dict(credentials or {})
    if resource_group is not None:
        kwargs["resource_group"] = resource_group
    key = tuple(sorted(kwargs.items()))
    with _PROXIES_LOCK:
        if key not in _PROXIES:
            try:
                _PROXIES[key] = GenAIHubProxyClient(**kwargs)
            except Exception as exc:  # the SDK raises plain exceptions for missing values
                raise ConfigurationError(
                    "SAP AI Core credentials not found or incomplete: set AICORE_SERVICE_KEY, "
                    "or AICORE_CLIENT_ID/AICORE_CLIENT_SECRET/AICORE_AUTH_URL/AICORE_BASE_URL, "
                    f"or ~/.aicore/config.json, or bind the service ({type(exc).__name__})"
                ) from None
        return _PROXIES[key]


class _AICoreBase(Metered):
    """What the chat and embedding providers share: proxy, clients, warm-up."""

    def __init__(
        self,
        model: str,
        *,
        resource_group: str | None,
        deployment_id: str | None,
        proxy_client: Any | None,
        timeout: float,
    ) -> None:
        if not model.strip():
            raise ConfigurationError("AI Core needs a model name, e.g. 'gpt-4o'")
        if proxy_client is None and importlib.util.find_spec("gen_ai_hub") is None:
            raise ImportError(f"the SAP AI Core providers need sap-ai-sdk-gen: {INSTALL_HINT}")
        self._model = model
        self._resource_group = resource_group
        self._deployment_id = deployment_id
        self._proxy = proxy_client
        self._timeout = timeout
        self._clients: PerLoop[Any] = PerLoop(self._make_client)
        self._warm = False

    def _proxy_client(self) -> Any:
        if self._proxy is None:
            self._proxy = shared_proxy_client(self._resource_group)
        return self._proxy

    def _make_client(self) -> Any:
        native = _import_gen_ai_hub()
        return native.AsyncOpenAI(
            proxy_client=self._proxy_client(), max_retries=0, timeout=self._timeout
        )

    def _target(self) -> dict[str, str]:
        if self._deployment_id:
            return {"deployment_id": self._deployment_id}
        return {"model_name": self._model}

    async def _ready(self) -> Any:
        """The loop's client, after a one-time blocking warm-up in a worker thread."""
        if not self._warm:
            await anyio.to_thread.run_sync(self._warm_up)
            self._warm = True
        return self._clients.get()

    def _warm_up(self) -> None:
        _import_gen_ai_hub()  # slow the first time: keep it off the event loop
        proxy = self._proxy_client()
        try:
            proxy.get_ai_core_token()
            if self._needs_deployment():
                proxy.select_deployment(**self._target())
        except ValueError as exc:  # the SDK's "No deployment found with ..."
            raise LLMError(f"aicore:{self._model}: {exc}") from exc

    def _needs_deployment(self) -> bool:
        return True

    def __repr__(self) -> str:
        group = self._resource_group or "default"
        return f"{type(self).__name__}(model={self._model!r}, resource_group={group!r})"


class AICoreLLM(_AICoreBase, ChatProvider):
    """A chat model deployed in SAP AI Core's generative AI hub.

    Args:
        model: The model name of a RUNNING deployment, e.g. ``"gpt-4o"`` or
            ``"anthropic--claude-4-sonnet"``.
        max_tokens: Reply limit when a call gives none. Always sent, because an omitted
            limit lets some deployments truncate answers.
        resource_group: AI Core resource group; default ``AICORE_RESOURCE_GROUP`` or
            ``"default"``.
        deployment_id: Use this deployment instead of looking the model up.
        route: ``"openai"`` (AI Core's OpenAI-compatible inference), ``"orchestration"``
            (harmonised API, any vendor) or ``"auto"``: orchestration for
            ``anthropic--*`` models, OpenAI otherwise.
        proxy_client: A ``gen_ai_hub`` proxy client; default the shared one.
        timeout, max_retries, max_concurrency, cache: The shared call policy, see
            ``OpenAILLM``.
        structured_output: How JSON replies are asked for, see ``OpenAILLM``.

    Raises:
        ConfigurationError: Empty model name or a bad option.
    """

    def __init__(
        self,
        model: str,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        resource_group: str | None = None,
        deployment_id: str | None = None,
        route: Route = "auto",
        proxy_client: Any | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        max_concurrency: int = 8,
        cache: ResponseCache | str | os.PathLike[str] | None = None,
        structured_output: StructuredOutput = "auto",
    ) -> None:
        super().__init__(
            model,
            resource_group=resource_group,
            deployment_id=deployment_id,
            proxy_client=proxy_client,
            timeout=timeout,
        )
        self._init_chat(max_tokens=max_tokens, structured=structured_output)
        self._route = _route(model, route)
        self._policy = CallPolicy(
            label=f"aicore:{model}",
            timeout=timeout,
            max_retries=max_retries,
            max_concurrency=max_concurrency,
            cache=cache,
        )

    def _needs_deployment(self) -> bool:
        return self._route == "openai"

    def _params(
        self, temperature: float, max_tokens: int, json_schema: Mapping[str, Any] | None, shape: str
    ) -> dict[str, Any]:
        params = {
            **sampling_params(self._model, temperature=temperature, max_tokens=max_tokens),
            **self._target(),
        }
        if json_schema is not None:
            fmt = response_format(json_schema, strict=False, mode=shape)
            if fmt is not None:
                params["response_format"] = fmt
        return params

    def _cache_parts(
        self, messages: Sequence[ChatMessage], params: Mapping[str, Any]
    ) -> dict[str, Any]:
        group = self._resource_group or "default"
        return chat_parts(f"aicore-{self._route}", group, self._model, messages, params)

    async def _send(
        self,
        messages: list[ChatMessage],
        params: dict[str, Any],
        json_schema: Mapping[str, Any] | None,
    ) -> Completion:
        if self._route == "orchestration":
            from hybrid_rag.providers._orchestration import orchestration_complete

            await self._ready()
            return await orchestration_complete(
                self._proxy_client(), model=self._model, messages=messages, params=params
            )
        return await chat_completion(
            await self._ready(), model=self._model, messages=messages, params=params
        )

    async def _open(
        self, messages: list[ChatMessage], params: dict[str, Any]
    ) -> AsyncIterator[str | Usage]:
        client = await self._ready()
        if self._route == "orchestration":
            from hybrid_rag.providers._orchestration import orchestration_stream

            source = orchestration_stream(
                self._proxy_client(), model=self._model, messages=messages, params=params
            )
        else:
            source = stream_chat(client, model=self._model, messages=messages, params=params)
        async with aclosing(source):
            async for item in source:
                yield item


class AICoreEmbedder(_AICoreBase, BatchedEmbedder):
    """Embeddings from a model deployed in SAP AI Core, in batches.

    Args:
        model: e.g. ``"text-embedding-3-small"``.
        dimensions: Vector size (sent to the API); required for a model whose size is
            not known here.
        batch_size: Texts per request.
        resource_group, deployment_id, proxy_client: As for ``AICoreLLM``.
        timeout, max_retries, max_concurrency, cache: The shared call policy.

    Raises:
        ConfigurationError: Unknown dimension or a bad option.
    """

    def __init__(
        self,
        model: str,
        *,
        dimensions: int | None = None,
        batch_size: int = 128,
        resource_group: str | None = None,
        deployment_id: str | None = None,
        proxy_client: Any | None = None,
        timeout: float = 60.0,
        max_retries: int = 4,
        max_concurrency: int = 4,
        cache: ResponseCache | str | os.PathLike[str] | None = None,
    ) -> None:
        _AICoreBase.__init__(
            self,
            model,
            resource_group=resource_group,
            deployment_id=deployment_id,
            proxy_client=proxy_client,
            timeout=timeout,
        )
        BatchedEmbedder.__init__(
            self,
            name=model if dimensions is None else f"{model}@{dimensions}",
            dim=embedding_dim(model, dimensions),
            batch_size=batch_size,
            policy=CallPolicy(
                label=f"aicore:{model}",
                timeout=timeout,
                max_retries=max_retries,
                max_concurrency=max_concurrency,
                cache=cache,
            ),
            cache_parts={"provider": "aicore", "endpoint": resource_group or "default"},
        )
        self._dimensions = dimensions

    async def _request(self, texts: list[str]) -> list[list[float]]:
        client = await self._ready()
        return await embedding_request(
            _Targeted(client, self._target()),
            model=self._model,
            texts=texts,
            dimensions=self._dimensions,
        )


class _Targeted:
    """Adds the deployment selector (model name or id) to ``embeddings.create`` calls."""

    def __init__(self, client: Any, target: Mapping[str, str]) -> None:
        self.embeddings = self
        self._client = client
        self._target = dict(target)

    async def create(self, **kwargs: Any) -> Any:
        kwargs.pop("model", None)
        return await self._client.embeddings.create(**kwargs, **self._target)


def _route(model: str, route: Route) -> Literal["openai", "orchestration"]:
    if route == "auto":
        return "orchestration" if model.startswith("anthropic--") else "openai"
    if route not in ("openai", "orchestration"):
        raise ConfigurationError(f"route must be 'auto', 'openai' or 'orchestration': {route!r}")
    return route
