"""The SQLite half of the embedded vector store: schema, transactions, meta values.

``chunks.sqlite3`` holds one row per chunk (its text, its place in the document, the
matrix slot of its vector and the CRC-32 of that vector's bytes), the ``meta`` values
(dimension, matrix capacity, index states) and ``kw_pending`` (documents whose keyword
index update may be missing).
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path
from types import TracebackType
from typing import Any

from hybrid_rag.models import Chunk
from hybrid_rag.stores._damage import engine_error

__all__ = ["COLS", "SCHEMA", "Tx", "meta", "migrate", "row_chunk", "set_meta"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
    slot INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    chunk_id TEXT NOT NULL,
    page INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    text TEXT NOT NULL,
    section TEXT,
    crc INTEGER
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id, page, start, seq);
CREATE TABLE IF NOT EXISTS kw_pending (doc_id TEXT PRIMARY KEY);
"""
COLS = 'slot, chunk_id, doc_id, page, start, "end", text, section'
INSERT = "INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?,?)"


def migrate(db: sqlite3.Connection) -> bool:
    """Add the ``crc`` column to a store of an older version; ``True`` when added."""
    cols = {r[1] for r in db.execute("PRAGMA table_info(chunks)")}
    if "crc" in cols:
        return False
    db.execute("ALTER TABLE chunks ADD COLUMN crc INTEGER")
    return True


def row_chunk(row: tuple[Any, ...]) -> Chunk:
    """A ``Chunk`` from a row selected with ``COLS``."""
    return Chunk(
        chunk_id=row[1],
        doc_id=row[2],
        page=row[3],
        start=row[4],
        end=row[5],
        text=row[6],
        section=row[7],
    )


def meta(db: sqlite3.Connection, key: str) -> str | None:
    """A ``meta`` value, or ``None``."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(db: sqlite3.Connection, key: str, value: str) -> None:
    """Set a ``meta`` value (inside the caller's transaction, if any)."""
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))


class Tx:
    """``BEGIN IMMEDIATE``/``COMMIT``, ``ROLLBACK`` on error; sqlite errors become typed.

    SQLite rolls a transaction back by itself on some errors (a full disk, an I/O error):
    then there is nothing left to roll back, and the original error is what is raised.
    """

    def __init__(self, db: sqlite3.Connection, *, path: Path | None, what: str) -> None:
        self.db, self.path, self.what = db, path, what

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise engine_error(exc, what=self.what, path=self.path) from exc

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            try:
                self.db.execute("COMMIT")
                return
            except sqlite3.Error as err:
                self._rollback()
                raise engine_error(err, what=self.what, path=self.path) from err
        self._rollback()
        if isinstance(exc, sqlite3.Error | OSError):
            raise engine_error(exc, what=self.what, path=self.path) from exc

    def _rollback(self) -> None:
        if self.db.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # the connection rolled back already
                self.db.execute("ROLLBACK")
