"""Ontologies loaded from Turtle: vocabulary for prompts, validation, IRI minting.

``TurtleOntology`` implements ``Ontology``. It is built
from Turtle text (``from_turtle``) or a file (``from_file``); the constructor itself
takes already-parsed definitions and does no I/O. ``load_ontology`` resolves the
bundled ontology by name (``"msds"``), a user's ``.ttl`` path, or passes an existing
ontology through.

Besides the protocol, a ``TurtleOntology`` implements ``OntologyMatching``:
``match_properties`` (which properties a question talks about, by labels, alternative
labels and the search-only ``skos:hiddenLabel`` forms people use, matched on word stems),
the reading hints ``value_kind`` / ``value_pattern`` / ``section`` / ``read_from``, and
``document_model`` (which class a document is about, which properties name and identify
it, which classes are its repeated parts).

Everything is read from standard vocabulary first (``owl:Class``, ``rdfs:label`` and
``skos:altLabel`` in any language, ``skos:hiddenLabel``, ``rdfs:domain``, ``rdfs:range``
such as ``xsd:decimal`` or ``xsd:date``, ``rdfs:subPropertyOf``, ``owl:hasKey``), then
from the small annotation vocabulary in the ``hr:`` namespace
(``http://hybrid-rag.org/ns#``, documented in ``docs/guides/own-domain.md``):
``hr:unit``, ``hr:valueKind``, ``hr:valuePattern``, ``hr:section``, ``hr:readFrom``,
``hr:readingLabel``, ``hr:lowerWhenMore``, ``hr:documentSubject``, ``hr:namesSubject``,
``hr:namesSource``, ``hr:namesKind``, ``hr:identifiesSubject``, ``hr:part`` and
``hr:documentNoun``. An ontology with none of them still ingests and answers: the
defaults are derived from the standard vocabulary.
The same annotations in the ontology's own namespace are read too (older ontologies).
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hybrid_rag._vocab import RDF_TYPE
from hybrid_rag.errors import OntologyError
from hybrid_rag.text import suffix_stem
from hybrid_rag.types import ClassDef, ConceptDef, DocumentModel, Ontology, PropertyDef

if TYPE_CHECKING:
    from hybrid_rag.rdf import Triple

__all__ = [
    "TurtleOntology",
    "document_model",
    "load_ontology",
    "normalize_label",
    "slugify",
    "split_camel",
]

_RDFS = "http://www.w3.org/2000/01/rdf-schema#"
_OWL = "http://www.w3.org/2002/07/owl#"
_SKOS_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
_SKOS_HIDDEN = "http://www.w3.org/2004/02/skos/core#hiddenLabel"
_XSD = "http://www.w3.org/2001/XMLSchema#"
_SAFE_LOCAL = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_MAX_SLUG = 80
_TOKEN = re.compile(r"[a-z0-9]+")


def slugify(label: str, *, max_length: int = _MAX_SLUG) -> str:
    """A HANA-safe local name (``[A-Za-z][A-Za-z0-9_-]*``) derived from ``label``.

    Accents are folded to ASCII, other characters become ``-`` (collapsed), a name not
    starting with a letter gets an ``n`` prefix, and names longer than ``max_length``
    are cut and suffixed with a short hash of the full label so they stay unique.

    Raises:
        OntologyError: when ``label`` has no letter or digit at all.
    """
    folded = unicodedata.normalize("NFKD", label).encode("ascii", "ignore").decode("ascii")
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", folded)
    slug = re.sub(r"-{2,}", "-", slug).strip("-_")
    if not slug or not re.search(r"[A-Za-z0-9]", slug):
        raise OntologyError(f"cannot mint an IRI from label {label!r}: no letters or digits")
    if not slug[0].isalpha():
        slug = "n" + slug
    if len(slug) > max_length:
        digest = hashlib.sha1(label.encode("utf-8")).hexdigest()[:8]
        slug = slug[: max_length - 9].rstrip("-_") + "-" + digest
    return slug


def normalize_label(text: str) -> list[str]:
    """Lower-case ASCII tokens of ``text``, each reduced to a light stem.

    An irregular verb form is read as its base first ("fought" as "fight").

    Plurals and ``-ed`` / ``-ing`` endings and a final ``e`` go
    (``hybrid_rag.text.suffix_stem``), so ``"Odors"`` and ``"odor"``, ``"boils"``,
    ``"boiling"`` and ``"boil"``, ``"swallowed"`` and ``"swallow"`` give the same token.
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = _TOKEN.findall(folded.lower())
    return [suffix_stem(_IRREGULAR.get(t, t)) for t in words if t != "s"]


_IRREGULAR = {
    **dict.fromkeys(("fought",), "fight"),
    **dict.fromkeys(("gave", "given"), "give"),
    **dict.fromkeys(("took", "taken"), "take"),
    **dict.fromkeys(("wore", "worn"), "wear"),
    **dict.fromkeys(("broke", "broken"), "break"),
    **dict.fromkeys(("threw", "thrown"), "throw"),
    **dict.fromkeys(("spilt",), "spill"),
    **dict.fromkeys(("kept",), "keep"),
    **dict.fromkeys(("held",), "hold"),
    **dict.fromkeys(("brought",), "bring"),
    **dict.fromkeys(("caught",), "catch"),
    **dict.fromkeys(("froze", "frozen"), "freeze"),
}
"""Irregular English verb forms and their base ("how should the fire be fought" names
"fight a fire"): English morphology, no domain's words."""


_FUNCTION_WORDS = frozenset(
    ["a", "an", "the", "is", "are", "was", "were", "be", "been", "if", "of", "it", "its", "do"]
)
"""Words a label match skips on both sides: "How toxic is X if inhaled" (the product
taken out) reads "toxic inhal", as the label "toxic if inhaled" does."""


def _content_label(text: str) -> list[str]:
    return [t for t in normalize_label(text) if t not in _FUNCTION_WORDS]


_SCATTER_SLACK = 5
"""How many other words may sit among a label's words, in any order, for it to match
("which hazard class and category ... under GHS" names "GHS hazard class")."""


_GRAMMAR = frozenset(
    "what which who whom whose when where why how for and or nor but not no to in on at by"  # noqa: SIM905
    " from with without into onto over under per as than that this these those there".split()
)
"""Words that make a label a phrase ("what for", "appearance and odor"): such a label
matches only as written, never with its words spread."""


@dataclass(frozen=True, slots=True)
class _LabelIndex:
    by_squash: dict[str, list[tuple[str, int]]]  # squashed label -> (property name, #chars)
    max_tokens: int
    shown: dict[str, set[str]]  # squashed displayed label -> properties that display it
    by_words: dict[frozenset[str], list[tuple[str, int, str]]]  # words -> (name, #chars, key)


def _scattered(
    tokens: Sequence[str], index: _LabelIndex
) -> list[tuple[int, frozenset[int], str, str]]:
    """Labels of two or more words whose words all occur in ``tokens`` close together, in
    any order: ``(#chars - 1, positions, name, squashed key)``. One char less lets the
    label's words as written win a tie."""
    where: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens):
        where.setdefault(tok, []).append(i)
    have = set(where)
    found: list[tuple[int, frozenset[int], str, str]] = []
    for words, entries in index.by_words.items():
        if not words <= have:
            continue
        spots = _closest(words, where)
        if max(spots) - min(spots) + 1 > len(words) + _SCATTER_SLACK:
            continue
        ordered = sorted(spots)
        run = "".join(tokens[i] for i in ordered)
        adjacent = ordered[-1] - ordered[0] + 1 == len(ordered)
        runs = {n for n, _c in index.by_squash.get(run, ())} if adjacent else set()
        for name, chars, key in entries:
            if name not in runs:  # as written and adjacent, it matched as a run already
                found.append((chars - 1, frozenset(spots), name, key))
    return found


_COORDINATORS = frozenset(("and", "or", "nor"))


def _interrupted(
    spots: frozenset[int], runs: Sequence[frozenset[int]], tokens: Sequence[str]
) -> bool:
    """Whether a label spread over ``spots`` has another label printed as written in its
    gap, sharing a word with it ("customer's VAT number": "VAT number" is asked, not the
    "customer number"). Coordinated labels share their head words and stay ("upper and
    lower explosion limits"); a label the spread one contains is no interruption ("hazard
    class ... under GHS": the "GHS hazard class")."""
    gap = set(range(min(spots), max(spots) + 1)) - spots
    if not gap or any(tokens[i] in _COORDINATORS for i in gap):
        return False
    return any(run & gap and run & spots and not run <= spots for run in runs)


def _nearest(positions: list[int], anchor: int) -> int:
    return min(positions, key=lambda i: abs(i - anchor))


def _closest(words: frozenset[str], where: dict[str, list[int]]) -> list[int]:
    """One position per word, the tightest choice around each occurrence of the first."""
    ordered = sorted(words)
    best: list[int] = []
    for anchor in where[ordered[0]]:
        spots = [_nearest(where[w], anchor) for w in ordered]
        if not best or max(spots) - min(spots) < max(best) - min(best):
            best = spots
    return best


class TurtleOntology:
    """An ontology held in memory, read from OWL/RDFS Turtle.

    Thread-safe for reads; instances are immutable after construction.

    Args:
        namespace: IRI prefix of the ontology's own terms (ends with ``#`` or ``/``).
        classes: class definitions.
        properties: property definitions.
        annotations: per property local name, extra annotations (``valueKind``,
            ``valuePattern``, ``section``) as plain strings.
        search_labels: per property local name, search-only labels (``skos:hiddenLabel``:
            the verbs, adjectives and paraphrases people use in questions). They feed
            ``match_properties`` only, never display or extraction.
        reading_labels: per property local name, labels read from documents but never
            matched against questions (``hr:readingLabel``: a sub-heading such as "Eyes"
            that names the field only inside its section).
        read_from: per property local name, the properties whose values may also carry
            its value (``msds:readFrom``).
        narrower: per property local name, its sub-properties (``rdfs:subPropertyOf``):
            "personal protective equipment" is eye, hand, skin and respiratory protection.
        lower_when_more: per property local name, adjectives that a subject has more of
            when the value is lower (``hr:lowerWhenMore``).
        model: what documents are about, which properties name and identify their
            subject, which classes are its parts (``DocumentModel``; default: none).
        source: where the definitions came from, for error messages.
        prefix: the short name of ``namespace`` in prompts (``inv``); default one made
            from the namespace (``from_turtle`` uses the prefix the file binds to it).
        concepts: the values the ontology names (``skos:Concept``: ``ConceptDef``).

    Raises:
        OntologyError: no properties; a concept's pattern that does not compile, or a
            concept naming a property or narrower concept the ontology lacks.
    """

    def __init__(
        self,
        *,
        namespace: str,
        classes: Sequence[ClassDef],
        properties: Sequence[PropertyDef],
        annotations: dict[str, dict[str, str]] | None = None,
        search_labels: dict[str, tuple[str, ...]] | None = None,
        read_from: dict[str, tuple[str, ...]] | None = None,
        reading_labels: dict[str, tuple[str, ...]] | None = None,
        narrower: dict[str, tuple[str, ...]] | None = None,
        lower_when_more: dict[str, tuple[str, ...]] | None = None,
        model: DocumentModel | None = None,
        source: str = "<memory>",
        prefix: str | None = None,
        concepts: Sequence[ConceptDef] = (),
    ) -> None:
        if not properties:
            raise OntologyError(f"ontology {source} defines no properties")
        self._namespace = namespace
        self._prefix = prefix or _prefix_of(namespace)
        self._classes = list(classes)
        self._props = list(properties)
        self._by_name = {p.name: p for p in self._props}
        self._by_iri = {p.iri: p for p in self._props}
        self._class_iris = {c.iri for c in self._classes}
        self._annotations = dict(annotations or {})
        self._search = dict(search_labels or {})
        self._read_from = dict(read_from or {})
        self._reading = dict(reading_labels or {})
        self._narrower = dict(narrower or {})
        self._lower_when_more = dict(lower_when_more or {})
        self._model = model or DocumentModel()
        self._source = source
        self._label_index: _LabelIndex | None = None
        self._concepts = _checked_concepts(concepts, self._by_name, source)

    # ------------------------------------------------------------ construction

    @classmethod
    def from_turtle(cls, text: str, *, source: str = "<string>") -> TurtleOntology:
        """Parse Turtle text.

        Raises:
            OntologyError: invalid Turtle, or no properties defined.
        """
        import rdflib

        graph = rdflib.Graph()
        try:
            graph.parse(data=text, format="turtle")
        except Exception as exc:  # rdflib raises many parser-specific types
            raise OntologyError(f"invalid Turtle in ontology {source}: {exc}") from exc
        return _from_graph(graph, source=source, order=_declaration_order(text))

    @classmethod
    def from_file(cls, path: str | Path) -> TurtleOntology:
        """Read a Turtle file.

        Raises:
            OntologyError: missing or unreadable file, invalid Turtle, no properties.
        """
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise OntologyError(f"ontology file not found: {p}") from exc
        except (OSError, UnicodeDecodeError) as exc:
            raise OntologyError(f"cannot read ontology file {p}: {exc}") from exc
        return cls.from_turtle(text, source=str(p))

    # ------------------------------------------------------------ protocol

    @property
    def prefix(self) -> str:
        """The short name of the namespace in prompts (the Turtle file's own prefix)."""
        return self._prefix

    @property
    def namespace(self) -> str:
        """Namespace IRI of the ontology's terms."""
        return self._namespace

    def classes(self) -> list[ClassDef]:
        """All classes."""
        return list(self._classes)

    def concepts(self) -> tuple[ConceptDef, ...]:
        """The values the ontology names (``OntologyConcepts``), in declaration order."""
        return self._concepts

    def properties(self) -> list[PropertyDef]:
        """All object and datatype properties."""
        return list(self._props)

    def property(self, name: str) -> PropertyDef:
        """A property by local name, prefixed name (``ex:shipDate``) or IRI.

        Raises:
            OntologyError: unknown property.
        """
        found = self._by_name.get(name) or self._by_iri.get(name)
        if found is None and ":" in name and not name.startswith("http"):
            found = self._by_name.get(name.split(":", 1)[1])
        if found is None:
            raise OntologyError(f"unknown property {name!r} in ontology {self._source}")
        return found

    def mint_iri(self, label: str, *, base: str) -> str:
        """A HANA-safe IRI: ``base`` followed by ``slugify`` of ``label``."""
        return base + slugify(label)

    def validate(self, triples: Sequence[Triple]) -> list[str]:
        """Problems with ``triples``: unknown ontology predicates or classes, unsafe IRIs."""
        problems: list[str] = []
        for s, p, o in triples:
            if p.kind != "iri":
                problems.append(f"predicate is not an IRI: {p.value!r}")
                continue
            if p.value.startswith(self._namespace) and p.value not in self._by_iri:
                problems.append(f"unknown property <{p.value}>")
            if (
                p.value == RDF_TYPE
                and o.kind == "iri"
                and o.value.startswith(self._namespace)
                and o.value not in self._class_iris
            ):
                problems.append(f"unknown class <{o.value}>")
            for term in (s, o):
                if term.kind == "iri" and not _safe_iri(term.value):
                    problems.append(f"IRI not HANA-safe: <{term.value}>")
        return problems

    def vocabulary(self) -> str:
        """A compact listing of classes and properties for LLM prompts."""
        pre = self._prefix
        lines = [f"PREFIX {pre}: <{self._namespace}>", "Classes:"]
        for c in self._classes:
            lines.append(f"  {pre}:{c.name} - {c.label}" + (f": {c.comment}" if c.comment else ""))
        lines.append("Object properties (subject -> object):")
        for p in self._props:
            if p.kind == "object":
                lines.append("  " + _describe(p, pre))
        lines.append("Datatype properties (literal values):")
        for p in self._props:
            if p.kind == "datatype":
                lines.append("  " + _describe(p, pre))
        return "\n".join(lines)

    # ------------------------------------------------------------ extras

    def value_kind(self, name: str) -> str:
        """How a value of the property is read (``hr:valueKind``).

        Without the annotation: ``identifier`` for a property that identifies the
        subject, ``number`` for an ``rdfs:range`` of ``xsd:decimal`` (or another
        numeric type) or a property with a unit, ``date`` for ``xsd:date`` (and
        ``dateTime``, ``gYear``, ``gYearMonth``), ``currency`` for a property whose
        local name or label has the word "currency", else ``text``.
        """
        said = self._annotations.get(name, {}).get("valueKind")
        if said is not None:
            return said
        prop = self._by_name.get(name)
        if prop is None or prop.kind != "datatype":
            return "text"
        if name in self._model.identifying:
            return "identifier"
        if prop.range in _NUMERIC or prop.unit:
            return "number"
        if prop.range in _DATES:
            return "date"
        words = {*split_camel(prop.name).lower().split(), *prop.label.lower().split()}
        return "currency" if "currency" in words else "text"

    def document_model(self) -> DocumentModel:
        """What documents are about and which properties name and identify it."""
        return self._model

    def value_pattern(self, name: str) -> str | None:
        """The regular expression a stated value must contain, if annotated."""
        return self._annotations.get(name, {}).get("valuePattern")

    def find_pattern(self, name: str) -> str | None:
        """A regular expression that finds the value without its label near the top of
        the first page (``hr:findPattern``: a company's legal form for the issuer)."""
        return self._annotations.get(name, {}).get("findPattern")

    def section(self, name: str) -> int | None:
        """The numbered section (``hr:section``) the property's values are printed in."""
        value = self._annotations.get(name, {}).get("section")
        return int(value) if value is not None and value.isdigit() else None

    def max_values(self, name: str) -> int | None:
        """How many distinct values of the property one document may state
        (``hr:maxValues``); ``None`` for the reader's default."""
        value = self._annotations.get(name, {}).get("maxValues")
        return int(value) if value is not None and value.isdigit() and int(value) > 0 else None

    def reading_labels(self, name: str) -> tuple[str, ...]:
        """Labels of the property read from documents only (``hr:readingLabel``)."""
        return self._reading.get(name, ())

    def read_from(self, name: str) -> tuple[str, ...]:
        """Properties whose stated values may also carry this one's (``hr:readFrom``).

        Without the annotation, a currency is read from the numbers of its own class (the
        amounts printed with it); and the first date property the ontology declares for
        the document's subject is read from the first property that identifies it (a
        document's date printed after its number: "No. 562044387 du 02 Juillet 2015")."""
        if name in self._read_from or self.value_kind(name) != "currency":
            return self._read_from.get(name, ())
        domain = self._by_name[name].domain
        return tuple(
            p.name
            for p in self._props
            if p.domain == domain and p.name != name and self.value_kind(p.name) == "number"
        )

    def narrower(self, name: str) -> tuple[str, ...]:
        """The property's sub-properties (``rdfs:subPropertyOf`` it), in ontology order."""
        return self._narrower.get(name, ())

    def search_labels(self, name: str) -> tuple[str, ...]:
        """The property's search-only labels (``skos:hiddenLabel``)."""
        return self._search.get(name, ())

    def lower_when_more(self, name: str) -> tuple[str, ...]:
        """Adjectives a subject has more of when the value is lower (``hr:lowerWhenMore``)."""
        return self._lower_when_more.get(name, ())

    def match_properties(self, text: str) -> list[tuple[PropertyDef, float]]:
        """Which properties ``text`` (typically a question) talks about.

        Labels, alternative labels and search-only labels (``skos:hiddenLabel``: "boil",
        "look like", "breathe in") are matched on token boundaries, ignoring case,
        accents, punctuation and spacing (``auto-ignition`` = ``autoignition``,
        ``UN-no`` = ``UN no``) and inflection (``boils`` / ``boiling`` = ``boil``).
        Longer matches win where matches overlap; of equally long ones, the property the
        text names more often. Properties that share a displayed label (a relation and a
        text property both labelled "hazard statements") both match it. Scores lie in
        (0, 1); longer labels score higher.

        Returns:
            ``(property, score)`` pairs, best first, each property once.
        """
        index = self._labels()
        tokens = _content_label(text)
        spans: list[tuple[int, frozenset[int], str]] = []  # (-chars, positions, name)
        keys: dict[frozenset[int], str] = {}
        for i in range(len(tokens)):
            joined = ""
            for j in range(i, min(len(tokens), i + index.max_tokens)):
                joined += tokens[j]
                for name, chars in index.by_squash.get(joined, ()):
                    spots = frozenset(range(i, j + 1))
                    spans.append((-chars, spots, name))
                    keys[spots] = joined
        spread: set[frozenset[int]] = set()
        runs = [sp for _c, sp, _n in spans]
        for chars, spots, name, key in _scattered(tokens, index):
            if _interrupted(spots, runs, tokens):
                continue
            spans.append((-chars, spots, name))
            keys.setdefault(spots, key)
            spread.add(spots)
        support: dict[str, int] = {}
        for _c, _p, name in spans:
            support[name] = support.get(name, 0) + 1
        # equal lengths: the property the question names elsewhere too takes the span
        # ("contained and cleaned up" after "spill": the spill clean-up, not a component)
        spans.sort(key=lambda sp: (sp[0], -support[sp[2]], min(sp[1]), max(sp[1]), sp[2]))
        taken: set[int] = set()
        owner: dict[frozenset[int], str] = {}
        best: dict[str, float] = {}
        for neg_chars, spots, name in spans:
            first = owner.get(spots)
            twin = (
                first is not None
                and support[first] == support[name]
                and all(n in index.shown.get(keys[spots], ()) for n in (first, name))
            )
            # spread words may share some with a run ("lower and upper explosion limits")
            shared = spots in spread and bool(spots - taken)
            if spots & taken and name not in best and not twin and not shared:
                continue
            taken |= spots
            owner.setdefault(spots, name)
            score = 0.5 + 0.5 * -neg_chars / (-neg_chars + 6.0)
            best[name] = max(best.get(name, 0.0), score)
        ranked = sorted(best.items(), key=lambda kv: -kv[1])
        return [(self._by_name[n], s) for n, s in ranked]

    def _labels(self) -> _LabelIndex:
        if self._label_index is None:
            by_squash: dict[str, list[tuple[str, int]]] = {}
            by_words: dict[frozenset[str], list[tuple[str, int, str]]] = {}
            shown: dict[str, set[str]] = {}
            max_tokens = 1
            kinds = self._kind_keys()  # "Invoice #" says "invoice": the document, no property
            # ... and a word naming the document is in most questions: such a label
            # ("bill date") matches only as written, never spread ("date was bill 2026-118")
            nouns = self._kind_words()
            for p in self._props:
                for label in p.labels:
                    shown.setdefault("".join(_content_label(label)), set()).add(p.name)
                every = (*p.labels, *self.search_labels(p.name), split_camel(p.name))
                for label in dict.fromkeys(every):  # in order: one index whatever the hash seed
                    toks = _content_label(label)
                    if not toks or "".join(toks) in kinds:
                        continue
                    key = "".join(toks)
                    max_tokens = max(max_tokens, len(toks))
                    entry = by_squash.setdefault(key, [])
                    if all(n != p.name for n, _ in entry):
                        entry.append((p.name, len(key)))
                    words = frozenset(toks)
                    if len(words) == len(toks) >= 2 and not words & (_GRAMMAR | nouns):
                        spread = by_words.setdefault(words, [])
                        if all(n != p.name for n, _c, _k in spread):
                            spread.append((p.name, len(key), key))
            self._label_index = _LabelIndex(by_squash, max_tokens + 2, shown, by_words)
        return self._label_index

    def _kind_words(self) -> frozenset[str]:
        """Words of the subject class's labels and of the document noun."""
        cls = next((c for c in self._classes if c.name == self._model.subject_class), None)
        labels = [cls.label, *cls.alt_labels] if cls is not None else []
        return frozenset(
            t for lab in [*labels, self._model.document_noun] for t in _content_label(lab)
        )

    def _kind_keys(self) -> set[str]:
        """Squashed labels of the subject class (what a question calls the document)."""
        cls = next((c for c in self._classes if c.name == self._model.subject_class), None)
        labels = (cls.label, *cls.alt_labels) if cls is not None else ()
        return {"".join(_content_label(label)) for label in labels}

    def __repr__(self) -> str:
        return (
            f"TurtleOntology(namespace={self._namespace!r}, classes={len(self._classes)}, "
            f"properties={len(self._props)}, source={self._source!r})"
        )


def _short_alts(alts: Sequence[str], *, n: int = 4, longest: int = 40) -> list[str]:
    """Up to ``n`` alternative labels for a prompt: short ones, no label that merely
    extends an earlier one ("Conditions for safe storage, including any ...")."""
    out: list[str] = []
    for alt in alts:
        if len(alt) <= longest and not any(alt.lower().startswith(o.lower()) for o in out):
            out.append(alt)
    return out[:n]


def split_camel(name: str) -> str:
    """A camel-case name as words: ``"lastSeenAt"`` -> ``"last Seen At"``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)


def _safe_iri(value: str) -> bool:
    if value.startswith("urn:"):
        return True
    local = re.split(r"[#/]", value)[-1]
    return bool(_SAFE_LOCAL.fullmatch(local))


def _describe(p: PropertyDef, prefix: str) -> str:
    dom = p.domain.rsplit("#", 1)[-1] if p.domain else "?"
    rng = p.range.rsplit("#", 1)[-1] if p.range else "?"
    text = f'{prefix}:{p.name} ({dom} -> {rng}) "{p.label}"'
    if p.unit:
        text += f" [unit {p.unit}]"
    if p.alt_labels:
        text += " aka " + ", ".join(_short_alts(p.alt_labels))
    return text


# ---------------------------------------------------------------- graph reading

HR_NS = "http://hybrid-rag.org/ns#"
"""The namespace of hybrid_rag's annotation vocabulary (``hr:``)."""

_HINTS = ("valueKind", "valuePattern", "findPattern", "section", "maxValues")
_NAME_PARENTS = frozenset(
    [
        _RDFS + "label",
        "http://www.w3.org/2004/02/skos/core#prefLabel",
        _SKOS_ALT,
        "http://schema.org/name",
        "https://schema.org/name",
        "http://xmlns.com/foaf/0.1/name",
    ]
)
"""Properties whose sub-properties name what they describe (standard vocabulary)."""
_NUMERIC = frozenset(
    _XSD + t
    for t in (
        "decimal", "double", "float", "integer", "int", "long", "short", "nonNegativeInteger",
        "positiveInteger", "negativeInteger", "nonPositiveInteger", "unsignedInt", "unsignedLong",
    )
)  # fmt: skip
_DATES = frozenset(_XSD + t for t in ("date", "dateTime", "dateTimeStamp", "gYearMonth", "gYear"))
_SOURCE_WORDS = frozenset(
    ["supplier", "manufacturer", "maker", "vendor", "seller", "issuer", "distributor", "brand"]
)
"""Words of a local name that, with "name", make a property naming the subject's source
(``vendorName``): the default when the ontology marks none (``hr:namesSource``)."""

_ID_WORDS = frozenset(["number", "no", "nr", "num", "id", "code", "reference", "ref", "key"])
"""Last words of a local name that, by naming convention, make an identifier
(``serialNumber``, ``accountId``): the default when the ontology marks no identifier."""


def _ann(graph: Any, subj: str, key: str, own_ns: str) -> list[str]:
    """Values of annotation ``key``: ``hr:key``, else the subject's own namespace's."""
    return _values(graph, subj, HR_NS + key) or _values(graph, subj, own_ns + key)


def _true(values: Sequence[str]) -> bool:
    return any(_rank(v) is not None for v in values)


def _rank(value: str) -> float | None:
    """``true`` (1), a positive number (its rank), else ``None`` (false or unreadable)."""
    v = value.strip().lower()
    if v in ("true", "yes"):
        return 1.0
    try:
        n = float(v)
    except ValueError:
        return None
    return n if n > 0 else None


def _declaration_order(text: str) -> dict[str, int]:
    """Where each term is first declared in the Turtle text (``ex:total a ...``), by its
    local name: the order the author wrote the terms in (a graph keeps none)."""
    found: dict[str, int] = {}
    for m in re.finditer(r"(?m)^\s*(?:\w*:|<[^>]*[#/])(\w[\w-]*)>?\s+a\s", text):
        found.setdefault(m.group(1), m.start())
    return found


def _from_graph(graph: Any, *, source: str, order: dict[str, int] | None = None) -> TurtleOntology:
    from rdflib import RDF, URIRef

    owl_classes = [URIRef(_OWL + "Class"), URIRef(_RDFS + "Class")]
    class_iris = {str(s) for t in owl_classes for s in graph.subjects(RDF.type, t)}
    kinds = {
        "object": URIRef(_OWL + "ObjectProperty"),
        "datatype": URIRef(_OWL + "DatatypeProperty"),
    }
    props: list[PropertyDef] = []
    annotations: dict[str, dict[str, str]] = {}
    search: dict[str, tuple[str, ...]] = {}
    read_from: dict[str, tuple[str, ...]] = {}
    reading: dict[str, tuple[str, ...]] = {}
    narrower: dict[str, list[str]] = {}
    inverse: dict[str, tuple[str, ...]] = {}
    for kind, type_iri in kinds.items():
        for subj in sorted(graph.subjects(RDF.type, type_iri), key=str):
            if not isinstance(subj, URIRef):
                continue
            pdef, extra = _property(graph, str(subj), kind)
            props.append(pdef)
            if extra:
                annotations[pdef.name] = extra
            if hidden := _values(graph, pdef.iri, _SKOS_HIDDEN):
                search[pdef.name] = tuple(hidden)
            ns = pdef.iri[: len(pdef.iri) - len(pdef.name)]
            if sources := _ann(graph, pdef.iri, "readFrom", ns):
                read_from[pdef.name] = tuple(_local(v) for v in sources)
            if printed := _ann(graph, pdef.iri, "readingLabel", ns):
                reading[pdef.name] = tuple(printed)
            if words := _ann(graph, pdef.iri, "lowerWhenMore", ns):
                inverse[pdef.name] = tuple(words)
            for parent in _values(graph, pdef.iri, _RDFS + "subPropertyOf"):
                narrower.setdefault(_local(parent), []).append(pdef.name)
    if not props:
        raise OntologyError(f"ontology {source} defines no properties")
    classes = [_class(graph, iri) for iri in sorted(class_iris) if not iri.startswith("_")]
    namespace = _namespace([p.iri for p in props])
    onto = TurtleOntology(
        namespace=namespace,
        classes=classes,
        properties=props,
        annotations=annotations,
        search_labels=search,
        read_from=read_from,
        reading_labels=reading,
        narrower={k: tuple(v) for k, v in narrower.items()},
        lower_when_more=inverse,
        model=_document_model(graph, classes, props, annotations, namespace, order or {}),
        prefix=_prefix(graph, namespace),
        source=source,
        concepts=_concepts(graph, order or {}),
    )
    _dated_by_number(onto, order or {})
    return onto


_SKOS = "http://www.w3.org/2004/02/skos/core#"


def _concepts(graph: Any, order: dict[str, int]) -> list[ConceptDef]:
    """The ``skos:Concept`` individuals with their labels, patterns, properties,
    categories and narrower concepts (``skos:narrower`` or the inverse
    ``skos:broader``), in declaration order."""
    from rdflib import RDF, URIRef

    iris = sorted({str(s) for s in graph.subjects(RDF.type, URIRef(_SKOS + "Concept"))})
    iris = [i for i in iris if not i.startswith("_")]
    iris.sort(key=lambda i: order.get(_local(i), 1 << 30))
    broader: dict[str, list[str]] = {}
    for iri in iris:
        for parent in _values(graph, iri, _SKOS + "broader"):
            broader.setdefault(_local(parent), []).append(_local(iri))
    return [_concept(graph, iri, broader.get(_local(iri), [])) for iri in iris]


def _concept(graph: Any, iri: str, children: Sequence[str]) -> ConceptDef:
    name = _local(iri)
    ns = iri[: len(iri) - len(name)]
    pref = [t for t, _l in _texts(graph, iri, _SKOS + "prefLabel")]
    label, alts = _labels(graph, iri, name)
    label = pref[0] if pref else label
    alts = tuple(dict.fromkeys(a for a in (*pref[1:], *alts) if a != label))
    narrower = [*(_local(n) for n in _values(graph, iri, _SKOS + "narrower")), *children]
    definition = _texts(graph, iri, _SKOS + "definition")
    return ConceptDef(
        iri=iri,
        name=name,
        label=label,
        alt_labels=alts,
        search_labels=tuple(_values(graph, iri, _SKOS_HIDDEN)),
        definition=definition[0][0] if definition else "",
        patterns=tuple(_ann(graph, iri, "valuePattern", ns)),
        properties=tuple(_local(v) for v in _ann(graph, iri, "valueOf", ns)),
        categories=tuple(_ann(graph, iri, "category", ns)),
        narrower=tuple(dict.fromkeys(narrower)),
        stated_categories=tuple(_ann(graph, iri, "statesCategory", ns)),
    )


def _checked_concepts(
    concepts: Sequence[ConceptDef], props: dict[str, PropertyDef], source: str
) -> tuple[ConceptDef, ...]:
    """The concepts, each checked: patterns compile, properties and narrower concepts
    exist."""
    names = {c.name for c in concepts}
    for c in concepts:
        for pattern in c.patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise OntologyError(
                    f"concept {c.name} in ontology {source}: valuePattern {pattern!r} is not "
                    f"a regular expression ({exc})"
                ) from None
        if unknown := [p for p in c.properties if p not in props]:
            raise OntologyError(
                f"concept {c.name} in ontology {source}: valueOf names no property of it: "
                + ", ".join(unknown)
            )
        if unknown := [n for n in c.narrower if n not in names]:
            raise OntologyError(
                f"concept {c.name} in ontology {source}: narrower names no concept of it: "
                + ", ".join(unknown)
            )
    return tuple(concepts)


def _dated_by_number(onto: TurtleOntology, order: dict[str, int]) -> None:
    """The subject's first declared date property: the document model's ``dating``, and
    its default ``readFrom``, the identifier named after the subject's class ("Invoice
    No. 123 of 2 July 2015"), else its first declared identifier."""
    model = onto.document_model()
    own = [p for p in onto.properties() if _local(p.domain or "") == model.subject_class]
    own.sort(key=lambda p: order.get(p.name, 1 << 30))
    date = next((p.name for p in own if onto.value_kind(p.name) == "date"), None)
    cls = next((c for c in onto.classes() if c.name == model.subject_class), None)
    words = set(split_camel(model.subject_class or "").lower().split())
    words |= set((cls.label if cls else "").lower().split()) | {model.document_noun.lower()}
    ids = [p for p in own if p.name in model.identifying]
    ids.sort(key=lambda p: not words & set(split_camel(p.name).lower().split()))
    ident = ids[0].name if ids else None  # the document's own number first
    if date is not None and ident is not None and date not in onto._read_from:
        onto._read_from[date] = (ident,)
    if date is not None:
        onto._model = replace(onto._model, dating=date)
    priced = any(onto.value_kind(p.name) == "currency" for p in own)  # amounts have one
    amounts = (p for p in own if p.unit is None and onto.value_kind(p.name) == "number")
    if priced and (amount := next(amounts, None)) is not None:
        onto._model = replace(onto._model, amount=amount.name)


def _prefix(graph: Any, namespace: str) -> str:
    """The prefix the Turtle binds to ``namespace`` (``inv``), else one made from it."""
    for prefix, ns in graph.namespaces():
        if str(ns) == namespace and prefix:
            return str(prefix)
    tail = [w for w in re.split(r"[^A-Za-z0-9]+", namespace) if w and not w.isdigit()]
    word = tail[-1].lower() if tail else "ex"
    return word if _SAFE_LOCAL.fullmatch(word) and word not in ("http", "https") else "ex"


def _document_model(
    graph: Any,
    classes: Sequence[ClassDef],
    props: Sequence[PropertyDef],
    annotations: dict[str, dict[str, str]],
    namespace: str,
    order: dict[str, int],
) -> DocumentModel:
    """The document model: annotations where given, defaults from standard vocabulary."""
    subject = _subject_class(graph, classes, props, namespace)
    parts = _parts(graph, subject, classes, props, namespace)
    part_classes = {c for _p, c in parts}
    own = [p for p in props if subject is not None and _local(p.domain or "") == subject]
    marked = _marked(graph, own, "namesSubject")
    naming = marked or tuple(
        sorted(_default_naming(graph, own, part_classes), key=lambda n: order.get(n, 1 << 30))
    )
    ident = _marked(graph, own, "identifiesSubject") or _keys(graph, subject, classes)
    if not ident and not marked:  # an ontology that marks its names marks its identifiers
        ident = tuple(
            p.name
            for p in own
            if p.kind == "datatype"
            and p.name not in naming
            and split_camel(p.name).lower().split()[-1:] in ([w] for w in _ID_WORDS)
        )
    noun = _noun(graph, classes, subject, namespace)
    sources = _marked(graph, own, "namesSource") or _default_sources(own, naming)
    kinds = _marked(graph, own, "namesKind")
    del annotations
    return DocumentModel(subject, naming, ident, parts, noun, sources=sources, kinds=kinds)


def _default_sources(own: Sequence[PropertyDef], naming: Sequence[str]) -> tuple[str, ...]:
    """The subject's datatype properties, other than its names, whose local name says
    they name its maker, supplier or issuer (``vendorName``, ``manufacturerName``)."""
    return tuple(
        p.name
        for p in own
        if p.kind == "datatype"
        and p.name not in naming
        and "name" in (words := set(split_camel(p.name).lower().split()))
        and words & _SOURCE_WORDS
    )


def _subject_class(
    graph: Any, classes: Sequence[ClassDef], props: Sequence[PropertyDef], namespace: str
) -> str | None:
    """``hr:documentSubject`` if a class has it; else the class most datatype properties
    describe, among the classes no object property points to."""
    for c in classes:
        if _true(_ann(graph, c.iri, "documentSubject", namespace)):
            return c.name
    ranges = {_local(p.range or "") for p in props if p.kind == "object"}
    counts: dict[str, int] = {}
    for p in props:
        dom = _local(p.domain or "")
        if p.kind == "datatype" and dom and dom not in ranges:
            counts[dom] = counts.get(dom, 0) + 1
    known = {c.name for c in classes}
    ranked = sorted((n, -k) for n, k in counts.items() if n in known)
    if not ranked:
        return None
    best = max(counts[n] for n, _k in ranked)
    return next(n for n, _k in ranked if counts[n] == best)


def _parts(
    graph: Any,
    subject: str | None,
    classes: Sequence[ClassDef],
    props: Sequence[PropertyDef],
    namespace: str,
) -> tuple[tuple[str, str], ...]:
    """Repeated parts: classes marked ``hr:part`` (reached from the subject by an object
    property); else ranges of the subject's object properties that have datatype
    properties of their own."""
    if subject is None:
        return ()
    marked = {c.name for c in classes if _true(_ann(graph, c.iri, "part", namespace))}
    described = {_local(p.domain or "") for p in props if p.kind == "datatype"}
    out: list[tuple[str, str]] = []
    for p in props:
        if p.kind != "object" or _local(p.domain or "") != subject:
            continue
        cls = _local(p.range or "")
        if cls in marked or (not marked and cls in described and cls != subject):
            out.append((p.name, cls))
    return tuple(out)


def _marked(graph: Any, props: Sequence[PropertyDef], key: str) -> tuple[str, ...]:
    """Properties annotated ``key`` true or with a rank, lowest rank first."""
    ranked: list[tuple[float, str]] = []
    for p in props:
        said = _ann(graph, p.iri, key, p.iri[: len(p.iri) - len(p.name)])
        ranks = [r for v in said if (r := _rank(v)) is not None]
        if ranks:
            ranked.append((min(ranks), p.name))
    return tuple(name for _r, name in sorted(ranked))


def _default_naming(
    graph: Any, own: Sequence[PropertyDef], part_classes: set[str]
) -> tuple[str, ...]:
    """Sub-properties of ``rdfs:label`` (or another naming property); else the subject's
    datatype properties with the word "name" in their local name or label; else its
    object properties to other (non-part) classes, named by their entities' labels."""
    sub = tuple(
        p.name for p in own if set(_values(graph, p.iri, _RDFS + "subPropertyOf")) & _NAME_PARENTS
    )
    if sub:
        return sub
    named = tuple(
        p.name
        for p in own
        if p.kind == "datatype"
        and "name" in {*split_camel(p.name).lower().split(), *p.label.lower().split()}
    )
    if named:
        return named
    return tuple(
        p.name for p in own if p.kind == "object" and _local(p.range or "") not in part_classes
    )


def _keys(graph: Any, subject: str | None, classes: Sequence[ClassDef]) -> tuple[str, ...]:
    """The properties of the subject class's ``owl:hasKey`` list."""
    from rdflib import URIRef
    from rdflib.collection import Collection

    iri = next((c.iri for c in classes if c.name == subject), None)
    if iri is None:
        return ()
    out: list[str] = []
    for head in graph.objects(URIRef(iri), URIRef(_OWL + "hasKey")):
        out += [_local(str(x)) for x in Collection(graph, head)]
    return tuple(out)


def _noun(graph: Any, classes: Sequence[ClassDef], subject: str | None, namespace: str) -> str:
    """``hr:documentNoun`` of the ontology or the subject class; else the subject class's
    label in lower case; else "document"."""
    from rdflib import RDF, URIRef

    owners = [str(o) for o in graph.subjects(RDF.type, URIRef(_OWL + "Ontology"))]
    owners += [c.iri for c in classes if c.name == subject]
    for owner in owners:
        if said := _ann(graph, owner, "documentNoun", namespace):
            return said[0]
    cls = next((c for c in classes if c.name == subject), None)
    return cls.label.lower() if cls is not None else "document"


def _prefix_of(namespace: str) -> str:
    """A prefix made from a namespace: its last word (``.../invoice#`` -> ``invoice``)."""
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*", namespace.rstrip("#/").rsplit("/", 1)[-1])
    return (words[-1].lower() if words else "ns")[:16]


def _namespace(iris: Iterable[str]) -> str:
    counts: dict[str, int] = {}
    for value in iris:
        cut = max(value.rfind("#"), value.rfind("/"))
        ns = value[: cut + 1]
        counts[ns] = counts.get(ns, 0) + 1
    return max(counts.items(), key=lambda kv: kv[1])[0]


def _local(iri: str) -> str:
    return re.split(r"[#/]", iri)[-1]


def _values(graph: Any, subj: str, pred: str) -> list[str]:
    from rdflib import URIRef

    return sorted(str(o) for o in graph.objects(URIRef(subj), URIRef(pred)))


def _first(graph: Any, subj: str, pred: str) -> str | None:
    vals = _values(graph, subj, pred)
    return vals[0] if vals else None


def _texts(graph: Any, subj: str, pred: str) -> list[tuple[str, str | None]]:
    """``(text, language)`` of the literals of ``pred``, English and untagged first."""
    from rdflib import Literal, URIRef

    found = {
        (str(o), o.language if isinstance(o, Literal) else None)
        for o in graph.objects(URIRef(subj), URIRef(pred))
    }
    return sorted(found, key=lambda tl: (_lang_rank(tl[1]), tl[0]))


def _lang_rank(lang: str | None) -> int:
    if lang is None:
        return 0
    return 1 if lang.lower() == "en" or lang.lower().startswith("en-") else 2


def _labels(graph: Any, iri: str, name: str) -> tuple[str, tuple[str, ...]]:
    """The displayed label (untagged or English first) and every other label, any language."""
    labels = _texts(graph, iri, _RDFS + "label")
    label = labels[0][0] if labels else split_camel(name)
    others = [t for t, _l in labels[1:]] + [t for t, _l in _texts(graph, iri, _SKOS_ALT)]
    return label, tuple(dict.fromkeys(t for t in others if t != label))


def _property(graph: Any, iri: str, kind: str) -> tuple[PropertyDef, dict[str, str]]:
    name = _local(iri)
    if not _SAFE_LOCAL.fullmatch(name):
        raise OntologyError(f"property IRI {iri} has a local name that is not HANA-safe")
    ns = iri[: len(iri) - len(name)]
    label, alts = _labels(graph, iri, name)
    extra = {key: vals[0] for key in _HINTS if (vals := _ann(graph, iri, key, ns))}
    units = _ann(graph, iri, "unit", ns)
    pdef = PropertyDef(
        iri=iri,
        name=name,
        label=label,
        kind="object" if kind == "object" else "datatype",
        alt_labels=alts,
        domain=_first(graph, iri, _RDFS + "domain"),
        range=_first(graph, iri, _RDFS + "range"),
        unit=units[0] if units else None,
        comment=_first(graph, iri, _RDFS + "comment"),
    )
    return pdef, extra


def _class(graph: Any, iri: str) -> ClassDef:
    name = _local(iri)
    label, alts = _labels(graph, iri, name)
    return ClassDef(
        iri=iri,
        name=name,
        label=label,
        alt_labels=alts,
        parents=tuple(_values(graph, iri, _RDFS + "subClassOf")),
        comment=_first(graph, iri, _RDFS + "comment"),
    )


# ---------------------------------------------------------------- loading


@lru_cache(maxsize=8)
def _bundled(name: str) -> TurtleOntology:
    from hybrid_rag.packs import BUNDLED, bundled_file

    resource = bundled_file(name)
    if resource is None or not resource.is_file():
        known = ", ".join(sorted(BUNDLED))
        raise OntologyError(f"no bundled ontology named {name!r} (bundled: {known})")
    return TurtleOntology.from_turtle(resource.read_text(encoding="utf-8"), source=resource.name)


def load_ontology(spec: str | os.PathLike[str] | Ontology = "msds") -> Ontology:
    """Resolve an ontology.

    Args:
        spec: a bundled ontology's name (``"msds"`` for Safety Data Sheets,
            ``"invoice"`` for invoices; see ``hybrid_rag.packs``), a path to a Turtle
            file, or an ``Ontology`` returned as is.

    Raises:
        OntologyError: unknown bundled name, missing file, invalid Turtle, no properties.
    """
    if isinstance(spec, os.PathLike):
        return TurtleOntology.from_file(Path(spec))
    if isinstance(spec, str):
        if re.fullmatch(r"[A-Za-z0-9_]+", spec) and not Path(spec).is_file():
            return _bundled(spec)
        return TurtleOntology.from_file(spec)
    if isinstance(spec, Ontology):
        return spec
    raise OntologyError(f"cannot load an ontology from {type(spec).__name__}")


def document_model(ontology: Ontology) -> DocumentModel:
    """The ontology's ``DocumentModel``: its own when it offers ``OntologyMatching``, else
    the defaults read from its classes and properties alone (the class most datatype
    properties describe, its properties named "...name" and "...Number"/"...Id")."""
    from hybrid_rag.types import OntologyMatching

    if isinstance(ontology, OntologyMatching):
        return ontology.document_model()
    classes, props = ontology.classes(), ontology.properties()
    ranges = {_local(p.range or "") for p in props if p.kind == "object"}
    counts: dict[str, int] = {}
    for p in props:
        dom = _local(p.domain or "")
        if p.kind == "datatype" and dom in {c.name for c in classes} and dom not in ranges:
            counts[dom] = counts.get(dom, 0) + 1
    if not counts:
        return DocumentModel()
    subject = sorted(counts, key=lambda n: (-counts[n], n))[0]
    own = [p for p in props if p.kind == "datatype" and _local(p.domain or "") == subject]
    naming = tuple(p.name for p in own if "name" in split_camel(p.name).lower().split())
    ident = tuple(
        p.name for p in own if split_camel(p.name).lower().split()[-1:] in ([w] for w in _ID_WORDS)
    )
    label = next(c.label for c in classes if c.name == subject)
    return DocumentModel(subject, naming, ident, (), label.lower())
