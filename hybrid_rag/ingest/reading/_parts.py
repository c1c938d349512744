"""Tables of repeated parts: a header naming a part's properties, one part per row.

An invoice's line items sit under a header such as "Artikel Aantal Prijs per stuk BTW
Prijs incl. BTW": two or more labels of one part class's properties (a column whose
label belongs to a property of the subject takes its cell for the subject, see
``settle_subject_columns``). Each row below is read from its right end: one cell per
value column (an amount with its currency, a percentage, a number), right to left;
what is left at the row's start is the text column (the item's description). A row is
one part: its facts share a part number. Lines that are no row (a serial number under an item) are
skipped; a line starting with a label of the subject's own properties ("Total"), or a
few lines without a row, end the table.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading._labels import _match_labels, _squash
from hybrid_rag.ingest.reading._state import _State
from hybrid_rag.ingest.reading._typed import CURRENCY, to_number
from hybrid_rag.ingest.reading._values import _make_fact
from hybrid_rag.ingest.reading.pack import quote_of

if TYPE_CHECKING:
    from hybrid_rag.models import Page


_CELL = re.compile(
    rf"(?:(?<![A-Za-z])(?:{CURRENCY})\s?)?[-−]?\d[\d.,']*(?:\s?%|\s?(?:{CURRENCY})(?![A-Za-z]))?\s*$"
)
_TEXTUAL = ("text", "identifier")


def part_header(state: _State, line: str) -> list[str | None]:
    """The columns of a part table's header row, or ``[]`` when ``line`` is none: each
    column a part property, or a property of the subject ("Tax (%)" among the columns of
    the line items: see ``settle_subject_columns``)."""
    cols: list[str | None] = []
    covered = 0
    i = 0
    classes: dict[str, int] = {}
    while i < len(line):
        if not line[i].isalnum() or (i > 0 and line[i - 1].isalnum()):
            i += 1
            continue
        hits = _match_labels(state.comp.trie, line[i : i + 60])
        if not hits:
            i += 1
            continue
        names, end = hits[0]
        part = next((n for n in names if state.comp.props[n].part), None)
        cols.append(part or names[0])
        if part is not None:
            cls = state.comp.props[part].part or ""
            classes[cls] = classes.get(cls, 0) + 1
        covered += len(_squash(line[i : i + end]))
        i += end
    best = max(classes.values(), default=0)
    if best < 2 or covered < 0.75 * len(_squash(line)):
        return []
    return cols


def part_row(state: _State, page: Page, line: str, start: int) -> bool:
    """Read ``line`` as a row of the part table in force; whether it was one.

    The columns before the table's text column take the row's first cells, left to
    right; those after it its last cells, right to left; the text between is the text
    column's ("500 Flyer A5 4/4 € 0,18 € 90,00" under "Qty Description Price Amount")."""
    cols = state.part_columns
    text_at = next((k for k, c in enumerate(cols) if _text_column(state, c)), None)
    before = cols[:text_at] if text_at is not None else []
    after = cols[text_at + 1 :] if text_at is not None else cols
    rest = line.strip()
    left: list[str] = []
    while len(left) < len(before) and (m := _LEFT_CELL.match(rest)):
        left.append(m.group(1))
        rest = rest[m.end() :]
    right: list[str] = []
    while len(right) < len(after) and (m := _CELL.search(rest)):
        cell = m.group(0).strip()
        if to_number(re.sub(r"[^\d.,'−-]", "", cell)) is None:
            break
        right.insert(0, cell)
        rest = rest[: m.start()].rstrip()
    text = rest.strip()
    if len(left) != len(before) or len(right) != len(after):
        return False
    if text_at is not None and not re.search(r"[^\W\d_]{2}", text):
        return False
    state.parts += 1
    quote = quote_of(page, line, start)
    kept = list(zip(before, left, strict=True)) + list(zip(after, right, strict=True))
    if text_at is not None:
        kept.append((cols[text_at], text))
    for name, value in kept:
        if name is None:
            continue
        fact = _make_fact(state.comp.props[name], value, quote, page.number)
        if fact is None:
            continue
        if state.comp.props[name].part is None:
            state.column_cells.setdefault(name, []).append(fact)
        else:
            state.add(replace(fact, part=state.parts))
    return True


def settle_subject_columns(state: _State) -> None:
    """A column of the part table that a property of the subject heads gives the subject's
    value when every row says the same (one tax rate on every line) and nothing else gave
    one; rows that disagree (two VAT rates) give none."""
    for name, cells in state.column_cells.items():
        if any(f.prop == name for f in state.facts) or not cells:
            continue
        if len({_squash(f.value) for f in cells}) == 1:
            state.add(cells[0])
    state.column_cells = {}


_LEFT_CELL = re.compile(r"([-−]?\d[\d.,']*)\s+(?=\S)")


def _text_column(state: _State, col: str | None) -> bool:
    if col is None or state.comp.props[col].part is None:
        return False
    return state.comp.props[col].kind in _TEXTUAL


_CENTS = re.compile(r"[-−]?\d{1,6}[.,]\d{2}")


def header_row(state: _State, page: Page, line: str, nxt: str, start: int, end: int) -> bool:
    """A header of the subject's own properties and one row of amounts under it
    ("Montant EUR TTC Montant TVA Montant EUR HT" over "29.99 5.00 24.99 ..."). The row's
    leading amounts are read left to right, one per column; text extraction that runs
    the cells together ("29.995.0024.99") is split on their two decimals. ``start`` and
    ``end`` bound the two lines in ``page.text``; whether they were such a header and row."""
    from hybrid_rag.ingest.reading._inline import label_spans

    spans = label_spans(state, line)
    cols = [name for _s, _e, name in spans]
    covered = sum(len(_squash(line[s:e])) for s, e, _n in spans)
    if len(cols) < 2 or covered < 0.8 * len(_squash(line)):
        return False
    if any(state.comp.props[c].kind != "number" or state.comp.props[c].unit for c in cols):
        return False
    head = re.match(r"[-−\d.,\s]+", nxt)
    amounts = _CENTS.findall(head.group(0)) if head else []
    if len(amounts) < len(cols):
        return False
    quote = page.text[start:end]
    for name, value in zip(cols, amounts, strict=False):
        fact = _make_fact(state.comp.props[name], value, quote, page.number)
        if fact is not None:
            state.add(fact)
    return True
