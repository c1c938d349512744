"""Notebook and terminal display of answers, ingest reports and the document list."""

from __future__ import annotations

import io
import subprocess
import sys
from typing import Any

from rich.console import Console

from hybrid_rag import Answer, DocumentList, Evidence, HybridRAG, IngestReport
from hybrid_rag.models import ChainError, SparqlAttempt


def _rendered(obj: Any) -> str:
    buf = io.StringIO()
    Console(file=buf, width=160, force_terminal=False).print(obj)
    return buf.getvalue()


def test_answer_html_has_citations_and_folded_details(sample_rag: HybridRAG) -> None:
    ans = sample_rag.ask("What is the flash point of Examplon Solvent 99%?")
    html = ans._repr_html_()
    assert "<table>" in html and "<details>" in html
    assert "Facts (" in html and "SPARQL (" in html
    cite = (ans.citations or [f.evidence for f in ans.facts])[0]
    assert f"<td>{cite.page}</td>" in html and cite.doc_id in html
    assert "timings:" in html and "LLM calls" in html


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
        assert report.doc_id in report._repr_html_()
        assert repr(report).startswith(f"IngestReport(doc_id={report.doc_id!r}, status=")
        assert report.doc_id in _rendered(report)
        assert report.doc_id in rag.documents()._repr_html_()
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
