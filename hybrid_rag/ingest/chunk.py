"""Page-aware character chunking with overlap and section tracking.

A chunk never crosses a page; ``page.text[chunk.start:chunk.end] == chunk.text`` always
holds. Breaks prefer a paragraph end, then a line end, then a sentence end, then a space,
within the last half of the size window. ``Chunk.section`` is the heading in force at the
chunk (SDS ``SECTION n: Title`` lines or Markdown ``#`` headings), carried across pages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hybrid_rag.errors import ConfigurationError
from hybrid_rag.models import OCR_CHUNK_SUFFIX, Chunk, Page

__all__ = ["chunk_pages", "find_headings"]

_SDS_HEADING = re.compile(
    r"^[ \t]*SECTION[ \t]*(\d{1,2})\b[ \t]*[:.)\-–—]?[ \t]*([^\n]{0,100}?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_MD_HEADING = re.compile(r"^#{1,6}[ \t]+([^\n]{1,120}?)[ \t#]*$", re.MULTILINE)
_SUBSECTION = re.compile(r"^[ \t]*(\d{1,2})\.[ \t]?\d{1,2}\.?[ \t]+[A-Za-z]", re.MULTILINE)
# "Section 8. Smoking, eating ..." / "Section 13, Disposal ..." wrapped inside running text:
# a heading is "SECTION n ..." or "Section n: / - Title", never "Section n." or "Section n,"
_IN_SENTENCE = re.compile(r"[ \t]*Section[ \t]*\d{1,2}[ \t]*[.,]")
_SENTENCE_END = re.compile(r"[.!?;:][)\"'\]]?\s")
_WS = re.compile(r"\s+")


def find_headings(text: str) -> list[tuple[int, str]]:
    """Section headings in ``text`` as ``(offset, title)`` pairs in text order.

    SDS headings are normalised to ``"SECTION 5: Firefighting measures"``; Markdown
    headings give their text without the ``#`` marks. A title-case ``Section 8.`` or
    ``Section 13,`` at a line start is a sentence wrapped onto the line (see section 8.
    ...), not a heading.
    """
    found = [
        (m.start(), _sds_title(m.group(1), m.group(2)))
        for m in _SDS_HEADING.finditer(text)
        if not _IN_SENTENCE.match(m.group(0))
    ]
    found += [(m.start(), _WS.sub(" ", m.group(1)).strip()) for m in _MD_HEADING.finditer(text)]
    return sorted(found)


def _sds_title(number: str, title: str) -> str:
    title = _WS.sub(" ", title).strip(" .:-")
    return f"SECTION {int(number)}: {title}" if title else f"SECTION {int(number)}"


def _section_titles(pages: Sequence[Page]) -> dict[int, str]:
    """SDS section number -> title, from the first heading of each number in the document."""
    titles: dict[int, str] = {}
    for page in pages:
        for m in _SDS_HEADING.finditer(page.text):
            titles.setdefault(int(m.group(1)), _sds_title(m.group(1), m.group(2)))
    return titles


def _markers(text: str, titles: dict[int, str]) -> list[tuple[int, str, bool]]:
    """Headings ``(offset, title, False)`` plus SDS subsection lines such as
    ``5.1 Extinguishing media`` as ``(offset, section title, True)``.

    Subsection numbers place text in its section even where the PDF's text order puts
    the ``SECTION n`` heading after its content.
    """
    marks = [(off, title, False) for off, title in find_headings(text)]
    if titles:
        for m in _SUBSECTION.finditer(text):
            title = titles.get(int(m.group(1)))
            if title is not None:
                marks.append((m.start(), title, True))
    marks.sort()
    return marks


def chunk_pages(
    pages: Sequence[Page], *, doc_id: str, size: int = 800, overlap: int = 120
) -> list[Chunk]:
    """Split pages into overlapping chunks that never cross a page.

    Args:
        pages: The document's pages.
        doc_id: Owner document id; chunk ids are ``f"{doc_id}#p{page}c{n}"`` with ``n``
            counting from 0 on each page, plus ``"~ocr"`` on pages read by OCR.
        size: Maximum chunk length in characters.
        overlap: Characters shared by consecutive chunks of a page (``0 <= overlap < size``).

    Returns:
        Chunks in page/offset order; whitespace-only pieces are skipped.

    Raises:
        ConfigurationError: ``size < 1``, or ``overlap`` outside ``[0, size)``.
    """
    if size < 1 or not 0 <= overlap < size:
        raise ConfigurationError(
            f"chunk size must be >= 1 and 0 <= overlap < size (got size={size}, overlap={overlap})"
        )
    titles = _section_titles(pages)
    chunks: list[Chunk] = []
    carried: str | None = None
    for page in pages:
        marks = _markers(page.text, titles)
        for n, (start, end) in enumerate(_spans(page.text, size, overlap)):
            chunks.append(
                Chunk(
                    chunk_id=f"{doc_id}#p{page.number}c{n}{OCR_CHUNK_SUFFIX if page.ocr else ''}",
                    doc_id=doc_id,
                    page=page.number,
                    start=start,
                    end=end,
                    text=page.text[start:end],
                    section=_section_at(marks, start, end, carried),
                    ocr=page.ocr,
                )
            )
        if marks:
            carried = marks[-1][1]
    return chunks


def _section_at(
    marks: list[tuple[int, str, bool]], start: int, end: int, carried: str | None
) -> str | None:
    """The section of ``[start, end)``.

    The last marker at or before ``start``; failing that, a subsection line inside the
    chunk, then the section carried from earlier pages, then a heading inside the chunk.
    """
    before = [title for off, title, _ in marks if off <= start]
    if before:
        return before[-1]
    inside = [(sub, title) for off, title, sub in marks if off < end]
    for sub, title in inside:
        if sub:
            return title
    if carried is not None:
        return carried
    return inside[0][1] if inside else None


def _spans(text: str, size: int, overlap: int) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of the non-blank chunks of one page's text."""
    spans: list[tuple[int, int]] = []
    n = len(text)
    pos = _skip_ws(text, 0)
    while pos < n:
        end = n if n - pos <= size else _break_at(text, pos, pos + size)
        stop = len(text[pos:end].rstrip()) + pos
        if stop > pos:
            spans.append((pos, stop))
        if end >= n:
            break
        pos = _next_start(text, pos, end, overlap)
    return spans


def _skip_ws(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    return pos


def _break_at(text: str, start: int, limit: int) -> int:
    """The best break in ``text[start + (limit-start)//2 : limit]``; ``limit`` if none."""
    lo = start + max(1, (limit - start) // 2)
    for sep in ("\n\n", "\n"):
        i = text.rfind(sep, lo, limit)
        if i >= 0:
            return i + len(sep)
    last = -1
    for m in _SENTENCE_END.finditer(text, lo, limit):
        last = m.end()
    if last > 0:
        return last
    i = max(text.rfind(" ", lo, limit), text.rfind("\t", lo, limit))
    return i + 1 if i >= 0 else limit


def _next_start(text: str, pos: int, end: int, overlap: int) -> int:
    """Start of the next chunk: ``overlap`` chars back from ``end``, moved to a word start."""
    if overlap == 0:
        return _skip_ws(text, end)
    nxt = max(end - overlap, pos + 1)
    if nxt > 0 and not text[nxt - 1].isspace():
        space = _WS.search(text, nxt, end)
        if space is not None:
            nxt = space.end()
    nxt = _skip_ws(text, nxt)
    return nxt if nxt > pos else pos + 1
