"""The seam types: plain data the seams exchange, and the ontology's protocols.

A leaf module: it imports nothing of the flows (``ingest``, ``ask``, ``stores``,
``providers``) and nothing that imports them, so ``hybrid_rag.protocols`` and every flow
import it without a cycle. The old import paths (``hybrid_rag.protocols``,
``hybrid_rag.ingest.extract``, ``hybrid_rag.ask.analysis``) re-export these names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from hybrid_rag.ask.grammar import DateSpan, Threshold
from hybrid_rag.ask.linking import SubjectIndex, SubjectMatch, without_names
from hybrid_rag.text import tokens

if TYPE_CHECKING:
    from hybrid_rag.rdf import Triple

__all__ = [
    "ClassDef",
    "ConceptDef",
    "DocumentModel",
    "ExtractedFact",
    "Extraction",
    "Intent",
    "Ontology",
    "OntologyConcepts",
    "OntologyMatching",
    "PropertyDef",
    "QuestionAnalysis",
    "Reading",
    "ScopeView",
    "Status",
    "SubjectIndex",
    "SubjectMatch",
    "Threshold",
]


@dataclass(frozen=True, slots=True)
class PropertyDef:
    """An ontology property: its IRI, local name, labels and, for quantities, its unit."""

    iri: str
    name: str
    label: str
    kind: Literal["object", "datatype"]
    alt_labels: tuple[str, ...] = ()
    domain: str | None = None
    range: str | None = None
    unit: str | None = None
    comment: str | None = None

    @property
    def labels(self) -> tuple[str, ...]:
        """Preferred label first, then alternatives."""
        return (self.label, *self.alt_labels)


@dataclass(frozen=True, slots=True)
class DocumentModel:
    """What documents under an ontology are about, read from the ontology.

    Attributes:
        subject_class: local name of the class a document is about (an ``Invoice``, a
            product), or ``None`` when the ontology names none (documents are then read for
            their passages and the facts found about no particular subject).
        naming: properties whose values name the subject (an invoice's issuer and
            customer, a product's name and synonyms); the first stated value is the
            document's title, the others its aliases. Object properties here name it by
            the label of the entity they point to.
        identifying: properties whose values identify the subject (an invoice number,
            an order number); aliases too, so a question naming one links the document.
        parts: ``(object property, class)`` pairs of the subject's repeated parts (line
            items, components): each one is an entity of its own with its properties.
        document_noun: how answers call one document ("invoice", "sheet"; default
            "document").
        dating: the property holding the document's own date (the subject's first
            declared date property: an invoice's date, a sheet's revision date), which
            "the most recent" and "the oldest" of the documents sort on; ``None`` if
            it has none.
        amount: the subject's amount (when it states a currency, its first declared
            number with no unit of its own: an invoice's total), which a bound
            in a currency that names no property is asked of ("invoices over 500 EUR");
            ``None`` if it has none.
        sources: properties whose values name who makes, supplies or issues the
            subject (a product's supplier), not the subject itself: a set of documents
            is called by them ("Libman products", "the sheets from Acme") although no
            question about one document names it so.
        kinds: properties whose values say what kind of thing the subject is (a
            product's physical state): a set of documents is called by such a value
            ("Which liquids ...?", "How many powders ...?").
    """

    subject_class: str | None = None
    naming: tuple[str, ...] = ()
    identifying: tuple[str, ...] = ()
    parts: tuple[tuple[str, str], ...] = ()
    document_noun: str = "document"
    dating: str | None = None
    amount: str | None = None
    sources: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()

    def part_classes(self) -> tuple[str, ...]:
        """The classes of the subject's repeated parts."""
        return tuple(dict.fromkeys(cls for _prop, cls in self.parts))


@dataclass(frozen=True, slots=True)
class ClassDef:
    """An ontology class with its labels."""

    iri: str
    name: str
    label: str
    alt_labels: tuple[str, ...] = ()
    parents: tuple[str, ...] = field(default=())
    comment: str | None = None


@dataclass(frozen=True, slots=True)
class ConceptDef:
    """A value an ontology names: a class, category or code that documents print in
    several ways and people ask for by several names (a ``skos:Concept``).

    "Which products are corrosive?" asks for a concept: the values that state it are
    found by its ``patterns`` (how documents print it), read in the values of its
    ``properties`` only, and, when it has ``categories``, only where the code printed
    right after the pattern (or right before, when none follows) is one of them ("Skin
    Corrosion/Irritation Category 1B" states skin corrosion; "... Category 2" does not).

    Attributes:
        iri: the concept's IRI.
        name: its local name.
        label: its preferred label (``skos:prefLabel`` or ``rdfs:label``).
        alt_labels: other names (``skos:altLabel``), in any language.
        search_labels: search-only names (``skos:hiddenLabel``): words people ask with.
        definition: what it means, in a sentence (``skos:definition``), or ``""``.
        patterns: regular expressions (``hr:valuePattern``, matched ignoring case) any of
            which a value prints where it states the concept.
        properties: local names of the properties whose values state it
            (``hr:valueOf``); empty: every property's.
        categories: the codes (``hr:category``) that must follow a pattern; empty: any.
        stated_categories: the categories its patterns state by themselves, one of them
            (``hr:statesCategory``: a statement code such as "H301" is Category 3, "H300"
            Category 1 or 2); empty: the code printed after a pattern is its category.
        narrower: local names of the narrower concepts (``skos:narrower``, or the
            inverse ``skos:broader``): a value that states one states this one too.
    """

    iri: str
    name: str
    label: str
    alt_labels: tuple[str, ...] = ()
    search_labels: tuple[str, ...] = ()
    definition: str = ""
    patterns: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    narrower: tuple[str, ...] = ()
    stated_categories: tuple[str, ...] = ()

    @property
    def labels(self) -> tuple[str, ...]:
        """Every name a question may call it by: preferred, alternative, search-only."""
        return (self.label, *self.alt_labels, *self.search_labels)


@runtime_checkable
class OntologyConcepts(Protocol):
    """The concepts an ontology names (``ConceptDef``), for questions that ask for the
    documents stating one ("Which are corrosive?", "Which invoices are paid by card?").

    Contract: ``concepts()`` returns every concept once, in a stable order; every name
    in ``properties`` and ``narrower`` is a property or concept of the ontology; every
    pattern compiles as a Python regular expression. Immutable and thread-safe.
    """

    def concepts(self) -> tuple[ConceptDef, ...]:
        """The ontology's concepts."""
        ...


@runtime_checkable
class Ontology(Protocol):
    """The vocabulary that constrains the knowledge graph.

    ``mint_iri`` returns IRIs safe for SAP HANA's SPARQL: local names match
    ``[A-Za-z][A-Za-z0-9_-]*``. ``validate`` returns the problems of a set of triples
    (unknown predicates or classes) without raising.
    """

    @property
    def namespace(self) -> str:
        """Namespace IRI of the ontology's terms."""
        ...

    def classes(self) -> list[ClassDef]:
        """All classes."""
        ...

    def properties(self) -> list[PropertyDef]:
        """All object and datatype properties."""
        ...

    def property(self, name: str) -> PropertyDef:
        """A property by local name or IRI; unknown -> OntologyError."""
        ...

    def mint_iri(self, label: str, *, base: str) -> str:
        """A HANA-safe IRI under ``base`` derived from ``label``."""
        ...

    def validate(self, triples: Sequence[Triple]) -> list[str]:
        """Problems with ``triples`` (empty when they conform)."""
        ...

    def vocabulary(self) -> str:
        """A compact text listing of classes and properties for LLM prompts."""
        ...


@runtime_checkable
class OntologyMatching(Protocol):
    """Question matching, reading hints and the document model of an ontology.

    Everything here comes from the ontology (standard vocabulary first, then the ``hr:``
    annotations, see ``docs/guides/own-domain.md``); the library's code knows no domain.

    Contract (checked by ``hybrid_rag.testing.contracts.OntologyContract``):

    * ``match_properties(text)`` returns ``(property, score)`` pairs, best first, each
      property once, scores in ``(0, 1)``; an empty list when nothing matches. It matches
      the properties' labels, alternative labels and search-only labels (the words people
      use: verbs, adjectives, paraphrases), ignoring case, accents, punctuation, spacing
      and inflection. The words come from the ontology, never from code.
    * ``value_kind(name)`` is how a value is read: ``text``, ``number`` (a quantity; in
      the property's unit, or with the currency it is printed with), ``date``,
      ``identifier`` (a number or code), ``temperature``, ``range`` (the lower bound
      kept), ``currency``, ``procedure`` (the document's own sentences for one item, read
      up to the next item) or ``category`` (a relation whose values are categories the
      subject belongs to: a yes/no question naming one of its search-only words is
      answered by whether a value holds the question's words).
    * ``value_pattern(name)`` is a regular expression a stated value must contain, or
      ``None``; ``find_pattern(name)`` one that finds a value printed without its label
      near the top of the first page (an issuer's name by its legal form), or ``None``.
    * ``section(name)`` is the numbered document section the property's values are
      printed in, or ``None`` when they may appear anywhere.
    * ``max_values(name)`` is how many distinct values of the property one document may
      state (``None``: the reader's default, one for a plain value).
    * ``read_from(name)`` names the properties whose stated values may also carry this
      property's value (a colour printed in an appearance line); empty when none.
    * ``reading_labels(name)`` are labels a reader finds the property's values by but a
      router never matches a question with (``hr:readingLabel``: a sub-heading such as
      "Eyes" that names eye protection only inside its section); empty when none.
    * ``narrower(name)`` names the property's sub-properties (``rdfs:subPropertyOf``); a
      router asks them too when the umbrella is asked; empty when none.
    * ``search_labels(name)`` are the property's search-only words (``skos:hiddenLabel``);
      a router treats them, like the labels, as naming the property rather than as words
      a value must contain.
    * ``lower_when_more(name)`` are adjectives a subject has more of when the value is
      lower, so "the more X" sorts by the lowest value; empty when none.
    * ``document_model()`` says which class a document is about and which properties
      name and identify that subject (``DocumentModel``); every name in it is a class or
      property of the ontology.
    * Unknown property names give the defaults (``text``, ``None``, ``None``, ``None``,
      ``None``, ``()``, ``()``, ``()``, ``()``, ``()``); no method raises for them.
      Implementations are immutable and thread-safe.
    """

    def match_properties(self, text: str) -> list[tuple[PropertyDef, float]]:
        """Which properties ``text`` talks about, best first."""
        ...

    def value_kind(self, name: str) -> str:
        """How a value of the property is read."""
        ...

    def value_pattern(self, name: str) -> str | None:
        """A regular expression a stated value must contain, if any."""
        ...

    def find_pattern(self, name: str) -> str | None:
        """A regular expression that finds an unlabelled value on the first page, if any."""
        ...

    def section(self, name: str) -> int | None:
        """The document section the property's values are printed in, if fixed."""
        ...

    def max_values(self, name: str) -> int | None:
        """How many distinct values one document may state, if the ontology says."""
        ...

    def read_from(self, name: str) -> tuple[str, ...]:
        """Properties whose stated values may also carry this property's value."""
        ...

    def reading_labels(self, name: str) -> tuple[str, ...]:
        """Labels the property's values are read by, never matched against questions."""
        ...

    def search_labels(self, name: str) -> tuple[str, ...]:
        """The property's search-only labels (words people use for it in questions)."""
        ...

    def narrower(self, name: str) -> tuple[str, ...]:
        """The property's sub-properties, which an umbrella question also asks for."""
        ...

    def lower_when_more(self, name: str) -> tuple[str, ...]:
        """Adjectives a subject has more of when the property's value is lower."""
        ...

    def document_model(self) -> DocumentModel:
        """What documents are about, which properties name and identify it."""
        ...


# ---------------------------------------------------------------- extraction

Status = Literal["stated", "unavailable"]


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """One value a document states, with the verbatim quote it was read from.

    Attributes:
        prop: ontology property local name, e.g. ``"grossAmount"``.
        value: the verbatim value text, e.g. ``"€ 717,97"``.
        quote: exact substring of the page text (label and value).
        page: 1-based page number.
        chunk_id: the chunk whose ``[start, end)`` covers the quote, when chunks were given.
        number: typed quantity in ``unit`` when parseable (a date: days since
            1970-01-01).
        unit: unit of ``number``: the property's canonical unit, the currency an amount
            is printed in (ISO 4217 code, ``"EUR"``), or ``"date"``.
        status: ``"unavailable"`` when the document says the value is not available.
        object_label: for object properties, the label of the object entity.
        object_class: for object properties, the class local name of the object.
        part: for a property of a repeated part (a line item), which one: facts with the
            same number describe the same part (``DocumentModel.parts``).
    """

    prop: str
    value: str
    quote: str
    page: int
    chunk_id: str | None = None
    number: float | None = None
    unit: str | None = None
    status: Status = "stated"
    object_label: str | None = None
    object_class: str | None = None
    part: int | None = None


@dataclass(frozen=True, slots=True)
class Extraction:
    """What offline extraction found in one document."""

    subject: str
    aliases: tuple[str, ...]
    facts: tuple[ExtractedFact, ...]
    warnings: tuple[str, ...] = ()


# ---------------------------------------------------------------- questions

Intent = Literal["lookup", "min", "max", "filter", "same", "procedure", "out_of_scope", "unsafe"]
"""What a question asks for; see ``QuestionRouter``."""


@dataclass(frozen=True, slots=True)
class Reading:
    """A name the question gives that no document prints, as a model read it (the
    answer shows it as ``hybrid_rag.models.NameReading``).

    Attributes:
        said: the name as the question writes it ("slaked lime").
        read_as: the name it was read as ("calcium hydroxide").
        doc_ids: the documents whose names print ``read_as`` that the question is
            asked of; empty when none does or the reading is unsure.
    """

    said: str
    read_as: str
    doc_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ScopeView:
    """What a router may know of the scope: its documents, their products, the ontology.

    Attributes:
        doc_ids: the documents the question may see.
        products: product names of those documents, for linking.
        ontology: the vocabulary the graph is built on.
        scoped: whether the caller named the documents (``docs=``) or means all of them.
        catalog: product names of every catalogued document, in scope or not, so a router
            can tell "names a product outside the scope" from "names nothing known".
        printed: words of names no subject has that the documents' text prints ("USD",
            "ISO"): terms the documents use, so no unknown name. The supervisor
            fills it when it looks a name up (``QuestionAnalysis.unlinked``).
    """

    doc_ids: tuple[str, ...]
    subjects: SubjectIndex
    ontology: Ontology
    scoped: bool = False
    catalog: SubjectIndex | None = None
    printed: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class QuestionAnalysis:
    """What a question asks: about which documents, which properties, with which intent.

    Attributes:
        question: the question as asked.
        products: documents whose product the question names, best first.
        properties: ontology properties the question asks about.
        intent: see ``Intent``.
        filter_terms: for ``filter``: the words a value must contain.
        missing: product names the question names that are not in the scope.
        reason: for ``out_of_scope`` and ``unsafe``: why, in a readable sentence.
        search: the text the vector chain searches for (default: the question).
        polar: a yes/no question ("Is A's flash point higher than B's?").
        polar_subject: for a polar comparison, the document of the subject named first.
        threshold: for a numeric filter ("flash point above 60 °C"): the bound.
        filter_phrase: for "which of these are <phrase>": the phrase as asked. With a named
            property and no word left to match (``filter_terms`` empty), every positive
            value matches ("Listed ..." does, "Not listed" does not).
        sections: for ``procedure``: the numbered document sections the asked properties
            are printed in, so the document's own section can be read.
        noun: what the answer calls one document ("invoice"; ``DocumentModel``).
        kind_words: words of the ontology's class labels ("invoice", "receipt"): they
            name the kind of document, not a property or a value.
        named_words: the words of the asked properties' labels and search-only labels:
            they name what is asked, not more to look for.
        typed: the asked properties whose values are numbers or dates: a line of text
            is no value of theirs unless it holds a digit.
        patterns: ``(property, regular expression)`` for the asked properties whose
            values have a shape (``valuePattern``): a line of text is no value of theirs
            unless it has that shape.
        unlinked: names the question gives that link to no subject's names; the
            supervisor looks for them in the documents' text before it calls the
            question out of scope.
        collection: the question names no document and asks over every document in
            scope ("Which of our invoices are in EUR?", "How many sheets ...?"): a
            ``filter`` (by the phrases of ``hybrid_rag.ask._collection_words``, or by
            ``threshold``), ``min`` or ``max``.
        counting: a collection question that asks how many.
        aggregate: a collection question that counts per group, ranks groups by a
            count, bounds a count of things per document, or averages or sums
            (``hybrid_rag.ask._collection_words.aggregating``): no template answers
            it; a chat model writes an aggregate query, and without one it abstains.
        vocabulary: for a collection question, stems of the ontology's label words: a
            word of the question that only says where to look ("CAS", "transport").
        named_set: for a collection over the documents a name many of them share
            ("How many zinc compounds ...?", "Which Acme invoices are in EUR?"): those
            documents; the question's other words filter among them.
        set_name: the name ``named_set`` was read from, as asked ("zinc", "acme").
        set_by_source: whether some of ``named_set`` are in it by their source's name
            (a supplier's: ``DocumentModel.sources``), not their own.
        set_loose: ``named_set`` is what a plural noun alone calls ("Which acids ...",
            "Which of the cleaners ..."): names are a fair guess of what is one, not a
            rule, so a filter is asked of every document, and the answer gives the set's
            members first, then the other documents that state it.
        unnamed: out of scope because the question names none of the many documents in
            scope and asks over none of them ("What is the total of the March order?"
            where no document is named so): a model may still read a name the rules do
            not know.
        kind_noun: for a collection question, the plural noun its set is called by when
            it is no kind of document the ontology names ("liquids" of "Which liquids
            ..."): a value a kind property (``DocumentModel.kinds``) may hold.
        kind_set: the documents whose kind property holds ``kind_noun`` (the supervisor
            reads them; set only when some document's value does), and ``kind_label``
            that property's label: the question is asked of those documents only.
        others_of: for a collection over the *other* documents ("Phosphoric acid is in
            more than the phosphoric acid bottles: which other products list it?"): the
            documents the question names, left out of the scope; the name they were
            linked by is the value the others must state (``other_name``).
        other_name: the words of that name, as asked.
        coded: for a collection ``filter`` that gives the asked property's value by a
            code right after its label ("DOT class 8", "packing group I or II"): that
            property and the codes as written. A document is a member when the first
            code the property's value pattern reads in its value is one of them ("8
            (5.1)" is class 8; "5.1, 8" is class 5.1).
        own_only: for a collection filter, the asked properties whose values alone may
            make a member: one that names who makes or supplies the documents ("3M as a
            supplier": not a product named "3M Solution"), or one whose value pattern
            reads the question's own words ("the Corrosion pictogram": not a "Skin
            Corrosion" class); empty when any value may.
        distinct: for a collection question that asks which values a property takes
            across the documents ("What UN numbers appear in our sheets?", "How many
            different suppliers ..."): each value with the documents that state it.
        top: for a collection extreme, how many documents it asks for ("the three
            products with the lowest flash points"; ``None``: the one, ties included).
        summed: for a collection question that asks the sum of a quantity ("the total
            of all invoices in EUR"): each document's value of ``properties[0]``, added
            up per unit.
        unit: for a collection extreme or sum, the unit (a currency) the question asks
            it in ("the largest invoice in EUR"): only values in it count.
        also: for a collection ``filter`` with more than one constraint, the others, each
            a filter of its own on the same documents ("Which sheets revised in 2024 list
            UN1789?": the span here, the identifier there): a member meets them all.
        period: for a collection ``filter`` on a date ("revised in 2023", "dated
            December 2021"): the span the asked date property's typed value must fall in.
        other_items: for a ``procedure``: the labels of the properties not asked (of two
            or more words, as ``normalize_label`` squashes them): a passage item that
            opens with one ("Personal protection ...") is that item's text, not the
            asked one's.
        items: the properties an asked umbrella property brought along (its
            sub-properties the question does not name: "exposure limits" brings the
            OSHA, ACGIH and NIOSH ones): said when a document states them, never one by
            one as "not stated".
        umbrellas: the asked properties that brought ``items``: a document that states
            an item but not the umbrella is not said to lack the umbrella.
        concepts: for a collection question, the ontology's concepts it asks for
            ("corrosive", "skin irritants": ``ConceptDef``): its members are the
            documents whose values state one of them (or a narrower one).
        concept_codes: per concept, the codes the question gives beside it ("Flammable
            Liquids Category 2": ``("2",)``): the code printed with the concept must be
            one of them; ``()``: any.
        concept_words: per concept, the words the question named it by, as asked.
        concept_scheme: every concept of the ontology (set with ``concepts``): where
            their narrower concepts are read.
        concept_combined: the question asks more than its concepts (a code, another
            property: "corrosive products not regulated for transport"): a member
            states the concepts and what the question's other words ask.
        concept_negated: per concept, whether the question denies it ("Which acids are
            not corrosive?"): a member does not state it.
        readings: names the question gives that no document prints, as a model read
            them (``Reading``): the answer opens by saying so; an empty ``doc_ids``
            with ``out_of_scope`` means the reading linked no document or is unsure.
    """

    question: str
    subjects: tuple[SubjectMatch, ...]
    properties: tuple[PropertyDef, ...]
    intent: Intent
    filter_terms: tuple[str, ...] = field(default=())
    missing: tuple[str, ...] = field(default=())
    reason: str | None = None
    search: str | None = None
    polar: bool = False
    polar_subject: str | None = None
    threshold: Threshold | None = None
    filter_phrase: str | None = None
    sections: tuple[int, ...] = ()
    noun: str = "document"
    kind_words: frozenset[str] = frozenset()
    named_words: frozenset[str] = frozenset()
    typed: frozenset[str] = frozenset()
    patterns: tuple[tuple[str, str], ...] = ()
    unlinked: tuple[str, ...] = ()
    collection: bool = False
    counting: bool = False
    aggregate: bool = False
    vocabulary: frozenset[str] = frozenset()
    named_set: tuple[str, ...] = ()
    set_name: str | None = None
    set_by_source: bool = False
    set_loose: bool = False
    unnamed: bool = False
    kind_noun: str | None = None
    kind_set: tuple[str, ...] = ()
    kind_label: str | None = None
    others_of: tuple[str, ...] = ()
    other_name: tuple[str, ...] = ()
    coded: tuple[str, tuple[str, ...]] | None = None
    also: tuple[QuestionAnalysis, ...] = ()
    own_only: frozenset[str] = frozenset()
    distinct: bool = False
    top: int | None = None
    summed: bool = False
    unit: str | None = None
    period: DateSpan | None = None
    other_items: frozenset[str] = frozenset()
    items: frozenset[str] = frozenset()
    umbrellas: frozenset[str] = frozenset()
    concepts: tuple[ConceptDef, ...] = ()
    concept_codes: tuple[tuple[str, ...], ...] = ()
    concept_words: tuple[str, ...] = ()
    concept_scheme: tuple[ConceptDef, ...] = ()
    concept_combined: bool = False
    concept_negated: tuple[bool, ...] = ()
    readings: tuple[Reading, ...] = ()

    @property
    def answered_directly(self) -> bool:
        """Whether the supervisor answers without the stores (out of scope, unsafe)."""
        return self.intent in ("out_of_scope", "unsafe")

    @property
    def doc_ids(self) -> list[str]:
        """Documents of the linked products."""
        return [p.doc_id for p in self.subjects]

    @property
    def topic(self) -> str:
        """The question without the product names (what to search for inside their sheets)."""
        rest = without_names(self.question, self.subjects).strip(" ,;:?")
        return rest if tokens(rest) else self.question
