"""Offline (no-LLM) fact extraction driven by the ontology's labels.

For every datatype property the ontology lists labels and alternative labels (the
variants sheets print: "Flash Point", "Flashpoint", "UN-no", "UN No." ...). A line that
starts with one of them (case, spacing and punctuation ignored, so "AUTO - IGNITION
TEMPERATURE" matches "Autoignition temperature") yields a fact whose value is the rest of
the line, or the next line when the label stands alone. Values are checked against the
property's ``valueKind`` / ``valuePattern`` annotations when the ontology provides them
(:class:`~hybrid_rag.ontology.TurtleOntology`), and quantities are parsed into the
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from hybrid_rag.models import Chunk, Page
    from hybrid_rag.protocols import Ontology

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

    product: str
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


@dataclass(frozen=True, slots=True)
class _Compiled:
    trie: dict[str, object]
    props: dict[str, _Prop]
    known: frozenset[str]


_CACHE: dict[int, tuple[Ontology, _Compiled]] = {}


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
    kind_of = getattr(ontology, "value_kind", None)
    pattern_of = getattr(ontology, "value_pattern", None)
    trie: dict[str, object] = {}
    props: dict[str, _Prop] = {}
    for p in ontology.properties():
        if p.kind != "datatype":
            continue
        kind = kind_of(p.name) if callable(kind_of) else _guess_kind(p.unit)
        pat = pattern_of(p.name) if callable(pattern_of) else None
        props[p.name] = _Prop(p.name, str(kind), p.unit, re.compile(pat) if pat else None)
        for label in p.labels:
            _trie_add(trie, _squash(label), p.name)
    known = frozenset(p.name for p in ontology.properties())
    return _Compiled(trie, props, known)


def _guess_kind(unit: str | None) -> str:
    if unit in ("°C", "K", "°F"):
        return "temperature"
    return "number" if unit else "text"


def _squash(text: str) -> str:
    return "".join(c for c in text.lower() if c.isascii() and c.isalnum())


def _trie_add(trie: dict[str, object], key: str, name: str) -> None:
    if not key:
        return
    node = trie
    for ch in key:
        node = node.setdefault(ch, {})  # type: ignore[assignment]
    node.setdefault(_END, name)


def _match_label(trie: dict[str, object], text: str) -> tuple[str, int] | None:
    """Longest label at the start of ``text`` ending on a word boundary: (prop, end)."""
    node: dict[str, object] = trie
    best: tuple[str, int] | None = None
    n = len(text)
    for k, ch in enumerate(text):
        c = ch.lower()
        if not (c.isascii() and c.isalnum()):
            continue
        nxt = node.get(c)
        if nxt is None:
            break
        node = nxt  # type: ignore[assignment]
        name = node.get(_END)
        if name is not None and (k + 1 >= n or not text[k + 1].isalnum()):
            best = (str(name), k + 1)
    return best


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


def _parse_number(value: str, unit: str | None) -> tuple[float | None, str | None]:
    if unit:
        esc = re.escape(unit).replace(r"\ ", r"\s*")
        m = re.search(rf"(?<![\w.])({_NUM})\s*{esc}", value, re.IGNORECASE)
        if m:
            return _to_float(m.group(1)), unit
        if re.search(r"[A-Za-z%]", value.split("(")[0]) and unit not in ("%",):
            return None, None
    m2 = _FIRST_NUM.search(value)
    if m2 is None:
        return None, None
    return _to_float(m2.group("a")), unit


# ---------------------------------------------------------------- page scanning

_LEAD = re.compile(r"^[\s•·*\-]*(?:\d{1,2}(?:\s?\.\s?\d{1,2}){0,2}\s?\.?\s+(?=[A-Za-z]))?")
_SECTION = re.compile(r"^\s*(?:SECTION|Section)\s*(\d{1,2})\b|^\s*(\d{1,2})\s?\.\s+[A-Z][A-Za-z]")
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
_WRAPPED = 50
_COLON_LABEL = re.compile(r"^[A-Z][A-Za-z0-9 '()/#&.,-]{1,40}?\s?:")
_SUBSECTION = re.compile(r"^\s*\d{1,2}\s?\.\s?\d")


@dataclass(slots=True)
class _State:
    comp: _Compiled
    facts: list[ExtractedFact] = field(default_factory=list)
    seen: dict[str, list[str]] = field(default_factory=dict)
    section: int = 0
    agency: str | None = None

    def add(self, fact: ExtractedFact) -> None:
        values = self.seen.setdefault(fact.prop, [])
        key = _squash(fact.object_label or fact.value)
        if key not in values:
            values.append(key)
            self.facts.append(fact)

    def result(self) -> list[ExtractedFact]:
        """Facts with, per property, unavailable ones dropped when a value is stated,
        and at most a few distinct values kept."""
        stated = {f.prop for f in self.facts if f.status == "stated"}
        counts: dict[str, int] = {}
        out: list[ExtractedFact] = []
        for f in self.facts:
            if f.status == "unavailable" and f.prop in stated:
                continue
            cap = _cap(f)
            if counts.get(f.prop, 0) >= cap:
                continue
            counts[f.prop] = counts.get(f.prop, 0) + 1
            out.append(f)
        return out


def _cap(fact: ExtractedFact) -> int:
    if fact.status == "unavailable":
        return 1
    if fact.object_label is not None:
        return 24
    if fact.prop.endswith(("Twa", "Stel", "Ceiling")) or fact.prop == "idlh":
        return 6
    return 1


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
    idx = 0
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
        if not _squash(line[le:]):
            block = _label_block(state, text, spans, idx - 1)
            if len(block) >= 2:
                idx = _read_block(state, page, spans, idx - 1, block)
                continue
        if not _label_fact(state, page, spans, idx - 1, s + off, s + le, name):
            _structured(state, page, line, s)


def _line_label(state: _State, line: str) -> tuple[int, int, str] | None:
    """(label start, label end, property) of a line starting with a label."""
    lead = _LEAD.match(line)
    off = lead.end() if lead else 0
    hit = _match_label(state.comp.trie, line[off : off + 90])
    return None if hit is None else (off, off + hit[1], hit[0])


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
    m = _SECTION.match(line)
    if m:
        num = int(m.group(1) or m.group(2))
        if state.section <= num <= state.section + 3 and num <= 16:
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
    if not _squash(value):
        if idx + 1 >= len(spans) or not _plain_line(state, text, *spans[idx + 1]):
            return False
        idx += 1
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


def _plain_line(state: _State, text: str, s: int, e: int) -> bool:
    """A line that can continue a value: not empty, not a label, not a heading."""
    line = text[s:e].strip()
    if not line or _SECTION.match(line) or _SUBSECTION.match(line) or _COLON_LABEL.match(line):
        return False
    if ("Cat" in line or "CAT" in line) and _CATEGORY.match(line):
        return False
    return _match_label(state.comp.trie, line[:90]) is None


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


def _make_fact(prop: _Prop, value: str, quote: str, page: int) -> ExtractedFact | None:
    value = value[:_MAX_VALUE].strip()
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


# ---------------------------------------------------------------- product name

_PHONE_LINE = re.compile(r"^[\d\s().+\-]{7,}$")
_SDS_TITLE = re.compile(r"^\s*(?:SDS|MSDS)\s*[–—-]\s*(?P<t>.+?)\s+Page\s*\d", re.IGNORECASE)
_NOT_TITLE = re.compile(
    r"safety\s*data\s*sheet|www\.|\.com|page\s*\d|^section|^\d{1,2}(?:\.\d{1,2})+\.?\s",
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


def _names(
    pages: Sequence[Page], facts: Sequence[ExtractedFact], source_name: str | None
) -> tuple[str, tuple[str, ...], bool]:
    fields = [
        _clean_name(f.value) for f in facts if f.prop == "productName" and f.status == "stated"
    ]
    fields = [f for f in fields if len(f) > 2]
    title = _title(pages)
    fallback = False
    if title:
        product = _clean_name(title)
    elif fields:
        product = fields[0]
    else:
        product, fallback = _stem_name(source_name), True
    aliases: list[str] = []
    for f in facts:
        if f.status != "stated":
            continue
        if f.prop == "productName":
            aliases.append(_clean_name(f.value))
        elif f.prop == "synonym":
            aliases.extend(s.strip(" .") for s in re.split(r"[;|]", f.value))
    out: list[str] = []
    for a in aliases:
        if 2 < len(a) <= 80 and a.lower() != product.lower() and a not in out:
            out.append(a)
    return product, tuple(out[:8]), fallback


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
    found = state.result()
    product, aliases, fallback = _names(pages, found, source_name)
    warnings: list[str] = []
    if fallback:
        warnings.append(f"no product name found; using {product!r} from the file name")
    if not found:
        warnings.append("no facts found")
    facts = _with_chunks(found, pages, chunks)
    return Extraction(
        product=product, aliases=aliases, facts=tuple(facts), warnings=tuple(warnings)
    )
