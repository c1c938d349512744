"""HTML documents with ``inscriptis``: the text as a browser lays it out, headings as
Markdown headings.

inscriptis renders block elements, lists and tables the way a text browser would (a
table row stays on one line, its cells spaced apart), drops scripts and styles, and
reports where each ``<h1>``-``<h6>`` landed; those lines get ``#`` marks, so a chunk's
``section`` names the heading it is under. An HTML file is one page. The encoding comes
from a byte-order mark or a ``<meta charset>``; else UTF-8, else Windows-1252 with a
warning. The choice of extractor is measured in `docs/benchmarks.md` ("HTML extractor").
"""

from __future__ import annotations

import codecs
import re

from hybrid_rag.errors import DocumentError

__all__ = ["decode_html", "html_pages"]

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]{1,40})""", re.I)
_RULES = {f"h{n}": [f"h{n}"] for n in range(1, 7)}


def decode_html(data: bytes, name: str, warnings: list[str]) -> str:
    """The document's text: BOM, then ``<meta charset>``, then UTF-8, then Windows-1252."""
    for bom, enc in (
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            return data.decode(enc, errors="replace")
    m = _META_CHARSET.search(data[:4096])
    if m is not None:
        try:
            return data.decode(m.group(1).decode("ascii"), errors="replace")
        except LookupError:
            warnings.append(f"{name}: unknown charset {m.group(1).decode('ascii')!r}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        warnings.append(f"{name}: not valid UTF-8 and no charset declared, read as Windows-1252")
        return data.decode("cp1252", errors="replace")


def html_pages(data: bytes, name: str) -> tuple[list[str], list[str]]:
    """The one page of an HTML document and the warnings.

    Raises:
        DocumentError: Binary data, or markup the parser cannot read.
    """
    if b"\x00" in data[:8192] and not data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise DocumentError(f"{name}: binary data in an HTML file")
    warnings: list[str] = []
    html = decode_html(data, name, warnings)
    try:
        from inscriptis import get_annotated_text
        from inscriptis.model.config import ParserConfig
    except ImportError as exc:  # a base dependency; only a broken install lacks it
        raise ImportError("reading HTML needs inscriptis: pip install inscriptis") from exc
    try:
        out = get_annotated_text(html, ParserConfig(display_links=False, annotation_rules=_RULES))
    except Exception as exc:  # lxml parser errors on damaged markup
        raise DocumentError(
            f"{name}: HTML cannot be parsed ({type(exc).__name__}: {exc})"
        ) from None
    return [_mark_headings(str(out.get("text", "")), out.get("label", []))], warnings


def _mark_headings(text: str, labels: list[tuple[int, int, str]]) -> str:
    """``text`` with ``#``-marks at the start of each annotated heading's line."""
    starts: dict[int, int] = {}
    for start, end, label in labels:
        head = text[start:end]
        lead = len(head) - len(head.lstrip())
        if not head.strip():
            continue
        pos = start + lead
        line_start = text.rfind("\n", 0, pos) + 1
        if text[line_start:pos].strip():
            continue  # the heading does not open its line (inline in running text)
        starts.setdefault(pos, int(label[1:]))
    for pos in sorted(starts, reverse=True):
        line_start = text.rfind("\n", 0, pos) + 1
        text = f"{text[:line_start]}{'#' * starts[pos]} {text[pos:]}"
    return text
