"""Test doubles for ``hdbcli`` so the HANA stores run without a HANA instance.

These are doubles, not HANA. They keep the parts of HANA the stores rely on real enough
to catch mistakes:

* ``cursor.callproc("SYS.SPARQL_EXECUTE", (request, headers, "?", None))`` runs the
  request on a real SPARQL engine (pyoxigraph) with HANA's dataset rule (a query that
  names no dataset reads the DEFAULT graph plus every named graph), answers SELECT/ASK
  as SPARQL JSON or XML per the ``Accept`` header (XML without one), buffers updates
  made with autocommit off until ``commit()``, and rejects graph DDL
  (``CREATE``/``DROP GRAPH``) while autocommit is off, as HANA does.
* SQL runs on SQLite after a few mechanical rewrites (``SELECT TOP n`` -> ``LIMIT n``,
  ``UPSERT ... WITH PRIMARY KEY`` -> ``INSERT OR REPLACE``, ``CREATE COLUMN TABLE``,
  ``SYS.TABLES``/``SYS.TABLE_COLUMNS`` look-ups, ``COSINE_SIMILARITY``,
  ``TO_REAL_VECTOR``, ``VECTOR_EMBEDDING``, ``DUMMY``). Vector parameters must be bound
  in HANA's binary format (little-endian uint32 length + float32 values); text raises.
* Full-text search: ``CREATE FULLTEXT INDEX name ON table (column) ...`` is remembered
  (and listed in ``SYS.FULLTEXT_INDEXES``); ``CONTAINS(column, ?[, EXACT])`` requires such
  an index on that column (so a store that forgot to create one fails here) and accepts
  only what the stores send: quoted or bare terms joined by ``OR``. It emulates HANA's
  EXACT search with ``FAST PREPROCESS ON``: text and terms are lower-cased and split into
  words at every character that is not a letter or digit, and a term matches a row whose
  words contain the term's words consecutively (a phrase). ``SCORE()`` is a TF-IDF
  stand-in in (0, 1): per matched term sqrt(tf) * ln(1 + N/df) over the row's length,
  summed, then s / (1 + s). HANA's own formula differs in detail, so tests may rely on
  which rows match, the scope and "rarer / more frequent terms rank higher", not on
  the values. It scans the whole table per statement: a double, not an index.
* Every statement is recorded (``RecordedCall``: connection, thread, SQL text,
  parameters, batch size), and every connection remembers the threads that used it,
  so tests can assert that no connection was shared between threads.

Usage::

    driver = FakeHdbcli()
    pool = HanaConnectionPool(FAKE_SETTINGS, driver=driver)
    store = HanaGraphStore(pool=pool)
"""

from __future__ import annotations

import re
import sqlite3
import struct
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count
from typing import Any

import numpy as np
from pydantic import SecretStr

from hybrid_rag.providers.hashing import HashingEmbedder
from hybrid_rag.sparql import _is_kw, _tokens
from hybrid_rag.stores.hana._connection import HanaSettings

__all__ = [
    "FAKE_SETTINGS",
    "FakeHanaConnection",
    "FakeHanaCursor",
    "FakeHanaDatabase",
    "FakeHdbcli",
    "HanaDoubleError",
    "RecordedCall",
    "fvecs",
]

FAKE_SETTINGS = HanaSettings(
    host="hana.double.invalid", user="DOUBLE", password=SecretStr("double-secret-pw")
)


class HanaDoubleError(Exception):
    """Stands in for ``hdbcli.dbapi.Error`` (``errorcode``, ``errortext``)."""

    def __init__(self, errorcode: int, errortext: str) -> None:
        super().__init__(errorcode, errortext)
        self.errorcode = errorcode
        self.errortext = errortext


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One statement a double connection ran."""

    connection: int
    thread: int
    op: str  # "execute" | "executemany" | "callproc"
    sql: str
    params: tuple[Any, ...] | None
    batch: int = 1


def fvecs(values: Sequence[float], *, half: bool = False) -> bytes:
    """HANA's binary vector format: uint32 length then float32 (or float16) values."""
    return struct.pack(f"<I{len(values)}{'e' if half else 'f'}", len(values), *values)


def _unpack(blob: Any) -> list[float]:
    if isinstance(blob, str):
        raise HanaDoubleError(-1, "double: vector bound as text; bind HANA's binary format")
    data = bytes(blob)
    (n,) = struct.unpack_from("<I", data)
    if len(data) == 4 + 4 * n:
        return list(struct.unpack_from(f"<{n}f", data, 4))
    if len(data) == 4 + 2 * n:
        return list(struct.unpack_from(f"<{n}e", data, 4))
    raise HanaDoubleError(-1, "double: malformed binary vector")


def _cosine(a: Any, b: Any) -> float:
    x, y = _unpack(a), _unpack(b)
    if len(x) != len(y):
        raise HanaDoubleError(-1, f"vector dimensions differ: {len(x)} vs {len(y)}")
    dot = sum(p * q for p, q in zip(x, y, strict=True))
    nx, ny = sum(p * p for p in x) ** 0.5, sum(q * q for q in y) ** 0.5
    return dot / (nx * ny) if nx and ny else 0.0


def _embedding(text: str, kind: str, model: str) -> bytes:
    """``VECTOR_EMBEDDING`` stand-in: the offline hashing embedder (dimension 64)."""
    vec = _HASHING.embed_sync([text])[0]
    return fvecs([float(v) for v in vec])


_HASHING = HashingEmbedder(dim=64)


class FakeHanaDatabase:
    """The shared state behind every double connection: SPARQL engine, SQL, records."""

    def __init__(self) -> None:
        from pyoxigraph import Store

        self.rdf = Store()
        self.sql = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self.sql.create_function("COSINE_SIMILARITY", 2, _cosine, deterministic=True)
        self.sql.create_function("TO_REAL_VECTOR", 1, lambda b: bytes(fvecs(_unpack(b))))
        self.sql.create_function("VECTOR_EMBEDDING", 3, _embedding)
        self.sql.execute('CREATE TABLE "DUMMY" ("DUMMY" TEXT)')
        self.sql.execute("INSERT INTO \"DUMMY\" VALUES ('X')")
        self.sql_lock = threading.RLock()  # held by a connection for a whole transaction
        self.rdf_lock = threading.Lock()
        self.calls: list[RecordedCall] = []
        self.fulltext: dict[str, tuple[str, str]] = {}  # index name -> (table, column)
        self.connections: list[FakeHanaConnection] = []
        self._record_lock = threading.Lock()
        self._ids = count(1)

    def record(self, call: RecordedCall) -> None:
        with self._record_lock:
            self.calls.append(call)

    def statements(self, pattern: str = "") -> list[RecordedCall]:
        """Recorded calls whose SQL text matches ``pattern`` (regex, case-insensitive)."""
        with self._record_lock:
            return [c for c in self.calls if re.search(pattern, c.sql, re.I)]

    def shared_connections(self) -> list[FakeHanaConnection]:
        """Connections that were used from more than one thread (should be none)."""
        return [c for c in self.connections if len(c.threads) > 1]

    def default_graph_size(self) -> int:
        """Triples in the SPARQL DEFAULT graph (the library must never write there)."""
        from pyoxigraph import DefaultGraph

        return sum(1 for _ in self.rdf.quads_for_pattern(None, None, None, DefaultGraph()))

    def drop_connections(self) -> None:
        """Simulate the server closing every session (idle timeout)."""
        for conn in self.connections:
            conn.connected = False


class FakeHdbcli:
    """A driver module double: ``connect(**kwargs)`` and ``Error``, over one database."""

    Error = HanaDoubleError

    def __init__(self, database: FakeHanaDatabase | None = None) -> None:
        self.database = database or FakeHanaDatabase()
        self.connect_keys: list[frozenset[str]] = []

    def __repr__(self) -> str:
        return f"FakeHdbcli(connections={len(self.database.connections)})"

    def connect(self, **kwargs: Any) -> FakeHanaConnection:
        """Open a double connection (the password is checked for presence, not kept)."""
        if not kwargs.get("address") or not kwargs.get("password"):
            raise HanaDoubleError(10, "authentication failed")
        self.connect_keys.append(frozenset(kwargs))
        conn = FakeHanaConnection(self.database, next(self.database._ids))
        self.database.connections.append(conn)
        return conn


class FakeHanaConnection:
    """A connection double that remembers which threads used it."""

    def __init__(self, database: FakeHanaDatabase, ident: int) -> None:
        self.database = database
        self.ident = ident
        self.threads: set[int] = set()
        self.autocommit = True
        self.connected = True
        self.closed = False
        self._in_tx = False
        self._pending: list[str] = []

    def __repr__(self) -> str:
        return f"FakeHanaConnection({self.ident}, threads={len(self.threads)})"

    def touch(self) -> None:
        self.threads.add(threading.get_ident())
        if self.closed or not self.connected:
            raise HanaDoubleError(-10807, "Connection down: socket closed")

    def cursor(self) -> FakeHanaCursor:
        self.touch()
        return FakeHanaCursor(self)

    def isconnected(self) -> bool:
        return self.connected and not self.closed

    def setautocommit(self, on: bool) -> None:
        self.touch()
        if on and not self.autocommit:
            self.commit()
        self.autocommit = on

    def getautocommit(self) -> bool:
        return self.autocommit

    def begin_sql(self) -> None:
        """Take the SQL lock for a statement; with autocommit off, also for the transaction."""
        self.database.sql_lock.acquire()
        if not self.autocommit and not self._in_tx:
            self.database.sql.execute("BEGIN")
            self._in_tx = True
            self.database.sql_lock.acquire()  # held until commit/rollback

    def end_sql(self) -> None:
        self.database.sql_lock.release()

    def commit(self) -> None:
        self.touch()
        self._finish("COMMIT")
        with self.database.rdf_lock:
            for update in self._pending:
                self.database.rdf.update(update)
        self._pending = []

    def rollback(self) -> None:
        self.touch()
        self._finish("ROLLBACK")
        self._pending = []

    def _finish(self, word: str) -> None:
        if self._in_tx:
            self.database.sql.execute(word)
            self._in_tx = False
            self.database.sql_lock.release()  # the hold taken by BEGIN

    def close(self) -> None:
        if self._in_tx:
            try:
                self._finish("ROLLBACK")
            except RuntimeError:  # closed from another thread than the one in the transaction
                self._in_tx = False
        self.closed = True


class FakeHanaCursor:
    """A cursor double: SQL on SQLite, ``SYS.SPARQL_EXECUTE`` on pyoxigraph."""

    def __init__(self, conn: FakeHanaConnection) -> None:
        self.conn = conn
        self.rowcount = -1
        self._rows: list[tuple[Any, ...]] = []

    def _record(self, op: str, sql: str, params: Any, batch: int = 1) -> None:
        db = self.conn.database
        tup = None if params is None else tuple(params)
        db.record(RecordedCall(self.conn.ident, threading.get_ident(), op, sql, tup, batch))

    # -- SQL ---------------------------------------------------------------------------

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> None:
        self.conn.touch()
        self._record("execute", sql, params)
        special = _system_view(self.conn.database, sql, list(params or ()))
        if special is not None:
            self._rows, self.rowcount = special, len(special)
            return
        if re.match(r"\s*CREATE\s+HNSW\s+VECTOR\s+INDEX", sql, re.I):
            self._rows, self.rowcount = [], 0
            return
        if _create_fulltext(self.conn.database, sql):
            self._rows, self.rowcount = [], 0
            return
        if re.search(r"\bCONTAINS\s*\(", sql, re.I):
            with self.conn.database.sql_lock:  # the statement's functions stay its own
                text, args = _fulltext_query(self.conn.database, sql, list(params or ()))
                self._run(lambda db: db.execute(_to_sqlite(text), _check_params(args)))
            return
        self._run(lambda db: db.execute(_to_sqlite(sql), _check_params(params or ())))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.conn.touch()
        self._record("executemany", sql, None, batch=len(rows))
        checked = [_check_params(r) for r in rows]
        self._run(lambda db: db.executemany(_to_sqlite(sql), checked))

    def _run(self, fn: Any) -> None:
        self.conn.begin_sql()
        try:
            cur = fn(self.conn.database.sql)
            self._rows = [tuple(r) for r in cur.fetchall()] if cur.description else []
            self.rowcount = cur.rowcount if cur.rowcount >= 0 else len(self._rows)
        except sqlite3.IntegrityError as exc:
            raise HanaDoubleError(301, f"unique constraint violated: {exc}") from None
        except sqlite3.Error as exc:
            raise HanaDoubleError(257, f"sql syntax error: {exc}") from None
        finally:
            self.conn.end_sql()

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows.pop(0) if self._rows else None

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self._rows = self._rows, []
        return rows

    def close(self) -> None:
        self._rows = []

    # -- SPARQL ------------------------------------------------------------------------

    def callproc(self, name: str, params: Sequence[Any]) -> list[Any]:
        self.conn.touch()
        self._record("callproc", name, params)
        if name.upper() not in ("SYS.SPARQL_EXECUTE", "SPARQL_EXECUTE"):
            raise HanaDoubleError(328, f"invalid name of function or procedure: {name}")
        request, header_text = str(params[0]), str(params[1] or "")
        headers = _headers(header_text)
        if "update" in headers.get("content-type", ""):
            self._sparql_update(request)
            return [request, header_text, "", "{}"]
        body, ctype = self._sparql_query(request, headers.get("accept", ""))
        return [request, header_text, body, f'{{"Content-Type": "{ctype}"}}']

    def _sparql_update(self, request: str) -> None:
        ddl = re.search(r"\b(CREATE|DROP)\s+(SILENT\s+)?GRAPH\b", request, re.I)
        if ddl and not self.conn.autocommit:
            raise HanaDoubleError(7, "feature not supported: graph DDL requires autocommit on")
        if not self.conn.autocommit:
            self._check_update(request)
            self.conn._pending.append(request)
            return
        with self.conn.database.rdf_lock:
            try:
                self.conn.database.rdf.update(request)
            except (SyntaxError, ValueError, OSError, RuntimeError) as exc:
                raise _sparql_error(exc) from None

    def _check_update(self, request: str) -> None:
        from pyoxigraph import Store

        try:  # parse (and run) on a scratch store so errors surface at execute time
            Store().update(request)
        except (SyntaxError, ValueError) as exc:
            raise _sparql_error(exc) from None

    def _sparql_query(self, request: str, accept: str) -> tuple[str, str]:
        from pyoxigraph import QueryResultsFormat

        union = not any(_is_kw(t, "FROM") for t in _tokens(request))  # HANA's default rule
        fmt, ctype = QueryResultsFormat.XML, "application/sparql-results+xml"
        if "json" in accept:
            fmt, ctype = QueryResultsFormat.JSON, "application/sparql-results+json"
        try:
            result: Any = self.conn.database.rdf.query(request, use_default_graph_as_union=union)
            body = result.serialize(format=fmt)
        except (SyntaxError, ValueError, OSError, RuntimeError) as exc:
            message = str(exc)
        else:
            return (body or b"").decode("utf-8"), ctype
        raise _sparql_error(message)


def _sparql_error(exc: BaseException | str) -> HanaDoubleError:
    return HanaDoubleError(
        2048, f"column store error: SPARQL error: {exc}; Server Connection 1: double:30015"
    )


def _headers(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.split("\r\n"):
        if ":" in line:
            key, value = line.split(":", 1)
            out[key.strip().lower()] = value.strip().lower()
    return out


def _check_params(params: Sequence[Any]) -> tuple[Any, ...]:
    out = []
    for p in params:
        if isinstance(p, memoryview | bytearray):
            p = bytes(p)
        out.append(p)
    return tuple(out)


_SCHEMA_PREFIX = re.compile(r'"[A-Za-z_][A-Za-z0-9_]*"\.(?=")')


def _to_sqlite(sql: str) -> str:
    """Rewrite the HANA SQL the stores use into SQLite SQL."""
    out = _SCHEMA_PREFIX.sub("", sql.strip())
    out = re.sub(r"^CREATE\s+COLUMN\s+TABLE", "CREATE TABLE", out, flags=re.I)
    out = re.sub(r"\bTO_HALF_VECTOR\(", "TO_REAL_VECTOR(", out)
    top = re.match(r"SELECT\s+TOP\s+(\d+)\s+(.*)$", out, re.I | re.S)
    if top:
        out = f"SELECT {top.group(2)} LIMIT {top.group(1)}"
    out = re.sub(r'^(ALTER\s+TABLE\s+\S+\s+)ADD\s+\(("\w+"\s+\w+)\)$', r"\1ADD COLUMN \2", out)
    upsert = re.match(r"UPSERT\s+(\S+)\s+(.*)\s+WITH\s+PRIMARY\s+KEY$", out, re.I | re.S)
    if upsert:
        out = f"INSERT OR REPLACE INTO {upsert.group(1)} {upsert.group(2)}"
    return out


def _system_view(db: FakeHanaDatabase, sql: str, params: list[Any]) -> list[tuple[Any, ...]] | None:
    """Answers for ``SYS.TABLES`` and ``SYS.TABLE_COLUMNS`` look-ups (else ``None``)."""
    if re.search(r"\bFROM\s+SYS\.TABLES\b", sql, re.I):
        table = params[-1]
        with db.sql_lock:
            row = db.sql.execute(
                "SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name=?", (table,)
            ).fetchone()
        return [(row[0],)]
    if re.search(r"\bFROM\s+SYS\.FULLTEXT_INDEXES\b", sql, re.I):
        table, name = params[-2], params[-1]
        return [(int(db.fulltext.get(name, ("", ""))[0] == table),)]
    if re.search(r"\bFROM\s+SYS\.DATA_TYPES\b", sql, re.I):
        return [(1,)]
    if re.search(r"\bFROM\s+SYS\.TABLE_COLUMNS\b", sql, re.I):
        table, column = params[-2], params[-1]
        with db.sql_lock:
            info = db.sql.execute(f'PRAGMA table_info("{table}")').fetchall()
        if re.match(r"\s*SELECT\s+COUNT\(\*\)", sql, re.I):
            return [(int(any(row[1] == column for row in info)),)]
        for _cid, name, ctype, *_ in info:
            if name == column:
                m = re.match(r"(\w+)\s*\((\d+)\)", ctype)
                return [(m.group(1), int(m.group(2)))] if m else [(ctype, None)]
        return []
    return None


# -- full-text search ---------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")
_CONTAINS = re.compile(r'CONTAINS\s*\(\s*"(\w+)"\s*,\s*\?\s*(?:,\s*EXACT\s*)?\)', re.I)


def _create_fulltext(db: FakeHanaDatabase, sql: str) -> bool:
    """Remember ``CREATE FULLTEXT INDEX name ON table (column)``; ``False`` for other SQL."""
    m = re.match(
        r'\s*CREATE\s+FULLTEXT\s+INDEX\s+"(\w+)"\s+ON\s+(?:"\w+"\.)?"(\w+)"\s*\(\s*"(\w+)"\s*\)',
        sql,
        re.I,
    )
    if not m:
        return False
    if m.group(1) in db.fulltext:
        raise HanaDoubleError(261, f"duplicate index name: {m.group(1)}")
    db.fulltext[m.group(1)] = (m.group(2), m.group(3))
    return True


def _phrases(search: str) -> list[tuple[str, ...]]:
    """The terms of a ``CONTAINS`` search string of OR-joined terms, as word tuples."""
    parts = re.findall(r'"([^"]*)"|(\S+)', search)
    terms = [quoted or bare for quoted, bare in parts]
    if any(t.upper() in ("AND", "NOT") or t.startswith("-") for t in terms) or (
        len(terms) > 1 and [t.upper() for t in terms[1::2]] != ["OR"] * (len(terms) // 2)
    ):
        raise HanaDoubleError(-1, f"double: only terms joined by OR are emulated: {search!r}")
    return [tuple(_WORD.findall(t.lower())) for t in terms[::2] if _WORD.search(t)]


def _count(words: list[str], phrase: tuple[str, ...]) -> int:
    n = len(phrase)
    return sum(1 for i in range(len(words) - n + 1) if tuple(words[i : i + n]) == phrase)


def _fulltext_query(db: FakeHanaDatabase, sql: str, params: list[Any]) -> tuple[str, list[Any]]:
    """Rewrite ``CONTAINS``/``SCORE()`` into functions over this statement's term stats."""
    m = _CONTAINS.search(sql)
    table = re.search(r'\bFROM\s+(?:"\w+"\.)?"(\w+)"', sql, re.I)
    if m is None or table is None:
        raise HanaDoubleError(257, "double: unsupported CONTAINS form")
    column = m.group(1)
    if (table.group(1), column) not in db.fulltext.values():
        raise HanaDoubleError(7, f"feature not supported: no full-text index on {column}")
    at = sql[: m.start()].count("?")
    phrases = _phrases(str(params[at]))
    with db.sql_lock:
        texts = [r[0] or "" for r in db.sql.execute(f'SELECT "{column}" FROM "{table.group(1)}"')]
    rows = [_WORD.findall(t.lower()) for t in texts]
    df = {p: sum(1 for w in rows if _count(w, p)) for p in phrases}
    idf = {p: float(np.log1p(len(rows) / d)) for p, d in df.items() if d}

    def score(text: str | None, _query: str) -> float:
        words = _WORD.findall((text or "").lower())
        s = sum(np.sqrt(_count(words, p)) * w for p, w in idf.items()) / np.sqrt(len(words) or 1)
        return float(s / (1 + s))

    db.sql.create_function("HANA_SCORE", 2, score)
    db.sql.create_function("HANA_CONTAINS", 2, lambda t, q: int(score(t, q) > 0))
    out = _CONTAINS.sub(f'HANA_CONTAINS("{column}", ?)', sql)
    score_at = out.find("SCORE()")
    if score_at >= 0:
        params.insert(out[:score_at].count("?"), params[at])
        out = out.replace("SCORE()", f'HANA_SCORE("{column}", ?)', 1)
    return out, params
