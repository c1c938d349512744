"""A question about the whole collection, read from the graph with the work in the engine.

``hybrid_rag.ask._collection`` decides which facts make a document a member; this module
reads them, asking the store for as little as that decision needs:

* **Phrases** ("classified as Eye Irritation Category 2B"): the values that hold a term
  of the question are found through the term index (``hybrid_rag._terms``), a look-up,
  not a scan; a graph written before the index is scanned (``CONTAINS``) and its rows
  kept exactly as the index would. Membership of a phrase is a function of a value and
  its property, so the engine returns each distinct (property, value) once, not every
  document's copy; the members' facts are then read by their values, with their
  provenance, in one query (``VALUES (?prop ?value)``).
* **Bounds** ("melt above 1500 °C"): each document's first stated number of the asked
  property (the lowest page; on it, the first the extractor read) is found in the
  engine (``FILTER NOT EXISTS`` a lower page), and only the documents whose first page
  holds a number past the bound (loosened to cover a conversion of °F) come back; the
  exact test (``_typed_members``) runs on those rows. **Extremes** read the first
  numbers; **dates** are filtered to the asked span in the engine.
* Every query reads inside ``GRAPH ?g`` only (``hybrid_rag._per_graph``), so a store may
  say a large scope inside the query instead of listing its graphs as the dataset
  (oxigraph: no copy of the scope; HANA: no megabytes of ``FROM``).

Rows are read in one order, whatever the engine's: by document, page, then the order
in which the extractor read the facts (``position``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from hybrid_rag._terms import INDEX_VERSION, TERM, TERM_INDEX, scan_strings, value_terms
from hybrid_rag._vocab import HR, RDFS_LABEL
from hybrid_rag._workers import Workers
from hybrid_rag.ask._collection import (
    by_phrase,
    checks_codes,
    left_out,
    members,
    phrase_members,
    with_every_code,
)
from hybrid_rag.ask._kg_rows import (
    KGResult,
    Stored,
    position,
    row_fact,
    run_query,
    stored_value,
)
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.ask.grammar import DateSpan, Threshold
from hybrid_rag.models import ChainError, Fact
from hybrid_rag.protocols import GraphStore
from hybrid_rag.rdf import Term, iri, literal
from hybrid_rag.units import scale_of

__all__ = [
    "QUERY_CHARS",
    "Scan",
    "collect",
    "numbers_query",
    "pairs_query",
    "stated_values",
    "stating_query",
    "unindexed_query",
    "values_query",
]

T = TypeVar("T")

QUERY_CHARS = 60_000
"""The longest ``VALUES`` block one query carries (members by value, facts by IRI); more
are read in several queries (validation refuses queries over 100,000 characters)."""


@dataclass(frozen=True, slots=True)
class Scan:
    """What a collection question reads of every document in scope.

    Attributes:
        props: property IRIs the facts must have (empty: any).
        terms: index terms one of which the value must hold (empty: any value).
        bound: read each document's first stated number, kept where it may pass this.
        extreme: read each document's first stated number (``"min"``/``"max"``).
        period: only the stated dates in this span.
        either: property IRIs every value of which is read too, beside those the
            ``terms`` find (a concept's properties, or a property whose values say yes
            or no, beside the terms of the question's other words).
    """

    props: tuple[str, ...] = ()
    terms: tuple[str, ...] = ()
    bound: Threshold | None = None
    extreme: Literal["min", "max"] | None = None
    period: DateSpan | None = None
    either: tuple[str, ...] = ()


# --- queries (GRAPH ?g only; every input escaped by construction) -------------------

_LEAN = "?g ?fact ?doc ?prop ?value ?status ?number ?unit ?page"
_FULL = "?g ?fact ?doc ?subject ?label ?prop ?value ?status ?number ?unit ?page ?chunk ?quote"
_ABOUT = [
    f"?fact <{HR}property> ?prop ; <{HR}status> ?status ; <{HR}doc> ?doc ; <{HR}page> ?page .",
    f"OPTIONAL {{ ?fact <{HR}number> ?number }}",
    f"OPTIONAL {{ ?fact <{HR}unit> ?unit }}",
]
_PROVENANCE = [
    f"?fact a <{HR}Fact> ; <{HR}subject> ?subject ; <{HR}property> ?prop ; <{HR}value> ?value ;",
    f"      <{HR}status> ?status ; <{HR}doc> ?doc ; <{HR}page> ?page ; <{HR}quote> ?quote .",
    f"?subject <{RDFS_LABEL}> ?label .",
    f"OPTIONAL {{ ?fact <{HR}number> ?number }}",
    f"OPTIONAL {{ ?fact <{HR}unit> ?unit }}",
    f"OPTIONAL {{ ?fact <{HR}chunk> ?chunk }}",
]
_STATED = 'FILTER(?status = "stated")'


def _in_graphs(
    select: str, lines: Iterable[str], *, distinct: bool = False, after: str = ""
) -> str:
    body = "\n".join(f"    {line}" for line in lines)
    head = f"SELECT {'DISTINCT ' if distinct else ''}{select}"
    return f"{head} WHERE {{\n  GRAPH ?g {{\n{body}\n  }}\n}}{after}"


def _values(var: str, terms: Iterable[Term]) -> str:
    return f"VALUES ?{var} {{ {' '.join(t.n3() for t in terms)} }}"


def _matching(props: Sequence[str], terms: Sequence[str], scan: Sequence[str]) -> list[str]:
    """The patterns that find a fact by its property and its value's terms (look-up) or
    strings (scan), the value bound first."""
    lines = [_values("prop", map(iri, props))] if props else []
    if terms:
        lines += [_values("term", map(literal, terms)), f"?fact <{TERM}> ?term ."]
    lines.append(f"?fact <{HR}value> ?value .")
    if scan:
        either = " || ".join(f"CONTAINS(LCASE(STR(?value)), {literal(s).n3()})" for s in scan)
        lines.append(f"FILTER({either})")
    return lines


def values_query(
    props: Sequence[str] = (),
    *,
    terms: Sequence[str] = (),
    scan: Sequence[str] = (),
    stated: bool = False,
    period: DateSpan | None = None,
) -> str:
    """Lean rows (``_LEAN``) of the facts of ``props`` (any when empty) whose value holds
    one of ``terms`` (index) or contains one of ``scan``; only stated ones, or only the
    dates in ``period``, when asked."""
    lines = [*_matching(props, terms, scan), *_ABOUT]
    if stated or period is not None:
        lines.append(_STATED)
    if period is not None:
        lines.append(_in_span(period))
    return _in_graphs(_LEAN, lines, distinct=bool(terms))


def _in_span(period: DateSpan) -> str:
    """The filter of the typed dates in ``period`` (an open end is left out)."""
    tests = ["BOUND(?number)", 'STR(?unit) = "date"']
    if math.isfinite(period.start):
        tests.append(f"?number >= {period.start!r}")
    if math.isfinite(period.end):
        tests.append(f"?number < {period.end!r}")
    return f"FILTER({' && '.join(tests)})"


def pairs_query(
    props: Sequence[str] = (), *, terms: Sequence[str] = (), scan: Sequence[str] = ()
) -> str:
    """Each distinct (property, value) of the stated facts ``values_query`` finds."""
    lines = [
        *_matching(props, terms, scan),
        f'?fact <{HR}property> ?prop ; <{HR}status> "stated" .',
    ]
    return _in_graphs("?prop ?value", lines, distinct=True)


def numbers_query(
    prop: str,
    *,
    bound: Threshold | None = None,
    extreme: Literal["min", "max"] | None = None,
    top: int = 0,
    other_unit: bool = False,
    unit: str | None = None,
) -> str:
    """Lean rows of the stated numbers of ``prop``: all, or only those that may pass a
    ``bound`` (in the value's unit or in °C, so a number in either is kept), or the
    ``top`` highest (``extreme="max"``) or lowest, or (``other_unit``) those whose unit
    is not ``unit`` (``None``: those with a unit)."""
    lines = [
        _values("prop", [iri(prop)]),
        f"?fact <{HR}property> ?prop ; <{HR}status> ?status ; <{HR}number> ?number ;",
        f"      <{HR}page> ?page ; <{HR}value> ?value ; <{HR}doc> ?doc .",
        _STATED,
        f"OPTIONAL {{ ?fact <{HR}unit> ?unit }}",
    ]
    if bound is not None and _prefilters(bound):  # a superset: the exact test is ours
        loose = (min if bound.op == ">" else max)(bound.value, bound.in_celsius())
        lines.append(f"FILTER(?number {bound.op}= {loose!r})")
    if other_unit:
        other = (
            "BOUND(?unit)"
            if unit is None
            else f"(!BOUND(?unit) || STR(?unit) != {literal(unit).n3()})"
        )
        lines.append(f"FILTER({other})")
    after = (
        f"\nORDER BY {'DESC' if extreme == 'max' else 'ASC'}(?number) LIMIT {top}" if top else ""
    )
    return _in_graphs(_LEAN, lines, after=after)


_TEMPERATURES = frozenset([None, "°C", "°F", "K"])


def _prefilters(bound: Threshold) -> bool:
    """Whether the engine may keep only the numbers near a bound: one side, in no unit
    a temperature's (a value in °C or the bound's unit passes the looser of the two) or
    one of no scale (a value in another unit is no member); a span, or a unit of a scale
    a value may be printed in another unit of (kPa against mmHg), is read whole and
    tested by ``_typed_members``."""
    if bound.upper is not None:
        return False
    return bound.unit in _TEMPERATURES or scale_of(bound.unit or "") is None


def unindexed_query() -> str:
    """The graphs in scope whose facts carry no terms (written before the index)."""
    marker = f"{{ GRAPH ?g {{ ?x <{TERM_INDEX}> {literal(INDEX_VERSION).n3()} }} }}"
    return (
        f"SELECT DISTINCT ?g WHERE {{\n  GRAPH ?g {{ ?s <{RDFS_LABEL}> ?label }}\n"
        f"  MINUS {marker}\n}}"
    )


def _members_query(pairs: Sequence[tuple[Term, Term]]) -> str:
    rows = " ".join(f"({p.n3()} {v.n3()})" for p, v in pairs)
    return _in_graphs(_FULL, [f"VALUES (?prop ?value) {{ {rows} }}", *_PROVENANCE, _STATED])


def _provenance_query(facts: Sequence[str]) -> str:
    return _in_graphs(_FULL, [_values("fact", map(iri, facts)), *_PROVENANCE])


def _batches(items: Sequence[T], size: Callable[[T], int]) -> list[list[T]]:
    """``items`` cut so that the text of each batch stays under ``QUERY_CHARS``."""
    out: list[list[T]] = []
    used = QUERY_CHARS
    for item in items:
        n = size(item) + 8
        if used + n > QUERY_CHARS:
            out.append([])
            used = 0
        out[-1].append(item)
        used += n
    return out


# --- reading -----------------------------------------------------------------------


def _order(v: Stored) -> tuple[str, int, int]:
    return (v.doc_id, v.page, position(v.fact) or 0)


def stated_values(
    graph: GraphStore, props: Sequence[str], doc_ids: Sequence[str], *, terms: Sequence[str] = ()
) -> list[Stored]:
    """Every stated value of ``props`` in ``doc_ids`` (holding one of ``terms``, when
    given), in document, page and reading order: a look-up in the indexed graphs, a scan
    of the others."""
    if not props or not doc_ids:
        return []
    scope = list(doc_ids)
    if not terms:
        return _sorted_values(graph.query(values_query(props, stated=True), scope=scope).rows)
    old_graphs = {
        r["g"].value for r in graph.query(unindexed_query(), scope=scope).rows if "g" in r
    }
    old = [d for d in scope if graph.graph_iri(d) in old_graphs]
    new = [d for d in scope if graph.graph_iri(d) not in old_graphs]
    rows = (
        list(graph.query(values_query(props, terms=terms, stated=True), scope=new).rows)
        if new
        else []
    )
    if old:
        scan = values_query(props, scan=scan_strings(terms), stated=True)
        rows += _holding(graph.query(scan, scope=old).rows, terms)
    return _sorted_values(rows)


def _sorted_values(rows: Iterable[dict[str, Term]]) -> list[Stored]:
    return sorted((v for row in rows if (v := stored_value(row)) is not None), key=_order)


def _holding(rows: Iterable[dict[str, Term]], terms: Sequence[str]) -> list[dict[str, Term]]:
    """The scanned rows whose value holds one of ``terms`` (what the index finds)."""
    wanted = set(terms)
    return [r for r in rows if "value" in r and wanted & value_terms(r["value"].value)]


class _Failed(Exception):
    """A query failed; its error is recorded in the chain's result."""


# --- the flow ----------------------------------------------------------------------


@dataclass
class _Run:
    """One collection question's store calls, errors recorded in ``result``."""

    origin: str
    graph: GraphStore
    result: KGResult
    workers: Workers
    whole: Sequence[str] = ()  # the question's scope, whose graphs without the index are read
    unindexed: set[str] | None = None

    async def rows(self, sparql: str, scope: Sequence[str]) -> list[dict[str, Term]]:
        if not scope:
            return []
        res = await run_query(sparql, self.origin, graph=self.graph, scope=scope,
                              result=self.result, workers=self.workers, facts=False)  # fmt: skip
        if res is None:
            raise _Failed
        return list(res.rows)

    async def split(self, scope: Sequence[str]) -> tuple[list[str], list[str]]:
        """``(indexed, unindexed)`` documents of ``scope``; the graphs without the index
        are asked for once (a later scope is a part of the first)."""
        if self.unindexed is None:
            res = await self.rows(unindexed_query(), self.whole or scope)
            self.unindexed = {r["g"].value for r in res if "g" in r}
        old_graphs = self.unindexed
        old = [d for d in scope if self.graph.graph_iri(d) in old_graphs]
        gone = set(old)
        return [d for d in scope if d not in gone], old

    async def pool(self, scan: Scan, scope: Sequence[str], *, pairs: bool) -> list[dict[str, Term]]:
        """The rows (or distinct pairs) of the facts ``scan`` finds: the indexed graphs
        by look-up, the others by a scan kept to what the index would find."""
        make = pairs_query if pairs else _stated_rows
        either = await self.rows(make(scan.either), scope) if scan.either else []
        if not scan.terms:
            return [*either, *await self.rows(make(scan.props), scope)]
        new, old = await self.split(scope)
        rows = await self.rows(make(scan.props, terms=scan.terms), new)
        if old:
            scanned = await self.rows(make(scan.props, scan=scan_strings(scan.terms)), old)
            rows += _holding(scanned, scan.terms)
        return [*either, *rows]

    async def facts(self, wanted: Sequence[str], scope: Sequence[str]) -> dict[str, Fact]:
        """The facts (with provenance) of the given fact IRIs."""
        found: dict[str, Fact] = {}
        for batch in _batches(list(dict.fromkeys(wanted)), len):
            for row in await self.rows(_provenance_query(batch), scope):
                if (f := row_fact(row)) is not None:
                    found.setdefault(row["fact"].value, f)
        return found


def _stated_rows(
    props: Sequence[str] = (), *, terms: Sequence[str] = (), scan: Sequence[str] = ()
) -> str:
    return values_query(props, terms=terms, scan=scan, stated=True)


async def collect(
    scan: Scan,
    origin: str,
    a: QuestionAnalysis,
    *,
    graph: GraphStore,
    scope: Sequence[str],
    result: KGResult,
    workers: Workers,
    whole: Sequence[str] = (),
) -> None:
    """Add a collection question's members in ``scope`` to ``result.facts`` (see the
    module docstring); a failing store leaves an error, never a partial list. ``whole``
    is the question's scope when ``scope`` is a part of it (its graphs without the
    index are asked for once, over the whole: a scope that is all the store is the
    cheapest to read)."""
    run = _Run(origin, graph, result, workers, whole)
    try:
        if by_phrase(a) and not (scan.bound or scan.extreme or scan.period):
            facts = await _by_phrase(run, scan, a, scope)
        else:
            facts = await _by_rows(run, scan, a, scope)
    except _Failed:
        if not result.errors:
            message = "the store failed while reading the members"
            result.errors.append(ChainError(chain="kg", kind="StoreError", message=message))
        return
    result.facts.extend(facts)


async def _by_rows(run: _Run, scan: Scan, a: QuestionAnalysis, scope: Sequence[str]) -> list[Fact]:
    """Members decided on lean rows, then their provenance."""
    if scan.bound is not None:
        rows = await _bounded(run, scan.props[0], scan.bound, scope)
    elif scan.extreme is not None:
        rows = await _extreme(run, scan.props[0], scan.extreme, a, scope)
    elif scan.period is not None:
        rows = await run.rows(values_query(scan.props, period=scan.period), scope)
    elif scan.terms or scan.either:
        rows = await run.pool(scan, scope, pairs=False)
    else:
        rows = await run.rows(values_query(scan.props), scope)
    values = _sorted_values(rows)
    chosen = members(a, values)
    counted = None
    if (scan.bound is not None or scan.extreme is not None) and scan.props:
        counted = await _stating(run, scan.props[0], scope)  # the candidates read: not all
    run.result.notes = left_out(a, values, chosen, scope=len(scope), stating=counted)
    found = await run.facts([v.fact for v in chosen], scope)
    return [found[v.fact] for v in chosen if v.fact in found]


def stating_query(prop: str) -> str:
    """How many documents state a value of ``prop`` (counted in the engine)."""
    lines = [
        _values("prop", [iri(prop)]),
        f'?fact <{HR}property> ?prop ; <{HR}status> "stated" ; <{HR}doc> ?doc .',
    ]
    return (
        "SELECT (COUNT(DISTINCT ?doc) AS ?n) WHERE {\n  GRAPH ?g {\n"
        + "\n".join(f"    {line}" for line in lines)
        + "\n  }\n}"
    )


async def _stating(run: _Run, prop: str, scope: Sequence[str]) -> int | None:
    rows = await run.rows(stating_query(prop), scope)
    n = rows[0]["n"].to_python() if rows and "n" in rows[0] else None
    return int(n) if isinstance(n, int | float) else None


async def _bounded(
    run: _Run, prop: str, bound: Threshold, scope: Sequence[str]
) -> list[dict[str, Term]]:
    """The stated numbers of ``prop`` in the documents with one that may pass ``bound``:
    a member's first number passes, so its document is among them, and all its numbers
    are read to find which is its first."""
    near = await run.rows(numbers_query(prop, bound=bound), scope)
    return await run.rows(values_query([prop]), _docs(near))  # a denial of it too


EXTREME_FIRST = 64
"""The highest (or lowest) numbers an extreme reads first; four times more each round
while the best first number of their documents could be tied by another document."""


async def _extreme(
    run: _Run, prop: str, extreme: Literal["min", "max"], a: QuestionAnalysis, scope: Sequence[str]
) -> list[dict[str, Term]]:
    """The stated numbers of ``prop`` in the documents that hold the extreme of the
    documents' first numbers, and of those whose first number is in another unit (no
    order across units: ``_typed_members`` then names none).

    The ``top`` highest numbers name candidate documents; when the best of their first
    numbers beats the last of the ``top``, no other document's first number reaches it.
    """
    top = EXTREME_FIRST
    while True:
        best = await run.rows(numbers_query(prop, extreme=extreme, top=top), scope)
        rows = await run.rows(values_query([prop]), _docs(best))  # a denial of it too
        chosen = members(a, _sorted_values(rows))
        last = best[-1]["number"].to_python() if best else None
        if len(best) < top or (chosen and _beats(chosen[0].number, last, extreme)):
            break
        top *= 4
    if not chosen:
        return rows
    other = await run.rows(numbers_query(prop, other_unit=True, unit=chosen[0].unit), scope)
    others = await run.rows(numbers_query(prop), _docs(other)) if other else []
    return [*rows, *others]


def _beats(best: float | None, last: object, extreme: str) -> bool:
    """Whether ``best`` is strictly past ``last``, the last of the numbers read: no
    other document's number can then tie it."""
    if best is None or not isinstance(last, int | float):
        return False
    return best > last if extreme == "max" else best < last


def _docs(rows: Sequence[dict[str, Term]]) -> list[str]:
    return list(dict.fromkeys(r["doc"].value for r in rows if "doc" in r))


@dataclass(frozen=True, slots=True)
class _Pair:
    """A distinct (property, value) of the pool, as membership reads a value."""

    prop: Term
    term: Term
    predicate: str
    value: str
    doc_id: str = ""
    number: float | None = None
    unit: str | None = None
    status: str = "stated"


async def _by_phrase(
    run: _Run, scan: Scan, a: QuestionAnalysis, scope: Sequence[str]
) -> list[Fact]:
    """Members of a phrase: decided on the distinct (property, value) pairs, read by
    their values, then (when the question gives codes) kept in the documents that print
    every code."""
    pairs = {
        (r["prop"], r["value"]): _Pair(
            r["prop"], r["value"], _local(r["prop"].value), r["value"].value
        )
        for r in await run.pool(scan, scope, pairs=True)
        if "prop" in r and "value" in r
    }
    chosen = phrase_members(a, list(pairs.values()))
    facts: dict[str, Fact] = {}
    for batch in _batches(chosen, lambda x: len(x.prop.value) + len(x.value)):
        for row in await run.rows(_members_query([(x.prop, x.term) for x in batch]), scope):
            if (f := row_fact(row)) is not None:
                facts.setdefault(row["fact"].value, f)
    found = sorted(facts.values(), key=lambda f: (f.doc_id, f.evidence.page, f.position or 0))
    if not found or not checks_codes(a):
        return found
    docs = list(dict.fromkeys(f.doc_id for f in found))
    values = _sorted_values(await run.pool(scan, docs, pairs=False))
    return with_every_code(a, found, values)


def _local(prop: str) -> str:
    return prop.replace("#", "/").rsplit("/", 1)[-1]
