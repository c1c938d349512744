"""The record of writes in progress: what recovery may undo, and nothing else.

Before the ingest flow writes a document to any store it records an *intent* here: the
document, the operation, the catalog entry it had, and a *backup* of what the stores
held for it (its triples, chunks and vectors). The intent is durable (written to a
temporary file, fsynced, renamed) before the first store write, and removed only once
the catalog entry is written. So after a crash, or a failure this process could not
undo, recovery knows exactly which documents were half-written and how they looked
before; a document without an intent is never touched by recovery, whatever the
catalog says.

On disk (``<store>/journal/``): ``<key>.intent.json``, ``<key>.backup.json`` +
``<key>.backup.npy`` (``key``: a hash of the doc id, so ids that differ only in case
never share a file) and ``<key>.reserve``: disk space set aside while the write runs
(three times the backup, plus 512 KiB) and given back before an undo, so restoring the
old version does not fail on the full disk that made the write fail. ``generation``
holds the catalog generation of the last write, so an older copy of the catalog is found
on open. Without a folder the journal lives in memory (undo within the process only).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from hybrid_rag.errors import StoreError
from hybrid_rag.models import Chunk, DocumentInfo
from hybrid_rag.rdf import Term, Triple
from hybrid_rag.stores._damage import damaged, engine_error

__all__ = ["Backup", "Intent", "Journal"]

_VERSION = 1
_GENERATION = "generation"
_RESERVE_BASE = 512 * 1024


@dataclass(frozen=True, slots=True)
class Intent:
    """A write in progress.

    Attributes:
        doc_id: the document.
        op: ``"write"`` (ingest or replace) or ``"forget"``.
        new_hash: for a write, the content hash the catalog holds once it is complete.
        old: the catalog entry before the write (``None``: a new document).
        has_backup: a ``Backup`` of the stores' content was recorded with it.
    """

    doc_id: str
    op: Literal["write", "forget"]
    new_hash: str | None = None
    old: DocumentInfo | None = None
    has_backup: bool = False


@dataclass(slots=True)
class Backup:
    """What the stores held for a document before a write.

    ``vectors`` is ``None`` when the vector store cannot export them; a restore then
    embeds the chunks again.
    """

    triples: list[Triple] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    vectors: npt.NDArray[np.float32] | None = None

    @property
    def empty(self) -> bool:
        """The stores held nothing for the document."""
        return not self.triples and not self.chunks


class Journal:
    """Intents and backups, on disk under ``folder`` or in memory (``folder=None``).

    Thread-safe. ``begin`` returns only once the intent is durable.
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._intents: dict[str, Intent] = {}
        self._backups: dict[str, Backup] = {}
        self._generation = 0

    def __repr__(self) -> str:
        return f"Journal({str(self.folder) if self.folder else 'memory'!r})"

    # -- writes ---------------------------------------------------------------------------

    def begin(self, intent: Intent, backup: Backup | None) -> None:
        """Record ``intent`` (and ``backup``) before any store is written.

        Raises:
            DiskFullError, StoreError: the record cannot be written; nothing else was.
        """
        if backup is not None and not intent.has_backup:
            raise ValueError("an intent with a backup must say has_backup=True")
        with self._lock:
            if self.folder is None:
                self._intents[intent.doc_id] = intent
                if backup is not None:
                    self._backups[intent.doc_id] = backup
                return
        key = _key(intent.doc_id)
        parts = [self.folder / f"{key}{s}" for s in (".backup.npy", ".backup.json", ".reserve")]
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            size = 0
            if backup is not None:
                size += _write_atomic(parts[0], _npy(backup.vectors))
                size += _write_atomic(parts[1], _backup_json(backup))
            _reserve(parts[2], 3 * size + _RESERVE_BASE)
            _write_atomic(self.folder / f"{key}.intent.json", _intent_json(intent))
            _sync_dir(self.folder)
        except OSError as exc:
            for part in parts:  # without an intent nothing is pending: give the space back
                with contextlib.suppress(OSError):
                    part.unlink(missing_ok=True)
            what = f"recording the write of {intent.doc_id!r}"
            raise engine_error(exc, what=what, path=self.folder) from exc

    def release_reserve(self, doc_id: str) -> None:
        """Give back the space set aside for ``doc_id``'s write (before undoing it)."""
        if self.folder is not None:
            with contextlib.suppress(OSError):
                (self.folder / f"{_key(doc_id)}.reserve").unlink(missing_ok=True)

    def end(self, doc_id: str) -> None:
        """The write of ``doc_id`` is complete (or undone): forget its intent and backup."""
        with self._lock:
            self._intents.pop(doc_id, None)
            self._backups.pop(doc_id, None)
        if self.folder is None:
            return
        key = _key(doc_id)
        try:  # no fsync: an intent that comes back names a write that is complete (settled)
            (self.folder / f"{key}.intent.json").unlink(missing_ok=True)
        except OSError as exc:
            what = f"closing the write of {doc_id!r}"
            raise engine_error(exc, what=what, path=self.folder) from exc
        for suffix in (".backup.json", ".backup.npy", ".reserve"):
            with contextlib.suppress(OSError):  # without its intent a backup is inert
                (self.folder / f"{key}{suffix}").unlink(missing_ok=True)

    # -- reads ----------------------------------------------------------------------------

    def get(self, doc_id: str) -> Intent | None:
        """The intent recorded for ``doc_id``, if any."""
        if self.folder is None:
            with self._lock:
                return self._intents.get(doc_id)
        file = self.folder / f"{_key(doc_id)}.intent.json"
        return _read_intent(file) if file.exists() else None

    def read(self, file: Path) -> Intent:
        """The intent in one record file.

        Raises:
            DamagedStoreError: it cannot be read.
        """
        return _read_intent(file)

    def pending(self) -> list[Intent]:
        """Every intent recorded (writes a crash or a failed undo left), by doc id.

        Raises:
            DamagedStoreError: an intent file cannot be read.
        """
        if self.folder is None:
            with self._lock:
                return sorted(self._intents.values(), key=lambda i: i.doc_id)
        if not self.folder.is_dir():
            return []
        intents = [_read_intent(f) for f in sorted(self.folder.glob("*.intent.json"))]
        return sorted(intents, key=lambda i: i.doc_id)

    def backup(self, intent: Intent) -> Backup | None:
        """The backup recorded with ``intent`` (``None`` when it has none).

        Raises:
            DamagedStoreError: the backup files cannot be read.
        """
        if not intent.has_backup:
            return None
        if self.folder is None:
            with self._lock:
                return self._backups.get(intent.doc_id)
        key = _key(intent.doc_id)
        base = self.folder / f"{key}.backup"
        try:
            data = json.loads((self.folder / f"{key}.backup.json").read_text(encoding="utf-8"))
            vectors = np.load(io.BytesIO((self.folder / f"{key}.backup.npy").read_bytes()))
            return Backup(
                triples=[_triple(t) for t in data["triples"]],
                chunks=[Chunk.model_validate(c) for c in data["chunks"]],
                vectors=None if vectors.size == 0 and data["chunks"] else vectors,
            )
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise damaged(
                f"the backup of {intent.doc_id!r} for an unfinished write cannot be read ({exc})",
                base,
            ) from exc

    def leftovers(self) -> list[Path]:
        """Backup files without an intent (a crash between writing them and the intent)."""
        if self.folder is None or not self.folder.is_dir():
            return []
        keys = {f.name.split(".")[0] for f in self.folder.glob("*.intent.json")}
        parts = [*self.folder.glob("*.backup.*"), *self.folder.glob("*.reserve")]
        return [f for f in parts if f.name.split(".")[0] not in keys]

    # -- the catalog generation -----------------------------------------------------------

    def generation(self) -> int:
        """The catalog generation of the last write recorded (0: none recorded)."""
        if self.folder is None:
            return self._generation
        file = self.folder / _GENERATION
        try:
            return int(file.read_text(encoding="ascii").strip() or 0)
        except FileNotFoundError:
            return 0
        except (OSError, ValueError) as exc:
            raise damaged(f"the catalog generation cannot be read ({exc})", file) from exc

    def record_generation(self, generation: int) -> None:
        """Remember the catalog generation after a write (best effort: it only guards)."""
        with self._lock:
            self._generation = max(self._generation, generation)
            if self.folder is None:
                return
            with contextlib.suppress(OSError):
                self.folder.mkdir(parents=True, exist_ok=True)
                tmp = self.folder / f"{_GENERATION}.tmp"
                tmp.write_text(str(self._generation), encoding="ascii")
                os.replace(tmp, self.folder / _GENERATION)

    def reset_generation(self, generation: int) -> None:
        """Set the recorded generation (repair, after rebuilding the catalog)."""
        with self._lock:
            self._generation = 0
        self.record_generation(generation)
        with self._lock:
            self._generation = generation


def _key(doc_id: str) -> str:
    return hashlib.sha256(doc_id.encode()).hexdigest()[:24]


def _write_atomic(file: Path, data: bytes) -> int:
    tmp = file.with_name(file.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, file)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return len(data)


def _reserve(file: Path, size: int) -> None:
    """A file of ``size`` allocated bytes (``OSError`` when the disk cannot hold it)."""
    fd = os.open(file, os.O_CREAT | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        fallocate = getattr(os, "posix_fallocate", None)
        if fallocate is not None:
            try:
                fallocate(fd, 0, size)
                return
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    raise
        block = b"\0" * 65536
        for _ in range(0, size, len(block)):  # no fallocate here: write the space out
            os.write(fd, block)
    finally:
        os.close(fd)


def _sync_dir(folder: Path) -> None:
    if os.name != "posix":  # pragma: no cover - Windows has no directory fsync
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _intent_json(intent: Intent) -> bytes:
    body = {
        "version": _VERSION,
        "doc_id": intent.doc_id,
        "op": intent.op,
        "new_hash": intent.new_hash,
        "old": None if intent.old is None else intent.old.model_dump(mode="json"),
        "has_backup": intent.has_backup,
    }
    return json.dumps(body, ensure_ascii=True).encode("ascii")


def _read_intent(file: Path) -> Intent:
    try:
        body = json.loads(file.read_text(encoding="utf-8"))
        old = body["old"]
        if body.get("version") != _VERSION or body["op"] not in ("write", "forget"):
            raise ValueError(f"unknown record {body.get('version')!r}/{body.get('op')!r}")
        return Intent(
            doc_id=str(body["doc_id"]),
            op=body["op"],
            new_hash=body["new_hash"],
            old=None if old is None else DocumentInfo.model_validate(old),
            has_backup=bool(body["has_backup"]),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise damaged(f"the record of an unfinished write cannot be read ({exc})", file) from exc


def _npy(vectors: npt.NDArray[np.float32] | None) -> bytes:
    buf = io.BytesIO()
    np.save(buf, np.zeros((0,), np.float32) if vectors is None else vectors, allow_pickle=False)
    return buf.getvalue()


def _backup_json(backup: Backup) -> bytes:
    body: dict[str, Any] = {
        "triples": [[_term_json(t) for t in triple] for triple in backup.triples],
        "chunks": [c.model_dump(mode="json") for c in backup.chunks],
    }
    try:
        return json.dumps(body, ensure_ascii=True).encode("ascii")
    except ValueError as exc:  # pragma: no cover - text from the stores is valid Unicode
        raise StoreError(f"cannot record a backup: {exc}") from exc


def _term_json(term: Term) -> list[str | None]:
    return [term.value, term.kind, term.datatype, term.lang]


def _triple(raw: list[list[Any]]) -> Triple:
    s, p, o = (Term(v, k, d, lang) for v, k, d, lang in raw)
    return (s, p, o)
