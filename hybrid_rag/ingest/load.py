"""Load documents (PDF, Word, HTML, plain text, Markdown, images) into pages of text.

Page text is kept exactly as the format's reader returns it (``pypdf``'s
``extract_text()`` for PDFs), so a verbatim quote found in a page is a substring of what
the document yields; pages read by OCR say so (``Page.ocr``). The readers live in
``hybrid_rag.ingest.formats``. Every failure is a typed ``DocumentError`` naming the file.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePath

from hybrid_rag._checks import check_doc_id
from hybrid_rag.errors import (
    DocumentError,
    EmptyDocumentError,
    UnsupportedFormatError,
)
from hybrid_rag.ingest.formats.image import IMAGE_SUFFIXES
from hybrid_rag.ingest.formats.ocr import OcrOptions
from hybrid_rag.ingest.formats.pdf import LAYOUT_PAGES, PDF_MAGIC, TextMode
from hybrid_rag.models import Page

__all__ = [
    "SUPPORTED_SUFFIXES",
    "LoadedDocument",
    "OcrOptions",
    "content_hash",
    "doc_id_from_name",
    "iter_files",
    "media_type_of",
    "parse_document",
    "read_source",
    "validate_doc_id",
]

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
SUPPORTED_SUFFIXES: dict[str, str] = {
    ".pdf": "application/pdf",
    ".docx": DOCX,
    ".html": "text/html",
    ".htm": "text/html",
    ".xhtml": "application/xhtml+xml",
    ".txt": "text/plain",
    ".text": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    **IMAGE_SUFFIXES,
}
"""File suffixes the loaders handle, mapped to their media type (images need the
``[ocr]`` extra)."""

_DOC_ID_BAD_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_PDF_MAGIC = PDF_MAGIC
_DEFAULT_OCR = OcrOptions()


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """A parsed document: its identity, its raw-bytes hash and its pages (1-based).

    Attributes:
        name: File name, e.g. ``"acetone.pdf"``.
        source: Path string, or ``"<bytes:name>"`` for in-memory data.
        content_hash: sha256 hex digest of the raw bytes.
        pages: Every page in order, including empty ones (page numbers stay true).
        media_type: e.g. ``"application/pdf"``, ``"text/html"``, ``"image/png"``.
        warnings: Reader warnings (pypdf log messages, decoding fallbacks, pages without
            text, pages read by OCR).
    """

    name: str
    source: str
    content_hash: str
    pages: tuple[Page, ...]
    media_type: str
    warnings: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        """All page texts joined with form feeds."""
        return "\f".join(p.text for p in self.pages)

    @property
    def ocr_pages(self) -> tuple[int, ...]:
        """Numbers of the pages whose text was read by OCR."""
        return tuple(p.number for p in self.pages if p.ocr)


def content_hash(data: bytes) -> str:
    """The sha256 hex digest of ``data`` (the identity used for idempotent ingest)."""
    return hashlib.sha256(data).hexdigest()


def read_source(
    source: str | os.PathLike[str] | bytes, *, name: str | None = None
) -> tuple[bytes, str, str]:
    """Read a document's bytes.

    Args:
        source: A file path, or the document's raw bytes.
        name: File name; required for bytes (its suffix picks the parser), optional
            override for paths.

    Returns:
        ``(data, name, source_label)``; the label is the path or ``"<bytes:name>"``.

    Raises:
        DocumentError: Bytes without a name, a missing file, a directory or unreadable file.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        if not name:
            raise DocumentError("in-memory document needs a name= (e.g. 'report.pdf')")
        return bytes(source), name, f"<bytes:{name}>"
    if not isinstance(source, str | os.PathLike):
        raise DocumentError(f"unsupported source type {type(source).__name__}")
    path = Path(source)
    if path.is_dir():
        raise DocumentError(f"{path} is a directory, not a document")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DocumentError(f"document not found: {path}") from None
    except OSError as exc:
        raise DocumentError(f"cannot read {path}: {exc.strerror or exc}") from None
    return data, name or path.name, str(path)


def media_type_of(name: str, data: bytes = b"") -> str:
    """The media type for a file name (PDF also by magic bytes when there is no suffix).

    Raises:
        UnsupportedFormatError: The suffix is not in ``SUPPORTED_SUFFIXES``.
    """
    suffix = PurePath(name).suffix.lower()
    if suffix in SUPPORTED_SUFFIXES:
        return SUPPORTED_SUFFIXES[suffix]
    if not suffix and _PDF_MAGIC in data[:1024]:
        return "application/pdf"
    supported = ", ".join(SUPPORTED_SUFFIXES)
    raise UnsupportedFormatError(
        f"{name}: unsupported format {suffix or '(no suffix)'!r}; supported: {supported}"
    )


def parse_document(
    data: bytes,
    *,
    name: str,
    source: str,
    ocr: OcrOptions = _DEFAULT_OCR,
    pdf_text: TextMode = "plain",
    pdf_layout_pages: int = LAYOUT_PAGES,
) -> LoadedDocument:
    """Parse raw bytes into pages. CPU-bound, no file or network I/O.

    Args:
        data: The document's bytes.
        name: File name; its suffix selects the reader.
        source: Label recorded as the document's source.
        ocr: When and how scanned PDF pages and images are read by OCR (default: PDF
            pages with fewer than 50 characters of text, and every image, when an engine
            is installed).
        pdf_text: ``"plain"`` (pypdf's text order, the default) or ``"layout"``
            (pypdf's layout mode: printed columns kept apart by spaces); opt-in.
        pdf_layout_pages: A PDF of at most this many pages is also read in layout mode
            (``Page.layout``), which the offline reader consults for labels and values
            the plain text order separated (forms, invoices, receipts); ``0``: never.

    Raises:
        UnsupportedFormatError: Unknown suffix.
        EmptyDocumentError: Empty file, or no extractable text on any page.
        OcrUnavailableError: Only OCR could read it (a scanned PDF, an image) and no
            engine is installed: the message names ``pip install "hybrid-rag[ocr]"``.
        EncryptedDocumentError: A PDF that needs a password.
        DocumentError: Not the format its name says, truncated or corrupt.
    """
    media_type = media_type_of(name, data)
    if not data.strip():
        raise EmptyDocumentError(f"{name}: empty file")
    pages, warnings = _pages(data, name, media_type, ocr, (pdf_text, pdf_layout_pages))
    if not any(p.text.strip() for p in pages):
        what = {"application/pdf": "scanned or image-only PDF?"}.get(media_type, "blank")
        if media_type.startswith("image/"):
            what = "OCR found none"
        raise EmptyDocumentError(f"{name}: no extractable text on any page ({what})")
    return LoadedDocument(
        name=name,
        source=source,
        content_hash=content_hash(data),
        pages=tuple(pages),
        media_type=media_type,
        warnings=tuple(warnings),
    )


def _pages(
    data: bytes, name: str, media_type: str, ocr: OcrOptions, pdf: tuple[TextMode, int]
) -> tuple[list[Page], list[str]]:
    """The pages and warnings of the reader for ``media_type``."""
    if media_type == "application/pdf":
        from hybrid_rag.ingest.formats.pdf import pdf_pages

        return pdf_pages(data, name, ocr=ocr, text_mode=pdf[0], layout_pages=pdf[1])
    if media_type.startswith("image/"):
        from hybrid_rag.ingest.formats.image import image_pages

        return image_pages(data, name, ocr=ocr)
    if media_type == DOCX:
        from hybrid_rag.ingest.formats.docx import docx_pages

        texts, warnings = docx_pages(data, name)
    elif media_type in ("text/html", "application/xhtml+xml"):
        from hybrid_rag.ingest.formats.html import html_pages

        texts, warnings = html_pages(data, name)
    else:
        from hybrid_rag.ingest.formats.text import text_pages

        texts, warnings = text_pages(data, name)
    return [Page(number=i, text=t) for i, t in enumerate(texts, start=1)], warnings


# --- files and ids ---------------------------------------------------------------------


def iter_files(path: Path) -> list[Path]:
    """Supported documents under ``path`` (recursive), sorted, skipping hidden entries.

    A file path returns ``[path]`` when its suffix is supported.

    Raises:
        DocumentError: ``path`` does not exist.
        UnsupportedFormatError: ``path`` is a file with an unsupported suffix.
    """
    path = Path(path)
    if path.is_file():
        media_type_of(path.name)
        return [path]
    if not path.is_dir():
        raise DocumentError(f"no such file or directory: {path}")
    found = [
        p
        for p in path.rglob("*")
        if p.suffix.lower() in SUPPORTED_SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(path).parts)
        and p.is_file()
    ]
    return sorted(found, key=lambda p: p.as_posix())


def validate_doc_id(doc_id: str) -> str:
    """Return ``doc_id`` when it is a valid doc id (``hybrid_rag._checks.check_doc_id``).

    Raises:
        InvalidDocIdError: Naming the rejected id.
    """
    return check_doc_id(doc_id)


def doc_id_from_name(name: str) -> str:
    """Derive a valid doc id from a file name: its stem, ASCII-folded, other chars -> ``_``.

    A stem with no ASCII letter or digit left (e.g. ``漢字.pdf``) becomes ``doc_<hash>``.

    >>> doc_id_from_name("Acetone SDS (2023).pdf")
    'Acetone_SDS_2023_'
    """
    stem = PurePath(name).stem if PurePath(name).suffix else PurePath(name).name
    ascii_stem = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode()
    doc_id = _DOC_ID_BAD_CHARS.sub("_", ascii_stem)[:128]
    if not any(c.isalnum() for c in doc_id):  # nothing left: name it by a hash of the stem
        doc_id = "doc_" + hashlib.sha256(stem.encode()).hexdigest()[:12]
    return doc_id
