"""The index of the values' words that every document graph holds (``hr:term``).

A question about the whole collection looks for the facts whose value holds a word of
it ("irritation", "UN3265"). Without an index that is a scan of every value of every
document in scope (``CONTAINS`` on each), linear in the store. So ingest writes, next to
each ``hr:Fact``, one ``hr:term`` literal per distinct term of its value, and one
``hr:termIndex`` triple per document graph that says its facts carry them::

    <fact> hr:term "irrit" , "categ" , "2" .       # "Eye Irritation Category 2"
    <subject> hr:termIndex "1" .                    # this graph's facts are indexed

A value's terms (``value_terms``) are the first five letters of each word less its
ending (the stem part of ``hybrid_rag.text.word_key``: "irritating" and "Irritation"
are "irrit", "sulphate" is "sulfa"), every run of digits of a token that has digits
("UN3265": "3265"; "50-00-0": "50", "00", "0") and every number with its decimal
separators ("Class 5.1": "5.1"). A question's words and codes become the same terms
(``word_term``, ``code_term``), so finding the facts that hold them is a look-up of
equal literals, which every SPARQL engine answers from its indexes: the work is
proportional to the matches, not to the store.

The index lives in each document's own graph, so it is replaced and forgotten with the
document, read under the question's scope like any other triple, and pushed down to
whatever engine holds the graph. A graph written before the index existed has no
``hr:termIndex``; its facts are found by ``scan_strings``: a ``CONTAINS`` scan whose
strings every value holding the term contains, whose rows ``value_terms`` then keeps
exactly, so both ways find the same facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from hybrid_rag._vocab import HR
from hybrid_rag.text import tokens, word_key

__all__ = [
    "INDEX_VERSION",
    "TERM",
    "TERM_INDEX",
    "code_term",
    "scan_strings",
    "value_terms",
    "word_term",
]

TERM = HR + "term"
"""A term of a fact's value (``value_terms``)."""
TERM_INDEX = HR + "termIndex"
"""Says that a document graph's facts carry their terms; its value is ``INDEX_VERSION``."""
INDEX_VERSION = "1"
"""The index's layout; a graph of another version is read as one without an index."""

_DIGITS = re.compile(r"\d+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)+")


@lru_cache(maxsize=65536)
def value_terms(text: str) -> frozenset[str]:
    """The index terms of a value: ``word_term`` of each word of two letters or more,
    and the digit runs and numbers (``5.1``, ``99.8``) of each token with a digit."""
    out: set[str] = set()
    for t in tokens(text):
        if t.isalpha():
            if len(t) > 1:
                out.add(word_term(t))
        else:
            out.update(_DIGITS.findall(t))
            out.update(_NUMBER.findall(t))
    return frozenset(out)


def word_term(word: str) -> str:
    """A word's index term: the stem part of ``word_key`` (two words with the same key
    have the same term)."""
    return word_key(word).split("|", 1)[0]


def code_term(root: str) -> str:
    """The index term every value that prints a code's root holds: the root itself when
    it is a digit run or a number ("3265", "5.1"), else its longest digit run ("3/4":
    "3")."""
    if _DIGITS.fullmatch(root) or _NUMBER.fullmatch(root):
        return root
    runs = _DIGITS.findall(root)
    return max(runs, key=len) if runs else root


def scan_strings(terms: Iterable[str]) -> tuple[str, ...]:
    """Lower-case strings one of which every value holding one of ``terms`` contains
    (for graphs without the index): a word's term, with "sulph" for "sulf" and "ie" for
    a final "y" made of "ies" ("bodies" is "body"); digits as they are."""
    out: dict[str, None] = {}
    for term in terms:
        out[term] = None
        if "sulf" in term:
            out[term.replace("sulf", "sulph")] = None
        if term.isalpha() and term.endswith("y"):
            out[term[:-1] + "ie"] = None
    return tuple(out)
