"""GraphStore on the SAP HANA Cloud Knowledge Graph Engine (``SYS.SPARQL_EXECUTE``).

What is enforced where:

* **Reads.** A HANA query that names no dataset reads the DEFAULT graph plus every named
  graph, and DEFAULT is writable by every database user. So every query is first
  validated (read-only SELECT/ASK, no SERVICE, ``FROM``/``FROM NAMED``/``GRAPH <iri>``
  only naming scoped graphs) and then rewritten by
  ``with_dataset`` to ``FROM <g> ... FROM NAMED <g> ...``
  for exactly the scoped graphs, replacing any dataset clause it had. A query whose
  every triple pattern is inside ``GRAPH ?g`` is sent without ``FROM`` lists, its scope
  written into it (``hybrid_rag._per_graph.scope_inside``: ``VALUES ?g``, or the base
  less the graphs outside the scope, rows of any other graph dropped). DEFAULT is never
  read by a scoped query, and the library never writes to it.
* **Writes.** ``replace`` runs ``DROP SILENT GRAPH`` (graph DDL: autocommit on), then the
  ``INSERT DATA`` batches (each at most ``max_request_bytes``) in one SQL transaction
  with autocommit off, committed together: a reader sees the old graph, then briefly
  no graph, then the whole new graph, never a half-written one. Every term is written
  through ``n3`` (escaped by construction); blank nodes get
  labels that start with a letter (``_:b<hash>``), and only full ``<IRI>`` forms are
  written (no prefixed names), so local-name rules of HANA's parser never apply.
* **Results** are requested as SPARQL JSON (or XML) and parsed into the same
  ``SparqlResult`` rows the embedded store returns; HANA errors
  become ``StoreError`` with the engine's text (connection
  details cut off).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

from hybrid_rag import _vocab
from hybrid_rag._checks import check_doc_id, check_scope, check_triples
from hybrid_rag._per_graph import (
    GraphListing,
    graph_variable,
    listing_query,
    rows_from,
    scope_inside,
)
from hybrid_rag.errors import ConfigurationError, StoreError
from hybrid_rag.rdf import SparqlResult, Triple
from hybrid_rag.sparql import validate_query, with_dataset
from hybrid_rag.stores._closing import Closing
from hybrid_rag.stores.hana._connection import (
    HanaConnectionPool,
    HanaSettings,
    engine_message,
    pool_for,
)
from hybrid_rag.stores.sparql_http import (
    LIST_GRAPHS,
    check_graph_base,
    count_query,
    doc_ids_from,
    drop_update,
    graph_exists_query,
    insert_requests,
    parse_sparql_results,
)

__all__ = ["SPARQL_EXECUTE", "HanaGraphStore"]

log = logging.getLogger("hybrid_rag.hana")

SPARQL_EXECUTE = "SYS.SPARQL_EXECUTE"
_ACCEPT = {
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
}


class HanaGraphStore(Closing):
    """A ``GraphStore`` on SAP HANA Cloud's KG engine.

    Args:
        settings: Connection settings (ignored when ``pool`` is given).
        pool: A connection pool to use (and close on ``close``); lets several
            stores share per-thread connections.
        graph_base: Prefix of document graph IRIs.
        result_format: ``"json"`` or ``"xml"`` SPARQL results.
        max_request_bytes: Upper bound of one ``INSERT DATA`` request.
        listing_ttl: Seconds the list of the store's graphs is kept for queries over
            many of them (``hybrid_rag._per_graph.scope_inside``); this object's own
            writes refresh it.

    Connections open lazily; safe to use from many threads (one connection per thread).
    """

    def __init__(
        self,
        settings: HanaSettings | None = None,
        *,
        pool: HanaConnectionPool | None = None,
        graph_base: str = _vocab.DOC_GRAPH,
        result_format: Literal["json", "xml"] = "json",
        max_request_bytes: int = 1_000_000,
        listing_ttl: float = 5.0,
    ) -> None:
        if result_format not in _ACCEPT or max_request_bytes < 1024 or listing_ttl < 0:
            raise ConfigurationError(
                "result_format json|xml, max_request_bytes >= 1024 and listing_ttl >= 0"
            )
        self._pool = pool_for(settings, pool, owner="HanaGraphStore")
        self._graph_base = check_graph_base(graph_base)
        self._accept = _ACCEPT[result_format]
        self._max_bytes = max_request_bytes
        self._listing = GraphListing(self._listed, ttl=listing_ttl)

    def __repr__(self) -> str:
        return f"HanaGraphStore(host={self._pool.settings.host!r}, graph_base={self._graph_base!r})"

    # -- engine calls ------------------------------------------------------------------

    def _call(self, conn: Any, request: str, headers: str) -> tuple[Any, Any]:
        cursor = conn.cursor()
        try:
            out = cursor.callproc(SPARQL_EXECUTE, (request, headers, "?", None))
        finally:
            cursor.close()
        return out[2], out[3]

    def _update(self, conn: Any, update: str) -> None:
        self._call(conn, update, "Content-Type: application/sparql-update")

    def _select(self, sparql: str) -> SparqlResult:
        headers = f"Accept: {self._accept}\r\nContent-Type: application/sparql-query"
        try:
            body, _meta = self._pool.run(lambda conn: self._call(conn, sparql, headers))
        except self._pool.error_types as exc:
            raise StoreError(f"SPARQL engine error: {engine_message(exc)}") from None
        return parse_sparql_results(_text(body), self._accept)

    # -- protocol ----------------------------------------------------------------------

    def graph_iri(self, doc_id: str) -> str:
        """The named graph IRI of a document (``graph_base + doc_id``)."""
        return self._graph_base + check_doc_id(doc_id)

    def replace(self, doc_id: str, triples: Sequence[Triple]) -> int:
        """Make the document's graph hold exactly ``triples``; returns the triple count.

        Raises:
            InvalidDocIdError: Bad ``doc_id``.
            InputError: ``triples`` is not a sequence of ``(Term, Term, Term)``.
            StoreError: A malformed triple (nothing written) or an engine error.
        """
        graph = self.graph_iri(doc_id)
        inserts = insert_requests(graph, check_triples(triples), max_bytes=self._max_bytes)
        self._listing.forget()

        def write(conn: Any) -> None:
            self._update(conn, drop_update(graph))  # graph DDL: autocommit is on here
            if inserts:
                with self._pool.transaction(conn):
                    for update in inserts:
                        self._update(conn, update)

        try:
            self._pool.run(write)
        except self._pool.error_types as exc:
            raise StoreError(f"cannot write graph of {doc_id!r}: {engine_message(exc)}") from None
        self._listing.forget()
        log.debug("graph written", extra={"doc_id": doc_id, "requests": len(inserts)})
        return self.count(doc_id)

    def delete(self, doc_id: str) -> bool:
        """Drop the document's graph (``DROP GRAPH``); ``False`` when it had none."""
        graph = self.graph_iri(doc_id)
        if not self._select(graph_exists_query(graph)).boolean:
            return False
        self._listing.forget()
        try:
            self._pool.run(lambda conn: self._update(conn, drop_update(graph)))
        except self._pool.error_types as exc:
            raise StoreError(f"cannot drop graph of {doc_id!r}: {engine_message(exc)}") from None
        return True

    def query(self, sparql: str, *, scope: Sequence[str]) -> SparqlResult:
        """Run a read-only SELECT/ASK over exactly the graphs of ``scope``.

        Raises:
            SparqlValidationError: Not a read-only SELECT/ASK, SERVICE, a graph outside
                the scope, or a parse error.
            InvalidDocIdError: A scope entry is not a valid doc id.
            InputError: ``scope`` is a ``str`` or not a sequence.
            StoreError: The engine failed; the message carries HANA's text.
        """
        graphs = [self.graph_iri(d) for d in check_scope(scope)]
        validate_query(sparql, allowed_graphs=graphs)
        if not graphs:
            return SparqlResult()
        per = graph_variable(sparql) if len(graphs) > 1 else None
        if per is None:
            return self._select(with_dataset(sparql, graphs))
        text, keep = scope_inside(sparql, per, graphs, base=self._graph_base, listed=self._listing)
        return rows_from(self._select(text), per, keep)

    def _listed(self) -> list[str]:
        """The named graphs under ``graph_base`` (for ``scope_inside``)."""
        rows = self._select(listing_query(self._graph_base)).rows
        return [r["g"].value for r in rows if "g" in r]

    def doc_ids(self) -> list[str]:
        """Sorted ids of documents with a graph under ``graph_base``."""
        return doc_ids_from(self._select(LIST_GRAPHS), self._graph_base)

    def count(self, doc_id: str) -> int:
        """Number of triples in the document's graph (0 when absent)."""
        result = self._select(count_query(self.graph_iri(doc_id)))
        return int(result.rows[0]["n"].value) if result.rows else 0

    def close(self) -> None:
        """Close the connections of the pool; idempotent."""
        self._pool.close()


def _text(body: Any) -> str:
    """A procedure's NCLOB output as text (hdbcli may return a LOB object)."""
    if body is None:
        raise StoreError("SPARQL_EXECUTE returned no response")
    if hasattr(body, "read"):
        body = body.read()
    if isinstance(body, bytes | bytearray | memoryview):
        return bytes(body).decode("utf-8")
    return str(body)
