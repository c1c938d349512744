"""Reading a question about the whole collection: whether it is one, whether it counts,
and the phrases a value must state (see ``hybrid_rag.ask._collection``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from hybrid_rag._terms import code_term, word_term
from hybrid_rag.ask.grammar import main_clause
from hybrid_rag.text import STOPWORDS, participle, stem, tokens
from hybrid_rag.units import currency_names_as_codes

__all__ = [
    "aggregating",
    "capitalised",
    "code",
    "code_pattern",
    "collection_phrases",
    "collection_question",
    "counts",
    "generic",
    "identifier",
    "joined_codes",
    "labelled_codes",
    "over_collection",
    "question_codes",
    "search_terms",
    "selective",
    "sets",
]

_CUE = re.compile(
    r"^\s*(?:which|what\s+(?:do|does|did|are|is|have|has)\s+(?:we|i|you|our)\b|"
    r"list\b|find\b|name\s+(?:all|every|the)\b|show\b|count\b|how\s+many\b|"
    r"what\s+is\s+the\s+(?:number|count)\s+of\b|"
    r"(?:do|does)\s+(?:we|i|our)\s+(?:have|hold|stock|keep)\s+any\b|are\s+there\s+any\b|"
    r"is\s+there\s+any\b)",
    re.I,
)
_WHERE = re.compile(
    r"^\s*where\s+(?:does|do|did|else)\b.{2,80}?\b(?:appears?|occurs?|turns?\s+up|shows?\s+up)"
    r"\b.*\b(?:our|my|all|every|any|collection|inventory)\b",
    re.I,
)
"""'Where does X appear in our sheets?': over every document, X a value to look for."""
_COUNT = re.compile(r"^\s*(?:how\s+many|count|what\s+is\s+the\s+(?:number|count)\s+of)\b", re.I)
_SET_NOUN = re.compile(
    r"^\s*(?:[Ww]hich|[Hh]ow\s+many|[Ll]ist|[Ff]ind|[Cc]ount|[Nn]ame|[Ss]how)\s+"
    r"(?:(?:of\s+)?(?:our|my|the|all|every|any)\s+)?([a-z][a-z-]+)\b"
)
_Q = "\"'\u2018\u2019\u201c\u201d"
_QUOTED = re.compile(rf"[{_Q}]([^{_Q}]{{3,80}})[{_Q}]")
_PAREN = re.compile(r"\(([^()]{3,120})\)")
_SPLIT = re.compile(r"\s*(?:[,;:?!]|\bi\.?\s?e\.?|\be\.?\s?g\.?|\s-\s|\s\u2013\s)\s*", re.I)
_SPACED_CODE = re.compile(r"\b([A-Z]{1,3}) (\d{3,})(?![\w.,/-])")
"""A code's capital letters and its digits printed apart ("UN 1170", "NA 1993")."""
_CODE = re.compile(r"(?<![\w.-])(?=[\w.-]*\d)[A-Za-z]*\d[\w./-]*(?![\w-])")
"""A code as printed: a word with a digit, its hyphens and dots kept ("50-00-0", "UN3265")."""
_GENERIC = frozenset(  # generic words of asking and listing, of no domain
    """
    which what how many much list find name show count give tell all every any each our my
    we us i you they them their its there here these those ones one documents document
    items item entries entry records record files file things thing kinds kind types type
    collection inventory store stock stocked hold held keep kept have has had having do
    does did done is are was were be been being get got carry carries carried contain
    contains contained include includes included list lists listed use uses used need needs
    needed require requires required appear appears appeared mark marks marked rate rates
    rated classify classifies classified label labels labelled labeled declare declares
    declared state states stated print prints printed show shows shown mention mentions
    mentioned give gives given known presumed also actually only even still other another
    different distinct section sections part parts also as per both either under over
    above below within without into onto from via make makes made making produce produces
    produced supply supplies supplied sell sells sold ship ships shipped come comes came
    turn turns turned occur occurs occurred up among amongst
    """.split()  # noqa: SIM905
)


def joined_codes(text: str) -> str:
    """``text`` with a code's capital letters and digits printed apart joined ("UN 1170"
    is the code UN1170, as values print it or as their pattern finds it)."""
    return _SPACED_CODE.sub(r"\1\2", text)


_LINK = frozenset(["is", "of", "as"])
"""Words that may stand between a property's label and its value ("hazard class is 8")."""
_LIST = frozenset(["or", "and", "nor"])


def labelled_codes(
    question: str, labels: Iterable[str], pattern: str, ignore: Iterable[str] = ()
) -> tuple[str, ...]:
    """The values a question gives a property right after one of its ``labels`` ("DOT
    class 8", "packing group III", "hazard class is 6.1", "packing group I or II"), as
    written: words that ``pattern`` (the property's value pattern) reads whole, none of
    them an identifier (an identifier decides wherever it is printed). ``()`` when the
    question gives no such value, or another code besides them ("class 5.1 ... with a
    6.1 subsidiary risk": two codes, two properties); ``ignore``: numbers that say
    something else (a bound's, a date's year)."""
    rx = re.compile(pattern)
    written = re.findall(r"[\w.]+", joined_codes(main_clause(question)))
    words = [w.rstrip(".") for w in written]
    said = [w.lower() for w in words]
    for label in sorted({tuple(tokens(lab)) for lab in labels}, key=len, reverse=True):
        for i in range(len(said) - len(label) + 1):
            if label and tuple(said[i : i + len(label)]) == label:
                found = _codes_after(words, i + len(label), rx)
                others = set(question_codes(question)) - {w.lower() for w in found}
                others -= set(ignore)
                if found and not others:
                    return found
    return ()


def _codes_after(words: Sequence[str], start: int, rx: re.Pattern[str]) -> tuple[str, ...]:
    """The value words from ``words[start]`` on (past a linking word), joined by "or",
    "and" or commas: each read whole by ``rx`` and no identifier."""
    j = start + (start < len(words) and words[start].lower() in _LINK)
    found: list[str] = []
    while j < len(words) and rx.fullmatch(words[j]) and not identifier(words[j]):
        found.append(words[j])
        j += 1
        if j < len(words) and words[j].lower() in _LIST:
            j += 1
    return tuple(found)


def generic(word: str) -> bool:
    """Whether a word is one of asking and listing, of no domain ("different", "our")."""
    return word in _GENERIC or word in STOPWORDS


def collection_question(question: str) -> bool:
    """Whether a question starts as one about the collection ("Which ...", "How many",
    "Where does X appear?")."""
    return _CUE.search(question) is not None or _WHERE.search(question) is not None


_OF_OURS = re.compile(r"\b(?:which|what)\s+of\s+(?:our|my|the)\s+(?!two\b|three\b)\w", re.I)
_OURS = re.compile(
    r"^\s*(?:which|how\s+many|list|find|count|name|show)\b[^?]{0,30}?\b(?:our|my|every)\b",
    re.I,
)
_SET_OF = (
    r"^\s*(?:which|what|how\s+many|list|find|count|name|show)\s+(?:(?:all\s+)?the\s+)?"
    r"(?:[\w-]+\s+){0,3}?"
)
"""How a question over a set of documents starts, up to the noun that names them."""
_NOT_OF_ONE = r"\b(?!\s+(?:does|do|did)\s+(?!we\b|i\b|you\b|our\b|my\b))"
"""After the noun: no "does <name>" ("What products does acetone form?" asks of one)."""
_DOCUMENTS = r"(?:products|items|documents|ones|entries|records|files)"
"""Nouns any collection calls its documents by (with its own: ``document_noun``)."""
_SETS = re.compile(_SET_OF + _DOCUMENTS + _NOT_OF_ONE, re.I)
_FOLLOWING = re.compile(r"\b(?:these|those|following|either|both)\b", re.I)


def over_collection(question: str, noun: str | None = None) -> bool:
    """Whether a question asks over the collection, whatever names it also holds: it says
    so at its start ("Which of our products contain formaldehyde?", "List every sheet
    that ...", "Which of the cleaners ...", "Find the products whose ...", and with the
    documents' own ``noun`` in the plural: "Which sheets have X as a component?"); not
    "Which of these ...", which asks about the documents named, nor "What flash point does
    our X have?" (a lookup of X)."""
    if _FOLLOWING.search(question):
        return False
    if _WHERE.search(question):
        return True
    if noun and _plural_noun(noun).search(question):
        return True
    return bool(_OF_OURS.search(question) or _OURS.search(question)) or bool(sets(question))


@lru_cache(maxsize=32)
def _plural_noun(noun: str) -> re.Pattern[str]:
    """ "Which|What [the] [up to three words] <noun>s ..." at the question's start."""
    return re.compile(_SET_OF + re.escape(noun) + r"s" + _NOT_OF_ONE, re.I)


def over_others(question: str, noun: str) -> bool:
    """Whether the question asks over a set of *other* documents ("which other
    products", "what other sheets"; not "which other hazards", which asks more of a
    named document)."""
    return _others(noun).search(question) is not None


@lru_cache(maxsize=32)
def _others(noun: str) -> re.Pattern[str]:
    return re.compile(
        r"\b(?:which|what|any|list|find|name|show)\s+(?:of\s+(?:the|our)\s+)?other\s+"
        rf"(?:[a-z-]+\s+){{0,2}}?(?:{_DOCUMENTS}|{re.escape(noun)}s)\b",
        re.I,
    )


def sets(question: str) -> tuple[str, ...]:
    """The words of "Which|What <words> products|items|documents ..." after the question
    word, the noun last (``()`` when the question does not start so)."""
    m = _SETS.search(question)
    return tuple(tokens(m.group(0))[1:]) if m else ()


_NUMBER_WORD = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)"
_GROUPING = re.compile(
    r"\b(?:how\s+many|number\s+of|count)\b.*\b(?:per|for\s+each|for\s+every)\s+\w+"
    r"|\b(?:per|for\s+each|for\s+every)\s+\w+\b.*\bhow\s+many\b"
    r"|\b(?:broken\s+down|grouped)\s+by\b"
    r"|\b(?:average|mean|median)\b|\bsum\s+of\b",
    re.I,
)
_COUNTED = re.compile(
    rf"\bthe\s+(?:most|fewest)\s+(?:\w+\s+)?([a-z]+s)\b"
    rf"|\b(?:more|fewer|less)\s+than\s+{_NUMBER_WORD}\s+(?:\w+\s+)?([a-z]+s)\b",
    re.I,
)


def aggregating(question: str, nouns: frozenset[str]) -> bool:
    """Whether the question counts, groups or averages across documents, which an
    aggregate query answers and no template does: "How many ... per supplier?", "the
    average flash point"; or it ranks or bounds a count of things the ``nouns`` name
    (the words of the ontology's labels and the document noun, singular): "Which
    supplier has the most sheets?", "more than three hazard statements" (not "more than
    60 degrees", whose noun is no label's)."""
    if _GROUPING.search(question):
        return True
    plurals = [(m.group(1) or m.group(2)).lower() for m in _COUNTED.finditer(question)]
    return any(_singulars(w) & nouns for w in plurals if not w.endswith(("ss", "us")))


def _singulars(word: str) -> set[str]:
    """What a plural may be the plural of ("classes": "classe", "class"; "entries":
    "entry")."""
    out = {word[:-1], word[:-2]}
    return out | {word[:-3] + "y"} if word.endswith("ies") else out


def counts(question: str) -> bool:
    """Whether the question asks how many."""
    return _COUNT.search(question) is not None


def collection_phrases(
    question: str, ignore: Iterable[str] = ()
) -> tuple[tuple[tuple[str, ...], bool], ...]:
    """Candidate filters: ``(content words, whole)``. Quoted words and parentheses are
    ``whole`` (every word must be printed); the question's clauses (split at
    punctuation and "i.e.", parentheses kept) are not (a word that only says where to
    look may be missing)."""
    skip = _GENERIC | STOPWORDS | set(ignore)
    m = _SET_NOUN.search(question)
    if m and tokens(question).count(m.group(1).lower()) == 1:
        skip |= {m.group(1).lower()}  # "Which of the cleaners ...": the set, not a value
    question = _COUNT.sub(" ", question, count=1)  # "what is the number of": the asking
    question = currency_names_as_codes(joined_codes(question))  # "in euros": EUR
    found: list[tuple[tuple[str, ...], bool]] = []
    texts = [(m.group(1), True) for m in _QUOTED.finditer(question)]
    texts += [(m.group(1), True) for m in _PAREN.finditer(question)]
    flat = _PAREN.sub(lambda m: "(" + re.sub(r"[,;:]", " ", m.group(1)) + ")", question)
    texts += [(t, False) for t in _SPLIT.split(_QUOTED.sub(" ", flat))]
    for text, whole in texts:
        codes = [c.strip(".-/").lower() for c in _CODE.findall(text)]
        rest = _CODE.sub(" ", text)
        kept = [t for t in tokens(rest) if t not in skip and t.rstrip("s") not in skip]
        words = tuple(dict.fromkeys([*(t for t in kept if len(t) > 1), *codes]))
        if whole and len(words) < 2 and not any(map(code, words)):
            continue  # "(oral)" qualifies a phrase; alone it names nothing
        if words and all(words != w for w, _ in found):
            found.append((words, whole))
    return tuple(found)


def capitalised(question: str) -> set[str]:
    """Words capitalised inside the question (not its first word): values and names."""
    words = question.split()[1:]
    return {w.strip(".,;:?!()\"'").lower() for w in words if w[:1].isupper() and w[1:2].islower()}


def question_codes(question: str) -> tuple[str, ...]:
    """The codes the question gives, as printed ("UN3265", "6.1", "2B"), once each, in
    order."""
    phrases = collection_phrases(question)
    return tuple(dict.fromkeys(w for words, _whole in phrases for w in words if code(w)))


def search_terms(
    phrases: Sequence[tuple[tuple[str, ...], bool]], vocabulary: frozenset[str] = frozenset()
) -> tuple[str, ...]:
    """Index terms (``hybrid_rag._terms``) one of which every value a phrase can match
    holds (the store's look-up: a superset, made small). Every code the question gives
    adds its term (``code_term``): its digits as printed ("5.1") or its longest run of
    digits ("3265" of "UN3265"; short digits alone, "1", only for a phrase of nothing
    else): ``members`` reads the codes of a document in any of its values. A phrase's
    words add a term only when none of its codes is an identifier or four characters
    long (the code is required, and rarer than any word): the term of its longest word
    outside the ontology's labels (such a word is always required), else of its two
    longest words (a clause may miss one word of the labels). A phrase that cannot
    select is left out (``selective``)."""
    out: list[str] = []
    for words, _whole in phrases:
        if not selective(words):
            continue
        plain = sorted((w for w in words if not code(w)), key=len, reverse=True)
        own = [w for w in plain if stem(w) not in vocabulary and not participle(w)]
        codes = [(w, r) for w in filter(code, words) if (r := _code_root(w, alone=not plain))]
        strong = any(identifier(w) or len(r) >= 4 for w, r in codes)
        terms = [] if strong else [word_term(w) for w in (own[:1] or plain[:2])]
        terms += [code_term(r) for _w, r in codes]
        out += [t for t in terms if t and t not in out]
    return tuple(out)


def _code_root(word: str, *, alone: bool) -> str:
    """What every value printing a code holds: the code itself when it is digits and
    separators ("5.1", "3/4"), else its longest run of digits ("UN 3265" is "UN3265";
    "1 - 417 - 725 - 2691" prints "1-417-725-2691", "50 - 00 - 0" "50-00-0"); a single
    digit only ``alone`` (no word beside it), else ``""``."""
    if re.fullmatch(r"[\d.,/]+", word):
        return word if len(word) >= 2 or alone else ""
    digits = max(re.findall(r"\d+", word), key=len)
    return digits if len(digits) >= 2 or alone else ""


def selective(words: Sequence[str]) -> bool:
    """Whether a phrase can say which values it means: it has a word, or a code of two
    characters or more. A lone "1" (of "(Category 1)", its other word a label of the
    ontology) is printed in most values, whatever they state."""
    return any(not code(w) or len(w) >= 2 for w in words)


def code(word: str) -> bool:
    """Whether a word is a code (holds a digit: "UN3265", "7647-01-0", "2B")."""
    return any(c.isdigit() for c in word)


def identifier(word: str) -> bool:
    """Whether a code identifies (at least four letters and digits, with a letter or a
    separator between digit groups: "UN3265", "50-00-0", "H334"; not "6.1", "2B" or a
    year)."""
    groups = re.findall(r"[a-z]+|\d+", word.lower())
    size = sum(map(len, groups))
    return code(word) and size >= 4 and len(groups) >= 2 and not re.fullmatch(r"\d+\.\d+", word)


def code_pattern(word: str) -> re.Pattern[str]:
    """A code as any clause may print it, whole: a space or hyphen may come between its
    letters and digits ("UN 3265"), digits keep their own separators ("5.1" is not "51",
    "50-00-0" not "50000"; spaces may stand around a hyphen: "1 - 417 - 725"), and "1" is
    not the "1" of "1B" or "1.5"."""
    parts = re.findall(r"[a-z]+|\d+|[^a-z\d]+", word.lower())
    body = ""
    for prev, part in zip(["", *parts], parts, strict=False):
        if part == "-":
            body += r"\s*-\s*"
        elif not part[0].isalnum():
            body += re.escape(part)
        else:
            body += (r"[\s-]?" if prev and prev[0].isalnum() else "") + re.escape(part)
    return re.compile(rf"(?<![a-z0-9])(?<!\d[.,]){body}(?![a-z0-9])(?![.,]\d)", re.I)
