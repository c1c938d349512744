"""Structural checks on an rdflib SPARQL algebra: find cartesian products.

A cartesian product is a group whose patterns fall into two or more parts that share
no variable, where at least two of those parts are *unanchored* (no constant subject,
and no constant object other than a class after ``rdf:type``): such a query costs the
product of two unbounded result sets. Parts anchored on a constant (``<acetone>
:flashPoint ?f``) are small, so comparing two named things stays allowed.

Pure functions over rdflib's algebra (``CompValue`` trees); no I/O, no rdflib import
at module level.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["cartesian_problem"]

_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
# nodes that only wrap one pattern ``p`` (solution modifiers, filters, binds)
_WRAPPERS = frozenset(
    {"Project", "Slice", "Distinct", "Reduced", "OrderBy", "Filter", "Extend", "Group",
     "AggregateJoin", "Graph", "SelectQuery", "AskQuery"}
)  # fmt: skip


@dataclass
class _Part:
    """Patterns joined by shared variables."""

    variables: set[str] = field(default_factory=set)
    anchored: bool = False


def cartesian_problem(algebra: Any) -> str | None:
    """A message naming the first cartesian product in the query, or ``None``."""
    try:
        _parts(algebra)
    except _Product as subject:
        return str(subject)
    return None


class _Product(Exception):
    pass


def _parts(node: Any) -> list[_Part]:
    """The variable-disjoint parts of a pattern; raises _Product on a product."""
    name = getattr(node, "name", None)
    if name in _WRAPPERS:
        return _parts(dict.get(node, "p"))
    if name == "BGP":
        return _checked(_merge(_triple_part(t) for t in dict.get(node, "triples") or []))
    if name in ("Join", "LeftJoin"):
        return _checked(_merge([*_parts(node.p1), *_parts(node.p2)]))
    if name in ("Union", "Minus"):
        left, right = _parts(node.p1), _parts(node.p2)
        parts = left if name == "Minus" else [*left, *right]
        return [_Part(_union(p.variables for p in parts), all(p.anchored for p in parts))]
    if name == "ToMultiSet":
        return _sub_parts(dict.get(node, "p"))
    return []


def _sub_parts(node: Any) -> list[_Part]:
    """A sub-select or VALUES block as one part."""
    if getattr(node, "name", None) == "values":
        rows = dict.get(node, "res") or []
        return [_Part({str(v) for row in rows for v in row}, anchored=True)]
    inner = _parts(node)
    projected = dict.get(node, "PV") if getattr(node, "name", None) == "Project" else None
    variables = {str(v) for v in projected} if projected else _union(p.variables for p in inner)
    return [_Part(variables, all(p.anchored for p in inner))]


def _triple_part(triple: Any) -> _Part:
    from rdflib.term import Variable

    s, p, o = triple
    variables = {str(t) for t in (s, p, o) if isinstance(t, Variable)}
    constant_object = not isinstance(o, Variable) and str(p) != _RDF_TYPE
    return _Part(variables, anchored=not isinstance(s, Variable) or constant_object)


def _merge(parts: Iterable[_Part]) -> list[_Part]:
    """Union-find by shared variables."""
    merged: list[_Part] = []
    for part in parts:
        joined = [m for m in merged if m.variables & part.variables]
        for m in joined:
            merged.remove(m)
            part = _Part(m.variables | part.variables, m.anchored or part.anchored)
        merged.append(part)
    return merged


def _checked(parts: list[_Part]) -> list[_Part]:
    loose = [p for p in parts if p.variables and not p.anchored]
    if len(loose) >= 2:
        names = " and ".join(", ".join(sorted(f"?{v}" for v in p.variables)) for p in loose[:2])
        raise _Product(
            f"cartesian product: the patterns binding {names} share no variable; "
            "join them through a common variable or ask separate queries"
        )
    return parts


def _union(sets: Iterator[set[str]] | Iterable[set[str]]) -> set[str]:
    out: set[str] = set()
    for s in sets:
        out |= s
    return out
