"""Properties a question names by a verb instead of the field's noun, read from English
morphology against the ontology's own labels (no domain).

Two readings, each tried only on a participle no matched label already holds:

- the verb's noun: "Which class is X *classified* in?" asks for its classification,
  "How is X *registered*?" for its registration: a participle names the property one of
  whose labels is that noun alone ("-ified" -> "-ification", "-ated" -> "-ation",
  "-ed" -> "-ion", "-ment", "-ation");
- a purpose: "What is X *intended for*?", "What is X *recommended for*?" ask for its
  intended or recommended use: a participle followed by "for" at the end of the
  question names the property labelled "<participle> use".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from hybrid_rag.ontology import normalize_label
from hybrid_rag.text import STOPWORDS, participle, tokens
from hybrid_rag.types import Ontology, PropertyDef

__all__ = ["by_verb_noun"]

_PURPOSE = re.compile(r"\b([a-z]{3,}ed)\s+for\s*[?.!]*\s*$")


def by_verb_noun(
    asked: str,
    props: tuple[PropertyDef, ...],
    ontology: Ontology,
    match: Callable[[str, Ontology], list[PropertyDef]],
) -> tuple[PropertyDef, ...]:
    """``props`` with the properties the question's participles name put first (see the
    module docstring); unchanged when it has none, when a matched label holds them, or
    when the question's nouns already name a field with values (a datatype property:
    "Which transport hazard class is X classified in?" asks that class)."""
    if any(p.kind == "datatype" for p in props):
        return props
    held = {s for p in props for label in _naming_labels(p) for s in normalize_label(label)}
    words = [t for t in tokens(asked) if t.isalpha() and participle(t)]
    words = [w for w in words if not set(normalize_label(w)) <= held]
    if not words:
        return props
    found: list[PropertyDef] = []
    purpose = _PURPOSE.search(asked.lower())
    if purpose is not None and purpose.group(1) in words:  # "recommended" is a stopword
        phrase = f"{purpose.group(1)} use"
        want = normalize_label(phrase)
        found += [p for p in match(phrase, ontology) if _has_label(p, want)]
    for w in (w for w in words if w not in STOPWORDS):
        for noun in _nouns(w):
            want = normalize_label(noun)
            found += [p for p in match(noun, ontology) if _has_label(p, want)]
    if not found:
        return props
    seen = {p.iri for p in found}
    return tuple(dict.fromkeys(found)) + tuple(p for p in props if p.iri not in seen)


def _naming_labels(prop: PropertyDef) -> Sequence[str]:
    return (*prop.labels, prop.name)


def _has_label(prop: PropertyDef, want: list[str]) -> bool:
    """Whether one of the property's labels is ``want`` as a whole (not a longer label
    holding it: "classification" names no "classification code")."""
    return any(normalize_label(label) == want for label in prop.labels)


def _nouns(word: str) -> list[str]:
    """The nouns of the action a past participle names: "classified" ->
    classification, "registered" -> registration, "regulated" -> regulation."""
    base = word[:-2]  # "register", "regulat", "classifi"
    if word.endswith("ified"):
        return [word[:-3] + "ication"]
    if word.endswith("ated"):
        return [base + "ion"]
    if word.endswith("ied"):
        return []
    return [base + "ation", base + "ion", base + "ment"]
