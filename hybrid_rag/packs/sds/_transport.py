"""Transport values (section 14) that one line of the sheet does not complete.

- A UN number printed as its four digits under a label that does not say UN ("ID Number:
  1208", where DOT's identification numbers may be NA numbers) is that UN number when the
  same sheet prints those digits as a UN number elsewhere ("UN Number: 1208" under
  another mode, read as UN1208): the value is written UN1208, its quote kept.
- "Marine pollutant: yes" over a line that names a substance and nothing else: the
  IMDG Code has the marine pollutant's name shown with the mark, so that name is part
  of the value ("yes (Methyl isopropenyl cyclohexene)"), quoted over both lines.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hybrid_rag.ingest.reading.pack import Reading
    from hybrid_rag.models import Page
    from hybrid_rag.types import ExtractedFact

__all__ = ["marine_pollutant_name", "noted", "un_number"]

_DIGITS = re.compile(r"\d{4}")
_UN = re.compile(r"UN\s*-?\s*(\d{4})")
_YES = frozenset(("yes", "y"))
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9'\-]*(?:[ ,][ ]?[A-Za-z0-9(][A-Za-z0-9'\-()]*){0,7}")
"""A substance's name alone on its line: up to eight words, no colon, no sentence."""


def un_number(reading: Reading, fact: ExtractedFact) -> None:
    """Write a UN number kept as bare digits with its prefix once the sheet prints the
    same digits as a UN number (see the module docstring), in whichever order."""
    if fact.prop != "unNumber" or fact.status != "stated":
        return
    prefixed: set[str] = reading.memo.setdefault("un_prefixed", set())
    bare: list[ExtractedFact] = reading.memo.setdefault("un_bare", [])
    value = fact.value.strip()
    if _DIGITS.fullmatch(value):
        if value in prefixed:
            reading.amend(fact, replace(fact, value="UN" + value))
        else:
            bare.append(fact)
        return
    m = _UN.fullmatch(value)
    if m is None:
        return
    digits = m.group(1)
    prefixed.add(digits)
    for old in [f for f in bare if f.value.strip() == digits]:
        bare.remove(old)
        reading.amend(old, replace(old, value="UN" + digits))


def noted(reading: Reading, fact: ExtractedFact) -> None:
    """Remember a "Marine pollutant: yes" fact for the line after it."""
    if fact.prop == "marinePollutant" and fact.value.strip().lower() in _YES:
        reading.memo["marine"] = fact


def marine_pollutant_name(reading: Reading, page: Page, line: str, start: int) -> None:
    """The line after "Marine pollutant: yes": when it is a substance's name alone, the
    name joins the value (see the module docstring)."""
    fact: ExtractedFact | None = reading.memo.pop("marine", None)
    name = line.strip()
    if fact is None or fact.page != page.number or not _NAME.fullmatch(name):
        return
    at = page.text.rfind(fact.quote, 0, start)
    if at < 0 or page.text[at + len(fact.quote) : start].strip():
        return  # not the line right under the fact's own
    if page.text[start + len(line) :].lstrip().startswith(":"):
        return  # a label whose value the next line holds ("Segregation group" / ": None")
    quote = page.text[at : start + len(line)].rstrip()
    reading.amend(fact, replace(fact, value=f"{fact.value.strip()} ({name})", quote=quote))
