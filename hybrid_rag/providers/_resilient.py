"""The call policy every provider shares: timeout, retries, concurrency limit, cache, usage.

Written once and used by the OpenAI, SAP AI Core and LangChain providers:

* **Timeout** per attempt (``anyio.fail_after``); a stream times out when no piece
  arrives within it. Inside a question's time budget (``hybrid_rag._budget``) an attempt
  may take what is left of the budget instead, and a budget that runs out is not retried.
* **Retries** with exponential backoff and full jitter on 429, 408/409, 5xx, timeouts and
  connection errors (``tenacity``); a ``Retry-After`` / ``retry-after-ms`` header is
  honoured (capped at ``max_wait``). Other errors fail at once, and so does a 4xx or 5xx
  whose text says the request itself is invalid (a server that does not take the
  ``response_format`` sent: ``ShapeRejected``, which a chat provider answers by asking in
  a simpler shape). Either way the caller gets ``LLMError`` naming the model and the reason.
* **Concurrency limit**: at most ``max_concurrency`` calls in flight per provider and
  event loop. An attempt that times out while other calls were in flight means the server
  queues requests (llama.cpp serves one at a time by default): the limit drops to one for
  the provider's life, so retries are not re-sent together on top of the work the server
  is still doing.
* **Cut calls count**: a call cut by a timeout or cancelled by its caller was sent and
  counts in ``llm_calls`` (with the tokens it had streamed, if any).
* **Cache**: a ``ResponseCache`` keyed by model, messages (or
  text) and parameters; a hit costs no call.
* **Usage**: calls, tokens, embedded texts and cache hits go to the provider's
  ``usage`` and to every ``track_usage`` meter.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import re
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import anyio
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from hybrid_rag import _budget
from hybrid_rag._usage import UsageMeter, record_usage
from hybrid_rag.errors import ConfigurationError, LLMError, LLMTimeoutError
from hybrid_rag.models import Completion, Usage
from hybrid_rag.providers._cache import ResponseCache, as_cache, cache_key

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "CallPolicy",
    "CutCall",
    "PerLoop",
    "ShapeRejected",
    "Transient",
    "rejects_shape",
    "transient",
]

log = logging.getLogger("hybrid_rag.providers")

T = TypeVar("T")
_RETRY_STATUS = frozenset({408, 409, 425, 429})
_CONNECTION_ERRORS = frozenset(
    {"APIConnectionError", "APITimeoutError", "TransportError", "TimeoutException"}
)
_SHAPE_WORDS = re.compile(
    r"response_format|json_schema|json schema|\bschema\b|grammar|validation error|"
    r"unsupported|not supported|invalid (?:request|parameter|value|type|input)|"
    r"extra (?:inputs|fields)|unrecogni[sz]ed|unknown (?:field|parameter|argument)",
    re.I,
)


class ShapeRejected(LLMError):
    """The server said the request's shape is invalid (not worth retrying as it was)."""


CutCall = LLMTimeoutError
"""A call cut by its timeout or by the question's time budget."""


def rejects_shape(exc: BaseException | None) -> bool:
    """Whether ``exc`` is an HTTP 4xx/5xx saying the request's shape is invalid.

    400 and 422 always are; another 4xx/5xx is when its text names the part at fault
    (``response_format``, a schema, a validation error, an unsupported parameter).
    Authentication, missing models and rate limits never are.
    """
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        status = _status(exc)
        if status is not None:
            if status in (401, 403, 404, 408, 409, 425, 429) or status < 400:
                return False
            return status in (400, 422) or _SHAPE_WORDS.search(str(exc)) is not None
        exc = exc.__cause__ or exc.__context__
    return False


@dataclass(frozen=True, slots=True)
class Transient:
    """Why a failure is worth retrying, and how long the server asked us to wait."""

    reason: str
    retry_after: float | None = None


def transient(exc: BaseException | None) -> Transient | None:
    """Classify ``exc`` (or an exception in its cause chain); ``None`` = do not retry."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, TimeoutError):
            return Transient("timeout")
        status = _status(exc)
        if status is not None:
            if status >= 500 and rejects_shape(exc):
                return None
            if status in _RETRY_STATUS or status >= 500:
                return Transient(f"HTTP {status}", _retry_after(exc))
            return None
        names = {cls.__name__ for cls in type(exc).__mro__}
        if names & _CONNECTION_ERRORS or isinstance(exc, ConnectionError):
            return Transient(type(exc).__name__)
        exc = exc.__cause__ or exc.__context__
    return None


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        code = getattr(holder, "status_code", None)
        if isinstance(code, int):
            return code
    return None


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return float(millis) / 1000.0
        except ValueError:
            pass
    return _parse_retry_after(headers.get("retry-after"))


def _parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header: a number or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class _WaitRetryAfter:
    """Exponential backoff with jitter, replaced by the server's Retry-After when sent."""

    def __init__(self, *, initial: float, max_wait: float) -> None:
        self._backoff = wait_random_exponential(multiplier=initial, max=max_wait)
        self._max = max_wait

    def __call__(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        hint = transient(exc)
        if hint is not None and hint.retry_after is not None:
            return min(self._max, hint.retry_after)
        return float(self._backoff(state))


class PerLoop(Generic[T]):
    """One object per running event loop (SDK clients and limiters are bound to a loop).

    The sync twins run the async core on a fresh loop each time, so a client made on one
    loop must not be reused on the next.
    """

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._items: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = (
            weakref.WeakKeyDictionary()
        )

    def get(self) -> T:
        """The object of the running loop, made on first use."""
        loop = asyncio.get_running_loop()
        item = self._items.get(loop)
        if item is None:
            item = self._items[loop] = self._factory()
        return item

    def values(self) -> list[T]:
        """Every object made so far (for closing)."""
        return list(self._items.values())


class CallPolicy:
    """Timeout, retries, concurrency limit, cache and usage for one provider.

    Args:
        label: The provider and model, used in error messages and logs (no secrets).
        timeout: Seconds per attempt (per piece for streams).
        max_retries: Retries after the first attempt for transient failures.
        max_concurrency: Calls in flight at once (per event loop).
        cache: A response cache, a directory for one, or ``None`` for none.
        backoff: First backoff in seconds (doubles each retry, plus jitter).
        max_wait: Longest single wait, also the cap on an honoured ``Retry-After``.
    """

    def __init__(
        self,
        *,
        label: str,
        timeout: float = 60.0,
        max_retries: int = 4,
        max_concurrency: int = 8,
        cache: ResponseCache | str | os.PathLike[str] | None = None,
        backoff: float = 0.5,
        max_wait: float = 60.0,
    ) -> None:
        _check_options(timeout=timeout, max_retries=max_retries, max_concurrency=max_concurrency)
        self.label = label
        self.timeout = timeout
        self.max_retries = max_retries
        self.cache = as_cache(cache)
        self.meter = UsageMeter()
        self.max_concurrency = max_concurrency
        self._wait = _WaitRetryAfter(initial=backoff, max_wait=max_wait)
        self._limiters = PerLoop(lambda: anyio.CapacityLimiter(self.max_concurrency))

    async def call(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run ``attempt`` under the limit and the timeout, retrying transient failures."""
        async with self._limiters.get():
            return await self._retrying(attempt)

    def _attempt_timeout(self) -> tuple[float, bool]:
        """Seconds one attempt may take, and whether the question's budget sets them."""
        budget = _budget.current()
        if budget is None:
            return self.timeout, False
        left = budget.left()
        if left <= 0:
            raise CutCall(f"{self.label}: the question's time budget is spent")
        return left, True

    async def _retrying(self, attempt: Callable[[], Awaitable[T]]) -> T:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self._wait,
            retry=retry_if_exception(self._worth_retrying),
            before_sleep=self._log_retry,
            sleep=anyio.sleep,
            reraise=True,
        )
        try:
            async for try_ in retrying:
                with try_:
                    timeout, budgeted = self._attempt_timeout()
                    try:
                        with anyio.fail_after(timeout):
                            return await attempt()
                    except TimeoutError as exc:
                        self._adapt_to_queueing()
                        if budgeted:
                            raise CutCall(
                                f"{self.label}: the model ran out of time: no reply within "
                                f"the {timeout:.0f} s left of the question's budget"
                            ) from exc
                        raise
        except LLMError:
            raise
        except Exception as exc:
            raise self._error(exc, retrying.statistics.get("attempt_number", 1)) from exc
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover

    def _worth_retrying(self, exc: BaseException) -> bool:
        budget = _budget.current()
        if budget is not None and budget.left() <= 0:
            return False
        return not isinstance(exc, LLMError) and transient(exc) is not None

    def _adapt_to_queueing(self) -> None:
        """A timeout with other calls in flight: the server queues; send one at a time."""
        limiter = self._limiters.get()
        if self.max_concurrency == 1 or limiter.borrowed_tokens < 2:
            return
        log.warning(
            "%s: a call timed out with %d in flight: the server queues requests; sending "
            "one at a time from now on (max_concurrency= sets the limit)",
            self.label,
            int(limiter.borrowed_tokens),
        )
        self.max_concurrency = 1
        for each in self._limiters.values():
            each.total_tokens = 1

    async def _counted(self, attempt: Callable[[], Awaitable[Completion]]) -> Completion:
        """``call(attempt)``; a call cut by a timeout or a cancellation still counts."""
        try:
            return await self.call(attempt)
        except CutCall:
            self._record(Usage(llm_calls=1))
            raise
        except BaseException as exc:
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                self._record(Usage(llm_calls=1))
            raise

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        hint = transient(exc)
        log.warning(
            "%s: retry %d after %s (waiting %.2fs)",
            self.label,
            state.attempt_number,
            hint.reason if hint else type(exc).__name__,
            state.upcoming_sleep,
        )

    def _error(self, exc: BaseException, attempts: int) -> LLMError:
        hint = transient(exc)
        if isinstance(exc, TimeoutError):
            return CutCall(f"{self.label}: no reply within {self.timeout:g}s ({attempts} attempts)")
        if rejects_shape(exc):
            return ShapeRejected(
                f"{self.label}: the server rejected the request: {type(exc).__name__}: {exc}"
            )
        if hint is not None:
            return LLMError(f"{self.label}: {hint.reason} after {attempts} attempt(s): {exc}")
        return LLMError(f"{self.label}: {type(exc).__name__}: {exc}")

    async def complete(
        self,
        parts: Mapping[str, Any],
        attempt: Callable[[], Awaitable[Completion]],
        *,
        check: Callable[[Completion], Completion] | None = None,
    ) -> Completion:
        """A completion from the cache or from ``attempt`` (then cached); usage recorded.

        ``check`` vets (and may normalise) a fresh completion before it is cached; what it
        raises reaches the caller and nothing is cached, so a repeat asks the model again.
        """
        key = cache_key({"kind": "chat", **parts})
        cached = await self._cache_get([key])
        if key in cached:
            self._record(Usage(cache_hits=1))
            return Completion.model_validate_json(cached[key])
        done = await self._counted(attempt)
        self._record(
            Usage(
                llm_calls=1,
                prompt_tokens=done.prompt_tokens,
                completion_tokens=done.completion_tokens,
            )
        )
        if check is not None:
            done = check(done)
        await self._cache_put({key: done.model_dump_json().encode("utf-8")})
        return done

    async def stream(
        self, parts: Mapping[str, Any], open_stream: Callable[[], AsyncIterator[str | Usage]]
    ) -> AsyncGenerator[str, None]:
        """Text pieces from the cache (one piece) or from the stream ``open_stream`` makes.

        Retried until the first piece arrives; each later piece must arrive within the
        timeout. A back end may yield a ``Usage`` (token counts) among the pieces; it
        is recorded, not passed on. The joined text is cached like a completion.
        """
        key = cache_key({"kind": "chat", **parts})
        cached = await self._cache_get([key])
        if key in cached:
            self._record(Usage(cache_hits=1))
            yield Completion.model_validate_json(cached[key]).text
            return
        pieces: list[str] = []
        used = Usage(llm_calls=1)
        failed: BaseException | None = None
        try:
            async with self._limiters.get(), aclosing(self._pieces(open_stream)) as items:
                async for item in items:
                    if isinstance(item, Usage):
                        used = used + item
                        continue
                    pieces.append(item)
                    yield item
        except BaseException as exc:
            failed = exc
            raise
        finally:  # a stream cut, cancelled or abandoned after it was sent still counts
            if pieces or failed is None or not isinstance(failed, LLMError | ValueError):
                self._record(estimated(used, parts, pieces))
            elif isinstance(failed, CutCall):
                self._record(used)
        done = Completion(
            text="".join(pieces),
            prompt_tokens=used.prompt_tokens,
            completion_tokens=used.completion_tokens,
        )
        await self._cache_put({key: done.model_dump_json().encode("utf-8")})

    async def _pieces(
        self, open_stream: Callable[[], AsyncIterator[str | Usage]]
    ) -> AsyncGenerator[str | Usage, None]:
        async def first() -> tuple[AsyncIterator[str | Usage], str | Usage | None]:
            iterator = open_stream()
            try:
                return iterator, await anext(iterator)
            except StopAsyncIteration:
                return iterator, None

        iterator, item = await self._retrying(first)
        try:
            while item is not None:
                yield item
                try:
                    with anyio.fail_after(self.timeout):
                        item = await anext(iterator)
                except StopAsyncIteration:
                    item = None
                except LLMError:
                    raise
                except Exception as exc:
                    raise self._error(exc, 1) from exc
        finally:  # closes the HTTP response too: the server stops generating
            close = getattr(iterator, "aclose", None)
            if close is not None:
                await close()

    async def embed(
        self,
        parts: Mapping[str, Any],
        texts: Sequence[str],
        attempt: Callable[[list[str]], Awaitable[Any]],
        *,
        batch_size: int,
        dim: int,
    ) -> npt.NDArray[np.float32]:
        """Embed ``texts``: cached vectors first, the rest in concurrent batches.

        Identical texts are embedded once. Every returned row is L2-normalised float32.
        """
        import numpy as np

        keys = [cache_key({"kind": "embedding", **parts, "text": t}) for t in texts]
        vectors = {
            k: np.frombuffer(v, dtype=np.float32) for k, v in (await self._cache_get(keys)).items()
        }
        if vectors:
            self._record(Usage(cache_hits=len(vectors)))
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in vectors}
        batches = _batches(list(todo.items()), batch_size)
        results = await _gather([self._embed_batch(b, attempt, dim) for b in batches])
        for found in results:
            vectors.update(found)
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = vectors[key]
        return out

    async def _embed_batch(
        self,
        batch: list[tuple[str, str]],
        attempt: Callable[[list[str]], Awaitable[Any]],
        dim: int,
    ) -> dict[str, npt.NDArray[np.float32]]:
        texts = [text for _, text in batch]
        matrix = _normalised(await self.call(lambda: attempt(texts)), len(texts), dim, self.label)
        self._record(Usage(embedding_calls=1, embedded_texts=len(texts)))
        found = {key: matrix[i] for i, (key, _) in enumerate(batch)}
        await self._cache_put({key: vec.tobytes() for key, vec in found.items()})
        return found

    def _record(self, usage: Usage) -> None:
        record_usage(usage, owner=self.meter)

    async def _cache_get(self, keys: list[str]) -> dict[str, bytes]:
        if self.cache is None or not keys:
            return {}
        return await anyio.to_thread.run_sync(self.cache.get_many, keys)

    async def _cache_put(self, items: dict[str, bytes]) -> None:
        if self.cache is not None and items:
            await anyio.to_thread.run_sync(self.cache.put_many, items)


def estimated(used: Usage, parts: Mapping[str, Any], pieces: Sequence[str]) -> Usage:
    """``used`` with token counts estimated where the server sent none.

    A streamed reply without a usage chunk (llama.cpp, Ollama and vLLM send one only when
    asked, some never): one piece is one token, as these servers stream, and the prompt
    is about four characters a token.
    """
    if used.completion_tokens or not pieces:
        return used
    prompt = used.prompt_tokens
    if not prompt:
        chars = sum(len(str(m.get("content", ""))) for m in parts.get("messages", []))
        prompt = max(1, chars // 4)
    return used.model_copy(update={"prompt_tokens": prompt, "completion_tokens": len(pieces)})


def _check_options(*, timeout: float, max_retries: int, max_concurrency: int) -> None:
    if timeout <= 0:
        raise ConfigurationError(f"timeout must be > 0 seconds (got {timeout})")
    if max_retries < 0:
        raise ConfigurationError(f"max_retries must be >= 0 (got {max_retries})")
    if max_concurrency < 1:
        raise ConfigurationError(f"max_concurrency must be >= 1 (got {max_concurrency})")


def check_batch_size(batch_size: int) -> int:
    """``batch_size`` if >= 1, else ConfigurationError."""
    if batch_size < 1:
        raise ConfigurationError(f"batch_size must be >= 1 (got {batch_size})")
    return batch_size


def _batches(items: list[T], size: int) -> list[list[T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


async def _gather(calls: Sequence[Awaitable[T]]) -> list[T]:
    """Await ``calls`` concurrently; the first failure is raised as itself (no group)."""
    results: list[T | None] = [None] * len(calls)
    errors: list[BaseException] = []

    async def run(i: int, call: Awaitable[T]) -> None:
        try:
            results[i] = await call
        except Exception as exc:
            errors.append(exc)

    async with anyio.create_task_group() as group:
        for i, call in enumerate(calls):
            group.start_soon(run, i, call)
    if errors:
        raise errors[0]
    return [r for r in results if r is not None]


def _normalised(matrix: Any, rows: int, dim: int, label: str) -> npt.NDArray[np.float32]:
    import numpy as np

    out = np.asarray(matrix, dtype=np.float32)
    if out.shape != (rows, dim):
        raise LLMError(f"{label}: expected {rows} vectors of dimension {dim}, got {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    result: npt.NDArray[np.float32] = np.where(norms > 0, out / np.where(norms > 0, norms, 1), out)
    return result.astype(np.float32, copy=False)
