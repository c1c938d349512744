"""An optional HTTP service over ``HybridRAG`` (the ``[server]`` extra).

``create_app(rag)`` returns a FastAPI app to run with uvicorn or mount in an existing app;
``hybrid-rag serve --store DIR`` runs one. See ``docs/guides/service.md``.

Example:
    >>> from hybrid_rag import HybridRAG
    >>> from hybrid_rag.server import create_app
    >>> app = create_app(HybridRAG("./store"))                      # doctest: +SKIP
"""

from __future__ import annotations

try:
    import fastapi  # noqa: F401
    import prometheus_client  # noqa: F401
    import python_multipart  # noqa: F401  (uploads)
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        f"the hybrid_rag service needs the [server] extra ({exc.name} is missing): "
        "pip install 'hybrid-rag[server]'"
    ) from exc

from hybrid_rag.server.app import API_KEYS_ENV, AskRequest, UploadAccepted, create_app

__all__ = ["API_KEYS_ENV", "AskRequest", "UploadAccepted", "create_app"]
