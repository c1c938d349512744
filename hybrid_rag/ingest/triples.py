"""Turn an ``Extraction`` into the graph layout of ``_vocab``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hybrid_rag._checks import check_doc_id
from hybrid_rag._terms import INDEX_VERSION, TERM, TERM_INDEX, value_terms
from hybrid_rag._vocab import DATA, HR, RDF_TYPE, RDFS_LABEL, SKOS_ALT
from hybrid_rag.errors import OntologyError
from hybrid_rag.rdf import Term, Triple, iri, literal

if TYPE_CHECKING:
    from hybrid_rag.types import DocumentModel, ExtractedFact, Extraction, Ontology

__all__ = ["build_triples", "doc_local_name", "subject_iri", "with_term_index"]

_T = iri(RDF_TYPE)
_TERM = iri(TERM)
_THING = "http://www.w3.org/2002/07/owl#Thing"


def doc_local_name(doc_id: str) -> str:
    """An injective, HANA-safe encoding of a doc id: ``doc-`` + the id with ``_`` and ``.`` escaped.

    Doc ids use ``[A-Za-z0-9_.-]``; HANA local names ``[A-Za-z][A-Za-z0-9_-]*``. Letters,
    digits and ``-`` are kept, ``_`` becomes ``__`` and ``.`` becomes ``_d``, so ``_`` only
    ever starts an escape and two different ids never share a name (``coll.a`` ->
    ``doc-coll_da``, ``coll-a`` -> ``doc-coll-a``). Nothing is cut or hashed.

    Raises:
        InvalidDocIdError: ``doc_id`` is not a valid doc id (``check_doc_id``).
    """
    check_doc_id(doc_id)
    return "doc-" + doc_id.replace("_", "__").replace(".", "_d")


def subject_iri(doc_id: str, *, ontology: Ontology | None = None) -> str:
    """The IRI of a document's subject: ``DATA`` + ``doc_local_name`` + ``-subject``.

    Injective in ``doc_id`` (fact IRIs append ``-fact-<n>``, part IRIs ``-part-<n>``, so
    they are too). The ontology's ``mint_iri`` is for labels, which may merge; ids must
    not, so it is not used here (``ontology`` is accepted and ignored).
    """
    del ontology
    return DATA + doc_local_name(doc_id) + "-subject"


def build_triples(doc_id: str, extraction: Extraction, *, ontology: Ontology) -> list[Triple]:
    """All triples of one document: its subject (typed with the ontology's subject class,
    named and aliased), its parts, direct property triples and ``hr:Fact`` nodes with
    the terms of their values (``hybrid_rag._terms``)."""
    from hybrid_rag.ontology import document_model

    ns = ontology.namespace
    model = document_model(ontology)
    subject = iri(subject_iri(doc_id))
    out: list[Triple] = []
    if model.subject_class is not None:
        out.append((subject, _T, iri(ns + model.subject_class)))
    out.append((subject, iri(RDFS_LABEL), literal(extraction.subject)))
    out.append((subject, iri(TERM_INDEX), literal(INDEX_VERSION)))
    out += [(subject, iri(SKOS_ALT), literal(a)) for a in extraction.aliases]
    parts = _parts(extraction.facts, subject, model=model, ontology=ontology)
    for triples in parts.values():
        out += triples[1]
    entities: dict[str, Term] = {}
    for n, fact in enumerate(extraction.facts):
        owner = subject if fact.part is None or fact.part not in parts else parts[fact.part][0]
        out += _fact_triples(doc_id, n, fact, owner, ns=ns, ontology=ontology, entities=entities)
    return out


def with_term_index(doc_id: str, triples: Sequence[Triple]) -> list[Triple]:
    """A document graph's triples with the term index as ingest writes it now
    (``hybrid_rag._terms``): the terms of every fact's value and the graph's
    ``hr:termIndex``, for a graph written before the index; one that has it is returned
    as it is. Nothing else changes."""
    if any(p.value == TERM_INDEX and o.value == INDEX_VERSION for _s, p, o in triples):
        return list(triples)
    out = [t for t in triples if t[1].value not in (TERM, TERM_INDEX)]
    terms = [
        (s, _TERM, literal(t))
        for s, p, o in out
        if p.value == HR + "value" and o.kind == "literal"
        for t in sorted(value_terms(o.value))
    ]
    return [*out, (iri(subject_iri(doc_id)), iri(TERM_INDEX), literal(INDEX_VERSION)), *terms]


def _parts(
    facts: tuple[ExtractedFact, ...],
    subject: Term,
    *,
    model: DocumentModel,
    ontology: Ontology,
) -> dict[int, tuple[Term, list[Triple]]]:
    """One node per part number: typed with its properties' class, linked from the subject
    by the part relation, labelled with its first text value (a line item's description)."""
    relation = dict((cls, prop) for prop, cls in model.parts)
    domains = {p.name: p.domain for p in ontology.properties()}
    out: dict[int, tuple[Term, list[Triple]]] = {}
    for fact in facts:
        if fact.part is None or fact.part in out:
            continue
        cls = (domains.get(fact.prop) or "").rsplit("#", 1)[-1].rsplit("/", 1)[-1]
        if cls not in relation:
            continue
        node = iri(f"{subject.value}-part-{fact.part}")
        label = next(
            (f.value for f in facts if f.part == fact.part and f.number is None and f.value),
            f"{cls} {fact.part}",
        )
        out[fact.part] = (
            node,
            [
                (node, _T, iri(ontology.namespace + cls)),
                (node, iri(RDFS_LABEL), literal(label)),
                (subject, iri(ontology.namespace + relation[cls]), node),
            ],
        )
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
    out += [(node, _TERM, literal(t)) for t in sorted(value_terms(fact.value))]
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
    cls = fact.object_class or _range_class(fact.prop, ontology)
    key = f"{cls}|{label.casefold()}"
    if key in entities:
        return entities[key], []
    node = iri(ontology.mint_iri(f"{cls or 'entity'} {label}", base=DATA))
    entities[key] = node
    kind = iri(ns + cls) if cls else iri(_THING)
    return node, [(node, _T, kind), (node, iri(RDFS_LABEL), literal(label))]


def _range_class(prop: str, ontology: Ontology) -> str | None:
    """The local name of the class a relation points to (its ``rdfs:range``), if known."""
    try:
        rng = ontology.property(prop).range
    except OntologyError:  # an unknown property is reported by validation
        return None
    known = {c.iri: c.name for c in ontology.classes()}
    return known.get(rng or "")
