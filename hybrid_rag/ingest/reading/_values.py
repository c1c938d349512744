"""Values: what a label's text says, typed by the property's value kind.

Values are checked against the property's ``valueKind`` / ``valuePattern`` when the
ontology provides them; quantities are parsed into the property's canonical unit (a
temperature in °C, a °F-only value converted; for ranges such as ``11-13`` the number is
the lower bound). "No information available" and its variants record the value as
``unavailable``.
"""

from __future__ import annotations

import re

from hybrid_rag.ingest.reading._labels import _Prop, _squash
from hybrid_rag.ingest.reading._typed import (
    DATE_UNIT,
    currency_of,
    parse_amount,
    parse_date,
    to_number,
)
from hybrid_rag.types import ExtractedFact
from hybrid_rag.units import PRESSURE

_UNAVAILABLE = (
    "noinformationavailable",
    "notavailable",
    "nodataavailable",
    "notdetermined",
    "notapplicable",
    "notestablished",
    "notknown",
    "unknown",
    "nottested",
    "datanotavailable",
    "noadditionalinformation",
    "noinformation",
    "notmeasured",
    "notrelevant",
    "nodata",
    "datalacking",
    "nodatalacking",
)


_SEP = re.compile(
    r"(?:\s|:|#|=|\)|\(%\)|\.(?!\d)|-(?=\s)|–|;|°(?=\s?\d)|º(?=\s?\d)|№|[●•▪■►➢]|\*(?=\s*:))*"
)  # a bullet may stand between a label and its value: "CAS Number ●10101-89-0"


_NUM = r"[-−]?\d+(?:[.,]\d+)?"


_TEMP = re.compile(
    rf"(?<![\w.])(?P<a>{_NUM})(?:\s*(?:-|–|to)\s*(?P<b>{_NUM}))?\s*(?:°|º|deg\.?|degrees)?\s*(?P<u>[CF])\b"
)


_FIRST_NUM = re.compile(rf"(?<![\w.])(?P<a>{_NUM})(?:\s*(?:-|–|to)\s*(?P<b>{_NUM}))?")


def is_unavailable(value: str) -> bool:
    """True when ``value`` says the information is not available."""
    sq = _squash(value)
    return sq in ("na", "nd", "none") or sq.startswith(_UNAVAILABLE)


def _to_float(text: str) -> float | None:
    t = text.replace("−", "-").replace(",", ".")
    try:
        return float(t)
    except ValueError:
        return None


def parse_quantity(value: str, *, kind: str, unit: str | None) -> tuple[float | None, str | None]:
    """Parse a typed quantity from a value text.

    Temperatures are returned in °C (a °F-only value is converted); for ranges
    (``"2 - 8 °C"``, ``"11-13"``) the lower bound is returned. A number with no unit of
    its property's but printed with a currency is an amount in that currency (its ISO
    code is the unit); a date is days since 1970-01-01 with the unit ``"date"``.

    Args:
        value: the verbatim value.
        kind: ``temperature``, ``number``, ``range``, ``date`` or other (not parsed).
        unit: the property's canonical unit.

    Returns:
        ``(number, unit)`` or ``(None, None)``.
    """
    if kind == "date":
        found = parse_date(value)
        return (float(found[0]), DATE_UNIT) if found else (None, None)
    value = _ABOUT.sub(r"\1 ", value)  # "ca.1.35 g/cm3" is about 1.35, not the 20 °C after
    if kind == "temperature":
        return _parse_temperature(value)
    if kind == "range":
        m = _FIRST_NUM.search(value)
        return (_to_float(m.group("a")), unit) if m else (None, None)
    if kind == "number":
        return _parse_number(value, unit)
    return None, None


_ABOUT = re.compile(r"\b(ca|approx|appr)\.(?=\d)", re.I)
""""About" glued to its number ("ca.1.35"): the number is read only apart from it."""

_OTHER_QUANTITY_FIRST = re.compile(
    r"^\W*[<>≤≥~]?\s*\d[\d.,]*\s*(?:[hk]?Pa|mbar|bar|mm\s?Hg|torr|psi|atm|%|ppm|[mk]?g/|mPa)",
    re.I,
)
"""A value that leads with another quantity ("120 hPa (50 °C)"): its temperature is
the condition that quantity was measured at, not the property's value."""


def _parse_temperature(value: str) -> tuple[float | None, str | None]:
    """The first °C temperature (else the first °F one, converted). A comma before
    three digits groups thousands ("1,330 °C (2,426 °F)" is 1330 °C, not 1.33; no sheet
    prints a temperature to a thousandth of a degree); "12,5 °C" is 12.5."""
    if _OTHER_QUANTITY_FIRST.search(value):
        return None, None
    fahrenheit: float | None = None
    for m in _TEMP.finditer(value):
        num = to_number(m.group("a"))
        if num is None:
            continue
        if m.group("u") == "C":
            return num, "°C"
        if fahrenheit is None:
            fahrenheit = num
    if fahrenheit is not None:
        return round((fahrenheit - 32.0) * 5.0 / 9.0, 2), "°C"
    return None, None


# other units a sheet prints a quantity in, per canonical unit: the factor to it

_CONVERSIONS: dict[str, dict[str, float]] = {
    "mmHg": {u: f for u, f in PRESSURE.factors.items() if u != "mmHg"},
}


def _parse_number(value: str, unit: str | None) -> tuple[float | None, str | None]:
    if not unit:
        if (amount := parse_amount(value)) is not None:
            return amount
        if _ROW.fullmatch(value):  # a totals row ("1 278.61 40.39 319.00"): its last cell
            return to_number(value.split()[-1]), None
        rate = _RATE.search(value)
        value = _RATE.sub(" ", value)  # "21%" is a rate, not the amount beside it
        if rate is not None and not _FIRST_NUM.search(value):  # "14.50%" alone: the rate
            return to_number(rate.group(0).rstrip(" %")), "%"
    if unit:
        esc = re.escape(unit).replace(r"\ ", r"\s*")
        # a range before the unit ("3500 - 4700 mg/kg") keeps its lower bound
        m = re.search(rf"(?<![\w.])({_NUM})(?:\s*[-–]\s*{_NUM})?\s*{esc}", value, re.IGNORECASE)
        if m:
            return _to_float(m.group(1)), unit
        if (converted := _converted(value, unit)) is not None:
            return converted, unit
        if re.search(r"[A-Za-z%]", value.split("(")[0]) and unit not in ("%",):
            return None, None
    m2 = _FIRST_NUM.search(value)
    if m2 is None:
        return None, None
    return _to_float(m2.group("a")), unit


def _converted(value: str, unit: str) -> float | None:
    """The first number printed in another unit of the same quantity, in ``unit``
    ("104 mbar @ 20 °C" -> 78.0 mmHg); ``None`` when there is none."""
    others = _CONVERSIONS.get(unit)
    if not others:
        return None
    names = "|".join(sorted(others, key=len, reverse=True))  # kPa before Pa
    m = re.search(rf"(?<![\w.])({_NUM})\s*({names})\b", value, re.IGNORECASE)
    if m is None or (num := _to_float(m.group(1))) is None:
        return None
    factor = next(f for name, f in others.items() if name.lower() == m.group(2).lower())
    return round(num * factor, 4)


_MAX_VALUE = 300


_MAX_PROCEDURE = 1200


def _make_fact(prop: _Prop, value: str, quote: str, page: int) -> ExtractedFact | None:
    value = value[: _MAX_PROCEDURE if prop.kind == "procedure" else _MAX_VALUE].strip()
    if prop.kind == "identifier":
        value = _unglued(prop, value)
    if not _squash(value):
        return None
    if is_unavailable(value) and not (prop.pattern and prop.pattern.search(value)):
        return ExtractedFact(prop.name, value, quote, page, status="unavailable")
    if prop.pattern is not None and not prop.pattern.search(value):
        return None
    if prop.kind == "identifier" and prop.pattern is None and not re.search(r"\d", value):
        return None  # a code has a digit ("QualityHosting AG" is no document number)
    if prop.kind in ("temperature", "number", "range", "date") and not re.search(r"\d", value):
        return None
    if prop.kind == "date":  # the date as printed, without the words around it
        found = parse_date(value)
        if found is None:
            return None
        return ExtractedFact(prop.name, found[1], quote, page, number=found[0], unit=DATE_UNIT)
    if prop.kind == "currency":
        code = currency_of(value)
        return None if code is None else ExtractedFact(prop.name, code, quote, page)
    number, unit = parse_quantity(value, kind=prop.kind, unit=prop.unit)
    return ExtractedFact(prop.name, value, quote, page, number=number, unit=unit)


def _unglued(prop: _Prop, value: str) -> str:
    """An identifier whose text ran into the next words without a space
    ("800-535-5053Lab Alley LLC", two text columns merged): the identifier alone."""
    m = prop.pattern.search(value) if prop.pattern is not None else None
    if m is None or m.end() >= len(value) or not m.group(0)[-1:].isdigit():
        return value
    return value[: m.end()] if value[m.end()].isalpha() else value


_ROW = re.compile(r"[-−]?\d[\d.,]*(?:\s+[-−]?\d[\d.,]*){2,}")
_RATE = re.compile(r"[-−]?\d+(?:[.,]\d+)?\s?%")


def first_code(value: str) -> str:
    """The identifier in an identifying value: its first word with a digit in it
    ("562044387 du 02 Juillet 2015" -> "562044387"), else the value."""
    m = re.search(r"[#\w][\w/.-]*\d[\w/-]*", value)
    return m.group(0).rstrip(".").lstrip("#") if m else value
