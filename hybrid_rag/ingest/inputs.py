"""What ingest accepts before anything is parsed: regular files and bytes, bounded in size.

Checked here, before the loaders run: a path must name a *regular* file (a named pipe,
a device such as ``/dev/zero`` or a socket is refused at once, also behind a symlink,
and never opened in a way that could block), and no document may be larger than
``max_bytes`` (``DEFAULT_MAX_BYTES`` unless ``HybridRAG(max_bytes=...)`` says
otherwise): a larger file is refused from its size alone, and a file that grows while it
is read is cut off at the limit, never read to the end. File names that are not valid
Unicode (bytes a file system allowed that UTF-8 does not) are kept readable, with the
offending bytes written as ``\\xNN``, so the document's source label can always be
stored.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from hybrid_rag.errors import DocumentError, DocumentTooLargeError, InputError

if TYPE_CHECKING:
    from hybrid_rag.ingest.load import LoadedDocument

__all__ = [
    "DEFAULT_MAX_BYTES",
    "check_max_bytes",
    "no_lone_surrogates",
    "read_input",
    "safe_text",
    "valid_unicode",
]

DEFAULT_MAX_BYTES = 50 * 2**20
"""The largest document ingest reads by default: 50 MiB (the service's upload limit)."""

_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}
_CHUNK = 1 << 20


def check_max_bytes(value: object) -> int:
    """``value`` when it is an ``int`` >= 1 (the size limit of one document, in bytes)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"max_bytes must be an int, not {type(value).__name__}")
    if value < 1:
        raise InputError(f"max_bytes must be >= 1, not {value}")
    return value


def safe_text(text: str) -> str:
    """``text`` with lone surrogates (undecodable file-name bytes) written as ``\\xNN``."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        raw = text.encode("utf-8", "surrogateescape")  # os.fsdecode's escapes: the real bytes
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogatepass")  # other lone surrogates
    return raw.decode("utf-8", "backslashreplace")


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(doc: LoadedDocument) -> LoadedDocument:
    """``doc`` with lone surrogates in its page text (a PDF's broken character map)
    replaced by U+FFFD, so every chunk and quote can be stored; unchanged when none."""
    if not any(_SURROGATE.search(p.text) for p in doc.pages):
        return doc
    pages = tuple(
        p.model_copy(update={"text": _SURROGATE.sub("\ufffd", p.text)}) for p in doc.pages
    )
    return dataclasses.replace(doc, pages=pages)


def no_lone_surrogates(value: object) -> object:
    """``value`` unchanged, or ``ValueError`` when a string in it is not valid Unicode
    (a JSON ``\\ud800`` escape decodes to a lone surrogate, which no answer can hold)."""
    if isinstance(value, str):
        if safe_text(value) != value:
            raise ValueError("text is not valid Unicode: a lone surrogate (an unpaired \\u escape)")
    elif isinstance(value, dict):
        for item in value.values():
            no_lone_surrogates(item)
    elif isinstance(value, list | tuple):
        for item in value:
            no_lone_surrogates(item)
    return value


def read_input(
    source: str | os.PathLike[str] | bytes, *, name: str | None, max_bytes: int
) -> tuple[bytes, str, str]:
    """A document's bytes, its file name and its source label, within the limits above.

    Args:
        source: a path, or the document's bytes.
        name: the file name (required with bytes; overrides a path's own name).
        max_bytes: the size limit.

    Returns:
        ``(data, name, label)``: the label is the path, or ``"<bytes:name>"``; both name
        and label are valid Unicode.

    Raises:
        DocumentTooLargeError: more than ``max_bytes``.
        DocumentError: missing, a folder, not a regular file, or unreadable.
    """
    if isinstance(source, bytes | bytearray | memoryview):
        if not name:
            raise DocumentError("in-memory document needs a name= (e.g. 'report.pdf')")
        label = safe_text(name)
        _check_size(len(source), max_bytes, label)
        return bytes(source), label, f"<bytes:{label}>"
    path = Path(source)
    shown = safe_text(str(path))
    data = _read_file(path, shown, max_bytes)
    return data, safe_text(name or path.name), shown


def _read_file(path: Path, shown: str, max_bytes: int) -> bytes:
    st = _stat(path, shown)
    if stat.S_ISDIR(st.st_mode):
        raise DocumentError(f"{shown} is a directory, not a document")
    _check_regular(st.st_mode, shown)
    _check_size(st.st_size, max_bytes, shown)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)  # non-blocking: a pipe swapped in after the check never hangs
    except OSError as exc:
        raise DocumentError(f"cannot read {shown}: {exc.strerror or exc}") from None
    try:
        _check_regular(os.fstat(fd).st_mode, shown)
        parts, total = [], 0
        while block := os.read(fd, min(_CHUNK, max_bytes + 1 - total)):
            parts.append(block)
            total += len(block)
            if total > max_bytes:  # it grew while being read
                _check_size(total, max_bytes, shown, grew=True)
    except OSError as exc:
        raise DocumentError(f"cannot read {shown}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return b"".join(parts)


def _stat(path: Path, shown: str) -> os.stat_result:
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise DocumentError(f"document not found: {shown}") from None
    except OSError as exc:
        raise DocumentError(f"cannot read {shown}: {exc.strerror or exc}") from None


def _check_regular(mode: int, shown: str) -> None:
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise DocumentError(f"{shown} is {kind}: only regular files are read")


def _check_size(size: int, max_bytes: int, shown: str, *, grew: bool = False) -> None:
    if size > max_bytes:
        how = "it grew while being read" if grew else f"{size:,} bytes"
        raise DocumentTooLargeError(
            f"{shown} is larger than the limit of {max_bytes:,} bytes ({how}); raise the "
            "limit with HybridRAG(max_bytes=...) or `hybrid-rag ingest --max-bytes`"
        )
