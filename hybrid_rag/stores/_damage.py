"""Typed errors for the embedded stores' files: damage, disk full, other I/O failures.

Every embedded store maps what its engine raises (``OSError``, ``sqlite3.Error``,
RocksDB's "Corruption", tantivy's and usearch's ``ValueError``/``RuntimeError``) through
these helpers, so a caller sees a ``StoreError`` subclass naming the file and, for
damage, the way to repair it; never a raw engine error.
"""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from hybrid_rag.errors import DamagedStoreError, DiskFullError, StoreError

__all__ = ["STORE_PARTS", "damaged", "engine_error", "is_disk_full", "repair_hint"]

STORE_PARTS = ("graph", "vectors", "catalog.sqlite", "journal")
"""The entries of a ``HybridRAG(path)`` folder that belong to a store."""

_FULL = ("no space left", "disk is full", "disk full", "enospc", "not enough space")
_CORRUPT = (
    "corrupt",
    "malformed",
    "not a database",
    "checksum mismatch",
    "no such file",
    "does not exist",
    "invalid data",
    "unexpected end",
)


def repair_hint(path: Path) -> str:
    """The repair command for a file of a ``HybridRAG(path)`` store."""
    root = path
    while root.name and root.name not in STORE_PARTS and root.parent != root:
        root = root.parent
    root = root.parent if root.name in STORE_PARTS else path.parent
    return f"run `hybrid-rag repair --store {root}`"


def damaged(what: str, path: Path, *, how: str | None = None) -> DamagedStoreError:
    """A ``DamagedStoreError`` for ``path``; ``how`` overrides the repair hint."""
    return DamagedStoreError(what, path=str(path), repair=how or repair_hint(path))


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk (or the file system's quota) is full."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorcode", None) == 13:
        return True  # SQLITE_FULL
    return any(s in str(exc).lower() for s in _FULL)


def engine_error(
    exc: BaseException,
    *,
    what: str,
    path: Path | None,
    how: str | None = None,
    message: str | None = None,
) -> StoreError:
    """The typed error for an engine failure while ``what`` (a phrase: "writing the chunks").

    Disk full -> ``DiskFullError`` ("no space left on device"); a file the engine finds
    damaged -> ``DamagedStoreError`` naming it (``how``: the repair, default
    ``repair_hint``); anything else -> ``StoreError`` with ``message`` (default: what
    failed and the engine's text).
    """
    if isinstance(exc, StoreError):
        return exc
    text = str(exc) or type(exc).__name__
    where = f" ({path})" if path is not None else ""
    if is_disk_full(exc):
        return DiskFullError(
            f"{what} failed: no space left on device{where}; nothing was changed: free some "
            "space and try again"
        )
    low = text.lower()
    damage = type(exc) is sqlite3.DatabaseError  # "file is not a database", "malformed"
    if path is not None and (damage or any(s in low for s in _CORRUPT)):
        return damaged(f"{what} failed: the file is damaged ({text})", path, how=how)
    return StoreError(message or f"{what} failed{where}: {text}")
