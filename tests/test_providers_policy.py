"""The shared call policy in isolation: classification, Retry-After, usage meters."""

from __future__ import annotations

import email.utils
import time

import anyio
import pytest

from hybrid_rag.errors import LLMError
from hybrid_rag.models import Completion, Usage
from hybrid_rag.providers import track_usage
from hybrid_rag.providers._resilient import (
    CallPolicy,
    Transient,
    _parse_retry_after,
    transient,
)


class _Response:
    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status_code = status
        self.headers = headers


class _HTTPError(Exception):
    def __init__(self, status: int, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"HTTP {status}")
        self.response = _Response(status, headers or {})


def test_transient_classification() -> None:
    assert transient(_HTTPError(429, {"retry-after": "3"})) == Transient("HTTP 429", 3.0)
    assert transient(_HTTPError(503)) is not None and transient(_HTTPError(408)) is not None
    assert transient(_HTTPError(400)) is None and transient(_HTTPError(401)) is None
    assert transient(TimeoutError()) is not None and transient(ConnectionResetError()) is not None
    assert transient(ValueError("bad")) is None
    wrapped = RuntimeError("sdk wrapper")
    wrapped.__cause__ = _HTTPError(502)
    assert transient(wrapped) is not None  # found in the cause chain
    assert transient(_HTTPError(429, {"retry-after-ms": "250"})).retry_after == 0.25  # type: ignore[union-attr]


def test_retry_after_seconds_and_http_date() -> None:
    assert _parse_retry_after("2.5") == 2.5 and _parse_retry_after("-1") == 0.0
    assert _parse_retry_after(None) is None and _parse_retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (_parse_retry_after(later) or 0) <= 31


def test_policy_retries_transient_and_honours_the_hint() -> None:
    policy = CallPolicy(label="t", timeout=5, max_retries=2, backoff=0.01)
    failures = [_HTTPError(429, {"retry-after": "0.3"})]

    async def attempt() -> str:
        if failures:
            raise failures.pop()
        return "ok"

    start = time.perf_counter()
    assert anyio.run(lambda: policy.call(attempt)) == "ok"
    assert time.perf_counter() - start >= 0.3


def test_policy_does_not_retry_a_client_error() -> None:
    policy = CallPolicy(label="t", timeout=5, max_retries=3, backoff=0.01)
    calls = []

    async def attempt() -> str:
        calls.append(1)
        raise _HTTPError(400)

    with pytest.raises(LLMError, match="t: the server rejected the request: _HTTPError: HTTP 400"):
        anyio.run(lambda: policy.call(attempt))
    assert len(calls) == 1


def test_usage_meters_see_only_their_own_task() -> None:
    policy = CallPolicy(label="t", timeout=5)

    async def one(tokens: int) -> Usage:
        with track_usage() as meter:
            parts = {"q": tokens}
            await policy.complete(parts, lambda: _done(tokens))
            await anyio.sleep(0.05)
            return meter.usage

    async def both() -> list[Usage]:
        results: list[Usage] = []

        async def run(n: int) -> None:
            results.append(await one(n))

        async with anyio.create_task_group() as group:
            group.start_soon(run, 3)
            group.start_soon(run, 5)
        return sorted(results, key=lambda u: u.prompt_tokens)

    low, high = anyio.run(both)
    assert (low.llm_calls, low.prompt_tokens) == (1, 3)
    assert (high.llm_calls, high.prompt_tokens) == (1, 5)
    assert policy.meter.usage.llm_calls == 2


async def _done(tokens: int) -> Completion:
    return Completion(text="x", prompt_tokens=tokens, completion_tokens=1)
