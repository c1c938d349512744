"""The grounding check on a model's answer: citations that point somewhere, numbers that exist.

Pure functions, no I/O. ``check_grounding`` reads a synthesised text written over
numbered sources (``[1]`` ... ``[n]``) and

* removes every marker that points to no source (``[7]`` with five sources) and counts it;
* lists every number (with its unit, when one follows) that appears in none of the cited
  sources (nor in the question). Numbers are compared as values (``-20`` = ``−20.0``), a
  unit must appear in a source that holds the number, and numbers inside identifiers
  (``H225``, ``67-64-1``) are part of those identifiers, not quantities. An answer that
  cites nothing is checked against nothing: any number in it is unsupported.

The caller decides what a failure means; the supervisor serves the extractive answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Grounding", "check_grounding", "renumber"]

_MARKER = re.compile(r"\s?\[(\d{1,3})\]")
_NUM = r"(?:(?<![\w.,])[-−–])?(?<![\w.,])\d+(?:[.,]\d+)?"
_UNIT = (
    r"°\s?[CFK]|%|ppm|ppb|mg\s?/\s?m[³3]|mg\s?/\s?kg|mg\s?/\s?l|g\s?/\s?cm[³3]|g\s?/\s?ml|"
    r"kg\s?/\s?m[³3]|hpa|kpa|mpa|mmhg|mbar|bar|pa\b|k\b"
)
_QUANTITY = re.compile(rf"(?P<n>{_NUM})\s*(?P<u>{_UNIT})?", re.I)
_IDENTIFIER = re.compile(r"\b\d{2,7}-\d{2}-\d\b")  # CAS numbers are names, not quantities


@dataclass(frozen=True, slots=True)
class Grounding:
    """The checked text and what the check found.

    Attributes:
        text: the model's text without markers that point nowhere.
        cited: the 1-based source numbers the text cites (valid ones), in order.
        dangling: the markers removed (their numbers).
        unsupported: numbers (with unit) that no cited source states.
    """

    text: str
    cited: tuple[int, ...]
    dangling: tuple[int, ...]
    unsupported: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Whether every number in the text is stated by a cited source."""
        return not self.unsupported


def check_grounding(text: str, sources: Sequence[str], *, question: str = "") -> Grounding:
    """Check ``text`` written over ``sources`` (the text of source ``k`` is ``sources[k-1]``).

    Example:
        >>> g = check_grounding("Flash point -20 °C [1] [7].", ["Flash point: -20 °C"])
        >>> g.text, g.dangling, g.ok
        ('Flash point -20 °C [1].', (7,), True)
        >>> check_grounding("It is 42 °C [1].", ["Flash point: -20 °C"]).unsupported
        ('42 °C',)
    """
    n = len(sources)
    numbers = [int(m.group(1)) for m in _MARKER.finditer(text)]
    dangling = tuple(k for k in numbers if not 0 < k <= n)
    clean = _MARKER.sub(lambda m: m.group(0) if 0 < int(m.group(1)) <= n else "", text)
    cited = tuple(dict.fromkeys(int(m.group(1)) for m in _MARKER.finditer(clean)))
    body = _IDENTIFIER.sub(" ", _MARKER.sub(" ", clean))
    backing = [sources[k - 1] for k in cited]
    unsupported = tuple(
        q for q in dict.fromkeys(_quantities(body)) if not _stated(q, backing, question)
    )
    return Grounding(clean.strip(), cited, dangling, unsupported)


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
