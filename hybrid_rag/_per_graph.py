"""Queries that read every triple inside ``GRAPH ?g``: a scope without a dataset list.

A store pins a query's dataset to the scope's graphs (``GraphStore.query``). For a
scope of thousands of documents that list is the cost: oxigraph evaluates a default
graph given as N graphs with N look-ups per pattern, and a remote store (HANA, a SPARQL
endpoint) receives ``FROM <g> ... FROM NAMED <g> ...`` for each, megabytes of query text.

A query whose triple patterns all sit inside ``GRAPH ?g`` blocks of one variable reads
nothing but the named graphs ``?g`` binds, never the default graph. Its scope can be
said inside the query instead: ``VALUES ?g { <g1> ... }`` (exact, one term per scoped
graph) or, where the scope is every graph under the store's base but a few,
``FILTER(STRSTARTS(STR(?g), base) && ?g NOT IN (...))``. ``graph_variable`` says
whether a query has that shape (read on the parse the validator made); the two
``with_graph_*`` functions write the scope into it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hybrid_rag.errors import SparqlValidationError
from hybrid_rag.rdf import SparqlResult
from hybrid_rag.sparql import _analyse, _tokens, sparql_iri, sparql_literal

__all__ = [
    "VALUES_AT_MOST",
    "GraphListing",
    "PerGraph",
    "graph_variable",
    "listing_query",
    "rows_from",
    "scope_inside",
    "with_graph_filter",
    "with_graph_values",
]

VALUES_AT_MOST = 256
"""The most graphs a remote store lists in ``VALUES ?g``; a larger scope is said as the
store's base less the graphs outside it, when those are fewer (``scope_inside``)."""


@dataclass(frozen=True, slots=True)
class PerGraph:
    """A query whose every triple pattern is inside ``GRAPH ?<var>``: the variable, and
    whether the query projects it (each row then says the graph it came from)."""

    var: str
    projected: bool


def graph_variable(sparql: str) -> PerGraph | None:
    """The graph variable of a validated query that reads only inside ``GRAPH ?var``
    blocks of that one variable and names no graph (no ``FROM``, no ``GRAPH <iri>``);
    ``None`` for any other query, and for one with a subquery (evaluated on its own,
    before a scope written into the outer query applies)."""
    problem, parsed = _analyse(sparql)
    if problem is not None or parsed.algebra is None or parsed.graphs:
        return None
    found: set[str] = set()
    if not _inside_graphs(parsed.algebra, None, found) or len(found) != 1:
        return None
    (var,) = found
    select = getattr(parsed.algebra, "name", None) == "SelectQuery"
    projected = select and any(str(v) == var for v in dict.get(parsed.algebra, "PV") or ())
    return PerGraph(var, projected)


def _inside_graphs(node: Any, graph: str | None, found: set[str]) -> bool:
    """Whether every triple pattern below ``node`` is inside a ``GRAPH ?var`` block
    (collecting the variables in ``found``)."""
    from rdflib.term import Variable

    stack: list[tuple[Any, str | None]] = [(node, graph)]
    while stack:
        item, inside = stack.pop()
        name = getattr(item, "name", None)
        if item is not node and _subquery(item, name):
            return False  # evaluated on its own, before a scope written outside it applies
        if name in ("Graph", "GraphGraphPattern"):
            term = dict.get(item, "term")
            if not isinstance(term, Variable):
                return False
            inside = str(term)
            found.add(inside)
        elif name in ("BGP", "TriplesBlock") and inside is None and _has_triples(item):
            return False
        if isinstance(item, dict):
            stack.extend((v, inside) for k, v in item.items() if k not in ("_vars", "term"))
        elif isinstance(item, list | tuple) or type(item).__name__ == "ParseResults":
            stack.extend((v, inside) for v in item)
    return True


def _subquery(node: Any, name: str | None) -> bool:
    """Whether an algebra (or, inside EXISTS, parse-tree) node is a sub-SELECT; an inline
    ``VALUES`` block is ``ToMultiSet`` too, over ``values``, and is no subquery."""
    if name == "ToMultiSet":
        return getattr(dict.get(node, "p"), "name", None) != "values"
    return name in ("SubSelect", "SelectQuery")


def _has_triples(node: Any) -> bool:
    triples = dict.get(node, "triples")
    return bool(triples) if triples is not None else True


def with_graph_values(sparql: str, var: str, graphs: Sequence[str]) -> str:
    """The query with ``VALUES ?var { <g> ... }`` first in its WHERE group: ``?var``
    binds only the given graphs.

    Raises:
        SparqlValidationError: ``graphs`` is empty, or the query has no WHERE group.
    """
    if not graphs:
        raise SparqlValidationError("a scope needs at least one graph")
    values = " ".join(sparql_iri(g) for g in dict.fromkeys(graphs))
    open_at, _close_at = _where_group(sparql)
    return f"{sparql[: open_at + 1]}\n  VALUES ?{var} {{ {values} }}{sparql[open_at + 1 :]}"


def with_graph_filter(sparql: str, var: str, *, base: str | None, excluded: Sequence[str]) -> str:
    """The query with a FILTER last in its WHERE group that keeps the graphs whose IRI
    starts with ``base`` (any, for ``None``) and is none of ``excluded``.

    Raises:
        SparqlValidationError: the query has no WHERE group.
    """
    tests = [] if base is None else [f"STRSTARTS(STR(?{var}), {sparql_literal(base)})"]
    if excluded:
        tests.append(f"?{var} NOT IN ({', '.join(sparql_iri(g) for g in excluded)})")
    test = " && ".join(tests) or "true"
    _open_at, close_at = _where_group(sparql)
    return f"{sparql[:close_at]}  FILTER({test})\n{sparql[close_at:]}"


def _where_group(sparql: str) -> tuple[int, int]:
    """Offsets of the braces that open and close the query's WHERE group."""
    depth, form_seen, open_at = 0, False, -1
    for tok in _tokens(sparql):
        if tok.kind == "word" and tok.text.upper() in ("SELECT", "ASK") and depth == 0:
            form_seen = True
        elif tok.text == "{" and form_seen:
            if depth == 0:
                open_at = tok.start
            depth += 1
        elif tok.text == "}" and open_at >= 0:
            depth -= 1
            if depth == 0:
                return open_at, tok.start
    raise SparqlValidationError("no SELECT or ASK query with a WHERE group found")


def listing_query(base: str) -> str:
    """The named graphs whose IRI starts with ``base`` (``?g``)."""
    return (
        "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } "
        f"FILTER(STRSTARTS(STR(?g), {sparql_literal(base)})) }}"
    )


def scope_inside(
    sparql: str,
    per: PerGraph,
    graphs: Sequence[str],
    *,
    base: str,
    listed: Callable[[], Sequence[str]],
) -> tuple[str, frozenset[str] | None]:
    """A per-graph query with its scope written into it, for a store that would
    otherwise send the scope as ``FROM`` lists; and the graphs its rows may come from
    when the store must check them (``rows_from``), else ``None``.

    Up to ``VALUES_AT_MOST`` graphs, and whenever the store holds more graphs under
    ``base`` outside the scope than in it, the scope is ``VALUES ?g`` (exact). Else it
    is every graph under ``base`` less those outside the scope (``listed()``, read now):
    a few names instead of thousands. A graph created after that listing (a document
    still being written, in no scope yet) is then not excluded by the query; its rows
    are dropped by ``rows_from`` when the query projects ``?g`` (an aggregate over
    graphs, which does not, may count it while it is being written).
    """
    if len(graphs) <= VALUES_AT_MOST:
        return with_graph_values(sparql, per.var, graphs), None
    scoped = frozenset(graphs)
    excluded = sorted(g for g in listed() if g.startswith(base) and g not in scoped)
    if len(excluded) >= len(scoped) or not all(g.startswith(base) for g in scoped):
        return with_graph_values(sparql, per.var, graphs), None
    return with_graph_filter(sparql, per.var, base=base, excluded=excluded), scoped


def rows_from(result: SparqlResult, per: PerGraph, keep: frozenset[str] | None) -> SparqlResult:
    """``result`` without the rows of graphs outside ``keep`` (``None``: all kept)."""
    if keep is None or not per.projected:
        return result
    rows = tuple(r for r in result.rows if per.var in r and r[per.var].value in keep)
    return SparqlResult(variables=result.variables, rows=rows, boolean=result.boolean)


class GraphListing:
    """A remote store's graphs under its base (``listing_query``), read at most once
    every ``ttl`` seconds and again after the store's own writes (``forget``).

    A graph another process creates meanwhile is one no scope holds yet (a document
    being written: its catalog entry comes last); ``rows_from`` drops its rows.
    """

    def __init__(self, read: Callable[[], list[str]], *, ttl: float) -> None:
        self._read = read
        self._ttl = ttl
        self._lock = threading.Lock()
        self._graphs: list[str] | None = None
        self._at = 0.0

    def __call__(self) -> list[str]:
        """The graphs, read now when the last reading is older than ``ttl``."""
        with self._lock:
            fresh = self._graphs is not None and time.monotonic() - self._at < self._ttl
            if fresh and self._graphs is not None:
                return self._graphs
        graphs = self._read()
        with self._lock:
            self._graphs, self._at = graphs, time.monotonic()
        return graphs

    def forget(self) -> None:
        """Read the graphs again next time (the store wrote one)."""
        with self._lock:
            self._graphs = None
