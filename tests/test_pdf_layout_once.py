"""A page read both ways (plain text and layout mode) parses its content stream once, and
both readings are exactly pypdf's own: on a written PDF and on real sheets."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from pypdf import PdfReader
from pypdf.generic import ContentStream, NameObject, NumberObject

from hybrid_rag.ingest.formats._pdf_layout import layout_text, parsed_once
from hybrid_rag.ingest.formats.ocr import OcrOptions
from hybrid_rag.ingest.formats.pdf import pdf_pages
from hybrid_rag.samples import pdf_bytes

# six short heading-like lines in a row: a page drawn in layers, which is read both ways
_LAYERED = "\n".join(
    [
        *("Storage conditions", "Incompatible materials", "Packaging", "Shelf life", "Odour"),
        *("Colour", "Keep cool and dry.", "Strong oxidisers.", "Steel drum", "24 months"),
    ]
)


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts pypdf's content-stream parses from now on."""
    calls: list[int] = []
    original = ContentStream._parse_content_stream

    def counted(self: Any, stream: Any) -> Any:
        calls.append(1)
        return original(self, stream)

    monkeypatch.setattr(ContentStream, "_parse_content_stream", counted)
    return calls


def _both_ways(data: bytes) -> list[tuple[str, str]]:
    """pypdf's public readings of each page, from a reader of its own."""
    reader = PdfReader(io.BytesIO(data))
    return [(p.extract_text(), p.extract_text(extraction_mode="layout")) for p in reader.pages]


def test_layout_text_equals_pypdfs_layout_reading_with_one_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prose = "A page of running text, long enough to need no OCR, read in plain order."
    data = pdf_bytes([_LAYERED, prose])
    expected = _both_ways(data)
    calls = _parses(monkeypatch)
    pages, _ = pdf_pages(data, "layered.pdf", ocr=OcrOptions(enabled=False), layout_pages=1)
    assert [p.text for p in pages] == [plain for plain, _ in expected]
    assert pages[0].layout == expected[0][1]  # stacked labels: read both ways
    assert pages[1].layout is None  # prose in a two-page PDF: plain only
    assert len(calls) == 2  # one parse per page, the layered page's shared by both readings


def test_the_page_keeps_its_own_contents_after_both_readings() -> None:
    reader = PdfReader(io.BytesIO(pdf_bytes([_LAYERED])))
    page = reader.pages[0]
    before = page.raw_get("/Contents")
    with parsed_once(page):
        assert isinstance(page.raw_get("/Contents"), ContentStream)
        laid = layout_text(page)
    assert page.raw_get("/Contents") is before
    assert laid == page.extract_text(extraction_mode="layout")


def test_unreadable_contents_are_left_to_pypdfs_own_readings() -> None:
    reader = PdfReader(io.BytesIO(pdf_bytes([_LAYERED])))
    page = reader.pages[0]
    page[NameObject("/Contents")] = NumberObject(7)  # not a stream: nothing to pin
    with parsed_once(page):
        assert page.raw_get("/Contents") == 7
        assert layout_text(page) == ""  # pypdf's own answer for contents it cannot read
    assert page.raw_get("/Contents") == 7


def test_real_sheets_read_exactly_as_pypdf_reads_them(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = sorted(corpus.rglob("*.pdf"))[::60][:6]  # a spread of both makers' sheets
    for f in files:
        data = f.read_bytes()
        expected = _both_ways(data)
        reader = PdfReader(io.BytesIO(data))
        for page, (plain, laid) in zip(reader.pages, expected, strict=True):
            calls = _parses(monkeypatch)
            with parsed_once(page):
                assert page.extract_text() == plain, f.name
                assert layout_text(page) == laid, f.name
            assert len(calls) <= 1, f.name  # never parsed twice
            monkeypatch.undo()
