"""Typed values any domain prints: amounts with their currency, and dates.

An amount is a number next to a currency marker (``$4.11``, ``€ 4.904,94``, ``29.99 €``,
``EUR 34,73``, ``Rs 1939``): the number is read with its thousands and decimal
separators as printed, the currency as its ISO 4217 code. A date is printed as numbers
(``31/12/2017``, ``21.05.14``, ``2023-11-12``) or with a month name in any language
``dateparser`` knows (``19 april 2014``, ``02 Juillet 2015``, ``7. Mai 2014``,
``August 3 , 2014``); it is typed as days since 1970-01-01, so dates sort and compare
like numbers.
"""

from __future__ import annotations

import re
from datetime import date
from functools import lru_cache

from hybrid_rag._vocab import DATE_UNIT
from hybrid_rag.units import CURRENCY_CODES, CURRENCY_SYMBOLS

__all__ = ["CURRENCY", "DATE_UNIT", "currency_of", "parse_amount", "parse_date", "to_number"]


_EPOCH = date(1970, 1, 1)
_SYMBOLS = CURRENCY_SYMBOLS
_CODES = CURRENCY_CODES
CURRENCY = "|".join(re.escape(s) for s in sorted([*_SYMBOLS, *_CODES], key=len, reverse=True))
_NUM = r"[-−]?\d{1,3}(?:[.,'\u00a0\u202f]\d{3})+(?:[.,]\d{1,2})?(?!\d)|[-−]?\d+(?:[.,]\d+)?"
_AMOUNT = re.compile(
    rf"(?<![\w$€£¥₹])(?P<c1>{CURRENCY})\s{{0,2}}(?P<n1>{_NUM})(?!\s?%)"
    rf"|(?<![\w.,])(?P<n2>{_NUM})\s{{0,2}}(?P<c2>{CURRENCY})(?![A-Za-z]|\s{{0,2}}[-−]?\d)"
)
_MARKER = re.compile(rf"(?<![A-Za-z])(?:{CURRENCY})(?![A-Za-z])")


def to_number(text: str) -> float | None:
    """A printed number as a float: ``4.904,94`` and ``4,904.94`` are 4904.94, ``5,39``
    is 5.39, ``1,234`` is 1234 and ``0,125`` is 0.125 (a lone comma before three digits
    groups thousands unless the integer part is 0)."""
    t = text.strip().replace("−", "-").replace("'", "").replace("\u00a0", "").replace("\u202f", "")
    dots, commas = t.count("."), t.count(",")
    if dots and commas:
        dec = "." if t.rfind(".") > t.rfind(",") else ","
        t = t.replace("," if dec == "." else ".", "").replace(dec, ".")
    elif commas > 1 or dots > 1:
        t = t.replace("," if commas > 1 else ".", "")
    elif commas == 1:
        head, tail = t.split(",")
        grouped = len(tail) == 3 and head.lstrip("-") not in ("", "0")
        t = head + tail if grouped else head + "." + tail
    try:
        return float(t)
    except ValueError:
        return None


def currency_of(text: str) -> str | None:
    """The ISO 4217 code of the first currency marker in ``text`` (``€`` -> ``EUR``)."""
    m = _MARKER.search(text)
    if m is None:
        return None
    mark = m.group(0)
    return _SYMBOLS.get(mark, mark if mark in _CODES else None)


def parse_amount(text: str) -> tuple[float, str] | None:
    """The first amount printed with a currency in ``text``: ``(number, ISO code)``."""
    for m in _AMOUNT.finditer(text):
        mark = m.group("c1") or m.group("c2")
        number = to_number(m.group("n1") or m.group("n2"))
        code = _SYMBOLS.get(mark, mark if mark in _CODES else None)
        if number is not None and code is not None:
            return number, code
    return None


_NUMERIC_DATE = re.compile(r"(?<![\d.,/])(\d{1,4})([./-])(\d{1,2})\2(\d{2,4})(?![\d/]|[.,]\d)")
_WORDY_DATE = re.compile(
    r"(?<![\w])(?:(?P<d1>\d{1,2})(?:st|nd|rd|th)?\.?(?:\s+|-)(?P<m1>[^\W\d_]{3,}\.?)(?:\s+|-)"
    r"(?P<y1>\d{4})"
    r"|(?P<m2>[^\W\d_]{3,}\.?)\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s*,?\s*(?P<y2>\d{4}))(?!\w)"
)


def parse_date(text: str) -> tuple[int, str] | None:
    """The first date printed in ``text``: ``(days since 1970-01-01, the text printed)``.

    Numbers: ``yyyy-mm-dd``; with dots, day first (``21.05.14``); with slashes or
    dashes, day first when the first number is over 12, else month first (``08/01/2023``
    is 1 August). Two-digit years below 70 are 20xx. Month names in any language
    ``dateparser`` reads.
    """
    found = [(m.start(), m) for m in _NUMERIC_DATE.finditer(text)]
    found += [(m.start(), m) for m in _WORDY_DATE.finditer(text)]
    for _at, m in sorted(found, key=lambda x: x[0]):
        day = _numeric(m) if m.re is _NUMERIC_DATE else _wordy(m.group(0))
        if day is not None:
            return (day - _EPOCH).days, m.group(0)
    return None


def _numeric(m: re.Match[str]) -> date | None:
    a, sep, b, c = m.group(1), m.group(2), int(m.group(3)), m.group(4)
    if len(a) == 4:
        y, mo, d = int(a), b, int(c)
    else:
        first, year = int(a), int(c)
        y = year + (2000 if year < 70 else 1900) if len(c) == 2 else year
        day_first = sep == "." or first > 12
        d, mo = (first, b) if day_first else (b, first)
    try:
        return date(y, mo, d) if 1900 <= y <= 2200 else None
    except ValueError:
        return None


@lru_cache(maxsize=512)
def _wordy(text: str) -> date | None:
    import dateparser  # a dependency of the package; imported when a month name is read

    found = dateparser.parse(text, settings={"REQUIRE_PARTS": ["day", "month", "year"]})
    return found.date() if found is not None else None
