"""Answers across documents: the winner of a comparison, the documents that meet a
condition, and whether their values agree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hybrid_rag._vocab import DATE_UNIT
from hybrid_rag.ask._lookup import lookup
from hybrid_rag.ask._passages import from_passages
from hybrid_rag.ask._phrasing import (
    Composed,
    canon,
    cite,
    clip,
    doc_name,
    in_sentence,
    join_names,
    plural,
    unit_text,
)
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.models import Evidence, Fact, Passage
from hybrid_rag.text import stem, tokens

__all__ = ["category_answer", "filtered_answer", "ranked_answer", "same_answer"]


_NEGATIVE = re.compile(r"^\W*(?:not|no|non|none|never|n/a)\b", re.I)
_SUPERLATIVE = (
    r"\b(?:(?:high|low|small|larg|great|bigg|hott|warm|cold|cool|strong|weak|few)est"
    r"|most|least|maximum|minimum)\b"
)


_SIZE_WORDS = {(True, True): "highest", (True, False): "higher", (False, True): "lowest",
               (False, False): "lower"}  # fmt: skip
_TIME_WORDS = {(True, True): "latest", (True, False): "later", (False, True): "earliest",
               (False, False): "earlier"}  # fmt: skip


def ranked_answer(
    a: QuestionAnalysis, facts: Sequence[Fact], passages: Sequence[Passage], limit: int
) -> Composed:
    """The winner of a comparison, with every other product's value.

    A document that states a value without a number to sort on ("104 mbar" in a
    property typed in mmHg), or values in different currencies or units, make no winner:
    the values are shown side by side. Dates are earlier and later, not lower and higher.
    """
    best: dict[str, Fact] = {}
    for f in facts:  # the template orders by number; keep each document's first (best) value
        if f.number is not None and f.status == "stated":
            best.setdefault(f.doc_id, f)
    untyped = {f.doc_id for f in facts if f.status == "stated" and f.doc_id not in best}
    units = {f.unit for f in best.values()}
    if untyped or not best or len(units) > 1:  # no winner across currencies or units
        return lookup(a, facts, passages, limit)
    order = list(best.values())
    top, rest = order[0], order[1:]
    superlative = len(a.subjects) > 2 or re.search(_SUPERLATIVE, a.question, re.I) is not None
    words = _TIME_WORDS if units == {DATE_UNIT} else _SIZE_WORDS
    word = words[(a.intent == "max", superlative)]
    head = (
        f"{doc_name(a, top.doc_id, top.subject)} has the {word} {in_sentence(top.predicate_label)}"
    )
    if a.polar and a.polar_subject is not None and len(order) >= 2:
        head = ("Yes: " if top.doc_id == a.polar_subject else "No: ") + head
    text = f"{head} ({top.value} {cite(top.evidence)})"
    others = "; ".join(
        f"{doc_name(a, f.doc_id, f.subject)}: {f.value} {cite(f.evidence)}" for f in rest
    )
    missing = [p.label for p in a.subjects if p.doc_id not in best]
    if missing:  # a winner among some is no winner among all: say so first
        text = f"Of the {plural(a.noun)} that state it, {text}"  # names keep their case
    if others:
        text += f"; versus {others}"
    if missing:
        text += f"; not stated for {', '.join(missing)}"
    return Composed(clip(text + ".", limit), tuple(f.evidence for f in order), True, False)


def filtered_answer(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    if a.threshold is not None:
        return _bounded(a, facts, limit)
    hits: dict[str, Fact] = {}
    asks_negative = any(_NEGATIVE.match(t) for t in a.filter_terms)
    for f in facts:  # "Not listed" does not match "listed"
        if f.status == "stated" and (asks_negative or not _NEGATIVE.match(f.value)):
            hits.setdefault(f.doc_id, f)
    term = a.filter_phrase or (" ".join(a.filter_terms) if a.filter_terms else "it")
    if not hits:
        return Composed(f"None of them is stated to match '{term}'.", (), True, False)
    names = [doc_name(a, d, f.subject) for d, f in hits.items()]
    verb = "matches" if len(names) == 1 else "match"
    text = (
        f"{join_names(names)} {verb} '{term}'. Evidence: "
        + "; ".join(f"{f.value} {cite(f.evidence)}" for f in hits.values())
        + "."
    )
    against = {  # what the others' sheets say instead ("Not regulated")
        f.doc_id: f for f in facts if f.status == "stated" and f.doc_id not in hits
    }
    if against:
        text += (
            " Not for "
            + "; ".join(
                f"{doc_name(a, d, f.subject)} ({f.value} {cite(f.evidence)})"
                for d, f in against.items()
            )
            + "."
        )
    others = [p.label for p in a.subjects if p.doc_id not in hits and p.doc_id not in against]
    if others:
        text += f" No matching statement for {join_names(others)}."
    cites = [f.evidence for f in hits.values()] + [f.evidence for f in against.values()]
    return Composed(clip(text, limit), tuple(cites), True, False)


def category_answer(
    a: QuestionAnalysis, facts: Sequence[Fact], passages: Sequence[Passage], limit: int
) -> Composed:
    """A yes/no question whether a product belongs to a category ("Is X flammable?"):
    yes with the values that hold every asked word (by stem), no with the values its
    sheet states instead; a product without any value is read from its passages."""
    want = {stem(t) for t in a.filter_terms}
    phrase = a.filter_phrase or " ".join(a.filter_terms)
    parts: list[str] = []
    cites: list[Evidence] = []
    for subject in a.subjects[:4]:
        mine = [f for f in facts if f.doc_id == subject.doc_id and f.status == "stated"]
        if not mine:
            continue
        hits = [f for f in mine if want <= {stem(t) for t in tokens(f.value)}]
        shown = hits or mine
        values = "; ".join(f"{f.value} {cite(f.evidence)}" for f in shown)
        label = in_sentence(re.sub(r"^has\s+", "", shown[0].predicate_label, flags=re.I))
        if hits:
            parts.append(f"Yes: {subject.label}, {label} {values}")
        else:
            parts.append(f"No: no {label} of {subject.label} says {phrase!r}; it states {values}")
        cites += [f.evidence for f in shown]
    if not parts:
        return from_passages(a, passages, prefix="", limit=limit)
    return Composed(clip(". ".join(parts) + ".", limit), tuple(cites), True, False)


def _bounded(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    """Which products' values satisfy a numeric bound ("flash point above 60 °C")."""
    assert a.threshold is not None
    per_doc: dict[str, Fact] = {}
    for f in facts:
        if f.status == "stated" and f.number is not None:
            per_doc.setdefault(f.doc_id, f)
    if not per_doc:
        return Composed(None, (), False, False)
    bound = a.threshold
    said = f"{'above' if bound.op == '>' else 'below'} {bound.value:g}{unit_text(bound.unit)}"
    label = in_sentence(next(iter(per_doc.values())).predicate_label)
    yes = [d for d, f in per_doc.items() if bound.holds(f.number or 0.0, unit=f.unit)]
    names = [doc_name(a, d, per_doc[d].subject) for d in yes]
    head = (
        f"{join_names(names)} {'has' if len(names) == 1 else 'have'} a {label} {said}"
        if names
        else f"None of them has a {label} {said}"
    )
    detail = "; ".join(
        f"{doc_name(a, d, f.subject)}: {f.value} {cite(f.evidence)}" for d, f in per_doc.items()
    )
    missing = [p.label for p in a.subjects if p.doc_id not in per_doc]
    text = f"{head}. Values: {detail}."
    if missing:
        text += f" Not stated for {join_names(missing)}."
    return Composed(clip(text, limit), tuple(f.evidence for f in per_doc.values()), True, False)


def same_answer(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    per_doc: dict[str, Fact] = {}
    for f in facts:
        if f.status == "stated":
            per_doc.setdefault(f.doc_id, f)
    if len(per_doc) < 2:
        return lookup(a, facts, (), limit)
    # a parenthesised part qualifies the value ("8 (5.1)": class 8, subsidiary 5.1): the
    # values are the same when what stands outside the parentheses is; both are shown
    values = _compared(list(per_doc.values()))
    label = in_sentence(next(iter(per_doc.values())).predicate_label)
    detail = "; ".join(
        f"{doc_name(a, d, f.subject)}: {f.value} {cite(f.evidence)}" for d, f in per_doc.items()
    )
    same = len(values) == 1
    head = f"Yes, they share the same {label}" if same else f"No, the {plural(label)} differ"
    return Composed(
        clip(f"{head}: {detail}.", limit), tuple(f.evidence for f in per_doc.values()), True, False
    )


_CODE = re.compile(r"\b[A-Z]{1,3}\s?\d[\w.]*|(?<![\w.])\d[\w.]*")
_SHORT = 8


def _compared(facts: Sequence[Fact]) -> set[str]:
    """What decides whether the values are the same: the codes they print outside
    parentheses when every value is short and prints one ("DOT, IMDG, IATA UN1428" and
    "UN1428"; "< 25 °C" and "below 25 °C"), else the value's text without its
    parenthesised part ("8 (5.1)": class 8, subsidiary 5.1), or the whole text."""
    outside = [re.sub(r"\([^()]*\)", " ", f.value) for f in facts]
    codes = [frozenset(canon(c) for c in _CODE.findall(v)) for v in outside]
    if all(codes) and all(len(v.split()) <= _SHORT for v in outside):
        return {" ".join(sorted(c)) for c in codes}
    return {canon(v) or canon(f.value) for v, f in zip(outside, facts, strict=True)}
