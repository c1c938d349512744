"""What the KG chain's queries share: the fact templates, running a query with its
errors as data, and reading rows into facts (``hybrid_rag.ask.kg`` and
``hybrid_rag.ask._collect``)."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hybrid_rag._vocab import HR, RDFS_LABEL
from hybrid_rag._workers import Workers
from hybrid_rag.errors import (
    DamagedStoreError,
    HybridRAGError,
    QueryTimeoutError,
    StoreError,
    StoreLockedError,
)
from hybrid_rag.models import ChainError, Evidence, Fact, SparqlAttempt, Usage
from hybrid_rag.protocols import BoundedQueries, GraphStore
from hybrid_rag.rdf import SparqlResult, Term, iri, literal

if TYPE_CHECKING:
    from hybrid_rag.ask._aggregate import Grouped

__all__ = [
    "MAX_GENERATED_ROWS",
    "KGResult",
    "Stored",
    "fact_query",
    "humanise",
    "position",
    "row_fact",
    "run_query",
    "stored_value",
]

MAX_GENERATED_ROWS = 1000
"""The most rows an LLM-written query may return (its LIMIT is added or lowered)."""

_SELECT = "?fact ?doc ?subject ?label ?prop ?value ?status ?number ?unit ?page ?chunk ?quote"
_BODY = f"""
  ?fact a <{HR}Fact> ; <{HR}subject> ?subject ; <{HR}property> ?prop ; <{HR}value> ?value ;
        <{HR}status> ?status ; <{HR}doc> ?doc ; <{HR}page> ?page ; <{HR}quote> ?quote .
  ?subject <{RDFS_LABEL}> ?label .
  OPTIONAL {{ ?fact <{HR}number> ?number }}
  OPTIONAL {{ ?fact <{HR}unit> ?unit }}
  OPTIONAL {{ ?fact <{HR}chunk> ?chunk }}"""

_LEAN_SELECT = "?fact ?doc ?prop ?value ?status ?number ?unit ?page"
_LEAN_BODY = f"""
  ?fact <{HR}property> ?prop ; <{HR}status> ?status ; <{HR}doc> ?doc ; <{HR}page> ?page .
  OPTIONAL {{ ?fact <{HR}number> ?number }}
  OPTIONAL {{ ?fact <{HR}unit> ?unit }}"""


@dataclass(slots=True)
class KGResult:
    """What the KG chain found: facts, the SPARQL it ran, errors as data, LLM usage.

    ``notes`` are sentences about what a collection answer leaves out ("12 sheets do
    not state a flash point"), for its text; ``grouped`` is set for an aggregate question
    (``QuestionAnalysis.aggregate``): how the model's aggregate query grouped ``facts``,
    its members (``Grouped``).
    """

    facts: list[Fact] = field(default_factory=list)
    attempts: list[SparqlAttempt] = field(default_factory=list)
    errors: list[ChainError] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    notes: list[str] = field(default_factory=list)
    grouped: Grouped | None = None


def fact_query(
    props: Sequence[str],
    *,
    order: str | None = None,
    contains: Sequence[str] = (),
    facts: Sequence[str] = (),
    any_of: Sequence[str] = (),
    dated: bool = False,
    lean: bool = False,
) -> str:
    """The template SELECT over ``hr:Fact`` nodes; every input is escaped by construction.

    Args:
        props: property IRIs to restrict to (empty: all).
        order: ``"ASC"``/``"DESC"`` to sort on the typed number (facts without one dropped).
        contains: lower-case words every matching value must contain.
        facts: fact IRIs to restrict to (used to load provenance for LLM-found facts).
        any_of: lower-case strings one of which every matching value must contain.
        dated: only the values typed as dates.
        lean: select what membership reads (``_LEAN_SELECT``: no subject, quote or
            chunk), the value's filters next to the value, for a scan over many
            documents whose members' provenance is read afterwards by ``facts``.
    """
    parts = [f"SELECT {_LEAN_SELECT if lean else _SELECT} WHERE {{"]
    if facts:  # first, so the engine starts from the given nodes
        parts.append("  VALUES ?fact { " + " ".join(iri(f).n3() for f in facts) + " }")
    if props:  # before the body: oxigraph then starts from the property's facts (2-3x)
        parts.append("  VALUES ?prop { " + " ".join(iri(p).n3() for p in props) + " }")
    if lean:  # the value and its filters first: oxigraph then filters before it joins
        parts.append(f"  ?fact <{HR}value> ?value .")
    else:
        parts.append(_BODY)
    for word in contains:
        parts.append(f"  FILTER(CONTAINS(LCASE(STR(?value)), {literal(word).n3()}))")
    if any_of:
        either = " || ".join(f"CONTAINS(LCASE(STR(?value)), {literal(w).n3()})" for w in any_of)
        parts.append(f"  FILTER({either})")
    if lean:
        parts.append(_LEAN_BODY)
    if order:
        parts.append('  FILTER(BOUND(?number) && ?status = "stated")')
    if dated:
        parts.append('  FILTER(BOUND(?number) && STR(?unit) = "date")')
    parts.append("}")
    parts.append(f"ORDER BY {order}(?number) ?doc" if order else "ORDER BY ?doc ?page")
    return "\n".join(parts)


async def run_query(
    sparql: str,
    origin: str,
    *,
    graph: GraphStore,
    scope: Sequence[str],
    result: KGResult,
    workers: Workers,
    deadline: float | None = None,
    facts: bool = True,
) -> SparqlResult | None:
    """Run one query (abandoned at cancellation); errors become attempts and chain errors.

    With a ``deadline`` and a store that can stop a query, the query runs bounded. Its
    rows become ``result.facts`` unless ``facts`` is false (the caller reads them).
    """
    try:
        res = await workers.run(
            lambda: _query(graph, sparql, scope=scope, deadline=deadline), abandon_on_cancel=True
        )
    except HybridRAGError as exc:
        result.attempts.append(SparqlAttempt(query=sparql, origin=origin, error=str(exc)))  # type: ignore[arg-type]
        if isinstance(exc, QueryTimeoutError):
            result.errors.append(ChainError(chain="kg", kind="timeout", message=str(exc)))
            return None
        unreadable = isinstance(exc, StoreLockedError | DamagedStoreError) or (
            origin == "template" and isinstance(exc, StoreError)
        )
        if unreadable:  # an unreadable store is an error, never "no matching facts"
            result.errors.append(ChainError(chain="kg", kind=type(exc).__name__, message=str(exc)))
        return None
    result.attempts.append(SparqlAttempt(query=sparql, origin=origin, rows=len(res.rows)))  # type: ignore[arg-type]
    if facts:
        result.facts.extend(f for row in res.rows if (f := row_fact(row)) is not None)
    return res


@dataclass(frozen=True, slots=True)
class Stored:
    """A fact's value as the lean scan reads it (what ``members`` decides on)."""

    fact: str
    doc_id: str
    page: int
    predicate: str
    value: str
    number: float | None
    unit: str | None
    status: str


def stored_value(row: dict[str, Term]) -> Stored | None:
    if any(k not in row for k in ("fact", "doc", "prop", "value")):
        return None
    number = row["number"].to_python() if "number" in row else None
    status = row["status"].value if "status" in row else "stated"
    return Stored(
        fact=row["fact"].value,
        doc_id=row["doc"].value,
        page=int(row["page"].to_python()) if "page" in row else 0,
        predicate=re.split(r"[#/]", row["prop"].value)[-1],
        value=row["value"].value,
        number=float(number) if isinstance(number, (int, float)) else None,
        unit=row["unit"].value if "unit" in row else None,
        status="unavailable" if status == "unavailable" else "stated",
    )


def _query(
    graph: GraphStore, sparql: str, *, scope: Sequence[str], deadline: float | None
) -> SparqlResult:
    if deadline is None or not isinstance(graph, BoundedQueries):
        return graph.query(sparql, scope=scope)
    left = deadline - time.monotonic()
    if left <= 0:
        raise QueryTimeoutError("no time left for the query")
    return graph.query_bounded(sparql, scope=scope, timeout=left, max_rows=MAX_GENERATED_ROWS)


def row_fact(row: dict[str, Term]) -> Fact | None:
    need = ("doc", "subject", "label", "prop", "value", "page", "quote")
    if any(k not in row for k in need):
        return None
    prop = row["prop"].value
    number = row["number"].to_python() if "number" in row else None
    status = row["status"].value if "status" in row else "stated"
    doc = row["doc"].value
    return Fact(
        doc_id=doc,
        subject=row["label"].value,
        subject_iri=row["subject"].value,
        predicate=re.split(r"[#/]", prop)[-1],
        predicate_label=humanise(re.split(r"[#/]", prop)[-1]),
        value=row["value"].value,
        number=float(number) if isinstance(number, (int, float)) else None,
        unit=row["unit"].value if "unit" in row else None,
        status="unavailable" if status == "unavailable" else "stated",
        position=position(row["fact"].value) if "fact" in row else None,
        evidence=Evidence(
            doc_id=doc,
            page=max(1, int(row["page"].to_python())),
            chunk_id=row["chunk"].value if "chunk" in row else None,
            quote=row["quote"].value,
        ),
    )


_FACT_NUMBER = re.compile(r"-fact-(\d+)$")


def position(fact_iri: str) -> int | None:
    """Where the extractor read a fact: the number its IRI ends in (``ingest.triples``)."""
    m = _FACT_NUMBER.search(fact_iri)
    return int(m.group(1)) if m else None


def humanise(name: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).replace("_", " ").lower()
