"""The embedded document catalog: one SQLite table, on disk under ``path`` or in memory.

Besides the entries, the catalog keeps a ``generation``: a counter raised by every
``put`` and ``delete`` in the same transaction. ``HybridRAG`` records the generation it
last wrote beside the stores, so a catalog restored from an older copy is found
(``hybrid_rag.stores._embedded``) instead of silently hiding newer documents.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from hybrid_rag._checks import check_doc_id, check_info
from hybrid_rag.errors import InputError, StoreError
from hybrid_rag.models import DocumentInfo
from hybrid_rag.stores._closing import Closing
from hybrid_rag.stores._damage import damaged, engine_error
from hybrid_rag.stores._lock import StoreLock

__all__ = ["SqliteCatalog"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    info TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_BUMP = (
    "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) "
    "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
)
T = TypeVar("T")


class SqliteCatalog(Closing):
    """The ``Catalog`` of the embedded default.

    Args:
        path: SQLite file; ``None`` keeps the catalog in memory.
        read_only: Open an existing file for reading only, without the store's lock, so
            it can be listed while another process writes (SQLite WAL); writes raise
            ``StoreError``.
        on_write: Called with the new generation after every committed ``put`` or
            ``delete``.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        read_only: bool = False,
        on_write: Callable[[int], None] | None = None,
    ) -> None:
        self._path = None if path is None else Path(path)
        self._on_write = on_write
        self._read_only = read_only and self._path is not None
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        locked = self._path is not None and not self._read_only
        self._file_lock = StoreLock(self._path, what="catalog") if locked and self._path else None

    def __repr__(self) -> str:
        return f"SqliteCatalog(path={str(self._path) if self._path else None!r})"

    def _db(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("catalog is closed")
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def _connect(self) -> sqlite3.Connection:
        if self._read_only:
            assert self._path is not None
            if not self._path.is_file():
                raise damaged("the catalog file is missing", self._path)
            return self._guarded(
                "opening the catalog",
                lambda: sqlite3.connect(
                    f"{self._path.resolve().as_uri()}?mode=ro",  # type: ignore[union-attr]
                    uri=True,
                    check_same_thread=False,
                    isolation_level=None,
                ),
            )
        target = ":memory:"
        if self._path is not None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            target = str(self._path)
        if self._file_lock is not None:
            self._file_lock.acquire()  # one writer per store: StoreLockedError at once
        try:
            return self._guarded("opening the catalog", lambda: _open_rw(target))
        except BaseException:
            if self._file_lock is not None:
                self._file_lock.release()
            raise

    def _guarded(self, what: str, call: Callable[[], T]) -> T:
        """``call()``, with sqlite errors and unreadable entries typed (naming the file)."""
        try:
            return call()
        except sqlite3.Error as exc:
            raise engine_error(exc, what=what, path=self._path) from exc
        except ValidationError as exc:  # an entry's JSON is damaged
            where = self._path or Path(":memory:")
            raise damaged(f"{what} failed: an entry cannot be read ({exc.errors()[0]['msg']})",
                          where) from exc  # fmt: skip

    def _write(self, what: str, sql: str, args: tuple[object, ...]) -> int:
        """One statement and the generation bump in one transaction; rows changed."""
        if self._read_only:
            raise StoreError(f"the catalog at {self._path} is open read-only")

        def run() -> tuple[int, int]:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                changed = db.execute(sql, args).rowcount
                db.execute(_BUMP)
                generation = db.execute("SELECT value FROM meta WHERE key = 'generation'")
                value = int(generation.fetchone()[0])
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return int(changed), value

        with self._lock:
            changed, generation = self._guarded(what, run)
            if self._on_write is not None:
                self._on_write(generation)
            return changed

    def get(self, doc_id: str) -> DocumentInfo | None:
        """The entry of a document, or ``None``."""
        check_doc_id(doc_id)
        sql = "SELECT info FROM documents WHERE doc_id = ?"
        with self._lock:
            row = self._guarded("reading the catalog", lambda: _one(self._db(), sql, doc_id))
            if row is None:
                return None
            return self._guarded("reading the catalog", lambda: _entry(row[0]))

    def put(self, info: DocumentInfo) -> None:
        """Insert or replace an entry.

        Raises:
            InputError: ``info`` is not a ``DocumentInfo`` or cannot be stored as JSON
                (text that is not valid Unicode); nothing is written.
        """
        check_info(info)
        try:
            text = info.model_dump_json()
        except ValueError as exc:  # pydantic_core.PydanticSerializationError: lone surrogates
            raise InputError(f"the entry of {info.doc_id!r} cannot be stored: {exc}") from None
        self._write(
            f"writing the catalog entry of {info.doc_id!r}",
            "INSERT OR REPLACE INTO documents (doc_id, info, content_hash, updated_at)"
            " VALUES (?, ?, ?, ?)",
            (info.doc_id, text, info.content_hash, _iso(info.updated_at)),
        )

    def delete(self, doc_id: str) -> bool:
        """Remove an entry; ``False`` when absent."""
        check_doc_id(doc_id)
        what = f"deleting the catalog entry of {doc_id!r}"
        return self._write(what, "DELETE FROM documents WHERE doc_id = ?", (doc_id,)) > 0

    def list(self) -> list[DocumentInfo]:
        """All entries ordered by doc id."""
        sql = "SELECT info FROM documents ORDER BY doc_id"
        with self._lock:
            rows = self._guarded("reading the catalog", lambda: self._db().execute(sql).fetchall())
            return self._guarded("reading the catalog", lambda: [_entry(r[0]) for r in rows])

    def generation(self) -> int:
        """How many writes the catalog has had (0 for a new one or one of an old version)."""
        sql = "SELECT value FROM meta WHERE key = 'generation'"
        with self._lock:
            row = self._guarded("reading the catalog", lambda: self._db().execute(sql).fetchone())
        return 0 if row is None else int(row[0])

    def close(self) -> None:
        """Close the database; idempotent."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            if self._file_lock is not None:
                self._file_lock.release()
            self._closed = True


def _open_rw(target: str) -> sqlite3.Connection:
    conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(_SCHEMA)
    except BaseException:
        conn.close()
        raise
    return conn


def _one(db: sqlite3.Connection, sql: str, arg: str) -> tuple[str] | None:
    row = db.execute(sql, (arg,)).fetchone()
    return None if row is None else (str(row[0]),)


def _entry(text: str) -> DocumentInfo:
    return DocumentInfo.model_validate_json(text)


def _iso(ts: datetime) -> str:
    return ts.isoformat()
