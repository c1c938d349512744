"""A second reading of a page as laid out in print, for what the plain reading missed.

Plain PDF text follows the content stream, which on forms and invoices often separates a
label from its value ("Kundennr.30064443" where the page prints "Rechnungsnr. 30064443",
a table header spread over three lines). A short PDF also carries its layout-mode text
(``Page.layout``: printed columns kept apart by runs of spaces). That text is read the
same way; a property the plain reading found no value for takes the value found there,
cut at the first wide gap (the next column), when the plain text prints that value too
and, for a number or a date, when it parses as one.
The quote is always the plain text's: the line holding the value, or the value alone
when that line carries another property's label. Repeated parts (line items) are not
taken from the second reading: their rows would not match the plain reading's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading._labels import _squash
from hybrid_rag.ingest.reading._state import _State
from hybrid_rag.ingest.reading._values import _make_fact
from hybrid_rag.text import glued_labels
from hybrid_rag.types import ExtractedFact

if TYPE_CHECKING:
    from hybrid_rag.models import Page as _Page

__all__ = ["fill_from_layout"]

_GAP = re.compile(r"\s{3,}")
_LONG_LINE = 160


def fill_from_layout(state: _State, pages: Sequence[_Page]) -> None:
    """Add to ``state`` the values the layout reading of ``pages`` finds for properties
    ``state`` has no value of."""
    from hybrid_rag.ingest.reading._derive import _derive
    from hybrid_rag.ingest.reading._parts import settle_subject_columns
    from hybrid_rag.ingest.reading._scan import _scan_page
    from hybrid_rag.models import Page

    laid = [Page(number=p.number, text=p.layout) for p in pages if p.layout]
    if not laid:
        return
    second = _State(state.comp, pack=state.pack)
    for page in laid:
        _scan_page(second, page)
    settle_subject_columns(second)
    _derive(second)
    plain = {p.number: p.text for p in pages}
    # a page read across two columns puts each value above its label: its own reading
    # gives nothing right there, the layout's replaces it
    across = {p.number for p in pages if p.layout and glued_labels(p.text)}
    found = [
        (fact, moved)
        for fact in second.result()
        if fact.part is None and fact.object_label is None
        for moved in [_in_plain_text(state, fact, plain.get(fact.page, ""))]
        if moved is not None
    ]
    # only a value the layout reads the ontology's way replaces the plain reading's, and
    # not one the plain reading holds whole (a name the layout cut at a column gap)
    redo = {
        fact.prop
        for fact, moved in found
        if fact.page in across and not _holds(state, fact.prop, fact.page, moved.value)
    }
    dropped = [f for f in state.facts if f.page in across and f.prop in redo]
    state.facts[:] = [f for f in state.facts if f not in dropped]
    for f in dropped:
        state.seen[f"{f.prop}#{f.part}"] = []
    have = {f.prop for f in state.facts} | {f.prop for f in state.later}
    for fact, moved in found:
        if fact.prop not in have:
            state.add(moved)


def _holds(state: _State, prop: str, page: int, value: str) -> bool:
    """Whether the plain reading has a value of ``prop`` on ``page`` that holds ``value``."""
    want = _squash(value)
    return any(f.prop == prop and f.page == page and want in _squash(f.value) for f in state.facts)


def _in_plain_text(state: _State, fact: ExtractedFact, text: str) -> ExtractedFact | None:
    """``fact`` with its value cut at the next column and quoted from the plain text, or
    ``None`` when the plain text does not print the value."""
    value = _GAP.split(fact.value.strip(), maxsplit=1)[0].strip()
    at = text.find(value) if value else -1
    if at < 0:  # a value wrapped over lines: the same words, spaced as the plain text has them
        found = _spaced(value, text)
        if found is None:
            return None
        return _moved(state, fact, " ".join(found.split()), found)
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start : end if end >= 0 else len(text)].strip()
    quote = line if len(line) <= _LONG_LINE and not _other_label(state, fact.prop, line) else value
    return _moved(state, fact, value, quote)


def _spaced(value: str, text: str) -> str | None:
    """``value``'s words in ``text`` with any spacing between them, as ``text`` has it."""
    words = value.split()
    if len(words) < 3:
        return None
    m = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return m.group(0) if m else None


def _moved(state: _State, fact: ExtractedFact, value: str, quote: str) -> ExtractedFact | None:
    moved = _make_fact(state.comp.props[fact.prop], value, quote, fact.page)
    typed = state.comp.props[fact.prop].kind in ("number", "date")
    if moved is None or (typed and moved.number is None) or moved.status != "stated":
        return None  # a second reading gives only what it reads the ontology's way
    return moved


def _other_label(state: _State, prop: str, line: str) -> bool:
    """Whether ``line`` carries a label of a property other than ``prop``."""
    from hybrid_rag.ingest.reading._inline import label_spans

    return any(name != prop for _s, _e, name in label_spans(state, line))
