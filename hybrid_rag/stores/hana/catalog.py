"""The document catalog in a HANA table, so several processes share one record of documents.

One row per document: id (primary key), source, content hash, status, counts, update
time and the full ``DocumentInfo`` as JSON (the source of
truth when read back). ``put`` is an ``UPSERT ... WITH PRIMARY KEY``; the table is
created on first use when ``SYS.TABLES`` does not list it.
"""

from __future__ import annotations

import threading
from typing import Any

from hybrid_rag._checks import check_doc_id, check_info
from hybrid_rag.errors import StoreError
from hybrid_rag.models import DocumentInfo
from hybrid_rag.stores._closing import Closing
from hybrid_rag.stores.hana._connection import (
    HanaConnectionPool,
    HanaSettings,
    engine_message,
    pool_for,
    qualified,
    quote_ident,
)

__all__ = ["HanaCatalog"]

_COLUMNS = (
    '"DOC_ID", "SOURCE", "CONTENT_HASH", "STATUS", "PAGES", "CHUNKS", "TRIPLES", '
    '"UPDATED_AT", "INFO"'
)


class HanaCatalog(Closing):
    """A ``Catalog`` stored in a HANA column table.

    Args:
        settings: Connection settings (ignored when ``pool`` is given).
        pool: A connection pool to use (and close on ``close``).
        table: Table name (in the settings' schema).
    """

    def __init__(
        self,
        settings: HanaSettings | None = None,
        *,
        pool: HanaConnectionPool | None = None,
        table: str = "HYBRID_RAG_DOCUMENTS",
    ) -> None:
        self._pool = pool_for(settings, pool, owner="HanaCatalog")
        quote_ident(table)
        self._table_name = table
        self._table = qualified(self._pool.settings.schema, table)
        self._ready = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"HanaCatalog(table={self._table!r})"

    def _ensure(self, conn: Any) -> None:
        if self._ready:
            return
        with self._lock:
            if self._ready:
                return
            schema = self._pool.settings.schema
            where = "SCHEMA_NAME = ?" if schema else "SCHEMA_NAME = CURRENT_SCHEMA"
            params = [schema, self._table_name] if schema else [self._table_name]
            if not _rows(
                conn, f"SELECT COUNT(*) FROM SYS.TABLES WHERE {where} AND TABLE_NAME = ?", params
            )[0][0]:
                _rows(conn, _create_sql(self._table), [])
            self._ready = True

    def _run(self, sql: str, params: list[Any]) -> tuple[list[tuple[Any, ...]], int]:
        def run(conn: Any) -> tuple[list[tuple[Any, ...]], int]:
            self._ensure(conn)
            cur = conn.cursor()
            try:
                cur.execute(sql, params)
                rows = (
                    [tuple(r) for r in cur.fetchall()] if sql.lstrip().startswith("SELECT") else []
                )
                return rows, int(cur.rowcount)
            finally:
                cur.close()

        try:
            result: tuple[list[tuple[Any, ...]], int] = self._pool.run(run)
        except self._pool.error_types as exc:
            raise StoreError(f"catalog query failed: {engine_message(exc)}") from None
        return result

    def get(self, doc_id: str) -> DocumentInfo | None:
        """The entry of a document, or ``None``."""
        check_doc_id(doc_id)
        rows, _ = self._run(f'SELECT "INFO" FROM {self._table} WHERE "DOC_ID" = ?', [doc_id])
        return DocumentInfo.model_validate_json(_text(rows[0][0])) if rows else None

    def put(self, info: DocumentInfo) -> None:
        """Insert or replace an entry (``UPSERT ... WITH PRIMARY KEY``)."""
        check_info(info)
        values = [
            info.doc_id, info.source, info.content_hash, "ready", info.pages, info.chunks,
            info.triples, info.updated_at.isoformat(), info.model_dump_json(),
        ]  # fmt: skip
        self._run(
            f"UPSERT {self._table} ({_COLUMNS}) VALUES ({', '.join('?' * 9)}) WITH PRIMARY KEY",
            values,
        )

    def delete(self, doc_id: str) -> bool:
        """Remove an entry; ``False`` when absent."""
        check_doc_id(doc_id)
        _, count = self._run(f'DELETE FROM {self._table} WHERE "DOC_ID" = ?', [doc_id])
        return count > 0

    def list(self) -> list[DocumentInfo]:
        """All entries ordered by doc id."""
        rows, _ = self._run(f'SELECT "INFO" FROM {self._table} ORDER BY "DOC_ID"', [])
        return [DocumentInfo.model_validate_json(_text(r[0])) for r in rows]

    def close(self) -> None:
        """Close the pool's connections; idempotent."""
        self._pool.close()


def _create_sql(table: str) -> str:
    return (
        f"CREATE COLUMN TABLE {table} ("
        '"DOC_ID" NVARCHAR(128) PRIMARY KEY, "SOURCE" NVARCHAR(5000), '
        '"CONTENT_HASH" NVARCHAR(64) NOT NULL, "STATUS" NVARCHAR(16) NOT NULL, '
        '"PAGES" INTEGER, "CHUNKS" INTEGER, "TRIPLES" INTEGER, '
        '"UPDATED_AT" NVARCHAR(40) NOT NULL, "INFO" NCLOB NOT NULL)'
    )


def _rows(conn: Any, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    cur = conn.cursor()
    try:
        cur.execute(sql, params)
        return [tuple(r) for r in cur.fetchall()] if sql.lstrip().startswith("SELECT") else []
    finally:
        cur.close()


def _text(value: Any) -> str:
    if hasattr(value, "read"):
        value = value.read()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8")
    return str(value)
