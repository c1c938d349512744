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
from collections.abc import Sequence
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
from hybrid_rag.ask._phrasing import Composed, cite, clip, in_sentence, plural, unit_text
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.ask.grammar import Threshold
from hybrid_rag.models import Fact
from hybrid_rag.text import participle, stem, tokens, word_key

__all__ = [
    "MAX_CLAUSE",
    "SHOWN",
    "Valued",
    "asked_phrases",
    "by_phrase",
    "checks_codes",
    "collection_answer",
    "members",
    "phrase_members",
    "with_every_code",
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
    if a.threshold is not None or a.intent in ("min", "max"):
        return _typed_members(a, stated)
    if a.period is not None:
        return _dated_members(a, stated)
    if a.named_set and not collection_phrases(a.question, a.kind_words):
        return _named_members(a, stated)
    found = phrase_members(a, stated)
    return with_every_code(a, found, stated) if checks_codes(a) else found


def by_phrase(a: QuestionAnalysis) -> bool:
    """Whether ``members`` reads the question's phrases in the values (``phrase_members``)
    rather than a lookup of a named set, a bound, an extreme, a span of dates or the
    names of a set."""
    if a.intent == "lookup" and a.named_set:
        return False
    if a.threshold is not None or a.intent in ("min", "max") or a.period is not None:
        return False
    return not (a.named_set and not collection_phrases(a.question, a.kind_words))


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
    return found


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
    """Each document's first stated number; a value printed as a bound ("> 200 °C") is
    a member only where the bound decides: above 1500 for "> 1500", never below."""
    first: dict[str, V] = {}
    for f in facts:
        if f.number is not None:
            first.setdefault(f.doc_id, f)
    if a.threshold is not None:
        bound = a.threshold
        return [f for f in first.values() if _passes(f, bound)]
    points = [f for f in first.values() if _qualifier(f.value) is None]
    units = {f.unit for f in points}
    if len(units) != 1:
        return []  # no order across units
    best = (min if a.intent == "min" else max)(f.number or 0.0 for f in points)
    return [f for f in points if f.number == best]


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
    if side is not None and side != bound.op:
        return False
    if bound.unit and not _same_unit(bound.unit, f):
        return False
    return bound.holds(f.number or 0.0, unit=f.unit)


def _same_unit(asked: str, f: Valued) -> bool:
    """Whether a value is in the bound's unit: its typed unit, or else the unit printed
    in its text ("12.5 kg")."""
    want = _plain_unit(asked)
    if want in ("°c", "°f"):
        return f.unit in ("°C", "°F")
    if f.unit is not None:
        return _plain_unit(f.unit) == want
    printed = _superscripts_as_digits(f.value.lower())
    return re.search(rf"(?<![a-z]){re.escape(want)}(?![a-z])", printed) is not None


def _plain_unit(text: str) -> str:
    """A unit as compared: no spaces, lower case, superscripts as digits (g/cm³ = g/cm3)."""
    return _superscripts_as_digits(text.replace(" ", "").lower())


def _superscripts_as_digits(text: str) -> str:
    return text.replace("³", "3").replace("²", "2")


def _prints(clause: str, patterns: Sequence[re.Pattern[str]]) -> bool:
    return all(p.search(clause) for p in patterns)


def collection_answer(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    """The count, then the members with their values and citations."""
    if a.intent == "lookup" and a.named_set:
        return _per_value(a, facts, limit)
    per_doc: dict[str, list[Fact]] = {}
    for f in facts:
        per_doc.setdefault(f.doc_id, []).append(f)
    n = len(per_doc)
    noun = a.noun if n == 1 else plural(a.noun)
    if a.set_loose and per_doc and collection_phrases(a.question, a.kind_words):
        return _loose_answer(a, per_doc, limit)
    if not per_doc:
        text = (
            f"None {_among(a)} states {_what(a)}."
            if a.named_set or a.kind_label
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
        head = f"The {word} {label} any {a.noun} states"
        head = f"The {word} {label} {_among(a)}" if a.kind_label or a.named_set else head
        text = f"{head}: {items}."
    elif a.named_set and not collection_phrases(a.question, a.kind_words) and not a.threshold:
        text = f"{n} {noun} {'is' if n == 1 else 'are'} {_called(a)}: {items}."
    elif a.named_set or a.kind_label:
        text = f"{n} {_among(a)} {verb} {_what(a, facts)}: {items}."
    elif a.others_of:
        text = f"{n} other {noun} {verb} {_what(a, facts)}{_besides(a)}: {items}."
    else:
        text = f"{n} {noun} {verb} {_what(a, facts)}: {items}."
    cites = tuple(fs[0].evidence for _d, fs in per_doc.items())
    return Composed(clip(text, limit), cites, True, False)


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


def _listed(per_doc: dict[str, list[Fact]]) -> str:
    """The first ``SHOWN`` members and how many more."""
    shown = list(per_doc.values())[:SHOWN]
    more = f"; and {len(per_doc) - len(shown)} more" if len(per_doc) > len(shown) else ""
    return "; ".join(_member(fs) for fs in shown) + more


def _among(a: QuestionAnalysis) -> str:
    """ "of the 12 sheets named 'zinc'", "of the 173 sheets whose physical state is
    liquid": the set the question is asked of."""
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
    label = in_sentence(a.properties[0].label) if a.properties else "value"
    among = f"the {len(a.named_set)} {plural(a.noun)} {_called(a)}"
    first: dict[str, Fact] = {}
    for f in facts:
        if f.status == "stated":
            first.setdefault(f.doc_id, f)
    if not first:
        text = f"The {label} is not stated in {among}."
        return Composed(text, (), True, False, "not_in_documents")
    groups: dict[str, list[Fact]] = {}
    for f in first.values():
        groups.setdefault(re.sub(r"\W+", "", f.value.casefold()), []).append(f)
    parts = []
    for fs in sorted(groups.values(), key=len, reverse=True):
        noun = a.noun if len(fs) == 1 else plural(a.noun)
        names = "; ".join(f"{f.subject} {cite(f.evidence)}" for f in fs[:_PER_VALUE])
        more = f"; and {len(fs) - _PER_VALUE} more" if len(fs) > _PER_VALUE else ""
        parts.append(f"{clip(fs[0].value, 120)} on {len(fs)} {noun}: {names}{more}")
    text = f"The {label} of {among}: " + ". ".join(parts) + "."
    if silent := len(a.named_set) - len(first):
        noun = a.noun if silent == 1 else plural(a.noun)
        text += f" {silent} {noun} {'does' if silent == 1 else 'do'} not state one."
    cites = tuple(f.evidence for f in first.values())
    return Composed(clip(text, limit), cites, True, False)


def _member(fs: Sequence[Fact]) -> str:
    """One member: its name, its values (not again when the value is its name), the
    citation."""
    values = [v for v in dict.fromkeys(clip(f.value, 120) for f in fs[:2]) if v != fs[0].subject]
    if not values:
        return f"{fs[0].subject} {cite(fs[0].evidence)}"
    return f"{fs[0].subject} ({', '.join(values)} {cite(fs[0].evidence)})"


_TIME_WORD = re.compile(r"(?:in|since|after|before|until|by)\b", re.I)
_AT_TIME = re.compile(r"^(?:of|from|dated|during|on)\s+", re.I)
_EXTREMES = {
    ("min", False): "lowest",
    ("max", False): "highest",
    ("min", True): "earliest",  # dates
    ("max", True): "latest",
}


def _what(a: QuestionAnalysis, facts: Sequence[Fact] = ()) -> str:
    if a.period is not None:
        dates = [p for p in a.properties if p.name in a.typed]
        label = in_sentence(dates[0].label) if dates else "date"
        said = _AT_TIME.sub("", a.period.said)  # "dated December 2021": in it
        said = said if _TIME_WORD.match(said) else f"in {said}"
        return f"{'an' if label[:1] in 'aeiou' else 'a'} {label} {said}"
    if a.threshold is not None and a.properties:
        t = a.threshold
        said = f"{'above' if t.op == '>' else 'below'} {t.value:g}{unit_text(t.unit)}"
        return f"a {in_sentence(a.properties[0].label)} {said}"
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
    return "'" + " ".join(shown) + "'" if shown else "what was asked"


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
