"""The embedded vector store's keyword side: its tantivy index kept in step with SQLite.

The chunks in SQLite are the truth; the keyword index (``hybrid_rag.stores._keywords``)
is derived from them. A write stages its document in the index and lists it in
``kw_pending`` in the write's own transaction; when the index commit is lost (a crash,
a failed update), the listed documents are re-indexed from SQLite. A missing, unreadable
or older index is rebuilt from SQLite: nothing in it is data of its own.
"""

from __future__ import annotations

import contextlib
import math
import shutil
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from hybrid_rag.errors import StoreError
from hybrid_rag.stores._damage import engine_error
from hybrid_rag.stores._keywords import KeywordIndex, index_text
from hybrid_rag.stores._vector_db import meta, set_meta
from hybrid_rag.text import keyword_tokens

__all__ = ["KW_DIR", "KeywordSync"]

KW_DIR = "keywords"
_KW_FORMAT = "kw_index"  # meta key: the keyword index format under keywords/, once complete
_KW_VERSION = "tantivy-1"
_OLD_BM25 = ("bm25", "bm25_ok")  # folder and meta flag of the bm25s index (until 0.1)
_ENGINE = (OSError, ValueError, RuntimeError)

# module constants read at call time, so tests can shrink them
KW_MAX_DEAD = 4_096  # freed chunks whose keyword tombstones may wait for a later commit
KW_BURST_S = 1.0  # a write this soon after the previous one leaves its keyword commit staged


class KeywordSync:
    """The keyword index of one store and what of it is not committed yet.

    Not thread-safe on its own: the store calls it under its lock.

    Args:
        folder: The store's folder (``None``: in memory); the index is ``folder/keywords``.
        documents: The store's documents with chunks (for a full re-index).
    """

    def __init__(self, folder: Path | None, documents: Callable[[], list[str]]) -> None:
        self._folder = folder
        self._documents = documents
        self.kw: KeywordIndex | None = None
        self.synced = True  # every write so far is committed to the keyword index
        self._failed = False  # a staged update failed: re-index kw_pending from SQLite
        self.dead: set[int] = set()  # freed slots still in the committed keyword index
        self._last_write = -math.inf  # time.monotonic() of the last write or delete

    def open(self, db: sqlite3.Connection) -> KeywordIndex:
        """The index, opened on first use and brought up to date with the chunks.

        Documents listed in ``kw_pending`` (written, but their index change was not
        committed when the last process ended) are re-indexed from SQLite; a missing,
        unreadable or older index (``bm25/`` of earlier versions) is rebuilt once.
        """
        if self.kw is not None:
            return self.kw
        kw = KeywordIndex(self._kw_path)
        folder = self._kw_path
        fresh = meta(db, _KW_FORMAT) != _KW_VERSION or (folder is not None and not folder.is_dir())
        try:
            try:
                kw.open(fresh=fresh)
            except _ENGINE:
                kw.open(fresh=True)
                fresh = True
            if not fresh:
                self._reindex(db, kw, _pending(db))
                fresh = kw.count() != _chunk_count(db)  # files lost or damaged: rebuild
                if fresh:
                    kw.close()
                    kw.open(fresh=True)
            if fresh:
                self._rebuild(db, kw)
            db.execute("DELETE FROM kw_pending")
        except (*_ENGINE, sqlite3.Error) as exc:
            raise engine_error(exc, what="opening the keyword index", path=self._kw_path) from exc
        self.kw = kw
        return kw

    @property
    def _kw_path(self) -> Path | None:
        return None if self._folder is None else self._folder / KW_DIR

    def _rebuild(self, db: sqlite3.Connection, kw: KeywordIndex) -> None:
        db.execute("DELETE FROM meta WHERE key IN (?, ?)", (_KW_FORMAT, _OLD_BM25[1]))
        self._reindex(db, kw, None)
        set_meta(db, _KW_FORMAT, _KW_VERSION)
        if self._folder is not None:
            shutil.rmtree(self._folder / _OLD_BM25[0], ignore_errors=True)

    def stage(self, db: sqlite3.Connection, doc_id: str, rows: list[tuple[int, str]]) -> None:
        """Stage a written or deleted document in the keyword index (the chunks are durable).

        A write that comes at least ``KW_BURST_S`` after the previous write or delete
        commits here, so the first search after it costs a steady search; the commit
        (a new segment, fsynced: tens of ms on a small VM disk, whatever the store's
        size) is the write's own cost. A write in a burst (bulk ingest) stays staged,
        and the next search, a write after a pause, or ``close`` commits the burst at
        once: bulk ingest pays about one commit. A delete stays staged too: a search
        skips the freed slots without a commit, until more than ``KW_MAX_DEAD`` of them
        wait (they bound how many more hits a search fetches). A failure here leaves the
        document listed in ``kw_pending``; the next search re-indexes the listed
        documents from SQLite, so the write still stands.
        """
        kw = self.open(db)
        now = time.monotonic()
        lone, self._last_write = now - self._last_write >= KW_BURST_S, now
        self.synced = False
        try:
            kw.replace(doc_id, ((s, index_text(keyword_tokens(t))) for s, t in rows))
        except _ENGINE:
            self._failed = True
        if (lone and rows) or len(self.dead) > KW_MAX_DEAD:
            with contextlib.suppress(StoreError):  # kept failed: the next search retries
                self.commit(db)

    def commit(self, db: sqlite3.Connection) -> None:
        """Make every write so far searchable (redo failed updates from SQLite, commit).

        Raises:
            StoreError: the keyword index cannot be written; the next call retries.
        """
        if self.synced or self.kw is None:
            return
        try:
            if self._failed:
                self._reindex(db, self.kw, _pending(db))
            else:
                self.kw.commit()
        except _ENGINE as exc:
            self._failed = True
            raise engine_error(exc, what="updating the keyword index", path=self._kw_path) from exc
        self._failed, self.synced = False, True
        self.dead.clear()

    def mark_pending(self, db: sqlite3.Connection, doc_id: str) -> None:
        """List ``doc_id`` as not yet in the keyword index (in the write's transaction).

        Rows of earlier writes are dropped once the index committed them, so the list
        holds at most the documents whose index update a crash may have lost.
        """
        if self.synced:
            db.execute("DELETE FROM kw_pending")
        db.execute("INSERT OR IGNORE INTO kw_pending VALUES (?)", (doc_id,))

    def search(
        self,
        db: sqlite3.Connection,
        text: str,
        k: int,
        scope: Sequence[str] | None,
        live: Callable[[int], bool],
    ) -> list[tuple[int, float]]:
        """Top-``k`` (slot, score) by BM25; a damaged index is rebuilt from SQLite once."""
        kw = self.open(db)
        for attempt in (1, 2):
            try:
                if kw.staged_adds or self._failed:
                    # new chunks (possibly in rows freed since the last commit) must be
                    # searchable: commit them, and with them every staged tombstone
                    self.commit(db)
                # Tombstones alone need no commit: a deleted chunk's row is no longer
                # alive, so its postings' hits are skipped, and as many more are fetched.
                return kw.search(keyword_tokens(text), k, scope, live=live, dead=len(self.dead))
            except _ENGINE as exc:
                if attempt == 2:
                    raise engine_error(
                        exc, what="searching the keyword index", path=self._kw_path
                    ) from exc
                kw = self._reopen_fresh(db)
        raise AssertionError("unreachable")  # pragma: no cover

    def _reopen_fresh(self, db: sqlite3.Connection) -> KeywordIndex:
        """Drop an index that failed a search and build it again from SQLite."""
        if self.kw is not None:
            with contextlib.suppress(*_ENGINE):
                self.kw.close()
        self.kw = None
        db.execute("DELETE FROM meta WHERE key = ?", (_KW_FORMAT,))
        self.synced, self._failed = True, False
        self.dead.clear()
        return self.open(db)

    def close(self, db: sqlite3.Connection) -> None:
        """Commit what is staged (what fails is redone on open) and release the index."""
        if self.kw is None:
            return
        with contextlib.suppress(StoreError):
            self.commit(db)
        with contextlib.suppress(*_ENGINE):
            self.kw.close()
        if self.synced:
            db.execute("DELETE FROM kw_pending")
        self.kw = None

    def _reindex(self, db: sqlite3.Connection, kw: KeywordIndex, docs: list[str] | None) -> None:
        """Index the chunks of ``docs`` (``None``: every document) from SQLite; commit."""
        for doc_id in sorted(self._documents()) if docs is None else docs:
            rows = db.execute("SELECT slot, text FROM chunks WHERE doc_id = ?", (doc_id,))
            kw.replace(doc_id, ((s, index_text(keyword_tokens(t))) for s, t in rows))
        kw.commit()


def _chunk_count(db: sqlite3.Connection) -> int:
    return int(db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])


def _pending(db: sqlite3.Connection) -> list[str]:
    """Documents whose keyword index update may be missing."""
    return [r[0] for r in db.execute("SELECT doc_id FROM kw_pending")]
