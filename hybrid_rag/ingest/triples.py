"""Turn an ``Extraction`` into the graph layout of ``_vocab``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hybrid_rag._vocab import DATA, HR, RDF_TYPE, RDFS_LABEL, SKOS_ALT
from hybrid_rag.errors import InvalidDocIdError
from hybrid_rag.rdf import Term, Triple, iri, literal

if TYPE_CHECKING:
    from hybrid_rag.ingest.extract import ExtractedFact, Extraction
    from hybrid_rag.protocols import Ontology

__all__ = ["build_triples", "doc_local_name", "subject_iri"]

_T = iri(RDF_TYPE)
_DOC_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def doc_local_name(doc_id: str) -> str:
    """An injective, HANA-safe encoding of a doc id: ``doc-`` + the id with ``_`` and ``.`` escaped.

    Doc ids use ``[A-Za-z0-9_.-]``; HANA local names ``[A-Za-z][A-Za-z0-9_-]*``. Letters,
    digits and ``-`` are kept, ``_`` becomes ``__`` and ``.`` becomes ``_d``, so ``_`` only
    ever starts an escape and two different ids never share a name (``coll.a`` ->
    ``doc-coll_da``, ``coll-a`` -> ``doc-coll-a``). Nothing is cut or hashed.

    Raises:
        InvalidDocIdError: ``doc_id`` does not match ``[A-Za-z0-9_.-]{1,128}``.
    """
    if not isinstance(doc_id, str) or not _DOC_ID.fullmatch(doc_id):
        raise InvalidDocIdError(f"invalid doc id {doc_id!r}: expected [A-Za-z0-9_.-]{{1,128}}")
    return "doc-" + doc_id.replace("_", "__").replace(".", "_d")


def subject_iri(doc_id: str, *, ontology: Ontology) -> str:
    """The IRI of a document's product: ``DATA`` + ``doc_local_name`` + ``-product``.

    Injective in ``doc_id`` (fact IRIs append ``-fact-<n>``, so they are too). The
    ontology's ``mint_iri`` is for labels, which may merge; ids must not, so it is not
    used here. ``ontology`` is kept for the signature's stability.
    """
    del ontology
    return DATA + doc_local_name(doc_id) + "-product"


def build_triples(doc_id: str, extraction: Extraction, *, ontology: Ontology) -> list[Triple]:
    """All triples of one document: the product, direct property triples and ``hr:Fact`` nodes."""
    ns = ontology.namespace
    subject = iri(subject_iri(doc_id, ontology=ontology))
    out: list[Triple] = [
        (subject, _T, iri(ns + "Product")),
        (subject, iri(RDFS_LABEL), literal(extraction.subject)),
    ]
    out += [(subject, iri(SKOS_ALT), literal(a)) for a in extraction.aliases]
    entities: dict[str, Term] = {}
    for n, fact in enumerate(extraction.facts):
        out += _fact_triples(doc_id, n, fact, subject, ns=ns, ontology=ontology, entities=entities)
    return out


def _fact_triples(
    doc_id: str,
    n: int,
    fact: ExtractedFact,
    subject: Term,
    *,
    ns: str,
    ontology: Ontology,
    entities: dict[str, Term],
) -> list[Triple]:
    prop = iri(ns + fact.prop)
    node = iri(f"{subject.value}-fact-{n}")
    out: list[Triple] = [
        (node, _T, iri(HR + "Fact")),
        (node, iri(HR + "subject"), subject),
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
        out += [*new, (subject, prop, entity), (node, iri(HR + "object"), entity)]
    elif fact.status == "stated":
        out.append((subject, prop, literal(fact.value)))
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
