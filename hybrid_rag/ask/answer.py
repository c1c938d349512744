"""Answer composition: extractive (no LLM) or one grounded LLM synthesis call (pure + one call)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.ask.text import content_tokens, norm, sentences, tokens
from hybrid_rag.models import ChatMessage, Evidence, Fact, Passage
from hybrid_rag.protocols import PropertyDef

__all__ = ["Composed", "compose_extractive", "synthesis_messages"]

MAX_CHARS = 380


@dataclass(frozen=True, slots=True)
class Composed:
    """An answer text and the evidence behind each of its statements."""

    text: str | None
    citations: tuple[Evidence, ...]
    used_facts: bool
    used_passages: bool


def compose_extractive(
    a: QuestionAnalysis, facts: Sequence[Fact], passages: Sequence[Passage]
) -> Composed:
    """Short extractive answer: fact values with product names, or the best passage sentences."""
    if a.intent in ("min", "max") and facts:
        return _ranked(a, facts)
    if a.intent == "filter" and a.products:
        return _filtered(a, facts)
    if a.intent == "same" and facts:
        return _same(a, facts)
    if a.properties and a.products:
        return _lookup(a, facts, passages)
    return _from_passages(a, passages, prefix="")


def _cite(e: Evidence) -> str:
    return f"[{e.doc_id} p.{e.page}]"


def _name(a: QuestionAnalysis, doc_id: str, fallback: str) -> str:
    return next((p.label for p in a.products if p.doc_id == doc_id), fallback)


def _ranked(a: QuestionAnalysis, facts: Sequence[Fact]) -> Composed:
    best: dict[str, Fact] = {}
    for f in facts:  # the template orders by number; keep each document's first (best) value
        best.setdefault(f.doc_id, f)
    order = list(best.values())
    top, rest = order[0], order[1:]
    word = "highest" if a.intent == "max" else "lowest"
    head = f"{_name(a, top.doc_id, top.subject)} has the {word} {top.predicate_label}"
    text = f"{head} ({top.value} {_cite(top.evidence)})"
    others = "; ".join(f"{_name(a, f.doc_id, f.subject)}: {f.value} {_cite(f.evidence)}" for f in rest)
    missing = [p.label for p in a.products if p.doc_id not in best]
    if others:
        text += f"; versus {others}"
    if missing:
        text += f"; not stated for {', '.join(missing)}"
    return Composed(_clip(text + "."), tuple(f.evidence for f in order), True, False)


def _filtered(a: QuestionAnalysis, facts: Sequence[Fact]) -> Composed:
    hits: dict[str, Fact] = {}
    for f in facts:
        if f.status == "stated":
            hits.setdefault(f.doc_id, f)
    term = a.filter_terms[0] if a.filter_terms else "it"
    if not hits:
        return Composed(f"None of them is stated to match '{term}'.", (), True, False)
    names = [_name(a, d, f.subject) for d, f in hits.items()]
    verb = "matches" if len(names) == 1 else "match"
    cites = " ".join(_cite(f.evidence) for f in hits.values())
    text = f"{_join(names)} {verb} '{term}'. Evidence: " + "; ".join(
        f"{f.value} {_cite(f.evidence)}" for f in hits.values())
    others = [p.label for p in a.products if p.doc_id not in hits]
    if others:
        text += f" Not stated for {_join(others)}."
    del cites
    return Composed(_clip(text), tuple(f.evidence for f in hits.values()), True, False)


def _same(a: QuestionAnalysis, facts: Sequence[Fact]) -> Composed:
    per_doc: dict[str, Fact] = {}
    for f in facts:
        if f.status == "stated":
            per_doc.setdefault(f.doc_id, f)
    if len(per_doc) < 2:
        return _lookup(a, facts, ())
    values = {_canon(f.value) for f in per_doc.values()}
    label = next(iter(per_doc.values())).predicate_label
    detail = "; ".join(f"{_name(a, d, f.subject)}: {f.value} {_cite(f.evidence)}"
                       for d, f in per_doc.items())
    head = f"Yes, they share the same {label}" if len(values) == 1 else f"No, the {label}s differ"
    return Composed(_clip(f"{head}: {detail}."), tuple(f.evidence for f in per_doc.values()),
                    True, False)


def _lookup(a: QuestionAnalysis, facts: Sequence[Fact], passages: Sequence[Passage]) -> Composed:
    parts: list[str] = []
    cites: list[Evidence] = []
    used_passages = False
    for product in a.products[:4]:
        bits: list[str] = []
        for prop in a.properties[:3]:
            mine = [f for f in facts if f.doc_id == product.doc_id and f.predicate == prop.name]
            bit, ev = _prop_text(prop, mine, passages, product.doc_id)
            used_passages |= bool(ev) and not mine
            bits.append(bit)
            cites += ev
        parts.append(f"{product.label}: " + "; ".join(bits))
    text = ". ".join(parts) + "."
    if a.intent == "lookup" and len(a.properties) == 1 and len(text) < 200:
        extra = _from_passages(a, passages, prefix="", only=a.doc_ids, limit=MAX_CHARS - len(text))
        if extra.text and extra.citations and all(e not in cites for e in extra.citations):
            text, cites = f"{text} {extra.text}", [*cites, *extra.citations]
            used_passages = True
    return Composed(_clip(text), tuple(cites), bool(facts), used_passages)


def _prop_text(
    prop: PropertyDef, facts: Sequence[Fact], passages: Sequence[Passage], doc_id: str
) -> tuple[str, list[Evidence]]:
    stated = [f for f in facts if f.status == "stated"]
    if stated:
        vals = list(dict.fromkeys(f.value for f in stated))[:2]
        f0 = stated[0]
        return f"{prop.label} {' / '.join(vals)} {_cite(f0.evidence)}", [f0.evidence]
    line = _label_line(prop, passages, doc_id)
    if line is not None:
        return line
    if facts:
        f0 = facts[0]
        return (f"{prop.label} not available (the sheet says \"{f0.value}\" "
                f"{_cite(f0.evidence)})"), [f0.evidence]
    return f"{prop.label} is not stated in the sheet", []


def _label_line(
    prop: PropertyDef, passages: Sequence[Passage], doc_id: str
) -> tuple[str, list[Evidence]] | None:
    """A passage line that prints the property's label followed by something (a value)."""
    labels = [norm(lab) for lab in prop.labels if len(lab) > 2]
    for p in passages:
        if p.doc_id != doc_id:
            continue
        for line in p.text.splitlines():
            low = norm(line)
            for lab in labels:
                i = low.find(lab)
                rest = low[i + len(lab):].strip(" :.-") if i >= 0 else ""
                if i >= 0 and re.search(r"[0-9a-z]", rest):
                    ev = Evidence(doc_id=p.doc_id, page=p.page, chunk_id=p.chunk_id,
                                  quote=line.strip())
                    return f"{line.strip()} {_cite(ev)}", [ev]
    return None


def _from_passages(
    a: QuestionAnalysis,
    passages: Sequence[Passage],
    *,
    prefix: str,
    only: Sequence[str] | None = None,
    limit: int = MAX_CHARS,
) -> Composed:
    pool = [p for p in passages if only is None or p.doc_id in only]
    if not pool:
        return Composed(None, (), False, False)
    drop = frozenset(t for p in a.products for t in tokens(p.label))
    want = set(content_tokens(a.question, drop=drop))
    best = _best_sentences(pool[:4], want, limit=limit)
    if best is None:
        return Composed(None, (), False, False)
    passage, text = best
    ev = Evidence(doc_id=passage.doc_id, page=passage.page, chunk_id=passage.chunk_id, quote=text)
    return Composed(_clip(f"{prefix}{text} {_cite(ev)}"), (ev,), False, True)


def _best_sentences(
    pool: Sequence[Passage], want: set[str], *, limit: int
) -> tuple[Passage, str] | None:
    scored: list[tuple[float, int, Passage, int]] = []
    for rank, p in enumerate(pool):
        spans = sentences(p.text)
        for i, (s, e) in enumerate(spans):
            got = want & set(content_tokens(p.text[s:e]))
            if got:
                scored.append((len(got) - 0.3 * rank, -i, p, i))
    if not scored:
        return None if not pool else (pool[0], _window(pool[0], 0, limit))
    scored.sort(key=lambda x: (-x[0], -x[1]))
    _score, _neg, passage, idx = scored[0]
    return passage, _window(passage, idx, limit)


def _window(p: Passage, idx: int, limit: int) -> str:
    """The sentence at ``idx`` and the ones after it, within ``limit`` characters (verbatim)."""
    spans = sentences(p.text)
    start, end = spans[idx]
    for s, e in spans[idx + 1:]:
        if e - start > min(limit - 40, 300):
            break
        end = e
    return re.sub(r"\s+", " ", p.text[start:end]).strip()


def _canon(value: str) -> str:
    return re.sub(r"[^a-z0-9.]", "", value.lower())


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _clip(text: str, limit: int = MAX_CHARS) -> str:
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    return cut[: cut.rfind(" ")] + "…" if " " in cut else cut + "…"


# --- LLM synthesis: one call on the happy path ---------------------------------------------

_SYNTH = """Answer the question using only the numbered sources. Cite sources like [1].
If the sources do not contain the answer, say that the documents do not state it.
Be brief (at most 3 sentences); start with the direct answer."""


def synthesis_messages(
    question: str, facts: Sequence[Fact], passages: Sequence[Passage], *, draft: str | None
) -> tuple[list[ChatMessage], list[Evidence]]:
    """Messages for the one grounded synthesis call and the evidence each number refers to."""
    lines: list[str] = []
    evidence: list[Evidence] = []
    for f in facts[:20]:
        evidence.append(f.evidence)
        lines.append(f"[{len(evidence)}] {f.subject} - {f.predicate_label}: {f.value} "
                     f"({f.status}; {f.evidence.doc_id} p.{f.evidence.page})")
    for p in passages[:8]:
        evidence.append(Evidence(doc_id=p.doc_id, page=p.page, chunk_id=p.chunk_id,
                                 quote=p.text[:300]))
        lines.append(f"[{len(evidence)}] ({p.doc_id} p.{p.page}) {p.text}")
    user = f"Question: {question}\n\nSources:\n" + "\n".join(lines)
    if draft:
        user += f"\n\nExtractive draft (may help): {draft}"
    return [ChatMessage(role="system", content=_SYNTH), ChatMessage(role="user", content=user)], evidence
