"""Concepts a question asks for, and the values that state them.

An ontology may name values that documents print in many ways (``ConceptDef``: a
``skos:Concept`` with the patterns it is printed by): a hazard class, a payment method, a
product category. A question asks for one by any of its labels ("Which products are
corrosive?", "skin irritants"), matched on word keys (``word_key``: "irritants" is
"irritant", "sensitisers" "sensitizer"), the longest label first. A value states a
concept when one of the concept's patterns (or a narrower concept's) is printed in it,
in a value of the concept's properties, and, where the concept lists categories, the code
printed right after the pattern (a word such as "Category" between; or right before it
when none follows) is one of them. A code the question gives beside the concept ("Flammable
Liquids Category 2", "Category 1 or 2") must be that code too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from hybrid_rag.text import STOPWORDS, tokens, word_key
from hybrid_rag.types import ConceptDef, Ontology, OntologyConcepts

__all__ = [
    "CODE_LEADS",
    "ConceptLink",
    "concepts_of",
    "holds",
    "holds_codes",
    "link_concepts",
    "printed_code",
    "properties_read",
    "read_by",
    "readers",
    "stated_at",
    "stated_by",
    "stating",
]

_SMALL = STOPWORDS - {"may", "might", "can", "will", "should", "must", "not", "no", "very"}
"""Words a concept's label is matched across: not those of possibility, denial or degree
("May cause damage to organs" is not "Causes damage to organs", "Very toxic to aquatic
life" is not "Toxic to aquatic life")."""

MAX_LABEL_WORDS = 8
"""The longest concept label, in words, a question is matched against."""


@dataclass(frozen=True, slots=True)
class ConceptLink:
    """A concept a question names: which, by which words, with which codes beside it."""

    concept: ConceptDef
    words: tuple[str, ...]
    codes: tuple[str, ...]
    negated: bool = False


def concepts_of(ontology: Ontology) -> tuple[ConceptDef, ...]:
    """The ontology's concepts, each with the patterns it is read by (its own, else, when
    it lists categories, its nearest broader concept's: a narrower concept may only
    narrow the categories, "fatal if swallowed" is acute oral toxicity of category 1 or
    2) and the properties it is read in (its own, else its nearest broader concept's);
    of those, the ones
    that can be read in values (a pattern of their own or of a narrower concept); ``()``
    for an ontology that names none."""
    if not isinstance(ontology, OntologyConcepts):
        return ()
    return _readable(tuple(ontology.concepts()))


@lru_cache(maxsize=8)
def _readable(every: tuple[ConceptDef, ...]) -> tuple[ConceptDef, ...]:
    parents: dict[str, list[ConceptDef]] = {}
    for c in every:
        for n in c.narrower:
            parents.setdefault(n, []).append(c)

    def patterns(c: ConceptDef, seen: frozenset[str]) -> tuple[str, ...]:
        if c.patterns or c.name in seen:
            return c.patterns
        up = (patterns(p, seen | {c.name}) for p in parents.get(c.name, []))
        return next((found for found in up if found), ())

    def props(c: ConceptDef, seen: frozenset[str]) -> tuple[str, ...]:
        if c.properties or c.name in seen:
            return c.properties
        up = (props(p, seen | {c.name}) for p in parents.get(c.name, []))
        return next((found for found in up if found), ())

    full = tuple(
        replace(
            c,
            patterns=c.patterns or (patterns(c, frozenset()) if c.categories else ()),
            properties=props(c, frozenset()),
        )
        for c in every
    )
    return tuple(c for c in full if any(d.patterns for d in _closure(c, full)))


def link_concepts(question: str, concepts: Sequence[ConceptDef]) -> tuple[ConceptLink, ...]:
    """The concepts ``question`` names, in its order: at each word the longest label
    that starts there (every concept with that label), then on after it. Small words
    ("the"), codes and the words that lead them ("Category") may come between a
    label's words ("Acute Toxicity Category 4 (oral)" is acute oral toxicity of
    category 4); a label right after "not" or "non" is negated."""
    if not concepts:
        return ()
    index = _label_index(tuple(concepts))
    toks = tokens(question)
    at = [
        i
        for i, t in enumerate(toks)
        if t not in _SMALL and t not in CODE_LEADS and not _SHORT_CODE.fullmatch(t)
    ]
    keys = [word_key(toks[i]) for i in at]
    found: list[ConceptLink] = []
    i = 0
    while i < len(keys):
        size = next(
            (n for n in range(min(MAX_LABEL_WORDS, len(keys) - i), 0, -1)
             if tuple(keys[i : i + n]) in index),
            0,
        )  # fmt: skip
        if not size:
            i += 1
            continue
        start, end = at[i], at[i + size - 1] + 1
        inside = tuple(t for t in toks[start:end] if _SHORT_CODE.fullmatch(t))
        codes = inside + _codes_after(toks, end) or _code_before(toks, start)
        negated = _NEGATING.search(" ".join(toks[max(0, start - 3) : start])) is not None
        found += [
            ConceptLink(c, tuple(toks[start:end]), codes, negated)
            for c in index[tuple(keys[i : i + size])]
        ]
        i += size
    return tuple(found)


_NEGATING = re.compile(
    r"\b(?:not|non|no|without|nor)"
    r"(?:\s+(?:\w+ly|an?|as|classified|rated|labell?ed|considered))*$"
)
"""Words right before a concept's label that deny it ("not corrosive", "non-flammable",
"not classified as toxic")."""


@lru_cache(maxsize=8)
def _label_index(concepts: tuple[ConceptDef, ...]) -> dict[tuple[str, ...], list[ConceptDef]]:
    index: dict[tuple[str, ...], list[ConceptDef]] = {}
    for c in concepts:
        for label in c.labels:
            key = tuple(word_key(t) for t in tokens(label) if t not in _SMALL)
            if key and len(key) <= MAX_LABEL_WORDS and c not in index.setdefault(key, []):
                index[key].append(c)
    return index


_SHORT_CODE = re.compile(r"\d{1,2}(?:\.\d)?[a-c]?")
CODE_LEADS = frozenset(["category", "cat", "class", "division", "type", "group", "level"])
"""Words that lead a code beside a concept ("Category 2")."""
_CODE_JOIN = frozenset(["or", "and"])


def _codes_after(toks: Sequence[str], at: int) -> tuple[str, ...]:
    """The short codes right after a concept's words ("category 1 or 2", "(1B)"); a
    word that leads a code may come between."""
    codes: list[str] = []
    i = at
    while i < len(toks) and toks[i] in STOPWORDS and i < at + 2:  # "of category 1"
        i += 1
    if i < len(toks) and toks[i] in CODE_LEADS:
        i += 1
    while i < len(toks) and _SHORT_CODE.fullmatch(toks[i]):
        codes.append(toks[i])
        if i + 2 < len(toks) and toks[i + 1] in _CODE_JOIN and _SHORT_CODE.fullmatch(toks[i + 2]):
            i += 2
            continue
        break
    return tuple(codes)


def _code_before(toks: Sequence[str], at: int) -> tuple[str, ...]:
    """A short code right before a concept's words ("a 6.1 poison label")."""
    if at >= 1 and _SHORT_CODE.fullmatch(toks[at - 1]):
        return (toks[at - 1],)
    return ()


def stating(
    concept: ConceptDef,
    every: Sequence[ConceptDef],
    *,
    predicate: str,
    value: str,
    codes: Sequence[str] = (),
) -> bool:
    """Whether a value of ``predicate`` states ``concept`` or a narrower one (see the
    module docstring); ``codes``: those the question gives beside it."""
    return stated_by(concept, every, predicate=predicate, value=value, codes=codes) is not None


def stated_by(
    concept: ConceptDef,
    every: Sequence[ConceptDef],
    *,
    predicate: str,
    value: str,
    codes: Sequence[str] = (),
) -> int | None:
    """How directly a value states ``concept`` (``stating``): 0 by a pattern and the
    code printed with it, 1 by a pattern that states its category by itself (a
    statement code); ``None`` when it does not."""
    return read_by(readers(concept, every), predicate=predicate, value=value, codes=codes)


Readers = tuple[tuple[ConceptDef, frozenset[str]], ...]
"""A concept and its narrower ones that have patterns, each with the properties it is
read in (``readers``)."""


def readers(concept: ConceptDef, every: Sequence[ConceptDef]) -> Readers:
    """What reads a concept in values: it and its narrower concepts that have patterns,
    each with its properties (work this out once per question, then ``read_by``)."""
    return _readers(concept, tuple(every))


def read_by(found: Readers, *, predicate: str, value: str, codes: Sequence[str] = ()) -> int | None:
    """``stated_by`` with the concept's ``readers`` worked out."""
    hit = stated_at(found, predicate=predicate, value=value, codes=codes)
    return None if hit is None else hit[0]


def stated_at(
    found: Readers, *, predicate: str, value: str, codes: Sequence[str] = ()
) -> tuple[int, int, int] | None:
    """``(rank, start, end)``: how directly a value states the concept (``stated_by``)
    and where, the most direct first; ``None`` when it does not."""
    wanted = {_plain(c) for c in codes}
    best: tuple[int, int, int] | None = None
    for c, props in found:
        if props and predicate not in props:
            continue
        allowed = {_plain(x) for x in c.categories}
        for pattern in _compiled(c.patterns):
            for m in pattern.finditer(value):
                stated: list[str | None] = [_plain(x) for x in c.stated_categories]
                said = stated or [printed_code(value, m.start(), m.end())]
                if allowed and not all(any(_within(x, al) for al in allowed) for x in said):
                    continue
                if wanted and not all(any(_within(x, w) for w in wanted) for x in said):
                    continue
                if not stated:
                    return 0, m.start(), m.end()
                best = best or (1, m.start(), m.end())
    return best


def _within(code: str | None, wanted: str) -> bool:
    """Whether a printed code is the asked one or one of its sub-categories ("1B" of
    "Category 1")."""
    if code is None:
        return False
    return code == wanted or (code.startswith(wanted) and code[len(wanted) :].isalpha())


@lru_cache(maxsize=1024)
def _readers(
    concept: ConceptDef, every: tuple[ConceptDef, ...]
) -> tuple[tuple[ConceptDef, frozenset[str]], ...]:
    """The concept and its narrower ones that have patterns, each with the properties it
    is read in (its own, else the nearest broader concept's)."""
    by_name = {c.name: c for c in every}
    out: list[tuple[ConceptDef, frozenset[str]]] = []
    seen: set[str] = set()
    todo = [(concept, frozenset(concept.properties))]
    while todo:
        c, inherited = todo.pop(0)
        if c.name in seen:
            continue
        seen.add(c.name)
        props = frozenset(c.properties) or inherited
        if c.patterns:
            out.append((c, props))
        todo += [(by_name[n], props) for n in c.narrower if n in by_name]
    return tuple(out)


def holds_codes(concept: ConceptDef, every: Sequence[ConceptDef], codes: Sequence[str]) -> bool:
    """Whether the concept (or a narrower one) has every code as a category, or takes
    any code; codes it has no category for ("class 5.1" beside "oxidizing") mean the
    words name something else (a transport class, not the hazard class)."""
    cats: set[str] = set()
    for c, _props in _readers(concept, tuple(every)):
        if not (c.categories or c.stated_categories):
            return True
        cats |= {_plain(x) for x in (*c.categories, *c.stated_categories)}
    return all(any(_within(cat, _plain(code)) for cat in cats) for code in codes)


def holds(broader: ConceptDef, narrower: ConceptDef, every: Sequence[ConceptDef]) -> bool:
    """Whether ``narrower`` is ``broader`` or one of its narrower concepts."""
    return narrower in _closure(broader, every)


def properties_read(concept: ConceptDef, every: Sequence[ConceptDef]) -> frozenset[str]:
    """The properties a concept is read in (its narrower ones' too); empty: any."""
    found = [props for _c, props in _readers(concept, tuple(every))]
    return frozenset() if any(not p for p in found) else frozenset().union(*found)


def _closure(concept: ConceptDef, every: Sequence[ConceptDef]) -> list[ConceptDef]:
    by_name = {c.name: c for c in every}
    out: list[ConceptDef] = []
    todo = [concept]
    while todo:
        c = todo.pop()
        if c in out:
            continue
        out.append(c)
        todo += [by_name[n] for n in c.narrower if n in by_name]
    return out


@lru_cache(maxsize=1024)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.I) for p in patterns)


_AFTER = re.compile(
    r"[^\w;]{0,4}(?:[A-Za-z]{1,12}\.?[^\w;]{1,4}){0,3}?"
    r"(\d{1,2}(?:\.\d)?)(?:\s{0,2}([A-Ca-c])(?![a-z]))?(?![\d.,]?\d)"
)
_BEFORE = re.compile(r"(?<![\w.])(\d{1,2}(?:\.\d)?)\s?([A-Ca-c])?[^\w;]{0,3}$")


def printed_code(value: str, start: int, end: int) -> str | None:
    """The code printed right after ``value[start:end]`` (at most three words between:
    "Category 1B", ": Category 1 B", "(Category 2)"), else right before it ("Category
    2ASerious eye damage"), lower case without spaces; ``None`` when there is none."""
    m = _AFTER.match(value, end)
    if m is None:
        m = _BEFORE.search(value[max(0, start - 16) : start])
    if m is None:
        return None
    return (m.group(1) + (m.group(2) or "")).lower()


def _plain(code: str) -> str:
    return re.sub(r"\s+", "", code).lower()
