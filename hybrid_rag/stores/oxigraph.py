"""Embedded graph store on pyoxigraph (RocksDB on disk, or in memory).

One named graph per document. ``replace`` is a single SPARQL update
(``DROP SILENT GRAPH`` + ``INSERT DATA``), which oxigraph applies in one transaction:
readers see either the old graph or the new one, never a half-written one, and a
failed write leaves the old graph in place.

Queries run with the dataset set through the query protocol (``default_graph`` and
``named_graphs`` = the scoped graphs), which overrides ``FROM``/``FROM NAMED`` in the
query text, so scope cannot be widened by the query.

Scopes of any size cost at most linear time. oxigraph evaluates a default graph given as
a list of N graphs with N index lookups per triple pattern, and a query over N documents
binds ~N solutions, so that plan costs ~N^2 (seconds at a thousand documents). Instead:

* a scope that covers every graph runs on the union default graph (one lookup);
* a scope of at least ``_COPY_MIN_GRAPHS`` graphs is copied (its quads, graph names
  kept) into an in-memory store that holds nothing else, and the query runs there on the
  union default graph: linear in the scope's triples, and no other graph exists to be
  read. The copy is reused while no write happened (the last ``_COPY_CACHE`` scopes);
* a query that reads only inside ``GRAPH ?g`` (``hybrid_rag._per_graph``) over such a
  scope is not copied: it runs on the whole store with ``VALUES ?g { <scoped graphs> }``
  first in its WHERE group, so ``?g`` binds the scoped graphs only (linear, and nothing
  of another graph reaches a row);
* smaller scopes use the per-graph dataset directly.

On disk, the first two read the in-memory mirror of the whole store once it has loaded
(``hybrid_rag.stores._mirror``; ``mirror=False`` turns it off): RocksDB lookups cost
several times in-memory ones, so without it a whole-store query costs more per document
than a scope copied into memory.

Note: oxigraph stores numeric literals by value, so ``"1.50"^^xsd:decimal`` reads back
as ``"1.5"^^xsd:decimal`` (same value, canonical lexical form). Strings, language
tags and IRIs round-trip exactly.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from hybrid_rag import _vocab
from hybrid_rag._checks import check_doc_id, check_scope, check_triples, is_doc_id
from hybrid_rag._per_graph import graph_variable, with_graph_filter, with_graph_values
from hybrid_rag.errors import ConfigurationError, StoreError
from hybrid_rag.rdf import SparqlResult, Term, Triple, triple_n3
from hybrid_rag.sparql import validate_query
from hybrid_rag.stores._closing import Closing
from hybrid_rag.stores._damage import engine_error, is_disk_full
from hybrid_rag.stores._lock import StoreLock
from hybrid_rag.stores._mirror import Mirror
from hybrid_rag.stores._ox_terms import to_term
from hybrid_rag.stores._query_process import QueryProcesses

if TYPE_CHECKING:
    from pyoxigraph import QuerySolutions, Store

__all__ = ["OxigraphGraphStore"]

log = logging.getLogger("hybrid_rag")
T = TypeVar("T")

_RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
_ENGINE_ERRORS = (OSError, SyntaxError, ValueError, RuntimeError, TypeError)
_REPAIR = (
    "restore the graph folder from a backup, or ingest the documents again into a new "
    "store (`hybrid-rag docs` lists their sources)"
)
_UNION_MIN_GRAPHS = 8  # below this the per-graph dataset is as fast as the union check
_COPY_MIN_GRAPHS = 8  # from here a copy of the scope beats the per-graph dataset (N^2)
_COPY_CACHE = 2  # scope copies kept (each holds its scope's triples in memory)


class OxigraphGraphStore(Closing):
    """A ``GraphStore`` backed by pyoxigraph.

    Args:
        path: Directory of the on-disk store (created if missing); ``None`` keeps the
            data in memory for the life of the object.
        graph_base: Prefix of the document graph IRIs; ``graph_iri(doc_id)`` is
            ``graph_base + doc_id``.
        mirror: On-disk stores only: keep a copy of every graph in memory (loaded in the
            background on the first query over 8 or more documents, then kept current
            by every write) that queries over many documents read instead of the disk,
            several times faster per document. Costs about 400 MB per million triples;
            ``False`` keeps every query on disk.

    The store opens lazily on first use and is safe to use from several threads.

    Example:
        >>> from hybrid_rag.rdf import iri, literal
        >>> with OxigraphGraphStore() as store:
        ...     store.replace("a", [(iri("urn:x"), iri("urn:p"), literal("v"))])
        ...     store.query("SELECT ?o WHERE { ?s ?p ?o }", scope=["a"]).rows[0]["o"].value
        1
        'v'
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        graph_base: str = _vocab.DOC_GRAPH,
        mirror: bool = True,
    ):
        if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S*$", graph_base):
            raise ConfigurationError(f"graph_base must be an absolute IRI, got {graph_base!r}")
        self._path = None if path is None else Path(path).expanduser()
        self._graph_base = graph_base
        self._lock = threading.Lock()
        self._gen_lock = threading.Lock()
        self._generation = 0  # bumped after every write; see _query_union
        self._writing = 0
        self._graphs: set[str] | None = None  # named graphs of the database, lazily loaded
        self._store: Store | None = None
        self._copies: dict[frozenset[str], tuple[int, Store]] = {}  # scope -> (generation, copy)
        self._closed = False
        self._file_lock = None if self._path is None else StoreLock(self._path, what="graph store")
        self._processes: QueryProcesses | None = None  # for query_bounded, started lazily
        self._mirror = Mirror() if mirror and self._path is not None else None
        self._broken = False  # a write failed on I/O: reopen the engine before the next

    def __repr__(self) -> str:
        where = "memory" if self._path is None else str(self._path)
        return f"OxigraphGraphStore({where!r}, graph_base={self._graph_base!r})"

    # -- lifecycle ---------------------------------------------------------------------

    def _db(self) -> Store:
        store = self._store
        if store is not None:
            return store
        with self._lock:
            if self._closed:
                raise StoreError("OxigraphGraphStore is closed")
            if self._store is None:
                self._store = self._open()
            return self._store

    def _open(self) -> Store:
        from pyoxigraph import Store

        held = self._file_lock is not None and self._file_lock.held
        if self._file_lock is not None:
            self._file_lock.acquire()  # one writer per store: StoreLockedError at once
        try:
            return Store(None if self._path is None else str(self._path))
        except _ENGINE_ERRORS as exc:
            if self._file_lock is not None and not held:  # a reopen keeps the lock
                self._file_lock.release()
            message = f"cannot open oxigraph store at {self._path}: {exc}"
            raise self._failed(exc, "opening the graph store", message) from exc

    def _failed(self, exc: BaseException, what: str, message: str) -> StoreError:
        """The typed error for an engine failure: damage, a full disk, or ``message``."""
        return engine_error(exc, what=what, path=self._path, how=_REPAIR, message=message)

    def _write_failed(self, exc: BaseException, doc_id: str, verb: str, doing: str) -> StoreError:
        """The typed error for a failed write; after an I/O error the engine is reopened
        before the next write (RocksDB refuses every write after one failed on a full
        disk, until it is reopened)."""
        if isinstance(exc, OSError) or is_disk_full(exc):
            self._broken = True
        message = f"cannot {verb} graph of {doc_id!r}: {exc}"
        return self._failed(exc, f"{doing} the graph of {doc_id!r}", message)

    def _writable(self) -> None:
        """Reopen the engine after a failed write (see ``_write_failed``)."""
        if not self._broken or self._path is None:
            return
        with self._lock:
            if not self._broken:
                return
            store, self._store = self._store, None
            self._copies.clear()
            with contextlib.suppress(*_ENGINE_ERRORS):
                if store is not None:
                    store.flush()
            del store
            gc.collect()
            self._store = self._open()  # on a full disk: DiskFullError, tried again next time
            self._broken = False

    def close(self) -> None:
        """Flush and release the store; idempotent. Later calls raise StoreError."""
        with self._lock:
            store, self._store, self._closed = self._store, None, True
            self._copies.clear()
            processes, self._processes = self._processes, None
        if self._mirror is not None:
            self._mirror.close()
        if processes is not None:
            processes.close()
        if store is None or self._path is None:
            return
        try:
            store.flush()
        except _ENGINE_ERRORS as exc:  # what was written is in RocksDB's log: kept
            log.warning("cannot flush the graph store at %s: %s", self._path, exc)
        finally:
            # RocksDB holds its directory lock until the Store is freed; query results
            # and rdflib parse caches can keep it alive in reference cycles, so collect
            # now: reopening the same path in this process must work.
            del store
            gc.collect()
            if self._file_lock is not None:
                self._file_lock.release()

    # -- protocol ----------------------------------------------------------------------

    def graph_iri(self, doc_id: str) -> str:
        """The named graph IRI of a document (``graph_base + doc_id``).

        Raises:
            InvalidDocIdError: ``doc_id`` is not a valid doc id (``check_doc_id``).
        """
        return self._graph_base + check_doc_id(doc_id)

    def replace(self, doc_id: str, triples: Sequence[Triple]) -> int:
        """Make the document's graph hold exactly ``triples``, atomically.

        Returns:
            The number of distinct triples now in the graph. An empty ``triples``
            removes the graph.

        Raises:
            InvalidDocIdError: Bad ``doc_id``.
            InputError: ``triples`` is not a sequence of ``(Term, Term, Term)``.
            StoreError: A triple is malformed (literal subject, non-IRI predicate,
                invalid IRI) or the engine failed; the graph is left unchanged.
        """
        graph = self.graph_iri(doc_id)
        triples = check_triples(triples)
        return self._retrying(lambda: self._replace(doc_id, graph, triples))

    def _retrying(self, write: Callable[[], T]) -> T:
        """``write()``; once more after an I/O failure, on a reopened engine (RocksDB may
        have stopped all writes after a background flush failed on a full disk)."""
        try:
            return write()
        except StoreError:
            if not self._broken or self._path is None:
                raise
            log.warning("graph store at %s: retrying a failed write after reopening", self._path)
            return write()

    def _replace(self, doc_id: str, graph: str, triples: Sequence[Triple]) -> int:
        self._writable()
        if triples and not self._db().contains_named_graph(self._node(doc_id)):
            return self._insert_new(doc_id, graph, triples)
        body = " .\n".join(triple_n3(t) for t in triples)
        update = f"DROP SILENT GRAPH <{graph}> ;\nINSERT DATA {{ GRAPH <{graph}> {{\n{body}\n}} }}"
        try:  # no local bound to the Store: a kept traceback must not keep RocksDB open
            with self._write(graph, exists=bool(triples)):
                self._db().update(update)
                self._mirrored(graph, lambda m: m.update(update))
        except _ENGINE_ERRORS as exc:
            raise self._write_failed(exc, doc_id, "write", "writing") from exc
        return self.count(doc_id)

    def _insert_new(self, doc_id: str, graph: str, triples: Sequence[Triple]) -> int:
        """A new graph: one transactional ``extend`` of native quads (no SPARQL parsing).

        About 3x faster than the update text on ingest; a replace keeps the update path,
        whose DROP + INSERT runs as one transaction.
        """
        from pyoxigraph import NamedNode

        try:
            quads = _quads(triples, NamedNode(graph))
            with self._write(graph, exists=True):
                self._db().extend(quads)
                self._mirrored(graph, lambda m: m.extend(quads))
        except _ENGINE_ERRORS as exc:
            raise self._write_failed(exc, doc_id, "write", "writing") from exc
        return self.count(doc_id)

    def delete(self, doc_id: str) -> bool:
        """Drop the document's graph; ``False`` when it had none."""
        node = self._node(doc_id)
        return self._retrying(lambda: self._delete(doc_id, node))

    def _delete(self, doc_id: str, node: Any) -> bool:
        self._writable()
        try:
            if not self._db().contains_named_graph(node):
                return False
            with self._write(node.value, exists=False):
                self._db().remove_graph(node)
                self._mirrored(node.value, lambda m: m.remove_graph(node))
        except _ENGINE_ERRORS as exc:
            raise self._write_failed(exc, doc_id, "delete", "deleting") from exc
        return True

    def query(self, sparql: str, *, scope: Sequence[str]) -> SparqlResult:
        """Run a read-only SELECT/ASK over exactly the graphs of ``scope``.

        Raises:
            SparqlValidationError: The query is not a read-only SELECT/ASK, uses
                SERVICE, names a graph outside the scope, or does not parse.
            InvalidDocIdError: A scope entry is not a valid doc id.
            InputError: ``scope`` is a ``str`` or not a sequence.
            StoreError: The engine failed; the message carries its text.
        """
        graphs = [self.graph_iri(d) for d in check_scope(scope)]
        validate_query(sparql, allowed_graphs=graphs)
        if not graphs:
            return SparqlResult()
        db = self._db()
        many = len(graphs) >= min(_UNION_MIN_GRAPHS, _COPY_MIN_GRAPHS)
        source = db if self._mirror is None or not many else self._mirror.reader(db)
        if len(graphs) >= _UNION_MIN_GRAPHS:
            result = self._query_union(source, sparql, graphs)
            if result is not None:
                return result
        if len(graphs) >= _COPY_MIN_GRAPHS:
            if (per := graph_variable(sparql)) is not None:  # the scope said in the query
                return self._query_per_graph(source, sparql, per.var, graphs)
            return _execute(self._scope_copy(source, graphs), sparql, graphs, union=True)
        return _execute(db, sparql, graphs, path=self._path)

    def query_bounded(
        self, sparql: str, *, scope: Sequence[str], timeout: float, max_rows: int
    ) -> SparqlResult:
        """``query`` in a child process that is killed after ``timeout`` seconds.

        For queries whose cost is unknown (LLM-written): oxigraph cannot interrupt a
        query, so it runs on a copy of the scope's graphs in a separate process (see
        ``hybrid_rag.stores._query_process``); at most ``max_rows`` rows are read.

        Raises:
            QueryTimeoutError: the time ran out; the child process was killed.
            (and every error ``query`` raises)
        """
        graphs = [self.graph_iri(d) for d in check_scope(scope)]
        validate_query(sparql, allowed_graphs=graphs)
        if not graphs:
            return SparqlResult()
        db = self._db()
        if self._mirror is not None and len(graphs) >= _COPY_MIN_GRAPHS:
            db = self._mirror.reader(db)
        with self._gen_lock:
            key = None if self._writing else (self._generation, frozenset(graphs))
        return self._query_processes().run(
            sparql, key=key, quads=lambda: _nquads(db, graphs), timeout=timeout, max_rows=max_rows
        )

    def _query_processes(self) -> QueryProcesses:
        with self._lock:
            if self._closed:
                raise StoreError("OxigraphGraphStore is closed")
            if self._processes is None:
                self._processes = QueryProcesses()
            return self._processes

    def _scope_copy(self, db: Store, graphs: Sequence[str]) -> Store:
        """An in-memory store holding exactly the scoped graphs (cached until a write)."""
        from pyoxigraph import NamedNode, Store

        key = frozenset(graphs)
        with self._gen_lock:
            generation, writing = self._generation, self._writing
            cached = self._copies.get(key)
        if cached is not None and cached[0] == generation and not writing:
            return cached[1]
        copy = Store()
        try:  # bulk: no transaction needed, nothing else sees the copy yet
            copy.bulk_extend(
                q for g in graphs for q in db.quads_for_pattern(None, None, None, NamedNode(g))
            )
        except _ENGINE_ERRORS as exc:
            message = f"cannot read the scoped graphs: {exc}"
            raise self._failed(exc, "reading the scoped graphs", message) from exc
        with self._gen_lock:
            if not writing and self._generation == generation and not self._writing:
                self._copies.pop(key, None)
                self._copies[key] = (generation, copy)
                while len(self._copies) > _COPY_CACHE:
                    self._copies.pop(next(iter(self._copies)))
        return copy

    def _query_union(self, db: Store, sparql: str, graphs: Sequence[str]) -> SparqlResult | None:
        """Fast path when the scope covers every graph of the store, else ``None``.

        oxigraph evaluates a default graph given as a list of N graphs with N lookups
        per pattern (cost ~ N^2 for a query over N documents); the union default graph
        is one lookup. It is only equivalent when no graph outside the scope exists, so
        the check is repeated if a write ran meanwhile (``_unwritten``).
        """

        def run() -> SparqlResult | None:
            if not self._covers(db, graphs):
                return None
            return _execute(db, sparql, graphs, union=True, path=self._path)

        return self._unwritten(run)

    def _query_per_graph(
        self, db: Store, sparql: str, var: str, graphs: Sequence[str]
    ) -> SparqlResult:
        """A query that reads only inside ``GRAPH ?var``, over a part of the store: run
        on the whole store with the scope said inside it, as the graphs outside it
        (``?var NOT IN (...)``) when they are fewer, else as ``VALUES ?var`` (parsing
        thousands of IRIs costs more than the query). The graphs outside are those of
        the store when the query ran (``_unwritten``)."""

        def run() -> SparqlResult | None:
            outside = sorted(self._named(db).difference(graphs))
            if len(outside) >= len(graphs):
                return None
            text = with_graph_filter(sparql, var, base=None, excluded=outside)
            return _execute(db, text, graphs, union=True, path=self._path)

        result = self._unwritten(run)
        if result is not None:
            return result
        scoped = with_graph_values(sparql, var, graphs)
        return _execute(db, scoped, graphs, union=True, path=self._path)

    def _unwritten(self, run: Callable[[], SparqlResult | None]) -> SparqlResult | None:
        """``run()``'s result when no write ran meanwhile (seqlock on ``_generation``;
        tried again after a write), else ``None``; ``None`` too when ``run`` gives it."""
        for attempt in range(20):
            with self._gen_lock:
                generation, writing = self._generation, self._writing
            if writing:  # a write in flight may add a graph: wait for it
                time.sleep(0.002 * (attempt + 1))
                continue
            result = run()
            if result is None:
                return None
            with self._gen_lock:
                if self._generation == generation and not self._writing:
                    return result
        return None

    def _named(self, db: Store) -> set[str]:
        """The store's named graphs (read once, then kept by the writes: ``_covers``)."""
        if self._graphs is None:
            listed = {g.value for g in db.named_graphs() if hasattr(g, "value")}
            with self._gen_lock:
                if self._graphs is None:
                    self._graphs = listed
        with self._gen_lock:
            return set(self._graphs) if self._graphs is not None else set()

    def _covers(self, db: Store, graphs: Sequence[str]) -> bool:
        """Whether ``graphs`` include every named graph and the default graph is empty.

        The set of named graphs is read once and then kept up to date by ``replace``
        and ``delete`` (listing graphs on RocksDB costs ~0.1 s per 4000 graphs), so
        the database must only be written through this object.
        """
        from pyoxigraph import DefaultGraph

        covered = self._named(db).issubset(graphs)  # writers mutate the set under the lock
        if not covered:
            return False
        return next(iter(db.quads_for_pattern(None, None, None, DefaultGraph())), None) is None

    @contextmanager
    def _write(self, graph: str, *, exists: bool) -> Iterator[None]:
        """Mark a write in flight (for ``_query_union``) and track the graph set."""
        with self._gen_lock:
            self._writing += 1
        ok = False
        try:
            yield
            ok = True
        finally:
            with self._gen_lock:
                self._writing -= 1
                self._generation += 1
                self._copies.clear()
                if not ok:
                    self._graphs = None  # unknown outcome: reload on next use
                elif self._graphs is not None:
                    (self._graphs.add if exists else self._graphs.discard)(graph)

    def _mirrored(self, graph: str, change: Callable[[Store], object]) -> None:
        """Apply a write that succeeded on disk to the mirror (inside ``_write``)."""
        if self._mirror is not None:
            self._mirror.apply(graph, change)

    def doc_ids(self) -> list[str]:
        """Sorted ids of the documents that have a named graph under ``graph_base``."""
        base = self._graph_base
        try:
            names = [g.value for g in self._db().named_graphs() if hasattr(g, "value")]
        except _ENGINE_ERRORS as exc:
            raise self._failed(exc, "listing graphs", f"cannot list graphs: {exc}") from exc
        ids = (n[len(base) :] for n in names if n.startswith(base))
        return sorted(i for i in ids if is_doc_id(i))

    # -- extras ------------------------------------------------------------------------

    def count(self, doc_id: str) -> int:
        """Number of triples in the document's graph (0 when absent)."""
        node = self._node(doc_id)
        try:
            # COUNT in the engine: about 10x faster than iterating the graph's quads
            rows = self._db().query(
                f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {node} {{ ?s ?p ?o }} }}"
            )
            return int(next(iter(cast("QuerySolutions", rows)))["n"].value)
        except _ENGINE_ERRORS as exc:
            message = f"cannot count graph of {doc_id!r}: {exc}"
            raise self._failed(exc, "counting a graph", message) from exc

    def dump(self, doc_id: str) -> list[Triple]:
        """The triples of the document's graph, sorted by their N-Triples form."""
        return sorted(self.triples(doc_id), key=lambda t: tuple(x.n3() for x in t))

    def triples(self, doc_id: str) -> list[Triple]:
        """The triples of the document's graph, in the engine's order (cheaper than ``dump``)."""
        node = self._node(doc_id)
        try:
            quads = list(self._db().quads_for_pattern(None, None, None, node))
        except _ENGINE_ERRORS as exc:
            message = f"cannot read graph of {doc_id!r}: {exc}"
            raise self._failed(exc, "reading a graph", message) from exc
        term = functools.cache(to_term)  # each distinct node converted once
        return [(term(q.subject), term(q.predicate), term(q.object)) for q in quads]

    def _node(self, doc_id: str) -> Any:
        from pyoxigraph import NamedNode

        return NamedNode(self.graph_iri(doc_id))


# -- conversion -------------------------------------------------------------------------


def _execute(
    db: Store,
    sparql: str,
    graphs: Sequence[str],
    *,
    union: bool = False,
    path: Path | None = None,
) -> SparqlResult:
    """Run a validated query with the dataset pinned to ``graphs``.

    pyoxigraph result iterators must be freed on the thread that made them, so the
    result object is never bound to a local of a frame that a traceback (rdflib's
    parser keeps some) could keep alive; the engine error is re-raised outside the
    ``except`` block for the same reason.
    """
    from pyoxigraph import BlankNode, DefaultGraph, NamedNode

    # union: the caller checked that ``graphs`` are all the store's graphs, so the
    # store's own named graphs are the same set (and cheaper than an explicit list)
    named: list[NamedNode | BlankNode] | None = None if union else [NamedNode(g) for g in graphs]
    default: list[NamedNode | BlankNode | DefaultGraph] | None = None if union else [*(named or ())]
    try:
        return _convert_result(
            db.query(
                sparql, default_graph=default, named_graphs=named, use_default_graph_as_union=union
            )
        )
    except _ENGINE_ERRORS as exc:
        message, failure = str(exc), RuntimeError(str(exc))
    error = engine_error(
        failure, what="a query", path=path, how=_REPAIR, message=f"SPARQL engine error: {message}"
    )
    raise error


def _nquads(db: Store, graphs: Sequence[str]) -> bytes:
    """The quads of ``graphs`` as N-Quads (graph names kept)."""
    from pyoxigraph import NamedNode, RdfFormat, serialize

    quads = (q for g in graphs for q in db.quads_for_pattern(None, None, None, NamedNode(g)))
    try:
        return serialize(quads, format=RdfFormat.N_QUADS) or b""
    except _ENGINE_ERRORS as exc:
        message = f"cannot read the scoped graphs: {exc}"
        raise engine_error(
            exc, what="reading the scoped graphs", path=None, message=message
        ) from exc


def _quads(triples: Sequence[Triple], graph: Any) -> list[Any]:
    """The triples as pyoxigraph quads in ``graph``, each distinct term converted once (a
    document repeats its subject and predicates in most triples)."""
    from pyoxigraph import Quad

    native = functools.cache(_native)
    return [Quad(native(s), native(p), native(o), graph) for s, p, o in triples]


def _native(term: Term) -> Any:
    """A pyoxigraph term; invalid IRIs or literals raise ValueError."""
    from pyoxigraph import BlankNode, Literal, NamedNode

    if term.kind == "iri":
        return NamedNode(term.value)
    if term.kind == "bnode":
        return BlankNode(term.value)
    if term.lang:
        return Literal(term.value, language=term.lang)
    if term.datatype:
        return Literal(term.value, datatype=NamedNode(term.datatype))
    return Literal(term.value)


def _convert_result(result: Any) -> SparqlResult:
    from pyoxigraph import QueryBoolean, QuerySolutions

    if isinstance(result, QueryBoolean):
        return SparqlResult(boolean=bool(result))
    if not isinstance(result, QuerySolutions):
        raise StoreError("only SELECT and ASK results are supported")
    names = tuple(v.value for v in result.variables)
    return SparqlResult(variables=names, rows=tuple(_rows(result, names)))


def _rows(solutions: Iterable[Any], names: Sequence[str]) -> Iterator[dict[str, Term]]:
    """Rows as dicts of the bound variables; a term seen before in the result is reused.

    Result sets repeat terms (the property, the status, a document's IRIs), so the
    per-result memo saves most conversions on large scopes.
    """
    seen: dict[Any, Term] = {}
    for solution in solutions:
        row: dict[str, Term] = {}
        for name, value in zip(names, solution, strict=True):
            if value is None:
                continue
            term = seen.get(value)
            if term is None:
                term = seen[value] = to_term(value)
            row[name] = term
        yield row
