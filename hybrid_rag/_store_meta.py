"""``store.json``: what a persistent store remembers about how it was built."""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["STORE_META", "read_embedder", "record_embedder"]

STORE_META = "store.json"


def read_embedder(path: Path | None) -> str | None:
    """The name of the embedder that built the store at ``path`` (``None``: not recorded)."""
    meta = None if path is None else path / STORE_META
    if meta is None or not meta.is_file():
        return None
    value = json.loads(meta.read_text(encoding="utf-8")).get("embedder")
    return value if isinstance(value, str) else None


def record_embedder(path: Path | None, *, name: str, dim: int) -> None:
    """Remember the embedder of the store at ``path`` unless one is recorded already."""
    if path is None or read_embedder(path) is not None:
        return
    path.mkdir(parents=True, exist_ok=True)
    (path / STORE_META).write_text(json.dumps({"embedder": name, "dim": dim}), encoding="utf-8")
