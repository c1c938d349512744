"""HybridRAG: the composition root. Async core; every sync method is a one-line twin."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import anyio

from hybrid_rag._sync import run_sync
from hybrid_rag.errors import (
    ConfigurationError,
    DocumentNotFoundError,
    HybridRAGError,
    StoreError,
)
from hybrid_rag.models import (
    Answer,
    ChainError,
    ChatMessage,
    DocumentInfo,
    DocumentList,
    Evidence,
    Fact,
    IngestReport,
    Passage,
    Usage,
)
from hybrid_rag.stores._closing import Closing

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

    from hybrid_rag.ask.analysis import QuestionAnalysis
    from hybrid_rag.ask.kg import KGResult
    from hybrid_rag.ask.linking import ProductIndex
    from hybrid_rag.ask.vector import VectorResult
    from hybrid_rag.ingest.pipeline import Prepared
    from hybrid_rag.integrations.langchain import HybridRAGRetriever
    from hybrid_rag.protocols import (
        Catalog,
        Embedder,
        GraphStore,
        LLMProvider,
        Ontology,
        VectorStore,
    )

__all__ = ["HybridRAG"]

log = logging.getLogger("hybrid_rag")
_STORE_META = "store.json"

Source = str | os.PathLike[str] | bytes
Mode = Literal["hybrid", "kg", "vector"]
History = Sequence[ChatMessage | tuple[str, str]]


class HybridRAG(Closing):
    """Ingest documents into a knowledge graph and a vector index; answer with citations.

    Args:
        path: directory for persistent stores; ``None`` keeps everything in memory.
        ontology: ``"msds"`` (bundled), a Turtle file path, or an :class:`Ontology`.
        embedder: ``"auto"`` (a local sentence-transformers model when installed, else the
            offline hashing embedder), ``"hashing"``, ``"local"``, or an :class:`Embedder`.
        graph: a :class:`GraphStore`; default embedded Oxigraph under ``path``.
        vectors: a :class:`VectorStore`; default embedded store under ``path``.
        catalog: a :class:`Catalog`; default SQLite under ``path``.
        llm: an :class:`LLMProvider`; ``None`` runs the offline, extractive path.
        chunk_size: characters per chunk.
        chunk_overlap: characters shared by consecutive chunks of a page.
        top_k: passages returned by the vector chain.
        timeout: seconds for one question (the slower chain is cut, never both).
        max_threads: worker threads for blocking store and CPU work.
        processes: parse and extract in spawned worker processes during
            ``ingest_many`` (batches of 4+ documents) so the CPU-bound part of ingest
            uses every core; the ontology must be given by name or path. ``None``
            (default): on when that is safe, i.e. in notebooks and REPLs, and in scripts
            when called under ``if __name__ == "__main__":`` (an unguarded script would be
            re-run by each spawned worker, so it gets threads).

    Example:
        >>> rag = HybridRAG()                                   # doctest: +SKIP
        >>> rag.ingest("sds/acetone.pdf")                       # doctest: +SKIP
        >>> rag.ask("What is the flash point of acetone?").text  # doctest: +SKIP
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
        chunk_size: int = 800,
        chunk_overlap: int = 120,
        top_k: int = 6,
        timeout: float = 30.0,
        max_threads: int = 4,
        processes: bool | None = None,
    ) -> None:
        if chunk_size < 100 or not 0 <= chunk_overlap < chunk_size // 2:
            raise ConfigurationError("chunk_size must be >= 100 and 0 <= chunk_overlap < size/2")
        if top_k < 1 or timeout <= 1 or max_threads < 1:
            raise ConfigurationError("top_k and max_threads must be >= 1, timeout > 1 s")
        self._path = None if path is None else Path(path)
        self._ontology_spec = ontology
        self._embedder_spec = embedder
        self._graph, self._vectors, self._catalog = graph, vectors, catalog
        self.llm = llm
        self.chunk_size, self.chunk_overlap, self.top_k = chunk_size, chunk_overlap, top_k
        self.timeout = timeout
        self._max_threads = max_threads
        self._processes = processes
        self._init_lock = threading.Lock()
        self._index_lock = threading.Lock()
        self._index: ProductIndex | None = None
        self._ontology: Ontology | None = None
        self._embedder: Embedder | None = None
        self._closed = False

    @classmethod
    def from_env(
        cls,
        path: str | os.PathLike[str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        dotenv_path: str | os.PathLike[str] | None = ".env",
        ontology: str | os.PathLike[str] | Ontology = "msds",
        top_k: int = 6,
        timeout: float = 30.0,
        max_threads: int = 4,
    ) -> HybridRAG:
        """HANA stores when HANA settings are present, else the embedded default.

        Settings come from ``env`` (default: ``os.environ``, then ``.env``, then a Cloud
        Foundry ``VCAP_SERVICES`` binding); one log line says what was chosen. See
        :func:`hybrid_rag.config.resolve_components` and ``docs/hana.md``.
        """
        from hybrid_rag.config import resolve_components

        parts = resolve_components(env=env, dotenv_path=dotenv_path)
        return cls(
            path,
            ontology=ontology,
            embedder=parts.embedder,
            graph=parts.graph,
            vectors=parts.vectors,
            catalog=parts.catalog,
            llm=parts.llm,
            top_k=top_k,
            timeout=timeout,
            max_threads=max_threads,
        )

    def __repr__(self) -> str:
        where = str(self._path) if self._path else "memory"
        return f"HybridRAG(path={where!r}, llm={type(self.llm).__name__ if self.llm else None})"

    # --- lazily built parts -------------------------------------------------------------------

    @property
    def ontology(self) -> Ontology:
        """The ontology (loaded on first use)."""
        if self._ontology is None:
            from hybrid_rag.ontology import load_ontology

            self._ontology = load_ontology(self._ontology_spec)
        return self._ontology

    @property
    def embedder(self) -> Embedder:
        """The embedder (resolved on first use).

        A store under ``path`` remembers the embedder that built it (``store.json``):
        ``"auto"`` then means that embedder, and a different one raises
        :class:`~hybrid_rag.errors.ConfigurationError` instead of silently ranking
        chunks with vectors of another model.
        """
        return self._resolve_embedder()

    def _resolve_embedder(self) -> Embedder:
        if self._embedder is None:
            from hybrid_rag.providers import resolve_embedder

            recorded = self._recorded_embedder()
            spec = self._embedder_spec
            if spec == "auto" and recorded is not None:
                spec = "local" if not recorded.startswith("hashing") else recorded
            embedder = resolve_embedder(spec)
            if recorded is not None and embedder.name != recorded:
                raise ConfigurationError(
                    f"the store at {self._path} was built with the {recorded!r} embedder, "
                    f"not {embedder.name!r}: open it with that embedder or use a new path"
                )
            self._embedder = embedder
        return self._embedder

    def _recorded_embedder(self) -> str | None:
        meta = None if self._path is None else self._path / _STORE_META
        if meta is None or not meta.is_file():
            return None
        value = json.loads(meta.read_text(encoding="utf-8")).get("embedder")
        return value if isinstance(value, str) else None

    def _record_embedder(self) -> None:
        if self._path is not None and self._recorded_embedder() is None:
            self._path.mkdir(parents=True, exist_ok=True)
            meta = {"embedder": self.embedder.name, "dim": self.embedder.dim}
            (self._path / _STORE_META).write_text(json.dumps(meta), encoding="utf-8")

    @property
    def graph(self) -> GraphStore:
        """The graph store (created on first use)."""
        self._ensure_stores()
        assert self._graph is not None
        return self._graph

    @property
    def vectors(self) -> VectorStore:
        """The vector store (created on first use)."""
        self._ensure_stores()
        assert self._vectors is not None
        return self._vectors

    @property
    def catalog(self) -> Catalog:
        """The document catalog (created on first use)."""
        self._ensure_stores()
        assert self._catalog is not None
        return self._catalog

    def _ensure_stores(self) -> None:
        if self._closed:
            raise HybridRAGError("this HybridRAG is closed")
        with self._init_lock:
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

    def _limiter(self) -> anyio.CapacityLimiter:
        return anyio.CapacityLimiter(self._max_threads)

    # --- ingest -------------------------------------------------------------------------------

    async def aingest(
        self, source: Source, *, doc_id: str | None = None, name: str | None = None
    ) -> IngestReport | list[IngestReport]:
        """Ingest one file or ``bytes`` (with ``name``); a directory ingests every file in it.

        A directory returns one report per document (raising on the first bad one; use
        :meth:`aingest_many` to go on past failures). Same id and same bytes: ``skipped``
        (nothing rewritten). Same id, new bytes:
        ``replaced``. Bad input raises a :class:`~hybrid_rag.errors.DocumentError` before
        any store changes; a store failure leaves the document absent.
        """
        if not isinstance(source, bytes) and Path(source).is_dir():
            if doc_id is not None:
                raise ConfigurationError("doc_id cannot be given for a directory")
            return await self.aingest_many([source], concurrency=2, raise_errors=True)
        return await self._ingest_one(source, doc_id=doc_id, name=name, limiter=self._limiter())

    def ingest(
        self, source: Source, *, doc_id: str | None = None, name: str | None = None
    ) -> IngestReport | list[IngestReport]:
        """Sync twin of :meth:`aingest`."""
        return run_sync(lambda: self.aingest(source, doc_id=doc_id, name=name))

    async def aingest_many(
        self,
        sources: Iterable[Source | tuple[str, bytes]],
        *,
        concurrency: int = 4,
        progress: Callable[[IngestReport], None] | None = None,
        raise_errors: bool = False,
    ) -> list[IngestReport]:
        """Ingest many files, folders (recursive) or ``(name, bytes)`` pairs concurrently.

        A document that fails is reported with ``status="failed"`` and its ``error``
        (unless ``raise_errors``); the others go on. ``progress`` is called once per document.
        """
        from hybrid_rag.ingest.load import doc_id_from_name, iter_files

        items: list[tuple[Source, str | None]] = []
        for src in sources:
            if isinstance(src, tuple):
                items.append((src[1], src[0]))
            elif not isinstance(src, bytes) and Path(src).is_dir():
                items += [(f, None) for f in iter_files(Path(src))]
            else:
                items.append((src, None))
        limiter = self._limiter()
        pool = self._process_pool(len(items), concurrency)
        results: list[IngestReport | None] = [None] * len(items)
        seen: dict[str, int] = {}
        sem = anyio.Semaphore(max(1, concurrency))

        async def one(i: int, src: Source, name: str | None) -> None:
            label = name or (str(src) if not isinstance(src, bytes) else "<bytes>")
            async with sem:
                try:
                    did = (
                        doc_id_from_name(name or Path(str(src)).name)
                        if not isinstance(src, bytes)
                        else doc_id_from_name(name or "document")
                    )
                    if did in seen:
                        raise ConfigurationError(
                            f"doc id {did!r} of {label} is already used by item {seen[did]}"
                        )
                    seen[did] = i
                    rep = await self._ingest_one(
                        src, doc_id=did, name=name, limiter=limiter, pool=pool
                    )
                except HybridRAGError as exc:
                    if raise_errors:
                        raise
                    rep = _failed(label, exc)
            results[i] = rep
            if progress is not None:
                progress(rep)

        try:
            async with anyio.create_task_group() as tg:
                for i, (src, name) in enumerate(items):
                    tg.start_soon(one, i, src, name)
        finally:
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        return [r for r in results if r is not None]

    def ingest_many(
        self,
        sources: Iterable[Source | tuple[str, bytes]],
        *,
        concurrency: int = 4,
        progress: Callable[[IngestReport], None] | None = None,
        raise_errors: bool = False,
    ) -> list[IngestReport]:
        """Sync twin of :meth:`aingest_many`."""
        return run_sync(
            lambda: self.aingest_many(
                sources, concurrency=concurrency, progress=progress, raise_errors=raise_errors
            )
        )

    async def _ingest_one(
        self,
        source: Source,
        *,
        doc_id: str | None,
        name: str | None,
        limiter: anyio.CapacityLimiter,
        pool: ProcessPoolExecutor | None = None,
    ) -> IngestReport:
        from hybrid_rag.ingest.load import (
            content_hash,
            doc_id_from_name,
            read_source,
            validate_doc_id,
        )

        t0 = time.perf_counter()
        if doc_id is not None:
            validate_doc_id(doc_id)
        self._resolve_embedder()  # fail early (store mismatch) rather than inside a task
        data, fname, label = await anyio.to_thread.run_sync(
            lambda: read_source(source, name=name), limiter=limiter
        )
        did = validate_doc_id(doc_id or doc_id_from_name(fname))
        digest = content_hash(data)
        old = await anyio.to_thread.run_sync(lambda: self.catalog.get(did), limiter=limiter)
        if old is not None and old.content_hash == digest:
            return IngestReport(
                doc_id=did,
                source=label,
                status="skipped",
                content_hash=digest,
                pages=old.pages,
                chunks=old.chunks,
                triples=old.triples,
                timings={"total_ms": _ms(t0)},
            )
        prep = await self._prepare(data, fname, label, did, pool=pool, limiter=limiter)
        usage = await self._write(prep, replacing=old is not None, limiter=limiter)
        now = datetime.now(UTC)
        info = DocumentInfo(
            doc_id=did,
            source=label,
            content_hash=digest,
            pages=len(prep.document.pages),
            chunks=len(prep.chunks),
            triples=len(prep.triples),
            title=prep.extraction.product,
            aliases=list(prep.extraction.aliases),
            created_at=old.created_at if old else now,
            updated_at=now,
        )
        await anyio.to_thread.run_sync(lambda: self.catalog.put(info), limiter=limiter)
        self._record_embedder()
        self._index = None
        timings = {**prep.timings, "total_ms": _ms(t0)}
        log.info("ingested", extra={"doc_id": did, "chunks": info.chunks, "triples": info.triples})
        return IngestReport(
            doc_id=did,
            source=label,
            status="replaced" if old else "ingested",
            content_hash=digest,
            pages=info.pages,
            chunks=info.chunks,
            triples=info.triples,
            facts=len(prep.extraction.facts),
            warnings=list(prep.extraction.warnings),
            timings=timings,
            usage=usage,
        )

    def _process_pool(self, n_items: int, concurrency: int) -> ProcessPoolExecutor | None:
        """Worker processes for a batch (spawned: safe with the threads stores run)."""
        from hybrid_rag._spawn import spawn_is_safe

        workers = min(os.cpu_count() or 1, max(1, concurrency), n_items)
        if workers < 2 or self._ontology_name() is None or self._processes is False:
            return None
        if self._processes is None and (n_items < 4 or not spawn_is_safe()):
            return None
        return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))

    def _ontology_name(self) -> str | None:
        spec = self._ontology_spec
        return str(spec) if isinstance(spec, (str, os.PathLike)) else None

    async def _prepare(
        self,
        data: bytes,
        name: str,
        label: str,
        doc_id: str,
        *,
        pool: ProcessPoolExecutor | None,
        limiter: anyio.CapacityLimiter,
    ) -> Prepared:
        """Parse, chunk and extract: in a worker process (all cores) or a worker thread."""
        from hybrid_rag.ingest.pipeline import prepare, prepare_in_worker

        spec = self._ontology_name()
        if pool is not None and spec is not None:
            args = (data, name, label, doc_id, spec, self.chunk_size, self.chunk_overlap)
            future = pool.submit(prepare_in_worker, *args)
            return await anyio.to_thread.run_sync(future.result, limiter=limiter)
        ontology = self.ontology
        return await anyio.to_thread.run_sync(
            lambda: prepare(
                data,
                name=name,
                source=label,
                doc_id=doc_id,
                ontology=ontology,
                chunk_size=self.chunk_size,
                chunk_overlap=self.chunk_overlap,
            ),
            limiter=limiter,
        )

    async def _write(
        self, prep: Prepared, *, replacing: bool, limiter: anyio.CapacityLimiter
    ) -> Usage:
        """Graph and vectors concurrently; the catalog entry is dropped first, written last."""
        did = prep.doc_id
        usage = Usage(embedding_calls=1, embedded_texts=len(prep.chunks))
        if replacing:
            await anyio.to_thread.run_sync(lambda: self.catalog.delete(did), limiter=limiter)
            self._index = None

        async def graph_part() -> None:
            t = time.perf_counter()
            await anyio.to_thread.run_sync(
                lambda: self.graph.replace(did, prep.triples), limiter=limiter
            )
            prep.timings["graph_ms"] = _ms(t)

        async def vector_part() -> None:
            t = time.perf_counter()
            vecs = await self.embedder.embed_documents([c.text for c in prep.chunks])
            prep.timings["embed_ms"] = _ms(t)
            t = time.perf_counter()
            await anyio.to_thread.run_sync(
                lambda: self.vectors.replace(did, prep.chunks, vecs), limiter=limiter
            )
            prep.timings["vectors_ms"] = _ms(t)

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(graph_part)
                tg.start_soon(vector_part)
        except BaseException as exc:
            await self._rollback(did, limiter)
            inner = _unwrap(exc)
            if isinstance(inner, HybridRAGError):
                raise inner from exc
            raise StoreError(f"writing {did!r} failed: {inner}") from exc
        return usage

    async def _rollback(self, did: str, limiter: anyio.CapacityLimiter) -> None:
        with anyio.CancelScope(shield=True):
            for fn in (self.graph.delete, self.vectors.delete):
                try:
                    await anyio.to_thread.run_sync(lambda f=fn: f(did), limiter=limiter)  # type: ignore[misc]
                except Exception:
                    log.exception("rollback of %s failed", did)

    # --- catalog ------------------------------------------------------------------------------

    async def aforget(self, doc_id: str) -> None:
        """Remove a document from the catalog, the graph and the vectors."""
        from hybrid_rag.ingest.load import validate_doc_id

        validate_doc_id(doc_id)
        limiter = self._limiter()
        if await anyio.to_thread.run_sync(lambda: self.catalog.get(doc_id)) is None:
            raise DocumentNotFoundError(f"unknown document id {doc_id!r}")
        await anyio.to_thread.run_sync(lambda: self.catalog.delete(doc_id), limiter=limiter)
        self._index = None
        await anyio.to_thread.run_sync(lambda: self.graph.delete(doc_id), limiter=limiter)
        await anyio.to_thread.run_sync(lambda: self.vectors.delete(doc_id), limiter=limiter)

    def forget(self, doc_id: str) -> None:
        """Sync twin of :meth:`aforget`."""
        run_sync(lambda: self.aforget(doc_id))

    def documents(self) -> DocumentList:
        """Catalog entries of every ingested document, ordered by id (a ``list``)."""
        return DocumentList(self.catalog.list())

    # --- ask ----------------------------------------------------------------------------------

    async def aask(
        self,
        question: str,
        *,
        docs: Sequence[str] | None = None,
        mode: Mode = "hybrid",
        top_k: int | None = None,
        history: History | None = None,
    ) -> Answer:
        """Answer ``question`` from the documents in scope (all, or ``docs``).

        Never writes to a store. Failures of one chain are reported in ``Answer.errors``;
        when neither chain finds support, ``Answer.text`` is ``None``.
        """
        from hybrid_rag.ask.analysis import analyse

        t0 = time.perf_counter()
        question = _check_question(question, mode)
        self._resolve_embedder()  # fail early (store mismatch) rather than inside a task
        scope, scoped = await self._scope(docs)
        index = self._product_index(scope)
        analysis = analyse(question, index=index, ontology=self.ontology)
        if not analysis.products and history:
            analysis = _with_history(analysis, history, index=index, ontology=self.ontology)
        t_an = time.perf_counter()
        kg, vec, chain_ms = await self._chains(
            analysis, mode=mode, scope=scope, scoped=scoped, top_k=top_k or self.top_k
        )
        t_ch = time.perf_counter()
        answer = await self._merge(
            analysis,
            kg,
            vec,
            mode=mode,
            scope=list(docs) if docs is not None else None,
            deadline=t0 + self.timeout,
        )
        timings = {
            "analyse_ms": _ms2(t0, t_an),
            "retrieve_ms": _ms2(t_an, t_ch),
            **chain_ms,
            "answer_ms": _ms(t_ch),
            "total_ms": _ms(t0),
        }
        log.info(
            "ask",
            extra={
                "correlation_id": uuid.uuid4().hex[:12],
                "sources": answer.sources,
                "errors": [f"{e.chain}:{e.kind}" for e in answer.errors],
                **timings,
            },
        )
        return answer.model_copy(update={"timings": {**answer.timings, **timings}})

    def ask(
        self,
        question: str,
        *,
        docs: Sequence[str] | None = None,
        mode: Mode = "hybrid",
        top_k: int | None = None,
        history: History | None = None,
    ) -> Answer:
        """Sync twin of :meth:`aask`."""
        return run_sync(
            lambda: self.aask(question, docs=docs, mode=mode, top_k=top_k, history=history)
        )

    async def _scope(self, docs: Sequence[str] | None) -> tuple[list[str], bool]:
        from hybrid_rag.ingest.load import validate_doc_id

        known = [d.doc_id for d in await anyio.to_thread.run_sync(self.catalog.list)]
        if docs is None:
            return known, False
        if isinstance(docs, str):
            raise ConfigurationError("docs must be a list of document ids, not a string")
        have = set(known)
        for d in docs:
            validate_doc_id(d)
            if d not in have:
                raise DocumentNotFoundError(f"unknown document id {d!r} in docs=")
        return list(dict.fromkeys(docs)), True

    def _product_index(self, scope: Sequence[str]) -> ProductIndex:
        from hybrid_rag.ask.linking import ProductIndex

        with self._index_lock:
            if self._index is None:
                entries = [(d.doc_id, [d.title or "", *d.aliases]) for d in self.catalog.list()]
                self._index = ProductIndex(entries)
            index = self._index
        return index.restricted(scope)

    async def _chains(
        self, a: QuestionAnalysis, *, mode: Mode, scope: list[str], scoped: bool, top_k: int
    ) -> tuple[KGResult | None, VectorResult | None, dict[str, float]]:
        """Both chains in parallel, each cut at ``timeout - 1`` s; per-chain timings."""
        from hybrid_rag.ask.kg import KGResult, run_kg_chain
        from hybrid_rag.ask.vector import VectorResult, run_vector_chain

        limiter = self._limiter()
        vscope: list[str] | None = scope if scoped else None
        query = a.question
        if mode == "hybrid" and a.products:  # search inside the named products' sheets
            vscope, query = [d for d in a.doc_ids if d in scope], a.topic
        out: dict[str, Any] = {}
        timings: dict[str, float] = {}

        async def bounded(name: Literal["kg", "vector"], run: Callable[[], Any]) -> None:
            t = time.perf_counter()
            with anyio.move_on_after(self.timeout - 1) as cs:
                out[name] = await run()
            if cs.cancelled_caught:
                err = ChainError(chain=name, kind="timeout", message=f"over {self.timeout - 1} s")
                out[name] = (KGResult if name == "kg" else VectorResult)(errors=[err])
            timings[f"{name}_ms"] = _ms(t)

        async with anyio.create_task_group() as tg:
            if mode in ("hybrid", "kg"):
                tg.start_soon(
                    bounded,
                    "kg",
                    lambda: run_kg_chain(
                        a,
                        graph=self.graph,
                        ontology=self.ontology,
                        scope=scope,
                        llm=self.llm,
                        limiter=limiter,
                    ),
                )
            if mode in ("hybrid", "vector"):
                tg.start_soon(
                    bounded,
                    "vector",
                    lambda: run_vector_chain(
                        query,
                        embedder=self.embedder,
                        vectors=self.vectors,
                        scope=vscope,
                        top_k=top_k,
                        limiter=limiter,
                    ),
                )
        return out.get("kg"), out.get("vector"), timings

    async def _merge(
        self,
        a: QuestionAnalysis,
        kg: KGResult | None,
        vec: VectorResult | None,
        *,
        mode: Mode,
        scope: list[str] | None,
        deadline: float,
    ) -> Answer:
        """The supervisor: both chains -> one answer; one -> that one; none -> ``text=None``."""
        from hybrid_rag.ask.answer import compose_extractive

        facts = kg.facts if kg else []
        passages = vec.passages if vec else []
        errors = [*(kg.errors if kg else []), *(vec.errors if vec else [])]
        usage = (kg.usage if kg else Usage()) + (vec.usage if vec else Usage())
        composed = compose_extractive(a, facts, passages)
        text, citations = composed.text, list(composed.citations)
        sources: list[Literal["kg", "vector"]] = []
        if composed.used_facts or (facts and text):
            sources.append("kg")
        if composed.used_passages:
            sources.append("vector")
        generation: Literal["extractive", "llm"] = "extractive"
        if self.llm is not None and (facts or passages):
            synth = await self._synthesise(a, facts, passages, text, deadline=deadline)
            if isinstance(synth, ChainError):
                errors.append(synth)
            else:
                (text, citations, used), generation = synth, "llm"
                usage = usage + used
                sources = [s for s, got in (("kg", facts), ("vector", passages)) if got]  # type: ignore[misc]
        return Answer(
            question=a.question,
            text=text if facts or passages else None,
            mode=mode,
            generation=generation,
            sources=sources if facts or passages else [],
            facts=facts,
            passages=passages,
            sparql=kg.attempts if kg else [],
            errors=errors,
            usage=usage,
            scope=scope,
            citations=citations,
        )

    async def _synthesise(
        self,
        a: QuestionAnalysis,
        facts: Sequence[Fact],
        passages: Sequence[Passage],
        draft: str | None,
        *,
        deadline: float,
    ) -> tuple[str, list[Evidence], Usage] | ChainError:
        """One grounded LLM call over numbered sources, within what is left of the budget."""
        from hybrid_rag.ask.answer import synthesis_messages

        assert self.llm is not None
        messages, evidence = synthesis_messages(a.question, facts, passages, draft=draft)
        done = None
        with anyio.move_on_after(max(1.0, deadline - time.perf_counter())):
            try:
                done = await self.llm.complete(messages)
            except HybridRAGError as exc:
                return ChainError(chain="synthesis", kind="llm", message=str(exc))
        if done is None:
            return ChainError(chain="synthesis", kind="timeout", message="time budget spent")
        cited = sorted({int(n) for n in re.findall(r"\[(\d+)\]", done.text)})
        used = Usage(
            llm_calls=1, prompt_tokens=done.prompt_tokens, completion_tokens=done.completion_tokens
        )
        return done.text.strip(), [evidence[n - 1] for n in cited if 0 < n <= len(evidence)], used

    # --- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Close every store this instance opened or was given; idempotent."""
        if self._closed:
            return
        for store in (self._graph, self._vectors, self._catalog):
            if store is not None:
                store.close()
        self._closed = True

    async def aclose(self) -> None:
        """Async twin of :meth:`close`."""
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

    def as_retriever(
        self, *, mode: Mode = "hybrid", docs: Sequence[str] | None = None, k: int = 4
    ) -> HybridRAGRetriever:
        """A LangChain retriever; see :func:`hybrid_rag.integrations.langchain.as_retriever`."""
        from hybrid_rag.integrations.langchain import as_retriever

        return as_retriever(self, mode=mode, docs=docs, k=k)

    def as_tool(
        self,
        *,
        name: str = "search_documents",
        mode: Mode = "hybrid",
        docs: Sequence[str] | None = None,
    ) -> BaseTool:
        """A LangChain agent tool; see :func:`hybrid_rag.integrations.langchain.as_tool`."""
        from hybrid_rag.integrations.langchain import as_tool

        return as_tool(self, name=name, mode=mode, docs=docs)


def _check_question(question: str, mode: str) -> str:
    if not isinstance(question, str) or not question.strip():
        raise ConfigurationError("question must be a non-empty string")
    if len(question) > 4000:
        raise ConfigurationError("question is longer than 4000 characters")
    if mode not in ("hybrid", "kg", "vector"):
        raise ConfigurationError(f"mode must be 'hybrid', 'kg' or 'vector', not {mode!r}")
    return question.strip()


def _with_history(
    a: QuestionAnalysis, history: History, *, index: ProductIndex, ontology: Ontology
) -> QuestionAnalysis:
    """Follow-up questions ("and its boiling point?") inherit the products of earlier turns."""
    from hybrid_rag.ask.analysis import analyse

    turns = [
        m.content if isinstance(m, ChatMessage) else m[0]
        for m in history
        if not isinstance(m, ChatMessage) or m.role == "user"
    ]
    for turn in reversed(turns):
        prev = analyse(turn, index=index, ontology=ontology)
        if prev.products:
            return analyse(
                f"{a.question} ({'; '.join(p.label for p in prev.products)})",
                index=index,
                ontology=ontology,
            )
    return a


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _failed(label: str, exc: HybridRAGError) -> IngestReport:
    return IngestReport(
        doc_id="",
        source=label,
        status="failed",
        content_hash="",
        error=f"{type(exc).__name__}: {exc}",
    )


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 2)


def _ms2(t0: float, t1: float) -> float:
    return round((t1 - t0) * 1000, 2)
