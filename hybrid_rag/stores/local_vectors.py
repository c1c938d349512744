"""Embedded vector store: chunks in SQLite, vectors in a memory-mapped float32 matrix.

Layout under ``path`` (a folder): ``chunks.sqlite3`` (chunk records, text, the matrix row
of each chunk and its CRC-32; ``hybrid_rag.stores._vector_db``), ``vectors.f32`` (raw
row-major float32 matrix, L2-normalised rows; ``hybrid_rag.stores._matrix``),
``keywords/`` (the BM25 index; ``hybrid_rag.stores._vector_keywords``) and, once a
large collection has been searched, ``ann.usearch`` (the HNSW index;
``hybrid_rag.stores._ann``; a ``hnsw.bin`` left by an older version is ignored).

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
compaction. Keyword search is BM25 on a tantivy index, updated per document: a write
costs in proportion to that document, never to the store.

Damage is found, never served: a missing or truncated ``vectors.f32``, a vector whose
bytes no longer match its CRC-32 (every row is checked on open while the live rows
take at most ``verify_on_open_bytes``, and every row a search returns is checked), or a
damaged ``chunks.sqlite3`` raise ``DamagedStoreError`` naming the file and the repair
(``hybrid-rag repair`` re-embeds damaged rows from their chunk text). The keyword and
HNSW indexes are derived and are rebuilt when damaged. A full disk raises
``DiskFullError`` and leaves the store as it was.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from hybrid_rag._checks import (
    check_chunks,
    check_doc_id,
    check_filter,
    check_k,
    check_matrix,
    check_text,
    check_vector,
)
from hybrid_rag.errors import ConfigurationError, DamagedStoreError, StoreError
from hybrid_rag.models import Chunk
from hybrid_rag.protocols import VectorHit
from hybrid_rag.stores._ann import ANN_FILE, AnnIndex
from hybrid_rag.stores._closing import Closing
from hybrid_rag.stores._damage import damaged, engine_error
from hybrid_rag.stores._lock import StoreLock
from hybrid_rag.stores._matrix import F32, I64, Matrix, normalise, row_crc
from hybrid_rag.stores._vector_db import (
    COLS,
    INSERT,
    SCHEMA,
    Tx,
    meta,
    migrate,
    row_chunk,
    set_meta,
)
from hybrid_rag.stores._vector_keywords import KeywordSync

__all__ = ["CHUNKS_FILE", "MATRIX_FILE", "LocalVectorStore"]

CHUNKS_FILE = "chunks.sqlite3"
MATRIX_FILE = "vectors.f32"
_ROWS = "rows"  # meta: the matrix capacity in rows, as of the last committed write
_UNKNOWN_CRC = -1
_RESTORE = (
    f"restore {CHUNKS_FILE} from a backup, or ingest the documents again into a new store "
    "(their sources are listed by `hybrid-rag docs`)"
)


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
        verify_on_open_bytes: Check every live vector's CRC-32 on open while the live
            rows take at most this many bytes (256 MiB: about 0.2 s); above it only the
            rows a search returns are checked (and ``damaged_documents`` checks all).
        on_damage: ``"raise"`` (default): damaged vectors raise ``DamagedStoreError``.
            ``"record"``: open a damaged store for repair; a missing or short matrix is
            grown with zero rows and ``damaged_documents`` lists what to re-embed.

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
        verify_on_open_bytes: int = 256 * 2**20,
        on_damage: Literal["raise", "record"] = "raise",
    ) -> None:
        if dim is not None and dim < 1:
            raise ConfigurationError(f"dim must be positive, got {dim}")
        if ann_threshold < 0 or ef_search < 1 or hnsw_m < 2 or ef_construction < 1:
            raise ConfigurationError("ann_threshold, ef_search, hnsw_m, ef_construction too small")
        if ann_dtype not in ("f16", "f32"):
            raise ConfigurationError(f"ann_dtype must be 'f16' or 'f32', got {ann_dtype!r}")
        if ann_oversample < 1:
            raise ConfigurationError(f"ann_oversample must be >= 1, got {ann_oversample}")
        if on_damage not in ("raise", "record"):
            raise ConfigurationError(f"on_damage must be 'raise' or 'record', not {on_damage!r}")
        self._path = Path(path) if path is not None else None
        self._dim = dim
        self._ann_threshold = ann_threshold
        self._oversample = ann_oversample
        self._verify_bytes, self._on_damage = verify_on_open_bytes, on_damage
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._mat: Matrix | None = None
        self._alive = np.zeros(0, dtype=bool)
        self._crc = np.zeros(0, dtype=np.int64)  # per slot; _UNKNOWN_CRC until written
        self._doc_slots: dict[str, I64] = {}
        ann_file = None if self._path is None else self._path / ANN_FILE
        self._ann = AnnIndex(ann_file, dtype=ann_dtype, m=hnsw_m, efc=ef_construction, ef=ef_search)
        self._kw = KeywordSync(self._path, lambda: sorted(self._doc_slots))
        self._damaged: set[str] = set()
        self.notes: list[str] = []
        """With ``on_damage="record"``: what was found and set right on open."""
        self._closed = False
        self._file_lock = None if self._path is None else StoreLock(self._path, what="vector store")

    def __repr__(self) -> str:
        return f"LocalVectorStore(path={str(self._path) if self._path else None!r})"

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Persist the matrix and the HNSW index, close the database; idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            db, self._db = self._db, None
            if db is None:
                return
            try:
                if self._mat is not None:
                    self._mat.flush()
                    self._ann.save(db, self._mat, self._alive)
                self._kw.close(db)
            except (OSError, sqlite3.Error, ValueError, RuntimeError):
                pass  # derived indexes: rebuilt from SQLite on the next open
            finally:
                db.close()
                if self._file_lock is not None:
                    self._file_lock.release()

    def _file(self, name: str) -> Path | None:
        return None if self._path is None else self._path / name

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
                raise engine_error(exc, what="creating the vector store", path=self._path) from exc
            target = str(self._path / CHUNKS_FILE)
        if self._file_lock is not None:
            self._file_lock.acquire()  # one writer per store: StoreLockedError at once
        try:
            self._check_files()
            db = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
            try:
                db.executescript(SCHEMA)
                migrated = migrate(db)
                self._load_state(db, migrated=migrated)
            except BaseException:
                db.close()
                raise
        except BaseException as exc:
            self._reset()
            if self._file_lock is not None:
                self._file_lock.release()
            if isinstance(exc, sqlite3.Error | OSError):
                raise self._chunks_error(exc, "opening the vector store") from exc
            raise
        self._db = db
        return db

    def _reset(self) -> None:
        self._mat, self._alive, self._doc_slots = None, np.zeros(0, dtype=bool), {}
        self._crc, self._damaged = np.zeros(0, dtype=np.int64), set()

    def _check_files(self) -> None:
        """A matrix without its chunk records is damage, not an empty store."""
        chunks, matrix = self._file(CHUNKS_FILE), self._file(MATRIX_FILE)
        if chunks is None or matrix is None or not matrix.exists() or not matrix.stat().st_size:
            return
        if not chunks.exists() or not chunks.stat().st_size:
            state = "missing" if not chunks.exists() else "empty"
            raise damaged(
                f"the vector store's chunk records are {state} while {MATRIX_FILE} holds "
                "vectors; the chunks' text cannot be recovered from the vectors",
                chunks,
                how=_RESTORE,
            )

    def _load_state(self, db: sqlite3.Connection, *, migrated: bool) -> None:
        stored = meta(db, "dim")
        if stored is not None:
            if self._dim is not None and self._dim != int(stored):
                raise StoreError(f"store at {self._path} has dim {stored}, not {self._dim}")
            self._dim = int(stored)
        if self._dim is None:
            return
        self._init_matrix(db)
        assert self._mat is not None
        rows = db.execute("SELECT doc_id, slot, crc FROM chunks ORDER BY doc_id, seq").fetchall()
        slots = np.array([r[1] for r in rows], dtype=np.int64)
        self._check_matrix(db, int(slots.max()) + 1 if len(slots) else 0)
        self._alive = np.zeros(len(self._mat.data), dtype=bool)
        self._alive[slots] = True
        self._crc = np.full(len(self._mat.data), _UNKNOWN_CRC, dtype=np.int64)
        self._crc[slots] = [_UNKNOWN_CRC if r[2] is None else r[2] for r in rows]
        docs = [r[0] for r in rows]
        bounds = [0, *(i for i in range(1, len(docs)) if docs[i] != docs[i - 1]), len(docs)]
        for lo, hi in itertools.pairwise(bounds if docs else []):
            self._doc_slots[docs[lo]] = slots[lo:hi]
        if migrated or (self._crc[slots] == _UNKNOWN_CRC).any():
            self._record_crcs(db, slots)  # a store of an older version: trust on first use
        if len(slots) * self._dim * 4 <= self._verify_bytes:
            self._verify(slots)
        self._ann.load(db, dim=self._dim, live=len(slots))

    def _init_matrix(self, db: sqlite3.Connection) -> None:
        assert self._dim is not None
        db.execute("INSERT OR IGNORE INTO meta VALUES ('dim', ?)", (str(self._dim),))
        self._mat = Matrix(self._file(MATRIX_FILE), self._dim)
        if len(self._alive) < len(self._mat.data):
            self._alive = np.resize(self._alive, len(self._mat.data))
            self._crc = np.resize(self._crc, len(self._mat.data))

    def _check_matrix(self, db: sqlite3.Connection, needed: int) -> None:
        """The matrix holds every row SQLite records (else damage, or zero rows to repair)."""
        assert self._mat is not None
        recorded = int(meta(db, _ROWS) or 0) if self._path is not None else 0
        have = self._mat.rows_on_disk if self._path is not None else len(self._mat.data)
        want = max(needed, recorded)
        if have >= want:
            return
        file = self._file(MATRIX_FILE)
        state = (
            "missing" if file is None or not file.exists() else f"truncated ({have} of {want} rows)"
        )
        if self._on_damage == "raise" and file is not None:
            raise damaged(f"the vector file is {state}", file)
        try:
            self._mat.ensure(want)  # repair: zero rows, re-embedded later
        except OSError as exc:
            raise engine_error(exc, what="growing the vector file", path=file) from exc
        self.notes.append(f"the vector file was {state}: grown back to {want} rows")

    def _record_crcs(self, db: sqlite3.Connection, slots: I64) -> None:
        assert self._mat is not None
        unknown = [int(s) for s in slots if self._crc[s] == _UNKNOWN_CRC]
        for s in unknown:
            self._crc[s] = row_crc(self._mat.data[s])
        with Tx(db, path=self._file(CHUNKS_FILE), what="recording vector checksums"):
            db.executemany(
                "UPDATE chunks SET crc = ? WHERE slot = ?",
                [(int(self._crc[s]), s) for s in unknown],
            )

    def _verify(self, slots: I64) -> None:
        """Check the CRC-32 of ``slots``; damage raises, or is recorded for repair."""
        assert self._mat is not None
        bad = [int(s) for s in slots if row_crc(self._mat.data[s]) != self._crc[s]]
        if not bad:
            return
        docs = sorted({d for d, ss in self._doc_slots.items() if np.isin(ss, bad).any()})
        if self._on_damage == "record":
            self._damaged.update(docs)
            return
        file = self._file(MATRIX_FILE)
        shown = ", ".join(docs[:5]) + (f" and {len(docs) - 5} more" if len(docs) > 5 else "")
        where = file if file is not None else Path(MATRIX_FILE)
        raise damaged(f"{len(bad)} vector(s) no longer match their checksum (documents {shown})",
                      where)  # fmt: skip

    def damaged_documents(self) -> list[str]:
        """Documents with a vector that does not match its checksum (checks every row).

        Raises:
            DamagedStoreError: with ``on_damage="raise"``, when there is one.
        """
        with self._lock:
            self._open()
            if self._mat is not None:
                self._verify(np.flatnonzero(self._alive))
            return sorted(self._damaged)

    # ------------------------------------------------------------------ writes

    def replace(self, doc_id: str, chunks: Sequence[Chunk], vectors: F32) -> int:
        """Make ``doc_id`` hold exactly ``chunks`` with their ``vectors`` (one row each).

        Raises:
            InvalidDocIdError: Bad ``doc_id``.
            InputError: ``chunks`` or ``vectors`` of the wrong type.
            StoreError: wrong dimension, row count or chunk ownership; nothing is written.
            DiskFullError: no space left on device; nothing is written.
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
            self._kw.open(db)
            old = self._doc_slots.get(doc_id, np.zeros(0, dtype=np.int64))
            slots = self._allocate(len(chunks))
            unit = normalise(arr) if len(arr) else arr
            crcs = [row_crc(r) for r in unit]
            self._write_rows(slots, unit)
            rows = [
                (int(s), doc_id, i, c.chunk_id, c.page, c.start, c.end, c.text, c.section, crc)
                for i, (s, c, crc) in enumerate(zip(slots, chunks, crcs, strict=True))
            ]
            with Tx(db, path=self._file(CHUNKS_FILE), what=f"writing the chunks of {doc_id!r}"):
                self._ann.mark_stale(db)
                self._kw.mark_pending(db, doc_id)
                assert self._mat is not None
                set_meta(db, _ROWS, str(len(self._mat.data)))
                db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
                db.executemany(INSERT, rows)
            self._alive[old] = False
            self._alive[slots] = True
            self._crc[slots] = crcs
            self._set_doc(doc_id, slots)
            self._kw.dead.update(int(s) for s in old)
            self._kw.stage(db, doc_id, [(r[0], r[7]) for r in rows])
            self._ann.touch(np.union1d(old, slots))
            self._damaged.discard(doc_id)
            return len(chunks)

    def _write_rows(self, slots: I64, unit: F32) -> None:
        assert self._mat is not None
        try:
            self._mat.data[slots] = unit
            self._mat.flush()
        except OSError as exc:  # free rows only: nothing live was touched
            raise engine_error(exc, what="writing vectors", path=self._file(MATRIX_FILE)) from exc

    def delete(self, doc_id: str) -> int:
        """Remove the document's chunks; returns how many were removed (0 if unknown)."""
        with self._lock:
            db = self._open()
            if doc_id not in self._doc_slots:
                return 0
            self._kw.open(db)
            with Tx(db, path=self._file(CHUNKS_FILE), what=f"deleting the chunks of {doc_id!r}"):
                self._ann.mark_stale(db)
                self._kw.mark_pending(db, doc_id)
                db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            old = self._doc_slots.pop(doc_id)
            self._alive[old] = False
            self._kw.dead.update(int(s) for s in old)
            self._kw.stage(db, doc_id, [])
            self._ann.touch(old)
            self._damaged.discard(doc_id)
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
            try:
                self._mat.ensure(int(slots[-1]) + 1)
            except OSError as exc:
                what = "growing the vector file"
                raise engine_error(exc, what=what, path=self._file(MATRIX_FILE)) from exc
            self._alive = np.resize(self._alive, len(self._mat.data))
            self._alive[start:] = False
            self._crc = np.resize(self._crc, len(self._mat.data))
        return slots

    def _set_doc(self, doc_id: str, slots: I64) -> None:
        if len(slots):
            self._doc_slots[doc_id] = slots
        else:
            self._doc_slots.pop(doc_id, None)

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
            DamagedStoreError: a vector the search returns does not match its checksum.
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

    def _hits(self, slots: I64, scores: F32, *, dense: bool = True) -> list[VectorHit]:
        assert self._db is not None
        if not len(slots):
            return []
        if dense:
            self._verify(slots)
        marks = ",".join("?" * len(slots))
        rows = self._read(
            f"SELECT {COLS} FROM chunks WHERE slot IN ({marks})", [int(s) for s in slots]
        )
        by_slot = {r[0]: row_chunk(r) for r in rows}
        return [
            VectorHit(chunk=by_slot[int(s)], score=float(sc))
            for s, sc in zip(slots, scores, strict=True)
            if int(s) in by_slot
        ]

    def _read(self, sql: str, args: Sequence[object] = ()) -> list[tuple[object, ...]]:
        assert self._db is not None
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise self._chunks_error(exc, "reading the chunks") from exc

    def _chunks_error(self, exc: BaseException, what: str) -> StoreError:
        """The typed error for ``chunks.sqlite3``; its damage cannot be repaired in place."""
        err = engine_error(exc, what=what, path=self._file(CHUNKS_FILE))
        if isinstance(err, DamagedStoreError):
            return damaged(err.problem, Path(err.path), how=_RESTORE)
        return err

    def chunks(self, doc_id: str) -> list[Chunk]:
        """The document's chunks ordered by page, start offset and write order."""
        with self._lock:
            self._open()
            rows = self._read(
                f"SELECT {COLS} FROM chunks WHERE doc_id = ? ORDER BY page, start, seq", (doc_id,)
            )
            return [row_chunk(r) for r in rows]

    def export(self, doc_id: str) -> tuple[list[Chunk], F32]:
        """The document's chunks in write order with their (checked) unit vectors.

        What ``replace(doc_id, *export(doc_id))`` writes back unchanged; the ingest flow
        keeps it to restore a document whose replacement failed.

        Raises:
            DamagedStoreError: one of the vectors does not match its checksum.
        """
        with self._lock:
            self._open()
            slots = self._doc_slots.get(doc_id, np.zeros(0, dtype=np.int64))
            rows = self._read(f"SELECT {COLS} FROM chunks WHERE doc_id = ? ORDER BY seq", (doc_id,))
            if self._mat is None or not len(slots):
                return [row_chunk(r) for r in rows], np.zeros((0, self._dim or 1), np.float32)
            self._verify(slots)
            return [row_chunk(r) for r in rows], np.array(self._mat.data[slots], dtype=np.float32)

    def doc_ids(self) -> list[str]:
        """Documents that have at least one chunk, sorted."""
        with self._lock:
            self._open()
            return sorted(self._doc_slots)

    def chunk_counts(self) -> dict[str, int]:
        """How many chunks each document holds (documents without chunks absent)."""
        with self._lock:
            self._open()
            return {d: len(s) for d, s in self._doc_slots.items()}

    def __len__(self) -> int:
        with self._lock:
            self._open()
            return int(self._alive.sum())

    # ------------------------------------------------------------------ HNSW

    def _rerank(self, q: F32, cand: I64, k: int) -> list[VectorHit]:
        assert self._mat is not None
        scores = self._mat.data[cand] @ q
        order = np.argsort(-scores, kind="stable")[:k]
        return self._hits(cand[order], scores[order])

    def _candidates(self, q: F32, count: int) -> I64:
        assert self._mat is not None
        try:
            return self._ann.candidates(q, count, self._mat, self._alive)
        except (ValueError, RuntimeError, OSError) as exc:
            what, where = "searching the HNSW index", self._file(ANN_FILE)
            raise engine_error(exc, what=what, path=where) from exc

    def _ann_search(self, q: F32, k: int) -> list[VectorHit]:
        """Unrestricted top-``k``: ``ann_oversample * k`` HNSW candidates, re-ranked."""
        live = int(self._alive.sum())
        k = min(k, live)
        cand = self._candidates(q, min(live, self._oversample * k))
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
        cand = self._candidates(q, count)
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
        """Top-``k`` chunks by BM25 over ``hybrid_rag.text.keyword_tokens``; only scores > 0.

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
            scope = None if doc_ids is None else list(dict.fromkeys(doc_ids))
            alive = self._alive
            found = self._kw.search(db, text, k, scope, lambda s: s < len(alive) and bool(alive[s]))
            slots = np.array([s for s, _ in found], dtype=np.int64)
            scores = np.array([x for _, x in found], dtype=np.float32)
            return self._hits(slots, scores, dense=False)
