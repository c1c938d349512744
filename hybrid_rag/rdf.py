"""Store-neutral RDF terms exchanged between the core and every GraphStore.

A tiny frozen value type instead of rdflib/pyoxigraph terms keeps the hot path free of
heavy imports and lets remote stores (HANA, SPARQL over HTTP) return exactly what the
embedded store returns.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["XSD", "SparqlResult", "Term", "Triple", "iri", "literal", "triple_n3"]

XSD = "http://www.w3.org/2001/XMLSchema#"
_XSD_NUMERIC = {XSD + t for t in ("decimal", "double", "float", "integer", "int", "long")}


@dataclass(frozen=True, slots=True)
class Term:
    """An RDF term: an IRI, a literal (optionally typed or language-tagged) or a blank node."""

    value: str
    kind: Literal["iri", "literal", "bnode"] = "literal"
    datatype: str | None = None
    lang: str | None = None

    def __reduce__(self) -> tuple[type[Term], tuple[str, str, str | None, str | None]]:
        # a document's triples travel from the worker processes that read it: the
        # dataclass default pickles each term through ``fields()``, several times slower
        return (Term, (self.value, self.kind, self.datatype, self.lang))

    def to_python(self) -> str | float | int | bool:
        """The literal's value as a Python object (numbers and booleans converted)."""
        if self.kind == "literal" and self.datatype in _XSD_NUMERIC:
            try:
                num = float(self.value)
            except ValueError:
                return self.value
            return int(num) if self.datatype.endswith(("integer", "int", "long")) else num
        if self.kind == "literal" and self.datatype == XSD + "boolean":
            return self.value in ("true", "1")
        return self.value

    def n3(self) -> str:
        """N-Triples serialisation with every special character escaped."""
        if self.kind == "iri":
            return "<" + _escape_iri(self.value) + ">"
        if self.kind == "bnode":
            return "_:" + "".join(c for c in self.value if c.isalnum() or c in "_-")
        out = '"' + _escape_literal(self.value) + '"'
        if self.lang:
            return out + "@" + self.lang
        if self.datatype:
            return out + "^^<" + _escape_iri(self.datatype) + ">"
        return out


Triple = tuple[Term, Term, Term]


@dataclass(frozen=True, slots=True)
class SparqlResult:
    """Rows of a SELECT (variable -> term; unbound variables are absent) or an ASK boolean."""

    variables: tuple[str, ...] = ()
    rows: tuple[dict[str, Term], ...] = ()
    boolean: bool | None = None


def iri(value: str) -> Term:
    """An IRI term."""
    return Term(value, "iri")


def literal(value: str | float | int | bool, datatype: str | None = None) -> Term:
    """A literal; Python numbers and booleans get their XSD datatype."""
    if isinstance(value, bool):
        return Term("true" if value else "false", "literal", XSD + "boolean")
    if isinstance(value, int):
        return Term(str(value), "literal", XSD + "integer")
    if isinstance(value, float):
        return Term(repr(value), "literal", XSD + "double")
    return Term(value, "literal", datatype)


_LIT_ESC = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def _escape_literal(text: str) -> str:
    out = []
    for ch in text:
        if ch in _LIT_ESC:
            out.append(_LIT_ESC[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


_ABSOLUTE_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # a scheme: not a relative IRI


def _escape_iri(text: str) -> str:
    bad = set('<>"{}|^`\\ ')
    return "".join(f"%{ord(c):02X}" if c in bad or ord(c) <= 0x20 else c for c in text)


def triple_n3(triple: Triple) -> str:
    """One triple in N-Triples / SPARQL INSERT DATA syntax, checked for well-formedness.

    Blank nodes get stable, collision-free labels; ``xsd:string`` literals are written
    plain. Raises ``StoreError`` for a malformed triple.
    """
    from hybrid_rag.errors import StoreError

    try:
        s, p, o = triple
    except (TypeError, ValueError):
        raise StoreError(f"not a (subject, predicate, object) triple: {triple!r}") from None
    if not all(isinstance(t, Term) for t in (s, p, o)):
        raise StoreError(f"triple terms must be hybrid_rag.rdf.Term: {triple!r}")
    if s.kind == "literal":
        raise StoreError(f"literal subject in triple {triple!r}")
    if p.kind != "iri":
        raise StoreError(f"predicate must be an IRI in triple {triple!r}")
    relative = [t.value for t in (s, p, o) if t.kind == "iri" and not _ABSOLUTE_IRI.match(t.value)]
    if relative:  # every engine refuses them; refusing here keeps the graph unchanged
        raise StoreError(f"IRI {relative[0]!r} is not absolute in triple {triple!r}")
    return f"{_term_n3(s)} {_term_n3(p)} {_term_n3(o)}"


def _term_n3(term: Term) -> str:
    if term.kind == "bnode":  # stable, collision-free label for any value
        return "_:b" + hashlib.blake2b(term.value.encode(), digest_size=12).hexdigest()
    if term.kind == "literal" and term.datatype == XSD + "string" and not term.lang:
        return Term(term.value).n3()
    return term.n3()
