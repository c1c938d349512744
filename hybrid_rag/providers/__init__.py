"""Model providers: embedders (and LLM back ends added by their own modules).

Importing this package is cheap: implementations load on first attribute access.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from typing import TYPE_CHECKING, Any

from hybrid_rag.errors import ConfigurationError

if TYPE_CHECKING:
    from hybrid_rag.protocols import Embedder
    from hybrid_rag.providers.hashing import HashingEmbedder
    from hybrid_rag.providers.local import SentenceTransformerEmbedder

__all__ = [
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "local_model_available",
    "resolve_embedder",
]

_LAZY = {
    "HashingEmbedder": "hybrid_rag.providers.hashing",
    "SentenceTransformerEmbedder": "hybrid_rag.providers.local",
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
    try:
        has_st = importlib.util.find_spec("sentence_transformers") is not None
    except (ImportError, ValueError):
        has_st = False
    if not has_st:
        return False
    from hybrid_rag.providers.local import bundled_model_path

    return bundled_model_path() is not None


def resolve_embedder(spec: str | Embedder = "auto") -> Embedder:
    """Turn an embedder spec into an :class:`~hybrid_rag.protocols.Embedder`.

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
