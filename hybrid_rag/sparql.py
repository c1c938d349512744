"""SPARQL safety: read-only validation, escaping helpers and dataset rewriting.

Pure functions, no I/O. rdflib (slow to import) is imported lazily inside the
functions that need it, so ``import hybrid_rag`` stays light.

* ``validate_query`` parses a query with rdflib and rejects anything that is not a
  read-only ``SELECT``/``ASK``, any ``SERVICE`` clause, (when ``allowed_graphs`` is
  given) any ``FROM``/``FROM NAMED``/``GRAPH <iri>`` naming a graph outside it, any
  function that is not a SPARQL 1.1 built-in, an XSD cast or on the allow-list
  (``SAFE_FUNCTIONS``, ``allow_functions``), any vendor IRI (``bif:``,
  ``sql:``), and any ``\\u``/``\\U`` escape whose meaning differs between engines.
* ``check_structure`` adds the checks for LLM-written queries: no cartesian
  products of unrelated patterns, and a row cap (``LIMIT``) on every ``SELECT``.
* ``aggregate_members`` turns an aggregate ``SELECT`` (``COUNT``, ``GROUP BY`` ...)
  into the query for the solutions it aggregates, so that each member can be cited.
* ``sparql_literal`` and ``sparql_iri`` escape values for query templates.
* ``with_dataset`` pins a query's dataset to given graphs by rewriting its ``FROM``
  clauses, for remote stores that cannot take a protocol dataset.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Collection, Iterator, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from hybrid_rag.errors import ConfigurationError, InputError, SparqlValidationError
from hybrid_rag.rdf import XSD, Term, literal

__all__ = [
    "SAFE_FUNCTIONS",
    "AggregateMembers",
    "aggregate_members",
    "allow_functions",
    "check_structure",
    "sparql_iri",
    "sparql_literal",
    "validate_query",
    "with_dataset",
]

_READ_ONLY_FORMS = {"SelectQuery": "SELECT", "AskQuery": "ASK"}
_MAX_QUERY_CHARS = 100_000
_PARSE_LOCK = threading.Lock()  # pyparsing's packrat cache is shared state

#: Function IRIs a query may call besides the SPARQL 1.1 built-ins (``STRLEN``,
#: ``REGEX``, ``COUNT`` ... are keywords, always allowed): the XSD constructor casts.
SAFE_FUNCTIONS: frozenset[str] = frozenset(
    XSD + name
    for name in (
        "string", "boolean", "decimal", "integer", "float", "double", "dateTime",
        "date", "time", "duration", "dayTimeDuration", "yearMonthDuration",
    )
)  # fmt: skip
_extra_functions: set[str] = set()
_VENDOR_SCHEMES = ("bif:", "sql:")  # Virtuoso runs these with the account's rights


def allow_functions(*iris: str) -> None:
    """Allow extension functions in every query of this process, besides SAFE_FUNCTIONS.

    Vendor functions run with the rights of the endpoint's account: allow only
    functions known to be read-only (GeoSPARQL's ``geof:distance``, a full-text
    search), never ``bif:``/``sql:`` functions that execute code.

    Args:
        iris: Absolute function IRIs.

    Raises:
        ConfigurationError: An IRI is not absolute.

    Example:
        >>> allow_functions("http://www.opengis.net/def/function/geosparql/distance")
    """
    for iri in iris:
        if not isinstance(iri, str) or not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:\S+$", iri):
            raise ConfigurationError(f"allow_functions needs absolute IRIs, got {iri!r}")
    _extra_functions.update(iris)


def validate_query(
    sparql: str,
    *,
    allowed_graphs: Collection[str] | None = None,
    allowed_functions: Collection[str] = (),
) -> str:
    """Check that ``sparql`` is a safe, read-only query and return it unchanged.

    What the validator parses is what every engine runs: a ``\\u``/``\\U`` escape
    outside a string or IRI (rdflib expands it, Oxigraph does not), or one inside that
    decodes to a quote, backslash, angle bracket or control character, is rejected.

    Args:
        sparql: The query text.
        allowed_graphs: Graph IRIs that ``FROM``, ``FROM NAMED`` and ``GRAPH <iri>`` may
            name. ``None`` allows any graph (the store enforces the dataset anyway).
        allowed_functions: Extension function IRIs this call may use, besides
            ``SAFE_FUNCTIONS`` and those given to ``allow_functions``.

    Returns:
        The query text, unchanged.

    Raises:
        SparqlValidationError: The query does not parse, is an update, is not a
            ``SELECT``/``ASK``, uses ``SERVICE``, names a graph outside
            ``allowed_graphs``, calls a function not allowed, names a vendor IRI
            (``bif:``, ``sql:``) that is not allowed, holds an ambiguous escape, or
            has an ``EXISTS`` outside a FILTER/BIND of a group with a triple pattern.
            The message names the problem.
    """
    if not isinstance(sparql, str) or not sparql.strip():
        raise SparqlValidationError("empty SPARQL query")
    if len(sparql) > _MAX_QUERY_CHARS:
        raise SparqlValidationError(f"SPARQL query too long ({len(sparql)} characters)")
    problem, analysis = _analyse(sparql)
    if problem is not None:
        raise SparqlValidationError(problem)
    allowed = SAFE_FUNCTIONS.union(_extra_functions, allowed_functions)
    vendor = sorted(v for v in analysis.vendor if v not in allowed)
    if vendor:
        raise SparqlValidationError(f"vendor extension <{vendor[0]}> is not allowed")
    refused = sorted(f for f in analysis.functions if f not in allowed)
    if refused:
        raise SparqlValidationError(
            f"function <{refused[0]}> is not allowed: only SPARQL 1.1 built-ins, XSD casts"
            " and functions given to hybrid_rag.sparql.allow_functions may be called"
        )
    if allowed_graphs is not None:
        outside = sorted(analysis.graphs.difference(allowed_graphs))
        if outside:
            raise SparqlValidationError(f"graph <{outside[0]}> is outside the query scope")
    if analysis.stray_exists:
        raise SparqlValidationError(_STRAY_EXISTS)
    return sparql


class _Parsed(NamedTuple):
    """What validation needs from the parse."""

    algebra: Any
    functions: frozenset[str]  # function IRIs called
    vendor: frozenset[str]  # IRIs anywhere in the query under bif: or sql:
    stray_exists: bool
    graphs: frozenset[str] = frozenset()


@lru_cache(maxsize=256)
def _analyse(sparql: str) -> tuple[str | None, _Parsed]:
    """(problem or ``None``, what the query calls and names); cached, parsing is slow."""
    problem = _escape_problem(sparql)
    if problem is not None:
        return problem, _NOTHING
    with _PARSE_LOCK:
        parsed, problem = _parse(sparql)
    if problem is not None:
        return problem, _NOTHING
    form = _READ_ONLY_FORMS.get(getattr(parsed.algebra, "name", ""))
    if form is None:
        kind = str(getattr(parsed.algebra, "name", "unknown")).replace("Query", "").upper()
        return f"only read-only SELECT or ASK queries are allowed, got {kind}", _NOTHING
    problem, graphs = _check_tree(parsed.algebra)
    return problem, parsed._replace(graphs=graphs)


_NOTHING = _Parsed(None, frozenset(), frozenset(), False)


def _parse(sparql: str) -> tuple[_Parsed, str | None]:
    """Parse and translate with rdflib; returns (what was found, problem).

    Function calls and IRIs are read from the parse tree before translation: rdflib's
    algebra drops the FILTERs inside ``EXISTS`` bodies, so it cannot be the only source.
    """
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        parsed = parseQuery(sparql)
    except Exception as exc:  # pyparsing raises ParseException; rdflib others
        if _is_update(sparql):
            return _NOTHING, _UPDATE_REJECTED
        return _NOTHING, f"malformed SPARQL query: {_first_line(exc)}"
    calls, iris = _raw_references(parsed)
    stray_exists = _stray_exists(parsed)
    try:
        query = translateQuery(parsed)
        functions = frozenset(_resolve(query.prologue, ref) for ref in calls)
        names = [_resolve(query.prologue, ref) for ref in iris]
    except Exception as exc:  # rdflib raises plain Exception for semantic errors
        return _NOTHING, f"invalid SPARQL query: {_first_line(exc)}"
    vendor = frozenset(n for n in [*names, *functions] if n.lower().startswith(_VENDOR_SCHEMES))
    return _Parsed(query.algebra, functions, vendor, stray_exists), None


_UPDATE_REJECTED = "SPARQL update rejected: the query is not read-only (SELECT or ASK only)"
_STRAY_EXISTS = (
    "EXISTS / NOT EXISTS is only allowed in a FILTER or BIND of a group that has a triple"
    " pattern of its own (some engines, e.g. Virtuoso 7, evaluate it over the whole store)"
)
_EXISTS = ("Builtin_EXISTS", "Builtin_NOTEXISTS")


def _stray_exists(parsed: Any) -> bool:
    """Whether an EXISTS sits anywhere but in a FILTER/BIND of a group with triples.

    Virtuoso 7.2 evaluates ``FILTER EXISTS`` in a group without a triple pattern of its
    own (``ASK { FILTER EXISTS { ... } }``, ``{ OPTIONAL {...} FILTER EXISTS {...} }``)
    against every graph, ignoring the query's ``FROM`` clauses: a yes/no oracle over
    other documents. Such queries are rewritten easily (``ASK { ... }``).
    """
    found = {id(n) for n in _walk(parsed) if getattr(n, "name", None) in _EXISTS}
    if not found:
        return False
    covered: set[int] = set()
    for group in _walk(parsed):
        if getattr(group, "name", None) != "GroupGraphPatternSub":
            continue
        parts = dict.get(group, "part") or []
        if not any(getattr(p, "name", None) == "TriplesBlock" for p in parts):
            continue
        for part in parts:
            if getattr(part, "name", None) in ("Filter", "Bind"):
                covered.update(id(n) for n in _walk_until(part, "GroupGraphPatternSub"))
    return not found <= covered


def _walk_until(root: Any, stop: str) -> Iterator[Any]:
    """Nodes below ``root``, not descending below nodes named ``stop``."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        if getattr(node, "name", None) == stop and node is not root:
            continue
        if isinstance(node, dict):
            stack.extend(v for k, v in node.items() if k != "_vars")
        elif isinstance(node, list | tuple) or type(node).__name__ == "ParseResults":
            stack.extend(node)


def _raw_references(parsed: Any) -> tuple[list[Any], list[Any]]:
    """(function-call IRIs, every IRI or prefixed name) of an untranslated parse tree."""
    from rdflib.term import URIRef

    calls: list[Any] = []
    iris: list[Any] = []
    for node in _walk(parsed):
        name = getattr(node, "name", None)
        if name == "Function":
            calls.append(dict.get(node, "iri"))
        elif name in ("pname", "Base") or isinstance(node, URIRef):
            iris.append(node if name != "Base" else dict.get(node, "iri"))
    return calls, iris


def _resolve(prologue: Any, ref: Any) -> str:
    """The absolute IRI of a raw IRI reference or prefixed name (as rdflib resolves it)."""
    if getattr(ref, "name", None) == "pname":
        return str(prologue.resolvePName(dict.get(ref, "prefix"), dict.get(ref, "localname")))
    return str(prologue.absolutize(ref))


_UNSAFE_ESCAPED = frozenset("\"'\\<>{}|^`")


def _escape_problem(sparql: str) -> str | None:
    """Why the query's ``\\u`` escapes could mean different things to different engines.

    SPARQL lets ``\\uXXXX`` appear anywhere; rdflib expands it everywhere before
    parsing, Oxigraph only inside strings and IRIs. Both agree only on escapes inside
    strings and IRIs that decode to an ordinary character.
    """
    if "\\u" not in sparql and "\\U" not in sparql:
        return None
    spans = [(t.start, t.end) for t in _tokens(sparql) if t.kind in ("string", "iri")]
    for match in _UNICODE_ESCAPE.finditer(sparql):
        if not any(start < match.start() < end for start, end in spans):
            return f"\\u escapes are only allowed inside strings and IRIs, found {match.group()}"
        code = int(match.group(1) or match.group(2), 16)
        if code > 0x10FFFF or code < 0x20 or code == 0x7F or chr(code) in _UNSAFE_ESCAPED:
            return f"escape {match.group()} decodes to a character with syntax meaning"
    return None


_UNICODE_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def check_structure(sparql: str, *, max_rows: int = 1000) -> str:
    """Structural checks for LLM-written queries; returns the query with a row cap.

    Call it after ``validate_query`` on queries an LLM wrote (templates are
    trusted). Two checks keep an expensive but read-only query from exhausting time
    and memory:

    * No cartesian products: a group whose patterns split into two or more parts that
      share no variable, where two parts are not anchored on a constant subject or
      object (see ``hybrid_rag._sparql_shape``), is rejected.
    * A row cap: a ``SELECT`` without a top-level ``LIMIT`` gets ``LIMIT max_rows``;
      a larger ``LIMIT`` is lowered to ``max_rows``. ``ASK`` is returned unchanged.

    Args:
        sparql: A query that passed ``validate_query``.
        max_rows: Most rows the query may return.

    Returns:
        The query, with its ``LIMIT`` added or lowered.

    Raises:
        SparqlValidationError: The query does not parse, holds a cartesian product, or
            its row cap cannot be written (e.g. a trailing ``VALUES`` block).
        InputError: ``max_rows`` is not a positive int.
    """
    from hybrid_rag._sparql_shape import cartesian_problem

    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise InputError(f"max_rows must be a positive int, got {max_rows!r}")
    problem, parsed = _analyse(sparql)
    if problem is not None:
        raise SparqlValidationError(problem)
    algebra = parsed.algebra
    problem = cartesian_problem(algebra)
    if problem is not None:
        raise SparqlValidationError(problem)
    if getattr(algebra, "name", "") != "SelectQuery":
        return sparql
    capped = _with_row_cap(sparql, max_rows)
    if capped != sparql and _analyse(capped)[0] is not None:
        raise SparqlValidationError("cannot add a LIMIT to this query: write one explicitly")
    return capped


class AggregateMembers(NamedTuple):
    """What ``aggregate_members`` makes of an aggregate query.

    Attributes:
        query: a ``SELECT DISTINCT ?<member> ?<key> ...`` over the same pattern,
            restricted to the groups the aggregate keeps (its ``HAVING``, ``ORDER BY``
            and ``LIMIT`` apply through a sub-select): the solutions it aggregates.
        keys: the ``GROUP BY`` variables, in order (none for one group of all).
    """

    query: str
    keys: tuple[str, ...]


_AGGREGATES = ("COUNT", "SUM", "AVG", "MIN", "MAX", "GROUP_CONCAT", "SAMPLE")
_MODIFIERS = ("GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", "VALUES")


def aggregate_members(sparql: str, *, member: str = "fact") -> AggregateMembers | None:
    """The members of an aggregate ``SELECT``, so that every one can be cited.

    An aggregate (``COUNT``, ``SUM``, ``AVG``, ``MIN``, ``MAX``, ``GROUP_CONCAT``,
    ``SAMPLE``, ``GROUP BY`` or ``HAVING``) answers with numbers no source states; the
    solutions it aggregates are what the documents state. This writes the query that
    selects them: the same prologue and pattern, ``?member`` and the ``GROUP BY``
    variables, joined (when grouped) with the aggregate itself as a sub-select, so
    that a ``HAVING``, an ``ORDER BY`` or a ``LIMIT`` over groups keeps the same groups.

    Call it on a query that passed ``validate_query``; check the result the same way.

    Args:
        sparql: a read-only query.
        member: the variable (without ``?``) each solution's member is bound to.

    Returns:
        ``None`` when the query is no aggregate ``SELECT``.

    Raises:
        SparqlValidationError: an aggregate whose pattern does not bind ``?member``,
            whose ``GROUP BY`` is not plain variables, or whose shape cannot be read.
    """
    toks = _tokens(sparql)
    select = next((i for i, t in enumerate(toks) if _is_kw(t, "SELECT")), None)
    if select is None:
        return None
    body = _where_group(toks, select)
    if body is None:
        raise SparqlValidationError("no WHERE group found after SELECT")
    start, end = body
    projection = toks[select + 1 : start]
    tail = toks[end + 1 :]
    aggregated = any(
        _is_kw(t, *_AGGREGATES) and i + 1 < len(projection) and projection[i + 1].text == "("
        for i, t in enumerate(projection)
    )
    if not aggregated and not any(_is_kw(t, "GROUP", "HAVING") for t in tail):
        return None
    if not any(t.kind == "var" and t.text[1:] == member for t in toks[start:end]):
        raise SparqlValidationError(
            f"an aggregate must count facts bound to ?{member} in its pattern "
            f"(e.g. COUNT(DISTINCT ?{member})) so that every member can be cited"
        )
    keys = _group_keys(tail)
    prologue = sparql[: toks[select].start]
    pattern = sparql[toks[start].start : toks[end].end]
    if not keys:
        return AggregateMembers(f"{prologue}SELECT DISTINCT ?{member} WHERE {pattern}", ())
    inner = sparql[toks[select].start :]  # with its modifiers: the same groups
    listed = " ".join(f"?{k}" for k in keys)
    query = (
        f"{prologue}SELECT DISTINCT ?{member} {listed} WHERE {{\n"
        f"  {{ {inner.strip()} }}\n  {pattern[1:-1].strip()}\n}}"
    )
    return AggregateMembers(query, keys)


def _where_group(toks: list[_Tok], select: int) -> tuple[int, int] | None:
    """Token indexes of the ``{`` and the matching ``}`` of the query's WHERE group."""
    depth, start = 0, None
    for i in range(select + 1, len(toks)):
        text = toks[i].text
        if start is None:
            depth += (text == "(") - (text == ")")
            if text == "{" and depth == 0:
                start, depth = i, 1
            continue
        depth += (text == "{") - (text == "}")
        if depth == 0:
            return start, i
    return None


def _group_keys(tail: list[_Tok]) -> tuple[str, ...]:
    """The variables of a ``GROUP BY`` clause (none without one)."""
    at = next((i for i, t in enumerate(tail) if _is_kw(t, "GROUP")), None)
    if at is None:
        return ()
    keys: list[str] = []
    for t in tail[at + 2 :]:  # past "GROUP BY"
        if _is_kw(t, *_MODIFIERS):
            break
        if t.kind != "var":
            raise SparqlValidationError("GROUP BY may only list variables, not expressions")
        keys.append(t.text[1:])
    return tuple(keys)


def _with_row_cap(sparql: str, max_rows: int) -> str:
    """Lower the top-level LIMIT to ``max_rows`` or add one (before a trailing VALUES)."""
    toks = _tokens(sparql)
    depth, insert_at = 0, len(sparql)
    for i, tok in enumerate(toks):
        depth += (tok.text == "{") - (tok.text == "}")
        if depth or tok.kind != "word":
            continue
        number = re.match(r"\s*(\d+)", sparql[tok.end :]) if _is_kw(tok, "LIMIT") else None
        if number is not None:
            if int(number.group(1)) <= max_rows:
                return sparql
            start, end = tok.end + number.start(1), tok.end + number.end(1)
            return sparql[:start] + str(max_rows) + sparql[end:]
        if _is_kw(tok, "VALUES") and any(t.text == "}" for t in toks[:i]):
            insert_at = min(insert_at, tok.start)
    return f"{sparql[:insert_at].rstrip()}\nLIMIT {max_rows}\n{sparql[insert_at:]}"


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
  | (?P<iri><(?:[^<>"{}|^`\\\x00-\x20]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*>)
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
