"""The part of an ontology a prompt carries: only what a question or a chunk can touch.

A real model reads every token of its prompt (a 5,000-token vocabulary costs minutes of
CPU on a small machine), so the router, SPARQL and extraction prompts carry the
properties that the text names (the ontology's own matcher, ``OntologyMatching``) and
then those whose labels share words with it, up to a limit; never the whole vocabulary.
Pure functions, no I/O, nothing of any domain: everything comes from the ontology.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from hybrid_rag.protocols import ClassDef, Ontology, OntologyMatching, PropertyDef

__all__ = [
    "MAX_PROMPT_TOKENS",
    "approx_tokens",
    "classes_for",
    "describe_properties",
    "prefix_of",
    "relevant_properties",
]

MAX_PROMPT_TOKENS = 1500
"""The most tokens a router, SPARQL or extraction prompt may take (``approx_tokens``)."""

_WORD = re.compile(r"[^\W\d_]{3,}")
_COMMON = frozenset(
    (
        "the",
        "and",
        "for",
        "with",
        "from",
        "that",
        "this",
        "what",
        "which",
        "when",
        "where",
        "how",
        "are",
        "was",
        "were",
        "has",
        "have",
        "its",
        "their",
        "his",
        "her",
        "not",
        "any",
        "all",
        "per",
        "use",
        "used",
        "may",
        "can",
        "does",
        "did",
        "into",
        "onto",
        "over",
        "under",
        "than",
        "then",
        "there",
        "these",
        "those",
        "other",
        "about",
    )
)


def approx_tokens(text: str) -> int:
    """A safe upper estimate of a text's tokens: one per 3 characters (English prose and
    JSON run 3.5-4.5 characters a token in the tokenizers of current models)."""
    return len(text) // 3 + 1


def prefix_of(ontology: Ontology) -> str:
    """The ontology's own prefix (``TurtleOntology.prefix``), else ``ns``."""
    prefix = getattr(ontology, "prefix", None)
    return prefix if isinstance(prefix, str) and prefix else "ns"


def _stems(text: str) -> set[str]:
    """Lower-case word stems (the first 6 letters), camelCase split, common words out."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return {w[:6] for w in (m.lower() for m in _WORD.findall(spaced)) if w not in _COMMON}


def relevant_properties(
    text: str,
    ontology: Ontology,
    *,
    limit: int = 12,
    include: Iterable[PropertyDef] = (),
) -> list[PropertyDef]:
    """The properties ``text`` can touch, best first, at most ``limit``.

    ``include`` first (properties already known to matter), then those the ontology's
    matcher finds in the text, then those whose labels share the most words with it.
    """
    chosen: dict[str, PropertyDef] = {p.iri: p for p in include}
    if isinstance(ontology, OntologyMatching):
        for p, _score in ontology.match_properties(text):
            chosen.setdefault(p.iri, p)
    words = _stems(text)
    scored: list[tuple[float, int, PropertyDef]] = []
    for i, p in enumerate(ontology.properties()):
        if p.iri in chosen:
            continue
        best = 0.0
        for label in (*p.labels, p.name):
            own = _stems(label)
            if own:
                best = max(best, len(own & words) / len(own))
        if best >= 0.5:
            scored.append((-best, i, p))
    for _s, _i, p in sorted(scored, key=lambda t: (t[0], t[1])):
        chosen.setdefault(p.iri, p)
    return list(chosen.values())[:limit]


def classes_for(props: Sequence[PropertyDef], ontology: Ontology) -> list[ClassDef]:
    """The classes the object properties among ``props`` point to."""
    ranges = {p.range for p in props if p.kind == "object" and p.range}
    return [c for c in ontology.classes() if c.iri in ranges]


def describe_properties(props: Sequence[PropertyDef], prefix: str) -> str:
    """One short line per property: prefixed name, kind, label, unit."""
    lines = []
    for p in props:
        kind = "entity" if p.kind == "object" else "value"
        unit = f", unit {p.unit}" if p.unit else ""
        lines.append(f"  {prefix}:{p.name} ({kind}{unit}): {p.label}")
    return "\n".join(lines)
