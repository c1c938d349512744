"""The grounding check on a model's answer: every claim tied to a source that states it.

Pure functions, no I/O. ``check_grounding`` reads a synthesised text written over
numbered sources (``[1]`` ... ``[n]``) and

* removes every marker that points to no source (``[7]`` with five sources) and counts it;
* splits the text into claims (sentences and list items) and ties each one to a source
  that states it: the source it cites when that source holds the claim's numbers and
  most of its words, else the source that does. The library writes the markers: a claim
  the model left unmarked gets the marker of the source found for it, and a marker that
  points to a source which does not state the claim is replaced. A claim no source
  states is listed in ``unsupported_claims``;
* lists every number (with its unit, when one follows) that appears in none of the
  sources of its claim (nor in the question). Numbers are compared as values (``-20`` =
  ``−20.0``), a unit must appear in a source that holds the number, numbers inside
  identifiers (``H225``, ``67-64-1``) are part of those identifiers, and list numbering
  ("1.", "2)", "Step 3") is not a quantity.

A claim is stated by a source when the source holds every number of the claim and at
least ``min_cover`` of its content words (stems of words of 3+ letters, common
words aside), or all of them but one.
The caller decides what a failure means; the supervisor serves the extractive answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Grounding", "check_grounding", "content_words", "renumber"]

# (the patterns below are shared by the claim check and the number check)

_MARKER = re.compile(r"\s?\[(\d{1,3})\]")
_NUM = r"(?:(?<![\w.,])[-−–])?(?<![\w.,])\d+(?:[.,]\d+)?"
_UNIT = (
    r"°\s?[CFK]|%|ppm|ppb|mg\s?/\s?m[³3]|mg\s?/\s?kg|mg\s?/\s?l|g\s?/\s?cm[³3]|g\s?/\s?ml|"
    r"kg\s?/\s?m[³3]|hpa|kpa|mpa|mmhg|mbar|bar|pa\b|k\b"
)
_QUANTITY = re.compile(rf"(?P<n>{_NUM})\s*(?P<u>{_UNIT})?", re.I)
_IDENTIFIER = re.compile(r"\b\d{2,7}-\d{2}-\d\b")  # CAS numbers are names, not quantities


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"(])|\n+")
_NUMBERING = re.compile(r"(?m)^\s*(?:[-*•]|\(?\d{1,2}[.)]|step\s+\d{1,2}[.:)]?)\s+", re.I)
_LONE_NUMBER = re.compile(r"^\s*(?:\(?\d{1,2}[.)]|step\s+\d{1,2}[.:)]?)\s*$", re.I)
_STEP = re.compile(r"\bstep\s+\d{1,2}\b", re.I)
_WORD = re.compile(r"[^\W\d_]{3,}")
_COMMON = frozenset(
    (
        "the", "and", "for", "with", "from", "that", "this", "these", "those", "are",
        "was", "were", "has", "have", "had", "its", "their", "not", "any", "all", "can",
        "may", "should", "must", "will", "into", "onto", "than", "then", "there", "which",
        "what", "when", "where", "who", "how", "also", "such", "use", "used", "using",
        "according", "document", "documents", "source", "sources", "sheet", "states",
        "stated", "says", "given", "provided", "listed", "based", "information", "see",
        "refer", "note", "please", "per", "like", "about", "only", "each", "both", "very",
    )
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Grounding:
    """The checked text and what the check found.

    Attributes:
        text: the model's text, its markers written by the check (see the module).
        cited: the 1-based source numbers the text cites (valid ones), in order.
        dangling: the markers removed (their numbers).
        unsupported: numbers (with unit) that no source of their claim states.
        unsupported_claims: claims (sentences) that no source states.
        added: how many claims got a marker the model had not written (or a better one).
        informative: how many claims say something the question does not (a word or a
            number of their own): a reply of none only restates the question.
    """

    text: str
    cited: tuple[int, ...]
    dangling: tuple[int, ...]
    unsupported: tuple[str, ...]
    unsupported_claims: tuple[str, ...] = ()
    added: int = 0
    informative: int = 0

    @property
    def ok(self) -> bool:
        """Whether every claim and every number in the text is stated by a source."""
        return not self.unsupported and not self.unsupported_claims


def check_grounding(
    text: str, sources: Sequence[str], *, question: str = "", min_cover: float = 0.6
) -> Grounding:
    """Check ``text`` written over ``sources`` (the text of source ``k`` is ``sources[k-1]``).

    Example:
        >>> g = check_grounding("Flash point -20 °C [1] [7].", ["Flash point: -20 °C"])
        >>> g.text, g.dangling, g.ok
        ('Flash point -20 °C [1].', (7,), True)
        >>> check_grounding("It is 42 °C [1].", ["Flash point: -20 °C"]).unsupported
        ('42 °C',)
        >>> check_grounding("The flash point is -20 °C.", ["Flash point: -20 °C"]).text
        'The flash point is -20 °C [1].'
    """
    n = len(sources)
    numbers = [int(m.group(1)) for m in _MARKER.finditer(text)]
    dangling = tuple(k for k in numbers if not 0 < k <= n)
    clean = _MARKER.sub(lambda m: m.group(0) if 0 < int(m.group(1)) <= n else "", text).strip()
    out: list[str] = []
    unsupported: list[str] = []
    claims_missing: list[str] = []
    added = informative = 0
    for claim, gap in _claims(clean):
        body = _MARKER.sub("", claim).strip()
        own = {q for q in _quantities(_plain(body)) if not _stated(q, [], question)}
        informative += bool(own or _words(body) - _words(question))
        marks = [int(m.group(1)) for m in _MARKER.finditer(claim)]
        found = _backing(body, marks, sources, question, min_cover)
        if found is None and _words(body) - _words(question):
            claims_missing.append(body)
        cites = marks if found is None or found in marks else [found]
        added += int(found is not None and found not in marks)
        backing = [sources[k - 1] for k in cites]
        unsupported += [q for q in _quantities(_plain(body)) if not _stated(q, backing, question)]
        out.append(_with_marks(body, cites) + gap)
    checked = "".join(out).strip()
    cited = tuple(dict.fromkeys(int(m.group(1)) for m in _MARKER.finditer(checked)))
    return Grounding(
        checked,
        cited,
        dangling,
        tuple(dict.fromkeys(unsupported)),
        tuple(claims_missing),
        added,
        informative,
    )


def _claims(text: str) -> list[tuple[str, str]]:
    """``(claim, whitespace after it)`` for each sentence or list item of ``text``."""
    out: list[tuple[str, str]] = []
    pos = 0
    for m in _SENTENCE.finditer(text):
        if text[pos : m.start()].strip():
            out.append((text[pos : m.start()], m.group(0)))
        pos = m.end()
    if text[pos:].strip():
        out.append((text[pos:], ""))
    merged: list[tuple[str, str]] = []
    for claim, gap in out:  # "1." alone is the numbering of the item after it
        if merged and _LONE_NUMBER.match(merged[-1][0]):
            claim = merged[-1][0] + merged.pop()[1] + claim
        merged.append((claim, gap))
    return merged


def _plain(text: str) -> str:
    """The text as quantities are read: list numbering, steps and identifiers taken out."""
    return _IDENTIFIER.sub(" ", _STEP.sub(" ", _NUMBERING.sub(" ", text)))


def content_words(text: str) -> set[str]:
    """The content-word stems the check compares (see ``_words``), citations taken out."""
    return _words(_MARKER.sub(" ", re.sub(r"\[[\w.-]+ p\.\d+\]", " ", text)))


def _words(text: str) -> set[str]:
    """Content-word stems: lower case, a plain ending off ("melts", "melting" -> "melt"),
    the first 6 letters."""
    out = set()
    for w in (m.lower() for m in _WORD.findall(text)):
        if w not in _COMMON:
            out.add((_ENDING.sub("", w) if len(w) > 4 else w)[:6])
    return out


_ENDING = re.compile(r"(?:ing|ed|es|s)$")


def _backing(
    claim: str, marks: Sequence[int], sources: Sequence[str], question: str, min_cover: float
) -> int | None:
    """The source stating ``claim``: a cited one when it does, else the best other one."""
    words = _words(claim) - _words(question)
    numbers = {q for q in _quantities(_plain(claim)) if not _stated(q, [], question)}

    def states(k: int) -> float:
        src = sources[k - 1]
        if any(not _stated(q, [src], question) for q in numbers):
            return 0.0
        if not words:
            return 1.0
        held = len(words & _words(src))
        missing = len(words) - held
        # a claim may use a word or two of its own ("see", "flashes at") around what it states
        ok = held / len(words) >= min_cover or (held and missing <= 1)
        return held / len(words) if ok else 0.0

    for k in marks:
        if 0 < k <= len(sources) and states(k) > 0:
            return k
    scored = [(states(k), -k) for k in range(1, len(sources) + 1)]
    best = max(scored, default=(0.0, 0))
    return -best[1] if best[0] > 0 else None


def _with_marks(claim: str, cites: Sequence[int]) -> str:
    """``claim`` ending with its markers (before its final stop)."""
    if not cites:
        return claim
    marks = "".join(f" [{k}]" for k in dict.fromkeys(cites))
    stripped = claim.rstrip()
    if stripped and stripped[-1] in ".!?;:":
        return f"{stripped[:-1].rstrip()}{marks}{stripped[-1]}"
    return f"{stripped}{marks}"


def _quantities(text: str) -> list[str]:
    out = []
    for m in _QUANTITY.finditer(text):
        unit = re.sub(r"\s+", " ", m.group("u") or "").strip()
        out.append(f"{m.group('n')} {unit}".strip())
    return out


def _stated(quantity: str, backing: Sequence[str], question: str) -> bool:
    """A bare number must be in a source; a number with a unit must be there with it."""
    number, _, unit = quantity.partition(" ")
    value = _value(number)
    if value is None or (value, _unit_key(unit)) in _pairs(question):
        return True
    want = (value, _unit_key(unit))
    return any(want in _pairs(src) for src in backing)


def _pairs(text: str) -> set[tuple[float, str]]:
    """``(value, unit)`` of every number in ``text``, and ``(value, "")`` for each too."""
    out: set[tuple[float, str]] = set()
    for q in _quantities(_IDENTIFIER.sub(" ", text)):
        number, _, unit = q.partition(" ")
        value = _value(number)
        if value is not None:
            out |= {(value, _unit_key(unit)), (value, "")}
    return out


def _value(number: str) -> float | None:
    try:
        return float(number.replace("−", "-").replace("–", "-").replace(",", "."))
    except ValueError:
        return None


def _unit_key(unit: str) -> str:
    return re.sub(r"\s+", "", unit.casefold()).replace("³", "3")


def renumber(text: str, cited: Sequence[int]) -> str:
    """Markers rewritten so ``[k]`` is the k-th of ``cited`` (``Answer.citations`` order).

    Example:
        >>> renumber("A [3], B [1], C [3].", [3, 1])
        'A [1], B [2], C [1].'
    """
    index = {n: i for i, n in enumerate(cited, 1)}
    return re.sub(r"\[(\d{1,3})\]", lambda m: f"[{index.get(int(m.group(1)), m.group(1))}]", text)
