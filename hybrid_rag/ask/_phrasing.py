"""How an extractive answer is written: the result type, citations, names, lists,
and the cut at a whole sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.models import Abstention, Evidence
from hybrid_rag.text import tokens

__all__ = [
    "MAX_CHARS",
    "Composed",
    "canon",
    "cite",
    "clip",
    "doc_name",
    "in_sentence",
    "join_names",
    "plural",
    "unit_text",
    "with_article",
]


MAX_CHARS = 1000
"""The default longest extractive answer: about a paragraph, read at a glance. The value
asked for comes first; every value found is in ``Answer.facts`` whatever the length."""


@dataclass(frozen=True, slots=True)
class Composed:
    """An answer text and the evidence behind each of its statements."""

    text: str | None
    citations: tuple[Evidence, ...]
    used_facts: bool
    used_passages: bool
    abstention: Abstention | None = None


def cite(e: Evidence) -> str:
    return f"[{e.doc_id} p.{e.page}]"


def doc_name(a: QuestionAnalysis, doc_id: str, fallback: str) -> str:
    """How the answer names a document: its subject's name, with the number the question
    named it by when the name lacks it ("Coolblue 2, invoice 992288600")."""
    match = next((p for p in a.subjects if p.doc_id == doc_id), None)
    if match is None:
        return fallback
    shown = set(tokens(match.label))
    said = [t for t in tokens(a.question) if t in match.matched and t not in shown]
    number = next((t for t in said if t.isdigit() and len(t) >= 4), None)
    return f"{match.label}, {a.noun} {number}" if number else match.label


def unit_text(unit: str | None) -> str:
    if not unit:
        return ""
    return unit if unit.startswith(("°", "%")) else f" {unit}"


def plural(label: str) -> str:
    """ "hazard class" -> "hazard classes", "UN number" -> "UN numbers", "currency" ->
    "currencies", "country of origin" -> "countries of origin"."""
    head, of, tail = label.partition(" of ")
    if of and head:
        return plural(head) + of + tail
    if label.endswith("y") and label[-2:-1] not in ("a", "e", "i", "o", "u"):
        return label[:-1] + "ies"
    return label + ("es" if label.endswith(("s", "x", "ch", "sh")) else "s")


def with_article(phrase: str) -> str:
    """ "a flash point", "an autoignition temperature" (by the first letter)."""
    return f"{'an' if phrase[:1].lower() in 'aeiou' else 'a'} {phrase}"


def in_sentence(label: str) -> str:
    """A label inside a sentence: "Due date" -> "due date"; "VAT rate" and "xTend" kept."""
    return label[0].lower() + label[1:] if label[1:2].islower() else label


def canon(value: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", value.lower())


def join_names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def clip(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters: at the last sentence end in its second half,
    else at a word with "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    ends = [m.end() for m in _SENTENCE_END.finditer(cut) if m.end() >= limit // 2]
    if ends:
        return cut[: ends[-1]].rstrip()
    return cut[: cut.rfind(" ")] + "…" if " " in cut else cut + "…"


_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z(\[])")
