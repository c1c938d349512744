"""Answer composition: extractive (no LLM) or one grounded LLM synthesis call (pure + one call)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from hybrid_rag._vocab import DATE_UNIT
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.ask.vector import section_number
from hybrid_rag.models import Abstention, Evidence, Fact, Passage
from hybrid_rag.protocols import PropertyDef
from hybrid_rag.text import content_tokens, norm, sentences, stem, tokens

__all__ = ["MAX_CHARS", "Composed", "compose_extractive", "passage_facts", "prints_a_value"]

MAX_CHARS = 1000
"""The default longest extractive answer: about a paragraph, read at a glance. The value
asked for comes first; every value found is in ``Answer.facts`` whatever the length."""
_NEGATIVE = re.compile(r"^\W*(?:not|no|non|none|never|n/a)\b", re.I)
_SUPERLATIVE = (
    r"\b(?:(?:high|low|small|larg|great|bigg|hott|warm|cold|cool|strong|weak|few)est"
    r"|most|least|maximum|minimum)\b"
)


@dataclass(frozen=True, slots=True)
class Composed:
    """An answer text and the evidence behind each of its statements."""

    text: str | None
    citations: tuple[Evidence, ...]
    used_facts: bool
    used_passages: bool
    abstention: Abstention | None = None


def compose_extractive(
    a: QuestionAnalysis,
    facts: Sequence[Fact],
    passages: Sequence[Passage],
    *,
    max_chars: int = MAX_CHARS,
    kg_searched: bool = True,
) -> Composed:
    """Short extractive answer: fact values with product names, or the best passage sentences.

    Args:
        a: the question's analysis.
        facts: what the KG chain found.
        passages: what the vector chain found, best first.
        max_chars: the longest answer text (a longer one is cut at a word with "…").
        kg_searched: the KG chain ran (``False`` in vector mode): only then may a
            value the passages do not print be called "not stated in the sheet";
            without it the answer says "not found in the passages read".
    """
    limit = max_chars
    if a.intent in ("min", "max") and facts:
        return _ranked(a, facts, passages, limit)
    if a.intent == "filter" and a.polar and a.subjects:
        return _category(a, facts, passages, limit)
    if a.intent == "filter" and a.subjects:
        return _filtered(a, facts, limit)
    if a.intent == "same" and facts:
        return _same(a, facts, limit)
    if a.properties and a.subjects:  # lookups and procedures
        return _lookup(a, facts, passages, limit, kg_searched=kg_searched)
    found = _from_passages(a, passages, prefix="", limit=limit)
    if found.text is None and passages:
        where = (
            f"the {a.noun} of {_join([p.label for p in a.subjects])}"
            if a.subjects
            else ("the documents in scope")
        )
        return Composed(
            f"Not stated: nothing in {where} answers this.",
            (),
            False,
            False,
            "not_in_documents",
        )
    return found


def _cite(e: Evidence) -> str:
    return f"[{e.doc_id} p.{e.page}]"


def _name(a: QuestionAnalysis, doc_id: str, fallback: str) -> str:
    """How the answer names a document: its subject's name, with the number the question
    named it by when the name lacks it ("Coolblue 2, invoice 992288600")."""
    match = next((p for p in a.subjects if p.doc_id == doc_id), None)
    if match is None:
        return fallback
    shown = set(tokens(match.label))
    said = [t for t in tokens(a.question) if t in match.matched and t not in shown]
    number = next((t for t in said if t.isdigit() and len(t) >= 4), None)
    return f"{match.label}, {a.noun} {number}" if number else match.label


_SIZE_WORDS = {(True, True): "highest", (True, False): "higher", (False, True): "lowest",
               (False, False): "lower"}  # fmt: skip
_TIME_WORDS = {(True, True): "latest", (True, False): "later", (False, True): "earliest",
               (False, False): "earlier"}  # fmt: skip


def _ranked(
    a: QuestionAnalysis, facts: Sequence[Fact], passages: Sequence[Passage], limit: int
) -> Composed:
    """The winner of a comparison, with every other product's value.

    A document that states a value without a number to sort on ("104 mbar" in a
    property typed in mmHg), or values in different currencies or units, make no winner:
    the values are shown side by side. Dates are earlier and later, not lower and higher.
    """
    best: dict[str, Fact] = {}
    for f in facts:  # the template orders by number; keep each document's first (best) value
        if f.number is not None and f.status == "stated":
            best.setdefault(f.doc_id, f)
    untyped = {f.doc_id for f in facts if f.status == "stated" and f.doc_id not in best}
    units = {f.unit for f in best.values()}
    if untyped or not best or len(units) > 1:  # no winner across currencies or units
        return _lookup(a, facts, passages, limit)
    order = list(best.values())
    top, rest = order[0], order[1:]
    superlative = len(a.subjects) > 2 or re.search(_SUPERLATIVE, a.question, re.I) is not None
    words = _TIME_WORDS if units == {DATE_UNIT} else _SIZE_WORDS
    word = words[(a.intent == "max", superlative)]
    head = f"{_name(a, top.doc_id, top.subject)} has the {word} {_in_sentence(top.predicate_label)}"
    if a.polar and a.polar_subject is not None and len(order) >= 2:
        head = ("Yes: " if top.doc_id == a.polar_subject else "No: ") + head
    text = f"{head} ({top.value} {_cite(top.evidence)})"
    others = "; ".join(
        f"{_name(a, f.doc_id, f.subject)}: {f.value} {_cite(f.evidence)}" for f in rest
    )
    missing = [p.label for p in a.subjects if p.doc_id not in best]
    if missing:  # a winner among some is no winner among all: say so first
        text = f"Of the {_plural(a.noun)} that state it, {text}"  # names keep their case
    if others:
        text += f"; versus {others}"
    if missing:
        text += f"; not stated for {', '.join(missing)}"
    return Composed(_clip(text + ".", limit), tuple(f.evidence for f in order), True, False)


def _filtered(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    if a.threshold is not None:
        return _bounded(a, facts, limit)
    hits: dict[str, Fact] = {}
    asks_negative = any(_NEGATIVE.match(t) for t in a.filter_terms)
    for f in facts:  # "Not listed" does not match "listed"
        if f.status == "stated" and (asks_negative or not _NEGATIVE.match(f.value)):
            hits.setdefault(f.doc_id, f)
    term = a.filter_phrase or (" ".join(a.filter_terms) if a.filter_terms else "it")
    if not hits:
        return Composed(f"None of them is stated to match '{term}'.", (), True, False)
    names = [_name(a, d, f.subject) for d, f in hits.items()]
    verb = "matches" if len(names) == 1 else "match"
    text = (
        f"{_join(names)} {verb} '{term}'. Evidence: "
        + "; ".join(f"{f.value} {_cite(f.evidence)}" for f in hits.values())
        + "."
    )
    against = {  # what the others' sheets say instead ("Not regulated")
        f.doc_id: f for f in facts if f.status == "stated" and f.doc_id not in hits
    }
    if against:
        text += (
            " Not for "
            + "; ".join(
                f"{_name(a, d, f.subject)} ({f.value} {_cite(f.evidence)})"
                for d, f in against.items()
            )
            + "."
        )
    others = [p.label for p in a.subjects if p.doc_id not in hits and p.doc_id not in against]
    if others:
        text += f" No matching statement for {_join(others)}."
    cites = [f.evidence for f in hits.values()] + [f.evidence for f in against.values()]
    return Composed(_clip(text, limit), tuple(cites), True, False)


def _category(
    a: QuestionAnalysis, facts: Sequence[Fact], passages: Sequence[Passage], limit: int
) -> Composed:
    """A yes/no question whether a product belongs to a category ("Is X flammable?"):
    yes with the values that hold every asked word (by stem), no with the values its
    sheet states instead; a product without any value is read from its passages."""
    want = {stem(t) for t in a.filter_terms}
    phrase = a.filter_phrase or " ".join(a.filter_terms)
    parts: list[str] = []
    cites: list[Evidence] = []
    for subject in a.subjects[:4]:
        mine = [f for f in facts if f.doc_id == subject.doc_id and f.status == "stated"]
        if not mine:
            continue
        hits = [f for f in mine if want <= {stem(t) for t in tokens(f.value)}]
        shown = hits or mine
        values = "; ".join(f"{f.value} {_cite(f.evidence)}" for f in shown)
        label = _in_sentence(re.sub(r"^has\s+", "", shown[0].predicate_label, flags=re.I))
        if hits:
            parts.append(f"Yes: {subject.label}, {label} {values}")
        else:
            parts.append(f"No: no {label} of {subject.label} says {phrase!r}; it states {values}")
        cites += [f.evidence for f in shown]
    if not parts:
        return _from_passages(a, passages, prefix="", limit=limit)
    return Composed(_clip(". ".join(parts) + ".", limit), tuple(cites), True, False)


def _bounded(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    """Which products' values satisfy a numeric bound ("flash point above 60 °C")."""
    assert a.threshold is not None
    per_doc: dict[str, Fact] = {}
    for f in facts:
        if f.status == "stated" and f.number is not None:
            per_doc.setdefault(f.doc_id, f)
    if not per_doc:
        return Composed(None, (), False, False)
    bound = a.threshold
    said = f"{'above' if bound.op == '>' else 'below'} {bound.value:g}{_unit(bound.unit)}"
    label = _in_sentence(next(iter(per_doc.values())).predicate_label)
    yes = [d for d, f in per_doc.items() if bound.holds(f.number or 0.0, unit=f.unit)]
    names = [_name(a, d, per_doc[d].subject) for d in yes]
    head = (
        f"{_join(names)} {'has' if len(names) == 1 else 'have'} a {label} {said}"
        if names
        else f"None of them has a {label} {said}"
    )
    detail = "; ".join(
        f"{_name(a, d, f.subject)}: {f.value} {_cite(f.evidence)}" for d, f in per_doc.items()
    )
    missing = [p.label for p in a.subjects if p.doc_id not in per_doc]
    text = f"{head}. Values: {detail}."
    if missing:
        text += f" Not stated for {_join(missing)}."
    return Composed(_clip(text, limit), tuple(f.evidence for f in per_doc.values()), True, False)


def _unit(unit: str | None) -> str:
    if not unit:
        return ""
    return unit if unit.startswith(("°", "%")) else f" {unit}"


def _same(a: QuestionAnalysis, facts: Sequence[Fact], limit: int) -> Composed:
    per_doc: dict[str, Fact] = {}
    for f in facts:
        if f.status == "stated":
            per_doc.setdefault(f.doc_id, f)
    if len(per_doc) < 2:
        return _lookup(a, facts, (), limit)
    # a parenthesised part qualifies the value ("8 (5.1)": class 8, subsidiary 5.1): the
    # values are the same when what stands outside the parentheses is; both are shown
    values = {
        _canon(re.sub(r"\([^()]*\)", " ", f.value)) or _canon(f.value) for f in per_doc.values()
    }
    label = _in_sentence(next(iter(per_doc.values())).predicate_label)
    detail = "; ".join(
        f"{_name(a, d, f.subject)}: {f.value} {_cite(f.evidence)}" for d, f in per_doc.items()
    )
    same = len(values) == 1
    head = f"Yes, they share the same {label}" if same else f"No, the {_plural(label)} differ"
    return Composed(
        _clip(f"{head}: {detail}.", limit), tuple(f.evidence for f in per_doc.values()), True, False
    )


def _plural(label: str) -> str:
    """ "hazard class" -> "hazard classes", "UN number" -> "UN numbers", "currency" ->
    "currencies"."""
    if label.endswith("y") and label[-2:-1] not in ("a", "e", "i", "o", "u"):
        return label[:-1] + "ies"
    return label + ("es" if label.endswith(("s", "x", "ch", "sh")) else "s")


def _lookup(
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
    valued_props = [p for p in a.properties[:6] if p.kind == "datatype"]
    for subject in a.subjects[:4]:
        # each asked item gets its share of the answer (an umbrella such as PPE has four)
        share = max(80, (limit - len(subject.label) - 40) // max(1, len(valued_props)))
        bits: list[str] = []
        for prop in a.properties[:6]:  # an umbrella (PPE) brings its items
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
            used_passages |= bool(ev) and not mine
            valued |= any(f.status == "stated" for f in mine) or (bool(ev) and not mine)
            bits.append(bit)
            cites += ev
        if bits:
            parts.append(f"{subject.label}: " + "; ".join(bits))
    if not parts:  # only relations without extracted facts ("first aid"): read the passages
        if a.intent == "procedure":
            return _from_sections(a, passages, limit)
        return _from_passages(a, passages, prefix="", limit=limit)
    text = ". ".join(parts) + "."
    if a.intent == "lookup" and len(text) < 200 and _asks_more(a):
        extra = _from_passages(a, passages, prefix="", only=a.doc_ids, limit=limit - len(text))
        stated = [norm(f.value) for f in facts if f.status == "stated"]
        if (
            extra.citations
            and not any(e in cites for e in extra.citations)
            and not any(v and v in norm(extra.text or "") for v in stated)
        ):
            text, cites = f"{text} {extra.text}", [*cites, *extra.citations]
            used_passages = valued = True
    abstained: Abstention | None = None
    if not valued:
        abstained = "not_stated" if kg_searched else "not_in_documents"
    return Composed(_clip(text, limit), tuple(cites), bool(facts), used_passages, abstained)


def _from_sections(a: QuestionAnalysis, passages: Sequence[Passage], limit: int) -> Composed:
    """A procedure without extracted facts, read from the sheet's own section.

    The best window of the section's passages when one speaks to the question (the asked
    exposure route inside the first-aid section); else the section's opening sentences.
    """
    pool = [p for p in passages if "section" in p.ranks]
    found = _from_passages(a, pool, prefix="", limit=limit) if pool else None
    if found is not None and found.text:
        return found
    for p in pool:
        body = _section_body(p.text, a.sections)
        if body:
            ev = Evidence(doc_id=p.doc_id, page=p.page, chunk_id=p.chunk_id, quote=body)
            name = _name(a, p.doc_id, p.doc_id)
            return Composed(_clip(f"{name}: {body} {_cite(ev)}", limit), (ev,), False, True)
    # never another section's text as the procedure ("clean mouth with water" is no
    # spill clean-up): passages of an unknown section may still answer
    elsewhere = [p for p in passages if section_number(p.section) in (None, *a.sections)]
    return _from_passages(a, elsewhere, prefix="", limit=limit)


def _section_body(text: str, sections: Sequence[int]) -> str | None:
    """The text under the heading of one of ``sections`` in ``text``, up to the next one."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^\s*(?:section\s*)?(\d{1,2})\s*[.:]", line, re.I)
        if m and int(m.group(1)) in sections and _HEADING.match(line):
            body: list[str] = []
            for nxt in lines[i + 1 :]:
                if _HEADING.match(nxt) and not re.match(r"^\s*\d{1,2}\.\d", nxt):
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
    return frozenset(content_tokens(a.question, drop=frozenset(named)))


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


def _asks_more(a: QuestionAnalysis) -> bool:
    """Whether the question asks for more than the matched properties of the subjects."""
    named = {t for p in a.subjects for t in (*tokens(p.label), *p.matched)} | a.kind_words
    named |= {t for prop in a.properties for label in prop.labels for t in tokens(label)}
    named |= a.named_words
    stems = set(content_tokens(" ".join(named)))  # "manufactures" is the "Manufacturer"
    return bool(set(content_tokens(a.question, drop=frozenset(named))) - stems)


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
            f"{_clip(_focused(f.value, focus, budget), budget)} {_cite(f.evidence)}" for f in parts
        )
        return f"{prop.label}: {said}", [f.evidence for f in parts]
    if stated:
        vals = list(dict.fromkeys(f.value for f in stated))[:2]
        f0 = stated[0]
        return f"{prop.label} {' / '.join(vals)} {_cite(f0.evidence)}", [f0.evidence]
    if (prop.kind == "object" or procedure) and not facts:
        return None  # described in prose: the passages answer better than "not stated"
    line = _label_line(prop, passages, doc_id, opening=bool(facts), shape=shape, short=not searched)
    if line is not None:
        return line
    if facts:
        f0 = facts[0]
        return (
            f'{prop.label} not available (the {noun} says "{f0.value}" {_cite(f0.evidence)})'
        ), [f0.evidence]
    if not searched:  # vector mode: what the passages do not print is not called absent
        return f"{prop.label}: not found in the passages read", []
    return f"{prop.label} is not stated in the {noun}", []


_VALUE_NUMBER = re.compile(r"[-+−]?\d+(?:[.,]\d+)?")
_VALUE_UNIT = re.compile(r"\s*(°\s?[CF]\b|%|(?:[kKmMµ]?(?:Pa|g|L|l|m|s)|mmHg|ppm|bar)\b)")


def passage_facts(a: QuestionAnalysis, passages: Sequence[Passage]) -> list[Fact]:
    """What the passages print for each asked property of each subject, as ``Fact`` s.

    For answers the graph did not take part in (vector mode): a document's line that
    prints the property's label with a value ("Flash point: -18 °C") stands for its
    fact, so documents that disagree are shown (``hybrid_rag.ask.conflicts``) as
    they are from the graph's facts. The number and unit are read from the value's
    first number, for comparing values.
    """
    out: list[Fact] = []
    for subject in a.subjects:
        for prop in a.properties:
            found = None
            if prop.kind == "datatype":
                found = _label_line(prop, passages, subject.doc_id, short=True)
            if found is None:
                continue
            ev = found[1][0]
            value = _after_label(prop, ev.quote)
            m = _VALUE_NUMBER.search(value)
            unit = _VALUE_UNIT.match(value, m.end()) if m else None
            out.append(
                Fact(
                    doc_id=subject.doc_id,
                    subject=subject.label,
                    subject_iri=f"urn:hybrid-rag:passage:{subject.doc_id}",
                    predicate=prop.name,
                    predicate_label=prop.label,
                    value=value,
                    number=float(m.group().replace("−", "-").replace(",", ".")) if m else None,
                    unit=unit.group(1).replace(" ", "") if unit else None,
                    evidence=ev,
                )
            )
    return out


def prints_a_value(props: Sequence[PropertyDef], text: str) -> bool:
    """Whether a line of ``text`` prints a datatype property's label with a value."""
    passage = Passage(doc_id="-", page=1, chunk_id="-", text=text, score=0.0)
    return any(
        _label_line(p, [passage], "-", short=True) is not None
        for p in props
        if p.kind == "datatype"
    )


def _after_label(prop: PropertyDef, line: str) -> str:
    """The value part of a line that prints the property's label ("-18 °C (closed cup)")."""
    for label in prop.labels:
        m = re.search(rf"(?<![\w]){re.escape(label)}(?![\w])", line, re.I)
        rest = re.sub(r"^[\s:=]+|^[-–]\s+", "", line[m.end() :]).rstrip(" .") if m else ""
        if rest:
            return rest
    return line.strip()


def _label_line(
    prop: PropertyDef,
    passages: Sequence[Passage],
    doc_id: str,
    *,
    opening: bool = False,
    shape: str | None = None,
    short: bool = False,
) -> tuple[str, list[Evidence]] | None:
    """A passage line that prints the property's label (as words) followed by a value.

    Lines whose value part has a digit win over the others (a column header such as
    "CAS number Concentration" also prints the label). With ``opening`` (the sheet
    says elsewhere that the value is not available) the label must open the line, after
    a bullet or item number: "Vapor Density ..." is then no density line, and "Listed,
    Diethanolamine (CAS #111-42-2)" no CAS number of the product. With ``shape`` (a
    regular expression: a digit for numbers and dates, an identifier's pattern) the value
    must have it: "... Services Tax at applicable rates" is no tax amount. With
    ``short``, a label of two letters counts too, when it opens the line before a colon.
    """
    lead = r"^[\s•*-]*(?:\d{1,2}(?:\.\d{1,2})*\.?\s+)?" if opening else r"(?<![\w])"
    labels = [
        re.compile(rf"{lead}{re.escape(norm(lab))}(?![\w])(.*)$")
        for lab in prop.labels
        if len(lab) > 2
    ]
    labels += [
        re.compile(rf"^[\s•*-]*{re.escape(norm(lab))}\s*:(.*)$")
        for lab in prop.labels
        if short and len(lab) == 2
    ]
    found: list[tuple[bool, Passage, str]] = []
    for p in passages:
        if p.doc_id != doc_id:
            continue
        for line in p.text.splitlines():
            if _HEADING.match(line):
                continue
            for pattern in labels:
                m = pattern.search(norm(line))
                rest = m.group(1).strip(" :.-") if m else ""
                fits = re.search(shape, rest, re.I) if shape else re.search(r"[0-9a-z]", rest)
                if fits:
                    found.append((bool(re.search(r"\d", rest)), p, line.strip()))
                    break
    if not found:
        return None
    _digit, p, line = max(found, key=lambda f: f[0])  # stable: first of the best kind
    ev = Evidence(doc_id=p.doc_id, page=p.page, chunk_id=p.chunk_id, quote=line)
    return f"{line} {_cite(ev)}", [ev]


_PARTS = re.compile(r",?\s+and\s+(?=(?:what|which|how|where|when|who|why|is|are|does|do)\b)", re.I)
_LABELLED = re.compile(
    r"^\s*[A-Za-z][\w ()/,-]{2,40}?\s*:\s*\S"
)  # "If swallowed: ...", "SKIN CONTACT: ..."
_HEADING = re.compile(
    r"^\s*(?:SECTION\s*\d+\b|\d{1,2}(?:\.\d{1,2})+\.?\s|#{1,6}\s"
    r"|(?-i:\d{1,2}\.\s+[A-Z][A-Z /&,-]{3,}$))",  # "4. FIRST-AID MEASURES"
    re.I,
)


def _from_passages(
    a: QuestionAnalysis,
    passages: Sequence[Passage],
    *,
    prefix: str,
    only: Sequence[str] | None = None,
    limit: int = MAX_CHARS,
) -> Composed:
    """The best sentences of the best passages; one extract per part of a two-part question."""
    pool = [p for p in passages if only is None or p.doc_id in only]
    if not pool:
        return Composed(None, (), False, False)
    drop = frozenset(t for p in a.subjects for t in tokens(p.label))
    parts = [q for q in _PARTS.split(a.question) if content_tokens(q, drop=drop)][:2]
    parts = parts or [a.question]
    texts: list[str] = []
    cites: list[Evidence] = []
    share = (limit - len(prefix)) // len(parts)
    for part in parts:
        best = _best_sentences(
            pool,
            content_tokens(part, drop=drop),
            limit=share - 30,
            paragraph=a.intent == "procedure",
        )
        if best is None or any(best[1] in t for t in texts):
            continue
        passage, text = best
        ev = Evidence(
            doc_id=passage.doc_id, page=passage.page, chunk_id=passage.chunk_id, quote=text
        )
        texts.append(f"{_clip(text, share - 30)} {_cite(ev)}")
        cites.append(ev)
    if not texts:
        return Composed(None, (), False, False)
    return Composed(_clip(prefix + " ".join(texts), limit), tuple(cites), False, True)


def _best_sentences(
    pool: Sequence[Passage], query: Sequence[str], *, limit: int, paragraph: bool = False
) -> tuple[Passage, str] | None:
    """The best window of consecutive sentences: what an extractive answer quotes.

    A window is a sentence and those after it (up to ~300 characters). Its score sums the
    question's stems it contains, weighted by rarity across the pool's sentences, with a
    bonus when they appear in the window's first words (a labelled line such as
    "EYE CONTACT: ..." or "If inhaled ..."), a little for repeats, and a penalty for lower
    ranked passages and for windows too short to say anything. Two question words that
    stand side by side in the window ("skin contact") add a phrase bonus. With
    ``paragraph`` (a procedure) the quote starts where the best window's paragraph does:
    "Keep container tightly closed. ... Store under an inert atmosphere." is one
    instruction, not its last sentence.
    """
    if not pool:
        return None
    want = set(query)
    pairs = set(pairwise(query))
    if not want:
        return pool[0], _window(pool[0], 0, limit)
    cells = [(p, rank, sentences(p.text)) for rank, p in enumerate(pool)]
    toks = {
        (rank, i): content_tokens(p.text[s:e])
        for p, rank, spans in cells
        for i, (s, e) in enumerate(spans)
    }
    idf = _idf(want, toks.values())
    best: tuple[float, Passage, int] | None = None
    for p, rank, spans in cells:
        for i in range(len(spans)):
            score = _window_score(p, spans, i, rank, toks, want, idf, pairs)
            if score > 0 and (best is None or score > best[0]):
                best = (score, p, i)
    if best is None:  # no passage says anything about what was asked
        return None
    start = _paragraph_start(best[1].text, best[2]) if paragraph else best[2]
    return best[1], _window(best[1], start, limit)


def _idf(want: set[str], sents: Iterable[list[str]]) -> dict[str, float]:
    bags = [set(t) for t in sents]
    n = max(1, len(bags))
    return {w: math.log(1 + n / (1 + sum(w in b for b in bags))) for w in want}


def _window_score(
    p: Passage,
    spans: list[tuple[int, int]],
    i: int,
    rank: int,
    toks: dict[tuple[int, int], list[str]],
    want: set[str],
    idf: dict[str, float],
    pairs: set[tuple[str, str]],
) -> float:
    start = spans[i][0]
    words: list[str] = []
    j = i
    while j < len(spans) and (j == i or _continues(p.text, spans, i, j)):
        words += toks[(rank, j)]
        j += 1
    if not any(_content(p.text[a:b]) for a, b in spans[i:j]):
        return 0.0  # headings and bare labels only (a layout that prints values elsewhere)
    lead = set(toks[(rank, i)][:6])
    score = 0.0
    for w in want:
        n = words.count(w)
        if n:
            score += idf[w] * (1 + 0.25 * min(n - 1, 3) + (0.5 if w in lead else 0.0))
    for a, b in pairs & set(pairwise(words)):
        score += 0.5 * (idf[a] + idf[b])
    title = toks[(rank, i)]
    named = want & set(title)
    if 0 < len(title) <= 4 and len(named) * 2 >= len(title):  # "Storage conditions", "EYE CONTACT"
        score += sum(idf[w] for w in named)
    if score and spans[j - 1][1] - start < 60:
        score *= 0.5
    return score - 0.15 * rank


def _content(sentence: str) -> bool:
    """A sentence that says something: not a heading, and a full sentence or a line
    with a value ("Flash point 12 °C"), not a bare label ("Hygiene measures")."""
    if _HEADING.match(sentence):
        return False
    words = sentence.split()
    return (
        sentence.rstrip().endswith((".", "!", "?"))
        or len(words) > 6
        or any(c.isdigit() for c in sentence)
    )


def _continues(text: str, spans: list[tuple[int, int]], i: int, j: int) -> bool:
    """Whether sentence ``j`` still belongs to the window that starts at sentence ``i``.

    A window stops at ~300 characters, at a heading, and at a new labelled item
    ("SKIN CONTACT: ...") once it has content, a heading or a label of its own; a window
    of headings only ("4. FIRST-AID MEASURES", "4.1 DESCRIPTION ...") runs on into the
    content they introduce.
    """
    start = spans[i][0]
    s, e = spans[j]
    if e - start > 300:
        return False
    if all(_HEADING.match(text[a:b]) for a, b in spans[i:j]):
        return True
    if _HEADING.match(text[s:e]):
        return False
    if not _LABELLED.match(text[s:e]):
        return True
    first = text[start : spans[j - 1][1]]
    titled = bool(_HEADING.match(first) or _LABELLED.match(first))
    return not (titled or s - start > 60)


def _paragraph_start(text: str, idx: int, *, reach: int = 240) -> int:
    """The first sentence of the paragraph sentence ``idx`` belongs to (PDF text).

    Sentences on one line belong together; across a line break the paragraph goes on
    when the line before is wrapped (nearly as long as the passage's longest line, or
    not ending a sentence). A heading or a labelled item ("Skin contact: ...") starts a
    paragraph; the start moves back at most ``reach`` characters.
    """
    spans = sentences(text)
    width = max((len(line.rstrip()) for line in text.splitlines()), default=0)
    j = idx
    while j > 0 and spans[idx][0] - spans[j - 1][0] <= reach:
        here = text[spans[j][0] : spans[j][1]]
        prev_line = text[text.rfind("\n", 0, spans[j - 1][1]) + 1 : spans[j - 1][1]].rstrip()
        if _HEADING.match(here) or _LABELLED.match(here) or _HEADING.match(prev_line):
            break
        if "\n" in text[spans[j - 1][1] : spans[j][0]]:
            ends = prev_line.endswith((".", ":", "!", "?"))
            if ends and len(prev_line) < 0.8 * width:
                break
        j -= 1
    return j


def _window(p: Passage, idx: int, limit: int) -> str:
    """The sentence at ``idx`` and the ones after it, within ``limit`` characters (verbatim)."""
    spans = sentences(p.text)
    start, end = spans[idx]
    for j in range(idx + 1, len(spans)):
        if spans[j][1] - start > limit or not _continues(p.text, spans, idx, j):
            break
        end = spans[j][1]
    return re.sub(r"\s+", " ", p.text[start:end]).strip()


def _in_sentence(label: str) -> str:
    """A label inside a sentence: "Due date" -> "due date"; "VAT rate" and "xTend" kept."""
    return label[0].lower() + label[1:] if label[1:2].islower() else label


def _canon(value: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", value.lower())


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _clip(text: str, limit: int) -> str:
    """``text`` up to ``limit`` characters: at the last sentence end in its second half,
    else at a word with "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    ends = [m.end() for m in _SENTENCE_END.finditer(cut) if m.end() >= limit // 2]
    if ends:
        return cut[: ends[-1]].rstrip()
    return cut[: cut.rfind(" ")] + "…" if " " in cut else cut + "…"


_SENTENCE_END = re.compile(r"[.!?](?=\s+[A-Z(\[])")


# --- LLM synthesis: one call on the happy path ---------------------------------------------
