"""A property looked up for named documents: the stated values, their parts, and the
passages' text when the graph holds none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hybrid_rag.ask._passages import HEADING, from_passages, label_line
from hybrid_rag.ask._phrasing import MAX_CHARS, Composed, cite, clip, doc_name
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.ask.vector import heading_number, section_number
from hybrid_rag.models import Abstention, Evidence, Fact, Passage
from hybrid_rag.protocols import PropertyDef
from hybrid_rag.text import content_tokens, norm, sentences, tokens

__all__ = ["lookup"]


def lookup(
    a: QuestionAnalysis,
    facts: Sequence[Fact],
    passages: Sequence[Passage],
    limit: int,
    *,
    kg_searched: bool = True,
) -> Composed:
    parts: list[str] = []
    cites: list[Evidence] = []
    used_passages = valued = False
    focus = _focus(a)
    for subject in a.subjects[:4]:
        props = _said_props(a, facts, subject.doc_id)
        valued_props = [p for p in props if p.kind == "datatype"]
        # each asked item gets its share of the answer (an umbrella such as PPE has four)
        share = max(80, (limit - len(subject.label) - 40) // max(1, len(valued_props)))
        bits: list[str] = []
        for prop in props:  # an umbrella (PPE) brings its items
            mine = [f for f in facts if f.doc_id == subject.doc_id and f.predicate == prop.name]
            mine = _named_parts(a, mine)
            said = _prop_text(
                prop,
                mine,
                passages,
                subject.doc_id,
                procedure=a.intent == "procedure",
                focus=focus,
                budget=share,
                noun=a.noun,
                shape=_shape(a, prop.name),
                searched=kg_searched,
            )
            if said is None:
                continue
            bit, ev = said
            if ev and not mine and any(e.quote == ev[0].quote for e in cites):
                continue  # one passage line printed for two properties (a table row)
            used_passages |= bool(ev) and not mine
            valued |= any(f.status == "stated" for f in mine) or (bool(ev) and not mine)
            bits.append(bit)
            cites += ev
        if bits:
            parts.append(f"{subject.label}: " + "; ".join(bits))
    if not parts:  # only relations without extracted facts ("first aid"): read the passages
        if a.intent == "procedure":
            return _from_sections(a, passages, limit)
        return from_passages(a, passages, prefix="", limit=limit)
    text = ". ".join(parts) + "."
    if a.intent == "lookup" and len(text) < 200 and _asks_more(a):
        extra = from_passages(a, passages, prefix="", only=a.doc_ids, limit=limit - len(text))
        printed = [f for f in facts if f.status == "stated"]  # a value or its quote as printed
        stated = [norm(f.value) for f in printed] + [
            norm(" ".join(f.evidence.quote.split())) for f in printed
        ]
        if (
            extra.citations
            and not any(e in cites for e in extra.citations)
            and not any(v and v in norm(extra.text or "") for v in stated)
            and not any(norm(" ".join(e.quote.split())) in norm(text) for e in extra.citations)
        ):
            text, cites = f"{text} {extra.text}", [*cites, *extra.citations]
            used_passages = valued = True
    abstained: Abstention | None = None
    if not valued:
        abstained = "not_stated" if kg_searched else "not_in_documents"
    return Composed(clip(text, limit), tuple(cites), bool(facts), used_passages, abstained)


def _from_sections(a: QuestionAnalysis, passages: Sequence[Passage], limit: int) -> Composed:
    """A procedure without extracted facts, read from the sheet's own section.

    The best window of the section's passages when one speaks to the question (the asked
    exposure route inside the first-aid section); else the section's opening sentences.
    """
    pool = [p for p in passages if "section" in p.ranks]
    within = [q for q in (_section_part(p, a.sections) for p in pool) if q is not None]
    found = from_passages(a, within, prefix="", limit=limit) if within else None
    if found is not None and found.text:
        return found
    for p in pool:
        body = _section_body(p.text, a.sections)
        if body:
            ev = Evidence(doc_id=p.doc_id, page=p.page, chunk_id=p.chunk_id, quote=body)
            name = doc_name(a, p.doc_id, p.doc_id)
            return Composed(clip(f"{name}: {body} {cite(ev)}", limit), (ev,), False, True)
    # never another section's text as the procedure ("clean mouth with water" is no
    # spill clean-up): passages of an unknown section may still answer
    elsewhere = [p for p in passages if section_number(p.section) in (None, *a.sections)]
    return from_passages(a, elsewhere, prefix="", limit=limit)


def _section_part(p: Passage, sections: Sequence[int]) -> Passage | None:
    """``p`` cut to its lines in one of ``sections``: from such a heading (or the start,
    unless the first heading is the asked one) up to the heading of another section.
    ``None`` when no line of it is in them."""
    lines = p.text.splitlines(keepends=True)
    marks = [(i, heading_number(line)) for i, line in enumerate(lines)]
    marks = [(i, n) for i, n in marks if n is not None]
    inside = not marks or marks[0][1] not in sections
    keep: list[str] = []
    for i, line in enumerate(lines):
        n = next((n for j, n in marks if j == i), None)
        if n is not None:
            inside = n in sections
        if inside:
            keep.append(line)
    text = "".join(keep).strip()
    if not text:
        return None
    return p if text == p.text.strip() else p.model_copy(update={"text": text})


def _section_body(text: str, sections: Sequence[int]) -> str | None:
    """The text under the heading of one of ``sections`` in ``text``, up to the next one."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*(?:section\s*)?(\d{1,2})\s*[.:]", line, re.I)
        if m and int(m.group(1)) in sections and HEADING.match(line):
            body: list[str] = []
            for nxt in lines[i + 1 :]:
                if HEADING.match(nxt) and not re.match(r"^\s*\d{1,2}\.\d", nxt):
                    break
                body.append(nxt.strip())
            said = re.sub(r"\s+", " ", " ".join(body)).strip()
            return said or None
    return None


def _focus(a: QuestionAnalysis) -> frozenset[str]:
    """Words of the question beyond its products and properties ("large" of "a large
    spill"): they pick the part of a long procedure that answers it."""
    named = {t for p in a.subjects for t in (*tokens(p.label), *p.matched)} | a.kind_words
    named |= {t for prop in a.properties for label in prop.labels for t in tokens(label)}
    named |= a.named_words
    stems = set(content_tokens(" ".join(named)))  # "stored" is the "Storage conditions"
    return frozenset(content_tokens(a.question, drop=frozenset(named))) - stems


def _focused(value: str, focus: frozenset[str], budget: int) -> str:
    """``value`` with the part the question asks about first: from the first sentence
    after the opening one that holds a focus word ("Large Spills: Stop the flow ..."),
    then, when all of it fits in ``budget``, the sentences before it. ``value`` as it
    is when the opening holds a focus word or none does."""
    spans = sentences(value)
    if not focus or not spans or focus & set(content_tokens(value[: spans[0][1]])):
        return value
    for start, end in spans[1:]:
        if focus & set(content_tokens(value[start:end])):
            head = value[:start].strip()
            return value[start:] if len(value) > budget else f"{value[start:].rstrip()} {head}"
    return value


_ASKED = 6
"""The most properties one document's answer says (an umbrella's stated items aside)."""


def _said_props(a: QuestionAnalysis, facts: Sequence[Fact], doc_id: str) -> list[PropertyDef]:
    """The properties to say for one document: those the question asks (at most
    ``_ASKED``), with the items an umbrella brought that the document has facts for;
    when it has none for any item, the items are left out (the umbrella itself says
    what is stated), never listed one by one as "not stated". An umbrella without facts
    whose items have some is left out too."""
    has = {f.predicate for f in facts if f.doc_id == doc_id}
    asked = [p for p in a.properties if p.name not in a.items][:_ASKED]
    if not a.items:
        return asked
    items = [p for p in a.properties if p.name in a.items and p.name in has]
    if items:
        asked = [p for p in asked if p.name in has or p.name not in a.umbrellas]
    return [p for p in a.properties if p in asked or p in items]


def _asks_more(a: QuestionAnalysis) -> bool:
    """Whether the question asks for more than the matched properties of the subjects."""
    return bool(_focus(a))


def _shape(a: QuestionAnalysis, prop: str) -> str | None:
    """What a passage line must hold to give a value of ``prop``: a digit for a number or
    date, the pattern of an identifier, else ``None`` (any word)."""
    if prop in a.typed:
        return r"\d"
    return next((pat for name, pat in a.patterns if name == prop), None)


def _named_parts(a: QuestionAnalysis, facts: list[Fact]) -> list[Fact]:
    """Facts of one property about several parts of a document (an invoice's lines):
    those of the part the question names (most of its label's words in the question),
    else all of them, each shown with its part's name."""
    owners = {f.subject_iri for f in facts}
    if len(owners) < 2:
        return facts
    asked = set(content_tokens(a.question))

    def share(f: Fact) -> float:
        words = set(content_tokens(f.subject))
        return len(words & asked) / len(words) if words else 0.0

    best = max(share(f) for f in facts)
    if best >= 0.5:
        return [f for f in facts if share(f) == best]
    return [f.model_copy(update={"value": f"{f.subject}: {f.value}"}) for f in facts]


def _prop_text(
    prop: PropertyDef,
    facts: Sequence[Fact],
    passages: Sequence[Passage],
    doc_id: str,
    *,
    procedure: bool = False,
    focus: frozenset[str] = frozenset(),
    budget: int = MAX_CHARS,
    noun: str = "document",
    shape: str | None = None,
    searched: bool = True,
) -> tuple[str, list[Evidence]] | None:
    """What the document says about one property: value, stated-unavailable, or not stated.

    ``None`` for a relation (object property) nothing was extracted for: documents
    describe those in prose, which the passages answer better than "not stated" would.
    ``None`` too when the graph was not ``searched`` and no passage prints the value:
    what was not looked for is never called "not stated".
    """
    stated = [f for f in facts if f.status == "stated"]
    if stated and procedure:  # the sheet's own sentences, each with its page
        parts = list({f.value: f for f in stated}.values())
        parts.sort(key=lambda f: (f.position is None, f.position or 0))  # as the reader read
        said = " ".join(
            f"{clip(_focused(f.value, focus, budget), budget)} {cite(f.evidence)}" for f in parts
        )
        return f"{prop.label}: {said}", [f.evidence for f in parts]
    if stated:
        return _listed(prop, stated, budget, focus)
    if (prop.kind == "object" or procedure) and not facts:
        return None  # described in prose: the passages answer better than "not stated"
    line = label_line(prop, passages, doc_id, opening=bool(facts), shape=shape, short=not searched)
    if line is not None:
        return line
    if facts:
        f0 = facts[0]
        return (f'{prop.label} not available (the {noun} says "{f0.value}" {cite(f0.evidence)})'), [
            f0.evidence
        ]
    if not searched:  # vector mode: what the passages do not print is not called absent
        return f"{prop.label}: not found in the passages read", []
    return f"{prop.label} is not stated in the {noun}", []


def _listed(
    prop: PropertyDef, stated: Sequence[Fact], budget: int, focus: frozenset[str] = frozenset()
) -> tuple[str, list[Evidence]]:
    """Every distinct value of ``prop``, in reading order, each page cited once after the
    values read from it; values past ``budget`` characters are counted, not dropped
    silently ("and 3 more"). Values holding a word the question asks about beyond its
    product and property come first ("how much red phosphorus": that component's row)."""
    first_of: dict[str, Fact] = {}
    for f in stated:
        first_of.setdefault(f.value, f)
    firsts = sorted(first_of.values(), key=lambda f: (f.position is None, f.position or 0))
    if focus:
        firsts.sort(key=lambda f: -len(focus & set(content_tokens(f.value))))
    shown: list[Fact] = []
    used = len(prop.label)
    for f in firsts:
        if shown and used + len(f.value) > budget:
            break
        shown.append(f)
        used += len(f.value) + 3
    groups: list[tuple[Evidence, list[str]]] = []
    for f in shown:
        here = (f.evidence.doc_id, f.evidence.page)
        if groups and (groups[-1][0].doc_id, groups[-1][0].page) == here:
            groups[-1][1].append(f.value)
        else:
            groups.append((f.evidence, [f.value]))
    said = " / ".join(f"{' / '.join(vals)} {cite(ev)}" for ev, vals in groups)
    rest = len(firsts) - len(shown)
    more = f" (and {rest} more)" if rest else ""
    return f"{prop.label} {said}{more}", [ev for ev, _v in groups]
