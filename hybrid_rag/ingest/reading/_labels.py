"""The ontology compiled for reading: labels in a trie, per-property reading hints.

Labels and alternative labels of every datatype property (in every language the ontology
gives) go into one trie of their squashed forms (case, spacing and punctuation ignored,
so "AUTO - IGNITION TEMPERATURE" matches "Autoignition temperature"). Compiled matchers
are cached per ontology object.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybrid_rag.types import Ontology, OntologyMatching, PropertyDef

_END = "\x00"


@dataclass(frozen=True, slots=True)
class _Prop:
    name: str
    kind: str
    unit: str | None
    pattern: re.Pattern[str] | None
    section: int | None = None
    read_from: tuple[str, ...] = ()
    max_values: int | None = None
    part: str | None = None  # the class of the repeated part it describes (read in its table)
    find: re.Pattern[str] | None = None  # finds the value without a label on page 1


@dataclass(frozen=True, slots=True)
class _Compiled:
    trie: dict[str, object]
    props: dict[str, _Prop]
    known: frozenset[str]
    heads: re.Pattern[str]  # first words of the labels of section-bound properties
    last_section: int  # the highest section a property is bound to (0: none)
    has_parts: bool  # the ontology describes repeated parts (tables of them are read)


_CACHE: dict[int, tuple[Ontology, _Compiled]] = {}


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789%")
"""The characters a label is matched on: letters, digits and "%" ("Tax (%)" is no "Tax #")."""


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
    parts = set(hints.document_model().part_classes()) if hints is not None else set()
    trie: dict[str, object] = {}
    props: dict[str, _Prop] = {}
    heads: set[str] = set()
    for p in ontology.properties():
        if p.kind != "datatype":
            continue
        dom = _local(p.domain)
        props[p.name] = _prop(p, hints, part=dom if dom in parts else None)
        printed = hints.reading_labels(p.name) if hints is not None else ()
        for label in (*p.labels, *printed):
            _trie_add(trie, _squash(label), p.name)
            col = _column(props[p.name]) or _id_column(props[p.name])
            if col and (word := _WORD.search(label)):
                heads.add(word.group(0).lower())
    known = frozenset(p.name for p in ontology.properties())
    words = "|".join(sorted(map(re.escape, heads), key=len, reverse=True)) or "(?!)"
    last = max((p.section for p in props.values() if p.section is not None), default=0)
    heads_re = re.compile(rf"(?i)(?<![A-Za-z0-9])(?:{words})\b")
    has_parts = any(p.part for p in props.values())
    return _Compiled(trie, props, known, heads_re, last, has_parts)


def _local(iri: str | None) -> str:
    return re.split(r"[#/]", iri or "")[-1]


def _prop(p: PropertyDef, hints: OntologyMatching | None, *, part: str | None = None) -> _Prop:
    unit = p.unit or ("%" if any("%" in label for label in p.labels) else None)  # "Tax (%)"
    if hints is None:
        return _Prop(p.name, _guess_kind(unit), unit, None)
    pat = hints.value_pattern(p.name)
    find = hints.find_pattern(p.name)
    return _Prop(
        p.name,
        hints.value_kind(p.name),
        unit,
        re.compile(pat) if pat else None,
        hints.section(p.name),
        hints.read_from(p.name),
        hints.max_values(p.name),
        part,
        re.compile(find) if find else None,
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


_NOT_ALNUM = re.compile(r"[^a-z0-9%]+")


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


def _camel(text: str, k: int) -> bool:
    """A word ends at ``k`` although a letter follows: the next word starts with a capital
    glued to it ("Montant EUR TTCMontant TVA", "TotaalExclusief")."""
    nxt = text[k + 1]
    return nxt.isupper() and (text[k].islower() or text[k + 2 : k + 3].islower())


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
        if names is not None and (k + 1 >= n or not text[k + 1].isalnum() or _camel(text, k)):
            found.append((names, k + 1))  # type: ignore[arg-type]
        elif names is not None and c.isalpha() and _plural_end(low, k):
            found.append((names, k + 2))  # type: ignore[arg-type]  # "Flash points"
    return found[::-1]


def _plural_end(low: str, k: int) -> bool:
    """The label ending at ``k`` is followed by a plural ``s`` that ends the word."""
    return low[k + 1 : k + 2] == "s" and (k + 2 >= len(low) or not low[k + 2].isalnum())
