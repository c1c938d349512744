"""Generic question grammar (pure): comparison words, polar questions, requests.

Only English grammar lives here: question words, comparatives and superlatives,
negation, and the verbs of requests to change or reveal the system. Which words name
which *property* comes from the ontology (labels, alternative and hidden labels), never
from this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Literal

from hybrid_rag.units import convert, currency_code

__all__ = [
    "COMPARISON_WORDS",
    "DateSpan",
    "Direction",
    "Threshold",
    "comparison_direction",
    "comparison_words",
    "creative_request",
    "date_span",
    "is_month",
    "is_polar",
    "main_clause",
    "threshold",
    "unsafe_request",
]

Direction = Literal["min", "max"]

_MORE = (  # "above" / "below" make a comparison only with a number: see threshold()
    r"highest|maximum|largest|greatest|biggest|most|hottest|warmest|strongest|latest|newest|"
    r"higher|greater|larger|bigger|more|hotter|warmer|stronger|later|newer"
)
_LESS = (
    r"lowest|minimum|smallest|least|fewest|coldest|coolest|weakest|earliest|oldest|cheapest|"
    r"lower|less|smaller|fewer|colder|cooler|weaker|earlier|older|cheaper"
)
# "issued first?", "expires last:": in time, at the end of a clause ("first aid" is none)
_ORDER = ("first", "last")
COMPARISON_WORDS = frozenset(_MORE.split("|") + _LESS.split("|") + list(_ORDER))
"""The single words that make a comparison ("higher", "lowest" ...)."""
_DIRECTION = re.compile(
    rf"\b(?P<more>{_MORE}|last(?=\s*(?:[:?,.;]|$)))\b"
    rf"|\b(?P<less>{_LESS}|first(?=\s*(?:[:?,.;]|$)))\b",
    re.I,
)
_POLAR = re.compile(r"^\s*(?:is|are|does|do|has|have|was|were|can|could|will|would)\b", re.I)
_ASKING = (  # words a question or request starts with
    r"what|which|who|whose|where|when|why|how|is|are|was|were|do|does|did|has|have|had|"
    r"can|could|should|would|will|shall|may|might|must|give|list|tell|show|name|compare|"
    r"describe|explain|find"
)
_LEAD_IN = re.compile(rf"^[^:?!;]{{1,60}}?(?::|,|\s[-\u2013\u2014]\s)\s*(?=(?:{_ASKING})\b)", re.I)
_ASKS = re.compile(rf"\b(?:{_ASKING})\b", re.I)
_NEGATED = re.compile(r"\bnot\s+(?:as|so)\b", re.I)

_CHANGE = (
    r"delete|remove|drop|erase|wipe|purge|destroy|truncate|clear|insert|update|modify|"
    r"alter|overwrite|replace|edit|change|add|upload|ingest|forget|rename|corrupt"
)
_DATA = (
    r"documents?|sheets?|sds|files?|data|database|db|stores?|graphs?|index(?:es)?|"
    r"records?|entries|triples?|chunks?|vectors?|catalog(?:ue)?|collection|"
    r"knowledge\s+base"
)
_REVEAL = (
    r"reveal|show|print|display|dump|leak|expose|tell|give|list|output|repeat|what\s+(?:is|are)"
)
_SECRET = (  # what a system keeps to itself; "the instructions" of a sheet are not in it
    r"system\s+prompt|passwords?|credentials?|api[\s_-]?keys?|secrets?|access\s+tokens?|"
    r"connection\s+strings?|environment\s+variables?|service\s+keys?"
)
_OWN = r"system\s+prompt|prompts?|instructions|configuration|config|rules"
_CHANGE_DATA = re.compile(rf"\b(?P<verb>{_CHANGE})\b[^?.!]*\b(?:{_DATA})\b", re.I)
# "any change in the number of stores" asks about a change; "change the data" requests one
_NOUN_BEFORE = re.compile(r"\b(?:a|an|any|the|no|this|that|some|every|each|what)\s+$", re.I)
_NOUN_AFTER = re.compile(r"^\s+(?:in|to|of|for|on|at|between|over|since|from|is|was|were)\b", re.I)
_UNSAFE = [
    re.compile(
        rf"\b(?:{_REVEAL})\b[^?.!]*\b(?:your|the|its|my)\s+(?:[\w-]+\s+){{0,2}}(?:{_SECRET})\b",
        re.I,
    ),
    re.compile(rf"\b(?:{_REVEAL})\b[^?.!]*\byour\s+(?:{_OWN})\b", re.I),
    re.compile(r"\bignore\s+(?:all\s+|any\s+)?(?:the\s+)?(?:previous|prior|above|earlier)\b", re.I),
    re.compile(r"\b(?:run|execute)\b[^?.!]*\b(?:sql|sparql|query|command|code|script)\b", re.I),
]
_CREATIVE = re.compile(
    r"\b(?:write|compose|make|create|generate|invent|tell)\b[^?.!]*\b(?:poem|haiku|limerick|"
    r"song|lyrics|story|joke|essay|rap|sonnet|riddle|slogan|tweet)s?\b",
    re.I,
)


_LESSER = (
    r"lower|less|smaller|fewer|colder|cooler|weaker|earlier|older|lighter|cheaper|thinner"
    r"|shorter|slower|softer"
)
_NOT_COMPARATIVE = r"other|rather|either|neither|whether|further|together|after|under|over"
_NEGATED_MORE = r"\b(?:no|not)\s+(?:more|higher|greater|larger|bigger|hotter|warmer|above|over)"
_NEGATED_LESS = r"\b(?:no|not)\s+(?:less|lower|smaller|fewer|colder|cooler|below|under)"
_ABOVE = (
    rf"{_NEGATED_LESS}(?:\s+than)?|"  # "no lower than 60 °C": at or above
    r"above|over|greater\s+than|more\s+than|higher\s+than|exceeding|exceeds?|at\s+least|>=?"
    rf"|\b(?:(?!(?:{_LESSER}|{_NOT_COMPARATIVE})\b)[a-z]{{2,}}er|more\s+[a-z]+)\s+than"
)  # "denser than 1.6 g/cm3", "more volatile than"
_BELOW = (
    rf"{_NEGATED_MORE}(?:\s+than)?|"  # "no higher than 60 °C", "not above": at or below
    rf"below|under|\b(?:{_LESSER}|less\s+[a-z]+)\s+than|at\s+most|<=?"
)
_NUMBER = r"[-−]?\d+(?:[.,]\d+)?"
_UNIT = (
    r"(?:°|deg(?:rees?)?)?\s*(?:Fahrenheit|Celsius|Kelvin)\b|°\s*[CF]\b|deg(?:rees)?\s*[CF]\b|%"
    r"|[A-Za-z/]+[0-9³²]?"
)
_BOUND = re.compile(
    rf"(?:(?P<above>{_ABOVE})|(?P<below>{_BELOW}))\s*(?P<sign>[$€£¥₹])?\s*"
    rf"(?P<n>{_NUMBER})\s*(?P<unit>{_UNIT})?",
    re.I,
)


_BETWEEN = re.compile(
    rf"\bbetween\s+(?P<sign>[$€£¥₹])?\s*(?P<n>{_NUMBER})\s*(?P<u1>{_UNIT})?\s+and\s+"
    rf"[$€£¥₹]?\s*(?P<m>{_NUMBER})\s*(?P<unit>{_UNIT})?",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Threshold:
    """A numeric bound in a question: ``op`` ``>`` or ``<``, the number, its unit as
    written; with ``upper``, a span ("between 20 and 60 °C": above ``value`` and below
    ``upper``); ``inclusive`` for one the number itself meets ("at least 300 °C", "no
    higher than 60 °C")."""

    op: Literal[">", "<"]
    value: float
    unit: str | None = None
    upper: float | None = None
    inclusive: bool = False

    def in_celsius(self) -> float:
        """The bound in °C when it was written in °F or K (else unchanged)."""
        converted = convert(self.value, self.unit, "°C")
        return self.value if converted is None else converted

    def holds(self, number: float, *, unit: str | None) -> bool:
        """Whether ``number`` (in ``unit``) satisfies the bound, the bound converted to
        ``unit`` when both measure one quantity (°F or K to °C, kPa to mmHg)."""
        converted = convert(self.value, self.unit, unit)
        bound = self.value if converted is None else converted
        if self.upper is not None:
            high = convert(self.upper, self.unit, unit)
            return bound < number < (self.upper if high is None else high)
        if self.inclusive:
            return number >= bound if self.op == ">" else number <= bound
        return number > bound if self.op == ">" else number < bound

    def said(self) -> str:
        """The bound in words ("above 60 °C", "between 20 and 60 °C")."""
        unit = "" if not self.unit else self.unit if self.unit[0] in "°%" else f" {self.unit}"
        if self.upper is not None:
            return f"between {self.value:g} and {self.upper:g}{unit}"
        if self.inclusive:
            return f"{'at least' if self.op == '>' else 'at most'} {self.value:g}{unit}"
        return f"{'above' if self.op == '>' else 'below'} {self.value:g}{unit}"


def threshold(text: str) -> Threshold | None:
    """The first numeric bound in ``text`` ("above 60 °C", "less than 7", "between 20
    and 60 °C"), or ``None``."""
    span = _BETWEEN.search(text)
    m = span or _BOUND.search(text)
    if m is None:
        return None
    value = _float(m.group("n"))
    unit = (m.group("unit") or (m.group("u1") if span else "") or "").strip() or m.group("sign")
    unit = _temperature_unit(unit) if unit else unit
    unit = (currency_code(unit) or unit) if unit else None  # "500 euros", "€500": EUR
    if span is not None:
        low, high = sorted((value, _float(m.group("m"))))
        return Threshold(">", low, unit, upper=high)
    said = (m.group("above") or m.group("below") or "").lower()
    inclusive = said.startswith(("no", "at", ">=", "<="))  # "no higher than", "at least"
    return Threshold(">" if m.group("above") else "<", value, unit, inclusive=inclusive)


def _temperature_unit(unit: str) -> str:
    """A temperature's unit as written in words or with "deg" ("degrees Fahrenheit",
    "deg C", "Celsius") as a symbol (°F, °C, K); any other unit as it is."""
    words = unit.lower().replace("°", " ").split()
    last = words[-1] if words else ""
    if last in ("fahrenheit", "celsius"):
        return "°" + last[0].upper()
    if last == "kelvin":
        return "K"
    return "°" + unit[-1].upper() if unit.lower().startswith("deg") else unit


def _float(text: str) -> float:
    return float(text.replace(",", ".").replace("−", "-"))


@dataclass(frozen=True, slots=True)
class DateSpan:
    """A time a question asks about: ``[start, end)`` in days since 1970-01-01 (the
    typed value of a date), and the words that said it ("in December 2021")."""

    start: float
    end: float
    said: str

    def holds(self, day: float) -> bool:
        """Whether a date (days since 1970-01-01) falls in the span."""
        return self.start <= day < self.end


_MONTH_NAMES = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_SPAN = re.compile(
    r"\b(?:(?P<rel>in|of|from|dated|during|since|after|before|until|by|on|prior\s+to"
    r"|(?:later|newer|earlier|older)\s+than)\s+)?"
    rf"(?:(?P<month>{_MONTH})\s+)?(?P<year>(?:19|20)\d{{2}})\b(?![-/.]\d)",
    re.I,
)
_DATE_VERB = re.compile(
    r"\b(?:dated|issued|revised|revision|updated|prepared|effective|released|published)\b"
    r"|\b(?:older|newer)\s+than\s+(?:19|20)\d{2}\b",
    re.I,
)
_EPOCH = date(1970, 1, 1)


def date_span(text: str, *, asked_date: bool) -> DateSpan | None:
    """The month or year a question bounds a date by ("revised in 2023", "dated
    December 2021", "issued before 2015", "since March 2020"), or ``None``.

    Only when the question asks a date (``asked_date``: a date property is asked) or
    says one with a word of dating ("dated", "issued", "revised"): a bare year is no
    date in "the 2019 edition of the standard".
    """
    if not asked_date and not _DATE_VERB.search(text):
        return None
    if (between := _BETWEEN_DATES.search(text)) is not None:
        return _between(between)
    if (part := _PART.search(text)) is not None:
        return _part_of_year(part)
    m = _SPAN.search(text)
    if m is None:
        return None
    year = int(m.group("year"))
    month = _month(m.group("month"))
    if month is None and m.group("month"):
        return None
    first = date(year, month or 1, 1)
    after = date(year + (month == 12), month % 12 + 1, 1) if month else date(year + 1, 1, 1)
    start, end = float((first - _EPOCH).days), float((after - _EPOCH).days)
    rel = _RELATION.get(re.sub(r"\s+", " ", (m.group("rel") or "").lower()), "")
    said = m.group(0).strip()
    when = said[len(m.group("rel") or "") :].strip()
    if rel in ("after", "before") and " " in m.group("rel"):
        said = f"{rel} {when}"  # "older than 2012": before 2012
    if rel in ("since", "after") and _NOT_SINCE.search(text[: m.start()]):
        said = f"before {when}" if rel == "since" else f"{when} or before"
        rel = "before" if rel == "since" else "until"  # "not revised since 2015": before it
    if rel == "after":
        start, end = end, float("inf")
    elif rel == "since":
        end = float("inf")
    elif rel == "before":
        start, end = float("-inf"), start
    elif rel == "until":
        start = float("-inf")
    return DateSpan(start, end, said)


_RELATION = {
    "after": "after", "later than": "after", "newer than": "after", "since": "since",
    "before": "before", "earlier than": "before", "older than": "before", "prior to": "before",
    "until": "until", "by": "until",
}  # fmt: skip
"""The words that bound a date on one side, by the side they bound it on."""
_NOT_SINCE = re.compile(
    r"\b(?:not|n't|never)\s+(?:been\s+|had\s+)?(?:\w+\s+){0,2}?"
    r"(?:dated|issued|revised|updated|prepared|released|published|changed|reviewed)\s*$",
    re.I,
)
"""A date verb denied right before its bound: "not been revised since 2015" is a last
revision before 2015."""
_PART = re.compile(
    r"\b(?:(?:the\s+)?(?P<nth>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+"
    r"(?P<unit>half|quarter)\s+of|(?P<q>q[1-4])|(?P<h>h[12]))\s+(?P<year>(?:19|20)\d{2})\b",
    re.I,
)
"""A half or a quarter of a year ("the first half of 2025", "Q3 2024", "H2 2023")."""
_NTH = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}


def _part_of_year(m: re.Match[str]) -> DateSpan | None:
    """The months of a half or a quarter of a year, as a span."""
    year = int(m.group("year"))
    if m.group("q") or m.group("h"):
        months = 3 if m.group("q") else 6
        index = int((m.group("q") or m.group("h"))[1])
    else:
        months = 6 if m.group("unit").lower() == "half" else 3
        nth = m.group("nth").lower()
        index = 12 // months if nth == "last" else _NTH[nth]
    if index * months > 12:
        return None  # "the third half"
    first = date(year, (index - 1) * months + 1, 1)
    end_month = index * months
    last = date(year + (end_month == 12), end_month % 12 + 1, 1)
    return DateSpan(float((first - _EPOCH).days), float((last - _EPOCH).days), m.group(0))


_BETWEEN_DATES = re.compile(
    rf"\b(?:between|from)\s+(?:(?P<m1>{_MONTH})\s+)?(?P<y1>(?:19|20)\d{{2}})\s+"
    rf"(?:and|to|until|through)\s+(?:(?P<m2>{_MONTH})\s+)?(?P<y2>(?:19|20)\d{{2}})\b"
    rf"|\b(?:between|from)\s+(?P<m1b>{_MONTH})\s+(?:and|to|until|through)\s+"
    rf"(?P<m2b>{_MONTH})\s+(?P<y>(?:19|20)\d{{2}})\b",
    re.I,
)
"""Two dates bounding a span: "between 2020 and 2022", "from March 2021 to May 2022",
"between January and March 2025" (one year for both months)."""


def _between(m: re.Match[str]) -> DateSpan | None:
    """The span from the first month or year to the end of the second ("between 2020 and
    2022": 2020-01-01 up to 2023-01-01)."""
    if m.group("y") is not None:  # "between January and March 2025"
        m1, m2 = _month(m.group("m1b")), _month(m.group("m2b"))
        y1 = y2 = int(m.group("y"))
        if m1 is None or m2 is None:
            return None
    else:
        m1, m2 = _month(m.group("m1")), _month(m.group("m2"))
        y1, y2 = int(m.group("y1")), int(m.group("y2"))
    first = date(y1, m1 or 1, 1)
    last = date(y2 + (m2 == 12), m2 % 12 + 1, 1) if m2 else date(y2 + 1, 1, 1)
    if last <= first:
        return None
    return DateSpan(float((first - _EPOCH).days), float((last - _EPOCH).days), m.group(0))


def is_month(word: str) -> bool:
    """Whether a word names a month ("December", "Dec.")."""
    return len(word.rstrip(".")) >= 3 and _month(word) is not None


def _month(word: str | None) -> int | None:
    """The month a name or abbreviation says ("Dec", "December"), else ``None``."""
    if not word:
        return None
    w = word.rstrip(".").lower()
    return next((i for i, n in enumerate(_MONTH_NAMES, 1) if n.startswith(w)), None)


@dataclass(frozen=True, slots=True)
class _Found:
    direction: Direction
    word: str
    start: int


def comparison_words(text: str) -> list[tuple[Direction, str, int]]:
    """Every comparison word of ``text``: ``(direction, word, offset)`` in order."""
    found = [
        _Found("max" if m.group("more") else "min", m.group(0).lower(), m.end())
        for m in _DIRECTION.finditer(text)
    ]
    flip = bool(_NEGATED.search(text))
    out: list[tuple[Direction, str, int]] = []
    for f in found:
        way: Direction = ("min" if f.direction == "max" else "max") if flip else f.direction
        out.append((way, f.word, f.start))
    return out


def comparison_direction(text: str) -> tuple[Direction, str] | None:
    """Whether ``text`` compares by size, and which way: ``("max", "higher")``.

    Superlatives and comparatives both count ("highest", "higher", "greater than",
    "less"); "not as high as" flips the direction. ``None`` when there is none; the
    first comparison word decides (see ``comparison_words`` for all of them).
    """
    words = comparison_words(text)
    return (words[0][0], words[0][1]) if words else None


def main_clause(text: str) -> str:
    """``text`` from its question word on, past a short lead-in without one ("Quick
    question: does A ...", "Between A and B, which ...", "Hi - is ...").

    For the tests of how a question starts (yes/no, "which ..."); the lead-in may name
    products, so link them on the whole text.
    """
    m = _LEAD_IN.match(text)
    if m is None or _ASKS.search(text[: m.end()].rstrip(" :,-\u2013\u2014")):
        return text
    return text[m.end() :]


def is_polar(text: str) -> bool:
    """A yes/no question ("Is A's flash point higher than B's?"), after any lead-in."""
    return bool(_POLAR.match(main_clause(text)))


def unsafe_request(text: str) -> bool:
    """A request to change or delete stored data, reveal the system, or run commands.

    A change word used as a noun ("Was there any change in the number of stores?",
    "the change to the data") asks about a change, and is no request to make one.
    """
    return _changes_data(text) or any(p.search(text) for p in _UNSAFE)


def _changes_data(text: str) -> bool:
    for m in _CHANGE_DATA.finditer(text):
        noun = _NOUN_BEFORE.search(text[: m.start()]) or _NOUN_AFTER.match(text[m.end("verb") :])
        if not noun:
            return True
    return False


def creative_request(text: str) -> bool:
    """A request to write something (a poem, a story, a joke): not a question about documents."""
    return bool(_CREATIVE.search(text))
