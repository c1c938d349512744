"""Values read from other values (``read_from``), and the chunk each fact's quote is in."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading._labels import _Prop
from hybrid_rag.ingest.reading._state import _State
from hybrid_rag.ingest.reading._typed import currency_of
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
