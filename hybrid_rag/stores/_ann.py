"""The HNSW index of the embedded vector store (usearch), derived from the matrix.

Built lazily the first time a large collection is searched, updated in place by later
writes (``touch``), saved as ``ann.usearch`` on close. SQLite records whether the file
matches the data (``ann_usearch_ok``) and the file's CRC-32, so a stale or damaged file
is rebuilt from the matrix instead of being trusted: it holds nothing the store cannot
derive again.
"""

from __future__ import annotations

import contextlib
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hybrid_rag.stores._matrix import F32, I64, Matrix
from hybrid_rag.stores._vector_db import meta, set_meta

__all__ = ["ANN_FILE", "AnnIndex"]

ANN_FILE = "ann.usearch"
_OK = "ann_usearch_ok"  # "1": ann.usearch matches the data; hnsw.bin used "ann_ok"
_CRC = "ann_usearch_crc"
_BATCH = 65_536  # rows copied out of the matrix per index.add while building


class AnnIndex:
    """One store's HNSW index: its settings, the index once built, and what changed since.

    Args:
        file: ``ann.usearch`` (``None`` in memory).
        dtype: ``"f16"`` or ``"f32"``, usearch's copy of the vectors.
        m: usearch ``connectivity``.
        efc: usearch ``expansion_add``.
        ef: usearch ``expansion_search`` (raised to the candidates fetched when smaller).
    """

    def __init__(self, file: Path | None, *, dtype: str, m: int, efc: int, ef: int) -> None:
        self.file, self.dtype, self.m, self.efc, self.ef = file, dtype, m, efc, ef
        self.index: Any = None
        self.pending: set[int] = set()
        self.saved = True
        self.disk_ok = False

    def load(self, db: sqlite3.Connection, *, dim: int, live: int) -> None:
        """Reuse ``ann.usearch`` if SQLite says it is current, it is whole and it fits."""
        file = self.file
        if file is None or not file.exists() or meta(db, _OK) != "1":
            return
        from usearch.index import Index

        if meta(db, _CRC) != str(_file_crc(file)):
            return  # damaged or written by an older version: rebuilt when needed
        try:
            index = Index.restore(str(file), expansion_add=self.efc, expansion_search=self.ef)
        except (ValueError, RuntimeError, OSError):
            return
        if (
            index is None
            or index.ndim != dim
            or str(index.metric_kind) != "MetricKind.IP"
            or str(index.dtype) != f"ScalarKind.{self.dtype.upper()}"
            or index.connectivity != self.m
            or len(index) != live
        ):
            return
        self.index, self.saved, self.disk_ok = index, True, True

    def save(self, db: sqlite3.Connection, mat: Matrix, alive: npt.NDArray[np.bool_]) -> None:
        """Write the index to ``ann.usearch`` (after applying pending changes)."""
        file = self.file
        if file is None or self.index is None:
            return
        self.sync(db, mat, alive)
        if not self.saved:
            self.index.save(str(file))
            set_meta(db, _CRC, str(_file_crc(file)))
            set_meta(db, _OK, "1")
            self.saved = self.disk_ok = True
            with contextlib.suppress(OSError):  # the hnswlib index of older versions
                (file.parent / "hnsw.bin").unlink(missing_ok=True)

    def touch(self, slots: I64) -> None:
        """Rows written or freed since the last sync (applied before the next search)."""
        self.pending.update(int(s) for s in slots)

    def sync(
        self, db: sqlite3.Connection | None, mat: Matrix, alive: npt.NDArray[np.bool_]
    ) -> None:
        """Build the index, or apply the writes and deletes made since."""
        if self.index is None:
            index = self._new(mat.dim)
            live = np.flatnonzero(alive)
            for part in np.array_split(live, max(1, len(live) // _BATCH)):
                if len(part):  # in batches: never a second full copy of the matrix
                    index.add(part, mat.data[part], threads=0)
            self.index, self.pending, self.saved = index, set(), False
        elif self.pending:
            pending = np.array(sorted(self.pending), dtype=np.int64)
            self.index.remove(pending)  # unknown keys are ignored
            kept = pending[alive[pending]]
            if len(kept):
                self.index.add(kept, mat.data[kept], threads=0)
            self.pending, self.saved = set(), False
        if not self.saved and db is not None:
            self.mark_stale(db)

    def mark_stale(self, db: sqlite3.Connection) -> None:
        """Record that ``ann.usearch`` no longer matches the data (rebuilt on reopen)."""
        if self.disk_ok:
            set_meta(db, _OK, "0")
            self.disk_ok = False

    def candidates(self, q: F32, count: int, mat: Matrix, alive: npt.NDArray[np.bool_]) -> I64:
        """Up to ``count`` live slots near ``q`` (keys the matrix does not hold are dropped)."""
        self.sync(None, mat, alive)
        self.index.expansion_search = max(self.ef, count)
        keys = np.asarray(self.index.search(q, count, threads=1).keys, dtype=np.int64)
        keys = keys[(keys >= 0) & (keys < len(alive))]
        return keys[alive[keys]]

    def _new(self, dim: int) -> Any:
        from usearch.index import Index

        return Index(
            ndim=dim,
            metric="ip",
            dtype=self.dtype,
            connectivity=self.m,
            expansion_add=self.efc,
            expansion_search=self.ef,
        )


def _file_crc(file: Path) -> int:
    crc = 0
    with open(file, "rb") as fh:
        while block := fh.read(1 << 22):
            crc = zlib.crc32(block, crc)
    return crc
