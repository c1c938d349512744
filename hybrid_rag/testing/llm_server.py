"""A FAKE model server on loopback: OpenAI-compatible and SAP AI Core endpoints.

Not a model: it answers real HTTP requests from the real ``openai`` and ``sap-ai-sdk-gen``
SDKs with scripted or deterministic replies, so tests and benchmarks exercise the
providers end to end (HTTP, SSE streaming, retries, timeouts) without a network.

Routes (any prefix, so OpenAI's ``/v1/...`` and AI Core's
``/v2/inference/deployments/<id>/...`` both work):

* ``POST .../chat/completions``: a chat completion, or an SSE stream with ``stream: true``.
* ``POST .../embeddings``: deterministic unit vectors of ``dim`` floats per input.
* ``POST .../oauth/token``: an AI Core (XSUAA) client-credentials token.
* ``GET .../v2/lm/deployments``: the RUNNING deployments given to the constructor.

Example:
    >>> with FakeLLMServer(dim=8) as server:
    ...     server.script(Reply.error(429, retry_after=0.1), Reply.with_text("hello"))
    ...     # OpenAILLM("m", base_url=server.openai_url) sees a 429, then "hello"
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["FakeLLMServer", "Recorded", "Reply"]

ChatFunction = Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted reply: an HTTP error, a text, a broken body or a stall."""

    status: int = 200
    text: str | None = None
    body: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0

    @classmethod
    def error(cls, status: int, *, retry_after: float | None = None) -> Reply:
        """An HTTP error with an OpenAI-style error body (and ``Retry-After``)."""
        headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
        body = json.dumps({"error": {"message": f"scripted {status}", "type": "fake"}})
        return cls(status=status, body=body.encode(), headers=headers)

    @classmethod
    def malformed(cls) -> Reply:
        """A 200 whose JSON body is cut off."""
        return cls(body=b'{"id": "chatcmpl-1", "choices": [')

    @classmethod
    def stall(cls, seconds: float, text: str = "late") -> Reply:
        """A reply sent only after ``seconds`` (past a client's timeout)."""
        return cls(text=text, delay=seconds)

    @classmethod
    def with_text(cls, text: str) -> Reply:
        """A normal chat reply with this text."""
        return cls(text=text)


@dataclass(frozen=True, slots=True)
class Recorded:
    """A request the server received."""

    method: str
    path: str
    body: Any
    headers: Mapping[str, str]


class FakeLLMServer:
    """A scripted OpenAI-compatible / AI Core server on ``127.0.0.1`` in a thread.

    Args:
        dim: Length of the embedding vectors.
        chat: Reply text for a chat request when no scripted reply is queued (default:
            ``"echo: <last user message>"``).
        deployments: AI Core deployments as ``(id, model name)``; their URLs point here.
        response_formats: The ``response_format`` types the server takes (``None``: any).
            A request with another type gets HTTP 500 with a validation message, as
            ``llama-cpp-python``'s server answers ``json_schema``.
        stream_usage: Whether a stream ends with a usage chunk (Ollama and llama.cpp
            send none unless asked, some servers never).
    """

    def __init__(
        self,
        *,
        dim: int = 16,
        chat: ChatFunction | None = None,
        deployments: Sequence[tuple[str, str]] = (),
        response_formats: Collection[str] | None = None,
        stream_usage: bool = True,
    ) -> None:
        self.dim = dim
        self.response_formats = None if response_formats is None else frozenset(response_formats)
        self.stream_usage = stream_usage
        self._chat = chat or _echo
        self._deployments = list(deployments)
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle -----------------------------------------------------------------------
    def __enter__(self) -> FakeLLMServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Listen on a free loopback port."""
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = _QuietServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop listening (idempotent)."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        if self._httpd is None:
            raise RuntimeError("FakeLLMServer is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """The OpenAI-style API root (``<url>/v1``)."""
        return f"{self.url}/v1"

    # scripting -----------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        """Queue replies for the next chat or embedding requests, in order."""
        with self._lock:
            self._script.extend(replies)

    def next_reply(self) -> Reply | None:
        """The next scripted reply, or ``None`` when the script is empty."""
        with self._lock:
            return self._script.pop(0) if self._script else None

    def calls(self, suffix: str) -> list[Recorded]:
        """Recorded requests whose path (without query) ends with ``suffix``."""
        return [r for r in self.requests if r.path.split("?")[0].endswith(suffix)]

    def record(self, request: Recorded) -> None:
        """Remember a request (thread-safe)."""
        with self._lock:
            self.requests.append(request)

    def chat_text(self, body: Mapping[str, Any]) -> str:
        """The default reply text of a chat request."""
        return self._chat(body)

    def vector(self, text: str) -> list[float]:
        """A deterministic unit vector for ``text``."""
        digest = hashlib.sha256(text.encode()).digest()
        raw = [(digest[i % len(digest)] - 127.5) for i in range(self.dim)]
        norm = sum(v * v for v in raw) ** 0.5 or 1.0
        return [v / norm for v in raw]

    def deployments_body(self, scenario: str | None = None) -> dict[str, Any]:
        """The AI Core ``GET /v2/lm/deployments`` reply (of one scenario, if given).

        A deployment whose model is ``"orchestration"`` is the orchestration service.
        """
        stamp = "2026-01-01T00:00:00Z"
        resources = [
            {
                "id": dep_id,
                "configurationId": f"cfg-{dep_id}",
                "configurationName": f"{model}-config",
                "scenarioId": _scenario(model),
                "status": "RUNNING",
                "targetStatus": "RUNNING",
                "createdAt": stamp,
                "modifiedAt": stamp,
                "startTime": stamp,
                "deploymentUrl": f"{self.url}/v2/inference/deployments/{dep_id}",
                "details": {
                    "resources": {"backendDetails": {"model": {"name": model, "version": "latest"}}}
                },
            }
            for dep_id, model in self._deployments
            if scenario is None or _scenario(model) == scenario
        ]
        return {"count": len(resources), "resources": resources}


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (timeout test) is expected: no traceback on stderr."""


def _scenario(model: str) -> str:
    return "orchestration" if model == "orchestration" else "foundation-models"


def _pieces(text: str) -> list[str]:
    """Word-sized pieces that join to ``text``."""
    words = text.split(" ")
    return [w + " " for w in words[:-1]] + [words[-1]]


def _usage(messages: Sequence[Mapping[str, Any]], text: str) -> dict[str, int]:
    prompt = sum(len(str(m.get("content", "")).split()) for m in messages)
    completion = len(text.split())
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _echo(body: Mapping[str, Any]) -> str:
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return f"echo: {users[-1]['content']}" if users else "echo"


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def do_GET(self) -> None:
        self._record(None)
        if self.path.split("?")[0].endswith("/lm/deployments"):
            query = parse_qs(urlsplit(self.path).query)
            self._json(200, self.fake.deployments_body(query.get("scenarioId", [None])[0]))
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?")[0]
        if path.endswith("/oauth/token"):
            self._record(raw.decode())
            self._json(200, {"access_token": "fake-token", "expires_in": 43199})
            return
        body = json.loads(raw or b"{}")
        self._record(body)
        if path.endswith("/chat/completions") and (refused := self._refused(body)):
            self._json(500, {"error": {"message": refused, "type": "internal_server_error"}})
            return  # refused before any scripted reply is used
        reply = self.fake.next_reply() or Reply()
        if reply.delay:
            time.sleep(reply.delay)
        if reply.body is not None:
            self._send(reply.status, reply.body, reply.headers)
        elif path.endswith("/embeddings"):
            self._embeddings(body)
        elif path.endswith("/chat/completions"):
            text = reply.text if reply.text is not None else self.fake.chat_text(body)
            self._chat(body, text)
        elif path.endswith("/completion"):
            self._orchestration(body, reply)
        else:
            self._json(404, {"error": {"message": f"no route {self.path}"}})

    def _refused(self, body: Mapping[str, Any]) -> str | None:
        kind = (body.get("response_format") or {}).get("type")
        if kind is None or self.fake.response_formats is None or kind in self.fake.response_formats:
            return None
        allowed = " or ".join(repr(k) for k in sorted(self.fake.response_formats))
        return f"1 validation error: response_format.type: Input should be {allowed}"

    def _record(self, body: Any) -> None:
        self.fake.record(Recorded(self.command, self.path, body, dict(self.headers.items())))

    def _embeddings(self, body: Mapping[str, Any]) -> None:
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": self.fake.vector(str(t))}
            for i, t in enumerate(texts)
        ]
        tokens = sum(len(str(t).split()) for t in texts)
        self._json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _chat(self, body: Mapping[str, Any], text: str) -> None:
        usage = _usage(body.get("messages", []), text)
        if body.get("stream"):
            self._sse(body, text, usage)
            return
        self._json(
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model"),
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": text},
                    }
                ],
                "usage": usage,
            },
        )

    def _orchestration(self, body: Mapping[str, Any], reply: Reply) -> None:
        modules = body["orchestration_config"]["module_configurations"]
        messages = modules["templating_module_config"]["template"]
        text = reply.text if reply.text is not None else self.fake.chat_text({"messages": messages})
        usage = _usage(messages, text)
        model = modules["llm_module_config"]["model_name"]
        if body["orchestration_config"].get("stream"):
            self._orchestration_sse(model, text, usage)
            return
        message = {"role": "assistant", "content": text}
        result = {
            "id": "orch-fake",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": usage,
        }
        self._json(
            200,
            {
                "request_id": "req-fake",
                "module_results": {"templating": messages, "llm": result},
                "orchestration_result": result,
            },
        )

    def _orchestration_sse(self, model: str, text: str, usage: Mapping[str, int]) -> None:
        self._start_sse()
        base = {"id": "orch-fake", "object": "chat.completion.chunk", "created": 0, "model": model}
        for piece in _pieces(text):
            choice = {"index": 0, "delta": {"role": "assistant", "content": piece}}
            result = {**base, "choices": [choice]}
            self._event({"request_id": "r", "module_results": {}, "orchestration_result": result})
        last = {**base, "choices": [], "usage": usage}
        self._event({"request_id": "r", "module_results": {}, "orchestration_result": last})
        self._end_sse()

    def _sse(self, body: Mapping[str, Any], text: str, usage: Mapping[str, int]) -> None:
        self._start_sse()
        base = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body.get("model"),
        }
        for piece in _pieces(text):
            delta = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
            self._event({**base, "choices": [delta]})
        if self.fake.stream_usage:
            self._event({**base, "choices": [], "usage": usage})
        self._end_sse()

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()

    def _end_sse(self) -> None:
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def _event(self, payload: Mapping[str, Any]) -> None:
        self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
        self.wfile.flush()

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode(), {})

    def _send(self, status: int, data: bytes, headers: Mapping[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
