"""Question analysis: products, ontology properties and intent (pure, no I/O, no LLM)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Literal

from hybrid_rag.ask._collection_words import (
    aggregating,
    capitalised,
    code,
    collection_phrases,
    collection_question,
    counts,
    generic,
    identifier,
    labelled_codes,
    over_collection,
    over_others,
    question_codes,
    sets,
)
from hybrid_rag.ask._concepts import (
    CODE_LEADS,
    ConceptLink,
    concepts_of,
    holds_codes,
    link_concepts,
    properties_read,
)
from hybrid_rag.ask._sets import (
    NamedSet,
    kind_predicate,
    named_set,
    namesakes,
    noun_set,
    period_of,
    set_cue,
    set_noun,
    shared_name,
    unlinked_namesakes,
)
from hybrid_rag.ask._verbs import by_verb_noun
from hybrid_rag.ask._wh import by_question_word
from hybrid_rag.ask.grammar import (
    COMPARISON_WORDS,
    Threshold,
    comparison_words,
    date_span,
    is_polar,
    main_clause,
    threshold,
)
from hybrid_rag.ask.linking import SubjectIndex, SubjectMatch, without_names
from hybrid_rag.ontology import document_model, normalize_label, split_camel
from hybrid_rag.text import STOPWORDS, in_row, norm, stem, tokens, word_key
from hybrid_rag.types import (
    ConceptDef,
    Intent,
    Ontology,
    OntologyMatching,
    PropertyDef,
    QuestionAnalysis,
    ScopeView,
)
from hybrid_rag.units import currency_code

__all__ = [
    "Intent",
    "QuestionAnalysis",
    "ScopeView",
    "analyse",
    "match_properties",
    "pair_question",
    "with_properties",
]

_SAME = re.compile(
    r"^(do|does|are|is|have|has)\b.*\b(same|share|identical|equal|differ|different)\b"
)
_QUOTED = re.compile(
    r"[\"'\u2018\u2019\u201c\u201d]([^\"'\u2018\u2019\u201c\u201d]{2,60})[\"'\u2018\u2019\u201c\u201d]"
)
_CLASSIFIED = re.compile(r"\b(?:classified|categori[sz]ed|labell?ed) as ([^:?;]+)")
_WHICH = re.compile(r"^\s*which\b")
_WHICH_ARE = re.compile(
    r"^\s*which\s+(?:of\s+(?:these|those|the\s+following)\s+)?(?:\w+\s+)?"
    r"(?:are|is|have|has|carry|carries|contain|contains|require|requires)\s+([^:?]{3,80}?)\s*:",
    re.I,
)


def pair_question(question: str) -> bool:
    """Whether the question compares two named things for being the same or different
    ("Do A and B share ...?", "Is A's X the same as B's?"): it names two subjects."""
    return _SAME.search(norm(main_clause(question))) is not None


def analyse(question: str, *, index: SubjectIndex, ontology: Ontology) -> QuestionAnalysis:
    """Link products, match properties, and classify the intent of ``question``.

    Comparisons are read from generic grammar: superlatives ("lowest") and comparatives
    ("lower", "greater than", "less volatile") over two or more named products, with the
    property from the ontology's vocabulary. A yes/no comparison ("Is A's flash point
    higher than B's?") is ``polar`` and its ``subject`` is the product named first.
    """
    subjects = tuple(index.link(question))
    if len(subjects) >= 2 or not subjects:  # "Which is denser, A or B?", "the densest"
        question = _comparatives_spelt_out(question, ontology)
    asked = without_names(question, subjects, keep=_document_words(ontology))
    props = _circumstance_last(asked, tuple(match_properties(asked, ontology)), ontology)
    props, brought = _with_narrower(_parts_last(props, ontology), ontology)
    if _topic_unmodelled(asked, ontology):
        props = ()  # "... say about objections to the charges?": the passages tell
    text = norm(question)
    start = norm(main_clause(question))  # how the question starts, past a lead-in
    props = by_question_word(asked, start, props, ontology, match_properties)
    props = by_verb_noun(asked, props, ontology, match_properties)
    if (
        not props
        and _RECENCY.search(text)
        and (not subjects or namesakes(question, subjects, index))
    ):
        props = _dating(ontology)  # "the most recent invoice": by the document's own date
    if not props and _SIZE.search(text) and (not subjects or namesakes(question, subjects, index)):
        props = _amount(ontology)  # "the largest invoice": by its amount
    terms = _filter_terms(question)
    said: str | None = None
    sections: tuple[int, ...] = ()
    intent: Intent = "lookup"
    limit = threshold(question) if len(subjects) >= 2 else None
    direction = _direction(text, props, ontology) if len(subjects) >= 2 else None
    if direction is not None and direction[1] in COMPARISON_WORDS:
        props = _without_word(question, direction[1], props, ontology)
    if len(subjects) >= 2 and _SAME.search(start):
        intent = "same"
    elif limit is not None and _quantity(props):
        intent = "filter"  # "which of these has a flash point above 60 °C"
    elif direction is not None and _quantity(props):
        intent = direction[0]
    elif len(subjects) >= 2 and terms and _WHICH.search(start):
        intent = "filter"
    elif len(subjects) >= 2 and (phrase := _WHICH_ARE.search(main_clause(question))):
        intent, terms = "filter", _value_terms(phrase.group(1), props, ontology)  # "corrosive"
        said = phrase.group(1).strip()
    category = _category_test(asked, ontology) if subjects and is_polar(question) else None
    if intent in ("min", "max"):
        props = tuple(p for p in props if p.kind == "datatype")[:1]
    elif intent == "lookup" and category is not None:
        intent, (prop, terms) = "filter", category  # "Is X flammable?": its GHS classes
        props, said = (prop,), _span(asked, terms)
    elif intent == "lookup" and _procedure(_first_value(props), ontology):
        intent = "procedure"  # first aid by route, firefighting, storage ...
        sections = _sections(props, ontology)
    polar = (intent in ("min", "max", "same") or category is not None) and is_polar(question)
    kinds = _kind_words(ontology) - capitalised(question)  # "the signal word Danger": a value
    named = named_set(question, index, kinds) if set_cue(question, subjects) else None
    if named is None and intent == "lookup" and _extreme(question, props, ontology):
        named = (  # "the newest sodium hydroxide sheet", "the newest Libman sheet"
            namesakes(question, subjects, index)
            if subjects
            else shared_name(question, index, kinds | _named_words(props, ontology))
        )
    noun = document_model(ontology).document_noun
    others = _others_of(question, subjects, noun)
    if not others[0] and not subjects and over_others(question, noun):
        # "... beyond the copper parts: what other items ...?": the set is set apart
        shared = named or shared_name(question, index, kinds | _named_words(props, ontology))
        others, named = ((shared[2], shared[0]) if shared else others), None
    distinct = None if subjects or named else _distinct(question, props, kinds | {noun}, ontology)
    aggregate = not subjects and distinct is None and aggregating(question, _counted(ontology))
    collection = (
        named is not None
        or bool(others[0])
        or aggregate
        or distinct is not None
        or _collective(question, subjects, props, noun, ontology)
    )
    if collection:
        subjects = ()  # "Which of our products contain <a name>?": the name is a value
    period = coded = None
    every = props  # before the collection's intent keeps the one it sorts or bounds on
    if distinct is not None:  # "What UN numbers appear in our sheets?": its values
        intent, limit, props = "filter", None, (distinct,)
    elif collection:
        intent, limit, props = _over_collection(question, text, props, ontology)
        period = period_of(question, props, ontology) if intent == "filter" and not limit else None
        coded = _coded(question, props, ontology) if intent == "filter" and not limit else None
        if named is not None and intent == "filter" and _with_their(question, props, ontology):
            intent, limit, period, coded = "lookup", None, None, None  # each member's value
    summed = collection and intent not in ("min", "max") and _sums(question, noun)
    if named is None and subjects and props and intent == "lookup" and not collection:
        skip = kinds | _named_words(props, ontology)  # "the UN number of nitric acid": all 5
        named = unlinked_namesakes(question, subjects, index, skip)
        collection, subjects = (True, ()) if named is not None else (collection, subjects)
    if named is None and not subjects and ((props and intent == "lookup") or summed):
        named = shared_name(question, index, kinds | _named_words(props, ontology))
        collection = collection or named is not None  # "the UN number for ethanol": per sheet
    if summed:  # "the total of all invoices in EUR": the asked amounts added up
        intent, limit, period, coded = "filter", None, None, None
        props = tuple(p for p in props if p.name in _typed(props, ontology)) or _amount(ontology)
        props = props[:1]
    elif collection and intent == "filter" and not props and _currency(question):
        props = _priced(ontology)  # "How many invoices are in USD?": the currency says
    if named is not None:
        kinds |= set(named[0] + named[1])  # the set's words filter no value
    own = _document_words(ontology) | {noun, noun + "s"}  # what the documents are called
    setting = own | {set_noun(question, kinds | {noun}) or noun} | set(named[0] if named else ())
    links = _asked_concepts(question, props, ontology) if collection else ()
    plain = intent == "filter" and limit is None and period is None
    combined = bool(links) and plain and _more_asked(question, links, setting, ontology)
    said_concept = {word_key(w) for link in links for w in link.words}
    kind_noun = _kind_noun(question, kinds | {noun}, named) if collection else None
    if kind_noun is not None and word_key(kind_noun) in said_concept:
        kind_noun = None  # "Which items are flammable liquids?": the concept's word
    concepts = tuple(dict.fromkeys(link.concept for link in links))
    kept = {p.name for p in props}
    a = QuestionAnalysis(
        question,
        subjects,
        props,
        intent,
        terms if limit is None else (),
        threshold=limit if intent == "filter" else None,
        filter_phrase=said if intent == "filter" else None,
        sections=sections,
        polar=polar,
        polar_subject=_first_named(question, subjects) if polar else None,
        noun=noun,
        kind_words=kinds,
        named_words=_named_words(props, ontology),
        typed=_typed(props, ontology),
        patterns=_patterns(props, ontology),
        collection=collection,
        counting=collection and counts(main_clause(question)),
        aggregate=aggregate and not summed,
        vocabulary=_vocabulary_stems(ontology) if collection else frozenset(),
        named_set=named[2] if named is not None else (),
        coded=coded if period is None else None,
        own_only=_own_values(question, props, ontology)
        if collection and intent == "filter"
        else frozenset(),
        summed=summed,
        distinct=distinct is not None,
        top=_top(question) if collection and intent in ("min", "max") else None,
        unit=_currency(question) if summed or (collection and intent in ("min", "max")) else None,
        period=period,
        set_name=" ".join(named[0]) if named is not None else None,
        set_by_source=named is not None and len(index.naming(named[0])) < len(named[2]),
        set_loose=bool(named and noun_set(named)) and intent == "filter" and not (limit or period),
        kind_noun=kind_noun,
        others_of=others[0] if collection else (),
        other_name=others[1] if collection else (),
        other_items=_other_items(props, ontology) if intent == "procedure" else frozenset(),
        items=frozenset(n for n in brought if n in kept),
        umbrellas=frozenset(u for n, u in brought.items() if n in kept),
        concepts=concepts,
        concept_codes=tuple(_codes_of(c, links) for c in concepts),
        concept_words=tuple(_said_of(c, links) for c in concepts),
        concept_scheme=concepts_of(ontology) if concepts else (),
        concept_combined=combined,
        concept_negated=tuple(
            all(link.negated for link in links if link.concept == c) for c in concepts
        ),
    )
    return _with_conjuncts(a, every, ontology) if collection else a


def _with_conjuncts(
    a: QuestionAnalysis, every: Sequence[PropertyDef], ontology: Ontology
) -> QuestionAnalysis:
    """``a`` with the further constraints its question puts on the same documents, each
    a filter of its own (``QuestionAnalysis.also``): a date span, a code after its
    label or an identifier besides a bound or another of them ("Which class 3 products
    have a flash point below 0 °C?", "Which sheets revised in 2024 list UN1789?")."""
    extreme = a.intent in ("min", "max")
    if a.summed or not (extreme or (a.intent == "filter" and (a.threshold or a.period or a.coded))):
        return a
    q = a.question
    base = replace(a, intent="filter", threshold=None, period=None, coded=None, also=(), top=None)
    found: list[QuestionAnalysis] = []
    if a.period is None and (period := period_of(q, every, ontology)) is not None:
        dates = tuple(p for p in every if _kind(p.name, ontology) == "date")
        found.append(replace(with_properties(base, dates, ontology), period=period))
    if a.coded is None and (coded := _coded(q, every, ontology)) is not None:
        own = tuple(p for p in every if p.name == coded[0])
        found.append(replace(with_properties(base, own, ontology), coded=coded))
    taken = a.coded or next((f.coded for f in found if f.coded is not None), None)
    for coded in _further_codes(q, every, ontology, taken):  # "class 8, packing group III"
        own = tuple(p for p in every if p.name == coded[0])
        found.append(replace(with_properties(base, own, ontology), coded=coded))
    if any(identifier(w) for w in question_codes(q)):
        found.append(with_properties(base, (), ontology))  # "UN1789": any value printing it
    return replace(a, also=tuple(found)) if found else a


def _own_values(question: str, props: Sequence[PropertyDef], ontology: Ontology) -> frozenset[str]:
    """The asked properties whose values alone answer a filter: those that name the
    documents' source ("Which sheets name 3M as a supplier?"), else those whose value
    pattern reads a word of the question past the labels ("the Corrosion pictogram")."""
    if not isinstance(ontology, OntologyMatching) or not props:
        return frozenset()
    sources = set(document_model(ontology).sources) & {p.name for p in props}
    if sources:
        return frozenset(sources)
    labels = _named_words(props, ontology)
    words = [t for t in tokens(main_clause(question)) if t.isalpha() and t not in labels]
    words = [t for t in words if t not in STOPWORDS and not generic(t)]
    patterns = {p.name: ontology.value_pattern(p.name) for p in props}
    clause = main_clause(question)
    return frozenset(
        n
        for n, pat in patterns.items()
        if pat and (any(re.search(pat, w) for w in words) or _reads_phrase(pat, clause))
    )


def _reads_phrase(pattern: str, clause: str) -> bool:
    """Whether a value pattern reads words of the question as a value from one of their
    starts, words that hold a letter and more than one word ("not regulated" for a UN
    number, whose pattern reads "Not regulated"; not the year of "revised in 2024")."""
    rx = re.compile(pattern)
    for m in re.finditer(r"\b[A-Za-z]", clause):
        found = rx.match(clause[m.start() :])
        if found and " " in found.group(0).strip() and re.search(r"[A-Za-z]", found.group(0)):
            return True
    return False


def _kind_noun(question: str, kinds: frozenset[str], named: NamedSet | None) -> str | None:
    """The noun a collection's documents may be of the kind of: the set's noun when no
    name calls the set (``set_noun``: "Which liquids ...?"), else a plural noun the
    question ends on ("Which Libman products are liquids?")."""
    if named is None and (noun := set_noun(question, kinds)) is not None:
        return noun
    return kind_predicate(question, kinds)


def _coded(
    question: str, props: Sequence[PropertyDef], ontology: Ontology
) -> tuple[str, tuple[str, ...]] | None:
    """``(property, codes)`` when the question gives an asked identifier property's
    value by the codes its value pattern reads, right after one of its labels ("DOT
    class 8", "packing group III"; ``labelled_codes``); ``None`` otherwise."""
    if not isinstance(ontology, OntologyMatching):
        return None
    for p in props:
        pattern = ontology.value_pattern(p.name)
        if pattern is None or ontology.value_kind(p.name) != "identifier":
            continue
        codes = labelled_codes(question, _naming(p, ontology), pattern, _measures(question))
        if codes:
            return p.name, codes
    every = _further_codes(question, props, ontology, None, together=True)
    return every[0] if every else None  # "class 3 with a 6.1 subsidiary risk": each its own


def _further_codes(
    question: str,
    props: Sequence[PropertyDef],
    ontology: Ontology,
    taken: tuple[str, tuple[str, ...]] | None,
    *,
    together: bool = False,
) -> list[tuple[str, tuple[str, ...]]]:
    """The codes the question gives other identifier properties than ``taken``'s, each
    right after its own label, codes none of them repeats ("DOT class 8, packing group
    III"; ``labelled_codes`` with the codes read so far set aside). ``together``: only
    when all of them account for every code the question gives (none was read alone:
    "class 3 ... with a 6.1 subsidiary risk")."""
    if not isinstance(ontology, OntologyMatching):
        return []
    measures = _measures(question)
    given = set(question_codes(question))
    seen = {c.lower() for c in taken[1]} if taken is not None else set()
    out: list[tuple[str, tuple[str, ...]]] = []
    for p in props:
        pattern = ontology.value_pattern(p.name)
        if taken is not None and p.name == taken[0]:
            continue
        if pattern is None or ontology.value_kind(p.name) != "identifier":
            continue
        aside = measures | seen | (given if together else set())
        codes = labelled_codes(question, _naming(p, ontology), pattern, aside)
        said = {c.lower() for c in codes}
        if codes and not said & seen:
            out.append((p.name, codes))
            seen |= said
    if together and (len(out) < 2 or given - seen - measures):
        return []
    return out


def _measures(question: str) -> set[str]:
    """The numbers of the question's bound and the tokens of its date span: they are no
    codes ("class 3 ... below 0 °C", "class 8 ... revised in 2024")."""
    out: set[str] = set()
    if (bound := threshold(question)) is not None:
        out |= {f"{bound.value:g}", *([f"{bound.upper:g}"] if bound.upper is not None else [])}
    if (span := date_span(question, asked_date=True)) is not None:
        out |= set(tokens(span.said))
    return out


def _asked_concepts(
    question: str, props: Sequence[PropertyDef], ontology: Ontology
) -> tuple[ConceptLink, ...]:
    """The ontology's concepts the question names (``link_concepts``), but those given
    with a code none of their categories has ("class 5.1" beside "oxidizing", "a 6.1
    poison label": another scheme's code); none when it gives an identifier that is no
    concept's label ("UN3265"; "H225" is the statement's concept). Of a
    label two concepts share, those read in a property the question asks, when it
    asks one of them."""
    every = concepts_of(ontology)
    links = tuple(
        link
        for link in link_concepts(question, every)
        if holds_codes(link.concept, every, link.codes)
    )
    named = {link.words for link in links}
    if any(
        identifier(w) and (w,) not in named
        for words, _whole in collection_phrases(question)
        for w in words
    ):
        return ()  # "UN3265 (corrosive liquid, acidic ...)": the identifier decides
    asked = {p.name for p in props}
    by_words: dict[tuple[str, ...], list[ConceptLink]] = {}
    for link in links:
        by_words.setdefault(link.words, []).append(link)
    kept: list[ConceptLink] = []
    for same in by_words.values():
        fits = [link for link in same if asked & (properties_read(link.concept, every) or asked)]
        kept += fits if fits and len(fits) < len(same) else same
    return tuple(link for link in links if link in kept)


def _more_asked(
    question: str, links: Sequence[ConceptLink], setting: frozenset[str], ontology: Ontology
) -> bool:
    """Whether the question asks more than its concepts: its other words (but those of
    asking, of the set it asks over and the codes beside the concepts) give a code or a
    name ("made by Tarvik AB"), or name a property the concepts are not read in
    ("flammable liquids that also need a 6.1 subsidiary label", "corrosive products not
    regulated for transport")."""
    every = concepts_of(ontology)
    said = {w for link in links for w in (*link.words, *link.codes)}
    left = [
        t
        for t in tokens(question)
        if not (t in said or t in setting or t in CODE_LEADS) and (t in STOPWORDS or not generic(t))
    ]
    if any(code(t) for t in left) or (capitalised(question) & set(left)):
        return True
    read = set().union(*(properties_read(link.concept, every) for link in links))
    others = {p.name for p in match_properties(" ".join(left), ontology)}
    return bool(read) and bool(others - read)


def _said_of(concept: ConceptDef, links: Sequence[ConceptLink]) -> str:
    """The words the question first named a concept by, as asked (its codes apart)."""
    words = next(link.words for link in links if link.concept == concept)
    said = " ".join(w for w in words if w not in CODE_LEADS and not code(w))
    return said or " ".join(w.upper() for w in words)  # "H225": the code is its name


def _codes_of(concept: ConceptDef, links: Sequence[ConceptLink]) -> tuple[str, ...]:
    """The codes the question gives beside a concept, wherever it names it."""
    return tuple(dict.fromkeys(c for link in links if link.concept == concept for c in link.codes))


def _others_of(
    question: str, subjects: Sequence[SubjectMatch], noun: str
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(documents, name)`` when the question asks over the documents other than those
    it names by one name ("... more than the phosphoric acid bottles: which other
    products list it?"); ``((), ())`` otherwise."""
    if not subjects or len({m.matched for m in subjects}) != 1 or not over_others(question, noun):
        return (), ()
    matched = subjects[0].matched
    toks = tokens(question)
    start = next((i for i, t in enumerate(toks) if t in matched), len(toks))
    end = start
    while end < len(toks) and toks[end] in matched:
        end += 1
    return tuple(dict.fromkeys(m.doc_id for m in subjects)), tuple(toks[start:end])


def _other_items(props: Sequence[PropertyDef], ontology: Ontology) -> frozenset[str]:
    """Squashed labels of the properties not asked, of two or more words (the label
    words of an asked property or its sub-properties are never another item's)."""
    every = _item_labels(tuple(ontology.properties()))
    asked = {p.name for p in props}
    if isinstance(ontology, OntologyMatching):
        asked |= {n for p in props for n in ontology.narrower(p.name)}
    mine = {key for name, key in every if name in asked}
    return frozenset(key for name, key in every if name not in asked and key not in mine)


@lru_cache(maxsize=8)
def _item_labels(props: tuple[PropertyDef, ...]) -> tuple[tuple[str, str], ...]:
    """``(property, squashed label)`` for every label of two or more words, the
    property's own name read as words included ("personal protection")."""
    out: list[tuple[str, str]] = []
    for p in props:
        for label in (*p.labels, split_camel(p.name)):
            toks = normalize_label(label)
            if len(toks) >= 2:
                out.append((p.name, "".join(toks)))
    return tuple(dict.fromkeys(out))


_SIZE = re.compile(
    r"\b(?:(?:larg|bigg|small|high|low|great|cheap)est|(?:most|least)\s+expensive)\b"
)
"""An extreme of size with no property named ("the largest invoice"): of the amount."""
_SUM = (
    r"\b(?:sum|total)\s+(?:amount\s+)?(?:of|for|across|over)\s+"
    r"(?:(?:all|every|each|our)\b[^?.;]*\b(?:{noun}s?|documents)\b"
    r"|the\s+(?:[\w-]+\s+){{0,3}}(?:{noun}s|documents)\b)"  # "the invoice": one, no sum
    r"|\badd(?:s|ed)?\s+up\b|\baltogether\b|\bcombined\b|\bin\s+total\b|\bsummed\b"
)


def _priced(ontology: Ontology) -> tuple[PropertyDef, ...]:
    """The subject's currency properties (value kind ``currency``)."""
    if not isinstance(ontology, OntologyMatching):
        return ()
    subject = document_model(ontology).subject_class
    return tuple(
        p
        for p in ontology.properties()
        if ontology.value_kind(p.name) == "currency" and _local(p.domain or "") == subject
    )


def _local(iri: str) -> str:
    return iri.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


_VALUES_OF = re.compile(
    r"^\s*(?:which|what|list(?:\s+(?:all|the))?|how\s+many)\s+"
    r"(?:(?:different|distinct|unique)\s+)?(.+)$",
    re.I,
)


def _distinct(
    question: str, props: Sequence[PropertyDef], skip: frozenset[str], ontology: Ontology
) -> PropertyDef | None:
    """The property whose values the question asks for across the documents: it opens
    with the property's label in the plural, or after "different" ("What UN numbers
    appear in our sheets?", "How many different suppliers ...?"), and says nothing else
    but words of asking and of the documents (``skip``); ``None`` otherwise."""
    m = _VALUES_OF.match(main_clause(question))
    if m is None:
        return None
    toks = tokens(m.group(1))
    different = re.search(r"\b(?:different|distinct|unique)\b", m.group(0), re.I) is not None
    for p in (p for p in props if p.kind == "datatype"):
        for words in (tokens(label) for label in _naming(p, ontology)):
            rest = _past_plural(toks, words, singular=different)
            if rest is not None and all(
                generic(t) or t in skip or t.rstrip("s") in skip for t in rest
            ):
                return p
    return None


_WITH_THEIR = re.compile(r"\bwith\s+(?:their|its|the)\s+([^.?!;:]+?)\s*[.?!]*\s*$", re.I)


def _with_their(question: str, props: Sequence[PropertyDef], ontology: Ontology) -> bool:
    """Whether a question over a named set ends by asking each member's value of the
    property it names, and nothing else ("List the sodium chloride products with their
    revision dates"): a look-up of every member, no filter."""
    m = _WITH_THEIR.search(question)
    if m is None or len(props) != 1:
        return False
    toks = tokens(m.group(1))
    return any(
        _past_plural(toks, tokens(label), singular=True) == []
        for label in _naming(props[0], ontology)
    )


def _past_plural(
    toks: Sequence[str], words: Sequence[str], *, singular: bool
) -> Sequence[str] | None:
    """The tokens after ``words`` when ``toks`` open with them, the last in the plural
    (or as it is, when ``singular``); ``None`` otherwise."""
    n = len(words)
    if not words or len(toks) < n or list(toks[: n - 1]) != list(words[:-1]):
        return None
    last = words[-1]
    forms = {last + "s", last + "es"} | ({last} if singular else set())
    if re.fullmatch(r"\w*[^aeiou]y", last):  # "currencies"
        forms.add(last[:-1] + "ies")
    return toks[n:] if toks[n - 1] in forms else None


_NUMBERS = [
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
]
_TOP = re.compile(
    r"(?:^|\b(?:which|what|the|top|list|show|name|find|our|are|were|give)\s+)"
    rf"(\d{{1,2}}|{'|'.join(_NUMBERS)})\s+[a-z]",
    re.I,
)


def _top(question: str) -> int | None:
    """How many documents an extreme asks for ("the three products with the lowest
    flash points", "Which 5 sheets were revised most recently?", "the top 10"): a
    count right after a question word, an article or "top" (not "class 3")."""
    m = _TOP.search(main_clause(question))
    if m is None:
        return None
    word = m.group(1).lower()
    n = int(word) if word.isdigit() else _NUMBERS.index(word) + 2
    return n if n > 1 else None


def _sums(question: str, noun: str) -> bool:
    """Whether the question asks the sum of the documents' amounts ("the total of all
    invoices", "the sum over our invoices", "how much do they add up to")."""
    return re.search(_SUM.format(noun=re.escape(noun)), question, re.I) is not None


def _currency(question: str) -> str | None:
    """The currency the question names by code, symbol or name ("in EUR", "in euros"),
    which its extreme or sum is asked in; ``None`` if it names none."""
    words = (w.strip(".,;:?!()'\"") for w in question.split())
    return next((c for w in words if w and (c := currency_code(w))), None)


_RECENCY = re.compile(r"\b(?:most\s+recent(?:ly)?|least\s+recent|latest|newest|oldest|earliest)\b")


def _dating(ontology: Ontology) -> tuple[PropertyDef, ...]:
    """The property holding the documents' own date (``DocumentModel.dating``), for "the
    most recent" of them."""
    name = document_model(ontology).dating
    return tuple(p for p in ontology.properties() if p.name == name)


def with_properties(
    a: QuestionAnalysis, props: Sequence[PropertyDef], ontology: Ontology
) -> QuestionAnalysis:
    """``a`` asking ``props`` instead (a model's reading of the question), with what is
    read from the asked properties (typed, label words, value shapes) read again."""
    return replace(
        a,
        properties=tuple(props),
        named_words=_named_words(props, ontology),
        typed=_typed(props, ontology),
        patterns=_patterns(props, ontology),
    )


def _collective(
    question: str,
    subjects: Sequence[SubjectMatch],
    props: Sequence[PropertyDef],
    noun: str,
    ontology: Ontology,
) -> bool:
    """Whether a question asks over the whole scope: it names no document and starts as
    a collection question, or asks an extreme of a typed quantity ("What is the highest
    melting point on any sheet?"); or it asks over documents of a kind, whatever names it
    holds (``over_collection``), unless it names two or more (a comparison of those)."""
    clause = main_clause(question)
    names = len({m.matched for m in subjects})  # one name may link several documents
    if names <= 1 and over_collection(clause, noun) and not _names_property(sets(clause), ontology):
        return True
    if subjects:
        return False
    return collection_question(clause) or _extreme(question, props, ontology) or _sums(clause, noun)


def _extreme(question: str, props: Sequence[PropertyDef], ontology: Ontology) -> bool:
    """Whether the question asks an extreme of a typed quantity or date ("the highest
    ...", "the most recently revised ...")."""
    clause = main_clause(question)
    return bool(_typed(props, ontology)) and re.search(_EXTREME, clause, re.I) is not None


def _names_property(words: Sequence[str], ontology: Ontology) -> bool:
    """Whether "<modifier> products" is a property's label ("hazardous combustion
    products"), not the documents."""
    if len(words) < 2:
        return False
    noun, modifiers = words[-1], set(words[:-1])
    labels = (set(tokens(lab)) for p in ontology.properties() for lab in p.labels)
    return any(noun in lab and modifiers & lab for lab in labels)


_EXTREME = (
    r"\b(?:(?:high|low|small|larg|great|bigg|hott|warm|cold|cool|strong|weak|few|old|new"
    r"|lat|earli|dens|light|heavi|cheap)est|most|least|maximum|minimum"
    r"|(?:first|last)(?=\s*(?:[?.!,;:]|$)))\b"
)  # "issued first?": in time, at the end of a clause ("first aid" is none)


def _over_collection(
    question: str, text: str, props: tuple[PropertyDef, ...], ontology: Ontology
) -> tuple[Intent, Threshold | None, tuple[PropertyDef, ...]]:
    """A collection question's intent: a bound or an extreme of a typed quantity, else
    a filter by what the values state."""
    bound = threshold(question)
    typed = _typed(props, ontology)
    quantity = tuple(p for p in props if p.name in typed)
    if (
        bound is not None
        and currency_code(bound.unit or "")
        and _of_documents(quantity, question, ontology)
    ):
        quantity = _amount(ontology) or quantity  # "invoices over 500 EUR": their amount
    dates = all(_kind(p.name, ontology) == "date" for p in quantity)
    if bound is not None and _quantity(quantity) and not dates:  # years bound a date's span
        return "filter", bound, quantity[:1]
    direction = _direction(text, quantity, ontology) if quantity else None
    if direction is not None and _quantity(quantity) and re.search(_EXTREME, text):
        return direction[0], None, (_sorted_by(text, quantity),)
    return "filter", None, props


def _sorted_by(text: str, quantity: Sequence[PropertyDef]) -> PropertyDef:
    """The typed property an extreme sorts by: the one a comparison word stands right
    before ("the highest boiling point of any part revised in 2023": the boiling point,
    not the revision date), else the first."""
    for _way, _word, end in comparison_words(text):
        after = tokens(text[end:])[:5]
        at = {p.name: _label_at(after, p) for p in quantity}
        found = [p for p in quantity if at[p.name] is not None]
        if found:
            return min(found, key=lambda p: at[p.name] or 0)
    return quantity[0]


def _label_at(words: Sequence[str], prop: PropertyDef) -> int | None:
    """Where in ``words`` one of the property's labels first starts, whole, if it does."""
    starts = [
        i
        for lab in prop.labels
        if (toks := tokens(lab))
        for i in range(len(words) - len(toks) + 1)
        if list(words[i : i + len(toks)]) == toks
    ]
    return min(starts, default=None)


def _of_documents(props: Sequence[PropertyDef], question: str, ontology: Ontology) -> bool:
    """Whether a bound names no property of the documents themselves: none at all, or
    only their parts' when the question names no part ("Which invoices cost more than
    €500?" asks the invoices' amount, not a line's unit cost)."""
    parts = set(document_model(ontology).part_classes())
    if any(_local(p.domain or "") not in parts for p in props):
        return False
    words = {
        t
        for c in ontology.classes()
        if c.name in parts
        for lab in (c.label, *c.alt_labels)
        for t in tokens(lab)
    }
    return not words & set(tokens(question))


def _kind(name: str, ontology: Ontology) -> str | None:
    return ontology.value_kind(name) if isinstance(ontology, OntologyMatching) else None


def _amount(ontology: Ontology) -> tuple[PropertyDef, ...]:
    """The subject's amount (``DocumentModel.amount``: an invoice's total), which a
    bound in a currency that names no property is asked of ("invoices over 500 EUR")."""
    name = document_model(ontology).amount
    return tuple(p for p in ontology.properties() if p.name == name)


_TYPED_KINDS = frozenset(["number", "date", "temperature", "range"])


def _named_words(props: Sequence[PropertyDef], ontology: Ontology) -> frozenset[str]:
    """Tokens of the asked properties' labels and search-only labels; not the words a
    category property's search-only labels give its categories by ("oxidizer" of the
    GHS classes): those are what its values state."""
    if not isinstance(ontology, OntologyMatching):
        return frozenset(t for p in props for label in p.labels for t in tokens(label))
    words = {t for p in props for label in p.labels for t in tokens(label)}
    for p in props:
        search = {t for label in ontology.search_labels(p.name) for t in tokens(label)}
        if ontology.value_kind(p.name) == "category":
            search -= set(_category_words(p, ontology))
        words |= search
    return frozenset(words)


def _category_words(p: PropertyDef, ontology: OntologyMatching) -> frozenset[str]:
    """The words of a category property's search-only labels that share no word with
    its displayed ones: the names of its categories ("flammable", "oxidizer")."""
    names = [normalize_label(lab) for lab in (*p.labels, *ontology.search_labels(p.name))]
    shown = {t for lab in p.labels for t in normalize_label(lab)}
    return frozenset({t for n in names if not set(n) & shown for t in n} - STOPWORDS)


def _patterns(props: Sequence[PropertyDef], ontology: Ontology) -> tuple[tuple[str, str], ...]:
    """The asked properties' value patterns (the shape of an identifier)."""
    if not isinstance(ontology, OntologyMatching):
        return ()
    out: list[tuple[str, str]] = []
    for p in props:
        pattern = ontology.value_pattern(p.name)
        if pattern is None and ontology.value_kind(p.name) == "identifier":
            pattern = r"\d"  # a code without a pattern has a digit
        if pattern is not None:
            out.append((p.name, pattern))
    return tuple(out)


def _typed(props: Sequence[PropertyDef], ontology: Ontology) -> frozenset[str]:
    """The asked properties whose values are numbers or dates."""
    if not isinstance(ontology, OntologyMatching):
        return frozenset()
    return frozenset(p.name for p in props if ontology.value_kind(p.name) in _TYPED_KINDS)


_ABOUT = re.compile(r"\b(?:about|regarding|concerning)\s+(.+)$", re.I)
_BRACKETED = re.compile(r"\(([^()]{3,120})\)")
_QUALIFIER = re.compile(
    r"\b(?:to|of|for|on|in|against|over|with|from|by|at|under|after|before|if|when"
    r"|about|regarding|concerning)\b",
    re.I,
)


def _topic_unmodelled(asked: str, ontology: Ontology) -> bool:
    """Whether the topic of "what does it say about <topic>" has a head word no label of
    the ontology holds: "objections to the charges" is about objections, and "charges"
    (an amount's word) only qualifies it, so no property answers; "about late payment"
    or "about the storage of acids" name their property by their head word.

    The head is the last content word before the topic's first qualifying word. A topic
    spelt out in brackets ("about its behaviour in water (solubility, hydrolysis)") is
    what the brackets name, when they name a property.
    """
    m = _ABOUT.search(asked)
    if m is None:
        return False
    spelt = _BRACKETED.findall(m.group(1))
    if any(match_properties(inner, ontology) for inner in spelt):
        return False
    head = _QUALIFIER.split(_BRACKETED.sub(" ", m.group(1)), maxsplit=1)[0]
    words = [t for t in tokens(head) if t.isalpha() and t not in STOPWORDS]
    return bool(words) and stem(words[-1]) not in _vocabulary_stems(ontology)


def _vocabulary_stems(ontology: Ontology) -> frozenset[str]:
    """Stems of every word of the ontology's class and property labels, search-only
    labels included."""
    labels = [lab for c in ontology.classes() for lab in (c.label, *c.alt_labels)]
    search = ontology.search_labels if isinstance(ontology, OntologyMatching) else None
    for p in ontology.properties():
        labels += [*p.labels, *(search(p.name) if search is not None else ())]
    return _label_stems(tuple(labels))


@lru_cache(maxsize=8)
def _label_stems(labels: tuple[str, ...]) -> frozenset[str]:
    """The stems of the labels' words (about 10 ms for the SDS ontology: once)."""
    return frozenset(stem(t) for lab in labels for t in tokens(lab) if t.isalpha())


def _counted(ontology: Ontology) -> frozenset[str]:
    """What a question may count per document or per group, singular: the words of the
    ontology's property and class labels and the document noun ("hazard statements",
    "sheets")."""
    labels = [lab for p in ontology.properties() for lab in p.labels]
    labels += [lab for c in ontology.classes() for lab in (c.label, *c.alt_labels)]
    return _label_words((*labels, document_model(ontology).document_noun))


@lru_cache(maxsize=8)
def _label_words(labels: tuple[str, ...]) -> frozenset[str]:
    return frozenset(t for lab in labels for t in tokens(lab) if t.isalpha())


def _document_words(ontology: Ontology) -> frozenset[str]:
    """Tokens of the subject class's labels: what a question calls a document."""
    model = document_model(ontology)
    cls = next((c for c in ontology.classes() if c.name == model.subject_class), None)
    labels = (cls.label, *cls.alt_labels) if cls is not None else ()
    return frozenset(t for label in labels for t in tokens(label))


def _kind_words(ontology: Ontology) -> frozenset[str]:
    """Tokens of the ontology's class labels: they name kinds of documents and things."""
    return frozenset(
        t for c in ontology.classes() for label in (c.label, *c.alt_labels) for t in tokens(label)
    )


def _category_test(asked: str, ontology: Ontology) -> tuple[PropertyDef, tuple[str, ...]] | None:
    """A yes/no question whether a product belongs to a category ("Is X flammable?",
    "Is X corrosive to metals?"): the relation whose values are categories (value kind
    ``category``, the GHS hazard classes) when one of its labels or search-only labels
    is in the question, and the question's own words a value must hold.

    ``asked`` is the question without the product names.
    """
    if not isinstance(ontology, OntologyMatching):
        return None
    said = normalize_label(asked)
    for p in ontology.properties():
        if ontology.value_kind(p.name) != "category":
            continue
        names = [normalize_label(lab) for lab in (*p.labels, *ontology.search_labels(p.name))]
        if not any(n and in_row(said, n) for n in names):
            continue
        vocab = _category_words(p, ontology)  # a search-only label names a category
        terms = tuple(w for w in tokens(asked) if set(normalize_label(w)) & vocab)
        if terms:
            return p, terms
    return None


def _span(text: str, words: Sequence[str]) -> str:
    """The stretch of ``text`` from the first of ``words`` to the last, as written."""
    found = [m for m in re.finditer(r"[\w-]+", text) if m.group(0).lower() in set(words)]
    return text[found[0].start() : found[-1].end()] if found else " ".join(words)


def _parts_last(props: tuple[PropertyDef, ...], ontology: Ontology) -> tuple[PropertyDef, ...]:
    """A part's property only when the question names no property of the subject itself:
    "the total of invoice 7" is the invoice's total, not its lines' (a word both label)."""
    parts = set(document_model(ontology).part_classes())
    if not parts:
        return props
    part = [p for p in props if _local(p.domain or "") in parts]
    own = tuple(p for p in props if p not in part)
    return own or tuple(part)


def _with_narrower(
    props: tuple[PropertyDef, ...], ontology: Ontology
) -> tuple[tuple[PropertyDef, ...], dict[str, str]]:
    """An umbrella property followed by its sub-properties ("PPE": eye, hand, skin and
    respiratory protection); when the question names some of them itself ("What gloves
    should I wear"), those, not the umbrella. Also: each sub-property brought this way
    (an item the question does not name) with the umbrella that brought it."""
    if not isinstance(ontology, OntologyMatching) or not props:
        return props, {}
    out: list[PropertyDef] = []
    brought: dict[str, str] = {}
    names = {p.name for p in props}
    for p in props:
        subs = ontology.narrower(p.name)
        if subs and names & set(subs):
            continue
        out.append(p)
        out += [ontology.property(n) for n in subs]
        brought.update((n, p.name) for n in subs if n not in names)
    return tuple(dict.fromkeys(out)), brought


_CIRCUMSTANCE = re.compile(r"\b(?:when|while|during|before|after)\s+\w+ing\b", re.I)


def _circumstance_last(
    question: str, props: tuple[PropertyDef, ...], ontology: Ontology
) -> tuple[PropertyDef, ...]:
    """Properties named only in a circumstance ("when handling X") after the others.

    "What gloves should I wear when handling X?" asks for the gloves; the handling
    precautions are where they are worn, so they come second.
    """
    if len(props) < 2 or not _CIRCUMSTANCE.search(question):
        return props
    asked = {p.iri for p in match_properties(_CIRCUMSTANCE.sub(" ", question), ontology)}
    return tuple(sorted(props, key=lambda p: p.iri not in asked))


def _direction(
    text: str, props: Sequence[PropertyDef], ontology: Ontology
) -> tuple[Literal["min", "max"], str] | None:
    """The comparison's direction: a word right before a property's label wins.

    "the most acutely toxic if swallowed (lowest oral LD50)" sorts by the lowest LD50:
    "lowest" stands before a label of the property, "most" does not. A comparison word
    before an adjective the ontology says a product has more of when the value is lower
    (``lower_when_more``: "more acidic", "most toxic") sorts the other way.
    """
    words = comparison_words(text)
    if not words:
        return None
    inverse = _lower_when_more(props, ontology)
    labels = [set(tokens(label)) for p in props for label in p.labels]
    for way, word, end in words:
        after = tokens(text[end:])[:5]
        if inverse & set(after[:3]):  # "more acutely toxic"
            return ("min" if way == "max" else "max"), word
        if any(lab and lab <= set(after) for lab in labels):
            return way, word
    return words[0][0], words[0][1]


def _lower_when_more(props: Sequence[PropertyDef], ontology: Ontology) -> set[str]:
    """Tokens of the adjectives the asked properties grow less of (``lower_when_more``)."""
    if not isinstance(ontology, OntologyMatching):
        return set()
    return {t for p in props for w in ontology.lower_when_more(p.name) for t in tokens(w)}


_COMPARATIVE = re.compile(r"\b([a-z]{3,}?)(ier|iest|er|est)\b", re.I)


def _comparatives_spelt_out(question: str, ontology: Ontology) -> str:
    """Inflected comparatives of the ontology's adjectives spelt out: "denser" becomes
    "more dense", "heaviest" "most heavy", when the base word alone names a quantity
    property ("dense" is a label of the density). Only English morphology lives here;
    which adjectives name a property comes from the ontology."""

    def spelt(m: re.Match[str]) -> str:
        word = m.group(0)
        if word.lower() in COMPARISON_WORDS:
            return word
        stem_, ending = m.group(1).lower(), m.group(2).lower()
        bases = [stem_ + "y"] if ending.startswith("i") else [stem_ + "e", stem_]
        if len(stem_) > 2 and stem_[-1] == stem_[-2] and not ending.startswith("i"):
            bases.append(stem_[:-1])  # "hotter" -> "hot"
        for base in bases:
            if any(_measured(p, ontology) for p in match_properties(base, ontology)):
                return f"{'most' if ending.endswith('est') else 'more'} {base}"
        return word

    return _COMPARATIVE.sub(spelt, question)


def _measured(prop: PropertyDef, ontology: Ontology) -> bool:
    """Whether the property's values are numbers (a quantity, a temperature, a range)."""
    if prop.kind != "datatype":
        return False
    if isinstance(ontology, OntologyMatching):
        return ontology.value_kind(prop.name) in ("temperature", "number", "range")
    return True


def _without_word(
    question: str, word: str, props: Sequence[PropertyDef], ontology: Ontology
) -> tuple[PropertyDef, ...]:
    """Properties still named once the comparison word is taken out ("the lower flash
    point" names the flash point, not the lower explosion limit)."""
    rest = re.sub(rf"\b{re.escape(word)}\b", " ", question, count=1, flags=re.I)
    still = {p.iri for p in match_properties(rest, ontology)}
    return tuple(p for p in props if p.iri in still)


def _first_named(question: str, subjects: Sequence[SubjectMatch]) -> str | None:
    """The product whose name appears first in the question.

    A name is where the longest run of its matched words is, so a word of it said
    earlier on its own ("a question from the lab: does A ... than B, Lab Grade?") does
    not count.
    """
    toks = tokens(question)
    where = {p.doc_id: _name_position(toks, p.matched) for p in subjects}
    return min(where, key=lambda d: where[d]) if where else None


def _name_position(toks: Sequence[str], matched: frozenset[str]) -> int:
    """Start of the longest run of ``matched`` words in ``toks`` (the first, on ties)."""
    best, best_len, start = len(toks), 0, None
    for i, tok in enumerate([*toks, ""]):
        if tok in matched and tok:
            start = i if start is None else start
            continue
        if start is not None and i - start > best_len:
            best, best_len = start, i - start
        start = None
    return best


def match_properties(question: str, ontology: Ontology) -> list[PropertyDef]:
    """Ontology properties the question names, best first.

    An ontology that offers ``OntologyMatching`` matches with
    its own vocabulary (labels, alternative and search-only labels, inflections); any
    other is matched on its labels and alternative labels, as whole words.
    """
    if isinstance(ontology, OntologyMatching):
        return [p for p, _score in ontology.match_properties(question)]
    q = f" {' '.join(tokens(question))} "
    found = [
        (len(label), p)
        for p in ontology.properties()
        for label in p.labels
        if f" {' '.join(tokens(label))} " in q
    ]
    seen: dict[str, PropertyDef] = {}
    for _n, p in sorted(found, key=lambda x: -x[0]):
        seen.setdefault(p.iri, p)
    return list(seen.values())


def _value_terms(phrase: str, props: Sequence[PropertyDef], ontology: Ontology) -> tuple[str, ...]:
    """What a value must say for "which of these are <phrase>".

    Without a named property the whole phrase is the filter. With one, the words of its
    labels are dropped ("shipped as DOT class 5.1" under the transport hazard class); an
    identifier left (a number, a code) is then the filter on its own, else the words are;
    nothing left means any positive value matches.
    """
    if not props:
        return (phrase.strip(),)
    named = {t for p in props for label in _naming(p, ontology) for t in tokens(label)}
    rest = [t for t in tokens(phrase) if t not in named and t not in STOPWORDS]
    codes = [t for t in rest if any(c.isdigit() for c in t)]
    return tuple(codes or rest)


def _naming(prop: PropertyDef, ontology: Ontology) -> tuple[str, ...]:
    """Every label that names ``prop`` in a question, search-only ones included, except
    for a relation to categories: its search-only words ("flammable", "corrosive") are
    what a value must say."""
    if isinstance(ontology, OntologyMatching) and ontology.value_kind(prop.name) != "category":
        return (*prop.labels, *ontology.search_labels(prop.name))
    return tuple(prop.labels)


def _first_value(props: Sequence[PropertyDef]) -> PropertyDef | None:
    """The first property with literal values ("required" also names the generic
    ``requires`` relation, which decides nothing about the answer's shape)."""
    return next((p for p in props if p.kind == "datatype"), None)


def _procedure(prop: PropertyDef | None, ontology: Ontology) -> bool:
    """Whether the ontology reads the property's values as a procedure (whole sentences)."""
    if prop is None or not isinstance(ontology, OntologyMatching):
        return False
    return ontology.value_kind(prop.name) == "procedure"


def _sections(props: Sequence[PropertyDef], ontology: Ontology) -> tuple[int, ...]:
    if not isinstance(ontology, OntologyMatching):
        return ()
    found = [ontology.section(p.name) for p in props[:3]]
    return tuple(dict.fromkeys(n for n in found if n is not None))


def _quantity(props: Sequence[PropertyDef]) -> bool:
    return any(p.kind == "datatype" for p in props)


def _filter_terms(question: str) -> tuple[str, ...]:
    question = re.sub(r"\([^)]*\)", " ", question)  # "(rather than 'Danger')" is no filter
    out = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    out += [m.group(1).strip(" ,") for m in _CLASSIFIED.finditer(question)]
    return tuple(dict.fromkeys(t for t in out if t))
