"""``store.json``: what a persistent store remembers about how it was built."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hybrid_rag.errors import DamagedStoreError

__all__ = ["STORE_META", "read_embedder", "record_embedder"]

STORE_META = "store.json"


def read_embedder(path: Path | None) -> str | None:
    """The name of the embedder that built the store at ``path`` (``None``: not recorded).

    Raises:
        DamagedStoreError: ``store.json`` exists but is not the JSON object it writes.
    """
    meta = None if path is None else path / STORE_META
    if meta is None or not meta.is_file():
        return None
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
    value = body.get("embedder")
    return value if isinstance(value, str) else None


def record_embedder(path: Path | None, *, name: str, dim: int) -> None:
    """Remember the embedder of the store at ``path`` unless one is recorded already."""
    if path is None or read_embedder(path) is not None:
        return
    path.mkdir(parents=True, exist_ok=True)
    tmp = path / (STORE_META + ".tmp")
    tmp.write_text(json.dumps({"embedder": name, "dim": dim}), encoding="utf-8")
    os.replace(tmp, path / STORE_META)
