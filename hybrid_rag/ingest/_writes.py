"""Writing one document to the three stores so that a failure never loses a version.

``StoreWriter`` is the ingest flow's only way to change the stores:

* **write** (ingest or replace): record an intent with a backup of what the stores
  hold for the document (``hybrid_rag.stores._journal``), write the graph and the
  vectors, then the catalog entry; the old entry stays in the catalog (and the old
  version is whole in the backup) until then. Any failure, in this process or a kill
  -9 followed by the next open, restores the backup: the old version, whole, or no
  document at all when it was new.
* **forget**: record the intent, then remove the catalog entry, the graph and the
  chunks; a forget cut short is finished by recovery.
* **recover**: settle every recorded intent (after a crash). A document without an
  intent is never touched.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import anyio
import numpy as np
import numpy.typing as npt

from hybrid_rag._workers import Workers
from hybrid_rag.errors import DiskFullError, HybridRAGError, StoreError
from hybrid_rag.models import Chunk, DocumentInfo
from hybrid_rag.protocols import Catalog, Embedder, GraphStore, VectorStore
from hybrid_rag.rdf import Term, Triple
from hybrid_rag.stores._journal import Backup, Intent, Journal

if TYPE_CHECKING:
    from hybrid_rag.stores._embedded import StoreSet

__all__ = ["StoreWriter", "first_error"]

log = logging.getLogger("hybrid_rag")

F32 = npt.NDArray[np.float32]
_ALL = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"


@dataclass(frozen=True, slots=True)
class StoreWriter:
    """Journaled writes over one set of stores (see the module docstring)."""

    graph: GraphStore
    vectors: VectorStore
    catalog: Catalog
    embedder: Embedder
    journal: Journal
    workers: Workers
    on_change: Callable[[], None] = lambda: None

    @classmethod
    def of(
        cls,
        stores: StoreSet,
        *,
        embedder: Embedder,
        workers: Workers,
        on_change: Callable[[], None] = lambda: None,
    ) -> StoreWriter:
        """The writer over one folder's embedded stores and their journal."""
        return cls(
            graph=stores.graph,
            vectors=stores.vectors,
            catalog=stores.catalog,
            embedder=embedder,
            journal=stores.journal,
            workers=workers,
            on_change=on_change,
        )

    async def write(
        self,
        info: DocumentInfo,
        triples: Sequence[Triple],
        chunks: Sequence[Chunk],
        embed: Callable[[], Awaitable[F32]],
        *,
        old: DocumentInfo | None,
        timings: dict[str, float],
    ) -> None:
        """Make the stores hold this version of ``info.doc_id``, or leave them as they were.

        Embedding runs while the backup is read and the graph is written.

        Raises:
            HybridRAGError: what failed (``DiskFullError``, ``StoreError``, the
                embedder's error); the stores hold the old version (or nothing, for a
                new document). When even that restore failed the error says so and the
                next open restores it.
        """
        did, begun, found = info.doc_id, False, {}
        await self.settle(did)

        async def embed_part() -> None:
            t = time.perf_counter()
            found["vecs"] = await embed()
            timings["embed_ms"] = _ms(time.perf_counter() - t)

        async def graph_part() -> None:
            nonlocal begun
            backup = await self.backup(did)
            intent = Intent(did, "write", new_hash=info.content_hash, old=old, has_backup=True)
            await self.workers.run(lambda: self.journal.begin(intent, backup))
            begun = True
            t = time.perf_counter()
            await self.workers.run(lambda: self.graph.replace(did, triples))
            timings["graph_ms"] = _ms(time.perf_counter() - t)

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(embed_part)
                tg.start_soon(graph_part)
            t = time.perf_counter()
            await self.workers.run(lambda: self.vectors.replace(did, chunks, found["vecs"]))
            timings["vectors_ms"] = _ms(time.perf_counter() - t)
            await self.workers.run(lambda: self.catalog.put(info))
        except BaseException as exc:
            error = first_error(exc)
            if begun:
                await self._undo_after(did, error)
            self.on_change()
            if isinstance(error, HybridRAGError):
                raise error from exc
            if not isinstance(error, Exception):  # cancellation, KeyboardInterrupt
                raise
            raise StoreError(f"writing {did!r} failed: {error}") from exc
        self.on_change()
        await self.workers.run(lambda: self.journal.end(did))

    async def forget(self, doc_id: str) -> tuple[bool, bool, bool]:
        """Remove the document from the catalog, the graph and the vectors.

        Returns:
            Whether it had a catalog entry, a graph, chunks.
        """
        await self.settle(doc_id)
        old = await self.workers.run(lambda: self.catalog.get(doc_id))
        intent = Intent(doc_id, "forget", old=old)
        await self.workers.run(lambda: self.journal.begin(intent, None))
        try:
            had = await self._remove(doc_id)
        finally:
            self.on_change()
        await self.workers.run(lambda: self.journal.end(doc_id))
        return had

    async def _remove(self, doc_id: str) -> tuple[bool, bool, bool]:
        with anyio.CancelScope(shield=True):  # started: finish it, or leave it to recovery
            entry = await self.workers.run(lambda: self.catalog.delete(doc_id))
            graph = await self.workers.run(lambda: self.graph.delete(doc_id))
            chunks = await self.workers.run(lambda: self.vectors.delete(doc_id)) > 0
        return entry, graph, chunks

    async def backup(self, doc_id: str) -> Backup:
        """What the stores hold for ``doc_id`` now (its triples, chunks and vectors)."""
        triples = await self.workers.run(lambda: graph_triples(self.graph, doc_id))
        chunks, vectors = await self.workers.run(lambda: _vector_backup(self.vectors, doc_id))
        return Backup(triples=triples, chunks=chunks, vectors=vectors)

    async def settle(self, doc_id: str) -> None:
        """Finish or undo a write of ``doc_id`` that a crash or a failed undo left."""
        intent = await self.workers.run(lambda: self.journal.get(doc_id))
        if intent is not None:
            await self._settle(intent)

    async def recover(self) -> list[str]:
        """Settle every recorded intent; returns the doc ids settled."""
        intents = await self.workers.run(self.journal.pending)
        for intent in intents:
            await self._settle(intent)
        return [i.doc_id for i in intents]

    async def _settle(self, intent: Intent) -> None:
        did = intent.doc_id
        if intent.op == "forget":
            log.warning("finishing the forget of %r that a crash interrupted", did)
            await self._remove(did)
        else:
            entry = await self.workers.run(lambda: self.catalog.get(did))
            if entry is None or entry.content_hash != intent.new_hash:
                log.warning("undoing the unfinished write of %r (restoring its backup)", did)
                backup = await self.workers.run(lambda: self.journal.backup(intent))
                await self._restore(did, backup)
        self.on_change()
        await self.workers.run(lambda: self.journal.end(did))

    async def _undo_after(self, did: str, error: BaseException) -> None:
        """Restore the backup after a failed write; if that fails, leave it to recovery."""
        with anyio.CancelScope(shield=True):
            try:
                await self.workers.run(lambda: self.journal.release_reserve(did))
                intent = await self.workers.run(lambda: self.journal.get(did))
                if intent is not None:
                    await self._settle(intent)
            except Exception as undo_error:
                log.exception("could not undo the failed write of %s", did)
                kind = DiskFullError if isinstance(error, DiskFullError) else StoreError
                raise kind(
                    f"writing {did!r} failed ({error}) and restoring its previous version "
                    f"failed too ({undo_error}); it is restored by the next write of "
                    f"{did!r} or when the store is next opened"
                ) from undo_error

    async def _restore(self, did: str, backup: Backup | None) -> None:
        """Make the stores hold exactly ``backup`` for ``did`` (nothing: ``None``).

        A store that already holds it is not written (a write that failed left it
        unchanged): so an undo needs no space on a full disk unless a store changed.
        """
        b = backup or Backup()
        with anyio.CancelScope(shield=True):
            now = await self.workers.run(lambda: graph_triples(self.graph, did))
            if set(now) != set(b.triples):
                await self.workers.run(lambda: self.graph.replace(did, b.triples))
            if await self.workers.run(lambda: self.vectors.chunks(did)) == _ordered(b.chunks):
                return
            vectors = b.vectors
            if vectors is None and b.chunks:
                vectors = await self.embedder.embed_documents([c.text for c in b.chunks])
            if vectors is None or not b.chunks:
                await self.workers.run(lambda: self.vectors.delete(did))
            else:
                await self.workers.run(lambda: self.vectors.replace(did, b.chunks, vectors))


def _ordered(chunks: Sequence[Chunk]) -> list[Chunk]:
    """Chunks in the order ``VectorStore.chunks`` returns them (page, start, write order)."""
    return [
        c for _, c in sorted(enumerate(chunks), key=lambda ic: (ic[1].page, ic[1].start, ic[0]))
    ]


def graph_triples(graph: GraphStore, doc_id: str) -> list[Triple]:
    """Every triple of the document's graph (read directly where the store can)."""
    direct = getattr(graph, "triples", None) or getattr(graph, "dump", None)
    if callable(direct):
        return list(direct(doc_id))
    rows = graph.query(_ALL, scope=[doc_id]).rows
    return [_row_triple(r) for r in rows if {"s", "p", "o"} <= r.keys()]


def _row_triple(row: dict[str, Term]) -> Triple:
    return (row["s"], row["p"], row["o"])


def _vector_backup(vectors: VectorStore, doc_id: str) -> tuple[list[Chunk], F32 | None]:
    """The document's chunks, with their vectors where the store can export them."""
    export = getattr(vectors, "export", None)
    if callable(export):
        chunks, vecs = export(doc_id)
        return list(chunks), (np.asarray(vecs, dtype=np.float32) if len(chunks) else None)
    return vectors.chunks(doc_id), None


def first_error(exc: BaseException) -> BaseException:
    """The error inside task-group exception groups: the first library error, else the first."""
    while isinstance(exc, BaseExceptionGroup):
        typed = exc.subgroup(HybridRAGError)
        exc = (typed or exc).exceptions[0]
    return exc


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)
