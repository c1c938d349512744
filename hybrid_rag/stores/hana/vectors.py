"""VectorStore on the SAP HANA Cloud Vector Engine (``REAL_VECTOR`` + ``COSINE_SIMILARITY``).

One column table holds the chunks of every document (primary key ``DOC_ID, CHUNK_ID``)
with page, offsets, section, text (NCLOB), metadata (JSON NCLOB), a write id and the
embedding. The table is created on first write when ``SYS.TABLES`` does not list it
(HANA has no ``CREATE TABLE IF NOT EXISTS``); an existing table of another dimension
raises ``StoreError`` before anything is written.

* Writes: ``DELETE`` of the document's rows then ``executemany`` ``INSERT`` batches of
  ``batch_size`` rows, in one transaction (autocommit off, committed together). Vectors
  are bound in HANA's binary vector format (``<I`` length + ``<f`` values), never as text.
* Dense search: ``SELECT TOP k ... COSINE_SIMILARITY("EMBEDDING", TO_REAL_VECTOR(?))``
  with the query vector bound as a parameter, restricted by ``DOC_ID IN (?, ...)``.
* Keyword search runs inside HANA: ``SELECT TOP k ... SCORE() ... WHERE CONTAINS("TOKENS",
  ?, EXACT) AND "DOC_ID" IN (...) ORDER BY "SCORE" DESC`` over a full-text index
  (``CREATE FULLTEXT INDEX ... SYNC``: a committed write is searchable at once). The
  ``TOKENS`` column holds each chunk's tokens as the embedded store makes them
  (``hybrid_rag.text.keyword_tokens``: identifiers such as ``67-64-1``,
  ``UN1090`` kept whole plus their parts, mild stemming), and the query is the question's
  distinct tokens as quoted terms joined by ``OR``, so a code is matched by its exact
  string and both stores see the same terms. Only the top-``k`` rows leave the database.
  A table made by an older version gets the column (filled in batches, once) and the
  index on first use.
* Optional HNSW index: ``hnsw=HnswConfig(...)`` or ``HanaVectorStore.create_hnsw_index``.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from hybrid_rag._checks import (
    check_chunks,
    check_doc_id,
    check_filter,
    check_k,
    check_matrix,
    check_text,
    check_vector,
)
from hybrid_rag.errors import ConfigurationError, StoreError
from hybrid_rag.models import Chunk
from hybrid_rag.protocols import VectorHit
from hybrid_rag.stores._closing import Closing
from hybrid_rag.stores.hana._connection import (
    HanaConnectionPool,
    HanaSettings,
    engine_message,
    pool_for,
    qualified,
    quote_ident,
)

__all__ = ["HanaVectorStore", "HnswConfig", "vector_bytes"]

F32 = npt.NDArray[np.float32]
_MAX_TERM = 255  # longer tokens are never search terms (the embedded index drops them too)
_KW_ERR = "keyword search failed"
_COLS = '"CHUNK_ID", "DOC_ID", "PAGE", "START_OFFSET", "END_OFFSET", "TEXT", "SECTION"'
_INSERT_COLS = (
    '"DOC_ID", "CHUNK_ID", "SEQ", "PAGE", "START_OFFSET", "END_OFFSET", "SECTION", '
    '"TEXT", "METADATA", "WRITE_ID", "EMBEDDING", "TOKENS"'
)


@dataclass(frozen=True, slots=True)
class HnswConfig:
    """Build and search configuration of a HANA HNSW vector index (``None``: default)."""

    m: int | None = None
    ef_construction: int | None = None
    ef_search: int | None = None

    def clauses(self) -> str:
        """The ``BUILD``/``SEARCH CONFIGURATION`` clauses (integers only, JSON-encoded)."""
        build = {k: v for k, v in (("M", self.m), ("efConstruction", self.ef_construction)) if v}
        out = ""
        if build:
            out += f" BUILD CONFIGURATION '{json.dumps(_ints(build))}'"
        if self.ef_search:
            out += f" SEARCH CONFIGURATION '{json.dumps(_ints({'efSearch': self.ef_search}))}'"
        return out


def _ints(config: dict[str, int]) -> dict[str, int]:
    for key, value in config.items():
        if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 100_000:
            raise ConfigurationError(f"HNSW {key} must be a positive integer, got {value!r}")
    return config


def vector_bytes(vector: F32, *, half: bool = False) -> bytes:
    """HANA's binary vector format: little-endian uint32 dimension, then the values."""
    values = np.ascontiguousarray(vector, dtype="<f2" if half else "<f4").reshape(-1)
    return bytes(np.uint32(values.shape[0]).astype("<u4").tobytes()) + values.tobytes()


def _parse_vector(value: Any) -> F32:
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        n = int(np.frombuffer(data[:4], dtype="<u4")[0])
        dtype = "<f4" if len(data) == 4 + 4 * n else "<f2"
        return np.frombuffer(data[4:], dtype=dtype).astype(np.float32)
    if isinstance(value, str):
        return np.asarray(json.loads(value), dtype=np.float32)
    return np.asarray(list(value), dtype=np.float32)


class HanaVectorStore(Closing):
    """A ``VectorStore`` on SAP HANA Cloud.

    Args:
        settings: Connection settings (ignored when ``pool`` is given).
        pool: A connection pool to use (and close on ``close``).
        table: Table name (in the settings' schema).
        dim: Expected dimension; ``None`` takes it from the existing table or the
            first write.
        vector_type: ``"REAL_VECTOR"`` or ``"HALF_VECTOR"`` (HANA Cloud 2025.15+).
        batch_size: Rows per ``executemany``.
        hnsw: Create an HNSW index with this configuration when the table is created.
    """

    def __init__(
        self,
        settings: HanaSettings | None = None,
        *,
        pool: HanaConnectionPool | None = None,
        table: str = "HYBRID_RAG_CHUNKS",
        dim: int | None = None,
        vector_type: Literal["REAL_VECTOR", "HALF_VECTOR"] = "REAL_VECTOR",
        batch_size: int = 500,
        hnsw: HnswConfig | None = None,
    ) -> None:
        if dim is not None and not 0 < dim <= 65000:
            raise ConfigurationError("dim must be between 1 and 65000")
        if vector_type not in ("REAL_VECTOR", "HALF_VECTOR") or batch_size < 1:
            raise ConfigurationError("vector_type REAL_VECTOR|HALF_VECTOR, batch_size >= 1")
        self._pool = pool_for(settings, pool, owner="HanaVectorStore")
        quote_ident(table)
        self._table_name = table
        self._table = qualified(self._pool.settings.schema, table)
        self._dim = dim
        self._type = vector_type
        self._to_vec = "TO_HALF_VECTOR" if vector_type == "HALF_VECTOR" else "TO_REAL_VECTOR"
        self._batch = batch_size
        self._hnsw = hnsw
        self._lock = threading.Lock()
        self._table_dim: int | None = None  # known once the table exists
        self._fulltext = False  # the TOKENS column and its full-text index exist

    def __repr__(self) -> str:
        return f"HanaVectorStore(table={self._table!r}, dim={self._dim or self._table_dim})"

    # -- table -------------------------------------------------------------------------

    def _schema_clause(self) -> tuple[str, list[Any]]:
        schema = self._pool.settings.schema
        return ("SCHEMA_NAME = ?", [schema]) if schema else ("SCHEMA_NAME = CURRENT_SCHEMA", [])

    def _existing_dim(self, conn: Any) -> int | None:
        """The table's vector dimension, or ``None`` when the table does not exist."""
        if self._table_dim is not None:
            return self._table_dim
        where, params = self._schema_clause()
        cur = conn.cursor()
        try:
            cur.execute(
                f"SELECT COUNT(*) FROM SYS.TABLES WHERE {where} AND TABLE_NAME = ?",
                [*params, self._table_name],
            )
            if not cur.fetchone()[0]:
                return None
            cur.execute(
                "SELECT DATA_TYPE_NAME, LENGTH FROM SYS.TABLE_COLUMNS"
                f" WHERE {where} AND TABLE_NAME = ? AND COLUMN_NAME = ?",
                [*params, self._table_name, "EMBEDDING"],
            )
            row = cur.fetchone()
        finally:
            cur.close()
        if row is None or row[1] is None:
            raise StoreError(f"table {self._table} exists but has no vector column EMBEDDING")
        self._check_dim(int(row[1]), what=f"table {self._table}")
        self._table_dim = int(row[1])
        return self._table_dim

    def _check_dim(self, dim: int, *, what: str) -> None:
        expected = self._dim if self._table_dim is None else self._table_dim
        if expected is not None and dim != expected:
            raise StoreError(f"{what} has dimension {dim}, the store expects {expected}")

    def _create(self, conn: Any, dim: int) -> None:
        cur = conn.cursor()
        try:
            if self._type == "HALF_VECTOR":
                cur.execute(
                    "SELECT COUNT(*) FROM SYS.DATA_TYPES WHERE TYPE_NAME = ?", ["HALF_VECTOR"]
                )
                if not cur.fetchone()[0]:
                    raise ConfigurationError("this HANA instance has no HALF_VECTOR type")
            cur.execute(_create_sql(self._table, self._type, dim))
            cur.execute(self._fulltext_sql())
        finally:
            cur.close()
        self._table_dim, self._fulltext = dim, True
        if self._hnsw is not None:
            self._create_index(conn, self._hnsw)

    def _ensure(self, conn: Any, dim: int) -> None:
        existing = self._existing_dim(conn)
        if existing is None:
            self._check_dim(dim, what="the vectors")
            with self._lock:
                if self._existing_dim(conn) is None:
                    self._create(conn, dim)
        self._check_dim(dim, what="the vectors")

    def create_hnsw_index(self, config: HnswConfig | None = None) -> None:
        """Create the HNSW index (``SIMILARITY FUNCTION COSINE_SIMILARITY ... ONLINE``).

        Raises:
            StoreError: The table does not exist yet or HANA refused the index.
        """

        def run(conn: Any) -> None:
            if self._existing_dim(conn) is None:
                raise StoreError(f"table {self._table} does not exist yet")
            self._create_index(conn, config or HnswConfig())

        self._guard(run, "cannot create the HNSW index")

    def _create_index(self, conn: Any, config: HnswConfig) -> None:
        name = quote_ident(f"{self._table_name}_HNSW")
        cur = conn.cursor()
        try:
            cur.execute(
                f'CREATE HNSW VECTOR INDEX {name} ON {self._table} ("EMBEDDING")'
                f" SIMILARITY FUNCTION COSINE_SIMILARITY{config.clauses()} ONLINE"
            )
        finally:
            cur.close()

    def _guard(self, fn: Any, what: str) -> Any:
        try:
            return self._pool.run(fn)
        except self._pool.error_types as exc:
            raise StoreError(f"{what}: {engine_message(exc)}") from None

    # -- writes ------------------------------------------------------------------------

    def replace(self, doc_id: str, chunks: Sequence[Chunk], vectors: F32) -> int:
        """Make the document hold exactly ``chunks`` (one transaction); returns the count.

        Raises:
            StoreError: Wrong dimension, a vector/chunk count mismatch, a chunk of another
                document, duplicate chunk ids, non-finite values, or an engine error.
                Nothing is written then.
            InvalidDocIdError: Bad ``doc_id``.
            InputError: ``chunks`` or ``vectors`` of the wrong type.
        """
        check_doc_id(doc_id)
        chunks, vectors = check_chunks(chunks), check_matrix(vectors)
        rows = self._rows(doc_id, chunks, vectors)
        dim = int(np.asarray(vectors).reshape(len(chunks), -1).shape[1]) if len(chunks) else 0

        def write(conn: Any) -> int:
            if not rows:
                self._delete(conn, doc_id)
                return 0
            self._ensure(conn, dim)
            self._ensure_fulltext(conn)  # DDL: outside the write's transaction
            with self._pool.transaction(conn):
                self._delete(conn, doc_id)
                cur = conn.cursor()
                try:
                    sql = f"INSERT INTO {self._table} ({_INSERT_COLS}) VALUES ({_marks(12)})"
                    for start in range(0, len(rows), self._batch):
                        cur.executemany(sql, rows[start : start + self._batch])
                finally:
                    cur.close()
            return len(rows)

        written: int = self._guard(write, f"cannot write chunks of {doc_id!r}")
        return written

    def _rows(self, doc_id: str, chunks: Sequence[Chunk], vectors: F32) -> list[tuple[Any, ...]]:
        vecs = np.asarray(vectors, dtype=np.float32)
        if not chunks:
            return []
        if vecs.ndim != 2 or vecs.shape[0] != len(chunks):
            raise StoreError(f"{len(chunks)} chunks but vectors of shape {vecs.shape}")
        self._check_dim(int(vecs.shape[1]), what="the vectors")
        if not np.isfinite(vecs).all():
            raise StoreError("vectors contain NaN or infinite values")
        if any(c.doc_id != doc_id for c in chunks):
            raise StoreError(f"every chunk must belong to document {doc_id!r}")
        if len({c.chunk_id for c in chunks}) != len(chunks):
            raise StoreError(f"duplicate chunk ids in document {doc_id!r}")
        write_id = uuid.uuid4().hex
        half = self._type == "HALF_VECTOR"
        return [
            (
                doc_id, c.chunk_id, seq, c.page, c.start, c.end, c.section, c.text,
                json.dumps({"page": c.page, "section": c.section}),
                write_id, vector_bytes(v, half=half), _tokens(c.text),
            )
            for seq, (c, v) in enumerate(zip(chunks, vecs, strict=True))
        ]  # fmt: skip

    def _delete(self, conn: Any, doc_id: str) -> int:
        if self._existing_dim(conn) is None:
            return 0
        cur = conn.cursor()
        try:
            cur.execute(f'DELETE FROM {self._table} WHERE "DOC_ID" = ?', [doc_id])
            return max(int(cur.rowcount), 0)
        finally:
            cur.close()

    def delete(self, doc_id: str) -> int:
        """Remove the document's chunks; returns how many were removed."""
        removed: int = self._guard(lambda conn: self._delete(conn, doc_id), "cannot delete")
        return removed

    # -- reads -------------------------------------------------------------------------

    def _select(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        def run(conn: Any) -> list[tuple[Any, ...]]:
            if self._existing_dim(conn) is None:
                return []
            cur = conn.cursor()
            try:
                cur.execute(sql, list(params))
                return [tuple(r) for r in cur.fetchall()]
            finally:
                cur.close()

        rows: list[tuple[Any, ...]] = self._guard(run, "vector store query failed")
        return rows

    def search(
        self, vector: F32, *, k: int, doc_ids: Sequence[str] | None = None
    ) -> list[VectorHit]:
        """Top-``k`` chunks by ``COSINE_SIMILARITY``, optionally restricted to documents.

        Raises:
            InputError: Bad ``vector``, ``k`` or ``doc_ids``.
            StoreError: The query vector has the wrong dimension.
        """
        q, k, doc_ids = check_vector(vector), check_k(k), check_filter(doc_ids)
        self._check_dim(int(q.shape[0]), what="the query vector")
        if doc_ids is not None and not doc_ids:
            return []
        where, params = _doc_filter(doc_ids)
        sql = (
            f'SELECT TOP {int(k)} {_COLS}, COSINE_SIMILARITY("EMBEDDING", {self._to_vec}(?))'
            f' AS "SCORE" FROM {self._table}{where} ORDER BY "SCORE" DESC, "DOC_ID", "SEQ"'
        )
        half = self._type == "HALF_VECTOR"
        rows = self._select(sql, [vector_bytes(q, half=half), *params])
        return [VectorHit(chunk=_chunk(r), score=float(r[7])) for r in rows]

    def chunks(self, doc_id: str) -> list[Chunk]:
        """The document's chunks ordered by page, start offset and write order."""
        sql = (
            f'SELECT {_COLS} FROM {self._table} WHERE "DOC_ID" = ?'
            ' ORDER BY "PAGE", "START_OFFSET", "SEQ"'
        )
        return [_chunk(r) for r in self._select(sql, [doc_id])]

    def doc_ids(self) -> list[str]:
        """Documents that have at least one chunk, sorted."""
        rows = self._select(f'SELECT DISTINCT "DOC_ID" FROM {self._table} ORDER BY "DOC_ID"', [])
        return [str(r[0]) for r in rows]

    def keyword_search(
        self, text: str, *, k: int, doc_ids: Sequence[str] | None = None
    ) -> list[VectorHit]:
        """Top-``k`` chunks by HANA's full-text ``SCORE()`` (> 0), optionally scoped.

        The question's tokens (``keyword_tokens``) are
        searched as exact terms joined by ``OR`` in the ``TOKENS`` column; the scope is a
        ``DOC_ID IN`` predicate of the same statement, and only ``TOP k`` rows return.

        Raises:
            InputError: Bad ``text``, ``k`` or ``doc_ids``.
        """
        text, k, doc_ids = check_text(text), check_k(k), check_filter(doc_ids)
        if doc_ids is not None and not doc_ids:
            return []
        from hybrid_rag.text import keyword_tokens

        terms = [t for t in dict.fromkeys(keyword_tokens(text)) if len(t) <= _MAX_TERM]
        if not terms:
            return []
        where, params = _doc_filter(doc_ids)
        scope = where.replace(" WHERE ", " AND ")
        sql = (
            f'SELECT TOP {int(k)} {_COLS}, SCORE() AS "SCORE" FROM {self._table}'
            f' WHERE CONTAINS("TOKENS", ?, EXACT){scope} ORDER BY "SCORE" DESC, "DOC_ID", "SEQ"'
        )
        query = " OR ".join(f'"{t}"' for t in terms)
        rows = self._guard(lambda conn: self._keyword_rows(conn, sql, [query, *params]), _KW_ERR)
        return [VectorHit(chunk=_chunk(r), score=float(r[7])) for r in rows if float(r[7]) > 0]

    def _keyword_rows(self, conn: Any, sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
        if self._existing_dim(conn) is None:
            return []
        self._ensure_fulltext(conn)
        cur = conn.cursor()
        try:
            cur.execute(sql, params)
            return [tuple(r) for r in cur.fetchall()]
        finally:
            cur.close()

    def _fulltext_sql(self) -> str:
        name = quote_ident(f"{self._table_name}_TOKENS_FTI")
        return f'CREATE FULLTEXT INDEX {name} ON {self._table} ("TOKENS") FAST PREPROCESS ON SYNC'

    def _ensure_fulltext(self, conn: Any) -> None:
        """Give a table of an older version its ``TOKENS`` column and full-text index.

        The column is filled ``batch_size`` chunks at a time (the only time chunk texts
        leave the database in bulk), then indexed; idempotent, and safe to repeat after
        an interruption.
        """
        if self._fulltext:
            return
        where, params = self._schema_clause()
        cur = conn.cursor()
        try:
            cur.execute(
                f"SELECT COUNT(*) FROM SYS.TABLE_COLUMNS WHERE {where}"
                " AND TABLE_NAME = ? AND COLUMN_NAME = ?",
                [*params, self._table_name, "TOKENS"],
            )
            if not cur.fetchone()[0]:
                cur.execute(f'ALTER TABLE {self._table} ADD ("TOKENS" NCLOB)')
            self._fill_tokens(cur)
            cur.execute(
                f"SELECT COUNT(*) FROM SYS.FULLTEXT_INDEXES WHERE {where}"
                " AND TABLE_NAME = ? AND INDEX_NAME = ?",
                [*params, self._table_name, f"{self._table_name}_TOKENS_FTI"],
            )
            if not cur.fetchone()[0]:
                cur.execute(self._fulltext_sql())
        finally:
            cur.close()
        self._fulltext = True

    def _fill_tokens(self, cur: Any) -> None:
        select = (
            f'SELECT TOP {self._batch} "DOC_ID", "CHUNK_ID", "TEXT" FROM {self._table}'
            ' WHERE "TOKENS" IS NULL'
        )
        update = f'UPDATE {self._table} SET "TOKENS" = ? WHERE "DOC_ID" = ? AND "CHUNK_ID" = ?'
        while True:
            cur.execute(select)
            rows = cur.fetchall()
            if not rows:
                return
            cur.executemany(update, [(_tokens(_text(t)), d, c) for d, c, t in rows])

    def close(self) -> None:
        """Close the pool's connections; idempotent (HANA persists every commit)."""
        self._pool.close()


def _create_sql(table: str, vector_type: str, dim: int) -> str:
    return (
        f"CREATE COLUMN TABLE {table} ("
        '"DOC_ID" NVARCHAR(128) NOT NULL, "CHUNK_ID" NVARCHAR(512) NOT NULL, '
        '"SEQ" INTEGER NOT NULL, "PAGE" INTEGER NOT NULL, '
        '"START_OFFSET" INTEGER NOT NULL, "END_OFFSET" INTEGER NOT NULL, '
        '"SECTION" NVARCHAR(1000), "TEXT" NCLOB NOT NULL, "METADATA" NCLOB, '
        f'"WRITE_ID" NVARCHAR(32) NOT NULL, "EMBEDDING" {vector_type}({int(dim)}) NOT NULL, '
        '"TOKENS" NCLOB, PRIMARY KEY ("DOC_ID", "CHUNK_ID"))'
    )


def _tokens(text: str) -> str:
    from hybrid_rag.stores._keywords import index_text
    from hybrid_rag.text import keyword_tokens

    return index_text(keyword_tokens(text))


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def _doc_filter(doc_ids: Sequence[str] | None) -> tuple[str, list[Any]]:
    if doc_ids is None:
        return "", []
    if isinstance(doc_ids, str):
        raise TypeError("doc_ids must be a sequence of doc ids, not a string")
    docs = list(dict.fromkeys(doc_ids))
    return f' WHERE "DOC_ID" IN ({_marks(len(docs))})', docs


def _text(value: Any) -> str:
    if hasattr(value, "read"):
        value = value.read()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8")
    return str(value)


def _chunk(row: Sequence[Any]) -> Chunk:
    return Chunk(
        chunk_id=str(row[0]),
        doc_id=str(row[1]),
        page=int(row[2]),
        start=int(row[3]),
        end=int(row[4]),
        text=_text(row[5]),
        section=None if row[6] is None else str(row[6]),
    )
