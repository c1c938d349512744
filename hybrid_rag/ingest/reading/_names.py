"""The document's subject: its name and aliases, from the ontology's naming properties.

The first stated value of the first naming property (``DocumentModel.naming``) is the
subject's name, unless a pack reader reads a title; the other naming values, the
identifying ones (an invoice number) and the pack's own are aliases. A document that
states no name is named from its file: ``AmazonWebServices.pdf`` is "Amazon Web
Services", and ``vantor-k2-40-pump-2-5-bar.pdf`` is the line of page 1 that the file
name spells, as printed ("Vantor K2-40 Pump, 2.5 bar"): a file named after its
document's title keeps the title's words, numbers and punctuation, which the file name
lost.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hybrid_rag.ingest.reading._values import first_code, is_unavailable
from hybrid_rag.types import DocumentModel, ExtractedFact

if TYPE_CHECKING:
    from hybrid_rag.ingest.reading.pack import PackReader
    from hybrid_rag.models import Page


_MAX_ALIASES = 8

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])")


_STEM_ID = re.compile(
    r"[-_](?:[0-9a-f]{12,14}|v\d+|\d{1,2}[-_]\d{1,2}[-_]\d{2,4}.*)$", re.IGNORECASE
)


def _clean_name(value: str) -> str:
    name = re.sub(r"\s*(?:I\s?tem\s*)?#.*$", "", value, flags=re.IGNORECASE)
    name = re.sub(r"\s+", " ", name).strip(" :-–,")
    if name.isupper() and len(name) > 4:
        name = name.title()
    return name


def _stem_name(source_name: str | None) -> str:
    """A name made from a file name: ids and dates cut off, words split apart
    ("acetone-hplc-grade-6732361021b8a.pdf" -> "Acetone Hplc Grade"); a one-word name
    as the file spells it, a number apart ("QualityHosting.pdf" -> "QualityHosting",
    "coolblue1.pdf" -> "Coolblue 1")."""
    if not source_name:
        return "Untitled document"
    stem = _STEM_ID.sub("", Path(source_name).stem)
    if not re.search(r"[-_ ]", stem):  # one word as the file spells it: "QualityHosting"
        word = re.sub(r"(?<=[A-Za-z])(?=\d)", " ", stem)  # a number apart: "Coolblue 1"
        return (word[:1].upper() + word[1:]) or "Untitled document"
    return re.sub(r"[-_]+", " ", stem).strip().title() or "Untitled document"


_MAX_TITLE_LINE = 160


def _squashed(text: str) -> str:
    """Letters and digits only, ASCII-folded, lower case ("27-30% Gel" -> "2730gel")."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "", ascii_text.lower())


def _printed_stem(source_name: str | None, pages: Sequence[Page]) -> str | None:
    """The line of page 1 whose letters and digits are those of the file name (words
    apart: "vantor-k2-40-pump-2-5-bar-66e8a1d633a29.pdf" spells "Vantor K2-40 Pump, 2.5
    bar"), as printed; ``None`` when no line spells it."""
    if not source_name or not pages:
        return None
    stem = _STEM_ID.sub("", Path(source_name).stem)
    want = _squashed(stem)
    if not re.search(r"[-_ ]", stem) or len(want) < 6 or not re.search(r"[a-z]", want):
        return None
    for line in pages[0].text.splitlines():
        line = re.sub(r"\s+", " ", line).strip()
        if len(line) <= _MAX_TITLE_LINE and _squashed(line) == want:
            return line
    return None


def _split_words(stem: str) -> str:
    """A one-word file name's words: "AmazonWebServices" -> "Amazon Web Services",
    "coolblue1" -> "coolblue 1"."""
    return _CAMEL.sub(" ", stem).strip()


def _placeholder(name: str) -> bool:
    """A "name" that says there is none ("None.", "N/A", "Not available")."""
    bare = name.strip(" .:-")
    return not bare or is_unavailable(bare) or bare.lower() in ("none", "n/a", "na", "unknown")


def _names(
    pages: Sequence[Page],
    facts: Sequence[ExtractedFact],
    source_name: str | None,
    model: DocumentModel,
    pack: PackReader | None = None,
) -> tuple[str, tuple[str, ...], bool]:
    """``(name, aliases, fell back to the file name)`` of the document's subject."""

    def clean(value: str) -> str:
        return _clean_name(pack.clean_name(value) if pack is not None else value)

    stated = [f for f in facts if f.status == "stated"]
    values = {
        prop: [clean(f.object_label or f.value) for f in stated if f.prop == prop]
        for prop in model.naming
    }
    first = values[model.naming[0]] if model.naming else []
    fields = [f for f in first if len(f) > 2 and not _placeholder(f)]
    title = pack.title(pages) if pack is not None else None
    title = clean(title) if title else None
    fallback = False
    if title and not _placeholder(title):
        subject = title
    elif fields:
        subject = fields[0]
    else:
        subject = _printed_stem(source_name, pages) or _stem_name(source_name)
        fallback = True
    codes = [first_code(f.value) for p in model.identifying for f in stated if f.prop == p]
    stem = _STEM_ID.sub("", Path(source_name).stem) if source_name and fallback else ""
    aliases = [_split_words(stem)] if stem and not re.search(r"[-_ ]", stem) else []
    aliases += [
        part.strip(" .")
        for prop in model.naming
        for v in values[prop]
        for part in re.split(r"[;|]", v)
    ]
    aliases += codes
    if pack is not None:
        aliases += pack.aliases(facts)
    out: list[str] = []
    for a in aliases:
        if _placeholder(a):
            continue
        if 2 < len(a) <= 80 and a.lower() != subject.lower() and a not in out:
            out.append(a)
    return subject, tuple(out[:_MAX_ALIASES]), fallback
