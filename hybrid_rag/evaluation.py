"""Question-set evaluation: the project's grading rules (pure functions, no I/O).

Two rules, written in ``../shared/eval/README.md`` and implemented there as
``grade.py`` (question sets) and ``grade_sets.py`` (collection questions); these functions
grade exactly as those scripts do, and a test compares them on real results files.

Question sets (``grade``): only the first 400 characters of an answer count; both strings
are normalised (NFKC, lower case, unified minus and degree signs, one space, a hyphen
between letters read as a space, ``UN 1090`` read as ``UN1090``) and an accepted string
must occur on word boundaries. ``fact``: any one; ``unanswerable``: an abstention (or no
answer); ``multi_fact``: all; ``narrative``: at least half; ``cross_doc``: the first
sentence (parentheses and anything after a contrast removed) names every accepted product
and no other listed option, a yes/no question leads with yes / no, and an abstention never
passes. An answer that is neither right nor an abstention is ``wrong`` (worse than none).

Collection questions (``grade_set``, items with ``gold_docs``): the documents an answer
names are the doc ids cited in its text plus the ``doc_id`` of every fact; against
``gold_docs`` that gives precision, recall and F1. ``count``: the gold number appears as
a count; ``ambiguous`` / ``synonym`` with accepted values: a value appears and precision is
at least 0.9; every other type: F1 at least 0.8, precision at least 0.9 and, when the item
has accepted values, one of them appears.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ABSTAIN",
    "MAX_CHARS",
    "SetGrade",
    "abstained",
    "cited_ids",
    "context_recalled",
    "context_text",
    "count_hit",
    "grade",
    "grade_set",
    "hit",
    "is_collection",
    "known_ids",
    "normalise",
    "summarise",
    "wrong",
]

MAX_CHARS = 400
ABSTAIN = (
    "not stated",
    "not available",
    "no information",
    "unknown",
    "not provided",
    "no data",
    "not specified",
    "not found",
    "does not state",
    "does not mention",
    "cannot find",
    "could not find",
    "not mentioned",
    "can only answer questions about the documents",
    "do not change, delete",
)
_CONTRAST = r"\s+versus\s+|\s+vs\.?\s+|;|\s+whereas\s+|\s+while\s+|\s+compared\s+|\s+but\s+|\s+-\s+"


def normalise(text: str | None) -> str:
    """The grading normalisation of a string."""
    s = unicodedata.normalize("NFKC", text or "").lower()
    s = re.sub("[\u2212\u2013\u2010\u2011]", "-", s).replace("º", "°").replace("˚", "°")
    s = re.sub(r"\s*°\s*", "°", s)
    s = re.sub(r"(?<=[a-z])\s*-\s*(?=[a-z])", " ", s)
    s = re.sub(r"\bun[\s-]*(?=\d{4}\b)", "un", s)  # UN 1090 == UN-1090 == UN1090
    return re.sub(r"\s+", " ", s).strip()


def hit(needle: str, hay: str, *, after_hyphen: bool = True) -> bool:
    """``needle`` occurs in ``hay`` on word boundaries, both normalised.

    ``after_hyphen=False`` (the collection rule) also refuses a needle that starts with a
    sign or symbol right after a letter, digit or hyphen.
    """
    n, h = normalise(needle), normalise(hay)
    if not n:
        return False
    lead = r"(?<![\w])" if n[0].isalnum() else "" if after_hyphen else r"(?<![\w-])"
    pat = lead + re.escape(n) + (r"(?![\w])" if n[-1].isalnum() else "")
    return re.search(pat, h) is not None


def _options(question: str) -> list[str]:
    """Candidate names listed after the colon of a 'which of these' question."""
    if ":" not in question:
        return []
    tail = question.split(":", 1)[1].rstrip("?. ")
    sep = r";\s*" if ";" in tail else r",\s*|\s+or\s+"
    parts = [re.sub(r"^(or|and)\s+", "", p.strip()) for p in re.split(sep, tail)]
    return [p for p in parts if len(p) > 2]


def _claim(text: str) -> str:
    """The asserting head of an answer: first sentence, no parentheses, before any contrast."""
    head = re.split(r"(?<=[.!?])\s|\n", text, maxsplit=1)[0]
    head = re.sub(r"\([^)]*\)", " ", head)
    return re.split(_CONTRAST, head)[0]


def _is_name(a: str) -> bool:
    return bool(re.search(r"[a-zA-Z]{3,}", a)) and re.fullmatch(r"[-\d.,\s°cfCF]+", a) is None


def _cross_doc(q: Mapping[str, Any], text: str) -> bool:
    acc, claim = list(q["accept"]), _claim(text)
    if any(hit(a, claim) for a in ABSTAIN) or re.match(r"\s*not found\b", normalise(claim)):
        return False  # an abstention names products without answering
    if re.match(r"(do|does|is|are|can|will)\b", q["question"].strip().lower()):
        lead = re.match(r"\s*(yes|no)\b", normalise(claim))
        return (
            lead is not None
            and lead.group(1) == normalise(acc[0])
            and all(hit(a, text) for a in acc[1:])
        )
    names = [a for a in acc if _is_name(a)] or acc[:1]
    if not all(hit(a, claim) for a in names):
        return False
    for option in _options(q["question"]):
        if any(hit(a, option) for a in names):
            continue
        if hit(" ".join(option.split()[:2]).rstrip(","), claim):
            return False
    return True


def grade(question: Mapping[str, Any], answer: str | None) -> bool:
    """Whether ``answer`` is correct for one QA item (``type``, ``question``, ``accept``)."""
    text = (answer or "")[:MAX_CHARS]
    acc: Sequence[str] = question["accept"]
    kind = question["type"]
    if kind == "unanswerable":
        return not text.strip() or any(hit(a, text) for a in [*acc, *ABSTAIN])
    if kind == "multi_fact":
        return all(hit(a, text) for a in acc)
    if kind == "narrative":
        return sum(hit(a, text) for a in acc) * 2 >= len(acc)
    if kind == "cross_doc":
        return _cross_doc(question, text)
    return any(hit(a, text) for a in acc)


def abstained(question: Mapping[str, Any], answer: str | None) -> bool:
    """The answer asserts nothing: no text, or an abstention in its claim.

    A miss on an ``unanswerable`` item never abstained: it asserted a value.
    """
    text = (answer or "")[:MAX_CHARS]
    if question["type"] == "unanswerable":
        return False
    return not text.strip() or any(hit(a, _claim(text)) for a in ABSTAIN)


def wrong(question: Mapping[str, Any], answer: str | None) -> bool:
    """The answer asserts something that is not the answer (neither right nor abstaining)."""
    return not grade(question, answer) and not abstained(question, answer)


def context_text(*parts: object) -> str:
    """Retrieved context (facts and passages as rows or strings) as one searchable text."""
    if len(parts) != 1:
        return " ".join(context_text(p) for p in parts)
    x = parts[0]
    if x is None:
        return ""
    if isinstance(x, str):
        return x
    if isinstance(x, Mapping):
        return " ".join(context_text(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return " ".join(context_text(v) for v in x)
    return str(x)


def context_recalled(question: Mapping[str, Any], context: str) -> bool:
    """Every gold evidence quote (or an accepted answer) is present in the returned context."""
    quotes = [e["quote"] for e in question.get("evidence", [])]
    return all(
        normalise(qt) in normalise(context) or any(hit(a, context) for a in question["accept"])
        for qt in quotes
    )


# --- collection questions (grade_sets.py) -------------------------------------------------

_VALUE_TYPES = ("ambiguous", "synonym")
_WORDS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
]  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_NOT_A_COUNT = (
    r"(?<![a-z])(?:class|division|category|cat\.|un|na|group|pg|page|p\.|pp\.|revision|rev\."
    r"|step|section|h|p|no\.|#)\s*$"
)
_BRACKET = re.compile(r"\[([^\[\]]{1,600})\]")
_PIECE = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9_\-]*)(?:\s+p{1,2}\.?\s*\d+(?:\s*[-\u2013]\s*\d+)?)?\s*$"
)


def is_collection(question: Mapping[str, Any]) -> bool:
    """A question about the whole collection (it lists ``gold_docs``), graded by ``grade_set``."""
    return "gold_docs" in question


def _number_words(n: int) -> list[str]:
    if n < 20:
        return [_WORDS[n]]
    tens = [w for w, v in _TENS.items() if v == n // 10 * 10]
    if not tens:
        return []
    if n % 10 == 0:
        return tens
    return [f"{tens[0]}-{_WORDS[n % 10]}", f"{tens[0]} {_WORDS[n % 10]}"]


def count_hit(number: str, text: str) -> bool:
    """``number`` appears in ``text`` as a count (not as a class, UN number, page, part of
    a longer number); number words count too."""
    t = normalise(text)
    after = r"(?![\w]|[.,]\d|/\d|-\d|\s*%|\s*°)"
    for m in re.finditer(r"(?<![\w.,/-])" + re.escape(str(number)) + after, t):
        if re.search(_NOT_A_COUNT, t[max(0, m.start() - 16) : m.start()]):
            continue
        return True
    try:
        n = int(number)
    except ValueError:
        return False
    words = _number_words(n)
    return any(re.search(r"(?<![\w-])" + re.escape(w) + r"(?![\w-])", t) for w in words)


def cited_ids(text: str | None, known: Iterable[str]) -> list[str]:
    """Doc ids cited in ``text`` as ``[<doc_id> p.N]`` or ``[<doc_id>]`` (several per bracket,
    separated by ``;`` or ``,``): a known id, or a token that looks like one (a letter, a
    ``-`` or ``_``, 6+ characters), since a cited id that does not exist counts too."""
    known = set(known)
    out: list[str] = []
    for m in _BRACKET.finditer(text or ""):
        for piece in re.split(r"[;,]", m.group(1)):
            pm = _PIECE.match(piece)
            if not pm:
                continue
            tok = pm.group(1)
            looks = len(tok) >= 6 and re.search(r"[A-Za-z]", tok) and re.search(r"[-_]", tok)
            if (tok in known or looks) and tok not in out:
                out.append(tok)
    return out


def known_ids(
    questions: Iterable[Mapping[str, Any]], rows: Iterable[Mapping[str, Any]]
) -> set[str]:
    """Every gold doc id, and every doc id of a fact or passage in the results."""
    known = {d for q in questions for d in q.get("gold_docs") or []}
    for r in rows:
        for key in ("facts", "passages"):
            for x in r.get(key) or []:
                if isinstance(x, Mapping) and x.get("doc_id"):
                    known.add(x["doc_id"])
    return known


@dataclass(frozen=True, slots=True)
class SetGrade:
    """How one collection answer did against its ``gold_docs``.

    Attributes:
        correct: The item's rule passed.
        precision: Named gold documents / named documents; ``None`` when it names none.
        recall: Named gold documents / gold documents.
        f1: The harmonic mean of both (0 when it names none).
        named: The documents the answer names (cited in its text, or facts' documents).
        value_hit: An accepted value is in the head of the answer; ``None`` without any.
    """

    correct: bool
    precision: float | None
    recall: float
    f1: float
    named: tuple[str, ...]
    value_hit: bool | None


def grade_set(
    question: Mapping[str, Any],
    answer: str | None,
    facts: Iterable[Mapping[str, Any]],
    known: Iterable[str],
) -> SetGrade:
    """Grade one collection answer (text citing doc ids, plus its facts' ``doc_id``)."""
    text = answer or ""
    head = text[:MAX_CHARS]
    named = cited_ids(text, known)
    for f in facts:
        d = f.get("doc_id")
        if d and d not in named:
            named.append(d)
    gold = set(question.get("gold_docs") or [])
    inter = len(set(named) & gold)
    p = inter / len(set(named)) if named else None
    r = inter / len(gold) if gold else 0.0
    f1 = 2 * p * r / (p + r) if p is not None and p + r else 0.0
    acc = question.get("accept") or []
    value = any(hit(a, head, after_hyphen=False) for a in acc) if acc else None
    kind = question["type"]
    if kind == "count":
        ok = any(count_hit(a, head) for a in acc)
    elif kind in _VALUE_TYPES and acc:
        ok = bool(value) and p is not None and p >= 0.9
    else:
        ok = p is not None and f1 >= 0.8 and p >= 0.9 and (value is None or value)
    return SetGrade(
        correct=bool(ok),
        precision=None if p is None else round(p, 4),
        recall=round(r, 4),
        f1=round(f1, 4),
        named=tuple(named),
        value_hit=value,
    )


# --- summary -------------------------------------------------------------------------------


def _mean(xs: Iterable[float | int | None]) -> float:
    got = [x for x in xs if x is not None]
    return round(sum(got) / len(got), 3) if got else 0.0


def summarise(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Accuracy per mode and question type, plus ``overall``; for question sets also
    context ``recall`` and ``wrong`` (the share of answers asserting something false); for
    collection questions ``precision`` and ``doc_recall`` (count items left out), as
    ``grade.py`` and ``grade_sets.py`` print them."""
    by_mode: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_mode.setdefault(r["mode"], []).append(r)
    out: dict[str, dict[str, float]] = {}
    for mode, got in by_mode.items():
        by_type: dict[str, list[int]] = {}
        for r in got:
            by_type.setdefault(r["type"], []).append(int(r["correct"]))
        every = [x for v in by_type.values() for x in v]
        summary = {t: round(sum(v) / len(v), 3) for t, v in sorted(by_type.items())}
        summary["overall"] = round(sum(every) / len(every), 3)
        qa = [r for r in got if "doc_recall" not in r]
        if qa:
            recalled = [
                int(r["recalled"]) for r in qa if r["type"] != "unanswerable" and "recalled" in r
            ]
            summary["recall"] = _mean(recalled)
            summary["wrong"] = round(sum(bool(r.get("wrong")) for r in qa) / len(qa), 3)
        sets = [r for r in got if "doc_recall" in r and r["type"] != "count"]
        if sets:
            summary["precision"] = _mean(r["precision"] for r in sets)
            summary["doc_recall"] = _mean(r["doc_recall"] for r in sets)
        out[mode] = summary
    return out
