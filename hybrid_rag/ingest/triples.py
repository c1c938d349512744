"""Turn an :class:`~hybrid_rag.ingest.extract.Extraction` into the graph layout of ``_vocab``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hybrid_rag._vocab import DATA, HR, RDF_TYPE, RDFS_LABEL, SKOS_ALT
from hybrid_rag.rdf import Term, Triple, iri, literal

if TYPE_CHECKING:
    from hybrid_rag.ingest.extract import ExtractedFact, Extraction
    from hybrid_rag.protocols import Ontology

__all__ = ["build_triples", "product_iri"]

_T = iri(RDF_TYPE)


def product_iri(doc_id: str, *, ontology: Ontology) -> str:
    """The IRI of a document's product (HANA-safe local name)."""
    return ontology.mint_iri(f"doc-{doc_id}", base=DATA) + "-product"


def build_triples(doc_id: str, extraction: Extraction, *, ontology: Ontology) -> list[Triple]:
    """All triples of one document: the product, direct property triples and ``hr:Fact`` nodes."""
    ns = ontology.namespace
    product = iri(product_iri(doc_id, ontology=ontology))
    out: list[Triple] = [
        (product, _T, iri(ns + "Product")),
        (product, iri(RDFS_LABEL), literal(extraction.product)),
    ]
    out += [(product, iri(SKOS_ALT), literal(a)) for a in extraction.aliases]
    entities: dict[str, Term] = {}
    for n, fact in enumerate(extraction.facts):
        out += _fact_triples(doc_id, n, fact, product, ns=ns, ontology=ontology, entities=entities)
    return out


def _fact_triples(
    doc_id: str,
    n: int,
    fact: ExtractedFact,
    product: Term,
    *,
    ns: str,
    ontology: Ontology,
    entities: dict[str, Term],
) -> list[Triple]:
    prop = iri(ns + fact.prop)
    node = iri(f"{product.value}-fact-{n}")
    out: list[Triple] = [
        (node, _T, iri(HR + "Fact")),
        (node, iri(HR + "subject"), product),
        (node, iri(HR + "property"), prop),
        (node, iri(HR + "value"), literal(fact.value)),
        (node, iri(HR + "status"), literal(fact.status)),
        (node, iri(HR + "doc"), literal(doc_id)),
        (node, iri(HR + "page"), literal(fact.page)),
        (node, iri(HR + "quote"), literal(fact.quote)),
    ]
    if fact.chunk_id:
        out.append((node, iri(HR + "chunk"), literal(fact.chunk_id)))
    if fact.number is not None:
        out.append((node, iri(HR + "number"), literal(float(fact.number))))
    if fact.unit:
        out.append((node, iri(HR + "unit"), literal(fact.unit)))
    if fact.object_label:
        entity, new = _entity(fact, ns=ns, ontology=ontology, entities=entities)
        out += [*new, (product, prop, entity), (node, iri(HR + "object"), entity)]
    elif fact.status == "stated":
        out.append((product, prop, literal(fact.value)))
    return out


def _entity(
    fact: ExtractedFact, *, ns: str, ontology: Ontology, entities: dict[str, Term]
) -> tuple[Term, list[Triple]]:
    """One node per distinct object label and class, shared across a document's facts."""
    label = fact.object_label or ""
    cls = fact.object_class or "Thing"
    key = f"{cls}|{label.casefold()}"
    if key in entities:
        return entities[key], []
    node = iri(ontology.mint_iri(f"{cls} {label}", base=DATA))
    entities[key] = node
    return node, [(node, _T, iri(ns + cls)), (node, iri(RDFS_LABEL), literal(label))]
