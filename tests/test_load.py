"""Document loading: good inputs, every bad input with its precise error, ids, file listing."""

from __future__ import annotations

import hashlib
import io
import logging
from pathlib import Path

import pytest

from hybrid_rag.errors import (
    DocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    InvalidDocIdError,
    UnsupportedFormatError,
)
from hybrid_rag.ingest.load import (
    SUPPORTED_SUFFIXES,
    LoadedDocument,
    content_hash,
    doc_id_from_name,
    iter_files,
    parse_document,
    read_source,
    validate_doc_id,
)
from hybrid_rag.samples import pdf_bytes, sample_pdfs, write_pdf

PAGES = ["SECTION 9: Physical and chemical properties\nFlash point: -18 °C", "Second (page) \\ end"]


def _parse(data: bytes, name: str = "doc.pdf") -> LoadedDocument:
    return parse_document(data, name=name, source=f"<bytes:{name}>")


def _encrypted(user: str, owner: str | None = None) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=io.BytesIO(pdf_bytes(PAGES)))
    writer.encrypt(user, owner)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def test_pdf_pages_are_pypdf_text_verbatim() -> None:
    from pypdf import PdfReader

    data = pdf_bytes(PAGES)
    doc = _parse(data)
    raw = [p.extract_text() for p in PdfReader(io.BytesIO(data)).pages]
    assert [p.text for p in doc.pages] == raw == PAGES
    assert [p.number for p in doc.pages] == [1, 2]
    assert doc.media_type == "application/pdf"
    assert doc.content_hash == hashlib.sha256(data).hexdigest()


def test_read_source_path_and_bytes(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "acetone.pdf", PAGES)
    data, name, label = read_source(path)
    assert (name, label) == ("acetone.pdf", str(path)) and data == path.read_bytes()
    assert read_source(str(path), name="other.pdf")[1] == "other.pdf"
    assert read_source(b"abc", name="x.txt") == (b"abc", "x.txt", "<bytes:x.txt>")


def test_bytes_without_name_is_rejected() -> None:
    with pytest.raises(DocumentError, match="name"):
        read_source(b"%PDF-1.4")


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="not found"):
        read_source(tmp_path / "nope.pdf")
    with pytest.raises(DocumentError, match="directory"):
        read_source(tmp_path)


def test_not_a_pdf_despite_suffix() -> None:
    with pytest.raises(DocumentError, match="not a PDF") as info:
        _parse(b"<html>hello</html>", "fake.pdf")
    assert type(info.value) is DocumentError


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_truncated_pdf(cut: float, caplog: pytest.LogCaptureFixture) -> None:
    data = pdf_bytes(PAGES)
    with caplog.at_level(logging.WARNING), pytest.raises(DocumentError, match="truncated"):
        _parse(data[: int(len(data) * cut)], "cut.pdf")
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]  # captured, not logged


def test_corrupt_pdf() -> None:
    with pytest.raises(DocumentError, match=r"corrupt\.pdf"):
        _parse(b"%PDF-1.7\n" + b"\x00garbage" * 50, "corrupt.pdf")


def test_encrypted_pdf_needs_password() -> None:
    with pytest.raises(EncryptedDocumentError, match=r"locked\.pdf"):
        _parse(_encrypted("secret"), "locked.pdf")


def test_pdf_encrypted_with_empty_user_password_is_read() -> None:
    doc = _parse(_encrypted("", "owner-secret"))
    assert [p.text for p in doc.pages] == PAGES


def test_scanned_pdf_without_text() -> None:
    with pytest.raises(EmptyDocumentError, match="no extractable text"):
        _parse(pdf_bytes(["", ""]), "scan.pdf")


def test_pdf_with_some_blank_pages_keeps_numbering() -> None:
    doc = _parse(pdf_bytes(["", "text on page two"]))
    assert [(p.number, p.text) for p in doc.pages] == [(1, ""), (2, "text on page two")]


@pytest.mark.parametrize("name", ["empty.pdf", "empty.txt", "empty.md"])
def test_empty_file(name: str) -> None:
    with pytest.raises(EmptyDocumentError, match="empty"):
        _parse(b"", name)


def test_whitespace_text_file_is_empty() -> None:
    with pytest.raises(EmptyDocumentError):
        _parse(b" \n\t\n", "blank.txt")


@pytest.mark.parametrize("name", ["sheet.odt", "image.xcf", "noext"])
def test_unsupported_format_lists_supported(name: str) -> None:
    with pytest.raises(UnsupportedFormatError) as info:
        _parse(b"some bytes", name)
    assert ".pdf" in str(info.value) and ".md" in str(info.value) and name in str(info.value)


def test_pdf_without_suffix_detected_by_magic() -> None:
    assert _parse(pdf_bytes(PAGES), "noext").media_type == "application/pdf"


def test_text_file_pages_split_on_form_feed() -> None:
    doc = _parse("page one °C\fpage two\f".encode(), "notes.txt")
    assert [p.text for p in doc.pages] == ["page one °C", "page two"]
    assert doc.media_type == "text/plain"
    one = _parse(b"# Title\n\nbody", "readme.md")
    assert one.media_type == "text/markdown" and one.pages[0].text == "# Title\n\nbody"


def test_text_latin1_fallback_warns() -> None:
    doc = _parse("Flammpunkt 23 °C".encode("latin-1"), "de.txt")
    assert doc.pages[0].text == "Flammpunkt 23 °C" and doc.warnings


def test_binary_named_txt() -> None:
    with pytest.raises(DocumentError, match="binary"):
        _parse(b"\x00\x01\x02abc", "bin.txt")


def test_content_hash_stable() -> None:
    assert content_hash(b"abc") == content_hash(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert content_hash(b"abc") != content_hash(b"abd")


@pytest.mark.parametrize("good", ["acetone", "a", "A-b_c.1", "x" * 128, "-lead"])
def test_valid_doc_ids(good: str) -> None:
    assert validate_doc_id(good) == good


@pytest.mark.parametrize("bad", ["", ".", "..", "a b", "x" * 129, "a/b", "é", "a#b"])
def test_invalid_doc_ids(bad: str) -> None:
    with pytest.raises(InvalidDocIdError) as info:
        validate_doc_id(bad)
    assert repr(bad) in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("acetone.pdf", "acetone"),
        ("Acetone SDS (2023).pdf", "Acetone_SDS_2023_"),
        ("Ätzmittel.pdf", "Atzmittel"),
        ("dir/sub/file.name.pdf", "file.name"),
        ("a b.c.txt", "a_b.c"),
    ],
)
def test_doc_id_from_name(name: str, expected: str) -> None:
    assert doc_id_from_name(name) == expected
    validate_doc_id(doc_id_from_name(name))


def test_doc_id_from_name_without_ascii_is_hashed_and_distinct() -> None:
    ids = {doc_id_from_name(n) for n in ["漢字.pdf", "ελληνικά.pdf", "..pdf", "_.pdf"]}
    assert len(ids) == 4 and all(i.startswith("doc_") for i in ids)
    assert all(validate_doc_id(i) for i in ids)
    assert doc_id_from_name("漢字.pdf") == doc_id_from_name("漢字.pdf")


def test_doc_id_from_long_name_truncated() -> None:
    assert len(doc_id_from_name("y" * 300 + ".pdf")) == 128


def test_iter_files_recursive_sorted_skips_hidden(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / ".hidden").mkdir()
    for rel in ["b/z.pdf", "a.txt", "b/c.md", ".hidden/x.pdf", ".dot.pdf", "skip.odt"]:
        (tmp_path / rel).write_bytes(b"x")
    got = [p.relative_to(tmp_path).as_posix() for p in iter_files(tmp_path)]
    assert got == ["a.txt", "b/c.md", "b/z.pdf"]
    assert iter_files(tmp_path / "a.txt") == [tmp_path / "a.txt"]
    with pytest.raises(DocumentError):
        iter_files(tmp_path / "missing")
    with pytest.raises(UnsupportedFormatError):
        iter_files(tmp_path / "skip.odt")


def test_supported_suffixes() -> None:
    assert {".pdf", ".txt", ".md"} <= set(SUPPORTED_SUFFIXES)


def test_sample_pdfs_are_loadable_sds(tmp_path: Path) -> None:
    paths = sample_pdfs(tmp_path / "samples")
    assert len(paths) >= 2 and all(p.suffix == ".pdf" for p in paths)
    docs = [_parse(p.read_bytes(), p.name) for p in paths]
    text = "\n".join(d.text for d in docs)
    for needle in ["Flash point: -18 °C", "UN1090", "Signal word: Danger", "pH: 10.5"]:
        assert needle in text
    assert "SECTION 14: Transport information" in text


def test_corpus_pdf_loads(corpus: Path) -> None:
    path = sorted((corpus / "laballey").glob("*.pdf"))[0]
    doc = parse_document(path.read_bytes(), name=path.name, source=str(path))
    assert len(doc.pages) >= 1 and any("SECTION" in p.text for p in doc.pages)
