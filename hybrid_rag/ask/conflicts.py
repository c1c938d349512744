"""Documents that claim the same product and disagree on a value: shown, never resolved.

Two sheets may name the same product (two grades, two vendors, or a planted sheet that
impersonates a real one) and state different values for one property. An answer must
not silently pick one: ``find_conflicts`` finds such disagreements among the facts a
question retrieved, and ``conflict_note`` writes the sentence that lists every value
with its source. ``involving`` keeps the disagreements an answer touches: those whose
product it names or whose documents it cites (a ranking over a whole collection is not
buried under notes about products it does not mention).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from hybrid_rag.models import Evidence, Fact
from hybrid_rag.text import norm

__all__ = ["Conflict", "conflict_note", "find_conflicts", "involving"]

MAX_NOTED = 2
"""Conflicts written into one answer at most (the rest are in ``Answer.facts``)."""


@dataclass(frozen=True, slots=True)
class Conflict:
    """One property of one product name on which documents state different values.

    Attributes:
        subject: the product name as the first document prints it.
        label: the property's label.
        values: each distinct value with the facts (one per document) that state it.
    """

    subject: str
    label: str
    values: tuple[tuple[str, tuple[Fact, ...]], ...]


def find_conflicts(facts: Sequence[Fact]) -> list[Conflict]:
    """Disagreements among ``facts``: same product name and property, different values.

    Only stated facts count, and only each document's first value for a property in
    reading order (a sheet that lists several values is not in conflict with itself; two
    copies of one sheet agree, in whatever order the store returns their values). Numbers
    are compared as numbers with their unit ("-18 °C (closed cup)" agrees with "-18 °C"),
    other values as their letters and digits.
    """
    first: dict[tuple[str, str], dict[str, Fact]] = {}
    for f in sorted(facts, key=_read_order):
        if f.status == "stated":
            first.setdefault((norm(f.subject), f.predicate), {}).setdefault(f.doc_id, f)
    out: list[Conflict] = []
    for per_doc in first.values():
        if len(per_doc) < 2:
            continue
        groups: dict[object, list[Fact]] = {}
        for f in per_doc.values():
            groups.setdefault(_canonical(f), []).append(f)
        if len(groups) < 2:
            continue
        head = next(iter(per_doc.values()))
        values = tuple((fs[0].value, tuple(fs)) for fs in groups.values())
        out.append(Conflict(head.subject, head.predicate_label, values))
    return out


def _read_order(f: Fact) -> tuple[bool, int, int, str]:
    """Where the document prints ``f``: its place in the reading, its page, its value."""
    return (f.position is None, f.position or 0, f.evidence.page, f.value)


def involving(conflicts: Sequence[Conflict], text: str, cited: Iterable[str]) -> list[Conflict]:
    """The conflicts an answer touches: it names the product or cites one of the documents.

    Args:
        conflicts: what ``find_conflicts`` found.
        text: the answer's text.
        cited: ids of the documents the answer cites.
    """
    said, docs = norm(text), set(cited)
    return [
        c
        for c in conflicts
        if _names(said, c.subject) or any(f.doc_id in docs for _, fs in c.values for f in fs)
    ]


def _names(said: str, subject: str) -> bool:
    """Whether normalised ``said`` names ``subject`` as a whole phrase."""
    return re.search(rf"(?<!\w){re.escape(norm(subject))}(?!\w)", said) is not None


def conflict_note(conflicts: Sequence[Conflict], cite: Callable[[Evidence], str]) -> str:
    """One sentence per conflict (at most ``MAX_NOTED``), each value with its sources.

    Args:
        conflicts: what ``find_conflicts`` found (empty: ``""``).
        cite: writes a citation marker for a fact's evidence.
    """
    sentences = []
    for c in conflicts[:MAX_NOTED]:
        shown = " vs ".join(
            f"{value} {' '.join(cite(f.evidence) for f in facts)}" for value, facts in c.values
        )
        sentences.append(
            f"The documents disagree on the {_lower(c.label)} of {c.subject}: {shown}."
        )
    more = len(conflicts) - MAX_NOTED
    if more > 0:
        sentences.append(f"They disagree on {more} more value(s); see the facts.")
    return " ".join(sentences)


def _canonical(f: Fact) -> object:
    if f.number is not None:
        return (f.number, norm(f.unit or ""))
    return re.sub(r"[^a-z0-9.]", "", norm(f.value))


def _lower(label: str) -> str:
    """ "Due date" -> "due date"; "VAT rate" and "xTend" keep their case."""
    return label[0].lower() + label[1:] if label[1:2].islower() else label
