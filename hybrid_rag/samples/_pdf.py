"""A minimal PDF writer: Helvetica text, one string per page, proper xref table.

Enough to ship sample documents and build test fixtures without reportlab. Characters
outside Windows-1252 are written as ``?``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["pdf_bytes", "write_pdf"]

_PAGE_W, _PAGE_H = 612, 792  # US Letter, points
_MARGIN, _FONT_SIZE, _LEADING = 50, 10, 13


def _escape(line: str) -> bytes:
    raw = line.encode("cp1252", errors="replace")
    return raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")


def _content(text: str) -> bytes:
    """A content stream drawing ``text`` line by line from the top-left margin."""
    lines = text.split("\n") if text else []
    if not lines:
        return b""
    top = _PAGE_H - _MARGIN
    ops = [b"BT", b"/F1 %d Tf" % _FONT_SIZE, b"%d TL" % _LEADING, b"%d %d Td" % (_MARGIN, top)]
    for i, line in enumerate(lines):
        ops.append((b"T* " if i else b"") + b"(" + _escape(line) + b") Tj")
    ops.append(b"ET")
    return b"\n".join(ops)


def pdf_bytes(pages: list[str], *, title: str | None = None) -> bytes:
    """Build a PDF whose page ``i`` shows the lines of ``pages[i]`` (``""`` = blank page)."""
    n = len(pages)
    page_ids = [4 + 2 * i for i in range(n)]
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % p for p in page_ids), n),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for pid, text in zip(page_ids, pages, strict=True):
        stream = _content(text)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>"
            % (_PAGE_W, _PAGE_H, pid + 1)
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    info = b""
    if title is not None:
        objects.append(b"<< /Title (" + _escape(title) + b") /Producer (hybrid_rag) >>")
        info = b" /Info %d 0 R" % len(objects)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for num, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (num, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\n" % (len(objects) + 1, info)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def write_pdf(path: str | os.PathLike[str], pages: list[str], *, title: str | None = None) -> Path:
    """Write a text-only PDF with one page per string of ``pages``; returns the path."""
    target = Path(path)
    target.write_bytes(pdf_bytes(pages, title=title))
    return target
