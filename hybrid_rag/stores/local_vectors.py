"""Embedded vector store: chunks in SQLite, vectors in a memory-mapped float32 matrix.

Layout under ``path`` (a folder): ``chunks.sqlite3`` (chunk records, text, the matrix row
of each chunk), ``vectors.f32`` (raw row-major float32 matrix, L2-normalised rows) and,
once a large collection has been searched, ``ann.usearch`` (the usearch HNSW index; a
``hnsw.bin`` left by an older version is ignored).

Search strategy (chosen by measurement, see ``docs/benchmarks.md``):

* a search restricted to documents scans exactly the rows of those documents (a document
  of ~1000 chunks takes well under a millisecond); only a filter covering more than
  ``ann_threshold`` rows asks the HNSW index for extra candidates and keeps those in the
  filter, falling back to the exact scan when fewer than ``k`` survive;
* an unrestricted search scans every row exactly while the collection holds at most
  ``ann_threshold`` rows, and uses a usearch HNSW index (built lazily, updated in place)
  above it; its candidates (``ann_oversample`` x ``k``) are re-scored exactly from the
  float32 matrix.

Deleted or replaced rows are freed and reused by later writes, so the files never need
compaction. Keyword search is BM25 on a tantivy index under ``keywords/``
(``hybrid_rag.stores._keywords``), updated per document: a write costs in proportion
to that document, never to the store.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import shutil
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

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
from hybrid_rag.stores._keywords import KeywordIndex, index_text
from hybrid_rag.stores._lock import StoreLock
from hybrid_rag.text import keyword_tokens

__all__ = ["LocalVectorStore"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

_SCHEMA = """
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
    section TEXT
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (doc_id, page, start, seq);
CREATE TABLE IF NOT EXISTS kw_pending (doc_id TEXT PRIMARY KEY);
"""
_COLS = 'slot, chunk_id, doc_id, page, start, "end", text, section'
_ANN_FILE = "ann.usearch"
_KW_DIR = "keywords"
_KW_FORMAT = "kw_index"  # meta key: the keyword index format under keywords/, once complete
_KW_VERSION = "tantivy-1"
_OLD_BM25 = ("bm25", "bm25_ok")  # folder and meta flag of the bm25s index (until 0.1)
_ANN_BATCH = 65_536  # rows copied out of the matrix per index.add while building
_ANN_OK = "ann_usearch_ok"  # "1": ann.usearch matches the data; hnsw.bin used "ann_ok"
_KW_MAX_DEAD = 4_096  # freed chunks whose keyword tombstones may wait for a later commit
_KW_BURST_S = 1.0  # a write this soon after the previous one leaves its keyword commit staged


def _row_chunk(row: tuple[Any, ...]) -> Chunk:
    return Chunk(
        chunk_id=row[1],
        doc_id=row[2],
        page=row[3],
        start=row[4],
        end=row[5],
        text=row[6],
        section=row[7],
    )


def _normalise(vectors: F32) -> F32:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: F32 = (vectors / norms).astype(np.float32, copy=False)
    return out


class _Matrix:
    """Growable float32 row matrix, in RAM or memory-mapped from a raw file."""

    def __init__(self, file: Path | None, dim: int) -> None:
        self.file, self.dim = file, dim
        self.data: F32 = np.zeros((0, dim), dtype=np.float32)
        if file is not None and file.exists() and file.stat().st_size:
            rows = file.stat().st_size // (4 * dim)
            self.data = np.memmap(file, dtype=np.float32, mode="r+", shape=(rows, dim))

    def ensure(self, rows: int) -> None:
        """Grow the capacity (doubling) to at least ``rows`` rows."""
        if rows <= len(self.data):
            return
        cap = max(rows, 2 * len(self.data), 1024)
        if self.file is None:
            grown = np.zeros((cap, self.dim), dtype=np.float32)
            grown[: len(self.data)] = self.data
            self.data = grown
            return
        self.flush()
        with open(self.file, "ab") as fh:
            fh.truncate(cap * 4 * self.dim)
        self.data = np.memmap(self.file, dtype=np.float32, mode="r+", shape=(cap, self.dim))

    def flush(self) -> None:
        """Write dirty pages of a memory-mapped matrix to disk."""
        if isinstance(self.data, np.memmap):
            self.data.flush()


class LocalVectorStore(Closing):
    """Embedded, persistent ``VectorStore`` (dense + BM25).

    Args:
        path: Folder holding the store's files; ``None`` keeps everything in memory.
        dim: Vector dimension. ``None`` takes it from the store on disk or from the first
            ``replace``.
        ann_threshold: Above this many live rows an unrestricted search uses the HNSW
            index instead of an exact scan.
        ef_search: HNSW search breadth, usearch ``expansion_search`` (raised to the
            number of candidates fetched when smaller).
        hnsw_m: HNSW graph degree, usearch ``connectivity``.
        ef_construction: HNSW build breadth, usearch ``expansion_add``.
        ann_dtype: How the index stores its copy of the vectors: ``"f16"`` (half the
            memory; candidates are re-scored in float32 anyway) or ``"f32"``.
        ann_oversample: The index returns ``ann_oversample * k`` candidates, re-ranked
            exactly; more costs little and lifts recall.

    Thread-safe: every call holds one lock. Use as a context manager or call
    ``close``.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        dim: int | None = None,
        ann_threshold: int = 200_000,
        ef_search: int = 256,
        hnsw_m: int = 16,
        ef_construction: int = 100,
        ann_dtype: str = "f16",
        ann_oversample: int = 4,
    ) -> None:
        if dim is not None and dim < 1:
            raise ConfigurationError(f"dim must be positive, got {dim}")
        if ann_threshold < 0 or ef_search < 1 or hnsw_m < 2 or ef_construction < 1:
            raise ConfigurationError("ann_threshold, ef_search, hnsw_m, ef_construction too small")
        if ann_dtype not in ("f16", "f32"):
            raise ConfigurationError(f"ann_dtype must be 'f16' or 'f32', got {ann_dtype!r}")
        if ann_oversample < 1:
            raise ConfigurationError(f"ann_oversample must be >= 1, got {ann_oversample}")
        self._path = Path(path) if path is not None else None
        self._dim = dim
        self._ann_threshold = ann_threshold
        self._ef, self._m, self._efc = ef_search, hnsw_m, ef_construction
        self._ann_dtype, self._oversample = ann_dtype, ann_oversample
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._mat: _Matrix | None = None
        self._alive = np.zeros(0, dtype=bool)
        self._doc_slots: dict[str, I64] = {}
        self._ann: Any = None
        self._ann_pending: set[int] = set()
        self._ann_saved = True
        self._ann_disk_ok = False
        self._kw: KeywordIndex | None = None
        self._kw_synced = True  # every write so far is committed to the keyword index
        self._kw_failed = False  # a staged update failed: re-index kw_pending from SQLite
        self._kw_dead: set[int] = set()  # freed slots still in the committed keyword index
        self._kw_last_write = -math.inf  # time.monotonic() of the last write or delete
        self._closed = False
        self._file_lock = None if self._path is None else StoreLock(self._path, what="vector store")

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Persist the matrix and the HNSW index, close the database; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._db is None:
                return
            if self._mat is not None:
                self._mat.flush()
            self._save_ann()
            if self._kw is not None:
                with contextlib.suppress(StoreError):  # what fails is redone on open
                    self._commit_keywords(self._db, self._kw)
                self._kw.close()
                if self._kw_synced:
                    self._db.execute("DELETE FROM kw_pending")
            self._db.close()
            self._db = None
            if self._file_lock is not None:
                self._file_lock.release()

    def _open(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("the vector store is closed")
        if self._db is not None:
            return self._db
        target = ":memory:"
        if self._path is not None:
            try:
                self._path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create vector store folder {self._path}: {exc}") from exc
            target = str(self._path / "chunks.sqlite3")
        if self._file_lock is not None:
            self._file_lock.acquire()  # one writer per store: StoreLockedError at once
        try:
            db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
            db.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            if self._file_lock is not None:
                self._file_lock.release()
            raise StoreError(f"cannot open vector store {target}: {exc}") from exc
        self._db = db
        self._load_state(db)
        return db

    def _meta(self, db: sqlite3.Connection, key: str) -> str | None:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _load_state(self, db: sqlite3.Connection) -> None:
        stored = self._meta(db, "dim")
        if stored is not None:
            if self._dim is not None and self._dim != int(stored):
                raise StoreError(f"store at {self._path} has dim {stored}, not {self._dim}")
            self._dim = int(stored)
        if self._dim is None:
            return
        self._init_matrix(db)
        rows = db.execute("SELECT doc_id, slot FROM chunks ORDER BY doc_id, seq").fetchall()
        slots = np.array([r[1] for r in rows], dtype=np.int64)
        self._alive = np.zeros(len(self._mat.data) if self._mat else 0, dtype=bool)
        self._alive[slots] = True
        docs = [r[0] for r in rows]
        bounds = [0, *(i for i in range(1, len(docs)) if docs[i] != docs[i - 1]), len(docs)]
        bounds = bounds if docs else []
        for lo, hi in itertools.pairwise(bounds):
            self._doc_slots[docs[lo]] = slots[lo:hi]
        self._load_ann(db)

    def _init_matrix(self, db: sqlite3.Connection) -> None:
        assert self._dim is not None
        db.execute("INSERT OR IGNORE INTO meta VALUES ('dim', ?)", (str(self._dim),))
        file = self._path / "vectors.f32" if self._path is not None else None
        self._mat = _Matrix(file, self._dim)
        if len(self._alive) < len(self._mat.data):
            self._alive = np.resize(self._alive, len(self._mat.data))

    # ------------------------------------------------------------------ writes

    def replace(self, doc_id: str, chunks: Sequence[Chunk], vectors: F32) -> int:
        """Make ``doc_id`` hold exactly ``chunks`` with their ``vectors`` (one row each).

        Raises:
            InvalidDocIdError: Bad ``doc_id``.
            InputError: ``chunks`` or ``vectors`` of the wrong type.
            StoreError: wrong dimension, row count or chunk ownership; nothing is written.
        """
        check_doc_id(doc_id)
        chunks, vectors = check_chunks(chunks), check_matrix(vectors)
        with self._lock:
            db = self._open()
            if not chunks and np.asarray(vectors).size == 0:
                self.delete(doc_id)
                return 0
            arr = self._check_write(doc_id, chunks, vectors)
            if self._dim is None:
                self._dim = int(arr.shape[1])
            if self._mat is None:
                self._init_matrix(db)
            assert self._mat is not None
            kw = self._keywords(db)
            old = self._doc_slots.get(doc_id, np.zeros(0, dtype=np.int64))
            slots = self._allocate(len(chunks))
            self._mat.data[slots] = _normalise(arr) if len(arr) else arr
            self._mat.flush()
            rows = [
                (int(s), doc_id, i, c.chunk_id, c.page, c.start, c.end, c.text, c.section)
                for i, (s, c) in enumerate(zip(slots, chunks, strict=True))
            ]
            with self._transaction(db):
                self._mark_ann_stale(db)
                self._mark_kw_pending(db, doc_id)
                db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
                db.executemany("INSERT INTO chunks VALUES (?,?,?,?,?,?,?,?,?)", rows)
            self._alive[old] = False
            self._alive[slots] = True
            self._set_doc(doc_id, slots)
            self._kw_dead.update(int(s) for s in old)
            self._index_keywords(db, kw, doc_id, [(r[0], r[7]) for r in rows])
            self._ann_pending.update(int(s) for s in np.union1d(old, slots))
            return len(chunks)

    def delete(self, doc_id: str) -> int:
        """Remove the document's chunks; returns how many were removed (0 if unknown)."""
        with self._lock:
            db = self._open()
            if doc_id not in self._doc_slots:
                return 0
            kw = self._keywords(db)
            with self._transaction(db):
                self._mark_ann_stale(db)
                self._mark_kw_pending(db, doc_id)
                db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            old = self._doc_slots.pop(doc_id)
            self._alive[old] = False
            self._kw_dead.update(int(s) for s in old)
            self._index_keywords(db, kw, doc_id, [])
            self._ann_pending.update(int(s) for s in old)
            return len(old)

    def _check_write(self, doc_id: str, chunks: Sequence[Chunk], vectors: F32) -> F32:
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != len(chunks):
            raise StoreError(
                f"need one vector row per chunk: {len(chunks)} chunks, vectors of shape {arr.shape}"
            )
        if arr.shape[1] != (self._dim or arr.shape[1]):
            raise StoreError(f"vector dimension {arr.shape[1]} != store dimension {self._dim}")
        if not np.isfinite(arr).all():
            raise StoreError("vectors contain NaN or infinity")
        ids = [c.chunk_id for c in chunks]
        if len(set(ids)) != len(ids):
            raise StoreError(f"duplicate chunk ids in document {doc_id!r}")
        wrong = [c.chunk_id for c in chunks if c.doc_id != doc_id]
        if wrong:
            raise StoreError(f"chunks {wrong[:3]} do not belong to document {doc_id!r}")
        return arr

    def _allocate(self, n: int) -> I64:
        """Pick ``n`` free rows, lowest first (a document's old rows stay until commit).

        A row freed since the last keyword commit may be reused at once: the write that
        reuses it stages additions, and a search commits those (and with them the old
        chunk's tombstone) before it reads the index.
        """
        assert self._mat is not None
        slots = np.flatnonzero(~self._alive)[:n].astype(np.int64)
        if len(slots) < n:
            start = len(self._alive)
            extra = np.arange(start, start + n - len(slots), dtype=np.int64)
            slots = np.concatenate([slots, extra])
            self._mat.ensure(int(slots[-1]) + 1)
            self._alive = np.resize(self._alive, len(self._mat.data))
            self._alive[start:] = False
        return slots

    def _set_doc(self, doc_id: str, slots: I64) -> None:
        if len(slots):
            self._doc_slots[doc_id] = slots
        else:
            self._doc_slots.pop(doc_id, None)

    @staticmethod
    def _transaction(db: sqlite3.Connection) -> _Tx:
        return _Tx(db)

    # ------------------------------------------------------------------ reads

    def search(
        self,
        vector: F32,
        *,
        k: int,
        doc_ids: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """Top-``k`` chunks by cosine similarity, best first.

        Args:
            vector: Query vector of the store's dimension.
            k: Maximum number of hits.
            doc_ids: Restrict to these documents (``None``: all; empty: no hits).

        Raises:
            InputError: Bad ``vector``, ``k`` or ``doc_ids``.
            StoreError: the query has the wrong dimension.
        """
        vector, k, doc_ids = check_vector(vector), check_k(k), check_filter(doc_ids)
        with self._lock:
            self._open()
            if self._mat is None or (doc_ids is not None and not doc_ids):
                return []
            q = self._query_vector(vector)
            if doc_ids is not None:
                slots = self._slots_of(doc_ids)
                if len(slots) <= max(self._ann_threshold, 1) or len(slots) < k:
                    return self._exact(q, slots, k)
                return self._ann_filtered(q, k, slots)
            if int(self._alive.sum()) <= self._ann_threshold:
                return self._exact_all(q, k)
            return self._ann_search(q, k)

    def _query_vector(self, vector: F32) -> F32:
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != self._dim:
            raise StoreError(f"query dimension {q.shape[0]} != store dimension {self._dim}")
        norm = float(np.linalg.norm(q))
        return q / norm if norm > 0 else q

    def _slots_of(self, doc_ids: Sequence[str]) -> I64:
        parts = [self._doc_slots[d] for d in dict.fromkeys(doc_ids) if d in self._doc_slots]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def _exact(self, q: F32, slots: I64, k: int) -> list[VectorHit]:
        assert self._mat is not None
        if not len(slots):
            return []
        scores = self._mat.data[slots] @ q
        k = min(k, len(slots))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return self._hits(slots[top], scores[top])

    def _exact_all(self, q: F32, k: int) -> list[VectorHit]:
        """Scan the whole matrix in place (no gather copy), dead rows masked out."""
        assert self._mat is not None
        live = np.flatnonzero(self._alive)
        if not len(live):
            return []
        end = int(live[-1]) + 1
        scores = self._mat.data[:end] @ q
        scores[~self._alive[:end]] = -np.inf
        k = min(k, len(live))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return self._hits(top.astype(np.int64), scores[top])

    def _hits(self, slots: I64, scores: F32) -> list[VectorHit]:
        assert self._db is not None
        if not len(slots):
            return []
        marks = ",".join("?" * len(slots))
        rows = self._db.execute(
            f"SELECT {_COLS} FROM chunks WHERE slot IN ({marks})", [int(s) for s in slots]
        ).fetchall()
        by_slot = {r[0]: _row_chunk(r) for r in rows}
        return [
            VectorHit(chunk=by_slot[int(s)], score=float(sc))
            for s, sc in zip(slots, scores, strict=True)
            if int(s) in by_slot
        ]

    def chunks(self, doc_id: str) -> list[Chunk]:
        """The document's chunks ordered by page, start offset and write order."""
        with self._lock:
            db = self._open()
            rows = db.execute(
                f"SELECT {_COLS} FROM chunks WHERE doc_id = ? ORDER BY page, start, seq", (doc_id,)
            ).fetchall()
            return [_row_chunk(r) for r in rows]

    def doc_ids(self) -> list[str]:
        """Documents that have at least one chunk, sorted."""
        with self._lock:
            self._open()
            return sorted(self._doc_slots)

    def __len__(self) -> int:
        with self._lock:
            self._open()
            return int(self._alive.sum())

    # ------------------------------------------------------------------ HNSW

    def _ann_file(self) -> Path | None:
        return self._path / _ANN_FILE if self._path is not None else None

    def _new_index(self) -> Any:
        from usearch.index import Index

        assert self._dim is not None
        return Index(
            ndim=self._dim,
            metric="ip",
            dtype=self._ann_dtype,
            connectivity=self._m,
            expansion_add=self._efc,
            expansion_search=self._ef,
        )

    def _load_ann(self, db: sqlite3.Connection) -> None:
        """Reuse ``ann.usearch`` if SQLite says it is current and it fits the settings."""
        file = self._ann_file()
        if file is None or not file.exists() or self._meta(db, _ANN_OK) != "1":
            return
        from usearch.index import Index

        try:
            index = Index.restore(str(file), expansion_add=self._efc, expansion_search=self._ef)
        except (ValueError, RuntimeError, OSError):
            return
        if (
            index is None
            or index.ndim != self._dim
            or str(index.metric_kind) != "MetricKind.IP"
            or str(index.dtype) != f"ScalarKind.{self._ann_dtype.upper()}"
            or index.connectivity != self._m
            or len(index) != int(self._alive.sum())
        ):
            return
        self._ann, self._ann_saved, self._ann_disk_ok = index, True, True

    def _save_ann(self) -> None:
        file = self._ann_file()
        if file is None or self._db is None or self._ann is None:
            return
        self._sync_ann()
        if not self._ann_saved:
            self._ann.save(str(file))
            self._db.execute(f"INSERT OR REPLACE INTO meta VALUES ('{_ANN_OK}', '1')")
            self._ann_saved = self._ann_disk_ok = True
            with contextlib.suppress(OSError):  # the hnswlib index of older versions
                (file.parent / "hnsw.bin").unlink(missing_ok=True)

    def _sync_ann(self) -> None:
        """Build the HNSW index, or apply the writes and deletes made since."""
        assert self._mat is not None
        if self._ann is None:
            index = self._new_index()
            live = np.flatnonzero(self._alive)
            for part in np.array_split(live, max(1, len(live) // _ANN_BATCH)):
                if len(part):  # in batches: never a second full copy of the matrix
                    index.add(part, self._mat.data[part], threads=0)
            self._ann, self._ann_pending, self._ann_saved = index, set(), False
        elif self._ann_pending:
            self._apply_pending()
        if not self._ann_saved and self._db is not None:
            self._mark_ann_stale(self._db)

    def _apply_pending(self) -> None:
        """Drop every changed row's key (freed or rewritten), then add the live ones."""
        assert self._mat is not None
        pending = np.array(sorted(self._ann_pending), dtype=np.int64)
        self._ann.remove(pending)  # unknown keys are ignored
        live = pending[self._alive[pending]]
        if len(live):
            self._ann.add(live, self._mat.data[live], threads=0)
        self._ann_pending, self._ann_saved = set(), False

    def _mark_ann_stale(self, db: sqlite3.Connection) -> None:
        """Record that ``ann.usearch`` no longer matches the data (rebuilt on reopen)."""
        if self._ann_disk_ok:
            db.execute(f"INSERT OR REPLACE INTO meta VALUES ('{_ANN_OK}', '0')")
            self._ann_disk_ok = False

    def _ann_candidates(self, q: F32, count: int) -> I64:
        self._sync_ann()
        self._ann.expansion_search = max(self._ef, count)
        keys = self._ann.search(q, count, threads=1).keys
        return np.asarray(keys, dtype=np.int64)

    def _rerank(self, q: F32, cand: I64, k: int) -> list[VectorHit]:
        assert self._mat is not None
        scores = self._mat.data[cand] @ q
        order = np.argsort(-scores, kind="stable")[:k]
        return self._hits(cand[order], scores[order])

    def _ann_search(self, q: F32, k: int) -> list[VectorHit]:
        """Unrestricted top-``k``: ``ann_oversample * k`` HNSW candidates, re-ranked."""
        live = int(self._alive.sum())
        k = min(k, live)
        cand = self._ann_candidates(q, min(live, self._oversample * k))
        if len(cand) < k:  # graph too sparse to reach k rows (tiny index): exact
            return self._exact_all(q, k)
        return self._rerank(q, cand, k)

    def _ann_filtered(self, q: F32, k: int, slots: I64) -> list[VectorHit]:
        """Top-``k`` within a large filter: over-fetch from the index, keep the filter's rows.

        Fetches enough candidates that ``oversample * k`` of them are expected to fall in
        the filter if it were spread evenly; when fewer than ``k`` survive (the filter is
        far from the query), scans the filter's rows exactly.
        """
        live = int(self._alive.sum())
        share = len(slots) / max(live, 1)
        count = min(live, int(np.ceil(self._oversample * k / share)))
        cand = self._ann_candidates(q, count)
        mask = np.zeros(len(self._alive), dtype=bool)
        mask[slots] = True
        kept = cand[mask[cand]]
        if len(kept) < k:
            return self._exact(q, slots, k)
        return self._rerank(q, kept, k)

    # ------------------------------------------------------------------ keywords

    def keyword_search(
        self,
        text: str,
        *,
        k: int,
        doc_ids: Sequence[str] | None = None,
    ) -> list[VectorHit]:
        """Top-``k`` chunks by BM25 over ``keyword_tokens`` tokens; only scores > 0.

        Args:
            text: The query text; identifiers are matched by their exact string.
            k: Maximum number of hits.
            doc_ids: Restrict to these documents (``None``: all; empty: no hits).

        Raises:
            InputError: Bad ``text``, ``k`` or ``doc_ids``.
            StoreError: The keyword index cannot be brought up to date.
        """
        text, k, doc_ids = check_text(text), check_k(k), check_filter(doc_ids)
        with self._lock:
            db = self._open()
            if k <= 0 or (doc_ids is not None and not doc_ids):
                return []
            kw = self._keywords(db)
            if kw.staged_adds or self._kw_failed:
                # new chunks (possibly in rows freed since the last commit) must be
                # searchable: commit them, and with them every staged tombstone
                self._commit_keywords(db, kw)
            # Tombstones alone need no commit: a deleted chunk's row is no longer alive,
            # so its postings' hits are skipped, and as many more hits are fetched.
            scope = None if doc_ids is None else list(dict.fromkeys(doc_ids))
            alive = self._alive
            found = kw.search(
                keyword_tokens(text),
                k,
                scope,
                live=lambda s: s < len(alive) and bool(alive[s]),
                dead=len(self._kw_dead),
            )
            slots = np.array([s for s, _ in found], dtype=np.int64)
            return self._hits(slots, np.array([x for _, x in found], dtype=np.float32))

    def _keywords(self, db: sqlite3.Connection) -> KeywordIndex:
        """The keyword index, opened on first use and brought up to date with the chunks.

        Documents listed in ``kw_pending`` (written, but their index change was not
        committed when the last process ended) are re-indexed from SQLite; a missing,
        unreadable or older index (``bm25/`` of earlier versions) is rebuilt once.
        """
        if self._kw is not None:
            return self._kw
        kw = KeywordIndex(None if self._path is None else self._path / _KW_DIR)
        fresh = self._meta(db, _KW_FORMAT) != _KW_VERSION
        try:
            kw.open(fresh=fresh)
        except (OSError, ValueError):
            kw.open(fresh=True)
            fresh = True
        if fresh:
            db.execute("DELETE FROM meta WHERE key IN (?, ?)", (_KW_FORMAT, _OLD_BM25[1]))
            self._reindex(db, kw, None)
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_KW_FORMAT, _KW_VERSION))
            if self._path is not None:
                shutil.rmtree(self._path / _OLD_BM25[0], ignore_errors=True)
        else:
            self._reindex(db, kw, _pending(db))
        db.execute("DELETE FROM kw_pending")
        self._kw = kw
        return kw

    def _index_keywords(
        self, db: sqlite3.Connection, kw: KeywordIndex, doc_id: str, rows: list[tuple[int, str]]
    ) -> None:
        """Stage a written or deleted document in the keyword index (the chunks are durable).

        A write that comes at least ``_KW_BURST_S`` after the previous write or delete
        commits here, so the first search after it costs a steady search; the commit
        (a new segment, fsynced: tens of ms on a small VM disk, whatever the store's
        size) is the write's own cost. A write in a burst (bulk ingest) stays staged,
        and the next search, a write after a pause, or ``close`` commits the burst at
        once: bulk ingest pays about one commit. A delete stays staged too: a search
        skips the freed slots without a commit, until more than ``_KW_MAX_DEAD`` of them
        wait (they bound how many more hits a search fetches). A failure here leaves the
        document listed in ``kw_pending``; the next search re-indexes the listed
        documents from SQLite, so the write still stands.
        """
        now = time.monotonic()
        lone, self._kw_last_write = now - self._kw_last_write >= _KW_BURST_S, now
        self._kw_synced = False
        try:
            kw.replace(doc_id, ((s, index_text(keyword_tokens(t))) for s, t in rows))
        except (OSError, ValueError, RuntimeError):
            self._kw_failed = True
        if (lone and rows) or len(self._kw_dead) > _KW_MAX_DEAD:
            with contextlib.suppress(StoreError):  # kept failed: the next search retries
                self._commit_keywords(db, kw)

    def _commit_keywords(self, db: sqlite3.Connection, kw: KeywordIndex) -> None:
        """Make every write so far searchable (redo failed updates from SQLite, commit).

        Raises:
            StoreError: the keyword index cannot be written; the next call retries.
        """
        if self._kw_synced:
            return
        try:
            if self._kw_failed:
                self._reindex(db, kw, _pending(db))
            else:
                kw.commit()
        except (OSError, ValueError, RuntimeError) as exc:
            self._kw_failed = True
            raise StoreError(f"cannot update the keyword index: {exc}") from exc
        self._kw_failed, self._kw_synced = False, True
        self._kw_dead.clear()

    def _mark_kw_pending(self, db: sqlite3.Connection, doc_id: str) -> None:
        """List ``doc_id`` as not yet in the keyword index (in the write's transaction).

        Rows of earlier writes are dropped once the index committed them, so the list
        holds at most the documents whose index update a crash may have lost.
        """
        if self._kw_synced:
            db.execute("DELETE FROM kw_pending")
        db.execute("INSERT OR IGNORE INTO kw_pending VALUES (?)", (doc_id,))

    def _reindex(self, db: sqlite3.Connection, kw: KeywordIndex, docs: list[str] | None) -> None:
        """Index the chunks of ``docs`` (``None``: every document) from SQLite; commit."""
        for doc_id in sorted(self._doc_slots) if docs is None else docs:
            rows = db.execute("SELECT slot, text FROM chunks WHERE doc_id = ?", (doc_id,))
            kw.replace(doc_id, ((s, index_text(keyword_tokens(t))) for s, t in rows))
        kw.commit()


def _pending(db: sqlite3.Connection) -> list[str]:
    """Documents whose keyword index update may be missing."""
    return [r[0] for r in db.execute("SELECT doc_id FROM kw_pending")]


class _Tx:
    """``BEGIN``/``COMMIT`` (``ROLLBACK`` on error) that maps sqlite errors to StoreError."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.db.execute("COMMIT")
            return
        self.db.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise StoreError(f"vector store write failed: {exc}") from exc
