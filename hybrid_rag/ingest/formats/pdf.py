"""PDF pages: pypdf's text layer, and OCR for pages that have (almost) none.

Page text is kept exactly as ``pypdf``'s ``extract_text()`` returns it, so a verbatim
quote found on a page is a substring of what the PDF yields. A page whose text layer has
fewer than ``OcrOptions.min_chars`` non-space characters and that draws an image (a scan
does; a blank page does not) is rendered with ``pypdfium2`` and read by OCR
(``hybrid_rag.ingest.formats.ocr``); such pages carry ``ocr=True``. Encrypted PDFs open
with the empty user password in every standard scheme (RC4, AES-128, AES-256; AES needs
``cryptography``, a base dependency).
"""

from __future__ import annotations

import io
import logging
import re
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

from hybrid_rag.errors import (
    DocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    OcrUnavailableError,
)
from hybrid_rag.ingest.formats._pdf_layout import layout_text, parsed_once
from hybrid_rag.ingest.formats.ocr import OcrEngine, OcrOptions, engine_for
from hybrid_rag.models import Page
from hybrid_rag.text import glued_labels

__all__ = ["PDF_MAGIC", "TextMode", "page_ranges", "pdf_pages", "render_pages"]

PDF_MAGIC = b"%PDF-"
TextMode = Literal["plain", "layout"]
_CRYPTO_HINT = "pip install cryptography (a dependency of hybrid-rag; reinstall it)"

_capture = threading.local()
_filter_lock = threading.Lock()
_filtered_loggers: set[str] = set()
_PDFIUM_LOCK = threading.Lock()  # PDFium is not thread-safe: one call at a time per process


class _PypdfCapture(logging.Filter):
    """Diverts pypdf log records into a per-thread list while a parse is running."""

    def filter(self, record: logging.LogRecord) -> bool:
        sink: list[str] | None = getattr(_capture, "sink", None)
        if sink is None:
            return True
        sink.append(record.getMessage())
        return False


_FILTER = _PypdfCapture()


def _install_filters() -> None:
    """Attach the capture filter to the logger of every loaded pypdf module.

    pypdf logs to ``logging.getLogger(module.__name__)``; a filter on the parent ``pypdf``
    logger would not see records propagated from those children.
    """
    names = [n for n in list(sys.modules) if n.split(".")[0] == "pypdf"]
    if set(names) <= _filtered_loggers:
        return
    with _filter_lock:
        for name in ["pypdf", *names]:
            if name not in _filtered_loggers:
                logging.getLogger(name).addFilter(_FILTER)
                _filtered_loggers.add(name)


@contextmanager
def _captured_pypdf_logs() -> Iterator[list[str]]:
    _install_filters()
    sink: list[str] = []
    _capture.sink = sink
    try:
        yield sink
    finally:
        _capture.sink = None


LAYOUT_PAGES = 3
"""PDFs of at most this many pages are also read in layout mode (``Page.layout``)."""


def pdf_pages(
    data: bytes,
    name: str,
    *,
    ocr: OcrOptions,
    text_mode: TextMode = "plain",
    layout_pages: int = LAYOUT_PAGES,
) -> tuple[list[Page], list[str]]:
    """Every page of a PDF (1-based, empty pages kept) and the parse's warnings.

    Args:
        data: The PDF's bytes.
        name: File name, for messages.
        ocr: When and how pages without a text layer are OCR'd.
        text_mode: ``"plain"`` (pypdf's default order) or ``"layout"`` (pypdf's
            layout mode, which keeps printed columns apart with spaces).
        layout_pages: A plain-text PDF of at most this many pages is also read in
            layout mode, into ``Page.layout`` (forms and invoices print labels and
            values in columns that the plain order scrambles); ``0``: never. Costs about
            one more text extraction of those pages.

    Raises:
        EncryptedDocumentError: A password is needed, or AES support is missing.
        OcrUnavailableError: No page has a text layer and no OCR engine is installed.
        EmptyDocumentError: The PDF has no pages.
        DocumentError: Not a PDF, truncated or corrupt.
    """
    if PDF_MAGIC not in data[:1024]:
        raise DocumentError(f"{name}: not a PDF file (no %PDF- header)")
    from pypdf import PdfReader

    with _captured_pypdf_logs() as logs:
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            _decrypt(reader, name)
            texts, layouts = _read_pages_text(reader, name, logs, text_mode, layout_pages)
            imaged = {
                i
                for i, (page, text) in enumerate(zip(reader.pages, texts, strict=True), 1)
                if _chars(text) < ocr.min_chars and (_has_image(page) or _unmapped(text))
            }
        except DocumentError:
            raise
        except Exception as exc:  # pypdf raises many types on corrupt input
            _raise_if_dependency(exc, name)
            raise DocumentError(
                f"{name}: corrupt or truncated PDF ({type(exc).__name__}: {exc})"
            ) from None
    if not texts:
        raise EmptyDocumentError(f"{name}: PDF has no pages")
    warnings = [f"{name}: pypdf: {m[:200]}" for m in dict.fromkeys(logs)]
    pages = [
        Page(number=i, text=t, layout=lay)
        for i, (t, lay) in enumerate(zip(texts, layouts, strict=True), 1)
    ]
    return _with_ocr(data, name, pages, sorted(imaged), ocr, warnings), warnings


def _read_pages_text(
    reader: Any, name: str, logs: list[str], mode: TextMode, most: int
) -> tuple[list[str], list[str | None]]:
    """Each page's text, and its layout-mode text where a short plain-text PDF or a page
    the plain order scrambles wants it (``None`` otherwise, and for a page whose layout
    reading fails or has no text: its plain text stands). A page read both ways parses
    its content stream once (``parsed_once``)."""
    if mode != "plain" or most <= 0:
        texts = [_page_text(page, i, name, logs, mode) for i, page in enumerate(reader.pages, 1)]
        return texts, [None] * len(texts)
    texts, layouts = [], []
    short = len(reader.pages) <= most
    for i, page in enumerate(reader.pages, 1):
        with parsed_once(page):
            text = _page_text(page, i, name, logs, "plain")
            wanted = text.strip() and (short or _stacked(text) or glued_labels(text))
            laid = _page_text(page, i, name, [], "layout") if wanted else ""
        texts.append(text)
        layouts.append(laid if laid.strip() else None)
    return texts, layouts


_STACK = 6
"""Heading-like lines in a row that make a page's plain text suspect (see ``_stacked``)."""


def _stacked(text: str) -> bool:
    """Whether the plain text stacks many short label-like lines in a row ("Storage
    conditions", "Incompatibilities", "8.1 Occupational exposure limits", ...) or the
    colons between labels and values (":" alone on lines in a row): a page drawn in
    layers, labels first and values after, whose values only the layout reading puts
    beside their labels."""
    run = colons = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        run = run + 1 if _heading_like(line) else 0
        colons = colons + 1 if line == ":" else 0  # the colon column, apart from both
        if run >= _STACK or colons >= _COLONS:
            return True
    return False


_COLONS = 3
"""Lines of a bare colon in a row: the column between labels and values, read apart."""


def _heading_like(line: str) -> bool:
    words = line.split()
    if not 1 <= len(words) <= 7 or line.endswith((".", ":", ",", ";")):
        return False
    body = re.sub(r"^\d{1,2}(?:\.\d{1,2})*\.?\s+", "", line)
    return not re.search(r"\d", body) and body[:1].isupper()


def _has_image(page: Any) -> bool:
    """Whether a page draws an image (a scan must); unreadable resources count as yes."""
    try:
        return len(page.images) > 0
    except Exception:  # damaged resources: let OCR try
        return True


def _raise_if_dependency(exc: BaseException, name: str) -> None:
    """A pypdf ``DependencyError`` (AES without ``cryptography``) as a typed error."""
    if type(exc).__name__ == "DependencyError":
        raise EncryptedDocumentError(
            f"{name}: the PDF is AES-encrypted and reading it needs the 'cryptography'"
            f" package, which is not installed: {_CRYPTO_HINT}"
        ) from None


def _decrypt(reader: Any, name: str) -> None:
    """Open an encrypted PDF with the empty user password, or raise."""
    if not getattr(reader, "is_encrypted", False):
        return
    try:
        result = reader.decrypt("")
    except Exception as exc:
        _raise_if_dependency(exc, name)
        raise EncryptedDocumentError(
            f"{name}: encrypted PDF cannot be opened ({type(exc).__name__}: {exc})"
        ) from None
    if not result:  # PasswordType.NOT_DECRYPTED == 0
        raise EncryptedDocumentError(f"{name}: PDF is encrypted and needs a password")


def _page_text(page: Any, number: int, name: str, logs: list[str], mode: TextMode) -> str:
    """One page's text; a page whose content cannot be parsed yields "" and a warning."""
    try:
        text = page.extract_text() if mode == "plain" else layout_text(page)
    except Exception as exc:
        _raise_if_dependency(exc, name)
        logs.append(f"page {number}: text extraction failed ({type(exc).__name__}: {exc})")
        return ""
    return _spaced_boxes(text) if isinstance(text, str) else ""


_BOX = re.compile(r"(?<=\S)[\u25a1\u25af\ufffd]|[\u25a1\u25af\ufffd](?=\S)")


def _spaced_boxes(text: str) -> str:
    """Boxes a font draws for the space it has no glyph for ("Shelf\u25a1life:
    \u25a11\u25a1year") read as spaces; a box standing alone (a checkbox) stays."""
    return _BOX.sub(" ", text) if "\u25a1" in text or "\u25af" in text or "\ufffd" in text else text


# --- OCR of pages without a text layer -------------------------------------------------


def _chars(text: str) -> int:
    """Non-space characters a reader can read: glyph names a font without a Unicode map
    leaves in the text ("/G54/G36/G41", "/c17") count for nothing."""
    return sum(1 for c in _GLYPH_NAMES.sub("", text) if not c.isspace())


_GLYPH_NAMES = re.compile(r"/(?:[A-Za-z]{1,3}\d{1,4}|uni[0-9A-Fa-f]{4})")


def _unmapped(text: str) -> bool:
    """Text that is mostly glyph names: the page draws letters pypdf cannot map to
    characters, so only its picture can be read (OCR), though it draws no image."""
    raw = sum(1 for c in text if not c.isspace())
    return raw > 0 and _chars(text) < raw / 2


def _with_ocr(
    data: bytes,
    name: str,
    pages: list[Page],
    imaged: list[int],
    ocr: OcrOptions,
    warnings: list[str],
) -> list[Page]:
    """``pages`` with OCR text on the ``imaged`` pages: (almost) no text layer, an image."""
    low = [p.number for p in pages if _chars(p.text) < ocr.min_chars]
    if not imaged:
        _warn_untexted(name, pages, low, warnings, why="no text layer and no image")
        return pages
    if not ocr.enabled:
        _warn_untexted(name, pages, low, warnings, why="OCR is off")
        return pages
    try:
        engine = engine_for(ocr)
        out, read = _read_pages(data, name, pages, imaged, ocr, engine, warnings)
    except OcrUnavailableError as exc:  # no engine, or no renderer for PDF pages
        if not any(p.text.strip() for p in pages):
            raise OcrUnavailableError(
                f"{name}: no extractable text on any page (a scanned PDF?); {exc}"
            ) from None
        _warn_untexted(name, pages, low, warnings, why=str(exc))
        return pages
    if read:
        warnings.append(
            f"{name}: page(s) {page_ranges(read)} of {len(pages)} have no text layer and were"
            f" read by OCR ({engine.name}): their text and quotes are read, not copied"
        )
    _warn_untexted(name, out, low, warnings, why="no text layer, and OCR read none")
    return out


def _read_pages(
    data: bytes,
    name: str,
    pages: list[Page],
    numbers: list[int],
    ocr: OcrOptions,
    engine: OcrEngine,
    warnings: list[str],
) -> tuple[list[Page], list[int]]:
    """Render and OCR the given pages; a page keeps its text layer unless OCR read more."""
    out = list(pages)
    read: list[int] = []
    for number, image in render_pages(
        data, numbers, dpi=ocr.dpi, max_pixels=ocr.max_pixels, warnings=warnings, name=name
    ):
        text = engine.read(image)
        if _chars(text) > _chars(pages[number - 1].text):
            out[number - 1] = Page(number=number, text=text, ocr=True)
            read.append(number)
    return out, read


def _warn_untexted(
    name: str, pages: Sequence[Page], low: list[int], warnings: list[str], *, why: str
) -> None:
    """Name the pages of ``low`` that are still blank, and why."""
    empty = [n for n in low if not _chars(pages[n - 1].text)]
    if empty:
        warnings.append(
            f"{name}: {len(pages) - len(empty)} of {len(pages)} pages have text; page(s)"
            f" {page_ranges(empty)} have none ({why})"
        )


def render_pages(
    data: bytes,
    numbers: Sequence[int],
    *,
    dpi: int,
    max_pixels: int,
    warnings: list[str] | None = None,
    name: str = "document",
) -> Iterator[tuple[int, Any]]:
    """Render the given 1-based pages of a PDF to greyscale PIL images with ``pypdfium2``.

    A page that fails to render is skipped with a warning.

    Raises:
        OcrUnavailableError: ``pypdfium2`` is not installed.
    """
    try:
        import pypdfium2 as pdfium
    except ImportError as exc:
        raise OcrUnavailableError(
            'rendering PDF pages for OCR needs pypdfium2: pip install "hybrid-rag[ocr]"'
        ) from exc
    with _PDFIUM_LOCK:
        doc = pdfium.PdfDocument(data, password="")
    try:
        for number in numbers:
            with _PDFIUM_LOCK:
                try:
                    image = _render_one(doc[number - 1], dpi, max_pixels)
                except Exception as exc:  # pdfium raises PdfiumError and others on bad pages
                    if warnings is not None:
                        warnings.append(
                            f"{name}: page {number} could not be rendered for OCR"
                            f" ({type(exc).__name__}: {exc})"
                        )
                    continue
            yield number, image
    finally:
        with _PDFIUM_LOCK:
            doc.close()


def _render_one(page: Any, dpi: int, max_pixels: int) -> Any:
    width, height = page.get_size()
    scale = min(dpi / 72, max_pixels / max(width, height, 1.0))
    return page.render(scale=scale, grayscale=True).to_pil()


def page_ranges(numbers: Sequence[int]) -> str:
    """``[1, 2, 3, 7, 9, 10]`` -> ``"1-3, 7, 9-10"``."""
    parts: list[str] = []
    run: list[int] = []
    for n in sorted(numbers):
        if run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n]
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(parts)
