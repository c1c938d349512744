"""Fakes for tests: a tiny deterministic embedder and function-backed LLMs.

They implement the ``Embedder`` and
``LLMProvider`` seams without any model or network, and
record what they were asked so a test can assert on calls.

Example:
    >>> from hybrid_rag.testing import FunctionLLM, ScriptedLLM
    >>> llm = FunctionLLM(lambda messages: "Flash point: -18 °C")
    >>> scripted = ScriptedLLM(["first answer", "second answer"])
"""

from __future__ import annotations

import hashlib
import inspect
import re
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hybrid_rag._checks import check_text, check_texts
from hybrid_rag._usage import record_usage
from hybrid_rag.errors import ConfigurationError, LLMError
from hybrid_rag.models import ChatMessage, Completion, Usage
from hybrid_rag.providers._chat import check_json_reply

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["FakeEmbedder", "FunctionLLM", "LLMFunction", "ScriptedLLM"]

LLMFunction = Callable[[Sequence[ChatMessage]], "str | Completion | Awaitable[str | Completion]"]
"""A function standing in for a chat model: messages in, text or Completion out."""

_WORD = re.compile(r"\w+")
_PIECE = re.compile(r"\s*\S+|\s+")


class FakeEmbedder:
    """A deterministic bag-of-words embedder for tests (NOT a real model).

    Each lower-cased word adds +-1 to one of ``dim`` buckets chosen by a stable hash, and
    the vector is L2-normalised (an empty text gives the zero vector). Counts calls.

    Attributes:
        calls: Number of ``embed_documents``/``embed_query`` calls.
        texts_embedded: Number of texts embedded over all calls.
    """

    def __init__(self, *, dim: int = 16, name: str = "fake-embedder") -> None:
        if dim < 1:
            raise ConfigurationError(f"FakeEmbedder dim must be >= 1 (got {dim})")
        self._dim = dim
        self._name = name
        self._lock = threading.Lock()
        self.calls = 0
        self.texts_embedded = 0

    @property
    def name(self) -> str:
        """The fake model's name."""
        return self._name

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    def _count(self, n: int) -> None:
        with self._lock:
            self.calls += 1
            self.texts_embedded += n

    def _vector(self, text: str) -> npt.NDArray[np.float32]:
        import numpy as np

        vec = np.zeros(self._dim, dtype=np.float32)
        for word in _WORD.findall(text.lower()):
            digest = hashlib.md5(word.encode(), usedforsecurity=False).digest()
            vec[digest[0] % self._dim] += 1.0 if digest[1] & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        return vec / norm if norm else vec

    async def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed a batch; shape ``(len(texts), dim)``."""
        import numpy as np

        texts = check_texts(texts)
        self._count(len(texts))
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = self._vector(text)
        return out

    async def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Embed one text; shape ``(dim,)``."""
        text = check_text(text)
        self._count(1)
        return self._vector(text)


class FunctionLLM:
    """An ``LLMProvider`` that calls a function of yours.

    The function receives the message list and returns the reply text or a
    ``Completion``; it may be sync or async. Whatever it raises
    surfaces as ``LLMError``.

    Args:
        fn: The stand-in model.
        name: Model name reported to the library (used in cache keys).

    Attributes:
        calls: The message lists received, in order.
        json_schemas: The ``json_schema`` of each call (``None`` for plain text).
    """

    def __init__(self, fn: LLMFunction, *, name: str = "function") -> None:
        if not callable(fn):
            raise ConfigurationError(f"FunctionLLM needs a callable, got {type(fn).__name__}")
        self._fn = fn
        self._name = name
        self.calls: list[list[ChatMessage]] = []
        self.json_schemas: list[Mapping[str, Any] | None] = []

    @property
    def name(self) -> str:
        """Model identifier."""
        return self._name

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self._name!r}, calls={len(self.calls)})"

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        json_schema: Mapping[str, Any] | None = None,
    ) -> Completion:
        """Call the function with ``messages`` and wrap its reply in a Completion.

        With ``json_schema`` the reply must be a JSON object (else LLMError), as the
        ``LLMProvider`` contract says; the schema itself is
        recorded in ``json_schemas``, not enforced.
        """
        received = list(messages)
        self.calls.append(received)
        self.json_schemas.append(json_schema)
        try:
            reply = self._fn(received)
            if inspect.isawaitable(reply):
                reply = await reply
        except LLMError:
            raise
        except Exception as exc:
            raise LLMError(f"{self._name}: {type(exc).__name__}: {exc}") from exc
        done = check_json_reply(
            _as_completion(reply, self._name, received), json_schema, self._name
        )
        used = Usage(
            llm_calls=1, prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens
        )
        record_usage(used)  # seen by track_usage() meters, as a real provider's calls are
        return done

    async def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> AsyncIterator[str]:
        """The function's reply in word-sized pieces (joined, they equal the reply)."""
        done = await self.complete(messages, temperature=temperature, max_tokens=max_tokens)
        for piece in _PIECE.findall(done.text):
            yield piece


def _as_completion(reply: object, name: str, messages: Sequence[ChatMessage]) -> Completion:
    if isinstance(reply, Completion):
        return reply
    if not isinstance(reply, str):
        raise LLMError(f"{name}: function returned {type(reply).__name__}, not str/Completion")
    prompt_tokens = sum(len(m.content.split()) for m in messages)
    return Completion(text=reply, prompt_tokens=prompt_tokens, completion_tokens=len(reply.split()))


class ScriptedLLM(FunctionLLM):
    """An LLM that returns ``responses`` in order; one call too many raises LLMError.

    Attributes:
        calls: The message lists received, in order.
        remaining: How many scripted responses are left.
    """

    def __init__(self, responses: Sequence[str | Completion], *, name: str = "scripted") -> None:
        self._responses = list(responses)
        self._next = 0
        super().__init__(self._reply, name=name)

    @property
    def remaining(self) -> int:
        """Scripted responses not yet returned."""
        return len(self._responses) - self._next

    def _reply(self, messages: Sequence[ChatMessage]) -> str | Completion:
        if self._next >= len(self._responses):
            raise LLMError(f"{self.name}: script exhausted after {len(self._responses)} responses")
        reply = self._responses[self._next]
        self._next += 1
        return reply
