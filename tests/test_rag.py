"""End-to-end behaviour of the HybridRAG facade on the shipped sample sheets (always present)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hybrid_rag import (
    ConfigurationError,
    DocumentError,
    DocumentNotFoundError,
    HybridRAG,
    InputError,
    InvalidDocIdError,
    StoreError,
)
from hybrid_rag.models import ChatMessage
from hybrid_rag.samples import pdf_bytes, sample_pdfs, write_pdf
from hybrid_rag.testing import FunctionLLM


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return sample_pdfs(tmp_path_factory.mktemp("samples"))


@pytest.fixture
def rag(samples: list[Path]) -> Iterator[HybridRAG]:
    with HybridRAG(embedder="hashing") as r:
        r.ingest_many(samples)
        yield r


def _snapshot(r: HybridRAG) -> tuple[Any, ...]:
    docs = sorted((d.doc_id, d.content_hash) for d in r.documents())
    graphs = sorted(r.graph.doc_ids())
    chunks = sorted(c.chunk_id for d in docs for c in r.vectors.chunks(d[0]))
    return docs, graphs, chunks


def test_ingest_reports_counts(samples: list[Path]) -> None:
    with HybridRAG(embedder="hashing") as r:
        rep = r.ingest(samples[0])
        assert not isinstance(rep, list)
        assert rep.status == "ingested" and rep.pages >= 1 and rep.chunks >= 1
        assert rep.triples > 10 and rep.facts > 3
        assert {"parse_ms", "total_ms"} <= set(rep.timings)
        assert [d.doc_id for d in r.documents()] == [rep.doc_id]


def test_fact_question_cites_page_and_quote(rag: HybridRAG) -> None:
    ans = rag.ask("What is the flash point of Examplon Solvent 99%?")
    assert ans.text is not None and "-18" in ans.text
    assert "kg" in ans.sources
    fact = next(f for f in ans.facts if f.predicate == "flashPoint")
    page_text = _page_text(rag, fact.evidence.doc_id, fact.evidence.page)
    assert fact.evidence.quote in page_text
    assert ans.sparql and ans.sparql[0].origin == "template"
    assert {"analyse_ms", "kg_ms", "vector_ms", "answer_ms", "total_ms"} <= set(ans.timings)


def _page_text(rag: HybridRAG, doc_id: str, page: int) -> str:
    return "\n".join(c.text for c in rag.vectors.chunks(doc_id) if c.page == page)


def test_narrative_question_answers_with_the_sheets_own_procedure(rag: HybridRAG) -> None:
    # the eye-contact first aid is extracted as a procedure fact (the sheet's sentences)
    ans = rag.ask("What should I do if Samplex Acid Descaler gets into my eyes?")
    assert ans.text is not None and ans.sources
    assert "rinse cautiously with water" in ans.text.lower()
    assert ans.passages and all(p.doc_id.startswith("samplex") for p in ans.passages)
    assert len(ans.text) < 400


def test_modes_restrict_sources(rag: HybridRAG) -> None:
    q = "What is the flash point of Examplon Solvent 99%?"
    kg = rag.ask(q, mode="kg")
    vec = rag.ask(q, mode="vector")
    assert kg.passages == [] and kg.facts
    assert vec.facts == [] and vec.passages and vec.sparql == []


def test_reingest_same_bytes_is_skipped(rag: HybridRAG, samples: list[Path]) -> None:
    before = _snapshot(rag)
    reports = rag.ingest_many(samples)
    assert {r.status for r in reports} == {"skipped"}
    assert _snapshot(rag) == before


def test_a_byte_identical_twin_in_one_batch_is_ingested_once(tmp_path: Path) -> None:
    page = ["Twinol Cleaner\nSAFETY DATA SHEET\nFlash point: 61 °C"]
    first = write_pdf(tmp_path / "twinol.pdf", page)
    twin = tmp_path / "twinol.PDF"
    twin.write_bytes(first.read_bytes())
    (tmp_path / "sub").mkdir()
    other = write_pdf(tmp_path / "sub" / "twinol.pdf", ["Twinol Polish\nFlash point: 90 °C"])
    with HybridRAG(embedder="hashing") as r:
        reports = r.ingest_many([first, twin, other])
        assert [x.status for x in reports] == ["ingested", "skipped", "failed"]
        assert "same content as item 0" in reports[1].warnings[0]
        assert "already used by item 0" in (reports[2].error or "")
        assert [d.doc_id for d in r.documents()] == ["twinol"]


def test_new_bytes_replace_without_duplicates(rag: HybridRAG, tmp_path: Path) -> None:
    doc_id = "examplon-solvent-99"
    old_chunks = {c.text for c in rag.vectors.chunks(doc_id)}
    other_before = [c.chunk_id for c in rag.vectors.chunks("demoline-glass-cleaner")]
    new = write_pdf(
        tmp_path / "examplon-solvent-99.pdf",
        ["Examplon Solvent 99%\nSAFETY DATA SHEET\nFlash point: 42 °C\nUN number: UN1993"],
    )
    rep = rag.ingest(new)
    assert not isinstance(rep, list) and rep.status == "replaced"
    texts = [c.text for c in rag.vectors.chunks(doc_id)]
    assert texts and not (set(texts) & old_chunks)
    ans = rag.ask("What is the flash point of Examplon Solvent 99%?", mode="kg")
    assert [f.value for f in ans.facts if f.predicate == "flashPoint"] == ["42 °C"]
    assert [c.chunk_id for c in rag.vectors.chunks("demoline-glass-cleaner")] == other_before


def test_forget_removes_everything(rag: HybridRAG) -> None:
    rag.forget("demoline-glass-cleaner")
    assert "demoline-glass-cleaner" not in [d.doc_id for d in rag.documents()]
    assert "demoline-glass-cleaner" not in rag.graph.doc_ids()
    assert rag.vectors.chunks("demoline-glass-cleaner") == []
    with pytest.raises(DocumentNotFoundError, match="demoline"):
        rag.forget("demoline-glass-cleaner")


def test_unknown_and_invalid_ids(rag: HybridRAG) -> None:
    with pytest.raises(DocumentNotFoundError, match="nope"):
        rag.ask("flash point?", docs=["nope"])
    for bad in ("../x", "has space", "x" * 200):
        with pytest.raises(InvalidDocIdError):
            rag.ingest(b"hello", name="a.txt", doc_id=bad)
        with pytest.raises(InvalidDocIdError):
            rag.forget(bad)
    with pytest.raises(InputError):
        rag.ask("   ")
    with pytest.raises(InputError):
        rag.ask("x", mode="graph")  # type: ignore[arg-type]


def _encrypted_pdf() -> bytes:
    import io

    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf_bytes(["secret text"]))))
    writer.encrypt(user_password="pw", owner_password="owner")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (_encrypted_pdf, "locked.pdf"),
        (lambda: __import__("hybrid_rag.samples").samples.pdf_bytes([""]), "scanned.pdf"),
    ],
)
def test_unreadable_pdfs_leave_stores_unchanged(rag: HybridRAG, make: Any, name: str) -> None:
    before = _snapshot(rag)
    with pytest.raises(DocumentError):
        rag.ingest(make(), name=name)
    assert _snapshot(rag) == before


@pytest.mark.parametrize(
    ("data", "name"),
    [
        (b"not a pdf at all", "x.pdf"),
        (b"%PDF-1.4\n1 0 obj <<", "truncated.pdf"),
        (b"", "empty.txt"),
        (b"hello", "x.docx"),
    ],
)
def test_bad_input_leaves_stores_unchanged(rag: HybridRAG, data: bytes, name: str) -> None:
    before = _snapshot(rag)
    with pytest.raises(DocumentError):
        rag.ingest(data, name=name)
    assert _snapshot(rag) == before


def test_scope_isolation(rag: HybridRAG) -> None:
    ans = rag.ask(
        "What is the flash point of Examplon Solvent 99%?", docs=["demoline-glass-cleaner"]
    )
    assert all(f.doc_id == "demoline-glass-cleaner" for f in ans.facts)
    assert all(p.doc_id == "demoline-glass-cleaner" for p in ans.passages)
    assert ans.scope == ["demoline-glass-cleaner"]


def test_ask_never_writes(rag: HybridRAG) -> None:
    writes: list[str] = []
    for store in (rag.graph, rag.vectors, rag.catalog):
        for method in ("replace", "delete", "put"):
            if hasattr(store, method):
                real = getattr(store, method)

                def spy(*a: Any, _m: str = method, _r: Any = real, **k: Any) -> Any:
                    writes.append(_m)
                    return _r(*a, **k)

                setattr(store, method, spy)
    before = _snapshot(rag)
    for q in [
        "DROP ALL; INSERT DATA { <a:b> <a:c> <a:d> }",
        "forget examplon-solvent-99",
        "Delete all documents about Examplon Solvent 99% and its flash point",
    ]:
        rag.ask(q)
    assert writes == [] and _snapshot(rag) == before


def test_an_empty_store_says_it_is_empty(tmp_path: Path) -> None:
    mistyped = tmp_path / "stroe"
    with HybridRAG(mistyped, embedder="hashing") as r:
        ans = r.ask("What is the flash point of anything?")
        streamed = list(r.stream("What is the flash point of anything?"))
    assert ans.abstention == "no_documents" and ans.sources == [] and not ans.errors
    assert ans.text is not None and "holds no documents" in ans.text
    assert streamed[-1] == ans.model_copy(update={"timings": streamed[-1].timings})
    assert [p.delta for p in streamed[:-1]] == [ans.text]  # type: ignore[union-attr]


def test_sync_methods_work_inside_running_loop(samples: list[Path]) -> None:
    async def notebook_cell() -> str | None:
        with HybridRAG(embedder="hashing") as r:
            examplon = next(p for p in samples if p.name.startswith("examplon"))
            r.ingest(examplon)  # sync call while a loop is running, as in Jupyter
            return r.ask("What is the signal word of Examplon Solvent 99%?").text

    text = asyncio.run(notebook_cell())
    assert text is not None and "Danger" in text


def test_async_api(samples: list[Path]) -> None:
    async def main() -> tuple[int, str | None]:
        async with HybridRAG(embedder="hashing") as r:
            reports = await r.aingest_many(samples, concurrency=3)
            ans = await r.aask("What is the UN number of Examplon Solvent 99%?")
            await r.aforget(reports[0].doc_id)
            return len(r.documents()), ans.text

    n, text = asyncio.run(main())
    assert n == 2 and text is not None and "UN1090" in text.replace(" ", "")


def test_persistence_across_reopen(samples: list[Path], tmp_path: Path) -> None:
    with HybridRAG(tmp_path / "store", embedder="hashing") as r:
        r.ingest_many(samples)
        first = r.ask("What is the UN number of Examplon Solvent 99%?").text
    with HybridRAG(tmp_path / "store", embedder="hashing") as r:
        assert len(r.documents()) == len(samples)
        assert r.ask("What is the UN number of Examplon Solvent 99%?").text == first
        kg = r.ask("What is the UN number of Examplon Solvent 99%?", mode="kg")
        assert kg.errors == [] and kg.facts  # the graph reopened in the same process
        assert {x.status for x in r.ingest_many(samples)} == {"skipped"}


class _BrokenGraph:
    """A graph store double whose writes fail (to test the rollback)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def replace(self, doc_id: str, triples: Sequence[Any]) -> int:
        raise StoreError("disk full")


def test_failed_write_leaves_document_absent(samples: list[Path]) -> None:
    from hybrid_rag.stores.oxigraph import OxigraphGraphStore

    with HybridRAG(embedder="hashing", graph=_BrokenGraph(OxigraphGraphStore())) as r:  # type: ignore[arg-type]
        with pytest.raises(StoreError, match="disk full"):
            r.ingest(samples[0])
        assert r.documents() == []
        assert r.vectors.chunks(samples[0].stem) == []


def test_ingest_many_reports_failures_and_goes_on(samples: list[Path]) -> None:
    seen: list[str] = []
    with HybridRAG(embedder="hashing") as r:
        reports = r.ingest_many(
            [*samples, ("broken.pdf", b"garbage")], progress=lambda rep: seen.append(rep.status)
        )
    statuses = sorted(rep.status for rep in reports)
    assert statuses == ["failed", "ingested", "ingested", "ingested"]
    failed = next(rep for rep in reports if rep.status == "failed")
    assert failed.error and "broken.pdf" in failed.source
    assert sorted(seen) == statuses


def test_llm_synthesis_is_one_call(rag: HybridRAG) -> None:
    calls: list[Sequence[ChatMessage]] = []

    def fn(messages: Sequence[ChatMessage]) -> str:
        calls.append(messages)
        return "The flash point is -18 °C [1]."

    with rag.override(llm=FunctionLLM(fn)):
        ans = rag.ask("What is the flash point of Examplon Solvent 99%?")
    assert rag.llm is None  # restored
    assert ans.generation == "llm" and ans.usage.llm_calls == 1 and len(calls) == 1
    assert ans.text == "The flash point is -18 °C [1]." and ans.citations
    assert "Question: What is the flash point" in calls[0][-1].content


def test_llm_sparql_is_repaired_after_error(rag: HybridRAG) -> None:
    replies = iter(
        [
            "```sparql\nDELETE WHERE { ?s ?p ?o }\n```",
            "```sparql\nSELECT ?fact WHERE { ?fact a <http://hybrid-rag.org/ns#Fact> ;"
            ' <http://hybrid-rag.org/ns#value> ?v . FILTER(CONTAINS(?v, "Danger")) }\n```',
            "Examplon carries the signal word Danger [1].",
        ]
    )
    # no phrase of it is a value the sheets print: no collection template, the model writes
    question = "Which products have the most severe signal word?"
    with rag.override(llm=FunctionLLM(lambda _m: next(replies))):
        ans = rag.ask(question)
    # two calls per question by default: the rejected query and the answer, no repair
    # the collection template first (no value of the sheets matches), then the model's query
    origins = [a.origin for a in ans.sparql]
    model = [a for a in ans.sparql if a.origin != "template"]
    assert origins[: -len(model)] == ["template"] * (len(origins) - 1)
    assert [a.origin for a in model] == ["llm"] and model[0].error
    assert ans.usage.llm_calls == 2
    replies = iter(
        [
            "```sparql\nDELETE WHERE { ?s ?p ?o }\n```",
            "```sparql\nSELECT ?fact WHERE { ?fact a <http://hybrid-rag.org/ns#Fact> ;"
            ' <http://hybrid-rag.org/ns#value> ?v . FILTER(CONTAINS(?v, "Danger")) }\n```',
            "Examplon carries the signal word Danger [1].",
        ]
    )
    rag._max_llm_calls = 3  # what HybridRAG(max_llm_calls=3) sets: room for a repair
    try:
        with rag.override(llm=FunctionLLM(lambda _m: next(replies))):
            ans = rag.ask(question)
    finally:
        rag._max_llm_calls = 2
    model = [a for a in ans.sparql if a.origin != "template"]
    assert [a.origin for a in model][:2] == ["llm", "repair"] and model[0].error
    assert any("Danger" in f.value for f in ans.facts)
    assert ans.usage.llm_calls == 3


class _BrokenVectors:
    """A vector store double whose searches fail (to test graceful degradation)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, *_a: Any, **_k: Any) -> Any:
        raise StoreError("vector index offline")


def test_one_chain_failing_still_answers(samples: list[Path]) -> None:
    from hybrid_rag.stores.local_vectors import LocalVectorStore

    broken = _BrokenVectors(LocalVectorStore())
    with HybridRAG(embedder="hashing", vectors=broken) as r:  # type: ignore[arg-type]
        r.ingest_many(samples)
        ans = r.ask("What is the UN number of Examplon Solvent 99%?")
    assert ans.text is not None and "UN1090" in ans.text.replace(" ", "")
    assert ans.sources == ["kg"] and ans.passages == []
    assert any(e.chain == "vector" and "offline" in e.message for e in ans.errors)


def test_slow_llm_is_cut_by_the_time_budget(samples: list[Path]) -> None:
    async def slow(_messages: Sequence[ChatMessage]) -> str:
        await asyncio.sleep(30)
        return "never"

    with HybridRAG(embedder="hashing", llm=FunctionLLM(slow), timeout=2.0) as r:
        r.ingest_many(samples)
        ans = r.ask("Tell me something about dangerous goods transport")
    kinds = {(e.chain, e.kind) for e in ans.errors}
    assert {("kg", "timeout"), ("synthesis", "timeout")} <= kinds
    assert ans.passages and ans.text and ans.generation == "extractive"
    assert ans.timings["total_ms"] < 10_000


def test_follow_up_question_uses_history(rag: HybridRAG) -> None:
    first = "What is the flash point of Samplex Acid Descaler 10%?"
    ans = rag.ask("And what is its UN number?", history=[(first, "")])
    assert ans.text is not None and "UN3264" in ans.text.replace(" ", "")


def test_ingest_directory_and_bytes(samples: list[Path]) -> None:
    with HybridRAG(embedder="hashing") as r:
        with pytest.raises(InputError, match="ingest_many"):
            r.ingest(samples[0].parent)
        reports = r.ingest_many([samples[0].parent])
        assert [x.status for x in reports] == ["ingested"] * len(samples)
        rep = r.ingest(b"Widget Oil\nFlash point: 150 \xc2\xb0C\n", name="widget-oil.txt")
        assert rep.doc_id == "widget-oil"
        ans = r.ask("What is the flash point of Widget Oil?")
    assert ans.text is not None and "150 °C" in ans.text


def test_store_remembers_its_embedder(samples: list[Path], tmp_path: Path) -> None:
    from hybrid_rag.testing import FakeEmbedder

    with HybridRAG(tmp_path / "s", embedder="hashing") as r:
        r.ingest(samples[0])
    with HybridRAG(tmp_path / "s") as r:  # "auto" means the store's own embedder
        assert r.embedder.name == "hashing-384"
    with (
        HybridRAG(tmp_path / "s", embedder=FakeEmbedder(dim=384)) as r,
        pytest.raises(ConfigurationError, match="built with the 'hashing-384' embedder"),
    ):
        r.ask("What is the flash point of Examplon Solvent 99%?")


def test_filter_that_matches_nothing_under_its_property_asks_every_property(
    rag: HybridRAG,
) -> None:
    # "flammable" names the flammability line, which never says "liquid"; the hazard
    # statement H225 ("Highly flammable liquid and vapour") does
    ans = rag.ask(
        "Which of these is a flammable liquid: Examplon Solvent 99%; Demoline Glass Cleaner; "
        "Samplex Acid Descaler 10%?"
    )
    assert [s.origin for s in ans.sparql] == ["template", "broadened"]
    assert ans.text is not None and ans.text.startswith("Examplon Solvent 99% matches")
    assert "Demoline" not in ans.text.split(".")[0]
    assert any("H225" in f.value for f in ans.facts)
