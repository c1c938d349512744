"""A persistent response cache for providers: one SQLite file, keys are SHA-256 digests.

Keys are built by ``cache_key`` from the model, the messages or text and every
parameter that changes the answer, so a hit is exactly the response the same request got
before. Values are opaque bytes (a completion's JSON, an embedding's float32 bytes).
The file is opened on first use (no I/O in the constructor), in WAL mode so several
processes can share it; calls are thread-safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hybrid_rag.errors import ConfigurationError

__all__ = ["ResponseCache", "cache_key"]

_FILE = "responses.sqlite"
_BATCH = 500  # keys per SELECT (SQLite's default variable limit is 32766; stay modest)


def cache_key(parts: Mapping[str, Any]) -> str:
    """A stable SHA-256 hex digest of ``parts`` (JSON with sorted keys)."""
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResponseCache:
    """Responses of LLM and embedding calls, persisted in ``<directory>/responses.sqlite``.

    Args:
        directory: Folder of the cache file (created on first write).

    Example:
        >>> cache = ResponseCache("/tmp/hybrid-rag-cache")  # nothing touched yet
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        if not str(directory).strip():
            raise ConfigurationError("ResponseCache needs a directory")
        self._path = Path(directory) / _FILE
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        """The SQLite file."""
        return self._path

    def __repr__(self) -> str:
        return f"ResponseCache(path={str(self._path)!r})"

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self._path, check_same_thread=False, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value BLOB)")
            conn.commit()
            self._conn = conn
        return self._conn

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """The cached values of those ``keys`` that are present."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        with self._lock:
            db = self._db()
            for start in range(0, len(wanted), _BATCH):
                part = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(part))
                sql = f"SELECT key, value FROM responses WHERE key IN ({marks})"
                found.update((k, bytes(v)) for k, v in db.execute(sql, part))
        return found

    def put_many(self, items: Mapping[str, bytes]) -> None:
        """Store (or overwrite) ``items``."""
        if not items:
            return
        with self._lock:
            db = self._db()
            db.executemany("INSERT OR REPLACE INTO responses VALUES (?, ?)", list(items.items()))
            db.commit()

    def __len__(self) -> int:
        with self._lock:
            row = self._db().execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(row[0])

    def clear(self) -> None:
        """Forget every cached response."""
        with self._lock:
            self._db().execute("DELETE FROM responses")
            self._db().commit()

    def close(self) -> None:
        """Close the file (idempotent); a later call reopens it."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def as_cache(cache: ResponseCache | str | os.PathLike[str] | None) -> ResponseCache | None:
    """Accept a cache, a directory for one, or ``None`` (no caching)."""
    if cache is None or isinstance(cache, ResponseCache):
        return cache
    return ResponseCache(cache)
