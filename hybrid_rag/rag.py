"""HybridRAG: the composition root. It builds the parts, owns their lifecycle, and offers
the sync twins; the flows live in ``hybrid_rag.ingest.pipeline`` and
``hybrid_rag.ask.supervisor``.
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

import anyio

from hybrid_rag._budget import DEFAULT_MAX_CALLS
from hybrid_rag._checks import check_int
from hybrid_rag._store_meta import (
    read_embedder,
    read_ontology,
    record_embedder,
    record_ontology,
)
from hybrid_rag._sync import iterate_sync, run_sync
from hybrid_rag._workers import Workers
from hybrid_rag.errors import ConfigurationError, HybridRAGError, InputError, StoreLockedError
from hybrid_rag.ingest.formats.ocr import OcrOptions
from hybrid_rag.ingest.inputs import DEFAULT_MAX_BYTES, check_max_bytes
from hybrid_rag.models import Answer, AskMode, DocumentList, IngestReport
from hybrid_rag.stores._closing import Closing

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from hybrid_rag.ask.compose import AnswerComposer
    from hybrid_rag.ask.supervisor import AskParts, History, SubjectIndexCache
    from hybrid_rag.ingest.pipeline import DocLocks, IngestParts, IngestPipeline, Source
    from hybrid_rag.integrations.langchain import HybridRAGRetriever
    from hybrid_rag.protocols import (
        Catalog,
        Embedder,
        Extractor,
        GraphStore,
        LLMProvider,
        Ontology,
        QuestionRouter,
        VectorStore,
    )
    from hybrid_rag.stores._embedded import StoreSet
    from hybrid_rag.stores._journal import Journal

__all__ = ["HybridRAG", "StreamDelta"]

log = logging.getLogger("hybrid_rag")


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final[Any] = _Unset()


@dataclass(frozen=True, slots=True)
class StreamDelta:
    """A piece of answer text as it arrives from ``HybridRAG.astream``."""

    delta: str


class HybridRAG(Closing):
    """Ingest documents into a knowledge graph and a vector index; answer with citations.

    Every part is a constructor argument; what is not given gets the embedded, offline
    default. Constructing does no I/O: stores open on first use.

    Args:
        path: directory for persistent stores; ``None`` keeps everything in memory.
        ontology: ``"msds"`` (bundled), a Turtle file path, or an ``Ontology``.
        embedder: ``"auto"`` (a local sentence-transformers model when installed, else the
            offline hashing embedder), ``"hashing"``, ``"local"``, or an ``Embedder``.
        graph: a ``GraphStore``; default embedded Oxigraph under ``path``.
        vectors: a ``VectorStore``; default embedded store under ``path``.
        catalog: a ``Catalog``; default SQLite under ``path``.
        llm: an ``LLMProvider``; ``None`` runs the offline, extractive path.
        extractor: an ``Extractor``; default the offline, ontology-driven one.
        router: a ``QuestionRouter``; default the offline one.
        composer: an ``AnswerComposer`` (answer length,
            citation style); default ``AnswerComposer()``.
        chunk_size: characters per chunk (>= 100).
        chunk_overlap: characters shared by consecutive chunks of a page.
        top_k: passages returned by the vector chain (1..100).
        timeout: seconds for one question (> 1, finite): routing, both chains and the
            answer, model calls included (the slower chain is cut, never both);
            ``ask(..., timeout=...)`` sets it for one question.
        max_llm_calls: model calls one question may make (1..20). The default, 2, is
            one to read the question or write its query and one to write the answer; a
            fast model may be given more, so a failed generated query gets its repair.
        max_threads: the most blocking store calls this instance runs at once, across
            every concurrent ask, ingest and forget.
        processes: parse and extract in spawned worker processes during ``ingest_many``
            (batches of 4+ documents) so the CPU-bound part of ingest uses every core; the
            ontology must be given by name or path. ``None`` (default): on when that is
            safe (notebooks, REPLs, scripts under ``if __name__ == "__main__":``).
        max_bytes: the largest document ingest reads (default 50 MiB,
            ``hybrid_rag.ingest.inputs.DEFAULT_MAX_BYTES``); a larger one raises
            ``DocumentTooLargeError`` before it is read.
        ocr: how scanned PDF pages and image files are read: ``True`` (default) reads
            them by OCR when an engine is installed (``pip install "hybrid-rag[ocr]"``),
            ``False`` never runs OCR, or an ``OcrOptions`` (engine, threshold, dpi).

    The embedded stores under ``path`` are shared by every ``HybridRAG`` of this process
    on that path (re-creating ``HybridRAG(path)`` in a notebook just works); another
    process gets ``StoreLockedError`` naming the holder. Before the first flow they are
    checked: a missing, empty, damaged or older catalog (or graph, or vector store) is a
    ``DamagedStoreError`` naming the file and the repair (``hybrid-rag repair``), and a
    write a crash left half-done is undone from its journal record. Nothing else is ever
    deleted by recovery.

    Raises:
        InputError: an option of the wrong type or out of range.
        ConfigurationError: an unknown embedder name, or an object that is no ``Embedder``.
        ImportError: a local embedder (``"local"``, ``"minilm"``) without its extra.

    Example:
        >>> from hybrid_rag import HybridRAG
        >>> with HybridRAG() as rag:                            # in memory
        ...     rag.ingest("sds/acetone.pdf")                   # doctest: +SKIP
        ...     rag.ask("What is the flash point of acetone?").text  # doctest: +SKIP
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        ontology: str | os.PathLike[str] | Ontology = "msds",
        embedder: str | Embedder = "auto",
        graph: GraphStore | None = None,
        vectors: VectorStore | None = None,
        catalog: Catalog | None = None,
        llm: LLMProvider | None = None,
        extractor: Extractor | None = None,
        router: QuestionRouter | None = None,
        composer: AnswerComposer | None = None,
        chunk_size: int = 800,
        chunk_overlap: int = 120,
        top_k: int = 6,
        timeout: float = 30.0,
        max_threads: int = 4,
        processes: bool | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        ocr: bool | OcrOptions = True,
        max_llm_calls: int = DEFAULT_MAX_CALLS,
    ) -> None:
        _check_options(path, chunk_size, chunk_overlap, top_k, timeout, max_threads)
        check_int(max_llm_calls, name="max_llm_calls", low=1, high=20)
        from hybrid_rag.providers import check_embedder

        check_embedder(embedder)  # a wrong name fails here, not at the first ingest
        self._max_bytes = check_max_bytes(max_bytes)
        self._ocr = _ocr_options(ocr)
        self._max_llm_calls = max_llm_calls
        self._path = None if path is None else Path(path)
        self._ontology_spec = ontology
        self._embedder_spec = embedder
        self._graph, self._vectors, self._catalog = graph, vectors, catalog
        self._llm = llm
        self._extractor = extractor
        self._router = router
        self._composer = composer
        self._chunk_size, self._chunk_overlap = chunk_size, chunk_overlap
        self._top_k, self._timeout = top_k, float(timeout)
        self._processes = processes
        self._workers = Workers(max_threads)
        self._init_lock = threading.Lock()
        self._ontology: Ontology | None = None
        self._embedder: Embedder | None = None
        self._subjects: SubjectIndexCache | None = None
        self._doc_locks: DocLocks | None = None
        self._closed = False
        self._stores: StoreSet | None = None  # the embedded stores under path (all three)
        self._journal: Journal | None = None  # for stores given or not all embedded
        self._chosen: str | None = None  # what from_env chose and why, for the repr

    @classmethod
    def from_env(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        env: dict[str, str] | None = None,
        dotenv_path: str | os.PathLike[str] | None = ".env",
        ontology: str | os.PathLike[str] | Ontology | None = None,
        top_k: int = 6,
        timeout: float = 30.0,
        max_threads: int = 4,
    ) -> HybridRAG:
        """HANA stores when HANA settings are present, else the embedded default.

        Settings come from ``env`` (default: ``os.environ``, then ``.env``, then a Cloud
        Foundry ``VCAP_SERVICES`` binding). What was chosen for the stores, the embedder
        and the LLM, and why, is in the ``repr`` and in one INFO log line (logger
        ``hybrid_rag``); embedded stores without a ``path`` (in memory, nothing kept) also
        log a WARNING. See ``hybrid_rag.config.resolve_components`` and ``docs/hana.md``.
        ``ontology`` defaults to ``HYBRID_RAG_ONTOLOGY`` (a bundled name such as
        ``invoice`` or a Turtle file), else the SDS ontology ``"msds"``.

        Raises:
            ConfigurationError: settings that are present but incomplete or invalid.
        """
        from hybrid_rag.config import resolve_components

        parts = resolve_components(env=env, dotenv_path=dotenv_path)
        in_memory = path is None and (parts.vectors is None or parts.catalog is None)
        where = "in memory, nothing is kept after exit" if in_memory else str(path or "none")
        if in_memory:
            log.warning(
                "HybridRAG.from_env(): embedded stores in memory (%s); nothing is kept after "
                "exit: pass a path, or set HANA_HOST/HANA_USER/HANA_PASSWORD for HANA",
                parts.choices[0].because if parts.choices else "no store settings",
            )
        rag = cls(
            path,
            ontology=ontology if ontology is not None else parts.ontology or "msds",
            embedder=parts.embedder,
            graph=parts.graph,
            vectors=parts.vectors,
            catalog=parts.catalog,
            llm=parts.llm,
            top_k=top_k,
            timeout=timeout,
            max_threads=max_threads,
        )
        rag._chosen = f"{parts.why}; path: {where}"
        return rag

    def __repr__(self) -> str:
        where = str(self._path) if self._path else "memory"
        llm = type(self._llm).__name__ if self._llm else None
        chosen = f", from_env={self._chosen!r}" if self._chosen else ""
        return f"HybridRAG(path={where!r}, llm={llm}{chosen})"

    # --- configuration (read-only; swap parts in tests with override()) ----------------------

    @property
    def path(self) -> Path | None:
        """The store directory, or ``None`` in memory."""
        return self._path

    @property
    def llm(self) -> LLMProvider | None:
        """The chat model, or ``None`` on the offline path."""
        return self._llm

    @property
    def top_k(self) -> int:
        """Passages returned by the vector chain."""
        return self._top_k

    @property
    def timeout(self) -> float:
        """Seconds one question may take."""
        return self._timeout

    @property
    def chunk_size(self) -> int:
        """Characters per chunk."""
        return self._chunk_size

    @property
    def chunk_overlap(self) -> int:
        """Characters shared by consecutive chunks of a page."""
        return self._chunk_overlap

    @property
    def max_bytes(self) -> int:
        """The largest document ingest reads, in bytes."""
        return self._max_bytes

    @property
    def max_threads(self) -> int:
        """The most blocking store calls this instance runs at once."""
        return self._workers.max_threads

    @property
    def ontology(self) -> Ontology:
        """The ontology (loaded on first use)."""
        if self._ontology is None:
            from hybrid_rag.ontology import load_ontology

            self._ontology = self._checked_ontology(load_ontology(self._ontology_spec))
        return self._ontology

    def _checked_ontology(self, ontology: Ontology) -> Ontology:
        """``ontology``, unless the store was built under another one (by namespace)."""
        recorded = read_ontology(self._path)
        if recorded is not None and recorded[0] != ontology.namespace:
            raise ConfigurationError(
                f"the store at {self._path} was built with the ontology {recorded[1]!r} "
                f"(namespace {recorded[0]}), not {ontology.namespace}: a graph built under "
                "one vocabulary cannot answer under another. Open it with that ontology, "
                "or ingest into a new store."
            )
        return ontology

    @property
    def embedder(self) -> Embedder:
        """The embedder (resolved on first use).

        A store under ``path`` remembers the embedder that built it (``store.json``):
        ``"auto"`` then means that embedder, and a different one raises
        ``ConfigurationError`` instead of silently ranking chunks
        with vectors of another model.
        """
        if self._embedder is None:
            from hybrid_rag.providers import resolve_embedder

            recorded = read_embedder(self._path)
            spec = self._embedder_spec
            if spec == "auto" and recorded is not None:
                spec = "local" if not recorded.startswith("hashing") else recorded
            self._embedder = self._checked_embedder(resolve_embedder(spec), recorded)
        return self._embedder

    def _checked_embedder(self, embedder: Embedder, recorded: str | None) -> Embedder:
        if recorded is not None and embedder.name != recorded:
            raise ConfigurationError(
                f"the store at {self._path} was built with the {recorded!r} embedder, "
                f"not {embedder.name!r}: open it with that embedder or use a new path"
            )
        return embedder

    @property
    def extractor(self) -> Extractor:
        """The extractor ingest uses (default: the offline, ontology-driven one)."""
        if self._extractor is None:
            from hybrid_rag.ingest.extractor import OfflineExtractor

            self._extractor = OfflineExtractor()
        return self._extractor

    @property
    def router(self) -> QuestionRouter:
        """The question router (default: ``OfflineRouter``)."""
        if self._router is None:
            from hybrid_rag.ask.route import OfflineRouter

            self._router = OfflineRouter()
        return self._router

    @property
    def composer(self) -> AnswerComposer:
        """The answer composer (default: ``AnswerComposer()``)."""
        if self._composer is None:
            from hybrid_rag.ask.compose import AnswerComposer

            self._composer = AnswerComposer()
        return self._composer

    @property
    def graph(self) -> GraphStore:
        """The graph store (created on first use)."""
        self._ensure_stores()
        if self._stores is not None:
            return self._stores.graph
        assert self._graph is not None
        return self._graph

    @property
    def vectors(self) -> VectorStore:
        """The vector store (created on first use)."""
        self._ensure_stores()
        if self._stores is not None:
            return self._stores.vectors
        assert self._vectors is not None
        return self._vectors

    @property
    def catalog(self) -> Catalog:
        """The document catalog (created on first use)."""
        self._ensure_stores()
        if self._stores is not None:
            return self._stores.catalog
        assert self._catalog is not None
        return self._catalog

    def _ensure_stores(self) -> None:
        if self._closed:
            raise HybridRAGError("this HybridRAG is closed")
        with self._init_lock:
            if self._stores is not None or self._journal is not None:
                return
            from hybrid_rag.ask.supervisor import SubjectIndexCache
            from hybrid_rag.ingest.pipeline import DocLocks
            from hybrid_rag.stores._journal import Journal

            given = (self._graph, self._vectors, self._catalog)
            if self._path is not None and given == (None, None, None):
                from hybrid_rag.stores._embedded import acquire

                self._stores = stores = acquire(self._path)
                self._subjects = stores.shared.setdefault("subjects", SubjectIndexCache())
                self._doc_locks = stores.shared.setdefault("locks", DocLocks())
                return
            self._make_defaults()
            self._subjects, self._doc_locks = SubjectIndexCache(), DocLocks()
            self._journal = Journal(None)

    def _make_defaults(self) -> None:
        """The embedded default for each store not given (not shared, not checked)."""
        if self._graph is None:
            from hybrid_rag.stores.oxigraph import OxigraphGraphStore

            self._graph = OxigraphGraphStore(self._sub("graph"))
        if self._vectors is None:
            from hybrid_rag.stores.local_vectors import LocalVectorStore

            self._vectors = LocalVectorStore(self._sub("vectors"))
        if self._catalog is None:
            from hybrid_rag.stores.catalog import SqliteCatalog

            self._catalog = SqliteCatalog(self._sub("catalog.sqlite"))

    def _sub(self, name: str) -> Path | None:
        return None if self._path is None else self._path / name

    @contextmanager
    def override(
        self,
        *,
        llm: LLMProvider | None = UNSET,
        embedder: Embedder = UNSET,
        router: QuestionRouter = UNSET,
        extractor: Extractor = UNSET,
        composer: AnswerComposer = UNSET,
    ) -> Iterator[HybridRAG]:
        """Swap parts for the duration of a ``with`` block (for tests); restored on exit.

        Only the parts given are swapped; ``llm=None`` switches the LLM off. Not meant
        for use while other tasks use this instance.

        Raises:
            ConfigurationError: an embedder other than the one the store was built with.

        Example:
            >>> from hybrid_rag.testing import FunctionLLM
            >>> with rag.override(llm=FunctionLLM(lambda m: "42 [1]")):  # doctest: +SKIP
            ...     rag.ask("What is the flash point of acetone?")
        """
        if embedder is not UNSET:
            self._checked_embedder(embedder, read_embedder(self._path))
        saved = (self._llm, self._embedder, self._router, self._extractor, self._composer)
        new = (llm, embedder, router, extractor, composer)
        slots = ("_llm", "_embedder", "_router", "_extractor", "_composer")
        for slot, value in zip(slots, new, strict=True):
            if value is not UNSET:
                setattr(self, slot, value)
        try:
            yield self
        finally:
            for slot, value in zip(slots, saved, strict=True):
                setattr(self, slot, value)

    # --- the flows ----------------------------------------------------------------------------

    def _ingest_parts(self) -> IngestParts:
        from hybrid_rag.ingest.pipeline import IngestParts

        embedder = self.embedder  # fails early on a store/embedder mismatch
        graph = self.graph
        assert self._subjects is not None and self._doc_locks is not None
        spec = self._ontology_spec
        return IngestParts(
            graph=graph,
            vectors=self.vectors,
            catalog=self.catalog,
            embedder=embedder,
            ontology=self.ontology,
            extractor=self.extractor,
            workers=self._workers,
            locks=self._doc_locks,
            chunk_size=self._chunk_size,
            chunk_overlap=self._chunk_overlap,
            ontology_spec=str(spec) if isinstance(spec, (str, os.PathLike)) else None,
            processes=self._processes,
            ocr=self._ocr,
            on_change=self._subjects.invalidate,
            on_first_write=lambda: self._record_build(embedder),
            journal=self._journal_of(),
            max_bytes=self._max_bytes,
        )

    def _record_build(self, embedder: Embedder) -> None:
        """Remember, on the store's first write, the embedder and ontology that built it."""
        record_embedder(self._path, name=embedder.name, dim=embedder.dim)
        spec = self._ontology_spec
        source = type(spec).__name__
        if isinstance(spec, (str, os.PathLike)):
            local = Path(spec)
            source = str(local.resolve()) if local.is_file() else str(spec)  # a bundled name
        record_ontology(self._path, namespace=self.ontology.namespace, source=source)

    def _journal_of(self) -> Journal:
        self._ensure_stores()
        journal = self._stores.journal if self._stores is not None else self._journal
        assert journal is not None
        return journal

    def _ask_parts(self, timeout: float | None = None) -> AskParts:
        from hybrid_rag.ask.supervisor import AskParts

        embedder = self.embedder
        graph = self.graph
        assert self._subjects is not None
        return AskParts(
            graph=graph,
            vectors=self.vectors,
            catalog=self.catalog,
            embedder=embedder,
            ontology=self.ontology,
            router=self.router,
            composer=self.composer,
            llm=self._llm,
            workers=self._workers,
            subjects=self._subjects,
            timeout=self._timeout if timeout is None else timeout,
            top_k=self._top_k,
            max_llm_calls=self._max_llm_calls,
        )

    # --- ingest -------------------------------------------------------------------------------

    def ingest(
        self,
        source: Source,
        *,
        doc_id: str | None = None,
        name: str | None = None,
        replace: bool = True,
    ) -> IngestReport:
        """Ingest one document: a file path, or ``bytes`` with a ``name``.

        Same id and same bytes: ``status="skipped"`` (nothing rewritten). Same id, new
        bytes: ``"replaced"`` (old chunks and triples removed). Otherwise ``"ingested"``.
        A replace is atomic for the reader: the old version stays in the catalog until
        the new one is complete, and any failure (a bad file, a full disk, a killed
        process) leaves the old version whole.

        Args:
            source: a path to a regular PDF, ``.txt`` or ``.md`` file (at most
                ``max_bytes``), or the file's bytes.
            doc_id: the document id (``[A-Za-z0-9_.-]{1,128}``); default: from the name.
            name: the file name, required with ``bytes`` (it gives the format and id).
            replace: ``False``: a document of that id with other content is left as it is
                and ``DocumentExistsError`` raised.

        Returns:
            The ``IngestReport``: status, counts, warnings, timings.

        Raises:
            InputError: a source that is not a path or bytes, a folder (use
                ``ingest_many``), bytes without a name, or a bad ``doc_id``.
            DocumentError: a file that cannot be read (missing, not a regular file,
                corrupt, encrypted, empty, unsupported); ``DocumentTooLargeError`` over
                ``max_bytes``; no store changes.
            DocumentExistsError: ``replace=False`` and the id holds other content.
            StoreError: a store failed (``DiskFullError``: no space left on device); the
                stores hold what they held before.

        Example:
            >>> report = rag.ingest("sds/acetone.pdf")        # doctest: +SKIP
            >>> report.status, report.pages, report.triples    # doctest: +SKIP
            ('ingested', 6, 212)
        """
        return run_sync(lambda: self.aingest(source, doc_id=doc_id, name=name, replace=replace))

    async def aingest(
        self,
        source: Source,
        *,
        doc_id: str | None = None,
        name: str | None = None,
        replace: bool = True,
    ) -> IngestReport:
        """Async twin of ``ingest`` (same arguments, result and errors)."""
        if isinstance(source, (str, os.PathLike)) and Path(source).is_dir():
            raise InputError(
                f"{source} is a folder: use ingest_many([folder]), which returns one "
                "report per file"
            )
        if not isinstance(replace, bool):
            raise InputError(f"replace must be a bool, not {type(replace).__name__}")
        await self._recover()
        pipeline = self._pipeline()
        return await pipeline.ingest(source, doc_id=doc_id, name=name, replace=replace)

    def ingest_many(
        self,
        sources: Iterable[Source | tuple[str, bytes]],
        *,
        concurrency: int = 4,
        progress: Callable[[IngestReport], None] | None = None,
        raise_errors: bool = False,
    ) -> list[IngestReport]:
        """Ingest files, folders (recursively) or ``(name, bytes)`` pairs concurrently.

        A document that fails is reported with ``status="failed"`` and its ``error``, and
        the others go on (unless ``raise_errors``). Ids come from the file names.

        Args:
            sources: paths of files or folders, ``bytes``, or ``(name, bytes)`` pairs.
            concurrency: documents in flight at once (1..64).
            progress: called once per document with its report, as each one finishes.
            raise_errors: raise the first document error instead of reporting it.

        Returns:
            One ``IngestReport`` per document, in input order.

        Raises:
            InputError: ``sources`` is not an iterable of those items, or two items map to
                the same doc id (with ``raise_errors``).

        Example:
            >>> reports = rag.ingest_many(["sds/"])                 # doctest: +SKIP
            >>> [r.status for r in reports]                          # doctest: +SKIP
            ['ingested', 'ingested', 'failed']
        """
        return run_sync(
            lambda: self.aingest_many(
                sources, concurrency=concurrency, progress=progress, raise_errors=raise_errors
            )
        )

    async def aingest_many(
        self,
        sources: Iterable[Source | tuple[str, bytes]],
        *,
        concurrency: int = 4,
        progress: Callable[[IngestReport], None] | None = None,
        raise_errors: bool = False,
    ) -> list[IngestReport]:
        """Async twin of ``ingest_many`` (same arguments, result and errors)."""
        if isinstance(concurrency, bool) or not isinstance(concurrency, int):
            raise InputError(f"concurrency must be an int, not {type(concurrency).__name__}")
        if not 1 <= concurrency <= 64:
            raise InputError(f"concurrency must be between 1 and 64, not {concurrency}")
        await self._recover()
        return await self._pipeline().ingest_many(
            sources, concurrency=concurrency, progress=progress, raise_errors=raise_errors
        )

    def forget(self, doc_id: str) -> None:
        """Remove a document from the catalog, the graph and the vectors.

        A document left without a catalog entry by a crash is removed from the stores too.

        Args:
            doc_id: the document's id.

        Raises:
            InvalidDocIdError: a malformed id.
            DocumentNotFoundError: no store holds anything of that id.

        Example:
            >>> rag.forget("acetone")                             # doctest: +SKIP
        """
        run_sync(lambda: self.aforget(doc_id))

    async def aforget(self, doc_id: str) -> None:
        """Async twin of ``forget`` (same arguments and errors)."""
        if not isinstance(doc_id, str):
            raise InputError(f"doc_id must be a string, not {type(doc_id).__name__}")
        await self._recover()
        await self._pipeline().forget(doc_id)

    async def _recover(self) -> None:
        """Before the first flow on the embedded stores: check them, undo unfinished writes.

        Once per store set (every ``HybridRAG`` of this process on the path shares it):
        the layout is checked before anything is opened, each store is opened (its OS
        lock held from then on), every write the journal records as unfinished is
        undone (or, for a forget, finished), and the catalog is checked against the
        stores. Stores that were given, or not all embedded, are not checked: another
        process may be writing there; asks never read an uncatalogued document.

        Raises:
            DamagedStoreError: a file is missing, damaged or disagrees with the others
                (the stores are closed again, so ``hybrid-rag repair`` can work).
            StoreLockedError: another process holds one of the stores.
        """
        self._ensure_stores()
        stores = self._stores
        if stores is None or stores.ready:
            return
        from hybrid_rag.ingest.pipeline import DocLocks

        gate = stores.shared.setdefault("gate", DocLocks())
        lock = await gate.hold("recovery")
        try:
            if not stores.ready:
                await self._check_and_recover(stores)
        finally:
            lock.release()

    async def _check_and_recover(self, stores: StoreSet) -> None:
        from hybrid_rag.ingest._writes import StoreWriter

        try:
            await self._workers.run(stores.check_layout)
            await self._workers.run(stores.open_all)
            writer = StoreWriter.of(
                stores,
                embedder=self.embedder,
                workers=self._workers,
                on_change=self._subjects.invalidate if self._subjects else lambda: None,
            )
            settled = await writer.recover()
            if settled:
                log.warning("undid %d unfinished write(s): %s", len(settled), settled)
            await self._workers.run(stores.check_consistency)
        except HybridRAGError as exc:
            if not isinstance(exc, StoreLockedError):
                await self._workers.run(stores.reset)  # let go of the files: repair may run
            raise
        stores.ready = True

    def _pipeline(self) -> IngestPipeline:
        from hybrid_rag.ingest.pipeline import IngestPipeline

        return IngestPipeline(self._ingest_parts())

    def documents(self) -> DocumentList:
        """Catalog entries of every ingested document, ordered by id (a ``list``).

        Raises:
            DamagedStoreError: the embedded stores are missing, damaged or disagree (a
                lost catalog never lists zero documents).

        Example:
            >>> [d.doc_id for d in rag.documents()]               # doctest: +SKIP
            ['acetone', 'ethanol']
        """
        return run_sync(self.adocuments)

    async def adocuments(self) -> DocumentList:
        """Async twin of ``documents``."""
        await self._recover()
        return DocumentList(await self._workers.run(self.catalog.list))

    # --- ask ----------------------------------------------------------------------------------

    def ask(
        self,
        question: str,
        *,
        docs: Iterable[str] | None = None,
        mode: AskMode = "hybrid",
        top_k: int | None = None,
        history: History | None = None,
        timeout: float | None = None,
    ) -> Answer:
        """Answer ``question`` from the documents in scope, citing page and quote.

        Both chains run at once within ``timeout``: the knowledge graph (template SPARQL,
        or LLM-written SPARQL that is validated read-only and repaired) and the passages
        (dense + BM25). Never writes to a store. A chain's failure is reported in
        ``Answer.errors`` and the other chain still answers.

        Args:
            question: the question (1..4000 characters).
            docs: the document ids the question may see (any iterable); ``None`` = all.
            mode: ``"hybrid"`` (both chains), ``"kg"`` or ``"vector"`` (one chain).
            top_k: passages to return (1..100); default: the instance's ``top_k``.
            history: earlier turns, as chat messages or ``(question, answer)`` pairs, for
                follow-up questions ("and its boiling point?").
            timeout: seconds for this question (> 1, finite), instead of the instance's
                ``timeout``. It covers everything: routing, both chains and the answer; a
                model call it cuts is reported in ``Answer.errors`` (``kind="timeout"``)
                and still counts in ``Answer.usage``.

        Returns:
            The ``Answer``: ``text`` with inline citations,
            ``facts`` and ``passages`` with their evidence, ``citations``, the SPARQL that
            ran, per-chain ``errors``, ``usage`` and ``timings``. When it abstains,
            ``abstention`` says why.

        Raises:
            InputError: an empty or too long question, a bad mode, ``top_k``, ``docs`` or
                ``timeout`` (not a number, NaN, infinite or <= 1).
            DocumentNotFoundError: an id in ``docs`` that is not ingested.

        Example:
            >>> answer = rag.ask("What is the flash point of acetone?")  # doctest: +SKIP
            >>> answer.text                                              # doctest: +SKIP
            'Acetone: Flash point -20 °C (Closed cup) [acetone p.4].'
            >>> answer.facts[0].evidence.quote                           # doctest: +SKIP
            'Flash point: -20 °C (Closed cup)'
        """
        return run_sync(
            lambda: self.aask(
                question, docs=docs, mode=mode, top_k=top_k, history=history, timeout=timeout
            )
        )

    async def aask(
        self,
        question: str,
        *,
        docs: Iterable[str] | None = None,
        mode: AskMode = "hybrid",
        top_k: int | None = None,
        history: History | None = None,
        timeout: float | None = None,
    ) -> Answer:
        """Async twin of ``ask`` (same arguments, result and errors)."""
        from hybrid_rag.ask.supervisor import Supervisor

        _check_unicode(question)
        seconds = check_timeout(timeout)
        await self._recover()
        supervisor = Supervisor(self._ask_parts(seconds))
        return await supervisor.answer(question, docs=docs, mode=mode, top_k=top_k, history=history)

    async def astream(
        self,
        question: str,
        *,
        docs: Iterable[str] | None = None,
        mode: AskMode = "hybrid",
        top_k: int | None = None,
        history: History | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[StreamDelta | Answer]:
        """Stream the answer: ``StreamDelta`` pieces of text, then the ``Answer``.

        Arguments and errors as ``ask``. With an LLM the deltas are the model's text
        as it is written (one synthesis call, started as soon as retrieval is done); on the
        extractive path the text arrives as one delta. The last item is always the
        complete ``Answer``, checked for grounding: when the streamed text cites a number
        no source states, the ``Answer`` carries the extractive text instead and an
        ``errors`` entry (``chain="synthesis"``, ``kind="ungrounded"``) says so.

        Example:
            >>> async for part in rag.astream("What is the total of X?"):  # doctest: +SKIP
            ...     print(part.delta if isinstance(part, StreamDelta) else part.citations)
        """
        from hybrid_rag.ask.supervisor import Supervisor

        _check_unicode(question)
        seconds = check_timeout(timeout)
        await self._recover()
        supervisor = Supervisor(self._ask_parts(seconds))
        parts = supervisor.stream(question, docs=docs, mode=mode, top_k=top_k, history=history)
        async for part in parts:
            yield StreamDelta(part) if isinstance(part, str) else part

    def stream(
        self,
        question: str,
        *,
        docs: Iterable[str] | None = None,
        mode: AskMode = "hybrid",
        top_k: int | None = None,
        history: History | None = None,
        timeout: float | None = None,
    ) -> Iterator[StreamDelta | Answer]:
        """Sync twin of ``astream``: ``StreamDelta`` pieces, then the ``Answer``.

        Example:
            >>> for part in rag.stream("What is the total of X?"):         # doctest: +SKIP
            ...     print(part.delta if isinstance(part, StreamDelta) else "")
        """

        yield from iterate_sync(
            lambda: self.astream(
                question, docs=docs, mode=mode, top_k=top_k, history=history, timeout=timeout
            )
        )

    # --- LangChain ----------------------------------------------------------------------------

    def as_retriever(
        self, *, mode: AskMode = "hybrid", docs: Iterable[str] | None = None, k: int = 4
    ) -> HybridRAGRetriever:
        """A LangChain retriever over the same hybrid retrieval as ``ask``.

        See ``hybrid_rag.integrations.langchain.as_retriever`` (extra ``[langchain]``).

        Example:
            >>> docs = rag.as_retriever(k=4).invoke("flash point of acetone")  # doctest: +SKIP
        """
        from hybrid_rag.integrations.langchain import as_retriever

        return as_retriever(self, mode=mode, docs=None if docs is None else list(docs), k=k)

    def as_tool(
        self,
        *,
        name: str = "search_documents",
        mode: AskMode = "hybrid",
        docs: Iterable[str] | None = None,
    ) -> BaseTool:
        """A LangChain tool an agent can call; its output is the answer with citations.

        See ``hybrid_rag.integrations.langchain.as_tool`` (extra ``[langchain]``).
        """
        from hybrid_rag.integrations.langchain import as_tool

        return as_tool(self, name=name, mode=mode, docs=None if docs is None else list(docs))

    # --- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close every store this instance opened or was given; idempotent.

        Embedded stores shared with another ``HybridRAG`` on the same path stay open
        until the last one closes.
        """
        if self._closed:
            return
        self._closed = True
        if self._stores is not None:
            from hybrid_rag.stores._embedded import release

            release(self._stores)
        for store in (self._graph, self._vectors, self._catalog):
            if store is not None:
                store.close()

    async def aclose(self) -> None:
        """Async twin of ``close``."""
        await anyio.to_thread.run_sync(self.close)

    async def __aenter__(self) -> HybridRAG:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _check_unicode(question: object) -> None:
    """A question with a lone surrogate (``"\\ud800"``) cannot be answered or stored."""
    from hybrid_rag.ingest.inputs import safe_text

    if isinstance(question, str) and safe_text(question) != question:
        raise InputError("question is not valid Unicode text (it holds a lone surrogate)")


def _ocr_options(ocr: object) -> OcrOptions:
    if isinstance(ocr, OcrOptions):
        return ocr
    if isinstance(ocr, bool):
        return OcrOptions(enabled=ocr)
    raise InputError(f"ocr must be True, False or an OcrOptions, not {type(ocr).__name__}")


def _check_options(
    path: object, chunk_size: int, chunk_overlap: int, top_k: int, timeout: float, threads: int
) -> None:
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise InputError(f"path must be a directory path or None, not {type(path).__name__}")
    ints = {"chunk_size": chunk_size, "chunk_overlap": chunk_overlap, "top_k": top_k}
    ints["max_threads"] = threads
    for name, value in ints.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise InputError(f"{name} must be an int, not {type(value).__name__}")
    if check_timeout(timeout) is None:
        raise InputError("timeout must be a number of seconds, not None")
    if chunk_size < 100 or not 0 <= chunk_overlap < chunk_size // 2:
        raise InputError("chunk_size must be >= 100 and 0 <= chunk_overlap < chunk_size/2")
    if not 1 <= top_k <= 100 or threads < 1:
        raise InputError("top_k must be 1..100 and max_threads >= 1")


def check_timeout(timeout: object) -> float | None:
    """``timeout`` as seconds (``None`` stays ``None``).

    Raises:
        InputError: not a number, NaN, infinite, or not above 1 s.
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise InputError(f"timeout must be a number of seconds, not {type(timeout).__name__}")
    if not math.isfinite(timeout) or timeout <= 1:
        raise InputError(f"timeout must be a finite number of seconds > 1, not {timeout}")
    return float(timeout)
