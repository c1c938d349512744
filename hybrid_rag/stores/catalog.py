"""The embedded document catalog: one SQLite table, on disk under ``path`` or in memory."""

from __future__ import annotations

import sqlite3
import threading
from datetime import datetime
from pathlib import Path

from hybrid_rag._checks import check_doc_id, check_info
from hybrid_rag.errors import StoreError
from hybrid_rag.models import DocumentInfo
from hybrid_rag.stores._closing import Closing
from hybrid_rag.stores._lock import StoreLock

__all__ = ["SqliteCatalog"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    info TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    updated_at TEXT NOT NULL
)
"""


class SqliteCatalog(Closing):
    """The ``Catalog`` of the embedded default.

    Args:
        path: SQLite file; ``None`` keeps the catalog in memory.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self._path = None if path is None else Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._file_lock = None if self._path is None else StoreLock(self._path, what="catalog")

    def __repr__(self) -> str:
        return f"SqliteCatalog(path={str(self._path) if self._path else None!r})"

    def _db(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("catalog is closed")
        if self._conn is None:
            target = ":memory:"
            if self._path is not None:
                self._path.parent.mkdir(parents=True, exist_ok=True)
                target = str(self._path)
            if self._file_lock is not None:
                self._file_lock.acquire()  # one writer per store: StoreLockedError at once
            try:
                conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute(_SCHEMA)
            except sqlite3.Error as exc:
                if self._file_lock is not None:
                    self._file_lock.release()
                raise StoreError(f"cannot open catalog {target}: {exc}") from exc
            self._conn = conn
        return self._conn

    def get(self, doc_id: str) -> DocumentInfo | None:
        """The entry of a document, or ``None``."""
        check_doc_id(doc_id)
        with self._lock:
            row = (
                self._db()
                .execute("SELECT info FROM documents WHERE doc_id = ?", (doc_id,))
                .fetchone()
            )
        return None if row is None else DocumentInfo.model_validate_json(row[0])

    def put(self, info: DocumentInfo) -> None:
        """Insert or replace an entry."""
        check_info(info)
        with self._lock:
            self._db().execute(
                "INSERT OR REPLACE INTO documents (doc_id, info, content_hash, updated_at)"
                " VALUES (?, ?, ?, ?)",
                (info.doc_id, info.model_dump_json(), info.content_hash, _iso(info.updated_at)),
            )

    def delete(self, doc_id: str) -> bool:
        """Remove an entry; ``False`` when absent."""
        check_doc_id(doc_id)
        with self._lock:
            cur = self._db().execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
        return cur.rowcount > 0

    def list(self) -> list[DocumentInfo]:
        """All entries ordered by doc id."""
        with self._lock:
            rows = self._db().execute("SELECT info FROM documents ORDER BY doc_id").fetchall()
        return [DocumentInfo.model_validate_json(r[0]) for r in rows]

    def close(self) -> None:
        """Close the database; idempotent."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._file_lock is not None:
                self._file_lock.release()
            self._closed = True


def _iso(ts: datetime) -> str:
    return ts.isoformat()
