"""Questions about the whole collection: which documents state a value, how many, the
extreme of a typed quantity, and which pass a numeric bound.

A collection question names no document ("Which of our products are classified as Eye
Irritation Category 2B?", "How many invoices are in EUR?"). Its members are read from
the graph's facts over every document in scope, precision first:

* a *filter* phrase matches a fact when one clause of the value (the text between
  sentence ends and semicolons, at most ``MAX_CLAUSE`` words: a value that states a
  class, a code or a name, not a paragraph that mentions one) holds every required
  word: words by stem and root (``word_key``: "sensitizers" is "sensitization",
  "cyclohexane" is not "cyclohexanone"), codes (a word with a digit) as printed, spaces
  and punctuation apart ("UN 3265" is "UN3265"). Words no short clause in scope prints
  ("GHS" in "GHS Skin Corrosion 1B") are not required; the phrase's other words all are;
* candidate phrases are tried in order: quoted words, parentheses with two words or a
  code, then the question's own clauses; the first with members is the answer;
* a *bound* or an *extreme* reads each document's first stated typed number of the
  asked property.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Protocol, TypeVar

from hybrid_rag.ask._collection_words import (
    code,
    code_pattern,
    collection_phrases,
    identifier,
    question_codes,
    selective,
)
from hybrid_rag.ask._concepts import (
    Readers,
    holds,
    properties_read,
    read_by,
    readers,
    stated_at,
)
from hybrid_rag.ask._phrasing import (
    Composed,
    cite,
    clip,
    in_sentence,
    plural,
    unit_text,
    with_article,
)
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.ask.grammar import Threshold
from hybrid_rag.models import Fact
from hybrid_rag.text import participle, stem, tokens, word_key
from hybrid_rag.types import ConceptDef
from hybrid_rag.units import BARE_SCALES, convert, scale_of, unit_key

__all__ = [
    "MAX_CLAUSE",
    "SHOWN",
    "Valued",
    "asked_phrases",
    "by_phrase",
    "checks_codes",
    "collection_answer",
    "contradicted",
    "every_document",
    "labels_only",
    "left_out",
    "members",
    "phrase_members",
    "stated_props",
    "stating",
    "with_every_code",
    "without_concepts",
]

MAX_CLAUSE = 14
"""The most words (numbers apart) a clause of a value may have to state what a filter
asks."""
SHOWN = 12
"""Members the answer's text names before "and N more" (``Answer.facts`` holds all)."""


class Valued(Protocol):
    """What membership reads of a fact: a ``Fact``, or a row of the store's values
    before its provenance is read (``hybrid_rag.ask.kg``)."""

    @property
    def doc_id(self) -> str: ...
    @property
    def predicate(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def number(self) -> float | None: ...
    @property
    def unit(self) -> str | None: ...
    @property
    def status(self) -> str: ...


V = TypeVar("V", bound=Valued)
W = TypeVar("W", bound=Valued)


def asked_phrases(
    a: QuestionAnalysis, ignore: frozenset[str] = frozenset()
) -> tuple[tuple[tuple[str, ...], bool], ...]:
    """The question's phrases (``collection_phrases``), the name of the documents it
    sets apart first ("which other products list it": the name is the value)."""
    found = collection_phrases(a.question, ignore)
    return ((a.other_name, False), *found) if a.other_name else found


def every_document(a: QuestionAnalysis) -> bool:
    """Whether a collection question asks for every document in scope: it names no
    property, set, kind, date or bound, and no word of it is a value to look for ("How
    many invoices do we hold?", "List all our sheets")."""
    bounded = a.threshold is not None or a.period is not None or a.coded is not None
    sets = a.named_set or a.kind_set or a.kind_noun or a.others_of
    return (
        a.collection
        and a.intent == "filter"
        and not (a.properties or bounded or sets)
        and not asked_phrases(a, a.kind_words)
    )


_CLAUSE = re.compile(r"(?<=[.;])\s+|\n|;\s*")


def members(a: QuestionAnalysis, facts: Sequence[V]) -> list[V]:
    """The facts that make each document a member, one or more per document.

    An identifier the question gives decides alone. Else a phrase in the values of the
    asked properties or in any value (the one with the most required words wins, the
    asked properties on equals), with every word the values print (of a clause of the
    question, one word of the ontology's labels that no value prints may be missing:
    "GHS"); when no phrase matched, the question's clauses without the words of the
    ontology's labels ("UN1262 in the transport section": the value is "UN1262").
    """
    if a.intent == "lookup" and a.named_set:  # "the UN number for ethanol": every sheet's
        asked = {p.name for p in a.properties}
        return [f for f in facts if f.doc_id in a.named_set and f.predicate in asked]
    stated = [f for f in facts if f.status == "stated"]
    if a.threshold is not None or a.intent in ("min", "max"):  # a value its sheet denies
        denied = contradicted(a, facts)
        stated = [f for f in stated if f.doc_id not in denied]
    if _bounded(a) and a.concepts:  # "the flammable liquids with a flash point below 0 °C"
        return _among_concepts(a, stated)
    if a.threshold is not None or a.intent in ("min", "max") or a.summed:
        return _typed_members(a, stated)
    if a.period is not None:
        return _dated_members(a, stated)
    if a.concepts:
        return _concept_members(a, stated)
    if a.coded is not None:  # "DOT class 8": the value's own (first) code decides
        return _coded_members(a.coded, a.patterns, stated)
    if a.kind_set and not collection_phrases(a.question, a.kind_words):
        return _kind_members(a, stated)  # "How many liquids do we have?"
    if a.named_set and not collection_phrases(a.question, a.kind_words):
        return _named_members(a, stated)
    if every_document(a):  # "How many invoices do we hold?": each by its name
        return list({f.doc_id: f for f in reversed(stated)}.values())[::-1]
    if a.distinct:  # "What UN numbers appear in our sheets?": every value that says one
        asked = {p.name for p in a.properties}
        return [
            f
            for f in stated
            if f.predicate in asked and not _NEGATION.search(f.value) and not _NONE.search(f.value)
        ]
    if stating(a):  # "Which products have a flash point?" / "... no flash point?"
        return _stating_members(a, facts)
    found = phrase_members(a, stated)
    return with_every_code(a, found, stated) if checks_codes(a) else found


def by_phrase(a: QuestionAnalysis) -> bool:
    """Whether ``members`` reads the question's phrases in the values (``phrase_members``,
    a function of each value alone: it may be read on the distinct values of many
    documents) rather than a lookup of a named set, a bound, an extreme, a span of
    dates, the names of a set, concepts, a code after its label, the values of a
    property, a sum, every document, a kind or whether a property is stated."""
    if a.intent == "lookup" and a.named_set:
        return False
    if a.threshold is not None or a.intent in ("min", "max") or a.period is not None:
        return False
    if a.concepts or a.coded is not None or a.summed or a.distinct or every_document(a):
        return False
    phrases = collection_phrases(a.question, a.kind_words)
    if (a.kind_set and not phrases) or stating(a):
        return False
    return not (a.named_set and not phrases)


def checks_codes(a: QuestionAnalysis) -> bool:
    """Whether a phrase's members are kept only in the documents that print every code
    the question gives (``with_every_code``): when it gives a code and no identifier."""
    return bool(question_codes(a.question)) and not _identifiers(a)


def _identifiers(a: QuestionAnalysis) -> list[str]:
    return [w for words, _whole in collection_phrases(a.question) for w in words if identifier(w)]


def phrase_members(a: QuestionAnalysis, stated: Sequence[V]) -> list[V]:
    """The stated values that say what the question's phrases ask (``members`` without
    the check of every code per document, ``with_every_code``): a pure function of each
    value, its property and the values beside it, so it may be read on the distinct
    values of many documents."""
    ids = _identifiers(a)
    if ids:  # an identifier identifies: the values that print every one the question gives
        patterns = [code_pattern(w) for w in dict.fromkeys(ids)]
        return [f for f in stated if any(_prints(c, patterns) for c in _clauses(f.value))]
    asked = {p.name for p in a.properties}
    own = [f for f in stated if f.predicate in asked]
    if a.own_only:  # "3M as a supplier", "the Corrosion pictogram": that property's values
        only = [f for f in own if f.predicate in a.own_only]
        score, found = _best_phrase(a, only, loose=False, own=True) if only else ((0,), [])
        if only and not score[0]:  # only its labels' words: "not regulated" (UN number)
            found = _best_phrase(a, only, loose=False)[1]
        return found
    strict = [_best_phrase(a, own, loose=False, own=True)] if own else []
    if strict and not strict[0][0][0]:  # only its labels' words: "not regulated" (UN number)
        strict = [_best_phrase(a, own, loose=False)]
    strict.append(_best_phrase(a, stated, loose=False))
    score, found = max(strict, key=lambda r: r[0][0])  # the first of equals: the asked ones
    if own and not score[1] and strict[0][0][0]:  # only label words ("not regulated ...
        score, found = strict[0]  # for transport"): the asked property says where to look
    found = found if score[0] else _best_phrase(a, stated, loose=True)[1]
    if not found and own:  # "whose primary DOT hazard class is 6.1": the asked value's code
        found = _coded(a, own)
    if not found and own and labels_only(a):  # "Which products are marine pollutants?"
        found = _affirmed(a, own)
    return found


def labels_only(a: QuestionAnalysis) -> bool:
    """Whether the question's phrases hold nothing but words of the ontology's labels
    (and no code): it asks which documents have the asked property, not for a value."""
    words = [w for phrase, _whole in asked_phrases(a, a.kind_words) for w in phrase]
    return bool(words) and all(
        not code(w) and (stem(w) in a.vocabulary or w in a.named_words) for w in words
    )


_YES = frozenset(["y", "yes", "true", "listed", "present", "x"])
_NO = frozenset(["n", "no", "false", "not listed", "absent"])


def _affirmed(a: QuestionAnalysis, own: Sequence[V]) -> list[V]:
    """The asked property's values that say yes ("Marine pollutant: yes", "Listed"), or,
    for a question that asks a negation ("which are not marine pollutants"), those that
    say no: a property whose values answer yes or no."""
    wanted = _NO if _NEGATION.search(a.question) else _YES
    return [f for f in own if f.value.strip(" .:;!").lower() in wanted]


def contradicted(a: QuestionAnalysis, facts: Sequence[V]) -> set[str]:
    """The documents that state the asked quantity both as a number and as not available
    ("Autoignition Temperature: No information available" in one section, "90 °C" in
    another): no bound or extreme can rest on what the document itself denies."""
    if not a.properties:
        return set()
    asked = a.properties[0].name
    denied = {f.doc_id for f in facts if f.predicate == asked and f.status != "stated"}
    valued = {
        f.doc_id
        for f in facts
        if f.predicate == asked and f.status == "stated" and f.number is not None
    }
    return denied & valued


def left_out(
    a: QuestionAnalysis,
    facts: Sequence[V],
    chosen: Sequence[V],
    *,
    scope: int,
    stating: int | None = None,
) -> list[str]:
    """Sentences for a bound or an extreme of a typed quantity: how many documents state
    none (of ``scope``; ``stating``: how many state one, when ``facts`` are not all of
    them), and how many would pass but deny the value elsewhere (``contradicted``), so
    that a reader knows what the list stands on."""
    if not (a.threshold is not None or a.intent in ("min", "max")) or not a.properties:
        return []
    prop = a.properties[0]
    label = in_sentence(prop.label)
    said = {f.doc_id for f in facts if f.predicate == prop.name and f.status == "stated"}
    notes: list[str] = []
    denied = contradicted(a, facts)
    if denied:
        plain = replace(a, concepts=())
        pool = [f for f in facts if f.status == "stated" and f.predicate == prop.name]
        would = {f.doc_id for f in _typed_members(plain, pool)} - {f.doc_id for f in chosen}
        if n := len(would & denied):
            noun = a.noun if n == 1 else plural(a.noun)
            prints, says = ("prints", "says") if n == 1 else ("print", "say")
            notes.append(
                f"{n} more {noun} {prints} {with_article(label)} that would count but "
                f"elsewhere {says} no {label} is available; left out."
            )
    silent = scope - (len(said) if stating is None else stating)
    if silent > 0 and not (a.named_set or a.kind_set or a.concepts or a.also):
        noun = a.noun if silent == 1 else plural(a.noun)
        does = "does" if silent == 1 else "do"
        notes.append(f"{silent} {noun} {does} not state {with_article(label)}.")
    return notes


def _bounded(a: QuestionAnalysis) -> bool:
    """Whether members pass a bound, an extreme or a period of a typed value."""
    return a.threshold is not None or a.intent in ("min", "max") or a.period is not None


def _among_concepts(a: QuestionAnalysis, stated: Sequence[V]) -> list[V]:
    """A bound, extreme or period asked of the documents that state the question's
    concepts: the typed members among them, each with the values that state them."""
    stating = _concept_members(replace(a, concept_combined=False), stated)
    docs = {f.doc_id for f in stating}
    asked = {p.name for p in a.properties}
    pool = [f for f in stated if f.doc_id in docs and f.predicate in asked]
    plain = replace(a, concepts=())
    found = _dated_members(plain, pool) if a.period is not None else _typed_members(plain, pool)
    chosen = {f.doc_id for f in found}
    return [*found, *(f for f in stating if f.doc_id in chosen)]


def _concept_members(a: QuestionAnalysis, stated: Sequence[V]) -> list[V]:
    """The values that state the question's concepts (``hybrid_rag.ask._concepts``), of
    the documents that state every one it asks for ("corrosive flammable liquids";
    "either ... or" asks for one of them) and none it denies ("acids that are not
    corrosive": of the documents that state a value the concept is read in)."""
    found: list[list[V]] = []
    denied: set[str] = set()
    negated = a.concept_negated or (False,) * len(a.concepts)
    for concept, codes, no in zip(a.concepts, a.concept_codes, negated, strict=True):
        hits = _stating(a, concept, codes, stated)
        if no:
            denied |= {f.doc_id for f in hits}
        else:
            found.append(hits)
    if a.concept_combined:  # "... that are not regulated for transport": that too
        found.append(members(without_concepts(a), stated))
    if not found:  # only denied concepts: of the documents that state a value of theirs
        found = [_first_of(a, c, stated) for c, no in zip(a.concepts, negated, strict=True) if no]
    docs = [{f.doc_id for f in fs} for fs in found]
    keep = set.union(*docs) if _either(a) else set.intersection(*docs)
    keep -= denied
    return list({id(f): f for fs in found for f in fs if f.doc_id in keep}.values())


def _stating(
    a: QuestionAnalysis, concept: ConceptDef, codes: Sequence[str], stated: Sequence[V]
) -> list[V]:
    """The values that state a concept; of a document, those that state it most
    directly (its class line before a statement code)."""
    found = readers(concept, a.concept_scheme)
    rank_of = _memo(found, codes)  # values repeat across documents: each read once
    ranked = [(rank, f) for f in stated if (rank := rank_of(f)) is not None]
    best: dict[str, int] = {}
    for rank, f in ranked:
        best[f.doc_id] = min(rank, best.get(f.doc_id, rank))
    if codes:  # a class line of another category outweighs a statement ("Category 2A"
        lined_of = _memo(found, ())
        lined = {f.doc_id for f in stated if lined_of(f) == 0}  # and H320)
        best = {d: r for d, r in best.items() if r == 0 or d not in lined}
    return [f for rank, f in ranked if rank == best.get(f.doc_id)]


def _first_of(a: QuestionAnalysis, concept: ConceptDef, stated: Sequence[V]) -> list[V]:
    """Each document's first value of the properties a concept is read in: the
    documents a denied concept is asked of ("Which products are not flammable?": those
    whose classification is stated)."""
    props = properties_read(concept, a.concept_scheme)
    first: dict[str, V] = {}
    for f in stated:
        if not props or f.predicate in props:
            first.setdefault(f.doc_id, f)
    return list(first.values())


def _memo(found: Readers, codes: Sequence[str]) -> Callable[[Valued], int | None]:
    """``read_by`` of a value, read once per distinct property and value."""
    seen: dict[tuple[str, str], int | None] = {}

    def rank(f: Valued) -> int | None:
        key = (f.predicate, f.value)
        if key not in seen:
            seen[key] = read_by(found, predicate=f.predicate, value=f.value, codes=codes)
        return seen[key]

    return rank


def without_concepts(a: QuestionAnalysis) -> QuestionAnalysis:
    """The question as asked of what it asks besides its concepts (their words no
    value need print)."""
    words = {t for said in a.concept_words for t in tokens(said)}
    return replace(a, concepts=(), concept_combined=False, kind_words=a.kind_words | words)


def _either(a: QuestionAnalysis) -> bool:
    """Whether the question asks for one concept or another ("corrosive or oxidizers";
    not the "or" of a concept's own name, "known or presumed carcinogens")."""
    rest = tokens(a.question)
    for said in a.concept_words:
        words = tokens(said)
        for i in range(len(rest) - len(words) + 1):
            if rest[i : i + len(words)] == words:
                rest[i : i + len(words)] = ["|"]
                break
    return _EITHER.search(" ".join(rest)) is not None


_EITHER = re.compile(r"\b(?:either|or)\b(?!\s+(?:both|all)\b)", re.I)


def stating(a: QuestionAnalysis) -> bool:
    """Whether a filter asks only whether documents state a typed quantity or a coded
    value (one with a value pattern), or state that they have none: its words are those
    of an asked property's name ("Which products have a flash point?", "... a
    subsidiary hazard class?", "... no flash point?"; an alternative label may be a
    value: "CHEMTREC" of the emergency phone)."""
    if a.threshold is not None or a.intent != "filter" or not stated_props(a):
        return False
    phrases = [w for words, _whole in asked_phrases(a, a.kind_words) for w in words]
    names = {t for p in a.properties for t in tokens(p.label)}  # not "CHEMTREC" of a phone
    return bool(phrases) and all(w in names for w in phrases)


def stated_props(a: QuestionAnalysis) -> frozenset[str]:
    """The asked properties whose values say whether one is stated: typed ones (a number
    is) and coded ones (a value of their pattern is, unless it says none)."""
    return a.typed | {name for name, _pattern in a.patterns}


def _stating_members(a: QuestionAnalysis, facts: Sequence[V]) -> list[V]:
    """The documents that state the asked quantity or code: a number of it, or a value
    that neither negates nor says none; asked with a negation ("no flash point"), those
    stating none or not applicable."""
    asked = stated_props(a)
    if _NEGATION.search(a.question):
        return [f for f in facts if f.predicate in asked and _NONE.search(f.value)]
    return [
        f
        for f in facts
        if f.predicate in asked
        and f.status == "stated"
        and (f.number is not None if f.predicate in a.typed else not _NEGATION.search(f.value))
        and not _NONE.search(f.value)
    ]


_NONE = re.compile(r"^\W*(?:none|not\s+applicable|n/a|nil)(?![\w/])", re.I)
"""A value that says the document's subject has none of the quantity."""


def _coded(a: QuestionAnalysis, own: Sequence[V]) -> list[V]:
    """The asked properties' values a clause of which says the codes the question gives
    and nothing but the property's own words ("Class 2B", "6.1"; not "8 (6.1)", whose
    6.1 is a subsidiary): for a question whose other words no value prints ("primary",
    "poison")."""
    patterns = [code_pattern(c) for c in question_codes(a.question)]
    if not patterns:
        return []

    def says(clause: str) -> bool:
        rest = [t for t in tokens(clause) if stem(t) not in a.vocabulary]
        return (
            bool(rest)
            and all(any(p.fullmatch(t) for p in patterns) for t in rest)
            and all(any(p.fullmatch(t) for t in rest) for p in patterns)
        )

    return [f for f in own if any(says(c) for c in _clauses(f.value))]


def _coded_members(
    coded: tuple[str, tuple[str, ...]], patterns: Sequence[tuple[str, str]], stated: Sequence[V]
) -> list[V]:
    """The values of the coded property whose first code (the first stretch its value
    pattern reads) is one of the asked codes: "8 (5.1)" and "Class 8" are class 8, "5.1,
    8" (a subsidiary 8) is not."""
    prop, codes = coded
    pattern = next((p for name, p in patterns if name == prop), None)
    if pattern is None:
        return []
    rx, wanted = re.compile(pattern), {_squashed(c) for c in codes}
    out = []
    for f in stated:
        m = rx.search(f.value) if f.predicate == prop else None
        if m is not None and _squashed(m.group(0)) in wanted:
            out.append(f)
    return out


def _squashed(code: str) -> str:
    """A code compared: no spaces, case folded ("III" is "iii", "UN 1789" "un1789")."""
    return re.sub(r"\s+", "", code).casefold()


def _dated_members(a: QuestionAnalysis, stated: Sequence[V]) -> list[V]:
    """The typed dates of the asked date properties (any date, when none is asked) that
    fall in the question's span."""
    span = a.period
    if span is None:
        return []
    asked = {p.name for p in a.properties if p.name in a.typed}
    return [
        f
        for f in stated
        if f.unit == "date"
        and f.number is not None
        and (not asked or f.predicate in asked)
        and span.holds(f.number)
    ]


def _named_members(a: QuestionAnalysis, stated: Sequence[V]) -> list[V]:
    """Each document of the named set once: its first naming value that holds the name
    ("Zinc Oxide Powder" for "zinc"), else its first naming value."""
    want = [word_key(w) for w in tokens(a.set_name or "")]

    def holds(f: V) -> bool:
        return all(w in _words(f.value) for w in want)

    first: dict[str, V] = {}
    for f in stated:
        if f.doc_id in a.named_set and (
            f.doc_id not in first or (holds(f) and not holds(first[f.doc_id]))
        ):
            first[f.doc_id] = f
    return [first[d] for d in a.named_set if d in first]


def _kind_members(a: QuestionAnalysis, stated: Sequence[V]) -> list[V]:
    """Each document of the kind set once: its first value that holds the kind's word."""
    key = word_key(a.kind_noun or "")
    first: dict[str, V] = {}
    for f in stated:
        if f.doc_id in a.kind_set and key in _words(f.value):
            first.setdefault(f.doc_id, f)
    return list(first.values())


def with_every_code(a: QuestionAnalysis, found: Sequence[W], stated: Sequence[V]) -> list[W]:
    """The members whose documents print every code the question gives, each in some
    value ("class 5.1 ... with a 6.1 subsidiary risk": both, in two facts)."""
    codes = question_codes(a.question)
    if not codes:
        return list(found)
    patterns = [code_pattern(c) for c in codes]
    values: dict[str, list[str]] = {}
    for f in stated:
        values.setdefault(f.doc_id, []).append(f.value)
    keep = {d for d, vs in values.items() if all(any(p.search(v) for v in vs) for p in patterns)}
    return [f for f in found if f.doc_id in keep]


def _required(
    a: QuestionAnalysis, words: Sequence[str], whole: bool, printed: set[str], *, loose: bool
) -> list[str] | None:
    """The word keys (``word_key``) a value must hold for a phrase, or ``None`` if the
    phrase cannot match. Whether a word is the ontology's is asked of its stem."""
    keys = {word_key(w): stem(w) for w in words if not code(w)}
    if loose:  # only the words that say what the value is; two at least
        kept = [k for k, s in keys.items() if s not in a.vocabulary]
        return None if whole or len(kept) < 2 else kept
    asking = {word_key(w) for w in words if participle(w)}  # "declared", "listed"
    missing = [s for k, s in keys.items() if k not in printed and (whole or k not in asking)]
    if missing and (whole or len(missing) > 1 or missing[0] not in a.vocabulary):
        return None
    return [k for k in keys if k in printed]


_NEGATION = re.compile(r"\b(?:not|no|non|none|never|neither|nor)\b", re.I)


def _best_phrase(
    a: QuestionAnalysis, pool: Sequence[V], *, loose: bool, own: bool = False
) -> tuple[tuple[int, int], list[V]]:
    """The members of the phrase with the most required words, and its score: how many
    (codes count twice), then how many of them are no word of the ontology's labels
    (``members`` prefers the asked property's own values when none is: "not regulated
    for transport"). Among the asked properties' own values (``own``) the words of their
    labels say which property, not what its value holds ("the signal word Warning": the
    value "Warning")."""
    asks_negation = _NEGATION.search(a.question) is not None
    clauses = [
        (f, c, have)
        for f in pool
        for c, have in _read(f.value)
        if asks_negation or not _NEGATION.search(c)  # "Marine pollutant: No" is no member
    ]
    printed = {w for _f, _c, have in clauses for w in have}
    ignore = a.kind_words | a.named_words if own else a.kind_words
    phrases = asked_phrases(a, ignore)
    misspelt = _misspelt([w for words, _ in phrases for w in words], clauses)
    if misspelt:  # "Mutegenicity" printed for "mutagenicity": the asked word's key
        clauses = [(f, c, have | {misspelt[k] for k in have & misspelt.keys()})
                   for f, c, have in clauses]  # fmt: skip
        printed |= set(misspelt.values())
    best: list[V] = []
    most = (0, 0)
    for words, whole in phrases:
        if not selective(words):
            continue
        need = _required(a, words, whole, printed, loose=loose)
        codes = [code_pattern(w) for w in words if code(w)]
        size = len(need or ()) + 2 * len(codes)  # a code is the more precise word
        labels = {word_key(w) for w in words if not code(w) and stem(w) in a.vocabulary}
        score = (size, len(set(need or ()) - labels) + 2 * len(codes))
        if need is None or not size or size <= most[0]:
            continue
        hits = [
            f
            for f, c, have in clauses
            if all(k in have for k in need) and all(p.search(c) for p in codes)
        ]
        if hits:
            best, most = list({id(f): f for f in hits}.values()), score
    return most, best


MISSPELT_LETTERS = 10
"""The shortest word a value may misspell by one letter and still say it: long words only
("mutegenicity" is "mutagenicity"; "chlorite" stays apart from "chloride")."""


def _misspelt(
    asked: Sequence[str], clauses: Sequence[tuple[object, str, frozenset[str]]]
) -> dict[str, str]:
    """``{key of a printed word: key of the asked word it misspells}`` for the asked
    words of ``MISSPELT_LETTERS`` letters or more: a printed word one letter off
    (changed, added or dropped), of the same first two letters, that is no word the
    question asks itself."""
    wanted = {w for w in asked if len(w) >= MISSPELT_LETTERS and w.isalpha()}
    if not wanted:
        return {}
    seen = set().union(*(_long_words(c) for _f, c, _h in clauses))
    out: dict[str, str] = {}
    for w in wanted:
        for t in seen:
            if t[:2] == w[:2] and t not in wanted and _one_letter_off(t, w):
                out[word_key(t)] = word_key(w)
    return out


@lru_cache(maxsize=65536)
def _long_words(clause: str) -> frozenset[str]:
    """A clause's words that may misspell a word of ``MISSPELT_LETTERS`` letters."""
    return frozenset(t for t in tokens(clause) if len(t) >= MISSPELT_LETTERS - 1)


def _one_letter_off(a: str, b: str) -> bool:
    """Whether ``a`` becomes ``b`` by changing, adding or dropping one letter."""
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long_ = sorted((a, b), key=len)
    if len(long_) - len(short) != 1:
        return False
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _typed_members(a: QuestionAnalysis, facts: Sequence[V]) -> list[V]:
    """Each document's first stated number (in the unit asked, if one is); a value
    printed as a bound ("> 200 °C") is a member only where the bound decides: above 1500
    for "> 1500", never below; every document's for a sum."""
    first: dict[str, V] = {}
    for f in facts:
        if f.number is not None and (a.unit is None or f.unit == a.unit):
            first.setdefault(f.doc_id, f)
    own = {p.name: p.unit for p in a.properties}
    first = {d: f for d, f in first.items() if f.unit != "%" or own.get(f.predicate) == "%"}
    if a.threshold is not None:  # no share ("Same as water ±5%") is a density
        bound = a.threshold
        return [f for f in first.values() if _passes(f, bound)]
    if a.summed:
        return list(first.values())
    points = [f for f in first.values() if _qualifier(f.value) is None and not _off_scale(f)]
    units = {f.unit for f in points}
    if len(units) != 1:
        return []  # no order across units
    ranked = sorted(points, key=lambda f: f.number or 0.0, reverse=a.intent == "max")
    if not ranked:
        return []
    last = ranked[min(a.top or 1, len(ranked)) - 1].number  # "the three lowest": ties too
    if a.intent == "min":
        return [f for f in ranked if (f.number or 0.0) <= (last or 0.0)]
    return [f for f in ranked if (f.number or 0.0) >= (last or 0.0)]


_ABOVE = re.compile(r"^\W*(?:>|≥|greater than|more than|above|over|min(?:imum)?\b)", re.I)
_BELOW = re.compile(r"^\W*(?:<|≤|less than|below|under|max(?:imum)?\b)", re.I)


def _qualifier(value: str) -> str | None:
    """``">"`` or ``"<"`` for a value printed as a bound, else ``None``."""
    if _ABOVE.search(value):
        return ">"
    return "<" if _BELOW.search(value) else None


def _passes(f: Valued, bound: Threshold) -> bool:
    """Whether a value meets a bound; one printed as a bound on the other side may or may
    not ("> 200" against "below 230"): not a member; nor is a value in another unit than
    the bound's ("above 500 EUR": no amount in INR), temperatures apart (converted)."""
    side = _qualifier(f.value)
    if side is not None and (side != bound.op or bound.upper is not None):
        return False
    if (bound.unit and not _same_unit(bound.unit, f)) or (not bound.unit and _off_scale(f)):
        return False
    span = _span(f)  # "230 - 245 °C": all of it, below a bound or between two
    if span is not None and (bound.op == "<" or bound.upper is not None):
        low, high = span
        inside = bound.upper is None or bound.holds(low, unit=f.unit)
        return inside and high is not None and bound.holds(high, unit=f.unit)
    return bound.holds(f.number or 0.0, unit=f.unit)


_RANGE = re.compile(r"^\W*?([-−]?\d+(?:[.,]\d+)?)\s*(?:-|–|to)\s*([-−]?\d+(?:[.,]\d+)?)(?![\d/])")


def _span(f: Valued) -> tuple[float, float | None] | None:
    """``(lower, upper)`` of a value printed as a range ("230 - 245 °C", "1.9 - 3.7"),
    whose typed number is its lower bound; the upper is ``None`` when the typed number
    is not the printed lower bound (converted from another unit): unknown in the
    typed unit. ``None`` for a value that is no range."""
    m = _RANGE.match(f.value)
    if m is None or f.number is None:
        return None
    low, high = (float(x.replace("−", "-").replace(",", ".")) for x in m.groups())
    if high <= low:
        return None  # "5-7" is a range; "2023-01-05" or "1-417-725" no
    return low, (high if abs(low - f.number) < 1e-9 else None)


def _same_unit(asked: str, f: Valued) -> bool:
    """Whether a value can be held to a bound in ``asked``: its typed unit is the
    bound's or measures the same (converted: °F or K to °C, kPa to mmHg); untyped, its
    text prints the bound's unit or another of its scale at the same factor ("2.33
    g/cm3" for "above 2 g/mL"), or, on a scale that reads bare numbers (a relative
    density is a density in g/cm³), no unit of the scale at all. A value printed in
    another unit of the scale is no member: its number was not converted."""
    if f.unit is not None:
        return unit_key(f.unit) == unit_key(asked) or convert(1.0, asked, f.unit) is not None
    if _prints_unit(f.value, asked):
        return True
    scale = scale_of(asked)
    if scale is None:
        return False
    printed = [u for u in scale.factors if _prints_unit(f.value, u)]
    if not printed:
        return scale.bare and not _off_scale(f)  # "33-80 lbs. / ft3": a unit of its own
    return all(scale.factor(u) == scale.factor(asked) for u in printed)


def _off_scale(f: Valued) -> bool:
    """Whether an untyped number is printed in a unit of its own ("1530 kg/m³", "33-80
    lbs. / ft3" among relative densities) other than the base of a scale that reads bare
    numbers (g/cm³): it compares with neither a bound without a unit nor the other
    values."""
    if f.unit is not None:
        return False
    lead = _LEADING_NUMBER.match(f.value)  # its own unit, after its number ("< 0.5 at
    unit = _OWN_UNIT.match(f.value[lead.end() :]) if lead else None  # 100 g/l": no unit)
    said = unit.group(0).strip() if unit else ""
    base = (u for s in BARE_SCALES for u in s.factors if s.factors[u] == 1.0)
    return "/" in said and not any(_prints_unit(said, u) for u in base)  # "33 lbs. / ft3"


_OWN_UNIT = re.compile(r"[^(@;,]*?(?=\s*(?:[(@;,]|\bat\b|$))", re.I)
"""The words after a value's leading number up to its condition ("kg/m³ " of "1530
kg/m³ (25 °C)")."""
_LEADING_NUMBER = re.compile(r"^\W*?[-−]?\d[\d.,]*(?:\s*(?:-|–|to)\s*[-−]?\d[\d.,]*)?\s*")


def _prints_unit(value: str, unit: str) -> bool:
    """Whether ``value`` prints ``unit`` as a word of its own, spaces and case apart."""
    body = r"\s*".join(map(re.escape, unit_key(unit)))
    text = value.lower().replace("³", "3").replace("²", "2")
    return re.search(rf"(?<![a-z]){body}(?![a-z])", text) is not None


def _prints(clause: str, patterns: Sequence[re.Pattern[str]]) -> bool:
    return all(p.search(clause) for p in patterns)


def collection_answer(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    """The count, then the members with their values and citations."""
    if a.intent == "lookup" and a.named_set:
        return _per_value(a, facts, limit)
    if a.summed and facts:
        return _sum_answer(a, facts, limit)
    if a.distinct and facts and a.properties:
        return _distinct_answer(a, facts, limit)
    per_doc: dict[str, list[Fact]] = {}
    for f in _shown(a, facts):
        per_doc.setdefault(f.doc_id, []).append(f)
    n = len(per_doc)
    noun = a.noun if n == 1 else plural(a.noun)
    if a.set_loose and per_doc and collection_phrases(a.question, a.kind_words) and not a.concepts:
        return _loose_answer(a, per_doc, limit)
    if not per_doc and a.intent in ("min", "max") and a.properties:
        return _no_extreme(a)
    if not per_doc:
        text = (
            f"None {_among(a)} states {_what(a)}."
            if a.named_set or a.kind_label or (a.concepts and _bounded(a))
            else f"No other {a.noun} in scope states {_what(a)}{_besides(a)}."
            if a.others_of
            else f"No {a.noun} in scope states {_what(a)}."
        )
        return Composed(text, (), True, False, "not_in_documents")
    items = _listed(per_doc)
    verb = "states" if n == 1 else "state"
    if a.intent in ("min", "max") and a.threshold is None:
        word = _EXTREMES[(a.intent, facts[0].unit == "date")]
        label = in_sentence(facts[0].predicate_label)
        if a.top and a.top > 1:
            word, label = f"{a.top} {word}", plural(label)
        label += f" in {a.unit}" if a.unit else ""  # "the highest total in EUR"
        head = f"The {word} {label} any {a.noun} states"
        among = a.kind_label or a.named_set or a.concepts
        head = f"The {word} {label} {_among(a)}" if among else head
        if a.also:  # "the class 3 product with the lowest ...": among those stating class 3
            that = " and ".join(_constraint(x, facts) for x in a.also)
            head = f"The {word} {label} of the {plural(a.noun)} that state {that}"
        text = f"{head}: {items}."
    elif every_document(a):
        text = f"{n} {noun} {'is' if n == 1 else 'are'} in scope: {items}."
    elif a.kind_label and not collection_phrases(a.question, a.kind_words) and not a.threshold:
        kind = f"the {in_sentence(a.kind_label)} {a.kind_noun}"
        among = _among(a) if a.named_set else noun
        text = f"{n} {among} {'states' if n == 1 else 'state'} {kind}: {items}."
    elif a.named_set and not collection_phrases(a.question, a.kind_words) and not a.threshold:
        text = f"{n} {noun} {'is' if n == 1 else 'are'} {_called(a)}: {items}."
    elif a.named_set or a.kind_label or (a.concepts and _bounded(a)):
        among = _among(a) + ("," if a.concepts and not (a.named_set or a.kind_label) else "")
        text = f"{n} {among} {verb} {_what(a, facts)}: {items}."
    elif a.others_of:
        text = f"{n} other {noun} {verb} {_what(a, facts)}{_besides(a)}: {items}."
    else:
        text = f"{n} {noun} {verb} {_what(a, facts)}: {items}."
    cites = tuple(fs[0].evidence for _d, fs in per_doc.items())
    return Composed(clip(text, limit), cites, True, False)


def _no_extreme(a: QuestionAnalysis) -> Composed:
    """No extreme: no document states the asked quantity, or their values are in units
    no conversion relates (totals in EUR, INR and USD)."""
    word = "lowest" if a.intent == "min" else "highest"
    label = in_sentence(a.properties[0].label)
    text = (
        f"No {word} {label} can be named: no {a.noun} in scope states one, or their values "
        f"are in units that do not convert into each other (ask for the {word} in one unit)."
    )
    return Composed(text, (), True, False, "not_in_documents")


def _sum_answer(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    """The asked values added up per unit (no rate converts currencies), then each
    document's value with its citation."""
    per_doc: dict[str, list[Fact]] = {}
    sums: dict[str | None, float] = {}
    for f in facts:
        per_doc.setdefault(f.doc_id, []).append(f)
        sums[f.unit] = sums.get(f.unit, 0.0) + (f.number or 0.0)
    n, label = len(per_doc), in_sentence(facts[0].predicate_label)
    among = (
        _among(a).removeprefix("of ")
        if a.named_set or a.kind_label
        else f"the {n} {plural(a.noun)}"
    )
    among += f" in {a.unit}" if a.unit else ""
    added = " and ".join(f"{_amount_text(v)}{unit_text(u)}" for u, v in sums.items())
    per = " (one sum per unit: none converts to another)" if len(sums) > 1 else ""
    text = f"The {plural(label)} of {among} add up to {added}{per}: {_listed(per_doc)}."
    cites = tuple(fs[0].evidence for fs in per_doc.values())
    return Composed(clip(text, limit), cites, True, False)


def _amount_text(value: float) -> str:
    """A sum as written: two decimals unless it is whole ("5687.63", "2258")."""
    return f"{value:.0f}" if value == int(value) else f"{value:.2f}"


def _loose_answer(a: QuestionAnalysis, per_doc: dict[str, list[Fact]], limit: int) -> Composed:
    """The members the set's noun calls ("the 8 sheets named 'cleaner'") first, then the
    other documents that state it too, said apart: names are a guess of what is one."""
    inside = {d: fs for d, fs in per_doc.items() if d in a.named_set}
    outside = {d: fs for d, fs in per_doc.items() if d not in a.named_set}
    what, n_in = _what(a, next(iter(per_doc.values()))), len(inside)
    if inside:
        text = f"{n_in} {_among(a)} {'states' if n_in == 1 else 'state'} {what}: {_listed(inside)}."
    else:
        text = f"None {_among(a)} states {what}."
    if outside:
        n_out = len(outside)
        others = f"{n_out} other {a.noun if n_out == 1 else plural(a.noun)}"
        text += f" {others} {'states' if n_out == 1 else 'state'} it too: {_listed(outside)}."
    cites = tuple(fs[0].evidence for fs in per_doc.values())
    return Composed(clip(text, limit), cites, True, False)


def _shown(a: QuestionAnalysis, facts: Sequence[Fact]) -> list[Fact]:
    """The facts as the answer's text shows them: of a value that states a concept
    inside a longer text (a list of hazard statements), the sentence that states it."""
    if not a.concepts:
        return list(facts)
    found = [
        (readers(c, a.concept_scheme), a.concept_codes[i] if i < len(a.concept_codes) else ())
        for i, c in enumerate(a.concepts)
    ]  # with the codes asked beside each: "Category 4" shows H302, not the H311 before it
    out: list[Fact] = []
    for f in facts:
        hit = next(
            (
                h
                for r, codes in found
                if (h := stated_at(r, predicate=f.predicate, value=f.value, codes=codes))
            ),
            None,
        )
        out.append(f.model_copy(update={"value": _sentence_at(f.value, hit[1])}) if hit else f)
    return out


_SENTENCE_END = re.compile(r"(?<=[.;])\s+|\n|\s{2,}")


def _sentence_at(text: str, at: int) -> str:
    """The sentence of ``text`` that holds offset ``at``."""
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.end() > at:
            return text[start : m.start()].strip()
        start = m.end()
    return text[start:].strip()


def _listed(per_doc: dict[str, list[Fact]]) -> str:
    """The first ``SHOWN`` members and how many more."""
    shown = list(per_doc.values())[:SHOWN]
    more = f"; and {len(per_doc) - len(shown)} more" if len(per_doc) > len(shown) else ""
    return "; ".join(_member(fs) for fs in shown) + more


def _among(a: QuestionAnalysis) -> str:
    """ "of the 12 sheets named 'zinc'", "of the 173 sheets whose physical state is
    liquid", "of the sheets that state 'flammable liquids' ...": the set the question is
    asked of."""
    if a.concepts and not (a.named_set or a.kind_label):
        return f"of the {plural(a.noun)} that state {_concept_said(a)}"
    if a.named_set:
        return f"of the {len(a.named_set)} {plural(a.noun)} {_called(a)}"
    kind = f"whose {in_sentence(a.kind_label or '')} is {a.kind_noun}"
    return f"of the {len(a.kind_set)} {plural(a.noun)} {kind}"


def _called(a: QuestionAnalysis) -> str:
    """How the named set's members are called: "named 'zinc'", or "named 'libman' or
    from 'libman'" when some are in it by their supplier's (source's) name."""
    named = f"named '{a.set_name}'"
    return f"{named} or from '{a.set_name}'" if a.set_by_source else named


def _besides(a: QuestionAnalysis) -> str:
    n, name = len(a.others_of), " ".join(a.other_name)
    return f" (besides the {n} {a.noun if n == 1 else plural(a.noun)} named '{name}')"


_PER_VALUE = 3
"""Documents a grouped answer's text names per value (``Answer.facts`` holds all)."""


def _per_value(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    """Each named document's value of the asked property, grouped when equal ("UN1170
    on 9 sheets: ...; UN1987 on 2 sheets: ..."), and how many state none."""
    valued = [p for p in a.properties if p.kind == "datatype"] or list(a.properties)
    label = in_sentence(valued[0].label) if valued else "value"  # not "supplied by"
    among = f"the {len(a.named_set)} {plural(a.noun)} {_called(a)}"
    first: dict[str, Fact] = {}
    for f in facts:
        if f.status == "stated":
            first.setdefault(f.doc_id, f)
    if not first:
        text = f"The {label} is not stated in {among}."
        return Composed(text, (), True, False, "not_in_documents")
    groups = _grouped(first.values(), lambda f: f.value)
    text = f"The {label} of {among}: " + ". ".join(_group(a, v, fs) for v, fs in groups) + "."
    if silent := len(a.named_set) - len(first):
        noun = a.noun if silent == 1 else plural(a.noun)
        text += f" {silent} {noun} {'does' if silent == 1 else 'do'} not state one."
    cites = tuple(f.evidence for f in first.values())
    return Composed(clip(text, limit), cites, True, False)


def _grouped(facts: Iterable[Fact], shown: Callable[[Fact], str]) -> list[tuple[str, list[Fact]]]:
    """``(value as shown, facts)`` per value, spelling apart (``shown``: the text a
    value is compared and shown by), most documents first; one fact per document and
    value."""
    groups: dict[str, tuple[str, list[Fact]]] = {}
    for f in facts:
        text = shown(f)
        _shown, fs = groups.setdefault(re.sub(r"\W+", "", text.casefold()), (text, []))
        if all(g.doc_id != f.doc_id for g in fs):
            fs.append(f)
    return sorted(groups.values(), key=lambda g: len(g[1]), reverse=True)


def _group(a: QuestionAnalysis, value: str, fs: Sequence[Fact]) -> str:
    """One value and the documents that state it ("UN1170 on 9 sheets: A; B; C; and 6
    more")."""
    noun = a.noun if len(fs) == 1 else plural(a.noun)
    names = "; ".join(f"{f.subject} {cite(f.evidence)}" for f in fs[:_PER_VALUE])
    more = f"; and {len(fs) - _PER_VALUE} more" if len(fs) > _PER_VALUE else ""
    return f"{clip(value, 120)} on {len(fs)} {noun}: {names}{more}"


def _distinct_answer(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    """The different values the documents state of the asked property, each with the
    documents that state it, most first ("47 different UN numbers on 224 sheets: UN1789
    on 9 sheets: ...")."""
    label = plural(in_sentence(a.properties[0].label))
    pattern = next((p for name, p in a.patterns if name == a.properties[0].name), None)

    def shown(f: Fact) -> str:
        m = re.search(pattern, f.value) if pattern else None
        return m.group(0) if m else f.value

    groups = _grouped(facts, shown)
    docs = len({f.doc_id for f in facts})
    head = f"{len(groups)} different {label} on {docs} {a.noun if docs == 1 else plural(a.noun)}"
    text = f"{head}: " + ". ".join(_group(a, v, fs) for v, fs in groups) + "."
    cites = tuple(fs[0].evidence for _v, fs in groups)
    return Composed(clip(text, limit), cites, True, False)


def _member(fs: Sequence[Fact]) -> str:
    """One member: its name, its values (not again when the value is its name), the
    citation."""
    values = [v for v in dict.fromkeys(clip(f.value, 120) for f in fs[:2]) if v != fs[0].subject]
    if not values:
        return f"{fs[0].subject} {cite(fs[0].evidence)}"
    return f"{fs[0].subject} ({', '.join(values)} {cite(fs[0].evidence)})"


_TIME_WORD = re.compile(r"(?:in|since|after|before|until|by|between|from)\b", re.I)
_AT_TIME = re.compile(r"^(?:of|from|dated|during|on)\s+", re.I)
_EXTREMES = {
    ("min", False): "lowest",
    ("max", False): "highest",
    ("min", True): "earliest",  # dates
    ("max", True): "latest",
}


def _what(a: QuestionAnalysis, facts: Sequence[Fact] = ()) -> str:
    """What the members state, each further constraint joined ("a revision date in 2024
    and 'un1789'")."""
    return " and ".join([_stated(a, facts), *(_constraint(x, facts) for x in a.also)])


def _constraint(x: QuestionAnalysis, facts: Sequence[Fact]) -> str:
    """What the members state by one further constraint (``QuestionAnalysis.also``)."""
    if not x.properties:  # an identifier, in any value
        return "'" + " ".join(w for w in question_codes(x.question) if identifier(w)) + "'"
    return _stated(x, [f for f in facts if f.predicate in _asked(x)])


def _asked(a: QuestionAnalysis) -> set[str]:
    return {p.name for p in a.properties}


def _stated(a: QuestionAnalysis, facts: Sequence[Fact] = ()) -> str:
    """What the members of one constraint state."""
    if a.concepts and a.threshold is None and a.period is None:
        return _concept_said(a)
    if a.period is not None:
        dates = [p for p in a.properties if p.name in a.typed]
        label = in_sentence(dates[0].label) if dates else "date"
        said = _AT_TIME.sub("", a.period.said)  # "dated December 2021": in it
        said = said if _TIME_WORD.match(said) else f"in {said}"
        return f"{'an' if label[:1] in 'aeiou' else 'a'} {label} {said}"
    if a.coded is not None:
        label = next((p.label for p in a.properties if p.name == a.coded[0]), "value")
        return f"the {in_sentence(label)} {' or '.join(a.coded[1])}"
    if stating(a) and a.properties:
        label = in_sentence(next(p.label for p in a.properties if p.name in stated_props(a)))
        article = "an" if label[:1] in "aeiou" else "a"
        none = _NEGATION.search(a.question)
        return f"no {label} (none or not applicable)" if none else f"{article} {label}"
    if a.threshold is not None and a.properties:
        return f"{with_article(in_sentence(a.properties[0].label))} {a.threshold.said()}"
    values = [_words(f.value) for f in facts]
    phrases = [w for w, _whole in asked_phrases(a, a.kind_words)]
    held = [
        w
        for w in phrases
        if any(
            all(word_key(x) in v or code(x) for x in w if stem(x) not in a.vocabulary)
            for v in values
        )
    ]
    codes = question_codes(a.question)
    if not held and codes and facts:  # matched by the asked property's code alone
        return f"the {in_sentence(facts[0].predicate_label)} {' '.join(codes)}"
    shown = max(held, key=len) if held else (phrases[0] if phrases else ())
    return "'" + _negated(a.question, " ".join(shown)) + "'" if shown else "what was asked"


def _negated(question: str, phrase: str) -> str:
    """``phrase`` with the negation the question puts right before it ("not regulated
    for transport": 'not regulated', not 'regulated')."""
    first = phrase.split()[0] if phrase else ""
    m = re.search(rf"\b(not|no|non)[\s-]+{re.escape(first)}\b", question, re.I)
    return f"{m.group(1).lower()} {phrase}" if m and first else phrase


def _concept_said(a: QuestionAnalysis) -> str:
    """The concepts as asked, the codes given beside them, and what they were read as
    (the narrowest of those that hold one another): "'corrosive', read as GHS skin
    corrosion (Category 1, 1A, 1B or 1C) or corrosive to metals (Category 1)"."""
    negated = a.concept_negated or (False,) * len(a.concepts)
    said = " and ".join(
        dict.fromkeys(
            f"not '{w}'" if no else f"'{w}'" for w, no in zip(a.concept_words, negated, strict=True)
        )
    )
    codes = [c.upper() for cs in a.concept_codes for c in cs]
    if codes:
        said += f" of category {' or '.join(dict.fromkeys(codes))}"
    meant = [
        ("not " if no else "") + (c.definition or c.label)
        for c, no in zip(a.concepts, negated, strict=True)
        if not any(o != c and holds(c, o, a.concept_scheme) for o in a.concepts)
    ]
    said = f"{said}, read as {' and '.join(dict.fromkeys(meant))}" if meant else said
    return f"{said}, and {_what(without_concepts(a))}" if a.concept_combined else said


def _clauses(value: str) -> list[str]:
    return [c for c, _words in _read(value)]


@lru_cache(maxsize=65536)
def _read(value: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """A value's short clauses with their word keys (values repeat across documents).
    Numbers do not make a clause long: a table row ("Sodium Laureth Sulfate 5-7%
    9004-82-4 252-104-2 Eye Irritation Cat 2") is short in words."""
    out = []
    for c in _CLAUSE.split(value):
        toks = tokens(c) if c else []
        if toks and sum(1 for t in toks if not t[:1].isdigit()) <= MAX_CLAUSE:
            out.append((c, frozenset(word_key(t) for t in toks)))
    return tuple(out)


def _words(clause: str) -> frozenset[str]:
    return frozenset(word_key(t) for t in tokens(clause))
