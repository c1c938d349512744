"""OCR: scanned PDF pages and image files read by the installed engines, flagged as read
(``ocr=True`` on pages, chunks, passages and evidence), and a typed error naming the install
line when no engine is there.

Real documents from ../shared/corpus: a page of a scanned sheet (sds-more) and a small
invoice image. Tests of an engine skip with the reason when it is not installed; CI
installs both (`.ci/ocr`, the `[dev]` extra). OCR is slow on two cores: each test reads at
most one or two page images.
"""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hybrid_rag import HybridRAG
from hybrid_rag._display import cited_text
from hybrid_rag.errors import ConfigurationError, EmptyDocumentError, OcrUnavailableError
from hybrid_rag.ingest.chunk import chunk_pages
from hybrid_rag.ingest.formats.ocr import _installed, lines_from_boxes
from hybrid_rag.ingest.load import OcrOptions, parse_document
from hybrid_rag.models import Chunk, Evidence, Passage
from hybrid_rag.samples import pdf_bytes

SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpus"
ENGINES = [
    pytest.param(
        name,
        marks=pytest.mark.skipif(
            not _installed(name),
            reason=f"OCR engine {name} not installed (pip install 'hybrid-rag[ocr]'; "
            "tesseract: apt-get install tesseract-ocr)",
        ),
    )
    for name in ("rapidocr", "tesseract")
]
any_engine = pytest.mark.skipif(
    not (_installed("rapidocr") or _installed("tesseract")),
    reason="no OCR engine installed: pip install 'hybrid-rag[ocr]'",
)


def _corpus_file(rel: str) -> Path:
    path = SHARED / rel
    if not path.is_file():
        pytest.skip(f"corpus file {path} not found (it lives in ../shared, outside the repo)")
    return path


def _squash(text: str) -> str:
    return "".join(text.split()).lower()


# --- pure parts ------------------------------------------------------------------------


def test_boxes_beside_each_other_make_one_line() -> None:
    spans = [
        (700, 990, 900, 1020, ": 92 °C"),  # the value, detected first
        (315, 984, 450, 1016, "Flash point"),
        (316, 1046, 480, 1078, "Relative density"),
        (696, 1048, 900, 1080, ": 1.02"),
        (260, 1300, 700, 1330, "SECTION 10. STABILITY"),
    ]
    assert lines_from_boxes(spans) == (
        "Flash point : 92 °C\nRelative density : 1.02\n\nSECTION 10. STABILITY"
    )
    assert lines_from_boxes([]) == "" and lines_from_boxes([(0, 0, 5, 5, "  ")]) == ""


@pytest.mark.parametrize(
    "bad", [{"engine": "easyocr"}, {"dpi": 10}, {"min_chars": -1}, {"max_pixels": 10}]
)
def test_ocr_options_out_of_range(bad: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        OcrOptions(**bad)  # type: ignore[arg-type]


def test_ocr_flag_follows_the_chunk_id_through_every_model() -> None:
    pages = [parse_document(b"typed words", name="a.txt", source="a.txt").pages[0]]
    scanned = pages[0].model_copy(update={"number": 2, "ocr": True})
    chunks = chunk_pages([*pages, scanned], doc_id="mix")
    assert [(c.chunk_id, c.ocr) for c in chunks] == [("mix#p1c0", False), ("mix#p2c0~ocr", True)]
    # a store rebuilding the chunk from its columns, evidence and passages naming it
    again = Chunk(**chunks[1].model_dump(exclude={"ocr"}))
    ev = Evidence(doc_id="mix", page=2, chunk_id=chunks[1].chunk_id, quote="typed")
    passage = Passage(doc_id="mix", page=2, chunk_id=chunks[1].chunk_id, text="t", score=1.0)
    assert again.ocr and ev.ocr and passage.ocr
    assert Evidence.model_validate_json(ev.model_dump_json()) == ev
    assert not Evidence(doc_id="mix", page=1, chunk_id="mix#p1c0", quote="t").ocr


# --- engines on real documents ---------------------------------------------------------


@pytest.fixture(scope="module")
def half_scanned() -> bytes:
    """Page 1: a text page of a BASF sheet; page 2: page 5 of a scanned Symrise sheet."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.add_page(PdfReader(_corpus_file("sds-more/basf/basf_4.pdf")).pages[0])
    writer.add_page(PdfReader(_corpus_file("sds-more/symrise/symrise_2.pdf")).pages[4])
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


@pytest.mark.parametrize("engine", ENGINES[:1])
def test_scanned_page_is_read_and_the_text_page_left_verbatim(
    half_scanned: bytes, engine: str
) -> None:
    from pypdf import PdfReader

    doc = parse_document(
        half_scanned,
        name="half.pdf",
        source="half.pdf",
        ocr=OcrOptions(engine=engine),  # type: ignore[arg-type]
    )
    text_page, scanned = doc.pages
    assert not text_page.ocr
    assert text_page.text == PdfReader(io.BytesIO(half_scanned)).pages[0].extract_text()
    assert scanned.ocr and doc.ocr_pages == (2,)
    flash = next(ln for ln in scanned.text.splitlines() if "flash point" in ln.lower())
    assert "181" in flash and "83" in flash  # the value on its label's line
    assert "physicalandchemicalproperties" in _squash(scanned.text)
    assert any("page(s) 2 of 2" in w and "read by OCR" in w for w in doc.warnings)


def test_ocr_off_leaves_the_scanned_page_empty_with_a_warning(half_scanned: bytes) -> None:
    doc = parse_document(
        half_scanned, name="half.pdf", source="half.pdf", ocr=OcrOptions(enabled=False)
    )
    assert doc.pages[1].text == "" and not doc.pages[1].ocr
    assert any("page(s) 2 have none (OCR is off)" in w for w in doc.warnings)


@pytest.mark.parametrize("engine", ENGINES)
def test_invoice_image_is_read(engine: str) -> None:
    png = _corpus_file("invoices/FlipkartInvoice.png")
    doc = parse_document(
        png.read_bytes(),
        name=png.name,
        source=str(png),
        ocr=OcrOptions(engine=engine),  # type: ignore[arg-type]
    )
    assert doc.media_type == "image/png" and len(doc.pages) == 1 and doc.pages[0].ocr
    text = _squash(doc.pages[0].text)
    assert "invoice" in text and "wsretailservices" in text
    assert any("read by OCR" in w for w in doc.warnings)


@any_engine
def test_image_and_pdf_of_one_invoice_ingest_and_cite_the_ocr(tmp_path: Path) -> None:
    for name in ("FlipkartInvoice.pdf", "FlipkartInvoice.png"):
        (tmp_path / name).write_bytes(_corpus_file(f"invoices/{name}").read_bytes())
    with HybridRAG(embedder="hashing") as rag:
        reports = {r.doc_id: r for r in rag.ingest_many([tmp_path])}
        assert set(reports) == {"FlipkartInvoice", "FlipkartInvoice_png"}
        png = reports["FlipkartInvoice_png"]
        assert png.status == "ingested" and any("read by OCR" in w for w in png.warnings)
        chunks = rag.vectors.chunks("FlipkartInvoice_png")
        assert chunks and all(c.ocr and c.chunk_id.endswith("~ocr") for c in chunks)
        assert not any(c.ocr for c in rag.vectors.chunks("FlipkartInvoice"))
        answer = rag.ask("Who sold the goods?", docs=["FlipkartInvoice_png"], mode="vector")
    assert answer.passages and all(p.ocr for p in answer.passages)
    assert answer.citations and all(c.ocr for c in answer.citations)
    assert "(read by OCR)" in cited_text(answer)


# --- no engine -------------------------------------------------------------------------

_WITHOUT_ENGINES = """
import importlib.abc, os, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("rapidocr", "onnxruntime", "pytesseract"):
            raise ImportError("blocked for this test: " + name)
sys.meta_path.insert(0, Block())
os.environ["PATH"] = ""
from hybrid_rag.ingest.load import parse_document
def run(data, name):
    from hybrid_rag.errors import EmptyDocumentError
    try:
        doc = parse_document(data, name=name, source=name)
    except ImportError as exc:
        return f"{type(exc).__name__} {isinstance(exc, EmptyDocumentError)} {exc}"
    except EmptyDocumentError as exc:
        return f"EMPTY {exc}"
    return "READ " + " | ".join(doc.warnings)
"""


def _without_engines(body: str) -> str:
    script = _WITHOUT_ENGINES + textwrap.dedent(body)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_without_an_engine_images_and_scans_name_the_install_line(
    tmp_path: Path, half_scanned: bytes
) -> None:
    from PIL import Image
    from pypdf import PdfReader, PdfWriter

    scan = PdfWriter()
    scan.add_page(PdfReader(io.BytesIO(half_scanned)).pages[1])  # the scanned page alone
    scan.write(tmp_path / "scan.pdf")
    (tmp_path / "some.pdf").write_bytes(half_scanned)
    (tmp_path / "blank.pdf").write_bytes(pdf_bytes(["", ""]))  # no text and no image
    Image.new("L", (64, 32), 255).save(tmp_path / "img.png")
    got = _without_engines(f"""
        from pathlib import Path
        d = Path({str(tmp_path)!r})
        for n in ("img.png", "scan.pdf", "some.pdf", "blank.pdf"):
            print(n, "::", run((d / n).read_bytes(), n))
    """)
    lines = dict(line.split(" :: ", 1) for line in got.splitlines())
    hint = 'pip install "hybrid-rag[ocr]"'
    assert lines["img.png"].startswith("OcrUnavailableError True") and hint in lines["img.png"]
    assert lines["scan.pdf"].startswith("OcrUnavailableError True") and hint in lines["scan.pdf"]
    assert lines["some.pdf"].startswith("READ") and hint in lines["some.pdf"]
    assert "page(s) 2 have none" in lines["some.pdf"]
    # a blank PDF is empty, not a scan: no engine is asked for
    assert lines["blank.pdf"].startswith("EMPTY") and "hybrid-rag[ocr]" not in lines["blank.pdf"]


def test_blank_pages_are_not_sent_to_ocr() -> None:
    doc = parse_document(
        pdf_bytes(["Part 1: Identification of the mixture X-9", "", ""]),
        name="gaps.pdf",
        source="gaps.pdf",
    )
    assert not any(p.ocr for p in doc.pages)
    assert any("page(s) 2-3 have none (no text layer and no image)" in w for w in doc.warnings)


def test_ocr_off_refuses_an_image_with_a_typed_error(tmp_path: Path) -> None:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", (64, 32), 255).save(buf, format="PNG")
    with pytest.raises(OcrUnavailableError, match="OCR is off") as info:
        parse_document(buf.getvalue(), name="x.png", source="x.png", ocr=OcrOptions(enabled=False))
    assert isinstance(info.value, EmptyDocumentError) and isinstance(info.value, ImportError)


def test_not_an_image_despite_its_suffix() -> None:
    if not (_installed("rapidocr") or _installed("tesseract")):
        pytest.skip("no OCR engine installed: pip install 'hybrid-rag[ocr]'")
    from hybrid_rag.errors import DocumentError

    with pytest.raises(DocumentError, match="not a readable image"):
        parse_document(b"GIF89a but nothing else", name="x.gif", source="x.gif")


def test_a_page_of_unmapped_glyph_names_counts_as_without_text() -> None:
    # a font without a Unicode map: pypdf prints glyph names; only the page image reads
    glyphs = "/G54/G36/G41/G40/G55/G60/G3/G39/G36/G55/G36/G3/G54/G43/G40/G40/G55 /c17"
    doc = parse_document(
        pdf_bytes(["Page one reads: Product name Examplon Degreaser", glyphs * 4]),
        name="glyphs.pdf",
        source="glyphs.pdf",
        ocr=OcrOptions(enabled=False),
    )
    assert any("page(s) 2 have none (OCR is off)" in w for w in doc.warnings), doc.warnings
    assert not any("page(s) 1" in w for w in doc.warnings)
