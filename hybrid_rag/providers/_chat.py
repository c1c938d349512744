"""Chat helpers shared by the providers: message conversion, cache keys, JSON output."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hybrid_rag.errors import LLMError
from hybrid_rag.models import ChatMessage, Completion

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "chat_parts",
    "check_json_reply",
    "openai_messages",
    "response_format",
    "sampling_params",
    "schema_instruction",
]

DEFAULT_MAX_TOKENS = 2048
"""Reply limit when a call gives none: explicit, because some back ends default low."""


def openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """Messages in the OpenAI chat format."""
    return [{"role": m.role, "content": m.content} for m in messages]


_REASONING = re.compile(r"^(o\d|gpt-5)")


def sampling_params(model: str, *, temperature: float, max_tokens: int) -> dict[str, Any]:
    """Temperature and reply limit in the form the model takes.

    OpenAI's reasoning models (``o1``, ``o3``, ``gpt-5`` ...) reject ``max_tokens`` and
    a temperature: they get ``max_completion_tokens`` only. Every other model (and every
    OpenAI-compatible server) gets ``temperature`` and ``max_tokens``.
    """
    if _REASONING.match(model):
        return {"max_completion_tokens": max_tokens}
    return {"temperature": temperature, "max_tokens": max_tokens}


def chat_parts(
    provider: str,
    endpoint: str,
    model: str,
    messages: Sequence[ChatMessage],
    params: Mapping[str, Any],
) -> dict[str, Any]:
    """What identifies a chat request in the response cache (no secrets)."""
    return {
        "provider": provider,
        "endpoint": endpoint,
        "model": model,
        "messages": openai_messages(messages),
        "params": dict(params),
    }


def response_format(json_schema: Mapping[str, Any], *, strict: bool) -> dict[str, Any]:
    """An OpenAI ``response_format`` constraining the reply to ``json_schema``."""
    title = str(json_schema.get("title") or "response")
    name = "".join(c if c.isalnum() or c in "_-" else "_" for c in title)[:64]
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": dict(json_schema), "strict": strict},
    }


def schema_instruction(json_schema: Mapping[str, Any]) -> ChatMessage:
    """A system message asking for JSON matching ``json_schema`` (no constrained decoding)."""
    return ChatMessage(
        role="system",
        content="Reply with one JSON object and nothing else. It must validate against "
        f"this JSON Schema:\n{json.dumps(json_schema, sort_keys=True)}",
    )


def check_json_reply(
    done: Completion, json_schema: Mapping[str, Any] | None, model: str
) -> Completion:
    """``done`` unchanged when no schema was asked for or its text is a JSON object.

    A reply wrapped in a Markdown code fence is unwrapped.

    Raises:
        LLMError: A schema was asked for and the text is not a JSON object.
    """
    if json_schema is None:
        return done
    text = _unfence(done.text)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise LLMError(f"{model}: reply is not JSON: {exc}: {done.text[:200]!r}") from exc
    if not isinstance(value, dict):
        raise LLMError(f"{model}: reply is JSON but not an object: {done.text[:200]!r}")
    return done if text == done.text else done.model_copy(update={"text": text})


def _unfence(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        body = stripped[3:-3]
        return body.split("\n", 1)[1].strip() if "\n" in body else body.strip()
    return stripped
