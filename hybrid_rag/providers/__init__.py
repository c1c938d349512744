"""Model providers: embedders and chat models.

Importing this package is cheap: implementations (and their SDKs) load on first
attribute access. Hosted providers, one module each, behind extras:

* ``OpenAILLM``, ``OpenAIEmbedder`` (``[openai]``): OpenAI, Azure OpenAI,
  vLLM, Ollama, LM Studio, any OpenAI-compatible gateway.
* ``AICoreLLM``, ``AICoreEmbedder`` (``[aicore]``): SAP AI Core's generative
  AI hub (GPT, Claude, ...).
* ``LangChainLLM``, ``LangChainEmbedder`` (``[langchain]``): any LangChain
  chat model or embeddings object.

All of them share one call policy: timeout, retries with backoff and jitter honouring
``Retry-After``, a concurrency limit, a persistent ``ResponseCache``, batched
embeddings and usage counted per provider and per ``track_usage`` context.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import TYPE_CHECKING, Any

from hybrid_rag.errors import ConfigurationError

if TYPE_CHECKING:
    from hybrid_rag._usage import UsageMeter, track_usage
    from hybrid_rag.protocols import Embedder
    from hybrid_rag.providers._cache import ResponseCache
    from hybrid_rag.providers.aicore import AICoreEmbedder, AICoreLLM
    from hybrid_rag.providers.hashing import HashingEmbedder
    from hybrid_rag.providers.langchain import LangChainEmbedder, LangChainLLM
    from hybrid_rag.providers.local import SentenceTransformerEmbedder
    from hybrid_rag.providers.openai import OpenAIEmbedder, OpenAILLM

__all__ = [
    "AICoreEmbedder",
    "AICoreLLM",
    "HashingEmbedder",
    "LangChainEmbedder",
    "LangChainLLM",
    "OpenAIEmbedder",
    "OpenAILLM",
    "ResponseCache",
    "SentenceTransformerEmbedder",
    "UsageMeter",
    "check_embedder",
    "local_model_available",
    "resolve_embedder",
    "track_usage",
]

_LAZY = {
    "AICoreEmbedder": "hybrid_rag.providers.aicore",
    "AICoreLLM": "hybrid_rag.providers.aicore",
    "HashingEmbedder": "hybrid_rag.providers.hashing",
    "LangChainEmbedder": "hybrid_rag.providers.langchain",
    "LangChainLLM": "hybrid_rag.providers.langchain",
    "OpenAIEmbedder": "hybrid_rag.providers.openai",
    "OpenAILLM": "hybrid_rag.providers.openai",
    "ResponseCache": "hybrid_rag.providers._cache",
    "SentenceTransformerEmbedder": "hybrid_rag.providers.local",
    "UsageMeter": "hybrid_rag._usage",
    "track_usage": "hybrid_rag._usage",
}
_LOCAL_ALIASES = frozenset({"local", "minilm", "all-minilm-l6-v2", "sentence-transformers"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def local_model_available() -> bool:
    """Whether sentence-transformers and the bundled MiniLM model are installed.

    Checked through the import system only: neither torch nor the model is loaded.
    """
    if not _has_sentence_transformers():
        return False
    from hybrid_rag.providers.local import bundled_model_path

    return bundled_model_path() is not None


def resolve_embedder(spec: str | Embedder = "auto") -> Embedder:
    """Turn an embedder spec into an ``Embedder``.

    Args:
        spec: ``"auto"`` (the local MiniLM model when the ``[local]`` extra is installed,
            else the lexical ``HashingEmbedder``), ``"hashing"``, ``"local"``/``"minilm"``,
            a path to a sentence-transformers model folder, or an Embedder instance
            (returned unchanged).

    Raises:
        ConfigurationError: An unknown spec string or a non-embedder object.
    """
    if not isinstance(spec, str):
        return _check_instance(spec)
    key = spec.strip().lower()
    if key == "auto":
        key = "local" if local_model_available() else "hashing"
    if key == "hashing" or key.startswith("hashing-"):
        from hybrid_rag.providers.hashing import HashingEmbedder

        return HashingEmbedder(dim=_hashing_dim(spec)) if key != "hashing" else HashingEmbedder()
    from hybrid_rag.providers.local import SentenceTransformerEmbedder

    if key in _LOCAL_ALIASES:
        return SentenceTransformerEmbedder()
    if os.path.isdir(spec):
        return SentenceTransformerEmbedder(spec)
    raise ConfigurationError(
        f"unknown embedder {spec!r}: use 'auto', 'hashing', 'hashing-<dim>', 'local', "
        "a path to a sentence-transformers model folder, or an Embedder instance"
    )


def check_embedder(spec: object) -> None:
    """Refuse now what ``resolve_embedder`` would refuse at first use; loads nothing.

    Checks the name, a ``hashing-<dim>`` size, that a local model (``"local"``,
    ``"minilm"`` or a model folder) has its extra installed, and that an object is an
    ``Embedder``. ``"auto"`` always passes.

    Raises:
        ConfigurationError: An unknown spec string or a non-embedder object.
        ImportError: A local model without the ``[local]`` extra (names the install line).
    """
    if not isinstance(spec, str):
        _check_instance(spec)
        return
    key = spec.strip().lower()
    if key in ("auto", "hashing"):
        return
    if key.startswith("hashing-"):
        _hashing_dim(spec)
        return
    local = key in _LOCAL_ALIASES
    if not local and not os.path.isdir(spec):
        resolve_embedder(spec)  # raises, naming the accepted specs
    if not (local_model_available() if local else _has_sentence_transformers()):
        from hybrid_rag.providers.local import INSTALL_HINT

        raise ImportError(f"embedder {spec!r} needs sentence-transformers: {INSTALL_HINT}")


def _has_sentence_transformers() -> bool:
    try:
        return importlib.util.find_spec("sentence_transformers") is not None
    except (ImportError, ValueError):
        return False


def _hashing_dim(spec: str) -> int:
    try:
        return int(spec.strip().split("-", 1)[1])
    except ValueError:
        raise ConfigurationError(f"bad hashing embedder spec {spec!r}: use 'hashing-384'") from None


def _check_instance(spec: object) -> Embedder:
    from hybrid_rag.protocols import Embedder

    if isinstance(spec, Embedder):
        return spec
    raise ConfigurationError(f"not an embedder: {type(spec).__name__} (needs name, dim, embed_*)")
