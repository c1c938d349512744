"""Labels inside a line: several labels on one line, and a value printed before its label.

Real layouts put more than one "label value" pair on a line ("Subtotaal € 717,97Exclusief
BTW € 593,36", "Melting point/range: 801 °C Boiling point: 1465 °C"), and text extraction
sometimes prints a right-aligned value before its label ("993548900Factuurnummer:",
"WS Retail Services Pvt. Ltd., Sold By :"). A label counts inside a line where a word
starts (after a space or punctuation, glued to a number, or at a capital that starts a
word glued to capitals: "TTCDate"). Its value is the text up to the next label; a label
that ends the line takes the text before it when that text is glued to it or ends with
a comma before a label with a colon ("..., Sold By :"). A value inside a
line is taken when its label is followed by a colon, glued to the value before it, or
when the value has the property's type (a number, an amount, a date); a plain text value
needs the colon.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading._labels import _match_labels, _squash
from hybrid_rag.ingest.reading._state import _fitting, _State
from hybrid_rag.ingest.reading._values import _SEP, _make_fact, is_unavailable

if TYPE_CHECKING:
    from hybrid_rag.models import Page

_TYPED = frozenset(["number", "date", "currency", "temperature", "range"])
_SPAN_LIMIT = 90


def label_spans(state: _State, line: str, *, start: int = 0) -> list[tuple[int, int, str]]:
    """Labels in ``line[start:]`` at word starts: ``(start, end, property)``, left to right,
    non-overlapping, the longest label at each place, properties of repeated parts left
    out (they are read in their tables)."""
    out: list[tuple[int, int, str]] = []
    pos = start
    for i, matches in _label_starts(state, line):
        if i < pos:
            continue
        for names, end in matches:
            kept = tuple(x for x in names if not state.comp.props[x].part)
            name = _fitting(state, kept, line[i:]) if kept else None
            if name is not None:
                out.append((i, i + end, name))
                pos = i + end
                break
    return out


def _label_starts(state: _State, line: str) -> list[tuple[int, list[tuple[tuple[str, ...], int]]]]:
    """Every word start of ``line`` where labels begin, with those labels (longest
    first), whatever the section: read once per line of a document (the line is asked
    for again as a table row, a header and a page read across)."""
    found = state.label_starts.get(line)
    if found is None:
        trie = state.comp.trie
        found = []
        for m in _MAYBE_START.finditer(line):
            i = m.start()
            if _word_start(line, i):
                matches = _match_labels(trie, line[i : i + _SPAN_LIMIT])
                if matches:
                    found.append((i, matches))
        state.label_starts[line] = found
    return found


_MAYBE_START = re.compile(r"(?:(?<![A-Za-z])|(?<=[A-Z])(?=[^\W\d_]{2}))(?=[^\W_])")
"""Every place ``_word_start`` may hold (more, never fewer: an alphanumeric character
not after an ASCII letter, or after a capital and before two letters), so that only
those are tested."""


def _word_start(line: str, i: int) -> bool:
    ch = line[i]
    if not ch.isalnum():
        return False
    if i == 0:
        return True
    prev = line[i - 1]
    if not prev.isalpha():
        return True  # after a space, punctuation or a digit ("993548900Factuurnummer")
    nxt = line[i + 1] if i + 1 < len(line) else ""
    return prev.isupper() and ch.isupper() and nxt.islower()  # "TTCDate"


def read_inline(state: _State, page: Page, line: str, line_start: int, *, at: int = 0) -> bool:
    """Read the label-value pairs of ``line`` from offset ``at``; whether any was kept."""
    spans = label_spans(state, line, start=at)
    kept = False
    for k, (ls, le, name) in enumerate(spans):
        if state.comp.props[name].kind == "procedure":
            continue  # a procedure runs over lines: only read where a line starts with it
        nxt = spans[k + 1][0] if k + 1 < len(spans) else len(line)
        prev_end = spans[k - 1][1] if k > 0 else at
        sep = _SEP.match(line, le, nxt)
        vs = sep.end() if sep else le
        colon = ":" in line[le:vs]
        value = line[vs:nxt].strip()
        if not _squash(value) and k == len(spans) - 1:
            before = line[prev_end:ls].strip(" :;,")
            listed = colon and line[prev_end:ls].rstrip().endswith(",")  # "Ltd., Sold By :"
            if before and _squash(before) and (_glued(line, ls) or listed):
                bs = line.index(before, prev_end)
                quote_end = le + (len(line[le:]) - len(line[le:].lstrip(" :")))
                kept |= _keep(state, name, before, page, line_start + bs, line_start + quote_end)
            continue
        if not _squash(value):
            continue
        glued = _glued(line, ls)
        typed = state.comp.props[name].kind in _TYPED
        took = False
        if colon or glued or typed:
            ve = line.index(value, vs) + len(value)
            took = _keep(state, name, value, page, line_start + ls, line_start + ve)
        if not took and glued and typed and (m := _GLUED_NUMBER.search(line, prev_end, ls)):
            # "5.00TVA 20% payée ...": the amount glued before the label is its value
            took = _keep(state, name, m.group(0), page, line_start + m.start(), line_start + le)
        kept |= took
    return kept


_GLUED_NUMBER = re.compile(
    r"(?<![\d.,])[-−]?(?:\d{1,3}(?:[.,']\d{3})+|\d+)(?:[.,]\d{1,2})?(?=\D*$)"
)  # one well-formed number ("5.00"), not digits run together ("29.995.0024.99")


def _glued(line: str, at: int) -> bool:
    """A label glued to the value before it: right after a digit, an amount's sign or a
    closing bracket ("993548900Factuurnummer"), or a capital after a lower-case letter
    or after capitals ("BrandNew", "TTCDate")."""
    if at == 0:
        return False
    prev, ch = line[at - 1], line[at]
    if prev.isdigit() or prev in "%€$£¥₹)":
        return True
    return ch.isupper() and prev.isalpha() and (prev.islower() or line[at + 1 : at + 2].islower())


def _keep(state: _State, name: str, value: str, page: Page, qs: int, qe: int) -> bool:
    """Keep a value read inside a line; a number or amount must parse as one."""
    quote = page.text[qs:qe].strip()
    if not quote or quote not in page.text:
        return False
    prop = state.comp.props[name]
    fact = _make_fact(prop, value, quote, page.number)
    if fact is None or (prop.kind == "number" and fact.number is None and fact.status == "stated"):
        return False
    state.add(fact)
    if state.pack is not None:
        state.pack.derived(state, fact)
    return True


def cut_at_label(state: _State, line: str, at: int, *, kind: str = "text") -> int:
    """Where the value starting at ``line[at:]`` ends: before the next label inside the
    line that is followed by a colon or glued to the value ("... € 717,97Exclusief BTW"),
    or, for a number, before a label of another number once a number was read ("Freight
    € 35,00 Total € 1.381,40"); the line's end when there is none."""
    for ls, le, name in label_spans(state, line, start=at):
        if ls <= at:
            continue
        colon = re.match(r"\s*:", line[le:]) is not None
        if colon or _glued(line, ls):
            return ls
        typed = kind in _TYPED and state.comp.props[name].kind in _TYPED
        if typed and _has_number(line[at:ls]) and _has_number(line[le:]):
            return ls
        # "Weight Data lacking Grade 4": no value, then the next label with its own
        after = line[le:].strip(" :.;,")
        ends = is_unavailable(after) or (
            state.comp.props[name].kind in _TYPED and _has_number(after)
        )
        if ends and is_unavailable(line[at:ls].strip(" .;,")):
            return ls
    return len(line)


def _has_number(text: str) -> bool:
    return re.search(r"\d", text) is not None
