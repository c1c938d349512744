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


_BULLETS = "●•·▪■◦‣*-–—:"


def _clean_name(value: str) -> str:
    name = value.lstrip(_BULLETS + " \t")  # "● Trisodium Phosphate": a bullet, no part of it
    name = re.sub(r"\s*(?:I\s?tem\s*)?#.*$", "", name, flags=re.IGNORECASE)
    name = re.sub(r"\s+", " ", name).strip(" :-–,")
    if name.isupper() and len(name) > 4:  # "ULTRAMID A3WG6" -> "Ultramid A3WG6": codes kept
        name = re.sub(r"(?<![\w'])[A-Z]+(?![\w'])", lambda m: m.group(0).capitalize(), name)
    return name


_DANGLING = re.compile(r"(?<![&\w])(?:of|by|and|or|the|for|with|to|in|on|at|from|a|an)\s*$")
"""A "name" ending in a function word is a label broken over lines ("Other means of")."""


def _running_title(pages: Sequence[Page], noun: str) -> str | None:
    """A line printed on most pages that reads as a name (a running header: "Citrus Punch
    Flavor" at the top of every page), the first such on page 1; ``None`` if none.

    Left out: lines with a colon, ending in ``.`` or ``,``, starting in lower case,
    holding a date or the document noun ("SAFETY DATA SHEET"), mostly digits."""
    if len(pages) < 3:
        return None
    seen: dict[str, int] = {}
    for page in pages:
        for line in {ln.strip() for ln in page.text.splitlines()}:
            seen[line] = seen.get(line, 0) + 1
    need = max(3, int(len(pages) * 0.6))
    for raw in pages[0].text.splitlines():
        line = raw.strip()
        if seen.get(line, 0) < need or not 3 <= len(line) <= 80:
            continue
        letters = sum(c.isalpha() for c in line)
        if letters < 3 or letters < len(line.replace(" ", "")) / 2 or not line[0].isupper():
            continue
        if ":" in line or line.endswith((".", ",")) or _DATE.search(line) or _DANGLING.search(line):
            continue
        if _placeholder(line):  # "No information available" under many headings
            continue
        if noun and re.search(rf"\b{re.escape(noun)}s?\b", line, re.I):
            continue
        return line
    return None


_DATE = re.compile(r"\b\d{1,4}[./-]\d{1,2}[./-]\d{1,4}\b|\b(?:19|20)\d\d\b")


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
    return re.sub(r"[^a-z0-9]+", "", _folded(text))


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


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]{3,}", _folded(text))}


def _folded(text: str) -> str:
    """ASCII-folded, lower case ("Café" -> "cafe")."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def _title_fits(title: str, fields: Sequence[str], stated: Sequence[ExtractedFact]) -> bool:
    """Whether a pack's title line can name the subject: it is no other field's value
    on page 1 ("Liquid." is the physical state, printed above the banner in one layout;
    a proper shipping name further on often is the product's name), and where
    it shares no word with the name printed under its label, it holds no date and no
    colon ("(EU) No. 453/2010 - United Kingdom" or "Tel.: 512-668-9918" above "Product
    name: ..." name nothing; "Talcum Powder, USP Grade" above "Talc" does)."""
    bare = _folded(title).strip(" .")
    if any(f.page == 1 and _folded(f.value).strip(" .") == bare for f in stated):
        return any(_folded(v).strip(" .") == bare for v in fields)
    if not fields or any(_words(title) & _words(v) for v in fields):
        return True
    return ":" not in title and _DATE.search(title) is None


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
    # the name is printed at the start: a naming label deep inside is a table's column
    early = {
        prop: [clean(f.object_label or f.value) for f in stated if f.prop == prop and f.page <= 2]
        for prop in model.naming
    }
    first = early[model.naming[0]] if model.naming else []
    fields = [f for f in first if len(f) > 2 and not _placeholder(f) and not _DANGLING.search(f)]
    title = pack.title(pages) if pack is not None else None
    title = clean(title) if title else None
    if title and not _title_fits(title, fields, stated):
        title = None
    fallback = False
    if title and not _placeholder(title):
        subject = title
    elif fields:
        subject = fields[0]
    elif running := _running_title(pages, model.document_noun):
        subject = clean(running)
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
        aliases += [o for name in (subject, *aliases) for o in pack.other_names(name)]
    out: list[str] = []
    for a in aliases:
        if _placeholder(a):
            continue
        if 2 < len(a) <= 80 and a.lower() != subject.lower() and a not in out:
            out.append(a)
    return subject, tuple(out[:_MAX_ALIASES]), fallback


def name_fact(
    subject: str, pages: Sequence[Page], facts: Sequence[ExtractedFact], prop: str
) -> ExtractedFact | None:
    """The subject's name as a fact of ``prop`` (the first naming property), read from
    the line of the first two pages that prints it, when no stated fact of ``prop``
    exists (a name read from the title, not from a labelled field): so every document's
    name has a quote and a page. ``None`` when no line prints it."""
    if any(f.prop == prop and f.status == "stated" for f in facts):
        return None
    words = [re.escape(w) for w in subject.split()]
    if not words:
        return None
    pattern = re.compile(r"(?<!\w)" + r"[\s,]+".join(words) + r"(?!\w)", re.I)
    for page in pages[:2]:
        for line in page.text.splitlines():
            m = pattern.search(line)
            if m is not None and len(line.strip()) <= 3 * len(m.group(0)) + 40:
                return ExtractedFact(
                    prop=prop, value=m.group(0), quote=line.strip(), page=page.number
                )
    return None
