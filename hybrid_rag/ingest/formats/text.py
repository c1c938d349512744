"""Plain text and Markdown: UTF-8 (latin-1 fallback), pages split on form feeds."""

from __future__ import annotations

from hybrid_rag.errors import DocumentError

__all__ = ["decode_text", "text_pages"]


def decode_text(data: bytes, name: str, warnings: list[str]) -> str:
    """``data`` decoded as UTF-8 (a BOM dropped), else latin-1 with a warning."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        warnings.append(f"{name}: not valid UTF-8, decoded as latin-1")
        return data.decode("latin-1")


def text_pages(data: bytes, name: str) -> tuple[list[str], list[str]]:
    """Page texts (split on form feeds, a trailing empty page dropped) and warnings.

    Raises:
        DocumentError: Binary data (a NUL byte) in the first 8 KiB.
    """
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{name}: binary data in a text file")
    warnings: list[str] = []
    pages = decode_text(data, name, warnings).split("\f")
    if len(pages) > 1 and not pages[-1].strip():
        pages.pop()
    return pages, warnings
