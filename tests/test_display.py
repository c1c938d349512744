"""Notebook and terminal display of answers, ingest reports and the document list."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any

from rich.console import Console

from hybrid_rag import Answer, DocumentList, Evidence, HybridRAG, IngestReport
from hybrid_rag.models import ChainError, Passage, SparqlAttempt


def _rendered(obj: Any) -> str:
    buf = io.StringIO()
    Console(file=buf, width=160, force_terminal=False).print(obj)
    return buf.getvalue()


class _Cells(HTMLParser):
    """The table cells of an HTML fragment: tag, inline style, text, raw inner HTML."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, str]] = []
        self.rows: list[list[dict[str, str]]] = []
        self._cell: dict[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = {
                "tag": tag,
                "style": dict(attrs).get("style") or "",
                "text": "",
                "raw": "",
            }
        elif self._cell is not None:
            self._cell["raw"] += f"<{tag}>"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append(self._cell)
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] += data
            self._cell["raw"] += data


def _cells(html: str) -> _Cells:
    parser = _Cells()
    parser.feed(html)
    return parser


def test_answer_html_has_citations_and_folded_details(sample_rag: HybridRAG) -> None:
    ans = sample_rag.ask("What is the flash point of Examplon Solvent 99%?")
    html = ans._repr_html_()
    assert "<table" in html and "<details>" in html
    assert "Facts (" in html and "SPARQL (" in html
    cite = (ans.citations or [f.evidence for f in ans.facts])[0]
    cells = _cells(html).cells
    assert any(c["text"] == str(cite.page) for c in cells)
    assert any(c["text"] == cite.doc_id for c in cells)
    assert "timings:" in html and "LLM calls" in html


def _align(cell: dict[str, str]) -> str:
    found = re.search(r"text-align:\s*(\w+)", cell["style"])
    assert found, cell  # inline: no notebook stylesheet can override it
    return found.group(1)


def test_notebook_cells_are_aligned_inline_with_no_empty_header_row(
    sample_rag: HybridRAG, sample_paths: Any
) -> None:
    ans = sample_rag.ask("Samplex Acid Descaler 10% splashed into someone's eyes: what first aid?")
    report = IngestReport(doc_id="a-b_c", source="/x/a-b_c.pdf", status="ingested", content_hash="")
    for html in (ans._repr_html_(), report._repr_html_(), sample_rag.documents()._repr_html_()):
        parsed = _cells(html)
        assert parsed.cells
        for cell in parsed.cells:  # numbers (and their headers) right, every text left
            numeric = re.fullmatch(r"[\d.:\- ]+", cell["text"]) is not None or cell["text"] in (
                "page", "score", "pages", "chunks", "triples", "updated",
            )  # fmt: skip
            assert _align(cell) == ("right" if numeric and cell["text"] else "left"), cell
        for row in parsed.rows:
            assert any(c["text"].strip() for c in row), html  # no empty (header) row


def test_ids_wrap_only_after_their_separators(sample_rag: HybridRAG) -> None:
    ans = sample_rag.ask("What is the flash point of Examplon Solvent 99%?")
    cells = _cells(ans._repr_html_()).cells
    ids = [c for c in cells if c["text"] == "examplon-solvent-99"]
    assert ids and all(c["raw"] == "examplon-<wbr>solvent-<wbr>99" for c in ids)
    assert all("word-break:normal" in c["style"] for c in ids)


def test_passages_start_at_a_sentence_where_the_chunk_continues_a_page() -> None:
    from hybrid_rag._display import continues_page, passage_excerpt

    assert continues_page("sheet#p2c3") and not continues_page("sheet#p2c0")
    text = "ction of the eyes. Rinse cautiously with water for several minutes. Remove lenses."
    assert (
        passage_excerpt(text) == "… Rinse cautiously with water for several minutes. Remove lenses."
    )
    assert passage_excerpt(text, continued=False) == text  # a page's first chunk: as it is
    heading = "and gloves\nSECTION 9: Physical and chemical properties"
    assert passage_excerpt(heading) == "… SECTION 9: Physical and chemical properties"
    cut = passage_excerpt("Rinse with water. " * 40, 100)
    assert len(cut) <= 100 and cut.endswith("Rinse…")  # a whole word, then the mark
    assert passage_excerpt("pH 7 " + "a" * 300, 50).startswith("… pH 7")  # no start: marked
    ans = Answer(
        question="q?",
        text="t",
        passages=[Passage(doc_id="d", page=1, chunk_id="d#p1c1", text=text, score=0.5)],
    )
    assert "… Rinse cautiously" in ans._repr_html_()


def test_repr_is_short(sample_rag: HybridRAG) -> None:
    ans = sample_rag.ask("What is the flash point of Examplon Solvent 99%?")
    assert len(ans.model_dump_json()) > 1000
    text = repr(ans)
    assert text.startswith("Answer(") and len(text) < 300 and "facts=" in text
    assert str(ans) == text
    docs = sample_rag.documents()
    assert isinstance(docs, list) and isinstance(docs, DocumentList) and len(docs) == 3
    assert repr(docs).startswith("DocumentList(3 documents: ")


def test_everything_is_html_escaped() -> None:
    evil = "<script>alert(1)</script>"
    ans = Answer(
        question=evil,
        text=evil,
        citations=[Evidence(doc_id="d", page=1, quote=evil)],
        sparql=[SparqlAttempt(query=evil, origin="llm", error=evil)],
        errors=[ChainError(chain="kg", kind=evil, message=evil)],
    )
    report = IngestReport(
        doc_id="d", source=evil, status="failed", content_hash="", warnings=[evil], error=evil
    )
    for html in (ans._repr_html_(), report._repr_html_()):
        assert "<script>" not in html and "&lt;script&gt;" in html


def test_no_answer_and_report_views(sample_paths: Any) -> None:
    ans = Answer(question="q?", text=None)
    assert "No answer" in ans._repr_html_() and "text=None" in repr(ans)
    with HybridRAG(embedder="hashing") as rag:
        report = rag.ingest(sample_paths[0])
        assert report.doc_id in {c["text"] for c in _cells(report._repr_html_()).cells}
        assert repr(report).startswith(f"IngestReport(doc_id={report.doc_id!r}, status=")
        assert report.doc_id in _rendered(report)
        assert report.doc_id in {c["text"] for c in _cells(rag.documents()._repr_html_()).cells}
        assert report.doc_id in _rendered(rag.documents())


def test_rich_renders_the_answer(sample_rag: HybridRAG) -> None:
    ans = sample_rag.ask("What is the flash point of Examplon Solvent 99%?")
    out = _rendered(ans)
    assert "Facts (" in out and ans.question in out


def test_first_use_in_a_kernel_prints_no_tqdm_warning(tmp_path: Any) -> None:
    # tqdm.auto warns "IProgress not found" when imported inside a Jupyter kernel without
    # ipywidgets; bm25s imports it. Pretend to be a kernel and ingest + ask once.
    code = (
        "import sys, types, warnings\n"
        "warnings.simplefilter('always')\n"
        "sys.modules['ipykernel.zmqshell'] = types.ModuleType('ipykernel.zmqshell')\n"
        "ip = types.ModuleType('IPython'); ip.get_ipython = lambda: type('ZMQShell', (), {})()\n"
        "sys.modules['IPython'] = ip\n"
        "from hybrid_rag import HybridRAG\n"
        "from hybrid_rag.samples import sample_pdfs\n"
        f"rag = HybridRAG(embedder='hashing', processes=False)\n"
        f"rag.ingest_many(sample_pdfs({str(tmp_path)!r}))\n"
        "print(rag.ask('What is the flash point of Examplon Solvent 99%?').text)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "IProgress" not in run.stderr, run.stderr
    assert "Warning" not in run.stderr, run.stderr
