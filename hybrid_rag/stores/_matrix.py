"""The float32 half of the embedded vector store: a growable row matrix and row checksums.

``vectors.f32`` is a raw row-major float32 matrix (L2-normalised rows), memory-mapped.
Its capacity in rows is recorded in SQLite (``meta.rows``) and every live row's CRC-32
in its chunk's record, so a truncated file or flipped bytes are found instead of
ranking chunks with garbage. Space is allocated when the file grows
(``posix_fallocate`` where the OS has it): a full disk is an ``OSError`` then, never a
``SIGBUS`` on a later write through the memory map.
"""

from __future__ import annotations

import errno
import os
import zlib
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["F32", "I64", "Matrix", "normalise", "row_crc"]

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]


def normalise(vectors: F32) -> F32:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: F32 = (vectors / norms).astype(np.float32, copy=False)
    return out


def row_crc(row: F32) -> int:
    """CRC-32 of one float32 row's bytes."""
    return zlib.crc32(np.ascontiguousarray(row, dtype=np.float32).tobytes())


class Matrix:
    """Growable float32 row matrix, in RAM (``file=None``) or memory-mapped from a raw file.

    The constructor maps what the file holds (whole rows only); ``rows_on_disk`` says how
    many that is, for the store to check against what SQLite expects.
    """

    def __init__(self, file: Path | None, dim: int) -> None:
        self.file, self.dim = file, dim
        self.data: F32 = np.zeros((0, dim), dtype=np.float32)
        self.rows_on_disk = 0
        if file is not None and file.exists() and file.stat().st_size:
            rows = file.stat().st_size // (4 * dim)
            self.rows_on_disk = rows
            if rows:
                self.data = np.memmap(file, dtype=np.float32, mode="r+", shape=(rows, dim))

    def ensure(self, rows: int) -> None:
        """Grow the capacity (doubling) to at least ``rows`` rows.

        Raises:
            OSError: the file cannot grow (``ENOSPC`` on a full disk); it is unchanged
                in size as far as the OS allows, and the old rows stay mapped.
        """
        if rows <= len(self.data):
            return
        cap = max(rows, 2 * len(self.data), 1024)
        if self.file is None:
            grown = np.zeros((cap, self.dim), dtype=np.float32)
            grown[: len(self.data)] = self.data
            self.data = grown
            return
        self.flush()
        _grow(self.file, cap * 4 * self.dim)
        self.data = np.memmap(self.file, dtype=np.float32, mode="r+", shape=(cap, self.dim))
        self.rows_on_disk = cap

    def flush(self) -> None:
        """Write dirty pages of a memory-mapped matrix to disk."""
        if isinstance(self.data, np.memmap):
            self.data.flush()


def _grow(file: Path, size: int) -> None:
    """Extend ``file`` to ``size`` bytes with the blocks allocated (or ``OSError``)."""
    with open(file, "ab") as fh:
        old = os.fstat(fh.fileno()).st_size
        if size <= old:
            return
        fallocate = getattr(os, "posix_fallocate", None)
        try:
            if fallocate is None:  # pragma: no cover - Windows, macOS: sparse growth
                fh.truncate(size)
                return
            fallocate(fh.fileno(), old, size - old)
        except OSError as exc:
            fh.truncate(old)  # give back what was allocated
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise
            fh.truncate(size)  # a file system without fallocate: sparse growth
