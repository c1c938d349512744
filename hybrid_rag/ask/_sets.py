"""The set a collection question asks over: documents a name many of them share ("How
many zinc compounds ...?", "What is the UN number for ethanol?"), and the span of time
it bounds a date by ("revised in 2023")."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hybrid_rag.ask._collection_words import generic
from hybrid_rag.ask.grammar import DateSpan, date_span, main_clause
from hybrid_rag.ask.linking import SubjectIndex, SubjectMatch
from hybrid_rag.text import tokens
from hybrid_rag.types import Ontology, OntologyMatching, PropertyDef

__all__ = [
    "NamedSet",
    "kind_predicate",
    "named_set",
    "namesakes",
    "noun_set",
    "period_of",
    "set_cue",
    "set_noun",
    "shared_name",
    "unlinked_namesakes",
]

NamedSet = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""``(name words, kind words, documents)``: the set's name as asked ("zinc"), the words
that say what kind its members are ("compounds"), the documents whose names, or whose
sources' names (a supplier's: ``SubjectIndex.supplied``), hold it."""


_SET_CUE = re.compile(
    r"^\s*(?:(?:for|in|of|from)\s+)?(?:which|how\s+many|list|count|find|name|show"
    r"|what\s+is\s+the\s+(?:number|count)\s+of)\s+(?:(?:of\s+)?(?:our|my|the|all|every|any)\s+)?"
    r"(.*)$",
    re.I | re.S,
)


_CLITIC = re.compile(r"(?<=[A-Za-z])['\u2019]s\b")
"""A clitic "'s" ("What's", "ethanol's"): "is" or a possessive, never a name's word."""


def _words(text: str) -> list[str]:
    """The tokens of ``text`` without its clitic "'s" (``tokens`` reads "What's" as
    "what", "s")."""
    return tokens(_CLITIC.sub(" ", text))


_AMONG = re.compile(r"^\s*(?:among|of|from)\s+(?:the|our|my|all)\s+(.*)$", re.I | re.S)
"""A set named before the question: "Among the phosphoric acid solutions, which ..."."""


def set_cue(question: str, subjects: Sequence[SubjectMatch]) -> bool:
    """Whether the question asks over a set ("How many ...", "Which ...", "Among the
    ..., which ...") and names at most one thing (two are a comparison: "Which is
    denser, A or B?")."""
    if _AMONG.match(question):
        return True
    return len({m.matched for m in subjects}) <= 1 and bool(_SET_CUE.match(main_clause(question)))


def named_set(question: str, index: SubjectIndex, kinds: frozenset[str]) -> NamedSet | None:
    """``(name, kind, documents)`` when the question asks over the documents a name
    many of them share: its set is "<name> <plural noun>" ("zinc compounds", "sodium
    thiosulfate sheets", "Acme invoices") and two or more documents' names hold the
    name's words in a row; the longest such name wins. ``None`` otherwise.
    """
    m = _AMONG.match(question) or _SET_CUE.match(main_clause(question))
    if m is None:
        return None
    toks = _words(m.group(1))[:7]
    while toks and generic(toks[0]):
        toks.pop(0)  # "How many different cobalt salts"
    acronyms = {w.lower() for w in re.findall(r"\b[A-Z]{2,}s\b", question)}  # "SDSs"
    head = next((i for i, t in enumerate(toks) if t in acronyms or _plural(t, kinds)), 0)
    for i in range(head, 0, -1):
        name = toks[:i]
        if any(generic(t) or t in kinds for t in name) or not any(t.isalpha() for t in name):
            continue
        if any(generic(t) for t in toks[i:head]):
            break  # "from Libman are eye irritants": a verb, no "<name> <noun>"
        docs = _called(index, name)
        if len(docs) >= 2:
            kind = toks[i : head + 1] + _apposition(m.group(1), toks[head])
            return tuple(name), tuple(kind), tuple(docs)
    nouns = {t for t in _words(m.group(1)) if t in acronyms or t in kinds or _plural(t, kinds)}
    if (source := _by_source(_words(m.group(1))[:12], nouns, index)) is not None:
        return source
    return _named_by_noun(toks, index, kinds)


_MADE = frozenset(
    [
        "made",
        "manufactured",
        "produced",
        "supplied",
        "sold",
        "distributed",
        "issued",
        "shipped",
        "sent",
        "billed",
    ]
)
_BY = frozenset(["by", "from"])


def _by_source(toks: Sequence[str], nouns: set[str], index: SubjectIndex) -> NamedSet | None:
    """The set "<noun> [made] by|from <name>" calls ("products made by Libman", "invoices
    from Coolblue"): the documents whose source's name holds the name (one is a set
    too), else two or more whose own names hold it; the longest name wins."""
    for j, t in enumerate(toks[:6]):
        made = j >= 2 and toks[j - 1] in _MADE
        noun = toks[j - 2] if made else toks[j - 1] if j >= 1 else ""
        if t in _BY and noun in nouns:
            return _source_set(toks[j + 1 : j + 6], noun, index)
    return None


def _source_set(after: Sequence[str], noun: str, index: SubjectIndex) -> NamedSet | None:
    words: list[str] = []
    for t in after:
        if (generic(t) and t != "the") or not any(c.isalnum() for c in t):
            break
        if t != "the" or words:
            words.append(t)
    for n in range(len(words), 0, -1):
        name = words[:n]
        docs = _called(index, name)
        if index.supplied(name) or len(docs) >= 2:
            return tuple(name), (noun,), tuple(docs)
    return None


def _named_by_noun(
    toks: Sequence[str], index: SubjectIndex, kinds: frozenset[str]
) -> NamedSet | None:
    """The set a plural noun alone calls, when two or more documents' names hold it
    ("Which acids ...?": the sheets named "... Acid ..."; not "products", a kind word)."""
    if not toks or not _plural(toks[0], kinds) or toks[0] in kinds or toks[0][:-1] in kinds:
        return None
    docs = _called(index, toks[:1])
    return ((toks[0][:-1],), (toks[0],), tuple(docs)) if len(docs) >= 2 else None


def noun_set(named: NamedSet) -> bool:
    """Whether a set is one a plural noun alone calls ("acids": ``_named_by_noun``)."""
    name, kind, _docs = named
    return len(name) == 1 and kind == (name[0] + "s",)


def namesakes(
    question: str, subjects: Sequence[SubjectMatch], index: SubjectIndex
) -> NamedSet | None:
    """The documents whose names hold the one name the question gives, when two or more
    do ("the most recently revised sodium hydroxide sheet": which of the sheets named
    so); ``None`` for no name, two names, or a name one document has."""
    if len({m.matched for m in subjects}) != 1:
        return None
    said = subjects[0].matched
    words = [t for t in dict.fromkeys(_words(question)) if t in said]
    docs = _called(index, words)
    return (tuple(words), (), tuple(docs)) if len(docs) >= 2 else None


def unlinked_namesakes(
    question: str, subjects: Sequence[SubjectMatch], index: SubjectIndex, skip: frozenset[str]
) -> NamedSet | None:
    """Every document whose own (first) name opens with the one name a lookup gives, when
    the documents it linked are not those: more share the name ("hydrofluoric acid":
    two sheets, one linked), or some were linked by an alias in index form ("Sulfuric
    acid, disodium salt" of sodium sulfate); ``None`` when the question names more
    than the name ("sugar of lead" is no "lead"; ``skip``: the asked properties' words)
    or when one document or none holds it."""
    found = namesakes(question, subjects, index)
    if found is None or _modified(question, found[0], skip):
        return None
    n = len(found[0])  # its own name opens with it: "Salicylic Acid in Acetone" is no acetone
    own = [d for d in found[2] if tokens(index.label_of(d) or "")[:n] == list(found[0])]
    if len(own) < 2 or set(own) == {m.doc_id for m in subjects}:
        return None
    return None if _other_name(question, skip | set(found[0])) else (found[0], (), tuple(own))


def _modified(question: str, name: Sequence[str], skip: frozenset[str]) -> bool:
    """Whether a content word stands right before or after ``name`` in the question, or
    before "of" ahead of it ("sugar of lead"): it names something more specific."""
    toks = _words(main_clause(question))
    n = len(name)
    at = next((i for i in range(len(toks) - n + 1) if toks[i : i + n] == list(name)), None)
    if at is None:
        return False
    around = [toks[at - 1] if at else "", toks[at + n] if at + n < len(toks) else ""]
    if at >= 2 and toks[at - 1] == "of":
        around.append(toks[at - 2])
    return any(w.isalpha() and w not in skip and not generic(w) for w in around)


def set_noun(question: str, kinds: frozenset[str]) -> str | None:
    """The noun a collection question's set opens with ("liquids" of "Which liquids have
    a density under 0.7?", "liquid" of "Which liquid has the highest boiling point?"),
    that follows "of our" or "of any" ("the lowest flash point of our liquids", "the
    highest melting point of any solid"), or that "the ... with the" says ("the liquid
    with the lowest flash point"), when it is no kind word of the ontology (not
    "products", "sheets"); ``None`` otherwise. Whether a document's kind holds it is
    the store's to say (``kg.of_kind``)."""
    m = _AMONG.match(question) or _SET_CUE.match(main_clause(question))
    found = (m, _OF_OURS.search(question), _WITH_THE.search(question))
    nouns = (_first_noun(f.group(1), kinds) for f in found if f is not None)
    return next((n for n in nouns if n is not None), None)


_PREDICATE = re.compile(r"\b(?:are|is)\s+(?:all\s+)?([a-z][a-z-]+)\s*[?.!]*\s*$", re.I)


def kind_predicate(question: str, kinds: frozenset[str]) -> str | None:
    """The plural noun a collection question ends on after "are" ("Which Libman
    products are liquids?"), when it is no kind word of the ontology: a kind the
    documents may be of (``kg.of_kind`` decides); ``None`` otherwise."""
    m = _PREDICATE.search(main_clause(question))
    word = m.group(1).lower() if m else ""
    if not _plural(word, kinds) or word in kinds or word[:-1] in kinds or generic(word):
        return None
    return word


def _first_noun(text: str, kinds: frozenset[str]) -> str | None:
    """The first word of ``text`` past the generic ones when it is a plural noun and no
    kind word; or its very first word, a singular ("liquid has ...")."""
    words = _words(text)[:4]
    toks = [t for t in words if not generic(t)]
    if not toks or toks[0] in kinds or toks[0][:-1] in kinds:
        return None
    plural = _plural(toks[0], kinds)
    return toks[0] if plural or (toks[0] == words[0] and _singular(toks[0])) else None


_OF_OURS = re.compile(r"\b(?:of|among)\s+(?:our|my|any|all\s+(?:our|my|the))\s+(\w+)", re.I)
_WITH_THE = re.compile(r"\bthe\s+(\w+)\s+(?:with|having|that\s+has)\s+the\b", re.I)


def _singular(word: str) -> bool:
    """Whether the first word of a set may be a singular noun that calls it ("liquid" of
    "Which liquid has ...?"): letters, four or more."""
    return word.isalpha() and len(word) >= 4


def shared_name(question: str, index: SubjectIndex, skip: frozenset[str]) -> NamedSet | None:
    """``(name, (), documents)`` for a lookup that links no document but whose name two
    or more documents' names hold ("What is the UN number for ethanol?"): the longest
    run of the question's words, outside the asked properties' labels, that some
    document's name holds; ``None`` when that run names one document only, or when the
    question also gives a name of its own outside it ("What percentage of phosphoric
    acid does ACIDULANT 35005*86*01B contain?" asks about one product, by a name no
    document was linked by)."""
    runs: list[list[str]] = [[]]
    for t in _words(main_clause(question)):
        if generic(t) or t in skip or not t.isalpha():
            runs.append([])
        else:
            runs[-1].append(t)
    spans = [r[i:j] for r in runs for i in range(len(r)) for j in range(i + 1, len(r) + 1)]
    for span in sorted(spans, key=len, reverse=True):
        docs = _called(index, span)
        if not docs:
            continue
        if len(docs) < 2 or _other_name(question, skip | set(span)):
            return None
        if (head := _of_head(question, span, skip)) and not _called(index, [head, *span]):
            return None  # "sugar of lead" names no lead document: a name none prints
        return tuple(span), (), tuple(docs)
    return None


def _of_head(question: str, span: Sequence[str], skip: frozenset[str]) -> str | None:
    """The noun before "of" that makes ``span`` part of a longer name ("sugar" of "sugar
    of lead", "milk" of "milk of magnesia"), when it is no word of asking or of the
    asked properties' labels ("the flash point of acetone")."""
    toks = tokens(main_clause(question))
    for i in range(2, len(toks) - len(span) + 1):
        if toks[i : i + len(span)] == list(span) and toks[i - 1] == "of":
            head = toks[i - 2]
            if head.isalpha() and not generic(head) and head not in skip:
                return head
    return None


def _called(index: SubjectIndex, name: Sequence[str]) -> list[str]:
    """The documents whose names hold ``name``, then those whose source's name does."""
    named = index.naming(name)
    return [*named, *(d for d in index.supplied(name) if d not in named)]


def _other_name(question: str, skip: frozenset[str]) -> bool:
    """Whether the question holds a name-like word (capitalised past its start, or with a
    digit) that is no word of the asked properties' labels ("UN" of "UN number")."""
    for word in main_clause(question).split()[1:]:
        core = word.strip(".,;:?!()\"'")
        if not (core[:1].isupper() or any(c.isdigit() for c in core)):
            continue
        if any(t not in skip and not generic(t) for t in _words(core)):
            return True
    return False


def _apposition(text: str, head: str) -> list[str]:
    """The words set off by commas right after the set's noun, which say more of the
    set, not what its members must state ("sodium thiosulfate sheets, solids and
    solutions, are there")."""
    m = re.search(rf"\b{re.escape(head)}\s*,([^,;:?]+),", text, re.I)
    return tokens(m.group(1)) if m else []


def _plural(word: str, kinds: frozenset[str]) -> bool:
    """Whether a word is a plural noun: "-s" after four letters ("salts", "sheets"), or
    a kind word's plural."""
    if not word.isalpha() or word.endswith("ss"):
        return False
    return word.endswith("s") and (len(word) > 4 or word[:-1] in kinds)


def period_of(question: str, props: Sequence[PropertyDef], ontology: Ontology) -> DateSpan | None:
    """The span a collection question bounds the asked date by ("first issued in
    2019"), when the question asks a date property, or dates with no property named
    ("an SDS dated December 2021": any date of the document)."""
    dated = [p for p in props if _kind(p.name, ontology) == "date"]
    return date_span(question, asked_date=bool(dated)) if dated or not props else None


def _kind(name: str, ontology: Ontology) -> str | None:
    return ontology.value_kind(name) if isinstance(ontology, OntologyMatching) else None
