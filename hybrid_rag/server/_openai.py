"""The OpenAI chat-completions wire format (the subset chat clients and UIs use)."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hybrid_rag.errors import InputError
from hybrid_rag.ingest.inputs import no_lone_surrogates
from hybrid_rag.models import Answer, ChatMessage

__all__ = [
    "MODEL_ID",
    "PREFIX",
    "ChatRequest",
    "chunk_event",
    "completion_body",
    "error_body",
    "error_code",
    "error_event",
    "is_openai_path",
    "models_body",
    "new_id",
    "split_messages",
]

MODEL_ID = "hybrid-rag"
PREFIX = "/v1/"


class _Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """``POST /v1/chat/completions``; ``docs`` and ``mode`` are hybrid_rag extensions
    (OpenAI clients send them with ``extra_body``). Other OpenAI fields are ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str = MODEL_ID
    messages: list[_Message] = Field(min_length=1)
    stream: bool = False
    docs: list[str] | None = None
    mode: Literal["hybrid", "kg", "vector"] = "hybrid"

    @model_validator(mode="before")
    @classmethod
    def _unicode(cls, data: Any) -> Any:
        return no_lone_surrogates(data)


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    return " ".join(str(p.get("text", "")) for p in content if p.get("type") == "text")


def split_messages(messages: list[_Message]) -> tuple[str, list[ChatMessage]]:
    """The last user message is the question; earlier user/assistant turns are history.

    Raises:
        InputError: The last message is not a user message with text.
    """
    last = messages[-1]
    question = _text(last.content).strip()
    if last.role != "user" or not question:
        raise InputError("the last message must be a user message with text content")
    history = [
        ChatMessage(role="user" if m.role == "user" else "assistant", content=_text(m.content))
        for m in messages[:-1]
        if m.role in ("user", "assistant") and _text(m.content)
    ]
    return question, history


def new_id() -> str:
    """A chat-completion id in OpenAI's style."""
    return f"chatcmpl-{uuid.uuid4().hex[:24]}"


def completion_body(answer: Answer, content: str, *, model: str) -> dict[str, Any]:
    """A non-streamed ``chat.completion`` (plus the answer's ``citations``)."""
    u = answer.usage
    return {
        "id": new_id(),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.prompt_tokens + u.completion_tokens,
        },
        "citations": [c.model_dump() for c in answer.citations],
    }


def chunk_event(cid: str, model: str, delta: dict[str, str], finish: str | None = None) -> str:
    """One ``chat.completion.chunk`` as a server-sent event."""
    body = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


def models_body() -> dict[str, Any]:
    """``GET /v1/models``: the one model this service offers."""
    return {
        "object": "list",
        "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "hybrid_rag"}],
    }


# --- errors ------------------------------------------------------------------------------------


def is_openai_path(scope: Mapping[str, Any]) -> bool:
    """Whether a request goes to a ``/v1/`` route (also when the app is mounted under a prefix)."""
    path, root = str(scope.get("path", "")), str(scope.get("root_path", ""))
    if root and path.startswith(root):
        path = path[len(root) :]
    return path.startswith(PREFIX)


def error_body(
    message: str, *, status: int, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """OpenAI's error shape, which its clients read: ``{"error": {"message", "type", "param",
    "code"}}``; ``type`` is ``invalid_request_error`` for 4xx, ``server_error`` for 5xx."""
    kind = "server_error" if status >= 500 else "invalid_request_error"
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def error_code(exc: BaseException) -> str:
    """An error's class as an OpenAI-style code: ``DocumentNotFoundError`` ->
    ``document_not_found``."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", type(exc).__name__).lower()
    return name.removesuffix("_error") or name


def error_event(body: Mapping[str, Any]) -> str:
    """An error in a stream whose headers are sent, as OpenAI streams it (a ``data:`` line)."""
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"
