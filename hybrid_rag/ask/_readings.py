"""Names a question gives that no document prints, as a model reads them (pure, no I/O).

A question may name a thing by a name no document prints: a common name ("slaked
lime"), a trade name, a former company name. The LLM router asks its model, with the
intent, for each such name and the name the same thing is usually listed under
("calcium hydroxide"). Nothing the model writes links a document by itself:

1. the name must be in the question as written, and no document may be named so (its
   names holding the words in a row, read as that document by the library's own
   linking: then that linking stands, and the reading is not used);
2. the reading must be printed: the documents whose names or synonyms hold its words
   in a row (``SubjectIndex.naming``) are the only ones it may link;
3. the question is read again with the reading in place of the name, by the offline
   router (the library's own linking decides the documents, properties and intent);
   the documents it links by the reading's words must be among those of (2). When it
   links none of them, or links by those words documents that do not print the reading
   (the name matches several different things), the answer says so and abstains.

The answer opens with a sentence saying how the name was read
(``reading_note``), and ``Answer.readings`` holds the same for code
(``hybrid_rag.models.NameReading``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from hybrid_rag.ask._phrasing import plural
from hybrid_rag.ask.analysis import QuestionAnalysis, ScopeView
from hybrid_rag.text import STOPWORDS, tokens
from hybrid_rag.types import Reading

__all__ = [
    "MAX_NAME_CHARS",
    "Linked",
    "Reread",
    "abstaining",
    "linked_by_reading",
    "reading_note",
    "reread_question",
]

MAX_NAME_CHARS = 80
"""The longest name or reading taken from a model's reply (a name, not a sentence)."""


@dataclass(frozen=True, slots=True)
class Reread:
    """The question with the model's readings in place of the names it gives.

    Attributes:
        question: the question as re-read ("How alkaline is calcium hydroxide?").
        readings: one per name read, ``doc_ids`` still empty (filled once linked).
        printing: per reading (same order), the documents in scope whose names print it.
        outside: per reading, how many documents outside the scope print it.
    """

    question: str
    readings: tuple[Reading, ...]
    printing: tuple[tuple[str, ...], ...]
    outside: tuple[int, ...]
    labels: dict[str, str] = field(default_factory=dict)
    """What each printing document is called by its reading (its shortest such name)."""


def reread_question(
    question: str, names: Sequence[tuple[str, str]], scope: ScopeView
) -> Reread | None:
    """``question`` with each name the model read replaced by its reading; ``None``
    when no reading can be used (see the module: the name not in the question, or
    printed by some document's names, or no reading at all)."""
    text, readings, printing, outside = question, [], [], []
    for said, means in names:
        said, means = " ".join(said.split()), " ".join(means.split())
        words = _content(said)
        if not words or not _content(means) or _content(means) == words:
            continue
        if len(said) > MAX_NAME_CHARS or len(means) > MAX_NAME_CHARS:
            continue
        where = _find(text, said)
        if where is None or _printed(words, question, scope):
            continue  # not the question's words, or a name the documents print
        text = text[: where[0]] + means + text[where[1] :]
        readings.append(Reading(question_span(question, said) or said, means))
        printing.append(tuple(d for d in scope.subjects.naming(_content(means))))
        everywhere = (scope.catalog or scope.subjects).naming(_content(means))
        outside.append(len(set(everywhere) - set(scope.doc_ids)))
    if not readings:
        return None
    labels: dict[str, str] = {}
    for r in readings:  # what each printing document is called by the reading
        labels |= scope.subjects.shortest_names(_content(r.read_as))
    return Reread(text, tuple(readings), tuple(printing), tuple(outside), labels)


def question_span(question: str, said: str) -> str | None:
    """The name as the question writes it (its case and spacing)."""
    where = _find(question, said)
    return question[where[0] : where[1]] if where else None


@dataclass(frozen=True, slots=True)
class Linked:
    """What the re-read question links by the readings.

    Attributes:
        readings: the readings, each with the documents it links (those whose names
            print it).
        strays: documents linked by a reading's words alone that do not print it
            ("mercury(I) chloride" linking a "Mercury(II) chloride" sheet; "sulfuric
            acid" a sheet whose synonym is "Sulfuric acid, disodium salt"): not the
            reading's; the question abstains when they are all it links.
        several: documents a reading alone links whose names, apart from the reading
            and from strengths, share no word ("Sodium Chloride", "Sodium Hydroxide"
            for "sodium"): different things.
    """

    readings: tuple[Reading, ...]
    strays: tuple[str, ...] = ()
    several: tuple[str, ...] = ()


def linked_by_reading(again: QuestionAnalysis, reread: Reread) -> Linked:
    """The documents the re-read question (``again``) links by each reading, and those
    that make a reading unsure (``Linked``)."""
    out, strays, several = [], [], []
    for reading, printing in zip(reread.readings, reread.printing, strict=True):
        words = set(_content(reading.read_as))
        by_words = [m for m in again.subjects if m.matched & words]
        docs = [m.doc_id for m in by_words if m.doc_id in printing]
        docs += [d for d in again.named_set if d in printing]
        alone = [m for m in by_words if m.matched <= words]
        strays += [m.doc_id for m in alone if m.doc_id not in printing]
        named = [m for m in alone if m.doc_id in printing]
        if _different([m.label for m in named], words):
            several += [m.doc_id for m in named]
        shared = [d for d in again.named_set if d in printing]  # a name several share
        if _different([reread.labels.get(d, d) for d in shared], words):
            several += shared
        out.append(replace(reading, doc_ids=tuple(dict.fromkeys(docs))))
    return Linked(tuple(out), tuple(dict.fromkeys(strays)), tuple(dict.fromkeys(several)))


def _different(labels: Sequence[str], words: set[str]) -> bool:
    """Whether two of the names, without the reading's words and without words with a
    digit (strengths, sizes), are left with words and share none."""
    rest = [{t for t in _content(lab) if t not in words and t.isalpha()} for lab in labels]
    rest = [r for r in rest if r]
    return any(not (x & y) for i, x in enumerate(rest) for y in rest[i + 1 :])


def reading_note(readings: Sequence[Reading], noun: str) -> str:
    """The sentence an answer opens with: "The name 'slaked lime' was read as calcium
    hydroxide (the model's reading; no sheet is named 'slaked lime')." Empty without
    readings."""
    if not readings:
        return ""
    parts = [_read_as(r, noun) for r in readings]
    return _capital("; ".join(parts)) + "."


def abstaining(
    linked: Linked, reread: Reread, *, noun: str, label_of: dict[str, str]
) -> str | None:
    """Why the answer abstains on the model's readings (a sentence for the user), or
    ``None`` when every reading links documents and none is unsure."""
    nouns = plural(noun)
    for i, r in enumerate(linked.readings):
        read = _read_as(r, noun)
        if linked.several or (linked.strays and not r.doc_ids):
            unsure = linked.several or linked.strays
            names = "; ".join(label_of.get(d, d) for d in unsure[:4])
            what = "matches" if linked.several else "only matches"
            kind = "of different products" if linked.several else "that do not print it"
            return (
                f"Not answered: {read}, and {r.read_as} {what} the names of {nouns} {kind} "
                f"({names}). Name the {noun} you mean."
            )
        if r.doc_ids:
            continue
        if not reread.printing[i] and reread.outside[i]:
            return (
                f"Not answered: {read}, and the {nouns} called {r.read_as} are outside "
                "the documents in scope."
            )
        if not reread.printing[i]:
            return f"Not answered: {read}, and no {noun} in scope is called {r.read_as}."
        return (
            f"Not answered: {read}, and the question read so names none of the {nouns} "
            f"called {r.read_as}."
        )
    return None


def _read_as(r: Reading, noun: str) -> str:
    said = f"the name '{r.said}' was read as {r.read_as}"
    return f"{said} (the model's reading; no {noun} is named '{r.said}')"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _content(name: str) -> list[str]:
    return [t for t in tokens(name) if t not in STOPWORDS]


def _printed(words: Sequence[str], question: str, scope: ScopeView) -> bool:
    """Whether a document is named so: its names hold the words in a row, and the
    library's linking reads the name, alone or in the question, as that document
    ("grain alcohol" inside another product's name is no name of it)."""
    said = " ".join(words)
    for index in (scope.subjects, scope.catalog):
        if index is None or not (named := set(index.naming(words))):
            continue
        if named & {m.doc_id for m in (*index.link(said), *index.link(question))}:
            return True
    return False


def _find(text: str, name: str) -> tuple[int, int] | None:
    """Where ``name`` is in ``text``: its words in order, case and the punctuation and
    spacing between them aside, on word boundaries."""
    words = re.findall(r"\w+", name)
    if not words:
        return None
    pattern = r"(?<!\w)" + r"\W+".join(re.escape(w) for w in words) + r"(?!\w)"
    m = re.search(pattern, text, re.I)
    return (m.start(), m.end()) if m else None
