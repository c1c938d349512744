"""Word, HTML and encrypted PDFs, and PDFs with text on few pages: what each reader yields,
where a chunk says it is, and the typed error for every bad input.

The .docx files are written here with python-docx (the real library; nothing in the shared
corpus is a Word file) and the encrypted PDFs with pypdf's own encryption.
"""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag.errors import DocumentError, EncryptedDocumentError
from hybrid_rag.ingest.chunk import chunk_pages
from hybrid_rag.ingest.load import LoadedDocument, OcrOptions, parse_document
from hybrid_rag.samples import pdf_bytes

OCR_OFF = OcrOptions(enabled=False)


def _parse(data: bytes, name: str, **kw: object) -> LoadedDocument:
    return parse_document(data, name=name, source=f"<bytes:{name}>", **kw)  # type: ignore[arg-type]


# --- .docx ----------------------------------------------------------------------------


def _docx(rendered_break: bool = False) -> bytes:
    import docx
    from docx.enum.text import WD_BREAK
    from docx.oxml import OxmlElement

    d = docx.Document()
    d.add_heading("Cleaning agent KX-7", level=0)
    d.add_heading("Part 9: Physical data", level=1)
    d.add_paragraph("Boiling range: 98 - 102 °C")
    table = d.add_table(rows=2, cols=3)
    for row, cells in zip(
        table.rows,
        [("Vapour pressure", "23 hPa", "at 20 °C"), ("Odour", "mild", "mild")],
        strict=True,
    ):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    table.rows[1].cells[1].merge(table.rows[1].cells[2]).text = "mild"
    run = d.add_paragraph("End of part nine.").add_run()
    run.add_break(WD_BREAK.PAGE)
    d.add_heading("Part 10: Storage", level=1)
    para = d.add_paragraph()
    if rendered_break:  # what Word writes where its last layout started a new page
        r = para.add_run()
        r._r.append(OxmlElement("w:lastRenderedPageBreak"))
    para.add_run("Keep the drum closed\tin a dry place.")
    d.sections[0].header.paragraphs[0].text = "Header text not read"
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_docx_reading_order_headings_tables_and_pages() -> None:
    doc = _parse(_docx(), "kx7.docx")
    assert doc.media_type.endswith("wordprocessingml.document")
    assert len(doc.pages) == 2  # split at the hard page break
    first, second = doc.pages[0].text, doc.pages[1].text
    assert "# Cleaning agent KX-7" in first and "\n# Part 9: Physical data\n" in first
    assert "Boiling range: 98 - 102 °C" in first
    assert "Vapour pressure | 23 hPa | at 20 °C" in first  # one row, one line
    assert "\nOdour | mild\n" in first  # a merged cell once
    assert first.index("Part 9") < first.index("Boiling") < first.index("Vapour")
    assert "# Part 10: Storage" in second and "Keep the drum closed\tin a dry place." in second
    assert "Header text" not in doc.text
    assert not any(p.ocr for p in doc.pages)


def test_docx_chunks_name_their_heading_and_page() -> None:
    doc = _parse(_docx(), "kx7.docx")
    chunks = chunk_pages(doc.pages, doc_id="kx7", size=60, overlap=0)
    storage = [c for c in chunks if "drum closed" in c.text]
    boiling = [c for c in chunks if "Boiling range" in c.text]
    assert storage and storage[0].page == 2 and storage[0].section == "Part 10: Storage"
    assert boiling and boiling[0].page == 1 and boiling[0].section == "Part 9: Physical data"
    for c in chunks:
        assert doc.pages[c.page - 1].text[c.start : c.end] == c.text


def test_docx_pages_follow_words_last_layout_when_recorded() -> None:
    doc = _parse(_docx(rendered_break=True), "kx7.docx")
    # Word's own page breaks rule; the hard break is then not counted a second time
    assert len(doc.pages) == 2
    assert doc.pages[1].text.startswith("Keep the drum closed")
    assert "# Part 10: Storage" in doc.pages[0].text


@pytest.mark.parametrize(
    ("data", "why"),
    [(b"PK\x03\x04 not really a zip", "not a .docx"), (b"plain words", "not a .docx")],
)
def test_docx_that_is_not_a_zip(data: bytes, why: str) -> None:
    with pytest.raises(DocumentError, match=why):
        _parse(data, "broken.docx")


def test_docx_zip_without_a_document() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "no word part here")
    with pytest.raises(DocumentError, match="not a readable Word document"):
        _parse(buf.getvalue(), "empty.docx")


# --- HTML -----------------------------------------------------------------------------

_HTML = """<!doctype html><html><head><title>t</title><style>p {color: red}</style>
<script>var hidden = "script text";</script></head><body>
<nav><a href="/">Home</a></nav>
<h1>Primer XR <small>data</small></h1>
<p>A two-part primer for steel.</p>
<section><h2>Handling</h2><p>Stir before use. Do not thin.</p></section>
<h2>Properties</h2>
<table><tr><th>Property</th><th>Value</th></tr>
<tr><td>Density</td><td>1.32 g/cm³</td></tr><tr><td>Flash point</td><td>41 °C</td></tr></table>
<ul><li>Pot life 4 h</li><li>Dry to touch 30 min</li></ul>
</body></html>"""


def test_html_text_with_headings_and_table_rows_on_one_line() -> None:
    doc = _parse(_HTML.encode(), "primer.html")
    assert len(doc.pages) == 1 and doc.media_type == "text/html"
    text = doc.pages[0].text
    lines = [ln.strip() for ln in text.splitlines()]
    assert "# Primer XR data" in lines and "## Handling" in lines and "## Properties" in lines
    density = next(ln for ln in lines if ln.startswith("Density"))
    assert "1.32 g/cm³" in density
    assert "Pot life 4 h" in text and "Stir before use." in text
    assert "script text" not in text and "color: red" not in text


def test_html_chunks_name_their_heading() -> None:
    doc = _parse(_HTML.encode(), "primer.html")
    chunks = chunk_pages(doc.pages, doc_id="primer", size=40, overlap=0)
    stir = next(c for c in chunks if "Stir before use" in c.text)
    flash = next(c for c in chunks if "Flash point" in c.text)
    assert stir.section == "Handling" and flash.section == "Properties"


def test_html_encoding_from_meta_and_fallback() -> None:
    latin = '<html><head><meta charset="iso-8859-1"></head><body><p>Dichte 0,98 g/cm³ café</p>'
    doc = _parse(latin.encode("latin-1"), "de.html")
    assert "café" in doc.text and "g/cm³" in doc.text and not doc.warnings
    undeclared = "<p>Menge: 5 µl – grün</p>".encode("cp1252")
    doc = _parse(undeclared, "x.htm")
    assert "grün" in doc.text and "µl" in doc.text
    assert any("Windows-1252" in w for w in doc.warnings)


def test_html_with_no_text_is_empty() -> None:
    with pytest.raises(DocumentError, match="no extractable text"):
        _parse(b"<html><body><script>x()</script></body></html>", "blank.html")


# --- encrypted PDFs -------------------------------------------------------------------

PAGES = ["Part 2: Hazards\nSignal word: Warning", "Part 9: Data\nMelting point: 12 °C"]


def _encrypted(algorithm: str) -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=io.BytesIO(pdf_bytes(PAGES)))
    writer.encrypt("", "owner-secret", algorithm=algorithm)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


@pytest.mark.parametrize("algorithm", ["RC4-40", "RC4-128", "AES-128", "AES-256-R5", "AES-256"])
def test_pdf_with_empty_user_password_reads_in_every_scheme(algorithm: str) -> None:
    doc = _parse(_encrypted(algorithm), "locked.pdf")
    assert [p.text for p in doc.pages] == PAGES


def test_aes_pdf_without_cryptography_names_the_missing_package(tmp_path: Path) -> None:
    pdf = tmp_path / "aes.pdf"
    pdf.write_bytes(_encrypted("AES-256"))
    script = f"""
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("cryptography", "Crypto"):
            raise ImportError("blocked for this test: " + name)
sys.meta_path.insert(0, Block())
from hybrid_rag.errors import EncryptedDocumentError
from hybrid_rag.ingest.load import parse_document
try:
    parse_document(open({str(pdf)!r}, "rb").read(), name="aes.pdf", source="aes.pdf")
except EncryptedDocumentError as exc:
    print("ERROR", exc)
else:
    print("READ")
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERROR"), out.stdout
    assert "cryptography" in out.stdout and "corrupt" not in out.stdout


def test_pdf_with_a_password_still_refused() -> None:
    from pypdf import PdfWriter

    writer = PdfWriter(clone_from=io.BytesIO(pdf_bytes(PAGES)))
    writer.encrypt("user-secret", "owner", algorithm="AES-256")
    buf = io.BytesIO()
    writer.write(buf)
    with pytest.raises(EncryptedDocumentError, match="needs a password"):
        _parse(buf.getvalue(), "locked.pdf")


# --- PDFs with text on few pages -------------------------------------------------------


def test_pdf_with_text_on_few_pages_warns_and_names_them() -> None:
    pages = ["Part 1: Identification\nProduct: Grout G2"] + [""] * 5 + ["Part 16: Other"]
    doc = _parse(pdf_bytes(pages), "mostly-scanned.pdf", ocr=OCR_OFF)
    assert [p.number for p in doc.pages] == list(range(1, 8))
    (warning,) = [w for w in doc.warnings if "have none" in w]
    assert "2 of 7 pages have text" in warning and "2-6" in warning
    assert "no text layer and no image" in warning


def test_report_carries_the_loader_warning(tmp_path: Path) -> None:
    pdf = tmp_path / "gaps.pdf"
    pdf.write_bytes(pdf_bytes(["Part 1: Identification\nProduct: Grout G2", "", ""]))
    with HybridRAG(embedder="hashing", ocr=False) as rag:
        report = rag.ingest(pdf)
    assert report.status == "ingested" and report.pages == 3
    assert any("1 of 3 pages have text" in w and "2-3" in w for w in report.warnings)


# --- through the facade ----------------------------------------------------------------


def test_docx_and_html_ingest_and_answer_with_page_and_heading(tmp_path: Path) -> None:
    (tmp_path / "kx7.docx").write_bytes(_docx())
    (tmp_path / "primer.html").write_text(_HTML)
    with HybridRAG(embedder="hashing") as rag:
        reports = rag.ingest_many([tmp_path])
        assert sorted(r.doc_id for r in reports) == ["kx7", "primer"]
        assert all(r.status == "ingested" and r.chunks > 0 for r in reports)
        answer = rag.ask("How should the drum be kept?", docs=["kx7"], mode="vector")
    top = next(p for p in answer.passages if "drum closed" in p.text)
    assert top.doc_id == "kx7" and top.page == 2 and top.section == "Part 10: Storage"
    assert not top.ocr


def test_same_stem_in_one_batch_gets_distinct_ids(tmp_path: Path) -> None:
    (tmp_path / "kx7.pdf").write_bytes(pdf_bytes(PAGES))
    (tmp_path / "kx7.docx").write_bytes(_docx())
    with HybridRAG(embedder="hashing") as rag:
        reports = rag.ingest_many([tmp_path])
    # the PDF keeps the id it had before Word files were read; the .docx gets its own
    assert sorted((r.doc_id, r.source.rsplit("/", 1)[-1], r.status) for r in reports) == [
        ("kx7", "kx7.pdf", "ingested"),
        ("kx7_docx", "kx7.docx", "ingested"),
    ]


def test_pdf_layout_mode_is_opt_in_and_keeps_the_words() -> None:
    data = pdf_bytes(PAGES)
    plain, layout = _parse(data, "p.pdf"), _parse(data, "p.pdf", pdf_text="layout")
    assert [p.text for p in plain.pages] == PAGES  # the default is pypdf's plain text
    for a, b in zip(plain.pages, layout.pages, strict=True):
        assert a.text.split() == b.text.split()


def test_boxes_standing_in_for_spaces_read_as_spaces() -> None:
    # the sample PDF writer has no glyph for U+25A1, so the page text is given directly
    from hybrid_rag.ingest.formats.pdf import _spaced_boxes

    text = _spaced_boxes("Shelf\u25a1life: \u25a118\u25a1months\n\u25a1 Yes  \u25a0 No")
    assert text.startswith("Shelf life:") and "18 months" in text
    assert "\u25a1 Yes" in text  # a checkbox standing alone stays
