"""Offline (no-LLM) fact extraction driven by the ontology's labels.

For every datatype property the ontology lists labels and alternative labels (the
variants sheets print: "Flash Point", "Flashpoint", "UN-no", "UN No." ...). A line that
starts with one of them (case, spacing and punctuation ignored, so "AUTO - IGNITION
TEMPERATURE" matches "Autoignition temperature") yields a fact whose value is the rest of
the line, or the next line when the label stands alone. Values are checked against the
property's ``valueKind`` / ``valuePattern`` annotations when the ontology provides them
(``TurtleOntology``), and quantities are parsed into the
property's canonical unit (temperatures in °C; a °F-only value is converted; for ranges
such as ``pH 11-13`` the number is the lower bound).

A few structures that are not "label value" lines get dedicated readers: GHS hazard
classifications and H/P statement codes (section 2), components with CAS numbers
(section 3), and exposure-limit tables (section 8: agency context + TWA/STEL/Ceiling/IDLH
rows).

Every fact carries a ``quote`` that is an exact substring of its page's text.
Compiled matchers are cached per ontology object; extraction is linear in the text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from hybrid_rag.protocols import OntologyMatching

if TYPE_CHECKING:
    from hybrid_rag.models import Chunk, Page
    from hybrid_rag.protocols import Ontology, PropertyDef

__all__ = ["ExtractedFact", "Extraction", "extract_offline", "parse_quantity"]

Status = Literal["stated", "unavailable"]


@dataclass(frozen=True, slots=True)
class ExtractedFact:
    """One value a sheet states, with the verbatim quote it was read from.

    Attributes:
        prop: ontology property local name, e.g. ``"flashPoint"``.
        value: the verbatim value text, e.g. ``"-20 °C / -4 °F (Closed cup)"``.
        quote: exact substring of the page text (label and value).
        page: 1-based page number.
        chunk_id: the chunk whose ``[start, end)`` covers the quote, when chunks were given.
        number: typed quantity in ``unit`` when parseable.
        unit: unit of ``number`` (the property's canonical unit).
        status: ``"unavailable"`` when the sheet says the value is not available.
        object_label: for object properties, the label of the object entity.
        object_class: for object properties, the class local name of the object.
    """

    prop: str
    value: str
    quote: str
    page: int
    chunk_id: str | None = None
    number: float | None = None
    unit: str | None = None
    status: Status = "stated"
    object_label: str | None = None
    object_class: str | None = None


@dataclass(frozen=True, slots=True)
class Extraction:
    """What offline extraction found in one document."""

    subject: str
    aliases: tuple[str, ...]
    facts: tuple[ExtractedFact, ...]
    warnings: tuple[str, ...] = ()


# ---------------------------------------------------------------- compiled ontology

_END = "\x00"


@dataclass(frozen=True, slots=True)
class _Prop:
    name: str
    kind: str
    unit: str | None
    pattern: re.Pattern[str] | None
    section: int | None = None
    read_from: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Compiled:
    trie: dict[str, object]
    props: dict[str, _Prop]
    known: frozenset[str]
    heads: re.Pattern[str]  # first words of the labels of section-bound properties


_CACHE: dict[int, tuple[Ontology, _Compiled]] = {}
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_PROSE = re.compile(r"[.;:,]\s|[.:]\s*$|.{160}")


def _compile(ontology: Ontology) -> _Compiled:
    cached = _CACHE.get(id(ontology))
    if cached is not None and cached[0] is ontology:
        return cached[1]
    compiled = _build(ontology)
    if len(_CACHE) >= 8:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[id(ontology)] = (ontology, compiled)
    return compiled


def _build(ontology: Ontology) -> _Compiled:
    hints = ontology if isinstance(ontology, OntologyMatching) else None
    trie: dict[str, object] = {}
    props: dict[str, _Prop] = {}
    heads: set[str] = set()
    for p in ontology.properties():
        if p.kind != "datatype":
            continue
        props[p.name] = _prop(p, hints)
        for label in p.labels:
            _trie_add(trie, _squash(label), p.name)
            col = _column(props[p.name]) or _id_column(props[p.name])
            if col and (word := _WORD.search(label)):
                heads.add(word.group(0).lower())
    known = frozenset(p.name for p in ontology.properties())
    words = "|".join(sorted(map(re.escape, heads), key=len, reverse=True)) or "(?!)"
    return _Compiled(trie, props, known, re.compile(rf"(?i)(?<![A-Za-z0-9])(?:{words})\b"))


def _prop(p: PropertyDef, hints: OntologyMatching | None) -> _Prop:
    if hints is None:
        return _Prop(p.name, _guess_kind(p.unit), p.unit, None)
    pat = hints.value_pattern(p.name)
    return _Prop(
        p.name,
        hints.value_kind(p.name),
        p.unit,
        re.compile(pat) if pat else None,
        hints.section(p.name),
        hints.read_from(p.name),
    )


def _column(prop: _Prop) -> bool:
    """Whether a label of ``prop`` may head a table column (section-bound values)."""
    return prop.section is not None and prop.kind != "procedure"


def _id_column(prop: _Prop) -> bool:
    """An identifier found by its pattern in the rows under a header naming it."""
    return prop.kind == "identifier" and prop.pattern is not None and prop.section is None


def _guess_kind(unit: str | None) -> str:
    if unit in ("°C", "K", "°F"):
        return "temperature"
    return "number" if unit else "text"


_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def _squash(text: str) -> str:
    return _NOT_ALNUM.sub("", text.lower())


def _trie_add(trie: dict[str, object], key: str, name: str) -> None:
    if not key:
        return
    node = trie
    for ch in key:
        node = node.setdefault(ch, {})  # type: ignore[assignment]
    names: tuple[str, ...] = node.get(_END, ())  # type: ignore[assignment]
    if name not in names:
        node[_END] = (*names, name)


def _match_labels(trie: dict[str, object], text: str) -> list[tuple[tuple[str, ...], int]]:
    """Labels at the start of ``text`` ending on a word boundary, longest first:
    ``(properties, end)`` pairs."""
    node: dict[str, object] = trie
    found: list[tuple[tuple[str, ...], int]] = []
    n = len(text)
    low = text.lower()
    if len(low) != n:  # a character whose lower case is longer ("İ"): keep offsets aligned
        low = "".join(ch.lower()[:1] for ch in text)
    for k, c in enumerate(low):
        if c not in _ALNUM:
            continue
        nxt = node.get(c)
        if nxt is None:
            break
        node = nxt  # type: ignore[assignment]
        names = node.get(_END)
        if names is not None and (k + 1 >= n or not text[k + 1].isalnum()):
            found.append((names, k + 1))  # type: ignore[arg-type]
    return found[::-1]


# ---------------------------------------------------------------- values

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
)
_SEP = re.compile(r"(?:\s|:|#|=|\)|\(%\)|\.(?!\d)|-(?=\s)|–|;)*")
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
    (``"2 - 8 °C"``, ``"11-13"``) the lower bound is returned.

    Args:
        value: the verbatim value.
        kind: ``temperature``, ``number``, ``range`` or other (not parsed).
        unit: the property's canonical unit.

    Returns:
        ``(number, unit)`` or ``(None, None)``.
    """
    if kind == "temperature":
        return _parse_temperature(value)
    if kind == "range":
        m = _FIRST_NUM.search(value)
        return (_to_float(m.group("a")), unit) if m else (None, None)
    if kind == "number":
        return _parse_number(value, unit)
    return None, None


def _parse_temperature(value: str) -> tuple[float | None, str | None]:
    fahrenheit: float | None = None
    for m in _TEMP.finditer(value):
        num = _to_float(m.group("a"))
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
    "mmHg": {
        "kPa": 7.50062, "hPa": 0.750062, "mbar": 0.750062, "Pa": 0.00750062,
        "torr": 1.0, "mm Hg": 1.0, "atm": 760.0, "psi": 51.7149, "bar": 750.062,
    },
}  # fmt: skip


def _parse_number(value: str, unit: str | None) -> tuple[float | None, str | None]:
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


# ---------------------------------------------------------------- page scanning

_LEAD = re.compile(r"^[\s•·*\-]*(?:\d{1,2}(?:\s?\.\s?\d{1,2}){0,2}\s?\.?\s+(?=[A-Za-z]))?")
# "SECTION 7", "Section 7:" or "7. Handling"; not a sentence such as "Section 8. Smoking ..."
_SECTION = re.compile(
    r"^\s*(?:SECTION\s*(\d{1,2})\b|Section\s*(\d{1,2})\s*:)|^\s*(\d{1,2})\s?\.\s+[A-Z][A-Za-z]"
)
_CATEGORY = re.compile(
    r"^\s*(?P<cls>[A-Za-z][A-Za-z0-9 ,/()'\-–.]*?)[\s\-–:,(]*\bCat\s?(?:egory|\.)?\s*"
    r"(?P<cat>\d(?:\s?[A-Ca-c]\b)?)"
)
_CODE = re.compile(
    r"\b(?P<t>[HP])\s?(?P<d>\d\s?\d\s?\d)(?!\d)(?P<more>(?:\s?\+\s?P?\s?\d\s?\d\s?\d)*)"
)
_CAS = re.compile(r"(?<![\d-])\d{2,7}\s?-\s?\d{2}\s?-\s?\d(?![\d-])")
_LIMIT = re.compile(r"\b(?P<t>TWA|STEL|Ceiling|IDLH|PEL|TLV|REL)\b(?!\w)")
_LIMIT_VALUE = re.compile(r"\d[\d.,]*\s*(?:ppm|mg\s*/\s*m|f/cc|mppcf)", re.IGNORECASE)
_MAX_VALUE = 300
_MAX_PROCEDURE = 1200
_QUALIFIER = re.compile(r"\([^()]*(?:\([^()]*\)[^()]*)*\)")
_PAGE_HEADER = re.compile(r"(?i)\bpage\s*\d+|www\.|\.com\b")
_PAGE_LINE = re.compile(r"(?i)\bpage\s*\d+\s*of\s*\d+")  # a running header inside the text
_SUBSECTION_NUM = re.compile(r"^\s*(\d{1,2})\s?\.\s?\d{1,2}\.?\s+[A-Z]")
_WRAPPED = 50
_COLON_LABEL = re.compile(r"^[A-Z][A-Za-z0-9 '()/#&.,-]{1,40}?\s?:")
_SUBSECTION = re.compile(r"^\s*\d{1,2}\s?\.\s?\d")
_HEADING_WORDS = re.compile(r"\s*[A-Z][a-z]+(?:[ /][A-Za-z]+){0,2}\s*(?:$|:)")  # "Eyes", "Fire:"
_RESPONSE = re.compile(r"if\s+(?:on|in|inhaled|swallowed|exposed)\b", re.IGNORECASE)


@dataclass(slots=True)
class _State:
    comp: _Compiled
    facts: list[ExtractedFact] = field(default_factory=list)
    seen: dict[str, list[str]] = field(default_factory=dict)
    section: int = 0
    agency: str | None = None
    pending: str | None = None  # a procedure whose heading ended the previous page
    columns: list[str] = field(default_factory=list)  # properties of a table header in force
    ids: list[str] = field(default_factory=list)  # identifiers a table header names
    later: list[ExtractedFact] = field(default_factory=list)  # kept after the others
    ahead: bool = False  # reading a later section's item (a response statement)

    def add(self, fact: ExtractedFact) -> None:
        values = self.seen.setdefault(fact.prop, [])
        key = _squash(fact.object_label or fact.value)
        if key not in values:
            values.append(key)
            self.facts.append(fact)

    def result(self) -> list[ExtractedFact]:
        """Facts with, per property, unavailable ones dropped when a value is stated,
        and at most a few distinct values kept."""
        for fact in self.later:
            self.add(fact)
        self.later = []
        stated = {f.prop for f in self.facts if f.status == "stated"}
        counts: dict[str, int] = {}
        out: list[ExtractedFact] = []
        for f in _latest_entries(self.facts, self.comp.props):
            if f.status == "unavailable" and f.prop in stated:
                continue
            cap = _cap(f, self.comp.props.get(f.prop))
            if counts.get(f.prop, 0) >= cap:
                continue
            counts[f.prop] = counts.get(f.prop, 0) + 1
            out.append(f)
        return out


_ENTRY = re.compile(r"(\d{1,2})\s*[:.)]\s+(\S.*)")  # "1: 08/01/2023", "2) 11/12/2024"


def _latest_entries(facts: list[ExtractedFact], props: dict[str, _Prop]) -> list[ExtractedFact]:
    """Numbered entries of one label ("Revision 1: 08/01/2023", "Revision 2: 11/12/2024"):
    only the highest-numbered one is kept, in the first one's place, its number taken off
    the value. Procedures keep their numbered steps."""
    best: dict[str, tuple[int, ExtractedFact]] = {}  # prop -> (number, fact without it)
    for f in facts:
        m = _ENTRY.fullmatch(f.value) if f.status == "stated" and not f.object_label else None
        prop = props.get(f.prop)
        if m is None or prop is None or prop.kind == "procedure":
            continue
        if int(m.group(1)) > best.get(f.prop, (-1, f))[0]:
            best[f.prop] = (int(m.group(1)), replace(f, value=m.group(2)))
    out: list[ExtractedFact] = []
    for f in facts:
        entry = best.get(f.prop)
        if entry is None or f.status != "stated" or not _ENTRY.fullmatch(f.value):
            out.append(f)
        elif entry[1] not in out:
            out.append(entry[1])
    return out


def _cap(fact: ExtractedFact, prop: _Prop | None) -> int:
    """How many distinct values of one property a sheet may state.

    A procedure may have two items under one property's labels ("Skin protection" and
    "Body protection" in section 8).
    """
    if fact.status == "unavailable":
        return 1
    if fact.object_label is not None:
        return 24
    if fact.prop.endswith(("Twa", "Stel", "Ceiling")) or fact.prop == "idlh":
        return 6
    return 2 if prop is not None and prop.kind == "procedure" else 1


def _lines(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for m in re.finditer(r"\n", text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return spans


def _scan_page(state: _State, page: Page) -> None:
    text = page.text
    spans = _lines(text)
    idx = _pending(state, page, spans)
    while idx < len(spans):
        s, e = spans[idx]
        line = text[s:e]
        idx += 1
        if not line.strip():
            continue
        _track_section(state, line)
        hit = _line_label(state, line)
        if hit is None:
            _structured(state, page, line, s)
            continue
        off, le, name = hit
        if state.comp.props[name].kind == "procedure":
            idx = _procedure(state, page, spans, idx - 1, s + off, s + le, name)
            continue
        if not _squash(line[le:]):
            block = _label_block(state, text, spans, idx - 1)
            if len(block) >= 2:
                idx = _read_block(state, page, spans, idx - 1, block)
                continue
        if not _label_fact(state, page, spans, idx - 1, s + off, s + le, name):
            _structured(state, page, line, s)


def _line_label(state: _State, line: str) -> tuple[int, int, str] | None:
    """(label start, label end, property) of a line starting with a label.

    The longest label wins whose property may be printed in the current section (a
    property annotated with a section is only read inside it).
    """
    lead = _LEAD.match(line)
    off = lead.end() if lead else 0
    for names, end in _match_labels(state.comp.trie, line[off : off + 90]):
        name = _fitting(state, names, line[off:])
        if name is not None:
            return off, off + end, name
    return None


def _fitting(state: _State, names: tuple[str, ...], line: str = "") -> str | None:
    """The property among ``names`` that fits the current section: own section first,
    then one bound to no section, then one of the previous section (PDF text order
    sometimes prints a section's items after the following section's heading). A later
    section's item only as a GHS response statement of the hazard section ("IF ON SKIN
    (or hair): ..." is first aid for the skin; it is kept after section 4's own text)."""
    free: str | None = None
    near: str | None = None
    for name in names:
        section = state.comp.props[name].section
        if section is not None and section == state.section:
            return name
        if section == 4 and state.section == 2 and _RESPONSE.match(line):
            return name
        if section is None and free is None:
            free = name
        if section is not None and section == state.section - 1 and near is None:
            near = name
    return free or near


def _label_block(state: _State, text: str, spans: list[tuple[int, int]], idx: int) -> list[str]:
    """Properties of a column of label-only lines (values follow in the same order)."""
    names: list[str] = []
    for s, e in spans[idx:]:
        line = text[s:e]
        hit = _line_label(state, line)
        if hit is None or _squash(line[hit[1] :]):
            break
        names.append(hit[2])
    return names


def _read_block(
    state: _State, page: Page, spans: list[tuple[int, int]], idx: int, names: list[str]
) -> int:
    text = page.text
    first = idx + len(names)
    for k, name in enumerate(names):
        pos = first + k
        if pos >= len(spans) or not _plain_line(state, text, *spans[pos]):
            return pos
        s, e = spans[pos]
        value = text[s:e].strip()
        quote_start = s + text[s:e].index(value)
        fact = _make_fact(state.comp.props[name], value, value, page.number)
        if fact is not None and text[quote_start : quote_start + len(value)] == value:
            state.add(fact)
    return first + len(names)


def _track_section(state: _State, line: str) -> None:
    """Follow section headings, and subsection numbers ("7.2 Conditions ...") where the
    PDF's text order puts a ``SECTION n`` heading after its content."""
    m = _SECTION.match(line)
    sub = None if m else _SUBSECTION_NUM.match(line)
    if m or sub:
        num = int(m.group(1) or m.group(2) or m.group(3)) if m else int(sub.group(1))  # type: ignore[union-attr]
        if state.section <= num <= state.section + 3 and num <= 16 and num != state.section:
            state.section = num
            state.agency = None


def _label_fact(
    state: _State, page: Page, spans: list[tuple[int, int]], idx: int, qs: int, le: int, name: str
) -> bool:
    text = page.text
    line_end = spans[idx][1]
    sep_end = _SEP.match(text, le, line_end).end()  # type: ignore[union-attr]
    rest = text[sep_end:line_end]
    if _numbered(text, spans[idx][0], qs) and ":" not in text[le:sep_end] and _squash(rest):
        return False  # a numbered subsection title, not "label: value"
    value = text[sep_end:line_end].strip()
    end = line_end
    prop = state.comp.props[name]
    qualified = bool(_QUALIFIER.fullmatch(value))  # "CERCLA ... List (40 CFR 302.4)"
    if qualified:
        value = ""
    if not _squash(value):
        idx += 1
        while idx < len(spans) and _PAGE_LINE.search(text[spans[idx][0] : spans[idx][1]]):
            idx += 1  # a running page header between a label and its value
        if idx >= len(spans):  # the label ends the page: its value starts the next one
            state.pending = name
            return True
        if not _next_value(state, text, spans[idx], qualified):
            return False
        value, end = text[spans[idx][0] : spans[idx][1]].strip(), spans[idx][1]
    if prop.kind == "text":
        value, end = _continue(state, text, spans, idx, value, end)
    fact = _make_fact(prop, value, text[qs:end].rstrip(), page.number)
    if fact is None:
        return False
    state.add(fact)
    if name == "targetOrgans" and "hasTargetOrgan" in state.comp.known and fact.status == "stated":
        _organs(state, fact)
    return True


def _numbered(text: str, line_start: int, qs: int) -> bool:
    return bool(re.search(r"\d", text[line_start:qs]))


def _next_value(state: _State, text: str, span: tuple[int, int], qualified: bool) -> bool:
    """Whether the line after a label-only line is its value. After a heading with a
    qualifier in parentheses the value line may itself hold a colon ("RQ: 5000 lb")."""
    if not qualified:
        return _plain_line(state, text, *span)
    line = text[span[0] : span[1]]
    return bool(line.strip()) and not _ends_procedure(state, line)


def _plain_line(state: _State, text: str, s: int, e: int) -> bool:
    """A line that can continue a value: not empty, not a label, not a heading."""
    line = text[s:e].strip()
    if not line or _SECTION.match(line) or _SUBSECTION.match(line) or _COLON_LABEL.match(line):
        return False
    if ("Cat" in line or "CAT" in line) and _CATEGORY.match(line):
        return False
    return _line_label(state, line) is None


def _continue(
    state: _State, text: str, spans: list[tuple[int, int]], idx: int, value: str, end: int
) -> tuple[str, int]:
    """Append wrapped continuation lines of a text value (at most 3)."""
    for nxt in range(idx + 1, min(idx + 4, len(spans))):
        last = text[spans[nxt - 1][0] : spans[nxt - 1][1]].strip()
        if value.endswith(".") or len(value) >= _MAX_VALUE or len(last) < _WRAPPED:
            break
        if not _plain_line(state, text, *spans[nxt]):
            break
        value = value + " " + text[spans[nxt][0] : spans[nxt][1]].strip()
        end = spans[nxt][1]
    return value, end


def _procedure(
    state: _State, page: Page, spans: list[tuple[int, int]], idx: int, qs: int, le: int, name: str
) -> int:
    """Read a procedure: the sheet's own lines after its heading, up to the next item.

    The value starts after the label (or on the next line when the label is a numbered
    subsection title or stands alone) and runs until a line that starts another item of
    the section (a label that fits the section), a (sub)section heading, or the end of
    the page. A heading that ends a page continues on the next one. Returns the index of
    the first line not consumed.
    """
    text = page.text
    s, e = spans[idx]
    sep_end = _SEP.match(text, le, e).end()  # type: ignore[union-attr]
    title = _numbered(text, s, qs) and ":" not in text[le:sep_end]
    inline = not title and bool(_squash(text[sep_end:e]))
    section = state.comp.props[name].section
    state.ahead = section is not None and section > state.section  # a response statement
    first, end, nxt = _block(state, text, spans, idx + 1)
    state.ahead = False
    _block_tables(state, page, spans[idx + 1 : nxt])
    if inline:
        first, end = sep_end, max(end, e) if first is not None else e
    if first is None:
        if nxt >= len(spans):
            state.pending = name
        return nxt
    _add_procedure(state, state.comp.props[name], text[first:end], text[qs:end], page.number)
    return nxt


def _block(
    state: _State, text: str, spans: list[tuple[int, int]], idx: int
) -> tuple[int | None, int, int]:
    """``(start, end, next line)`` of the lines from ``idx`` that continue a procedure."""
    first: int | None = None
    end = spans[idx - 1][1] if idx > 0 else 0
    j = idx
    while j < len(spans):
        s, e = spans[j]
        line = text[s:e]
        if line.strip() and not _PAGE_LINE.search(line):
            if _ends_procedure(state, line) or (first is not None and e - first > _MAX_PROCEDURE):
                break
            first = s if first is None else first
            end = e
        j += 1
    return first, end, j


def _block_tables(state: _State, page: Page, spans: list[tuple[int, int]]) -> None:
    """Tables inside a procedure's lines (toxicity data under "Acute toxicity")."""
    state.columns = []
    for s, e in spans:
        line = page.text[s:e]
        if header := _table_header(state, line):
            state.columns = header
        elif state.columns:
            _table_row(state, page, line, s)
    state.columns = []


def _ends_procedure(state: _State, line: str) -> bool:
    """A (sub)section heading, or a line starting another item (a wrapped line, which
    starts in lower case, continues the procedure)."""
    if _SECTION.match(line) or _SUBSECTION.match(line):
        return True
    if line.lstrip()[:1].islower():
        return False
    if state.ahead and _HEADING_WORDS.match(line):
        return True  # "Eyes", "Fire": the next group of the hazard section's statements
    if _line_label(state, line) is not None:
        return True
    lead = _LEAD.match(line)
    off = lead.end() if lead else 0
    later = (  # an item of a later section: the text runs on past a missed heading
        (sec := state.comp.props[n].section) is not None and sec > state.section
        for names, _end in _match_labels(state.comp.trie, line[off : off + 90])
        for n in names
    )
    return any(later)


def _pending(state: _State, page: Page, spans: list[tuple[int, int]]) -> int:
    """Finish a procedure whose heading ended the previous page; the first line to scan."""
    name, state.pending = state.pending, None
    if name is None:
        return 0
    text = page.text
    start = 0
    while start < min(len(spans), 3) and _PAGE_HEADER.search(text[slice(*spans[start])]):
        start += 1
    first, end, nxt = _block(state, text, spans, start)
    if first is None:
        return start
    quote = text[first:end]
    _add_procedure(state, state.comp.props[name], quote, quote, page.number)
    return nxt


def _add_procedure(state: _State, prop: _Prop, raw: str, quote: str, page: int) -> None:
    raw = "\n".join(ln for ln in raw.split("\n") if not _PAGE_LINE.search(ln))
    fact = _make_fact(prop, " ".join(raw.split()), quote.rstrip(), page)
    if fact is not None and prop.section is not None and prop.section > state.section:
        state.later.append(fact)  # a response statement: after the section's own text
    elif fact is not None:
        state.add(fact)


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
    if prop.kind in ("temperature", "number", "range") and not re.search(r"\d", value):
        return None
    number, unit = parse_quantity(value, kind=prop.kind, unit=prop.unit)
    return ExtractedFact(prop.name, value, quote, page, number=number, unit=unit)


def _unglued(prop: _Prop, value: str) -> str:
    """An identifier whose text ran into the next words without a space
    ("800-535-5053Lab Alley LLC", two text columns merged): the identifier alone."""
    m = prop.pattern.search(value) if prop.pattern is not None else None
    if m is None or m.end() >= len(value) or not m.group(0)[-1:].isdigit():
        return value
    return value[: m.end()] if value[m.end()].isalpha() else value


def _organs(state: _State, fact: ExtractedFact) -> None:
    for part in re.split(r"[,;]|\band\b", fact.value.strip(" -.")):
        organ = part.strip(" -.")
        if 2 < len(organ) < 60:
            state.add(
                ExtractedFact(
                    "hasTargetOrgan",
                    organ,
                    fact.quote,
                    fact.page,
                    object_label=organ,
                    object_class="Organ",
                )
            )


# ---------------------------------------------------------------- structured readers


def _structured(state: _State, page: Page, line: str, start: int) -> None:
    ids = state.ids
    if cols := _table_header(state, line):
        state.columns = cols
        return
    if state.ids:
        return
    if ids:  # the first row under the header
        state.ids = ids
        _id_cells(state, page, line, start)
        state.ids = []
    if state.columns and _table_row(state, page, line, start):
        return
    sec = state.section
    if sec == 2 or (sec == 0 and page.number <= 2):
        _classification(state, page, line, start)
        _codes(state, page, line, start)
    elif sec == 3:
        _component(state, page, line, start)
    elif sec == 8:
        _exposure(state, page, line, start)


def _quote(page: Page, line: str, start: int) -> str:
    stripped = line.strip()
    return page.text[start + line.index(stripped) : start + line.index(stripped) + len(stripped)]


def _classification(state: _State, page: Page, line: str, start: int) -> None:
    if "hasClassification" not in state.comp.known or ("Cat" not in line and "CAT" not in line):
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
    state.add(
        ExtractedFact(
            "hasClassification",
            line.strip(),
            _quote(page, line, start),
            page.number,
            object_label=label,
            object_class="HazardClassification",
        )
    )


def _codes(state: _State, page: Page, line: str, start: int) -> None:
    m = _CODE.search(line)
    if m is None or m.start() > 8:
        return
    code = re.sub(r"\s", "", m.group("t") + m.group("d") + m.group("more"))
    is_h = m.group("t") == "H"
    prop = "hasHazardStatement" if is_h else "hasPrecaution"
    if prop not in state.comp.known:
        return
    rest = line[m.end() :].strip(" :-–\t")
    state.add(
        ExtractedFact(
            prop,
            rest or code,
            _quote(page, line, start),
            page.number,
            object_label=f"{code}: {rest}" if rest else code,
            object_class="HazardStatement" if is_h else "PrecautionaryStatement",
        )
    )


def _component(state: _State, page: Page, line: str, start: int) -> None:
    if "hasComponent" not in state.comp.known:
        return
    m = _CAS.search(line)
    if m is None:
        return
    name = re.sub(r"[\d\s.,<>=≤≥%~-]+$", "", line[: m.start()]).strip(" :;,-")
    name = re.sub(r"\s+", " ", name)
    if len(re.sub(r"[^A-Za-z]", "", name)) < 3 or name.lower().startswith("cas"):
        return
    state.add(
        ExtractedFact(
            "hasComponent",
            line.strip(),
            _quote(page, line, start),
            page.number,
            object_label=name[:80],
            object_class="Chemical",
        )
    )
    conc = _PERCENT.search(line, m.end()) or _PERCENT.search(line[: m.start()])
    if conc is not None and "concentration" in state.comp.props:
        fact = _make_fact(
            state.comp.props["concentration"], conc.group(0), _quote(page, line, start), page.number
        )
        if fact is not None:
            state.add(fact)


_PERCENT = re.compile(
    r"(?:[<>≤≥~]\s*=?\s*)?\d+(?:[.,]\d+)?\s*(?:(?:-|–|to)\s*\d+(?:[.,]\d+)?\s*)?%"
)
_AGENCIES = (("ACGIH", "acgihTlv"), ("NIOSH", "nioshRel"), ("OSHA", "oshaPel"))


def _exposure(state: _State, page: Page, line: str, start: int) -> None:
    upper = line.upper()
    for word, prefix in _AGENCIES:
        if word in upper and not _LIMIT_VALUE.search(line):
            state.agency = prefix
            return
    if "VACATED" in upper:
        return
    m = _LIMIT.search(line)
    vm = _LIMIT_VALUE.search(line)
    if m is None or vm is None or vm.start() < m.start():
        return
    prop = _limit_prop(state.agency, m.group("t"), line)
    if prop is None or prop not in state.comp.props:
        return
    value = line[m.end() :].strip(" :-–\t")
    fact = _make_fact(state.comp.props[prop], value, _quote(page, line, start), page.number)
    if fact is not None:
        state.add(fact)


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


_CELL = re.compile(
    r"[<>≤≥]?\s*\d[\d,.]*(?:\s*[-–]\s*\d[\d,.]*)?\s*(?:mg|g|µg|ug|ml|mL|ppm|ppb)"
    r"(?:\s*/\s*(?:kg|l|L|m3|m³))?"
    r"(?:\s*,?\s*\d+\s*h(?:ours?|r)?\b)?(?:\s*\([^()]*\))?|(?<![\w-])[-–](?![\w-])|\bN/?A\b|(?i:not\s+(?:listed|available)|no\s+data)"
)


def _table_header(state: _State, line: str) -> list[str]:
    """The properties of a table header row: two or more labels of properties bound to
    the current section, each at a word start ("Component LD50 Oral LD50 Dermal").

    A header that names an identifier with a value pattern ("Component TSCA EINECS")
    sets ``state.ids``: the rows below are searched for that pattern.
    """
    cols: list[str] = []
    ids: list[str] = []
    pos = 0
    if _PROSE.search(line):  # a header row is a list of column names, not a sentence
        state.ids = ids
        return cols
    for m in state.comp.heads.finditer(line):
        if m.start() < pos:
            continue
        for names, end in _match_labels(state.comp.trie, line[m.start() : m.start() + 60]):
            props = [state.comp.props[n] for n in names]
            col = next((p.name for p in props if _column(p) and p.section == state.section), None)
            ident = next(
                (p.name for p in props if _id_column(p) and m.start() > 0 and state.section != 3),
                None,
            )  # a composition table lists components, not the product
            if col is not None and col not in cols:
                cols.append(col)
            elif ident is not None and ident not in ids:
                ids.append(ident)
            else:
                continue
            pos = m.start() + end
            break
    state.ids = ids
    return cols if len(cols) >= 2 else []


def _id_cells(state: _State, page: Page, line: str, start: int) -> None:
    """Identifiers under a header that names them, found by their value pattern."""
    for name in state.ids:
        prop = state.comp.props[name]
        m = prop.pattern.search(line) if prop.pattern is not None else None
        if m is not None:
            state.add(ExtractedFact(name, m.group(0), _quote(page, line, start), page.number))


def _table_row(state: _State, page: Page, line: str, start: int) -> bool:
    """A row under a table header: one cell per column (a value with its unit, or a
    dash / N/A placeholder). Other lines end the table."""
    cells = [m.group(0).strip() for m in _CELL.finditer(line)]
    if not cells and (_PAGE_LINE.search(line) or len(line.strip()) < 40):
        return True  # a running header or the first line of a wrapped name
    if len(cells) != len(state.columns):
        state.columns = []
        return False
    for name, cell in zip(state.columns, cells, strict=True):
        if cell in ("-", "–") or not re.search(r"\d", cell):
            continue
        fact = _make_fact(state.comp.props[name], cell, _quote(page, line, start), page.number)
        if fact is not None:
            state.add(fact)
    return True


# ---------------------------------------------------------------- product name

_PHONE_LINE = re.compile(r"^[\d\s().+\-]{7,}$")
_SDS_TITLE = re.compile(r"^\s*(?:SDS|MSDS)\s*[–—-]\s*(?P<t>.+?)\s+Page\s*\d", re.IGNORECASE)
_NOT_TITLE = re.compile(
    r"safety\s*data\s*sheet|www\.|\.com|page\s*\d|^section|^\d{1,2}(?:\.\d{1,2})+\.?\s"
    r"|\bsee\s+section\b|^(?:\S+\s+){7,}\S+[.:]$",  # a sentence, not a name
    re.IGNORECASE,
)
_SECTION_ONE = re.compile(r"^\s*section\s*1\s*[:.]\s*identification", re.IGNORECASE)
_SDS_BANNER = re.compile(r"^\s*(?:material\s+)?safety\s*data\s*sheet\s*$", re.IGNORECASE)
_STEM_ID = re.compile(
    r"[-_](?:[0-9a-f]{12,14}|v\d+|\d{1,2}[-_]\d{1,2}[-_]\d{2,4}.*)$", re.IGNORECASE
)


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


def _clean_name(value: str) -> str:
    name = re.sub(r"\s*(?:I\s?tem\s*)?#.*$", "", value, flags=re.IGNORECASE)
    name = re.sub(r"\s+", " ", name).strip(" :-–,")
    if name.isupper() and len(name) > 4:
        name = name.title()
    return name


def _stem_name(source_name: str | None) -> str:
    if not source_name:
        return "Unknown product"
    stem = Path(source_name).stem
    stem = _STEM_ID.sub("", stem)
    return re.sub(r"[-_]+", " ", stem).strip().title() or "Unknown product"


_IDENTITY = ("productName", "supplierName", "productCode", "synonym", "recommendedUse")
"""Section 1 items whose labels may stand beside the product name in a two-column
layout ("Product Name iluma Glass & Mirror Cleaner Company")."""


def _column_labels(ontology: Ontology) -> tuple[str, ...]:
    known = {p.name: p for p in ontology.properties()}  # another ontology may lack some
    labels = {lab for name in _IDENTITY if name in known for lab in known[name].labels}
    return tuple(sorted(labels, key=len, reverse=True))


def _trimmed(title: str, labels: Sequence[str]) -> str:
    """``title`` without a leading label ("Product Name ...") or a trailing one (the
    next column's "Company")."""
    for lab in labels:
        pattern = re.escape(lab).replace("\\ ", r"\s+")
        title = re.sub(rf"^\s*{pattern}\s*:?\s+", "", title, flags=re.I)
        title = re.sub(rf"\s+{pattern}\s*:?\s*$", "", title, flags=re.I)
    return title


def _placeholder(name: str) -> bool:
    """A "name" that says there is none ("None.", "N/A", "Not available")."""
    bare = name.strip(" .:-")
    return not bare or is_unavailable(bare) or bare.lower() in ("none", "n/a", "na", "unknown")


def _names(
    pages: Sequence[Page],
    facts: Sequence[ExtractedFact],
    source_name: str | None,
    labels: Sequence[str] = (),
) -> tuple[str, tuple[str, ...], bool]:
    fields = [
        _clean_name(_trimmed(f.value, labels))
        for f in facts
        if f.prop == "productName" and f.status == "stated"
    ]
    fields = [f for f in fields if len(f) > 2 and not _placeholder(f)]
    title = _title(pages)
    title = _trimmed(title, labels) if title else None
    fallback = False
    if title and not _placeholder(title):
        subject = _clean_name(title)
    elif fields:
        subject = fields[0]
    else:
        subject, fallback = _stem_name(source_name), True
    aliases: list[str] = []
    for f in facts:
        if f.status != "stated":
            continue
        if f.prop == "productName":
            aliases.append(_clean_name(_trimmed(f.value, labels)))
        elif f.prop == "synonym":
            aliases.extend(s.strip(" .") for s in re.split(r"[;|]", f.value))
        elif f.prop == "molecularFormula" and (formula := _formula_name(f.value)):
            aliases.append(formula)  # people name a chemical by it: "H2SO4 96%"
    out: list[str] = []
    for a in aliases:
        if _placeholder(a):
            continue
        if 2 < len(a) <= 80 and a.lower() != subject.lower() and a not in out:
            out.append(a)
    return subject, tuple(out[:8]), fallback


_FORMULA = re.compile(r"(?:[A-Z][a-z]?\d*){2,}|[A-Z][a-z]?\d+")
_ELEMENTS = frozenset(  # element symbols up to curium, run together
    re.findall(
        r"[A-Z][a-z]?",
        "HHeLiBeBCNOFNeNaMgAlSiPSClArKCaScTiVCrMnFeCoNiCuZnGaGeAsSeBrKrRbSrYZrNbMoTcRuRhPdAgCdInSn"
        "SbTeIXeCsBaLaCePrNdPmSmEuGdTbDyHoErTmYbLuHfTaWReOsIrPtAuHgTlPbBiPoAtRnFrRaAcThPaUNpPuAmCm",
    )
)


def _formula_name(value: str) -> str | None:
    """A printed molecular formula as one word ("C3H6O", "K N O3" -> "KNO3"), without
    its water of hydration; ``None`` for anything else ("Mixture", "(C6 H10 O5)n")."""
    head = re.split(r"\s*[·.*x-]\s*\d*\s*H2\s*O\b", value.strip())[0]
    compact = re.sub(r"\s+", "", head)
    if len(compact) > 20 or not _FORMULA.fullmatch(compact):
        return None
    symbols = re.findall(r"[A-Z][a-z]?", compact)
    return compact if all(sym in _ELEMENTS for sym in symbols) else None


# ---------------------------------------------------------------- values read from others

_CLAUSE = re.compile(r"(?<=[.;])\s+(?=\S)")


def _derive(state: _State) -> None:
    """Values printed inside another property's value (``read_from``): a colour in the
    appearance line, a storage temperature in the storage conditions. Only for
    properties the sheet states no value for; the source's quote is kept."""
    stated = {f.prop for f in state.facts if f.status == "stated"}
    for prop in state.comp.props.values():
        if not prop.read_from or prop.name in stated:
            continue
        for f in [f for f in state.facts if f.prop in prop.read_from and f.status == "stated"]:
            fact = _carried(prop, f)
            if fact is not None:
                state.add(fact)
                break


def _carried(prop: _Prop, source: ExtractedFact) -> ExtractedFact | None:
    """The clause of ``source``'s value that holds a value of ``prop``.

    A quantity is one clause; a text or procedure value is the first matching clause and
    the matching ones right after it (at most three): "Wear chemical resistant gloves.
    Laminate gloves are recommended." says which gloves, its first sentence does not.
    """
    clauses = _CLAUSE.split(source.value)
    for i, clause in enumerate(clauses):
        if prop.pattern is not None and not prop.pattern.search(clause):
            continue
        number, unit = parse_quantity(clause, kind=prop.kind, unit=prop.unit)
        if prop.kind in ("temperature", "number", "range"):
            if number is None:
                continue
        elif prop.pattern is not None:
            run = list(itertools.takewhile(prop.pattern.search, clauses[i + 1 : i + 3]))
            clause = " ".join([clause.strip(), *(c.strip() for c in run)])
        return ExtractedFact(
            prop.name, clause.strip(), source.quote, source.page, number=number, unit=unit
        )
    return None


# ---------------------------------------------------------------- entry point


def _with_chunks(
    facts: list[ExtractedFact], pages: Sequence[Page], chunks: Sequence[Chunk]
) -> list[ExtractedFact]:
    if not chunks:
        return facts
    by_page: dict[int, list[Chunk]] = {}
    for c in chunks:
        by_page.setdefault(c.page, []).append(c)
    texts = {p.number: p.text for p in pages}
    out: list[ExtractedFact] = []
    for f in facts:
        pos = texts.get(f.page, "").find(f.quote)
        cid = None
        if pos >= 0:
            for c in by_page.get(f.page, ()):
                if c.start <= pos and pos + len(f.quote) <= c.end:
                    cid = c.chunk_id
                    break
            if cid is None:
                cid = next(
                    (c.chunk_id for c in by_page.get(f.page, ()) if c.start <= pos < c.end), None
                )
        out.append(_replace_chunk(f, cid))
    return out


def _replace_chunk(f: ExtractedFact, chunk_id: str | None) -> ExtractedFact:
    return ExtractedFact(
        f.prop,
        f.value,
        f.quote,
        f.page,
        chunk_id,
        f.number,
        f.unit,
        f.status,
        f.object_label,
        f.object_class,
    )


def extract_offline(
    pages: Sequence[Page],
    *,
    ontology: Ontology,
    chunks: Sequence[Chunk] = (),
    source_name: str | None = None,
) -> Extraction:
    """Extract facts from a document's pages without an LLM.

    Args:
        pages: the document's pages (1-based numbers, pypdf text).
        ontology: the ontology whose datatype-property labels drive extraction.
        chunks: the document's chunks; each fact gets the chunk covering its quote.
        source_name: file name, used for the product name when the sheet gives none.

    Returns:
        The product name, its aliases, and the facts, in page order.
    """
    state = _State(_compile(ontology))
    for page in pages:
        _scan_page(state, page)
    _derive(state)
    found = state.result()
    subject, aliases, fallback = _names(pages, found, source_name, _column_labels(ontology))
    warnings: list[str] = []
    if fallback:
        warnings.append(f"no product name found; using {subject!r} from the file name")
    if not found:
        warnings.append("no facts found")
    facts = _with_chunks(found, pages, chunks)
    return Extraction(
        subject=subject, aliases=aliases, facts=tuple(facts), warnings=tuple(warnings)
    )
