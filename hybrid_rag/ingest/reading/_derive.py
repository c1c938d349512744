"""Values read from other values (``read_from``), and the chunk each fact's quote is in."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading._labels import _Prop
from hybrid_rag.ingest.reading._state import _State
from hybrid_rag.ingest.reading._typed import currency_of, parse_amount, parse_date
from hybrid_rag.ingest.reading._values import parse_quantity
from hybrid_rag.types import ExtractedFact

if TYPE_CHECKING:
    from hybrid_rag.models import Chunk, Page


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


_SHORT_LINE = 80


def _found_by_pattern(state: _State, pages: Sequence[Page]) -> None:
    """Values printed without their label, found by the property's ``find`` pattern on
    page 1 (an issuer's name by its legal form, "Coolblue B.V."), for properties no label
    gave a value: of the short lines that hold it, the one whose first word the page
    repeats most (a letterhead's name recurs in its footer; a recipient's address does
    not), up to the pattern's end. A pattern with a group named ``value`` gives that
    group as the value and its line as the quote (a payment scheme named in a sentence)."""
    if not pages:
        return
    page = pages[0]
    low = page.text.lower()
    for prop in state.comp.props.values():
        if prop.find is None or any(f.prop == prop.name for f in state.facts):
            continue
        found: list[tuple[int, int, str, str]] = []
        for k, line in enumerate(page.text.splitlines()):
            m = prop.find.search(line)
            if m is None or len(line.strip()) > _SHORT_LINE:
                continue
            named = m.groupdict().get("value")
            value = named if named is not None else line[: m.end()].strip(" -:,;")
            quote = line.strip() if named is not None else value
            words = re.findall(r"[^\W\d_]{3,}", value)
            if value and words and quote in page.text:
                found.append((-low.count(words[0].lower()), k, value, quote))
        if found:
            _n, _k, value, quote = min(found)
            state.add(ExtractedFact(prop.name, value, quote, page.number))


def _printed_currency(state: _State, pages: Sequence[Page]) -> None:
    """A currency property no value carried: the currency of the first amount the
    document prints with one ("Rs -40.00" in a line of text), with that line's quote."""
    for prop in state.comp.props.values():
        if prop.kind != "currency" or any(f.prop == prop.name for f in state.facts):
            continue
        for page in pages:
            for line in page.text.splitlines():
                if (amount := parse_amount(line)) is not None and line.strip():
                    state.add(ExtractedFact(prop.name, amount[1], line.strip(), page.number))
                    break
            else:
                continue
            break


def _in_currency(state: _State) -> None:
    """Amounts printed without a currency are in the document's own: a number value of a
    property the currency is read from (``read_from``) takes the currency as its unit."""
    for prop in state.comp.props.values():
        if prop.kind != "currency" or not prop.read_from:
            continue
        code = next((f.value for f in state.facts if f.prop == prop.name), None)
        if code is None:
            continue
        state.facts = [
            replace(f, unit=code)
            if f.prop in prop.read_from and f.number is not None and f.unit is None
            else f
            for f in state.facts
        ]


def _carried(prop: _Prop, source: ExtractedFact) -> ExtractedFact | None:
    """The clause of ``source``'s value that holds a value of ``prop``.

    A quantity is one clause; a text or procedure value is the first matching clause and
    the matching ones right after it (at most three): "Wear chemical resistant gloves.
    Laminate gloves are recommended." says which gloves, its first sentence does not.
    """
    if prop.kind == "currency":  # the currency an amount is printed in
        code = source.unit if source.unit and source.unit.isupper() else currency_of(source.value)
        return None if code is None else ExtractedFact(prop.name, code, source.quote, source.page)
    clauses = _CLAUSE.split(source.value)
    for i, clause in enumerate(clauses):
        if prop.pattern is not None and not prop.pattern.search(clause):
            continue
        number, unit = parse_quantity(clause, kind=prop.kind, unit=prop.unit)
        if prop.kind in ("temperature", "number", "range", "date"):
            if number is None:
                continue
            if prop.kind == "date" and (found := parse_date(clause)) is not None:
                clause = found[1]  # the date as printed, not the words around it
        elif prop.pattern is not None:
            run = list(itertools.takewhile(prop.pattern.search, clauses[i + 1 : i + 3]))
            clause = " ".join([clause.strip(), *(c.strip() for c in run)])
        return ExtractedFact(
            prop.name, clause.strip(), source.quote, source.page, number=number, unit=unit
        )
    return None


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
    return replace(f, chunk_id=chunk_id)
