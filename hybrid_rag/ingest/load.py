"""Load documents (PDF, plain text, Markdown) into pages of text.

Page text is kept exactly as the extractor returns it (``pypdf``'s ``extract_text()`` for
PDFs), so a verbatim quote found in a page is a substring of what the PDF yields. Every
failure is a typed ``DocumentError`` naming the file.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import sys
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePath

from hybrid_rag._checks import check_doc_id
from hybrid_rag.errors import (
    DocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    UnsupportedFormatError,
)
from hybrid_rag.models import Page

__all__ = [
    "SUPPORTED_SUFFIXES",
    "LoadedDocument",
    "content_hash",
    "doc_id_from_name",
    "iter_files",
    "parse_document",
    "read_source",
    "validate_doc_id",
]

SUPPORTED_SUFFIXES: dict[str, str] = {
    ".pdf": "application/pdf",
    ".txt": "text/plain",
    ".text": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
}
"""File suffixes the loaders handle, mapped to their media type."""

_DOC_ID_BAD_CHARS = re.compile(r"[^A-Za-z0-9_.-]+")
_PDF_MAGIC = b"%PDF-"


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    """A parsed document: its identity, its raw-bytes hash and its pages (1-based).

    Attributes:
        name: File name, e.g. ``"acetone.pdf"``.
        source: Path string, or ``"<bytes:name>"`` for in-memory data.
        content_hash: sha256 hex digest of the raw bytes.
        pages: Every page in order, including empty ones (page numbers stay true).
        media_type: ``"application/pdf"``, ``"text/plain"`` or ``"text/markdown"``.
        warnings: Parser warnings (pypdf log messages, decoding fallbacks).
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


def parse_document(data: bytes, *, name: str, source: str) -> LoadedDocument:
    """Parse raw bytes into pages. Pure and CPU-bound: no file or network I/O.

    Args:
        data: The document's bytes.
        name: File name; its suffix selects the parser.
        source: Label recorded as the document's source.

    Raises:
        UnsupportedFormatError: Unknown suffix.
        EmptyDocumentError: Empty file, or no extractable text on any page.
        EncryptedDocumentError: A PDF that needs a password.
        DocumentError: Not a PDF, truncated or corrupt.
    """
    media_type = media_type_of(name, data)
    if not data.strip():
        raise EmptyDocumentError(f"{name}: empty file")
    if media_type == "application/pdf":
        texts, warnings = _pdf_pages(data, name)
    else:
        texts, warnings = _text_pages(data, name)
    if not any(t.strip() for t in texts):
        what = "scanned or image-only PDF?" if media_type == "application/pdf" else "blank"
        raise EmptyDocumentError(f"{name}: no extractable text on any page ({what})")
    pages = tuple(Page(number=i, text=t) for i, t in enumerate(texts, start=1))
    return LoadedDocument(
        name=name,
        source=source,
        content_hash=content_hash(data),
        pages=pages,
        media_type=media_type,
        warnings=tuple(warnings),
    )


def _text_pages(data: bytes, name: str) -> tuple[list[str], list[str]]:
    """Decode UTF-8 (latin-1 fallback) and split pages on form feeds."""
    if b"\x00" in data[:8192]:
        raise DocumentError(f"{name}: binary data in a text file")
    warnings: list[str] = []
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
        warnings.append(f"{name}: not valid UTF-8, decoded as latin-1")
    pages = text.split("\f")
    if len(pages) > 1 and not pages[-1].strip():
        pages.pop()
    return pages, warnings


# --- PDF -------------------------------------------------------------------------------

_capture = threading.local()
_filter_lock = threading.Lock()
_filtered_loggers: set[str] = set()


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


def _pdf_pages(data: bytes, name: str) -> tuple[list[str], list[str]]:
    """Extract page texts with pypdf, translating every failure into a typed error."""
    if _PDF_MAGIC not in data[:1024]:
        raise DocumentError(f"{name}: not a PDF file (no %PDF- header)")
    from pypdf import PdfReader

    with _captured_pypdf_logs() as logs:
        try:
            reader = PdfReader(io.BytesIO(data), strict=False)
            _decrypt(reader, name)
            texts = [_page_text(page, i, name, logs) for i, page in enumerate(reader.pages, 1)]
        except DocumentError:
            raise
        except Exception as exc:  # pypdf raises many types on corrupt input
            raise DocumentError(
                f"{name}: corrupt or truncated PDF ({type(exc).__name__}: {exc})"
            ) from None
    if not texts:
        raise EmptyDocumentError(f"{name}: PDF has no pages")
    return texts, [f"{name}: pypdf: {m[:200]}" for m in dict.fromkeys(logs)]


def _decrypt(reader: object, name: str) -> None:
    """Open an encrypted PDF with the empty user password, or raise."""
    if not getattr(reader, "is_encrypted", False):
        return
    try:
        result = reader.decrypt("")  # type: ignore[attr-defined]
    except Exception as exc:
        raise EncryptedDocumentError(
            f"{name}: encrypted PDF cannot be opened ({type(exc).__name__}: {exc})"
        ) from None
    if not result:  # PasswordType.NOT_DECRYPTED == 0
        raise EncryptedDocumentError(f"{name}: PDF is encrypted and needs a password")


def _page_text(page: object, number: int, name: str, logs: list[str]) -> str:
    """One page's text; a page whose content cannot be parsed yields "" and a warning."""
    try:
        text = page.extract_text()  # type: ignore[attr-defined]
    except Exception as exc:
        logs.append(f"page {number}: text extraction failed ({type(exc).__name__}: {exc})")
        return ""
    return text if isinstance(text, str) else ""


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
