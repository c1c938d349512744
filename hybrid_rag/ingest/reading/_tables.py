"""Tables: a header row whose cells are labels of properties, values in the rows below."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading._labels import _column, _id_column, _match_labels
from hybrid_rag.ingest.reading._state import _State
from hybrid_rag.ingest.reading._values import _make_fact
from hybrid_rag.ingest.reading.pack import quote_of
from hybrid_rag.types import ExtractedFact

if TYPE_CHECKING:
    from hybrid_rag.models import Page


_PROSE = re.compile(r"[.;:,]\s|[.:]\s*$|.{160}")


_PAGE_LINE = re.compile(r"(?i)\bpage\s*\d+\s*of\s*\d+")  # a running header inside the text


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
    own = state.pack is None or state.pack.subject_table(state)
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
                (p.name for p in props if _id_column(p) and m.start() > 0 and own),
                None,
            )  # a pack may say a table here lists the subject's parts (its components)
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
            state.add(ExtractedFact(name, m.group(0), quote_of(page, line, start), page.number))


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
        fact = _make_fact(state.comp.props[name], cell, quote_of(page, line, start), page.number)
        if fact is not None:
            state.add(fact)
    return True
