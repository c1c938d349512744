"""Answers read from passages: values printed after a property's label, and the best
sentences for a question.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from itertools import pairwise

from hybrid_rag.ask._phrasing import MAX_CHARS, Composed, cite, clip
from hybrid_rag.ask.analysis import QuestionAnalysis
from hybrid_rag.models import Evidence, Fact, Passage
from hybrid_rag.ontology import normalize_label
from hybrid_rag.protocols import PropertyDef
from hybrid_rag.text import content_tokens, norm, sentences, tokens

__all__ = ["HEADING", "from_passages", "label_line", "passage_facts", "prints_a_value"]


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
                found = label_line(prop, passages, subject.doc_id, short=True)
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
        label_line(p, [passage], "-", short=True) is not None for p in props if p.kind == "datatype"
    )


def _after_label(prop: PropertyDef, line: str) -> str:
    """The value part of a line that prints the property's label ("-18 °C (closed cup)")."""
    for label in prop.labels:
        m = re.search(rf"(?<![\w]){re.escape(label)}(?![\w])", line, re.I)
        rest = re.sub(r"^[\s:=]+|^[-–]\s+", "", line[m.end() :]).rstrip(" .") if m else ""
        if rest:
            return rest
    return line.strip()


def label_line(
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
    want = _NUMBER if shape == r"\d" else re.compile(shape, re.I) if shape else None
    found: list[tuple[bool, Passage, str]] = []
    for p in passages:
        if p.doc_id != doc_id:
            continue
        lines = p.text.splitlines()
        for i, line in enumerate(lines):
            if HEADING.match(line):
                continue
            for pattern in labels:
                m = pattern.search(norm(line))
                if m is None:
                    continue
                rest = m.group(1).strip(" :.-")
                number = _NUMBER.search(rest) is not None
                if _fits(rest, want):
                    found.append((number, p, line.strip()))
                below = lines[i + 1] if i + 1 < len(lines) else ""
                measured = prop.unit is not None or want is _NUMBER
                if measured and not number and _NUMBER.search(below) and not HEADING.match(below):
                    # a measured value's column header ("Component LD50 Oral LD50 Dermal"):
                    # the row under it tells
                    found.append((True, p, f"{line}\n{below}".strip()))
                break
    if not found:
        return None
    _digit, p, line = max(found, key=lambda f: f[0])  # stable: first of the best kind
    ev = Evidence(doc_id=p.doc_id, page=p.page, chunk_id=p.chunk_id, quote=line)
    return f"{' '.join(line.split())} {cite(ev)}", [ev]


_NUMBER = re.compile(r"(?<!\w)\d")
"""A number standing on its own: "1390 mg/kg", "< 5 %", not the "50" of "LD50"."""


def _fits(rest: str, shape: re.Pattern[str] | None) -> bool:
    """Whether a value part has the shape asked for (any word or number when none)."""
    return (shape or _ANY).search(rest) is not None


_ANY = re.compile(r"[0-9a-z]")


_PARTS = re.compile(r",?\s+and\s+(?=(?:what|which|how|where|when|who|why|is|are|does|do)\b)", re.I)
_LABELLED = re.compile(
    r"^\s*[A-Za-z][\w ()/,-]{2,40}?\s*:\s*\S"
)  # "If swallowed: ...", "SKIN CONTACT: ..."
HEADING = re.compile(
    r"^\s*(?:SECTION\s*\d+\b|\d{1,2}(?:\.\d{1,2})+\.?\s|#{1,6}\s"
    r"|(?-i:\d{1,2}\.\s+[A-Z][A-Z /&,-]{3,}$)"  # "4. FIRST-AID MEASURES"
    r"|(?-i:\d{1,2}\s+[A-Z][a-z]+(?:[ /&,-]+[A-Za-z]+){0,5}\s*$))",  # "5 Fire-fighting measures"
    re.I,
)


def from_passages(
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
    drop = _name_words(a)
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
            others=a.other_items,
        )
        if best is None or any(best[1] in t for t in texts):
            continue
        passage, text = best
        ev = Evidence(
            doc_id=passage.doc_id, page=passage.page, chunk_id=passage.chunk_id, quote=text
        )
        texts.append(f"{clip(text, share - 30)} {cite(ev)}")
        cites.append(ev)
    if not texts:
        return Composed(None, (), False, False)
    return Composed(clip(prefix + " ".join(texts), limit), tuple(cites), False, True)


def _name_words(a: QuestionAnalysis) -> frozenset[str]:
    """Words of the named subjects, with a bracket right after a name ("APPLE 17J04
    (IFF)": who makes it, a grade): they name the document, not what is asked of it."""
    names = {t for p in a.subjects for t in tokens(p.label)}
    for m in re.finditer(r"([\w.-]+)\s*\(([^()]{1,40})\)", a.question):
        if names and set(tokens(m.group(1))) <= names:
            names |= set(tokens(m.group(2)))
    return frozenset(names)


def _best_sentences(
    pool: Sequence[Passage],
    query: Sequence[str],
    *,
    limit: int,
    paragraph: bool = False,
    others: frozenset[str] = frozenset(),
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
    instruction, not its last sentence. A window in an item that opens with the label
    of a property not asked (``others``: ":Personal Protection Avoid inhalation ..." for a clean-up)
    is that item's text: it counts a quarter.
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
            if score > 0 and others and _in_other_item(p.text, spans, i, others):
                score *= 0.25
            if score > 0 and (best is None or score > best[0]):
                best = (score, p, i)
    if best is None:  # no passage says anything about what was asked
        return None
    if not paragraph:
        return best[1], _window(best[1], best[2], limit)
    start = _paragraph_start(best[1].text, best[2])
    return best[1], _window(best[1], start, limit, reach=limit)


def _in_other_item(text: str, spans: list[tuple[int, int]], i: int, others: frozenset[str]) -> bool:
    """Whether sentence ``i`` or the paragraph it belongs to opens with an item's label
    that was not asked."""
    if _opens_with(text[slice(*spans[i])], others):
        return True
    start = _paragraph_start(text, i)
    return start != i and _opens_with(text[slice(*spans[start])], others)


def _opens_with(sentence: str, labels: frozenset[str]) -> bool:
    """Whether ``sentence`` opens (past a bullet or colon) with one of ``labels`` (squashed
    as ``normalize_label`` writes them) and the label stands as a heading: a colon
    after it, or its words capitalised ("Personal Protection Avoid ...")."""
    m = re.match(r"^[\s:•*-]*((?:[A-Za-z][\w'/-]*[\s,/&-]*){1,6})(:?)", sentence)
    if m is None:
        return False
    words = re.findall(r"[A-Za-z][\w'/-]*", m.group(1))
    for n in range(len(words), 1, -1):
        if "".join(normalize_label(" ".join(words[:n]))) in labels:
            return all(w[0].isupper() or w.lower() in _LINKS for w in words[:n]) or bool(
                m.group(2) and n == len(words)
            )
    return False


_LINKS = frozenset(["and", "or", "of", "for", "to", "in", "on", "the", "a"])


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
    if HEADING.match(sentence):
        return False
    words = sentence.split()
    return (
        sentence.rstrip().endswith((".", "!", "?"))
        or len(words) > 6
        or any(c.isdigit() for c in sentence)
    )


def _continues(
    text: str, spans: list[tuple[int, int]], i: int, j: int, *, reach: int = 300
) -> bool:
    """Whether sentence ``j`` still belongs to the window that starts at sentence ``i``.

    A window stops at ``reach`` characters, at a heading, and at a new labelled item
    ("SKIN CONTACT: ...") once it has content, a heading or a label of its own; a window
    of headings only ("4. FIRST-AID MEASURES", "4.1 DESCRIPTION ...") runs on into the
    content they introduce.
    """
    start = spans[i][0]
    s, e = spans[j]
    if e - start > reach:
        return False
    if all(HEADING.match(text[a:b]) for a, b in spans[i:j]):
        return True
    if HEADING.match(text[s:e]):
        return False
    if not _LABELLED.match(text[s:e]):
        return True
    first = text[start : spans[j - 1][1]]
    titled = bool(HEADING.match(first) or _LABELLED.match(first))
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
        if HEADING.match(here) or _LABELLED.match(here) or HEADING.match(prev_line):
            break
        if "\n" in text[spans[j - 1][1] : spans[j][0]]:
            ends = prev_line.endswith((".", ":", "!", "?"))
            if ends and len(prev_line) < 0.8 * width:
                break
        j -= 1
    return j


def _window(p: Passage, idx: int, limit: int, *, reach: int = 300) -> str:
    """The sentence at ``idx`` and the ones after it, within ``limit`` characters (verbatim).

    A window is scored on its first ~300 characters; a procedure's is quoted on to
    ``reach``: "If involved in a fire, the following can be released:" and the list
    under it are one item, not a cut after its opening line.
    """
    spans = sentences(p.text)
    start, end = spans[idx]
    for j in range(idx + 1, len(spans)):
        if spans[j][1] - start > limit or not _continues(p.text, spans, idx, j, reach=reach):
            break
        end = spans[j][1]
    return re.sub(r"\s+", " ", p.text[start:end]).strip()
