"""The reading state of one document: the facts found so far and where the reader is."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from hybrid_rag.ingest.reading._labels import _Compiled, _Prop, _squash
from hybrid_rag.types import ExtractedFact

if TYPE_CHECKING:
    from hybrid_rag.ingest.reading.pack import PackReader


@dataclass(slots=True)
class _State:
    comp: _Compiled
    facts: list[ExtractedFact] = field(default_factory=list)
    seen: dict[str, list[str]] = field(default_factory=dict)
    pack: PackReader | None = None
    section: int = 0
    memo: dict[str, Any] = field(default_factory=dict)  # a pack reader's own state
    pending: str | None = None  # a procedure whose heading ended the previous page
    columns: list[str] = field(default_factory=list)  # properties of a table header in force
    ids: list[str] = field(default_factory=list)  # identifiers a table header names
    later: list[ExtractedFact] = field(default_factory=list)  # kept after the others
    ahead: bool = False  # reading a later section's item (a response statement)
    part_columns: list[str | None] = field(default_factory=list)  # a part table's header
    part_misses: int = 0  # lines since the last row of the part table
    parts: int = 0  # parts (table rows) read so far
    column_cells: dict[str, list[ExtractedFact]] = field(default_factory=dict)  # subject's
    top: frozenset[str] = frozenset()  # the previous page's first lines (a running header)
    label_starts: dict[str, list[tuple[int, list[tuple[tuple[str, ...], int]]]]] = field(
        default_factory=dict
    )  # per line: where labels begin (``_inline._label_starts``)

    def knows(self, prop: str) -> bool:
        """Whether the ontology defines ``prop`` (the ``Reading`` seam)."""
        return prop in self.comp.known

    def typed(self, prop: str, value: str, quote: str, page: int) -> ExtractedFact | None:
        """A fact of ``prop`` read the ontology's way, or ``None`` (the ``Reading`` seam)."""
        from hybrid_rag.ingest.reading._values import _make_fact

        found = self.comp.props.get(prop)
        return None if found is None else _make_fact(found, value, quote, page)

    def add(self, fact: ExtractedFact) -> None:
        """Keep ``fact`` unless the same value of its property is kept already."""
        values = self.seen.setdefault(f"{fact.prop}#{fact.part}", [])
        key = _squash(fact.object_label or fact.value)
        if key not in values:
            values.append(key)
            self.facts.append(fact)

    def amend(self, old: ExtractedFact, new: ExtractedFact) -> None:
        """Put ``new`` in the place of the kept fact ``old`` (the ``Reading`` seam)."""
        at = next((i for i, f in enumerate(self.facts) if f is old), None)
        if at is None:
            return
        values = self.seen.setdefault(f"{old.prop}#{old.part}", [])
        key, fresh = _squash(old.object_label or old.value), _squash(new.object_label or new.value)
        self.facts[at] = new
        if fresh in values and fresh != key:  # kept already: one fact, the first one read
            twin = next(
                (
                    i
                    for i, f in enumerate(self.facts)
                    if i != at
                    and (f.prop, f.part) == (old.prop, old.part)
                    and _squash(f.object_label or f.value) == fresh
                ),
                None,
            )
            if twin is not None:
                del self.facts[max(twin, at)]
            if key in values:
                values.remove(key)
        elif key in values:
            values[values.index(key)] = fresh

    def result(self) -> list[ExtractedFact]:
        """Facts with, per property, unavailable ones dropped when a value is stated (but
        one of a quantity or date: a document that also denies its value is read so),
        and at most a few distinct values kept."""
        for fact in self.later:
            self.add(fact)
        self.later = []
        stated = {f.prop for f in self.facts if f.status == "stated"}
        counts: dict[tuple[str, int | None, str], int] = {}
        out: list[ExtractedFact] = []
        for f in _latest_entries(self.facts, self.comp.props):
            prop = self.comp.props.get(f.prop)
            quantity = prop is not None and prop.kind in _QUANTITIES
            if f.status == "unavailable" and f.prop in stated and not quantity:
                continue
            cap = _cap(f, prop)
            key = (f.prop, f.part, f.status)  # each part (a line item) has its own values
            if counts.get(key, 0) >= cap:
                continue
            counts[key] = counts.get(key, 0) + 1
            out.append(f)
        return out


_ENTRY = re.compile(r"(\d{1,2})\s*[:.)]\s+(\S.*)")  # "1: 08/01/2023", "2) 11/12/2024"


def _latest_entries(facts: list[ExtractedFact], props: dict[str, _Prop]) -> list[ExtractedFact]:
    """Numbered entries of one label ("Revision 1: 08/01/2023", "Revision 2: 11/12/2024"):
    only the highest-numbered one is kept, in the first one's place, its number taken off
    the value (a date's value is the date alone: its number is read from the quote).
    Procedures keep their numbered steps."""
    best: dict[str, tuple[int, ExtractedFact]] = {}  # prop -> (number, fact without it)
    numbered: set[int] = set()  # the facts that are numbered entries
    for f in facts:
        prop = props.get(f.prop)
        entry = _entry(f, prop) if prop is not None and f.status == "stated" else None
        if entry is None:
            continue
        numbered.add(id(f))
        if entry[0] > best.get(f.prop, (-1, f))[0]:
            best[f.prop] = entry
    out: list[ExtractedFact] = []
    for f in facts:
        chosen = best.get(f.prop)
        if chosen is None or id(f) not in numbered:
            out.append(f)
        elif chosen[1] not in out:
            out.append(chosen[1])
    return out


def _entry(f: ExtractedFact, prop: _Prop) -> tuple[int, ExtractedFact] | None:
    """``(number, the fact without it)`` for a numbered entry, else ``None``."""
    if f.object_label or prop.kind == "procedure":
        return None  # steps stay numbered
    if prop.kind == "date":  # "7. Mai 2014" is a date, not entry 7: the number precedes it
        m = re.search(rf"(?<![\d/.-])(\d{{1,2}})\s*[:.)]\s+{re.escape(f.value)}", f.quote)
        return (int(m.group(1)), f) if m else None
    m = _ENTRY.fullmatch(f.value)
    return (int(m.group(1)), replace(f, value=m.group(2))) if m else None


_QUANTITIES = frozenset(["number", "temperature", "range", "date"])
"""Value kinds a bound, an extreme or a date span reads (``hybrid_rag.ask._collection``)."""


def _cap(fact: ExtractedFact, prop: _Prop | None) -> int:
    """How many distinct values of one property a document may state: the ontology's
    ``max_values``; else 24 for a relation, 2 for a procedure (two items under one
    property's labels, "Skin protection" and "Body protection"), 1 for a value."""
    if fact.status == "unavailable":
        return 1
    if prop is not None and prop.max_values is not None:
        return prop.max_values
    if fact.object_label is not None:
        return 24
    return 2 if prop is not None and prop.kind == "procedure" else 1


def _fitting(state: _State, names: tuple[str, ...], line: str = "") -> str | None:
    """The property among ``names`` that fits the current section: own section first,
    then one bound to no section, then one of the previous section (PDF text order
    sometimes prints a section's items after the following section's heading). A later
    section's item only where the pack reader says so (``reads_ahead``: it is kept after
    that section's own text)."""
    free: str | None = None
    near: str | None = None
    for name in names:
        section = state.comp.props[name].section
        if section is not None and section == state.section:
            return name
        pack = state.pack
        later = section is not None and section > state.section
        if later and pack is not None and pack.reads_ahead(state, section or 0, line):
            return name
        if section is None and free is None:
            free = name
        if section is not None and section == state.section - 1 and near is None:
            near = name
    return free or near
