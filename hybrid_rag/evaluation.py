"""Question-set evaluation: the project's grading rule and a runner (no I/O in the rule).

The rule (also in ``../shared/eval/README.md``): only the first 400 characters of an answer
count; both strings are normalised (NFKC, lower case, unified minus and degree signs, one
space, a hyphen between letters read as a space) and an accepted string must occur on word
boundaries. ``fact``: any one; ``unanswerable``: an abstention (or no answer);
``multi_fact``: all; ``narrative``: at least half; ``cross_doc``: the first sentence
(parentheses and anything after a contrast removed) names every accepted product and no
other listed option, and a yes/no question leads with yes / no.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["ABSTAIN", "MAX_CHARS", "context_recalled", "grade", "hit", "normalise", "summarise"]

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
)
_CONTRAST = r"\s+versus\s+|\s+vs\.?\s+|;|\s+whereas\s+|\s+while\s+|\s+compared\s+|\s+but\s+|\s+-\s+"


def normalise(text: str) -> str:
    """The grading normalisation of a string."""
    s = unicodedata.normalize("NFKC", text or "").lower()
    s = re.sub("[\u2212\u2013\u2010\u2011]", "-", s).replace("º", "°").replace("˚", "°")
    s = re.sub(r"\s*°\s*", "°", s)
    s = re.sub(r"(?<=[a-z])\s*-\s*(?=[a-z])", " ", s)
    return re.sub(r"\s+", " ", s).strip()


def hit(needle: str, hay: str) -> bool:
    """``needle`` occurs in ``hay`` on word boundaries, both normalised."""
    n, h = normalise(needle), normalise(hay)
    if not n:
        return False
    pat = (r"(?<![\w])" if n[0].isalnum() else "") + re.escape(n)
    pat += r"(?![\w])" if n[-1].isalnum() else ""
    return re.search(pat, h) is not None


def _options(question: str) -> list[str]:
    if ":" not in question:
        return []
    tail = question.split(":", 1)[1].rstrip("?. ")
    sep = r";\s*" if ";" in tail else r",\s*|\s+or\s+"
    parts = [re.sub(r"^(or|and)\s+", "", p.strip()) for p in re.split(sep, tail)]
    return [p for p in parts if len(p) > 2]


def _claim(text: str) -> str:
    head = re.split(r"(?<=[.!?])\s|\n", text, maxsplit=1)[0]
    head = re.sub(r"\([^)]*\)", " ", head)
    return re.split(_CONTRAST, head)[0]


def _is_name(a: str) -> bool:
    return bool(re.search(r"[a-zA-Z]{3,}", a)) and re.fullmatch(r"[-\d.,\s°cfCF]+", a) is None


def _cross_doc(q: Mapping[str, Any], text: str) -> bool:
    acc, claim = list(q["accept"]), _claim(text)
    if re.match(r"(do|does|is|are|can|will)\b", q["question"].strip().lower()):
        return hit(acc[0], claim) and all(hit(a, text) for a in acc[1:])
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


def context_recalled(question: Mapping[str, Any], context: str) -> bool:
    """Every gold evidence quote (or an accepted answer) is present in the returned context."""
    quotes = [e["quote"] for e in question.get("evidence", [])]
    return all(
        normalise(qt) in normalise(context) or any(hit(a, context) for a in question["accept"])
        for qt in quotes
    )


def summarise(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Accuracy per mode and question type (plus ``overall`` and context ``recall``)."""
    acc: dict[str, dict[str, list[int]]] = {}
    rec: dict[str, list[int]] = {}
    for r in rows:
        by_type = acc.setdefault(r["mode"], {})
        by_type.setdefault(r["type"], []).append(int(r["correct"]))
        if r["type"] != "unanswerable" and "recalled" in r:
            rec.setdefault(r["mode"], []).append(int(r["recalled"]))
    out: dict[str, dict[str, float]] = {}
    for mode, by_type in acc.items():
        every = [x for v in by_type.values() for x in v]
        out[mode] = {t: round(sum(v) / len(v), 3) for t, v in sorted(by_type.items())}
        out[mode]["overall"] = round(sum(every) / len(every), 3)
        got = rec.get(mode, [])
        out[mode]["recall"] = round(sum(got) / len(got), 3) if got else 0.0
    return out
