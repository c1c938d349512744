"""End to end over real Safety Data Sheets from ../shared/corpus/sds (skipped when absent)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pypdf
import pytest

from hybrid_rag import HybridRAG

DOCS = [
    "alizarin-yellow-r-dry-stain-67aba56af2a97.pdf",
    "ammonium-thiocyanate-crystal-lab-grade-6761edd7ba691.pdf",
    "castor-oil-lab-grade-67858c04f0a88.pdf",
    "ethanol-140-proof-70-denatured-alcohol-kosher-halal-67b63f21b13cb.pdf",
    "hexamethylene-tetramine-lab-grade-678ad9c94d7d2.pdf",
    "liquid-urea-30-684c45bad9640.pdf",
    "nhexane-95-high-purity-grade-672e86651c837.pdf",
    "potassium-chloride-3m-solution-lab-grade-6724ed702d870.pdf",
    "sodium-bicarbonate-lab-grade-6797efccbfe7f.pdf",
    "sodium-silicate-solution-4042-baume-68641a05b707e.pdf",
    "triethanolamine-50-lab-grade-68641058eee58.pdf",
]
HEXANE = "nhexane-95-high-purity-grade-672e86651c837"
ETHANOL = "ethanol-140-proof-70-denatured-alcohol-kosher-halal-67b63f21b13cb"


@pytest.fixture(scope="module")
def files(corpus: Path) -> list[Path]:
    return [corpus / "laballey" / name for name in DOCS]


@pytest.fixture(scope="module")
def rag(files: list[Path]) -> Iterator[HybridRAG]:
    with HybridRAG(embedder="hashing") as r:
        reports = r.ingest_many(files)
        assert [rep.status for rep in reports] == ["ingested"] * len(files)
        yield r


def _page(corpus: Path, doc_id: str, page: int) -> str:
    name = next(d for d in DOCS if d.startswith(doc_id))
    text: str = pypdf.PdfReader(corpus / "laballey" / name).pages[page - 1].extract_text()
    return text


def test_every_document_has_a_title_facts_and_chunks(rag: HybridRAG) -> None:
    docs = rag.documents()
    assert len(docs) == len(DOCS)
    for d in docs:
        assert d.title and d.pages >= 5 and d.chunks > 5 and d.triples > 50, d


def test_fact_answer_is_cited_verbatim(rag: HybridRAG, corpus: Path) -> None:
    ans = rag.ask("What is the flash point of n-Hexane 95% High Purity Grade?")
    assert ans.text is not None and "-22 °C" in ans.text and "kg" in ans.sources
    fact = next(f for f in ans.facts if f.predicate == "flashPoint")
    assert fact.number == pytest.approx(-22.0) and fact.unit == "°C"
    assert fact.evidence.quote in _page(corpus, fact.evidence.doc_id, fact.evidence.page)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the UN number of n-Hexane 95% High Purity Grade?", "UN1208"),
        ("What is the CAS number of Sodium Bicarbonate Lab Grade?", "144-55-8"),
        ("What is the signal word for Ammonium Thiocyanate Crystal Lab Grade?", "Danger"),
        ("What is the boiling point of Triethanolamine 50%?", "119.1 °C"),
    ],
)
def test_fact_questions(rag: HybridRAG, question: str, expected: str) -> None:
    ans = rag.ask(question)
    assert ans.text is not None and expected in ans.text
    assert len(ans.text) < 400


def test_stated_unavailable_is_said(rag: HybridRAG) -> None:
    ans = rag.ask("What is the pH of Potassium Chloride 3M Solution?")
    assert ans.text is not None and "not available" in ans.text
    assert any(f.status == "unavailable" for f in ans.facts)


def test_cross_document_comparison_on_typed_quantities(rag: HybridRAG) -> None:
    ans = rag.ask(
        "Of these, which one has the lowest flash point: n-Hexane 95% High Purity Grade; "
        "Ethanol 140 Proof; Castor Oil Lab Grade?"
    )
    assert ans.text is not None and ans.text.startswith("n-Hexane 95% High Purity Grade")
    numbers = [f.number for f in ans.facts if f.predicate == "flashPoint"]
    assert numbers == sorted(numbers) and len(numbers) == 3
    assert "ORDER BY ASC(?number)" in ans.sparql[0].query


def test_same_value_question(rag: HybridRAG) -> None:
    ans = rag.ask(
        "Do n-Hexane 95% High Purity Grade and Ethanol 140 Proof have the same UN number?"
    )
    assert ans.text is not None and ans.text.startswith("No")
    assert "UN1208" in ans.text and "UN1987" in ans.text


def test_narrative_answer_from_the_right_sheet(rag: HybridRAG) -> None:
    ans = rag.ask("What should you do if Hexamethylene Tetramine gets in your eyes?")
    assert ans.text is not None and "water" in ans.text.lower()
    assert ans.citations and ans.citations[0].doc_id.startswith("hexamethylene")


def test_scope_restricts_both_chains(rag: HybridRAG) -> None:
    ans = rag.ask("What is the UN number of n-Hexane 95% High Purity Grade?", docs=[ETHANOL])
    assert {f.doc_id for f in ans.facts} <= {ETHANOL}
    assert {p.doc_id for p in ans.passages} <= {ETHANOL}
    assert "UN1208" not in (ans.text or "")


def test_reingest_skips_every_document(rag: HybridRAG, files: list[Path]) -> None:
    before = {d.doc_id: d.updated_at for d in rag.documents()}
    assert {r.status for r in rag.ingest_many(files)} == {"skipped"}
    assert {d.doc_id: d.updated_at for d in rag.documents()} == before


def test_worker_processes_give_the_same_result(files: list[Path]) -> None:
    with HybridRAG(embedder="hashing", processes=True) as r:
        reports = r.ingest_many(files[:4], concurrency=2)
        ans = r.ask("What is the flash point of Castor Oil Lab Grade?")
    assert [rep.status for rep in reports] == ["ingested"] * 4
    assert ans.text is not None and "229 °C" in ans.text
