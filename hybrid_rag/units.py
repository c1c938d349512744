"""Units of measure: the ones one quantity is printed in, and conversion between them
(pure; shared by reading values at ingest and by bounds in questions)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "BARE_SCALES",
    "CURRENCY_CODES",
    "CURRENCY_SYMBOLS",
    "DENSITY",
    "PRESSURE",
    "Scale",
    "convert",
    "currency_code",
    "currency_names_as_codes",
    "scale_of",
    "unit_key",
]


@dataclass(frozen=True, slots=True)
class Scale:
    """Units of one quantity as printed, each with its factor to the first.

    Attributes:
        name: what the quantity is ("pressure").
        factors: ``{unit as printed: factor to the base unit}``.
        bare: whether a number printed with no unit is on the base unit's scale (a
            relative density or specific gravity is a density in g/cm³).
    """

    name: str
    factors: dict[str, float]
    bare: bool = False

    def factor(self, unit: str) -> float | None:
        """The factor of ``unit`` (any spelling ``unit_key`` reads alike) to the base."""
        key = unit_key(unit)
        return next((f for u, f in self.factors.items() if unit_key(u) == key), None)


PRESSURE = Scale(
    "pressure",
    {
        "mmHg": 1.0, "kPa": 7.50062, "hPa": 0.750062, "mbar": 0.750062, "Pa": 0.00750062,
        "torr": 1.0, "mm Hg": 1.0, "atm": 760.0, "psi": 51.7149, "bar": 750.062,
    },
)  # fmt: skip
DENSITY = Scale(
    "density",
    {
        "g/cm3": 1.0,
        "g/mL": 1.0,
        "g/cc": 1.0,
        "kg/L": 1.0,
        "kg/m3": 0.001,
        "g/L": 0.001,
        "lb/gal": 0.119826,
    },
    bare=True,
)
_SCALES = (PRESSURE, DENSITY)
BARE_SCALES = tuple(s for s in _SCALES if s.bare)
"""The scales a number printed with no unit is on (its base unit)."""
_TEMPERATURE = {"°c": "C", "c": "C", "°f": "F", "f": "F", "k": "K"}


CURRENCY_SYMBOLS = {
    "$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "Rs": "INR",
    "Rs.": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY", "₪": "ILS", "R$": "BRL", "zł": "PLN",
    "Kč": "CZK", "Fr.": "CHF", "CHF": "CHF", "A$": "AUD", "C$": "CAD", "HK$": "HKD",
    "S$": "SGD", "kr": "SEK",
}  # fmt: skip
"""Symbols printed for the most used currencies, with their ISO 4217 codes."""
CURRENCY_CODES = frozenset(
    re.findall(
        r"[A-Z]{3}",
        "USD EUR GBP JPY INR CNY CHF CAD AUD NZD SEK NOK DKK PLN CZK HUF BRL MXN ZAR SGD HKD "
        "KRW RUB TRY AED SAR ILS THB IDR MYR PHP",
    )
)
"""ISO 4217 codes of the most used currencies."""
_CURRENCY_NAMES = {
    "euro": "EUR", "dollar": "USD", "rupee": "INR", "yen": "JPY", "yuan": "CNY",
    "renminbi": "CNY", "franc": "CHF", "sterling": "GBP", "zloty": "PLN", "forint": "HUF",
    "rouble": "RUB", "ruble": "RUB", "lira": "TRY", "rupiah": "IDR",
}  # fmt: skip
"""Currencies by the names questions call them (their plurals with an "s")."""


def currency_code(word: str) -> str | None:
    """The ISO 4217 code a currency's code, symbol or name says ("EUR", "€", "euros",
    "Rupees"); ``None`` for any other word."""
    if word.upper() in CURRENCY_CODES:
        return word.upper()
    if word in CURRENCY_SYMBOLS:
        return CURRENCY_SYMBOLS[word]
    name = word.lower()
    return _CURRENCY_NAMES.get(name) or _CURRENCY_NAMES.get(name.removesuffix("s"))


_CURRENCY_PHRASES = {
    "us dollar": "USD", "u.s. dollar": "USD", "american dollar": "USD", "euro": "EUR",
    "indian rupee": "INR", "british pound": "GBP", "pound sterling": "GBP",
    "swiss franc": "CHF", "japanese yen": "JPY", "chinese yuan": "CNY",
    "canadian dollar": "CAD", "australian dollar": "AUD", "new zealand dollar": "NZD",
    "hong kong dollar": "HKD", "singapore dollar": "SGD", "swedish krona": "SEK",
    "swedish kronor": "SEK", "norwegian krone": "NOK", "danish krone": "DKK",
    "mexican peso": "MXN", "brazilian real": "BRL", "south african rand": "ZAR",
    "polish zloty": "PLN", "russian ruble": "RUB", "turkish lira": "TRY",
}  # fmt: skip
"""Currencies by names of more than one word: a country's adjective before the
currency's name ("Indian rupees", "US dollars"), or a name of its own ("pounds sterling")."""
_NAMED = re.compile(
    r"\b(?:"
    + "|".join(
        re.escape(n).replace(r"\ ", r"\s+") + ("" if n.endswith("sterling") else "s?")
        for n in sorted({*_CURRENCY_PHRASES, *_CURRENCY_NAMES}, key=len, reverse=True)
    ).replace(r"pound\s+sterling", r"pounds?\s+sterling")
    + r")(?!\w)",
    re.I,
)


def currency_names_as_codes(text: str) -> str:
    """``text`` with each currency it names by name as its ISO 4217 code ("billed in
    euros" -> "billed in EUR", "in Indian rupees" -> "in INR"), as values print it."""
    return _NAMED.sub(_named_code, text)


def _named_code(m: re.Match[str]) -> str:
    said = re.sub(r"\s+", " ", m.group(0).lower())
    return (
        _CURRENCY_PHRASES.get(said)
        or _CURRENCY_PHRASES.get(said.removesuffix("s"))
        or _CURRENCY_PHRASES.get(said.replace("pounds", "pound"))
        or currency_code(said)
        or m.group(0)
    )


def unit_key(unit: str) -> str:
    """A unit as compared: lower case, no spaces, superscripts as digits, "deg" as "°"
    ("g/cm³" is "g/cm3", "deg F" is "°f", "mm Hg" is "mmhg")."""
    text = unit.replace("³", "3").replace("²", "2").replace("º", "°")
    text = re.sub(r"^deg(?:rees?)?\.?\s*", "°", text.strip(), flags=re.I)
    return re.sub(r"\s+", "", text).lower()


def scale_of(unit: str | None) -> Scale | None:
    """The scale ``unit`` belongs to (``None`` for temperatures and unknown units)."""
    if not unit:
        return None
    return next((s for s in _SCALES if s.factor(unit) is not None), None)


def convert(number: float, unit: str | None, to: str | None) -> float | None:
    """``number`` in ``unit`` expressed in ``to``: temperatures (°C, °F, K) and the units
    of one scale (kPa to mmHg, g/mL to g/cm³); ``None`` when they measure different
    things or either is unknown."""
    if not unit or not to:
        return None
    a, b = _TEMPERATURE.get(unit_key(unit)), _TEMPERATURE.get(unit_key(to))
    if a is not None and b is not None:
        return _from_celsius(_to_celsius(number, a), b)
    scale = scale_of(unit)
    if scale is None or (target := scale.factor(to)) is None:
        return None
    source = scale.factor(unit)
    return None if source is None else number * source / target


def _to_celsius(number: float, unit: str) -> float:
    return (
        (number - 32.0) * 5.0 / 9.0 if unit == "F" else number - 273.15 if unit == "K" else number
    )


def _from_celsius(number: float, unit: str) -> float:
    return number * 9.0 / 5.0 + 32.0 if unit == "F" else number + 273.15 if unit == "K" else number
