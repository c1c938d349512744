"""SAP AI Core's orchestration service: one harmonised chat API for every model vendor.

``AICoreLLM`` uses it for Claude (``anthropic--*``), whose
native AI Core route speaks AWS Bedrock's API and needs boto3. The service URL is found
once (the RUNNING deployment of scenario ``orchestration``, a blocking lookup done in a
worker thread) and kept per proxy client; replies can be streamed (SSE). Messages go in
as the orchestration template;
note that the service treats ``{{?name}}`` in a message as a template placeholder.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import anyio.to_thread

from hybrid_rag.errors import LLMError
from hybrid_rag.models import ChatMessage, Completion, Usage

__all__ = ["orchestration_complete", "orchestration_stream"]

_SERVICES: dict[int, Any] = {}
_LOCK = threading.Lock()


def _service(proxy: Any) -> Any:
    from gen_ai_hub.orchestration.service import OrchestrationService

    with _LOCK:
        if id(proxy) not in _SERVICES:
            try:
                _SERVICES[id(proxy)] = OrchestrationService(proxy_client=proxy)
            except ValueError as exc:  # "No Orchestration deployment found!"
                raise LLMError(f"SAP AI Core orchestration: {exc}") from exc
        return _SERVICES[id(proxy)]


def _config(model: str, messages: Sequence[ChatMessage], params: Mapping[str, Any]) -> Any:
    from gen_ai_hub.orchestration.models.config import OrchestrationConfig
    from gen_ai_hub.orchestration.models.llm import LLM
    from gen_ai_hub.orchestration.models.message import (
        AssistantMessage,
        SystemMessage,
        UserMessage,
    )
    from gen_ai_hub.orchestration.models.template import Template

    kinds = {"system": SystemMessage, "user": UserMessage, "assistant": AssistantMessage}
    template = Template(messages=[kinds[m.role](m.content) for m in messages])
    if params.get("response_format", {}).get("type") == "json_schema":
        from gen_ai_hub.orchestration.models.response_format import ResponseFormatJsonSchema

        spec = params["response_format"]["json_schema"]
        template.response_format = ResponseFormatJsonSchema(
            name=spec["name"], description="reply", schema=spec["schema"], strict=spec["strict"]
        )
    llm_params = {k: params[k] for k in ("max_tokens", "temperature") if k in params}
    return OrchestrationConfig(template=template, llm=LLM(name=model, parameters=llm_params))


async def orchestration_complete(
    proxy: Any, *, model: str, messages: Sequence[ChatMessage], params: Mapping[str, Any]
) -> Completion:
    """One chat call through the orchestration service."""
    service = await anyio.to_thread.run_sync(_service, proxy)
    response = await service.arun(config=_config(model, messages, params))
    result = response.orchestration_result
    if not result.choices:
        raise LLMError(f"aicore:{model}: orchestration reply without choices")
    text = result.choices[0].message.content
    return Completion(
        text=text if isinstance(text, str) else str(text),
        prompt_tokens=result.usage.prompt_tokens,
        completion_tokens=result.usage.completion_tokens,
    )


async def orchestration_stream(
    proxy: Any, *, model: str, messages: Sequence[ChatMessage], params: Mapping[str, Any]
) -> AsyncGenerator[str | Usage, None]:
    """Text pieces (and the token counts when sent) of a streamed orchestration call."""
    service = await anyio.to_thread.run_sync(_service, proxy)
    events = await service.astream(config=_config(model, messages, params))
    async for event in events:
        result = event.orchestration_result
        for choice in result.choices:
            if isinstance(choice.delta.content, str) and choice.delta.content:
                yield choice.delta.content
        if result.usage is not None:
            yield Usage(
                prompt_tokens=result.usage.prompt_tokens,
                completion_tokens=result.usage.completion_tokens,
            )
