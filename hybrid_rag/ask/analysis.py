"""Question analysis: products, ontology properties and intent (pure, no I/O, no LLM)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from hybrid_rag.ask.linking import ProductIndex, ProductMatch
from hybrid_rag.protocols import Ontology, PropertyDef
from hybrid_rag.text import norm, tokens

__all__ = ["Intent", "QuestionAnalysis", "ScopeView", "analyse", "match_properties"]

Intent = Literal["lookup", "min", "max", "filter", "same", "procedure", "out_of_scope", "unsafe"]
"""What a question asks for; see :class:`~hybrid_rag.protocols.QuestionRouter`."""

_MAX = re.compile(r"\b(highest|maximum|largest|greatest|most alkaline|most basic|hottest)\b")
_MIN = re.compile(r"\b(lowest|minimum|smallest|least|most acidic|coldest)\b")
_SAME = re.compile(r"^(do|does|are|is|have|has)\b.*\b(same|share|identical|equal)\b")
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


@dataclass(frozen=True, slots=True)
class ScopeView:
    """What a router may know of the scope: its documents, their products, the ontology.

    Attributes:
        doc_ids: the documents the question may see.
        products: product names of those documents, for linking.
        ontology: the vocabulary the graph is built on.
        scoped: whether the caller named the documents (``docs=``) or means all of them.
    """

    doc_ids: tuple[str, ...]
    products: ProductIndex
    ontology: Ontology
    scoped: bool = False


@dataclass(frozen=True, slots=True)
class QuestionAnalysis:
    """What a question asks: about which documents, which properties, with which intent.

    Attributes:
        question: the question as asked.
        products: documents whose product the question names, best first.
        properties: ontology properties the question asks about.
        intent: see :data:`Intent`.
        filter_terms: for ``filter``: the words a value must contain.
        missing: product names the question names that are not in the scope.
        reason: for ``out_of_scope`` and ``unsafe``: why, in a readable sentence.
        search: the text the vector chain searches for (default: the question).
    """

    question: str
    products: tuple[ProductMatch, ...]
    properties: tuple[PropertyDef, ...]
    intent: Intent
    filter_terms: tuple[str, ...] = field(default=())
    missing: tuple[str, ...] = field(default=())
    reason: str | None = None
    search: str | None = None

    @property
    def answered_directly(self) -> bool:
        """Whether the supervisor answers without the stores (out of scope, unsafe)."""
        return self.intent in ("out_of_scope", "unsafe")

    @property
    def doc_ids(self) -> list[str]:
        """Documents of the linked products."""
        return [p.doc_id for p in self.products]

    @property
    def topic(self) -> str:
        """The question without the product names (what to search for inside their sheets)."""
        named = {t for p in self.products for t in p.matched}
        words = [w for w in self.question.split() if not set(tokens(w)) <= named or not tokens(w)]
        rest = " ".join(words).strip(" ,;:?")
        return rest if tokens(rest) else self.question


def analyse(question: str, *, index: ProductIndex, ontology: Ontology) -> QuestionAnalysis:
    """Link products, match properties, and classify the intent of ``question``."""
    products = tuple(index.link(question))
    props = tuple(match_properties(question, ontology))
    text = norm(question)
    terms = _filter_terms(question)
    intent: Intent = "lookup"
    if len(products) >= 2 and _SAME.search(text):
        intent = "same"
    elif len(products) >= 2 and _MAX.search(text) and _quantity(props):
        intent = "max"
    elif len(products) >= 2 and _MIN.search(text) and _quantity(props):
        intent = "min"
    elif len(products) >= 2 and terms and _WHICH.search(text):
        intent = "filter"
    elif len(products) >= 2 and not props and (phrase := _WHICH_ARE.search(question)):
        intent, terms = "filter", (phrase.group(1).strip(),)  # "which of these are corrosive"
    if intent in ("min", "max"):
        props = tuple(p for p in props if p.kind == "datatype")[:1]
    return QuestionAnalysis(question, products, props, intent, terms)


def match_properties(question: str, ontology: Ontology) -> list[PropertyDef]:
    """Ontology properties the question names (the ontology's own matcher when it has one)."""
    own: Callable[[str], Sequence[tuple[PropertyDef, float]]] | None = getattr(
        ontology, "match_properties", None
    )
    if own is not None:
        return [p for p, _score in own(question)]
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


def _quantity(props: Sequence[PropertyDef]) -> bool:
    return any(p.kind == "datatype" for p in props)


def _filter_terms(question: str) -> tuple[str, ...]:
    question = re.sub(r"\([^)]*\)", " ", question)  # "(rather than 'Danger')" is no filter
    out = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    out += [m.group(1).strip(" ,") for m in _CLASSIFIED.finditer(question)]
    return tuple(dict.fromkeys(t for t in out if t))
