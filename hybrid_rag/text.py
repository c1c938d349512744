"""Text normalisation and tokens shared by linking, sentence selection and answers (pure)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = [
    "STOPWORDS",
    "content_tokens",
    "in_row",
    "keyword_tokens",
    "norm",
    "participle",
    "sentences",
    "stem",
    "suffix_stem",
    "tokens",
    "word_key",
]

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "to",
        "in",
        "on",
        "at",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "as",
        "from",
        "into",
        "than",
        "then",
        "there",
        "their",
        "them",
        "they",
        "he",
        "she",
        "his",
        "her",
        "you",
        "your",
        "we",
        "our",
        "us",
        "if",
        "any",
        "all",
        "some",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "not",
        "no",
        "yes",
        "same",
        "share",
        "have",
        "has",
        "had",
        "sds",
        "sheet",
        "safety",
        "data",
        "given",
        "listed",
        "state",
        "states",
        "stated",
        "says",
        "say",
        "recommend",
        "recommended",
        "tell",
        "me",
        "please",
        "product",
        "products",
        "according",
        "about",
        "other",
        "rather",
        "between",
        "i",
        "my",
        "me",
        "mine",
        "get",
        "gets",
        "got",
        "someone",
        "something",
        "anyone",
        "person",
        "people",
        "done",
        "happens",
        "happen",
        "go",
        "goes",
        "into",
        "onto",
        "after",
        "before",
        "during",
        "also",
        "just",
        "very",
        "here",
        "whether",
    ]
)

_TOKEN = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*%?")


_MARKS = str.maketrans({"\u2122": " ", "\u00ae": " ", "\u00a9": " ", "\u2120": " "})
"""Trade and service marks stand apart: NFKC would glue "Exxsol™" into "exxsoltm"."""


def norm(text: str) -> str:
    """NFKC, lower case, unified dashes, single spaces; ™ ® © ℠ read as spaces."""
    text = unicodedata.normalize("NFKC", text.translate(_MARKS)).lower()
    text = re.sub(r"[\u2010-\u2015\u2212]", "-", text)
    return re.sub(r"\s+", " ", text).strip()


def tokens(text: str) -> list[str]:
    """Word and number tokens of normalised text ("99.8%" stays one token)."""
    return _TOKEN.findall(norm(text))


def stem(token: str) -> str:
    """A crude stem for matching questions to sentences: suffixes off, 5-letter prefix.

    "inhaled"/"inhales"/"inhalation" -> "inhal"; "store"/"stored"/"storage" -> "stor";
    "storm" stays "storm".
    """
    return suffix_stem(token)[:5]


def suffix_stem(token: str) -> str:
    """Plural, -ed/-ing/-age and a final e off ("stored" -> "stor", "eyes" -> "eye").

    Mild enough for BM25 (no truncation, so "hydrofluoric" and "hydroxide" stay apart);
    tokens that start with a digit are left alone.
    """
    if not token or token[0].isdigit():
        return token
    if len(token) > 4 and token.endswith("ies"):
        token = token[:-3] + "y"
    elif token.endswith(("sses", "xes", "ches", "shes")):
        token = token[:-2]
    elif len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
        token = token[:-1]
    if len(token) > 5 and token.endswith(("ing", "ed")):
        token = token[:-3] if token.endswith("ing") else token[:-2]
    if len(token) > 5 and token.endswith("age"):
        token = token[:-3]
    if len(token) > 3 and token.endswith("e"):
        token = token[:-1]
    return token


def participle(word: str) -> bool:
    """Whether a word reads as a past participle ("classified", "declared"): how a
    question asks, which a value need not print."""
    return len(word) > 5 and word.isalpha() and word.endswith("ed")


def word_key(token: str) -> str:
    """A stricter key than ``stem`` for matching a word of a question to a word of a
    value: words match when they share their 5-letter stem *and* their root, the word
    less one derivational ending ("sensitizers"/"sensitization" -> "sensitiz",
    "toxicants"/"toxicity" -> "toxic", "corrosive"/"corrosion" -> "corros"), so that
    names of different things that only begin alike stay apart ("cyclohexane" and
    "cyclohexanone", "methane" and "methanol", "chlorine" and "chloride",
    "composition" and "component"); British "sulph-" is "sulf-"."""
    base = suffix_stem(token.replace("sulph", "sulf"))  # "sulphate" is "sulfate"
    return base[:5] + "|" + _root(base)  # ``stem`` is ``suffix_stem(token)[:5]``


_BRITISH = re.compile(r"is(?=ation$|er$|$)")
_DERIVED = (  # final e already off (``suffix_stem``): "iv" of "corrosive"
    *("ification", "ability", "ibility", "ication", "icity", "atory", "ation", "ition"),
    *("ivity", "ment", "ness", "ify", "ity", "ion", "ory", "ant", "ent", "anc", "enc", "ous"),
    *("abl", "ibl", "iv", "ic", "al", "er", "or", "at", "ur", "y"),
)
_MIN_ROOT = 4


def _root(word: str) -> str:
    """``word`` (suffix-stemmed) less its longest derivational ending that leaves four
    letters; British -is- spelt -iz- ("oxidiser" ~ "oxidizer")."""
    if not word.isalpha():
        return word
    if word.endswith("i"):  # "classified" stems to "classifi": "classify"
        word = word[:-1] + "y"
    word = _BRITISH.sub("iz", word) if len(word) >= 6 else word
    for end in _DERIVED:
        if word.endswith(end) and len(word) - len(end) >= _MIN_ROOT:
            return word[: -len(end)]
    return word


def content_tokens(text: str, *, drop: frozenset[str] = frozenset()) -> list[str]:
    """Stemmed tokens without stop words (and without ``drop``)."""
    return [stem(t) for t in tokens(text) if t not in STOPWORDS and t not in drop and len(t) > 1]


_SENT = re.compile(r"(?<=[.!?])(?<!\b\d\.)(?<!\b\d\d\.)\s+(?=[A-Z(])|\n+")  # not "4. FIRST AID"


def sentences(text: str) -> list[tuple[int, int]]:
    """Spans of sentences or lines in ``text`` (character offsets, stripped, non-empty)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENT.finditer(text):
        _add_span(text, start, m.start(), spans)
        start = m.end()
    _add_span(text, start, len(text), spans)
    return spans


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))


# --- keyword (BM25) tokens: the embedded vector store and HANA index the same ones -----

_KW_TOKEN = re.compile(r"[0-9a-z]+(?:[-./,][0-9a-z]+)*")
_KW_PART = re.compile(r"[a-z]+|[0-9]+")
_KW_JOIN = re.compile(r"(?<![0-9a-z])([a-z]{1,3})\s+([0-9]+)(?![0-9a-z]|[-./,][0-9a-z])")
_KW_STOP = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "what",
        "which",
        "who",
        "with",
    )
)


def keyword_tokens(text: str) -> list[str]:
    """Split text into lower-case BM25 tokens that keep identifiers whole.

    A compound token (``67-64-1``, ``un1090``, ``h225``, ``2-propanone``) is emitted whole
    and then as its parts (``67``, ``64``, ``1``; ``un``, ``1090``). A short letter prefix
    followed by a number (``UN 1090``) also yields the joined form ``un1090``. English
    stop words are dropped; alphabetic words lose plural/-ed/-ing/-age endings
    (``stored``, ``storage`` -> ``stor``), codes and numbers are never stemmed.

    Args:
        text: Any text (a chunk or a question).

    Returns:
        The tokens: words first, then parts of compounds, then joined forms
        (duplicates kept: they count for term frequency).
    """
    low = unicodedata.normalize("NFKC", text.translate(_MARKS)).lower()
    words = [w for w in _KW_TOKEN.findall(low) if w not in _KW_STOP]
    out = [suffix_stem(w) if w.isalpha() else w for w in words]
    out += [p for w in words if not (w.isalpha() or w.isdigit()) for p in _KW_PART.findall(w)]
    out += [a + b for a, b in _KW_JOIN.findall(low)]
    return out


_GLUED_LABEL = re.compile(r"[a-z][.)](?:[A-Z][a-z]+(?: [a-z]+){0,3})\s*$", re.M)


def glued_labels(text: str) -> bool:
    """Whether a page's text glues a short label to the end of a sentence ("... develop
    or persist.Inhalation"): a two-column page read across, each label printed after the
    value beside it, so a label's value is the text *above* it in this order."""
    return _GLUED_LABEL.search(text) is not None


def in_row(words: Sequence[str], run: Sequence[str]) -> bool:
    """Whether ``run`` occurs in ``words`` as consecutive items ("flash point" in the
    tokens of "what is the flash point of X")."""
    n = len(run)
    return any(list(words[i : i + n]) == list(run) for i in range(len(words) - n + 1))
