"""The page scan: labels and their values, label columns, procedures, sections.

A line that starts with a label of a datatype property (after an enumerator or bullet)
yields a fact whose value is the rest of the line, or the next line when the label
stands alone; a column of label-only lines takes the values that follow in the same
order; a procedure (value kind ``procedure``) is the document's own lines after its
heading, up to the next item. Section headings ("SECTION 7", "7. Handling") are followed
when the ontology binds properties to sections (``section``): a section-bound label is
only read inside its section. Lines no label takes go to tables and to the pack reader.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading._inline import cut_at_label, label_spans, read_inline
from hybrid_rag.ingest.reading._labels import _match_labels, _squash
from hybrid_rag.ingest.reading._parts import header_row, part_header, part_row
from hybrid_rag.ingest.reading._state import _fitting, _State
from hybrid_rag.ingest.reading._tables import _PAGE_LINE, _id_cells, _table_header, _table_row
from hybrid_rag.ingest.reading._values import _MAX_PROCEDURE, _MAX_VALUE, _SEP, _make_fact
from hybrid_rag.types import ExtractedFact

if TYPE_CHECKING:
    from hybrid_rag.ingest.reading._labels import _Prop
    from hybrid_rag.models import Page


_LEAD = re.compile(
    r"^[\s•·*\-●▪:]*(?:(?:\d{1,2}(?:\s?\.\s?\d{1,2}){0,2}\s?\.?|\(?[A-Za-z]\)|\(?[ivxIVX]{2,4}\))"
    r"\s+(?=[A-Za-z]))?"
)  # bullets, "9.1", "m)", "(b)", "iv)", a colon printed before its label, before a label

# "SECTION 7", "Section 7:" or "7. Handling"; not a sentence such as "Section 8. Smoking ..."

_SECTION = re.compile(
    r"^\s*(?:SECTION\s*(\d{1,2})\b|Section\s*(\d{1,2})\s*:)|^\s*(\d{1,2})\s?\.\s+[A-Z][A-Za-z]"
    # "7 Handling and storage": a number and a short title, no dot, nothing else
    r"|^\s*(\d{1,2})\s+[A-Z][a-z]+(?:[ /-](?:[A-Za-z]+|\([a-z]+\)|&|,)){0,6}\s*$"
)


_QUALIFIER = re.compile(r"\([^()]*(?:\([^()]*\)[^()]*)*\)")


_PAGE_HEADER = re.compile(r"(?i)\bpage\s*\d+|www\.|\.com\b")


_SUBSECTION_NUM = re.compile(r"^\s*(\d{1,2})\s?\.\s?\d{1,2}\.?\s+[A-Z]")


_WRAPPED = 50


_COLON_LABEL = re.compile(r"^[A-Z][A-Za-z0-9 '()/#&.,-]{1,40}?\s?:")


_SUBSECTION = re.compile(r"^\s*\d{1,2}\s?\.\s?\d")


_HEADING_WORDS = re.compile(r"\s*[A-Z][a-z]+(?:[ /][A-Za-z]+){0,2}\s*(?:$|:)")  # "Eyes", "Fire:"


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
    shown = 0  # lines the pack has seen (``every_line``), taken by a label or not
    while idx < len(spans):
        shown = _show_pack(state, page, spans, shown, idx + 1)
        s, e = spans[idx]
        line = text[s:e]
        idx += 1
        if not line.strip():
            continue
        _track_section(state, line)
        if _part_table(state, page, line, s):
            continue
        if idx < len(spans) and header_row(
            state, page, line, text[slice(*spans[idx])], s, spans[idx][1]
        ):
            idx += 1
            continue
        hit = _line_label(state, line)
        lead_in = _lead_in_procedure(state, line) if hit is None else None
        if lead_in is not None:
            idx = _procedure(state, page, spans, idx - 1, s, s + lead_in[1], lead_in[2])
            continue
        if hit is None:
            before = len(state.facts)
            _structured(state, page, line, s)
            if len(state.facts) == before and not state.columns:
                read_inline(state, page, line, s)
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
    _show_pack(state, page, spans, shown, len(spans))


_LEAD_IN = re.compile(r"[A-Z][a-z]+(?: [a-z]+){0,3} ")
"""A few words leading in to a label: "Further information on "."""


def _lead_in_procedure(state: _State, line: str) -> tuple[int, int, str] | None:
    """A procedure's label after a few words that lead in to it, with a colon ("Further
    information on storage conditions: Protect from sunlight."): ``(start, end,
    property)``; ``None`` when the line's first label is another property's."""
    spans = label_spans(state, line)
    if not spans:
        return None
    ls, le, name = spans[0]
    prop = state.comp.props[name]
    lead = _LEAD_IN.fullmatch(line, 0, ls) is not None
    mine = prop.section in (None, state.section)  # not a later section's item
    if not (lead and mine and prop.kind == "procedure" and line[le:].lstrip()[:1] == ":"):
        return None
    said = {_squash(w) for w in line[:ls].split()}
    if said & {_squash(w) for w in line[ls:le].split()}:
        return None  # the end of another label run together with this one
    return ls, le, name


def _show_pack(
    state: _State, page: Page, spans: list[tuple[int, int]], shown: int, upto: int
) -> int:
    """Show the pack's ``every_line`` the lines up to ``upto`` it has not seen (those a
    procedure or a block read at once included); the new count."""
    if state.pack is None:
        return upto
    for s, e in spans[shown:upto]:
        if page.text[s:e].strip():
            state.pack.every_line(state, page, page.text[s:e], s)
    return max(shown, upto)


def _part_table(state: _State, page: Page, line: str, start: int) -> bool:
    """A part table's header or row (see ``_parts``); whether the line was one."""
    if state.part_columns:
        if part_row(state, page, line, start):
            state.part_misses = 0
            return True
        state.part_misses += 1
        if state.part_misses > _MAX_PART_MISSES or _line_label(state, line) is not None:
            state.part_columns, state.part_misses = [], 0
        return False
    if state.comp.has_parts and (cols := part_header(state, line)):
        state.part_columns = cols
        return True
    return False


_MAX_PART_MISSES = 8


def _line_label(state: _State, line: str) -> tuple[int, int, str] | None:
    """(label start, label end, property) of a line starting with a label.

    The longest label wins whose property may be printed in the current section (a
    property annotated with a section is only read inside it).
    """
    lead = _LEAD.match(line)
    off = lead.end() if lead else 0
    for names, end in _match_labels(state.comp.trie, line[off : off + 90]):
        kept = tuple(n for n in names if not state.comp.props[n].part)
        name = _fitting(state, kept, line[off:]) if kept else None
        if name is not None and not _prose(line, off, off + end):
            return off, off + end, name
    return None


_PROSE_RUN = re.compile(r" [a-z]{2,}")


def _prose(line: str, start: int, end: int) -> bool:
    """A wrapped line of running text that happens to start with a label's words
    ("period may differ from ...", "date that they occur."): it starts in lower case
    and the label is followed by another lower-case word."""
    return line[start : start + 1].islower() and _PROSE_RUN.match(line, end) is not None


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
        num = int(m.group(1) or m.group(2) or m.group(3) or m.group(4)) if m else int(sub.group(1))  # type: ignore[union-attr]
        last = state.comp.last_section
        if state.section <= num <= state.section + 3 and num <= last and num != state.section:
            state.section = num


def _label_fact(
    state: _State, page: Page, spans: list[tuple[int, int]], idx: int, qs: int, le: int, name: str
) -> bool:
    text = page.text
    line_end = spans[idx][1]
    sep_end = _SEP.match(text, le, line_end).end()  # type: ignore[union-attr]
    rest = text[sep_end:line_end]
    if _numbered(text, spans[idx][0], qs) and ":" not in text[le:sep_end] and _squash(rest):
        return False  # a numbered subsection title, not "label: value"
    line_start = spans[idx][0]
    kind = state.comp.props[name].kind
    cut = line_start + cut_at_label(
        state, text[line_start:line_end], sep_end - line_start, kind=kind
    )
    value = _condition_last(_label_again(state, text[sep_end:cut].strip(), name))
    end = cut
    prop = state.comp.props[name]
    qualified = bool(_QUALIFIER.fullmatch(value))  # "CERCLA ... List (40 CFR 302.4)"
    if qualified or _LABEL_ONLY.fullmatch(value):  # "Bill to Address:": a longer label
        value = ""
    elif not _squash(value) and cut < line_end:  # "Melting point/Melting range: 98 °C"
        read_inline(state, page, text[line_start:line_end], line_start, at=cut - line_start)
        return True
    below = not _squash(value)
    if below:
        idx += 1
        while idx < len(spans) and _between(text[spans[idx][0] : spans[idx][1]]):
            idx += 1  # a blank line or a running page header between a label and its value
        if idx >= len(spans):  # the label ends the page: its value starts the next one
            if prop.kind not in _TYPED_KINDS:  # a number or date is printed beside its label
                state.pending = name
            return True
        if _QUALIFIER.fullmatch(text[spans[idx][0] : spans[idx][1]].strip()):
            idx += 1  # "(Not to be used for payment remittance)" above the value
            if idx >= len(spans):
                return False
        heading = _LABEL_ONLY.fullmatch(text[sep_end:cut].strip()) is not None
        if not _next_value(state, text, spans[idx], qualified or heading, prop):
            ahead = _typed_ahead(state, text, spans, idx, prop, page.number)
            if ahead is None:
                return False
            idx = ahead
        value, end = text[spans[idx][0] : spans[idx][1]].strip(), spans[idx][1]
    if prop.kind == "text" and end == spans[idx][1]:
        block = _block_below(state, text, spans, idx, value) if below else None
        value, end = block or _continue(state, text, spans, idx, value, end)
    if state.pack is not None:
        value = state.pack.written(name, value, text[qs:le])
    fact = _make_fact(prop, value, text[qs:end].rstrip(), page.number)
    if fact is None:
        return False
    state.add(fact)
    if state.pack is not None:
        state.pack.derived(state, fact)
    _rivals(state, text[qs:le], fact, value, text[qs:end].rstrip(), page.number)
    if end < spans[idx][1]:  # another label further on the line
        read_inline(
            state, page, text[spans[idx][0] : spans[idx][1]], spans[idx][0], at=end - spans[idx][0]
        )
    return True


def _label_again(state: _State, value: str, name: str) -> str:
    """``value`` without a second label of the same property opening it: "Melting
    point/freezing point Melting point/range: 801 °C" has the value "801 °C"."""
    hit = _line_label(state, value)
    if hit is None or hit[2] != name or not value[hit[1] :].lstrip().startswith(":"):
        return value
    return value[_SEP.match(value, hit[1]).end() :].strip()  # type: ignore[union-attr]


_CONDITION = re.compile(r"^((?:at|@)\s[^:]{1,24}?)\s*:\s*(\S.*)$", re.IGNORECASE)


_LABEL_TAIL = re.compile(r"^[a-z]+(?: [a-z]+){0,4}\s*:\s*(\S.*)$")
"""The rest of a longer label before the colon: "of the product : Flammable." (of
"Flammability of the product : ...")."""


def _condition_last(value: str) -> str:
    """A condition printed between the label and its colon goes after the value: "at
    20 °C: 0.964 g/cm³" (of "Density at 20 °C: ...") is "0.964 g/cm³ at 20 °C", so the
    number read is the density's, not the temperature's. Lower-case words before the
    colon are the rest of a longer label, no part of the value."""
    m = _CONDITION.match(value)
    if m:
        return f"{m.group(2)} {m.group(1)}"
    tail = _LABEL_TAIL.match(value)
    return tail.group(1) if tail else value


def _between(line: str) -> bool:
    """A line that may stand between a label and its value: blank, or a page header."""
    return not line.strip() or _PAGE_LINE.search(line) is not None


_TYPED_KINDS = frozenset(["number", "date", "currency"])
_LABEL_ONLY = re.compile(r"[\w(][\w'/&.,()-]*(?: [\w'/&.,()-]+){0,4}\s?:")
"""The rest of a longer label ("Bill to Address:", "... media for safety reasons:")."""
_VALUE_START = re.compile(r"\s*(?:[-−+<>≤≥~]\s?)?(?:\d|[$€£¥₹]|Rs\b|[A-Z]{3}\s?\d)")


def _rivals(
    state: _State, label: str, kept: ExtractedFact, value: str, quote: str, page: int
) -> None:
    """Other numbers the same label names, in another unit: "BTW 21% € 124,61" under a
    label two properties share is the rate (in %) and the amount (in euro)."""
    prop = state.comp.props[kept.prop]
    if prop.kind != "number":
        return
    hits = _match_labels(state.comp.trie, label)
    names = next((n for n, end in hits if end == len(label)), ())
    for name in names:
        other = state.comp.props[name]
        if name == kept.prop or other.kind != "number" or other.unit == prop.unit or other.part:
            continue
        fact = _make_fact(other, value, quote, page)
        if fact is not None and fact.number is not None and fact.unit != kept.unit:
            state.add(fact)


def _typed_ahead(
    state: _State, text: str, spans: list[tuple[int, int]], idx: int, prop: _Prop, page: int
) -> int | None:
    """For a date or an amount whose label stands alone, the first of the next few short
    lines that is a value of that type, past lines other labels take ("Rechnungsdatum",
    "Kundennr.30064443", "7. Mai 2014"): a layout whose text order puts the values of a
    block of labels out of line."""
    if prop.kind not in ("date", "number") or prop.unit:
        return None
    for j in range(idx, min(idx + _AHEAD, len(spans))):
        line = text[spans[j][0] : spans[j][1]].strip()
        if not line or len(line) > _SHORT:
            return None
        found = _make_fact(prop, line, line, page)
        if found is not None and found.number is not None and len(found.value) >= len(line) - 3:
            return j  # the whole line is the value ("7. Mai 2014" is no "7. Handling")
        if _SECTION.match(line):
            return None
    return None


_AHEAD = 3
_SHORT = 40


def _numbered(text: str, line_start: int, qs: int) -> bool:
    return bool(re.search(r"\d", text[line_start:qs]))


def _next_value(
    state: _State, text: str, span: tuple[int, int], qualified: bool, prop: _Prop | None = None
) -> bool:
    """Whether the line after a label-only line is its value. After a heading with a
    qualifier in parentheses the value line may itself hold a colon ("RQ: 5000 lb"). A
    number, amount or date starts with one (not a sentence that mentions one)."""
    line = text[span[0] : span[1]]
    typed = prop is not None and prop.kind in ("number", "date", "currency") and not prop.unit
    if typed and not _VALUE_START.match(line) and len(line.strip()) > 40:
        return False
    if not qualified:
        return _plain_line(state, text, *span)
    return bool(line.strip()) and not _ends_procedure(state, line)


def _plain_line(state: _State, text: str, s: int, e: int) -> bool:
    """A line that can continue a value: not empty, not a label, not a heading."""
    line = text[s:e].strip()
    if not line or _SECTION.match(line) or _SUBSECTION.match(line) or _COLON_LABEL.match(line):
        return False
    if state.pack is not None and state.pack.ends_value(line):
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


_BELOW_LINES = 4
"""The most lines a value below its label may add to its first before its block ends."""
_SENTENCE = re.compile(r"[A-Z(][^.!?]*\S.*[.!]")


def _sentence(line: str) -> bool:
    """A line that is one or more whole sentences ("Use carbon dioxide for small
    fires."), not a name or an address line ("Amazon Web Services, Inc.")."""
    return _SENTENCE.fullmatch(line) is not None and len(line.split()) >= 4


def _block_below(
    state: _State, text: str, spans: list[tuple[int, int]], idx: int, value: str
) -> tuple[str, int] | None:
    """A value printed below its label as sentences, one per line ("Suitable
    extinguishing media:" over two), whole: its lines up to a blank line, a label or a
    heading. ``None`` (the lines are read as wrapped ones) when a line is no whole
    sentence, or the block does not end within ``_BELOW_LINES`` lines or
    ``_MAX_VALUE`` characters."""
    end = spans[idx][1]
    if not _sentence(value):
        return None
    for nxt in range(idx + 1, min(idx + 1 + _BELOW_LINES, len(spans)) + 1):
        if nxt == len(spans) or not _plain_line(state, text, *spans[nxt]):
            return (value, end) if len(value) <= _MAX_VALUE else None
        line = text[spans[nxt][0] : spans[nxt][1]].strip()
        if not _sentence(line):
            return None
        value, end = value + " " + line, spans[nxt][1]
    return None


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
    rest = text[sep_end:e].strip()  # "Storage stability:": the rest of a longer label
    inline = not title and bool(_squash(rest)) and not _LABEL_ONLY.fullmatch(rest)
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


_TOP_LINES = 6
"""The lines at the top of a page a running header may take."""


def _top(text: str, spans: list[tuple[int, int]]) -> frozenset[str]:
    lines = (" ".join(text[s:e].split()) for s, e in spans)
    return frozenset([line for line in lines if line][:_TOP_LINES])


def _running(state: _State, line: str) -> bool:
    """A line of a running page header: blank, a page number or web address, or a line
    the previous page also opened with ("Safety Data Sheet", the product's name)."""
    said = " ".join(line.split())
    return not said or said in state.top or _PAGE_HEADER.search(line) is not None


def _pending(state: _State, page: Page, spans: list[tuple[int, int]]) -> int:
    """Finish a procedure whose heading ended the previous page (past the running
    header); the first line to scan."""
    name, state.pending = state.pending, None
    text = page.text
    start = 0
    while (
        name and start < min(len(spans), _TOP_LINES) and _running(state, text[slice(*spans[start])])
    ):
        start += 1
    state.top = _top(text, spans)
    if name is None:
        return 0
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
    if state.pack is not None:
        state.pack.read_line(state, page, line, start)
