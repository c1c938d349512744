"""SPARQL safety: read-only validation, escaping helpers and dataset rewriting.

Pure functions, no I/O. rdflib (slow to import) is imported lazily inside the
functions that need it, so ``import hybrid_rag`` stays light.

* :func:`validate_query` parses a query with rdflib and rejects anything that is not a
  read-only ``SELECT``/``ASK``, any ``SERVICE`` clause, and (when ``allowed_graphs`` is
  given) any ``FROM``/``FROM NAMED``/``GRAPH <iri>`` naming a graph outside it.
* :func:`sparql_literal` and :func:`sparql_iri` escape values for query templates.
* :func:`with_dataset` pins a query's dataset to given graphs by rewriting its ``FROM``
  clauses, for remote stores that cannot take a protocol dataset.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Iterator, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from hybrid_rag.errors import SparqlValidationError
from hybrid_rag.rdf import Term, literal

__all__ = ["sparql_iri", "sparql_literal", "validate_query", "with_dataset"]

_READ_ONLY_FORMS = {"SelectQuery": "SELECT", "AskQuery": "ASK"}
_MAX_QUERY_CHARS = 100_000
_PARSE_LOCK = threading.Lock()  # pyparsing's packrat cache is shared state


def validate_query(sparql: str, *, allowed_graphs: Collection[str] | None = None) -> str:
    """Check that ``sparql`` is a safe, read-only query and return it unchanged.

    Args:
        sparql: The query text.
        allowed_graphs: Graph IRIs that ``FROM``, ``FROM NAMED`` and ``GRAPH <iri>`` may
            name. ``None`` allows any graph (the store enforces the dataset anyway).

    Returns:
        The query text, unchanged.

    Raises:
        SparqlValidationError: The query does not parse, is an update, is not a
            ``SELECT``/``ASK``, uses ``SERVICE`` or names a graph outside
            ``allowed_graphs``. The message names the problem.
    """
    if not isinstance(sparql, str) or not sparql.strip():
        raise SparqlValidationError("empty SPARQL query")
    if len(sparql) > _MAX_QUERY_CHARS:
        raise SparqlValidationError(f"SPARQL query too long ({len(sparql)} characters)")
    problem, graphs = _analyse(sparql)
    if problem is not None:
        raise SparqlValidationError(problem)
    if allowed_graphs is not None:
        outside = sorted(graphs.difference(allowed_graphs))
        if outside:
            raise SparqlValidationError(f"graph <{outside[0]}> is outside the query scope")
    return sparql


@lru_cache(maxsize=1024)
def _analyse(sparql: str) -> tuple[str | None, frozenset[str]]:
    """(problem or ``None``, graph IRIs the query names); cached, rdflib parsing is slow."""
    with _PARSE_LOCK:
        algebra, problem = _parse(sparql)
    if problem is not None:
        return problem, frozenset()
    form = _READ_ONLY_FORMS.get(getattr(algebra, "name", ""))
    if form is None:
        kind = str(getattr(algebra, "name", "unknown")).replace("Query", "").upper()
        return f"only read-only SELECT or ASK queries are allowed, got {kind}", frozenset()
    return _check_tree(algebra)


def _parse(sparql: str) -> tuple[Any, str | None]:
    """Parse and translate with rdflib; returns (algebra, problem)."""
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        parsed = parseQuery(sparql)
    except Exception as exc:  # pyparsing raises ParseException; rdflib others
        if _is_update(sparql):
            return None, "SPARQL update rejected: the query is not read-only (SELECT or ASK only)"
        return None, f"malformed SPARQL query: {_first_line(exc)}"
    try:
        return translateQuery(parsed).algebra, None
    except Exception as exc:  # rdflib raises plain Exception for semantic errors
        return None, f"invalid SPARQL query: {_first_line(exc)}"


def _is_update(sparql: str) -> bool:
    """Whether rdflib parses the text as a SPARQL update."""
    from rdflib.plugins.sparql.parser import parseUpdate

    try:
        parseUpdate(sparql)
    except Exception:
        return any(_is_kw(tok, *_UPDATE_WORDS) for tok in _tokens(sparql))
    return True


_UPDATE_WORDS = ("INSERT", "DELETE", "LOAD", "CLEAR", "CREATE", "DROP", "COPY", "MOVE", "ADD")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _check_tree(algebra: Any) -> tuple[str | None, frozenset[str]]:
    """Walk the algebra: reject SERVICE, collect the graph IRIs the query names."""
    graphs: set[str] = set()
    for node in _walk(algebra):
        name = getattr(node, "name", None)
        if name == "ServiceGraphPattern":
            return "SERVICE is not allowed in queries (federated calls are disabled)", frozenset()
        graphs.update(_named_graphs(node, name))
    return None, frozenset(graphs)


def _named_graphs(node: Any, name: str | None) -> Iterator[str]:
    """IRIs a node names as a graph (GRAPH <iri>, FROM, FROM NAMED)."""
    from rdflib.term import Variable

    # CompValue.get returns the key itself for a missing key: use dict.get.
    # EXISTS bodies stay untranslated (GraphGraphPattern) in rdflib's algebra.
    if name in ("Graph", "GraphGraphPattern"):
        term = dict.get(node, "term")
        if not isinstance(term, Variable):
            yield str(term)
    elif name == "DatasetClause":
        for key in ("default", "named"):
            term = dict.get(node, key)
            if term is not None:
                yield str(term)


def _walk(root: Any) -> Iterator[Any]:
    """Every nested value of an rdflib parse/algebra tree (dicts and lists)."""
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, dict):
            stack.extend(v for k, v in node.items() if k != "_vars")
        elif isinstance(node, list | tuple | set) or type(node).__name__ == "ParseResults":
            stack.extend(node)


def sparql_literal(
    value: str | int | float | bool, *, datatype: str | None = None, lang: str | None = None
) -> str:
    """A SPARQL literal for ``value`` with every special character escaped.

    Args:
        value: Text, or a Python number/boolean (gets its XSD datatype).
        datatype: Datatype IRI for a text value.
        lang: Language tag for a text value (``en``, ``de-CH``).

    Raises:
        SparqlValidationError: ``lang`` is not a valid language tag.
    """
    if lang is not None:
        if not re.fullmatch(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*", lang):
            raise SparqlValidationError(f"invalid language tag {lang!r}")
        return Term(str(value), "literal", lang=lang).n3()
    return literal(value, datatype).n3()


def sparql_iri(iri: str) -> str:
    """A SPARQL IRI reference ``<...>`` with characters illegal in IRIs percent-escaped.

    Raises:
        SparqlValidationError: ``iri`` is empty or not absolute (no scheme).
    """
    if not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", iri or ""):
        raise SparqlValidationError(f"not an absolute IRI: {iri!r}")
    return Term(iri, "iri").n3()


# --- tokenizer (for with_dataset) -------------------------------------------------------


class _Tok(NamedTuple):
    kind: str
    text: str
    start: int
    end: int


_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n\r]*)
  | (?P<string>'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
              |'(?:[^'\\\n\r]|\\.)*'|"(?:[^"\\\n\r]|\\.)*")
  | (?P<iri><[^<>"{}|^`\\\x00-\x20]*>)
  | (?P<var>[?$][A-Za-z0-9_\u00B7-\uFFFF]+)
  | (?P<word>[A-Za-z_\u00C0-\uFFFF][A-Za-z0-9_.\-\u00B7-\uFFFF]*(?::[^\s{}()\[\],;<>"']*)?
             |:[^\s{}()\[\],;<>"']*)
  | (?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)


def _tokens(sparql: str) -> list[_Tok]:
    """Split a query into tokens; strings, comments and IRIs are single tokens."""
    out: list[_Tok] = []
    for m in _TOKEN_RE.finditer(sparql):
        kind = m.lastgroup or "punct"
        if kind != "ws":
            out.append(_Tok(kind, m.group(), m.start(), m.end()))
    return out


def _is_kw(tok: _Tok, *words: str) -> bool:
    return tok.kind == "word" and ":" not in tok.text and tok.text.upper() in words


def _dataset_spans(toks: list[_Tok]) -> tuple[list[tuple[int, int]], int]:
    """Spans of existing FROM clauses and the offset where new clauses go."""
    spans: list[tuple[int, int]] = []
    depth, form_seen, i = 0, False, 0
    while i < len(toks):
        tok = toks[i]
        if _is_kw(tok, "SELECT", "ASK") and depth == 0:
            form_seen = True
        elif _is_kw(tok, "CONSTRUCT", "DESCRIBE") and depth == 0:
            raise SparqlValidationError("only read-only SELECT or ASK queries are allowed")
        elif _is_kw(tok, "FROM") and depth == 0:
            j = i + 2 if i + 1 < len(toks) and _is_kw(toks[i + 1], "NAMED") else i + 1
            if j >= len(toks) or toks[j].kind not in ("iri", "word"):
                raise SparqlValidationError("malformed FROM clause")
            spans.append((tok.start, toks[j].end))
            i = j
        elif tok.text == "(":
            depth += 1
        elif tok.text == ")":
            depth -= 1
        elif form_seen and depth == 0 and (tok.text == "{" or _is_kw(tok, "WHERE")):
            return spans, tok.start
        i += 1
    raise SparqlValidationError("no SELECT or ASK query with a WHERE clause found")


def with_dataset(sparql: str, graphs: Sequence[str]) -> str:
    """Pin a read-only query's dataset to exactly ``graphs``.

    Removes every ``FROM``/``FROM NAMED`` clause of the query and inserts
    ``FROM <g>`` and ``FROM NAMED <g>`` for each graph before its ``WHERE`` clause.
    Comments, strings and IRIs in the query are never touched. Meant for stores that
    cannot take a protocol dataset (HANA, plain SPARQL endpoints); validate first.

    Args:
        sparql: A validated SELECT or ASK query.
        graphs: Graph IRIs the query may see; must not be empty (a query without
            FROM would see the whole store).

    Returns:
        The rewritten query.

    Raises:
        SparqlValidationError: ``graphs`` is empty, a graph IRI is invalid, or the
            query has no recognisable SELECT/ASK ... WHERE structure.
    """
    if not graphs:
        raise SparqlValidationError("with_dataset needs at least one graph")
    spans, insert_at = _dataset_spans(_tokens(sparql))
    iris = list(dict.fromkeys(sparql_iri(g) for g in graphs))
    clause = " ".join([*(f"FROM {g}" for g in iris), *(f"FROM NAMED {g}" for g in iris)])
    pieces: list[str] = []
    pos = 0
    for start, end in spans:
        pieces.append(sparql[pos:start])
        pos = end
    pieces.append(sparql[pos:insert_at])
    pieces.append(clause + "\n")
    pieces.append(sparql[insert_at:])
    return "".join(pieces)
