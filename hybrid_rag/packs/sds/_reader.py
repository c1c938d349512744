"""The Safety Data Sheet pack's reader: what only SDS documents print.

GHS hazard classifications ("Flammable liquids Category 2") and H/P statement codes in
the hazard section, the composition table (a component name with its CAS number and
concentration) in section 3, the exposure-limit tables of section 8 (an agency named,
then its TWA / STEL / Ceiling rows), target organs listed in one value, the hazard
section's response statements ("IF ON SKIN: ...") read as first aid, and the sheet's
title line. Everything else (labels, values, procedures, sections) is the generic
reader's, driven by ``msds.ttl``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading.pack import BasePackReader, Reading, quote_of
from hybrid_rag.packs.sds._transport import marine_pollutant_name, noted, un_number
from hybrid_rag.types import ExtractedFact

if TYPE_CHECKING:
    from hybrid_rag.models import Page
    from hybrid_rag.types import Ontology


__all__ = ["SdsReader"]


_CATEGORY = re.compile(
    r"^\s*(?P<cls>[A-Za-z][A-Za-z0-9 ,/()'\-–.]*?)[\s\-–:,(]*\bCat\s?(?:egory|\.)?\s*"
    r"(?P<cat>\d(?:\s?[A-Ca-c]\b)?)"
)


_CODE = re.compile(
    r"\b(?P<t>[HP])\s?(?P<d>\d\s?\d\s?\d)(?!\d)(?P<more>(?:\s?\+\s?P?\s?\d\s?\d\s?\d)*)"
)


_CAS = re.compile(r"(?<![\d-])\d{2,7}\s?-\s?\d{2}\s?-\s?\d(?![\d-])")


_LIMIT = re.compile(r"\b(?P<t>TWA|STEL|Ceiling|IDLH|PEL|TLV|REL)\b(?!\w)")


_LIMIT_VALUE = re.compile(r"\d[\d.,]*\s*(?:ppm|ppb|[mµμu]g\s*/\s*m|f/cc|mppcf)", re.IGNORECASE)


_RESPONSE = re.compile(r"if\s+(?:on|in|inhaled|swallowed|exposed)\b", re.IGNORECASE)


def _organs(reading: Reading, fact: ExtractedFact) -> None:
    for part in re.split(r"[,;]|\band\b", fact.value.strip(" -.")):
        organ = part.strip(" -.")
        if 2 < len(organ) < 60:
            reading.add(
                ExtractedFact(
                    "hasTargetOrgan",
                    organ,
                    fact.quote,
                    fact.page,
                    object_label=organ,
                    object_class="Organ",
                )
            )


def _classification(reading: Reading, page: Page, line: str, start: int) -> None:
    if not reading.knows("hasClassification") or ("Cat" not in line and "CAT" not in line):
        return
    m = _CATEGORY.match(line)
    if m is None:
        return
    cls = re.sub(r"\s+", " ", m.group("cls")).strip(" -–:,(")
    if len(re.sub(r"[^A-Za-z]", "", cls)) < 4 or cls.lower().startswith(
        ("hazard classification", "ghs")
    ):
        return
    cat = re.sub(r"\s", "", m.group("cat")).upper()
    label = f"{cls} Category {cat}"
    reading.add(
        ExtractedFact(
            "hasClassification",
            line.strip(),
            quote_of(page, line, start),
            page.number,
            object_label=label,
            object_class="HazardClassification",
        )
    )


def _codes(reading: Reading, page: Page, line: str, start: int) -> None:
    m = _CODE.search(line)
    if m is None or m.start() > 8:
        return
    code = re.sub(r"\s", "", m.group("t") + m.group("d") + m.group("more"))
    is_h = m.group("t") == "H"
    prop = "hasHazardStatement" if is_h else "hasPrecaution"
    if not reading.knows(prop):
        return
    rest = line[m.end() :].strip(" :-–\t")
    reading.add(
        ExtractedFact(
            prop,
            rest or code,
            quote_of(page, line, start),
            page.number,
            object_label=f"{code}: {rest}" if rest else code,
            object_class="HazardStatement" if is_h else "PrecautionaryStatement",
        )
    )


def _component(reading: Reading, page: Page, line: str, start: int) -> None:
    """A composition row: a CAS number with the component's name before or after it and
    its concentration, in whichever order the sheet's columns put them."""
    if not reading.knows("hasComponent"):
        return
    m = _CAS.search(line)
    if m is None:
        return
    name = _component_name(line[: m.start()], before=True)
    if len(re.sub(r"[^A-Za-z]", "", name)) < 3:  # "65997-17-3 >= 50.0 - < 75.0% Glass fibre"
        name = _component_name(line[m.end() :], before=False)
    if len(re.sub(r"[^A-Za-z]", "", name)) < 3 or name.lower().startswith("cas"):
        return
    reading.add(
        ExtractedFact(
            "hasComponent",
            line.strip(),
            quote_of(page, line, start),
            page.number,
            object_label=name[:80],
            object_class="Chemical",
        )
    )
    conc = _PERCENT.search(line, m.end()) or _PERCENT.search(line[: m.start()])
    if conc is not None:
        fact = reading.typed(
            "concentration", conc.group(0), quote_of(page, line, start), page.number
        )
        if fact is not None:
            reading.add(fact)


_ROW_START = re.compile(
    r"^\s*(?P<name>[A-Za-z(][^:]*?)\s+(?:EC|EINECS|ELINCS|Index)(?:\s*(?:No\.?|number|#))?"
    r"\s*:?\s*\d{3}\s?-\s?\d{3}\s?-\s?\d\s*$"
)
"""A composition row whose name comes first, then the EC number on its line; the CAS
number and the concentration follow on lines of their own ("propane-1,2-diol EC :
200-338-0", "CAS : 57-55-6", ">= 25 - <= 50 Not classified.")."""


_CAS_ONLY = re.compile(r"^\s*CAS(?:\s*(?:No\.?|number|#|RN))?\s*:?\s*$", re.IGNORECASE)


_RANGE_START = re.compile(
    r"^\s*(?P<c>(?:[<>≤≥]\s*=?\s*)?\d+(?:[.,]\d+)?\s*%?"
    r"(?:\s+(?:-|–|to)\s+(?:[<>≤≥]\s*=?\s*)?\d+(?:[.,]\d+)?\s*%?)?)(?=\s|$)"
)


_PERCENT_COLUMN = re.compile(r"(?<!\S)%(?!\S)|\bconcentration\b|\bweight\b|\bwt\b", re.I)


def _spread_row(reading: Reading, page: Page, line: str, start: int) -> None:
    """A composition row printed over several lines (``_ROW_START``): its name and EC
    number, then its CAS number, then its concentration under the table's "%" column.
    The component is read once the concentration line closes the row, quoted from the
    row's first line to that one; a row without a CAS number is no component."""
    if not reading.knows("hasComponent"):
        return
    memo = reading.memo
    if _PERCENT_COLUMN.search(line) and _RANGE_START.match(line) is None:  # the header
        memo["percent_column"] = (reading.section, page.number)
    if (m := _ROW_START.match(line)) is not None:
        memo["row"] = (m.group("name").strip(), page.number, start, False)
        return
    row = memo.get("row")
    if row is None or row[1] != page.number:
        return
    name, _page, at, cas = row
    found = _CAS.search(line)
    if found is not None and not cas:
        if not _CAS_ONLY.match(line[: found.start()]):
            memo.pop("row", None)  # another row's own layout
            return
        memo["row"] = (name, page.number, at, True)
        line, start = line[found.end() :], start + found.end()
    conc = _RANGE_START.match(line)
    if conc is None or (not cas and found is None):
        return
    said = conc.group("c")
    headed = memo.get("percent_column") == (reading.section, page.number)
    spaced = any(c in said for c in "<>≤≥%") or re.search(r"\s(?:-|–|to)\s", said)
    if not spaced or ("%" not in said and not headed):
        return  # "00-5", the end of a broken index number, is no concentration
    memo.pop("row", None)
    end = start + conc.end()
    quote = page.text[at:end].strip()
    reading.add(
        ExtractedFact(
            "hasComponent",
            re.sub(r"\s+", " ", quote),
            quote,
            page.number,
            object_label=name[:80],
            object_class="Chemical",
        )
    )
    fact = reading.typed("concentration", said, quote, page.number)  # "%": the column's
    if fact is not None:
        reading.add(fact)


_PERCENT = re.compile(
    r"(?:[<>≤≥~]\s*=?\s*)?\d+(?:[.,]\d+)?\s*%?\s*"
    r"(?:(?:-|–|to)\s*(?:[<>≤≥]\s*=?\s*)?\d+(?:[.,]\d+)?\s*)?%"
)


_AGENCIES = (("ACGIH", "acgihTlv"), ("NIOSH", "nioshRel"), ("OSHA", "oshaPel"))


def _exposure(reading: Reading, page: Page, line: str, start: int) -> None:
    upper = line.upper()
    for word, prefix in _AGENCIES:
        if word in upper and not _LIMIT_VALUE.search(line):
            reading.memo["agency"] = (reading.section, prefix)
            return
    if "VACATED" in upper:
        return
    m = _LIMIT.search(line)
    vm = _LIMIT_VALUE.search(line)
    if m is None or vm is None or vm.start() < m.start():
        return
    said = reading.memo.get("agency")  # an agency named in this section: its limits follow
    agency = said[1] if said is not None and said[0] == reading.section else None
    # ... unless the row names its own ("TWA 3 mg/m3 N/A ACGIH")
    agency = next((prefix for word, prefix in _AGENCIES if word in upper), agency)
    prop = _limit_prop(agency, m.group("t"), line)
    value = line[m.end() :].strip(" :-–\t")
    if _PROSE.match(value):
        return  # "... recommends an 8-hour TWA of 15 mg/m3": a sentence, no row
    if prop is None:  # an issuer no property names ("Pfizer OEL TWA-8 Hr: 2 µg/m3")
        prop, value = _OTHER_LIMIT, line.strip()
    fact = reading.typed(prop, value, quote_of(page, line, start), page.number)
    if fact is not None:
        reading.add(fact)


_ROUTE = re.compile(r"^\s*(Oral|Dermal|Inhalation|Inhalative)\b[\s:.]*$", re.IGNORECASE)
_RECORD_TYPE = re.compile(r"^\s*Type of value\s*:\s*(LD50|LC50)\b", re.IGNORECASE)
_RECORD_VALUE = re.compile(r"^\s*Value\s*:\s*(\S.*)$", re.IGNORECASE)
_RECORD_PROPS = {
    ("oral", "ld50"): "ld50Oral",
    ("dermal", "ld50"): "ld50Dermal",
    ("inhalation", "lc50"): "lc50Inhalation",
}


def _toxicity_record(reading: Reading, page: Page, line: str, start: int) -> None:
    """A toxicity record as IUCLID-style sheets print it (section 11): a route heading
    ("Oral"), "Type of value: LD50", "Species: rat", "Value: 40 mg/kg": the value is the
    route's LD50 / LC50, quoted from its own line."""
    route = _ROUTE.match(line)
    if route is not None:
        word = route.group(1).lower()
        reading.memo["route"] = "inhalation" if word.startswith("inhal") else word
        reading.memo.pop("record", None)
        return
    kind = _RECORD_TYPE.match(line)
    if kind is not None and "route" in reading.memo:
        reading.memo["record"] = kind.group(1).lower()
        return
    value = _RECORD_VALUE.match(line)
    if value is None or "record" not in reading.memo:
        return
    prop = _RECORD_PROPS.get((reading.memo["route"], reading.memo.pop("record")))
    if prop is not None and reading.knows(prop):
        fact = reading.typed(prop, value.group(1).strip(), quote_of(page, line, start), page.number)
        if fact is not None:
            reading.add(fact)


_OTHER_LIMIT = "occupationalExposureLimit"
_PROSE = re.compile(r"(?:of|is|was|for|to|at|in|be|are)\s", re.IGNORECASE)


def _limit_prop(agency: str | None, kind: str, line: str) -> str | None:
    if kind == "IDLH":
        return "idlh"
    own = {"PEL": "oshaPel", "TLV": "acgihTlv", "REL": "nioshRel"}.get(kind)
    upper = line.upper()
    agency = own or agency
    if agency is None:
        return None
    if "STEL" in upper:
        return agency + "Stel"
    if "CEILING" in upper:
        return agency + "Ceiling"
    return agency + "Twa"


_PHONE_LINE = re.compile(r"^[\d\s().+\-]{7,}$")


_SDS_TITLE = re.compile(r"^\s*(?:SDS|MSDS)\s*[–—-]\s*(?P<t>.+?)\s+Page\s*\d", re.IGNORECASE)


_NOT_TITLE = re.compile(
    r"safety\s*data\s*sheet|www\.|\.com|page\s*\d|^section|^\d{1,2}(?:\.\d{1,2})+\.?\s"
    r"|\bsee\s+section\b|^(?:\S+\s+){7,}\S+[.:]$"  # a sentence, not a name
    # the sheet's own header lines: dates, versions, the regulation it follows
    r"|\b(?:reviewed|printed|printing|revised|revision|issued?)\s+(?:on|date)\b|\bversion\b"
    r"|\baccording\s+to\b|\bconforms?\s+to\b|\bregulation\b|\bdirective\b"
    r"|company\s*/\s*undertaking",
    re.IGNORECASE,
)


_SECTION_ONE = re.compile(r"^\s*section\s*1\s*[:.]\s*identification", re.IGNORECASE)


_SDS_BANNER = re.compile(r"^\s*(?:material\s+)?safety\s*data\s*sheet\s*$", re.IGNORECASE)


def _title(pages: Sequence[Page]) -> str | None:
    if not pages:
        return None
    lines = [ln.strip() for ln in pages[0].text.split("\n")[:10] if ln.strip()]
    for i, ln in enumerate(lines):
        m = _SDS_TITLE.match(ln)
        if m:
            return m.group("t").strip()
        if _PHONE_LINE.match(ln) and i + 1 < len(lines):
            cand = lines[i + 1]
            if not _NOT_TITLE.search(cand) and re.search(r"[A-Za-z]{3}", cand):
                return cand
    every = [ln.strip() for ln in pages[0].text.split("\n") if ln.strip()]
    for prev, ln in itertools.pairwise(every):  # "Gallium Metal, 99.99%" above the banner
        plausible = not _NOT_TITLE.search(prev) and re.search(r"[A-Za-z]{3}", prev)
        if _SDS_BANNER.match(ln) and plausible:
            return prev
    for head, ln in itertools.pairwise(every):  # the first line under "SECTION 1: ..."
        if _SECTION_ONE.match(head) and not _NOT_TITLE.search(ln) and ":" not in ln:
            return ln if re.search(r"[A-Za-z]{3}", ln) else None
    return None


def _trimmed(title: str, labels: Sequence[str]) -> str:
    """``title`` without a leading label ("Product Name ...") or a trailing one (the
    next column's "Company")."""
    for lab in labels:
        pattern = re.escape(lab).replace("\\ ", r"\s+")
        title = re.sub(rf"^\s*{pattern}(?:\s*:?\s+|\s*:?\s*$)", "", title, flags=re.I)
        title = re.sub(rf"\s+{pattern}\s*:?\s*$", "", title, flags=re.I)
    return title


def _component_name(text: str, *, before: bool) -> str:
    """The name part of a composition row beside its CAS number: numbers, ranges and
    percentages at the end of the part before it, or anywhere in the part after it, cut."""
    if before:
        name = re.sub(r"[\d\s.,<>=≤≥%~-]+$", "", text)
    else:
        name = re.sub(r"(?:[<>=≤≥~]\s*)?\d+(?:[.,]\d+)?\s*(?:-|–|to)?\s*", " ", text)
        name = re.sub(r"(?<!\w)(?:[<>=≤≥%~-]\s*)+", " ", name)
    return re.sub(r"\s+", " ", name).strip(" :;,-")


_FORMULA = re.compile(r"(?:[A-Z][a-z]?\d*){2,}|[A-Z][a-z]?\d+")

_ELEMENTS = frozenset(  # element symbols up to curium, run together
    re.findall(
        r"[A-Z][a-z]?",
        "HHeLiBeBCNOFNeNaMgAlSiPSClArKCaScTiVCrMnFeCoNiCuZnGaGeAsSeBrKrRbSrYZrNbMoTcRuRhPdAgCdInSn"
        "SbTeIXeCsBaLaCePrNdPmSmEuGdTbDyHoErTmYbLuHfTaWReOsIrPtAuHgTlPbBiPoAtRnFrRaAcThPaUNpPuAmCm",
    )
)


_STOCK = {
    "cupric": "Copper(II)",
    "cuprous": "Copper(I)",
    "ferric": "Iron(III)",
    "ferrous": "Iron(II)",
    "mercuric": "Mercury(II)",
    "mercurous": "Mercury(I)",
    "stannic": "Tin(IV)",
    "stannous": "Tin(II)",
    "plumbous": "Lead(II)",
    "plumbic": "Lead(IV)",
    "cobaltous": "Cobalt(II)",
    "cobaltic": "Cobalt(III)",
    "manganous": "Manganese(II)",
    "nickelous": "Nickel(II)",
    "aurous": "Gold(I)",
    "auric": "Gold(III)",
    "cerous": "Cerium(III)",
    "ceric": "Cerium(IV)",
}
"""Classical names of a metal's cations and their Stock names. "Chromic" is left out:
"chromic acid" and "chromic trioxide" are chromium(VI), not chromium(III)."""
_CLASSICAL = {v.lower(): k for k, v in _STOCK.items()}
_ANION = (
    r"(?:chloride|bromide|iodide|fluoride|oxide|hydroxide|sulfate|sulphate|sulfide|sulphide|"
    r"nitrate|nitrite|carbonate|acetate|phosphate|citrate|oxalate|ammonium|sulfite|chlorate|"
    r"perchlorate|cyanide|thiocyanate|dichromate|chromate|tartrate|gluconate|lactate|"
    r"stearate|formate|pyrophosphate|thiosulfate)"
)
_CLASSICAL_WORDS = "|".join(_STOCK)
_STOCK_WORDS = "|".join(re.escape(v).replace(r"\(", r"\s?\(") for v in _STOCK.values())
_CLASSICAL_SALT = re.compile(rf"\b({_CLASSICAL_WORDS})\s+(?={_ANION}\b)", re.I)
_STOCK_SALT = re.compile(rf"\b({_STOCK_WORDS})\s*(?={_ANION}\b)", re.I)


def stock_names(name: str) -> list[str]:
    """``name`` in the other notation of a metal's salts ("Cupric Sulfate" and "Copper
    (II) sulfate" each give the other), or ``[]``: only before an anion's name, so
    "Chromic Acid" or a "Ferric" brand stays as it is."""
    classical = _CLASSICAL_SALT.sub(lambda m: _STOCK[m[1].lower()] + " ", name)
    if classical != name:
        return [classical]
    stock = _STOCK_SALT.sub(
        lambda m: _CLASSICAL[re.sub(r"\s", "", m[1]).lower()].capitalize() + " ", name
    )
    return [stock] if stock != name else []


def _formula_name(value: str) -> str | None:
    """A printed molecular formula as one word ("C3H6O", "K N O3" -> "KNO3"), without
    its water of hydration; ``None`` for anything else ("Mixture", "(C6 H10 O5)n")."""
    head = re.split(r"\s*[·.*x-]\s*\d*\s*H2\s*O\b", value.strip())[0]
    compact = re.sub(r"\s+", "", head)
    if len(compact) > 20 or not _FORMULA.fullmatch(compact):
        return None
    symbols = re.findall(r"[A-Z][a-z]?", compact)
    return compact if all(sym in _ELEMENTS for sym in symbols) else None


_IDENTITY = ("productName", "supplierName", "productCode", "synonym", "recommendedUse")
"""Section 1 items whose labels may stand beside the product name in a two-column
layout ("Product Name iluma Glass & Mirror Cleaner Company")."""


_DIGITS4 = re.compile(r"\d{4}")
_SAYS_UN = re.compile(r"(?<![A-Za-z])UN(?![A-Za-z/])(?!.*\bNA\b)")


class SdsReader(BasePackReader):
    """The SDS pack's reader (see the module docstring)."""

    name = "sds"

    def __init__(self, ontology: Ontology | None = None) -> None:
        known = {p.name: p for p in ontology.properties()} if ontology is not None else {}
        labels = {lab for n in _IDENTITY if n in known for lab in known[n].labels}
        self._labels = tuple(sorted(labels, key=len, reverse=True))

    def read_line(self, reading: Reading, page: Page, line: str, start: int) -> None:
        """Hazard classes and codes (section 2, or the first pages before any heading),
        components (section 3) and exposure limits (section 8)."""
        sec = reading.section
        if sec == 2 or (sec == 0 and page.number <= 2):
            _classification(reading, page, line, start)
            _codes(reading, page, line, start)
        elif sec == 3:
            _component(reading, page, line, start)
        elif sec == 8:
            _exposure(reading, page, line, start)

    def every_line(self, reading: Reading, page: Page, line: str, start: int) -> None:
        """Toxicity records (section 11), whose lines an assessment's text also reads,
        composition rows spread over lines (section 3), whose identifier lines the
        generic reader's labels take, and the name under "Marine pollutant: yes"
        (section 14)."""
        if reading.section == 11:
            _toxicity_record(reading, page, line, start)
        elif reading.section == 3:
            _spread_row(reading, page, line, start)
        elif reading.section == 14:
            marine_pollutant_name(reading, page, line, start)

    def derived(self, reading: Reading, fact: ExtractedFact) -> None:
        """The organs a target-organ line lists, each its own relation; transport
        values a later line completes (``_transport``)."""
        un_number(reading, fact)
        noted(reading, fact)
        if (
            fact.prop == "targetOrgans"
            and fact.status == "stated"
            and reading.knows("hasTargetOrgan")
        ):
            _organs(reading, fact)

    def written(self, prop: str, value: str, label: str) -> str:
        """A UN number printed as its four digits under a label that says UN ("UN-Number:
        1197", "UN No. 1197") is UN1197, as transport documents write it (and as a
        question or a filter names it); under "ID Number" or "UN/NA" the digits may be an
        NA number and stay as printed."""
        digits = value.strip()
        if prop == "unNumber" and _DIGITS4.fullmatch(digits) and _SAYS_UN.search(label):
            return "UN" + digits
        return value

    def reads_ahead(self, reading: Reading, section: int, line: str) -> bool:
        """A first-aid route (section 4) in the hazard section's response statements."""
        return section == 4 and reading.section == 2 and bool(_RESPONSE.match(line))

    def ends_value(self, line: str) -> bool:
        """A hazard class with its category starts a new item."""
        return ("Cat" in line or "CAT" in line) and bool(_CATEGORY.match(line))

    def subject_table(self, reading: Reading) -> bool:
        """The composition table (section 3) lists the components' numbers."""
        return reading.section != 3

    def title(self, pages: Sequence[Page]) -> str | None:
        """The sheet's title line: "SDS - <name> Page 1", the line under the supplier's
        phone number, above the "Safety Data Sheet" banner, or under "SECTION 1"."""
        return _title(pages)

    def aliases(self, facts: Sequence[ExtractedFact]) -> list[str]:
        """A printed molecular formula ("H2SO4"): people name a chemical by it; and each
        name of a synonym list that separates its names by commas ("Magnesium
        Hydrate, Milk of Magnesia"), where a comma inside one name is kept ("Acetic
        acid, sodium salt", "Dichromic acid, Dipotassium salt": an index name)."""
        out: list[str] = []
        for f in facts:
            formula = _formula_name(f.value) if f.prop == "molecularFormula" else None
            if formula and f.status == "stated":
                out.append(formula)
            if f.prop == "synonym" and f.status == "stated":
                out += [n for part in re.split(r"[;|]", f.value) for n in comma_names(part)]
        return out

    def other_names(self, name: str) -> list[str]:
        """A salt's classical name in Stock notation and back: "Cupric Sulfate" is
        "Copper(II) Sulfate", "Mercury(I) chloride" is "Mercurous chloride" (people
        ask by either: "copper(II) compounds", "mercury salts")."""
        return stock_names(name)

    def clean_name(self, value: str) -> str:
        """A name without the column label beside it ("Product Name ...", "... Company")."""
        return _trimmed(value, self._labels)


_QUALIFIER = re.compile(
    r"(?:salts?|esters?|(?:mono|di|tri|tetra|penta|hexa|hepta)?hydrates?|anhydrous|solution"
    r"|homopolymer|compounds?|complex|\(\d[:\d]*\))\W*$",
    re.I,
)
"""The last word of a chemical index name's inverted part ("..., sodium salt",
"..., hydrate", "..., (3:2)"): no name of its own."""


_LOCANT = re.compile(r"(?:[nopm]|sec|tert|iso|cis|trans|alpha|beta|gamma|[dl])-", re.I)
"""A name's locant prefix ("n-Hexane", "p-Xylene", "tert-Butanol"): a lower-case start."""


def comma_names(text: str) -> list[str]:
    """The names of a comma-separated list, when it is one ("Magnesium Hydrate, Milk of
    Magnesia": each part opens with a capital letter); a part that qualifies the one
    before it (lower case, or a salt, ester or hydrate: "Acetic acid, sodium salt")
    stays with it. ``[]`` when the text holds no comma."""
    parts = [p.strip(" .") for p in re.split(r",(?![^()\[\]]*[)\]])", text)]  # not "(II,IV)"
    if len(parts) < 2:
        return []
    names: list[str] = []
    for part in parts:
        if not part:
            continue
        opens = part[:1].isupper() or part[:1].isdigit() or _LOCANT.match(part) is not None
        if names and (not opens or _QUALIFIER.search(part)):
            names[-1] += ", " + part
        else:
            names.append(part)
    return names if len(names) > 1 else []
