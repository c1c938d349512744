"""A GraphStore over any SPARQL 1.1 Protocol endpoint (Oxigraph, Virtuoso, Fuseki, GraphDB ...).

Needs ``httpx`` (``pip install "hybrid-rag[server]"``), imported on first use. Tested in
CI against a real ``oxigraph serve`` and a real Virtuoso 7.2 (Debian's
``virtuoso-opensource``).

Scope: the query is validated with the scoped graphs as the only graphs it may name
(``FROM``/``FROM NAMED``/``GRAPH <iri>`` outside the scope is rejected), then its
dataset is rewritten to exactly those graphs (``FROM <g>`` + ``FROM NAMED <g>`` for each,
``with_dataset``). **That rewrite is what holds the scope**: the
protocol's ``default-graph-uri``/``named-graph-uri`` parameters are sent too, but
servers differ on them (Virtuoso ignores them when the query text names graphs, which
the rewrite always does).

Accounts: give the store a **read-only account for queries** and a separate one for
updates (``auth`` and ``update_auth``), so that no query, whatever it slips past, can
write. On Virtuoso the anonymous ``/sparql`` endpoint is read-only by default and
``/sparql-auth`` takes Digest auth (``httpx.DigestAuth``) for updates::

    SparqlHttpStore("http://kg:8890/sparql", "http://kg:8890/sparql-auth",
                    update_auth=httpx.DigestAuth("writer", secret))

Blank nodes are written as skolem IRIs (``urn:hybrid-rag:genid:<hash of graph and
label>``): Virtuoso rejects blank nodes in ``INSERT DATA``, and a skolem IRI also keeps
its identity across the requests of a batched write. They read back as IRIs.

Writes: ``DROP SILENT GRAPH`` then ``INSERT DATA`` requests of at most
``max_request_bytes``. When they fit in one request, both go in that single request
(atomic on servers that apply one request in one transaction, as Oxigraph does).

Retries: only transient failures are retried (a connection that could not be made or
broke, HTTP 429, 502, 503 and 504, honouring ``Retry-After`` up to 5 s). A timeout
while the server runs a query, or any other error status (a 500 from a query the
engine refuses), is raised at once as ``StoreError``.

This module also holds the result parsers (SPARQL 1.1 JSON and XML results) and the
update batching shared with ``HanaGraphStore``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias
from xml.etree import ElementTree

from hybrid_rag import _vocab
from hybrid_rag._checks import check_doc_id, check_scope, check_triples, is_doc_id
from hybrid_rag._per_graph import (
    GraphListing,
    graph_variable,
    listing_query,
    rows_from,
    scope_inside,
)
from hybrid_rag.errors import ConfigurationError, StoreError
from hybrid_rag.rdf import SparqlResult, Term, Triple, triple_n3
from hybrid_rag.sparql import validate_query, with_dataset
from hybrid_rag.stores._closing import Closing

if TYPE_CHECKING:
    import httpx

    Auth: TypeAlias = httpx.Auth | tuple[str, str]
else:
    Auth: TypeAlias = Any

__all__ = [
    "SparqlHttpStore",
    "count_query",
    "graph_exists_query",
    "insert_requests",
    "parse_sparql_json",
    "parse_sparql_results",
    "parse_sparql_xml",
    "skolemize",
]

log = logging.getLogger("hybrid_rag.sparql_http")

_XSD_STRING = _vocab.XSD + "string"
_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
_RES = "{http://www.w3.org/2005/sparql-results#}"
_INSTALL = 'SparqlHttpStore needs httpx: pip install "hybrid-rag[server]"'
LIST_GRAPHS = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
GENID = "urn:hybrid-rag:genid:"
_TRANSIENT_STATUS = frozenset({429, 502, 503, 504})
_MAX_RETRY_AFTER = 5.0


# -- shared helpers --------------------------------------------------------------------


def check_graph_base(graph_base: str) -> str:
    """``graph_base`` unchanged when it is an absolute IRI, else ConfigurationError."""
    if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S*$", graph_base):
        raise ConfigurationError(f"graph_base must be an absolute IRI, got {graph_base!r}")
    return graph_base


def insert_requests(graph: str, triples: Sequence[Triple], *, max_bytes: int) -> list[str]:
    """``INSERT DATA`` updates into ``graph``, each at most ~``max_bytes`` of UTF-8.

    Every term is escaped by ``Term.n3``; duplicates are dropped. Triples that
    contain a blank node all go into the first request, because a blank node label
    only identifies one node within one request.
    """

    unique: dict[str, bool] = {}
    for triple in triples:
        unique.setdefault(triple_n3(triple), _has_bnode(triple))
    head = f"INSERT DATA {{ GRAPH {Term(graph, 'iri').n3()} {{\n"
    out: list[str] = []
    batch = [line for line, bnode in unique.items() if bnode]
    size = sum(len(x.encode()) + 3 for x in batch)
    for line in (line for line, bnode in unique.items() if not bnode):
        n = len(line.encode()) + 3
        if batch and size + n > max_bytes:
            out.append(head + " .\n".join(batch) + "\n} }")
            batch, size = [], 0
        batch.append(line)
        size += n
    if batch:
        out.append(head + " .\n".join(batch) + "\n} }")
    return out


def _has_bnode(triple: Triple) -> bool:
    return any(isinstance(t, Term) and t.kind == "bnode" for t in triple)


def skolemize(graph: str, triples: Sequence[Triple]) -> list[Triple]:
    """``triples`` with every blank node replaced by a skolem IRI unique to ``graph``.

    The IRI is ``urn:hybrid-rag:genid:`` + a hash of the graph IRI and the node's label,
    so one label is one node within a document and never shared between documents.
    """

    def term(t: Term) -> Term:
        if not isinstance(t, Term) or t.kind != "bnode":
            return t
        digest = hashlib.blake2b(f"{graph}\x00{t.value}".encode(), digest_size=16).hexdigest()
        return Term(GENID + digest, "iri")

    out: list[Triple] = []
    for triple in triples:
        if isinstance(triple, tuple) and len(triple) == 3 and _has_bnode(triple):
            triple = (term(triple[0]), term(triple[1]), term(triple[2]))
        out.append(triple)  # malformed ones are reported by triple_n3
    return out


def count_query(graph: str) -> str:
    """A query counting the triples of one named graph (its dataset set by FROM NAMED)."""
    g = Term(graph, "iri").n3()
    return f"SELECT (COUNT(*) AS ?n) FROM NAMED {g} WHERE {{ GRAPH {g} {{ ?s ?p ?o }} }}"


def graph_exists_query(graph: str) -> str:
    """An ASK that is true when the named graph holds a triple."""
    g = Term(graph, "iri").n3()
    return f"ASK FROM NAMED {g} WHERE {{ GRAPH {g} {{ ?s ?p ?o }} }}"


def drop_update(graph: str) -> str:
    """``DROP SILENT GRAPH <graph>``."""
    return f"DROP SILENT GRAPH {Term(graph, 'iri').n3()}"


def parse_sparql_results(body: str | bytes, content_type: str) -> SparqlResult:
    """Parse SPARQL 1.1 results (JSON or XML, chosen by ``content_type``)."""
    if "xml" in content_type.lower():
        return _ask_as_boolean(parse_sparql_xml(body))
    return _ask_as_boolean(parse_sparql_json(body))


def _ask_as_boolean(result: SparqlResult) -> SparqlResult:
    """Virtuoso 7 answers an ASK as one row binding ``__ASK_RETVAL`` to 1 or 0."""
    if result.variables != ("__ASK_RETVAL",):
        return result
    values = [row["__ASK_RETVAL"].value for row in result.rows if "__ASK_RETVAL" in row]
    return SparqlResult(boolean=any(v not in ("0", "false") for v in values))


def parse_sparql_json(body: str | bytes) -> SparqlResult:
    """Parse ``application/sparql-results+json`` into a ``SparqlResult``."""
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise StoreError(f"malformed SPARQL JSON results: {exc}") from None
    if not isinstance(data, dict):
        raise StoreError("malformed SPARQL JSON results: not an object")
    if "boolean" in data:
        return SparqlResult(boolean=bool(data["boolean"]))
    names = tuple(data.get("head", {}).get("vars", []))
    bindings = data.get("results", {}).get("bindings", [])
    rows = tuple({k: _json_term(v) for k, v in b.items()} for b in bindings)
    return SparqlResult(variables=names, rows=rows)


def _json_term(node: dict[str, Any]) -> Term:
    kind, value = node.get("type"), str(node.get("value", ""))
    if kind == "uri":
        return Term(value, "iri")
    if kind == "bnode":
        return Term(value, "bnode")
    lang = node.get("xml:lang")
    if lang:
        return Term(value, "literal", lang=lang)
    return Term(value, "literal", _datatype(node.get("datatype")))


def _datatype(datatype: str | None) -> str | None:
    return None if datatype in (None, _XSD_STRING, _LANG_STRING) else datatype


def parse_sparql_xml(body: str | bytes) -> SparqlResult:
    """Parse ``application/sparql-results+xml`` into a ``SparqlResult``."""
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as exc:
        raise StoreError(f"malformed SPARQL XML results: {exc}") from None
    boolean = root.find(f"{_RES}boolean")
    if boolean is not None:
        return SparqlResult(boolean=(boolean.text or "").strip() == "true")
    names = tuple(v.get("name", "") for v in root.iter(f"{_RES}variable"))
    rows = tuple(_xml_row(r) for r in root.iter(f"{_RES}result"))
    return SparqlResult(variables=names, rows=rows)


def _xml_row(result: ElementTree.Element) -> dict[str, Term]:
    row: dict[str, Term] = {}
    for binding in result.findall(f"{_RES}binding"):
        node = next(iter(binding), None)
        if node is not None:
            row[binding.get("name", "")] = _xml_term(node)
    return row


def _xml_term(node: ElementTree.Element) -> Term:
    tag, text = node.tag.replace(_RES, ""), node.text or ""
    if tag == "uri":
        return Term(text, "iri")
    if tag == "bnode":
        return Term(text, "bnode")
    lang = node.get("{http://www.w3.org/XML/1998/namespace}lang")
    if lang:
        return Term(text, "literal", lang=lang)
    return Term(text, "literal", _datatype(node.get("datatype")))


def doc_ids_from(result: SparqlResult, graph_base: str) -> list[str]:
    """Sorted doc ids of the graph IRIs bound to ``?g`` that live under ``graph_base``."""
    names = (r["g"].value for r in result.rows if "g" in r and r["g"].kind == "iri")
    ids = {n[len(graph_base) :] for n in names if n.startswith(graph_base)}
    return sorted(i for i in ids if is_doc_id(i))


# -- the store --------------------------------------------------------------------------


class SparqlHttpStore(Closing):
    """A ``GraphStore`` over the SPARQL 1.1 Protocol.

    Args:
        query_url: The endpoint's query URL.
        update_url: Its update URL (default: ``query_url``).
        graph_base: Prefix of document graph IRIs.
        username: HTTP basic auth user (with ``password``).
        password: HTTP basic auth password; never in ``repr`` or logs.
        bearer_token: Sent as ``Authorization: Bearer ...`` instead of basic auth.
        auth: Any ``httpx.Auth`` (``httpx.DigestAuth(...)``, a custom token flow) or a
            ``(user, password)`` basic-auth pair, for every request; instead of
            ``username``/``password``/``bearer_token``. Prefer a read-only account.
        update_auth: Credentials for ``update_url`` only (same forms as ``auth``);
            default: those of the queries.
        timeout: Seconds per request (connect, read, write).
        retries: Extra attempts after a transient failure (connection error, HTTP
            429/502/503/504); other errors are raised at once.
        max_request_bytes: Upper bound of one ``INSERT DATA`` request.
        listing_ttl: Seconds the list of the store's graphs is kept for queries over
            many of them (``hybrid_rag._per_graph.scope_inside``); this object's own
            writes refresh it.

    Example:
        >>> store = SparqlHttpStore("http://localhost:7878/query",
        ...                         "http://localhost:7878/update")  # doctest: +SKIP
    """

    def __init__(
        self,
        query_url: str,
        update_url: str | None = None,
        *,
        graph_base: str = _vocab.DOC_GRAPH,
        username: str | None = None,
        password: str | None = None,
        bearer_token: str | None = None,
        auth: Auth | None = None,
        update_auth: Auth | None = None,
        timeout: float = 30.0,
        retries: int = 2,
        max_request_bytes: int = 1_000_000,
        listing_ttl: float = 5.0,
    ) -> None:
        if bearer_token and (username or password):
            raise ConfigurationError("give either username/password or bearer_token, not both")
        if auth is not None and (bearer_token or username or password):
            raise ConfigurationError("give either auth or username/password/bearer_token")
        if timeout <= 0 or retries < 0 or max_request_bytes < 1024 or listing_ttl < 0:
            raise ConfigurationError(
                "timeout > 0, retries >= 0, max_request_bytes >= 1024, listing_ttl >= 0"
            )
        self.query_url = query_url
        self.update_url = update_url or query_url
        self._graph_base = check_graph_base(graph_base)
        basic = (username or "", password or "") if username or password else None
        self._auth: Any = auth if auth is not None else basic
        self._bearer = bearer_token
        self._update_auth: Any = update_auth
        self._timeout, self._retries, self._max_bytes = timeout, retries, max_request_bytes
        self._listing = GraphListing(self._listed, ttl=listing_ttl)
        self._lock = threading.Lock()
        self._client: Any = None
        self._closed = False

    def __repr__(self) -> str:
        auth = _auth_kind(self._auth) or ("bearer" if self._bearer else None)
        update = _auth_kind(self._update_auth) or auth
        return (
            f"SparqlHttpStore({self.query_url!r}, {self.update_url!r}, auth={auth!r}, "
            f"update_auth={update!r})"
        )

    # -- http ------------------------------------------------------------------------

    def _http(self) -> Any:
        with self._lock:
            if self._closed:
                raise StoreError("SparqlHttpStore is closed")
            if self._client is None:
                self._client = self._make_client()
            return self._client

    def _make_client(self) -> Any:
        try:
            import httpx
        except ImportError as exc:
            raise ImportError(_INSTALL) from exc
        headers = {"Authorization": f"Bearer {self._bearer}"} if self._bearer else {}
        return httpx.Client(
            timeout=self._timeout, auth=self._auth, headers=headers, follow_redirects=True
        )

    def _post(self, url: str, data: dict[str, Any], accept: str | None = None) -> Any:
        import httpx

        client = self._http()
        headers = {"Accept": accept} if accept else {}
        update = url == self.update_url and "update" in data
        auth = self._update_auth if update and self._update_auth is not None else None
        extra: dict[str, Any] = {"auth": auth} if auth is not None else {}
        for attempt in range(self._retries + 1):
            last = attempt == self._retries
            try:
                response = client.post(url, data=data, headers=headers, **extra)
            except _transient_errors(httpx) as exc:
                if last:
                    raise StoreError(f"SPARQL endpoint unreachable: {type(exc).__name__}") from None
                log.warning("SPARQL request failed (%s); retrying", type(exc).__name__)
                delay = min(0.2 * 2**attempt, 2.0)
            except httpx.HTTPError as exc:  # a read timeout: the query is too slow
                raise StoreError(f"SPARQL request failed: {type(exc).__name__}") from None
            else:
                if response.status_code not in _TRANSIENT_STATUS or last:
                    return _checked(response)
                log.warning("SPARQL endpoint answered %s; retrying", response.status_code)
                delay = _retry_after(response, default=min(0.2 * 2**attempt, 2.0))
            time.sleep(delay)
        raise StoreError("SPARQL request failed")  # pragma: no cover - loop always returns

    def _select(self, sparql: str, graphs: Sequence[str] | None) -> SparqlResult:
        data: dict[str, Any] = {"query": sparql}
        if graphs is not None:
            data["default-graph-uri"] = list(graphs)
            data["named-graph-uri"] = list(graphs)
        accept = "application/sparql-results+json, application/sparql-results+xml;q=0.5"
        response = self._post(self.query_url, data, accept)
        return parse_sparql_results(response.content, response.headers.get("content-type", ""))

    def _update(self, update: str) -> None:
        self._post(self.update_url, {"update": update})

    # -- protocol --------------------------------------------------------------------

    def graph_iri(self, doc_id: str) -> str:
        """The named graph IRI of a document (``graph_base + doc_id``)."""
        return self._graph_base + check_doc_id(doc_id)

    def replace(self, doc_id: str, triples: Sequence[Triple]) -> int:
        """Make the document's graph hold exactly ``triples``; returns the triple count."""
        graph = self.graph_iri(doc_id)
        inserts = insert_requests(
            graph, skolemize(graph, check_triples(triples)), max_bytes=self._max_bytes
        )
        self._listing.forget()
        if len(inserts) == 1:
            self._update(drop_update(graph) + " ;\n" + inserts[0])
        else:
            for update in [drop_update(graph), *inserts]:
                self._update(update)
        self._listing.forget()
        return self.count(doc_id)

    def delete(self, doc_id: str) -> bool:
        """Drop the document's graph; ``False`` when it had none."""
        graph = self.graph_iri(doc_id)
        if not self._select(graph_exists_query(graph), None).boolean:
            return False
        self._listing.forget()
        self._update(drop_update(graph))
        return True

    def query(self, sparql: str, *, scope: Sequence[str]) -> SparqlResult:
        """Run a validated read-only query over exactly the graphs of ``scope``."""
        graphs = [self.graph_iri(d) for d in check_scope(scope)]
        validate_query(sparql, allowed_graphs=graphs)
        if not graphs:
            return SparqlResult()
        per = graph_variable(sparql) if len(graphs) > 1 else None
        if per is None:
            return self._select(with_dataset(sparql, graphs), graphs)
        text, keep = scope_inside(sparql, per, graphs, base=self._graph_base, listed=self._listing)
        return rows_from(self._select(text, None), per, keep)

    def _listed(self) -> list[str]:
        """The named graphs under ``graph_base`` (for ``scope_inside``)."""
        rows = self._select(listing_query(self._graph_base), None).rows
        return [r["g"].value for r in rows if "g" in r]

    def doc_ids(self) -> list[str]:
        """Sorted ids of documents with a graph under ``graph_base``."""
        return doc_ids_from(self._select(LIST_GRAPHS, None), self._graph_base)

    def count(self, doc_id: str) -> int:
        """Number of triples in the document's graph."""
        result = self._select(count_query(self.graph_iri(doc_id)), None)
        return int(result.rows[0]["n"].value) if result.rows else 0

    def close(self) -> None:
        """Close the HTTP client; idempotent."""
        with self._lock:
            client, self._client, self._closed = self._client, None, True
        if client is not None:
            client.close()


def _transient_errors(httpx: Any) -> tuple[type[Exception], ...]:
    """Failures before the server could act on the request, or a broken connection."""
    return (
        httpx.ConnectError,
        httpx.ConnectTimeout,
        httpx.PoolTimeout,
        httpx.RemoteProtocolError,
        httpx.WriteError,
    )


def _retry_after(response: Any, *, default: float) -> float:
    """Seconds to wait from a ``Retry-After`` header in seconds (capped), else ``default``."""
    value = response.headers.get("retry-after", "")
    try:
        return min(max(float(value), 0.0), _MAX_RETRY_AFTER)
    except ValueError:
        return default


def _auth_kind(auth: Any) -> str | None:
    """A secret-free name of a credential (for ``repr``)."""
    if auth is None:
        return None
    return "basic" if isinstance(auth, tuple) else type(auth).__name__


def _checked(response: Any) -> Any:
    if response.status_code >= 400:
        text = " ".join(response.text.split())[:500]
        raise StoreError(f"SPARQL engine error (HTTP {response.status_code}): {text}")
    return response
