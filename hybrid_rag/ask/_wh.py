"""What kind of value a question word asks for, read against the ontology's value kinds.

"Who issued invoice 7730215?" asks for a party, "When was it issued?" for a date: the same
verb names the issuer and the issue date, the question word decides. The kinds come from
the ontology (``value_kind``, or ``rdfs:range`` for any other ontology), so the rule knows
no domain. English morphology only: agent nouns of a verb ("issued" -> "issuer",
"supplied" -> "supplier", "sold" -> "seller") and the bases of irregular past forms
("paid" -> "pay").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from hybrid_rag.ontology import normalize_label
from hybrid_rag.text import STOPWORDS, tokens
from hybrid_rag.types import Ontology, OntologyMatching, PropertyDef

__all__ = ["asked_kind", "by_question_word"]

Wanted = Literal["party", "date"]

_LEAD = r"^(?:(?:to|by|from|for|on|until|till|since)\s+)?"
_PARTY = re.compile(
    _LEAD + r"(?:who|whom|whose|which\s+(?:company|firm|business|organi[sz]ation|party|person))\b"
)
_DATE = re.compile(_LEAD + r"(?:when|(?:what|which)\s+(?:date|day))\b")
_DATE_WORDS = frozenset(normalize_label("date dated day on of by"))
_HOW_MANY = re.compile(r"\bhow\s+many\b")
_COUNT_WORDS = frozenset(["quantity", "qty", "count", "piec", "number of"])
_HOW_ADJECTIVE = re.compile(
    r"^how\s+(?!many\b|much\b|do\b|does\b|did\b|is\b|are\b|was\b|were\b|can\b|could\b"
    r"|should\b|would\b|will\b|to\b|often\b)[a-z]+\b"
)
_MEASURED = frozenset(["number", "temperature", "range"])
_NUMERIC = frozenset(["number", "date", "identifier", "currency", "temperature", "range"])
_IRREGULAR = {  # past form -> base, for the verbs of business documents
    "paid": "pay", "sold": "sell", "bought": "buy", "made": "make", "sent": "send",
    "built": "build", "written": "write", "wrote": "write", "given": "give", "gave": "give",
    "held": "hold", "kept": "keep", "brought": "bring", "drawn": "draw", "spent": "spend",
    "lent": "lend", "lost": "lose", "found": "find", "shown": "show", "told": "tell",
}  # fmt: skip
_AGENT = {"pay": "payer", "sell": "seller", "buy": "buyer", "lend": "lender"}


def asked_kind(start: str) -> Wanted | None:
    """The kind of value the question word at the start of a main clause asks for."""
    if _PARTY.search(start):
        return "party"
    if _DATE.search(start):
        return "date"
    return None


def by_question_word(
    asked: str,
    start: str,
    props: tuple[PropertyDef, ...],
    ontology: Ontology,
    match: Callable[[str, Ontology], list[PropertyDef]],
) -> tuple[PropertyDef, ...]:
    """``props`` with those of the kind the question word asks for first; the others go
    when one fits. With none of that kind matched, the verb's agent noun (a party) or a
    date property whose label shares the verb's base (a date) is looked up instead."""
    if _HOW_MANY.search(start):
        return _counts_first(props, ontology)
    if _HOW_ADJECTIVE.search(start):  # "How toxic ...?" asks a degree: a measured value
        measured = [p for p in props if p.kind == "datatype" and _kind(p, ontology) in _MEASURED]
        seen = {p.iri for p in measured}
        return tuple(measured) + tuple(p for p in props if p.iri not in seen)
    wanted = asked_kind(start)
    if wanted is None:
        return props
    fits = [p for p in props if _fits(p, wanted, ontology)]
    if not fits:
        fits = _by_verb(asked, wanted, ontology, match)
    if not fits:
        return props
    seen = {p.iri for p in fits}
    return tuple(fits) + tuple(p for p in props if p.iri not in seen and p.kind == "object")


def _counts_first(props: tuple[PropertyDef, ...], ontology: Ontology) -> tuple[PropertyDef, ...]:
    """ "How many" asks for a count: a number property whose label says quantity or count,
    before the rest; when none was named, the count of what a named property describes
    ("how many ... and their line total": the line's quantity)."""
    counts = [p for p in props if _is_count(p, ontology)]
    if not counts:
        domains = {p.domain for p in props if p.domain is not None}
        counts = [p for p in ontology.properties() if p.domain in domains]
        counts = [p for p in counts if _is_count(p, ontology)][:1]
    seen = {p.iri for p in counts}
    return tuple(counts) + tuple(p for p in props if p.iri not in seen)


def _is_count(prop: PropertyDef, ontology: Ontology) -> bool:
    if prop.kind != "datatype" or _kind(prop, ontology) != "number":
        return False
    said = {" ".join(normalize_label(label)) for label in prop.labels}
    return any(w in label.split() or w in label for label in said for w in _COUNT_WORDS)


def _kind(prop: PropertyDef, ontology: Ontology) -> str:
    if isinstance(ontology, OntologyMatching):
        return ontology.value_kind(prop.name)
    if prop.range is not None and prop.range.endswith(("#date", "#dateTime")):
        return "date"
    if prop.range is not None and prop.range.endswith(("#decimal", "#integer", "#double")):
        return "number"
    return "text"


def _fits(prop: PropertyDef, wanted: Wanted, ontology: Ontology) -> bool:
    if prop.kind != "datatype":
        return False
    kind = _kind(prop, ontology)
    return kind == "date" if wanted == "date" else kind not in _NUMERIC


def _by_verb(
    asked: str,
    wanted: Wanted,
    ontology: Ontology,
    match: Callable[[str, Ontology], list[PropertyDef]],
) -> list[PropertyDef]:
    words = [t for t in tokens(asked) if t not in STOPWORDS and t.isalpha() and _past(t)]
    if wanted == "party":
        nouns = " ; ".join(n for w in words for n in _agent_nouns(w))
        return [p for p in match(nouns, ontology) if _fits(p, wanted, ontology)] if nouns else []
    bases = {s for w in words for s in normalize_label(_IRREGULAR.get(w, w)) if len(s) > 2}
    dated = [p for p in ontology.properties() if _fits(p, "date", ontology)]
    return [p for p in dated if any(_same_stem(b, w) for b in bases for w in _label_words(p))]


def _label_words(prop: PropertyDef) -> set[str]:
    """The stems of a date property's labels, without the word "date" they all share."""
    return {s for lb in prop.labels for s in normalize_label(lb)} - _DATE_WORDS


def _same_stem(verb: str, word: str) -> bool:
    """ "collect" and "collection", "deliver" and "delivery", "pay" and "payment"."""
    return word.startswith(verb) or (len(word) > 3 and verb.startswith(word))


def _past(word: str) -> bool:
    """A verb's past form: the words that say what was done to the subject."""
    return word in _IRREGULAR or (word.endswith("ed") and len(word) > 4)


def _agent_nouns(word: str) -> list[str]:
    """Who does what the verb says: "issued" -> issuer, "distributed" -> distributor."""
    if word in _IRREGULAR:
        base = _IRREGULAR[word]
        return [_AGENT.get(base, base + ("r" if base.endswith("e") else "er"))]
    if word.endswith("ied"):
        return [word[:-3] + "ier"]
    if word.endswith("ed") and len(word) > 4:
        return [word[:-1] + "r", word[:-2] + "or"]  # billed -> biller, issued -> issuer
    return []
