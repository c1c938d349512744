"""SAP HANA Cloud stores: knowledge graph, vectors, catalog and in-database embeddings.

Needs the ``[hana]`` extra (``pip install "hybrid-rag[hana]"``) at connection time only:
``hdbcli`` is imported when the first connection opens, so importing this package is
cheap and works without it. See ``docs/hana.md``.

Example:
    >>> from hybrid_rag.stores.hana import HanaSettings, hana_stores   # doctest: +SKIP
    >>> graph, vectors, catalog = hana_stores(HanaSettings.from_env())  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hybrid_rag.stores.hana._connection import HanaConnectionPool, HanaSettings
    from hybrid_rag.stores.hana.catalog import HanaCatalog
    from hybrid_rag.stores.hana.embedder import HanaInternalEmbedder
    from hybrid_rag.stores.hana.graph import HanaGraphStore
    from hybrid_rag.stores.hana.vectors import HanaVectorStore

__all__ = [
    "HanaCatalog",
    "HanaConnectionPool",
    "HanaGraphStore",
    "HanaInternalEmbedder",
    "HanaSettings",
    "HanaVectorStore",
]

_LAZY = {
    "HanaCatalog": "hybrid_rag.stores.hana.catalog",
    "HanaConnectionPool": "hybrid_rag.stores.hana._connection",
    "HanaGraphStore": "hybrid_rag.stores.hana.graph",
    "HanaInternalEmbedder": "hybrid_rag.stores.hana.embedder",
    "HanaSettings": "hybrid_rag.stores.hana._connection",
    "HanaVectorStore": "hybrid_rag.stores.hana.vectors",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
