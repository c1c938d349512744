"""Chat helpers shared by the providers: message conversion, cache keys, JSON output."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from hybrid_rag.errors import LLMError
from hybrid_rag.models import ChatMessage, Completion

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "LADDER",
    "StructuredOutput",
    "chat_parts",
    "check_json_reply",
    "openai_messages",
    "read_json_object",
    "response_format",
    "sampling_params",
    "schema_instruction",
    "with_schema_instruction",
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


StructuredOutput = Literal["auto", "json_schema", "json_object", "text"]
"""How a provider asks for JSON: ``json_schema`` (OpenAI ``response_format`` with the
schema: OpenAI, Azure, vLLM, LM Studio, llama.cpp's ``llama-server``), ``json_object``
(``{"type": "json_object", "schema": ...}``: JSON mode, with the schema where the server
takes one, as ``llama-cpp-python`` and Ollama do), ``text`` (no response format: the
schema goes into the prompt and the reply is read tolerantly), or ``auto``: the first
that the server accepts, found on the first structured call and remembered."""

LADDER: tuple[str, ...] = ("json_schema", "json_object", "text")
"""The structured-output shapes ``auto`` tries, most constrained first."""


def response_format(
    json_schema: Mapping[str, Any], *, strict: bool, mode: str = "json_schema"
) -> dict[str, Any] | None:
    """The OpenAI ``response_format`` for ``mode`` (``None`` for ``text``)."""
    if mode == "json_object":
        return {"type": "json_object", "schema": dict(json_schema)}
    if mode != "json_schema":
        return None
    title = str(json_schema.get("title") or "response")
    name = "".join(c if c.isalnum() or c in "_-" else "_" for c in title)[:64]
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": dict(json_schema), "strict": strict},
    }


def schema_instruction(json_schema: Mapping[str, Any]) -> str:
    """The sentence asking for JSON matching ``json_schema`` (for back ends without a
    constrained decoder, and for JSON mode, which constrains the syntax only)."""
    compact = json.dumps(json_schema, sort_keys=True, separators=(",", ":"))
    return (
        f"Reply with one JSON object and nothing else, valid against this JSON Schema:\n{compact}"
    )


def with_schema_instruction(
    messages: Sequence[ChatMessage], json_schema: Mapping[str, Any]
) -> list[ChatMessage]:
    """``messages`` with the schema instruction added at the end of the first system message.

    At the end, so the start of the system message (the part that is the same for every
    call) stays a prefix that servers caching prompt prefixes reuse.
    """
    out = list(messages)
    note = schema_instruction(json_schema)
    for i, m in enumerate(out):
        if m.role == "system":
            out[i] = ChatMessage(role="system", content=f"{m.content}\n\n{note}")
            return out
    return [ChatMessage(role="system", content=note), *out]


def read_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text``, read tolerantly; ``None`` when there is none.

    Takes a Markdown code fence off, and skips any words a model wrote before or after
    the object ("Here is the JSON: {...}").
    """
    body = _unfence(text)
    try:
        value = json.loads(body)
    except ValueError:
        value = None
        start = body.find("{")
        while value is None and start >= 0:
            try:
                value, _end = json.JSONDecoder().raw_decode(body, start)
            except ValueError:
                start = body.find("{", start + 1)
    return value if isinstance(value, dict) else None


def check_json_reply(
    done: Completion, json_schema: Mapping[str, Any] | None, model: str
) -> Completion:
    """``done`` with its text as the JSON object asked for (unchanged without a schema).

    Raises:
        LLMError: A schema was asked for and the reply holds no JSON object (the message
            says when the reply was cut at the token limit).
    """
    if json_schema is None or _is_object(done.text):
        return done
    value = read_json_object(done.text)
    if value is None:
        cut = " (cut at the reply's token limit)" if done.finish_reason == "length" else ""
        raise LLMError(f"{model}: reply is not a JSON object{cut}: {done.text[:200]!r}")
    text = json.dumps(value, ensure_ascii=False)
    return done if text == done.text else done.model_copy(update={"text": text})


def _is_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _unfence(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        body = stripped[3:]
        body = body[:-3] if body.endswith("```") else body
        return body.split("\n", 1)[1].strip() if "\n" in body else body.strip()
    return stripped
