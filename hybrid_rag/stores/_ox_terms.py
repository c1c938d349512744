"""pyoxigraph terms as store-neutral ``Term``s: one conversion for the store and for its
query processes (a leaf: it imports neither)."""

from __future__ import annotations

from functools import cache
from typing import Any

from hybrid_rag import _vocab
from hybrid_rag.rdf import Term

__all__ = ["to_term"]

_XSD_STRING = _vocab.XSD + "string"


def to_term(node: Any) -> Term:
    """A pyoxigraph term as a store-neutral ``Term``."""
    kind = _kinds().get(type(node))
    if kind == "iri":
        return Term(node.value, "iri")
    if kind == "bnode":
        return Term(node.value, "bnode")
    if kind == "literal":
        if node.language:
            return Term(node.value, "literal", lang=node.language)
        datatype = node.datatype.value
        return Term(node.value, "literal", None if datatype == _XSD_STRING else datatype)
    return Term(str(node), "literal")  # RDF-star quoted triple: keep its text


@cache
def _kinds() -> dict[type, str]:
    """pyoxigraph's term classes by kind (imported once, not per term: rows are hot)."""
    from pyoxigraph import BlankNode, Literal, NamedNode

    return {NamedNode: "iri", BlankNode: "bnode", Literal: "literal"}
