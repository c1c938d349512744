"""The ingest flow: read -> hash check -> prepare -> extract -> write both stores -> catalog.

::

    source ──► read + hash ──► same id, same hash? ──► skipped
                                   │ new or changed
                                   ▼
        prepare (parse, chunk; in a worker process or thread) ──► Extractor ──► checked facts
                                   │                                              │ triples
                                   ▼                                              ▼
              embed (batches)          backup + intent (journal) ──► GraphStore.replace
                                   │ both done
                                   ▼
                VectorStore.replace ──► Catalog.put (last) ──► IngestReport
                                         (any failure: the backup is restored)

``IngestPipeline`` takes only protocols. Sources are checked first
(``hybrid_rag.ingest.inputs``: regular files only, at most ``max_bytes``). The
CPU-bound half (``prepare``) is a pure function so it can run in a worker process; the
offline extractor runs there too. The writes go through ``StoreWriter``
(``hybrid_rag.ingest._writes``): the old version stays in the catalog until the new one
is complete, and any failure restores it whole. Ingests of one document id are
serialised, so concurrent ingests of the same id leave exactly one version (the last
one) in every store.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePath

import anyio

from hybrid_rag._usage import combine_usage, track_usage
from hybrid_rag._workers import Workers
from hybrid_rag.errors import (
    DocumentExistsError,
    DocumentNotFoundError,
    HybridRAGError,
    InputError,
    OntologyError,
)
from hybrid_rag.ingest._writes import StoreWriter, first_error
from hybrid_rag.ingest.chunk import chunk_pages
from hybrid_rag.ingest.extract import Extraction
from hybrid_rag.ingest.extractor import OfflineExtractor, checked_extraction
from hybrid_rag.ingest.formats.ocr import OcrOptions
from hybrid_rag.ingest.inputs import DEFAULT_MAX_BYTES, read_input, valid_unicode
from hybrid_rag.ingest.load import LoadedDocument, parse_document
from hybrid_rag.ingest.triples import build_triples
from hybrid_rag.models import Chunk, DocumentInfo, IngestReport, PreparedDocument, Usage
from hybrid_rag.protocols import Catalog, Embedder, Extractor, GraphStore, Ontology, VectorStore
from hybrid_rag.rdf import Triple
from hybrid_rag.stores._journal import Journal

__all__ = [
    "IngestParts",
    "IngestPipeline",
    "Prepared",
    "Source",
    "prepare",
    "prepare_in_worker",
]

log = logging.getLogger("hybrid_rag")

Source = str | os.PathLike[str] | bytes


@dataclass(slots=True)
class Prepared:
    """A parsed and chunked document; ``extraction`` and ``triples`` once extracted."""

    doc_id: str
    document: LoadedDocument
    chunks: list[Chunk]
    extraction: Extraction | None = None
    triples: list[Triple] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)

    def as_input(self) -> PreparedDocument:
        """What an ``Extractor`` reads."""
        d = self.document
        return PreparedDocument(
            doc_id=self.doc_id,
            name=d.name,
            source=d.source,
            pages=d.pages,
            chunks=tuple(self.chunks),
        )


def prepare(
    data: bytes,
    *,
    name: str,
    source: str,
    doc_id: str,
    ontology: Ontology,
    chunk_size: int,
    chunk_overlap: int,
    offline: bool = True,
    ocr: OcrOptions | None = None,
) -> Prepared:
    """Parse and chunk one document; with ``offline``, also extract and build its triples.

    Pure (no I/O): raises ``DocumentError`` on bad input. ``ocr`` defaults to
    ``OcrOptions()`` (scanned pages and images read when an engine is installed).
    """
    t0 = time.perf_counter()
    doc = valid_unicode(parse_document(data, name=name, source=source, ocr=ocr or OcrOptions()))
    t1 = time.perf_counter()
    chunks = chunk_pages(doc.pages, doc_id=doc_id, size=chunk_size, overlap=chunk_overlap)
    t2 = time.perf_counter()
    prep = Prepared(doc_id, doc, chunks)
    prep.timings = {"parse_ms": _ms(t1 - t0), "chunk_ms": _ms(t2 - t1)}
    if offline:
        raw = OfflineExtractor().extract_sync(prep.as_input(), ontology=ontology)
        finish(prep, raw, ontology=ontology)
        prep.timings["extract_ms"] = _ms(time.perf_counter() - t2)
    return prep


def finish(prep: Prepared, raw: Extraction, *, ontology: Ontology) -> None:
    """Check an extraction against the document and the ontology, then build the triples.

    Facts with an unknown property or a quote that is not on their page are dropped and
    counted in the extraction's warnings. The triples are validated by the ontology: a
    problem left after that check is a bug and raises, before anything is written.

    Raises:
        OntologyError: the ontology rejects the triples built from the checked facts.
    """
    extraction = checked_extraction(raw, prep.as_input(), ontology=ontology)
    triples = build_triples(prep.doc_id, extraction, ontology=ontology)
    problems = ontology.validate(triples)
    if problems:
        raise OntologyError(
            f"{prep.doc_id}: the ontology rejects the extracted triples: {'; '.join(problems[:5])}"
        )
    prep.extraction, prep.triples = extraction, triples


_WORKER_ONTOLOGIES: dict[str, Ontology] = {}


def prepare_in_worker(
    data: bytes,
    name: str,
    source: str,
    doc_id: str,
    ontology_spec: str,
    chunk_size: int,
    chunk_overlap: int,
    offline: bool = True,
    ocr: OcrOptions | None = None,
) -> Prepared:
    """``prepare`` for a worker process: the ontology comes as its spec, loaded once."""
    from hybrid_rag.ontology import load_ontology

    ontology = _WORKER_ONTOLOGIES.get(ontology_spec)
    if ontology is None:
        ontology = _WORKER_ONTOLOGIES[ontology_spec] = load_ontology(ontology_spec)
    return prepare(
        data,
        name=name,
        source=source,
        doc_id=doc_id,
        ontology=ontology,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        offline=offline,
        ocr=ocr,
    )


@dataclass(frozen=True, slots=True)
class IngestParts:
    """Everything the ingest flow uses; built by ``HybridRAG``.

    Attributes:
        ontology_spec: the ontology's name or path when it has one (worker processes
            load it by that); ``None`` keeps parsing in threads.
        processes: worker processes for batches; ``None`` = when spawning is safe.
        on_change: called after every write or delete (drops cached product names).
        on_first_write: called once a document is written (records the embedder).
        journal: where writes in progress are recorded (default: in memory).
        max_bytes: the largest document read.
        ocr: how scanned pages and images are read (``None``: ``OcrOptions()``).
    """

    graph: GraphStore
    vectors: VectorStore
    catalog: Catalog
    embedder: Embedder
    ontology: Ontology
    extractor: Extractor
    workers: Workers
    locks: DocLocks
    chunk_size: int
    chunk_overlap: int
    ontology_spec: str | None = None
    processes: bool | None = None
    on_change: Callable[[], None] = lambda: None
    on_first_write: Callable[[], None] = lambda: None
    journal: Journal = field(default_factory=lambda: Journal(None))
    max_bytes: int = DEFAULT_MAX_BYTES

    ocr: OcrOptions | None = None

    def writer(self) -> StoreWriter:
        """The journaled writes over these stores."""
        return StoreWriter(
            graph=self.graph,
            vectors=self.vectors,
            catalog=self.catalog,
            embedder=self.embedder,
            journal=self.journal,
            workers=self.workers,
            on_change=self.on_change,
        )


class DocLocks:
    """One lock per document id, so ingests and forgets of one id never interleave.

    Thread locks polled from async code: they hold across event loops (every sync twin
    runs its own loop) and never block a loop while waiting.
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    async def hold(self, doc_id: str) -> threading.Lock:
        """Wait for the document's lock and take it; release it with ``.release()``."""
        with self._guard:
            lock = self._locks.setdefault(doc_id, threading.Lock())
        delay = 0.001
        while not lock.acquire(blocking=False):
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.05)
        return lock


class IngestPipeline:
    """Runs the ingest flow (see the module docstring) over ``IngestParts``."""

    def __init__(self, parts: IngestParts) -> None:
        self.parts = parts

    async def ingest(
        self,
        source: Source,
        *,
        doc_id: str | None = None,
        name: str | None = None,
        pool: ProcessPoolExecutor | None = None,
        replace: bool = True,
    ) -> IngestReport:
        """Ingest one file or ``bytes``; see ``hybrid_rag.HybridRAG.aingest``."""
        from hybrid_rag.ingest.load import content_hash, doc_id_from_name, validate_doc_id

        t0 = time.perf_counter()
        check_source(source, name=name)
        if doc_id is not None:
            validate_doc_id(doc_id)
        p = self.parts
        data, fname, label = await p.workers.run(
            lambda: read_input(source, name=name, max_bytes=p.max_bytes)
        )
        did = validate_doc_id(doc_id or doc_id_from_name(fname))
        digest = content_hash(data)
        lock = await p.locks.hold(did)
        try:
            old = await p.workers.run(lambda: p.catalog.get(did))
            if old is not None and old.content_hash == digest:
                return _skipped(old, label, digest, t0)
            if old is not None and not replace:
                raise DocumentExistsError(
                    f"a document {did!r} exists with other content ({old.source}, "
                    f"{old.updated_at:%Y-%m-%d %H:%M} UTC): replace it explicitly, or give "
                    "this one another id"
                )
            with track_usage() as meter:
                prep = await self._prepare(data, fname, label, did, pool=pool)
                info = _info(prep, label, digest, old)
                p.on_first_write()  # the embedder is recorded before anything is written
                counted = await self._write(prep, info, old)
            usage = combine_usage(meter.usage, counted + prep.usage)
        finally:
            lock.release()
        log.info("ingested", extra={"doc_id": did, "chunks": info.chunks, "triples": info.triples})
        return _report(prep, info, label, old is not None, usage, t0)

    async def ingest_many(
        self,
        sources: Iterable[Source | tuple[str, bytes]],
        *,
        concurrency: int,
        progress: Callable[[IngestReport], None] | None,
        raise_errors: bool,
    ) -> list[IngestReport]:
        """Ingest many items concurrently; see ``hybrid_rag.HybridRAG.aingest_many``."""
        items = expand_sources(sources)
        results: list[IngestReport | None] = [None] * len(items)
        seen: dict[str, tuple[int, Source]] = {}
        yielded = _yielded_stems(items)
        sem = anyio.Semaphore(concurrency)
        with self._pool(len(items), concurrency) as pool:

            async def one(i: int, src: Source, name: str | None) -> None:
                async with sem:
                    rep = await self._one_of_many(i, src, name, (seen, yielded), pool, raise_errors)
                results[i] = rep
                if progress is not None:
                    progress(rep)

            try:
                async with anyio.create_task_group() as tg:
                    for i, (src, name) in enumerate(items):
                        tg.start_soon(one, i, src, name)
            except BaseExceptionGroup as group:  # raise_errors: the document's own error
                first = first_error(group)
                if isinstance(first, HybridRAGError):
                    raise first from group
                raise
        return [r for r in results if r is not None]

    async def _one_of_many(
        self,
        i: int,
        src: Source,
        name: str | None,
        ids: tuple[dict[str, tuple[int, Source]], set[str]],
        pool: ProcessPoolExecutor | None,
        raise_errors: bool,
    ) -> IngestReport:
        """One item of a batch; ``ids``: the ids taken so far and the stems yielded to
        a PDF or text file of the batch (see ``_yielded_stems``)."""
        from hybrid_rag.ingest.load import doc_id_from_name

        seen, yielded = ids
        label = name or (str(src) if not isinstance(src, bytes) else "<bytes>")
        try:
            base = name or (Path(str(src)).name if not isinstance(src, bytes) else "document")
            did = doc_id_from_name(base)
            if did in yielded and PurePath(base).suffix.lower() not in _FIRST_FORMATS:
                did = doc_id_from_name(base.replace(".", "_"))  # oyo.pdf + oyo.png: "oyo_png"
            if did in seen:
                first, earlier = seen[did]
                twin = await anyio.to_thread.run_sync(_same_content, src, earlier)
                if twin is not None:  # "kerry_2.PDF" beside a byte-identical "kerry_2.pdf"
                    return _twin(did, label, twin, first)
                raise InputError(f"doc id {did!r} of {label} is already used by item {first}")
            seen[did] = (i, src)
            return await self.ingest(src, doc_id=did, name=name, pool=pool)
        except HybridRAGError as exc:
            if raise_errors:
                raise
            return _failed(label, exc)

    async def forget(self, doc_id: str) -> None:
        """Remove a document from the catalog, the graph and the vectors.

        A document that is not in the catalog but still has a graph or chunks is removed
        too; an id found nowhere raises ``DocumentNotFoundError``.
        """
        from hybrid_rag.ingest.load import validate_doc_id

        validate_doc_id(doc_id)
        p = self.parts
        lock = await p.locks.hold(doc_id)
        try:
            had = await p.writer().forget(doc_id)
        finally:
            lock.release()
        if not any(had):
            raise DocumentNotFoundError(f"unknown document id {doc_id!r}")

    @contextmanager
    def _pool(self, n_items: int, concurrency: int) -> Iterator[ProcessPoolExecutor | None]:
        """Worker processes for a batch (spawned: safe with the threads stores run)."""
        from hybrid_rag._spawn import spawn_is_safe

        p = self.parts
        workers = min(os.cpu_count() or 1, concurrency, n_items)
        offline = isinstance(p.extractor, OfflineExtractor)
        use = workers >= 2 and p.ontology_spec is not None and p.processes is not False
        if use and p.processes is None:
            use = n_items >= 4 and spawn_is_safe() and offline
        if not use:
            yield None
            return
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
        try:
            yield pool
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    async def _prepare(
        self, data: bytes, name: str, label: str, doc_id: str, *, pool: ProcessPoolExecutor | None
    ) -> Prepared:
        """Parse and chunk (worker process or thread), then extract with the extractor."""
        p = self.parts
        offline = isinstance(p.extractor, OfflineExtractor)
        if pool is not None and p.ontology_spec is not None:
            args = (data, name, label, doc_id, p.ontology_spec, p.chunk_size, p.chunk_overlap)
            future = pool.submit(prepare_in_worker, *args, offline, p.ocr)
            prep = await p.workers.run(future.result)
        else:
            prep = await p.workers.run(
                lambda: prepare(
                    data,
                    name=name,
                    source=label,
                    doc_id=doc_id,
                    ontology=p.ontology,
                    chunk_size=p.chunk_size,
                    chunk_overlap=p.chunk_overlap,
                    offline=offline,
                    ocr=p.ocr,
                )
            )
        if prep.extraction is None:
            t = time.perf_counter()
            raw = await p.extractor.extract(prep.as_input(), ontology=p.ontology)
            await p.workers.run(lambda: finish(prep, raw, ontology=p.ontology))
            prep.timings["extract_ms"] = _ms(time.perf_counter() - t)
        return prep

    async def _write(self, prep: Prepared, info: DocumentInfo, old: DocumentInfo | None) -> Usage:
        """Graph and vectors (embedding meanwhile), then the catalog; undone on failure."""
        p = self.parts
        texts = [c.text for c in prep.chunks]
        await p.writer().write(
            info,
            prep.triples,
            prep.chunks,
            lambda: p.embedder.embed_documents(texts),
            old=old,
            timings=prep.timings,
        )
        return Usage(embedding_calls=1, embedded_texts=len(prep.chunks))


def check_source(source: object, *, name: str | None) -> None:
    """``InputError`` unless ``source`` is a path or bytes (bytes need a ``name``)."""
    if isinstance(source, bytes):
        if not isinstance(name, str) or not name:
            raise InputError("bytes need name= (a file name such as 'acetone.pdf')")
        return
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"source must be a path or bytes, not {type(source).__name__}")
    if name is not None and not isinstance(name, str):
        raise InputError(f"name must be a string, not {type(name).__name__}")


def expand_sources(
    sources: Iterable[Source | tuple[str, bytes]],
) -> list[tuple[Source, str | None]]:
    """Items of a batch: folders expanded (recursively), ``(name, bytes)`` pairs split."""
    from hybrid_rag.ingest.load import iter_files

    if isinstance(sources, (str, bytes, os.PathLike)) or not isinstance(sources, Iterable):
        raise InputError("sources must be a list of paths, bytes or (name, bytes) pairs")
    items: list[tuple[Source, str | None]] = []
    for src in sources:
        if isinstance(src, tuple):
            if len(src) != 2 or not isinstance(src[0], str) or not isinstance(src[1], bytes):
                raise InputError("a (name, bytes) item needs a str name and bytes content")
            items.append((src[1], src[0]))
        elif isinstance(src, bytes):
            items.append((src, None))
        elif isinstance(src, (str, os.PathLike)):
            path = Path(src)
            items += [(f, None) for f in iter_files(path)] if path.is_dir() else [(src, None)]
        else:
            raise InputError(f"cannot ingest a {type(src).__name__}: give a path or bytes")
    return items


_FIRST_FORMATS = frozenset({"", ".pdf", ".txt", ".text", ".md", ".markdown"})


def _yielded_stems(items: list[tuple[Source, str | None]]) -> set[str]:
    """Stem ids that a Word, HTML or image file of the batch leaves to a PDF or text file
    with the same stem (those formats named a document by its stem before the others
    were read, so their ids stay what they were); the other file gets ``stem_suffix``."""
    from hybrid_rag.ingest.load import doc_id_from_name

    names = [n or (Path(str(s)).name if not isinstance(s, bytes) else "") for s, n in items]
    first = {
        doc_id_from_name(n) for n in names if n and PurePath(n).suffix.lower() in _FIRST_FORMATS
    }
    later = {
        doc_id_from_name(n) for n in names if n and PurePath(n).suffix.lower() not in _FIRST_FORMATS
    }
    return first & later


def _info(prep: Prepared, label: str, digest: str, old: DocumentInfo | None) -> DocumentInfo:
    assert prep.extraction is not None
    now = datetime.now(UTC)
    return DocumentInfo(
        doc_id=prep.doc_id,
        source=label,
        content_hash=digest,
        pages=len(prep.document.pages),
        chunks=len(prep.chunks),
        triples=len(prep.triples),
        title=prep.extraction.subject,
        aliases=list(prep.extraction.aliases),
        created_at=old.created_at if old else now,
        updated_at=now,
    )


def _report(
    prep: Prepared, info: DocumentInfo, label: str, replaced: bool, usage: Usage, t0: float
) -> IngestReport:
    assert prep.extraction is not None
    return IngestReport(
        doc_id=info.doc_id,
        source=label,
        status="replaced" if replaced else "ingested",
        content_hash=info.content_hash,
        pages=info.pages,
        chunks=info.chunks,
        triples=info.triples,
        facts=len(prep.extraction.facts),
        warnings=[*prep.document.warnings, *prep.extraction.warnings],
        timings={**prep.timings, "total_ms": _ms(time.perf_counter() - t0)},
        usage=usage,
    )


def _skipped(old: DocumentInfo, label: str, digest: str, t0: float) -> IngestReport:
    return IngestReport(
        doc_id=old.doc_id,
        source=label,
        status="skipped",
        content_hash=digest,
        pages=old.pages,
        chunks=old.chunks,
        triples=old.triples,
        timings={"total_ms": _ms(time.perf_counter() - t0)},
    )


def _same_content(src: Source, earlier: Source) -> str | None:
    """The content hash both items share, or ``None`` (different, or one unreadable)."""
    from hybrid_rag.ingest.load import content_hash, read_source

    try:
        mine, theirs = (content_hash(read_source(s, name="item")[0]) for s in (src, earlier))
    except HybridRAGError:
        return None
    return mine if mine == theirs else None


def _twin(did: str, label: str, digest: str, first: int) -> IngestReport:
    """A batch item byte-identical to an earlier one with the same id: not read twice."""
    return IngestReport(
        doc_id=did,
        source=label,
        status="skipped",
        content_hash=digest,
        warnings=[f"same content as item {first} ({did!r}): ingested once"],
    )


def _failed(label: str, exc: HybridRAGError) -> IngestReport:
    return IngestReport(
        doc_id="",
        source=label,
        status="failed",
        content_hash="",
        error=f"{type(exc).__name__}: {exc}",
    )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)
