"""Word documents (``.docx``) with ``python-docx``: text in reading order, pages as Word laid
them out, headings as Markdown headings.

Body paragraphs and tables are read in document order. A heading paragraph (style
"Title" or "Heading n", or a style based on one) becomes ``#``-prefixed Markdown, so a
chunk's ``section`` names the heading it is under. A table row becomes one line, its
cells joined by `` | `` (merged cells once), so a label and its value stay together.
Pages follow the page breaks Word recorded when it last laid the document out
(``w:lastRenderedPageBreak``); a file that has none (written by another program) is split
at its hard page breaks only. Headers, footers, comments and deleted (tracked) text are
not read.
"""

from __future__ import annotations

import io
import zipfile
from typing import Any

from hybrid_rag.errors import DocumentError

__all__ = ["docx_pages"]

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
_PAGE = object()  # a page boundary among the text pieces


def docx_pages(data: bytes, name: str) -> tuple[list[str], list[str]]:
    """Page texts and warnings of a ``.docx`` file.

    Raises:
        DocumentError: Not a Word document (not a zip, no ``word/document.xml``),
            or a damaged one.
    """
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise DocumentError(f"{name}: not a .docx file (not a zip archive)")
    try:
        import docx
    except ImportError as exc:  # a base dependency; only a broken install lacks it
        raise ImportError("reading .docx needs python-docx: pip install python-docx") from exc
    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors ...
        raise DocumentError(
            f"{name}: not a readable Word document ({type(exc).__name__}: {exc})"
        ) from None
    body = document.element.body
    rendered = next(body.iter(f"{_W}lastRenderedPageBreak"), None) is not None
    pages: list[list[str]] = [[]]
    for kind, piece in _blocks(document, rendered):
        if kind is _PAGE:
            pages.append([])
        else:
            pages[-1].append(piece)
    return ["\n".join(p) for p in pages], []


def _blocks(document: Any, rendered: bool) -> Any:
    """``(kind, text)`` pairs in document order; ``kind`` is ``_PAGE`` at page breaks."""
    from docx.table import Table

    for block in document.iter_inner_content():
        if isinstance(block, Table):
            yield from _table(block, rendered)
            continue
        level = _heading_level(block)
        for kind, text in _paragraph(block._p, rendered):
            if kind is _PAGE:
                yield _PAGE, ""
            elif text.strip():
                yield "text", f"\n{'#' * level} {text.strip()}\n" if level else text


def _paragraph(p: Any, rendered: bool) -> Any:
    """The text of one ``w:p`` split at page breaks: ``("text", str)`` / ``(_PAGE, "")``."""
    buf: list[str] = []
    ppr = p.find(f"{_W}pPr")
    if not rendered and ppr is not None and ppr.find(f"{_W}pageBreakBefore") is not None:
        yield _PAGE, ""
    for el in _walk(p):
        tag = el.tag
        if tag == f"{_W}t":
            buf.append(el.text or "")
        elif tag == f"{_W}tab":
            buf.append("\t")
        elif tag in (f"{_W}br", f"{_W}cr"):
            if tag == f"{_W}br" and el.get(f"{_W}type") == "page" and not rendered:
                yield "text", "".join(buf)
                buf = []
                yield _PAGE, ""
            else:
                buf.append("\n")
        elif tag == f"{_W}lastRenderedPageBreak" and rendered:
            if "".join(buf).strip():  # Word puts one at the start of each page's first run
                yield "text", "".join(buf)
                buf = []
            yield _PAGE, ""
    yield "text", "".join(buf)


def _walk(el: Any) -> Any:
    """``el`` and its descendants in document order, without ``mc:Fallback`` copies
    (a text box is stored twice: once for new Word versions, once as a fallback)."""
    yield el
    for child in el:
        if child.tag != _FALLBACK:
            yield from _walk(child)


def _table(table: Any, rendered: bool) -> Any:
    """One line per row, cells joined by " | "; page breaks inside cells kept."""
    for tr in table._tbl.tr_lst:
        cells: list[str] = []
        breaks = 0
        for tc in tr.tc_lst:
            parts: list[str] = []
            for p in tc.iter(f"{_W}p"):
                for kind, text in _paragraph(p, rendered):
                    if kind is _PAGE:
                        breaks += 1
                    elif text.strip():
                        parts.append(" ".join(text.split()))
            cell = " ".join(parts)
            if cell and (not cells or cells[-1] != cell):
                cells.append(cell)
        for _ in range(breaks):
            yield _PAGE, ""
        if cells:
            yield "text", " | ".join(cells)


def _heading_level(paragraph: Any) -> int:
    """1-6 for a Title / Heading n paragraph (or a style based on one), else 0."""
    try:
        style = paragraph.style
    except Exception:  # a style id the styles part does not define
        return 0
    for _ in range(4):
        if style is None:
            return 0
        name = (style.name or "").strip().lower()
        if name == "title":
            return 1
        if name.startswith("heading ") and name[8:].isdigit():
            return max(1, min(6, int(name[8:])))
        style = style.base_style
    return 0
