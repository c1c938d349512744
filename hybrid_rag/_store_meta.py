"""``store.json``: what a persistent store remembers about how it was built.

The embedder (its name and dimension: vectors of another one cannot be searched) and the
ontology (its namespace and where it was loaded from: a graph built under one vocabulary
cannot answer under another). Each is recorded on the store's first write and checked
whenever the store is opened again. The file is replaced atomically.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hybrid_rag.errors import DamagedStoreError

__all__ = ["STORE_META", "read_embedder", "read_ontology", "record_embedder", "record_ontology"]

STORE_META = "store.json"


def _read(path: Path | None) -> dict[str, Any]:
    """The settings of the store at ``path`` (empty when none are recorded).

    Raises:
        DamagedStoreError: ``store.json`` exists but is not the JSON object it writes.
    """
    meta = None if path is None else path / STORE_META
    if meta is None or not meta.is_file():
        return {}
    try:
        body = json.loads(meta.read_text(encoding="utf-8"))
        if not isinstance(body, dict):
            raise ValueError(f"a JSON {type(body).__name__}, not an object")
    except (OSError, ValueError) as exc:
        raise DamagedStoreError(
            f"the store's settings cannot be read ({exc})",
            path=str(meta),
            repair=(
                f"run `hybrid-rag repair --store {path} --embedder NAME` with the embedder "
                "that built the store (it writes the file again)"
            ),
        ) from exc
    return body


def _write(path: Path, **values: Any) -> None:
    meta = _read(path)
    meta.update(values)
    path.mkdir(parents=True, exist_ok=True)
    tmp = path / (STORE_META + ".tmp")
    tmp.write_text(json.dumps(meta), encoding="utf-8")
    os.replace(tmp, path / STORE_META)


def read_embedder(path: Path | None) -> str | None:
    """The name of the embedder that built the store at ``path`` (``None``: not recorded).

    Raises:
        DamagedStoreError: ``store.json`` exists but is not the JSON object it writes.
    """
    value = _read(path).get("embedder")
    return value if isinstance(value, str) else None


def record_embedder(path: Path | None, *, name: str, dim: int) -> None:
    """Remember the embedder of the store at ``path`` unless one is recorded already."""
    if path is None or read_embedder(path) is not None:
        return
    _write(path, embedder=name, dim=dim)


def read_ontology(path: Path | None) -> tuple[str, str] | None:
    """``(namespace, source)`` of the ontology that built the store at ``path``."""
    value = _read(path).get("ontology")
    if isinstance(value, dict) and isinstance(value.get("namespace"), str):
        return value["namespace"], str(value.get("source", ""))
    return None


def record_ontology(path: Path | None, *, namespace: str, source: str) -> None:
    """Remember the ontology of the store at ``path`` unless one is recorded already."""
    if path is None or read_ontology(path) is not None:
        return
    _write(path, ontology={"namespace": namespace, "source": source})
